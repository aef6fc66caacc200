"""The vector unit's conversions (SFPCAST, SFP_STOCH_RND) and its PRNG.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 VectorUnit.md ("PRNG"),
SFPCAST.md with SFPCAST_IntFloat.md, SFPCAST_IntInt.md and SFPCAST_IntAbs.md, SFPSTOCHRND.md with
SFPSTOCHRND_FloatFloat.md, SFPSTOCHRND_FloatInt.md and SFPSTOCHRND_IntInt.md, BackendConfiguration.md
and SoftReset.md (seeding and reset). Shared pieces (state, lane enables, the backdoor-load refusal)
come from sfpu/unit.py.

The PRNG
--------
``SfpuState.prng`` is VectorUnit.md's ``State[32]``, one 32-bit register per lane. ``AdvancePRNG(Lane)``
returns the lane's state and shifts it right by one, feeding in the complement of the parity of bits
31, 21, 1 and 0 at bit 31. Each instruction advances it on the lanes where its functional model calls
``AdvancePRNG()``: every enabled lane of SFPMOV ``FROM_SPECIAL`` VC 9, of SFPCAST's stochastic mode
and of every SFP_STOCH_RND (whatever its rounding mode, and also when VD is 8..11 and nothing is
written).

Two facts are not in the pages. Its reset value: SoftReset.md says only that the PRNG "will be reset";
the emulator starts it at zero (as ttsim does). Its seeding: BackendConfiguration.md says a write of
``Config.PRNG_SEED_Seed_Val`` (re-)seeds every PRNG with that value but not how; the emulator follows
ttsim: advance the seed 32 times, then, for i = 0..31, advance it twice and give the result to lane
31 - i (:func:`seed_prng`; the coprocessor calls it on that configuration write).

Blackhole encoding (the pages' BlackholeA0 diagrams)
----------------------------------------------------
- SFPCAST: ``lreg_src_c`` VC (bits 8..11; the slot's other bits are no operand), ``lreg_dest`` VD,
  ``instr_mod1`` Mod1.
- SFP_STOCH_RND: ``rnd_mode`` RoundingMode (bits 21..22; bit 23 is no operand), ``imm8_math`` Imm5,
  ``lreg_src_b`` VB, ``lreg_src_c`` VC, ``lreg_dest`` VD, ``instr_mod1`` Mod1 (bits 0..2) and UseImm5
  (bit 3).

Readings where the pages are open
---------------------------------
- SFPCAST dispatches on ``Mod1 & 3`` (0, 1: SignMag32ToFp32; 2: the integer absolute value; 3: the
  two's complement / sign-magnitude conversion). No page tests Mod1 bits 2 and 3; they are ignored,
  as the functional models ignore them.
- SFP_STOCH_RND dispatches on the 3-bit Mod1: 0, 1 FloatFloat; 2, 3, 6, 7 FloatInt; 4, 5 IntInt. The
  float modes' syntax fixes Imm5 and UseImm5 at 0: set bits there raise UndefinedBehavior. Their
  syntax repeats VC as VB only to work around a stalling bug elsewhere; VB is not read, so any value
  is accepted.
- RoundingMode 3 has no case in the pages' switch, so PRNGBits keep the PRNG's value: it rounds
  stochastically, like RoundingMode 1.
- The backdoor load (VD >= 12 on a lane whose ``DISABLE_BACKDOOR_LOAD`` is clear, sfpu/unit.py): such a lane
  loads the instruction's bits into its ``InstructionTemplate[VD - 12]`` and does nothing else (its
  PRNG does not advance), also for the SFPCAST modes whose model omits the test. LReg[16] (VD 16, only
  through SFPLOADMACRO) is written as the models say (``VD < 8 || VD == 16``).

Timing: VectorUnit.md gives both instructions an IPC of 1 and a latency of 1 (``Retire(SFPU.issue)``).
"""

from __future__ import annotations

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.sfpu.integers import clz32
from tensixsim.tensix.sfpu.unit import (
    LANES,
    SfpuState,
    backdoor_lanes,
    load_template,
    unit_state,
    write_lanes,
)
from tensixsim.timing import SFPU

_M32 = np.uint64(0xFFFFFFFF)
_SIGN = np.uint32(0x80000000)
_MAG = np.uint32(0x7FFFFFFF)


# ------------------------------------------------------------------------------ the PRNG


def _prng_step(state: np.ndarray) -> np.ndarray:
    """One AdvancePRNG step of 32-bit states: shift right, bit 31 = NOT parity(state & 0x80200003)."""
    x = state.astype(np.uint32)
    parity = ((x >> 31) ^ (x >> 21) ^ (x >> 1) ^ x) & np.uint32(1)
    return ((parity ^ np.uint32(1)) << np.uint32(31)) | (x >> np.uint32(1))


def advance_prng(s: SfpuState, lanes: np.ndarray) -> np.ndarray:
    """VectorUnit.md ``AdvancePRNG(Lane)`` on the ``lanes`` given: each lane's state before the step
    (the other lanes' values are returned too, but their state does not move)."""
    result = s.prng.copy()
    s.prng = np.where(lanes, _prng_step(result), result).astype(np.uint32)
    return result


def seed_prng(s: SfpuState, seed: int) -> None:
    """(Re-)seed every lane's PRNG from the 32-bit ``seed`` (ttsim's rule; module docstring)."""
    x = np.array([seed & 0xFFFFFFFF], np.uint32)
    for _ in range(32):
        x = _prng_step(x)
    state = np.zeros(LANES, np.uint32)
    for i in range(LANES):
        x = _prng_step(_prng_step(x))
        state[LANES - 1 - i] = x[0]
    s.prng = state


# ------------------------------------------------------------------------------ SFPCAST

CAST_RNE, CAST_RNS, CAST_INT32_ABS, CAST_INT32_SM32 = 0, 1, 2, 3


def _sm32_to_fp32(c: np.ndarray, stochastic: bool, prng: np.ndarray) -> np.ndarray:
    """SFPCAST_IntFloat.md: sign-magnitude integers to FP32 (``prng``: the AdvancePRNG results)."""
    sign = (c & _SIGN).astype(np.uint64)
    mag = (c & _MAG).astype(np.uint64)
    lz = clz32(mag).astype(np.uint64)  # below 32: the magnitude has at most 31 bits
    norm = (mag << lz) & _M32
    # The exponent field counts the hidden bit (bit 23 of norm >> 8) once more: 157 - lz + 1 = 158 - lz.
    d = sign + (((np.uint64(157) - lz) << np.uint64(23)) + (norm >> np.uint64(8)))
    d = np.where(mag == 0, sign, d)
    if stochastic:
        up = (norm & np.uint64(0xFE)) > ((prng.astype(np.uint64) >> np.uint64(9)) & np.uint64(0xFE))
    else:
        up = ((norm & np.uint64(0x80)) != 0) & ((norm & np.uint64(0x17F)) != 0)
    return ((d + up) & _M32).astype(np.uint32)


@semantics("SFPCAST")
def sfpcast(ctx: Context, lreg_src_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    vc = ctx.documented("lreg_src_c", lreg_src_c, 4)
    s, vd, mode = unit_state(ctx), lreg_dest, instr_mod1 & 3
    backdoor = backdoor_lanes(ctx, s, vd)
    lanes = s.lane_enabled() & ~backdoor
    c = s.lreg[vc].copy()
    if mode == CAST_INT32_SM32:
        result = np.where(c & _SIGN, _SIGN | (-c.astype(np.int64) & 0xFFFFFFFF), c)
    elif mode == CAST_INT32_ABS:
        result = np.where(c & _SIGN, -c.astype(np.int64) & 0xFFFFFFFF, c)
    else:
        stochastic = mode == CAST_RNS
        prng = advance_prng(s, lanes) if stochastic else s.prng
        result = _sm32_to_fp32(c, stochastic, prng)
    if vd < 8 or vd == 16:
        write_lanes(s, vd, result.astype(np.uint32), lanes)
    load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.issue)


# ------------------------------------------------------------------------------ SFP_STOCH_RND

RND_NEAREST, RND_STOCH, RND_ZERO = 0, 1, 2
# The 3-bit Mod1 values, and UseImm5 (the fourth Mod1 bit).
STOCH_FP32_TO_FP16A, STOCH_FP32_TO_FP16B = 0, 1
STOCH_FP32_TO_UINT8, STOCH_FP32_TO_INT8, STOCH_FP32_TO_UINT16, STOCH_FP32_TO_INT16 = 2, 3, 6, 7
STOCH_INT32_TO_UINT8, STOCH_INT32_TO_INT8 = 4, 5
STOCH_USE_IMM5 = 8
# FloatInt modes: (KeepSign, MaxMagnitude)
_FLOAT_INT = {
    STOCH_FP32_TO_INT8: (True, 127),
    STOCH_FP32_TO_UINT8: (False, 255),
    STOCH_FP32_TO_INT16: (True, 32767),
    STOCH_FP32_TO_UINT16: (False, 65535),
}


def _float_float(x: np.ndarray, mode: int, bits: np.ndarray) -> np.ndarray:
    """SFPSTOCHRND_FloatFloat.md: keep 10 (FP16A) or 7 (FP16B) mantissa bits."""
    x = x.astype(np.uint64)
    exp = (x >> np.uint64(23)) & np.uint64(0xFF)
    low, shift = (0x1FFF, 10) if mode == STOCH_FP32_TO_FP16A else (0xFFFF, 7)
    discarded = x & np.uint64(low)
    up = discarded >= (bits >> np.uint64(shift))
    rounded = x - discarded + np.where(up, np.uint64(low + 1), np.uint64(0))
    result = np.where(exp == 0, np.uint64(0), np.where(exp == 255, x & np.uint64(0xFF800000), rounded))
    return result.astype(np.uint32)


def _float_int(c: np.ndarray, mode: int, bits: np.ndarray) -> np.ndarray:
    """SFPSTOCHRND_FloatInt.md: FP32 to a bounded sign-magnitude integer."""
    keep_sign, top = _FLOAT_INT[mode]
    c64 = c.astype(np.uint64)
    sign = c64 & np.uint64(0x80000000) if keep_sign else np.zeros(LANES, np.uint64)
    exp = ((c64 >> np.uint64(23)) & np.uint64(0xFF)).astype(np.int64) - 127
    mag = np.uint64(0x800000) | (c64 & np.uint64(0x7FFFFF))
    up_shift = np.clip(exp, 0, 63).astype(np.uint64)
    down_shift = np.clip(-exp, 0, 63).astype(np.uint64)
    mag = np.where(exp >= 0, mag << up_shift, mag >> down_shift)
    mag = (mag >> np.uint64(23)) + ((mag & np.uint64(0x7FFFFF)) >= bits)
    mag = np.minimum(mag, np.uint64(top))
    mag = np.where(exp >= 16, np.uint64(top), mag)  # |x| >= 2**16, and NaN: the largest magnitude
    sign = np.where((exp < 16) & (mag == 0), np.uint64(0), sign)
    small = exp < -1  # |x| < 0.5: zero, without a sign
    mag = np.where(small, np.uint64(0), mag)
    sign = np.where(small, np.uint64(0), sign)
    return (sign + mag).astype(np.uint32)


def _int_int(c: np.ndarray, mode: int, shift: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """SFPSTOCHRND_IntInt.md: shift a sign-magnitude integer right, round, clamp."""
    c64 = c.astype(np.uint64)
    sign = c64 & np.uint64(0x80000000)
    mag = ((c64 & np.uint64(0x7FFFFFFF)) << np.uint64(23)) >> shift.astype(np.uint64)
    mag = (mag >> np.uint64(23)) + ((mag & np.uint64(0x7FFFFF)) >= bits)
    if mode == STOCH_INT32_TO_UINT8:
        mag = np.minimum(mag, np.uint64(255))
        sign = np.zeros(LANES, np.uint64)
    else:
        mag = np.minimum(mag, np.uint64(127))
        sign = np.where(mag == 0, np.uint64(0), sign)
    return (sign + mag).astype(np.uint32)


@semantics("SFP_STOCH_RND")
def sfp_stoch_rnd(
    ctx: Context,
    rnd_mode: int,
    imm8_math: int,
    lreg_src_b: int,
    lreg_src_c: int,
    lreg_dest: int,
    instr_mod1: int,
) -> Outcome:
    rounding = ctx.documented("rnd_mode", rnd_mode, 2)
    mode, use_imm5 = instr_mod1 & 7, instr_mod1 & STOCH_USE_IMM5
    int_int = mode in (STOCH_INT32_TO_UINT8, STOCH_INT32_TO_INT8)
    if not int_int:
        ctx.documented("imm8_math", imm8_math, 0)
        if use_imm5:
            raise ctx.error(UndefinedBehavior, f"Mod1={instr_mod1}: UseImm5 with a floating-point mode")
    s, vd = unit_state(ctx), lreg_dest
    backdoor = backdoor_lanes(ctx, s, vd)
    lanes = s.lane_enabled() & ~backdoor
    c = s.lreg[lreg_src_c].copy()
    shift = np.full(LANES, imm8_math) if use_imm5 else s.lreg[lreg_src_b] & np.uint32(31)
    bits = (advance_prng(s, lanes) & np.uint32(0x7FFFFF)).astype(np.uint64)
    if rounding == RND_NEAREST:
        bits[:] = 0x400000
    elif rounding == RND_ZERO:
        bits[:] = 0x7FFFFF
    if mode in (STOCH_FP32_TO_FP16A, STOCH_FP32_TO_FP16B):
        result = _float_float(c, mode, bits)
    elif int_int:
        result = _int_int(c, mode, shift, bits)
    else:
        result = _float_int(c, mode, bits)
    if vd < 8 or vd == 16:
        write_lanes(s, vd, result, lanes)
    load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.issue)
