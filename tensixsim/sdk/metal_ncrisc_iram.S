/* The entry of a tt-metal kernel for Wormhole's NCRISC, which runs from its instruction RAM
 * (tensixsim.metal.kernels links it there, linked first).
 *
 * The Wormhole firmware does not call an NCRISC kernel: it has the mover copy the kernel into the
 * instruction RAM, then parks in wh_iram_trampoline, which pushes ra and s0..s11 into a 64-byte frame
 * (ra at 0, s<i> at 4 + 4 i), leaves sp in L1 at METAL_NCRISC_HALT_STACK and spins; BRISC then resets
 * NCRISC at the instruction RAM's first word. So the kernel starts with nothing set up: take back the
 * firmware's gp (METAL_FIRMWARE_GP, its __global_pointer$), its stack and the registers it saved, and
 * run _start, whose return lands in the firmware just after the trampoline's call, as tt-metal's own
 * kernels do. Both numbers are the build's, from the firmware it links against.
 */
    .section .iram_entry, "ax"
    .globl __ncrisc_iram_entry
    .type __ncrisc_iram_entry, @function
__ncrisc_iram_entry:
    .option push
    .option norelax
    li      gp, METAL_FIRMWARE_GP
    .option pop
    lw      sp, METAL_NCRISC_HALT_STACK(zero)
    lw      ra, 0(sp)
    lw      s0, 4(sp)
    lw      s1, 8(sp)
    lw      s2, 12(sp)
    lw      s3, 16(sp)
    lw      s4, 20(sp)
    lw      s5, 24(sp)
    lw      s6, 28(sp)
    lw      s7, 32(sp)
    lw      s8, 36(sp)
    lw      s9, 40(sp)
    lw      s10, 44(sp)
    lw      s11, 48(sp)
    addi    sp, sp, 64
    tail    _start
    .size __ncrisc_iram_entry, . - __ncrisc_iram_entry
