"""The packer: PACR (Dst -> L1) and PACR_SETREG.

Functional model: tt-isa-documentation WormholeB0 PACR.md, PACR_SETREG.md, Packers/README.md,
Packers/InputAddressGenerator.md, Packers/OutputAddressGenerator.md, Packers/FormatConversion.md,
Packers/EdgeMasking.md, Packers/ReLU.md, Packers/ExponentThresholding.md, Packers/Downsampling.md;
Dst.md (both the Wormhole page and the jasondavies fork's BlackholeA0 page) for Dst addressing and the
read-after-write stall. No BlackholeA0 page covers the packers. Blackhole has one packer (configured by
``THCON_SEC0_REG1_*``, the Wormhole pages' ``Packers[0].Config``) with four Dst read interfaces where
Wormhole has four packers; the Wormhole models are applied to packer 0, and what Blackhole changes
without a page saying how raises Unimplemented.

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
- ``cfg_context``, ``row_pad_zero``, ``dst_access_mode`` (tt-llk's strided mode), ``addr_cnt_context``,
  ``ovrd_thread_id`` (the Blackhole configuration has no ``Addr_cnt_context`` field) and ``ctxt_ctrl``
  have no Blackhole page: a non-zero value raises Unimplemented.

PACR_SETREG: the Blackhole slots (``push`` [23], ``mode_sel`` [22], ``unused`` [21:12], ``disable_stall``
[11:10], ``addr_sel`` [9:8], ``stream_id`` [7:2], ``flush`` [1], ``last`` [0]) are bit for bit the page's
``TT_PACR_SETREG(1, AddrSel, Value10, 0xf, AddrMid, 1, 0)``: ``mode_sel`` is AddrSel, ``unused`` Value10,
``stream_id`` AddrMid. Any other value of the constant slots raises UndefinedBehavior. The write's
address and value depend on ``SetRegBase`` / ``SetRegHiScaler``, TDMA-RISC state that is not
modelled, and its target is the NoC overlay stream registers, which the coprocessor does not reach:
the documented form raises Unimplemented.

Configuration (Blackhole names)
-------------------------------
``Packers[0].Config[StateID].X`` is ``THCON_SEC0_REG1_X``; ``Pack_limit_address`` / ``Pack_fifo_size``
are ``THCON_SEC0_REG9_Pack_0_2_limit_address`` / ``_fifo_size``; ``DEST_TARGET_REG_CFG_PACK_SEC[0]`` and
the ``PCK0_ADDR_*``, ``PCK_DEST_RD_CTRL_*``, ``PCK_EDGE_*``, ``TILE_ROW_SET_MAPPING_*``, ``STACC_RELU_*``,
``ALU_FORMAT_SPEC_REG*_Dstacc*`` and ``INT_DESCALE_*`` fields keep the pages' names. Edge masking uses
the low two bits of ``PCK_EDGE_TILE_ROW_SET_SELECT_select`` for packer 0.

Points the pages leave open, and the readings taken
---------------------------------------------------
- Output: datums are buffered and written to L1 as aligned 16-byte chunks at ``DataStream.ByteAddress``
  (which then advances by 16); a partial buffer stays pending across PACRs and is zero-padded and
  written on ``Last`` / ``Flush``, as OutputAddressGenerator.md says. Packer state (stream addresses,
  ``NeedsNewAddress`` flags, the pending bytes) lives in :class:`PackState`.
- A 16-byte write beyond Blackhole's 1536 KiB of L1 raises MemoryFault naming the address; every
  datum and chunk is computed first, so nothing (L1, ADCs, packer state) changes when an instruction
  raises or waits.
- ``YZW_Addr``: the page adds ``YZW_Addr & ~0xf`` to a 16-byte-unit address; ttsim's Blackhole model
  adds ``YZW_Addr >> 4``. A non-zero ``YZW_Addr`` when a new output address is taken therefore raises
  Unimplemented (the Y / Z / W counters still advance exactly).
- Dst rows go through Blackhole's Adj16 / Adj32 mapping (DEST_ACCESS_CFG) like every Dst access;
  Dst.md's further "also affect how packers address Dst" is read as the strided mode (Unimplemented).
  Undefined Dst rows (ZEROACC) are fetched as raw zero. Dst.md's read-after-write rule applies: a PACR
  reading a block the matrix unit wrote less than five cycles ago waits (``Wait(until=...)``).
- ZeroWrite fetches raw zero datums (from ``/dev/null``) in place of Dst; they pass the early
  conversion, ReLU and thresholding like any datum, and skip edge masking (which is part of the Dst
  fetch) and the read-after-write stall.
- Early conversion (FormatConversion.md): ``IntermediateFormat`` must equal ``In_data_format`` (the late
  conversion's input), else Unimplemented. The table's "No" entries raise UndefinedBehavior. Supported:
  from Dst32b FP32 / TF32 (Read_raw, or rounding with Round_10b_mant) / BF16 (rounding or truncation) /
  INT32 (bitcast) / INT8 (sign and low 7 bits, low 8 bits, or saturation with a zero ShiftAmount); from
  Dst16b BF16 (rounding or identity) / TF32 (rounding) / FP16 (rounding or identity) / INT16.
  Rounding is formats.packer_round_* (ties away from zero, denormals and minus zero to +0, NaN to
  infinity). Not modelled (Unimplemented): the E8M6 / E5M7 / E5M6 / FP8 / BFP intermediates, the
  TF32-in-BF16 form for a late TF32 -> FP16, TF32 with Read_raw to anything but FP32, INT8 from
  Dst16b, a non-zero ShiftAmount (the rounding rule of the shifted-out bits is not given),
  ``INT_DESCALE_Mode`` 1 ("for some value z"), stochastic rounding (``ALU_ROUNDING_MODE_Packer_srnd_en``).
- Late conversion: truncation when the mantissa narrows; FP32 / TF32 / BF16 -> FP16 is
  formats.fp32_to_fp16 (truncate, saturate to exponent 31 / mantissa 1023, NaN to that "infinity");
  the page calls some inputs with 2**-15 < |x| < 2**-14 mishandled, so such a datum raises
  Unimplemented, and smaller ones flush to zero keeping their sign (formats' reading). FP16 ->
  FP32 / TF32 ("denormals mishandled"): a denormal raises Unimplemented; FP16 -> BF16 flushes denormals
  to zero keeping the sign. An FP16 datum with exponent 31 widening to an 8-bit exponent raises
  Unimplemented (the page does not say whether the packer reads it as infinity).
- Edge masking needs the tile position generator, whose starting state is not documented: it is
  modelled only when every mask the configured row sets can select is the same (the page's own
  advice), and ``PCK_EDGE_TILE_FACE_SET_SELECT_enable`` raises Unimplemented. A masked datum reads as
  zero, or with ``PCK_EDGE_MODE_mode`` as negative infinity (FP32 / TF32 / BF16 only; FP16 has no
  infinity pattern and integers none at all: Unimplemented).
- ReLU is the page's model on the intermediate datum (order compared as numbers; NaN compares
  false); integer intermediates accept ``ApplyRelu`` 0 and 1 only (1: negative magnitudes become
  zero), other values raise Unimplemented, as do ``ApplyRelu`` bits 2..3.
- Exponent thresholding is the page's model (zero is +0). With ReLU mode 3 as well, the order of the
  two stages matters and is not documented: Unimplemented.
- Not modelled, raising Unimplemented: compression, L1 accumulation (``Pack_L1_Acc``: no page),
  downsampling (``Downsample_mask`` other than 0 / 0xffff, ``Downsample_rate``), L1 as input source,
  ``Add_l1_dest_addr_offset`` (TDMA-RISC state), ``Dis_shared_exp_assembler``, ``Enable_out_fifo``,
  ``Add_tile_header_size``, ``Auto_set_last_pacr_intf_sel``, ``pack_start_intf_pos``,
  ``pack_dis_y_pos_start_offset``, and output formats FP8 and BFP*.

Timing (timing.PACK): no page gives packer throughput; the figures are placeholders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS, W, X, Y, Z, pack_addr_mod
from tensixsim.tensix.formats import (
    BF16,
    FORMAT_NAMES,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.timing import PACK

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

OUT_BYTES = {FP32: 4, TF32: 4, INT32: 4, BF16: 2, FP16: 2, INT16: 2, INT8: 1}
INTERFACE_MASKS = {0: (0, 1, 2, 3), 1: (0,), 3: (0, 1), 5: (0, 2), 7: (0, 1, 2), 10: (1, 3), 15: (0, 1, 2, 3)}
FLOAT32_LIKE = frozenset({FP32, TF32})
NEG_INF32, NEG_INF_BF16 = 0xFF800000, 0xFF80
L1_ADDRESS_MASK = 0x1FFFF


@dataclass
class PackState:
    """The packer's state between instructions (OutputAddressGenerator.md's streams and buffers)."""

    data_address: int = 0  # DataStream.ByteAddress
    exponent_address: int = 0  # ExponentStream.ByteAddress
    needs_new_address: bool = True  # the three streams' NeedsNewAddress (always set together here)
    pending: bytes = b""  # datums buffered before L1, fewer than 16 bytes


def pack_state(copro: Coprocessor) -> PackState:
    """The coprocessor's packer state."""
    return copro.packer


# ------------------------------------------------------------------------------ helpers


def _field(ctx: Context, name: str) -> int:
    config = ctx.copro.config
    return config.read_field(name, config.state_id(ctx.thread))


def _cfg(ctx: Context, name: str) -> int:
    """``Packers[0].Config[StateID].name``: THCON_SEC0_REG1_<name>."""
    return _field(ctx, f"THCON_SEC0_REG1_{name}")


def _one(fn, value: int) -> int:
    return int(np.asarray(fn(np.asarray([value])))[0])


def _is_nan(bits: int, fmt: int) -> bool:
    if fmt in FLOAT32_LIKE:
        return (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF != 0
    if fmt == BF16:
        return (bits & 0x7F80) == 0x7F80 and bits & 0x7F != 0
    return False  # FP16 has no NaN on the coprocessor


def _key(bits: int, fmt: int) -> int:
    """A non-NaN float's order as a signed integer (sign-magnitude; -0 == +0)."""
    top = 31 if fmt in FLOAT32_LIKE else 15
    mag = bits & ((1 << top) - 1)
    return -mag if bits >> top & 1 else mag


def _undefined(ctx: Context, message: str, value: int | None = None) -> UndefinedBehavior:
    return ctx.error(UndefinedBehavior, message, value)  # type: ignore[return-value]


def _unimplemented(ctx: Context, message: str, value: int | None = None) -> Unimplemented:
    return ctx.error(Unimplemented, message, value)  # type: ignore[return-value]


# ------------------------------------------------------------------------------ conversions


@dataclass(frozen=True)
class Conversion:
    """The configured early and late conversions (checked once per instruction)."""

    read32: bool
    inter: int  # IntermediateFormat == LateFromFormat
    out: int  # LateToFormat
    raw: bool  # Read_raw (PCK_DEST_RD_CTRL_Read_int8)
    unsigned: bool
    round10: bool


def _conversion(ctx: Context) -> Conversion:
    read32 = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_32b_data"))
    raw = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_int8"))
    unsigned = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_unsigned"))
    round10 = bool(_field(ctx, "PCK_DEST_RD_CTRL_Round_10b_mant"))
    if _field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_override"):
        inter = _field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_val")
    else:
        inter = _field(ctx, "ALU_FORMAT_SPEC_REG2_Dstacc")
    late_from, out = _cfg(ctx, "In_data_format"), _cfg(ctx, "Out_data_format")
    for what, code in (
        ("IntermediateFormat", inter),
        ("In_data_format", late_from),
        ("Out_data_format", out),
    ):
        if code not in FORMAT_NAMES:
            raise _undefined(ctx, f"{what} {code} names no format", code)
    if out not in OUT_BYTES:
        raise _unimplemented(ctx, f"output format {FORMAT_NAMES[out]} is not modelled", out)
    if inter != late_from:
        raise _unimplemented(
            ctx,
            f"IntermediateFormat {FORMAT_NAMES[inter]} differs from In_data_format {FORMAT_NAMES[late_from]}",
            inter,
        )
    if _field(ctx, "ALU_ROUNDING_MODE_Packer_srnd_en"):
        raise _unimplemented(ctx, "stochastic rounding (ALU_ROUNDING_MODE_Packer_srnd_en)")
    name = FORMAT_NAMES[inter]
    no = f"early conversion from Dst{'32' if read32 else '16'}b to {name} does not exist"
    if read32:
        if inter in (FP16, INT16):
            raise _undefined(ctx, no, inter)
        if inter == BF16 and round10:
            raise _unimplemented(ctx, "BF16 intermediate with Round_10b_mant (TF32 for a late TF32 -> FP16)")
        if inter == TF32 and raw and out != FP32:
            raise _unimplemented(ctx, "TF32 intermediate with Read_raw converted to anything but FP32")
        if inter == INT8 and not raw:
            shift = 0
            if _field(ctx, "INT_DESCALE_Enable"):
                if _field(ctx, "INT_DESCALE_Mode"):
                    raise _unimplemented(ctx, "INT_DESCALE_Mode 1 (per-z shift amounts)")
                shift = _field(ctx, "INT_DESCALE_VALUES_SEC0_Value") & 31
            if shift:
                raise _unimplemented(ctx, "INT8 with a non-zero ShiftAmount (rounding rule not given)", shift)
        if inter not in (FP32, TF32, BF16, INT32, INT8):
            raise _unimplemented(ctx, f"{name} intermediate from Dst32b is not modelled", inter)
    else:
        if inter == INT32 or (inter == FP32 and not (round10 and not raw)):
            raise _undefined(ctx, no, inter)
        if inter in (BF16, FP16) and round10:
            raise _unimplemented(ctx, f"{name} intermediate from Dst16b with Round_10b_mant")
        if inter == TF32 and raw:
            raise _unimplemented(ctx, "TF32 intermediate from Dst16b with Read_raw")
        if inter not in (FP32, TF32, BF16, FP16, INT16):
            raise _unimplemented(ctx, f"{name} intermediate from Dst16b is not modelled", inter)
    ints = {INT32: INT32, INT16: INT16, INT8: INT8}
    if (
        (inter in ints) != (out in ints)
        or (inter in ints and inter != out)
        or (inter == FP32 and out == TF32)
    ):
        raise _undefined(ctx, f"late conversion {name} -> {FORMAT_NAMES[out]} does not exist", out)
    return Conversion(read32, inter, out, raw, unsigned, round10)


def early(conv: Conversion, raw_bits: int) -> int:
    """EarlyFormatConversion of one Dst datum (raw register-file bits) to the intermediate datum:
    FP32 / TF32 / INT32 as plain 32-bit, BF16 / FP16 / INT16 as plain 16-bit, INT8 as the L1 byte."""
    inter = conv.inter
    if conv.read32:
        value = _one(formats.dst32_to_fp32, raw_bits)
        if inter == FP32:
            return _one(formats.packer_round_fp32_to_tf32, value) if conv.round10 and not conv.raw else value
        if inter == TF32:
            return value if conv.raw else _one(formats.packer_round_fp32_to_tf32, value)
        if inter == BF16:
            return value >> 16 if conv.raw else _one(formats.packer_round_fp32_to_bf16, value)
        if inter == INT32:
            return value
        # INT8 (ShiftAmount is zero)
        sign, mag = value >> 31, value & 0x7FFFFFFF
        if conv.raw:
            return mag & 0xFF if conv.unsigned else sign << 7 | (mag & 0x7F)
        if conv.unsigned:
            return 0 if sign else min(mag, 255)
        return sign << 7 | min(mag, 127)
    if inter == INT16:
        return raw_bits
    if inter == FP16:
        value = _one(formats.dst16_to_fp16, raw_bits)
        return value if conv.raw else _one(formats.packer_round_fp16, value)
    value = _one(formats.dst16_to_bf16, raw_bits)
    if inter == BF16:
        return value if conv.raw else _one(formats.packer_round_bf16, value)
    # TF32 (or FP32 with Round_10b_mant): no bits dropped, only the rounding flushes apply
    return _one(formats.packer_round_fp32_to_tf32, value << 16)


def _relu(ctx: Context, conv: Conversion, mode: int, threshold: int, bits: int) -> int:
    """ReLUStage on an intermediate datum (ReLU.md)."""
    if mode == 0:
        return bits
    inter = conv.inter
    if inter in (INT32, INT16, INT8):
        top = {INT32: 31, INT16: 15, INT8: 7}[inter]
        if inter == INT8 and conv.unsigned:
            return bits  # UINT8 datums are never negative
        return 0 if bits >> top & 1 else bits
    t = threshold << 16 if inter in FLOAT32_LIKE else threshold
    if _is_nan(bits, inter):
        return bits
    x = _key(bits, inter)
    if mode == 1:
        return 0 if x <= 0 else bits
    t_nan = _is_nan(t, inter)
    if mode == 2:
        return 0 if not t_nan and x <= _key(t, inter) else bits
    if x <= 0:
        return 0
    return t if not t_nan and x > _key(t, inter) else bits


def _threshold_exp(inter: int, threshold: int, bits: int) -> int:
    """ApplyExponentThresholding (ExponentThresholding.md) with Exp_threshold_en set."""
    if inter in FLOAT32_LIKE:
        exp = bits >> 23 & 0xFF
    elif inter == BF16:
        exp = bits >> 7 & 0xFF
    elif inter == FP16:
        exp = bits >> 10 & 0x1F
    else:
        return bits
    return 0 if exp < threshold else bits


def late(ctx: Context, conv: Conversion, bits: int) -> bytes:
    """The late format conversion of one intermediate datum to its L1 bytes (little-endian)."""
    inter, out = conv.inter, conv.out
    if inter in (INT32, INT16, INT8):
        return bits.to_bytes(OUT_BYTES[out], "little")
    if inter == FP16:
        if out == FP16:
            return bits.to_bytes(2, "little")
        exp, man = bits >> 10 & 0x1F, bits & 0x3FF
        if exp == 31:
            raise _unimplemented(ctx, f"FP16 datum {bits:#06x} with exponent 31 widened to an 8-bit exponent")
        if exp == 0 and man:
            if out != BF16:
                raise _unimplemented(ctx, f"FP16 denormal {bits:#06x} widened (documented as mishandled)")
            return (bits & 0x8000).to_bytes(2, "little")
        value = _one(formats.fp16_to_fp32, bits)
        return (value >> 16 if out == BF16 else value).to_bytes(2 if out == BF16 else 4, "little")
    value = bits << 16 if inter == BF16 else bits  # FP32 bits
    if out in FLOAT32_LIKE:
        return value.to_bytes(4, "little")
    if out == BF16:
        return (value >> 16).to_bytes(2, "little")
    # -> FP16
    mag = value & 0x7FFFFFFF
    if 0x38000000 < mag < 0x38800000:  # 2**-15 < |x| < 2**-14
        raise _unimplemented(
            ctx, f"FP32 {value:#010x} in 2**-15 < |x| < 2**-14 to FP16 (documented as mishandled)"
        )
    return _one(formats.fp32_to_fp16, value).to_bytes(2, "little")


def _edge_mask(ctx: Context) -> int:
    """The one EdgeMask every datum sees, or Unimplemented if it would depend on the position."""
    if _field(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable"):
        raise _unimplemented(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable (tile position generator)")
    b = _field(ctx, "PCK_EDGE_TILE_ROW_SET_SELECT_select") & 3
    cs = {_field(ctx, f"TILE_ROW_SET_MAPPING_{b}_row_set_mapping_{y}") for y in range(16)}
    masks = {_field(ctx, f"PCK_EDGE_OFFSET_SEC{c}_mask") for c in cs}
    if len(masks) != 1:
        raise _unimplemented(
            ctx, "edge masks that differ by row (tile position generator start not documented)"
        )
    return masks.pop()


# ------------------------------------------------------------------------------ PACR


_ZERO_CHECKS = (
    "Add_l1_dest_addr_offset", "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size",
    "Auto_set_last_pacr_intf_sel", "pack_start_intf_pos", "pack_dis_y_pos_start_offset",
    "Source_interface_selection", "Pack_L1_Acc", "Downsample_rate", "All_pack_disable_zero_compress_ovrd",
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
        ("dst_access_mode", dst_access_mode),
        ("addr_cnt_context", addr_cnt_context),
        ("ovrd_thread_id", ovrd_thread_id),
        ("ctxt_ctrl", ctxt_ctrl),
    ):
        if value:
            raise _unimplemented(ctx, f"{name}={value} (no Blackhole page)", value)
    if concat > 1:
        raise _unimplemented(ctx, f"concat={concat} (Blackhole's wider Concat field)", concat)
    if read_intf_sel not in INTERFACE_MASKS:
        raise _unimplemented(ctx, f"read_intf_sel={read_intf_sel:#06b} (interface mapping not evidenced)")
    for name in _ZERO_CHECKS:
        value = _cfg(ctx, name)
        if value:
            raise _unimplemented(ctx, f"THCON_SEC0_REG1_{name}={value} is not modelled", value)
    if not _cfg(ctx, "Disable_zero_compress"):
        raise _unimplemented(ctx, "compression (Disable_zero_compress clear) is not modelled")
    if _cfg(ctx, "Downsample_mask") not in (0, 0xFFFF):
        raise _unimplemented(ctx, "downsampling (Downsample_mask) is not modelled")

    copro, thread = ctx.copro, ctx.thread
    adc, regs = copro.adc, copro.regs
    state = pack_state(copro)
    conv = _conversion(ctx)
    relu_mode = _field(ctx, "STACC_RELU_ApplyRelu")
    if relu_mode > 3:
        raise _unimplemented(ctx, f"STACC_RELU_ApplyRelu={relu_mode} (bits 2..3)", relu_mode)
    relu_threshold = _field(ctx, "STACC_RELU_ReluThreshold")
    if relu_mode in (2, 3):
        if conv.inter in (INT32, INT16, INT8):
            raise _unimplemented(ctx, f"threshold ReLU {relu_mode} on an integer intermediate")
        if relu_threshold & 0x8000:
            raise _undefined(ctx, f"ReLU threshold {relu_threshold:#06x} is negative", relu_threshold)
    exp_threshold = _cfg(ctx, "Exp_threshold") if _cfg(ctx, "Exp_threshold_en") else None
    if exp_threshold is not None and relu_mode == 3:
        raise _unimplemented(ctx, "exponent thresholding with ReLU mode 3 (stage order not documented)")
    edge_mode = _field(ctx, "PCK_EDGE_MODE_mode")
    edge_mask = 0xFFFF if zero_write or flush else _edge_mask(ctx)
    if edge_mask != 0xFFFF and edge_mode and conv.inter not in (FP32, TF32, BF16):
        raise _unimplemented(ctx, f"edge mode -infinity in {FORMAT_NAMES[conv.inter]}")
    masked = (NEG_INF_BF16 if conv.inter == BF16 else NEG_INF32) if edge_mode else 0

    # ---- input address generator
    ch0 = [int(v) for v in adc.value[thread, PACKERS, 0]]
    ch1 = [int(v) for v in adc.value[thread, PACKERS, 1]]
    addr = (
        _field(ctx, "PCK0_ADDR_BASE_REG_0_Base")
        + ch0[X] * (_field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Xstride") & 0xF)
        + ch0[Y] * _field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Ystride")
        + ch0[Z] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Zstride")
        + ch0[W] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Wstride")
    ) & 0xFFFFFFFF
    bytes_per_datum, x_mask = {0: (4, 3), 1: (2, 7)}.get(conv.inter & 3, (1, 0xF))
    if flush:
        count = 0
    else:
        count = ch1[X] - ch0[X] + 1
        if count < 0:
            raise _undefined(ctx, f"X end {ch1[X]} before X start {ch0[X]} (count wraps)", ch0[X])
    addr = ((addr // bytes_per_datum) & ~x_mask) + (ch0[X] & x_mask)
    addr += _field(ctx, "DEST_TARGET_REG_CFG_PACK_SEC0_Offset") << 4
    source = addr & 0x3FFF
    interfaces = INTERFACE_MASKS[read_intf_sel]
    if count:
        if len(interfaces) > 1 and (source & 15 or count != 16):
            raise _unimplemented(
                ctx, f"{len(interfaces)} read interfaces with {count} datums from column {source & 15}"
            )
        if len(interfaces) == 1 and (source & 15) + count > 16:
            raise _unimplemented(ctx, f"one read interface reading {count} datums from column {source & 15}")
    addresses = [(source + 16 * k + i) & 0x3FFF for k in interfaces for i in range(count)]

    # ---- fetch (with the read-after-write stall)
    from_dst = not (zero_write or flush)
    raw_datums = [0] * len(addresses)
    if from_dst and addresses:
        remap, swizzle = dst_mapping(copro, thread)
        rows = np.array(sorted({a >> 4 for a in addresses}))
        storage = regs.storage_rows(rows, wide=conv.read32, remap=remap, swizzle=swizzle)
        until = regs.readable_from(storage)
        if until > ctx.cycle:
            return Wait("Dst block written by the matrix unit less than five cycles ago", until=until)
        if conv.read32:
            values = regs.read32(rows, remap=remap, swizzle=swizzle)
        else:
            values = regs.read16(rows, remap=remap)
        by_row = {int(r): values[i] for i, r in enumerate(rows)}
        raw_datums = [int(by_row[a >> 4][a & 15]) for a in addresses]

    # ---- the datums' pipeline
    out = bytearray()
    for a, raw in zip(addresses, raw_datums, strict=True):
        datum = masked if from_dst and not edge_mask >> (a & 15) & 1 else early(conv, raw)
        datum = _relu(ctx, conv, relu_mode, relu_threshold, datum)
        if exp_threshold is not None:
            datum = _threshold_exp(conv.inter, exp_threshold, datum)
        out += late(ctx, conv, datum)

    # ---- output address generator
    data_address, exponent_address = state.data_address, state.exponent_address
    if state.needs_new_address:
        out_addr = (
            _cfg(ctx, "L1_Dest_addr") + (0 if _cfg(ctx, "Sub_l1_tile_header_size") else 1)
        ) & 0xFFFFFFFF
        yzw = (
            _field(ctx, "PCK0_ADDR_BASE_REG_1_Base")
            + ch1[Y] * _field(ctx, "PCK0_ADDR_CTRL_XY_REG_1_Ystride")
            + ch1[Z] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride")
            + ch1[W] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride")
        )
        if yzw:
            raise _unimplemented(ctx, f"YZW_Addr {yzw:#x} (Blackhole's unit for it is not documented)", yzw)
        if out_addr > _field(ctx, "THCON_SEC0_REG9_Pack_0_2_limit_address") * 2 + 1:
            out_addr -= _field(ctx, "THCON_SEC0_REG9_Pack_0_2_fifo_size") * 2
        out_addr &= 0xFFFFFFFF
        if conv.out & 2:  # OutputFormatLessThan16Bits: the exponent stream takes its address first
            exponent_address = (out_addr & L1_ADDRESS_MASK) << 4
            out_addr += _cfg(ctx, "Exp_section_size")
        data_address = (out_addr & L1_ADDRESS_MASK) << 4

    # ---- the 16-byte writes (checked before anything is written)
    buffered = state.pending + bytes(out)
    flushing = bool(last or flush)
    if flushing and len(buffered) % 16:
        buffered += bytes(16 - len(buffered) % 16)
    whole = len(buffered) - len(buffered) % 16
    chunks = [(data_address + i, buffered[i : i + 16]) for i in range(0, whole, 16)]
    l1_size = copro.arch.l1_size
    for address, _ in chunks:
        if address + 16 > l1_size:
            raise MemoryFault(
                f"pipe {thread} PACR: packer L1 write outside L1",
                address=address,
                size=16,
                write=True,
                core=ctx.core,
                pc=ctx.pc,
                cycle=ctx.cycle,
            )

    # ---- commit
    for address, data in chunks:
        copro.l1_write(address, data, ctx.cycle)
    state.data_address = data_address + whole
    state.exponent_address = exponent_address
    state.pending = buffered[whole:]
    state.needs_new_address = flushing
    mod = pack_addr_mod(copro, thread, addr_mode)
    for channel, y_clear, y_cr, y_incr, z_clear, z_incr in (
        (0, mod.ysrc_clear, mod.ysrc_cr, mod.ysrc_incr, mod.zsrc_clear, mod.zsrc_incr),
        (1, mod.ydst_clear, mod.ydst_cr, mod.ydst_incr, mod.zdst_clear, mod.zdst_incr),
    ):
        if y_clear:
            adc.set(thread, PACKERS, channel, Y, 0)
        elif y_cr:
            adc.increment_cr(thread, PACKERS, channel, Y, y_incr)
        else:
            adc.increment(thread, PACKERS, channel, Y, y_incr)
        if z_clear:
            adc.set(thread, PACKERS, channel, Z, 0)
        else:
            adc.increment(thread, PACKERS, channel, Z, z_incr)
    return Retire(PACK.issue_cycles + -(-len(out) // PACK.l1_bytes_per_cycle))


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
            raise _undefined(ctx, f"{name}={value}: the documented form has {expected}", value)
    raise _unimplemented(
        ctx,
        f"PACR_SETREG AddrSel {mode_sel} AddrMid {stream_id:#x} Value10 {unused:#x}: SetRegBase / "
        "SetRegHiScaler (TDMA-RISC) and the NoC overlay registers it writes are not modelled",
    )
