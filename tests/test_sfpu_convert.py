"""SFPCAST, SFP_STOCH_RND and the vector unit's PRNG: property tests against
tests/sfpu_lanes_reference.py, and hand-worked vectors.

The property tests reuse tests/test_sfpu.py's random vector-unit state (with a random PRNG state) and
its ``run_case``, which compares outcome, issue cycles and the whole state, PRNG included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matrix_harness import COPRO, SEEDS, SETTINGS, THREADS, words
from sfpu_lanes_reference import LanesRef
from test_sfpu import ANY_VD, SPECIAL, f32, fresh, mostly, profiles_with, run, run_case

from tensixsim import Tile
from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix.config.unit import store_config
from tensixsim.tensix.semantics import Retire, implemented
from tensixsim.tensix.sfpu.convert import seed_prng

__all__ = ["fresh"]  # the fixture, imported for the hand-worked tests

LANES = 32
M32 = 0xFFFFFFFF
# Values whose conversion is on an edge: signed zeros, denormals, infinities, NaNs, integer extremes,
# rounding ties and their neighbours for each mode, clamp boundaries.
CONVERT_SPECIAL = [*SPECIAL, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0xFFC00000, 0x7F800001]
CONVERT_SPECIAL += [0x3F801000, 0x3F801FFF, 0x3F800FFF, 0x3F808000, 0x3F80FFFF, 0x3F807FFF, 0xBF808000]
CONVERT_SPECIAL += [0x3F000000, 0xBF000000, 0x3EFFFFFF, 0x3F7FFFFE, 0x3F7FFFFF, 0x3FFFFFFF, 0x3FC00000]
CONVERT_SPECIAL += [0x40200000, 0xC0200000, 0x42FE0000, 0x42FF0000, 0x43000000, 0x437F0000, 0x437F8000]
CONVERT_SPECIAL += [0x46FFFE00, 0x46FFFF00, 0x477FFF00, 0x477FFF80, 0x47800000, 0xC7800000, 0x4F000000]
CONVERT_SPECIAL += [0x01000001, 0x01000003, 0x00FFFFFF, 0x02000002, 0x81000001, 0x80000080, 0x000000FF]
CONVERT_SPECIAL += [0x00000100, 0x0000007F, 0x8000007F, 0x00000080, 0x7FFFFF80, 0x7FFFFFC0, 0x00007FFF]
CONVERT_SPECIAL += [0x3FFFFFFE, 0xBF400000, 0x3E99999A]

PROPERTY = settings(SETTINGS, max_examples=250)


CAST_WORDS = words(
    "SFPCAST",
    {"lreg_src_c": mostly(st.integers(0, 15), 16), "lreg_dest": ANY_VD, "instr_mod1": st.integers(0, 15)},
)


@PROPERTY
@given(word=CAST_WORDS, seed=SEEDS, profile=profiles_with(CONVERT_SPECIAL), thread=THREADS)
def test_sfpcast_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFPCAST", word, seed, profile, thread, ref_type=LanesRef)


@st.composite
def stoch_rnd_words(draw) -> int:
    mod1 = draw(st.integers(0, 7))
    int_int = mod1 in (4, 5)
    use_imm5 = draw(st.booleans() if int_int else mostly(st.just(False), 1))
    imm5 = st.integers(0, 31) if int_int else mostly(st.just(0), 5)
    fields = {
        "rnd_mode": mostly(st.integers(0, 3), 3),
        "imm8_math": imm5,
        "lreg_src_b": st.integers(0, 15),
        "lreg_src_c": st.integers(0, 15),
        "lreg_dest": ANY_VD,
        "instr_mod1": st.just(mod1 | (8 if use_imm5 else 0)),
    }
    return draw(words("SFP_STOCH_RND", fields))


@PROPERTY
@given(word=stoch_rnd_words(), seed=SEEDS, profile=profiles_with(CONVERT_SPECIAL), thread=THREADS)
def test_sfp_stoch_rnd_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFP_STOCH_RND", word, seed, profile, thread, ref_type=LanesRef)


# ------------------------------------------------------------------------------ the PRNG


def advance(state: int) -> tuple[int, int]:
    """VectorUnit.md's AdvancePRNG on one lane: (result, new state)."""
    taps = bin(state & 0x80200003).count("1")
    return state, ((~taps << 31) | (state >> 1)) & M32


def test_prng_steps_by_hand(fresh) -> None:
    # State 0: parity 0, so bit 31 comes in set; 0x80000000 taps bit 31 (parity 1): bit 31 stays clear;
    # 3 taps bits 0 and 1 (parity 0): bit 31 set.
    assert advance(0) == (0, 0x80000000)
    assert advance(0x80000000) == (0x80000000, 0x40000000)
    assert advance(3) == (3, 0x80000001)
    fresh.prng[:] = 3
    fresh.use_lane_flags[:] = True
    fresh.lane_flags[:] = np.arange(LANES) < 16  # lanes 16.. disabled: their PRNG does not move
    assert run("SFPMOV", imm12_math=0, lreg_c=9, lreg_dest=0, instr_mod1=8) == Retire(1)
    assert fresh.lreg[0].tolist() == [3] * 16 + [0] * 16
    assert fresh.prng.tolist() == [0x80000001] * 16 + [3] * 16
    run("SFPMOV", imm12_math=0, lreg_c=9, lreg_dest=9, instr_mod1=8)  # VD 9: not written, still advances
    assert fresh.prng.tolist() == [advance(0x80000001)[1]] * 16 + [3] * 16


def test_prng_starts_at_zero_and_sfpmov_reads_its_sequence(fresh) -> None:
    expected, state = [], 0
    for _ in range(5):
        value, state = advance(state)
        expected.append(value)
    got = []
    for _ in range(5):
        run("SFPMOV", imm12_math=0, lreg_c=9, lreg_dest=1, instr_mod1=8)
        got.append(int(fresh.lreg[1][7]))
    assert got == expected == [0, 0x80000000, 0x40000000, 0xA0000000, 0x50000000]


def reference_seed(seed: int) -> list[int]:
    """ttsim's seeding rule: 32 steps, then two steps per lane, lane 31 first."""
    for _ in range(32):
        seed = advance(seed)[1]
    state = [0] * LANES
    for i in range(LANES):
        seed = advance(advance(seed)[1])[1]
        state[31 - i] = seed
    return state


@pytest.mark.parametrize("seed", [0, 1, 0xDEADBEEF, 0xFFFFFFFF])
def test_seed_rule(seed: int) -> None:
    s = COPRO.sfpu.copy()
    seed_prng(s, seed)
    assert s.prng.tolist() == reference_seed(seed)


def test_a_seed_write_reseeds_the_prng() -> None:
    tile = Tile("blackhole")
    copro = tile.coprocessor
    index = copro.config.layout.config_word("PRNG_SEED_Seed_Val")
    store_config(copro, 0, index, 0x12345678)
    assert copro.sfpu.prng.tolist() == reference_seed(0x12345678)


# ------------------------------------------------------------------------------ hand-worked vectors


def cast(mod1: int, vc: int = 0, vd: int = 1):
    return run("SFPCAST", lreg_src_c=vc, lreg_dest=vd, instr_mod1=mod1)


def stoch(mod1: int, rnd: int, vc: int = 0, vd: int = 1, vb: int = 0, imm5: int = 0):
    return run(
        "SFP_STOCH_RND",
        rnd_mode=rnd,
        imm8_math=imm5,
        lreg_src_b=vb,
        lreg_src_c=vc,
        lreg_dest=vd,
        instr_mod1=mod1,
    )


def lanes(values: list[int]) -> np.ndarray:
    return np.resize(np.array(values, np.uint32), LANES)


def test_sfpcast_by_hand(fresh) -> None:
    ints = [5, 0x80000005, 0x01000001, 0x01000003, 0x80000000, 0, 0x7FFFFFFF, 0x00FFFFFF]
    fresh.lreg[0] = lanes(ints)
    assert cast(0) == Retire(1)  # sign-magnitude to FP32, ties to even
    floats = [f32(5.0), f32(-5.0), f32(2.0**24), f32(2.0**24 + 4), 0x80000000, 0, f32(2.0**31)]
    assert fresh.lreg[1][:8].tolist() == [*floats, f32(2.0**24 - 1)]
    cast(3)  # sign-magnitude <-> two's complement
    converted = [5, 0xFFFFFFFB, 0x01000001, 0x01000003, 0x80000000, 0, 0x7FFFFFFF, 0xFFFFFF]
    assert fresh.lreg[1][:8].tolist() == converted
    fresh.lreg[0] = lanes([0xFFFFFFFB, 0x80000000, 7])
    cast(2)  # two's complement absolute value; -2**31 stays
    assert fresh.lreg[1][:3].tolist() == [5, 0x80000000, 7]


def test_sfpcast_stochastic_uses_seven_prng_bits(fresh) -> None:
    fresh.lreg[0] = 0x01000001  # Norm & 0xFE = 0x80 after normalising 2**24 + 1
    fresh.prng[:16] = 0x7F << 9  # (PRNG >> 9) & 0xFE = 0x7E < 0x80: round up
    fresh.prng[16:] = 0xFF << 9  # 0xFE: stays
    cast(1)
    assert fresh.lreg[1].tolist() == [f32(2.0**24) + 1] * 16 + [f32(2.0**24)] * 16
    assert fresh.prng[0] == advance(0x7F << 9)[1]


def test_sfp_stoch_rnd_floats_by_hand(fresh) -> None:
    fresh.lreg[0] = lanes([0x3F808000, 0x3F807FFF, 0x00400000, 0x80000000, 0xFFC00001, 0x7F7FFFFF])
    assert stoch(1, 0) == Retire(1)  # FP16B, nearest: ties away from zero
    assert fresh.lreg[1][:6].tolist() == [0x3F810000, 0x3F800000, 0, 0, 0xFF800000, 0x7F800000]
    fresh.lreg[0] = lanes([0x3F801000, 0x3F800FFF, 0x3F801FFF])
    stoch(0, 2)  # FP16A, toward zero: the page's bug rounds 0x1FFF discarded away from zero
    assert fresh.lreg[1][:3].tolist() == [0x3F800000, 0x3F800000, 0x3F802000]


def test_sfp_stoch_rnd_to_integers_by_hand(fresh) -> None:
    fresh.lreg[0] = lanes([f32(2.5), f32(-2.5), f32(300.0), f32(0.4), f32(-0.5), 0x7FC00000, f32(-1e6)])
    stoch(3, 0)  # FP32 to INT8, nearest
    assert fresh.lreg[1][:7].tolist() == [3, 0x80000003, 127, 0, 0x80000001, 127, 0x8000007F]
    stoch(2, 0)  # FP32 to UINT8: absolute value
    assert fresh.lreg[1][:7].tolist() == [3, 3, 255, 0, 1, 255, 255]
    stoch(7, 0)  # INT16
    assert fresh.lreg[1][:7].tolist() == [3, 0x80000003, 300, 0, 0x80000001, 32767, 0x80007FFF]
    # The page's three values that round to zero wrongly round away from it.
    fresh.lreg[0] = lanes([0x3F7FFFFE, 0x3F7FFFFF, 0x3FFFFFFF, f32(1.5), 0x3FFFFFFE])
    stoch(6, 2)
    assert fresh.lreg[1][:5].tolist() == [1, 1, 2, 1, 1]
    fresh.lreg[0] = lanes([f32(-0.5), f32(-0.75), f32(-1.5)])
    stoch(3, 2)  # INT8 toward zero: a zero magnitude loses its sign
    assert fresh.lreg[1][:3].tolist() == [0, 0, 0x80000001]


def test_small_inputs_never_round_stochastically(fresh) -> None:
    # SFPSTOCHRND_FloatInt.md: |x| < 0.5 always becomes zero, whatever the PRNG; from 0.5 on the PRNG
    # decides.
    fresh.lreg[0] = lanes([0x3EFFFFFF, f32(-0.3), f32(0.5)])
    fresh.prng[:] = 0  # PRNGBits 0: every discarded fraction rounds up
    stoch(3, 1)
    assert fresh.lreg[1][:3].tolist() == [0, 0, 1]


def test_sfp_stoch_rnd_integers_by_hand(fresh) -> None:
    fresh.lreg[0] = lanes([1000, 1004, 0x80000000 | 1004, 1 << 20, 0x80000003])
    fresh.lreg[2] = 3
    stoch(5, 0, vb=2)  # INT32 to INT8, shift by LReg[2] & 31 = 3, nearest
    assert fresh.lreg[1][:5].tolist() == [125, 126, 0x80000000 | 126, 127, 0]
    stoch(4 | 8, 0, imm5=3)  # INT32 to UINT8 with Imm5
    assert fresh.lreg[1][:5].tolist() == [125, 126, 126, 255, 0]


def test_stochastic_rounding_and_prng(fresh) -> None:
    fresh.lreg[0] = f32(2.5)  # FP32 to INT8: Mag bits below the point are 0x400000
    fresh.prng[:16] = 0x400000  # >= PRNG: up
    fresh.prng[16:] = 0x400001  # below: down
    stoch(3, 1)
    assert fresh.lreg[1].tolist() == [3] * 16 + [2] * 16
    assert fresh.prng.tolist() == [advance(0x400000)[1]] * 16 + [advance(0x400001)[1]] * 16
    stoch(3, 0)  # round to nearest still advances the PRNG
    assert fresh.prng[0] == advance(advance(0x400000)[1])[1]


def test_undocumented_operands(fresh) -> None:
    with pytest.raises(UndefinedBehavior):
        run("SFPCAST", lreg_src_c=16, lreg_dest=0, instr_mod1=0)
    with pytest.raises(UndefinedBehavior):
        stoch(0 | 8, 0)  # UseImm5 with a float mode
    with pytest.raises(UndefinedBehavior):
        stoch(1, 4)  # RoundingMode is two bits
    with pytest.raises(UndefinedBehavior):
        stoch(3, 0, imm5=1)
    before = fresh.copy()
    with pytest.raises(UndefinedBehavior):
        stoch(3, 1, imm5=1)
    assert fresh.equals(before)  # nothing changed, the PRNG included


def test_registered() -> None:
    assert {"SFPCAST", "SFP_STOCH_RND"} <= implemented("blackhole")
