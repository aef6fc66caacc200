/* NCRISC: copy each packed tile from the output circular buffer to its place at KERNEL_DST. */
#include "kernels.h"

static tk_cb out;

int main(void)
{
    tk_cb_init(&out, KERNEL_CB_OUT_STREAM, KERNEL_CB_OUT_BASE, KERNEL_OUT_PAGE, KERNEL_CB_PAGES, 0);
    for (uint32_t t = 0; t < KERNEL_OUT_TILES; t++) {
        tk_cb_wait_front(&out, 1);
        kernel_copy(KERNEL_DST + t * KERNEL_OUT_PAGE, tk_cb_page(&out, 0), KERNEL_OUT_PAGE);
        tk_cb_pop_front(&out);
    }
    return 0;
}
