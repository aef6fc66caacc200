/* BRISC: start the other four cores, then copy input tiles into the input circular buffers in the
 * order TRISC0 unpacks them. */
#include "kernels.h"

static tk_cb in0, in1;

static void send(tk_cb *cb, uint32_t src)
{
    tk_cb_reserve_back(cb);
    kernel_copy(tk_cb_page(cb, 0), src, KERNEL_IN_PAGE);
    tk_cb_push_back(cb);
}

int main(void)
{
    tk_cb_init(&in0, KERNEL_CB_IN0_STREAM, KERNEL_CB_IN0_BASE, KERNEL_IN_PAGE, KERNEL_CB_PAGES, 1);
    tk_cb_init(&in1, KERNEL_CB_IN1_STREAM, KERNEL_CB_IN1_BASE, KERNEL_IN_PAGE, KERNEL_CB_PAGES, 1);
    release_cores(SOFT_RESET_NCRISC | SOFT_RESET_TRISC0 | SOFT_RESET_TRISC1 | SOFT_RESET_TRISC2);
#ifdef KERNEL_MATMUL_MT
    /* C[i][j] = sum over k of A[i][k] @ B[k][j]: SrcA (input 0) takes B's tile, SrcB A's. */
    for (uint32_t i = 0; i < KERNEL_MATMUL_MT; i++)
        for (uint32_t j = 0; j < KERNEL_MATMUL_NT; j++)
            for (uint32_t k = 0; k < KERNEL_MATMUL_KT; k++) {
                send(&in0, KERNEL_SRC1 + (k * KERNEL_MATMUL_NT + j) * KERNEL_IN_PAGE);
                send(&in1, KERNEL_SRC0 + (i * KERNEL_MATMUL_KT + k) * KERNEL_IN_PAGE);
            }
#else
    for (uint32_t t = 0; t < KERNEL_TILES; t++) {
        send(&in0, KERNEL_SRC0 + t * KERNEL_IN_PAGE);
#ifndef KERNEL_ONE_INPUT
        send(&in1, KERNEL_SRC1 + t * KERNEL_IN_PAGE);
#endif
    }
#endif
    return 0;
}
