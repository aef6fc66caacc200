"""The vector unit (SFPU): property tests against tests/sfpu_reference.py, and hand-worked vectors.

Each property test draws an instruction word, a random vector-unit state (LRegs with special values,
lane flags, flag stacks, LaneConfig, Sp) and, for SFPLOAD / SFPSTORE, random Dst contents with a
few undefined rows, a configuration and RWCs; it runs the word on the emulator and on the reference
and compares the outcome kind and, after a retire, the whole vector-unit state, Dst and the RWCs
(after anything else, that nothing changed).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matrix_harness import (
    COPRO,
    ISA,
    RWC_NAMES,
    SEEDS,
    SETTINGS,
    THREADS,
    assert_matches,
    configurations,
    execute,
    load,
    plain_config,
    random_fill,
    words,
)
from outcomes import emulator_outcome, reference_outcome
from sfpu_reference import SfpuRef

from tensixsim import Tile
from tensixsim.errors import UndefinedBehavior
from tensixsim.raw import run_words, set_addr_mod
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Retire, implemented
from tensixsim.tensix.sfpu import unit as sfpu

SPECIAL = [0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0xFF800001]
SPECIAL += [
    0x7FC00000,
    0x3F800000,
    0xBF800000,
    0x00000005,
    0xFFFFFFFB,
    0x00400000,
    0x807FFFFF,
    31,
    0xFFFFFFE1,
]


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ------------------------------------------------------------------------------ random state


def mostly(documented: st.SearchStrategy[int], width: int, odds: int = 10) -> st.SearchStrategy[int]:
    """``documented`` except about one draw in ``odds``: any value of a ``width``-bit slot."""
    return st.tuples(st.integers(0, odds - 1), documented, st.integers(0, (1 << width) - 1)).map(
        lambda t: t[2] if t[0] == 0 else t[1]
    )


@st.composite
def sfpu_profiles(draw) -> dict:
    """Knobs for the random vector-unit state drawn from a seed."""
    return {
        "use": draw(st.sampled_from(["all", "none", "random", "rows"])),
        "depth": draw(st.sampled_from([0, 1, 2, 3, 7, 8, 1, 2, "random"])),
        "backdoor_off": draw(st.sampled_from([1.0, 1.0, 1.0, 0.9])),
        "row_mask": draw(st.sampled_from([0.0, 0.0, 0.3])),
        "block": draw(st.sampled_from([0.0, 0.0, 0.2])),
        "exchange": draw(st.sampled_from([0.0, 0.3])),
        "sp": draw(st.sampled_from([0, "small", "any"])),
    }


# For the instruction families' property tests: VD 8..15 a third of the time, the backdoor load on
# some lanes, and each family's own special operand values.
ANY_VD = mostly(st.integers(0, 7), 4, 3)


def profiles_with(special: list[int]) -> st.SearchStrategy[dict]:
    """Random vector-unit state knobs with the operand specials ``special``."""

    @st.composite
    def profiles(draw) -> dict:
        backdoor_off = draw(st.sampled_from([1.0, 1.0, 0.5, 0.0]))
        return {**draw(sfpu_profiles()), "backdoor_off": backdoor_off, "special": special}

    return profiles()


def random_sfpu(rng: np.random.Generator, profile: dict) -> sfpu.SfpuState:
    s = sfpu.SfpuState.new(COPRO.arch)
    s.lreg[:8] = rng.integers(0, 1 << 32, (8, 32), dtype=np.uint64)
    special = rng.random((8, 32)) < profile.get("special_odds", 0.3)
    s.lreg[:8][special] = rng.choice(profile.get("special", SPECIAL), int(special.sum()))
    s.lreg[11:15] = rng.integers(0, 1 << 32, (4, 32), dtype=np.uint64)
    use = profile["use"]
    s.lane_flags[:] = np.repeat(rng.random(4) < 0.5, 8) if use == "rows" else rng.random(32) < 0.5
    s.use_lane_flags[:] = True if use in ("all", "rows") else False if use == "none" else rng.random(32) < 0.5
    depth = profile["depth"]
    s.stack_depth[:] = rng.integers(0, 9, 32) if depth == "random" else depth
    for lane in range(32):
        d = int(s.stack_depth[lane])
        s.flag_stack[lane, :d] = rng.random((d, 2)) < 0.5
    cols = rng.integers(0, 1 << 18, 8, dtype=np.uint64).astype(np.uint32)
    cols &= ~np.uint32(0xF0B2)  # ROW_MASK, BLOCK_*, DISABLE_BACKDOOR_LOAD, the column exchanges: below
    cols |= np.where(rng.random(8) < profile["backdoor_off"], sfpu.DISABLE_BACKDOOR_LOAD, 0).astype(np.uint32)
    cols |= np.where(rng.random(8) < profile["row_mask"], rng.integers(0, 16, 8) << 12, 0).astype(np.uint32)
    for bit in (sfpu.BLOCK_DEST_WR_FROM_SFPU, sfpu.BLOCK_SFPU_RD_FROM_DEST):
        cols |= np.where(rng.random(8) < profile["block"], bit, 0).astype(np.uint32)
    for bit in (sfpu.DEST_RD_COL_EXCHANGE, sfpu.DEST_WR_COL_EXCHANGE):
        cols |= np.where(rng.random(8) < profile["exchange"], bit, 0).astype(np.uint32)
    s.lane_config[:] = cols[np.arange(32) & 7]
    sp = profile["sp"]
    s.sp[:] = 0 if sp == 0 else rng.integers(0, 8 if sp == "small" else 1024, s.sp.shape)
    s.prng[:] = rng.integers(0, 1 << 32, 32, dtype=np.uint64)
    # LoadMacroConfig, per column as SFPCONFIG writes it
    s.macro_template[:] = rng.integers(0, 1 << 32, (8, 4), dtype=np.uint64)[np.arange(32) & 7]
    s.macro_sequence[:] = rng.integers(0, 1 << 32, (8, 4), dtype=np.uint64)[np.arange(32) & 7]
    s.macro_misc[:] = rng.integers(0, 1 << 12, 8)[np.arange(32) & 7]
    return s


def dst_fill(rng: np.random.Generator, regs: RegFiles) -> None:
    random_fill(rng, regs)
    regs.dst_row_valid[:] = rng.random(1024) < 0.985
    # Dst16b FP16 patterns ENABLE_FP16A_INF reads as infinity (exponent 31, mantissa 1023)
    special = rng.random(regs.dst.shape) < 0.05
    regs.dst[special] = rng.choice([0x7FFF, 0xFFFF], int(special.sum()))


@st.composite
def sfpu_configs(draw) -> dict:
    return {
        "SFPU_Fp32_enabled": draw(st.integers(0, 1)),
        "SrcB_override": draw(st.integers(0, 1)),
        "SrcB_val": draw(st.integers(0, 15)),
        "REG1_SrcB": draw(st.integers(0, 15)),
        "DEST_SP_BASE": draw(st.sampled_from([0, 1, 2, 3, 0x1234, 0xFFFF])),
        "SFPU_STACK_Incr": draw(st.sampled_from([0, 1, 4, 8, 1023])),
    }


EXTRA_FIELDS = {
    "ALU_ACC_CTRL_SFPU_Fp32_enabled": "SFPU_Fp32_enabled",
    "ALU_FORMAT_SPEC_REG_SrcB_override": "SrcB_override",
    "ALU_FORMAT_SPEC_REG_SrcB_val": "SrcB_val",
    "ALU_FORMAT_SPEC_REG1_SrcB": "REG1_SrcB",
    "DEST_SP_BASE_Base": "DEST_SP_BASE",
}


# ------------------------------------------------------------------------------ comparison


def assert_sfpu(ref: SfpuRef, others: np.ndarray) -> None:
    s = COPRO.sfpu
    assert s.lreg.tolist() == ref.LReg
    assert s.lane_flags.tolist() == ref.LaneFlags
    assert s.use_lane_flags.tolist() == ref.UseLaneFlagsForLaneEnable
    assert s.lane_config.tolist() == ref.LaneConfig
    assert s.stack_depth.tolist() == [len(stack) for stack in ref.FlagStack]
    for lane, stack in enumerate(ref.FlagStack):
        expected = [list(entry) for entry in stack] + [[False, False]] * (sfpu.STACK_DEPTH - len(stack))
        assert s.flag_stack[lane].tolist() == expected, lane
    assert int(s.sp[ref.thread]) == ref.Sp
    assert np.array_equal(np.delete(s.sp, ref.thread), others)
    assert s.prng.tolist() == ref.PRNGState
    assert s.macro_template.tolist() == ref.InstructionTemplate
    assert s.macro_sequence.tolist() == ref.Sequence
    assert s.macro_misc.tolist() == ref.Misc


def run_case(
    name: str,
    word: int,
    seed: int,
    profile: dict,
    thread: int,
    dst: dict | None = None,
    *,
    ref_type: type[SfpuRef] = SfpuRef,
    cycles: int = 1,
) -> str:
    """Run ``word`` on a random state; compare outcome, issue cycles and state with the reference
    (an instance of ``ref_type``)."""
    rng = np.random.default_rng(seed)
    if dst is not None:
        load(seed, dst["config"], thread, lambda *args: None, dst_fill)
        cfg, state = COPRO.config, dst["config"]["state"]
        for field, key in EXTRA_FIELDS.items():
            cfg.write_field(field, state, dst["extra"][key])
        cfg.write_thread_field("SFPU_STACK_Incr", thread, dst["extra"]["SFPU_STACK_Incr"])
    COPRO.sfpu = random_sfpu(rng, profile)
    before = COPRO.sfpu.copy()
    regs_before = COPRO.regs.copy()
    rwcs_before = {attr: getattr(COPRO.adc, attr).copy() for attr in RWC_NAMES.values()}
    if dst is not None:
        ref = ref_type(before, thread, COPRO.regs, dst["config"], dst["extra"])
    else:
        ref = ref_type(before, thread)
    expected = reference_outcome(lambda: getattr(ref, name)(word))
    retired = []

    def run():
        outcome = execute(word, thread)
        retired.append(outcome)
        return outcome

    got = emulator_outcome(run)
    assert got == expected, (got, expected)
    if got == "retire":
        assert retired == [Retire(cycles)]
        assert_sfpu(ref, np.delete(before.sp, thread))
        if dst is not None:
            assert_matches(ref)
        else:
            assert COPRO.regs.equals(regs_before)
    else:
        assert COPRO.sfpu.equals(before)
        assert COPRO.regs.equals(regs_before)
    if dst is None or got != "retire":
        for attr, values in rwcs_before.items():
            assert np.array_equal(getattr(COPRO.adc, attr), values)
    return got


# ------------------------------------------------------------------------------ property tests

VD = mostly(st.integers(0, 7), 4, 4)
SIMPLE = {
    # name: the documented width of imm12_math's operand (0: fixed at zero)
    "SFPAND": 4,
    "SFPOR": 4,
    "SFPXOR": 0,
    "SFPNOT": 0,
    "SFPIADD": 12,
    "SFPSHFT": 12,
    "SFPLZ": 0,
    "SFPABS": 0,
    "SFPEXEXP": 0,
    "SFPEXMAN": 0,
    "SFPSETEXP": 8,
    "SFPSETMAN": 12,
    "SFPSETSGN": 1,
    "SFPMOV": 0,
    "SFPSETCC": 1,
    "SFPENCC": 2,
    "SFPPUSHC": 0,
    "SFPPOPC": 0,
    "SFPCOMPC": 0,
}
FIXED_MOD1 = {"SFPXOR", "SFPNOT", "SFPCOMPC"}
FIXED_VC = {"SFPENCC", "SFPPUSHC", "SFPPOPC", "SFPCOMPC"}


def simple_words(name: str) -> st.SearchStrategy[int]:
    width = SIMPLE[name]
    imm = st.integers(0, (1 << width) - 1) if width else st.just(0)
    fields = {
        "imm12_math": mostly(imm, 12),
        "lreg_c": mostly(st.just(0), 4) if name in FIXED_VC else st.integers(0, 15),
        "lreg_dest": VD,
        "instr_mod1": mostly(st.just(0), 4) if name in FIXED_MOD1 else st.integers(0, 15),
    }
    return words(name, fields)


@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_simple_matches_reference(name: str) -> None:
    @SETTINGS
    @given(word=simple_words(name), seed=SEEDS, profile=sfpu_profiles(), thread=THREADS)
    def check(word: int, seed: int, profile: dict, thread: int) -> None:
        run_case(name, word, seed, profile, thread)

    check()


@SETTINGS
@given(
    word=words("SFPLOADI", {"lreg_ind": VD, "instr_mod0": mostly(st.sampled_from([0, 1, 2, 4, 8, 10]), 4)}),
    seed=SEEDS,
    profile=sfpu_profiles(),
    thread=THREADS,
)
def test_sfploadi_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFPLOADI", word, seed, profile, thread)


@SETTINGS
@given(
    word=words("SFPCONFIG", {}),
    seed=SEEDS,
    profile=sfpu_profiles(),
    thread=THREADS,
)
def test_sfpconfig_matches_reference(word: int, seed: int, profile: dict, thread: int) -> None:
    run_case("SFPCONFIG", word, seed, profile, thread)


def test_sfpnop_changes_nothing() -> None:
    run_case("SFPNOP", ISA.encode("SFPNOP"), 1, {**PLAIN_PROFILE}, 0)


DST_SETTINGS = settings(SETTINGS, max_examples=400)
DST_WORD = {"dest_reg_addr": mostly(st.integers(0, 1023), 13)}


@pytest.mark.parametrize("name", ["SFPLOAD", "SFPSTORE"])
def test_dst_moves_match_reference(name: str) -> None:
    vd = VD if name == "SFPLOAD" else st.integers(0, 15)

    @DST_SETTINGS
    @given(
        word=words(name, DST_WORD | {"lreg_ind": vd}),
        seed=SEEDS,
        profile=sfpu_profiles(),
        thread=THREADS,
        config=configurations(),
        extra=sfpu_configs(),
    )
    def check(word: int, seed: int, profile: dict, thread: int, config: dict, extra: dict) -> None:
        run_case(name, word, seed, profile, thread, {"config": config, "extra": extra})

    check()


# ------------------------------------------------------------------------------ hand-worked vectors

PLAIN_PROFILE = {
    "use": "none",
    "depth": 0,
    "backdoor_off": 1.0,
    "row_mask": 0.0,
    "block": 0.0,
    "exchange": 0.0,
    "sp": 0,
}


@pytest.fixture
def fresh():
    """A reset vector unit, zeroed Dst (all rows defined) and configuration, RWCs at zero."""
    load(0, plain_config(), 0, lambda *args: None, lambda rng, regs: None)
    COPRO.sfpu = sfpu.SfpuState.new(COPRO.arch)
    return COPRO.sfpu


def run(name: str, thread: int = 0, **fields: int):
    return execute(ISA.encode(name, **fields), thread)


def simple(name: str, vc: int = 0, vd: int = 0, mod1: int = 0, imm: int = 0):
    return run(name, imm12_math=imm, lreg_c=vc, lreg_dest=vd, instr_mod1=mod1)


def test_reset_values() -> None:
    s = sfpu.SfpuState.new(COPRO.arch)
    assert set(s.lreg[8].tolist()) == {f32(0.8373)}
    assert set(s.lreg[9].tolist()) == {0}
    assert set(s.lreg[10].tolist()) == {0x3F800000}
    assert s.lreg[15].tolist() == list(range(0, 64, 2))
    assert not s.lane_flags.any() and not s.use_lane_flags.any() and not s.stack_depth.any()
    assert s.lane_enabled().all()


def test_loadi_then_integer_arithmetic(fresh) -> None:
    run("SFPLOADI", lreg_ind=0, instr_mod0=4, imm16=0xFFFE)  # -2
    run("SFPLOADI", lreg_ind=1, instr_mod0=2, imm16=5)
    assert fresh.lreg[0, 0] == 0xFFFFFFFE
    simple("SFPIADD", vc=1, vd=0)  # LReg0 = 5 + -2 = 3, flags = 3 < 0
    assert set(fresh.lreg[0].tolist()) == {3} and not fresh.lane_flags.any()
    simple("SFPIADD", vc=1, vd=0, mod1=1, imm=0xFF9)  # 5 + (-7) = -2, flags set
    assert set(fresh.lreg[0].tolist()) == {0xFFFFFFFE} and fresh.lane_flags.all()
    simple("SFPSHFT", vc=0, vd=1, mod1=1 | 2 | 4, imm=0xFFF)  # LReg1 = -2 >> 1 arithmetic = -1
    assert set(fresh.lreg[1].tolist()) == {0xFFFFFFFF}
    simple("SFPSHFT", vc=0, vd=1, mod1=1 | 4, imm=0xFFF)  # logical: 0x7FFFFFFF
    assert set(fresh.lreg[1].tolist()) == {0x7FFFFFFF}
    simple("SFPLZ", vc=1, vd=2)
    assert set(fresh.lreg[2].tolist()) == {1}
    simple("SFPABS", vc=0, vd=3)
    assert set(fresh.lreg[3].tolist()) == {2}
    simple("SFPEXEXP", vc=10, vd=4)  # 1.0: exponent 127 - 127 = 0
    assert set(fresh.lreg[4].tolist()) == {0}
    simple("SFPEXMAN", vc=8, vd=5)
    assert set(fresh.lreg[5].tolist()) == {(f32(0.8373) & 0x7FFFFF) | 0x800000}


def test_lane_predication_if_else(fresh) -> None:
    # v = lane id (LReg15 = 2 * lane); if (v - 20 < 0) { LReg1 = 1 } else { LReg1 = 2 }
    simple("SFPENCC", mod1=2, imm=1)  # UseLaneFlagsForLaneEnable = true, LaneFlags = true
    simple("SFPPUSHC")
    simple("SFPIADD", vc=15, vd=0, mod1=1, imm=(-20) & 0xFFF)  # flags: 2 * lane < 20
    run("SFPLOADI", lreg_ind=1, instr_mod0=2, imm16=1)
    simple("SFPCOMPC")
    run("SFPLOADI", lreg_ind=1, instr_mod0=2, imm16=2)
    simple("SFPPOPC")
    assert fresh.lreg[1].tolist() == [1] * 10 + [2] * 22
    assert fresh.lane_flags.all() and fresh.use_lane_flags.all() and not fresh.stack_depth.any()


def test_store_and_load_round_trip(fresh) -> None:
    run("SFPLOADI", lreg_ind=0, instr_mod0=0, imm16=0x3FC0)  # 1.5 as BF16
    run("SFPSTORE", lreg_ind=0, instr_mod0=sfpu.FMT_FP32, sfpu_addr_mode=0, dest_reg_addr=6)
    # Addr 6: rows 4..7, odd columns; Dst32b FP32 1.5 is the BF16 shuffle on the high half.
    dst32 = COPRO.regs.dst32()
    assert dst32[4:8, 1::2].tolist() == [[0x407F0000] * 8] * 4
    assert not dst32[4:8, 0::2].any() and not dst32[:4].any() and not dst32[8:].any()
    run("SFPLOAD", lreg_ind=2, instr_mod0=sfpu.FMT_FP32, sfpu_addr_mode=0, dest_reg_addr=6)
    assert set(fresh.lreg[2].tolist()) == {0x3FC00000}
    fresh.lane_config[:] = sfpu.DISABLE_BACKDOOR_LOAD  # VD 15 is then LReg[15], not a backdoor load
    run("SFPSTORE", lreg_ind=15, instr_mod0=sfpu.FMT_INT16, sfpu_addr_mode=0, dest_reg_addr=64)
    assert COPRO.regs.dst[64:68, 0::2].ravel().tolist() == list(range(0, 64, 2))


def test_store_hides_written_blocks(fresh) -> None:
    word = ISA.encode("SFPSTORE", lreg_ind=0, instr_mod0=3, sfpu_addr_mode=0, dest_reg_addr=16)
    fresh.use_lane_flags[:] = True  # every lane disabled: nothing written, nothing hidden
    execute(word, 0, cycle=100)
    assert COPRO.regs.readable_from(np.arange(1024)) == 0
    fresh.use_lane_flags[:] = False
    execute(word, 0, cycle=100)
    assert COPRO.regs.readable_from(np.array([32])) == 105  # Dst.md: four cycles hidden
    assert COPRO.regs.readable_from(np.arange(32)) == 0


def test_undefined_rows_of_disabled_lanes_are_not_touched(fresh) -> None:
    COPRO.regs.dst_row_valid[2] = False  # Dst16b row 2: lanes 16..23 at Addr 0
    fresh.lane_config[:] = sfpu.DISABLE_BACKDOOR_LOAD
    fresh.use_lane_flags[:] = True
    fresh.lane_flags[:] = True
    fresh.lane_flags[16:24] = False
    run("SFPSTORE", lreg_ind=15, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=0)
    run("SFPLOAD", lreg_ind=1, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=0)
    assert fresh.lreg[1].tolist() == list(range(0, 32, 2)) + [0] * 8 + list(range(48, 64, 2))


def test_int32_all_uses_the_stack_pointer(fresh) -> None:
    COPRO.config.write_thread_field("SFPU_STACK_Incr", 0, 4)
    fresh.lane_config[:] = sfpu.DISABLE_BACKDOOR_LOAD
    fresh.lane_flags[:] = False
    fresh.use_lane_flags[:] = True  # INT32_ALL ignores LaneEnabled
    run("SFPSTORE", lreg_ind=15, instr_mod0=sfpu.FMT_INT32_ALL, sfpu_addr_mode=0, dest_reg_addr=8)
    assert int(fresh.sp[0]) == 4
    assert COPRO.regs.dst32()[8:12, 0::2].ravel().tolist() == list(range(0, 64, 2))
    run("SFPLOAD", lreg_ind=2, instr_mod0=sfpu.FMT_INT32_ALL, sfpu_addr_mode=0, dest_reg_addr=8)
    assert int(fresh.sp[0]) == 0 and fresh.lreg[2].tolist() == list(range(0, 64, 2))
    run("SFPLOAD", lreg_ind=3, instr_mod0=sfpu.FMT_INT32_ALL, sfpu_addr_mode=0, dest_reg_addr=8)
    assert int(fresh.sp[0]) == 0  # Sp 0 is not decremented


def test_undefined_rows_and_backdoor_load(fresh) -> None:
    COPRO.regs.dst_row_valid[2] = False
    with pytest.raises(UndefinedBehavior):
        run("SFPLOAD", lreg_ind=0, instr_mod0=2, sfpu_addr_mode=0, dest_reg_addr=0)
    with pytest.raises(UndefinedBehavior):
        run("SFPSTORE", lreg_ind=0, instr_mod0=2, sfpu_addr_mode=0, dest_reg_addr=0)
    run("SFPLOAD", lreg_ind=0, instr_mod0=sfpu.FMT_ZERO, sfpu_addr_mode=0, dest_reg_addr=0)  # reads nothing
    # DISABLE_BACKDOOR_LOAD is clear at reset: VD 12 writes the word to InstructionTemplate[0]
    simple("SFPAND", vc=0, vd=12)
    word = ISA.encode("SFPAND", imm12_math=0, lreg_c=0, lreg_dest=12, instr_mod1=0)
    assert set(fresh.macro_template[:, 0].tolist()) == {word}
    simple("SFPMOV", vc=0, vd=1, mod1=8)  # FROM_SPECIAL reads it back
    assert set(fresh.lreg[1].tolist()) == {word}
    with pytest.raises(UndefinedBehavior):
        simple("SFPPOPC")
    with pytest.raises(UndefinedBehavior):
        simple("SFPXOR", mod1=1)


def test_sfpconfig_lane_config_and_constants(fresh) -> None:
    run("SFPCONFIG", imm16_math=0, config_dest=11, instr_mod1=1)
    assert set(fresh.lreg[11].tolist()) == {f32(-1.0)}
    run("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=sfpu.DISABLE_BACKDOOR_LOAD | (1 << 13))
    run("SFPCONFIG", imm16_math=0, config_dest=15, instr_mod1=0)
    assert set(fresh.lane_config.tolist()) == {sfpu.DISABLE_BACKDOOR_LOAD | (1 << 13)}
    assert fresh.lane_enabled().tolist() == [True] * 8 + [False] * 8 + [True] * 16  # ROW_MASK bit 1
    simple("SFPAND", vc=0, vd=12)  # no longer a backdoor load: nothing happens for VD 12


def test_every_instruction_here_is_registered() -> None:
    names = {"SFPLOAD", "SFPSTORE", "SFPLOADI", "SFPNOP", "SFPCONFIG"} | set(SIMPLE)
    assert names <= implemented("blackhole")


def test_a_program_through_the_pipe() -> None:
    """SFPCONFIG, SFPLOADI, SFPIADD and SFPSTORE through a pipe of a fresh tile, one per cycle,
    walking Dst with an ADDR_MOD slot."""
    tile = Tile("blackhole")
    isa = tile.coprocessor.isa
    set_addr_mod(tile.coprocessor, 1, 3, DestIncr=4)
    program = [
        isa.encode("SFPCONFIG", imm16_math=sfpu.DISABLE_BACKDOOR_LOAD, config_dest=15, instr_mod1=1),
        isa.encode("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=7),
        isa.encode("SFPIADD", imm12_math=0, lreg_c=15, lreg_dest=0, instr_mod1=4),  # 2 * lane + 7
        isa.encode("SFPSTORE", lreg_ind=0, instr_mod0=4, sfpu_addr_mode=3, dest_reg_addr=0),
        isa.encode("SFPSTORE", lreg_ind=15, instr_mod0=4, sfpu_addr_mode=3, dest_reg_addr=0),
    ]
    end = run_words(tile, 1, program)
    dst32 = tile.coprocessor.regs.dst32()
    assert dst32[0:4, 0::2].ravel().tolist() == [2 * lane + 7 for lane in range(32)]
    assert dst32[4:8, 0::2].ravel().tolist() == [2 * lane for lane in range(32)]
    assert int(tile.coprocessor.adc.dst[1]) == 8
    assert tile.backend.pipes[1].issued == 5 and end <= 8
