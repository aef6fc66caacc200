/* The matrix unit's frame, shared by its arithmetic (matrix.c) and its data moves (matrix_moves.c):
 * the configuration a pipe's instruction reads (Config.field_for_thread), the Src rows of the matrix
 * unit's banks, the Dst rows an instruction reads or writes with their read-after-write wait
 * (matrix.unit.DstAccess, _stall), the operand widths both chips document, and the frame of the
 * arithmetic instructions (matrix.unit's formats, Src bank wait, operand checks and _finish). */
#ifndef TENSIXSIM_NATIVE_MATRIX_FRAME_H
#define TENSIXSIM_NATIVE_MATRIX_FRAME_H
#include <string.h>

#include "matrix.h"
#include "ops.h"
#include "regs.h"

_Static_assert(MATRIX_K == MATRIX_SRC_COLS && MATRIX_SRC_COLS == MATRIX_DST_COLS,
               "the matrix unit's handlers assume K = Src columns = Dst columns (16)");
_Static_assert(MATRIX_DST_BLOCK_ROWS == 8, "the matrix unit's handlers write at most one 8-row block of Dst");

enum { CFG_STATES = 2 };          /* config/unit.py ConfigState.config: Config[2] */
enum { K = MATRIX_K, COLS = MATRIX_DST_COLS, BLOCK = MATRIX_DST_BLOCK_ROWS };
/* Documented operand widths inside wider slots (the semantics' ctx.documented calls). */
#ifdef TSIM_WORMHOLE /* Wormhole's AddrMod is two bits (matrix/addressing.py WORMHOLE) */
enum { DST_ROW_BITS = 10, ADDR_MODE_BITS = 2, MVMUL_MOD_BITS = 1 };
#else
enum { DST_ROW_BITS = 10, ADDR_MODE_BITS = 3, MVMUL_MOD_BITS = 1 };
#endif
enum { ZEROACC_MODE_BITS = 2, ZEROACC_WHERE_BITS = 10 };
enum { ELW_BROADCAST_COL0 = 1, ELW_BROADCAST_ROW = 2 }; /* ELWADD / ELWSUB / ELWMUL instr_mod19 */
enum dst_mode { DST_FP32, DST_BF16, DST_FP16 };          /* matrix.unit.DstMode (INT32 defers) */
enum elw_op { ELW_ADD, ELW_SUB, ELW_MUL };

#define SIGN32 0x80000000u
#define MAG32 0x7FFFFFFFu
#define MAN32 0x007FFFFFu

/* ------------------------------------------------------------------------------ configuration */

/* What the matrix unit reads of a pipe's configuration (Config.field_for_thread). */
struct mx_config {
    uint32_t fp16a_force, int8, fp32, srca_override, srca_val, reg0_srca;
    uint32_t fidelity_base, math_offset, regw_base, remap, swizzle;
    uint32_t state;              /* the Config state the pipe's CFG_STATE_ID selects */
    uint32_t zero_flag_disabled; /* ALU_ACC_CTRL_Zero_Flag_disabled_src (read_move_config only) */
    uint32_t keep_valid[2]; /* CLR_DVALID_SrcA/SrcB_Disable: a flip keeps the bank the matrix unit's */
};

/* Field `index/shift/mask` of ThreadConfig[thread] (`thread_field`) or of Config[state]; 0 when it lies
 * beyond the arrays. */
static inline int field(const struct copro_view *v, uint32_t thread, uint32_t state, int thread_field, uint32_t index,
                 uint32_t shift, uint32_t mask, uint32_t *out)
{
    if (thread_field) {
        if (index >= v->thread_config_words)
            return 0;
        *out = (v->thread_config[(uint64_t)thread * v->thread_config_words + index] & mask) >> shift;
    } else {
        if (state >= CFG_STATES || index >= v->config_words)
            return 0;
        *out = (v->config[(uint64_t)state * v->config_words + index] & mask) >> shift;
    }
    return 1;
}

#define FIELD(v, t, s, NAME, out) \
    field(v, t, s, MXF_##NAME##_THREAD, MXF_##NAME##_INDEX, MXF_##NAME##_SHIFT, MXF_##NAME##_MASK, out)

static inline int read_config(const struct copro_view *v, uint32_t t, struct mx_config *c)
{
    uint32_t s;
    if (!FIELD(v, t, 0, CFG_STATE_ID_STATEID, &s) || s >= CFG_STATES)
        return 0;
    c->state = s;
    return FIELD(v, t, s, FP16A_FORCE_ENABLE, &c->fp16a_force)
        && FIELD(v, t, s, ALU_ACC_CTRL_INT8_MATH_ENABLED, &c->int8)
        && FIELD(v, t, s, ALU_ACC_CTRL_FP32_ENABLED, &c->fp32)
        && FIELD(v, t, s, ALU_FORMAT_SPEC_REG_SRCA_OVERRIDE, &c->srca_override)
        && FIELD(v, t, s, ALU_FORMAT_SPEC_REG_SRCA_VAL, &c->srca_val)
        && FIELD(v, t, s, ALU_FORMAT_SPEC_REG0_SRCA, &c->reg0_srca)
        && FIELD(v, t, s, FIDELITY_BASE_PHASE, &c->fidelity_base)
        && FIELD(v, t, s, DEST_TARGET_REG_CFG_MATH_OFFSET, &c->math_offset)
        && FIELD(v, t, s, DEST_REGW_BASE_BASE, &c->regw_base)
        && FIELD(v, t, s, DEST_ACCESS_CFG_REMAP_ADDRS, &c->remap)
        && FIELD(v, t, s, DEST_ACCESS_CFG_SWIZZLE_32B, &c->swizzle)
        && FIELD(v, t, s, CLR_DVALID_SRCA_DISABLE, &c->keep_valid[MATRIX_SRCA])
        && FIELD(v, t, s, CLR_DVALID_SRCB_DISABLE, &c->keep_valid[MATRIX_SRCB]);
}

/* read_config, and what only the moves read (moves._flush_denormals). */
static inline int read_move_config(const struct copro_view *v, uint32_t t, struct mx_config *c)
{
    return read_config(v, t, c) && FIELD(v, t, c->state, ALU_ACC_CTRL_ZERO_FLAG_DISABLED_SRC, &c->zero_flag_disabled);
}

/* Row `row` (< SRC_ROWS) of the matrix unit's current bank of SrcA (file 0) or SrcB (1). */
static const uint32_t *src_row(const struct copro_view *v, uint32_t file, uint32_t row)
{
    const uint32_t *base = file == MATRIX_SRCA ? v->srca : v->srcb;
    uint32_t bank = v->matrix_bank[file] % MATRIX_SRC_BANKS;
    return base + ((uint64_t)bank * MATRIX_SRC_ROWS + row % MATRIX_SRC_ROWS) * MATRIX_SRC_COLS;
}

/* matrix.unit.arith_formats: the Src style and Dst mode, or 0 (integer math, or SrcAFmt 12 / 13). */
static inline int arith_formats(const struct mx_config *c, uint32_t *style, enum dst_mode *mode)
{
    static const uint8_t styles[16] = MATRIX_SRC_STYLES;
    if (c->fp16a_force) {
        *style = MATRIX_STYLE_FP16;
        *mode = DST_FP16;
        return 1;
    }
    if (c->int8)
        return 0;
    uint32_t fmt = (c->srca_override ? c->srca_val : c->reg0_srca) & 15;
    if (styles[fmt] == MATRIX_NO_STYLE)
        return 0;
    *style = styles[fmt];
    *mode = c->fp32 ? DST_FP32 : *style == MATRIX_STYLE_FP16 ? DST_FP16 : DST_BF16;
    return 1;
}

/* ------------------------------------------------------------------------------ Dst rows */

/* The Dst rows an instruction reads and writes (matrix.unit.DstAccess): `count` Dst16b / Dst32b rows
 * as DstBits rows (`row`: the row, or the high half's; the low half is row + 8, both < DST_ROWS). */
struct dst_access {
    enum dst_mode mode;
    uint32_t count;
    uint32_t row[BLOCK];
};

static inline void dst_access(struct dst_access *d, enum dst_mode mode, const uint32_t *rows, uint32_t count,
                       const struct mx_config *c)
{
    d->mode = mode;
    d->count = count;
    for (uint32_t i = 0; i < count; i++)
        d->row[i] = mode == DST_FP32 ? regs_adj32(rows[i], c->remap, c->swizzle) : regs_adj16(rows[i], c->remap);
}

/* regs.readable_from over the access's storage rows: the first cycle they may all be read. */
static inline int64_t readable_from(const struct copro_view *v, const struct dst_access *d)
{
    int64_t ready = 0;
    for (uint32_t i = 0; i < d->count; i++) {
        uint32_t block = d->row[i] / BLOCK;
        if (v->dst_ready[block] > ready)
            ready = v->dst_ready[block];
        if (d->mode == DST_FP32 && v->dst_ready[block + 1] > ready) /* row + 8: the next block */
            ready = v->dst_ready[block + 1];
    }
    return ready;
}

/* A frame step's outcome when the instruction goes on (else NATIVE_DEFER or NATIVE_WAIT). */
enum { PLAN_GO = 1 };

/* matrix.unit._stall: the Dst read-after-write wait, or PLAN_GO. */
static inline int64_t dst_stall(struct copro_view *v, const struct dst_access *d, int64_t cycle)
{
    int64_t ready = readable_from(v, d);
    return ready > cycle ? native_wait(v, WAIT_DST_HIDDEN, ready, 0) : PLAN_GO;
}

/* ------------------------------------------------------------------------------ the arithmetic's frame */

/* matrix.unit.both_banks_owned; also 0 for a bank index beyond the arrays. */
static inline int both_banks_owned(const struct copro_view *v)
{
    for (uint32_t f = 0; f < 2; f++) {
        uint32_t bank = v->matrix_bank[f];
        if (bank >= MATRIX_SRC_BANKS || v->src_client[f * MATRIX_SRC_BANKS + bank] != MATRIX_CLIENT_MATRIX_UNIT)
            return 0;
    }
    return 1;
}

/* regs.written: the blocks the access wrote cannot be read before cycle + hidden + 1. */
static inline void mark_written(struct copro_view *v, const struct dst_access *d, int64_t cycle)
{
    for (uint32_t i = 0; i < d->count; i++) {
        uint32_t block = d->row[i] / BLOCK;
        v->dst_ready[block] = cycle + MATRIX_DST_WRITE_HIDDEN + 1;
        if (d->mode == DST_FP32)
            v->dst_ready[block + 1] = cycle + MATRIX_DST_WRITE_HIDDEN + 1;
    }
}

/* Everything an arithmetic instruction needs, checked before anything is written. */
struct mx_plan {
    struct mx_config c;
    uint32_t style, phase, a_first, b_first, flips;
    enum dst_mode mode;
    uint32_t rwcs[RWC_FIELDS]; /* after ApplyAddrMod */
};

/* The checks and reads every arithmetic instruction shares (matrix.unit._multiply / _elementwise up
 * to the Dst rows): PLAN_GO, NATIVE_DEFER, or NATIVE_WAIT when the banks are not the matrix unit's (in
 * Python that Wait comes right after the operand checks, before anything else can raise). `b_mask`
 * selects SrcB's first row from its RWC. */
static inline int64_t plan(struct copro_view *v, uint32_t t, uint32_t dst, uint32_t addr_mode, uint32_t flips,
                           uint32_t b_mask, struct mx_plan *p)
{
    if (dst >> DST_ROW_BITS || addr_mode >> ADDR_MODE_BITS)
        return NATIVE_DEFER;
    if (!both_banks_owned(v))
        return native_wait(v, WAIT_SRC_NOT_HANDED, -1, 0);
    if (!read_config(v, t, &p->c) || !arith_formats(&p->c, &p->style, &p->mode))
        return NATIVE_DEFER;
    p->flips = flips;
    p->a_first = v->rwc[RWC_SRCA][t] & MATRIX_SRC_BLOCK_MASK;
    p->b_first = v->rwc[RWC_SRCB][t] & b_mask;
    p->phase = (v->rwc[RWC_FIDELITY][t] + p->c.fidelity_base) & MATRIX_RWC_FIDELITY_MASK;
    return adc_plan_addr_mod(v, t, addr_mode, 1, p->rwcs) ? PLAN_GO : NATIVE_DEFER;
}

/* matrix.unit._dst_row: DstRow plus the math offsets and the Dst RWC, masked. */
static inline uint32_t first_dst_row(const struct copro_view *v, uint32_t t, const struct mx_plan *p,
                                     uint32_t dst, uint32_t mask)
{
    return (dst + p->c.math_offset + v->rwc[RWC_DST][t] + p->c.regw_base) & mask;
}

/* matrix.unit._finish: the written blocks' hidden cycles, the SrcA row latch, the bank flips
 * (flip_banks: SrcA for bit 0, SrcB for bit 1), the RWCs. */
static inline int64_t finish(struct copro_view *v, uint32_t t, const struct mx_plan *p,
                             const struct dst_access *d, int64_t cycle)
{
    mark_written(v, d, cycle);
    v->srca_row_latch[0] = p->a_first;
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++) {
        if (!(p->flips >> file & 1))
            continue;
        uint32_t bank = v->matrix_bank[file] % MATRIX_SRC_BANKS; /* both_banks_owned checked it */
        if (!p->c.keep_valid[file])
            v->src_client[file * MATRIX_SRC_BANKS + bank] = MATRIX_CLIENT_UNPACKERS;
        v->matrix_bank[file] ^= 1;
    }
    for (uint32_t i = 0; i < RWC_FIELDS; i++)
        v->rwc[i][t] = p->rwcs[i];
    return MATRIX_ISSUE_CYCLES;
}

#endif
