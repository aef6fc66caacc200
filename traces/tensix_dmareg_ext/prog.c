/* The scalar unit's GPR arithmetic on TRISC0's pipe: 8 operand GPRs written through the GPR window,
 * then SUBDMAREG, BITWOPDMAREG (and, or, xor), SHIFTDMAREG (left, right), CMPDMAREG (gt, lt,
 * eq), and ADD/SUB/MUL/BITWOP/SHIFT/CMPDMAREG with a constant operand; the GPRs 4..47 are copied
 * to L1 once the pipe is idle. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)
#define SET16(half, v) TTI_SETDMAREG(((v) >> 14) & 3u, (v) & 0x3FFFu, 0, (half))

int main(void)
{
    for (uint32_t i = 0; i < 8u; i++)
        GPR[4u + i] = IN[i];
    for (uint32_t i = 12u; i < 48u; i++)
        GPR[i] = 0u;
    tk_wait_pipe_idle();
    TTI_ADDDMAREG(1, 15, 63, 6);
    TTI_SUBDMAREG(0, 16, 7, 4);
    TTI_SUBDMAREG(1, 17, 17, 5);
    TTI_MULDMAREG(1, 19, 45, 7);
    TTI_BITWOPDMAREG(0, 0, 21, 5, 4);
    TTI_BITWOPDMAREG(0, 1, 22, 5, 4);
    TTI_BITWOPDMAREG(0, 2, 23, 5, 4);
    TTI_BITWOPDMAREG(1, 2, 24, 42, 6);
    TTI_SHIFTDMAREG(1, 0, 25, 3, 4);
    TTI_SHIFTDMAREG(1, 1, 26, 9, 5);
    TTI_SHIFTDMAREG(0, 0, 27, 8, 6);
    TTI_SHIFTDMAREG(0, 1, 28, 9, 7);
    TTI_CMPDMAREG(0, 0, 29, 5, 4);
    TTI_CMPDMAREG(0, 1, 30, 5, 4);
    TTI_CMPDMAREG(0, 2, 31, 4, 4);
    TTI_CMPDMAREG(1, 0, 32, 60, 6);
    TTI_SUBDMAREG(0, 34, 16, 17); /* chains on earlier results */
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 44u; i++)
        OUT[i] = GPR[4u + i];
    return 0;
}
