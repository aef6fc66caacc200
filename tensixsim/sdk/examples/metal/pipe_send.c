/* Pipeline, tile A (BRISC, NoC NOC_INDEX): each input tile from A's L1 into B's input CB, page t
 * for tile t, each followed by an increment of B's semaphore; then wait until B has counted A's own
 * semaphore up once per result tile written back. */
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t bx = args[PIPE_ARG_PEER_X], by = args[PIPE_ARG_PEER_Y], tiles = args[PIPE_ARG_TILES];
    uint32_t page = args[PIPE_ARG_PAGE], sem = args[PIPE_ARG_SEM];

    for (uint32_t t = 0; t < tiles; t++) {
        /* acknowledged before the increment: B never sees the count ahead of the data */
        metal_write_to(NOC_INDEX, args[PIPE_ARG_LOCAL] + t * page, bx, by, args[PIPE_ARG_REMOTE] + t * page, page);
        metal_semaphore_inc(NOC_INDEX, bx, by, sem, 1u);
    }
    metal_semaphore_wait_min(sem, tiles);
    return 0;
}
