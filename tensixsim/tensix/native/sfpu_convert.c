/* The vector unit's conversions: SFPCAST and SFP_STOCH_RND, exactly as tensixsim/tensix/sfpu/convert.py
 * executes them (issued, or scheduled by SFPLOADMACRO: sfpu.h), with the PRNG advanced where their
 * models call AdvancePRNG() (sfpu_advance_prng, sfpu_common.c).
 *
 * Deferred to Python: every operand sfpu/convert.py rejects with UndefinedBehavior (SFPCAST's VC slot
 * beyond 4 bits; SFP_STOCH_RND's RoundingMode bit 2, and a floating-point mode with Imm5 or UseImm5).
 *
 * Wormhole (TSIM_WORMHOLE): SFPCAST has no integer modes, SFP_STOCH_RND's rounding field is one bit
 * (the others defer: UndefinedBehavior in sfpu/wormhole.py).
 */
#include "sfpu.h"
#include "sfpu_float.h"
#include "sfpu_tables.h"

#define MAGNITUDE 0x7FFFFFFFu

/* SFPCAST_IntFloat.md (sfpu.convert._sm32_to_fp32): a sign-magnitude integer to FP32, rounded to
 * nearest or, if `stochastic`, by the lane's AdvancePRNG result `prng`. */
static uint32_t sm32_to_fp32(uint32_t c, int stochastic, uint32_t prng)
{
    uint64_t sign = c & FLOAT_SIGN, mag = c & MAGNITUDE;
    uint64_t lz = clz32((uint32_t)mag);
    uint64_t norm = (mag << lz) & 0xFFFFFFFFu;
    /* The exponent field counts the hidden bit (bit 23 of norm >> 8) once more: 158 - lz. */
    uint64_t d = mag == 0 ? sign : sign + (((157 - lz) << 23) + (norm >> 8));
    int up = stochastic ? (norm & 0xFE) > ((prng >> 9) & 0xFE) : (norm & 0x80) != 0 && (norm & 0x17F) != 0;
    return (uint32_t)(d + (uint64_t)up);
}

int64_t sfpu_sfpcast(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vc = sfpu_vc(v, F_SFPCAST_LREG_SRC_C(word)), vd = sfpu_vd(v, F_SFPCAST_LREG_DEST(word));
    uint32_t mode = F_SFPCAST_INSTR_MOD1(word) & 3;
    if (vc >> 4)
        return NATIVE_DEFER; /* ctx.documented("lreg_src_c", 4) */
#ifdef TSIM_WORMHOLE
    if (mode & 2)
        return NATIVE_DEFER; /* Wormhole's SFPCAST has no integer modes (UndefinedBehavior) */
#endif
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    uint32_t lanes = sfpu_lane_enabled(v) & ~backdoor;
    const uint32_t *c = sfpu_lreg(v, vc);
    uint32_t prng[LANES], result[LANES];
    int stochastic = mode == CONVERT_CAST_RNS;
    if (stochastic)
        sfpu_advance_prng(v, lanes, prng);
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t x = c[lane], negated = 0u - x;
        if (mode == CONVERT_CAST_INT32_SM32)
            result[lane] = x & FLOAT_SIGN ? FLOAT_SIGN | negated : x;
        else if (mode == CONVERT_CAST_INT32_ABS)
            result[lane] = x & FLOAT_SIGN ? negated : x;
        else /* CAST_RNE, CAST_RNS */
            result[lane] = sm32_to_fp32(x, stochastic, stochastic ? prng[lane] : 0);
    }
    if (sfpu_writes_vd(vd))
        sfpu_write_lanes(v, vd, result, lanes);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

/* The 23 fraction bits a rounding compares with (RoundingMode's PRNGBits). */
#define FRACTION 0x7FFFFFu
#define HALF 0x400000u

/* SFPSTOCHRND_FloatFloat.md (sfpu.convert._float_float): keep 10 (FP16A) or 7 (FP16B) mantissa bits. */
static uint32_t float_float(uint32_t x, uint32_t mode, uint32_t bits)
{
    uint32_t exp = (x >> 23) & 0xFF;
    uint32_t low = mode == CONVERT_STOCH_FP32_TO_FP16A ? 0x1FFF : 0xFFFF;
    uint32_t shift = mode == CONVERT_STOCH_FP32_TO_FP16A ? 10 : 7;
    uint64_t discarded = x & low;
    uint64_t rounded = (uint64_t)x - discarded + (discarded >= (bits >> shift) ? low + 1 : 0);
    if (exp == 0)
        return 0;
    if (exp == 0xFF)
        return x & 0xFF800000u;
    return (uint32_t)rounded;
}

/* SFPSTOCHRND_FloatInt.md (sfpu.convert._float_int): FP32 to a bounded sign-magnitude integer. */
static uint32_t float_int(uint32_t c, uint32_t mode, uint32_t bits)
{
    static const uint8_t keep_sign_of[CONVERT_FLOAT_INT_KEEP_SIGN_SIZE] = CONVERT_FLOAT_INT_KEEP_SIGN;
    static const uint32_t top_of[CONVERT_FLOAT_INT_TOP_SIZE] = CONVERT_FLOAT_INT_TOP;
    uint64_t top = top_of[mode % CONVERT_FLOAT_INT_TOP_SIZE];
    uint64_t sign = keep_sign_of[mode % CONVERT_FLOAT_INT_KEEP_SIGN_SIZE] ? c & FLOAT_SIGN : 0;
    int64_t exp = (int64_t)((c >> 23) & 0xFF) - 127;
    uint64_t mag = (FLOAT_MAN + 1u) | (c & FLOAT_MAN);
    if (exp >= 0)
        mag <<= exp > 63 ? 63 : exp;
    else
        mag >>= -exp > 63 ? 63 : -exp;
    mag = (mag >> 23) + ((mag & FRACTION) >= bits);
    if (mag > top)
        mag = top;
    if (exp >= 16) /* |x| >= 2**16, and NaN: the largest magnitude */
        mag = top;
    else if (mag == 0)
        sign = 0;
    if (exp < -1) /* |x| < 0.5: zero, without a sign */
        mag = sign = 0;
    return (uint32_t)(sign + mag);
}

/* SFPSTOCHRND_IntInt.md (sfpu.convert._int_int): shift a sign-magnitude integer right, round, clamp. */
static uint32_t int_int(uint32_t c, uint32_t mode, uint32_t shift, uint32_t bits)
{
    uint64_t sign = c & FLOAT_SIGN;
    uint64_t mag = ((uint64_t)(c & MAGNITUDE) << 23) >> shift;
    mag = (mag >> 23) + ((mag & FRACTION) >= bits);
    if (mode == CONVERT_STOCH_INT32_TO_UINT8) {
        mag = mag < 255 ? mag : 255;
        sign = 0;
    } else {
        mag = mag < 127 ? mag : 127;
        if (mag == 0)
            sign = 0;
    }
    return (uint32_t)(sign + mag);
}

int64_t sfpu_sfp_stoch_rnd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t rounding = F_SFP_STOCH_RND_RND_MODE(word), imm5 = F_SFP_STOCH_RND_IMM8_MATH(word);
    uint32_t vd = sfpu_vd(v, F_SFP_STOCH_RND_LREG_DEST(word)), mod1 = F_SFP_STOCH_RND_INSTR_MOD1(word);
    uint32_t mode = mod1 & 7, use_imm5 = mod1 & CONVERT_STOCH_USE_IMM5;
    int int_to_int = mode == CONVERT_STOCH_INT32_TO_UINT8 || mode == CONVERT_STOCH_INT32_TO_INT8;
#ifdef TSIM_WORMHOLE
    if (rounding >> 1)
        return NATIVE_DEFER; /* one bit: the PRNG or round to nearest (sfpu.wormhole.sfp_stoch_rnd) */
#else
    if (rounding >> 2)
        return NATIVE_DEFER; /* ctx.documented("rnd_mode", 2) */
#endif
    if (!int_to_int && (imm5 || use_imm5))
        return NATIVE_DEFER; /* the floating-point modes fix Imm5 and UseImm5 at 0 */
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    uint32_t lanes = sfpu_lane_enabled(v) & ~backdoor;
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFP_STOCH_RND_LREG_SRC_C(word)));
    const uint32_t *b = sfpu_lreg(v, sfpu_vb(v, F_SFP_STOCH_RND_LREG_SRC_B(word)));
    uint32_t prng[LANES], result[LANES];
    sfpu_advance_prng(v, lanes, prng); /* on every enabled lane, whatever the mode and VD */
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t bits = rounding == CONVERT_RND_NEAREST ? HALF
                        : rounding == CONVERT_RND_ZERO  ? FRACTION
                                                        : prng[lane] & FRACTION; /* 1, 3: stochastic */
        uint32_t shift = use_imm5 ? imm5 : b[lane] & 31;
        if (mode == CONVERT_STOCH_FP32_TO_FP16A || mode == CONVERT_STOCH_FP32_TO_FP16B)
            result[lane] = float_float(c[lane], mode, bits);
        else if (int_to_int)
            result[lane] = int_int(c[lane], mode, shift, bits);
        else
            result[lane] = float_int(c[lane], mode, bits);
    }
    if (sfpu_writes_vd(vd))
        sfpu_write_lanes(v, vd, result, lanes);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}
