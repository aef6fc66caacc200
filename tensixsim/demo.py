"""``make demo``: five cores run compiled C on one tile; then a matmul kernel runs through the coprocessor.

BRISC fills an input array, releases NCRISC and TRISC0/1/2 from reset, and waits for their done
flags; each of them computes a different function of the input (NCRISC a transform, TRISC0 a sum,
TRISC1 a multiplicative hash, TRISC2 a prefix scan) and writes its answer to L1; BRISC checks them
all and returns 0 when every answer is right. The emulator's results are also checked here against
a Python model of the same computations.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from tensixsim.sdk import programs
from tensixsim.tile import Tile
from tensixsim.timing import DEFAULT_QUANTUM

_INPUT, _TRANSFORMED, _SCAN, _RESULT, _SUMMARY = 0x000, 0x400, 0x800, 0xC00, 0xC40


def run_demo(quantum: int = DEFAULT_QUANTUM, arch: str = "blackhole") -> tuple[Tile, dict[str, bool], float]:
    """Build and run the demo; returns the tile, the named checks and the wall time."""
    elfs = programs.build_demo(arch=arch)
    tile = Tile(arch, quantum=quantum)
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


MATMUL_TILES = 2  # of 32x32, per side: (64 x 64) @ (64 x 64)


def run_matmul_demo(
    *, trace: str | Path | None = None, observe: bool = False
) -> tuple[Tile, dict[str, bool], float]:
    """Build and run the five-core matmul kernel on random BF16 inputs; returns the tile, the named
    checks and the wall time. ``trace``, ``observe``: as for Tile.run."""
    n = MATMUL_TILES
    elfs = programs.build_matmul(mt=n, nt=n, kt=n, phases=4)
    rng = np.random.default_rng(2026)
    a, b = (rng.standard_normal((32 * n, 32 * n)).astype(np.float32) for _ in range(2))
    a_bits, b_bits = (programs.round_fp32_to_bf16(m) for m in (a, b))
    tiles = [
        [m[32 * i : 32 * i + 32, 32 * j : 32 * j + 32] for i in range(n) for j in range(n)]
        for m in (a_bits, b_bits)
    ]
    tile = Tile("blackhole")
    for core, path in elfs.items():
        tile.load_elf(core, path)
    tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(tiles[0]).tobytes())
    tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(tiles[1]).tobytes())
    start = time.perf_counter()
    tile.run(max_cycles=5_000_000, trace=trace, observe=observe)
    wall = time.perf_counter() - start
    out = programs.tiles_from_l1(tile.read(programs.KERNEL_DST, n * n * 2048), n * n)
    got = np.block([[out[i * n + j] for j in range(n)] for i in range(n)]).astype(np.uint32) << 16
    x, y = ((m.astype(np.uint32) << 16).view(np.float32).astype(np.float64) for m in (a_bits, b_bits))
    exact = x @ y
    bound = 2.0**-8 * np.abs(exact) + 2.0**-20 * (np.abs(x) @ np.abs(y))
    checks = {
        "every core returned 0": all(c.exit_code == 0 for c in tile.result().cores.values()),
        "C = A @ B within BF16 rounding": bool((np.abs(got.view(np.float32) - exact) <= bound).all()),
    }
    return tile, checks, wall


def main(quantum: int = DEFAULT_QUANTUM, arch: str = "blackhole") -> int:
    tile, checks, wall = run_demo(quantum, arch)
    result = tile.result()
    print(f"tensixsim demo: five cores run compiled C on one {arch.capitalize()} tile")
    print()
    print(result.summary(tile.arch.clock_hz))
    print()
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")
    instructions = sum(stats.instructions for stats in result.cores.values())
    print()
    print(f"wall {wall:.3f} s, {instructions:,} RISC-V instructions ({instructions / wall / 1e6:.1f} M/s)")

    if arch != "blackhole":
        # The matmul kernel is written with tensix_kernel.h, for Blackhole's Tensix instructions and
        # configuration layout.
        print()
        print(f"tensixsim demo: the matmul part runs on Blackhole only (its kernels are not for {arch})")
        return 0 if all(checks.values()) else 1
    mm_tile, mm_checks, mm_wall = run_matmul_demo(observe=True)  # its summary names the bottleneck
    print()
    side = 32 * MATMUL_TILES
    print(f"tensixsim demo: a {side}x{side} BF16 matmul (HiFi4) through all five cores")
    print("  BRISC reads tiles -> TRISC0 unpacks -> TRISC1 matrix unit -> TRISC2 packs -> NCRISC writes")
    print()
    print(mm_tile.result().summary(mm_tile.arch.clock_hz))
    print()
    for name, ok in mm_checks.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")
    print()
    print(f"wall {mm_wall:.3f} s")
    return 0 if all(checks.values()) and all(mm_checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
