"""Compute kernels written in C with the SDK (tensixsim/sdk/examples/kernels), on a whole tile.

BRISC reads tiles into circular buffers, TRISC0 unpacks, TRISC1 computes, TRISC2 packs, NCRISC
writes the results out; the cores synchronise through stream-register circular buffers, the SrcA /
SrcB hand-over and the math -> pack semaphore over two Dst halves. The kernels that exist on both
chips run on Blackhole and on Wormhole (``ARCHES``); the references are the same, since the matrix
unit's, the unpackers' and the packers' Wormhole pages give the Blackhole models. Every result is
compared bit for bit with references written from the documented arithmetic: the matrix unit's fp32
model (tests/test_matmul.py's fidelity slices, flushing and Dst store), the packer's rounding to
BF16 (tests/test_e2e_raw.py), the unpacker's BFP8 decoding (tests/unpack_reference.py), and with
numpy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_e2e_raw import Trace, bf16_value, random_bf16, round_bf16_away
from test_matmul import bf16_values, bits, dst_store, flush, reference_eltwise, slice_a, slice_b
from unpack_reference import BFP8ToBF16

from tensixsim import Tile
from tensixsim.errors import MemoryFault
from tensixsim.sdk import programs
from tensixsim.sdk.build import ToolchainMissing, find_toolchain
from tensixsim.tensix.regs import SrcClient
from tensixsim.timing import RISCV

UNPACK, MATH, PACK = 0, 1, 2
SEM_MATH_PACK = 1  # TK_SEM_MATH_PACK in tensix_kernel.h
TILE_BYTES = 2048
MAX_CYCLES = 400_000
ARCHES = ("blackhole", "wormhole")
# PACRs per output tile (tensix_kernel.h): four Dst rows each on Blackhole, a face each on Wormhole.
PACRS_PER_TILE = {"blackhole": 16, "wormhole": 4}

try:
    find_toolchain()
except ToolchainMissing as missing:  # pragma: no cover - the container has the toolchain
    pytest.skip(str(missing), allow_module_level=True)


def run_kernel(
    elfs: dict,
    inputs: dict[int, bytes],
    monkeypatch: pytest.MonkeyPatch | None = None,
    arch: str = "blackhole",
):
    """A fresh tile with the five programs and ``inputs`` ({L1 address: bytes}) loaded, run to the
    end; returns the tile and, with ``monkeypatch``, the trace of retired Tensix instructions."""
    tile = Tile(arch)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    for address, data in inputs.items():
        tile.write(address, data)
    trace = Trace(tile, monkeypatch) if monkeypatch is not None else None
    tile.run(max_cycles=MAX_CYCLES)
    return tile, trace


def output_tiles(tile: Tile, count: int) -> list[np.ndarray]:
    return programs.tiles_from_l1(tile.read(programs.KERNEL_DST, count * TILE_BYTES), count)


def cb_counters(tile: Tile) -> Callable[[int], tuple[int, int]]:
    """A stream's (tiles received, tiles acked), in the registers the tile's chip keeps them in."""
    streams = tile.streams

    def counters(stream: int) -> tuple[int, int]:
        return streams.read(stream, streams.tiles_received), streams.read(stream, streams.tiles_acked)

    return counters


def check_finished_cleanly(tile: Tile, in_tiles: int, out_tiles: int, *, two_inputs: bool = True) -> None:
    """Every core returned 0, every pipe drained, the CB counters moved by one per tile, both Src
    banks are back with the unpackers and the math -> pack semaphore is back at zero."""
    result = tile.result()
    assert {name: stats.exit_code for name, stats in result.cores.items()} == dict.fromkeys(result.cores, 0)
    assert all(p.idle and p.blocked is None for p in tile.backend.pipes)
    counters = cb_counters(tile)
    inputs = ("in0", "in1") if two_inputs else ("in0",)
    for cb in inputs:
        assert counters(programs.KERNEL_CB_STREAMS[cb]) == (in_tiles, in_tiles)
    assert counters(programs.KERNEL_CB_STREAMS["out"]) == (out_tiles, out_tiles)
    assert (tile.coprocessor.regs.src_client == SrcClient.UNPACKERS).all()
    assert int(tile.coprocessor.sync.sem_value[SEM_MATH_PACK]) == 0


def check_synchronisation(
    trace: Trace, math_name: str, tiles: int, out_tiles: int, per_out: int, arch: str = "blackhole"
) -> None:
    """Per tile: the matrix unit starts only after both unpackers have handed the tile over, and the
    packer's first PACR of an output tile follows the matrix unit's SEMPOST for it (the SEMWAIT held
    it); Dst halves alternate, so math never runs more than two output tiles ahead of the packer."""
    unpacks = trace.cycles(UNPACK, "UNPACR")
    maths = trace.cycles(MATH, math_name)
    posts = trace.cycles(MATH, "SEMPOST")
    packs = trace.cycles(PACK, "PACR")
    pack_waits = trace.cycles(PACK, "SEMWAIT")
    n = PACRS_PER_TILE[arch]
    assert len(unpacks) == 8 * tiles and len(packs) == n * out_tiles
    assert len(posts) == len(pack_waits) == out_tiles
    per_tile = len(maths) // tiles
    for t in range(tiles):
        last_unpack = max(unpacks[8 * t : 8 * t + 8])
        assert min(maths[per_tile * t : per_tile * (t + 1)]) > last_unpack
    for t in range(out_tiles):
        first_pack = packs[n * t]
        assert first_pack > posts[t] > max(maths[per_tile * per_out * t : per_tile * per_out * (t + 1)])
        if t >= 2:
            # The half math writes for tile t was packed (tile t - 2) before math started on it.
            assert (
                min(maths[per_tile * per_out * t : per_tile * per_out * (t + 1)]) > packs[n * (t - 2) + n - 1]
            )
    # The packer reached its first wait long before the first tile was computed: it really waited.
    assert pack_waits[0] < posts[0]


# ------------------------------------------------------------------------------ element-wise


def eltwise_inputs(seed: int, tiles: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    a = [random_bf16(rng) for _ in range(tiles)]
    b = [random_bf16(rng) for _ in range(tiles)]
    # Special values in the first tile: exact cancellation, and BF16 rounding ties (1 + 2**-8 rounds
    # away to 1 + 2**-7, not to even 1).
    b[0][0, :8] = a[0][0, :8] ^ 0x8000
    a[0][1, :4], b[0][1, :4] = 0x3F80, 0x3B80
    a[0][1, 4:8], b[0][1, 4:8] = 0xBF80, 0xBB80
    # Products that tie when rounded to BF16: (1 + 2**-7) * (1 + 2**-1) = 1 + 2**-1 + 2**-7 + 2**-8.
    a[0][2, :8], b[0][2, :8] = 0x3F81, 0x3FC0
    return a, b


def eltwise_expected(op: str, a: np.ndarray, b: np.ndarray, phases: int) -> np.ndarray:
    """The matrix unit's model (FP32 Dst) then the packer's rounding to BF16."""
    x, y = bf16_value(a), bf16_value(b)
    return round_bf16_away(reference_eltwise(op, x, y, phases, True))


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_eltwise_kernel_matches_numpy_bit_for_bit(
    op: str, arch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiles = 8
    a, b = eltwise_inputs(100 + len(op), tiles)
    elfs = programs.build_eltwise(op, tiles=tiles, phases=4, arch=arch)
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    tile, trace = run_kernel(elfs, inputs, monkeypatch, arch)

    out = output_tiles(tile, tiles)
    numpy_op = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    for t in range(tiles):
        expected = eltwise_expected(op, a[t], b[t], 4)
        np.testing.assert_array_equal(out[t], expected, err_msg=f"tile {t}")
        # BF16 operands: the fp32 sum, difference or (HiFi4) product is exact, so the result is numpy's
        # exact value rounded to BF16 (ties away from zero).
        exact = numpy_op(bf16_value(a[t]).astype(np.float64), bf16_value(b[t]).astype(np.float64))
        np.testing.assert_array_equal(out[t], round_bf16_away(exact.astype(np.float32)))
    if op == "add":
        assert (
            not out[0][0, :8].any() and (out[0][1, :4] == 0x3F81).all() and (out[0][1, 4:8] == 0xBF81).all()
        )
    if op == "mul":
        assert (out[0][2, :8] == 0x3FC2).all()  # 1.5 + 2**-6: the tie went away from zero
    # Nothing past the last output tile was written.
    assert not any(tile.read(programs.KERNEL_DST + tiles * TILE_BYTES, 256))

    check_finished_cleanly(tile, tiles, tiles)
    name = {"add": "ELWADD", "sub": "ELWSUB", "mul": "ELWMUL"}[op]
    assert len(trace.cycles(MATH, name)) == tiles * 8 * (4 if op == "mul" else 1)
    check_synchronisation(trace, name, tiles, tiles, 1, arch)
    # The matrix unit and the packer spent cycles held: by the Src hand-over and by the SEMWAIT.
    stalled = [p.stalled for p in tile.backend.pipes]
    assert stalled[MATH].get(name, 0) > 0 and stalled[PACK].get("PACR", 0) > 0


@pytest.mark.parametrize("arch", ARCHES)
def test_eltwise_mul_at_lofi_drops_mantissa_bits(arch: str) -> None:
    # One fidelity phase multiplies only the operands' top mantissa bits: the model says so, the
    # kernel does it, and it differs from HiFi4 somewhere.
    tiles = 2
    a, b = eltwise_inputs(5, tiles)
    elfs = programs.build_eltwise("mul", tiles=tiles, phases=1, arch=arch)
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    tile, _ = run_kernel(elfs, inputs, arch=arch)
    out = output_tiles(tile, tiles)
    for t in range(tiles):
        np.testing.assert_array_equal(out[t], eltwise_expected("mul", a[t], b[t], 1))
    assert any((out[t] != eltwise_expected("mul", a[t], b[t], 4)).any() for t in range(tiles))


SPECIAL_BF16 = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F81, 0x3B80, 0x7F7F, 0x0080, 0x0001, 0x4000, 0xC2F7]


@st.composite
def bf16_tiles(draw) -> np.ndarray:
    """A tile of BF16 patterns: random normal numbers, with special values (zeros, ones and their
    neighbours, the largest finite, the smallest normal, a denormal) scattered in."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    tile = random_bf16(rng)
    picks = draw(st.lists(st.tuples(st.integers(0, 1023), st.sampled_from(SPECIAL_BF16)), max_size=64))
    for index, value in picks:
        tile.flat[index] = value
    return tile


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=bf16_tiles(), b=bf16_tiles(), op=st.sampled_from(["add", "sub"]), arch=st.sampled_from(ARCHES))
def test_eltwise_kernel_over_special_values(a: np.ndarray, b: np.ndarray, op: str, arch: str) -> None:
    elfs = programs.build_eltwise(op, tiles=1, arch=arch)
    tile, _ = run_kernel(
        elfs,
        {programs.KERNEL_SRC0: programs.tiles_to_l1([a]), programs.KERNEL_SRC1: programs.tiles_to_l1([b])},
        arch=arch,
    )
    np.testing.assert_array_equal(output_tiles(tile, 1)[0], eltwise_expected(op, a, b, 1))


# ------------------------------------------------------------------------------ matmul


def matmul_expected(a_tiles, b_tiles, mt: int, nt: int, kt: int, phases: int) -> list[np.ndarray]:
    """C[i][j]: Dst starts at +0 and, for each inner tile k, each fidelity phase and each inner half
    of 16, takes the fp32 sum of the half's sliced products plus itself (FP32 Dst); then the packer
    rounds it to BF16."""
    out = []
    with np.errstate(all="ignore"):
        for i in range(mt):
            for j in range(nt):
                dst = np.zeros((32, 32), np.float32)
                for k in range(kt):
                    x, y = a_tiles[i * kt + k], b_tiles[k * nt + j]
                    for phase in range(phases):
                        for half in (0, 1):
                            total = np.zeros((32, 32), np.float32)
                            for m in range(16 * half, 16 * half + 16):
                                product = slice_b(x[:, m], phase)[:, None] * slice_a(y[m, :], phase)[None, :]
                                total = flush(total + flush(product))
                            dst = dst_store(total + dst, True)
                out.append(round_bf16_away(dst))
    return out


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("phases", [1, 4], ids=["lofi", "hifi4"])
def test_matmul_kernel_accumulates_inner_tiles_in_dst(
    phases: int, arch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mt = nt = kt = 2
    rng = np.random.default_rng(40 + phases)
    a = [bf16_values(rng, 3) for _ in range(mt * kt)]
    b = [bf16_values(rng, 3) for _ in range(kt * nt)]
    elfs = programs.build_matmul(mt=mt, nt=nt, kt=kt, phases=phases, arch=arch)
    inputs = {
        programs.KERNEL_SRC0: programs.tiles_to_l1([bits(t) >> 16 for t in a]),
        programs.KERNEL_SRC1: programs.tiles_to_l1([bits(t) >> 16 for t in b]),
    }
    tile, trace = run_kernel(elfs, inputs, monkeypatch, arch)
    out = output_tiles(tile, mt * nt)
    expected = matmul_expected(a, b, mt, nt, kt, phases)
    for t in range(mt * nt):
        np.testing.assert_array_equal(out[t], expected[t], err_msg=f"tile {t}")

    # Against float64: HiFi4 is within BF16 rounding of the exact product; LoFi is further off.
    big_a = np.block([[a[i * kt + k] for k in range(kt)] for i in range(mt)]).astype(np.float64)
    big_b = np.block([[b[k * nt + j] for j in range(nt)] for k in range(kt)]).astype(np.float64)
    exact = big_a @ big_b
    got = np.block([[bf16_value(out[i * nt + j]) for j in range(nt)] for i in range(mt)]).astype(np.float64)
    scale = np.abs(big_a) @ np.abs(big_b)
    error = np.abs(got - exact)
    assert (error <= 2.0**-8 * np.abs(exact) + 2.0**-20 * scale).all() == (phases == 4)

    check_finished_cleanly(tile, mt * nt * kt, mt * nt)
    assert len(trace.cycles(MATH, "MVMUL")) == 16 * phases * mt * nt * kt
    check_synchronisation(trace, "MVMUL", mt * nt * kt, mt * nt, kt, arch)


# ------------------------------------------------------------------------------ bfp8_b -> fp16 copy


def fp16_from_fp32_packer(value: np.float32) -> int:
    """The packer's late FP32 -> FP16 conversion for the values this test produces: exact for finite
    values FP16 holds exactly; infinity saturates to exponent 31, mantissa 1023 (FP16 has no
    infinity pattern in the packer's conversion)."""
    u = int(np.float32(value).view(np.uint32))
    sign = (u >> 16) & 0x8000
    if (u >> 23) & 0xFF == 0xFF:
        return sign | 0x7FFF
    half = np.float16(value)
    assert np.float32(half) == value, "the test's data must be exact in FP16"
    return int(half.view(np.uint16))


@pytest.mark.parametrize("arch", ARCHES)
def test_eltwise_in_tt_llk_unpack_form_gives_the_same_tiles_and_cycles(arch: str) -> None:
    # tt-llk's UNPACRs set OvrdThreadId (MultiContextMode, context 0): the context's own fields are
    # read, the output address is Dest_cntx0_address; the same datums land in the same rows.
    tiles = 4
    a, b = eltwise_inputs(7, tiles)
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    runs = []
    for multi in (False, True):
        elfs = programs.build_eltwise("add", tiles=tiles, multi_context=multi, arch=arch)
        tile, _ = run_kernel(elfs, inputs, arch=arch)
        runs.append((output_tiles(tile, tiles), tile.cycle))
        check_finished_cleanly(tile, tiles, tiles)
    (plain, plain_cycles), (multi, multi_cycles) = runs
    for t in range(tiles):
        np.testing.assert_array_equal(multi[t], eltwise_expected("add", a[t], b[t], 1), err_msg=f"tile {t}")
        np.testing.assert_array_equal(multi[t], plain[t])
    # The same unpacking; tt-llk's form first writes four of the context's configuration fields more
    # (read-modify-writes, each waiting for its register read), which the run may or may not hide.
    assert 0 <= multi_cycles - plain_cycles <= 4 * 2 * RISCV.mmio_read


@pytest.mark.parametrize("multi_context", [False, True])
@pytest.mark.parametrize("arch", ARCHES)
def test_copy_unpacks_bfp8_and_packs_fp16(arch: str, multi_context: bool) -> None:
    tiles = 3
    rng = np.random.default_rng(77)
    exponents = [rng.integers(122, 133, 64).astype(np.uint8) for _ in range(tiles)]
    datums = [rng.integers(0, 256, (32, 32)).astype(np.uint8) for _ in range(tiles)]
    datums[0][0, :4] = [0x00, 0x80, 0x7F, 0xFF]  # +0, "-0" (decodes to -infinity), largest magnitudes
    data = b"".join(programs.bfp8_tile_bytes(e, d) for e, d in zip(exponents, datums, strict=True))
    elfs = programs.build_copy_bfp8_to_fp16(tiles=tiles, multi_context=multi_context, arch=arch)
    tile, _ = run_kernel(elfs, {programs.KERNEL_SRC0: data}, arch=arch)
    out = output_tiles(tile, tiles)
    for t in range(tiles):
        faces = programs.tile_to_faces(datums[t])
        decoded = [BFP8ToBF16(int(faces[i]), int(exponents[t][i // 16])) for i in range(1024)]
        values = (np.array(decoded, np.uint32) << 16).view(np.float32)
        expected = np.array([fp16_from_fp32_packer(v) for v in values], np.uint16)
        np.testing.assert_array_equal(out[t], programs.tile_from_faces(expected), err_msg=f"tile {t}")
    assert out[0][0, 0] == 0 and out[0][0, 1] == 0xFFFF
    check_finished_cleanly(tile, tiles, tiles, two_inputs=False)


# ------------------------------------------------------------------------------ bad configuration


@pytest.mark.parametrize("arch", ARCHES)
def test_tile_descriptor_beyond_l1_faults_naming_the_core_with_l1_unchanged(arch: str) -> None:
    # Input 0's circular buffer placed at the end of Blackhole's L1 (1536 KiB; Wormhole's is 1464 KiB):
    # the first UNPACR reads past it.
    elfs = programs.build_eltwise("add", tiles=1, cb_in0_base=0x180000, arch=arch)
    tile = Tile(arch)
    tile.load_elf("trisc0", elfs["trisc0"])
    for cb in ("in0", "in1"):  # the host plays the reader: one tile "arrived" in each buffer
        tile.streams.write(programs.KERNEL_CB_STREAMS[cb], tile.streams.tiles_received, 1)
    l1_before = tile.l1.copy()
    srca_before = tile.coprocessor.regs.srca.copy()
    with pytest.raises(MemoryFault) as caught:
        tile.run(release=["trisc0"], max_cycles=MAX_CYCLES)
    fault = caught.value
    assert fault.core == "trisc0" and fault.pc is not None
    assert 0x6000 <= fault.pc < 0x6000 + 0x4000  # in TRISC0's code window: the UNPACR it pushed
    assert "trisc0" in str(fault) and "outside L1" in str(fault)
    assert np.array_equal(tile.l1, l1_before)
    assert np.array_equal(tile.coprocessor.regs.srca, srca_before)


@pytest.mark.parametrize("arch", ARCHES)
def test_kernels_build_for_their_cores(arch: str) -> None:
    for elfs in (
        programs.build_eltwise("add", arch=arch),
        programs.build_matmul(arch=arch),
        programs.build_copy_bfp8_to_fp16(arch=arch),
    ):
        assert sorted(elfs) == ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"]
        assert all(path.is_file() for path in elfs.values())


def test_eltwise_rejects_an_unknown_op() -> None:
    with pytest.raises(ValueError, match="op must be"):
        programs.build_eltwise("div")


def test_models_agree_with_the_references() -> None:
    # programs.eltwise_model (used by the benchmark) against the test references, HiFi4.
    a, b = eltwise_inputs(9, 1)
    for op in ("add", "sub", "mul"):
        np.testing.assert_array_equal(
            programs.eltwise_model(op, a[0], b[0]), eltwise_expected(op, a[0], b[0], 4)
        )
    tile = random_bf16(np.random.default_rng(1))
    assert np.array_equal(programs.tile_from_faces(programs.tile_to_faces(tile)), tile)
    assert np.array_equal(programs.tile_to_faces(tile)[:16], tile[0, :16])
    assert np.array_equal(programs.tile_to_faces(tile)[256:272], tile[0, 16:])


# ------------------------------------------------------------------------------ the generated header


@pytest.mark.parametrize("arch", ARCHES)
def test_cfg_header_fields_land_where_the_emulator_reads_them(tmp_path, arch: str) -> None:
    """A TRISC1 program writes fields with CFG_WRITE (read-modify-write over MMIO), a global field
    (one word for both states) and ThreadConfig fields with SETC16 and THD_VALUE; the emulator's own
    field table (each chip's) reads back exactly those values, and the neighbours in the same words
    are kept."""
    from pathlib import Path

    from tensixsim.sdk.build import build

    source = Path(tmp_path) / "cfg_fields.c"
    source.write_text(
        "\n".join(
            [
                '#include "tensix_kernel.h"',
                "int main(void) {",
                "    CFG_WRITE(0, ALU_FORMAT_SPEC_REG1_SrcB, 5u);",
                "    CFG_WRITE(0, ALU_ACC_CTRL_Fp32_enabled, 1u);",
                "    CFG_WRITE(1, THCON_SEC0_REG1_L1_Dest_addr, 0x1234u);",
                "    CFG_WRITE(0, DEST_TARGET_REG_CFG_PACK_SEC0_Offset, 0x100u);",
                "    CFG_WRITE(0, PCK_EDGE_OFFSET_SEC0_mask, 0xFFFFu);",
                "    TTI_SETC16(THD_ADDR_MOD_AB_SEC3_SrcAIncr_REG,",
                "               THD_VALUE(ADDR_MOD_AB_SEC3_SrcAIncr, 7) |",
                "               THD_VALUE(ADDR_MOD_AB_SEC3_SrcBCR, 1));",
                "    return (int)CFG_READ(0, ALU_FORMAT_SPEC_REG1_SrcB);",
                "}",
            ]
        )
    )
    elf = build("trisc1", [source], Path(tmp_path) / "cfg_fields.elf", arch=arch, build_dir=Path(tmp_path))
    tile = Tile(arch)
    config = tile.coprocessor.config
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, 3)  # a neighbour in the same word
    tile.load_elf("trisc1", elf)
    tile.run(release=["trisc1"], max_cycles=100_000)
    assert tile.result().cores["trisc1"].exit_code == 5
    assert config.read_field("ALU_FORMAT_SPEC_REG1_SrcB", 0) == 5
    assert config.read_field("ALU_ACC_CTRL_Fp32_enabled", 0) == 1
    assert config.read_field("ALU_FORMAT_SPEC_REG0_SrcA", 0) == 3
    assert config.read_field("THCON_SEC0_REG1_L1_Dest_addr", 1) == 0x1234
    assert config.read_field("THCON_SEC0_REG1_L1_Dest_addr", 0) == 0
    for state in (0, 1):  # a global word: one copy for both states
        assert config.read_field("DEST_TARGET_REG_CFG_PACK_SEC0_Offset", state) == 0x100
    assert config.read_field("PCK_EDGE_OFFSET_SEC0_mask", 0) == 0xFFFF
    assert config.thread_field("ADDR_MOD_AB_SEC3_SrcAIncr", MATH) == 7
    assert config.thread_field("ADDR_MOD_AB_SEC3_SrcBCR", MATH) == 1
    assert config.thread_field("ADDR_MOD_AB_SEC3_SrcBIncr", MATH) == 0


def test_cores_polling_a_semaphore_while_a_unit_is_busy_is_not_a_deadlock(tmp_path) -> None:
    """Both running cores spin on a semaphore that only an instruction held behind a busy unpacker
    will clear: the scheduler must let the pipe issue rather than call it a deadlock."""
    from pathlib import Path

    from test_e2e_raw import configure_unpackers

    from tensixsim.sdk.build import build

    root = Path(tmp_path)
    sources = {
        "trisc0": [
            "tk_sem_post(2);",
            "TTI_SETADCXX(1, 255, 0);",
            "TTI_UNPACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);",
            "TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_UNPACK0);",
            "TTI_SEMGET(TK_SEM(2));",
            "while (tk_sem_read(2) != 0) {}",
        ],
        "trisc2": ["while (tk_sem_read(2) == 0) {}", "while (tk_sem_read(2) != 0) {}"],
    }
    tile = Tile("blackhole")
    configure_unpackers(tile)
    for core, body in sources.items():
        source = root / f"{core}.c"
        source.write_text(
            '#include "tensix_kernel.h"\nint main(void) {\n' + "\n".join(body) + "\nreturn 0;\n}\n"
        )
        tile.load_elf(core, build(core, [source], root / f"{core}.elf", build_dir=root))
    result = tile.run(release=["trisc0", "trisc2"], max_cycles=200_000)
    assert result.cores["trisc0"].exit_code == 0 and result.cores["trisc2"].exit_code == 0
    assert result.pipes[0].stalled.get("SEMGET", 0) > 0  # the SEMGET really waited for the unpacker


# ------------------------------------------------------------------------------ fp32 tilize / untilize

# Every step of these kernels is documented as exact for FP32: the unpacker's FP32 -> FP32 into Dst
# is WriteDstFP32 (a rearrangement of the bits), the packer's early FP32 -> FP32 from Dst32b is the
# identity (denormals and NaN preserved) and its late FP32 -> FP32 neither narrows nor widens. So the
# reference is the identity on all 32 bits, moved by the layout change alone: negative zero,
# denormals, infinities and NaN payloads included.
SPECIAL_FP32 = [
    0x00000000, 0x80000000,  # +0, -0
    0x00000001, 0x807FFFFF, 0x00400000,  # denormals: smallest, largest (negative), one in the middle
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,  # smallest / largest normals
    0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,  # infinities, NaNs (quiet, signalling)
    0x3F800000, 0x3F800001, 0x0D800000, 0x72800000,  # one and its neighbour, tiny and huge exponents
]  # fmt: skip
FP32_BLOCK_BYTES = 32 * 32 * 4


def fp32_blocks(seed: int, count: int) -> list[np.ndarray]:
    """``count`` (32, 32) blocks of FP32 bit patterns: random normal numbers, the first block with the
    special values along its first row and down its last column (so they reach every face)."""
    rng = np.random.default_rng(seed)
    blocks = [rng.standard_normal((32, 32)).astype(np.float32).view(np.uint32) for _ in range(count)]
    blocks[0][0, : len(SPECIAL_FP32)] = SPECIAL_FP32
    blocks[0][32 - len(SPECIAL_FP32) :, 31] = SPECIAL_FP32
    return blocks


def faces_reference(block: np.ndarray) -> list[int]:
    """A block's datums in tile order, written from the tile layout itself: faces top-left, top-right,
    bottom-left, bottom-right; 16 rows of 16 inside each."""
    return [
        int(block[face_row + i][face_col + j])
        for face_row in (0, 16)
        for face_col in (0, 16)
        for i in range(16)
        for j in range(16)
    ]


def rows_reference(faces: list[int]) -> list[int]:
    """The inverse: a tiled block's datums in row-major order (row r, column c of the block is face
    2 * (r // 16) + c // 16, face row r % 16, face column c % 16)."""
    return [
        faces[256 * (2 * (r // 16) + c // 16) + 16 * (r % 16) + c % 16] for r in range(32) for c in range(32)
    ]


def fp32_out(tile: Tile, count: int) -> list[list[int]]:
    data = np.frombuffer(bytes(tile.read(programs.KERNEL_DST, count * FP32_BLOCK_BYTES)), "<u4")
    return [[int(v) for v in data[1024 * t : 1024 * (t + 1)]] for t in range(count)]


# UNPACRs and PACRs per Dst pass (tensix_kernel.h), by chip and by what the pass writes: Blackhole's
# unpacker takes a block in one UNPACR and its packer tilizes or untilizes it in 32 PACRs; Wormhole's
# unpacker tilizes, a face per UNPACR, and its packer untilizes, a face row per PACR.
BLOCK_UNPACRS = {"blackhole": {"tilize": 1, "untilize": 1}, "wormhole": {"tilize": 4, "untilize": 1}}
BLOCK_PACRS = {"blackhole": {"tilize": 32, "untilize": 32}, "wormhole": {"tilize": 4, "untilize": 64}}


def pass_spans(counts: list[int]) -> list[tuple[int, int]]:
    """(first, last) index of each pass's instructions, from how many each pass has."""
    ends = np.cumsum(counts)
    return [(int(end) - n, int(end) - 1) for end, n in zip(ends, counts, strict=True)]


def check_dst_passes(trace: Trace, kinds: list[str], arch: str = "blackhole") -> list[tuple[int, int]]:
    """The UNPACRs and PACRs of each Dst pass (``kinds``: what each pass writes). A pass is packed only
    after it was unpacked and TRISC1 handed it over; the unpacker overwrites a Dst half (and TRISC1
    clears it) only after the packer has read the pass that was there before. Returns the cycles of
    each pass's (first unpack, last pack)."""
    unpacks = trace.cycles(UNPACK, "UNPACR")
    clears = trace.cycles(MATH, "ZEROACC")
    posts = trace.cycles(MATH, "SEMPOST")
    packs = trace.cycles(PACK, "PACR")
    passes = len(kinds)
    unpack_spans = pass_spans([BLOCK_UNPACRS[arch][k] for k in kinds])
    pack_spans = pass_spans([BLOCK_PACRS[arch][k] for k in kinds])
    assert len(clears) == len(posts) == passes
    assert len(unpacks) == unpack_spans[-1][1] + 1 and len(packs) == pack_spans[-1][1] + 1
    for p in range(passes):
        assert clears[p] < unpacks[unpack_spans[p][0]]
        assert unpacks[unpack_spans[p][1]] < posts[p] < packs[pack_spans[p][0]]
        if p >= 2:
            assert clears[p] > packs[pack_spans[p - 2][1]]
    return [(unpacks[u[0]], packs[k[1]]) for u, k in zip(unpack_spans, pack_spans, strict=True)]


def check_tilize_finished(tile: Tile, blocks: int, mid: int = 0) -> None:
    check_finished_cleanly(tile, blocks, blocks, two_inputs=False)
    assert cb_counters(tile)(programs.KERNEL_CB_MID_STREAM) == (mid, mid)
    assert not tile.coprocessor.sync.sem_value[2:4].any()  # TK_SEM_DST_FREE / _FULL drained


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("mode", ["tilize", "untilize"])
def test_tilize_kernels_move_fp32_blocks_bit_for_bit(
    mode: str, arch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 3
    blocks = fp32_blocks(31 + len(mode), count)
    tiled = [faces_reference(b) for b in blocks]
    if mode == "tilize":
        data, expected = [b.ravel() for b in blocks], tiled
    else:
        data, expected = tiled, [rows_reference(f) for f in tiled]
    elfs = programs.build_tilize_fp32(mode, tiles=count, arch=arch)
    inputs = {programs.KERNEL_SRC0: np.concatenate([np.asarray(d, "<u4") for d in data]).tobytes()}
    tile, trace = run_kernel(elfs, inputs, monkeypatch, arch)
    out = fp32_out(tile, count)
    for t in range(count):
        assert out[t] == expected[t], f"block {t}"
    # The references agree with the row-major numbers themselves.
    assert rows_reference(tiled[0]) == [int(v) for v in blocks[0].ravel()]
    assert not any(tile.read(programs.KERNEL_DST + count * FP32_BLOCK_BYTES, 256))
    check_tilize_finished(tile, count)
    check_dst_passes(trace, [mode] * count, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_tilize_then_untilize_in_one_run_is_the_identity(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    count = 2
    blocks = fp32_blocks(7, count)
    elfs = programs.build_tilize_fp32("round_trip", tiles=count, arch=arch)
    inputs = {programs.KERNEL_SRC0: np.concatenate([b.ravel() for b in blocks]).astype("<u4").tobytes()}
    tile, trace = run_kernel(elfs, inputs, monkeypatch, arch)
    out = fp32_out(tile, count)
    for t in range(count):
        assert out[t] == [int(v) for v in blocks[t].ravel()], f"block {t}"
    # The last tilized block is still in the mid buffer's page, in tile order.
    page = (count - 1) % 2
    mid = np.frombuffer(
        bytes(tile.read(programs.KERNEL_CB_MID_BASE + page * FP32_BLOCK_BYTES, FP32_BLOCK_BYTES)), "<u4"
    )
    assert [int(v) for v in mid] == faces_reference(blocks[-1])
    check_tilize_finished(tile, count, mid=count)
    spans = check_dst_passes(trace, ["tilize", "untilize"] * count, arch)
    for t in range(count):  # the tiled block is read back only once it has been packed
        assert spans[2 * t + 1][0] > spans[2 * t][1]


@st.composite
def fp32_bit_blocks(draw) -> np.ndarray:
    """A block of arbitrary FP32 bit patterns with special values scattered in."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    block = rng.integers(0, 2**32, (32, 32), dtype=np.uint64).astype(np.uint32)
    picks = draw(st.lists(st.tuples(st.integers(0, 1023), st.sampled_from(SPECIAL_FP32)), max_size=64))
    for index, value in picks:
        block.flat[index] = value
    return block


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block=fp32_bit_blocks(), arch=st.sampled_from(ARCHES))
def test_tilize_round_trip_keeps_every_bit_pattern(block: np.ndarray, arch: str) -> None:
    elfs = programs.build_tilize_fp32("round_trip", tiles=1, arch=arch)
    tile, _ = run_kernel(elfs, {programs.KERNEL_SRC0: block.astype("<u4").tobytes()}, arch=arch)
    assert fp32_out(tile, 1)[0] == [int(v) for v in block.ravel()]


def test_tilize_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        programs.build_tilize_fp32("transpose")
