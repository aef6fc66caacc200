/* Wormhole's PACR: pack/wormhole.py's pacr, bit for bit and cycle for cycle, over the conversions, stages
 * and stream buffers Blackhole's uses (pack_common.h, pack_formats.h): the packers PackerMask names
 * (PACR.md's table), each with its own Config (Packers[i].Config: its THCON_SEC*_REG1 / REG8 fields, its
 * REG9 FIFO limits, its DEST_TARGET_REG_CFG_PACK_SEC[i] Dst offset) and stream state
 * (pack.stream.PackersState: row i of the view's pack_stream / pack_buffer), reading InputNumDatums
 * contiguous Dst datums (Dst16b or Dst32b, no remap or swizzle on Wormhole) kept by Downsample_mask,
 * with the early conversion, a uniform edge mask, ReLU (ApplyRelu & 3) and exponent thresholding on
 * Dst's datums, ZeroWrite, Flush and Last, the late conversion to every output format the model has
 * (FP8 and the block floats with their shared exponents included; the BFP8 intermediate too), the
 * output address generator, L1 accumulation, OvrdThreadId's ADC, the AddrMod step of every ADC used,
 * and timing.PACK_WORMHOLE through stream.accept. The packers commit in packer order, each stream's
 * write noted for the tile on its own (data, then exponents), as Python writes them.
 *
 * Deferred to Python, before anything changes: whatever raises there (an operand bit no page
 * documents, an undefined PackerMask, compression, packer 0 reading L1, Add_l1_dest_addr_offset, the
 * undescribed fields, every conversion convert.conversion refuses (the BFP8a intermediate...), a late
 * conversion's mishandled datum, a threshold ReLU mode on an integer intermediate or with a negative
 * threshold, L1 accumulation in another format than FP32 / INT32 / FP16 / BF16, block-float datums not
 * a whole number of 16-datum blocks, a write that leaves L1), and more than STREAM_DATUMS datums a
 * packer.
 */
#include "pack_common.h"

#ifdef TSIM_WORMHOLE
_Static_assert(2 * PACK_PACKERS <= L1_WRITTEN_RANGES, "a PACR's writes (two streams a packer) are not all noted");

/* What one packer does in this PACR (pack.wormhole._Work), computed before anything changes. */
struct pk_work {
    uint32_t packer, adc, accumulate; /* accumulate: the output format L1 adds in, or NO_ACCUMULATE */
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
        return NATIVE_DEFER; /* Undefined, or Unimplemented (the BFP8a intermediate...) */
    if (f[PPF_PACK_L1_ACC] && !bit(PACK_FORMAT_ACCUMULATE, out))
        return NATIVE_DEFER; /* L1 accumulates FP32 / INT32 / FP16 / BF16 only: Unimplemented */
    uint32_t relu = c.relu & 3; /* wormhole.py reads ApplyRelu & 3: bits 2..3 alone are ReLU off */
    int integer = inter == PACK_FMT_INT32 || inter == PACK_FMT_INT16 || inter == PACK_FMT_INT8;
    if (relu >= 2 && (integer || (c.relu_threshold & 0x8000u)))
        return NATIVE_DEFER; /* a threshold mode on integers, a negative threshold: UndefinedBehavior */
    struct pk_stages st;
    stages_of(&st, inter, c.unsigned_, relu, c.relu_threshold, f[PPF_EXP_THRESHOLD_EN], f[PPF_EXP_THRESHOLD]);
    int from_dst = !(zero_write || flush);
    uint32_t edge = 0xFFFFu;
    if (from_dst && !edge_mask(v, s, &c, i, &edge))
        return NATIVE_DEFER;
    int float32 = inter == PACK_FMT_FP32 || inter == PACK_FMT_TF32;
    int bf16 = inter == PACK_FMT_BF16 || inter == PACK_FMT_BFP8;
    if (edge != 0xFFFFu && c.edge_mode && !(float32 || bf16))
        return NATIVE_DEFER; /* no -infinity pattern in FP16 or the integers: Unimplemented */
    uint32_t masked = c.edge_mode ? (bf16 ? NEG_INF_BF16 : NEG_INF32) : 0;

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
    uint32_t kept_count = 0; /* the datums the mask keeps of the count (its bits repeat every 16) */
    if (count)
        kept_count = (uint32_t)(count / 16) * (uint32_t)__builtin_popcount(keep_mask)
            + (uint32_t)__builtin_popcount(keep_mask & ((1u << (count % 16)) - 1));
    if (bit(PACK_FORMAT_BFP, out) && kept_count % PACK_BFP_BLOCK)
        return NATIVE_DEFER; /* a 16-datum block split across PACRs is undocumented: Unimplemented */

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
            uint32_t datum = early(&c, inter, raw);
            datums[kept++] = stages(&st, edge >> col & 1 ? datum : masked);
        }
    } else {
        /* ZeroWrite's datums come from /dev/null after exponent thresholding: no early conversion,
         * ReLU or thresholding */
        for (int64_t j = 0; j < count; j++)
            if (keep_mask >> (j % 16) & 1)
                datums[kept++] = 0;
    }
    for (uint32_t k = 0; k < kept; k++)
        if (!late_value(inter, out, datums[k], &datums[k]))
            return NATIVE_DEFER;
    uint8_t bytes[STREAM_DATUMS * 4], exponents[STREAM_DATUMS / PACK_BFP_BLOCK];
    int64_t exponent_bytes, data_bytes = output_bytes(out, datums, kept, bytes, exponents, &exponent_bytes);

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
    if (!plan_stream(v, &w->data, data_address, buffers, stream[PACK_STREAM_PENDING], bytes, data_bytes,
                     flushing)
        || !plan_stream(v, &w->exps, exponent_address, buffers + CHUNK, stream[PACK_STREAM_EXPONENT_PENDING],
                        exponents, exponent_bytes, flushing))
        return NATIVE_DEFER;
    w->packer = i;
    w->adc = which;
    w->accumulate = f[PPF_PACK_L1_ACC] ? out : NO_ACCUMULATE;
    if (f[PPF_PACK_L1_ACC]) /* one 128-bit read-modify-write per data chunk written */
        w->cycles = w->data.whole / CHUNK * PACK_TIMING_L1_ACCUMULATE_CYCLES;
    else
        w->cycles = (data_bytes + exponent_bytes + PACK_TIMING_L1_BYTES_PER_CYCLE - 1)
            / PACK_TIMING_L1_BYTES_PER_CYCLE;
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
    uint32_t n = 0;
    for (uint32_t i = 0; i < PACK_PACKERS; i++) {
        if (!(packers >> i & 1))
            continue;
        int64_t done = packer_work(v, thread, s, &c, all_ovrd, all_disable, i, packer0_address, zero_write, flush,
                                   last, ovrd, cycle, &work[n]);
        if (done != 1)
            return done;
        n++;
    }

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
        commit_streams(v, stream, buffers, &w->data, &w->exps, flushing, w->accumulate, cycle);
        adcs |= 1u << w->adc;
        taken = w->cycles > taken ? w->cycles : taken;
    }
    /* unit.advance_adc: once for every ADC a packer used */
    for (uint32_t which = 0; which < v->threads; which++) {
        if (adcs >> which & 1)
            advance_packer_adc(v, which, m);
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
#else
typedef int pack_wormhole_unused; /* (ISO C wants something in a translation unit; Blackhole's is pack.c) */
#endif
