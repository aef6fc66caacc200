"""The matrix unit's arithmetic: MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD, ELWSUB and GMPOOL.

Functional model: tt-isa-documentation WormholeB0 MVMUL.md, DOTPV.md, GAPOOL.md, ELWMUL.md, ELWADD.md,
ELWSUB.md, GMPOOL.md, MatrixUnit.md, Dst.md ("Instruction scheduling") and RWCs.md (ApplyAddrMod, via
adc.py). No BlackholeA0 page covers these instructions, so the Wormhole models are applied with the
Blackhole encoding below, as for the data moves (matrix/moves.py).

Blackhole encoding (Wormhole's: matrix/wormhole.py, calling the same bodies)
------------------------------------------------------------------------------
``clear_dvalid`` (bits 22..23) is ``FlipSrcB << 1 | FlipSrcA``. AddrMod is three bits naming the
ADDR_MOD slot: ``addr_mode`` bits 0..2 (bits 14..16 of the word), or for GMPOOL / GAPOOL
``pool_addr_mode`` bits 0..2 (15..17), with ``max_pool_index_en`` (bit 14) GMPOOL's ArgMax. ``dst``
bits 0..9 are DstRow.

- MVMUL: ``instr_mod19`` bit 0 is BroadcastSrcBRow.
- ELWADD / ELWSUB: ``dest_accum_en`` is AddDst; ``instr_mod19`` is ``BroadcastSrcBRow << 1 |
  BroadcastSrcBCol0``. ELWMUL has the same ``instr_mod19``; its model always accumulates, so
  ``dest_accum_en`` is ignored (the page's syntax passes 1, tt-llk passes 0).
- DOTPV: ``instr_mod19`` must be 0 (BroadcastSrcBRow is always false); ``dest_accum_en`` is ignored.
- GMPOOL: ``instr_mod19`` 1 is the documented 16x16 pooling (tt-llk's DIM_16X16); other values name
  pooling shapes no page describes and raise Unimplemented.
- GAPOOL: ``instr_mod19`` 0 (the page's syntax) or 1 (tt-llk) is accepted and ignored;
  ``max_pool_index_en`` must be 0.

Set bits of a slot beyond its documented operand raise UndefinedBehavior (the rule of adc.py and
matrix/moves.py), before anything changes.

The arithmetic, where the pages are open
----------------------------------------
The pages call helpers they never define (ReadBF16, RoundToBF16, ...) and warn that their float
arithmetic is "a rough guide". The emulator fixes one model, bit-exact and deterministic:

- ``FTZ``: an fp32 value with a zero exponent field (zero or denormal, either sign) becomes +0.
- Src reads: BF16 is sign, exponent and the top 7 of the 10 mantissa bits; TF32 all 10; FP16 the low
  5 exponent bits rebiased by +112 (exponent 31 an ordinary binade); exponent 0 reads as +0.
  SrcAFidelityBits / SrcBFidelityBits are the pages' masks, then FTZ.
- Every float operation is one IEEE fp32 operation (round to nearest even) followed by FTZ.
  MVMUL / DOTPV / GAPOOL sum ``x = FTZ(x + FTZ(B[i][k] * A[k][j]))`` for k = 0..15 in order from
  +0, then ``x = FTZ(x + Dst)``. ELWMUL: ``FTZ(FTZ(A * B) + Dst)``. ELWADD / ELWSUB: ``FTZ(A +/- B)``,
  divided by 32 / 128 for odd fidelity bits as the page says, then ``+ Dst`` if AddDst.
- Dst reads: Dst32b FP32, Dst16b BF16 or FP16 (formats.py layouts), FTZ; undefined rows read as
  zero (for GMPOOL: all bits set, its minus infinity). Dst writes: FP32 with FTZ; RoundToBF16 /
  RoundToFP16 round to nearest with ties away from zero (the coprocessor's rounding,
  FloatBitPatterns.md; the packers use the same), FP16 saturating at exponent 31 mantissa 1023 and
  flushing below 2**-14. A NaN is written as one canonical quiet NaN.
- Infinity and NaN follow IEEE fp32 arithmetic; the hardware's non-IEEE handling is undocumented.
- Integers (ALU_ACC_CTRL_INT8_math_enabled): exact, with ``SaturateAddInt32`` clamping at
  +-(2**31 - 1).
- SrcAFmt codes 12 and 13 name no format: UndefinedBehavior. SrcA / SrcB rows beyond 63 (an RWC
  that runs the 16-row SrcA window past the bank) are UndefinedBehavior.

Silicon rounds inside its adder tree in ways no page describes; results can differ from a card in the
last bits (docs/deviations.md).

Timing
------
Each instruction occupies the matrix unit one cycle (one per fidelity phase is the program's loop).
After an instruction writes Dst, the aligned 8x16 blocks it wrote cannot be read for four cycles: an
instruction that reads them (every accumulating one, ELWADD / ELWSUB with AddDst) waits
(``regs.RegFiles.readable_from``). Results are written at issue; the latency shows only through
that stall.

Fast path: matrix/runs.py executes a run of MVMULs from one MOP / replay expansion as a few
vectorised operations, with the same results and issue cycles as one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix import formats
from tensixsim.tensix.adc import Rwcs, read_rwcs
from tensixsim.tensix.formats import BF16, FP16, INT8, TF32, Rounding
from tensixsim.tensix.matrix.addressing import BLACKHOLE, AddrModRule
from tensixsim.tensix.matrix.moves import src_format, src_style
from tensixsim.tensix.regs import (
    DST_COLS,
    SRC_ROWS,
    SRCA,
    SRCB,
    SrcClient,
    clear_src_valid,
    dst_hidden,
    dst_mapping,
)
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.timing import MATRIX

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

_F32, _U32 = np.float32, np.uint32
_EXP32 = _U32(0x7F80_0000)
_CANONICAL_NAN = _U32(0x7FC0_0000)
K = 16  # the inner dimension of one MVMUL: SrcA rows, SrcB columns


# ------------------------------------------------------------------------------ number handling
# Pure functions on numpy arrays of any shape: raw bits in, fp32 / int64 values out, and back.


def ftz(x: np.ndarray) -> np.ndarray:
    """Zero and denormal fp32 values (either sign) become +0."""
    x = np.asarray(x, _F32)
    return np.where((x.view(_U32) & _EXP32) == 0, _F32(0), x)


def read_src(bits: np.ndarray, style: int) -> np.ndarray:
    """19-bit Src datums as fp32 values, in the BF16, TF32 or FP16 style."""
    b = np.asarray(bits).astype(_U32)
    sign = (b >> _U32(18) & _U32(1)) << _U32(31)
    man10 = b >> _U32(8) & _U32(0x3FF)
    if style == FP16:
        exp = b & _U32(0x1F)
        exp32 = exp + _U32(112)
    else:
        exp = exp32 = b & _U32(0xFF)
    man = (man10 >> _U32(3)) << _U32(16) if style == BF16 else man10 << _U32(13)
    out = np.where(exp == 0, _U32(0), sign | (exp32 << _U32(23)) | man).astype(_U32)
    return out.view(_F32)


def src_a_fidelity_bits(x: np.ndarray, phase: np.ndarray | int) -> np.ndarray:
    """The SrcA mantissa slice a fidelity phase consumes (SrcAFidelityBits), FTZ."""
    u = np.asarray(x, _F32).view(_U32)
    high = (u & _U32(0xFFF8_0000)).view(_F32)
    with np.errstate(all="ignore"):  # infinity minus infinity: NaN, as fp32 gives
        rest = x - (u & _U32(0xFFF8_3FFF)).view(_F32)
    return ftz(np.where((np.asarray(phase) & 1) != 0, rest, high))


def src_b_fidelity_bits(x: np.ndarray, phase: np.ndarray | int) -> np.ndarray:
    """The SrcB mantissa slice a fidelity phase consumes (SrcBFidelityBits), FTZ."""
    u = np.asarray(x, _F32).view(_U32)
    high = (u & _U32(0xFFFE_0000)).view(_F32)
    with np.errstate(all="ignore"):
        rest = x - (u & _U32(0xFFFE_1FFF)).view(_F32)
    return ftz(np.where((np.asarray(phase) & 2) != 0, rest, high))


def read_src_int8(bits: np.ndarray) -> np.ndarray:
    """Src Integer "8" (sign bit 18, magnitude bits 8..17) as int64."""
    b = np.asarray(bits).astype(np.int64)
    mag = b >> 8 & 0x3FF
    return np.where(b >> 18 & 1, -mag, mag)


def int8_fidelity_masks(phase: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """The SrcA and SrcB bit masks an integer fidelity phase applies."""
    phase = np.asarray(phase)
    a = np.where(phase & 1, 0x41FFF, 0x4E0FF).astype(_U32)
    b = np.where(phase & 2, 0x40FFF, 0x7F0FF).astype(_U32)
    return a, b


def dot16(b: np.ndarray, a: np.ndarray, *, safe: bool | None = None) -> np.ndarray:
    """``b @ a`` over the last two axes with the model's fp32 order: k = 0..15 from +0, FTZ each step.

    ``b``: (..., rows, 16), ``a``: (..., 16, 16) fp32 fidelity slices. ``safe``: the caller knows
    whether :func:`no_underflow` holds for them (None: work it out).
    """
    x = np.zeros((*b.shape[:-1], a.shape[-1]), _F32)
    with np.errstate(all="ignore"):
        if safe if safe is not None else no_underflow(b, a):
            if b.ndim == 2:
                # One instruction: numpy reduces a non-contiguous axis element by element in index
                # order, the same sums in one call; it starts from the first product, so + 0 turns a
                # -0 that +0 + -0 would not have left back into +0.
                return np.add.reduce(b[:, :, None] * a[None, :, :], axis=1) + _F32(0)
            for k in range(K):
                x += b[..., :, k, None] * a[..., None, k, :]
            return x
        for k in range(K):
            x = ftz(x + ftz(b[..., :, k, None] * a[..., None, k, :]))
    return x


SAFE_PRODUCT = 2.0**-103


def no_underflow(b: np.ndarray, a: np.ndarray) -> bool:
    """Whether FTZ can change nothing in ``dot16``: every nonzero product is at least 2**-103, so every
    product, partial sum and rounding is a multiple of 2**-126 (one ulp at that exponent), hence zero
    or normal; and no -0 can survive, as the sum starts at +0."""
    small_b = np.abs(b[b != 0]).min(initial=np.inf)
    small_a = np.abs(a[a != 0]).min(initial=np.inf)
    return float(small_a) * float(small_b) >= SAFE_PRODUCT


def saturate_int32(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -(2**31 - 1), 2**31 - 1)


class DstMode(Enum):
    """How the matrix unit reads and writes Dst: FP32 / INT32 through Dst32b, BF16 / FP16 Dst16b."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    INT32 = "int32"

    @property
    def wide(self) -> bool:
        return self in (DstMode.FP32, DstMode.INT32)


def read_dst(bits: np.ndarray, mode: DstMode) -> np.ndarray:
    """Raw Dst bits (uint32 Dst32b, uint16 Dst16b) as fp32 values (int64 for INT32)."""
    if mode is DstMode.INT32:
        return formats.int32_to_int(formats.dst32_to_fp32(bits))
    if mode is DstMode.FP32:
        plain = formats.dst32_to_fp32(bits)
    elif mode is DstMode.BF16:
        plain = formats.dst16_to_bf16(bits).astype(_U32) << _U32(16)
    else:
        plain = formats.fp16_to_fp32(formats.dst16_to_fp16(bits))
    return ftz(plain.astype(_U32).view(_F32))


def write_dst(values: np.ndarray, mode: DstMode) -> np.ndarray:
    """Values as raw Dst bits: FP32 (FTZ), BF16 / FP16 rounded to nearest, ties away; INT32 saturated."""
    if mode is DstMode.INT32:
        return formats.dst32_from_fp32(formats.int32_from_int(saturate_int32(values)))
    plain = ftz(values).view(_U32)
    # Which NaN an fp32 operation passes on is the host's choice: write one canonical quiet NaN.
    plain = np.where(np.isnan(values), _CANONICAL_NAN, plain).astype(_U32)
    if mode is DstMode.FP32:
        return formats.dst32_from_fp32(plain)
    if mode is DstMode.BF16:
        return formats.dst16_from_bf16(formats.fp32_to_bf16(plain, Rounding.NEAREST_AWAY))
    return formats.dst16_from_fp16(formats.fp32_to_fp16(plain, Rounding.NEAREST_AWAY))


# ------------------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class Formats:
    """The data formats an arithmetic instruction works in (the pages' "Determine the data formats")."""

    style: int  # SrcAStyle: BF16, FP16, TF32 or INT8 (format codes)
    dst: DstMode

    @property
    def integer(self) -> bool:
        return self.style == INT8


def arith_formats(copro: Coprocessor, thread: int) -> Formats | str:
    """The formats, or why the configuration names none (SrcAFmt 12 / 13)."""
    field = copro.config.field_for_thread
    if field("FP16A_FORCE_Enable", thread):
        return Formats(FP16, DstMode.FP16)
    if field("ALU_ACC_CTRL_INT8_math_enabled", thread):
        return Formats(INT8, DstMode.INT32)
    fmt = src_format(copro, thread)
    style = src_style(fmt)
    if style is None:
        return f"SrcA format code {fmt} names no data format"
    if field("ALU_ACC_CTRL_Fp32_enabled", thread):
        return Formats(style, DstMode.FP32)
    return Formats(style, DstMode.FP16 if style == FP16 else DstMode.BF16)


def _formats(ctx: Context) -> Formats:
    found = arith_formats(ctx.copro, ctx.thread)
    if isinstance(found, str):
        raise ctx.error(UndefinedBehavior, found, src_format(ctx.copro, ctx.thread))
    return found


def _fidelity_phase(copro: Coprocessor, thread: int, rwcs: Rwcs) -> int:
    return (rwcs.fidelity_phase + copro.config.field_for_thread("FIDELITY_BASE_Phase", thread)) & 3


def _dst_row(copro: Coprocessor, thread: int, dst_row: int, rwcs: Rwcs, mask: int) -> int:
    field = copro.config.field_for_thread
    row = dst_row + field("DEST_TARGET_REG_CFG_MATH_Offset", thread) + rwcs.dst
    return (row + field("DEST_REGW_BASE_Base", thread)) & mask


# ------------------------------------------------------------------------------ shared steps

SRC_NOT_HANDED = "SrcA / SrcB bank not handed to the matrix unit"  # why an instruction waits for them


def both_banks_owned(copro: Coprocessor) -> bool:
    regs = copro.regs
    return all(
        int(regs.src_client[f, int(regs.matrix_bank[f])]) == SrcClient.MATRIX_UNIT for f in (SRCA, SRCB)
    )


def _src_rows(ctx: Context, name: str, first: int, count: int) -> np.ndarray:
    if first + count > SRC_ROWS:
        raise ctx.error(UndefinedBehavior, f"{name} rows {first}..{first + count - 1} run past row 63", first)
    return np.arange(first, first + count)


def src_bank(copro: Coprocessor, file: int) -> np.ndarray:
    regs = copro.regs
    return regs.src(file)[int(regs.matrix_bank[file])]


@dataclass
class DstAccess:
    """Rows of Dst an instruction reads / writes, in the view its mode uses."""

    rows: np.ndarray
    mode: DstMode
    remap: bool
    swizzle: bool

    def storage(self, copro: Coprocessor) -> np.ndarray:
        return copro.regs.storage_rows(self.rows, wide=self.mode.wide, remap=self.remap, swizzle=self.swizzle)

    def read_bits(self, copro: Coprocessor, identity: int = 0) -> np.ndarray:
        regs = copro.regs
        if self.mode.wide:
            return regs.read32(self.rows, identity=identity, remap=self.remap, swizzle=self.swizzle)
        return regs.read16(self.rows, identity=identity, remap=self.remap)

    def write_bits(self, copro: Coprocessor, bits: np.ndarray) -> None:
        regs = copro.regs
        if self.mode.wide:
            regs.write32(self.rows, bits, remap=self.remap, swizzle=self.swizzle)
        else:
            regs.write16(self.rows, np.asarray(bits).astype(np.uint16), remap=self.remap)


def _dst_access(ctx: Context, rows: np.ndarray, mode: DstMode) -> DstAccess:
    remap, swizzle = dst_mapping(ctx.copro, ctx.thread)
    return DstAccess(rows, mode, remap, swizzle)


def _stall(ctx: Context, access: DstAccess) -> Wait | None:
    """The Dst read-after-write stall, if ``access``'s rows were written too recently."""
    ready = ctx.copro.regs.readable_from(access.storage(ctx.copro))
    if ready > ctx.cycle:
        return Wait(dst_hidden(ready), until=ready)
    return None


def _finish(
    ctx: Context, rule: AddrModRule, access: DstAccess, flips: int, addr_mode: int, srca_row: int
) -> Outcome:
    """Mark the written Dst blocks, latch the SrcA row address (SHIFTXA reads it), flip the Src
    banks, advance the RWCs."""
    copro, thread = ctx.copro, ctx.thread
    copro.regs.written(access.storage(copro), ctx.cycle, MATRIX.dst_write_hidden)
    copro.regs.srca_row_latch[0] = srca_row
    flip_banks(copro, thread, flips)
    rule.apply(ctx, addr_mode)
    return Retire(MATRIX.issue)


def flip_banks(copro: Coprocessor, thread: int, flips: int) -> None:
    for file, name in ((SRCA, "SrcA"), (SRCB, "SrcB")):
        if flips >> file & 1:
            disabled = copro.config.thread_field(f"CLR_DVALID_{name}_Disable", thread)
            clear_src_valid(copro, file, not disabled)


# ------------------------------------------------------------------------------ products


def products(fmts: Formats, a_bits: np.ndarray, b_bits: np.ndarray, phase: np.ndarray | int) -> np.ndarray:
    """``SrcB @ SrcA`` for stacks of operands: ``a_bits`` (..., 16, 16) SrcA rows, ``b_bits``
    (..., rows, 16) SrcB rows, ``phase`` broadcastable to the stack (..., 1, 1). fp32 or int64."""
    if fmts.integer:
        mask_a, mask_b = int8_fidelity_masks(phase)
        a = read_src_int8(a_bits & mask_a)
        b = read_src_int8(b_bits & mask_b)
        return b @ a  # exact: |sum| <= 16 * 1023 * 1023
    a = src_a_fidelity_bits(read_src(a_bits, fmts.style), phase)
    b = src_b_fidelity_bits(read_src(b_bits, fmts.style), phase)
    return dot16(b, a)


def accumulate(fmts: Formats, result: np.ndarray, dst_bits: np.ndarray) -> np.ndarray:
    """``Dst + result`` as new Dst bits."""
    with np.errstate(all="ignore"):
        return write_dst(result + read_dst(dst_bits, fmts.dst), fmts.dst)


def settle(fmts: Formats, values: np.ndarray) -> np.ndarray:
    """What reading back ``write_dst(values)`` gives (``read_dst(write_dst(values))``, cheaper for FP32,
    whose write only flushes)."""
    if fmts.dst is DstMode.FP32:
        return ftz(values)
    if fmts.dst is DstMode.INT32:
        return saturate_int32(values)
    return read_dst(write_dst(values, fmts.dst), fmts.dst)


# ------------------------------------------------------------------------------ MVMUL, DOTPV, GAPOOL


def _multiply(
    ctx: Context, rule: AddrModRule, flips: int, broadcast_row: bool, num_rows: int, addr_mode: int, dst: int
) -> Outcome:
    """MVMUL.md's model (``num_rows`` 8, or 4 for GAPOOL), AddrMod as ``rule`` reads it."""
    copro, thread = ctx.copro, ctx.thread
    dst_row = ctx.documented("dst", dst, 10)
    rule.operand(ctx, "addr_mode", addr_mode)
    if not both_banks_owned(copro):
        return Wait(SRC_NOT_HANDED)
    fmts = _formats(ctx)
    rwcs = read_rwcs(copro.adc, thread)
    rows = 7 if broadcast_row else num_rows
    a_rows = _src_rows(ctx, "SrcA", rwcs.srca & 0x38, K)
    b_first = rwcs.srcb & (0x3F if broadcast_row else 0x38)
    b_rows = np.full(rows, b_first) if broadcast_row else _src_rows(ctx, "SrcB", b_first, rows)
    first = _dst_row(copro, thread, dst_row, rwcs, 0x400 - rows)
    written = np.arange(0, rows, 2 if broadcast_row else 1)
    access = _dst_access(ctx, first + written, fmts.dst)
    stall = _stall(ctx, access)
    if stall is not None:
        return stall
    rule.check(ctx, addr_mode)
    phase = _fidelity_phase(copro, thread, rwcs)
    result = products(fmts, src_bank(copro, SRCA)[a_rows], src_bank(copro, SRCB)[b_rows], phase)
    access.write_bits(copro, accumulate(fmts, result[written], access.read_bits(copro)))
    return _finish(ctx, rule, access, flips, addr_mode, int(a_rows[0]))


@semantics("MVMUL")
def mvmul(ctx: Context, clear_dvalid: int, instr_mod19: int, addr_mode: int, dst: int) -> Outcome:
    broadcast = ctx.documented("instr_mod19", instr_mod19, 1)
    return _multiply(ctx, BLACKHOLE, clear_dvalid, bool(broadcast), 8, addr_mode, dst)


@semantics("DOTPV")
def dotpv(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    ctx.documented("instr_mod19", instr_mod19, 0)
    return _multiply(ctx, BLACKHOLE, clear_dvalid, False, 8, addr_mode, dst)


@semantics("GAPOOL")
def gapool(
    ctx: Context, clear_dvalid: int, instr_mod19: int, pool_addr_mode: int, max_pool_index_en: int, dst: int
) -> Outcome:
    ctx.documented("instr_mod19", instr_mod19, 1)
    ctx.documented("max_pool_index_en", max_pool_index_en, 0)
    return _multiply(ctx, BLACKHOLE, clear_dvalid, False, 4, pool_addr_mode, dst)


# ------------------------------------------------------------------------------ element-wise


def _elementwise(
    ctx: Context,
    rule: AddrModRule,
    op: str,
    flips: int,
    add_dst: bool,
    broadcast: int,
    addr_mode: int,
    dst: int,
) -> Outcome:
    """ELWADD.md / ELWSUB.md / ELWMUL.md's model, AddrMod as ``rule`` reads it."""
    copro, thread = ctx.copro, ctx.thread
    dst_row = ctx.documented("dst", dst, 10)
    rule.operand(ctx, "addr_mode", addr_mode)
    broadcast_row, broadcast_col0 = bool(broadcast & 2), bool(broadcast & 1)
    if not both_banks_owned(copro):
        return Wait(SRC_NOT_HANDED)
    fmts = _formats(ctx)
    rwcs = read_rwcs(copro.adc, thread)
    a_rows = _src_rows(ctx, "SrcA", rwcs.srca & 0x38, 8)
    b_first = rwcs.srcb & (0x3F if broadcast_row else 0x38)
    b_rows = np.full(8, b_first) if broadcast_row else _src_rows(ctx, "SrcB", b_first, 8)
    access = _dst_access(ctx, _dst_row(copro, thread, dst_row, rwcs, 0x3F8) + np.arange(8), fmts.dst)
    if add_dst:
        stall = _stall(ctx, access)
        if stall is not None:
            return stall
    rule.check(ctx, addr_mode)
    phase = _fidelity_phase(copro, thread, rwcs)
    a_bits = src_bank(copro, SRCA)[a_rows]
    b_bits = src_bank(copro, SRCB)[b_rows]
    if broadcast_col0:
        b_bits = np.repeat(b_bits[:, :1], DST_COLS, axis=1)
    result = elementwise(fmts, op, a_bits, b_bits, phase)
    old = access.read_bits(copro)
    access.write_bits(copro, accumulate(fmts, result, old) if add_dst else write_dst(result, fmts.dst))
    return _finish(ctx, rule, access, flips, addr_mode, int(a_rows[0]))


def elementwise(fmts: Formats, op: str, a_bits: np.ndarray, b_bits: np.ndarray, phase: int) -> np.ndarray:
    """``op`` ("add", "sub", "mul") of same-shaped SrcA / SrcB datums, before any Dst accumulation."""
    if fmts.integer:
        if op == "mul":
            mask_a, mask_b = int8_fidelity_masks(phase)
            return read_src_int8(a_bits & mask_a) * read_src_int8(b_bits & mask_b)
        a, b = read_src_int8(a_bits), read_src_int8(b_bits)
        return a + b if op == "add" else a - b
    a, b = read_src(a_bits, fmts.style), read_src(b_bits, fmts.style)
    with np.errstate(all="ignore"):
        if op == "mul":
            return ftz(src_a_fidelity_bits(a, phase) * src_b_fidelity_bits(b, phase))
        result = ftz(a + b if op == "add" else a - b)
        # The page's divisions for odd fidelity bits ("rarely desirable"), modelled as written.
        if phase & 1:
            result = ftz(result / _F32(32))
        if phase & 2:
            result = ftz(result / _F32(128))
        return result


@semantics("ELWADD")
def elwadd(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, BLACKHOLE, "add", clear_dvalid, bool(dest_accum_en), instr_mod19, addr_mode, dst)


@semantics("ELWSUB")
def elwsub(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, BLACKHOLE, "sub", clear_dvalid, bool(dest_accum_en), instr_mod19, addr_mode, dst)


@semantics("ELWMUL")
def elwmul(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, BLACKHOLE, "mul", clear_dvalid, True, instr_mod19, addr_mode, dst)


# ------------------------------------------------------------------------------ GMPOOL
# The page's Datum model, vectorised over the 16 columns: sign, a 9-bit exponent and a 10-bit
# magnitude / mantissa as int64 arrays.
INT32_STYLE = -1  # GMPOOL's DstStyle for integer results (no format code)
_NONLINEAR_I_TRANSFORM = (0, 3, 6, 1, 4, 7, 2, 5)


def gmpool_styles(fmts: Formats, argmax: bool) -> int:
    """GMPOOL's DstStyle."""
    if fmts.integer:
        return INT32_STYLE
    wide = fmts.dst is DstMode.FP32
    if fmts.style == TF32:
        return INT32_STYLE if argmax else (TF32 if wide else BF16)
    if argmax and wide:
        return fmts.style
    return TF32 if wide else fmts.style


def _read_datum(dst_val: np.ndarray, style: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    v = dst_val.astype(np.int64)
    sign = v >> 31 & 1
    if style == INT32_STYLE:
        return sign, (v >> 10 & 0x3F) + ((v >> 24 & 7) << 6), v & 0x3FF
    if style == FP16:
        return sign, (v >> 16 & 0x1F) + 15, v >> 21 & 0x3FF
    man = (v >> 24 & 0x7F) << 3
    if style == TF32:
        man = man + (v >> 13 & 7)
    return sign, (v >> 16 & 0xFF) + 127, man


def _write_datum(sign: np.ndarray, exp: np.ndarray, man: np.ndarray, style: int) -> np.ndarray:
    if style == INT32_STYLE:
        return (sign << 31) | ((exp & 7) << 10) | man
    if style == FP16:
        out = (sign << 31) | (man << 21) | (((exp - 15) & 0x1FF & 0x1F) << 16)
        return np.where((exp & 0x3F) == 0, 0, out)
    out = (sign << 31) | ((man & 0x3F8) << 21) | (((exp - 127) & 0x1FF & 0xFF) << 16)
    if style == TF32:
        out = out + ((man & 7) << 13)
    return np.where(exp == 0, 0, out)


def _scaled_src(a_val: np.ndarray, style: int, b_val: np.ndarray) -> tuple[np.ndarray, ...]:
    """ReadAndScaleSrc for one SrcA row (16 columns) against one SrcB datum per column."""
    a, b = a_val.astype(np.int64), b_val.astype(np.int64)
    a_exp, b_exp = a & 0xFF, b & 0xFF
    man = a >> 8 & 0x3FF
    if style == INT8:
        exp = np.zeros_like(a)
    elif style == FP16:
        exp = (a_exp & 0x1F) + (b_exp & 0x1F)
    else:
        exp = a_exp + b_exp
        if style == BF16:
            man = man & 0x3F8
    sign = a >> 18 & 1
    neg_inf = b_exp == 0
    flushed = a_exp == 0
    sign = np.where(neg_inf, 1, np.where(flushed, 0, sign))
    exp = np.where(neg_inf, 0x1FF, np.where(flushed, 0, exp))
    man = np.where(neg_inf, 0x3FF, np.where(flushed, 0, man))
    return sign, exp, man


def _comparable(sign: np.ndarray, exp: np.ndarray, man: np.ndarray) -> np.ndarray:
    return np.where(sign == 1, -1, 1) * ((exp << 10) + man)


@semantics("GMPOOL")
def gmpool(
    ctx: Context, clear_dvalid: int, instr_mod19: int, pool_addr_mode: int, max_pool_index_en: int, dst: int
) -> Outcome:
    return _gmpool(
        ctx, BLACKHOLE, clear_dvalid, instr_mod19, "pool_addr_mode", pool_addr_mode, max_pool_index_en, dst
    )


def _gmpool(
    ctx: Context,
    rule: AddrModRule,
    clear_dvalid: int,
    instr_mod19: int,
    addr_name: str,
    addr_mode: int,
    max_pool_index_en: int,
    dst: int,
) -> Outcome:
    """GMPOOL.md's model; AddrMod is operand slot ``addr_name``, as ``rule`` reads it."""
    copro, thread = ctx.copro, ctx.thread
    if instr_mod19 != 1:
        raise ctx.error(
            Unimplemented,
            f"GMPOOL instr_mod19={instr_mod19}: only 16x16 pooling (1) is documented",
            instr_mod19,
        )
    dst_row = ctx.documented("dst", dst, 10)
    rule.operand(ctx, addr_name, addr_mode)
    argmax = bool(max_pool_index_en)
    if not both_banks_owned(copro):
        return Wait(SRC_NOT_HANDED)
    fmts = _formats(ctx)
    style = gmpool_styles(fmts, argmax)
    wide = fmts.dst.wide
    rwcs = read_rwcs(copro.adc, thread)
    a_rows = _src_rows(ctx, "SrcA", rwcs.srca & 0x30, 16)
    b_row = int(_src_rows(ctx, "SrcB", rwcs.srcb & 0x38, 1)[0])
    first = _dst_row(copro, thread, dst_row, rwcs, 0x3FC)
    access = _dst_access(ctx, first + np.arange(4), DstMode.FP32 if wide else DstMode.BF16)
    stall = _stall(ctx, access)
    if stall is not None:
        return stall
    rule.check(ctx, addr_mode)
    # Undefined rows read as minus infinity, "i.e. all bits set" (GMPOOL.md).
    raw = access.read_bits(copro, identity=0xFFFFFFFF if wide else 0xFFFF).astype(np.int64)
    dst_val = raw[0] if wide else raw[0] << 16
    sign, exp, man = _read_datum(dst_val, style)
    max_index = dst_val & 0xFF
    index_phase = (dst_val + 0x100) & 0xF00
    a_bank, b_bank = src_bank(copro, SRCA), src_bank(copro, SRCB)
    for i_ in range(16):
        i = i_ ^ 4 if i_ < 8 else i_
        x = _scaled_src(a_bank[a_rows[i]], fmts.style, np.full(16, b_bank[b_row, i]))
        take = _comparable(*x) >= _comparable(sign, exp, man)
        sign, exp, man = (np.where(take, new, old) for new, old in zip(x, (sign, exp, man), strict=True))
        if i < len(_NONLINEAR_I_TRANSFORM):
            max_index = np.where(take, (index_phase >> 4) + _NONLINEAR_I_TRANSFORM[i], max_index)
    if argmax:
        index = index_phase | (max_index & 0xFF)
        result = index if style == INT32_STYLE else _write_datum(sign, exp, man, style) | index
    else:
        result = _write_datum(sign, exp, man, style)
    out = np.zeros((4, 16), np.int64)
    out[0] = result if wide else (result >> 16) & 0xFFFF
    if wide and argmax:
        out[1:] = (raw[1:] + 0x100) & 0xF00
    access.write_bits(copro, out.astype(np.uint32))
    return _finish(ctx, rule, access, clear_dvalid, addr_mode, int(a_rows[0]))
