"""Memory of a long run that pushes constantly: peak RSS after 100 M emulated cycles.

TRISC0 runs the tensix_stream program (tensixsim/sdk/examples/bench/tensix_stream.c) with 50 M
SETDMAREG words, about 100 M cycles, executed by the coprocessor. Nothing the tile keeps may grow
with the number of instructions (pushed words are recorded only with ``record_pushes=True``), so the
peak resident set stays that of a short run. Prints the RSS before and after; the last line is the
peak in MB. ``--arch wormhole``: on a Wormhole tile (SETDMAREG runs natively there too).
"""

from __future__ import annotations

import argparse
import resource
import time

from tensixsim import Tile
from tensixsim.sdk import programs

COUNT = 50_000_000


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=COUNT, help=f"words to push (default {COUNT:,})")
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    count = args.count
    tile = Tile(args.arch)
    tile.load_elf("trisc0", programs.build_tensix_stream(count=count, arch=args.arch))
    before = rss_mb()
    start = time.perf_counter()
    result = tile.run(max_cycles=10**10, release=["trisc0"])
    wall = time.perf_counter() - start
    issued = tile.backend.pipes[0].issued
    if issued != count:
        raise SystemExit(f"pipe 0 issued {issued:,} instructions, expected {count:,}")
    print(f"{issued:,} instructions, {result.cycles:,} emulated cycles in {wall:.1f} s")
    print(f"peak RSS before the run {before:.0f} MB, after {rss_mb():.0f} MB")
    print(f"stream_100m_cycles_peak_rss_mb: {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
