/* Tensix semaphores from TRISC0's pipe, several per instruction (sem_sel masks): SEMINIT, SEMPOST
 * past the maximum, SEMGET at zero, and the MMIO view after each step (a store with bit 0 clear
 * posts, set takes one). */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_kernel.h"

#define OUT ((volatile uint32_t *)0x40000u)

static uint32_t o;

static void snapshot(void)
{
    tk_wait_pipe_idle();
    for (uint32_t s = 0; s < 8u; s++)
        OUT[o++] = tk_sem_read(s) & 0xFu;
}

int main(void)
{
    TTI_SEMINIT(2, 0, 0x03); /* sems 0 and 1: max 2, value 0 */
    TTI_SEMINIT(15, 7, 0x0C); /* sems 2 and 3: max 15, value 7 */
    TTI_SEMINIT(1, 1, 0xF0);
    snapshot();
    TTI_SEMPOST(0x01);
    TTI_SEMPOST(0x01);
    TTI_SEMPOST(0x01); /* at its maximum: stays 2 */
    TTI_SEMPOST(0x0C);
    snapshot();
    TTI_SEMGET(0x02); /* at zero: stays 0 */
    TTI_SEMGET(0x0D);
    TTI_SEMGET(0x30);
    snapshot();
    tk_sem_post(6);
    mmio_write32(TENSIX_SEMAPHORE_BASE + 4u * 2u, 1u); /* takes one */
    snapshot();
    return 0;
}
