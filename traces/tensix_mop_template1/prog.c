/* MOP template 1 on TRISC0's pipe: outer loop 3, inner loop 4, start op, two end ops, a loop op and
 * the two "last instruction" ops, all scalar-unit GPR arithmetic, so the GPRs show which
 * instructions the expander emitted and in what order (MULDMAREG makes the order matter). */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)
#define MOP ((volatile uint32_t *)TENSIX_MOP_CFG_BASE)

int main(void)
{
    GPR[10] = 1u;  /* accumulator */
    GPR[11] = 3u;  /* step */
    GPR[12] = 0u;  /* counts end ops */
    GPR[13] = 1u;
    GPR[14] = 2u;  /* multiplier */
    GPR[15] = 0u;  /* counts last ops */
    GPR[16] = 5u;
    tk_wait_pipe_idle();
    MOP[0] = 3u;                                /* outer loop count */
    MOP[1] = 4u;                                /* inner loop count */
    MOP[2] = TT_OP_MULDMAREG(0, 10, 14, 10);    /* start op: acc *= 2 */
    MOP[3] = TT_OP_ADDDMAREG(0, 12, 13, 12);    /* end op 0 */
    MOP[4] = TT_OP_ADDDMAREG(0, 10, 12, 10);    /* end op 1: acc += end count */
    MOP[5] = TT_OP_ADDDMAREG(0, 10, 11, 10);    /* loop op: acc += 3 */
    MOP[6] = TT_OP_NOP;                         /* no alternate loop op */
    MOP[7] = TT_OP_ADDDMAREG(0, 15, 16, 15);    /* last of the last inner loop: += 5 */
    MOP[8] = TT_OP_ADDDMAREG(0, 15, 13, 15);    /* last of the other inner loops: += 1 */
    TTI_MOP(1, 0, 0);
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 8u; i++)
        OUT[i] = GPR[10u + i];
    return 0;
}
