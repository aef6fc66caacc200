"""A chip: the NoC grid of one architecture, its Tensix tiles, DRAM, and one clock across them.

``Chip("blackhole")`` knows every endpoint of the grid from the architecture facts (NocFacts:
Tensix tiles, DRAM tiles, the other kinds). A Tensix tile is built the first time anything touches
it (:meth:`Chip.tile`, or a NoC request reaching it); untouched tiles cost nothing. All tiles share
one :class:`~tensixsim.dram.Dram`. The ARC and Ethernet tiles of a Blackhole chip are passive
endpoints (:meth:`Chip.endpoint`, :mod:`tensixsim.endpoints`), built on first use like Tensix tiles;
requests reach them as they reach DRAM (no core of theirs runs). A tile of a chip is a
:class:`~tensixsim.tile.Tile` placed at its coordinates whose NIUs reach the other tiles through the
chip's :class:`Fabric`.

Time. Tiles interact only through the NoC, and nothing one tile does reaches another sooner than
:meth:`Chip.reach` cycles later (one router hop between neighbouring NIUs, ``NOC.lookahead``, more
for tiles further apart). The chip runs the tiles one after another in conservative windows: each
tile may run up to the earliest cycle at which anything another tile can still do could reach it,
that is the least, over the other tiles, of the cycle at which it can act plus its reach. What a
tile sends is kept and handed to its target, in cycle order, before the next window; it is due no
earlier than where the target stopped. Inside a window a tile is scheduled as a single tile is
(slices, synchronisation points, parked poll loops), and every synchronisation point stays below the
window's end, so a tile reads NoC counters and issues requests only at cycles whose incoming traffic
it already has. When a tile sends, its own window shrinks to the arrival cycle plus the target's
reach back (the target may answer no sooner). Packets between tiles share the links of their routes
(:class:`Fabric`), granted by the routers in an order that does not depend on the windows. Results
and cycles are the same for these windows as for any uniform window up to the lookahead
(``Chip(window=...)``), and for every quantum long enough for a tile's poll loops to be parked (as
for a single tile; tests/test_chip.py); tt-metal firmware's L1 waits are the exception
docs/deviations.md measures.

ChipTile reuses the single-tile scheduler's parts (slices, parking, the coprocessor's advance) and
replaces its loop by :meth:`ChipTile.run_window`.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from tensixsim.arch import get_arch
from tensixsim.dram import Dram
from tensixsim.endpoints import MODELS, MappedEndpoint
from tensixsim.errors import CoreWhere, CycleLimitExceeded, Deadlock, Unimplemented
from tensixsim.noc import REMOTE_ORDER, Noc, Packet, RemoteAction
from tensixsim.noc.routers import Routers
from tensixsim.results import DramBankUse, RunResult, dram_lines
from tensixsim.riscv.core import Core, CoreState
from tensixsim.tensix.frontend.pipes import NEVER, Engine
from tensixsim.tile import Tile
from tensixsim.timing import DEFAULT_QUANTUM, NOC

XY = tuple[int, int]
Span = tuple[int, int] | None  # (start, end) of L1 bytes
SENDER_STRIDE = 1 << 40  # room for each sender's own count of transfers


class ChipTile(Tile):
    """A Tensix tile of a chip: runs in windows the chip gives it (:meth:`run_window`)."""

    window_end: int = NEVER  # no synchronisation point at or past this cycle in the present window

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Per core index: the cycle of the synchronised access the window's end stopped it at. Its next
        # instruction is that access, so it cannot act before that cycle: the other cores and the chip
        # count it there (else a core stopped a few cycles short of its access would hold them back).
        self.refused: dict[int, int] = {}

    def _acts_at(self, core: Core) -> int:
        return max(core.time, self.refused.get(core.index, 0))

    def may_sync(self, core: Core, cycle: int) -> bool:
        if cycle >= self.window_end:
            self.refused[core.index] = cycle
            return False
        key = (cycle, core.index)
        return all(
            (self._acts_at(other), other.index) > key
            for other in self.cores
            if other is not core and other.state is CoreState.RUNNING
        )

    def sync_limit(self, core: Core) -> int:
        limit = self.window_end - 1
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                at = self._acts_at(other)
                limit = min(limit, at if core.index < other.index else at - 1)
        return limit

    def l1_sync_limit(self, core: Core) -> int:
        # Only the tile's own cores: what other tiles write arrives through the NoC, whose counters
        # (synchronised registers) a program reads before the data, within the window.
        limit = NEVER
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                at = self._acts_at(other)
                limit = min(limit, at if core.index < other.index else at - 1)
        return limit

    def noc_sync_limit(self, core: Core) -> int:
        # Other tiles' traffic arrives from the window's end on (Chip.reach); it is waited for only
        # where the NIU orders it (Noc.orders_remote_writes). Responses to this tile's DRAM reads come
        # through the fabric too (their bank's controller), no sooner than the window's end: while
        # one is on its way, the pages it writes are ordered as on a lone tile.
        limit = super().noc_sync_limit(core)
        ordered = self.noc.orders_remote_writes or self.noc.inbound
        return min(limit, self.window_end - 1) if ordered else limit

    def next_activity(self) -> int:
        """The earliest cycle at which this tile can act (NEVER: only a NoC arrival can wake it)."""
        times = [self._acts_at(c) for c in self.cores if c.state is CoreState.RUNNING]
        due = self.noc.next_event()
        if due is not None:
            times.append(due)
        if isinstance(self.backend, Engine) and not self.backend.idle and self.backend.can_progress():
            times.append(self.backend.cycle)  # the coprocessor may wake a core
        return min(times, default=NEVER)

    def run(self, *args, **kwargs) -> RunResult:
        """Refused: the other tiles would not run (and NoC traffic to them would be lost)."""
        raise ValueError("a tile of a chip runs with its chip: Chip.run()")

    def start(self, release: tuple[str, ...], host: int = 0) -> None:
        """What :meth:`Tile.run` does before scheduling: the host may have written code or polled memory.

        ``host``: the cycle the host's writes are seen at, the cycle the chip's previous run ended.
        A parked core resumes there (not at its own cycle, which depends on where the windows cut its
        poll loop), so what follows does not depend on the windows either."""
        self.refused.clear()
        for core in self.cores:
            core.flush_all_code()
            if core.state is CoreState.WAITING and (core.watch or core.watch_registers):
                self._wake(core, max(host, core.time), by=("host",))
        if release:
            self.release(*release, cycle=self.cycle)

    def run_window(self, until: int, max_cycles: int) -> None:
        """Run until nothing can happen here before ``until`` (lowered when this tile sends).

        The single-tile scheduler's loop with that bound: cores in (cycle, index) order for at most a
        quantum each, NoC arrivals delivered before the earliest core acts, the coprocessor brought up
        to the earliest running core. Deadlocks are the chip's to find (another tile may yet write).
        """
        self.window_end = min(until, max_cycles)
        while True:
            running = [c for c in self.cores if c.state is CoreState.RUNNING]
            if running and self.noc.pending:
                self.noc.deliver(min(min(c.time for c in running), self.window_end - 1))
                running = [c for c in self.cores if c.state is CoreState.RUNNING]
            if not running:
                # The coprocessor runs on to the next NoC arrival (which may wake a core that pushes).
                due = self.noc.next_event()
                woke = self.wakes
                if not self.backend.idle:
                    self.backend.advance_to(self.window_end if due is None else min(due, self.window_end))
                if self.wakes != woke:
                    continue
                if due is not None and due < self.window_end:
                    self.noc.deliver(due)
                    continue
                return
            core = min(running, key=lambda c: (self._acts_at(c), c.index))
            if self._acts_at(core) >= self.window_end:
                # The coprocessor still runs up to the window's end (no core can push before it); it
                # may wake a core that acts inside the window.
                woke = self.wakes
                if not self.backend.idle:
                    self.backend.advance_to(min(self.window_end, self._acts_at(core)))
                if self.wakes != woke:
                    continue
                return
            self.refused.pop(core.index, None)
            core.run_slice(min(self.quantum, max_cycles - core.time))
            self._after_slice(core)

    def stuck(self) -> bool:
        """Cores wait (or pipes are blocked) with nothing left here to wake them."""
        waiting = any(c.state is CoreState.WAITING for c in self.cores)
        return waiting or bool(self.backend.blocked_pipes())


@dataclass
class Fabric:
    """The NoC between the tiles: where coordinates lead, and the traffic between tiles in flight.

    Links. Every packet between tiles crosses the links of its dimension-order route (noc.route), and
    a link carries one flit a cycle in each direction. Each router gives a link to the packets asking
    for it port by port in turn (:mod:`tensixsim.noc.routers`); a packet late at any link is late by
    what it waited in all. Grants are decided in cycle order up to the earliest cycle a tile could
    still inject a packet at, so they do not depend on the windows; a packet not through yet holds
    back every tile until it can have arrived (:meth:`due`).
    """

    chip: Chip
    routers: Routers = field(init=False)
    # (arrival cycle, order, target, action, span): handed to the targets between windows. The order
    # (sender's index in the grid, then its own count) depends only on what each sender did, never on
    # the windows. ``span``: the target's L1 bytes the action writes, where the sender says.
    in_flight: list[tuple[int, int, XY, RemoteAction, Span]] = field(default_factory=list)
    _sent: dict[XY, itertools.count] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.routers = Routers(self.chip.facts)

    @property
    def waiting(self) -> int:
        """Packets sent whose links are not all granted yet."""
        return len(self.routers)

    def endpoint_kind(self, xy: XY) -> str | None:
        return self.chip.kind_at(xy)

    def device(self, xy: XY) -> MappedEndpoint | None:
        return self.chip.endpoint(*xy) if self.chip.has_model(xy) else None

    def send(
        self, source: Noc, target: XY, cycle: int, action: RemoteAction, packet: Packet, span: Span = None
    ) -> None:
        floor = self.chip.floor + NOC.lookahead
        if cycle < floor:  # the windows would be wrong: a bug in the timing of the request
            raise AssertionError(f"NoC traffic due at {cycle}, before the lookahead bound {floor}")
        count = self._sent.setdefault(source.position, itertools.count())
        order = REMOTE_ORDER + self.chip.index(source.position) * SENDER_STRIDE + next(count)
        self._arrived(self.routers.add(packet, (cycle, order, target, action, span), order, cycle))
        tile = source.tile
        # The target may answer then (or a tile it passes something on to, no sooner).
        tile.window_end = min(tile.window_end, cycle + self.chip.reach(target, source.position))

    def due(self) -> int:
        """The earliest cycle a packet not through all its links yet can act at its target (NEVER:
        none); the chip runs no tile past it, as it runs none past what another tile may do."""
        return self.routers.due()

    def resolve(self, bound: int) -> None:
        """Decide every grant before ``bound`` (no packet can be sent any more that asks for a link
        before it)."""
        self._arrived(self.routers.advance(bound))

    def _arrived(self, done: list[tuple[tuple[int, int, XY, RemoteAction, Span], int]]) -> None:
        for (cycle, order, target, action, span), late in done:
            heapq.heappush(self.in_flight, (cycle + late, order, target, action, span))

    def hand_over(self, first: int = NEVER) -> set[XY]:
        """Decide the grants no packet still to be sent can precede (``first``: the earliest cycle any
        tile can act at by itself), and give every transfer in flight to its target tile (built now
        if never touched); returns the targets."""
        # A tile waiting for nothing of its own can still act when a transfer reaches it, and send
        # no sooner: the earliest arrival bounds the packets to come as a tile's next act does.
        first = min(first, self.routers.due(), self.in_flight[0][0] if self.in_flight else NEVER)
        self.resolve(first + NOC.niu_to_router if first < NEVER else NEVER)
        targets = set()
        while self.in_flight:
            cycle, order, target, action, span = heapq.heappop(self.in_flight)
            niu = self.chip.tile(*target).noc
            l1 = span if span is not None else niu.orders_remote_writes
            niu.schedule(cycle, lambda at, a=action, n=niu: a(n, at), order, l1=l1)
            targets.add(target)
        return targets


@dataclass(frozen=True)
class ChipResult:
    """A chip run: the last cycle any tile reached, and each touched tile's result."""

    cycles: int
    tiles: dict[XY, RunResult]
    windows: int  # tile windows run (scheduling work, not emulated time)
    # Tiles left waiting for the host (``Chip.run(quiet=True)``): what each waiting core waits for.
    waiting: dict[XY, str] = field(default_factory=dict)
    # The DRAM controllers the tiles' requests used, since the chip was made (RunResult.dram's numbers).
    dram: dict[int, DramBankUse] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [f"tile {xy}: {r.cycles} cycles" for xy, r in sorted(self.tiles.items())]
        return "\n".join([*lines, f"total: {self.cycles} cycles", *dram_lines(self.dram, self.cycles)])


class Chip:
    """The Tensix, DRAM, ARC and Ethernet tiles of one chip. ``Chip("blackhole")``; ``chip.tile(x, y)``,
    ``chip.endpoint(x, y)``."""

    def __init__(
        self,
        arch: str = "blackhole",
        *,
        quantum: int = DEFAULT_QUANTUM,
        engine: str | None = None,
        window: int | None = None,
        harvested: Iterable[int] = (),
        l1_order: bool | str = "pages",
    ) -> None:
        """``quantum``: each tile's slice length (Tile). ``engine``: the coprocessor engine of every
        tile. ``l1_order``: every tile's (Tile; the full ordering also keeps a tile's cores from
        passing the window's end on L1, so that other tiles' writes are seen at their cycles).
        ``window``: the longest a tile runs ahead of the earliest other active tile, at most
        ``NOC.lookahead``; smaller values change nothing but the host time. By default (None) each
        tile's bound comes from every other active tile's distance (:meth:`reach`), at least the
        lookahead. ``harvested``: NoC #0 columns (x) of Tensix tiles fused off, as on a board whose
        chip has fewer working columns (a p100a: two of the fourteen): those tiles cannot be built,
        requests to them raise :class:`~tensixsim.noc.HarvestedTile`, and broadcasts skip them."""
        self.arch = get_arch(arch)
        facts = self.arch.noc
        if facts is None or not facts.tensix_tiles:
            raise ValueError(f"no NoC grid is described for {arch}")
        if facts.registers is None:
            raise Unimplemented(f"{self.arch.name}: a chip needs NoC traffic between tiles, not modelled yet")
        if window is not None and not 1 <= window <= NOC.lookahead:
            raise ValueError(f"window must be 1..{NOC.lookahead} cycles (the NoC's lookahead), not {window}")
        columns = {x for x, _ in facts.tensix_tiles}
        harvested = frozenset(harvested)
        if not harvested <= columns:
            wrong = ", ".join(map(str, sorted(harvested - columns)))
            raise ValueError(f"harvested columns must be Tensix columns {sorted(columns)}, not {wrong}")
        self.harvested = harvested
        self.facts = facts
        self.quantum = quantum
        self.engine = engine
        self.l1_order = l1_order
        self.distance_aware = window is None
        self.window = NOC.lookahead if window is None else window
        self.dram = Dram.new(self.arch)
        self.fabric = Fabric(self)
        self.tiles: dict[XY, ChipTile] = {}
        self.floor = 0  # the earliest cycle any tile could act at, as of the present window
        self._reach: dict[tuple[XY, XY], int] = {}
        self._tensix = {xy for xy in facts.tensix_tiles if xy[0] not in harvested}
        self._models = MODELS.get(self.arch.name, {})
        self.endpoints: dict[XY, MappedEndpoint] = {}  # the ARC / Ethernet endpoints built so far

    # ------------------------------------------------------------------ the grid
    def reach(self, source: XY, target: XY) -> int:
        """The fewest cycles from ``source`` acting to ``target`` seeing any effect of it (with an
        explicit window: that window). A packet takes ``niu_to_router + hops * router_hop +
        router_to_niu``; each NoC goes one way round each ring of the torus, so no route, nor any chain
        of packets through other tiles (each adding its own NIU cycles), is shorter than the torus
        distance taking the shorter way round in X and in Y."""
        if not self.distance_aware:
            return self.window
        reach = self._reach.get((source, target))
        if reach is None:
            reach = self._reach[source, target] = self._distance_reach(source, target)
        return reach

    def _distance_reach(self, source: XY, target: XY) -> int:
        dx, dy = (target[0] - source[0]) % self.facts.width, (target[1] - source[1]) % self.facts.height
        hops = min(dx, self.facts.width - dx) + min(dy, self.facts.height - dy)
        return NOC.niu_to_router + max(1, hops) * NOC.router_hop + NOC.router_to_niu

    def index(self, xy: XY) -> int:
        """A tile's place in row order of the grid (a fixed number per coordinate)."""
        return xy[1] * self.facts.width + xy[0]

    @property
    def tensix_tiles(self) -> tuple[XY, ...]:
        """NoC #0 coordinates of every working (not harvested) Tensix tile, built or not."""
        return tuple(xy for xy in self.facts.tensix_tiles if xy in self._tensix)

    def kind_at(self, xy: XY) -> str | None:
        """ "tensix", "harvested" (a fused-off Tensix tile), "dram", another endpoint kind, or None (a
        router alone, or outside the grid)."""
        if xy in self._tensix:
            return "tensix"
        if xy[0] in self.harvested and xy in self.facts.tensix_tiles:
            return "harvested"
        if xy in self.facts.dram_tiles:
            return "dram"
        kind = self.facts.other_tiles.get(xy)
        return None if kind in (None, "router") else kind

    def has_model(self, xy: XY) -> bool:
        """Whether the tile at ``xy`` is an endpoint other than Tensix and DRAM that is modelled."""
        return self.kind_at(xy) in self._models

    def endpoint(self, x: int, y: int) -> MappedEndpoint:
        """The ARC or Ethernet endpoint at NoC #0 (x, y), built on first use (Blackhole)."""
        endpoint = self.endpoints.get((x, y))
        if endpoint is not None:
            return endpoint
        kind = self.kind_at((x, y))
        if kind not in self._models:
            modelled = " and ".join(sorted(self._models)) or "no"
            raise ValueError(
                f"({x}, {y}) is {kind or 'no endpoint'}: {modelled} tiles of the {self.arch.name} grid are "
                "modelled as endpoints (Tensix tiles: Chip.tile)"
            )
        endpoint = self.endpoints[(x, y)] = self._models[kind](self.arch, (x, y), self.harvested)
        return endpoint

    def tile(self, x: int, y: int) -> Tile:
        """The Tensix tile at NoC #0 (x, y), built on first use."""
        tile = self.tiles.get((x, y))
        if tile is not None:
            return tile
        kind = self.kind_at((x, y))
        if kind != "tensix":
            what = {"harvested": "a harvested Tensix tile", None: "no endpoint"}.get(kind, f"a {kind} tile")
            raise ValueError(f"({x}, {y}) is {what}, not a Tensix tile of the {self.arch.name} grid")
        tile = ChipTile(self.arch.name, quantum=self.quantum, engine=self.engine, l1_order=self.l1_order)
        tile.noc.dram = self.dram
        tile.noc.fabric = self.fabric
        tile.noc.place(x, y)
        self.tiles[(x, y)] = tile
        return tile

    # ------------------------------------------------------------------ running
    def run(
        self,
        max_cycles: int = 100_000_000,
        release: dict[XY, tuple[str, ...]] | None = None,
        *,
        quiet: bool = False,
    ) -> ChipResult:
        """Run every built tile until all their released cores finished, or raise.

        ``release``: the cores to take out of reset per tile; by default BRISC of every tile that has
        code loaded on BRISC and no core running yet (as Tile.run does for one tile). ``quiet``: cores
        left waiting once nothing can act any more (firmware waiting for the host) end the run
        instead of raising Deadlock; ``result.waiting`` says what each such tile waits for.
        """
        if release is None:
            release = {
                xy: ("brisc",)
                for xy, tile in self.tiles.items()
                if tile.core("brisc").images and all(c.state is CoreState.RESET for c in tile.cores)
            }
        host = max((c.time for tile in self.tiles.values() for c in tile.cores), default=0)
        for xy, tile in list(self.tiles.items()):
            tile.start(tuple(release.get(xy, ())), host)
        windows = self._schedule(max_cycles)
        stuck = self._stuck()
        if stuck and not quiet:
            xy, error = next(iter(stuck.items()))
            raise Deadlock(f"tile {xy}: {error.message}", cycle=error.cycle, cores=error.cores)
        results = {xy: tile.result() for xy, tile in self.tiles.items()}
        cycles = max((r.cycles for r in results.values()), default=0)
        dram = {bank: DramBankUse(*use) for bank, use in self.fabric.routers.banks.items()}
        return ChipResult(cycles, results, windows, {xy: e.message for xy, e in stuck.items()}, dram)

    def advance(self, until: int, touched: tuple[XY, ...] = ()) -> None:
        """Run every built tile up to cycle ``until``, as a host's clock does (tensixsim.endpoints.host).

        ``touched``: tiles the host wrote to since the last call (their cores may run new code or see
        what they poll change). Cores waiting with nothing to wake them are not a deadlock here: the
        host may yet write what they wait for.
        """
        host = max((c.time for tile in self.tiles.values() for c in tile.cores), default=0)
        for xy in touched:
            self.tiles[xy].start((), host)
        self._schedule(until, pause=True)

    def _schedule(self, max_cycles: int, pause: bool = False) -> int:
        """Run the tiles until nothing can act (a deadlock unless ``pause``) or ``max_cycles`` (the
        cycle limit, or with ``pause`` where the host's clock stops)."""
        windows = 0
        nexts: dict[XY, int] = {}  # each tile's next act; only a tile that ran or received changes it
        dirty = set(self.tiles)
        while True:
            for xy in dirty:
                nexts[xy] = self.tiles[xy].next_activity()
            for xy in self.fabric.hand_over(min(nexts.values(), default=NEVER)):
                nexts[xy] = self.tiles[xy].next_activity()
            dirty = set()
            active = sorted((n, xy) for xy, n in nexts.items() if n < NEVER)
            if not active:
                if self.fabric.waiting:  # packets on their way: decide further (up to the next arrival)
                    continue
                return windows
            first, owner = active[0]
            if first >= max_cycles and pause:
                return windows
            if first >= max_cycles:
                raise CycleLimitExceeded(
                    f"cycle limit {max_cycles} reached; tile {owner} would act at cycle {first}",
                    cycle=max_cycles,
                    cores=self._wheres(owner),
                )
            self.floor = first
            held_until = self.fabric.due()  # a packet on its way acts at its target no sooner
            shortest = NOC.lookahead if self.distance_aware else self.window  # the least reach
            moved = False
            for start, xy in active:
                # Anything another tile does reaches this one no sooner than its next act + its reach.
                until = held_until
                for n, other in active:  # (in cycle order: none further on can bound it lower)
                    if n + shortest >= until:
                        break
                    if other != xy:
                        until = min(until, n + self.reach(other, xy))
                if start < until:
                    tile = self.tiles[xy]
                    before = (tile.wakes, tile._side_effects)
                    tile.run_window(until, max_cycles)
                    windows += 1
                    nexts[xy] = tile.next_activity()
                    moved |= nexts[xy] != start or (tile.wakes, tile._side_effects) != before
            # Every window moves some tile on (its next act, a wake, a side effect, traffic sent); if
            # none did, the scheduler would go round for ever: say so instead.
            if not moved and not self.fabric.in_flight and not self.fabric.waiting:
                raise RuntimeError(f"chip scheduler made no progress: tiles would act at {active}")

    def _stuck(self) -> dict[XY, Deadlock]:
        """Nothing can act any more: the tiles where some core or pipe still waits."""
        stuck = {}
        for xy, tile in sorted(self.tiles.items()):
            if tile.stuck():
                waiting = [c for c in tile.cores if c.state is CoreState.WAITING]
                stuck[xy] = tile._deadlock(waiting, {})
        return stuck

    def _wheres(self, xy: XY) -> tuple[CoreWhere, ...]:
        return self.tiles[xy]._core_wheres()
