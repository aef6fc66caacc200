/* The vector unit's floating-point instructions, exactly as tensixsim/tensix/sfpu/floats.py executes
 * them (issued, or scheduled by SFPLOADMACRO: sfpu.h): the MAD sub-unit (SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI,
 * SFPMUL24, SFPLUT, SFPLUTFP32) with the bookkeeping of its result in flight (mad_ready, mad_seen,
 * mad_wrote), SFPDIVP2, SFPARECIP, SFPGT and SFPLE; and the wait gate's hold for an SFPMAD-family
 * result (sfpu.floats.mad_hold with its table of what each instruction reads, _reads_of).
 *
 * The multiply-add (tsim_sfpu_fma) is sfpu.floats.fma lane by lane: the outcomes that fma computes
 * with numpy masks (a NaN or infinite operand, no product, an exact zero, an overflow) are tested
 * here in the reverse order, as each later mask there overrides the earlier ones.
 * Wormhole's (tsim_sfpu_fma_wormhole) is sfpu.fma.fma_wormhole lane by lane, its masks and np.select's
 * outcomes tested the same way.
 *
 * Deferred to Python: every operand sfpu/floats.py rejects with UndefinedBehavior (SFPMAD's VA beyond
 * 4 bits, SFPLUT's nonzero dest_reg_addr, SFPLUTFP32's bits of no operand, SFPDIVP2's Imm12 beyond
 * 8 bits, SFPARECIP's beyond 4, SFPGT / SFPLE's nonzero Imm12); SFPGT / SFPLE mutating a flag stack
 * deeper than it holds (the Python indexing would fail).
 *
 * Wormhole's library (TSIM_WORMHOLE) runs the MAD family as sfpu/wormhole.py does: its multiply-add
 * (fma_wormhole_bits), no negation (Mod1's NEGATE bits defer: UndefinedBehavior), SFPLUTFP32 without
 * Mod1Mirror (its VD four bits, but SFPLOADMACRO's VD 16), and no automatic stall: the rule for the next
 * cycle is recorded instead (sfpu_hazard.c), by an issued instruction only.
 * SFPMUL24, SFPARECIP, SFPGT, SFPLE and the stall are Blackhole's only.
 */
#include <string.h>

#include "sfpu.h"
#include "sfpu_float.h"
#include "sfpu_tables.h"

/* The LReg operand slots are 4 bits: every VA / VB / VC / VD names an LReg without a check. */
_Static_assert((1u << F_SFPMAD_LREG_DEST_WIDTH) <= LREGS, "a 4-bit VD beyond the LRegs");
_Static_assert(sizeof(float) == sizeof(uint32_t), "FP32 thresholds are read as 32-bit patterns");

enum { EVERY_LREG = 0xFFFF }; /* sfpu.floats._EVERY: LReg[0..15], as the stalling logic names them */
#define EXP_BITS 0xFFu        /* an FP32 exponent field (bits 23..30) */
#define HIDDEN (FLOAT_MAN + 1u)

static inline uint32_t exponent(uint32_t x) { return (x >> 23) & EXP_BITS; }

/* The bits of an FP32 value (the thresholds sfpu.floats._below compares with). */
static inline uint32_t f32_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

/* ------------------------------------------------------------------------------ the multiply-add */

/* sfpu.floats._semi_sticky_shift: v >> amount with the shifted-out bits ORed into bit 0, unless
 * nothing at all remains (amount >= 0). */
static uint64_t semi_sticky_shift(uint64_t v, int64_t amount)
{
    if (amount > 63)
        amount = 63;
    uint64_t out = v >> amount;
    if (out == 0)
        return 0;
    return out | ((out << amount) != v);
}

static int bit_length(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* The operands of x * y + z as both chips' MAD sub-units take them apart (sfpu.fma._Operands):
 * exponents, mantissas with the hidden bit (denormals flushed to zero), z's mantissa with three guard
 * bits, and the product's sign, exponent and mantissa cut to 28 bits (the dropped ones sticky). */
struct fma_operands {
    int64_t xe, ye, ze, pe;
    uint64_t xm, ym, zm, pm;
    uint32_t p_sign, z_sign;
};

static inline struct fma_operands fma_operands(uint32_t x, uint32_t y, uint32_t z)
{
    struct fma_operands o;
    o.xe = exponent(x), o.ye = exponent(y), o.ze = exponent(z);
    o.xm = o.xe ? (x & FLOAT_MAN) | HIDDEN : 0;
    o.ym = o.ye ? (y & FLOAT_MAN) | HIDDEN : 0;
    o.zm = (o.ze ? (z & FLOAT_MAN) | HIDDEN : 0) << 3;
    o.p_sign = (x ^ y) & FLOAT_SIGN, o.z_sign = z & FLOAT_SIGN;
    uint64_t q = o.xm * o.ym; /* below 2**48: cut by 20 bits, the dropped ones sticky */
    o.pm = (q >> 20) | ((q & 0xFFFFFu) != 0);
    o.pe = o.xe + o.ye - 127;
    return o;
}

/* The lanes' multiply-add, inlined into the handlers' lane loops (an exported function is called
 * through the library's PLT); tsim_sfpu_fma below is it for callers outside this file. */
static inline uint32_t fma_bits(uint32_t x, uint32_t y, uint32_t z)
{
    struct fma_operands o = fma_operands(x, y, z);
    int64_t xe = o.xe, ye = o.ye, ze = o.ze, pe = o.pe;
    uint64_t xm = o.xm, ym = o.ym, zm = o.zm, pm = o.pm;
    uint32_t p_sign = o.p_sign, z_sign = o.z_sign;

    int x_special = xe == EXP_BITS, y_special = ye == EXP_BITS, z_special = ze == EXP_BITS;
    if (x_special || y_special || z_special || pe >= (int64_t)EXP_BITS) {
        int nan = (x_special && (xm != HIDDEN || ym == 0)) || (y_special && (ym != HIDDEN || xm == 0))
                  || (z_special && zm != (uint64_t)HIDDEN << 3)
                  || (z_special && (x_special || y_special) && z_sign != p_sign);
        return nan ? FLOAT_CANONICAL_NAN : z_special ? z : p_sign | FLOAT_INF;
    }
    if (pm == 0 || pe < 0) /* no product */
        return zm ? z : z_sign & p_sign;

    int64_t re = pe > ze ? pe : ze;
    uint64_t pa = semi_sticky_shift(pm, re - pe), za = semi_sticky_shift(zm, re - ze);
    uint32_t r_sign = pa >= za ? p_sign : z_sign;
    uint64_t rm = p_sign == z_sign ? pa + za : pa >= za ? pa - za : za - pa; /* below 2**29 */
    if (rm == 0)
        return z_sign & p_sign; /* an exact zero */
    int64_t n = bit_length(rm) - 27; /* normalise to 26 fraction bits: -26 <= n <= 2 */
    re += n;
    if (re >= (int64_t)EXP_BITS)
        return r_sign | FLOAT_INF;
    if (re <= 0)
        n += 1;
    if (n <= 0)
        rm <<= -n;
    else
        rm = (rm >> n) | ((rm & (uint64_t)(n | 1)) != 0);
    uint64_t r = ((uint64_t)(re > 0 ? re : 0) << 23) + ((rm >> 3) & FLOAT_MAN);
#ifdef TSIM_MUTANT_FMA_TIES
    /* A deliberately broken build (tests/test_native_sfpu_b.py shows the comparison catches it):
     * ties round up instead of to even. */
    r += (rm & 7) >= 4;
#else
    r += ((rm & 7) + (r & 1)) > 4; /* to nearest, ties to even */
#endif
    if ((r >> 23) == 0)
        r = 0; /* a denormal result flushes to zero */
    return r_sign | (uint32_t)r;
}

uint32_t tsim_sfpu_fma(uint32_t x, uint32_t y, uint32_t z) { return fma_bits(x, y, z); }

/* Wormhole's multiply-add, sfpu.fma.fma_wormhole lane by lane (the MAD family's handlers in
 * Wormhole's library; tsim_sfpu_fma_wormhole below is it for callers outside this file). fma_wormhole
 * computes every lane through the sum of its terms, picks the first of np.select's outcomes that holds
 * (an exact zero, an overflow, an exponent below 0, a denormal result), then overrides it with two
 * masks, the later one winning: no product in a lane with no NaN, then a special operand (infinite,
 * NaN, or a product overflowing) in one. Here the overrides are tested first, the last one first, then
 * np.select's outcomes in its order. A NaN lane (an invalid operation: the product's sign; else a NaN
 * addend: its sign) starts as FMA_WORMHOLE_NAN and goes on through the sum with its product's exponent
 * capped at 255, or with no product at all, ORing in the bits of the result it would have given; a
 * right normalising shift keeps only bit 0 of rm as sticky (fma_bits ORs in every bit it drops). */
static inline uint32_t fma_wormhole_bits(uint32_t x, uint32_t y, uint32_t z)
{
    struct fma_operands o = fma_operands(x, y, z);
    int64_t xe = o.xe, ye = o.ye, ze = o.ze, pe = o.pe;
    uint64_t xm = o.xm, ym = o.ym, zm = o.zm, pm = o.pm;
    uint32_t p_sign = o.p_sign, z_sign = o.z_sign;

    int x_special = xe == EXP_BITS, y_special = ye == EXP_BITS, z_special = ze == EXP_BITS;
    int product_special = x_special || y_special || pe >= (int64_t)EXP_BITS;
    int z_one = zm == (uint64_t)HIDDEN << 3; /* z's mantissa the hidden bit alone (z_special: infinite) */
    int invalid = (x_special && (xm != HIDDEN || ym == 0)) || (y_special && (ym != HIDDEN || xm == 0))
                  || (z_special && z_one && product_special && z_sign != p_sign);
    int z_nan = z_special && !z_one && !invalid;
    int has_nan = invalid || z_nan;
    uint32_t nan = invalid ? p_sign | FMA_WORMHOLE_NAN : z_nan ? z_sign | FMA_WORMHOLE_NAN : 0;
    if (has_nan && pe > (int64_t)EXP_BITS)
        pe = EXP_BITS;
    int no_product = pm == 0 || pe < 0;

    if ((product_special || z_special) && !has_nan)
        return z_special ? z : p_sign | FLOAT_INF;
    if (no_product) {
        if (!has_nan)
            return zm ? z : 0;
        pm = 0; /* a NaN goes on with no product */
        pe = 0;
    }

    int64_t re = pe > ze ? pe : ze;
    uint64_t pa = semi_sticky_shift(pm, re - pe), za = semi_sticky_shift(zm, re - ze);
    uint32_t r_sign = pa >= za ? p_sign : z_sign;
    uint64_t rm = p_sign == z_sign ? pa + za : pa >= za ? pa - za : za - pa; /* below 2**29 */
    if (rm == 0)
        return nan; /* an exact zero: +0, or the NaN as it started */
    int64_t n = bit_length(rm) - 27; /* normalise to 26 fraction bits: -26 <= n <= 2 */
    re += n;
    if (n <= 0)
        rm <<= -n;
    else
        rm = (rm >> n) | (rm & 1); /* the hardware's sticky step keeps only bit 0 */
    uint64_t r = ((uint64_t)(re > 0 ? re : 0) << 23) + ((rm >> 3) & FLOAT_MAN);
    r += ((rm & 7) + (r & 1)) > 4; /* to nearest, ties to even */
    if (re >= (int64_t)EXP_BITS)
        return has_nan ? nan : r_sign | FLOAT_INF;
    if (re < 0 || (r >> 23) == 0)
        return nan; /* below the normal range, or denormal after rounding: +0 or the NaN */
    return (has_nan ? nan : r_sign) | (uint32_t)r;
}

uint32_t tsim_sfpu_fma_wormhole(uint32_t x, uint32_t y, uint32_t z) { return fma_wormhole_bits(x, y, z); }

/* The chip's multiply-add, and the Mod1 bits it has no meaning for: Wormhole has no negation
 * (sfpu.wormhole._no_negation: UndefinedBehavior, so the handlers defer). */
#ifdef TSIM_WORMHOLE
#define CHIP_FMA fma_wormhole_bits
#define NO_NEGATION(bits) (bits)
#else
#define CHIP_FMA fma_bits
#define NO_NEGATION(bits) 0u
#endif

/* ------------------------------------------------------------------------------ the MAD sub-unit */

/* The lanes a MAD-sub-unit instruction with VD `vd` computes on (sfpu.floats._mad_operands). */
struct mad_lanes {
    uint32_t lanes, backdoor;
};

static struct mad_lanes mad_operands(const struct copro_view *v, uint32_t vd)
{
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    return (struct mad_lanes){sfpu_lane_enabled(v) & ~backdoor, backdoor};
}

/* Each lane's LReg[va], or LReg[LReg[7] & 15] with INDIRECT_VA (sfpu.floats._indirect_va). */
static void indirect_va(const struct copro_view *v, uint32_t va, int indirect, uint32_t out[LANES])
{
    const uint32_t *l7 = sfpu_lreg(v, 7);
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = sfpu_lreg(v, indirect ? l7[lane] & 15 : va)[lane];
}

/* sfpu.floats._mad_result: the backdoor load, `d` to each lane's VD (or LReg[7] & 15 if `indirect`)
 * when below 8 or 16, and for an issued instruction the result in flight (`seen_all`: the stalling
 * logic assumes every LReg is written). */
static int64_t mad_result(struct copro_view *v, uint32_t word, int64_t cycle, uint32_t vd, int indirect,
                          const uint32_t d[LANES], struct mad_lanes m, int seen_all)
{
    sfpu_load_template(v, vd, m.backdoor, word);
    uint32_t wrote = 0; /* bit r: LReg[r] written on some lane */
    if (indirect && vd != 16) {
        uint32_t targets[LANES];
        memcpy(targets, sfpu_lreg(v, 7), sizeof targets);
        for (uint32_t lane = 0; lane < LANES; lane++) {
            uint32_t target = targets[lane] & 15;
            if ((m.lanes >> lane & 1) && target < 8) {
                wrote |= 1u << target;
                sfpu_lreg(v, target)[lane] = d[lane];
            }
        }
    } else if (sfpu_writes_vd(vd) && m.lanes) {
        wrote = 1u << vd;
        sfpu_write_lanes(v, vd, d, m.lanes);
    }
    if (sfpu_scheduled(v))
        return TIMING_SFPU_ISSUE; /* SFPLOADMACRO's scheduled instructions get no automatic stall (SFPMAD.md) */
#ifdef TSIM_WORMHOLE
    /* No stall: the next cycle's instruction must not read what was written (sfpu.wormhole._mad_done). */
    (void)seen_all;
    sfpu_hazard_record(v, cycle, SFPU_HAZARD_MAD_RESULT, wrote, 0);
#else
    for (uint32_t r = 0; r < LREGS; r++) {
        v->mad_seen[r] = seen_all || r == vd;
        v->mad_wrote[r] = wrote >> r & 1;
    }
    v->mad_ready[0] = cycle + TIMING_SFPU_MAD_LATENCY;
#endif
    return TIMING_SFPU_ISSUE;
}

/* SFPMAD, SFPADD, SFPMUL: one encoding (the fields are at the same bits in each). */
_Static_assert(OP_SFPMAD != OP_SFPADD && F_SFPMAD_LREG_SRC_A(0xFFFFFFFFu) == F_SFPADD_LREG_SRC_A(0xFFFFFFFFu)
                   && F_SFPMAD_INSTR_MOD1(0x0000000Fu) == F_SFPMUL_INSTR_MOD1(0x0000000Fu),
               "SFPMAD, SFPADD and SFPMUL share one layout");

static int64_t mad(struct copro_view *v, uint32_t word, int64_t cycle)
{
    uint32_t va = F_SFPMAD_LREG_SRC_A(word), vb = sfpu_vb(v, F_SFPMAD_LREG_SRC_B(word)), vc = sfpu_vc(v, F_SFPMAD_LREG_SRC_C(word));
    uint32_t vd = sfpu_vd(v, F_SFPMAD_LREG_DEST(word)), mod1 = F_SFPMAD_INSTR_MOD1(word);
    if (va >> 4 || mod1 & NO_NEGATION(FLOAT_MAD_NEGATE_VB | FLOAT_MAD_NEGATE_VC))
        return NATIVE_DEFER; /* ctx.documented("lreg_src_a", 4); Wormhole's negation */
    struct mad_lanes m = mad_operands(v, vd);
    uint32_t a[LANES], d[LANES];
    indirect_va(v, va, mod1 & FLOAT_MAD_INDIRECT_VA, a);
    const uint32_t *b = sfpu_lreg(v, vb), *c = sfpu_lreg(v, vc);
    uint32_t b_flip = mod1 & FLOAT_MAD_NEGATE_VB ? FLOAT_SIGN : 0;
    uint32_t c_flip = mod1 & FLOAT_MAD_NEGATE_VC ? FLOAT_SIGN : 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        d[lane] = CHIP_FMA(a[lane], b[lane] ^ b_flip, c[lane] ^ c_flip);
    int indirect = (mod1 & FLOAT_MAD_INDIRECT_VD) != 0;
    return mad_result(v, word, cycle, vd, indirect, d, m, indirect);
}

int64_t sfpu_sfpmad(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return mad(v, word, cycle);
}

int64_t sfpu_sfpadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return mad(v, word, cycle);
}

int64_t sfpu_sfpmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return mad(v, word, cycle);
}

/* SFPADDI (Imm16 * 1.0 + c) and SFPMULI (Imm16 * c + 0.0), c = LReg[VD] (sfpu.floats._immediate). */
_Static_assert(F_SFPADDI_IMM16_MATH(0xFFFFFFFFu) == F_SFPMULI_IMM16_MATH(0xFFFFFFFFu)
                   && F_SFPADDI_LREG_DEST(0x000000F0u) == F_SFPMULI_LREG_DEST(0x000000F0u),
               "SFPADDI and SFPMULI share one layout");

static int64_t immediate(struct copro_view *v, uint32_t word, int64_t cycle, int multiply)
{
    uint32_t vd = sfpu_vd(v, F_SFPADDI_LREG_DEST(word)), mod1 = F_SFPADDI_INSTR_MOD1(word);
    if (mod1 & NO_NEGATION(FLOAT_MAD_NEGATE_VC))
        return NATIVE_DEFER;
    struct mad_lanes m = mad_operands(v, vd);
    uint32_t imm = F_SFPADDI_IMM16_MATH(word) << 16; /* a BF16 */
    uint32_t flip = mod1 & FLOAT_MAD_NEGATE_VC ? FLOAT_SIGN : 0;
    const uint32_t *src = sfpu_lreg(v, sfpu_implicit_vc(v, vd));
    uint32_t d[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t c = src[lane] ^ flip;
        d[lane] = multiply ? CHIP_FMA(imm, c, 0) : CHIP_FMA(imm, FLOAT_ONE, c);
    }
    int indirect = (mod1 & FLOAT_MAD_INDIRECT_VD) != 0;
    return mad_result(v, word, cycle, vd, indirect, d, m, indirect);
}

int64_t sfpu_sfpaddi(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return immediate(v, word, cycle, 0);
}

int64_t sfpu_sfpmuli(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return immediate(v, word, cycle, 1);
}

#ifndef TSIM_WORMHOLE /* SFPMUL24 is Blackhole's only */
/* SFPMUL24.md Mul24ShiftAdd (sfpu.floats._mul24_shift_add): the adder's alignment step. */
static uint32_t mul24_shift_add(uint64_t p, uint32_t z)
{
    uint32_t z_e = exponent(z);
    uint32_t r_e = z_e > 129 ? z_e : 129;
    uint32_t s = (r_e - z_e) & 31;
    uint64_t z_grs = (uint64_t)((z & FLOAT_MAN) | HIDDEN) << 3;
    p >>= (r_e - 129) & 31;
    uint64_t z_m = z_grs >> s;
    uint64_t carry = ((z_m << s) ^ z_grs) > 0xFFFF;
    uint64_t added = (p + z_m + (carry << 16)) & FLOAT_MAN;
    return (uint32_t)(z_e == 0 || z_m == 0 ? p : added);
}

int64_t sfpu_sfpmul24(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t va = F_SFPMUL24_LREG_SRC_A(word), vd = sfpu_vd(v, F_SFPMUL24_LREG_DEST(word));
    uint32_t mod1 = F_SFPMUL24_INSTR_MOD1(word);
    if (va >> 4 || mod1 & NO_NEGATION(FLOAT_MAD_NEGATE_VB | FLOAT_MAD_NEGATE_VC))
        return NATIVE_DEFER; /* ctx.documented("lreg_src_a", 4); Wormhole's negation */
    struct mad_lanes m = mad_operands(v, vd);
    uint32_t a[LANES], d[LANES];
    indirect_va(v, va, mod1 & FLOAT_MUL24_INDIRECT_VA, a);
    const uint32_t *b = sfpu_lreg(v, sfpu_vb(v, F_SFPMUL24_LREG_SRC_B(word)));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPMUL24_LREG_SRC_C(word)));
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint64_t product = (uint64_t)(a[lane] & FLOAT_MAN) * (b[lane] & FLOAT_MAN);
        uint64_t p = mod1 & FLOAT_MUL24_UPPER ? product >> 23 : product & FLOAT_MAN;
        d[lane] = mul24_shift_add(p, c[lane]);
    }
    int indirect = (mod1 & FLOAT_MUL24_INDIRECT_VD) != 0;
    return mad_result(v, word, cycle, vd, indirect, d, m, indirect);
}
#endif

/* SFPLUT.md Lut8ToFp32: sign, 3-bit negated exponent, 4-bit mantissa (0xFF: zero). */
static uint32_t lut8_to_fp32(uint32_t x)
{
    x &= 0xFF;
    if (x == 0xFF)
        return 0;
    return (x >> 7) << 31 | (127 - ((x >> 4) & 7)) << 23 | (x & 0xF) << 19;
}

/* SFPLUTFP32.md Lut16ToFp32: FP16 fields, exponent 0 as a normal, exponent 31 as zero. */
static uint32_t lut16_to_fp32(uint32_t x)
{
    x &= 0xFFFF;
    uint32_t exp = (x >> 10) & 0x1F;
    return (x >> 15) << 31 | (exp == 0x1F ? 0 : 112 + exp) << 23 | (x & 0x3FF) << 13;
}

/* sfpu.floats._below: b < limit for non-negative FP32 bits (NaN compares false, as the bits do). */
static inline int below(uint32_t b, float limit) { return b < f32_bits(limit); }

static inline uint32_t sign_retain(uint32_t d, uint32_t l3, int retain)
{
    return retain ? (d & ~FLOAT_SIGN) | (l3 & FLOAT_SIGN) : d;
}

int64_t sfpu_sfplut(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPLUT_LREG_IND(word)), mod0 = F_SFPLUT_INSTR_MOD0(word);
    if (F_SFPLUT_DEST_REG_ADDR(word))
        return NATIVE_DEFER; /* ctx.documented("dest_reg_addr", 0) */
    struct mad_lanes m = mad_operands(v, vd);
    const uint32_t *l3 = sfpu_lreg(v, 3);
    uint32_t d[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t b = l3[lane] & ~FLOAT_SIGN;
        uint32_t coeffs = sfpu_lreg(v, below(b, 1.0f) ? 0 : below(b, 2.0f) ? 1 : 2)[lane];
        d[lane] = CHIP_FMA(lut8_to_fp32(coeffs >> 8), b, lut8_to_fp32(coeffs));
        d[lane] = sign_retain(d[lane], l3[lane], mod0 & FLOAT_LUT_SGN_RETAIN);
    }
    int indirect = (mod0 & FLOAT_LUT_INDIRECT_VD) != 0;
    return mad_result(v, word, cycle, vd, indirect, d, m, indirect);
}

/* SFPLUTFP32's lreg_dest slot: VD in bits 0..3, Mod1Mirror in bits 12..15, the rest no operand. */
#define LUTFP32_NO_OPERAND 0xF0FF0u
#define LUTFP32_MIRROR_SHIFT 12

int64_t sfpu_sfplutfp32(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t slot = sfpu_vd(v, F_SFPLUTFP32_LREG_DEST(word)), mod1 = F_SFPLUTFP32_INSTR_MOD1(word);
#ifdef TSIM_WORMHOLE
    /* VD is four bits: no Mod1Mirror (Blackhole's); SFPLOADMACRO passes its VD 16 here */
    int scheduled_vd16 = sfpu_scheduled(v) && slot == 16;
    if (slot >> 4 && !scheduled_vd16)
        return NATIVE_DEFER;
    uint32_t vd = scheduled_vd16 ? 16 : slot, mirror = 0;
#else
    if ((slot & LUTFP32_NO_OPERAND))
        return NATIVE_DEFER;
    uint32_t vd = slot & 0xF, mirror = (slot >> LUTFP32_MIRROR_SHIFT) & 0xF;
#endif
    struct mad_lanes m = mad_operands(v, vd);
    const uint32_t *l3 = sfpu_lreg(v, 3);
    int three_entry = (mod1 & FLOAT_LUTFP32_FP16_3ENTRY_TABLE) == FLOAT_LUTFP32_FP16_3ENTRY_TABLE;
    float cut = (mod1 & FLOAT_LUTFP32_FP16_6ENTRY_TABLE2) == FLOAT_LUTFP32_FP16_6ENTRY_TABLE2 ? 4.0f : 3.0f;
    uint32_t d[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t b = l3[lane] & ~FLOAT_SIGN;
        uint32_t i = below(b, 1.0f) ? 0 : below(b, 2.0f) ? 1 : 2;
        uint32_t low = sfpu_lreg(v, i)[lane], high = sfpu_lreg(v, 4 + i)[lane], a, c;
        if (!(mod1 & FLOAT_LUTFP32_FP16_6ENTRY_TABLE1)) {
            a = low;
            c = high;
        } else if (three_entry) {
            a = lut16_to_fp32(low >> 16);
            c = lut16_to_fp32(low);
        } else {
            int upper = below(b, 0.5f)   ? 0
                        : below(b, 1.0f) ? 1
                        : below(b, 1.5f) ? 0
                        : below(b, 2.0f) ? 1
                                         : !below(b, cut);
            uint32_t j = upper ? 16 : 0;
            a = lut16_to_fp32(low >> j);
            c = lut16_to_fp32(high >> j);
        }
        d[lane] = sign_retain(CHIP_FMA(a, b, c), l3[lane], mod1 & FLOAT_LUTFP32_SGN_RETAIN);
    }
    /* The stalling logic reads Mod1Mirror's INDIRECT_VD, not Mod1's (SFPLUTFP32.md). */
    return mad_result(v, word, cycle, vd, (mod1 & FLOAT_LUTFP32_INDIRECT_VD) != 0, d, m,
                      (mirror & FLOAT_LUTFP32_INDIRECT_VD) != 0);
}

/* ------------------------------------------------------------------------------ the simple sub-unit */

int64_t sfpu_sfpdivp2(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t imm8 = F_SFPDIVP2_IMM12_MATH(word), vd = sfpu_vd(v, F_SFPDIVP2_LREG_DEST(word));
    if (imm8 >> 8)
        return NATIVE_DEFER; /* ctx.documented("imm12_math", 8) */
    if (!sfpu_simple_dest(v, vd, word))
        return TIMING_SFPU_ISSUE;
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPDIVP2_LREG_C(word)));
    int add = (F_SFPDIVP2_INSTR_MOD1(word) & FLOAT_DIVP2_ADD) != 0;
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t exp = exponent(c[lane]);
        exp = !add ? imm8 : exp == EXP_BITS ? exp : (exp + imm8) & EXP_BITS;
        out[lane] = (c[lane] & (FLOAT_SIGN | FLOAT_MAN)) | exp << 23;
    }
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

#ifndef TSIM_WORMHOLE /* SFPARECIP, SFPGT, SFPLE and the automatic stall are Blackhole's only */
/* SFPARECIP.md ApproxRecip of non-negative FP32 bits: a 7-bit table on the mantissa's top bits. */
static const uint8_t RECIP_LUT[FLOAT_RECIP_LUT_SIZE] = FLOAT_RECIP_LUT;
_Static_assert(FLOAT_RECIP_LUT_SIZE == 0x80, "ApproxRecip indexes its table with 7 mantissa bits");
static const uint8_t EXP_LUT[FLOAT_EXP_LUT_SIZE] = FLOAT_EXP_LUT;

static uint32_t approx_recip(uint32_t x)
{
    if (x < 0x00800000u)
        return FLOAT_INF;
    if (x < 0x7E800000u)
        return (253 - (x >> 23)) << 23 | (uint32_t)RECIP_LUT[(x >> 16) & 0x7F] << 16;
    return 0;
}

/* SFPARECIP.md ApproxExp of non-negative FP32 bits. */
static uint32_t approx_exp(uint32_t x)
{
    uint32_t low16 = x & 0xFFFF;
    int64_t at = (int64_t)(x >> 16) - 0x3C80;
    at = at < 0 ? 0 : at >= (int64_t)FLOAT_EXP_LUT_SIZE ? (int64_t)FLOAT_EXP_LUT_SIZE - 1 : at;
    uint32_t table = (uint32_t)EXP_LUT[at] << 16;
    if (x < 0x00800000u)
        return FLOAT_ONE;
    if (x < 0x3C800000u)
        return 0x3F810000u | low16;
    if (x < 0x3F320000u)
        return FLOAT_ONE | table | low16;
    if (x < 0x40000000u)
        return 0x40000000u | table | low16;
    return 0x40800000u | low16;
}

int64_t sfpu_sfparecip(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vb = F_SFPARECIP_IMM12_MATH(word), vd = sfpu_vd(v, F_SFPARECIP_LREG_DEST(word));
    uint32_t mod1 = F_SFPARECIP_INSTR_MOD1(word);
    if (vb >> 4)
        return NATIVE_DEFER; /* ctx.documented("imm12_math", 4) */
    if (!sfpu_simple_dest(v, vd, word))
        return TIMING_SFPU_ISSUE;
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPARECIP_LREG_C(word))), *b = sfpu_lreg(v, vb);
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t x = c[lane], sign = x & FLOAT_SIGN, magnitude = x - sign;
        if (mod1 == FLOAT_ARECIP_RECIP)
            out[lane] = sign | approx_recip(magnitude);
        else if (mod1 == FLOAT_ARECIP_COND_RECIP)
            out[lane] = b[lane] >= FLOAT_SIGN ? approx_recip(magnitude) : x;
        else /* ARECIP_EXP, and Mod1 3..15 (the model's default) */
            out[lane] = sign | approx_exp(magnitude);
    }
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

/* SFPGT.md SignMagIsSmaller: c < d as sign-magnitude integers (FP32's total order). */
static int sign_mag_is_smaller(uint32_t c, uint32_t d)
{
    int64_t oc = c >= FLOAT_SIGN ? (int64_t)(FLOAT_SIGN - 1) - c : c;
    int64_t od = d >= FLOAT_SIGN ? (int64_t)(FLOAT_SIGN - 1) - d : d;
    return oc < od;
}

_Static_assert(F_SFPGT_LREG_DEST(0x000000F0u) == F_SFPLE_LREG_DEST(0x000000F0u)
                   && F_SFPGT_IMM12_MATH(0xFFFFFFFFu) == F_SFPLE_IMM12_MATH(0xFFFFFFFFu),
               "SFPGT and SFPLE share one layout");

/* sfpu.floats._compare (VB = VD). */
static int64_t compare(struct copro_view *v, uint32_t word, int64_t cycle, int le)
{
    (void)cycle;
    uint32_t vc = sfpu_vc(v, F_SFPGT_LREG_C(word)), vd = sfpu_vd(v, F_SFPGT_LREG_DEST(word)), mod1 = F_SFPGT_INSTR_MOD1(word);
    if (F_SFPGT_IMM12_MATH(word))
        return NATIVE_DEFER; /* ctx.documented("imm12_math", 0) */
    if (mod1 & FLOAT_CMP_MUTATE_STACK) /* the stack's top is read on every lane */
        for (uint32_t lane = 0; lane < LANES; lane++)
            if (v->stack_depth[lane] > STACK_DEPTH)
                return NATIVE_DEFER;
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    const uint32_t *c = sfpu_lreg(v, vc), *d = sfpu_lreg(v, sfpu_implicit_vb(v, vd));
    uint32_t result = 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        result |= (uint32_t)(sign_mag_is_smaller(c[lane], d[lane]) != le) << lane;
    uint32_t lanes = sfpu_lane_enabled(v) & ~backdoor;
    sfpu_load_template(v, vd, backdoor, word);
    if ((mod1 & FLOAT_CMP_SET_VD) && sfpu_writes_vd(vd)) {
        uint32_t out[LANES];
        for (uint32_t lane = 0; lane < LANES; lane++)
            out[lane] = result >> lane & 1 ? 0xFFFFFFFFu : 0;
        sfpu_write_lanes(v, vd, out, lanes);
    }
    if (mod1 & FLOAT_CMP_SET_CC)
        sfpu_store_mask(v->lane_flags, result, lanes);
    if (mod1 & FLOAT_CMP_MUTATE_STACK) {
        for (uint32_t lane = 0; lane < LANES; lane++) {
            uint32_t depth = v->stack_depth[lane];
            if (depth == 0 || (backdoor >> lane & 1))
                continue;
            uint8_t *flag = &v->flag_stack[((uint64_t)lane * STACK_DEPTH + (depth - 1)) * 2];
            uint8_t r = result >> lane & 1;
            *flag = mod1 & FLOAT_CMP_MUTATE_OR ? (*flag != 0) | r : (*flag != 0) & r;
        }
    }
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpgt(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return compare(v, word, cycle, 0);
}

int64_t sfpu_sfple(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return compare(v, word, cycle, 1);
}

/* ------------------------------------------------------------------------------ the MAD result in flight */

/* What the stalling logic thinks an instruction reads and what it really reads (bit r: LReg[r]). */
struct reads {
    uint32_t seen, really;
};

/* LReg[index] as a set; an operand slot wider than an LReg index (SFPCAST's VC) names none beyond
 * them, as mad_hold counts it (the semantics raise on it). */
static uint32_t reg(uint32_t index)
{
    return index < LREGS ? 1u << index : 0;
}

static int is_sfpu_opcode(uint32_t op)
{
    static const uint32_t bits[SFPU_OPCODE_BITS_SIZE] = SFPU_OPCODE_BITS;
    return op >> 5 < SFPU_OPCODE_BITS_SIZE && (bits[op >> 5] >> (op & 31) & 1);
}

/* sfpu.floats._reads_of (SFPMAD.md's list), for a vector-unit instruction word. The shared slots
 * (lreg_c, lreg_dest, instr_mod1, imm12_math) sit at the same bits in every instruction naming them. */
#define SAME_SLOT(a, b) (a(0xFFFFFFFFu) == b(0xFFFFFFFFu) && a(0x5A5A5A5Au) == b(0x5A5A5A5Au))
_Static_assert(SAME_SLOT(F_SFPDIVP2_LREG_C, F_SFPMOV_LREG_C) && SAME_SLOT(F_SFPDIVP2_LREG_C, F_SFPAND_LREG_C)
                   && SAME_SLOT(F_SFPDIVP2_LREG_DEST, F_SFPADDI_LREG_DEST)
                   && SAME_SLOT(F_SFPDIVP2_LREG_DEST, F_SFPSWAP_LREG_DEST)
                   && SAME_SLOT(F_SFPDIVP2_INSTR_MOD1, F_SFPMAD_INSTR_MOD1)
                   && SAME_SLOT(F_SFPDIVP2_INSTR_MOD1, F_SFPLUTFP32_INSTR_MOD1)
                   && SAME_SLOT(F_SFPDIVP2_IMM12_MATH, F_SFPSHFT2_IMM12_MATH),
               "the vector-unit instructions share their operand slots");
static struct reads reads_of(uint32_t word)
{
    struct reads r = {0, 0};
    uint32_t both = 0;
    uint32_t vc = F_SFPDIVP2_LREG_C(word), vd = F_SFPDIVP2_LREG_DEST(word);
    uint32_t mod1 = F_SFPDIVP2_INSTR_MOD1(word), imm_vb = F_SFPDIVP2_IMM12_MATH(word) & 15;
    switch (OPCODE_OF(word)) {
    case OP_SFPMAD: case OP_SFPADD: case OP_SFPMUL: case OP_SFPMUL24:
        if (mod1 & FLOAT_MAD_INDIRECT_VA)
            return (struct reads){EVERY_LREG, EVERY_LREG};
        both = reg(F_SFPMAD_LREG_SRC_A(word) & 15) | reg(F_SFPMAD_LREG_SRC_B(word))
               | reg(F_SFPMAD_LREG_SRC_C(word)) | (mod1 & FLOAT_MAD_INDIRECT_VD ? reg(7) : 0);
        break;
    case OP_SFPADDI: case OP_SFPMULI:
        both = reg(vd) | (mod1 & FLOAT_MAD_INDIRECT_VD ? reg(7) : 0);
        break;
    case OP_SFPLUT:
        both = reg(0) | reg(1) | reg(2) | reg(3)
               | (F_SFPLUT_INSTR_MOD0(word) & FLOAT_LUT_INDIRECT_VD ? reg(7) : 0);
        break;
    case OP_SFPLUTFP32: {
        uint32_t mirror = F_SFPLUTFP32_LREG_DEST(word) >> LUTFP32_MIRROR_SHIFT;
        r.seen = mirror & FLOAT_LUTFP32_INDIRECT_VD ? EVERY_LREG : EVERY_LREG & ~reg(7);
        r.really = 0x7F | (mod1 & FLOAT_LUTFP32_INDIRECT_VD ? reg(7) : 0); /* LReg[0..6] */
        return r;
    }
    case OP_SFPSTORE:
        both = reg(F_SFPSTORE_LREG_IND(word)); /* its datum */
        break;
    case OP_SFPLOAD: /* LO16_ONLY / HI16_ONLY keep half of VD */
        both = HOLD_LOAD_READS_VD >> F_SFPLOAD_INSTR_MOD0(word) & 1 ? reg(F_SFPLOAD_LREG_IND(word)) : 0;
        break;
    case OP_SFPLOADI: /* the modes that keep half of VD */
        both = HOLD_LOADI_READS_VD >> F_SFPLOADI_INSTR_MOD0(word) & 1 ? reg(F_SFPLOADI_LREG_IND(word)) : 0;
        break;
    case OP_SFPMOV: /* FROM_SPECIAL reads no LReg */
        both = HOLD_MOV_READS_VC >> mod1 & 1 ? reg(vc) : 0;
        break;
    case OP_SFPLZ: case OP_SFPABS: case OP_SFPEXEXP: case OP_SFPEXMAN: case OP_SFPNOT: case OP_SFPDIVP2:
    case OP_SFPSETCC:
        both = reg(vc);
        break;
    case OP_SFPCAST:
        both = reg(F_SFPCAST_LREG_SRC_C(word));
        break;
    case OP_SFPXOR: case OP_SFPGT: case OP_SFPLE:
        both = reg(vc) | reg(vd);
        break;
    case OP_SFPSETEXP: case OP_SFPSETMAN: case OP_SFPSETSGN:
        both = reg(vc) | (HOLD_SET_READS_VD >> mod1 & 1 ? reg(vd) : 0);
        break;
    case OP_SFPARECIP:
        both = reg(vc) | (mod1 == FLOAT_ARECIP_COND_RECIP ? reg(imm_vb) : 0);
        break;
    case OP_SFPAND: case OP_SFPOR: /* the logic ignores USE_VB: it thinks VD is read, never VB */
        r.seen = reg(vc) | reg(vd);
        r.really = reg(vc) | (HOLD_ANDOR_READS_VB >> mod1 & 1 ? reg(imm_vb) : 0)
                   | (HOLD_ANDOR_READS_VD >> mod1 & 1 ? reg(vd) : 0);
        return r;
    case OP_SFPIADD: /* the logic misses the read of VD */
        r.seen = reg(vc);
        r.really = reg(vc) | (HOLD_IADD_READS_VD >> mod1 & 1 ? reg(vd) : 0);
        return r;
    case OP_SFPSHFT: /* the logic misses the read of VD */
        r.seen = HOLD_SHFT_SEES_VC >> mod1 & 1 ? reg(vc) : 0;
        r.really = (HOLD_SHFT_READS_VC >> mod1 & 1 ? reg(vc) : 0)
                   | (HOLD_SHFT_READS_VD >> mod1 & 1 ? reg(vd) : 0);
        return r;
    case OP_SFPCONFIG: /* the logic misses the read of LReg[0] */
        r.really = HOLD_CONFIG_READS_L0 >> mod1 & 1 ? reg(0) : 0;
        return r;
    case OP_SFPSWAP: { /* the comparing modes read on their first cycle, unseen */
        uint32_t pair = reg(F_SFPSWAP_LREG_SRC_C(word)) | reg(vd);
        r.seen = mod1 == LANES_SWAP_SWAP ? pair : 0;
        r.really = pair;
        return r;
    }
    case OP_SFPSHFT2: {
        uint32_t c2 = reg(F_SFPSHFT2_LREG_SRC_C(word)), copy = reg(1) | reg(2) | reg(3);
        switch (mod1) {
        case LANES_SHFT2_COPY4: r.seen = r.really = copy; break;
        case LANES_SHFT2_SUBVEC_CHAINED_COPY4: r.seen = r.really = copy | reg(0); break;
        case LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4: r.really = copy | c2; break;
        case LANES_SHFT2_SUBVEC_SHFLROR1: case LANES_SHFT2_SUBVEC_SHFLSHR1: r.really = c2; break;
        case LANES_SHFT2_SHFT_LREG: r.seen = reg(vd) | c2; r.really = reg(imm_vb) | c2; break;
        case LANES_SHFT2_SHFT_IMM: r.seen = reg(vd); r.really = reg(imm_vb); break;
        default: break;
        }
        return r;
    }
    case OP_SFPTRANSP:
        both = 0xFF; /* LReg[0..7] */
        break;
    case OP_SFP_STOCH_RND:
        both = reg(F_SFP_STOCH_RND_LREG_SRC_C(word))
               | (mod1 & CONVERT_STOCH_USE_IMM5 ? 0 : reg(F_SFP_STOCH_RND_LREG_SRC_B(word)));
        break;
    default:
        break;
    }
    r.seen = r.really = both;
    return r;
}

int tsim_sfpu_mad_hold(struct copro_view *v, uint32_t word, int64_t cycle)
{
    if (!is_sfpu_opcode(OPCODE_OF(word)) || cycle >= v->mad_ready[0])
        return 0;
    struct reads r = reads_of(word);
    uint32_t seen = 0, wrote = 0;
    for (uint32_t i = 0; i < LREGS; i++) {
        seen |= (uint32_t)(v->mad_seen[i] != 0) << i;
        wrote |= (uint32_t)(v->mad_wrote[i] != 0) << i;
    }
    if (r.seen & seen)
        return 1;
    return r.really & wrote ? -1 : 0; /* a read the logic misses: UndefinedBehavior in Python */
}
#endif /* TSIM_WORMHOLE */
