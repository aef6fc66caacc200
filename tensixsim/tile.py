"""A Tensix tile: five baby cores over one L1, the MMIO they reach, and the scheduler.

Scheduling is deterministic and loosely timed. The core with the earliest local cycle runs next (ties
go to the lower core index) for at most one quantum. Accesses to shared MMIO state are
synchronisation points: a core reaching one ahead of another running core stops, and retries when it
is the earliest again, so those accesses happen in global cycle order. L1 is shared without
synchronisation, as on the hardware; a core polling an L1 flag sees another core's store at the next
slice boundary (docs/deviations.md).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.control import TileControl, TileServices
from tensixsim.errors import CoreWhere, CycleLimitExceeded, Deadlock, InvalidProgram, MemoryFault, SimError
from tensixsim.mailboxes import Mailboxes
from tensixsim.memory import PAGE, Access, MmioRegion, Register, Stall
from tensixsim.noc import Noc
from tensixsim.riscv.core import Core, CoreState
from tensixsim.streams import Streams
from tensixsim.tdma import Tdma
from tensixsim.tensix.capture import InputQueue, PushedInstruction, Recorder
from tensixsim.tensix.coprocessor import Coprocessor
from tensixsim.tensix.frontend import NEVER, Engine
from tensixsim.tensix.shared_state import restore
from tensixsim.timing import DEFAULT_QUANTUM, RISCV

if TYPE_CHECKING:
    from tensixsim.gdbserver import GdbServer

# A core whose (pc, registers) at a slice boundary repeats one of its last few boundary states,
# with no side effect in between, is spinning. When every live core spins and memory did not change
# across two such observations, nothing can ever change: deadlock.
_SPIN_HISTORY = 64


class Debugger(Protocol):
    """What the scheduler asks a debugger attached to the tile (see tensixsim.gdbserver)."""

    def cut(self, core: Core) -> bool:
        """Whether ``core``'s last slice stopped early at a debugger event (a breakpoint...)."""

    def stopped(self, core: Core) -> None:
        """``core`` stopped at that event: the whole tile waits until this returns."""

    def slice_done(self, core: Core) -> None:
        """A slice ended normally (the debugger may stop the tile here: an interrupt request)."""


@dataclass(frozen=True)
class CoreStats:
    name: str
    state: str
    pc: int
    cycles: int
    instructions: int
    tensix_pushed: int
    exit_code: int | None


@dataclass(frozen=True)
class PipeStats:
    """One coprocessor pipe: instructions issued and cycles stalled, by the stalled instruction."""

    thread: int
    issued: int
    stalled: dict[str, int]


@dataclass(frozen=True)
class UnitStats:
    """One coprocessor unit: instructions retired and cycles occupied."""

    name: str
    instructions: int
    busy_cycles: int


@dataclass(frozen=True)
class RunResult:
    cycles: int
    cores: dict[str, CoreStats]
    pipes: tuple[PipeStats, ...] = ()
    units: dict[str, UnitStats] = field(default_factory=dict)

    def summary(self, clock_hz: int | None = None) -> str:
        """A readable per-core table."""
        lines = [
            f"{'core':8} {'state':9} {'pc':>10} {'cycles':>10} {'instret':>10} {'tensix':>8} {'exit':>6}"
        ]
        for stats in self.cores.values():
            exit_code = "" if stats.exit_code is None else str(stats.exit_code)
            lines.append(
                f"{stats.name:8} {stats.state:9} 0x{stats.pc:08x} {stats.cycles:>10} "
                f"{stats.instructions:>10} {stats.tensix_pushed:>8} {exit_code:>6}"
            )
        total = f"total: {self.cycles} cycles"
        if clock_hz:
            total += f" ({self.cycles / clock_hz * 1e6:.2f} us at {clock_hz / 1e9:g} GHz)"
        lines.append(total)
        if any(p.issued for p in self.pipes):
            lines += ["", f"{'pipe':8} {'issued':>10} {'stalled':>10}  stalled on"]
            for pipe in self.pipes:
                top = sorted(pipe.stalled.items(), key=lambda kv: -kv[1])[:3]
                where = ", ".join(f"{name} {cycles}" for name, cycles in top)
                lines.append(f"{pipe.thread:<8} {pipe.issued:>10} {sum(pipe.stalled.values()):>10}  {where}")
        if self.units:
            lines += ["", f"{'unit':8} {'instrs':>10} {'busy':>10} {'busy %':>7}"]
            for unit in sorted(self.units.values(), key=lambda u: -u.busy_cycles):
                share = 100 * unit.busy_cycles / self.cycles if self.cycles else 0.0
                lines.append(f"{unit.name:8} {unit.instructions:>10} {unit.busy_cycles:>10} {share:>6.1f}%")
        return "\n".join(lines)


class Tile:
    """One Tensix tile. ``Tile("blackhole")``."""

    def __init__(
        self,
        arch: str = "blackhole",
        *,
        quantum: int = DEFAULT_QUANTUM,
        backend: str = "coprocessor",
        engine: str | None = None,
        record_pushes: bool | None = None,
    ) -> None:
        """``engine``: "native" (the default, or ``$TENSIXSIM_ENGINE``) runs the coprocessor's hot path
        in C, falling back to "python", the reference engine, when no C compiler is available;
        results and cycles are the same. ``record_pushes``: keep every Tensix instruction a core
        pushes for :meth:`pushed` (about 50 bytes each, so off by default; on for the "recorder"
        backend, whose purpose it is)."""
        engine = engine or os.environ.get("TENSIXSIM_ENGINE") or "native"
        self.arch = get_arch(arch)
        self.quantum = quantum
        # Park cores spinning in poll loops until what they poll changes (results and cycles are the
        # same as running the loops; off is for checking that).
        self.park_polls = True
        self.l1 = np.zeros(self.arch.l1_size, np.uint8)
        self.local_ram = {c.name: np.zeros(c.local_ram_size, np.uint8) for c in self.arch.cores}
        self.control = TileControl.new(self.arch)
        self.queues = [InputQueue(pipe, self.arch.pipe_queue_depth) for pipe in range(self.arch.pipe_count)]
        for queue in self.queues:
            queue.record = backend == "recorder" if record_pushes is None else record_pushes
        self._side_effects = 0
        self.wakes = 0  # cores woken so far (the engine stops when it wakes one)
        self._control_regions = self.control.regions(
            TileServices(self._set_soft_reset, self._queue_fill, self._pc_snapshot, self._config_word)
        )
        self.mailboxes = Mailboxes.new(self.arch.mailboxes) if self.arch.mailboxes is not None else None
        self.streams = Streams.new(self.arch)
        self._stream_regions = self.streams.regions()
        self.noc = Noc.new(self.arch)
        if self.noc is not None:
            self.noc.attach(self)
        self.tdma = Tdma(self.arch)
        self._block_regions = [*(self.noc.regions() if self.noc is not None else []), *self.tdma.regions()]
        self.coprocessor = Coprocessor(self)
        if backend == "coprocessor":
            self.backend: Engine | Recorder = Engine(self.coprocessor, self.queues, engine)
        elif backend == "recorder":
            self.backend = Recorder(self.queues)
        else:
            raise ValueError(f"backend must be 'coprocessor' or 'recorder', not {backend!r}")
        self.cores = [Core(self, facts, i) for i, facts in enumerate(self.arch.cores)]
        self._by_name = {c.name: c for c in self.cores}
        # A debugger attached (tensixsim.gdbserver): asked after every slice whether it cut it short.
        self.debugger: Debugger | None = None

    # ------------------------------------------------------------------ public API
    def core(self, name: str) -> Core:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no core {name!r}; cores: {', '.join(CORE_NAMES)}") from None

    def write(self, address: int, data: bytes | np.ndarray) -> None:
        """Host write into L1 or a core's local RAM alias."""
        buffer, offset = self._host_buffer(
            address, len(data) if isinstance(data, bytes) else np.asarray(data).nbytes, write=True
        )
        raw = (
            np.frombuffer(bytes(data), np.uint8)
            if isinstance(data, bytes)
            else np.asarray(data).view(np.uint8).ravel()
        )
        buffer[offset : offset + raw.size] = raw

    def read(self, address: int, size: int) -> bytes:
        buffer, offset = self._host_buffer(address, size)
        return buffer[offset : offset + size].tobytes()

    def load_elf(self, core: str, path: str | Path) -> None:
        """Load an ELF for ``core`` (see :mod:`tensixsim.loader.elf`)."""
        from tensixsim.loader.elf import load_elf

        load_elf(self, core, Path(path))

    def gdb_server(self, port: int = 0, host: str = "127.0.0.1") -> GdbServer:
        """A GDB remote-protocol server for this tile, listening on ``host:port`` (0: a free port,
        see its ``port``); its ``run()`` waits for GDB and runs the tile under its control."""
        from tensixsim.gdbserver import GdbServer

        return GdbServer(self, port, host)

    def pushed(self, pipe: int) -> list[PushedInstruction]:
        """Every Tensix instruction that entered ``pipe``'s input queue, in order (needs
        ``Tile(record_pushes=True)``)."""
        if not 0 <= pipe < len(self.queues):
            raise IndexError(f"no pipe {pipe}; pipes: {', '.join(str(q.pipe) for q in self.queues)}")
        queue = self.queues[pipe]
        if not queue.record:
            raise ValueError("pushed instructions are kept only with Tile(..., record_pushes=True)")
        return queue.history()

    def release(self, *names: str, cycle: int = 0) -> None:
        """Take cores out of soft reset as the host does."""
        mask = 0
        for name in names:
            mask |= 1 << self.arch.core(name).soft_reset_bit
        self._set_soft_reset(self.control.soft_reset & ~mask, cycle)

    def hold(self, *names: str) -> None:
        """Put cores back into soft reset, as the host does before loading new code."""
        mask = 0
        for name in names:
            mask |= 1 << self.arch.core(name).soft_reset_bit
        self._set_soft_reset(self.control.soft_reset | mask, self.cycle)

    def reset(self) -> None:
        """Power the tile on again, keeping its memory.

        Every core is held in soft reset with zeroed registers; the coprocessor drops every queued,
        in-flight and blocked instruction and its units (GPRs, configuration, semaphores and
        mutexes, MOP and replay state, SrcA/SrcB/Dst, LRegs) return to their power-on values; the
        stream, NoC, tile-control and TDMA registers likewise; the clock and the statistics start
        again at 0. L1, the local RAMs and DRAM keep their contents. The tile is then what a new
        ``Tile`` with this memory would be, and the same objects (``tile.coprocessor``, its state
        arrays, ``tile.core(name)``) stay valid. Use it after an error to run another kernel: the
        failed instruction would otherwise stay where it stopped, and the next run would raise again.
        """
        for core in self.cores:
            core.power_on()
        restore(self.control, TileControl.new(self.arch))
        if self.mailboxes is not None:
            restore(self.mailboxes, Mailboxes.new(self.arch.mailboxes))
        restore(self.streams, Streams.new(self.arch))
        if self.noc is not None:
            self.noc.reset()
        self.tdma.clock_gating.clear()
        for queue in self.queues:
            queue.clear()
        self.coprocessor.reset()
        self.backend.reset()
        self._side_effects = 0
        self.wakes = 0

    def run(self, max_cycles: int = 100_000_000, release: Iterable[str] | None = None) -> RunResult:
        """Run until every released core finished (``ecall``), or raise.

        ``release`` names the cores the host takes out of reset first; by default BRISC, as the host
        does, unless some core is already running.
        """
        if release is None:
            release = () if any(c.state is not CoreState.RESET for c in self.cores) else ("brisc",)
        for core in self.cores:
            core.flush_all_code()  # the host may have written code through tile.l1
            if core.state is CoreState.WAITING and (core.watch or core.watch_registers):
                self._wake(core, core.time)  # the host may have written what it polls
        self.release(*release, cycle=self.cycle)
        self._schedule(max_cycles)
        return self.result()

    @property
    def cycle(self) -> int:
        """The global clock: the earliest live core's cycle, or the last one when all stopped."""
        live = [c.time for c in self.cores if c.state in (CoreState.RUNNING, CoreState.WAITING)]
        if live:
            return min(live)
        last_issue = max(
            (p.last_cycle + 1 for p in getattr(self.backend, "pipes", []) if p.issued), default=0
        )
        return max([c.time for c in self.cores] + [last_issue])

    def result(self) -> RunResult:
        cores = {
            c.name: CoreStats(
                c.name, c.state.value, c.pc, c.time, c.instructions, c.tensix_pushed, c.exit_code
            )
            for c in self.cores
        }
        engine = self.backend if isinstance(self.backend, Engine) else None
        if engine is None:
            return RunResult(self.cycle, cores)
        pipes = tuple(PipeStats(p.thread, p.issued, dict(p.stalled)) for p in engine.pipes)
        units = {name: UnitStats(name, n, busy) for name, (n, busy) in engine.unit_stats.items()}
        unpackers = self.coprocessor.unpackers  # their L1 fetches run behind the unpack issue slot
        for unit in range(len(unpackers.fetches)):
            if unpackers.fetches[unit]:
                name = f"unpacker{unit}"
                units[name] = UnitStats(name, int(unpackers.fetches[unit]), int(unpackers.fetch_cycles[unit]))
        return RunResult(self.cycle, cores, pipes, units)

    # ------------------------------------------------------------------ scheduler
    def _schedule(self, max_cycles: int) -> None:
        history: dict[str, list[tuple[int, ...]]] = {c.name: [] for c in self.cores}
        spin_marks: tuple[int, int] | None = None  # side effects, coprocessor state
        spin_digest: int | None = None  # memory digest, taken once the marks repeat
        while True:
            running = [c for c in self.cores if c.state is CoreState.RUNNING]
            if running and self.noc is not None and self.noc.pending:
                # NoC transfers due before the earliest core acts complete first (they may wake it).
                self.noc.deliver(min(c.time for c in running))
                running = [c for c in self.cores if c.state is CoreState.RUNNING]
            if not running:
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
            core = min(running, key=lambda c: (c.time, c.index))
            if core.time >= max_cycles:
                raise CycleLimitExceeded(
                    f"cycle limit {max_cycles} reached; " + self._where(),
                    cycle=core.time,
                    cores=self._core_wheres(),
                )
            effects_before = self._side_effects
            budget = min(self.quantum, max_cycles - core.time)
            if self.debugger is None:
                core.run_slice(budget)
            else:
                self._debugged_slice(core, budget)
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
            if core.state is CoreState.WAITING:
                continue
            # Spin detection: only slices that ran to the quantum without side effects count.
            if core.state is not CoreState.RUNNING or self._side_effects != effects_before:
                history[core.name].clear()
                spin_marks = spin_digest = None
                continue
            seen = history[core.name]
            fingerprint = core.fingerprint()
            spinning = fingerprint in seen
            seen.append(fingerprint)
            del seen[:-_SPIN_HISTORY]
            if not spinning:
                continue
            live = [c for c in self.cores if c.state is CoreState.RUNNING]
            if not all(history[c.name] and history[c.name][-1] in history[c.name][:-1] for c in live):
                continue
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
                history[c.name] = history[c.name][-1:]

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
        if self.backend.idle:
            return
        running = [c.time for c in self.cores if c.state is CoreState.RUNNING]
        if running:
            self.backend.advance_to(min(running))

    def horizon(self, exclude: Core) -> int:
        """The earliest cycle at which a running core other than ``exclude`` can still act."""
        return min(
            (c.time for c in self.cores if c is not exclude and c.state is CoreState.RUNNING), default=NEVER
        )

    def sync_coprocessor(self, cycle: int) -> None:
        """Bring the coprocessor up to ``cycle`` before a core reads or writes its state."""
        self.backend.advance_to(cycle)

    def may_sync(self, core: Core, cycle: int) -> bool:
        """True when no other running core is still behind ``cycle``."""
        key = (cycle, core.index)
        return all(
            (other.time, other.index) > key
            for other in self.cores
            if other is not core and other.state is CoreState.RUNNING
        )

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

    def _deadlock(self, stuck: Sequence[Core], history: dict[str, list[tuple[int, ...]]]) -> Deadlock:
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

    # ------------------------------------------------------------------ parking poll loops
    def _try_park(self, core: Core) -> None:
        """Park ``core`` if the loop it keeps repeating polls memory and can change nothing.

        One probe iteration must store nothing, cause no side effect, read only L1 or watchable
        registers and leave the core's registers as they were: the loop is then at a fixed point until
        what it reads changes. The L1 pages it reads are write-protected in every other core, so the
        store that could end the wait wakes it at the writer's cycle (see protected_write); register
        writes and coprocessor changes wake it the same way (register_written, coprocessor_changed).
        """
        entry = core.loop_entry_cycle()
        before = core.fingerprint()
        effects = self._side_effects
        start = core.time
        reads, wrote, back = core.probe_iteration()
        if self.debugger is not None and self.debugger.cut(core):
            # The probe is real execution: a breakpoint in it stops the tile there. The loop is
            # then not known to poll; parking it or not gives the same cycles.
            core.mark_busy_loop()
            if core.error is None and core.state is CoreState.RUNNING:
                self._protect_new_code(core)
                self.debugger.stopped(core)
            return
        if core.error is not None or core.state is not CoreState.RUNNING or core.sync_stopped:
            return  # cut short (a synchronisation point): look again later
        l1 = [(a, n) for a, n in reads if a >= 0 and a + n <= self.arch.l1_size]
        # Registers by their word address (a narrow load reads part of one).
        registers = {a & ~3: self._register_at(core, a) for a, _ in reads if not 0 <= a < self.arch.l1_size}
        watchable = all(r is not None and r.watch for r in registers.values())
        pure = back and not wrote and effects == self._side_effects
        if not (reads and pure and watchable and core.fingerprint() == before):
            core.mark_busy_loop()
            return
        core.state = CoreState.WAITING
        core.watch = sorted(set(l1))
        core.watch_registers = {a: r.watch for a, r in registers.items() if r is not None and r.watch}
        core.fixed_point_cycle = entry + (core.time - start)  # one iteration after loop entry
        polled = [f"L1 0x{a:08x} (= 0x{self._l1_value(a, n):x})" for a, n in core.watch]
        polled += [f"register 0x{a:08x}" for a in core.watch_registers]
        core.wait_reason = "polls " + ", ".join(polled)
        for page in {a // PAGE for a, _ in core.watch}:
            self._refresh_protection(page)

    def _register_at(self, core: Core, address: int) -> Register | None:
        for region in core.regions:
            if region.contains(address):
                return region.register_at(address)
        return None

    def register_written(self, address: int, cycle: int, writer: Core | None = None) -> None:
        """``writer`` (None: an agent that acts before the cores, the NoC) wrote an MMIO register at
        ``cycle``: wake the cores polling it."""
        self.note_side_effect()
        for core in self.cores:
            if core.state is CoreState.WAITING and address in core.watch_registers:
                # A read at cycle c sees the write when the write goes first: cores act in (cycle,
                # index) order (may_sync), the NoC before any core at its cycle (deliver).
                first = cycle + 1 if writer is not None and writer.index > core.index else cycle
                self._wake(core, first, (address,))

    def coprocessor_changed(self, cycle: int) -> None:
        """Coprocessor state changed at ``cycle``: wake the cores polling registers that reflect it
        (a read at a later cycle sees it: it brings the coprocessor up to its own cycle first)."""
        for core in self.cores:
            if core.state is CoreState.WAITING and "coprocessor" in core.watch_registers.values():
                registers = tuple(a for a, how in core.watch_registers.items() if how == "coprocessor")
                self._wake(core, cycle + 1, registers)

    def _l1_value(self, address: int, size: int) -> int:
        return int.from_bytes(self.l1[address : address + size].tobytes(), "little")

    def _wake(self, core: Core, cycle: int, registers: tuple[int, ...] = ()) -> None:
        """Resume a parked core as if it had seen the change at ``cycle``.

        A change to ``registers`` the loop reads is seen by the first read at or after ``cycle``: the
        core resumes at the head of that iteration, the iterations before it counted as run, so the
        cycles and instructions are those of running the loop. A change to polled L1 (which a running
        loop reads without synchronising) resumes the loop at ``cycle``, or one iteration after it was
        first entered if that is later.
        """
        pages = {a // PAGE for a, _ in core.watch}
        self.wakes += 1
        core.state = CoreState.RUNNING
        core.watch = []
        core.watch_registers = {}
        offsets = [core.poll_reads[a] for a in registers if a in core.poll_reads]
        if offsets and core.poll_period > 0:
            core.skip_iterations(max(0, -(-(cycle - core.time - min(offsets)) // core.poll_period)))
        else:
            target = max(core.fixed_point_cycle, cycle)
            if target < core.time:
                core.rewind(target)
            else:
                core.time = target
            # Nothing the loop had in flight is still pending at an arbitrary resume cycle (the same
            # rule wherever the loop was parked, so the cycles do not depend on the quantum).
            core.hooks.reset_timing()
        for page in pages:
            self._refresh_protection(page)

    # ------------------------------------------------------------------ code coherence
    def _protect_new_code(self, core: Core) -> None:
        for page in core.new_code_pages():
            self._refresh_protection(page)

    def pipe_watches_l1(self, span: tuple[int, int]) -> None:
        """A coprocessor instruction waits on L1 bytes a core may store to: catch those stores."""
        self._refresh_protection(span[0] // PAGE)

    def _refresh_protection(self, page: int) -> None:
        """Protect ``page`` in every core but those that own its code or watch it.

        A page a blocked coprocessor instruction waits on is protected in every core.
        """
        if page in getattr(self.backend, "l1_watched_pages", set)():
            for core in self.cores:
                core.set_protected(page, True)
            return
        interested = {c.index for c in self.cores if page in c.known_code_pages}
        interested |= {
            c.index
            for c in self.cores
            if c.state is CoreState.WAITING and any(a // PAGE == page for a, _ in c.watch)
        }
        for core in self.cores:
            core.set_protected(page, bool(interested - {core.index}))

    def protected_write(self, writer: Core, address: int, size: int, cycle: int) -> None:
        """``writer`` stored into a protected L1 page: drop stale code, wake pollers."""
        self._l1_written(address, size, cycle, refresh=True)

    def l1_store(self, address: int, data: bytes, cycle: int) -> None:
        """A store into L1 by an agent other than a core (the coprocessor)."""
        self.l1[address : address + len(data)] = np.frombuffer(data, np.uint8)
        self._l1_written(address, len(data), cycle)

    def coprocessor_wrote_l1(self, address: int, size: int, cycle: int) -> None:
        """The coprocessor's native engine already stored ``size`` bytes at ``address`` (at ``cycle``):
        do what :meth:`l1_store` does after storing."""
        self._l1_written(address, size, cycle)

    def _l1_written(self, address: int, size: int, cycle: int, refresh: bool = False) -> None:
        """Bytes of L1 changed: wake their pollers, drop stale code, tell the pipes. ``refresh``: also
        bring the pages' write protection up to date when nobody's interest in them changed (a store
        that took the protected path may have found it stale)."""
        l1_written = getattr(self.backend, "l1_written", None)
        if l1_written is not None:
            l1_written(address, size, cycle)
        end = address + size
        pages = range(address // PAGE, (end - 1) // PAGE + 1)
        changed = refresh  # who is interested in these pages: only then can their protection change
        for core in self.cores:
            if core.state is CoreState.WAITING and any(a < end and address < a + n for a, n in core.watch):
                self._wake(core, cycle + 1)
                changed = True
            for page in pages:
                if page in core.known_code_pages:
                    core.forget_code(page)
                    changed = True
        if changed:
            for page in pages:
                self._refresh_protection(page)
        self.note_side_effect()

    def register_access(self, address: int, cycle: int, value: int | None) -> int:
        """Read (``value`` None) or write an MMIO register as the coprocessor reaches it."""
        brisc = self.core("brisc")
        for region in brisc.regions:
            if region.contains(address):
                access = Access(brisc, address, 4, cycle)
                if value is None:
                    return region.read(access)
                region.write(access, value)
                return 0
        raise MemoryFault(
            "no register at this address",
            address=address,
            size=4,
            write=value is not None,
            core="coprocessor",
            cycle=cycle,
        )

    # ------------------------------------------------------------------ Tensix instruction capture
    def push_room(self, core: Core, cycle: int) -> int:
        """Pushes ``core`` can make from ``cycle`` on without any queue it reaches filling up."""
        pipes = core.push_pipes
        if not pipes:
            return 0
        self.backend.advance_to(min(cycle, self.horizon(core)))
        return min(self.queues[pipe].depth - len(self.queues[pipe].entries) for pipe in pipes)

    def engine_for_pushes(self, core: Core) -> tuple[int, int] | None:
        """What ``core``'s hooks need to push straight into the native engine (see NativeEngine.attach),
        or None when pushes go through Python."""
        native = getattr(self.backend, "native", None)
        return native.attach() if native is not None else None

    def push(self, core: Core, pipe: int, instruction: int, pc: int, cycle: int, *, inline: bool) -> None:
        """Enter ``instruction`` into ``pipe``'s queue (may raise Stall)."""
        queue = self.queues[pipe]
        horizon = self.horizon(core)
        self.backend.advance_to(min(cycle, horizon))
        if len(queue.entries) >= queue.depth:
            queue.full_stalls += 1
            reason = f"pipe {pipe} input queue full"
            until = self.backend.take_time(pipe)
            if until is not None:
                raise Stall(reason, until=until)
            if horizon >= cycle:
                raise Stall(reason, wait_key=("queue", pipe))  # woken when the pipe takes an entry
            raise Stall(reason)  # another core may still push or unblock earlier: it goes first
        queue.entries.append(PushedInstruction(instruction, core.name, pc, cycle, inline))
        core.tensix_pushed += 1
        self.note_side_effect()

    def push_batch(self, core: Core, pipe: int, rows: np.ndarray) -> None:
        """Enter instructions the core's native hooks took while the queue had room (queue rows,
        capture.QE_* columns)."""
        self.queues[pipe].entries.extend_rows(rows)
        core.tensix_pushed += len(rows)
        self._side_effects += len(rows)

    def queue_popped(self, pipe: int, cycle: int) -> None:
        """The backend took an entry from ``pipe``'s queue: a core waiting for room may go on."""
        self.signal(("queue", pipe), cycle)

    def pipe_progress(self, thread: int, cycle: int) -> None:
        """A pipe issued an instruction: wake cores waiting for it to go idle, at the cycle it does."""
        waiting = {c.wait_key for c in self.cores if c.state is CoreState.WAITING}
        pipe = self.backend.pipes[thread]
        if ("thread_idle", thread) in waiting and pipe.idle:
            self.signal(("thread_idle", thread), max(cycle, pipe.done_cycle))
        if ("mop_expander_idle", thread) in waiting and not self.coprocessor.frontend.mop_busy[thread]:
            self.signal(("mop_expander_idle", thread), cycle)

    def signal(self, key: tuple, cycle: int) -> None:
        """Wake the cores waiting on ``key``; they retry the access that stalled them."""
        for core in self.cores:
            if core.state is CoreState.WAITING and core.wait_key == key:
                core.state = CoreState.RUNNING
                core.wait_key = None
                core.time = max(core.time, cycle + 1)
                self.wakes += 1

    # ------------------------------------------------------------------ MMIO
    def regions_for(self, core: Core) -> list[MmioRegion]:
        regions = [*self._control_regions, *self._stream_regions, *self._block_regions]
        if self.mailboxes is not None:
            regions += self.mailboxes.regions(core.name, self.signal)
        regions += self.coprocessor.mmio_regions(core)
        facts = core.facts
        pipes = (
            range(self.arch.pipe_count)
            if facts.name == "brisc"
            else ([facts.pipe] if facts.pipe is not None else [])
        )
        for pipe in pipes:
            # A TRISC reaches its own pipe at the first push address; BRISC reaches pipe p at the p-th.
            base = self.arch.push_address(pipe if facts.name == "brisc" else 0)
            regions.append(
                MmioRegion(
                    f"tensix_push{pipe}",
                    base,
                    PAGE,
                    {0: Register("push", write=self._push_writer(pipe))},
                    sync=False,
                    push_pipe=pipe,
                )
            )
        return regions

    def _queue_fill(self) -> list[tuple[int, int]]:
        """Each pipe's input FIFO: (entries, depth), as of the cycle the coprocessor has reached."""
        return [(len(queue.entries), queue.depth) for queue in self.queues]

    def _pc_snapshot(self, name: str, access: Access) -> int:
        """A core's pc as a register read sees it: the reading core's is that of the load itself;
        another core's is where it has got to (it is not behind the reader: the region synchronises)."""
        core = self.core(name)
        return access.core.fault_pc() if core is access.core else core.pc

    def _config_word(self, index: int, access: Access) -> int:
        """Word ``index`` of the backend configuration as BRISC sees it at TENSIX_CFG_BASE."""
        address = self.coprocessor.config.layout.base + 4 * index
        try:
            return self.register_access(address, access.cycle, None)
        except SimError as error:
            raise error.at(access.core.name, access.core.fault_pc()) from None

    def _push_writer(self, pipe: int):
        def write(access: Access, value: int) -> None:
            self.push(access.core, pipe, value, access.core.fault_pc(), access.cycle, inline=False)

        return write

    def _set_soft_reset(self, value: int, cycle: int, writer: Core | None = None) -> None:
        old = self.control.soft_reset
        for core in self.cores:  # checked before anything changes
            bit = 1 << core.facts.soft_reset_bit
            pc = self.control.reset_pc_of(core.name)
            in_l1 = 0 <= pc <= self.arch.l1_size - 4  # (elsewhere the fetch itself faults)
            if old & bit and not value & bit and in_l1 and core.fetch(pc) == 0:
                # An all-zero word is no instruction of either kind (RISC-V or inline Tensix).
                raise InvalidProgram(
                    f"no program loaded on {core.name}: released with zeros at its reset pc",
                    core=core.name,
                    pc=pc,
                    cycle=cycle,
                    value=0,
                )
        self.control.soft_reset = value & 0xFFFFFFFF
        for core in self.cores:
            bit = 1 << core.facts.soft_reset_bit
            if old & bit and not value & bit:
                core.reset(self.control.reset_pc_of(core.name))
                core.state = CoreState.RUNNING
                core.time = max(core.time, cycle + RISCV.release_delay)
            elif value & bit and not old & bit:
                core.state = CoreState.RESET
                if core is writer:
                    core.uc.emu_stop()

    def _host_buffer(self, address: int, size: int, write: bool = False) -> tuple[np.ndarray, int]:
        if address >= 0 and address + size <= self.arch.l1_size:
            return self.l1, address
        for facts in self.arch.cores:
            ram = self.local_ram[facts.name]
            if facts.local_ram_alias <= address and address + size <= facts.local_ram_alias + ram.nbytes:
                return ram, address - facts.local_ram_alias
        raise MemoryFault(
            "host access outside L1 and local RAM", address=address, size=size, write=write, core="host"
        )
