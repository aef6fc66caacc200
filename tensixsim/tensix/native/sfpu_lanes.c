/* The vector unit's lane and register movement: SFPSWAP, SFPTRANSP and SFPSHFT2, exactly as
 * tensixsim/tensix/sfpu/lanes.py executes them (issued, or scheduled by SFPLOADMACRO: sfpu.h).
 *
 * Deferred to Python: every operand sfpu/lanes.py rejects with UndefinedBehavior (SFPSWAP's nonzero
 * Imm12; SFPTRANSP's nonzero Imm12, VC or Mod1; SFPSHFT2's Mod1 beyond 6, its VB slot beyond 4 bits
 * or SHFT_IMM's nonzero VC); and the backdoor test SFPTRANSP and two SFPSHFT2 modes make once, when
 * the lanes disagree on it (Unimplemented in Python).
 *
 * Wormhole (TSIM_WORMHOLE): the shuffles occupy the unit one cycle and leave a rule for the next
 * (sfpu_hazard.c), and SUBVEC_SHFLSHR1 fills each row's first lane from the LReg[VC] the last
 * SUBVEC_SHFLROR1 read (SfpuState.shfl_vc, the hardware bug of sfpu/wormhole.py).
 */
#include <string.h>

#include "sfpu.h"
#include "sfpu_float.h"
#include "sfpu_tables.h"

enum { ROW_LANES = 8, TRANSP_GROUP = 4 }; /* lanes per row of the vector; LRegs per transposed group */
#define MAGNITUDE 0x7FFFFFFFu

/* sfpu.lanes._total_order: signed keys ordering sign-magnitude integers (a negative value's
 * magnitude bits are inverted, so -0 sorts just below +0). */
static int32_t total_order(uint32_t x)
{
    return (int32_t)(x >> 31 ? x ^ MAGNITUDE : x);
}

int64_t sfpu_sfpswap(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vc = sfpu_vc(v, F_SFPSWAP_LREG_SRC_C(word)), vd = sfpu_vd(v, F_SFPSWAP_LREG_DEST(word));
    uint32_t mod1 = F_SFPSWAP_INSTR_MOD1(word);
    if (F_SFPSWAP_IMM12_MATH(word))
        return NATIVE_DEFER; /* ctx.documented("imm12_math", 0) */
    static const uint32_t gets_min_of[LANES_SWAP_VD_GETS_MIN_SIZE] = LANES_SWAP_VD_GETS_MIN;
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    uint32_t swap = ALL_LANES;
    if (mod1 != LANES_SWAP_SWAP) {
        uint32_t gets_min = gets_min_of[mod1 % LANES_SWAP_VD_GETS_MIN_SIZE];
        const uint32_t *c = sfpu_lreg(v, vc), *d = sfpu_lreg(v, vd);
        swap = 0;
        for (uint32_t lane = 0; lane < LANES; lane++) {
            int c_smaller = total_order(c[lane]) < total_order(d[lane]);
            int exchange = (v->lane_config[lane] & LANES_EXCHANGE_SRCB_SRCC) != 0;
            swap |= (uint32_t)(((gets_min >> lane & 1) ? c_smaller : !c_smaller) ^ exchange) << lane;
        }
    }
    swap &= sfpu_lane_enabled(v) & ~backdoor;
    /* Every step is lane by lane, so each lane runs the page's sequence of writes on its own. */
    uint32_t vca = 4 + (vc & 3), vda = 4 + (vd & 3);
    for (uint32_t lane = 0; lane < LANES; lane++) {
        if (!(swap >> lane & 1))
            continue;
        int indexed = (v->lane_config[lane] & SFPU_ENABLE_DEST_INDEX) != 0;
        uint32_t c = sfpu_lreg(v, vc)[lane], d = sfpu_lreg(v, vd)[lane];
        if (vc < 8 && (!indexed || vc < 4))
            sfpu_lreg(v, vc)[lane] = d;
        if (vd < 8 && (!indexed || vd < 4))
            sfpu_lreg(v, vd)[lane] = c;
        if (indexed) {
            uint32_t ca = sfpu_lreg(v, vca)[lane], da = sfpu_lreg(v, vda)[lane];
            sfpu_lreg(v, vca)[lane] = da;
            sfpu_lreg(v, vda)[lane] = ca;
        }
    }
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_SWAP;
}

/* sfpu.lanes._whole_vector_backdoor's test, made once for the whole vector: 0 no lane is a backdoor
 * load, 1 every lane is, -1 they disagree (Python raises Unimplemented). */
static int whole_vector_backdoor(const struct copro_view *v, uint32_t vd)
{
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    return backdoor == 0 ? 0 : backdoor == ALL_LANES ? 1 : -1;
}

int64_t sfpu_sfptransp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t vd = sfpu_vd(v, F_SFPTRANSP_LREG_DEST(word));
    if (F_SFPTRANSP_IMM12_MATH(word) || sfpu_vc(v, F_SFPTRANSP_LREG_C(word))
        || F_SFPTRANSP_INSTR_MOD1(word))
        return NATIVE_DEFER; /* ctx.documented(..., 0) */
    int backdoor = whole_vector_backdoor(v, vd);
    if (backdoor < 0)
        return NATIVE_DEFER;
    if (backdoor) {
        sfpu_load_template(v, vd, ALL_LANES, word);
        return TIMING_SFPU_ISSUE;
    }
    /* Each group of four LRegs as [register][row][column]: the transpose swaps register and row on
     * the enabled cells (lane = row * 8 + column). */
    uint32_t enabled = sfpu_lane_enabled(v);
    for (uint32_t base = 0; base < 2 * TRANSP_GROUP; base += TRANSP_GROUP) {
        uint32_t old[TRANSP_GROUP][LANES];
        for (uint32_t r = 0; r < TRANSP_GROUP; r++)
            memcpy(old[r], sfpu_lreg(v, base + r), sizeof old[r]);
        for (uint32_t r = 0; r < TRANSP_GROUP; r++)
            for (uint32_t lane = 0; lane < TRANSP_GROUP * ROW_LANES; lane++) {
                uint32_t row = lane / ROW_LANES, col = lane % ROW_LANES;
                if (enabled >> lane & 1)
                    sfpu_lreg(v, base + r)[lane] = old[row][r * ROW_LANES + col];
            }
    }
    return TIMING_SFPU_ISSUE;
}

/* The lane before `lane` in its row of eight, rotating (sfpu.lanes._PREVIOUS_IN_ROW). */
static inline uint32_t previous_in_row(uint32_t lane)
{
    return lane % ROW_LANES ? lane - 1 : lane + ROW_LANES - 1;
}

/* sfpu.lanes._shift: b << amount for a non-negative amount, else b >> -amount (logical), mod 32. */
static inline uint32_t shift(uint32_t b, int64_t amount)
{
    return amount >= 0 ? b << (amount & 31) : b >> ((-amount) & 31);
}

static int64_t shft2(struct copro_view *v, uint32_t word)
{
    uint32_t imm12 = F_SFPSHFT2_IMM12_MATH(word), vc = sfpu_vc(v, F_SFPSHFT2_LREG_SRC_C(word));
    uint32_t vd = sfpu_vd(v, F_SFPSHFT2_LREG_DEST(word)), mod1 = F_SFPSHFT2_INSTR_MOD1(word);
    if (mod1 > LANES_SHFT2_SHFT_IMM)
        return NATIVE_DEFER;
    if (mod1 == LANES_SHFT2_SHFT_IMM ? vc != 0 : imm12 >> 4 != 0)
        return NATIVE_DEFER; /* ctx.documented("lreg_src_c", 0) / ("imm12_math", 4) */
    uint32_t vb = imm12 & 15;
    int slow = mod1 == LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4 || mod1 == LANES_SHFT2_SUBVEC_SHFLROR1
               || mod1 == LANES_SHFT2_SUBVEC_SHFLSHR1;
#ifdef TSIM_WORMHOLE /* sfpu.wormhole.WORMHOLE_SHFT2: no stall (a rule for the next cycle instead) */
    (void)slow;
    int64_t cycles = TIMING_SFPU_ISSUE;
#else
    int64_t cycles = slow ? TIMING_SFPU_LANE_SHUFFLE : TIMING_SFPU_ISSUE;
#endif
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    if (mod1 == LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4 || mod1 == LANES_SHFT2_SUBVEC_SHFLROR1) {
        int once = whole_vector_backdoor(v, vd); /* tested once, outside the lane loop */
        if (once < 0)
            return NATIVE_DEFER;
        if (once) {
            sfpu_load_template(v, vd, backdoor, word);
            return cycles;
        }
    }
    uint32_t lanes = sfpu_lane_enabled(v) & ~backdoor;
    uint32_t vc_value[LANES], row_start[LANES] = {0};
    memcpy(vc_value, sfpu_lreg(v, vc), sizeof vc_value);
#ifdef TSIM_WORMHOLE
    /* Wormhole's hardware bug (sfpu.lanes.Shft2Model.stale_row_start): SUBVEC_SHFLSHR1 fills each row's
     * first lane from the LReg[VC] the last SUBVEC_SHFLROR1(_AND_COPY4) read; unknown before any
     * (UndefinedBehavior in Python). */
    if (mod1 == LANES_SHFT2_SUBVEC_SHFLSHR1 && sfpu_writes_vd(vd))
        for (uint32_t lane = 0; lane < LANES; lane++) {
            int64_t stale = v->shfl_vc[previous_in_row(lane)];
            if (lane % ROW_LANES == 0 && (lanes >> lane & 1) && stale < 0)
                return NATIVE_DEFER;
            row_start[lane] = (uint32_t)stale;
        }
    if (mod1 == LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4 || mod1 == LANES_SHFT2_SUBVEC_SHFLROR1)
        for (uint32_t lane = 0; lane < LANES; lane++)
            v->shfl_vc[lane] = vc_value[lane];
#endif
    if (mod1 <= LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4) {
        uint32_t l3[LANES];
        const uint32_t *l0 = sfpu_lreg(v, 0);
        for (uint32_t lane = 0; lane < LANES; lane++) {
            if (mod1 == LANES_SHFT2_COPY4)
                l3[lane] = 0;
            else if (mod1 == LANES_SHFT2_SUBVEC_CHAINED_COPY4)
                l3[lane] = lane + ROW_LANES < LANES ? l0[lane + ROW_LANES] : 0;
            else
                l3[lane] = vc_value[previous_in_row(lane)];
        }
        uint32_t moved[3][LANES];
        for (uint32_t r = 0; r < 3; r++)
            memcpy(moved[r], sfpu_lreg(v, r + 1), sizeof moved[r]);
        for (uint32_t r = 0; r < 3; r++)
            sfpu_write_lanes(v, r, moved[r], lanes);
        sfpu_write_lanes(v, 3, l3, lanes);
    } else if (sfpu_writes_vd(vd)) {
        uint32_t result[LANES];
        const uint32_t *b = sfpu_lreg(v, vb);
        int64_t imm = signed12(imm12);
        for (uint32_t lane = 0; lane < LANES; lane++) {
            if (mod1 == LANES_SHFT2_SUBVEC_SHFLROR1)
                result[lane] = vc_value[previous_in_row(lane)];
            else if (mod1 == LANES_SHFT2_SUBVEC_SHFLSHR1)
                result[lane] = lane % ROW_LANES ? vc_value[previous_in_row(lane)] : row_start[lane];
            else if (mod1 == LANES_SHFT2_SHFT_IMM) /* by the signed Imm12 */
                result[lane] = shift(b[lane], imm);
            else /* SHFT_LREG: by LReg[VC] as a signed integer */
                result[lane] = shift(b[lane], (int32_t)vc_value[lane]);
        }
        sfpu_write_lanes(v, vd, result, lanes);
    }
    sfpu_load_template(v, vd, backdoor, word);
    return cycles;
}

int64_t sfpu_sfpshft2(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    int64_t cycles = shft2(v, word);
#ifdef TSIM_WORMHOLE
    /* The rules the lane shuffles leave for the next cycle (sfpu.wormhole.sfpshft2). */
    uint32_t mod1 = F_SFPSHFT2_INSTR_MOD1(word), vd = sfpu_vd(v, F_SFPSHFT2_LREG_DEST(word));
    if (cycles != NATIVE_DEFER && !sfpu_scheduled(v)) {
        if (mod1 == LANES_SHFT2_SUBVEC_SHFLROR1_AND_COPY4)
            sfpu_hazard_record(v, cycle, SFPU_HAZARD_LANE_SHUFFLE, 0xFu, 0xEu); /* reads of 0..3, writes of 1..3 */
        else if (mod1 == LANES_SHFT2_SUBVEC_SHFLROR1 || mod1 == LANES_SHFT2_SUBVEC_SHFLSHR1)
            sfpu_hazard_record(v, cycle, SFPU_HAZARD_LANE_SHUFFLE, vd < 8 ? 1u << vd : 0, 0);
    }
#else
    (void)cycle;
#endif
    return cycles;
}
