"""Blackhole's Ethernet tiles as the NoC reaches them: L1 and the registers that hold the cores.

Each Ethernet tile has 512 KiB of L1 from address 0 and two RISCV cores, E0 and E1 (facts and
sources: :mod:`tensixsim.arch.blackhole_endpoints`). Modelled:

- **L1** as storage: NoC reads, writes, atomics and the host land in it.
- **SOFT_RESET_0** (0xFFB121B0): bit 11 holds E0, bit 12 E1. Both start held. The cores never run
  here: a write that would release one raises :class:`~tensixsim.errors.Unimplemented` naming it
  (before anything changes); writes that keep both held are stored and read back.
- The reset-PC registers tt-metal and ethdump write before a release (0xFFB14000, 0xFFB14008,
  0xFFB1400C): storage.
- ``NOC_NODE_ID`` of both NIUs (``+0x44`` of each NIU window), read-only.

Every other register of the tile (from 0xFFB00000) raises ``Unimplemented`` naming it, except the
cores' local data RAM, which the NoC cannot reach (a :class:`~tensixsim.errors.MemoryFault`, as for
any address past L1). The Ethernet links themselves (TX / RX queues, MAC, PCS) are not modelled.
"""

from __future__ import annotations

import numpy as np

from tensixsim.arch import Arch
from tensixsim.arch import blackhole_endpoints as facts
from tensixsim.endpoints.device import MappedEndpoint, WordRegister, node_id, storage
from tensixsim.errors import Unimplemented

XY = tuple[int, int]


class Ethernet(MappedEndpoint):
    """The Ethernet tile at NoC #0 ``xy`` of a Blackhole chip."""

    def __init__(self, arch: Arch, xy: XY) -> None:
        noc = arch.noc
        self.soft_reset = np.array([facts.ETH_SOFT_RESET_POWER_ON], np.uint32)
        self.reset_pcs = np.zeros(len(facts.ETH_RESET_PC_REGISTERS), np.uint32)
        registers = {
            facts.ETH_SOFT_RESET: WordRegister(
                "SOFT_RESET_0", lambda _c: int(self.soft_reset[0]), self._reset_write, self._reset_check
            ),
        }
        for i, (name, address) in enumerate(facts.ETH_RESET_PC_REGISTERS):
            registers[address] = storage(name, self.reset_pcs, i)
        for n, base in enumerate(noc.niu_bases):
            registers[base + 0x44] = WordRegister(
                f"NOC_NODE_ID (NoC #{n})", lambda _c, n=n: node_id(noc, xy, n)
            )
        l1 = np.zeros(facts.ETH_L1_SIZE, np.uint8)
        local = facts.ETH_LOCAL_RAM
        super().__init__(
            "ethernet",
            xy,
            memories=[("L1", 0, l1)],
            registers=registers,
            # The local data RAM is not in the list: it is unreachable (MemoryFault), not unmodelled.
            unmodelled=[("register", local[0] + local[1], (1 << 32) - local[0] - local[1])],
            l1=l1,
        )

    def _reset_check(self, value: int) -> None:
        released = [name for name, bit in facts.ETH_SOFT_RESET_CORES if not value & bit]
        if released:
            raise Unimplemented(
                f"SOFT_RESET_0 = 0x{value:x} would release {' and '.join(released)} of {self.where}: "
                "Ethernet cores are not modelled",
                value=value,
            )

    def _reset_write(self, value: int, _cycle: int) -> None:
        self.soft_reset[0] = value
