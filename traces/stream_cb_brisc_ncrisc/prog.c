/* A circular buffer from BRISC (producer) to NCRISC (consumer) kept on stream 7's registers only:
 * tiles received (register 10) and tiles acked (register 8), compared in 16 bits starting near the
 * wrap; 4 pages of 32 words, 24 pages through it. The consumer sums each page into the output. */
#include "tensixsim.h"

#define STREAM 7u
#define PAGES 4u
#define WORDS 32u
#define COUNT 24u
#define CB ((volatile uint32_t *)0x41000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define IN ((const volatile uint32_t *)0x30000u)
#define RECEIVED ((volatile uint32_t *)STREAM_REG_ADDR(STREAM, 10))
#define ACKED ((volatile uint32_t *)STREAM_REG_ADDR(STREAM, 8))
#define START 0xFFF6u

int main(void)
{
#ifdef SDK_CORE_BRISC
    *RECEIVED = START;
    *ACKED = START;
    release_cores(SOFT_RESET_NCRISC);
    uint16_t pushed = START;
    for (uint32_t t = 0; t < COUNT; t++) {
        while ((uint16_t)(pushed - (uint16_t)*ACKED) >= PAGES)
            ; /* reserve_back */
        volatile uint32_t *page = CB + (t % PAGES) * WORDS;
        for (uint32_t i = 0; i < WORDS; i++)
            page[i] = IN[i] * (t + 1u) + i;
        sdk_fence();
        *RECEIVED = *RECEIVED + 1u; /* push_back */
        pushed++;
    }
    while ((uint16_t)(pushed - (uint16_t)*ACKED) != 0)
        ;
    return 0;
#else
    uint16_t popped = START;
    for (uint32_t t = 0; t < COUNT; t++) {
        while ((uint16_t)((uint16_t)*RECEIVED - popped) == 0)
            ; /* wait_front */
        volatile uint32_t *page = CB + (t % PAGES) * WORDS;
        uint32_t sum = 0;
        for (uint32_t i = 0; i < WORDS; i++)
            sum += page[i] ^ i;
        OUT[t] = sum;
        popped++;
        *ACKED = *ACKED + 1u; /* pop_front */
    }
    OUT[COUNT] = *RECEIVED;
    OUT[COUNT + 1u] = *ACKED;
    return 0;
#endif
}
