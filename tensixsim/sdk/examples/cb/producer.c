/* TRISC0: fill a page, push it (stream counter + Tensix semaphore), NUM_TILES times. */
#include "cb.h"

int main(void)
{
    uint16_t pushed = (uint16_t)*TILES_RECEIVED; /* the host may start the counters anywhere */
    for (uint32_t t = 0; t < NUM_TILES; t++) {
        while ((uint16_t)(pushed - (uint16_t)*TILES_ACKED) >= CB_PAGES)
            ; /* cb_reserve_back */
        volatile uint32_t *page = CB_PAGE(t);
        for (uint32_t i = 0; i < PAGE_WORDS; i++)
            page[i] = cb_pattern(t, i);
        pushed++;
        *TILES_RECEIVED = *TILES_RECEIVED + 1; /* cb_push_back */
        TTI_SEMPOST(CB_SEM_MASK);
    }
    return 0;
}
