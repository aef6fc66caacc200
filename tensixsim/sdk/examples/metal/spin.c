/* A kernel that never finishes: it waits for the L1 word at 0x70000 + runtime argument 0 (free L1
 * that nothing writes) to become non-zero. */
#include <stdint.h>

extern uint32_t *rta_l1_base;

__attribute__((section(".start"), used)) uint32_t _start(void) {
    volatile uint32_t *flag = (volatile uint32_t *)(rta_l1_base[0] + 0x70000);
    while (*flag == 0) {
    }
    return 0;
}
