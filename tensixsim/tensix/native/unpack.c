/* The unpackers: UNPACR as tensixsim/tensix/unpack/unit.py executes it, for the configurations kernels use.
 *
 * Executed here: the regular mode with MultiContextMode clear (one configuration context, the
 * issuing pipe's ADCs) for uncompressed FP32 / TF32 / FP16 / BF16 / INT32 / INT16 / INT8 input into
 * SrcA, SrcB or Dst, with Tileize_mode, Haloize_mode, the column shift, SetOvrdWithAddr, the FIFO
 * wrap, AllDatumsAreZero, FlipSrc and Unpack_Src_Reg_Set_Upd; the L1 fetch timing (both unpackers
 * sharing L1), the FlipSrc hand-over at the fetch's end and the statistics; and the
 * IncrementContextCounter and FlushCache modes.
 *
 * Deferred to Python, before anything is written: every case unpack/unit.py waits on (the unpacker still
 * fetching, the bank not handed to the unpackers) or raises on (undocumented operand bits, srcb_bcast,
 * RowSearch, compressed input, upsampling, undefined conversions, misaligned output addresses, L1
 * reads outside L1, SrcA rows beyond the bank, Context_count_non_log2_en), MultiContextMode, BFP and
 * FP8 input, and a fetch that slows down the other unpacker's fetch issued by another pipe (Python
 * must tell the tile that pipe's done cycle moved: Tile.pipe_progress).
 *
 * Addresses are in sixteenths of a byte, as unpack/unit.py keeps them. The datums' format conversion
 * is in unpack_convert.h, the L1 fetch's timing in unpack_fetch.h.
 *
 * Wormhole's library (TSIM_WORMHOLE) runs UNPACR with Wormhole's readings (unpack/wormhole.py: 16
 * datums an input row in Tileize_mode for every format, no Context_count_non_log2_en, Dst without
 * remap or swizzle) over its configuration layout; bit 5 is its rareb_en, deferred as srcb_bcast is.
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
    uint32_t unit, thread, bank;
    uint32_t in_fmt, out_fmt, size16, is_unsigned;
    int to_dst, transpose, set_ovrd, wide_out, all_zero, remap, swizzle;
    int64_t datum_addr, limit, fifo, row_stride, out_addr, count;
    uint32_t row_width, col_shift, src_row;
};

static int64_t wrap(const struct plan *p, int64_t addr) { return addr > p->limit ? addr - p->fifo : addr; }

/* Walks the datums in the page's order: the input address of each (a row of row_width datums, the
 * next row row_stride on with the FIFO wrap at its start) and where it lands. */
struct cursor {
    int64_t row_start, addr;
    uint32_t in_row;
    int64_t index;
};

static void cursor_init(struct cursor *c, const struct plan *p)
{
    c->row_start = c->addr = p->datum_addr;
    c->in_row = 0;
    c->index = 0;
}

static void cursor_next(struct cursor *c, const struct plan *p)
{
    c->index++;
    if (++c->in_row == p->row_width) {
        c->in_row = 0;
        c->row_start = wrap(p, c->row_start + p->row_stride);
        c->addr = c->row_start;
    } else {
        c->addr += p->size16;
    }
}

/* Where datum `index` goes: *row / *col of the Src bank or of Dst16b / Dst32b; 0 when SrcA drops it
 * (output rows 0..3, columns before the shift), -1 when unpack/unit.py raises for it. */
static int place(const struct plan *p, int64_t index, int64_t *row, uint32_t *col)
{
    int64_t out = p->out_addr + index;
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

/* ReadL1Bytes of one whole-byte datum (little-endian); the caller checked the range. */
static uint32_t read_datum(const struct copro_view *v, int64_t addr16, uint32_t size16)
{
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

/* ------------------------------------------------------------------------------ UNPACR */

/* unpack.unit._advance_counter; -1 when Python raises (the non-log2 wrap is not modelled). */
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

/* unpack.unit._speed: 0 / 1 / 2 for x1 / x2 / x4 (no BFP input reaches here). */
static int8_t fetch_speed(struct reader *r, int tileize)
{
    uint32_t throttle = cfg(r, UF_THROTTLE_MODE);
    if (tileize)
        return 2;
    return (int8_t)(throttle < 2 ? throttle : 2);
}

static int64_t regular(struct copro_view *v, uint32_t thread, uint32_t unit, uint32_t word, int64_t cycle)
{
    uint32_t addr_mode = F_UNPACR_ADDR_MODE(word);
    struct reader r;
    if (F_UNPACR_OVRD_THREAD_ID(word) || F_UNPACR_ROW_SEARCH(word) || !reader_init(&r, v, thread, unit))
        return NATIVE_DEFER; /* MultiContextMode: Python; RowSearch: Unimplemented */
    struct plan p = {0};
    p.unit = unit;
    p.thread = thread;
    p.all_zero = (int)F_UNPACR_ZERO_WRITE2(word);

    /* ---- tile descriptor and formats */
    uint32_t d0 = cfg(&r, UF_DESC0), d1 = cfg(&r, UF_DESC1), d3 = cfg(&r, UF_DESC3);
    uint32_t d2 = cfg(&r, UF_DESC2);
    int tileize = (int)cfg(&r, UF_TILEIZE_MODE);
    if (!(d0 >> 4 & 1))
        return NATIVE_DEFER; /* compressed input */
    int64_t x_dim = d0 >> 16, y_dim = d1 & 0xFF;
    int64_t z_dim = (d1 >> 16 & 0xFF) ? (d1 >> 16 & 0xFF) : 1;
    (void)d2; /* WDim only sizes BFP exponent sections */
    uint32_t digest = d3 >> 24;
    p.in_fmt = d0 & 0xF;
    p.out_fmt = cfg(&r, UF_OUT_DATA_FORMAT);
    p.size16 = datum_sixteenths[p.in_fmt];

    /* ---- input address (sixteenths) */
    int64_t in_addr = ((int64_t)cfg(&r, UF_BASE_ADDRESS) + (cfg(&r, UF_OFFSET_ADDRESS) & 0xFFFF) + 1 + digest)
                      * SIXTEENTHS_PER_WORD;
    const uint32_t *counters = v->adc_value + (uint64_t)thread * ADC_UNITS * ADC_CHANNELS * ADC_COORDS
                               + (uint64_t)unit * ADC_CHANNELS * ADC_COORDS;
    const uint32_t *ch0 = counters, *ch1 = counters + ADC_COORDS;
    int64_t x_pos = ch0[0], x_end = (int64_t)ch1[0] + 1;
    if (x_end < x_pos || x_end - x_pos > COUNT_LIMIT)
        return NATIVE_DEFER;
    p.count = x_end - x_pos;
    unsigned __int128 first = (((unsigned __int128)ch0[3] * z_dim + ch0[2]) * y_dim + ch0[1]) * x_dim + x_pos;
    if (first >= (unsigned __int128)(ADDR_LIMIT / 64))
        return NATIVE_DEFER;
    p.datum_addr = in_addr + (int64_t)first * p.size16;
    p.limit = (int64_t)cfg(&r, UF_UNPACK_LIMIT_ADDRESS) * SIXTEENTHS_PER_WORD;
    p.fifo = (int64_t)cfg(&r, UF_UNPACK_FIFO_SIZE) * SIXTEENTHS_PER_WORD;
    p.datum_addr = wrap(&p, p.datum_addr);
    if (tileize) {
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
        p.to_dst = (int)cfg(&r, UF_UNPACK_IF_SEL);
        p.transpose = (int)cfg(&r, UF_HALOIZE_MODE);
    }
    /* Without datums nothing is converted, but both formats must still name one (not FP8). */
    if (!p.size16 || p.in_fmt == UNPACK_FMT_FP8 || !datum_sixteenths[p.out_fmt] || p.out_fmt == UNPACK_FMT_FP8)
        return NATIVE_DEFER;
    if (p.count ? !conversion_defined(p.in_fmt, p.out_fmt, p.to_dst) : is_bfp(p.in_fmt))
        return NATIVE_DEFER;
    p.out_addr = (int64_t)cfg(&r, UF_UNP_ADDR_BASE_REG_1_BASE)
                 + (int64_t)ch1[1] * cfg(&r, UF_UNP_ADDR_CTRL_XY_REG_1_YSTRIDE)
                 + (int64_t)ch1[2] * cfg(&r, UF_UNP_ADDR_CTRL_ZW_REG_1_ZSTRIDE)
                 + (int64_t)ch1[3] * cfg(&r, UF_UNP_ADDR_CTRL_ZW_REG_1_WSTRIDE);
    uint32_t align = is_wide(p.out_fmt) ? 2 : is_half(p.out_fmt) ? 1 : 0;
    if (p.out_addr & ((1 << align) - 1))
        return NATIVE_DEFER;
    p.out_addr >>= align;
    if (cfg(&r, UF_UPSAMPLE_RATE))
        return NATIVE_DEFER;
    p.col_shift = unit == 1 || tileize ? 0 : cfg(&r, UF_SHIFT_AMOUNT_CNTX0);
    if ((p.transpose || tileize) && (p.datum_addr & (SIXTEENTHS_PER_WORD - 1)))
        return NATIVE_DEFER;
    if (p.to_dst && (p.col_shift || p.transpose))
        return NATIVE_DEFER;

    /* ---- the bank, the pipe's SrcRow, the datums' checks */
    p.bank = v->unpacker_bank[unit];
    if (p.bank >= BANKS)
        return NATIVE_DEFER;
    if (p.count && v->src_client[unit * BANKS + p.bank] != UNPACK_CLIENT_UNPACKERS)
        return native_wait(v, WAIT_UNPACKER_BANK, -1, unit * BANKS + p.bank);
    p.set_ovrd = (int)thread_cfg(&r, UTF_SRCA_SET_SETOVRDWITHADDR);
    p.src_row = v->unpacker_src_row[unit * v->threads + thread];
    p.is_unsigned = cfg(&r, UF_ALU_FORMAT_SPEC_REG0_SRCXUNSIGNED);
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
    int8_t want = fetch_speed(&r, tileize);
    if (!r.ok)
        return NATIVE_DEFER;
    uint32_t nbytes = p.size16 / SIXTEENTHS;
    struct cursor c;
    cursor_init(&c, &p);
    for (; c.index < p.count; cursor_next(&c, &p)) {
        if (c.addr < 0 || c.addr >= ADDR_LIMIT || (uint64_t)(c.addr / SIXTEENTHS) + nbytes > v->l1_size)
            return NATIVE_DEFER; /* MemoryFault */
        int64_t row;
        uint32_t col;
        if (place(&p, c.index, &row, &col) < 0)
            return NATIVE_DEFER; /* UndefinedBehavior: a SrcA row beyond the bank */
    }

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
    v->unpack_thread[unit] = (int8_t)thread;
    if (both == 2) { /* the newcomer shares L1 with it from `start` on */
        store_fetch(v, other, &f[other]);
        v->unpack_fetch_cycles[other] += f[other].end - other_end;
    }
    if (other_moved) {
        for (uint32_t b = 0; b < BANKS; b++) /* its FlipSrc waits for its data */
            if (v->src_handover_at[other * BANKS + b] == other_end)
                v->src_handover_at[other * BANKS + b] = f[other].end;
        extend_done(v, other_thread, f[other].end);
    }
    extend_done(v, thread, end);
    uint32_t *src = (unit ? v->srcb : v->srca) + (uint64_t)p.bank * UNPACK_SRC_ROWS * SRC_COLS;
    cursor_init(&c, &p);
    for (; c.index < p.count; cursor_next(&c, &p)) {
        int64_t row;
        uint32_t col;
        uint32_t bits = read_datum(v, c.addr, p.size16);
        uint32_t datum = p.all_zero ? 0 : convert(p.in_fmt, p.out_fmt, p.to_dst, p.is_unsigned, bits);
        if (place(&p, c.index, &row, &col) <= 0)
            continue;
        if (!p.to_dst) {
            src[(uint64_t)row * SRC_COLS + col] = datum & UNPACK_SRC_MASK;
        } else if (p.wide_out) {
            uint32_t high = regs_adj32((uint32_t)row, (uint32_t)p.remap, (uint32_t)p.swizzle);
            dst_store(v, high, col, datum >> 16);
            dst_store(v, high + DST_LOW_HALF, col, datum & 0xFFFF);
        } else {
            dst_store(v, regs_adj16((uint32_t)row, (uint32_t)p.remap), col, datum & 0xFFFF);
        }
    }
    uint32_t *adc = v->adc_value + (uint64_t)thread * ADC_UNITS * ADC_CHANNELS * ADC_COORDS
                    + (uint64_t)unit * ADC_CHANNELS * ADC_COORDS;
    /* Ch0ZInc [1:0], Ch0YInc [3:2], Ch1ZInc [5:4], Ch1YInc [7:6] */
    adc[1] = (adc[1] + (addr_mode >> 2 & 3)) & ADC_MASK_Y;
    adc[2] = (adc[2] + (addr_mode & 3)) & ADC_MASK_Z;
    adc[ADC_COORDS + 1] = (adc[ADC_COORDS + 1] + (addr_mode >> 6 & 3)) & ADC_MASK_Y;
    adc[ADC_COORDS + 2] = (adc[ADC_COORDS + 2] + (addr_mode >> 4 & 3)) & ADC_MASK_Z;
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
