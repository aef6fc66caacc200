"""Matrix-unit moves between SrcA, SrcB and Dst: MOVA2D, MOVDBGA2D, MOVB2D, MOVD2A, MOVD2B, MOVB2A.

Functional model: tt-isa-documentation WormholeB0 MOVA2D.md, MOVDBGA2D.md, MOVB2D.md, MOVD2A.md,
MOVD2B.md and the jasondavies fork's MOVB2A.md; RWCs.md (ApplyAddrMod, via adc.apply_addr_mod); the
BlackholeA0 Dst.md (row mapping, via regs.py). No BlackholeA0 page covers these instructions, so the
Wormhole functional models are applied with the Blackhole encoding below.

MOVDBGA2D is MOVA2D without the wait for ``SrcA[MatrixUnit.SrcABank].AllowedClient == MatrixUnit``
(its page: "identical to MOVA2D", "ignoring the paragraph about the Wait Gate"): it reads the matrix
unit's SrcA bank whoever owns it. Its encoding, scheduling hold and everything else are MOVA2D's.
MOVDBGB2D (Blackhole opcode 0x0C) has no page and stays unimplemented.

Blackhole encoding (Wormhole's: matrix/wormhole.py, calling the same bodies)
------------------------------------------------------------------------------
The Blackhole table keeps every Wormhole field at its bit position except AddrMod, which is three bits
(14..16, naming the ADDR_MOD slot directly, as in adc.py and regs.py's ZEROACC):

- MOVA2D / MOVDBGA2D / MOVD2A / MOVD2B: ``dest_32b_lo`` is UseDst32bLo, ``src`` SrcRow, ``addr_mode``
  AddrMod, ``instr_mod`` bit 1 (word bit 13) Move8Rows (MOVA2D / MOVDBGA2D) or Move4Rows (MOVD2A /
  MOVD2B), ``dst`` bits 0..9 DstRow.
- MOVB2D: the table slot ``movb2d_instr_mod`` sits at bits 11..13, one bit lower than Wormhole's
  12..14. It holds the documented syntax's third operand, ``Move4Rows << 2 | Broadcast1RowTo8 << 1 |
  BroadcastCol0`` (tt-llk's Blackhole p_movb2d values agree), and ``dst`` bits 0..9 are DstRow.
- MOVB2A: ``srca`` bits 0..5 are SrcARow, ``instr_mod`` bit 1 Move4Rows, ``srcb`` bits 0..5 SrcBRow.

Set bits of a slot beyond its documented operand (``instr_mod`` bit 0, ``dst`` bits 10.., ``srca``
bit 6, ``srcb`` bits 6..) raise UndefinedBehavior, the rule of adc.py and regs.py.

Points the pages leave open, and the readings taken
---------------------------------------------------
- MOVD2A / MOVD2B ``ShuffleTF32``: the page masks Sign and HiMan with ``0x3fc000``, which lies mostly
  above the 19 bits of its operand and contradicts the layouts its own comments give (Dst TF32 is
  Sign,HiMan(7b),Exp(8b),LoMan(3b); Src TF32 is Sign,Man(10b),Exp(8b)). Sign and HiMan already sit at
  bits 11..18 of the operand, so the mask used is ``0x7f800``; with it ShuffleTF32 inverts MOVA2D's
  TF32 path, as the comments describe. This is a correction of an evident typo, not the literal text.
- MOVD2A / MOVD2B's format choice ends in ``else /* SrcAFmt == TF32 */``: SrcAFmt codes 12 and 13
  name no format (Packers/FormatConversion.md) and raise UndefinedBehavior there. MOVA2D / MOVB2D
  spell out their sets, so codes 12 / 13 simply use the 5-bit-exponent path.
- MOVD2A / MOVD2B / MOVB2A write the matrix unit's current SrcA / SrcB bank without waiting for it to
  be handed over (the pages say so and recommend STALLWAIT); the write happens whoever owns the bank,
  as the functional model states. MOVA2D / MOVB2D / MOVB2A wait (Wait) until the bank they read is
  the matrix unit's.
- ``LaneConfig[Column / 2].BLOCK_DEST_MOV`` is Vector Unit (SFPU) state set by SFPCONFIG; the
  simulator has no SFPU state yet, so every lane reads as its reset value zero (no column blocked;
  SoftReset.md). :func:`blocked_columns` is the one place to wire it; the rest honours the mask.
- Dst row validity (regs.py): reads see an undefined row as zero (the identity for moves). A move that
  leaves columns unwritten (blocked lanes, or the kept high half of a UseDst32bLo write) rewrites those
  columns with the value a reader saw, so every written row becomes defined.

Timing: each occupies the matrix unit one cycle (throughput one per cycle, MatrixUnit.md). Their
latency shows as the stalls the pages' "Instruction scheduling" sections describe (:data:`HOLDS`):
after MOVA2D / MOVDBGA2D / MOVB2D the listed Dst readers wait three cycles, after MOVD2A / MOVB2A every other
matrix-unit instruction waits one, after MOVD2B three. MOVA2D / MOVB2D's Dst writes also follow
Dst.md's rule (the block written is unreadable for four cycles) and MOVD2A / MOVD2B wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix.formats import (
    BF16,
    BFP2,
    BFP2A,
    BFP4,
    BFP4A,
    BFP8,
    BFP8A,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.matrix.addressing import BLACKHOLE, AddrModRule
from tensixsim.tensix.regs import (
    DST_COLS,
    ROW_MASK,
    SRCA,
    SRCB,
    SrcClient,
    bank_not_handed_to_matrix,
    dst_hidden,
    dst_mapping,
)
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.timing import MATRIX

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

EIGHT_BIT_EXPONENT = frozenset({FP32, TF32, BF16, BFP8, BFP4, BFP2, INT32, INT16})
BF16_STYLE = frozenset({FP32, BF16, BFP8, BFP4, BFP2, INT32, INT16})
FP16_STYLE = frozenset({FP16, FP8, BFP8A, BFP4A, BFP2A, INT8})

_SRC_ROW_MASK = 0x3F
_U32 = np.uint32


def blocked_columns(copro: Coprocessor) -> np.ndarray:
    """``LaneConfig[Column / 2].BLOCK_DEST_MOV.Bit[Column & 1]`` for the 16 columns (all clear: see the
    module docstring)."""
    return np.zeros(DST_COLS, bool)


# ------------------------------------------------------------------------------ layout shuffles
# The pages' supporting definitions, on arrays of raw bits (register layout to register layout).


def remove_low_mantissa(x: np.ndarray) -> np.ndarray:
    """Src Sign,Man(10),Exp(8) -> Dst16 BF16 Sign,Man(7),Exp(8): the top 7 mantissa bits kept."""
    x = x.astype(_U32)
    return ((x & _U32(1 << 18)) >> 3) | ((x & _U32(0x7F << 11)) >> 3) | (x & _U32(0xFF))


def remove_high_exponent(x: np.ndarray) -> np.ndarray:
    """Src Sign,Man(10),Exp(8) -> Dst16 FP16 Sign,Man(10),Exp(5): the low 5 exponent bits kept."""
    x = x.astype(_U32)
    return ((x & _U32(1 << 18)) >> 3) | ((x & _U32(0x3FF << 8)) >> 3) | (x & _U32(0x1F))


def shuffle_bf16(x: np.ndarray) -> np.ndarray:
    """Dst16 BF16 (16 bits) -> Src BF16."""
    x = x.astype(_U32) & _U32(0xFFFF)
    return ((x & _U32(0xFF00)) << 3) | (x & _U32(0xFF))


def shuffle_fp16(x: np.ndarray) -> np.ndarray:
    """Dst16 FP16 (16 bits) -> Src FP16 (three zero bits between mantissa and exponent)."""
    x = x.astype(_U32) & _U32(0xFFFF)
    return ((x & _U32(0xFFE0)) << 3) | (x & _U32(0x1F))


def shuffle_tf32(x: np.ndarray) -> np.ndarray:
    """Dst TF32 Sign,HiMan(7),Exp(8),LoMan(3) (19 bits) -> Src TF32 (mask corrected: see docstring)."""
    x = x.astype(_U32)
    return (x & _U32(0x7F800)) | ((x & _U32(0x7)) << 8) | ((x & _U32(0x7F8)) >> 3)


# ------------------------------------------------------------------------------ shared steps


def _row_flag(ctx: Context, name: str, value: int) -> bool:
    """An ``instr_mod`` slot whose bit 1 is the documented flag; its other bits are undocumented."""
    if value & ~2:
        raise ctx.error(UndefinedBehavior, f"{name}={value:#x} sets bits no operand has", value)
    return bool(value >> 1)


def src_format(copro: Coprocessor, thread: int) -> int:
    """SrcAFmt: ALU_FORMAT_SPEC_REG_SrcA_val if overridden, else ALU_FORMAT_SPEC_REG0_SrcA."""
    field = copro.config.field_for_thread
    if field("ALU_FORMAT_SPEC_REG_SrcA_override", thread):
        return field("ALU_FORMAT_SPEC_REG_SrcA_val", thread)
    return field("ALU_FORMAT_SPEC_REG0_SrcA", thread)


def _src_format(ctx: Context) -> int:
    return src_format(ctx.copro, ctx.thread)


def src_style(fmt: int) -> int | None:
    """The pages' SrcAStyle for format code ``fmt``: BF16, FP16 or TF32 (None: 12 / 13 name no format)."""
    if fmt in BF16_STYLE:
        return BF16
    if fmt in FP16_STYLE:
        return FP16
    return TF32 if fmt == TF32 else None


def _flush_denormals(ctx: Context) -> bool:
    return not ctx.copro.config.field_for_thread("ALU_ACC_CTRL_Zero_Flag_disabled_src", ctx.thread)


def _dst_base(ctx: Context, dst_row: int) -> int:
    """DstRow plus the math Dst offsets and the Dst RWC (before masking)."""
    field = ctx.copro.config.field_for_thread
    return (
        dst_row
        + field("DEST_TARGET_REG_CFG_MATH_Offset", ctx.thread)
        + int(ctx.copro.adc.dst[ctx.thread])
        + field("DEST_REGW_BASE_Base", ctx.thread)
    )


def _owned(ctx: Context, file: int) -> bool:
    regs = ctx.copro.regs
    return int(regs.src_client[file, int(regs.matrix_bank[file])]) == SrcClient.MATRIX_UNIT


def _flush(values: np.ndarray, flush: bool) -> np.ndarray:
    if not flush:
        return values
    return np.where((values & _U32(0xFF)) == 0, _U32(0), values).astype(_U32)


@dataclass
class _DstWrite:
    """Rows of Dst to write: the Dst16b / Dst32b row indices and their full new contents."""

    rows: np.ndarray
    values: np.ndarray
    wide: bool


def _to_dst(ctx: Context, src_values: np.ndarray, dst_rows: np.ndarray, use_dst32b_lo: int) -> _DstWrite:
    """MOVA2D / MOVB2D's per-datum conversion of (rows, 16) Src datums into Dst rows ``dst_rows``."""
    copro, thread = ctx.copro, ctx.thread
    regs, blocked = copro.regs, blocked_columns(copro)
    remap, swizzle = dst_mapping(copro, thread)
    fmt = _src_format(ctx)
    if copro.config.field_for_thread("FP16A_FORCE_Enable", thread):
        use_8b_exponent = False
    else:
        use_8b_exponent = fmt in EIGHT_BIT_EXPONENT
    values = _flush(src_values.astype(_U32), _flush_denormals(ctx))
    val16 = remove_low_mantissa(values) if use_8b_exponent else remove_high_exponent(values)
    wide = fmt == TF32 or bool(use_dst32b_lo)
    if wide:
        old = regs.read32(dst_rows, remap=remap, swizzle=swizzle)
    else:
        old = regs.read16(dst_rows, remap=remap).astype(_U32)
    if fmt == TF32:
        low = ((values >> 8) & _U32(7)) << 13
        if use_dst32b_lo:
            low |= val16
        new = (val16 << 16) | low
    elif use_dst32b_lo:
        new = (old & _U32(0xFFFF0000)) | val16
    else:
        new = val16
    return _DstWrite(dst_rows, np.where(blocked, old, new).astype(_U32), wide)


def _write_dst(ctx: Context, write: _DstWrite) -> None:
    regs = ctx.copro.regs
    remap, swizzle = dst_mapping(ctx.copro, ctx.thread)
    if write.wide:
        regs.write32(write.rows, write.values, remap=remap, swizzle=swizzle)
    else:
        regs.write16(write.rows, write.values.astype(np.uint16), remap=remap)
    storage = regs.storage_rows(write.rows, wide=write.wide, remap=remap, swizzle=swizzle)
    regs.written(storage, ctx.cycle, MATRIX.dst_write_hidden)


def _dst_read_stall(ctx: Context, dst_rows: np.ndarray) -> Wait | None:
    """Dst.md's read-after-write stall for MOVD2A / MOVD2B reading ``dst_rows``."""
    copro, thread = ctx.copro, ctx.thread
    field = copro.config.field_for_thread
    wide = not field("FP16A_FORCE_Enable", thread) and _uses_dst32(ctx)
    remap, swizzle = dst_mapping(copro, thread)
    regs = copro.regs
    ready = regs.readable_from(regs.storage_rows(dst_rows, wide=wide, remap=remap, swizzle=swizzle))
    if ready > ctx.cycle:
        return Wait(dst_hidden(ready), until=ready)
    return None


# ------------------------------------------------------------------------------ scheduling holds
# MOVA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md, MOVB2A.md "Instruction scheduling": after a move issues,
# for ``cycles`` cycles the matrix unit holds the instructions listed (None: every matrix-unit
# instruction except ``allowed``).
_DST_READERS = frozenset(
    {"MOVD2A", "MOVD2B", "ELWMUL", "MVMUL", "DOTPV", "GMPOOL", "GAPOOL", "MFCONV3S1", "CONV3S1", "MPOOL3S1"}
    | {"APOOL3S1", "CONV3S2", "MPOOL3S2", "APOOL3S2"}
)
HOLDS: dict[str, tuple[int, frozenset[str] | None, frozenset[str]]] = {
    "MOVA2D": (3, _DST_READERS, frozenset()),
    "MOVDBGA2D": (3, _DST_READERS, frozenset()),
    "MOVB2D": (3, _DST_READERS, frozenset()),
    "MOVD2A": (1, None, frozenset({"MOVD2A", "MOVB2A"})),
    "MOVB2A": (1, None, frozenset({"MOVD2A", "MOVB2A"})),
    "MOVD2B": (3, None, frozenset({"MOVD2B"})),
}
_HOLD_NAMES = tuple(HOLDS)


def _hold(ctx: Context, srca_row: int | np.integer) -> None:
    """The move in ``ctx`` issued, having computed SrcA row address ``srca_row`` (-1: none the pages
    give; see matrix/src_shifts.py's SHIFTXA): start its hold."""
    regs = ctx.copro.regs
    cycles = HOLDS[ctx.instruction.name][0]
    regs.move_hold[:] = (_HOLD_NAMES.index(ctx.instruction.name) + 1, ctx.cycle + cycles + 1)
    regs.srca_row_latch[0] = srca_row


def held_until(copro: Coprocessor, name: str, cycle: int) -> int | None:
    """The cycle until which the matrix unit holds matrix-unit instruction ``name`` at ``cycle``."""
    kind, until = (int(v) for v in copro.regs.move_hold)
    if not kind or cycle >= until:
        return None
    _, held, allowed = HOLDS[_HOLD_NAMES[kind - 1]]
    if name in allowed or (held is not None and name not in held):
        return None
    return until


def _uses_dst32(ctx: Context) -> bool:
    """MOVD2A / MOVD2B read Dst32b unless FP16A_FORCE_Enable (checked by the caller)."""
    field = ctx.copro.config.field_for_thread
    return bool(
        field("ALU_ACC_CTRL_Fp32_enabled", ctx.thread) or field("ALU_ACC_CTRL_INT8_math_enabled", ctx.thread)
    )


def _from_dst(ctx: Context, dst_rows: np.ndarray, use_dst32b_lo: int) -> np.ndarray:
    """MOVD2A / MOVD2B's per-datum conversion of Dst rows ``dst_rows`` into (rows, 16) Src datums
    (blocked columns left for the caller to restore)."""
    copro, thread = ctx.copro, ctx.thread
    regs, field = copro.regs, copro.config.field_for_thread
    remap, swizzle = dst_mapping(copro, thread)
    if field("FP16A_FORCE_Enable", thread):
        use_dst32b, style = False, FP16
    else:
        fmt = _src_format(ctx)
        use_dst32b = _uses_dst32(ctx)
        style = src_style(fmt)
        if style is None:
            raise ctx.error(UndefinedBehavior, f"SrcA format code {fmt} names no data format", fmt)
    any_column = not blocked_columns(copro).all()
    if use_dst32b:
        value = regs.read32(dst_rows, remap=remap, swizzle=swizzle).astype(_U32)
        if use_dst32b_lo:
            value = (value << 16) | (value & _U32(0xFFFF))
        if style == BF16:
            return shuffle_bf16(value >> 16)
        if style == FP16:
            return shuffle_fp16(value >> 16)
        if not use_dst32b_lo:
            return shuffle_tf32(value >> 13)
        return value & _U32(0x1FFF)
    if any_column and use_dst32b_lo:
        raise ctx.error(UndefinedBehavior, "UseDst32bLo with Dst in 16-bit mode")
    if any_column and style == TF32:
        raise ctx.error(UndefinedBehavior, "TF32 from Dst in 16-bit mode")
    value = regs.read16(dst_rows, remap=remap).astype(_U32)
    return shuffle_bf16(value) if style == BF16 else shuffle_fp16(value)


def _src_rows(ctx: Context, file: int, row: int, count: int) -> np.ndarray:
    rwc = ctx.copro.adc.srca if file == SRCA else ctx.copro.adc.srcb
    mask = _SRC_ROW_MASK & ~(count - 1)
    return (row + int(rwc[ctx.thread])) & mask


def _dst_rows(ctx: Context, dst_row: int, count: int) -> np.ndarray:
    start = _dst_base(ctx, dst_row) & ROW_MASK & ~(count - 1)
    return np.arange(start, start + count)


def _merge_src(ctx: Context, file: int, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` for the matrix unit's bank of ``file`` at ``rows``, blocked columns unchanged."""
    regs = ctx.copro.regs
    old = regs.src(file)[int(regs.matrix_bank[file]), rows]
    return np.where(blocked_columns(ctx.copro), old, values).astype(np.uint32)


def _write_src(ctx: Context, file: int, rows: np.ndarray, values: np.ndarray) -> None:
    regs = ctx.copro.regs
    regs.src(file)[int(regs.matrix_bank[file]), rows] = values


# ------------------------------------------------------------------------------ semantics


@semantics("MOVA2D")
def mova2d(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _mova2d(ctx, BLACKHOLE, dest_32b_lo, src, addr_mode, instr_mod, dst, wait_gate=True)


@semantics("MOVDBGA2D")
def movdbga2d(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _mova2d(ctx, BLACKHOLE, dest_32b_lo, src, addr_mode, instr_mod, dst, wait_gate=False)


def _mova2d(
    ctx: Context,
    rule: AddrModRule,
    dest_32b_lo: int,
    src: int,
    addr_mode: int,
    instr_mod: int,
    dst: int,
    *,
    wait_gate: bool,
) -> Outcome:
    rule.operand(ctx, "addr_mode", addr_mode)
    move8 = _row_flag(ctx, "instr_mod", instr_mod)
    dst_row = ctx.documented("dst", dst, 10)
    if wait_gate and not _owned(ctx, SRCA):
        return Wait(bank_not_handed_to_matrix(SRCA))
    count = 8 if move8 else 1
    src_start = _src_rows(ctx, SRCA, src, count)
    regs = ctx.copro.regs
    data = regs.srca[int(regs.matrix_bank[SRCA]), src_start + np.arange(count)]
    write = _to_dst(ctx, data, _dst_rows(ctx, dst_row, count), dest_32b_lo)
    rule.apply(ctx, addr_mode)
    _write_dst(ctx, write)
    _hold(ctx, src_start)
    return Retire()


@semantics("MOVB2D")
def movb2d(
    ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, movb2d_instr_mod: int, dst: int
) -> Outcome:
    return _movb2d(ctx, BLACKHOLE, dest_32b_lo, src, addr_mode, movb2d_instr_mod, dst)


def _movb2d(
    ctx: Context, rule: AddrModRule, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int
) -> Outcome:
    """MOVB2D.md's model; ``instr_mod`` is its syntax's third operand (all three bits documented)."""
    rule.operand(ctx, "addr_mode", addr_mode)
    broadcast_col0 = instr_mod & 1
    broadcast_1_row_to_8 = instr_mod >> 1 & 1
    move4 = instr_mod >> 2 & 1
    dst_row = ctx.documented("dst", dst, 10)
    if not _owned(ctx, SRCB):
        return Wait(bank_not_handed_to_matrix(SRCB))
    regs = ctx.copro.regs
    if broadcast_1_row_to_8:
        count, src_rows = 8, np.full(8, _src_rows(ctx, SRCB, src, 1))
    else:
        count = 4 if move4 else 1
        src_rows = _src_rows(ctx, SRCB, src, count) + np.arange(count)
    data = regs.srcb[int(regs.matrix_bank[SRCB]), src_rows]
    if broadcast_col0:
        data = np.repeat(data[:, :1], DST_COLS, axis=1)
    write = _to_dst(ctx, data, _dst_rows(ctx, dst_row, count), dest_32b_lo)
    rule.apply(ctx, addr_mode)
    _write_dst(ctx, write)
    _hold(ctx, -1)
    return Retire()


def _movd2src(
    ctx: Context,
    rule: AddrModRule,
    file: int,
    dest_32b_lo: int,
    src: int,
    addr_mode: int,
    instr_mod: int,
    dst: int,
) -> Outcome:
    rule.operand(ctx, "addr_mode", addr_mode)
    move4 = _row_flag(ctx, "instr_mod", instr_mod)
    dst_row = ctx.documented("dst", dst, 10)
    count = 4 if move4 else 1
    src_rows = _src_rows(ctx, file, src, count) + np.arange(count)
    dst_rows = _dst_rows(ctx, dst_row, count)
    stall = _dst_read_stall(ctx, dst_rows)
    if stall is not None:
        return stall
    values = _merge_src(ctx, file, src_rows, _from_dst(ctx, dst_rows, dest_32b_lo))
    rule.apply(ctx, addr_mode)
    _write_src(ctx, file, src_rows, values)
    _hold(ctx, src_rows[0] if file == SRCA else -1)
    return Retire()


@semantics("MOVD2A")
def movd2a(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _movd2src(ctx, BLACKHOLE, SRCA, dest_32b_lo, src, addr_mode, instr_mod, dst)


@semantics("MOVD2B")
def movd2b(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _movd2src(ctx, BLACKHOLE, SRCB, dest_32b_lo, src, addr_mode, instr_mod, dst)


@semantics("MOVB2A")
def movb2a(ctx: Context, srca: int, addr_mode: int, instr_mod: int, srcb: int) -> Outcome:
    return _movb2a(ctx, BLACKHOLE, srca, addr_mode, instr_mod, srcb)


def _movb2a(ctx: Context, rule: AddrModRule, srca: int, addr_mode: int, instr_mod: int, srcb: int) -> Outcome:
    rule.operand(ctx, "addr_mode", addr_mode)
    srca_row = ctx.documented("srca", srca, 6)
    move4 = _row_flag(ctx, "instr_mod", instr_mod)
    srcb_row = ctx.documented("srcb", srcb, 6)
    if not _owned(ctx, SRCB):
        return Wait(bank_not_handed_to_matrix(SRCB))
    count = 4 if move4 else 1
    regs = ctx.copro.regs
    b_rows = _src_rows(ctx, SRCB, srcb_row, count) + np.arange(count)
    a_rows = _src_rows(ctx, SRCA, srca_row, count) + np.arange(count)
    data = _flush(regs.srcb[int(regs.matrix_bank[SRCB]), b_rows].astype(_U32), _flush_denormals(ctx))
    values = _merge_src(ctx, SRCA, a_rows, data)
    rule.apply(ctx, addr_mode)
    _write_src(ctx, SRCA, a_rows, values)
    _hold(ctx, a_rows[0])
    return Retire()
