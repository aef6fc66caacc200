"""Host time of a chip run against the number of active Tensix tiles, and the memory of a whole chip.

Every active tile runs the SDK's ring example (tensixsim/sdk/examples/chip/ring.c) on BRISC: per
round it adds one to 256 words, writes them to the next tile of the ring with an acknowledged NoC
write and counts that tile's flag up with a NoC atomic, then waits for its predecessor's data. The
tiles are the first Tensix tiles of the grid in row order. Each run is checked bit for bit against
tensixsim.sdk.programs.ring_expected. Prints the emulated cycles (the chip's clock), wall seconds per
million emulated cycles, emulated tile-cycles per wall second and the tile windows run; then the
resident memory of a Chip with every Tensix tile built once (--no-whole-chip skips it: about 12 s
and 2.7 GB).

    python benchmarks/chip_scaling.py
    python benchmarks/chip_scaling.py --arch wormhole   # a Wormhole chip (its 80 Tensix tiles)
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

from tensixsim.chip import Chip
from tensixsim.sdk import programs

WORDS = 256
ROUNDS = 200
COUNTS = (1, 2, 4, 8, 16)


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024


def ring(elf, count: int, arch: str = "blackhole") -> tuple[int, float, int]:
    """(emulated cycles, wall seconds of the run, tile windows run) of a ring of ``count`` tiles."""
    chip = Chip(arch)
    coords = list(chip.tensix_tiles[:count])
    sources = []
    for i, xy in enumerate(coords):
        tile = chip.tile(*xy)
        tile.load_elf("brisc", elf)
        sources.append((np.arange(WORDS, dtype=np.uint32) * 2654435761 + i).astype(np.uint32))
        tile.write(programs.CHIP_SRC, sources[-1])
        tile.write(programs.CHIP_ARGS, np.array([*coords[(i + 1) % count], WORDS, ROUNDS], np.uint32))
    start = time.perf_counter()
    result = chip.run(max_cycles=10**9)
    wall = time.perf_counter() - start
    expected = programs.ring_expected(sources, ROUNDS)
    for i, xy in enumerate(coords):
        got = np.frombuffer(chip.tile(*xy).read(programs.CHIP_DST, 4 * WORDS * ROUNDS), np.uint32)
        if not np.array_equal(got, np.concatenate(expected[i])):
            raise SystemExit(f"ring of {count}: tile {xy} holds a wrong result")
    return result.cycles, wall, result.windows


def whole_chip(arch: str = "blackhole") -> tuple[float, float, int]:
    """(MiB per tile, seconds to build them all, tiles) for a Chip with every Tensix tile built."""
    chip = Chip(arch)
    chip.tile(*chip.tensix_tiles[0])  # shared set-up (native libraries) out of the figure
    before = rss_mib()
    start = time.perf_counter()
    for xy in chip.tensix_tiles[1:]:
        chip.tile(*xy)
    built = len(chip.tensix_tiles) - 1
    return (rss_mib() - before) / built, time.perf_counter() - start, len(chip.tiles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-whole-chip", action="store_true", help="skip building every Tensix tile")
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    elf = programs.build_chip_examples(arch=args.arch)["ring"]
    print(f"{'tiles':>5} {'cycles':>9} {'wall s':>7} {'s/Mcycle':>9} {'tile-cycles/s':>14} {'windows':>8}")
    rates = {}
    for count in COUNTS:
        cycles, wall, windows = ring(elf, count, args.arch)
        rates[count] = cycles / wall
        print(
            f"{count:>5} {cycles:>9} {wall:>7.2f} {wall / cycles * 1e6:>9.2f} {count * cycles / wall:>14.0f}"
            f" {windows:>8}"
        )
    if not args.no_whole_chip:
        per_tile, seconds, tiles = whole_chip(args.arch)
        print(
            f"whole chip: {tiles} Tensix tiles built in {seconds:.1f} s, {per_tile:.1f} MiB resident per tile"
        )
    print(f"chip16_cycles_per_s: {rates[16]:.0f} cycles/s")


if __name__ == "__main__":
    main()
