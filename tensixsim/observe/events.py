"""What happened in a run, and who waited on whom: the events behind traces and bottleneck().

An :class:`EventLog` exists only while someone listens (``Tile.observe``); otherwise nothing here runs.
Its sources:

- both coprocessor engines report every instruction that retires, with the cycle it issued, how long
  it held its unit, why its pipe had waited for it (the block reason the model gives, from when),
  the queue entry it came from (core and push cycle) and the semaphores and Src bank owners after it
  (:func:`state_word`). The native engine writes them as rows of ``TR_FIELDS`` int64 into a bounded
  buffer (engine.h ``trace_row``) that Python drains; the reference engine builds the same rows;
- the tile reports when a core is released, starts to wait (parked on a poll, or stalled on a queue,
  an idle pipe...), and is woken, with who woke it (the core that wrote what it polled, the pipe
  that took a queue entry...), and stream register writes (circular-buffer counters).

From them it keeps the wait edges :mod:`tensixsim.observe.bottleneck` walks (who waited, from when to when,
on what, and which agent's action at which cycle ended it) and the runs of work on each pipe and unit,
and sends a timeline to a sink (:class:`tensixsim.observe.trace.PerfettoSink`) as it goes.

Runs: an instruction identical to the one before it on the same pipe (or unit), issued within
``MERGE_GAP`` cycles of that one's end, extends it: one slice stands for the run, with its count.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tensixsim.arch import CORE_NAMES
from tensixsim.isa.spec import UNITS

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# Columns of a retired-instruction row (tensix/native/engine.h TR_*).
(
    TR_THREAD,
    TR_WORD,
    TR_CYCLE,
    TR_CYCLES,
    TR_BLOCKED_SINCE,
    TR_BLOCK,
    TR_RETRY_AT,
    TR_SRC_CYCLE,
    TR_SRC_CORE,
    TR_STATE,
) = range(10)
TR_FIELDS = 10
MERGE_GAP = 8  # cycles: identical instructions closer than this make one slice
SEMAPHORES = 8
# A state word: semaphore i in bits 4i..4i+3; Src client of (file f, bank b) in bits 32 + 2(2f + b);
# the matrix unit's bank of file f in bit 40 + f, the unpacker's in bit 42 + f.
_SRC_CLIENT_SHIFT, _MATRIX_BANK_SHIFT, _UNPACKER_BANK_SHIFT = 32, 40, 42


def state_word(copro: Coprocessor) -> int:
    """The semaphores and Src bank ownership as one integer (engine.c state_word)."""
    word = 0
    for i, value in enumerate(copro.sync.sem_value[:SEMAPHORES].tolist()):
        word |= (value & 15) << (4 * i)
    regs = copro.regs
    for k, client in enumerate(regs.src_client.ravel()[:4].tolist()):
        word |= (client & 3) << (_SRC_CLIENT_SHIFT + 2 * k)
    for f in range(2):
        word |= (int(regs.matrix_bank[f]) & 1) << (_MATRIX_BANK_SHIFT + f)
        word |= (int(regs.unpacker_bank[f]) & 1) << (_UNPACKER_BANK_SHIFT + f)
    return word


# The counters a state word holds: (track key, track name, value from a word).
def _counter_fields() -> list[tuple[str, str, int, int]]:
    fields = [(f"sem{i}", f"semaphore {i}", 4 * i, 15) for i in range(SEMAPHORES)]
    for f, file in enumerate("AB"):
        for bank in range(2):
            shift = _SRC_CLIENT_SHIFT + 2 * (2 * f + bank)
            fields.append(
                (f"src{file}{bank}", f"Src{file} bank {bank} owner (0 matrix, 1 unpackers)", shift, 3)
            )
        fields.append((f"src{file}m", f"Src{file} bank the matrix unit reads", _MATRIX_BANK_SHIFT + f, 1))
        fields.append((f"src{file}u", f"Src{file} bank the unpacker fills", _UNPACKER_BANK_SHIFT + f, 1))
    return fields


COUNTER_FIELDS = _counter_fields()


class Sink(Protocol):
    def track(self, key: str, name: str, counter: bool = False) -> None: ...
    def slice(self, key: str, start: int, end: int, name: str, count: int = 1) -> None: ...
    def counter(self, key: str, cycle: int, value: int) -> None: ...
    def close(self) -> None: ...


@dataclass(slots=True)
class Wait:
    """``agent`` waited from ``start`` to ``end`` for ``what``; ``by`` names who ended the wait, acting
    at cycle ``at``: ("core", name), ("pipe", thread), ("unit", unit) (whichever pipe last used it;
    ("unit", unit, "other"): whichever other pipe),
    ("coprocessor",) (whichever pipe last retired), ("streams",) (whichever core last wrote a stream
    register), ("self",) (it passes by itself: a latency), ("noc",), ("host",)."""

    start: int
    end: int
    what: str
    by: tuple
    at: int


@dataclass
class Runs:
    """Merged runs of work on one pipe or unit: parallel lists, in start order."""

    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    what: list[int] = field(default_factory=list)  # a unit index (pipe runs) or a thread (unit runs)

    def covering(self, cycle: int) -> int:
        """Index of the last run starting at or before ``cycle`` (-1: none)."""
        return bisect_right(self.start, cycle) - 1


class _Open:
    """A run being extended: opcode, start, end, count, and for a pipe the unit (for a unit, thread)."""

    __slots__ = ("count", "end", "op", "other", "start")

    def __init__(self, op: int, start: int, end: int, other: int) -> None:
        self.op, self.start, self.end, self.count, self.other = op, start, end, 1, other


class EventLog:
    """Events of a run (see the module doc); ``sink``: where the timeline goes (None: nowhere, only
    the wait edges and runs are kept)."""

    def __init__(
        self, copro: Coprocessor, unit_of: list[int], sink: Sink | None = None, start_cycle: int = 0
    ) -> None:
        self.sink = sink
        self.start_cycle = start_cycle  # the observed run's first cycle
        self._names = copro.isa.by_opcode
        self._arch = copro.arch.name
        self._unit_of = unit_of
        threads = copro.threads
        self.threads = threads
        self.core_waits: dict[str, list[Wait]] = {name: [] for name in CORE_NAMES}
        self.pipe_waits: list[list[Wait]] = [[] for _ in range(threads)]
        self.pipe_runs = [Runs() for _ in range(threads)]
        self.unit_runs = [Runs() for _ in UNITS]
        self.stream_writes: list[tuple[int, str]] = []  # (cycle, core), for ("streams",) waits
        self.core_end: dict[str, int] = {}
        self._core_from: dict[str, int] = {}  # start of the core's current running span
        self._core_wait: dict[str, tuple[int, str]] = {}  # open wait: start, why
        self._pipe_open: list[_Open | None] = [None] * threads
        self._pipe_free = [0] * threads  # when each pipe's last slice ends
        self._unit_open: list[_Open | None] = [None] * len(UNITS)
        self._streams: dict[int, list[int]] = {}  # stream -> [received, acked]
        self._stream_registers = getattr(copro.tile, "streams", None)
        self._declared: set[str] = set()
        self._state = 0
        self.state_changed(start_cycle, state_word(copro))  # the counters' values as the run starts

    # ------------------------------------------------------------------ sink helpers
    def _track(self, key: str, name: str, counter: bool = False) -> None:
        if self.sink is not None and key not in self._declared:
            self._declared.add(key)
            self.sink.track(key, name, counter)

    def _slice(self, key: str, name: str, start: int, end: int, label: str, count: int = 1) -> None:
        if self.sink is not None and end > start:
            self._track(key, name)
            self.sink.slice(key, start, end, label, count)

    # ------------------------------------------------------------------ cores
    def core_released(self, core: str, cycle: int, by: tuple, at: int) -> None:
        """``core`` left reset at ``cycle`` (the write that released it came from ``by`` at ``at``)."""
        previous = self.core_end.get(core, 0)
        self.core_waits[core].append(Wait(previous, cycle, "in reset", by, at))
        self._core_from[core] = cycle

    def core_waits_from(self, core: str, cycle: int, why: str) -> None:
        """``core`` stops running at ``cycle`` until woken (parked on a poll, or stalled)."""
        if core in self._core_wait or core not in self._core_from:
            return
        start = max(cycle, self._core_from[core])
        self._slice(f"core:{core}", core, self._core_from[core], start, "running")
        self._core_wait[core] = (start, why)

    def core_woken(self, core: str, cycle: int, by: tuple, at: int) -> None:
        """``core`` runs again from ``cycle``: ``by`` acted at ``at``."""
        opened = self._core_wait.pop(core, None)
        if opened is None:
            return
        start, why = opened
        end = max(cycle, start)
        self.core_waits[core].append(Wait(start, end, why, by, min(at, end)))
        self._slice(f"core:{core}", core, start, end, slice_name(why))
        self._core_from[core] = end

    def core_stopped(self, core: str, cycle: int, state: str) -> None:
        """The run ended with ``core`` in ``state`` at ``cycle``: close its open span."""
        if core not in self._core_from:
            return
        if core in self._core_wait:
            start, why = self._core_wait[core]
            self._slice(f"core:{core}", core, start, max(cycle, start), slice_name(why))
            self.core_end[core] = start  # its work ended where the wait began
        else:
            self._slice(f"core:{core}", core, self._core_from[core], cycle, "running")
            self.core_end[core] = cycle
        self._core_from[core] = cycle

    def stream_written(self, stream: int, index: int, value: int, cycle: int, core: str) -> None:
        """A stream register of a circular buffer (tiles acked or received) was written."""
        from tensixsim.mmio.streams import TILES_ACKED, TILES_RECEIVED

        registers = self._stream_registers
        received, acked = (
            (registers.tiles_received, registers.tiles_acked) if registers is not None
            else (TILES_RECEIVED, TILES_ACKED)
        )  # fmt: skip
        if index not in (acked, received):
            return
        counts = self._streams.get(stream)
        if counts is None:  # the counts as the run found them (a launch after a boot need not start at 0)
            counts = self._streams[stream] = (
                [registers.read(stream, received), registers.read(stream, acked)]
                if registers is not None
                else [0, 0]
            )
        counts[0 if index == received else 1] = value
        self.stream_writes.append((cycle, core))
        if self.sink is not None:
            key = f"stream{stream}"
            self._track(key, f"stream {stream} CB fill (received - acked)", counter=True)
            self.sink.counter(key, cycle, (counts[0] - counts[1]) & 0xFFFF)

    # ------------------------------------------------------------------ coprocessor
    def state_changed(self, cycle: int, word: int) -> None:
        """The semaphores or Src bank owners may differ from the last word seen (from ``cycle``)."""
        changed = word ^ self._state
        if not changed:
            return
        self._state = word
        if self.sink is None:
            return
        for key, name, shift, mask in COUNTER_FIELDS:
            if changed >> shift & mask:
                self._track(key, name, counter=True)
                self.sink.counter(key, cycle, word >> shift & mask)

    def native_rows(self, rows: np.ndarray) -> None:
        """Rows the native engine wrote (TR_* columns), in retire order."""
        from tensixsim.tensix.frontend.pipes import native_block_text

        names, arch = self._names, self._arch
        for row in rows.tolist():
            block = row[TR_BLOCK]
            reason = native_block_text(block, row[TR_WORD], row[TR_RETRY_AT], names, arch) if block else None
            self.retire(
                row[TR_THREAD],
                row[TR_WORD],
                row[TR_CYCLE],
                row[TR_CYCLES],
                row[TR_BLOCKED_SINCE],
                reason,
                row[TR_SRC_CYCLE],
                row[TR_SRC_CORE],
                row[TR_STATE],
            )

    def retire(
        self,
        thread: int,
        word: int,
        cycle: int,
        cycles: int,
        blocked_since: int,
        reason: str | None,
        src_cycle: int,
        src_core: int,
        state: int,
    ) -> None:
        """One instruction retired (see the module doc); the same call from both engines."""
        op = word >> 24
        unit = self._unit_of[op]
        free = self._pipe_free[thread]
        waits = self.pipe_waits[thread]
        if blocked_since >= 0 and reason is not None:
            self._close_pipe_run(thread, blocked_since)
            _add_wait(waits, Wait(blocked_since, cycle, reason, stall_cause(reason, thread), cycle))
            self._slice(
                f"pipe:{thread}", f"pipe {thread}", blocked_since, cycle, "stall: " + slice_name(reason)
            )
        elif cycle > free:
            if src_core >= 0 and src_cycle + 1 >= free:
                name = CORE_NAMES[src_core]
                _add_wait(waits, Wait(free, cycle, f"waits for {name} to push", ("core", name), src_cycle))
            elif unit < len(UNITS):
                _add_wait(waits, Wait(free, cycle, f"{UNITS[unit]} unit busy", ("unit", UNITS[unit]), cycle))
        end = cycle + max(cycles, 1)
        self._pipe_free[thread] = max(free, end)
        self._extend(self._pipe_open, self.pipe_runs, thread, op, cycle, end, unit, self._close_pipe_run)
        if unit < len(UNITS) and cycles > 0:
            self._extend(
                self._unit_open, self.unit_runs, unit, op, cycle, cycle + cycles, thread, self._close_unit_run
            )
        self.state_changed(cycle, state)

    def _extend(self, opens, runs, index, op, start, end, other, close) -> None:
        run = opens[index]
        if run is not None and run.op == op and run.other == other and start <= run.end + MERGE_GAP:
            run.end = max(run.end, end)
            run.count += 1
            return
        if run is not None:
            close(index, start)
        opens[index] = _Open(op, start, end, other)

    def _close_pipe_run(self, thread: int, before: int) -> None:
        run = self._pipe_open[thread]
        if run is None:
            return
        self._pipe_open[thread] = None
        end = max(min(run.end, before), run.start + 1)
        runs = self.pipe_runs[thread]
        runs.start.append(run.start)
        runs.end.append(end)
        runs.what.append(run.other)
        self._slice(f"pipe:{thread}", f"pipe {thread}", run.start, end, self._names[run.op].name, run.count)

    def _close_unit_run(self, unit: int, before: int) -> None:
        run = self._unit_open[unit]
        if run is None:
            return
        self._unit_open[unit] = None
        end = max(min(run.end, before), run.start + 1)
        runs = self.unit_runs[unit]
        runs.start.append(run.start)
        runs.end.append(end)
        runs.what.append(run.other)
        self._slice(
            f"unit:{UNITS[unit]}", f"{UNITS[unit]} unit", run.start, end, self._names[run.op].name, run.count
        )

    def finish(self) -> None:
        """Close every open run (the end of a run); nothing is lost if more follows."""
        for thread in range(self.threads):
            self._close_pipe_run(thread, 1 << 62)
        for unit in range(len(UNITS)):
            self._close_unit_run(unit, 1 << 62)

    def close(self) -> None:
        self.finish()
        if self.sink is not None:
            self.sink.close()


def _add_wait(waits: list[Wait], wait: Wait) -> None:
    """Append ``wait``; a wait for the same thing as the last one, after less than MERGE_GAP cycles of
    work, extends that one instead (a pipe waiting for each of a core's pushes in turn): the edges
    stay as few as the trace's slices, and the short work between them counts as part of the wait."""
    if waits:
        last = waits[-1]
        if last.by == wait.by and last.what == wait.what and wait.start - last.end < MERGE_GAP:
            last.end, last.at = wait.end, wait.at
            return
    waits.append(wait)


# Cycle numbers and polled values in a wait's reason: left out of slice names, so that the names
# repeat (each distinct name is written once) and the UI groups the same wait together.
_VARYING = re.compile(r" (until|from) cycle \d+| \(= 0x[0-9a-f]+\)| \d+ < \d+$")


def slice_name(reason: str) -> str:
    """The name of a wait's slice: its reason without the numbers that vary from one to the next."""
    return _VARYING.sub("", reason)


def _stallwait_units() -> dict[str, str]:
    """STALLWAIT condition ("what (label)" as sync.stallwait_text gives it, every architecture's)
    -> the unit whose work ends the wait: a busy unit itself; a Src bank not yet released to the
    unpackers, the matrix unit; one not yet valid for the matrix unit, the unpacker."""
    from tensixsim.tensix.sync import STALLWAIT_CONDITIONS_BY_ARCH

    units = {}
    for conditions in STALLWAIT_CONDITIONS_BY_ARCH.values():
        for condition in conditions:
            key = f"{condition.what} ({condition.label})"
            if condition.unit is not None:
                # An unpacker or the packers' pipeline: the unit the ISA table names.
                units[key] = {"unpacker0": "unpack", "unpacker1": "unpack", "packer": "pack"}.get(
                    condition.unit, condition.unit
                )
            elif condition.src_bank is not None:
                units[key] = "matrix" if condition.src_bank.endswith("_unpacker") else "unpack"
    return {key: unit for key, unit in units.items() if unit in UNITS}


_STALLWAIT_UNITS = _stallwait_units()


def stall_cause(reason: str, thread: int) -> tuple:
    """Who ends a pipe's wait, from the reason the model gives for it (the texts of
    matrix.unit.SRC_NOT_HANDED, unpack.src_banks.bank_not_handed, unpack.fetch.still_fetching,
    regs.dst_hidden, pack.unit.DST_NOT_READABLE, sync's texts, sfpu.floats.MAD_HOLD_REASON)."""
    if "not handed to the matrix unit" in reason or "fetching from L1" in reason:
        return ("unit", "unpack")  # the unpacker fills the bank (its L1 fetch, then the hand-over)
    if "not handed to the unpackers" in reason or "Dst" in reason:
        return ("unit", "matrix")  # the matrix unit releases the bank / writes the Dst rows
    if "held by thread" in reason:
        return ("pipe", int(reason.rsplit("thread", 1)[1].split()[0]))
    if "STALLWAIT: " in reason:
        unit = _STALLWAIT_UNITS.get(reason.rsplit("STALLWAIT: ", 1)[1])
        return ("unit", unit) if unit is not None else ("coprocessor",)
    if "SEMWAIT" in reason:
        return ("unit", "sync", "other")  # the SEMPOST / SEMGET of another pipe
    if "stream" in reason:
        return ("streams",)
    return ("self",)  # a latency: the gate opens next cycle, an SFPMAD result
