"""The RISC-V mailboxes: a 32-bit FIFO from each of BRISC, TRISC0-2 to each of them.

Functional model: tt-isa-documentation BabyRISCV/Mailboxes.md (Wormhole's page; Blackhole's says the
behaviour is identical). Which mailbox an access reaches depends on the page, the core and the
direction: a core writes the mailbox *from* it *to* the page's core, and reads the one *from* the
page's core *to* it. A store pushes; a load with the query bit set returns 1 if there is something to
read, 0 otherwise; any other load pops, waiting while the mailbox is empty. A mailbox holds
``capacity`` values, and all the mailboxes one core writes hold ``writer_capacity`` together.

Where the page leaves things open:

- A push beyond those capacities sits in shared buffers of undocumented size, and the core stalls
  once they fill. Modelled as the page's functional model reads: the store waits (the core stops)
  until a reader makes room.
- Narrow (8/16-bit) accesses are not described (the FIFOs hold 32-bit values): they fault.
- NCRISC has no mailbox; its accesses fault (the window is not mapped for it).

tt-metal's compute kernels use them for handshakes between TRISCs (``mailbox_write(thread, value)``
stores to page ``thread + 1``; ``mailbox_read(thread)`` loads from it; ``mailbox_not_empty`` loads at
+4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensixsim.arch.common import MailboxFacts
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, Register, Stall


@dataclass
class Mailboxes:
    """Every mailbox's values, oldest first: ``values[writer, reader, :count[writer, reader]]``."""

    facts: MailboxFacts
    values: np.ndarray  # (n, n, capacity) uint32
    count: np.ndarray  # (n, n) uint8

    @classmethod
    def new(cls, facts: MailboxFacts) -> Mailboxes:
        n = len(facts.cores)
        return cls(facts, np.zeros((n, n, facts.capacity), np.uint32), np.zeros((n, n), np.uint8))

    def push(self, writer: int, reader: int, value: int) -> bool:
        """Append ``value``; False (nothing changes) when the mailbox or the writer's share is full."""
        full = int(self.count[writer, reader]) >= self.facts.capacity
        if full or int(self.count[writer].sum()) >= self.facts.writer_capacity:
            return False
        self.values[writer, reader, self.count[writer, reader]] = value & 0xFFFFFFFF
        self.count[writer, reader] += 1
        return True

    def pop(self, writer: int, reader: int) -> int | None:
        """The oldest value (None when empty)."""
        n = int(self.count[writer, reader])
        if n == 0:
            return None
        queue = self.values[writer, reader]
        value = int(queue[0])
        queue[: n - 1] = queue[1:n].copy()
        queue[n - 1] = 0
        self.count[writer, reader] = n - 1
        return value

    def regions(self, core: str, signal: Callable[[tuple, int], None]) -> list[MmioRegion]:
        """The mailbox pages as ``core`` sees them (none for a core without mailboxes). ``signal(key,
        cycle)`` wakes cores waiting on ``("mailbox", writer, reader)`` (a value arrived) or
        ``("mailbox_room", writer)`` (room for ``writer``)."""
        facts = self.facts
        if core not in facts.cores:
            return []
        me = facts.cores.index(core)
        regions = []
        for page, other in enumerate(facts.cores):

            def read(access: Access, other: int = page, other_name: str = other) -> int:
                if access.address & facts.query_bit:
                    return int(self.count[other, me] > 0)
                value = self.pop(other, me)
                if value is None:
                    raise Stall(f"mailbox from {other_name} empty", wait_key=("mailbox", other, me))
                signal(("mailbox_room", other), access.cycle)
                return value

            def write(access: Access, value: int, other: int = page, other_name: str = other) -> None:
                if not self.push(me, other, value):
                    raise Stall(f"mailbox to {other_name} full", wait_key=("mailbox_room", me))
                signal(("mailbox", me, other), access.cycle)

            # Any address in the page reaches the mailbox (only the query bit matters).
            register = Register(f"MAILBOX_{core.upper()}_{other.upper()}", read=read, write=write)
            regions.append(
                MmioRegion(f"mailbox{page}", facts.base + page * facts.stride, PAGE, fallback=register)
            )
        return regions
