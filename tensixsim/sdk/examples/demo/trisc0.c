/* Demo, TRISC0: sum the input, four words per iteration. */
#include "demo.h"

int main(void)
{
    volatile struct demo_shared *d = DEMO;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (uint32_t i = 0; i < DEMO_N; i += 4) {
        s0 += d->input[i];
        s1 += d->input[i + 1];
        s2 += d->input[i + 2];
        s3 += d->input[i + 3];
    }
    demo_finish(CORE_ID_TRISC0, (s0 + s1) + (s2 + s3));
    return 0;
}
