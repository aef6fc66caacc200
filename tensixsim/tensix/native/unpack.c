/* The unpackers: UNPACR as tensixsim/tensix/unpack/unit.py executes it, for the configurations kernels use.
 *
 * Executed here: the regular mode, in the single-context mode or MultiContextMode (the context from
 * ContextNumber or the context counter, plus CfgContextOffset; the ADC ContextADC names; the
 * context's Disable_zero_compress, Tile_x_dim, formats under Ovrd_data_format, base and offset,
 * Unpack_if_sel, Dest address and column shift; UseContextCounter's advance), for uncompressed FP32 /
 * TF32 / FP16 / BF16 / INT32 / INT16 / INT8 and block-float (BFP8 / BFP4 / BFP2 and their "a" forms:
 * the exponent section and its FIFO wrap, NoBFPExpSection, Force_shared_exp) input into SrcA, SrcB or
 * Dst, with Tileize_mode, Haloize_mode, the column shift, SetOvrdWithAddr, the FIFO wrap,
 * AllDatumsAreZero, FlipSrc and Unpack_Src_Reg_Set_Upd; the L1 fetch timing (both unpackers sharing
 * L1, BFP's speed limits), the FlipSrc hand-over at the fetch's end and the statistics; the waits for
 * an unpacker still fetching and for a bank not handed to the unpackers (NATIVE_WAIT, as Python
 * waits); and the IncrementContextCounter and FlushCache modes.
 *
 * Deferred to Python, before anything is written: every case unpack/unit.py raises on (undocumented
 * operand bits, srcb_bcast, RowSearch, ContextADC 3, unpacker 1 in a context >= 2, compressed input,
 * upsampling, format codes naming no format, undefined conversions, BFP*a datums whose exponent FP16
 * cannot hold, sub-byte datums in Tileize_mode, misaligned output addresses, L1 reads of datums or
 * exponents outside L1, SrcA rows beyond the bank, the context counter's Context_count_non_log2_en
 * wrap), Blackhole's FP8 input (Python has no model), more datums than COUNT_LIMIT, and a fetch that
 * slows down the other unpacker's fetch issued by another pipe (Python must tell the tile that
 * pipe's done cycle moved: Tile.pipe_progress).
 *
 * Addresses are in sixteenths of a byte, as unpack/unit.py keeps them. The datums' format conversion
 * is in unpack_convert.h, the L1 fetch's timing in unpack_fetch.h.
 *
 * Wormhole's library (TSIM_WORMHOLE) runs UNPACR with Wormhole's readings (unpack/wormhole.py: 16
 * datums an input row in Tileize_mode for every format, sub-byte datums allowed there, FP8 (e5m2)
 * input, Upsample_rate 1 with or without Upsample_and_interleave, no Context_count_non_log2_en, Dst
 * without remap or swizzle) over its configuration layout; bit 5 is its rareb_en, deferred as
 * srcb_bcast is. Its other upsampling rates defer.
 */
#include "ops.h"
#include "regs.h"
#include "unpack_convert.h"
#include "unpack_fetch.h"

enum { UNITS = FETCH_UNITS, BANKS = 2, CFG_STATES = 2 };
enum { SRC_COLS = 16, DST_COLS = 16, DST_LOW_HALF = 8 };
enum { SIXTEENTHS = 16, SIXTEENTHS_PER_WORD = 256 }; /* a byte, a 16-byte word, in sixteenths */
/* SrcA's first row is output row 4: the unpacker's rows 0..3 address nothing in SrcA (unpack/unit.py). */
enum { SRCA_ROW_OFFSET = 4, SRCA_WINDOW_ROWS = 16 };
enum { SRC_ROW_MASK = UNPACK_SRC_ROWS - 1, DST_OVRD_ROW_MASK = 15 };
/* More datums than any tile holds: such a count defers (unpack/unit.py builds arrays that large). */
enum { COUNT_LIMIT = 4096 };
/* An input address (sixteenths) beyond this is far outside L1: it defers before any arithmetic
 * on it could overflow. */
#define ADDR_LIMIT ((int64_t)1 << 48)

/* Word bit 5: Blackhole's srcb_bcast, Wormhole's rareb_en; neither has a model here (Python raises). */
#ifdef TSIM_WORMHOLE
#define BIT5(w) F_UNPACR_RAREB_EN(w)
#else
#define BIT5(w) F_UNPACR_SRCB_BCAST(w)
#endif

struct field_spec {
    uint32_t word, shift, mask;
};
static const struct field_spec config_specs[UNITS][UNPACK_FIELD_COUNT] = UNPACK_FIELD_SPECS;
static const struct field_spec thread_specs[UNITS][UNPACK_THREAD_FIELD_COUNT] = UNPACK_THREAD_FIELD_SPECS;
static const struct field_spec context_specs[UNITS][UNPACK_CONTEXT_FIELD_COUNT][UNPACK_CONTEXTS] =
    UNPACK_CONTEXT_FIELD_SPECS;
static const uint32_t datum_sixteenths[16] = UNPACK_DATUM_SIXTEENTHS;

/* The issuing pipe's view of one unpacker's configuration (unpack/unit.py _cfg / _unp / thread_field);
 * `ok` drops to 0 if a field lies beyond the arrays. */
struct reader {
    const struct copro_view *v;
    uint32_t thread, unit, state;
    int ok;
};

static uint32_t cfg(struct reader *r, uint32_t index)
{
    const struct field_spec *s = &config_specs[r->unit][index];
    if (s->word >= r->v->config_words) {
        r->ok = 0;
        return 0;
    }
    return (r->v->config[(uint64_t)r->state * r->v->config_words + s->word] & s->mask) >> s->shift;
}

static uint32_t thread_cfg(struct reader *r, uint32_t index)
{
    const struct field_spec *s = &thread_specs[r->unit][index];
    if (s->word >= r->v->thread_config_words) {
        r->ok = 0;
        return 0;
    }
    return (r->v->thread_config[(uint64_t)r->thread * r->v->thread_config_words + s->word] & s->mask) >> s->shift;
}

/* Field `index` of configuration context `context` (UCF_*: the field unpack/unit.py reads for it). */
static uint32_t context_cfg(struct reader *r, uint32_t index, uint32_t context)
{
    const struct field_spec *s = &context_specs[r->unit][index][context];
    if (s->word >= r->v->config_words) {
        r->ok = 0;
        return 0;
    }
    return (r->v->config[(uint64_t)r->state * r->v->config_words + s->word] & s->mask) >> s->shift;
}

/* A Config field outside the unpacker tables (CFG_* from constants.h). */
static uint32_t cfg_word_field(struct reader *r, uint32_t word, uint32_t shift, uint32_t mask)
{
    if (word >= r->v->config_words) {
        r->ok = 0;
        return 0;
    }
    return (r->v->config[(uint64_t)r->state * r->v->config_words + word] & mask) >> shift;
}

/* The Config state the pipe's CFG_STATE_ID selects; 0 when it names none (Python fails then). */
static int reader_init(struct reader *r, const struct copro_view *v, uint32_t thread, uint32_t unit)
{
    r->v = v;
    r->thread = thread;
    r->unit = unit;
    r->ok = 1;
    if (THD_CFG_STATE_ID_STATEID_REG >= v->thread_config_words)
        return 0;
    uint32_t reg = v->thread_config[(uint64_t)thread * v->thread_config_words + THD_CFG_STATE_ID_STATEID_REG];
    r->state = (reg & THD_CFG_STATE_ID_STATEID_MASK) >> THD_CFG_STATE_ID_STATEID_SHIFT;
    return r->state < CFG_STATES;
}

/* ------------------------------------------------------------------------------ datum placement */

/* Everything the regular mode decided before its first store. */
struct plan {
    uint32_t unit, thread, bank, which_adc;
    uint32_t in_fmt, out_fmt, size16, is_unsigned, shared_exp;
    int to_dst, transpose, set_ovrd, wide_out, all_zero, remap, swizzle;
    int read_exps; /* BFP input whose exponents are read from L1 (no Force_shared_exp) */
    int zero_slot; /* Upsample_rate 1 without interleave: a zero follows each datum */
    int64_t datum_addr, exp_addr, limit, fifo, row_stride, out_addr, count, step;
    uint32_t row_width, col_shift, src_row;
};

static int64_t wrap(const struct plan *p, int64_t addr) { return addr > p->limit ? addr - p->fifo : addr; }

/* Walks the datums in the page's order: the input address of each (a row of row_width datums, the
 * next row row_stride on with the FIFO wrap at its start) and of its BFP exponent (a sixteenth of a
 * byte on per datum, the FIFO wrap at each 16-byte boundary: unpack.convert.exponent_addresses). */
struct cursor {
    int64_t row_start, addr, exp;
    uint32_t in_row;
    int64_t index;
};

static void cursor_init(struct cursor *c, const struct plan *p)
{
    c->row_start = c->addr = p->datum_addr;
    c->exp = p->exp_addr;
    c->in_row = 0;
    c->index = 0;
}

static void cursor_next(struct cursor *c, const struct plan *p)
{
    c->index++;
    if (!(++c->exp & (SIXTEENTHS_PER_WORD - 1)))
        c->exp = wrap(p, c->exp);
    if (++c->in_row == p->row_width) {
        c->in_row = 0;
        c->row_start = wrap(p, c->row_start + p->row_stride);
        c->addr = c->row_start;
    } else {
        c->addr += p->size16;
    }
}

/* Where output slot `slot` goes (a datum's slot is its index times the upsampling step; the inserted
 * zero takes the next): *row / *col of the Src bank or of Dst16b / Dst32b; 0 when SrcA drops it
 * (output rows 0..3, columns before the shift), -1 when unpack/unit.py raises for it. */
static int place(const struct plan *p, int64_t slot, int64_t *row, uint32_t *col)
{
    int64_t out = p->out_addr + slot;
    int64_t r = out >> 4;
    uint32_t c = (uint32_t)(out & 15);
    if (p->unit == 1) {
        *row = (r + p->src_row) & SRC_ROW_MASK;
        *col = c;
        return 1;
    }
    if (p->to_dst) {
        *row = (r - SRCA_ROW_OFFSET) & (p->set_ovrd ? DST_OVRD_ROW_MASK : REGS_ROW_MASK);
        *col = c;
        return 1;
    }
    if (r < SRCA_ROW_OFFSET || c < p->col_shift)
        return 0;
    r -= SRCA_ROW_OFFSET;
    c -= p->col_shift;
    if (p->set_ovrd) {
        if (r >= UNPACK_SRC_ROWS)
            return -1;
    } else {
        if (r >= SRCA_WINDOW_ROWS || r + p->src_row >= UNPACK_SRC_ROWS)
            return -1;
        r += p->src_row;
    }
    if (p->transpose) {
        int64_t t = (r & ~(int64_t)0xF) | c;
        c = (uint32_t)(r & 0xF);
        r = t;
    }
    *row = r;
    *col = c;
    return 1;
}

/* ReadL1Bytes of one datum (unpack.convert.gather_bits, little-endian); the caller checked the range.
 * A BFP4 / BFP2 datum is a nibble or a bit pair of one byte: its address (in half-bits) is a multiple
 * of its size, and a whole-byte datum's starts a byte. */
static uint32_t read_datum(const struct copro_view *v, int64_t addr16, uint32_t size16)
{
    if (size16 < SIXTEENTHS) {
        uint64_t bit = (uint64_t)addr16 >> 1;
        return (uint32_t)(v->l1[bit >> 3] >> (bit & 7)) & ((1u << (size16 >> 1)) - 1);
    }
    const uint8_t *b = v->l1 + addr16 / SIXTEENTHS;
    uint32_t value = 0;
    for (uint32_t k = 0; k < size16 / SIXTEENTHS; k++)
        value |= (uint32_t)b[k] << (8 * k);
    return value;
}

/* Dst row `row` of DstBits gets `value` in column `col`; an undefined row becomes defined first, its
 * other datums zero (regs.py's row validity). */
static void dst_store(struct copro_view *v, uint32_t row, uint32_t col, uint32_t value)
{
    if (!v->dst_row_valid[row]) {
        for (uint32_t i = 0; i < DST_COLS; i++)
            v->dst[row * DST_COLS + i] = 0;
        v->dst_row_valid[row] = 1;
    }
    v->dst[row * DST_COLS + col] = (uint16_t)value;
}

/* Output slot `slot` gets the converted `datum` (Src's 19 bits, or Dst's 16 / 32). */
static void store(struct copro_view *v, const struct plan *p, uint32_t *src, int64_t slot, uint32_t datum)
{
    int64_t row;
    uint32_t col;
    if (place(p, slot, &row, &col) <= 0)
        return;
    if (!p->to_dst) {
        src[(uint64_t)row * SRC_COLS + col] = datum & UNPACK_SRC_MASK;
    } else if (p->wide_out) {
        uint32_t high = regs_adj32((uint32_t)row, (uint32_t)p->remap, (uint32_t)p->swizzle);
        dst_store(v, high, col, datum >> 16);
        dst_store(v, high + DST_LOW_HALF, col, datum & 0xFFFF);
    } else {
        dst_store(v, regs_adj16((uint32_t)row, (uint32_t)p->remap), col, datum & 0xFFFF);
    }
}

/* ------------------------------------------------------------------------------ UNPACR */

/* unpack.unit._advance_counter; -1 when Python raises (the non-log2 wrap is not modelled; Wormhole has
 * no such field, which reads 0 here). */
static int64_t advance_counter(struct reader *r, uint32_t current)
{
    if (cfg(r, UF_CONTEXT_COUNT_NON_LOG2_EN))
        return -1;
    uint32_t next = (current + 1) & (UNPACK_CONTEXTS - 1);
    return next >= 1u << cfg(r, UF_CONTEXT_COUNT) ? 0 : next;
}

static int64_t increment_context_counter(struct copro_view *v, uint32_t thread, uint32_t unit)
{
    struct reader r;
    if (!reader_init(&r, v, thread, unit))
        return NATIVE_DEFER;
    uint8_t *counter = v->context_counter + unit * v->threads + thread;
    int64_t next = advance_counter(&r, *counter);
    if (next < 0 || !r.ok)
        return NATIVE_DEFER;
    *counter = (uint8_t)next;
    return UNPACK_NOP_CYCLES;
}

/* unpack.unit._speed: 0 / 1 / 2 for x1 / x2 / x4 (Tileize_mode always x4, BFP2 x1, BFP4 into Dst and
 * Upsample_rate 1 at most x2, else Throttle_mode). */
static int8_t fetch_speed(struct reader *r, const struct plan *p, int tileize, uint32_t upsample)
{
    uint32_t throttle = cfg(r, UF_THROTTLE_MODE);
    int8_t speed = (int8_t)(throttle < 2 ? throttle : 2);
    if (tileize)
        return 2;
    if (p->in_fmt == UNPACK_FMT_BFP2 || p->in_fmt == UNPACK_FMT_BFP2A)
        return 0;
    if ((p->to_dst && (p->in_fmt == UNPACK_FMT_BFP4 || p->in_fmt == UNPACK_FMT_BFP4A)) || upsample == 1)
        return speed < 1 ? speed : 1;
    return speed;
}

/* Thread `thread`'s counters of `unit` (adc.AdcState.value[thread][unit]): channel 0, then channel 1. */
static uint32_t *unit_adc(struct copro_view *v, uint32_t thread, uint32_t unit)
{
    return v->adc_value + (uint64_t)thread * ADC_UNITS * ADC_CHANNELS * ADC_COORDS
           + (uint64_t)unit * ADC_CHANNELS * ADC_COORDS;
}

/* AddrMode's increments: Ch0ZInc [1:0], Ch0YInc [3:2], Ch1ZInc [5:4], Ch1YInc [7:6]. */
static void advance_adc(uint32_t *adc, uint32_t addr_mode)
{
    adc[1] = (adc[1] + (addr_mode >> 2 & 3)) & ADC_MASK_Y;
    adc[2] = (adc[2] + (addr_mode & 3)) & ADC_MASK_Z;
    adc[ADC_COORDS + 1] = (adc[ADC_COORDS + 1] + (addr_mode >> 6 & 3)) & ADC_MASK_Y;
    adc[ADC_COORDS + 2] = (adc[ADC_COORDS + 2] + (addr_mode >> 4 & 3)) & ADC_MASK_Z;
}

static int64_t regular(struct copro_view *v, uint32_t thread, uint32_t unit, uint32_t word, int64_t cycle)
{
    uint32_t addr_mode = F_UNPACR_ADDR_MODE(word);
    int multi = (int)F_UNPACR_OVRD_THREAD_ID(word);
    int use_counter = multi && F_UNPACR_AUTO_INC_CONTEXT_ID(word);
    struct reader r;
    if (!reader_init(&r, v, thread, unit))
        return NATIVE_DEFER;
    struct plan p = {0};
    p.unit = unit;
    p.thread = thread;
    p.which_adc = thread;
    p.all_zero = (int)F_UNPACR_ZERO_WRITE2(word);

    /* ---- the configuration context and the ADC (MultiContextMode: ContextNumber or the counter, plus
     * CfgContextOffset; ContextADC) */
    uint32_t context = 0;
    if (multi) {
        uint32_t number = use_counter ? v->context_counter[unit * v->threads + thread] : F_UNPACR_CFG_CONTEXT_ID(word);
        context = (number + thread_cfg(&r, UTF_UNPACK_MISC_CFG_CFGCONTEXTOFFSET)) & (UNPACK_CONTEXTS - 1);
        p.which_adc = F_UNPACR_ADDR_CNT_CONTEXT_ID(word);
        /* ContextADC 3, and unpacker 1's contexts >= 2: Python raises */
        if (p.which_adc == 3 || p.which_adc >= v->threads || (unit == 1 && context >= 2))
            return NATIVE_DEFER;
    }
    if (F_UNPACR_ROW_SEARCH(word))
        return NATIVE_DEFER; /* RowSearch: Unimplemented */

    /* ---- tile descriptor and formats */
    uint32_t d0 = cfg(&r, UF_DESC0), d1 = cfg(&r, UF_DESC1), d2 = cfg(&r, UF_DESC2), d3 = cfg(&r, UF_DESC3);
    int tileize = (int)cfg(&r, UF_TILEIZE_MODE);
    if (!(multi ? context_cfg(&r, UCF_DISABLE_ZERO_COMPRESS, context) : d0 >> 4 & 1))
        return NATIVE_DEFER; /* compressed input */
    int no_exp_section = (int)(d0 >> 5 & 1);
    int64_t x_dim = multi && unit == 0 ? context_cfg(&r, UCF_TILE_X_DIM, context) : d0 >> 16;
    int64_t y_dim = d1 & 0xFF;
    int64_t z_dim = (d1 >> 16 & 0xFF) ? (d1 >> 16 & 0xFF) : 1;
    int64_t w_dim = (d2 & 0xFF) ? (d2 & 0xFF) : 1;
    uint32_t digest = d3 >> 24;
    if (multi && cfg(&r, UF_OVRD_DATA_FORMAT)) {
        p.in_fmt = context_cfg(&r, UCF_IN_DATA_FORMAT, context);
        p.out_fmt = context_cfg(&r, UCF_OUT_DATA_FORMAT, context);
    } else {
        p.in_fmt = d0 & 0xF;
        p.out_fmt = cfg(&r, UF_OUT_DATA_FORMAT);
    }
    /* Codes 12 and 13 name no format; Blackhole's FP8 has no model (Python raises for both). */
    if (!datum_sixteenths[p.in_fmt] || !datum_sixteenths[p.out_fmt])
        return NATIVE_DEFER;
    if (!UNPACK_FP8_INPUT && (p.in_fmt == UNPACK_FMT_FP8 || p.out_fmt == UNPACK_FMT_FP8))
        return NATIVE_DEFER;
    p.size16 = datum_sixteenths[p.in_fmt];

    /* ---- input address (sixteenths): the context's base and offset (context 0's are the plain
     * fields), then BFP's exponent section (one byte per 16 datums, 16-byte aligned) before the datums */
    uint32_t base = context_cfg(&r, UCF_BASE_ADDRESS, context);
    uint32_t offset = context_cfg(&r, UCF_OFFSET_ADDRESS, context) & 0xFFFF;
    int64_t in_addr = ((int64_t)base + offset + 1 + digest) * SIXTEENTHS_PER_WORD, exp_addr = 0;
    p.read_exps = is_bfp(p.in_fmt) && !cfg(&r, UF_FORCE_SHARED_EXP);
    if (p.read_exps) {
        exp_addr = in_addr;
        if (p.in_fmt == UNPACK_FMT_BFP8 || p.in_fmt == UNPACK_FMT_BFP8A || !no_exp_section) {
            int64_t exponents = ceil_div(x_dim * y_dim * z_dim * w_dim, 16);
            in_addr += ceil_div(exponents, 16) * SIXTEENTHS_PER_WORD;
        }
    }
    /* X, Y and the X end come from the chosen ADC; Z, W and the output's Y / Z / W from the pipe's. */
    const uint32_t *which = unit_adc(v, p.which_adc, unit), *own = unit_adc(v, thread, unit);
    const uint32_t *ch1 = own + ADC_COORDS;
    int64_t x_pos = which[0], x_end = (int64_t)which[ADC_COORDS] + 1;
    if (x_end < x_pos || x_end - x_pos > COUNT_LIMIT)
        return NATIVE_DEFER;
    p.count = x_end - x_pos;
    unsigned __int128 first = (((unsigned __int128)own[3] * z_dim + own[2]) * y_dim + which[1]) * x_dim + x_pos;
    if (first >= (unsigned __int128)(ADDR_LIMIT / 64))
        return NATIVE_DEFER;
    p.datum_addr = in_addr + (int64_t)first * p.size16;
    p.limit = (int64_t)cfg(&r, UF_UNPACK_LIMIT_ADDRESS) * SIXTEENTHS_PER_WORD;
    p.fifo = (int64_t)cfg(&r, UF_UNPACK_FIFO_SIZE) * SIXTEENTHS_PER_WORD;
    p.datum_addr = wrap(&p, p.datum_addr);
    p.exp_addr = wrap(&p, exp_addr + (int64_t)first);
    if (tileize) {
        if (p.size16 < SIXTEENTHS && !UNPACK_TILEIZE_SUB_BYTE)
            return NATIVE_DEFER; /* Blackhole: sub-byte datums in Tileize_mode are undefined */
        /* Blackhole reads 32 datums a row for formats wider than a byte (Wormhole: 16) */
        p.row_width = p.size16 > SIXTEENTHS ? UNPACK_TILEIZE_ROW_WIDE : UNPACK_TILEIZE_ROW_NARROW;
        p.row_stride = (int64_t)SIXTEENTHS_PER_WORD
                       * (cfg(&r, UF_SHIFT_AMOUNT_CNTX0) | cfg(&r, UF_SHIFT_AMOUNT_CNTX1) << 4
                          | cfg(&r, UF_SHIFT_AMOUNT_CNTX2) << 8);
    } else {
        p.row_width = 16;
        p.row_stride = (int64_t)p.size16 * 16;
    }

    /* ---- output address */
    if (unit == 0) {
        p.to_dst = (int)(multi ? context_cfg(&r, UCF_UNPACK_IF_SEL, context) : cfg(&r, UF_UNPACK_IF_SEL));
        p.transpose = (int)cfg(&r, UF_HALOIZE_MODE);
    }
    if (p.count && !conversion_defined(p.in_fmt, p.out_fmt, p.to_dst))
        return NATIVE_DEFER; /* without datums nothing is converted */
    p.out_addr = (int64_t)cfg(&r, UF_UNP_ADDR_BASE_REG_1_BASE)
                 + (int64_t)ch1[1] * cfg(&r, UF_UNP_ADDR_CTRL_XY_REG_1_YSTRIDE)
                 + (int64_t)ch1[2] * cfg(&r, UF_UNP_ADDR_CTRL_ZW_REG_1_ZSTRIDE)
                 + (int64_t)ch1[3] * cfg(&r, UF_UNP_ADDR_CTRL_ZW_REG_1_WSTRIDE);
    uint32_t align = is_wide(p.out_fmt) ? 2 : is_half(p.out_fmt) ? 1 : 0;
    if (p.out_addr & ((1 << align) - 1))
        return NATIVE_DEFER;
    p.out_addr >>= align;
    if (multi && unit == 0) { /* the context's Dst address: added for Dst (or add_dest_addr_cntr), else it */
        int64_t dest = context_cfg(&r, UCF_DEST_ADDRESS, context);
        p.out_addr = p.to_dst || cfg(&r, UF_UNP_ADD_DEST_ADDR_CNTR_ADD_DEST_ADDR_CNTR) ? p.out_addr + dest : dest;
    }
    uint32_t upsample = cfg(&r, UF_UPSAMPLE_RATE);
    if (upsample && (tileize || upsample != 1 || !UNPACK_UPSAMPLE_ONE))
        return NATIVE_DEFER; /* the rates Python does not model, or undefined with Tileize_mode */
    p.step = upsample + 1;
    p.zero_slot = upsample && !cfg(&r, UF_UPSAMPLE_AND_INTERLEAVE);
    p.col_shift = unit == 1 || tileize ? 0 : context_cfg(&r, UCF_SHIFT_AMOUNT, context);
    if ((p.transpose || tileize) && (p.datum_addr & (SIXTEENTHS_PER_WORD - 1)))
        return NATIVE_DEFER;
    if (p.to_dst && (p.col_shift || p.transpose))
        return NATIVE_DEFER;

    /* ---- the bank, the pipe's SrcRow, the datums' checks and values */
    p.bank = v->unpacker_bank[unit];
    if (p.bank >= BANKS)
        return NATIVE_DEFER;
    if (p.count && v->src_client[unit * BANKS + p.bank] != UNPACK_CLIENT_UNPACKERS)
        return native_wait(v, WAIT_UNPACKER_BANK, -1, unit * BANKS + p.bank);
    p.set_ovrd = (int)thread_cfg(&r, UTF_SRCA_SET_SETOVRDWITHADDR);
    p.src_row = v->unpacker_src_row[unit * v->threads + thread];
    p.is_unsigned = cfg(&r, UF_ALU_FORMAT_SPEC_REG0_SRCXUNSIGNED);
    p.shared_exp = cfg(&r, UF_UNP_FORCED_SHARED_EXP_SHARED_EXP);
    p.wide_out = is_wide(p.out_fmt);
#ifdef TSIM_WORMHOLE /* Dst rows map as Dst.md's AdjRow: no remap or swizzle (regs.dst_mapping) */
    p.remap = p.swizzle = 0;
#else
    p.remap = (int)cfg_word_field(&r, CFG_DEST_ACCESS_CFG_REMAP_ADDRS_WORD, CFG_DEST_ACCESS_CFG_REMAP_ADDRS_SHIFT,
                                  CFG_DEST_ACCESS_CFG_REMAP_ADDRS_MASK);
    p.swizzle = (int)cfg_word_field(&r, CFG_DEST_ACCESS_CFG_SWIZZLE_32B_WORD, CFG_DEST_ACCESS_CFG_SWIZZLE_32B_SHIFT,
                                    CFG_DEST_ACCESS_CFG_SWIZZLE_32B_MASK);
#endif
    uint32_t set_base = thread_cfg(&r, UTF_SRCX_SET_BASE) << 4;
    uint32_t set_upd = cfg(&r, UF_UNPACK_SRC_REG_SET_UPD);
    int8_t want = fetch_speed(&r, &p, tileize, upsample);
    int64_t next_counter = use_counter ? advance_counter(&r, context) : 0;
    if (!r.ok || next_counter < 0)
        return NATIVE_DEFER;
    uint32_t values[COUNT_LIMIT];
    int undefined = 0;
    struct cursor c;
    for (cursor_init(&c, &p); c.index < p.count; cursor_next(&c, &p)) {
        if (c.addr < 0 || c.addr >= ADDR_LIMIT || (uint64_t)((c.addr + p.size16 + 15) / SIXTEENTHS) > v->l1_size)
            return NATIVE_DEFER; /* MemoryFault */
        uint32_t exp = p.shared_exp;
        if (p.read_exps) {
            if (c.exp < 0 || c.exp >= ADDR_LIMIT || (uint64_t)(c.exp / SIXTEENTHS) >= v->l1_size)
                return NATIVE_DEFER; /* MemoryFault */
            exp = v->l1[c.exp / SIXTEENTHS];
        }
        uint32_t bits = read_datum(v, c.addr, p.size16);
        uint32_t datum = convert(p.in_fmt, p.out_fmt, p.to_dst, p.is_unsigned, bits, exp, &undefined);
        values[c.index] = p.all_zero ? 0 : datum;
        int64_t row, slot = c.index * p.step;
        uint32_t col;
        if (place(&p, slot, &row, &col) < 0 || (p.zero_slot && place(&p, slot + 1, &row, &col) < 0))
            return NATIVE_DEFER; /* UndefinedBehavior: a SrcA row beyond the bank */
    }
    if (undefined)
        return NATIVE_DEFER; /* UndefinedBehavior: a BFP*a datum beyond FP16's exponents */

    /* ---- the fetch (still nothing written) */
    struct fetch f[UNITS];
    load_fetch(v, 0, &f[0]);
    load_fetch(v, 1, &f[1]);
    uint32_t other = 1 - unit;
    int64_t other_end = f[other].end, other_thread = v->unpack_thread[other];
    int64_t start = cycle + UNPACK_ADDRESS_CYCLES;
    int both = start_fetch(f, unit, start, p.count * p.size16 / SIXTEENTHS, want);
    if (!both || (v->pipe_state && thread >= v->pipe_count))
        return NATIVE_DEFER;
    int other_moved = f[other].end != other_end;
    if (other_moved && v->pipe_state && other_thread >= 0
        && ((uint64_t)other_thread >= v->pipe_count || other_thread != thread))
        return NATIVE_DEFER; /* another pipe's done cycle moves: Python tells the tile */

    /* ---- commit */
    int64_t end = f[unit].end;
    store_fetch(v, unit, &f[unit]);
    v->unpack_fetches[unit]++;
    v->unpack_fetch_cycles[unit] += end - start;
    v->unpack_thread_cycles[unit * v->threads + thread] += end - start;
    v->unpack_thread[unit] = (int8_t)thread;
    if (both == 2) { /* the newcomer shares L1 with it from `start` on */
        store_fetch(v, other, &f[other]);
        v->unpack_fetch_cycles[other] += f[other].end - other_end;
        if (other_thread >= 0 && (uint64_t)other_thread < v->threads)
            v->unpack_thread_cycles[other * v->threads + other_thread] += f[other].end - other_end;
    }
    if (other_moved) {
        for (uint32_t b = 0; b < BANKS; b++) /* its FlipSrc waits for its data */
            if (v->src_handover_at[other * BANKS + b] == other_end)
                v->src_handover_at[other * BANKS + b] = f[other].end;
        extend_done(v, other_thread, f[other].end);
    }
    extend_done(v, thread, end);
    uint32_t *src = (unit ? v->srcb : v->srca) + (uint64_t)p.bank * UNPACK_SRC_ROWS * SRC_COLS;
    for (int64_t i = 0; i < p.count; i++) {
        store(v, &p, src, i * p.step, values[i]);
        if (p.zero_slot)
            store(v, &p, src, i * p.step + 1, 0);
    }
    if (use_counter)
        v->context_counter[unit * v->threads + thread] = (uint8_t)next_counter;
    advance_adc(unit_adc(v, thread, unit), addr_mode);
    if (p.which_adc != thread)
        advance_adc(unit_adc(v, p.which_adc, unit), addr_mode);
    uint32_t *src_row = v->unpacker_src_row + unit * v->threads + thread;
    if (F_UNPACR_SET_DAT_VALID(word)) {
        /* FlipSrc: the matrix unit sees the bank once the data has landed (end > cycle always);
         * the unpacker goes on with the other bank at once. */
        v->src_handover_at[unit * BANKS + p.bank] = end;
        v->unpacker_bank[unit] ^= 1;
        *src_row = set_base;
    } else if (set_upd) {
        *src_row += 16 + set_base;
    }
    return UNPACK_ADDRESS_CYCLES;
}

int64_t unpack_unpacr(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t unit = F_UNPACR_UNPACK_BLOCK_SELECTION(word);
    if (v->unpack_end[unit] > cycle)
        return native_wait(v, WAIT_UNPACKER_FETCHING, v->unpack_end[unit], unit);
    /* The operands the IncrementContextCounter and FlushCache modes require to be zero. */
    uint32_t others = F_UNPACR_ADDR_MODE(word) | F_UNPACR_CFG_CONTEXT_ID(word) | F_UNPACR_ADDR_CNT_CONTEXT_ID(word)
                      | F_UNPACR_SET_DAT_VALID(word) | BIT5(word) | F_UNPACR_ZERO_WRITE2(word)
                      | F_UNPACR_AUTO_INC_CONTEXT_ID(word) | F_UNPACR_ROW_SEARCH(word) | F_UNPACR_LAST(word);
    uint32_t increment = F_UNPACR_CFG_CONTEXT_CNT_INC(word), flush = F_UNPACR_SEARCH_CACHE_FLUSH(word);
    if (increment) {
        if (increment > 1 || others || F_UNPACR_OVRD_THREAD_ID(word) || flush)
            return NATIVE_DEFER;
        return increment_context_counter(v, thread, unit);
    }
    if (flush)
        return others ? NATIVE_DEFER : UNPACK_NOP_CYCLES; /* the row start cache is not modelled */
    if (BIT5(word))
        return NATIVE_DEFER;
    return regular(v, thread, unit, word, cycle);
}
