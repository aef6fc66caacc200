/* Add-one, TRISC1: Dst = SrcA + SrcB (x + 1.0) per tile, BF16 sources, 32-bit Dst, tiles in
 * alternate Dst halves handed to the packer through semaphore TK_SEM_MATH_PACK. */
#include "tensix_kernel.h"
#include "metal.h"

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    uint32_t tiles = rta_l1_base[ADD1_ARG_TILES];

    tk_math_configure(TK_FMT_BF16, TK_FMT_BF16);
    TK_MATH_INIT_SYNC();
    tk_math_eltwise_addr_mods();
    for (uint32_t t = 0; t < tiles; t++) {
        uint32_t half = t & 1u;
        tk_math_acquire_dst(half);
        TK_ELTWISE_PASS(ELWADD, 1, 3);
        tk_math_release_dst(half);
    }
    tk_wait_pipe_idle();
    return 0;
}
