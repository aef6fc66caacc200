"""The native coprocessor engine: C sources in this folder, loaded with ctypes.

``copro.h`` is the state the C side sees: pointers into the numpy arrays of the Python model, filled
here by :func:`view_of`. ``ops.c`` (with ``thcon.c``, ``adc.c``...) executes the instructions it
implements and defers every other case to the Python semantics, having changed nothing.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.native_build import build_library, pure_python_requested
from tensixsim.observe.events import TR_FIELDS  # engine.h TR_FIELDS: one row per retired instruction
from tensixsim.tensix.frontend.capture import HISTORY_RECORD, QUEUE_CTL
from tensixsim.tensix.pack import stream as pack_stream
from tensixsim.tensix.sync import MUTEX_SLOTS

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor
    from tensixsim.tensix.frontend.pipes import Engine

NEVER = 1 << 62

_HERE = Path(__file__).parent
NATIVE_DEFER = 0
NATIVE_WAIT = -1  # copro.h: the handler's instruction waits; view.wait holds (reason, until)
RWC_FIELDS = ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr", "fidelity_phase", "extra_addr_mod_bit")

_P = ctypes.c_void_p
# copro_view.sched (sfpu.h SCHED_ON, SCHED_VB, SCHED_VC, SCHED_VD, SCHED_IDLE): no scheduled instruction
# running; whether SFPLOADMACRO work is outstanding not known.
SCHED_NONE = (0, -1, -1, -1, 0)
SCHED_IDLE = 4
# (view field, state attribute, dtype) for the vector unit's and register files' arrays, in copro.h order.
SFPU_ARRAYS = (
    ("lreg", "lreg", np.uint32),
    ("lane_flags", "lane_flags", np.bool_),
    ("use_lane_flags", "use_lane_flags", np.bool_),
    ("flag_stack", "flag_stack", np.bool_),
    ("stack_depth", "stack_depth", np.uint8),
    ("lane_config", "lane_config", np.uint32),
    ("sfpu_sp", "sp", np.uint32),
    ("prng", "prng", np.uint32),
    ("mad_ready", "mad_ready", np.int64),
    ("mad_seen", "mad_seen", np.bool_),
    ("mad_wrote", "mad_wrote", np.bool_),
    ("sfpu_nop_from", "nop_from", np.int64),
    ("macro_template", "macro_template", np.uint32),
    ("macro_sequence", "macro_sequence", np.uint32),
    ("macro_misc", "macro_misc", np.uint32),
    ("macro_pending", "macro_pending", np.int64),
    ("macro_clock", "macro_clock", np.int64),
    ("hazard", "hazard", np.int64),
    ("shfl_vc", "shfl_vc", np.int64),
)
REGS_ARRAYS = (
    ("srca", "srca", np.uint32),
    ("srcb", "srcb", np.uint32),
    ("src_client", "src_client", np.uint8),
    ("matrix_bank", "matrix_bank", np.uint8),
    ("unpacker_bank", "unpacker_bank", np.uint8),
    ("dst", "dst", np.uint16),
    ("dst_row_valid", "dst_row_valid", np.bool_),
    ("dst_ready", "dst_ready", np.int64),
    ("dst_sfpu_ready", "dst_sfpu_ready", np.int64),
    ("src_handover_at", "src_handover_at", np.int64),
    ("move_hold", "move_hold", np.int64),
    ("srca_row_latch", "srca_row_latch", np.int64),
)

# (view field, unpack.fetch.UnpackState attribute, dtype): the unpackers' arrays, after regs.unpacker_src_row.
UNPACK_ARRAYS = (
    ("context_counter", "context_counter", np.uint8),
    ("unpack_end", "end", np.int64),
    ("unpack_anchor", "anchor", np.int64),
    ("unpack_left", "left", np.int64),
    ("unpack_want", "want", np.int8),
    ("unpack_shared_until", "shared_until", np.int64),
    ("unpack_shared_speed", "shared_speed", np.int8),
    ("unpack_thread", "thread", np.int8),
    ("unpack_fetches", "fetches", np.int64),
    ("unpack_fetch_cycles", "fetch_cycles", np.int64),
    ("unpack_rate", "bytes_per_cycle", np.int64),
    ("unpack_thread_cycles", "thread_cycles", np.int64),
)

# The sync unit's arrays (sync.SyncState; gate_kind is sync_gate_kind), in copro.h order.
SYNC_ARRAYS = (
    ("sem_value", "sem_value", np.uint8),
    ("sem_max", "sem_max", np.uint8),
    ("gate_block", "gate_block", np.uint16),
    ("gate_conditions", "gate_conditions", np.uint16),
    ("gate_sems", "gate_sems", np.uint8),
    ("gate_stream_select", "gate_stream_select", np.uint8),
    ("gate_target", "gate_target", np.uint32),
    ("gate_cycle", "gate_cycle", np.int64),
)


class CoproView(ctypes.Structure):
    """Mirror of ``struct copro_view`` (copro.h)."""

    _fields_ = [
        ("threads", ctypes.c_uint64),
        ("l1_size", ctypes.c_uint64),
        ("l1", _P),
        ("gprs", _P),
        ("adc_value", _P),
        ("adc_cr", _P),
        ("rwc", _P * len(RWC_FIELDS)),
        ("config", _P),
        ("thread_config", _P),
        ("config_words", ctypes.c_uint64),
        ("thread_config_words", ctypes.c_uint64),
        ("sync_gate_kind", _P),
        *((name, _P) for name, _, _ in SFPU_ARRAYS),
        *((name, _P) for name, _, _ in REGS_ARRAYS),
        ("wait", _P),
        ("pack_stream", _P),
        ("pack_buffer", _P),
        ("l1_written", _P),
        ("unpacker_src_row", _P),
        *((name, _P) for name, _, _ in UNPACK_ARRAYS),
        ("pipe_state", _P),
        ("pipe_count", ctypes.c_uint64),
        ("pipe_fields", ctypes.c_uint64),
        ("pipe_done_field", ctypes.c_uint64),
        *((name, _P) for name, _, _ in SYNC_ARRAYS),
        ("unit_clock", _P),
        ("mutex_owner", _P),
        ("mutex_wanted", _P),
        ("stream_values", _P),
        ("stream_count", ctypes.c_uint64),
        ("sched", _P),
    ]


# engine.c tsim_engine_layout: the pipes' bookkeeping words (frontend.pipes.PIPE_FIELDS), a queue's control
# words and a history's (frontend/capture.py); checked when the library loads.
def _engine_layout() -> int:
    from tensixsim.isa.spec import UNITS
    from tensixsim.tensix.frontend.pipes import PIPE_FIELDS

    return len(UNITS) * 1000000 + PIPE_FIELDS * 10000 + QUEUE_CTL * 100 + HISTORY_RECORD + 1


def _pointer(array: np.ndarray, dtype: type) -> int:
    if array.dtype != np.dtype(dtype) or not array.flags.c_contiguous:
        raise TypeError(f"native engine needs a C-contiguous {np.dtype(dtype)} array, got {array.dtype}")
    return array.ctypes.data


def view_of(copro: Coprocessor) -> tuple[CoproView, tuple[np.ndarray, ...]]:
    """A view of ``copro``'s state for the C side, and the arrays it points into (keep them alive;
    a state array replaced later needs a new view)."""
    adc, config = copro.adc, copro.config
    arrays = (
        copro.tile.l1,
        copro.thcon.gprs,
        adc.value,
        adc.cr,
        *(getattr(adc, name) for name in RWC_FIELDS),
        config.config,
        config.thread,
        copro.sync.gate_kind,
        copro.sfpu,
        copro.regs,
        wait := np.full(3, -1, np.int64),
        copro.packer,
        copro.l1_written,
        copro.unpackers,
        copro.unit_clock,
        sched := np.array(SCHED_NONE, np.int64),
    )
    view = CoproView()
    view.threads = copro.threads
    view.l1_size = copro.arch.l1_size
    view.l1 = _pointer(copro.tile.l1, np.uint8)
    view.gprs = _pointer(copro.thcon.gprs, np.uint32)
    view.adc_value = _pointer(adc.value, np.uint32)
    view.adc_cr = _pointer(adc.cr, np.uint32)
    for i, name in enumerate(RWC_FIELDS):
        view.rwc[i] = _pointer(getattr(adc, name), np.uint32)
    view.config = _pointer(config.config, np.uint32)
    view.thread_config = _pointer(config.thread, np.uint16)
    view.config_words = config.config.shape[1]
    view.thread_config_words = config.thread.shape[1]
    view.sync_gate_kind = _pointer(copro.sync.gate_kind, np.uint8)
    for state, table in ((copro.sfpu, SFPU_ARRAYS), (copro.regs, REGS_ARRAYS)):
        for name, attribute, dtype in table:
            setattr(view, name, _pointer(getattr(state, attribute), dtype))
    view.wait = _pointer(wait, np.int64)
    view.sched = _pointer(sched, np.int64)
    # The packers' streams: Blackhole's PackState, or one row per packer (Wormhole's PackersState).
    packers, count = copro.packer, pack_stream.PACKER_COUNT[copro.arch.name]
    rows = () if count == 1 else (count,)
    words, buffer = (pack_stream.STREAM_WORDS,), (2, pack_stream.STREAM_BUFFER_BYTES)
    if packers.stream.shape != rows + words or packers.buffer.shape != rows + buffer:
        raise TypeError(f"native engine needs {count} packer stream(s), got {packers.stream.shape}")
    view.pack_stream = _pointer(copro.packer.stream, np.int64)
    view.pack_buffer = _pointer(copro.packer.buffer, np.uint8)
    from tensixsim.tensix.coprocessor import L1_WRITTEN_RANGES  # (copro.h's too: ops.h asserts it)

    if copro.l1_written.shape != (L1_WRITTEN_RANGES, 3):
        raise TypeError(
            f"native engine needs ({L1_WRITTEN_RANGES}, 3) L1 write ranges, got {copro.l1_written.shape}"
        )
    view.l1_written = _pointer(copro.l1_written, np.int64)
    unpackers = copro.unpackers
    for array in (copro.regs.unpacker_src_row, unpackers.context_counter):
        if array.shape != (2, copro.threads):
            raise TypeError(f"native engine needs (2, {copro.threads}) unpacker arrays, got {array.shape}")
    view.unpacker_src_row = _pointer(copro.regs.unpacker_src_row, np.uint32)
    for name, attribute, dtype in UNPACK_ARRAYS:
        setattr(view, name, _pointer(getattr(unpackers, attribute), dtype))
    set_pipe_state(view, getattr(getattr(copro.tile, "backend", None), "state", None))
    for name, attribute, dtype in SYNC_ARRAYS:
        setattr(view, name, _pointer(getattr(copro.sync, attribute), dtype))
    view.unit_clock = _pointer(copro.unit_clock, np.int64)
    sync = copro.sync
    if sync.mutex_owner.shape == (MUTEX_SLOTS,) and sync.mutex_wanted.shape == (copro.threads,):
        view.mutex_owner = _pointer(sync.mutex_owner, np.int8)
        view.mutex_wanted = _pointer(sync.mutex_wanted, np.int8)
    values = _plain_stream_values(copro)
    if values is not None:
        view.stream_values = _pointer(values, np.uint32)
        view.stream_count = values.shape[0]
        arrays += (values,)
    return view, arrays


def _plain_stream_values(copro: Coprocessor) -> np.ndarray | None:
    """The tile's stream register array when its reads are exactly Streams.read's (a plain Streams,
    read not replaced), else None: then STREAMWAIT and its gate leave those reads to Python."""
    from tensixsim.mmio.streams import _STORED, Streams

    streams = getattr(copro.tile, "streams", None)
    if type(streams) is not Streams or "read" in vars(streams):
        return None
    values = streams.values
    if values.dtype != np.uint32 or values.ndim != 2 or values.shape[1] != len(_STORED):
        return None
    return values if values.flags.c_contiguous else None


def last_wait(view: CoproView) -> tuple[int, int | None, int]:
    """(reason, until, detail) of the last NATIVE_WAIT through ``view``."""
    reason, until, detail = (ctypes.c_int64 * 3).from_address(view.wait)
    return reason, (until if until >= 0 else None), detail


def take_l1_written(copro: Coprocessor) -> None:
    """Tell the tile about the L1 writes a native handler made (Coprocessor.l1_written), one by one in
    their order as Coprocessor.l1_write would have, and forget them."""
    from tensixsim.tensix.coprocessor import NO_L1_WRITTEN

    written = copro.l1_written
    if written[0, 0] < 0:
        return
    ranges = written.tolist()
    written[:] = NO_L1_WRITTEN
    for lo, hi, cycle in ranges:
        if lo < 0:  # (the rows fill in order)
            break
        copro.tile.coprocessor_wrote_l1(lo, hi - lo, cycle)


def set_pipe_state(view: CoproView, state: np.ndarray | None) -> None:
    """Point ``view`` at the pipe engine's bookkeeping (frontend.pipes.Engine.state), or at none."""
    from tensixsim.tensix.frontend.pipes import DONE_CYCLE

    if state is None:
        view.pipe_state, view.pipe_count, view.pipe_fields = None, 0, 0
        return
    view.pipe_state = _pointer(state, np.int64)
    view.pipe_count, view.pipe_fields = state.shape
    view.pipe_done_field = DONE_CYCLE


MAX_THREADS = 3
RUN_HORIZON, RUN_ISSUE, RUN_TIMED_CHANGE, RUN_NOTIFY, RUN_GROW, RUN_DRAIN = range(6)
NOTIFY_QUEUE, NOTIFY_RETIRED, NOTIFY_L1 = 1, 2, 4
# engine.h OUT_*
OUT_PIPE, OUT_CYCLE, OUT_NOTIFY, OUT_QUEUE_CYCLE, OUT_RETIRE_CYCLE = range(5)
OUT_NATIVE, OUT_PENDING, OUT_REACHED, OUT_GROW, OUT_TRACED = range(5, 10)
OUT_FIELDS = 10
TRACE_ROWS = 4096  # retired-instruction rows the native engine writes before Python takes them
WAIT_COPRO = 1


def wait_queue(t: int) -> int:
    return 2 << (3 * t)


def wait_thread_idle(t: int) -> int:
    return 4 << (3 * t)


def wait_mop_idle(t: int) -> int:
    return 8 << (3 * t)


class EngineStruct(ctypes.Structure):
    """Mirror of ``struct engine`` (engine.h)."""

    _fields_ = [
        ("view", _P),
        ("threads", ctypes.c_uint64),
        ("pipe", _P),
        ("words", _P * MAX_THREADS),
        ("queue_ctl", _P * MAX_THREADS),
        ("queue", _P * MAX_THREADS),
        ("history_ctl", _P * MAX_THREADS),
        ("history", _P * MAX_THREADS),
        ("copro", _P),
        ("busy_until", _P),
        ("unit_stats", _P),
        ("stalls", _P * MAX_THREADS),
        ("unit_of", _P),
        ("thread_held", _P),
        ("stallwait_kind", _P),
        ("mop_cfg", _P),
        ("mop_cfg_written", _P),
        ("zmask_hi16", _P),
        ("mop_busy", _P),
        ("replay_buffer", _P),
        ("replay_written", _P),
        ("record_slot", _P),
        ("record_left", _P),
        ("record_exec", _P),
        ("out", _P),
        ("trace", _P),
        ("trace_capacity", ctypes.c_int64),
        ("waiters", ctypes.c_int64),
        ("queue_depth", ctypes.c_int64),
        ("queue_accept", ctypes.c_int64),
        ("mop_exit_penalty", ctypes.c_int64),
        ("matrix_unit", ctypes.c_uint64),
        ("sfpu_unit", ctypes.c_uint64),
        ("brisc_core", ctypes.c_uint64),
        ("op_mop", ctypes.c_uint32),
        ("op_mop_cfg", ctypes.c_uint32),
        ("op_replay", ctypes.c_uint32),
        ("op_nop", ctypes.c_uint32),
    ]


# The architecture the native engine is generated for (gen_fields.py renders fields.h and
# constants.h from its instruction table and configuration layout).
ARCH = "blackhole"
# Every architecture with a library: another one's is built from the same sources with -DTSIM_<ARCH>
# over its own headers (fields_<arch>.h, constants_<arch>.h), and runs the instructions it shares
# with Blackhole exactly and those whose handlers implement its own semantics too
# (gen_fields.native_instructions); every other step goes to Python.
ARCHES = (ARCH, "wormhole")


def available(arch: str = ARCH) -> bool:
    """Whether the native engine can run ``arch`` here (it is built for it, and a C compiler was
    found or it is cached)."""
    return arch in ARCHES and library(arch=arch) is not None


class NativeEngine:
    """The C loop in front of a :class:`~tensixsim.tensix.frontend.pipes.Engine`: it runs every step it
    can natively and hands each other step to the engine's reference code (``Engine._issue``,
    ``Coprocessor.apply_timed_changes``), so both always agree on state and cycles."""

    def __init__(self, engine: Engine) -> None:
        from tensixsim.isa.spec import UNITS
        from tensixsim.riscv.core import CoreState
        from tensixsim.tensix.frontend.pipes import NO_UNIT, THREAD_HELD_UNITS
        from tensixsim.tensix.frontend.waits import stallwait_kinds
        from tensixsim.timing import FRONTEND

        self._waiting = CoreState.WAITING
        self.engine = engine
        self.copro = copro = engine.copro
        self.tile = copro.tile
        self.arch = copro.arch.name
        self.lib = library(arch=self.arch)
        if len(engine.pipes) > MAX_THREADS:
            raise ValueError(f"the native engine runs at most {MAX_THREADS} pipes")
        self.out = np.zeros(OUT_FIELDS, np.int64)
        self.trace = np.zeros((TRACE_ROWS, TR_FIELDS), np.int64)
        self.unit_of = np.array(engine.unit_of, np.uint8)
        self.thread_held = np.array([u in THREAD_HELD_UNITS for u in UNITS], np.uint8)
        assert NO_UNIT == 255
        s = self.struct = EngineStruct()
        s.threads = len(engine.pipes)
        s.pipe = _pointer(engine.state, np.int64)
        s.copro = _pointer(copro.counters, np.int64)
        s.busy_until = _pointer(copro.unit_clock, np.int64)
        s.unit_stats = _pointer(engine.unit_counts, np.int64)
        s.unit_of = _pointer(self.unit_of, np.uint8)
        s.thread_held = _pointer(self.thread_held, np.uint8)
        self.stallwait_kind = stallwait_kinds(self.arch)
        s.stallwait_kind = _pointer(self.stallwait_kind, np.int8)
        s.out = _pointer(self.out, np.int64)
        s.trace = _pointer(self.trace, np.int64)
        s.mop_exit_penalty = FRONTEND.mop_exit_penalty
        s.queue_depth = copro.arch.pipe_queue_depth
        s.queue_accept = copro.arch.pipe_queue_accept
        s.matrix_unit = UNITS.index("matrix")
        s.sfpu_unit = UNITS.index("sfpu")
        for t, pipe in enumerate(engine.pipes):
            s.stalls[t] = _pointer(pipe.stall_cycles, np.int64)
        s.brisc_core = 0  # CORE_NAMES order
        by_name = copro.isa.by_name
        s.op_mop, s.op_mop_cfg = by_name["MOP"].opcode, by_name["MOP_CFG"].opcode
        s.op_replay, s.op_nop = by_name["REPLAY"].opcode, by_name["NOP"].opcode
        for pipe in engine.pipes:
            pipe.words.on_grow = self._refresh_buffers
            pipe.queue.entries.on_grow = self._refresh_buffers
            pipe.queue.taken.on_grow = self._refresh_buffers
        self._states: tuple[object, ...] = ()
        self._run_pointers: tuple[object, tuple[int, int, int]] = (None, (0, 0, 0))
        self._refresh_buffers()
        self._refresh_state()
        self._address = ctypes.addressof(s)
        self.use_library(self.lib)

    def _take_trace(self) -> None:
        """Move the retired-instruction rows the C side wrote to ``Engine.retired`` and the event log,
        in order."""
        count = int(self.out[OUT_TRACED])
        if count:
            self.out[OUT_TRACED] = 0
            rows = self.trace[:count]
            if self.engine.retired is not None:
                self.engine.retired.extend(map(tuple, rows[:, :3].tolist()))
            if self.engine.events is not None:
                self.engine.events.native_rows(rows)

    def reset(self) -> None:
        """Forget every step in progress and the counts (Engine.reset), and point at the
        coprocessor's state again (Coprocessor.reset may have rebound an array)."""
        self.out[:] = 0
        self._refresh_buffers()
        self._refresh_state()

    def discard_pending(self) -> None:
        """Forget a step Python was to finish (after the run it belonged to was abandoned)."""
        self.out[[OUT_PENDING, OUT_NOTIFY, OUT_GROW]] = 0

    @property
    def instructions(self) -> int:
        """Instructions the native engine executed itself (the rest went through Python)."""
        return int(self.out[OUT_NATIVE])

    def use_library(self, lib: ctypes.CDLL) -> None:
        """Run on ``lib`` (a variant built by :func:`library`)."""
        self.lib = lib
        self._run = lib.tsim_engine_run
        self._push_address = ctypes.cast(lib.tsim_engine_push, ctypes.c_void_p).value

    def _refresh_buffers(self) -> None:
        s = self.struct
        for t, pipe in enumerate(self.engine.pipes):
            s.words[t] = _pointer(pipe.words.array, np.uint32)
            s.queue_ctl[t] = _pointer(pipe.queue.entries.ctl, np.int64)
            s.queue[t] = _pointer(pipe.queue.entries.rows, np.int64)
            s.history_ctl[t] = _pointer(pipe.queue.taken.ctl, np.int64)
            s.history[t] = _pointer(pipe.queue.taken.rows, np.int64)

    def _refresh_state(self) -> None:
        """Point at the coprocessor's state arrays (again, if a unit's state object was replaced)."""
        copro = self.copro
        self._states = self._unit_states()  # (kept alive: the key below compares identities)
        self._state_key = self._key()
        self.view, self._arrays = view_of(copro)
        self._sched = np.ctypeslib.as_array((ctypes.c_int64 * len(SCHED_NONE)).from_address(self.view.sched))
        set_pipe_state(self.view, self.engine.state)  # the tile may not hold its engine yet
        f = copro.frontend
        s = self.struct
        s.view = ctypes.addressof(self.view)
        s.mop_cfg = _pointer(f.mop_cfg, np.uint32)
        s.mop_cfg_written = _pointer(f.mop_cfg_written, np.bool_)
        s.zmask_hi16 = _pointer(f.zmask_hi16, np.uint32)
        s.mop_busy = _pointer(f.mop_busy, np.bool_)
        s.replay_buffer = _pointer(f.replay_buffer, np.uint32)
        s.replay_written = _pointer(f.replay_written, np.bool_)
        s.record_slot = _pointer(f.record_slot, np.int32)
        s.record_left = _pointer(f.record_left, np.int32)
        s.record_exec = _pointer(f.record_exec, np.bool_)

    def forget_idle(self) -> None:
        """Python code may have scheduled SFPLOADMACRO work: the C side must look again (sfpu.h)."""
        self._sched[SCHED_IDLE] = 0

    def _unit_states(self) -> tuple[object, ...]:
        c = self.copro
        return (
            c.thcon,
            c.adc,
            c.config,
            c.sync,
            c.frontend,
            c.sfpu,
            c.regs,
            c.packer,
            c.l1_written,
            c.unpackers,
            # STREAMWAIT's gate reads the tile's stream registers: a new streams object (or array, or
            # a replaced read) needs a new view.
            streams := getattr(self.tile, "streams", None),
            getattr(streams, "values", None),
            getattr(streams, "__dict__", {}).get("read"),
        )

    def _key(self) -> tuple[int, ...]:
        """Changes when the view must be rebuilt: a unit's state object replaced (the coprocessor's
        epoch), or the tile's stream registers (object, array, or a replaced read)."""
        streams = getattr(self.tile, "streams", None)
        if streams is None:
            return (self.copro.state_epoch, 0, 0, 0)
        fields = streams.__dict__
        return (self.copro.state_epoch, id(streams), id(fields.get("values")), id(fields.get("read")))

    def _waiters(self) -> int:
        mask = 0
        waiting = self._waiting
        for core in self.tile.cores:
            if core.state is not waiting:
                continue
            if "coprocessor" in core.watch_registers.values():
                mask |= WAIT_COPRO
            key = core.wait_key
            if key is not None:
                kind, t = key[0], key[1]
                if kind == "queue":
                    mask |= wait_queue(t)
                elif kind == "thread_idle":
                    mask |= wait_thread_idle(t)
                elif kind == "mop_expander_idle":
                    mask |= wait_mop_idle(t)
        return mask

    def prepare(self) -> None:
        """Bring the engine's view of Python-side facts up to date."""
        if self._key() != self._state_key:
            self._refresh_state()
        self.forget_idle()
        self.struct.waiters = self._waiters()
        self.struct.trace_capacity = (
            TRACE_ROWS if self.engine.retired is not None or self.engine.events is not None else 0
        )

    def attach(self) -> tuple[int, int] | None:
        """(engine address, push function address) for a core's hooks to push into the engine
        directly during a slice, or None when Python must see every push (a step is pending)."""
        if self.out[OUT_PENDING]:
            return None
        self.prepare()
        return self._address, self._push_address

    def run_pointers(self) -> tuple[int, int, int]:
        """(tsim_engine_run, the engine's clock, its SFPLOADMACRO idle hint) for native code that
        brings the engine up to a cycle itself while a core's hooks hold it (riscv/native.c)."""
        key = (self._run, self._sched)
        held = self._run_pointers[0]
        # (by identity: the scheduler state is an array, rebound when the vector unit's state is)
        if held is None or held[0] is not key[0] or held[1] is not key[1]:
            reached = self.out.ctypes.data + OUT_REACHED * self.out.itemsize
            idle = self._sched.ctypes.data + SCHED_IDLE * self._sched.itemsize
            self._run_pointers = (key, (ctypes.cast(self._run, ctypes.c_void_p).value, reached, idle))
        return self._run_pointers[1]

    def step(self, horizon: int) -> bool:
        """Run natively up to ``horizon``, then one step of reference code if one is needed.
        True when ``Engine.advance_to`` is done (the horizon is reached or a core woke)."""
        copro, tile, out = self.copro, self.tile, self.out
        self.prepare()
        code = self._run(self._address, min(horizon, NEVER))
        self._take_trace()
        if code == RUN_DRAIN:
            return False
        if code == RUN_HORIZON:
            if not self._sched[SCHED_IDLE]:  # (else C found no SFPLOADMACRO work and moved the cycle)
                self.engine.reached(horizon)
                self.forget_idle()
            return True
        if code == RUN_GROW:
            self.engine.pipes[int(out[OUT_PIPE])].words.reserve(int(out[OUT_GROW]))
            out[OUT_GROW] = 0
            return False
        out[OUT_PENDING] = 0
        woke = tile.wakes
        notify, pipe = int(out[OUT_NOTIFY]), int(out[OUT_PIPE])
        out[OUT_NOTIFY] = 0
        if notify & NOTIFY_QUEUE:
            tile.queue_popped(pipe, int(out[OUT_QUEUE_CYCLE]))
        if notify & NOTIFY_L1:
            take_l1_written(copro)  # during the instruction, as Coprocessor.l1_write notifies
        if notify & NOTIFY_RETIRED:
            cycle = int(out[OUT_RETIRE_CYCLE])
            tile.coprocessor_changed(cycle)  # Coprocessor.bump's notification (C counted the version)
            tile.pipe_progress(pipe, cycle)
        if code == RUN_ISSUE:
            self.engine._issue(self.engine.pipes[pipe], int(out[OUT_CYCLE]))
        elif code == RUN_TIMED_CHANGE:
            copro.apply_timed_changes(int(out[OUT_CYCLE]))
        self.forget_idle()  # (a core's hooks may push into the engine before the next prepare)
        return tile.wakes != woke


def _sources() -> list[Path]:
    """Every architecture's library is built from every source: what differs is in TSIM_<ARCH> branches
    (pack.c, Blackhole's PACR, and pack_wormhole.c, Wormhole's, are each empty in the other's library)."""
    return sorted(_HERE.glob("*.c"))


_libs: dict[tuple[str, tuple[str, ...]], ctypes.CDLL | None] = {}


def library(defines: tuple[str, ...] = (), arch: str = ARCH) -> ctypes.CDLL | None:
    """The compiled engine for ``arch``, or None when it cannot be built (the Python engine runs
    then). ``defines`` select a variant (tests build deliberately broken ones to check the checkers);
    another architecture than Blackhole's is built with ``-DTSIM_<ARCH>`` (its headers)."""
    if arch not in ARCHES:
        raise ValueError(f"no native engine for {arch}")
    key = (arch, defines)
    if key not in _libs:
        chosen = defines if arch == ARCH else (f"TSIM_{arch.upper()}", *defines)
        lib = None if pure_python_requested() else build_library("tensix", _sources(), defines=chosen)
        if lib is not None:
            lib.tsim_engine_size.restype = ctypes.c_uint64
            if lib.tsim_engine_size() != ctypes.sizeof(EngineStruct):
                raise RuntimeError("engine.h and EngineStruct disagree on the engine struct layout")
            lib.tsim_engine_layout.restype = ctypes.c_uint64
            if lib.tsim_engine_layout() != _engine_layout():
                raise RuntimeError("engine.h and the Python engine disagree on pipe, queue or history fields")
            lib.tsim_native_op.restype = ctypes.c_int64
            lib.tsim_native_op.argtypes = [_P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int64]
            lib.tsim_engine_run.restype = ctypes.c_int
            lib.tsim_engine_run.argtypes = [_P, ctypes.c_int64]
        _libs[key] = lib
    return _libs[key]


def exec_one(
    copro: Coprocessor, thread: int, word: int, cycle: int, wait: list[int | None] | None = None
) -> int:
    """Run one instruction word through ``tsim_native_op`` (for tests): its cycles, NATIVE_DEFER or
    NATIVE_WAIT (then ``wait``, if given, receives the reason, until and detail)."""
    lib = library(arch=copro.arch.name)
    if lib is None:
        raise RuntimeError("the native engine is not available (no C compiler)")
    view, _arrays = view_of(copro)  # the arrays stay referenced during the call
    cycles = int(lib.tsim_native_op(ctypes.addressof(view), thread, word, cycle))
    if cycles == NATIVE_WAIT and wait is not None:
        wait[:] = last_wait(view)
    take_l1_written(copro)  # as the engine has Python do after a native instruction
    return cycles
