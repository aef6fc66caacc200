"""The RISC-V timing calibration table: each microbenchmark run on the emulator against silicon.

Every figure of the calibration list in tensixsim/timing.py (Blackhole p100a) that has a program here
(the baby cores, their L1, MMIO and NoC accesses) runs as a real bare-metal program
(tensixsim/sdk/calibration/):
the wall clock read around a counted loop, minus the same loop empty, per operation. Prints the
Markdown table docs/timing.md shows, then the table of checks (further figures of the same benches,
which set no figure of the model), then the share of each within 10%.
"""

from __future__ import annotations

import time

from tensixsim.sdk import calibration


def main() -> None:
    start = time.perf_counter()
    results = calibration.run_all()
    checks = calibration.run_all(calibration.CHECKS)
    print(calibration.table(results))
    print("\nChecks (further figures of the same benches; none set a figure of the model):\n")
    print(calibration.table(checks, not_run=()))
    print(f"\n(cycles per operation; {time.perf_counter() - start:.1f} s)")
    print(calibration.summary(checks, "timing_checks_within_10pct"))
    print(calibration.summary(results))


if __name__ == "__main__":
    main()
