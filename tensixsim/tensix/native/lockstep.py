"""Lockstep checking of the native engine against the Python reference engine.

Two tiles get the same coprocessor state and the same queue entries; both engines are advanced one
cycle at a time, and after every cycle (so after every instruction) all architectural state, every
pipe's bookkeeping and the statistics are compared. An error must be the same exception type with the
same message and location on both. :func:`first_difference` returns a description of the first
divergence, or None.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from tensixsim.errors import SimError
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.frontend.tallies import UNIT_ISSUED
from tensixsim.tile import Tile

# Instructions the native engine executes (in the modes it implements), for random streams; the
# vector unit's FMA family is listed thrice so that its results often hold the next reader.
# The scalar unit's memory instructions (native/thcon_mem.c).
THCON_MEMORY = ("LOADIND", "STOREIND", "ATINCGET", "ATINCGETPTR", "ATSWAP", "ATCAS", "REG2FLOP", "FLUSHDMA")
NATIVE_CANDIDATES = [
    "NOP",
    "DMANOP",
    "SETDMAREG",
    "ADDDMAREG",
    "SUBDMAREG",
    "MULDMAREG",
    "BITWOPDMAREG",
    "SHIFTDMAREG",
    "CMPDMAREG",
    *THCON_MEMORY,
    "SETADC",
    "SETADCXY",
    "SETADCZW",
    "SETADCXX",
    "INCADCXY",
    "INCADCZW",
    "ADDRCRXY",
    "ADDRCRZW",
    "SETRWC",
    "INCRWC",
    "SETC16",
    "RMWCIB0",
    "RMWCIB1",
    "RMWCIB2",
    "RMWCIB3",
    "WRCFG",
    "RDCFG",
    "CFGSHIFTMASK",
    "SFPLOAD",
    "SFPLOADMACRO",
    "SFPSTORE",
    "SFPLOADI",
    "SFPMOV",
    "SFPNOP",
    "SFPMAD",
    "SFPADD",
    "SFPMUL",
    "SFPADDI",
    "SFPMULI",
    "SFPMAD",
    "SFPMAD",
    "SFPSETCC",
    "SFPENCC",
    "SFPPUSHC",
    "SFPPOPC",
    "SFPCOMPC",
    "SFPIADD",
    "SFPAND",
    "SFPSWAP",
    "SFPLUT",
    "MVMUL",
    "ELWADD",
    "ELWSUB",
    "ELWMUL",
    "MOVA2D",
    "MOVB2D",
    "ZEROACC",
    "PACR",
    "SEMINIT",
    "SEMPOST",
    "SEMGET",
    "SEMWAIT",
    "STALLWAIT",
    "STREAMWAIT",
    "ATGETM",
    "ATRELM",
]

# Coprocessor state objects whose numpy arrays are architectural state.
STATE_OBJECTS = ("thcon", "adc", "config", "sync", "frontend", "regs", "sfpu", "unpackers", "packer")


def snapshot(tile: Tile) -> dict[str, object]:
    """Everything either engine may change, as comparable values."""
    copro = tile.coprocessor
    engine = tile.backend
    out: dict[str, object] = {}
    for name in STATE_OBJECTS:
        state = getattr(copro, name)
        for field in dataclasses.fields(state):
            value = getattr(state, field.name)
            if isinstance(value, np.ndarray):
                out[f"{name}.{field.name}"] = value.copy()
    out["l1"] = zlib.crc32(tile.l1)
    out["busy_until"] = dict(copro.busy_until)
    out["version"] = (copro.version, copro.version_cycle)
    out["unit_stats"] = engine.unit_stats
    out["unit_counts"] = engine.unit_counts.copy()  # with the math units' union (MATH_ROW)
    out["engine.cycle"] = engine.cycle
    for pipe in engine.pipes:
        out[f"pipe{pipe.thread}"] = (
            pipe.next_issue,
            pipe.blocked,
            pipe.blocked_at,
            pipe.blocked_version,
            pipe.retry_at,
            pipe.last_was_mop,
            pipe.issued,
            pipe.last_cycle,
            pipe.done_cycle,
            pipe.blocked_since,
            list(pipe.words),
            pipe.source,
            dict(pipe.stalled),
            pipe.watch_l1,
            pipe.row[UNIT_ISSUED:].tolist(),  # what the performance counters count
        )
        out[f"queue{pipe.thread}"] = (list(pipe.queue.entries), list(pipe.queue.taken))
    return out


def differences(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """The keys whose values differ."""
    keys = []
    for key in a:
        x, y = a[key], b[key]
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        if not same:
            keys.append(key)
    return keys


def _outcome(tile: Tile, horizon: int) -> str | None:
    try:
        tile.backend.advance_to(horizon)
    except SimError as error:
        return f"{type(error).__name__}: {error}"
    return None


def first_difference(
    setup: Callable[[Tile], None],
    entries: Sequence[tuple[int, PushedInstruction]],
    cycles: int,
    *,
    native: Tile | None = None,
    arch: str = "blackhole",
) -> str | None:
    """Run ``entries`` ((pipe, entry) pairs) on a native and a Python ``arch`` tile prepared by
    ``setup`` for ``cycles`` cycles, one at a time; the first divergence, or None. ``native``
    supplies the native tile (a test may give one with a deliberately broken library)."""
    tiles = [native or Tile(arch, engine="native"), Tile(arch, engine="python")]
    if tiles[0].backend.native is None:
        raise RuntimeError("the native engine is not available")
    for tile in tiles:
        setup(tile)
        for pipe, entry in entries:
            tile.queues[pipe].entries.append(entry)
    before = [snapshot(t) for t in tiles]
    if differences(*before):
        return f"set-up differs: {differences(*before)}"
    for horizon in range(1, cycles + 1):
        outcomes = [_outcome(t, horizon) for t in tiles]
        if outcomes[0] != outcomes[1]:
            return f"cycle {horizon}: native {outcomes[0]!r}, python {outcomes[1]!r}"
        diff = differences(snapshot(tiles[0]), snapshot(tiles[1]))
        if diff:
            return f"cycle {horizon}: {', '.join(diff)} differ"
        if outcomes[0] is not None:
            return None  # both raised the same error: the run is over
        idle = all(t.backend.idle and not t.backend.blocked_pipes() for t in tiles)
        if idle and all(p.done_cycle <= horizon for p in tiles[0].backend.pipes):
            return None
    return None
