"""The Tensix coprocessor: three pipes in front of shared units and state.

Services offered to unit modules (their semantics functions reach them through ``ctx.copro``):

- state: ``sync`` (sync.SyncState), ``thcon`` (thcon.ThconState), ``config`` (config.unit.ConfigState),
  ``adc`` (adc.AdcState), ``frontend`` (frontend.expanders.FrontendState: MOP configs, replay buffers),
  ``regs`` (regs.RegFiles: SrcA, SrcB, Dst), ``unpackers`` (unpack.fetch.UnpackState: context
  counters), ``packer`` (pack.stream.PackState: output streams; pack.stream.PackersState on a chip with
  several packers), ``sfpu`` (sfpu.unit.SfpuState: LRegs, lane flags);
- ``src_valid(bank)`` / ``clear_src_valid(bank, release)``: SrcA/SrcB bank hand-over (regs.py);
- ``l1_read(address, size)`` / ``l1_write(address, data, cycle)``: L1 as the coprocessor sees it
  (writes wake cores polling those addresses and keep code coherent);
- ``register_read(address, cycle)`` / ``register_write(address, value, cycle)``: the tile's MMIO
  registers (config, GPRs, semaphores, streams...) as the coprocessor reaches them;
- ``unit_busy(unit, cycle)``: whether a unit still has an instruction in flight at ``cycle``;
  ``busy_end(unit)``: the first cycle it has none. Besides the ISA table's units, ``"unpacker0"`` /
  ``"unpacker1"`` name one unpacker (its UNPACR's data still moving, unpack/fetch.py) and ``"packer"`` the
  packers with what they accepted still in their pipeline (pack/stream.py);
- ``extend_done(thread, cycle)``: a pipe has work in a unit's background until ``cycle`` (the done check);
- ``next_timed_change()`` / ``apply_timed_changes(cycle)``: state changes due at a later cycle (a
  Src bank handed to the matrix unit once the unpacker's data has landed); the engine applies them
  in cycle order;
- ``state_changed(cycle)``: a unit's state changed outside an instruction (an MMIO write from a
  core); pipes waiting on it try again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

import tensixsim.tensix.matrix.unit  # noqa: F401 - registers semantics
from tensixsim.errors import MemoryFault, SimError
from tensixsim.isa import isa_for
from tensixsim.isa.spec import UNITS, Instruction
from tensixsim.mmio.memory import PAGE, MmioRegion, Register
from tensixsim.tensix import (
    mover,  # noqa: F401 - registers semantics
    regs,
    sync,
    thcon,
)
from tensixsim.tensix.adc import AdcState
from tensixsim.tensix.config import unit as config
from tensixsim.tensix.config.unit import ConfigState
from tensixsim.tensix.frontend import expanders
from tensixsim.tensix.frontend.expanders import FrontendState
from tensixsim.tensix.matrix import (
    legacy,  # noqa: F401 - registers semantics
    moves,
    src_shifts,  # noqa: F401 - registers semantics
)
from tensixsim.tensix.matrix import wormhole as matrix_wormhole  # noqa: F401 - registers semantics
from tensixsim.tensix.pack import stream as pack_stream
from tensixsim.tensix.pack import unit as pack_unit  # noqa: F401 - registers semantics
from tensixsim.tensix.pack import wormhole as pack_wormhole  # noqa: F401 - registers semantics
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.sfpu import (
    convert,
    dst,  # noqa: F401 - registers semantics
    flags,  # noqa: F401 - registers semantics
    floats,
    integers,  # noqa: F401 - registers semantics
    lanes,  # noqa: F401 - registers semantics
    macro,  # noqa: F401 - registers semantics
)
from tensixsim.tensix.sfpu import wormhole as sfpu_wormhole  # noqa: F401 - registers semantics
from tensixsim.tensix.sfpu.unit import SfpuState
from tensixsim.tensix.shared_state import restore
from tensixsim.tensix.sync import SyncState
from tensixsim.tensix.thcon import ThconState
from tensixsim.tensix.unpack import fetch as unpack_fetch
from tensixsim.tensix.unpack import src_banks  # noqa: F401 - registers semantics
from tensixsim.tensix.unpack import unit as unpack_unit  # noqa: F401 - registers semantics
from tensixsim.tensix.unpack import wormhole as unpack_wormhole  # noqa: F401 - registers semantics

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.frontend.capture import PushedInstruction
    from tensixsim.tile import Tile

# Units with an MMIO view (each module defines mmio_registers(copro, core)).
MMIO_UNITS = (sync, thcon, config, expanders)


def _file_registers(registers: dict[int, Register], pages: dict[int, MmioRegion]) -> dict[int, MmioRegion]:
    """File ``registers`` (absolute address -> Register) into ``pages``, a region a page; returns it."""
    for address, register in registers.items():
        page = address - address % PAGE
        region = pages.get(page)
        if region is None:
            region = pages[page] = MmioRegion(f"tensix@0x{page:08x}", page, PAGE)
        if address - page in region.registers:
            raise ValueError(f"two registers at 0x{address:08x}")
        if register.watch is None and register.read is not None:
            # Coprocessor state can change under a polling core at any instruction.
            register = replace(register, watch="coprocessor")
        region.registers[address - page] = register
    return pages


class UnitClock(MutableMapping[str, int]):
    """``Coprocessor.unit_clock`` by unit name; units never busy read as absent. Names that are not
    an ISA unit are kept aside (only the Python model sees them)."""

    def __init__(self, clock: np.ndarray) -> None:
        self._clock = clock
        self._other: dict[str, int] = {}

    def __getitem__(self, unit: str) -> int:
        if unit not in _UNIT_INDEX:
            return self._other[unit]
        value = int(self._clock[_UNIT_INDEX[unit]])
        if not value:
            raise KeyError(unit)
        return value

    def __setitem__(self, unit: str, cycle: int) -> None:
        if unit in _UNIT_INDEX:
            self._clock[_UNIT_INDEX[unit]] = cycle
        else:
            self._other[unit] = cycle

    def __delitem__(self, unit: str) -> None:
        if unit not in self:
            raise KeyError(unit)  # as a dict
        if unit in _UNIT_INDEX:
            self._clock[_UNIT_INDEX[unit]] = 0
        else:
            del self._other[unit]

    def __iter__(self) -> Iterator[str]:
        return iter([UNITS[i] for i in np.flatnonzero(self._clock)] + list(self._other))

    def __len__(self) -> int:
        return int(np.count_nonzero(self._clock)) + len(self._other)

    def clear(self) -> None:
        self._clock[:] = 0
        self._other.clear()


_UNIT_INDEX = {name: i for i, name in enumerate(UNITS)}
NO_L1_WRITTEN = (-1, 0, 0)  # a row of Coprocessor.l1_written when no write is waiting to be notified
# Rows of Coprocessor.l1_written: the separate writes one native instruction may make (a PACR's: each
# packer's data and exponent streams).
L1_WRITTEN_RANGES = 2 * max(pack_stream.PACKER_COUNT.values())


# The units' state objects, whose arrays the native engine holds pointers into.
SHARED_STATES = frozenset(
    {"thcon", "adc", "config", "sync", "frontend", "sfpu", "regs", "packer", "l1_written", "unpackers"}
)


class Coprocessor:
    """State and services of the coprocessor (the pipe engine lives in frontend/pipes.py)."""

    state_epoch = 0  # bumped whenever a shared state object is replaced (tests replace some)

    def __setattr__(self, name: str, value: object) -> None:
        if name in SHARED_STATES:
            object.__setattr__(self, "state_epoch", self.state_epoch + 1)
        object.__setattr__(self, name, value)

    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.arch = tile.arch
        self.isa = isa_for(tile.arch.name)
        self.threads = tile.arch.pipe_count
        self.sync = SyncState.new(self.arch)
        self.thcon = ThconState.new(self.arch)
        self.config = ConfigState.new(self.arch)
        self.adc = AdcState.new(self.arch)
        self.frontend = FrontendState.new(self.arch)
        self.regs = RegFiles.new(self.arch)
        self.unpackers = unpack_fetch.UnpackState.new(self.arch)
        self.packer = pack_stream.new_state(self.arch.name)
        # Rows of [lo, hi, cycle]: the L1 writes a native handler made directly, in order (lo < 0: no
        # more), which the native engine hands to Tile.coprocessor_wrote_l1 (native.take_l1_written)
        # one by one before it goes on.
        self.l1_written = np.array([NO_L1_WRITTEN] * L1_WRITTEN_RANGES, np.int64)
        self.sfpu = SfpuState.new(self.arch)
        # Per unit (isa.spec.UNITS order): the first cycle it has nothing in flight; shared with the
        # native engine, seen by name through ``busy_until``.
        self.unit_clock = np.zeros(len(UNITS), np.int64)
        # [version, version_cycle]: the version is bumped whenever state a waiting instruction may
        # test changes; pipes blocked at an older version try again (from the cycle of the change on).
        self.counters = np.zeros(2, np.int64)
        self._busy_until = UnitClock(self.unit_clock)
        # The configuration unit's registers and the pages they are filed in (mmio_regions).
        self._config_pages: tuple[dict[int, Register], dict[int, MmioRegion]] | None = None
        self.mop_opcode = self.isa.by_name["MOP"].opcode
        self.replay_opcode = self.isa.by_name["REPLAY"].opcode

    def reset(self) -> None:
        """Every unit back to its power-on state (Tile.reset). The state objects and their arrays stay
        the same objects, so views of them (the native engine's, a test's) stay valid."""
        arch = self.arch
        fresh = (
            (self.sync, SyncState.new(arch)),
            (self.thcon, ThconState.new(arch)),
            (self.config, ConfigState.new(arch)),
            (self.adc, AdcState.new(arch)),
            (self.frontend, FrontendState.new(arch)),
            (self.regs, RegFiles.new(arch)),
            (self.unpackers, unpack_fetch.UnpackState.new(arch)),
            (self.packer, pack_stream.new_state(arch.name)),
            (self.sfpu, SfpuState.new(arch)),
        )
        for state, new in fresh:
            restore(state, new)
        self.l1_written[:] = NO_L1_WRITTEN
        self.unit_clock[:] = 0
        self.counters[:] = 0
        self._busy_until.clear()

    def mmio_regions(self, core: Core) -> list[MmioRegion]:
        """The units' registers as ``core`` sees them, grouped into pages. The backend configuration's
        pages are the same for every core with a view (config.unit.mmio_registers builds its registers
        once a tile): they are filed once and the same regions given to each such core."""
        pages: dict[int, MmioRegion] = {}
        for unit in MMIO_UNITS:
            registers = unit.mmio_registers(self, core)
            if unit is config and registers:
                if self._config_pages is None or self._config_pages[0] is not registers:
                    self._config_pages = (registers, _file_registers(registers, {}))
                for page, region in self._config_pages[1].items():
                    if pages.setdefault(page, region) is not region:
                        raise ValueError(f"two units' registers in the page at 0x{page:08x}")
                continue
            _file_registers(registers, pages)
        return list(pages.values())

    @property
    def busy_until(self) -> UnitClock:
        """Per unit name: the first cycle it has nothing in flight (absent: never busy)."""
        return self._busy_until

    @busy_until.setter
    def busy_until(self, values: Mapping[str, int]) -> None:
        self._busy_until.clear()
        self._busy_until.update(values)

    version = property(lambda self: int(self.counters[0]), doc="state version (see bump)")
    version_cycle = property(lambda self: int(self.counters[1]), doc="cycle of the latest state change")

    # ------------------------------------------------------------------ services for units
    def unit_busy(self, unit: str, cycle: int) -> bool:
        return self.busy_end(unit) > cycle

    def busy_end(self, unit: str) -> int:
        """The first cycle from which ``unit`` has nothing in flight (as far as is known now)."""
        if unit in unpack_fetch.UNPACKER_UNITS:
            return unpack_fetch.busy_end(self, unpack_fetch.UNPACKER_UNITS.index(unit))
        if unit == pack_stream.PACKER_UNIT:
            return max(self._busy_until.get("pack", 0), pack_stream.drained(self.packer))
        return self._busy_until.get(unit, 0)

    def extend_done(self, thread: int, cycle: int, now: int | None = None) -> None:
        """Pipe ``thread`` has work in a unit until ``cycle`` (the done check, raw.run_words); ``now``:
        tell the tile at that cycle (for a pipe not issuing now, which may have been reported done)."""
        pipes = getattr(getattr(self.tile, "backend", None), "pipes", None)
        if pipes is None or not 0 <= thread < len(pipes):
            return
        pipes[thread].done_cycle = max(pipes[thread].done_cycle, cycle)
        if now is not None:
            self.tile.pipe_progress(thread, now)

    def next_timed_change(self) -> int | None:
        """The cycle of the earliest state change scheduled for later (None: none). The native engine
        reads the same (regs.src_handover_at) itself: a new kind of timed change must be added there too."""
        return regs.next_handover(self)

    def apply_timed_changes(self, cycle: int) -> None:
        """Make the scheduled changes due by ``cycle``; pipes waiting on them retry from ``cycle``."""
        if regs.apply_handovers(self, cycle):
            self.bump(cycle - 1)
            events = getattr(self.tile, "events", None)
            if events is not None:  # a run being observed: the Src bank owners changed
                from tensixsim.observe.events import state_word

                events.state_changed(cycle, state_word(self))

    def l1_read(self, address: int, size: int) -> bytes:
        self._check_l1(address, size, write=False)
        return self.tile.l1[address : address + size].tobytes()

    def l1_write(self, address: int, data: bytes, cycle: int) -> None:
        self._check_l1(address, len(data), write=True)
        self.tile.l1_store(address, data, cycle)

    def register_read(self, address: int, cycle: int) -> int:
        return self.tile.register_access(address, cycle, None)

    def register_write(self, address: int, value: int, cycle: int) -> None:
        self.tile.register_access(address, cycle, value)

    def src_valid(self, bank: str) -> bool:
        """Whether a SrcA/SrcB bank is handed to the matrix unit (regs.src_valid)."""
        return regs.src_valid(self, bank)

    def clear_src_valid(self, bank: int, release: bool = True) -> None:
        """SETRWC's FlipSrcA / FlipSrcB (regs.clear_src_valid)."""
        regs.clear_src_valid(self, bank, release)

    def seed_prng(self, seed: int) -> None:
        """A write of Config.PRNG_SEED_Seed_Val: (re-)seed the vector unit's PRNG (sfpu/convert.py)."""
        convert.seed_prng(self.sfpu, seed)

    def matrix_hold(self, name: str, cycle: int) -> int | None:
        """Until when the matrix unit holds its instruction ``name`` after a data move (or None)."""
        return moves.held_until(self, name, cycle)

    def state_changed(self, cycle: int) -> None:
        self.bump(cycle)

    def bump(self, cycle: int) -> None:
        counters = self.counters
        counters[0] += 1
        if cycle > counters[1]:
            counters[1] = cycle
        self.tile.coprocessor_changed(cycle)

    # ------------------------------------------------------------------ frontend stages
    def gate_blocks(self, thread: int, instruction: Instruction, cycle: int) -> str | None:
        """Why the wait gate holds ``instruction`` on ``thread`` (None: it may go)."""
        gate = getattr(sync, "gate_blocks", None)
        reason = gate(self, thread, instruction, cycle) if gate is not None else None
        # The vector unit's own interlock on an SFPMAD-family result holds its next reader a cycle.
        return reason if reason is not None else floats.mad_hold(self, instruction, cycle)

    def gate_release_cycle(self, thread: int, cycle: int) -> int | None:
        """When ``thread``'s wait gate opens with no other state change (None: it needs one)."""
        release = getattr(sync, "gate_release_cycle", None)
        cycles = [release(self, thread, cycle) if release is not None else None]
        cycles.append(floats.mad_release_cycle(self, cycle))  # the earlier of the two is safe
        known = [c for c in cycles if c is not None]
        return min(known) if known else None

    def pcbuf_overridden(self, thread: int) -> bool:
        """PCBuf ``thread``'s OverrideEn and OverrideBusy are both set: its done checks answer at
        once (TTSync.md)."""
        pcbufs = getattr(self.tile, "pcbufs", None)
        return pcbufs is not None and pcbufs.overridden(thread)

    def thread_idle(self, thread: int, cycle: int) -> bool:
        """Nothing of ``thread`` is queued, in flight or still executing (CoprocessorDoneCheck)."""
        backend = self.tile.backend
        thread_idle = getattr(backend, "thread_idle", None)
        return thread_idle(thread, cycle) if thread_idle is not None else not self.tile.queues[thread].entries

    def thread_idle_at(self, thread: int) -> int | None:
        """When ``thread`` becomes idle with nothing more pushed: its last instruction has issued
        and only its unit is still busy (None: not known while instructions are queued or held)."""
        idle_at = getattr(self.tile.backend, "thread_idle_at", None)
        return idle_at(thread) if idle_at is not None else None

    def mop_expander_idle(self, thread: int, cycle: int) -> bool:
        """No MOP of ``thread`` is queued before its MOP expander or being expanded
        (MOPExpanderDoneCheck, ManualTTSync.md; BRISC's pushes enter after the expander)."""
        if self.frontend.mop_busy[thread]:
            return False
        mop = self.isa.by_name["MOP"].opcode
        entries = self.tile.queues[thread].entries
        return not any(e.word >> 24 == mop and e.core != "brisc" for e in entries)

    def expand(self, thread: int, word: int, entry: PushedInstruction) -> list[int]:
        """The MOP and replay stages: the words one queue entry becomes at the wait gate.

        BRISC's pushes enter after the MOP expander. The MOP expansion is taken whole when the entry
        is taken, with the configuration of that moment (the documented model copies it then too),
        then each of its words passes the replay expander in order.
        """
        frontend = self.frontend
        # Only a MOP or a REPLAY can fail, possibly after earlier words of its expansion were
        # recorded into the replay buffer: keep the thread's replay state to put back then, so that a
        # failed expansion changes nothing (and raises again if run again).
        opcode = word >> 24
        saved = self._replay_state(thread) if opcode in (self.mop_opcode, self.replay_opcode) else None
        try:
            with self._located(entry):
                words = [word] if entry.core == "brisc" else list(frontend.mop_stage(thread, word))
                replay = frontend.replay(thread)
                out: list[int] = []
                for expanded in words:
                    out.extend(replay.feed(expanded))
                return out
        except SimError:
            if saved is not None:
                self._restore_replay_state(thread, saved)
            raise

    _REPLAY_FIELDS = ("replay_buffer", "replay_written", "record_slot", "record_left", "record_exec")

    def _replay_state(self, thread: int) -> list[np.ndarray]:
        return [getattr(self.frontend, name)[thread].copy() for name in self._REPLAY_FIELDS]

    def _restore_replay_state(self, thread: int, saved: list[np.ndarray]) -> None:
        for name, value in zip(self._REPLAY_FIELDS, saved, strict=True):
            getattr(self.frontend, name)[thread] = value

    @contextmanager
    def _located(self, entry: PushedInstruction) -> Iterator[None]:
        """Give errors raised by the expanders the pushing core, pc and cycle."""
        try:
            yield
        except SimError as exc:
            if exc.core is not None:
                raise
            value = entry.word if exc.value is None else exc.value  # the MOP itself, if nothing closer
            raise type(exc)(
                exc.message, core=entry.core, pc=entry.pc, cycle=entry.cycle, value=value
            ) from exc

    def _check_l1(self, address: int, size: int, *, write: bool) -> None:
        if address < 0 or address + size > self.arch.l1_size or address % min(size, 16):
            raise MemoryFault(
                "coprocessor L1 access out of range or misaligned",
                address=address,
                size=size,
                write=write,
                core="coprocessor",
            )
