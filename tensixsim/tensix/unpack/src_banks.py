"""The unpackers' side of the SrcA / SrcB banks: handing a bank to the matrix unit (UNPACR's FlipSrc,
SETDVALID) and UNPACR_NOP, which clears banks (ZEROSRC) or hands one over (SETDVALID). The functional
model is UNPACR_NOP*.md's; unit.py says how the unpackers' Wormhole pages apply to Blackhole.

Blackhole encoding
------------------
UNPACR_NOP: the Blackhole table splits the 23-bit operand as the ISA yaml does (``unpack_pop`` [1:0],
``src_clr_val_ctrl`` [3:2], ``bank_clr_ctrl`` [4], ``stall_clr_cntrl`` [5], ``clr_to1_fmt_ctrl``
[7:6], ``set_dvalid`` [11:8], ``msg_clr_cnt`` [14:12], ``stream_id`` [21:16]), which does not match
the Wormhole pages' bit layout (tt-llk's own Blackhole p_unpacr_nop carries a note that its bits do not
match). The readings, from the yaml's field descriptions mapped onto the Wormhole models:

- ``unpack_pop`` 2 with every other operand zero: Nop.
- ``unpack_pop`` 2 with ``clr_to1_fmt_ctrl`` 3 (the yaml: "a flavor of UNPACR_NOP which sets dvalid
  of Src Regs, but NOP in all other respects"): the SETDVALID model.
- ``unpack_pop`` 1: the ZEROSRC model, with ``bank_clr_ctrl`` BothBanks, ``stall_clr_cntrl``
  WaitLikeUnpacr (the yaml: 0 waits until data-valid is clear, 1 until write-ready), and
  ``src_clr_val_ctrl`` 0 (zero) or 1 (negative infinity, SrcA only as the page says). Values 2 (clear
  to one, in the ``clr_to1_fmt_ctrl`` format) and 3 (clear to UNP[0/1]_NOP_REG_CLR_VAL) have no
  functional model and raise Unimplemented. ``set_dvalid`` bit 0 (word bit 8; the yaml: "set reg bank
  dvalid once clearing is done", which tt-llk's Blackhole kernels use to hand over a bank) applies the
  SETDVALID model after the clearing; its bits 1..3 raise UndefinedBehavior.
- ``unpack_pop`` 0 / 3 (OverlayClear, and the yaml's enhanced SETREG-like flavour of 3): MMIO writes
  to NoC overlay stream registers, which these semantics do not reach: Unimplemented.
"""

from __future__ import annotations

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.regs import SRC_MASK, SrcClient, hand_over
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.unpack.fetch import fetch_wait
from tensixsim.timing import UNPACK


def bank_not_handed(file: int, bank: int) -> str:
    """Why an unpacker instruction waits for Src``file``'s ``bank``."""
    return f"Src{'AB'[file]} bank {bank} is not handed to the unpackers"


def bank_wait(ctx: Context, file: int, bank: int) -> Wait | None:
    if int(ctx.copro.regs.src_client[file, bank]) != SrcClient.UNPACKERS:
        return Wait(bank_not_handed(file, bank))
    return None


def flip(ctx: Context, unit: int, at: int | None = None) -> None:
    """Hand the unpacker's current bank to the matrix unit (FlipSrc / SETDVALID), from cycle ``at``
    (default: now); the unpacker goes on with the other bank at once."""
    regs, thread = ctx.copro.regs, ctx.thread
    base = ctx.copro.config.thread_field("SRCB_SET_Base" if unit else "SRCA_SET_Base", thread) << 4
    bank = int(regs.unpacker_bank[unit])
    hand_over(ctx.copro, unit, bank, ctx.cycle if at is None else at, ctx.cycle)
    regs.unpacker_bank[unit] ^= 1
    regs.unpacker_src_row[unit, thread] = base


# ------------------------------------------------------------------------------ UNPACR_NOP


@semantics("UNPACR_NOP")
def unpacr_nop(
    ctx: Context,
    unpacker_select: int,
    stream_id: int,
    msg_clr_cnt: int,
    set_dvalid: int,
    clr_to1_fmt_ctrl: int,
    stall_clr_cntrl: int,
    bank_clr_ctrl: int,
    src_clr_val_ctrl: int,
    unpack_pop: int,
) -> Outcome:
    unit = unpacker_select
    if (waiting := fetch_wait(ctx, unit)) is not None:
        return waiting
    if unpack_pop in (0, 3):
        raise ctx.error(Unimplemented, "OverlayClear / SETREG forms (NoC overlay writes)", unpack_pop)
    if unpack_pop == 2:
        for name, value in (
            ("stream_id", stream_id),
            ("msg_clr_cnt", msg_clr_cnt),
            ("set_dvalid", set_dvalid),
            ("stall_clr_cntrl", stall_clr_cntrl),
            ("bank_clr_ctrl", bank_clr_ctrl),
            ("src_clr_val_ctrl", src_clr_val_ctrl),
        ):
            ctx.documented(name, value, 0)
        if clr_to1_fmt_ctrl == 3:  # SETDVALID
            return nop_setdvalid(ctx, unit)
        if clr_to1_fmt_ctrl:
            raise ctx.error(UndefinedBehavior, "clr_to1_fmt_ctrl is reserved", clr_to1_fmt_ctrl)
        return Retire(UNPACK.nop)
    # ZEROSRC
    ctx.documented("stream_id", stream_id, 0)
    ctx.documented("msg_clr_cnt", msg_clr_cnt, 0)
    ctx.documented("set_dvalid", set_dvalid, 1)
    if src_clr_val_ctrl >= 2:
        raise ctx.error(
            Unimplemented, "src_clr_val_ctrl 2 / 3 (clear to one / to a register)", src_clr_val_ctrl
        )
    ctx.documented("clr_to1_fmt_ctrl", clr_to1_fmt_ctrl, 0)
    return nop_zerosrc(ctx, unit, src_clr_val_ctrl, bank_clr_ctrl, stall_clr_cntrl, set_dvalid)


def nop_zerosrc(
    ctx: Context, unit: int, negative_inf_srca: int, both_banks: int, wait_like_unpacr: int, set_dvalid: int
) -> Outcome:
    """UNPACR_NOP_ZEROSRC.md's model (after the unpacker's earlier instructions: :func:`fetch_wait`),
    then UNPACR_NOP_SETDVALID.md's if ``set_dvalid``."""
    regs = ctx.copro.regs
    unpack_bank = int(regs.unpacker_bank[unit])
    wait_bank = unpack_bank if wait_like_unpacr else int(regs.matrix_bank[unit])
    waiting = bank_wait(ctx, unit, wait_bank)
    if waiting is not None:
        return waiting
    value = SRC_MASK if unit == 0 and negative_inf_srca else 0
    banks = [0, 1] if both_banks else [unpack_bank]
    regs.src(unit)[banks] = value
    if set_dvalid:
        flip(ctx, unit)
    return Retire(UNPACK.nop)


def nop_setdvalid(ctx: Context, unit: int) -> Outcome:
    """UNPACR_NOP_SETDVALID.md (after the unpacker's earlier instructions: :func:`fetch_wait`)."""
    flip(ctx, unit)
    return Retire(UNPACK.nop)
