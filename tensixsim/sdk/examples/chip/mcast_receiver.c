/* A receiver of the multicast example (see mcast_sender.c). Arguments: the sender's x, y; N; k, this
 * receiver's slot. It waits for the go flag, multiplies each word by k + 2, writes the N results to
 * slot k of the sender's CHIP_DST + 0x4000 (after the words it multicast) and counts the sender's
 * CHIP_FLAG up. */
#include "noc.h"

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t sx = args[0], sy = args[1], n = args[2], k = args[3];
    wait_l1_at_least((volatile uint32_t *)(CHIP_FLAG + 0x10u), 1u);
    volatile uint32_t *in = (volatile uint32_t *)CHIP_DST, *out = (volatile uint32_t *)CHIP_OUT;
    for (uint32_t i = 0; i < n; i++)
        out[i] = in[i] * (k + 2u);
    noc_write(CHIP_OUT, sx, sy, CHIP_DST + 0x4000u + k * n * 4u, n * 4u);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, 1u);
    noc_atomic_inc(sx, sy, CHIP_FLAG, 1u);
    return 0;
}
