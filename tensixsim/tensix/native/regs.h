/* The register files' addressing (regs.c), shared by the units that reach Dst. */
#ifndef TENSIXSIM_REGS_H
#define TENSIXSIM_REGS_H
#include <stdint.h>

/* regs.adj16 / adj32 (BlackholeA0 Dst.md Adj16 / Adj32): the DstBits row of Dst16b row r, and of the
 * high half of Dst32b row r (the low half is 8 rows on), under DEST_ACCESS_CFG remap / swizzle. */
uint32_t regs_adj16(uint32_t r, uint32_t remap);
uint32_t regs_adj32(uint32_t r, uint32_t remap, uint32_t swizzle);

#endif
