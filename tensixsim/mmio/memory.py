"""L1, the cores' local RAMs and the MMIO bus.

L1 and the local RAMs are numpy buffers mapped straight into every core's Unicorn instance (no
copies, no syncing). Everything else a core can address is an :class:`MmioRegion`: a page-aligned
window whose accesses reach Python. An access to an address that no region or RAM covers is a
:class:`~tensixsim.errors.MemoryFault`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import MemoryFault

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core

PAGE = 0x1000
STORAGE_ZERO, STORAGE_PYTHON = -1, -2  # MmioRegion.storage slots (riscv/native.c)


class Stall(Exception):
    """Raised by an MMIO handler whose access cannot complete yet.

    ``until`` is the cycle at which the access should be retried. Without it, ``wait_key`` names the
    event that will let it complete (the core waits until the tile signals it); without either,
    another agent must catch up first (the scheduler runs the others and retries).
    """

    def __init__(self, reason: str, until: int | None = None, wait_key: tuple | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.until = until
        self.wait_key = wait_key


@dataclass(frozen=True)
class Access:
    """One MMIO access as seen by a handler."""

    core: Core
    address: int
    size: int
    cycle: int
    host: bool = False  # made by the host (through PCIe), not by ``core`` (whose window it goes through)


ReadFn = Callable[[Access], int]
WriteFn = Callable[[Access, int], None]


@dataclass
class Register:
    """One 32-bit register inside a region. A missing handler makes that direction a fault."""

    name: str
    read: ReadFn | None = None
    write: WriteFn | None = None
    # How a core polling it can be parked: "write" (it changes only when written through the MMIO
    # bus), "coprocessor" (coprocessor state may change it), None (not watchable: never parked).
    watch: str | None = None
    # 8- and 16-bit loads read the addressed bytes (narrow stores still fault), in a region without
    # byte enables for both directions.
    narrow_loads: bool = False


@dataclass
class MmioRegion:
    """A window of MMIO registers.

    ``sync`` marks state that other agents can change: accessing it is a synchronisation point, so
    the scheduler first brings every other core up to the accessing core's cycle.
    """

    name: str
    base: int
    size: int
    registers: dict[int, Register] = field(default_factory=dict)
    sync: bool = True
    # Set on a Tensix push port: the pipe a 32-bit store to ``base`` pushes into. The native hooks
    # take such stores themselves when they can (see riscv/native.c).
    push_pipe: int | None = None
    # What any 32-bit register not listed in ``registers`` does (None: a MemoryFault).
    fallback: Register | None = None
    # The window takes 8- and 16-bit loads and stores (they reach the addressed bytes of the 32-bit
    # register); without it, any access but a 32-bit one is a MemoryFault.
    byte_enables: bool = False
    # Registers that only hold values, for native code to read without Python: (values, and per
    # 32-bit register an index into them, STORAGE_ZERO (reads 0) or STORAGE_PYTHON (ask ``read``)).
    # Reads through it must equal ``read``'s; the owner says when it no longer holds (storage_current).
    # The slots are fixed once a core maps the region (adjacent regions' are copied into one window).
    storage: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self) -> None:
        if self.base % PAGE or self.size % PAGE or self.size <= 0:
            raise ValueError(f"MMIO region {self.name} must be whole pages")

    def contains(self, address: int) -> bool:
        return self.base <= address < self.base + self.size

    def _register(self, access: Access, write: bool) -> Register:
        offset = access.address - self.base
        register = self.registers.get(offset & ~3, self.fallback)
        if register is None:
            raise _fault(access, f"{self.name}: no register at offset 0x{offset:x}", write=write)
        narrow = self.byte_enables or (register.narrow_loads and not write)
        if access.size != 4 and not (narrow and access.size in (1, 2)):
            what = "stores" if register.narrow_loads else "accesses"
            raise _fault(access, f"{self.name}: only 32-bit {what} at offset 0x{offset:x}", write=write)
        return register

    def register_at(self, address: int) -> Register | None:
        return self.registers.get((address - self.base) & ~3, self.fallback)

    def read(self, access: Access) -> int:
        register = self._register(access, write=False)
        if register.read is None:
            raise _fault(access, f"{self.name}.{register.name} is write-only", write=False)
        if access.size == 4:
            return register.read(access) & 0xFFFFFFFF
        # A narrow load reads the whole register and returns the addressed bytes.
        shift = 8 * (access.address & 3)
        word = register.read(_word(access))
        return (word >> shift) & ((1 << (8 * access.size)) - 1)

    def write(self, access: Access, value: int) -> None:
        register = self._register(access, write=True)
        if register.write is None:
            raise _fault(access, f"{self.name}.{register.name} is read-only", write=True)
        if access.size == 4:
            register.write(access, value)
            return
        # A narrow store changes only the addressed bytes (byte enables): the others keep what the
        # register holds, or zero in a register that cannot be read back.
        word_access = _word(access)
        shift = 8 * (access.address & 3)
        mask = ((1 << (8 * access.size)) - 1) << shift
        old = register.read(word_access) if register.read is not None else 0
        register.write(word_access, (old & ~mask | (value << shift) & mask) & 0xFFFFFFFF)


def _word(access: Access) -> Access:
    """The 32-bit access to the register a narrower access addresses."""
    return Access(access.core, access.address & ~3, 4, access.cycle)


def _fault(access: Access, message: str, *, write: bool) -> MemoryFault:
    return MemoryFault(
        message,
        address=access.address,
        size=access.size,
        write=write,
        core=access.core.name,
        pc=access.core.fault_pc(),
        cycle=access.cycle,
    )


def unmodelled_region(name: str, base: int, size: int, what: str) -> MmioRegion:
    """A window the hardware has but the emulator does not model: any access raises Unimplemented
    naming ``what`` (rather than a MemoryFault, which would say the program is wrong)."""
    from tensixsim.errors import Unimplemented

    def refuse(access: Access, value: int | None = None) -> int:
        kind = "load from" if value is None else "store to"
        raise Unimplemented(
            f"{kind} 0x{access.address:08x}: {what}",
            core=access.core.name,
            pc=access.core.fault_pc(),
            cycle=access.cycle,
            value=value,
        )

    return MmioRegion(name, base, size, fallback=Register(name, read=refuse, write=refuse), byte_enables=True)
