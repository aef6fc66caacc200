/* TRISC0 of the fp32 tilize / untilize kernels (tilize.h): each Dst pass unpacks one block from the
 * front of a circular buffer (input 0, or for the round trip's second pass the mid buffer) into a
 * Dst half with one UNPACR. A half is written only once TRISC1 has cleared it (TK_SEM_DST_FREE) and
 * announced full (TK_SEM_DST_FULL) only once the UNPACR has finished, when the page is popped too
 * and the next pass's configuration may be written. */
#include "tilize.h"

static tk_cb in0, mid;

int main(void)
{
    tk_cb_init(&in0, KERNEL_CB_IN0_STREAM, KERNEL_CB_IN0_BASE, KERNEL_IN_PAGE, KERNEL_CB_PAGES, 0);
    tk_cb_init(&mid, KERNEL_CB_MID_STREAM, KERNEL_CB_MID_BASE, KERNEL_OUT_PAGE, KERNEL_CB_MID_PAGES, 0);
    tk_unpack_dst_configure(tilize_pass_reads_rows(0), KERNEL_ROW_BYTES);
    for (uint32_t p = 0; p < TILIZE_PASSES; p++) {
        tk_cb *cb = TILIZE_ROUND_TRIP && (p & 1u) ? &mid : &in0;
        tk_cb_wait_front(cb, 1);
        tk_sem_take(TK_SEM_DST_FREE);
        if (TILIZE_ROUND_TRIP)
            tk_unpack_dst_tileize(tilize_pass_reads_rows(p), KERNEL_ROW_BYTES);
        tk_unpack_set_address(0, tk_cb_page(cb, 0));
        tk_unpack_dst_half(p & 1u);
        tk_unpack_block_to_dst(tilize_pass_reads_rows(p));
        tk_wait_pipe_idle();
        tk_sem_post(TK_SEM_DST_FULL);
        tk_cb_pop_front(cb);
    }
    return 0;
}
