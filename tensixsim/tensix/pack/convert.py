"""The packers' datums on their way from Dst to the output buffers: the early and late format
conversions (Packers/FormatConversion.md), edge masking (EdgeMasking.md), ReLU (ReLU.md) and exponent
thresholding (ExponentThresholding.md), the stages Blackhole's PACR (unit.py) and Wormhole's
(wormhole.py) run them through.

Points the pages leave open, and the readings taken
---------------------------------------------------
- Early conversion (FormatConversion.md): ``IntermediateFormat`` must equal ``In_data_format`` (the late
  conversion's input), else Unimplemented. The table's "No" entries raise UndefinedBehavior. Supported:
  from Dst32b FP32 / TF32 (Read_raw, or rounding with Round_10b_mant) / BF16 (rounding or truncation) /
  INT32 (bitcast) / INT8 (sign and low 7 bits, low 8 bits, or saturation with a zero ShiftAmount); from
  Dst16b BF16 (rounding or identity) / TF32 (rounding) / FP16 (rounding or identity) / INT16.
  Rounding is formats.packer_round_* (ties away from zero, denormals and minus zero to +0, NaN to
  infinity). IntermediateFormat BFP8 is E8M6 (rounding, Read_raw false) or BF16 (truncation from Dst32b,
  identity from Dst16b, Read_raw true), held as BF16 bits; ReLU, thresholds and edge masking treat it as
  BF16. Not modelled (Unimplemented): the E5M7 / E5M6 (BFP8a) and FP8 intermediates, the
  TF32-in-BF16 form for a late TF32 -> FP16, TF32 with Read_raw to anything but FP32, INT8 from
  Dst16b, a non-zero ShiftAmount (the rounding rule of the shifted-out bits is not given),
  ``INT_DESCALE_Mode`` 1 ("for some value z"), stochastic rounding (``ALU_ROUNDING_MODE_Packer_srnd_en``).
- Block-float output (BFP8 / BFP4 / BFP2 and the a styles): the late conversion takes each datum to
  BF16 (b styles, by the rules below) or to FP16 and then E5M7 (a styles), and formats.bfp_from_bf16 /
  bfp_a_from_fp16 round each block of 16 to one shared exponent (that function's docstring gives the
  rounding and the readings where the page is silent: saturation at 127, +0 for zero magnitudes,
  exponent 0 as zero). The datums go to the data stream (BFP4: two a byte, BFP2: four, the first in
  the low bits) and the exponents, one byte per block (the a styles' five bits zero-extended), to the
  exponent stream, which OutputAddressGenerator.md places at the output address with the data
  ``Exp_section_size`` 16-byte units on (tt-llk's Blackhole set_packer_config sets it to the number
  of faces: 16 bytes of exponents per 256 datums). The exponent stream buffers and flushes like the
  data stream. A PACR must produce whole blocks of 16 datums (a block split across instructions is
  undocumented): Unimplemented otherwise. IntermediateFormat / In_data_format BFP4 / BFP2 (and a) are
  valid only as Out_data_format (the page's (‡)): UndefinedBehavior.
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
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix import formats
from tensixsim.tensix.formats import (
    BF16,
    BFP2,
    BFP2A,
    BFP4,
    BFP4A,
    BFP8,
    BFP8A,
    FORMAT_NAMES,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.semantics import Context

OUT_BYTES = {FP32: 4, TF32: 4, INT32: 4, BF16: 2, FP16: 2, INT16: 2, INT8: 1, FP8: 1}
BFP_BITS = {BFP8: 8, BFP4: 4, BFP2: 2, BFP8A: 8, BFP4A: 4, BFP2A: 2}  # bits per datum
BFP_A = frozenset({BFP8A, BFP4A, BFP2A})  # the 5-bit shared exponent styles
LATE_ONLY = frozenset({BFP4, BFP4A, BFP2, BFP2A})  # valid only as LateToFormat
FLOAT32_LIKE = frozenset({FP32, TF32})
NEG_INF32, NEG_INF_BF16 = 0xFF800000, 0xFF80

# ------------------------------------------------------------------------------ helpers


def config_field(ctx: Context, name: str) -> int:
    """Configuration field ``name`` in the issuing thread's Config state (the packers' modules)."""
    config = ctx.copro.config
    return config.read_field(name, config.state_id(ctx.thread))


def _i64(values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(np.int64)


def _is_nan(bits: np.ndarray, fmt: int) -> np.ndarray:
    if fmt in FLOAT32_LIKE:
        return ((bits & 0x7F800000) == 0x7F800000) & (bits & 0x7FFFFF != 0)
    if fmt == BF16:
        return ((bits & 0x7F80) == 0x7F80) & (bits & 0x7F != 0)
    return np.zeros(np.shape(bits), bool)  # FP16 has no NaN on the coprocessor


def _key(bits: np.ndarray | int, fmt: int) -> np.ndarray:
    """Non-NaN floats' order as signed integers (sign-magnitude; -0 == +0)."""
    top = 31 if fmt in FLOAT32_LIKE else 15
    mag = bits & ((1 << top) - 1)
    return np.where(bits >> top & 1, -mag, mag)


def undefined(ctx: Context, message: str, value: int | None = None) -> UndefinedBehavior:
    """The UndefinedBehavior a packer instruction raises (core, pc and cycle from ``ctx``)."""
    return ctx.error(UndefinedBehavior, message, value)  # type: ignore[return-value]


def unimplemented(ctx: Context, message: str, value: int | None = None) -> Unimplemented:
    """The Unimplemented a packer instruction raises (core, pc and cycle from ``ctx``)."""
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


PACKER0 = "THCON_SEC0_REG1_"  # Packers[0].Config's fields


def conversion(ctx: Context, packer: str = PACKER0, *, fp8_out: bool = False) -> Conversion:
    """The configured conversions of the packer whose Config fields start ``packer``; ``fp8_out``:
    LateToFormat FP8 (e5m2) is modelled (Wormhole's FormatConversion.md)."""
    read32 = bool(config_field(ctx, "PCK_DEST_RD_CTRL_Read_32b_data"))
    raw = bool(config_field(ctx, "PCK_DEST_RD_CTRL_Read_int8"))
    unsigned = bool(config_field(ctx, "PCK_DEST_RD_CTRL_Read_unsigned"))
    round10 = bool(config_field(ctx, "PCK_DEST_RD_CTRL_Round_10b_mant"))
    if config_field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_override"):
        inter = config_field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_val")
    else:
        inter = config_field(ctx, "ALU_FORMAT_SPEC_REG2_Dstacc")
    late_from = config_field(ctx, packer + "In_data_format")
    out = config_field(ctx, packer + "Out_data_format")
    for what, code in (
        ("IntermediateFormat", inter),
        ("In_data_format", late_from),
        ("Out_data_format", out),
    ):
        if code not in FORMAT_NAMES:
            raise undefined(ctx, f"{what} {code} names no format", code)
    for what, code in (("IntermediateFormat", inter), ("In_data_format", late_from)):
        if code in LATE_ONLY:
            raise undefined(ctx, f"{what} {FORMAT_NAMES[code]} is valid only as Out_data_format", code)
    if (out not in OUT_BYTES and out not in BFP_BITS) or (out == FP8 and not fp8_out):
        raise unimplemented(ctx, f"output format {FORMAT_NAMES[out]} is not modelled", out)
    if inter == BFP8A:
        raise unimplemented(ctx, "the E5M7 / E5M6 intermediates (IntermediateFormat BFP8a)", inter)
    if inter != late_from:
        raise unimplemented(
            ctx,
            f"IntermediateFormat {FORMAT_NAMES[inter]} differs from In_data_format {FORMAT_NAMES[late_from]}",
            inter,
        )
    if config_field(ctx, "ALU_ROUNDING_MODE_Packer_srnd_en"):
        raise unimplemented(ctx, "stochastic rounding (ALU_ROUNDING_MODE_Packer_srnd_en)")
    name = FORMAT_NAMES[inter]
    no = f"early conversion from Dst{'32' if read32 else '16'}b to {name} does not exist"
    if read32:
        if inter in (FP16, INT16):
            raise undefined(ctx, no, inter)
        if inter == BF16 and round10:
            raise unimplemented(ctx, "BF16 intermediate with Round_10b_mant (TF32 for a late TF32 -> FP16)")
        if inter == BFP8 and round10:
            raise unimplemented(ctx, "BFP8 intermediate with Round_10b_mant")
        if inter == TF32 and raw and out != FP32:
            raise unimplemented(ctx, "TF32 intermediate with Read_raw converted to anything but FP32")
        if inter == INT8 and not raw:
            shift = 0
            if config_field(ctx, "INT_DESCALE_Enable"):
                if config_field(ctx, "INT_DESCALE_Mode"):
                    raise unimplemented(ctx, "INT_DESCALE_Mode 1 (per-z shift amounts)")
                shift = config_field(ctx, "INT_DESCALE_VALUES_SEC0_Value") & 31
            if shift:
                raise unimplemented(ctx, "INT8 with a non-zero ShiftAmount (rounding rule not given)", shift)
        if inter not in (FP32, TF32, BF16, BFP8, INT32, INT8):
            raise unimplemented(ctx, f"{name} intermediate from Dst32b is not modelled", inter)
    else:
        if inter == INT32 or (inter == FP32 and not (round10 and not raw)):
            raise undefined(ctx, no, inter)
        if inter in (BF16, BFP8, FP16) and round10:
            raise unimplemented(ctx, f"{name} intermediate from Dst16b with Round_10b_mant")
        if inter == TF32 and raw:
            raise unimplemented(ctx, "TF32 intermediate from Dst16b with Read_raw")
        if inter not in (FP32, TF32, BF16, BFP8, FP16, INT16):
            raise unimplemented(ctx, f"{name} intermediate from Dst16b is not modelled", inter)
    ints = {INT32: INT32, INT16: INT16, INT8: INT8}
    if (
        (inter in ints) != (out in ints)
        or (inter in ints and inter != out)
        or (inter == FP32 and out == TF32)
    ):
        raise undefined(ctx, f"late conversion {name} -> {FORMAT_NAMES[out]} does not exist", out)
    return Conversion(read32, inter, out, raw, unsigned, round10)


def early(conv: Conversion, raw: np.ndarray) -> np.ndarray:
    """EarlyFormatConversion of Dst datums (raw register-file bits) to intermediate datums: FP32 /
    TF32 / INT32 as plain 32-bit, BF16 / FP16 / INT16 as plain 16-bit, INT8 as the L1 byte."""
    inter = conv.inter
    if conv.read32:
        value = _i64(formats.dst32_to_fp32(raw))
        if inter == FP32:
            return _i64(formats.packer_round_fp32_to_tf32(value)) if conv.round10 and not conv.raw else value
        if inter == TF32:
            return value if conv.raw else _i64(formats.packer_round_fp32_to_tf32(value))
        if inter == BF16:
            return value >> 16 if conv.raw else _i64(formats.packer_round_fp32_to_bf16(value))
        if inter == BFP8:  # truncation to BF16, or rounding to E8M6 (held as BF16 bits)
            return value >> 16 if conv.raw else _i64(formats.packer_round_to_e8m6(value))
        if inter == INT32:
            return value
        # INT8 (ShiftAmount is zero)
        sign, mag = value >> 31, value & 0x7FFFFFFF
        if conv.raw:
            return mag & 0xFF if conv.unsigned else sign << 7 | (mag & 0x7F)
        if conv.unsigned:
            return np.where(sign == 1, 0, np.minimum(mag, 255))
        return sign << 7 | np.minimum(mag, 127)
    if inter == INT16:
        return _i64(raw)
    if inter == FP16:
        value = formats.dst16_to_fp16(raw)
        return _i64(value if conv.raw else formats.packer_round_fp16(value))
    value = formats.dst16_to_bf16(raw)
    if inter == BF16:
        return _i64(value if conv.raw else formats.packer_round_bf16(value))
    if inter == BFP8:  # identity, or rounding to E8M6 (held as BF16 bits)
        return _i64(value if conv.raw else formats.packer_round_to_e8m6(_i64(value) << 16))
    # TF32 (or FP32 with Round_10b_mant): no bits dropped, only the rounding flushes apply
    return _i64(formats.packer_round_fp32_to_tf32(_i64(value) << 16))


def relu(conv: Conversion, mode: int, threshold: int, bits: np.ndarray) -> np.ndarray:
    """ReLUStage on intermediate datums (ReLU.md)."""
    if mode == 0:
        return bits
    inter = BF16 if conv.inter == BFP8 else conv.inter
    if inter in (INT32, INT16, INT8):
        top = {INT32: 31, INT16: 15, INT8: 7}[inter]
        if inter == INT8 and conv.unsigned:
            return bits  # UINT8 datums are never negative
        return np.where(bits >> top & 1, 0, bits)
    t = threshold << 16 if inter in FLOAT32_LIKE else threshold
    nan = _is_nan(bits, inter)
    x = _key(bits, inter)
    t_nan = bool(_is_nan(np.int64(t), inter))
    t_key = int(_key(t, inter))
    if mode == 1:
        zero = x <= 0
    elif mode == 2:
        zero = x <= t_key if not t_nan else np.zeros(len(bits), bool)
    else:
        zero = x <= 0
        if not t_nan:
            bits = np.where(~nan & (x > t_key), t, bits)
    return np.where(~nan & zero, 0, bits)


def threshold_exp(inter: int, threshold: int, bits: np.ndarray) -> np.ndarray:
    """ApplyExponentThresholding (ExponentThresholding.md) with Exp_threshold_en set."""
    inter = BF16 if inter == BFP8 else inter
    if inter in FLOAT32_LIKE:
        exp = bits >> 23 & 0xFF
    elif inter == BF16:
        exp = bits >> 7 & 0xFF
    elif inter == FP16:
        exp = bits >> 10 & 0x1F
    else:
        return bits
    return np.where(exp < threshold, 0, bits)


def late(ctx: Context, conv: Conversion, bits: np.ndarray) -> np.ndarray:
    """The late format conversion of intermediate datums to their L1 values (OUT_BYTES wide each); for
    a BFP output, to the BF16 (BFP*) or FP16 (BFP*a, whose E5M7 step is in formats) datums that are
    then rounded in blocks of 16 (FormatConversion.md: "converted to BF16 ... then round")."""
    inter, out = conv.inter, conv.out
    if out == FP8:  # e5m2: FP16's rule ("saturate ..., then truncate"), then two mantissa bits
        return late(ctx, replace(conv, out=FP16), bits) >> 8
    inter = BF16 if inter == BFP8 else inter
    if out in BFP_BITS:
        out = FP16 if out in BFP_A else BF16
    if inter in (INT32, INT16, INT8):
        return bits
    if inter == FP16:
        if out == FP16:
            return bits
        exp, man = bits >> 10 & 0x1F, bits & 0x3FF
        problem = (exp == 31) | ((exp == 0) & (man != 0) & (out != BF16))
        if problem.any():
            value = int(bits[np.argmax(problem)])
            if value >> 10 & 0x1F == 31:
                why = f"FP16 datum {value:#06x} with exponent 31 widened to an 8-bit exponent"
            else:
                why = f"FP16 denormal {value:#06x} widened (documented as mishandled)"
            raise unimplemented(ctx, why)
        wide = _i64(formats.fp16_to_fp32(bits))
        if out == BF16:
            return np.where((exp == 0) & (man != 0), bits & 0x8000, wide >> 16)
        return wide
    value = bits << 16 if inter == BF16 else bits  # FP32 bits
    if out in FLOAT32_LIKE:
        return value
    if out == BF16:
        return value >> 16
    # -> FP16
    mag = value & 0x7FFFFFFF
    problem = (mag > 0x38000000) & (mag < 0x38800000)  # 2**-15 < |x| < 2**-14
    if problem.any():
        first = int(value[np.argmax(problem)])
        raise unimplemented(
            ctx, f"FP32 {first:#010x} in 2**-15 < |x| < 2**-14 to FP16 (documented as mishandled)"
        )
    return _i64(formats.fp32_to_fp16(value))


def uniform_edge_mask(ctx: Context, packer: int = 0) -> int:
    """The one EdgeMask every datum of packer ``packer`` sees (its two bits of the row-set select),
    or Unimplemented if it would depend on the position."""
    if config_field(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable"):
        raise unimplemented(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable (tile position generator)")
    b = config_field(ctx, "PCK_EDGE_TILE_ROW_SET_SELECT_select") >> (2 * packer) & 3
    cs = {config_field(ctx, f"TILE_ROW_SET_MAPPING_{b}_row_set_mapping_{y}") for y in range(16)}
    masks = {config_field(ctx, f"PCK_EDGE_OFFSET_SEC{c}_mask") for c in cs}
    if len(masks) != 1:
        raise unimplemented(
            ctx, "edge masks that differ by row (tile position generator start not documented)"
        )
    return masks.pop()
