"""The vector unit's (SFPU's) figures: schedules of a doubling of Dst, instruction rates, Dst
bandwidth."""

from __future__ import annotations

from collections.abc import Sequence

from tensixsim.sdk.calibration.case import (
    PC_BUF_SYNC,
    PROBE_RUNS,
    Case,
    done_check,
    inline,
    mop_config,
    probe_loop,
    profiler_record,
    rmwcib,
    setc16,
    word,
)

# --------------------------------------------------------------------------- the vector unit (SFPU)
# Doubling 8192 FP32 values of Dst (rows 0..511, one vector of 32 per two rows; TRISC1;
# blackhole-py tests/compute/sfpu/test_loadmacro_pipeline.py): per vector an explicit SFPLOAD /
# SFPMUL by L6 = 2.0 / SFPNOP / SFPSTORE, or SFPLOADMACRO with a macro that schedules the multiply
# one cycle and the store three cycles on (after three SFPNOPs, or back to back over four
# registers), the words inline, or 4 vectors replayed by a MOP 64 times. The figure is the
# profiler's interval (``profiler_record``): its first sample, the words, four SFPNOPs,
# STALLWAIT(SYNC; SFPU), the done check, its second sample.
# Dst is configured for 32-bit data as the bench did; TRISC0 had unpacked the values into it and
# handed it over first, which is left out (the vector unit's cycles do not depend on the values).
_SFPU_DRAIN = inline(word("STALLWAIT", stall_res=0x2, wait_res=0x800))
_PROFILE_START = profiler_record(stop=False)
_PROFILE_STOP = profiler_record(stop=True)


def _sfpu_prologue(macro: bool) -> str:
    words = [
        setc16(0, 0),
        setc16(1, 0),
        word("STALLWAIT", stall_res=0x80, wait_res=0x10 | 0x800),
        rmwcib(1, 3, 0x20, 0x20),  # ALU_ACC_CTRL_Fp32_enabled
        *(setc16(reg, 0) for reg in (12, 28, 47)),  # ADDR_MOD 0: nothing moves
        word("SETRWC", bit_mask=0xF),
        word("SFPENCC", instr_mod1=2),
        word("STALLWAIT", stall_res=0x2, wait_res=0x800),
        word("SFPLOADI", lreg_ind=6, instr_mod0=0, imm16=0x4000),  # L6 = 2.0
    ]
    if macro:
        words += [
            word("SFPCONFIG", imm16_math=0, config_dest=15, instr_mod1=1),
            word("SFPNOP"),
            # the macro's MAD template: L6 * VB + L9 (zero) into VD
            word("SFPMUL", lreg_src_a=6, lreg_src_b=0, lreg_src_c=9, lreg_dest=12, instr_mod1=0),
            word("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=0x1300),
            word("SFPLOADI", lreg_ind=0, instr_mod0=10, imm16=0x8400),
            word("SFPCONFIG", imm16_math=0, config_dest=4, instr_mod1=0),
            word("SFPCONFIG", imm16_math=3, config_dest=8, instr_mod1=1),
        ]
    words.append(word("STALLWAIT", stall_res=0x2, wait_res=0x800))
    return "\n".join((*map(inline, words), done_check(PC_BUF_SYNC)))


def _sfpu_vector(schedule: str, row: int, address: int) -> list[int]:
    reg = (row // 2) % 4
    if schedule == "explicit":
        return [
            word("SFPLOAD", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address),
            word("SFPMUL", lreg_src_a=6, lreg_src_b=reg, lreg_src_c=9, lreg_dest=reg),
            word("SFPNOP"),
            word("SFPSTORE", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address),
        ]
    serial = [word("SFPNOP")] * 3 if schedule == "macro_serial" else []
    return [word("SFPLOADMACRO", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address), *serial]


def _sfpu_scale(schedule: str, replay: bool) -> str:
    if replay:
        body = [
            w for row in range(0, 8, 2) for w in (*_sfpu_vector(schedule, row, 0), word("INCRWC", rwc_d=2))
        ]
        play = word("REPLAY", start_idx=0, len=len(body), execute_while_loading=0, load_mode=0)
        nop = word("NOP")
        words = "\n".join(
            (
                inline(word("REPLAY", start_idx=0, len=len(body), execute_while_loading=0, load_mode=1)),
                *map(inline, body),
                mop_config((1, 64, nop, nop, nop, play, nop, play, nop)),
                inline(word("MOP", mop_type=1)),
            )
        )
    else:
        words = "\n".join(inline(w) for row in range(0, 512, 2) for w in _sfpu_vector(schedule, row, row))
    return "\n".join(
        (
            _PROFILE_START,
            words,
            *[inline(word("SFPNOP"))] * 4,
            _SFPU_DRAIN,
            done_check(PC_BUF_SYNC),
            _PROFILE_STOP,
        )
    )


def _sfpu_case(schedule: str, replay: bool, what: str, silicon: float) -> Case:
    return Case(
        f"sfpu_scale_{schedule}{'_replay' if replay else ''}",
        f"SFPU doubling 256 FP32 vectors of Dst: {what} (TRISC1)",
        _sfpu_scale(schedule, replay),
        1,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=_sfpu_prologue(schedule != "explicit"),
        profiled=True,
    )


SFPU_CASES = (
    Case(
        "sfpu_profile_control",
        "the profiler's interval around STALLWAIT(SYNC; SFPU) alone (TRISC1)",
        f"{_PROFILE_START}\n{_SFPU_DRAIN}\n{_PROFILE_STOP}",
        1,
        (13.0, 13.0),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=_sfpu_prologue(False),
        profiled=True,
    ),
    _sfpu_case("explicit", False, "SFPLOAD, SFPMUL, SFPNOP, SFPSTORE each", 1054.0),
    _sfpu_case("macro_serial", False, "SFPLOADMACRO and three SFPNOPs each", 1164.0),
    _sfpu_case("macro_pipeline", False, "SFPLOADMACRO each, four registers", 306.0),
    _sfpu_case("explicit", True, "explicit, 4 vectors replayed 64 times", 1377.0),
    _sfpu_case("macro_pipeline", True, "SFPLOADMACRO, 4 vectors replayed 64 times", 597.0),
)


# Vector-unit rates as slopes. The SFPU probes (tenstorrent-docs fresh-results.md, TRISC1, fusion
# off): a loop of 16 inline words, ``addi`` and ``bne`` run N times, then STALLWAIT(SYNC; SFPU) and
# the done check, per word, the loop's two instructions included (silicon: the slope between N = 64,
# 128 and 256; here the whole run at N = 128, whose fixed part adds about 0.005 a word). LRegs 0..7
# hold 1.0.
SLOPE_PROLOGUE = "\n".join(
    (
        inline(word("SFPENCC", instr_mod1=2)),
        *(inline(word("SFPLOADI", lreg_ind=i, instr_mod0=0, imm16=0x3F80)) for i in range(8)),
        _SFPU_DRAIN,
        done_check(PC_BUF_SYNC),
        "fence",
    )
)


def slope_case(name: str, what: str, words: Sequence[int], silicon: float, ops: int = 0) -> Case:
    """The probe loop of ``words`` (probe_loop), per word (per ``ops`` a loop when given: the primary
    ones, a probe's added SFPNOPs not counted)."""
    body = "\n".join((probe_loop("\n".join(map(inline, words))), _SFPU_DRAIN, done_check(PC_BUF_SYNC)))
    return Case(
        name,
        what,
        body,
        (ops or len(words)) * PROBE_RUNS,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=SLOPE_PROLOGUE,
    )


# Dst bandwidth (blackhole-py tests/compute/fpu/test_dst_bandwidth.py, TRISC1): a replay of 32
# SFPLOADs or SFPSTOREs (ADDR_MOD 3, which moves nothing) played R times by a MOP, then
# STALLWAIT(SYNC; MATH, SFPU) and the done check; silicon's figure is the slope over R, here the run
# with R = 64 minus the run with R = 32 (each with its MOP configuration), per instruction.
def _dst_run(repeats: int) -> str:
    nop = word("NOP")
    play = word("REPLAY", start_idx=0, len=32, execute_while_loading=0, load_mode=0)
    return "\n".join(
        (
            mop_config((1, repeats, nop, nop, nop, play, nop, play, play)),
            inline(word("MOP", mop_type=1)),
            inline(word("STALLWAIT", stall_res=0x2, wait_res=0x810)),
            done_check(PC_BUF_SYNC),
        )
    )


def _dst_case(name: str, what: str, words: Sequence[int], silicon: float) -> Case:
    prologue = "\n".join(
        (
            *(inline(setc16(reg, 0)) for reg in (15, 31, 50)),  # ADDR_MOD 3: nothing moves
            inline(word("REPLAY", start_idx=0, len=32, execute_while_loading=0, load_mode=1)),
            *map(inline, words),
            done_check(PC_BUF_SYNC),
        )
    )
    return Case(
        name,
        what,
        _dst_run(64),
        32 * 32,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=prologue,
        empty=_dst_run(32),
    )


SFPU_RATE_CASES = (
    slope_case("sfpu_nop", "SFPNOP, 16 inline a loop (per word, TRISC1)", [word("SFPNOP")] * 16, 1.125),
    slope_case(
        "sfpu_mad_independent",
        "SFPMAD over 4 LRegs, 16 inline a loop (per word, TRISC1)",
        [word("SFPMAD", lreg_src_a=i % 4, lreg_src_b=10, lreg_src_c=9, lreg_dest=i % 4) for i in range(16)],
        1.125,
    ),
    slope_case(
        "sfpu_mad_dependent",
        "SFPMAD dependent chain, 16 inline a loop (per word, TRISC1)",
        [word("SFPMAD", lreg_src_a=0, lreg_src_b=10, lreg_src_c=9, lreg_dest=0)] * 16,
        2.0,
    ),
    _dst_case(
        "dst_sfpload",
        "SFPLOAD from Dst, replayed by a MOP (per instruction, TRISC1)",
        [
            word("SFPLOAD", lreg_ind=j % 4, instr_mod0=3, sfpu_addr_mode=3, dest_reg_addr=2 * j)
            for j in range(32)
        ],
        1.0,
    ),
    _dst_case(
        "dst_sfpstore",
        "SFPSTORE to Dst, replayed by a MOP (per instruction, TRISC1)",
        [
            word("SFPSTORE", lreg_ind=0, instr_mod0=3, sfpu_addr_mode=3, dest_reg_addr=2 * j)
            for j in range(32)
        ],
        1.0,
    ),
)
