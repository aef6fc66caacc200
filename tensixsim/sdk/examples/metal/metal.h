/* metal.h: the kernel side of tt-metal's Blackhole and Wormhole firmware, as kernels built by
 * tensixsim.metal.kernels see it.
 *
 * What the firmware provides (globals in each core's local RAM, addresses resolved at link time):
 * - rta_l1_base: the kernel's runtime arguments (uint32_t words).
 * - cb_interface[]: one LocalCBInterface per circular buffer, filled from the launch message's CB
 *   configuration before the kernel is entered. The data-movement cores (BRISC, NCRISC) get every
 *   field in bytes; TRISC0 (the unpacker's core) gets the read side and TRISC2 (the packer's) the
 *   write side, in 16-byte units. The tiles_acked / tiles_received halves start at zero. The layout
 *   below is checked against the firmware's DWARF when a kernel is built.
 * - dram_bank_to_noc_xy / bank_to_dram_offset: the DRAM bank tables (data-movement cores).
 *
 * Circular-buffer counters: CB n uses stream OPERAND_START_STREAM + n (the firmware's DWARF
 * constant, passed in by the build); register STREAM_TILES_RECEIVED_REG (Blackhole 10, Wormhole 4)
 * counts pages received (written by the producer), STREAM_TILES_ACKED_REG (8, 3) pages acked
 * (written by the consumer), compared as 16-bit numbers. These are the two registers TRISC0's
 * firmware clears when BRISC's firmware asks it to reset the sync registers (at boot and after
 * every launch).
 */
#ifndef METAL_H
#define METAL_H

#include <stdint.h>

#include "tensixsim.h"

typedef struct {
    uint32_t fifo_size;
    uint32_t fifo_limit;
    uint32_t fifo_page_size;
    uint32_t fifo_num_pages;
    uint32_t fifo_rd_ptr;
    uint32_t fifo_wr_ptr;
    uint16_t tiles_acked;
    uint16_t tiles_received;
    uint32_t fifo_wr_tile_ptr;
} metal_cb_t;

extern uint32_t *rta_l1_base;

/* The firmware of every core but TRISC1 has circular buffers; the build passes OPERAND_START_STREAM
   (from the firmware) for those. */
#ifdef OPERAND_START_STREAM
extern metal_cb_t cb_interface[];

#define METAL_TILES_ACKED STREAM_TILES_ACKED_REG
#define METAL_TILES_RECEIVED STREAM_TILES_RECEIVED_REG

static inline volatile uint32_t *metal_cb_reg(uint32_t cb, uint32_t reg)
{
    return (volatile uint32_t *)(uintptr_t)STREAM_REG_ADDR(OPERAND_START_STREAM + cb, reg);
}

/* ---- data-movement cores (pointers in bytes, counters read back from the stream registers) ---- */

/* Wait until n pages of `cb` are free. */
static inline void cb_reserve_back(uint32_t cb, uint32_t n)
{
    uint16_t received = (uint16_t)*metal_cb_reg(cb, METAL_TILES_RECEIVED);
    for (;;) {
        uint16_t acked = (uint16_t)*metal_cb_reg(cb, METAL_TILES_ACKED);
        uint16_t free_pages = (uint16_t)(cb_interface[cb].fifo_num_pages - (uint16_t)(received - acked));
        if (free_pages >= n)
            return;
    }
}

/* n pages at the write pointer are written; hand them to the consumer. */
static inline void cb_push_back(uint32_t cb, uint32_t n)
{
    metal_cb_t *i = &cb_interface[cb];
    sdk_fence(); /* the pages' data before the counter */
    *metal_cb_reg(cb, METAL_TILES_RECEIVED) += n;
    i->fifo_wr_ptr += n * i->fifo_page_size;
    if (i->fifo_wr_ptr >= i->fifo_limit)
        i->fifo_wr_ptr -= i->fifo_size;
}

/* Wait until n pages of `cb` have arrived. */
static inline void cb_wait_front(uint32_t cb, uint32_t n)
{
    uint16_t acked = (uint16_t)*metal_cb_reg(cb, METAL_TILES_ACKED);
    while ((uint16_t)((uint16_t)*metal_cb_reg(cb, METAL_TILES_RECEIVED) - acked) < n)
        ;
    sdk_fence(); /* drop anything stale this core may hold of the pages */
}

/* n pages at the read pointer are used up; give them back. */
static inline void cb_pop_front(uint32_t cb, uint32_t n)
{
    metal_cb_t *i = &cb_interface[cb];
    *metal_cb_reg(cb, METAL_TILES_ACKED) += n;
    i->fifo_rd_ptr += n * i->fifo_page_size;
    if (i->fifo_rd_ptr >= i->fifo_limit)
        i->fifo_rd_ptr -= i->fifo_size;
}

/* ---- NoC requests (one initiator per direction, as tt-metal's read / write command buffers) ---- */
#ifdef NUM_DRAM_BANKS
extern uint16_t dram_bank_to_noc_xy[2][NUM_DRAM_BANKS];
extern int32_t bank_to_dram_offset[NUM_DRAM_BANKS];

#define METAL_NIU(noc) ((noc) ? 0xFFB30000u : 0xFFB20000u)
/* The NIU's request registers differ by chip (NoC/MemoryMap.md; tt-metal's noc_parameters.h): a
   command buffer every 0x800 bytes on Blackhole, every 0x400 on Wormhole; NOC_AT_DATA, NOC_CMD_CTRL
   and NOC_NODE_ID where each has them; a target's coordinates (x | y << 6) in _HI on Blackhole, from
   bit 4 of _MID on Wormhole; pages 64- or 32-byte aligned in DRAM (DRAM_ALIGNMENT). */
#if defined(SDK_ARCH_WORMHOLE)
#define METAL_CMD_BUF_STRIDE 0x400u
#define METAL_NOC_AT_DATA 0x24u
#define METAL_NOC_CMD 0x28u
#define METAL_NOC_NODE_ID 0x2Cu
#define METAL_XY_MID(xy) ((xy) << 4)
#define METAL_XY_HI(xy) 0u
#define METAL_DRAM_ALIGNMENT 32u
#else
#define METAL_CMD_BUF_STRIDE 0x800u
#define METAL_NOC_AT_DATA 0x28u
#define METAL_NOC_CMD 0x40u
#define METAL_NOC_NODE_ID 0x44u
#define METAL_XY_MID(xy) 0u
#define METAL_XY_HI(xy) (xy)
#define METAL_DRAM_ALIGNMENT 64u
#endif
#define METAL_WR_CMD_BUF (0u * METAL_CMD_BUF_STRIDE)
#define METAL_RD_CMD_BUF (1u * METAL_CMD_BUF_STRIDE)
#define METAL_AT_CMD_BUF (2u * METAL_CMD_BUF_STRIDE)
#define METAL_NOC_TARG_LO 0x00u
#define METAL_NOC_TARG_MID 0x04u
#define METAL_NOC_TARG_HI 0x08u
#define METAL_NOC_RET_LO 0x0Cu
#define METAL_NOC_RET_MID 0x10u
#define METAL_NOC_RET_HI 0x14u
#define METAL_NOC_CTRL 0x1Cu
#define METAL_NOC_LEN 0x20u
#define METAL_NOC_WR_ACK_RECEIVED 0x204u
#define METAL_NOC_RD_RESP_RECEIVED 0x208u
#define METAL_NOC_CMD_WR 0x2u
#define METAL_NOC_CMD_RESP_MARKED 0x10u

/* A request from initiator `niu` (its NIU plus a command buffer): target and return addresses in
   this chip's layout, their tiles' coordinates `targ_xy` / `ret_xy` (x | y << 6). */
static inline void metal_noc_request(uint32_t niu, uint32_t targ, uint32_t targ_xy, uint32_t ret, uint32_t ret_xy,
                                     uint32_t ctrl, uint32_t len)
{
    volatile uint32_t *r = (volatile uint32_t *)(uintptr_t)niu;
    while (r[METAL_NOC_CMD / 4u] & 1u)
        ;
    r[METAL_NOC_TARG_LO / 4u] = targ;
    r[METAL_NOC_TARG_MID / 4u] = METAL_XY_MID(targ_xy);
    r[METAL_NOC_TARG_HI / 4u] = METAL_XY_HI(targ_xy);
    r[METAL_NOC_RET_LO / 4u] = ret;
    r[METAL_NOC_RET_MID / 4u] = METAL_XY_MID(ret_xy);
    r[METAL_NOC_RET_HI / 4u] = METAL_XY_HI(ret_xy);
    r[METAL_NOC_CTRL / 4u] = ctrl;
    r[METAL_NOC_LEN / 4u] = len;
    r[METAL_NOC_CMD / 4u] = 1u;
}

/* Page `page` of an interleaved DRAM buffer at `base` (pages of `bytes`, METAL_DRAM_ALIGNMENT-aligned):
   the bank's NoC coordinates (x | y << 6 on `noc`) and the address inside the bank. */
static inline uint32_t metal_dram_page(uint32_t noc, uint32_t base, uint32_t page, uint32_t bytes, uint32_t *xy)
{
    uint32_t bank = page % NUM_DRAM_BANKS;
    *xy = dram_bank_to_noc_xy[noc][bank];
    uint32_t pitch = (bytes + METAL_DRAM_ALIGNMENT - 1u) & ~(METAL_DRAM_ALIGNMENT - 1u);
    return base + (page / NUM_DRAM_BANKS) * pitch + (uint32_t)bank_to_dram_offset[bank];
}

/* Read a DRAM page into L1 and wait for the data. */
static inline void metal_read_page(uint32_t noc, uint32_t base, uint32_t page, uint32_t bytes, uint32_t l1)
{
    uint32_t niu = METAL_NIU(noc), xy;
    uint32_t from = metal_dram_page(noc, base, page, bytes, &xy);
    uint32_t own = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_NODE_ID) & 0xFFFu;
    uint32_t expected = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_RD_RESP_RECEIVED) + 1u;
    metal_noc_request(niu + METAL_RD_CMD_BUF, from, xy, l1, own, 0u, bytes);
    while (*(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_RD_RESP_RECEIVED) != expected)
        ;
}

/* Write an L1 page to DRAM and wait for the write's acknowledgement. */
static inline void metal_write_page(uint32_t noc, uint32_t base, uint32_t page, uint32_t bytes, uint32_t l1)
{
    uint32_t niu = METAL_NIU(noc), xy;
    uint32_t to = metal_dram_page(noc, base, page, bytes, &xy);
    uint32_t own = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_NODE_ID) & 0xFFFu;
    uint32_t expected = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_WR_ACK_RECEIVED) + 1u;
    metal_noc_request(niu + METAL_WR_CMD_BUF, l1, own, to, xy, METAL_NOC_CMD_WR | METAL_NOC_CMD_RESP_MARKED, bytes);
    while (*(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_WR_ACK_RECEIVED) != expected)
        ;
}
/* ---- requests to other Tensix tiles of a chip (coordinates: NoC #0, as the host gives them) ---- */
#define METAL_NOC_CMD_AT 0x1u
/* Atomic increment of a whole 32-bit word (IntWidth 31) at word Ofs of its 16-byte line (Atomics.md). */
#define METAL_NOC_AT_INCREMENT(ofs) ((1u << 12) | (31u << 2) | ((ofs) & 3u))

/* NoC #0 coordinates (x, y) as `noc` names them (x | y << 6): NoC #1 counts from the opposite
   corner, the grid's size read from NOC_NODE_ID (tt-metal's NOC_0_X / NOC_0_Y do the same). */
static inline uint32_t metal_noc_xy(uint32_t noc, uint32_t x, uint32_t y)
{
    if (noc) {
        uint32_t id = *(volatile uint32_t *)(uintptr_t)(METAL_NIU(noc) + METAL_NOC_NODE_ID);
        x = ((id >> 12) & 0x7Fu) - 1u - x;
        y = ((id >> 19) & 0x7Fu) - 1u - y;
    }
    return x | y << 6;
}

/* Write bytes from this tile's L1 at l1 to dst in the L1 of tile (x, y), and wait for the
   acknowledgement (the data are in the far L1 then). */
static inline void metal_write_to(uint32_t noc, uint32_t l1, uint32_t x, uint32_t y, uint32_t dst, uint32_t bytes)
{
    uint32_t niu = METAL_NIU(noc);
    uint32_t own = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_NODE_ID) & 0xFFFu;
    uint32_t expected = *(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_WR_ACK_RECEIVED) + 1u;
    metal_noc_request(niu + METAL_WR_CMD_BUF, l1, own, dst, metal_noc_xy(noc, x, y),
                      METAL_NOC_CMD_WR | METAL_NOC_CMD_RESP_MARKED, bytes);
    while (*(volatile uint32_t *)(uintptr_t)(niu + METAL_NOC_WR_ACK_RECEIVED) != expected)
        ;
}

/* Add inc to the semaphore (a 16-byte aligned L1 word) at addr of tile (x, y): a posted NoC atomic,
   as tt-metal's noc_semaphore_inc. */
static inline void metal_semaphore_inc(uint32_t noc, uint32_t x, uint32_t y, uint32_t addr, uint32_t inc)
{
    volatile uint32_t *r = (volatile uint32_t *)(uintptr_t)(METAL_NIU(noc) + METAL_AT_CMD_BUF);
    r[METAL_NOC_TARG_LO / 4u] = addr;
    r[METAL_NOC_TARG_MID / 4u] = METAL_XY_MID(metal_noc_xy(noc, x, y));
    r[METAL_NOC_TARG_HI / 4u] = METAL_XY_HI(metal_noc_xy(noc, x, y));
    r[METAL_NOC_CTRL / 4u] = METAL_NOC_CMD_AT;
    r[METAL_NOC_LEN / 4u] = METAL_NOC_AT_INCREMENT(addr >> 2);
    r[METAL_NOC_AT_DATA / 4u] = inc;
    r[METAL_NOC_CMD / 4u] = 1u;
}

/* Wait until the semaphore at addr (this tile's L1) reaches at_least. */
static inline void metal_semaphore_wait_min(uint32_t addr, uint32_t at_least)
{
    while (*(volatile uint32_t *)(uintptr_t)addr < at_least)
        ;
}

/* The firmware's own NoC coordinates (noc_init reads them from NOC_NODE_ID). */
extern uint8_t my_x[2], my_y[2];
#endif /* NUM_DRAM_BANKS */

/* ---- TRISCs (pointers in 16-byte units, this side's counter kept in cb_interface) ---- */

/* Consumer (TRISC0): wait until n pages have arrived. */
static inline void metal_trisc_wait_front(uint32_t cb, uint32_t n)
{
    while ((uint16_t)((uint16_t)*metal_cb_reg(cb, METAL_TILES_RECEIVED) - cb_interface[cb].tiles_acked) < n)
        ;
    sdk_fence();
}

/* Consumer: the unpacker has finished reading n front pages (its pipe is idle); give them back. */
static inline void metal_trisc_pop_front(uint32_t cb, uint32_t n)
{
    metal_cb_t *i = &cb_interface[cb];
    i->tiles_acked += (uint16_t)n;
    *metal_cb_reg(cb, METAL_TILES_ACKED) = i->tiles_acked;
    i->fifo_rd_ptr += n * i->fifo_page_size;
    if (i->fifo_rd_ptr >= i->fifo_limit)
        i->fifo_rd_ptr -= i->fifo_size;
}

/* Producer (TRISC2): wait until n pages are free. */
static inline void metal_trisc_reserve_back(uint32_t cb, uint32_t n)
{
    metal_cb_t *i = &cb_interface[cb];
    for (;;) {
        uint16_t acked = (uint16_t)*metal_cb_reg(cb, METAL_TILES_ACKED);
        uint16_t free_pages = (uint16_t)(i->fifo_num_pages - (uint16_t)(i->tiles_received - acked));
        if (free_pages >= n)
            return;
    }
}

/* Producer: the packer has finished writing n pages (its pipe is idle); hand them on. */
static inline void metal_trisc_push_back(uint32_t cb, uint32_t n)
{
    metal_cb_t *i = &cb_interface[cb];
    sdk_fence();
    i->fifo_wr_ptr += n * i->fifo_page_size;
    if (i->fifo_wr_ptr >= i->fifo_limit)
        i->fifo_wr_ptr -= i->fifo_size;
    i->tiles_received += (uint16_t)n;
    *metal_cb_reg(cb, METAL_TILES_RECEIVED) = i->tiles_received;
}

#endif /* OPERAND_START_STREAM */

/* ---- the add-one program's circular buffers and runtime arguments ---- */
#define ADD1_CB_IN 0u    /* c_0: input tiles, reader -> unpacker */
#define ADD1_CB_ONES 1u  /* c_1: one tile of bf16 1.0, written once by the reader */
#define ADD1_CB_OUT 16u  /* c_16: output tiles, packer -> writer */
/* Every kernel gets the same runtime arguments. */
#define ADD1_ARG_SRC 0u   /* interleaved DRAM buffer of input tiles */
#define ADD1_ARG_DST 1u   /* interleaved DRAM buffer of output tiles */
#define ADD1_ARG_TILES 2u
#define ADD1_ARG_PAGE 3u  /* bytes per tile (2048 for bf16) */

/* ---- the two-tile pipeline: A sends, B adds one (add-one's TRISC kernels) and returns ---- */
/* Runtime arguments of every pipeline kernel (tiles and page where add-one keeps them). */
#define PIPE_ARG_PEER_X 0u  /* the other tile, NoC #0 coordinates */
#define PIPE_ARG_PEER_Y 1u
#define PIPE_ARG_TILES 2u   /* = ADD1_ARG_TILES */
#define PIPE_ARG_PAGE 3u    /* = ADD1_ARG_PAGE */
#define PIPE_ARG_SEM 4u     /* L1 address of the launch's semaphore 0 (the same on both tiles) */
#define PIPE_ARG_LOCAL 5u   /* A: its input tiles */
#define PIPE_ARG_REMOTE 6u  /* A: B's input CB (c_0, one page per tile); B: A's result buffer */

#endif /* METAL_H */
