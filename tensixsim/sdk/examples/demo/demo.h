/* Five-core demo: the layout of the L1 region the cores share, and the per-element formulas.
 *
 * BRISC fills `input`, clears the done flags and releases the other four cores. Each computes
 * something different over the whole input, writes its result word (and NCRISC and TRISC2 an
 * output array), then sets its done flag. BRISC waits for the four flags, recomputes everything
 * itself, and writes `summary`: 0 when every result matched, else one bit per wrong core
 * (1 << CORE_ID_x). Everything lives at SDK_L1_USER_BASE (0x20000):
 *
 *   +0x000  input[256]        BRISC      xorshift32 sequence from DEMO_SEED
 *   +0x400  transformed[256]  NCRISC     DEMO_TRANSFORM(input[i])
 *   +0x800  scan[256]         TRISC2     inclusive prefix sum of input
 *   +0xC00  result[5]         one word per core, indexed by CORE_ID_*
 *   +0xC20  done[5]           flags, indexed by CORE_ID_*; DEMO_DONE when set
 *   +0xC40  summary           BRISC's verdict (also main's return value)
 *
 *   result[NCRISC]  sum of transformed[]        result[TRISC0]  sum of input[]
 *   result[TRISC1]  DEMO_HASH over input[]      result[TRISC2]  scan[255]
 */
#ifndef DEMO_H
#define DEMO_H

#include <stdint.h>

#include "tensixsim.h"

#define DEMO_N 256u
#define DEMO_SEED 0x2545F491u
#define DEMO_DONE 0xD0E0D0E0u  /* a value L1 is unlikely to hold by chance after power-up */
#define DEMO_WORKERS (SOFT_RESET_NCRISC | SOFT_RESET_TRISC0 | SOFT_RESET_TRISC1 | SOFT_RESET_TRISC2)

struct demo_shared {
    uint32_t input[DEMO_N];
    uint32_t transformed[DEMO_N];
    uint32_t scan[DEMO_N];
    uint32_t result[8]; /* SDK_NUM_CORES used, padded to 32 bytes */
    uint32_t done[8];
    uint32_t summary;
};

/* volatile: other cores read and write this memory behind the compiler's back. */
#define DEMO ((volatile struct demo_shared *)SDK_L1_USER_BASE)

_Static_assert(SDK_NUM_CORES <= 8, "result[] and done[] hold 8 cores");
_Static_assert(sizeof(struct demo_shared) == 0xC44, "layout drawn above");

/* NCRISC's element-wise transform: rotate, mix, xor (shifts + zbb rotates on the hardware). */
#define DEMO_TRANSFORM(x) ((((x) << 7) | ((x) >> 25)) ^ 0x9E3779B9u)

/* TRISC1's multiply-heavy checksum step (FNV-1a style over whole words). */
#define DEMO_HASH_INIT 0x811C9DC5u
#define DEMO_HASH_STEP(h, x) (((h) ^ (x)) * 0x01000193u)

/* A worker announces it has finished: result first, then the flag, with a fence between so that
   whoever sees the flag also sees the result. */
static inline void demo_finish(uint32_t core_id, uint32_t result)
{
    DEMO->result[core_id] = result;
    sdk_fence();
    DEMO->done[core_id] = DEMO_DONE;
    sdk_fence();
}

#endif /* DEMO_H */
