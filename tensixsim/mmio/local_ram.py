"""The cores' local RAMs as the tile's other cores see them: one window per core (Blackhole's
``local_ram_alias``, e.g. BRISC's 8 KiB at 0xFFB14000), all reached through one shared cross-core path.

Loads and stores reach the owner's RAM (the same bytes the owner maps at 0xFFB00000), any width. A
load holds the shared path for ``RiscvTiming.remote_fabric`` cycles, one load after another in the
order the cores issue them: a load issued while the path is taken reserves the next free turn and
waits for it (a ``Stall`` until then, retried at its turn), so waiting cores are served first come,
first served. Its latency and the reader's own reads in flight are the timing walk's
(``remote_load_latency``, ``remote_read_slots``). Every access is a synchronisation point, so loads
take their turns in (cycle, core) order whatever the scheduling. Stores have no figure: they take no
turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensixsim.arch import Arch
from tensixsim.mmio.memory import Access, MmioRegion, Stall
from tensixsim.timing import RISCV


@dataclass
class LocalRamWindow(MmioRegion):
    """One core's local RAM (``ram``, its whole pages) behind the shared path ``fabric``."""

    ram: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    fabric: CrossCorePath | None = None

    def read(self, access: Access) -> int:
        assert self.fabric is not None
        self.fabric.take(access)
        offset = access.address - self.base
        return int.from_bytes(self.ram[offset : offset + access.size].tobytes(), "little")

    def write(self, access: Access, value: int) -> None:
        offset = access.address - self.base
        self.ram[offset : offset + access.size] = np.frombuffer(
            (value & ((1 << (8 * access.size)) - 1)).to_bytes(access.size, "little"), np.uint8
        )


@dataclass
class CrossCorePath:
    """The path every core's loads from another core's local RAM share, granted in the order the
    loads arrive (at equal cycles, in core order): the next grant is at ``free``; ``reserved`` holds
    the grant of each core whose load waits for its turn."""

    free: int = 0
    occupancy: int = RISCV.remote_fabric
    reserved: dict[str, int] = field(default_factory=dict)

    def take(self, access: Access) -> None:
        """Grant ``access`` the path at its cycle, or reserve its turn and raise Stall until then."""
        name = access.core.name
        turn = self.reserved.pop(name, None)
        if turn is not None and access.cycle >= turn:
            return  # (its turn, taken when it first asked)
        grant = max(access.cycle, self.free)
        self.free = grant + self.occupancy
        if grant > access.cycle:
            self.reserved[name] = grant
            raise Stall("another core's local RAM: waits for its turn on the cross-core path", until=grant)

    def reset(self) -> None:
        self.free = 0
        self.reserved.clear()


def local_ram_windows(arch: Arch, pages: dict[str, np.ndarray], fabric: CrossCorePath) -> list[MmioRegion]:
    """The windows of every core of ``arch`` that has one, over its local RAM ``pages[name]``."""
    return [
        LocalRamWindow(
            f"{core.name}_local_ram",
            core.local_ram_alias,
            pages[core.name].nbytes,
            byte_enables=True,
            ram=pages[core.name],
            fabric=fabric,
        )
        for core in arch.cores
        if core.local_ram_alias is not None
    ]
