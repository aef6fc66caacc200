"""A core's loads and stores that leave Unicorn's own memory: the MMIO windows Python answers (one
pair of callbacks per core), the storage windows native code answers until Python next runs
(native.c tsim_storage_read), the L1 accesses the hooks stop before (a synchronisation point, a
misaligned access, the hole past a local RAM) and undo, stores into write-protected pages (other
cores' code, watched poll addresses; the instruction RAM no load or store reaches) and the code
pages whose translations such stores make stale. A mixin of tensixsim.riscv.core.Core.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
from typing import TYPE_CHECKING

import numpy as np
from unicorn import Uc, UcError
from unicorn import riscv_const as rv
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3 import unicorn as _ucmod

from tensixsim.errors import MemoryFault
from tensixsim.mmio.memory import Access, MmioRegion, Stall
from tensixsim.riscv.cpu import _OPCODE_AMO, X_REGS, amo
from tensixsim.riscv.hook_state import MMIO_READ_CALLBACK, MMIO_WRITE_CALLBACK, STOP_SYNC, SYNC_NEVER
from tensixsim.riscv.loop_probe import MMIO_SPIN_THRESHOLD

if TYPE_CHECKING:
    from tensixsim.arch.common import CoreFacts
    from tensixsim.riscv.native import Hooks
    from tensixsim.tile import Tile

_uclib = _ucmod.uclib


class MmioAccess:
    """The memory-access part of :class:`~tensixsim.riscv.core.Core`, which provides the state named
    below (``Core._clear`` and ``Core._init_cpu``: the latter maps every region through ``_map_mmio``
    or ``_map_storage_run`` and registers the ``_on_*`` memory hooks), its clock (``now``), ``reg``,
    ``_fail`` and ``_stall``; ``fetch`` and ``_drain_pushes`` come from
    :class:`~tensixsim.riscv.traps.Traps`."""

    uc: Uc
    hooks: Hooks
    tile: Tile
    facts: CoreFacts
    name: str
    error: BaseException | None
    sync_stopped: bool
    pending_port_shares: list[tuple[int, int]]
    protected_pages: set[int]
    known_code_pages: set[int]
    _l1_words: np.ndarray
    _storage_values: dict[int, np.ndarray]
    _mmio_regions: list[MmioRegion]
    # The ctypes callbacks Unicorn calls (set by the first _map_mmio): held here so that they live as
    # long as the core.
    _mmio_callbacks: tuple[object, object]
    _probe_reads: list[tuple[int, int]] | None
    _sync_cycle: int | None
    _store_cancelled: bool
    _fixup: tuple[int, int, int] | None

    if TYPE_CHECKING:

        def now(self, pc: int) -> int: ...
        def reg(self, which: int | str) -> int: ...
        def fetch(self, pc: int) -> int: ...
        def _fail(self, error: BaseException) -> None: ...
        def _stall(self, stall: Stall, pc: int, cycle: int) -> None: ...
        def _drain_pushes(self) -> None: ...

    def _attach_storage(self) -> None:
        """Let native code answer reads of the storage windows (tsim_storage_read) until Python
        next runs (_drain_pushes detaches it): what it needs to stand in for _mmio_read, computed
        now. Off while the tile says the storage they read is stale. Called from native code: it
        must not raise."""
        storage = self.hooks.storage
        tile = self.tile
        try:
            engine = tile.engine_for_pushes(self) if self.error is None and not self.sync_stopped else None
            if engine is None or not all(tile.storage_current(v) for v in self._storage_values.values()):
                return
            storage.sync_limit = tile.sync_limit(self)
            storage.engine_run, storage.reached, storage.idle = tile.engine_run_pointers()
            storage.engine = engine[0]
        except BaseException as exc:  # (reported like a failing access: the read goes to Python)
            self._fail(exc)

    @property
    def storage_reads(self) -> int:
        """MMIO reads native code answered from storage windows (the rest went through Python)."""
        return int(self.hooks.storage.served) if self.hooks.storage is not None else 0

    def cancel_protected_store(self) -> None:
        """The store being executed, into a write-protected page, does not happen: a debugger stops
        the core before it (the store runs when the core resumes). Nothing reaches the tile. Holds
        for the running slice only."""
        self._store_cancelled = True

    def _refresh_sync_limit(self) -> None:
        """Tell the hooks up to which cycle this core's L1 accesses may go (native.c l1_sync_stop).
        Called from native code: must not raise."""
        s = self.hooks.state
        try:
            order = self.tile.l1_order
            limit = noc = SYNC_NEVER
            if order:
                limit, noc = self.tile.l1_sync_limit(self), self.tile.noc_sync_limit(self)
                if order != "pages":
                    limit = min(limit, noc)  # (every access is ordered, against the NoC's too)
            s.sync_limit, s.noc_limit = min(limit, SYNC_NEVER), min(noc, SYNC_NEVER)
            s.page_order = order == "pages"
        except BaseException as exc:  # (no limit known: stop at the access, the error reported)
            s.sync_limit = s.noc_limit = -1
            self._fail(exc)
        s.sync_valid = 1

    def _undo_sync_access(self) -> None:
        """The L1 access the hooks stopped before (another core has not reached its cycle yet) ran
        anyway: put back what it changed. The core retries it when it is the earliest."""
        s = self.hooks.state
        if s.fault_write:
            self.tile.l1[s.fault_addr : s.fault_addr + s.fault_size] = np.frombuffer(
                int(s.fault_mem).to_bytes(8, "little")[: s.fault_size], np.uint8
            )
        if s.fault_rd:
            self.uc.reg_write(X_REGS[s.fault_rd], s.fault_old)
        self.sync_stopped = True

    def _undo_misaligned(self, hole: bool = False) -> None:
        s = self.hooks.state
        if s.fault_write:
            # Nothing mapped there: the store wrote nothing, so there is nothing to restore.
            with contextlib.suppress(UcError):
                self.uc.mem_write(s.fault_addr, int(s.fault_old).to_bytes(8, "little")[: s.fault_size])
        elif s.fault_rd:
            self.uc.reg_write(X_REGS[s.fault_rd], s.fault_old)
        what = "misaligned access"
        if hole:
            size = self.facts.local_ram_size
            what = f"unmapped address (past {self.name}'s {size // 1024} KiB local RAM)"
        self.error = MemoryFault(
            what,
            address=s.fault_addr,
            size=s.fault_size,
            write=bool(s.fault_write),
            core=self.name,
            pc=s.fault_pc,
            cycle=self.now(s.fault_pc),
        )

    def set_port_share(self, share: int, cycle: int | None = None) -> None:
        """``share`` cores of this core's L1 access port are out of reset: from now on (``cycle``
        None), or from this core's first synchronised access at or after ``cycle`` (a change another
        core made while this one may have run past it: applying it there keeps the cycles independent
        of the quantum, as synchronised accesses happen in global cycle order)."""
        if cycle is None:
            self.pending_port_shares.clear()
            self.hooks.state.port_share = share
        else:
            self.pending_port_shares.append((cycle, share))

    def _apply_port_shares(self, cycle: int) -> None:
        while self.pending_port_shares and self.pending_port_shares[0][0] <= cycle:
            self.hooks.state.port_share = self.pending_port_shares.pop(0)[1]

    # ------------------------------------------------------------------ memory hooks
    @staticmethod
    def _probe_reads_ahead(region: MmioRegion, address: int | None) -> bool:
        return (
            address is not None
            and (register := region.register_at(address)) is not None
            and register.watch == "write"
        )

    def _mmio_enter(self, region: MmioRegion, address: int | None = None) -> int | None:
        """The cycle of the MMIO access in progress, or None when it must be retried later.

        An access to shared state waits until no other running core is behind it (the access is
        not performed and the instruction retried), then brings the coprocessor up to its cycle.
        """
        self._drain_pushes()
        state = self.hooks.state
        cycle = self.now(state.mmio_pc)
        if region.sync:
            if not self.tile.may_sync(self, cycle):
                if state.probing and not state.probe_strict and self._probe_reads_ahead(region, address):
                    # A probe iteration reads a register only writes change past the other cores, as
                    # it loads L1 (native.c probe_unsynced): parked, the loop is woken by the write
                    # at its cycle, however early (Parking._wake); not parked, it is undone.
                    state.probe_unsynced = 1
                    return cycle
                return self._sync_stop(cycle)
            if not self.tile.sync_coprocessor(self, cycle):
                # Bringing the coprocessor up woke a core behind this access (it stops there, as
                # the woken core may push): that core acts first, this access is retried after.
                return self._sync_stop(cycle)
            if self.pending_port_shares:
                self._apply_port_shares(cycle)
        return cycle

    def _sync_stop(self, cycle: int) -> None:
        """Stop before the MMIO access at ``cycle`` in progress: it is retried when this core is the
        earliest again."""
        self.sync_stopped = True
        self._sync_cycle = cycle  # (it issues there, maybe later than the core's time)
        self.uc.emu_stop()

    @staticmethod
    def _probe_may_repeat(region: MmioRegion, address: int) -> bool:
        """Whether a probe iteration's read of ``address`` may be undone and run again: a register a
        polling core can be parked on (reading it changes nothing). Any other read (a mailbox or
        PC-buffer pop, a turn on the cross-core path to another core's local RAM) may change
        state an undone iteration would not put back."""
        register = region.register_at(address)
        return register is not None and register.watch is not None

    def _map_mmio(self, uc: Uc, region: MmioRegion) -> None:
        """Map ``region`` with Python handling every access: one pair of callbacks per core, told the
        region by its index (the Unicorn binding's mmio_map wraps a new pair for every region, the
        larger part of building a tile)."""
        if not self._mmio_regions:
            self._mmio_callbacks = (
                MMIO_READ_CALLBACK(self._mmio_read_at),
                MMIO_WRITE_CALLBACK(self._mmio_write_at),
            )
        self._mmio_regions.append(region)
        index = ctypes.c_void_p(len(self._mmio_regions))  # (1 up: a null user pointer reads None)
        read, write = (ctypes.cast(cb, ctypes.c_void_p) for cb in self._mmio_callbacks)
        err = _uclib.uc_mmio_map(
            uc._uch, ctypes.c_uint64(region.base), ctypes.c_size_t(region.size), read, index, write, index
        )
        if err != ucc.UC_ERR_OK:
            raise RuntimeError(f"uc_mmio_map failed: {err}")

    def _mmio_read_at(self, _uch: int, offset: int, size: int, index: int) -> int:
        try:
            return self._mmio_read(self.uc, offset, size, self._mmio_regions[index - 1])
        except BaseException as exc:  # (nothing may cross the C boundary)
            self._fail(exc)
            return 0

    def _mmio_write_at(self, _uch: int, offset: int, size: int, value: int, index: int) -> None:
        try:
            self._mmio_write(self.uc, offset, size, value, self._mmio_regions[index - 1])
        except BaseException as exc:
            self._fail(exc)

    def _map_storage_run(self, uc: Uc, run: list[MmioRegion]) -> None:
        """Map adjacent storage regions over one values array as one native window (one Unicorn
        mapping, not one a page: a tile's 64 stream pages cost a core 64 mappings otherwise). What
        native code hands back to Python goes to the region its offset falls in."""
        base, values = run[0].base, run[0].storage[0]
        slots = np.concatenate([r.storage[1] for r in run]) if len(run) > 1 else run[0].storage[1]
        starts = [r.base - base for r in run]

        def region_at(offset: int) -> tuple[int, MmioRegion]:
            r = run[bisect.bisect_right(starts, offset) - 1]
            return offset - (r.base - base), r

        def read(offset: int, size: int) -> int:
            inner, r = region_at(offset)
            return self._mmio_read(uc, inner, size, r)

        def write(offset: int, size: int, value: int) -> None:
            inner, r = region_at(offset)
            self._mmio_write(uc, inner, size, value, r)

        size = run[-1].base + run[-1].size - base
        self.hooks.map_storage(uc, base, size, (values, slots), read, write, self._attach_storage)
        self._storage_values.setdefault(id(values), values)

    def _mmio_read(self, uc: Uc, offset: int, size: int, region: MmioRegion) -> int:
        try:
            state = self.hooks.state
            if state.probing and not self._probe_may_repeat(region, region.base + offset):
                if state.probe_unsynced:
                    # The iteration read past the other cores and may be undone: stop before this
                    # read, as before a store (native.c probe_stop).
                    self._drain_pushes()
                    self._sync_stop(self.now(state.mmio_pc))
                    return 0
                # Performed: from here on the iteration is not undone (a later read past the other
                # cores stops the core instead, as after a store).
                state.probe_strict = 1
            cycle = self._mmio_enter(region, region.base + offset)
            if cycle is None:
                return 0
            value = region.read(Access(self, region.base + offset, size, cycle))
            if region.sync:
                if self._probe_reads is not None:  # by register (a narrow load names a byte of it)
                    self._probe_reads.append(((region.base + offset) & ~3, cycle))
                state = self.hooks.state
                state.spin_threshold = min(state.spin_threshold, MMIO_SPIN_THRESHOLD)
            return value
        except Stall as stall:
            pc = self.hooks.state.mmio_pc
            self._stall(stall, pc, self.now(pc))
        except BaseException as exc:
            self._fail(exc)
        return 0

    def _mmio_write(self, uc: Uc, offset: int, size: int, value: int, region: MmioRegion) -> None:
        if self.hooks.state.stop_reason == STOP_SYNC:
            return  # a probe stopped before this store (native.c probe_stop)
        try:
            cycle = self._mmio_enter(region)
            if cycle is None:
                return
            if region.sync and self.tile.wake_before_write(self, cycle, register=(region.base + offset) & ~3):
                self._sync_stop(cycle)  # a parked poller resumed behind this write: it goes first
                return
            region.write(Access(self, region.base + offset, size, cycle), value & 0xFFFFFFFF)
            self.tile.register_written((region.base + offset) & ~3, cycle, self)
        except Stall as stall:
            pc = self.hooks.state.mmio_pc
            self._stall(stall, pc, self.now(pc))
        except BaseException as exc:
            self._fail(exc)

    def _on_unmapped(self, uc: Uc, access: int, address: int, size: int, value: int, _: object) -> bool:
        self.hooks.l0_restore()
        self._drain_pushes()
        pc = uc.reg_read(rv.UC_RISCV_REG_PC)
        write = access in (ucc.UC_MEM_WRITE_UNMAPPED,)
        what = "fetch from unmapped address" if access == ucc.UC_MEM_FETCH_UNMAPPED else "unmapped address"
        if self.error is None:
            self.error = MemoryFault(
                what,
                address=address,
                size=size,
                write=write,
                core=self.name,
                pc=pc,
                cycle=self.now(pc),  # its issue cycle: where the core stands when it runs on
            )
        return False

    def _on_iram_access(self, uc: Uc, access: int, address: int, size: int, value: int, _: object) -> bool:
        self.hooks.l0_restore()
        # InstructionRAM.md: the Load/Store Unit cannot reach the instruction RAM (a load never
        # returns, a store is dropped): a program error here.
        write = access == ucc.UC_MEM_WRITE_PROT
        pc = uc.reg_read(rv.UC_RISCV_REG_PC)
        self._fail(
            MemoryFault(
                f"{'store to' if write else 'load from'} {self.name}'s instruction RAM, which only its "
                "instruction fetch reaches",
                address=address,
                size=size,
                write=write,
                core=self.name,
                pc=pc,
                cycle=self.now(pc),
            )
        )
        return False

    def _on_write_protected(
        self, uc: Uc, access: int, address: int, size: int, value: int, _: object
    ) -> bool:
        self.hooks.l0_restore()  # (before anything looks at L1: see native.c l0_restore)
        # L1 pages holding other cores' code or watched poll addresses are write-protected here;
        # the store is performed in Python so that the tile can react to it.
        iram = self.facts.iram
        if iram is not None and iram[0] <= address < iram[0] + iram[1]:
            return self._on_iram_access(uc, access, address, size, value, _)
        if self._store_cancelled:
            self._store_cancelled = False
            return True
        if self.hooks.state.stop_reason == STOP_SYNC:
            return True  # the core stopped before this store (native.c l1_sync_stop)
        try:
            self._drain_pushes()
            pc = uc.reg_read(rv.UC_RISCV_REG_PC)
            cycle = self.now(pc)
            if address + size > self.tile.arch.l1_size:
                raise MemoryFault(
                    "write to read-only memory",
                    address=address,
                    size=size,
                    write=True,
                    core=self.name,
                    pc=pc,
                    cycle=cycle,
                )
            insn = self.fetch(pc)
            if self.tile.wake_before_write(self, cycle, span=(address, address + size)):
                # A parked poller resumed behind this store: it goes first, the store is retried.
                self.hooks.state.fault_cycle = cycle
                self.hooks.stop_before_access(uc, address, size, write=True)
                return True
            if insn & 0x7F == _OPCODE_AMO:
                old = int(self._l1_words[address >> 2])
                new = amo((insn >> 27) & 31, old, self.reg((insn >> 20) & 31))
                self._l1_words[address >> 2] = new
                # Unicorn's own completion of the skipped AMO is not relied upon: rd and pc are
                # set once it has stopped.
                self._fixup = ((insn >> 7) & 31, old, pc + 4)
                uc.reg_write(rv.UC_RISCV_REG_PC, pc)
                uc.emu_stop()
            else:
                data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                self.tile.l1[address : address + size] = np.frombuffer(data, np.uint8)
            self.tile.protected_write(self, address, size, cycle)
        except BaseException as exc:
            self._fail(exc)
        return True

    # ------------------------------------------------------------------ code pages
    def new_code_pages(self) -> list[int]:
        """Pages executed for the first time since the last call."""
        s = self.hooks.state
        if not s.new_code_page:
            return []
        s.new_code_page = 0
        executed = np.frombuffer(s.executed, np.uint8)
        pages = [int(p) for p in np.flatnonzero(executed) if int(p) not in self.known_code_pages]
        self.known_code_pages.update(pages)
        return pages

    def forget_code(self, page: int) -> None:
        """Drop translations of ``page`` after someone else rewrote it."""
        self.uc.ctl_remove_cache(page * 4096, page * 4096 + 4096)
        self.hooks.forget_code(page * 4096, page * 4096 + 4096)
        self.hooks.state.executed[page] = 0
        self.known_code_pages.discard(page)

    def set_protected(self, page: int, protected: bool) -> None:
        if protected == (page in self.protected_pages):
            return
        perms = ucc.UC_PROT_READ | ucc.UC_PROT_EXEC if protected else ucc.UC_PROT_ALL
        self.uc.mem_protect(page * 4096, 4096, perms)
        (self.protected_pages.add if protected else self.protected_pages.discard)(page)

    def forget_code_range(self, lo: int, hi: int) -> None:
        """Drop translations of code in [lo, hi) outside L1 (an instruction RAM rewritten)."""
        if hi <= lo:
            return
        self.uc.ctl_remove_cache(lo, hi)
        self.hooks.forget_code(lo, hi)

    def flush_all_code(self) -> None:
        self.uc.ctl_remove_cache(0, self.tile.arch.l1_size)
        self.hooks.forget_code(0, 1 << 32)
        np.frombuffer(self.hooks.state.executed, np.uint8)[:] = 0
        self.hooks.forget_busy_loops()
        self.known_code_pages.clear()
