"""A core's side of poll-loop parking (tensixsim/parking.py decides what to park): counting a short
loop's iterations, running one probe iteration with the memory hooks recording its loads, undoing
it, and accounting the iterations a parked loop is assumed to run."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from tensixsim.riscv.hook_state import PROBE_READS, STOP_SPIN

if TYPE_CHECKING:
    from unicorn import Uc

    from tensixsim.riscv.csrs import CsrFile
    from tensixsim.riscv.native import Hooks
    from tensixsim.tile import Tile

PROBE_BUDGET = 4096  # instructions: a probe iteration longer than this is not a poll loop

# A loop head entered this many times (within a few blocks each time) is checked for being a poll
# loop (see Tile._try_park; the probe is LoopProbe.probe_iteration). An L1 poll loop takes about ten
# cycles an iteration (the load's result is ready 8 cycles after it issues): this many iterations must
# fit in one slice of a small quantum for it to be parked.
SPIN_THRESHOLD = 8
# A loop that reads a synchronised register (a stream counter, a semaphore) is checked sooner: its
# wake-up is exact (Tile._wake), and every poll costs a round trip through the scheduler.
MMIO_SPIN_THRESHOLD = 3
# So is a loop that loads an L1 page only its core uses and never stored to (by page ordering): what
# it reads is most likely a flag another core or the NoC will write first. Parked early, the loop is
# woken exactly by that first write; still running, it could have run past it (docs/timing.md, "L1
# between cores").
PRIVATE_POLL_SPIN_THRESHOLD = MMIO_SPIN_THRESHOLD


class LoopProbe:
    """The loop-probing half of :class:`~tensixsim.riscv.core.Core` (which provides the state named
    below and ``run_slice``)."""

    uc: Uc
    hooks: Hooks
    tile: Tile
    csrs: CsrFile
    time: int
    instructions: int
    sync_stopped: bool
    _pc: int
    _loop_entry: int
    _carry_loop: bool
    _busy_probes: set[int]
    # What the last probe iteration measured (the parking code reads them).
    poll_period: int
    poll_instructions: int
    poll_reads: dict[int, list[int]]  # register (word address): the cycle offsets of its reads
    poll_l1_reads: list[tuple[int, int, int]]

    if TYPE_CHECKING:

        def run_slice(self, budget: int, spin_threshold: int = ..., carry: bool = True) -> None: ...

    @property
    def spin_threshold(self) -> int:
        """The iterations the loop being counted is checked for polling after."""
        return int(self.hooks.state.spin_threshold)

    @property
    def stopped_spinning(self) -> bool:
        return self.hooks.state.stop_reason == STOP_SPIN

    def loop_entry_cycle(self) -> int:
        """Cycle at which the loop the core stopped in was first entered."""
        return self._loop_entry

    @property
    def loop_pending(self) -> bool:
        """The core is counting the iterations of a short loop not probed yet (it is probed after
        SPIN_THRESHOLD of them, and then parked or marked busy)."""
        s = self.hooks.state
        head = s.loop_head
        return s.busy[(head >> 2) & 63] != head and s.repeat < s.spin_threshold

    def mark_busy_loop(self) -> None:
        """The loop headed at pc does real work: never check it for polling again."""
        self.hooks.state.busy[(self._pc >> 2) & 63] = self._pc

    def probed_busy(self, head: int) -> None:
        """A probe found the loop headed at ``head`` doing real work. The first time in a row that
        may be a race: what the loop polls changed between the spin being detected and the probe,
        which then ran the loop's way out (and back to its head through an outer loop). It is
        probed again after another spin threshold; the second time in a row it is marked busy."""
        if head in self._busy_probes:
            self.hooks.state.busy[(head >> 2) & 63] = head
        else:
            self._busy_probes.add(head)
            self.spin_again()

    def count_on(self, spin_threshold: int) -> None:
        """The probe iteration ran as any code and is not undone (a synchronisation point cut it
        short, or it left the loop for another): the next slice goes on counting the blocks it
        entered and the loop it found, as after any slice the other cores' progress cut, with the
        usual ``spin_threshold`` (the probe's own is 2). Counting afresh from where it stopped would
        take that block, not the head a slice would have found, for the head of the loop the core
        is in, or count that loop's iterations again: the loop would be parked at another
        iteration than where a slice that ran the same code would have parked it."""
        self._carry_loop = True
        s = self.hooks.state
        s.spin_threshold = s.spin_reset = spin_threshold

    def probed_idle(self, head: int) -> None:
        """The loop headed at ``head`` was found polling (it is parked)."""
        self._busy_probes.discard(head)

    def spin_again(self) -> None:
        """Count the loop headed at pc from zero again: it is probed after another spin threshold."""
        self.hooks.state.repeat = 0

    def probe_iteration(self) -> tuple[list[tuple[int, int]] | None, bool, bool]:
        """Run one iteration of the loop headed at pc, the memory hooks recording its accesses.

        Returns the (address, size) pairs it loaded (None if it loaded more than the hooks keep: no
        poll loop does), whether it stored anything, and whether it came back to its head within a
        bounded number of instructions.
        """
        head = self._pc
        s = self.hooks.state
        s.probing, s.probe_wrote, s.probe_count = 1, 0, 0
        # Loads past the other cores are let through only while the iteration can be undone
        # (undo_probe; see native.c probe_unsynced).
        s.probe_unsynced = s.probe_strict = 0
        start, instructions = self.time, self.instructions
        self._probe_snapshot = (
            self.uc.context_save(),
            ctypes.string_at(ctypes.addressof(s), ctypes.sizeof(s)),
            self.time,
            self.instructions,
            self._pc,
            self._loop_entry,
            self._carry_loop,
            self.csrs.snapshot(),
        )
        self._probe_reads = []
        try:
            # The slice starts at the head (its first entry); the native hook stops at the second.
            self.run_slice(PROBE_BUDGET, spin_threshold=2, carry=False)
        finally:
            s.probing = 0
            registers, self._probe_reads = self._probe_reads, None
        count = s.probe_count
        reads = [(s.probe_addr[i], s.probe_size[i]) for i in range(count)] if count <= PROBE_READS else None
        wrote = [bool(s.probe_wrote)]
        back = self.stopped_spinning and self._pc == head
        self.poll_period = self.time - start
        self.poll_instructions = self.instructions - instructions
        self.poll_reads = {}
        for address, cycle in registers:
            self.poll_reads.setdefault(address, []).append(cycle - start)
        l1_size = self.tile.arch.l1_size
        self.poll_l1_reads = [
            (s.probe_addr[i], s.probe_size[i], s.probe_cycle[i] - start)
            for i in range(min(count, PROBE_READS))
            if s.probe_addr[i] < l1_size
        ]
        return reads, wrote[0], back

    @property
    def probe_unsynced(self) -> bool:
        """The last probe iteration loaded L1 at a cycle another running core has not reached."""
        return bool(self.hooks.state.probe_unsynced)

    def undo_probe(self) -> None:
        """Put the core back where it was before the last probe iteration (it loaded L1 past the
        other cores, did nothing else lasting, and the loop is not parked). The loop is probed again
        after another SPIN_THRESHOLD iterations, run as any code is (probed_busy says when not)."""
        (
            context,
            hooks,
            self.time,
            self.instructions,
            self._pc,
            self._loop_entry,
            self._carry_loop,
            csrs,
        ) = self._probe_snapshot
        self.csrs.restore(csrs)
        self.uc.context_restore(context)
        s = self.hooks.state
        ctypes.memmove(ctypes.addressof(s), hooks, len(hooks))
        s.probing = s.probe_unsynced = s.stop_reason = s.sync_valid = 0
        s.repeat = 0
        self.sync_stopped = False

    def skip_iterations(self, count: int) -> None:
        """Account ``count`` iterations of the parked loop as run (they saw nothing new)."""
        self.time += count * self.poll_period
        self.instructions += count * self.poll_instructions
        self.hooks.shift_timing(count * self.poll_period)

    def rewind(self, cycle: int) -> None:
        """Undo pure poll-loop iterations after ``cycle`` (they observed nothing new)."""
        if cycle < self.time:
            undone = self.time - cycle
            # The loop's instructions per cycle, as its probe iteration measured them.
            if self.poll_period > 0:
                self.instructions -= undone * self.poll_instructions // self.poll_period
            else:
                self.instructions -= undone
            self.hooks.shift_timing(cycle - self.time)
            self.time = cycle
