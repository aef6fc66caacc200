/* Two Tensix threads handing a value over through the configuration registers: TRISC0 writes
 * Config word 68 and 69 with WRCFG and SEMPOSTs semaphore 1 after each; TRISC1 SEMWAITs for it,
 * RDCFGs the word and SEMGETs, twice; TRISC0 SEMINITs the semaphore first and releases TRISC1. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)
#define FLAG ((volatile uint32_t *)0x40040u)
#define BLOCK_CFG (1u << 7) /* STALLWAIT / SEMWAIT block bit B7: the configuration unit (RDCFG) */

int main(void)
{
#ifdef SDK_CORE_TRISC0
    GPR[8] = IN[0];
    GPR[9] = IN[1];
    TTI_SEMINIT(15, 0, 0x02);
    tk_wait_pipe_idle();
    sdk_fence();
    *FLAG = 1u; /* TRISC1 may start waiting */
    TTI_WRCFG(8, 0, 68);
    tk_wait_pipe_idle(); /* the word is written before the post */
    TTI_SEMPOST(0x02);
    TTI_WRCFG(9, 0, 69);
    tk_wait_pipe_idle();
    TTI_SEMPOST(0x02);
    tk_wait_pipe_idle();
#else
    while (*FLAG == 0u)
        sdk_fence();
    GPR[20] = 0u;
    GPR[21] = 0u;
    tk_wait_pipe_idle();
    TTI_SEMWAIT(BLOCK_CFG | TK_BLOCK_SYNC, 0x02, TK_SEMWAIT_ZERO);
    TTI_RDCFG(20, 68);
    TTI_SEMGET(0x02);
    TTI_SEMWAIT(BLOCK_CFG | TK_BLOCK_SYNC, 0x02, TK_SEMWAIT_ZERO);
    TTI_RDCFG(21, 69);
    TTI_SEMGET(0x02);
    tk_wait_pipe_idle();
    OUT[0] = GPR[20];
    OUT[1] = GPR[21];
#endif
    return 0;
}
