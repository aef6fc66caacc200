/* The packer's PACR (Dst -> L1), bit for bit and cycle for cycle as tensixsim/tensix/pack/unit.py's pacr
 * executes it, for the configurations kernels use: Dst read as Dst16b or Dst32b (Read_32b_data), the
 * FP32 / TF32 / BF16 / FP16 / INT32 / INT16 / INT8 intermediates and outputs with their early and late
 * conversions, ZeroWrite, Flush and Last, edge masking with one mask for every row, the output address
 * generator with NeedsNewAddress, the pending (< 16 byte) stream buffers (pack.stream.PackState.stream /
 * buffer), the packer ADDR_MOD's ADC updates and the Retire cycles.
 *
 * Deferred to Python (each case decided before anything is written):
 * - whatever raises there: the operand fields without a Blackhole page, unmodelled configuration
 *   (compression, downsampling, the THCON_SEC0_REG1 zero checks), every conversion the pack/convert.py
 *   table calls Undefined or Unimplemented, a late conversion's mishandled datums, a non-zero
 *   YZW_Addr, a read interface mapping not evidenced, a write that leaves L1 (MemoryFault);
 * - a Wait: Dst rows the matrix unit wrote less than five cycles ago (readable_from);
 * - the modes kept in Python for now: ReLU (STACC_RELU_ApplyRelu), exponent thresholding, L1
 *   accumulation, BFP8 intermediates and every block-float output, and both streams writing L1 in one
 *   instruction (their two notifications would merge into one range here).
 *
 * L1 is written through v->l1 directly; the range goes to v->l1_written so that Python tells the tile
 * (Tile.coprocessor_wrote_l1) as Coprocessor.l1_write would have.
 *
 * Wormhole's library (TSIM_WORMHOLE) runs Wormhole's PACR instead (pack/wormhole.py's pacr), over the
 * same conversions and stream buffers: see the section at the end of this file.
 */
#include <string.h>

#include "ops.h"
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

#define SIGN32 0x80000000u
#define MAG32 0x7FFFFFFFu
#define EXP32 0x7F800000u
#define MAN32 0x007FFFFFu
#define NEG_INF32 0xFF800000u
#define NEG_INF_BF16 0xFF80u

_Static_assert(PACK_STREAM_BUFFER_BYTES == CHUNK, "a stream buffer holds less than one L1 chunk");

static uint32_t bit(uint32_t set, uint32_t code) { return code < 32 && (set >> code & 1); }

/* ------------------------------------------------------------------------------ configuration */

/* Config[state] word `word` masked and shifted; 0 when it lies beyond the array (the caller defers). */
static int cfg_field(const struct copro_view *v, uint32_t state, uint32_t word, uint32_t shift, uint32_t mask,
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
    uint32_t l1_dest, sub_header, in_format, out_format, exp_section, remap, swizzle;
};

/* The Config fields both chips' PACR read alike: the conversions', ReLU's, the edge masks' and the
 * PCK0 address generators'. */
static int read_common_config(const struct copro_view *v, uint32_t s, struct pk_config *c)
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

#ifndef TSIM_WORMHOLE

static int read_config(const struct copro_view *v, uint32_t s, struct pk_config *c)
{
    uint32_t z[10];
    int ok = read_common_config(v, s, c)
        && PKF(v, s, DEST_TARGET_REG_CFG_PACK_SEC0_OFFSET, &c->dst_offset)
        && PKF(v, s, THCON_SEC0_REG9_PACK_0_2_LIMIT_ADDRESS, &c->limit)
        && PKF(v, s, THCON_SEC0_REG9_PACK_0_2_FIFO_SIZE, &c->fifo)
        && PKF(v, s, THCON_SEC0_REG1_ADD_L1_DEST_ADDR_OFFSET, &z[0])
        && PKF(v, s, THCON_SEC0_REG1_DIS_SHARED_EXP_ASSEMBLER, &z[1])
        && PKF(v, s, THCON_SEC0_REG1_ENABLE_OUT_FIFO, &z[2])
        && PKF(v, s, THCON_SEC0_REG1_ADD_TILE_HEADER_SIZE, &z[3])
        && PKF(v, s, THCON_SEC0_REG1_AUTO_SET_LAST_PACR_INTF_SEL, &z[4])
        && PKF(v, s, THCON_SEC0_REG1_PACK_START_INTF_POS, &z[5])
        && PKF(v, s, THCON_SEC0_REG1_PACK_DIS_Y_POS_START_OFFSET, &z[6])
        && PKF(v, s, THCON_SEC0_REG1_SOURCE_INTERFACE_SELECTION, &z[7])
        && PKF(v, s, THCON_SEC0_REG1_DOWNSAMPLE_RATE, &z[8])
        && PKF(v, s, THCON_SEC0_REG1_ALL_PACK_DISABLE_ZERO_COMPRESS_OVRD, &z[9])
        && PKF(v, s, THCON_SEC0_REG1_DISABLE_ZERO_COMPRESS, &c->disable_zero_compress)
        && PKF(v, s, THCON_SEC0_REG1_DOWNSAMPLE_MASK, &c->downsample_mask)
        && PKF(v, s, THCON_SEC0_REG1_PACK_L1_ACC, &c->l1_acc)
        && PKF(v, s, THCON_SEC0_REG1_EXP_THRESHOLD_EN, &c->exp_threshold_en)
        && PKF(v, s, THCON_SEC0_REG1_L1_DEST_ADDR, &c->l1_dest)
        && PKF(v, s, THCON_SEC0_REG1_SUB_L1_TILE_HEADER_SIZE, &c->sub_header)
        && PKF(v, s, THCON_SEC0_REG1_IN_DATA_FORMAT, &c->in_format)
        && PKF(v, s, THCON_SEC0_REG1_OUT_DATA_FORMAT, &c->out_format)
        && PKF(v, s, THCON_SEC0_REG1_EXP_SECTION_SIZE, &c->exp_section)
        && cfg_field(v, s, CFG_DEST_ACCESS_CFG_REMAP_ADDRS_WORD, CFG_DEST_ACCESS_CFG_REMAP_ADDRS_SHIFT,
                     CFG_DEST_ACCESS_CFG_REMAP_ADDRS_MASK, &c->remap)
        && cfg_field(v, s, CFG_DEST_ACCESS_CFG_SWIZZLE_32B_WORD, CFG_DEST_ACCESS_CFG_SWIZZLE_32B_SHIFT,
                     CFG_DEST_ACCESS_CFG_SWIZZLE_32B_MASK, &c->swizzle);
    c->zero_checks = 0;
    for (int i = 0; i < 10 && ok; i++)
        c->zero_checks |= z[i];
    return ok;
}

#endif

/* The one EdgeMask every datum of packer `packer` sees (pack.convert.uniform_edge_mask: its two bits of
 * the row-set select), or 0 when Python raises Unimplemented (the tile position generator, or masks
 * that differ by row). */
static int edge_mask(const struct copro_view *v, uint32_t s, const struct pk_config *c, uint32_t packer,
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

/* pack.convert.conversion's checks for the conversions implemented here: 1 when Python would accept the
 * configuration and this file converts it, else 0. */
static int conversion_ok(const struct pk_config *c, uint32_t inter, uint32_t out)
{
    const uint32_t ints = 1u << PACK_FMT_INT32 | 1u << PACK_FMT_INT16 | 1u << PACK_FMT_INT8;
    if (!bit(PACK_FORMAT_NAMED, inter) || !bit(PACK_FORMAT_NAMED, c->in_format) || !bit(PACK_FORMAT_NAMED, out))
        return 0;
    if (bit(PACK_FORMAT_LATE_ONLY, inter) || inter != c->in_format || c->srnd)
        return 0;
    if (inter == PACK_FMT_BFP8 || inter == PACK_FMT_BFP8A)
        return 0; /* E8M6 / E5M7 intermediates stay in Python */
    if (!(out == PACK_FMT_FP32 || out == PACK_FMT_TF32 || out == PACK_FMT_BF16 || out == PACK_FMT_FP16
          || bit(ints, out)))
        return 0; /* block floats and FP8 */
    if (c->read32) {
        switch (inter) {
        case PACK_FMT_FP32: case PACK_FMT_INT32: break;
        case PACK_FMT_TF32:
            if (c->raw && out != PACK_FMT_FP32)
                return 0;
            break;
        case PACK_FMT_BF16:
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
        case PACK_FMT_BF16: case PACK_FMT_FP16:
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

/* formats.dst16_to_bf16: Dst16 (sign, mantissa 8.., exponent 0..7) -> plain BF16. */
static uint32_t dst16_to_bf16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x00FFu) << 7) | ((x & 0x7F00u) >> 8);
}

/* formats.dst16_to_fp16: Dst16 (sign, mantissa 5.., exponent 0..4) -> plain FP16. */
static uint32_t dst16_to_fp16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x001Fu) << 10) | ((x & 0x7FE0u) >> 5);
}

/* formats._packer_round_8bit_exp: drop `drop` bits rounding to nearest, ties away (the carry may step
 * the exponent); exponent 0 (zero, denormals) gives +0 and NaN the infinity of its sign. */
static uint32_t packer_round(uint32_t b, uint32_t drop)
{
    uint32_t mag = b & MAG32, kept = mag >> drop;
    if ((mag & ((1u << drop) - 1)) >= 1u << (drop - 1))
        kept++;
    if ((b & EXP32) == EXP32 && (b & MAN32))
        return (b & SIGN32) | EXP32;
    if (!(b & EXP32))
        return 0;
    return (b & SIGN32) | (kept << drop);
}

/* pack.convert.early: EarlyFormatConversion of a raw Dst datum to the intermediate format. */
static uint32_t early(const struct pk_config *c, uint32_t inter, uint32_t raw)
{
    if (c->read32) {
        uint32_t value = dst16_to_bf16(raw >> 16) << 16 | (raw & 0xFFFFu); /* formats.dst32_to_fp32 */
        switch (inter) {
        case PACK_FMT_FP32: return c->round10 && !c->raw ? packer_round(value, 13) : value;
        case PACK_FMT_TF32: return c->raw ? value : packer_round(value, 13);
        case PACK_FMT_BF16: return c->raw ? value >> 16 : packer_round(value, 16) >> 16;
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
    default: /* TF32, or FP32 with Round_10b_mant: no bits dropped, only the flushes */
        return packer_round(dst16_to_bf16(raw) << 16, 13);
    }
}

/* formats.fp16_to_fp32 (exponents 1..31 ordinary binades, exponent 0 kept as an FP32 denormal). */
static uint32_t fp16_to_fp32(uint32_t x)
{
    uint32_t exp = x >> 10 & 0x1Fu, man = x & 0x3FFu;
    return (x >> 15) << 31 | (exp ? exp + 112 : 0) << 23 | man << 13;
}

/* formats.fp32_to_fp16 with truncation: flush |x| < 2**-14 to signed zero, saturate to 0x7FFF. */
static uint32_t fp32_to_fp16(uint32_t b)
{
    uint32_t sign16 = (b >> 16) & 0x8000u;
    int32_t exp = (int32_t)((b & EXP32) >> 23) - 112;
    if (exp <= 0)
        return sign16;
    if (exp > 31)
        return sign16 | 0x7FFFu;
    uint32_t mag = ((uint32_t)exp << 23 | (b & MAN32)) >> 13;
    return sign16 | (mag < 0x7FFFu ? mag : 0x7FFFu);
}

/* pack.convert.late: the late conversion of an intermediate datum to its L1 value; 0 when Python raises
 * Unimplemented for it (a datum the page calls mishandled). */
static int late(uint32_t inter, uint32_t out, uint32_t bits, uint32_t *result)
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

/* ------------------------------------------------------------------------------ state */

static uint32_t *packer_counters(const struct copro_view *v, uint32_t thread, uint32_t channel)
{
    /* adc.AdcState.value[thread][PACKERS][channel][X..W]; the packers are the ADC unit 2 */
    return v->adc_value + (((uint64_t)thread * ADC_UNITS + 2) * ADC_CHANNELS + channel) * ADC_COORDS;
}

static uint32_t *packer_counters_cr(const struct copro_view *v, uint32_t thread, uint32_t channel)
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
static int plan_stream(const struct copro_view *v, struct stream *s, int64_t address, const uint8_t *pending,
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

#ifndef TSIM_WORMHOLE
/* ------------------------------------------------------------------------------ PACR */

int64_t pack_pacr(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    static const uint8_t interface_sets[16] = PACK_INTERFACES;
    static const struct {
        uint32_t reg, shift, mask;
    } mod_specs[PACK_ADDR_MOD_SLOTS][PACK_ADDR_MOD_FIELD_COUNT] = PACK_ADDR_MOD_SPECS;

    uint32_t dst_access_mode = F_PACR_DST_ACCESS_MODE(word), addr_mode = F_PACR_ADDR_MODE(word);
    uint32_t zero_write = F_PACR_ZERO_WRITE(word), read_intf_sel = F_PACR_READ_INTF_SEL(word);
    uint32_t flush = F_PACR_FLUSH(word), last = F_PACR_LAST(word);
    if (F_PACR_CFG_CONTEXT(word) || F_PACR_ROW_PAD_ZERO(word) || F_PACR_ADDR_CNT_CONTEXT(word)
        || F_PACR_OVRD_THREAD_ID(word) || F_PACR_CTXT_CTRL(word) || F_PACR_CONCAT(word) > 1)
        return NATIVE_DEFER; /* operands without a Blackhole page */
    uint32_t interfaces = interface_sets[read_intf_sel & 15];
    if (!interfaces || (dst_access_mode && !bit(PACK_STRIDED_MASKS, read_intf_sel)))
        return NATIVE_DEFER;

    /* ---- configuration */
    if (THD_CFG_STATE_ID_STATEID_REG >= v->thread_config_words)
        return NATIVE_DEFER;
    uint32_t s = (v->thread_config[(uint64_t)thread * v->thread_config_words + THD_CFG_STATE_ID_STATEID_REG]
                  & THD_CFG_STATE_ID_STATEID_MASK) >> THD_CFG_STATE_ID_STATEID_SHIFT;
    struct pk_config c;
    if (!read_config(v, s, &c))
        return NATIVE_DEFER;
    if (c.zero_checks || !c.disable_zero_compress || (c.downsample_mask != 0 && c.downsample_mask != 0xFFFFu))
        return NATIVE_DEFER; /* unmodelled configuration: Unimplemented */
    uint32_t inter = c.dstacc_override ? c.dstacc_val : c.dstacc, out = c.out_format;
    if (!conversion_ok(&c, inter, out) || c.l1_acc || c.relu || c.exp_threshold_en)
        return NATIVE_DEFER;
    int from_dst = !(zero_write || flush);
    uint32_t mask = 0xFFFFu;
    if (from_dst && !edge_mask(v, s, &c, 0, &mask))
        return NATIVE_DEFER;
    int float32 = inter == PACK_FMT_FP32 || inter == PACK_FMT_TF32;
    if (mask != 0xFFFFu && c.edge_mode && !(float32 || inter == PACK_FMT_BF16))
        return NATIVE_DEFER; /* no -infinity pattern in FP16 or the integers: Unimplemented */
    uint32_t masked = c.edge_mode ? (inter == PACK_FMT_BF16 ? NEG_INF_BF16 : NEG_INF32) : 0;

    /* ---- input address generator */
    const uint32_t *ch0 = packer_counters(v, thread, 0), *ch1 = packer_counters(v, thread, 1);
    uint64_t addr = ((uint64_t)c.base0 + (uint64_t)ch0[0] * (c.xstride0 & 0xFu) + (uint64_t)ch0[1] * c.ystride0
                     + (uint64_t)ch0[2] * c.zstride0 + (uint64_t)ch0[3] * c.wstride0)
        & 0xFFFFFFFFu;
    uint64_t bytes_per_datum = 1, x_mask = 0xF;
    if ((inter & 3) == 0)
        bytes_per_datum = 4, x_mask = 3;
    else if ((inter & 3) == 1)
        bytes_per_datum = 2, x_mask = 7;
    int64_t count = 0;
    if (!flush) {
        count = (int64_t)ch1[0] - (int64_t)ch0[0] + 1;
        if (count < 0)
            return NATIVE_DEFER; /* UndefinedBehavior: the count wraps */
    }
    addr = ((addr / bytes_per_datum) & ~x_mask) + (ch0[0] & x_mask) + ((uint64_t)c.dst_offset << 4);
    uint32_t source = (uint32_t)addr & DST_ADDRESS_MASK;
    uint32_t n_interfaces = (uint32_t)__builtin_popcount(interfaces);
    if (count) {
        if (n_interfaces > 1 && ((source & 15) || count != ROW_DATUMS))
            return NATIVE_DEFER;
        if (n_interfaces == 1 && (int64_t)(source & 15) + count > ROW_DATUMS)
            return NATIVE_DEFER;
    }
    uint32_t spacing = dst_access_mode ? PACK_STRIDED_INTERFACE_DATUMS : ROW_DATUMS;
    uint32_t addresses[MAX_DATUMS], n = 0;
    for (uint32_t k = 0; k < INTERFACES; k++)
        if (interfaces >> k & 1)
            for (int64_t j = 0; j < count; j++)
                addresses[n++] = (source + spacing * k + (uint32_t)j) & DST_ADDRESS_MASK;

    /* ---- fetch, early conversion, edge masking, late conversion */
    uint32_t datums[MAX_DATUMS];
    if (from_dst) {
        int64_t until = 0;
        uint32_t storage[MAX_DATUMS];
        for (uint32_t i = 0; i < n; i++) {
            uint32_t row = addresses[i] >> 4;
            storage[i] = c.read32 ? regs_adj32(row, c.remap, c.swizzle) : regs_adj16(row, c.remap);
            storage[i] &= REGS_ROW_MASK;
            int64_t ready = v->dst_ready[storage[i] / REGS_DST_BLOCK_ROWS];
            if (c.read32) {
                int64_t low = v->dst_ready[((storage[i] + 8) & REGS_ROW_MASK) / REGS_DST_BLOCK_ROWS];
                ready = ready > low ? ready : low;
            }
            until = until > ready ? until : ready;
        }
        if (until > cycle)
            return native_wait(v, WAIT_PACK_DST_HIDDEN, until, 0);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t r = storage[i], col = addresses[i] & 15, raw;
            if (c.read32) {
                uint32_t low = (r + 8) & REGS_ROW_MASK;
                raw = v->dst_row_valid[r] && v->dst_row_valid[low]
                    ? (uint32_t)v->dst[r * REGS_DST_COLS + col] << 16 | v->dst[low * REGS_DST_COLS + col]
                    : 0;
            } else {
                raw = v->dst_row_valid[r] ? v->dst[r * REGS_DST_COLS + col] : 0;
            }
            datums[i] = early(&c, inter, raw);
            if (!(mask >> col & 1))
                datums[i] = masked;
        }
    } else {
        uint32_t zero = early(&c, inter, 0); /* ZeroWrite's zeros pass the early conversion too */
        for (uint32_t i = 0; i < n; i++)
            datums[i] = zero;
    }
    uint32_t width = out == PACK_FMT_FP32 || out == PACK_FMT_TF32 || out == PACK_FMT_INT32 ? 4
        : out == PACK_FMT_INT8                                                            ? 1
                                                                                          : 2;
    uint8_t bytes[MAX_DATUMS * 4];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t value;
        if (!late(inter, out, datums[i], &value))
            return NATIVE_DEFER;
        for (uint32_t b = 0; b < width; b++)
            bytes[i * width + b] = (uint8_t)(value >> (8 * b)); /* little-endian, the low `width` bytes */
    }

    /* ---- output address generator */
    int64_t *stream = v->pack_stream;
    int64_t data_address = stream[PACK_STREAM_DATA_ADDRESS];
    int64_t exponent_address = stream[PACK_STREAM_EXPONENT_ADDRESS];
    if (stream[PACK_STREAM_NEEDS_NEW_ADDRESS]) {
        uint64_t out_addr = ((uint64_t)c.l1_dest + (c.sub_header ? 0 : 1)) & 0xFFFFFFFFu;
        uint64_t yzw = (uint64_t)c.base1 + (uint64_t)ch1[1] * c.ystride1 + (uint64_t)ch1[2] * c.zstride1
            + (uint64_t)ch1[3] * c.wstride1;
        if (yzw)
            return NATIVE_DEFER; /* YZW_Addr's Blackhole unit is not documented: Unimplemented */
        if (out_addr > (uint64_t)c.limit * 2 + 1)
            out_addr -= (uint64_t)c.fifo * 2;
        out_addr &= 0xFFFFFFFFu;
        if (out & 2) { /* OutputFormatLessThan16Bits: the exponent stream takes its address first */
            exponent_address = (int64_t)(out_addr & PACK_L1_ADDRESS_MASK) << 4;
            out_addr += c.exp_section;
        }
        data_address = (int64_t)(out_addr & PACK_L1_ADDRESS_MASK) << 4;
    }

    /* ---- the 16-byte writes of both streams (checked before anything is written) */
    int flushing = last || flush;
    uint8_t *buffers = v->pack_buffer;
    struct stream data, exps;
    if (!plan_stream(v, &data, data_address, buffers, stream[PACK_STREAM_PENDING], bytes, (int64_t)n * width,
                     flushing)
        || !plan_stream(v, &exps, exponent_address, buffers + CHUNK, stream[PACK_STREAM_EXPONENT_PENDING], NULL,
                        0, flushing))
        return NATIVE_DEFER;
    if (data.whole && exps.whole)
        return NATIVE_DEFER; /* two writes, two notifications: Python's */

    /* ---- the packer ADDR_MOD slot (pack_addr_mod); ThreadConfig must hold it */
    uint32_t m[PACK_ADDR_MOD_FIELD_COUNT];
    for (uint32_t i = 0; i < PACK_ADDR_MOD_FIELD_COUNT; i++) {
        uint32_t reg = mod_specs[addr_mode & 3][i].reg;
        if (reg >= v->thread_config_words)
            return NATIVE_DEFER;
        m[i] = (v->thread_config[(uint64_t)thread * v->thread_config_words + reg] & mod_specs[addr_mode & 3][i].mask)
            >> mod_specs[addr_mode & 3][i].shift;
    }

    /* ---- commit */
    for (int k = 0; k < 2; k++) {
        struct stream *st = k ? &exps : &data;
        if (st->whole) {
            memcpy(v->l1 + st->address, st->buffered, (size_t)st->whole);
            note_l1_written(v, st->address, st->address + st->whole, cycle);
        }
        uint8_t *buffer = buffers + k * CHUNK;
        int64_t left = st->length - st->whole;
        memset(buffer, 0, CHUNK); /* PackState keeps the bytes past the pending ones zero */
        memcpy(buffer, st->buffered + st->whole, (size_t)left);
        stream[k ? PACK_STREAM_EXPONENT_PENDING : PACK_STREAM_PENDING] = left;
        stream[k ? PACK_STREAM_EXPONENT_ADDRESS : PACK_STREAM_DATA_ADDRESS] = st->address + st->whole;
    }
    stream[PACK_STREAM_NEEDS_NEW_ADDRESS] = flushing;
    for (uint32_t channel = 0; channel < 2; channel++) {
        uint32_t *value = packer_counters(v, thread, channel), *cr = packer_counters_cr(v, thread, channel);
        uint32_t y_clear = m[channel ? PAM_YDST_CLEAR : PAM_YSRC_CLEAR];
        uint32_t y_cr = m[channel ? PAM_YDST_CR : PAM_YSRC_CR], y_incr = m[channel ? PAM_YDST_INCR : PAM_YSRC_INCR];
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
    /* pack.stream.accept: the thread goes on once the packer has taken the work; it drains later. */
    int64_t written = (int64_t)n * width;
    int64_t writes = (written + PACK_TIMING_L1_BYTES_PER_CYCLE - 1) / PACK_TIMING_L1_BYTES_PER_CYCLE;
    int64_t taken = writes > PACK_TIMING_ISSUE_CYCLES ? writes : PACK_TIMING_ISSUE_CYCLES;
    int64_t end = cycle + taken + PACK_TIMING_DRAIN_CYCLES;
    if (end > stream[PACK_STREAM_DRAINED])
        stream[PACK_STREAM_DRAINED] = end;
    extend_done(v, thread, stream[PACK_STREAM_DRAINED]);
    return taken;
}
#endif

#ifdef TSIM_WORMHOLE
/* ------------------------------------------------------------------------------ Wormhole's PACR
 *
 * pack/wormhole.py's pacr, bit for bit and cycle for cycle, for the configurations kernels use: the
 * packers PackerMask names (PACR.md's table), each with its own Config (Packers[i].Config: its
 * THCON_SEC*_REG1 / REG8 fields, its REG9 FIFO limits, its DEST_TARGET_REG_CFG_PACK_SEC[i] Dst offset)
 * and stream state (pack.stream.PackersState: row i of the view's pack_stream / pack_buffer), reading
 * InputNumDatums contiguous Dst datums (Dst16b or Dst32b, no remap or swizzle on Wormhole) kept by
 * Downsample_mask, with the early and late conversions, a uniform edge mask, ZeroWrite, Flush and
 * Last, the output address generator, OvrdThreadId's ADC, the AddrMod step of every ADC used, and
 * timing.PACK_WORMHOLE through stream.accept.
 *
 * Deferred to Python, before anything changes: whatever raises there (an operand bit no page
 * documents, an undefined PackerMask, compression, packer 0 reading L1, Add_l1_dest_addr_offset, the
 * undescribed fields, every conversion convert.conversion refuses, a late conversion's mishandled
 * datum, a write that leaves L1); ReLU (STACC_RELU_ApplyRelu & 3), exponent thresholding, L1
 * accumulation, BFP8 intermediates, block-float and FP8 outputs; more than STREAM_DATUMS datums a
 * packer; and a PACR that writes L1 more than once (Python tells the tile of each write: one range is
 * all the view notifies).
 */

/* What one packer does in this PACR (pack.wormhole._Work), computed before anything changes. */
struct pk_work {
    uint32_t packer, adc, writes;
    int64_t cycles;
    struct stream data, exps;
};

/* Packers[i].Config's field `index` (PPF_*) in Config[s]. */
static int packer_field(const struct copro_view *v, uint32_t s, uint32_t packer, uint32_t index, uint32_t *out)
{
    static const struct {
        uint32_t word, shift, mask;
    } specs[PACK_PACKERS][PPF_COUNT] = PACK_PACKER_FIELD_SPECS;
    return cfg_field(v, s, specs[packer][index].word, specs[packer][index].shift, specs[packer][index].mask, out);
}

/* The fields every packer shares (pack.convert.conversion's, the edge mask's, the PCK0 address
 * generators'). */
static int read_shared_config(const struct copro_view *v, uint32_t s, struct pk_config *c, uint32_t *all_ovrd,
                              uint32_t *all_disable)
{
    return read_common_config(v, s, c)
        && PKF(v, s, THCON_SEC0_REG1_ALL_PACK_DISABLE_ZERO_COMPRESS_OVRD, all_ovrd)
        && PKF(v, s, THCON_SEC0_REG1_ALL_PACK_DISABLE_ZERO_COMPRESS, all_disable);
}

/* pack.wormhole._first_address: L1_Dest_addr + !Sub_l1_tile_header_size of packer `packer` (uint32). */
static int first_address(const struct copro_view *v, uint32_t s, uint32_t packer, uint64_t *address)
{
    uint32_t dest, sub_header;
    if (!packer_field(v, s, packer, PPF_L1_DEST_ADDR, &dest)
        || !packer_field(v, s, packer, PPF_SUB_L1_TILE_HEADER_SIZE, &sub_header))
        return 0;
    *address = ((uint64_t)dest + (sub_header ? 0 : 1)) & 0xFFFFFFFFu;
    return 1;
}

/* pack.wormhole._packer_work: packer i's datums and L1 writes, changing nothing. Returns 1 (done), or
 * NATIVE_DEFER / NATIVE_WAIT as the instruction must. */
static int64_t packer_work(struct copro_view *v, uint32_t thread, uint32_t s, const struct pk_config *shared,
                           uint32_t all_ovrd, uint32_t all_disable, uint32_t i, uint64_t packer0_address,
                           uint32_t zero_write, uint32_t flush, uint32_t last, uint32_t ovrd, int64_t cycle,
                           struct pk_work *w)
{
    struct pk_config c = *shared;
    uint32_t f[PPF_COUNT];
    for (uint32_t k = 0; k < PPF_COUNT; k++)
        if (!packer_field(v, s, i, k, &f[k]))
            return NATIVE_DEFER;

    /* ---- configuration the model does not cover (Python raises), then the modes kept in Python */
    uint32_t uncompressed = all_ovrd ? all_disable >> i & 1 : f[PPF_DISABLE_ZERO_COMPRESS];
    if (!uncompressed || (i == 0 && f[PPF_SOURCE_INTERFACE_SELECTION]) || f[PPF_ADD_L1_DEST_ADDR_OFFSET])
        return NATIVE_DEFER;
    for (uint32_t k = 0; k < PPF_UNDESCRIBED_COUNT; k++)
        if (f[PPF_UNDESCRIBED + k])
            return NATIVE_DEFER;
    c.in_format = f[PPF_IN_DATA_FORMAT];
    uint32_t inter = c.dstacc_override ? c.dstacc_val : c.dstacc, out = f[PPF_OUT_DATA_FORMAT];
    if (!conversion_ok(&c, inter, out))
        return NATIVE_DEFER; /* Undefined, Unimplemented, or a mode of Python's (FP8, BFP, BFP8 inter) */
    if (f[PPF_PACK_L1_ACC] || (c.relu & 3) || f[PPF_EXP_THRESHOLD_EN])
        return NATIVE_DEFER; /* wormhole.py uses ApplyRelu & 3: bits 2..3 alone are ReLU off */
    int from_dst = !(zero_write || flush);
    uint32_t edge = 0xFFFFu;
    if (from_dst && !edge_mask(v, s, &c, i, &edge))
        return NATIVE_DEFER;
    int float32 = inter == PACK_FMT_FP32 || inter == PACK_FMT_TF32;
    if (edge != 0xFFFFu && c.edge_mode && !(float32 || inter == PACK_FMT_BF16))
        return NATIVE_DEFER; /* no -infinity pattern in FP16 or the integers: Unimplemented */
    uint32_t masked = c.edge_mode ? (inter == PACK_FMT_BF16 ? NEG_INF_BF16 : NEG_INF32) : 0;

    /* ---- input address generator: ADC CurrentThread, or with OvrdThreadId Addr_cnt_context (3: 0) */
    uint32_t which = thread;
    if (ovrd)
        which = f[PPF_ADDR_CNT_CONTEXT] == 3 ? 0 : f[PPF_ADDR_CNT_CONTEXT];
    if (which >= v->threads)
        return NATIVE_DEFER;
    const uint32_t *ch0 = packer_counters(v, which, 0), *ch1 = packer_counters(v, which, 1);
    uint64_t addr = ((uint64_t)c.base0 + (uint64_t)ch0[0] * (c.xstride0 & 0xFu) + (uint64_t)ch0[1] * c.ystride0
                     + (uint64_t)ch0[2] * c.zstride0 + (uint64_t)ch0[3] * c.wstride0)
        & 0xFFFFFFFFu;
    uint64_t bytes_per_datum = 1, x_mask = 0xF;
    if ((c.in_format & 3) == 0)
        bytes_per_datum = 4, x_mask = 3;
    else if ((c.in_format & 3) == 1)
        bytes_per_datum = 2, x_mask = 7;
    int64_t count = flush ? 0 : (int64_t)ch1[0] - (int64_t)ch0[0] + 1;
    if (count < 0 || count > STREAM_DATUMS)
        return NATIVE_DEFER; /* UndefinedBehavior (the count wraps), or more than this file reads */
    addr = ((addr / bytes_per_datum) & ~x_mask) + (ch0[0] & x_mask) + ((uint64_t)f[PPF_DST_OFFSET] << 4);
    uint32_t keep_mask = f[PPF_DOWNSAMPLE_MASK] ? f[PPF_DOWNSAMPLE_MASK] : 0xFFFFu; /* Downsampling.md */

    /* ---- fetch from Dst (every datum the address generator names, kept or not), the datums' stages */
    uint32_t datums[STREAM_DATUMS], kept = 0;
    if (from_dst && count) {
        int64_t until = 0;
        for (int64_t j = 0; j < count; j++) {
            uint32_t row = (uint32_t)((addr + (uint64_t)j) & DST_ADDRESS_MASK) >> 4;
            uint32_t r = (c.read32 ? regs_adj32(row, 0, 0) : regs_adj16(row, 0)) & REGS_ROW_MASK;
            int64_t ready = v->dst_ready[r / REGS_DST_BLOCK_ROWS];
            if (c.read32) {
                int64_t low = v->dst_ready[((r + 8) & REGS_ROW_MASK) / REGS_DST_BLOCK_ROWS];
                ready = ready > low ? ready : low;
            }
            until = until > ready ? until : ready;
        }
        if (until > cycle)
            return native_wait(v, WAIT_PACK_DST_HIDDEN, until, 0);
        for (int64_t j = 0; j < count; j++) {
            if (!(keep_mask >> (j % 16) & 1))
                continue;
            uint32_t a = (uint32_t)((addr + (uint64_t)j) & DST_ADDRESS_MASK), col = a & 15, raw;
            uint32_t r = (c.read32 ? regs_adj32(a >> 4, 0, 0) : regs_adj16(a >> 4, 0)) & REGS_ROW_MASK;
            if (c.read32) {
                uint32_t low = (r + 8) & REGS_ROW_MASK;
                raw = v->dst_row_valid[r] && v->dst_row_valid[low]
                    ? (uint32_t)v->dst[r * REGS_DST_COLS + col] << 16 | v->dst[low * REGS_DST_COLS + col]
                    : 0;
            } else {
                raw = v->dst_row_valid[r] ? v->dst[r * REGS_DST_COLS + col] : 0;
            }
            datums[kept] = early(&c, inter, raw);
            if (!(edge >> col & 1))
                datums[kept] = masked;
            kept++;
        }
    } else {
        /* ZeroWrite's datums come from /dev/null after exponent thresholding: no early conversion */
        for (int64_t j = 0; j < count; j++)
            if (keep_mask >> (j % 16) & 1)
                datums[kept++] = 0;
    }
    uint32_t width = out == PACK_FMT_FP32 || out == PACK_FMT_TF32 || out == PACK_FMT_INT32 ? 4
        : out == PACK_FMT_INT8                                                            ? 1
                                                                                          : 2;
    uint8_t bytes[STREAM_DATUMS * 4];
    for (uint32_t k = 0; k < kept; k++) {
        uint32_t value;
        if (!late(inter, out, datums[k], &value))
            return NATIVE_DEFER;
        for (uint32_t b = 0; b < width; b++)
            bytes[k * width + b] = (uint8_t)(value >> (8 * b)); /* little-endian, the low `width` bytes */
    }

    /* ---- output address generator */
    int64_t *stream = v->pack_stream + (uint64_t)i * PACK_STREAM_WORDS;
    uint8_t *buffers = v->pack_buffer + (uint64_t)i * 2 * CHUNK;
    int64_t data_address = stream[PACK_STREAM_DATA_ADDRESS];
    int64_t exponent_address = stream[PACK_STREAM_EXPONENT_ADDRESS];
    if (stream[PACK_STREAM_NEEDS_NEW_ADDRESS]) {
        uint64_t out_addr;
        if (!first_address(v, s, i, &out_addr))
            return NATIVE_DEFER;
        if (i && packer0_address >> 31) /* packers 1..3 add packer 0's address when its bit 31 is set */
            out_addr += packer0_address;
        uint64_t yzw = ((uint64_t)c.base1 + (uint64_t)ch1[1] * c.ystride1 + (uint64_t)ch1[2] * c.zstride1
                        + (uint64_t)ch1[3] * c.wstride1)
            & 0xFFFFFFFFu;
        out_addr = (out_addr + (yzw & ~(uint64_t)0xF)) & 0xFFFFFFFFu; /* YZW_Addr & ~0xf, 16-byte units */
        if (out_addr > (uint64_t)f[PPF_LIMIT_ADDRESS] * 2 + 1)
            out_addr = (out_addr - (uint64_t)f[PPF_FIFO_SIZE] * 2) & 0xFFFFFFFFu;
        if (out & 2) { /* OutputFormatLessThan16Bits: the exponent stream takes its address first */
            exponent_address = (int64_t)(out_addr & PACK_L1_ADDRESS_MASK) << 4;
            out_addr += f[PPF_EXP_SECTION_SIZE];
        }
        data_address = (int64_t)(out_addr & PACK_L1_ADDRESS_MASK) << 4;
    }

    /* ---- the 16-byte writes of both streams (checked here, before anything is written) */
    int flushing = last || flush;
    if (!plan_stream(v, &w->data, data_address, buffers, stream[PACK_STREAM_PENDING], bytes,
                     (int64_t)kept * width, flushing)
        || !plan_stream(v, &w->exps, exponent_address, buffers + CHUNK, stream[PACK_STREAM_EXPONENT_PENDING],
                        NULL, 0, flushing))
        return NATIVE_DEFER;
    w->packer = i;
    w->adc = which;
    w->writes = (w->data.whole != 0) + (w->exps.whole != 0);
    int64_t written = (int64_t)kept * width; /* no exponents: block floats stay Python's */
    w->cycles = (written + PACK_TIMING_L1_BYTES_PER_CYCLE - 1) / PACK_TIMING_L1_BYTES_PER_CYCLE;
    return 1;
}

int64_t pack_pacr(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    static const uint8_t packer_masks[16] = PACK_PACKER_MASKS;
    static const struct {
        uint32_t reg, shift, mask;
    } mod_specs[PACK_ADDR_MOD_SLOTS][PACK_ADDR_MOD_FIELD_COUNT] = PACK_ADDR_MOD_SPECS;

    /* The table's slots are wider than PACR.md's operands: a bit beyond them is UndefinedBehavior. */
    uint32_t addr_mode = F_PACR_ADDR_MODE(word), zero_write = F_PACR_ZERO_WRITE(word);
    uint32_t flush = F_PACR_FLUSH(word), last = F_PACR_LAST(word), ovrd = F_PACR_OVRD_THREAD_ID(word);
    if (addr_mode >> 2 || zero_write >> 1 || F_PACR_CONCAT(word) >> 1 || flush >> 1)
        return NATIVE_DEFER;
    uint32_t packers = packer_masks[F_PACR_PACK_SEL(word)];
    if (!packers)
        return NATIVE_DEFER; /* a PackerMask PACR.md's table does not define */

    /* ---- configuration */
    if (THD_CFG_STATE_ID_STATEID_REG >= v->thread_config_words)
        return NATIVE_DEFER;
    uint32_t s = (v->thread_config[(uint64_t)thread * v->thread_config_words + THD_CFG_STATE_ID_STATEID_REG]
                  & THD_CFG_STATE_ID_STATEID_MASK) >> THD_CFG_STATE_ID_STATEID_SHIFT;
    struct pk_config c;
    uint32_t all_ovrd, all_disable;
    uint64_t packer0_address;
    if (!read_shared_config(v, s, &c, &all_ovrd, &all_disable) || !first_address(v, s, 0, &packer0_address))
        return NATIVE_DEFER;

    /* ---- every packer's work, in packer order (a Wait returns at the first packer that waits) */
    struct pk_work work[PACK_PACKERS];
    uint32_t n = 0, writes = 0;
    for (uint32_t i = 0; i < PACK_PACKERS; i++) {
        if (!(packers >> i & 1))
            continue;
        int64_t done = packer_work(v, thread, s, &c, all_ovrd, all_disable, i, packer0_address, zero_write, flush,
                                   last, ovrd, cycle, &work[n]);
        if (done != 1)
            return done;
        writes += work[n++].writes;
    }
    if (writes > 1)
        return NATIVE_DEFER; /* several writes, several notifications: Python's */

    /* ---- the packer ADDR_MOD slot of the issuing thread (pack_addr_mod); ThreadConfig must hold it */
    uint32_t m[PACK_ADDR_MOD_FIELD_COUNT];
    for (uint32_t k = 0; k < PACK_ADDR_MOD_FIELD_COUNT; k++) {
        uint32_t reg = mod_specs[addr_mode][k].reg;
        if (reg >= v->thread_config_words)
            return NATIVE_DEFER;
        m[k] = (v->thread_config[(uint64_t)thread * v->thread_config_words + reg] & mod_specs[addr_mode][k].mask)
            >> mod_specs[addr_mode][k].shift;
    }

    /* ---- commit, packer by packer */
    int flushing = last || flush;
    int64_t taken = PACK_TIMING_ISSUE_CYCLES, drained = 0;
    uint32_t adcs = 0;
    for (uint32_t k = 0; k < n; k++) {
        struct pk_work *w = &work[k];
        int64_t *stream = v->pack_stream + (uint64_t)w->packer * PACK_STREAM_WORDS;
        uint8_t *buffers = v->pack_buffer + (uint64_t)w->packer * 2 * CHUNK;
        for (int e = 0; e < 2; e++) {
            struct stream *st = e ? &w->exps : &w->data;
            if (st->whole) {
                memcpy(v->l1 + st->address, st->buffered, (size_t)st->whole);
                note_l1_written(v, st->address, st->address + st->whole, cycle);
            }
            uint8_t *buffer = buffers + e * CHUNK;
            int64_t left = st->length - st->whole;
            memset(buffer, 0, CHUNK); /* PackState keeps the bytes past the pending ones zero */
            memcpy(buffer, st->buffered + st->whole, (size_t)left);
            stream[e ? PACK_STREAM_EXPONENT_PENDING : PACK_STREAM_PENDING] = left;
            stream[e ? PACK_STREAM_EXPONENT_ADDRESS : PACK_STREAM_DATA_ADDRESS] = st->address + st->whole;
        }
        stream[PACK_STREAM_NEEDS_NEW_ADDRESS] = flushing;
        adcs |= 1u << w->adc;
        taken = w->cycles > taken ? w->cycles : taken;
    }
    /* unit.advance_adc: once for every ADC a packer used */
    for (uint32_t which = 0; which < v->threads; which++) {
        if (!(adcs >> which & 1))
            continue;
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
    /* pack.stream.accept over every packer's row: the thread goes on once the slowest packer has taken
     * the work; every row keeps the latest drain. */
    for (uint32_t i = 0; i < PACK_PACKERS; i++) {
        int64_t d = v->pack_stream[(uint64_t)i * PACK_STREAM_WORDS + PACK_STREAM_DRAINED];
        drained = d > drained ? d : drained;
    }
    int64_t end = cycle + taken + PACK_TIMING_DRAIN_CYCLES;
    end = end > drained ? end : drained;
    for (uint32_t i = 0; i < PACK_PACKERS; i++)
        v->pack_stream[(uint64_t)i * PACK_STREAM_WORDS + PACK_STREAM_DRAINED] = end;
    extend_done(v, thread, end);
    return taken;
}
#endif
