/* Native Unicorn hooks for tensixsim's baby cores.
 *
 * A Python hook costs about 1 us per call; these run on every translated block and on every memory
 * access, so they are C. They only record facts and stop emulation; all decisions stay in Python.
 * Function pointers to uc_emu_stop/uc_reg_read/uc_reg_write/uc_mem_read are passed in from Python
 * so this file needs no Unicorn headers or link step.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*uc_stop_fn)(void *uc);
typedef int (*uc_reg_fn)(void *uc, int regid, void *value);
typedef int (*uc_mem_read_fn)(void *uc, uint64_t addr, void *buf, uint64_t size);
typedef void (*py_intr_fn)(void *uc, uint32_t intno, void *user);
typedef void (*refresh_fn)(void);
/* tsim_engine_push of the coprocessor engine (tensix/native/engine.c): 1 when it took the push
 * (*accepted: at which cycle, later than asked when the queue was full). */
typedef int (*engine_push_fn)(void *engine, uint32_t pipe, uint32_t word, uint32_t pc, int64_t cycle,
                              uint32_t core, uint32_t inline_word, int64_t horizon, int64_t *accepted);

enum { STOP_NONE = 0, STOP_LIMIT = 1, STOP_MISALIGNED = 2, STOP_SPIN = 3, STOP_PUSH = 4, STOP_HOLE = 5, STOP_SYNC = 6,
       STOP_WATCH = 7 };
enum { PUSH_RING = 256, PUSH_PORTS = 3 };

/* A Tensix instruction taken by the hooks while its pipe's queue had room (see push_free). */
struct push_entry {
    uint32_t word;
    uint32_t pc;
    int32_t done;   /* its cycle, relative to the slice's start: below zero for a word fused with
                     * words pushed at the end of the slice before */
    uint32_t pipe;  /* bit 8: pushed inline (an instruction word) rather than by a store */
};
enum { REG_X0 = 1, REG_PC = 190 }; /* Unicorn's UC_RISCV_REG_* numbering */
enum { MEM_WRITE = 17 };           /* UC_MEM_WRITE */
enum { PROBE_READS = 64 };         /* loads recorded while probing a loop (more: not a poll loop) */
enum { LOOP_BLOCKS = 8 };          /* longest loop (in blocks) checked for polling */
enum { MEM_LOG = 64 };             /* accesses of one block remembered for the timing walk */
enum { SLOTS = 8, STORE_QUEUE = 8, TIMED_REGIONS = 32 };
enum { ROB_MAX = 16 };            /* retire-order queue entries the walk can model */
enum { DIV_LOG = 64 };            /* divides of one block whose operands the code hook saw */
enum { BLOCK_CACHE = 2048 };      /* blocks remembered as simple or not (direct-mapped) */
enum { HISTORY = 16 };            /* blocks remembered with their cycles; at least LOOP_BLOCKS + 1 */
enum { BHT = 256 };                /* branch counters of the frontend's predictor (direct-mapped) */
enum { L0_MAX = 4 };               /* L0 data cache entries at most (P_L0_LINES) */
/* What the L0 data cache did for one access (core_hooks.l0_log): the walk times it accordingly. */
enum { L0_PASSED = 0, L0_MISS = 1, L0_HIT = 2, L0_HIT_FLUSH = 3 };
#define SYNC_NEVER ((int64_t)1 << 62) /* tensix/frontend/pipes.py NEVER: no other core running */
#define NOC_SHARER 0x80u /* riscv/native.py NOC: the NoC writes the page */
/* The timing figures, in the order of native.py's TIMING_PARAMS (filled from tensixsim/timing.py). */
enum {
    P_L1_LATENCY, P_L1_SLOTS, P_L1_OCCUPANCY, P_L1_STORE_DRAIN,
    P_LOCAL_LATENCY, P_LOCAL_STORE_VISIBLE,
    P_REMOTE_LATENCY, P_REMOTE_SLOTS, P_REMOTE_OCCUPANCY,
    P_MUL_LATENCY, P_DIV_MIN, P_DIV_FAST, P_ATOMIC_LATENCY, P_CSR, P_STORE_QUEUE,
    P_MMIO_READ, P_MMIO_WRITE, P_TENSIX_PUSH, P_PORT_CYCLES, P_PORT_ATOMIC,
    P_FENCE, P_STORE_DONE, P_RETIRE_QUEUE, P_L1_STORE_CONFLICT, P_MISPREDICT, P_MUL_HOLD,
    P_L1_COALESCE, P_L0_LINES, P_L0_HIT, P_L0_FLUSH,
    P_COUNT
};

struct core_hooks {
    uint64_t icount;      /* instructions in the blocks entered since the counter was cleared */
    uint64_t limit;       /* stop before entering a block once icount reaches this */
    uint64_t block_addr;  /* the block entered last */
    uint64_t block_size;
    uint64_t stop_reason;
    uint64_t fault_addr, fault_size, fault_pc, fault_write;
    uint64_t fault_old;   /* bytes a misaligned store overwrote, or the old rd of a misaligned load */
    uint64_t fault_rd;
    uint64_t mmio_pc;     /* pc of the latest access at or above mmio_base (block pcs are not precise) */
    uint64_t mmio_base;
    uint64_t code_base;   /* pages of [code_base, code_base + 4096 * code_pages) are tracked */
    uint64_t code_pages;
    uint64_t new_code_page; /* set when a tracked page is executed for the first time */
    uint64_t loop_head;     /* a block that keeps coming back within LOOP_BLOCKS blocks */
    uint64_t since_head;    /* blocks entered since loop_head was last entered */
    uint64_t repeat;        /* how often loop_head came back */
    uint64_t repeat_start;  /* icount when loop_head was first entered */
    uint64_t spin_threshold;/* stop with STOP_SPIN after this many; Python checks for a poll loop */
    uint64_t spin_reset;    /* spin_threshold for the next loop head (Python lowers it per loop) */
    uc_stop_fn stop;
    uc_reg_fn reg_read;
    uc_reg_fn reg_write;
    uc_mem_read_fn mem_read;
    py_intr_fn py_intr;     /* Python's handler for every trap this file does not handle */
    uint64_t push_free;     /* pushes the hooks may take before asking Python (queue room) */
    uint64_t push_count;    /* entries in push_ring */
    uint64_t inline_pipe;   /* pipe fed by inline Tensix words, or ~0 when this core has none */
    uint64_t push_addr[PUSH_PORTS]; /* store-to-push addresses this core reaches (0: unused) */
    uint64_t push_pipe[PUSH_PORTS];
    uint64_t pending_word;  /* a store-push the hooks could not take (STOP_PUSH) */
    uint64_t pending_pipe;
    uint64_t zba_zbb;       /* nonzero: execute Zba/Zbb here (the architecture has them) */
    uint64_t busy[64];      /* loop heads Python found busy (not polling), direct-mapped by address */
    uint8_t executed[1024]; /* one flag per tracked 4 KiB page */
    struct push_entry push_ring[PUSH_RING];
    /* While `engine` is set, pushes go straight into the native coprocessor engine's queues (it
     * advances itself when a queue is full); Python sets it at slice start and clears it whenever it
     * runs during the slice, since it may then change what the engine's parameters assume. */
    void *engine;
    engine_push_fn engine_push;
    int64_t time_base;      /* the core's cycle at icount 0 */
    int64_t push_horizon;   /* the earliest cycle another running core can act at */
    uint64_t core_index;
    uint64_t engine_pushes; /* pushes the engine took this slice */
    /* Per pipe, the latest cycle this core may push into it: another running core that pushes into
     * the same pipe has not got further (Tile.shared_push_limit); a later push goes to Python. */
    int64_t push_limit[PUSH_PORTS];
    uint64_t pushed_pipes;  /* a bit per pipe this core pushed into (Core.pushed_pipes) */
    /* While `probing`, every load and store is recorded (Core.probe_iteration): what one iteration
     * of a loop reads, whether it writes. */
    uint64_t probing;
    uint64_t probe_wrote;
    uint64_t probe_count;   /* loads seen; only the first PROBE_READS are kept */
    uint64_t probe_addr[PROBE_READS];
    uint64_t probe_size[PROBE_READS];
    int64_t probe_cycle[PROBE_READS]; /* and the cycle each load issued at */
    /* Timing (see walk()): the core's cycle at instruction d of the slice is
     * time_base + d + extra + stall, where stall is what the walk added for the instructions before
     * d. Everything below `extra` persists across slices; its cycles are absolute. */
    int64_t extra;          /* cycles Python charged in this slice (Core.charge) */
    int64_t stall;          /* cycles the walk added in this slice */
    uint64_t walk_done;     /* instructions of this slice the walk has accounted */
    int64_t repeat_cycle;   /* the cycle loop_head was first entered at */
    uint64_t mem_n;         /* accesses logged in the current block */
    uint64_t mem_used;      /* of which the walk has consumed */
    uint64_t mem_addr[MEM_LOG];
    int64_t ready[32];      /* cycle each register's value is available */
    int64_t l1_slot[SLOTS]; /* cycle each L1 read slot frees */
    int64_t remote_slot[SLOTS];
    uint64_t l1_head, remote_head;
    int64_t sq_visible[STORE_QUEUE]; /* store queue: cycle each entry has left it */
    uint64_t sq_word[STORE_QUEUE];   /* the word it holds (loads of it wait), or its 16-byte block's */
    uint64_t sq_last[STORE_QUEUE];   /* address of the last store coalesced into it */
    uint64_t sq_mask[STORE_QUEUE];   /* bytes of its 16-byte block written (L1 entries) */
    int64_t sq_done[STORE_QUEUE];    /* cycle its last store has been performed */
    uint64_t sq_head;
    int64_t l1_write_free;  /* the cycle the store queue can next emit an L1 write */
    int64_t responses;      /* cycle every earlier load and atomic has its response */
    int64_t stores_done;    /* cycle every earlier store has been performed (what a fence waits for) */
    /* Retire-order queue: retire cycle of the last P_RETIRE_QUEUE instructions (a ring), of the
     * latest instruction, and per register of its latest and previous writers. */
    int64_t rob[ROB_MAX];
    uint64_t rob_pos;
    int64_t last_retire;
    int64_t reg_retire[32];
    int64_t reg_prev_retire[32];
    /* Divides: EX1 cycles of each divide of the current block, logged by the code hook as it
     * runs (the cost depends on the operands), consumed in order by the walk. */
    int64_t div_log[DIV_LOG];
    uint64_t div_n, div_used;
    uint64_t watch_key[BLOCK_CACHE];  /* blocks known to hold no watched instruction without its hook */
    /* L1 access port: this core's round-robin share of it (see port_grant). port_share is the number
     * of cores of its port out of reset, set by Python; port_free the cycle the core's next turn is. */
    int64_t port_free;
    int64_t port_share;
    const uint32_t *l1;     /* code is fetched from here when it lies in L1 */
    uint64_t l1_size;
    uint64_t local_base, local_size, alias_lo, alias_hi;
    uint64_t timed_count;   /* MMIO windows with their own costs */
    uint64_t timed_lo[TIMED_REGIONS], timed_hi[TIMED_REGIONS];
    int64_t timed_read[TIMED_REGIONS], timed_write[TIMED_REGIONS];
    int64_t param[P_COUNT];
    int64_t ready_max;      /* no register is ready later than this */
    struct block_info *blocks; /* BLOCK_CACHE blocks the fast path knows (tsim_alloc_blocks) */
    /* The last HISTORY blocks entered and their cycles: a loop recognised late (its head is found
     * only LOOP_BLOCKS blocks after the previous head) is dated from its first iteration. */
    uint64_t history_addr[HISTORY];
    int64_t history_cycle[HISTORY];
    uint64_t history_pos;
    /* An unmapped range inside a mapped page (the rest of the page holding a local RAM smaller than
     * a page): an access there stops with STOP_HOLE, undone like a misaligned one. */
    uint64_t hole_lo, hole_size;
    /* L1 between cores (see l1_sync_stop): an L1 load, store or atomic is performed only at a cycle
     * no other running core is behind (Tile.sync_limit), so every core sees the others' L1 stores
     * in cycle order, whatever the quantum. sync_limit holds while sync_valid is set: Python clears
     * it whenever it runs (it may wake a core) and sync_refresh fills it in again. */
    int64_t sync_limit;
    uint64_t sync_valid;
    refresh_fn sync_refresh;
    uint64_t fault_mem;     /* the bytes a sync-stopped store or atomic overwrites */
    int64_t fault_cycle;    /* and the cycle it would have issued at (the core cannot act before) */
    /* While probing, a load past sync_limit is let through (probe_unsynced) so that a poll loop can
     * be parked however close the other cores are; Python undoes the probe iteration when the loop
     * is not parked. To be undoable the iteration may not have done anything else lasting: a load
     * past the limit after a store or trap (probe_strict) stops as usual, and a store or trap after
     * such a load stops the probe. */
    uint64_t probe_unsynced;
    uint64_t probe_strict;
    /* The slice resumes where a synchronisation point stopped the last one, inside a block already
     * counted when it was entered: its first block (the rest of that one) is not counted again for
     * loop recognition, so a loop is recognised by the same head however the other cores'
     * progress cuts it. */
    uint64_t resumed;
    /* L1 ordering by page (page_order set): only an access to a page another core has used waits
     * for the other cores. page_sharers (one byte per 4 KiB L1 page, shared by the tile's cores)
     * holds the cores that have accessed each page (bit core_bit), page_owner the first of them;
     * page_private_last the latest cycle of an access made while the owner alone used the page,
     * and per 64-byte line of L1 line_last / line_write the latest cycle of such an access / store.
     * order_late[0] counts another core's accesses at or before the cycle of such an access that
     * conflicts with them (a load of a line stored to, or a store to a line accessed): their order
     * may not have been kept (see unordered_before). */
    uint64_t page_order;
    uint8_t *page_sharers;
    int64_t *page_private_last;
    int64_t *order_late;
    uint64_t core_bit;
    uint8_t *page_owner;
    int64_t *line_last;
    int64_t *line_write;
    /* A page the NoC writes has NOC_SHARER set in page_sharers: no core's access to it passes
     * noc_limit, the cycle before the NoC's next write into this tile's L1 (the NoC acts first at
     * its cycle) and before any write a request another core may yet make could land
     * (Tile.noc_sync_limit); SYNC_NEVER when nothing can. */
    int64_t noc_limit;
    /* page_writers: per L1 page, the cores that have stored to it (a bit each, as page_sharers). A
     * loop that loads a page only this core uses and has never stored to (a flag another core or
     * the NoC will write, most likely) is checked for polling after private_spin iterations, as a
     * loop reading a register is: parked early, it is woken exactly by the first write another
     * core makes to the page, which it could otherwise have run past. */
    uint8_t *page_writers;
    uint64_t private_spin;
    /* Whether a block record or watch_key has been set since the last forget of everything: a tile
     * forgets all code at each run, and most of those forgets find nothing to clear. */
    uint64_t blocks_known;
    /* The frontend's branch predictor: a two-bit counter per conditional branch (by its address),
     * predicting taken from 2 up (see predict). */
    uint8_t bht[BHT];
    /* The core's configuration CSRs (riscv/csrs.py, CsrFile.apply_timing): cfg0 as written, and
     * whether pmacfg0 or pmacfg1 makes every load and store strongly ordered. */
    uint64_t cfg0;
    uint64_t strong_order;
    /* .ttinsn fusion (a TRISC with cfg0 DisTriscCache clear, set by Python): up to four adjacent
     * inline Tensix words issue in one cycle (PushTensixInstruction.md). fuse_next is the address a
     * word must have to join the group the last word started or joined, fuse_count the group's
     * words so far, fuse_cycle its cycle. */
    uint64_t fusion;
    uint64_t fuse_next;
    uint64_t fuse_count;
    int64_t fuse_cycle;
    /* The L0 data cache between the core and L1 (BabyRISCV README, "L0 Data Cache": P_L0_LINES
     * 16-byte lines, none on Wormhole), in use while cfg0 DisLowCash is clear. It is seen twice:
     * - as the core's loads meet it, in program order: the memory hook decides each L1 load's hit
     *   or miss on l0_tag (each entry's line number + 1, 0: empty, the most recently used first),
     *   a hit answering with the entry's l0_data (L1's bytes when it was filled: the cache is not
     *   coherent), a miss asking L1 and filling; a `fence` (its code hook) or an atomic flushes it,
     *   a store drops its line, and l0_rng, the generator of the periodic flush (l0_chance), draws
     *   on every hit. The hook logs what it did per access in l0_log;
     * - as the walk times it, behind execution: l0_line and l0_ready (the cycle each entry's data
     *   arrives) replay the logged decisions by the same rules. */
    uint64_t l0_line[L0_MAX];
    int64_t l0_ready[L0_MAX];
    uint64_t l0_rng;
    uint64_t l0_tag[L0_MAX];
    uint8_t l0_data[L0_MAX][16];
    uint8_t l0_log[MEM_LOG];
    /* A hit on bytes L1 no longer holds: the hook lent the load the entry's bytes by writing them
     * into L1, and puts L1's own back (l0_restore) first thing in every hook and when emulation
     * returns, before anything else can look at L1. l0_lent is the address + 1 (0: none). */
    uint64_t l0_lent;
    uint64_t l0_lent_size;
    uint64_t l0_lent_bytes;
};

/* cfg0 fields the walk reads (tensixsim/arch/blackhole_csrs.py, CSRs.md). */
#define CFG0_DIS_LD_BUF_BYP (1u << 0)
#define CFG0_DIS_BP (1u << 1)
#define CFG0_DIS_LOW_CASH (1u << 3)
#define CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH (1u << 24)
#define CFG0_SYNC_ALL_OPS (1u << 9)
#define CFG0_DIS_CSR_SYNC (1u << 10)
#define CFG0_DIS_ST_MERGE (1u << 12)
#define CFG0_DIS_REG_FORWARDING (1u << 20)

/* ---------------------------------------------------------------------------------------------
 * Timing walk. Each instruction issues at the later of one cycle after its predecessor and the
 * cycle its source registers are ready; loads, atomics, multiplies and divides make their result
 * ready later, loads wait for a free read slot of their memory, loads of a word still in the
 * store queue wait for that store, fences and atomics wait for the queue to drain. The walk runs
 * behind execution (a block's accesses are logged by the memory hook first) and is exact at every
 * instruction, so cutting a run into slices anywhere gives the same cycles. */

enum { CLASS_L1, CLASS_LOCAL, CLASS_REMOTE, CLASS_MMIO };

static int region_class(const struct core_hooks *h, uint64_t a)
{
    if (a < h->l1_size) return CLASS_L1;
    if (a - h->local_base < h->local_size) return CLASS_LOCAL;
    if (a >= h->alias_lo && a < h->alias_hi) return CLASS_REMOTE;
    return CLASS_MMIO;
}

static int64_t mmio_cost(const struct core_hooks *h, uint64_t a, int write)
{
    for (uint64_t i = 0; i < h->timed_count; i++)
        if (a >= h->timed_lo[i] && a < h->timed_hi[i])
            return write ? h->timed_write[i] : h->timed_read[i];
    return h->param[write ? P_MMIO_WRITE : P_MMIO_READ];
}

static uint32_t fetch_word(void *uc, const struct core_hooks *h, uint64_t pc)
{
    if (pc + 4 <= h->l1_size) return h->l1[pc >> 2];
    uint32_t w = 0;
    h->mem_read(uc, pc, &w, 4);
    return w;
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static uint64_t next_access(struct core_hooks *h)
{
    /* An access the log missed (more than MEM_LOG in a block) is taken to be L1. */
    uint64_t i = h->mem_used++;
    return i < h->mem_n && i < MEM_LOG ? h->mem_addr[i] : 0;
}

/* Waits for a read slot of a memory that keeps `count` reads in flight. */
static int64_t take_slot(int64_t *slot, uint64_t *head, int64_t count, int64_t t, int64_t occupancy)
{
    uint64_t i = *head;
    t = max64(t, slot[i]);
    slot[i] = t + occupancy;
    *head = (i + 1) % (uint64_t)count;
    return t;
}

/* The cycle an L1 request made at `t` gets the core's access port, which it then holds for `cycles`.
 * Round-robin among port_share requesters gives each one turn every port_share turns: the core's own
 * next request waits port_share times as long (exact when every core of the port keeps it busy, an
 * upper bound otherwise, and independent of what the other cores run when: see docs/timing.md). */
static int64_t port_grant(struct core_hooks *h, int64_t t, int64_t cycles, int commit)
{
    int64_t grant = max64(t, h->port_free);
    if (commit) h->port_free = grant + h->port_share * cycles;
    return grant;
}

static int64_t store_wait(const struct core_hooks *h, uint64_t word, int64_t t)
{
    for (int i = 0; i < STORE_QUEUE; i++)
        if (h->sq_word[i] == word && h->sq_visible[i] > t) t = h->sq_visible[i];
    return t;
}

static int64_t queue_drained(const struct core_hooks *h, int64_t t)
{
    for (int i = 0; i < STORE_QUEUE; i++) t = max64(t, h->sq_visible[i]);
    return t;
}

/* The store queue takes a store of `size` bytes at `a` (region class `c`) issued at `t`; returns
 * the cycle the instruction may issue (the queue needs an entry) and sets *block to the cycles the
 * core waits after it (an MMIO store that must complete first). L1 stores coalesce with the rear
 * entry while it is still queued (same 16-byte block, start address within 4 bytes of the rear's
 * last); an L1 entry is emitted as one write in a cycle once its block is whole, else it takes the
 * L1 write path for P_L1_STORE_DRAIN cycles, one such write after another (BabyRISCV README). */
static int64_t store(struct core_hooks *h, uint64_t a, int size, int c, int64_t t, int commit, int64_t *block)
{
    const int64_t *p = h->param;
    uint64_t rear = (h->sq_head + STORE_QUEUE - 1) % STORE_QUEUE;
    uint64_t bytes = ((1ull << size) - 1) << (a & 15);
    *block = 0;
    if (c == CLASS_L1 && p[P_L1_COALESCE] && !(h->cfg0 & CFG0_DIS_ST_MERGE) && h->sq_visible[rear] > t && (h->sq_mask[rear] >> 16) == (a >> 4) + 1 &&
        (a > h->sq_last[rear] ? a - h->sq_last[rear] : h->sq_last[rear] - a) <= 4) {
        if (commit) {
            uint64_t mask = (h->sq_mask[rear] | bytes) & 0xFFFF;
            h->sq_mask[rear] = (h->sq_mask[rear] & ~0xFFFFull) | mask;
            h->sq_last[rear] = a;
            if (mask == 0xFFFF) { /* whole: one cycle on the write path once complete */
                int64_t leave = max64(t + 1, h->sq_visible[rear] - p[P_L1_STORE_DRAIN] + 1);
                if (leave < h->sq_visible[rear]) h->sq_visible[rear] = h->l1_write_free = leave;
            }
            h->stores_done = max64(h->stores_done, t + p[P_STORE_DONE]);
            h->sq_done[rear] = max64(h->sq_done[rear], t + p[P_STORE_DONE]);
        }
        return t;
    }
    uint64_t i = h->sq_head;
    /* Space in the store queue: the oldest of its P_STORE_QUEUE entries must be gone. */
    uint64_t oldest = (i + STORE_QUEUE - (uint64_t)p[P_STORE_QUEUE]) % STORE_QUEUE;
    t = max64(t, h->sq_visible[oldest] - 1);
    int64_t leave;
    if (c == CLASS_L1) {
        /* The store queue hands an L1 store to the port in its turn. */
        int64_t start = max64(t + 1, h->l1_write_free);
        start = max64(start, port_grant(h, t, p[P_PORT_CYCLES], commit) + 1);
        leave = start + (bytes == 0xFFFF ? 1 : p[P_L1_STORE_DRAIN]);
        if (commit) h->l1_write_free = leave;
    } else if (c == CLASS_MMIO) {
        int64_t cost = mmio_cost(h, a, 1);
        *block = cost - 1;
        leave = t + cost;
    } else {
        leave = t + p[P_LOCAL_STORE_VISIBLE];
    }
    if (commit) {
        h->sq_word[i] = a >> 2;
        h->sq_last[i] = a;
        h->sq_mask[i] = c == CLASS_L1 ? ((a >> 4) + 1) << 16 | bytes : 0;
        h->sq_visible[i] = leave;
        h->sq_done[i] = t + p[P_STORE_DONE];
        h->sq_head = (i + 1) % STORE_QUEUE;
        h->stores_done = max64(h->stores_done, t + p[P_STORE_DONE]);
    }
    return t;
}

/* A load (not from L1) of the word at `a` waits while a queued store to the word is in the store
 * queue (the queue is drained up to that store rather than bypassed, BabyRISCV README); returns
 * when it may go. */
static int64_t load_wait(const struct core_hooks *h, uint64_t a, int64_t t)
{
    for (int i = 0; i < STORE_QUEUE; i++)
        if (h->sq_visible[i] > t && h->sq_word[i] == a >> 2) t = h->sq_visible[i];
    return t;
}

/* Whether an L1 read of the word at `a` issuing at `t` overlaps an earlier L1 store not yet
 * performed (`store_done` after its issue), still queued or on its way. Entries that have left the
 * store queue are looked at until they are reused. */
static int store_conflict(const struct core_hooks *h, uint64_t a, int64_t t)
{
    for (int i = 0; i < STORE_QUEUE; i++)
        if (h->sq_done[i] > t && (h->sq_mask[i] >> 16) == (a >> 4) + 1 && (h->sq_mask[i] & (0xFull << (a & 12))))
            return 1;
    return 0;
}

/* Reading register r at t: its latest writer's result must be ready, and it can only be taken from
 * the retire-order queue if no earlier writer of r is still unretired (BabyRISCV README, Retire
 * Unit: with several unretired writers, no forwarding from any of them). */
static inline int64_t source(const struct core_hooks *h, uint32_t r, int64_t t)
{
    if (!r) return t;
    t = max64(t, h->ready[r]);
    if (h->reg_prev_retire[r] >= t) t = h->reg_prev_retire[r] + 1;
    /* cfg0 DisRegForwarding: an operand comes from the register file only, once its writer retired. */
    if ((h->cfg0 & CFG0_DIS_REG_FORWARDING) && h->reg_retire[r] >= t) t = h->reg_retire[r] + 1;
    return t;
}

/* Whether the L0 data cache is in use (there is one, and cfg0 DisLowCash is clear). */
static int l0_on(const struct core_hooks *h)
{
    return h->param[P_L0_LINES] && !(h->cfg0 & CFG0_DIS_LOW_CASH);
}

/* The cache's entries, in either copy: `lines` (l0_line or l0_tag: each entry's line number + 1, 0:
 * empty, the most recently used first) and beside them a payload of `size` bytes an entry (l0_ready
 * or l0_data). The entry holding 16-byte line `line`, or -1. */
static int l0_index(const struct core_hooks *h, const uint64_t *lines, uint64_t line)
{
    for (int i = 0; i < h->param[P_L0_LINES]; i++)
        if (lines[i] == line + 1) return i;
    return -1;
}

/* Entry `i` (a hit's own, or the least recently used one a fill evicts) comes first, holding `line`
 * with its payload as it was. */
static void l0_to_front(uint64_t *lines, void *payload, size_t size, int i, uint64_t line)
{
    uint8_t kept[16];
    uint8_t *bytes = payload;
    memcpy(kept, bytes + (size_t)i * size, size);
    memmove(lines + 1, lines, (size_t)i * sizeof *lines);
    memmove(bytes + size, bytes, (size_t)i * size);
    lines[0] = line + 1;
    memcpy(bytes, kept, size);
}

/* The entry holding `line`, if any, leaves; the ones after it move up. */
static void l0_remove(const struct core_hooks *h, uint64_t *lines, void *payload, size_t size, uint64_t line)
{
    int i = l0_index(h, lines, line), n = (int)h->param[P_L0_LINES];
    if (i < 0) return;
    uint8_t *bytes = payload;
    memmove(lines + i, lines + i + 1, (size_t)(n - 1 - i) * sizeof *lines);
    memmove(bytes + (size_t)i * size, bytes + (size_t)(i + 1) * size, (size_t)(n - 1 - i) * size);
    lines[n - 1] = 0;
}

/* The L0 data cache as the walk times it (l0_line, l0_ready: see struct core_hooks). */
static int l0_find(const struct core_hooks *h, uint64_t line) { return l0_index(h, h->l0_line, line); }

/* Entry `i` comes first, holding `line` from `ready` on. */
static void l0_use(struct core_hooks *h, int i, uint64_t line, int64_t ready)
{
    l0_to_front(h->l0_line, h->l0_ready, sizeof *h->l0_ready, i, line);
    h->l0_ready[0] = ready;
}

/* A store to L1 drops the line it writes (the cache is never dirty). */
static void l0_drop(struct core_hooks *h, uint64_t line)
{
    l0_remove(h, h->l0_line, h->l0_ready, sizeof *h->l0_ready, line);
}

static void l0_flush(struct core_hooks *h)
{
    memset(h->l0_line, 0, sizeof h->l0_line);
}

/* The L0 data cache, as the core's loads meet it (l0_tag, l0_data: the memory hook's side). */
static int l0_held(const struct core_hooks *h, uint64_t line) { return l0_index(h, h->l0_tag, line); }

static void l0_keep(struct core_hooks *h, int i, uint64_t line)
{
    l0_to_front(h->l0_tag, h->l0_data, sizeof h->l0_data[0], i, line);
}

static void l0_release(struct core_hooks *h, uint64_t line)
{
    l0_remove(h, h->l0_tag, h->l0_data, sizeof h->l0_data[0], line);
}

static void l0_release_all(struct core_hooks *h)
{
    memset(h->l0_tag, 0, sizeof h->l0_tag);
}

/* Put back the L1 bytes a hit lent its load (l0_answer). */
static inline void l0_restore(struct core_hooks *h)
{
    if (!h->l0_lent) return;
    memcpy((uint8_t *)h->l1 + h->l0_lent - 1, &h->l0_lent_bytes, h->l0_lent_size);
    h->l0_lent = 0;
}

/* Whether a hit flushes the whole cache ("approximately a 0.8% chance", CSRs.md): one in P_L0_FLUSH,
 * drawn from a xorshift generator of the core's own, so every run draws the same. */
static int l0_chance(struct core_hooks *h)
{
    uint32_t x = (uint32_t)h->l0_rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    h->l0_rng = x;
    return x % (uint32_t)h->param[P_L0_FLUSH] == 0;
}

/* The cycles the instruction after a fence issuing at `t` waits besides: until the fence has retired
 * (unless cfg0 DisCsrSync) and every earlier store has been performed. */
static int64_t fence_hold(const struct core_hooks *h, int64_t t)
{
    int64_t hold = (h->cfg0 & CFG0_DIS_CSR_SYNC) ? 0 : h->param[P_FENCE] - 1;
    return max64(hold, h->stores_done - t);
}

/* pmacfg0/1: a load or store behaves as if a fence were inserted right before it (CSRs.md); the
 * cycle it may issue at, from `t`. */
static int64_t strongly_ordered(const struct core_hooks *h, int64_t t)
{
    int64_t fence = max64(queue_drained(h, t), h->responses);
    return fence + 1 + fence_hold(h, fence);
}

static void private_access(struct core_hooks *h, uint64_t address, int type, int64_t cycle);

/* Account one instruction issuing no earlier than `t`; returns its issue cycle. `commit` 0 only
 * computes it (the log and the scoreboard stay as they are). *after: the cycles the next
 * instruction waits besides (an instruction holding EX1, a fence or CSR access retiring). */
static int64_t step(void *uc, struct core_hooks *h, uint64_t pc, uint32_t w, int64_t t, int commit, int64_t *after)
{
    const int64_t *p = h->param;
    uint32_t op = w & 0x7F, rd = (w >> 7) & 31, rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31;
    uint32_t f3 = (w >> 12) & 7, f7 = w >> 25;
    int64_t latency = 1, block = 0;
    /* An L1 access to a page only this core has used, noted for L1 ordering by page once its
     * issue cycle is known (private_access; -1: none). */
    int64_t noted = -1;
    int noted_type = 0;
    *after = 0;
    if ((w & 3) != 3) { /* a Tensix instruction word */
        *after = p[P_TENSIX_PUSH] - 1;
        /* Fused with the words right before it: issued in their cycle (when nothing held the core
         * up in between). */
        int fused = h->fusion && pc == h->fuse_next && h->fuse_count < 4 && t == h->fuse_cycle + 1;
        if (fused) t = h->fuse_cycle;
        if (commit) {
            h->fuse_count = fused ? h->fuse_count + 1 : 1;
            h->fuse_cycle = t;
            h->fuse_next = pc + 4;
        }
        return t;
    }
    /* An entry of the retire-order queue must be free: the instruction that many places back has
     * retired. */
    uint64_t slot = h->rob_pos; /* (kept below P_RETIRE_QUEUE) */
    t = max64(t, h->rob[slot] + 1);
    switch (op) {
    case 0x33: /* OP: register-register */
        t = source(h, rs2, source(h, rs1, t));
        if (f7 == 1) {
            if (f3 < 4) {
                latency = p[P_MUL_LATENCY];
                block = p[P_MUL_HOLD];
            } else {
                /* A divide holds EX1 for as many cycles as its operands need (the code hook). */
                uint64_t used = h->div_used++;
                if (!commit) h->div_used = used;
                latency = used < h->div_n && used < DIV_LOG ? h->div_log[used] : p[P_DIV_MIN];
                block = latency - 1;
            }
        }
        break;
    case 0x13: case 0x67: /* OP-IMM, JALR */
        t = source(h, rs1, t);
        break;
    case 0x63: /* BRANCH */
        t = source(h, rs2, source(h, rs1, t));
        rd = 0;
        break;
    case 0x03: { /* LOAD */
        t = source(h, rs1, t);
        if (h->strong_order) t = strongly_ordered(h, t);
        /* cfg0 DisLdBufByp: the load waits in EX1 until the store queue is empty. */
        if (h->cfg0 & CFG0_DIS_LD_BUF_BYP) t = queue_drained(h, t);
        uint64_t used = h->mem_used;
        uint64_t a = next_access(h);
        if (!commit) h->mem_used = used;
        int c = region_class(h, a);
        /* What the L0 data cache did for it (the memory hook's decision; an access the log missed
         * passed it by). */
        int l0 = c == CLASS_L1 && used < h->mem_n && used < MEM_LOG ? h->l0_log[used] : L0_PASSED;
        int hit = l0 >= L0_HIT;
        if (c == CLASS_L1 && !hit) noted = (int64_t)a;
        /* An L1 load overlapping a store not yet performed goes on (the queue drains ahead of it)
         * and answers l1_store_conflict later (timing.py); from other memories it waits in EX1
         * until the store has left the queue. */
        int conflict = c == CLASS_L1 && !hit && store_conflict(h, a, t);
        if (c != CLASS_L1) t = load_wait(h, a, t);
        int64_t *slot = c == CLASS_L1 ? h->l1_slot : h->remote_slot;
        uint64_t *head = c == CLASS_L1 ? &h->l1_head : &h->remote_head;
        if (hit) {
            /* An L0 hit answers from the line once its data is in; L1 is not asked. (The line is
             * always found: the walk's lines follow the hook's; an entry the log missed is taken
             * to have been in for long.) */
            int way = l0_find(h, a >> 4);
            int64_t ready = way >= 0 ? h->l0_ready[way] : t;
            latency = max64(p[P_L0_HIT], ready - t);
            if (commit) {
                l0_use(h, way >= 0 ? way : (int)p[P_L0_LINES] - 1, a >> 4, ready);
                if (l0 == L0_HIT_FLUSH) l0_flush(h);
            }
        } else if (c == CLASS_L1 || c == CLASS_REMOTE) {
            int l1 = c == CLASS_L1;
            int64_t count = p[l1 ? P_L1_SLOTS : P_REMOTE_SLOTS];
            int64_t occupancy = p[l1 ? P_L1_OCCUPANCY : P_REMOTE_OCCUPANCY];
            t = max64(t, slot[*head]);
            /* An L1 read waiting for its port keeps its slot and answers that much later. */
            int64_t grant = l1 ? port_grant(h, t, p[P_PORT_CYCLES], commit) : t;
            if (conflict) grant += p[P_L1_STORE_CONFLICT];
            if (commit) take_slot(slot, head, count, grant, occupancy);
            latency = p[l1 ? P_L1_LATENCY : P_REMOTE_LATENCY] + grant - t;
            /* A miss fills the least recently used line. */
            if (commit && l0 == L0_MISS) l0_use(h, (int)p[P_L0_LINES] - 1, a >> 4, t + latency);
        } else if (c == CLASS_LOCAL) {
            latency = p[P_LOCAL_LATENCY];
        } else {
            /* A register read leaves EX1 at once; only an instruction that uses its result waits
             * for the response (BabyRISCV README: load latency by memory region). */
            latency = mmio_cost(h, a, 0);
        }
        if (commit) h->responses = max64(h->responses, t + latency);
        break;
    }
    case 0x23: { /* STORE */
        t = source(h, rs2, source(h, rs1, t));
        if (h->strong_order) t = strongly_ordered(h, t);
        uint64_t used = h->mem_used;
        uint64_t a = next_access(h);
        if (!commit) h->mem_used = used;
        int c = region_class(h, a);
        if (c == CLASS_L1) noted = (int64_t)a, noted_type = MEM_WRITE;
        t = store(h, a, 1 << (f3 & 3), c, t, commit, &block);
        if (commit && c == CLASS_L1) l0_drop(h, a >> 4);
        rd = 0;
        break;
    }
    case 0x2F: { /* AMO: waits for the store queue and every earlier response */
        t = source(h, rs2, source(h, rs1, t));
        t = max64(queue_drained(h, t), h->responses);
        uint64_t used = h->mem_used;
        uint64_t a = next_access(h);
        next_access(h); /* an AMO reads and writes */
        if (!commit) h->mem_used = used;
        if (region_class(h, a) == CLASS_L1) {
            t = port_grant(h, t, p[P_PORT_ATOMIC], commit);
            noted = (int64_t)a, noted_type = MEM_WRITE;
        }
        latency = p[P_ATOMIC_LATENCY];
        if (commit) {
            h->responses = t + latency;
            l0_flush(h); /* an atomic flushes the L0 data cache, as a fence does */
        }
        break;
    }
    case 0x0F: /* FENCE: every earlier load answered, the store queue drained; the next instruction
                * waits until the fence has retired and every earlier store has been performed */
        t = max64(queue_drained(h, t), h->responses);
        block = fence_hold(h, t);
        if (commit) l0_flush(h);
        rd = 0;
        break;
    case 0x73: /* SYSTEM */
        if (f3) {
            t = (f3 & 4) ? t : source(h, rs1, t);
            /* the next instruction waits until it has retired (unless cfg0 DisCsrSync) */
            block = (h->cfg0 & CFG0_DIS_CSR_SYNC) ? 0 : p[P_CSR] - 1;
        } else {
            rd = 0;
        }
        break;
    case 0x37: case 0x17: case 0x6F: /* LUI, AUIPC, JAL */
        break;
    default:
        rd = 0;
        break;
    }
    int64_t retire = max64(t + latency, h->last_retire + 1);
    /* cfg0 SyncAllOps: every instruction holds the next back until it has retired, as a CSR access
     * does (one cycle to retire and P_CSR - 1 more after a one-cycle instruction). */
    if (h->cfg0 & CFG0_SYNC_ALL_OPS) block = max64(block, retire + p[P_CSR] - 2 - t);
    if (commit) {
        if (noted >= 0 && h->page_order && (h->page_sharers[noted >> 12] & ~NOC_SHARER) == h->core_bit)
            private_access(h, (uint64_t)noted, noted_type, t);
        h->rob[slot] = retire;
        h->rob_pos = slot + 1 == (uint64_t)p[P_RETIRE_QUEUE] ? 0 : slot + 1;
        h->last_retire = retire;
        if (rd) {
            h->ready[rd] = t + latency;
            h->ready_max = max64(h->ready_max, t + latency);
            h->reg_prev_retire[rd] = h->reg_retire[rd];
            h->reg_retire[rd] = retire;
        }
    }
    *after += block;
    return t;
}

static int64_t natural(const struct core_hooks *h, uint64_t done)
{
    return h->time_base + (int64_t)done + h->extra + h->stall;
}

/* Whether every instruction of [pc, pc + 4 * n) is a one-cycle ALU operation, branch or jump. */
static int simple_code(void *uc, const struct core_hooks *h, uint64_t pc, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t w = fetch_word(uc, h, pc + 4 * i), op = w & 0x7F;
        if ((w & 3) != 3) return 0;
        if (op == 0x33 && (w >> 25) == 1) return 0;
        if (op != 0x33 && op != 0x13 && op != 0x67 && op != 0x63 && op != 0x37 && op != 0x17 && op != 0x6F)
            return 0;
    }
    return 1;
}

/* What the fast path needs of a block of one-cycle instructions (see walk): its reads and writes. */
enum { SIMPLE_MAX = 1024 }; /* instructions of a block analysed (longer ones are walked) */
struct block_info {
    uint64_t key;          /* address | size << 32 */
    uint16_t simple;       /* 1: one-cycle instructions only (and analysed), 2: not */
    uint16_t min_gap;      /* least k - w over reads at k whose second-latest writer w is in the block */
    uint8_t n_none, n_one, n_written;
    uint8_t none_reg[32], one_reg[32], written_reg[32];
    uint16_t none_k[32];   /* first read of none_reg[i] with no writer before it in the block */
    uint16_t one_k[32];    /* first read of one_reg[i] with exactly one writer before it in the block */
    uint16_t last_w[32];   /* per written_reg[i]: its last writer in the block ... */
    uint16_t prev_w[32];   /* ... and the one before (NONE16: none) */
};
#define NONE16 0xFFFFu

/* Decode the registers a one-cycle instruction reads (r1, r2; 0: none) and writes (rd; 0: none). */
static void simple_registers(uint32_t w, uint32_t *r1, uint32_t *r2, uint32_t *rd)
{
    uint32_t op = w & 0x7F;
    *r1 = *r2 = *rd = 0;
    if (op == 0x33 || op == 0x63) { *r1 = (w >> 15) & 31; *r2 = (w >> 20) & 31; }
    else if (op == 0x13 || op == 0x67) *r1 = (w >> 15) & 31;
    if (op != 0x63) *rd = (w >> 7) & 31;
}

static void analyse_block(void *uc, const struct core_hooks *h, uint64_t pc, uint64_t n, struct block_info *b)
{
    b->simple = n <= SIMPLE_MAX && simple_code(uc, h, pc, n) ? 1 : 2;
    if (b->simple != 1) return;
    uint16_t last[32], prev[32], none_k[32], one_k[32];
    for (int r = 0; r < 32; r++) last[r] = prev[r] = none_k[r] = one_k[r] = NONE16;
    b->min_gap = NONE16;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t r1, r2, rd, reads[2];
        simple_registers(fetch_word(uc, h, pc + 4 * k), &r1, &r2, &rd);
        reads[0] = r1, reads[1] = r2;
        for (int i = 0; i < 2; i++) {
            uint32_t r = reads[i];
            if (!r) continue;
            if (prev[r] != NONE16) {
                if (k - prev[r] < b->min_gap) b->min_gap = (uint16_t)(k - prev[r]);
            } else if (last[r] != NONE16) {
                if (one_k[r] == NONE16) one_k[r] = (uint16_t)k;
            } else if (none_k[r] == NONE16) {
                none_k[r] = (uint16_t)k;
            }
        }
        if (rd) { prev[rd] = last[rd]; last[rd] = (uint16_t)k; }
    }
    b->n_none = b->n_one = b->n_written = 0;
    for (int r = 1; r < 32; r++) {
        if (none_k[r] != NONE16) { b->none_reg[b->n_none] = (uint8_t)r; b->none_k[b->n_none++] = none_k[r]; }
        if (one_k[r] != NONE16) { b->one_reg[b->n_one] = (uint8_t)r; b->one_k[b->n_one++] = one_k[r]; }
        if (last[r] != NONE16) {
            b->written_reg[b->n_written] = (uint8_t)r;
            b->last_w[b->n_written] = last[r];
            b->prev_w[b->n_written++] = prev[r];
        }
    }
}

/* Account a whole block of `len` one-cycle instructions at once, if they issue one a cycle from
 * n = the first's natural cycle: every register ready, and neither the retire-order queue nor the
 * forwarding rule holding any back. Retirement may lag issue (an earlier load held it up): then the
 * block's instructions retire `lag` cycles after their results, one a cycle, and a read whose
 * register has an older unretired writer would wait; the analysis says which reads to check. */
static int fast_block(struct core_hooks *h, const struct block_info *b, int64_t n, uint64_t len)
{
    if (h->ready_max > n) return 0;
    int64_t lag = h->last_retire - n; /* the block's instruction k retires at n + k + 1 + lag */
    if (lag < 0) lag = 0;
    if (lag > h->param[P_RETIRE_QUEUE] - 2) return 0; /* the queue would hold some back */
    if (b->min_gap != NONE16 && (int64_t)b->min_gap < 2 + lag) return 0;
    for (int i = 0; i < b->n_none; i++)
        if (h->reg_prev_retire[b->none_reg[i]] >= n + b->none_k[i]) return 0;
    for (int i = 0; i < b->n_one; i++)
        if (h->reg_retire[b->one_reg[i]] >= n + b->one_k[i]) return 0;
    /* Taken: record their retirement as the walk would have. Their entries of the retire-order
     * queue are left out: an instruction after the block finds an older (earlier) entry in their
     * place, and the block's own would not hold it back either while lag <= P_RETIRE_QUEUE - 2
     * (the instruction k places later issues at n + len + k at the earliest, the block's entry it
     * waits on retires at n + len + k - 7 + lag at the latest). */
    h->last_retire = n + (int64_t)len + lag;
    for (int i = 0; i < b->n_written; i++) {
        uint32_t r = b->written_reg[i];
        int64_t old = h->reg_retire[r];
        h->reg_retire[r] = n + b->last_w[i] + 1 + lag;
        h->reg_prev_retire[r] = b->prev_w[i] == NONE16 ? old : n + b->prev_w[i] + 1 + lag;
    }
    return 1;
}

/* Account the instructions of the current block before instruction index `target`. */
static void walk(void *uc, struct core_hooks *h, uint64_t target)
{
    if (target > h->icount) target = h->icount; /* nothing past the instructions entered */
    if (h->walk_done >= target) return;
    uint64_t end = h->block_addr + h->block_size;
    uint64_t first = h->icount - h->block_size / 4; /* index of the block's first instruction */
    if (h->walk_done == first && target == h->icount && h->ready_max <= natural(h, first) &&
        !(h->cfg0 & (CFG0_SYNC_ALL_OPS | CFG0_DIS_REG_FORWARDING))) {
        /* A whole block of one-cycle instructions that can issue one a cycle (fast_block) is not
         * walked instruction by instruction: the walk remembers which blocks are such (forgotten
         * when their code is rewritten). */
        uint64_t key = h->block_addr | (uint64_t)h->block_size << 32;
        struct block_info *b = &h->blocks[(h->block_addr >> 2) % BLOCK_CACHE];
        if (b->key != key) {
            b->key = key;
            h->blocks_known = 1;
            analyse_block(uc, h, h->block_addr, h->block_size / 4, b);
        }
        if (b->simple == 1 && fast_block(h, b, natural(h, first), h->block_size / 4)) {
            h->walk_done = target;
            return;
        }
    }
    while (h->walk_done < target) {
        uint64_t pc = end - 4 * (h->icount - h->walk_done);
        int64_t n = natural(h, h->walk_done), after;
        int64_t t = step(uc, h, pc, fetch_word(uc, h, pc), n, 1, &after);
        h->stall += t - n + after;
        h->walk_done++;
    }
}

/* Forget what the block cache knows about code in [lo, hi) (it was rewritten). */
void tsim_forget_blocks(struct core_hooks *h, uint64_t lo, uint64_t hi)
{
    if (!h->blocks_known) return;
    if (lo == 0 && hi >= 1ull << 32) h->blocks_known = 0;
    for (int i = 0; i < BLOCK_CACHE; i++) {
        uint64_t a = h->blocks[i].key & 0xFFFFFFFFu, end = a + (h->blocks[i].key >> 32);
        if (a < hi && lo < end) h->blocks[i].key = 0;
        a = h->watch_key[i] & 0xFFFFFFFFu, end = a + (h->watch_key[i] >> 32);
        if (a < hi && lo < end) h->watch_key[i] = 0;
    }
}

static inline int is_divide(uint32_t w)
{
    return (w & 0x7F) == 0x33 && (w >> 25) == 1 && ((w >> 12) & 7) >= 4;
}

/* The instructions the code hook watches as they run: divides (the walk needs their operands) and,
 * where there is an L0 data cache, fences (they flush it in program order). */
static inline int is_watched(const struct core_hooks *h, uint32_t w)
{
    return is_divide(w) || ((w & 0x7F) == 0x0F && h->param[P_L0_LINES]);
}

/* Whether the block at `address` holds a watched instruction the code hook has not been installed
 * for (Python installs it and marks the block in watch_key). */
static int unhooked_watch(void *uc, struct core_hooks *h, uint64_t address, uint32_t size)
{
    uint64_t key = address | (uint64_t)size << 32;
    uint64_t slot = (address >> 2) % BLOCK_CACHE;
    if (h->watch_key[slot] == key) return 0;
    for (uint64_t pc = address; pc < address + size; pc += 4)
        if (is_watched(h, fetch_word(uc, h, pc))) return 1;
    h->watch_key[slot] = key;
    h->blocks_known = 1;
    return 0;
}

/* The cycles a divide holds EX1 (BabyRISCV README): two when dividing by zero or one, or the signed
 * -2^31 by -1; otherwise between P_DIV_MIN and 33, by the magnitude of the dividend (one cycle per
 * significant bit, plus one). */
static int64_t divide_cycles(const struct core_hooks *h, uint32_t f3, uint32_t a, uint32_t b)
{
    int is_signed = !(f3 & 1); /* div, rem */
    if (b <= 1 || (is_signed && a == 0x80000000u && b == 0xFFFFFFFFu)) return h->param[P_DIV_FAST];
    uint32_t magnitude = is_signed && (int32_t)a < 0 ? 0u - a : a;
    int64_t bits = magnitude ? 32 - __builtin_clz(magnitude) : 0;
    return max64(h->param[P_DIV_MIN], bits + 1);
}

/* UC_HOOK_CODE on one watched instruction, called before it runs: a fence flushes the L0 data
 * cache; a divide's EX1 cycles are logged for the walk. */
void tsim_code_hook(void *uc, uint64_t address, uint32_t size, struct core_hooks *h)
{
    (void)size;
    l0_restore(h);
    uint32_t w = fetch_word(uc, h, address);
    if ((w & 0x7F) == 0x0F) {
        l0_release_all(h);
        return;
    }
    if (!is_divide(w)) return; /* the code there was rewritten */
    uint32_t a = 0, b = 0, rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31;
    if (rs1) h->reg_read(uc, REG_X0 + (int)rs1, &a);
    if (rs2) h->reg_read(uc, REG_X0 + (int)rs2, &b);
    if (h->div_n < DIV_LOG) h->div_log[h->div_n] = divide_cycles(h, (w >> 12) & 7, a, b);
    h->div_n++;
}

/* The instruction index of `pc`, in the current block. */
static inline uint64_t index_of(const struct core_hooks *h, uint64_t pc)
{
    return h->icount - (h->block_addr + h->block_size - pc) / 4;
}

/* The cycle at which the instruction at `pc` (in the current block) issues. */
int64_t tsim_time_at(void *uc, struct core_hooks *h, uint64_t pc)
{
    if (pc < h->block_addr || pc > h->block_addr + h->block_size)
        return natural(h, h->walk_done); /* not in the current block (a faulting access) */
    uint64_t d = index_of(h, pc);
    walk(uc, h, d);
    int64_t after;
    return step(uc, h, pc, fetch_word(uc, h, pc), natural(h, d), 0, &after);
}

/* The cycle after the last accounted instruction of the slice, everything up to index `done`
 * accounted. */
int64_t tsim_time_after(void *uc, struct core_hooks *h, uint64_t done)
{
    walk(uc, h, done);
    return natural(h, done);
}

/* Move every timing record by `delta` cycles (a parked loop's skipped or undone iterations). */
void tsim_shift_timing(struct core_hooks *h, int64_t delta)
{
    for (int i = 1; i < 32; i++) h->ready[i] += delta;
    h->ready_max += delta;
    for (int i = 0; i < SLOTS; i++) { h->l1_slot[i] += delta; h->remote_slot[i] += delta; }
    for (int i = 0; i < STORE_QUEUE; i++) { h->sq_visible[i] += delta; h->sq_done[i] += delta; }
    h->l1_write_free += delta;
    h->responses += delta;
    h->stores_done += delta;
    for (int i = 0; i < ROB_MAX; i++) h->rob[i] += delta;
    h->last_retire += delta;
    for (int i = 0; i < 32; i++) { h->reg_retire[i] += delta; h->reg_prev_retire[i] += delta; }
    h->port_free += delta;
    h->fuse_cycle += delta;
    for (int i = 0; i < L0_MAX; i++) h->l0_ready[i] += delta;
    for (int i = 0; i < HISTORY; i++) h->history_cycle[i] += delta;
}

/* The cycle `address` was first entered at among the last LOOP_BLOCKS + 1 blocks (`now`: not
 * among them); *repeats: how often it was entered right before (a loop of that one block). */
static int64_t first_entry(const struct core_hooks *h, uint64_t address, int64_t now, uint64_t *repeats)
{
    int64_t first = now;
    uint64_t n = h->history_pos < LOOP_BLOCKS + 1 ? h->history_pos : LOOP_BLOCKS + 1;
    int tight = 1;
    *repeats = 0;
    for (uint64_t i = 1; i <= n; i++) {
        uint64_t j = (h->history_pos - i) % HISTORY;
        if (h->history_addr[j] == address) {
            first = h->history_cycle[j];
            if (tight) ++*repeats;
        } else {
            tight = 0;
        }
    }
    return first;
}

/* When the block just left ends in a conditional branch (Unicorn ends a block at one), the core
 * went on at `next`: when the branch's counter said otherwise, the frontend fetched the wrong way
 * and the next instruction issues P_MISPREDICT cycles late (BabyRISCV README: "a mispredicted branch causes a
 * four cycle pipeline bubble"). The predictor itself is not documented: a counter per branch that
 * each outcome moves one step towards itself is the simplest that learns a loop. */
static void predict(void *uc, struct core_hooks *h, uint64_t next)
{
    uint64_t pc = h->block_addr + h->block_size - 4;
    uint32_t op = fetch_word(uc, h, pc) & 0x7F;
    if (h->cfg0 & CFG0_DIS_BP) {
        /* cfg0 DisBp: nothing is predicted; the frontend fetches on, and every taken branch or jump
         * costs the bubble. */
        if ((op == 0x63 || op == 0x6F || op == 0x67) && next != pc + 4) h->stall += h->param[P_MISPREDICT];
        return;
    }
    if (op != 0x63) return;
    int taken = next != pc + 4;
    uint8_t *counter = &h->bht[(pc >> 2) % BHT];
    if ((*counter >= 2) != taken) h->stall += h->param[P_MISPREDICT];
    if (taken && *counter < 3) ++*counter;
    if (!taken && *counter > 0) --*counter;
}

void tsim_block_hook(void *uc, uint64_t address, uint32_t size, struct core_hooks *h)
{
    l0_restore(h);
    uint64_t before = h->icount;
    walk(uc, h, before); /* the block just left, its accesses all logged */
    if (h->block_size) predict(uc, h, address);
    h->mem_n = h->mem_used = 0;
    h->div_n = h->div_used = 0;
    h->icount += size >> 2;
    h->block_addr = address;
    h->block_size = size;
    /* These stops happen before this block runs: Python subtracts it again. */
    if (before + (uint64_t)(h->stall > 0 ? h->stall : 0) >= h->limit) {
        h->stop_reason = STOP_LIMIT;
        h->stop(uc);
        return;
    }
    if (unhooked_watch(uc, h, address, size)) {
        h->stop_reason = STOP_WATCH;
        h->stop(uc);
        return;
    }
    if (h->resumed) {
        h->resumed = 0;
        goto code_page;
    }
    if (address == h->loop_head) {
        h->since_head = 0;
        if (h->busy[(address >> 2) & 63] != address && ++h->repeat >= h->spin_threshold) {
            h->stop_reason = STOP_SPIN;
            h->stop(uc);
            return;
        }
    } else if (++h->since_head > LOOP_BLOCKS
               || (h->history_pos && h->history_addr[(h->history_pos - 1) % HISTORY] == address)) {
        /* A block entered again right after itself is a one-block loop's head at once (a register
         * poll is checked after MMIO_SPIN_THRESHOLD iterations, not LOOP_BLOCKS + 1). */
        h->loop_head = address;
        h->since_head = 0;
        h->repeat_start = before;
        /* A one-block loop's iterations already seen count as repeats. */
        h->repeat_cycle = first_entry(h, address, natural(h, before), &h->repeat);
        h->spin_threshold = h->spin_reset;
    }
    h->history_addr[h->history_pos % HISTORY] = address;
    h->history_cycle[h->history_pos % HISTORY] = natural(h, before);
    h->history_pos++;
code_page:;
    uint64_t page = (address - h->code_base) >> 12;
    if (address >= h->code_base && page < h->code_pages && !h->executed[page]) {
        h->executed[page] = 1;
        h->new_code_page = 1;
    }
}

/* The push at `pc` found the queue full and is taken at `at`: the instruction issues then, as after
 * Python's stall (Core._stall): the core waits from where it would have issued unhindered, and a
 * fused group ends there. */
static void push_wait(struct core_hooks *h, uint32_t pc, int64_t at)
{
    int64_t wait = at - natural(h, index_of(h, pc));
    h->fuse_next = 0;
    if (wait <= 0) return;
    h->extra += wait;
    h->limit = h->limit > (uint64_t)wait ? h->limit - (uint64_t)wait : 0;
}

static int take_push(void *uc, struct core_hooks *h, uint32_t word, uint32_t pc, uint32_t pipe)
{
    int64_t cycle = tsim_time_at(uc, h, pc);
    uint32_t index = pipe & 0xFF;
    if (index >= PUSH_PORTS || cycle > h->push_limit[index])
        return 0;
    if (h->engine) {
        /* A wait for room ends no later than the limit either (Python's retry would meet it). */
        int64_t at = cycle, until = h->push_horizon < h->push_limit[index] ? h->push_horizon : h->push_limit[index];
        if (!h->engine_push(h->engine, index, word, pc, cycle, (uint32_t)h->core_index, pipe >> 8, until, &at))
            return 0;
        if (at > cycle) push_wait(h, pc, at);
        h->engine_pushes++;
    } else {
        if (!h->push_free || h->push_count >= PUSH_RING)
            return 0;
        h->push_free--;
        struct push_entry *e = &h->push_ring[h->push_count++];
        e->word = word;
        e->pc = pc;
        e->done = (int32_t)(cycle - h->time_base);
        e->pipe = pipe;
    }
    h->pushed_pipes |= 1ull << index;
    return 1;
}

/* Stop a probe before the instruction at the current pc (a store or trap after a load past the sync
 * limit: see probe_unsynced); nothing of it is performed. */
static void probe_stop(void *uc, struct core_hooks *h)
{
    uint32_t pc = 0;
    h->reg_read(uc, REG_PC, &pc);
    h->stop_reason = STOP_SYNC;
    h->fault_pc = pc;
    h->fault_write = h->fault_rd = 0;
    h->fault_cycle = 0;
    h->reg_write(uc, REG_PC, &pc);
    h->stop(uc);
}

/* An access made while the page's owner alone used it (unordered), issuing at `cycle`: remembered
 * by line (the walk calls it, once the access's issue cycle is known). */
static void private_access(struct core_hooks *h, uint64_t address, int type, int64_t cycle)
{
    uint64_t page = address >> 12, line = address >> 6;
    if (cycle > h->page_private_last[page]) h->page_private_last[page] = cycle;
    if (cycle > h->line_last[line]) h->line_last[line] = cycle;
    if (type == MEM_WRITE && cycle > h->line_write[line]) h->line_write[line] = cycle;
}

/* Whether an access of this core (not the page's owner) at `cycle` conflicts with an access its owner
 * made unordered at a later cycle (a store to the line before this load, or any access to the line
 * before this store): that order may not have been kept. Counted (a probe's read that is undone
 * counts too); Tile(l1_order="full") keeps it. */
static void unordered_before(struct core_hooks *h, uint64_t address, int type, int64_t cycle)
{
    uint64_t line = address >> 6;
    if (h->page_owner[address >> 12] == (uint8_t)h->core_bit) return;
    if ((type == MEM_WRITE ? h->line_last[line] : h->line_write[line]) >= cycle) h->order_late[0]++;
}

/* An L1 access at a cycle some other running core has not reached yet: the access is undone (the
 * old bytes and the old rd are saved here; Python restores them) and the core stops before it, to
 * retry it when it is the earliest. Returns 1 when it stopped the core. */
static int l1_sync_stop(void *uc, struct core_hooks *h, int type, uint64_t address, int size)
{
    if (h->stop_reason == STOP_SYNC) return 1; /* the write half of a stopped atomic */
    if (!h->sync_valid) h->sync_refresh();
    uint32_t pc = 0;
    uint32_t insn = 0, op = 0;
    h->fault_cycle = 0;
    if (h->probing && h->probe_unsynced && type == MEM_WRITE) goto stop;
    int64_t limit = h->sync_limit;
    if (h->page_order) {
        uint64_t page = address >> 12;
        uint8_t sharers = h->page_sharers[page], bit = (uint8_t)h->core_bit;
        uint8_t cores = sharers & (uint8_t)~NOC_SHARER;
        if (type == MEM_WRITE) h->page_writers[page] |= bit;
        if (sharers == bit) {
            /* Only this core has used the page: none observes the access now (the walk notes
             * its cycle, against which another core's accesses later are checked: see step and
             * unordered_before). */
            if (type != MEM_WRITE && !(h->page_writers[page] & bit) && h->spin_threshold > h->private_spin)
                h->spin_threshold = h->private_spin;
            return 0;
        }
        if (sharers & NOC_SHARER) /* the NoC's accesses are ordered, whoever else uses the page */
            limit = cores == bit ? h->noc_limit : min64(limit, h->noc_limit);
        if (h->page_private_last[page] >= h->time_base || !(cores & bit)) {
            /* This core's first use of the page, or an access that may come before what its owner
             * did unordered: ordered like any shared access. A core stopped before its first use
             * retries it at the same cycle, so the page counts as shared from here on (its owner,
             * running ahead, waits for it from now). */
            h->reg_read(uc, REG_PC, &pc);
            h->fault_cycle = tsim_time_at(uc, h, pc);
            int ordered = limit >= SYNC_NEVER || h->fault_cycle <= limit;
            if (!cores)
                h->page_owner[page] = bit; /* (the walk notes the access, see step) */
            else if (ordered)
                unordered_before(h, address, type, h->fault_cycle);
            h->page_sharers[page] |= bit;
            if (ordered) return 0;
            goto late;
        }
    }
    if (limit >= SYNC_NEVER) return 0;
    h->reg_read(uc, REG_PC, &pc);
    h->fault_cycle = tsim_time_at(uc, h, pc);
    if (h->fault_cycle <= limit) return 0;
late:
    if (h->probing && type != MEM_WRITE && !h->probe_strict) {
        h->probe_unsynced = 1;
        return 0;
    }
stop:
    h->reg_read(uc, REG_PC, &pc);
    insn = fetch_word(uc, h, pc);
    op = insn & 0x7F;
    h->stop_reason = STOP_SYNC;
    h->fault_addr = address;
    h->fault_size = (uint64_t)size;
    h->fault_pc = pc;
    h->fault_write = type == MEM_WRITE || op == 0x2F;
    h->fault_mem = 0;
    h->mem_read(uc, address, &h->fault_mem, (uint64_t)size);
    h->fault_rd = op == 0x23 ? 0 : (insn >> 7) & 31;
    uint32_t old = 0;
    if (h->fault_rd) h->reg_read(uc, REG_X0 + (int)h->fault_rd, &old);
    h->fault_old = old;
    h->reg_write(uc, REG_PC, &pc); /* makes Unicorn leave right after this instruction */
    h->stop(uc);
    return 1;
}

/* Whether the instruction making the access at the core's pc is an atomic (the L0 data cache does
 * not answer its read, and it flushes the cache). */
static int atomic_access(void *uc, const struct core_hooks *h)
{
    uint32_t pc = 0;
    h->reg_read(uc, REG_PC, &pc);
    return (fetch_word(uc, h, pc) & 0x7F) == 0x2F;
}

/* An L1 load the L0 data cache answers (in use, holding the line, not an atomic's read): the
 * entry's bytes answer it, lent to the load where L1's differ (written into L1 until l0_restore).
 * Every hit draws the periodic flush. Logged at `i`; returns 1 when the cache answered. */
static int l0_answer(void *uc, struct core_hooks *h, uint64_t address, int size, uint64_t i)
{
    if (!h->l0_tag[0] || !l0_on(h)) return 0;
    int way = l0_held(h, address >> 4);
    if (way < 0 || atomic_access(uc, h)) return 0;
    uint8_t *bytes = (uint8_t *)h->l1 + address;
    const uint8_t *held = h->l0_data[way] + (address & 15);
    if (memcmp(bytes, held, (size_t)size)) {
        h->l0_lent = address + 1;
        h->l0_lent_size = (uint64_t)size;
        h->l0_lent_bytes = 0;
        memcpy(&h->l0_lent_bytes, bytes, (size_t)size);
        memcpy(bytes, held, (size_t)size);
    }
    l0_keep(h, way, address >> 4);
    int flush = !(h->cfg0 & CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH) && l0_chance(h);
    if (flush) l0_release_all(h);
    if (i < MEM_LOG) h->l0_log[i] = flush ? L0_HIT_FLUSH : L0_HIT;
    return 1;
}

/* An L1 access performed (not answered by the cache): a load while the cache is in use fills its
 * least recently used entry with L1's bytes (L0_MISS), a store drops its line, an atomic flushes
 * the cache. Logged at `i`. */
static void l0_performed(void *uc, struct core_hooks *h, int type, uint64_t address, uint64_t i)
{
    int done = L0_PASSED;
    if (type == MEM_WRITE) {
        if (h->l0_tag[0]) l0_release(h, address >> 4);
    } else if (h->l0_tag[0] || l0_on(h)) {
        if (atomic_access(uc, h)) {
            l0_release_all(h);
        } else if (l0_on(h)) {
            int last = (int)h->param[P_L0_LINES] - 1;
            memcpy(h->l0_data[last], (const uint8_t *)h->l1 + (address & ~(uint64_t)15), 16);
            l0_keep(h, last, address >> 4);
            done = L0_MISS;
        }
    }
    if (i < MEM_LOG) h->l0_log[i] = (uint8_t)done;
}

void tsim_mem_hook(void *uc, int type, uint64_t address, int size, int64_t value, struct core_hooks *h)
{
    (void)value;
    l0_restore(h);
    uint64_t logged = h->mem_n;
    if (h->mem_n < MEM_LOG)
        h->mem_addr[h->mem_n] = address;
    h->mem_n++;
    if (h->probing) {
        if (type == MEM_WRITE) {
            h->probe_wrote = 1; /* (a loop that stores is no poll loop) */
            if (h->probe_unsynced && address >= h->l1_size) {
                probe_stop(uc, h);
                return;
            }
            h->probe_strict = 1;
        } else {
            if (h->probe_count < PROBE_READS) {
                uint32_t pc = 0;
                h->reg_read(uc, REG_PC, &pc);
                h->probe_addr[h->probe_count] = address;
                h->probe_size[h->probe_count] = (uint64_t)size;
                h->probe_cycle[h->probe_count] = tsim_time_at(uc, h, pc);
            }
            h->probe_count++;
        }
    }
    int misaligned = (address & (uint64_t)(size - 1)) != 0;
    int hole = address - h->hole_lo < h->hole_size;
    if (!misaligned && !hole && address < h->l1_size) {
        /* An L0 hit asks nothing of L1, so it waits for no other core. */
        if (type != MEM_WRITE && l0_answer(uc, h, address, size, logged)) return;
        if (l1_sync_stop(uc, h, type, address, size)) return;
        l0_performed(uc, h, type, address, logged);
        return;
    }
    if (!misaligned && !hole && address < h->mmio_base)
        return;
    uint32_t pc = 0;
    h->reg_read(uc, REG_PC, &pc);
    if (!misaligned && !hole) {
        h->mmio_pc = pc;
        for (int i = 0; i < PUSH_PORTS; i++) {
            if (!h->push_addr[i] || (address & ~0xFFFull) != h->push_addr[i])
                continue;
            /* The push page is scratch RAM: the store itself lands there harmlessly. Anything but
             * a 32-bit store to its first word stops with STOP_PUSH, and Python reports it. */
            int store = type == MEM_WRITE && size == 4 && address == h->push_addr[i];
            if (store && take_push(uc, h, (uint32_t)value, pc, (uint32_t)h->push_pipe[i]))
                return;
            h->stop_reason = STOP_PUSH;
            h->pending_word = (uint32_t)value;
            h->pending_pipe = h->push_pipe[i];
            h->fault_pc = pc;
            h->fault_addr = address;
            h->fault_write = store; /* 0: a bad access to the push page */
            h->fault_size = (uint64_t)size;
            h->reg_write(uc, REG_PC, &pc);
            h->stop(uc);
            return;
        }
        return;
    }
    /* The access still happens after this hook returns; save what it will overwrite so that Python
     * can undo it and report a precise fault with nothing corrupted. */
    h->stop_reason = misaligned ? STOP_MISALIGNED : STOP_HOLE;
    h->fault_addr = address;
    h->fault_size = (uint64_t)size;
    h->fault_pc = pc;
    h->fault_write = type == MEM_WRITE;
    h->fault_old = 0;
    if (h->fault_write) {
        h->mem_read(uc, address, &h->fault_old, (uint64_t)size);
    } else {
        uint32_t insn = 0;
        h->mem_read(uc, pc, &insn, 4);
        h->fault_rd = (insn >> 7) & 31;
        uint32_t old = 0;
        h->reg_read(uc, REG_X0 + (int)h->fault_rd, &old);
        h->fault_old = old;
    }
    h->reg_write(uc, REG_PC, &pc); /* makes Unicorn leave right after this instruction */
    h->stop(uc);
}

/* Zba/Zbb (bit-manipulation 1.0, RV32), the same semantics as bitmanip.py (the reference path).
 * Returns 1 and sets *out when ``w`` is one of them. */
static int bitmanip(uint32_t w, uint32_t a, uint32_t b, uint32_t *out)
{
    uint32_t opcode = w & 0x7F, f3 = (w >> 12) & 7, f7 = w >> 25, rs2 = (w >> 20) & 31;
    int32_t sa = (int32_t)a, sb = (int32_t)b;
    if (opcode == 0x33) {
        if (f7 == 0x10 && (f3 == 2 || f3 == 4 || f3 == 6)) { *out = (a << (f3 >> 1)) + b; return 1; }
        if (f7 == 0x20 && f3 == 7) { *out = a & ~b; return 1; }
        if (f7 == 0x20 && f3 == 6) { *out = a | ~b; return 1; }
        if (f7 == 0x20 && f3 == 4) { *out = ~(a ^ b); return 1; }
        if (f7 == 0x05 && f3 == 4) { *out = sa <= sb ? a : b; return 1; }
        if (f7 == 0x05 && f3 == 5) { *out = a <= b ? a : b; return 1; }
        if (f7 == 0x05 && f3 == 6) { *out = sa >= sb ? a : b; return 1; }
        if (f7 == 0x05 && f3 == 7) { *out = a >= b ? a : b; return 1; }
        if (f7 == 0x30 && f3 == 1) { uint32_t s = b & 31; *out = s ? (a << s) | (a >> (32 - s)) : a; return 1; }
        if (f7 == 0x30 && f3 == 5) { uint32_t s = b & 31; *out = s ? (a >> s) | (a << (32 - s)) : a; return 1; }
        if (f7 == 0x04 && f3 == 4 && rs2 == 0) { *out = a & 0xFFFF; return 1; }
        return 0;
    }
    if (opcode != 0x13)
        return 0;
    if (f7 == 0x30 && f3 == 5) { uint32_t s = rs2; *out = s ? (a >> s) | (a << (32 - s)) : a; return 1; }
    if (f7 == 0x30 && f3 == 1) {
        switch (rs2) {
        case 0: *out = a ? (uint32_t)__builtin_clz(a) : 32; return 1;
        case 1: *out = a ? (uint32_t)__builtin_ctz(a) : 32; return 1;
        case 2: *out = (uint32_t)__builtin_popcount(a); return 1;
        case 4: *out = (uint32_t)(int32_t)(int8_t)a; return 1;
        case 5: *out = (uint32_t)(int32_t)(int16_t)a; return 1;
        }
        return 0;
    }
    if (f7 == 0x34 && f3 == 5 && rs2 == 0x18) { *out = __builtin_bswap32(a); return 1; }
    if (f7 == 0x14 && f3 == 5 && rs2 == 0x07) {
        uint32_t r = 0;
        for (int i = 0; i < 32; i += 8)
            if ((a >> i) & 0xFF) r |= 0xFFu << i;
        *out = r;
        return 1;
    }
    return 0;
}

static int is_bitmanip(uint32_t w)
{
    uint32_t out;
    return bitmanip(w, 0, 0, &out);
}

void tsim_intr_hook(void *uc, uint32_t intno, struct core_hooks *h)
{
    l0_restore(h);
    uint32_t next = 0;
    h->reg_read(uc, REG_PC, &next);
    uint32_t pc = next - 4;
    /* QEMU leaves a trapping instruction out of its block's size unless it opens the block. */
    if (pc == h->block_addr + h->block_size) {
        h->icount += 1;
        h->block_size += 4;
    }
    uint32_t w = 0;
    if (intno == 2) w = fetch_word(uc, h, pc); /* L1 code read directly: no Unicorn memory walk */
    if (h->probing && !(intno == 2 && (w & 3) == 3 && h->zba_zbb && is_bitmanip(w))) {
        /* A push or a trap to Python after a load past the sync limit: the probe stops before it
         * (such a loop does lasting work: no poll loop). */
        if (h->probe_unsynced) {
            h->probe_wrote = 1;
            h->reg_write(uc, REG_PC, &pc);
            probe_stop(uc, h);
            return;
        }
        h->probe_strict = 1;
    }
    if (intno == 2) {
        if ((w & 3) != 3) {
            if (h->inline_pipe != ~(uint64_t)0 && take_push(uc, h, (w >> 2) | (w << 30), pc, (uint32_t)h->inline_pipe | 0x100))
                return;
        } else if (h->zba_zbb) {
            uint32_t rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31, rd = (w >> 7) & 31;
            uint32_t a = 0, b = 0, out;
            h->reg_read(uc, REG_X0 + (int)rs1, &a);
            h->reg_read(uc, REG_X0 + (int)rs2, &b);
            if (bitmanip(w, a, b, &out)) {
                if (rd)
                    h->reg_write(uc, REG_X0 + (int)rd, &out);
                return;
            }
        }
    }
    h->py_intr(uc, intno, 0);
}

/* Lets Python check that its ctypes mirror of the struct has the same size. */
uint64_t tsim_hooks_size(void) { return sizeof(struct core_hooks); }

/* The fast path's block records of one core: allocated with its hooks, freed with them. */
void *tsim_alloc_blocks(void) { return calloc(BLOCK_CACHE, sizeof(struct block_info)); }
void tsim_free_blocks(void *blocks) { free(blocks); }

/* ---------------------------------------------------------------------------------------------
 * MMIO reads of plain storage, answered without Python. A window whose registers only hold values
 * (the stream registers) is mapped with tsim_storage_read; it answers a read itself when Python's
 * callback (Core._mmio_read) would have done nothing more:
 * - `engine` is set: Python has not run since it filled this struct (it clears `engine` whenever
 *   it runs; the first storage read after that asks it to fill the struct in again), so what it
 *   computed holds;
 * - no push waits in the ring for Python (it would reach the coprocessor first);
 * - the core may synchronise at its cycle: no other running core is behind it (Tile.may_sync, as a
 *   bound computed at slice start);
 * - the coprocessor reaches that cycle natively with nothing for Python to do (Tile.sync_coprocessor:
 *   no core to wake, no instruction Python must issue, no SFPLOADMACRO work left to settle).
 * Anything else goes to Python's callback, which then does the same from the start. */
typedef uint64_t (*mmio_read_fn)(void *uc, uint64_t offset, uint32_t size, void *user);
typedef int (*engine_run_fn)(void *engine, int64_t horizon);
typedef void (*attach_fn)(void);
enum { ENGINE_RUN_HORIZON = 0 }; /* tensix/native/engine.h: RUN_HORIZON */
enum { STORAGE_ZERO = -1, STORAGE_PYTHON = -2 };

struct storage_core {          /* one per core (Core.storage_reads) */
    struct core_hooks *h;
    void *engine;              /* the native engine, while what Python told this struct holds */
    attach_fn attach;          /* Python fills in this struct (Core._attach_storage) */
    int64_t asked;             /* attach was called since Python last ran */
    engine_run_fn engine_run;  /* tsim_engine_run of the tensix library */
    const int64_t *reached;    /* the engine's clock (NativeEngine.out[OUT_REACHED]) */
    const int64_t *idle;       /* its SFPLOADMACRO idle hint (copro_view.sched[SCHED_IDLE]) */
    int64_t sync_limit;        /* the latest cycle this core may synchronise at (slice start) */
    uint64_t spin_cap;         /* loop_probe.MMIO_SPIN_THRESHOLD: a loop that reads shared state is checked sooner */
    uint64_t served;           /* reads answered here */
};

struct storage_window {        /* one per mapped window */
    struct storage_core *core;
    const uint32_t *values;    /* what the registers hold */
    const int32_t *slots;      /* per 32-bit register: index into values, STORAGE_ZERO or STORAGE_PYTHON */
    uint64_t words;
    mmio_read_fn python;       /* Python's read callback for this window */
    void *python_user;
};

uint64_t tsim_storage_read(void *uc, uint64_t offset, uint32_t size, struct storage_window *w)
{
    struct storage_core *m = w->core;
    struct core_hooks *h = m->h;
    uint64_t word = offset >> 2;
    int32_t slot = word < w->words ? w->slots[word] : STORAGE_PYTHON;
    int narrow_ok = size == 4 || size == 2 || size == 1;
    int eligible = slot != STORAGE_PYTHON && !h->push_count && !h->probing && narrow_ok && !(offset & (size - 1));
    if (eligible && !m->engine && !m->asked) {
        m->asked = 1;
        m->attach();
    }
    if (eligible && m->engine) {
        int64_t cycle = tsim_time_at(uc, h, h->mmio_pc);
        /* Never past where another core may act; Engine.advance_to returns at once when the engine
         * has reached the cycle already. */
        if (cycle <= m->sync_limit
            && (cycle <= *m->reached || (m->engine_run(m->engine, cycle) == ENGINE_RUN_HORIZON && *m->idle))) {
            uint32_t value = slot >= 0 ? w->values[slot] : 0;
            if (size < 4)
                value = (value >> (8 * (offset & 3))) & ((1u << (8 * size)) - 1);
            if (h->spin_threshold > m->spin_cap)
                h->spin_threshold = m->spin_cap;
            m->served++;
            return value;
        }
    }
    return w->python(uc, offset, size, w->python_user);
}

uint64_t tsim_storage_sizes(void) { return sizeof(struct storage_core) * 1000 + sizeof(struct storage_window); }
