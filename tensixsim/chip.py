"""A chip: the NoC grid of one architecture, its Tensix tiles, DRAM, and one clock across them.

``Chip("blackhole")`` knows every endpoint of the grid from the architecture facts (NocFacts:
Tensix tiles, DRAM tiles, the other kinds). A Tensix tile is built the first time anything touches
it (:meth:`Chip.tile`, or a NoC request reaching it); untouched tiles cost nothing. All tiles share
one :class:`~tensixsim.dram.Dram`. A tile of a chip is a :class:`~tensixsim.tile.Tile` placed at its
coordinates whose NIUs reach the other tiles through the chip's :class:`Fabric`.

Time. Tiles interact only through the NoC, and nothing one tile does reaches another sooner than
``NOC.lookahead`` cycles later (one router hop between neighbouring NIUs). The chip runs the tiles
one after another in conservative windows: each tile may run up to the earliest cycle at which
anything another tile can still do could reach it, that is the earliest cycle at which another tile
can act, plus the lookahead. What a tile sends is kept and handed to its target, in cycle order,
before the next window; it is due no earlier than where the target stopped. Inside a window a tile
is scheduled as a single tile is (slices, synchronisation points, parked poll loops), and every
synchronisation point stays below the window's end, so a tile reads NoC counters and issues
requests only at cycles whose incoming traffic it already has. When a tile sends, its own window
shrinks to the arrival cycle plus the lookahead (the target may answer no sooner). Results and
cycles are the same for every window size up to the lookahead, and for every quantum long enough
for a tile's poll loops to be parked (as for a single tile; tests/test_chip.py).

ChipTile reuses the single-tile scheduler's parts (slices, parking, the coprocessor's advance) and
replaces its loop by :meth:`ChipTile.run_window`.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from tensixsim.arch import get_arch
from tensixsim.dram import Dram
from tensixsim.errors import CoreWhere, CycleLimitExceeded, Deadlock
from tensixsim.noc import REMOTE_ORDER, Noc, RemoteAction
from tensixsim.results import RunResult
from tensixsim.riscv.core import Core, CoreState
from tensixsim.tensix.frontend import NEVER, Engine
from tensixsim.tile import Tile
from tensixsim.timing import DEFAULT_QUANTUM, NOC

XY = tuple[int, int]
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

    def start(self, release: tuple[str, ...]) -> None:
        """What :meth:`Tile.run` does before scheduling: the host may have written code or polled memory."""
        self.refused.clear()
        for core in self.cores:
            core.flush_all_code()
            if core.state is CoreState.WAITING and (core.watch or core.watch_registers):
                self._wake(core, core.time, by=("host",))
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
    """The NoC between the tiles: where coordinates lead, and the traffic between tiles in flight."""

    chip: Chip
    # (arrival cycle, order, target, action): handed to the targets between windows. The order (sender's
    # index in the grid, then its own count) depends only on what each sender did, never on the windows.
    in_flight: list[tuple[int, int, XY, RemoteAction]] = field(default_factory=list)
    _sent: dict[XY, itertools.count] = field(default_factory=dict)

    def endpoint_kind(self, xy: XY) -> str | None:
        return self.chip.kind_at(xy)

    def send(self, source: Noc, target: XY, cycle: int, action: RemoteAction) -> None:
        floor = self.chip.floor + NOC.lookahead
        if cycle < floor:  # the windows would be wrong: a bug in the timing of the request
            raise AssertionError(f"NoC traffic due at {cycle}, before the lookahead bound {floor}")
        count = self._sent.setdefault(source.position, itertools.count())
        order = REMOTE_ORDER + self.chip.index(source.position) * SENDER_STRIDE + next(count)
        heapq.heappush(self.in_flight, (cycle, order, target, action))
        tile = source.tile
        tile.window_end = min(tile.window_end, cycle + self.chip.window)  # the target may answer then

    def hand_over(self) -> set[XY]:
        """Give every transfer in flight to its target tile (built now if never touched); returns the
        targets."""
        targets = set()
        while self.in_flight:
            cycle, order, target, action = heapq.heappop(self.in_flight)
            niu = self.chip.tile(*target).noc
            niu.schedule(cycle, lambda at, a=action, n=niu: a(n, at), order)
            targets.add(target)
        return targets


@dataclass(frozen=True)
class ChipResult:
    """A chip run: the last cycle any tile reached, and each touched tile's result."""

    cycles: int
    tiles: dict[XY, RunResult]
    windows: int  # tile windows run (scheduling work, not emulated time)

    def summary(self) -> str:
        lines = [f"tile {xy}: {r.cycles} cycles" for xy, r in sorted(self.tiles.items())]
        return "\n".join([*lines, f"total: {self.cycles} cycles"])


class Chip:
    """The Tensix and DRAM tiles of one chip. ``Chip("blackhole")``; ``chip.tile(x, y)``."""

    def __init__(
        self,
        arch: str = "blackhole",
        *,
        quantum: int = DEFAULT_QUANTUM,
        engine: str | None = None,
        window: int | None = None,
    ) -> None:
        """``quantum``: each tile's slice length (Tile). ``engine``: the coprocessor engine of every
        tile. ``window``: the longest a tile runs ahead of the earliest other active tile, at most
        ``NOC.lookahead`` (the default); smaller values change nothing but the host time."""
        self.arch = get_arch(arch)
        facts = self.arch.noc
        if facts is None or not facts.tensix_tiles:
            raise ValueError(f"no NoC grid is described for {arch}")
        window = NOC.lookahead if window is None else window
        if not 1 <= window <= NOC.lookahead:
            raise ValueError(f"window must be 1..{NOC.lookahead} cycles (the NoC's lookahead), not {window}")
        self.facts = facts
        self.quantum = quantum
        self.engine = engine
        self.window = window
        self.dram = Dram.new(self.arch)
        self.fabric = Fabric(self)
        self.tiles: dict[XY, ChipTile] = {}
        self.floor = 0  # the earliest cycle any tile could act at, as of the present window
        self._tensix = set(facts.tensix_tiles)

    # ------------------------------------------------------------------ the grid
    def index(self, xy: XY) -> int:
        """A tile's place in row order of the grid (a fixed number per coordinate)."""
        return xy[1] * self.facts.width + xy[0]

    @property
    def tensix_tiles(self) -> tuple[XY, ...]:
        """NoC #0 coordinates of every Tensix tile, built or not."""
        return self.facts.tensix_tiles

    def kind_at(self, xy: XY) -> str | None:
        """ "tensix", "dram", another endpoint kind, or None (a router alone, or outside the grid)."""
        if xy in self._tensix:
            return "tensix"
        if xy in self.facts.dram_tiles:
            return "dram"
        kind = self.facts.other_tiles.get(xy)
        return None if kind in (None, "router") else kind

    def tile(self, x: int, y: int) -> Tile:
        """The Tensix tile at NoC #0 (x, y), built on first use."""
        tile = self.tiles.get((x, y))
        if tile is not None:
            return tile
        kind = self.kind_at((x, y))
        if kind != "tensix":
            what = f"a {kind} tile" if kind else "no endpoint"
            raise ValueError(f"({x}, {y}) is {what}, not a Tensix tile of the {self.arch.name} grid")
        tile = ChipTile(self.arch.name, quantum=self.quantum, engine=self.engine)
        tile.noc.dram = self.dram
        tile.noc.fabric = self.fabric
        tile.noc.place(x, y)
        self.tiles[(x, y)] = tile
        return tile

    # ------------------------------------------------------------------ running
    def run(
        self, max_cycles: int = 100_000_000, release: dict[XY, tuple[str, ...]] | None = None
    ) -> ChipResult:
        """Run every built tile until all their released cores finished, or raise.

        ``release``: the cores to take out of reset per tile; by default BRISC of every tile that has
        code loaded on BRISC and no core running yet (as Tile.run does for one tile).
        """
        if release is None:
            release = {
                xy: ("brisc",)
                for xy, tile in self.tiles.items()
                if tile.core("brisc").images and all(c.state is CoreState.RESET for c in tile.cores)
            }
        for xy, tile in list(self.tiles.items()):
            tile.start(tuple(release.get(xy, ())))
        windows = self._schedule(max_cycles)
        results = {xy: tile.result() for xy, tile in self.tiles.items()}
        return ChipResult(max((r.cycles for r in results.values()), default=0), results, windows)

    def _schedule(self, max_cycles: int) -> int:
        windows = 0
        nexts: dict[XY, int] = {}  # each tile's next act; only a tile that ran or received changes it
        dirty = set(self.tiles)
        while True:
            dirty |= self.fabric.hand_over()
            for xy in dirty:
                nexts[xy] = self.tiles[xy].next_activity()
            dirty = set()
            active = sorted((n, xy) for xy, n in nexts.items() if n < NEVER)
            if not active:
                self._finish()
                return windows
            first, owner = active[0]
            if first >= max_cycles:
                raise CycleLimitExceeded(
                    f"cycle limit {max_cycles} reached; tile {owner} would act at cycle {first}",
                    cycle=max_cycles,
                    cores=self._wheres(owner),
                )
            second = active[1][0] if len(active) > 1 else NEVER
            self.floor = first
            moved = False
            for start, xy in active:
                # Anything another tile does reaches this one no sooner than its next act + lookahead.
                others = second if xy == owner else first
                until = others + self.window if others < NEVER else NEVER
                if start < until:
                    tile = self.tiles[xy]
                    before = (tile.wakes, tile._side_effects)
                    tile.run_window(until, max_cycles)
                    windows += 1
                    nexts[xy] = tile.next_activity()
                    moved |= nexts[xy] != start or (tile.wakes, tile._side_effects) != before
            # Every window moves some tile on (its next act, a wake, a side effect, traffic sent); if
            # none did, the scheduler would go round for ever: say so instead.
            if not moved and not self.fabric.in_flight:
                raise RuntimeError(f"chip scheduler made no progress: tiles would act at {active}")

    def _finish(self) -> None:
        """Nothing can act any more: a deadlock if some core or pipe still waits."""
        for xy, tile in sorted(self.tiles.items()):
            if tile.stuck():
                waiting = [c for c in tile.cores if c.state is CoreState.WAITING]
                error = tile._deadlock(waiting, {})
                raise Deadlock(f"tile {xy}: {error.message}", cycle=error.cycle, cores=error.cores)

    def _wheres(self, xy: XY) -> tuple[CoreWhere, ...]:
        return self.tiles[xy]._core_wheres()
