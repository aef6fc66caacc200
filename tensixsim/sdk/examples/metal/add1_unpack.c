/* Add-one, TRISC0: each input tile (c_0) into SrcA, the ones tile (c_1, kept for the whole run) into
 * SrcB. An input page is popped once the unpackers have finished reading it (the pipe is idle),
 * which is also when the next tile's L1 address may be written. */
#include "tensix_kernel.h"
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    uint32_t tiles = rta_l1_base[ADD1_ARG_TILES];

    tk_unpack_configure(0, TK_FMT_BF16, TK_FMT_BF16);
    tk_unpack_configure(1, TK_FMT_BF16, TK_FMT_BF16);
    tk_unpack_init_adcs();
    metal_trisc_wait_front(ADD1_CB_ONES, 1);
    tk_unpack_set_address(1, cb_interface[ADD1_CB_ONES].fifo_rd_ptr << 4);
    for (uint32_t t = 0; t < tiles; t++) {
        tk_wait_pipe_idle();
        if (t)
            metal_trisc_pop_front(ADD1_CB_IN, 1);
        metal_trisc_wait_front(ADD1_CB_IN, 1);
        tk_unpack_set_address(0, cb_interface[ADD1_CB_IN].fifo_rd_ptr << 4);
        TK_UNPACK_REWIND();
        TK_UNPACK_TILE_A();
        TK_UNPACK_TILE_B();
    }
    tk_wait_pipe_idle();
    if (tiles)
        metal_trisc_pop_front(ADD1_CB_IN, 1);
    metal_trisc_pop_front(ADD1_CB_ONES, 1);
    return 0;
}
