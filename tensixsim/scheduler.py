"""The tile's scheduler: which core runs next, how far, and when a run is over.

Scheduling is deterministic and loosely timed. The core with the earliest local cycle runs next (ties
go to the lower core index) for at most one quantum. Accesses to shared MMIO state are
synchronisation points: a core reaching one ahead of another running core stops, and retries when it
is the earliest again (``may_sync``), so those accesses happen in global cycle order; the coprocessor
is brought up to a core's cycle before it reads or writes coprocessor state (``sync_coprocessor``).
A run ends when every released core finished, with :class:`~tensixsim.errors.Deadlock` when no core
can make progress any more, or :class:`~tensixsim.errors.CycleLimitExceeded`.

:class:`Scheduler` is a part of :class:`~tensixsim.tile.Tile` (it works on the tile's cores, backend
and clock); poll loops are parked by :mod:`tensixsim.parking`.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tensixsim.errors import CoreWhere, CycleLimitExceeded, Deadlock, RunInterrupted, SimError
from tensixsim.riscv.core import Core, CoreState
from tensixsim.riscv.hook_state import PUSH_PORTS
from tensixsim.tensix.frontend.pipes import NEVER, Engine
from tensixsim.timing import NOC

if TYPE_CHECKING:
    from tensixsim.observe.progress import ProgressLine

# A core whose (pc, registers) at a slice boundary repeats one of its last few boundary states,
# with no side effect in between, is spinning. When every live core spins and memory did not change
# across two such observations, nothing can ever change: deadlock.
_SPIN_HISTORY = 64
# A core still recognising a short loop (Core.loop_pending) is not taken for spinning for this many
# slices: a quantum shorter than the loop's recognition cuts it into slices that repeat before the
# loop is probed (and parked, or found to do real work). A spin in a loop too long to be recognised
# counts after them.
_PENDING_SLICES = 64


class _Recent:
    """A core's last _SPIN_HISTORY boundary fingerprints, oldest first, with counts for membership
    in constant time (the scheduler looks at every quantum-long slice of every core)."""

    __slots__ = ("counts", "order")

    def __init__(self) -> None:
        self.order: deque[tuple[int, bytes]] = deque()
        self.counts: dict[tuple[int, bytes], int] = {}

    def add(self, fingerprint: tuple[int, bytes]) -> bool:
        """Remember ``fingerprint``; whether it was among the last ones already."""
        counts = self.counts
        seen = fingerprint in counts
        counts[fingerprint] = counts.get(fingerprint, 0) + 1
        self.order.append(fingerprint)
        if len(self.order) > _SPIN_HISTORY:
            oldest = self.order.popleft()
            if counts[oldest] == 1:
                del counts[oldest]
            else:
                counts[oldest] -= 1
        return seen

    def last_repeats(self) -> bool:
        """The newest fingerprint also came before it."""
        return bool(self.order) and self.counts[self.order[-1]] > 1

    def clear(self) -> None:
        self.order.clear()
        self.counts.clear()

    def keep_last(self) -> None:
        if self.order:
            last = self.order[-1]
            self.clear()
            self.add(last)


def _behind(core: Core, other: Core) -> int:
    """The latest cycle ``core`` may act at before running core ``other`` has caught up: (cycle,
    index) must stay below ``other``'s (time, index)."""
    return other.time if core.index < other.index else other.time - 1


class Scheduler:
    """The scheduler of :class:`~tensixsim.tile.Tile` (see the module's docstring)."""

    def _schedule(self, max_cycles: int, progress: ProgressLine | None = None) -> None:
        history = {c.name: _Recent() for c in self.cores}
        self._idle_at = -1  # (pushes may have been queued directly since the last run)
        pending = {c.name: 0 for c in self.cores}  # slices skipped while a loop is being recognised
        spin_marks: tuple[int, int] | None = None  # side effects, coprocessor state
        spin_digest: int | None = None  # memory digest, taken once the marks repeat
        # A core's error, held until nothing else can act before its cycle (see _hold_error).
        self._held: tuple[Core, SimError] | None = None
        while True:
            if self._interrupt:
                self._interrupt = False
                result = replace(self.result(), interrupted=True)
                raise RunInterrupted(
                    f"interrupted at cycle {result.cycles}", cycle=result.cycles, result=result
                )
            if progress is not None:
                progress.update(self)
            failed = self._held[0] if self._held is not None else None
            core = self._earliest_running(failed)
            if core is not None and self.noc is not None and self.noc.pending:
                # NoC transfers due before the earliest core acts complete first (they may wake it).
                self.noc.deliver(core.time)
                core = self._earliest_running(failed)
            if self._held is not None and self._raise_held(core):
                continue  # the coprocessor woke a core before the error: it acts first
            if core is None:
                # No core can push any more before one wakes: let the backend run on, up to the limit.
                woke = self.wakes
                self._advance_to_limit(max_cycles)
                if self.wakes != woke:
                    continue
                if self.noc is not None and self.noc.pending:
                    due = self.noc.next_event()
                    if due >= max_cycles:
                        raise CycleLimitExceeded(
                            f"cycle limit {max_cycles} reached; a NoC transfer is due at cycle {due}",
                            cycle=max_cycles,
                            cores=self._core_wheres(),
                        )
                    self.noc.deliver(due)  # the next transfer may wake a core
                    continue
                waiting = [c for c in self.cores if c.state is CoreState.WAITING]
                if waiting or self.backend.blocked_pipes():
                    raise self._deadlock(waiting, {})
                return
            if core.time >= max_cycles:
                raise CycleLimitExceeded(
                    f"cycle limit {max_cycles} reached; " + self._where(),
                    cycle=core.time,
                    cores=self._core_wheres(),
                )
            effects_before = self._side_effects
            retired_before = core.instructions
            budget = min(self.quantum, max_cycles - core.time)
            if self.debugger is None:
                core.run_slice(budget)
            else:
                self._debugged_slice(core, budget)
            if self.prints is not None:
                self.prints.poll(self, core.name, core.time)
            if core.error is not None and self._hold_error(core):
                continue
            self._after_slice(core)
            if core.state is CoreState.WAITING:
                if self.events is not None:
                    self.events.core_waits_from(core.name, core.time, core.wait_reason)
                continue
            # Spin detection: only slices that ran to the quantum without side effects count.
            if core.state is not CoreState.RUNNING or self._side_effects != effects_before:
                history[core.name].clear()
                pending[core.name] = 0
                spin_marks = spin_digest = None
                continue
            if core.instructions == retired_before:
                # Held back before its next instruction (a synchronisation point another core is
                # behind, a wait for a shared path): its state repeats without saying it spins. Two
                # cores taking turns on the cross-core path repeat so for several slices each while
                # their loops go on.
                continue
            if core.loop_pending and pending[core.name] < _PENDING_SLICES:
                pending[core.name] += 1  # counting a loop not probed yet: it may still be parked
                continue
            if not history[core.name].add(core.fingerprint()):
                continue
            live = [c for c in self.cores if c.state is CoreState.RUNNING]
            if not all(history[c.name].last_repeats() for c in live):
                continue
            if any(c.cache_outdated() for c in live):
                continue  # a periodic flush will show a core what its L0 data cache hides
            marks = (self._side_effects, self.coprocessor.version)
            # A pipe that can still issue (a busy unit, a timed wait) may yet change what they poll.
            backend_moves = isinstance(self.backend, Engine) and self.backend.can_progress()
            if spin_marks == marks and not (self.noc is not None and self.noc.pending) and not backend_moves:
                # Nothing else moved either: a deadlock if memory did not change since the last look
                # (hashing all of L1 costs milliseconds, so only once the cheap marks repeat).
                digest = self._memory_digest()
                if digest == spin_digest:
                    raise self._deadlock(live, history)
                spin_digest = digest
            else:
                spin_digest = None
            spin_marks = marks
            for c in live:
                history[c.name].keep_last()

    def _earliest_running(self, skip: Core | None = None) -> Core | None:
        """The running core with the earliest local cycle (ties: the lower index), or None; never
        ``skip`` (the core of a held error)."""
        earliest = None
        for c in self.cores:  # (in index order)
            if c.state is not CoreState.RUNNING or c is skip:
                continue
            if earliest is None or c.time < earliest.time:
                earliest = c
        return earliest

    def _hold_error(self, core: Core) -> bool:
        """A slice of ``core`` ended in an error: hold it (True) while the other cores or the
        coprocessor may still act before its cycle, so that the run reports the earliest error
        whatever the quantum (a core running ahead of the others in its slice would otherwise report
        its own error before an earlier one of the coprocessor or of a core behind it). The core stays
        where the error left it; only the earliest held error is kept. Under a debugger, or without a
        cycle to order it by, the error is raised at once (by _after_slice)."""
        error = core.error
        if self.debugger is not None or not isinstance(error, SimError) or error.cycle is None:
            return False
        core.error = None
        held = self._held
        if held is None or (error.cycle, core.index) < (held[1].cycle, held[0].index):
            self._held = (core, error)
        return True

    def _raise_held(self, core: Core | None) -> bool:
        """Raise the held error once ``core`` (the earliest other running core, or None) comes after
        it, with the coprocessor brought up to its cycle first (an earlier error of its own is raised
        instead). False while another core acts before it; True when the coprocessor woke a core
        before it, which then acts first."""
        assert self._held is not None
        failed, error = self._held
        assert error.cycle is not None
        if core is not None and (core.time, core.index) < (error.cycle, failed.index):
            return False
        woke = self.wakes
        if not self.backend.idle:
            self.backend.advance_to(error.cycle)
        if self.wakes != woke and self._earliest_running(failed) is not None:
            return True
        self._held = None
        raise error

    def _after_slice(self, core: Core) -> None:
        """What follows every slice of ``core``: code it wrote is watched, the coprocessor catches up
        with it, a loop it kept repeating is parked (or marked busy), and its error is raised."""
        self._protect_new_code(core)
        if core.error is None:
            self._advance_backend()
        if core.error is None and core.stopped_spinning and core.state is CoreState.RUNNING:
            if self.park_polls:
                self._try_park(core)
            else:
                core.mark_busy_loop()
        if core.error is not None:
            error, core.error = core.error, None
            raise error

    def _debugged_slice(self, core: Core, budget: int) -> None:
        """One slice under a debugger: a slice it cuts short (a breakpoint, a single step, a
        watchpoint) waits for the debugger, then runs on to where it would have ended, so the cores
        run in the same order and the cycles are those of a run without it."""
        end = core.time + budget
        core.run_slice(budget)
        debugger = self.debugger
        while debugger is not None and debugger.cut(core):
            if core.error is not None or core.state is not CoreState.RUNNING:
                break
            self._protect_new_code(core)
            debugger.stopped(core)
            # At least the rest of the block the cut was in (a new slice only stops at a block).
            core.run_slice(max(1, end - core.time), carry=True)
            debugger = self.debugger
        if debugger is not None:
            debugger.slice_done(core)

    def _advance_to_limit(self, max_cycles: int) -> None:
        """With no core running: everything the backend does before ``max_cycles``; CycleLimitExceeded
        if it would still go on after it (a long MOP expansion the last core left behind)."""
        backend = self.backend
        if not isinstance(backend, Engine):
            backend.advance_to(NEVER)
            return
        reached = backend.cycle
        woke = self.wakes
        backend.advance_to(max_cycles)
        if self.wakes != woke:
            return
        if backend.can_progress():
            busy = [f"pipe {p.thread} ({p.issued} issued)" for p in backend.pipes if not p.idle]
            raise CycleLimitExceeded(
                f"cycle limit {max_cycles} reached; the coprocessor still has work: " + ", ".join(busy),
                cycle=max_cycles,
                cores=self._core_wheres(),
            )
        # Nothing issues any more: finish as an unbounded run does (work SFPLOADMACRO scheduled runs
        # out), and leave the clock where that would.
        backend.cycle = reached
        backend.advance_to(NEVER)

    def _advance_backend(self) -> None:
        """Let the backend run up to the earliest running core (no core can push before it)."""
        # An idle backend stays idle until something is pushed, and every push counts as a side
        # effect: no need to ask it again before then (asking costs as much as a short slice).
        if self._side_effects == self._idle_at:
            return
        if self.backend.idle:
            self._idle_at = self._side_effects
            return
        core = self._earliest_running()
        if core is not None:
            self.backend.advance_to(core.time)

    def horizon(self, exclude: Core) -> int:
        """The earliest cycle at which a running core other than ``exclude`` can still act."""
        return min(
            (c.time for c in self.cores if c is not exclude and c.state is CoreState.RUNNING), default=NEVER
        )

    def sync_coprocessor(self, core: Core, cycle: int) -> bool:
        """Bring the NoC and the coprocessor up to ``cycle`` before ``core`` reads or writes the
        tile's state. False when that woke a core behind the access, which acts first (the access is
        retried after). The engine stops at a wake: when the woken core is no earlier than the
        access, it goes on up to the access's cycle."""
        while True:
            woke = self.wakes
            if self.noc is not None and self.noc.pending:
                self.noc.deliver(cycle)  # (the NoC acts first at its cycle)
            self.backend.advance_to(cycle)
            if not self.may_sync(core, cycle):
                return False
            if self.wakes == woke:
                return True

    def may_sync(self, core: Core, cycle: int) -> bool:
        """True when no other running core is still behind ``cycle``."""
        return cycle <= self.sync_limit(core)

    def sync_limit(self, core: Core) -> int:
        """The latest cycle at which ``core`` may synchronise (may_sync) while no other core moves."""
        limit = NEVER
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                limit = min(limit, _behind(core, other))
        return limit

    def shared_push_limits(self, core: Core) -> tuple[int, ...] | None:
        """``shared_push_limit`` for each pipe ``core``'s hooks know (riscv/native.py PUSH_PORTS), or None
        while no other running core has pushed into a pipe ``core`` can push into (the usual case)."""
        shared = 0
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                shared |= other.pushed_pipes
        if not shared & core.push_pipe_mask:
            return None
        return tuple(self.shared_push_limit(core, pipe) for pipe in range(PUSH_PORTS))

    def note_pushed(self, core: Core, pipes: int) -> None:
        """``core`` pushed into the pipes of the bit mask ``pipes``."""
        core.pushed_pipes |= pipes
        self.pipes_pushed |= pipes

    def shared_push_limit(self, core: Core, pipe: int) -> int:
        """The latest cycle ``core`` may push into ``pipe`` at: no later than any other running core
        that has pushed into it too (ties: the lower core index first), which may yet push an
        instruction dated earlier. Pushes into a shared pipe so enter its queue in cycle order, on
        both engines and at any quantum; a core that has not pushed into the pipe yet is not waited for
        (most pipes have one pusher, and waiting for every core that could push would bind each TRISC
        to BRISC's progress)."""
        bit = 1 << pipe
        limit = NEVER
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING and other.pushed_pipes & bit:
                limit = min(limit, _behind(core, other))
        return limit

    def l1_sync_limit(self, core: Core) -> int:
        """The latest cycle at which ``core`` may access L1 (l1_order): where no other core of the
        tile is behind it."""
        return self.sync_limit(core)

    def noc_sync_limit(self, core: Core) -> int:
        """The latest cycle at which ``core`` may access an L1 page the NoC writes (l1_order): before
        the NoC's next write into L1 here (it acts first at its cycle), and before the earliest cycle
        a request another running core may yet make could write into L1."""
        due = self.noc.next_l1_write() if self.noc is not None else None
        limit = NEVER if due is None else due - 1
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                limit = min(limit, self._acts_at(other) + NOC.first_landing - 1)
        return limit

    def _acts_at(self, core: Core) -> int:
        return core.time

    def note_side_effect(self, count: int = 1) -> None:
        self._side_effects += count

    def _memory_digest(self) -> int:
        digest = zlib.crc32(self.l1)
        for ram in self.local_ram.values():
            digest = zlib.crc32(ram, digest)
        return digest

    def _where(self) -> str:
        return "; ".join(f"{c.name} {c.state.value} pc=0x{c.pc:08x} cycle={c.time}" for c in self.cores)

    def _core_wheres(self, polls: dict[str, str] | None = None) -> tuple[CoreWhere, ...]:
        """Each core's name, state, pc, cycle and what it waits on (``polls``: what spinning cores read)."""
        polls = polls or {}
        return tuple(
            CoreWhere(
                c.name,
                c.state.value,
                c.pc,
                c.time,
                c.wait_reason if c.state is CoreState.WAITING else polls.get(c.name, ""),
            )
            for c in self.cores
        )

    def _deadlock(self, stuck: Sequence[Core], history: dict[str, _Recent]) -> Deadlock:
        parts = []
        polls: dict[str, str] = {}
        for core in stuck:
            if core.state is CoreState.WAITING:
                parts.append(f"{core.name} pc=0x{core.pc:08x} waits: {core.wait_reason}")
            elif core.state is not CoreState.RUNNING:
                continue
            else:
                polled = ", ".join(f"0x{a:08x}" for a in self._polled_addresses(core)) or "nothing"
                polls[core.name] = f"spins reading {polled}"
                parts.append(f"{core.name} spins at pc=0x{core.pc:08x} reading {polled}")
        for pipe in self.backend.blocked_pipes():
            source = pipe.source
            where = f" (pushed by {source.core} pc=0x{source.pc:08x})" if source else ""
            parts.append(f"pipe {pipe.thread} blocked since cycle {pipe.blocked_at} at {pipe.blocked}{where}")
        return Deadlock(
            "no core can make progress: " + "; ".join(parts), cycle=self.cycle, cores=self._core_wheres(polls)
        )

    def _polled_addresses(self, core: Core) -> list[int]:
        """Run a spinning core briefly with a read hook to learn what it polls."""
        from unicorn import unicorn_const as ucc

        seen: list[int] = []

        def on_read(uc, access, address, size, value, user_data):
            if address not in seen:
                seen.append(address)

        handle = core.uc.hook_add(ucc.UC_HOOK_MEM_READ, on_read)
        try:
            core.run_slice(64)
        finally:
            core.uc.hook_del(handle)
            core.error = None
        return [a for a in seen if not self.arch.local_ram_base <= a < self.arch.local_ram_base + 0x2000][
            :4
        ] or seen[:4]
