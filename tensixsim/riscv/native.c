/* Native Unicorn hooks for tensixsim's baby cores.
 *
 * A Python hook costs about 1 us per call; these run on every translated block and on every memory
 * access, so they are C. They only record facts and stop emulation; all decisions stay in Python.
 * Function pointers to uc_emu_stop/uc_reg_read/uc_reg_write/uc_mem_read are passed in from Python
 * so this file needs no Unicorn headers or link step.
 */
#include <stdint.h>

typedef int (*uc_stop_fn)(void *uc);
typedef int (*uc_reg_fn)(void *uc, int regid, void *value);
typedef int (*uc_mem_read_fn)(void *uc, uint64_t addr, void *buf, uint64_t size);
typedef void (*py_intr_fn)(void *uc, uint32_t intno, void *user);
/* tsim_engine_push of the coprocessor engine (tensix/native/engine.c): 1 when it took the push. */
typedef int (*engine_push_fn)(void *engine, uint32_t pipe, uint32_t word, uint32_t pc, int64_t cycle,
                              uint32_t core, uint32_t inline_word, int64_t horizon);

enum { STOP_NONE = 0, STOP_LIMIT = 1, STOP_MISALIGNED = 2, STOP_SPIN = 3, STOP_PUSH = 4 };
enum { PUSH_RING = 256, PUSH_PORTS = 3 };

/* A Tensix instruction taken by the hooks while its pipe's queue had room (see push_free). */
struct push_entry {
    uint32_t word;
    uint32_t pc;
    uint32_t done;  /* instructions of the slice retired before it */
    uint32_t pipe;  /* bit 8: pushed inline (an instruction word) rather than by a store */
};
enum { REG_X0 = 1, REG_PC = 190 }; /* Unicorn's UC_RISCV_REG_* numbering */
enum { MEM_WRITE = 17 };           /* UC_MEM_WRITE */
enum { PROBE_READS = 64 };         /* loads recorded while probing a loop (more: not a poll loop) */
enum { LOOP_BLOCKS = 8 };          /* longest loop (in blocks) checked for polling */

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
    /* While `probing`, every load and store is recorded (Core.probe_iteration): what one iteration
     * of a loop reads, whether it writes. */
    uint64_t probing;
    uint64_t probe_wrote;
    uint64_t probe_count;   /* loads seen; only the first PROBE_READS are kept */
    uint64_t probe_addr[PROBE_READS];
    uint64_t probe_size[PROBE_READS];
};

void tsim_block_hook(void *uc, uint64_t address, uint32_t size, struct core_hooks *h)
{
    uint64_t before = h->icount;
    h->icount += size >> 2;
    h->block_addr = address;
    h->block_size = size;
    /* Both stops happen before this block runs: Python subtracts it again. */
    if (before >= h->limit) {
        h->stop_reason = STOP_LIMIT;
        h->stop(uc);
        return;
    }
    if (address == h->loop_head) {
        h->since_head = 0;
        if (h->busy[(address >> 2) & 63] != address && ++h->repeat >= h->spin_threshold) {
            h->stop_reason = STOP_SPIN;
            h->stop(uc);
            return;
        }
    } else if (++h->since_head > LOOP_BLOCKS) {
        h->loop_head = address;
        h->since_head = 0;
        h->repeat = 0;
        h->repeat_start = before;
        h->spin_threshold = h->spin_reset;
    }
    uint64_t page = (address - h->code_base) >> 12;
    if (address >= h->code_base && page < h->code_pages && !h->executed[page]) {
        h->executed[page] = 1;
        h->new_code_page = 1;
    }
}

static uint32_t done_before(const struct core_hooks *h, uint32_t pc)
{
    return (uint32_t)(h->icount - (h->block_addr + h->block_size - pc) / 4);
}

static int take_push(struct core_hooks *h, uint32_t word, uint32_t pc, uint32_t pipe)
{
    if (h->engine) {
        int64_t cycle = h->time_base + (int64_t)done_before(h, pc);
        if (!h->engine_push(h->engine, pipe & 0xFF, word, pc, cycle, (uint32_t)h->core_index, pipe >> 8,
                            h->push_horizon))
            return 0;
        h->engine_pushes++;
        return 1;
    }
    if (!h->push_free || h->push_count >= PUSH_RING)
        return 0;
    struct push_entry *e = &h->push_ring[h->push_count++];
    e->word = word;
    e->pc = pc;
    e->done = done_before(h, pc);
    e->pipe = pipe;
    h->push_free--;
    return 1;
}

void tsim_mem_hook(void *uc, int type, uint64_t address, int size, int64_t value, struct core_hooks *h)
{
    (void)value;
    if (h->probing) {
        if (type == MEM_WRITE) {
            h->probe_wrote = 1;
        } else {
            if (h->probe_count < PROBE_READS) {
                h->probe_addr[h->probe_count] = address;
                h->probe_size[h->probe_count] = (uint64_t)size;
            }
            h->probe_count++;
        }
    }
    int misaligned = (address & (uint64_t)(size - 1)) != 0;
    if (!misaligned && address < h->mmio_base)
        return;
    uint32_t pc = 0;
    h->reg_read(uc, REG_PC, &pc);
    if (!misaligned) {
        h->mmio_pc = pc;
        for (int i = 0; i < PUSH_PORTS; i++) {
            if (!h->push_addr[i] || (address & ~0xFFFull) != h->push_addr[i])
                continue;
            /* The push page is scratch RAM: the store itself lands there harmlessly. Anything but
             * a 32-bit store to its first word stops with STOP_PUSH, and Python reports it. */
            int store = type == MEM_WRITE && size == 4 && address == h->push_addr[i];
            if (store && take_push(h, (uint32_t)value, pc, (uint32_t)h->push_pipe[i]))
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
    h->stop_reason = STOP_MISALIGNED;
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

void tsim_intr_hook(void *uc, uint32_t intno, struct core_hooks *h)
{
    uint32_t next = 0;
    h->reg_read(uc, REG_PC, &next);
    uint32_t pc = next - 4;
    /* QEMU leaves a trapping instruction out of its block's size unless it opens the block. */
    if (pc == h->block_addr + h->block_size) {
        h->icount += 1;
        h->block_size += 4;
    }
    if (intno == 2) {
        uint32_t w = 0;
        h->mem_read(uc, pc, &w, 4);
        if ((w & 3) != 3) {
            if (h->inline_pipe != ~(uint64_t)0 && take_push(h, (w >> 2) | (w << 30), pc, (uint32_t)h->inline_pipe | 0x100))
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
