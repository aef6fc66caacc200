/* TRISC1: copy each tile into a Dst half (ELWADD of SrcA and a zeroed SrcB, FP32 Dst), run a vector-unit
 * (SFPU) operation over the half in place, 32 datums per step, then hand the half to the packer.
 *
 *   SFPU_OP 1  relu:        max(x, 0) by lane predication (SFPSETCC, SFPLOADI, SFPENCC); every x with its
 *                           sign bit set (-0 too) becomes +0.
 *   SFPU_OP 2  exp:         e**x = 2**n * 2**f with t = x * log2(e), n = t rounded to nearest (SFP_STOCH_RND
 *                           to a sign-magnitude integer, SFPCAST back to FP32), f = x * log2(e) - n in
 *                           [-0.5, 0.5] (one SFPMAD), 2**f by the degree-7 Taylor polynomial in Horner form
 *                           (seven SFPMADs), n added to the exponent field (SFPCAST to two's complement,
 *                           SFPSHFT by 23, SFPIADD). Lanes with x > 88.5 get +inf and lanes with x < -87
 *                           get +0 (SFPGT under lane predication), so the exponent sum never leaves
 *                           1..254.
 *   SFPU_OP 3  reciprocal:  SFPARECIP's approximation y0 (relative error below 0.0056), then
 *                           SFPU_RECIP_STEPS Newton-Raphson steps y = y * (2 - x * y) (two SFPMADs each)
 *                           on the lanes where 2**-126 <= |x| < 2**126 (exponent tests by SFPEXEXP and
 *                           SFPIADD under lane predication); other lanes keep y0: +-inf for +-0, +-0 for
 *                           |x| >= 2**126.
 *   SFPU_OP 4  affine:      x * SFPU_AFFINE_SCALE + SFPU_AFFINE_BIAS (FP32 bit patterns) scheduled by
 *                           SFPLOADMACRO: each SFPLOADMACRO loads 32 datums into LReg[VD], its MAD
 *                           sub-unit runs the SFPMAD template the next cycle and its store sub-unit
 *                           writes LReg[VD] back two cycles after that. VD rotates over LReg[0..3] so
 *                           that back-to-back macros never share a register still in use.
 *
 * LRegs written once (per kernel): exp keeps c1..c4 in LReg[4..7], c5..c7 in LReg[11..13], log2(e) in
 * LReg[14]; reciprocal keeps 2.0 in LReg[4]; affine keeps the scale in LReg[4], the bias in LReg[5].
 *
 * Wormhole has neither SFPGT nor SFPARECIP, nor SFPMAD's negations or SFPCAST's integer modes, and its
 * vector unit does not hold an instruction that reads an SFPMAD's result on the next cycle (an SFPNOP
 * goes between them). So under SDK_ARCH_WORMHOLE:
 *
 *   exp:         n = t rounded to nearest (ties to even) by adding 1.5 * 2**23 in the first SFPMAD: the
 *                sum's low mantissa bits are n in two's complement, so shifting its bits left by 23 gives
 *                n << 23 directly, and subtracting 1.5 * 2**23 again gives n as FP32; f = x * log2(e) + (-n)
 *                (SFPMOV negates n). The range tests compute x - 88.5 and x + 87 with SFPMAD and test the
 *                sign with SFPSETCC (x > 88.5: >= 0 and != 0; the SFPMAD's zero is +0).
 *   reciprocal:  with x = m * 2**E (m: x with exponent field 127, sign kept, SFPSETEXP), y0 = 0x7EF311C3 - m
 *                as integers (relative error below 0.0506), the same Newton-Raphson steps on m with -m
 *                from SFPMOV, then 1/x = y * 2**-E by writing y's exponent field minus E into it. Working
 *                on m keeps every step normal (0x7EF311C3 - x itself is denormal for x near 2**126).
 *                Lanes with |x| < 2**-126 get +-inf and lanes with |x| >= 2**126 get +-0 (SFPSETEXP /
 *                SFPSETMAN keep x's sign), as SFPARECIP gives on Blackhole. LReg[5] holds the constant.
 */
#include "kernels.h"

#define SFPU_RELU 1
#define SFPU_EXP 2
#define SFPU_RECIP 3
#define SFPU_AFFINE 4

#ifndef SFPU_OP
#define SFPU_OP SFPU_RELU
#endif
#ifndef SFPU_RECIP_STEPS
#define SFPU_RECIP_STEPS 2
#endif
#ifndef SFPU_AFFINE_SCALE
#define SFPU_AFFINE_SCALE 0x3EAAAAABu /* 1/3 */
#endif
#ifndef SFPU_AFFINE_BIAS
#define SFPU_AFFINE_BIAS 0xBF000000u /* -0.5 */
#endif

/* Mod1 / Mod0 values from the instruction pages. */
#define SETCC_LT0 0u
#define ENCC_EI 2u /* UseLaneFlagsForLaneEnable from Imm2 bit 0 */
#define ENCC_RI 8u /* LaneFlags from Imm2 bit 1 (otherwise true) */
#define MAD_NEGATE_VB 1u
#define MAD_NEGATE_VC 2u
#define STOCH_RND_FP32_TO_INT16 7u
#define CAST_SM32_TO_FP32_RNE 0u
#define CAST_INT32_SM32 3u
#define SHFT_ARG_IMM 1u
#define IADD_ARG_IMM 1u
#define IADD_CC_NONE 4u
#define IADD_CC_GTE0 8u
#define GT_SET_CC 1u
#define CONFIG_IMM16_IS_VALUE 1u
#define LOADI_BF16 0u
#define SETCC_NE0 2u
#define SETCC_GTE0 4u
#define MOV_NEGATE 1u
#define IADD_ARG_2SCOMP 2u /* VD = VC - VD */
#define SETEXP_ARG_IMM 1u
#define SETMAN_ARG_IMM 1u
#define EXEXP_NODEBIAS 1u

/* exp: FP32 constants. log2(e), and ln(2)**k / k! for k = 1..7, each rounded to nearest FP32. */
#define EXP_LOG2E 0x3FB8AA3Bu
#define EXP_C1 0x3F317218u
#define EXP_C2 0x3E75FDF0u
#define EXP_C3 0x3D635847u
#define EXP_C4 0x3C1D955Bu
#define EXP_C5 0x3AAEC3FFu
#define EXP_C6 0x39218489u
#define EXP_C7 0x377FE5FEu
#define EXP_HIGH_BF16 0x42B1u /* 88.5: e**88.5 is below the largest FP32, e**89 above it */
#define EXP_LOW_BF16 0xC2AEu  /* -87.0: n >= -126 and 2**f >= 1.4 there, so the exponent stays >= 1 */
#define EXP_ROUND_BF16 0x4B40u /* 1.5 * 2**23 (Wormhole) */
#define RECIP_Y0 0x7EF311C3u   /* Wormhole's first approximation: RECIP_Y0 - x as integers */

/* affine: SFPLOADMACRO configuration of macro 0. Sequence bytes (Simple, MAD, Round, Store): MAD runs
   InstructionTemplate[0] (selector 4) with VB replaced by the macro's VD (bit 7) at delay 0; Store runs
   SFPSTORE (selector 3) of LReg[VD] at delay 2, one cycle clear of the SFPMAD's two-cycle latency.
   Misc: StoreMod0 FP32, delays counted in cycles. */
#define AFFINE_SEQUENCE ((((2u << 3) | 3u) << 24) | ((0x80u | 4u) << 8))
#define AFFINE_MISC TK_SFPU_FP32

static void sfpu_init(void)
{
#if SFPU_OP == SFPU_EXP
    TK_SFPU_LOADI32(4, EXP_C1);
    TK_SFPU_LOADI32(5, EXP_C2);
    TK_SFPU_LOADI32(6, EXP_C3);
    TK_SFPU_LOADI32(7, EXP_C4);
    TK_SFPU_CONFIG_LREG(11, EXP_C5);
    TK_SFPU_CONFIG_LREG(12, EXP_C6);
    TK_SFPU_CONFIG_LREG(13, EXP_C7);
    TK_SFPU_CONFIG_LREG(14, EXP_LOG2E);
#elif SFPU_OP == SFPU_RECIP
    TTI_SFPLOADI(4, LOADI_BF16, 0x4000u); /* 2.0 */
#if defined(SDK_ARCH_WORMHOLE)
    TK_SFPU_LOADI32(5, RECIP_Y0);
#endif
#elif SFPU_OP == SFPU_AFFINE
    TK_SFPU_LOADI32(4, SFPU_AFFINE_SCALE);
    TK_SFPU_LOADI32(5, SFPU_AFFINE_BIAS);
    /* VD 12 with LaneConfig.DISABLE_BACKDOOR_LOAD clear (its reset value): the SFPMAD's own bits go to
       InstructionTemplate[0] instead of executing. VA LReg[4], VC LReg[5]; VB and VD come from the macro. */
    TTI_SFPMAD(4, 0, 5, 12, 0);
    TK_SFPU_LOADI32(0, AFFINE_SEQUENCE);
    TTI_SFPCONFIG(0, 4, 0); /* Sequence[0] from LReg[0] */
    TTI_SFPCONFIG(AFFINE_MISC, 8, CONFIG_IMM16_IS_VALUE);
#endif
}

#if SFPU_OP == SFPU_RELU
#define SFPU_TILE_BEGIN() TTI_SFPENCC(1, 0, 0, ENCC_EI) /* predicate on LaneFlags, all true */
#define SFPU_TILE_END() TTI_SFPENCC(0, 0, 0, ENCC_EI)   /* back to every lane */
#define SFPU_STEP()                                                              \
    do {                                                                         \
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);                      \
        TTI_SFPSETCC(0, 0, 0, SETCC_LT0);       /* lanes whose sign bit is set */ \
        TTI_SFPLOADI(0, LOADI_BF16, 0);         /* ... become +0 */              \
        TTI_SFPENCC(0, 0, 0, 0);                /* every lane enabled again */   \
        TTI_SFPSTORE(0, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);                     \
    } while (0)

#elif SFPU_OP == SFPU_EXP && defined(SDK_ARCH_WORMHOLE)
#define SFPU_TILE_BEGIN() ((void)0)
#define SFPU_TILE_END() ((void)0)
#define HORNER(acc, coeff)                                                                    \
    do {                                                                                      \
        TTI_SFPMAD(acc, 3, coeff, 1, 0);                                                      \
        TTI_SFPNOP;                                                                           \
    } while (0)
#define SFPU_STEP()                                                                           \
    do {                                                                                      \
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);                  /* L0 = x */     \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_ROUND_BF16);                                          \
        TTI_SFPMAD(0, 14, 2, 1, 0);                            /* L1 = t + 1.5 * 2**23 */     \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_ROUND_BF16 | 0x8000u);                                \
        TTI_SFPMAD(1, TK_LREG_ONE, 2, 3, 0);                                 /* L3 = n */     \
        TTI_SFPMOV(0, 1, 2, 0);                                                               \
        TTI_SFPSHFT(23, 0, 2, SHFT_ARG_IMM);                                 /* n << 23 */    \
        TTI_SFPMOV(0, 3, 3, MOV_NEGATE);                                     /* L3 = -n */    \
        TTI_SFPMAD(0, 14, 3, 3, 0);                                          /* L3 = f */     \
        TTI_SFPNOP;                                                                           \
        HORNER(13, 12);                                                      /* Horner */     \
        HORNER(1, 11);                                                                        \
        HORNER(1, 7);                                                                         \
        HORNER(1, 6);                                                                         \
        HORNER(1, 5);                                                                         \
        HORNER(1, 4);                                                                         \
        HORNER(1, TK_LREG_ONE);                                              /* L1 = 2**f */  \
        TTI_SFPIADD(0, 2, 1, IADD_CC_NONE);                                  /* 2**n * 2**f */ \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                              \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_HIGH_BF16 | 0x8000u);                                 \
        TTI_SFPMAD(0, TK_LREG_ONE, 2, 2, 0);                                 /* x - 88.5 */   \
        TTI_SFPNOP;                                                                           \
        TTI_SFPSETCC(0, 2, 0, SETCC_GTE0);                                                    \
        TTI_SFPSETCC(0, 2, 0, SETCC_NE0);                                    /* x > 88.5 */   \
        TTI_SFPLOADI(1, LOADI_BF16, 0x7F80u);                                /* +inf */       \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                              \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_LOW_BF16 & 0x7FFFu);                                  \
        TTI_SFPMAD(0, TK_LREG_ONE, 2, 2, 0);                                 /* x + 87 */     \
        TTI_SFPNOP;                                                                           \
        TTI_SFPSETCC(0, 2, 0, SETCC_LT0);                                    /* x < -87 */    \
        TTI_SFPLOADI(1, LOADI_BF16, 0);                                      /* +0 */         \
        TTI_SFPENCC(0, 0, 0, ENCC_EI);                                                        \
        TTI_SFPSTORE(1, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);                                  \
    } while (0)

#elif SFPU_OP == SFPU_EXP
#define SFPU_TILE_BEGIN() ((void)0)
#define SFPU_TILE_END() ((void)0)
#define SFPU_STEP()                                                                          \
    do {                                                                                     \
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);                  /* L0 = x */     \
        TTI_SFPMAD(0, 14, TK_LREG_ZERO, 1, 0);                               /* L1 = t */     \
        TTI_SFP_STOCH_RND(0, 0, 1, 1, 2, STOCH_RND_FP32_TO_INT16);           /* L2 = n (sm) */ \
        TTI_SFPCAST(2, 3, CAST_SM32_TO_FP32_RNE);                            /* L3 = n */     \
        TTI_SFPMAD(0, 14, 3, 3, MAD_NEGATE_VC);                              /* L3 = f */     \
        TTI_SFPMAD(13, 3, 12, 1, 0);                                         /* Horner */     \
        TTI_SFPMAD(1, 3, 11, 1, 0);                                                           \
        TTI_SFPMAD(1, 3, 7, 1, 0);                                                            \
        TTI_SFPMAD(1, 3, 6, 1, 0);                                                            \
        TTI_SFPMAD(1, 3, 5, 1, 0);                                                            \
        TTI_SFPMAD(1, 3, 4, 1, 0);                                                            \
        TTI_SFPMAD(1, 3, TK_LREG_ONE, 1, 0);                                 /* L1 = 2**f */  \
        TTI_SFPCAST(2, 2, CAST_INT32_SM32);                                  /* L2 = n */     \
        TTI_SFPSHFT(23, 0, 2, SHFT_ARG_IMM);                                 /* n << 23 */    \
        TTI_SFPIADD(0, 2, 1, IADD_CC_NONE);                                  /* 2**n * 2**f */ \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                              \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_HIGH_BF16);                                           \
        TTI_SFPGT(0, 2, 0, GT_SET_CC);                                       /* x > 88.5 */   \
        TTI_SFPLOADI(1, LOADI_BF16, 0x7F80u);                                /* +inf */       \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                              \
        TTI_SFPLOADI(2, LOADI_BF16, EXP_LOW_BF16);                                            \
        TTI_SFPGT(0, 0, 2, GT_SET_CC);                                       /* x < -87 */    \
        TTI_SFPLOADI(1, LOADI_BF16, 0);                                      /* +0 */         \
        TTI_SFPENCC(0, 0, 0, ENCC_EI);                                                        \
        TTI_SFPSTORE(1, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);                                  \
    } while (0)

#elif SFPU_OP == SFPU_RECIP
#define SFPU_TILE_BEGIN() ((void)0)
#define SFPU_TILE_END() ((void)0)
/* One Newton-Raphson step: L2 = 2 - x * y, L1 = y * L2 (Wormhole: L7 = -m * y + 2 from L6 = -m, L2
   keeping the exponent, and an SFPNOP after each SFPMAD, whose result the next one reads). */
#if defined(SDK_ARCH_WORMHOLE)
#define RECIP_NEWTON()                                                           \
    do {                                                                         \
        TTI_SFPMAD(6, 1, 4, 7, 0);                                               \
        TTI_SFPNOP;                                                              \
        TTI_SFPMAD(1, 7, TK_LREG_ZERO, 1, 0);                                    \
        TTI_SFPNOP;                                                              \
    } while (0)
#else
#define RECIP_NEWTON()                                                           \
    do {                                                                         \
        TTI_SFPMAD(0, 1, 4, 2, MAD_NEGATE_VB);                                   \
        TTI_SFPMAD(1, 2, TK_LREG_ZERO, 1, 0);                                    \
    } while (0)
#endif
#if SFPU_RECIP_STEPS == 1
#define RECIP_STEPS() RECIP_NEWTON()
#elif SFPU_RECIP_STEPS == 2
#define RECIP_STEPS()                                                            \
    do {                                                                         \
        RECIP_NEWTON();                                                          \
        RECIP_NEWTON();                                                          \
    } while (0)
#else
#error "SFPU_RECIP_STEPS must be 1 or 2"
#endif
#if defined(SDK_ARCH_WORMHOLE)
#define SFPU_STEP()                                                                       \
    do {                                                                                  \
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);            /* L0 = x */        \
        TTI_SFPEXEXP(0, 0, 2, 0);                                      /* L2 = exponent */ \
        TTI_SFPSETEXP(127, 0, 3, SETEXP_ARG_IMM);                      /* L3 = m */        \
        TTI_SFPMOV(0, 3, 6, MOV_NEGATE);                               /* L6 = -m */       \
        TTI_SFPMOV(0, 3, 1, 0);                                                            \
        TTI_SFPIADD(0, 5, 1, IADD_ARG_2SCOMP | IADD_CC_NONE);          /* L1 = y0 */       \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                           \
        TTI_SFPIADD(126, 2, 3, IADD_ARG_IMM);                          /* E < -126 */      \
        TTI_SFPSETEXP(255, 0, 1, SETEXP_ARG_IMM);                                          \
        TTI_SFPSETMAN(0, 1, 1, SETMAN_ARG_IMM);                        /* +-inf */         \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                           \
        TTI_SFPIADD((uint32_t)-126 & 0xFFFu, 2, 3, IADD_ARG_IMM | IADD_CC_GTE0); /* E >= 126 */ \
        TTI_SFPSETEXP(0, 0, 1, SETEXP_ARG_IMM);                                            \
        TTI_SFPSETMAN(0, 1, 1, SETMAN_ARG_IMM);                        /* +-0 */           \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                           \
        TTI_SFPIADD(126, 2, 3, IADD_ARG_IMM | IADD_CC_GTE0);           /* E >= -126 */     \
        TTI_SFPIADD((uint32_t)-126 & 0xFFFu, 2, 3, IADD_ARG_IMM);      /* E < 126 */       \
        RECIP_STEPS();                                                 /* L1 = 1 / m */    \
        TTI_SFPEXEXP(0, 1, 3, EXEXP_NODEBIAS);                                             \
        TTI_SFPIADD(0, 3, 2, IADD_ARG_2SCOMP | IADD_CC_NONE);          /* its exponent - E */ \
        TTI_SFPSETEXP(0, 1, 2, 0);                                                         \
        TTI_SFPMOV(0, 2, 1, 0);                                        /* L1 = 1 / x */    \
        TTI_SFPENCC(0, 0, 0, ENCC_EI);                                                     \
        TTI_SFPSTORE(1, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);                               \
    } while (0)
#else
#define SFPU_STEP()                                                                       \
    do {                                                                                  \
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);            /* L0 = x */        \
        TTI_SFPARECIP(0, 0, 1, 0);                                     /* L1 = y0 */       \
        TTI_SFPEXEXP(0, 0, 2, 0);                                      /* L2 = exponent */ \
        TTI_SFPENCC(3, 0, 0, ENCC_EI | ENCC_RI);                                           \
        TTI_SFPIADD(126, 2, 3, IADD_ARG_IMM | IADD_CC_GTE0);           /* E >= -126 */     \
        TTI_SFPIADD((uint32_t)-126 & 0xFFFu, 2, 3, IADD_ARG_IMM);      /* E < 126 */       \
        RECIP_STEPS();                                                                     \
        TTI_SFPENCC(0, 0, 0, ENCC_EI);                                                     \
        TTI_SFPSTORE(1, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);                               \
    } while (0)
#endif

#elif SFPU_OP == SFPU_AFFINE
#define SFPU_TILE_BEGIN() ((void)0)
/* The last macro's store runs three cycles after it: three SFPNOPs cover it before SFPU-idle waits. */
#define SFPU_TILE_END()                                                          \
    do {                                                                         \
        TTI_SFPNOP;                                                              \
        TTI_SFPNOP;                                                              \
        TTI_SFPNOP;                                                              \
    } while (0)
/* SFPLOADMACRO(MacroIndex << 2 | VDLo, Mod0, AddrMod, Imm9 << 1 | VDHi), macro 0, Imm10 0. */
#define AFFINE_MACRO(vd) TTI_SFPLOADMACRO((vd) & 3u, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, (vd) >> 2)
#define SFPU_STEPS_PER_ITER 4u
#define SFPU_STEP()                                                              \
    do {                                                                         \
        AFFINE_MACRO(0);                                                         \
        AFFINE_MACRO(1);                                                         \
        AFFINE_MACRO(2);                                                         \
        AFFINE_MACRO(3);                                                         \
    } while (0)
#else
#error "unknown SFPU_OP"
#endif

#ifndef SFPU_STEPS_PER_ITER
#define SFPU_STEPS_PER_ITER 1u
#endif

int main(void)
{
    tk_math_configure(KERNEL_IN_FMT, KERNEL_IN_FMT);
    TK_MATH_INIT_SYNC();
    tk_math_eltwise_addr_mods();
    tk_sfpu_addr_mods();
    sfpu_init();
    for (uint32_t t = 0; t < KERNEL_TILES; t++) {
        uint32_t half = t & 1u;
        tk_math_acquire_dst(half);
        TK_ELTWISE_PASS(ELWADD, 1, 3); /* the copy: x + 0, both Src banks handed back */
        TK_SFPU_WAIT_MATH();
        SFPU_TILE_BEGIN();
        for (uint32_t i = 0; i < TK_SFPU_TILE_STEPS; i += SFPU_STEPS_PER_ITER)
            SFPU_STEP();
        SFPU_TILE_END();
        TK_SFPU_DONE();
        tk_math_release_dst(half);
    }
    return 0;
}
