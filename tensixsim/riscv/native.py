"""Loads (building on first use) the native block and memory hooks in ``native.c``.

The hooks are registered through Unicorn's C API with ctypes, so they run without entering Python.
When no C compiler is available a Python implementation of the same hooks is used: identical results,
roughly 20x slower (tensixsim.native_build says so once on stderr).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path

import unicorn
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3 import unicorn as _ucmod

from tensixsim.native_build import build_library, pure_python_requested

_SOURCE = Path(__file__).with_name("native.c")
_uclib = _ucmod.uclib

STOP_NONE, STOP_LIMIT, STOP_MISALIGNED, STOP_SPIN, STOP_PUSH = 0, 1, 2, 3, 4
PUSH_RING, PUSH_PORTS = 256, 3
NO_PIPE = (1 << 64) - 1


class PushEntry(ctypes.Structure):
    """Mirror of ``struct push_entry``."""

    _fields_ = [(name, ctypes.c_uint32) for name in ("word", "pc", "done", "pipe")]


MEM_WRITE = ucc.UC_MEM_WRITE
PROBE_READS = 64  # native.c: loads recorded while probing a loop
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
        ("probing", ctypes.c_uint64),
        ("probe_wrote", ctypes.c_uint64),
        ("probe_count", ctypes.c_uint64),
        ("probe_addr", ctypes.c_uint64 * PROBE_READS),
        ("probe_size", ctypes.c_uint64 * PROBE_READS),
    ]


LOOP_BLOCKS = 8
_INTR_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)


def _build() -> ctypes.CDLL | None:
    lib = build_library("native", [_SOURCE], tag=unicorn.__version__)
    if lib is None:
        return None
    lib.tsim_hooks_size.restype = ctypes.c_uint64
    if lib.tsim_hooks_size() != ctypes.sizeof(HookState):
        raise RuntimeError("native.c and HookState disagree on the hook struct layout")
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


class Hooks:
    """The block/memory hooks of one Unicorn instance and the state they record."""

    def __init__(self, uc: unicorn.Uc, *, mmio_base: int, code_base: int, code_pages: int) -> None:
        self.state = HookState()
        s = self.state
        s.limit = 1 << 62
        s.spin_threshold = s.spin_reset = 1 << 62
        s.inline_pipe = NO_PIPE
        s.mmio_base = mmio_base
        s.code_base = code_base
        s.code_pages = code_pages
        s.stop = _fn("uc_emu_stop")
        s.reg_read = _fn("uc_reg_read")
        s.reg_write = _fn("uc_reg_write")
        s.mem_read = _fn("uc_mem_read")
        self._handles: list[object] = []
        lib = native_library()
        self.native = lib is not None
        if lib is not None:
            ptr = ctypes.cast(ctypes.pointer(s), ctypes.c_void_p)
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

    # Python twins of the C hooks (used only without a compiler).
    def _py_block(self, uc: unicorn.Uc, address: int, size: int, _: object) -> None:
        s = self.state
        before = s.icount
        s.icount += size >> 2
        s.block_addr = address
        s.block_size = size
        if before >= s.limit:
            s.stop_reason = STOP_LIMIT
            uc.emu_stop()
            return
        if address == s.loop_head:
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
                s.loop_head, s.since_head, s.repeat, s.repeat_start = address, 0, 0, before
                s.spin_threshold = s.spin_reset
        page = (address - s.code_base) >> 12
        if address >= s.code_base and page < s.code_pages and not s.executed[page]:
            s.executed[page] = 1
            s.new_code_page = 1

    def _py_mem(self, uc: unicorn.Uc, kind: int, address: int, size: int, value: int, _: object) -> None:
        s = self.state
        if s.probing:
            if kind == MEM_WRITE:
                s.probe_wrote = 1
            else:
                if s.probe_count < PROBE_READS:
                    s.probe_addr[s.probe_count], s.probe_size[s.probe_count] = address, size
                s.probe_count += 1
        misaligned = address & (size - 1) != 0
        if not misaligned and address < s.mmio_base:
            return
        pc = uc.reg_read(PC_REG)
        if not misaligned:
            s.mmio_pc = pc
            return
        s.stop_reason = STOP_MISALIGNED
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
