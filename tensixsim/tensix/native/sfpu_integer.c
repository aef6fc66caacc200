/* The vector unit's integer and bit instructions: SFPAND, SFPOR, SFPXOR, SFPNOT, SFPIADD, SFPSHFT,
 * SFPLZ, SFPABS, SFPEXEXP, SFPEXMAN, SFPSETEXP, SFPSETMAN and SFPSETSGN, exactly as
 * tensixsim/tensix/sfpu/integers.py executes them (issued, or scheduled by SFPLOADMACRO: sfpu.h).
 * Each occupies the vector unit SFPU.issue cycles.
 *
 * Deferred to Python: a set bit beyond a documented operand (ctx.documented).
 *
 * Wormhole (TSIM_WORMHOLE): SFPAND / SFPOR are VD = VD op VC only (under SFPLOADMACRO VB op VC, VB the
 * macro's), SFPSHFT shifts logically only (the other modes defer: UndefinedBehavior in
 * sfpu/wormhole.py).
 */
#include "sfpu.h"

/* Documented operand widths inside imm12_math / instr_mod1 (sfpu/integers.py ctx.documented calls). */
enum { VB_BITS = 4, IMM1_BITS = 1, IMM8_BITS = 8 };
#define SIGN32 0x80000000u
#define EXP32 0x7F800000u
#define MAN32 0x7FFFFFu
#define LOW32 0xFFFFFFFFu

/* SFPIADD, SFPSHFT, SFPLZ, SFPEXEXP Mod1 */
enum { IADD_ARG_IMM = 1, IADD_2SCOMP_LREG_DST = 2, IADD_CC_NONE = 4, IADD_CC_GTE0 = 8 };
enum { SHFT_ARG_IMM = 1, SHFT_ARITHMETIC = 2, SHFT_ARG_IMM_USE_VC = 4 };
enum { LZ_CC_NE0 = 2, LZ_NOSGN_MASK = 4, LZ_CC_COMP = 8 };
enum { EXEXP_NODEBIAS = 1, EXEXP_SET_CC_SGN_EXP = 2, EXEXP_SET_CC_COMP_EXP = 8 };
enum { FP32_BIAS = 127, FP32_MAN_BITS = 23, SETMAN_IMM_SHIFT = 11 };

/* The shared head: operand checks, then the backdoor load (VD 8..15: no lane work). 1 when the caller
 * does the lane work on sfpu_lane_enabled's lanes, 0 done, -1 defer. */
static int head(struct copro_view *v, uint32_t word, uint32_t vd, int64_t cycle, int operands_ok)
{
    (void)cycle;
    if (!operands_ok)
        return -1;
    return sfpu_simple_dest(v, vd, word);
}

#define HEAD(v, word, vd, cycle, ok)                 \
    do {                                             \
        int go_ = head(v, word, vd, cycle, ok);      \
        if (go_ < 0)                                 \
            return NATIVE_DEFER;                     \
        if (go_ == 0)                                \
            return TIMING_SFPU_ISSUE;                \
    } while (0)

enum bitop { AND, OR, XOR };

static int64_t bitwise(struct copro_view *v, uint32_t vb, uint32_t vc, uint32_t vd, enum bitop op)
{
    const uint32_t *b = sfpu_lreg(v, vb), *c = sfpu_lreg(v, vc);
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = op == AND ? b[lane] & c[lane] : op == OR ? b[lane] | c[lane] : b[lane] ^ c[lane];
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

#ifdef TSIM_WORMHOLE
/* Wormhole's SFPAND / SFPOR are VD = VD op VC only: Imm12 and Mod1 are 0 (sfpu.wormhole.sfpand), and
 * under SFPLOADMACRO VB is the macro's (Context.implicit_vb: their Imm12 holds no VB on Wormhole). */
static int64_t and_or(struct copro_view *v, uint32_t word, int64_t cycle, enum bitop op)
{
    uint32_t vd = sfpu_vd(v, F_SFPAND_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !F_SFPAND_IMM12_MATH(word) && !F_SFPAND_INSTR_MOD1(word));
    return bitwise(v, sfpu_implicit_vb(v, vd), sfpu_vc(v, F_SFPAND_LREG_C(word)), vd, op);
}
_Static_assert(F_SFPAND_IMM12_MATH(0xFFFFFFFFu) == F_SFPOR_IMM12_MATH(0xFFFFFFFFu)
                   && F_SFPAND_LREG_C(0x00000F00u) == F_SFPOR_LREG_C(0x00000F00u)
                   && F_SFPAND_LREG_DEST(0x000000F0u) == F_SFPOR_LREG_DEST(0x000000F0u)
                   && F_SFPAND_INSTR_MOD1(0x0000000Fu) == F_SFPOR_INSTR_MOD1(0x0000000Fu),
               "SFPAND and SFPOR share one layout");

int64_t sfpu_sfpand(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return and_or(v, word, cycle, AND);
}

int64_t sfpu_sfpor(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    return and_or(v, word, cycle, OR);
}
#else
int64_t sfpu_sfpand(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t imm = sfpu_vb(v, F_SFPAND_IMM12_MATH(word)), vd = sfpu_vd(v, F_SFPAND_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !(imm >> VB_BITS));
    return bitwise(v, (F_SFPAND_INSTR_MOD1(word) & 1) ? imm : vd, sfpu_vc(v, F_SFPAND_LREG_C(word)), vd, AND);
}

int64_t sfpu_sfpor(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t imm = sfpu_vb(v, F_SFPOR_IMM12_MATH(word)), vd = sfpu_vd(v, F_SFPOR_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !(imm >> VB_BITS));
    return bitwise(v, (F_SFPOR_INSTR_MOD1(word) & 1) ? imm : vd, sfpu_vc(v, F_SFPOR_LREG_C(word)), vd, OR);
}
#endif

int64_t sfpu_sfpxor(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPXOR_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !F_SFPXOR_IMM12_MATH(word) && !F_SFPXOR_INSTR_MOD1(word));
    return bitwise(v, sfpu_implicit_vb(v, vd), sfpu_vc(v, F_SFPXOR_LREG_C(word)), vd, XOR);
}

int64_t sfpu_sfpnot(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPNOT_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !F_SFPNOT_IMM12_MATH(word) && !F_SFPNOT_INSTR_MOD1(word));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPNOT_LREG_C(word)));
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = ~c[lane];
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpiadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPIADD_LREG_DEST(word)), mod1 = F_SFPIADD_INSTR_MOD1(word);
    HEAD(v, word, vd, cycle, 1);
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPIADD_LREG_C(word))), *b = sfpu_lreg(v, sfpu_implicit_vb(v, vd));
    uint32_t imm = (uint32_t)signed12(F_SFPIADD_IMM12_MATH(word));
    uint32_t out[LANES], negative = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        if (mod1 & IADD_ARG_IMM)
            out[lane] = c[lane] + imm;
        else if (mod1 & IADD_2SCOMP_LREG_DST)
            out[lane] = c[lane] - b[lane];
        else
            out[lane] = c[lane] + b[lane];
        negative |= (out[lane] >> 31) << lane;
    }
    uint32_t flags = (mod1 & IADD_CC_NONE) ? sfpu_mask_of(v->lane_flags) : negative;
    sfpu_write_with_flags(v, vd, out, sfpu_lane_enabled(v), flags, (mod1 & IADD_CC_GTE0) != 0);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpshft(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPSHFT_LREG_DEST(word)), vc = sfpu_vc(v, F_SFPSHFT_LREG_C(word)), mod1 = F_SFPSHFT_INSTR_MOD1(word);
#ifdef TSIM_WORMHOLE
    HEAD(v, word, vd, cycle, !(mod1 & (SHFT_ARITHMETIC | SHFT_ARG_IMM_USE_VC))); /* logical shifts only */
#else
    HEAD(v, word, vd, cycle, 1);
#endif
    const uint32_t *x = sfpu_lreg(v, sfpu_implicit_vb(v, vd)), *c = sfpu_lreg(v, vc);
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t value = x[lane];
        int32_t amount = (int32_t)c[lane];
        if (mod1 & SHFT_ARG_IMM) {
            if (mod1 & SHFT_ARG_IMM_USE_VC)
                value = c[lane];
            amount = signed12(F_SFPSHFT_IMM12_MATH(word));
        }
        uint32_t right = (0u - (uint32_t)amount) & 31, left = (uint32_t)amount & 31;
        if (amount >= 0)
            out[lane] = value << left;
        else if (mod1 & SHFT_ARITHMETIC) /* an arithmetic shift of the signed value */
            out[lane] = (value >> 31) ? ~(~value >> right) : value >> right;
        else
            out[lane] = value >> right;
    }
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfplz(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPLZ_LREG_DEST(word)), mod1 = F_SFPLZ_INSTR_MOD1(word);
    HEAD(v, word, vd, cycle, !F_SFPLZ_IMM12_MATH(word));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPLZ_LREG_C(word)));
    uint32_t out[LANES], nonzero = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t x = (mod1 & LZ_NOSGN_MASK) ? c[lane] & ~SIGN32 : c[lane];
        out[lane] = clz32(x);
        nonzero |= (uint32_t)(x != 0) << lane;
    }
    uint32_t flags = (mod1 & LZ_CC_NE0) ? nonzero : sfpu_mask_of(v->lane_flags);
    sfpu_write_with_flags(v, vd, out, sfpu_lane_enabled(v), flags, (mod1 & LZ_CC_COMP) != 0);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpabs(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPABS_LREG_DEST(word)), mod1 = F_SFPABS_INSTR_MOD1(word);
    HEAD(v, word, vd, cycle, !F_SFPABS_IMM12_MATH(word));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPABS_LREG_C(word)));
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t x = c[lane];
        int negative = (x & SIGN32) != 0;
        if (mod1 & 1) /* FP32: clear the sign, but not of a NaN (above -inf) */
            out[lane] = negative && x <= (SIGN32 | EXP32) ? x & ~SIGN32 : x;
        else
            out[lane] = negative ? 0u - x : x;
    }
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpexexp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPEXEXP_LREG_DEST(word)), mod1 = F_SFPEXEXP_INSTR_MOD1(word);
    HEAD(v, word, vd, cycle, !F_SFPEXEXP_IMM12_MATH(word));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPEXEXP_LREG_C(word)));
    uint32_t out[LANES], negative = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        int32_t bias = (mod1 & EXEXP_NODEBIAS) ? 0 : FP32_BIAS;
        int32_t exp = (int32_t)((c[lane] & EXP32) >> FP32_MAN_BITS) - bias;
        out[lane] = (uint32_t)exp;
        negative |= (uint32_t)(exp < 0) << lane;
    }
    uint32_t flags = (mod1 & EXEXP_SET_CC_SGN_EXP) ? negative : sfpu_mask_of(v->lane_flags);
    sfpu_write_with_flags(v, vd, out, sfpu_lane_enabled(v), flags, (mod1 & EXEXP_SET_CC_COMP_EXP) != 0);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpexman(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPEXMAN_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !F_SFPEXMAN_IMM12_MATH(word));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPEXMAN_LREG_C(word)));
    uint32_t hidden = (F_SFPEXMAN_INSTR_MOD1(word) & 1) ? 0 : 1u << FP32_MAN_BITS;
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = (c[lane] & MAN32) + hidden;
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpsetexp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t imm8 = F_SFPSETEXP_IMM12_MATH(word), vd = sfpu_vd(v, F_SFPSETEXP_LREG_DEST(word));
    uint32_t mod1 = F_SFPSETEXP_INSTR_MOD1(word);
    HEAD(v, word, vd, cycle, !(imm8 >> IMM8_BITS));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPSETEXP_LREG_C(word))), *b = sfpu_lreg(v, sfpu_implicit_vb(v, vd));
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t exp = (mod1 & 1) ? imm8 : (mod1 & 2) ? (b[lane] & EXP32) >> FP32_MAN_BITS : b[lane] & 0xFFu;
        out[lane] = (c[lane] & SIGN32) | exp << FP32_MAN_BITS | (c[lane] & MAN32);
    }
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpsetman(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPSETMAN_LREG_DEST(word)), imm12 = F_SFPSETMAN_IMM12_MATH(word);
    HEAD(v, word, vd, cycle, 1);
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPSETMAN_LREG_C(word))), *b = sfpu_lreg(v, sfpu_implicit_vb(v, vd));
    int use_imm = F_SFPSETMAN_INSTR_MOD1(word) & 1;
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = (c[lane] & (SIGN32 | EXP32)) | (use_imm ? imm12 << SETMAN_IMM_SHIFT : b[lane] & MAN32);
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpsetsgn(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t imm1 = F_SFPSETSGN_IMM12_MATH(word), vd = sfpu_vd(v, F_SFPSETSGN_LREG_DEST(word));
    HEAD(v, word, vd, cycle, !(imm1 >> IMM1_BITS));
    const uint32_t *c = sfpu_lreg(v, sfpu_vc(v, F_SFPSETSGN_LREG_C(word))), *b = sfpu_lreg(v, sfpu_implicit_vb(v, vd));
    int use_imm = F_SFPSETSGN_INSTR_MOD1(word) & 1;
    uint32_t out[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++)
        out[lane] = (use_imm ? imm1 << 31 : b[lane] & SIGN32) | (c[lane] & ~SIGN32);
    sfpu_write_lanes(v, vd, out, sfpu_lane_enabled(v));
    return TIMING_SFPU_ISSUE;
}
