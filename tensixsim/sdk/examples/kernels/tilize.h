/* The fp32 tilize / untilize kernels (tilize_*.c; BRISC and NCRISC run reader.c and writer.c with
 * one input and 4096-byte pages). KERNEL_TILIZE selects what happens to each 32x32 fp32 block:
 *
 *   1  tilize: a row-major block in (unpacker Tileize_mode), a tiled block (four faces) out
 *   0  untilize: a tiled block in, a row-major block out (the packer's strided Dst access)
 *   2  both: the tilized block goes through the "mid" circular buffer (TRISC2 -> TRISC0) and comes
 *      back untilized, so each block passes through Dst twice (two Dst passes per block)
 *
 * KERNEL_ROW_BYTES is the row pitch of a row-major input block. On Wormhole the unpacker does the
 * tilizing and the packer the untilizing (tensix_kernel.h says how); the kernels are the same.
 */
#ifndef TILIZE_H
#define TILIZE_H
#include "kernels.h"

#ifndef KERNEL_TILIZE
#define KERNEL_TILIZE 1u
#endif
#ifndef KERNEL_ROW_BYTES
#define KERNEL_ROW_BYTES 128u
#endif

#define TILIZE_ROUND_TRIP (KERNEL_TILIZE == 2u)
/* Dst passes: one per block, two for the round trip (tilize, then untilize). */
#define TILIZE_PASSES (TILIZE_ROUND_TRIP ? 2u * KERNEL_TILES : KERNEL_TILES)

/* The round trip's tiled blocks, TRISC2 -> TRISC0: after the output buffer's pages. */
#define KERNEL_CB_MID_STREAM 2u
#define KERNEL_CB_MID_BASE (KERNEL_CB_OUT_BASE + KERNEL_CB_PAGES * KERNEL_OUT_PAGE)
#define KERNEL_CB_MID_PAGES 2u

/* Does Dst pass p read a row-major block (else a tiled one), and does it write a tiled one? */
static inline uint32_t tilize_pass_reads_rows(uint32_t p)
{
    return TILIZE_ROUND_TRIP ? (p & 1u) == 0u : KERNEL_TILIZE;
}
#define tilize_pass_writes_tiles tilize_pass_reads_rows
#endif
