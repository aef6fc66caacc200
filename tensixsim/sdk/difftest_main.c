/* Entry point of a differential case's program (tensixsim.difftest), linked with the case's own
 * sources and -Wl,--wrap=main: crt0's call of main() arrives here, and __real_main() is the case's.
 *
 * The same ELF must run on the emulator and on a device that has no "core finished" convention
 * (ttsim treats ecall as fatal without semihosting, a card traps on it), so a core reports through
 * L1 instead: it times __real_main() with the wall clock, writes its status record (magic, exit code,
 * start and end clock), then waits for the host's go-ahead word before it returns to crt0's ecall.
 * The emulator's host sets that word before the run, so the core goes straight on to finish; a
 * device's host never sets it and reads the records while the core waits.
 *
 * The host passes DIFFTEST_STATUS_BASE, DIFFTEST_EXIT_FLAG and DIFFTEST_MAGIC (one definition, in
 * tensixsim/difftest/case.py).
 */
#include "tensixsim.h"

int __real_main(void);

int __wrap_main(void)
{
    volatile uint32_t *status = (volatile uint32_t *)(uintptr_t)(DIFFTEST_STATUS_BASE + 16u * SDK_CORE_ID);
    const volatile uint32_t *exit_flag = (const volatile uint32_t *)(uintptr_t)DIFFTEST_EXIT_FLAG;
    uint32_t start = mmio_read32(WALL_CLOCK_LO_REG);
    int code = __real_main();
    uint32_t end = mmio_read32(WALL_CLOCK_LO_REG);
    status[1] = (uint32_t)code;
    status[2] = start;
    status[3] = end;
    sdk_fence(); /* the record's body lands before its magic word */
    status[0] = DIFFTEST_MAGIC;
    sdk_fence();
    while (*exit_flag == 0u)
        sdk_fence();
    return code;
}
