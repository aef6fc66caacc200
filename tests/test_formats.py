"""tensixsim.tensix.formats against references written independently of it.

References: exact rational arithmetic (fractions.Fraction) for rounding, numpy float16 where Tensix FP16
agrees with IEEE 754 (exponents 1..30), bit strings sliced by hand for the register-file layouts
(tt-isa-documentation SrcASrcB.md / Dst.md layout diagrams), and hand-worked vectors where the hardware
is not IEEE (FloatBitPatterns.md, SFPLOAD ReadFP16, SFPSTORE ToFP16, packer FormatConversion).
"""

from __future__ import annotations

import bisect
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pack_reference import Accumulate as ref_accumulate  # noqa: N813 - the reference keeps page names

from tensixsim.tensix import formats as F  # noqa: N812 - short alias keeps vectors on one line
from tensixsim.tensix.formats import Rounding

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)

# fp32 patterns: uniform, plus the special ones the conversions must get right.
# fmt: off
SPECIAL32 = [
    0x0000_0000, 0x8000_0000,  # +-0
    0x0000_0001, 0x807F_FFFF, 0x0040_0000,  # denormals
    0x7F80_0000, 0xFF80_0000,  # +-Inf
    0x7FC0_0000, 0x7F80_0001, 0xFFFF_FFFF, 0x7F80_8000,  # NaNs (0x7F800001: payload only in low bits)
    0x3F80_8000, 0x3F81_8000, 0xBF80_8000,  # bf16 ties, even and odd
    0x3F80_1000, 0x3F80_3000,  # tf32 ties
    0x7F7F_FFFF, 0x7F7F_8000,  # largest finite; rounding carries to Inf
    0x3880_0000, 0x387F_FFFF, 0x3800_0000,  # 2**-14 (FP16 min normal), just below, 2**-15
    0x477F_E000, 0x4780_0000, 0x47FF_E000, 0x4800_0000,  # 65504, 65536, 131008, 131072
]
# fmt: on
fp32_bits = st.one_of(st.sampled_from(SPECIAL32), st.integers(0, 0xFFFF_FFFF))


# ---------------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------------


def ieee_value(bits: int, exp_bits: int, man_bits: int) -> Fraction | None:
    """Exact value of an IEEE-style pattern, or None for Inf/NaN."""
    sign = -1 if bits >> (exp_bits + man_bits) & 1 else 1
    e = bits >> man_bits & ((1 << exp_bits) - 1)
    m = bits & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if e == (1 << exp_bits) - 1:
        return None
    if e == 0:
        return sign * Fraction(m, 1 << man_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << man_bits)) * Fraction(2) ** (e - bias)


def nearest(v: Fraction, lo: Fraction, hi: Fraction, lo_even: bool, ties: str) -> str:
    """'lo' or 'hi': which of two neighbouring magnitudes v rounds to."""
    dl, dh = v - lo, hi - v
    if dl < dh:
        return "lo"
    if dh < dl:
        return "hi"
    if ties == "away":
        return "hi"
    return "lo" if lo_even else "hi"


def ref_round_8bit_exp(bits: int, keep: int, ties: str) -> int:
    """Round fp32 ``bits`` to an 8-bit-exponent format with ``keep`` mantissa bits (finite input)."""
    drop = 23 - keep
    sign = bits & 0x8000_0000
    mag = bits & 0x7FFF_FFFF
    lo_pat = mag >> drop
    v = abs(ieee_value(bits, 8, 23))
    lo = abs(ieee_value(lo_pat << drop, 8, 23))
    hi_val = ieee_value((lo_pat + 1) << drop, 8, 23) if lo_pat + 1 < (0xFF << keep) else None
    if v == lo:
        return sign | lo_pat << drop
    if hi_val is None:  # between the largest finite and Inf: the next step up is 2**128
        hi_val = Fraction(2) ** 128
    pick = nearest(v, lo, hi_val, lo_pat % 2 == 0, ties)
    return sign | (lo_pat + (pick == "hi")) << drop


def tensix_fp16_value(p: int) -> Fraction:
    """The coprocessor's value of an FP16 pattern (FloatBitPatterns.md, Matrix Unit column)."""
    sign = -1 if p & 0x8000 else 1
    e, m = p >> 10 & 0x1F, p & 0x3FF
    if e == 0:
        return Fraction(0)
    return sign * (1 + Fraction(m, 1024)) * Fraction(2) ** (e - 15)


POS_FP16 = [tensix_fp16_value(p) for p in range(0x0400, 0x8000)]  # sorted, exponents 1..31


def ref_fp32_to_fp16_truncate(bits: int) -> int:
    sign = bits >> 16 & 0x8000
    v = ieee_value(bits, 8, 23)
    if v is None:
        return sign | 0x7FFF
    v = abs(v)
    if v < POS_FP16[0]:
        return sign
    i = bisect.bisect_right(POS_FP16, v) - 1  # largest magnitude <= v: truncation toward zero
    return sign | (0x0400 + i)


def slice_bits(value: int, width: int, fields: list[tuple[int, int]]) -> str:
    s = format(value, f"0{width}b")[::-1]  # s[i] is bit i
    return "".join(s[lo : lo + n][::-1] for lo, n in fields)


def assemble(pieces: list[tuple[str, int]], width: int) -> int:
    """Place bit strings at bit offsets."""
    out = 0
    for text, lo in pieces:
        if text:
            out |= int(text, 2) << lo
    assert out < 1 << width
    return out


# ---------------------------------------------------------------------------------------------------
# BF16 / TF32
# ---------------------------------------------------------------------------------------------------


def test_bf16_widening_is_exact_for_every_pattern():
    wide = F.bf16_to_fp32(ALL16)
    assert np.array_equal(wide, ALL16.astype(np.uint32) * 65536)
    for rounding in Rounding:
        back = F.fp32_to_bf16(wide, rounding)
        nan = ((ALL16 & 0x7F80) == 0x7F80) & ((ALL16 & 0x7F) != 0)
        assert np.array_equal(back[~nan], ALL16[~nan]), rounding
        if rounding is not Rounding.TRUNCATE:
            assert np.array_equal(back[nan], ALL16[nan] | 0x40)  # quietened, sign and payload kept


@settings(max_examples=400, deadline=None)
@given(fp32_bits)
@example(0x3F80_8000)
@example(0x3F81_8000)
@example(0x7F7F_FFFF)
def test_fp32_to_bf16_matches_exact_rounding(bits):
    arr = np.array([bits], dtype=np.uint32)
    assert F.fp32_to_bf16(arr, Rounding.TRUNCATE)[0] == bits >> 16
    if ieee_value(bits, 8, 23) is None:
        return
    assert F.fp32_to_bf16(arr, Rounding.NEAREST_EVEN)[0] == ref_round_8bit_exp(bits, 7, "even") >> 16
    assert F.fp32_to_bf16(arr, Rounding.NEAREST_AWAY)[0] == ref_round_8bit_exp(bits, 7, "away") >> 16


@settings(max_examples=400, deadline=None)
@given(fp32_bits)
def test_fp32_to_tf32_matches_exact_rounding(bits):
    arr = np.array([bits], dtype=np.uint32)
    assert F.fp32_to_tf32(arr)[0] == bits & 0xFFFF_E000
    if ieee_value(bits, 8, 23) is None:
        nan = bits & 0x007F_FFFF != 0
        assert F.fp32_to_tf32(arr, Rounding.NEAREST_EVEN)[0] == (bits & 0xFFFF_E000) | (nan << 22)
        return
    assert F.fp32_to_tf32(arr, Rounding.NEAREST_EVEN)[0] == ref_round_8bit_exp(bits, 10, "even")
    assert F.fp32_to_tf32(arr, Rounding.NEAREST_AWAY)[0] == ref_round_8bit_exp(bits, 10, "away")


def test_truncation_can_turn_nan_into_infinity():
    # Packer FormatConversion: "NaN can become infinity, if that is the outcome of truncating".
    assert F.fp32_to_bf16(np.uint32(0x7F80_0001)) == 0x7F80


@settings(max_examples=400, deadline=None)
@given(fp32_bits)
def test_packer_rounding_flushes_and_rounds_ties_away(bits):
    arr = np.array([bits], dtype=np.uint32)
    got16 = int(F.packer_round_fp32_to_bf16(arr)[0])
    got19 = int(F.packer_round_fp32_to_tf32(arr)[0])
    exp = bits >> 23 & 0xFF
    if exp == 0:  # denormals and both zeros -> +0
        assert (got16, got19) == (0, 0)
    elif exp == 0xFF:  # NaN -> Inf; Inf stays
        inf = (bits & 0x8000_0000) | 0x7F80_0000
        assert (got16, got19) == (inf >> 16, inf)
    else:
        assert got16 == ref_round_8bit_exp(bits, 7, "away") >> 16
        assert got19 == ref_round_8bit_exp(bits, 10, "away")


def test_packer_rounding_hand_vectors():
    cases = {  # fp32 in -> bf16 out
        0x3F80_8000: 0x3F81,  # tie rounds away (RNE would give 0x3F80)
        0xBF80_8000: 0xBF81,
        0x3F80_7FFF: 0x3F80,
        0x8000_0000: 0x0000,  # -0 -> +0
        0x8000_0001: 0x0000,  # denormal flushed
        0x7FC0_0000: 0x7F80,  # NaN -> Inf
        0x7F7F_FFFF: 0x7F80,  # carry out of the largest binade
    }
    got = F.packer_round_fp32_to_bf16(np.array(list(cases), dtype=np.uint32))
    assert [hex(g) for g in got] == [hex(v) for v in cases.values()]


def test_packer_bf16_and_fp16_identity_roundings_only_flush():
    bf = F.packer_round_bf16(ALL16)
    exp8 = (ALL16 >> 7) & 0xFF
    nan = (exp8 == 0xFF) & ((ALL16 & 0x7F) != 0)
    normal = (exp8 != 0) & ~nan
    assert np.array_equal(bf[normal], ALL16[normal])
    assert not bf[exp8 == 0].any()
    assert np.array_equal(bf[nan], (ALL16[nan] & 0x8000) | 0x7F80)
    fp = F.packer_round_fp16(ALL16)
    exp5 = (ALL16 >> 10) & 0x1F
    assert np.array_equal(fp[exp5 != 0], ALL16[exp5 != 0])  # exponent 31 is not special
    assert not fp[exp5 == 0].any()


def test_unpacker_fp32_to_bf16_flushes_denormals_keeping_sign_then_truncates():
    got = F.unpack_fp32_to_bf16(np.array([0x807F_FFFF, 0x0000_0001, 0x3F80_FFFF, 0x7F80_0001], np.uint32))
    assert list(got) == [0x8000, 0x0000, 0x3F80, 0x7F80]


# ---------------------------------------------------------------------------------------------------
# FP16
# ---------------------------------------------------------------------------------------------------


def test_fp16_widening_matches_ieee_where_tensix_agrees_and_doc_elsewhere():
    wide = F.fp16_to_fp32(ALL16)
    ieee = ALL16.view(np.float16).astype(np.float32).view(np.uint32)
    exp5 = (ALL16 >> 10) & 0x1F
    normal = (exp5 >= 1) & (exp5 <= 30)
    assert np.array_equal(wide[normal], ieee[normal])
    # Exponent 31 is an ordinary binade: 2**16 * (1 + m/1024). Hand-worked from FloatBitPatterns.md.
    assert F.fp16_to_fp32(np.uint16(0x7C00)) == 0x4780_0000  # 65536.0
    assert F.fp16_to_fp32(np.uint16(0x7FFF)) == 0x47FF_E000  # 131008.0
    assert F.fp16_to_fp32(np.uint16(0xFFFF)) == 0xC7FF_E000
    # ENABLE_FP16A_INF: only the all-ones pattern becomes infinity.
    assert F.fp16_to_fp32(np.uint16(0x7FFF), max_is_inf=True) == 0x7F80_0000
    assert F.fp16_to_fp32(np.uint16(0xFFFF), max_is_inf=True) == 0xFF80_0000
    assert F.fp16_to_fp32(np.uint16(0x7FFE), max_is_inf=True) == 0x47FF_C000
    # Denormal: mantissa kept under exponent 0 (SFPLOAD ReadFP16), an fp32 denormal.
    assert F.fp16_to_fp32(np.uint16(0x8001)) == 0x8000_2000


def test_fp16_narrowing_round_trips_every_pattern_with_a_nonzero_exponent():
    wide = F.fp16_to_fp32(ALL16)
    exp5 = (ALL16 >> 10) & 0x1F
    for rounding in Rounding:
        back = F.fp32_to_fp16(wide, rounding)
        assert np.array_equal(back[exp5 != 0], ALL16[exp5 != 0]), rounding
        assert np.array_equal(back[exp5 == 0], ALL16[exp5 == 0] & 0x8000), rounding  # flushed, signed


def test_fp16_narrowing_agrees_with_numpy_on_exactly_representable_values():
    exp5 = (ALL16 >> 10) & 0x1F
    pats = ALL16[(exp5 >= 1) & (exp5 <= 30)]
    as32 = pats.view(np.float16).astype(np.float32).view(np.uint32)
    assert np.array_equal(F.fp32_to_fp16(as32), pats)


@settings(max_examples=400, deadline=None)
@given(fp32_bits)
@example(0x387F_FFFF)
@example(0x4800_0000)
@example(0x7FC0_0000)
def test_fp32_to_fp16_is_flush_saturate_truncate(bits):
    got = int(F.fp32_to_fp16(np.array([bits], dtype=np.uint32))[0])
    assert got == ref_fp32_to_fp16_truncate(bits)


def test_fp32_to_fp16_hand_vectors():
    cases = {
        0x3F80_0000: 0x3C00,  # 1.0
        0x3F80_1FFF: 0x3C00,  # truncated, not rounded
        0x477F_E000: 0x7BFF,  # 65504
        0x4780_0000: 0x7C00,  # 65536 is finite on Tensix
        0x4800_0000: 0x7FFF,  # 2**17 saturates
        0x7F80_0000: 0x7FFF,  # +Inf -> largest
        0xFFC0_0000: 0xFFFF,  # NaN -> signed largest
        0x387F_FFFF: 0x0000,  # just below 2**-14 flushes
        0xB880_0000: 0x8400,  # -2**-14 survives
        0x8000_0001: 0x8000,  # denormal -> signed zero
    }
    got = F.fp32_to_fp16(np.array(list(cases), dtype=np.uint32))
    assert [hex(g) for g in got] == [hex(v) for v in cases.values()]
    # Nearest modes: ties away vs even, and a round-up past the top saturates.
    assert F.fp32_to_fp16(np.uint32(0x3F80_1000), Rounding.NEAREST_AWAY) == 0x3C01
    assert F.fp32_to_fp16(np.uint32(0x3F80_1000), Rounding.NEAREST_EVEN) == 0x3C00
    assert F.fp32_to_fp16(np.uint32(0x47FF_F000), Rounding.NEAREST_AWAY) == 0x7FFF


# ---------------------------------------------------------------------------------------------------
# Register-file layouts
# ---------------------------------------------------------------------------------------------------


def test_dst16_bf16_layout_is_sign_mantissa_exponent():
    got = F.dst16_from_bf16(ALL16)
    for x in [0x0000, 0x8000, 0x3F80, 0x3FFF, 0xC0A5, 0x7F80, 0x007F]:
        s, e, m = slice_bits(x, 16, [(15, 1)]), slice_bits(x, 16, [(7, 8)]), slice_bits(x, 16, [(0, 7)])
        assert got[x] == assemble([(s, 15), (m, 8), (e, 0)], 16)
    assert np.array_equal(np.sort(got), ALL16)  # a permutation of bits
    assert np.array_equal(F.dst16_to_bf16(got), ALL16)


def test_dst16_fp16_layout_is_sign_mantissa_exponent():
    got = F.dst16_from_fp16(ALL16)
    for x in [0x0000, 0x8000, 0x3C00, 0x7FFF, 0xC155, 0x03FF, 0x7C00]:
        s, e, m = slice_bits(x, 16, [(15, 1)]), slice_bits(x, 16, [(10, 5)]), slice_bits(x, 16, [(0, 10)])
        assert got[x] == assemble([(s, 15), (m, 5), (e, 0)], 16)
    assert np.array_equal(F.dst16_to_fp16(got), ALL16)


@settings(max_examples=300, deadline=None)
@given(fp32_bits)
def test_dst32_layout_is_sign_manhi_exponent_manlo(bits):
    got = int(F.dst32_from_fp32(np.array([bits], dtype=np.uint32))[0])
    s = slice_bits(bits, 32, [(31, 1)])
    e = slice_bits(bits, 32, [(23, 8)])
    mhi = slice_bits(bits, 32, [(16, 7)])
    mlo = slice_bits(bits, 32, [(0, 16)])
    assert got == assemble([(s, 31), (mhi, 24), (e, 16), (mlo, 0)], 32)
    assert F.dst32_to_fp32(np.array([got], dtype=np.uint32))[0] == bits


@settings(max_examples=300, deadline=None)
@given(fp32_bits)
def test_src_tf32_layout_is_sign_mantissa10_exponent8(bits):
    got = int(F.src_from_tf32(np.array([bits], dtype=np.uint32))[0])
    s = slice_bits(bits, 32, [(31, 1)])
    e = slice_bits(bits, 32, [(23, 8)])
    m = slice_bits(bits, 32, [(13, 10)])
    assert got == assemble([(s, 18), (m, 8), (e, 0)], 19)
    assert F.src_to_tf32(np.array([got], dtype=np.uint32))[0] == bits & 0xFFFF_E000


def test_src_bf16_fp16_int16_layouts_and_round_trips():
    bf = F.src_from_bf16(ALL16)
    fp = F.src_from_fp16(ALL16)
    i16 = F.src_from_int16(ALL16)
    assert not (bf & 0x700).any()  # bits 8..10: the unused low TF32 mantissa bits
    assert not (fp & 0xE0).any()  # bits 5..7: the unused high exponent bits
    assert not (i16 & 0x700).any()
    assert bf.max() < 1 << 19 and fp.max() < 1 << 19
    assert np.array_equal(F.src_to_bf16(bf), ALL16)
    assert np.array_equal(F.src_to_fp16(fp), ALL16)
    assert np.array_equal(F.src_to_int16(i16), ALL16)
    # BF16 in Src is TF32 with a zero low mantissa. Integer "16" takes the same Dst16 -> Src move as
    # Dst16 BF16 (MOVA2D's note on the zero flag relies on that).
    assert np.array_equal(bf, F.src_from_tf32(ALL16.astype(np.uint32) << 16))
    assert np.array_equal(i16, F.src_from_bf16(F.dst16_to_bf16(ALL16)))
    # Hand vectors: 1.0 in each.
    assert F.src_from_bf16(np.uint16(0x3F80)) == 0x7F
    assert F.src_from_fp16(np.uint16(0x3C00)) == 0x0F
    assert F.src_from_fp16(np.uint16(0xBC01)) == (1 << 18) | (1 << 8) | 0x0F


def test_src_readers_ignore_the_bits_their_format_does_not_use():
    assert F.src_to_bf16(np.uint32(0x7F | 0x700)) == 0x3F80  # low TF32 mantissa bits dropped
    assert F.src_to_fp16(np.uint32(0x0F | 0xE0)) == 0x3C00  # high exponent bits dropped


def test_dst_to_src_composition_matches_movd2a_shuffles():
    # MOVD2A's ShuffleBF16 / ShuffleFP16 act directly on Dst16 bits.
    d = ALL16.astype(np.uint32)
    assert np.array_equal(F.src_from_bf16(F.dst16_to_bf16(ALL16)), ((d & 0xFF00) << 3) | (d & 0xFF))
    assert np.array_equal(F.src_from_fp16(F.dst16_to_fp16(ALL16)), ((d & 0xFFE0) << 3) | (d & 0x1F))


# ---------------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------------


def test_int8_from_l1_bytes_every_pattern():
    b = np.arange(256, dtype=np.uint8)
    signed = F.int8_from_sm8(b)
    unsigned = F.int8_from_sm8(b, unsigned=True)
    for x in range(256):
        mag, neg = x & 0x7F, x >> 7
        assert signed[x] == (neg << 15) | ((16 << 10) if mag else 0) | mag
        assert unsigned[x] == ((16 << 10) if x else 0) | x
    assert np.array_equal(F.int8_to_sm8(signed), b)
    assert np.array_equal(F.int8_to_u8(unsigned), b)
    assert np.array_equal(F.int8_to_int(signed), np.where(b >> 7, -(b & 0x7F).astype(int), b & 0x7F))


def test_int8_value_round_trip_and_overlay_on_fp16():
    v = np.arange(-1023, 1024)
    bits = F.int8_from_int(v)
    assert np.array_equal(F.int8_to_int(bits), v)
    assert np.array_equal((bits >> 10) & 0x1F, np.where(v != 0, 16, 0))
    # In Dst16 the exponent field 16 lands in the low five bits (Dst.md Integer "8" diagram).
    d = F.dst16_from_fp16(F.int8_from_int(np.array([5, -5, 0])))
    assert list(d) == [(5 << 5) | 16, 0x8000 | (5 << 5) | 16, 0]
    s = F.src_from_fp16(F.int8_from_int(np.array([-1023])))
    assert s[0] == (1 << 18) | (1023 << 8) | 16
    with pytest.raises(ValueError):
        F.int8_from_int(np.array([1024]))


def test_int16_sign_magnitude_every_pattern():
    vals = F.int16_to_int(ALL16)
    ref = np.where(ALL16 >> 15, -(ALL16 & 0x7FFF).astype(np.int32), ALL16 & 0x7FFF)
    assert np.array_equal(vals, ref)
    v = np.arange(-32767, 32768)
    assert np.array_equal(F.int16_to_int(F.int16_from_int(v)), v)
    assert F.int16_from_int(np.array([-32768]))[0] == 0xFFFF  # clamps to -32767
    assert F.int16_from_int(np.array([-1]))[0] == 0x8001


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1))
def test_int32_sign_magnitude_round_trip(v):
    bits = int(F.int32_from_int(np.array([v]))[0])
    want = v if v >= 0 else 0x8000_0000 | min(-v, 2**31 - 1)
    assert bits == want
    assert F.int32_to_int(np.array([bits], dtype=np.uint32))[0] == max(v, -(2**31 - 1))
    d = F.dst32_from_fp32(np.array([bits], dtype=np.uint32))
    assert F.int32_to_int(F.dst32_to_fp32(d))[0] == max(v, -(2**31 - 1))


def test_int32_minus_zero_reads_as_zero():
    assert F.int32_to_int(np.array([0x8000_0000], dtype=np.uint32))[0] == 0


# ---------------------------------------------------------------------------------------------------
# Debug helpers
# ---------------------------------------------------------------------------------------------------


def test_to_and_from_float32_helpers():
    x = np.array([1.0, -2.5, 0.0, 3.140625], dtype=np.float32)
    for fmt in ["fp32", "tf32", "bf16", "fp16", "dst32_fp32", "dst16_bf16", "dst16_fp16",
                "src_tf32", "src_bf16", "src_fp16"]:  # fmt: skip
        assert np.array_equal(F.to_float32(F.from_float32(x, fmt), fmt), x), fmt
    ints = np.array([-7, 0, 100], dtype=np.float32)
    for fmt in ["int8", "dst16_int8", "src_int8", "int16", "src_int16", "int32", "dst32_int32"]:
        assert np.array_equal(F.to_float32(F.from_float32(ints, fmt), fmt), ints), fmt
    assert np.array_equal(F.to_float32(F.from_float32(np.float32([200.0]), "uint8"), "uint8"), [200.0])
    # FP16 reads as the coprocessor does: exponent 31 finite, exponent 0 zero.
    assert F.to_float32(np.uint16(0x7FFF), "fp16") == np.float32(131008.0)
    assert F.to_float32(np.uint16(0x0001), "fp16") == 0
    # Truncation by default; nearest-even on request.
    third = np.float32(1 / 3)
    assert F.from_float32(third, "bf16") == 0x3EAA
    assert F.from_float32(third, "bf16", Rounding.NEAREST_EVEN) == 0x3EAB
    with pytest.raises(ValueError):
        F.to_float32(np.uint16(0), "fp64")
    with pytest.raises(ValueError):
        F.from_float32(np.float32([0.5]), "int8")


# ---------------------------------------------------------------------------------------------------
# Block floats (packer output)
# ---------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(fp32_bits)
def test_packer_rounding_to_e8m6(bits):
    got = int(F.packer_round_to_e8m6(np.array([bits], dtype=np.uint32))[0])
    exp = bits >> 23 & 0xFF
    if exp == 0:
        assert got == 0
    elif exp == 0xFF:
        assert got == ((bits & 0x8000_0000) | 0x7F80_0000) >> 16
    else:
        assert got == ref_round_8bit_exp(bits, 6, "away") >> 16


def bfp_value(datum: int, exponent: int, bits: int, bias: int) -> Fraction:
    """FloatBitPatterns.md's BFP value tables: Mag / 2**(bits - 2) * 2**(Exp - bias) (sign 1, magnitude
    0 is minus infinity; returned as None)."""
    sign, mag = datum >> (bits - 1), datum & ((1 << (bits - 1)) - 1)
    if mag == 0:
        return None if sign else Fraction(0)
    return (-1 if sign else 1) * Fraction(mag, 1 << (bits - 2)) * Fraction(2) ** (exponent - bias)


def ref_bfp_block(values: list[tuple[int, int, int]], bits: int, bias: int) -> tuple[int, list[int]]:
    """(sign, exponent, 7-bit mantissa) x 16 -> the BFP block: the exponent is the largest; each BFP8
    magnitude is the nearest multiple of 2**(shared - bias - 6) to |value| (ties away, at most 127),
    then truncated to ``bits`` - 1 bits; zero magnitudes are +0."""
    shared = max(e for _, e, _ in values)
    unit = Fraction(2) ** (shared - bias - 6)
    out = []
    for sign, e, m in values:
        v = Fraction(0) if e == 0 else (1 + Fraction(m, 128)) * Fraction(2) ** (e - bias)
        q, r = divmod(v, unit)
        mag8 = min(int(q) + (r >= unit / 2), 127)
        mag = mag8 >> (8 - bits)
        out.append(sign << (bits - 1) | mag if mag else 0)
    return shared, out


block_bf16 = st.lists(
    st.one_of(
        st.integers(0, 0xFFFF),
        st.integers(0x3F00, 0x40FF),  # exponents close together, so small shifts dominate
        st.sampled_from([0, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FFF, 0x3FFF, 0xBF80]),
    ),
    min_size=16,
    max_size=16,
)


@settings(max_examples=200, deadline=None)
@given(block_bf16, st.sampled_from([8, 4, 2]))
def test_bfp_from_bf16_matches_the_value_tables(block, bits):
    shared, datums = F.bfp_from_bf16(np.array(block, np.uint16), bits)
    fields = [(v >> 15, v >> 7 & 0xFF, v & 0x7F) for v in block]
    want_shared, want = ref_bfp_block(fields, bits, 127)
    assert int(shared[0]) == want_shared and datums.tolist() == want


@settings(max_examples=200, deadline=None)
@given(block_bf16, st.sampled_from([8, 4, 2]))
def test_bfp_a_from_fp16_truncates_to_e5m7_then_blocks(block, bits):
    shared, datums = F.bfp_a_from_fp16(np.array(block, np.uint16), bits)
    fields = [(v >> 15, v >> 10 & 0x1F, (v & 0x3FF) >> 3) for v in block]
    want_shared, want = ref_bfp_block(fields, bits, 15)
    assert int(shared[0]) == want_shared and datums.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 0xFE), st.lists(st.integers(0, 0xFF), min_size=16, max_size=16))
def test_bfp8_round_trips_through_the_unpackers_conversion(exponent, signs_and_mantissas):
    """Both directions: BF16 values sharing one exponent with a six-bit mantissa pack to BFP8 exactly
    (nothing to round) and the unpackers' BFP8ToBF16 gives them back."""
    from tensixsim.tensix.unpack.convert import bfp8_to_bf16

    values = [(sm & 0x80) << 8 | exponent << 7 | (sm & 0x7E) for sm in signs_and_mantissas]
    shared, datums = F.bfp_from_bf16(np.array(values, np.uint16))
    assert int(shared[0]) == exponent
    for d, v in zip(datums.tolist(), values, strict=True):
        assert bfp_value(d, exponent, 8, 127) == ieee_value(v, 8, 7)
    back = bfp8_to_bf16(datums, np.full(16, exponent))
    assert back.tolist() == values


def test_bfp_datum_bytes_put_the_first_datum_lowest():
    assert F.bfp_datum_bytes(np.arange(16), 8) == bytes(range(16))
    assert F.bfp_datum_bytes(np.array([1, 2] * 8), 4) == bytes([0x21] * 8)
    assert F.bfp_datum_bytes(np.array([1, 2, 3, 0] * 4), 2) == bytes([0b00111001] * 4)


# ---------------------------------------------------------------------------------------------------
# L1 accumulation
# ---------------------------------------------------------------------------------------------------

ACC_FORMATS = {"fp32": (8, 23), "bf16": (8, 7), "fp16": (5, 10)}


def acc_operands(fmt: str):
    eb, mb = ACC_FORMATS[fmt]
    width = 1 + eb + mb
    top = 1 << (width - 1)
    special = [0, top, 1, top | 1, ((1 << eb) - 1) << mb, (((1 << eb) - 1) << mb) | 1, (1 << (width - 1)) - 1]
    return st.one_of(st.integers(0, (1 << width) - 1), st.sampled_from(special))


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(sorted(ACC_FORMATS)))
def test_l1_float_accumulation_rounds_to_nearest_even(data, fmt):
    a = data.draw(acc_operands(fmt))
    width = 1 + sum(ACC_FORMATS[fmt])
    # often a nearby pattern of either sign, so cancellation, carries and ties happen
    near = st.tuples(st.integers(-300, 300), st.integers(0, 1)).map(
        lambda t: ((a + t[0]) % (1 << width)) ^ (t[1] << (width - 1))
    )
    b = data.draw(st.one_of(acc_operands(fmt), near))
    got = int(F.accumulate_float(np.array([a]), np.array([b]), fmt)[0])
    assert got == ref_accumulate(a, b, fmt), (hex(a), hex(b))


def test_l1_float_accumulation_hand_vectors():
    fp32 = [
        (0x3F800000, 0x3F800000, 0x40000000),  # 1 + 1
        (0x3F800000, 0xBF800000, 0),  # exact cancellation: +0
        (0x80000000, 0x80000000, 0x80000000),  # -0 + -0
        (0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000),  # overflow: infinity
        (0x3F800000, 0x33800000, 0x3F800000),  # 1 + 2**-24: the tie goes to even
        (0x3F800001, 0x33800000, 0x3F800002),
        (0x7F800000, 0xFF800000, 0x7FC00000),  # inf - inf
        (0x00400000, 0x3F800000, 0x3F800000),
    ]  # a denormal reads as zero
    for a, b, want in fp32:
        assert int(F.accumulate_float(np.array([a]), np.array([b]), "fp32")[0]) == want, hex(a)
    assert int(F.accumulate_float(np.array([0x7800]), np.array([0x7800]), "fp16")[0]) == 0x7C00  # exp 31
    assert int(F.accumulate_float(np.array([0x7FFF]), np.array([0x7BFF]), "fp16")[0]) == 0x7FFF  # saturate


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**31) + 1, 2**31 - 1), st.integers(-(2**31) + 1, 2**31 - 1))
def test_l1_int32_accumulation_saturates_sign_magnitude(x, y):
    got = F.accumulate_int32(F.int32_from_int(np.array([x])), F.int32_from_int(np.array([y])))
    assert int(F.int32_to_int(got)[0]) == max(-(2**31) + 1, min(2**31 - 1, x + y))
