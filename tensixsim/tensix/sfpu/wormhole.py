"""Wormhole's vector unit: the instructions whose encoding or functional model differ from Blackhole's.

Functional model: the jasondavies fork of tt-isa-documentation (the newer revision of Tenstorrent's
pages, which corrects SFPENCC, SFPABS, SFPSWAP's default, SFPLUTFP32's mode tests and SFPSTOCHRND's
rounding there), WormholeB0 SFP*.md, VectorUnit.md, LReg.md, Dst.md, RWCs.md and
Miscellaneous/FMA/fma.c. Every other vector-unit instruction has the same page on both chips and is
registered for both where Blackhole's is (sfpu/unit.py, flags.py, integers.py, floats.py, lanes.py,
convert.py); state, lane enables, the backdoor load and the readings of sfpu/unit.py's and
sfpu/dst.py's docstrings hold here too. Wormhole's state is Blackhole's: LReg[0..16] with the same
constants, the eight-deep flag stack, the same LaneConfig bits, LoadMacroConfig and PRNG.

What differs, instruction by instruction
----------------------------------------
- SFPLOAD / SFPSTORE / SFPLOADMACRO: a two-bit AddrMod (word bits 14..15) applied as Wormhole's
  RWCs.md says (slot AddrMod, or AddrMod + 4 under ExtraAddrModBit or ADDR_MOD_SET_Base:
  adc.apply_addr_mod_wormhole); ``dest_reg_addr`` bits 0..9 are Imm10 and its bits 10..13 no operand.
  Addr is Imm10 + DEST_TARGET_REG_CFG_MATH_Offset + RWCs.Dst + DEST_REGW_BASE_Base, or only the low two
  bits of the last two with MOD0_FMT_INT32_ALL: Sp is neither read nor changed. MOD0_FMT_INT32_SM and
  MOD0_FMT_INT8_COMP convert between sign-magnitude (Dst) and two's complement (LReg), MOD0_FMT_INT8
  loads a 7-bit magnitude, and MOD0_FMT_FP32 stores without flushing denormals. Dst has no row remap
  or swizzle (regs.dst_mapping).
- SFPMAD / SFPADD / SFPMUL / SFPADDI / SFPMULI / SFPLUT / SFPLUTFP32: Wormhole's multiply-add
  (sfpu/fma.py ``fma_wormhole``). There are no negate modifiers: Mod1 bits 0 and 1 (SFPADDI / SFPMULI:
  bit 1), Blackhole's NEGATE_VB / NEGATE_VC, raise UndefinedBehavior. SFPLUTFP32 has no Mod1Mirror:
  ``lreg_dest`` bits above VD raise UndefinedBehavior. There is no automatic stall: the instruction
  issued on the next cycle must not read what they wrote (sfpu/hazards.py).
- SFPAND / SFPOR: ``VD = VD & VC`` (``| VC``) only; the syntax fixes Imm12 and Mod1 at 0 (Blackhole's
  USE_VB). Under SFPLOADMACRO their VB is the macro's, as for every simple-unit instruction.
- SFPSHFT: logical shifts only: Mod1 bits 1 and 2 (Blackhole's ARITHMETIC, ARG_IMM_USE_VC) raise
  UndefinedBehavior.
- SFPPUSHC: a plain push; the syntax fixes Mod1 at 0 (Blackhole's stack-top modes).
- SFPPOPC: with Mod1 != 0 on a full stack, the hardware bug of the page (the top is copied to the
  bottom entry).
- SFPCAST: only SignMag32ToFp32 (Mod1 bit 0 stochastic); Mod1 & 3 of 2 or 3 (Blackhole's integer
  modes) raise UndefinedBehavior, bits 2 and 3 are ignored as on Blackhole.
- SFP_STOCH_RND: ``StochasticRounding`` is one bit (word bit 21; bits 22, 23 raise UndefinedBehavior):
  the PRNG or 0x400000 (round to nearest, ties away). The readings of sfpu/convert.py hold (VB is
  accepted and ignored by the floating-point modes, whose syntax fixes it at 0: tt-llk's Wormhole
  kernels set it; Imm5 and UseImm5 there raise UndefinedBehavior).
- SFPSHFT2: SUBVEC_SHFLSHR1's hardware bug: each row's first lane gets lane ``Lane + 7`` of the
  LReg[VC] the last SUBVEC_SHFLROR1_AND_COPY4 / SUBVEC_SHFLROR1 read (``SfpuState.shfl_vc``, recorded
  whenever one executes); before any has run since reset that value is unknown: UndefinedBehavior. Its
  modes 2..4 have no automatic stall: they occupy the unit one cycle and leave the next cycle's rules of
  sfpu/hazards.py.

Timing: VectorUnit.md's table is Blackhole's (IPC 1, the MAD sub-unit's latency 2); SFPSWAP stalls the
next instruction as on Blackhole. Where Blackhole stalls and Wormhole does not, the instruction
occupies the unit one cycle (``Retire(SFPU.issue)``) and the rule for the next cycle is checked
instead. Instructions SFPLOADMACRO schedules leave no rule (their timing is software's, as on
Blackhole).
"""

from __future__ import annotations

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix import formats
from tensixsim.tensix.adc import apply_addr_mod_wormhole
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.sfpu import convert, flags, floats, hazards, integers, lanes, macro
from tensixsim.tensix.sfpu.dst import BLACKHOLE_DST, DST_ACCESS, DstAccess, load_plan, store
from tensixsim.tensix.sfpu.fma import fma_wormhole
from tensixsim.tensix.sfpu.unit import (
    FMT_FP32,
    FMT_INT8,
    FMT_INT8_COMP,
    FMT_INT32_ALL,
    FMT_INT32_SM,
    SfpuState,
    unit_state,
)
from tensixsim.timing import SFPU

_SIGN, _MAG = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)

# ------------------------------------------------------------------------------ Dst access


def _dst_addr(ctx: Context, imm10: int, mod0: int, *, store: bool) -> tuple[int, int]:
    """Wormhole's SFPLOAD.md / SFPSTORE.md ``Addr`` (no Sp: it is returned unchanged)."""
    config, thread = ctx.copro.config, ctx.thread
    state = config.state_id(thread)
    addr = imm10 + config.thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread)
    dst_offset = int(ctx.copro.adc.dst[thread]) + config.read_field("DEST_REGW_BASE_Base", state)
    addr += dst_offset & 3 if mod0 == FMT_INT32_ALL else dst_offset
    return addr & 0x3FF, int(unit_state(ctx).sp[thread])


def _sign_mag_to_twos(x: np.ndarray) -> np.ndarray:
    """SFPLOAD.md ``SignMagToTwosComp``."""
    mag = (x & _MAG).astype(np.int64)
    return np.where(x & _SIGN, -mag & 0xFFFFFFFF, mag).astype(np.uint32)


def _to_sign_mag(x: np.ndarray) -> np.ndarray:
    """SFPSTORE.md ``ToSignMag``."""
    sign = x & _SIGN
    mag = np.where(sign != 0, -x.astype(np.int64) & 0xFFFFFFFF, x).astype(np.uint32)
    return sign | (mag & _MAG)


def _load_datum(mod0: int, raw: np.ndarray, old: np.ndarray, fp16_inf: np.ndarray) -> np.ndarray:
    r = raw.astype(np.uint32)
    if mod0 == FMT_INT32_SM:
        return _sign_mag_to_twos(formats.dst32_to_fp32(r))
    if mod0 == FMT_INT8:  # SignMag8ToSignMag32: a 7-bit magnitude
        return ((r >> 15) << 31) | ((r >> 5) & 0x7F)
    if mod0 == FMT_INT8_COMP:
        return _sign_mag_to_twos(((r >> 15) << 31) | ((r >> 5) & 0x3FF))
    return BLACKHOLE_DST.load_datum(mod0, raw, old, fp16_inf)  # the other modes: the same conversions


def _store_datum(mod0: int, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    if mod0 == FMT_FP32:  # FP32Shuffle(Datum): no flush of denormals
        return formats.dst32_from_fp32(x)
    if mod0 == FMT_INT32_SM:
        return formats.dst32_from_fp32(_to_sign_mag(x))
    if mod0 == FMT_INT8_COMP:
        return BLACKHOLE_DST.store_datum(FMT_INT8, _to_sign_mag(x))
    return BLACKHOLE_DST.store_datum(mod0, x)  # the other modes: the same conversions


WORMHOLE_DST = DstAccess(_dst_addr, _load_datum, _store_datum, apply_addr_mod_wormhole)
DST_ACCESS["wormhole"] = WORMHOLE_DST


@semantics("SFPLOAD", arches=("wormhole",))
def sfpload(ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int) -> Outcome:
    imm10 = ctx.documented("dest_reg_addr", dest_reg_addr, 10)
    plan = load_plan(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, imm10, WORMHOLE_DST)
    if isinstance(plan, Wait):
        return plan
    plan[1]()
    return Retire(SFPU.issue)


@semantics("SFPSTORE", arches=("wormhole",))
def sfpstore(
    ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int
) -> Outcome:
    return store(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, dest_reg_addr, WORMHOLE_DST)


@semantics("SFPLOADMACRO", arches=("wormhole",))
def sfploadmacro(
    ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int
) -> Outcome:
    return macro.loadmacro(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, dest_reg_addr, WORMHOLE_DST)


# ------------------------------------------------------------------------------ the MAD sub-unit

_NEGATE = floats.MAD_NEGATE_VB | floats.MAD_NEGATE_VC


def _no_negation(ctx: Context, mod1: int, bits: int) -> None:
    if mod1 & bits:
        raise ctx.error(
            UndefinedBehavior, f"Mod1={mod1}: Wormhole has no NEGATE_VB / NEGATE_VC (Blackhole's)", mod1
        )


def _mad_done(
    ctx: Context, s: SfpuState, backdoor: np.ndarray, vd: int, indirect: bool, d: np.ndarray, on: np.ndarray
) -> Outcome:
    """Write the result on lanes ``on`` and leave the next cycle its rule: no reading what was written
    (Wormhole has no stall)."""
    wrote = floats.mad_write(ctx, s, backdoor, vd, indirect, d, on)
    if not ctx.scheduled:
        hazards.record(s, ctx.cycle, hazards.MAD_RESULT, hazards.mask(wrote))
    return Retire(SFPU.issue)


def _mad(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    va = ctx.documented("lreg_src_a", lreg_src_a, 4)
    _no_negation(ctx, instr_mod1, _NEGATE)
    s, on, backdoor = floats.mad_operands(ctx, lreg_dest)
    a = floats.indirect_va(s, va, bool(instr_mod1 & floats.MAD_INDIRECT_VA))
    d = fma_wormhole(a, s.lreg[lreg_src_b], s.lreg[lreg_src_c])
    return _mad_done(ctx, s, backdoor, lreg_dest, bool(instr_mod1 & floats.MAD_INDIRECT_VD), d, on)


@semantics("SFPMAD", arches=("wormhole",))
def sfpmad(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


@semantics("SFPADD", arches=("wormhole",))
def sfpadd(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


@semantics("SFPMUL", arches=("wormhole",))
def sfpmul(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


def _immediate(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int, multiply: bool) -> Outcome:
    _no_negation(ctx, instr_mod1, floats.MAD_NEGATE_VC)
    s, on, backdoor = floats.mad_operands(ctx, lreg_dest)
    c = s.lreg[ctx.implicit_vc(lreg_dest)]
    d = fma_wormhole(*floats.immediate_terms(imm16_math, c, multiply))
    return _mad_done(ctx, s, backdoor, lreg_dest, bool(instr_mod1 & floats.MAD_INDIRECT_VD), d, on)


@semantics("SFPADDI", arches=("wormhole",))
def sfpaddi(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _immediate(ctx, imm16_math, lreg_dest, instr_mod1, multiply=False)


@semantics("SFPMULI", arches=("wormhole",))
def sfpmuli(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _immediate(ctx, imm16_math, lreg_dest, instr_mod1, multiply=True)


@semantics("SFPLUT", arches=("wormhole",))
def sfplut(ctx: Context, lreg_ind: int, instr_mod0: int, dest_reg_addr: int) -> Outcome:
    ctx.documented("dest_reg_addr", dest_reg_addr, 0)
    vd, mod0 = lreg_ind, instr_mod0
    s, on, backdoor = floats.mad_operands(ctx, vd)
    a, b, c, l3 = floats.lut_terms(s)
    d = floats.sign_retain(fma_wormhole(a, b, c), l3, bool(mod0 & floats.LUT_SGN_RETAIN))
    return _mad_done(ctx, s, backdoor, vd, bool(mod0 & floats.LUT_INDIRECT_VD), d, on)


@semantics("SFPLUTFP32", arches=("wormhole",))
def sfplutfp32(ctx: Context, lreg_dest: int, instr_mod1: int) -> Outcome:
    # VD is four bits (no Mod1Mirror: Blackhole's); SFPLOADMACRO passes its VD 16 here.
    vd = 16 if ctx.scheduled and lreg_dest == 16 else ctx.documented("lreg_dest", lreg_dest, 4)
    mod1 = instr_mod1
    s, on, backdoor = floats.mad_operands(ctx, vd)
    a, b, c, l3 = floats.lutfp32_terms(s, mod1)
    d = floats.sign_retain(fma_wormhole(a, b, c), l3, bool(mod1 & floats.LUTFP32_SGN_RETAIN))
    return _mad_done(ctx, s, backdoor, vd, bool(mod1 & floats.LUTFP32_INDIRECT_VD), d, on)


# ------------------------------------------------------------------------------ the simple sub-unit


@semantics("SFPAND", arches=("wormhole",))
def sfpand(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("instr_mod1", instr_mod1, 0)
    return integers.bitwise(ctx, ctx.implicit_vb(lreg_dest), lreg_c, lreg_dest, np.bitwise_and)


@semantics("SFPOR", arches=("wormhole",))
def sfpor(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("instr_mod1", instr_mod1, 0)
    return integers.bitwise(ctx, ctx.implicit_vb(lreg_dest), lreg_c, lreg_dest, np.bitwise_or)


@semantics("SFPSHFT", arches=("wormhole",))
def sfpshft(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    blackhole_only = integers.SHFT_ARITHMETIC | integers.SHFT_ARG_IMM_USE_VC
    if instr_mod1 & blackhole_only:
        raise ctx.error(
            UndefinedBehavior,
            f"Mod1={instr_mod1}: Wormhole has no ARITHMETIC / ARG_IMM_USE_VC (Blackhole's)",
            instr_mod1,
        )
    # What is left is Blackhole's model without those modes: Wormhole's SFPSHFT.md.
    return integers.sfpshft(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1)


@semantics("SFPPUSHC", arches=("wormhole",))
def sfppushc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("instr_mod1", instr_mod1, 0)  # a plain push: Blackhole's Mod1 0
    return flags.sfppushc(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1)


@semantics("SFPPOPC", arches=("wormhole",))
def sfppopc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return flags.popc(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1, full_stack_bug=True)


@semantics("SFPCAST", arches=("wormhole",))
def sfpcast(ctx: Context, lreg_src_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    if instr_mod1 & 2:
        raise ctx.error(
            UndefinedBehavior, f"Mod1={instr_mod1}: Wormhole's SFPCAST has no integer modes (Blackhole's)"
        )
    # Mod1 & 3 of 0 or 1: Blackhole's SFPCAST_IntFloat.md, which is Wormhole's SFPCAST.md.
    return convert.sfpcast(ctx, lreg_src_c, lreg_dest, instr_mod1)


@semantics("SFP_STOCH_RND", arches=("wormhole",))
def sfp_stoch_rnd(
    ctx: Context,
    rnd_mode: int,
    imm8_math: int,
    lreg_src_b: int,
    lreg_src_c: int,
    lreg_dest: int,
    instr_mod1: int,
) -> Outcome:
    # StochasticRounding is one bit; 0 and 1 are Blackhole's RND_NEAREST and RND_STOCH (the pages'
    # PRNGBits), so Blackhole's model is Wormhole's.
    stochastic = ctx.documented("rnd_mode", rnd_mode, 1)
    return convert.sfp_stoch_rnd(ctx, stochastic, imm8_math, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


# ------------------------------------------------------------------------------ SFPSHFT2

WORMHOLE_SHFT2 = lanes.Shft2Model(SFPU.issue, stale_row_start=True)


@semantics("SFPSHFT2", arches=("wormhole",))
def sfpshft2(ctx: Context, imm12_math: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    outcome = lanes.shft2(ctx, imm12_math, lreg_src_c, lreg_dest, instr_mod1, WORMHOLE_SHFT2)
    mod1, vd, s = instr_mod1, lreg_dest, unit_state(ctx)
    if ctx.scheduled:
        return outcome
    if mod1 == lanes.SHFT2_SUBVEC_SHFLROR1_AND_COPY4:
        no_read, no_write = hazards.mask({0, 1, 2, 3}), hazards.mask({1, 2, 3})
        hazards.record(s, ctx.cycle, hazards.LANE_SHUFFLE, no_read, no_write)
    elif mod1 in (lanes.SHFT2_SUBVEC_SHFLROR1, lanes.SHFT2_SUBVEC_SHFLSHR1):
        hazards.record(s, ctx.cycle, hazards.LANE_SHUFFLE, hazards.mask({vd} if vd < 8 else set()))
    return outcome
