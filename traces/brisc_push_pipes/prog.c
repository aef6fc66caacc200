/* BRISC pushes SETDMAREG words into each of the three pipes (0xFFE40000 / 0xFFE50000 /
 * 0xFFE60000) and reads the three threads' GPRs through its window (thread t at 0xFFE00000 +
 * 0x100 * t) until the values arrive. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"

#define OUT ((volatile uint32_t *)0x40000u)
#define GPR(t, i) ((volatile uint32_t *)(0xFFE00000u + 0x100u * (t)))[i]

int main(void)
{
    for (uint32_t t = 0; t < 3u; t++) {
        GPR(t, 6) = 0u;
        mmio_write32(TENSIX_PUSH_ADDR(t), TT_OP_SETDMAREG(0, 0x100u + t, 0, 12));
        mmio_write32(TENSIX_PUSH_ADDR(t), TT_OP_SETDMAREG(0, 0x2A0u + t, 0, 13));
    }
    for (uint32_t t = 0; t < 3u; t++) {
        uint32_t want = ((0x2A0u + t) << 16) | (0x100u + t), tries = 0;
        while (GPR(t, 6) != want && tries < 10000u)
            tries++;
        OUT[t] = GPR(t, 6);
    }
    return 0;
}
