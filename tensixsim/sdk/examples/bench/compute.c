/* Compute benchmark, for any core. Every core runs the same kernel on its own local data and
 * reports its checksum in L1; BRISC first releases the others (BENCH_WORKERS, default all four),
 * runs the kernel too, waits for their done flags and returns its own checksum.
 *
 * Defines: BENCH_ITERS (iterations, default 16), BENCH_WORKERS (SOFT_RESET_* mask BRISC releases
 * and waits for), BENCH_MEASURE_CYCLES (record mcycle spent in the kernel in BENCH->cycles[]).
 */
#include "bench.h"
#include "compute_kernel.h"

#ifndef BENCH_ITERS
#define BENCH_ITERS 16u
#endif
#ifndef BENCH_WORKERS
#define BENCH_WORKERS (SOFT_RESET_NCRISC | SOFT_RESET_TRISC0 | SOFT_RESET_TRISC1 | SOFT_RESET_TRISC2)
#endif

/* In .bss, i.e. this core's local RAM: the kernel's data never touches shared L1. */
static uint32_t a[BENCH_N], ma[BENCH_N], mb[BENCH_N], mc[BENCH_N];

#ifdef SDK_CORE_BRISC
static const uint32_t worker_bits[] = {SOFT_RESET_NCRISC, SOFT_RESET_TRISC0, SOFT_RESET_TRISC1,
                                       SOFT_RESET_TRISC2};
static const uint32_t worker_ids[] = {CORE_ID_NCRISC, CORE_ID_TRISC0, CORE_ID_TRISC1,
                                      CORE_ID_TRISC2};
#endif

int main(void)
{
    volatile struct bench_shared *b = BENCH;

#ifdef SDK_CORE_BRISC
    for (uint32_t c = 0; c < SDK_NUM_CORES; c++)
        b->done[c] = 0;
    release_cores(BENCH_WORKERS);
#endif

#ifdef BENCH_MEASURE_CYCLES
    uint64_t t0 = read_mcycle();
#endif
    uint32_t sum = bench_compute(BENCH_SEED(SDK_CORE_ID), BENCH_ITERS, a, ma, mb, mc);
#ifdef BENCH_MEASURE_CYCLES
    b->cycles[SDK_CORE_ID] = (uint32_t)(read_mcycle() - t0);
#endif

    b->result[SDK_CORE_ID] = sum;
    sdk_fence();
    b->done[SDK_CORE_ID] = BENCH_DONE;
    sdk_fence();

#ifdef SDK_CORE_BRISC
    for (uint32_t w = 0; w < sizeof worker_ids / sizeof worker_ids[0]; w++) {
        if (!(BENCH_WORKERS & worker_bits[w]))
            continue;
        while (b->done[worker_ids[w]] != BENCH_DONE)
            sdk_fence(); /* do not spin on a stale copy */
    }
#endif
    return (int)sum;
}
