/* NoC requests from a Tensix tile's BRISC / NCRISC through NIU #0, initiator 0, raw NoC #0
 * coordinates (no translation), and the layout of the chip examples (pair_a.c, pair_b.c, ring.c).
 *
 * Register offsets and NOC_CTRL bits from BlackholeA0/NoC/MemoryMap.md (and Wormhole's, below),
 * counters from Counters.md,
 * the atomic increment encoding from Atomics.md. Each helper issues one request; the *_wait helpers
 * poll this NIU's counters (a transfer is complete when its counter reaches the count expected). */
#ifndef CHIP_NOC_H
#define CHIP_NOC_H

#include <stdint.h>
#include "tensixsim.h"

#define NIU0 0xFFB20000u
#define NOC_TARG_LO 0x00u
#define NOC_TARG_MID 0x04u
#define NOC_TARG_HI 0x08u
#define NOC_RET_LO 0x0Cu
#define NOC_RET_MID 0x10u
#define NOC_RET_HI 0x14u
#define NOC_PACKET_TAG 0x18u
#define NOC_CTRL 0x1Cu
#define NOC_AT_LEN_BE 0x20u
/* Where the chips differ (WormholeB0/NoC/MemoryMap.md for Wormhole): Wormhole has no NOC_AT_LEN_BE_1,
 * its NOC_AT_DATA, NOC_CMD_CTRL and NOC_NODE_ID sit lower, and a request's coordinates (or broadcast
 * rectangle) go in its _MID registers from bit 4 rather than in _HI. */
#if defined(SDK_ARCH_WORMHOLE)
#define NOC_AT_DATA 0x24u
#define NOC_CMD_CTRL 0x28u
#define NOC_NODE_ID 0x2Cu
#define NOC_XY_MID(xy) ((xy) << 4)
#define NOC_XY_HI(xy) 0u
#else
#define NOC_AT_LEN_BE_1 0x24u
#define NOC_AT_DATA 0x28u
#define NOC_CMD_CTRL 0x40u
#define NOC_NODE_ID 0x44u
#define NOC_XY_MID(xy) 0u
#define NOC_XY_HI(xy) (xy)
#endif
#define NOC_COUNTER(i) (0x200u + 4u * (i))
#define NOC_WR_ACK_RECEIVED 1u
#define NOC_RD_RESP_RECEIVED 2u

#define NOC_CMD_RD 0x0u
#define NOC_CMD_AT 0x1u
#define NOC_CMD_WR 0x2u
#define NOC_CMD_WR_INLINE (1u << 3)
#define NOC_CMD_RESP_MARKED (1u << 4)
#define NOC_CMD_BRCST_PACKET (1u << 5)
#define NOC_CMD_BRCST_SRC_INCLUDE (1u << 17)
/* Atomic increment of a whole 32-bit word (IntWidth 31) at word Ofs of the 16-byte line. */
#define NOC_AT_INCREMENT(ofs) ((1u << 12) | (31u << 2) | ((ofs) & 3u))

/* Shared layout (L1 of every tile): arguments the host writes, buffers. */
#define CHIP_ARGS 0x20000u   /* uint32_t words, per program below */
#define CHIP_FLAG 0x20100u   /* 16-byte aligned: word 0 is counted up by NoC atomics */
#define CHIP_SRC 0x30000u
#define CHIP_DST 0x40000u   /* ring slots from here to the end of L1 */
#define CHIP_OUT 0x38000u   /* up to 32 KiB, below the ring slots */
/* A register another tile's inline write reaches: stream 0's scratch register. */
#define CHIP_SIGNAL STREAM_REG_ADDR(0, 31)

static inline volatile uint32_t *chip_args(void) { return (volatile uint32_t *)CHIP_ARGS; }

static inline uint32_t noc_xy(uint32_t x, uint32_t y) { return x | y << 6; }

static inline uint32_t noc_own_xy(void) { return mmio_read32(NIU0 + NOC_NODE_ID) & 0xFFFu; }

static inline void noc_request(uint32_t targ, uint32_t targ_hi, uint32_t ret, uint32_t ret_hi, uint32_t ctrl,
                               uint32_t len, uint32_t data)
{
    mmio_write32(NIU0 + NOC_TARG_LO, targ);
    mmio_write32(NIU0 + NOC_TARG_MID, NOC_XY_MID(targ_hi));
    mmio_write32(NIU0 + NOC_TARG_HI, NOC_XY_HI(targ_hi));
    mmio_write32(NIU0 + NOC_RET_LO, ret);
    mmio_write32(NIU0 + NOC_RET_MID, NOC_XY_MID(ret_hi));
    mmio_write32(NIU0 + NOC_RET_HI, NOC_XY_HI(ret_hi));
    mmio_write32(NIU0 + NOC_CTRL, ctrl);
    mmio_write32(NIU0 + NOC_AT_LEN_BE, len);
#ifdef NOC_AT_LEN_BE_1
    mmio_write32(NIU0 + NOC_AT_LEN_BE_1, 0u);
#endif
    mmio_write32(NIU0 + NOC_AT_DATA, data);
    mmio_write32(NIU0 + NOC_CMD_CTRL, 1u);
}

/* Write len bytes from this tile's L1 at src to (x, y)'s L1 at dst, acknowledged. */
static inline void noc_write(uint32_t src, uint32_t x, uint32_t y, uint32_t dst, uint32_t len)
{
    noc_request(src, noc_own_xy(), dst, noc_xy(x, y), NOC_CMD_WR | NOC_CMD_RESP_MARKED, len, 0u);
}

/* Write len bytes from this tile's L1 at src to dst in every Tensix tile of the rectangle
 * (x0, y0)..(x1, y1) (this tile too with include_self); each receiver acknowledges it. The
 * rectangle goes in NOC_RET_ADDR_HI: its end in bits 0..11, its start in bits 12..23. */
static inline void noc_write_multicast(uint32_t src, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                                       uint32_t dst, uint32_t len, int include_self)
{
    uint32_t ctrl = NOC_CMD_WR | NOC_CMD_RESP_MARKED | NOC_CMD_BRCST_PACKET;
    if (include_self)
        ctrl |= NOC_CMD_BRCST_SRC_INCLUDE;
    noc_request(src, noc_own_xy(), dst, noc_xy(x1, y1) | noc_xy(x0, y0) << 12, ctrl, len, 0u);
}

/* Read len bytes from (x, y)'s memory at src into this tile's L1 at dst. */
static inline void noc_read(uint32_t x, uint32_t y, uint32_t src, uint32_t dst, uint32_t len)
{
    noc_request(src, noc_xy(x, y), dst, noc_own_xy(), NOC_CMD_RD, len, 0u);
}

/* Write one 32-bit value to a register of (x, y) (inline writes to L1 are unsafe on Blackhole). */
static inline void noc_inline_write(uint32_t x, uint32_t y, uint32_t addr, uint32_t value)
{
    noc_request(addr, noc_xy(x, y), 0u, 0u, NOC_CMD_WR | NOC_CMD_WR_INLINE, 4u, value);
}

/* Add inc to the 32-bit word at addr (16-byte aligned line, word Ofs from addr) in (x, y)'s L1; posted. */
static inline void noc_atomic_inc(uint32_t x, uint32_t y, uint32_t addr, uint32_t inc)
{
    noc_request(addr, noc_xy(x, y), 0u, 0u, NOC_CMD_AT, NOC_AT_INCREMENT(addr >> 2), inc);
}

static inline void noc_wait_counter(uint32_t counter, uint32_t at_least)
{
    while (mmio_read32(NIU0 + NOC_COUNTER(counter)) < at_least)
        ;
}

static inline void wait_l1_at_least(volatile uint32_t *word, uint32_t at_least)
{
    while (*word < at_least)
        ;
}

#endif
