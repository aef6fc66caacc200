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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.control import TileControl, TileServices
from tensixsim.errors import (
    CoreWhere,
    CycleLimitExceeded,
    Deadlock,
    InvalidProgram,
    MemoryFault,
    RunInterrupted,
    SimError,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.mailboxes import Mailboxes
from tensixsim.memory import PAGE, Access, MmioRegion, Register, Stall
from tensixsim.noc import Noc
from tensixsim.pcbufs import PcBufs, PcBufServices
from tensixsim.progress import ProgressLine, progress_for, sigint_interrupts
from tensixsim.riscv.core import Core, CoreState
from tensixsim.streams import Streams
from tensixsim.tdma import Tdma
from tensixsim.tensix.capture import InputQueue, PushedInstruction, Recorder
from tensixsim.tensix.coprocessor import Coprocessor
from tensixsim.tensix.frontend import NEVER, Engine
from tensixsim.tensix.shared_state import restore
from tensixsim.timing import DEFAULT_QUANTUM, RISCV

if TYPE_CHECKING:
    from tensixsim.bottleneck import Bottleneck
    from tensixsim.device_print import DevicePrintServer
    from tensixsim.dprint import PrintBuffer, PrintLine, PrintServer
    from tensixsim.events import EventLog
    from tensixsim.loader.source import SourceLocation

# A core whose (pc, registers) at a slice boundary repeats one of its last few boundary states,
# with no side effect in between, is spinning. When every live core spins and memory did not change
# across two such observations, nothing can ever change: deadlock.
_SPIN_HISTORY = 64


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
    interrupted: bool = False  # the run was stopped on request before its cores finished

    # The run's events when it was observed (Tile.run(observe=True) or trace=...), else None.
    events: EventLog | None = field(default=None, compare=False, repr=False)

    def bottleneck(self) -> Bottleneck:
        """What bounded the run: the critical path through the recorded wait edges, walked back from
        the end (see tensixsim.bottleneck). Needs a run with ``observe=True`` or ``trace=...``."""
        if self.events is None:
            raise ValueError("bottleneck() needs the run's events: Tile.run(..., observe=True) or trace=PATH")
        from tensixsim.bottleneck import critical_path

        return critical_path(self.events)

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
        if self.interrupted:
            total += " (interrupted)"
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
        if self.events is not None:
            lines += ["", self.bottleneck().text()]
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
        self._interrupt = False  # a stop was asked for (interrupt())
        self.prints: PrintServer | DevicePrintServer | None = None  # reads print buffers (enable_prints)
        self.progress: TextIO | None = None  # where run() shows its status line unless told otherwise
        self.pcbufs = PcBufs.new(self.arch.pcbufs) if self.arch.pcbufs is not None else None
        self.events: EventLog | None = None  # while a run is observed (run(observe=True) / trace=)
        self._last_events: EventLog | None = None
        self._control_regions = self.control.regions(
            TileServices(
                self._set_soft_reset,
                self._queue_fill,
                self._pc_snapshot,
                self._config_word,
                self._debug_push,
                self._pcbuf_override_services(),
            )
        )
        self.mailboxes = Mailboxes.new(self.arch.mailboxes) if self.arch.mailboxes is not None else None
        self.streams = Streams.new(self.arch)
        self._stream_regions = self.streams.regions(self._stream_written)
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
        if self.pcbufs is not None:
            restore(self.pcbufs, PcBufs.new(self.arch.pcbufs))
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
        self._interrupt = False
        if self.prints is not None:  # the host's print server stays: the buffers start afresh
            self.prints.start(self)
            for page in self.prints.pages:
                self._refresh_protection(page)
        self._last_events = None

    def run(
        self,
        max_cycles: int = 100_000_000,
        release: Iterable[str] | None = None,
        *,
        progress: TextIO | None = None,
        trace: str | Path | None = None,
        observe: bool = False,
    ) -> RunResult:
        """Run until every released core finished (``ecall``), or raise.

        ``release`` names the cores the host takes out of reset first; by default BRISC, as the host
        does, unless some core is already running. ``progress``: a stream (``sys.stderr``) to show a
        status line on while a run lasts longer than two seconds, if it is a terminal (default:
        ``tile.progress``, None). ``trace``: write a Perfetto trace of the run to this file (complete
        when run returns or raises; TraceError before anything runs if it cannot be written).
        ``observe`` (implied by ``trace``): record the run's wait edges, for ``result.bottleneck()``
        (docs/observability.md).

        Ctrl-C (or :meth:`interrupt` from elsewhere) stops the run at the next slice boundary with
        :class:`~tensixsim.errors.RunInterrupted`, which carries the result so far; a second Ctrl-C
        interrupts at once.
        """
        if release is None:
            release = () if any(c.state is not CoreState.RESET for c in self.cores) else ("brisc",)
        self._last_events = None
        if trace is not None or observe:
            self._observe(trace)
        line = progress_for(progress if progress is not None else self.progress)
        if self.prints is not None:
            self.prints.before_echo = line.close if line is not None else None
        failed = True
        try:
            for core in self.cores:
                core.flush_all_code()  # the host may have written code through tile.l1
                if core.state is CoreState.WAITING and (core.watch or core.watch_registers):
                    self._wake(core, core.time, by=("host",))  # the host may have written what it polls
            self.release(*release, cycle=self.cycle)
            with sigint_interrupts(self):
                self._schedule(max_cycles, line)
            failed = False
        except SimError as error:
            error.with_source(self.locate)
            raise
        finally:
            if line is not None:
                line.close()
            if self.prints is not None:
                self._drain_prints(quiet=failed)
            if self.events is not None:
                self._stop_observing()
        return self.result()

    def _observe(self, trace: str | Path | None) -> None:
        """Start recording events (and a trace file) for the coming run."""
        from tensixsim.events import EventLog
        from tensixsim.trace import PerfettoSink

        if not isinstance(self.backend, Engine):
            raise ValueError("only the coprocessor backend records events")
        sink = PerfettoSink(trace) if trace is not None else None
        events = self.events = self._last_events = EventLog(
            self.coprocessor, self.backend.unit_of, sink, self.cycle
        )
        self.backend.events = events
        for core in self.cores:
            if core.state in (CoreState.RUNNING, CoreState.WAITING):
                events.core_released(core.name, core.time, ("host",), core.time)
            if core.state is CoreState.WAITING:
                events.core_waits_from(core.name, core.time, core.wait_reason)

    def _stop_observing(self) -> None:
        events, self.events = self.events, None
        assert events is not None
        if isinstance(self.backend, Engine):
            self.backend.events = None
        for core in self.cores:
            if core.state is not CoreState.RESET:
                events.core_stopped(core.name, core.time, core.state.value)
        events.close()

    def _drain_prints(self, *, quiet: bool) -> None:
        """Read the print buffers a last time (what was printed up to an error or an interrupt too).
        ``quiet``: a run already failing keeps its own error rather than one about a buffer."""
        try:
            self.prints.poll_all(self)
        except SimError:
            if not quiet:
                raise
        finally:
            self.prints.flush(self)
            self.prints.before_echo = None

    def enable_prints(
        self,
        buffers: dict[str, PrintBuffer] | None = None,
        echo: Callable[[PrintLine], None] | None = None,
        *,
        server: PrintServer | DevicePrintServer | None = None,
    ) -> PrintServer | DevicePrintServer:
        """Read the cores' print buffers during runs (DPRINT records; see :mod:`tensixsim.dprint`).

        ``buffers``: where they lie; by default the SDK's (``tensix_print.h``). Each buffer is
        marked as read by a host (the starting magic), so the cores' prints go ahead; the lines
        collect in ``tile.prints.lines`` (cycle, core, text) and go to ``echo`` as they complete.
        ``server``: a print server of another protocol instead (:mod:`tensixsim.device_print`).
        """
        from tensixsim.dprint import PrintServer, sdk_buffers
        from tensixsim.sdk.layout import DPRINT_BASE

        if server is None:
            if buffers is None:
                buffers = sdk_buffers([c.name for c in self.cores], DPRINT_BASE)
            server = PrintServer(buffers, echo)
        self.prints = server
        self.prints.start(self)
        for page in self.prints.pages:
            self._refresh_protection(page)
        return self.prints

    def interrupt(self) -> None:
        """Ask a run in progress to stop at its next slice boundary (it raises RunInterrupted). Safe
        from a signal handler or another thread; a request made between runs stops the next one
        before its first slice."""
        self._interrupt = True

    def locate(self, core: str, pc: int) -> SourceLocation | None:
        """Where ``pc`` lies in the source of the ELFs loaded on ``core`` (function+offset from the
        symbols, file:line from DWARF), or None. Reads the ELF's tables on first use (cached)."""
        from tensixsim.loader.source import locate

        found = self._by_name.get(core)
        return locate(found.images, pc) if found is not None else None

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
        return RunResult(self.cycle, cores, pipes, units, events=self._last_events)

    # ------------------------------------------------------------------ scheduler
    def _schedule(self, max_cycles: int, progress: ProgressLine | None = None) -> None:
        history: dict[str, list[tuple[int, ...]]] = {c.name: [] for c in self.cores}
        spin_marks: tuple[int, int] | None = None  # side effects, coprocessor state
        spin_digest: int | None = None  # memory digest, taken once the marks repeat
        while True:
            if self._interrupt:
                self._interrupt = False
                result = replace(self.result(), interrupted=True)
                raise RunInterrupted(
                    f"interrupted at cycle {result.cycles}", cycle=result.cycles, result=result
                )
            if progress is not None:
                progress.update(self)
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
            core.run_slice(min(self.quantum, max_cycles - core.time))
            self._protect_new_code(core)
            if self.prints is not None:
                self.prints.poll(self, core.name, core.time)
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
                if self.events is not None:
                    self.events.core_waits_from(core.name, core.time, core.wait_reason)
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
        if self.events is not None:
            self.events.core_waits_from(core.name, entry, "parked: " + core.wait_reason)
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
                self._wake(core, first, (address,), ("core", writer.name) if writer is not None else ("noc",))

    def coprocessor_changed(self, cycle: int) -> None:
        """Coprocessor state changed at ``cycle``: wake the cores polling registers that reflect it
        (a read at a later cycle sees it: it brings the coprocessor up to its own cycle first)."""
        for core in self.cores:
            if core.state is CoreState.WAITING and "coprocessor" in core.watch_registers.values():
                registers = tuple(a for a, how in core.watch_registers.items() if how == "coprocessor")
                self._wake(core, cycle + 1, registers, ("coprocessor",))

    def _l1_value(self, address: int, size: int) -> int:
        return int.from_bytes(self.l1[address : address + size].tobytes(), "little")

    def _wake(self, core: Core, cycle: int, registers: tuple[int, ...] = (), by: tuple = ("host",)) -> None:
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
        if self.events is not None:
            self.events.core_woken(core.name, core.time, by, cycle)
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

        A page a blocked coprocessor instruction waits on, or that holds a print buffer (so the
        store completing a print is seen at its cycle), is protected in every core.
        """
        if page in getattr(self.backend, "l1_watched_pages", set)() or (
            self.prints is not None and page in self.prints.pages
        ):
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
        """``writer`` stored into a protected L1 page: drop stale code, wake pollers, read a print
        the store completed."""
        self._l1_written(address, size, cycle, refresh=True, by=("core", writer.name))
        if self.prints is not None:
            self.prints.stored(self, address, size, cycle)

    def l1_store(self, address: int, data: bytes, cycle: int, by: tuple = ("coprocessor",)) -> None:
        """A store into L1 by an agent other than a core (``by``: the coprocessor, or ("noc",))."""
        self.l1[address : address + len(data)] = np.frombuffer(data, np.uint8)
        self._l1_written(address, len(data), cycle, by=by)

    def coprocessor_wrote_l1(self, address: int, size: int, cycle: int) -> None:
        """The coprocessor's native engine already stored ``size`` bytes at ``address`` (at ``cycle``):
        do what :meth:`l1_store` does after storing."""
        self._l1_written(address, size, cycle)

    def _l1_written(
        self, address: int, size: int, cycle: int, refresh: bool = False, by: tuple = ("coprocessor",)
    ) -> None:
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
                self._wake(core, cycle + 1, by=by)
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

    def engine_run_pointers(self) -> tuple[int, int, int]:
        """Where native storage reads find the engine (NativeEngine.run_pointers); only asked while
        a core's hooks hold the engine (engine_for_pushes)."""
        return self.backend.native.run_pointers()

    def storage_current(self, values: np.ndarray) -> bool:
        """Native reads of ``values`` (an MmioRegion.storage array) still equal the Python reads."""
        return self.streams.storage_current(values)

    def sync_limit(self, core: Core) -> int:
        """The latest cycle at which ``core`` may synchronise (may_sync) while no other core moves."""
        limit = NEVER
        index = core.index
        for other in self.cores:
            if other is not core and other.state is CoreState.RUNNING:
                # (cycle, index) must stay below the other core's (time, index).
                limit = min(limit, other.time if index < other.index else other.time - 1)
        return limit

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

    def signal(self, key: tuple, cycle: int, by: tuple | None = None) -> None:
        """Wake the cores waiting on ``key``; they retry the access that stalled them. ``by``: who
        acted (for an observed run; by default the pipe a pipe key names)."""
        for core in self.cores:
            if core.state is CoreState.WAITING and core.wait_key == key:
                core.state = CoreState.RUNNING
                core.wait_key = None
                core.time = max(core.time, cycle + 1)
                self.wakes += 1
                if self.events is not None:
                    if by is None:
                        pipe_key = key[0] in ("queue", "thread_idle", "mop_expander_idle")
                        by = ("pipe", key[1]) if pipe_key else ("host",)
                    self.events.core_woken(core.name, core.time, by, cycle)

    # ------------------------------------------------------------------ MMIO
    def regions_for(self, core: Core) -> list[MmioRegion]:
        regions = [*self._control_regions, *self._stream_regions, *self._block_regions]
        if self.mailboxes is not None:
            # The core whose mailbox access wakes another is the one acting (for an observed run).
            regions += self.mailboxes.regions(
                core.name, lambda key, cycle, who=("core", core.name): self.signal(key, cycle, who)
            )
        regions += self.coprocessor.mmio_regions(core)
        if self.pcbufs is not None:
            regions += self._pcbuf_regions(core, regions)
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

    # ------------------------------------------------------------------ PCBufs
    def _pcbuf_services(self) -> PcBufServices:
        copro = self.coprocessor
        return PcBufServices(self.signal, self._pcbuf_reader_since, copro.thread_idle, copro.thread_idle_at)

    def _pcbuf_reader_since(self, i: int) -> int | None:
        reader = self._by_name[self.arch.pcbufs.readers[i]]
        waiting = reader.state is CoreState.WAITING and reader.wait_key == ("pcbuf", i)
        return reader.time if waiting else None

    def _pcbuf_override_services(self) -> tuple | None:
        pcbufs = self.pcbufs
        if pcbufs is None:
            return None
        return (
            lambda: int(pcbufs.override[0]),
            lambda value, cycle: pcbufs.write_override(value, cycle, self.signal),
        )

    def _pcbuf_regions(self, core: Core, regions: list[MmioRegion]) -> list[MmioRegion]:
        """BRISC's PCBuf windows; a TRISC's PCBuf word joins its page at PC_BUF_BASE (the semaphores
        and TTSync registers share it). Returns the regions to add."""
        facts = self.arch.pcbufs
        if core.name == "brisc":
            return self.pcbufs.writer_regions(self._pcbuf_services())
        if core.name not in facts.readers:
            return []
        register = self.pcbufs.reader_register(facts.readers.index(core.name), self._pcbuf_services())
        page = next((r for r in regions if r.base == facts.base), None)
        if page is not None:
            page.registers[0] = register
            return []
        return [MmioRegion("pcbuf", facts.base, PAGE, {0: register})]

    def _stream_written(self, stream: int, index: int, value: int, access: Access) -> None:
        """A core wrote a stream register (Streams.regions' observer): a CB counter, when observed."""
        if self.events is not None:
            self.events.stream_written(stream, index, value, access.cycle, access.core.name)

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

    def _debug_push(self, pipe: int, instruction: int, access: Access) -> None:
        """A push through INSTRN_BUF_CTRL0: into ``pipe``'s input FIFO, as a store to its push address."""
        core = access.core
        if pipe not in core.push_pipes:
            # The scheduler lets a pipe run ahead of every core that cannot push into it.
            raise Unimplemented(
                f"a debug-bus push into pipe {pipe} from {core.name}, which cannot push into it otherwise",
                cycle=access.cycle,
                value=instruction,
            ).at(core.name, core.fault_pc())
        queue = self.queues[pipe]
        self.backend.advance_to(min(access.cycle, self.horizon(core)))
        if len(queue.entries) >= queue.depth:
            raise UndefinedBehavior(
                f"debug-bus push into pipe {pipe}'s full input FIFO (the documentation says not to)",
                cycle=access.cycle,
                value=instruction,
            ).at(core.name, core.fault_pc())
        self.push(core, pipe, instruction, core.fault_pc(), access.cycle, inline=False)

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
        changed = set()
        for core in self.cores:
            bit = 1 << core.facts.soft_reset_bit
            if old & bit and not value & bit:
                core.reset(self.control.reset_pc_of(core.name))
                core.state = CoreState.RUNNING
                core.time = max(core.time, cycle + RISCV.release_delay)
                changed.add(core)
                if self.events is not None:
                    by = ("core", writer.name) if writer is not None else ("host",)
                    self.events.core_released(core.name, core.time, by, cycle)
            elif value & bit and not old & bit:
                core.state = CoreState.RESET
                changed.add(core)
                if core is writer:
                    core.uc.emu_stop()
        self._share_l1_ports(value, cycle, writer, changed)

    def _share_l1_ports(self, soft_reset: int, cycle: int, writer: Core | None, changed: set[Core]) -> None:
        """Tell each core how many cores of its L1 access port are out of reset (timing.py l1_ports).
        A live core other than the writer learns it at its next synchronised access from ``cycle``."""
        out = {c.name for c in self.cores if not soft_reset & (1 << c.facts.soft_reset_bit)}
        for core in self.cores:
            mates = RISCV.port_mates(core.name) if RISCV.l1_port_sharing else (core.name,)
            share = max(1, sum(name in out for name in mates))
            live = core.state in (CoreState.RUNNING, CoreState.WAITING)
            late = writer is not None and core is not writer and core not in changed and live
            core.set_port_share(share, cycle if late else None)

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
