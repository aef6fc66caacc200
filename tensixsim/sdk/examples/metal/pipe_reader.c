/* Pipeline, tile B's reader (NCRISC): the ones tile into c_1 (as add-one's reader), then hand each
 * tile A wrote into c_0 to the unpacker once B's semaphore says it has landed. */
#include "metal.h"

#define BF16_ONE_PAIR 0x3F803F80u

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t tiles = args[PIPE_ARG_TILES], page = args[PIPE_ARG_PAGE], sem = args[PIPE_ARG_SEM];

    cb_reserve_back(ADD1_CB_ONES, 1);
    volatile uint32_t *ones = (volatile uint32_t *)(uintptr_t)cb_interface[ADD1_CB_ONES].fifo_wr_ptr;
    for (uint32_t i = 0; i < page / 4u; i++)
        ones[i] = BF16_ONE_PAIR;
    cb_push_back(ADD1_CB_ONES, 1);

    for (uint32_t t = 0; t < tiles; t++) {
        cb_reserve_back(ADD1_CB_IN, 1);
        metal_semaphore_wait_min(sem, t + 1u);
        cb_push_back(ADD1_CB_IN, 1);
    }
    return 0;
}
