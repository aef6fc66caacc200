"""The vector unit's integer and bit instructions: SFPAND, SFPOR, SFPXOR, SFPNOT, SFPIADD, SFPSHFT,
SFPLZ, SFPABS, SFPEXEXP, SFPEXMAN, SFPSETEXP, SFPSETMAN and SFPSETSGN.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPAND.md, SFPOR.md,
SFPXOR.md, SFPNOT.md, SFPIADD.md, SFPSHFT.md, SFPLZ.md, SFPABS.md, SFPEXEXP.md, SFPEXMAN.md,
SFPSETEXP.md, SFPSETMAN.md and SFPSETSGN.md. State, lane enables, the backdoor load, the encoding
readings and the timing are sfpu/unit.py's (its docstring).
"""

from __future__ import annotations

import numpy as np

from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.sfpu.unit import (
    LANES,
    as_int32,
    signed12,
    simple_operands,
    write_lanes,
    write_with_flags,
)
from tensixsim.timing import SFPU


def bitwise(ctx: Context, vb: int, vc: int, vd: int, op: np.ufunc) -> Outcome:
    got = simple_operands(ctx, vd)
    if got is not None:
        s, lanes = got
        write_lanes(s, vd, op(s.lreg[vb], s.lreg[vc]), lanes)
    return Retire(SFPU.issue)


@semantics("SFPAND")
def sfpand(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    vb = ctx.documented("imm12_math", imm12_math, 4)
    return bitwise(ctx, vb if instr_mod1 & 1 else lreg_dest, lreg_c, lreg_dest, np.bitwise_and)


@semantics("SFPOR")
def sfpor(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    vb = ctx.documented("imm12_math", imm12_math, 4)
    return bitwise(ctx, vb if instr_mod1 & 1 else lreg_dest, lreg_c, lreg_dest, np.bitwise_or)


@semantics("SFPXOR", arches=("blackhole", "wormhole"))  # Wormhole's SFPXOR.md: the same
def sfpxor(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("instr_mod1", instr_mod1, 0)
    return bitwise(ctx, ctx.implicit_vb(lreg_dest), lreg_c, lreg_dest, np.bitwise_xor)


@semantics("SFPNOT", arches=("blackhole", "wormhole"))  # Wormhole's SFPNOT.md: the same
def sfpnot(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("instr_mod1", instr_mod1, 0)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        write_lanes(s, lreg_dest, ~s.lreg[lreg_c], lanes)
    return Retire(SFPU.issue)


IADD_ARG_IMM, IADD_2SCOMP_LREG_DST, IADD_CC_NONE, IADD_CC_GTE0 = 1, 2, 4, 8


@semantics("SFPIADD", arches=("blackhole", "wormhole"))  # Wormhole's SFPIADD.md: the same
def sfpiadd(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    got = simple_operands(ctx, lreg_dest)
    if got is None:
        return Retire(SFPU.issue)
    s, lanes = got
    vd, mod1 = lreg_dest, instr_mod1
    vb = ctx.implicit_vb(vd)
    c = s.lreg[lreg_c].astype(np.int64)
    if mod1 & IADD_ARG_IMM:
        result = c + signed12(imm12_math)
    elif mod1 & IADD_2SCOMP_LREG_DST:
        result = c - s.lreg[vb].astype(np.int64)
    else:
        result = c + s.lreg[vb].astype(np.int64)
    result = (result & 0xFFFFFFFF).astype(np.uint32)
    flags = s.lane_flags if mod1 & IADD_CC_NONE else as_int32(result) < 0
    write_with_flags(s, vd, result, lanes, flags, invert=bool(mod1 & IADD_CC_GTE0))
    return Retire(SFPU.issue)


SHFT_ARG_IMM, SHFT_ARITHMETIC, SHFT_ARG_IMM_USE_VC = 1, 2, 4


@semantics("SFPSHFT")
def sfpshft(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    got = simple_operands(ctx, lreg_dest)
    if got is None:
        return Retire(SFPU.issue)
    s, lanes = got
    mod1 = instr_mod1
    x = s.lreg[ctx.implicit_vb(lreg_dest)].astype(np.int64)
    amount = as_int32(s.lreg[lreg_c]).astype(np.int64)
    if mod1 & SHFT_ARG_IMM:
        if mod1 & SHFT_ARG_IMM_USE_VC:
            x = s.lreg[lreg_c].astype(np.int64)
        amount = np.full(LANES, signed12(imm12_math), np.int64)
    right = (-amount) & 31
    left = (x << (amount & 31)) & 0xFFFFFFFF
    signed = np.where(x >= 1 << 31, x - (1 << 32), x)
    shifted_right = (signed >> right if mod1 & SHFT_ARITHMETIC else x >> right) & 0xFFFFFFFF
    write_lanes(s, lreg_dest, np.where(amount >= 0, left, shifted_right).astype(np.uint32), lanes)
    return Retire(SFPU.issue)


LZ_CC_NE0, LZ_NOSGN_MASK, LZ_CC_COMP = 2, 4, 8


def clz32(c: np.ndarray) -> np.ndarray:
    """Leading zeros of 32-bit values (32 for zero)."""
    c = c.astype(np.uint64)
    bits = np.zeros(c.shape, np.int64)
    for shift in (16, 8, 4, 2, 1):
        big = c >= (np.uint64(1) << np.uint64(shift))
        bits = np.where(big, bits + shift, bits)
        c = np.where(big, c >> np.uint64(shift), c)
    bits = bits + (c != 0)  # the bit length
    return 32 - bits


@semantics("SFPLZ", arches=("blackhole", "wormhole"))  # Wormhole's SFPLZ.md: the same
def sfplz(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    got = simple_operands(ctx, lreg_dest)
    if got is None:
        return Retire(SFPU.issue)
    s, lanes = got
    mod1 = instr_mod1
    c = s.lreg[lreg_c].copy()
    if mod1 & LZ_NOSGN_MASK:
        c &= np.uint32(0x7FFFFFFF)
    flags = (c != 0) if mod1 & LZ_CC_NE0 else s.lane_flags
    write_with_flags(s, lreg_dest, clz32(c).astype(np.uint32), lanes, flags, invert=bool(mod1 & LZ_CC_COMP))
    return Retire(SFPU.issue)


@semantics("SFPABS", arches=("blackhole", "wormhole"))  # Wormhole's SFPABS.md: the same
def sfpabs(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        x = s.lreg[lreg_c].astype(np.int64)
        negative = x >= 0x80000000
        if instr_mod1 & 1:
            result = np.where(negative & (x <= 0xFF800000), x & 0x7FFFFFFF, x)
        else:
            result = np.where(negative, (-x) & 0xFFFFFFFF, x)
        write_lanes(s, lreg_dest, result.astype(np.uint32), lanes)
    return Retire(SFPU.issue)


EXEXP_NODEBIAS, EXEXP_SET_CC_SGN_EXP, EXEXP_SET_CC_COMP_EXP = 1, 2, 8


@semantics("SFPEXEXP", arches=("blackhole", "wormhole"))  # Wormhole's SFPEXEXP.md: the same
def sfpexexp(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    got = simple_operands(ctx, lreg_dest)
    if got is None:
        return Retire(SFPU.issue)
    s, lanes = got
    mod1 = instr_mod1
    exp = ((s.lreg[lreg_c] >> 23) & 0xFF).astype(np.int64) - (0 if mod1 & EXEXP_NODEBIAS else 127)
    flags = (exp < 0) if mod1 & EXEXP_SET_CC_SGN_EXP else s.lane_flags
    result = (exp & 0xFFFFFFFF).astype(np.uint32)
    write_with_flags(s, lreg_dest, result, lanes, flags, invert=bool(mod1 & EXEXP_SET_CC_COMP_EXP))
    return Retire(SFPU.issue)


@semantics("SFPEXMAN", arches=("blackhole", "wormhole"))  # Wormhole's SFPEXMAN.md: the same
def sfpexman(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        hidden = 0 if instr_mod1 & 1 else 1 << 23
        write_lanes(s, lreg_dest, (s.lreg[lreg_c] & np.uint32(0x7FFFFF)) + np.uint32(hidden), lanes)
    return Retire(SFPU.issue)


_SIGN, _EXP, _MAN = np.uint32(0x80000000), np.uint32(0x7F800000), np.uint32(0x7FFFFF)


@semantics("SFPSETEXP", arches=("blackhole", "wormhole"))  # Wormhole's SFPSETEXP.md: the same
def sfpsetexp(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    imm8 = ctx.documented("imm12_math", imm12_math, 8)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        c, b = s.lreg[lreg_c], s.lreg[ctx.implicit_vb(lreg_dest)]
        if instr_mod1 & 1:
            exp = np.full(LANES, imm8, np.uint32)
        elif instr_mod1 & 2:
            exp = (b >> 23) & 0xFF
        else:
            exp = b & 0xFF
        write_lanes(s, lreg_dest, (c & _SIGN) | (exp.astype(np.uint32) << 23) | (c & _MAN), lanes)
    return Retire(SFPU.issue)


@semantics("SFPSETMAN", arches=("blackhole", "wormhole"))  # Wormhole's SFPSETMAN.md: the same
def sfpsetman(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        c = s.lreg[lreg_c]
        man = np.uint32(imm12_math << 11) if instr_mod1 & 1 else s.lreg[ctx.implicit_vb(lreg_dest)] & _MAN
        write_lanes(s, lreg_dest, (c & (_SIGN | _EXP)) | man, lanes)
    return Retire(SFPU.issue)


@semantics("SFPSETSGN", arches=("blackhole", "wormhole"))  # Wormhole's SFPSETSGN.md: the same
def sfpsetsgn(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    imm1 = ctx.documented("imm12_math", imm12_math, 1)
    got = simple_operands(ctx, lreg_dest)
    if got is not None:
        s, lanes = got
        c = s.lreg[lreg_c]
        sign = np.uint32(imm1 << 31) if instr_mod1 & 1 else s.lreg[ctx.implicit_vb(lreg_dest)] & _SIGN
        write_lanes(s, lreg_dest, sign | (c & ~_SIGN), lanes)
    return Retire(SFPU.issue)
