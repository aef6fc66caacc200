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

enum { STOP_NONE = 0, STOP_LIMIT = 1, STOP_MISALIGNED = 2, STOP_SPIN = 3 };
enum { REG_X0 = 1, REG_PC = 190 }; /* Unicorn's UC_RISCV_REG_* numbering */
enum { MEM_WRITE = 17 };           /* UC_MEM_WRITE */
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
    uc_stop_fn stop;
    uc_reg_fn reg_read;
    uc_reg_fn reg_write;
    uc_mem_read_fn mem_read;
    uint64_t busy[64];      /* loop heads Python found busy (not polling), direct-mapped by address */
    uint8_t executed[1024]; /* one flag per tracked 4 KiB page */
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
    }
    uint64_t page = (address - h->code_base) >> 12;
    if (address >= h->code_base && page < h->code_pages && !h->executed[page]) {
        h->executed[page] = 1;
        h->new_code_page = 1;
    }
}

void tsim_mem_hook(void *uc, int type, uint64_t address, int size, int64_t value, struct core_hooks *h)
{
    (void)value;
    int misaligned = (address & (uint64_t)(size - 1)) != 0;
    if (!misaligned && address < h->mmio_base)
        return;
    uint32_t pc = 0;
    h->reg_read(uc, REG_PC, &pc);
    if (!misaligned) {
        h->mmio_pc = pc;
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

/* Lets Python check that its ctypes mirror of the struct has the same size. */
uint64_t tsim_hooks_size(void) { return sizeof(struct core_hooks); }
