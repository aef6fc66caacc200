"""The coprocessor's events as the tile's performance counters count them: running totals, read at a cycle.

Both engines keep the totals as they go, in arrays they share (frontend/tallies.py):

- per pipe, by unit: instructions issued, and cycles its head instruction waited for the unit to be
  free (occupied by an earlier instruction, or the matrix unit's hold after a data move): the pipe's
  row from ``UNIT_ISSUED`` on;
- per pipe, by opcode: cycles its head instruction was blocked (the wait gate, semaphores, a
  handler's wait): ``Pipe.stall_cycles``;
- per unit: cycles occupied, and the cycles the matrix or vector unit (or both) was
  (``Engine.unit_counts``);
- per unpacker, by the pipe whose UNPACR it serves: cycles fetching from L1
  (``UnpackState.thread_cycles``);
- the cycles some pipe's head instruction had not gone when it could have (``ANY_STALL_ROW``);
- per pipe, the cycles its head instruction was blocked on each kind of wait
  (tensixsim.tensix.frontend.waits): the pipe's row from ``WAITING`` on. The four Src kinds are
  the tile's, summed over the pipes.

A register read at cycle ``c`` sees every total as of ``c``: a unit occupied past ``c`` and a wait
that ends after ``c`` are cut back to it, and a block still in progress counts up to it. The events
are named here; which counter of which bank shows each is the architecture's
(``tensixsim.arch.perf_counters``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensixsim.isa.spec import OPCODE_SHIFT, UNITS
from tensixsim.tensix.frontend.pipes import BLOCKED, BLOCKED_SINCE, UNIT_INDEX
from tensixsim.tensix.frontend.tallies import (
    ANY_STALL_ROW,
    MATH_ROW,
    STALLED_ROW,
    UNIT_ISSUED,
    UNIT_WAITED,
    WAIT_UNTIL,
    WAITING,
    WAITING_KIND,
    WAITING_SINCE,
)
from tensixsim.tensix.frontend.waits import KINDS

if TYPE_CHECKING:
    from tensixsim.tensix.frontend.pipes import Engine

# The instruction classes of the INSTRN_THREAD bank's "available" counters, by unit (the units with
# none, the front end's MOP / REPLAY / NOP, count in no class).
CLASS_OF_UNIT = {
    "config": "cfg",
    "sync": "sync",
    "thcon": "thcon",
    "xmov": "move",
    "matrix": "fpu",
    "sfpu": "fpu",
    "unpack": "unpack",
    "pack": "pack",
}
CLASSES = ("cfg", "sync", "thcon", "move", "fpu", "unpack", "pack")
# The wait kinds counted per pipe; the others (the Src banks') are counted for the tile.
PIPE_KINDS = KINDS[:9]
TILE_KINDS = KINDS[9:]
# Units whose occupancy the FPU and TDMA_PACK banks count.
BUSY_UNITS = {"fpu": "matrix", "sfpu": "sfpu", "pack": "pack"}


def meaning(event: str) -> str:
    """What an event counts, in a few words (the support matrix's performance-counter table)."""
    thread = event[-1]
    if event.startswith("instructions"):
        return f"instructions pipe {thread} issued"
    if event.startswith("waiting."):
        kind = event.removeprefix("waiting.")
        if kind in TILE_KINDS:
            file, state = kind[3].upper(), kind.split("_")[1]
            side = "handed to the unpackers" if state == "clear" else "valid for the matrix unit"
            return f"cycles pipes waited for a Src{file} bank {side} (summed over the pipes)"
        return f"cycles pipe {kind[-1]}'s next instruction was blocked on {_WAIT_WORDS[kind[:-1]]}"
    if event == "stalls.any":
        return "cycles some pipe's next instruction waited"
    if event.startswith("stalls"):
        return f"cycles pipe {thread}'s next instruction waited (blocked, or its unit busy)"
    if event.startswith("available."):
        kind = event.removeprefix("available.")[:-1]
        units = " or ".join(_UNIT_WORDS[u] for u, c in CLASS_OF_UNIT.items() if c == kind)
        return f"cycles pipe {thread}'s next instruction was for the {units} unit (waiting or issuing)"
    if event.startswith("busy.unpack"):
        unit, thread = event.removeprefix("busy.unpack").split(".")
        return f"cycles unpacker {unit} fetched from L1 for pipe {thread}'s UNPACRs"
    if event == "busy.math":
        return "cycles the matrix unit or the vector unit was occupied"
    return f"cycles the {_UNIT_WORDS[BUSY_UNITS[event.removeprefix('busy.')]]} unit was occupied"


_WAIT_WORDS = {
    "thcon": "the scalar unit (STALLWAIT C0)",
    "unpack": "an unpacker (STALLWAIT, or its fetch)",
    "pack": "the packer (STALLWAIT)",
    "math": "the matrix unit (STALLWAIT)",
    "nonzero_sem": "an empty semaphore (SEMWAIT)",
    "nonfull_sem": "a full semaphore (SEMWAIT)",
    "move": "the mover (STALLWAIT)",
    "mmio": "a RISC-V MMIO request (STALLWAIT)",
    "sfpu": "the vector unit (STALLWAIT)",
}
_UNIT_WORDS = {
    "config": "configuration",
    "sync": "sync",
    "thcon": "scalar",
    "xmov": "mover",
    "matrix": "matrix",
    "sfpu": "vector",
    "unpack": "unpack",
    "pack": "pack",
}


def event_names(threads: int) -> tuple[str, ...]:
    """Every event :func:`totals` gives, for a coprocessor of ``threads`` pipes."""
    per_thread = ("instructions", "stalls", *(f"available.{c}" for c in CLASSES))
    return (
        *(f"{name}{t}" for t in range(threads) for name in per_thread),
        *(f"busy.{name}" for name in (*BUSY_UNITS, "math")),
        *(f"busy.unpack{u}.{t}" for u in range(2) for t in range(threads)),
        "stalls.any",
        *(f"waiting.{kind}{t}" for t in range(threads) for kind in PIPE_KINDS),
        *(f"waiting.{kind}" for kind in TILE_KINDS),
    )


def totals(engine: Engine, cycle: int) -> dict[str, int]:
    """Every event's running total as of ``cycle`` (since the tile was made or reset)."""
    copro = engine.copro
    unit_of = engine.unit_of
    out: dict[str, int] = {}
    for pipe in engine.pipes:
        t, row = pipe.thread, pipe.row
        issued = row[UNIT_ISSUED : UNIT_ISSUED + len(UNITS)].tolist()
        waited = row[UNIT_WAITED : UNIT_WAITED + len(UNITS)].tolist()
        blocked = [0] * len(UNITS)
        for op, cycles in enumerate(pipe.stall_cycles.tolist()):
            if cycles:
                blocked[unit_of[op]] += cycles
        head = unit_of[pipe.words[0] >> OPCODE_SHIFT] if pipe.words else None
        if head is not None:
            since = int(row[BLOCKED_SINCE])
            if row[BLOCKED] and 0 <= since < cycle:
                blocked[head] += cycle - since  # a block still in progress
            waited[head] -= max(0, int(row[WAIT_UNTIL]) - cycle)  # a wait not over yet
        out[f"instructions{t}"] = pipe.issued
        out[f"stalls{t}"] = sum(blocked) + sum(waited)
        for name in CLASSES:
            units = _UNITS_OF_CLASS[name]
            out[f"available.{name}{t}"] = sum(issued[u] + waited[u] + blocked[u] for u in units)
        waited_on = row[WAITING : WAITING + len(KINDS)].tolist()
        now, since = int(row[WAITING_KIND]), int(row[WAITING_SINCE])
        if now >= 0 and since < cycle:
            waited_on[now] += cycle - since  # a block still in progress
        for i, kind in enumerate(KINDS):
            key = f"waiting.{kind}{t}" if kind in PIPE_KINDS else f"waiting.{kind}"  # (the tile's: summed)
            out[key] = out.get(key, 0) + waited_on[i]
    counts, clocks = engine.unit_counts, copro.unit_clock
    for name, unit in BUSY_UNITS.items():
        u = UNIT_INDEX[unit]
        out[f"busy.{name}"] = int(counts[u, 1]) - max(0, int(clocks[u]) - cycle)
    out["busy.math"] = int(counts[MATH_ROW, 0]) - max(0, int(counts[MATH_ROW, 1]) - cycle)
    stalled_now = bool(counts[STALLED_ROW, 0])
    since = int(counts[ANY_STALL_ROW, 1])
    out["stalls.any"] = int(counts[ANY_STALL_ROW, 0]) + (max(0, cycle - since) if stalled_now else 0)
    unpackers = copro.unpackers
    for u, by_thread in enumerate(unpackers.thread_cycles.tolist()):
        ahead = max(0, int(unpackers.end[u]) - cycle)  # of the latest fetch, by unpackers.thread[u]
        for t, cycles in enumerate(by_thread):
            out[f"busy.unpack{u}.{t}"] = cycles - (ahead if t == int(unpackers.thread[u]) else 0)
    return out


_UNITS_OF_CLASS = {
    name: tuple(UNIT_INDEX[u] for u, c in CLASS_OF_UNIT.items() if c == name) for name in CLASSES
}
