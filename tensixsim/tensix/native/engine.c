/* The native pipe engine: the loop of tensixsim/tensix/frontend/pipes.py (Engine.advance_to) in C.
 *
 * It picks the next pipe exactly as the Python engine does (earliest ready cycle, lowest thread on a
 * tie), takes queue entries through the MOP and replay expanders, and issues the instructions
 * tsim_native_op executes, doing the same bookkeeping as Engine._retired. Whenever the next step
 * needs anything else (a blocked pipe, a latched wait, an instruction or expansion it defers, a
 * timed state change, a core to wake) it stops and says what Python must do; Python does exactly
 * that one step with the reference code and calls it again. State is shared: every array here is a
 * numpy array of the Python model, so the two engines never copy anything between them.
 */
#include <string.h>

#include "constants.h"
#include "copro.h"
#include "engine.h"
#include "fields.h"
#include "matrix.h"
#include "sfpu.h"
#include "sfpu_float.h"
#include "sync.h"

enum { REPLAY_SLOTS = 32, MOP_CFG_WORDS = 9, REPLAY_COUNT_LIMIT = 64, MOP_COUNT_MASK = 0x7F };
static const int64_t NEVER = (int64_t)1 << 62;

#define P(e, t, f) ((e)->pipe[(t) * PIPE_FIELDS + (f)])

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ------------------------------------------------------------------------------------------ frontend */

/* The replay expander of one thread, on a private copy (committed only if the whole expansion is
 * valid: a Python expansion that raises part-way is left to Python, which raises the same error). */
struct replay_copy {
    uint32_t buffer[REPLAY_SLOTS];
    uint8_t written[REPLAY_SLOTS];
    int32_t slot, left;
    uint8_t exec;
};

struct expansion {
    struct engine *e;
    uint32_t thread;
    struct replay_copy r;
    uint32_t *out;
    int64_t count, capacity;
    int ok;
};

static int frontend_only(const struct engine *e, uint32_t word)
{
    uint32_t op = word >> 24;
    return op == e->op_mop || op == e->op_mop_cfg || op == e->op_replay;
}

static void emit(struct expansion *x, uint32_t word)
{
    if (!x->ok)
        return;
    if (frontend_only(x->e, word)) {
        x->ok = 0; /* UndefinedBehavior in Python: Python takes it */
        return;
    }
    if (x->count < x->capacity)
        x->out[x->count] = word;
    x->count++; /* past the capacity only counted: the caller asks for a bigger buffer */
}

/* ReplayExpander.feed */
static void replay_feed(struct expansion *x, uint32_t word)
{
    struct replay_copy *r = &x->r;
    if (!x->ok)
        return;
    if (r->left) {
        r->buffer[r->slot] = word;
        r->written[r->slot] = 1;
        r->slot = (r->slot + 1) % REPLAY_SLOTS;
        r->left--;
        if (r->exec)
            emit(x, word);
        return;
    }
    if (word >> 24 != x->e->op_replay) {
        emit(x, word);
        return;
    }
    uint32_t start = F_REPLAY_START_IDX(word), count = F_REPLAY_LEN(word);
    uint32_t execute = F_REPLAY_EXECUTE_WHILE_LOADING(word), load = F_REPLAY_LOAD_MODE(word);
    if (start >= REPLAY_SLOTS || count >= REPLAY_COUNT_LIMIT || execute > 1) {
        x->ok = 0;
        return;
    }
    if (!count)
        count = REPLAY_COUNT_LIMIT;
    if (load) {
        r->slot = (int32_t)start;
        r->left = (int32_t)count;
        r->exec = (uint8_t)execute;
        return;
    }
    for (uint32_t i = 0; i < count; i++)
        if (!r->written[(start + i) % REPLAY_SLOTS]) {
            x->ok = 0;
            return;
        }
    for (uint32_t i = 0; i < count && x->ok; i++)
        emit(x, r->buffer[(start + i) % REPLAY_SLOTS]);
}

static int is_nop(const struct engine *e, uint32_t word) { return word >> 24 == e->op_nop; }

/* frontend.expanders.expand_mop with the thread's configuration: every word through the replay expander. */
static void mop_expand(struct expansion *x, uint32_t word)
{
    struct engine *e = x->e;
    uint32_t t = x->thread;
    const uint32_t *cfg = e->mop_cfg + t * MOP_CFG_WORDS;
    const uint8_t *written = e->mop_cfg_written + t * MOP_CFG_WORDS;
    uint32_t type = F_MOP_MOP_TYPE(word), loop_count = F_MOP_LOOP_COUNT(word), lo = word & 0xFFFF;
    uint32_t hi = e->zmask_hi16[t];
    for (int i = type == 0 ? 1 : 0; i < MOP_CFG_WORDS; i++)
        if (!written[i]) {
            x->ok = 0;
            return;
        }
    if (hi > 0xFFFF || loop_count > MOP_COUNT_MASK) {
        x->ok = 0;
        return;
    }
    if (type == 0) {
        uint32_t mask = (hi << 16) | lo, flags = cfg[1];
        uint32_t a_seq[5], skip_seq[2], na = 0, ns = 0;
        a_seq[na++] = cfg[3];
        if (flags & 2) {
            a_seq[na++] = cfg[4];
            a_seq[na++] = cfg[5];
            a_seq[na++] = cfg[6];
        }
        skip_seq[ns++] = cfg[7];
        if (flags & 1) {
            a_seq[na++] = cfg[2];
            skip_seq[ns++] = cfg[8];
        }
        for (uint32_t i = 0; i <= loop_count && x->ok; i++) {
            int skip = i < 32 && (mask >> i) & 1;
            for (uint32_t k = 0; k < (skip ? ns : na); k++)
                replay_feed(x, skip ? skip_seq[k] : a_seq[k]);
        }
        return;
    }
    if (loop_count || lo || cfg[0] > MOP_COUNT_MASK || cfg[1] > MOP_COUNT_MASK) {
        x->ok = 0; /* Unimplemented in Python */
        return;
    }
    uint32_t outer = cfg[0] & MOP_COUNT_MASK, inner = cfg[1] & MOP_COUNT_MASK;
    uint32_t start_op = cfg[2], end_op0 = cfg[3], end_op1 = cfg[4], loop_op = cfg[5], loop_op1 = cfg[6];
    uint32_t last_of_all = cfg[7], last_of_outer = cfg[8];
    int alternate = !is_nop(e, loop_op1), with_start = !is_nop(e, start_op);
    uint32_t steps = alternate ? 2 * inner : inner;
    uint32_t end_ops[2], n_end = 0;
    if (!is_nop(e, end_op0)) {
        end_ops[n_end++] = end_op0;
        if (!is_nop(e, end_op1))
            end_ops[n_end++] = end_op1;
    }
    if (outer == 1 && !with_start && steps == 0 && n_end)
        outer += 128; /* the documented hardware bug (frontend/expanders.py) */
    for (uint32_t j = 0; j < outer && x->ok; j++) {
        if (with_start)
            replay_feed(x, start_op);
        for (uint32_t i = 0; i + 1 < steps && x->ok; i++)
            replay_feed(x, alternate && (i % 2) ? loop_op1 : loop_op);
        if (steps)
            replay_feed(x, j == outer - 1 ? last_of_all : last_of_outer);
        for (uint32_t k = 0; k < n_end; k++)
            replay_feed(x, end_ops[k]);
    }
}

/* Coprocessor.expand into the pipe's word buffer (empty when this is called). 1: done; 0: Python;
 * -1: the buffer is too small for *count words (nothing changed). */
static int expand_entry(struct engine *e, uint32_t t, uint32_t word, uint32_t core, int64_t *count)
{
    struct expansion x;
    x.e = e;
    x.thread = t;
    memcpy(x.r.buffer, e->replay_buffer + t * REPLAY_SLOTS, sizeof x.r.buffer);
    memcpy(x.r.written, e->replay_written + t * REPLAY_SLOTS, sizeof x.r.written);
    x.r.slot = e->record_slot[t];
    x.r.left = e->record_left[t];
    x.r.exec = e->record_exec[t];
    x.out = e->words[t];
    x.count = 0;
    x.capacity = P(e, t, PIPE_WORDS_CAPACITY);
    x.ok = x.r.slot >= 0 && x.r.slot < REPLAY_SLOTS && x.r.left >= 0;
    uint32_t op = word >> 24;
    if (core == e->brisc_core || (op != e->op_mop && op != e->op_mop_cfg)) {
        replay_feed(&x, word);
    } else if (op == e->op_mop_cfg) {
        if (F_MOP_CFG_ZMASK_HI16(word) > 0xFFFF)
            x.ok = 0;
    } else {
        mop_expand(&x, word);
    }
    if (!x.ok)
        return 0;
    if (x.count > x.capacity) {
        *count = x.count;
        return -1;
    }
    if (op == e->op_mop_cfg && core != e->brisc_core)
        e->zmask_hi16[t] = F_MOP_CFG_ZMASK_HI16(word);
    memcpy(e->replay_buffer + t * REPLAY_SLOTS, x.r.buffer, sizeof x.r.buffer);
    memcpy(e->replay_written + t * REPLAY_SLOTS, x.r.written, sizeof x.r.written);
    e->record_slot[t] = x.r.slot;
    e->record_left[t] = x.r.left;
    e->record_exec[t] = x.r.exec;
    *count = x.count;
    return 1;
}

/* ------------------------------------------------------------------------------------------ engine */

static int64_t queue_count(const struct engine *e, uint32_t t) { return e->queue_ctl[t][QUEUE_COUNT]; }

/* The head entry of a thread's queue ring (QE_* fields). */
static const int64_t *queue_head(const struct engine *e, uint32_t t)
{
    const int64_t *q = e->queue_ctl[t];
    return e->queue[t] + (q[QUEUE_HEAD] & (q[QUEUE_CAPACITY] - 1)) * QE_FIELDS;
}

static int64_t words_left(const struct engine *e, uint32_t t) { return P(e, t, PIPE_WORDS_END) - P(e, t, PIPE_WORDS_HEAD); }

/* Engine._free_for: when `word` can issue to its unit: when the unit is free, or for an SFPNOP on the
 * second cycle of an SFPSWAP or a lane shuffle (sfpu/lanes.py nop_from). */
static int64_t free_for(const struct engine *e, uint32_t word, uint8_t unit)
{
    int64_t clock = e->busy_until[unit];
    if (OPCODE_OF(word) == OP_SFPNOP && e->view->sfpu_nop_from[1] == clock)
        return e->view->sfpu_nop_from[0];
    return clock;
}

/* Engine._ready_cycle; -1 when the pipe has nothing to try. */
static int64_t ready_cycle(const struct engine *e, uint32_t t)
{
    int64_t next = P(e, t, PIPE_NEXT_ISSUE);
    if (P(e, t, PIPE_BLOCKED)) {
        if (P(e, t, PIPE_BLOCKED_VERSION) != e->copro[COPRO_VERSION])
            return max64(max64(next, P(e, t, PIPE_BLOCKED_AT)), e->copro[COPRO_VERSION_CYCLE] + 1);
        if (P(e, t, PIPE_RETRY_AT) >= 0)
            return max64(next, P(e, t, PIPE_RETRY_AT));
        return -1;
    }
    if (words_left(e, t)) {
        uint32_t word = e->words[t][P(e, t, PIPE_WORDS_HEAD)];
        uint8_t unit = e->unit_of[word >> 24];
        if (unit == NO_UNIT)
            return next; /* Python raises InvalidInstruction when it issues */
        return max64(next, free_for(e, word, unit));
    }
    if (queue_count(e, t)) /* through the input FIFO and the expanders (timing.py FrontendTiming) */
        return max64(next, queue_head(e, t)[QE_CYCLE] + TIMING_FRONTEND_PUSH_TO_ISSUE);
    return -1;
}

/* Stop with a step Python must finish; it stays pending (returned again) until Python has. */
static int stop(struct engine *e, int64_t reason, uint32_t t, int64_t cycle)
{
    e->out[OUT_PIPE] = t;
    e->out[OUT_CYCLE] = cycle;
    e->out[OUT_PENDING] = reason;
    return (int)reason;
}

/* Engine._take natively. Returns the cycle the first word may issue, or -1 when Python must take it
 * (or, with out[OUT_GROW] set, give pipe t a word buffer that large first). */
static int64_t take(struct engine *e, uint32_t t, int64_t cycle)
{
    int64_t *q = e->queue_ctl[t];
    const int64_t *entry = queue_head(e, t);
    uint32_t word = (uint32_t)entry[QE_WORD], core = (uint32_t)entry[QE_CORE];
    int64_t *h = e->history_ctl[t];
    if (h[HISTORY_RECORD] && h[HISTORY_COUNT] >= h[HISTORY_CAPACITY])
        return -1; /* Python grows the history */
    int64_t count;
    int expanded = expand_entry(e, t, word, core, &count);
    if (expanded < 0)
        e->out[OUT_GROW] = count;
    if (expanded <= 0)
        return -1;
    if (h[HISTORY_RECORD]) {
        int64_t *row = e->history[t] + (h[HISTORY_COUNT]++) * (QE_FIELDS + 1);
        row[0] = cycle;
        memcpy(row + 1, entry, QE_FIELDS * sizeof *entry);
    }
    memcpy(&P(e, t, PIPE_SRC), entry, QE_FIELDS * sizeof *entry);
    q[QUEUE_HEAD]++;
    q[QUEUE_COUNT]--;
    if (e->waiters & WAIT_QUEUE(t)) {
        e->out[OUT_NOTIFY] |= NOTIFY_QUEUE;
        e->out[OUT_QUEUE_CYCLE] = cycle;
    }
    int is_mop = word >> 24 == e->op_mop;
    if (P(e, t, PIPE_LAST_WAS_MOP) && !is_mop)
        cycle += e->mop_exit_penalty;
    P(e, t, PIPE_LAST_WAS_MOP) = is_mop;
    P(e, t, PIPE_WORDS_HEAD) = 0;
    P(e, t, PIPE_WORDS_END) = count;
    e->mop_busy[t] = is_mop && count;
    P(e, t, PIPE_NEXT_ISSUE) = cycle;
    return cycle;
}

/* events.state_word: the semaphores (4 bits each) and who holds each Src bank. */
static int64_t state_word(const struct copro_view *v)
{
    int64_t word = 0;
    for (int i = 0; i < 8; i++)
        word |= (int64_t)(v->sem_value[i] & 15) << (4 * i);
    for (int k = 0; k < 4; k++)
        word |= (int64_t)(v->src_client[k] & 3) << (32 + 2 * k);
    for (int f = 0; f < 2; f++) {
        word |= (int64_t)(v->matrix_bank[f] & 1) << (40 + f);
        word |= (int64_t)(v->unpacker_bank[f] & 1) << (42 + f);
    }
    return word;
}

/* The trace row of an instruction retiring (Engine._trace_retire), before its block is cleared. Kept
 * out of line: when nobody records, retired() pays one untaken branch. */
static __attribute__((noinline, cold)) void trace_row(struct engine *e, uint32_t t, uint32_t word, int64_t cycle, int64_t cycles)
{
    int64_t *row = e->trace + TR_FIELDS * e->out[OUT_TRACED]++;
    int64_t blocked = P(e, t, PIPE_BLOCKED);
    row[TR_THREAD] = t;
    row[TR_WORD] = word;
    row[TR_CYCLE] = cycle;
    row[TR_CYCLES] = cycles;
    row[TR_BLOCKED_SINCE] = blocked ? P(e, t, PIPE_BLOCKED_SINCE) : -1;
    row[TR_BLOCK] = blocked;
    row[TR_RETRY_AT] = P(e, t, PIPE_RETRY_AT);
    row[TR_SRC_CYCLE] = P(e, t, PIPE_SRC + QE_CYCLE);
    row[TR_SRC_CORE] = P(e, t, PIPE_SRC + QE_CORE);
    row[TR_STATE] = state_word(e->view);
}

/* frontend.tallies.stalls_from: pipe t's head instruction did not go on `cycle`. */
static void stalls_from(struct engine *e, uint32_t t, int64_t cycle)
{
    if (P(e, t, PIPE_STALLED_SINCE) >= 0)
        return;
    int64_t *any = e->unit_stats + 2 * ANY_STALL_ROW, *stalled = e->unit_stats + 2 * STALLED_ROW;
    if (!*stalled)
        any[1] = cycle;
    *stalled |= (int64_t)1 << t;
    P(e, t, PIPE_STALLED_SINCE) = cycle;
}

/* frontend.tallies.stalls_until: pipe t's head instruction goes on `cycle`. */
static void stalls_until(struct engine *e, uint32_t t, int64_t cycle)
{
    if (P(e, t, PIPE_STALLED_SINCE) < 0)
        return;
    P(e, t, PIPE_STALLED_SINCE) = -1;
    int64_t *any = e->unit_stats + 2 * ANY_STALL_ROW, *stalled = e->unit_stats + 2 * STALLED_ROW;
    *stalled &= ~((int64_t)1 << t);
    if (!*stalled)
        any[0] += cycle - any[1];
}

/* frontend.waits.kind_of: what a block of `code` waits for, in the counters' kinds (-1: none). */
static int64_t waiting_kind(const struct engine *e, int64_t code)
{
    if (code < BLOCK_WAIT)
        return -1; /* the vector unit's result hold */
    int64_t why = (code - BLOCK_WAIT) & 0xFF, detail = (code - BLOCK_WAIT) >> 8;
    const struct copro_view *v = e->view;
    switch (why) {
    case WAIT_SRC_NOT_HANDED: /* frontend.waits.matrix_src_kind */
        return v->src_client[v->matrix_bank[0]] != MATRIX_CLIENT_MATRIX_UNIT ? WAITING_SRCA_VALID : WAITING_SRCB_VALID;
    case WAIT_UNPACKER_FETCHING:
        return WAITING_UNPACK;
    case WAIT_UNPACKER_BANK:
        return detail / 2 == 0 ? WAITING_SRCA_CLEAR : WAITING_SRCB_CLEAR;
    case WAIT_STALLWAIT:
        return detail >= 0 && detail < 16 ? e->stallwait_kind[detail] : -1;
    case WAIT_SEMWAIT_ZERO:
        return WAITING_NONZERO_SEM;
    case WAIT_SEMWAIT_FULL:
        return WAITING_NONFULL_SEM;
    case WAIT_MATRIX_BANK:
        return detail == 0 ? WAITING_SRCA_VALID : WAITING_SRCB_VALID;
    default:
        return -1;
    }
}

/* frontend.tallies.waiting: from `cycle`, pipe t's head instruction waits for `kind` (-1: nothing the
 * counters name, or it goes); the cycles of the kind before are counted. */
static void waiting(struct engine *e, uint32_t t, int64_t cycle, int64_t kind)
{
    int64_t old = P(e, t, PIPE_WAITING_KIND);
    if (old < 0 && kind < 0)
        return; /* the common case: an instruction that goes without having waited */
    if (old >= 0)
        P(e, t, PIPE_WAITING + old) += cycle - P(e, t, PIPE_WAITING_SINCE);
    P(e, t, PIPE_WAITING_KIND) = kind;
    P(e, t, PIPE_WAITING_SINCE) = cycle;
}

/* frontend.tallies.waited: the head instruction of pipe t, looked at on `cycle`, waits until `until` for
 * `unit`; only the cycles not counted yet count, and none of a blocked instruction's (its block counts
 * them when it goes). */
static void waited(struct engine *e, uint32_t t, uint8_t unit, int64_t cycle, int64_t until)
{
    stalls_from(e, t, cycle);
    if (P(e, t, PIPE_BLOCKED) && P(e, t, PIPE_BLOCKED_SINCE) >= 0)
        return;
    int64_t start = max64(cycle, P(e, t, PIPE_WAIT_UNTIL));
    if (until > start) {
        P(e, t, PIPE_UNIT_WAITED + unit) += until - start;
        P(e, t, PIPE_WAIT_UNTIL) = until;
    }
}

/* frontend.tallies.math_busy: the matrix or vector unit occupied from `cycle` for `cycles`. */
static void math_busy(struct engine *e, int64_t cycle, int64_t cycles)
{
    int64_t *math = e->unit_stats + 2 * MATH_ROW;
    int64_t end = cycle + cycles, start = max64(cycle, math[1]);
    if (end > start) {
        math[0] += end - start;
        math[1] = end;
    }
}

/* Engine._retired for one instruction. */
static void retired(struct engine *e, uint32_t t, uint32_t word, uint8_t unit, int64_t busy, int64_t cycle,
                    int64_t cycles)
{
    if (e->trace_capacity)
        trace_row(e, t, word, cycle, cycles);
    if (P(e, t, PIPE_BLOCKED) && P(e, t, PIPE_BLOCKED_SINCE) >= 0)
        e->stalls[t][word >> 24] += cycle - P(e, t, PIPE_BLOCKED_SINCE);
    P(e, t, PIPE_BLOCKED_SINCE) = -1;
    P(e, t, PIPE_BLOCKED) = BLOCK_NONE;
    stalls_until(e, t, cycle);
    waiting(e, t, cycle, -1);
    e->unit_stats[2 * unit] += 1;
    e->unit_stats[2 * unit + 1] += cycles;
    P(e, t, PIPE_UNIT_ISSUED + unit)++;
    if (unit == e->matrix_unit || unit == e->sfpu_unit)
        math_busy(e, cycle, cycles);
    P(e, t, PIPE_WORDS_HEAD)++;
    if (!words_left(e, t))
        e->mop_busy[t] = 0;
    P(e, t, PIPE_RETRY_AT) = -1;
    P(e, t, PIPE_NEXT_ISSUE) = cycle + (e->thread_held[unit] ? (cycles > 1 ? cycles : 1) : 1);
    P(e, t, PIPE_ISSUED)++;
    P(e, t, PIPE_LAST_CYCLE) = cycle;
    if (unit == e->sfpu_unit) {
        int holds = OPCODE_OF(word) == OP_SFPSWAP || OPCODE_OF(word) == OP_SFPSHFT2;
        e->view->sfpu_nop_from[0] = holds && cycles > 1 ? cycle + 1 : cycle + cycles;
        e->view->sfpu_nop_from[1] = max64(busy, cycle + cycles);
    }
    e->busy_until[unit] = max64(busy, cycle + cycles);
    P(e, t, PIPE_DONE_CYCLE) = max64(P(e, t, PIPE_DONE_CYCLE), cycle + cycles);
    e->copro[COPRO_VERSION]++;
    e->copro[COPRO_VERSION_CYCLE] = max64(e->copro[COPRO_VERSION_CYCLE], cycle);
    int64_t mask = e->waiters & (WAIT_COPRO | WAIT_THREAD_IDLE(t) | WAIT_MOP_IDLE(t));
    if (mask) {
        e->out[OUT_NOTIFY] |= NOTIFY_RETIRED;
        e->out[OUT_RETIRE_CYCLE] = cycle;
    }
}

/* Until sfpu_float.c provides it, every held-looking case goes to Python. */
__attribute__((weak)) int tsim_sfpu_mad_hold(struct copro_view *v, uint32_t word, int64_t cycle)
{
    (void)v; (void)word; (void)cycle;
    return -1;
}

/* Until matrix_hold.c provides it, every matrix-unit instruction goes to Python. */
__attribute__((weak)) int64_t tsim_matrix_hold(struct copro_view *v, uint32_t word, int64_t cycle)
{
    (void)v; (void)word; (void)cycle;
    return -1;
}

/* The wait gate's vector-unit part for an instruction that passed the sync part: 0 it goes, 1 it is
 * held for an SFPMAD-family result, -1 Python decides (mad_hold would raise: also for a rule an
 * unstalled Wormhole instruction left for this cycle that this one breaks, sfpu_hazard.c). */
static int sfpu_gate(struct engine *e, uint32_t word, int64_t cycle)
{
    if (!tsim_sfpu_hazard_ok(e->view, word, cycle))
        return -1;
    if (cycle >= e->view->mad_ready[0])
        return 0;
    return tsim_sfpu_mad_hold(e->view, word, cycle);
}

/* Coprocessor.gate_release_cycle: the earlier of the sync unit's release and the vector unit's
 * (sfpu.floats.mad_release_cycle), -1 when neither frees it by itself. */
static int64_t gate_release(const struct engine *e, uint32_t t, int64_t cycle)
{
    int64_t sync = tsim_sync_release(e->view, t, cycle), ready = e->view->mad_ready[0];
    int64_t mad = ready >= cycle ? ready : -1;
    if (sync < 0)
        return mad;
    return mad < 0 || sync < mad ? sync : mad;
}

/* Engine._issue's wait-gate branch: blocked with `code` (BLOCK_MAD_HOLD or BLOCK_WAIT + a reason and
 * its detail), retried when the gate releases by itself or the state changes. */
static void block(struct engine *e, uint32_t t, int64_t cycle, int64_t code)
{
    if (!P(e, t, PIPE_BLOCKED))
        P(e, t, PIPE_BLOCKED_SINCE) = cycle;
    stalls_from(e, t, cycle);
    waiting(e, t, cycle, waiting_kind(e, code));
    P(e, t, PIPE_BLOCKED) = code;
    P(e, t, PIPE_BLOCKED_AT) = cycle;
    P(e, t, PIPE_BLOCKED_VERSION) = e->copro[COPRO_VERSION];
    P(e, t, PIPE_RETRY_AT) = gate_release(e, t, cycle + 1);
}

/* Engine._issue's branch for a Wait outcome: blocked until a state change or its until. */
static void block_wait(struct engine *e, uint32_t t, int64_t cycle)
{
    if (!P(e, t, PIPE_BLOCKED))
        P(e, t, PIPE_BLOCKED_SINCE) = cycle;
    stalls_from(e, t, cycle);
    P(e, t, PIPE_BLOCKED) = BLOCK_WAIT + e->view->wait[0] + (e->view->wait[2] << 8);
    waiting(e, t, cycle, waiting_kind(e, P(e, t, PIPE_BLOCKED)));
    P(e, t, PIPE_BLOCKED_AT) = cycle;
    P(e, t, PIPE_BLOCKED_VERSION) = e->copro[COPRO_VERSION];
    P(e, t, PIPE_RETRY_AT) = e->view->wait[1];
}

/* Coprocessor.next_timed_change (regs.next_handover): the earliest Src hand-over due, or -1. */
static int64_t next_timed_change(const struct engine *e)
{
    int64_t due = -1;
    for (int i = 0; i < 4; i++) {
        int64_t at = e->view->src_handover_at[i];
        if (at >= 0 && (due < 0 || at < due))
            due = at;
    }
    return due;
}

int tsim_engine_run(struct engine *e, int64_t horizon)
{
    if (e->out[OUT_PENDING])
        return (int)e->out[OUT_PENDING];
    for (;;) {
        if (e->trace_capacity && e->out[OUT_TRACED] >= e->trace_capacity)
            return RUN_DRAIN; /* a step retires at most one instruction: one free row is enough */
        int best = -1;
        int64_t best_cycle = horizon;
        for (uint32_t t = 0; t < e->threads; t++) {
            int64_t c = ready_cycle(e, t);
            if (c >= 0 && c < best_cycle) {
                best = (int)t;
                best_cycle = c;
            }
        }
        int64_t due = next_timed_change(e);
        if (due >= 0 && due < horizon && (best < 0 || due <= best_cycle))
            return stop(e, RUN_TIMED_CHANGE, 0, due);
        if (best < 0) {
            /* Engine.reached: the work SFPLOADMACRO scheduled runs too (all of it at the end of a run);
             * where this engine stops, Python's settle goes on. */
            if (sfpu_macro_pending(e->view) && !sfpu_macro_settle(e->view, horizon < NEVER ? horizon - 1 : -1))
                return RUN_HORIZON; /* Engine.reached settles on (it may raise) and moves the cycle */
            if (horizon < NEVER && horizon > e->out[OUT_REACHED])
                e->out[OUT_REACHED] = horizon;
            return RUN_HORIZON;
        }
        uint32_t t = (uint32_t)best;
        int64_t cycle = best_cycle;
        if (P(e, t, PIPE_BLOCKED) == BLOCK_PYTHON)
            return stop(e, RUN_ISSUE, t, cycle);
        if (!words_left(e, t)) {
            /* A take that needs Python leaves everything as it was. After a native take whose first
             * word needs Python, Python issues that word at the cycle returned, as Engine._issue
             * would have gone on to do. */
            cycle = take(e, t, cycle);
            if (cycle < 0 && e->out[OUT_GROW]) {
                e->out[OUT_PIPE] = t;
                return RUN_GROW; /* Python makes room for the expansion and runs again */
            }
            if (cycle < 0)
                return stop(e, RUN_ISSUE, t, best_cycle);
            if (!words_left(e, t)) {
                P(e, t, PIPE_NEXT_ISSUE) = cycle + 1;
                if (e->out[OUT_NOTIFY])
                    return stop(e, RUN_NOTIFY, t, cycle);
                continue;
            }
        }
        uint32_t word = e->words[t][P(e, t, PIPE_WORDS_HEAD)];
        uint8_t unit = e->unit_of[word >> 24];
        if (unit == NO_UNIT)
            return stop(e, RUN_ISSUE, t, cycle);
        int64_t busy = e->busy_until[unit], free = free_for(e, word, unit);
        if (free > cycle) {
            P(e, t, PIPE_NEXT_ISSUE) = free;
            waited(e, t, unit, cycle, free);
            if (e->out[OUT_NOTIFY])
                return stop(e, RUN_NOTIFY, t, cycle);
            continue;
        }
        if (unit == e->matrix_unit) {
            /* Engine._issue: the matrix unit may hold its instruction after a data move. */
            int64_t held = tsim_matrix_hold(e->view, word, cycle);
            if (held < 0)
                return stop(e, RUN_ISSUE, t, cycle);
            if (held > 0) {
                P(e, t, PIPE_NEXT_ISSUE) = held;
                waited(e, t, unit, cycle, held);
                if (e->out[OUT_NOTIFY])
                    return stop(e, RUN_NOTIFY, t, cycle);
                continue;
            }
        }
        /* The gate has work with a wait latched, and for an ATGETM (it records what the ATGETM wants). */
        if (e->view->sync_gate_kind[t] || OPCODE_OF(word) == OP_ATGETM) {
            int64_t detail = 0;
            int why = tsim_sync_gate(e->view, t, word, cycle, &detail);
            if (why < 0)
                return stop(e, RUN_ISSUE, t, cycle);
            if (why) {
                block(e, t, cycle, BLOCK_WAIT + why + (detail << 8));
                if (e->out[OUT_NOTIFY])
                    return stop(e, RUN_NOTIFY, t, cycle); /* from this step's take */
                continue;
            }
        }
        if (unit == e->sfpu_unit) {
            int hold = sfpu_gate(e, word, cycle);
            if (hold < 0)
                return stop(e, RUN_ISSUE, t, cycle);
            if (hold) {
                block(e, t, cycle, BLOCK_MAD_HOLD);
                if (e->out[OUT_NOTIFY])
                    return stop(e, RUN_NOTIFY, t, cycle); /* from this step's take */
                continue;
            }
        }
        int64_t cycles = tsim_native_op(e->view, t, word, cycle);
        if (cycles == NATIVE_DEFER)
            return stop(e, RUN_ISSUE, t, cycle);
        if (cycles == NATIVE_WAIT) {
            block_wait(e, t, cycle);
            if (e->out[OUT_NOTIFY])
                return stop(e, RUN_NOTIFY, t, cycle); /* from this step's take */
            continue;
        }
        retired(e, t, word, unit, busy, cycle, cycles);
        e->out[OUT_NATIVE]++;
        if (e->view->l1_written[0] >= 0)
            e->out[OUT_NOTIFY] |= NOTIFY_L1; /* Python tells the tile (Tile.coprocessor_wrote_l1) */
        if (e->out[OUT_NOTIFY])
            return stop(e, RUN_NOTIFY, t, cycle);
    }
}

/* A core pushes `word` into `pipe`'s queue at `cycle` (from the RISC-V hooks, without Python). A full
 * queue first lets the engine run up to the push (never past `horizon`, where another core may act),
 * as Tile.push does; still full, the core waits for the pipe to take an entry and pushes the cycle
 * after, as Tile.push's stall and the wake-up that ends it have it (looking at most PUSH_LOOKAHEAD
 * cycles ahead). *accepted: the cycle the push was taken at. 0: Python must take this push (the engine
 * needs it for a step, or no room in time). */
enum { PUSH_LOOKAHEAD = 256 };
/* frontend.capture.InputQueue.takes: a push from `core` at `cycle` enters queue `q` now. */
static int queue_takes(const struct engine *e, const int64_t *q, uint32_t core, int64_t cycle)
{
    if (q[QUEUE_COUNT] <= e->queue_accept)
        return 1;
    return q[QUEUE_LAST_CORE] == (int64_t)core && q[QUEUE_LAST_CYCLE] == cycle && q[QUEUE_COUNT] < e->queue_depth;
}

int tsim_engine_push(struct engine *e, uint32_t pipe, uint32_t word, uint32_t pc, int64_t cycle, uint32_t core,
                     uint32_t inline_word, int64_t horizon, int64_t *accepted)
{
    if (pipe >= e->threads)
        return 0;
    int64_t *q = e->queue_ctl[pipe];
    if (!queue_takes(e, q, core, cycle)) {
        if (tsim_engine_run(e, cycle < horizon ? cycle : horizon) != RUN_HORIZON)
            return 0;
        /* Another core waits for room too: Python wakes it, in order, before this push retries (a
         * look ahead would run the engine past this push's cycle first). */
        if (!queue_takes(e, q, core, cycle) && (e->waiters & WAIT_QUEUE(pipe)))
            return 0;
        for (int64_t t = cycle + 1; !queue_takes(e, q, core, cycle); t++) {
            if (t > horizon || t > cycle + PUSH_LOOKAHEAD || tsim_engine_run(e, t) != RUN_HORIZON)
                return 0;
            if (queue_takes(e, q, core, t))
                cycle = t; /* the pipe took an entry at t - 1 */
        }
    }
    if (q[QUEUE_COUNT] >= q[QUEUE_CAPACITY])
        return 0;
    int64_t *row = e->queue[pipe] + ((q[QUEUE_HEAD] + q[QUEUE_COUNT]) & (q[QUEUE_CAPACITY] - 1)) * QE_FIELDS;
    row[QE_WORD] = word;
    row[QE_PC] = pc;
    row[QE_CYCLE] = cycle;
    row[QE_CORE] = core;
    row[QE_INLINE] = inline_word;
    q[QUEUE_COUNT]++;
    q[QUEUE_LAST_CORE] = core;
    q[QUEUE_LAST_CYCLE] = cycle;
    *accepted = cycle;
    return 1;
}

uint64_t tsim_engine_size(void) { return sizeof(struct engine); }
uint64_t tsim_engine_layout(void)
{
    return UNIT_COUNT * 1000000 + PIPE_FIELDS * 10000 + QUEUE_FIELDS * 100 + HISTORY_FIELDS;
}
