/* The vector unit's lane predication: SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC and SFPCOMPC, exactly as
 * tensixsim/tensix/sfpu/flags.py executes them. Each occupies the vector unit SFPU.issue cycles.
 *
 * Lane masks stand for the bool arrays: LaneFlags, UseLaneFlagsForLaneEnable and each lane's flag
 * stack (entries FlagStack[lane][i] = (LaneFlags, UseLaneFlagsForLaneEnable)). The lanes a backdoor
 * load takes over (VD >= 12) keep their flag state and load the template instead.
 *
 * Deferred to Python: a set bit beyond a documented operand (Imm12, VC, SFPCOMPC's Mod1), a stack
 * operation undefined on some lane (pushing onto a full stack, mutating or popping an empty one),
 * and a flag-stack depth beyond STACK_DEPTH (not a state the model reaches).
 *
 * Wormhole (TSIM_WORMHOLE): SFPPUSHC is a plain push (other Mod1 defer), and SFPPOPC with Mod1 != 0
 * copies a full stack's top to its bottom entry (SFPPOPC.md's hardware bug, sfpu.flags.popc).
 */
#include "sfpu.h"

/* SFPSETCC Mod1 */
enum { SETCC_IMM_BIT0 = 1, SETCC_CLEAR = 8, SETCC_LT0 = 0, SETCC_NE0 = 2, SETCC_GTE0 = 4, SETCC_EQ0 = 6 };
/* SFPENCC Mod1 and Imm2 */
enum { ENCC_EC = 1, ENCC_EI = 2, ENCC_RI = 8, ENCC_IMM2_E = 1, ENCC_IMM2_R = 2 };
enum { IMM1_BITS = 1, IMM2_BITS = 2 };
/* SFPPUSHC / SFPPOPC Mod1 beyond BooleanOp's 1..12 */
enum { STACK_PLAIN = 0, BOOLEAN_LAST = 12, STACK_INVERT = 13, STACK_SET_TRUE = 14 };
enum { ENTRY_FLAGS = 0, ENTRY_USE = 1, ENTRY_FIELDS = 2 };

int64_t sfpu_sfpsetcc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t imm = F_SFPSETCC_IMM12_MATH(word), vc = sfpu_vc(v, F_SFPSETCC_LREG_C(word)), vd = sfpu_vd(v, F_SFPSETCC_LREG_DEST(word));
    uint32_t mod1 = F_SFPSETCC_INSTR_MOD1(word);
    if (imm >> IMM1_BITS)
        return NATIVE_DEFER;
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    const uint32_t *c = sfpu_lreg(v, vc);
    uint32_t flags = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        int32_t x = (int32_t)c[lane];
        int flag;
        if (mod1 & SETCC_CLEAR)
            flag = 0;
        else if (mod1 & SETCC_IMM_BIT0)
            flag = imm != 0;
        else if (mod1 == SETCC_LT0)
            flag = x < 0;
        else if (mod1 == SETCC_NE0)
            flag = x != 0;
        else if (mod1 == SETCC_GTE0)
            flag = x >= 0;
        else /* SETCC_EQ0: Mod1 is one of the four here */
            flag = x == 0;
        flags |= (uint32_t)flag << lane;
    }
    flags &= sfpu_mask_of(v->use_lane_flags);
    sfpu_store_mask(v->lane_flags, flags, sfpu_lane_enabled(v) & ~backdoor);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpencc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    uint32_t imm2 = F_SFPENCC_IMM12_MATH(word), vd = sfpu_vd(v, F_SFPENCC_LREG_DEST(word));
    uint32_t mod1 = F_SFPENCC_INSTR_MOD1(word);
    if (imm2 >> IMM2_BITS || sfpu_vc(v, F_SFPENCC_LREG_C(word)))
        return NATIVE_DEFER;
    uint32_t backdoor = sfpu_backdoor_lanes(v, vd);
    if (mod1 & ENCC_EI)
        sfpu_store_mask(v->use_lane_flags, (imm2 & ENCC_IMM2_E) ? ALL_LANES : 0, ~backdoor);
    else if (mod1 & ENCC_EC)
        sfpu_store_mask(v->use_lane_flags, ~sfpu_mask_of(v->use_lane_flags), ~backdoor);
    int flag = (mod1 & ENCC_RI) ? (imm2 & ENCC_IMM2_R) != 0 : 1;
    sfpu_store_mask(v->lane_flags, flag ? ALL_LANES : 0, ~backdoor);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

/* ------------------------------------------------------------------------------ the flag stack */

/* sfpu.flags._boolean_op (Mod1 1..12) on lane masks */
static uint32_t boolean_op(uint32_t mod1, uint32_t a, uint32_t b)
{
    switch (mod1) {
    case 1: return b;
    case 2: return ~b;
    case 3: return a & b;
    case 4: return a | b;
    case 5: return a & ~b;
    case 6: return a | ~b;
    case 7: return ~a & b;
    case 8: return ~a | b;
    case 9: return ~a & ~b;
    case 10: return ~a | ~b;
    case 11: return a ^ b;
    default: return ~(a ^ b); /* 12 */
    }
}

static uint8_t *entry(struct copro_view *v, uint32_t lane, uint32_t at, uint32_t field)
{
    return v->flag_stack + ((uint64_t)(lane % LANES) * STACK_DEPTH + at % STACK_DEPTH) * ENTRY_FIELDS + field;
}

/* The stack instructions' shared operands (sfpu.flags._stack_operands): Imm12 and VC must be 0. The
 * lanes a backdoor load takes over are returned; 0 and nothing set when the instruction defers (an
 * operand, or a depth beyond the stack that _top would index with). */
static int stack_operands(const struct copro_view *v, uint32_t imm12, uint32_t vc, uint32_t vd, int64_t cycle,
                          uint32_t *backdoor)
{
    (void)cycle;
    if (imm12 || vc)
        return 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        if (v->stack_depth[lane] > STACK_DEPTH)
            return 0;
    *backdoor = sfpu_backdoor_lanes(v, vd);
    return 1;
}

/* sfpu.flags._top: each lane's top entry as masks, `empty` (both fields) where its stack is. */
static void top(struct copro_view *v, int empty, uint32_t *flags, uint32_t *use)
{
    *flags = *use = 0;
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t depth = v->stack_depth[lane];
        int f = depth ? *entry(v, lane, depth - 1, ENTRY_FLAGS) != 0 : empty;
        int u = depth ? *entry(v, lane, depth - 1, ENTRY_USE) != 0 : empty;
        *flags |= (uint32_t)f << lane;
        *use |= (uint32_t)u << lane;
    }
}

int64_t sfpu_sfppushc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPPUSHC_LREG_DEST(word)), mod1 = F_SFPPUSHC_INSTR_MOD1(word), backdoor;
#ifdef TSIM_WORMHOLE
    if (mod1 != STACK_PLAIN)
        return NATIVE_DEFER; /* a plain push only: ctx.documented("instr_mod1", 0) */
#endif
    if (!stack_operands(v, F_SFPPUSHC_IMM12_MATH(word), sfpu_vc(v, F_SFPPUSHC_LREG_C(word)), vd, cycle, &backdoor))
        return NATIVE_DEFER;
    uint32_t lanes = ~backdoor; /* the lanes whose flag state changes */
    for (uint32_t lane = 0; lane < LANES; lane++) {
        uint32_t depth = v->stack_depth[lane];
        if ((lanes >> lane & 1) && (mod1 == STACK_PLAIN ? depth >= STACK_DEPTH : depth == 0))
            return NATIVE_DEFER; /* a full stack pushed, or an empty one mutated: UndefinedBehavior */
    }
    uint32_t flags = sfpu_mask_of(v->lane_flags), use = sfpu_mask_of(v->use_lane_flags);
    uint32_t new_flags, new_use;
    if (mod1 == STACK_PLAIN) {
        for (uint32_t lane = 0; lane < LANES; lane++)
            if (lanes >> lane & 1) {
                uint32_t depth = v->stack_depth[lane];
                *entry(v, lane, depth, ENTRY_FLAGS) = (uint8_t)(flags >> lane & 1);
                *entry(v, lane, depth, ENTRY_USE) = (uint8_t)(use >> lane & 1);
                v->stack_depth[lane] = (uint8_t)(depth + 1);
            }
        sfpu_load_template(v, vd, backdoor, word);
        return TIMING_SFPU_ISSUE;
    }
    if (mod1 <= BOOLEAN_LAST) {
        uint32_t top_flags, top_use;
        top(v, 0, &top_flags, &top_use);
        new_flags = boolean_op(mod1, top_flags, flags);
        new_use = use;
    } else if (mod1 == STACK_INVERT) {
        new_flags = ~flags;
        new_use = use;
        sfpu_store_mask(v->lane_flags, new_flags, lanes);
    } else {
        new_flags = mod1 == STACK_SET_TRUE ? ALL_LANES : 0;
        new_use = ALL_LANES;
    }
    for (uint32_t lane = 0; lane < LANES; lane++)
        if (lanes >> lane & 1) {
            uint32_t depth = v->stack_depth[lane];
            *entry(v, lane, depth - 1, ENTRY_FLAGS) = (uint8_t)(new_flags >> lane & 1);
            *entry(v, lane, depth - 1, ENTRY_USE) = (uint8_t)(new_use >> lane & 1);
        }
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfppopc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPPOPC_LREG_DEST(word)), mod1 = F_SFPPOPC_INSTR_MOD1(word), backdoor;
    if (!stack_operands(v, F_SFPPOPC_IMM12_MATH(word), sfpu_vc(v, F_SFPPOPC_LREG_C(word)), vd, cycle, &backdoor))
        return NATIVE_DEFER;
    uint32_t lanes = ~backdoor;
    if (mod1 == STACK_PLAIN)
        for (uint32_t lane = 0; lane < LANES; lane++)
            if ((lanes >> lane & 1) && v->stack_depth[lane] == 0)
                return NATIVE_DEFER; /* pops an empty flag stack: UndefinedBehavior */
    uint32_t flags = sfpu_mask_of(v->lane_flags), top_flags, top_use;
    top(v, 0, &top_flags, &top_use);
    uint32_t new_flags, new_use = sfpu_mask_of(v->use_lane_flags);
#ifdef TSIM_WORMHOLE
    /* SFPPOPC.md's hardware bug: with Mod1 != 0, a full stack's top is also copied to its bottom entry. */
    if (mod1 != STACK_PLAIN)
        for (uint32_t lane = 0; lane < LANES; lane++)
            if ((lanes >> lane & 1) && v->stack_depth[lane] == STACK_DEPTH) {
                *entry(v, lane, 0, ENTRY_FLAGS) = (uint8_t)(top_flags >> lane & 1);
                *entry(v, lane, 0, ENTRY_USE) = (uint8_t)(top_use >> lane & 1);
            }
#endif
    if (mod1 == STACK_PLAIN) {
        for (uint32_t lane = 0; lane < LANES; lane++)
            if (lanes >> lane & 1) {
                uint32_t depth = v->stack_depth[lane];
                *entry(v, lane, depth - 1, ENTRY_FLAGS) = *entry(v, lane, depth - 1, ENTRY_USE) = 0;
                v->stack_depth[lane] = (uint8_t)(depth - 1);
            }
        new_use = top_use, new_flags = top_flags;
    } else if (mod1 <= BOOLEAN_LAST) {
        new_use = top_use, new_flags = boolean_op(mod1, flags, top_flags);
    } else if (mod1 == STACK_INVERT) {
        new_flags = ~flags;
    } else {
        new_use = ALL_LANES, new_flags = mod1 == STACK_SET_TRUE ? ALL_LANES : 0;
    }
    sfpu_store_mask(v->use_lane_flags, new_use, lanes);
    sfpu_store_mask(v->lane_flags, new_flags, lanes);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}

int64_t sfpu_sfpcompc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread;
    uint32_t vd = sfpu_vd(v, F_SFPCOMPC_LREG_DEST(word)), backdoor;
    if (F_SFPCOMPC_INSTR_MOD1(word)
        || !stack_operands(v, F_SFPCOMPC_IMM12_MATH(word), sfpu_vc(v, F_SFPCOMPC_LREG_C(word)), vd, cycle, &backdoor))
        return NATIVE_DEFER;
    uint32_t top_flags, top_use;
    top(v, 1, &top_flags, &top_use);
    uint32_t flags = top_use & sfpu_mask_of(v->use_lane_flags) & top_flags & ~sfpu_mask_of(v->lane_flags);
    sfpu_store_mask(v->lane_flags, flags, ~backdoor);
    sfpu_load_template(v, vd, backdoor, word);
    return TIMING_SFPU_ISSUE;
}
