/* The multicast example's sender (tests/test_chip.py, docs/chip.md). Arguments: the rectangle
 * x0, y0, x1, y1; N words at CHIP_SRC (the host writes them); R, the receivers the rectangle holds;
 * include_self; W, the receivers that run mcast_receiver.c (this tile does not). It multicasts the words to CHIP_DST of every receiver, then, once every receiver
 * has acknowledged them, multicasts a go flag (CHIP_ARGS + 0x40, 16 bytes) to CHIP_FLAG + 0x10.
 * Each receiver writes its result back into slot k of this tile's CHIP_DST and counts CHIP_FLAG
 * up: the sender ends when all W have. */
#include "noc.h"

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t x0 = args[0], y0 = args[1], x1 = args[2], y1 = args[3], n = args[4], r = args[5];
    int self = (int)args[6];
    uint32_t w = args[7];
    noc_write_multicast(CHIP_SRC, x0, y0, x1, y1, CHIP_DST, n * 4u, self);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, r);
    args[16] = 1u; /* CHIP_ARGS + 0x40: the go flag's 16 bytes */
    noc_write_multicast(CHIP_ARGS + 0x40u, x0, y0, x1, y1, CHIP_FLAG + 0x10u, 16u, self);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, 2u * r);
    wait_l1_at_least((volatile uint32_t *)CHIP_FLAG, w);
    return 0;
}
