/* The sync unit (tensixsim/tensix/sync.py): semaphores, the latching wait instructions STALLWAIT and
 * SEMWAIT, and the wait gate that holds a thread's instructions while its latched wait is unmet.
 *
 * The gate is evaluated by the engine before an instruction issues (Engine._issue's gate_blocks); a
 * held instruction blocks with a reason (copro.h WAIT_*) whose detail rebuilds sync.py's text, and
 * retries by itself when gate release says so. STREAMWAIT (a stream register of the tile) and the
 * mutexes stay with Python.
 */
#include "ops.h"
#include "sync.h"

static const uint16_t block_bits[256] = SYNC_BLOCK_BITS_INIT;

/* sync.STALLWAIT_CONDITIONS as what each tests (gen_fields._sync_constants). */
struct condition {
    uint8_t kind, index, waits_while;
};
static const struct condition conditions[SYNC_CONDITION_COUNT] = SYNC_CONDITIONS_INIT;

enum { SRC_BANKS = 2 };

/* Coprocessor.busy_end for the unit a condition names. */
static int64_t busy_end(const struct copro_view *v, const struct condition *c)
{
    return c->kind == SYNC_COND_UNPACKER ? v->unpack_end[c->index & 1] : v->unit_clock[c->index];
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
        if (c->kind == SYNC_COND_UNIT || c->kind == SYNC_COND_UNPACKER) {
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

static int unmet(const struct copro_view *v, uint32_t t, int64_t at, int64_t *detail)
{
    uint32_t kind = v->sync_gate_kind[t], conds = v->gate_conditions[t];
    if (kind == LATCH_STALLWAIT)
        return stallwait_unmet(v, conds, at, detail);
    if (kind == LATCH_SEMWAIT)
        return semwait_unmet(v, conds, v->gate_sems[t], detail);
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
    if (kind == LATCH_NONE)
        return 0;
    if (kind != LATCH_STALLWAIT && kind != LATCH_SEMWAIT)
        return -1;
    int why = unmet(v, t, cycle - 1, detail);
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
        return 0; /* latched, but this instruction is not one it blocks */
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
        if (conds >> bit & 1 && (c->kind == SYNC_COND_UNIT || c->kind == SYNC_COND_UNPACKER)) {
            int64_t free = busy_end(v, c) + 1; /* tested at the previous cycle */
            earliest = free > earliest ? free : earliest;
        }
    }
    return earliest;
}

/* ------------------------------------------------------------------------------ instructions */

/* sync._latch */
static int64_t latch(struct copro_view *v, uint32_t t, uint32_t kind, uint32_t block, uint32_t conds, uint32_t sems,
                     int64_t cycle)
{
    v->sync_gate_kind[t] = (uint8_t)kind;
    v->gate_block[t] = (uint16_t)(block ? block : SYNC_DEFAULT_BLOCK);
    v->gate_conditions[t] = (uint16_t)conds;
    v->gate_sems[t] = (uint8_t)sems;
    v->gate_stream_select[t] = 0;
    v->gate_target[t] = 0;
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
        return latch(v, thread, LATCH_STALLWAIT, block, SYNC_DEFAULT_CONDITIONS, 0, cycle);
    return latch(v, thread, LATCH_SEMWAIT, block, cond, sel, cycle);
}

int64_t sync_stallwait(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t res = F_STALLWAIT_WAIT_RES(word);
    if (res >> SYNC_STALLWAIT_CONDITION_BITS)
        return NATIVE_DEFER;
    return latch(v, thread, LATCH_STALLWAIT, F_STALLWAIT_STALL_RES(word), res ? res : SYNC_DEFAULT_CONDITIONS, 0,
                 cycle);
}
