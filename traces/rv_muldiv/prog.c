/* RV32M over edge operands: every pair of the input words through mul, mulh, mulhsu, mulhu, div,
 * divu, rem, remu (division by zero and INT_MIN / -1 included). */
#include <stdint.h>

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define N 12u

static inline uint32_t op(uint32_t k, uint32_t a, uint32_t b)
{
    uint32_t r;
    switch (k) {
    case 0: __asm__ volatile("mul %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 1: __asm__ volatile("mulh %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 2: __asm__ volatile("mulhsu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 3: __asm__ volatile("mulhu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 4: __asm__ volatile("div %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 5: __asm__ volatile("divu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    case 6: __asm__ volatile("rem %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    default: __asm__ volatile("remu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); break;
    }
    return r;
}

int main(void)
{
    uint32_t o = 0;
    for (uint32_t k = 0; k < 8u; k++)
        for (uint32_t i = 0; i < N; i++)
            for (uint32_t j = 0; j < N; j++)
                OUT[o++] = op(k, IN[i], IN[j]);
    return 0;
}
