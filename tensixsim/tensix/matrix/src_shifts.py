"""Matrix-unit lane shifts and transposes within SrcA / SrcB, and two housekeeping instructions:
SHIFTXA, SHIFTXB, TRNSPSRCB, GATESRCRST, CLREXPHIST.

Functional model: tt-isa-documentation WormholeB0 SHIFTXA.md, SHIFTXB.md, TRNSPSRCB.md, GATESRCRST.md,
CLREXPHIST.md, Packers/ExponentHistogram.md, SrcASrcB.md, MatrixUnit.md (timing) and RWCs.md
(ApplyAddrMod, via adc.apply_addr_mod); the jasondavies fork's SHIFTXB.md, whose loop runs over
columns 0..14 (the upstream page stops at 13, which would keep lane 14 and lose lane 15, contradicting
its own summary and cross-lane diagram: the fork's corrected text is the one applied). No BlackholeA0
page covers these five instructions, so the Wormhole functional models are applied with the Blackhole
encoding below.

Blackhole encoding (SHIFTXA, TRNSPSRCB and GATESRCRST: Wormhole's too; SHIFTXB's: matrix/wormhole.py)
---------------------------------------------------------------------------------------------------
- SHIFTXA: ``shift_mode`` (bits 0..1) is Direction: 2 shifts right (away from column 0), 3 shifts left
  (towards column 0); 0 and 1 are reserved (tt-llk's assembly.yaml) and raise UndefinedBehavior.
  ``log2_amount2`` (bits 2..23) is the log2 of the shift amount, and only zero (a shift by one lane)
  is allowed (the yaml; the page's syntax writes a literal 0 there): anything else raises
  UndefinedBehavior.
- SHIFTXB: ``shift_row`` bits 0..5 are SrcRow, ``rot_shift`` bit 0 (word bit 10) is ShiftInZero and
  ``addr_mode`` bits 0..2 (word bits 14..16) are AddrMod, three bits naming the ADDR_MOD slot
  directly as for every Blackhole matrix-unit instruction (Wormhole's AddrMod is two bits at 15..16;
  tt-llk's Blackhole ckernel_ops.h shifts it by 14). Set bits of a slot beyond its documented operand
  (``shift_row`` bits 6..9, ``rot_shift`` bits 1..3, ``addr_mode`` bits 3..9) raise UndefinedBehavior,
  the rule of adc.py, regs.py and matrix/moves.py.
- GATESRCRST: ``reset_srcb_gate_control`` bit 0 (word bit 1) is InvalidateSrcBCache; its other bits
  raise UndefinedBehavior. ``reset_srca_gate_control`` (word bit 0) is written as 0 in the page's
  syntax; the Blackhole yaml documents it as resetting the SrcA pipeline gating to "don't gate", and
  tt-llk's Blackhole kernels set both bits. Either bit is accepted.
- TRNSPSRCB, CLREXPHIST: no operands.

What each does here
-------------------
- SHIFTXA writes SrcA rows 0..15 of the matrix unit's bank with sixteen input rows shifted by one
  lane, the vacated lane zero. It waits (Wait, nothing changed) until the SrcA bank is the matrix
  unit's. Its input rows start at ``HardwareBug() & 0x30``: because of a hardware bug they are the
  aligned 16-row block holding the SrcA row address most recently computed by one of MFCONV3S1,
  CONV3S1, MPOOL3S1, APOOL3S1, CONV3S2, MPOOL3S2, APOOL3S2, MVMUL, ELWSUB, ELWADD, ELWMUL, DOTPV,
  GMPOOL, GAPOOL, MOVA2D, MOVB2D, MOVD2A, MOVD2B or MOVB2A (``regs.srca_row_latch``, set by those the
  emulator executes). MOVB2D and MOVD2B are on that list but no page says what SrcA address they
  compute, so after them, and before any of them ran, the address is unknown: SHIFTXA then executes
  when the result is the same whichever of the four blocks is the input (for example after ZEROSRC,
  or with identical blocks) and otherwise raises Unimplemented, changing nothing.
- SHIFTXB rotates one row of the matrix unit's SrcB bank left by one lane (lane 0 to lane 15), or with
  ShiftInZero shifts it left and zeroes lane 15. The row is SrcRow plus the pipe's SrcB RWC, modulo 64;
  then AddrMod advances the RWCs. It waits until the SrcB bank is the matrix unit's.
- TRNSPSRCB transposes the 16x16 block in rows 16..31 of the matrix unit's SrcB bank. It waits until
  the SrcB bank is the matrix unit's.
- GATESRCRST invalidates the one-slot operand cache between SrcB and the matrix unit (Blackhole: resets
  the SrcA / SrcB pipeline gating). The emulator has no such cache or gating: every matrix-unit
  instruction reads the current SrcA / SrcB contents, as hardware does when invalidation works. So it
  changes no emulator state; it occupies the matrix unit one cycle.
- CLREXPHIST calls ``Reset`` on the exponent histogram of the four packers. The emulator does not keep
  the histograms: the packers do not update them and the only readers, SETDMAREG's special modes 6, 7
  and 9, raise Unimplemented (thcon.py). So it changes no emulator state; it occupies the matrix unit
  one cycle.

SHIFTXA / SHIFTXB / TRNSPSRCB ignore ``LaneConfig.BLOCK_DEST_MOV`` (their pages do not mention it),
and none of them flushes denormals: datums move as raw 19-bit values.

Timing (MatrixUnit.md): SHIFTXA, TRNSPSRCB, GATESRCRST and CLREXPHIST occupy the matrix unit one cycle;
SHIFTXB two (throughput one per two cycles: the matrix unit accepts no instruction on the cycle after
it, SHIFTXB.md "Instruction scheduling").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.matrix.addressing import BLACKHOLE, AddrModRule
from tensixsim.tensix.regs import SRCA, SRCB, SrcClient, bank_not_handed_to_matrix
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.timing import MATRIX

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# SHIFTXA, TRNSPSRCB, GATESRCRST and CLREXPHIST: Wormhole's pages, the same encoding on both chips.
# SHIFTXB's AddrMod differs (Wormhole's registration: matrix/wormhole.py).
BOTH = ("blackhole", "wormhole")
DIRECTION_RIGHT, DIRECTION_LEFT = 2, 3
_SRC_ROW_MASK = 0x3F
_BLOCK = 16  # SHIFTXA's rows; TRNSPSRCB's block size
_TRANSPOSE_BASE = 16  # TRNSPSRCB's RowBase


def srca_row_latch(copro: Coprocessor) -> int | None:
    """The SrcA row address most recently computed by the instructions SHIFTXA's ``HardwareBug()``
    names, or None when it is unknown (see the module docstring)."""
    latch = int(copro.regs.srca_row_latch[0])
    return None if latch < 0 else latch


def _owned(ctx: Context, file: int) -> bool:
    regs = ctx.copro.regs
    return int(regs.src_client[file, int(regs.matrix_bank[file])]) == SrcClient.MATRIX_UNIT


def shift_block(block: np.ndarray, direction: int) -> np.ndarray:
    """Sixteen (16, 16) rows shifted one lane right (DIRECTION_RIGHT) or left, vacated lane zero."""
    out = np.zeros_like(block)
    if direction == DIRECTION_RIGHT:
        out[:, 1:] = block[:, :-1]
    else:
        out[:, :-1] = block[:, 1:]
    return out


@semantics("SHIFTXA", arches=BOTH)
def shiftxa(ctx: Context, log2_amount2: int, shift_mode: int) -> Outcome:
    ctx.documented("log2_amount2", log2_amount2, 0)
    if shift_mode not in (DIRECTION_RIGHT, DIRECTION_LEFT):
        raise ctx.error(UndefinedBehavior, f"shift_mode={shift_mode} is reserved", shift_mode)
    if not _owned(ctx, SRCA):
        return Wait(bank_not_handed_to_matrix(SRCA))
    regs = ctx.copro.regs
    bank = regs.srca[int(regs.matrix_bank[SRCA])]
    latch = srca_row_latch(ctx.copro)
    if latch is not None:
        start = latch & 0x30
        result = shift_block(bank[start : start + _BLOCK], shift_mode)
    else:
        candidates = [shift_block(bank[start : start + _BLOCK], shift_mode) for start in range(0, 64, 16)]
        result = candidates[0]
        if any(not np.array_equal(result, other) for other in candidates[1:]):
            raise ctx.error(
                Unimplemented,
                "the input rows depend on the SrcA row address of an earlier matrix-unit instruction "
                "(the hardware bug of SHIFTXA.md), unknown at reset and after MOVB2D / MOVD2B",
            )
    bank[:_BLOCK] = result
    return Retire(MATRIX.issue)


@semantics("SHIFTXB")
def shiftxb(ctx: Context, addr_mode: int, rot_shift: int, shift_row: int) -> Outcome:
    return _shiftxb(ctx, BLACKHOLE, addr_mode, rot_shift, shift_row)


def _shiftxb(ctx: Context, rule: AddrModRule, addr_mode: int, rot_shift: int, shift_row: int) -> Outcome:
    addr_mod_index = rule.operand(ctx, "addr_mode", addr_mode)
    shift_in_zero = ctx.documented("rot_shift", rot_shift, 1)
    src_row = ctx.documented("shift_row", shift_row, 6)
    if not _owned(ctx, SRCB):
        return Wait(bank_not_handed_to_matrix(SRCB))
    regs = ctx.copro.regs
    row = (src_row + int(ctx.copro.adc.srcb[ctx.thread])) & _SRC_ROW_MASK
    old = regs.srcb[int(regs.matrix_bank[SRCB]), row]
    new = np.roll(old, -1)
    if shift_in_zero:
        new[-1] = 0
    rule.apply(ctx, addr_mod_index)
    regs.srcb[int(regs.matrix_bank[SRCB]), row] = new
    return Retire(MATRIX.shiftxb)


@semantics("TRNSPSRCB", arches=BOTH)
def trnspsrcb(ctx: Context) -> Outcome:
    if not _owned(ctx, SRCB):
        return Wait(bank_not_handed_to_matrix(SRCB))
    regs = ctx.copro.regs
    bank = regs.srcb[int(regs.matrix_bank[SRCB])]
    rows = slice(_TRANSPOSE_BASE, _TRANSPOSE_BASE + _BLOCK)
    bank[rows] = bank[rows].T.copy()
    return Retire(MATRIX.issue)


@semantics("GATESRCRST", arches=BOTH)
def gatesrcrst(ctx: Context, reset_srcb_gate_control: int, reset_srca_gate_control: int) -> Outcome:
    ctx.documented("reset_srcb_gate_control", reset_srcb_gate_control, 1)
    return Retire(MATRIX.issue)


@semantics("CLREXPHIST", arches=BOTH)
def clrexphist(ctx: Context) -> Outcome:
    return Retire(MATRIX.issue)
