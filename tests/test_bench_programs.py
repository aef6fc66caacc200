"""The benchmark programs of tensixsim/sdk/examples/bench/, run small on the emulator: they leave
what their Python models in tensixsim.sdk.programs say, so the benchmarks' checks mean something.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensixsim import Tile
from tensixsim.sdk import programs

BUILD_DIR = Path(__file__).resolve().parent.parent / "build" / "sdk"  # shared with test_sdk.py


def _run_stream(count: int) -> tuple[Tile, int]:
    tile = Tile("blackhole")
    tile.load_elf("trisc0", programs.build_tensix_stream(count=count, build_dir=BUILD_DIR))
    result = tile.run(max_cycles=10**6, release=["trisc0"])
    return tile, result.cycles


# 200: whole inline blocks plus a partial one and whole unrolled store groups plus a remainder;
# 37: odd, so the store half is one longer than the inline half.
@pytest.mark.parametrize("count", [200, 37])
def test_tensix_stream_gprs_match_the_model(count: int) -> None:
    tile, _ = _run_stream(count)
    assert tile.core("trisc0").reg("a0") == count
    assert tile.backend.pipes[0].issued == count
    gprs = [int(v) for v in tile.coprocessor.thcon.gprs[0]]
    assert gprs == programs.tensix_stream_gprs(count, len(gprs))
    assert not tile.coprocessor.thcon.gprs[1:].any(), "another thread's GPRs were written"


def test_tensix_stream_model_stores_the_counters_low_16_bits() -> None:
    # Stores 0 .. 65541 (written out by hand: the last one to each of half-registers 8..11).
    gprs = programs.tensix_stream_gprs(2 * 65542)
    assert gprs[4] == 65540 % 65536 | (65541 % 65536) << 16
    assert gprs[5] == 65538 % 65536 | (65539 % 65536) << 16


def test_tensix_stream_cycles_are_deterministic() -> None:
    _, first = _run_stream(200)
    _, second = _run_stream(200)
    assert first == second > 200


def test_tensix_stream_refuses_a_core_without_a_pipe() -> None:
    with pytest.raises(ValueError, match="TRISC"):
        programs.build_tensix_stream("brisc", build_dir=BUILD_DIR)
