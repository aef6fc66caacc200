/* The matrix unit's arithmetic: MVMUL, DOTPV, GAPOOL, ELWADD, ELWSUB, ELWMUL
 * (tensixsim/tensix/matrix/unit.py) and ZEROACC (regs.py), bit for bit and cycle for cycle as the
 * Python semantics execute them, their bank flips included; GMPOOL is matrix_pool.c's, the data moves
 * matrix_moves.c's, the Src shifts matrix_shifts.c's, over the frame they share (matrix_frame.h). matrix/unit.py's docstring gives the arithmetic model: Src reads in the BF16 /
 * TF32 / FP16 style, the fidelity phase's mantissa slices, fp32 operations each followed
 * by FTZ, MVMUL's sum over k = 0..15 in order from +0, Dst read and written through Dst32b (FP32) or
 * Dst16b (BF16 / FP16, rounded to nearest, ties away), the Adj16 / Adj32 row mapping, and Dst.md's
 * four hidden cycles after a write.
 *
 * Deferred to Python (each before anything is written):
 * - whatever raises there: set bits beyond a documented operand (dst bits 10.., addr_mode bits 3..,
 *   MVMUL instr_mod19 bits 1.., ZEROACC clear_mode bits 2.. / where bits 10..), SrcAFmt codes that
 *   name no format, a SrcA window running past row 63, an ADDR_MOD slot or RWC state whose Blackhole
 *   meaning is undocumented, ZEROACC's clear_zero_flags; a configuration field or Config state the
 *   arrays do not hold;
 * - integer math (ALU_ACC_CTRL_INT8_math_enabled).
 * The waits (a Src bank not handed to the matrix unit, Dst rows still hidden after a matrix-unit write)
 * are the engine's, with Python's reason and until.
 *
 * Wormhole's library (TSIM_WORMHOLE) runs them in Wormhole's encodings (matrix/wormhole.py,
 * regs.zeroacc_wormhole: the same bodies, a two-bit AddrMod with Wormhole's ApplyAddrMod, adc.c; Dst
 * without remap or swizzle).
 */
#include "matrix_frame.h"

/* Every float operation is one IEEE fp32 operation: no fused multiply-add (x + b * a rounds twice). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif


/* ------------------------------------------------------------------------------ numbers */

static inline uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* matrix.unit.ftz: a zero exponent field (zero or denormal, either sign) becomes +0. */
static inline float ftz(float x)
{
    return (bits_of(x) & MATRIX_EXP32) ? x : 0.0f;
}

/* How matrix.unit.read_src reads a Src datum in a style: the exponent bits, their rebias onto fp32's
 * (FP16: +112, exponent 31 an ordinary binade) and the mantissa bits kept (BF16: the top 7 of 10). */
struct src_style {
    uint32_t exp_mask, exp_add, man_mask;
};

static struct src_style src_style_of(uint32_t style)
{
    struct src_style s = {0xFFu, 0, 0x7FE000u}; /* TF32: every bit */
    if (style == MATRIX_STYLE_FP16)
        s.exp_mask = 0x1Fu, s.exp_add = MATRIX_FP16_REBIAS;
    else if (style == MATRIX_STYLE_BF16)
        s.man_mask = 0x7F0000u;
    return s;
}

/* matrix.unit.read_src: a 19-bit Src datum (sign 18, mantissa 8..17, exponent 0..7) as fp32 bits;
 * exponent 0 reads as +0. */
static inline uint32_t read_src(uint32_t b, struct src_style s)
{
    uint32_t exp = b & s.exp_mask;
    uint32_t value = (b << 13 & SIGN32) | (exp + s.exp_add) << 23 | (b << 5 & s.man_mask);
    return exp ? value : 0;
}

/* matrix.unit.src_a_fidelity_bits / src_b_fidelity_bits: the mantissa slice a phase consumes, FTZ;
 * `odd`: the phase's bit for this operand. */
static inline float fidelity_slice(uint32_t u, uint32_t odd, uint32_t high, uint32_t low)
{
    return ftz(odd ? float_of(u) - float_of(u & low) : float_of(u & high));
}

static inline float slice_a(uint32_t u, uint32_t phase)
{
    return fidelity_slice(u, phase & MATRIX_FIDELITY_A_BIT, MATRIX_FIDELITY_A_HIGH, MATRIX_FIDELITY_A_LOW);
}

static inline float slice_b(uint32_t u, uint32_t phase)
{
    return fidelity_slice(u, phase & MATRIX_FIDELITY_B_BIT, MATRIX_FIDELITY_B_HIGH, MATRIX_FIDELITY_B_LOW);
}

/* Sixteen columns as four vectors of four (GCC / clang vector extensions: plain SSE2 on x86-64, one
 * IEEE fp32 operation per lane, as scalar code would do). */
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));
typedef uint32_t vu4 __attribute__((vector_size(16)));
enum { VECTORS = COLS / 4 };

static inline vu4 splat(uint32_t x)
{
    return (vu4){x, x, x, x};
}

/* ftz on four lanes. */
static inline vf4 ftz4(vf4 x)
{
    return (vf4)((vu4)(((vu4)x & splat(MATRIX_EXP32)) != 0) & (vu4)x);
}

/* How far below its datum's binade a nonzero slice can lie: an odd phase's slice is the datum's
 * mantissa bits the LOW mask clears, the least of them 2**(lowest cleared bit - 23) times the binade. */
static int32_t slice_drop(uint32_t odd, uint32_t low)
{
    return odd ? 23 - __builtin_ctz(~low & MAN32) : 0;
}

/* The SrcA (`a`) or SrcB fidelity slices of `n` (a multiple of 4) Src datums of a style and phase:
 * read_src then src_a_fidelity_bits / src_b_fidelity_bits, four at a time. A high slice keeps the
 * datum's exponent, so it is zero or normal already and needs no FTZ.
 * Returns whether every nonzero slice is at least 2**`least` (judged from the datums' exponents, so a
 * "no" can be wrong, never a "yes"). */
_Static_assert((MATRIX_FIDELITY_A_HIGH & MATRIX_EXP32) == MATRIX_EXP32, "a high slice keeps the exponent");
_Static_assert((MATRIX_FIDELITY_B_HIGH & MATRIX_EXP32) == MATRIX_EXP32, "a high slice keeps the exponent");

static int read_slices(const uint32_t *bits, uint32_t n, struct src_style s, uint32_t phase, int a, int32_t least,
                       vf4 *out)
{
    uint32_t odd = phase & (a ? MATRIX_FIDELITY_A_BIT : MATRIX_FIDELITY_B_BIT);
    uint32_t low_mask = a ? MATRIX_FIDELITY_A_LOW : MATRIX_FIDELITY_B_LOW;
    vu4 high = splat(a ? MATRIX_FIDELITY_A_HIGH : MATRIX_FIDELITY_B_HIGH), low = splat(low_mask);
    /* The least exponent field a nonzero datum may have (its slices then reach 2**least). */
    int32_t field = least + slice_drop(odd, low_mask) + 127 - (int32_t)s.exp_add;
    uint32_t floor = field <= 1 ? 0 : field > (int32_t)s.exp_mask ? s.exp_mask : (uint32_t)field - 1;
    vu4 below = {0}; /* bit 31: some field in 1 .. floor ((e - 1) wraps zero to the top) */
    for (uint32_t i = 0; i < n / 4; i++) {
        vu4 b;
        memcpy(&b, bits + 4 * i, sizeof b);
        vu4 exp = b & splat(s.exp_mask);
        below |= ((exp + s.exp_mask) & s.exp_mask) - floor;
        /* sign 18 -> 31, mantissa 8..17 -> 13..22 (BF16: the top 7 kept), exponent rebiased to 23..30 */
        vu4 value = (b << 13 & SIGN32) | (exp + s.exp_add) << 23 | (b << 5 & splat(s.man_mask));
        value &= ~(vu4)(exp == 0);
        out[i] = odd ? ftz4((vf4)value - (vf4)(value & low)) : (vf4)(value & high);
    }
    return field <= (int32_t)s.exp_mask && !((below[0] | below[1] | below[2] | below[3]) >> 31);
}

/* formats.dst16_to_bf16 / dst16_from_bf16: Dst16 BF16 is sign, mantissa(7), exponent(8). */
static inline uint32_t dst16_to_bf16(uint32_t x)
{
    return (x & 0x8000u) | (x & 0x00FFu) << 7 | (x & 0x7F00u) >> 8;
}

static inline uint32_t dst16_from_bf16(uint32_t x)
{
    return (x & 0x8000u) | (x & 0x007Fu) << 8 | (x & 0x7F80u) >> 7;
}

/* formats.dst16_from_fp16: Dst16 FP16 is sign, mantissa(10), exponent(5). */
static inline uint32_t dst16_from_fp16(uint32_t x)
{
    return (x & 0x8000u) | (x & 0x03FFu) << 5 | (x & 0x7C00u) >> 10;
}

/* matrix.unit.read_dst of raw bits (Dst32b for FP32, else Dst16b). */
static inline float read_dst(uint32_t bits, enum dst_mode mode)
{
    uint32_t plain;
    if (mode == DST_FP32) {
        plain = dst16_to_bf16(bits >> 16) << 16 | (bits & 0xFFFFu);
    } else if (mode == DST_BF16) {
        plain = dst16_to_bf16(bits & 0xFFFFu) << 16;
    } else { /* formats.fp16_to_fp32 of dst16_to_fp16: exponents 1..31 rebiased, 0 an fp32 denormal */
        uint32_t exp = bits & 0x1Fu;
        plain = (bits & 0x8000u) << 16 | (exp ? exp + MATRIX_FP16_REBIAS : 0) << 23 | (bits >> 5 & 0x3FFu) << 13;
    }
    return ftz(float_of(plain));
}

/* formats._round_magnitude with NEAREST_AWAY: drop the low `drop` bits, rounding half away. */
static inline uint32_t round_away(uint32_t mag, uint32_t drop)
{
    return (mag >> drop) + ((mag & ((1u << drop) - 1)) >= (1u << (drop - 1)));
}

/* matrix.unit.write_dst: a value as raw Dst bits (Dst32b for FP32, else Dst16b). */
static inline uint32_t write_dst(float x, enum dst_mode mode)
{
    uint32_t b = x != x ? MATRIX_CANONICAL_NAN : bits_of(ftz(x));
    if (mode == DST_FP32)
        return dst16_from_bf16(b >> 16) << 16 | (b & 0xFFFFu);
    if (mode == DST_BF16) { /* formats.fp32_to_bf16(NEAREST_AWAY): a NaN stays a quiet NaN */
        int nan = (b & MATRIX_EXP32) == MATRIX_EXP32 && (b & MAN32) != 0;
        uint32_t bf16 = nan ? (b >> 16 | 0x0040u) : ((b & SIGN32) >> 16 | round_away(b & MAG32, 16));
        return dst16_from_bf16(bf16 & 0xFFFFu);
    }
    /* formats.fp32_to_fp16(NEAREST_AWAY): flush below 2**-14, saturate above exponent 31 */
    int32_t exp = (int32_t)((b & MATRIX_EXP32) >> 23) - (int32_t)MATRIX_FP16_REBIAS;
    uint32_t safe = exp < 0 ? 0 : exp > 31 ? 31 : (uint32_t)exp;
    uint32_t mag = round_away(safe << 23 | (b & MAN32), 13);
    mag = exp <= 0 ? 0 : exp > 31 || mag > 0x7FFFu ? 0x7FFFu : mag;
    return dst16_from_fp16((b >> 16 & 0x8000u) | mag);
}

/* regs.read32 / read16 of access row i in `mode` (a constant where inlined), as a reader sees it: an
 * undefined row reads as 0. */
static inline __attribute__((always_inline)) void read_row(const struct copro_view *v, uint32_t r,
                                                           enum dst_mode mode, float out[COLS])
{
    const uint16_t *hi = v->dst + (uint64_t)r * COLS;
    if (mode == DST_FP32) {
        const uint16_t *lo = hi + BLOCK * COLS;
        uint32_t valid = v->dst_row_valid[r] && v->dst_row_valid[r + BLOCK] ? 0xFFFFFFFFu : 0;
        for (uint32_t j = 0; j < COLS; j++)
            out[j] = read_dst(((uint32_t)hi[j] << 16 | lo[j]) & valid, mode);
    } else {
        uint32_t valid = v->dst_row_valid[r] ? 0xFFFFu : 0;
        for (uint32_t j = 0; j < COLS; j++)
            out[j] = read_dst(hi[j] & valid, mode);
    }
}

static void read_dst_row(const struct copro_view *v, const struct dst_access *d, uint32_t i, float out[COLS])
{
    switch (d->mode) {
    case DST_FP32: read_row(v, d->row[i], DST_FP32, out); break;
    case DST_BF16: read_row(v, d->row[i], DST_BF16, out); break;
    case DST_FP16: read_row(v, d->row[i], DST_FP16, out); break;
    }
}

/* regs.write32 / write16 of access row i in `mode`: the row (both halves) is written whole and
 * becomes defined. */
static inline __attribute__((always_inline)) void write_row(struct copro_view *v, uint32_t r, enum dst_mode mode,
                                                            const float values[COLS])
{
    uint16_t *hi = v->dst + (uint64_t)r * COLS;
    if (mode == DST_FP32) {
        uint16_t *lo = hi + BLOCK * COLS;
        for (uint32_t j = 0; j < COLS; j++) {
            uint32_t bits = write_dst(values[j], mode);
            hi[j] = (uint16_t)(bits >> 16);
            lo[j] = (uint16_t)bits;
        }
        v->dst_row_valid[r] = v->dst_row_valid[r + BLOCK] = 1;
    } else {
        for (uint32_t j = 0; j < COLS; j++)
            hi[j] = (uint16_t)write_dst(values[j], mode);
        v->dst_row_valid[r] = 1;
    }
}

static void write_dst_row(struct copro_view *v, const struct dst_access *d, uint32_t i, const float values[COLS])
{
    switch (d->mode) {
    case DST_FP32: write_row(v, d->row[i], DST_FP32, values); break;
    case DST_BF16: write_row(v, d->row[i], DST_BF16, values); break;
    case DST_FP16: write_row(v, d->row[i], DST_FP16, values); break;
    }
}

/* ------------------------------------------------------------------------------ MVMUL */

/* matrix.unit.dot16 of `rows` SrcB rows: x[r][j] = FTZ(x + FTZ(b[r][k] * a[k][j])) for k = 0..15 in
 * order from +0. `exact`: no_underflow holds (every nonzero product is at least 2**-103), so no FTZ can
 * change anything and none is done (dot16's argument: every product and partial sum is then zero or a
 * normal multiple of 2**-126, and no -0 arises from a sum that starts at +0). Two rows at a time, each
 * column's sum in its own register lane. */
static void dot16(const vf4 a[K][VECTORS], const float b[][K], uint32_t rows, int exact, vf4 x[][VECTORS])
{
    for (uint32_t r = 0; r < rows; r += 2) {
        const float *b0 = b[r], *b1 = b[r + 1 < rows ? r + 1 : r];
        vf4 p0 = {0}, p1 = {0}, p2 = {0}, p3 = {0}, q0 = {0}, q1 = {0}, q2 = {0}, q3 = {0};
        if (exact) {
            for (uint32_t k = 0; k < K; k++) {
                vf4 u = {b0[k], b0[k], b0[k], b0[k]}, w = {b1[k], b1[k], b1[k], b1[k]};
                p0 = p0 + u * a[k][0], p1 = p1 + u * a[k][1], p2 = p2 + u * a[k][2], p3 = p3 + u * a[k][3];
                q0 = q0 + w * a[k][0], q1 = q1 + w * a[k][1], q2 = q2 + w * a[k][2], q3 = q3 + w * a[k][3];
            }
        } else {
            for (uint32_t k = 0; k < K; k++) {
                vf4 u = {b0[k], b0[k], b0[k], b0[k]}, w = {b1[k], b1[k], b1[k], b1[k]};
                p0 = ftz4(p0 + ftz4(u * a[k][0])), p1 = ftz4(p1 + ftz4(u * a[k][1]));
                p2 = ftz4(p2 + ftz4(u * a[k][2])), p3 = ftz4(p3 + ftz4(u * a[k][3]));
                q0 = ftz4(q0 + ftz4(w * a[k][0])), q1 = ftz4(q1 + ftz4(w * a[k][1]));
                q2 = ftz4(q2 + ftz4(w * a[k][2])), q3 = ftz4(q3 + ftz4(w * a[k][3]));
            }
        }
        x[r][0] = p0, x[r][1] = p1, x[r][2] = p2, x[r][3] = p3;
        if (r + 1 < rows)
            x[r + 1][0] = q0, x[r + 1][1] = q1, x[r + 1][2] = q2, x[r + 1][3] = q3;
    }
}

/* matrix.unit._multiply: MVMUL.md's model for `num_rows` Dst rows (8; GAPOOL's 4), BroadcastSrcBRow
 * `broadcast`. */
static int64_t multiply(struct copro_view *v, uint32_t t, int64_t cycle, uint32_t flips, uint32_t broadcast,
                        uint32_t num_rows, uint32_t addr_mode, uint32_t dst)
{
    struct mx_plan p;
    /* BroadcastSrcBRow: SrcB row RWC & 63 for rows 0, 2, 4, 6 of 7 (the mask 0x400 - 7 keeps bit 0). */
    uint32_t rows = broadcast ? BLOCK - 1 : num_rows, step = broadcast ? 2 : 1;
    int64_t go = plan(v, t, dst, addr_mode, flips, broadcast ? MATRIX_SRC_ROW_MASK : MATRIX_SRC_BLOCK_MASK, &p);
    if (go != PLAN_GO)
        return go;
    if (p.a_first + K > MATRIX_SRC_ROWS) /* SrcA rows past row 63: UndefinedBehavior */
        return NATIVE_DEFER;
    uint32_t first = first_dst_row(v, t, &p, dst, MATRIX_DST_ROWS - rows), written[BLOCK], count = 0;
    for (uint32_t r = 0; r < rows; r += step)
        written[count++] = first + r;
    struct dst_access d;
    dst_access(&d, p.mode, written, count, &p.c);
    if ((go = dst_stall(v, &d, cycle)) != PLAN_GO)
        return go;

    /* SrcA rows a_first.. and SrcB rows b_first.. are consecutive in their banks; with
     * BroadcastSrcBRow every written row has SrcB row b_first's products. */
    vf4 a[K][VECTORS], x[BLOCK][VECTORS];
    union {
        vf4 v[BLOCK * K / 4];
        float f[BLOCK][K];
    } b;
    float old[COLS], sum[COLS];
    uint32_t b_rows = broadcast ? 1 : count;
    struct src_style style = src_style_of(p.style);
    const uint32_t *a_bits = src_row(v, MATRIX_SRCA, p.a_first), *b_bits = src_row(v, MATRIX_SRCB, p.b_first);
    /* matrix.unit.no_underflow, conservatively: every nonzero product is at least 2**SAFE_PRODUCT_EXP
     * if every nonzero SrcA slice is at least 2**(half of it) and every SrcB one 2**(the rest); a false
     * "no" only costs the FTZ path, which gives the same sums. */
    int32_t half = MATRIX_SAFE_PRODUCT_EXP / 2;
    int exact = read_slices(a_bits, K * COLS, style, p.phase, 1, half, &a[0][0]);
    exact &= read_slices(b_bits, b_rows * K, style, p.phase, 0, MATRIX_SAFE_PRODUCT_EXP - half, b.v);
    dot16((const vf4(*)[VECTORS])a, (const float(*)[K])b.f, b_rows, exact, x);
    for (uint32_t i = 0; i < count; i++) {
        memcpy(sum, x[broadcast ? 0 : i], sizeof sum);
        read_dst_row(v, &d, i, old);
        for (uint32_t j = 0; j < COLS; j++)
            old[j] = sum[j] + old[j];
        write_dst_row(v, &d, i, old);
    }
    return finish(v, t, &p, &d, cycle);
}

static int64_t mvmul(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t broadcast = F_MVMUL_INSTR_MOD19(word);
    if (broadcast >> MVMUL_MOD_BITS)
        return NATIVE_DEFER; /* ctx.documented("instr_mod19", 1) */
    return multiply(v, t, cycle, F_MVMUL_CLEAR_DVALID(word), broadcast, BLOCK, F_MVMUL_ADDR_MODE(word),
                    F_MVMUL_DST(word));
}

/* DOTPV: MVMUL without the broadcast (instr_mod19 0; dest_accum_en is in no documented field). */
static int64_t dotpv(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    if (F_DOTPV_INSTR_MOD19(word))
        return NATIVE_DEFER;
    return multiply(v, t, cycle, F_DOTPV_CLEAR_DVALID(word), 0, BLOCK, F_DOTPV_ADDR_MODE(word), F_DOTPV_DST(word));
}

/* GAPOOL: MVMUL.md's model over four rows (instr_mod19 0 or 1, accepted and ignored; no ArgMax).
 * Its AddrMod slot is Blackhole's pool_addr_mode, Wormhole's addr_mode. */
#ifdef TSIM_WORMHOLE
#define GAPOOL_ADDR_MODE(w) F_GAPOOL_ADDR_MODE(w)
#else
#define GAPOOL_ADDR_MODE(w) F_GAPOOL_POOL_ADDR_MODE(w)
#endif
enum { GAPOOL_ROWS = 4 };

static int64_t gapool(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    if (F_GAPOOL_INSTR_MOD19(word) >> 1 || F_GAPOOL_MAX_POOL_INDEX_EN(word))
        return NATIVE_DEFER; /* UndefinedBehavior */
    return multiply(v, t, cycle, F_GAPOOL_CLEAR_DVALID(word), 0, GAPOOL_ROWS, GAPOOL_ADDR_MODE(word),
                    F_GAPOOL_DST(word));
}

/* ------------------------------------------------------------------------------ ELWADD, ELWSUB, ELWMUL */

/* matrix.unit.elementwise of one pair of Src datums. */
static inline float elementwise(enum elw_op op, uint32_t a_bits, uint32_t b_bits, struct src_style style,
                                uint32_t phase)
{
    uint32_t a = read_src(a_bits, style), b = read_src(b_bits, style);
    if (op == ELW_MUL)
        return ftz(slice_a(a, phase) * slice_b(b, phase));
    float r = ftz(op == ELW_ADD ? float_of(a) + float_of(b) : float_of(a) - float_of(b));
    if (phase & MATRIX_FIDELITY_A_BIT) /* the page's divisions for odd fidelity bits, modelled as written */
        r = ftz(r / MATRIX_ELW_DIVISOR_A);
    if (phase & MATRIX_FIDELITY_B_BIT)
        r = ftz(r / MATRIX_ELW_DIVISOR_B);
    return r;
}

/* An element-wise instruction's operand slots. */
struct elw_fields {
    uint32_t flips, accumulate, broadcast, addr_mode, dst;
};

#define ELW_FIELDS(NAME, w)                                                                                \
    ((struct elw_fields){F_##NAME##_CLEAR_DVALID(w), F_##NAME##_DEST_ACCUM_EN(w), F_##NAME##_INSTR_MOD19(w), \
                         F_##NAME##_ADDR_MODE(w), F_##NAME##_DST(w)})

/* matrix.unit._elementwise; ELWMUL always accumulates (its dest_accum_en is ignored). */
static int64_t elw(struct copro_view *v, uint32_t t, struct elw_fields f, int64_t cycle, enum elw_op op)
{
    int add_dst = op == ELW_MUL || f.accumulate;
    uint32_t row_broadcast = f.broadcast & ELW_BROADCAST_ROW, col0 = f.broadcast & ELW_BROADCAST_COL0;
    uint32_t dst = f.dst;
    struct mx_plan p;
    int64_t go = plan(v, t, dst, f.addr_mode, f.flips, row_broadcast ? MATRIX_SRC_ROW_MASK : MATRIX_SRC_BLOCK_MASK, &p);
    if (go != PLAN_GO)
        return go;
    uint32_t first = first_dst_row(v, t, &p, dst, MATRIX_DST_ROWS - BLOCK), rows[BLOCK];
    for (uint32_t r = 0; r < BLOCK; r++)
        rows[r] = first + r;
    struct dst_access d;
    dst_access(&d, p.mode, rows, BLOCK, &p.c);
    if (add_dst && (go = dst_stall(v, &d, cycle)) != PLAN_GO)
        return go;

    float result[COLS], old[COLS];
    struct src_style style = src_style_of(p.style);
    for (uint32_t r = 0; r < BLOCK; r++) {
        const uint32_t *a = src_row(v, MATRIX_SRCA, p.a_first + r);
        const uint32_t *b = src_row(v, MATRIX_SRCB, row_broadcast ? p.b_first : p.b_first + r);
        for (uint32_t j = 0; j < COLS; j++)
            result[j] = elementwise(op, a[j], b[col0 ? 0 : j], style, p.phase);
        if (add_dst) {
            read_dst_row(v, &d, r, old);
            for (uint32_t j = 0; j < COLS; j++)
                result[j] = result[j] + old[j];
        }
        write_dst_row(v, &d, r, result);
    }
    return finish(v, t, &p, &d, cycle);
}

/* ------------------------------------------------------------------------------ ZEROACC */

/* regs.mark_undefined16 / mark_undefined32 of `count` rows from `first`. */
static void mark_undefined(struct copro_view *v, uint32_t first, uint32_t count, int wide,
                           const struct mx_config *c)
{
    for (uint32_t i = 0; i < count; i++) {
        uint32_t r = wide ? regs_adj32(first + i, c->remap, c->swizzle) : regs_adj16(first + i, c->remap);
        v->dst_row_valid[r] = 0;
        if (wide)
            v->dst_row_valid[r + BLOCK] = 0;
    }
}

/* regs._zeroacc (ZEROACC.md's model, both chips): Mode, UseDst32b, Imm10 and the AddrMod decoded. */
static int64_t zeroacc(struct copro_view *v, uint32_t t, uint32_t mode, uint32_t use32, uint32_t imm10,
                       uint32_t addr_mode)
{
    struct mx_config c;
    uint32_t rwcs[RWC_FIELDS];
    if (!read_config(v, t, &c))
        return NATIVE_DEFER;
    int one_row = mode == MATRIX_ZEROACC_ONE_ROW, sixteen = mode == MATRIX_ZEROACC_16_ROWS;
    if ((one_row || sixteen) && !adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    if (one_row) { /* one Dst32b row if the math is wide, else one Dst16b row */
        uint32_t row = (imm10 + c.math_offset + v->rwc[RWC_DST][t] + c.regw_base) & MATRIX_ROW_MASK;
        mark_undefined(v, row, 1, c.fp32 || c.int8, &c);
    } else if (sixteen) { /* out of range: nothing (the address modifier still applies) */
        uint32_t block = imm10 & 0xFF;
        if (use32) {
            if (block < MATRIX_DST32_ROWS / MATRIX_FACE_ROWS)
                mark_undefined(v, block * MATRIX_FACE_ROWS, MATRIX_FACE_ROWS, 1, &c);
        } else if (block < MATRIX_DST_ROWS / MATRIX_FACE_ROWS) {
            mark_undefined(v, block * MATRIX_FACE_ROWS, MATRIX_FACE_ROWS, 0, &c);
        }
    } else { /* half of Dst (imm10 bit 0 picks which) or all of it, in both views */
        uint32_t half = mode == MATRIX_ZEROACC_HALF_OF_DST;
        uint32_t high = half ? imm10 & 1 : 0, div = half ? 2 : 1;
        mark_undefined(v, high * (MATRIX_DST_ROWS / div), MATRIX_DST_ROWS / div, 0, &c);
        mark_undefined(v, high * (MATRIX_DST32_ROWS / div), MATRIX_DST32_ROWS / div, 1, &c);
    }
    if (one_row || sixteen)
        for (uint32_t i = 0; i < RWC_FIELDS; i++)
            v->rwc[i][t] = rwcs[i];
    return MATRIX_RETIRE_DEFAULT;
}

#ifdef TSIM_WORMHOLE
/* regs.zeroacc_wormhole: Mode bits 19..20 and UseDst32b 21 in clear_mode, AddrMod 15..16 and Revert 18
 * in addr_mode (bit 17 in no field), Imm10 in dst; Revert outside the one-row mode is undefined. */
enum { WH_ZEROACC_MODE_BITS = 3, WH_ZEROACC_NO_FIELD = 4, WH_ZEROACC_REVERT = 8 };

static int64_t zeroacc_word(struct copro_view *v, uint32_t t, uint32_t word)
{
    uint32_t mode = F_ZEROACC_CLEAR_MODE(word), addr_mode = F_ZEROACC_ADDR_MODE(word), imm10 = F_ZEROACC_DST(word);
    if (mode >> WH_ZEROACC_MODE_BITS || addr_mode & WH_ZEROACC_NO_FIELD || imm10 >> ZEROACC_WHERE_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (addr_mode & WH_ZEROACC_REVERT && (mode & 3) != MATRIX_ZEROACC_ONE_ROW)
        return NATIVE_DEFER; /* UndefinedBehavior */
    return zeroacc(v, t, mode & 3, mode >> 2 & 1, imm10, addr_mode & 3);
}
#else
static int64_t zeroacc_word(struct copro_view *v, uint32_t t, uint32_t word)
{
    uint32_t mode = F_ZEROACC_CLEAR_MODE(word), imm10 = F_ZEROACC_WHERE(word);
    if (mode >> ZEROACC_MODE_BITS || imm10 >> ZEROACC_WHERE_BITS || F_ZEROACC_CLEAR_ZERO_FLAGS(word))
        return NATIVE_DEFER; /* UndefinedBehavior, Unimplemented (clear_zero_flags) */
    return zeroacc(v, t, mode, F_ZEROACC_USE_32_BIT_MODE(word), imm10, F_ZEROACC_ADDR_MODE(word));
}
#endif

/* ------------------------------------------------------------------------------ dispatch */

int64_t matrix_mvmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return mvmul(v, thread, word, cycle);
}

int64_t matrix_elwadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return elw(v, thread, ELW_FIELDS(ELWADD, word), cycle, ELW_ADD);
}

int64_t matrix_elwsub(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return elw(v, thread, ELW_FIELDS(ELWSUB, word), cycle, ELW_SUB);
}

int64_t matrix_elwmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return elw(v, thread, ELW_FIELDS(ELWMUL, word), cycle, ELW_MUL);
}

int64_t matrix_dotpv(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return dotpv(v, thread, word, cycle);
}

int64_t matrix_gapool(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return gapool(v, thread, word, cycle);
}

int64_t matrix_zeroacc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)cycle;
    return zeroacc_word(v, thread, word);
}
