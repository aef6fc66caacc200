"""Captured Tensix instructions per second.

The three TRISCs each run tensixsim/sdk/examples/bench/tensix_push.c at once: a loop pushing NOPs
into their own pipe, half as inline instruction words and half as stores to the push address. Each
pipe's consumer is the capture-only recorder backend (one instruction per cycle, nothing executed),
so queues stay shallow and every push is captured, timestamped and checked. ``--arch wormhole``: on
a Wormhole tile.
"""

from __future__ import annotations

import argparse
import time

from tensixsim import Tile
from tensixsim.sdk import programs

COUNT = 200_000  # per TRISC


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    tile = Tile(args.arch, backend="recorder")
    for core in ("trisc0", "trisc1", "trisc2"):
        tile.load_elf(core, programs.build_tensix_push(core, count=COUNT, arch=args.arch))
    start = time.perf_counter()
    result = tile.run(max_cycles=10**10, release=["trisc0", "trisc1", "trisc2"])
    wall = time.perf_counter() - start
    pushed = 0
    for pipe in range(3):
        words = tile.pushed(pipe)
        if len(words) != COUNT or any(p.word != 0x02000000 for p in words):
            raise SystemExit(f"pipe {pipe}: expected {COUNT} NOPs, got {len(words)}")
        pushed += len(words)
    print(result.summary(tile.arch.clock_hz))
    print(f"wall {wall:.2f} s, {pushed:,} Tensix instructions captured and checked")
    print(f"tensix_push_per_s: {pushed / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
