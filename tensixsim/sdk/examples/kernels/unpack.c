/* TRISC0: unpack each tile (pair) from the front of the input circular buffers into SrcA / SrcB.
 * A page is popped only once the unpackers have finished reading it (the pipe is idle), which is
 * also when the next tile's L1 addresses may be written. */
#include "kernels.h"

static tk_cb in0, in1;

int main(void)
{
    tk_cb_init(&in0, KERNEL_CB_IN0_STREAM, KERNEL_CB_IN0_BASE, KERNEL_IN_PAGE, KERNEL_CB_PAGES, 0);
    tk_cb_init(&in1, KERNEL_CB_IN1_STREAM, KERNEL_CB_IN1_BASE, KERNEL_IN_PAGE, KERNEL_CB_PAGES, 0);
    tk_unpack_configure(0, KERNEL_IN_FMT, KERNEL_IN_FMT);
#ifndef KERNEL_ONE_INPUT
    tk_unpack_configure(1, KERNEL_IN_FMT, KERNEL_IN_FMT);
#endif
    tk_unpack_init_adcs();
    for (uint32_t t = 0; t < KERNEL_TILES; t++) {
        tk_wait_pipe_idle();
        if (t) {
            tk_cb_pop_front(&in0);
#ifndef KERNEL_ONE_INPUT
            tk_cb_pop_front(&in1);
#endif
        }
        tk_cb_wait_front(&in0, 1);
        tk_unpack_set_address(0, tk_cb_page(&in0, 0));
#ifndef KERNEL_ONE_INPUT
        tk_cb_wait_front(&in1, 1);
        tk_unpack_set_address(1, tk_cb_page(&in1, 0));
#endif
        TK_UNPACK_REWIND();
        TK_UNPACK_TILE_A();
#ifdef KERNEL_ONE_INPUT
        TK_UNPACK_ZERO_B();
#else
        TK_UNPACK_TILE_B();
#endif
    }
    tk_wait_pipe_idle();
    tk_cb_pop_front(&in0);
#ifndef KERNEL_ONE_INPUT
    tk_cb_pop_front(&in1);
#endif
    return 0;
}
