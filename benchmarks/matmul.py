"""32x32x32 bf16 tile matmuls per second on the matrix unit, one MVMUL at a time and on the fast path.

Raw instructions go straight into the math pipe (tensixsim.raw): the replay buffer is loaded once
with fifteen MVMULs, then each tile is one MOP whose expansion runs them per fidelity phase (16 MVMULs
per phase, Dst in FP32). SrcA / SrcB hold one random tile each. Before the figures are printed, the
fast path's Dst and cycle count are checked against the one-at-a-time path. The headline is the fast
path at HiFi4 (four phases, 64 MVMULs per tile). ``--arch wormhole``: on a Wormhole tile (its MVMUL
is its own, run by the Python semantics; tensixsim.raw's Wormhole ADDR_MOD plan).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tensixsim import Tile
from tensixsim.raw import (
    MATH_THREAD,
    SRCA,
    SRCB,
    configure_matmul,
    load_src_tile,
    matmul_tile_words,
    run_words,
)
from tensixsim.tensix import formats


def _tile(fast: bool, phases: int, seed: int = 0, arch: str = "blackhole") -> tuple[Tile, list[int]]:
    rng = np.random.default_rng(seed)
    tile = Tile(arch)
    tile.backend.fast_paths = fast
    copro = tile.coprocessor
    configure_matmul(copro, fp32_dest=True)
    for file in (SRCA, SRCB):
        values = rng.standard_normal((32, 32)).astype(np.float32)
        load_src_tile(copro, file, formats.fp32_to_bf16(values.view(np.uint32)))
    run_words(tile, MATH_THREAD, matmul_tile_words(copro, phases))  # records the replay buffer
    return tile, matmul_tile_words(copro, phases, record=False)


def tiles_per_second(fast: bool, phases: int, seconds: float, arch: str = "blackhole") -> float:
    tile, mop = _tile(fast, phases, arch=arch)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            run_words(tile, MATH_THREAD, mop)
        count += 10
    return count / (time.perf_counter() - start)


def check_fast_path_agrees(phases: int, tiles: int = 3, arch: str = "blackhole") -> int:
    results = []
    for fast in (False, True):
        tile, mop = _tile(fast, phases, arch=arch)
        for _ in range(tiles):
            end = run_words(tile, MATH_THREAD, mop)
        results.append((tile.coprocessor.regs.dst.copy(), end))
    (slow_dst, slow_end), (fast_dst, fast_end) = results
    if not np.array_equal(slow_dst, fast_dst) or slow_end != fast_end:
        raise SystemExit(f"fast path disagrees at {phases} phases: cycles {fast_end} vs {slow_end}")
    return fast_end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    arch = parser.parse_args().arch
    for phases in (1, 4):
        cycles = check_fast_path_agrees(phases, arch=arch)
        print(f"fast path == one-at-a-time at {phases} phase(s): 3 tiles in {cycles} cycles (bit for bit)")
    for phases, name in ((1, "LoFi"), (4, "HiFi4")):
        slow = tiles_per_second(False, phases, 3.0, arch)
        print(f"instruction path, {name}: {slow:,.0f} tiles/s")
    for phases, name in ((1, "LoFi"), (4, "HiFi4")):
        fast = tiles_per_second(True, phases, 4.0, arch)
        print(f"fast path, {name}: {fast:,.0f} tiles/s")
    print(f"matmul_tiles_per_s: {fast:.0f}")


if __name__ == "__main__":
    main()
