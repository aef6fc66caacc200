/* TRISC2: wait for a page (stream counter and Tensix semaphore), copy it out, pop it. Returns the
 * largest semaphore value it saw. */
#include "cb.h"

int main(void)
{
    volatile uint32_t *sem = (volatile uint32_t *)(TENSIX_SEMAPHORE_BASE + 4u * CB_SEM);
    volatile uint32_t *out = (volatile uint32_t *)OUT_BASE;
    uint16_t popped = (uint16_t)*TILES_ACKED;
    uint32_t most = 0;
    for (uint32_t t = 0; t < NUM_TILES; t++) {
        while ((uint16_t)((uint16_t)*TILES_RECEIVED - popped) == 0)
            ; /* cb_wait_front */
        uint32_t credits;
        while ((credits = *sem) == 0)
            ;
        if (credits > most)
            most = credits;
        TTI_SEMGET(CB_SEM_MASK);
        volatile uint32_t *page = CB_PAGE(t);
        for (uint32_t i = 0; i < PAGE_WORDS; i++)
            out[t * PAGE_WORDS + i] = page[i];
        popped++;
        *TILES_ACKED = *TILES_ACKED + 1; /* cb_pop_front */
    }
    return (int)most;
}
