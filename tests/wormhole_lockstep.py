"""Random programs for the Wormhole lockstep tests (test_wormhole_native_*.py): queue entries pushed by
the TRISC of each pipe, from a strategy for the words."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native.lockstep import first_difference


def pushed(
    draw: st.DrawFn,
    words: st.SearchStrategy[int],
    pipe_sets: Sequence[tuple[int, ...]],
    most: int,
    gaps: Sequence[int],
) -> list[tuple[int, PushedInstruction]]:
    """(pipe, entry) pairs: for each pipe of a set drawn from ``pipe_sets``, one to ``most`` words pushed
    by its TRISC, each a gap drawn from ``gaps`` after the one before (0: the same cycle)."""
    entries: list[tuple[int, PushedInstruction]] = []
    for pipe in draw(st.sampled_from(list(pipe_sets))):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(1, most))):
            cycle += draw(st.sampled_from(list(gaps)))
            entries.append(
                (pipe, PushedInstruction(draw(words), f"trisc{pipe}", 4 * len(entries), cycle, True))
            )
    return entries


def all_in_c(
    setup: Callable[[Tile], None], entries: list[tuple[int, PushedInstruction]], horizon: int
) -> Tile:
    """Runs ``entries`` from ``setup``'s state on both engines in lockstep (no difference allowed),
    then on a native tile, asserting every entry issued and ran in C; returns that tile."""
    assert first_difference(setup, entries, horizon, arch="wormhole") is None
    tile = Tile("wormhole", engine="native")
    setup(tile)
    for pipe, entry in entries:
        tile.queues[pipe].entries.append(entry)
    tile.backend.advance_to(horizon)
    assert sum(p.issued for p in tile.backend.pipes) == len(entries)
    assert int(tile.backend.native.out[native.OUT_NATIVE]) == len(entries)
    return tile
