/* MOP template 0 on TRISC0's pipe: 20 iterations (loop_count 19) under a 32-bit zmask (low half in
 * the MOP word, high half from MOP_CFG); unmasked iterations emit words 3..6 and 2, masked ones
 * words 7 and 8 (flags 3), each a distinct GPR update, so the GPRs count what was emitted. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)
#define MOP ((volatile uint32_t *)TENSIX_MOP_CFG_BASE)

int main(void)
{
    for (uint32_t i = 20u; i < 28u; i++)
        GPR[i] = 0u;
    GPR[30] = 1u;
    GPR[31] = 2u;
    tk_wait_pipe_idle();
    MOP[1] = 3u;                                /* flags: both optional ops */
    MOP[2] = TT_OP_ADDDMAREG(0, 20, 30, 20);    /* B, unmasked (flags bit 0) */
    MOP[3] = TT_OP_ADDDMAREG(0, 21, 30, 21);    /* A0 */
    MOP[4] = TT_OP_ADDDMAREG(0, 22, 31, 22);    /* A1 (flags bit 1) */
    MOP[5] = TT_OP_MULDMAREG(0, 23, 31, 21);    /* A2: 2 * A0's count */
    MOP[6] = TT_OP_ADDDMAREG(0, 24, 23, 24);    /* A3: sums those */
    MOP[7] = TT_OP_ADDDMAREG(0, 25, 30, 25);    /* masked: C */
    MOP[8] = TT_OP_ADDDMAREG(0, 26, 25, 26);    /* masked: D, sums C */
    TTI_MOP_CFG(0x0005u);                       /* zmask bits 16 and 18 (iteration 16, 18) */
    TTI_MOP(0, 19, 0xA0C3u);
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 8u; i++)
        OUT[i] = GPR[20u + i];
    return 0;
}
