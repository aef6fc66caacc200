"""Slow-dispatch launches through the real tt-metal firmware: a DRAM -> L1 -> DRAM copy kernel.

The copy kernel (tensixsim/sdk/examples/metal/copy.c) uses the firmware's runtime-argument pointer
and the DRAM bank tables the host wrote before boot; the expected result is the input buffer itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensixsim import Tile
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.metal.firmware import boot, find_firmware_set, load_firmware
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import KernelOverrun, LaunchTimeout, Program, launch_program, layout
from tensixsim.metal.wheel import precompiled_firmware
from tensixsim.noc import NoEndpoint

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "ttnn"
KERNELS = ROOT / "tensixsim" / "sdk" / "examples" / "metal"
BUILD = ROOT / "build" / "metal"
TILE_BYTES = 32 * 32 * 2  # one bf16 tile
L1_BUFFER = 0x80000


@pytest.fixture(scope="module")
def firmware():
    return find_firmware_set(precompiled_firmware(CACHE), "blackhole")


def booted(firmware):
    tile = Tile("blackhole")
    loaded = load_firmware(tile, firmware)
    boot(tile, loaded)
    return tile, loaded


def copy_kernel(loaded, core: str = "brisc", offset: int = 0) -> Path:
    return build_kernel(KERNELS / "copy.c", core, loaded, layout(loaded).text_start + offset, BUILD)


@pytest.mark.parametrize("noc", [0, 1])
def test_copy_64_bf16_tiles_through_dram(firmware, noc):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    rng = np.random.default_rng(noc)
    matrix = rng.integers(0, 1 << 16, size=(8 * 32, 8 * 32), dtype=np.uint16)  # 64 tiles
    source = InterleavedBuffer(0x100000, TILE_BYTES, 64, banks)
    target = InterleavedBuffer(0x400000, TILE_BYTES, 64, banks)
    source.write(tile.noc.dram, tilize(matrix))
    program = Program(
        kernels={"brisc": copy_kernel(loaded)},
        runtime_args={"brisc": [source.base, target.base, 64, TILE_BYTES, L1_BUFFER, noc]},
    )
    state = launch_program(tile, loaded, program)
    assert state.waits_for_go(loaded.mailbox)
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 8 * 32, 8 * 32)
    assert (result == matrix).all()


def test_copy_on_ncrisc(firmware):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("ncrisc").array_length("dram_bank_to_noc_xy") // 2
    data = np.arange(4 * TILE_BYTES // 2, dtype=np.uint16)
    source = InterleavedBuffer(0x200000, TILE_BYTES, 4, banks)
    target = InterleavedBuffer(0x300000, TILE_BYTES, 4, banks)
    source.write(tile.noc.dram, data)
    program = Program(
        kernels={"ncrisc": copy_kernel(loaded, "ncrisc")},
        runtime_args={"ncrisc": [source.base, target.base, 4, TILE_BYTES, L1_BUFFER, 0]},
    )
    launch_program(tile, loaded, program)
    assert target.read(tile.noc.dram) == data.tobytes()


def test_noc_request_to_a_coordinate_outside_the_grid_is_named(firmware):
    tile, loaded = booted(firmware)
    # Corrupt BRISC's copy of the bank table: bank 0 now points outside the 17x12 grid.
    symbols = loaded.images["brisc"].symbols
    table = symbols["dram_bank_to_noc_xy"] - tile.arch.local_ram_base
    tile.local_ram["brisc"][table : table + 2] = np.frombuffer((30 | 30 << 6).to_bytes(2, "little"), np.uint8)
    program = Program(
        kernels={"brisc": copy_kernel(loaded)},
        runtime_args={"brisc": [0x100000, 0x400000, 1, TILE_BYTES, L1_BUFFER, 0]},
    )
    with pytest.raises(NoEndpoint, match=r"\(30, 30\)") as info:
        launch_program(tile, loaded, program)
    assert info.value.core == "brisc"


def test_a_launch_that_never_reports_done_is_a_timeout(firmware):
    tile, loaded = booted(firmware)
    # The kernel polls an L1 word that nothing ever writes.
    spin = KERNELS / "spin.c"
    elf = build_kernel(spin, "brisc", loaded, layout(loaded).text_start, BUILD)
    with pytest.raises(LaunchTimeout):
        launch_program(tile, loaded, Program(kernels={"brisc": elf}), max_cycles=2_000_000)


def test_a_kernel_outside_its_slot_is_refused(firmware):
    tile, loaded = booted(firmware)
    where = layout(loaded)
    elf = build_kernel(KERNELS / "copy.c", "brisc", loaded, where.text_end - 64, BUILD)
    before = tile.l1.copy()
    with pytest.raises(KernelOverrun, match="outside the kernel slot"):
        launch_program(tile, loaded, Program(kernels={"brisc": elf}))
    assert (tile.l1 == before).all()  # nothing written
