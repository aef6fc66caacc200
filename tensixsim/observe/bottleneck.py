"""What bounded a run: its critical path, walked back through the recorded wait edges.

Start at the end of the run, on the agent (core or pipe) that finished last. Going back in time on an
agent, every cycle is either its own work or part of a wait (events.Wait). Own work is credited to
the agent's resource: a core by name, a pipe to the unit each stretch of its work occupied (the
matrix unit, the unpacker...). At a wait, the walk jumps to the agent whose action ended it, at the
cycle of that action (the core that wrote the stream register a poll loop watched, the pipe whose
UNPACR handed over the Src bank a MVMUL waited for...), crediting the cycles in between to that
agent's resource, and goes on from there. Waits that end by themselves (a latency) are credited to
the waiting agent. The walk ends at cycle 0; the resource with the largest share of the path bounded
the run: making it faster shortens the path, making anything off the path faster does not.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass

from tensixsim.isa.spec import UNITS
from tensixsim.observe.events import EventLog, Wait, slice_name

Agent = tuple  # ("core", name) or ("pipe", thread)


@dataclass(frozen=True)
class Bottleneck:
    """``resource`` bounded the run: ``share`` of the ``cycles`` of its critical path were its own (the
    path runs from the start of the run to the end of the last work in it).
    ``breakdown``: every resource on the path with its cycles, largest first. Resources are core
    names ("brisc"...), coprocessor units ("matrix unit", "unpack unit"...), "pipe N" (a pipe's
    issue slots outside any unit, or a latency it waited out), "NoC" and "host". ``chain``: why,
    from the end of the run back to the bottleneck: who waited on whom, for what, one line a hop."""

    resource: str
    share: float
    cycles: int
    breakdown: tuple[tuple[str, int], ...]
    chain: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text()

    def text(self) -> str:
        lines = [
            f"bottleneck: {self.resource} ({100 * self.share:.0f}% of the {self.cycles}-cycle critical path)"
        ]
        lines += [
            f"  {name:24} {cycles:>10} {100 * cycles / self.cycles:>6.1f}%" for name, cycles in self.breakdown
        ]
        if self.chain:
            lines += ["  why, from the end of the run back:", *(f"    {hop}" for hop in self.chain)]
        return "\n".join(lines)


def critical_path(log: EventLog) -> Bottleneck:
    """Walk ``log``'s wait edges back from the end of its run to its start (see the module doc)."""
    walk = _Walk(log)
    agent, cycle = walk.last_agent()
    first = log.start_cycle
    credit: dict[str, int] = defaultdict(int)
    seen: set[tuple[Agent, int]] = set()
    hops: list[tuple[str, str, str]] = []  # (resource credited, its agent, the line), from the end
    while cycle > first and agent is not None:
        waits = walk.waits(agent)
        i = bisect_left(walk.starts(agent), cycle) - 1  # the last wait starting before the cycle
        if i < 0:
            walk.credit_work(agent, first, cycle, credit)
            break
        wait = waits[i]
        if wait.end < cycle:
            walk.credit_work(agent, max(wait.end, first), cycle, credit)
            cycle = wait.end
            if cycle <= first:
                break
        step = walk.resolve(wait, agent, cycle)
        if step is None or (step[0], step[1]) in seen:
            label = step[2] if step is not None else walk.own_label(agent, wait)
            credit[label] += cycle - max(wait.start, first)
            cycle = wait.start
            continue
        to, at, label = step
        credit[label] += cycle - max(at, first)
        seen.add((to, at))
        if len(hops) < _CHAIN_LIMIT and to != agent:
            target = label if _name(to) == label else f"{label} ({_name(to)})"
            hops.append((label, _name(to), f"{_name(agent)} waited for {target}: {slice_name(wait.what)}"))
        agent, cycle = to, at
    total = sum(credit.values()) or 1
    breakdown = tuple(sorted(((k, v) for k, v in credit.items() if v > 0), key=lambda kv: -kv[1]))
    top, cycles = breakdown[0] if breakdown else ("nothing", 0)
    chain = []
    for label, target, line in hops:
        chain.append(line)
        if top in (label, target):
            break
    return Bottleneck(top, cycles / total, total, breakdown, tuple(chain))


_CHAIN_LIMIT = 12  # hops kept for Bottleneck.chain


def _name(agent: Agent) -> str:
    kind, name = agent
    return name if kind == "core" else f"pipe {name}"


class _Walk:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._starts: dict[Agent, list[int]] = {}
        self._stream_cycles = [c for c, _ in log.stream_writes]

    def waits(self, agent: Agent) -> list[Wait]:
        kind, name = agent
        return self.log.core_waits[name] if kind == "core" else self.log.pipe_waits[name]

    def starts(self, agent: Agent) -> list[int]:
        if agent not in self._starts:
            self._starts[agent] = [w.start for w in self.waits(agent)]
        return self._starts[agent]

    def last_agent(self) -> tuple[Agent | None, int]:
        """The agent whose work ended last, and when."""
        best: tuple[int, Agent] | None = None
        for name, cycle in self.log.core_end.items():
            if best is None or cycle > best[0]:
                best = (cycle, ("core", name))
        for thread, runs in enumerate(self.log.pipe_runs):
            if runs.end and (best is None or runs.end[-1] > best[0]):
                best = (runs.end[-1], ("pipe", thread))
        if best is None:
            return None, 0
        return best[1], best[0]

    def own_label(self, agent: Agent, wait: Wait) -> str:
        by = wait.by[0]
        if by == "noc":
            return "NoC"
        if by == "host":
            return "host"
        kind, name = agent
        return name if kind == "core" else f"pipe {name}"

    def credit_work(self, agent: Agent, start: int, end: int, credit: dict[str, int]) -> None:
        """Credit cycles [start, end) of ``agent``'s own work: a core's to it, a pipe's to its units."""
        kind, name = agent
        if kind == "core":
            credit[name] += end - start
            return
        runs = self.log.pipe_runs[name]
        covered = 0
        i = runs.covering(end - 1)
        while i >= 0 and runs.end[i] > start:
            overlap = min(runs.end[i], end) - max(runs.start[i], start)
            if overlap > 0:
                credit[f"{UNITS[runs.what[i]]} unit"] += overlap
                covered += overlap
            i -= 1
        if end - start > covered:
            credit[f"pipe {name}"] += end - start - covered

    def resolve(self, wait: Wait, agent: Agent, cycle: int) -> tuple[Agent, int, str] | None:
        """Who ended ``wait`` (which ``agent`` waited out until ``cycle``): (agent, cycle of its
        action, resource to credit the cycles between), or None when it ended by itself."""
        by, at = wait.by, min(wait.at, cycle)
        kind = by[0]
        if kind == "core":
            return ("core", by[1]), at, by[1]
        if kind == "pipe":
            return ("pipe", by[1]), at, f"pipe {by[1]}"
        if kind == "unit":
            runs = self.log.unit_runs[UNITS.index(by[1])]
            skip = agent[1] if len(by) > 2 and agent[0] == "pipe" else None  # ("unit", u, "other")
            i = runs.covering(at)
            while i >= 0 and runs.what[i] == skip:
                i -= 1
            return None if i < 0 else (("pipe", runs.what[i]), min(runs.end[i], at), f"{by[1]} unit")
        if kind == "coprocessor":
            return self._last_retire(at, agent)
        if kind == "streams":
            i = bisect_right(self._stream_cycles, at) - 1
            while i >= 0:
                when, core = self.log.stream_writes[i]
                if ("core", core) != agent:
                    return ("core", core), when, core
                i -= 1
        return None

    def _last_retire(self, at: int, agent: Agent) -> tuple[Agent, int, str] | None:
        """The other pipe that last worked at or before ``at``."""
        best: tuple[int, int, int] | None = None
        for thread, runs in enumerate(self.log.pipe_runs):
            if ("pipe", thread) == agent:
                continue
            i = runs.covering(at)
            if i >= 0:
                when = min(runs.end[i], at)
                if best is None or when > best[0]:
                    best = (when, thread, runs.what[i])
        if best is None:
            return None
        when, thread, unit = best
        return ("pipe", thread), when, f"{UNITS[unit]} unit"
