"""A one-line progress display for long runs, and stopping a run cleanly on Ctrl-C.

The display is one status line on a terminal, rewritten in place (carriage return, erase to the end
of the line): the emulated cycle, emulated cycles per wall second, and each live core's state. It
appears only once a run has lasted :data:`DELAY` seconds, is redrawn at most every :data:`INTERVAL`
seconds and is erased when the run ends, so short runs and anything not on a terminal never see it.
A line is all it needs, so it is written here rather than taken from a progress-bar library (a run
has no known end to draw a bar towards).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tensixsim.tile import Tile

DELAY = 2.0  # seconds of wall time before the line first appears
INTERVAL = 0.25  # seconds between redraws at most
_SHORT_STATE = {"running": "run", "waiting": "wait", "finished": "done", "reset": "reset"}


def status_line(tile: Tile, rate: float | None, width: int) -> str:
    """``cycle 1234567  2.1 Mcyc/s  brisc run  ncrisc wait  trisc0 done ...``, cut to ``width``."""
    parts = [f"cycle {tile.cycle:,}"]
    if rate is not None:
        parts.append(f"{rate / 1e6:.2f} Mcyc/s" if rate >= 1e5 else f"{rate:,.0f} cyc/s")
    for core in tile.cores:
        state = core.state.value
        if state != "reset":
            parts.append(f"{core.name} {_SHORT_STATE.get(state, state)}")
    line = "  ".join(parts)
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


class ProgressLine:
    """Call :meth:`update` often (it is cheap until it is time to draw) and :meth:`close` at the end."""

    def __init__(
        self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic, delay: float = DELAY
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.delay = delay
        self.next_draw = self.started + delay
        self.shown = False
        self._last: tuple[float, int] | None = None  # (wall time, cycle) of the previous draw

    def update(self, tile: Tile) -> None:
        now = self.clock()
        if now < self.next_draw:
            return
        self.next_draw = now + INTERVAL
        cycle = tile.cycle
        rate = None
        if self._last is not None and now > self._last[0]:
            rate = (cycle - self._last[1]) / (now - self._last[0])
        self._last = (now, cycle)
        width = shutil.get_terminal_size((80, 24)).columns - 1
        self.stream.write("\r" + status_line(tile, rate, width) + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        """Erase the line (if it was ever drawn)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def progress_for(stream: TextIO | None) -> ProgressLine | None:
    """A progress line on ``stream`` when it is a terminal, else None."""
    if stream is None:
        return None
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        tty = False
    return ProgressLine(stream) if tty else None


@contextlib.contextmanager
def sigint_interrupts(tile: Tile) -> Iterator[None]:
    """While inside: a first Ctrl-C asks ``tile`` to stop at its next slice boundary
    (:meth:`Tile.interrupt`), a second one raises KeyboardInterrupt at once as usual.

    Only where Python's own SIGINT handler is in place and only in the main thread (signal handlers
    can be set nowhere else); otherwise Ctrl-C behaves as it did.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def first(signum: int, frame: object) -> None:
        tile.interrupt()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C: at once

    signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
