"""End to end: TRISC0 and TRISC2 (compiled C) share a circular buffer kept on stream registers
and a Tensix semaphore, the way tt-metal kernels do, on Blackhole and on Wormhole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensixsim import Tile
from tensixsim.sdk.build import build

EXAMPLE = Path(__file__).resolve().parent.parent / "tensixsim" / "sdk" / "examples" / "cb"
STREAM, PAGES, PAGE_WORDS, TILES, SEM = 5, 4, 16, 40, 2
OUT = 0x20000 + 0x20000
START = 0xFFF0  # the 16-bit counter comparisons wrap through 0x10000 halfway


def pattern(tile: int, word: int) -> int:
    return ((tile * 0x9E3779B9) ^ (word * 0x01000193) ^ 0xC0FFEE00) & 0xFFFFFFFF


def run(quantum: int, arch: str = "blackhole") -> Tile:
    tile = Tile(arch, quantum=quantum)
    build_dir = Path("build") / "sdk"
    for core, name in (("trisc0", "producer"), ("trisc2", "consumer")):
        elf = build_dir / f"cb_{name}_{arch}.elf"
        tile.load_elf(core, build(core, [EXAMPLE / f"{name}.c"], elf, arch=arch))
    tile.streams.write(STREAM, tile.streams.tiles_received, START)
    tile.streams.write(STREAM, tile.streams.tiles_acked, START)
    tile.run(release=["trisc0", "trisc2"], max_cycles=10_000_000)
    return tile


@pytest.mark.parametrize(("arch", "quantum"), [("blackhole", 200), ("blackhole", 2000), ("wormhole", 200)])
def test_consumer_sees_what_the_producer_wrote(arch: str, quantum: int) -> None:
    tile = run(quantum, arch)
    out = np.frombuffer(tile.read(OUT, 4 * TILES * PAGE_WORDS), np.uint32).reshape(TILES, PAGE_WORDS)
    expected = np.array([[pattern(t, i) for i in range(PAGE_WORDS)] for t in range(TILES)], np.uint32)
    assert np.array_equal(out, expected)
    # The counters moved by one per tile, straight through the 16-bit wrap.
    assert tile.streams.read(STREAM, tile.streams.tiles_received) == START + TILES
    assert tile.streams.read(STREAM, tile.streams.tiles_acked) == START + TILES
    # Every SEMPOST was matched by a SEMGET; the producer never ran more than the CB ahead.
    assert int(tile.coprocessor.sync.sem_value[SEM]) == 0
    result = tile.result()
    assert 1 <= result.cores["trisc2"].exit_code <= PAGES + 1
    assert result.cores["trisc0"].tensix_pushed == TILES == result.cores["trisc2"].tensix_pushed
    assert all(p.idle and p.blocked is None for p in tile.backend.pipes)


@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_timing_does_not_depend_on_the_quantum(arch: str) -> None:
    assert run(200, arch).result().cycles == run(5000, arch).result().cycles
