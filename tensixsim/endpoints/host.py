"""A chip as a host drives it: PCIe access, tile access by coordinates, and the clock.

:class:`ChipHost` serves a :class:`~tensixsim.chip.Chip` the way Tenstorrent's simulator API
(``libttsim_*``, :mod:`tensixsim.simlib`) presents a chip: the host reads and writes BARs
(:class:`~tensixsim.endpoints.pcie.Pcie`) or tiles by coordinates, and the chip moves only when the
host calls :meth:`ChipHost.clock`. Coordinates are translated coordinates (what tt-umd sends): a
Tensix tile's are its NoC #0 ones, DRAM ports and the PCIe tile have their own
(:func:`tensixsim.arch.blackhole_host.translated_to_noc0`); NoC #0 coordinates of DRAM tiles work too.

Reaching a Tensix tile: L1 and the cores' local RAM as memory, MMIO registers one 32-bit word at a
time (SOFT_RESET_0 releases cores as the host does); a write makes the tile's cores see new code
and wakes the ones polling what changed, when the clock next moves. Reaching DRAM: the chip's
:class:`~tensixsim.dram.Dram`. Reaching the ARC or an Ethernet tile: the chip's endpoint
(:mod:`tensixsim.endpoints.arc`, :mod:`tensixsim.endpoints.ethernet`); ARC messages are answered on
the write that rings the ARC. Accesses happen at the host's present cycle (the clocks it asked for).
"""

from __future__ import annotations

from tensixsim.arch import blackhole_host as facts
from tensixsim.chip import Chip
from tensixsim.endpoints.pcie import Pcie
from tensixsim.errors import MemoryFault, Unimplemented
from tensixsim.noc import NoEndpoint

XY = tuple[int, int]
MMIO_BASE = 0xFF000000  # the tile's registers (tile control, NIUs, Tensix registers) lie above


class ChipHost:
    """One chip behind a PCIe endpoint, moved by the host's clock."""

    def __init__(self, chip: Chip | None = None) -> None:
        self.chip = chip if chip is not None else Chip("blackhole")
        if self.chip.arch.name != "blackhole":
            raise ValueError("the host interface describes Blackhole only")
        self.pcie = Pcie(self)
        self.cycle = 0  # clocks the host gave
        self.touched: set[XY] = set()  # tiles written since the clock last moved
        self._translated = facts.translated_to_noc0()

    # ------------------------------------------------------------------ coordinates
    def locate(self, xy: XY) -> tuple[str, XY]:
        """(kind, NoC #0 coordinates) of the endpoint at translated (or NoC #0 DRAM) coordinates."""
        noc0 = self._translated.get(xy, xy)
        kind = self.chip.kind_at(noc0)
        if kind is None:
            raise NoEndpoint(f"no endpoint at ({xy[0]}, {xy[1]})", value=xy[0] << 8 | xy[1])
        return kind, noc0

    # ------------------------------------------------------------------ NocTarget
    def read(self, xy: XY, address: int, size: int) -> bytes:
        kind, noc0 = self.locate(xy)
        if kind == "dram":
            return self.chip.dram.read(self.chip.dram.tiles[noc0], address, size)
        if self.chip.has_model(noc0):
            return self.chip.endpoint(*noc0).read(address, size, self.cycle)
        tile = self._tensix(kind, noc0, xy, address, size, write=False)
        if address < MMIO_BASE:
            return tile.read(address, size)
        words = [tile.host_register(a, self.cycle) for a in self._words(address, size, write=False)]
        return b"".join(w.to_bytes(4, "little") for w in words)

    def write(self, xy: XY, address: int, data: bytes) -> None:
        kind, noc0 = self.locate(xy)
        if kind == "dram":
            self.chip.dram.write(self.chip.dram.tiles[noc0], address, bytes(data))
            return
        if self.chip.has_model(noc0):
            self.chip.endpoint(*noc0).write(address, bytes(data), self.cycle)
            return
        tile = self._tensix(kind, noc0, xy, address, len(data), write=True)
        self.touched.add(noc0)
        if address < MMIO_BASE:
            tile.write(address, bytes(data))
            return
        addresses = self._words(address, len(data), write=True)
        for i, a in enumerate(addresses):
            tile.host_register(a, self.cycle, int.from_bytes(data[4 * i : 4 * i + 4], "little"))

    def multicast(self, start: XY, end: XY, address: int, data: bytes) -> None:
        (_, a), (_, b) = self.locate(start), self.locate(end)
        targets = [
            xy
            for xy in self.chip.tensix_tiles
            if min(a[0], b[0]) <= xy[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= xy[1] <= max(a[1], b[1])
        ]
        for xy in targets:  # each checked by its write; the first bad one stops before changing it
            self.write(xy, address, data)

    def _tensix(self, kind: str, noc0: XY, xy: XY, address: int, size: int, write: bool):
        if kind != "tensix":
            raise Unimplemented(f"host access to the {kind} tile at ({xy[0]}, {xy[1]})", value=address)
        return self.chip.tile(*noc0)

    @staticmethod
    def _words(address: int, size: int, write: bool) -> range:
        if address & 3 or size & 3 or size == 0:
            raise MemoryFault("MMIO registers are 32-bit words", address=address, size=size, write=write)
        return range(address, address + size, 4)

    # ------------------------------------------------------------------ the simulator API's calls
    def config_read(self, bus_device_function: int, offset: int) -> int:
        if bus_device_function != 0:
            return 0xFFFFFFFF  # no such device: what enumeration reads
        return self.pcie.config_read(offset)

    def config_write(self, bus_device_function: int, offset: int, value: int) -> None:
        if bus_device_function != 0:
            raise NoEndpoint("PCI configuration write to a missing device", value=bus_device_function)
        self.pcie.config_write(offset, value)

    def clock(self, clocks: int) -> None:
        """Let the chip run ``clocks`` cycles."""
        self.cycle += clocks
        touched, self.touched = tuple(sorted(self.touched)), set()
        self.chip.advance(self.cycle, touched)
