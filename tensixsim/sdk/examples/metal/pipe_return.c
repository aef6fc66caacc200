/* Pipeline, tile B's writer (BRISC, NoC NOC_INDEX): each packed tile from c_16 to A's result buffer,
 * then an increment of A's semaphore. */
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t ax = args[PIPE_ARG_PEER_X], ay = args[PIPE_ARG_PEER_Y], tiles = args[PIPE_ARG_TILES];
    uint32_t page = args[PIPE_ARG_PAGE], sem = args[PIPE_ARG_SEM];

    for (uint32_t t = 0; t < tiles; t++) {
        cb_wait_front(ADD1_CB_OUT, 1);
        metal_write_to(NOC_INDEX, cb_interface[ADD1_CB_OUT].fifo_rd_ptr, ax, ay, args[PIPE_ARG_REMOTE] + t * page, page);
        metal_semaphore_inc(NOC_INDEX, ax, ay, sem, 1u);
        cb_pop_front(ADD1_CB_OUT, 1);
    }
    return 0;
}
