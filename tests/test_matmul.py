"""Whole tiles through the matrix unit: 32x32x32 matmul, element-wise add / sub / mul, and the MVMUL
fast path against one-at-a-time execution.

Raw instructions go into the math pipe through the MOP and replay expanders (tensixsim.raw). The
tile-level reference below is written from the MVMUL / ELWADD / ELWSUB / ELWMUL functional models
and the readings matrix/unit.py states (fp32 operations with round-to-nearest-even, FTZ after each,
Dst BF16 rounded to nearest with ties away from zero), applied to the documented instruction
sequence: it shares no code with the emulator.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensixsim import SimError, Tile
from tensixsim.raw import (
    MATH_THREAD,
    MATMUL_ADDR_MODS,
    SRCA,
    SRCB,
    configure_matmul,
    dst_tile_fp32,
    dst_tile_int32,
    load_src_tile,
    matmul_tile_words,
    run_words,
    set_addr_mod,
    src_tile_fp32,
)
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.timing import FRONTEND

F32, U32 = np.float32, np.uint32
ISA = Tile("blackhole").coprocessor.isa
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- reference
def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, F32).view(U32)


def value(b: np.ndarray) -> np.ndarray:
    return np.asarray(b, U32).view(F32)


def flush(x: np.ndarray) -> np.ndarray:
    """Zero or denormal -> +0."""
    return np.where(bits(x) & 0x7F800000 == 0, F32(0), np.asarray(x, F32))


def slice_a(x: np.ndarray, phase: int) -> np.ndarray:
    if phase & 1 == 0:
        return flush(value(bits(x) & 0xFFF80000))
    return flush(x - value(bits(x) & 0xFFF83FFF))


def slice_b(x: np.ndarray, phase: int) -> np.ndarray:
    if phase & 2 == 0:
        return flush(value(bits(x) & 0xFFFE0000))
    return flush(x - value(bits(x) & 0xFFFE1FFF))


def to_bf16_nearest_away(x: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 value: add half an ulp to the magnitude, truncate (ties away from zero)."""
    b = bits(x)
    sign, mag = b & 0x80000000, b & 0x7FFFFFFF
    return value(sign | (((mag + 0x8000) >> 16) << 16))


def dst_store(x: np.ndarray, fp32_dest: bool) -> np.ndarray:
    """What the Dst write keeps, read back as fp32."""
    x = flush(x)
    return x if fp32_dest else flush(to_bf16_nearest_away(x))


def bf16_values(rng: np.random.Generator, spread: float) -> np.ndarray:
    """A 32x32 tile of bf16 values (as fp32), exponents spread by ``spread`` octaves."""
    x = rng.standard_normal((32, 32)) * np.exp2(rng.uniform(-spread, spread, (32, 32)))
    return value(bits(x.astype(F32)) & 0xFFFF0000)


def reference_matmul(x: np.ndarray, y: np.ndarray, phases: int, fp32_dest: bool) -> np.ndarray:
    """Dst after the sixteen-MVMUL sequence per phase: each Dst element gets, per phase, the inner half
    t = 0 then t = 1, each a k = 0..15 fp32 sum of fidelity-slice products."""
    dst = np.zeros((32, 32), F32)
    with np.errstate(all="ignore"):
        for phase in range(phases):
            for half in (0, 1):
                inner = range(16 * half, 16 * half + 16)
                total = np.zeros((32, 32), F32)
                for k in inner:
                    product = flush(slice_b(x[:, k], phase)[:, None] * slice_a(y[k, :], phase)[None, :])
                    total = flush(total + product)
                dst = dst_store(total + dst, fp32_dest)
    return dst


# ---------------------------------------------------------------------------- harness
def matmul_tile(
    x: np.ndarray, y: np.ndarray, phases: int, fp32_dest: bool, *, fast: bool = True, engine: str = "native"
) -> Tile:
    tile = Tile("blackhole", engine=engine)
    tile.backend.fast_paths = fast
    copro = tile.coprocessor
    configure_matmul(copro, fp32_dest=fp32_dest)
    load_src_tile(copro, SRCA, bits(y) >> 16)
    load_src_tile(copro, SRCB, bits(x) >> 16)
    run_words(tile, MATH_THREAD, matmul_tile_words(copro, phases))
    return tile


@pytest.mark.parametrize(
    "engine",
    [
        pytest.param(
            "native",
            marks=pytest.mark.skipif(
                native.library() is None, reason="the native engine cannot be built here"
            ),
        ),
        "python",
    ],
)
@pytest.mark.parametrize("fp32_dest", [True, False])
@pytest.mark.parametrize("phases", [1, 2, 3, 4])
def test_tile_matmul_matches_the_multiplier_model_bit_for_bit(phases, fp32_dest, engine):
    rng = np.random.default_rng(phases * 2 + fp32_dest)
    x, y = bf16_values(rng, 4), bf16_values(rng, 4)
    tile = matmul_tile(x, y, phases, fp32_dest, engine=engine)
    got = dst_tile_fp32(tile.coprocessor)
    expected = reference_matmul(x, y, phases, fp32_dest)
    assert np.array_equal(bits(got), bits(expected))
    # Sixteen MVMULs per phase, one per cycle: every Dst block is revisited eight cycles later, so the
    # four-cycle read-after-write rule never stalls this sequence.
    pipe = tile.backend.pipes[MATH_THREAD]
    assert pipe.issued == 16 * phases
    # Seventeen queue entries, all pushed at cycle 0 (REPLAY and the fifteen words it records, one per
    # cycle from FRONTEND.push_to_issue, then the MOP), then the MVMULs on without a gap.
    assert pipe.last_cycle == 16 + 16 * phases + FRONTEND.push_to_issue - 1
    if engine == "python":
        assert tile.backend.fast_path_instructions == 16 * phases  # as one vectorised run
    else:
        assert tile.backend.native.instructions >= 16 * phases  # every MVMUL in C


@pytest.mark.parametrize("phases", [1, 2, 3, 4])
def test_the_raw_tile_matmul_on_wormhole_matches_the_model_with_and_without_the_fast_path(phases):
    """tensixsim.raw's Wormhole plan (two-bit AddrMods, slots 4..7 under ExtraAddrModBit, a SETRWC for
    the fidelity phase) computes the same tile as the model (WormholeB0 MVMUL.md is the model
    reference_matmul transcribes), one MVMUL at a time and on the fast path, in the same cycles,
    and leaves the RWC's fidelity phase and ExtraAddrModBit at 0 for the next tile; so does the native
    engine, every MVMUL in C."""
    rng = np.random.default_rng(30 + phases)
    x, y = bf16_values(rng, 3), bf16_values(rng, 3)
    ends = []
    runs = [("python", False), ("python", True)]
    if native.available("wormhole"):
        runs.append(("native", True))
    for engine, fast in runs:
        tile = Tile("wormhole", engine=engine)
        tile.backend.fast_paths = fast
        copro = tile.coprocessor
        configure_matmul(copro, fp32_dest=True)
        load_src_tile(copro, SRCA, bits(y) >> 16)
        load_src_tile(copro, SRCB, bits(x) >> 16)
        ends.append(run_words(tile, MATH_THREAD, matmul_tile_words(copro, phases)))
        assert np.array_equal(bits(dst_tile_fp32(copro)), bits(reference_matmul(x, y, phases, True)))
        assert tile.backend.pipes[MATH_THREAD].issued == 16 * phases + 1  # the MVMULs and the SETRWC
        if engine == "python":
            assert tile.backend.fast_path_instructions == (16 * phases if fast else 0)
        else:
            assert tile.backend.native.instructions >= 16 * phases  # every MVMUL in C
        assert (
            int(copro.adc.fidelity_phase[MATH_THREAD]) == int(copro.adc.extra_addr_mod_bit[MATH_THREAD]) == 0
        )
    assert len(set(ends)) == 1


@pytest.mark.parametrize("fp32_dest", [True, False])
def test_hifi4_matmul_is_within_bf16_rounding_of_float64(fp32_dest):
    rng = np.random.default_rng(7)
    x, y = bf16_values(rng, 2), bf16_values(rng, 2)
    got = dst_tile_fp32(matmul_tile(x, y, 4, fp32_dest).coprocessor).astype(np.float64)
    exact = x.astype(np.float64) @ y.astype(np.float64)
    scale = np.abs(x).astype(np.float64) @ np.abs(y).astype(np.float64)
    # HiFi4 consumes every mantissa bit of bf16 operands: what remains is fp32 summation (fp32 Dst) or
    # the eight bf16 roundings of the accumulating Dst writes.
    bound = 2.0**-20 if fp32_dest else 8 * 2.0**-8
    assert np.all(np.abs(got - exact) <= bound * scale)
    lofi = dst_tile_fp32(matmul_tile(x, y, 1, True).coprocessor).astype(np.float64)
    assert np.abs(lofi - exact).max() > np.abs(got - exact).max()  # fewer mantissa bits, larger error


def test_matmul_cycles_per_tile_are_sixteen_per_phase():
    rng = np.random.default_rng(1)
    x, y = bf16_values(rng, 1), bf16_values(rng, 1)
    for phases in (1, 4):
        tile = matmul_tile(x, y, phases, True)
        copro = tile.coprocessor
        start = tile.backend.cycle
        mop = matmul_tile_words(copro, phases, record=False)
        first = tile.backend.pipes[MATH_THREAD].last_cycle
        end = run_words(tile, MATH_THREAD, mop, cycle=first + 1)
        # MOP entry taken once through the front end, then 16 * phases MVMULs back to back.
        assert end - (first + 1) == 16 * phases + FRONTEND.push_to_issue, (phases, start, first, end)


# ---------------------------------------------------------------------------- element-wise tiles
def eltwise(op: str, x: np.ndarray, y: np.ndarray, phases: int, fp32_dest: bool) -> np.ndarray:
    tile = Tile("blackhole")
    copro = tile.coprocessor
    configure_matmul(copro, fp32_dest=fp32_dest)
    set_addr_mod(copro, MATH_THREAD, 0, SrcAIncr=8, SrcBIncr=8, DestIncr=8)
    set_addr_mod(copro, MATH_THREAD, 1, SrcAClear=1, SrcBClear=1, DestClear=1, FidelityIncr=1)
    load_src_tile(copro, SRCA, bits(x) >> 16)
    load_src_tile(copro, SRCB, bits(y) >> 16)
    name = {"add": "ELWADD", "sub": "ELWSUB", "mul": "ELWMUL"}[op]

    def word(slot: int) -> int:
        return ISA.encode(name, clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=slot, dst=0)

    run_words(tile, MATH_THREAD, ([word(0)] * 7 + [word(1)]) * phases)
    return dst_tile_fp32(copro)


def reference_eltwise(op: str, x: np.ndarray, y: np.ndarray, phases: int, fp32_dest: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "add":
            return dst_store(flush(x + y), fp32_dest)
        if op == "sub":
            return dst_store(flush(x - y), fp32_dest)
        dst = np.zeros((32, 32), F32)
        for phase in range(phases):
            dst = dst_store(flush(slice_a(x, phase) * slice_b(y, phase)) + dst, fp32_dest)
        return dst


@pytest.mark.parametrize("fp32_dest", [True, False])
@pytest.mark.parametrize(("op", "phases"), [("add", 1), ("sub", 1), ("mul", 1), ("mul", 4)])
def test_eltwise_tile_matches_the_model_and_numpy(op, phases, fp32_dest):
    rng = np.random.default_rng(11)
    x, y = bf16_values(rng, 3), bf16_values(rng, 3)
    got = eltwise(op, x, y, phases, fp32_dest)
    assert np.array_equal(bits(got), bits(reference_eltwise(op, x, y, phases, fp32_dest)))
    if op != "mul" or phases == 4:
        exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](x.astype(np.float64), y)
        # Each accumulating phase rounds Dst once: bf16 Dst loses up to half an ulp per phase.
        bound = 2.0**-23 if fp32_dest else phases * 2.0**-8
        assert np.all(np.abs(got - exact) <= bound * np.abs(exact) + 1e-38)


# ---------------------------------------------------------------------------- read-after-write stall
def issue_cycles(words: list[int], fast: bool = False) -> list[int]:
    tile = Tile("blackhole")
    copro = tile.coprocessor
    tile.backend.fast_paths = fast
    configure_matmul(copro, fp32_dest=True)
    load_src_tile(copro, SRCA, np.full((32, 32), 0x3F80, np.uint16))
    load_src_tile(copro, SRCB, np.full((32, 32), 0x3F80, np.uint16))
    set_addr_mod(copro, MATH_THREAD, 3)
    cycles = []
    for word in words:
        run_words(tile, MATH_THREAD, [word], cycle=0)
        # Numbered from 1, the first cycle a word pushed at 0 can issue (FRONTEND.push_to_issue).
        cycles.append(tile.backend.pipes[MATH_THREAD].last_cycle - FRONTEND.push_to_issue + 1)
    return cycles


def replayed(words: list[int]) -> list[int]:
    """Record ``words`` into the replay buffer, then play them back as one expansion (the fast path
    works on the words of one queue entry)."""
    count = len(words)
    load = ISA.encode("REPLAY", start_idx=0, len=count, execute_while_loading=0, load_mode=1)
    play = ISA.encode("REPLAY", start_idx=0, len=count, execute_while_loading=0, load_mode=0)
    return [load, *words, play]


def mvmul(dst: int) -> int:
    return ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=3, dst=dst)


def elw(name: str, add_dst: int, dst: int) -> int:
    return ISA.encode(name, clear_dvalid=0, dest_accum_en=add_dst, instr_mod19=0, addr_mode=3, dst=dst)


def test_reading_a_dst_block_written_four_cycles_ago_stalls():
    # Dst.md: after a write, the 8x16 block cannot be read for four cycles.
    assert issue_cycles([mvmul(0), mvmul(0)]) == [1, 6]
    assert issue_cycles([mvmul(0), mvmul(8)]) == [1, 2]  # another block: no stall
    assert issue_cycles([mvmul(0), elw("ELWADD", 1, 0)]) == [1, 6]  # AddDst reads Dst
    assert issue_cycles([mvmul(0), elw("ELWADD", 0, 0)]) == [1, 2]  # plain ELWADD only writes
    assert issue_cycles([mvmul(0), elw("ELWMUL", 0, 0)]) == [1, 6]  # ELWMUL always accumulates


def test_fast_path_stalls_exactly_like_one_at_a_time():
    words = [mvmul(0), mvmul(8), mvmul(0), mvmul(16), mvmul(8), mvmul(8)]
    slow = issue_cycles_together(words, fast=False)
    fast = issue_cycles_together(words, fast=True)
    assert slow == fast
    # Recording takes cycles 1..7 and playback starts at 8: MVMULs issue at 8, 9, 13 (block 0 written at
    # 8), 14, 15 and 20 (block 1 written at 15), counted from the first cycle a word pushed at 0 can
    # issue (FRONTEND.push_to_issue).
    assert slow[2] == 20 + FRONTEND.push_to_issue - 1


def issue_cycles_together(words: list[int], fast: bool) -> tuple[bytes, int, int]:
    tile = Tile("blackhole", engine="python")  # the Python engine's vectorised MVMUL runs
    copro = tile.coprocessor
    tile.backend.fast_paths = fast
    configure_matmul(copro, fp32_dest=True)
    rng = np.random.default_rng(3)
    load_src_tile(copro, SRCA, bits(bf16_values(rng, 2)) >> 16)
    load_src_tile(copro, SRCB, bits(bf16_values(rng, 2)) >> 16)
    set_addr_mod(copro, MATH_THREAD, 3)
    end = run_words(tile, MATH_THREAD, replayed(words))
    assert (tile.backend.fast_path_instructions > 0) == fast
    return copro.regs.dst.tobytes(), end, tile.backend.pipes[MATH_THREAD].last_cycle


# ---------------------------------------------------------------------------- fast path = slow path
FORMATS = st.sampled_from(
    [
        {"SrcA": 5, "Fp32": 1, "INT8": 0},  # BF16, FP32 Dst
        {"SrcA": 5, "Fp32": 0, "INT8": 0},  # BF16, BF16 Dst
        {"SrcA": 4, "Fp32": 1, "INT8": 0},  # TF32
        {"SrcA": 1, "Fp32": 0, "INT8": 0},  # FP16, FP16 Dst
        {"SrcA": 1, "Fp32": 1, "INT8": 0},
        {"SrcA": 14, "Fp32": 0, "INT8": 1},  # INT8 -> INT32 Dst
    ]
)


@st.composite
def runs(draw):
    mods = []
    for _ in range(4):
        mods.append(
            {
                "SrcAIncr": draw(st.sampled_from([0, 8, 16, 32, 48])),  # 8: windows past row 63
                "SrcACR": draw(st.integers(0, 1)),
                "SrcBIncr": draw(st.sampled_from([0, 8, 16, 32, 48])),
                "SrcBCR": draw(st.integers(0, 1)),
                "DestIncr": draw(st.sampled_from([0, 8, 16, 24])),
                "DestCR": draw(st.integers(0, 1)),
                "FidelityIncr": draw(st.integers(0, 1)),
                "SrcAClear": draw(st.sampled_from([0, 0, 0, 1])),
                "SrcBClear": draw(st.sampled_from([0, 0, 0, 1])),
                "DestClear": draw(st.sampled_from([0, 0, 0, 1])),
            }
        )
    words = draw(
        st.lists(
            st.builds(
                lambda slot, dst, flip: ISA.encode(
                    "MVMUL", clear_dvalid=flip, instr_mod19=0, addr_mode=slot, dst=dst
                ),
                st.integers(0, 3),
                st.sampled_from([0, 0, 8, 16, 40, 1000]),
                st.sampled_from([0] * 12 + [1, 2, 3]),
            ),
            min_size=2,
            max_size=40,
        )
    )
    return {
        "mods": mods,
        "words": words,
        "formats": draw(FORMATS),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "spread": draw(st.sampled_from([1, 8, 60])),  # 60: tiny products, the FTZ path
        "fidelity_base": draw(st.integers(0, 3)),
        "remap": draw(st.integers(0, 1)),
        "offset": draw(st.sampled_from([0, 0, 64, 200])),
    }


def run_both(case: dict, fast: bool):
    tile = Tile("blackhole", engine="python")  # the Python engine's vectorised MVMUL runs
    copro = tile.coprocessor
    tile.backend.fast_paths = fast
    config, state = copro.config, 0
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", state, case["formats"]["SrcA"])
    config.write_field("ALU_ACC_CTRL_Fp32_enabled", state, case["formats"]["Fp32"])
    config.write_field("ALU_ACC_CTRL_INT8_math_enabled", state, case["formats"]["INT8"])
    config.write_field("DEST_ACCESS_CFG_remap_addrs", state, case["remap"])
    config.write_thread_field("FIDELITY_BASE_Phase", MATH_THREAD, case["fidelity_base"])
    config.write_thread_field("DEST_TARGET_REG_CFG_MATH_Offset", MATH_THREAD, case["offset"])
    for slot, fields in enumerate(case["mods"]):
        set_addr_mod(copro, MATH_THREAD, slot, **fields)
    rng = np.random.default_rng(case["seed"])
    regs = copro.regs
    for src in (regs.srca, regs.srcb):
        x = rng.standard_normal(src.shape) * np.exp2(rng.uniform(-case["spread"], case["spread"], src.shape))
        raw = (bits(x.astype(F32)) >> 13) & 0x3FFFF
        src[:] = ((raw & 0x3FF) << 8) | (raw >> 10 & 0xFF) | ((rng.random(src.shape) < 0.5) << 18)
    regs.src_client[:] = 0  # every bank handed to the matrix unit
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.9
    try:
        end = run_words(tile, MATH_THREAD, replayed(case["words"]))
    except SimError as exc:  # the same error, at the same instruction, with the same state before it
        end = f"{type(exc).__name__} at cycle {exc.cycle}: {exc.message}"
    pipe = tile.backend.pipes[MATH_THREAD]
    adc = copro.adc
    rwcs = [int(getattr(adc, n)[MATH_THREAD]) for n in ("srca", "srcb", "dst", "fidelity_phase", "srca_cr")]
    return (
        regs.copy(),
        end,
        pipe.last_cycle,
        pipe.issued,
        pipe.blocked,
        rwcs,
        tile.backend.fast_path_instructions,
    )


@SETTINGS
@given(runs())
def test_fast_path_equals_one_at_a_time(case):
    slow = run_both(case, fast=False)
    fast = run_both(case, fast=True)
    assert fast[0].equals(slow[0])
    assert fast[1:6] == slow[1:6]
    assert slow[6] == 0
    event("fast path used" if fast[6] else "fast path declined")


def test_fast_path_equals_one_at_a_time_on_a_long_mixed_run():
    # A fixed case the fast path takes in several pieces: ELWADDs and broadcasting MVMULs end runs and
    # go one at a time.
    rng = np.random.default_rng(9)
    words = []
    for m, d, kind in zip(
        rng.integers(0, 4, 60), rng.choice([0, 8, 16, 1000], 60), rng.random(60), strict=True
    ):
        if kind < 0.1:
            words.append(
                ISA.encode(
                    "ELWADD", clear_dvalid=0, dest_accum_en=1, instr_mod19=0, addr_mode=int(m), dst=int(d)
                )
            )
        else:
            words.append(
                ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=int(kind < 0.2), addr_mode=int(m), dst=int(d))
            )
    case = {
        "mods": [
            {"SrcBIncr": 8, "DestIncr": 8},
            {"SrcAIncr": 16, "SrcBCR": 1, "DestIncr": 8, "FidelityIncr": 1},
            {"SrcAClear": 1, "SrcBClear": 1, "DestClear": 1},
            {"SrcAIncr": 32, "DestIncr": 16},
        ],
        "words": words,
        "formats": {"SrcA": 5, "Fp32": 0, "INT8": 0},
        "seed": 4,
        "spread": 8,
        "fidelity_base": 1,
        "remap": 1,
        "offset": 64,
    }
    slow, fast = run_both(case, fast=False), run_both(case, fast=True)
    assert fast[0].equals(slow[0])
    assert fast[1:6] == slow[1:6]
    assert fast[3] == len(words)
    assert 0 < fast[6] < fast[3] - 6


def move(name: str, dst: int = 0) -> int:
    if name == "MOVB2A":
        return ISA.encode("MOVB2A", srca=0, addr_mode=3, instr_mod=0, srcb=0)
    if name == "MOVB2D":
        return ISA.encode("MOVB2D", dest_32b_lo=0, src=0, addr_mode=3, movb2d_instr_mod=0, dst=dst)
    return ISA.encode(name, dest_32b_lo=0, src=0, addr_mode=3, instr_mod=0, dst=dst)


def test_data_moves_hold_the_matrix_unit_as_documented():
    # MOVA2D / MOVB2D: the listed Dst readers wait three cycles wherever they read; a reader of the
    # written block waits for Dst.md's four.
    assert issue_cycles([move("MOVA2D"), mvmul(16)]) == [1, 5]
    assert issue_cycles([move("MOVB2D"), mvmul(16)]) == [1, 5]
    assert issue_cycles([move("MOVA2D"), mvmul(0)]) == [1, 6]
    assert issue_cycles([move("MOVA2D"), elw("ELWADD", 1, 16)]) == [1, 2]  # not on the list
    assert issue_cycles([move("MOVA2D"), move("MOVD2A", 0)]) == [1, 6]
    # MOVD2A / MOVB2A: next cycle only MOVD2A / MOVB2A.
    assert issue_cycles([move("MOVD2A"), elw("ELWADD", 0, 0)]) == [1, 3]
    assert issue_cycles([move("MOVB2A"), move("MOVD2A")]) == [1, 2]
    # MOVD2B: three cycles only MOVD2B.
    assert issue_cycles([move("MOVD2B"), move("MOVD2B")]) == [1, 2]
    assert issue_cycles([move("MOVD2B"), mvmul(0)]) == [1, 5]


def test_raw_accessors_round_trip_tiles():
    rng = np.random.default_rng(2)
    x = bf16_values(rng, 3)
    tile = Tile("blackhole")
    copro = tile.coprocessor
    load_src_tile(copro, SRCB, bits(x) >> 16)
    assert np.array_equal(bits(src_tile_fp32(copro, SRCB)), bits(flush(x)))
    values = rng.integers(-(2**31) + 1, 2**31, (32, 32))
    magnitude = np.abs(values).astype(np.uint32) | (np.where(values < 0, 1, 0).astype(np.uint32) << 31)
    # Dst32 keeps Integer "32" under the BF16 shuffle of its high half (formats.py).
    high = magnitude >> 16
    shuffled = (high & 0x8000) | ((high & 0x7F) << 8) | ((high & 0x7F80) >> 7)
    copro.regs.write_tile32(0, (shuffled << 16) | (magnitude & 0xFFFF))
    assert np.array_equal(dst_tile_int32(copro), values)
    with pytest.raises(ValueError, match="unknown ADDR_MOD fields"):
        set_addr_mod(copro, MATH_THREAD, 0, SrcAIncrement=1)


# ---------------------------------------------------------------------------- driven by a TRISC program
def test_trisc1_program_drives_the_tile_matmul_like_raw_words(tmp_path):
    """TRISC1 sets the ADDR_MOD slots with SETC16, records the replay buffer, writes its MOP
    configuration registers and pushes the MOP: the same Dst, and the fast path is taken while the core
    runs (nothing else can push)."""
    from tensixsim.sdk.build import build
    from tensixsim.tensix.config.unit import ConfigState

    phases = 4
    rng = np.random.default_rng(21)
    x, y = bf16_values(rng, 3), bf16_values(rng, 3)
    expected = matmul_tile(x, y, phases, True)

    scratch = ConfigState.new(expected.arch)
    words = set()
    for slot, fields in MATMUL_ADDR_MODS.items():
        for name, value in fields.items():
            kind = "AB" if name.startswith("Src") else "DST"
            field = f"ADDR_MOD_{kind}_SEC{slot}_{name}"
            scratch.write_thread_field(field, MATH_THREAD, value)
            words.add(scratch.layout.thread_fields[field][0])
    setc16 = [f"TTI_SETC16({w}, {int(scratch.thread[MATH_THREAD, w])});" for w in sorted(words)]
    mop_words = matmul_tile_words(expected.coprocessor, phases)
    mop_cfg = [int(v) for v in expected.coprocessor.frontend.mop_cfg[MATH_THREAD]]
    inline = [
        f'__asm__ volatile(".word 0x{((w << 2) | (w >> 30)) & 0xFFFFFFFF:08x}");' for w in mop_words[:-1]
    ]
    source = "\n".join(
        [
            '#include "tensixsim.h"',
            '#include "tensix_ops_blackhole.h"',
            "int main(void) {",
            "    volatile uint32_t *mop = (volatile uint32_t *)0xFFB80000;",
            *setc16,
            *inline,
            *(f"    mop[{i}] = 0x{v:08x}u;" for i, v in enumerate(mop_cfg)),
            "    TTI_MOP(1, 0, 0);",
            "    return 0;",
            "}",
        ]
    )
    path = tmp_path / "matmul_trisc1.c"
    path.write_text(source)
    elf = build("trisc1", [path], tmp_path / "matmul_trisc1.elf", build_dir=tmp_path)

    tile = Tile("blackhole", engine="python")  # the Python engine's vectorised MVMUL runs
    copro = tile.coprocessor
    copro.config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, 5)
    copro.config.write_field("ALU_ACC_CTRL_Fp32_enabled", 0, 1)
    load_src_tile(copro, SRCA, bits(y) >> 16)
    load_src_tile(copro, SRCB, bits(x) >> 16)
    tile.load_elf("trisc1", elf)
    tile.run(release=["trisc1"], max_cycles=1_000_000)
    assert np.array_equal(copro.regs.dst, expected.coprocessor.regs.dst)
    assert tile.backend.fast_path_instructions == 16 * phases
    assert tile.backend.pipes[MATH_THREAD].issued == 16 * phases + len(setc16)


def test_a_run_cut_short_by_another_pipe_does_not_stop_later_runs_taking_the_fast_path():
    rng = np.random.default_rng(8)
    x, y = bf16_values(rng, 2), bf16_values(rng, 2)
    busy = Tile("blackhole", engine="python")  # the Python engine's vectorised MVMUL runs
    copro = busy.coprocessor
    configure_matmul(copro, fp32_dest=True)
    load_src_tile(copro, SRCA, bits(y) >> 16)
    load_src_tile(copro, SRCB, bits(x) >> 16)
    words = matmul_tile_words(copro, 1)
    # The MVMULs issue from cycle 17; pipe 0 can issue at 18, so the first goes alone and the other
    # fifteen, planned after it, together. A run cut that short must not be remembered as "no run".
    busy.queues[0].entries.append(PushedInstruction(ISA.encode("NOP"), "trisc0", 0, 17, False))
    run_words(busy, MATH_THREAD, words)
    assert busy.backend.fast_path_instructions == 15
    quiet = matmul_tile(x, y, 1, True, engine="python")  # the same run, state and configuration, nothing else
    assert quiet.backend.fast_path_instructions == 16
    assert np.array_equal(busy.coprocessor.regs.dst, quiet.coprocessor.regs.dst)
