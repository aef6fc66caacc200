"""Wormhole's tt-metal firmware from the ttnn wheel: boot, launches, and where the model stops.

Every address checked comes from the firmware's own DWARF (tensixsim.metal.firmware); the wheel is
cached by the metal tests (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble
from test_metal_launch import KERNELS, TILE_BYTES, add_one_reference, every_non_nan_bf16

from tensixsim import InvalidProgram, Tile, UndefinedBehavior, Unimplemented
from tensixsim.arch import CORE_NAMES
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.loader.elf import read_elf
from tensixsim.metal.examples import add_one_program, build_add_one
from tensixsim.metal.firmware import boot, find_firmware_set, launch, load_firmware
from tensixsim.metal.host import DramFile, run_launch
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import KernelOverrun, Program, launch_program, layout
from tensixsim.riscv.core import CoreState

MARKS = 0x30000
NOT_NCRISC = ("brisc", "trisc0", "trisc1", "trisc2")


@pytest.fixture(scope="module")
def wormhole_set(precompiled):
    return find_firmware_set(precompiled, "wormhole")


def booted(firmware):
    tile = Tile("wormhole")
    loaded = load_firmware(tile, firmware)
    return tile, loaded, boot(tile, loaded)


def test_wormhole_firmware_boots_to_waiting_for_go_on_all_five_cores(wormhole_set):
    tile, loaded, state = booted(wormhole_set)
    assert state.waits_for_go(loaded.mailbox)
    assert set(state.waiting) == set(CORE_NAMES)
    assert all(tile.core(core).state is CoreState.WAITING for core in CORE_NAMES)
    # Each subordinate core polls its own subordinate_sync byte (the DWARF's mailbox layout).
    assert sorted(len(state.polled[core]) for core in CORE_NAMES if core != "brisc") == [1] * 4


def test_brisc_and_trisc_kernels_run_once_per_launch(wormhole_set):  # (NCRISC's: below)
    tile, loaded, _ = booted(wormhole_set)
    slots = {core: i for i, core in enumerate(CORE_NAMES) if core in NOT_NCRISC}
    kernels = {
        core: assemble(f"li t0, {0xC0DE00 + i}\n li t1, {MARKS + 4 * i}\n sw t0, 0(t1)\n li a0, 0\n ret")
        for core, i in slots.items()
    }
    for _ in range(2):
        tile.write(MARKS, bytes(4 * len(CORE_NAMES)))
        state = launch(tile, loaded, kernels)
        assert state.waits_for_go(loaded.mailbox)
        marks = np.frombuffer(tile.read(MARKS, 4 * len(CORE_NAMES)), np.uint32).tolist()
        assert marks == [0xC0DE00 + i if core in NOT_NCRISC else 0 for i, core in enumerate(CORE_NAMES)]


def ncrisc_kernel(loaded, mark: int) -> bytes:
    """A raw NCRISC kernel for Wormhole's firmware: it starts out of reset in the instruction RAM, so
    it takes back gp and the context the firmware saved (its stack pointer at
    MEM_NCRISC_HALT_STACK_MAILBOX_ADDRESS, 20: ra, s0..s11 in a 64-byte frame), as tt-metal's own
    kernels' start-up code does, then marks and returns into the firmware."""
    gp = loaded.images["ncrisc"].symbols["__global_pointer$"]
    restore = [f"li gp, {gp}", "lw sp, 20(zero)", "lw ra, 0(sp)"]
    restore += [f"lw s{i}, {4 * (i + 1)}(sp)" for i in range(12)] + ["addi sp, sp, 64"]
    return assemble(
        "\n".join([*restore, f"li t0, {mark}", f"li t1, {MARKS + 4}", "sw t0, 0(t1)", "li a0, 0", "ret"])
    )


def test_an_ncrisc_kernel_is_moved_into_its_instruction_ram_and_runs_there(wormhole_set):
    # The firmware has TDMA-RISC's mover copy the kernel from L1 into the instruction RAM, BRISC
    # resets NCRISC there (NCRISC_RESET_PC in the backend configuration), and the kernel returns into
    # the firmware, which reports done.
    tile, loaded, _ = booted(wormhole_set)
    kernel = ncrisc_kernel(loaded, 0xAB01)
    for _ in range(2):
        tile.write(MARKS, bytes(8))
        state = launch(tile, loaded, {"ncrisc": kernel})
        assert state.waits_for_go(loaded.mailbox)
        assert int.from_bytes(tile.read(MARKS + 4, 4), "little") == 0xAB01
        assert bytes(tile.iram["ncrisc"][: len(kernel)]) == kernel
    assert tile.reset_pc_of("ncrisc") == 0xFFC00000


def test_a_compiled_kernel_for_wormhole_runs_through_run_launch(wormhole_set, tmp_path):
    source = tmp_path / "mark.c"
    source.write_text(
        '#include <stdint.h>\n#include "tensixsim.h"\n'
        '__attribute__((section(".start"), used)) uint32_t _start(void) {\n'
        f"    *(volatile uint32_t *)0x{MARKS:x} = L1_SIZE;\n    return 0;\n}}\n"
    )
    tile, loaded, _ = booted(wormhole_set)
    elf = build_kernel(source, "brisc", loaded, layout(loaded).text_start, tmp_path)
    state = launch_program(tile, loaded, Program(kernels={"brisc": elf}, runtime_args={"brisc": []}))
    assert state.waits_for_go(loaded.mailbox)
    # Built against Wormhole's tensixsim.h (the firmware says which chip): its L1_SIZE.
    assert int.from_bytes(tile.read(MARKS, 4), "little") == 1464 * 1024
    report = run_launch(wormhole_set.path, {"brisc": elf}, args=[], circular_buffers=[], arch="wormhole")
    assert report.boot_cycles > 0 and report.launch_cycles > 0


# A DRAM -> L1 -> DRAM copy of an interleaved buffer with Wormhole's NIU registers (MemoryMap.md:
# initiators 0x400 apart, the 36-bit address in LO and MID's low bits, X/Y from MID bit 4, NOC_CMD_CTRL
# at +0x28, NOC_NODE_ID at +0x2C) and the firmware's bank tables (page p in bank p % NUM_DRAM_BANKS,
# row p / NUM_DRAM_BANKS, pages 32-byte aligned: tt-metal's Wormhole DRAM_ALIGNMENT).
COPY_KERNEL = """
#include <stdint.h>
extern uint32_t *rta_l1_base;
extern uint16_t dram_bank_to_noc_xy[2][NUM_DRAM_BANKS];
extern int32_t bank_to_dram_offset[NUM_DRAM_BANKS];
#define REG(a) (*(volatile uint32_t *)(a))
static void request(uint32_t niu, uint32_t targ, uint32_t targ_xy, uint32_t ret, uint32_t ret_xy,
                    uint32_t ctrl, uint32_t len) {
    while (REG(niu + 0x28) & 1) {
    }
    REG(niu + 0x00) = targ;
    REG(niu + 0x04) = targ_xy << 4;
    REG(niu + 0x0C) = ret;
    REG(niu + 0x10) = ret_xy << 4;
    REG(niu + 0x1C) = ctrl;
    REG(niu + 0x20) = len;
    REG(niu + 0x28) = 1;
}
__attribute__((section(".start"), used)) uint32_t _start(void) {
    const uint32_t *args = rta_l1_base;
    uint32_t src = args[0], dst = args[1], pages = args[2], page = args[3], buffer = args[4], noc = args[5];
    uint32_t niu = noc ? 0xFFB30000u : 0xFFB20000u;
    uint32_t own = REG(niu + 0x2C) & 0xFFF;
    uint32_t reads = REG(niu + 0x208), acks = REG(niu + 0x204);
    for (uint32_t p = 0; p < pages; p++) {
        uint32_t bank = p % NUM_DRAM_BANKS;
        uint32_t offset = (p / NUM_DRAM_BANKS) * ((page + 31) & ~31u) + bank_to_dram_offset[bank];
        uint32_t xy = dram_bank_to_noc_xy[noc][bank];
        request(niu, src + offset, xy, buffer, own, 0, page);
        reads++;
        while (REG(niu + 0x208) != reads) {
        }
        request(niu, buffer, own, dst + offset, xy, 2 | 0x10, page);
        acks++;
        while (REG(niu + 0x204) != acks) {
        }
    }
    return 0;
}
"""


@pytest.mark.parametrize("noc", [0, 1])
def test_a_kernel_copies_an_interleaved_dram_buffer_through_the_firmware(wormhole_set, tmp_path, noc):
    source = tmp_path / "copy.c"
    source.write_text(COPY_KERNEL)
    _, loaded, _ = booted(wormhole_set)
    elf = build_kernel(source, "brisc", loaded, layout(loaded).text_start, tmp_path)
    pages, page = 30, 1000  # 30 pages over 12 banks; 1000-byte pages sit 1024 bytes apart in a bank
    data = np.random.default_rng(noc).integers(0, 256, pages * page, dtype=np.uint8).tobytes()
    (tmp_path / "in.bin").write_bytes(data)
    src, dst = 0x100000, 0x200000
    report = run_launch(
        wormhole_set.path,
        {"brisc": elf},
        args=[src, dst, pages, page, 0x50000, noc],
        circular_buffers=[],
        inputs=[DramFile(tmp_path / "in.bin", src)],
        outputs=[DramFile(tmp_path / "out.bin", dst, pages * page)],
        page_size=page,
        arch="wormhole",
    )
    assert (tmp_path / "out.bin").read_bytes() == data
    assert report.launch_cycles > 0


# ---------------------------------------------------------------- add-one through the firmware


def test_add_one_runs_through_the_wormhole_firmware_bit_for_bit(wormhole_set, tmp_path):
    """The add-one program of tests/test_metal_launch.py, unchanged but for the chip it is built for:
    its NCRISC reader runs from the instruction RAM, its TRISC kernels use Wormhole's Tensix
    instructions and configuration, its reader and writer Wormhole's NIU registers and its CBs
    Wormhole's stream registers. Every non-NaN bf16 pattern, checked against the same reference;
    a second launch shows the firmware's per-launch reset of the CB counters (registers 4 and 3)."""
    tile, loaded, _ = booted(wormhole_set)
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    kernels = build_add_one(loaded, tmp_path)
    alignment = tile.arch.noc.dram_alignment
    for tiles, seed in ((64, 1), (4, 2)):
        side = 8 * 32 if tiles == 64 else 2 * 32
        matrix = every_non_nan_bf16(side, side, seed) if tiles == 64 else random_bf16_matrix(side, seed)
        source = InterleavedBuffer(0x100000, TILE_BYTES, tiles, banks, alignment)
        target = InterleavedBuffer(0x400000, TILE_BYTES, tiles, banks, alignment)
        source.write(tile.noc.dram, tilize(matrix))
        state = launch_program(tile, loaded, add_one_program(kernels, source.base, target.base, tiles))
        assert state.waits_for_go(loaded.mailbox)
        result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), side, side)
        np.testing.assert_array_equal(result, add_one_reference(matrix))
    # The reader ran from NCRISC's instruction RAM: its code is there, where NCRISC was reset.
    code = read_elf(kernels["ncrisc"]).segments[0]
    assert bytes(tile.iram["ncrisc"][: len(code.data)]) == code.data
    assert tile.reset_pc_of("ncrisc") == 0xFFC00000


def random_bf16_matrix(side: int, seed: int) -> np.ndarray:
    """Normal bf16 values of both signs (no NaN, no infinity)."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 2, (side, side)) << 15 | rng.integers(1, 255, (side, side)) << 7).astype(
        np.uint16
    )


def test_an_ncrisc_kernel_not_linked_for_the_instruction_ram_is_refused(wormhole_set, tmp_path):
    tile, loaded, _ = booted(wormhole_set)
    elf = build_kernel(KERNELS / "spin.c", "brisc", loaded, layout(loaded).text_start, tmp_path)  # L1 code
    before = tile.l1.copy()
    with pytest.raises(KernelOverrun, match="not in the instruction RAM"):
        launch_program(tile, loaded, Program(kernels={"ncrisc": elf}))
    assert (tile.l1 == before).all()


def test_an_ncrisc_firmware_that_does_not_park_in_its_trampoline_is_refused(
    wormhole_set, tmp_path, monkeypatch
):
    _, loaded, _ = booted(wormhole_set)
    monkeypatch.delitem(loaded.images["ncrisc"].symbols, "wh_iram_trampoline")
    with pytest.raises(InvalidProgram, match="has no wh_iram_trampoline"):
        build_kernel(KERNELS / "add1_reader.c", "ncrisc", loaded, layout(loaded).text_start, tmp_path)


# ---------------------------------------------------------------- TDMA-RISC's mover commands


def _tdma_program(commands: str) -> Tile:
    tile = Tile("wormhole")
    tile.write(0, assemble("li s1, 0xFFB11000\n" + commands + "\n ecall"))
    return tile


def test_the_mover_command_copies_l1_and_reports_busy_for_the_transfer():
    # TDMA-RISC.md: parameters at +0x0..+0xC (16-byte units), the command (opcode 0x40) at +0x10,
    # STATUS at +0x14 with the mover's busy flag in bit 0 and the empty queue in bit 3.
    tile = _tdma_program(
        "li t0, 0x2000\n sw t0, 0(s1)\n li t0, 0x3000\n sw t0, 4(s1)\n li t0, 64\n sw t0, 8(s1)\n"
        "li t0, 3\n sw t0, 12(s1)\n li t0, 0x40\n sw t0, 16(s1)\n lw a1, 20(s1)\n"
        "1: lw a0, 20(s1)\n andi a0, a0, 1\n bnez a0, 1b\n lw a0, 20(s1)"
    )
    pattern = np.arange(1024, dtype=np.uint8).astype(np.uint8)
    tile.write(0x20000, pattern.tobytes())
    result = tile.run(release=["brisc"])
    assert tile.read(0x30000, 1024) == pattern.tobytes()
    assert tile.core("brisc").reg("a1") & 1 == 1  # busy right after the command
    assert result.cores["brisc"].exit_code == 0x428  # idle: queue empty, 4 free, parameters empty


@pytest.mark.parametrize(
    ("command", "error", "what"),
    [
        ("0x66", Unimplemented, "opcode 0x66"),
        ("0x55", UndefinedBehavior, "opcode 0x55"),
        ("0x80000040", Unimplemented, "compact"),
    ],
)
def test_other_tdma_risc_commands_are_named(command, error, what):
    tile = _tdma_program(f"li t0, {command}\n sw t0, 16(s1)")
    with pytest.raises(error, match=what):
        tile.run(release=["brisc"])


def test_metal_on_the_command_line_with_wormhole_firmware(wormhole_set, tmp_path):
    from tensixsim.cli import main

    source = tmp_path / "nothing.c"
    source.write_text(
        '#include <stdint.h>\n__attribute__((section(".start"), used)) uint32_t _start(void) { return 0; }\n'
    )
    _, loaded, _ = booted(wormhole_set)
    elf = build_kernel(source, "brisc", loaded, layout(loaded).text_start, tmp_path)
    firmware = str(wormhole_set.path)
    assert main(["--arch", "wormhole", "metal", "--firmware", firmware, "--writer", str(elf)]) == 0
    # DRAM buffers: an input laid over the twelve banks and read back as an output (the kernel does
    # nothing), 2048-byte pages.
    data = tmp_path / "in.bin"
    data.write_bytes(np.random.default_rng(9).integers(0, 256, 5 * 2048, dtype=np.uint8).tobytes())
    out = tmp_path / "out.bin"
    argv = ["--arch", "wormhole", "metal", "--firmware", firmware, "--writer", str(elf)]
    assert main([*argv, "--input", f"{data}@0x1000", "--output", f"{out}@0x1000:{5 * 2048}"]) == 0
    assert out.read_bytes() == data.read_bytes()
