"""The pipes: input queue -> MOP expander -> replay expander -> wait gate -> unit.

One :class:`Pipe` per thread. The engine processes instructions of all three pipes in cycle order
(pipes interact through semaphores, mutexes and shared units), one instruction per pipe per cycle at
most. An instruction that cannot go (wait gate, or its semantics answer ``Wait``) blocks its pipe
until coprocessor state changes; the others go on.

The engine never runs ahead of the cores that could still push: the tile advances it to the earliest
running core's cycle, and it stops as soon as it wakes a waiting core.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tensixsim.errors import InvalidInstruction, SimError, Unimplemented
from tensixsim.riscv.core import CoreState
from tensixsim.tensix import sfpu_macro
from tensixsim.tensix.capture import InputQueue, PushedInstruction
from tensixsim.tensix.matrix_runs import mvmul_run
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup, semantics
from tensixsim.timing import FRONTEND, MATRIX

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

NEVER = 1 << 62
# Units whose occupancy also holds the issuing thread: an UNPACR's address cycles (UNPACR_Regular.md
# "Performance": the issuing thread cannot start its next instruction meanwhile).
THREAD_HELD_UNITS = frozenset({"unpack"})


@dataclass
class Pipe:
    """One thread's path from its input queue to the units."""

    thread: int
    queue: InputQueue
    words: deque[int] = field(default_factory=deque)  # expanded words of the entry in flight
    source: PushedInstruction | None = None  # the queue entry they came from
    next_issue: int = 0  # earliest cycle for its next instruction
    blocked: str | None = None  # why the head instruction waits
    blocked_at: int = 0
    blocked_version: int = -1  # coprocessor state version when it blocked
    retry_at: int | None = None  # a cycle at which the block lifts by itself (a lag, a busy unit)
    watch_l1: tuple[int, int] | None = None  # L1 bytes a core may store to that could unblock it
    last_was_mop: bool = False
    issued: int = 0
    last_cycle: int = 0
    done_cycle: int = 0  # when its last issued instruction leaves its unit
    blocked_since: int | None = None  # when the head instruction first blocked
    # Cycles the head instruction spent blocked, by instruction name: where a pipe's time went.
    stalled: dict[str, int] = field(default_factory=dict)

    @property
    def idle(self) -> bool:
        return not self.words and not self.queue.entries


class Engine:
    """Runs the three pipes of one coprocessor."""

    def __init__(self, copro: Coprocessor, queues: list[InputQueue]) -> None:
        self.copro = copro
        self.pipes = [Pipe(q.pipe, q) for q in queues]
        self.cycle = 0  # everything before this cycle has been processed
        # Execute runs of MVMULs as one vectorised step when nothing else can observe the difference
        # (matrix_unit.mvmul_run). Results and cycles are the same either way; off is for comparing.
        self.fast_paths = True
        self.fast_path_instructions = 0  # how many instructions went through a fast path
        # Per unit: [instructions retired, cycles occupied] (a unit's occupancy may overlap waits).
        self.unit_stats: dict[str, list[int]] = {}

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

    # ------------------------------------------------------------------ the engine
    def advance_to(self, horizon: int) -> None:
        """Process every instruction that issues before ``horizon`` (stops early on a wake-up)."""
        copro = self.copro
        tile = copro.tile
        while True:
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
                if tile.wakes != woke:
                    return
                continue
            if best is None:
                # Vector-unit work SFPLOADMACRO scheduled runs too (all of it at the end of a run).
                sfpu_macro.settle(copro, horizon - 1 if horizon < NEVER else None)
                self.cycle = max(self.cycle, horizon) if horizon < NEVER else self.cycle
                return
            woke = tile.wakes
            self._issue(best, best_cycle)
            if tile.wakes != woke:
                return  # a core woke at best_cycle: it may push; do not run ahead of it

    def _ready_cycle(self, pipe: Pipe) -> int | None:
        """Earliest cycle ``pipe`` can try its next instruction, or None if it has none."""
        if pipe.blocked is not None:
            if pipe.blocked_version != self.copro.version:
                return max(pipe.next_issue, pipe.blocked_at, self.copro.version_cycle + 1)
            if pipe.retry_at is not None:
                return max(pipe.next_issue, pipe.retry_at)
            return None  # only a state change can unblock it
        if pipe.words:
            try:
                unit = self.copro.isa.decode(pipe.words[0]).unit
            except InvalidInstruction:
                return pipe.next_issue  # _issue reports it
            return max(pipe.next_issue, self.copro.busy_until.get(unit, 0))
        if pipe.queue.entries:
            return max(pipe.next_issue, pipe.queue.entries[0].cycle + 1)
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
                f"pipe {pipe.thread}: unknown Tensix opcode 0x{word >> 24:02x}",
                core=source.core,
                pc=source.pc,
                cycle=cycle,
                value=word,
            ) from exc
        busy = copro.busy_until.get(instruction.unit, 0)
        if busy > cycle:
            pipe.next_issue = busy  # the unit is occupied: try again when it frees up
            return
        if instruction.unit == "matrix":
            held = copro.matrix_hold(instruction.name, cycle)
            if held is not None:
                pipe.next_issue = held  # the matrix unit holds it after a data move
                return
        try:
            reason = copro.gate_blocks(pipe.thread, instruction, cycle)
        except SimError as error:
            raise error.located(source.core, source.pc) from None
        retry_at = copro.gate_release_cycle(pipe.thread, cycle + 1) if reason is not None else None
        if reason is None:
            fn = lookup(copro.arch.name, instruction.name)
            if fn is None:
                raise Unimplemented(
                    f"pipe {pipe.thread}: {instruction.name} is not executed by the emulator yet",
                    core=source.core,
                    pc=source.pc,
                    cycle=cycle,
                    value=word,
                )
            ctx = Context(copro, pipe.thread, cycle, instruction, source.core, source.pc)
            sfpu_macro.settle(copro, cycle)  # vector-unit work SFPLOADMACRO scheduled up to now first
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
        pipe.blocked = f"{instruction.name}: {reason}"
        pipe.blocked_at = cycle
        pipe.blocked_version = copro.version
        pipe.retry_at = retry_at
        if pipe.watch_l1 is not None:
            copro.tile.pipe_watches_l1(pipe.watch_l1)

    def _retired(self, pipe: Pipe, unit: str, busy: int, cycle: int, cycles: int, count: int) -> None:
        """``count`` instructions left ``pipe``, the last issuing at ``cycle`` and occupying ``unit``
        for ``cycles``."""
        copro = self.copro
        if pipe.blocked is not None and pipe.blocked_since is not None:
            name = pipe.blocked.split(":", 1)[0]
            pipe.stalled[name] = pipe.stalled.get(name, 0) + cycle - pipe.blocked_since
        pipe.blocked_since = None
        stats = self.unit_stats.setdefault(unit, [0, 0])
        stats[0] += count
        stats[1] += cycles * count
        for _ in range(count):
            pipe.words.popleft()
        if not pipe.words:
            copro.frontend.mop_busy[pipe.thread] = False
        pipe.blocked = None
        pipe.retry_at = None
        pipe.watch_l1 = None
        pipe.next_issue = cycle + (max(cycles, 1) if unit in THREAD_HELD_UNITS else 1)
        pipe.issued += count
        pipe.last_cycle = cycle
        copro.busy_until[unit] = max(busy, cycle + cycles)
        pipe.done_cycle = max(pipe.done_cycle, cycle + cycles)
        copro.bump(cycle)
        copro.tile.pipe_progress(pipe.thread, cycle)

    def _retire_run(self, pipe: Pipe, unit: str, busy: int, cycles: list[int]) -> None:
        self.fast_path_instructions += len(cycles)
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
        entry = pipe.queue.entries.popleft()
        if pipe.queue.record:
            pipe.queue.taken.append((cycle, entry))
        copro.tile.queue_popped(pipe.thread, cycle)
        word = entry.word
        opcode = word >> 24
        is_mop = opcode == copro.mop_opcode
        if pipe.last_was_mop and not is_mop:
            cycle += FRONTEND.mop_exit_penalty
        pipe.last_was_mop = is_mop
        pipe.source = entry
        pipe.words.extend(copro.expand(pipe.thread, word, entry))
        # The expander counts as busy until the last word of a MOP expansion has left the pipe.
        copro.frontend.mop_busy[pipe.thread] = is_mop and bool(pipe.words)
        pipe.next_issue = cycle
        return cycle


@semantics("NOP")
def nop(ctx: Context) -> Retire:
    return Retire(1)
