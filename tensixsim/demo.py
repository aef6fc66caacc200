"""``make demo``: five cores run compiled C on one tile and exchange data through L1.

BRISC fills an input array, releases NCRISC and TRISC0/1/2 from reset, and waits for their done
flags; each of them computes a different function of the input (NCRISC a transform, TRISC0 a sum,
TRISC1 a multiplicative hash, TRISC2 a prefix scan) and writes its answer to L1; BRISC checks them
all and returns 0 when every answer is right. The emulator's results are also checked here against
a Python model of the same computations.
"""

from __future__ import annotations

import time

import numpy as np

from tensixsim.sdk import programs
from tensixsim.tile import Tile
from tensixsim.timing import DEFAULT_QUANTUM

_INPUT, _TRANSFORMED, _SCAN, _RESULT, _SUMMARY = 0x000, 0x400, 0x800, 0xC00, 0xC40


def run_demo(quantum: int = DEFAULT_QUANTUM) -> tuple[Tile, dict[str, bool], float]:
    """Build and run the demo; returns the tile, the named checks and the wall time."""
    elfs = programs.build_demo()
    tile = Tile("blackhole", quantum=quantum)
    for core, path in elfs.items():
        tile.load_elf(core, path)
    start = time.perf_counter()
    tile.run(max_cycles=50_000_000)
    wall = time.perf_counter() - start

    expected = programs.demo_expected()
    base = programs.DEMO_BASE

    def words(offset: int, count: int) -> list[int]:
        return np.frombuffer(tile.read(base + offset, 4 * count), np.uint32).tolist()

    n = len(expected.input)
    results = words(_RESULT, len(tile.cores))
    checks = {
        "input written by BRISC": words(_INPUT, n) == expected.input,
        "NCRISC transform": words(_TRANSFORMED, n) == expected.transformed,
        "TRISC2 prefix scan": words(_SCAN, n) == expected.scan,
        "per-core results": all(
            results[i] == expected.result[core.name]
            for i, core in enumerate(tile.cores)
            if core.name != "brisc"
        ),
        "BRISC's verdict (0 = all right)": words(_SUMMARY, 1)[0] == expected.summary
        and tile.core("brisc").exit_code == expected.summary,
    }
    return tile, checks, wall


def main(quantum: int = DEFAULT_QUANTUM) -> int:
    tile, checks, wall = run_demo(quantum)
    result = tile.result()
    print("tensixsim demo: five cores run compiled C on one Blackhole tile")
    print()
    print(result.summary(tile.arch.clock_hz))
    print()
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")
    instructions = sum(stats.instructions for stats in result.cores.values())
    print()
    print(f"wall {wall:.3f} s, {instructions:,} RISC-V instructions ({instructions / wall / 1e6:.1f} M/s)")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
