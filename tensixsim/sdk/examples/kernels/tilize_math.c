/* TRISC1 of the fp32 tilize / untilize kernels (tilize.h): the unpacker writes Dst itself, so the
 * matrix unit only manages the two Dst halves: clear one once the packer has left it (the SEMWAIT in
 * tk_math_acquire_dst holds while the packer has both), offer it to TRISC0, and hand it to the
 * packer once TRISC0 has filled it. */
#include "tilize.h"

int main(void)
{
    tk_math_configure(TK_FMT_FP32, TK_FMT_FP32);
    TK_MATH_INIT_SYNC();
    for (uint32_t p = 0; p < TILIZE_PASSES; p++) {
        tk_math_offer_dst(p & 1u);
        tk_math_pass_dst();
    }
    return 0;
}
