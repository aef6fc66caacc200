/* Demo, NCRISC: transform every input word into transformed[] and sum the results. */
#include "demo.h"

int main(void)
{
    volatile struct demo_shared *d = DEMO;
    uint32_t sum = 0;
    for (uint32_t i = 0; i < DEMO_N; i++) {
        uint32_t t = DEMO_TRANSFORM(d->input[i]);
        d->transformed[i] = t;
        sum += t;
    }
    demo_finish(CORE_ID_NCRISC, sum);
    return 0;
}
