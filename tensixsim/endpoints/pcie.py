"""The PCIe tile as the host sees it: configuration space, BAR0/BAR4 TLB windows, BAR2's iATU.

A TLB window maps a slice of a BAR onto one NoC endpoint: its configuration names the target's
(translated) coordinates and which window-sized slice of the target's address space the window
shows. Reads and writes through a window become reads and writes of that endpoint
(:class:`NocTarget`); a multicast window writes to every Tensix tile of its rectangle.

Modelled (registers in :mod:`tensixsim.arch.blackhole_host`): configuration space reads (identity,
BARs; writes to the BAR registers keep their size-aligned bits), the 202 2 MiB and 8 4 GiB windows
with their configuration registers (read back as written), the iATU registers as storage, and
the PCIe tile's NIU registers in BAR0 (node id; configuration as storage, translation enabled). Anything
else (BAR2 DMA channels, configuration writes outside the BARs, a window access running past its
window, a read through a multicast window) is a named :class:`~tensixsim.errors.SimError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from tensixsim.arch import blackhole_host as facts
from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.noc.registers import CONFIG_BASE, CONFIG_WORDS, NOC_NODE_ID, TRANSLATION_ENABLE

NOC_ID_LOGICAL = 0x148  # NIU configuration register (MemoryMap.md)

XY = tuple[int, int]


class NocTarget(Protocol):
    """What a window reaches: the endpoints of the chip, by translated coordinates."""

    def read(self, xy: XY, address: int, size: int) -> bytes:
        """``size`` bytes at ``address`` of the endpoint at ``xy``."""

    def write(self, xy: XY, address: int, data: bytes) -> None:
        """Write ``data`` at ``address`` of the endpoint at ``xy``."""

    def multicast(self, start: XY, end: XY, address: int, data: bytes) -> None:
        """Write ``data`` at ``address`` of every Tensix tile in the rectangle ``start``..``end``."""


@dataclass(frozen=True)
class Window:
    """A TLB configuration decoded: where the window's first byte lands."""

    end: XY
    start: XY
    address: int  # target address of the window's first byte
    multicast: bool
    noc: int


def decode_tlb(config: int, fields: facts.TlbFields, size: int) -> Window:
    """The window a TLB configuration (its 96 bits as one integer) describes."""

    def field_at(bit: int, width: int) -> int:
        return (config >> bit) & ((1 << width) - 1)

    c = facts.COORDINATE_BITS
    return Window(
        end=(field_at(fields.x_end, c), field_at(fields.y_end, c)),
        start=(field_at(fields.x_start, c), field_at(fields.y_start, c)),
        address=field_at(fields.local_offset, fields.x_end - fields.local_offset) * size,
        multicast=bool(field_at(fields.mcast, 1)),
        noc=field_at(fields.noc_sel, 1),
    )


@dataclass
class Pcie:
    """Configuration space and BARs of the chip's PCIe endpoint, in front of ``target``."""

    target: NocTarget
    bars: dict[int, int] = field(default_factory=dict)  # config offset of a BAR's low word -> base
    tlb_config: np.ndarray = field(
        default_factory=lambda: np.zeros(
            (facts.TLB_2M_COUNT + facts.TLB_4G_COUNT) * facts.TLB_CONFIG_BYTES // 4, np.uint32
        )
    )
    iatu: np.ndarray = field(
        default_factory=lambda: np.zeros((facts.IATU_END - facts.IATU_BASE) // 4, np.uint32)
    )
    command: int = 0
    niu_config: np.ndarray = field(default_factory=lambda: np.zeros((2, CONFIG_WORDS), np.uint32))
    grid: tuple[int, int] = (17, 12)  # NoC grid width and height (NOC_NODE_ID)

    def __post_init__(self) -> None:
        for offset, base, _ in (facts.BAR0, facts.BAR2, facts.BAR4):
            self.bars.setdefault(offset, base)
        for noc in range(2):
            x, y = self._niu_coordinates(noc)
            # Coordinate translation on (what firmware sets up on a card); NOC_ID_LOGICAL as at power-on.
            self.niu_config[noc, 0] = TRANSLATION_ENABLE
            self.niu_config[noc, (NOC_ID_LOGICAL - CONFIG_BASE) // 4] = x | y << 6

    # ------------------------------------------------------------------ configuration space
    def config_read(self, offset: int) -> int:
        if offset & 3:
            raise UndefinedBehavior("misaligned PCI configuration read", value=offset)
        if offset == 0x00:
            return facts.PCI_VENDOR_ID | facts.PCI_DEVICE_ID << 16
        if offset == 0x04:
            return self.command
        if offset == 0x08:
            return facts.PCI_CLASS_REVISION
        for low, _, _ in (facts.BAR0, facts.BAR2, facts.BAR4):
            if offset == low:
                return (self.bars[low] & 0xFFFFFFFF) | facts.BAR_MEMORY_64
            if offset == low + 4:
                return self.bars[low] >> 32
        if 0x0C <= offset < 0x40:
            return 0  # header fields with nothing behind them (no expansion ROM, capabilities, INTx)
        raise Unimplemented("PCI configuration register not modelled", value=offset)

    def config_write(self, offset: int, value: int) -> None:
        if offset & 3:
            raise UndefinedBehavior("misaligned PCI configuration write", value=offset)
        if offset == 0x04:
            self.command = value & 0xFFFF
            return
        for low, _, size in (facts.BAR0, facts.BAR2, facts.BAR4):
            if offset in (low, low + 4):
                shift = 0 if offset == low else 32
                base = self.bars[low] & ~(0xFFFFFFFF << shift)
                self.bars[low] = (base | (value & 0xFFFFFFFF) << shift) & ~(size - 1) & (1 << 64) - 1
                return
        raise Unimplemented("PCI configuration write not modelled", value=offset)

    # ------------------------------------------------------------------ memory space
    def _bar(self, address: int, size: int, write: bool) -> tuple[int, int]:
        """(config offset of the BAR holding the access, offset inside it)."""
        for low, _, bar_size in (facts.BAR0, facts.BAR2, facts.BAR4):
            base = self.bars[low]
            if base <= address < base + bar_size:
                if address + size > base + bar_size:
                    raise MemoryFault("PCI access past its BAR", address=address, size=size, write=write)
                return low, address - base
        raise MemoryFault("PCI access outside every BAR", address=address, size=size, write=write)

    # ------------------------------------------------------------------ the PCIe tile's NIU registers
    def _niu_coordinates(self, noc: int) -> tuple[int, int]:
        x, y = facts.PCIE_NOC0
        return (x, y) if noc == 0 else (self.grid[0] - 1 - x, self.grid[1] - 1 - y)

    def _niu(self, offset: int) -> tuple[int, int] | None:
        """(NoC, register offset) when ``offset`` of BAR0 lies in an NIU window, else None."""
        for noc, base in enumerate(facts.PCIE_NIU_WINDOWS):
            if base <= offset < base + facts.PCIE_NIU_WINDOW_SIZE:
                return noc, offset - base
        return None

    def _niu_access(self, noc: int, register: int, address: int, value: int | None) -> int:
        if CONFIG_BASE <= register < CONFIG_BASE + 4 * CONFIG_WORDS:
            index = (register - CONFIG_BASE) // 4
            if value is not None:
                self.niu_config[noc, index] = value
            return int(self.niu_config[noc, index])
        if register == NOC_NODE_ID and value is None:
            x, y = self._niu_coordinates(noc)
            return x | y << 6 | self.grid[0] << 12 | self.grid[1] << 19 | int(noc == 0) << 28
        raise Unimplemented(
            f"PCIe tile NIU register 0x{register:03x} (NoC #{noc}) not modelled", value=address
        )

    def read(self, address: int, size: int) -> bytes:
        bar, offset = self._bar(address, size, write=False)
        niu = self._niu(offset) if bar == facts.BAR0[0] else None
        if niu is not None:
            self._aligned(address, size, False, "NIU registers")
            words = [self._niu_access(niu[0], niu[1] + 4 * i, address, None) for i in range(size // 4)]
            return np.array(words, np.uint32).tobytes()
        if bar == facts.BAR2[0]:
            return self._words(self._iatu_slice(address, offset, size, write=False)).tobytes()
        if bar == facts.BAR0[0] and offset >= facts.TLB_CONFIG_BASE:
            index = self._config_slice(address, offset, size, write=False)
            return self.tlb_config[index].tobytes()
        window, inside = self._window(bar, address, offset, size, write=False)
        if window.multicast:
            raise UndefinedBehavior("read through a multicast TLB window", value=address)
        return self.target.read(window.end, window.address + inside, size)

    def write(self, address: int, data: bytes) -> None:
        size = len(data)
        bar, offset = self._bar(address, size, write=True)
        niu = self._niu(offset) if bar == facts.BAR0[0] else None
        if niu is not None:
            self._aligned(address, size, True, "NIU registers")
            for i, word in enumerate(self._words(data)):
                self._niu_access(niu[0], niu[1] + 4 * i, address, int(word))
            return
        if bar == facts.BAR2[0]:
            self.iatu[self._iatu_slice(address, offset, size, write=True)] = self._words(data)
            return
        if bar == facts.BAR0[0] and offset >= facts.TLB_CONFIG_BASE:
            self.tlb_config[self._config_slice(address, offset, size, write=True)] = self._words(data)
            return
        window, inside = self._window(bar, address, offset, size, write=True)
        if window.multicast:
            self.target.multicast(window.start, window.end, window.address + inside, data)
        else:
            self.target.write(window.end, window.address + inside, data)

    @staticmethod
    def _words(data: bytes | np.ndarray) -> np.ndarray:
        return np.frombuffer(bytes(data), np.uint32) if not isinstance(data, np.ndarray) else data

    def _aligned(self, address: int, size: int, write: bool, what: str) -> None:
        if address & 3 or size & 3 or size == 0:
            raise MemoryFault(f"{what} are 32-bit registers", address=address, size=size, write=write)

    def _config_slice(self, address: int, offset: int, size: int, write: bool) -> slice:
        self._aligned(address, size, write, "TLB configurations")
        first = (offset - facts.TLB_CONFIG_BASE) // 4
        if first + size // 4 > self.tlb_config.size:
            raise MemoryFault("no TLB configuration register here", address=address, size=size, write=write)
        return slice(first, first + size // 4)

    def _iatu_slice(self, address: int, offset: int, size: int, write: bool) -> slice:
        if not facts.IATU_BASE <= offset < facts.IATU_END:
            raise Unimplemented(
                "BAR2 register outside the iATU (the DMA channels are not modelled)", value=offset
            )
        self._aligned(address, size, write, "iATU registers")
        first = (offset - facts.IATU_BASE) // 4
        if first + size // 4 > self.iatu.size:
            raise MemoryFault("access past the iATU registers", address=address, size=size, write=write)
        return slice(first, first + size // 4)

    def _window(self, bar: int, address: int, offset: int, size: int, write: bool) -> tuple[Window, int]:
        if bar == facts.BAR0[0]:
            index, inside = divmod(offset, facts.TLB_2M_SIZE)
            if index >= facts.TLB_2M_COUNT:
                raise MemoryFault(
                    "BAR0 hole between the TLB windows and their configuration",
                    address=address,
                    size=size,
                    write=write,
                )
            window_size, fields = facts.TLB_2M_SIZE, facts.TLB_2M_FIELDS
        else:
            index, inside = divmod(offset, facts.TLB_4G_SIZE)
            index += facts.TLB_2M_COUNT
            window_size, fields = facts.TLB_4G_SIZE, facts.TLB_4G_FIELDS
        if inside + size > window_size:
            raise MemoryFault("access runs past its TLB window", address=address, size=size, write=write)
        words = facts.TLB_CONFIG_BYTES // 4
        config = 0
        for i, word in enumerate(self.tlb_config[index * words : (index + 1) * words]):
            config |= int(word) << (32 * i)
        return decode_tlb(config, fields, window_size), inside
