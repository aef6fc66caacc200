/* What both chips' PACR share (pack.c, Blackhole's; pack_wormhole.c, Wormhole's): the Config fields
 * read alike, the edge mask, the conversions and stages pack/convert.py defines (which are modelled,
 * early, ReLU and exponent thresholding, late, the output bytes; the number formats under them are
 * pack_formats.h's), the packer ADCs, and the stream buffers and L1 accumulation of pack/stream.py. */
#ifndef TENSIXSIM_NATIVE_PACK_COMMON_H
#define TENSIXSIM_NATIVE_PACK_COMMON_H
#include <string.h>

#include "ops.h"
#include "pack_formats.h"
#include "regs.h"

enum { CFG_STATES = 2 };             /* config/unit.py ConfigState.config: Config[2] */
enum { INTERFACES = 4, ROW_DATUMS = 16, MAX_DATUMS = INTERFACES * ROW_DATUMS };
enum { DST_ADDRESS_MASK = 0x3FFF };  /* a 14-bit Dst datum address (pack/unit.py: & 0x3FFF) */
enum { CHUNK = 16 };                 /* the packer writes L1 in aligned 16-byte chunks */
#ifdef TSIM_WORMHOLE
/* The datums one of Wormhole's packers reads natively in one PACR (InputNumDatums): up to a 32 x 32
 * tile; more defers (Python takes any count). */
enum { STREAM_DATUMS = 1024 };
#else
enum { STREAM_DATUMS = MAX_DATUMS };
#endif

_Static_assert(PACK_STREAM_BUFFER_BYTES == CHUNK, "a stream buffer holds less than one L1 chunk");

static inline uint32_t bit(uint32_t set, uint32_t code) { return code < 32 && (set >> code & 1); }

/* ------------------------------------------------------------------------------ configuration */

/* Config[state] word `word` masked and shifted; 0 when it lies beyond the array (the caller defers). */
static inline int cfg_field(const struct copro_view *v, uint32_t state, uint32_t word, uint32_t shift, uint32_t mask,
                     uint32_t *out)
{
    if (state >= CFG_STATES || word >= v->config_words)
        return 0;
    *out = (v->config[(uint64_t)state * v->config_words + word] & mask) >> shift;
    return 1;
}

#define PKF(v, s, NAME, out) cfg_field(v, s, PKF_##NAME##_WORD, PKF_##NAME##_SHIFT, PKF_##NAME##_MASK, out)

/* What PACR reads of the pipe's Config state (pack.convert._field / pack.unit._cfg); Wormhole's frame
 * fills what the shared helpers below read (the conversion and edge-mask fields, In_data_format). */
struct pk_config {
    uint32_t read32, raw, unsigned_, round10, dstacc_override, dstacc_val, dstacc, srnd;
    uint32_t descale_enable, descale_mode, descale_value, relu, edge_mode, edge_face_enable, edge_row_select;
    uint32_t base0, xstride0, ystride0, zstride0, wstride0, dst_offset, base1, ystride1, zstride1, wstride1;
    uint32_t limit, fifo, zero_checks, disable_zero_compress, downsample_mask, l1_acc, exp_threshold_en;
    uint32_t l1_dest, sub_header, in_format, out_format, exp_section, remap, swizzle, relu_threshold;
    uint32_t exp_threshold;
};

/* The Config fields both chips' PACR read alike: the conversions', ReLU's, the edge masks' and the
 * PCK0 address generators'. */
static inline int read_common_config(const struct copro_view *v, uint32_t s, struct pk_config *c)
{
    return PKF(v, s, PCK_DEST_RD_CTRL_READ_32B_DATA, &c->read32)
        && PKF(v, s, PCK_DEST_RD_CTRL_READ_INT8, &c->raw)
        && PKF(v, s, PCK_DEST_RD_CTRL_READ_UNSIGNED, &c->unsigned_)
        && PKF(v, s, PCK_DEST_RD_CTRL_ROUND_10B_MANT, &c->round10)
        && PKF(v, s, ALU_FORMAT_SPEC_REG_DSTACC_OVERRIDE, &c->dstacc_override)
        && PKF(v, s, ALU_FORMAT_SPEC_REG_DSTACC_VAL, &c->dstacc_val)
        && PKF(v, s, ALU_FORMAT_SPEC_REG2_DSTACC, &c->dstacc)
        && PKF(v, s, ALU_ROUNDING_MODE_PACKER_SRND_EN, &c->srnd)
        && PKF(v, s, INT_DESCALE_ENABLE, &c->descale_enable)
        && PKF(v, s, INT_DESCALE_MODE, &c->descale_mode)
        && PKF(v, s, INT_DESCALE_VALUES_SEC0_VALUE, &c->descale_value)
        && PKF(v, s, STACC_RELU_APPLYRELU, &c->relu)
        && PKF(v, s, STACC_RELU_RELUTHRESHOLD, &c->relu_threshold)
        && PKF(v, s, PCK_EDGE_MODE_MODE, &c->edge_mode)
        && PKF(v, s, PCK_EDGE_TILE_FACE_SET_SELECT_ENABLE, &c->edge_face_enable)
        && PKF(v, s, PCK_EDGE_TILE_ROW_SET_SELECT_SELECT, &c->edge_row_select)
        && PKF(v, s, PCK0_ADDR_BASE_REG_0_BASE, &c->base0)
        && PKF(v, s, PCK0_ADDR_CTRL_XY_REG_0_XSTRIDE, &c->xstride0)
        && PKF(v, s, PCK0_ADDR_CTRL_XY_REG_0_YSTRIDE, &c->ystride0)
        && PKF(v, s, PCK0_ADDR_CTRL_ZW_REG_0_ZSTRIDE, &c->zstride0)
        && PKF(v, s, PCK0_ADDR_CTRL_ZW_REG_0_WSTRIDE, &c->wstride0)
        && PKF(v, s, PCK0_ADDR_BASE_REG_1_BASE, &c->base1)
        && PKF(v, s, PCK0_ADDR_CTRL_XY_REG_1_YSTRIDE, &c->ystride1)
        && PKF(v, s, PCK0_ADDR_CTRL_ZW_REG_1_ZSTRIDE, &c->zstride1)
        && PKF(v, s, PCK0_ADDR_CTRL_ZW_REG_1_WSTRIDE, &c->wstride1);
}


/* The one EdgeMask every datum of packer `packer` sees (pack.convert.uniform_edge_mask: its two bits of
 * the row-set select), or 0 when Python raises Unimplemented (the tile position generator, or masks
 * that differ by row). */
static inline int edge_mask(const struct copro_view *v, uint32_t s, const struct pk_config *c, uint32_t packer,
                     uint32_t *mask)
{
    static const struct {
        uint32_t word, shift, mask;
    } rows[4][ROW_DATUMS] = PACK_ROW_SET_MAPPING_SPECS, masks[4] = PACK_EDGE_MASK_SPECS;
    if (c->edge_face_enable)
        return 0;
    uint32_t b = c->edge_row_select >> (2 * packer) & 3, seen = 0;
    for (uint32_t y = 0; y < ROW_DATUMS; y++) {
        uint32_t set;
        if (!cfg_field(v, s, rows[b][y].word, rows[b][y].shift, rows[b][y].mask, &set))
            return 0;
        seen |= 1u << (set & 3);
    }
    int found = 0;
    for (uint32_t set = 0; set < 4; set++) {
        uint32_t m;
        if (!(seen >> set & 1))
            continue;
        if (!cfg_field(v, s, masks[set].word, masks[set].shift, masks[set].mask, &m))
            return 0;
        if (found && m != *mask)
            return 0;
        *mask = m;
        found = 1;
    }
    return found;
}

#ifdef TSIM_WORMHOLE
enum { FP8_OUT = 1 }; /* LateToFormat FP8 (e5m2): Wormhole's page has it, Blackhole's e4m3 none */
#else
enum { FP8_OUT = 0 };
#endif

/* pack.convert.conversion's checks: 1 when Python accepts the configuration (every named output but
 * Blackhole's FP8; the BFP8a intermediate is not modelled), else 0. */
static inline int conversion_ok(const struct pk_config *c, uint32_t inter, uint32_t out)
{
    const uint32_t ints = 1u << PACK_FMT_INT32 | 1u << PACK_FMT_INT16 | 1u << PACK_FMT_INT8;
    if (!bit(PACK_FORMAT_NAMED, inter) || !bit(PACK_FORMAT_NAMED, c->in_format) || !bit(PACK_FORMAT_NAMED, out))
        return 0;
    if (bit(PACK_FORMAT_LATE_ONLY, inter) || inter != c->in_format || c->srnd)
        return 0;
    if (inter == PACK_FMT_BFP8A || (out == PACK_FMT_FP8 && !FP8_OUT))
        return 0;
    if (c->read32) {
        switch (inter) {
        case PACK_FMT_FP32: case PACK_FMT_INT32: break;
        case PACK_FMT_TF32:
            if (c->raw && out != PACK_FMT_FP32)
                return 0;
            break;
        case PACK_FMT_BF16: case PACK_FMT_BFP8:
            if (c->round10)
                return 0;
            break;
        case PACK_FMT_INT8:
            if (!c->raw && c->descale_enable && (c->descale_mode || (c->descale_value & 31)))
                return 0; /* INT_DESCALE mode 1, or a non-zero ShiftAmount */
            break;
        default: return 0;
        }
    } else {
        switch (inter) {
        case PACK_FMT_FP32:
            if (!c->round10 || c->raw)
                return 0;
            break;
        case PACK_FMT_TF32:
            if (c->raw)
                return 0;
            break;
        case PACK_FMT_BF16: case PACK_FMT_BFP8: case PACK_FMT_FP16:
            if (c->round10)
                return 0;
            break;
        case PACK_FMT_INT16: break;
        default: return 0;
        }
    }
    if (bit(ints, inter) != bit(ints, out) || (bit(ints, inter) && inter != out))
        return 0;
    return !(inter == PACK_FMT_FP32 && out == PACK_FMT_TF32);
}

/* ------------------------------------------------------------------------------ datum conversions */

/* pack.convert.early: EarlyFormatConversion of a raw Dst datum to the intermediate format. */
static inline uint32_t early(const struct pk_config *c, uint32_t inter, uint32_t raw)
{
    if (c->read32) {
        uint32_t value = dst16_to_bf16(raw >> 16) << 16 | (raw & 0xFFFFu); /* formats.dst32_to_fp32 */
        switch (inter) {
        case PACK_FMT_FP32: return c->round10 && !c->raw ? packer_round(value, 13) : value;
        case PACK_FMT_TF32: return c->raw ? value : packer_round(value, 13);
        case PACK_FMT_BF16: return c->raw ? value >> 16 : packer_round(value, 16) >> 16;
        /* BFP8: truncation to BF16, or rounding to E8M6 (held as BF16 bits) */
        case PACK_FMT_BFP8: return c->raw ? value >> 16 : packer_round(value, 17) >> 16;
        case PACK_FMT_INT32: return value;
        default: { /* INT8, ShiftAmount zero */
            uint32_t sign = value >> 31, mag = value & MAG32;
            if (c->raw)
                return c->unsigned_ ? mag & 0xFFu : sign << 7 | (mag & 0x7Fu);
            if (c->unsigned_)
                return sign ? 0 : (mag < 255 ? mag : 255);
            return sign << 7 | (mag < 127 ? mag : 127);
        }
        }
    }
    switch (inter) {
    case PACK_FMT_INT16: return raw;
    case PACK_FMT_FP16: {
        uint32_t x = dst16_to_fp16(raw);
        return c->raw || (x & 0x7C00u) ? x : 0; /* formats.packer_round_fp16 */
    }
    case PACK_FMT_BF16: {
        uint32_t x = dst16_to_bf16(raw);
        return c->raw ? x : packer_round(x << 16, 16) >> 16; /* formats.packer_round_bf16 */
    }
    case PACK_FMT_BFP8: { /* identity, or rounding to E8M6 (held as BF16 bits) */
        uint32_t x = dst16_to_bf16(raw);
        return c->raw ? x : packer_round(x << 16, 17) >> 16;
    }
    default: /* TF32, or FP32 with Round_10b_mant: no bits dropped, only the flushes */
        return packer_round(dst16_to_bf16(raw) << 16, 13);
    }
}

/* ------------------------------------------------------------------------------ ReLU, thresholds */

/* How ReLU and exponent thresholding read an intermediate datum (pack.convert: BFP8's as BF16). */
enum { STAGE_INT, STAGE_UINT8, STAGE_FLOAT32, STAGE_BF16, STAGE_FP16 };

/* pack.convert.relu's and threshold_exp's settings for a packer's datums: the ReLU mode (0..3; the
 * chips' frames have refused what Python raises for) and threshold, the exponent threshold (when
 * Exp_threshold_en). */
struct pk_stages {
    uint32_t relu, kind, top, t, t_nan, exp_on, exp_threshold;
    int64_t t_key;
};

static inline uint32_t stage_kind(uint32_t inter, uint32_t unsigned_)
{
    switch (inter) {
    case PACK_FMT_FP32: case PACK_FMT_TF32: return STAGE_FLOAT32;
    case PACK_FMT_BF16: case PACK_FMT_BFP8: return STAGE_BF16;
    case PACK_FMT_FP16: return STAGE_FP16;
    case PACK_FMT_INT8: return unsigned_ ? STAGE_UINT8 : STAGE_INT;
    default: return STAGE_INT;
    }
}

/* pack.convert._is_nan (FP16 has no NaN on the coprocessor) */
static inline uint32_t stage_nan(uint32_t kind, uint32_t bits)
{
    if (kind == STAGE_FLOAT32)
        return (bits & EXP32) == EXP32 && (bits & MAN32);
    return kind == STAGE_BF16 && (bits & 0x7F80u) == 0x7F80u && (bits & 0x7Fu);
}

/* pack.convert._key: a float's order as a signed integer (sign-magnitude; -0 == +0) */
static inline int64_t stage_key(uint32_t top, uint32_t bits)
{
    int64_t mag = bits & ((1u << top) - 1);
    return bits >> top & 1 ? -mag : mag;
}

static inline void stages_of(struct pk_stages *st, uint32_t inter, uint32_t unsigned_, uint32_t relu,
                             uint32_t threshold, uint32_t exp_on, uint32_t exp_threshold)
{
    st->relu = relu;
    st->kind = stage_kind(inter, unsigned_);
    st->top = inter == PACK_FMT_INT8 ? 7 : st->kind == STAGE_FLOAT32 || inter == PACK_FMT_INT32 ? 31 : 15;
    st->t = st->kind == STAGE_FLOAT32 ? threshold << 16 : threshold;
    st->t_nan = stage_nan(st->kind, st->t);
    st->t_key = stage_key(st->top, st->t);
    st->exp_on = exp_on;
    st->exp_threshold = exp_threshold;
}

/* pack.convert.relu, then (when enabled) threshold_exp, on one intermediate datum. */
static inline uint32_t stages(const struct pk_stages *st, uint32_t bits)
{
    if (st->relu) {
        if (st->kind == STAGE_INT) {
            bits = bits >> st->top & 1 ? 0 : bits; /* negative magnitudes become zero */
        } else if (st->kind != STAGE_UINT8) {
            uint32_t nan = stage_nan(st->kind, bits), zero;
            int64_t x = stage_key(st->top, bits);
            if (st->relu == 2) {
                zero = !st->t_nan && x <= st->t_key;
            } else {
                zero = x <= 0;
                if (st->relu == 3 && !st->t_nan && !nan && x > st->t_key)
                    bits = st->t; /* clamped to the threshold */
            }
            if (!nan && zero)
                bits = 0;
        }
    }
    if (st->exp_on) {
        uint32_t exp = st->kind == STAGE_FLOAT32 ? bits >> 23 & 0xFFu
            : st->kind == STAGE_BF16             ? bits >> 7 & 0xFFu
            : st->kind == STAGE_FP16             ? bits >> 10 & 0x1Fu
                                                 : st->exp_threshold; /* integers pass */
        if (exp < st->exp_threshold)
            bits = 0;
    }
    return bits;
}

/* pack.convert.late: the late conversion of an intermediate datum to its L1 value; 0 when Python raises
 * Unimplemented for it (a datum the page calls mishandled). */
static inline int late(uint32_t inter, uint32_t out, uint32_t bits, uint32_t *result)
{
    if (inter == PACK_FMT_INT32 || inter == PACK_FMT_INT16 || inter == PACK_FMT_INT8) {
        *result = bits;
        return 1;
    }
    if (inter == PACK_FMT_FP16) {
        if (out == PACK_FMT_FP16) {
            *result = bits;
            return 1;
        }
        uint32_t exp = bits >> 10 & 0x1Fu, man = bits & 0x3FFu;
        if (exp == 31 || (exp == 0 && man && out != PACK_FMT_BF16))
            return 0;
        uint32_t wide = fp16_to_fp32(bits);
        if (out == PACK_FMT_BF16)
            *result = exp == 0 && man ? bits & 0x8000u : wide >> 16;
        else
            *result = wide;
        return 1;
    }
    uint32_t value = inter == PACK_FMT_BF16 ? bits << 16 : bits;
    if (out == PACK_FMT_FP32 || out == PACK_FMT_TF32) {
        *result = value;
    } else if (out == PACK_FMT_BF16) {
        *result = value >> 16;
    } else {
        uint32_t mag = value & MAG32;
        if (mag > 0x38000000u && mag < 0x38800000u) /* 2**-15 < |x| < 2**-14 */
            return 0;
        *result = fp32_to_fp16(value);
    }
    return 1;
}

/* pack.convert.late as a PACR applies it: to the L1 value of an `out` datum, or for a block-float output
 * to the BF16 (b styles) or FP16 (a styles) datum its blocks are made of; FP8 is FP16's rule then the
 * high byte; BFP8's intermediate is BF16's. 0 when Python raises Unimplemented for the datum. */
static inline int late_value(uint32_t inter, uint32_t out, uint32_t bits, uint32_t *result)
{
    inter = inter == PACK_FMT_BFP8 ? PACK_FMT_BF16 : inter;
    if (out == PACK_FMT_FP8) {
        if (!late(inter, PACK_FMT_FP16, bits, result))
            return 0;
        *result >>= 8;
        return 1;
    }
    if (bit(PACK_FORMAT_BFP, out))
        out = bit(PACK_FORMAT_BFP_A, out) ? PACK_FMT_FP16 : PACK_FMT_BF16;
    return late(inter, out, bits, result);
}

/* A PACR's output bytes from `n` late values (late_value) in format `out`: each the low OUT_BYTES bytes,
 * little-endian, or the block floats' datums (n a multiple of 16, the caller's check) with their shared
 * exponents to `exps` (one byte a block; *exp_bytes of them). Returns the data bytes. */
static inline int64_t output_bytes(uint32_t out, const uint32_t *values, uint32_t n, uint8_t *data, uint8_t *exps,
                                   int64_t *exp_bytes)
{
    static const uint8_t widths[16] = PACK_OUT_BYTES, bfp_bits[16] = PACK_BFP_BITS;
    uint32_t bits = bfp_bits[out & 15];
    if (bits) {
        bfp_blocks(values, n, (int)bit(PACK_FORMAT_BFP_A, out), bits, data, exps);
        *exp_bytes = n / PACK_BFP_BLOCK;
        return (int64_t)n * bits / 8;
    }
    uint32_t width = widths[out & 15];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t b = 0; b < width; b++)
            data[i * width + b] = (uint8_t)(values[i] >> (8 * b));
    *exp_bytes = 0;
    return (int64_t)n * width;
}

/* ------------------------------------------------------------------------------ state */

static inline uint32_t *packer_counters(const struct copro_view *v, uint32_t thread, uint32_t channel)
{
    /* adc.AdcState.value[thread][PACKERS][channel][X..W]; the packers are the ADC unit 2 */
    return v->adc_value + (((uint64_t)thread * ADC_UNITS + 2) * ADC_CHANNELS + channel) * ADC_COORDS;
}

static inline uint32_t *packer_counters_cr(const struct copro_view *v, uint32_t thread, uint32_t channel)
{
    return v->adc_cr + (((uint64_t)thread * ADC_UNITS + 2) * ADC_CHANNELS + channel) * ADC_COORDS;
}

/* A stream's L1 write planned (pack.stream.stream_writes): `whole` bytes of `buffered` go to `address`. */
struct stream {
    int64_t address;
    uint8_t buffered[CHUNK + STREAM_DATUMS * 4];
    int64_t length, whole;
};

/* Buffer `pending` + `more`, pad when flushing, and check the chunks land inside L1 (0: Python raises
 * MemoryFault, or the stream state is not one Coprocessor.l1_write accepts). */
static inline int plan_stream(const struct copro_view *v, struct stream *s, int64_t address, const uint8_t *pending,
                       int64_t pending_length, const uint8_t *more, int64_t more_length, int flushing)
{
    if (pending_length < 0 || pending_length >= CHUNK)
        return 0;
    s->address = address;
    memcpy(s->buffered, pending, (size_t)pending_length);
    if (more_length)
        memcpy(s->buffered + pending_length, more, (size_t)more_length);
    s->length = pending_length + more_length;
    if (flushing && s->length % CHUNK) {
        int64_t pad = CHUNK - s->length % CHUNK;
        memset(s->buffered + s->length, 0, (size_t)pad);
        s->length += pad;
    }
    s->whole = s->length - s->length % CHUNK;
    if (s->whole && (address < 0 || address % CHUNK || address > (int64_t)v->l1_size - s->whole))
        return 0;
    return 1;
}

/* stream.accumulated: `n` bytes (whole 16-byte chunks) added lane by lane, in output format `fmt` (one of
 * PACK_FORMAT_ACCUMULATE: 4 x FP32 or INT32, 8 x FP16 or BF16 a chunk), to the L1 bytes at `l1`. */
static inline void accumulate_l1(uint8_t *l1, const uint8_t *bytes, int64_t n, uint32_t fmt)
{
    int wide = fmt == PACK_FMT_FP32 || fmt == PACK_FMT_INT32;
    int64_t lane = wide ? 4 : 2;
    for (int64_t i = 0; i < n; i += lane) {
        uint32_t old = 0, add = 0, sum;
        for (int64_t b = lane - 1; b >= 0; b--) { /* little-endian lanes */
            old = old << 8 | l1[i + b];
            add = add << 8 | bytes[i + b];
        }
        if (fmt == PACK_FMT_INT32)
            sum = accumulate_int32(old, add);
        else if (fmt == PACK_FMT_FP32)
            sum = accumulate_float(old, add, 8, 23);
        else if (fmt == PACK_FMT_BF16)
            sum = accumulate_float(old, add, 8, 7);
        else
            sum = accumulate_float(old, add, 5, 10);
        for (int64_t b = 0; b < lane; b++)
            l1[i + b] = (uint8_t)(sum >> (8 * b));
    }
}

enum { NO_ACCUMULATE = 16 }; /* commit_streams' `accumulate` when L1 is plainly written (no format code) */

/* The planned writes of a packer's data and exponent streams made (pack.stream's commit): the whole
 * 16-byte chunks to L1, or with `accumulate` (an output format) added to it, data first, each stream's
 * a write of its own for the tile as Python makes them; the rest kept pending in the stream's buffer
 * (`buffers`: data then exponents, CHUNK bytes each; past the pending bytes zero, as PackState keeps
 * them), the stream addresses moved on and NeedsNewAddress set after Last or Flush. */
static inline void commit_streams(struct copro_view *v, int64_t *stream, uint8_t *buffers, const struct stream *data,
                                  const struct stream *exps, int flushing, uint32_t accumulate, int64_t cycle)
{
    for (int k = 0; k < 2; k++) {
        const struct stream *st = k ? exps : data;
        if (st->whole) {
            if (accumulate != NO_ACCUMULATE)
                accumulate_l1(v->l1 + st->address, st->buffered, st->whole, accumulate);
            else
                memcpy(v->l1 + st->address, st->buffered, (size_t)st->whole);
            note_l1_write(v, st->address, st->address + st->whole, cycle);
        }
        uint8_t *buffer = buffers + k * CHUNK;
        int64_t left = st->length - st->whole;
        memset(buffer, 0, CHUNK);
        memcpy(buffer, st->buffered + st->whole, (size_t)left);
        stream[k ? PACK_STREAM_EXPONENT_PENDING : PACK_STREAM_PENDING] = left;
        stream[k ? PACK_STREAM_EXPONENT_ADDRESS : PACK_STREAM_DATA_ADDRESS] = st->address + st->whole;
    }
    stream[PACK_STREAM_NEEDS_NEW_ADDRESS] = flushing;
}

/* unit.advance_adc: the packer ADDR_MOD's step `m` (PAM_* fields) of ADC `which`'s Y and Z counters,
 * both channels (Y from its _Cr copy with YCR, cleared with YClear; Z cleared or advanced). */
static inline void advance_packer_adc(struct copro_view *v, uint32_t which,
                                      const uint32_t m[PACK_ADDR_MOD_FIELD_COUNT])
{
    for (uint32_t channel = 0; channel < 2; channel++) {
        uint32_t *value = packer_counters(v, which, channel), *cr = packer_counters_cr(v, which, channel);
        uint32_t y_clear = m[channel ? PAM_YDST_CLEAR : PAM_YSRC_CLEAR];
        uint32_t y_cr = m[channel ? PAM_YDST_CR : PAM_YSRC_CR];
        uint32_t y_incr = m[channel ? PAM_YDST_INCR : PAM_YSRC_INCR];
        uint32_t z_clear = m[channel ? PAM_ZDST_CLEAR : PAM_ZSRC_CLEAR];
        uint32_t z_incr = m[channel ? PAM_ZDST_INCR : PAM_ZSRC_INCR];
        if (y_clear)
            value[1] = cr[1] = 0;
        else if (y_cr)
            value[1] = cr[1] = (cr[1] + y_incr) & ADC_MASK_Y;
        else
            value[1] = (value[1] + y_incr) & ADC_MASK_Y;
        if (z_clear)
            value[2] = cr[2] = 0;
        else
            value[2] = (value[2] + z_incr) & ADC_MASK_Z;
    }
}

#endif
