/* TRISC2: pack each full Dst half into the next page of the output circular buffer. A page is pushed
 * only once the packer has finished writing it (the pipe is idle), which is also when the next
 * tile's L1 address and Dst half may be written. */
#include "kernels.h"

#if KERNEL_OUT_FMT == TK_FMT_BFP8
#error "pack.c packs fp32, fp16 or bf16: bfp8 output needs the packer's exponent section configured, which tk_pack_configure does not do"
#endif

static tk_cb out;

int main(void)
{
    tk_cb_init(&out, KERNEL_CB_OUT_STREAM, KERNEL_CB_OUT_BASE, KERNEL_OUT_PAGE, KERNEL_CB_PAGES, 1);
    tk_pack_configure(KERNEL_PACK_INTER, KERNEL_OUT_FMT);
    tk_pack_init();
    for (uint32_t t = 0; t < KERNEL_OUT_TILES; t++) {
        tk_wait_pipe_idle();
        if (t)
            tk_cb_push_back(&out);
        tk_cb_reserve_back(&out);
        tk_pack_set_target(tk_cb_page(&out, 0), t & 1u);
        TK_PACK_TILE();
    }
    tk_wait_pipe_idle();
    tk_cb_push_back(&out);
    return 0;
}
