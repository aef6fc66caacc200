/* TRISC1: KERNEL_OP (ELWADD, ELWSUB or ELWMUL) of SrcA and SrcB into alternate Dst halves.
 * ELWMUL runs KERNEL_PHASES fidelity phases (4: HiFi4, every mantissa bit of BF16 operands). */
#include "kernels.h"

#ifndef KERNEL_OP
#define KERNEL_OP ELWADD
#endif
#ifndef KERNEL_PHASES
#define KERNEL_PHASES 1u
#endif
#ifndef KERNEL_SRCA_FMT
#define KERNEL_SRCA_FMT KERNEL_IN_FMT
#endif
#ifndef KERNEL_SRCB_FMT
#define KERNEL_SRCB_FMT KERNEL_IN_FMT
#endif

int main(void)
{
    tk_math_configure(KERNEL_SRCA_FMT, KERNEL_SRCB_FMT);
    TK_MATH_INIT_SYNC();
    tk_math_eltwise_addr_mods();
    for (uint32_t t = 0; t < KERNEL_TILES; t++) {
        uint32_t half = t & 1u;
        tk_math_acquire_dst(half);
        if (KERNEL_PHASES == 1u) {
            TK_ELTWISE_PASS(KERNEL_OP, 1, 3);
        } else {
            for (uint32_t p = 0; p + 1u < KERNEL_PHASES; p++)
                TK_ELTWISE_PASS(KERNEL_OP, 2, 0);
            TK_ELTWISE_PASS(KERNEL_OP, 3, 3);
        }
        tk_math_release_dst(half);
    }
    return 0;
}
