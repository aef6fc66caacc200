"""Number formats of the Tensix register files: the one place bits become numbers.

Everything here is a small vectorised function from numpy unsigned-integer arrays of raw bits to raw
bits. No Python or numpy float arithmetic is used: rounding, flushing and saturation are integer
operations on the sign, exponent and mantissa fields, so results are bit-exact by construction. Only
:func:`to_float32` / :func:`from_float32` (debug and test helpers) hand out float32 arrays, and they
do so by reinterpreting the fp32 bit pattern, never by computing.

Two families of layouts exist:

* "Plain" layouts, as in L1 and on the host: sign, exponent, mantissa from the top bit down. FP32 is
  ``uint32``; BF16 and FP16 are ``uint16``; TF32 is held as ``uint32`` FP32 bits whose low 13 mantissa
  bits are zero (the L1 TF32 form, packer FormatConversion "Final L1 output format").
* Register-file ("shuffled") layouts, which put the exponent below the mantissa:

  - Src (SrcA / SrcB), 19 bits in ``uint32``: sign at bit 18, a 10-bit mantissa at 8..17, an 8-bit
    exponent at 0..7. BF16 uses the top 7 mantissa bits (bits 8..10 zero); FP16 uses the low 5
    exponent bits (bits 5..7 zero). Integer "16" shares the BF16 placement; Integer "8" is overlaid on
    FP16. (WormholeB0 SrcASrcB.md layout diagrams; UNPACR_Regular WriteSrcTF32 / WriteSrcBF16 /
    WriteSrcFP16; MOVD2A ShuffleBF16 / ShuffleFP16 / ShuffleTF32; MOVA2D RemoveLowMantissa /
    RemoveHighExponent.)
  - Dst16, ``uint16``: BF16 as sign, mantissa(7), exponent(8); FP16 as sign, mantissa(10),
    exponent(5); Integer "8" overlaid on FP16; Integer "16" plain sign-magnitude.
  - Dst32, ``uint32``: FP32 as sign, mantissa-high(7), exponent(8), mantissa-low(16), i.e. the Dst16
    BF16 shuffle applied to the high half. Integer "32" (sign-magnitude) uses the same shuffle.
    (WormholeB0 Dst.md diagrams; UNPACR_Regular WriteDst*; SFPLOAD Unshuffle*, SFPSTORE *Shuffle;
    the BlackholeA0 Dst.md RISC-V access model, which uses the same field moves, so Blackhole keeps
    these layouts.)

Integer types are sign-magnitude, not two's complement: Integer "8" is a sign and a 10-bit magnitude
with a dummy FP16 exponent of 16 (0 when the magnitude is zero), Integer "16" a sign and 15 bits,
Integer "32" a sign and 31 bits.

The coprocessor is not IEEE 754 (FloatBitPatterns.md): FP16 has no NaN and no infinity (exponent 31 is
an ordinary binade), denormals read as zero in arithmetic, and the packers' deterministic rounding is
round-to-nearest with ties *away from zero*. :class:`Rounding` names the three rounding rules used.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np

__all__ = [
    "BF16",
    "BFP2",
    "BFP2A",
    "BFP4",
    "BFP4A",
    "BFP8",
    "BFP8A",
    "BFP_BLOCK",
    "FORMAT_NAMES",
    "FP8",
    "FP16",
    "FP32",
    "INT8",
    "INT16",
    "INT32",
    "TF32",
    "Rounding",
    "accumulate_float",
    "accumulate_int32",
    "bf16_to_fp32",
    "bfp_a_from_fp16",
    "bfp_datum_bytes",
    "bfp_from_bf16",
    "dst16_from_bf16",
    "dst16_from_fp16",
    "dst16_to_bf16",
    "dst16_to_fp16",
    "dst32_from_fp32",
    "dst32_to_fp32",
    "fp16_to_fp32",
    "fp32_to_bf16",
    "fp32_to_fp16",
    "fp32_to_tf32",
    "from_float32",
    "int8_from_int",
    "int8_from_sm8",
    "int8_to_int",
    "int8_to_sm8",
    "int8_to_u8",
    "int16_from_int",
    "int16_to_int",
    "int32_from_int",
    "int32_to_int",
    "packer_round_bf16",
    "packer_round_fp16",
    "packer_round_fp32_to_bf16",
    "packer_round_fp32_to_tf32",
    "packer_round_to_e8m6",
    "src_from_bf16",
    "src_from_fp16",
    "src_from_int16",
    "src_from_tf32",
    "src_to_bf16",
    "src_to_fp16",
    "src_to_int16",
    "src_to_tf32",
    "to_float32",
    "unpack_fp32_to_bf16",
]

# The coprocessor's 4-bit data format codes (Packers/FormatConversion.md, Unpackers/FormatConversion.md;
# ALU_FORMAT_SPEC, THCON In/Out_data_format). Codes 12 and 13 name no format.
FP32, FP16, BFP8A, BFP4A, TF32, BF16, BFP8, BFP4 = range(8)
INT32, INT16, FP8, BFP2A, INT8, BFP2 = 8, 9, 10, 11, 14, 15
FORMAT_NAMES = {
    FP32: "FP32", FP16: "FP16", BFP8A: "BFP8a", BFP4A: "BFP4a", TF32: "TF32", BF16: "BF16",
    BFP8: "BFP8", BFP4: "BFP4", INT32: "INT32", INT16: "INT16", FP8: "FP8", BFP2A: "BFP2a",
    INT8: "INT8", BFP2: "BFP2",
}  # fmt: skip

_SIGN32 = np.uint32(0x8000_0000)
_MAG32 = np.uint32(0x7FFF_FFFF)
_EXP32 = np.uint32(0x7F80_0000)
_MAN32 = np.uint32(0x007F_FFFF)
_TF32_MASK = np.uint32(0xFFFF_E000)


class Rounding(enum.Enum):
    """How a conversion disposes of mantissa bits it cannot keep."""

    TRUNCATE = "truncate"  # toward zero: the dropped bits are simply discarded
    NEAREST_EVEN = "nearest_even"  # IEEE 754 roundTiesToEven (host-side reference, RISC-V BF16 RTNE)
    NEAREST_AWAY = "nearest_away"  # ties away from zero: the packers' deterministic rounding


def _u32(bits: np.ndarray | int) -> np.ndarray:
    return np.asarray(bits).astype(np.uint32)


def _u16(bits: np.ndarray | int) -> np.ndarray:
    return np.asarray(bits).astype(np.uint16)


def _round_magnitude(mag: np.ndarray, drop: int, rounding: Rounding) -> np.ndarray:
    """Drop the low ``drop`` bits of an unsigned magnitude (exponent and mantissa fields together).

    Rounding the concatenated exponent:mantissa as one integer is what makes a mantissa carry step
    the exponent, and a carry out of the largest finite binade land on the all-ones exponent.
    """
    mag = _u32(mag)
    kept = mag >> np.uint32(drop)
    if rounding is Rounding.TRUNCATE:
        return kept
    rem = mag & np.uint32((1 << drop) - 1)
    half = np.uint32(1 << (drop - 1))
    if rounding is Rounding.NEAREST_AWAY:
        up = rem >= half
    else:
        up = (rem > half) | ((rem == half) & ((kept & np.uint32(1)) == 1))
    return kept + up.astype(np.uint32)


def _is_nan32(b: np.ndarray) -> np.ndarray:
    return ((b & _EXP32) == _EXP32) & ((b & _MAN32) != 0)


# ---------------------------------------------------------------------------------------------------
# Plain-layout float conversions
# ---------------------------------------------------------------------------------------------------


def bf16_to_fp32(bits: np.ndarray) -> np.ndarray:
    """BF16 -> FP32: exact, every pattern (NaN, denormal) kept as it is."""
    return _u32(_u16(bits)) << np.uint32(16)


def fp32_to_bf16(bits: np.ndarray, rounding: Rounding = Rounding.TRUNCATE) -> np.ndarray:
    """FP32 -> BF16 with no flushing.

    TRUNCATE is the bit drop the hardware calls truncation (a NaN whose payload is all in the dropped
    bits becomes infinity, as packer FormatConversion says). The nearest modes keep NaN a NaN (sign
    kept, quiet bit set), as IEEE 754 does; the packers' own rounding, which turns NaN into infinity
    and flushes denormals, is :func:`packer_round_fp32_to_bf16`.
    """
    b = _u32(bits)
    if rounding is Rounding.TRUNCATE:
        return (b >> np.uint32(16)).astype(np.uint16)
    out = (b & _SIGN32) >> np.uint32(16) | _round_magnitude(b & _MAG32, 16, rounding)
    quiet = (b >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(_is_nan32(b), quiet, out).astype(np.uint16)


def fp32_to_tf32(bits: np.ndarray, rounding: Rounding = Rounding.TRUNCATE) -> np.ndarray:
    """FP32 -> TF32 (FP32 bits with the low 13 mantissa bits zero), no flushing; NaN as in fp32_to_bf16.

    TRUNCATE is what the unpackers do for FP32 -> TF32 (UNPACR_Regular: ``DatumBits >> 13``).
    """
    b = _u32(bits)
    if rounding is Rounding.TRUNCATE:
        return b & _TF32_MASK
    out = (b & _SIGN32) | (_round_magnitude(b & _MAG32, 13, rounding) << np.uint32(13))
    quiet = (b & _TF32_MASK) | np.uint32(0x0040_0000)
    return np.where(_is_nan32(b), quiet, out).astype(np.uint32)


def unpack_fp32_to_bf16(bits: np.ndarray) -> np.ndarray:
    """The unpackers' FP32 -> BF16: flush denormals to signed zero, then truncate.

    UNPACR_Regular FormatConversion; SFPSTORE's ToBF16 is the same function.
    """
    b = _u32(bits)
    b = np.where((b & _EXP32) == 0, b & _SIGN32, b)
    return (b >> np.uint32(16)).astype(np.uint16)


def fp16_to_fp32(bits: np.ndarray, *, max_is_inf: bool = False) -> np.ndarray:
    """Tensix FP16 -> FP32 as SFPLOAD reads it (ReadFP16).

    Exponents 1..31 are all ordinary binades (rebias by 112): FP16 has no NaN or infinity on the
    coprocessor. ``max_is_inf`` (SFPLOAD's ENABLE_FP16A_INF) maps exponent 31 / mantissa 1023, the
    pattern the hardware saturates to, onto FP32 infinity. Exponent 0 keeps its mantissa under an FP32
    exponent of 0, giving an FP32 denormal that later arithmetic reads as zero, as documented.
    """
    x = _u32(_u16(bits))
    sign = (x >> np.uint32(15)) << np.uint32(31)
    exp = x >> np.uint32(10) & np.uint32(0x1F)
    man = x & np.uint32(0x3FF)
    exp32 = np.where(exp != 0, exp + np.uint32(112), np.uint32(0)).astype(np.uint32)
    man32 = man << np.uint32(13)
    if max_is_inf:
        is_max = (exp == 0x1F) & (man == 0x3FF)
        exp32 = np.where(is_max, np.uint32(0xFF), exp32).astype(np.uint32)
        man32 = np.where(is_max, np.uint32(0), man32).astype(np.uint32)
    return sign | (exp32 << np.uint32(23)) | man32


def fp32_to_fp16(bits: np.ndarray, rounding: Rounding = Rounding.TRUNCATE) -> np.ndarray:
    """FP32 -> Tensix FP16: flush underflow to signed zero, saturate overflow, then round.

    With TRUNCATE this is SFPSTORE's documented ToFP16, which is also the packer late conversion's
    rule ("saturate if there is narrowing of exponent, then truncate"). Anything whose rebiased
    exponent is <= 0 (|x| < 2**-14, including FP32 denormals) becomes signed zero; anything whose
    rebiased exponent exceeds 31, FP32 infinity and NaN included, becomes the largest pattern
    (exponent 31, mantissa 1023), which the coprocessor treats as its "infinity".

    Undocumented: UNPACR's FP32 -> FP16 calls an FP32ToFP16 the documentation never defines; we take
    it to be this function with TRUNCATE, the only FP32 -> FP16 rule the documentation spells out. The
    packer's late conversion is documented to mishandle some inputs in 2**-15 < |x| < 2**-14; we
    flush them, as SFPSTORE does. For the nearest modes, flushing happens before rounding (so values
    just under 2**-14 do not round up into the smallest normal) and a round-up past exponent 31
    saturates.
    """
    b = _u32(bits)
    sign16 = (b >> np.uint32(16)) & np.uint32(0x8000)
    exp = ((b & _EXP32) >> np.uint32(23)).astype(np.int32) - 112
    # Exponent rebased onto FP16's bias, joined to the full 23-bit mantissa, rounded as one integer.
    safe_exp = np.clip(exp, 0, 31).astype(np.uint32)
    mag = _round_magnitude((safe_exp << np.uint32(23)) | (b & _MAN32), 13, rounding)
    mag = np.minimum(mag, np.uint32(0x7FFF))
    mag = np.where(exp <= 0, np.uint32(0), np.where(exp > 31, np.uint32(0x7FFF), mag))
    return (sign16 | mag).astype(np.uint16)


def _packer_round_8bit_exp(b: np.ndarray, drop: int) -> np.ndarray:
    """Packer early-conversion rounding for targets with an 8-bit exponent (packer FormatConversion).

    Denormals flush to zero, minus zero becomes plus zero, NaN becomes infinity, and finite values
    round to nearest with ties away from zero (stochastic rounding is not modelled here). Undocumented:
    whether a flushed negative denormal keeps its sign; we give +0, reading "minus zero converted to
    positive zero" as applying to every zero result. Also undocumented: the sign of the infinity a NaN
    becomes; we keep the NaN's sign. A round-up out of the largest finite binade gives infinity, the
    natural carry of the hardware's exponent:mantissa adder.
    """
    sign = b & _SIGN32
    rounded = sign | (_round_magnitude(b & _MAG32, drop, Rounding.NEAREST_AWAY) << np.uint32(drop))
    out = np.where((b & _EXP32) == 0, np.uint32(0), rounded)
    return np.where(_is_nan32(b), sign | _EXP32, out).astype(np.uint32)


def packer_round_fp32_to_bf16(bits: np.ndarray) -> np.ndarray:
    """The packers' rounding FP32 -> BF16 early conversion (Read_raw = false)."""
    return (_packer_round_8bit_exp(_u32(bits), 16) >> np.uint32(16)).astype(np.uint16)


def packer_round_fp32_to_tf32(bits: np.ndarray) -> np.ndarray:
    """The packers' rounding FP32 -> TF32 early conversion; result in TF32's FP32-bits form."""
    return _packer_round_8bit_exp(_u32(bits), 13)


def packer_round_bf16(bits: np.ndarray) -> np.ndarray:
    """The packers' BF16 -> BF16 "rounding" conversion: no bits dropped, only the flushes apply."""
    return (_packer_round_8bit_exp(bf16_to_fp32(bits), 16) >> np.uint32(16)).astype(np.uint16)


def packer_round_fp16(bits: np.ndarray) -> np.ndarray:
    """The packers' FP16 -> FP16 "rounding" conversion: denormals and minus zero become +0.

    FP16 has no NaN on the coprocessor, so exponent 31 passes through unchanged.
    """
    x = _u16(bits)
    return np.where((x & np.uint16(0x7C00)) == 0, np.uint16(0), x).astype(np.uint16)


def packer_round_to_e8m6(bits: np.ndarray) -> np.ndarray:
    """The packers' rounding FP32 -> E8M6 early conversion (IntermediateFormat BFP8, Read_raw false),
    with the 8-bit-exponent rounding rules; the result is BF16 bits whose lowest mantissa bit is zero."""
    return (_packer_round_8bit_exp(_u32(bits), 17) >> np.uint32(16)).astype(np.uint16)


# ---------------------------------------------------------------------------------------------------
# Block floats (the packers' BFP output)
# ---------------------------------------------------------------------------------------------------

BFP_BLOCK = 16  # datums sharing one exponent


def _bfp_blocks(sign: np.ndarray, exp: np.ndarray, man7: np.ndarray, datum_bits: int):
    """Shared exponents and sign-magnitude datums for blocks of 16 (sign, exponent, 7-bit mantissa).

    Packers/FormatConversion.md: the shared exponent of a block is the largest of its datums'
    exponents; each magnitude (implicit one included) is shifted right to that exponent and rounded to
    nearest, ties away from zero, to 7 bits; BFP4 / BFP2 then truncate to 3 / 1 bits. Readings where
    the page is silent (they agree with Tenstorrent's ttsim): exponent 0 is zero (the page flushes
    denormals when the mantissa narrows); a rounding carry past 7 bits saturates to 127 rather than
    raising the shared exponent; the all-ones exponent is an ordinary binade; a datum whose magnitude
    ends up zero is written as +0, since sign 1 with magnitude 0 means minus infinity in BFP.
    """
    exp = np.asarray(exp).astype(np.int64).reshape(-1, BFP_BLOCK)
    man7 = np.asarray(man7).astype(np.int64).reshape(-1, BFP_BLOCK)
    sign = np.asarray(sign).astype(np.int64).reshape(-1, BFP_BLOCK)
    shared = exp.max(axis=1)
    significand = np.where(exp == 0, 0, 0x80 | man7)
    shift = np.minimum(shared[:, None] - exp, 9)
    mag = np.minimum((significand + (1 << shift)) >> (shift + 1), 0x7F) >> (8 - datum_bits)
    datums = np.where(mag == 0, 0, (sign << (datum_bits - 1)) | mag)
    return shared, datums.ravel()


def bfp_from_bf16(bits: np.ndarray, datum_bits: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Plain BF16 datums (a multiple of 16) -> BFP8 / BFP4 / BFP2 (``datum_bits`` 8 / 4 / 2): (shared
    8-bit exponent per block of 16, the datums of ``datum_bits`` bits in order), as :func:`_bfp_blocks`."""
    x = _u16(bits).astype(np.int64)
    return _bfp_blocks(x >> 15, x >> 7 & 0xFF, x & 0x7F, datum_bits)


def bfp_a_from_fp16(bits: np.ndarray, datum_bits: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Plain FP16 datums (a multiple of 16) -> BFP8a / BFP4a / BFP2a: the mantissa truncated to
    E5M7's seven bits, then blocks as :func:`_bfp_blocks` with the 5-bit exponent (stored in a byte)."""
    x = _u16(bits).astype(np.int64)
    return _bfp_blocks(x >> 15, x >> 10 & 0x1F, (x & 0x3FF) >> 3, datum_bits)


def bfp_datum_bytes(datums: np.ndarray, datum_bits: int) -> bytes:
    """BFP datums as they lie in L1: ``8 // datum_bits`` datums a byte, the first in the lowest bits."""
    d = np.asarray(datums).astype(np.int64).reshape(-1, 8 // datum_bits)
    shifts = datum_bits * np.arange(8 // datum_bits, dtype=np.int64)
    return ((d << shifts).sum(axis=1)).astype(np.uint8).tobytes()


# ---------------------------------------------------------------------------------------------------
# L1 accumulation (the packers' near-memory accumulate)
# ---------------------------------------------------------------------------------------------------

# (exponent bits, mantissa bits) of the float formats L1 can accumulate in (WormholeB0 L1.md: 4 x FP32,
# 4 x INT32, 8 x FP16 or 8 x BF16 per 128 bits).
_ACC_FLOATS = {"fp32": (8, 23), "bf16": (8, 7), "fp16": (5, 10)}


def _leading_zeros(x: np.ndarray, width: int) -> np.ndarray:
    """Leading zeros of each non-negative ``x`` below bit ``width`` (``width`` for zero)."""
    count = np.full(x.shape, width, np.int64)
    for bit in range(width):
        count = np.where((x >> bit) != 0, width - 1 - bit, count)
    return count


def accumulate_float(old: np.ndarray, new: np.ndarray, fmt: str) -> np.ndarray:
    """``old + new`` for plain-layout "fp32" / "bf16" / "fp16" bits, as the packers' L1 accumulation.

    No page gives the adder's rounding; the reading taken (it agrees with Tenstorrent's ttsim on
    finite operands) is IEEE 754 addition rounded to nearest, ties to even, with denormal inputs read
    as zero and results below the smallest normal flushed to zero keeping their sign. With an 8-bit
    exponent: a NaN operand or infinities of opposite signs give the quiet NaN with sign 0 and only
    the top mantissa bit set; an infinity operand gives itself; overflow gives infinity. FP16 has no
    infinity or NaN on the coprocessor (exponent 31 is an ordinary binade): overflow saturates to
    exponent 31, mantissa all ones. An exact cancellation is +0; the sum of two zeros is -0 only when
    both are -0.
    """
    exp_bits, man_bits = _ACC_FLOATS[fmt]
    width = 1 + exp_bits + man_bits
    top = np.int64(exp_bits + man_bits)
    max_exp = (1 << exp_bits) - 1
    a = np.asarray(old).astype(np.int64)
    b = np.asarray(new).astype(np.int64)
    sign_a, sign_b = a >> top & 1, b >> top & 1
    exp_a, exp_b = a >> man_bits & max_exp, b >> man_bits & max_exp
    man_a, man_b = a & ((1 << man_bits) - 1), b & ((1 << man_bits) - 1)
    # Order the operands by magnitude (denormals read as zero).
    mag_a = np.where(exp_a == 0, 0, a & ((1 << top) - 1))
    mag_b = np.where(exp_b == 0, 0, b & ((1 << top) - 1))
    swap = mag_b > mag_a
    big_s, small_s = np.where(swap, sign_b, sign_a), np.where(swap, sign_a, sign_b)
    big_e, small_e = np.where(swap, exp_b, exp_a), np.where(swap, exp_a, exp_b)
    big_m = np.where(swap, man_b, man_a) | (1 << man_bits)
    small_m = np.where(small_e == 0, 0, np.where(swap, man_a, man_b) | (1 << man_bits))
    big_m = np.where(big_e == 0, 0, big_m)
    # Three extra low bits (guard, round, sticky) for the aligned smaller operand.
    wide_big, wide_small = big_m << 3, small_m << 3
    shift = np.minimum(big_e - small_e, man_bits + 5)
    lost = (wide_small & ((np.int64(1) << shift) - 1)) != 0
    aligned = (wide_small >> shift) | lost
    same = big_s == small_s
    total = np.where(same, wide_big + aligned, wide_big - aligned)
    exp = big_e.copy()
    carry = total >> (man_bits + 4) != 0  # a carry into the next binade (adding)
    total = np.where(carry, (total >> 1) | (total & 1), total)
    exp = exp + carry
    norm = np.maximum(_leading_zeros(total, man_bits + 4), 0)  # cancellation (subtracting)
    norm = np.where(total == 0, 0, norm)
    total, exp = total << norm, exp - norm
    low, kept = total & 7, total >> 3
    kept = kept + ((low > 4) | ((low == 4) & (kept & 1 == 1)))
    overflow_m = kept >> (man_bits + 1) != 0
    kept, exp = np.where(overflow_m, kept >> 1, kept), exp + overflow_m
    result = big_s << top | exp << man_bits | (kept & ((1 << man_bits) - 1))
    result = np.where(exp <= 0, big_s << top, result)  # underflow: signed zero
    if exp_bits == 8:
        result = np.where(exp >= max_exp, big_s << top | max_exp << man_bits, result)
    else:
        result = np.where(exp > max_exp, big_s << top | ((1 << top) - 1), result)
    result = np.where(total == 0, 0, result)  # exact cancellation (or two zeros): +0 ...
    result = np.where((mag_a == 0) & (mag_b == 0), (sign_a & sign_b) << top, result)  # ... -0 + -0 = -0
    if exp_bits == 8:
        nan_a = (exp_a == max_exp) & (man_a != 0)
        nan_b = (exp_b == max_exp) & (man_b != 0)
        inf_a = (exp_a == max_exp) & (man_a == 0)
        inf_b = (exp_b == max_exp) & (man_b == 0)
        quiet_nan = max_exp << man_bits | 1 << (man_bits - 1)
        result = np.where(inf_a, a, np.where(inf_b, b, result))
        result = np.where(nan_a | nan_b | (inf_a & inf_b & (sign_a != sign_b)), quiet_nan, result)
    return result.astype(np.uint32 if width == 32 else np.uint16)


def accumulate_int32(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``old + new`` for sign-magnitude Integer "32" bits, saturating the magnitude (L1.md); a zero
    sum is +0."""
    total = int32_to_int(old) + int32_to_int(new)
    top = (1 << 31) - 1
    return int32_from_int(np.clip(total, -top, top))


# ---------------------------------------------------------------------------------------------------
# Register-file layouts
# ---------------------------------------------------------------------------------------------------


def dst16_from_bf16(bits: np.ndarray) -> np.ndarray:
    """Plain BF16 -> Dst16 BF16 (sign, mantissa(7), exponent(8))."""
    x = _u16(bits)
    return (
        (x & np.uint16(0x8000))
        | ((x & np.uint16(0x007F)) << np.uint16(8))
        | ((x & np.uint16(0x7F80)) >> np.uint16(7))
    )


def dst16_to_bf16(bits: np.ndarray) -> np.ndarray:
    """Dst16 BF16 -> plain BF16."""
    x = _u16(bits)
    return (
        (x & np.uint16(0x8000))
        | ((x & np.uint16(0x00FF)) << np.uint16(7))
        | ((x & np.uint16(0x7F00)) >> np.uint16(8))
    )


def dst16_from_fp16(bits: np.ndarray) -> np.ndarray:
    """Plain FP16 (or Integer "8" in FP16 order) -> Dst16 (sign, mantissa(10), exponent(5))."""
    x = _u16(bits)
    return (
        (x & np.uint16(0x8000))
        | ((x & np.uint16(0x03FF)) << np.uint16(5))
        | ((x & np.uint16(0x7C00)) >> np.uint16(10))
    )


def dst16_to_fp16(bits: np.ndarray) -> np.ndarray:
    """Dst16 FP16 (or Integer "8") -> plain FP16 order."""
    x = _u16(bits)
    return (
        (x & np.uint16(0x8000))
        | ((x & np.uint16(0x001F)) << np.uint16(10))
        | ((x & np.uint16(0x7FE0)) >> np.uint16(5))
    )


def dst32_from_fp32(bits: np.ndarray) -> np.ndarray:
    """Plain FP32 (or sign-magnitude Integer "32") -> Dst32: the BF16 shuffle on the high half."""
    b = _u32(bits)
    hi = dst16_from_bf16((b >> np.uint32(16)).astype(np.uint16))
    return (_u32(hi) << np.uint32(16)) | (b & np.uint32(0xFFFF))


def dst32_to_fp32(bits: np.ndarray) -> np.ndarray:
    """Dst32 -> plain FP32 (or sign-magnitude Integer "32")."""
    b = _u32(bits)
    hi = dst16_to_bf16((b >> np.uint32(16)).astype(np.uint16))
    return (_u32(hi) << np.uint32(16)) | (b & np.uint32(0xFFFF))


def src_from_tf32(bits: np.ndarray) -> np.ndarray:
    """TF32 (FP32 bits; the low 13 are ignored) -> 19-bit Src datum (sign, mantissa(10), exponent(8))."""
    x = _u32(bits) >> np.uint32(13)
    return (
        (x & np.uint32(0x40000))
        | ((x & np.uint32(0x3FF)) << np.uint32(8))
        | ((x & np.uint32(0x3FC00)) >> np.uint32(10))
    )


def src_to_tf32(bits: np.ndarray) -> np.ndarray:
    """19-bit Src datum -> TF32 as FP32 bits (low 13 zero). Bits above 18 are ignored."""
    x = _u32(bits)
    t = (
        (x & np.uint32(0x40000))
        | ((x & np.uint32(0xFF)) << np.uint32(10))
        | ((x & np.uint32(0x3FF00)) >> np.uint32(8))
    )
    return t << np.uint32(13)


def src_from_bf16(bits: np.ndarray) -> np.ndarray:
    """Plain BF16 -> Src datum: the TF32 placement with the low 3 mantissa bits zero."""
    return src_from_tf32(bf16_to_fp32(bits))


def src_to_bf16(bits: np.ndarray) -> np.ndarray:
    """Src datum -> plain BF16. The low 3 mantissa bits are discarded, as MOVA2D's RemoveLowMantissa."""
    return (src_to_tf32(bits) >> np.uint32(16)).astype(np.uint16)


def src_from_fp16(bits: np.ndarray) -> np.ndarray:
    """Plain FP16 (or Integer "8" in FP16 order) -> Src datum: exponent in bits 0..4, 5..7 zero."""
    x = _u32(_u16(bits))
    return (
        ((x & np.uint32(0x8000)) << np.uint32(3))
        | ((x & np.uint32(0x03FF)) << np.uint32(8))
        | ((x & np.uint32(0x7C00)) >> np.uint32(10))
    )


def src_to_fp16(bits: np.ndarray) -> np.ndarray:
    """Src datum -> plain FP16 order. Exponent bits 5..7 are ignored, as MOVA2D's RemoveHighExponent."""
    x = _u32(bits)
    f = (
        ((x & np.uint32(0x40000)) >> np.uint32(3))
        | ((x & np.uint32(0x3FF00)) >> np.uint32(8))
        | ((x & np.uint32(0x1F)) << np.uint32(10))
    )
    return f.astype(np.uint16)


def src_from_int16(bits: np.ndarray) -> np.ndarray:
    """Integer "16" (any 16 bits) -> Src datum: high byte moved up by 3, as UNPACR's INT16 case."""
    x = _u32(_u16(bits))
    return ((x & np.uint32(0xFF00)) << np.uint32(3)) | (x & np.uint32(0xFF))


def src_to_int16(bits: np.ndarray) -> np.ndarray:
    """Src datum -> Integer "16"; bits 8..10 are dropped."""
    x = _u32(bits)
    return (((x >> np.uint32(3)) & np.uint32(0xFF00)) | (x & np.uint32(0xFF))).astype(np.uint16)


# ---------------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------------


def int8_from_sm8(bits: np.ndarray, *, unsigned: bool = False) -> np.ndarray:
    """An L1 INT8 (sign-magnitude) or UINT8 byte -> Integer "8" in FP16 order, as UNPACR does.

    The exponent field is 16 when the magnitude is non-zero and 0 otherwise; a signed 0x80 ("minus
    zero") keeps its sign bit.
    """
    x = _u16(_u16(bits) & np.uint16(0xFF))
    sign = np.uint16(0) if unsigned else x & np.uint16(0x80)
    mag = x - sign
    exp = np.where(mag != 0, np.uint16(16 << 10), np.uint16(0))
    return ((sign << np.uint16(8)) | exp | mag).astype(np.uint16)


def int8_to_sm8(bits: np.ndarray) -> np.ndarray:
    """Integer "8" (FP16 order) -> INT8 byte: sign and low 7 magnitude bits (packer Read_raw)."""
    x = _u16(bits)
    return (((x >> np.uint16(8)) & np.uint16(0x80)) | (x & np.uint16(0x7F))).astype(np.uint8)


def int8_to_u8(bits: np.ndarray) -> np.ndarray:
    """Integer "8" (FP16 order) -> UINT8 byte: low 8 magnitude bits (packer Read_raw, unsigned)."""
    return (_u16(bits) & np.uint16(0xFF)).astype(np.uint8)


def int8_from_int(values: np.ndarray) -> np.ndarray:
    """Two's-complement integers in -1023..1023 -> Integer "8" (FP16 order, exponent 16 or 0)."""
    v = np.asarray(values).astype(np.int64)
    if np.any(np.abs(v) > 1023):
        raise ValueError('Integer "8" holds magnitudes up to 1023')
    mag = np.abs(v).astype(np.uint16)
    sign = np.where(v < 0, np.uint16(0x8000), np.uint16(0))
    exp = np.where(mag != 0, np.uint16(16 << 10), np.uint16(0))
    return (sign | exp | mag).astype(np.uint16)


def int8_to_int(bits: np.ndarray) -> np.ndarray:
    """Integer "8" (FP16 order) -> int32 value from sign and 10-bit magnitude; the exponent is ignored."""
    x = _u16(bits)
    mag = (x & np.uint16(0x3FF)).astype(np.int32)
    return np.where(x & np.uint16(0x8000), -mag, mag).astype(np.int32)


def _sm_from_int(values: np.ndarray, width: int) -> np.ndarray:
    # Two's complement -> sign-magnitude clamps the one value with no sign-magnitude twin, -2**(w-1),
    # to -(2**(w-1) - 1), as the documented Dst store path does (BlackholeA0 Dst.md Store16/Store32).
    v = np.asarray(values).astype(np.int64)
    top = (1 << (width - 1)) - 1
    if np.any(v > top) or np.any(v < -(top + 1)):
        raise ValueError(f"value outside int{width}")
    mag = np.minimum(np.abs(v), top)
    return np.where(v < 0, (1 << (width - 1)) | mag, mag).astype(np.uint64)


def _sm_to_int(bits: np.ndarray, width: int) -> np.ndarray:
    x = np.asarray(bits).astype(np.int64)
    mag = x & ((1 << (width - 1)) - 1)
    return np.where(x >> (width - 1) & 1, -mag, mag)  # minus zero reads as zero


def int16_from_int(values: np.ndarray) -> np.ndarray:
    """int16 values -> Integer "16" sign-magnitude (-32768 clamps to -32767). UINT16 needs no conversion:
    Integer "16" is opaque 16-bit data, so uint16 bits are stored as they are."""
    return _sm_from_int(values, 16).astype(np.uint16)


def int16_to_int(bits: np.ndarray) -> np.ndarray:
    """Integer "16" sign-magnitude -> int32 values (minus zero -> 0)."""
    return _sm_to_int(_u16(bits), 16).astype(np.int32)


def int32_from_int(values: np.ndarray) -> np.ndarray:
    """int32 values -> Integer "32" sign-magnitude in plain order (-2**31 clamps to -(2**31-1))."""
    return _sm_from_int(values, 32).astype(np.uint32)


def int32_to_int(bits: np.ndarray) -> np.ndarray:
    """Integer "32" sign-magnitude (plain order) -> int64 values (minus zero -> 0)."""
    return _sm_to_int(_u32(bits), 32)


# ---------------------------------------------------------------------------------------------------
# Debug / test helpers
# ---------------------------------------------------------------------------------------------------


def _fp32_view(b: np.ndarray) -> np.ndarray:
    return _u32(b).view(np.float32)


def _fp16_value_bits(x: np.ndarray) -> np.ndarray:
    # The coprocessor's reading of FP16 (FloatBitPatterns.md, Matrix Unit column): exponent 31 is
    # finite, exponent 0 is (signed) zero.
    f = fp16_to_fp32(x)
    return np.where((f & _EXP32) == 0, f & _SIGN32, f)


_TO_FP32: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "fp32": lambda b: _u32(b),
    "tf32": lambda b: _u32(b) & _TF32_MASK,
    "bf16": bf16_to_fp32,
    "fp16": lambda b: _fp16_value_bits(_u16(b)),
    "dst32_fp32": dst32_to_fp32,
    "dst16_bf16": lambda b: bf16_to_fp32(dst16_to_bf16(b)),
    "dst16_fp16": lambda b: _fp16_value_bits(dst16_to_fp16(b)),
    "src_tf32": src_to_tf32,
    "src_bf16": lambda b: bf16_to_fp32(src_to_bf16(b)),
    "src_fp16": lambda b: _fp16_value_bits(src_to_fp16(b)),
}

_TO_INT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "int8": int8_to_int,
    "dst16_int8": lambda b: int8_to_int(dst16_to_fp16(b)),
    "src_int8": lambda b: int8_to_int(src_to_fp16(b)),
    "int16": int16_to_int,
    "src_int16": lambda b: int16_to_int(src_to_int16(b)),
    "int32": int32_to_int,
    "dst32_int32": lambda b: int32_to_int(dst32_to_fp32(b)),
    "uint8": lambda b: _u16(b) & np.uint16(0xFF),
    "uint16": _u16,
}

FORMATS = tuple(_TO_FP32) + tuple(_TO_INT)


def to_float32(bits: np.ndarray, fmt: str) -> np.ndarray:
    """What ``bits`` in layout ``fmt`` denote, as float32 (debugging and tests only).

    8-bit-exponent formats are widened bit for bit, so they read as IEEE 754 (exponent 255 shows as
    Inf / NaN, although the Matrix Unit reads it as a finite value too large for float32). FP16 formats
    read as the coprocessor reads them: exponent 31 finite, exponent 0 zero. Integer formats give their
    integer value, rounded to float32 where it has more than 24 significant bits. "int8" is Integer "8"
    in FP16 order; "uint8" / "uint16" are the plain L1 bytes / halfwords.
    """
    if fmt in _TO_FP32:
        return _fp32_view(_TO_FP32[fmt](bits))
    if fmt in _TO_INT:
        return _TO_INT[fmt](bits).astype(np.float32)
    raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")


_FROM_FP32: dict[str, Callable[[np.ndarray, Rounding], np.ndarray]] = {
    "fp32": lambda b, r: b.copy(),
    "tf32": fp32_to_tf32,
    "bf16": fp32_to_bf16,
    "fp16": fp32_to_fp16,
    "dst32_fp32": lambda b, r: dst32_from_fp32(b),
    "dst16_bf16": lambda b, r: dst16_from_bf16(fp32_to_bf16(b, r)),
    "dst16_fp16": lambda b, r: dst16_from_fp16(fp32_to_fp16(b, r)),
    "src_tf32": lambda b, r: src_from_tf32(fp32_to_tf32(b, r)),
    "src_bf16": lambda b, r: src_from_bf16(fp32_to_bf16(b, r)),
    "src_fp16": lambda b, r: src_from_fp16(fp32_to_fp16(b, r)),
}

_FROM_INT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "int8": int8_from_int,
    "dst16_int8": lambda v: dst16_from_fp16(int8_from_int(v)),
    "src_int8": lambda v: src_from_fp16(int8_from_int(v)),
    "int16": int16_from_int,
    "src_int16": lambda v: src_from_int16(int16_from_int(v)),
    "int32": int32_from_int,
    "dst32_int32": lambda v: dst32_from_fp32(int32_from_int(v)),
    "uint8": lambda v: np.asarray(v).astype(np.uint8),
    "uint16": lambda v: np.asarray(v).astype(np.uint16),
}


def from_float32(values: np.ndarray, fmt: str, rounding: Rounding = Rounding.TRUNCATE) -> np.ndarray:
    """float32 ``values`` -> raw bits in layout ``fmt`` (debugging and tests only).

    Float formats take the float32 bit pattern through this module's conversions with ``rounding``
    (default truncation, the unpackers' rule; FP16 flushes and saturates as :func:`fp32_to_fp16`).
    Integer formats require integral values in range (ValueError otherwise).
    """
    v = np.asarray(values, dtype=np.float32)
    if fmt in _FROM_FP32:
        return _FROM_FP32[fmt](v.view(np.uint32), rounding)
    if fmt in _FROM_INT:
        ints = v.astype(np.int64)
        if np.any(ints != v):
            raise ValueError(f"{fmt} needs integral values")
        limit = {"uint8": 256, "uint16": 65536}.get(fmt)
        if limit is not None and (np.any(ints < 0) or np.any(ints >= limit)):
            raise ValueError(f"value outside {fmt}")
        return _FROM_INT[fmt](ints)
    raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
