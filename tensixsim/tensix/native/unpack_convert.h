/* The unpackers' format conversion (unpack/convert.py FormatConversion) of one datum, for unpack.c:
 * the plain formats, BFP8 / BFP4 / BFP2 (and their "a" forms) given the datum's shared exponent, and
 * Wormhole's FP8. */
#ifndef TENSIXSIM_NATIVE_UNPACK_CONVERT_H
#define TENSIXSIM_NATIVE_UNPACK_CONVERT_H
#include "ops.h"

/* ------------------------------------------------------------------------------ formats */

static inline int is_wide(uint32_t fmt) /* unpack.convert.WIDE_FORMATS: 32-bit Dst, 4-byte output addresses */
{
    return fmt == UNPACK_FMT_FP32 || fmt == UNPACK_FMT_TF32 || fmt == UNPACK_FMT_INT32;
}

static inline int is_half(uint32_t fmt) /* unpack.convert.HALF_FORMATS: 2-byte output addresses */
{
    return fmt == UNPACK_FMT_FP16 || fmt == UNPACK_FMT_BF16 || fmt == UNPACK_FMT_INT16;
}

static inline int is_bfp(uint32_t fmt) /* unpack.convert.BFP_FORMATS: a shared exponent per 16 datums */
{
    return fmt == UNPACK_FMT_BFP8 || fmt == UNPACK_FMT_BFP8A || fmt == UNPACK_FMT_BFP4 || fmt == UNPACK_FMT_BFP4A
           || fmt == UNPACK_FMT_BFP2 || fmt == UNPACK_FMT_BFP2A;
}

/* The BFP formats whose datums become FP16 (BFP8aToFP16) rather than BF16. */
static inline int is_bfp_a(uint32_t fmt)
{
    return fmt == UNPACK_FMT_BFP8A || fmt == UNPACK_FMT_BFP4A || fmt == UNPACK_FMT_BFP2A;
}

/* Where a BFP datum's bits sit in BFP8's byte (sign, magnitude): BFP4's and BFP2's are its high bits. */
static inline uint32_t bfp_shift(uint32_t fmt)
{
    if (fmt == UNPACK_FMT_BFP4 || fmt == UNPACK_FMT_BFP4A)
        return 4;
    return fmt == UNPACK_FMT_BFP2 || fmt == UNPACK_FMT_BFP2A ? 6 : 0;
}

/* Whether unpack.convert.convert defines the conversion for every datum (the formats handled here). */
static inline int conversion_defined(uint32_t in, uint32_t out, int to_dst)
{
    if (in == UNPACK_FMT_FP32) {
        if (out == UNPACK_FMT_FP32)
            return to_dst; /* FP32 cannot be written to SrcA / SrcB */
        return out == UNPACK_FMT_TF32 || out == UNPACK_FMT_BF16 || out == UNPACK_FMT_FP16;
    }
    if (in != out)
        return 0;
    switch (in) {
    case UNPACK_FMT_TF32:
    case UNPACK_FMT_INT32:
        return to_dst; /* only Dst holds 32-bit datums */
    case UNPACK_FMT_FP16:
    case UNPACK_FMT_BF16:
    case UNPACK_FMT_INT16:
    case UNPACK_FMT_INT8:
    case UNPACK_FMT_BFP8:
    case UNPACK_FMT_BFP8A:
    case UNPACK_FMT_BFP4:
    case UNPACK_FMT_BFP4A:
    case UNPACK_FMT_BFP2:
    case UNPACK_FMT_BFP2A:
        return 1;
    case UNPACK_FMT_FP8:
        return UNPACK_FP8_INPUT; /* Wormhole's e5m2; Blackhole has no model */
    default:
        return 0;
    }
}

static inline uint32_t src_from_tf32(uint32_t b)
{
    uint32_t x = b >> 13;
    return (x & 0x40000u) | ((x & 0x3FFu) << 8) | ((x & 0x3FC00u) >> 10);
}

static inline uint32_t src_from_fp16(uint32_t x)
{
    return ((x & 0x8000u) << 3) | ((x & 0x03FFu) << 8) | ((x & 0x7C00u) >> 10);
}

static inline uint32_t src_from_int16(uint32_t x) { return ((x & 0xFF00u) << 3) | (x & 0xFFu); }

static inline uint32_t dst16_from_bf16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x007Fu) << 8) | ((x & 0x7F80u) >> 7);
}

static inline uint32_t dst16_from_fp16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x03FFu) << 5) | ((x & 0x7C00u) >> 10);
}

static inline uint32_t dst32_from_fp32(uint32_t b) { return (dst16_from_bf16(b >> 16) << 16) | (b & 0xFFFFu); }

/* formats.unpack_fp32_to_bf16: FP32 denormals flush to signed zero, then truncation. */
static inline uint32_t fp32_to_bf16(uint32_t b)
{
    if (!(b & 0x7F800000u))
        b &= 0x80000000u;
    return b >> 16;
}

/* formats.fp32_to_fp16 with truncation: underflow flushes to signed zero, overflow (infinity and NaN
 * included) saturates to the largest pattern. */
static inline uint32_t fp32_to_fp16(uint32_t b)
{
    uint32_t sign = (b >> 16) & 0x8000u;
    int32_t exp = (int32_t)((b >> 23) & 0xFFu) - 112;
    if (exp <= 0)
        return sign;
    if (exp > 31)
        return sign | 0x7FFFu;
    uint32_t mag = (((uint32_t)exp << 23) | (b & 0x7FFFFFu)) >> 13;
    return sign | (mag > 0x7FFFu ? 0x7FFFu : mag);
}

/* formats.int8_from_sm8: a sign-magnitude (or unsigned) byte as Integer "8" in FP16 order. */
static inline uint32_t int8_from_sm8(uint32_t bits, uint32_t is_unsigned)
{
    uint32_t x = bits & 0xFFu;
    uint32_t sign = is_unsigned ? 0 : x & 0x80u;
    uint32_t mag = x - sign;
    return (sign << 8) | (mag ? 16u << 10 : 0) | mag;
}

/* unpack.convert._normalised on BFP8's byte `datum` and its shared exponent: the magnitude shifted up to
 * its leading one (*mag, 0 for a zero magnitude) and the exponent lowered to match (returned). */
static inline uint32_t bfp_normalise(uint32_t datum, uint32_t exp, uint32_t *mag)
{
    uint32_t m = (datum << 1) & 0xFFu;
    uint32_t lz = m ? (uint32_t)__builtin_clz(m) - 24 : 8;
    *mag = (m << lz) & 0xFFu;
    return (exp - lz) & 0xFFu;
}

/* unpack.convert.bfp8_to_bf16 of one datum: a zero magnitude is BF16 0x0000 or 0xFF80. */
static inline uint32_t bfp8_to_bf16(uint32_t datum, uint32_t exp)
{
    uint32_t mag, e = bfp_normalise(datum, exp, &mag), sign = datum >> 7 & 1;
    return mag ? sign << 15 | e << 7 | (mag & 0x7Eu) : sign * 0xFF80u;
}

/* unpack.convert.bfp8a_to_fp16 of one datum; *undefined is set when the page says UndefinedBehaviour
 * (a nonzero datum whose normalised exponent exceeds FP16's five bits). */
static inline uint32_t bfp8a_to_fp16(uint32_t datum, uint32_t exp, int *undefined)
{
    uint32_t mag, e = bfp_normalise(datum, exp, &mag), sign = datum >> 7 & 1;
    if (!mag)
        return sign * 0xFC00u;
    if (e & 0xE0u)
        *undefined = 1;
    return sign << 15 | (e & 0x1Fu) << 10 | (mag & 0x7Eu) << 3;
}

/* unpack.convert.convert for one datum of a conversion conversion_defined accepts; `exp` is a BFP
 * datum's shared exponent. *undefined is set for a BFP*a datum the page leaves undefined. */
static inline uint32_t convert(uint32_t in, uint32_t out, int to_dst, uint32_t is_unsigned, uint32_t bits,
                               uint32_t exp, int *undefined)
{
    uint32_t fmt = in;
    if (is_bfp(in)) {
        bits = (bits << bfp_shift(in)) & 0xFFu;
        if (is_bfp_a(in)) {
            bits = bfp8a_to_fp16(bits, exp, undefined);
            fmt = UNPACK_FMT_FP16;
        } else {
            bits = bfp8_to_bf16(bits, exp);
            fmt = UNPACK_FMT_BF16;
        }
    } else if (in == UNPACK_FMT_FP8) { /* e5m2: the high byte of an FP16 */
        bits <<= 8;
        fmt = UNPACK_FMT_FP16;
    } else if (in == UNPACK_FMT_FP32) {
        if (out == UNPACK_FMT_FP32)
            return dst32_from_fp32(bits);
        if (out == UNPACK_FMT_TF32)
            return to_dst ? dst32_from_fp32(bits) : src_from_tf32(bits);
        if (out == UNPACK_FMT_BF16) {
            bits = fp32_to_bf16(bits);
            fmt = UNPACK_FMT_BF16;
        } else {
            bits = fp32_to_fp16(bits);
            fmt = UNPACK_FMT_FP16;
        }
    } else if (in == UNPACK_FMT_INT8) {
        bits = int8_from_sm8(bits, is_unsigned);
        fmt = UNPACK_FMT_FP16;
    } else if (in == UNPACK_FMT_TF32 || in == UNPACK_FMT_INT32) {
        return dst32_from_fp32(bits);
    }
    if (fmt == UNPACK_FMT_INT16)
        return to_dst ? bits : src_from_int16(bits);
    if (fmt == UNPACK_FMT_BF16)
        return to_dst ? dst16_from_bf16(bits) : src_from_tf32(bits << 16);
    return to_dst ? dst16_from_fp16(bits) : src_from_fp16(bits);
}

#endif
