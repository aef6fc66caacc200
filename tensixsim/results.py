"""What a run reports: per core, per pipe and per unit, and a readable summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensixsim.observe.bottleneck import Bottleneck
    from tensixsim.observe.events import EventLog


@dataclass(frozen=True)
class CoreStats:
    name: str
    state: str
    pc: int
    cycles: int
    instructions: int
    tensix_pushed: int
    exit_code: int | None


@dataclass(frozen=True)
class PipeStats:
    """One coprocessor pipe: instructions issued and cycles stalled, by the stalled instruction."""

    thread: int
    issued: int
    stalled: dict[str, int]


@dataclass(frozen=True)
class UnitStats:
    """One coprocessor unit: instructions retired and cycles occupied."""

    name: str
    instructions: int
    busy_cycles: int


@dataclass(frozen=True)
class DramBankUse:
    """One DRAM bank's controller (NocTiming.dram_hold): the accesses it took, the cycles it spent on
    them, and the cycles they waited for it behind each other."""

    accesses: int
    busy_cycles: int
    waited_cycles: int


def count_bank_use(table: dict[int, list[int]], bank: int, hold: int, waited: int) -> None:
    """Add one access of DRAM controller ``bank`` (held ``hold`` cycles after waiting ``waited``) to
    ``table`` (controller -> accesses, busy, waited: what DramBankUse is made from)."""
    use = table.setdefault(bank, [0, 0, 0])
    use[0] += 1
    use[1] += hold
    use[2] += waited


def dram_lines(dram: dict[int, DramBankUse], cycles: int) -> list[str]:
    """The summary's table of the DRAM banks a run used (none: no lines)."""
    if not dram:
        return []
    lines = ["", f"{'dram bank':9} {'accesses':>10} {'busy':>10} {'busy %':>7} {'waited':>10}"]
    for group, use in sorted(dram.items()):
        share = 100 * use.busy_cycles / cycles if cycles else 0.0
        lines.append(
            f"{group:<9} {use.accesses:>10} {use.busy_cycles:>10} {share:>6.1f}% {use.waited_cycles:>10}"
        )
    return lines


def perf_counter_lines(counters: dict[str, tuple[int, int]]) -> list[str]:
    """The summary's table of the performance counters that counted anything (none started: no lines)."""
    if not counters:
        return []
    counted = [(name, window, count) for name, (window, count) in counters.items() if count]
    lines = ["", f"{'performance counter':28} {'window':>10} {'count':>10}"]
    lines += [f"{name:28} {window:>10} {count:>10}" for name, window, count in counted]
    if len(counted) < len(counters):
        lines.append(f"({len(counters) - len(counted)} more counters of the started banks read 0)")
    return lines


@dataclass(frozen=True)
class RunResult:
    cycles: int
    cores: dict[str, CoreStats]
    pipes: tuple[PipeStats, ...] = ()
    units: dict[str, UnitStats] = field(default_factory=dict)
    interrupted: bool = False  # the run was stopped on request before its cores finished
    # Accesses to an L1 page by another core or the NoC at or before a conflicting access its only
    # user had made unordered, since the tile was made or reset (Tile.l1_order_late): with none, the
    # results and cycles do not depend on the quantum.
    l1_order_late: int = 0
    # The DRAM controllers this tile's requests used, since the tile was made or reset (a lone tile's;
    # a chip's are in ChipResult.dram): by group on Blackhole, by GDDR6 channel on Wormhole (two per
    # group, numbered as tt-metal's banks).
    dram: dict[int, DramBankUse] = field(default_factory=dict)
    # With the native engine: the coprocessor instructions it handed to the Python semantics, by
    # mnemonic, since the tile was made or reset (each costs about a hundred times a native one). How
    # the host ran the model, not what it computed: results compare equal without it.
    python_executed: dict[str, int] = field(default_factory=dict, compare=False)
    # The hardware performance counters of the banks a program or the host started (Tile.perf_counters):
    # counter name -> (the bank's window in cycles, the count), as the registers show them at the end.
    perf_counters: dict[str, tuple[int, int]] = field(default_factory=dict)

    # The run's events when it was observed (Tile.run(observe=True) or trace=...), else None.
    events: EventLog | None = field(default=None, compare=False, repr=False)

    def bottleneck(self) -> Bottleneck:
        """What bounded the run: the critical path through the recorded wait edges, walked back from
        the end (see tensixsim.observe.bottleneck). Needs a run with ``observe=True`` or ``trace=...``."""
        if self.events is None:
            raise ValueError("bottleneck() needs the run's events: Tile.run(..., observe=True) or trace=PATH")
        from tensixsim.observe.bottleneck import critical_path

        return critical_path(self.events)

    def summary(self, clock_hz: int | None = None) -> str:
        """A readable per-core table."""
        lines = [
            f"{'core':8} {'state':9} {'pc':>10} {'cycles':>10} {'instret':>10} {'tensix':>8} {'exit':>6}"
        ]
        for stats in self.cores.values():
            exit_code = "" if stats.exit_code is None else str(stats.exit_code)
            lines.append(
                f"{stats.name:8} {stats.state:9} 0x{stats.pc:08x} {stats.cycles:>10} "
                f"{stats.instructions:>10} {stats.tensix_pushed:>8} {exit_code:>6}"
            )
        total = f"total: {self.cycles} cycles"
        if self.interrupted:
            total += " (interrupted)"
        if clock_hz:
            total += f" ({self.cycles / clock_hz * 1e6:.2f} us at {clock_hz / 1e9:g} GHz)"
        lines.append(total)
        if self.l1_order_late:
            lines.append(
                f"L1 order: {self.l1_order_late} access(es) by another core or the NoC came before what a"
                " page's only user had done on the same line; results may depend on the quantum"
                ' (Tile(l1_order="full") orders them)'
            )
        if any(p.issued for p in self.pipes):
            lines += ["", f"{'pipe':8} {'issued':>10} {'stalled':>10}  stalled on"]
            for pipe in self.pipes:
                top = sorted(pipe.stalled.items(), key=lambda kv: -kv[1])[:3]
                where = ", ".join(f"{name} {cycles}" for name, cycles in top)
                lines.append(f"{pipe.thread:<8} {pipe.issued:>10} {sum(pipe.stalled.values()):>10}  {where}")
        if self.units:
            lines += ["", f"{'unit':8} {'instrs':>10} {'busy':>10} {'busy %':>7}"]
            for unit in sorted(self.units.values(), key=lambda u: -u.busy_cycles):
                share = 100 * unit.busy_cycles / self.cycles if self.cycles else 0.0
                lines.append(f"{unit.name:8} {unit.instructions:>10} {unit.busy_cycles:>10} {share:>6.1f}%")
        if self.python_executed:
            top = sorted(self.python_executed.items(), key=lambda kv: (-kv[1], kv[0]))
            listed = ", ".join(f"{name} {count}" for name, count in top[:6])
            more = f" and {len(top) - 6} more" if len(top) > 6 else ""
            lines += ["", f"run by the Python semantics (slower than the native engine): {listed}{more}"]
        lines += dram_lines(self.dram, self.cycles)
        lines += perf_counter_lines(self.perf_counters)
        if self.events is not None:
            lines += ["", self.bottleneck().text()]
        return "\n".join(lines)
