/* The matrix unit's max-pooling, GMPOOL, bit for bit and cycle for cycle as matrix/unit.py's _gmpool
 * executes GMPOOL.md's model (its docstring gives the readings): per column, the largest of the Dst
 * datum and the sixteen SrcA datums of the aligned 16-row block, each scaled by the SrcB datum of its
 * row (a zero SrcB exponent reads as minus infinity, a zero SrcA one as zero), in the page's visiting
 * order and Datum layout; with ArgMax, the index of the winner in the Dst datum's low bits. Dst is read
 * through Dst32b (FP32 or integer math) or Dst16b, an undefined row as minus infinity (all bits set);
 * four rows are written. Integer math is executed too: the comparisons are integer ones. On both chips
 * (Wormhole's encoding: matrix/wormhole.py), over the arithmetic's frame (matrix_frame.h).
 *
 * Deferred to Python, before anything is written: instr_mod19 other than 1 (pooling shapes no page
 * describes), set bits beyond a documented operand, SrcAFmt codes that name no format, an ADDR_MOD slot
 * or RWC state whose Blackhole meaning is undocumented, a configuration field or Config state the arrays
 * do not hold. The waits (a Src bank not handed to the matrix unit, Dst rows still hidden) are the
 * engine's, with Python's reason.
 */
#include "matrix_frame.h"

/* GMPOOL's AddrMod slot: Blackhole's pool_addr_mode, Wormhole's addr_mode. */
#ifdef TSIM_WORMHOLE
#define GMPOOL_ADDR_MODE(w) F_GMPOOL_ADDR_MODE(w)
#else
#define GMPOOL_ADDR_MODE(w) F_GMPOOL_POOL_ADDR_MODE(w)
#endif
enum { GMPOOL_16X16 = 1, GMPOOL_ROWS = 4, INDEXED_ROWS = 8 };
enum { STYLE_INT32 = 0xFF }; /* unit.INT32_STYLE: integer results, no format code */
_Static_assert(STYLE_INT32 > 15, "STYLE_INT32 is no format code");
#define ALL_ONES 0xFFFFFFFFu /* GMPOOL.md: an undefined row reads as minus infinity, every bit set */

/* GMPOOL.md's Datum: sign, a 9-bit exponent, a 10-bit magnitude or mantissa. */
struct datum {
    uint32_t sign, exp, man;
};

/* unit.gmpool_styles: the DstStyle of GMPOOL's Dst datums. */
static uint32_t dst_style(uint32_t style, int integer, int fp32, uint32_t argmax)
{
    if (integer)
        return STYLE_INT32;
    if (style == MATRIX_STYLE_TF32)
        return argmax ? STYLE_INT32 : fp32 ? MATRIX_STYLE_TF32 : MATRIX_STYLE_BF16;
    if (argmax && fp32)
        return style;
    return fp32 ? MATRIX_STYLE_TF32 : style;
}

/* unit._read_datum of a 32-bit Dst value. */
static inline struct datum read_datum(uint32_t v, uint32_t style)
{
    struct datum d = {v >> 31, 0, 0};
    if (style == STYLE_INT32) {
        d.exp = (v >> 10 & 0x3F) + ((v >> 24 & 7) << 6);
        d.man = v & 0x3FF;
    } else if (style == MATRIX_STYLE_FP16) {
        d.exp = (v >> 16 & 0x1F) + 15;
        d.man = v >> 21 & 0x3FF;
    } else {
        d.exp = (v >> 16 & 0xFF) + 127;
        d.man = (v >> 24 & 0x7F) << 3 | (style == MATRIX_STYLE_TF32 ? v >> 13 & 7 : 0);
    }
    return d;
}

/* unit._write_datum: a Datum as a 32-bit Dst value (a zero exponent writes zero). */
static inline uint32_t write_datum(struct datum d, uint32_t style)
{
    if (style == STYLE_INT32)
        return d.sign << 31 | (d.exp & 7) << 10 | d.man;
    if (style == MATRIX_STYLE_FP16)
        return d.exp & 0x3F ? d.sign << 31 | d.man << 21 | ((d.exp - 15) & 0x1F) << 16 : 0;
    if (!d.exp)
        return 0;
    uint32_t out = d.sign << 31 | (d.man & 0x3F8) << 21 | ((d.exp - 127) & 0xFF) << 16;
    return style == MATRIX_STYLE_TF32 ? out | (d.man & 7) << 13 : out;
}

/* unit._scaled_src: SrcA datum `a` scaled by SrcB datum `b` in the arithmetic's Src style. */
static inline struct datum scaled_src(uint32_t a, uint32_t b, uint32_t style)
{
    uint32_t a_exp = a & 0xFF, b_exp = b & 0xFF;
    if (!b_exp)
        return (struct datum){1, 0x1FF, 0x3FF}; /* minus infinity */
    if (!a_exp)
        return (struct datum){0, 0, 0};
    struct datum d = {a >> 18 & 1, a_exp + b_exp, a >> 8 & 0x3FF};
    if (style == MATRIX_STYLE_INT8)
        d.exp = 0;
    else if (style == MATRIX_STYLE_FP16)
        d.exp = (a_exp & 0x1F) + (b_exp & 0x1F);
    else if (style == MATRIX_STYLE_BF16)
        d.man &= 0x3F8;
    return d;
}

/* unit._comparable: the order GMPOOL compares Datums in. */
static inline int32_t comparable(struct datum d)
{
    int32_t magnitude = (int32_t)(d.exp << 10) + (int32_t)d.man;
    return d.sign ? -magnitude : magnitude;
}

/* Row i of the access as 32-bit values (Dst16b rows in the high half): regs.read32 / read16 with
 * minus infinity for an undefined row. */
static void read_pool_row(const struct copro_view *v, const struct dst_access *d, uint32_t i, uint32_t out[COLS])
{
    uint32_t r = d->row[i];
    const uint16_t *hi = v->dst + (uint64_t)r * COLS, *lo = hi + BLOCK * COLS;
    if (d->mode == DST_FP32) {
        int valid = v->dst_row_valid[r] && v->dst_row_valid[r + BLOCK];
        for (uint32_t j = 0; j < COLS; j++)
            out[j] = valid ? (uint32_t)hi[j] << 16 | lo[j] : ALL_ONES;
    } else {
        int valid = v->dst_row_valid[r];
        for (uint32_t j = 0; j < COLS; j++)
            out[j] = (valid ? hi[j] : 0xFFFFu) << 16;
    }
}

/* regs.write32 / write16 of row i: whole rows, defined after. */
static void write_pool_row(struct copro_view *v, const struct dst_access *d, uint32_t i, const uint32_t values[COLS])
{
    uint32_t r = d->row[i];
    uint16_t *hi = v->dst + (uint64_t)r * COLS, *lo = hi + BLOCK * COLS;
    for (uint32_t j = 0; j < COLS; j++) {
        hi[j] = (uint16_t)(values[j] >> 16);
        if (d->mode == DST_FP32)
            lo[j] = (uint16_t)values[j];
    }
    v->dst_row_valid[r] = 1;
    if (d->mode == DST_FP32)
        v->dst_row_valid[r + BLOCK] = 1;
}

/* unit._gmpool. */
static int64_t gmpool(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    static const uint8_t styles[16] = MATRIX_SRC_STYLES;
    static const uint8_t index_of[INDEXED_ROWS] = MATRIX_GMPOOL_INDEX_OF;
    uint32_t dst = F_GMPOOL_DST(word), addr_mode = GMPOOL_ADDR_MODE(word), argmax = F_GMPOOL_MAX_POOL_INDEX_EN(word);
    struct mx_plan p;
    if (F_GMPOOL_INSTR_MOD19(word) != GMPOOL_16X16)
        return NATIVE_DEFER; /* Unimplemented */
    if (dst >> DST_ROW_BITS || addr_mode >> ADDR_MODE_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (!both_banks_owned(v))
        return native_wait(v, WAIT_SRC_NOT_HANDED, -1, 0);
    if (!read_config(v, t, &p.c))
        return NATIVE_DEFER;
    /* unit.arith_formats, integer math included: its Dst is Dst32b */
    int integer = !p.c.fp16a_force && p.c.int8, fp32 = !p.c.fp16a_force && !integer && p.c.fp32;
    uint32_t style = p.c.fp16a_force ? MATRIX_STYLE_FP16
                     : integer       ? MATRIX_STYLE_INT8
                                     : styles[(p.c.srca_override ? p.c.srca_val : p.c.reg0_srca) & 15];
    if (style == MATRIX_NO_STYLE)
        return NATIVE_DEFER; /* UndefinedBehavior */
    uint32_t out_style = dst_style(style, integer, fp32, argmax);
    p.flips = F_GMPOOL_CLEAR_DVALID(word);
    p.a_first = v->rwc[RWC_SRCA][t] & MATRIX_SRC_ROW_MASK & ~(MATRIX_FACE_ROWS - 1);
    p.b_first = v->rwc[RWC_SRCB][t] & MATRIX_SRC_BLOCK_MASK;
    uint32_t first = (dst + p.c.math_offset + v->rwc[RWC_DST][t] + p.c.regw_base) & MATRIX_ROW_MASK
                     & ~(uint32_t)(GMPOOL_ROWS - 1), rows[GMPOOL_ROWS];
    for (uint32_t r = 0; r < GMPOOL_ROWS; r++)
        rows[r] = first + r;
    struct dst_access d;
    dst_access(&d, integer || fp32 ? DST_FP32 : DST_BF16, rows, GMPOOL_ROWS, &p.c);
    int64_t go = dst_stall(v, &d, cycle);
    if (go != PLAN_GO)
        return go;
    if (!adc_plan_addr_mod(v, t, addr_mode, 1, p.rwcs))
        return NATIVE_DEFER;

    uint32_t raw[GMPOOL_ROWS][COLS], out[GMPOOL_ROWS][COLS];
    for (uint32_t r = 0; r < GMPOOL_ROWS; r++)
        read_pool_row(v, &d, r, raw[r]);
    const uint32_t *b = src_row(v, MATRIX_SRCB, p.b_first), *a[K];
    for (uint32_t i = 0; i < K; i++)
        a[i] = src_row(v, MATRIX_SRCA, p.a_first + i);
    for (uint32_t j = 0; j < COLS; j++) {
        uint32_t value = raw[0][j], phase = (value + 0x100) & 0xF00, max_index = value & 0xFF;
        struct datum best = read_datum(value, out_style);
        int32_t best_key = comparable(best);
        /* rows 4..7, 0..3, then 8..15 (the page's loop over i with i ^ 4 below 8) */
        for (uint32_t k = 0; k < K; k++) {
            uint32_t i = k < INDEXED_ROWS ? k ^ 4 : k;
            struct datum x = scaled_src(a[i][j], b[i], style);
            int32_t key = comparable(x);
            if (key < best_key)
                continue;
            best = x, best_key = key;
            if (i < INDEXED_ROWS)
                max_index = (phase >> 4) + index_of[i];
        }
        uint32_t index = phase | (max_index & 0xFF), result = write_datum(best, out_style);
        if (argmax)
            result = out_style == STYLE_INT32 ? index : result | index;
        out[0][j] = d.mode == DST_FP32 ? result : result & 0xFFFF0000u;
        for (uint32_t r = 1; r < GMPOOL_ROWS; r++)
            out[r][j] = d.mode == DST_FP32 && argmax ? (raw[r][j] + 0x100) & 0xF00 : 0;
    }
    for (uint32_t r = 0; r < GMPOOL_ROWS; r++)
        write_pool_row(v, &d, r, out[r]);
    return finish(v, t, &p, &d, cycle);
}

int64_t matrix_gmpool(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return gmpool(v, thread, word, cycle);
}
