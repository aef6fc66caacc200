"""The tile's two NoC interface units (NIUs): registers, requests and their completion.

Modelled from BlackholeA0/NoC/README.md, MemoryMap.md, Counters.md and Atomics.md (and their
WormholeB0 counterparts). Where the two chips' NIUs differ, the difference is architecture data
(``NocFacts.registers``, a :class:`~tensixsim.arch.common.NocRegisters`, and the packet and atomic
facts of ``NocFacts``); the offsets below are Blackhole's, Wormhole's follow the list. Per NIU
(window at ``niu_bases[noc]``):

- Four request initiators (``i * 0x800``): the request fields ``NOC_TARG_ADDR_LO`` ..
  ``NOC_BRCST_EXCLUDE`` (``+0x00`` .. ``+0x2C``) are plain storage. Writing ``NOC_CMD_CTRL`` (``+0x40``)
  with the low bit set initiates a request from those fields (below). ``NOC_CMD_CTRL`` always reads 0:
  a request is taken (and split into packets) on the cycle it is written.
- ``NOC_NODE_ID`` / ``NOC_ENDPOINT_ID`` (``+0x44`` / ``+0x48``, repeated in every initiator): read-only,
  computed from the tile's NoC #0 position (NoC #1 coordinates count from the opposite corner).
- ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` (``+0x60``): clears the ``NIU_MST_REQS_OUTSTANDING_ID`` counters
  whose bits are set.
- Configuration (``+0x100`` .. ``+0x17C``, named by ``NocFacts.config_registers``): storage.
  ``NOC_ID_LOGICAL`` starts as the NIU's own NoC coordinates (the documented power-on value); every
  other register starts at 0 (the documentation gives no reset values). ``DEBUG_COUNTER_RESET`` and
  ``NIU_TRANS_COUNT_RTZ_CLR`` hold nothing. ``NOC_ID_LOGICAL`` is only read by software: the NIU
  itself never uses it.
- Counters (``+0x200`` .. ``+0x2FC``): read-only, the 62 documented counters, updated at the points
  Counters.md lists (the ``REQS_OUTSTANDING`` / ``WRITE_REQS_OUTGOING`` ones are 8 bits wide).

Every other address in a window (request FIFO status, router debug, security fences, ...) is a
:class:`~tensixsim.errors.MemoryFault` naming the register offset.

Wormhole (WormholeB0/NoC/MemoryMap.md, tt-metal's wormhole ``noc_parameters.h``): initiators at a
0x400 stride with ten request fields (``NOC_CMD_CTRL`` at ``+0x28``, ``NOC_NODE_ID`` /
``NOC_ENDPOINT_ID`` at ``+0x2C`` / ``+0x30``), ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` at ``+0x50``, the
combined initiator status at ``+0x54`` (reads 0: every request is taken when written), configuration
``+0x100`` .. ``+0x138``. Addresses are 36 bits: ``*_ADDR_LO`` and bits 0..3 of ``*_ADDR_MID``, whose
bits 4.. hold the coordinates laid out as Blackhole's ``*_ADDR_HI`` (X, Y, then StartX, StartY of a
rectangle); a request is decoded into Blackhole's fields (:meth:`Noc.decode`) and takes the same path.
Packets carry 32 bytes per flit and at most 8192 bytes, a byte-enabled write covers 32 bytes, an
inline write to L1 is a byte-enabled write of ``NOC_AT_DATA`` within its 16-byte line, and its
atomics are increment, compare and swap and the swaps (no Zaamo operations). Translation uses the X
and Y tables alone (32 4-bit entries each) and writes the translated coordinates back into
``*_ADDR_MID``.

Requests. Coordinates (after any translation) are raw NoC coordinates of the NoC the request uses. The
endpoints that exist are this tile (L1, and for inline writes its MMIO registers) and the DRAM tiles
(:mod:`tensixsim.dram`); in a :class:`~tensixsim.chip.Chip` also every other Tensix tile, reached
through the chip's :class:`Fabric` (its L1, and its MMIO registers for inline writes), and the chip's
modelled passive endpoints (Blackhole's ARC and Ethernet tiles, :mod:`tensixsim.endpoints`: their
memories and registers, which check every access; reached as DRAM is, at the L1 latencies, and their
own NIUs count nothing). Any other tile of the grid is Unimplemented, and a router with no endpoint
behind it (in a chip) or coordinates outside the grid are :class:`NoEndpoint`, a Tensix tile fused
off on the chip :class:`HarvestedTile`.

Completions are events at a cycle (latency and bandwidth from :data:`tensixsim.timing.NOC`). The tile
delivers them in cycle order before the earliest core's cycle, and a counter read delivers every event
up to the reading cycle first; a core polling L1 sees a transfer's data at its next slice boundary, as
with a store from another core.

This module holds the NIUs' state, registers, command issue, endpoints, the memory at them and the
completion events; coordinates and their translation are noc/translation.py, the request kinds
noc/requests.py (reads, writes from L1, inline writes, broadcasts) and noc/atomics.py, a request's DRAM
path noc/dram_path.py (mixins of Noc).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.arch.common import NocFacts
from tensixsim.dram import Dram
from tensixsim.errors import MemoryFault, SimError, UndefinedBehavior, Unimplemented
from tensixsim.mmio.memory import Access, MmioRegion, Register
from tensixsim.noc.atomics import Atomics
from tensixsim.noc.dram_path import DramPath
from tensixsim.noc.fabric import (
    Endpoint,
    Fabric,
    HarvestedTile,
    NoEndpoint,
    Packet,
    RemoteAction,
)
from tensixsim.noc.registers import (
    BRCST_EXCLUDE,
    CMD_AT,
    CMD_BRCST_PACKET,
    CMD_L1_ACC_AT_EN,
    CMD_RD,
    CMD_WR,
    CONFIG_BASE,
    CONFIG_PULSES,
    COUNTER_BASE,
    COUNTER_WORDS,
    CTRL,
    EIGHT_BIT_COUNTERS,
    MST_REQS_OUTSTANDING_ID,
    REQUEST_FIELDS,
    REQUEST_TYPES,
    RET_HI,
    RET_MID,
    TARG_HI,
    TARG_MID,
)
from tensixsim.noc.requests import Requests
from tensixsim.noc.translation import Translation
from tensixsim.timing import NOC

if TYPE_CHECKING:
    from tensixsim.endpoints.device import MappedEndpoint
    from tensixsim.tile import Tile


@dataclass
class Noc(Translation, DramPath, Requests, Atomics):
    """Both NIUs of the tile: register state, counters, requests in flight."""

    facts: NocFacts
    position: tuple[int, int]  # NoC #0 coordinates of this tile
    tile_index: int  # NOC_ENDPOINT_ID bits 0..7
    requests: np.ndarray  # (nocs, initiators, request fields of the layout) uint32, as written
    config: np.ndarray  # (nocs, configuration words) uint32
    counters: np.ndarray  # (nocs, COUNTER_WORDS) uint32
    dram: Dram | None = None
    tile: Tile | None = field(default=None, repr=False)
    fabric: Fabric | None = field(default=None, repr=False)  # the other tiles of a chip
    # Completion events: (cycle, sequence, action); actions run in cycle order.
    pending: list[tuple[int, int, Callable[[int], None]]] = field(default_factory=list, repr=False)
    # The (cycle, sequence) of the pending events that may write into L1 (the cores' accesses to
    # pages the NoC writes wait for them: Tile.noc_sync_limit), and by sequence the (start, end) of
    # the bytes those that write a known span of this tile's L1 write.
    l1_writes: list[tuple[int, int]] = field(default_factory=list, repr=False)
    l1_spans: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)
    tx_free: list[int] = field(default_factory=list)  # per NoC: first cycle the outgoing link is free
    rx_free: list[int] = field(default_factory=list)  # per NoC: same for the incoming link
    # A lone tile's DRAM controllers (a chip's are its routers'): controller -> first cycle free.
    bank_free: dict[int, int] = field(default_factory=dict)
    _bank_use: dict[int, list[int]] = field(default_factory=dict)  # controller -> accesses, busy, waited
    inbound: int = 0  # responses to this tile's DRAM requests still in the chip's fabric
    arch: str = "blackhole"  # the architecture's name (its DRAM controllers' rate: NocTiming.dram_hold)
    # Per NoC and request initiator: the cycle its NOC_CMD_CTRL reads 0 again (NocTiming.command_busy).
    busy_until: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    _sequence: itertools.count = field(default_factory=itertools.count, repr=False)

    @classmethod
    def new(cls, arch: Arch, position: tuple[int, int] | None = None, tile_index: int = 0) -> Noc | None:
        """The NIUs of ``arch`` (None when the architecture description has none)."""
        facts = arch.noc
        if facts is None or facts.registers is None:
            return None  # (the tile maps the NIU windows of an unmodelled layout as Unimplemented)
        nocs = len(facts.niu_bases)
        words = (max(facts.config_registers.values()) - CONFIG_BASE) // 4 + 1
        noc = cls(
            facts,
            facts.default_position,
            tile_index,
            np.zeros((nocs, facts.initiators, len(facts.registers.request_fields)), np.uint32),
            np.zeros((nocs, words), np.uint32),
            np.zeros((nocs, COUNTER_WORDS), np.uint32),
            Dram.new(arch),
            tx_free=[0] * nocs,
            rx_free=[0] * nocs,
            busy_until=np.zeros((nocs, facts.initiators), np.int64),
            arch=arch.name,
        )
        noc.place(*(position or facts.default_position))
        return noc

    def reset(self) -> None:
        """Power-on state at the same position: no request in flight, registers and counters as
        built (the DRAM behind it is memory and keeps its contents)."""
        nocs = len(self.facts.niu_bases)
        self.requests[...] = 0
        self.config[...] = 0
        self.counters[...] = 0
        self.pending.clear()
        self.l1_writes.clear()
        self.l1_spans.clear()
        self.tx_free[:] = [0] * nocs
        self.rx_free[:] = [0] * nocs
        self.bank_free.clear()
        self._bank_use.clear()
        self.inbound = 0
        self.busy_until[...] = 0
        self._sequence = itertools.count()
        self.place(*self.position)

    def attach(self, tile: Tile) -> None:
        """The tile whose L1 and registers this tile's requests reach."""
        self.tile = tile

    def place(self, x: int, y: int) -> None:
        """Put the tile at NoC #0 coordinates (x, y); resets NOC_ID_LOGICAL to the raw coordinates."""
        if not (0 <= x < self.facts.width and 0 <= y < self.facts.height):
            raise ValueError(
                f"NoC position ({x}, {y}) outside the {self.facts.width}x{self.facts.height} grid"
            )
        self.position = (x, y)
        for noc in range(len(self.facts.niu_bases)):
            nx, ny = self.coordinates(noc)
            self.config[noc, self._config_index("NOC_ID_LOGICAL")] = nx | ny << 6

    def _config_index(self, name: str) -> int:
        return (self.facts.config_registers[name] - CONFIG_BASE) // 4

    def _config(self, noc: int, name: str) -> int:
        return int(self.config[noc, self._config_index(name)])

    def node_id(self, noc: int) -> int:
        x, y = self.coordinates(noc)
        x_first = self.facts.x_first_routing[noc]
        return x | y << 6 | self.facts.width << 12 | self.facts.height << 19 | int(x_first) << 28

    def endpoint_id(self, noc: int) -> int:
        return self.tile_index & 0xFF | self.facts.tensix_endpoint_type << 8 | noc << 24

    # ------------------------------------------------------------------ endpoints and timing
    def hops(self, noc: int, source: tuple[int, int], target: tuple[int, int]) -> int:
        """Routers a packet passes from ``source`` to ``target`` (``noc``'s coordinates): each NoC
        only moves towards increasing coordinates, wrapping around the torus."""
        return (target[0] - source[0]) % self.facts.width + (target[1] - source[1]) % self.facts.height

    def endpoint(self, noc: int, hi: int, what: str) -> Endpoint:
        """The tile at the coordinates in ``hi`` (a ``*_ADDR_HI`` register) on ``noc``."""
        x, y = hi & 0x3F, hi >> 6 & 0x3F
        if not (x < self.facts.width and y < self.facts.height):
            raise NoEndpoint(
                f"NoC #{noc} {what} names ({x}, {y}), "
                f"outside the {self.facts.width}x{self.facts.height} grid",
                value=hi,
            )
        own = self.coordinates(noc)
        hops = self.hops(noc, own, (x, y))
        noc0 = self.coordinates(noc, (x, y))  # the mapping is its own inverse
        if (x, y) == own:
            return Endpoint("tile", hops=0)
        if noc0 in self.facts.dram_tiles and self.dram is not None:
            return Endpoint("dram", self.facts.dram_tiles[noc0], hops, xy=noc0)
        if self.fabric is not None:
            kind = self.fabric.endpoint_kind(noc0)
            if kind == "tensix":
                return Endpoint("remote", hops=hops, xy=noc0)
            if kind == "harvested":
                raise HarvestedTile(
                    f"NoC #{noc} {what} names ({x}, {y}) (NoC #0 {noc0}): a harvested Tensix tile "
                    "(fused off on this chip)",
                    value=hi,
                )
            if kind is None:
                raise NoEndpoint(
                    f"NoC #{noc} {what} names ({x}, {y}) (NoC #0 {noc0}): a router with no endpoint", value=hi
                )
            if self.fabric.device(noc0) is not None:
                return Endpoint("device", hops=hops, xy=noc0)
            raise Unimplemented(
                f"NoC #{noc} {what} names ({x}, {y}) (NoC #0 {noc0}), a {kind} tile, which is not "
                "modelled as a NoC endpoint",
                value=hi,
            )
        raise Unimplemented(
            f"NoC #{noc} {what} names ({x}, {y}) (NoC #0 {noc0}): only this tile {own} and the DRAM tiles "
            "are modelled",
            value=hi,
        )

    def _latency(self, hops: int) -> int:
        return NOC.niu_to_router + hops * NOC.router_hop + NOC.router_to_niu

    def _read_access(self, endpoint: Endpoint) -> int:
        """Cycles from a read request reaching ``endpoint`` until its response can leave."""
        return NOC.dram_access if endpoint.kind == "dram" else NOC.l1_read

    def _write_access(self, endpoint: Endpoint) -> int:
        """Cycles from a write reaching ``endpoint`` until it has completed (and is acknowledged)."""
        return NOC.dram_access if endpoint.kind == "dram" else NOC.l1_write

    def _landing(
        self, noc: int, flits: int, write: Callable[[int], None], span: bool | tuple[int, int]
    ) -> Callable[[int], None]:
        """What a read response does when its last flit could be in at ``at`` (on a chip, its unloaded
        cycle plus what it waited for in the fabric): it is taken in behind the responses before it on
        this NIU's incoming port, a flit a cycle, at that port's turn, and ``write`` puts its data into
        L1 ``l1_write`` later (``span``: the bytes, for Noc.schedule)."""

        def landing(at: int) -> None:
            done = max(at, self.rx_free[noc] + flits + 1)
            self.rx_free[noc] = done
            self.schedule(done + NOC.l1_write, write, l1=span)

        return landing

    def flits(self, size: int) -> int:
        return max(1, -(-size // (self.facts.flit_bytes or NOC.flit_bytes)))

    @property
    def max_packet_bytes(self) -> int:
        return self.facts.max_packet_bytes or NOC.max_packet_bytes

    # ------------------------------------------------------------------ memory at the endpoints
    def _l1_span(self, address: int, size: int, what: str) -> None:
        l1 = self.tile.arch.l1_size if self.tile is not None else 0
        if not (address >= 0 and address + size <= l1):
            raise Unimplemented(
                f"{what} 0x{address:x}..0x{address + size:x} is not L1 (MMIO through the NoC is modelled "
                "for inline writes only)",
                value=address,
            )

    def _device(self, endpoint: Endpoint) -> MappedEndpoint:
        """The ARC / Ethernet endpoint a "device" endpoint names (tensixsim.endpoints)."""
        return self.fabric.device(endpoint.xy)

    def _device_data(self, target: Endpoint, src: int, size: int) -> bytes | None:
        """What a write from this L1 would store at ``target``, when its registers check values."""
        return self.tile.l1[src : src + size].tobytes() if target.kind == "device" else None

    def _check(
        self,
        endpoint: Endpoint,
        address: int,
        size: int,
        what: str,
        write: bool = False,
        data: bytes | None = None,
    ) -> None:
        if endpoint.kind == "device":  # its own address space: memories and registers
            self._device(endpoint).check(address, size, write, data)
        elif endpoint.kind != "dram":  # (a remote tile is a tile of the same architecture)
            self._l1_span(address, size, what)
        else:
            self.dram.check(endpoint.group, address, size, write=False)

    def _read(self, endpoint: Endpoint, address: int, size: int, cycle: int = 0) -> bytes:
        """Bytes at ``endpoint`` as this NIU reaches them (a remote tile's NIU reads its own L1)."""
        if endpoint.kind == "device":
            return self._device(endpoint).read(address, size, cycle)
        if endpoint.kind != "dram":
            return self.tile.l1[address : address + size].tobytes()
        return self.dram.read(endpoint.group, address, size)

    def _write(self, endpoint: Endpoint, address: int, data: bytes, cycle: int) -> None:
        if endpoint.kind == "device":
            self._device(endpoint).write(address, data, cycle)
        elif endpoint.kind != "dram":
            self.tile.l1_store(address, data, cycle, by=("noc",))
        else:
            self.dram.write(endpoint.group, address, data)

    def _will_write(self, target: Endpoint, address: int, size: int) -> None:
        """A request being made will write ``size`` bytes at ``address`` of ``target``: where that is
        this tile's L1, its cores order their accesses to them against the NoC from now on
        (Tile.noc_will_write), so they see the write at its cycle."""
        if target.kind == "tile" and self.tile is not None:
            self.tile.noc_will_write(address, size)

    # ------------------------------------------------------------------ events
    def schedule(
        self,
        cycle: int,
        action: Callable[[int], None],
        order: int | None = None,
        l1: bool | tuple[int, int] = False,
    ) -> None:
        """Run ``action`` at ``cycle``. Events of one cycle run in the order they were scheduled, or by
        ``order`` when given (it must exceed every count this NIU hands out itself: REMOTE_ORDER).
        ``l1``: the action may write into this tile's L1 (True), or writes the bytes (start, end) of
        it."""
        key = next(self._sequence) if order is None else order
        heapq.heappush(self.pending, (cycle, key, action))
        if l1:
            heapq.heappush(self.l1_writes, (cycle, key))
            if l1 is not True:
                self.l1_spans[key] = l1

    def _at(
        self,
        target: Endpoint,
        cycle: int,
        action: RemoteAction,
        noc: int = 0,
        left: int = 0,
        flits: int = 1,
        group: tuple | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        """Run ``action`` at ``target``'s NIU at ``cycle``: here, or through the fabric at a remote tile
        (a packet of ``flits`` that left this NIU on ``noc`` at ``left``). ``span``: the (start, end)
        of the L1 bytes it writes, where known."""
        if target.kind == "remote":
            self._send(noc, target.xy, cycle, action, left, flits, group)
        else:
            local = target.kind == "tile" and span is not None
            self.schedule(cycle, lambda at: action(self, at), l1=span if local else True)

    def _send(
        self,
        noc: int,
        xy: tuple[int, int],
        cycle: int,
        action: RemoteAction,
        left: int,
        flits: int,
        group: tuple | None = None,
    ) -> None:
        """Send a packet of ``flits`` leaving this NIU at ``left`` to the tile at NoC #0 ``xy``."""
        packet = Packet(
            noc, self.coordinates(noc), self.coordinates(noc, xy), left + NOC.niu_to_router, flits, group
        )
        self.fabric.send(self, xy, cycle, action, packet)

    def next_event(self) -> int | None:
        return self.pending[0][0] if self.pending else None

    @property
    def orders_remote_writes(self) -> bool:
        """Whether this tile's cores wait for what other tiles' requests write into its L1 (and for
        the responses to its own requests to them): only under the full ordering, where they do not
        pass a chip window's end on L1. Otherwise whether such a write is already in ``l1_writes``
        when a core reaches its cycle depends on the windows, and waiting for the window's end would
        move a core that reads such pages a window at a time; it is counted where a core ran past
        it (Tile.noc_will_write)."""
        return self.tile is not None and self.tile.l1_order == "full"

    def next_l1_write(self) -> int | None:
        """The cycle of the earliest pending event that may write into L1, or None."""
        return self.l1_writes[0][0] if self.l1_writes else None

    def deliver(self, until: int) -> int:
        """Complete every event due at or before ``until``; returns how many ran."""
        ran = 0
        while self.pending and self.pending[0][0] <= until:
            cycle, key, action = self.pending[0]
            span = self.l1_spans.get(key)
            if span is not None and self.tile is not None and self.tile.noc_write_waits(cycle, span):
                break  # a poller resumed before it reads first (Parking.noc_write_waits)
            heapq.heappop(self.pending)
            if self.l1_writes and self.l1_writes[0] == (cycle, key):
                heapq.heappop(self.l1_writes)  # (both heaps run in (cycle, key) order)
                self.l1_spans.pop(key, None)
            action(cycle)
            ran += 1
        return ran

    def _count(self, noc: int, cycle: int | None, *changes: tuple[int, int]) -> None:
        """Add to counters; with ``cycle``, wake the cores polling them."""
        for index, delta in changes:
            mask = 0xFF if index in EIGHT_BIT_COUNTERS else 0xFFFFFFFF
            self.counters[noc, index] = (int(self.counters[noc, index]) + delta) & mask
        if cycle is not None and self.tile is not None:
            base = self.facts.niu_bases[noc] + COUNTER_BASE
            for index, _ in changes:
                self.tile.register_written(base + 4 * index, cycle)

    # ------------------------------------------------------------------ requests
    def initiate(self, noc: int, initiator: int, cycle: int) -> None:
        """Take the request in ``initiator``'s fields (raises before changing anything)."""
        f = self.decode(noc, initiator)
        ctrl = f[CTRL]
        kind = ctrl & 3
        write_back = None
        if self.translating(noc):
            f[TARG_HI], f[RET_HI] = self._translated_fields(noc, f)
            if self.facts.registers.translation == "tables":
                write_back = f[TARG_HI], f[RET_HI]
        if ctrl & CMD_L1_ACC_AT_EN:
            raise UndefinedBehavior(
                "NOC_CMD_L1_ACC_AT_EN (unusable on Blackhole: a hardware bug)", value=ctrl
            )
        if ctrl & CMD_BRCST_PACKET and f[BRCST_EXCLUDE]:
            raise Unimplemented(
                "NOC_BRCST_EXCLUDE (a broadcast to less than its rectangle) is not modelled",
                value=f[BRCST_EXCLUDE],
            )
        if kind == CMD_RD:
            plan = self._plan_read(noc, f, cycle)
        elif kind == CMD_WR:
            plan = self._plan_write(noc, f, cycle)
        elif kind == CMD_AT:
            plan = self._plan_atomic(noc, f, cycle)
        else:
            raise UndefinedBehavior("request type 3 is reserved", value=ctrl)
        if write_back is not None:  # Wormhole: the registers now hold the translated coordinates
            self._write_back(noc, initiator, *write_back)
        plan()

    def decode(self, noc: int, initiator: int) -> list[int]:
        """``initiator``'s registers as the request fields (REQUEST_FIELDS) the NIU acts on."""
        layout = self.facts.registers
        if layout.request_fields == REQUEST_FIELDS:
            return [int(v) for v in self.requests[noc, initiator]]
        raw = dict(zip(layout.request_fields, (int(v) for v in self.requests[noc, initiator]), strict=True))
        f = [raw.get(name, 0) for name in REQUEST_FIELDS]
        if layout.coordinates == "mid":
            # Bits 0..35 address, 36..59 coordinates (bits 60..63 are ignored by the hardware).
            for mid, hi in ((TARG_MID, TARG_HI), (RET_MID, RET_HI)):
                word = raw[REQUEST_FIELDS[mid]]
                f[mid], f[hi] = word & 0xF, word >> 4 & 0xFFFFFF
        return f

    # ------------------------------------------------------------------ registers
    def _command(self, noc: int, initiator: int):
        def write(access: Access, value: int) -> None:
            if not value & 1:
                return  # nothing to initiate
            self.deliver(access.cycle)
            try:
                self.initiate(noc, initiator, access.cycle)
            except SimError as error:
                raise self._located(error, noc, initiator, access) from None
            # The initiator takes the request in over the next cycles: NOC_CMD_CTRL reads 1 until
            # then, and the cores polling it see it change.
            done = access.cycle + NOC.command_busy
            self.busy_until[noc, initiator] = done
            if self.tile is not None:
                address = self.facts.niu_bases[noc] + initiator * self.facts.initiator_stride
                address += self.facts.registers.cmd_ctrl
                self.schedule(done, lambda at, a=address: self.tile.register_written(a, at))

        return write

    def _located(self, error: SimError, noc: int, initiator: int, access: Access) -> SimError:
        """``error`` naming the request, the core, its pc and the cycle."""
        names = self.facts.registers.request_fields
        fields = self.decode(noc, initiator)
        kind = REQUEST_TYPES[fields[CTRL] & 3]
        raw = self.requests[noc, initiator].tolist()
        detail = ", ".join(f"{n}=0x{v:x}" for n, v in zip(names, raw, strict=True) if v)
        detail = detail or "all fields 0"
        where = {"core": access.core.name, "pc": access.core.fault_pc(), "cycle": access.cycle}
        if self.translating(noc):
            targ, ret = self._translated_fields(noc, fields)
            detail += f"; translated: NOC_TARG_ADDR_HI=0x{targ:x}, NOC_RET_ADDR_HI=0x{ret:x}"
        message = f"NoC #{noc} initiator {initiator}: {kind} request ({detail}): {error.message}"
        if isinstance(error, MemoryFault):
            return MemoryFault(message, address=error.address, size=error.size, write=error.write, **where)
        return type(error)(message, value=error.value, **where)

    def _counter(self, noc: int, index: int):
        def read(access: Access) -> int:
            self.deliver(access.cycle)
            return int(self.counters[noc, index])

        return read

    def _clear_outstanding(self, noc: int):
        def write(access: Access, value: int) -> None:
            self.deliver(access.cycle)
            for i in range(16):
                if value >> i & 1:
                    self.counters[noc, MST_REQS_OUTSTANDING_ID + i] = 0

        return write

    def regions(self) -> list[MmioRegion]:
        regions = []
        layout = self.facts.registers
        for noc, base in enumerate(self.facts.niu_bases):
            registers: dict[int, Register] = {}
            for initiator in range(self.facts.initiators):
                start = initiator * self.facts.initiator_stride
                for index, name in enumerate(layout.request_fields):
                    registers[start + 4 * index] = Register(
                        f"{name}[{initiator}]",
                        read=lambda _, n=noc, i=initiator, f=index: int(self.requests[n, i, f]),
                        write=lambda _, v, n=noc, i=initiator, f=index: self.requests[n, i].__setitem__(f, v),
                        watch="write",
                    )
                registers[start + layout.cmd_ctrl] = Register(
                    f"NOC_CMD_CTRL[{initiator}]",
                    read=lambda access, n=noc, i=initiator: int(self.busy_until[n, i] > access.cycle),
                    write=self._command(noc, initiator),
                    watch="write",
                )
                registers[start + layout.node_id] = Register(
                    "NOC_NODE_ID", read=lambda _, n=noc: self.node_id(n), watch="write"
                )
                registers[start + layout.endpoint_id] = Register(
                    "NOC_ENDPOINT_ID", read=lambda _, n=noc: self.endpoint_id(n), watch="write"
                )
            registers[layout.clear_outstanding] = Register(
                "NOC_CLEAR_OUTSTANDING_REQ_CNT", write=self._clear_outstanding(noc)
            )
            for name, offset in layout.read_zero:
                registers[offset] = Register(name, read=lambda _: 0, watch="write")
            names = {offset: name for name, offset in self.facts.config_registers.items()}
            for index in range(self.config.shape[1]):
                offset = CONFIG_BASE + 4 * index
                name = names.get(offset, f"NOC_CFG[{index}]")
                if name in CONFIG_PULSES:
                    # Pulses: the debug counters and interrupt sources they clear are not modelled.
                    registers[offset] = Register(
                        name, read=lambda _: 0, write=lambda _a, _v: None, watch="write"
                    )
                    continue
                registers[offset] = Register(
                    name,
                    read=lambda _, n=noc, i=index: int(self.config[n, i]),
                    write=lambda _, v, n=noc, i=index: self.config[n].__setitem__(i, v),
                    watch="write",
                )
            for index in range(COUNTER_WORDS):
                # Counters change when written through the bus or when a transfer completes, which
                # signals the tile like a register write (see _count).
                registers[COUNTER_BASE + 4 * index] = Register(
                    f"NOC_STATUS[{index}]", read=self._counter(noc, index), watch="write"
                )
            regions.append(MmioRegion(f"noc{noc}", base, self.facts.niu_size, registers))
        return regions
