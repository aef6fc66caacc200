"""The native hooks' state as both sides see it: ``native.c``'s structures mirrored with ctypes, their
sizes and codes, and the timing figures in the order the C code reads them. The native hooks
(tensixsim.riscv.native) and their Python twins (tensixsim.riscv.walk) share it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

from unicorn import unicorn_const as ucc

STOP_NONE, STOP_LIMIT, STOP_MISALIGNED, STOP_SPIN, STOP_PUSH, STOP_HOLE, STOP_SYNC = 0, 1, 2, 3, 4, 5, 6
STOP_WATCH = 7  # a block holds a watched instruction without its code hook (Hooks.hook_watched)
SYNC_NEVER = 1 << 62  # native.c: no other core running (tensix/frontend/pipes.py NEVER)
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


ATTACH_CALLBACK = ctypes.CFUNCTYPE(None)
# Unicorn's uc_cb_mmio_read_t / uc_cb_mmio_write_t.
MMIO_READ_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_void_p
)
MMIO_WRITE_CALLBACK = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_uint64, ctypes.c_void_p
)

LOOP_BLOCKS = 8
P = {name: i for i, name in enumerate(TIMING_PARAMS)}


def is_divide(w: int) -> bool:
    return w & 0x7F == 0x33 and w >> 25 == 1 and (w >> 12) & 7 >= 4


def divide_cycles(param: Sequence[int], f3: int, a: int, b: int) -> int:
    """native.c divide_cycles: the EX1 cycles of div/divu/rem/remu (f3) of ``a`` by ``b``."""
    signed = not f3 & 1
    if b <= 1 or (signed and a == 0x80000000 and b == 0xFFFFFFFF):
        return param[P["div_fast"]]
    magnitude = (-a) & 0xFFFFFFFF if signed and a & 0x80000000 else a
    return max(param[P["div_min"]], magnitude.bit_length() + 1)


CLASS_L1, CLASS_LOCAL, CLASS_REMOTE, CLASS_MMIO = 0, 1, 2, 3
