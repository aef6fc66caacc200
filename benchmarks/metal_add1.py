"""Add-one on 64 bf16 tiles through the real tt-metal firmware: reader (NCRISC), unpack / math /
pack (TRISC0..2), writer (BRISC), DRAM -> L1 circular buffers -> DRAM over the NoCs.

Prints emulated cycles (boot, launch) and wall seconds; checks the result against bf16(x + 1). The
wall time covers firmware load, boot, the launch and the check (not compiling the kernels, which
are cached); the last line is ``metal_add1_wall_s: <seconds> s``. ``--arch wormhole``: through the
Wormhole firmware of the same wheel.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from tensixsim import Tile
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.metal.examples import BF16_TILE, add_one_program, build_add_one
from tensixsim.metal.firmware import boot, find_firmware_set, load_firmware
from tensixsim.metal.launch import launch_program
from tensixsim.metal.wheel import precompiled_firmware

ROOT = Path(__file__).resolve().parent.parent
TILES = 64


def expected(bits: np.ndarray) -> np.ndarray:
    """bf16(x + 1) for finite normal inputs: a binary32 sum rounded to bf16, ties away from zero."""
    total = ((bits.astype(np.uint32) << 16).view(np.float32) + np.float32(1.0)).view(np.uint32)
    total[(total & 0x7F800000) == 0] = 0
    sign, magnitude = total & 0x80000000, total & 0x7FFFFFFF
    return ((sign | (magnitude + 0x8000) >> 16 << 16) >> 16).astype(np.uint16)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    arch = parser.parse_args().arch
    firmware = find_firmware_set(precompiled_firmware(ROOT / ".cache" / "ttnn"), arch)
    rng = np.random.default_rng(0)
    values = rng.standard_normal((256, 256)).astype(np.float32) * 300
    matrix = (values.view(np.uint32) >> 16).astype(np.uint16)  # 64 tiles of bf16
    start = time.perf_counter()
    tile = Tile(arch)
    loaded = load_firmware(tile, firmware)
    booted = boot(tile, loaded)
    kernels = build_add_one(loaded, ROOT / "build" / "metal")
    banks = firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    alignment = tile.arch.noc.dram_alignment
    source = InterleavedBuffer(0x100000, BF16_TILE, TILES, banks, alignment)
    target = InterleavedBuffer(0x400000, BF16_TILE, TILES, banks, alignment)
    source.write(tile.noc.dram, tilize(matrix))
    launch_start = time.perf_counter()
    state = launch_program(tile, loaded, add_one_program(kernels, source.base, target.base, TILES))
    launch_wall = time.perf_counter() - launch_start
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 256, 256)
    ok = bool((result == expected(matrix)).all())
    wall = time.perf_counter() - start
    cycles = state.cycles - booted.cycles
    print(f"boot cycles: {booted.cycles}")
    print(f"launch cycles (add-one, {TILES} tiles): {cycles} ({cycles / TILES:.0f} per tile)")
    print(f"launch wall: {launch_wall:.2f} s ({cycles / launch_wall:,.0f} emulated cycles/s)")
    print(f"result: {'bf16(x + 1) bit for bit' if ok else 'MISMATCH'}")
    print(f"metal_add1_wall_s: {wall:.2f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
