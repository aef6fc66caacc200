/* The matrix unit's data moves: MOVA2D, MOVDBGA2D, MOVB2D, MOVD2A, MOVD2B and MOVB2A, bit for bit and
 * cycle for cycle as tensixsim/tensix/matrix/moves.py executes them (its docstring gives the readings: the SrcA
 * format's style, UseDst32bLo, the zero-exponent flush, no blocked column, the scheduling holds), on
 * both chips (Wormhole's encodings: matrix/wormhole.py).
 *
 * Deferred to Python, before anything is written: set bits beyond a documented operand, SrcAFmt codes
 * that name no format where a move needs one, UseDst32bLo or TF32 from Dst16b, an ADDR_MOD slot or RWC
 * state whose Blackhole meaning is undocumented, a configuration field the arrays do not hold.
 */
#include "matrix_frame.h"

/* ------------------------------------------------------------------------------ MOVA2D, MOVB2D */

/* MOVB2D's mode slot: Blackhole's table names it movb2d_instr_mod (bits 11..13), Wormhole's instr_mod
 * (12..14); both hold Move4Rows << 2 | Broadcast1RowTo8 << 1 | BroadcastCol0 (matrix/moves.py). */
#ifdef TSIM_WORMHOLE
#define MOVB2D_MODE(w) F_MOVB2D_INSTR_MOD(w)
#else
#define MOVB2D_MODE(w) F_MOVB2D_MOVB2D_INSTR_MOD(w)
#endif
enum { MOVE_ROW_FLAG = 2 };                 /* instr_mod: bit 1 is Move8Rows / Move4Rows, the rest no operand */
enum { MOVB2D_COL0 = 1, MOVB2D_ONE_TO_8 = 2, MOVB2D_MOVE4 = 4 };
#define SRC_SIGN 0x40000u                   /* a Src datum: Sign 18, Man 8..17, Exp 0..7 */

/* moves.remove_low_mantissa / remove_high_exponent: a Src datum as Dst16 BF16 / FP16 bits. */
static inline uint32_t remove_low_mantissa(uint32_t x)
{
    return (x & SRC_SIGN) >> 3 | (x & 0x7Fu << 11) >> 3 | (x & 0xFFu);
}

static inline uint32_t remove_high_exponent(uint32_t x)
{
    return (x & SRC_SIGN) >> 3 | (x & 0x3FFu << 8) >> 3 | (x & 0x1Fu);
}

/* matrix.moves._to_dst and _write_dst for MOVA2D / MOVB2D: `count` rows of Src datums (`rows[i]`, each
 * 16; with `col0` every column takes column 0's datum) into Dst rows first.., Dst16b or Dst32b (TF32,
 * or UseDst32bLo keeping the high half); they become defined and hidden for the matrix unit's cycles.
 * No column is blocked (moves.blocked_columns). */
static void move_to_dst(struct copro_view *v, const struct mx_config *c, const uint32_t *const rows[],
                        uint32_t count, int col0, uint32_t first, uint32_t dst32b_lo, int64_t cycle)
{
    uint32_t fmt = (c->srca_override ? c->srca_val : c->reg0_srca) & 15;
    int eight_bit = !c->fp16a_force && (MATRIX_EIGHT_BIT_EXPONENT_MASK >> fmt & 1);
    int tf32 = fmt == MATRIX_STYLE_TF32, wide = tf32 || dst32b_lo;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t r = first + i;
        uint32_t hi_row = wide ? regs_adj32(r, c->remap, c->swizzle) : regs_adj16(r, c->remap);
        uint16_t *hi = v->dst + (uint64_t)hi_row * COLS, *lo = hi + BLOCK * COLS;
        uint32_t valid = wide && v->dst_row_valid[hi_row] && v->dst_row_valid[hi_row + BLOCK] ? 0xFFFFFFFFu : 0;
        for (uint32_t j = 0; j < COLS; j++) {
            uint32_t x = rows[i][col0 ? 0 : j];
            if (!c->zero_flag_disabled && !(x & 0xFFu))
                x = 0; /* a zero exponent flushes the datum (ALU_ACC_CTRL_Zero_Flag_disabled_src clear) */
            uint32_t val16 = eight_bit ? remove_low_mantissa(x) : remove_high_exponent(x);
            if (!wide) {
                hi[j] = (uint16_t)val16;
                continue;
            }
            uint32_t old = ((uint32_t)hi[j] << 16 | lo[j]) & valid, value;
            if (tf32)
                value = val16 << 16 | ((x >> 8) & 7u) << 13 | (dst32b_lo ? val16 : 0);
            else
                value = (old & 0xFFFF0000u) | val16;
            hi[j] = (uint16_t)(value >> 16);
            lo[j] = (uint16_t)value;
        }
        v->dst_row_valid[hi_row] = 1;
        v->dst_ready[hi_row / BLOCK] = cycle + MATRIX_DST_WRITE_HIDDEN + 1;
        if (wide) {
            v->dst_row_valid[hi_row + BLOCK] = 1;
            v->dst_ready[hi_row / BLOCK + 1] = cycle + MATRIX_DST_WRITE_HIDDEN + 1;
        }
    }
}

/* moves._dst_rows' first row: DstRow plus the offsets and the Dst RWC, aligned to `count`. */
static uint32_t move_dst_first(const struct copro_view *v, uint32_t t, const struct mx_config *c, uint32_t dst,
                               uint32_t count)
{
    return (dst + c->math_offset + v->rwc[RWC_DST][t] + c->regw_base) & MATRIX_ROW_MASK & ~(count - 1);
}

/* moves._src_rows' first row: the row plus the Src RWC, aligned to `count`. */
static uint32_t move_src_first(const struct copro_view *v, uint32_t t, uint32_t file, uint32_t row, uint32_t count)
{
    uint32_t rwc = v->rwc[file == MATRIX_SRCA ? RWC_SRCA : RWC_SRCB][t];
    return (row + rwc) & MATRIX_SRC_ROW_MASK & ~(count - 1);
}

/* The matrix unit owns its bank of `file` (moves._owned). */
static int bank_owned(const struct copro_view *v, uint32_t file)
{
    uint32_t bank = v->matrix_bank[file];
    return bank < MATRIX_SRC_BANKS && v->src_client[file * MATRIX_SRC_BANKS + bank] == MATRIX_CLIENT_MATRIX_UNIT;
}

/* moves._hold: the scheduling hold a move starts, and the SrcA row it latched (-1: none). */
static int64_t move_done(struct copro_view *v, uint32_t t, const uint32_t rwcs[RWC_FIELDS], int64_t kind,
                         int64_t cycles, int64_t srca_row, int64_t cycle)
{
    for (uint32_t i = 0; i < RWC_FIELDS; i++)
        v->rwc[i][t] = rwcs[i];
    v->move_hold[0] = kind;
    v->move_hold[1] = cycle + cycles + 1;
    v->srca_row_latch[0] = srca_row;
    return MATRIX_RETIRE_DEFAULT;
}

/* moves._mova2d: MOVA2D, or MOVDBGA2D (`debug`), which reads the matrix unit's SrcA bank whoever owns it
 * and starts a hold of its own kind. */
static int64_t mova2d(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle, int debug)
{
    uint32_t mod = F_MOVA2D_INSTR_MOD(word), dst = F_MOVA2D_DST(word), addr_mode = F_MOVA2D_ADDR_MODE(word);
    struct mx_config c;
    uint32_t rwcs[RWC_FIELDS];
    if (addr_mode >> ADDR_MODE_BITS || mod & ~(uint32_t)MOVE_ROW_FLAG || dst >> DST_ROW_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (!debug && !bank_owned(v, MATRIX_SRCA))
        return native_wait(v, WAIT_MATRIX_BANK, -1, MATRIX_SRCA);
    if (!read_move_config(v, t, &c) || !adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    uint32_t count = mod ? BLOCK : 1, first = move_src_first(v, t, MATRIX_SRCA, F_MOVA2D_SRC(word), count);
    const uint32_t *rows[BLOCK];
    for (uint32_t i = 0; i < count; i++)
        rows[i] = src_row(v, MATRIX_SRCA, first + i);
    move_to_dst(v, &c, rows, count, 0, move_dst_first(v, t, &c, dst, count), F_MOVA2D_DEST_32B_LO(word), cycle);
    if (debug)
        return move_done(v, t, rwcs, MATRIX_HOLD_MOVDBGA2D_KIND, MATRIX_HOLD_MOVDBGA2D_CYCLES, first, cycle);
    return move_done(v, t, rwcs, MATRIX_HOLD_MOVA2D_KIND, MATRIX_HOLD_MOVA2D_CYCLES, first, cycle);
}
_Static_assert(F_MOVDBGA2D_DST(0xFFFFFFFFu) == F_MOVA2D_DST(0xFFFFFFFFu)
                   && F_MOVDBGA2D_SRC(0xFFFFFFFFu) == F_MOVA2D_SRC(0xFFFFFFFFu)
                   && F_MOVDBGA2D_ADDR_MODE(0xFFFFFFFFu) == F_MOVA2D_ADDR_MODE(0xFFFFFFFFu)
                   && F_MOVDBGA2D_INSTR_MOD(0xFFFFFFFFu) == F_MOVA2D_INSTR_MOD(0xFFFFFFFFu)
                   && F_MOVDBGA2D_DEST_32B_LO(0xFFFFFFFFu) == F_MOVA2D_DEST_32B_LO(0xFFFFFFFFu),
               "MOVA2D and MOVDBGA2D share one layout");

static int64_t movb2d(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t mod = MOVB2D_MODE(word), dst = F_MOVB2D_DST(word), addr_mode = F_MOVB2D_ADDR_MODE(word);
    struct mx_config c;
    uint32_t rwcs[RWC_FIELDS];
    if (addr_mode >> ADDR_MODE_BITS || dst >> DST_ROW_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (!bank_owned(v, MATRIX_SRCB))
        return native_wait(v, WAIT_MATRIX_BANK, -1, MATRIX_SRCB);
    if (!read_move_config(v, t, &c) || !adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    int broadcast = (mod & MOVB2D_ONE_TO_8) != 0;
    uint32_t count = broadcast ? BLOCK : mod & MOVB2D_MOVE4 ? 4 : 1;
    uint32_t first = move_src_first(v, t, MATRIX_SRCB, F_MOVB2D_SRC(word), broadcast ? 1 : count);
    const uint32_t *rows[BLOCK];
    for (uint32_t i = 0; i < count; i++)
        rows[i] = src_row(v, MATRIX_SRCB, broadcast ? first : first + i);
    move_to_dst(v, &c, rows, count, mod & MOVB2D_COL0, move_dst_first(v, t, &c, dst, count),
                F_MOVB2D_DEST_32B_LO(word), cycle);
    return move_done(v, t, rwcs, MATRIX_HOLD_MOVB2D_KIND, MATRIX_HOLD_MOVB2D_CYCLES, -1, cycle);
}

/* ------------------------------------------------------------------------------ MOVD2A, MOVD2B, MOVB2A */

enum { SRC_OPERAND_BITS = 6 }; /* MOVB2A's SrcARow / SrcBRow */

/* moves.shuffle_bf16 / shuffle_fp16 / shuffle_tf32: Dst layouts back to Src datums. */
static inline uint32_t shuffle_bf16(uint32_t x)
{
    x &= 0xFFFFu;
    return (x & 0xFF00u) << 3 | (x & 0xFFu);
}

static inline uint32_t shuffle_fp16(uint32_t x)
{
    x &= 0xFFFFu;
    return (x & 0xFFE0u) << 3 | (x & 0x1Fu);
}

static inline uint32_t shuffle_tf32(uint32_t x)
{
    return (x & 0x7F800u) | (x & 7u) << 8 | (x & 0x7F8u) >> 3;
}

/* The matrix unit's current bank of SrcA (file 0) or SrcB, row `row`, writable. */
static uint32_t *src_row_w(struct copro_view *v, uint32_t file, uint32_t row)
{
    return (uint32_t *)src_row(v, file, row);
}

/* matrix.moves._movd2src: `count` Dst rows from DstRow to the matrix unit's bank of `file` (whoever
 * owns it), through the SrcA format's style; Dst32b (Fp32 or INT8 math) or Dst16b, UseDst32bLo. */
static int64_t movd2src(struct copro_view *v, uint32_t t, uint32_t file, uint32_t word, int64_t cycle)
{
    uint32_t mod = F_MOVD2A_INSTR_MOD(word), dst = F_MOVD2A_DST(word), addr_mode = F_MOVD2A_ADDR_MODE(word);
    uint32_t lo = F_MOVD2A_DEST_32B_LO(word);
    struct mx_config c;
    uint32_t rwcs[RWC_FIELDS];
    if (addr_mode >> ADDR_MODE_BITS || mod & ~(uint32_t)MOVE_ROW_FLAG || dst >> DST_ROW_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (!read_config(v, t, &c))
        return NATIVE_DEFER;
    uint32_t count = mod ? 4 : 1, src_first = move_src_first(v, t, file, F_MOVD2A_SRC(word), count);
    uint32_t first = move_dst_first(v, t, &c, dst, count);
    static const uint8_t styles[16] = MATRIX_SRC_STYLES;
    uint32_t wide = !c.fp16a_force && (c.fp32 || c.int8);
    uint32_t style = c.fp16a_force ? MATRIX_STYLE_FP16 : styles[(c.srca_override ? c.srca_val : c.reg0_srca) & 15];
    if (style == MATRIX_NO_STYLE || (!wide && (lo || style == MATRIX_STYLE_TF32)))
        return NATIVE_DEFER; /* UndefinedBehavior: no format; UseDst32bLo or TF32 from Dst16b */
    uint32_t rows[4];
    for (uint32_t i = 0; i < count; i++)
        rows[i] = first + i;
    struct dst_access d;
    dst_access(&d, wide ? DST_FP32 : DST_BF16, rows, count, &c);
    int64_t go = dst_stall(v, &d, cycle);
    if (go != PLAN_GO)
        return go;
    if (!adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    uint32_t values[4][COLS];
    for (uint32_t i = 0; i < count; i++) {
        const uint16_t *hi = v->dst + (uint64_t)d.row[i] * COLS, *lo16 = hi + BLOCK * COLS;
        for (uint32_t j = 0; j < COLS; j++) {
            uint32_t x;
            if (wide) { /* regs.read32: an undefined half reads 0 */
                int valid = v->dst_row_valid[d.row[i]] && v->dst_row_valid[d.row[i] + BLOCK];
                x = valid ? (uint32_t)hi[j] << 16 | lo16[j] : 0;
                if (lo)
                    x = x << 16 | (x & 0xFFFFu);
                x = style == MATRIX_STYLE_BF16   ? shuffle_bf16(x >> 16)
                    : style == MATRIX_STYLE_FP16 ? shuffle_fp16(x >> 16)
                    : lo                         ? x & 0x1FFFu
                                                 : shuffle_tf32(x >> 13);
            } else {
                x = v->dst_row_valid[d.row[i]] ? hi[j] : 0;
                x = style == MATRIX_STYLE_BF16 ? shuffle_bf16(x) : shuffle_fp16(x);
            }
            values[i][j] = x;
        }
    }
    for (uint32_t i = 0; i < count; i++)
        memcpy(src_row_w(v, file, src_first + i), values[i], sizeof values[i]);
    if (file == MATRIX_SRCA)
        return move_done(v, t, rwcs, MATRIX_HOLD_MOVD2A_KIND, MATRIX_HOLD_MOVD2A_CYCLES, src_first, cycle);
    return move_done(v, t, rwcs, MATRIX_HOLD_MOVD2B_KIND, MATRIX_HOLD_MOVD2B_CYCLES, -1, cycle);
}
_Static_assert(F_MOVD2B_DST(0xFFFFFFFFu) == F_MOVD2A_DST(0xFFFFFFFFu)
                   && F_MOVD2B_SRC(0xFFFFFFFFu) == F_MOVD2A_SRC(0xFFFFFFFFu)
                   && F_MOVD2B_ADDR_MODE(0xFFFFFFFFu) == F_MOVD2A_ADDR_MODE(0xFFFFFFFFu)
                   && F_MOVD2B_INSTR_MOD(0xFFFFFFFFu) == F_MOVD2A_INSTR_MOD(0xFFFFFFFFu)
                   && F_MOVD2B_DEST_32B_LO(0xFFFFFFFFu) == F_MOVD2A_DEST_32B_LO(0xFFFFFFFFu),
               "MOVD2A and MOVD2B share one layout");

/* matrix.moves._movb2a: `count` SrcB rows to SrcA rows (zero exponents flushed unless
 * Zero_Flag_disabled_src), waiting for SrcB's bank. */
static int64_t movb2a(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t mod = F_MOVB2A_INSTR_MOD(word), addr_mode = F_MOVB2A_ADDR_MODE(word);
    uint32_t a_row = F_MOVB2A_SRCA(word), b_row = F_MOVB2A_SRCB(word);
    struct mx_config c;
    uint32_t rwcs[RWC_FIELDS];
    if (addr_mode >> ADDR_MODE_BITS || a_row >> SRC_OPERAND_BITS || mod & ~(uint32_t)MOVE_ROW_FLAG
        || b_row >> SRC_OPERAND_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (!bank_owned(v, MATRIX_SRCB))
        return native_wait(v, WAIT_MATRIX_BANK, -1, MATRIX_SRCB);
    if (!read_move_config(v, t, &c) || !adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    uint32_t count = mod ? 4 : 1;
    uint32_t b_first = move_src_first(v, t, MATRIX_SRCB, b_row, count);
    uint32_t a_first = move_src_first(v, t, MATRIX_SRCA, a_row, count);
    uint32_t values[4][COLS];
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t *b = src_row(v, MATRIX_SRCB, b_first + i);
        for (uint32_t j = 0; j < COLS; j++)
            values[i][j] = !c.zero_flag_disabled && !(b[j] & 0xFFu) ? 0 : b[j];
    }
    for (uint32_t i = 0; i < count; i++)
        memcpy(src_row_w(v, MATRIX_SRCA, a_first + i), values[i], sizeof values[i]);
    (void)cycle;
    return move_done(v, t, rwcs, MATRIX_HOLD_MOVB2A_KIND, MATRIX_HOLD_MOVB2A_CYCLES, a_first, cycle);
}

/* ------------------------------------------------------------------------------ dispatch */

int64_t matrix_movd2a(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return movd2src(v, thread, MATRIX_SRCA, word, cycle);
}

int64_t matrix_movd2b(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return movd2src(v, thread, MATRIX_SRCB, word, cycle);
}

int64_t matrix_movb2a(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return movb2a(v, thread, word, cycle);
}

int64_t matrix_mova2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return mova2d(v, thread, word, cycle, 0);
}

int64_t matrix_movdbga2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return mova2d(v, thread, word, cycle, 1);
}

int64_t matrix_movb2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return movb2d(v, thread, word, cycle);
}
