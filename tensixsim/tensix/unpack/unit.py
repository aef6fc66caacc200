"""The unpackers' UNPACR (L1 -> SrcA / SrcB / Dst) on Blackhole: its three modes and the regular
unpack, whose model Wormhole's registrations share (wormhole.py). UNPACR_NOP and the bank hand-over
are in src_banks.py, the format conversion in convert.py, the L1 fetch's timing in fetch.py.

Functional model: tt-isa-documentation WormholeB0 UNPACR.md, UNPACR_Regular.md,
UNPACR_IncrementContextCounter.md, UNPACR_FlushCache.md, UNPACR_NOP*.md, Unpackers/README.md and
Unpackers/FormatConversion.md; SrcASrcB.md and Dst.md for the register files (regs.py). No BlackholeA0
page covers the unpackers, so the Wormhole models are applied with the Blackhole encoding and
configuration names below; where Blackhole is known to differ and no page says how, the emulator
raises Unimplemented rather than guess. Those Blackhole readings are the :data:`BLACKHOLE`
:class:`UnpackerReadings`; wormhole.py registers the same model for Wormhole, with its
encodings and the pages' own readings.

Blackhole encoding
------------------
UNPACR: the Blackhole table keeps every Wormhole bit position. ``unpack_block_selection`` is
WhichUnpacker, ``addr_mode`` holds Ch1YInc[7:6] Ch1ZInc[5:4] Ch0YInc[3:2] Ch0ZInc[1:0],
``cfg_context_id`` ContextNumber, ``addr_cnt_context_id`` ContextADC, ``ovrd_thread_id``
MultiContextMode, ``set_dat_valid`` FlipSrc, ``zero_write2`` AllDatumsAreZero, ``auto_inc_context_id``
UseContextCounter, ``row_search`` RowSearch. The mode is chosen by ``cfg_context_cnt_inc`` (1:
IncrementContextCounter, every other operand zero) and then ``search_cache_flush`` (FlushCache, only
MultiContextMode may be set). Any other set bit in those two forms raises UndefinedBehavior.

- ``last``: the pages' syntax passes false; tt-llk's Blackhole kernels set it on every UNPACR and the
  ISA yaml describes it as flushing the unpacker's internal accumulation buffers to their consumer.
  That has no architectural effect in the functional model, so either value is accepted.
- ``srcb_bcast`` (bit 5; the yaml: broadcast the starting row into the adjacent 8 rows of SrcB) is
  passed as false by the pages and has no functional model: a set bit raises Unimplemented.

Configuration (Blackhole names)
-------------------------------
``ConfigState.THCON_SEC[u].X`` is ``THCON_SEC<u>_REG<n>_X``; ``UNP[u].X`` is ``UNP<u>_X``;
``FORCE_SHARED_EXP_shared_exp`` is Blackhole's ``UNP<u>_FORCED_SHARED_EXP_shared_exp``. The tile
descriptor is the 128-bit ``THCON_SEC<u>_REG0_TileDescriptor``, laid out as UNPACR_Regular.md's table.

Points the pages leave open, and the readings taken
---------------------------------------------------
- L1 reads outside L1 (``ReadL1Bytes``'s UndefinedBehaviour, with Blackhole's 1536 KiB) raise
  MemoryFault naming the address; nothing has changed when they do.
- MultiContextMode on unpacker 1 with a context >= 2: undefined on Wormhole (two contexts), but
  Blackhole's configuration has eight context fields for THCON_SEC1 too; undocumented, Unimplemented.
  ``Context_count_non_log2_en`` (Blackhole only) changes the counter's wrap in an undocumented way:
  Unimplemented when the counter advances with it set.
- Tileize_mode (the page's DiscontiguousInputRows): the page's RowStride (the three 4-bit
  ``Shift_amount_cntx0..2`` fields, in 16-byte units), no column shift, a 16-byte-aligned first datum
  and no compression or upsampling (UndefinedBehavior otherwise). Blackhole reads 32 datums per input
  row for formats wider than a byte and 16 for byte formats where the Wormhole page reads 16; that
  fact and the UndefinedBehavior for sub-byte (BFP4 / BFP2) datums come from Tenstorrent's ttsim
  Blackhole unpacker, and agree with tt-llk's Blackhole tilize, which unpacks a whole 32x32 tile (X
  dimension 1024) with one UNPACR and the row pitch in ``Shift_amount``. The FIFO wrap is applied at
  each input row start, as the page does every 16 datums.
- Not modelled, raising Unimplemented: compressed input (IsUncompressed / Disable_zero_compress false),
  RowSearch, upsampling (Upsample_rate != 0; the README's "rate 3 inserts four zeroes" disagrees with
  the model's ``(1 << rate) - 1``), FP8 input (Blackhole's e4m3 ``Unp_LF8_4b_exp`` form and its
  all-ones case have no page). Format codes 12 and 13 name no format: UndefinedBehavior.
- A SrcA row beyond the bank once SrcRow is added (the page indexes ``SrcA[Bank][Row]`` unchecked),
  and an X end before the X start (an unsigned count that wraps to ~2**32 datums): UndefinedBehavior.
  When several datums fail, the first in the page's order (its read, its exponent read, its
  conversion, its placement) decides the error, as datum-by-datum execution would; the datums are
  converted and placed as whole numpy arrays.
- Dst: the unpacker writes single datums. Dst row validity (regs.py): writing into a row marked
  undefined makes the row defined, its other datums reading as zero (the value a reader saw). Rows go
  through Blackhole's Adj16 / Adj32 mapping (DEST_ACCESS_CFG), like every Dst access. No page says the
  unpacker's Dst writes follow Dst.md's matrix-unit read-after-write rule, so blocks are not marked.
- FlushCache: the row start cache is not modelled (the page gives no model); it changes nothing.
- Unpackers' ``ContextCounter[thread]`` lives in :class:`fetch.UnpackState` on the coprocessor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensixsim.errors import SimError, UndefinedBehavior, Unimplemented
from tensixsim.tensix.adc import UNPACKER0, Y, Z
from tensixsim.tensix.formats import BFP2, BFP2A, BFP4, BFP4A, BFP8, BFP8A, FORMAT_NAMES, FP8
from tensixsim.tensix.regs import SRC_MASK, SRC_ROWS, dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.unpack.convert import (
    BFP_FORMATS,
    DATUM_SIXTEENTHS,
    HALF_FORMATS,
    WIDE_FORMATS,
    convert,
    datum_addresses,
    exponent_addresses,
    gather_bits,
    read_fault,
)
from tensixsim.tensix.unpack.fetch import fetch_wait, start_fetch, unpack_state
from tensixsim.tensix.unpack.src_banks import bank_wait, flip
from tensixsim.timing import UNPACK

CONTEXTS = 8


@dataclass(frozen=True)
class UnpackerReadings:
    """Where the chips' unpackers differ around the one functional model (UNPACR_Regular.md): the
    Wormhole page as it stands, or the Blackhole readings this docstring's module header gives."""

    # Datums read from one input row in Tileize_mode: for formats wider than a byte, and for byte
    # (and, where allowed, sub-byte) formats.
    tileize_row_wide: int
    tileize_row_narrow: int
    tileize_sub_byte: bool  # sub-byte (BFP4 / BFP2) datums allowed in Tileize_mode
    # The error for MultiContextMode on unpacker 1 with a context >= 2.
    unit1_high_context: type[SimError]
    fp8_input: bool  # FP8 input has a model (the page's ``DatumBits <<= 8`` into FP16)
    non_log2_counter: bool  # the configuration has Context_count_non_log2_en
    # Upsample_rate 1 is modelled (one zero, or one skipped position, after each datum: the one rate
    # on which the page's model and Unpackers/README.md's table agree).
    upsample_one: bool = False


# Blackhole: 32 datums an input row for formats wider than a byte, 16 for byte formats, and no
# sub-byte datums in Tileize_mode (Tenstorrent's ttsim Blackhole unpacker); unpacker 1 has eight
# context fields in the configuration, so a context >= 2 is undocumented rather than undefined.
TILEIZE_ROW_WIDE, TILEIZE_ROW_NARROW = 32, 16  # Blackhole's (native/unpack.c reads them too)
BLACKHOLE = UnpackerReadings(TILEIZE_ROW_WIDE, TILEIZE_ROW_NARROW, False, Unimplemented, False, True)


# ------------------------------------------------------------------------------ helpers


def _cfg(ctx: Context, unit: int, name: str) -> int:
    """``ConfigState.THCON_SEC[unit].name`` for the issuing pipe's state."""
    config = ctx.copro.config
    return config.read_field(f"THCON_SEC{unit}_{name}", config.state_id(ctx.thread))


def _unp(ctx: Context, unit: int, name: str) -> int:
    config = ctx.copro.config
    return config.read_field(f"UNP{unit}_{name}", config.state_id(ctx.thread))


def _base_field(context: int) -> str:
    return "REG3_Base_address" if context == 0 else f"REG{3 if context < 4 else 4}_Base_cntx{context}_address"


def _offset_field(context3: int) -> str:
    return "REG7_Offset_address" if context3 == 0 else f"REG7_Offset_cntx{context3}_address"


def _first(mask: np.ndarray | None) -> int | None:
    if mask is None or not mask.any():
        return None
    return int(np.argmax(mask))


def _last_writes(flat: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The last write to each position only, as writing the datums one by one leaves them."""
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    keep = len(flat) - 1 - first_from_end
    return flat[keep], values[keep]


def _advance_counter(ctx: Context, readings: UnpackerReadings, unit: int, current: int) -> int:
    if readings.non_log2_counter and _cfg(ctx, unit, "REG2_Context_count_non_log2_en"):
        raise ctx.error(Unimplemented, "Context_count_non_log2_en is set (undocumented counter wrap)")
    incremented = (current + 1) & 7
    if incremented >= 1 << _cfg(ctx, unit, "REG2_Context_count"):
        incremented = 0
    return incremented


# ------------------------------------------------------------------------------ UNPACR


@semantics("UNPACR")
def unpacr(
    ctx: Context,
    unpack_block_selection: int,
    addr_mode: int,
    cfg_context_cnt_inc: int,
    cfg_context_id: int,
    addr_cnt_context_id: int,
    ovrd_thread_id: int,
    set_dat_valid: int,
    srcb_bcast: int,
    zero_write2: int,
    auto_inc_context_id: int,
    row_search: int,
    search_cache_flush: int,
    last: int,
) -> Outcome:
    return unpacr_modes(
        ctx, BLACKHOLE, unpack_block_selection, addr_mode, cfg_context_cnt_inc, cfg_context_id,
        addr_cnt_context_id, ovrd_thread_id, set_dat_valid, zero_write2, auto_inc_context_id, row_search,
        search_cache_flush, last,
        extra=("srcb_bcast", srcb_bcast, "srcb_bcast (SrcB row broadcast) has no functional model"),
    )  # fmt: skip


def unpacr_modes(
    ctx: Context,
    readings: UnpackerReadings,
    unit: int,
    addr_mode: int,
    cfg_context_cnt_inc: int,
    cfg_context_id: int,
    addr_cnt_context_id: int,
    ovrd_thread_id: int,
    set_dat_valid: int,
    zero_write2: int,
    auto_inc_context_id: int,
    row_search: int,
    search_cache_flush: int,
    last: int,
    *,
    extra: tuple[str, int, str],
) -> Outcome:
    """UNPACR.md's three modes, for either chip's encoding: ``extra`` is the one bit the chips name
    differently (name, value, why a set bit is not modelled)."""
    extra_name, extra_value, extra_why = extra
    if (waiting := fetch_wait(ctx, unit)) is not None:
        return waiting
    others = {
        "addr_mode": addr_mode,
        "cfg_context_id": cfg_context_id,
        "addr_cnt_context_id": addr_cnt_context_id,
        "set_dat_valid": set_dat_valid,
        extra_name: extra_value,
        "zero_write2": zero_write2,
        "auto_inc_context_id": auto_inc_context_id,
        "row_search": row_search,
        "last": last,
    }
    if cfg_context_cnt_inc:  # IncrementContextCounter
        ctx.documented("cfg_context_cnt_inc", cfg_context_cnt_inc, 1)
        others.update(ovrd_thread_id=ovrd_thread_id, search_cache_flush=search_cache_flush)
        for name, value in others.items():
            ctx.documented(name, value, 0)
        counters = unpack_state(ctx.copro).context_counter
        counters[unit, ctx.thread] = _advance_counter(ctx, readings, unit, int(counters[unit, ctx.thread]))
        return Retire(UNPACK.nop)
    if search_cache_flush:  # FlushCache: the cache is not modelled
        for name, value in others.items():
            ctx.documented(name, value, 0)
        return Retire(UNPACK.nop)
    if extra_value:
        raise ctx.error(Unimplemented, extra_why)
    return _regular(
        ctx, readings, unit, addr_mode, cfg_context_id, addr_cnt_context_id, ovrd_thread_id,
        set_dat_valid, zero_write2, auto_inc_context_id, row_search,
    )  # fmt: skip


def _regular(
    ctx: Context,
    readings: UnpackerReadings,
    unit: int,
    addr_mode: int,
    context_number: int,
    context_adc: int,
    multi: int,
    flip_src: int,
    all_zero: int,
    use_counter: int,
    row_search: int,
) -> Outcome:
    copro, thread = ctx.copro, ctx.thread
    config, regs, adc = copro.config, copro.regs, copro.adc
    counters = unpack_state(copro).context_counter
    ch0_z_inc, ch0_y_inc = addr_mode & 3, addr_mode >> 2 & 3
    ch1_z_inc, ch1_y_inc = addr_mode >> 4 & 3, addr_mode >> 6 & 3

    # ---- context and ADC selection
    if multi:
        context = int(counters[unit, thread]) if use_counter else context_number
        context = (context + config.thread_field(f"UNPACK_MISC_CFG_CfgContextOffset_{unit}", thread)) & 7
        which_adc = context_adc
        if which_adc == 3:
            raise ctx.error(UndefinedBehavior, "ContextADC is 3", which_adc)
        if unit == 1 and context >= 2:
            raise ctx.error(readings.unit1_high_context, f"unpacker 1 context {context}", context)
    else:
        context, which_adc = 0, thread
    if row_search:
        raise ctx.error(Unimplemented, "RowSearch is not modelled")

    # ---- tile descriptor and formats
    desc = _cfg(ctx, unit, "REG0_TileDescriptor")
    uncompressed = _cfg(ctx, unit, f"REG2_Disable_zero_compress_cntx{context}") if multi else desc >> 4 & 1
    tileize = _cfg(ctx, unit, "REG2_Tileize_mode")  # the page's DiscontiguousInputRows
    if not uncompressed:
        if tileize:
            raise ctx.error(UndefinedBehavior, "Tileize_mode with compressed input")
        raise ctx.error(Unimplemented, "compressed input (decompression) is not modelled")
    no_bfp_exp_section = desc >> 5 & 1
    x_dim = (
        _cfg(ctx, unit, f"REG5_Tile_x_dim_cntx{context & 3}") if multi and unit == 0 else desc >> 16 & 0xFFFF
    )
    y_dim = desc >> 32 & 0xFF
    z_dim = (desc >> 48 & 0xFF) or 1
    w_dim = (desc >> 64 & 0xFF) or 1
    digest = desc >> 120 & 0xFF
    if multi and _cfg(ctx, unit, "REG2_Ovrd_data_format"):
        in_fmt = _cfg(ctx, unit, f"REG7_Unpack_data_format_cntx{context}")
        out_fmt = _cfg(ctx, unit, f"REG7_Unpack_out_data_format_cntx{context}")
    else:
        in_fmt = desc & 0xF
        out_fmt = _cfg(ctx, unit, "REG2_Out_data_format")
    for what, code in (("InDataFormat", in_fmt), ("OutDataFormat", out_fmt)):
        if code not in FORMAT_NAMES:
            raise ctx.error(UndefinedBehavior, f"{what} {code} names no format", code)
    if FP8 in (in_fmt, out_fmt) and not readings.fp8_input:
        raise ctx.error(Unimplemented, "FP8 input (Blackhole's Unp_LF8_4b_exp / all-ones cases undocumented)")
    size16 = DATUM_SIXTEENTHS[in_fmt]
    is_bfp = in_fmt in BFP_FORMATS

    # ---- input address (sixteenths of a byte)
    if multi and context != 0:
        in_addr = _cfg(ctx, unit, _base_field(context)) + (
            _cfg(ctx, unit, _offset_field(context & 3)) & 0xFFFF
        )
    else:
        in_addr = _cfg(ctx, unit, "REG3_Base_address") + (_cfg(ctx, unit, "REG7_Offset_address") & 0xFFFF)
    in_addr = (in_addr + 1 + digest) * 16 * 16
    force_shared_exp = _cfg(ctx, unit, "REG2_Force_shared_exp")
    exp_addr = 0
    if is_bfp and not force_shared_exp:
        exp_addr = in_addr
        if in_fmt in (BFP8, BFP8A) or not no_bfp_exp_section:
            exponents = -(-(x_dim * y_dim * z_dim * w_dim) // 16)
            in_addr += -(-exponents // 16) * 16 * 16

    adc_value = adc.value
    xy = adc_value[which_adc, unit, 0]
    zw = adc_value[thread, unit, 0]
    x_pos, y_pos = int(xy[0]), int(xy[1])
    x_end = int(adc_value[which_adc, unit, 1, 0]) + 1
    if x_end < x_pos:
        raise ctx.error(UndefinedBehavior, f"X end {x_end} before X start {x_pos} (count wraps)", x_pos)
    first = ((int(zw[3]) * z_dim + int(zw[2])) * y_dim + y_pos) * x_dim + x_pos
    count = x_end - x_pos

    exp_addr += first
    datum_addr = in_addr + first * size16
    limit = _cfg(ctx, unit, "REG2_Unpack_limit_address") * 16 * 16
    fifo = _cfg(ctx, unit, "REG2_Unpack_fifo_size") * 16 * 16

    def wrap(addr: int) -> int:
        return addr - fifo if addr > limit else addr

    exp_addr, datum_addr = wrap(exp_addr), wrap(datum_addr)
    if tileize:
        if size16 < 16 and not readings.tileize_sub_byte:
            raise ctx.error(UndefinedBehavior, f"Tileize_mode with {FORMAT_NAMES[in_fmt]} (sub-byte) datums")
        # Blackhole reads 32 datums a row for formats wider than a byte (Wormhole: 16)
        row_width = readings.tileize_row_wide if size16 > 16 else readings.tileize_row_narrow
        row_stride = 256 * sum(_cfg(ctx, unit, f"REG2_Shift_amount_cntx{i}") << (4 * i) for i in range(3))
    else:
        row_width, row_stride = 16, size16 * 16

    # ---- output address
    if unit == 0:
        to_dst = (
            _cfg(ctx, 0, f"REG2_Unpack_if_sel_cntx{context}") if multi else _cfg(ctx, 0, "REG2_Unpack_If_Sel")
        )
        transpose = _cfg(ctx, 0, "REG2_Haloize_mode")
    else:
        to_dst = transpose = 0
    out = adc_value[thread, unit, 1]
    out_addr = (
        _unp(ctx, unit, "ADDR_BASE_REG_1_Base")
        + int(out[1]) * _unp(ctx, unit, "ADDR_CTRL_XY_REG_1_Ystride")
        + int(out[2]) * _unp(ctx, unit, "ADDR_CTRL_ZW_REG_1_Zstride")
        + int(out[3]) * _unp(ctx, unit, "ADDR_CTRL_ZW_REG_1_Wstride")
    )
    for group, align in ((WIDE_FORMATS, 2), (HALF_FORMATS, 1)):
        if out_fmt in group:
            if out_addr & ((1 << align) - 1):
                raise ctx.error(UndefinedBehavior, f"output address {out_addr:#x} is misaligned", out_addr)
            out_addr >>= align
    if multi and unit == 0:
        ctx_out = _cfg(ctx, 0, f"REG5_Dest_cntx{context & 3}_address")
        out_addr = (
            out_addr + ctx_out if to_dst or _unp(ctx, 0, "ADD_DEST_ADDR_CNTR_add_dest_addr_cntr") else ctx_out
        )
    upsample = _cfg(ctx, unit, "REG2_Upsample_rate")
    if upsample:
        if tileize:
            raise ctx.error(UndefinedBehavior, "Tileize_mode with upsampling")
        if upsample != 1 or not readings.upsample_one:
            raise ctx.error(Unimplemented, f"upsampling (Upsample_rate {upsample}) is not modelled", upsample)
    interleave = upsample and _cfg(ctx, unit, "REG2_Upsample_and_interleave")
    col_shift = 0 if unit == 1 or tileize else _cfg(ctx, unit, f"REG2_Shift_amount_cntx{context & 3}")
    if (transpose or tileize) and datum_addr % 256:
        raise ctx.error(
            UndefinedBehavior, "Haloize_mode / Tileize_mode with input not 16-byte aligned", datum_addr // 16
        )
    if to_dst and (col_shift or transpose):
        raise ctx.error(UndefinedBehavior, "unpacking to Dst with a column shift or Haloize_mode")

    # ---- the datums (computed before anything changes)
    bank = int(regs.unpacker_bank[unit])
    if count:
        waiting = bank_wait(ctx, unit, bank)
        if waiting is not None:
            return waiting
    set_ovrd = config.thread_field("SRCA_SET_SetOvrdWithAddr", thread)
    src_row = int(regs.unpacker_src_row[unit, thread])
    shared_exp = _unp(ctx, unit, "FORCED_SHARED_EXP_shared_exp")
    wide_out = out_fmt in WIDE_FORMATS
    l1 = copro.tile.l1
    l1_size = copro.arch.l1_size
    # Datum by datum, the page reads the datum, then its exponent, converts it and places it; the
    # first datum that fails decides the error, in that order: (datum, step, error).
    failures: list[tuple[int, int, Exception]] = []
    addrs = datum_addresses(datum_addr, count, size16, row_width, row_stride, wrap)
    bad = (addrs < 0) | ((addrs + size16 + 15) // 16 > l1_size)
    if (i := _first(bad)) is not None:
        failures.append((i, 0, read_fault(ctx, int(addrs[i]), size16)))
    bits = gather_bits(l1, addrs, size16)
    exps = np.zeros(count, np.int64)
    if is_bfp:
        if force_shared_exp:
            exps[:] = shared_exp
        else:
            exp_addrs = exponent_addresses(exp_addr, count, wrap)
            bad = (exp_addrs < 0) | (exp_addrs // 16 + 1 > l1_size)
            if (i := _first(bad)) is not None:
                failures.append((i, 1, read_fault(ctx, int(exp_addrs[i]) // 16 * 16, 16)))
            exps = l1[np.clip(exp_addrs // 16, 0, len(l1) - 1)].astype(np.int64)
    datums = np.zeros(count, np.int64)
    if count:
        try:
            datums, bad = convert(ctx, unit, in_fmt, out_fmt, bits, exps, bool(to_dst))
        except UndefinedBehavior as e:
            failures.append((0, 2, e))
        else:
            if (i := _first(bad)) is not None:
                why = "format conversion of a BFP*a datum whose normalised exponent exceeds FP16's"
                failures.append((i, 2, ctx.error(UndefinedBehavior, why, in_fmt << 4 | out_fmt)))
    if all_zero:
        datums[:] = 0
    # Each datum's output slots (the datum, then the upsampling zero or skipped position) and the
    # datum each written value belongs to (whose place in the page's order an error takes).
    step = upsample + 1
    if upsample and not interleave:
        outs = out_addr + np.arange(count * step, dtype=np.int64)
        datums = np.stack([datums, np.zeros_like(datums)], axis=1).ravel()
    else:
        outs = out_addr + step * np.arange(count, dtype=np.int64)
    owner = np.arange(len(outs), dtype=np.int64) // (step if len(outs) > count else 1)
    rows, cols = outs >> 4, outs & 15
    if unit == 1:
        rows = (rows + src_row) & 0x3F
    elif not to_dst:
        keep = (rows >= 4) & (cols >= col_shift)
        rows, cols, datums = rows[keep] - 4, cols[keep] - col_shift, datums[keep]
        index = np.flatnonzero(keep)
        if set_ovrd:
            if (i := _first(rows >= 64)) is not None:
                row = int(rows[i])
                error = ctx.error(UndefinedBehavior, f"SrcA row {row} (SetOvrdWithAddr) beyond 63", row)
                failures.append((int(owner[index[i]]), 3, error))
        else:
            if (i := _first((rows >= 16) | (rows + src_row >= SRC_ROWS))) is not None:
                row = int(rows[i])
                if row >= 16:
                    error = ctx.error(UndefinedBehavior, f"SrcA row {row} beyond 15 (before SrcRow)", row)
                else:
                    row += src_row
                    error = ctx.error(UndefinedBehavior, f"SrcA row {row} (SrcRow {src_row}) beyond 63", row)
                failures.append((int(owner[index[i]]), 3, error))
            rows = rows + src_row
        if transpose:
            rows, cols = (rows & ~0xF) | cols, rows & 0xF
    else:
        rows = (rows - 4) & (15 if set_ovrd else 0x3FF)
    if failures:
        raise min(failures, key=lambda f: f[:2])[2]

    # ---- the context counter (may still raise)
    new_counter = None
    if multi and use_counter:
        new_counter = _advance_counter(ctx, readings, unit, context)

    want = _speed(ctx, unit, in_fmt, bool(tileize), bool(to_dst), upsample)

    # ---- commit
    state = unpack_state(copro)
    other_end, other_thread = int(state.end[1 - unit]), int(state.thread[1 - unit])
    start = ctx.cycle + UNPACK.address_cycles
    start_fetch(state, unit, start, count * size16 // 16, want, thread)
    state.thread[unit] = thread
    end = int(state.end[unit])
    if int(state.end[1 - unit]) != other_end:  # this fetch slowed the other unpacker's down
        moved = int(state.end[1 - unit])
        pending = regs.src_handover_at[1 - unit]
        pending[pending == other_end] = moved  # its FlipSrc waits for its data
        copro.extend_done(other_thread, moved, ctx.cycle if other_thread != thread else None)
    copro.extend_done(thread, end)
    if count and not to_dst:
        flat, values = _last_writes(rows * 16 + cols, datums & SRC_MASK)
        regs.src(unit)[bank, flat >> 4, flat & 15] = values
    elif count:
        remap, swizzle = dst_mapping(copro, thread)
        if wide_out:
            high = regs.dst32_rows(rows, remap=remap, swizzle=swizzle)
            storage = np.stack([high, high + 8], axis=1).ravel()
            values = np.stack([datums >> 16, datums & 0xFFFF], axis=1).ravel()
            cols = np.repeat(cols, 2)
        else:
            storage, values = regs.dst16_rows(rows, remap=remap), datums & 0xFFFF
        flat, values = _last_writes(storage * 16 + cols, values)
        touched = np.unique(flat >> 4)
        fresh = touched[~regs.dst_row_valid[touched]]
        regs.dst[fresh] = 0  # an undefined row becomes defined, its other datums zero
        regs.dst_row_valid[fresh] = True
        regs.dst[flat >> 4, flat & 15] = values
    if new_counter is not None:
        counters[unit, thread] = new_counter
    for i in {thread, which_adc}:
        adc.increment(i, UNPACKER0 + unit, 0, Y, ch0_y_inc)
        adc.increment(i, UNPACKER0 + unit, 0, Z, ch0_z_inc)
        adc.increment(i, UNPACKER0 + unit, 1, Y, ch1_y_inc)
        adc.increment(i, UNPACKER0 + unit, 1, Z, ch1_z_inc)
    if flip_src:
        flip(ctx, unit, end)  # the matrix unit sees the bank once the data has landed
    elif _cfg(ctx, unit, "REG2_Unpack_Src_Reg_Set_Upd"):
        base = config.thread_field("SRCB_SET_Base" if unit else "SRCA_SET_Base", thread) << 4
        regs.unpacker_src_row[unit, thread] += 16 + base
    return Retire(UNPACK.address_cycles)


def _speed(ctx: Context, unit: int, in_fmt: int, tileize: bool, to_dst: bool, upsample: int) -> int:
    """The speed the mode wants, 0 / 1 / 2 for x1 / x2 / x4 (UNPACR_Regular.md "Performance":
    DiscontiguousInputRows always x4, BFP2 always x1, BFP4 into Dst and UpsampleZeroes 1 at most x2,
    else Throttle_mode)."""
    speed = min(_cfg(ctx, unit, "REG2_Throttle_mode"), 2)
    if tileize:
        speed = 2
    elif in_fmt in (BFP2, BFP2A):
        speed = 0
    elif (to_dst and in_fmt in (BFP4, BFP4A)) or upsample == 1:
        speed = min(speed, 1)
    return speed
