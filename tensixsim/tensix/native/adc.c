/* Address counters: the ADC instructions (SETADC, SETADCXY/ZW/XX, INCADCXY/ZW, ADDRCRXY/ZW) and the
 * RWC instructions (SETRWC, INCRWC), exactly as tensixsim/tensix/adc.py executes them. Each occupies
 * its unit for Retire's default cycle count.
 *
 * Deferred to Python: any set bit in a slot that holds no documented operand (adc.py raises
 * UndefinedBehavior through ctx.documented), a target pipe that does not exist, and SETRWC with
 * FlipSrcA / FlipSrcB set (it hands Src banks over through copro.clear_src_valid).
 */
#include "ops.h"

/* Documented operand widths inside wider slots (adc.py ctx.documented calls). */
enum {
    CH1_HI_BITS = 5,       /* ch1_y / ch1_w: Y1Val (W1Val) u3 in bits 0..2, ThreadOverride u2 in 3..4 */
    CH1_HI_VALUE_BITS = 3,
    THREAD_OVERRIDE_BITS = 2,
    ADC_BIT_MASK_BITS = 4, /* SETADCXY/ZW, ADDRCRXY/ZW bit_mask: X0/Z0, Y0/W0, X1/Z1, Y1/W1 */
    SETADCXX_X1_BITS = 10, /* x_end2: X1Val u10 in an 11-bit slot */
    SETRWC_BIT_MASK_BITS = 4,
    INCRWC_CR_BITS = 3,    /* rwc_cr: SrcACr, SrcBCr, DstCr */
};
enum { DIM_X, DIM_Y, DIM_Z, DIM_W }; /* adc.X, Y, Z, W: the last index of a counter */
enum { ALL_FOUR = 0xF };             /* INCADCXY / INCADCZW change every counter they name */

static const uint32_t adc_masks[ADC_COORDS] = {ADC_MASK_X, ADC_MASK_Y, ADC_MASK_Z, ADC_MASK_W};

/* How an instruction changes one counter (adc.py AdcState.set, .increment, .increment_cr). */
enum adc_change { ADC_SET, ADC_INCREMENT, ADC_INCREMENT_CR };

/* ``ThreadOverride == 0 ? CurrentThread : ThreadOverride - 1`` (adc.py _target). */
static uint32_t target_pipe(uint32_t thread, uint32_t thread_override)
{
    return thread_override == 0 ? thread : thread_override - 1;
}

/* Apply `change` to ADCs[thread].<unit>.Channel[channel].<dim> with `operand`. The caller has
 * checked thread; unit, channel and dim are masked, so no operand can reach beyond the arrays. */
static void adc_apply(struct copro_view *v, enum adc_change change, uint32_t thread, uint32_t unit,
                      uint32_t channel, uint32_t dim, uint32_t operand)
{
    unit %= ADC_UNITS;
    channel %= ADC_CHANNELS;
    dim %= ADC_COORDS;
    uint64_t at = (((uint64_t)thread * ADC_UNITS + unit) * ADC_CHANNELS + channel) * ADC_COORDS + dim;
    uint32_t mask = adc_masks[dim];
    switch (change) {
    case ADC_SET: /* Ch.<dim> = Ch.<dim>_Cr = operand */
        v->adc_value[at] = v->adc_cr[at] = operand & mask;
        break;
    case ADC_INCREMENT: /* Ch.<dim> += operand; the _Cr copy stays */
        v->adc_value[at] = (v->adc_value[at] + operand) & mask;
        break;
    case ADC_INCREMENT_CR: /* Ch.<dim>_Cr += operand, Ch.<dim> = Ch.<dim>_Cr */
        v->adc_value[at] = v->adc_cr[at] = (v->adc_cr[at] + operand) & mask;
        break;
    }
}

int64_t adc_setadc(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t value = F_SETADC_VALUE(word);
    /* ThreadOverride is NewValue's top two bits; NewValue is still written whole (then masked). */
    uint32_t target = target_pipe(thread, value >> (F_SETADC_VALUE_WIDTH - THREAD_OVERRIDE_BITS));
    if (target >= v->threads)
        return NATIVE_DEFER;
    uint32_t units = F_SETADC_CNT_SET_MASK(word);
    for (uint32_t unit = 0; unit < ADC_UNITS; unit++)
        if (units >> unit & 1)
            adc_apply(v, ADC_SET, target, unit, F_SETADC_CHANNEL_INDEX(word), F_SETADC_DIMENSION_INDEX(word),
                      value);
    return TIMING_RETIRE_DEFAULT;
}

/* The operand slots of an XY / ZW instruction (adc.py _operands and _xyzw). */
struct xyzw {
    uint32_t units, ch1_hi, ch1_lo, ch0_hi, ch0_lo, enabled;
};

/* Change the counters an XY (ZW) instruction enables in each ADC set it names: bit 0 Channel 0's
 * low dimension, bit 1 its high one, bits 2 and 3 the same for Channel 1. */
static int64_t xyzw_execute(struct copro_view *v, uint32_t thread, struct xyzw op, uint32_t lo, uint32_t hi,
                            enum adc_change change)
{
    if (op.ch1_hi >> CH1_HI_BITS || op.enabled >> ADC_BIT_MASK_BITS)
        return NATIVE_DEFER;
    uint32_t target = target_pipe(thread, op.ch1_hi >> CH1_HI_VALUE_BITS);
    if (target >= v->threads)
        return NATIVE_DEFER;
    const uint32_t channel[4] = {0, 0, 1, 1};
    const uint32_t dim[4] = {lo, hi, lo, hi};
    const uint32_t y1 = op.ch1_hi & ((1u << CH1_HI_VALUE_BITS) - 1);
    const uint32_t operand[4] = {op.ch0_lo, op.ch0_hi, op.ch1_lo, y1};
    for (uint32_t unit = 0; unit < ADC_UNITS; unit++) {
        if (!(op.units >> unit & 1))
            continue;
        for (uint32_t bit = 0; bit < 4; bit++)
            if (op.enabled >> bit & 1)
                adc_apply(v, change, target, unit, channel[bit], dim[bit], operand[bit]);
    }
    return TIMING_RETIRE_DEFAULT;
}

/* The operands of XY instruction NAME (with its bit_mask field as `enabled`). */
#define XY_OF(NAME, w, enabled) \
    ((struct xyzw){F_##NAME##_CNT_SET_MASK(w), F_##NAME##_CH1_Y(w), F_##NAME##_CH1_X(w), \
                   F_##NAME##_CH0_Y(w), F_##NAME##_CH0_X(w), (enabled)})
#define ZW_OF(NAME, w, enabled) \
    ((struct xyzw){F_##NAME##_CNT_SET_MASK(w), F_##NAME##_CH1_W(w), F_##NAME##_CH1_Z(w), \
                   F_##NAME##_CH0_W(w), F_##NAME##_CH0_Z(w), (enabled)})

int64_t adc_setadcxy(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, XY_OF(SETADCXY, word, F_SETADCXY_BIT_MASK(word)), DIM_X, DIM_Y, ADC_SET);
}

int64_t adc_setadczw(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, ZW_OF(SETADCZW, word, F_SETADCZW_BIT_MASK(word)), DIM_Z, DIM_W, ADC_SET);
}

int64_t adc_incadcxy(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, XY_OF(INCADCXY, word, ALL_FOUR), DIM_X, DIM_Y, ADC_INCREMENT);
}

int64_t adc_incadczw(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, ZW_OF(INCADCZW, word, ALL_FOUR), DIM_Z, DIM_W, ADC_INCREMENT);
}

int64_t adc_addrcrxy(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, XY_OF(ADDRCRXY, word, F_ADDRCRXY_BIT_MASK(word)), DIM_X, DIM_Y,
                        ADC_INCREMENT_CR);
}

int64_t adc_addrcrzw(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return xyzw_execute(v, thread, ZW_OF(ADDRCRZW, word, F_ADDRCRZW_BIT_MASK(word)), DIM_Z, DIM_W,
                        ADC_INCREMENT_CR);
}

/* Both channels' X of the issuing pipe (no ThreadOverride here). */
int64_t adc_setadcxx(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t x1 = F_SETADCXX_X_END2(word);
    if (x1 >> SETADCXX_X1_BITS)
        return NATIVE_DEFER;
    uint32_t units = F_SETADCXX_CNT_SET_MASK(word);
    for (uint32_t unit = 0; unit < ADC_UNITS; unit++) {
        if (units >> unit & 1) {
            adc_apply(v, ADC_SET, thread, unit, 0, DIM_X, F_SETADCXX_X_START(word));
            adc_apply(v, ADC_SET, thread, unit, 1, DIM_X, x1);
        }
    }
    return TIMING_RETIRE_DEFAULT;
}

/* RWCs[thread].<field> (the caller checked thread). */
static uint32_t *rwc(struct copro_view *v, int field, uint32_t thread)
{
    return v->rwc[field] + thread;
}

/* An RWC and its _Cr copy both become `base + amount`, wrapped at the counter's width. */
static void rwc_set(struct copro_view *v, uint32_t thread, int field, int field_cr, uint32_t base,
                    uint32_t amount, uint32_t mask)
{
    *rwc(v, field, thread) = *rwc(v, field_cr, thread) = (base + amount) & mask;
}

int64_t adc_setrwc(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t bits = F_SETRWC_BIT_MASK(word), cr = F_SETRWC_RWC_CR(word);
    /* FlipSrcA / FlipSrcB hand Src banks over (copro.clear_src_valid): Python's. */
    if (bits >> SETRWC_BIT_MASK_BITS || F_SETRWC_CLEAR_AB_VLD(word))
        return NATIVE_DEFER;
    uint32_t src_a_cr = cr & 1, src_b_cr = cr >> 1 & 1, dst_cr = cr >> 2 & 1, dst_c_to_cr = cr >> 3 & 1;
    if (bits & 1) { /* SrcA: from zero, or from SrcA_Cr */
        uint32_t base = src_a_cr ? *rwc(v, RWC_SRCA_CR, thread) : 0;
        rwc_set(v, thread, RWC_SRCA, RWC_SRCA_CR, base, F_SETRWC_RWC_A(word), RWC_SRC_MASK);
    }
    if (bits & 2) { /* SrcB likewise */
        uint32_t base = src_b_cr ? *rwc(v, RWC_SRCB_CR, thread) : 0;
        rwc_set(v, thread, RWC_SRCB, RWC_SRCB_CR, base, F_SETRWC_RWC_B(word), RWC_SRC_MASK);
    }
    if (bits & 4 || dst_c_to_cr) { /* Dst: DstCToCr counts from Dst itself, and acts without bit 2 */
        uint32_t base = dst_c_to_cr ? *rwc(v, RWC_DST, thread) : dst_cr ? *rwc(v, RWC_DST_CR, thread) : 0;
        rwc_set(v, thread, RWC_DST, RWC_DST_CR, base, F_SETRWC_RWC_D(word), RWC_DST_MASK);
    }
    if (bits & 8) /* Fidelity */
        *rwc(v, RWC_FIDELITY, thread) = 0;
    return TIMING_RETIRE_DEFAULT;
}

/* One RWC and its _Cr copy advance by `amount`: from the _Cr copy (both then equal) if `from_cr`,
 * else the counter alone. */
static void rwc_increment(struct copro_view *v, uint32_t thread, int field, int field_cr, int from_cr,
                          uint32_t amount, uint32_t mask)
{
    if (from_cr)
        *rwc(v, field, thread) = *rwc(v, field_cr, thread) = (*rwc(v, field_cr, thread) + amount) & mask;
    else
        *rwc(v, field, thread) = (*rwc(v, field, thread) + amount) & mask;
}

int64_t adc_incrwc(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t cr = F_INCRWC_RWC_CR(word);
    if (cr >> INCRWC_CR_BITS)
        return NATIVE_DEFER;
    rwc_increment(v, thread, RWC_SRCA, RWC_SRCA_CR, cr & 1, F_INCRWC_RWC_A(word), RWC_SRC_MASK);
    rwc_increment(v, thread, RWC_SRCB, RWC_SRCB_CR, cr >> 1 & 1, F_INCRWC_RWC_B(word), RWC_SRC_MASK);
    rwc_increment(v, thread, RWC_DST, RWC_DST_CR, cr >> 2 & 1, F_INCRWC_RWC_D(word), RWC_DST_MASK);
    return TIMING_RETIRE_DEFAULT;
}

/* adc.apply_addr_mod planned: the pipe's RWCs after ADDR_MOD slot `slot` (with the fidelity phase
 * when `update_fidelity`), written to `rwcs` without changing the state; 0 when adc.py raises
 * Unimplemented (addr_mod_problem) or a field lies beyond ThreadConfig. The matrix unit applies it
 * whole, the vector unit's ApplyPartialAddrMod without the fidelity phase.
 *
 * On Wormhole (adc.apply_addr_mod_wormhole) the instruction's two-bit AddrMod names slot AddrMod, or
 * AddrMod + 4 while the RWC's ExtraAddrModBit or ThreadConfig's ADDR_MOD_SET_Base is set
 * (adc.wormhole_addr_mod_index), and nothing is Unimplemented: `slot` is the AddrMod. */
int adc_plan_addr_mod(const struct copro_view *v, uint32_t thread, uint32_t slot, int update_fidelity,
                      uint32_t rwcs[RWC_FIELDS])
{
    static const struct {
        uint32_t reg, shift, mask;
    } specs[ADDR_MOD_SLOTS][ADDR_MOD_FIELD_COUNT] = ADDR_MOD_FIELD_SPECS;
    uint32_t m[ADDR_MOD_FIELD_COUNT];
#ifdef TSIM_WORMHOLE
    if (THD_ADDR_MOD_SET_BASE_REG >= v->thread_config_words)
        return 0;
    uint32_t set_base = (v->thread_config[(uint64_t)thread * v->thread_config_words + THD_ADDR_MOD_SET_BASE_REG]
                         & THD_ADDR_MOD_SET_BASE_MASK) != 0;
    if (v->rwc[RWC_EXTRA_BIT][thread] || set_base)
        slot += 4;
#endif
    slot %= ADDR_MOD_SLOTS;
    for (uint32_t i = 0; i < ADDR_MOD_FIELD_COUNT; i++) {
        if (specs[slot][i].reg >= v->thread_config_words)
            return 0;
        uint32_t word = v->thread_config[(uint64_t)thread * v->thread_config_words + specs[slot][i].reg];
        m[i] = (word & specs[slot][i].mask) >> specs[slot][i].shift;
    }
    for (uint32_t i = 0; i < RWC_FIELDS; i++)
        rwcs[i] = v->rwc[i][thread];
#ifndef TSIM_WORMHOLE
    if (rwcs[RWC_EXTRA_BIT] || m[AM_AB2_SRCAINCR] || m[AM_AB2_SRCBINCR])
        return 0;
#endif
    if (m[AM_AB_SRCACLEAR])
        rwcs[RWC_SRCA] = rwcs[RWC_SRCA_CR] = 0;
    else if (m[AM_AB_SRCACR])
        rwcs[RWC_SRCA] = rwcs[RWC_SRCA_CR] = (rwcs[RWC_SRCA_CR] + m[AM_AB_SRCAINCR]) & RWC_SRC_MASK;
    else
        rwcs[RWC_SRCA] = (rwcs[RWC_SRCA] + m[AM_AB_SRCAINCR]) & RWC_SRC_MASK;
    if (m[AM_AB_SRCBCLEAR])
        rwcs[RWC_SRCB] = rwcs[RWC_SRCB_CR] = 0;
    else if (m[AM_AB_SRCBCR])
        rwcs[RWC_SRCB] = rwcs[RWC_SRCB_CR] = (rwcs[RWC_SRCB_CR] + m[AM_AB_SRCBINCR]) & RWC_SRC_MASK;
    else
        rwcs[RWC_SRCB] = (rwcs[RWC_SRCB] + m[AM_AB_SRCBINCR]) & RWC_SRC_MASK;
    if (m[AM_DST_DESTCLEAR])
        rwcs[RWC_DST] = rwcs[RWC_DST_CR] = 0;
    else if (m[AM_DST_DESTCTOCR])
        rwcs[RWC_DST] = rwcs[RWC_DST_CR] = (rwcs[RWC_DST] + m[AM_DST_DESTINCR]) & RWC_DST_MASK;
    else if (m[AM_DST_DESTCR])
        rwcs[RWC_DST] = rwcs[RWC_DST_CR] = (rwcs[RWC_DST_CR] + m[AM_DST_DESTINCR]) & RWC_DST_MASK;
    else
        rwcs[RWC_DST] = (rwcs[RWC_DST] + m[AM_DST_DESTINCR]) & RWC_DST_MASK;
    if (update_fidelity) {
        if (m[AM_DST_FIDELITYCLEAR])
            rwcs[RWC_FIDELITY] = 0;
        else
            rwcs[RWC_FIDELITY] = (rwcs[RWC_FIDELITY] + m[AM_DST_FIDELITYINCR]) & MATRIX_RWC_FIDELITY_MASK;
    }
    /* (Blackhole: ExtraAddrModBit is 0 here, else Unimplemented above.) */
    if (m[AM_BIAS_BIASCLEAR])
        rwcs[RWC_EXTRA_BIT] = 0;
    else if (m[AM_BIAS_BIASINCR] & 3)
        rwcs[RWC_EXTRA_BIT] = (rwcs[RWC_EXTRA_BIT] + 1) & 1;
    return 1;
}
