"""The packer's PACR (Dst -> L1) and PACR_SETREG on Blackhole: the input and output address generators
and the Dst fetch around the datums' conversions (convert.py) and the output streams (stream.py).

Functional model: tt-isa-documentation WormholeB0 PACR.md, PACR_SETREG.md, Packers/README.md,
Packers/InputAddressGenerator.md, Packers/OutputAddressGenerator.md, Packers/FormatConversion.md,
Packers/EdgeMasking.md, Packers/ReLU.md, Packers/ExponentThresholding.md, Packers/Downsampling.md;
Dst.md (both the Wormhole page and the jasondavies fork's BlackholeA0 page) for Dst addressing and the
read-after-write stall. No BlackholeA0 page covers the packers. Blackhole has one packer (configured by
``THCON_SEC0_REG1_*``, the Wormhole pages' ``Packers[0].Config``) with four Dst read interfaces where
Wormhole has four packers; the Wormhole models are applied to packer 0, and what Blackhole changes
without a page saying how raises Unimplemented. The pipeline's stages (convert.py's :func:`conversion`,
:func:`early`, :func:`relu`, :func:`threshold_exp`, :func:`late`, :func:`uniform_edge_mask`; stream.py's
:func:`stream_writes`, :func:`accumulated`; :func:`advance_adc`) take the packer's configuration
prefix where it matters, so wormhole.py runs Wormhole's four packers through them.

Blackhole encoding
------------------
PACR: ``cfg_context`` [23:21], ``row_pad_zero`` [20:18], ``dst_access_mode`` [17], ``addr_mode`` [16:15]
(AddrMod), ``addr_cnt_context`` [14:13], ``zero_write`` [12] (ZeroWrite), ``read_intf_sel`` [11:8]
(where Wormhole has PackerMask), ``ovrd_thread_id`` [7] (OvrdThreadId), ``concat`` [6:4] (Concat is one
bit on Wormhole), ``ctxt_ctrl`` [3:2], ``flush`` [1], ``last`` [0].

- ``read_intf_sel``: bit k enables Dst read interface k, 0 enables all four (tt-llk's
  ``ALL_INTF_ACTIVE``). Reading taken from ttsim's Blackhole model (no page): interface k reads
  ``InputNumDatums`` datums starting at Dst datum ``InputSourceAddr + 16 * k`` (row k below the start
  row), and the interfaces' datums enter the pipeline in interface order. Only the masks for which
  that reading is evidenced are accepted (0, 1, 3, 5, 7, 10, 15), with whole aligned rows (X start a
  multiple of 16 datums, 16 datums per interface) when more than one interface reads; a single
  interface must stay within its row. Anything else raises Unimplemented.
- ``concat``: the page gives Concat no effect without compression (which is not modelled); values 0
  and 1 are accepted, wider values raise Unimplemented.
- ``dst_access_mode`` (tt-llk's DST_ACCESS_STRIDED_MODE, which its Blackhole untilize uses): reading
  taken from ttsim's Blackhole packer (no page): read interface k starts 16 Dst rows (256 datums) on
  from the start instead of one row, so two interfaces read row r of a tile's left and right faces, one
  untilized 32-datum row. Accepted with ``read_intf_sel`` 0, 1 and 3 (the masks evidenced), else
  Unimplemented. Row validity, the read-after-write stall and Adj16 / Adj32 apply to the rows read.
- ``cfg_context``, ``row_pad_zero``, ``addr_cnt_context``,
  ``ovrd_thread_id`` (the Blackhole configuration has no ``Addr_cnt_context`` field) and ``ctxt_ctrl``
  have no Blackhole page: a non-zero value raises Unimplemented.

PACR_SETREG: the Blackhole slots (``push`` [23], ``mode_sel`` [22], ``unused`` [21:12], ``disable_stall``
[11:10], ``addr_sel`` [9:8], ``stream_id`` [7:2], ``flush`` [1], ``last`` [0]) are bit for bit the page's
``TT_PACR_SETREG(1, AddrSel, Value10, 0xf, AddrMid, 1, 0)``: ``mode_sel`` is AddrSel, ``unused`` Value10,
``stream_id`` AddrMid. Any other value of the constant slots raises UndefinedBehavior. The write goes to
``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)`` with a value scaled by
``SetRegHiScaler[Out_data_format & 3]``; the page says both are set through TDMA-RISC rather than
backend configuration, and no page or configuration field gives their addresses or reset values
(tt-llk's Blackhole kernels never issue PACR_SETREG). Although the NoC overlay stream registers it
targets are modelled (streams.py), the address and value cannot be formed: the documented form raises
Unimplemented.

Configuration (Blackhole names)
-------------------------------
``Packers[0].Config[StateID].X`` is ``THCON_SEC0_REG1_X``; ``Pack_limit_address`` / ``Pack_fifo_size``
are ``THCON_SEC0_REG9_Pack_0_2_limit_address`` / ``_fifo_size``; ``DEST_TARGET_REG_CFG_PACK_SEC[0]`` and
the ``PCK0_ADDR_*``, ``PCK_DEST_RD_CTRL_*``, ``PCK_EDGE_*``, ``TILE_ROW_SET_MAPPING_*``, ``STACC_RELU_*``,
``ALU_FORMAT_SPEC_REG*_Dstacc*`` and ``INT_DESCALE_*`` fields keep the pages' names. Edge masking uses
the low two bits of ``PCK_EDGE_TILE_ROW_SET_SELECT_select`` for packer 0.

Points the pages leave open, and the readings taken
---------------------------------------------------
- ``YZW_Addr``: the page adds ``YZW_Addr & ~0xf`` to a 16-byte-unit address; ttsim's Blackhole model
  adds ``YZW_Addr >> 4``. A non-zero ``YZW_Addr`` when a new output address is taken therefore raises
  Unimplemented (the Y / Z / W counters still advance exactly).
- Dst rows go through Blackhole's Adj16 / Adj32 mapping (DEST_ACCESS_CFG) like every Dst access;
  Dst.md's further "also affect how packers address Dst" is read as applying that mapping to the rows
  the read interfaces (strided or not) name.
  Undefined Dst rows (ZEROACC) are fetched as raw zero. Dst.md's read-after-write rule applies: a PACR
  reading a block the matrix unit wrote less than five cycles ago waits (``Wait(until=...)``).
- ZeroWrite fetches raw zero datums (from ``/dev/null``) in place of Dst; they pass the early
  conversion, ReLU and thresholding like any datum, and skip edge masking (which is part of the Dst
  fetch) and the read-after-write stall.
- Not modelled, raising Unimplemented: compression,
  downsampling (``Downsample_mask`` other than 0 / 0xffff, ``Downsample_rate``), L1 as input source,
  ``Add_l1_dest_addr_offset`` (TDMA-RISC state), ``Dis_shared_exp_assembler``, ``Enable_out_fifo``,
  ``Add_tile_header_size``, ``Auto_set_last_pacr_intf_sel``, ``pack_start_intf_pos``,
  ``pack_dis_y_pos_start_offset``, and output format FP8 (Blackhole's e4m3 form, selected by
  ``Pac_LF8_4b_exp``, has no page; the Wormhole page's FP8 is e5m2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS, PackAddrMod, W, X, Y, Z, pack_addr_mod
from tensixsim.tensix.formats import BF16, BFP8, FORMAT_NAMES, FP32, INT8, INT16, INT32, TF32
from tensixsim.tensix.pack.convert import (
    BFP_A,
    BFP_BITS,
    NEG_INF32,
    NEG_INF_BF16,
    OUT_BYTES,
    config_field,
    conversion,
    early,
    late,
    relu,
    threshold_exp,
    undefined,
    uniform_edge_mask,
    unimplemented,
)
from tensixsim.tensix.pack.stream import (
    ACCUMULATE,
    L1_ADDRESS_MASK,
    accept,
    accumulated,
    pack_state,
    stream_writes,
)
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Wait, semantics
from tensixsim.timing import PACK

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

INTERFACE_MASKS = {0: (0, 1, 2, 3), 1: (0,), 3: (0, 1), 5: (0, 2), 7: (0, 1, 2), 10: (1, 3), 15: (0, 1, 2, 3)}
STRIDED_MASKS = frozenset({0, 1, 3})  # the masks evidenced with dst_access_mode (tt-llk untilize, ttsim)
STRIDED_INTERFACE_DATUMS = 256  # dst_access_mode: read interface k starts 16 Dst rows on

DST_NOT_READABLE = "Dst block written by the matrix unit less than five cycles ago"  # why PACR waits


def input_address(ctx: Context, ch0: list[int]) -> int:
    """The packers' input address generator: the Dst address counters ``ch0`` (X, Y, Z, W) through
    the PCK0 base and strides (only the low four bits of the X stride count), as both chips' pages
    give it."""
    return (
        config_field(ctx, "PCK0_ADDR_BASE_REG_0_Base")
        + ch0[X] * (config_field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Xstride") & 0xF)
        + ch0[Y] * config_field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Ystride")
        + ch0[Z] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Zstride")
        + ch0[W] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Wstride")
    ) & 0xFFFFFFFF


def _cfg(ctx: Context, name: str) -> int:
    """``Packers[0].Config[StateID].name``: THCON_SEC0_REG1_<name>."""
    return config_field(ctx, f"THCON_SEC0_REG1_{name}")


# ------------------------------------------------------------------------------ PACR


_ZERO_CHECKS = (
    "Add_l1_dest_addr_offset", "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size",
    "Auto_set_last_pacr_intf_sel", "pack_start_intf_pos", "pack_dis_y_pos_start_offset",
    "Source_interface_selection", "Downsample_rate", "All_pack_disable_zero_compress_ovrd",
)  # fmt: skip


@semantics("PACR")
def pacr(
    ctx: Context,
    cfg_context: int,
    row_pad_zero: int,
    dst_access_mode: int,
    addr_mode: int,
    addr_cnt_context: int,
    zero_write: int,
    read_intf_sel: int,
    ovrd_thread_id: int,
    concat: int,
    ctxt_ctrl: int,
    flush: int,
    last: int,
) -> Outcome:
    for name, value in (
        ("cfg_context", cfg_context),
        ("row_pad_zero", row_pad_zero),
        ("addr_cnt_context", addr_cnt_context),
        ("ovrd_thread_id", ovrd_thread_id),
        ("ctxt_ctrl", ctxt_ctrl),
    ):
        if value:
            raise unimplemented(ctx, f"{name}={value} (no Blackhole page)", value)
    if concat > 1:
        raise unimplemented(ctx, f"concat={concat} (Blackhole's wider Concat field)", concat)
    if read_intf_sel not in INTERFACE_MASKS:
        raise unimplemented(ctx, f"read_intf_sel={read_intf_sel:#06b} (interface mapping not evidenced)")
    if dst_access_mode and read_intf_sel not in STRIDED_MASKS:
        raise unimplemented(ctx, f"strided Dst access with read_intf_sel={read_intf_sel:#06b}")
    for name in _ZERO_CHECKS:
        value = _cfg(ctx, name)
        if value:
            raise unimplemented(ctx, f"THCON_SEC0_REG1_{name}={value} is not modelled", value)
    if not _cfg(ctx, "Disable_zero_compress"):
        raise unimplemented(ctx, "compression (Disable_zero_compress clear) is not modelled")
    if _cfg(ctx, "Downsample_mask") not in (0, 0xFFFF):
        raise unimplemented(ctx, "downsampling (Downsample_mask) is not modelled")

    copro, thread = ctx.copro, ctx.thread
    adc, regs = copro.adc, copro.regs
    state = pack_state(copro)
    conv = conversion(ctx)
    l1_acc = bool(_cfg(ctx, "Pack_L1_Acc"))
    if l1_acc and conv.out not in ACCUMULATE:
        why = f"L1 accumulation in {FORMAT_NAMES[conv.out]} (L1 accumulates FP32 / INT32 / FP16 / BF16)"
        raise unimplemented(ctx, why, conv.out)
    relu_mode = config_field(ctx, "STACC_RELU_ApplyRelu")
    if relu_mode > 3:
        raise unimplemented(ctx, f"STACC_RELU_ApplyRelu={relu_mode} (bits 2..3)", relu_mode)
    relu_threshold = config_field(ctx, "STACC_RELU_ReluThreshold")
    if relu_mode in (2, 3):
        if conv.inter in (INT32, INT16, INT8):
            raise unimplemented(ctx, f"threshold ReLU {relu_mode} on an integer intermediate")
        if relu_threshold & 0x8000:
            raise undefined(ctx, f"ReLU threshold {relu_threshold:#06x} is negative", relu_threshold)
    exp_threshold = _cfg(ctx, "Exp_threshold") if _cfg(ctx, "Exp_threshold_en") else None
    if exp_threshold is not None and relu_mode == 3:
        raise unimplemented(ctx, "exponent thresholding with ReLU mode 3 (stage order not documented)")
    edge_mode = config_field(ctx, "PCK_EDGE_MODE_mode")
    edge_mask = 0xFFFF if zero_write or flush else uniform_edge_mask(ctx)
    if edge_mask != 0xFFFF and edge_mode and conv.inter not in (FP32, TF32, BF16, BFP8):
        raise unimplemented(ctx, f"edge mode -infinity in {FORMAT_NAMES[conv.inter]}")
    masked = (NEG_INF_BF16 if conv.inter in (BF16, BFP8) else NEG_INF32) if edge_mode else 0

    # ---- input address generator
    ch0 = [int(v) for v in adc.value[thread, PACKERS, 0]]
    ch1 = [int(v) for v in adc.value[thread, PACKERS, 1]]
    addr = input_address(ctx, ch0)
    bytes_per_datum, x_mask = {0: (4, 3), 1: (2, 7)}.get(conv.inter & 3, (1, 0xF))
    if flush:
        count = 0
    else:
        count = ch1[X] - ch0[X] + 1
        if count < 0:
            raise undefined(ctx, f"X end {ch1[X]} before X start {ch0[X]} (count wraps)", ch0[X])
    addr = ((addr // bytes_per_datum) & ~x_mask) + (ch0[X] & x_mask)
    addr += config_field(ctx, "DEST_TARGET_REG_CFG_PACK_SEC0_Offset") << 4
    source = addr & 0x3FFF
    interfaces = INTERFACE_MASKS[read_intf_sel]
    if count:
        if len(interfaces) > 1 and (source & 15 or count != 16):
            raise unimplemented(
                ctx, f"{len(interfaces)} read interfaces with {count} datums from column {source & 15}"
            )
        if len(interfaces) == 1 and (source & 15) + count > 16:
            raise unimplemented(ctx, f"one read interface reading {count} datums from column {source & 15}")
    if conv.out in BFP_BITS and (count * len(interfaces)) % formats.BFP_BLOCK:
        raise unimplemented(
            ctx, f"BFP output of {count * len(interfaces)} datums (a 16-datum block split across PACRs)"
        )
    # interface k starts one Dst row (16 datums) on, or in the strided mode one face (16 rows) on
    spacing = STRIDED_INTERFACE_DATUMS if dst_access_mode else 16
    offsets = spacing * np.array(interfaces, np.int64)[:, None] + np.arange(count, dtype=np.int64)
    addresses = (source + offsets.ravel()) & 0x3FFF

    # ---- fetch (with the read-after-write stall)
    from_dst = not (zero_write or flush)
    raw_datums = np.zeros(len(addresses), np.int64)
    if from_dst and len(addresses):
        remap, swizzle = dst_mapping(copro, thread)
        rows, which = np.unique(addresses >> 4, return_inverse=True)
        storage = regs.storage_rows(rows, wide=conv.read32, remap=remap, swizzle=swizzle)
        until = regs.readable_from(storage)
        if until > ctx.cycle:
            return Wait(DST_NOT_READABLE, until=until)
        if conv.read32:
            values = regs.read32(rows, remap=remap, swizzle=swizzle)
        else:
            values = regs.read16(rows, remap=remap)
        raw_datums = values[which.ravel(), addresses & 15].astype(np.int64)

    # ---- the datums' pipeline
    datums = raw_datums
    if len(addresses):
        datums = early(conv, datums)
        if from_dst and edge_mask != 0xFFFF:
            datums = np.where((edge_mask >> (addresses & 15)) & 1 == 1, datums, masked)
        datums = relu(conv, relu_mode, relu_threshold, datums)
        if exp_threshold is not None:
            datums = threshold_exp(conv.inter, exp_threshold, datums)
        datums = late(ctx, conv, datums)
    exponents = b""
    if conv.out in BFP_BITS:
        to_blocks = formats.bfp_a_from_fp16 if conv.out in BFP_A else formats.bfp_from_bf16
        shared, bfp = to_blocks(datums, BFP_BITS[conv.out])
        out, exponents = formats.bfp_datum_bytes(bfp, BFP_BITS[conv.out]), shared.astype(np.uint8).tobytes()
    else:
        width = OUT_BYTES[conv.out]
        out = datums.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :width].tobytes()

    # ---- output address generator
    data_address, exponent_address = state.data_address, state.exponent_address
    if state.needs_new_address:
        out_addr = (
            _cfg(ctx, "L1_Dest_addr") + (0 if _cfg(ctx, "Sub_l1_tile_header_size") else 1)
        ) & 0xFFFFFFFF
        yzw = (
            config_field(ctx, "PCK0_ADDR_BASE_REG_1_Base")
            + ch1[Y] * config_field(ctx, "PCK0_ADDR_CTRL_XY_REG_1_Ystride")
            + ch1[Z] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride")
            + ch1[W] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride")
        )
        if yzw:
            raise unimplemented(ctx, f"YZW_Addr {yzw:#x} (Blackhole's unit for it is not documented)", yzw)
        if out_addr > config_field(ctx, "THCON_SEC0_REG9_Pack_0_2_limit_address") * 2 + 1:
            out_addr -= config_field(ctx, "THCON_SEC0_REG9_Pack_0_2_fifo_size") * 2
        out_addr &= 0xFFFFFFFF
        if conv.out & 2:  # OutputFormatLessThan16Bits: the exponent stream takes its address first
            exponent_address = (out_addr & L1_ADDRESS_MASK) << 4
            out_addr += _cfg(ctx, "Exp_section_size")
        data_address = (out_addr & L1_ADDRESS_MASK) << 4

    # ---- the 16-byte writes of both streams (checked before anything is written)
    flushing = bool(last or flush)
    data = stream_writes(ctx, data_address, state.pending + out, flushing)
    exps = stream_writes(ctx, exponent_address, state.exponent_pending + exponents, flushing)

    # ---- commit
    for address, buffered, whole in (data, exps):
        if whole:  # the 16-byte chunks are consecutive: one write
            chunk = buffered[:whole]
            if l1_acc:
                chunk = accumulated(copro.tile.l1[address : address + whole], chunk, conv.out)
            copro.l1_write(address, chunk, ctx.cycle)
    state.data_address = data_address + data[2]
    state.exponent_address = exponent_address + exps[2]
    state.pending = data[1][data[2] :]
    state.exponent_pending = exps[1][exps[2] :]
    state.needs_new_address = flushing
    advance_adc(copro, thread, pack_addr_mod(copro, thread, addr_mode))
    if l1_acc:  # one 128-bit read-modify-write per chunk written
        return accept(ctx, state, data[2] // 16 * PACK.l1_accumulate_cycles)
    return accept(ctx, state, -(-(len(out) + len(exponents)) // PACK.l1_bytes_per_cycle))


def advance_adc(copro: Coprocessor, which: int, mod: PackAddrMod) -> None:
    """The AddrMod step of both address generators on ADC ``which``'s packer channels: Y and Z of
    Channel[0] (input) and Channel[1] (output)."""
    adc = copro.adc
    for channel, y_clear, y_cr, y_incr, z_clear, z_incr in (
        (0, mod.ysrc_clear, mod.ysrc_cr, mod.ysrc_incr, mod.zsrc_clear, mod.zsrc_incr),
        (1, mod.ydst_clear, mod.ydst_cr, mod.ydst_incr, mod.zdst_clear, mod.zdst_incr),
    ):
        if y_clear:
            adc.set(which, PACKERS, channel, Y, 0)
        elif y_cr:
            adc.increment_cr(which, PACKERS, channel, Y, y_incr)
        else:
            adc.increment(which, PACKERS, channel, Y, y_incr)
        if z_clear:
            adc.set(which, PACKERS, channel, Z, 0)
        else:
            adc.increment(which, PACKERS, channel, Z, z_incr)


# ------------------------------------------------------------------------------ PACR_SETREG


@semantics("PACR_SETREG")
def pacr_setreg(
    ctx: Context,
    push: int,
    mode_sel: int,
    unused: int,
    disable_stall: int,
    addr_sel: int,
    stream_id: int,
    flush: int,
    last: int,
) -> Outcome:
    for name, value, expected in (
        ("push", push, 1),
        ("disable_stall", disable_stall, 3),
        ("addr_sel", addr_sel, 3),
        ("flush", flush, 1),
        ("last", last, 0),
    ):
        if value != expected:
            raise undefined(ctx, f"{name}={value}: the documented form has {expected}", value)
    raise unimplemented(
        ctx,
        f"PACR_SETREG AddrSel {mode_sel} AddrMid {stream_id:#x} Value10 {unused:#x}: SetRegBase / "
        "SetRegHiScaler (TDMA-RISC) and the NoC overlay registers it writes are not modelled",
    )
