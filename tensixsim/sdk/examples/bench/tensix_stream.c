/* Tensix stream benchmark, for TRISC0: push TENSIX_STREAM_COUNT (default 64) SETDMAREG words into
 * this core's pipe, each executed by the coprocessor's scalar unit (immediate mode: one 16-bit value
 * into one half of a GPR), then return the count.
 *
 * The first half are inline instruction words. The assembler needs their operands as constants, so
 * they repeat a block of STREAM_BLOCK words: word j of a block writes STREAM_INLINE_VALUE(j) to
 * half-register STREAM_INLINE_HALF(j), and the last, partial block stops at the count. The second
 * half are 32-bit stores to TENSIX_PUSH_OWN_ADDR: store i (from 0) writes the loop counter's low 16
 * bits to half-register STREAM_STORE_HALF(i). The two halves write disjoint half-registers, so the
 * final GPRs show both. tensixsim.sdk.programs.tensix_stream_gprs models the same stream in Python.
 */
#include "tensixsim.h"
#include "tensix_ops.h"

#ifndef TENSIX_STREAM_COUNT
#define TENSIX_STREAM_COUNT 64u
#endif

#define STREAM_BLOCK 16u
#define STREAM_INLINE_VALUE(j) ((((j) * 0x9E37u) + 0x1234u) & 0xFFFFu)
#define STREAM_INLINE_HALF(j) (2u + (j) % 5u)   /* GPR1 low .. GPR3 low */
#define STREAM_STORE_HALF(i) (8u + (i) % 4u)    /* GPR4 low .. GPR5 high */

/* SETDMAREG's immediate is payload_sig_sel_size (value bits 15..14) and payload_sig_sel (13..0). */
#define STREAM_WORD(value, half) TT_OP_SETDMAREG((value) >> 14, (value) & 0x3FFFu, 0, (half))
#define STREAM_INLINE(j) \
    TTI_SETDMAREG(STREAM_INLINE_VALUE(j) >> 14, STREAM_INLINE_VALUE(j) & 0x3FFFu, 0, STREAM_INLINE_HALF(j))
#define STREAM_INLINE4(j) STREAM_INLINE(j); STREAM_INLINE((j) + 1u); STREAM_INLINE((j) + 2u); STREAM_INLINE((j) + 3u)
#define STREAM_INLINE_TAIL(j) if ((j) < STREAM_INLINE_COUNT % STREAM_BLOCK) STREAM_INLINE(j)
#define STREAM_STORE(i) tensix_push_own(STREAM_WORD((i) & 0xFFFFu, STREAM_STORE_HALF(i)))
/* What store k of a group of eight adds to the word of the group's first value and half-register 0:
 * k to the value (bits 23..8), STREAM_STORE_HALF(k) to the half-register (bits 6..0). */
#define STREAM_STEP(k) (((k) << 8) | STREAM_STORE_HALF(k))

#define STREAM_INLINE_COUNT (TENSIX_STREAM_COUNT / 2u)
#define STREAM_STORE_COUNT (TENSIX_STREAM_COUNT - STREAM_INLINE_COUNT)

int main(void)
{
    for (uint32_t b = 0; b < STREAM_INLINE_COUNT / STREAM_BLOCK; b++) {
        STREAM_INLINE4(0u);
        STREAM_INLINE4(4u);
        STREAM_INLINE4(8u);
        STREAM_INLINE4(12u);
    }
    /* The partial block: the count is a constant, so the compiler keeps only the words it needs. */
    STREAM_INLINE_TAIL(0u);
    STREAM_INLINE_TAIL(1u);
    STREAM_INLINE_TAIL(2u);
    STREAM_INLINE_TAIL(3u);
    STREAM_INLINE_TAIL(4u);
    STREAM_INLINE_TAIL(5u);
    STREAM_INLINE_TAIL(6u);
    STREAM_INLINE_TAIL(7u);
    STREAM_INLINE_TAIL(8u);
    STREAM_INLINE_TAIL(9u);
    STREAM_INLINE_TAIL(10u);
    STREAM_INLINE_TAIL(11u);
    STREAM_INLINE_TAIL(12u);
    STREAM_INLINE_TAIL(13u);
    STREAM_INLINE_TAIL(14u);

    __asm__ volatile("" ::: "memory"); /* keep the two phases in order */

    /* Unrolled by eight so the pushes, not the loop control, dominate the instruction stream. i is
     * a multiple of eight in the loop, and so of the 2^16 at which its low 16 bits wrap: store i + k
     * writes value (i & 0xFFFF) + k to STREAM_STORE_HALF(k), and its word is the group's word (value
     * i & 0xFFFF, half-register 0) plus a constant. One addi and one sw per push. */
    uint32_t i = 0;
    for (; i + 8u <= STREAM_STORE_COUNT; i += 8u) {
        uint32_t group = STREAM_WORD(i & 0xFFFFu, 0u);
        tensix_push_own(group + STREAM_STEP(0u));
        tensix_push_own(group + STREAM_STEP(1u));
        tensix_push_own(group + STREAM_STEP(2u));
        tensix_push_own(group + STREAM_STEP(3u));
        tensix_push_own(group + STREAM_STEP(4u));
        tensix_push_own(group + STREAM_STEP(5u));
        tensix_push_own(group + STREAM_STEP(6u));
        tensix_push_own(group + STREAM_STEP(7u));
    }
    for (; i < STREAM_STORE_COUNT; i++)
        STREAM_STORE(i);

    return (int)TENSIX_STREAM_COUNT;
}
