"""The running tallies the performance counters read (tensixsim.tensix.frontend.perf), kept by both
engines as they issue: this module is the reference engine's half, engine.c's functions of the same
names the native engine's, in arrays both share.

Per pipe, after the fields of frontend.pipes.Pipe (``FIRST`` on): per unit, the instructions the
pipe issued to it (``UNIT_ISSUED``) and the cycles its head instruction waited for it to be free,
occupied or holding after a data move (``UNIT_WAITED``); the end of the latest such wait
(``WAIT_UNTIL``: a wait is counted once however often the pipe looks again before it ends); the
cycle from which its head instruction has not gone (``STALLED_SINCE``, -1: it is not stalled); per
wait kind (frontend.waits.KINDS), the cycles its head instruction was blocked on one (``WAITING``),
the kind it is blocked on now and since when.

After the units' rows of ``Engine.unit_counts``: ``MATH_ROW``, the cycles the matrix unit or the
vector unit (or both) was occupied and the end of the latest; ``ANY_STALL_ROW``, the cycles some
pipe was stalled and since when the pipes now stalled have been; ``STALLED_ROW``, a bit per pipe
stalled now.
"""

from __future__ import annotations

import numpy as np

from tensixsim.isa.spec import UNITS
from tensixsim.tensix.frontend.capture import QE_FIELDS
from tensixsim.tensix.frontend.waits import KINDS

FIRST = 13 + QE_FIELDS  # frontend.pipes.SRC (13) + QE_FIELDS: after the source entry (checked there)
UNIT_ISSUED = FIRST
UNIT_WAITED = UNIT_ISSUED + len(UNITS)
WAIT_UNTIL = UNIT_WAITED + len(UNITS)
STALLED_SINCE = WAIT_UNTIL + 1
WAITING = STALLED_SINCE + 1
WAITING_KIND = WAITING + len(KINDS)
WAITING_SINCE = WAITING_KIND + 1
END = WAITING_SINCE + 1  # frontend.pipes.PIPE_FIELDS

MATH_ROW = len(UNITS)
ANY_STALL_ROW = MATH_ROW + 1
STALLED_ROW = ANY_STALL_ROW + 1  # a bit per pipe stalled now (in its first column)
ROWS = STALLED_ROW + 1
_MATH_UNITS = frozenset({UNITS.index("matrix"), UNITS.index("sfpu")})
_NONE = -1


def waited(row: np.ndarray, unit: int, cycle: int, until: int, blocked: bool) -> None:
    """A pipe's head instruction, looked at on ``cycle``, waits until ``until`` for ``unit``: count
    the cycles of that wait not counted yet. One that was ``blocked`` before counts its whole wait as
    blocked when it goes (Pipe.stall_cycles), this part included."""
    if blocked:
        return
    start = max(cycle, int(row[WAIT_UNTIL]))
    if until > start:
        row[UNIT_WAITED + unit] += until - start
        row[WAIT_UNTIL] = until


def stalls_from(state: np.ndarray, unit_counts: np.ndarray, t: int, cycle: int) -> None:
    """Pipe ``t``'s next instruction did not go on ``cycle``: it stalls from then until it goes; the
    first pipe to stall starts a stretch of ANY_THREAD_STALL. ``state``: the pipes' rows."""
    if state[t, STALLED_SINCE] >= 0:
        return
    if not unit_counts[STALLED_ROW, 0]:
        unit_counts[ANY_STALL_ROW, 1] = cycle
    unit_counts[STALLED_ROW, 0] |= 1 << t
    state[t, STALLED_SINCE] = cycle


def stalls_until(state: np.ndarray, unit_counts: np.ndarray, t: int, cycle: int) -> None:
    """Pipe ``t``'s next instruction goes on ``cycle``: its stall, if any, ends; the last to end closes
    the stretch."""
    if state[t, STALLED_SINCE] < 0:
        return
    state[t, STALLED_SINCE] = _NONE
    unit_counts[STALLED_ROW, 0] &= ~(1 << t)
    if not unit_counts[STALLED_ROW, 0]:
        unit_counts[ANY_STALL_ROW, 0] += cycle - int(unit_counts[ANY_STALL_ROW, 1])


def waiting(row: np.ndarray, cycle: int, kind: int) -> None:
    """From ``cycle``, the pipe's head instruction waits for ``kind`` (waits.NONE: nothing the
    counters name, or it goes): count the cycles of the kind before."""
    old = int(row[WAITING_KIND])
    if old < 0 and kind < 0:
        return  # the common case: an instruction that goes without having waited
    if old >= 0:
        row[WAITING + old] += cycle - int(row[WAITING_SINCE])
    row[WAITING_KIND] = kind
    row[WAITING_SINCE] = cycle


def math_busy(unit_counts: np.ndarray, unit: int, cycle: int, cycles: int) -> None:
    """``unit`` is occupied from ``cycle`` for ``cycles``: if it is the matrix or the vector unit, add
    the cycles neither was already counted busy (instructions retire in issue order)."""
    if unit not in _MATH_UNITS:
        return
    end = cycle + cycles
    start = max(cycle, int(unit_counts[MATH_ROW, 1]))
    if end > start:
        unit_counts[MATH_ROW, 0] += end - start
        unit_counts[MATH_ROW, 1] = end
