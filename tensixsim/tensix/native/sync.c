/* The sync unit (tensixsim/tensix/sync.py): semaphores, mutexes, the latching wait instructions
 * STALLWAIT, SEMWAIT and STREAMWAIT, and the wait gate that holds a thread's instructions while its
 * latched wait is unmet.
 *
 * The gate is evaluated by the engine before an instruction issues (Engine._issue's gate_blocks); a
 * held instruction blocks with a reason (copro.h WAIT_*) whose detail rebuilds sync.py's text, and
 * retries by itself when gate release says so. The gate also records the mutex an ATGETM passing it
 * tries to take, which ATRELM's hand-over reads. A stream register is read natively only from a plain
 * streams.Streams (copro.h stream_values); any other streams object is Python's to read.
 */
#include "ops.h"
#include "sync.h"

static const uint16_t block_bits[256] = SYNC_BLOCK_BITS_INIT;

/* sync.STALLWAIT_CONDITIONS as what each tests (gen/sync.py, _sync_constants). */
struct condition {
    uint8_t kind, index, waits_while;
};
static const struct condition conditions[SYNC_CONDITION_COUNT] = SYNC_CONDITIONS_INIT;

#ifdef OP_STREAMWAIT /* (an architecture without STREAMWAIT latches no stream condition) */
/* sync._STREAM_CONDITIONS: the stream register each STREAMWAIT condition reads, and the ThreadConfig
 * field holding its target's high bits. */
struct stream_condition {
    uint32_t reg, high_reg, high_shift, high_mask;
};
static const struct stream_condition stream_conditions[SYNC_STREAM_CONDITION_COUNT] = SYNC_STREAM_CONDITIONS_INIT;
/* ThreadConfig STREAM_ID_SYNC_SEC<n>_BankSel: the stream a STREAMWAIT with wait_stream_sel n tests. */
struct thread_field {
    uint32_t reg, shift, mask;
};
static const struct thread_field stream_ids[1u << SYNC_STREAM_SELECT_BITS] = SYNC_STREAM_ID_INIT;
static const uint32_t streams_stored[STREAMS_STORED_COUNT] = STREAMS_STORED_INIT;
#endif

/* STREAMWAIT's gate detail: condition in bit 0, stream in bits 1..8, value and target DETAIL_BITS each
 * above (frontend.pipes.NATIVE_WAITS unpacks it): 1 + 8 + 2 * 23 bits fit the detail's 55. */
enum { STREAM_DETAIL_BITS = 23 };

enum { SRC_BANKS = 2 };

/* Coprocessor.busy_end for the unit a condition names. */
static int64_t busy_end(const struct copro_view *v, const struct condition *c)
{
    return condition_busy_end(v, c->kind, c->index);
}

/* regs.src_valid: the named bank (SrcA/SrcB, the unpackers' or the matrix unit's current one) is the
 * matrix unit's. */
static int src_valid(const struct copro_view *v, uint32_t which)
{
    uint32_t file = (which >> 1) & 1;
    const uint8_t *current = which & 1 ? v->matrix_bank : v->unpacker_bank;
    uint32_t bank = current[file];
    if (bank >= SRC_BANKS)
        return -1; /* not a bank: Python decides */
    return v->src_client[file * SRC_BANKS + bank] == MATRIX_CLIENT_MATRIX_UNIT;
}

/* sync._unmet at cycle `at`: 0 met, else the wait reason with its detail; -1 Python decides. Only the
 * STALLWAIT conditions in `only` are tested. */
static int stallwait_unmet(const struct copro_view *v, uint32_t conds, int64_t at, int64_t *detail)
{
    for (uint32_t bit = 0; bit < SYNC_CONDITION_COUNT; bit++) {
        if (!(conds >> bit & 1))
            continue;
        const struct condition *c = &conditions[bit];
        int unmet = 0;
        if (busy_condition(c->kind)) {
            unmet = busy_end(v, c) > at;
        } else if (c->kind == SYNC_COND_SRC) {
            int valid = src_valid(v, c->index);
            if (valid < 0)
                return -1;
            unmet = valid == c->waits_while;
        }
        if (unmet) {
            *detail = bit;
            return WAIT_STALLWAIT;
        }
    }
    return 0;
}

static int semwait_unmet(const struct copro_view *v, uint32_t conds, uint32_t sems, int64_t *detail)
{
    for (uint32_t i = 0; i < SYNC_SEMAPHORES; i++) {
        if (!(sems >> i & 1))
            continue;
        uint32_t value = v->sem_value[i], top = v->sem_max[i];
        if ((conds & 1) && value == 0) {
            *detail = i;
            return WAIT_SEMWAIT_ZERO;
        }
        if ((conds & 2) && value >= top) {
            *detail = i | value << 4 | top << 8;
            return WAIT_SEMWAIT_FULL;
        }
    }
    return 0;
}

#ifdef OP_STREAMWAIT
/* config.thread_field for a field of one ThreadConfig register; -1 beyond the array. */
static int64_t thread_field(const struct copro_view *v, uint32_t t, uint32_t reg, uint32_t shift, uint32_t mask)
{
    if (reg >= v->thread_config_words)
        return -1;
    return (v->thread_config[(uint64_t)t * v->thread_config_words + reg] >> shift) & mask;
}

/* Streams.read: a register its array holds, else 0 (unmodelled registers read 0 there too); -1 when
 * Python must read it (no plain Streams, or a stream beyond the array, where Python's indexing raises). */
static int stream_read(const struct copro_view *v, int64_t stream, uint32_t reg, uint32_t *value)
{
    if (!v->stream_values)
        return -1;
    for (uint32_t i = 0; i < STREAMS_STORED_COUNT; i++) {
        if (streams_stored[i] != reg)
            continue;
        if (stream < 0 || (uint64_t)stream >= v->stream_count)
            return -1;
        *value = v->stream_values[(uint64_t)stream * STREAMS_STORED_COUNT + i];
        return 0;
    }
    *value = 0;
    return 0;
}

/* sync._streamwait_unmet (stream registers have no time, so `at` plays no part). */
static int streamwait_unmet(const struct copro_view *v, uint32_t t, int64_t *detail)
{
    uint32_t conds = v->gate_conditions[t], select = v->gate_stream_select[t];
    /* STREAMWAIT latches one condition bit; Python indexes by the highest set bit, so a mask it did
     * not latch (none, or several) is left to it, as is a select no STREAM_ID_SYNC_SEC field has. */
    if (!conds || conds & (conds - 1) || select >= 1u << SYNC_STREAM_SELECT_BITS)
        return -1;
    uint32_t which = (uint32_t)__builtin_ctz(conds);
    if (which >= SYNC_STREAM_CONDITION_COUNT)
        return -1;
    const struct thread_field *id = &stream_ids[select];
    int64_t stream = thread_field(v, t, id->reg, id->shift, id->mask);
    uint32_t value;
    if (stream < 0 || stream_read(v, stream, stream_conditions[which].reg, &value) < 0)
        return -1;
    uint64_t target = v->gate_target[t];
    if (value >= target)
        return 0;
    if (target >> STREAM_DETAIL_BITS || stream >> 8)
        return -1; /* the text would not fit the detail (a target STREAMWAIT cannot latch) */
    *detail = (int64_t)(which | (uint64_t)stream << 1 | (uint64_t)value << 9 | target << (9 + STREAM_DETAIL_BITS));
    return WAIT_STREAMWAIT;
}
#endif

static int unmet(const struct copro_view *v, uint32_t t, int64_t at, int64_t *detail)
{
    uint32_t kind = v->sync_gate_kind[t], conds = v->gate_conditions[t];
    if (kind == LATCH_STALLWAIT)
        return stallwait_unmet(v, conds, at, detail);
    if (kind == LATCH_SEMWAIT)
        return semwait_unmet(v, conds, v->gate_sems[t], detail);
#ifdef OP_STREAMWAIT
    if (kind == LATCH_STREAMWAIT)
        return streamwait_unmet(v, t, detail);
#endif
    return -1;
}

/* sync._forget */
static void forget(struct copro_view *v, uint32_t t)
{
    v->sync_gate_kind[t] = LATCH_NONE;
    v->gate_block[t] = 0;
    v->gate_conditions[t] = 0;
    v->gate_sems[t] = 0;
    v->gate_stream_select[t] = 0;
    v->gate_target[t] = 0;
}

int tsim_sync_gate(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle, int64_t *detail)
{
    uint32_t kind = v->sync_gate_kind[t];
    int atgetm = OPCODE_OF(word) == OP_ATGETM;
    if (atgetm && !v->mutex_wanted)
        return -1; /* before any change: Python records what this ATGETM wants */
    int why = 0;
    if (kind != LATCH_NONE) {
        why = unmet(v, t, cycle - 1, detail);
        if (why < 0)
            return -1;
        if (cycle <= v->gate_cycle[t] + 1) {
            if (!why) { /* the documented lag: the instruction right after the wait is held a cycle */
                why = WAIT_GATE_LAG;
                *detail = kind;
            }
        } else if (!why) {
            forget(v, t);
        }
        if (why && !(block_bits[word >> 24] & v->gate_block[t]))
            why = 0; /* latched, but this instruction is not one it blocks */
    }
    uint32_t index = F_ATGETM_MUTEX_INDEX(word);
#ifdef TSIM_MUTANT_ATGETM_GATE
    /* A deliberately broken build (tests/test_native_engine.py shows the lockstep check catches it):
     * the gate never records what an ATGETM wants. */
    atgetm = 0;
#endif
    if (!why && atgetm && index < SYNC_MUTEX_SLOTS)
        v->mutex_wanted[t] = (int8_t)index; /* now trying to take it: ATRELM's hand-over looks here */
    return why;
}

int64_t tsim_sync_release(const struct copro_view *v, uint32_t t, int64_t cycle)
{
    uint32_t kind = v->sync_gate_kind[t], conds = v->gate_conditions[t];
    int64_t detail, earliest = cycle > v->gate_cycle[t] + 2 ? cycle : v->gate_cycle[t] + 2;
    if (kind == LATCH_NONE)
        return -1;
    if (kind != LATCH_STALLWAIT)
        return unmet(v, t, cycle, &detail) == 0 ? earliest : -1;
    uint32_t src = 0;
    for (uint32_t bit = 0; bit < SYNC_CONDITION_COUNT; bit++)
        if (conditions[bit].kind == SYNC_COND_SRC)
            src |= 1u << bit;
    if (stallwait_unmet(v, conds & src, cycle, &detail) != 0)
        return -1;
    for (uint32_t bit = 0; bit < SYNC_CONDITION_COUNT; bit++) {
        const struct condition *c = &conditions[bit];
        if (conds >> bit & 1 && busy_condition(c->kind)) {
            int64_t free = busy_end(v, c) + 1; /* tested at the previous cycle */
            earliest = free > earliest ? free : earliest;
        }
    }
    return earliest;
}

/* ------------------------------------------------------------------------------ instructions */

/* sync._latch */
struct latched {
    uint32_t kind, block, conds, sems, stream_select, target;
};

static int64_t latch(struct copro_view *v, uint32_t t, struct latched l, int64_t cycle)
{
    v->sync_gate_kind[t] = (uint8_t)l.kind;
    v->gate_block[t] = (uint16_t)(l.block ? l.block : SYNC_DEFAULT_BLOCK);
    v->gate_conditions[t] = (uint16_t)l.conds;
    v->gate_sems[t] = (uint8_t)l.sems;
    v->gate_stream_select[t] = (uint8_t)l.stream_select;
    v->gate_target[t] = l.target;
    v->gate_cycle[t] = cycle;
    return TIMING_SYNC_SYNC;
}

int64_t sync_seminit(struct copro_view *v, uint32_t thread, uint32_t word)
{
    (void)thread;
    uint32_t sel = F_SEMINIT_SEM_SEL(word);
    if (sel >> SYNC_SEM_MASK_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior: wider than the documented mask */
    for (uint32_t i = 0; i < SYNC_SEMAPHORES; i++)
        if (sel >> i & 1) {
            v->sem_value[i] = (uint8_t)F_SEMINIT_INIT_VALUE(word);
            v->sem_max[i] = (uint8_t)F_SEMINIT_MAX_VALUE(word);
        }
    return TIMING_SYNC_SYNC;
}

/* SEMPOST (+1, saturating at SYNC_SEM_LIMIT) and SEMGET (-1, stopping at 0) on the selected semaphores. */
static int64_t sem_step(struct copro_view *v, uint32_t sel, int post)
{
    if (sel >> SYNC_SEM_MASK_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior: wider than the documented mask */
    for (uint32_t i = 0; i < SYNC_SEMAPHORES; i++) {
        if (!(sel >> i & 1))
            continue;
        if (post && v->sem_value[i] < SYNC_SEM_LIMIT)
            v->sem_value[i]++;
        else if (!post && v->sem_value[i] > 0)
            v->sem_value[i]--;
    }
    return TIMING_SYNC_SYNC;
}

int64_t sync_sempost(struct copro_view *v, uint32_t thread, uint32_t word)
{
    (void)thread;
    return sem_step(v, F_SEMPOST_SEM_SEL(word), 1);
}

int64_t sync_semget(struct copro_view *v, uint32_t thread, uint32_t word)
{
    (void)thread;
    return sem_step(v, F_SEMGET_SEM_SEL(word), 0);
}

int64_t sync_semwait(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t sel = F_SEMWAIT_SEM_SEL(word), cond = F_SEMWAIT_WAIT_SEM_COND(word), block = F_SEMWAIT_STALL_RES(word);
    if (sel >> SYNC_SEM_MASK_BITS)
        return NATIVE_DEFER;
    if (!cond) /* no semaphore condition: a STALLWAIT on C0..C3, the semaphore mask dropped */
        return latch(v, thread, (struct latched){LATCH_STALLWAIT, block, SYNC_DEFAULT_CONDITIONS, 0, 0, 0}, cycle);
    return latch(v, thread, (struct latched){LATCH_SEMWAIT, block, cond, sel, 0, 0}, cycle);
}

int64_t sync_stallwait(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t res = F_STALLWAIT_WAIT_RES(word);
    if (res >> SYNC_STALLWAIT_CONDITION_BITS)
        return NATIVE_DEFER;
    uint32_t conds = res ? res : SYNC_DEFAULT_CONDITIONS;
    return latch(v, thread, (struct latched){LATCH_STALLWAIT, F_STALLWAIT_STALL_RES(word), conds, 0, 0, 0}, cycle);
}

#ifdef OP_STREAMWAIT
int64_t sync_streamwait(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t value = F_STREAMWAIT_TARGET_VALUE(word), sel = F_STREAMWAIT_TARGET_SEL(word);
    uint32_t stream_sel = F_STREAMWAIT_WAIT_STREAM_SEL(word);
    if (value >> SYNC_STREAM_TARGET_BITS || stream_sel >> SYNC_STREAM_SELECT_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior: wider than the documented operand */
    if (!v->stream_values || sel >= SYNC_STREAM_CONDITION_COUNT)
        return NATIVE_DEFER; /* streams Python reads (or lacks), a condition it does not know */
    const struct stream_condition *c = &stream_conditions[sel];
    /* The target's high bits are read now; the stream number when the gate tests the condition. */
    int64_t high = thread_field(v, thread, c->high_reg, c->high_shift, c->high_mask);
    if (high < 0)
        return NATIVE_DEFER;
    uint32_t target = (uint32_t)high << SYNC_STREAM_TARGET_BITS | value;
    return latch(v, thread, (struct latched){LATCH_STREAMWAIT, F_STREAMWAIT_STALL_RES(word), 1u << sel, 0, stream_sel,
                                             target},
                 cycle);
}
#endif

/* ------------------------------------------------------------------------------ mutexes */

/* sync._check_mutex: only the architecture's mutexes exist (any other index raises InvalidProgram in
 * Python, where the hardware would wait forever); without the mutex arrays Python runs it too. */
static int mutex_native(const struct copro_view *v, uint32_t index)
{
    return index < SYNC_MUTEX_SLOTS && (SYNC_MUTEX_VALID >> index & 1) && v->mutex_owner && v->mutex_wanted;
}

int64_t sync_atgetm(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t index = F_ATGETM_MUTEX_INDEX(word);
    if (!mutex_native(v, index))
        return NATIVE_DEFER;
    int owner = v->mutex_owner[index];
    if (owner != SYNC_NOBODY && owner != (int)thread) /* detail: the mutex, the owner as a byte */
        return native_wait(v, WAIT_MUTEX_HELD, -1, index | (uint32_t)(uint8_t)owner << 8);
    /* Taking a mutex the thread already holds succeeds too. */
    v->mutex_owner[index] = (int8_t)thread;
    v->mutex_wanted[thread] = SYNC_NOBODY;
    return TIMING_SYNC_SYNC;
}

int64_t sync_atrelm(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t index = F_ATRELM_MUTEX_INDEX(word);
    if (!mutex_native(v, index))
        return NATIVE_DEFER;
    if (v->mutex_owner[index] != (int)thread)
        return TIMING_SYNC_SYNC; /* documented: completes and changes nothing */
    /* Round-robin hand-over from thread + 1 among the threads whose ATGETM is at the gate for it. */
    v->mutex_owner[index] = SYNC_NOBODY;
    for (uint64_t step = 1; step < v->threads; step++) {
        uint32_t other = (uint32_t)((thread + step) % v->threads);
        if (v->mutex_wanted[other] == (int)index) {
            v->mutex_owner[index] = (int8_t)other;
            break;
        }
    }
    return TIMING_SYNC_SYNC;
}
