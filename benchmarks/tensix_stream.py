"""Tensix instructions executed per second, pushed straight from a TRISC.

TRISC0 runs tensixsim/sdk/examples/bench/tensix_stream.c: it pushes SETDMAREG words into its own
pipe, half as inline instruction words and half as stores to its push address, and the coprocessor
(the default backend, not the capture-only recorder) executes every one into thread 0's GPRs. The
immediates and half-registers vary along the stream, so after the run all 64 GPRs are checked
against the Python model programs.tensix_stream_gprs, and pipe 0's issued count against the pushes.
Only tile.run is timed. ``--arch wormhole``: on a Wormhole tile (SETDMAREG runs natively there too).
"""

from __future__ import annotations

import argparse
import time

from tensixsim import Tile
from tensixsim.sdk import programs

COUNT = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=COUNT, help=f"words to push (default {COUNT:,})")
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    count = args.count
    if count < 0:
        parser.error("--count must not be negative")
    tile = Tile(args.arch)
    tile.load_elf("trisc0", programs.build_tensix_stream(count=count, arch=args.arch))
    start = time.perf_counter()
    result = tile.run(max_cycles=10**10, release=["trisc0"])
    wall = time.perf_counter() - start
    issued = tile.backend.pipes[0].issued
    if issued != count:
        raise SystemExit(f"pipe 0 issued {issued:,} instructions, expected {count:,}")
    gprs = [int(v) for v in tile.coprocessor.thcon.gprs[0]]
    expected = programs.tensix_stream_gprs(count, len(gprs))
    wrong = [
        f"GPR{g} = 0x{got:08x} (expected 0x{want:08x})"
        for g, (got, want) in enumerate(zip(gprs, expected, strict=True))
        if got != want
    ]
    if wrong:
        raise SystemExit("thread 0 GPRs differ from the model: " + "; ".join(wrong))
    print(result.summary(tile.arch.clock_hz))
    print(f"wall {wall:.2f} s, {result.cycles:,} emulated cycles")
    print(f"{issued:,} SETDMAREG executed on pipe 0; the 64 GPRs match the model")
    print(f"tensix_stream_per_s: {issued / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
