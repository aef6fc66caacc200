"""Wormhole's NoC interface units (NIUs) as far as the tile model goes: their registers, no traffic.

From WormholeB0/NoC/MemoryMap.md (and tt-metal's wormhole noc_parameters.h for the offsets the page
leaves out), per NIU (window at ``niu_bases[noc]``):

- Four request initiators (``i * 0x400``): the request fields ``NOC_TARG_ADDR_LO`` .. ``NOC_AT_DATA``
  (``+0x00`` .. ``+0x24``) are plain storage. ``NOC_CMD_CTRL`` (``+0x28``) reads 0 (no request is
  ever pending); writing it with the low bit set would initiate a request, which is not modelled:
  it raises :class:`~tensixsim.errors.Unimplemented` naming the request, before anything changes.
- ``NOC_NODE_ID`` / ``NOC_ENDPOINT_ID`` (``+0x2C`` / ``+0x30``, repeated in every initiator):
  read-only, from the tile's NoC #0 position (NoC #1 coordinates count from the opposite corner).
- ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` (``+0x50``, write-only) and the combined initiator status
  (``+0x54``, read-only, 0: no initiator is ever busy).
- Configuration (``+0x100`` .. ``+0x138``): storage. ``NOC_ID_LOGICAL`` starts as the NIU's own
  NoC coordinates (the documented power-on value), the rest at 0.
- Counters (``+0x200`` .. ``+0x2FC``): read-only, and 0, which is what they hold while no request is
  sent or received.

Every other offset is a MemoryFault naming it, as on Blackhole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensixsim.arch.common import NocFacts
from tensixsim.errors import Unimplemented
from tensixsim.mmio.memory import Access, MmioRegion, Register

REQUEST_FIELDS = (
    "NOC_TARG_ADDR_LO",
    "NOC_TARG_ADDR_MID",
    "NOC_TARG_ADDR_HI",
    "NOC_RET_ADDR_LO",
    "NOC_RET_ADDR_MID",
    "NOC_RET_ADDR_HI",
    "NOC_PACKET_TAG",
    "NOC_CTRL",
    "NOC_AT_LEN_BE",
    "NOC_AT_DATA",
)
CTRL = REQUEST_FIELDS.index("NOC_CTRL")
NOC_CMD_CTRL = 0x28
NOC_NODE_ID = 0x2C
NOC_ENDPOINT_ID = 0x30
NOC_CLEAR_OUTSTANDING_REQ_CNT = 0x50
NOC_CMD_STATUS = 0x54
CONFIG_BASE = 0x100
COUNTER_BASE = 0x200
COUNTER_WORDS = 64
_REQUEST_TYPES = {0: "read", 1: "atomic", 2: "write", 3: "reserved"}


@dataclass
class WormholeNius:
    """The register values of both NIUs of one Wormhole tile."""

    facts: NocFacts
    position: tuple[int, int]  # NoC #0 coordinates
    tile_index: int  # NOC_ENDPOINT_ID bits 0..7
    request: np.ndarray  # (nocs, initiators, len(REQUEST_FIELDS)) uint32
    config: np.ndarray  # (nocs, config words) uint32

    @classmethod
    def new(
        cls, facts: NocFacts, position: tuple[int, int] | None = None, tile_index: int = 0
    ) -> WormholeNius:
        nocs = len(facts.niu_bases)
        words = (max(facts.config_registers.values()) - CONFIG_BASE) // 4 + 1
        niu = cls(
            facts,
            position or facts.default_position,
            tile_index,
            np.zeros((nocs, facts.initiators, len(REQUEST_FIELDS)), np.uint32),
            np.zeros((nocs, words), np.uint32),
        )
        niu.reset()
        return niu

    def reset(self) -> None:
        self.request[:] = 0
        self.config[:] = 0
        logical = (self.facts.config_registers["NOC_ID_LOGICAL"] - CONFIG_BASE) // 4
        for noc in range(len(self.facts.niu_bases)):
            x, y = self.coordinates(noc)
            self.config[noc, logical] = x | y << 6

    def coordinates(self, noc: int) -> tuple[int, int]:
        x, y = self.position
        return (x, y) if noc == 0 else (self.facts.width - 1 - x, self.facts.height - 1 - y)

    def node_id(self, noc: int) -> int:
        """MemoryMap.md NOC_NODE_ID: X, Y, the NoC's width and height, and the routing order."""
        x, y = self.coordinates(noc)
        x_first = self.facts.x_first_routing[noc]
        return x | y << 6 | self.facts.width << 12 | self.facts.height << 19 | int(x_first) << 28

    def endpoint_id(self, noc: int) -> int:
        """MemoryMap.md NOC_ENDPOINT_ID: tile index, group 0, tile type, NoC index."""
        return self.tile_index | self.facts.tensix_endpoint_type << 16 | noc << 24

    def _command(self, noc: int, initiator: int, access: Access, value: int) -> None:
        if not value & 1:
            return  # nothing initiated: the register reads 0 either way
        ctrl = int(self.request[noc, initiator, CTRL])
        kind = _REQUEST_TYPES[ctrl & 3]
        raise Unimplemented(
            f"NoC #{noc} initiator {initiator}: a {kind} request (NOC_CTRL=0x{ctrl:x}); wormhole's NoC "
            "requests are not modelled yet",
            core=access.core.name,
            pc=access.core.fault_pc(),
            cycle=access.cycle,
            value=value,
        )

    def regions(self) -> list[MmioRegion]:
        regions = []
        for noc, base in enumerate(self.facts.niu_bases):
            registers: dict[int, Register] = {}
            for i in range(self.facts.initiators):
                start = i * self.facts.initiator_stride
                for f, name in enumerate(REQUEST_FIELDS):
                    registers[start + 4 * f] = Register(
                        name,
                        read=lambda _, n=noc, i=i, f=f: int(self.request[n, i, f]),
                        write=lambda _, v, n=noc, i=i, f=f: self.request[n, i].__setitem__(f, v),
                    )
                registers[start + NOC_CMD_CTRL] = Register(
                    "NOC_CMD_CTRL",
                    read=lambda _: 0,
                    write=lambda access, v, n=noc, i=i: self._command(n, i, access, v),
                )
                node = start + self.facts.node_id_offset
                registers[node] = Register("NOC_NODE_ID", read=lambda _, n=noc: self.node_id(n))
                registers[node + NOC_ENDPOINT_ID - NOC_NODE_ID] = Register(
                    "NOC_ENDPOINT_ID", read=lambda _, n=noc: self.endpoint_id(n)
                )
            registers[NOC_CLEAR_OUTSTANDING_REQ_CNT] = Register(
                "NOC_CLEAR_OUTSTANDING_REQ_CNT", write=lambda _, v: None
            )
            registers[NOC_CMD_STATUS] = Register("NIU combined request initiator status", read=lambda _: 0)
            for name, offset in self.facts.config_registers.items():
                w = (offset - CONFIG_BASE) // 4
                registers[offset] = Register(
                    name,
                    read=lambda _, n=noc, w=w: int(self.config[n, w]),
                    write=lambda _, v, n=noc, w=w: self.config[n].__setitem__(w, v),
                )
            for c in range(COUNTER_WORDS):
                registers[COUNTER_BASE + 4 * c] = Register(f"NIU counter {c}", read=lambda _: 0)
            regions.append(MmioRegion(f"noc{noc}", base, self.facts.niu_size, registers))
        return regions
