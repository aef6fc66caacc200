/* Demo, TRISC2: inclusive prefix sum of the input into scan[]. */
#include "demo.h"

int main(void)
{
    volatile struct demo_shared *d = DEMO;
    uint32_t acc = 0;
    for (uint32_t i = 0; i < DEMO_N; i++) {
        acc += d->input[i];
        d->scan[i] = acc;
    }
    demo_finish(CORE_ID_TRISC2, acc);
    return 0;
}
