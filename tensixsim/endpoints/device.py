"""What the ARC and Ethernet endpoints share: an address space of memories and 32-bit registers.

A :class:`MappedEndpoint` answers NoC and host accesses at its NoC #0 coordinates. An access lies
wholly in one memory (any size, any alignment), or is whole aligned 32-bit words each of which is a
register. Every access is checked before anything changes (:meth:`MappedEndpoint.check`): an address
the tile documents but this model does not hold raises :class:`~tensixsim.errors.Unimplemented`
naming it, any other address a :class:`~tensixsim.errors.MemoryFault`. Nothing here moves time: the
NIU that reaches an endpoint charges the NoC's latencies (tensixsim.noc.niu), and ``cycle`` is the
cycle the access lands at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tensixsim.arch.common import NocFacts
from tensixsim.errors import MemoryFault, Unimplemented

XY = tuple[int, int]


@dataclass(frozen=True)
class WordRegister:
    """One 32-bit register. ``write`` None: read-only (a write is a MemoryFault, as for MMIO)."""

    name: str
    read: Callable[[int], int]  # cycle -> value
    write: Callable[[int, int], None] | None = None  # (value, cycle)
    # Checked before any register of an access changes (raise to refuse the value).
    check: Callable[[int], None] | None = None


@dataclass(eq=False)
class MappedEndpoint:
    """Memories and registers at NoC #0 ``xy``; ``kind`` names the tile in errors ("arc", ...)."""

    kind: str
    xy: XY
    memories: list[tuple[str, int, np.ndarray]] = field(default_factory=list)  # (name, base, bytes)
    registers: dict[int, WordRegister] = field(default_factory=dict)
    # Documented ranges this model does not hold: (what, base, size).
    unmodelled: list[tuple[str, int, int]] = field(default_factory=list)
    l1: np.ndarray | None = None  # the memory NoC atomics and inline writes act on as L1, if any

    @property
    def where(self) -> str:
        return f"the {self.kind} tile at ({self.xy[0]}, {self.xy[1]})"

    # ------------------------------------------------------------------ checks
    def _memory(self, address: int, size: int) -> tuple[np.ndarray, int] | None:
        for _, base, data in self.memories:
            if base <= address < base + data.size:
                return (data, address - base) if address + size <= base + data.size else None
        return None

    def check(self, address: int, size: int, write: bool, data: bytes | None = None) -> None:
        """Raise unless the whole access can be served (``data``: what a write would store)."""
        if size <= 0:
            raise MemoryFault(f"empty access to {self.where}", address=address, size=size, write=write)
        if self._memory(address, size) is not None:
            return
        for name, base, data_ in self.memories:  # starts in a memory, runs past it
            if base <= address < base + data_.size:
                raise MemoryFault(
                    f"access runs past the {name} of {self.where} ({data_.size} bytes from 0x{base:x})",
                    address=address,
                    size=size,
                    write=write,
                )
        if address & 3 or size & 3:
            raise MemoryFault(
                f"outside every memory of {self.where}, and registers are 32-bit words",
                address=address,
                size=size,
                write=write,
            )
        for i, word in enumerate(range(address, address + size, 4)):
            register = self.registers.get(word)
            if register is None:
                self._unmapped(word, 4, write, "no register here")
            elif write and register.write is None:
                raise MemoryFault(
                    f"{register.name} of {self.where} is read-only", address=word, size=4, write=True
                )
            elif write and register.check is not None and data is not None:
                register.check(int.from_bytes(data[4 * i : 4 * i + 4], "little"))

    def _unmapped(self, address: int, size: int, write: bool, why: str) -> None:
        for what, base, length in self.unmodelled:
            if base <= address < base + length:
                raise Unimplemented(f"{what} 0x{address:08x} of {self.where} is not modelled", value=address)
        raise MemoryFault(f"{why} in {self.where}", address=address, size=size, write=write)

    # ------------------------------------------------------------------ accesses
    def read(self, address: int, size: int, cycle: int) -> bytes:
        self.check(address, size, write=False)
        memory = self._memory(address, size)
        if memory is not None:
            data, offset = memory
            return data[offset : offset + size].tobytes()
        words = [self.registers[a].read(cycle) & 0xFFFFFFFF for a in range(address, address + size, 4)]
        return np.array(words, np.uint32).tobytes()

    def write(self, address: int, data: bytes, cycle: int) -> None:
        data = bytes(data)
        self.check(address, len(data), write=True, data=data)
        memory = self._memory(address, len(data))
        if memory is not None:
            array, offset = memory
            array[offset : offset + len(data)] = np.frombuffer(data, np.uint8)
            return
        for i, word in enumerate(range(address, address + len(data), 4)):
            self.registers[word].write(int.from_bytes(data[4 * i : 4 * i + 4], "little"), cycle)

    def in_l1(self, address: int, size: int) -> bool:
        """Whether the access lies in the endpoint's L1 (atomics and inline writes act there)."""
        return self.l1 is not None and address >= 0 and address + size <= self.l1.size


def storage(name: str, values: np.ndarray, index: int) -> WordRegister:
    """A register that holds what is written (word ``index`` of ``values``)."""

    def write(value: int, _cycle: int) -> None:
        values[index] = value

    return WordRegister(name, lambda _cycle: int(values[index]), write)


def node_id(facts: NocFacts, xy: XY, noc: int) -> int:
    """NOC_NODE_ID of the NIU of ``noc`` at NoC #0 ``xy`` (MemoryMap.md: X, Y, the grid's size, and
    whether the NoC routes X first; NoC #1 counts from the opposite corner), as every NIU reports it."""
    x, y = xy if noc == 0 else (facts.width - 1 - xy[0], facts.height - 1 - xy[1])
    return x | y << 6 | facts.width << 12 | facts.height << 19 | int(facts.x_first_routing[noc]) << 28
