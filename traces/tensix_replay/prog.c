/* The replay buffer on TRISC0's pipe: load four GPR updates at index 5 without executing them,
 * replay them three times, load two more at index 30 (wrapping past 31) while executing them,
 * replay those twice, then a replay spanning both (index 5, length 2) once. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)

int main(void)
{
    for (uint32_t i = 20u; i < 28u; i++)
        GPR[i] = i;
    tk_wait_pipe_idle();
    TTI_REPLAY(5, 4, 0, 1);
    TTI_ADDDMAREG(0, 20, 21, 20);
    TTI_MULDMAREG(0, 22, 22, 23);
    TTI_ADDDMAREG(0, 24, 20, 24);
    TTI_ADDDMAREG(0, 25, 22, 25);
    TTI_REPLAY(5, 4, 0, 0);
    TTI_REPLAY(5, 4, 0, 0);
    TTI_REPLAY(5, 4, 0, 0);
    TTI_REPLAY(30, 2, 1, 1);
    TTI_ADDDMAREG(0, 26, 27, 26);
    TTI_MULDMAREG(0, 27, 21, 27);
    TTI_REPLAY(30, 2, 0, 0);
    TTI_REPLAY(30, 2, 0, 0);
    TTI_REPLAY(5, 2, 0, 0);
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 8u; i++)
        OUT[i] = GPR[20u + i];
    return 0;
}
