"""Per-pipe input queues: where instructions pushed by the cores enter the coprocessor.

Each entry carries its source core, PC and cycle. A queue is bounded; a push into a full queue stalls
the pushing core until the consumer frees a slot, and is then retried (nothing lost, nothing doubled).
The consumer here is :class:`Recorder`, which takes one instruction every ``drain_interval`` cycles
and keeps them; the frontend replaces it with the MOP/replay expanders.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from tensixsim.memory import Stall
from tensixsim.timing import RECORDER, RecorderTiming


class PushedInstruction(NamedTuple):
    """One Tensix instruction as it entered a pipe."""

    word: int  # the instruction (unrotated)
    core: str
    pc: int
    cycle: int  # when the core pushed it
    inline: bool  # True: a word in the instruction stream; False: a store to the push address


class Recorder:
    """A consumer that takes one instruction per ``drain_interval`` cycles and records it."""

    def __init__(self, timing: RecorderTiming = RECORDER) -> None:
        self.drain_interval = timing.drain_interval
        self.consumed: list[tuple[int, PushedInstruction]] = []  # (cycle taken, instruction)
        self.next_free = 0

    def take_time(self, head: PushedInstruction) -> int:
        """The cycle at which ``head``, now first in the queue, will be taken."""
        return max(head.cycle + 1, self.next_free)

    def drain(self, entries: deque[PushedInstruction], cycle: int) -> None:
        """Take, in order, every entry it would have taken by ``cycle``."""
        next_free, interval, consumed = self.next_free, self.drain_interval, self.consumed
        while entries:
            when = entries[0].cycle + 1
            if when < next_free:
                when = next_free
            if when > cycle:
                break
            consumed.append((when, entries.popleft()))
            next_free = when + interval
        self.next_free = next_free


class InputQueue:
    """A bounded queue in front of one pipe."""

    def __init__(self, pipe: int, depth: int, consumer: Recorder) -> None:
        self.pipe = pipe
        self.depth = depth
        self.consumer = consumer
        self.entries: deque[PushedInstruction] = deque()
        self.full_stalls = 0

    def advance_to(self, cycle: int) -> None:
        """Let the consumer take everything it would have taken by ``cycle``."""
        self.consumer.drain(self.entries, cycle)

    def room(self, cycle: int) -> int:
        """Free slots at ``cycle`` (more may free up later)."""
        self.advance_to(cycle)
        return self.depth - len(self.entries)

    def push(self, entry: PushedInstruction) -> None:
        """Append ``entry`` or raise :class:`Stall` with the cycle at which a slot frees up."""
        self.advance_to(entry.cycle)
        if len(self.entries) >= self.depth:
            self.full_stalls += 1
            raise Stall(f"pipe {self.pipe} input queue full", until=self.consumer.take_time(self.entries[0]))
        self.entries.append(entry)

    def extend(self, batch: list[PushedInstruction]) -> None:
        """Append entries already known to fit (the pushing core checked the room first).

        Takes happen at the same cycles as with one push at a time: each depends only on its
        entry's cycle and the previous take.
        """
        self.entries.extend(batch)
        self.advance_to(batch[-1].cycle)

    def history(self) -> list[PushedInstruction]:
        """Every instruction that entered this queue, in order."""
        return [entry for _, entry in self.consumer.consumed] + list(self.entries)
