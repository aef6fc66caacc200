/* The scalar unit's GPR arithmetic on TRISC0's pipe: 8 operand GPRs written through the GPR window,
 * then SETDMAREG halves, ADDDMAREG and MULDMAREG with register operands (chained); the GPRs
 * 4..47 are copied to L1 once the pipe is idle. tensix_dmareg_ext has the other scalar ops. */
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
    SET16(24, 0x1234u); /* GPR12 low */
    SET16(25, 0xBEEFu); /* GPR12 high */
    SET16(27, 0x8001u); /* GPR13 high only */
    TTI_ADDDMAREG(0, 14, 5, 4);
    TTI_MULDMAREG(0, 18, 5, 4);
    TTI_MULDMAREG(0, 20, 11, 10);
    TTI_ADDDMAREG(0, 33, 14, 12); /* chains on earlier results */
    TTI_MULDMAREG(0, 34, 33, 18);
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 44u; i++)
        OUT[i] = GPR[4u + i];
    return 0;
}
