"""A Tensix tile: five baby cores over one L1, the MMIO they reach, and running them.

The tile builds its cores, memories, registers and coprocessor and wires the MMIO windows each core
sees; :mod:`tensixsim.scheduler` decides which core runs when, :mod:`tensixsim.parking` parks poll
loops and keeps L1 writes coherent. With ``l1_order`` a core's L1 accesses happen in cycle order with
the other cores' (an access at a cycle another running core has not reached waits for it); without,
a core polling an L1 word it is not parked on sees another core's store at the next slice boundary.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

import numpy as np

from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.errors import (
    InvalidProgram,
    MemoryFault,
    SimError,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.mmio.control import TileControl, TileServices
from tensixsim.mmio.local_ram import CrossCorePath, LocalRamWindow, local_ram_windows
from tensixsim.mmio.mailboxes import Mailboxes
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, Register, Stall, unmodelled_region
from tensixsim.mmio.pcbufs import PcBufs, PcBufServices
from tensixsim.mmio.risc_debug import DebugPort, RiscDebug
from tensixsim.mmio.streams import Streams
from tensixsim.mmio.tdma import Tdma, TdmaMover
from tensixsim.noc import Noc
from tensixsim.observe.progress import progress_for, sigint_interrupts
from tensixsim.parking import Parking
from tensixsim.results import CoreStats, PipeStats, RunResult, UnitStats
from tensixsim.riscv.core import Core, CoreState
from tensixsim.riscv.cpu import jal
from tensixsim.riscv.native import PageSharing
from tensixsim.scheduler import Scheduler
from tensixsim.tensix.coprocessor import Coprocessor
from tensixsim.tensix.frontend.capture import InputQueue, PushedInstruction, Recorder
from tensixsim.tensix.frontend.perf import totals as perf_totals
from tensixsim.tensix.frontend.pipes import Engine
from tensixsim.tensix.shared_state import restore
from tensixsim.timing import DEFAULT_QUANTUM, RISCV

if TYPE_CHECKING:
    from tensixsim.gdbserver import GdbServer
    from tensixsim.loader.source import SourceLocation
    from tensixsim.observe.device_print import DevicePrintServer
    from tensixsim.observe.dprint import PrintBuffer, PrintLine, PrintServer
    from tensixsim.observe.events import EventLog


class Debugger(Protocol):
    """What the scheduler asks a debugger attached to the tile (see tensixsim.gdbserver)."""

    def cut(self, core: Core) -> bool:
        """Whether ``core``'s last slice stopped early at a debugger event (a breakpoint...)."""

    def stopped(self, core: Core) -> None:
        """``core`` stopped at that event: the whole tile waits until this returns."""

    def slice_done(self, core: Core) -> None:
        """A slice ended normally (the debugger may stop the tile here: an interrupt request)."""


class Tile(Scheduler, Parking):
    """One Tensix tile. ``Tile("blackhole")``."""

    def __init__(
        self,
        arch: str = "blackhole",
        *,
        quantum: int = DEFAULT_QUANTUM,
        backend: str = "coprocessor",
        engine: str | None = None,
        record_pushes: bool | None = None,
        l1_order: bool | str = "pages",
    ) -> None:
        """``engine``: "native" (the default, or ``$TENSIXSIM_ENGINE``) runs the coprocessor's hot path
        in C, falling back to "python", the reference engine, when no C compiler is available;
        results and cycles are the same. ``record_pushes``: keep every Tensix instruction a core
        pushes for :meth:`pushed` (about 50 bytes each, so off by default; on for the "recorder"
        backend, whose purpose it is). ``l1_order``: "pages" (the default) performs the
        accesses to L1 pages more than one core has used in cycle order between cores, so results
        and cycles do not depend on the quantum, except where another core accesses a page at a cycle
        its only user had run past on the same line (counted in ``l1_order_late``); True, or
        "full", orders every core's L1 loads, stores and atomics (no exception, slower where cores
        copy through L1 at once); off (False), a core sees another's L1 store at the next slice
        boundary (docs/timing.md)."""
        engine = engine or os.environ.get("TENSIXSIM_ENGINE") or "native"
        self.arch = get_arch(arch)
        self.quantum = quantum
        # Park cores spinning in poll loops until what they poll changes (results and cycles are the
        # same as running the loops; off is for checking that).
        self.park_polls = True
        if l1_order not in (False, True, "pages", "full"):
            raise ValueError(f"l1_order: False, True, 'pages' or 'full', not {l1_order!r}")
        self.l1_order: bool | str = "full" if l1_order is True else l1_order
        self.l1 = np.zeros(self.arch.l1_size, np.uint8)
        # L1 ordering by page (riscv/native.py PageSharing): the cores (and whether the NoC) that
        # have used each page, the latest cycles its first user alone accessed it (by line) at, and
        # (l1_order_late[0]) how many accesses by another core or the NoC came at or before a
        # conflicting one of those: the accesses whose order "pages" may not have kept ("full" keeps
        # it). None counted: the run's results and cycles are the full ordering's.
        self.l1_pages = PageSharing(self.arch.l1_size, PAGE)
        self.l1_sharers = self.l1_pages.sharers
        self.l1_private_last = self.l1_pages.private_last
        self.l1_order_late = self.l1_pages.late
        # The cores map whole pages: a local RAM smaller than a page (Wormhole's TRISCs) sits at the
        # start of its page, and the rest of the page is a hole the cores' hooks fault on.
        self.local_ram_pages = {
            c.name: np.zeros(-(-c.local_ram_size // PAGE) * PAGE, np.uint8) for c in self.arch.cores
        }
        self.local_ram = {c.name: self.local_ram_pages[c.name][: c.local_ram_size] for c in self.arch.cores}
        # Core-local instruction RAMs (Wormhole's NCRISC): only that core's instruction fetch reaches them.
        self.iram = {c.name: np.zeros(c.iram[1], np.uint8) for c in self.arch.cores if c.iram is not None}
        self.control = TileControl.new(self.arch)
        self.queues = [
            InputQueue(pipe, self.arch.pipe_queue_depth, self.arch.pipe_queue_accept)
            for pipe in range(self.arch.pipe_count)
        ]
        for queue in self.queues:
            queue.record = backend == "recorder" if record_pushes is None else record_pushes
        self._side_effects = 0
        self.pipes_pushed = 0  # a bit per pipe any core pushed into (Scheduler.note_pushed)
        self._idle_at = -1  # _side_effects when the backend was last found idle (Scheduler)
        self.wakes = 0  # cores woken so far (the engine stops when it wakes one)
        self.behind_noc: list[Core] = []  # pollers resumed before a NoC write (Parking.noc_write_waits)
        self._interrupt = False  # a stop was asked for (interrupt())
        self.prints: PrintServer | DevicePrintServer | None = None  # reads print buffers (enable_prints)
        self.progress: TextIO | None = None  # where run() shows its status line unless told otherwise
        self.pcbufs = PcBufs.new(self.arch.pcbufs) if self.arch.pcbufs is not None else None
        self.events: EventLog | None = None  # while a run is observed (run(observe=True) / trace=)
        self._last_events: EventLog | None = None
        self.risc_debug = RiscDebug(
            DebugPort(
                self._debug_halt,
                self._debug_resume,
                lambda name: self.core(name).state is CoreState.HALTED,
                self._debug_read_register,
                self._debug_write_register,
                self._debug_read_word,
                self._debug_write_word,
            )
        )
        self._control_regions = self.control.regions(
            TileServices(
                self._set_soft_reset,
                self._queue_fill,
                self._pc_snapshot,
                self._config_word,
                self._debug_push,
                self._pcbuf_override_services(),
                self.risc_debug,
                self._perf_totals,
            )
        )
        self.mailboxes = Mailboxes.new(self.arch.mailboxes) if self.arch.mailboxes is not None else None
        self.streams = Streams.new(self.arch)
        self._stream_regions = self.streams.regions(self._stream_written)
        self.noc = Noc.new(self.arch)
        if self.noc is not None:
            self.noc.attach(self)
        self.tdma = Tdma(self.arch)
        if "ncrisc" in self.iram:
            # Wormhole: TDMA-RISC's mover commands (tt-metal fills NCRISC's instruction RAM with them).
            self.tdma.mover = TdmaMover(self.iram["ncrisc"], self.l1, self._forget_iram_code)
        self.local_ram_path = CrossCorePath()
        self._block_regions = [
            *self._noc_regions(),
            *self.tdma.regions(),
            *local_ram_windows(self.arch, self.local_ram_pages, self.local_ram_path),
        ]
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
        self._halted_from: dict[str, CoreState] = {}  # cores the debug unit halted: their state before

    def _forget_iram_code(self, lo: int, hi: int) -> None:
        base = self.arch.core("ncrisc").iram[0]
        self.core("ncrisc").forget_code_range(base + lo, base + hi)

    def _noc_regions(self) -> list[MmioRegion]:
        if self.noc is not None:
            return self.noc.regions()
        facts = self.arch.noc
        if facts is None:
            return []
        what = f"{self.arch.name}'s NoC interface registers are not modelled yet"
        return [
            unmodelled_region(f"noc{i}", base, facts.niu_size, what) for i, base in enumerate(facts.niu_bases)
        ]

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

    def reset_pc_of(self, name: str) -> int:
        """Where core ``name`` starts when released: its programmable reset PC if enabled, else its
        default. Blackhole keeps those in tile-control registers, Wormhole in backend-configuration
        fields (SoftReset.md); both Config states hold them, so state 0 is read."""
        fields = self.arch.reset_pc_config_fields.get(name)
        if self.arch.reset_pc_source != "config" or fields is None:
            return self.control.reset_pc_of(name)
        pc_field, enable_field, bit = fields
        config = self.coprocessor.config
        if config.read_field(enable_field, 0) >> bit & 1:
            return config.read_field(pc_field, 0)
        return self.arch.core(name).default_reset_pc

    def start_at(self, name: str, pc: int) -> None:
        """Make core ``name`` start at ``pc`` when next released, as a host does before releasing a
        program linked elsewhere: a TRISC's or NCRISC's reset-PC override (Blackhole's tile-control
        registers, Wormhole's configuration fields), or for BRISC, which always starts at its reset
        pc, a ``jal`` from there to ``pc`` (as tt-metal's and tt-exalens's loaders write)."""
        facts = self.arch.core(name)
        fields = self.arch.reset_pc_config_fields.get(name)
        if self.arch.reset_pc_source == "config" and fields is not None:
            pc_field, enable_field, bit = fields
            config = self.coprocessor.config
            for state in (0, 1):
                config.write_field(pc_field, state, pc)
                config.write_field(enable_field, state, config.read_field(enable_field, state) | 1 << bit)
        elif facts.reset_pc_register is not None:
            self.control.reset_pc[name] = pc
            mask = 1 << facts.reset_pc_override_bit
            if facts.pipe is not None:
                self.control.trisc_override |= mask
            else:
                self.control.ncrisc_override |= mask
        else:
            self.write(facts.default_reset_pc, jal(facts.default_reset_pc, pc).to_bytes(4, "little"))

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
        # The clock starts again: which core used which page, and when, starts afresh too.
        self.l1_pages.clear()
        self.local_ram_path.reset()
        restore(self.control, TileControl.new(self.arch))
        if self.mailboxes is not None:
            restore(self.mailboxes, Mailboxes.new(self.arch.mailboxes))
        if self.pcbufs is not None:
            restore(self.pcbufs, PcBufs.new(self.arch.pcbufs))
        restore(self.streams, Streams.new(self.arch))
        if self.noc is not None:
            self.noc.reset()
        self.tdma.clock_gating.clear()
        self.risc_debug.control[:] = self.risc_debug.status[:] = [0, 0]
        self.risc_debug.registers[:] = 0
        self._halted_from.clear()
        if self.tdma.mover is not None:
            self.tdma.mover.params[:] = [0, 0, 0, 0]
            self.tdma.mover.busy_until = 0
        for queue in self.queues:
            queue.clear()
        self.coprocessor.reset()
        self.backend.reset()
        self._side_effects = 0
        self.pipes_pushed = 0  # a bit per pipe any core pushed into (Scheduler.note_pushed)
        self._idle_at = -1  # _side_effects when the backend was last found idle (Scheduler)
        self.wakes = 0
        self.behind_noc.clear()
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
        from tensixsim.observe.events import EventLog
        from tensixsim.observe.trace import PerfettoSink

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
        """Read the cores' print buffers during runs (DPRINT records; see :mod:`tensixsim.observe.dprint`).

        ``buffers``: where they lie; by default the SDK's (``tensix_print.h``). Each buffer is
        marked as read by a host (the starting magic), so the cores' prints go ahead; the lines
        collect in ``tile.prints.lines`` (cycle, core, text) and go to ``echo`` as they complete.
        ``server``: a print server of another protocol instead (:mod:`tensixsim.observe.device_print`).
        """
        from tensixsim.observe.dprint import PrintServer, sdk_buffers
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

    def perf_counters(self) -> dict[str, tuple[int, int]]:
        """The hardware performance counters as the tile's registers would show them now, without
        touching them: for every counter (tt-metal's names, such as ``FPU_COUNTER`` or
        ``THREAD_STALLS_1``) of each bank a program or the host has started, (OUT_L, OUT_H): the
        bank's window in cycles and the count. A counter the emulator does not model reads 0
        (docs/observability.md lists them)."""
        return self.control.perf.values(self.cycle, self._perf_totals)

    def result(self) -> RunResult:
        cores = {
            c.name: CoreStats(
                c.name, c.state.value, c.pc, c.time, c.instructions, c.tensix_pushed, c.exit_code
            )
            for c in self.cores
        }
        engine = self.backend if isinstance(self.backend, Engine) else None
        dram = self.noc.bank_use() if self.noc is not None else {}
        if engine is None:
            return RunResult(self.cycle, cores, l1_order_late=int(self.l1_order_late[0]), dram=dram)
        pipes = tuple(PipeStats(p.thread, p.issued, dict(p.stalled)) for p in engine.pipes)
        units = {name: UnitStats(name, n, busy) for name, (n, busy) in engine.unit_stats.items()}
        unpackers = self.coprocessor.unpackers  # their L1 fetches run behind the unpack issue slot
        for unit in range(len(unpackers.fetches)):
            if unpackers.fetches[unit]:
                name = f"unpacker{unit}"
                units[name] = UnitStats(name, int(unpackers.fetches[unit]), int(unpackers.fetch_cycles[unit]))
        return RunResult(
            self.cycle,
            cores,
            pipes,
            units,
            l1_order_late=int(self.l1_order_late[0]),
            dram=dram,
            python_executed=engine.python_executed if engine.native is not None else {},
            perf_counters=self.perf_counters(),
            events=self._last_events,
        )

    def noc_will_write(self, address: int, size: int, landed: int | None = None) -> None:
        """The NoC writes ``size`` bytes of L1 at ``address``: at cycle ``landed``, or (None) a request
        that will write them was made. Under ``l1_order="pages"`` the cores' accesses to those pages
        are ordered against its writes from now on (the full ordering orders every access), and a
        core found to have run past the write alone is counted in ``l1_order_late``."""
        if self.l1_order == "pages":
            self.l1_pages.noc_writes(address, size, landed)

    def register_access(self, address: int, cycle: int, value: int | None, host: bool = False) -> int:
        """Read (``value`` None) or write an MMIO register as the coprocessor (or the host) reaches it."""
        brisc = self.core("brisc")
        for region in brisc.regions:
            # (the local-RAM windows are memory the cores reach, not registers)
            if region.contains(address) and not isinstance(region, LocalRamWindow):
                access = Access(brisc, address, 4, cycle, host)
                if value is None:
                    return region.read(access)
                region.write(access, value)
                return 0
        raise MemoryFault(
            "no register at this address",
            address=address,
            size=4,
            write=value is not None,
            core="host" if host else "coprocessor",
            cycle=cycle,
        )

    def host_register(self, address: int, cycle: int, value: int | None = None) -> int:
        """Read (``value`` None) or write an MMIO register from outside the tile (a host through
        PCIe) at ``cycle``: SOFT_RESET_0 releases and holds cores as the host; a write wakes the cores
        polling the register."""
        if value is not None and address == self.arch.soft_reset_register:
            self._set_soft_reset(value, cycle)
            return 0
        result = self.register_access(address, cycle, value, host=True)
        if value is not None:
            self.register_written(address & ~3, cycle)
        return result

    # ------------------------------------------------------------------ the debug unit's port
    def _debug_halt(self, name: str, cycle: int) -> None:
        core = self.core(name)
        if core.state is CoreState.RESET:
            raise UndefinedBehavior("halt of a core held in soft reset", core=name, cycle=cycle)
        if core.state is CoreState.WAITING:  # a parked poll loop: resume it where it stands, then stop
            self._wake(core, cycle, by=("debugger",))
        if core.state is not CoreState.HALTED:
            self._halted_from[name] = core.state
            core.state = CoreState.HALTED
            self.note_side_effect()

    def _debug_resume(self, name: str, cycle: int) -> None:
        core = self.core(name)
        if core.state is CoreState.HALTED:
            core.state = self._halted_from.pop(name, CoreState.RUNNING)
            if core.state is CoreState.RUNNING:
                core.time = max(core.time, cycle)
            self.note_side_effect()

    def _debug_read_register(self, name: str, index: int) -> int:
        core = self.core(name)
        return core.pc if index == 32 else core.reg(index)

    def _debug_write_register(self, name: str, index: int, value: int) -> None:
        core = self.core(name)
        if index == 32:
            core.pc = value
        else:
            core.set_reg(index, value)

    def _debug_memory(self, name: str, address: int, write: bool) -> tuple[np.ndarray, int]:
        """The buffer and offset of the word at ``address`` as core ``name`` sees it: L1, its own local
        RAM, or a core's local RAM by its tile-wide alias."""
        if address & 3:
            raise MemoryFault("unaligned debug access", address=address, size=4, write=write, core=name)
        own = self.local_ram[name]
        if self.arch.local_ram_base <= address < self.arch.local_ram_base + own.nbytes:
            return own, address - self.arch.local_ram_base
        try:
            return self._host_buffer(address, 4, write)
        except MemoryFault:
            raise MemoryFault(
                "debug access outside L1 and local RAM", address=address, size=4, write=write, core=name
            ) from None

    def _debug_read_word(self, name: str, address: int) -> int:
        buffer, offset = self._debug_memory(name, address, write=False)
        return int.from_bytes(buffer[offset : offset + 4].tobytes(), "little")

    def _debug_write_word(self, name: str, address: int, value: int, cycle: int) -> None:
        buffer, offset = self._debug_memory(name, address, write=True)
        data = (value & 0xFFFFFFFF).to_bytes(4, "little")
        if buffer is self.l1:
            self.l1_store(address, data, cycle)  # as a store from outside the core: code and pollers see it
        else:
            buffer[offset : offset + 4] = np.frombuffer(data, np.uint8)

    # ------------------------------------------------------------------ Tensix instruction capture
    def push_room(self, core: Core, cycle: int) -> int:
        """Pushes ``core`` can make from ``cycle`` on without any queue it reaches filling up."""
        pipes = core.push_pipes
        if not pipes:
            return 0
        self.backend.advance_to(min(cycle, self.horizon(core)))
        return min(self.queues[pipe].room() for pipe in pipes)

    def engine_run_pointers(self) -> tuple[int, int, int]:
        """Where native storage reads find the engine (NativeEngine.run_pointers); only asked while
        a core's hooks hold the engine (engine_for_pushes)."""
        return self.backend.native.run_pointers()

    def storage_current(self, values: np.ndarray) -> bool:
        """Native reads of ``values`` (an MmioRegion.storage array) still equal the Python reads."""
        return self.streams.storage_current(values)

    def engine_for_pushes(self, core: Core) -> tuple[int, int] | None:
        """What ``core``'s hooks need to push straight into the native engine (see NativeEngine.attach),
        or None when pushes go through Python."""
        native = getattr(self.backend, "native", None)
        return native.attach() if native is not None else None

    def push(self, core: Core, pipe: int, instruction: int, pc: int, cycle: int, *, inline: bool) -> None:
        """Enter ``instruction`` into ``pipe``'s queue (may raise Stall)."""
        if cycle > self.shared_push_limit(core, pipe):
            raise Stall(f"pipe {pipe} input queue shared with a core behind this one")  # it goes first
        queue = self.queues[pipe]
        horizon = self.horizon(core)
        self.backend.advance_to(min(cycle, horizon))
        if not queue.takes(core.name, cycle):
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
        self.note_pushed(core, 1 << pipe)
        self.note_side_effect()

    def push_batch(self, core: Core, pipe: int, rows: np.ndarray) -> None:
        """Enter instructions the core's native hooks took while the queue had room (queue rows,
        frontend.capture.QE_* columns)."""
        self.queues[pipe].entries.extend_rows(rows)
        core.tensix_pushed += len(rows)
        self.note_pushed(core, 1 << pipe)
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
        """Each pipe's input FIFO: (entries, pushes it takes now), as of the cycle the coprocessor has
        reached."""
        return [(len(queue.entries), queue.room()) for queue in self.queues]

    def _perf_totals(self, cycle: int) -> dict[str, int]:
        """The coprocessor's event totals as of ``cycle``, for the performance counters (a recorder
        backend counts nothing)."""
        if not isinstance(self.backend, Engine):
            return {}
        return perf_totals(self.backend, cycle)

    def _pc_snapshot(self, name: str, access: Access) -> int:
        """A core's pc as a register read sees it: the reading core's is that of the load itself;
        another core's is where it has got to (it is not behind the reader: the region synchronises)."""
        core = self.core(name)
        return access.core.fault_pc() if core is access.core and not access.host else core.pc

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
        if not queue.room():  # full, as INSTRN_BUF_STATUS says
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
            pc = self.reset_pc_of(core.name)
            in_l1 = 0 <= pc <= self.arch.l1_size - 4  # (elsewhere the fetch itself faults)
            if old & bit and not value & bit and in_l1 and core.fetch(pc) == 0:
                # An all-zero word is no instruction of either kind (RISC-V or inline Tensix).
                image = core.image
                entry = getattr(image, "entry", pc)
                hint = (
                    f" (the ELF loaded for it, {image.path}, enters at 0x{entry:x}: "
                    f"tile.start_at({core.name!r}, 0x{entry:x}) starts it there)"
                    if image is not None and entry != pc
                    else ""
                )
                raise InvalidProgram(
                    f"no program loaded on {core.name}: released with zeros at its reset pc{hint}",
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
                core.reset(self.reset_pc_of(core.name))
                core.state = CoreState.RUNNING
                core.time = max(core.time, cycle + RISCV.release_delay)
                changed.add(core)
                if self.events is not None:
                    by = ("core", writer.name) if writer is not None else ("host",)
                    self.events.core_released(core.name, core.time, by, cycle)
            elif value & bit and not old & bit:
                if core.parked:
                    self._hold_parked(core, cycle)
                core.state = CoreState.RESET
                # A core that ran ahead of the hold (it does between synchronisation points) stops
                # at its cycle: released again, it starts from the release, not from where it got.
                core.time = min(core.time, cycle)
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
            if facts.local_ram_alias is None:
                continue
            if facts.local_ram_alias <= address and address + size <= facts.local_ram_alias + ram.nbytes:
                return ram, address - facts.local_ram_alias
        raise MemoryFault(
            "host access outside L1 and local RAM", address=address, size=size, write=write, core="host"
        )
