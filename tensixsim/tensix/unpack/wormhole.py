"""The unpackers on Wormhole B0: UNPACR and UNPACR_NOP with Wormhole's encodings.

Functional model: tt-isa-documentation WormholeB0 UNPACR.md, UNPACR_Regular.md,
UNPACR_IncrementContextCounter.md, UNPACR_FlushCache.md, UNPACR_NOP*.md (the jasondavies fork, which
has the UNPACR_NOP pages), Unpackers/README.md and Unpackers/FormatConversion.md. These are the pages
the Blackhole unpackers' model was written from, so the model is theirs (:func:`unit.unpacr_modes`,
:func:`src_banks.nop_zerosrc`, :func:`src_banks.nop_setdvalid`), with the page's own readings in place
of the Blackhole ones (:data:`WORMHOLE`):

- Tileize_mode (the page's DiscontiguousInputRows) reads 16 datums of every format per input row,
  then moves RowStride on (Blackhole: 32 for formats wider than a byte), and allows sub-byte (BFP4 /
  BFP2) datums; the page's 16-byte alignment rule for the first datum still holds.
- MultiContextMode on unpacker 1 with a context >= 2 is the page's UndefinedBehaviour.
- FP8 (e5m2) input is the page's ``DatumBits <<= 8`` into FP16 (Blackhole: Unimplemented).
- The configuration has no ``Context_count_non_log2_en``: the counter wraps as the page says.
- ReadL1Bytes outside Wormhole's 1464 KiB of L1 raises MemoryFault (``arch.l1_size``).
- Upsampling: ``Upsample_rate`` 1 inserts one zero after each datum, or with
  ``Upsample_and_interleave`` skips one output position (and wants at most x2). For rates 2 and 3 the
  page's model (``(1 << rate) - 1`` zeroes: 3, 7) and Unpackers/README.md's table (2, 4) disagree:
  Unimplemented.

The Wormhole configuration names match the ones unit.py reads (``THCON_SEC<u>_REG*``, ``UNP<u>_*``,
``UNPACK_MISC_CFG_CfgContextOffset_<u>``; ``Shift_amount_cntx`` in THCON_SEC, the ZW strides in
``ADDR_CTRL_ZW_REG_1``, as the fork's page has them). Dst rows map as Dst.md's AdjRow (no Blackhole
remapping). Timing is UNPACR_Regular.md's "Performance", as on Blackhole (timing.UNPACK).

UNPACR encoding (UNPACR_Regular.md's diagram): the table's slots are the same as Blackhole's except
bit 5, ``rareb_en`` (the pages pass false; tt-llk's yaml: "srcb rarefy on uncompress_done", which has
no model): a set bit raises Unimplemented. ``last`` (bit 0; every tt-llk Wormhole UNPACR sets it, the
yaml: flush the unpacker's accumulation buffers) has no architectural effect and either value is
accepted, as on Blackhole. IncrementContextCounter is bit 13 alone, FlushCache bit 1 (with
MultiContextMode): any other set bit in those forms is UndefinedBehavior.

UNPACR_NOP encoding (the mode diagrams): one 23-bit operand ``no_op`` whose low bits pick the mode.

- ``[1:0] == 1``: ZEROSRC, with NegativeInfSrcA bit 2, BothBanks bit 3, WaitLikeUnpacr bit 4. The
  diagram has bit 6 as 0; tt-llk's yaml calls it "set dvalid" and warns against using it with ZEROSRC
  (a hardware issue), so it and every bit from 5 up are UndefinedBehavior.
- ``[2:0] == 2``: Nop. ``[2:0] == 7``: SETDVALID. Any other set bit: UndefinedBehavior.
- ``[2:0] == 0 / 3``: OverlayClear, a write of 1 to a NoC overlay stream's
  ``STREAM_MSG_DATA_CLEAR_REG_INDEX``, which the stream registers do not model: Unimplemented.
- ``[2:0] == 4``: SETREG, an MMIO write at ``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)``;
  SetRegBase is TDMA-RISC state (TDMA-RISC.md ``SetUnpackRegAddr``) the emulator does not keep:
  Unimplemented.
- ``[2:0] == 6``: no page (the yaml: reserved): UndefinedBehavior.

Every form first waits for the unpacker's earlier UNPACR to finish fetching (the pages' "sequenced
with UNPACR"), as on Blackhole.
"""

from __future__ import annotations

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.unpack.fetch import fetch_wait
from tensixsim.tensix.unpack.src_banks import nop_setdvalid, nop_zerosrc
from tensixsim.tensix.unpack.unit import UnpackerReadings, unpacr_modes
from tensixsim.timing import UNPACK

WORMHOLE_ONLY = ("wormhole",)

# UNPACR_Regular.md as it stands: 16 datums an input row for every format, sub-byte datums allowed,
# unpacker 1 contexts >= 2 undefined, FP8 modelled, no non-log2 counter field, Upsample_rate 1.
WORMHOLE = UnpackerReadings(16, 16, True, UndefinedBehavior, True, False, upsample_one=True)

# UNPACR_NOP modes (the low three bits of the operand; ZEROSRC is any value with [1:0] == 1).
NOP_OVERLAY_CLEAR, NOP_OVERLAY_CLEAR_STREAM, NOP_SETREG, NOP_RESERVED, NOP_SETDVALID = 0, 3, 4, 6, 7
ZEROSRC_BITS = 5  # mode [1:0], NegativeInfSrcA 2, BothBanks 3, WaitLikeUnpacr 4


@semantics("UNPACR", arches=WORMHOLE_ONLY)
def unpacr(
    ctx: Context,
    unpack_block_selection: int,
    addr_mode: int,
    cfg_context_cnt_inc: int,
    cfg_context_id: int,
    addr_cnt_context_id: int,
    ovrd_thread_id: int,
    set_dat_valid: int,
    rareb_en: int,
    zero_write2: int,
    auto_inc_context_id: int,
    row_search: int,
    search_cache_flush: int,
    last: int,
) -> Outcome:
    return unpacr_modes(
        ctx, WORMHOLE, unpack_block_selection, addr_mode, cfg_context_cnt_inc, cfg_context_id,
        addr_cnt_context_id, ovrd_thread_id, set_dat_valid, zero_write2, auto_inc_context_id, row_search,
        search_cache_flush, last,
        extra=("rareb_en", rareb_en, "rareb_en (SrcB rarefy on uncompress done) has no functional model"),
    )  # fmt: skip


@semantics("UNPACR_NOP", arches=WORMHOLE_ONLY)
def unpacr_nop(ctx: Context, unpack_block_selection: int, no_op: int) -> Outcome:
    unit = unpack_block_selection
    if (waiting := fetch_wait(ctx, unit)) is not None:
        return waiting
    if no_op & 3 == 1:  # ZEROSRC
        ctx.documented("no_op", no_op, ZEROSRC_BITS)
        return nop_zerosrc(ctx, unit, no_op >> 2 & 1, no_op >> 3 & 1, no_op >> 4 & 1, 0)
    mode = no_op & 7
    if mode in (NOP_OVERLAY_CLEAR, NOP_OVERLAY_CLEAR_STREAM):
        why = "OverlayClear (the NoC overlay's STREAM_MSG_DATA_CLEAR register is not modelled)"
        raise ctx.error(Unimplemented, why, no_op)
    if mode == NOP_SETREG:
        raise ctx.error(
            Unimplemented, "SETREG (SetRegBase is TDMA-RISC state the emulator does not keep)", no_op
        )
    if mode == NOP_RESERVED:
        raise ctx.error(UndefinedBehavior, "UNPACR_NOP mode 6 has no page (reserved)", no_op)
    ctx.documented("no_op", no_op, 3)
    if mode == NOP_SETDVALID:
        return nop_setdvalid(ctx, unit)
    return Retire(UNPACK.nop)  # Nop: occupies the unpacker for one cycle
