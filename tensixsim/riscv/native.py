"""Loads (building on first use) the native block and memory hooks in ``native.c``.

The hooks are registered through Unicorn's C API with ctypes, so they run without entering Python.
When no C compiler is available a Python implementation of the same hooks is used: identical results,
roughly 20x slower (tensixsim.native_build says so once on stderr).
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np
import unicorn
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3 import unicorn as _ucmod

from tensixsim.arch.blackhole_csrs import CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH
from tensixsim.native_build import build_library, pure_python_requested
from tensixsim.riscv.hook_state import (
    ATTACH_CALLBACK,
    BHT,
    BLOCK_CACHE,
    HISTORY,
    L0_MAX,
    L0_SEED,
    MMIO_READ_CALLBACK,
    MMIO_WRITE_CALLBACK,
    NO_PIPE,
    NOC,
    PC_REG,
    ROB_MAX,
    SLOTS,
    STOP_SYNC,
    STORE_QUEUE,
    SYNC_NEVER,
    TIMED_REGIONS,
    TIMING_PARAMS,
    X0_REG,
    HookState,
    P,
    StorageCore,
    StorageWindow,
)
from tensixsim.riscv.walk import PythonWalk

_SOURCE = Path(__file__).with_name("native.c")
_uclib = _ucmod.uclib

_INTR_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)


def _build() -> ctypes.CDLL | None:
    lib = build_library("native", [_SOURCE], tag=unicorn.__version__)
    if lib is None:
        return None
    lib.tsim_hooks_size.restype = ctypes.c_uint64
    for name in ("tsim_time_at", "tsim_time_after"):
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
    lib.tsim_forget_blocks.restype = None
    lib.tsim_forget_blocks.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64]
    lib.tsim_shift_timing.restype = None
    lib.tsim_shift_timing.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    lib.tsim_alloc_blocks.restype = ctypes.c_void_p
    lib.tsim_free_blocks.restype = None
    lib.tsim_free_blocks.argtypes = [ctypes.c_void_p]
    if lib.tsim_hooks_size() != ctypes.sizeof(HookState):
        raise RuntimeError("native.c and HookState disagree on the hook struct layout")
    lib.tsim_storage_sizes.restype = ctypes.c_uint64
    if lib.tsim_storage_sizes() != ctypes.sizeof(StorageCore) * 1000 + ctypes.sizeof(StorageWindow):
        raise RuntimeError("native.c and StorageCore/StorageWindow disagree on their layouts")
    return lib


_lib: ctypes.CDLL | bool | None = False


def native_library() -> ctypes.CDLL | None:
    """The compiled hook library, or None when it cannot be built (Python hooks are used then)."""
    global _lib
    if _lib is False:
        _lib = None if pure_python_requested() else _build()
    return _lib  # type: ignore[return-value]


def _fn(name: str) -> int:
    return ctypes.cast(getattr(_uclib, name), ctypes.c_void_p).value or 0


class PageSharing:
    """A tile's record of which cores used which L1 pages, for ordering L1 by page (native.c
    l1_sync_stop): numpy arrays the cores' hooks point at."""

    LINE = 64  # bytes: the granule conflicts are looked for at (unordered_before)

    def __init__(self, l1_size: int, page: int) -> None:
        pages = -(-l1_size // page)
        lines = -(-l1_size // self.LINE)
        self.sharers = np.zeros(pages, np.uint8)  # the cores that have used each page (a bit each)
        self.owner = np.zeros(pages, np.uint8)  # the first of them
        # The latest cycle of an access made while the owner alone used the page; per line, of an
        # access to it and of a store to it.
        self.private_last = np.full(pages, -1, np.int64)
        self.line_last = np.full(lines, -1, np.int64)
        self.line_write = np.full(lines, -1, np.int64)
        self.writers = np.zeros(pages, np.uint8)  # the cores that have stored to each page (a bit each)
        # late[0]: other cores' accesses at or before the cycle of such an access they conflict with.
        self.late = np.zeros(1, np.int64)
        self.page = page

    def noc_writes(self, address: int, size: int, landed: int | None = None) -> None:
        """The NoC writes ``size`` bytes at ``address``: at cycle ``landed``, or (None) a request that
        will write them was made. From now on the cores' accesses to those pages are ordered against
        the NoC's writes (native.c noc_limit). A write that lands on a line a core using the page
        alone has already accessed at ``landed`` or later (it ran ahead before the NoC first wrote
        the page, or the write came from another tile of a chip) is counted in ``late``."""
        pages = slice(address // self.page, (address + size - 1) // self.page + 1)
        if landed is not None and np.any(
            self.line_last[address // self.LINE : (address + size - 1) // self.LINE + 1] >= landed
        ):
            self.late[0] += 1
        self.sharers[pages] |= NOC

    def clear(self) -> None:
        """Nobody has used any page (the tile's clock starts again)."""
        self.sharers[:] = 0
        self.owner[:] = 0
        self.writers[:] = 0
        for cycles in (self.private_last, self.line_last, self.line_write):
            cycles[:] = -1
        self.late[:] = 0


NO_LOOP = 1  # an empty entry of HookState.busy (no instruction is at an odd address; 0 may be a loop head)


class Hooks(PythonWalk):
    """The block/memory hooks of one Unicorn instance and the state they record."""

    def __init__(self, uc: unicorn.Uc, *, mmio_base: int, code_base: int, code_pages: int) -> None:
        self.state = HookState()
        s = self.state
        s.limit = 1 << 62
        s.spin_threshold = s.spin_reset = s.private_spin = 1 << 62
        s.inline_pipe = NO_PIPE
        self.forget_busy_loops()
        # No L1 ordering between cores until on_sync_refresh is given (a lone Unicorn instance).
        s.sync_limit, s.sync_valid = SYNC_NEVER, 1
        s.noc_limit = SYNC_NEVER
        self._sync_refresh: Callable[[], None] = lambda: None
        s.mmio_base = mmio_base
        s.code_base = code_base
        s.code_pages = code_pages
        s.stop = _fn("uc_emu_stop")
        s.reg_read = _fn("uc_reg_read")
        s.reg_write = _fn("uc_reg_write")
        s.mem_read = _fn("uc_mem_read")
        self._handles: list[object] = []
        self._watched: set[int] = set()  # pcs with the code hook (hook_watched)
        self.storage: StorageCore | None = None  # set once a storage window is mapped
        self._storage_keep: list[object] = []  # what native code points at
        lib = native_library()
        self.native = lib is not None
        self._lib = lib
        self._ptr = ctypes.cast(ctypes.pointer(s), ctypes.c_void_p)
        self._code = np.zeros(0, np.uint32)
        if lib is not None:
            s.blocks = lib.tsim_alloc_blocks()
            if not s.blocks:
                raise MemoryError("native hooks: no memory for the block records")
            # Freed with the hooks (the state they live in is kept alive until then).
            weakref.finalize(self, lib.tsim_free_blocks, s.blocks)
            ptr = self._ptr
            for kind, fn in (
                (ucc.UC_HOOK_BLOCK, lib.tsim_block_hook),
                (ucc.UC_HOOK_MEM_READ | ucc.UC_HOOK_MEM_WRITE, lib.tsim_mem_hook),
            ):
                handle = ctypes.c_size_t()
                err = _uclib.uc_hook_add(
                    uc._uch, ctypes.byref(handle), kind, ctypes.cast(fn, ctypes.c_void_p), ptr, 1, 0
                )
                if err != ucc.UC_ERR_OK:
                    raise RuntimeError(f"uc_hook_add failed: {err}")
                self._handles.append(handle)
        else:
            uc.hook_add(ucc.UC_HOOK_BLOCK, self._py_block)
            uc.hook_add(ucc.UC_HOOK_MEM_READ | ucc.UC_HOOK_MEM_WRITE, self._py_mem)

    def install_interrupt(
        self, uc: unicorn.Uc, handler: Callable[[unicorn.Uc, int, object], None], *, zba_zbb: bool
    ) -> None:
        """Route traps to ``handler(uc, intno, user_data)``; natively, Zba/Zbb never reach it."""
        lib = native_library()
        if lib is None:
            uc.hook_add(ucc.UC_HOOK_INTR, handler)
            return
        self._py_intr = _INTR_CALLBACK(lambda uch, intno, user: handler(uc, intno, None))
        self.state.py_intr = ctypes.cast(self._py_intr, ctypes.c_void_p).value
        self.state.zba_zbb = int(zba_zbb)
        handle = ctypes.c_size_t()
        ptr = ctypes.cast(ctypes.pointer(self.state), ctypes.c_void_p)
        fn = ctypes.cast(lib.tsim_intr_hook, ctypes.c_void_p)
        err = _uclib.uc_hook_add(uc._uch, ctypes.byref(handle), ucc.UC_HOOK_INTR, fn, ptr, 1, 0)
        if err != ucc.UC_ERR_OK:
            raise RuntimeError("uc_hook_add(UC_HOOK_INTR) failed")
        self._handles.append(handle)

    def forget_busy_loops(self) -> None:
        """No loop head is known to do real work (native.c busy)."""
        np.frombuffer(self.state.busy, np.uint64)[:] = NO_LOOP

    def on_sync_refresh(self, refresh: Callable[[], None]) -> None:
        """``refresh()`` sets ``state.sync_limit`` and ``state.sync_valid`` when an L1 access finds
        them cleared (see native.c l1_sync_stop); it must not raise."""
        self._sync_refresh = refresh
        self._sync_refresh_c = ATTACH_CALLBACK(refresh)
        self.state.sync_refresh = ctypes.cast(self._sync_refresh_c, ctypes.c_void_p).value

    def share_pages(self, pages: PageSharing, core_bit: int) -> None:
        """The tile's page-sharing record this core's L1 ordering by page uses (native.c
        unordered_before); ``core_bit`` is this core's bit in ``pages.sharers``. ``state.page_order``
        turns it on."""
        s = self.state
        self._pages = pages  # what native code points at
        s.page_sharers, s.page_private_last, s.order_late = (
            pages.sharers.ctypes.data,
            pages.private_last.ctypes.data,
            pages.late.ctypes.data,
        )
        s.page_owner, s.line_last, s.line_write = (
            pages.owner.ctypes.data,
            pages.line_last.ctypes.data,
            pages.line_write.ctypes.data,
        )
        s.page_writers = pages.writers.ctypes.data
        s.core_bit = core_bit

    # ------------------------------------------------------------------ timing walk
    def configure_timing(
        self,
        figures: dict[str, int],
        *,
        l1: np.ndarray,
        local: tuple[int, int],
        aliases: tuple[int, int],
        timed: list[tuple[int, int, int, int]],
    ) -> None:
        """Give the walk its figures, the memory map it classifies accesses by (own local RAM and the
        other cores' aliases as (start, end)) and the MMIO windows with their own (read, write) costs."""
        s = self.state
        for i, name in enumerate(TIMING_PARAMS):
            s.param[i] = figures[name]
        if figures["l1_read_slots"] > SLOTS or figures["remote_read_slots"] > SLOTS:
            raise ValueError(f"at most {SLOTS} read slots per memory")
        if not 0 < figures["store_queue"] <= STORE_QUEUE:
            raise ValueError(f"the store queue holds 1 to {STORE_QUEUE} entries")
        if not 0 < figures["retire_queue"] <= ROB_MAX:
            raise ValueError(f"the retire-order queue holds 1 to {ROB_MAX} entries")
        if not 0 <= figures["l0_lines"] <= L0_MAX or figures["l0_flush_one_in"] < 1:
            raise ValueError(f"the L0 data cache holds 0 to {L0_MAX} lines, flushing one hit in at least 1")
        if len(timed) > TIMED_REGIONS:
            raise ValueError(f"at most {TIMED_REGIONS} MMIO windows with their own costs")
        s.port_share = 1
        self._code = l1.view(np.uint32)
        s.l1 = l1.ctypes.data
        s.l1_size = l1.nbytes
        s.local_base, s.local_size = local[0], local[1] - local[0]
        s.alias_lo, s.alias_hi = aliases
        s.timed_count = len(timed)
        for i, (lo, hi, read, write) in enumerate(timed):
            s.timed_lo[i], s.timed_hi[i], s.timed_read[i], s.timed_write[i] = lo, hi, read, write
        self.reset_timing()
        self.reset_predictor()
        self.reset_cache()
        # Which instructions are watched depends on the figures (fences: l0_lines): every block is
        # checked again.
        ctypes.memset(ctypes.addressof(s) + HookState.watch_key.offset, 0, ctypes.sizeof(s.watch_key))

    def set_core_config(self, cfg0: int, strong_order: bool, fusion: bool) -> None:
        """The core's cfg0 CSR, whether pmacfg0/1 make its loads and stores strongly ordered, and
        whether it fuses adjacent inline Tensix words (the fields the walk reads:
        tensixsim/arch/blackhole_csrs.py)."""
        self.state.cfg0 = cfg0
        self.state.strong_order = int(strong_order)
        self.state.fusion = int(fusion)

    def reset_predictor(self) -> None:
        """A core out of reset: every branch counter weakly not taken. (A parked loop woken keeps
        what the predictor learnt: reset_timing leaves it.)"""
        ctypes.memset(ctypes.addressof(self.state) + HookState.bht.offset, 1, BHT)

    def reset_cache(self) -> None:
        """A core out of reset: its L0 data cache empty, its flush generator at its start. (A parked
        loop woken keeps them: reset_timing leaves them.)"""
        self.l0_restore()
        self._l0_flush()
        self._l0_release_all()
        self.state.l0_rng = L0_SEED

    def cache_state(self) -> bytes:
        """The L0 data cache's lines, their bytes and its flush generator (a parked loop must leave
        them as they were)."""
        s = self.state
        return bytes(s.l0_line) + bytes(s.l0_tag) + bytes(s.l0_data) + s.l0_rng.to_bytes(8, "little")

    def cache_outdated(self, l1: np.ndarray) -> bool:
        """Whether the L0 data cache holds bytes ``l1`` no longer has while its periodic flush is on
        (the flush will show them: see Core.cache_outdated)."""
        s = self.state
        if s.cfg0 & CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH:
            return False
        for i in range(s.param[P["l0_lines"]]):
            line = s.l0_tag[i] - 1
            if line >= 0 and bytes(s.l0_data[i]) != l1[16 * line : 16 * line + 16].tobytes():
                return True
        return False

    def l0_restore(self) -> None:
        """native.c l0_restore(): put back the L1 bytes an L0 hit lent its load (called whenever
        emulation returns, before anything else looks at L1)."""
        s = self.state
        if s.l0_lent:
            lent = ctypes.c_uint64(s.l0_lent_bytes)
            ctypes.memmove(s.l1 + s.l0_lent - 1, ctypes.byref(lent), s.l0_lent_size)
            s.l0_lent = 0

    def reset_timing(self) -> None:
        """A core out of reset: nothing in flight."""
        s = self.state
        for field in (
            "ready",
            "l1_slot",
            "remote_slot",
            "sq_visible",
            "sq_word",
            "sq_last",
            "sq_mask",
            "sq_done",
            "rob",
            "reg_retire",
            "reg_prev_retire",
        ):
            ctypes.memset(
                ctypes.addressof(s) + getattr(HookState, field).offset, 0, ctypes.sizeof(getattr(s, field))
            )
        s.l1_head = s.remote_head = s.sq_head = s.rob_pos = 0
        s.responses = s.stores_done = s.ready_max = s.port_free = s.l1_write_free = s.last_retire = 0
        s.fuse_next = s.fuse_count = s.fuse_cycle = 0

    # ------------------------------------------------------------------ storage windows
    def map_storage(
        self,
        uc: unicorn.Uc,
        base: int,
        size: int,
        storage: tuple[np.ndarray, np.ndarray],
        read: Callable[[int, int], int],
        write: Callable[[int, int, int], None],
        attach: Callable[[], None],
    ) -> None:
        """Map the MMIO window [base, base + size) so that native code answers the reads it can
        from ``storage`` (values, and per 32-bit register an index into them or STORAGE_ZERO /
        STORAGE_PYTHON) and hands the rest, and every write, to ``read(offset, size)`` and
        ``write(offset, size, value)``. ``attach()`` fills in ``self.storage`` when native code
        needs it (see tsim_storage_read)."""
        values, slots = storage
        if values.dtype != np.uint32 or slots.dtype != np.int32 or not values.flags.c_contiguous:
            raise TypeError("storage is a contiguous uint32 array and an int32 slot per register")
        if self.storage is None:
            self.storage = StorageCore(hooks=self._ptr.value, spin_cap=1 << 62, sync_limit=-(1 << 62))
            self._storage_attach = ATTACH_CALLBACK(attach)
            self.storage.attach = ctypes.cast(self._storage_attach, ctypes.c_void_p).value
        py_read = MMIO_READ_CALLBACK(lambda _uch, offset, width, _user: read(offset, width))
        py_write = MMIO_WRITE_CALLBACK(lambda _uch, offset, width, value, _user: write(offset, width, value))
        window = StorageWindow(
            core=ctypes.addressof(self.storage),
            values=values.ctypes.data,
            slots=slots.ctypes.data,
            words=len(slots),
            python=ctypes.cast(py_read, ctypes.c_void_p).value,
        )
        self._storage_keep.append((values, slots, py_read, py_write, window))
        err = _uclib.uc_mmio_map(
            uc._uch,
            ctypes.c_uint64(base),
            ctypes.c_size_t(size),
            ctypes.cast(self._lib.tsim_storage_read, ctypes.c_void_p),
            ctypes.cast(ctypes.pointer(window), ctypes.c_void_p),
            ctypes.cast(py_write, ctypes.c_void_p),
            None,
        )
        if err != ucc.UC_ERR_OK:
            raise RuntimeError(f"uc_mmio_map failed: {err}")

    def forget_code(self, lo: int, hi: int) -> None:
        """Code in [lo, hi) was rewritten: what the walk knows about its blocks is stale."""
        if self._lib is not None:
            self._lib.tsim_forget_blocks(self._ptr, lo, hi)

    def time_at(self, uc: unicorn.Uc, pc: int) -> int:
        """The cycle the instruction at ``pc`` (in the current block) issues at."""
        if self._lib is not None:
            return self._lib.tsim_time_at(uc._uch, self._ptr, pc)
        s = self.state
        if not s.block_addr <= pc <= s.block_addr + s.block_size:
            return self._natural(s.walk_done)  # not in the current block (a faulting access)
        d = s.icount - (s.block_addr + s.block_size - pc) // 4
        self._walk(uc, d)
        return self._step(uc, pc, self._fetch(uc, pc), self._natural(d), commit=False)[0]

    def time_after(self, uc: unicorn.Uc, done: int) -> int:
        """The cycle after the first ``done`` instructions of the slice (all accounted)."""
        if self._lib is not None:
            return self._lib.tsim_time_after(uc._uch, self._ptr, done)
        self._walk(uc, done)
        return self._natural(done)

    def shift_timing(self, delta: int) -> None:
        """Move every timing record by ``delta`` cycles (a parked loop's skipped or undone iterations)."""
        if self._lib is not None:
            self._lib.tsim_shift_timing(self._ptr, delta)
            return
        s = self.state
        for i in range(1, 32):
            s.ready[i] += delta
        for i in range(SLOTS):
            s.l1_slot[i] += delta
            s.remote_slot[i] += delta
        for i in range(STORE_QUEUE):
            s.sq_visible[i] += delta
            s.sq_done[i] += delta
        s.l1_write_free += delta
        s.responses += delta
        s.stores_done += delta
        for i in range(ROB_MAX):
            s.rob[i] += delta
        s.last_retire += delta
        for i in range(32):
            s.reg_retire[i] += delta
            s.reg_prev_retire[i] += delta
        s.port_free += delta
        s.fuse_cycle += delta
        for i in range(L0_MAX):
            s.l0_ready[i] += delta
        for i in range(HISTORY):
            s.history_cycle[i] += delta

    def hook_watched(self, uc: unicorn.Uc, address: int, size: int) -> None:
        """Install the code hook on every watched instruction of the block [address, address + size)
        that has none (the walk needs each divide's operands, the L0 data cache sees each fence:
        STOP_WATCH), and drop the block's translated code so that the hooks take effect."""
        for pc in range(address, address + size, 4):
            if pc in self._watched or not self._is_watched(self._fetch(uc, pc)):
                continue
            if self._lib is not None:
                handle = ctypes.c_size_t()
                fn = ctypes.cast(self._lib.tsim_code_hook, ctypes.c_void_p)
                err = _uclib.uc_hook_add(
                    uc._uch, ctypes.byref(handle), ucc.UC_HOOK_CODE, fn, self._ptr, pc, pc
                )
                if err != ucc.UC_ERR_OK:
                    raise RuntimeError(f"uc_hook_add(UC_HOOK_CODE) failed: {err}")
                self._handles.append(handle)
            else:
                uc.hook_add(ucc.UC_HOOK_CODE, self._py_code, begin=pc, end=pc)
            self._watched.add(pc)
        uc.ctl_remove_cache(address, address + size)
        self.state.watch_key[(address >> 2) % BLOCK_CACHE] = address | size << 32
        self.state.blocks_known = 1

    def stop_before_access(self, uc: unicorn.Uc, address: int, size: int, write: bool) -> None:
        """native.c l1_sync_stop's stop: the core stops before the memory access at its pc, whose
        effects the STOP_SYNC handling puts back (the old bytes and rd are saved here); it retries
        the access when it is the earliest. ``state.fault_cycle`` is the caller's to set."""
        s = self.state
        pc = uc.reg_read(PC_REG)
        insn = self._fetch(uc, pc)
        op = insn & 0x7F
        s.stop_reason = STOP_SYNC
        s.fault_addr, s.fault_size, s.fault_pc = address, size, pc
        s.fault_write = write or op == 0x2F
        s.fault_mem = int.from_bytes(uc.mem_read(address, size), "little")
        s.fault_rd = 0 if op == 0x23 else (insn >> 7) & 31
        s.fault_old = uc.reg_read(X0_REG + s.fault_rd) if s.fault_rd else 0
        uc.reg_write(PC_REG, pc)  # makes Unicorn leave right after this instruction
        uc.emu_stop()

    def probe_stop(self, uc: unicorn.Uc, pc: int | None = None) -> None:
        """native.c's probe_stop: stop a probe before the instruction at ``pc`` (default: the pc)."""
        s = self.state
        if pc is None:
            pc = uc.reg_read(PC_REG)
        s.stop_reason = STOP_SYNC
        s.fault_pc = pc
        s.fault_write = s.fault_rd = s.fault_cycle = 0
        uc.reg_write(PC_REG, pc)
        uc.emu_stop()
