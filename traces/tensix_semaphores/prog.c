/* Tensix semaphores from TRISC0's pipe, one semaphore per instruction: SEMINIT, SEMPOST up to the
 * maximum, SEMGET, and the MMIO view after each step (a store with bit 0 clear posts,
 * set takes one). tensix_semaphore_masks selects several semaphores per instruction. */
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
    TTI_SEMINIT(2, 0, 0x01); /* sem 0: max 2, value 0 */
    TTI_SEMINIT(2, 0, 0x02);
    TTI_SEMINIT(15, 7, 0x04); /* sem 2: max 15, value 7 */
    TTI_SEMINIT(15, 7, 0x08);
    for (uint32_t s = 4; s < 8u; s++)
        tensix_push_own(TT_OP_SEMINIT(1, 1, 1u << s));
    snapshot();
    TTI_SEMPOST(0x01);
    TTI_SEMPOST(0x01); /* now at its maximum */
    TTI_SEMPOST(0x04);
    TTI_SEMPOST(0x08);
    snapshot();
    TTI_SEMGET(0x01);
    TTI_SEMGET(0x04);
    TTI_SEMGET(0x08);
    TTI_SEMGET(0x10);
    TTI_SEMGET(0x20);
    snapshot();
    tk_sem_post(6);
    mmio_write32(TENSIX_SEMAPHORE_BASE + 4u * 2u, 1u); /* takes one */
    snapshot();
    return 0;
}
