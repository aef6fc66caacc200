"""One baby RISC-V core: a Unicorn RV32 instance plus what Unicorn lacks.

Unicorn executes RV32IM/Zicsr/A at native speed. Everything else traps into Python through one
interrupt hook: Tensix instruction words in the instruction stream (the CPU runs with the C extension
disabled, so no word ever executes as a compressed instruction), Zba/Zbb, every CSR (the core runs in
U-mode with counters disabled, so even ``rdcycle`` traps and reads the emulator's clock), ``ecall``
(the documented "core finished" convention) and faults.

Time: a core runs in slices. Its local cycle is the slice's start cycle plus the instructions it has
retired in the slice (one cycle each) plus extra cycles charged by Python (MMIO latency, stalls).

This module holds the core's state, reset, registers, clock and slice runner; what Unicorn hands back
is riscv/traps.py, the accesses that leave the core riscv/mmio_access.py, and poll-loop probing
riscv/loop_probe.py (mixins of Core).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import numpy as np
from unicorn import Uc, UcError
from unicorn import riscv_const as rv
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3 import unicorn as _ucmod

from tensixsim.arch.common import CoreFacts
from tensixsim.mmio.memory import PAGE, MmioRegion, Stall
from tensixsim.riscv.core_state import CoreState
from tensixsim.riscv.cpu import REG_INDEX, X_REGS, configure_cpu
from tensixsim.riscv.csrs import CsrFile
from tensixsim.riscv.hook_state import (
    PUSH_PORTS,
    STOP_HOLE,
    STOP_LIMIT,
    STOP_MISALIGNED,
    STOP_PUSH,
    STOP_SPIN,
    STOP_SYNC,
    STOP_WATCH,
    SYNC_NEVER,
)
from tensixsim.riscv.loop_probe import (
    MMIO_SPIN_THRESHOLD,
    PRIVATE_POLL_SPIN_THRESHOLD,
    SPIN_THRESHOLD,
    LoopProbe,
)
from tensixsim.riscv.mmio_access import MmioAccess
from tensixsim.riscv.native import Hooks
from tensixsim.riscv.traps import Traps
from tensixsim.tensix.frontend.capture import CORE_INDEX
from tensixsim.timing import RISCV


def _storage_runs(regions: list[MmioRegion]) -> list[list[MmioRegion]]:
    """``regions`` (storage windows) in runs of adjacent ones whose storage is one values array and
    whose registers are one word each (each region's slots cover it exactly)."""
    runs: list[list[MmioRegion]] = []
    for region in sorted(regions, key=lambda r: r.base):
        whole = len(region.storage[1]) * 4 == region.size
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and whole
            and last.base + last.size == region.base
            and last.storage[0] is region.storage[0]
            and len(last.storage[1]) * 4 == last.size
        ):
            runs[-1].append(region)
        else:
            runs.append([region])
    return runs


UNLIMITED_PUSHES = (SYNC_NEVER,) * PUSH_PORTS  # the hooks' push_limit while no pipe is shared

if TYPE_CHECKING:
    from tensixsim.tile import Tile

_UNREACHABLE = 0xFFFFFFFE  # an `until` no 4-aligned pc can hit (reaching `until` costs retranslation)
MMIO_FLOOR = 0xFFB10000  # accesses at or above this go through the PC-recording native hook
_CARRIED = (1 << 64) - 1  # repeat_start of a loop whose first entry was in an earlier slice

_BATCH_IDS = (ctypes.c_int * 31)(*X_REGS[1:])
_uclib = _ucmod.uclib
# Unicorn's translation buffer per core. Its default (1 GiB) made a tile map 5.3 GiB of address
# space and a chip of 140 tiles 740 GiB, which an address-space limit (ulimit -v, a container's) cannot
# hold. A core's translated code is tens of times its RISC-V code, which is kilobytes; should the
# buffer fill, Unicorn flushes it and translates again, as after a code change.
TCG_BUFFER_BYTES = 64 << 20


class Core(MmioAccess, Traps, LoopProbe):
    """One baby core. Built by :class:`~tensixsim.tile.Tile`; read ``pc``, ``reg()``, ``regs``."""

    def __init__(self, tile: Tile, facts: CoreFacts, index: int) -> None:
        self.tile = tile
        self.facts = facts
        self.name = facts.name
        self.csrs = CsrFile(
            facts.name,
            tile.arch.csrs,
            trisc=facts.pipe is not None,
            fusion=tile.arch.ttinsn_fusion,
            cycle_at=self.now,
            retired_at=lambda pc: self.instructions + self._done_before(pc),
            configure=lambda *fields: self.hooks.set_core_config(*fields),
        )
        self.index = index
        self.symbols: dict[str, int] = {}
        self.image: object | None = None  # the last ELF image loaded for this core
        self.images: list = []  # every ElfImage whose code this core runs, oldest first (source lines)
        self.protected_pages: set[int] = set()
        self._clear()
        self._init_cpu(tile)

    def add_image(self, image: object) -> None:
        """Record an ELF whose code this core runs (a newer one at the same path replaces it)."""
        path = getattr(image, "path", None)
        self.images = [i for i in self.images if getattr(i, "path", None) != path]
        self.images.append(image)
        self.image = image

    def _clear(self) -> None:
        """The state a core has at power-on (its CPU and memory maps aside)."""
        self.state = CoreState.RESET
        self.time = 0
        self.instructions = 0
        self.tensix_pushed = 0
        self.pushed_pipes = 0  # a bit per pipe this core pushed into (Tile.shared_push_limit)
        self.exit_code: int | None = None
        self.csrs.reset_values()
        self.wait_reason = ""
        self.wait_key: tuple | None = None  # the tile event a WAITING core waits for
        self.error: BaseException | None = None
        self._pc = self.facts.default_reset_pc
        self._slice_start = 0
        self.known_code_pages: set[int] = set()
        self.watch: list[tuple[int, int]] = []  # (address, size) a parked core polls in L1
        self.watch_registers: dict[int, str] = {}  # MMIO address -> how it changes (Register.watch)
        self.sync_stopped = False
        self._sync_cycle: int | None = None  # (run_slice: a refused synchronised MMIO access's cycle)
        # (cycle, share): a change of the cores out of reset on this core's L1 port, made by another
        # core while this one ran; applied at this core's first synchronised access from that cycle.
        self.pending_port_shares: list[tuple[int, int]] = []
        self.fixed_point_cycle = 0  # earliest cycle from which a parked core's loop was idle
        self.parked = False  # WAITING in a poll loop (not for an event: wait_key)
        self._busy_probes: set[int] = set()  # loop heads whose last probe found real work
        # A parked loop's iteration: cycles, instructions, and the cycle offsets of its reads of each
        # register it polls (Parking._wake resumes it at the iteration that sees a change).
        self.poll_period = 0
        self.poll_instructions = 0
        self.poll_reads: dict[int, list[int]] = {}
        self.poll_l1_reads: list[tuple[int, int, int]] = []  # its L1 loads: (address, size, cycle offset)
        self._probe_reads: list[tuple[int, int]] | None = None  # (register, cycle) while probing
        self._loop_entry = 0  # cycle the loop being counted was first entered
        self._carry_loop = False  # the last slice stopped at a synchronisation point inside a loop
        self._store_cancelled = False  # see cancel_protected_store
        self._probe_snapshot: tuple | None = None  # see probe_iteration / undo_probe

    def _init_cpu(self, tile: Tile) -> None:
        arch = tile.arch
        self.uc = uc = Uc(ucc.UC_ARCH_RISCV, ucc.UC_MODE_RISCV32)
        uc.ctl_set_tcg_buffer_size(TCG_BUFFER_BYTES)
        configure_cpu(uc, atomics=arch.has_zaamo)
        rw = ucc.UC_PROT_READ | ucc.UC_PROT_WRITE
        uc.mem_map_ptr(0, arch.l1_size, ucc.UC_PROT_ALL, tile.l1.ctypes.data)
        own = tile.local_ram[self.name]
        page = tile.local_ram_pages[self.name]
        uc.mem_map_ptr(arch.local_ram_base, page.nbytes, rw, page.ctypes.data)
        # The local RAMs' tile-wide windows are MMIO regions (mmio/local_ram.py): their loads share a path.
        if self.facts.iram is not None:
            # Fetch only: the core's loads and stores do not reach its instruction RAM.
            iram = tile.iram[self.name]
            uc.mem_map_ptr(self.facts.iram[0], iram.nbytes, ucc.UC_PROT_EXEC, iram.ctypes.data)
        self.regions = tile.regions_for(self)
        self.hooks = Hooks(uc, mmio_base=MMIO_FLOOR, code_base=0, code_pages=arch.l1_size // 4096)
        if page.nbytes > own.nbytes:
            self.hooks.state.hole_lo = arch.local_ram_base + own.nbytes
            self.hooks.state.hole_size = page.nbytes - own.nbytes
        self.hooks.on_sync_refresh(self._refresh_sync_limit)
        self.hooks.share_pages(tile.l1_pages, 1 << self.index)
        self._scratch: list[np.ndarray] = []
        ports = 0
        self._storage_values: dict[int, np.ndarray] = {}  # the arrays storage windows read
        stored: list[MmioRegion] = []  # mapped below, adjacent ones over one array as one window
        self._mmio_regions: list[MmioRegion] = []  # those Python answers (_map_mmio)
        for region in self.regions:
            if region.push_pipe is not None and self.hooks.native:
                # Mapped as scratch RAM so that the native memory hook, not a Python MMIO
                # callback, sees the store (it is also where the stored word harmlessly lands).
                scratch = np.zeros(region.size, np.uint8)
                self._scratch.append(scratch)
                uc.mem_map_ptr(region.base, region.size, rw, scratch.ctypes.data)
                self.hooks.state.push_addr[ports] = region.base
                self.hooks.state.push_pipe[ports] = region.push_pipe
                ports += 1
                continue
            if region.storage is not None and self.hooks.native:
                stored.append(region)
                continue
            self._map_mmio(uc, region)
        for run in _storage_runs(stored):
            self._map_storage_run(uc, run)
        if self.hooks.storage is not None:
            # A native storage read lowers the loop check's threshold as _mmio_read does.
            self.hooks.storage.spin_cap = MMIO_SPIN_THRESHOLD
        self.hooks.state.private_spin = PRIVATE_POLL_SPIN_THRESHOLD
        # An inline Tensix word (``.ttinsn``) is exactly a store of the word to INSTRN_BUF_BASE (the ISA
        # documentation's "Push Tensix Instruction"): TRISCn's pipe n, BRISC's pipe 0, none for NCRISC.
        first_push = arch.push_address(0)
        self.inline_pipe = next(
            (r.push_pipe for r in self.regions if r.push_pipe is not None and r.base == first_push), None
        )
        if self.inline_pipe is not None and self.hooks.native:
            self.hooks.state.inline_pipe = self.inline_pipe
        # Pipes this core can push into (inline words and push addresses).
        self.push_pipes = {r.push_pipe for r in self.regions if r.push_pipe is not None}
        self.push_pipe_mask = sum(1 << pipe for pipe in self.push_pipes)
        # No pipe shared with another pusher yet (Tile.shared_push_limits): the hooks push freely.
        self.hooks.state.push_limit[:] = UNLIMITED_PUSHES
        self._push_limited = False
        self.hooks.install_interrupt(uc, self._on_exception, zba_zbb=arch.has_zba_zbb)
        aliases = [c.local_ram_alias for c in arch.cores if c.local_ram_alias is not None] + [
            c.local_ram_alias + c.local_ram_size for c in arch.cores if c.local_ram_alias is not None
        ]
        # Push ports cost a push; the windows timing.py names, their measured costs.
        timed = [
            (r.base, r.base + r.size, RISCV.mmio_read, RISCV.tensix_push)
            for r in self.regions
            if r.push_pipe is not None
        ]
        timed += [
            (r.base, r.base + r.size, *costs)
            for r in self.regions
            if r.push_pipe is None and (costs := RISCV.window(r.name, arch.name)) is not None
        ]
        streams = [r for r in self.regions if r.name.startswith("stream")]
        if streams:  # one window for all stream pages (they are contiguous)
            lo, hi = min(r.base for r in streams), max(r.base + r.size for r in streams)
            timed.append((lo, hi, *RISCV.window_costs("streams", arch.name)))
        # A TRISC's PC-buffer word shares its page with the semaphores and TTSync registers, whatever
        # that page's region is named.
        pcbuf = arch.pcbufs.base if self.name in arch.pcbufs.readers else None
        if pcbuf is not None and not any(lo == pcbuf for lo, _, _, _ in timed):
            timed.append((pcbuf, pcbuf + PAGE, *RISCV.window_costs("pcbuf", arch.name)))
        self.hooks.configure_timing(
            RISCV.walk_figures(self.name, arch.name),
            l1=tile.l1,
            local=(arch.local_ram_base, arch.local_ram_base + own.nbytes),
            aliases=(min(aliases), max(aliases)) if aliases else (0, 0),
            timed=timed,
        )
        self.csrs.apply_timing()
        uc.hook_add(ucc.UC_HOOK_MEM_UNMAPPED, self._on_unmapped)
        uc.hook_add(ucc.UC_HOOK_MEM_WRITE_PROT, self._on_write_protected)
        if self.facts.iram is not None:
            base, size = self.facts.iram
            uc.hook_add(ucc.UC_HOOK_MEM_READ_PROT, self._on_iram_access, begin=base, end=base + size - 1)
        self._l1_words = tile.l1.view(np.uint32)
        self._push_ring = np.frombuffer(self.hooks.state.push_ring, np.uint32).reshape(-1, 4)
        self._batch_values = (ctypes.c_uint32 * 31)()
        self._batch_ptrs = (ctypes.c_void_p * 31)(
            *[ctypes.addressof(self._batch_values) + 4 * i for i in range(31)]
        )

    # ------------------------------------------------------------------ registers and state
    @property
    def pc(self) -> int:
        return self._pc

    @pc.setter
    def pc(self, value: int) -> None:
        self._pc = value & 0xFFFFFFFF

    def reg(self, which: int | str) -> int:
        """Read integer register ``which`` (index or ABI name)."""
        index = REG_INDEX[which] if isinstance(which, str) else which
        return self.uc.reg_read(X_REGS[index])

    def set_reg(self, which: int | str, value: int) -> None:
        index = REG_INDEX[which] if isinstance(which, str) else which
        if index:
            self.uc.reg_write(X_REGS[index], value & 0xFFFFFFFF)

    @property
    def regs(self) -> list[int]:
        return [self.uc.reg_read(r) for r in X_REGS]

    def fingerprint(self) -> tuple[int, bytes]:
        """Program counter and registers: two equal fingerprints are the same architectural state."""
        # One direct C call (the binding's reg_read_batch costs ~30x more per slice), and the
        # registers as one bytes object (31 Python ints cost twice the call).
        _uclib.uc_reg_read_batch(self.uc._uch, _BATCH_IDS, self._batch_ptrs, 31)
        return (self._pc, bytes(self._batch_values))

    def predictor_state(self) -> bytes:
        """The branch predictor's counters (a parked loop must leave them as they were)."""
        return bytes(self.hooks.state.bht)

    def cache_state(self) -> bytes:
        """The L0 data cache's lines and flush generator (a parked loop must leave them as they were)."""
        return self.hooks.cache_state()

    def cache_outdated(self) -> bool:
        """Whether the L0 data cache holds bytes L1 no longer has and will flush them by itself (a
        periodic flush): a loop reading them can still see something new with nothing else changing."""
        return self.hooks.cache_outdated(self.tile.l1)

    def reset(self, pc: int) -> None:
        """Hold-and-release: start afresh at ``pc`` with zeroed registers."""
        for r in X_REGS[1:]:
            self.uc.reg_write(r, 0)
        self._pc = pc
        self.exit_code = None
        self.error = None
        self.parked = False
        self.hooks.reset_timing()
        self.hooks.reset_predictor()
        self.hooks.reset_cache()
        self.csrs.reset()

    def power_on(self) -> None:
        """Back to the state of a new core (Tile.reset): held in reset at cycle 0, registers zero,
        no translated code, no page protected. What the loader recorded (symbols, image) stays: it
        describes memory, which a reset keeps."""
        for page in list(self.protected_pages):
            self.set_protected(page, False)
        self.flush_all_code()
        self.reset(self.facts.default_reset_pc)
        self._clear()
        self.hooks.state.port_share = 1

    # ------------------------------------------------------------------ time
    def _done_before(self, pc: int) -> int:
        """Instructions of this slice retired before the instruction at ``pc``."""
        s = self.hooks.state
        return s.icount - (s.block_addr + s.block_size - pc) // 4

    def retired_before(self, pc: int) -> int:
        """Instructions retired before the one at ``pc`` of the block running now (for hooks)."""
        return self.instructions + self._done_before(pc)

    def now(self, pc: int) -> int:
        """Cycle at which the instruction at ``pc`` (in the current block) issues."""
        return self.hooks.time_at(self.uc, pc)

    def _time_after(self, done: int) -> int:
        """Cycle after the slice's first ``done`` instructions."""
        return self.hooks.time_after(self.uc, done)

    def charge(self, cycles: int) -> None:
        """Add ``cycles`` to the running slice after the instruction being executed (stalls)."""
        s = self.hooks.state
        s.extra += cycles
        s.limit = max(0, s.limit - cycles)  # (unsigned: a longer stall than the budget ends the slice)

    def fault_pc(self) -> int:
        return self.hooks.state.mmio_pc

    # ------------------------------------------------------------------ running
    def run_slice(self, budget: int, spin_threshold: int = SPIN_THRESHOLD, carry: bool = True) -> None:
        """Run until ``budget`` cycles have passed, the core stops, or the scheduler must step in.

        A slice that stopped at a synchronisation point (an MMIO access that had to wait for the
        other cores) resumes the loop count where it was: a poll loop is then recognised although
        the scheduler cuts it into slices of a few iterations."""
        s = self.hooks.state
        s.icount = 0
        s.limit = budget
        s.stop_reason = 0
        s.block_addr = self._pc
        s.block_size = 0
        s.spin_reset = spin_threshold
        if carry and self._carry_loop:
            s.repeat_start = _CARRIED
            s.spin_threshold = min(spin_threshold, s.spin_threshold)
        else:
            s.loop_head = self._pc
            s.since_head = 0
            s.repeat = 0
            s.repeat_start = 0
            s.repeat_cycle = self.time
            s.spin_threshold = spin_threshold
        s.push_count = 0
        s.engine_pushes = 0
        s.engine = None
        if self._push_limited or self.tile.pipes_pushed & self.push_pipe_mask:
            limits = self.tile.shared_push_limits(self)
            s.push_limit[:] = limits or UNLIMITED_PUSHES
            self._push_limited = limits is not None
        s.time_base = self.time
        s.extra = s.stall = s.walk_done = 0
        s.mem_n = s.mem_used = 0
        s.sync_valid = 0  # the other cores moved since the last slice
        # Only a core that pushes is worth it; its first push takes the Python path.
        engine = self.tile.engine_for_pushes(self) if self.hooks.native and self.tensix_pushed else None
        if engine is not None:
            # The hooks push straight into the native coprocessor engine until Python next runs.
            s.engine, s.engine_push = engine
            s.push_horizon = self.tile.horizon(self)
            s.core_index = CORE_INDEX[self.name]
            s.push_free = 0
        else:
            # Room is only worth computing for a core that pushes; a first push takes the Python
            # path, which refreshes it (see _push).
            pushed = self.hooks.native and self.tensix_pushed
            s.push_free = self.tile.push_room(self, self.time) if pushed else 0
        if self.hooks.storage is not None:
            self.hooks.storage.engine = self.hooks.storage.asked = 0  # (filled in at the first storage read)
        self._slice_start = self.time
        self._fixup: tuple[int, int, int] | None = None
        self._store_cancelled = False
        self.sync_stopped = False
        self._sync_cycle = None
        start = self._pc
        while True:
            try:
                self.uc.emu_start(start, _UNREACHABLE)
            except UcError as exc:
                if self.error is None:
                    self.error = self._unicorn_error(exc)
            self.hooks.l0_restore()
            if s.stop_reason != STOP_WATCH:
                break
            # A block with a divide or fence not hooked yet stopped before it ran: hook it (the walk
            # needs each divide's operands, the L0 data cache each fence) and go on with the same
            # slice, as if nothing had stopped.
            s.icount -= s.block_size // 4
            start = s.block_addr
            s.stop_reason = 0
            self.hooks.hook_watched(self.uc, s.block_addr, s.block_size)
            s.block_size = 0  # (entered again: the branch into it was predicted already)
        self._drain_pushes()
        if s.stop_reason in (STOP_LIMIT, STOP_SPIN):
            done = s.icount - s.block_size // 4
            pc = s.block_addr
        elif s.stop_reason in (STOP_MISALIGNED, STOP_HOLE):
            pc = s.fault_pc
            done = self._done_before(pc)
            self._undo_misaligned(s.stop_reason == STOP_HOLE)
        elif s.stop_reason == STOP_SYNC:
            pc = s.fault_pc
            done = self._done_before(pc)
            self._undo_sync_access()
        elif s.stop_reason == STOP_PUSH:
            pc = s.fault_pc
            done = self._done_before(pc)
            if self._store_push(pc, self.now(pc)):
                pc += 4
                done += 1
        else:
            pc = self.uc.reg_read(rv.UC_RISCV_REG_PC)
            done = self._done_before(pc)
        if self._fixup is not None:
            rd, old, pc = self._fixup
            self._fixup = None
            self.set_reg(rd, old)
            done += 1
        self._pc = pc
        self.instructions += done
        self.time = self._time_after(done)
        if s.stop_reason == STOP_SYNC:
            # It cannot act before the stopped access issues: the other cores may run up to there
            # (its issue cycle stays what it was: nothing before it is pending any more).
            self.time = max(self.time, s.fault_cycle)
        elif self.sync_stopped and self._sync_cycle is not None:
            # Likewise for a register access: it issues later than the core's time when it waits for
            # an operand or the retire-order queue.
            self.time = max(self.time, self._sync_cycle)
        if s.repeat_start != _CARRIED:
            self._loop_entry = s.repeat_cycle
        self._carry_loop = carry and (self.sync_stopped or s.stop_reason == STOP_LIMIT)
        # (see native.c: where the other cores' progress cut it, at an L1 access or a register access)
        s.resumed = int(self.sync_stopped)

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.uc.emu_stop()

    def _natural(self, pc: int) -> int:
        """The cycle the instruction at ``pc`` would issue at if nothing held it back."""
        return self._time_after(self._done_before(pc))

    def _stall(self, stall: Stall, pc: int, cycle: int) -> None:
        """The instruction at ``pc`` (due at ``cycle``) cannot complete yet: stop, retry it later."""
        # An inline word that must wait ends its fused group: retried, it issues on its own (else
        # it would be dated in the group's cycle again, and wait again).
        self.hooks.state.fuse_next = 0
        if stall.until is not None and stall.until > cycle:
            # The retried instruction issues at ``until``: count from where it would issue unhindered.
            self.charge(stall.until - self._natural(pc))
        elif stall.wait_key is not None:
            self.state = CoreState.WAITING
            self.wait_key = stall.wait_key
        self.wait_reason = stall.reason
        self.uc.emu_stop()
