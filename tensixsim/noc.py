"""The tile's two NoC interface units (NIUs), as far as the cores' registers go.

Modelled from BlackholeA0/NoC/MemoryMap.md and Counters.md, per NIU (window at ``niu_bases[noc]``):

- Four request initiators (``i * 0x800``): the request fields ``NOC_TARG_ADDR_LO`` ..
  ``NOC_BRCST_EXCLUDE`` (``+0x00`` .. ``+0x2C``) are plain storage. ``NOC_CMD_CTRL`` (``+0x40``) reads
  0 (no request pending). Writing it with the low bit set would initiate a NoC request; transfers
  are not modelled, so that raises :class:`~tensixsim.errors.Unimplemented` naming the request.
- ``NOC_NODE_ID`` / ``NOC_ENDPOINT_ID`` (``+0x44`` / ``+0x48``, repeated in every initiator): read-only,
  computed from the tile's NoC #0 position (NoC #1 coordinates count from the opposite corner).
- ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` (``+0x60``): write-only; it clears the outstanding-request
  counters, which are always zero here.
- Configuration (``+0x100`` .. ``+0x17C``): storage. Reading: ``NOC_ID_LOGICAL`` starts as the NIU's
  own NoC coordinates (the documented power-on value); every other register starts at 0 (the
  documentation gives no reset values). ``DEBUG_COUNTER_RESET`` and ``NIU_TRANS_COUNT_RTZ_CLR`` hold
  nothing (they read 0).
- Counters (``+0x200`` .. ``+0x2FC``): read-only. No request is ever initiated, so every counter
  stays 0, which is the value hardware would show.

Every other address in a window (request FIFO status, router debug, security fences, ...) is a
:class:`~tensixsim.errors.MemoryFault` naming the register offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensixsim.arch import Arch
from tensixsim.arch.common import NocFacts
from tensixsim.errors import Unimplemented
from tensixsim.memory import Access, MmioRegion, Register

# Offsets inside one request initiator.
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
    "NOC_AT_LEN_BE_1",
    "NOC_AT_DATA",
    "NOC_BRCST_EXCLUDE",
)
NOC_CMD_CTRL = 0x40
NOC_NODE_ID = 0x44
NOC_ENDPOINT_ID = 0x48
NOC_CLEAR_OUTSTANDING_REQ_CNT = 0x60
CONFIG_BASE = 0x100
CONFIG_WORDS = 32
NOC_ID_LOGICAL = 0x12  # configuration word index
DEBUG_COUNTER_RESET = 0x1D
NIU_TRANS_COUNT_RTZ_CLR = 0x1F
COUNTER_BASE = 0x200
COUNTER_WORDS = 64
_REQUEST_TYPES = {0: "read", 1: "atomic", 2: "write", 3: "reserved"}


@dataclass
class Noc:
    """The NIU registers that hold state, for both NoCs."""

    facts: NocFacts
    position: tuple[int, int]  # NoC #0 coordinates of this tile
    tile_index: int  # NOC_ENDPOINT_ID bits 0..7
    requests: np.ndarray  # (nocs, initiators, len(REQUEST_FIELDS)) uint32
    config: np.ndarray  # (nocs, CONFIG_WORDS) uint32

    @classmethod
    def new(cls, arch: Arch, position: tuple[int, int] | None = None, tile_index: int = 0) -> Noc | None:
        """The NIUs of ``arch`` (None when the architecture description has none)."""
        facts = arch.noc
        if facts is None:
            return None
        nocs = len(facts.niu_bases)
        noc = cls(
            facts,
            facts.default_position,
            tile_index,
            np.zeros((nocs, facts.initiators, len(REQUEST_FIELDS)), np.uint32),
            np.zeros((nocs, CONFIG_WORDS), np.uint32),
        )
        noc.place(*(position or facts.default_position))
        return noc

    def place(self, x: int, y: int) -> None:
        """Put the tile at NoC #0 coordinates (x, y); resets NOC_ID_LOGICAL to the raw coordinates."""
        if not (0 <= x < self.facts.width and 0 <= y < self.facts.height):
            raise ValueError(
                f"NoC position ({x}, {y}) outside the {self.facts.width}x{self.facts.height} grid"
            )
        self.position = (x, y)
        for noc in range(len(self.facts.niu_bases)):
            nx, ny = self.coordinates(noc)
            self.config[noc, NOC_ID_LOGICAL] = nx | ny << 6

    def coordinates(self, noc: int) -> tuple[int, int]:
        """This tile's coordinates on ``noc``: NoC #1 counts from the opposite corner."""
        x, y = self.position
        if noc == 0:
            return x, y
        return self.facts.width - 1 - x, self.facts.height - 1 - y

    def node_id(self, noc: int) -> int:
        x, y = self.coordinates(noc)
        x_first = self.facts.x_first_routing[noc]
        return x | y << 6 | self.facts.width << 12 | self.facts.height << 19 | int(x_first) << 28

    def endpoint_id(self, noc: int) -> int:
        return self.tile_index & 0xFF | self.facts.tensix_endpoint_type << 8 | noc << 24

    # ------------------------------------------------------------------ registers
    def _command(self, noc: int, initiator: int):
        def write(access: Access, value: int) -> None:
            if not value & 1:
                return  # nothing to initiate
            fields = dict(zip(REQUEST_FIELDS, self.requests[noc, initiator].tolist(), strict=True))
            kind = _REQUEST_TYPES[fields["NOC_CTRL"] & 3]
            detail = ", ".join(f"{name}=0x{v:x}" for name, v in fields.items() if v)
            raise Unimplemented(
                f"NoC #{noc} initiator {initiator}: {kind} request ({detail or 'all fields 0'}); "
                "NoC transfers are not modelled",
                core=access.core.name,
                pc=access.core.fault_pc(),
                cycle=access.cycle,
                value=value,
            )

        return write

    def regions(self) -> list[MmioRegion]:
        regions = []
        for noc, base in enumerate(self.facts.niu_bases):
            registers: dict[int, Register] = {}
            for initiator in range(self.facts.initiators):
                start = initiator * self.facts.initiator_stride
                for index, name in enumerate(REQUEST_FIELDS):
                    registers[start + 4 * index] = Register(
                        f"{name}[{initiator}]",
                        read=lambda _, n=noc, i=initiator, f=index: int(self.requests[n, i, f]),
                        write=lambda _, v, n=noc, i=initiator, f=index: self.requests[n, i].__setitem__(f, v),
                        watch="write",
                    )
                registers[start + NOC_CMD_CTRL] = Register(
                    f"NOC_CMD_CTRL[{initiator}]", read=lambda _: 0, write=self._command(noc, initiator)
                )
                registers[start + NOC_NODE_ID] = Register(
                    "NOC_NODE_ID", read=lambda _, n=noc: self.node_id(n), watch="write"
                )
                registers[start + NOC_ENDPOINT_ID] = Register(
                    "NOC_ENDPOINT_ID", read=lambda _, n=noc: self.endpoint_id(n), watch="write"
                )
            registers[NOC_CLEAR_OUTSTANDING_REQ_CNT] = Register(
                "NOC_CLEAR_OUTSTANDING_REQ_CNT", write=lambda _a, _v: None
            )
            for index in range(CONFIG_WORDS):
                if index in (DEBUG_COUNTER_RESET, NIU_TRANS_COUNT_RTZ_CLR):
                    # Pulses: the counters and interrupt sources they clear are always zero here.
                    registers[CONFIG_BASE + 4 * index] = Register(
                        f"NOC_CFG[{index}]", read=lambda _: 0, write=lambda _a, _v: None, watch="write"
                    )
                    continue
                registers[CONFIG_BASE + 4 * index] = Register(
                    f"NOC_CFG[{index}]",
                    read=lambda _, n=noc, i=index: int(self.config[n, i]),
                    write=lambda _, v, n=noc, i=index: self.config[n].__setitem__(i, v),
                    watch="write",
                )
            for index in range(COUNTER_WORDS):
                registers[COUNTER_BASE + 4 * index] = Register(
                    f"NOC_STATUS[{index}]", read=lambda _: 0, watch="write"
                )
            regions.append(MmioRegion(f"noc{noc}", base, self.facts.niu_size, registers))
        return regions
