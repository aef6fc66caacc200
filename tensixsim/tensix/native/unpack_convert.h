/* The unpackers' format conversion (unpack/convert.py FormatConversion) of one datum, for unpack.c. */
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

static inline int is_bfp(uint32_t fmt) /* unpack.convert.BFP_FORMATS: shared exponents, handled in Python */
{
    return fmt == UNPACK_FMT_BFP8 || fmt == UNPACK_FMT_BFP8A || fmt == UNPACK_FMT_BFP4 || fmt == UNPACK_FMT_BFP4A
           || fmt == UNPACK_FMT_BFP2 || fmt == UNPACK_FMT_BFP2A;
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
        return 1;
    default:
        return 0; /* BFP (shared exponents) and FP8 stay in Python */
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

/* unpack.convert.convert for one datum of a conversion conversion_defined accepts. */
static inline uint32_t convert(uint32_t in, uint32_t out, int to_dst, uint32_t is_unsigned, uint32_t bits)
{
    uint32_t fmt = in;
    if (in == UNPACK_FMT_FP32) {
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
