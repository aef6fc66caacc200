/* The number formats of formats.py the packers' conversions use, on plain bit patterns: the Dst16
 * layouts, the packers' rounding and the FP16 <-> FP32 conversions (pack_common.h, pack.c,
 * pack_wormhole.c). */
#ifndef TENSIXSIM_NATIVE_PACK_FORMATS_H
#define TENSIXSIM_NATIVE_PACK_FORMATS_H
#include <stdint.h>

#define SIGN32 0x80000000u
#define MAG32 0x7FFFFFFFu
#define EXP32 0x7F800000u
#define MAN32 0x007FFFFFu
#define NEG_INF32 0xFF800000u
#define NEG_INF_BF16 0xFF80u

/* formats.dst16_to_bf16: Dst16 (sign, mantissa 8.., exponent 0..7) -> plain BF16. */
static inline uint32_t dst16_to_bf16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x00FFu) << 7) | ((x & 0x7F00u) >> 8);
}

/* formats.dst16_to_fp16: Dst16 (sign, mantissa 5.., exponent 0..4) -> plain FP16. */
static inline uint32_t dst16_to_fp16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x001Fu) << 10) | ((x & 0x7FE0u) >> 5);
}

/* formats._packer_round_8bit_exp: drop `drop` bits rounding to nearest, ties away (the carry may step
 * the exponent); exponent 0 (zero, denormals) gives +0 and NaN the infinity of its sign. */
static inline uint32_t packer_round(uint32_t b, uint32_t drop)
{
    uint32_t mag = b & MAG32, kept = mag >> drop;
    if ((mag & ((1u << drop) - 1)) >= 1u << (drop - 1))
        kept++;
    if ((b & EXP32) == EXP32 && (b & MAN32))
        return (b & SIGN32) | EXP32;
    if (!(b & EXP32))
        return 0;
    return (b & SIGN32) | (kept << drop);
}

/* formats.fp16_to_fp32 (exponents 1..31 ordinary binades, exponent 0 kept as an FP32 denormal). */
static inline uint32_t fp16_to_fp32(uint32_t x)
{
    uint32_t exp = x >> 10 & 0x1Fu, man = x & 0x3FFu;
    return (x >> 15) << 31 | (exp ? exp + 112 : 0) << 23 | man << 13;
}

/* formats.fp32_to_fp16 with truncation: flush |x| < 2**-14 to signed zero, saturate to 0x7FFF. */
static inline uint32_t fp32_to_fp16(uint32_t b)
{
    uint32_t sign16 = (b >> 16) & 0x8000u;
    int32_t exp = (int32_t)((b & EXP32) >> 23) - 112;
    if (exp <= 0)
        return sign16;
    if (exp > 31)
        return sign16 | 0x7FFFu;
    uint32_t mag = ((uint32_t)exp << 23 | (b & MAN32)) >> 13;
    return sign16 | (mag < 0x7FFFu ? mag : 0x7FFFu);
}

#endif
