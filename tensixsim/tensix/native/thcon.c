/* Scalar unit (ThCon): DMANOP, SETDMAREG's immediate mode and the six GPR arithmetic instructions,
 * exactly as tensixsim/tensix/thcon.py executes them.
 *
 * Deferred to Python: SETDMAREG's special mode (packer state, GPR groups), and every operand
 * thcon.py rejects with UndefinedBehavior (a result register beyond the 6-bit operand, an undefined
 * op_sel, SHIFTDMAREG's immediate beyond 5 bits).
 */
#include "ops.h"

/* Operand widths the documentation gives inside wider slots (thcon.py _check_index calls). */
enum {
    RESULT_REG_BITS = 6,  /* ADDDMAREG, SUBDMAREG, MULDMAREG: result_reg_index's 11-bit slot */
    SHIFT_IMM_BITS = 5,   /* SHIFTDMAREG: RightImm5 in op_b_reg_index's 6-bit slot */
};
#define SHIFT_AMOUNT_MASK 0x1Fu /* a GPR shift amount uses its low five bits */
#define HALF_MASK 0xFFFFu       /* a half-register */

enum dmareg_op {
    DMAREG_ADD, DMAREG_SUB, DMAREG_MUL,   /* ADDDMAREG, SUBDMAREG, MULDMAREG */
    DMAREG_AND, DMAREG_OR, DMAREG_XOR,    /* BITWOPDMAREG */
    DMAREG_SHL, DMAREG_SHR,               /* SHIFTDMAREG */
    DMAREG_GT, DMAREG_LT, DMAREG_EQ,      /* CMPDMAREG */
};

/* The operand slots the six arithmetic instructions share (at the same bits in each). */
struct dmareg {
    uint32_t op_b_is_const, result, op_b, op_a;
};

int64_t thcon_dmanop(struct copro_view *v, uint32_t thread, uint32_t word)
{
    (void)v; (void)thread; (void)word;
    return TIMING_THCON_DMANOP;
}

/* Immediate mode: the two payload slots together are one 16-bit NewValue, written to half-register
 * reg_index_16b (half 2k is GPR k's low half). */
int64_t thcon_setdmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t half = F_SETDMAREG_REG_INDEX_16B(word);
    if (F_SETDMAREG_SET_SIGNALS_MODE(word) || half >= 2 * GPR_COUNT)
        return NATIVE_DEFER;
    uint32_t value = (F_SETDMAREG_PAYLOAD_SIG_SEL_SIZE(word) << F_SETDMAREG_PAYLOAD_SIG_SEL_WIDTH)
                     | F_SETDMAREG_PAYLOAD_SIG_SEL(word);
    uint32_t *gpr = pipe_gprs(v, thread) + (half >> 1);
    uint32_t shift = 16 * (half & 1);
    *gpr = (*gpr & ~(HALF_MASK << shift)) | ((value & HALF_MASK) << shift);
    return TIMING_THCON_SETDMAREG;
}

static uint32_t dmareg_compute(enum dmareg_op op, uint32_t left, uint32_t right)
{
    switch (op) {
    case DMAREG_ADD: return left + right;
    case DMAREG_SUB: return left - right;
    case DMAREG_MUL: return (left & HALF_MASK) * (right & HALF_MASK); /* unsigned 16 x 16 -> 32 */
    case DMAREG_AND: return left & right;
    case DMAREG_OR: return left | right;
    case DMAREG_XOR: return left ^ right;
    case DMAREG_SHL: return left << (right & SHIFT_AMOUNT_MASK);
    case DMAREG_SHR: return left >> (right & SHIFT_AMOUNT_MASK);
    case DMAREG_GT: return left > right; /* unsigned comparisons */
    case DMAREG_LT: return left < right;
    case DMAREG_EQ: return left == right;
    }
    return 0; /* not reached: every op is a case */
}

/* thcon.py _operands and _result: the right operand is the 6-bit immediate or a GPR. Three cycles
 * with an immediate or with both GPRs in one aligned group of four, four otherwise. */
static int64_t dmareg_execute(struct copro_view *v, uint32_t thread, struct dmareg d, enum dmareg_op op)
{
    if (d.result >= GPR_COUNT || d.op_a >= GPR_COUNT || (!d.op_b_is_const && d.op_b >= GPR_COUNT))
        return NATIVE_DEFER;
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t left = gprs[d.op_a];
    uint32_t right = d.op_b_is_const ? d.op_b : gprs[d.op_b];
    int64_t cycles = d.op_b_is_const || d.op_a >> 2 == d.op_b >> 2 ? TIMING_THCON_ARITHMETIC
                                                                   : TIMING_THCON_ARITHMETIC_SPLIT;
    gprs[d.result] = dmareg_compute(op, left, right);
    return cycles;
}

/* The fields of one arithmetic instruction NAME in word w. */
#define DMAREG_OF(NAME, w) \
    ((struct dmareg){F_##NAME##_OP_B_IS_CONST(w), F_##NAME##_RESULT_REG_INDEX(w), \
                     F_##NAME##_OP_B_REG_INDEX(w), F_##NAME##_OP_A_REG_INDEX(w)})

/* ADDDMAREG, SUBDMAREG, MULDMAREG: the 11-bit result slot must hold a 6-bit register index. */
static int64_t wide_result_execute(struct copro_view *v, uint32_t thread, struct dmareg d, enum dmareg_op op)
{
    if (d.result >> RESULT_REG_BITS)
        return NATIVE_DEFER;
    return dmareg_execute(v, thread, d, op);
}

int64_t thcon_adddmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return wide_result_execute(v, thread, DMAREG_OF(ADDDMAREG, word), DMAREG_ADD);
}

int64_t thcon_subdmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return wide_result_execute(v, thread, DMAREG_OF(SUBDMAREG, word), DMAREG_SUB);
}

int64_t thcon_muldmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return wide_result_execute(v, thread, DMAREG_OF(MULDMAREG, word), DMAREG_MUL);
}

int64_t thcon_bitwopdmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    static const enum dmareg_op modes[] = {DMAREG_AND, DMAREG_OR, DMAREG_XOR}; /* op_sel 0, 1, 2 */
    uint32_t op_sel = F_BITWOPDMAREG_OP_SEL(word);
    if (op_sel >= sizeof modes / sizeof modes[0])
        return NATIVE_DEFER;
    return dmareg_execute(v, thread, DMAREG_OF(BITWOPDMAREG, word), modes[op_sel]);
}

int64_t thcon_shiftdmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    static const enum dmareg_op modes[] = {DMAREG_SHL, DMAREG_SHR}; /* op_sel 0 left, 1 right */
    uint32_t op_sel = F_SHIFTDMAREG_OP_SEL(word);
    struct dmareg d = DMAREG_OF(SHIFTDMAREG, word);
    if (op_sel >= sizeof modes / sizeof modes[0] || (d.op_b_is_const && d.op_b >> SHIFT_IMM_BITS))
        return NATIVE_DEFER;
    return dmareg_execute(v, thread, d, modes[op_sel]);
}

int64_t thcon_cmpdmareg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    static const enum dmareg_op modes[] = {DMAREG_GT, DMAREG_LT, DMAREG_EQ}; /* op_sel 0, 1, 2 */
    uint32_t op_sel = F_CMPDMAREG_OP_SEL(word);
    if (op_sel >= sizeof modes / sizeof modes[0])
        return NATIVE_DEFER;
    return dmareg_execute(v, thread, DMAREG_OF(CMPDMAREG, word), modes[op_sel]);
}
