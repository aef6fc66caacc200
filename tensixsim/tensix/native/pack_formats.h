/* The number formats of formats.py the packers use, on plain bit patterns: the Dst16 layouts, the
 * packers' rounding, the FP16 <-> FP32 conversions, the block floats and L1's accumulate
 * (pack_common.h, pack.c, pack_wormhole.c). */
#ifndef TENSIXSIM_NATIVE_PACK_FORMATS_H
#define TENSIXSIM_NATIVE_PACK_FORMATS_H
#include <stdint.h>
#include <string.h>

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

/* ------------------------------------------------------------------------------ block floats */

/* formats._bfp_blocks over one block of 16 datums given as sign, exponent and 7-bit mantissa (the
 * largest exponent shared; each significand shifted to it and rounded to 7 bits, ties away, saturating
 * at 127; exponent 0 as zero; then truncated to `bits` bits; a zero magnitude written as +0), the
 * datums packed as formats.bfp_datum_bytes lays them in L1 (8 / bits a byte, the first in the low
 * bits). Returns the shared exponent. */
static inline uint32_t bfp_block(const uint32_t sign[16], const uint32_t exp[16], const uint32_t man7[16],
                                 uint32_t bits, uint8_t *data)
{
    uint32_t shared = 0, per_byte = 8 / bits;
    for (int i = 0; i < 16; i++)
        shared = exp[i] > shared ? exp[i] : shared;
    memset(data, 0, 16 / per_byte);
    for (uint32_t i = 0; i < 16; i++) {
        uint32_t shift = shared - exp[i] < 9 ? shared - exp[i] : 9;
        uint32_t significand = exp[i] ? 0x80u | man7[i] : 0;
        uint32_t mag = (significand + (1u << shift)) >> (shift + 1);
        mag = (mag < 0x7Fu ? mag : 0x7Fu) >> (8 - bits);
        uint32_t datum = mag ? sign[i] << (bits - 1) | mag : 0;
        data[i / per_byte] |= (uint8_t)(datum << (bits * (i % per_byte)));
    }
    return shared;
}

/* formats.bfp_from_bf16 (`a` 0: plain BF16 datums) or bfp_a_from_fp16 (`a` 1: plain FP16 datums, the
 * mantissa truncated to 7 bits) over `n` datums, a multiple of 16: the datums of `bits` bits to
 * `data` (n * bits / 8 bytes), the shared exponents, one byte a block, to `exps`. */
static inline void bfp_blocks(const uint32_t *datums, uint32_t n, int a, uint32_t bits, uint8_t *data,
                              uint8_t *exps)
{
    for (uint32_t b = 0; b < n / 16; b++) {
        uint32_t sign[16], exp[16], man7[16];
        for (uint32_t i = 0; i < 16; i++) {
            uint32_t x = datums[16 * b + i] & 0xFFFFu;
            sign[i] = x >> 15;
            exp[i] = a ? x >> 10 & 0x1Fu : x >> 7 & 0xFFu;
            man7[i] = a ? (x & 0x3FFu) >> 3 : x & 0x7Fu;
        }
        exps[b] = (uint8_t)bfp_block(sign, exp, man7, bits, data + 2 * bits * b);
    }
}

/* ------------------------------------------------------------------------------ L1 accumulation */

/* formats.accumulate_float on one lane: old + new of plain floats with `exp_bits` / `man_bits` (FP32
 * 8 / 23, BF16 8 / 7, FP16 5 / 10): IEEE addition to nearest even over guard, round and sticky bits,
 * denormal inputs as zero and results below the smallest normal as signed zero; with 8 exponent bits
 * NaN (quiet, sign 0) and infinity as IEEE has them, overflow to infinity; FP16's exponent 31 an
 * ordinary binade, overflow saturating; an exact cancellation +0, -0 + -0 = -0. */
static inline uint32_t accumulate_float(uint32_t a, uint32_t b, uint32_t exp_bits, uint32_t man_bits)
{
    const uint32_t top = exp_bits + man_bits;
    const int64_t max_exp = (1 << exp_bits) - 1;
    const int64_t man_mask = ((int64_t)1 << man_bits) - 1, mag_mask = ((int64_t)1 << top) - 1;
    int64_t sign_a = a >> top & 1, sign_b = b >> top & 1;
    int64_t exp_a = a >> man_bits & max_exp, exp_b = b >> man_bits & max_exp;
    int64_t man_a = a & man_mask, man_b = b & man_mask;
    int64_t mag_a = exp_a ? (a & mag_mask) : 0, mag_b = exp_b ? (b & mag_mask) : 0;
    int swap = mag_b > mag_a;
    int64_t big_s = swap ? sign_b : sign_a, small_s = swap ? sign_a : sign_b;
    int64_t big_e = swap ? exp_b : exp_a, small_e = swap ? exp_a : exp_b;
    int64_t big_m = big_e ? (swap ? man_b : man_a) | (man_mask + 1) : 0;
    int64_t small_m = small_e ? (swap ? man_a : man_b) | (man_mask + 1) : 0;
    int64_t wide_big = big_m << 3, wide_small = small_m << 3;
    int64_t shift = big_e - small_e < man_bits + 5 ? big_e - small_e : man_bits + 5;
    int64_t aligned = (wide_small >> shift) | ((wide_small & (((int64_t)1 << shift) - 1)) != 0);
    int64_t total = big_s == small_s ? wide_big + aligned : wide_big - aligned;
    int64_t exp = big_e;
    if (total >> (man_bits + 4)) { /* a carry into the next binade */
        total = (total >> 1) | (total & 1);
        exp++;
    }
    if (total) { /* normalise a cancellation: the leading one to bit man_bits + 3 */
        int64_t norm = (int64_t)man_bits + 3 - (63 - __builtin_clzll((uint64_t)total));
        total <<= norm;
        exp -= norm;
    }
    int64_t low = total & 7, kept = total >> 3;
    kept += low > 4 || (low == 4 && (kept & 1));
    if (kept >> (man_bits + 1)) {
        kept >>= 1;
        exp++;
    }
    int64_t result;
    if (exp <= 0)
        result = big_s << top; /* underflow: signed zero */
    else if (exp_bits == 8 && exp >= max_exp)
        result = big_s << top | max_exp << man_bits;
    else if (exp_bits != 8 && exp > max_exp)
        result = big_s << top | mag_mask;
    else
        result = big_s << top | exp << man_bits | (kept & man_mask);
    if (!total)
        result = 0;
    if (!mag_a && !mag_b)
        result = (sign_a & sign_b) << top;
    if (exp_bits == 8) {
        int nan_a = exp_a == max_exp && man_a, nan_b = exp_b == max_exp && man_b;
        int inf_a = exp_a == max_exp && !man_a, inf_b = exp_b == max_exp && !man_b;
        if (inf_a)
            result = a;
        else if (inf_b)
            result = b;
        if (nan_a || nan_b || (inf_a && inf_b && sign_a != sign_b))
            result = max_exp << man_bits | (int64_t)1 << (man_bits - 1);
    }
    return (uint32_t)result;
}

/* formats.accumulate_int32: old + new of sign-magnitude Integer "32", the magnitude saturating; a zero
 * sum is +0. */
static inline uint32_t accumulate_int32(uint32_t a, uint32_t b)
{
    int64_t x = (int64_t)(a & MAG32) * (a >> 31 ? -1 : 1) + (int64_t)(b & MAG32) * (b >> 31 ? -1 : 1);
    int64_t top = MAG32;
    x = x > top ? top : x < -top ? -top : x;
    return x < 0 ? SIGN32 | (uint32_t)-x : (uint32_t)x;
}

#endif
