/* TRISC1: C = A @ B in tiles; each output tile accumulates its KERNEL_MATMUL_KT inner tile
 * products in one Dst half, at KERNEL_PHASES fidelity phases (1 LoFi .. 4 HiFi4). */
#include "kernels.h"

#ifndef KERNEL_PHASES
#define KERNEL_PHASES 4u
#endif

int main(void)
{
    tk_math_configure(TK_FMT_BF16, TK_FMT_BF16);
    TK_MATH_INIT_SYNC();
    tk_matmul_init(KERNEL_PHASES);
    for (uint32_t t = 0; t < KERNEL_MATMUL_MT * KERNEL_MATMUL_NT; t++) {
        uint32_t half = t & 1u;
        tk_math_acquire_dst(half);
        for (uint32_t k = 0; k < KERNEL_MATMUL_KT; k++)
            TK_MATMUL_TILE();
        tk_math_release_dst(half);
    }
    return 0;
}
