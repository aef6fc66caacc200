"""Aggregate simulated RISC-V instructions per second: five cores run compute-bound C at once.

BRISC releases the four other cores, all five run the same CRC / matrix / bit-manipulation kernel
(tensixsim/sdk/examples/bench/compute.c, with Zba/Zbb instructions emulated in Python on Blackhole;
Wormhole's cores are RV32IM, so the compiler does without them), and BRISC waits for the others.
Checksums are verified against the Python model before the figure is printed. ``--arch wormhole``:
on a Wormhole tile.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tensixsim import Tile
from tensixsim.sdk import programs

ITERS = 2000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    elfs = programs.build_compute_bench(iters=ITERS, arch=args.arch)
    tile = Tile(args.arch)
    for core, path in elfs.items():
        tile.load_elf(core, path)
    start = time.perf_counter()
    result = tile.run(max_cycles=10**10)
    wall = time.perf_counter() - start
    checksums = np.frombuffer(tile.read(programs.BENCH_BASE, 4 * 5), np.uint32)
    for index, core in enumerate(tile.cores):
        expected = programs.compute_reference(index, ITERS)
        if int(checksums[index]) != expected:
            raise SystemExit(f"{core.name}: checksum 0x{int(checksums[index]):08x} != 0x{expected:08x}")
    instructions = sum(stats.instructions for stats in result.cores.values())
    print(result.summary(tile.arch.clock_hz))
    print(f"wall {wall:.2f} s, {instructions:,} instructions, checksums verified")
    print(f"riscv_instructions_per_s: {instructions / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
