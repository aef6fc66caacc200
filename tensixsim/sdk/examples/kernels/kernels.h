/* Compute kernels on the whole tile: BRISC reads tiles into two input circular buffers, TRISC0
 * unpacks them, TRISC1 computes into Dst, TRISC2 packs into the output circular buffer, NCRISC
 * writes the tiles out. The programs of one kernel are built with the same defines (programs.py):
 *
 *   KERNEL_TILES        tiles TRISC0 unpacks (pairs, or single tiles with KERNEL_ONE_INPUT)
 *   KERNEL_OUT_TILES    tiles TRISC2 packs and NCRISC writes out
 *   KERNEL_IN_FMT       input format (TK_FMT_*), KERNEL_IN_PAGE its tile size in bytes
 *   KERNEL_OUT_FMT      output format, KERNEL_OUT_PAGE its tile size; KERNEL_PACK_INTER the packer's
 *                       intermediate format (what it reads Dst32 as)
 *   KERNEL_ONE_INPUT    SrcB is zeroed instead of unpacked (a copy through ELWADD)
 *   KERNEL_MATMUL_MT / _NT / _KT   reader order for a matmul of MTxKT by KTxNT tiles
 *   KERNEL_CB_IN0_BASE  may be overridden (tests of bad configuration)
 *
 * "DRAM": input 0 at KERNEL_SRC0, input 1 at KERNEL_SRC1, output at KERNEL_DST, tiles back to back.
 */
#ifndef KERNELS_H
#define KERNELS_H
#include "tensix_kernel.h"

/* Copy a tile between L1 buffers a word at a time (both 16-byte aligned, size a multiple of 16). */
static inline void kernel_copy(uint32_t dst, uint32_t src, uint32_t bytes)
{
    volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)dst;
    const volatile uint32_t *s = (const volatile uint32_t *)(uintptr_t)src;
    for (uint32_t i = 0; i < bytes / 4u; i += 4u) {
        uint32_t a = s[i], b = s[i + 1u], c = s[i + 2u], e = s[i + 3u];
        d[i] = a;
        d[i + 1u] = b;
        d[i + 2u] = c;
        d[i + 3u] = e;
    }
}

#define KERNEL_SRC0 0x30000u
#define KERNEL_SRC1 0x60000u
#define KERNEL_DST 0x90000u

#define KERNEL_CB_PAGES 4u
#ifndef KERNEL_CB_IN0_BASE
#define KERNEL_CB_IN0_BASE 0x21000u
#endif
#define KERNEL_CB_IN1_BASE 0x23000u
#define KERNEL_CB_OUT_BASE 0x25000u
/* CB n uses stream n (current tt-metal's Blackhole choice): inputs 0 and 1, output 16. */
#define KERNEL_CB_IN0_STREAM 0u
#define KERNEL_CB_IN1_STREAM 1u
#define KERNEL_CB_OUT_STREAM 16u

#ifndef KERNEL_TILES
#define KERNEL_TILES 8u
#endif
#ifndef KERNEL_OUT_TILES
#define KERNEL_OUT_TILES KERNEL_TILES
#endif
#ifndef KERNEL_IN_FMT
#define KERNEL_IN_FMT TK_FMT_BF16
#endif
#ifndef KERNEL_IN_PAGE
#define KERNEL_IN_PAGE 2048u
#endif
#ifndef KERNEL_OUT_FMT
#define KERNEL_OUT_FMT TK_FMT_BF16
#endif
#ifndef KERNEL_OUT_PAGE
#define KERNEL_OUT_PAGE 2048u
#endif
#ifndef KERNEL_PACK_INTER
#define KERNEL_PACK_INTER KERNEL_OUT_FMT
#endif
#endif
