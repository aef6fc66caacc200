/* A circular buffer between TRISC0 (producer) and TRISC2 (consumer), kept the way tt-metal keeps
 * one: pages in L1, "tiles received" / "tiles acked" counters in a stream's registers (the chip's
 * STREAM_TILES_RECEIVED_REG / STREAM_TILES_ACKED_REG), compared with 16-bit arithmetic so that they may wrap. Each page is also counted on a Tensix
 * semaphore: the producer posts it with SEMPOST, the consumer polls it through MMIO and takes it
 * with SEMGET. */
#ifndef CB_EXAMPLE_H
#define CB_EXAMPLE_H
#include "tensixsim.h"
#include "tensix_ops.h"

#define CB_STREAM 5u
#define CB_PAGES 4u
#define PAGE_WORDS 16u
#define NUM_TILES 40u
#define CB_BASE (SDK_L1_USER_BASE + 0x10000u)
#define OUT_BASE (SDK_L1_USER_BASE + 0x20000u)
#define CB_SEM 2u
#define CB_SEM_MASK (1u << CB_SEM)

#define TILES_RECEIVED ((volatile uint32_t *)STREAM_REG_ADDR(CB_STREAM, STREAM_TILES_RECEIVED_REG))
#define TILES_ACKED ((volatile uint32_t *)STREAM_REG_ADDR(CB_STREAM, STREAM_TILES_ACKED_REG))
#define CB_PAGE(t) ((volatile uint32_t *)(CB_BASE + ((t) % CB_PAGES) * PAGE_WORDS * 4u))

static inline uint32_t cb_pattern(uint32_t tile, uint32_t word)
{
    return (tile * 0x9E3779B9u) ^ (word * 0x01000193u) ^ 0xC0FFEE00u;
}
#endif
