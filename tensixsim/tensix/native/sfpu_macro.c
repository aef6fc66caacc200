/* SFPLOADMACRO natively: its load, the rows it schedules, the countdown and the scheduled work, exactly
 * as tensixsim/tensix/sfpu/macro.py (whose docstring gives the model and its readings) runs them on the
 * shared macro_pending / macro_clock arrays, on both chips.
 *
 * A scheduled instruction runs through its issued handler with v->sched set (sfpu.h); a store through
 * sfpu_scheduled_store. Work of several sub-units in one cycle runs as sfpu.macro._at_once does: each
 * on the state as it was before the cycle, the changes merged.
 *
 * Wormhole (TSIM_WORMHOLE; sfpu/wormhole.py registers sfpu.macro.loadmacro with its Dst access): the
 * load, the scheduled store and the scheduled instructions are the handlers' Wormhole branches (its
 * addressing and conversions, its multiply-add, its modes); its opcode tables (sfpu_tables.h) leave
 * Blackhole's only instructions out of the columns and give SFPAND / SFPOR no VB slot; scheduled
 * instructions leave no rule for the next cycle (sfpu/hazards.py), and SFPSHFT2's record of the
 * LReg[VC] it shuffled is merged as the rest of the state.
 *
 * Left to Python, having changed nothing: every error sfpu/macro.py raises (LoadMacroConfig differing
 * between lanes, a selector of 1, SFPNOP on the Store sub-unit, the SFPSWAP and LReg[16] rules, two
 * sub-units changing one state element, more work than the slots hold), and a scheduled instruction
 * whose handler defers or would wait (or, on Wormhole, that the library does not run). A settle that
 * stops there leaves the countdown where Python's settle goes on from (each cycle's step is all or
 * nothing).
 */
#include <string.h>

#include "engine.h"
#include "sfpu.h"
#include "sfpu_tables.h"

enum { SLOTS = SFPU_MACRO_SLOTS, COLUMNS = SFPU_MACRO_COLUMNS, CLOCK = SFPU_MACRO_CLOCK };
enum { SUB_UNITS = 4, DELAY_FOREVER = 7, SELECT_NOP = 2, SELECT_STORE = 3, FIRST_TEMPLATE = 4 };
enum { BIT_VD16 = 0x40, BIT_SWAPPED = 0x80 }; /* a Sequence byte's operand bits */
enum { IMM10_BITS = 10 };
static const int64_t NONE = SFPU_MACRO_NONE;

#define ROW(v, slot) ((v)->macro_pending + (uint64_t)(slot) * COLUMNS)
#define CLK(v, word) ((v)->macro_clock[SFPU_MACRO_##word])

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static const uint8_t columns_of[MACRO_COLUMNS_OF_SIZE] = MACRO_COLUMNS_OF;
static const uint8_t regular_unit_of[MACRO_REGULAR_UNIT_SIZE] = MACRO_REGULAR_UNIT;
static const uint32_t operands_of[MACRO_OPERANDS_SIZE] = MACRO_OPERANDS;

int sfpu_macro_pending(struct copro_view *v)
{
    if (v->sched[SCHED_IDLE]) /* (every instruction asks: mostly nothing is scheduled) */
        return 0;
    for (uint32_t slot = 0; slot < SLOTS; slot++)
        if (ROW(v, slot)[SFPU_MACRO_VALID])
            return 1;
    v->sched[SCHED_IDLE] = 1;
    return 0;
}

/* sfpu.macro._tick */
static void tick(struct copro_view *v, int64_t cycle)
{
    if (!sfpu_macro_pending(v))
        return;
#ifdef TSIM_MUTANT_MACRO_TICK
    /* A deliberately broken build (tests/test_native_engine.py shows the lockstep check catches it):
     * the countdown skips every other cycle. */
    if (cycle & 1)
        return;
#endif
    for (uint32_t slot = 0; slot < SLOTS; slot++) {
        int64_t *r = ROW(v, slot);
        if (r[SFPU_MACRO_VALID] == 1 && r[SFPU_MACRO_BORN] < cycle && r[SFPU_MACRO_COUNT] > 0)
            r[SFPU_MACRO_COUNT]--;
    }
    CLK(v, TICKED) = max64(CLK(v, TICKED), cycle);
}

/* sfpu.macro._by_instructions */
static int by_instructions(const struct copro_view *v, int64_t cycle)
{
    for (uint32_t slot = 0; slot < SLOTS; slot++) {
        const int64_t *r = ROW(v, slot);
        if (r[SFPU_MACRO_VALID] == 1 && r[SFPU_MACRO_BORN] < cycle && r[SFPU_MACRO_KIND] == SFPU_MACRO_INSTRUCTIONS)
            return 1;
    }
    return 0;
}

/* sfpu.macro._now */
static int64_t now_of(struct copro_view *v, int64_t cycle)
{
    return sfpu_macro_pending(v) ? max64(cycle, CLK(v, EXECUTED)) : cycle;
}

/* ------------------------------------------------------------------------------ running the work */

/* The vector unit's state that scheduled work may change (SfpuState but its scheduler arrays): the
 * fields _at_once merges, element by element. */
struct field {
    void *at;
    uint32_t count, size;
};
#ifdef TSIM_WORMHOLE
enum { FIELDS = 15, STATE_BYTES = 8192 };
#else
enum { FIELDS = 14, STATE_BYTES = 8192 };
#endif

static int state_fields(const struct copro_view *v, struct field f[FIELDS])
{
    struct field all[FIELDS] = {
        {v->lreg, LREGS * LANES, 4},
        {v->lane_flags, LANES, 1},
        {v->use_lane_flags, LANES, 1},
        {v->flag_stack, LANES * STACK_DEPTH * 2, 1},
        {v->stack_depth, LANES, 1},
        {v->lane_config, LANES, 4},
        {v->sfpu_sp, (uint32_t)v->threads, 4},
        {v->prng, LANES, 4},
        {v->mad_ready, 1, 8},
        {v->mad_seen, LREGS, 1},
        {v->mad_wrote, LREGS, 1},
        {v->macro_template, LANES * 4, 4},
        {v->macro_sequence, LANES * 4, 4},
        {v->macro_misc, LANES, 4},
#ifdef TSIM_WORMHOLE
        {v->shfl_vc, LANES, 8}, /* (SFPSHFT2's shuffles record what they read: sfpu/lanes.py) */
#endif
    };
    uint64_t bytes = 0;
    for (int i = 0; i < FIELDS; i++) {
        f[i] = all[i];
        bytes += (uint64_t)all[i].count * all[i].size;
    }
    return bytes <= STATE_BYTES;
}

static void save_state(const struct field f[FIELDS], uint8_t *to)
{
    for (int i = 0; i < FIELDS; i++) {
        memcpy(to, f[i].at, (size_t)f[i].count * f[i].size);
        to += (size_t)f[i].count * f[i].size;
    }
}

static void load_state(const struct field f[FIELDS], const uint8_t *from)
{
    for (int i = 0; i < FIELDS; i++) {
        memcpy(f[i].at, from, (size_t)f[i].count * f[i].size);
        from += (size_t)f[i].count * f[i].size;
    }
}

sfpu_handler tsim_sfpu_handler(uint32_t opcode);

#ifdef NATIVE_OPCODE_BITS_INIT
/* The instructions this library runs on this architecture (ops.c): a scheduled one outside them has
 * semantics the handlers do not implement here. */
static const uint32_t native_opcodes[8] = NATIVE_OPCODE_BITS_INIT;
#endif

/* sfpu.macro._execute: one scheduled instruction at `cycle`; 0 when Python must run it (nothing changed). */
static int execute(struct copro_view *v, const int64_t *op, int64_t cycle)
{
    uint32_t thread = (uint32_t)op[SFPU_MACRO_THREAD], word = (uint32_t)op[SFPU_MACRO_WORD];
    if (thread >= v->threads)
        return 0;
    /* Rows come from shared state: operands outside what SFPLOADMACRO writes are Python's to judge. */
    for (uint32_t c = SFPU_MACRO_VB; c <= SFPU_MACRO_VD; c++)
        if (op[c] < NONE || op[c] > 16)
            return 0;
    if (op[SFPU_MACRO_UNIT] == SFPU_MACRO_STORE && (op[SFPU_MACRO_MOD0] < 0 || op[SFPU_MACRO_MOD0] > 15))
        return 0;
    if (op[SFPU_MACRO_UNIT] == SFPU_MACRO_STORE)
        return sfpu_scheduled_store(v, thread, (uint32_t)op[SFPU_MACRO_VD], (uint32_t)op[SFPU_MACRO_MOD0],
                                    (uint32_t)op[SFPU_MACRO_ADDR], cycle) != NATIVE_DEFER;
    uint32_t opcode = OPCODE_OF(word);
#ifdef NATIVE_OPCODE_BITS_INIT
    if (!(native_opcodes[opcode >> 5] >> (opcode & 31) & 1))
        return 0;
#endif
    sfpu_handler handler = tsim_sfpu_handler(opcode);
    if (!handler)
        return 0;
    v->sched[SCHED_ON] = 1;
    v->sched[SCHED_VB] = op[SFPU_MACRO_VB];
    v->sched[SCHED_VC] = op[SFPU_MACRO_VC];
    v->sched[SCHED_VD] = op[SFPU_MACRO_VD];
    int64_t cycles = handler(v, thread, word, cycle);
    v->sched[SCHED_ON] = 0;
    v->sched[SCHED_VB] = v->sched[SCHED_VC] = v->sched[SCHED_VD] = NONE;
    return cycles != NATIVE_DEFER && cycles != NATIVE_WAIT;
}

/* sfpu.macro._at_once: `n` instructions of several sub-units (store last), each on the state before the
 * cycle, their changes merged; 0 (state as before) when Python must do it. */
static int at_once(struct copro_view *v, const int64_t *const *work, int n, int64_t cycle)
{
    struct field f[FIELDS];
    uint8_t base[STATE_BYTES], merged[STATE_BYTES], claimed[STATE_BYTES];
    if (!state_fields(v, f))
        return 0;
    save_state(f, base);
    save_state(f, merged);
    memset(claimed, 0, sizeof claimed);
    for (int k = 0; k < n; k++) {
        if (k)
            load_state(f, base);
        if (!execute(v, work[k], cycle)) {
            load_state(f, base);
            return 0;
        }
        uint64_t at = 0;
        for (int i = 0; i < FIELDS; i++) {
            const uint8_t *now = f[i].at;
            for (uint32_t e = 0; e < f[i].count; e++, at += f[i].size) {
                const uint8_t *x = now + (uint64_t)e * f[i].size;
                if (!memcmp(x, base + at, f[i].size))
                    continue;
                if (claimed[at]) { /* two sub-units change one element: Unimplemented in Python */
                    load_state(f, base);
                    return 0;
                }
                memcpy(merged + at, x, f[i].size);
                claimed[at] = 1;
            }
        }
    }
    load_state(f, merged);
    return 1;
}

/* sfpu.macro._run: the work in `rows` (`n` of them) at `cycle`; 0 (nothing changed) for Python. */
static int run_due(struct copro_view *v, int64_t cycle, const uint32_t *rows, int n)
{
    const int64_t *work[SLOTS], *by_unit[SUB_UNITS] = {0}, *acting[SLOTS];
    int count = 0, acts = 0;
    for (int64_t unit = 0; unit < SUB_UNITS; unit++) /* sorted by sub-unit, slot order within one */
        for (int i = 0; i < n; i++) {
            const int64_t *op = ROW(v, rows[i]);
            if (op[SFPU_MACRO_UNIT] == unit)
                work[count++] = by_unit[unit] = op;
        }
    if (count != n)
        return 0; /* a sub-unit beyond the four: not a row SFPLOADMACRO writes */
    const int64_t *simple = by_unit[SFPU_MACRO_SIMPLE], *rnd = by_unit[SFPU_MACRO_ROUND];
    if (simple && rnd && !simple[SFPU_MACRO_NOP] && !rnd[SFPU_MACRO_NOP]
        && (simple[SFPU_MACRO_VD] == 16) == (rnd[SFPU_MACRO_VD] == 16))
        return 0; /* UndefinedBehavior: exactly one of them must write LReg[16] */
    if (CLK(v, SWAP_NEXT) == cycle && ((simple && !simple[SFPU_MACRO_NOP]) || (rnd && !rnd[SFPU_MACRO_NOP])))
        return 0; /* UndefinedBehavior: Simple or Round work the cycle after a scheduled SFPSWAP */
    int swap = simple && !simple[SFPU_MACRO_NOP] && OPCODE_OF((uint32_t)simple[SFPU_MACRO_WORD]) == OP_SFPSWAP;
    if (swap && by_unit[SFPU_MACRO_MAD] && !by_unit[SFPU_MACRO_MAD][SFPU_MACRO_NOP])
        return 0; /* UndefinedBehavior: a scheduled SFPSWAP needs SFPNOP on MAD */
    for (int i = 0; i < count; i++)
        if (!work[i][SFPU_MACRO_NOP])
            acting[acts++] = work[i];
    if (acts == 1 && !execute(v, acting[0], cycle))
        return 0;
    if (acts > 1 && !at_once(v, acting, acts, cycle))
        return 0;
    int64_t mask = 0;
    for (int i = 0; i < count; i++)
        mask |= (int64_t)1 << work[i][SFPU_MACRO_UNIT];
    for (int i = 0; i < n; i++)
        ROW(v, rows[i])[SFPU_MACRO_VALID] = 0;
    CLK(v, UNITS_AT) = cycle;
    CLK(v, UNITS_MASK) = mask;
    if (swap)
        CLK(v, SWAP_NEXT) = cycle + 1;
    for (int i = 0; i < count; i++)
        extend_done(v, work[i][SFPU_MACRO_THREAD], cycle + 1);
    return 1;
}

int sfpu_macro_settle(struct copro_view *v, int64_t cycle)
{
    int64_t saved_rows[SLOTS * COLUMNS], saved_clock[CLOCK];
    for (;;) {
        if (!sfpu_macro_pending(v))
            return 1; /* nothing outstanding: the clock restarts with the next SFPLOADMACRO */
        int64_t t = CLK(v, EXECUTED);
        if (cycle >= 0 && t >= cycle)
            return 1;
        memcpy(saved_rows, v->macro_pending, sizeof saved_rows);
        memcpy(saved_clock, v->macro_clock, sizeof saved_clock);
        if (CLK(v, TICKED) < t && !by_instructions(v, t))
            tick(v, t); /* no vector-unit instruction issued at t (it would have counted down already) */
        CLK(v, TICKED) = max64(CLK(v, TICKED), t);
        uint32_t due[SLOTS];
        int n = 0;
        for (uint32_t slot = 0; slot < SLOTS; slot++)
            if (ROW(v, slot)[SFPU_MACRO_VALID] == 1 && ROW(v, slot)[SFPU_MACRO_COUNT] == 0)
                due[n++] = slot;
        if (!n && by_instructions(v, t + 1)) {
            if (cycle >= 0) { /* nothing runs until a vector-unit instruction issues */
                CLK(v, EXECUTED) = cycle;
                CLK(v, TICKED) = cycle - 1;
            }
            return 1;
        }
        CLK(v, EXECUTED) = t + 1;
        if (n && !run_due(v, t + 1, due, n)) {
            memcpy(v->macro_pending, saved_rows, sizeof saved_rows);
            memcpy(v->macro_clock, saved_clock, sizeof saved_clock);
            return 0;
        }
    }
}

/* ------------------------------------------------------------------------------ issued instructions */

int64_t sfpu_macro_issue(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle, sfpu_handler handler)
{
    uint32_t unit = regular_unit_of[OPCODE_OF(word)];
    int64_t swap_next = CLK(v, SWAP_NEXT);
    if (swap_next == cycle && (unit == SFPU_MACRO_SIMPLE || unit == SFPU_MACRO_ROUND))
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (swap_next == cycle + 1 && unit == SFPU_MACRO_MAD)
        return NATIVE_DEFER; /* UndefinedBehavior */
    int64_t cycles;
    if (unit != MACRO_NO_UNIT && CLK(v, UNITS_AT) == cycle && (CLK(v, UNITS_MASK) >> unit & 1))
        cycles = TIMING_SFPU_ISSUE; /* the scheduled work takes priority: silently discarded */
    else
        cycles = handler(v, thread, word, cycle);
    if (cycles == NATIVE_DEFER || cycles == NATIVE_WAIT || !sfpu_macro_pending(v))
        return cycles;
    int64_t now = now_of(v, cycle);
    if (CLK(v, TICKED) < now)
        tick(v, now);
    return cycles;
}

/* ------------------------------------------------------------------------------ SFPLOADMACRO */

/* The instruction word's VD field (sfpu.macro._plan's own_vd), NONE without one. */
static int64_t own_vd(uint32_t word)
{
    uint32_t at = operands_of[OPCODE_OF(word)], width = at >> MACRO_VD_WIDTH_SHIFT & 0xFF;
    return width ? (int64_t)(word >> (at & 0xFF) & ((1u << width) - 1)) : NONE;
}

/* One LoadMacroConfig value, 0 when it differs between lanes (Unimplemented in Python). */
static int uniform(const uint32_t *values, uint32_t stride, uint32_t *out)
{
    for (uint32_t lane = 1; lane < LANES; lane++)
        if (values[lane * stride] != values[0])
            return 0;
    *out = values[0];
    return 1;
}

/* sfpu.macro._plan: the four rows (one per sub-unit, VALID 0 for a selector of 0); 0 for Python. */
static int plan_rows(const struct copro_view *v, uint32_t macro, uint32_t vd, uint32_t mod0, uint32_t addr,
                     int64_t rows[SUB_UNITS][COLUMNS])
{
    uint32_t sequence, misc;
    if (!uniform(v->macro_sequence + macro, 4, &sequence) || !uniform(v->macro_misc, 1, &misc))
        return 0;
    uint32_t store_mod0 = misc & 0xF, uses_load_mod0 = misc >> 4 & 0xF, delay_kind = misc >> 8 & 0xF;
    const uint32_t nop = (uint32_t)OP_SFPNOP << 24, store = (uint32_t)OP_SFPSTORE << 24;
    for (uint32_t unit = 0; unit < SUB_UNITS; unit++) {
        uint32_t bits = sequence >> (8 * unit) & 0xFF, select = bits & 7, delay = bits >> 3 & 7;
        int64_t *row = rows[unit];
        for (uint32_t c = 0; c < COLUMNS; c++)
            row[c] = NONE;
        row[SFPU_MACRO_UNIT] = unit;
        row[SFPU_MACRO_COUNT] = delay;
        row[SFPU_MACRO_NOP] = 0;
        row[SFPU_MACRO_KIND] = delay_kind >> unit & 1 ? SFPU_MACRO_INSTRUCTIONS : SFPU_MACRO_CYCLES;
        if (select == 0) {
            row[SFPU_MACRO_VALID] = 0; /* schedules nothing, but still forgets */
            continue;
        }
        if (select == 1)
            return 0; /* UndefinedBehavior */
        uint32_t word = nop;
        if (select == SELECT_STORE)
            word = store;
        else if (select >= FIRST_TEMPLATE && !uniform(v->macro_template + (select - FIRST_TEMPLATE), 4, &word))
            return 0;
        if (!(columns_of[OPCODE_OF(word)] >> unit & 1)) { /* not this sub-unit's (or no instruction) */
            if (unit == SFPU_MACRO_STORE)
                return 0; /* UndefinedBehavior: SFPNOP on the Store sub-unit */
            word = nop;
        }
        row[SFPU_MACRO_VALID] = 1;
        row[SFPU_MACRO_WORD] = word;
        row[SFPU_MACRO_NOP] = OPCODE_OF(word) == OP_SFPNOP;
        int64_t own = own_vd(word);
        if (unit == SFPU_MACRO_STORE) {
            row[SFPU_MACRO_VD] = bits & BIT_VD16 ? 16 : bits & BIT_SWAPPED ? own : vd;
            row[SFPU_MACRO_MOD0] = uses_load_mod0 >> macro & 1 ? mod0 : store_mod0;
            row[SFPU_MACRO_ADDR] = addr;
            continue;
        }
        uint32_t slots = operands_of[OPCODE_OF(word)];
        int has_vc = slots >> MACRO_HAS_VC_BIT & 1, has_vb = slots >> MACRO_HAS_VB_BIT & 1;
        if (bits & BIT_SWAPPED) {
            row[SFPU_MACRO_VB] = vd;
            row[SFPU_MACRO_VC] = has_vc ? NONE : own;
        } else {
            row[SFPU_MACRO_VC] = vd;
            /* VB = the template's VD; only the simple sub-unit's models skip their own VB = VD */
            row[SFPU_MACRO_VB] = has_vb || unit != SFPU_MACRO_SIMPLE ? NONE : own;
        }
        row[SFPU_MACRO_VD] = bits & BIT_VD16 ? 16 : vd;
    }
    return 1;
}

/* sfpu.macro._schedule on the live arrays; 0 when a row finds no free slot (Unimplemented). */
static int schedule(struct copro_view *v, int64_t rows[SUB_UNITS][COLUMNS], int64_t now, uint32_t thread,
                    int64_t core, int64_t pc, int64_t *done)
{
    for (uint32_t unit = 0; unit < SUB_UNITS; unit++) {
        int64_t *row = rows[unit], delay = row[SFPU_MACRO_COUNT];
        if (delay != DELAY_FOREVER) /* ForgetFutureInstructionWhoseDelayIs(Delay) */
            for (uint32_t slot = 0; slot < SLOTS; slot++) {
                int64_t *r = ROW(v, slot);
                if (r[SFPU_MACRO_VALID] == 1 && r[SFPU_MACRO_UNIT] == row[SFPU_MACRO_UNIT] && r[SFPU_MACRO_COUNT] == delay)
                    r[SFPU_MACRO_VALID] = 0;
            }
        if (!row[SFPU_MACRO_VALID])
            continue;
        uint32_t free = 0;
        while (free < SLOTS && ROW(v, free)[SFPU_MACRO_VALID] != 0)
            free++;
        if (free == SLOTS)
            return 0;
        row[SFPU_MACRO_THREAD] = thread;
        row[SFPU_MACRO_BORN] = now;
        row[SFPU_MACRO_PC] = pc;
        row[SFPU_MACRO_CORE] = core;
        row[SFPU_MACRO_SEQ] = CLK(v, NEXT_SEQ)++;
        memcpy(ROW(v, free), row, COLUMNS * sizeof *row);
        v->sched[SCHED_IDLE] = 0;
        if (!by_instructions(v, now + 1)) /* counted in cycles: it runs at now + 1 + delay */
            *done = max64(*done, now + delay + 2);
    }
    return 1;
}

int64_t sfpu_sfploadmacro(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t imm10 = F_SFPLOADMACRO_DEST_REG_ADDR(word), ind = F_SFPLOADMACRO_LREG_IND(word);
    uint32_t mod0 = F_SFPLOADMACRO_INSTR_MOD0(word);
    if (imm10 >> IMM10_BITS || !v->pipe_state || thread >= v->pipe_count)
        return NATIVE_DEFER; /* (without the pipes' bookkeeping no pushing core and pc to record) */
    const int64_t *source = v->pipe_state + (uint64_t)thread * v->pipe_fields + PIPE_SRC;
    uint32_t macro = ind >> 2, vd = (imm10 & 1) << 2 | (ind & 3);
    struct load_plan load;
    int64_t go = sfpu_load_plan(v, thread, word, cycle, vd, mod0, F_SFPLOADMACRO_SFPU_ADDR_MODE(word), imm10, &load);
    if (go != 1)
        return go;
    int64_t rows[SUB_UNITS][COLUMNS];
    if (!plan_rows(v, macro, vd, mod0, load.addr, rows))
        return NATIVE_DEFER;
    /* The countdown step and the scheduling, tried on copies first: Python raises after the load when
     * the slots run out, so that case must be left to it before anything changes. */
    int64_t saved_rows[SLOTS * COLUMNS], saved_clock[CLOCK], done = -1;
    memcpy(saved_rows, v->macro_pending, sizeof saved_rows);
    memcpy(saved_clock, v->macro_clock, sizeof saved_clock);
    int64_t now = now_of(v, cycle);
    if (sfpu_macro_pending(v)) {
        if (CLK(v, TICKED) < now)
            tick(v, now); /* this issue counts the older work down before the new work is scheduled */
    } else {
        CLK(v, EXECUTED) = CLK(v, TICKED) = now;
    }
    int64_t core = source[QE_CORE] >= 0 ? source[QE_CORE] : NONE;
    if (!schedule(v, rows, now, thread, core, source[QE_PC], &done)) {
        v->sched[SCHED_IDLE] = 0; /* (restored rows: ask again) */
        memcpy(v->macro_pending, saved_rows, sizeof saved_rows);
        memcpy(v->macro_clock, saved_clock, sizeof saved_clock);
        return NATIVE_DEFER;
    }
    sfpu_load_commit(v, thread, &load);
    if (done >= 0)
        extend_done(v, thread, done);
    return TIMING_SFPU_ISSUE;
}
