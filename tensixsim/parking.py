"""Parking poll loops, and keeping L1 writes coherent with what cores execute and poll.

A core that keeps repeating a loop which polls memory and changes nothing is parked (``WAITING``)
until what it reads changes: the L1 pages it reads are write-protected in every other core, so the
store that could end the wait wakes it at the writer's cycle (``protected_write``); register writes
and coprocessor changes wake it the same way (``register_written``, ``coprocessor_changed``). A
parked loop resumed at a cycle counts the iterations in between as run, so parking changes no cycle
and no instruction count of the program. The same page protection keeps code coherent: a store into
a page some core executes drops that core's translated code.

:class:`Parking` is a part of :class:`~tensixsim.tile.Tile` (it works on the tile's cores and L1).
"""

from __future__ import annotations

import numpy as np

from tensixsim.mmio.memory import PAGE, Register
from tensixsim.riscv.core import Core, CoreState
from tensixsim.riscv.loop_probe import SPIN_THRESHOLD


class Parking:
    """Poll-loop parking and L1 write coherence of :class:`~tensixsim.tile.Tile` (see the module)."""

    def _try_park(self, core: Core) -> None:
        """Park ``core`` if the loop it keeps repeating polls memory (or reads nothing) and can change
        nothing.

        One probe iteration must store nothing, cause no side effect, read only L1 or watchable
        registers and leave the core's registers as they were: the loop is then at a fixed point until
        what it reads changes (for good if it reads nothing: only a reset, the host or a debugger
        ends it). The L1 pages it reads are write-protected in every other core, so the
        store that could end the wait wakes it at the writer's cycle (see protected_write); register
        writes and coprocessor changes wake it the same way (register_written, coprocessor_changed).
        """
        entry = core.loop_entry_cycle()
        head = core.pc
        # The iterations the loop was counted to (SPIN_THRESHOLD, or fewer for a loop that reads a
        # register or a page only this core uses and never stored to): the probe changes it.
        threshold = core.spin_threshold
        before = core.fingerprint()
        predicted = core.predictor_state()
        cached = core.cache_state()
        effects = self._side_effects
        start = core.time
        reads, wrote, back = core.probe_iteration()
        if self.debugger is not None and self.debugger.cut(core):
            # The probe is real execution: a breakpoint in it stops the tile there. The loop is
            # then not known to poll; parking it or not gives the same cycles. (L1 it read past
            # the other cores before the breakpoint stays read: the one place a debugger can
            # change what a core saw.)
            core.mark_busy_loop()
            if core.error is None and core.state is CoreState.RUNNING:
                self._protect_new_code(core)
                self.debugger.stopped(core)
            return
        if core.error is not None or core.state is not CoreState.RUNNING:
            return
        if core.sync_stopped:  # cut short (a synchronisation point): look again later
            if core.probe_unsynced:
                core.undo_probe()
                if wrote:
                    core.probed_busy(head)
            else:
                core.count_on(SPIN_THRESHOLD)
            return
        if not back and core.stopped_spinning and core.pc != head:
            # The probe left the loop for another one: what it polled changed after the spin was
            # detected (the slice that detected it was cut short before the change). That says
            # nothing of the loop: it may yet be parked next time. (A probe that read ahead of the
            # other cores is undone: the loop runs on as any code, to be probed again.)
            if core.probe_unsynced:
                core.undo_probe()
            else:
                core.count_on(SPIN_THRESHOLD)
            return
        known = reads is not None  # (None: it read more than the hooks keep, no poll loop does)
        reads = reads or []
        l1 = [(a, n) for a, n in reads if a >= 0 and a + n <= self.arch.l1_size]
        # Registers by their word address (a narrow load reads part of one).
        registers = {a & ~3: self._register_at(core, a) for a, _ in reads if not 0 <= a < self.arch.l1_size}
        watchable = all(r is not None and r.watch for r in registers.values())
        pure = back and not wrote
        # (A loop that reads nothing and changes nothing, such as `j .`, waits for good: parked,
        # only a reset, the host or a debugger ends it.)
        # A loop whose loads go through the L0 data cache changes it every iteration (a hit moves
        # the flush generator on; a miss fills a line): its iterations do not all cost the same, so
        # it runs as any code.
        fixed = known and pure and watchable and core.fingerprint() == before and core.cache_state() == cached
        if fixed and (effects != self._side_effects or core.predictor_state() != predicted):
            # Something else changed state while the iteration ran (the coprocessor, brought up to
            # a read's cycle, moved on), or the branch predictor was still learning the loop (its
            # iterations do not all cost the same yet): that says nothing of the loop. Probed again
            # later.
            if core.probe_unsynced:
                core.undo_probe()
            else:
                core.spin_again()
            return
        if not fixed:
            if core.probe_unsynced:
                # Its loads ran ahead of the other cores: undone, the loop runs on as any code.
                core.undo_probe()
            core.probed_busy(head)
            return
        core.probed_idle(head)
        core.state = CoreState.WAITING
        core.parked = True
        core.watch = sorted(set(l1))
        core.watch_registers = {a: r.watch for a, r in registers.items() if r is not None and r.watch}
        core.fixed_point_cycle = entry + (core.time - start)  # one iteration after loop entry
        # Parked where the loop's count would have had it probed: the iterations it ran are counted
        # from its entry however slices and probes cut them, and iterations are counted, not run,
        # from here on, so the cycle and instructions of a core that stays parked do not depend on
        # where it was found.
        if core.poll_period > 0:
            shift = threshold - (core.time - core.fixed_point_cycle) // core.poll_period
            if shift > 0:
                core.skip_iterations(shift)
            elif shift < 0:
                core.rewind(core.time + shift * core.poll_period)
        self._polls_cover_marks(core)
        polled = [f"L1 0x{a:08x} (= 0x{self._l1_value(a, n):x})" for a, n in core.watch]
        polled += [f"register 0x{a:08x}" for a in core.watch_registers]
        core.wait_reason = "polls " + ", ".join(polled) if polled else "spins in a loop that reads nothing"
        if self.events is not None:
            self.events.core_waits_from(core.name, entry, "parked: " + core.wait_reason)
        for page in {a // PAGE for a, _ in core.watch}:
            self._refresh_protection(page)

    def _polls_cover_marks(self, core: Core) -> None:
        """The parked loop's reads from its fixed point on are its polls: a write into what it polls
        wakes it at the write's cycle (``protected_write``), so they are not accesses another core's
        first use of the page could come too late for (the marks L1 ordering by page counts those
        by, native.c unordered_before, keep only what the core read before the fixed point)."""
        pages = self.l1_pages
        bit = 1 << core.index
        before = core.fixed_point_cycle - 1
        for address, size in core.watch:
            page = address // pages.page
            if pages.owner[page] != bit:
                continue
            lines = pages.line_last[address // pages.LINE : (address + size - 1) // pages.LINE + 1]
            np.minimum(lines, before, out=lines)
            pages.private_last[page] = min(int(pages.private_last[page]), before)

    def _register_at(self, core: Core, address: int) -> Register | None:
        for region in core.regions:
            if region.contains(address):
                return region.register_at(address)
        return None

    def register_written(self, address: int, cycle: int, writer: Core | None = None) -> None:
        """``writer`` (None: an agent that acts before the cores, the NoC) wrote an MMIO register at
        ``cycle``: wake the cores polling it."""
        self.note_side_effect()
        for core in self.cores:
            if core.state is CoreState.WAITING and address in core.watch_registers:
                # A read at cycle c sees the write when the write goes first: cores act in (cycle,
                # index) order (may_sync), the NoC before any core at its cycle (deliver).
                first = cycle + 1 if writer is not None and writer.index > core.index else cycle
                self._wake(core, first, (address,), ("core", writer.name) if writer is not None else ("noc",))

    def coprocessor_changed(self, cycle: int) -> None:
        """Coprocessor state changed at ``cycle``: wake the cores polling registers that reflect it
        (a read at a later cycle sees it: it brings the coprocessor up to its own cycle first)."""
        for core in self.cores:
            if core.state is CoreState.WAITING and "coprocessor" in core.watch_registers.values():
                registers = tuple(a for a, how in core.watch_registers.items() if how == "coprocessor")
                self._wake(core, cycle + 1, registers, ("coprocessor",))

    def _l1_value(self, address: int, size: int) -> int:
        return int.from_bytes(self.l1[address : address + size].tobytes(), "little")

    def _wake(
        self,
        core: Core,
        cycle: int,
        registers: tuple[int, ...] = (),
        by: tuple = ("host",),
        span: tuple[int, int] | None = None,
    ) -> None:
        """Resume a parked core as if it had seen the change at ``cycle``.

        A change to ``registers`` the loop reads, or (none named) to the L1 bytes ``span`` (start,
        end; None: any L1 it polls), is seen by the first read of them at or after ``cycle``: the
        core resumes at the head of that iteration, the iterations before it counted as run, so the
        cycles and instructions are those of running the loop. Where the loop reads the changed
        bytes more than once an iteration and that iteration's earlier read came before ``cycle``,
        it resumes at the next iteration's head instead (a core's store resumes it before the
        store instead, see wake_before_write). (A running loop reads L1 without synchronising where
        L1 is not ordered: it may see a store a slice late, docs/deviations.md.)
        """
        if registers:
            offsets = [offset for a in registers for offset in core.poll_reads.get(a, ())]
        else:
            offsets = _read_offsets(core, span)
        if not offsets or core.poll_period <= 0:
            self._resume(core, by, cycle, target=max(core.fixed_point_cycle, cycle))
            return
        period = core.poll_period
        skip = -(-(cycle - core.time - min(offsets)) // period)
        if skip < 0 and registers:
            # The probe iteration read the register past the other cores (probe_unsynced) and this
            # write came before that read: the iteration sees it, so the core resumes at its head
            # (earlier iterations read at cycles every core had reached).
            skip = -1
        elif skip < 0:
            # The store came before reads the loop made since it reached its fixed point (the
            # writer was behind): those iterations are undone, back to the one that sees it.
            skip = max(skip, _earliest(core))
        self._resume(core, by, cycle, iterations=skip)

    def wake_before_write(
        self,
        writer: Core | None,
        cycle: int,
        span: tuple[int, int] | None = None,
        register: int | None = None,
    ) -> bool:
        """``writer`` (None: the NoC) is about to write, at ``cycle``, the L1 bytes ``span`` (start,
        end) or the register (word address) ``register`` that parked cores poll. A poller whose loop
        reads them more than once an iteration, once before ``cycle`` and once at or after it in the
        same iteration, is resumed at that iteration's head, before the write: a running loop would
        have seen the old value at the earlier read and the new one at the later read, and
        synchronised reads (registers, ordered L1) see exactly that once the writer waits for the
        poller. Returns whether it resumed any; the writer then stops before its write (the NoC
        holds it back: noc_write_waits), to make it once the resumed pollers have caught up.
        (Nothing else the loop reads changed since it was parked: that would have woken it. L1 only
        where it is ordered; not for loops that read coprocessor state, which may have moved on.)"""
        if span is not None and not self.l1_order:
            return False
        resumed = False
        for core in self.cores:
            if core.state is not CoreState.WAITING or core.poll_period <= 0:
                continue
            if "coprocessor" in core.watch_registers.values():
                continue
            if register is not None:
                offsets = core.poll_reads.get(register, []) if register in core.watch_registers else []
            elif any(a < span[1] and span[0] < a + n for a, n in core.watch):
                offsets = _read_offsets(core, span)
            else:
                offsets = []
            if len(offsets) < 2:
                continue  # (one read an iteration: woken after the write, exactly)
            # (Cores act in (cycle, index) order, the NoC before them.)
            first = cycle if writer is None or writer.index < core.index else cycle + 1
            period = core.poll_period
            # The first iteration with a read at or after `first`: does it read before `first` too?
            k = max(-(-(first - core.time - max(offsets)) // period), _earliest(core))
            if core.time + k * period + min(offsets) >= first:
                continue  # no: woken after the write, as usual
            self._resume(core, ("noc",) if writer is None else ("core", writer.name), first, iterations=k)
            resumed = True
            if writer is None:
                self.behind_noc.append(core)
        return resumed

    def noc_write_waits(self, cycle: int, span: tuple[int, int]) -> bool:
        """The NoC is about to write the L1 bytes ``span`` (start, end) at ``cycle``: whether it must
        wait because a poller resumed before this write (wake_before_write) has not reached its
        cycle yet. Its reads are ordered against the NoC's writes (Tile.noc_sync_limit): the one at
        ``cycle`` stops until the write is made."""
        if self.wake_before_write(None, cycle, span=span):
            return True
        self.behind_noc[:] = [c for c in self.behind_noc if c.state is CoreState.RUNNING and c.time < cycle]
        return bool(self.behind_noc)

    def _hold_parked(self, core: Core, cycle: int) -> None:
        """Parked ``core`` is held in reset at ``cycle``: its loop's iterations are counted, not run,
        so those up to the hold are counted now and any it was counted past it undone (back to the
        hold, but not before it entered the loop)."""
        core.parked = False
        if core.poll_period <= 0:
            return
        if cycle < core.time:
            core.rewind(max(cycle, core.fixed_point_cycle - core.poll_period))
        else:
            core.skip_iterations((cycle - core.time) // core.poll_period)

    def _resume(
        self, core: Core, by: tuple, cycle: int, iterations: int | None = None, target: int | None = None
    ) -> None:
        """Make parked ``core`` run again after ``iterations`` more of its loop (negative: that many
        undone), or from cycle ``target`` (a loop whose reads were not dated)."""
        pages = {a // PAGE for a, _ in core.watch}
        self.wakes += 1
        core.state = CoreState.RUNNING
        core.parked = False
        core.watch = []
        core.watch_registers = {}
        if iterations is not None:
            if iterations < 0:
                core.rewind(core.time + iterations * core.poll_period)
            else:
                core.skip_iterations(iterations)
        elif target is not None:
            if target < core.time:
                core.rewind(target)
            else:
                core.time = target
            # Nothing the loop had in flight is still pending at an arbitrary resume cycle (the same
            # rule wherever the loop was parked, so the cycles do not depend on the quantum).
            core.hooks.reset_timing()
        if self.events is not None:
            self.events.core_woken(core.name, core.time, by, cycle)
        for page in pages:
            self._refresh_protection(page)

    def _protect_new_code(self, core: Core) -> None:
        for page in core.new_code_pages():
            self._refresh_protection(page)

    def pipe_watches_l1(self, span: tuple[int, int]) -> None:
        """A coprocessor instruction waits on L1 bytes a core may store to: catch those stores."""
        self._refresh_protection(span[0] // PAGE)

    def _refresh_protection(self, page: int) -> None:
        """Protect ``page`` in every core but those that own its code or watch it.

        A page a blocked coprocessor instruction waits on, or that holds a print buffer (so the
        store completing a print is seen at its cycle), is protected in every core.
        """
        if page in getattr(self.backend, "l1_watched_pages", set)() or (
            self.prints is not None and page in self.prints.pages
        ):
            for core in self.cores:
                core.set_protected(page, True)
            return
        interested = {c.index for c in self.cores if page in c.known_code_pages}
        interested |= {
            c.index
            for c in self.cores
            if c.state is CoreState.WAITING and any(a // PAGE == page for a, _ in c.watch)
        }
        for core in self.cores:
            core.set_protected(page, bool(interested - {core.index}))

    def protected_write(self, writer: Core, address: int, size: int, cycle: int) -> None:
        """``writer`` stored into a protected L1 page: drop stale code, wake pollers, read a print
        the store completed."""
        self._l1_written(address, size, cycle, refresh=True, by=("core", writer.name), writer=writer)
        if self.prints is not None:
            self.prints.stored(self, address, size, cycle)

    def l1_store(self, address: int, data: bytes, cycle: int, by: tuple = ("coprocessor",)) -> None:
        """A store into L1 by an agent other than a core (``by``: the coprocessor, or ("noc",))."""
        if by == ("noc",):
            self.noc_will_write(address, len(data), landed=cycle)
        self.l1[address : address + len(data)] = np.frombuffer(data, np.uint8)
        self._l1_written(address, len(data), cycle, by=by)

    def coprocessor_wrote_l1(self, address: int, size: int, cycle: int) -> None:
        """The coprocessor's native engine already stored ``size`` bytes at ``address`` (at ``cycle``):
        do what :meth:`l1_store` does after storing."""
        self._l1_written(address, size, cycle)

    def _l1_written(
        self,
        address: int,
        size: int,
        cycle: int,
        refresh: bool = False,
        by: tuple = ("coprocessor",),
        writer: Core | None = None,
    ) -> None:
        """Bytes of L1 changed: wake their pollers, drop stale code, tell the pipes. ``refresh``: also
        bring the pages' write protection up to date when nobody's interest in them changed (a store
        that took the protected path may have found it stale). A core's load at the store's own
        cycle sees it when the storing ``writer`` has the lower index (cores act in (cycle, index)
        order, as L1 ordering performs their accesses); any other load from the next cycle."""
        l1_written = getattr(self.backend, "l1_written", None)
        if l1_written is not None:
            l1_written(address, size, cycle)
        end = address + size
        pages = range(address // PAGE, (end - 1) // PAGE + 1)
        changed = refresh  # who is interested in these pages: only then can their protection change
        for core in self.cores:
            if core.state is CoreState.WAITING and any(a < end and address < a + n for a, n in core.watch):
                # (The NoC acts before the cores at its cycle, a core before those of higher index.)
                noc = by == ("noc",)
                first = cycle if noc or (writer is not None and writer.index < core.index) else cycle + 1
                self._wake(core, first, by=by, span=(address, end))
                changed = True
            for page in pages:
                if page in core.known_code_pages:
                    core.forget_code(page)
                    changed = True
        if changed:
            for page in pages:
                self._refresh_protection(page)
        self.note_side_effect()


def _read_offsets(core: Core, span: tuple[int, int] | None) -> list[int]:
    """The cycle offsets, within an iteration of ``core``'s parked loop, of its L1 reads of the bytes
    in ``span`` (start, end); of all its L1 reads when ``span`` is None or none of them reads it."""
    reads = core.poll_l1_reads
    if span is not None:
        start, end = span
        hit = [offset for address, size, offset in reads if address < end and start < address + size]
        if hit:
            return hit
    return [offset for _, _, offset in reads]


def _earliest(core: Core) -> int:
    """The earliest iteration of ``core``'s parked loop it may resume at, counted from the one at its
    cycle (0) backwards: the first after the loop reached its fixed point."""
    return -((core.time - core.fixed_point_cycle) // core.poll_period)
