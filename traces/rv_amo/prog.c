/* Zaamo on L1 words: each AMO (add, swap, and, or, xor, max, maxu, min, minu) applied to its own
 * word with every input operand in turn; the old values each returned and the final words. */
#include <stdint.h>

#define IN ((const volatile uint32_t *)0x30000u)
#define OLD ((volatile uint32_t *)0x40000u)
#define MEM ((volatile uint32_t *)0x41000u)
#define N 8u

#define AMO(name, k)                                                                    \
    for (uint32_t i = 0; i < N; i++) {                                                  \
        uint32_t old;                                                                   \
        __asm__ volatile(name " %0, %1, (%2)" : "=r"(old) : "r"(IN[i]), "r"(&MEM[k]) : "memory"); \
        OLD[(k) * N + i] = old;                                                         \
    }

int main(void)
{
    for (uint32_t k = 0; k < 9u; k++)
        MEM[k] = 0x80000005u ^ (k * 0x11111111u);
    AMO("amoadd.w", 0);
    AMO("amoswap.w", 1);
    AMO("amoand.w", 2);
    AMO("amoor.w", 3);
    AMO("amoxor.w", 4);
    AMO("amomax.w", 5);
    AMO("amomaxu.w", 6);
    AMO("amomin.w", 7);
    AMO("amominu.w", 8);
    return 0;
}
