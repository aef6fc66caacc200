"""Per-pipe input queues: where instructions pushed by the cores enter the coprocessor.

Each entry carries its source core, PC and cycle. A queue is bounded; a push into a full queue stalls
the pushing core until the backend takes an entry, and is then retried (nothing lost, nothing
doubled). The backend is the coprocessor's pipe engine (tensix/frontend/pipes.py), or :class:`Recorder`
for capture-only runs (``Tile(backend="recorder")``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import numpy as np

from tensixsim.arch import CORE_NAMES
from tensixsim.timing import RECORDER, RecorderTiming


class PushedInstruction(NamedTuple):
    """One Tensix instruction as it entered a pipe."""

    word: int  # the instruction (unrotated)
    core: str
    pc: int
    cycle: int  # when the core pushed it
    inline: bool  # True: a word in the instruction stream; False: a store to the push address


# A queue entry as the native engine sees it: one row of int64 (tensix/native/engine.h QE_*).
QE_WORD, QE_PC, QE_CYCLE, QE_CORE, QE_INLINE = range(5)
QE_FIELDS = 5
CORE_INDEX = {name: i for i, name in enumerate(CORE_NAMES)}
# The ring's control words; the last two: the core index and cycle of the latest push (-1: none).
QUEUE_HEAD, QUEUE_COUNT, QUEUE_CAPACITY, QUEUE_LAST_CORE, QUEUE_LAST_CYCLE = range(5)
QUEUE_CTL = 5
HISTORY_COUNT, HISTORY_CAPACITY, HISTORY_RECORD = range(3)


def row_of(entry: PushedInstruction) -> tuple[int, int, int, int, int]:
    return (entry.word, entry.pc, entry.cycle, CORE_INDEX[entry.core], int(entry.inline))


def entry_of(row: list[int]) -> PushedInstruction:
    core = CORE_NAMES[row[QE_CORE]]
    return PushedInstruction(row[QE_WORD], core, row[QE_PC], row[QE_CYCLE], bool(row[QE_INLINE]))


class EntryRing:
    """The entries of one input queue, oldest first, as rows of an int64 ring both engines read.

    Offers the deque operations the model uses (append, extend, popleft, [0], len, iteration, clear);
    ``ctl`` holds head, count and capacity (a power of two). ``on_grow`` is called after the ring
    moves to a bigger array (the native engine then points at the new one).
    """

    def __init__(self, capacity: int = 64) -> None:
        self.ctl = np.zeros(QUEUE_CTL, np.int64)
        self.rows = np.zeros((capacity, QE_FIELDS), np.int64)
        self.ctl[QUEUE_CAPACITY] = capacity
        self.ctl[QUEUE_LAST_CORE] = self.ctl[QUEUE_LAST_CYCLE] = -1
        self.on_grow: Callable[[], None] | None = None

    def __len__(self) -> int:
        return int(self.ctl[QUEUE_COUNT])

    def __bool__(self) -> bool:
        return bool(self.ctl[QUEUE_COUNT])

    def _index(self, i: int) -> int:
        return (int(self.ctl[QUEUE_HEAD]) + i) & (len(self.rows) - 1)

    def __getitem__(self, i: int) -> PushedInstruction:
        count = len(self)
        if i < 0:
            i += count
        if not 0 <= i < count:
            raise IndexError("queue index out of range")
        return entry_of(self.rows[self._index(i)].tolist())

    def __iter__(self) -> Iterator[PushedInstruction]:
        return iter([entry_of(row) for row in self.ordered_rows().tolist()])

    def ordered_rows(self) -> np.ndarray:
        """The entries' rows, oldest first (a copy)."""
        head, count = int(self.ctl[QUEUE_HEAD]), len(self)
        return self.rows[(head + np.arange(count)) & (len(self.rows) - 1)]

    def _reserve(self, more: int) -> None:
        count = len(self)
        if count + more <= len(self.rows):
            return
        capacity = len(self.rows)
        while capacity < count + more:
            capacity *= 2
        rows = np.zeros((capacity, QE_FIELDS), np.int64)
        rows[:count] = self.ordered_rows()
        self.rows = rows
        self.ctl[QUEUE_HEAD] = 0
        self.ctl[QUEUE_CAPACITY] = capacity
        if self.on_grow is not None:
            self.on_grow()

    def append(self, entry: PushedInstruction) -> None:
        self._reserve(1)
        row = row_of(entry)
        self.rows[self._index(len(self))] = row
        self.ctl[QUEUE_COUNT] += 1
        self.ctl[QUEUE_LAST_CORE], self.ctl[QUEUE_LAST_CYCLE] = row[QE_CORE], row[QE_CYCLE]

    def extend(self, entries: Iterable[PushedInstruction]) -> None:
        self.extend_rows(np.array([row_of(e) for e in entries], np.int64).reshape(-1, QE_FIELDS))

    def extend_rows(self, rows: np.ndarray) -> None:
        """Append entries given as QE rows."""
        n = len(rows)
        if not n:
            return
        self._reserve(n)
        self.rows[(int(self.ctl[QUEUE_HEAD]) + len(self) + np.arange(n)) & (len(self.rows) - 1)] = rows
        self.ctl[QUEUE_COUNT] += n
        self.ctl[QUEUE_LAST_CORE], self.ctl[QUEUE_LAST_CYCLE] = rows[-1, QE_CORE], rows[-1, QE_CYCLE]

    def popleft(self) -> PushedInstruction:
        if not len(self):
            raise IndexError("pop from an empty queue")
        entry = entry_of(self.rows[self._index(0)].tolist())
        self.ctl[QUEUE_HEAD] += 1
        self.ctl[QUEUE_COUNT] -= 1
        return entry

    def clear(self) -> None:
        self.ctl[QUEUE_HEAD] = 0
        self.ctl[QUEUE_COUNT] = 0
        self.ctl[QUEUE_LAST_CORE] = self.ctl[QUEUE_LAST_CYCLE] = -1


class History:
    """The entries a queue's consumer took, with the cycle each was taken, as int64 rows
    ``(cycle taken, QE fields...)`` the native engine appends to while ``record`` is on."""

    def __init__(self, capacity: int = 256) -> None:
        self.ctl = np.zeros(3, np.int64)
        self.rows = np.zeros((capacity, 1 + QE_FIELDS), np.int64)
        self.ctl[HISTORY_CAPACITY] = capacity
        self.ctl[HISTORY_RECORD] = 1
        self.on_grow: Callable[[], None] | None = None

    def __len__(self) -> int:
        return int(self.ctl[HISTORY_COUNT])

    def append(self, item: tuple[int, PushedInstruction]) -> None:
        count = len(self)
        if count == len(self.rows):
            self.grow()
        cycle, entry = item
        self.rows[count] = (cycle, *row_of(entry))
        self.ctl[HISTORY_COUNT] = count + 1

    def extend_rows(self, cycles: np.ndarray, rows: np.ndarray) -> None:
        """Append entries given as QE rows, taken at ``cycles``."""
        count, n = len(self), len(rows)
        while count + n > len(self.rows):
            self.grow()
        self.rows[count : count + n, 0] = cycles
        self.rows[count : count + n, 1:] = rows
        self.ctl[HISTORY_COUNT] = count + n

    def grow(self) -> None:
        rows = np.zeros((2 * len(self.rows), 1 + QE_FIELDS), np.int64)
        rows[: len(self)] = self.rows[: len(self)]
        self.rows = rows
        self.ctl[HISTORY_CAPACITY] = len(rows)
        if self.on_grow is not None:
            self.on_grow()

    def clear(self) -> None:
        """Forget every entry (recording stays on or off)."""
        self.ctl[HISTORY_COUNT] = 0

    def items(self) -> list[tuple[int, PushedInstruction]]:
        return [(row[0], entry_of(row[1:])) for row in self.rows[: len(self)].tolist()]

    def __getitem__(self, i: int) -> tuple[int, PushedInstruction]:
        return self.items()[i]

    def __iter__(self) -> Iterator[tuple[int, PushedInstruction]]:
        return iter(self.items())


class InputQueue:
    """A bounded queue in front of one pipe (its consumer is the tile's backend)."""

    def __init__(self, pipe: int, depth: int, accept: int) -> None:
        self.pipe = pipe
        self.depth = depth
        self.accept = accept  # a push enters while it holds at most this many (Arch.pipe_queue_accept)
        self.entries = EntryRing()
        self.taken = History()  # (cycle taken, entry), while recorded
        self.full_stalls = 0

    @property
    def record(self) -> bool:
        """Whether taken entries are kept (``taken``, ``history()``)."""
        return bool(self.taken.ctl[HISTORY_RECORD])

    @record.setter
    def record(self, on: bool) -> None:
        self.taken.ctl[HISTORY_RECORD] = int(on)

    def clear(self) -> None:
        """Empty, with nothing recorded (recording stays on or off)."""
        self.entries.clear()
        self.taken.clear()
        self.full_stalls = 0

    def takes(self, core: str, cycle: int) -> bool:
        """Whether a push from ``core`` at ``cycle`` enters now: the queue holds at most ``accept``
        words, or the push continues a fused group (the same core's latest push, in the same cycle)
        and the queue is not full."""
        entries = self.entries
        count = len(entries)
        if count <= self.accept:
            return True
        ctl = entries.ctl
        same = ctl[QUEUE_LAST_CORE] == CORE_INDEX[core] and ctl[QUEUE_LAST_CYCLE] == cycle
        return bool(same) and count < self.depth

    def room(self) -> int:
        """Pushes that enter whatever they are (none fused to a group already in the queue)."""
        return max(0, self.accept + 1 - len(self.entries))

    def history(self) -> list[PushedInstruction]:
        """Every instruction that entered this queue, in order."""
        return [entry for _, entry in self.taken] + list(self.entries)


class Recorder:
    """A capture-only backend: takes one instruction per ``drain_interval`` cycles from each queue
    and executes nothing. Use it to record a program's Tensix stream."""

    def __init__(self, queues: list[InputQueue], timing: RecorderTiming = RECORDER) -> None:
        self.queues = queues
        self.drain_interval = timing.drain_interval
        self.next_free = [0] * len(queues)
        self.cycle = 0

    idle = property(lambda self: all(not q.entries for q in self.queues))

    def reset(self) -> None:
        """Back to cycle 0 (the tile empties the queues)."""
        self.next_free = [0] * len(self.queues)
        self.cycle = 0

    def take_time(self, pipe: int) -> int | None:
        queue = self.queues[pipe]
        return max(queue.entries[0].cycle + 1, self.next_free[pipe]) if queue.entries else None

    def advance_to(self, cycle: int) -> None:
        interval = self.drain_interval
        for queue in self.queues:
            entries = queue.entries
            if not entries:
                continue
            head = int(entries.rows[entries._index(0), QE_CYCLE])
            if max(head + 1, self.next_free[queue.pipe]) > cycle:
                continue  # the first entry is not taken by then, so none is
            rows = entries.ordered_rows()
            # Entry i is taken at when_i = max(cycle_i + 1, when_{i-1} + interval): a running maximum
            # of (cycle_j + 1 - j * interval) over j <= i, plus i * interval.
            steps = np.arange(len(rows), dtype=np.int64) * interval
            first = np.maximum(rows[:, QE_CYCLE] + 1 - steps, self.next_free[queue.pipe])
            when = np.maximum.accumulate(first) + steps
            n = int(np.searchsorted(when, cycle, side="right"))
            if not n:
                continue
            if queue.record:
                queue.taken.extend_rows(when[:n], rows[:n])
            entries.ctl[QUEUE_HEAD] += n
            entries.ctl[QUEUE_COUNT] -= n
            self.next_free[queue.pipe] = int(when[n - 1]) + interval
        self.cycle = max(self.cycle, min(cycle, 1 << 62))

    def blocked_pipes(self) -> list:
        return []
