/* The distributor of the 2x2-grid matmul example (tests/test_chip.py, docs/chip.md).
 *
 * Arguments: x0, y0 (the grid's top-left worker), the bytes of one operand block. The host puts
 * A's two row blocks at MM_A, MM_A + block and B's two column blocks at MM_B, MM_B + block in this
 * tile's L1. Row block i goes to the two workers of grid row i, column block j to the two of grid
 * column j, each with one multicast, into their matmul kernel's inputs (KERNEL_SRC0 / KERNEL_SRC1).
 * Once every worker acknowledged all four, the distributor releases each worker's BRISC with a NoC
 * inline write to its SOFT_RESET_0 (BRISC releases the worker's other cores, as the kernel does on
 * a tile of its own). */
#include "noc.h"

#define MM_A 0x100000u
#define MM_B 0x108000u
#define KERNEL_SRC0 0x30000u
#define KERNEL_SRC1 0x60000u
#define SOFT_RESET_0 0xFFB121B0u
#define RELEASE_BRISC (0x47800u & ~(1u << 11))

int main(void)
{
    volatile uint32_t *args = chip_args();
    uint32_t x0 = args[0], y0 = args[1], block = args[2];
    for (uint32_t i = 0; i < 2u; i++)
        noc_write_multicast(MM_A + i * block, x0, y0 + i, x0 + 1u, y0 + i, KERNEL_SRC0, block, 0);
    for (uint32_t j = 0; j < 2u; j++)
        noc_write_multicast(MM_B + j * block, x0 + j, y0, x0 + j, y0 + 1u, KERNEL_SRC1, block, 0);
    noc_wait_counter(NOC_WR_ACK_RECEIVED, 8u); /* four multicasts, two receivers each */
    for (uint32_t i = 0; i < 2u; i++)
        for (uint32_t j = 0; j < 2u; j++)
            noc_inline_write(x0 + j, y0 + i, SOFT_RESET_0, RELEASE_BRISC);
    return 0;
}
