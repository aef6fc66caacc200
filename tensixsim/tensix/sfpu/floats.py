"""The vector unit's floating-point instructions: the MAD sub-unit (SFPMAD, SFPADD, SFPMUL, SFPADDI,
SFPMULI, SFPMUL24, SFPLUT, SFPLUTFP32) and SFPDIVP2, SFPARECIP, SFPGT, SFPLE of the simple sub-unit.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPMAD.md, SFPADD.md,
SFPMUL.md, SFPADDI.md, SFPMULI.md, SFPMUL24.md, SFPLUT.md, SFPLUTFP32.md, SFPDIVP2.md, SFPARECIP.md,
SFPGT.md, SFPLE.md and VectorUnit.md; the multiply-add is sfpu/fma.py's ``fma`` (the bit-exact
``fma_model_bh`` SFPMAD.md points to). Wormhole's variants of the MAD sub-unit's instructions, which
share the bodies here with their own multiply-add, are in sfpu/wormhole.py.

Blackhole encoding (the pages' diagrams)
----------------------------------------
- SFPMAD / SFPADD / SFPMUL / SFPMUL24: ``lreg_src_a`` bits 0..3 VA (bits 4..7 are no operand),
  ``lreg_src_b`` VB, ``lreg_src_c`` VC, ``lreg_dest`` VD, ``instr_mod1`` Mod1.
- SFPADDI / SFPMULI: ``imm16_math`` Imm16 (a BF16), ``lreg_dest`` VD, ``instr_mod1`` Mod1.
- SFPLUT: ``lreg_ind`` VD, ``instr_mod0`` Mod0; ``dest_reg_addr`` is fixed at 0 by the syntax.
- SFPLUTFP32: ``lreg_dest`` bits 0..3 VD and bits 12..15 (word bits 16..19) ``Mod1Mirror``, the rest
  no operand; ``instr_mod1`` Mod1.
- SFPDIVP2: ``imm12_math`` bits 0..7 Imm8. SFPARECIP: ``imm12_math`` bits 0..3 VB. SFPGT / SFPLE:
  ``imm12_math`` fixed at 0. ``lreg_c`` VC, ``lreg_dest`` VD, ``instr_mod1`` Mod1.

As in sfpu/unit.py, set bits outside a documented operand raise UndefinedBehavior before anything changes;
Mod1 / Mod0 bits a functional model never tests are ignored, as the model ignores them; VD >= 12 on a
lane whose ``LaneConfig.DISABLE_BACKDOOR_LOAD`` is clear is sfpu/unit.py's backdoor load on that lane (its
word to ``InstructionTemplate[VD - 12]``) instead of the lane work. Under SFPLOADMACRO
(``Context.scheduled``) SFPADDI / SFPMULI take their VC, SFPGT / SFPLE their VB, from the context, and VD
16 (LReg[16]) is written.

Readings where the pages are open
---------------------------------
- SFPARECIP with Mod1 3..15 computes the exponential: the model's ``switch`` sends them to ``default``.
- SFPLUT / SFPLUTFP32 choose their table entry with ``b < 1.0`` and the like on ``fabsf(LReg[3])``;
  the emulator compares bit patterns, which agrees for every value including NaN (no threshold is
  below the denormals).
- SFPGT / SFPLE mutate the flag stack's top on every lane with a non-empty stack, enabled or not, as
  the model is written.

Timing: the MAD sub-unit's two-cycle latency
--------------------------------------------
VectorUnit.md gives every instruction here an IPC of 1 (``Retire(SFPU.issue)``); the MAD-sub-unit
ones have a latency of 2 (``SFPU.mad_latency``), the others 1. The emulator writes results at issue,
so only timing and the documented hazards are modelled (SFPMAD.md "Instruction scheduling"):

- Each MAD-sub-unit instruction records its result in flight (``SfpuState.mad_ready`` and the LRegs
  it writes, as the hardware's stalling logic sees them and as it really writes them: with
  ``INDIRECT_VD`` the logic assumes every LReg; SFPLUTFP32 uses ``Mod1Mirror`` for it).
- The hardware stalls the next vector-unit instruction for a cycle if it reads one of those LRegs:
  :func:`mad_hold` (called at the wait gate for every vector-unit instruction, from any module) holds
  it until the result is ready. Its table of what each instruction reads (``_reads``) includes the
  logic's documented blind spots (SFPAND / SFPOR with USE_VB, SFPIADD and SFPSHFT reading VD,
  SFPCONFIG reading LReg[0], SFPSWAP's comparing modes, some SFPSHFT2 modes) and the conservative
  cases (``INDIRECT_VA``: every LReg; SFPLUTFP32: every LReg but LReg[7] unless ``Mod1Mirror`` has
  ``INDIRECT_VD``).
- Where the logic misses a read that really happens (a blind spot), the hardware does not stall and
  the instruction reads the old value: UndefinedBehavior naming the LReg.
- Readings: the interlock belongs to the one vector unit, so it holds a reader from any pipe; a write
  of the same LReg by the next instruction (SFPLOAD, SFPLOADI) is no hazard, as no page names one;
  the logic's view of VD counts even when VD is 8..15 (nothing written); SFPCAST reads VC and
  SFP_STOCH_RND VC and, unless Mod1 bit 3 (UseImm5), VB, as the logic sees them. The
  UndefinedBehavior is raised at the wait gate, so it names the cycle but not the core and pc.
- Instructions SFPLOADMACRO schedules neither record a result nor get the automatic stall (SFPMAD.md:
  software's duty there); SFPSWAP's ENABLE_DEST_INDEX reads of LReg[4..7] are not in the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.isa.spec import Instruction
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.sfpu import hazards
from tensixsim.tensix.sfpu.fma import CANONICAL_NAN, INF, MAN, ONE, SIGN, fma
from tensixsim.tensix.sfpu.unit import (
    LANE,
    LANES,
    LREGS,
    SfpuState,
    backdoor_lanes,
    load_template,
    simple_operands,
    unit_state,
    write_lanes,
)
from tensixsim.timing import SFPU

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# Re-exported: the native engine's tables read them here (native/gen_fields.py).
__all__ = ["CANONICAL_NAN", "INF", "MAN", "ONE", "SIGN", "fma"]


def bf16_to_fp32(imm16: int) -> np.ndarray:
    return np.full(LANES, imm16 << 16, np.uint32)


# ------------------------------------------------------------------------------ the MAD sub-unit

# SFPMAD / SFPADD / SFPMUL / SFPADDI / SFPMULI Mod1
MAD_NEGATE_VB, MAD_NEGATE_VC, MAD_INDIRECT_VA, MAD_INDIRECT_VD = 1, 2, 4, 8
# SFPMUL24 Mod1
MUL24_UPPER, MUL24_INDIRECT_VA, MUL24_INDIRECT_VD = 1, 4, 8
# SFPLUT Mod0
LUT_SGN_RETAIN, LUT_INDIRECT_VD = 4, 8
# SFPLUTFP32 Mod1
LUTFP32_FP16_3ENTRY_TABLE, LUTFP32_FP16_6ENTRY_TABLE1, LUTFP32_FP16_6ENTRY_TABLE2 = 10, 2, 3
LUTFP32_SGN_RETAIN, LUTFP32_INDIRECT_VD = 4, 8
_ALL = np.ones(LREGS, bool)


def mad_operands(ctx: Context, vd: int) -> tuple[SfpuState, np.ndarray, np.ndarray]:
    """The state, the lanes a MAD-sub-unit instruction with VD ``vd`` computes on and its backdoor lanes."""
    s = unit_state(ctx)
    backdoor = backdoor_lanes(ctx, s, vd)
    return s, s.lane_enabled() & ~backdoor, backdoor


def indirect_va(s: SfpuState, va: int, indirect: bool) -> np.ndarray:
    """Each lane's ``LReg[va]``, or ``LReg[LReg[7] & 15]`` with INDIRECT_VA."""
    return s.lreg[s.lreg[7] & 15, LANE] if indirect else s.lreg[va]


def mad_write(
    ctx: Context,
    s: SfpuState,
    backdoor: np.ndarray,
    vd: int,
    indirect: bool,
    d: np.ndarray,
    lanes: np.ndarray,
) -> np.ndarray:
    """Load the word into the ``backdoor`` lanes' template; write ``d`` to each of ``lanes``' ``vd`` (or
    ``LReg[7] & 15`` if ``indirect``) when below 8 or 16. Returns the LRegs written (a mask)."""
    load_template(ctx, s, vd, backdoor)
    wrote = np.zeros(LREGS, bool)
    if indirect and vd != 16:
        targets = (s.lreg[7] & 15).astype(np.int64)
        written = lanes & ((targets < 8) | (targets == 16))
        wrote[targets[written]] = True
        for reg in np.flatnonzero(wrote):
            write_lanes(s, reg, d, written & (targets == reg))
    elif (vd < 8 or vd == 16) and lanes.any():  # every lane's target is VD
        wrote[vd] = True
        write_lanes(s, vd, d, lanes)
    return wrote


def _mad_result(
    ctx: Context,
    s: SfpuState,
    backdoor: np.ndarray,
    vd: int,
    indirect: bool,
    d: np.ndarray,
    lanes: np.ndarray,
    seen_all: bool,
) -> Outcome:
    """``mad_write``, then record the result in flight for Blackhole's automatic stall (``seen_all``:
    the stalling logic assumes every LReg is written)."""
    wrote = mad_write(ctx, s, backdoor, vd, indirect, d, lanes)
    if not ctx.scheduled:  # SFPLOADMACRO's scheduled instructions get no automatic stall (SFPMAD.md)
        s.mad_seen = np.full(LREGS, seen_all)
        s.mad_seen[vd] = True
        s.mad_wrote = wrote
        s.mad_ready[0] = ctx.cycle + SFPU.mad_latency
    return Retire(SFPU.issue)


def _mad(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    va = ctx.documented("lreg_src_a", lreg_src_a, 4)
    s, lanes, backdoor = mad_operands(ctx, lreg_dest)
    mod1 = instr_mod1
    a = indirect_va(s, va, bool(mod1 & MAD_INDIRECT_VA))
    b, c = s.lreg[lreg_src_b], s.lreg[lreg_src_c]
    if mod1 & MAD_NEGATE_VB:
        b = b ^ np.uint32(SIGN)
    if mod1 & MAD_NEGATE_VC:
        c = c ^ np.uint32(SIGN)
    indirect = bool(mod1 & MAD_INDIRECT_VD)
    return _mad_result(ctx, s, backdoor, lreg_dest, indirect, fma(a, b, c), lanes, indirect)


@semantics("SFPMAD")
def sfpmad(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


@semantics("SFPADD")
def sfpadd(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


@semantics("SFPMUL")
def sfpmul(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    return _mad(ctx, lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1)


def immediate_terms(imm16: int, c: np.ndarray, multiply: bool) -> tuple[np.ndarray, ...]:
    """The multiply-add's terms of SFPMULI (``Imm16 * c + 0.0``) or SFPADDI (``Imm16 * 1.0 + c``)."""
    if multiply:
        return bf16_to_fp32(imm16), c, np.zeros(LANES, np.uint32)
    return bf16_to_fp32(imm16), np.full(LANES, ONE, np.uint32), c


def _immediate(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int, multiply: bool) -> Outcome:
    s, lanes, backdoor = mad_operands(ctx, lreg_dest)
    c = s.lreg[ctx.implicit_vc(lreg_dest)] ^ np.uint32(SIGN if instr_mod1 & MAD_NEGATE_VC else 0)
    d = fma(*immediate_terms(imm16_math, c, multiply))
    indirect = bool(instr_mod1 & MAD_INDIRECT_VD)
    return _mad_result(ctx, s, backdoor, lreg_dest, indirect, d, lanes, indirect)


@semantics("SFPADDI")
def sfpaddi(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _immediate(ctx, imm16_math, lreg_dest, instr_mod1, multiply=False)


@semantics("SFPMULI")
def sfpmuli(ctx: Context, imm16_math: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _immediate(ctx, imm16_math, lreg_dest, instr_mod1, multiply=True)


def _mul24_shift_add(p: np.ndarray, z: np.ndarray) -> np.ndarray:
    """SFPMUL24.md ``Mul24ShiftAdd``: the floating-point adder's alignment step on a 23-bit product."""
    z_e = (z >> 23) & 0xFF
    r_e = np.maximum(129, z_e)
    s = (r_e - z_e) & 31
    z_grs = ((z & MAN) | (MAN + 1)) << 3
    p = p >> ((r_e - 129) & 31)
    z_m = z_grs >> s
    carry = ((z_m << s) ^ z_grs) > 0xFFFF
    added = (p + z_m + (carry.astype(np.int64) << 16)) & MAN
    return np.where(z_e == 0, p, np.where(z_m != 0, added, p))


@semantics("SFPMUL24")
def sfpmul24(
    ctx: Context, lreg_src_a: int, lreg_src_b: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int
) -> Outcome:
    va = ctx.documented("lreg_src_a", lreg_src_a, 4)
    s, lanes, backdoor = mad_operands(ctx, lreg_dest)
    mod1 = instr_mod1
    a = indirect_va(s, va, bool(mod1 & MUL24_INDIRECT_VA)).astype(np.int64)
    b = s.lreg[lreg_src_b].astype(np.int64)
    product = (a & MAN) * (b & MAN)  # the low 23 bits of a * b need only the operands' low 23 bits
    d = product >> 23 if mod1 & MUL24_UPPER else product & MAN
    d = _mul24_shift_add(d, s.lreg[lreg_src_c].astype(np.int64))
    indirect = bool(mod1 & MUL24_INDIRECT_VD)
    return _mad_result(ctx, s, backdoor, lreg_dest, indirect, d.astype(np.uint32), lanes, indirect)


def _abs_l3(s: SfpuState) -> tuple[np.ndarray, np.ndarray]:
    """(``LReg[3]``, its absolute value) as FP32 bits."""
    l3 = s.lreg[3]
    return l3, l3 & np.uint32(~SIGN & 0xFFFFFFFF)


def _below(b: np.ndarray, limit: float) -> np.ndarray:
    """``b < limit`` for non-negative FP32 bits ``b`` (NaN compares false, as the bits do)."""
    return b < np.float32(limit).view(np.uint32)


def sign_retain(d: np.ndarray, l3: np.ndarray, retain: bool) -> np.ndarray:
    """``copysignf(d, LReg[3])`` when the mode asks for it (SFPLUT, SFPLUTFP32 SGN_RETAIN)."""
    return (d & np.uint32(~SIGN & 0xFFFFFFFF)) | (l3 & np.uint32(SIGN)) if retain else d


def lut8_to_fp32(x: np.ndarray) -> np.ndarray:
    """SFPLUT.md ``Lut8ToFp32``: sign, 3-bit negated exponent, 4-bit mantissa (0xFF: zero)."""
    x = x.astype(np.uint32)
    bits = ((x >> 7) << 31) | ((127 - ((x >> 4) & 7)) << 23) | ((x & 0xF) << 19)
    return np.where(x == 0xFF, 0, bits).astype(np.uint32)


def lut16_to_fp32(x: np.ndarray) -> np.ndarray:
    """SFPLUTFP32.md ``Lut16ToFp32``: FP16 fields, exponent 0 as a normal, exponent 31 as zero."""
    x = x.astype(np.uint32)
    exp = (x >> 10) & 0x1F
    return (((x >> 15) << 31) | (np.where(exp == 0x1F, 0, 112 + exp) << 23) | ((x & 0x3FF) << 13)).astype(
        np.uint32
    )


def lut_terms(s: SfpuState) -> tuple[np.ndarray, ...]:
    """SFPLUT's multiply-add terms (a, b, c) and ``LReg[3]``."""
    l3, b = _abs_l3(s)
    coeffs = np.where(_below(b, 1.0), s.lreg[0], np.where(_below(b, 2.0), s.lreg[1], s.lreg[2]))
    return lut8_to_fp32((coeffs >> 8) & 0xFF), b, lut8_to_fp32(coeffs & 0xFF), l3


@semantics("SFPLUT")
def sfplut(ctx: Context, lreg_ind: int, instr_mod0: int, dest_reg_addr: int) -> Outcome:
    ctx.documented("dest_reg_addr", dest_reg_addr, 0)
    vd, mod0 = lreg_ind, instr_mod0
    s, lanes, backdoor = mad_operands(ctx, vd)
    a, b, c, l3 = lut_terms(s)
    d = sign_retain(fma(a, b, c), l3, bool(mod0 & LUT_SGN_RETAIN))
    indirect = bool(mod0 & LUT_INDIRECT_VD)
    return _mad_result(ctx, s, backdoor, vd, indirect, d, lanes, indirect)


@semantics("SFPLUTFP32")
def sfplutfp32(ctx: Context, lreg_dest: int, instr_mod1: int) -> Outcome:
    if lreg_dest & 0xF0FF0:
        raise ctx.error(UndefinedBehavior, f"lreg_dest={lreg_dest:#x} sets bits of no operand", lreg_dest)
    vd, mirror, mod1 = lreg_dest & 0xF, (lreg_dest >> 12) & 0xF, instr_mod1
    s, lanes, backdoor = mad_operands(ctx, vd)
    a, b, c, l3 = lutfp32_terms(s, mod1)
    d = sign_retain(fma(a, b, c), l3, bool(mod1 & LUTFP32_SGN_RETAIN))
    # The stalling logic reads Mod1Mirror's INDIRECT_VD, not Mod1's (SFPLUTFP32.md).
    return _mad_result(ctx, s, backdoor, vd, bool(mod1 & LUTFP32_INDIRECT_VD), d, lanes, bool(mirror & 8))


def lutfp32_terms(s: SfpuState, mod1: int) -> tuple[np.ndarray, ...]:
    """SFPLUTFP32's multiply-add terms (a, b, c) for ``Mod1``, and ``LReg[3]``."""
    l3, b = _abs_l3(s)
    i = np.where(_below(b, 1.0), 0, np.where(_below(b, 2.0), 1, 2))
    low, high = s.lreg[i, LANE], s.lreg[4 + i, LANE]
    if mod1 & LUTFP32_FP16_6ENTRY_TABLE1:
        if (mod1 & LUTFP32_FP16_3ENTRY_TABLE) == LUTFP32_FP16_3ENTRY_TABLE:
            a, c = lut16_to_fp32(low >> 16), lut16_to_fp32(low & 0xFFFF)
        else:
            cut = 4.0 if (mod1 & LUTFP32_FP16_6ENTRY_TABLE2) == LUTFP32_FP16_6ENTRY_TABLE2 else 3.0
            upper = np.where(
                _below(b, 0.5),
                False,
                np.where(
                    _below(b, 1.0),
                    True,
                    np.where(_below(b, 1.5), False, np.where(_below(b, 2.0), True, ~_below(b, cut))),
                ),
            )
            j = np.where(upper, 16, 0).astype(np.uint32)
            a, c = lut16_to_fp32((low >> j) & 0xFFFF), lut16_to_fp32((high >> j) & 0xFFFF)
    else:
        a, c = low, high
    return a, b, c, l3


# ------------------------------------------------------------------------------ the simple sub-unit

DIVP2_ADD = 1


@semantics("SFPDIVP2", arches=("blackhole", "wormhole"))  # Wormhole's SFPDIVP2.md: the same
def sfpdivp2(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    imm8 = ctx.documented("imm12_math", imm12_math, 8)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        c = s.lreg[lreg_c]
        exp = (c >> 23) & 0xFF
        if instr_mod1 & DIVP2_ADD:
            exp = np.where(exp == 255, exp, (exp + np.uint32(imm8)) & 0xFF)
        else:
            exp = np.full(LANES, imm8, np.uint32)
        write_lanes(s, lreg_dest, (c & np.uint32(SIGN | MAN)) | (exp.astype(np.uint32) << 23), lanes)
    return Retire(SFPU.issue)


ARECIP_RECIP, ARECIP_COND_RECIP, ARECIP_EXP = 0, 1, 2

_RECIP_LUT = bytes.fromhex(
    "7f7d7b7977757472706e6d6b696866646361605e5d5b5a585755545351504f4d4c4b4a48474645444241403f3e3d3c3b"
    "3a393837363534333231302f2e2d2c2b2a2928282726252423232221201f1f1e1d1c1c1b1a1919181717161515141313"
    "121111100f0f0e0e0d0c0c0b0b0a090908080707060505040403030202010100"
)
_EXP_LUT = bytes.fromhex(
    "020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202"
    "020202020202020202020202020203030303030303030303030303030303030303030303030303030303030303030303"
    "030303030303030303030303030303030303030303030303030303030304040404040404040404040404040404040404"
    "040404040404040404040404040505050505050505050505050505050505050505050505050505050505050506060606"
    "060606060606060606060606060606060606060606060606060606070707070707070707070707070707070707070707"
    "070707070707070707080808080808080808080808080808080808080909090909090909090909090909090a0a0a0a0a"
    "0a0a0a0a0a0a0a0a0a0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d"
    "0d0d0d0d0d0e0e0e0e0e0e0e0e0e0e0e0e0e0e0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f1010101010101010101010101010"
    "111111111111111212121212121213131313131313141414141414141515151515151516161616161616171717171717"
    "18181818181818191919191919191a1a1a1a1a1a1b1b1b1b1b1b1b1c1c1c1c1c1c1c1d1d1d1d1d1d1e1e1e1e1e1e1e1f"
    "1f1f1f1f1f20202020202021212121212121222222222222232323232323242424242425252526262627272728282829"
    "29292a2a2a2b2b2b2c2c2c2d2d2d2e2e2e2f2f2f30303131313232323333333434343535353636363737383838393939"
    "3a3a3a3b3b3c3c3c3d3d3d3e3e3f3f3f40404041414242424343434444454545464647474748484849494a4a4a4b4b4c"
    "4c4c4d4d4e4e4e4f4f505050515152525353545556575858595a5b5c5d5e5e5f60616263646565666768696a6b6c6d6e"
    "6f70717172737475767778797a7b7c7d7e7f000001010202030304040505060607080809090a0a0b0b0c0c0d0d0e0f0f"
    "10101111121313141415151617171818191a1a1b1b1c1d1d1e1f1f202021222223242425262627272829292a2b2b2c2d"
    "2d2f303233343637393a3c3d3f404243454648494b4c4e5051535556585a5b5d5f61626466686a6b6d6f71737577797b"
    "7d7f808182838485868788898b8c8d8e8f9091929395969798999b9c9d9e9fa1a2a3a5a6a7a8aaabacaeafb1b2b3b5b6"
    "b8b9bbbcbdbfc0c2c4c5c7c8cacbcdcfd0d2d3d5d7d8dadcdedfe1e3e5e6e8ea"
)
_RECIP = np.frombuffer(_RECIP_LUT, np.uint8).astype(np.uint32)
_EXP = np.frombuffer(_EXP_LUT, np.uint8).astype(np.uint32)


def approx_recip(x: np.ndarray) -> np.ndarray:
    """SFPARECIP.md ``ApproxRecip`` of non-negative FP32 bits: 7-bit table on the mantissa's top bits."""
    x = x.astype(np.uint32)
    inside = ((253 - (x >> 23).astype(np.int64)) << 23) | (_RECIP[(x >> 16) & 0x7F] << 16)
    return np.where(x < 0x00800000, INF, np.where(x < 0x7E800000, inside, 0)).astype(np.uint32)


def approx_exp(x: np.ndarray) -> np.ndarray:
    """SFPARECIP.md ``ApproxExp`` of non-negative FP32 bits."""
    x = x.astype(np.uint32)
    low16 = x & 0xFFFF
    table = _EXP[np.clip((x >> 16).astype(np.int64) - 0x3C80, 0, len(_EXP) - 1)] << 16
    return np.select(
        [x < 0x00800000, x < 0x3C800000, x < 0x3F320000, x < 0x40000000],
        [np.full(x.shape, ONE), 0x3F810000 | low16, ONE | table | low16, 0x40000000 | table | low16],
        0x40800000 | low16,
    ).astype(np.uint32)


@semantics("SFPARECIP")
def sfparecip(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    vb = ctx.documented("imm12_math", imm12_math, 4)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        x = s.lreg[lreg_c]
        sign = x & np.uint32(SIGN)
        magnitude = x - sign
        if instr_mod1 == ARECIP_RECIP:
            x = sign | approx_recip(magnitude)
        elif instr_mod1 == ARECIP_COND_RECIP:
            x = np.where(s.lreg[vb] >= SIGN, approx_recip(magnitude), x)
        else:
            x = sign | approx_exp(magnitude)
        write_lanes(s, lreg_dest, x, lanes)
    return Retire(SFPU.issue)


# SFPGT / SFPLE Mod1
CMP_SET_CC, CMP_MUTATE_STACK, CMP_MUTATE_OR, CMP_SET_VD = 1, 2, 4, 8


def sign_mag_is_smaller(c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """SFPGT.md ``SignMagIsSmaller``: ``c < d`` as sign-magnitude integers (FP32's total order)."""

    def ordered(v: np.ndarray) -> np.ndarray:
        v = v.astype(np.int64)
        return np.where(v >= SIGN, (SIGN - 1) - v, v)  # -0 .. -(2**31 - 1) to -1 .. -2**31

    return ordered(c) < ordered(d)


def _compare(
    ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int, le: bool
) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    s, vd, mod1 = unit_state(ctx), lreg_dest, instr_mod1
    backdoor = backdoor_lanes(ctx, s, vd)
    result = sign_mag_is_smaller(s.lreg[lreg_c], s.lreg[ctx.implicit_vb(vd)])
    if le:
        result = ~result
    lanes = s.lane_enabled() & ~backdoor
    load_template(ctx, s, vd, backdoor)
    if mod1 & CMP_SET_VD and (vd < 8 or vd == 16):
        write_lanes(s, vd, np.where(result, 0xFFFFFFFF, 0).astype(np.uint32), lanes)
    if mod1 & CMP_SET_CC:
        s.lane_flags = np.where(lanes, result, s.lane_flags)
    if mod1 & CMP_MUTATE_STACK:
        depth = s.stack_depth.astype(np.int64)
        has = (depth > 0) & ~backdoor
        top = np.maximum(depth - 1, 0)
        flags = s.flag_stack[LANE, top, 0]
        flags = flags | result if mod1 & CMP_MUTATE_OR else flags & result
        s.flag_stack[LANE[has], top[has], 0] = flags[has]
    return Retire(SFPU.issue)


@semantics("SFPGT")
def sfpgt(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _compare(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1, le=False)


@semantics("SFPLE")
def sfple(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return _compare(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1, le=True)


# ------------------------------------------------------------------------------ the MAD result in flight

_NONE: frozenset[int] = frozenset()
_EVERY = frozenset(range(16))
_SIMPLE_VC = {"SFPLZ", "SFPABS", "SFPEXEXP", "SFPEXMAN", "SFPNOT", "SFPDIVP2", "SFPSETCC", "SFPCAST"}
_MAD_FAMILY = {"SFPMAD", "SFPADD", "SFPMUL", "SFPMUL24"}


_READS: dict[tuple[str, int], tuple[frozenset[int], frozenset[int]]] = {}


def _reads(ins: Instruction) -> tuple[frozenset[int], frozenset[int]]:
    """(the LRegs the stalling logic thinks ``ins`` reads, those it really reads) - SFPMAD.md's list;
    a function of the instruction word, so remembered."""
    key = (ins.name, ins.word)
    reads = _READS.get(key)
    if reads is None:
        if len(_READS) >= 4096:  # bounded: a program holds few distinct words, a random test many
            _READS.clear()
        reads = _READS[key] = _reads_of(ins)
    return reads


def _reads_of(ins: Instruction) -> tuple[frozenset[int], frozenset[int]]:
    name, f = ins.name, ins.fields
    vc, vd, mod1 = f.get("lreg_c", f.get("lreg_src_c", 0)), f.get("lreg_dest", 0), f.get("instr_mod1", 0)
    both: frozenset[int] = _NONE
    if name in _MAD_FAMILY:
        if mod1 & MAD_INDIRECT_VA:
            return _EVERY, _EVERY
        both = frozenset(
            {f["lreg_src_a"] & 15, f["lreg_src_b"], vc} | ({7} if mod1 & MAD_INDIRECT_VD else set())
        )
    elif name in ("SFPADDI", "SFPMULI"):
        both = frozenset({vd} | ({7} if mod1 & MAD_INDIRECT_VD else set()))
    elif name == "SFPLUT":
        both = frozenset({0, 1, 2, 3} | ({7} if f["instr_mod0"] & LUT_INDIRECT_VD else set()))
    elif name == "SFPLUTFP32":
        seen = _EVERY if (vd >> 12) & LUTFP32_INDIRECT_VD else _EVERY - {7}
        return seen, frozenset(range(7)) | ({7} if mod1 & LUTFP32_INDIRECT_VD else _NONE)
    elif name == "SFPSTORE" or f.get("instr_mod0") in {"SFPLOAD": (14, 15), "SFPLOADI": (8, 10)}.get(
        name, ()
    ):
        both = frozenset({f["lreg_ind"]})  # SFPSTORE's datum; LO16_ONLY / HI16_ONLY keep half of VD
    elif name == "SFPMOV":
        both = _NONE if mod1 & 8 else frozenset({vc})
    elif name in _SIMPLE_VC:
        both = frozenset({vc})
    elif name in ("SFPXOR", "SFPGT", "SFPLE"):
        both = frozenset({vc, vd})
    elif name in ("SFPSETEXP", "SFPSETMAN", "SFPSETSGN"):
        both = frozenset({vc} if mod1 & 1 else {vc, vd})
    elif name == "SFPARECIP":
        both = frozenset({vc, f["imm12_math"] & 15} if mod1 == ARECIP_COND_RECIP else {vc})
    elif name in ("SFPAND", "SFPOR"):  # the logic ignores USE_VB: it thinks VD is read, never VB
        return frozenset({vc, vd}), frozenset({vc, f["imm12_math"] & 15 if mod1 & 1 else vd})
    elif name == "SFPIADD":  # the logic misses the read of VD
        return frozenset({vc}), frozenset({vc} if mod1 & 1 else {vc, vd})
    elif name == "SFPSHFT":  # the logic misses the read of VD
        if mod1 & 1:
            return (frozenset({vc}),) * 2 if mod1 & 4 else (_NONE, frozenset({vd}))
        return frozenset({vc}), frozenset({vc, vd})
    elif name == "SFPCONFIG":  # the logic misses the read of LReg[0]
        return _NONE, _NONE if mod1 & 1 else frozenset({0})
    elif name == "SFPSWAP":  # the comparing modes read on their first cycle, unseen
        pair = frozenset({vc, vd})
        return (pair, pair) if mod1 == 0 else (_NONE, pair)
    elif name == "SFPSHFT2":
        vb = f["imm12_math"] & 15
        return {
            0: (frozenset({1, 2, 3}),) * 2,
            1: (frozenset({0, 1, 2, 3}),) * 2,
            2: (_NONE, frozenset({1, 2, 3, vc})),
            3: (_NONE, frozenset({vc})),
            4: (_NONE, frozenset({vc})),
            5: (frozenset({vd, vc}), frozenset({vb, vc})),
            6: (frozenset({vd}), frozenset({vb})),
        }.get(mod1, (_NONE, _NONE))
    elif name == "SFPTRANSP":
        both = frozenset(range(8))
    elif name == "SFP_STOCH_RND":
        both = frozenset({vc} if mod1 & 8 else {vc, f["lreg_src_b"]})
    return both, both


MAD_HOLD_REASON = "waits a cycle for an SFPMAD-family result"


def mad_hold(copro: Coprocessor, ins: Instruction, cycle: int) -> str | None:
    """Why the vector unit holds ``ins`` at ``cycle`` for an SFPMAD-family result (None: it goes).

    Raises UndefinedBehavior when the instruction really reads that result but the hardware's stalling
    logic misses it (it would read the old value), or when it breaks a rule an unstalled Wormhole
    instruction left for this cycle (sfpu/hazards.py)."""
    s = copro.sfpu
    if ins.unit != "sfpu":
        return None
    if s.hazard[hazards.AT] == cycle:  # a rule an unstalled Wormhole instruction left (sfpu/hazards.py)
        hazards.check(copro, ins, cycle)
    if cycle >= int(s.mad_ready[0]):
        return None
    seen, really = _reads(ins)
    # An operand slot wider than an LReg index names none (the semantics then raise on it).
    if any(s.mad_seen[r] for r in seen if r < LREGS):
        return MAD_HOLD_REASON
    stale = sorted(r for r in really if r < LREGS and s.mad_wrote[r])
    if stale:
        raise UndefinedBehavior(
            f"{ins.name} reads LReg[{stale[0]}] the cycle after an SFPMAD-family instruction wrote it, "
            "a read the hardware's stalling logic misses (SFPMAD.md): it would see the old value",
            cycle=cycle,
            value=ins.word,
        )
    return None


def mad_release_cycle(copro: Coprocessor, cycle: int) -> int | None:
    """When an SFPMAD-family result in flight at ``cycle`` is ready (None: none is)."""
    ready = int(copro.sfpu.mad_ready[0])
    return ready if ready >= cycle else None
