"""The unpackers' L1 fetch: the state each unpacker keeps between instructions (:class:`UnpackState`:
its context counters and its latest UNPACR's fetch), the fetch's timing, and the wait of an
instruction for an unpacker still fetching.

Timing (timing.UNPACK; UNPACR_Regular.md "Performance")
-------------------------------------------------------
An UNPACR spends two cycles computing its input address: it holds the unpackers' shared issue slot
(the ISA table's one "unpack" unit, so no other UNPACR starts) and its own thread for them
(``Retire(address_cycles)``; the frontend's THREAD_HELD_UNITS). Its unpacker then fetches the L1
bytes on its own, at the speed the mode wants (x1 / x2 / x4: 16 / 32 / 64 bytes a cycle;
``Throttle_mode``, except that Tileize_mode always wants x4, BFP2 x1 and BFP4 into Dst at most x2).
While both unpackers fetch, each gets the speed the page's interference table grants
(``UNPACK.shared_speeds``); whichever finishes first leaves the other its own speed again. A later
start can so slow down the other unpacker's remaining fetch: :func:`start_fetch` recomputes its end
(``UnpackState`` keeps each fetch as plain data, :func:`left_at` gives its bytes left at a cycle).
The readings taken:

- Only fetching counts as "active" for the table: an UNPACR's two address cycles do not slow the
  other unpacker down. The bytes counted are the datums' (``count * DatumSizeBytes``), not BFP
  exponent sections or row padding; a fetch ends on the cycle its last partial beat is read.
- Any instruction for an unpacker still fetching (UNPACR in every mode, UNPACR_NOP) waits until
  the fetch ends (``Wait(until=end)``), and only then starts its own address cycles: an unpacker
  runs its instructions in order and the page gives no overlap between them. A wait leaves the
  shared issue slot free, so the other unpacker's UNPACR may go meanwhile.
- STALLWAIT C1 / C2 ("unpacker 0 / 1 busy") hold while that unpacker's UNPACR is in its address
  cycles or fetching (``coprocessor.busy_end("unpacker0" / "unpacker1")``); UNPACR_NOP's one cycle
  is not counted (its effects are immediate).
- FlipSrc hands the bank to the matrix unit at the end of the fetch (regs.hand_over; the pipe
  engine makes the hand-over in cycle order), so the matrix unit never reads a bank before the
  unpacker has filled it; the unpacker itself goes on with the other bank at once. If a later
  fetch slows this one down, the hand-over moves with its end. UNPACR_NOP's SETDVALID form waits for
  the fetch like any unpacker instruction, then hands over at once. The matrix unit's own SETDVALID
  hands over at once (no page ties it to the unpackers' progress).
- The issuing pipe counts as busy until the fetch ends (CoprocessorDoneCheck, ``raw.run_words``);
  a pipe whose fetch another start slows down is extended likewise.
- Compressed input (more than two address cycles) and upsampling are not modelled (unit.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.tensix.semantics import Context, Wait
from tensixsim.timing import UNPACK, UNPACK_WORMHOLE

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor


# The per-unpacker names the coprocessor's ``busy_end`` / ``unit_busy`` take (STALLWAIT C1 / C2).
UNPACKER_UNITS = ("unpacker0", "unpacker1")


@dataclass
class UnpackState:
    """Unpacker state that is not a register file: ``Unpackers[u].ContextCounter[thread]``, and the
    L1 fetch of each unpacker's latest UNPACR (the "Timing" paragraph above)."""

    context_counter: np.ndarray  # (2, pipes) uint8, uint3_t counters
    # Per unpacker: the first cycle it has nothing in flight (its data phase has ended).
    end: np.ndarray  # (2,) int64
    # Its fetch as a piecewise-constant rate: ``left`` bytes remained at cycle ``anchor``; it fetches
    # at ``shared_speed`` until ``shared_until`` (the other unpacker fetching too), then at ``want``.
    anchor: np.ndarray  # (2,) int64
    left: np.ndarray  # (2,) int64
    want: np.ndarray  # (2,) int8: 0 / 1 / 2 for x1 / x2 / x4
    shared_until: np.ndarray  # (2,) int64
    shared_speed: np.ndarray  # (2,) int8
    thread: np.ndarray  # (2,) int8: the pipe that issued it (-1: none)
    # Per unpacker, for run statistics: fetches started and cycles spent fetching.
    fetches: np.ndarray  # (2,) int64
    fetch_cycles: np.ndarray  # (2,) int64
    # The same cycles by the pipe whose UNPACR each fetch is (the performance counters' UNPACKu_BUSY_THREADt).
    thread_cycles: np.ndarray  # (2, pipes) int64
    # (1,) int64: bytes a cycle at x1, the architecture's (timing.py UNPACK / UNPACK_WORMHOLE).
    bytes_per_cycle: np.ndarray = field(default_factory=lambda: np.array([UNPACK.l1_bytes_per_cycle]))

    @classmethod
    def new(cls, arch: Arch) -> UnpackState:
        timing = UNPACK_WORMHOLE if arch.name == "wormhole" else UNPACK
        return cls(
            bytes_per_cycle=np.array([timing.l1_bytes_per_cycle], np.int64),
            context_counter=np.zeros((2, arch.pipe_count), np.uint8),
            end=np.zeros(2, np.int64),
            anchor=np.zeros(2, np.int64),
            left=np.zeros(2, np.int64),
            want=np.zeros(2, np.int8),
            shared_until=np.zeros(2, np.int64),
            shared_speed=np.zeros(2, np.int8),
            thread=np.full(2, -1, np.int8),
            fetches=np.zeros(2, np.int64),
            fetch_cycles=np.zeros(2, np.int64),
            thread_cycles=np.zeros((2, arch.pipe_count), np.int64),
        )


def busy_end(copro: Coprocessor, unit: int) -> int:
    """The first cycle from which unpacker ``unit`` has nothing in flight (STALLWAIT C1 / C2)."""
    return int(copro.unpackers.end[unit])


def _rate(state: UnpackState, speed: int) -> int:
    return int(state.bytes_per_cycle[0]) << speed


def left_at(state: UnpackState, unit: int, cycle: int) -> int:
    """The bytes unpacker ``unit`` still has to fetch at the start of ``cycle`` (0 once done)."""
    if int(state.end[unit]) <= cycle:
        return 0
    anchor, until = int(state.anchor[unit]), int(state.shared_until[unit])
    shared = max(0, min(cycle, until) - anchor)
    solo = max(0, cycle - max(until, anchor))
    moved = shared * _rate(state, int(state.shared_speed[unit])) + solo * _rate(state, int(state.want[unit]))
    return int(state.left[unit]) - moved


def start_fetch(state: UnpackState, unit: int, start: int, nbytes: int, want: int, thread: int) -> None:
    """Unpacker ``unit`` starts fetching ``nbytes`` at speed ``want`` at cycle ``start`` for pipe
    ``thread``'s UNPACR: set its schedule, and the other unpacker's from ``start`` on if it is still
    fetching then (the page's interference table while both fetch; whichever ends first frees the
    other to its own speed)."""
    other = 1 - unit
    rest = left_at(state, other, start)
    other_end, other_thread = int(state.end[other]), int(state.thread[other])
    state.anchor[unit], state.left[unit], state.want[unit] = start, nbytes, want
    state.fetches[unit] += 1
    if rest <= 0:
        state.shared_until[unit], state.shared_speed[unit] = start, want
        state.end[unit] = start + -(-nbytes // _rate(state, want))
        state.fetch_cycles[unit] += int(state.end[unit]) - start
        state.thread_cycles[unit, thread] += int(state.end[unit]) - start
        return
    other_want = int(state.want[other])
    wants = (want, other_want) if unit == 0 else (other_want, want)
    gets = UNPACK.shared_speeds[wants[0]][wants[1]]
    speed, other_speed = (gets[0], gets[1]) if unit == 0 else (gets[1], gets[0])
    ends = [start + -(-nbytes // _rate(state, speed)), start + -(-rest // _rate(state, other_speed))]
    shared_end = min(ends)
    for u, total, shared, alone in ((unit, nbytes, speed, want), (other, rest, other_speed, other_want)):
        state.anchor[u], state.left[u] = start, total
        state.shared_until[u], state.shared_speed[u] = shared_end, shared
        remaining = total - (shared_end - start) * _rate(state, shared)
        state.end[u] = shared_end + (-(-remaining // _rate(state, alone)) if remaining > 0 else 0)
    state.fetch_cycles[unit] += int(state.end[unit]) - start
    state.thread_cycles[unit, thread] += int(state.end[unit]) - start
    state.fetch_cycles[other] += int(state.end[other]) - other_end  # slowed by the newcomer
    if other_thread >= 0:
        state.thread_cycles[other, other_thread] += int(state.end[other]) - other_end


def unpack_state(copro: Coprocessor) -> UnpackState:
    """The coprocessor's unpacker state."""
    return copro.unpackers


def still_fetching(unit: int, end: int) -> str:
    """Why an instruction for unpacker ``unit`` waits until its fetch ends at ``end``."""
    return f"unpacker {unit} is fetching from L1 until cycle {end}"


def fetch_wait(ctx: Context, unit: int) -> Wait | None:
    """An instruction for an unpacker whose UNPACR is still fetching waits until it is done."""
    end = int(unpack_state(ctx.copro).end[unit])
    if end > ctx.cycle:
        return Wait(still_fetching(unit, end), until=end)
    return None
