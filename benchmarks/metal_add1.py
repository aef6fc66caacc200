"""The tt-metal firmware copying 64 bf16 tiles DRAM -> L1 -> DRAM through the NoC (BRISC kernel).

The three-TRISC add-one compute stage is not built yet: this measures the data-movement half of the
add-one program. Prints emulated cycles and wall seconds; the last line is
``metal_add1_wall_s: <seconds> s``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from tensixsim import Tile
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.metal.firmware import boot, find_firmware_set, load_firmware
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import Program, launch_program, layout
from tensixsim.metal.wheel import precompiled_firmware

ROOT = Path(__file__).resolve().parent.parent
TILE_BYTES = 32 * 32 * 2


def main() -> None:
    firmware = find_firmware_set(precompiled_firmware(ROOT / ".cache" / "ttnn"), "blackhole")
    start = time.perf_counter()
    tile = Tile("blackhole")
    loaded = load_firmware(tile, firmware)
    booted = boot(tile, loaded)
    banks = firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    matrix = np.random.default_rng(0).integers(0, 1 << 16, size=(256, 256), dtype=np.uint16)
    source = InterleavedBuffer(0x100000, TILE_BYTES, 64, banks)
    target = InterleavedBuffer(0x400000, TILE_BYTES, 64, banks)
    source.write(tile.noc.dram, tilize(matrix))
    kernel = build_kernel(
        ROOT / "tensixsim/sdk/examples/metal/copy.c",
        "brisc",
        loaded,
        layout(loaded).text_start,
        ROOT / "build/metal",
    )
    program = Program({"brisc": kernel}, {"brisc": [source.base, target.base, 64, TILE_BYTES, 0x80000, 0]})
    launch_start = time.perf_counter()
    state = launch_program(tile, loaded, program)
    wall = time.perf_counter() - start
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 256, 256)
    assert (result == matrix).all(), "copy mismatch"
    print(f"boot cycles: {booted.cycles}")
    print(f"launch cycles (copy of 64 tiles): {state.cycles - booted.cycles}")
    print(f"launch wall: {time.perf_counter() - launch_start:.2f} s")
    print(f"metal_add1_wall_s: {wall:.2f} s")


if __name__ == "__main__":
    main()
