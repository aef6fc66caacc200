"""The packers on Wormhole B0: PACR and PACR_SETREG with Wormhole's encodings and four packers.

Functional model: tt-isa-documentation WormholeB0 PACR.md, PACR_SETREG.md, Packers/README.md (and its
pipeline diagram, PackerPipeline.svg), Packers/InputAddressGenerator.md, OutputAddressGenerator.md,
FormatConversion.md, EdgeMasking.md, ReLU.md, ExponentThresholding.md, Downsampling.md,
ExponentHistogram.md and Compression.md; Dst.md for Dst addressing and the read-after-write stall;
L1.md for the accumulate and the packers' bandwidth. The Blackhole packer (unit.py) was written from
these pages, so its stages are used as they are: the early and late conversions
(:func:`convert.conversion`, :func:`convert.early`, :func:`convert.late`), ReLU, exponent thresholding,
the uniform edge mask, BFP blocks, the 16-byte output buffers and the L1 accumulate (stream.py), with
the readings those modules document for what the pages leave open (rounding, flushed zeros, the
documented-as-mishandled ranges, BFP rounding, the accumulate's rounding). What Wormhole changes is
below.

Encoding (PACR.md's diagram): Last bit 0, Flush 1, Concat 4, OvrdThreadId 7, PackerMask 8..11,
ZeroWrite 12, AddrMod 15..16, and bit 23 zero. The table's slots are wider (the yaml's ``addr_mode``
15..23, ``zero_write`` 12..14, ``concat`` 4..6, ``flush`` 1..3): a set bit in no documented operand
is UndefinedBehavior. Concat only matters with compression.

Four packers (PACR.md's table): PackerMask 0 means packer 0; 1, 2, 4, 8, 3, 12 and 15 name the
packers listed; any other mask "will issue work to at least one of the packers in the mask, but other
bits of the mask might be ignored": UndefinedBehavior. Each packer named:

- has its own configuration, ``Packers[i].Config``: ``THCON_SEC0_REG1_*``, ``THCON_SEC0_REG8_*``,
  ``THCON_SEC1_REG1_*``, ``THCON_SEC1_REG8_*`` for packers 0..3 (SETDMAREG_Special.md's mapping),
  with ``Pack_limit_address`` / ``Pack_fifo_size`` in ``THCON_SEC0_REG9_Pack_0_2_*`` /
  ``_Pack_1_3_*`` for packers 0 / 1 and ``THCON_SEC1_REG9_Pack_0_2_*`` / ``_Pack_1_3_*`` for 2 / 3
  (the page: "in THCON_SEC[01]_REG9, with non-standard naming"; read as the section's first packer
  using 0_2); its own ``DEST_TARGET_REG_CFG_PACK_SEC[i].Offset``, edge-mask row-set select (bits
  2i..2i+1 of ``PCK_EDGE_TILE_ROW_SET_SELECT_select``), late conversion (``In_data_format`` /
  ``Out_data_format``), exponent threshold, downsampling mask and L1 accumulation;
- shares ``Config``'s early conversion, ReLU and ``PCK0_ADDR_*`` address fields with the others;
- uses ADC ``CurrentThread``, or with OvrdThreadId its ``Addr_cnt_context`` (3 meaning 0); every ADC
  a packer used gets the AddrMod step once (InputAddressGenerator.md / OutputAddressGenerator.md);
- reads ``InputNumDatums`` contiguous Dst datums from its start (rows wrap at 1024), through the
  pipeline diagram's stages in order: early conversion, edge masking, ReLU, exponent thresholding,
  then downsampling (Downsampling.md's rotating mask: a datum is kept if bit ``i % 16`` is set), BFP
  blocking and the late conversion, the output buffers and the accumulate. ZeroWrite's datums come
  from ``/dev/null`` and join after exponent thresholding (the diagram's multiplexer): they skip the
  early conversion, edge masking, ReLU and thresholding. Since the diagram puts ReLU before
  thresholding, the two combine in any mode (Blackhole: Unimplemented with ReLU mode 3);
- writes its own two output streams (data and BFP exponents), kept in :class:`stream.PackersState`;
  ``L1_Dest_addr`` plus one unless ``Sub_l1_tile_header_size``, plus packer 0's such address when
  that has bit 31 set (packers 1..3), plus ``YZW_Addr & ~0xf`` (in 16-byte units, as the page has
  it), then the FIFO wrap, then ``Exp_section_size`` for the exponent stream of formats with bit 1
  set (OutputAddressGenerator.md).

Everything is computed before anything changes: the packers' datums, their 16-byte writes (a write
beyond Wormhole's 1464 KiB of L1 raises MemoryFault) and the read-after-write wait. The packers then
commit in packer order (their writes may overlap L1, which accumulation makes visible).

Readings and limits:

- ``STACC_RELU_ApplyRelu`` is used ``& 3`` (ReLU.md); modes 2 / 3 on an integer intermediate break
  the page's "should be set to zero ... or one" and are UndefinedBehavior, as a negative threshold is.
- IntermediateFormat must equal each packer's ``In_data_format`` (convert.py's rule); LateToFormat FP8
  (e5m2) is the FP16 rule, then the two high mantissa bits. The E5M7 / E5M6 (BFP8a) and FP8
  intermediates are not modelled (Unimplemented), nor BFP output whose kept datums are not a whole
  number of 16-datum blocks per packer (a block split across instructions is undocumented).
- Unimplemented, naming what: compression (``Disable_zero_compress`` clear, or its
  ``All_pack_disable_zero_compress`` override), packer 0 reading L1 (``Source_interface_selection``),
  ``Add_l1_dest_addr_offset`` (its offset is TDMA-RISC state), stochastic rounding, INT8 shift and
  round, position-dependent edge masks (``PCK_EDGE_TILE_FACE_SET_SELECT_enable``, or masks that differ
  by row: the tile position generator's start is not documented), -infinity edge masking of FP16 or
  integer intermediates, and the fields no page describes when set: ``Dis_shared_exp_assembler``,
  ``Enable_out_fifo``, ``Add_tile_header_size``, ``Force_pack_per_max_xy_plane``, ``Read_mode``,
  ``Downsample_rate``.
- The exponent histogram (ExponentHistogram.md) is not kept: its only readers, SETDMAREG's special
  modes 6, 7 and 9, raise Unimplemented, and CLREXPHIST belongs to the matrix unit.

PACR_SETREG (PACR_SETREG.md): the documented form is ``TT_PACR_SETREG(1, AddrSel, Value10, 0xf,
AddrMid, 1, 0)``; another value in its constant slots is UndefinedBehavior. Its write goes to
``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)`` scaled by ``SetRegHiScaler``, TDMA-RISC state the
emulator does not keep: the documented form raises Unimplemented.

Timing (timing.PACK_WORMHOLE, L1.md): the packers in parallel, each writing 128 bits a cycle (or
accumulating one 128-bit chunk every five cycles); the instruction is accepted once the slowest has
written the previous one's bytes, and the packers drain as Blackhole's (stream.accept).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS, W, X, Y, Z, pack_addr_mod
from tensixsim.tensix.formats import BF16, BFP8, FORMAT_NAMES, FP32, INT8, INT16, INT32, TF32
from tensixsim.tensix.pack import convert, stream, unit
from tensixsim.tensix.pack.convert import config_field, undefined, unimplemented
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Wait, semantics
from tensixsim.timing import PACK_WORMHOLE as PACK  # Wormhole's packers

WORMHOLE_ONLY = ("wormhole",)

# Packers[i].Config[StateID] (SETDMAREG_Special.md) and where each packer's FIFO limits live.
PACKER_CONFIG = ("THCON_SEC0_REG1_", "THCON_SEC0_REG8_", "THCON_SEC1_REG1_", "THCON_SEC1_REG8_")
PACK_LIMITS = (
    "THCON_SEC0_REG9_Pack_0_2_", "THCON_SEC0_REG9_Pack_1_3_",
    "THCON_SEC1_REG9_Pack_0_2_", "THCON_SEC1_REG9_Pack_1_3_",
)  # fmt: skip
# PACR.md's PackerMask table.
PACKER_MASKS = {0: (0,), 1: (0,), 2: (1,), 4: (2,), 8: (3,), 3: (0, 1), 12: (2, 3), 15: (0, 1, 2, 3)}
# Packer configuration fields no page describes: set, they raise Unimplemented.
UNDESCRIBED = (
    "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size", "Force_pack_per_max_xy_plane",
    "Read_mode", "Downsample_rate",
)  # fmt: skip
INTEGERS = frozenset({INT32, INT16, INT8})
NEG_INF_CAPABLE = frozenset({FP32, TF32, BF16, BFP8})  # intermediates with a -infinity pattern


@dataclass(frozen=True)
class _Work:
    """One packer's share of a PACR, computed before anything changes."""

    packer: int
    adc: int  # the ADC it used
    out_fmt: int
    l1_acc: bool
    data: tuple[int, bytes, int]  # (address, buffered bytes, whole bytes written now): stream.stream_writes
    exps: tuple[int, bytes, int]
    cycles: int


def _first_address(ctx: Context, packer: int) -> int:
    """``L1_Dest_addr + !Sub_l1_tile_header_size`` of packer ``packer`` (uint32)."""
    prefix = PACKER_CONFIG[packer]
    header = 0 if config_field(ctx, prefix + "Sub_l1_tile_header_size") else 1
    return (config_field(ctx, prefix + "L1_Dest_addr") + header) & 0xFFFFFFFF


# ------------------------------------------------------------------------------ PACR


@semantics("PACR", arches=WORMHOLE_ONLY)
def pacr(
    ctx: Context,
    addr_mode: int,
    zero_write: int,
    pack_sel: int,
    ovrd_thread_id: int,
    concat: int,
    flush: int,
    last: int,
) -> Outcome:
    mod_index = ctx.documented("addr_mode", addr_mode, 2)
    zero_write = ctx.documented("zero_write", zero_write, 1)
    ctx.documented("concat", concat, 1)  # no effect without compression (PACR.md)
    flush = ctx.documented("flush", flush, 1)
    packers = PACKER_MASKS.get(pack_sel)
    if packers is None:
        raise undefined(ctx, f"PackerMask {pack_sel:#06b} is undefined (PACR.md's table)", pack_sel)
    packer0_address = _first_address(ctx, 0)
    work = []
    for i in packers:
        share = _packer_work(ctx, i, packer0_address, zero_write, flush, last, ovrd_thread_id)
        if isinstance(share, Wait):
            return share
        work.append(share)

    # ---- commit, packer by packer
    copro = ctx.copro
    states = copro.packer
    for share in work:
        for address, buffered, whole in (share.data, share.exps):
            if whole:  # consecutive 16-byte chunks: one write
                chunk = buffered[:whole]
                if share.l1_acc:
                    chunk = stream.accumulated(copro.tile.l1[address : address + whole], chunk, share.out_fmt)
                copro.l1_write(address, chunk, ctx.cycle)
        state = states.packer(share.packer)
        state.data_address = share.data[0] + share.data[2]
        state.exponent_address = share.exps[0] + share.exps[2]
        state.pending = share.data[1][share.data[2] :]
        state.exponent_pending = share.exps[1][share.exps[2] :]
        state.needs_new_address = bool(last or flush)
    mod = pack_addr_mod(copro, ctx.thread, mod_index)
    for which in sorted({share.adc for share in work}):
        unit.advance_adc(copro, which, mod)
    return stream.accept(ctx, states, max(share.cycles for share in work), PACK)


def _packer_work(
    ctx: Context, i: int, packer0_address: int, zero_write: int, flush: int, last: int, ovrd: int
) -> _Work | Wait:
    """Packer ``i``'s datums and L1 writes for this PACR (or the wait for Dst), changing nothing."""
    copro, prefix = ctx.copro, PACKER_CONFIG[i]

    def cfg(name: str) -> int:
        return config_field(ctx, prefix + name)

    # ---- configuration the model does not cover, then the conversions and stages
    if config_field(ctx, "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd"):
        uncompressed = config_field(ctx, "THCON_SEC0_REG1_All_pack_disable_zero_compress") >> i & 1
    else:
        uncompressed = cfg("Disable_zero_compress")
    if not uncompressed:
        raise unimplemented(ctx, f"packer {i}: compression is not modelled")
    if i == 0 and cfg("Source_interface_selection"):
        raise unimplemented(ctx, "packer 0 reading L1 (Source_interface_selection) is not modelled")
    if cfg("Add_l1_dest_addr_offset"):
        raise unimplemented(ctx, f"packer {i}: Add_l1_dest_addr_offset (a TDMA-RISC offset) is not modelled")
    for name in UNDESCRIBED:
        if value := cfg(name):
            raise unimplemented(ctx, f"packer {i}: {prefix}{name}={value} has no page", value)
    conv = convert.conversion(ctx, prefix, fp8_out=True)
    l1_acc = bool(cfg("Pack_L1_Acc"))
    if l1_acc and conv.out not in stream.ACCUMULATE:
        why = f"L1 accumulation in {FORMAT_NAMES[conv.out]} (L1 accumulates FP32 / INT32 / FP16 / BF16)"
        raise unimplemented(ctx, why, conv.out)
    relu_mode = config_field(ctx, "STACC_RELU_ApplyRelu") & 3
    relu_threshold = config_field(ctx, "STACC_RELU_ReluThreshold")
    if relu_mode in (2, 3):
        if conv.inter in INTEGERS:
            raise undefined(ctx, f"ReLU mode {relu_mode} on an integer intermediate (ReLU.md: 0 or 1)")
        if relu_threshold & 0x8000:
            raise undefined(ctx, f"ReLU threshold {relu_threshold:#06x} is negative", relu_threshold)
    exp_threshold = cfg("Exp_threshold") if cfg("Exp_threshold_en") else None
    from_dst = not (zero_write or flush)
    edge = convert.uniform_edge_mask(ctx, i) if from_dst else 0xFFFF
    edge_mode = config_field(ctx, "PCK_EDGE_MODE_mode")
    if edge != 0xFFFF and edge_mode and conv.inter not in NEG_INF_CAPABLE:
        raise unimplemented(ctx, f"edge mode -infinity in {FORMAT_NAMES[conv.inter]}")
    masked = (convert.NEG_INF_BF16 if conv.inter in (BF16, BFP8) else convert.NEG_INF32) if edge_mode else 0

    # ---- input address generator
    which = ctx.thread
    if ovrd:
        which = cfg("Addr_cnt_context")
        which = 0 if which == 3 else which
    adc = copro.adc
    ch0 = [int(v) for v in adc.value[which, PACKERS, 0]]
    ch1 = [int(v) for v in adc.value[which, PACKERS, 1]]
    addr = unit.input_address(ctx, ch0)
    bytes_per_datum, x_mask = {0: (4, 3), 1: (2, 7)}.get(cfg("In_data_format") & 3, (1, 0xF))
    count = 0 if flush else ch1[X] - ch0[X] + 1
    if count < 0:
        raise undefined(ctx, f"X end {ch1[X]} before X start {ch0[X]} (count wraps)", ch0[X])
    addr = ((addr // bytes_per_datum) & ~x_mask) + (ch0[X] & x_mask)
    addr += config_field(ctx, f"DEST_TARGET_REG_CFG_PACK_SEC{i}_Offset") << 4
    index = np.arange(count, dtype=np.int64)
    addresses = (addr + index) & 0x3FFF  # Dst datum indices: row (10 bits) and column
    mask = cfg("Downsample_mask") or 0xFFFF
    keep = (mask >> (index % 16)) & 1 == 1
    kept = int(keep.sum())
    if conv.out in convert.BFP_BITS and kept % formats.BFP_BLOCK:
        why = f"packer {i}: BFP output of {kept} datums (a 16-datum block split across PACRs)"
        raise unimplemented(ctx, why)

    # ---- fetch from Dst (every datum the address generator names, kept or not)
    datums = np.zeros(kept, np.int64)
    if from_dst and count:
        regs = copro.regs
        remap, swizzle = dst_mapping(copro, ctx.thread)
        rows, which_row = np.unique(addresses >> 4, return_inverse=True)
        until = regs.readable_from(regs.storage_rows(rows, wide=conv.read32, remap=remap, swizzle=swizzle))
        if until > ctx.cycle:
            return Wait(unit.DST_NOT_READABLE, until=until)
        if conv.read32:
            values = regs.read32(rows, remap=remap, swizzle=swizzle)
        else:
            values = regs.read16(rows, remap=remap)
        raw = values[which_row.ravel(), addresses & 15].astype(np.int64)[keep]
        datums = convert.early(conv, raw)
        if edge != 0xFFFF:
            datums = np.where((edge >> (addresses[keep] & 15)) & 1 == 1, datums, masked)
        datums = convert.relu(conv, relu_mode, relu_threshold, datums)
        if exp_threshold is not None:
            datums = convert.threshold_exp(conv.inter, exp_threshold, datums)
    if kept:
        datums = convert.late(ctx, conv, datums)
    exponents = b""
    if conv.out in convert.BFP_BITS:
        to_blocks = formats.bfp_a_from_fp16 if conv.out in convert.BFP_A else formats.bfp_from_bf16
        shared, bfp = to_blocks(datums, convert.BFP_BITS[conv.out])
        out = formats.bfp_datum_bytes(bfp, convert.BFP_BITS[conv.out])
        exponents = shared.astype(np.uint8).tobytes()
    else:
        width = convert.OUT_BYTES[conv.out]
        out = datums.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :width].tobytes()

    # ---- output address generator
    state = copro.packer.packer(i)
    data_address, exponent_address = state.data_address, state.exponent_address
    if state.needs_new_address:
        out_addr = _first_address(ctx, i)
        if i and packer0_address >> 31:
            out_addr += packer0_address
        yzw = (
            config_field(ctx, "PCK0_ADDR_BASE_REG_1_Base")
            + ch1[Y] * config_field(ctx, "PCK0_ADDR_CTRL_XY_REG_1_Ystride")
            + ch1[Z] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride")
            + ch1[W] * config_field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride")
        ) & 0xFFFFFFFF
        out_addr = (out_addr + (yzw & ~0xF)) & 0xFFFFFFFF
        if out_addr > config_field(ctx, PACK_LIMITS[i] + "limit_address") * 2 + 1:
            out_addr = (out_addr - config_field(ctx, PACK_LIMITS[i] + "fifo_size") * 2) & 0xFFFFFFFF
        if conv.out & 2:  # OutputFormatLessThan16Bits: the exponent stream takes its address first
            exponent_address = (out_addr & stream.L1_ADDRESS_MASK) << 4
            out_addr += cfg("Exp_section_size")
        data_address = (out_addr & stream.L1_ADDRESS_MASK) << 4

    # ---- the 16-byte writes of both streams (checked here, before anything is written)
    flushing = bool(last or flush)
    data = stream.stream_writes(ctx, data_address, state.pending + out, flushing)
    exps = stream.stream_writes(ctx, exponent_address, state.exponent_pending + exponents, flushing)
    if l1_acc:  # one 128-bit read-modify-write per chunk written
        cycles = data[2] // 16 * PACK.l1_accumulate_cycles
    else:
        cycles = -(-(len(out) + len(exponents)) // PACK.l1_bytes_per_cycle)
    return _Work(i, which, conv.out, l1_acc, data, exps, cycles)


# ------------------------------------------------------------------------------ PACR_SETREG


@semantics("PACR_SETREG", arches=WORMHOLE_ONLY)
def pacr_setreg(
    ctx: Context, push: int, addr_sel: int, wr_data: int, pack_sel: int, stream_id: int, flush: int, last: int
) -> Outcome:
    for name, value, expected in (("push", push, 1), ("pack_sel", pack_sel, 0xF), ("flush", flush, 1),
                                  ("last", last, 0)):  # fmt: skip
        if value != expected:
            raise undefined(ctx, f"{name}={value}: the documented form has {expected}", value)
    raise unimplemented(
        ctx,
        f"PACR_SETREG AddrSel {addr_sel} AddrMid {stream_id:#x} Value10 {wr_data:#x}: SetRegBase / "
        "SetRegHiScaler (TDMA-RISC) are not modelled",
    )
