"""Wormhole's tt-metal firmware from the ttnn wheel: boot, launches, and where the model stops.

Every address checked comes from the firmware's own DWARF (tensixsim.metal.firmware); the wheel is
cached by the metal tests (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble

from tensixsim import Tile, Unimplemented
from tensixsim.arch import CORE_NAMES
from tensixsim.metal.examples import build_add_one
from tensixsim.metal.firmware import EMPTY_KERNEL, boot, find_firmware_set, launch, load_firmware
from tensixsim.metal.host import DramFile, run_launch
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import Program, launch_program, layout
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


def test_brisc_and_trisc_kernels_run_once_per_launch(wormhole_set):
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


def test_an_ncrisc_kernel_stops_at_the_mover_that_fills_its_instruction_ram(wormhole_set):
    tile, loaded, _ = booted(wormhole_set)
    with pytest.raises(
        Unimplemented, match="RISCV_TDMA_REG_XMOV_SRC_ADDR: the TDMA-RISC mover command queue"
    ):
        launch(tile, loaded, {"ncrisc": EMPTY_KERNEL})


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


def test_dram_buffers_and_the_add_one_example_are_refused_naming_what_is_missing(wormhole_set, tmp_path):
    data = tmp_path / "in.bin"
    data.write_bytes(bytes(2048))
    with pytest.raises(Unimplemented, match="wormhole: DRAM buffers need NoC traffic"):
        run_launch(
            wormhole_set.path, {}, args=[], circular_buffers=[], inputs=[DramFile(data, 0)], arch="wormhole"
        )
    _, loaded, _ = booted(wormhole_set)
    with pytest.raises(Unimplemented, match="the add-one example runs on blackhole only"):
        build_add_one(loaded, tmp_path)
