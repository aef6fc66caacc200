"""BF16 element-wise add of 64 tile pairs through all five cores.

BRISC reads the tiles into two circular buffers, TRISC0 unpacks, TRISC1 adds (ELWADD into alternate
Dst halves), TRISC2 packs, NCRISC writes the results out (tensixsim/sdk/examples/kernels). Prints
the emulated cycles, the wall time of the run (building and loading excluded) and checks every
output tile bit for bit against the model in tensixsim.sdk.programs.

    python benchmarks/eltwise_e2e.py                   # the run
    python benchmarks/eltwise_e2e.py --profile         # and where the wall time goes (cProfile)
    python benchmarks/eltwise_e2e.py --arch wormhole   # on a Wormhole tile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from tensixsim import Tile
from tensixsim.sdk import programs

TILES = 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()

    elfs = programs.build_eltwise("add", tiles=TILES, arch=args.arch)
    rng = np.random.default_rng(2024)
    a, b = programs.random_bf16_tiles(rng, TILES), programs.random_bf16_tiles(rng, TILES)
    tile = Tile(args.arch)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
    tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))

    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = tile.run(max_cycles=10**8)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start

    out = programs.tiles_from_l1(tile.read(programs.KERNEL_DST, TILES * programs.BF16_TILE_BYTES), TILES)
    for t in range(TILES):
        if not np.array_equal(out[t], programs.eltwise_model("add", a[t], b[t])):
            raise SystemExit(f"tile {t}: wrong result")
    print(result.summary(tile.arch.clock_hz))
    print(f"{TILES} tiles checked; {result.cycles / TILES:.0f} emulated cycles per tile")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    print(f"eltwise64_cycles: {result.cycles}")
    print(f"eltwise64_wall_s: {wall:.2f} s")


if __name__ == "__main__":
    main()
