"""The tile's hardware performance counters: five banks of control and output registers in the
debug-register page (tensixsim.arch.perf_counters gives the registers and what each counter counts).

A bank counts from the cycle it is started to the cycle it is stopped. Starting it takes a snapshot
of the coprocessor's running totals (tensixsim.tensix.frontend.perf); ``OUT_H`` shows the selected
counter's total now (or at the stop) minus the snapshot, ``OUT_L`` the window's cycles. Both are
32-bit counts. The counts and the selects are the banks' own: selecting another counter, stopping or
reading changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tensixsim.arch import perf_counters as facts
from tensixsim.errors import Unimplemented
from tensixsim.mmio.memory import Access

Totals = Callable[[int], Mapping[str, int]]  # the running totals as of a cycle
_MASK = 0xFFFFFFFF


@dataclass
class BankState:
    """One bank's registers and its counting window."""

    ref_period: int = 0
    mode: int = 0  # the mode register: mode (7:0), counter select (16:8)
    control: int = 0  # the start / stop register as last written
    started: int | None = None  # the cycle it was last started (None: never)
    # The mode and reference period it was started with: they govern the count until the next start
    # (a select written afterwards, with the mode bits tt-metal's readout writes, changes neither).
    counting_mode: int = 0
    period: int = 0
    stopped: int | None = None  # the cycle it was stopped after that (None: it counts)
    base: Mapping[str, int] = field(default_factory=dict)  # the totals when started
    end: Mapping[str, int] = field(default_factory=dict)  # the totals when stopped


@dataclass
class PerfCounters:
    """The banks of one tile."""

    events: dict[str, dict[int, str]]  # per bank: counter select -> emulated event (the arch's)
    names: dict[str, dict[int, str]]  # per bank: counter select -> the counter's name
    banks: dict[str, BankState]
    all_control: int = 0  # PERF_CNT_ALL as last written

    @classmethod
    def new(cls, arch: str) -> PerfCounters:
        return cls(facts.events(arch), facts.counters(arch), {b.name: BankState() for b in facts.BANKS})

    def read(self, what: str, bank: str, access: Access, totals: Totals) -> int:
        """A read of one register: ``what`` is ``ref``, ``mode``, ``control``, ``out_l``, ``out_h`` (of
        ``bank``) or ``all`` (PERF_CNT_ALL)."""
        if what == "all":
            return self.all_control
        state = self.banks[bank]
        if what == "out_l":
            return self._window(bank, access.cycle, access)
        if what == "out_h":
            select = state.mode >> facts.SELECT_SHIFT & facts.SELECT_MASK
            return self._count(bank, select, access.cycle, totals, access)
        return {"ref": state.ref_period, "mode": state.mode, "control": state.control}[what]

    def write(self, what: str, bank: str, access: Access, value: int, totals: Totals) -> None:
        """A write of one register (as :meth:`read`; the outputs are read-only)."""
        value &= _MASK
        if what == "all":
            rising, self.all_control = value & ~self.all_control, value
            for name in facts.ALL_BANKS:
                self._edges(name, rising, access, totals)
            return
        state = self.banks[bank]
        if what == "control":
            rising, state.control = value & ~state.control, value
            self._edges(bank, rising, access, totals)
        elif what == "ref":
            state.ref_period = value
        elif what == "mode":
            state.mode = value
        else:
            raise ValueError(f"performance counters: {what} of {bank} cannot be written")

    def _edges(self, bank: str, rising: int, access: Access, totals: Totals) -> None:
        state = self.banks[bank]
        if rising & facts.START:  # (a start needs nothing of the window before it)
            state.started, state.stopped = access.cycle, None
            state.counting_mode, state.period = state.mode & facts.MODE_MASK, state.ref_period
            state.base, state.end = totals(access.cycle), {}
        if rising & facts.STOP and state.started is not None and state.stopped is None:
            self._check_period(bank, access.cycle, access)
            state.stopped, state.end = access.cycle, totals(access.cycle)

    def _check_period(self, bank: str, cycle: int, access: Access | None) -> None:
        """Mode 1 stops a bank by itself once its reference period has passed: the emulator does not
        take the snapshot then, so an access after that point is refused rather than answered wrong."""
        state = self.banks[bank]
        if state.started is None or state.stopped is not None or state.counting_mode != facts.MODE_PERIOD:
            return
        if cycle - state.started > state.period:
            raise Unimplemented(
                f"performance counters: bank {bank} in mode 1 (reference period {state.period}) "
                f"read {cycle - state.started} cycles after its start: a bank that stops itself is "
                "not modelled (mode 0 and 2 are)",
                core=access.core.name if access is not None else None,
                pc=access.core.fault_pc() if access is not None and not access.host else None,
                cycle=cycle,
                value=state.period,
            )

    def _window(self, bank: str, cycle: int, access: Access | None = None) -> int:
        """OUT_L of ``bank`` read at ``cycle``."""
        state = self.banks[bank]
        if state.started is None or state.counting_mode == facts.MODE_NO_REFERENCE:
            return 0
        self._check_period(bank, cycle, access)
        end = state.stopped if state.stopped is not None else cycle
        return (end - state.started) & _MASK

    def _count(self, bank: str, select: int, cycle: int, totals: Totals, access: Access | None = None) -> int:
        """OUT_H of ``bank`` with counter ``select`` selected, read at ``cycle``."""
        state = self.banks[bank]
        event = self.events.get(bank, {}).get(select)
        if state.started is None or event is None:
            return 0
        self._check_period(bank, cycle, access)
        now = state.end if state.stopped is not None else totals(cycle)
        return max(0, now.get(event, 0) - state.base.get(event, 0)) & _MASK

    def values(self, cycle: int, totals: Totals) -> dict[str, tuple[int, int]]:
        """What every named counter of every bank started so far shows at ``cycle``: (OUT_L, OUT_H) as
        if it were selected (no register changes)."""
        out: dict[str, tuple[int, int]] = {}
        if all(state.started is None for state in self.banks.values()):
            return out  # (a run's result asks every time: no totals to gather then)
        current = totals(cycle)
        for bank, table in self.names.items():
            if self.banks[bank].started is None:
                continue
            window = self._window(bank, cycle)
            out.update(
                {name: (window, self._count(bank, s, cycle, lambda _: current)) for s, name in table.items()}
            )
        return out
