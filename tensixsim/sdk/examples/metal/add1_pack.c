/* Add-one, TRISC2: each full Dst half, read as FP32 and rounded to BF16, into the next page of
 * c_16. A page is pushed once the packer has finished writing it (the pipe is idle), which is also
 * when the next tile's L1 address and Dst half may be written. */
#include "tensix_kernel.h"
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    uint32_t tiles = rta_l1_base[ADD1_ARG_TILES];

    tk_pack_configure(TK_FMT_BF16, TK_FMT_BF16);
    tk_pack_init();
    for (uint32_t t = 0; t < tiles; t++) {
        tk_wait_pipe_idle();
        if (t)
            metal_trisc_push_back(ADD1_CB_OUT, 1);
        metal_trisc_reserve_back(ADD1_CB_OUT, 1);
        tk_pack_set_target(cb_interface[ADD1_CB_OUT].fifo_wr_ptr << 4, t & 1u);
        TK_PACK_TILE();
    }
    tk_wait_pipe_idle();
    if (tiles)
        metal_trisc_push_back(ADD1_CB_OUT, 1);
    return 0;
}
