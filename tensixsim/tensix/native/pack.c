/* The packer's PACR (Dst -> L1), bit for bit and cycle for cycle as tensixsim/tensix/pack/unit.py's pacr
 * executes it: Dst read as Dst16b or Dst32b (Read_32b_data), every intermediate and output format the
 * Python model converts (FP32 / TF32 / BF16 / FP16 / INT32 / INT16 / INT8, the BFP8 intermediate as E8M6
 * or BF16, the block-float outputs BFP8 / BFP4 / BFP2 and their a styles with their shared exponents)
 * with the early and late conversions, edge masking with one mask for every row, ReLU in its four modes,
 * exponent thresholding, ZeroWrite, Flush and Last, the output address generator with NeedsNewAddress,
 * the pending (< 16 byte) data and exponent stream buffers (pack.stream.PackState.stream / buffer),
 * L1 accumulation (FP32 / INT32 / FP16 / BF16 lanes), the packer ADDR_MOD's ADC updates and the Retire
 * cycles.
 *
 * Deferred to Python (each case decided before anything is written): whatever raises there, namely
 * - the operand fields without a Blackhole page, unmodelled configuration (compression, downsampling,
 *   the THCON_SEC0_REG1 zero checks), a read interface mapping not evidenced, a non-zero YZW_Addr;
 * - every conversion the pack/convert.py table calls Undefined or Unimplemented (the BFP8a
 *   intermediate, FP8 output, stochastic rounding, INT8 shift...), a late conversion's mishandled datums;
 * - ApplyRelu's bits 2..3, a threshold ReLU mode on an integer intermediate or with a negative
 *   threshold, exponent thresholding with ReLU mode 3, L1 accumulation in another format than FP32 /
 *   INT32 / FP16 / BF16, block-float datums not a whole number of 16-datum blocks;
 * - a write that leaves L1 (MemoryFault);
 * and a Wait: Dst rows the matrix unit wrote less than five cycles ago (readable_from).
 *
 * L1 is written (or accumulated into) through v->l1 directly; each stream's write goes to
 * v->l1_written, data first, so that Python tells the tile of each (Tile.coprocessor_wrote_l1) as
 * Coprocessor.l1_write would have.
 *
 * Wormhole's library runs Wormhole's PACR instead (pack_wormhole.c), over the same conversions, stages
 * and stream buffers (pack_common.h, pack_formats.h); this file is empty there.
 */
#include "pack_common.h"

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
        && PKF(v, s, THCON_SEC0_REG1_EXP_THRESHOLD, &c->exp_threshold)
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
    if (!conversion_ok(&c, inter, out))
        return NATIVE_DEFER;
    if (c.l1_acc && !bit(PACK_FORMAT_ACCUMULATE, out))
        return NATIVE_DEFER; /* L1 accumulates FP32 / INT32 / FP16 / BF16 only: Unimplemented */
    int integer = inter == PACK_FMT_INT32 || inter == PACK_FMT_INT16 || inter == PACK_FMT_INT8;
    if (c.relu > 3 || (c.relu >= 2 && (integer || (c.relu_threshold & 0x8000u))))
        return NATIVE_DEFER; /* ApplyRelu bits 2..3, a threshold mode on integers, a negative threshold */
    if (c.exp_threshold_en && c.relu == 3)
        return NATIVE_DEFER; /* exponent thresholding with ReLU mode 3: their order is not documented */
    struct pk_stages st;
    stages_of(&st, inter, c.unsigned_, c.relu, c.relu_threshold, c.exp_threshold_en, c.exp_threshold);
    int from_dst = !(zero_write || flush);
    uint32_t mask = 0xFFFFu;
    if (from_dst && !edge_mask(v, s, &c, 0, &mask))
        return NATIVE_DEFER;
    int float32 = inter == PACK_FMT_FP32 || inter == PACK_FMT_TF32;
    int bf16 = inter == PACK_FMT_BF16 || inter == PACK_FMT_BFP8;
    if (mask != 0xFFFFu && c.edge_mode && !(float32 || bf16))
        return NATIVE_DEFER; /* no -infinity pattern in FP16 or the integers: Unimplemented */
    uint32_t masked = c.edge_mode ? (bf16 ? NEG_INF_BF16 : NEG_INF32) : 0;

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
    if (bit(PACK_FORMAT_BFP, out) && count * n_interfaces % PACK_BFP_BLOCK)
        return NATIVE_DEFER; /* a 16-datum block split across PACRs is undocumented: Unimplemented */
    uint32_t spacing = dst_access_mode ? PACK_STRIDED_INTERFACE_DATUMS : ROW_DATUMS;
    uint32_t addresses[MAX_DATUMS], n = 0;
    for (uint32_t k = 0; k < INTERFACES; k++)
        if (interfaces >> k & 1)
            for (int64_t j = 0; j < count; j++)
                addresses[n++] = (source + spacing * k + (uint32_t)j) & DST_ADDRESS_MASK;

    /* ---- fetch, early conversion, edge masking, ReLU, exponent thresholding, late conversion */
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
    for (uint32_t i = 0; i < n; i++)
        if (!late_value(inter, out, stages(&st, datums[i]), &datums[i]))
            return NATIVE_DEFER;
    uint8_t bytes[MAX_DATUMS * 4], exponents[MAX_DATUMS / PACK_BFP_BLOCK];
    int64_t exponent_bytes, data_bytes = output_bytes(out, datums, n, bytes, exponents, &exponent_bytes);

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
    if (!plan_stream(v, &data, data_address, buffers, stream[PACK_STREAM_PENDING], bytes, data_bytes, flushing)
        || !plan_stream(v, &exps, exponent_address, buffers + CHUNK, stream[PACK_STREAM_EXPONENT_PENDING],
                        exponents, exponent_bytes, flushing))
        return NATIVE_DEFER;

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
    commit_streams(v, stream, buffers, &data, &exps, flushing, c.l1_acc ? out : NO_ACCUMULATE, cycle);
    advance_packer_adc(v, thread, m);
    /* pack.stream.accept: the thread goes on once the packer has taken the work (its bytes written, or
     * with L1 accumulation one 128-bit read-modify-write a data chunk); it drains later. */
    int64_t written = data_bytes + exponent_bytes;
    int64_t writes = (written + PACK_TIMING_L1_BYTES_PER_CYCLE - 1) / PACK_TIMING_L1_BYTES_PER_CYCLE;
    if (c.l1_acc)
        writes = data.whole / CHUNK * PACK_TIMING_L1_ACCUMULATE_CYCLES;
    int64_t taken = writes > PACK_TIMING_ISSUE_CYCLES ? writes : PACK_TIMING_ISSUE_CYCLES;
    int64_t end = cycle + taken + PACK_TIMING_DRAIN_CYCLES;
    if (end > stream[PACK_STREAM_DRAINED])
        stream[PACK_STREAM_DRAINED] = end;
    extend_done(v, thread, stream[PACK_STREAM_DRAINED]);
    return taken;
}
#else
typedef int pack_blackhole_unused; /* (ISO C wants something in a translation unit) */
#endif
