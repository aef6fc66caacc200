/* Demo, BRISC: produce the input, release the other four cores, check their answers. */
#include "demo.h"

static uint32_t xorshift32(uint32_t x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

int main(void)
{
    volatile struct demo_shared *d = DEMO;

    uint32_t x = DEMO_SEED;
    for (uint32_t i = 0; i < DEMO_N; i++) {
        x = xorshift32(x);
        d->input[i] = x;
    }
    for (uint32_t c = 0; c < SDK_NUM_CORES; c++)
        d->done[c] = 0;
    d->summary = 0xFFFFFFFFu; /* "not finished" until the verdict below */

    /* The other cores start at their default reset PCs; clear only their reset bits (BRISC's own
       bit is already clear, or this code would not be running). release_cores fences first. */
    release_cores(DEMO_WORKERS);

    static const uint32_t workers[] = {CORE_ID_NCRISC, CORE_ID_TRISC0, CORE_ID_TRISC1,
                                       CORE_ID_TRISC2};
    for (uint32_t w = 0; w < 4; w++) {
        while (d->done[workers[w]] != DEMO_DONE)
            sdk_fence(); /* do not spin on a stale copy */
    }
    sdk_fence();

    /* Recompute everything in one pass, written differently from the workers' loops. */
    uint32_t sum = 0, tsum = 0, hash = DEMO_HASH_INIT, running = 0, bad = 0;
    for (uint32_t i = 0; i < DEMO_N; i++) {
        uint32_t v = d->input[i];
        uint32_t t = DEMO_TRANSFORM(v);
        sum += v;
        tsum += t;
        hash = DEMO_HASH_STEP(hash, v);
        running += v;
        if (d->transformed[i] != t)
            bad |= 1u << CORE_ID_NCRISC;
        if (d->scan[i] != running)
            bad |= 1u << CORE_ID_TRISC2;
    }
    if (d->result[CORE_ID_NCRISC] != tsum)
        bad |= 1u << CORE_ID_NCRISC;
    if (d->result[CORE_ID_TRISC0] != sum)
        bad |= 1u << CORE_ID_TRISC0;
    if (d->result[CORE_ID_TRISC1] != hash)
        bad |= 1u << CORE_ID_TRISC1;
    if (d->result[CORE_ID_TRISC2] != running)
        bad |= 1u << CORE_ID_TRISC2;

    d->result[CORE_ID_BRISC] = sum;
    d->summary = bad;
    sdk_fence();
    return (int)bad;
}
