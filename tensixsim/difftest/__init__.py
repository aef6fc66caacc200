"""Differential cases: one program, run on a device and on the emulator, results compared.

:mod:`~tensixsim.difftest.case` defines a case directory (``traces/<name>/``),
:mod:`~tensixsim.difftest.device` records one on a device through tt-umd,
:mod:`~tensixsim.difftest.emulator` runs it on tensixsim, and :mod:`~tensixsim.difftest.compare`
reports the differences. docs/differential-testing.md shows the commands.
"""

from tensixsim.difftest.case import Case, CaseError, Observation, find_cases, load_case
from tensixsim.difftest.compare import Diff, Mismatch, compare

__all__ = ["Case", "CaseError", "Diff", "Mismatch", "Observation", "compare", "find_cases", "load_case"]
