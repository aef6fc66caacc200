/* Configuration registers from TRISC0's pipe: WRCFG of GPRs into Config[0] words 68 and 69, a
 * 128-bit WRCFG into words 12..15, RMWCIB0..3 (byte-masked writes) into word 64, RDCFG back into
 * GPRs; then the words as the config window shows them and the GPRs RDCFG filled. (Words whose
 * every bit is a field: what a register keeps of a write to unused bits is another question.) */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_cfg_blackhole.h"
#include "tensix_kernel.h"

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define GPR ((volatile uint32_t *)0xFFE00000u)

int main(void)
{
    for (uint32_t i = 0; i < 8u; i++)
        GPR[8u + i] = IN[i];
    for (uint32_t i = 20u; i < 30u; i++)
        GPR[i] = 0u;
    mmio_write32(TENSIX_CFG_ADDR(0, 64), 0x11223344u);
    tk_wait_pipe_idle();
    TTI_WRCFG(8, 0, 68);
    TTI_WRCFG(9, 0, 69);
    TTI_WRCFG(12, 1, 12); /* 128-bit: GPRs 12..15 into words 12..15 */
    TTI_RMWCIB0(0x0F, 0xA5, 64);
    TTI_RMWCIB1(0xF0, 0x5A, 64);
    TTI_RMWCIB2(0xFF, 0x00, 64);
    TTI_RMWCIB3(0x3C, 0xFF, 64);
    tk_wait_pipe_idle(); /* the writes have landed before the reads below */
    TTI_RDCFG(20, 68);
    TTI_RDCFG(21, 13);
    TTI_RDCFG(22, 15);
    TTI_RDCFG(23, 64);
    tk_wait_pipe_idle();
    static const uint8_t words[9] = {12, 13, 14, 15, 68, 69, 64, 12, 64};
    for (uint32_t w = 0; w < 9u; w++)
        OUT[w] = mmio_read32(TENSIX_CFG_ADDR(0, words[w]));
    for (uint32_t i = 0; i < 4u; i++)
        OUT[9u + i] = GPR[20u + i];
    return 0;
}
