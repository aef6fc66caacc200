/* Zbb and Zba over 16 input words: for each word a (and its neighbour b) the results of clz, ctz,
 * cpop, sext.b, sext.h, zext.h, rev8, orc.b, rori 7, rol, ror, andn, orn, xnor, min, max, minu,
 * maxu, sh1add, sh2add, sh3add. */
#include <stdint.h>

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define N 16u

#define UN(name, r, a) __asm__ volatile(name " %0, %1" : "=r"(r) : "r"(a))
#define BIN(name, r, a, b) __asm__ volatile(name " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b))

int main(void)
{
    volatile uint32_t *o = OUT;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t a = IN[i], b = IN[(i + 1u) % N], r;
        UN("clz", r, a); *o++ = r;
        UN("ctz", r, a); *o++ = r;
        UN("cpop", r, a); *o++ = r;
        UN("sext.b", r, a); *o++ = r;
        UN("sext.h", r, a); *o++ = r;
        UN("zext.h", r, a); *o++ = r;
        UN("rev8", r, a); *o++ = r;
        UN("orc.b", r, a); *o++ = r;
        __asm__ volatile("rori %0, %1, 7" : "=r"(r) : "r"(a)); *o++ = r;
        BIN("rol", r, a, b); *o++ = r;
        BIN("ror", r, a, b); *o++ = r;
        BIN("andn", r, a, b); *o++ = r;
        BIN("orn", r, a, b); *o++ = r;
        BIN("xnor", r, a, b); *o++ = r;
        BIN("min", r, a, b); *o++ = r;
        BIN("max", r, a, b); *o++ = r;
        BIN("minu", r, a, b); *o++ = r;
        BIN("maxu", r, a, b); *o++ = r;
        BIN("sh1add", r, a, b); *o++ = r;
        BIN("sh2add", r, a, b); *o++ = r;
        BIN("sh3add", r, a, b); *o++ = r;
    }
    return 0;
}
