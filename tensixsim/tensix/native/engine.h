/* The native pipe engine's shared state: field indices of the int64 arrays Python and C both use
 * (mirrored in tensixsim/tensix/native/__init__.py; tsim_engine_layout lets Python check them). */
#ifndef TENSIXSIM_ENGINE_H
#define TENSIXSIM_ENGINE_H
#include <stdint.h>

#include "copro.h"

enum { MAX_THREADS = 3, NO_UNIT = 255, OPCODES = 256 };
/* isa.spec.UNITS: unit_stats has a row each, then MATH_ROW (frontend.tallies.MATH_ROW): the cycles the
 * matrix or vector unit was occupied and the end of the latest, for the FPU bank's MATH counter;
 * ANY_STALL_ROW: the cycles some pipe was stalled, and since when the pipes now stalled have been;
 * STALLED_ROW: a bit per pipe now stalled. */
enum { UNIT_COUNT = 10, MATH_ROW = UNIT_COUNT, ANY_STALL_ROW = MATH_ROW + 1, STALLED_ROW = ANY_STALL_ROW + 1 };
/* What a blocked instruction waits for, as the wait-reason counters name it (frontend.waits.KINDS). */
enum {
    WAITING_THCON, WAITING_UNPACK, WAITING_PACK, WAITING_MATH, WAITING_NONZERO_SEM, WAITING_NONFULL_SEM,
    WAITING_MOVE, WAITING_MMIO, WAITING_SFPU, WAITING_SRCA_CLEAR, WAITING_SRCB_CLEAR, WAITING_SRCA_VALID,
    WAITING_SRCB_VALID, WAITING_KINDS
};
/* PIPE_BLOCKED: why the head instruction waits. A Python block is retried by Python; the engine
 * retries its own: the vector unit's hold for an SFPMAD-family result, and BLOCK_WAIT + a handler's
 * wait reason + 256 * its detail (copro.h NATIVE_WAIT; PIPE_RETRY_AT holds its until). */
enum { BLOCK_NONE, BLOCK_PYTHON, BLOCK_MAD_HOLD, BLOCK_WAIT = 16 };

/* One queue entry (frontend.capture.PushedInstruction), a row of QE_FIELDS int64. */
enum { QE_WORD, QE_PC, QE_CYCLE, QE_CORE, QE_INLINE, QE_FIELDS };

/* Per pipe (frontend.pipes.Pipe); PIPE_SRC.. holds its source entry (QE_CORE -1: none). Then, for
 * the performance counters, per unit: instructions issued to it and cycles the head instruction
 * waited for it; the end of the latest such wait; the cycle from which its head instruction has not
 * gone, -1 none; per wait kind, the cycles it was blocked on one; the kind it is blocked on now (-1
 * none) and since when (frontend.tallies). */
enum {
    PIPE_NEXT_ISSUE, PIPE_BLOCKED, PIPE_BLOCKED_AT, PIPE_BLOCKED_VERSION, PIPE_RETRY_AT,
    PIPE_LAST_WAS_MOP, PIPE_ISSUED, PIPE_LAST_CYCLE, PIPE_DONE_CYCLE, PIPE_BLOCKED_SINCE,
    PIPE_WORDS_HEAD, PIPE_WORDS_END, PIPE_WORDS_CAPACITY, PIPE_SRC,
    PIPE_UNIT_ISSUED = PIPE_SRC + QE_FIELDS,
    PIPE_UNIT_WAITED = PIPE_UNIT_ISSUED + UNIT_COUNT,
    PIPE_WAIT_UNTIL = PIPE_UNIT_WAITED + UNIT_COUNT,
    PIPE_STALLED_SINCE,
    PIPE_WAITING,
    PIPE_WAITING_KIND = PIPE_WAITING + WAITING_KINDS,
    PIPE_WAITING_SINCE,
    PIPE_FIELDS
};

/* Per input queue: a ring of QE rows; capacity is a power of two, head only grows. The core index and
 * cycle of the latest push (-1: none) tell a fused group's later words
 * (frontend.capture.InputQueue.takes). */
enum { QUEUE_HEAD, QUEUE_COUNT, QUEUE_CAPACITY, QUEUE_LAST_CORE, QUEUE_LAST_CYCLE, QUEUE_FIELDS };
/* Per history: rows of (cycle taken, QE fields). */
enum { HISTORY_COUNT, HISTORY_CAPACITY, HISTORY_RECORD, HISTORY_FIELDS };

enum { COPRO_VERSION, COPRO_VERSION_CYCLE, COPRO_FIELDS };

/* Who is waiting on what (Python sets these before each run): a step that would wake them stops. */
#define WAIT_COPRO ((int64_t)1)
#define WAIT_QUEUE(t) ((int64_t)2 << (3 * (t)))
#define WAIT_THREAD_IDLE(t) ((int64_t)4 << (3 * (t)))
#define WAIT_MOP_IDLE(t) ((int64_t)8 << (3 * (t)))

/* Why tsim_engine_run returned. */
enum {
    RUN_HORIZON,      /* nothing more can issue before the horizon */
    RUN_ISSUE,        /* Python issues pipe out[OUT_PIPE] at out[OUT_CYCLE] (Engine._issue) */
    RUN_TIMED_CHANGE, /* Python applies the timed changes due at out[OUT_CYCLE] */
    RUN_NOTIFY,       /* a step is done whose notifications may wake a core: Python sends them */
    RUN_GROW,         /* nothing done: pipe out[OUT_PIPE] needs a word buffer of out[OUT_GROW] words */
    RUN_DRAIN,        /* nothing done: Python must take the retired-instruction trace rows first */
};
/* NOTIFY_L1: a native handler wrote L1 (copro_view.l1_written holds the range) */
enum { NOTIFY_QUEUE = 1, NOTIFY_RETIRED = 2, NOTIFY_L1 = 4 };
/* OUT_NATIVE counts the instructions the engine executed itself, over its whole life; OUT_PENDING is
 * the RUN_* code of a step Python has not finished yet (0: none); OUT_REACHED is Engine.cycle;
 * OUT_TRACED the trace rows written since Python last took them. */
enum { OUT_PIPE, OUT_CYCLE, OUT_NOTIFY, OUT_QUEUE_CYCLE, OUT_RETIRE_CYCLE, OUT_NATIVE, OUT_PENDING,
       OUT_REACHED, OUT_GROW, OUT_TRACED, OUT_FIELDS };
/* One trace row per retired instruction (tensixsim/observe/events.py TR_*): what it was, when it issued and
 * how long it held its unit, why it had waited (the pipe's block code, -1 since: it had not), the
 * queue entry it came from, and the observed state after it (events.state_word). */
enum { TR_THREAD, TR_WORD, TR_CYCLE, TR_CYCLES, TR_BLOCKED_SINCE, TR_BLOCK, TR_RETRY_AT, TR_SRC_CYCLE,
       TR_SRC_CORE, TR_STATE, TR_FIELDS };

struct engine {
    struct copro_view *view;
    uint64_t threads;
    int64_t *pipe;                    /* [threads][PIPE_FIELDS] */
    uint32_t *words[MAX_THREADS];     /* each pipe's expanded words, PIPE_WORDS_CAPACITY long */
    int64_t *queue_ctl[MAX_THREADS];  /* [QUEUE_FIELDS] each */
    int64_t *queue[MAX_THREADS];      /* [capacity][QE_FIELDS] */
    int64_t *history_ctl[MAX_THREADS];/* [HISTORY_FIELDS] each */
    int64_t *history[MAX_THREADS];    /* [capacity][1 + QE_FIELDS] */
    int64_t *copro;                   /* [COPRO_FIELDS] */
    int64_t *busy_until;              /* [units] */
    int64_t *unit_stats;              /* [units + 3][2]: instructions, busy cycles; then frontend.tallies' */
    int64_t *stalls[MAX_THREADS];     /* [OPCODES]: cycles each pipe's head instruction stalled */
    uint8_t *unit_of;                 /* [256]: opcode -> unit, NO_UNIT if undefined */
    uint8_t *thread_held;             /* [units] */
    int8_t *stallwait_kind;           /* [16]: the wait kind of each STALLWAIT condition bit, -1 none */
    uint32_t *mop_cfg;                /* frontend.expanders.FrontendState arrays, [threads][...] */
    uint8_t *mop_cfg_written;
    uint32_t *zmask_hi16;
    uint8_t *mop_busy;
    uint32_t *replay_buffer;
    uint8_t *replay_written;
    int32_t *record_slot;
    int32_t *record_left;
    uint8_t *record_exec;
    int64_t *out;                     /* [OUT_FIELDS] */
    int64_t *trace;                   /* [trace_capacity][TR_FIELDS]: one row per retire */
    int64_t trace_capacity;           /* 0: nobody records retired instructions */
    int64_t waiters;
    int64_t queue_depth;              /* entries a queue holds at most */
    int64_t queue_accept;             /* a push enters only while it holds at most this many (or
                                       * continues a fused group) */
    int64_t mop_exit_penalty;
    uint64_t matrix_unit;             /* its instructions go through Python (matrix_hold, fast paths) */
    uint64_t sfpu_unit;               /* its instructions pass the MAD-result hold (sfpu.floats.mad_hold) */
    uint64_t brisc_core;              /* core index whose pushes bypass the MOP expander */
    uint32_t op_mop, op_mop_cfg, op_replay, op_nop;
};

int tsim_engine_run(struct engine *e, int64_t horizon);
int tsim_engine_push(struct engine *e, uint32_t pipe, uint32_t word, uint32_t pc, int64_t cycle, uint32_t core,
                     uint32_t inline_word, int64_t horizon, int64_t *accepted);

#endif
