/* Sub-word loads and stores (lb, lbu, lh, lhu, sb, sh) at every byte / halfword offset of 8 input
 * words, and the shifts and compares (sll, srl, sra, slt, sltu, slli/srli/srai by 13) over pairs. */
#include <stdint.h>

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define BYTES ((volatile uint8_t *)0x41000u)
#define N 8u

int main(void)
{
    volatile uint32_t *o = OUT;
    const volatile uint8_t *in8 = (const volatile uint8_t *)IN;
    const volatile uint16_t *in16 = (const volatile uint16_t *)IN;
    for (uint32_t i = 0; i < 4u * N; i++) {
        *o++ = (uint32_t)(int32_t)(int8_t)in8[i];
        *o++ = in8[i];
    }
    for (uint32_t i = 0; i < 2u * N; i++) {
        *o++ = (uint32_t)(int32_t)(int16_t)in16[i];
        *o++ = in16[i];
    }
    for (uint32_t i = 0; i < N; i++) {
        uint32_t a = IN[i], b = IN[(i + 3u) % N], r;
        __asm__ volatile("sll %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); *o++ = r;
        __asm__ volatile("srl %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); *o++ = r;
        __asm__ volatile("sra %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); *o++ = r;
        __asm__ volatile("slt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); *o++ = r;
        __asm__ volatile("sltu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); *o++ = r;
        __asm__ volatile("slli %0, %1, 13" : "=r"(r) : "r"(a)); *o++ = r;
        __asm__ volatile("srli %0, %1, 13" : "=r"(r) : "r"(a)); *o++ = r;
        __asm__ volatile("srai %0, %1, 13" : "=r"(r) : "r"(a)); *o++ = r;
    }
    /* Byte and halfword stores build a pattern over two words. */
    volatile uint16_t *h = (volatile uint16_t *)(BYTES + 8);
    for (uint32_t i = 0; i < 8u; i++)
        BYTES[i] = (uint8_t)(IN[i] >> (i % 4u * 8u));
    for (uint32_t i = 0; i < 4u; i++)
        h[i] = (uint16_t)(IN[i] >> 5);
    return 0;
}
