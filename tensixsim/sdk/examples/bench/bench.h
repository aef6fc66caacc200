/* Benchmarks: the L1 words the cores report through (at SDK_L1_USER_BASE = 0x20000).
 *
 *   +0x00  result[8]    each core's checksum, indexed by CORE_ID_*
 *   +0x20  done[8]      BENCH_DONE once that core's result is written
 *   +0x40  cycles[8]    mcycle spent in the kernel (only with -DBENCH_MEASURE_CYCLES)
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "tensixsim.h"

#define BENCH_DONE 0xD0E0D0E0u

struct bench_shared {
    uint32_t result[8];
    uint32_t done[8];
    uint32_t cycles[8];
};

#define BENCH ((volatile struct bench_shared *)SDK_L1_USER_BASE)

_Static_assert(SDK_NUM_CORES <= 8, "result[] and done[] hold 8 cores");

#endif /* BENCH_H */
