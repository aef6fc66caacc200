"""SFPSWAP, SFPTRANSP and SFPSHFT2: property tests against tests/sfpu_lanes_reference.py, and
hand-worked vectors.

The property tests reuse tests/test_sfpu.py's random vector-unit state (LRegs with special values,
lane flags, LaneConfig with ENABLE_DEST_INDEX / EXCHANGE_SRCB_SRCC / ROW_MASK, the backdoor bit) and its
``run_case`` comparison of outcome, issue cycles and the whole vector-unit state.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matrix_harness import ISA, SEEDS, SETTINGS, THREADS, words
from sfpu_lanes_reference import LanesRef, SignMagIsSmaller
from test_sfpu import ANY_VD, SPECIAL, f32, fresh, mostly, profiles_with, run, run_case

from tensixsim import Tile
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.raw import run_words
from tensixsim.tensix import native
from tensixsim.tensix.semantics import Retire, implemented
from tensixsim.tensix.sfpu.lanes import ENABLE_DEST_INDEX, EXCHANGE_SRCB_SRCC
from tensixsim.tensix.sfpu.unit import DISABLE_BACKDOOR_LOAD
from tensixsim.timing import SFPU

__all__ = ["fresh"]  # the fixture, imported for the hand-worked tests

LANES = 32
# Sign-magnitude / FP32 orderings: signed zeros, NaNs of both signs, infinities, extremes, neighbours.
ORDER_SPECIAL = [*SPECIAL, 0xFFC00000, 0x7F800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000002, 0x80000002]
ORDER_SPECIAL += [0x40000000, 0xC0000000, 0x3FFFFFFF, 0xBFFFFFFF]

PROPERTY = settings(SETTINGS, max_examples=250)


SWAP_WORDS = words(
    "SFPSWAP",
    {
        "imm12_math": mostly(st.just(0), 12),
        "lreg_src_c": st.integers(0, 15),
        "lreg_dest": ANY_VD,
        "instr_mod1": st.integers(0, 15),
    },
)


@PROPERTY
@given(word=SWAP_WORDS, seed=SEEDS, profile=profiles_with(ORDER_SPECIAL), thread=THREADS)
def test_sfpswap_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFPSWAP", word, seed, profile, thread, ref_type=LanesRef, cycles=SFPU.swap)


TRANSP_WORDS = words(
    "SFPTRANSP",
    {
        "imm12_math": mostly(st.just(0), 12),
        "lreg_c": mostly(st.just(0), 4),
        "lreg_dest": st.integers(0, 15),
        "instr_mod1": mostly(st.just(0), 4),
    },
)


@PROPERTY
@given(word=TRANSP_WORDS, seed=SEEDS, profile=profiles_with(ORDER_SPECIAL), thread=THREADS)
def test_sfptransp_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFPTRANSP", word, seed, profile, thread, ref_type=LanesRef)


@st.composite
def shft2_words(draw) -> int:
    mod1 = draw(mostly(st.integers(0, 6), 4, 12))
    if mod1 == 6:
        fields = {"imm12_math": st.integers(0, 4095), "lreg_src_c": mostly(st.just(0), 4)}
    else:
        fields = {"imm12_math": mostly(st.integers(0, 15), 12), "lreg_src_c": st.integers(0, 15)}
    return draw(words("SFPSHFT2", fields | {"lreg_dest": ANY_VD, "instr_mod1": st.just(mod1)}))


@PROPERTY
@given(word=shft2_words(), seed=SEEDS, profile=profiles_with(ORDER_SPECIAL), thread=THREADS)
def test_sfpshft2_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    mod1 = word & 15
    cycles = SFPU.lane_shuffle if mod1 in (2, 3, 4) else SFPU.issue
    run_case("SFPSHFT2", word, seed, profile, thread, ref_type=LanesRef, cycles=cycles)


# ------------------------------------------------------------------------------ the reference's order


def test_sign_magnitude_order_is_the_documented_total_order() -> None:
    # SFPSWAP.md: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN
    ascending = [0xFFC00000, 0xFF800000, f32(-2.0), f32(-1.0), 0x80000001, 0x80000000, 0, 1, f32(1.0)]
    ascending += [0x7F7FFFFF, 0x7F800000, 0x7FC00000]
    for smaller, larger in itertools.pairwise(ascending):
        assert SignMagIsSmaller(smaller, larger) and not SignMagIsSmaller(larger, smaller)
    assert not SignMagIsSmaller(5, 5)


# ------------------------------------------------------------------------------ hand-worked vectors


def simple(name: str, vc: int = 0, vd: int = 0, mod1: int = 0, imm: int = 0, vc_slot: str = "lreg_src_c"):
    return run(name, imm12_math=imm, **{vc_slot: vc}, lreg_dest=vd, instr_mod1=mod1)


def test_sfpswap_swaps_and_sorts(fresh) -> None:
    fresh.lreg[0] = f32(1.0)
    fresh.lreg[1] = np.where(np.arange(LANES) < 16, f32(-2.0), f32(3.0))
    assert simple("SFPSWAP", vc=1, vd=0, mod1=0) == Retire(2)
    assert set(fresh.lreg[0].tolist()) == {f32(-2.0), f32(3.0)} and set(fresh.lreg[1].tolist()) == {f32(1.0)}
    simple("SFPSWAP", vc=1, vd=0, mod1=1)  # VD = min, VC = max in every lane
    assert fresh.lreg[0].tolist() == [f32(-2.0)] * 16 + [f32(1.0)] * 16
    assert fresh.lreg[1].tolist() == [f32(1.0)] * 16 + [f32(3.0)] * 16
    simple("SFPSWAP", vc=1, vd=0, mod1=2)  # MIN01_MAX23: lanes 16.. get VD = max
    assert fresh.lreg[0].tolist() == [f32(-2.0)] * 16 + [f32(3.0)] * 16
    fresh.lreg[2], fresh.lreg[3] = 0, 0x80000000  # +0 and -0: -0 is the smaller
    simple("SFPSWAP", vc=3, vd=2, mod1=1)
    assert set(fresh.lreg[2].tolist()) == {0x80000000} and set(fresh.lreg[3].tolist()) == {0}


def test_sfpswap_argmin_argmax(fresh) -> None:
    fresh.lane_config[:] = DISABLE_BACKDOOR_LOAD | ENABLE_DEST_INDEX
    fresh.lreg[0], fresh.lreg[1] = f32(5.0), f32(2.0)
    fresh.lreg[4], fresh.lreg[5] = 40, 50  # the indices travel with the values
    simple("SFPSWAP", vc=1, vd=0, mod1=1)
    assert set(fresh.lreg[0].tolist()) == {f32(2.0)} and set(fresh.lreg[1].tolist()) == {f32(5.0)}
    assert set(fresh.lreg[4].tolist()) == {50} and set(fresh.lreg[5].tolist()) == {40}
    fresh.lane_config[:] |= EXCHANGE_SRCB_SRCC  # the comparison inverted: VD gets the maximum
    simple("SFPSWAP", vc=1, vd=0, mod1=1)
    assert set(fresh.lreg[0].tolist()) == {f32(5.0)} and set(fresh.lreg[4].tolist()) == {40}
    # Ties: VD gets the minimum only when VC is strictly smaller, so no swap; VD gets the maximum
    # (Mod1 9) when VC is not smaller, so equal values swap, indices too.
    fresh.lane_config[:] = DISABLE_BACKDOOR_LOAD | ENABLE_DEST_INDEX
    fresh.lreg[2], fresh.lreg[3], fresh.lreg[6], fresh.lreg[7] = f32(1.0), f32(1.0), 60, 70
    simple("SFPSWAP", vc=3, vd=2, mod1=1)
    assert set(fresh.lreg[6].tolist()) == {60} and set(fresh.lreg[7].tolist()) == {70}
    simple("SFPSWAP", vc=3, vd=2, mod1=9)
    assert set(fresh.lreg[6].tolist()) == {70} and set(fresh.lreg[7].tolist()) == {60}


def test_sfptransp_transposes_each_column(fresh) -> None:
    for reg in range(8):
        fresh.lreg[reg] = reg * 100 + np.arange(LANES)
    assert simple("SFPTRANSP", vc_slot="lreg_c") == Retire(1)
    for base in (0, 4):
        for i in range(4):
            for j in range(4):
                for col in range(8):
                    assert fresh.lreg[base + i][j * 8 + col] == (base + j) * 100 + i * 8 + col


def test_sfpshft2_lane_shuffles(fresh) -> None:
    for reg in range(4):
        fresh.lreg[reg] = reg * 100 + np.arange(LANES)
    assert simple("SFPSHFT2", vc=15, vd=5, mod1=3) == Retire(2)  # rotate right within each row of 8
    assert fresh.lreg[5][:9].tolist() == [14, 0, 2, 4, 6, 8, 10, 12, 30]
    simple("SFPSHFT2", vc=15, vd=6, mod1=4)  # shift right: lane 0 of each row gets zero
    assert fresh.lreg[6][:9].tolist() == [0, 0, 2, 4, 6, 8, 10, 12, 0]
    assert simple("SFPSHFT2", vd=0, mod1=1) == Retire(1)  # chained copy: L3 gets L0 from 8 lanes up
    assert fresh.lreg[0].tolist() == (100 + np.arange(LANES)).tolist()
    assert fresh.lreg[3].tolist() == list(range(8, 32)) + [0] * 8
    simple("SFPSHFT2", vd=0, mod1=0)
    assert fresh.lreg[0].tolist() == (200 + np.arange(LANES)).tolist() and not fresh.lreg[3].any()


def test_sfpshft2_bit_shifts(fresh) -> None:
    fresh.lreg[1] = 0x80000001
    fresh.lreg[2] = np.where(np.arange(LANES) & 1, 4, (-4) & 0xFFFFFFFF)
    simple("SFPSHFT2", vc=2, vd=3, mod1=5, imm=1)  # LReg3 = LReg1 << 4 or >> 4 (logical)
    assert fresh.lreg[3][:2].tolist() == [0x08000000, 0x00000010]
    simple("SFPSHFT2", vc=0, vd=4, mod1=6, imm=(-31) & 0xFFF)  # VB = -31 & 15 = 1, >> 31
    assert set(fresh.lreg[4].tolist()) == {1}
    simple("SFPSHFT2", vc=0, vd=4, mod1=6, imm=0x21)  # VB = 1, << 1 (bit 5 of Imm12 is not a shift bit)
    assert set(fresh.lreg[4].tolist()) == {2}


def test_undocumented_operands(fresh) -> None:
    with pytest.raises(UndefinedBehavior):
        simple("SFPSHFT2", vd=0, mod1=7)
    with pytest.raises(UndefinedBehavior):
        simple("SFPSHFT2", vd=0, mod1=5, imm=16)  # VB is four bits
    with pytest.raises(UndefinedBehavior):
        simple("SFPSWAP", vc=1, vd=0, imm=1)
    with pytest.raises(UndefinedBehavior):
        simple("SFPTRANSP", vc=1, vc_slot="lreg_c")
    fresh.lreg[1] = 7
    fresh.lane_config[:16] = DISABLE_BACKDOOR_LOAD
    simple("SFPSWAP", vc=1, vd=13)  # lanes 16.. load the word as InstructionTemplate[1] instead
    assert fresh.lreg[1].tolist() == [0] * 16 + [7] * 16 and not fresh.lreg[13].any()
    word = ISA.encode("SFPSWAP", imm12_math=0, lreg_src_c=1, lreg_dest=13, instr_mod1=0)
    assert fresh.macro_template[:, 1].tolist() == [0] * 16 + [word] * 16
    fresh.lreg[0], fresh.lreg[1] = 0, 5
    simple("SFPSHFT2", vd=12, mod1=0)  # COPY4: the backdoor lanes (16..) neither copy nor shift
    assert fresh.lreg[0].tolist() == [5] * 16 + [0] * 16
    word = ISA.encode("SFPSHFT2", imm12_math=0, lreg_src_c=0, lreg_dest=12, instr_mod1=0)
    assert fresh.macro_template[:, 0].tolist() == [0] * 16 + [word] * 16
    with pytest.raises(Unimplemented):  # the lanes disagree on a test the page makes once
        simple("SFPTRANSP", vd=12, vc_slot="lreg_c")


def _last_issue(names_and_fields: list[tuple[str, dict]]) -> int:
    tile = Tile("blackhole")
    isa = tile.coprocessor.isa
    run_words(tile, 0, [isa.encode(name, **fields) for name, fields in names_and_fields])
    assert tile.backend.pipes[0].issued == len(names_and_fields)
    return tile.backend.pipes[0].last_cycle


def test_swap_and_lane_shifts_occupy_the_unit_two_cycles_but_an_sfpnop_goes_on_the_second() -> None:
    nops = _last_issue([("SFPNOP", {})] * 3)  # issued at cycles n, n + 1, n + 2
    swap = ("SFPSWAP", {"imm12_math": 0, "lreg_src_c": 1, "lreg_dest": 0, "instr_mod1": 1})
    shuffle = ("SFPSHFT2", {"imm12_math": 0, "lreg_src_c": 1, "lreg_dest": 2, "instr_mod1": 3})
    # The shuffle waits for the swap's second cycle to pass (n + 2); the SFPNOP issues on the
    # shuffle's second cycle (n + 3), where the unit accepts SFPNOP only.
    assert _last_issue([swap, shuffle, ("SFPNOP", {})]) == nops + 1
    assert _last_issue([swap, ("SFPNOP", {}), ("SFPNOP", {})]) == nops
    assert _last_issue([shuffle, ("SFPNOP", {}), shuffle, ("SFPNOP", {})]) == nops + 1
    # Anything else waits: SFPMOV after the swap issues at n + 2.
    mov = ("SFPMOV", {"imm12_math": 0, "lreg_c": 3, "lreg_dest": 4, "instr_mod1": 0})
    assert _last_issue([swap, mov, ("SFPNOP", {})]) == nops + 1
    fast = [
        ("SFPSHFT2", {"imm12_math": 0, "lreg_src_c": 1, "lreg_dest": 2, "instr_mod1": 5}),
        ("SFPTRANSP", {"imm12_math": 0, "lreg_c": 0, "lreg_dest": 0, "instr_mod1": 0}),
        ("SFPNOP", {}),
    ]
    assert _last_issue(fast) == nops


@pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")
def test_the_native_engine_issues_an_sfpnop_on_a_swaps_second_cycle_as_the_python_one_does() -> None:
    # The reduction kernels' words (swaps, shuffles and SFPNOPs after them) on both engines: every
    # instruction retires at the same cycle.
    from tensixsim.sdk.calibration.sfpu_kernels import KERNELS

    words = [w for name, _, body, _ in KERNELS if name in ("sum32", "max8x4", "rowmax") for w in body]
    retired = {}
    for engine in ("python", "native"):
        tile = Tile("blackhole", engine=engine)
        assert tile.backend.engine == engine
        tile.backend.retired = []
        run_words(tile, 0, words)
        retired[engine] = tile.backend.retired
    assert len(retired["python"]) == len(words)
    assert retired["native"] == retired["python"]


def test_registered() -> None:
    assert {"SFPSWAP", "SFPTRANSP", "SFPSHFT2"} <= implemented("blackhole")
