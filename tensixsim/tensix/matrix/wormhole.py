"""The matrix unit's instructions in Wormhole B0's encodings.

The functional models are the WormholeB0 pages (MVMUL.md, DOTPV.md, GAPOOL.md, GMPOOL.md, ELWMUL.md,
ELWADD.md, ELWSUB.md, MOVA2D.md, MOVDBGA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md, the jasondavies
fork's MOVB2A.md and SHIFTXB.md, MatrixUnit.md's legacy instructions, RWCs.md): the ones the Blackhole
registrations apply (matrix/unit.py, moves.py, src_shifts.py, legacy.py, whose docstrings give the
readings taken where the pages are open). What differs is the encoding, so each function here is a
thin one that reads Wormhole's operand slots and calls the shared body with Wormhole's AddrMod rule
(matrix/addressing.py: two bits, slot ``AddrMod + 4`` while ExtraAddrModBit or ADDR_MOD_SET_Base is
set; ApplyAddrMod never raises Unimplemented here). SHIFTXA, TRNSPSRCB, GATESRCRST (src_shifts.py)
and XMOV (mover.py) have the same encoding on both chips and are registered for both there.

Wormhole encoding (the pages' encoding diagrams; the table's slots are tt-llk's assembly.yaml)
---------------------------------------------------------------------------------------------
``clear_dvalid`` (bits 22..23) is ``FlipSrcB << 1 | FlipSrcA``; AddrMod is bits 15..16 of the
``addr_mode`` slot; DstRow is bits 0..9 of ``dst``. A set bit of a slot beyond its documented
operand raises UndefinedBehavior before anything changes (the rule of the Blackhole modules):
``addr_mode`` bits 17.. of MVMUL / DOTPV / GAPOOL / GMPOOL / ELW* / SHIFTXB / APOOL3S*, ``dst`` bits
10.., ``instr_mod`` bits 0 and 2 (word bits 12 and 14) of MOVA2D / MOVDBGA2D / MOVD2A / MOVD2B /
MOVB2A, MOVB2A's ``srca`` bit 6 and ``srcb`` bits 6.., SHIFTXB's ``rot_shift`` bits 1.. and
``shift_row`` bits 6...

- MVMUL: ``instr_mod19`` bit 0 (word bit 19) is BroadcastSrcBRow.
- DOTPV: ``instr_mod19`` must be 0; ``dest_accum_en`` (bit 21) is in no documented field and is
  ignored (the upstream page's syntax passes true there, the jasondavies fork's false).
- GAPOOL: ``instr_mod19`` 0 (the page's syntax) or 1 (tt-llk's DIM_16X16) is accepted and ignored;
  ``max_pool_index_en`` (bit 14) must be 0.
- GMPOOL: ``instr_mod19`` must be 1 (the page's syntax; other values name pooling shapes no page
  describes: Unimplemented); ``max_pool_index_en`` (bit 14) is ArgMax.
- ELWADD / ELWSUB: ``dest_accum_en`` (bit 21) is AddDst; ``instr_mod19`` (bits 19..20) is
  ``BroadcastSrcBRow << 1 | BroadcastSrcBCol0``. ELWMUL the same, its model always accumulating.
- MOVA2D / MOVDBGA2D / MOVD2A / MOVD2B: ``dest_32b_lo`` (bit 23) UseDst32bLo, ``src`` (17..22)
  SrcRow, ``instr_mod`` bit 1 (word bit 13) Move8Rows (MOVA2D / MOVDBGA2D) or Move4Rows.
- MOVB2D: ``instr_mod`` (12..14) is ``Move4Rows << 2 | Broadcast1RowTo8 << 1 | BroadcastCol0``.
- MOVB2A: ``srca`` (17..22) SrcARow, ``instr_mod`` bit 1 Move4Rows, ``srcb`` (0..5) SrcBRow.
- SHIFTXB: ``shift_row`` (0..5) SrcRow, ``rot_shift`` bit 0 (word bit 10) ShiftInZero.
- MFCONV3S1 / CONV3S1 / CONV3S2 / APOOL3S1 / APOOL3S2: no encoding diagram; AddrMod is the yaml's
  ``addr_mode`` at bits 15..16 and the other operands select nothing (MatrixUnit.md: "all they do is
  compute ``Dst += 0``", executed where that is documented, matrix/legacy.py).

Refused, by name (semantics.refuse: Unimplemented, changing nothing)
--------------------------------------------------------------------
- MPOOL3S1, MPOOL3S2: MatrixUnit.md says only that they do "something similar to what GMPOOL would
  do if SrcA was entirely zero"; no page gives a functional model.
- TRNSPSRCA, RAREB, SETASHRMH, SETASHRMH0, SETASHRMH1, SETASHRMV, SETIBRWC, SETPKEDGOF: no Wormhole
  page describes them at all (they appear only in the STALLWAIT / instruction tables).

CLREXPHIST (CLREXPHIST.md, Packers/ExponentHistogram.md) is registered with Blackhole's in
src_shifts.py: it resets the four packers' exponent histograms, which the emulator does not keep on
either chip (the packers do not update them; SETDMAREG's special modes that read them raise
Unimplemented), so it changes nothing and occupies the matrix unit one cycle.

Timing: as on Blackhole (MatrixUnit.md is Wormhole's page): the bodies report the same cycles.
"""

from __future__ import annotations

from tensixsim.tensix.matrix.addressing import WORMHOLE
from tensixsim.tensix.matrix.legacy import dst_plus_zero
from tensixsim.tensix.matrix.moves import _mova2d, _movb2a, _movb2d, _movd2src
from tensixsim.tensix.matrix.src_shifts import _shiftxb
from tensixsim.tensix.matrix.unit import _elementwise, _gmpool, _multiply
from tensixsim.tensix.regs import SRCA, SRCB
from tensixsim.tensix.semantics import Context, Outcome, refuse, semantics

WH = ("wormhole",)

# ------------------------------------------------------------------------------ arithmetic


@semantics("MVMUL", arches=WH)
def mvmul(ctx: Context, clear_dvalid: int, instr_mod19: int, addr_mode: int, dst: int) -> Outcome:
    broadcast = ctx.documented("instr_mod19", instr_mod19, 1)
    return _multiply(ctx, WORMHOLE, clear_dvalid, bool(broadcast), 8, addr_mode, dst)


@semantics("DOTPV", arches=WH)
def dotpv(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    ctx.documented("instr_mod19", instr_mod19, 0)
    return _multiply(ctx, WORMHOLE, clear_dvalid, False, 8, addr_mode, dst)


@semantics("GAPOOL", arches=WH)
def gapool(
    ctx: Context, clear_dvalid: int, instr_mod19: int, addr_mode: int, max_pool_index_en: int, dst: int
) -> Outcome:
    ctx.documented("instr_mod19", instr_mod19, 1)
    ctx.documented("max_pool_index_en", max_pool_index_en, 0)
    return _multiply(ctx, WORMHOLE, clear_dvalid, False, 4, addr_mode, dst)


@semantics("GMPOOL", arches=WH)
def gmpool(
    ctx: Context, clear_dvalid: int, instr_mod19: int, addr_mode: int, max_pool_index_en: int, dst: int
) -> Outcome:
    return _gmpool(ctx, WORMHOLE, clear_dvalid, instr_mod19, "addr_mode", addr_mode, max_pool_index_en, dst)


@semantics("ELWADD", arches=WH)
def elwadd(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, WORMHOLE, "add", clear_dvalid, bool(dest_accum_en), instr_mod19, addr_mode, dst)


@semantics("ELWSUB", arches=WH)
def elwsub(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, WORMHOLE, "sub", clear_dvalid, bool(dest_accum_en), instr_mod19, addr_mode, dst)


@semantics("ELWMUL", arches=WH)
def elwmul(
    ctx: Context, clear_dvalid: int, dest_accum_en: int, instr_mod19: int, addr_mode: int, dst: int
) -> Outcome:
    return _elementwise(ctx, WORMHOLE, "mul", clear_dvalid, True, instr_mod19, addr_mode, dst)


# ------------------------------------------------------------------------------ data moves


@semantics("MOVA2D", arches=WH)
def mova2d(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _mova2d(ctx, WORMHOLE, dest_32b_lo, src, addr_mode, instr_mod, dst, wait_gate=True)


@semantics("MOVDBGA2D", arches=WH)
def movdbga2d(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _mova2d(ctx, WORMHOLE, dest_32b_lo, src, addr_mode, instr_mod, dst, wait_gate=False)


@semantics("MOVB2D", arches=WH)
def movb2d(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _movb2d(ctx, WORMHOLE, dest_32b_lo, src, addr_mode, instr_mod, dst)


@semantics("MOVD2A", arches=WH)
def movd2a(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _movd2src(ctx, WORMHOLE, SRCA, dest_32b_lo, src, addr_mode, instr_mod, dst)


@semantics("MOVD2B", arches=WH)
def movd2b(ctx: Context, dest_32b_lo: int, src: int, addr_mode: int, instr_mod: int, dst: int) -> Outcome:
    return _movd2src(ctx, WORMHOLE, SRCB, dest_32b_lo, src, addr_mode, instr_mod, dst)


@semantics("MOVB2A", arches=WH)
def movb2a(ctx: Context, srca: int, addr_mode: int, instr_mod: int, srcb: int) -> Outcome:
    return _movb2a(ctx, WORMHOLE, srca, addr_mode, instr_mod, srcb)


@semantics("SHIFTXB", arches=WH)
def shiftxb(ctx: Context, addr_mode: int, rot_shift: int, shift_row: int) -> Outcome:
    return _shiftxb(ctx, WORMHOLE, addr_mode, rot_shift, shift_row)


# ------------------------------------------------------------------------------ legacy


def _conv(ctx: Context, clear_dvalid: int, rotate_weights: int, addr_mode: int, dst: int) -> Outcome:
    WORMHOLE.operand(ctx, "addr_mode", addr_mode)
    return dst_plus_zero(ctx, WORMHOLE, clear_dvalid, addr_mode)


def _apool(ctx: Context, clear_dvalid: int, addr_mode: int, index_en: int, dst: int) -> Outcome:
    WORMHOLE.operand(ctx, "addr_mode", addr_mode)
    return dst_plus_zero(ctx, WORMHOLE, clear_dvalid, addr_mode)


for _name in ("MFCONV3S1", "CONV3S1", "CONV3S2"):
    semantics(_name, arches=WH)(_conv)
for _name in ("APOOL3S1", "APOOL3S2"):
    semantics(_name, arches=WH)(_apool)

# ------------------------------------------------------------------------------ refused by name

_NO_PAGE = "no Wormhole page documents it, so there is no functional model to execute"
refuse(
    "MPOOL3S1",
    "a legacy instruction MatrixUnit.md describes only as similar to GMPOOL with SrcA all zero: "
    "there is no documented functional model",
    arches=WH,
)
refuse(
    "MPOOL3S2",
    "a legacy instruction MatrixUnit.md describes only as similar to GMPOOL with SrcA all zero: "
    "there is no documented functional model",
    arches=WH,
)
for _name in ("TRNSPSRCA", "RAREB", "SETASHRMH", "SETASHRMH0", "SETASHRMH1", "SETASHRMV", "SETIBRWC"):
    refuse(_name, _NO_PAGE, arches=WH)
refuse("SETPKEDGOF", _NO_PAGE, arches=WH)  # filed under MATH by the yaml, though named for the packer
