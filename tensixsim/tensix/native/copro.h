/* The coprocessor state the native engine works on: pointers into the numpy arrays the Python
 * model owns (tensixsim/tensix/native.py fills this struct), so both engines see one state.
 *
 * An instruction handler (ops.c) either executes the instruction and returns the cycles it occupies
 * its unit (>= 1), or returns NATIVE_DEFER having changed nothing: the Python semantics then run it
 * (every error, undocumented mode and rare path stays in Python, which raises the named exception).
 */
#ifndef TENSIXSIM_COPRO_H
#define TENSIXSIM_COPRO_H
#include <stdint.h>

enum { NATIVE_DEFER = 0 };
/* A handler whose instruction must wait (the Python semantics would return Wait) sets view->wait to
 * (reason, until) and returns NATIVE_WAIT having changed nothing else; the engine blocks the pipe as
 * Engine._issue does and retries it natively. The reasons are those of matrix/unit.py and sync.py
 * (frontend.pipes.NATIVE_WAITS rebuilds their text from until and detail); the wait gate's reasons share the
 * numbering. until -1: only a state change lifts it. */
enum { NATIVE_WAIT = -1 };
enum { WAIT_NONE, WAIT_SRC_NOT_HANDED, WAIT_DST_HIDDEN, WAIT_PACK_DST_HIDDEN, WAIT_UNPACKER_FETCHING,
       WAIT_UNPACKER_BANK, WAIT_GATE_LAG, WAIT_STALLWAIT, WAIT_SEMWAIT_ZERO, WAIT_SEMWAIT_FULL, WAIT_MUTEX_HELD,
       WAIT_STREAMWAIT, WAIT_MATRIX_BANK, WAIT_REASONS };
enum { GPR_COUNT = 64, ADC_UNITS = 3, ADC_CHANNELS = 2, ADC_COORDS = 4 };
/* The separate L1 writes one instruction may notify (coprocessor.L1_WRITTEN_RANGES): a PACR's, each
 * packer's data and exponent streams. */
enum { L1_WRITTEN_RANGES = 8 };
/* RWCs[thread], each an array of `threads` uint32 (adc.py AdcState field order). */
enum { RWC_SRCA, RWC_SRCA_CR, RWC_SRCB, RWC_SRCB_CR, RWC_DST, RWC_DST_CR, RWC_FIDELITY, RWC_EXTRA_BIT,
       RWC_FIELDS };

struct copro_view {
    uint64_t threads;
    uint64_t l1_size;
    uint8_t *l1;
    uint32_t *gprs;           /* [threads][GPR_COUNT] (thcon.ThconState.gprs) */
    uint32_t *adc_value;      /* [threads][ADC_UNITS][ADC_CHANNELS][ADC_COORDS] (adc.AdcState.value) */
    uint32_t *adc_cr;         /* same shape (adc.AdcState.cr) */
    uint32_t *rwc[RWC_FIELDS];/* each [threads] */
    uint32_t *config;         /* [2][config_words] (config.unit.ConfigState.config) */
    uint16_t *thread_config;  /* [threads][thread_config_words] (config.unit.ConfigState.thread) */
    uint64_t config_words;
    uint64_t thread_config_words;
    uint8_t *sync_gate_kind;  /* [threads] (sync.SyncState.gate_kind): nonzero = a wait is latched */
    /* The vector unit (sfpu.unit.SfpuState; bool arrays are uint8) */
    uint32_t *lreg;           /* [17][32] */
    uint8_t *lane_flags;      /* [32] */
    uint8_t *use_lane_flags;  /* [32] */
    uint8_t *flag_stack;      /* [32][8][2] */
    uint8_t *stack_depth;     /* [32] */
    uint32_t *lane_config;    /* [32] */
    uint32_t *sfpu_sp;        /* [threads] */
    uint32_t *prng;           /* [32] */
    int64_t *mad_ready;       /* [1] */
    uint8_t *mad_seen;        /* [17] */
    uint8_t *mad_wrote;       /* [17] */
    int64_t *sfpu_nop_from;   /* [2]: from when an SFPNOP can issue, for which unit clock (sfpu/lanes.py) */
    uint32_t *macro_template; /* [32][4] */
    uint32_t *macro_sequence; /* [32][4] */
    uint32_t *macro_misc;     /* [32] */
    int64_t *macro_pending;   /* [slots][columns] (sfpu/macro.py) */
    int64_t *macro_clock;     /* [columns] (sfpu/macro.py) */
    int64_t *hazard;          /* [4] (Wormhole's sfpu/hazards.py: AT, NO_READ, NO_WRITE, KIND) */
    int64_t *shfl_vc;         /* [32] (Wormhole's SFPSHFT2: the LReg[VC] lanes SHFLROR1 last read) */
    /* The register files (regs.RegFiles) */
    uint32_t *srca;           /* [2][64][16] */
    uint32_t *srcb;           /* [2][64][16] */
    uint8_t *src_client;      /* [2][2] */
    uint8_t *matrix_bank;     /* [2] */
    uint8_t *unpacker_bank;   /* [2] */
    uint16_t *dst;            /* [1024][16] */
    uint8_t *dst_row_valid;   /* [1024] */
    int64_t *dst_ready;       /* [128] */
    int64_t *dst_sfpu_ready;  /* [128] */
    int64_t *src_handover_at; /* [2][2]: cycle a Src bank reaches the matrix unit, -1 none */
    int64_t *move_hold;       /* [2]: the matrix unit's hold after a data move (matrix.moves.HOLDS) */
    int64_t *srca_row_latch;  /* [1]: the SrcA row address last computed (SHIFTXA), -1 unknown */
    int64_t *wait;            /* [3]: (reason, until, detail) of the last NATIVE_WAIT */
    /* The packer (pack.stream.PackState; Wormhole's PackersState: one row per packer) */
    int64_t *pack_stream;     /* [packers][PACK_STREAM_WORDS]: stream addresses, NeedsNewAddress, pending counts */
    uint8_t *pack_buffer;     /* [packers][2][16]: the data and exponent streams' pending bytes */
    /* [L1_WRITTEN_RANGES][3] (Coprocessor.l1_written): lo, hi, cycle of each L1 write a handler made
     * directly, rows filled in order (lo < 0: no more), for Python to notify the tile of one by one
     * (Tile.coprocessor_wrote_l1), then reset to {-1, 0, 0} */
    int64_t *l1_written;
    /* The unpackers (regs.RegFiles.unpacker_src_row; unpack.fetch.UnpackState, per unpacker [2]) */
    uint32_t *unpacker_src_row;   /* [2][threads]: SrcRow[thread] of each unpacker */
    uint8_t *context_counter;     /* [2][threads] */
    int64_t *unpack_end;          /* first cycle the unpacker has nothing in flight */
    int64_t *unpack_anchor;       /* its fetch: `left` bytes at cycle `anchor`... */
    int64_t *unpack_left;
    int8_t *unpack_want;          /* ...at speed `shared_speed` until `shared_until`, then `want` */
    int64_t *unpack_shared_until;
    int8_t *unpack_shared_speed;
    int8_t *unpack_thread;        /* the pipe that issued it, -1 none */
    int64_t *unpack_fetches;      /* run statistics */
    int64_t *unpack_fetch_cycles;
    int64_t *unpack_rate;         /* (1,): bytes a cycle at x1 */
    int64_t *unpack_thread_cycles; /* [2][threads]: fetch cycles by the pipe whose UNPACR fetches */
    /* The pipes' bookkeeping (frontend.pipes.Engine.state, [pipe_count][pipe_fields]), NULL when the tile
     * has no pipe engine: an UNPACR keeps its pipe busy until its fetch ends, a PACR until the packer
     * drains (done cycle). */
    int64_t *pipe_state;
    uint64_t pipe_count;
    uint64_t pipe_fields;
    uint64_t pipe_done_field;
    /* The sync unit (sync.SyncState; gate_kind is sync_gate_kind above) and the units' busy clocks */
    uint8_t *sem_value;           /* [8] */
    uint8_t *sem_max;             /* [8] */
    uint16_t *gate_block;         /* [threads] */
    uint16_t *gate_conditions;    /* [threads] */
    uint8_t *gate_sems;           /* [threads] */
    uint8_t *gate_stream_select;  /* [threads] */
    uint32_t *gate_target;        /* [threads] */
    int64_t *gate_cycle;          /* [threads] */
    int64_t *unit_clock;          /* [isa units] (Coprocessor.unit_clock: busy until) */
    /* The mutexes (sync.SyncState), NULL when their shapes are not [SYNC_MUTEX_SLOTS] and [threads]:
     * ATGETM and ATRELM defer then */
    int8_t *mutex_owner;          /* [SYNC_MUTEX_SLOTS]: holding thread, or SYNC_NOBODY */
    int8_t *mutex_wanted;         /* [threads]: the mutex an ATGETM at the gate tries to take */
    /* The tile's stream registers (streams.Streams.values, [stream_count][STREAMS_STORED_COUNT]), NULL
     * when the tile's streams are not a plain Streams: STREAMWAIT defers, its gate lets Python decide */
    uint32_t *stream_values;
    uint64_t stream_count;
    /* [SCHED_FIELDS] (sfpu.h): set while sfpu_macro.c runs an instruction SFPLOADMACRO scheduled (its
     * operand overrides, Context.scheduled / vb / vc in Python); SCHED_ON 0 for an issued one */
    int64_t *sched;
};

/* Return NATIVE_WAIT for `reason`, lifting by itself at `until` (-1: never by itself); `detail`
 * (0 <= detail < 2^55: the engine keeps it shifted left 8 in an int64) completes the reason's text
 * (an unpacker, a Src file and bank, a mutex and its owner). */
static inline int64_t native_wait(struct copro_view *v, int64_t reason, int64_t until, int64_t detail)
{
    v->wait[0] = reason;
    v->wait[1] = until;
    v->wait[2] = detail;
    return NATIVE_WAIT;
}

/* Coprocessor.extend_done without telling the tile: pipe `thread` has work in a unit until `cycle`. */
static inline void extend_done(struct copro_view *v, int64_t thread, int64_t cycle)
{
    if (!v->pipe_state || thread < 0 || (uint64_t)thread >= v->pipe_count)
        return;
    int64_t *done = &v->pipe_state[(uint64_t)thread * v->pipe_fields + v->pipe_done_field];
    if (cycle > *done)
        *done = cycle;
}

/* Execute `word` (opcode in bits 31..24) for `thread` at `cycle`; cycles >= 1, NATIVE_DEFER or
 * NATIVE_WAIT. */
int64_t tsim_native_op(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

#endif
