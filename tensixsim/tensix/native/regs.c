/* The register files' addressing, as tensixsim/tensix/regs.py computes it. */
#include "regs.h"

#include "ops.h"

uint32_t regs_adj16(uint32_t r, uint32_t remap)
{
    r &= REGS_ROW_MASK;
    if (remap)
        r = (r & 0x3C7u) ^ ((r & 0x030u) >> 1) ^ ((r & 0x008u) << 2);
    return r;
}

uint32_t regs_adj32(uint32_t r, uint32_t remap, uint32_t swizzle)
{
    r = regs_adj16(r, remap);
    if (swizzle)
        r = (r & 0x3F3u) ^ ((r & 0x018u) >> 1) ^ ((r & 0x004u) << 1);
    return ((r & 0x1F8u) << 1) | (r & 0x207u);
}
