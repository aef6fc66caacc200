/* The compute benchmark's kernel: plain uint32_t C with no MMIO, so the host can compile it too
 * (tests/test_sdk.py checks it against tensixsim.sdk.programs.compute_reference, the Python model
 * the benchmark harness uses to check the emulator's answer).
 *
 * Per iteration: a bitwise CRC-32 over a[] (shifts, masks), an 8x8 integer matrix product (mul;
 * a[i] indexing gives sh2add), and a mixing pass that GCC turns into Zbb instructions (rol,
 * cpop, clz, ctz, andn, minu, maxu). Change it and the Python model together.
 */
#ifndef COMPUTE_KERNEL_H
#define COMPUTE_KERNEL_H

#include <stdint.h>

#define BENCH_N 64u   /* words in a[]; also the 8x8 matrices' element count */
#define BENCH_DIM 8u

/* Each core starts from its own seed, so the five checksums differ. */
#define BENCH_SEED(core_id) (0x2545F491u + (uint32_t)(core_id) * 0x9E3779B9u)

static inline uint32_t bench_rotl(uint32_t x, uint32_t r)
{
    return (x << (r & 31u)) | (x >> (-r & 31u));
}

static inline uint32_t bench_clz(uint32_t v)
{
    return v ? (uint32_t)__builtin_clz(v) : 32u;
}

static inline uint32_t bench_ctz(uint32_t v)
{
    return v ? (uint32_t)__builtin_ctz(v) : 32u;
}

static inline uint32_t bench_compute(uint32_t seed, uint32_t iters, uint32_t *a, uint32_t *ma,
                                     uint32_t *mb, uint32_t *mc)
{
    uint32_t x = seed | 1u;
    for (uint32_t i = 0; i < BENCH_N; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a[i] = x;
    }
    for (uint32_t i = 0; i < BENCH_N; i++) {
        ma[i] = a[i] & 0xFFu;
        mb[i] = a[(i * 7u) & (BENCH_N - 1u)] >> 24;
    }

    uint32_t crc = 0xFFFFFFFFu, acc = 0;
    for (uint32_t it = 0; it < iters; it++) {
        for (uint32_t i = 0; i < BENCH_N; i++) {
            crc ^= a[i];
            for (uint32_t k = 0; k < 32; k++)
                crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1u));
        }
        for (uint32_t r = 0; r < BENCH_DIM; r++) {
            for (uint32_t c = 0; c < BENCH_DIM; c++) {
                uint32_t s = 0;
                for (uint32_t k = 0; k < BENCH_DIM; k++)
                    s += ma[r * BENCH_DIM + k] * mb[k * BENCH_DIM + c];
                mc[r * BENCH_DIM + c] = s;
            }
        }
        for (uint32_t i = 0; i < BENCH_N; i++) {
            uint32_t v = bench_rotl(a[i] ^ mc[i], i + it);
            acc += (uint32_t)__builtin_popcount(v) + bench_clz(v) + bench_ctz(v);
            acc += mc[i] & ~v;
            uint32_t hi = v > acc ? v : acc;
            uint32_t lo = v < crc ? v : crc;
            a[i] = (hi - lo) ^ bench_rotl(v, 11u);
        }
        for (uint32_t i = 0; i < BENCH_N; i++)
            ma[i] = (ma[i] + (a[i] & 0xFFu)) & 0xFFFFu;
        crc ^= acc * 0x9E3779B1u;
    }
    return crc ^ acc;
}

#endif /* COMPUTE_KERNEL_H */
