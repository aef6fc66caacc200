"""The pipes: input queue -> MOP expander -> replay expander -> wait gate -> unit.

One :class:`Pipe` per thread. The engine processes instructions of all three pipes in cycle order
(pipes interact through semaphores, mutexes and shared units), one instruction per pipe per cycle at
most. An instruction that cannot go (wait gate, or its semantics answer ``Wait``) blocks its pipe
until coprocessor state changes; the others go on.

The engine never runs ahead of the cores that could still push: the tile advances it to the earliest
running core's cycle, and it stops as soon as it wakes a waiting core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import InvalidInstruction, SimError, Unimplemented
from tensixsim.isa.spec import OPCODE_SHIFT, UNITS, IsaTable
from tensixsim.observe.events import state_word
from tensixsim.riscv.core import CoreState
from tensixsim.tensix import native, sync
from tensixsim.tensix.frontend import tallies, waits
from tensixsim.tensix.frontend.capture import (
    CORE_INDEX,
    QE_CORE,
    QE_FIELDS,
    InputQueue,
    PushedInstruction,
    entry_of,
    row_of,
)
from tensixsim.tensix.matrix.runs import mvmul_run
from tensixsim.tensix.matrix.unit import SRC_NOT_HANDED
from tensixsim.tensix.pack.unit import DST_NOT_READABLE
from tensixsim.tensix.regs import bank_not_handed_to_matrix, dst_hidden
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup, semantics
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu.floats import MAD_HOLD_REASON
from tensixsim.tensix.sfpu.lanes import nop_from
from tensixsim.tensix.unpack.fetch import still_fetching
from tensixsim.tensix.unpack.src_banks import bank_not_handed
from tensixsim.timing import FRONTEND, MATRIX

# NOP is the same on both chips.
BOTH = ("blackhole", "wormhole")

if TYPE_CHECKING:
    from tensixsim.observe.events import EventLog
    from tensixsim.tensix.coprocessor import Coprocessor

NEVER = 1 << 62
ENGINES = ("native", "python")
UNIT_INDEX = {name: i for i, name in enumerate(UNITS)}
NO_UNIT = 255  # unit_of: an opcode the ISA table does not define
# Units whose occupancy also holds the issuing thread: an UNPACR's address cycles (UNPACR_Regular.md
# "Performance": the issuing thread cannot start its next instruction meanwhile).
THREAD_HELD_UNITS = frozenset({"unpack"})


# Per-pipe fields in the engine's shared int64 array (tensix/native/engine.h PIPE_*).
(
    NEXT_ISSUE,
    BLOCKED,
    BLOCKED_AT,
    BLOCKED_VERSION,
    RETRY_AT,
    LAST_WAS_MOP,
    ISSUED,
    LAST_CYCLE,
    DONE_CYCLE,
    BLOCKED_SINCE,
    WORDS_HEAD,
    WORDS_END,
    WORDS_CAPACITY,
    SRC,
) = range(14)
# The tallies the performance counters read follow the source entry (frontend/tallies.py).
assert SRC + QE_FIELDS == tallies.FIRST
PIPE_FIELDS = tallies.END
_NONE = -1  # RETRY_AT / BLOCKED_SINCE: not set
# BLOCKED: a block the reference code set (retried by it), or the native engine's own hold.
BLOCKED_PYTHON, BLOCKED_NATIVE_MAD_HOLD, BLOCKED_NATIVE_WAIT = 1, 2, 16
# The text of the native handlers' waits (copro.h WAIT_*), from their until and detail: the Python
# semantics' own.
_STREAM_FIELD = (1 << 23) - 1


def _streamwait_text(detail: int) -> str:
    """sync.c streamwait_unmet's detail: condition bit 0, stream bits 1..8, value and target 23 bits each."""
    value, target = detail >> 9 & _STREAM_FIELD, detail >> 32 & _STREAM_FIELD
    return "STREAMWAIT " + sync.stream_text(detail >> 1 & 0xFF, detail & 1, value, target)


NATIVE_WAITS: tuple[Callable[[int, int, str], str], ...] = (
    lambda until, detail, arch: "",
    lambda until, detail, arch: SRC_NOT_HANDED,
    lambda until, detail, arch: dst_hidden(until),
    lambda until, detail, arch: DST_NOT_READABLE,
    lambda until, detail, arch: still_fetching(detail, until),
    lambda until, detail, arch: bank_not_handed(detail // 2, detail % 2),
    lambda until, detail, arch: sync.lag_text(detail),
    # (the condition bits are the chip's: Wormhole's C7 is the matrix unit, Blackhole's SrcA)
    lambda until, detail, arch: sync.stallwait_text(detail, arch),
    lambda until, detail, arch: sync.sem_empty_text(detail),
    lambda until, detail, arch: sync.sem_full_text(detail & 15, detail >> 4 & 15, detail >> 8 & 15),
    # sync.c sync_atgetm: the mutex, then its owner as a byte (a signed int8 in SyncState)
    lambda until, detail, arch: sync.mutex_held_text(detail & 0xFF, ((detail >> 8 & 0xFF) ^ 0x80) - 0x80),
    lambda until, detail, arch: _streamwait_text(detail),
    lambda until, detail, arch: bank_not_handed_to_matrix(detail),
)


def native_block_text(code: int, word: int, retry_at: int, names: Sequence, arch: str) -> str:
    """Why a pipe whose head instruction is ``word`` waits, from the native engine's block ``code``
    (PIPE_BLOCKED, not BLOCKED_PYTHON) and its retry cycle; ``names``: the ISA table by opcode of
    ``arch``."""
    name = names[word >> OPCODE_SHIFT].name
    if code == BLOCKED_NATIVE_MAD_HOLD:
        return f"{name}: {MAD_HOLD_REASON}"
    reason, detail = (code - BLOCKED_NATIVE_WAIT) & 0xFF, (code - BLOCKED_NATIVE_WAIT) >> 8
    return f"{name}: {NATIVE_WAITS[reason](retry_at, detail, arch)}"


def _int_field(index: int, doc: str) -> property:
    return property(
        lambda self: int(self.v[index]), lambda self, value: self.v.__setitem__(index, value), doc=doc
    )


def _optional_field(index: int, doc: str) -> property:
    def get(self: Pipe) -> int | None:
        value = int(self.v[index])
        return None if value == _NONE else value

    def set_(self: Pipe, value: int | None) -> None:
        self.v[index] = _NONE if value is None else value

    return property(get, set_, doc=doc)


class WordBuffer:
    """The expanded words of the queue entry in flight, oldest first (a deque's operations over a
    uint32 array the native engine shares; head and end live in the pipe's row)."""

    def __init__(self, row: np.ndarray, capacity: int = 4096) -> None:
        self.v = memoryview(row)  # plain ints, several times faster than numpy item access
        self.array = np.zeros(capacity, np.uint32)
        self._words = memoryview(self.array)
        row[WORDS_CAPACITY] = capacity
        self.on_grow: Callable[[], None] | None = None

    def __len__(self) -> int:
        return int(self.v[WORDS_END] - self.v[WORDS_HEAD])

    def __bool__(self) -> bool:
        return bool(self.v[WORDS_END] != self.v[WORDS_HEAD])

    def __getitem__(self, i: int) -> int:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("word index out of range")
        return self._words[self.v[WORDS_HEAD] + i]

    def __iter__(self) -> Iterator[int]:
        return iter(self.array[int(self.v[WORDS_HEAD]) : int(self.v[WORDS_END])].tolist())

    def drop(self, count: int) -> None:
        """Remove the ``count`` oldest words."""
        if count > len(self):
            raise IndexError("drop past the end of the words")
        self.v[WORDS_HEAD] += count

    def popleft(self) -> int:
        word = self[0]
        self.v[WORDS_HEAD] += 1
        return word

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` words (those in the buffer included)."""
        if capacity > len(self.array):
            rest = self.array[int(self.v[WORDS_HEAD]) : int(self.v[WORDS_END])].copy()
            self.array = np.zeros(max(capacity, 2 * len(self.array)), np.uint32)
            self._words = memoryview(self.array)
            self.array[: len(rest)] = rest
            self.v[WORDS_HEAD], self.v[WORDS_END] = 0, len(rest)
            self.v[WORDS_CAPACITY] = len(self.array)
            if self.on_grow is not None:
                self.on_grow()

    def extend(self, words: Iterable[int]) -> None:
        new = np.fromiter(words, np.uint32)
        self.reserve(len(self) + len(new))
        rest = self.array[int(self.v[WORDS_HEAD]) : int(self.v[WORDS_END])].copy()
        need = len(rest) + len(new)
        self.array[: len(rest)] = rest
        self.array[len(rest) : need] = new
        self.v[WORDS_HEAD] = 0
        self.v[WORDS_END] = need

    def clear(self) -> None:
        self.v[WORDS_HEAD] = self.v[WORDS_END] = 0


class Pipe:
    """One thread's path from its input queue to the units. Its numbers live in one row of the
    engine's shared array, so the native engine and this model see the same pipe."""

    next_issue = _int_field(NEXT_ISSUE, "earliest cycle for its next instruction")
    blocked_at = _int_field(BLOCKED_AT, "cycle the head instruction last failed to go")
    blocked_version = _int_field(BLOCKED_VERSION, "coprocessor state version when it blocked")
    retry_at = _optional_field(RETRY_AT, "a cycle at which the block lifts by itself (a lag, a busy unit)")
    issued = _int_field(ISSUED, "instructions issued")
    last_cycle = _int_field(LAST_CYCLE, "cycle of the last issue")
    done_cycle = _int_field(DONE_CYCLE, "when its last issued instruction leaves its unit")
    blocked_since = _optional_field(BLOCKED_SINCE, "when the head instruction first blocked")

    def __init__(self, thread: int, queue: InputQueue, row: np.ndarray, isa: IsaTable) -> None:
        self.thread = thread
        self._isa_by_name = isa.by_name
        self.queue = queue
        self.row = row
        self.v = memoryview(row)  # plain ints, several times faster than numpy item access
        row[RETRY_AT] = row[BLOCKED_SINCE] = row[tallies.STALLED_SINCE] = row[tallies.WAITING_KIND] = _NONE
        row[SRC + QE_CORE] = _NONE
        self.words = WordBuffer(row)  # expanded words of the entry in flight
        self._reason = ""  # why the head instruction waits (while BLOCKED_PYTHON)
        self.watch_l1: tuple[int, int] | None = None  # L1 bytes a core may store to that could unblock it
        # Cycles the head instruction spent blocked, by its opcode: where a pipe's time went.
        self.stall_cycles = np.zeros(256, np.int64)
        self._names = isa.by_opcode
        self._arch = isa.arch

    def reset(self) -> None:
        """Empty, unblocked, with no statistics, as built (its queue is the tile's to empty)."""
        self.row[:] = 0
        self.row[RETRY_AT] = self.row[BLOCKED_SINCE] = _NONE
        self.row[tallies.STALLED_SINCE] = self.row[tallies.WAITING_KIND] = _NONE
        self.row[SRC + QE_CORE] = _NONE
        self.row[WORDS_CAPACITY] = len(self.words.array)  # the buffer keeps the size it grew to
        self._reason = ""
        self.watch_l1 = None
        self.stall_cycles[:] = 0

    @property
    def blocked(self) -> str | None:
        """Why the head instruction waits (None: it does not)."""
        code = self.v[BLOCKED]
        if code == BLOCKED_PYTHON:
            return self._reason
        if not code:
            return None
        return native_block_text(code, self.words[0], self.v[RETRY_AT], self._names, self._arch)

    @blocked.setter
    def blocked(self, reason: str | None) -> None:
        self.v[BLOCKED] = BLOCKED_PYTHON if reason is not None else 0
        self._reason = reason or ""

    @property
    def stalled(self) -> dict[str, int]:
        """Cycles the head instruction spent blocked, by instruction name."""
        return {self._names[op].name: int(self.stall_cycles[op]) for op in np.flatnonzero(self.stall_cycles)}

    def add_stall(self, name: str, cycles: int) -> None:
        self.stall_cycles[self._isa_by_name[name].opcode] += cycles

    @property
    def last_was_mop(self) -> bool:
        return bool(self.v[LAST_WAS_MOP])

    @last_was_mop.setter
    def last_was_mop(self, value: bool) -> None:
        self.v[LAST_WAS_MOP] = value

    @property
    def source(self) -> PushedInstruction | None:
        """The queue entry the words in flight came from."""
        row = self.v[SRC : SRC + QE_FIELDS].tolist()
        return None if row[QE_CORE] == _NONE else entry_of(row)

    @source.setter
    def source(self, entry: PushedInstruction) -> None:
        self.row[SRC : SRC + QE_FIELDS] = row_of(entry)

    @property
    def idle(self) -> bool:
        return not self.words and not self.queue.entries


class Engine:
    """Runs the three pipes of one coprocessor, natively where it can (``engine="native"``)."""

    def __init__(self, copro: Coprocessor, queues: list[InputQueue], engine: str = "native") -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        self.copro = copro
        self.state = np.zeros((len(queues), PIPE_FIELDS), np.int64)
        self.pipes = [Pipe(q.pipe, q, self.state[q.pipe], copro.isa) for q in queues]
        self._reached = np.zeros(1, np.int64)  # everything before this cycle has been processed
        # Execute runs of MVMULs as one vectorised step when nothing else can observe the difference
        # (matrix.runs.mvmul_run). Results and cycles are the same either way; off is for comparing.
        self.fast_paths = True
        self.fast_path_instructions = 0  # how many instructions went through a fast path
        # When a list: (thread, instruction word, issue cycle) of every instruction retired, in order
        # (off by default: it grows with the run).
        self.retired: list[tuple[int, int, int]] | None = None
        # When set: told of every instruction retired, with why it waited (events.EventLog).
        self.events: EventLog | None = None
        # Per unit (UNITS order): instructions retired, cycles occupied (may overlap waits); then the
        # tallies' MATH_ROW and ANY_STALL_ROW.
        self.unit_counts = np.zeros((tallies.ROWS, 2), np.int64)
        # Per opcode: instructions the Python semantics executed (with the native engine, the ones it
        # handed over: modes or instructions it does not run, waits and errors it leaves to Python).
        self.python_counts = np.zeros(256, np.int64)
        self.unit_of = [NO_UNIT] * 256  # opcode -> unit index
        for spec in copro.isa.by_name.values():
            self.unit_of[spec.opcode] = UNIT_INDEX[spec.unit]
        by_name = copro.isa.by_name
        self._sfpnop = by_name["SFPNOP"].opcode if "SFPNOP" in by_name else -1
        # The instructions after which the vector unit accepts only SFPNOP for a cycle (sfpu/lanes.py).
        self._nop_only_after = {by_name[n].opcode for n in ("SFPSWAP", "SFPSHFT2") if n in by_name}
        use_native = engine == "native" and native.available(copro.arch.name)
        self.native = native.NativeEngine(self) if use_native else None
        self.engine = "native" if self.native is not None else "python"
        if self.native is not None:
            self._reached = self.native.out[native.OUT_REACHED :][:1]  # one clock for both

    def reset(self) -> None:
        """Drop every queued, in-flight and blocked instruction and the statistics, and go back to
        cycle 0 (Tile.reset; the coprocessor's own state is reset by Coprocessor.reset)."""
        for pipe in self.pipes:
            pipe.queue.entries.clear()
            pipe.reset()
        self.cycle = 0
        self.fast_path_instructions = 0
        if self.retired is not None:
            self.retired.clear()
        self.unit_counts[:] = 0
        self.python_counts[:] = 0
        if self.native is not None:
            self.native.reset()

    @property
    def cycle(self) -> int:
        """Everything before this cycle has been processed."""
        return int(self._reached[0])

    @cycle.setter
    def cycle(self, value: int) -> None:
        self._reached[0] = value

    @property
    def unit_stats(self) -> dict[str, list[int]]:
        """Per unit that retired anything: [instructions, busy cycles]."""
        rows = self.unit_counts[: len(UNITS)].tolist()
        return {UNITS[i]: [int(n), int(b)] for i, (n, b) in enumerate(rows) if n}

    @property
    def python_executed(self) -> dict[str, int]:
        """Per mnemonic: instructions the Python semantics executed (MVMUL's fast path counts too)."""
        names = {spec.opcode: name for name, spec in self.copro.isa.by_name.items()}
        return {names[op]: int(self.python_counts[op]) for op in np.flatnonzero(self.python_counts)}

    # ------------------------------------------------------------------ queue consumer interface
    def take_time(self, pipe: int) -> int | None:
        """When the head of ``pipe``'s queue leaves it is not known in advance."""
        return None

    @property
    def idle(self) -> bool:
        return all(p.idle for p in self.pipes)

    def blocked_pipes(self) -> list[Pipe]:
        return [p for p in self.pipes if p.blocked is not None]

    def l1_written(self, address: int, size: int, cycle: int) -> None:
        """A core stored into L1: retry the pipes waiting on those bytes from ``cycle`` on."""
        for pipe in self.pipes:
            watch = pipe.watch_l1
            if (
                pipe.blocked is not None
                and watch is not None
                and watch[0] < address + size
                and address < sum(watch)
            ):
                pipe.blocked_version = -1  # changed under it: try again
                pipe.blocked_at = max(pipe.blocked_at, cycle)

    def l1_watched_pages(self) -> set[int]:
        return {
            a // 4096 for p in self.pipes if p.blocked is not None and p.watch_l1 for a in (p.watch_l1[0],)
        }

    def can_progress(self) -> bool:
        """Some pipe has an instruction it will try again without any other state changing."""
        if self.copro.next_timed_change() is not None:
            return True
        return any(self._ready_cycle(pipe) is not None for pipe in self.pipes)

    def thread_idle(self, thread: int, cycle: int) -> bool:
        """No instruction of ``thread`` is queued, in flight, or still occupying its unit."""
        pipe = self.pipes[thread]
        return pipe.idle and pipe.done_cycle <= cycle

    def thread_idle_at(self, thread: int) -> int | None:
        """The cycle ``thread`` becomes idle if nothing more is pushed into it (None: not known yet,
        instructions are still queued or held)."""
        pipe = self.pipes[thread]
        return pipe.done_cycle if pipe.idle else None

    # ------------------------------------------------------------------ the engine
    def advance_to(self, horizon: int) -> None:
        """Process every instruction that issues before ``horizon`` (stops early on a wake-up)."""
        if horizon <= self.cycle:
            # Reached already: whatever can issue before it has (a core's push or write comes at or
            # after the cycle the engine was brought to, as the scheduler never lets it run ahead).
            return
        while True:
            if self.native is not None:
                if self.native.step(horizon):
                    return
            elif self._step(horizon):
                return

    def _step(self, horizon: int) -> bool:
        """One step of the reference engine: True when ``advance_to`` is done."""
        copro = self.copro
        tile = copro.tile
        best: Pipe | None = None
        best_cycle = horizon
        for pipe in self.pipes:
            cycle = self._ready_cycle(pipe)
            if cycle is not None and cycle < best_cycle:
                best, best_cycle = pipe, cycle
        due = copro.next_timed_change()
        if due is not None and due < horizon and (best is None or due <= best_cycle):
            # A change scheduled earlier (a Src bank's hand-over) comes before what issues then.
            woke = tile.wakes
            copro.apply_timed_changes(due)
            return tile.wakes != woke
        if best is None:
            self.reached(horizon)
            return True
        woke = tile.wakes
        self._issue(best, best_cycle)
        return tile.wakes != woke  # a core woke at best_cycle: it may push; do not run ahead of it

    def reached(self, horizon: int) -> None:
        """Nothing more issues before ``horizon``."""
        # Vector-unit work SFPLOADMACRO scheduled runs too (all of it at the end of a run).
        sfpu_macro.settle(self.copro, horizon - 1 if horizon < NEVER else None)
        self.cycle = max(self.cycle, horizon) if horizon < NEVER else self.cycle

    def _ready_cycle(self, pipe: Pipe) -> int | None:
        """Earliest cycle ``pipe`` can try its next instruction, or None if it has none."""
        if pipe.blocked is not None:
            if pipe.blocked_version != self.copro.version:
                return max(pipe.next_issue, pipe.blocked_at, self.copro.version_cycle + 1)
            if pipe.retry_at is not None:
                return max(pipe.next_issue, pipe.retry_at)
            return None  # only a state change can unblock it
        if pipe.words:
            opcode = pipe.words[0] >> OPCODE_SHIFT
            unit = self.unit_of[opcode]
            if unit == NO_UNIT:
                return pipe.next_issue  # _issue reports it
            return max(pipe.next_issue, self._free_for(opcode, unit))
        if pipe.queue.entries:  # through the input FIFO and the expanders
            return max(pipe.next_issue, pipe.queue.entries[0].cycle + FRONTEND.push_to_issue)
        return None

    def _issue(self, pipe: Pipe, cycle: int) -> None:
        copro = self.copro
        if not pipe.words:
            cycle = self._take(pipe, cycle)
            if not pipe.words:
                pipe.next_issue = cycle + 1
                return
        source = pipe.source
        assert source is not None
        word = pipe.words[0]
        try:
            instruction = copro.isa.decode(word)
        except InvalidInstruction as exc:
            raise InvalidInstruction(
                f"pipe {pipe.thread}: unknown Tensix opcode 0x{word >> 24:02x} ({exc.message})",
                core=source.core,
                pc=source.pc,
                cycle=cycle,
                value=word,
            ) from exc
        busy = int(copro.unit_clock[UNIT_INDEX[instruction.unit]])
        free = self._free_for(word >> OPCODE_SHIFT, UNIT_INDEX[instruction.unit])
        if free > cycle:
            pipe.next_issue = free  # the unit is occupied: try again when it frees up
            tallies.waited(pipe.row, UNIT_INDEX[instruction.unit], cycle, free, self._blocked(pipe))
            tallies.stalls_from(self.state, self.unit_counts, pipe.thread, cycle)
            return
        if instruction.unit == "matrix":
            held = copro.matrix_hold(instruction.name, cycle)
            if held is not None:
                pipe.next_issue = held  # the matrix unit holds it after a data move
                tallies.waited(pipe.row, UNIT_INDEX[instruction.unit], cycle, held, self._blocked(pipe))
                tallies.stalls_from(self.state, self.unit_counts, pipe.thread, cycle)
                return
        try:
            reason = copro.gate_blocks(pipe.thread, instruction, cycle)
        except SimError as error:
            raise error.located(source.core, source.pc) from None
        retry_at = copro.gate_release_cycle(pipe.thread, cycle + 1) if reason is not None else None
        if reason is None:
            sfpu_macro.settle(copro, cycle)  # vector-unit work SFPLOADMACRO scheduled up to now first
            fn = lookup(copro.arch.name, instruction.name)
            if fn is None:
                raise Unimplemented(
                    f"pipe {pipe.thread}: {instruction.name} is not executed by the emulator on "
                    f"{copro.arch.name} yet",
                    core=source.core,
                    pc=source.pc,
                    cycle=cycle,
                    value=word,
                )
            ctx = Context(copro, pipe.thread, cycle, instruction, source.core, source.pc)
            fast = self.fast_paths and instruction.name == "MVMUL" and len(pipe.words) > 1
            if fast and not sfpu_macro.pending(copro):
                cycles = mvmul_run(ctx, pipe.words, self._quiet_until(pipe))
                if cycles is not None:
                    self._retire_run(pipe, instruction.unit, busy, cycles)
                    return
            if instruction.unit == "sfpu":
                outcome = sfpu_macro.issue(ctx, fn)  # scheduled work may discard it; counts it down
            else:
                outcome = fn(ctx, **instruction.fields)
            if isinstance(outcome, Wait):
                reason = outcome.reason
                pipe.watch_l1 = outcome.l1
                retry_at = outcome.until
            else:
                assert isinstance(outcome, Retire)
                self._retired(pipe, instruction.unit, busy, cycle, outcome.cycles, 1)
                return
        if pipe.blocked is None:
            pipe.blocked_since = cycle
        tallies.stalls_from(self.state, self.unit_counts, pipe.thread, cycle)
        tallies.waiting(pipe.row, cycle, waits.kind_of(reason, copro))
        pipe.blocked = f"{instruction.name}: {reason}"
        pipe.blocked_at = cycle
        pipe.blocked_version = copro.version
        pipe.retry_at = retry_at
        if pipe.watch_l1 is not None:
            copro.tile.pipe_watches_l1(pipe.watch_l1)

    @staticmethod
    def _blocked(pipe: Pipe) -> bool:
        """Its head instruction is blocked and counts its wait as blocked when it goes."""
        return bool(pipe.v[BLOCKED]) and pipe.v[BLOCKED_SINCE] >= 0

    def _free_for(self, opcode: int, unit: int) -> int:
        """The cycle from which the instruction ``opcode`` can issue to ``unit`` (its index): when the
        unit is free, or for an SFPNOP on the second cycle of an SFPSWAP or a lane shuffle."""
        clock = int(self.copro.unit_clock[unit])
        if opcode == self._sfpnop:
            early, until = self.copro.sfpu.nop_from
            if until == clock:  # nothing has taken the unit since
                return int(early)
        return clock

    def _retired(self, pipe: Pipe, unit: str, busy: int, cycle: int, cycles: int, count: int) -> None:
        """``count`` instructions left ``pipe``, the last issuing at ``cycle`` and occupying ``unit``
        for ``cycles``."""
        copro = self.copro
        if unit == "sfpu":
            holds = (pipe.words[count - 1] >> OPCODE_SHIFT) in self._nop_only_after
            copro.sfpu.nop_from[:] = (nop_from(holds, cycle, cycles), max(busy, cycle + cycles))
        if self.events is not None and count == 1:
            self._trace_retire(pipe, pipe.words[0], cycle, cycles, True)
        if pipe.blocked is not None and pipe.blocked_since is not None:
            pipe.add_stall(pipe.blocked.split(":", 1)[0], cycle - pipe.blocked_since)
        pipe.blocked_since = None
        tallies.stalls_until(self.state, self.unit_counts, pipe.thread, cycle)
        tallies.waiting(pipe.row, cycle, waits.NONE)
        if self.retired is not None and count == 1:
            self.retired.append((pipe.thread, pipe.words[0], cycle))
        self.python_counts[pipe.words[0] >> OPCODE_SHIFT] += count
        index = UNIT_INDEX[unit]
        stats = self.unit_counts[index]
        stats[0] += count
        stats[1] += cycles * count
        pipe.row[tallies.UNIT_ISSUED + index] += count
        if count == 1:
            tallies.math_busy(self.unit_counts, index, cycle, cycles)
        pipe.words.drop(count)
        if not pipe.words:
            copro.frontend.mop_busy[pipe.thread] = False
        pipe.blocked = None
        pipe.retry_at = None
        pipe.watch_l1 = None
        pipe.next_issue = cycle + (max(cycles, 1) if unit in THREAD_HELD_UNITS else 1)
        pipe.issued += count
        pipe.last_cycle = cycle
        copro.unit_clock[UNIT_INDEX[unit]] = max(busy, cycle + cycles)
        pipe.done_cycle = max(pipe.done_cycle, cycle + cycles)
        copro.bump(cycle)
        copro.tile.pipe_progress(pipe.thread, cycle)

    def _trace_retire(self, pipe: Pipe, word: int, cycle: int, cycles: int, first: bool) -> None:
        """Tell the event log of one instruction retiring (the native engine's trace_row); ``first``:
        the pipe's block, if any, was this instruction's."""
        assert self.events is not None
        blocked = pipe.blocked if first else None
        source = pipe.source
        self.events.retire(
            pipe.thread,
            word,
            cycle,
            cycles,
            -1 if blocked is None or pipe.blocked_since is None else pipe.blocked_since,
            blocked,
            -1 if source is None else source.cycle,
            CORE_INDEX.get(source.core, -1) if source is not None else -1,
            state_word(self.copro),
        )

    def _retire_run(self, pipe: Pipe, unit: str, busy: int, cycles: list[int]) -> None:
        self.fast_path_instructions += len(cycles)
        if pipe.blocked is not None and pipe.blocked_since is not None:
            # The run's first instruction ends the wait (its last one's cycle is what _retired gets).
            pipe.add_stall(pipe.blocked.split(":", 1)[0], cycles[0] - pipe.blocked_since)
            pipe.blocked_since = None
        tallies.stalls_until(self.state, self.unit_counts, pipe.thread, cycles[0])
        tallies.waiting(pipe.row, cycles[0], waits.NONE)
        for cycle in cycles:
            tallies.math_busy(self.unit_counts, UNIT_INDEX[unit], cycle, MATRIX.issue)
        if self.events is not None:
            for i, cycle in enumerate(cycles):
                self._trace_retire(pipe, pipe.words[i], cycle, MATRIX.issue, i == 0)
        if self.retired is not None:
            self.retired.extend((pipe.thread, pipe.words[i], cycle) for i, cycle in enumerate(cycles))
        self._retired(pipe, unit, busy, cycles[-1], MATRIX.issue, len(cycles))

    def _quiet_until(self, pipe: Pipe) -> int:
        """The first cycle at which anything but ``pipe`` itself may next act on the coprocessor: another
        pipe issuing, or a running core that can push into another pipe."""
        quiet = self.copro.next_timed_change() or NEVER
        for other in self.pipes:
            if other is not pipe:
                ready = self._ready_cycle(other)
                if ready is not None:
                    quiet = min(quiet, ready)
        for core in self.copro.tile.cores:
            if core.state is CoreState.RUNNING and core.push_pipes - {pipe.thread}:
                quiet = min(quiet, core.time)
        return quiet

    def _take(self, pipe: Pipe, cycle: int) -> int:
        """The MOP stage takes the next queue entry at ``cycle``; returns the cycle it starts."""
        copro = self.copro
        entry = pipe.queue.entries[0]
        word = entry.word
        # Expand first: an expansion that raises leaves the entry at the head of its queue and the
        # pipe as it was, so the error repeats if the tile runs on.
        words = copro.expand(pipe.thread, word, entry)
        pipe.queue.entries.popleft()
        if pipe.queue.record:
            pipe.queue.taken.append((cycle, entry))
        copro.tile.queue_popped(pipe.thread, cycle)
        opcode = word >> 24
        is_mop = opcode == copro.mop_opcode
        if pipe.last_was_mop and not is_mop:
            cycle += FRONTEND.mop_exit_penalty
        pipe.last_was_mop = is_mop
        pipe.source = entry
        pipe.words.extend(words)
        # The expander counts as busy until the last word of a MOP expansion has left the pipe.
        copro.frontend.mop_busy[pipe.thread] = is_mop and bool(pipe.words)
        pipe.next_issue = cycle
        return cycle


@semantics("NOP", arches=BOTH)
def nop(ctx: Context) -> Retire:
    return Retire(1)
