/* One tile of a ring (benchmarks/chip_scaling.py, tests/test_chip.py). Arguments: next tile's x, y;
 * N words; rounds. Round r: take this tile's data (CHIP_SRC, from the host) for r = 0, else what the
 * previous tile sent in round r - 1 (slot r - 1), add one to every word into CHIP_OUT, write that to
 * slot r of the next tile (CHIP_DST + r * N words), wait for the acknowledgement and count the next
 * tile's flag up; before each round wait until the previous tile's slot for it is here. Each slot is
 * written once, so the tiles run concurrently without overwriting what another still reads. A ring of
 * one tile writes to itself. */
#include "noc.h"

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t nx = args[0], ny = args[1], n = args[2], rounds = args[3];
    volatile uint32_t *out = (volatile uint32_t *)CHIP_OUT;
    for (uint32_t r = 0; r < rounds; r++) {
        wait_l1_at_least((volatile uint32_t *)CHIP_FLAG, r);
        volatile uint32_t *in = (volatile uint32_t *)(r == 0u ? CHIP_SRC : CHIP_DST + (r - 1u) * n * 4u);
        for (uint32_t i = 0; i < n; i++)
            out[i] = in[i] + 1u;
        noc_write(CHIP_OUT, nx, ny, CHIP_DST + r * n * 4u, n * 4u);
        noc_wait_counter(NOC_WR_ACK_RECEIVED, r + 1u);
        noc_atomic_inc(nx, ny, CHIP_FLAG, 1u);
    }
    wait_l1_at_least((volatile uint32_t *)CHIP_FLAG, rounds);
    return 0;
}
