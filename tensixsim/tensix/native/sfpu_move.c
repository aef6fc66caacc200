/* The vector unit's data movement: SFPLOAD, SFPSTORE, SFPLOADI, SFPMOV, SFPNOP and SFPCONFIG, exactly
 * as tensixsim/tensix/sfpu/dst.py (SFPLOAD, SFPSTORE) and sfpu/unit.py (the others) execute them (their
 * docstrings give the readings: the backdoor load, the Dst address from Imm10, the RWCs, Sp and the
 * DEST_* configuration, LaneConfig's column exchange, blocking and Dst-index capture, the Adj16 / Adj32
 * row mapping). Each occupies the vector unit SFPU.issue cycles.
 *
 * Deferred to Python: whatever raises there (a set bit beyond Imm10 or SFPMOV's Imm12, a lane reading
 * or writing a Dst row ZEROACC left undefined, an SFPLOADI mode no page documents on an enabled lane,
 * an ADDR_MOD slot or RWC state whose Blackhole meaning is undocumented), SFPLOAD's wait after a
 * matrix-unit write of the rows it reads (sfpu.dst._after_matrix_write). SFPLOADMACRO (sfpu_macro.c)
 * shares SFPLOAD's plan and SFPSTORE's lane work.
 *
 * Wormhole's library (TSIM_WORMHOLE) runs SFPLOAD / SFPSTORE as sfpu/wormhole.py does: Addr without Sp,
 * Dst without remap or swizzle, its integer conversions and unflushed FP32 store, and its ApplyAddrMod
 * (adc.c).
 */
#include "regs.h"
#include "sfpu.h"

enum { IMM10_BITS = 10 };   /* SFPLOAD / SFPSTORE: Imm10 in the 13-bit dest_reg_addr */
enum { CFG_STATES = 2 };    /* config/unit.py ConfigState.config: Config[2] */
enum { TEMPLATES = 4 };     /* LoadMacroConfig.InstructionTemplate[4] / Sequence[4] (copro.h) */
enum { ROWS_PER_LANE_COLUMN = 8 }; /* lane / 8: the Dst row of a lane, lane & 7 its column pair */
enum { MISC_BITS = 12 };    /* LoadMacroConfig.Misc: uint12_t */
#define ADDR_ROW_MASK 0x3FFu /* Addr, Sp and the Dst offsets are 10 bits (sfpu.dst._dst_addr) */
#define LOW16 0xFFFFu
#define HIGH16 0xFFFF0000u
#define SIGN32 0x80000000u

/* SFPLOADI Mod0 (sfpu.unit._LOADI_MODES) */
enum { LOADI_BF16 = 0, LOADI_FP16 = 1, LOADI_UINT16 = 2, LOADI_INT16 = 4, LOADI_HI16 = 8, LOADI_LO16 = 10 };
/* SFPMOV Mod1 */
enum { MOV_NEGATE = 1, MOV_ALL_LANES_ENABLED = 2, MOV_FROM_SPECIAL = 8 };
/* SFPCONFIG Mod1 */
enum { CFG_IMM16_IS_VALUE = 1, CFG_OR = 2, CFG_AND = 4, CFG_XOR = 6, CFG_OP_MASK = 6 };
enum { CFG_IMM16_IS_LANE_MASK = 8 };

/* ------------------------------------------------------------------------------ configuration */

/* ThreadConfig[thread] field (reg, shift, mask in place); -1 when the register is beyond the array. */
static int64_t thread_field(const struct copro_view *v, uint32_t thread, uint32_t reg, uint32_t shift,
                            uint32_t mask)
{
    if (reg >= v->thread_config_words)
        return -1;
    return (v->thread_config[(uint64_t)thread * v->thread_config_words + reg] & mask) >> shift;
}

/* Config[state] field; -1 when the word is beyond the array. */
static int64_t config_field(const struct copro_view *v, uint32_t state, uint32_t word, uint32_t shift,
                            uint32_t mask)
{
    if (state >= CFG_STATES || word >= v->config_words)
        return -1;
    return (v->config[(uint64_t)state * v->config_words + word] & mask) >> shift;
}

#define THREAD_FIELD(v, t, NAME) thread_field(v, t, THD_##NAME##_REG, THD_##NAME##_SHIFT, THD_##NAME##_MASK)
#define CONFIG_FIELD(v, s, NAME) config_field(v, s, CFG_##NAME##_WORD, CFG_##NAME##_SHIFT, CFG_##NAME##_MASK)

/* What SFPLOAD / SFPSTORE read of the pipe's configuration (sfpu.dst.resolve_srcb, _dst_addr, _cells). */
struct pipe_config {
    uint32_t state;         /* CFG_STATE_ID_StateID */
    uint32_t remap, swizzle;/* DEST_ACCESS_CFG_remap_addrs / swizzle_32b (regs.dst_mapping) */
    uint32_t math_offset;   /* DEST_TARGET_REG_CFG_MATH_Offset */
    uint32_t regw_base;     /* DEST_REGW_BASE_Base */
    uint32_t sp_base;       /* DEST_SP_BASE_Base */
    uint32_t stack_incr;    /* SFPU_STACK_Incr */
};

/* The pipe's configuration, or 0 if a field lies beyond the arrays (Python would fail). */
static int read_pipe_config(const struct copro_view *v, uint32_t thread, struct pipe_config *c)
{
    int64_t state = THREAD_FIELD(v, thread, CFG_STATE_ID_STATEID);
    int64_t offset = THREAD_FIELD(v, thread, DEST_TARGET_REG_CFG_MATH_OFFSET);
#ifdef TSIM_WORMHOLE
    int64_t incr = 0; /* no Sp (nor its ThreadConfig field) */
#else
    int64_t incr = THREAD_FIELD(v, thread, SFPU_STACK_INCR);
#endif
    if (state < 0 || offset < 0 || incr < 0)
        return 0;
    uint32_t s = (uint32_t)state;
    int64_t regw = CONFIG_FIELD(v, s, DEST_REGW_BASE_BASE);
#ifdef TSIM_WORMHOLE /* no remap or swizzle (regs.dst_mapping), and no Sp in the address */
    int64_t remap = 0, swizzle = 0, sp_base = 0;
#else
    int64_t remap = CONFIG_FIELD(v, s, DEST_ACCESS_CFG_REMAP_ADDRS);
    int64_t swizzle = CONFIG_FIELD(v, s, DEST_ACCESS_CFG_SWIZZLE_32B);
    int64_t sp_base = CONFIG_FIELD(v, s, DEST_SP_BASE_BASE);
#endif
    if (remap < 0 || swizzle < 0 || regw < 0 || sp_base < 0)
        return 0;
    *c = (struct pipe_config){s, (uint32_t)remap, (uint32_t)swizzle, (uint32_t)offset, (uint32_t)regw,
                              (uint32_t)sp_base, (uint32_t)incr};
    return 1;
}

/* sfpu.dst.resolve_srcb: MOD0_FMT_SRCB as the SrcB format configuration makes it; -1 if unreadable. */
static int64_t resolve_srcb(const struct copro_view *v, uint32_t state, uint32_t mod0)
{
    if (mod0 != SFPU_FMT_SRCB)
        return mod0;
    int64_t fp32 = CONFIG_FIELD(v, state, ALU_ACC_CTRL_SFPU_FP32_ENABLED);
    int64_t override = CONFIG_FIELD(v, state, ALU_FORMAT_SPEC_REG_SRCB_OVERRIDE);
    int64_t value = CONFIG_FIELD(v, state, ALU_FORMAT_SPEC_REG_SRCB_VAL);
    int64_t reg1 = CONFIG_FIELD(v, state, ALU_FORMAT_SPEC_REG1_SRCB);
    if (fp32 < 0 || override < 0 || value < 0 || reg1 < 0)
        return -1;
    if (fp32)
        return SFPU_FMT_FP32;
    int64_t fmt = override ? value : reg1;
    return (SFPU_SRCB_AS_BF16_MASK >> fmt & 1) ? SFPU_FMT_BF16 : SFPU_FMT_FP16;
}

/* sfpu.dst._dst_addr: Addr, and the pipe's new Sp. Wormhole's (sfpu.wormhole._dst_addr) has no Sp:
 * Imm10 + the math offset + RWCs.Dst + DEST_REGW_BASE (only the low two bits of the last two with
 * MOD0_FMT_INT32_ALL), Sp unchanged. */
static uint32_t dst_addr(const struct copro_view *v, uint32_t thread, const struct pipe_config *c,
                         uint32_t imm10, uint32_t mod0, int store, uint32_t *new_sp)
{
#ifdef TSIM_WORMHOLE
    (void)store;
    uint32_t dst_offset = v->rwc[RWC_DST][thread] + c->regw_base;
    *new_sp = v->sfpu_sp[thread];
    return (imm10 + c->math_offset + (mod0 == SFPU_FMT_INT32_ALL ? dst_offset & 3 : dst_offset)) & ADDR_ROW_MASK;
#else
    uint32_t addr = imm10 + c->math_offset;
    uint32_t dst_offset = (v->rwc[RWC_DST][thread] + c->regw_base) & ADDR_ROW_MASK;
    uint32_t sp = v->sfpu_sp[thread];
    if (mod0 == SFPU_FMT_INT32_ALL) {
        if (!store && sp != 0)
            sp = (sp - c->stack_incr) & ADDR_ROW_MASK;
        uint32_t sp_offset = (sp + c->sp_base) & ADDR_ROW_MASK;
        addr += sp_offset + (dst_offset & 3);
        if (store)
            sp = (sp + c->stack_incr) & ADDR_ROW_MASK;
    } else {
        uint32_t sp_offset = (sp + c->sp_base) & ADDR_ROW_MASK;
        addr += dst_offset + (sp_offset & 3);
    }
    *new_sp = sp;
    return addr & ADDR_ROW_MASK;
#endif
}

/* ------------------------------------------------------------------------------ ApplyPartialAddrMod */


static void commit_addr_mod(struct copro_view *v, uint32_t thread, const uint32_t rwcs[RWC_FIELDS])
{
    for (uint32_t i = 0; i < RWC_FIELDS; i++)
        v->rwc[i][thread] = rwcs[i];
}

/* ------------------------------------------------------------------------------ Dst cells */

/* sfpu.dst.Cells: where each lane of an SFPLOAD / SFPSTORE at Addr goes in Dst. A lane's Dst row depends
 * only on lane / 8 and its column only on lane % 8, so both are kept per group of lanes: the row (and its
 * DstBits storage rows) once for each of the 4 rows, the column once for each of the 8 columns. */
enum { LANE_ROWS = LANES / ROWS_PER_LANE_COLUMN };
_Static_assert(LANE_ROWS == 4, "a lane mask's byte r holds lane row r");
struct cells {
    uint32_t rows[LANE_ROWS], cols[ROWS_PER_LANE_COLUMN];
    uint32_t storage[2][LANE_ROWS]; /* the DstBits rows: [0] only (Dst16b) or high, low halves (Dst32b) */
    uint32_t halves;                /* 1 or 2 */
    uint32_t reach, capture;        /* lane masks */
};

/* The lanes of row r (lane r * 8 .. r * 8 + 7) in a lane mask, as bits 0..7. */
static uint32_t row_lanes(uint32_t lanes, uint32_t r)
{
    return lanes >> (r * ROWS_PER_LANE_COLUMN) & 0xFFu;
}

/* sfpu.dst._cells */
static void find_cells(const struct copro_view *v, const struct pipe_config *c, uint32_t addr, int wide,
                       int store, struct cells *out)
{
    uint32_t exchange_bit = store ? SFPU_DEST_WR_COL_EXCHANGE : SFPU_DEST_RD_COL_EXCHANGE;
    uint32_t block_bit = store ? SFPU_BLOCK_DEST_WR_FROM_SFPU : SFPU_BLOCK_SFPU_RD_FROM_DEST;
    uint32_t capture_bits = SFPU_ENABLE_DEST_INDEX | SFPU_CAPTURE_DEFAULT_DEST_INDEX;
    out->halves = wide ? 2 : 1;
    for (uint32_t r = 0; r < LANE_ROWS; r++) {
        uint32_t row = ((addr & ~3u) + r) & REGS_ROW_MASK;
        out->rows[r] = row;
        if (wide) {
            uint32_t high = regs_adj32(row, c->remap, c->swizzle);
            out->storage[0][r] = high;
            out->storage[1][r] = high + REGS_DST_BLOCK_ROWS;
        } else {
            out->storage[0][r] = out->storage[1][r] = regs_adj16(row, c->remap); /* [1] unused */
        }
    }
    for (uint32_t column = 0; column < ROWS_PER_LANE_COLUMN; column++) {
        int exchange = (v->lane_config[column] & exchange_bit) != 0;
        out->cols[column] = column * 2 + (((addr & 2) != 0) | exchange);
    }
    out->reach = out->capture = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t config = v->lane_config[lane];
        out->reach |= (uint32_t)((config & block_bit) == 0) << lane;
        out->capture |= (uint32_t)((config & capture_bits) == capture_bits) << lane;
    }
}

static uint32_t storage_row(const struct cells *cells, uint32_t half, uint32_t r)
{
    return cells->storage[half & 1][r] & REGS_ROW_MASK;
}

/* The first Dst cell of lane row r's storage row `half` (column 0). */
static uint16_t *dst_row(const struct copro_view *v, const struct cells *cells, uint32_t half, uint32_t r)
{
    return v->dst + (uint64_t)storage_row(cells, half, r) * REGS_DST_COLS;
}

/* sfpu.dst._check_defined: whether every datum of `lanes` lies in defined DstBits rows. */
static int all_defined(const struct copro_view *v, const struct cells *cells, uint32_t lanes)
{
    for (uint32_t r = 0; r < LANE_ROWS; r++)
        for (uint32_t half = 0; half < cells->halves; half++)
            if (row_lanes(lanes, r) && !v->dst_row_valid[storage_row(cells, half, r)])
                return 0;
    return 1;
}

/* sfpu.dst._after_matrix_write: the first cycle the lanes may read their rows after the matrix unit's last
 * write of their blocks (regs.RegFiles.matrix_ready), 0 if the matrix unit wrote none of them last. */
static int64_t after_matrix_write(const struct copro_view *v, const struct cells *cells, uint32_t lanes)
{
    int64_t ready = 0;
    for (uint32_t r = 0; r < LANE_ROWS; r++)
        for (uint32_t half = 0; half < cells->halves; half++) {
            uint32_t block = storage_row(cells, half, r) / REGS_DST_BLOCK_ROWS;
            int64_t at = v->dst_ready[block];
            if (row_lanes(lanes, r) && at != v->dst_sfpu_ready[block] && at > ready)
                ready = at;
        }
    return ready ? ready - TIMING_MATRIX_DST_WRITE_HIDDEN + TIMING_SFPU_MATRIX_WRITE_GAP : 0;
}

/* ------------------------------------------------------------------------------ formats */

/* formats.dst16_to_bf16 / dst16_from_bf16 / dst16_from_fp16 (Dst16b's sign, mantissa, exponent order) */
static uint32_t dst16_to_bf16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x00FFu) << 7) | ((x & 0x7F00u) >> 8);
}

static uint32_t dst16_from_bf16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x007Fu) << 8) | ((x & 0x7F80u) >> 7);
}

static uint32_t dst16_from_fp16(uint32_t x)
{
    return (x & 0x8000u) | ((x & 0x03FFu) << 5) | ((x & 0x7C00u) >> 10);
}

/* formats.dst32_to_fp32 / dst32_from_fp32: the BF16 shuffle on the high half */
static uint32_t dst32_to_fp32(uint32_t x)
{
    return dst16_to_bf16(x >> 16) << 16 | (x & LOW16);
}

static uint32_t dst32_from_fp32(uint32_t x)
{
    return dst16_from_bf16(x >> 16) << 16 | (x & LOW16);
}

/* sfpu.dst._read_fp16: SFPLOAD.md ReadFP16 of Dst16b bits (`inf`: LaneConfig.ENABLE_FP16A_INF) */
static uint32_t read_fp16(uint32_t x, int inf)
{
    uint32_t sign = x >> 15, man = (x >> 5) & 0x3FFu, exp = x & 0x1Fu;
    if (inf && exp == 0x1F && man == 0x3FF)
        return sign << 31 | 255u << 23;
    return sign << 31 | (exp ? exp + 112 : 0) << 23 | man << 13;
}

/* SFPLOAD.md SignMagToTwosComp and SFPSTORE.md ToSignMag (Wormhole's integer conversions). */
static inline uint32_t sign_mag_to_twos(uint32_t x)
{
    uint32_t mag = x & ~SIGN32;
    return x & SIGN32 ? 0u - mag : mag;
}

static inline uint32_t to_sign_mag(uint32_t x)
{
    uint32_t sign = x & SIGN32;
    return sign | ((sign ? 0u - x : x) & ~SIGN32);
}

/* sfpu.dst._load_datum; Wormhole's (sfpu.wormhole._load_datum) differs in three modes. */
static uint32_t load_datum(uint32_t mod0, uint32_t r, uint32_t old, int fp16_inf)
{
#ifdef TSIM_WORMHOLE
    switch (mod0) {
    case SFPU_FMT_INT32_SM: return sign_mag_to_twos(dst32_to_fp32(r));
    case SFPU_FMT_INT8: return (r >> 15) << 31 | ((r >> 5) & 0x7Fu); /* a 7-bit magnitude */
    case SFPU_FMT_INT8_COMP: return sign_mag_to_twos((r >> 15) << 31 | ((r >> 5) & 0x3FFu));
    default: break;
    }
#endif
    switch (mod0) {
    case SFPU_FMT_FP16: return read_fp16(r, fp16_inf);
    case SFPU_FMT_BF16: return dst16_to_bf16(r & LOW16) << 16;
    case SFPU_FMT_FP32:
    case SFPU_FMT_INT32:
    case SFPU_FMT_INT32_ALL:
    case SFPU_FMT_INT32_SM: return dst32_to_fp32(r);
    case SFPU_FMT_INT8: return (r >> 15) << 31 | ((r >> 5) & 0xFFu);
    case SFPU_FMT_INT8_COMP: return (r >> 15) << 31 | ((r >> 5) & 0x3FFu);
    case SFPU_FMT_LO16_ONLY: return (old & HIGH16) | r;
    case SFPU_FMT_HI16_ONLY: return r << 16 | (old & LOW16);
    case SFPU_FMT_INT16: return (r >> 15) << 31 | (r & 0x7FFFu);
    case SFPU_FMT_UINT16:
    case SFPU_FMT_LO16: return r;
    case SFPU_FMT_HI16: return r << 16;
    default: return 0; /* FMT_ZERO */
    }
}
_Static_assert(SFPU_LOAD_WIDE_MASK == (1u << SFPU_FMT_FP32 | 1u << SFPU_FMT_INT32 | 1u << SFPU_FMT_INT32_ALL
                                       | 1u << SFPU_FMT_INT32_SM),
               "load_datum's 32-bit cases are not sfpu.unit.LOAD_WIDE");

/* sfpu.dst._to_fp16: SFPSTORE.md ToFP16 (plain FP16 bits) */
static uint32_t to_fp16(uint32_t x)
{
    uint32_t sign = x >> 31, man = x & 0x7FFFFFu;
    int32_t exp = (int32_t)((x >> 23) & 0xFFu) - 112;
    if (exp <= 0)
        exp = 0, man = 0;
    else if (exp > 31)
        exp = 31, man = 0x7FFFFFu;
    return sign << 15 | (uint32_t)exp << 10 | man >> 13;
}

/* sfpu.dst._flush: the mantissa of a zero-exponent FP32 zeroed */
static uint32_t flush(uint32_t x)
{
    return (x & 0x7F800000u) == 0 ? x & SIGN32 : x;
}

/* sfpu.dst._store_datum: the raw Dst16b / Dst32b bits of LReg lane value x; Wormhole's
 * (sfpu.wormhole._store_datum) differs in three modes. */
static uint32_t store_datum(uint32_t mod0, uint32_t x)
{
#ifdef TSIM_WORMHOLE
    switch (mod0) {
    case SFPU_FMT_FP32: return dst32_from_fp32(x); /* no flush of denormals */
    case SFPU_FMT_INT32_SM: return dst32_from_fp32(to_sign_mag(x));
    case SFPU_FMT_INT8_COMP: mod0 = SFPU_FMT_INT8, x = to_sign_mag(x); break;
    default: break;
    }
#endif
    switch (mod0) {
    case SFPU_FMT_FP16: return dst16_from_fp16(to_fp16(x) & LOW16);
    case SFPU_FMT_BF16: return dst16_from_bf16(flush(x) >> 16);
    case SFPU_FMT_FP32: return dst32_from_fp32(flush(x));
    case SFPU_FMT_INT32:
    case SFPU_FMT_INT32_ALL:
    case SFPU_FMT_INT32_SM: return dst32_from_fp32(x);
    case SFPU_FMT_INT8:
    case SFPU_FMT_INT8_COMP: return dst16_from_fp16(((x >> 31) << 15 | 16u << 10 | (x & 0x3FFu)) & LOW16);
    case SFPU_FMT_LO16_ONLY:
    case SFPU_FMT_UINT16: return x & LOW16;
    case SFPU_FMT_HI16_ONLY: return x >> 16;
    case SFPU_FMT_INT16: return (x >> 31) << 15 | (x & 0x7FFFu);
    case SFPU_FMT_LO16: return x << 16 | x >> 16;
    case SFPU_FMT_HI16: return x;
    default: return 0; /* FMT_ZERO */
    }
}
_Static_assert(SFPU_STORE_WIDE_MASK == (SFPU_LOAD_WIDE_MASK | 1u << SFPU_FMT_LO16 | 1u << SFPU_FMT_HI16),
               "store_datum's 32-bit cases are not sfpu.unit.STORE_WIDE");

/* ------------------------------------------------------------------------------ SFPLOAD / SFPSTORE */

/* sfpu.dst.load_plan: SFPLOAD's functional model for `vd` up to its changes (SFPLOADMACRO's load too). */
int64_t sfpu_load_plan(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle, uint32_t vd,
                       uint32_t mod0_field, uint32_t am, uint32_t imm10, struct load_plan *p)
{
    struct pipe_config c;
    if (!read_pipe_config(v, thread, &c))
        return NATIVE_DEFER;
    int64_t resolved = resolve_srcb(v, c.state, mod0_field);
    if (resolved < 0)
        return NATIVE_DEFER;
    uint32_t mod0 = (uint32_t)resolved;
    p->vd = vd;
    p->word = word;
    p->backdoor = sfpu_backdoor_lanes(v, vd);
    p->addr = dst_addr(v, thread, &c, imm10, mod0, 0, &p->sp);
    p->lanes = p->capture = 0;
    if (vd < 8) {
        struct cells cells;
        find_cells(v, &c, p->addr, SFPU_LOAD_WIDE_MASK >> mod0 & 1, 0, &cells);
        p->lanes = cells.reach & (mod0 == SFPU_FMT_INT32_ALL ? ALL_LANES : sfpu_lane_enabled(v));
        uint32_t raw[LANES] = {0};
        if (mod0 != SFPU_FMT_ZERO) {
            if (after_matrix_write(v, &cells, p->lanes) > cycle || !all_defined(v, &cells, p->lanes))
                return NATIVE_DEFER; /* Python waits, or raises UndefinedBehavior */
            for (uint32_t r = 0; r < LANE_ROWS; r++) {
                const uint16_t *high = dst_row(v, &cells, 0, r), *low = dst_row(v, &cells, 1, r);
                for (uint32_t column = 0; column < ROWS_PER_LANE_COLUMN; column++) {
                    uint32_t lane = r * ROWS_PER_LANE_COLUMN + column, col = cells.cols[column] % REGS_DST_COLS;
                    raw[lane] = high[col];
                    if (cells.halves == 2) /* Dst32b: the high half, then the low half's row */
                        raw[lane] = raw[lane] << 16 | low[col];
                }
            }
        }
        const uint32_t *old = sfpu_lreg(v, vd);
        for (uint32_t lane = 0; lane < LANES; lane++) {
            int fp16_inf = mod0 == SFPU_FMT_FP16 && (v->lane_config[lane] & SFPU_ENABLE_FP16A_INF);
            p->datum[lane] = load_datum(mod0, raw[lane], old[lane], fp16_inf);
            p->index[lane] = cells.rows[lane / ROWS_PER_LANE_COLUMN] << 4 | cells.cols[lane % ROWS_PER_LANE_COLUMN];
        }
        if (vd < 4)
            p->capture = p->lanes & cells.capture;
    }
    if (!adc_plan_addr_mod(v, thread, am, 0, p->rwcs))
        return NATIVE_DEFER; /* Python raises Unimplemented */
    return 1;
}

void sfpu_load_commit(struct copro_view *v, uint32_t thread, const struct load_plan *p)
{
    commit_addr_mod(v, thread, p->rwcs);
    v->sfpu_sp[thread] = p->sp;
    sfpu_write_lanes(v, p->vd, p->datum, p->lanes);
    if (p->capture)
        sfpu_write_lanes(v, p->vd + 4, p->index, p->capture);
    sfpu_load_template(v, p->vd, p->backdoor, p->word);
}

int64_t sfpu_sfpload(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t imm10 = F_SFPLOAD_DEST_REG_ADDR(word);
    if (imm10 >> IMM10_BITS)
        return NATIVE_DEFER;
    struct load_plan p;
    int64_t go = sfpu_load_plan(v, thread, word, cycle, sfpu_vd(v, F_SFPLOAD_LREG_IND(word)),
                                F_SFPLOAD_INSTR_MOD0(word), F_SFPLOAD_SFPU_ADDR_MODE(word), imm10, &p);
    if (go != 1)
        return go;
    sfpu_load_commit(v, thread, &p);
    return TIMING_SFPU_ISSUE;
}

/* sfpu.dst.store_plan and its write: LReg[vd] to the Dst cells at `addr` on `allowed` lanes (Mod0 resolved);
 * 0 having changed nothing when Python raises. */
static int store_cells(struct copro_view *v, const struct pipe_config *c, uint32_t vd, uint32_t mod0,
                       uint32_t addr, uint32_t allowed, int64_t cycle)
{
    struct cells cells;
    find_cells(v, c, addr, SFPU_STORE_WIDE_MASK >> mod0 & 1, 1, &cells);
    uint32_t lanes = allowed & cells.reach;
    if (mod0 != SFPU_FMT_INT32_ALL)
        lanes &= sfpu_lane_enabled(v);
    if (!all_defined(v, &cells, lanes))
        return 0; /* Python raises UndefinedBehavior */
    const uint32_t *x = sfpu_lreg(v, vd);
    int64_t readable = cycle + TIMING_SFPU_DST_WRITE_HIDDEN + 1; /* regs.RegFiles.written, sfpu=True */
    for (uint32_t r = 0; r < LANE_ROWS; r++) {
        uint32_t on = row_lanes(lanes, r);
        if (!on)
            continue;
        /* lane order, as sfpu.dst writes them (two lanes' cells may coincide) */
        uint16_t *high = dst_row(v, &cells, 0, r), *low = dst_row(v, &cells, 1, r);
        for (uint32_t column = 0; column < ROWS_PER_LANE_COLUMN; column++) {
            if (!(on >> column & 1))
                continue;
            uint32_t col = cells.cols[column] % REGS_DST_COLS;
            uint32_t datum = store_datum(mod0, x[r * ROWS_PER_LANE_COLUMN + column]);
            if (cells.halves == 2) {
                high[col] = (uint16_t)(datum >> 16);
                low[col] = (uint16_t)(datum & LOW16);
            } else {
                high[col] = (uint16_t)(datum & LOW16);
            }
        }
        for (uint32_t half = 0; half < cells.halves; half++) {
            uint32_t block = storage_row(&cells, half, r) / REGS_DST_BLOCK_ROWS;
            v->dst_ready[block] = v->dst_sfpu_ready[block] = readable;
        }
    }
    return 1;
}

int64_t sfpu_sfpstore(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t vd = sfpu_vd(v, F_SFPSTORE_LREG_IND(word)), am = F_SFPSTORE_SFPU_ADDR_MODE(word);
    uint32_t imm10 = F_SFPSTORE_DEST_REG_ADDR(word);
    struct pipe_config c;
    if (imm10 >> IMM10_BITS || !read_pipe_config(v, thread, &c))
        return NATIVE_DEFER;
    int64_t resolved = resolve_srcb(v, c.state, F_SFPSTORE_INSTR_MOD0(word));
    if (resolved < 0)
        return NATIVE_DEFER;
    uint32_t mod0 = (uint32_t)resolved, sp, rwcs[RWC_FIELDS];
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    uint32_t addr = dst_addr(v, thread, &c, imm10, mod0, 1, &sp);
    if (!adc_plan_addr_mod(v, thread, am, 0, rwcs))
        return NATIVE_DEFER; /* Python raises Unimplemented */
    /* store_cells checks before it writes; Python checks the Dst rows before ApplyAddrMod */
    if (!store_cells(v, &c, vd, mod0, addr, ~backdoor, cycle))
        return NATIVE_DEFER;
    commit_addr_mod(v, thread, rwcs);
    v->sfpu_sp[thread] = sp;
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_scheduled_store(struct copro_view *v, uint32_t thread, uint32_t vd, uint32_t mod0_field, uint32_t addr,
                             int64_t cycle)
{
    struct pipe_config c;
    if (!read_pipe_config(v, thread, &c))
        return NATIVE_DEFER;
    int64_t mod0 = resolve_srcb(v, c.state, mod0_field);
    if (mod0 < 0 || !store_cells(v, &c, vd, (uint32_t)mod0, addr, ALL_LANES, cycle))
        return NATIVE_DEFER;
    return TIMING_SFPU_ISSUE;
}

/* ------------------------------------------------------------------------------ SFPLOADI, SFPMOV, SFPNOP */

int64_t sfpu_sfploadi(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vd = sfpu_vd(v, F_SFPLOADI_LREG_IND(word)), mod0 = F_SFPLOADI_INSTR_MOD0(word);
    uint32_t imm16 = F_SFPLOADI_IMM16(word);
    if (vd >= 8) {
        sfpu_load_template(v, vd, sfpu_backdoor_lanes(v, vd), word);
        return TIMING_SFPU_ISSUE;
    }
    uint32_t lanes = sfpu_lane_enabled(v);
    const uint32_t *old = sfpu_lreg(v, vd);
    uint32_t values[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        switch (mod0) {
        case LOADI_BF16: values[lane] = imm16 << 16; break;
        case LOADI_FP16:
            values[lane] =
                (imm16 >> 15) << 31 | (((imm16 >> 10) & 0x1Fu) + 112) << 23 | (imm16 & 0x3FFu) << 13;
            break;
        case LOADI_UINT16: values[lane] = imm16; break;
        case LOADI_INT16: values[lane] = (uint32_t)(int32_t)(int16_t)imm16; break;
        case LOADI_HI16: values[lane] = imm16 << 16 | (old[lane] & LOW16); break;
        case LOADI_LO16: values[lane] = (old[lane] & HIGH16) | imm16; break;
        default: /* not a documented mode: UndefinedBehaviour() on an enabled lane */
            return lanes ? NATIVE_DEFER : TIMING_SFPU_ISSUE;
        }
    }
    sfpu_write_lanes(v, vd, values, lanes);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpmov(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vc = sfpu_vc(v, F_SFPMOV_LREG_C(word)), vd = sfpu_vd(v, F_SFPMOV_LREG_DEST(word)), mod1 = F_SFPMOV_INSTR_MOD1(word);
    if (F_SFPMOV_IMM12_MATH(word))
        return NATIVE_DEFER;
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    uint32_t active = ~backdoor & (sfpu_lane_enabled(v) | (mod1 == MOV_ALL_LANES_ENABLED ? ALL_LANES : 0));
    uint32_t x[LANES];
    for (uint32_t lane = 0; lane < LANES; lane++) {
        const uint32_t *templates = v->macro_template + lane * TEMPLATES;
        const uint32_t *sequence = v->macro_sequence + lane * TEMPLATES;
        if (!(mod1 & MOV_FROM_SPECIAL))
            x[lane] = sfpu_lreg(v, vc)[lane] ^ (mod1 & MOV_NEGATE ? SIGN32 : 0);
        else if (vc < TEMPLATES)
            x[lane] = templates[vc];
        else if (vc < 2 * TEMPLATES)
            x[lane] = sequence[vc - TEMPLATES];
        else if (vc == 8)
            x[lane] = v->macro_misc[lane];
        else
            x[lane] = vc == 15 ? v->lane_config[lane] : 0;
    }
    if ((mod1 & MOV_FROM_SPECIAL) && vc == 9)
        sfpu_advance_prng(v, active, x); /* every active lane advances, written or not */
    if (sfpu_writes_vd(vd))
        sfpu_write_lanes(v, vd, x, active);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpnop(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)word, (void)v, (void)cycle;
    return TIMING_SFPU_ISSUE;
}

/* ------------------------------------------------------------------------------ SFPCONFIG */

/* SFPCONFIG's Mod1 operation on an original value (0: set). */
static uint32_t config_op(uint32_t mod1, uint32_t original, uint32_t value)
{
    switch (mod1 & CFG_OP_MASK) {
    case CFG_OR: return original | value;
    case CFG_AND: return original & value;
    case CFG_XOR: return original ^ value;
    default: return value;
    }
}

int64_t sfpu_sfpconfig(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t imm16 = F_SFPCONFIG_IMM16_MATH(word), vd = sfpu_vd(v, F_SFPCONFIG_CONFIG_DEST(word));
    uint32_t mod1 = F_SFPCONFIG_INSTR_MOD1(word);
    int is_value = (mod1 & CFG_IMM16_IS_VALUE) != 0;
    uint32_t lanes = 0, source[LANES], values[LANES];
    static const uint32_t defaults[] = {SFPU_CONFIG_DEFAULT_11, SFPU_CONFIG_DEFAULT_12,
                                        SFPU_CONFIG_DEFAULT_13, SFPU_CONFIG_DEFAULT_14};
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t col = lane % ROWS_PER_LANE_COLUMN;
        int on = !(mod1 & CFG_IMM16_IS_LANE_MASK) || (imm16 >> (col * 2) & 1);
        on = on && (!v->use_lane_flags[col] || v->lane_flags[col]);
        lanes |= (uint32_t)on << lane;
        source[lane] = sfpu_lreg(v, 0)[col];
    }
    for (uint32_t lane = 0; lane < LANES; lane++) {
        if (!(lanes >> lane & 1))
            continue;
        uint32_t *templates = v->macro_template + lane * TEMPLATES;
        uint32_t *sequence = v->macro_sequence + lane * TEMPLATES;
        if (vd < TEMPLATES) { /* InstructionTemplate: always from LReg[0] */
            templates[vd] = source[lane];
        } else if (vd < 2 * TEMPLATES) {
            sequence[vd - TEMPLATES] = is_value ? imm16 : source[lane];
        } else if (vd == 8) { /* Misc: a uint12_t Value */
            uint32_t value = (is_value ? imm16 : source[lane]) & ((1u << MISC_BITS) - 1);
            v->macro_misc[lane] = config_op(mod1, v->macro_misc[lane], value);
        } else if (vd == 15) {
            uint32_t original = v->lane_config[lane];
            uint32_t new = config_op(mod1, original, is_value ? imm16 : source[lane] & SFPU_LANE_CONFIG_MASK);
            if (is_value)
                new |= original & ~LOW16 & SFPU_LANE_CONFIG_MASK;
            v->lane_config[lane] = new;
        }
    }
    if (vd >= 11 && vd <= 14) {
        for (uint32_t lane = 0; lane < LANES; lane++)
            values[lane] = is_value ? defaults[vd - 11] : source[lane];
        sfpu_write_lanes(v, vd, values, lanes);
    }
    return TIMING_SFPU_ISSUE; /* VD 9 and 10 change nothing */
}
