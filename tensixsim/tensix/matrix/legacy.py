"""The legacy matrix-unit instructions MFCONV3S1, CONV3S1, CONV3S2, APOOL3S1 and APOOL3S2.

What the pages say
------------------
tt-isa-documentation WormholeB0 MatrixUnit.md ("Legacy instructions"): these five "theoretically
exist, and count as Matrix Unit (FPU) instructions for the purpose of STALLWAIT, but all they do is
compute ``Dst += 0``". RWCs.md lists them among the instructions that apply their AddrMod bits to the
RWCs and names them as a way to apply AddrMod without consuming RWCs. SHIFTXA.md says each computes a
starting SrcA row address (SHIFTXA's ``HardwareBug()`` reads the most recent one), without saying
which. ZEROACC.md says an undefined Dst row they read counts as zero and their write defines it.
No page gives which Dst rows ``Dst += 0`` covers, whether ``clear_dvalid`` flips the Src banks,
whether they wait for the Src banks, or what the other operands do; no BlackholeA0 page covers them.

The model
---------
The emulator executes an instruction exactly when its outcome does not depend on what the pages
leave open, and otherwise raises Unimplemented before anything changes:

- AddrMod: ``addr_mode`` (MFCONV3S1 / CONV3S1 / CONV3S2, bits 14..16) or ``pool_addr_mode`` bits
  0..2 (APOOL3S1 / APOOL3S2, bits 15..17, as GMPOOL / GAPOOL), naming the ADDR_MOD slot (Wormhole:
  bits 15..16 of ``addr_mode``, matrix/wormhole.py). Set
  ``pool_addr_mode`` bits above 2 raise UndefinedBehavior (the rule of matrix/unit.py).
  ``rotate_weights``, ``index_en`` and ``dst`` select nothing: "all they do" is ``Dst += 0``.
- SrcAFmt codes 12 / 13 name no format for the Dst arithmetic: UndefinedBehavior (matrix/unit.py).
- ``clear_dvalid`` other than 0, or a SrcA / SrcB bank not the matrix unit's: Unimplemented (bank
  flips and the wait gate are not documented for them).
- ``Dst += 0`` is the arithmetic model of matrix/unit.py with a zero product, in the Dst view the
  configuration selects (:func:`unit.arith_formats`). Whatever rows it covers, Dst is unchanged
  when every Dst row is defined and every datum is a fixed point of that model (FTZ, rounding and
  saturation give back its bits, and it is not a NaN, whose propagation is the host's). Otherwise
  which rows change is undocumented: Unimplemented.
- Then the AddrMod is applied (its own Unimplemented cases checked first). SHIFTXA's latched SrcA row
  address becomes unknown (SHIFTXA then raises Unimplemented, matrix/src_shifts.py).

Timing: each occupies the matrix unit one cycle. It reads Dst at rows no page gives, so it waits
until every Dst row the matrix unit wrote is readable (Dst.md's rule, taken over all of Dst); as its
write changes no value, it marks no rows as written. The holds after MOVA2D / MOVB2D apply to these
instructions by name (moves.HOLDS).
"""

from __future__ import annotations

import numpy as np

from tensixsim.errors import Unimplemented
from tensixsim.tensix.matrix.addressing import BLACKHOLE, AddrModRule
from tensixsim.tensix.matrix.unit import (
    DstMode,
    Formats,
    _dst_access,
    _formats,
    _stall,
    accumulate,
    both_banks_owned,
    read_dst,
)
from tensixsim.tensix.regs import DST_COLS
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.timing import MATRIX

LEGACY = ("MFCONV3S1", "CONV3S1", "CONV3S2", "APOOL3S1", "APOOL3S2")


def dst_is_fixed_point(fmts: Formats, bits: np.ndarray) -> bool:
    """Whether ``Dst + 0`` (the model's accumulate of a zero result) gives back every datum of
    ``bits`` (raw Dst bits in ``fmts.dst``'s view) and none is a NaN."""
    if fmts.dst is not DstMode.INT32:
        with np.errstate(all="ignore"):
            if np.isnan(read_dst(bits, fmts.dst)).any():
                return False
    zero = np.zeros(bits.shape, np.int64 if fmts.integer else np.float32)
    again = accumulate(fmts, zero, bits)
    return bool(np.array_equal(np.asarray(again).astype(np.int64), np.asarray(bits).astype(np.int64)))


def dst_plus_zero(ctx: Context, rule: AddrModRule, flips: int, addr_mode: int) -> Outcome:
    """``Dst += 0`` where its outcome is documented, then ApplyAddrMod as ``rule`` reads AddrMod (the
    caller has checked the operand's width)."""
    copro = ctx.copro
    fmts = _formats(ctx)
    if flips:
        raise ctx.error(Unimplemented, f"clear_dvalid={flips}: no page says whether it flips a bank", flips)
    if not both_banks_owned(copro):
        raise ctx.error(Unimplemented, "no page says whether it waits for the SrcA / SrcB banks")
    rows = np.arange(copro.regs.dst.shape[0] // (2 if fmts.dst.wide else 1))
    access = _dst_access(ctx, rows, fmts.dst)
    stall = _stall(ctx, access)
    if stall is not None:
        return stall
    if not copro.regs.dst_row_valid.all():
        raise ctx.error(Unimplemented, "an undefined Dst row: no page says which rows Dst += 0 defines")
    bits = access.read_bits(copro).reshape(len(rows), DST_COLS)
    if not dst_is_fixed_point(fmts, bits):
        raise ctx.error(Unimplemented, "Dst += 0 would change a datum: no page says which rows it covers")
    rule.check(ctx, addr_mode)
    rule.apply(ctx, addr_mode)
    copro.regs.srca_row_latch[0] = -1
    return Retire(MATRIX.issue)


def _conv(ctx: Context, clear_dvalid: int, rotate_weights: int, addr_mode: int, dst: int) -> Outcome:
    return dst_plus_zero(ctx, BLACKHOLE, clear_dvalid, addr_mode)


def _apool(ctx: Context, clear_dvalid: int, pool_addr_mode: int, index_en: int, dst: int) -> Outcome:
    BLACKHOLE.operand(ctx, "pool_addr_mode", pool_addr_mode)
    return dst_plus_zero(ctx, BLACKHOLE, clear_dvalid, pool_addr_mode)


semantics("MFCONV3S1")(_conv)
semantics("CONV3S1")(_conv)
semantics("CONV3S2")(_conv)
semantics("APOOL3S1")(_apool)
semantics("APOOL3S2")(_apool)
