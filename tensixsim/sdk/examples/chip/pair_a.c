/* Tile A of the two-tile example (tests/test_chip.py, docs/chip.md).
 * Arguments: B's x, y; N words at CHIP_SRC (the host writes them); DRAM tile x, y and address.
 * A writes the first half of its data into B's L1, then signals B with an inline write to B's
 * stream scratch register; B reads the second half from A itself, adds one to every word and
 * writes the result back to A (CHIP_DST) and to DRAM, then counts A's flag up with a NoC atomic. */
#include "noc.h"

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t bx = args[0], by = args[1], n = args[2];
    uint32_t half = n / 2u * 4u;
    noc_write(CHIP_SRC, bx, by, CHIP_DST, half);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, 1u);
    noc_inline_write(bx, by, CHIP_SIGNAL, 1u);
    wait_l1_at_least((volatile uint32_t *)CHIP_FLAG, 1u);
    return 0;
}
