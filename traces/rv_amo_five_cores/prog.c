/* All five cores hammer the same L1 words with AMOs (add, xor, max, min, or): the final words do
 * not depend on the interleaving; each core also keeps the largest old value amoadd returned to it
 * (bounded by the total). BRISC releases the others; each core signals its end with an amoadd. */
#include "tensixsim.h"

#define WORDS ((volatile uint32_t *)0x40000u)
#define DONE ((volatile uint32_t *)0x40040u)
#define ROUNDS 200u

static inline uint32_t amo(uint32_t op, volatile uint32_t *p, uint32_t v)
{
    uint32_t old;
    switch (op) {
    case 0: __asm__ volatile("amoadd.w %0, %1, (%2)" : "=r"(old) : "r"(v), "r"(p) : "memory"); break;
    case 1: __asm__ volatile("amoxor.w %0, %1, (%2)" : "=r"(old) : "r"(v), "r"(p) : "memory"); break;
    case 2: __asm__ volatile("amomaxu.w %0, %1, (%2)" : "=r"(old) : "r"(v), "r"(p) : "memory"); break;
    case 3: __asm__ volatile("amomin.w %0, %1, (%2)" : "=r"(old) : "r"(v), "r"(p) : "memory"); break;
    default: __asm__ volatile("amoor.w %0, %1, (%2)" : "=r"(old) : "r"(v), "r"(p) : "memory"); break;
    }
    return old;
}

int main(void)
{
#ifdef SDK_CORE_BRISC
    release_cores(SOFT_RESET_NCRISC | SOFT_RESET_TRISC0 | SOFT_RESET_TRISC1 | SOFT_RESET_TRISC2);
#endif
    uint32_t id = SDK_CORE_ID, seen = 0;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint32_t v = (r * 0x9E3779B9u) ^ (id * 0x85EBCA6Bu);
        uint32_t old = amo(0, &WORDS[0], (v & 0xFFu) + 1u);
        if (old > seen)
            seen = old;
        amo(1, &WORDS[1], v);
        amo(2, &WORDS[2], v);
        amo(3, &WORDS[3], v);
        amo(4, &WORDS[4], 1u << ((v >> 7) & 31u));
    }
    amo(0, &DONE[0], 1u);
#ifdef SDK_CORE_BRISC
    while (DONE[0] != 5u)
        sdk_fence();
#endif
    return seen <= WORDS[0] ? 0 : 1;
}
