/* Configuration unit: SETC16, WRCFG, RDCFG, RMWCIB0..3 and CFGSHIFTMASK, exactly as
 * tensixsim/tensix/config/unit.py executes them, for the stores that only store.
 *
 * Deferred to Python: an index beyond Config, ThreadConfig or the GPRs (UndefinedBehavior there),
 * and every store with an effect beyond the word itself: Config STATE_RESET_EN (clears the state,
 * except through RMWCIB), PRNG_SEED_Seed_Val (re-seeds the vector unit, copro.seed_prng), a SETC16
 * to UNPACK_MISC_CFG setting a context-counter reset bit (resets Unpackers' ContextCounter, or is
 * Unimplemented), and a SETC16 to CFG_STATE_ID's register (it switches the Config state every later
 * instruction of the pipe uses; kept in Python so whatever tracks that state sees the change).
 */
#include "ops.h"

enum { CFG_STATES = 2 }; /* config/unit.py ConfigState.config: Config[2] */
enum { WIDE_WORDS = 4 }; /* WRCFG's 128-bit form: four words, four GPRs */
#define BYTE_MASK 0xFFu

/* The bits of a SETC16 value to UNPACK_MISC_CFG that make config/unit.py reset (or refuse to reset)
 * unpacker configuration-context counters. */
#define CONTEXT_RESET_BITS                                                                       \
    (THD_UNPACK_MISC_CFG_CFGCONTEXTCNTRESET_0_MASK | THD_UNPACK_MISC_CFG_CFGCONTEXTCNTRESET_1_MASK \
     | THD_UNPACK_MISC_CFG_CFGCONTEXTCNTRESET_METADATA_MASK                                      \
     | THD_UNPACK_MISC_CFG_CFGCONTEXTCNTRESET_METADATA_ZSTART_MASK)

#ifdef OP_CFGSHIFTMASK /* (an architecture without CFGSHIFTMASK has no scratch registers either) */
/* CFGSHIFTMASK's scratch registers SCRATCH_SEC<n>_val (n = scratch_sel, or the pipe for 3). */
static const struct {
    uint32_t word, shift, mask;
} scratch_fields[] = {
    {CFG_SCRATCH_SEC0_VAL_WORD, CFG_SCRATCH_SEC0_VAL_SHIFT, CFG_SCRATCH_SEC0_VAL_MASK},
    {CFG_SCRATCH_SEC1_VAL_WORD, CFG_SCRATCH_SEC1_VAL_SHIFT, CFG_SCRATCH_SEC1_VAL_MASK},
    {CFG_SCRATCH_SEC2_VAL_WORD, CFG_SCRATCH_SEC2_VAL_SHIFT, CFG_SCRATCH_SEC2_VAL_MASK},
};
enum { SCRATCH_FIELDS = sizeof scratch_fields / sizeof scratch_fields[0] };
#endif

static int config_index_ok(const struct copro_view *v, uint32_t index)
{
    return index < CFG_STATE_WORDS && index < v->config_words;
}

static uint32_t *config_word(struct copro_view *v, uint32_t state, uint32_t index)
{
    return v->config + (uint64_t)state * v->config_words + index;
}

/* The Config state the pipe's CFG_STATE_ID_StateID selects (config/unit.py ConfigState.state_id), or -1
 * when it names none (Python would fail indexing Config with it). */
static int64_t pipe_state(const struct copro_view *v, uint32_t thread)
{
    if (THD_CFG_STATE_ID_STATEID_REG >= v->thread_config_words)
        return -1;
    uint32_t reg = v->thread_config[(uint64_t)thread * v->thread_config_words + THD_CFG_STATE_ID_STATEID_REG];
    uint32_t state = (reg & THD_CFG_STATE_ID_STATEID_MASK) >> THD_CFG_STATE_ID_STATEID_SHIFT;
    return state < CFG_STATES ? (int64_t)state : -1;
}

/* Whether config/unit.py store_config of Config word `index` does more than store the value. */
static int store_has_effects(uint32_t index, int via_rmwcib)
{
    return (index == CFG_STATE_RESET_EN_WORD && !via_rmwcib) || index == CFG_PRNG_SEED_SEED_VAL_WORD;
}

/* config/unit.py ConfigState._set_word: a word from GLOBAL_CFGREG_BASE_ADDR32 on exists once, so a store
 * lands in both states. The caller checked state and index, and store_has_effects. */
static void store_word(struct copro_view *v, uint32_t state, uint32_t index, uint32_t value)
{
    if (index >= CFG_GLOBAL_BASE_WORD) {
        for (uint32_t s = 0; s < CFG_STATES; s++)
            *config_word(v, s, index) = value;
    } else {
        *config_word(v, state, index) = value;
    }
}

int64_t config_setc16(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t reg = F_SETC16_SETC16_REG(word), value = F_SETC16_SETC16_VALUE(word);
    if (reg >= THD_STATE_REGS || reg >= v->thread_config_words)
        return NATIVE_DEFER;
    if (reg == THD_UNPACK_MISC_CFG_CFGCONTEXTCNTRESET_0_REG && value & CONTEXT_RESET_BITS)
        return NATIVE_DEFER;
    if (reg == THD_CFG_STATE_ID_STATEID_REG)
        return NATIVE_DEFER;
    v->thread_config[(uint64_t)thread * v->thread_config_words + reg] = (uint16_t)value;
    return TIMING_CONFIG_SETC16;
}

/* Config[state][cfg_reg] = GPR, or (wr128b) four words from both indices rounded down to four. */
int64_t config_wrcfg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t gpr = F_WRCFG_GPR_ADDRESS(word), index = F_WRCFG_CFG_REG(word);
    int64_t state = pipe_state(v, thread);
    if (!config_index_ok(v, index) || gpr >= GPR_COUNT || state < 0)
        return NATIVE_DEFER;
    uint32_t count = F_WRCFG_WR128B(word) ? WIDE_WORDS : 1;
    if (count > 1) {
        index &= ~(uint32_t)(WIDE_WORDS - 1);
        gpr &= ~(uint32_t)(WIDE_WORDS - 1);
    }
    for (uint32_t i = 0; i < count; i++)
        if (!config_index_ok(v, index + i) || gpr + i >= GPR_COUNT || store_has_effects(index + i, 0))
            return NATIVE_DEFER;
    const uint32_t *gprs = pipe_gprs(v, thread);
    for (uint32_t i = 0; i < count; i++)
        store_word(v, (uint32_t)state, index + i, gprs[gpr + i]);
    return TIMING_CONFIG_WRCFG;
}

int config_store_plain(struct copro_view *v, uint32_t thread, uint32_t first, const uint32_t *values,
                       uint32_t count)
{
    int64_t state = pipe_state(v, thread);
    if (state < 0)
        return 0;
    for (uint32_t i = 0; i < count; i++)
        if (!config_index_ok(v, first + i) || store_has_effects(first + i, 0))
            return 0;
    for (uint32_t i = 0; i < count; i++)
        store_word(v, (uint32_t)state, first + i, values[i]);
    return 1;
}

int64_t config_rdcfg(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t gpr = F_RDCFG_GPR_ADDRESS(word), index = F_RDCFG_CFG_REG(word);
    int64_t state = pipe_state(v, thread);
    if (!config_index_ok(v, index) || gpr >= GPR_COUNT || state < 0)
        return NATIVE_DEFER;
    pipe_gprs(v, thread)[gpr] = *config_word(v, (uint32_t)state, index);
    return TIMING_CONFIG_RDCFG;
}

/* RMWCIB<byte>: the bits `mask` of byte `byte` of Config[state][index] become those of `data`. */
static int64_t rmwcib(struct copro_view *v, uint32_t thread, uint32_t byte, uint32_t mask, uint32_t data,
                      uint32_t index)
{
    int64_t state = pipe_state(v, thread);
    if (!config_index_ok(v, index) || state < 0 || store_has_effects(index, 1))
        return NATIVE_DEFER;
    uint32_t old = *config_word(v, (uint32_t)state, index);
    uint32_t shift = 8 * byte;
    uint32_t new_byte = (data & mask) | ((old >> shift) & ~mask & BYTE_MASK);
    store_word(v, (uint32_t)state, index, (old & ~(BYTE_MASK << shift)) | (new_byte << shift));
    return TIMING_CONFIG_RMWCIB;
}

int64_t config_rmwcib0(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return rmwcib(v, thread, 0, F_RMWCIB0_MASK(word), F_RMWCIB0_DATA(word), F_RMWCIB0_CFG_REG_ADDR(word));
}

int64_t config_rmwcib1(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return rmwcib(v, thread, 1, F_RMWCIB1_MASK(word), F_RMWCIB1_DATA(word), F_RMWCIB1_CFG_REG_ADDR(word));
}

int64_t config_rmwcib2(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return rmwcib(v, thread, 2, F_RMWCIB2_MASK(word), F_RMWCIB2_DATA(word), F_RMWCIB2_CFG_REG_ADDR(word));
}

int64_t config_rmwcib3(struct copro_view *v, uint32_t thread, uint32_t word)
{
    return rmwcib(v, thread, 3, F_RMWCIB3_MASK(word), F_RMWCIB3_DATA(word), F_RMWCIB3_CFG_REG_ADDR(word));
}

#ifdef OP_CFGSHIFTMASK
static uint32_t rotr32(uint32_t value, uint32_t amount)
{
    amount &= 31; /* a shift by 32 is undefined in C; rotating by 0 is the value itself */
    return amount ? (value >> amount) | (value << (32 - amount)) : value;
}

/* The ALU operation of CFGSHIFTMASK on the old value and the rotated scratch value. */
static uint32_t shiftmask_op(uint32_t operation, uint32_t value, uint32_t scratch)
{
    switch (operation) {
    case 0: return value | scratch;
    case 1: return value & scratch;
    case 2: return value ^ scratch;
    case 3: return value + scratch;
    case 4: return value | ~scratch;
    case 5: return value & ~scratch;
    case 6: return value ^ ~scratch;
    default: return value - scratch; /* 7: the field has three bits */
    }
}

int64_t config_cfgshiftmask(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t index = F_CFGSHIFTMASK_CFG_REG(word);
    uint32_t select = F_CFGSHIFTMASK_SCRATCH_SEL(word);
    uint32_t scratch_index = select < SCRATCH_FIELDS ? select : thread; /* 3: the pipe's own */
    int64_t state = pipe_state(v, thread);
    if (!config_index_ok(v, index) || state < 0 || store_has_effects(index, 0)
        || scratch_index >= SCRATCH_FIELDS || !config_index_ok(v, scratch_fields[scratch_index].word))
        return NATIVE_DEFER;
    uint32_t raw = *config_word(v, (uint32_t)state, scratch_fields[scratch_index].word);
    uint32_t scratch = (raw & scratch_fields[scratch_index].mask) >> scratch_fields[scratch_index].shift;
    /* MaskWidth + 1 low bits; a width of 31 is the whole word. */
    uint32_t mask = (uint32_t)((2ull << F_CFGSHIFTMASK_MASK_WIDTH(word)) - 1);
    uint32_t amount = F_CFGSHIFTMASK_RIGHT_CSHIFT_AMT(word);
    scratch = rotr32(scratch & mask, amount);
    uint32_t value = *config_word(v, (uint32_t)state, index);
    if (!F_CFGSHIFTMASK_DISABLE_MASK_ON_OLD_VAL(word))
        value &= ~rotr32(mask, amount);
    store_word(v, (uint32_t)state, index, shiftmask_op(F_CFGSHIFTMASK_OPERATION(word), value, scratch));
    return TIMING_CONFIG_CFGSHIFTMASK;
}
#endif
