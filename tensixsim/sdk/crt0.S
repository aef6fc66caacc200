/* tensixsim SDK start-up code, linked first into every program (section .text.start, which the
 * linker script places at the core's reset PC).
 *
 * The core comes out of reset with nothing set up: turn its L0 data cache off (cfg0 DisLowCash, as
 * tt-metal's firmware does: the cache is not coherent, a poll of L1 could keep reading a stale line;
 * a program that wants it clears the bit), point gp and sp at this core's local RAM, copy
 * .data from its load image in L1, zero .bss, run main(), then report main's return value with
 * `ecall` (a0 = the value): the emulator's "this core finished" convention. On real hardware the
 * ecall traps and nothing handles it, so a `j .` follows to park the core either way.
 */
    .section .text.start, "ax"
    .globl _start
    .type _start, @function
_start:
#if !defined(SDK_ARCH_WORMHOLE)
    csrsi   0x7c0, 8
#endif
    /* gp must be set without relaxation: relaxed, `la gp` would be computed from gp itself. */
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top

    /* .data: copy words from the L1 load image to local RAM (the linker 4-byte aligns both ends). */
    la      t0, __data_load
    la      t1, __data_start
    la      t2, __data_end
1:  bgeu    t1, t2, 2f
    lw      t3, 0(t0)
    sw      t3, 0(t1)
    addi    t0, t0, 4
    addi    t1, t1, 4
    j       1b
2:
    /* .bss: zero it; local RAM holds whatever the last program left there. */
    la      t1, __bss_start
    la      t2, __bss_end
3:  bgeu    t1, t2, 4f
    sw      zero, 0(t1)
    addi    t1, t1, 4
    j       3b
4:
    call    main
    /* a0 already holds main's return value */
    ecall
5:  j       5b
    .size _start, . - _start
