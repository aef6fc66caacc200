/* Add-one writer (BRISC, tt-metal's writer role, NoC NOC_INDEX): each packed tile from c_16 to the
 * interleaved DRAM buffer. */
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t dst = args[ADD1_ARG_DST], tiles = args[ADD1_ARG_TILES], page = args[ADD1_ARG_PAGE];

    for (uint32_t t = 0; t < tiles; t++) {
        cb_wait_front(ADD1_CB_OUT, 1);
        metal_write_page(NOC_INDEX, dst, t, page, cb_interface[ADD1_CB_OUT].fifo_rd_ptr);
        cb_pop_front(ADD1_CB_OUT, 1);
    }
    return 0;
}
