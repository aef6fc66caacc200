"""Host time to build a tile: what every property test pays per example.

Builds TILES tiles one after another (each dropped before the next, as a test's examples do) and
checks each runs a one-instruction program; prints the median of five rounds, per tile.
``--arch wormhole``: Wormhole tiles.
"""

from __future__ import annotations

import argparse
import statistics
import time

from tensixsim import Tile

TILES = 30
ROUNDS = 5
ECALL = (0x00000073).to_bytes(4, "little")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    Tile(args.arch)  # (the first tile also loads the native libraries)
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(TILES):
            tile = Tile(args.arch)
            tile.write(0, ECALL)
            if tile.run(max_cycles=1000).cores["brisc"].instructions != 1:
                raise SystemExit("a fresh tile did not run its one instruction")
        rounds.append((time.perf_counter() - start) / TILES)
    print(f"{TILES} tiles a round, {ROUNDS} rounds: {', '.join(f'{r * 1e3:.1f}' for r in rounds)} ms a tile")
    print(f"tile_create_ms: {statistics.median(rounds) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
