"""End to end through the three coprocessor pipes, driven by raw Tensix instruction words.

Pipe 0 unpacks two 32x32 BF16 tiles from L1 (unpacker 0 into SrcA, unpacker 1 into SrcB, one face
per UNPACR, handing each bank to the matrix unit with the last face), pipe 1 computes on the matrix
unit (ELWADD over the four faces, or the 32x32x32 matmul MOP) and posts a semaphore, pipe 2 waits
on it and packs Dst back to L1 as BF16. All three pipes' words are queued first and the engine then
runs them interleaved in cycle order, synchronising through the semaphore and the Src bank
hand-over. Results are checked bit for bit against numpy (the matrix unit's fp32 arithmetic, then
rounding to BF16 with ties away from zero).
"""

from __future__ import annotations

import numpy as np
import pytest

from tensixsim import raw
from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS, W, X, Y, Z
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.regs import SrcClient
from tensixsim.tensix.sync import B2
from tensixsim.tile import Tile

UNPACK_THREAD, MATH_THREAD, PACK_THREAD = 0, 1, 2
BF16 = 5
A_ADDR, B_ADDR, OUT_ADDR = 0x10000, 0x11000, 0x12000
TILE_BYTES = 32 * 32 * 2
FACE_DATUMS = 256
SEM = 0  # the semaphore the matrix unit posts when Dst is complete
UNP_AB = 0b011  # SETADC* cnt_set_mask: both unpackers
DST_ROWS_PER_PACR = 4  # four Dst read interfaces, one 16-datum row each
PACRS = 64 // DST_ROWS_PER_PACR


# ------------------------------------------------------------------------------ data layout


def to_faces(tile: np.ndarray) -> np.ndarray:
    """A (32, 32) tile as its four 16x16 faces in order (face-major, rows of 16 inside a face)."""
    return np.concatenate([tile[r : r + 16, c : c + 16].ravel() for r in (0, 16) for c in (0, 16)])


def from_faces(flat: np.ndarray) -> np.ndarray:
    faces = np.asarray(flat).reshape(4, 16, 16)
    return np.block([[faces[0], faces[1]], [faces[2], faces[3]]])


def bf16_value(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint32) << 16).view(np.float32)


def round_bf16_away(x: np.ndarray) -> np.ndarray:
    """fp32 values to BF16 bits: round to nearest, ties away from zero; zero / denormal to +0."""
    u = np.asarray(x, np.float32).view(np.uint32)
    sign, mag = u & 0x80000000, u & 0x7FFFFFFF
    rounded = ((mag + 0x8000) >> 16) | (sign >> 16)
    return np.where((mag & 0x7F800000) == 0, 0, rounded).astype(np.uint16)


def random_bf16(rng: np.random.Generator) -> np.ndarray:
    """A (32, 32) tile of normal BF16 values spanning a few binades either side of one."""
    mantissa = rng.integers(0, 128, (32, 32))
    exponent = rng.integers(127 - 6, 127 + 6, (32, 32))
    sign = rng.integers(0, 2, (32, 32))
    return (sign << 15 | exponent << 7 | mantissa).astype(np.uint16)


# ------------------------------------------------------------------------------ configuration


def configure_unpackers(tile: Tile) -> None:
    """Both unpackers: BF16 faces of 256 datums from L1 to SrcA / SrcB, 16 rows per UNPACR."""
    config = tile.coprocessor.config
    state = config.state_id(UNPACK_THREAD)
    for unit, addr in ((0, A_ADDR), (1, B_ADDR)):
        # TileDescriptor: InDataFormat BF16, IsUncompressed, XDim 256 datums, YDim 1, ZDim 4 faces, WDim 1.
        descriptor = BF16 | 1 << 4 | FACE_DATUMS << 16 | 1 << 32 | 4 << 48 | 1 << 64
        config.write_field(f"THCON_SEC{unit}_REG0_TileDescriptor", state, descriptor)
        config.write_field(f"THCON_SEC{unit}_REG2_Out_data_format", state, BF16)
        # The L1 address is (Base_address + 1) * 16 bytes.
        config.write_field(f"THCON_SEC{unit}_REG3_Base_address", state, addr // 16 - 1)
        config.write_field(f"THCON_SEC{unit}_REG2_Unpack_limit_address", state, 0x1FFFF)
        # Each UNPACR moves the unpacker's SrcRow on by 16 (the next face's rows).
        config.write_field(f"THCON_SEC{unit}_REG2_Unpack_Src_Reg_Set_Upd", state, 1)
    # The unpacker's output address is in bytes; SrcA's first four rows of addresses are discarded.
    config.write_field("UNP0_ADDR_BASE_REG_1_Base", state, 4 * 16 * 2)
    config.write_field("UNP1_ADDR_BASE_REG_1_Base", state, 0)


def configure_packer(tile: Tile, *, fp32_dest: bool) -> None:
    """The packer: 4 Dst rows of 16 datums per PACR (one per read interface) to L1 as BF16."""
    config = tile.coprocessor.config
    state = config.state_id(PACK_THREAD)
    config.write_field("THCON_SEC0_REG1_Disable_zero_compress", state, 1)
    config.write_field("PCK_DEST_RD_CTRL_Read_32b_data", state, int(fp32_dest))
    config.write_field("ALU_FORMAT_SPEC_REG2_Dstacc", state, BF16)  # the early conversion rounds to BF16
    config.write_field("THCON_SEC0_REG1_In_data_format", state, BF16)
    config.write_field("THCON_SEC0_REG1_Out_data_format", state, BF16)
    # Dst datum address = Y * Ystride / 2 (BF16 intermediate): one Y step is one 16-datum row.
    config.write_field("PCK0_ADDR_CTRL_XY_REG_0_Ystride", state, 32)
    config.write_field("THCON_SEC0_REG1_L1_Dest_addr", state, OUT_ADDR // 16 - 1)
    config.write_field("THCON_SEC0_REG9_Pack_0_2_limit_address", state, 0x1FFFF)
    # Edge masking: every row uses mask set 0 (TILE_ROW_SET_MAPPING zero); let every datum through.
    config.write_field("PCK_EDGE_OFFSET_SEC0_mask", state, 0xFFFF)
    config.write_thread_field("ADDR_MOD_PACK_SEC0_YsrcIncr", PACK_THREAD, DST_ROWS_PER_PACR)


def configure_math(tile: Tile, *, fp32_dest: bool) -> None:
    config = tile.coprocessor.config
    state = config.state_id(MATH_THREAD)
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", state, BF16)
    config.write_field("ALU_FORMAT_SPEC_REG1_SrcB", state, BF16)
    config.write_field("ALU_ACC_CTRL_Fp32_enabled", state, int(fp32_dest))


# ------------------------------------------------------------------------------ the three programs


def enc(tile: Tile, name: str, **fields: int) -> int:
    """Instruction ``name``'s word, unnamed fields zero."""
    isa = tile.coprocessor.isa
    return isa.encode(name, **{f: fields.get(f, 0) for f in isa.by_name[name].field_names})


def unpack_words(tile: Tile) -> list[int]:
    words = [
        enc(tile, "SETADCXY", cnt_set_mask=UNP_AB, bit_mask=0b1111),  # X, Y of both channels to 0
        enc(tile, "SETADCZW", cnt_set_mask=UNP_AB, bit_mask=0b1111),  # Z, W (the face) to 0
        enc(tile, "SETADCXX", cnt_set_mask=UNP_AB, x_start=0, x_end2=FACE_DATUMS - 1),
    ]
    for unit in (0, 1):
        for face in range(4):
            words.append(
                enc(
                    tile,
                    "UNPACR",
                    unpack_block_selection=unit,
                    addr_mode=0b01,  # channel 0 Z += 1: the next face in L1
                    set_dat_valid=int(face == 3),  # the whole tile is in: hand the bank over
                    last=1,
                )
            )
    return words


def elwadd_words(tile: Tile) -> list[int]:
    """Eight ELWADDs of 8 rows: slot 0 steps SrcA, SrcB and Dst by 8; slot 1 rewinds them, and the
    last one releases both banks to the unpackers."""
    copro = tile.coprocessor
    raw.set_addr_mod(copro, MATH_THREAD, 0, SrcAIncr=8, SrcBIncr=8, DestIncr=8)
    raw.set_addr_mod(copro, MATH_THREAD, 1, SrcAClear=1, SrcBClear=1, DestClear=1)
    words = [enc(tile, "SEMINIT", max_value=1, init_value=0, sem_sel=1 << SEM)]
    for i in range(8):
        last = i == 7
        words.append(enc(tile, "ELWADD", clear_dvalid=3 if last else 0, addr_mode=int(last), dst=0))
    words.append(enc(tile, "SEMPOST", sem_sel=1 << SEM))
    return words


def matmul_words(tile: Tile) -> list[int]:
    """The matmul MOP (HiFi4) between the semaphore's set-up and its post; also sets the matmul's
    ADDR_MOD slots and formats (SrcA BF16, Dst FP32)."""
    raw.configure_matmul(tile.coprocessor, fp32_dest=True, thread=MATH_THREAD, src_format=BF16)
    return [
        enc(tile, "SEMINIT", max_value=1, init_value=0, sem_sel=1 << SEM),
        *raw.matmul_tile_words(tile.coprocessor, phases=4),
        enc(tile, "SEMPOST", sem_sel=1 << SEM),
    ]


def pack_words(tile: Tile) -> list[int]:
    """The packer's ADCs are set directly (channel 0 X 0..15, Y from row 0; SETADC* would queue behind
    the busy unpackers, whose unit executes them): its first instruction is the wait."""
    adc = tile.coprocessor.adc
    for channel in (0, 1):
        for dim in (X, Y, Z, W):
            adc.set(PACK_THREAD, PACKERS, channel, dim, 0)
    adc.set(PACK_THREAD, PACKERS, 1, X, 15)
    words = [
        # Hold the packer until the matrix unit has posted (wait while the semaphore is zero).
        enc(tile, "SEMWAIT", stall_res=B2, sem_sel=1 << SEM, wait_sem_cond=1),
    ]
    for i in range(PACRS):
        words.append(enc(tile, "PACR", addr_mode=0, read_intf_sel=0, last=int(i == PACRS - 1)))
    words.append(enc(tile, "SEMGET", sem_sel=1 << SEM))
    return words


# ------------------------------------------------------------------------------ running


class Trace:
    """(thread, instruction word, issue cycle) of every instruction the engine retires, including
    each of a run of MVMULs the engine executes as one vectorised step."""

    def __init__(self, tile: Tile, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
        """Without ``monkeypatch`` the tile's engine keeps the recording hooks (a tile of its own)."""
        self.issued: list[tuple[int, int, int]] = []
        self.isa = tile.coprocessor.isa
        patch = monkeypatch.setattr if monkeypatch is not None else setattr
        patch(tile.backend, "retired", self.issued)

    def cycles(self, thread: int, name: str) -> list[int]:
        return [c for t, w, c in self.issued if t == thread and self.isa.decode(w).name == name]

    def words(self, thread: int, unit: str) -> list[int]:
        """The words ``thread`` issued to ``unit``, in order."""
        return [w for t, w, _ in self.issued if t == thread and self.isa.decode(w).spec.unit == unit]


def run_three(tile: Tile, programs: dict[int, list[int]]) -> None:
    """Queue every pipe's words at the same cycle, then run the engine until all are idle."""
    start = tile.backend.cycle
    for thread, words in programs.items():
        tile.queues[thread].entries.extend(
            PushedInstruction(word, f"trisc{thread}", 0, start, False) for word in words
        )
    tile.backend.advance_to(raw.NEVER)
    engine = tile.backend
    assert engine.idle, [p.blocked for p in engine.pipes]
    assert all(p.blocked is None for p in engine.pipes)


def load_inputs(tile: Tile, a: np.ndarray, b: np.ndarray) -> None:
    tile.l1[A_ADDR : A_ADDR + TILE_BYTES] = to_faces(a).astype("<u2").view(np.uint8)
    tile.l1[B_ADDR : B_ADDR + TILE_BYTES] = to_faces(b).astype("<u2").view(np.uint8)


def output_tile(tile: Tile) -> np.ndarray:
    return from_faces(tile.l1[OUT_ADDR : OUT_ADDR + TILE_BYTES].view("<u2"))


def check_ordering(tile: Tile, trace: Trace, math_name: str) -> dict[str, int]:
    """The unpacks precede the math, the math precedes the packing; returns the key cycles."""
    unpacks = trace.cycles(UNPACK_THREAD, "UNPACR")
    maths = trace.cycles(MATH_THREAD, math_name)
    packs = trace.cycles(PACK_THREAD, "PACR")
    post = trace.cycles(MATH_THREAD, "SEMPOST")
    assert len(unpacks) == 8 and len(packs) == PACRS and len(post) == 1
    assert unpacks == sorted(unpacks) and maths == sorted(maths) and packs == sorted(packs)
    # The matrix unit waited for both banks (handed over by the last UNPACR of each unpacker).
    assert min(maths) > max(unpacks)
    # The packer waited for the semaphore the matrix unit posted after its last instruction.
    assert max(maths) < post[0] < min(packs)
    pipes = tile.backend.pipes
    assert pipes[PACK_THREAD].done_cycle > pipes[MATH_THREAD].done_cycle > pipes[UNPACK_THREAD].last_cycle
    assert pipes[PACK_THREAD].done_cycle > pipes[UNPACK_THREAD].done_cycle
    # Nothing here takes long: a tile's worth of work in well under a few thousand cycles.
    assert pipes[PACK_THREAD].done_cycle < 5000
    return {
        "first_unpack": min(unpacks),
        "last_unpack": max(unpacks),
        "first_math": min(maths),
        "last_math": max(maths),
        "sempost": post[0],
        "first_pack": min(packs),
        "pack_done": pipes[PACK_THREAD].done_cycle,
    }


def new_tile(a: np.ndarray, b: np.ndarray, *, fp32_dest: bool) -> Tile:
    tile = Tile("blackhole")
    configure_unpackers(tile)
    configure_packer(tile, fp32_dest=fp32_dest)
    configure_math(tile, fp32_dest=fp32_dest)
    load_inputs(tile, a, b)
    return tile


# ------------------------------------------------------------------------------ element-wise add


def elwadd_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = random_bf16(rng), random_bf16(rng)
    # Exact cancellation (+0 whatever the signs), and BF16 rounding ties: 1 + 2**-8 (ties away
    # gives 1 + 2**-7, ties to even would give 1), and the same negated.
    b[0, :8] = a[0, :8] ^ 0x8000
    a[1, :4], b[1, :4] = 0x3F80, 0x3B80
    a[1, 4:8], b[1, 4:8] = 0xBF80, 0xBB80
    a[1, 8:12], b[1, 8:12] = 0x3F81, 0x3B80  # 1 + 2**-7 + 2**-8: away and even agree on 1 + 2**-6
    return a, b


def elwadd_expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return round_bf16_away(bf16_value(a) + bf16_value(b))


@pytest.mark.parametrize("fp32_dest", [False, True], ids=["dst16", "dst32"])
def test_elwadd_tile_through_three_pipes(fp32_dest: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = elwadd_inputs(1234)
    tile = new_tile(a, b, fp32_dest=fp32_dest)
    trace = Trace(tile, monkeypatch)
    run_three(
        tile,
        {UNPACK_THREAD: unpack_words(tile), MATH_THREAD: elwadd_words(tile), PACK_THREAD: pack_words(tile)},
    )

    out = output_tile(tile)
    expected = elwadd_expected(a, b)
    np.testing.assert_array_equal(out, expected)
    assert out[1, 0] == 0x3F81 and out[1, 4] == 0xBF81 and out[1, 8] == 0x3F82 and not out[0, :8].any()
    # The packer wrote exactly the tile: the bytes after it are untouched.
    assert not tile.l1[OUT_ADDR + TILE_BYTES : OUT_ADDR + TILE_BYTES + 64].any()

    cycles = check_ordering(tile, trace, "ELWADD")
    assert len(trace.cycles(MATH_THREAD, "ELWADD")) == 8
    assert cycles["first_unpack"] < cycles["first_math"]

    # Both banks went back to the unpackers (the last ELWADD's clear_dvalid), the matrix unit has
    # moved on to the other bank, and the semaphore is back at zero.
    regs = tile.coprocessor.regs
    assert (regs.src_client == SrcClient.UNPACKERS).all()
    assert list(regs.matrix_bank) == [1, 1] and list(regs.unpacker_bank) == [1, 1]
    assert int(tile.coprocessor.sync.sem_value[SEM]) == 0


def test_elwadd_reference_rounds_ties_away() -> None:
    # The reference itself: a tie rounds away from zero, not to even; fp32 zero and denormals to +0.
    ones = np.array([1 + 2**-8, -(1 + 2**-8), 1 + 2**-7 + 2**-8, 2**-130, -0.0], np.float32)
    assert round_bf16_away(ones).tolist() == [0x3F81, 0xBF81, 0x3F82, 0, 0]


def test_packer_waits_for_the_semaphore(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the matrix unit's SEMPOST the packer stays held at its wait gate: nothing is packed.
    a, b = elwadd_inputs(7)
    tile = new_tile(a, b, fp32_dest=True)
    trace = Trace(tile, monkeypatch)
    math = elwadd_words(tile)[:-1]  # no SEMPOST
    programs = ((UNPACK_THREAD, unpack_words(tile)), (MATH_THREAD, math), (PACK_THREAD, pack_words(tile)))
    for thread, words in programs:
        tile.queues[thread].entries.extend(PushedInstruction(w, f"trisc{thread}", 0, 0, False) for w in words)
    tile.backend.advance_to(raw.NEVER)
    pipes = tile.backend.pipes
    assert pipes[PACK_THREAD].blocked is not None and "SEMWAIT" in pipes[PACK_THREAD].blocked
    assert trace.cycles(PACK_THREAD, "PACR") == []
    assert len(trace.cycles(MATH_THREAD, "ELWADD")) == 8
    assert not tile.l1[OUT_ADDR : OUT_ADDR + TILE_BYTES].any()


# ------------------------------------------------------------------------------ matmul


def test_matmul_tile_through_three_pipes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(99)
    x, y = random_bf16(rng), random_bf16(rng)  # C = x @ y: SrcB holds x, SrcA holds y
    tile = new_tile(y, x, fp32_dest=True)
    trace = Trace(tile, monkeypatch)
    run_three(
        tile,
        {UNPACK_THREAD: unpack_words(tile), MATH_THREAD: matmul_words(tile), PACK_THREAD: pack_words(tile)},
    )
    out = output_tile(tile)
    dst = raw.dst_tile_fp32(tile.coprocessor)

    # The emulator's raw-driven matmul on the same tiles (loaded straight into SrcA / SrcB).
    ref_tile = Tile("blackhole")
    raw.configure_matmul(ref_tile.coprocessor, fp32_dest=True)
    raw.load_src_tile(ref_tile.coprocessor, raw.SRCA, y)
    raw.load_src_tile(ref_tile.coprocessor, raw.SRCB, x)
    raw.run_words(ref_tile, raw.MATH_THREAD, raw.matmul_tile_words(ref_tile.coprocessor, phases=4))
    ref_dst = raw.dst_tile_fp32(ref_tile.coprocessor)
    np.testing.assert_array_equal(dst.view(np.uint32), ref_dst.view(np.uint32))
    packed = formats.packer_round_fp32_to_bf16(ref_dst.view(np.uint32)).astype(np.uint16)
    np.testing.assert_array_equal(out, packed)
    np.testing.assert_array_equal(out, round_bf16_away(ref_dst))

    # Within BF16 rounding (half an ulp of 8 bits) of the exact product, plus the fp32 sum's error.
    xv, yv = bf16_value(x).astype(np.float64), bf16_value(y).astype(np.float64)
    exact = xv @ yv
    got = bf16_value(out).astype(np.float64)
    bound = 2.0**-8 * np.abs(exact) + 32 * 2.0**-23 * (np.abs(xv) @ np.abs(yv))
    assert (np.abs(got - exact) <= bound).all()
    assert np.abs(exact).min() > 0 and (got != 0).all()

    check_ordering(tile, trace, "MVMUL")
    assert len(trace.cycles(MATH_THREAD, "MVMUL")) == 16 * 4  # four fidelity phases of sixteen

    # Where the cycles went: every issued instruction is counted once by its unit (the unpackers'
    # entries count their L1 fetches, one per UNPACR, behind the unpack unit's issue slot), the matrix
    # unit was occupied one cycle per MVMUL, and the packer's stall at the semaphore is on record.
    result = tile.result()
    units = {name: u for name, u in result.units.items() if not name.startswith("unpacker")}
    assert sum(p.issued for p in result.pipes) == sum(u.instructions for u in units.values())
    unpacrs = len(trace.cycles(UNPACK_THREAD, "UNPACR"))
    assert result.units["unpacker0"].instructions + result.units["unpacker1"].instructions == unpacrs
    assert result.units["matrix"].instructions == result.units["matrix"].busy_cycles == 64
    pack_stall = result.pipes[PACK_THREAD].stalled
    assert (
        pack_stall.get("PACR", 0)
        >= trace.cycles(MATH_THREAD, "MVMUL")[-1] - trace.cycles(PACK_THREAD, "SEMWAIT")[0]
    )
    summary = result.summary(tile.arch.clock_hz)
    assert "matrix" in summary and "stalled on" in summary


def test_run_words_on_a_thread_that_does_not_exist_lists_the_threads():
    tile = Tile("blackhole")
    with pytest.raises(IndexError, match="no thread 5; threads: 0, 1, 2"):
        raw.run_words(tile, 5, [0])
    with pytest.raises(ValueError, match="unknown architecture 'nope'; known: "):
        Tile("nope")
    with pytest.raises(KeyError, match="no core 'trisc3'; cores: brisc"):
        tile.core("trisc3")
