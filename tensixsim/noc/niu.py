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

Coordinate translation (Coordinates.md, "Translation Algorithm"). While bit 14 of the issuing NIU's
``NIU_CFG_0`` is set, the X/Y coordinates in ``NOC_TARG_ADDR_HI`` and ``NOC_RET_ADDR_HI`` go through
:meth:`Noc.translate`, with that NIU's tables and masks, when ``NOC_CMD_CTRL`` is written; the result
is raw coordinates of the request's NoC and the request is routed as below. As on Blackhole (not
Wormhole) the registers keep what software wrote. Readings where the pages are silent:

- Both ``HI`` fields are translated for every request type, used or not (the page names both).
- A broadcast rectangle (``NOC_TARG_ADDR_HI`` of an atomic or inline write, ``NOC_RET_ADDR_HI`` of a
  write from L1) has its corners translated as the pairs (StartX, StartY) and (EndX, EndY), since the
  algorithm maps an ``X, Y`` pair; the span is then taken from the translated corners (MemoryMap.md).
- Bits 12..31 of a unicast ``HI`` field (reserved) and bits 24..31 of a rectangle pass unchanged.

Requests. Coordinates (after any translation) are raw NoC coordinates of the NoC the request uses. The
endpoints that exist are this tile (L1, and for inline writes its MMIO registers) and the DRAM tiles
(:mod:`tensixsim.dram`); in a :class:`~tensixsim.chip.Chip` also every other Tensix tile, reached
through the chip's :class:`Fabric` (its L1, and its MMIO registers for inline writes), and the chip's
modelled passive endpoints (Blackhole's ARC and Ethernet tiles, :mod:`tensixsim.endpoints`: their
memories and registers, which check every access; reached as DRAM is, at the L1 latencies, and their
own NIUs count nothing). Any other tile of the grid is Unimplemented, and a router with no endpoint
behind it (in a chip) or coordinates outside the grid are :class:`NoEndpoint`, a Tensix tile fused
off on the chip :class:`HarvestedTile`.
Supported: reads (split into 16 KiB packets), writes from L1 with a length or a byte-enable mask,
inline writes to MMIO, the atomics (increment, compare and swap, the swaps by mask and by index, the
Zaamo operations; parallel addition raises Unimplemented); broadcasts of writes from L1, inline
writes and posted atomics to a rectangle of Tensix tiles, wrapping round the torus where its start
lies past its end (in a chip; on a lone tile the tile itself). Everything is checked before anything
changes. Readings where the pages are silent:

- A request leaves the NIU on the cycle ``NOC_CMD_CTRL`` is written; the "started" / "sent" / "accepted"
  counters and ``REQS_OUTSTANDING`` count it then. Packets of one NIU share its outgoing link (one
  flit per cycle) and read responses its incoming link.
- Write data are read from L1 when the request is taken (``WRITE_REQS_OUTGOING`` drops once the packet
  has left, ``1 + flits`` cycles later); read data are read at the target when the response is
  built; atomics act at the target on arrival.
- A broadcast inline write is acknowledged by each receiver (as a broadcast write from L1 is); a
  broadcast atomic with a response is Unimplemented (each receiver would answer to the same
  ``NOC_RET_ADDR``). A rectangle with a corner outside the grid is :class:`NoEndpoint`.
- Inline writes to L1 (unsafe on Blackhole, MemoryMap.md) and zero-length reads / writes are
  :class:`~tensixsim.errors.UndefinedBehavior`; ``NOC_CMD_L1_ACC_AT_EN`` (unusable, a hardware bug) too.
- A DRAM bank's controller serves the accesses reaching it one after another (NocTiming.dram_hold):
  a lone tile's NIU keeps the controllers (``bank_free``); on a chip the routers do, and the data of
  a DRAM access cross the links of their route (Fabric.send), so the action lands here once they
  have come through.
- Completions are events at a cycle (latency and bandwidth from :data:`tensixsim.timing.NOC`). The
  tile delivers them in cycle order before the earliest core's cycle, and a counter read delivers
  every event up to the reading cycle first; a core polling L1 sees a transfer's data at its next
  slice boundary, as with a store from another core.
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
from tensixsim.errors import InvalidProgram, MemoryFault, SimError, UndefinedBehavior, Unimplemented
from tensixsim.mmio.memory import Access, MmioRegion, Register
from tensixsim.noc.fabric import (
    Endpoint,
    Fabric,
    HarvestedTile,
    NoEndpoint,
    Packet,
    RemoteAction,
    bank_link,
)
from tensixsim.noc.registers import (
    AT_CAS,
    AT_DATA,
    AT_INCREMENT,
    AT_LEN_BE,
    AT_LEN_BE_1,
    AT_SWAP_INDEX,
    AT_SWAP_INDEX_HIGH,
    AT_SWAP_MASK,
    AT_ZAAMO,
    ATOMIC_NAMES,
    BRCST_EXCLUDE,
    CMD_AT,
    CMD_BRCST_PACKET,
    CMD_BRCST_SRC_INCLUDE,
    CMD_L1_ACC_AT_EN,
    CMD_RD,
    CMD_RESP_MARKED,
    CMD_WR,
    CMD_WR_BE,
    CMD_WR_INLINE,
    CONFIG_BASE,
    CONFIG_PULSES,
    COUNTER_BASE,
    COUNTER_WORDS,
    CTRL,
    EIGHT_BIT_COUNTERS,
    MST_ATOMIC_RESP_RECEIVED,
    MST_CMD_ACCEPTED,
    MST_NONPOSTED_ATOMIC_SENT,
    MST_NONPOSTED_ATOMIC_STARTED,
    MST_NONPOSTED_WR_DATA_WORD_SENT,
    MST_NONPOSTED_WR_REQ_SENT,
    MST_NONPOSTED_WR_REQ_STARTED,
    MST_POSTED_ATOMIC_SENT,
    MST_POSTED_WR_DATA_WORD_SENT,
    MST_POSTED_WR_REQ_SENT,
    MST_POSTED_WR_REQ_STARTED,
    MST_RD_DATA_WORD_RECEIVED,
    MST_RD_REQ_SENT,
    MST_RD_REQ_STARTED,
    MST_RD_RESP_RECEIVED,
    MST_REQS_OUTSTANDING_ID,
    MST_WR_ACK_RECEIVED,
    MST_WRITE_REQS_OUTGOING_ID,
    PACKET_TAG,
    REQUEST_FIELDS,
    REQUEST_TYPES,
    RET_HI,
    RET_LO,
    RET_MID,
    SLV_ATOMIC_RESP_SENT,
    SLV_NONPOSTED_ATOMIC_RECEIVED,
    SLV_NONPOSTED_WR_DATA_WORD_RECEIVED,
    SLV_NONPOSTED_WR_REQ_RECEIVED,
    SLV_NONPOSTED_WR_REQ_STARTED,
    SLV_POSTED_ATOMIC_RECEIVED,
    SLV_POSTED_WR_DATA_WORD_RECEIVED,
    SLV_POSTED_WR_REQ_RECEIVED,
    SLV_POSTED_WR_REQ_STARTED,
    SLV_RD_DATA_WORD_SENT,
    SLV_RD_REQ_RECEIVED,
    SLV_RD_RESP_SENT,
    SLV_REQ_ACCEPTED,
    SLV_WR_ACK_SENT,
    TARG_HI,
    TARG_LO,
    TARG_MID,
    TRANSLATION_ENABLE,
)
from tensixsim.results import DramBankUse, count_bank_use
from tensixsim.timing import NOC

if TYPE_CHECKING:
    from tensixsim.endpoints.device import MappedEndpoint
    from tensixsim.tile import Tile

THIS_TILE = Endpoint("tile")  # the issuing (or receiving) NIU's own tile


@dataclass
class Noc:
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

    def _table(self, noc: int, name: str, index: int) -> int:
        """Entry ``index`` (0..31) of the lookup table ``name``: entries of ``table_entry_bits`` packed
        from bit 0 of each 32-bit word (Blackhole: six 5-bit entries, bits 30 and 31 unused; Wormhole:
        eight 4-bit entries)."""
        bits = self.facts.registers.table_entry_bits
        word, slot = divmod(index, 32 // bits)
        return self._config(noc, f"{name}_{word}") >> bits * slot & (1 << bits) - 1

    # ------------------------------------------------------------------ coordinate translation
    def translating(self, noc: int) -> bool:
        return bool(self._config(noc, "NIU_CFG_0") & TRANSLATION_ENABLE)

    def translate(self, noc: int, x: int, y: int) -> tuple[int, int]:
        """Raw coordinates for the translated pair (x, y) (6 bits each) at NIU ``noc``
        (Coordinates.md, "Translation Algorithm"; Wormhole's: the X and Y tables alone)."""
        x5, y5 = x & 0x1F, y & 0x1F
        if self.facts.registers.translation == "tables":
            # Wormhole's tables have 32 entries per axis; a coordinate of 32 or more (6 bits) is not
            # covered by the page: its low 5 bits index the table.
            x_table, y_table = "NOC_X_ID_TRANSLATE_TABLE", "NOC_Y_ID_TRANSLATE_TABLE"
            return self._table(noc, x_table, x5), self._table(noc, y_table, y5)
        # Two bits above the last DDR table entry mark columns 9 and 0 as DRAM columns.
        flags = self._config(noc, "DDR_COORD_TRANSLATE_TABLE_5")
        dram_columns = {c for c, bit in ((9, 10), (0, 11)) if flags >> bit & 1}
        if self._config(noc, "DDR_COORD_TRANSLATE_COL_SWAP") >> y5 & 1 and (x5 ^ 9) in dram_columns:
            raw_x = x5 ^ 9
        elif self._config(noc, "NOC_ID_TRANSLATE_ROW_MASK") >> y5 & 1:
            raw_x = x
        else:
            raw_x = self._table(noc, "NOC_X_ID_TRANSLATE_TABLE", x5)
        # Y depends on the X given, not on the X produced.
        if x5 in dram_columns:
            raw_y = self._table(noc, "DDR_COORD_TRANSLATE_TABLE", y5)
        elif self._config(noc, "NOC_ID_TRANSLATE_COL_MASK") >> x5 & 1:
            raw_y = y
        else:
            raw_y = self._table(noc, "NOC_Y_ID_TRANSLATE_TABLE", y5)
        return raw_x, raw_y

    def translate_hi(self, noc: int, hi: int, rectangle: bool) -> int:
        """A ``*_ADDR_HI`` value with its coordinates translated: (x, y) in bits 0..11, and for a
        broadcast rectangle also (StartX, StartY) in bits 12..23; other bits unchanged."""
        corners = 2 if rectangle else 1
        for k in range(corners):
            shift = 12 * k
            x, y = self.translate(noc, hi >> shift & 0x3F, hi >> shift + 6 & 0x3F)
            hi = hi & ~(0xFFF << shift) | (x | y << 6) << shift
        return hi

    def _translated_fields(self, noc: int, f: list[int]) -> tuple[int, int]:
        """``NOC_TARG_ADDR_HI`` and ``NOC_RET_ADDR_HI`` of request fields ``f`` as the NIU uses them."""
        ctrl = f[CTRL]
        broadcast = bool(ctrl & CMD_BRCST_PACKET)
        # The field holding a broadcast rectangle: the target of an atomic or an inline write, the
        # return address (destination) of a write from L1.
        targ_rect = (ctrl & 3) == CMD_AT or ((ctrl & 3) == CMD_WR and bool(ctrl & CMD_WR_INLINE))
        return (
            self.translate_hi(noc, f[TARG_HI], broadcast and targ_rect),
            self.translate_hi(noc, f[RET_HI], broadcast and not targ_rect),
        )

    def coordinates(self, noc: int, position: tuple[int, int] | None = None) -> tuple[int, int]:
        """``position`` (default: this tile) on ``noc``: NoC #1 counts from the opposite corner."""
        x, y = position if position is not None else self.position
        if noc == 0:
            return x, y
        return self.facts.width - 1 - x, self.facts.height - 1 - y

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

    def _served(self, endpoint: Endpoint, address: int, reached: int, length: int, write: bool) -> int:
        """The cycle ``endpoint`` starts an access of ``length`` bytes at ``address`` that reaches it at
        ``reached``: a lone tile's DRAM controller takes it at its turn, first come first served
        (NocTiming.dram_hold); on a chip the routers give that turn (``_bank_packet``)."""
        if endpoint.kind != "dram" or self._bank_in_fabric(endpoint):
            return reached
        bank = self._controller(endpoint, address)
        start = max(reached, self.bank_free.get(bank, 0))
        hold = NOC.dram_hold(length, write, self.arch)
        self.bank_free[bank] = start + hold
        count_bank_use(self._bank_use, bank, hold, start - reached)
        return start

    def _controller(self, dram: Endpoint, address: int) -> int:
        """The DRAM controller an access at ``address`` of ``dram``'s group asks: the group's, or where a
        group has several GDDR6 channels (NocFacts.dram_channel_bytes), its channel's, numbered across
        the chip (group * channels + channel, tt-metal's bank order)."""
        channel = self.facts.dram_channel_bytes
        if not channel:
            return dram.group
        return dram.group * (self.facts.dram_group_bytes // channel) + address // channel

    def bank_use(self) -> dict[int, DramBankUse]:
        """A lone tile's DRAM controllers (``_controller``'s numbers): what they did for it (a chip's:
        Chip)."""
        return {bank: DramBankUse(*use) for bank, use in self._bank_use.items()}

    def _bank_in_fabric(self, endpoint: Endpoint) -> bool:
        """Whether ``endpoint`` is a DRAM bank whose controller a chip's routers keep."""
        return endpoint.kind == "dram" and self.fabric is not None

    def _bank_packet(
        self,
        noc: int,
        dram: Endpoint,
        address: int,
        reached: int,
        length: int,
        write: bool,
        ready: int,
        flits: int,
    ) -> Packet:
        """The packet of a chip's DRAM access that moves its data: a read's response (its data ready to
        leave at ``ready`` unloaded) or a write's data (sent at ``ready``), crossing the controller of
        ``dram``'s group (asked at ``reached``, the request's arrival) and the links of its route."""
        far, own = self.coordinates(noc, dram.xy), self.coordinates(noc)
        return Packet(
            noc,
            own if write else far,
            far if write else own,
            ready + NOC.niu_to_router,
            flits,
            bank=bank_link(self._controller(dram, address)),
            bank_hold=NOC.dram_hold(length, write, self.arch),
            bank_at=reached,
            bank_first=not write,
        )

    def _inbound(
        self, cycle: int, action: Callable[[int], None], packet: Packet, span: tuple[int, int] | None = None
    ) -> None:
        """Run ``action`` here at ``cycle`` unloaded, later by what ``packet`` waits for in the chip's
        fabric (its bank's controller, links other packets hold); ``span``: the L1 bytes it writes."""
        counted = span is not None
        self.inbound += counted

        def arrived(niu: Noc, at: int) -> None:
            niu.inbound = max(0, niu.inbound - counted)  # (the NIU may have been reset meanwhile)
            action(at)

        self.fabric.send(self, self.position, cycle, arrived, packet, span)

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

    def _write_back(self, noc: int, initiator: int, targ: int, ret: int) -> None:
        """Put translated coordinates back into the ``*_ADDR_MID`` registers (Wormhole)."""
        fields = self.facts.registers.request_fields
        for name, hi in (("NOC_TARG_ADDR_MID", targ), ("NOC_RET_ADDR_MID", ret)):
            index = fields.index(name)
            word = int(self.requests[noc, initiator, index])
            self.requests[noc, initiator, index] = word & 0xF000000F | (hi & 0xFFFFFF) << 4

    def _txn(self, f: list[int]) -> int:
        return f[PACKET_TAG] >> 10 & 0xF

    def _own(self, noc: int, hi: int, what: str) -> None:
        if self.endpoint(noc, hi, what).kind != "tile":
            raise Unimplemented(f"NoC #{noc}: {what} elsewhere than this tile", value=hi)

    def _length(self, f: list[int], what: str) -> int:
        if f[AT_LEN_BE_1]:
            raise Unimplemented(f"{what} of 4 GiB or more", value=f[AT_LEN_BE_1])
        if f[AT_LEN_BE] == 0:
            raise UndefinedBehavior(f"zero-length {what}")
        return f[AT_LEN_BE]

    def _plan_read(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        size = self._length(f, "read")
        if f[CTRL] & CMD_BRCST_PACKET:
            raise UndefinedBehavior("broadcast read (NOC_CMD_BRCST_PACKET must be false for reads)")
        source = self.endpoint(noc, f[TARG_HI], "read source (NOC_TARG_ADDR_HI)")
        self._own(noc, f[RET_HI], "read destination (NOC_RET_ADDR_HI)")
        src = f[TARG_LO] | f[TARG_MID] << 32
        dst = f[RET_LO]
        if f[RET_MID]:
            raise Unimplemented("read destination above 4 GiB in a Tensix tile", value=f[RET_MID])
        self._check(source, src, size, "read source")
        self._l1_span(dst, size, "read destination")
        packets = -(-size // self.max_packet_bytes)
        txn = self._txn(f)
        loop = source.kind == "tile"
        back = 0 if loop else self._return_hops(noc, f[TARG_HI])

        def run() -> None:
            self._will_write(THIS_TILE, dst, size)
            self._count(
                noc,
                cycle,
                (MST_REQS_OUTSTANDING_ID + txn, packets),
                (MST_CMD_ACCEPTED, packets),
                (MST_RD_REQ_STARTED, packets),
                (MST_RD_REQ_SENT, packets),
            )
            for k in range(packets):
                offset = k * self.max_packet_bytes
                length = min(self.max_packet_bytes, size - offset)
                flits = self.flits(length)
                sent = max(cycle, self.tx_free[noc]) + 1  # one header flit
                self.tx_free[noc] = sent
                reached = sent + self._latency(source.hops)  # the request at its target
                chip = self._bank_in_fabric(source)
                turn = self._served(source, src + offset, reached, length, False)
                arrive = turn + self._read_access(source)
                first = arrive + self._latency(back)
                if chip:  # the response crosses its bank's controller and the links back (unloaded here)
                    packet = self._bank_packet(
                        noc, source, src + offset, reached, length, False, arrive, flits + 1
                    )
                    read = self._read_done(noc, txn, source, src + offset, dst + offset, length, loop)
                    span = (dst + offset, dst + offset + length)
                    self._inbound(first + flits, self._landing(noc, flits, read, span), packet, span)
                    continue
                if source.kind == "remote":
                    # The response's last flit is in ``first + flits - arrive`` after the request is
                    # served (later if it waits for links), then behind the responses before it.
                    served = self._read_served(
                        noc, txn, src + offset, dst + offset, length, first + flits - arrive
                    )
                    self._at(source, arrive, served, noc, sent, 1)
                    continue
                # The data are written into this tile's L1, and only then counted (Counters.md).
                read = self._read_done(noc, txn, source, src + offset, dst + offset, length, loop)
                self._landing(noc, flits, read, (dst + offset, dst + offset + length))(first + flits)

        return run

    def _read_served(self, noc: int, txn: int, src: int, dst: int, length: int, after: int) -> RemoteAction:
        """A read packet reaching another tile: its NIU reads the data as it builds the response, which
        lands here ``after`` cycles later (unloaded)."""

        def served(niu: Noc, cycle: int) -> None:
            data = niu._read(Endpoint("tile"), src, length)
            flits = self.flits(length)
            niu._count(
                noc,
                cycle,
                (SLV_REQ_ACCEPTED, 1),
                (SLV_RD_REQ_RECEIVED, 1),
                (SLV_RD_RESP_SENT, 1),
                (SLV_RD_DATA_WORD_SENT, flits),
            )

            def written(at: int) -> None:
                self.tile.l1_store(dst, data, at, by=("noc",))
                self._count(
                    noc,
                    at,
                    (MST_RD_RESP_RECEIVED, 1),
                    (MST_RD_DATA_WORD_RECEIVED, flits),
                    (MST_REQS_OUTSTANDING_ID + txn, -1),
                )

            def landed(_: Noc, at: int) -> None:
                # Counted once the data are written into this tile's L1 (Counters.md).
                ordered = self.orders_remote_writes
                self._landing(noc, flits, written, (dst, dst + length) if ordered else False)(at)

            niu._send(noc, self.position, cycle + after, landed, cycle, flits + 1)

        return served

    def _return_hops(self, noc: int, hi: int) -> int:
        return self.hops(noc, (hi & 0x3F, hi >> 6 & 0x3F), self.coordinates(noc))

    def _read_done(
        self, noc: int, txn: int, source: Endpoint, src: int, dst: int, length: int, loop: bool
    ) -> Callable[[int], None]:
        def done(cycle: int) -> None:
            data = self._read(source, src, length, cycle)
            self.tile.l1_store(dst, data, cycle, by=("noc",))
            flits = self.flits(length)
            changes = [
                (MST_RD_RESP_RECEIVED, 1),
                (MST_RD_DATA_WORD_RECEIVED, flits),
                (MST_REQS_OUTSTANDING_ID + txn, -1),
            ]
            if loop:
                changes += [
                    (SLV_REQ_ACCEPTED, 1),
                    (SLV_RD_REQ_RECEIVED, 1),
                    (SLV_RD_RESP_SENT, 1),
                    (SLV_RD_DATA_WORD_SENT, flits),
                ]
            self._count(noc, cycle, *changes)

        return done

    def _broadcast_targets(self, noc: int, hi: int, ctrl: int, what: str) -> list[Endpoint]:
        """The receivers of a broadcast to the rectangle in ``hi`` (RoutingPaths.md, MemoryMap.md):
        every Tensix tile in it, this one only with NOC_CMD_BRCST_SRC_INCLUDE; other tiles (and fused-off
        ones) opt out. A span whose start lies past its end wraps round the torus (``x <= EndX or
        StartX <= x``). In a chip any rectangle of the grid; on a lone tile, the tile itself."""
        if self.fabric is None:
            self._broadcast_target(noc, hi, ctrl, what)
            return [Endpoint("tile")]
        end, start = (hi & 0x3F, hi >> 6 & 0x3F), (hi >> 12 & 0x3F, hi >> 18 & 0x3F)
        if not all(x < self.facts.width and y < self.facts.height for x, y in (start, end)):
            raise NoEndpoint(
                f"NoC #{noc} broadcast {what} to {start}..{end}: a corner outside the "
                f"{self.facts.width}x{self.facts.height} grid",
                value=hi,
            )
        own = self.coordinates(noc)
        targets = []
        for y in _span(start[1], end[1], self.facts.height):
            for x in _span(start[0], end[0], self.facts.width):
                if (x, y) == own:
                    if ctrl & CMD_BRCST_SRC_INCLUDE:
                        targets.append(Endpoint("tile"))
                    continue
                noc0 = self.coordinates(noc, (x, y))
                if self.fabric.endpoint_kind(noc0) == "tensix":
                    targets.append(Endpoint("remote", hops=self.hops(noc, own, (x, y)), xy=noc0))
        return targets

    def _broadcast_target(self, noc: int, hi: int, ctrl: int, what: str) -> None:
        """A broadcast rectangle must be this tile alone, with the initiator included."""
        end, start = (hi & 0x3F, hi >> 6 & 0x3F), (hi >> 12 & 0x3F, hi >> 18 & 0x3F)
        own = self.coordinates(noc)
        if start != own or end != own:
            raise Unimplemented(
                f"NoC #{noc} broadcast {what} to {start}..{end}: only this tile {own} is modelled", value=hi
            )
        if not ctrl & CMD_BRCST_SRC_INCLUDE:
            raise Unimplemented(
                f"NoC #{noc} broadcast {what} excluding the initiator from a rectangle of itself alone",
                value=ctrl,
            )

    def _plan_write(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        marked = bool(ctrl & CMD_RESP_MARKED)
        txn = self._txn(f)
        if ctrl & CMD_WR_INLINE:
            return self._plan_inline(noc, f, cycle, marked, txn)
        self._own(noc, f[TARG_HI], "write source (NOC_TARG_ADDR_HI)")
        if ctrl & CMD_BRCST_PACKET:
            targets = self._broadcast_targets(noc, f[RET_HI], ctrl, "write")
        else:
            targets = [self.endpoint(noc, f[RET_HI], "write destination (NOC_RET_ADDR_HI)")]
        # (Every receiver of a broadcast is a Tensix tile: one check covers them all.)
        target = targets[0] if targets else Endpoint("tile")
        src = f[TARG_LO]
        dst = f[RET_LO] | f[RET_MID] << 32
        if f[TARG_MID]:
            raise Unimplemented("write source above 4 GiB in a Tensix tile", value=f[TARG_MID])
        if ctrl & CMD_WR_BE:
            mask = f[AT_LEN_BE] | f[AT_LEN_BE_1] << 32
            src, dst = src & ~0xF, dst & ~0xF
            span = self.facts.write_be_bytes  # one mask bit per byte
            self._l1_span(src, span, "write source")
            self._check(target, dst, span, "write destination", True, self._device_data(target, src, span))
            pieces = [(0, span)]
        else:
            mask = None
            size = self._length(f, "write")
            self._l1_span(src, size, "write source")
            self._check(target, dst, size, "write destination", True, self._device_data(target, src, size))
            most = self.max_packet_bytes
            pieces = [(k, min(most, size - k)) for k in range(0, size, most)]
        packets = len(pieces)
        own = self.coordinates(noc)
        # Hops of each receiver's acknowledgement back to this tile.
        backs = [
            0 if t.kind == "tile" else self._return_hops(noc, f[RET_HI]) if t.kind in ("dram", "device")
            else self.hops(noc, self.coordinates(noc, t.xy), own)
            for t in targets
        ]  # fmt: skip
        # Each receiver acknowledges each packet (tt-metal's multicast barrier counts one per receiver).
        acks = packets * len(targets)
        extent = pieces[-1][0] + pieces[-1][1]

        def run() -> None:
            for target in targets:
                self._will_write(target, dst, extent)
            changes = [
                (MST_WRITE_REQS_OUTGOING_ID + txn, packets),
                (MST_CMD_ACCEPTED, packets),
                (MST_NONPOSTED_WR_REQ_STARTED if marked else MST_POSTED_WR_REQ_STARTED, packets),
            ]
            if marked:
                changes.append((MST_REQS_OUTSTANDING_ID + txn, acks))
            self._count(noc, cycle, *changes)
            for offset, length in pieces:
                data = self.tile.l1[src + offset : src + offset + length].tobytes()
                flits = self.flits(length)
                left = max(cycle, self.tx_free[noc]) + 1 + flits
                self.tx_free[noc] = left
                self.schedule(left, self._write_left(noc, txn, marked, flits))
                # A multicast's packets share the links their routes have in common.
                group = (self.position, noc, left) if len(targets) > 1 else None
                for target, back in zip(targets, backs, strict=True):
                    # The far NIU's counters count it (this tile's, or a remote tile's), not DRAM's (nor
                    # an ARC / Ethernet tile's NIU, not modelled).
                    loop = target.kind not in ("dram", "device")
                    reached = left + self._latency(target.hops)  # the header at the target
                    chip = self._bank_in_fabric(target)
                    turn = self._served(target, dst + offset, reached, length, True)
                    arrive = turn + self._write_access(target)
                    remote_ack = back if marked and target.kind == "remote" else None
                    arrived = self._write_arrived(
                        noc, target, dst + offset, data, mask, marked, loop, remote_ack, txn
                    )
                    if chip:  # the data cross the links and their bank's controller (unloaded here)
                        packet = self._bank_packet(
                            noc, target, dst + offset, reached, length, True, left, flits + 1
                        )
                        self._inbound(arrive, self._dram_written(noc, txn, arrived, marked, back), packet)
                        continue
                    span = (dst + offset, dst + offset + length)
                    self._at(target, arrive, arrived, noc, left, flits + 1, group, span)
                    if marked and remote_ack is None:
                        self.schedule(arrive + self._latency(back), self._acked(noc, txn))

        return run

    def _write_left(self, noc: int, txn: int, marked: bool, flits: int) -> Callable[[int], None]:
        def left(cycle: int) -> None:
            self._count(
                noc,
                cycle,
                (MST_NONPOSTED_WR_REQ_SENT if marked else MST_POSTED_WR_REQ_SENT, 1),
                (MST_NONPOSTED_WR_DATA_WORD_SENT if marked else MST_POSTED_WR_DATA_WORD_SENT, flits),
                (MST_WRITE_REQS_OUTGOING_ID + txn, -1),
            )

        return left

    def _write_arrived(
        self,
        noc: int,
        target: Endpoint,
        dst: int,
        data: bytes,
        mask: int | None,
        marked: bool,
        loop: bool,
        remote_ack: int | None = None,
        txn: int = 0,
    ) -> RemoteAction:
        """The write landing at ``target``; with ``remote_ack`` (the hops back), another tile sends its
        acknowledgement back over the links."""

        def arrived(niu: Noc, cycle: int) -> None:
            if remote_ack is not None:
                niu._send_ack(noc, self, cycle, remote_ack, txn)
            if mask is None:
                niu._write(target, dst, data, cycle)
            else:
                old = bytearray(niu._read(target, dst, len(data), cycle))
                for i in range(len(data)):
                    if mask >> i & 1:
                        old[i] = data[i]
                niu._write(target, dst, bytes(old), cycle)
            if loop:
                flits = self.flits(len(data))
                niu._count(
                    noc,
                    cycle,
                    (SLV_NONPOSTED_WR_REQ_STARTED if marked else SLV_POSTED_WR_REQ_STARTED, 1),
                    (
                        SLV_NONPOSTED_WR_DATA_WORD_RECEIVED if marked else SLV_POSTED_WR_DATA_WORD_RECEIVED,
                        flits,
                    ),
                    (SLV_NONPOSTED_WR_REQ_RECEIVED if marked else SLV_POSTED_WR_REQ_RECEIVED, 1),
                    *([(SLV_WR_ACK_SENT, 1)] if marked else []),
                )

        return arrived

    def _dram_written(
        self, noc: int, txn: int, arrived: RemoteAction, marked: bool, back: int
    ) -> Callable[[int], None]:
        """A chip's write reaching DRAM (once its bank's controller has taken it): the bytes land, and
        the acknowledgement comes back ``back`` hops later."""

        def written(cycle: int) -> None:
            arrived(self, cycle)
            if marked:
                self.schedule(cycle + self._latency(back), self._acked(noc, txn))

        return written

    def _send_ack(self, noc: int, requester: Noc, cycle: int, hops: int, txn: int) -> None:
        """This (far) NIU acknowledges ``requester``'s write at ``cycle``: a one-flit packet back."""
        acked = requester._acked(noc, txn)
        self._send(noc, requester.position, cycle + self._latency(hops), lambda _, at: acked(at), cycle, 1)

    def _acked(self, noc: int, txn: int) -> Callable[[int], None]:
        def acked(cycle: int) -> None:
            self._count(noc, cycle, (MST_WR_ACK_RECEIVED, 1), (MST_REQS_OUTSTANDING_ID + txn, -1))

        return acked

    def _plan_inline(self, noc: int, f: list[int], cycle: int, marked: bool, txn: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        if ctrl & CMD_BRCST_PACKET:
            targets = self._broadcast_targets(noc, f[TARG_HI], ctrl, "inline write")
        else:
            targets = [self.endpoint(noc, f[TARG_HI], "inline write destination (NOC_TARG_ADDR_HI)")]
        address = f[TARG_LO] | f[TARG_MID] << 32
        if any(t.kind == "dram" for t in targets):
            raise InvalidProgram(
                "inline write to a DRAM tile (NOC_CMD_WR_INLINE needs a Tensix or Ethernet tile)",
                value=address,
            )
        device = next((t for t in targets if t.kind == "device"), None)  # (a broadcast reaches Tensix tiles)
        to_l1 = self._device(device).in_l1(address, 4) if device else address < self.tile.arch.l1_size
        if to_l1 and not self.facts.inline_l1_writes:
            raise UndefinedBehavior(
                "inline write to L1 (unsafe on Blackhole: a hardware bug; tt-metal writes from L1 instead)",
                value=address,
            )
        if not to_l1 and (address & 3 or f[TARG_MID]):
            raise UndefinedBehavior("inline write to an unaligned or 64-bit MMIO address", value=address)
        value = f[AT_DATA]
        enables = f[AT_LEN_BE]
        own = self.coordinates(noc)
        line = (address & ~0xF, (address & ~0xF) + 16)  # (the L1 line an inline write changes)
        if device is not None and not to_l1:
            self._check(device, address, 4, "inline write destination", True, value.to_bytes(4, "little"))

        def arrived_at(back: int | None, target: Endpoint) -> RemoteAction:
            def arrived(niu: Noc, at: int) -> None:
                if target.kind == "device":  # its NIU (and counters) are not modelled
                    if to_l1:
                        niu._inline_l1(address, value, enables, at, target)
                    else:
                        niu._write(target, address, value.to_bytes(4, "little"), at)
                    return
                if to_l1:
                    niu._inline_l1(address, value, enables, at)
                else:
                    niu.tile.register_access(address, at, value)
                if niu is not self:  # wake the remote tile's cores polling that register
                    if not to_l1:
                        niu.tile.register_written(address & ~3, at)
                    if back is not None:
                        niu._send_ack(noc, self, at, back, txn)
                niu._count(
                    noc,
                    at,
                    (SLV_NONPOSTED_WR_REQ_STARTED if marked else SLV_POSTED_WR_REQ_STARTED, 1),
                    (SLV_NONPOSTED_WR_REQ_RECEIVED if marked else SLV_POSTED_WR_REQ_RECEIVED, 1),
                    (SLV_NONPOSTED_WR_DATA_WORD_RECEIVED if marked else SLV_POSTED_WR_DATA_WORD_RECEIVED, 1),
                    *([(SLV_WR_ACK_SENT, 1)] if marked else []),
                )

            return arrived

        def run() -> None:
            for target in targets if to_l1 else ():
                self._will_write(target, address & ~0xF, 16)
            changes = [
                (MST_CMD_ACCEPTED, 1),
                (MST_NONPOSTED_WR_REQ_STARTED if marked else MST_POSTED_WR_REQ_STARTED, 1),
                (MST_NONPOSTED_WR_REQ_SENT if marked else MST_POSTED_WR_REQ_SENT, 1),
            ]
            if marked:  # each receiver acknowledges (as for a multicast write from L1)
                changes.append((MST_REQS_OUTSTANDING_ID + txn, len(targets)))
            self._count(noc, cycle, *changes)
            sent = max(cycle, self.tx_free[noc]) + 1
            self.tx_free[noc] = sent
            group = (self.position, noc, sent) if len(targets) > 1 else None
            for target in targets:
                arrive = sent + self._latency(target.hops)
                remote = target.kind == "remote"
                far = target.kind in ("remote", "device")
                back = self.hops(noc, self.coordinates(noc, target.xy), own) if far else 0
                action = arrived_at(back if marked and remote else None, target)
                self._at(target, arrive, action, noc, sent, 1, group, line if to_l1 else None)
                if marked and not remote:
                    self.schedule(arrive + self._latency(back), self._acked(noc, txn))

        return run

    def _inline_l1(
        self, address: int, value: int, enables: int, cycle: int, target: Endpoint = THIS_TILE
    ) -> None:
        """An inline write reaching this tile's L1, or ``target``'s (WormholeB0 MemoryMap.md,
        NOC_AT_LEN_BE): byte ``i`` of the 16-byte line takes byte ``i & 3`` of ``value`` where bit ``i`` or
        bit ``16 + i`` of ``enables`` is set."""
        line = address & ~0xF
        data = bytearray(self._read(target, line, 16, cycle))
        for i in range(16):
            if (enables >> i | enables >> 16 + i) & 1:
                data[i] = value >> 8 * (i & 3) & 0xFF
        self._write(target, line, bytes(data), cycle)

    def _plan_atomic(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        marked = bool(ctrl & CMD_RESP_MARKED)
        txn = self._txn(f)
        if ctrl & CMD_BRCST_PACKET:
            if marked and self.fabric is not None:
                raise Unimplemented(
                    "broadcast atomic with NOC_CMD_RESP_MARKED (the pages do not say which receiver's "
                    "response lands at NOC_RET_ADDR): posted broadcast atomics are modelled",
                    value=ctrl,
                )
            targets = self._broadcast_targets(noc, f[TARG_HI], ctrl, "atomic")
            target = targets[0] if targets else Endpoint("tile")
        else:
            target = self.endpoint(noc, f[TARG_HI], "atomic target (NOC_TARG_ADDR_HI)")
            targets = [target]
        if target.kind == "dram":
            raise InvalidProgram("atomic on a DRAM tile (atomics act on Tensix or Ethernet L1 only)")
        device = self._device(target) if target.kind == "device" else None
        if device is not None and device.l1 is None:
            raise InvalidProgram(f"atomic on {device.where} (atomics act on Tensix or Ethernet L1 only)")
        address = f[TARG_LO]
        if f[TARG_MID]:
            raise InvalidProgram("atomic target above 4 GiB", value=f[TARG_MID])
        if device is None:
            self._l1_span(address & ~0xF, 16, "atomic target")
        elif not device.in_l1(address & ~0xF, 16):
            raise Unimplemented(
                f"atomic target 0x{address:x} outside the L1 of {device.where}", value=address
            )
        at = f[AT_LEN_BE]
        opcode = at >> 12 & 0xF
        if opcode not in self.facts.atomic_opcodes:
            names = dict.fromkeys(ATOMIC_NAMES[o] for o in self.facts.atomic_opcodes)
            what = ATOMIC_NAMES.get(opcode, "no documented atomic")
            raise Unimplemented(
                f"NoC atomic opcode 0x{opcode:x} ({what}; {', '.join(names)} modelled)", value=at
            )
        _check_atomic_operand(at)
        if marked:
            self._own(noc, f[RET_HI], "atomic response (NOC_RET_ADDR_HI)")
            self._l1_span(f[RET_LO], 4, "atomic response")
        ret = f[RET_LO]
        data = f[AT_DATA]
        line = (address & ~0xF, (address & ~0xF) + 16)  # (what the read-modify-write changes)
        back = self._return_hops(noc, f[TARG_HI]) if target.kind in ("remote", "device") else 0
        # What the receiving NIU acts on: its own tile's L1, or the ARC / Ethernet endpoint's.
        acted_on = target if device is not None else THIS_TILE

        def run() -> None:
            for receiver in targets:
                self._will_write(receiver, address & ~0xF, 16)
            if marked:
                self._will_write(THIS_TILE, ret, 4)
            changes = [
                (MST_CMD_ACCEPTED, 1),
                (MST_NONPOSTED_ATOMIC_SENT if marked else MST_POSTED_ATOMIC_SENT, 1),
            ]
            if marked:
                changes += [(MST_REQS_OUTSTANDING_ID + txn, 1), (MST_NONPOSTED_ATOMIC_STARTED, 1)]
            self._count(noc, cycle, *changes)
            sent = max(cycle, self.tx_free[noc]) + 1
            self.tx_free[noc] = sent
            # A read-modify-write of the target's L1 (L1.md: the operation of a narrow write).
            arrive = sent + self._latency(target.hops) + NOC.l1_write
            result: list[int] = []

            def arrived(niu: Noc, when: int) -> None:
                result.append(niu._atomic(address, at, data, when, acted_on))
                value = result[-1]
                if device is not None:
                    return  # (the endpoint's NIU counters are not modelled)
                niu._count(
                    noc,
                    when,
                    (SLV_REQ_ACCEPTED, 1),
                    (SLV_NONPOSTED_ATOMIC_RECEIVED if marked else SLV_POSTED_ATOMIC_RECEIVED, 1),
                    *([(SLV_ATOMIC_RESP_SENT, 1)] if marked else []),
                )
                if marked and niu is not self:  # the response carries the value back
                    niu._send(
                        noc,
                        self.position,
                        when + self._latency(back),
                        lambda _, c: self.schedule(
                            c + NOC.l1_write,
                            lambda w: responded(w, value),
                            l1=(ret, ret + 4) if self.orders_remote_writes else False,
                        ),
                        when,
                        1,
                    )

            def responded(when: int, value: int) -> None:
                self.tile.l1_store(ret, value.to_bytes(4, "little"), when, by=("noc",))
                self._count(noc, when, (MST_ATOMIC_RESP_RECEIVED, 1), (MST_REQS_OUTSTANDING_ID + txn, -1))

            if len(targets) > 1 or not marked:  # posted (a broadcast is): each receiver acts on its own
                group = (self.position, noc, sent) if len(targets) > 1 else None
                for receiver in targets:
                    reach = sent + self._latency(receiver.hops) + NOC.l1_write
                    self._at(receiver, reach, arrived, noc, sent, 1, group, line)
                return
            self._at(target, arrive, arrived, noc, sent, 1, span=line)
            if target.kind != "remote":
                # The response is written into this L1 before it is counted (Counters.md).
                self.schedule(
                    arrive + self._latency(back) + NOC.l1_write,
                    lambda when: responded(when, result[0]),
                    l1=(ret, ret + 4),
                )

        return run

    def _atomic(self, address: int, at: int, data: int, cycle: int, target: Endpoint = THIS_TILE) -> int:
        """Atomics.md's functional models (increment, the swaps, compare and swap, the Zaamo
        operations) on this tile's L1 (or ``target``'s); returns ``Result``."""
        result = int.from_bytes(self._read(target, address, 4, cycle), "little")
        line = address & ~0xF
        opcode = at >> 12 & 0xF
        if opcode == AT_SWAP_MASK:  # halfword i of the line takes NOC_AT_DATA's half i & 1
            halves = list(np.frombuffer(self._read(target, line, 16, cycle), np.uint16))
            for i in range(8):
                if at >> 2 + i & 1:
                    halves[i] = data >> 16 * (i & 1) & 0xFFFF
            self._write(target, line, np.array(halves, np.uint16).tobytes(), cycle)
            return result
        ofs = at >> 2 & 3 if opcode == AT_SWAP_INDEX_HIGH else at & 3
        where = line + ofs * 4
        old = int.from_bytes(self._read(target, where, 4, cycle), "little")
        if opcode == AT_INCREMENT:
            mask = (2 << (at >> 2 & 0x1F)) - 1
            new = ((old + data) & mask) | (old & ~mask)
        elif opcode == AT_CAS:  # 4-bit CmpVal (bits 2..5) and SetVal (bits 6..9)
            new = at >> 6 & 0xF if old == at >> 2 & 0xF else old
        elif opcode == AT_ZAAMO and at >> 11 & 1:
            new = _zaamo(at >> 8 & 7, old, data)
        else:  # the swaps by index
            new = data
        self._write(target, where, (new & 0xFFFFFFFF).to_bytes(4, "little"), cycle)
        return result

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


def _span(start: int, end: int, size: int) -> list[int]:
    """A broadcast span's coordinates, wrapping round when ``start`` lies past ``end`` (MemoryMap.md)."""
    if start <= end:
        return list(range(start, end + 1))
    return [*range(end + 1), *range(start, size)]


def _check_atomic_operand(at: int) -> None:
    """NOC_AT_LEN_BE as Atomics.md draws it for its opcode: fixed bits must hold their value (0xA:
    bit 11, a Zaamo operation, or bits 8..11 = 3, a swap by index; 0x6: bit 2); any other form is
    undefined."""
    opcode = at >> 12 & 0xF
    if opcode == AT_SWAP_INDEX and not at >> 2 & 1:
        raise UndefinedBehavior("atomic opcode 0x6 (swap by index) without bit 2 set", value=at)
    if opcode == AT_ZAAMO and not at >> 11 & 1 and at >> 8 & 0xF != 3:
        raise UndefinedBehavior(
            "atomic opcode 0xA with neither bit 11 (Zaamo) nor bits 8..11 = 3 (swap by index)", value=at
        )


def _zaamo(op: int, old: int, data: int) -> int:
    def signed(v: int) -> int:
        return v - (1 << 32) if v >> 31 else v

    return [
        old + data,
        old ^ data,
        old | data,
        old & data,
        old if signed(old) < signed(data) else data,
        old if signed(old) > signed(data) else data,
        old if old < data else data,
        old if old > data else data,
    ][op] & 0xFFFFFFFF
