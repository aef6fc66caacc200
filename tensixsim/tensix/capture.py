"""Per-pipe input queues: where instructions pushed by the cores enter the coprocessor.

Each entry carries its source core, PC and cycle. A queue is bounded; a push into a full queue stalls
the pushing core until the backend takes an entry, and is then retried (nothing lost, nothing
doubled). The backend is the coprocessor's pipe engine (tensix/frontend.py), or :class:`Recorder`
for capture-only runs (``Tile(backend="recorder")``).
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from tensixsim.timing import RECORDER, RecorderTiming


class PushedInstruction(NamedTuple):
    """One Tensix instruction as it entered a pipe."""

    word: int  # the instruction (unrotated)
    core: str
    pc: int
    cycle: int  # when the core pushed it
    inline: bool  # True: a word in the instruction stream; False: a store to the push address


_CYCLE = PushedInstruction._fields.index("cycle")


class InputQueue:
    """A bounded queue in front of one pipe (its consumer is the tile's backend)."""

    def __init__(self, pipe: int, depth: int) -> None:
        self.pipe = pipe
        self.depth = depth
        self.entries: deque[PushedInstruction] = deque()
        self.taken: list[tuple[int, PushedInstruction]] = []  # (cycle taken, entry), when recorded
        self.full_stalls = 0
        self.record = True

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

    def take_time(self, pipe: int) -> int | None:
        queue = self.queues[pipe]
        return max(queue.entries[0].cycle + 1, self.next_free[pipe]) if queue.entries else None

    def advance_to(self, cycle: int) -> None:
        interval = self.drain_interval
        for queue in self.queues:
            entries, taken, next_free = queue.entries, queue.taken, self.next_free[queue.pipe]
            while entries:
                when = entries[0][_CYCLE] + 1  # per instruction: plain indexing, no max() call
                if when < next_free:
                    when = next_free
                if when > cycle:
                    break
                taken.append((when, entries.popleft()))
                next_free = when + interval
            self.next_free[queue.pipe] = next_free
        self.cycle = max(self.cycle, min(cycle, 1 << 62))

    def blocked_pipes(self) -> list:
        return []
