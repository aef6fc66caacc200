/* Demo, TRISC1: a multiplicative hash of the input (one mul per word). */
#include "demo.h"

int main(void)
{
    volatile struct demo_shared *d = DEMO;
    uint32_t h = DEMO_HASH_INIT;
    for (uint32_t i = 0; i < DEMO_N; i++)
        h = DEMO_HASH_STEP(h, d->input[i]);
    demo_finish(CORE_ID_TRISC1, h);
    return 0;
}
