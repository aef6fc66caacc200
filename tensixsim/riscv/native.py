"""Loads (building on first use) the native block and memory hooks in ``native.c``.

The hooks are registered through Unicorn's C API with ctypes, so they run without entering Python.
When no C compiler is available a Python implementation of the same hooks is used: identical results,
roughly 20x slower (tensixsim.native_build says so once on stderr).
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import unicorn
from unicorn import riscv_const as rv
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3 import unicorn as _ucmod

from tensixsim.arch.blackhole_csrs import (
    CFG0_DIS_BP,
    CFG0_DIS_CSR_SYNC,
    CFG0_DIS_LD_BUF_BYP,
    CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH,
    CFG0_DIS_LOW_CASH,
    CFG0_DIS_REG_FORWARDING,
    CFG0_DIS_ST_MERGE,
    CFG0_SYNC_ALL_OPS,
)
from tensixsim.native_build import build_library, pure_python_requested

_SOURCE = Path(__file__).with_name("native.c")
_uclib = _ucmod.uclib

STOP_NONE, STOP_LIMIT, STOP_MISALIGNED, STOP_SPIN, STOP_PUSH, STOP_HOLE, STOP_SYNC = 0, 1, 2, 3, 4, 5, 6
STOP_WATCH = 7  # a block holds a watched instruction without its code hook (Hooks.hook_watched)
SYNC_NEVER = 1 << 62  # native.c: no other core running (tensix/frontend.py NEVER)
NOC = 0x80  # native.c NOC_SHARER: PageSharing.sharers' bit for the NoC (the cores have 1 << index)
PUSH_RING, PUSH_PORTS = 256, 3
NO_PIPE = (1 << 64) - 1


class PushEntry(ctypes.Structure):
    """Mirror of ``struct push_entry``."""

    _fields_ = [
        ("word", ctypes.c_uint32),
        ("pc", ctypes.c_uint32),
        ("done", ctypes.c_int32),
        ("pipe", ctypes.c_uint32),
    ]


MEM_WRITE = ucc.UC_MEM_WRITE
PROBE_READS = 64  # native.c: loads recorded while probing a loop
MEM_LOG, SLOTS, STORE_QUEUE, TIMED_REGIONS, BLOCK_CACHE = 64, 8, 8, 32, 2048  # native.c's timing-walk sizes
ROB_MAX, DIV_LOG = 16, 64  # native.c: retire-order queue entries modelled, divides logged per block
HISTORY = 16  # native.c: blocks remembered to date a late-recognised loop from its first iteration
BHT = 256  # native.c: branch counters of the frontend's predictor
L0_MAX = 4  # native.c: L0 data cache entries at most
L0_SEED = 0x2545F491  # the periodic L0 flush's generator out of reset (xorshift: never 0)
L0_PASSED, L0_MISS, L0_HIT, L0_HIT_FLUSH = 0, 1, 2, 3  # native.c: what the L0 data cache did for an access
# native.c's P_* order: the RiscvTiming figures the walk reads.
TIMING_PARAMS = (
    "l1_load_latency",
    "l1_read_slots",
    "l1_read_occupancy",
    "l1_store_drain",
    "local_load_latency",
    "local_store_visible",
    "remote_load_latency",
    "remote_read_slots",
    "remote_read_occupancy",
    "mul_latency",
    "div_min",
    "div_fast",
    "atomic_latency",
    "csr",
    "store_queue",
    "mmio_read",
    "mmio_write",
    "tensix_push",
    "l1_port_cycles",
    "l1_port_atomic",
    "fence",
    "store_done",
    "retire_queue",
    "l1_store_conflict",
    "branch_mispredict",
    "mul_hold",
    "l1_store_coalesce",
    "l0_lines",
    "l0_hit_latency",
    "l0_flush_one_in",
)
PC_REG = 190
X0_REG = 1


class HookState(ctypes.Structure):
    """Mirror of ``struct core_hooks`` in native.c."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "icount",
            "limit",
            "block_addr",
            "block_size",
            "stop_reason",
            "fault_addr",
            "fault_size",
            "fault_pc",
            "fault_write",
            "fault_old",
            "fault_rd",
            "mmio_pc",
            "mmio_base",
            "code_base",
            "code_pages",
            "new_code_page",
            "loop_head",
            "since_head",
            "repeat",
            "repeat_start",
            "spin_threshold",
            "spin_reset",
        )
    ] + [
        ("stop", ctypes.c_void_p),
        ("reg_read", ctypes.c_void_p),
        ("reg_write", ctypes.c_void_p),
        ("mem_read", ctypes.c_void_p),
        ("py_intr", ctypes.c_void_p),
        ("push_free", ctypes.c_uint64),
        ("push_count", ctypes.c_uint64),
        ("inline_pipe", ctypes.c_uint64),
        ("push_addr", ctypes.c_uint64 * PUSH_PORTS),
        ("push_pipe", ctypes.c_uint64 * PUSH_PORTS),
        ("pending_word", ctypes.c_uint64),
        ("pending_pipe", ctypes.c_uint64),
        ("zba_zbb", ctypes.c_uint64),
        ("busy", ctypes.c_uint64 * 64),
        ("executed", ctypes.c_uint8 * 1024),
        ("push_ring", PushEntry * PUSH_RING),
        ("engine", ctypes.c_void_p),
        ("engine_push", ctypes.c_void_p),
        ("time_base", ctypes.c_int64),
        ("push_horizon", ctypes.c_int64),
        ("core_index", ctypes.c_uint64),
        ("engine_pushes", ctypes.c_uint64),
        ("push_limit", ctypes.c_int64 * PUSH_PORTS),
        ("pushed_pipes", ctypes.c_uint64),
        ("probing", ctypes.c_uint64),
        ("probe_wrote", ctypes.c_uint64),
        ("probe_count", ctypes.c_uint64),
        ("probe_addr", ctypes.c_uint64 * PROBE_READS),
        ("probe_size", ctypes.c_uint64 * PROBE_READS),
        ("probe_cycle", ctypes.c_int64 * PROBE_READS),
        ("extra", ctypes.c_int64),
        ("stall", ctypes.c_int64),
        ("walk_done", ctypes.c_uint64),
        ("repeat_cycle", ctypes.c_int64),
        ("mem_n", ctypes.c_uint64),
        ("mem_used", ctypes.c_uint64),
        ("mem_addr", ctypes.c_uint64 * MEM_LOG),
        ("ready", ctypes.c_int64 * 32),
        ("l1_slot", ctypes.c_int64 * SLOTS),
        ("remote_slot", ctypes.c_int64 * SLOTS),
        ("l1_head", ctypes.c_uint64),
        ("remote_head", ctypes.c_uint64),
        ("sq_visible", ctypes.c_int64 * STORE_QUEUE),
        ("sq_word", ctypes.c_uint64 * STORE_QUEUE),
        ("sq_last", ctypes.c_uint64 * STORE_QUEUE),
        ("sq_mask", ctypes.c_uint64 * STORE_QUEUE),
        ("sq_done", ctypes.c_int64 * STORE_QUEUE),
        ("sq_head", ctypes.c_uint64),
        ("l1_write_free", ctypes.c_int64),
        ("responses", ctypes.c_int64),
        ("stores_done", ctypes.c_int64),
        ("rob", ctypes.c_int64 * ROB_MAX),
        ("rob_pos", ctypes.c_uint64),
        ("last_retire", ctypes.c_int64),
        ("reg_retire", ctypes.c_int64 * 32),
        ("reg_prev_retire", ctypes.c_int64 * 32),
        ("div_log", ctypes.c_int64 * DIV_LOG),
        ("div_n", ctypes.c_uint64),
        ("div_used", ctypes.c_uint64),
        ("watch_key", ctypes.c_uint64 * BLOCK_CACHE),
        ("port_free", ctypes.c_int64),
        ("port_share", ctypes.c_int64),
        ("l1", ctypes.c_void_p),
        ("l1_size", ctypes.c_uint64),
        ("local_base", ctypes.c_uint64),
        ("local_size", ctypes.c_uint64),
        ("alias_lo", ctypes.c_uint64),
        ("alias_hi", ctypes.c_uint64),
        ("timed_count", ctypes.c_uint64),
        ("timed_lo", ctypes.c_uint64 * TIMED_REGIONS),
        ("timed_hi", ctypes.c_uint64 * TIMED_REGIONS),
        ("timed_read", ctypes.c_int64 * TIMED_REGIONS),
        ("timed_write", ctypes.c_int64 * TIMED_REGIONS),
        ("param", ctypes.c_int64 * len(TIMING_PARAMS)),
        ("ready_max", ctypes.c_int64),
        ("blocks", ctypes.c_void_p),  # native.c's fast-path block records (C only)
        ("history_addr", ctypes.c_uint64 * HISTORY),
        ("history_cycle", ctypes.c_int64 * HISTORY),
        ("history_pos", ctypes.c_uint64),
        ("hole_lo", ctypes.c_uint64),
        ("hole_size", ctypes.c_uint64),
        ("sync_limit", ctypes.c_int64),
        ("sync_valid", ctypes.c_uint64),
        ("sync_refresh", ctypes.c_void_p),
        ("fault_mem", ctypes.c_uint64),
        ("fault_cycle", ctypes.c_int64),
        ("probe_unsynced", ctypes.c_uint64),
        ("probe_strict", ctypes.c_uint64),
        ("resumed", ctypes.c_uint64),
        ("page_order", ctypes.c_uint64),
        ("page_sharers", ctypes.c_void_p),
        ("page_private_last", ctypes.c_void_p),
        ("order_late", ctypes.c_void_p),
        ("core_bit", ctypes.c_uint64),
        ("page_owner", ctypes.c_void_p),
        ("line_last", ctypes.c_void_p),
        ("line_write", ctypes.c_void_p),
        ("noc_limit", ctypes.c_int64),
        ("page_writers", ctypes.c_void_p),
        ("private_spin", ctypes.c_uint64),
        ("blocks_known", ctypes.c_uint64),
        ("bht", ctypes.c_uint8 * BHT),
        ("cfg0", ctypes.c_uint64),
        ("strong_order", ctypes.c_uint64),
        ("fusion", ctypes.c_uint64),
        ("fuse_next", ctypes.c_uint64),
        ("fuse_count", ctypes.c_uint64),
        ("fuse_cycle", ctypes.c_int64),
        ("l0_line", ctypes.c_uint64 * L0_MAX),
        ("l0_ready", ctypes.c_int64 * L0_MAX),
        ("l0_rng", ctypes.c_uint64),
        ("l0_tag", ctypes.c_uint64 * L0_MAX),
        ("l0_data", (ctypes.c_uint8 * 16) * L0_MAX),
        ("l0_log", ctypes.c_uint8 * MEM_LOG),
        ("l0_lent", ctypes.c_uint64),
        ("l0_lent_size", ctypes.c_uint64),
        ("l0_lent_bytes", ctypes.c_uint64),
    ]


class StorageCore(ctypes.Structure):
    """Mirror of ``struct storage_core`` in native.c: what one core's storage windows share."""

    _fields_ = [
        ("hooks", ctypes.c_void_p),
        ("engine", ctypes.c_void_p),
        ("attach", ctypes.c_void_p),
        ("asked", ctypes.c_int64),
        ("engine_run", ctypes.c_void_p),
        ("reached", ctypes.c_void_p),
        ("idle", ctypes.c_void_p),
        ("sync_limit", ctypes.c_int64),
        ("spin_cap", ctypes.c_uint64),
        ("served", ctypes.c_uint64),
    ]


class StorageWindow(ctypes.Structure):
    """Mirror of ``struct storage_window`` in native.c: one MMIO window of plain storage."""

    _fields_ = [
        ("core", ctypes.c_void_p),
        ("values", ctypes.c_void_p),
        ("slots", ctypes.c_void_p),
        ("words", ctypes.c_uint64),
        ("python", ctypes.c_void_p),
        ("python_user", ctypes.c_void_p),
    ]


_ATTACH = ctypes.CFUNCTYPE(None)
# Unicorn's uc_cb_mmio_read_t / uc_cb_mmio_write_t.
MMIO_READ_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_void_p
)
MMIO_WRITE_CALLBACK = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_uint64, ctypes.c_void_p
)

LOOP_BLOCKS = 8
P = {name: i for i, name in enumerate(TIMING_PARAMS)}


def _is_divide(w: int) -> bool:
    return w & 0x7F == 0x33 and w >> 25 == 1 and (w >> 12) & 7 >= 4


def divide_cycles(param: Sequence[int], f3: int, a: int, b: int) -> int:
    """native.c divide_cycles: the EX1 cycles of div/divu/rem/remu (f3) of ``a`` by ``b``."""
    signed = not f3 & 1
    if b <= 1 or (signed and a == 0x80000000 and b == 0xFFFFFFFF):
        return param[P["div_fast"]]
    magnitude = (-a) & 0xFFFFFFFF if signed and a & 0x80000000 else a
    return max(param[P["div_min"]], magnitude.bit_length() + 1)


CLASS_L1, CLASS_LOCAL, CLASS_REMOTE, CLASS_MMIO = 0, 1, 2, 3
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


class Hooks:
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
        self._sync_refresh_c = _ATTACH(refresh)
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
            self._storage_attach = _ATTACH(attach)
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

    # Python twins of native.c's walk (used only without a compiler); the same steps, in the same
    # order, so that both paths give the same cycles.
    def _natural(self, done: int) -> int:
        s = self.state
        return s.time_base + done + s.extra + s.stall

    def _fetch(self, uc: unicorn.Uc, pc: int) -> int:
        if pc + 4 <= self.state.l1_size:
            return int(self._code[pc >> 2])
        return int.from_bytes(uc.mem_read(pc, 4), "little")

    def _walk(self, uc: unicorn.Uc, target: int) -> None:
        s = self.state
        target = min(target, s.icount)  # nothing past the instructions entered
        end = s.block_addr + s.block_size
        while s.walk_done < target:
            pc = end - 4 * (s.icount - s.walk_done)
            n = self._natural(s.walk_done)
            t, after = self._step(uc, pc, self._fetch(uc, pc), n, commit=True)
            s.stall += t - n + after
            s.walk_done += 1

    def _predict(self, uc: unicorn.Uc, next_pc: int) -> None:
        """native.c predict(): the branch ending the block just left, against its counter."""
        s = self.state
        pc = s.block_addr + s.block_size - 4
        op = self._fetch(uc, pc) & 0x7F
        if s.cfg0 & CFG0_DIS_BP:
            if op in (0x63, 0x6F, 0x67) and next_pc != pc + 4:
                s.stall += s.param[P["branch_mispredict"]]
            return
        if op != 0x63:
            return
        taken = next_pc != pc + 4
        i = (pc >> 2) % BHT
        if (s.bht[i] >= 2) != taken:
            s.stall += s.param[P["branch_mispredict"]]
        s.bht[i] = min(s.bht[i] + 1, 3) if taken else max(s.bht[i] - 1, 0)

    def _next_access(self) -> int:
        s = self.state
        i = s.mem_used
        s.mem_used += 1
        return s.mem_addr[i] if i < s.mem_n and i < MEM_LOG else 0

    def _region_class(self, a: int) -> int:
        s = self.state
        if a < s.l1_size:
            return CLASS_L1
        if 0 <= a - s.local_base < s.local_size:
            return CLASS_LOCAL
        if s.alias_lo <= a < s.alias_hi:
            return CLASS_REMOTE
        return CLASS_MMIO

    def _mmio_cost(self, a: int, write: bool) -> int:
        s = self.state
        for i in range(s.timed_count):
            if s.timed_lo[i] <= a < s.timed_hi[i]:
                return s.timed_write[i] if write else s.timed_read[i]
        return s.param[P["mmio_write" if write else "mmio_read"]]

    def _port_grant(self, t: int, cycles: int, commit: bool) -> int:
        s = self.state
        grant = max(t, s.port_free)
        if commit:
            s.port_free = grant + s.port_share * cycles
        return grant

    def _queue_drained(self, t: int) -> int:
        return max(t, *self.state.sq_visible)

    def _store(self, a: int, size: int, c: int, t: int, commit: bool) -> tuple[int, int]:
        """native.c store(): (issue cycle, cycles the core waits after it)."""
        s, p = self.state, self.state.param
        rear = (s.sq_head + STORE_QUEUE - 1) % STORE_QUEUE
        data = ((1 << size) - 1) << (a & 15)
        if (
            c == CLASS_L1
            and p[P["l1_store_coalesce"]]
            and not s.cfg0 & CFG0_DIS_ST_MERGE
            and s.sq_visible[rear] > t
            and s.sq_mask[rear] >> 16 == (a >> 4) + 1
            and abs(a - s.sq_last[rear]) <= 4
        ):
            if commit:
                mask = (s.sq_mask[rear] | data) & 0xFFFF
                s.sq_mask[rear] = (s.sq_mask[rear] & ~0xFFFF) | mask
                s.sq_last[rear] = a
                if mask == 0xFFFF:
                    leave = max(t + 1, s.sq_visible[rear] - p[P["l1_store_drain"]] + 1)
                    if leave < s.sq_visible[rear]:
                        s.sq_visible[rear] = s.l1_write_free = leave
                s.stores_done = max(s.stores_done, t + p[P["store_done"]])
                s.sq_done[rear] = max(s.sq_done[rear], t + p[P["store_done"]])
            return t, 0
        i = s.sq_head
        oldest = (i + STORE_QUEUE - p[P["store_queue"]]) % STORE_QUEUE
        t = max(t, s.sq_visible[oldest] - 1)
        block = 0
        if c == CLASS_L1:
            start = max(t + 1, s.l1_write_free)
            start = max(start, self._port_grant(t, p[P["l1_port_cycles"]], commit) + 1)
            leave = start + (1 if data == 0xFFFF else p[P["l1_store_drain"]])
            if commit:
                s.l1_write_free = leave
        elif c == CLASS_MMIO:
            cost = self._mmio_cost(a, True)
            block = cost - 1
            leave = t + cost
        else:
            leave = t + p[P["local_store_visible"]]
        if commit:
            s.sq_word[i] = a >> 2
            s.sq_last[i] = a
            s.sq_mask[i] = ((a >> 4) + 1) << 16 | data if c == CLASS_L1 else 0
            s.sq_visible[i] = leave
            s.sq_done[i] = t + p[P["store_done"]]
            s.sq_head = (i + 1) % STORE_QUEUE
            s.stores_done = max(s.stores_done, t + p[P["store_done"]])
        return t, block

    def _store_conflict(self, a: int, t: int) -> bool:
        """native.c store_conflict(): an L1 read at ``t`` overlaps a store not yet performed."""
        s = self.state
        for i in range(STORE_QUEUE):
            mask = s.sq_mask[i]
            if s.sq_done[i] > t and mask >> 16 == (a >> 4) + 1 and mask & (0xF << (a & 12)):
                return True
        return False

    def _load_wait(self, a: int, t: int) -> int:
        """native.c load_wait(): when a load not from L1 may leave EX1."""
        s = self.state
        for i in range(STORE_QUEUE):
            if s.sq_visible[i] > t and s.sq_word[i] == a >> 2:
                t = s.sq_visible[i]
        return t

    def _source(self, r: int, t: int) -> int:
        if not r:
            return t
        s = self.state
        t = max(t, s.ready[r])
        if s.reg_prev_retire[r] >= t:
            t = s.reg_prev_retire[r] + 1
        if s.cfg0 & CFG0_DIS_REG_FORWARDING and s.reg_retire[r] >= t:
            t = s.reg_retire[r] + 1
        return t

    def _fence_hold(self, t: int) -> int:
        """native.c fence_hold()."""
        s = self.state
        hold = 0 if s.cfg0 & CFG0_DIS_CSR_SYNC else s.param[P["fence"]] - 1
        return max(hold, s.stores_done - t)

    def _strongly_ordered(self, t: int) -> int:
        """native.c strongly_ordered()."""
        fence = max(self._queue_drained(t), self.state.responses)
        return fence + 1 + self._fence_hold(fence)

    def _l0_on(self) -> bool:
        s = self.state
        return bool(s.param[P["l0_lines"]]) and not s.cfg0 & CFG0_DIS_LOW_CASH

    def _l0_index(self, lines: ctypes.Array, line: int) -> int:
        """native.c l0_index(): the entry of ``lines`` (l0_line or l0_tag) holding ``line``, or -1."""
        for i in range(self.state.param[P["l0_lines"]]):
            if lines[i] == line + 1:
                return i
        return -1

    @staticmethod
    def _l0_to_front(lines: ctypes.Array, payload: ctypes.Array, i: int, line: int) -> None:
        """native.c l0_to_front(): entry ``i`` comes first, holding ``line``, its payload as it was."""
        size, at = ctypes.sizeof(payload) // len(payload), ctypes.addressof(payload)
        kept = ctypes.string_at(at + i * size, size)
        ctypes.memmove(ctypes.addressof(lines) + 8, ctypes.addressof(lines), 8 * i)
        ctypes.memmove(at + size, at, i * size)
        lines[0] = line + 1
        ctypes.memmove(at, kept, size)

    def _l0_remove(self, lines: ctypes.Array, payload: ctypes.Array, line: int) -> None:
        """native.c l0_remove(): the entry holding ``line``, if any, leaves."""
        i, n = self._l0_index(lines, line), self.state.param[P["l0_lines"]]
        if i < 0:
            return
        size, at = ctypes.sizeof(payload) // len(payload), ctypes.addressof(payload)
        ctypes.memmove(
            ctypes.addressof(lines) + 8 * i, ctypes.addressof(lines) + 8 * (i + 1), 8 * (n - 1 - i)
        )
        ctypes.memmove(at + i * size, at + (i + 1) * size, (n - 1 - i) * size)
        lines[n - 1] = 0

    def _l0_find(self, line: int) -> int:
        return self._l0_index(self.state.l0_line, line)

    def _l0_use(self, i: int, line: int, ready: int) -> None:
        """native.c l0_use(): entry ``i`` comes first, holding ``line`` from ``ready`` on."""
        s = self.state
        self._l0_to_front(s.l0_line, s.l0_ready, i, line)
        s.l0_ready[0] = ready

    def _l0_drop(self, line: int) -> None:
        self._l0_remove(self.state.l0_line, self.state.l0_ready, line)

    def _l0_flush(self) -> None:
        ctypes.memset(
            ctypes.addressof(self.state) + HookState.l0_line.offset, 0, ctypes.sizeof(self.state.l0_line)
        )

    def _l0_chance(self) -> bool:
        """native.c l0_chance(): the xorshift draw deciding whether a hit flushes the cache."""
        s = self.state
        x = s.l0_rng & 0xFFFFFFFF
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        s.l0_rng = x
        return x % s.param[P["l0_flush_one_in"]] == 0

    # The L0 data cache as the core's loads meet it (native.c l0_held ... l0_performed).
    def _l0_held(self, line: int) -> int:
        return self._l0_index(self.state.l0_tag, line)

    def _l0_keep(self, i: int, line: int) -> None:
        self._l0_to_front(self.state.l0_tag, self.state.l0_data, i, line)

    def _l0_release(self, line: int) -> None:
        self._l0_remove(self.state.l0_tag, self.state.l0_data, line)

    def _l0_release_all(self) -> None:
        s = self.state
        ctypes.memset(ctypes.addressof(s) + HookState.l0_tag.offset, 0, ctypes.sizeof(s.l0_tag))

    def _atomic_access(self, uc: unicorn.Uc) -> bool:
        return self._fetch(uc, uc.reg_read(PC_REG)) & 0x7F == 0x2F

    def _l0_answer(self, uc: unicorn.Uc, address: int, size: int, i: int) -> bool:
        """native.c l0_answer(): an L1 load the L0 data cache answers, with the bytes it holds."""
        s = self.state
        if not s.l0_tag[0] or not self._l0_on():
            return False
        way = self._l0_held(address >> 4)
        if way < 0 or self._atomic_access(uc):
            return False
        held = bytes(s.l0_data[way])[address & 15 : (address & 15) + size]
        current = ctypes.string_at(s.l1 + address, size)
        if current != held:
            s.l0_lent, s.l0_lent_size = address + 1, size
            s.l0_lent_bytes = int.from_bytes(current, "little")
            ctypes.memmove(s.l1 + address, held, size)
        self._l0_keep(way, address >> 4)
        flush = not s.cfg0 & CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH and self._l0_chance()
        if flush:
            self._l0_release_all()
        if i < MEM_LOG:
            s.l0_log[i] = L0_HIT_FLUSH if flush else L0_HIT
        return True

    def _l0_performed(self, uc: unicorn.Uc, kind: int, address: int, i: int) -> None:
        """native.c l0_performed(): an L1 access made (a load fills, a store drops, an atomic flushes)."""
        s = self.state
        done = L0_PASSED
        if kind == MEM_WRITE:
            if s.l0_tag[0]:
                self._l0_release(address >> 4)
        elif s.l0_tag[0] or self._l0_on():
            if self._atomic_access(uc):
                self._l0_release_all()
            elif self._l0_on():
                last = s.param[P["l0_lines"]] - 1
                s.l0_data[last][:] = ctypes.string_at(s.l1 + (address & ~15), 16)
                self._l0_keep(last, address >> 4)
                done = L0_MISS
        if i < MEM_LOG:
            s.l0_log[i] = done

    def _step(self, uc: unicorn.Uc, pc: int, w: int, t: int, *, commit: bool) -> tuple[int, int]:
        s, p = self.state, self.state.param
        op, rd, rs1, rs2 = w & 0x7F, (w >> 7) & 31, (w >> 15) & 31, (w >> 20) & 31
        f3, f7 = (w >> 12) & 7, w >> 25
        latency, block = 1, 0
        ready = s.ready
        noted, noted_kind = -1, 0  # an L1 access for L1 ordering by page (native.c step)
        if w & 3 != 3:  # a Tensix instruction word (native.c step: fusion)
            fused = s.fusion and pc == s.fuse_next and s.fuse_count < 4 and t == s.fuse_cycle + 1
            if fused:
                t = s.fuse_cycle
            if commit:
                s.fuse_count = s.fuse_count + 1 if fused else 1
                s.fuse_cycle = t
                s.fuse_next = pc + 4
            return t, p[P["tensix_push"]] - 1
        rob_slot = s.rob_pos  # (kept below retire_queue)
        t = max(t, s.rob[rob_slot] + 1)
        source = self._source
        if op == 0x33:
            t = source(rs2, source(rs1, t))
            if f7 == 1:
                if f3 < 4:
                    latency = p[P["mul_latency"]]
                    block = p[P["mul_hold"]]
                else:
                    used = s.div_used
                    s.div_used += 1
                    if not commit:
                        s.div_used = used
                    latency = s.div_log[used] if used < s.div_n and used < DIV_LOG else p[P["div_min"]]
                    block = latency - 1
        elif op in (0x13, 0x67):
            t = source(rs1, t)
        elif op == 0x63:
            t = source(rs2, source(rs1, t))
            rd = 0
        elif op == 0x03:
            t = source(rs1, t)
            if s.strong_order:
                t = self._strongly_ordered(t)
            if s.cfg0 & CFG0_DIS_LD_BUF_BYP:
                t = self._queue_drained(t)
            used = s.mem_used
            a = self._next_access()
            if not commit:
                s.mem_used = used
            c = self._region_class(a)
            logged = c == CLASS_L1 and used < s.mem_n and used < MEM_LOG
            l0 = s.l0_log[used] if logged else L0_PASSED
            hit = l0 >= L0_HIT
            if c == CLASS_L1 and not hit:
                noted = a
            conflict = c == CLASS_L1 and not hit and self._store_conflict(a, t)
            if c != CLASS_L1:
                t = self._load_wait(a, t)
            if hit:
                way = self._l0_find(a >> 4)
                arrives = s.l0_ready[way] if way >= 0 else t
                latency = max(p[P["l0_hit_latency"]], arrives - t)
                if commit:
                    self._l0_use(way if way >= 0 else p[P["l0_lines"]] - 1, a >> 4, arrives)
                    if l0 == L0_HIT_FLUSH:
                        self._l0_flush()
            elif c in (CLASS_L1, CLASS_REMOTE):
                l1 = c == CLASS_L1
                slot = s.l1_slot if l1 else s.remote_slot
                head = s.l1_head if l1 else s.remote_head
                count = p[P["l1_read_slots" if l1 else "remote_read_slots"]]
                occupancy = p[P["l1_read_occupancy" if l1 else "remote_read_occupancy"]]
                t = max(t, slot[head])
                grant = self._port_grant(t, p[P["l1_port_cycles"]], commit) if l1 else t
                if conflict:
                    grant += p[P["l1_store_conflict"]]
                if commit:
                    slot[head] = grant + occupancy
                    if l1:
                        s.l1_head = (head + 1) % count
                    else:
                        s.remote_head = (head + 1) % count
                latency = p[P["l1_load_latency" if l1 else "remote_load_latency"]] + grant - t
                if commit and l0 == L0_MISS:
                    self._l0_use(p[P["l0_lines"]] - 1, a >> 4, t + latency)
            elif c == CLASS_LOCAL:
                latency = p[P["local_load_latency"]]
            else:
                latency = self._mmio_cost(a, False)
                block = latency - 1
            if commit:
                s.responses = max(s.responses, t + latency)
        elif op == 0x23:
            t = source(rs2, source(rs1, t))
            if s.strong_order:
                t = self._strongly_ordered(t)
            used = s.mem_used
            a = self._next_access()
            if not commit:
                s.mem_used = used
            c = self._region_class(a)
            if c == CLASS_L1:
                noted, noted_kind = a, MEM_WRITE
            t, block = self._store(a, 1 << (f3 & 3), c, t, commit)
            if commit and c == CLASS_L1:
                self._l0_drop(a >> 4)
            rd = 0
        elif op == 0x2F:
            t = source(rs2, source(rs1, t))
            t = max(self._queue_drained(t), s.responses)
            used = s.mem_used
            a = self._next_access()
            self._next_access()
            if not commit:
                s.mem_used = used
            if self._region_class(a) == CLASS_L1:
                t = self._port_grant(t, p[P["l1_port_atomic"]], commit)
                noted, noted_kind = a, MEM_WRITE
            latency = p[P["atomic_latency"]]
            if commit:
                s.responses = t + latency
                self._l0_flush()
        elif op == 0x0F:
            t = max(self._queue_drained(t), s.responses)
            block = self._fence_hold(t)
            if commit:
                self._l0_flush()
            rd = 0
        elif op == 0x73:
            if f3:
                t = t if f3 & 4 else source(rs1, t)
                block = 0 if s.cfg0 & CFG0_DIS_CSR_SYNC else p[P["csr"]] - 1
            else:
                rd = 0
        elif op not in (0x37, 0x17, 0x6F):
            rd = 0
        retire = max(t + latency, s.last_retire + 1)
        if s.cfg0 & CFG0_SYNC_ALL_OPS:
            block = max(block, retire + p[P["csr"]] - 2 - t)
        if commit:
            if noted >= 0 and s.page_order and int(self._pages.sharers[noted >> 12]) & ~NOC == s.core_bit:
                self._private_access(noted, noted_kind, t)
            s.rob[rob_slot] = retire
            s.rob_pos = 0 if rob_slot + 1 == p[P["retire_queue"]] else rob_slot + 1
            s.last_retire = retire
            if rd:
                ready[rd] = t + latency
                s.reg_prev_retire[rd] = s.reg_retire[rd]
                s.reg_retire[rd] = retire
        return t, block

    # Python twins of the C hooks (used only without a compiler).
    def _py_block(self, uc: unicorn.Uc, address: int, size: int, _: object) -> None:
        self.l0_restore()
        s = self.state
        before = s.icount
        self._walk(uc, before)
        if s.block_size:
            self._predict(uc, address)
        s.mem_n = s.mem_used = 0
        s.div_n = s.div_used = 0
        s.icount += size >> 2
        s.block_addr = address
        s.block_size = size
        if before + s.stall >= s.limit:
            s.stop_reason = STOP_LIMIT
            uc.emu_stop()
            return
        if self._unhooked_watch(uc, address, size):
            s.stop_reason = STOP_WATCH
            uc.emu_stop()
            return
        resumed, s.resumed = s.resumed, 0
        if resumed:
            pass  # (native.c: the rest of a block counted when it was entered)
        elif address == s.loop_head:
            s.since_head = 0
            if s.busy[(address >> 2) & 63] != address:
                s.repeat += 1
                if s.repeat >= s.spin_threshold:
                    s.stop_reason = STOP_SPIN
                    uc.emu_stop()
                    return
        else:
            s.since_head += 1
            if s.since_head > LOOP_BLOCKS:
                s.loop_head, s.since_head, s.repeat_start = address, 0, before
                s.repeat_cycle, s.repeat = self._first_entry(address, self._natural(before))
                s.spin_threshold = s.spin_reset
        if not resumed:
            s.history_addr[s.history_pos % HISTORY] = address
            s.history_cycle[s.history_pos % HISTORY] = self._natural(before)
            s.history_pos += 1
        page = (address - s.code_base) >> 12
        if address >= s.code_base and page < s.code_pages and not s.executed[page]:
            s.executed[page] = 1
            s.new_code_page = 1

    def _is_watched(self, w: int) -> bool:
        """native.c is_watched(): divides, and fences where there is an L0 data cache."""
        return _is_divide(w) or (w & 0x7F == 0x0F and bool(self.state.param[P["l0_lines"]]))

    def _unhooked_watch(self, uc: unicorn.Uc, address: int, size: int) -> bool:
        s = self.state
        key, slot = address | size << 32, (address >> 2) % BLOCK_CACHE
        if s.watch_key[slot] == key:
            return False
        if any(self._is_watched(self._fetch(uc, pc)) for pc in range(address, address + size, 4)):
            return True
        s.watch_key[slot] = key
        s.blocks_known = 1
        return False

    def _py_code(self, uc: unicorn.Uc, address: int, size: int, _: object) -> None:
        """native.c tsim_code_hook(): a fence flushes the L0 data cache; a divide's cycles are logged."""
        self.l0_restore()
        s = self.state
        w = self._fetch(uc, address)
        if w & 0x7F == 0x0F:
            self._l0_release_all()
            return
        if not _is_divide(w):
            return
        rs1, rs2 = (w >> 15) & 31, (w >> 20) & 31
        a = uc.reg_read(rv.UC_RISCV_REG_X0 + rs1) & 0xFFFFFFFF if rs1 else 0
        b = uc.reg_read(rv.UC_RISCV_REG_X0 + rs2) & 0xFFFFFFFF if rs2 else 0
        if s.div_n < DIV_LOG:
            s.div_log[s.div_n] = divide_cycles(s.param, (w >> 12) & 7, a, b)
        s.div_n += 1

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

    def _first_entry(self, address: int, now: int) -> tuple[int, int]:
        s = self.state
        first, repeats, tight = now, 0, True
        for i in range(1, min(s.history_pos, LOOP_BLOCKS + 1) + 1):
            j = (s.history_pos - i) % HISTORY
            if s.history_addr[j] == address:
                first = s.history_cycle[j]
                repeats += tight
            else:
                tight = False
        return first, repeats

    def _py_mem(self, uc: unicorn.Uc, kind: int, address: int, size: int, value: int, _: object) -> None:
        self.l0_restore()
        s = self.state
        logged = s.mem_n
        if s.mem_n < MEM_LOG:
            s.mem_addr[s.mem_n] = address
        s.mem_n += 1
        if s.probing:
            if kind == MEM_WRITE:
                s.probe_wrote = 1  # (a loop that stores is no poll loop)
                if s.probe_unsynced and address >= s.l1_size:
                    self.probe_stop(uc)
                    return
                s.probe_strict = 1
            else:
                if s.probe_count < PROBE_READS:
                    s.probe_addr[s.probe_count], s.probe_size[s.probe_count] = address, size
                    s.probe_cycle[s.probe_count] = self.time_at(uc, uc.reg_read(PC_REG))
                s.probe_count += 1
        misaligned = address & (size - 1) != 0
        hole = 0 <= address - s.hole_lo < s.hole_size
        aligned = not misaligned and not hole
        if aligned and address < s.l1_size:
            # An L0 hit asks nothing of L1, so it waits for no other core.
            if kind != MEM_WRITE and self._l0_answer(uc, address, size, logged):
                return
            if not self._l1_sync_stop(uc, kind, address, size):
                self._l0_performed(uc, kind, address, logged)
            return
        if aligned and address < s.mmio_base:
            return
        pc = uc.reg_read(PC_REG)
        if not misaligned and not hole:
            s.mmio_pc = pc
            return
        s.stop_reason = STOP_MISALIGNED if misaligned else STOP_HOLE
        s.fault_addr, s.fault_size, s.fault_pc = address, size, pc
        s.fault_write = kind == MEM_WRITE
        if s.fault_write:
            s.fault_old = int.from_bytes(uc.mem_read(address, size), "little")
        else:
            insn = int.from_bytes(uc.mem_read(pc, 4), "little")
            s.fault_rd = (insn >> 7) & 31
            s.fault_old = uc.reg_read(X0_REG + s.fault_rd)
        uc.reg_write(PC_REG, pc)
        uc.emu_stop()

    def _l1_sync_stop(self, uc: unicorn.Uc, kind: int, address: int, size: int) -> bool:
        """native.c's l1_sync_stop: stop before an L1 access another running core has not reached."""
        s = self.state
        if s.stop_reason == STOP_SYNC:
            return True  # the write half of a stopped atomic
        if not s.sync_valid:
            self._sync_refresh()
        s.fault_cycle = 0
        if not (s.probing and s.probe_unsynced and kind == MEM_WRITE):
            late = False
            limit = s.sync_limit
            if s.page_order:
                pages = self._pages
                page = address >> 12
                bit = s.core_bit
                used = int(pages.sharers[page])
                cores = used & ~NOC
                if kind == MEM_WRITE:
                    pages.writers[page] |= bit
                if used == bit:
                    # (the walk notes it: native.c step)
                    if kind != MEM_WRITE and not pages.writers[page] & bit:
                        s.spin_threshold = min(s.spin_threshold, s.private_spin)
                    return False
                if used & NOC:
                    limit = s.noc_limit if cores == bit else min(limit, s.noc_limit)
                if int(pages.private_last[page]) >= s.time_base or not cores & bit:
                    s.fault_cycle = self.time_at(uc, uc.reg_read(PC_REG))
                    late = limit < SYNC_NEVER and s.fault_cycle > limit
                    if not cores:
                        pages.owner[page] = bit
                    elif not late:
                        self._unordered_before(address, kind, s.fault_cycle)
                    pages.sharers[page] |= bit
                    if not late:
                        return False
            if not late:
                if limit >= SYNC_NEVER:
                    return False
                s.fault_cycle = self.time_at(uc, uc.reg_read(PC_REG))
                if s.fault_cycle <= limit:
                    return False
            if s.probing and kind != MEM_WRITE and not s.probe_strict:
                s.probe_unsynced = 1
                return False
        self.stop_before_access(uc, address, size, kind == MEM_WRITE)
        return True

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

    def _private_access(self, address: int, kind: int, cycle: int) -> None:
        """native.c's private_access."""
        pages = self._pages
        page, line = address >> 12, address >> 6
        pages.private_last[page] = max(int(pages.private_last[page]), cycle)
        pages.line_last[line] = max(int(pages.line_last[line]), cycle)
        if kind == MEM_WRITE:
            pages.line_write[line] = max(int(pages.line_write[line]), cycle)

    def _unordered_before(self, address: int, kind: int, cycle: int) -> None:
        """native.c's unordered_before."""
        pages = self._pages
        if int(pages.owner[address >> 12]) == self.state.core_bit:
            return
        lines = pages.line_last if kind == MEM_WRITE else pages.line_write
        if int(lines[address >> 6]) >= cycle:
            pages.late[0] += 1

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
