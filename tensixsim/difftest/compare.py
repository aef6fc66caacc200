"""Compare two observations of a case: bit mismatches decoded by data format, and cycle ratios."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensixsim.difftest.case import Case, Observation
from tensixsim.tensix.formats import to_float32

_DTYPES = {"u8": "<u1", "u16": "<u2", "u32": "<u4", "i32": "<u4", "fp32": "<u4", "bf16": "<u2", "fp16": "<u2"}


@dataclass(frozen=True)
class Mismatch:
    """One datum that differs: where, its raw bits on both sides and what they denote."""

    output: str
    index: int  # datum index in the region
    address: int
    expected_bits: int
    actual_bits: int
    expected: str
    actual: str


@dataclass
class Diff:
    """Everything that differs between the expected (recorded) and actual (emulator) observations."""

    case: str
    mismatches: dict[str, list[Mismatch]] = field(default_factory=dict)  # first N per output
    counts: dict[str, int] = field(default_factory=dict)  # all mismatching datums per output
    missing: list[str] = field(default_factory=list)  # outputs one side lacks
    exit_codes: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)  # only differing
    cycles: dict[str, tuple[int, int]] = field(default_factory=dict)  # core -> (expected, actual)
    errors: tuple[str | None, str | None] = (None, None)

    @property
    def same(self) -> bool:
        """Identical results: no datum, output, exit code or error differs (cycles may)."""
        return not self.counts and not self.missing and not self.exit_codes and self.errors == (None, None)

    def report(self, limit: int = 10) -> str:
        """A human-readable report: per output the first ``limit`` mismatches, then the cycles."""
        lines = [f"{self.case}: " + ("results identical" if self.same else "results differ")]
        for side, error in zip(("expected", "actual"), self.errors, strict=True):
            if error:
                lines.append(f"  {side} run stopped: {error}")
        for name in self.missing:
            lines.append(f"  {name}: missing on one side")
        for core, (exp, act) in self.exit_codes.items():
            lines.append(f"  {core}: exit code expected {exp}, actual {act}")
        for name, count in self.counts.items():
            lines.append(f"  {name}: {count} datum(s) differ; first {min(count, limit)}:")
            for m in self.mismatches[name][:limit]:
                lines.append(
                    f"    [{m.index}] 0x{m.address:08x}: expected {m.expected} (0x{m.expected_bits:x}), "
                    f"actual {m.actual} (0x{m.actual_bits:x})"
                )
        for core, (exp, act) in self.cycles.items():
            ratio = f"{act / exp:.2f}" if exp else "n/a"
            lines.append(f"  {core}: cycles expected {exp}, actual {act}, actual/expected {ratio}")
        return "\n".join(lines)


def _show(bits: np.ndarray, fmt: str) -> list[str]:
    if fmt == "i32":
        return [str(int(v)) for v in bits.astype(np.uint32).view(np.int32)]
    if fmt in ("fp32", "bf16", "fp16"):
        return [repr(float(v)) for v in to_float32(bits, fmt)]
    return [str(int(v)) for v in bits]


def compare(case: Case, expected: Observation, actual: Observation, *, limit: int = 10) -> Diff:
    """Every difference between ``expected`` and ``actual``; at most ``limit`` mismatches kept per output."""
    diff = Diff(case.name, errors=(expected.error, actual.error))
    for region in case.outputs:
        exp, act = expected.outputs.get(region.name), actual.outputs.get(region.name)
        if exp is None or act is None:
            if exp is not None or act is not None or expected.error is None:
                diff.missing.append(region.name)
            continue
        dtype = _DTYPES[region.format]
        a = np.frombuffer(exp, dtype)
        b = np.frombuffer(act, dtype)
        bad = np.flatnonzero(a != b)
        if bad.size == 0:
            continue
        diff.counts[region.name] = int(bad.size)
        first = bad[:limit]
        width = np.dtype(dtype).itemsize
        shown_a, shown_b = _show(a[first], region.format), _show(b[first], region.format)
        diff.mismatches[region.name] = [
            Mismatch(
                region.name,
                int(i),
                region.address + int(i) * width,
                int(a[i]),
                int(b[i]),
                shown_a[k],
                shown_b[k],
            )
            for k, i in enumerate(first)
        ]
    for core in case.programs:
        e, x = expected.exit_codes.get(core), actual.exit_codes.get(core)
        if e != x and expected.error is None:
            diff.exit_codes[core] = (e, x)
        if core in expected.cycles and core in actual.cycles:
            diff.cycles[core] = (expected.cycles[core], actual.cycles[core])
    return diff
