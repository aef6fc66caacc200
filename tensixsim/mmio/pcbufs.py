"""The PCBufs: a 32-bit FIFO from BRISC to each TRISC, with override bits.

Functional model: tt-isa-documentation BabyRISCV/PCBufs.md and TTSync.md (Wormhole's pages; the
Blackhole memory map has the same windows). PCBuf i carries values from BRISC to TRISC i:

- BRISC reaches PCBuf i anywhere in its 64 KiB window. A store pushes, waiting while the FIFO is
  full. A load waits until the FIFO is empty, TRISC i is blocked reading it and Tensix thread i is
  idle (so BRISC can wait for a TRISC to finish what it was handed), then reads 0; with OverrideEn
  and OverrideBusy both set it reads 0 at once.
- TRISC i reaches its PCBuf at ``PC_BUF_BASE`` (one word; the semaphores and TTSync follow it). A
  load pops, waiting while the FIFO is empty, unless OverrideEn is set: then an empty FIFO reads
  OverrideValue. A store is discarded.
- ``TRISC_PC_BUF_OVERRIDE`` holds the three PCBufs' OverrideEn, OverrideBusy and 8-bit
  OverrideValue (10 bits each). OverrideEn with OverrideBusy also ends the TTSync done checks' wait
  (``Coprocessor.pcbuf_overridden``).

Where the pages leave things open: a push beyond the 16 values a FIFO holds sits in buffers of
BRISC's memory subsystem whose size no page gives, and BRISC stalls once they fill; modelled as the
functional model reads, the store waits until TRISC i pops. Narrow (8/16-bit) accesses are not
described: they fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensixsim.arch.common import PcBufFacts
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, Register, Stall

Signal = Callable[[tuple, int], None]


@dataclass(frozen=True)
class PcBufServices:
    """What the PCBufs need from the tile."""

    signal: Signal  # wake the cores waiting on a key, from a cycle
    reader_waiting_since: Callable[[int], int | None]  # when TRISC i blocked reading its empty PCBuf
    thread_idle: Callable[[int, int], bool]  # Tensix thread i has nothing in flight at a cycle
    thread_idle_at: Callable[[int], int | None]  # when it will, if nothing more is pushed


@dataclass
class PcBufs:
    """The FIFOs' values, oldest first (``values[i, :count[i]]``), and the override register."""

    facts: PcBufFacts
    values: np.ndarray  # (3, capacity) uint32
    count: np.ndarray  # (3,) uint8
    override: np.ndarray  # (1,) uint32: TRISC_PC_BUF_OVERRIDE

    @classmethod
    def new(cls, facts: PcBufFacts) -> PcBufs:
        n = len(facts.readers)
        return cls(
            facts, np.zeros((n, facts.capacity), np.uint32), np.zeros(n, np.uint8), np.zeros(1, np.uint32)
        )

    # ------------------------------------------------------------------ override bits
    def _bits(self, i: int) -> int:
        return int(self.override[0]) >> (self.facts.override_bits * i)

    def override_enabled(self, i: int) -> bool:
        return bool(self._bits(i) & 1)

    def overridden(self, i: int) -> bool:
        """OverrideEn and OverrideBusy both set: BRISC's read and the done checks answer at once."""
        return self._bits(i) & 3 == 3

    def override_value(self, i: int) -> int:
        return (self._bits(i) >> 2) & 0xFF

    def write_override(self, value: int, cycle: int, signal: Signal) -> None:
        """A store to TRISC_PC_BUF_OVERRIDE: every wait the bits can end retries."""
        self.override[0] = value & 0xFFFFFFFF
        for i in range(len(self.facts.readers)):
            for key in (("pcbuf", i), ("pcbuf_drained", i), ("thread_idle", i), ("mop_expander_idle", i)):
                signal(key, cycle)

    # ------------------------------------------------------------------ FIFOs
    def push(self, i: int, value: int) -> bool:
        """Append ``value`` to PCBuf ``i``; False (nothing changes) when it is full."""
        n = int(self.count[i])
        if n >= self.facts.capacity:
            return False
        self.values[i, n] = value & 0xFFFFFFFF
        self.count[i] = n + 1
        return True

    def pop(self, i: int) -> int | None:
        """The oldest value of PCBuf ``i`` (None when empty)."""
        n = int(self.count[i])
        if n == 0:
            return None
        queue = self.values[i]
        value = int(queue[0])
        queue[: n - 1] = queue[1:n].copy()
        queue[n - 1] = 0
        self.count[i] = n - 1
        return value

    # ------------------------------------------------------------------ as the cores see them
    def writer_regions(self, services: PcBufServices) -> list[MmioRegion]:
        """BRISC's three windows (any word of window i reaches PCBuf i)."""
        regions = []
        for i, reader in enumerate(self.facts.readers):
            register = Register(
                f"PC_BUF_{reader.upper()}",
                read=lambda access, i=i: self._writer_read(i, access, services),
                write=lambda access, value, i=i: self._writer_write(i, value, access, services),
            )
            base = self.facts.base + i * self.facts.window
            regions += [
                MmioRegion(f"pcbuf{i}", page, PAGE, fallback=register)
                for page in range(base, base + self.facts.window, PAGE)
            ]
        return regions

    def reader_register(self, i: int, services: PcBufServices) -> Register:
        """TRISC ``i``'s word at ``PC_BUF_BASE``."""
        return Register(
            "PC_BUF",
            read=lambda access: self._reader_read(i, access, services),
            write=lambda access, value: None,  # discarded (PCBufs.md)
        )

    def _writer_write(self, i: int, value: int, access: Access, services: PcBufServices) -> None:
        if not self.push(i, value):
            raise Stall(f"PCBuf {i} full", wait_key=("pcbuf_drained", i))
        services.signal(("pcbuf", i), access.cycle)

    def _writer_read(self, i: int, access: Access, services: PcBufServices) -> int:
        if self.overridden(i):
            return 0
        reason = f"PCBuf {i}: waiting for {self.facts.readers[i]} to drain it"
        since = services.reader_waiting_since(i)
        if int(self.count[i]) or since is None:
            # Woken when the reader pops or blocks on the empty FIFO (or the override changes).
            raise Stall(reason, wait_key=("pcbuf_drained", i))
        if since > access.cycle:  # (the reader ran ahead: it blocks later than this read)
            raise Stall(reason, until=since)
        if services.thread_idle(i, access.cycle):
            return 0
        until = services.thread_idle_at(i)
        if until is not None and until > access.cycle:
            raise Stall(reason + f" and Tensix thread {i}", until=until)
        raise Stall(reason + f" and Tensix thread {i}", wait_key=("thread_idle", i))

    def _reader_read(self, i: int, access: Access, services: PcBufServices) -> int:
        value = self.pop(i)
        if value is not None:
            services.signal(("pcbuf_drained", i), access.cycle)
            return value
        if self.override_enabled(i):
            return self.override_value(i)
        # Blocked on the empty FIFO: a BRISC read waiting for that may now go on.
        services.signal(("pcbuf_drained", i), access.cycle)
        raise Stall(f"PCBuf {i} empty", wait_key=("pcbuf", i))
