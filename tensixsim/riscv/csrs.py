"""One baby core's CSRs: what the arch's table (tensixsim/arch/blackhole_csrs.py) says each does,
their values, and the configuration fields they hand to the core's timing walk.

The core decodes the Zicsr instruction and asks this file to read and write; the file knows the
core only through a few callables (its clock and retired-instruction count at a pc, and the walk's
configuration setter), so it never reaches back into the core or the tile.
"""

from __future__ import annotations

from collections.abc import Callable

from tensixsim.arch.blackhole_csrs import CFG0, CFG0_DIS_TRISC_CACHE, PMACFG0, PMACFG1
from tensixsim.arch.common import CsrFacts
from tensixsim.errors import InvalidProgram, Unimplemented

# The counter CSRs (behaviour "counter"): which counter, and whether the high word.
_COUNTERS = {
    "mcycle": ("cycle", False),
    "cycle": ("cycle", False),
    "mcycleh": ("cycle", True),
    "cycleh": ("cycle", True),
    "minstret": ("instret", False),
    "instret": ("instret", False),
    "minstreth": ("instret", True),
    "instreth": ("instret", True),
}
# What keeps a value per core, and the CSRs whose value the timing walk reads.
_STORED = ("storage", "scratch_bnc")
_TIMING = (CFG0, PMACFG0, PMACFG1)


class CsrFile:
    """The CSRs of one core (``core``, a TRISC when ``trisc``), as a reset leaves them until written.

    ``cycle_at(pc)`` and ``retired_at(pc)``: the core's cycle and retired instructions at the
    instruction at ``pc``; ``configure(cfg0, strongly_ordered, fusion)``: hands the timing fields to
    the walk; ``fusion``: whether the chip fuses inline Tensix words at all."""

    def __init__(
        self,
        core: str,
        table: tuple[CsrFacts, ...],
        *,
        trisc: bool,
        fusion: bool,
        cycle_at: Callable[[int], int],
        retired_at: Callable[[int], int],
        configure: Callable[[int, bool, bool], None],
    ) -> None:
        self.core = core
        self._table = {c.address: c for c in table}
        self._trisc = trisc
        self._fusion = fusion
        self._cycle_at = cycle_at
        self._retired_at = retired_at
        self._configure = configure
        self.reset_values()

    def reset_values(self) -> None:
        """The values a reset leaves (CSRs.md): stored CSRs at their reset values, the counters
        reading the tile's clock again. The walk is not told (see reset)."""
        self.values = {c.address: c.reset for c in self._table.values() if c.behaviour in _STORED}
        self.counter_offsets = {"cycle": 0, "instret": 0}

    def reset(self) -> None:
        self.reset_values()
        self.apply_timing()

    @property
    def cfg0(self) -> int:
        return self.values.get(CFG0, 0)

    def snapshot(self) -> tuple[dict[int, int], dict[str, int]]:
        return dict(self.values), dict(self.counter_offsets)

    def restore(self, snapshot: tuple[dict[int, int], dict[str, int]]) -> None:
        self.values, self.counter_offsets = snapshot

    def _facts(self, csr: int, pc: int, value: int | None = None) -> CsrFacts:
        facts = self._table.get(csr)
        if facts is None:
            raise InvalidProgram(
                f"unknown CSR 0x{csr:03x}", core=self.core, pc=pc, cycle=self._cycle_at(pc), value=csr
            )
        if facts.behaviour == "unmodelled" or (facts.behaviour == "scratch_bnc" and self._trisc):
            what = "read of" if value is None else "write to"
            raise Unimplemented(
                f"{what} CSR 0x{csr:03x} ({facts.name}): not modelled",
                core=self.core,
                pc=pc,
                cycle=self._cycle_at(pc),
                value=csr if value is None else value,
            )
        return facts

    def _counter(self, name: str, pc: int) -> int:
        value = self._cycle_at(pc) if name == "cycle" else self._retired_at(pc)
        return (value + self.counter_offsets[name]) & (1 << 64) - 1

    def read(self, csr: int, pc: int) -> int:
        facts = self._facts(csr, pc)
        if facts.behaviour == "counter":
            counter, high = _COUNTERS[facts.name]
            value = self._counter(counter, pc)
            return (value >> 32 if high else value) & 0xFFFFFFFF
        if facts.behaviour == "constant":
            return facts.reset
        return self.values[csr]

    def write(self, csr: int, value: int, pc: int) -> None:
        facts = self._facts(csr, pc, value)
        if facts.behaviour == "counter":
            # The counter goes on counting from the value written (one word of it).
            counter, high = _COUNTERS[facts.name]
            current = self._counter(counter, pc)
            new = (value << 32 | current & 0xFFFFFFFF) if high else (current & ~0xFFFFFFFF | value)
            self.counter_offsets[counter] += new - current
        elif facts.behaviour != "constant":
            if csr in _TIMING:
                self._cycle_at(pc)  # the instructions before this one are accounted under the old settings
            self.values[csr] = value
            if csr in _TIMING:
                self.apply_timing()

    def apply_timing(self) -> None:
        """Hand cfg0, pmacfg0/1's ordering and whether inline words fuse to the timing walk."""
        strong = (self.values.get(PMACFG0, 0) | self.values.get(PMACFG1, 0)) & 1
        cfg0 = self.cfg0
        self._configure(cfg0, bool(strong), self._fusion and self._trisc and not cfg0 & CFG0_DIS_TRISC_CACHE)
