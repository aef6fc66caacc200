/* Tensix push benchmark, for a TRISC: push TENSIX_PUSH_COUNT (default 64) Tensix NOPs into this
 * core's pipe, the first half as inline instruction words (TTI_NOP: the word rotated left by 2,
 * 0x08000000 on Blackhole), the second half as 32-bit stores to TENSIX_PUSH_OWN_ADDR, then return
 * the count. NOP is harmless in any state, so the pipe's own work does not disturb the measurement.
 * The inline words go one a cycle, as the capture backend takes them: fused four a cycle (cfg0's
 * DisTriscCache clear, as out of reset) they would keep the queue full, and the measurement is of
 * capture, not of a core waiting for room.
 */
#include "tensixsim.h"
#include "tensix_ops.h"

#ifndef TENSIX_PUSH_COUNT
#define TENSIX_PUSH_COUNT 64u
#endif

int main(void)
{
#ifdef CSR_CFG0
    __asm__ volatile("csrs %0, %1" ::"i"(CSR_CFG0), "r"(1u << 18)); /* DisTriscCache */
#endif
    uint32_t inline_count = TENSIX_PUSH_COUNT / 2u;
    uint32_t store_count = TENSIX_PUSH_COUNT - inline_count;

    /* Unrolled so the pushes, not the loop control, dominate the instruction stream. */
#pragma GCC unroll 8
    for (uint32_t i = 0; i < inline_count; i++)
        TTI_NOP;

    __asm__ volatile("" ::: "memory"); /* keep the two phases in order */

#pragma GCC unroll 8
    for (uint32_t i = 0; i < store_count; i++)
        tensix_push_own(TT_OP_NOP);

    return (int)TENSIX_PUSH_COUNT;
}
