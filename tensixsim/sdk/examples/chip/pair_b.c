/* Tile B of the two-tile example (see pair_a.c). Arguments: A's x, y; N; DRAM tile x, y, address. */
#include "noc.h"

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t ax = args[0], ay = args[1], n = args[2], dx = args[3], dy = args[4], daddr = args[5];
    uint32_t half = n / 2u * 4u;
    while (mmio_read32(CHIP_SIGNAL) == 0u)
        ; /* A's inline write: the first half is here */
    noc_read(ax, ay, CHIP_SRC + half, CHIP_DST + half, n * 4u - half);
    noc_wait_counter(NOC_RD_RESP_RECEIVED, 1u);
    volatile uint32_t *in = (volatile uint32_t *)CHIP_DST, *out = (volatile uint32_t *)CHIP_OUT;
    for (uint32_t i = 0; i < n; i++)
        out[i] = in[i] + 1u;
    noc_write(CHIP_OUT, ax, ay, CHIP_DST, n * 4u);
    noc_write(CHIP_OUT, dx, dy, daddr, n * 4u);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, 2u);
    noc_atomic_inc(ax, ay, CHIP_FLAG, 1u);
    return 0;
}
