/* Add-one reader (NCRISC, tt-metal's reader role, NoC NOC_INDEX): one tile of bf16 1.0 into c_1,
 * then each input tile from the interleaved DRAM buffer into c_0. */
#include "metal.h"

#define BF16_ONE_PAIR 0x3F803F80u

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t src = args[ADD1_ARG_SRC], tiles = args[ADD1_ARG_TILES], page = args[ADD1_ARG_PAGE];

    cb_reserve_back(ADD1_CB_ONES, 1);
    volatile uint32_t *ones = (volatile uint32_t *)(uintptr_t)cb_interface[ADD1_CB_ONES].fifo_wr_ptr;
    for (uint32_t i = 0; i < page / 4u; i++)
        ones[i] = BF16_ONE_PAIR;
    cb_push_back(ADD1_CB_ONES, 1);

    for (uint32_t t = 0; t < tiles; t++) {
        cb_reserve_back(ADD1_CB_IN, 1);
        metal_read_page(NOC_INDEX, src, t, page, cb_interface[ADD1_CB_IN].fifo_wr_ptr);
        cb_push_back(ADD1_CB_IN, 1);
    }
    return 0;
}
