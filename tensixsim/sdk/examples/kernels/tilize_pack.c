/* TRISC2 of the fp32 tilize / untilize kernels (tilize.h): each full Dst half is packed as one
 * 4096-byte fp32 block, tilized (four faces) or untilized (32 rows of 32), into the next page of the
 * output circular buffer, or for the round trip's first pass of the mid buffer. A page is pushed
 * only once the packer has finished writing it, which is also when the next target may be set. */
#include "tilize.h"

static tk_cb out, mid;

int main(void)
{
    tk_cb *pending = 0;
    tk_cb_init(&out, KERNEL_CB_OUT_STREAM, KERNEL_CB_OUT_BASE, KERNEL_OUT_PAGE, KERNEL_CB_PAGES, 1);
    tk_cb_init(&mid, KERNEL_CB_MID_STREAM, KERNEL_CB_MID_BASE, KERNEL_OUT_PAGE, KERNEL_CB_MID_PAGES, 1);
    tk_pack_block_configure();
    tk_pack_block_init(!tilize_pass_writes_tiles(0));
    for (uint32_t p = 0; p < TILIZE_PASSES; p++) {
        tk_cb *cb = TILIZE_ROUND_TRIP && (p & 1u) == 0u ? &mid : &out;
        tk_wait_pipe_idle();
        if (pending)
            tk_cb_push_back(pending);
        tk_cb_reserve_back(cb);
        tk_pack_set_target(tk_cb_page(cb, 0), p & 1u);
        if (TILIZE_ROUND_TRIP)
            tk_pack_block_step(!tilize_pass_writes_tiles(p));
        if (tilize_pass_writes_tiles(p))
            TK_PACK_BLOCK_TILIZE();
        else
            TK_PACK_BLOCK_UNTILIZE();
        pending = cb;
    }
    tk_wait_pipe_idle();
    if (pending)
        tk_cb_push_back(pending);
    return 0;
}
