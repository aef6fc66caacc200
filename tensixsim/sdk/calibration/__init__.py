"""The RISC-V timing calibration microbenchmarks, as bare-metal programs.

Each case runs the loop the silicon figure was measured with: the wall clock read
(``WALL_CLOCK_L``) around a counted loop (``beqz`` on the counter, the body, ``addi``, ``j``), then
the same loop with the measurement's empty body (nothing, or one one-cycle instruction); the cost
per operation is the difference divided by the operations run (a stream's figure: bytes per cycle).
Both clock reads are in the loop's own assembly block, so the body's interval and the empty loop's
hold the same instructions but the body. Optional setup and teardown code runs inside both timed
regions, so its cost cancels; a prologue runs
once before them (a configuration the measured program made before its clock reads), and companion
programs on other cores run alongside until the timed core is done. The bodies do
what the measured ones did, instruction for instruction (registers renamed to the harness's):
the silicon figures are the calibration list of :mod:`tensixsim.timing` (``CALIBRATION``), Blackhole
p100a microbenchmarks (cycles at 1.35 GHz; docs/timing.md names them). Besides the cores' own
instructions, the list covers tt-metal-style circular-buffer and semaphore calls, Tensix
instruction pushes and the coprocessor's semaphores, NoC requests to the own tile and DRAM, and the
coprocessor's own benches (the unpackers' matmul rows, the scalar unit's rates, the packer, the vector
unit's schedules and rates).

:data:`CHECKS` (:mod:`.checks`) are further figures of the same benches that set no figure of the
model: they check that the mechanisms generalise.

``python benchmarks/timing_table.py`` prints both tables; tests/test_timing_calibration.py asserts
the calibrated rows and the checks, and that docs/timing.md shows the same tables.

One module per measured block: :mod:`.riscv` (the cores' own instructions, their memory, five cores
at once), :mod:`.sync` (circular buffers, semaphores, Tensix instruction pushes), :mod:`.noc` (NoC
and DRAM), :mod:`.unpack`, :mod:`.thcon`, :mod:`.pack` and :mod:`.sfpu`; :mod:`.checks` the
further figures; :mod:`.case` holds what they share, :mod:`.harness` compiles and runs them and
prints the table.
"""

from __future__ import annotations

from tensixsim.sdk.calibration.case import (
    ARCH,
    DATA,
    DONE,
    GPRS,
    MOP_CFG,
    MOP_SYNC,
    NOC_STATUS_OFFSET,
    NOP,
    PC_BUF_SYNC,
    PROFILE,
    RESULTS,
    RING,
    SHARED,
    SOURCE,
    TENSIX_CFG,
    Case,
)
from tensixsim.sdk.calibration.checks import CHECKS
from tensixsim.sdk.calibration.harness import (
    CASES,
    NOT_RUN,
    Measured,
    build_case,
    build_companion,
    run_all,
    run_case,
    summary,
    table,
)
from tensixsim.sdk.calibration.noc import DRAM_BANKS, DRAM_BASE, DRAM_PAGE, DRAM_PAGES, NIU, STREAM_BYTES
from tensixsim.sdk.calibration.pack import PACK_OUT
from tensixsim.sdk.calibration.riscv import FIVE
from tensixsim.sdk.calibration.sync import SEM, STREAM_ACKED, STREAM_RECEIVED, TRISC1, TRISC2
from tensixsim.sdk.calibration.unpack import INSTRN_BUF, UNPACK_IN0, UNPACK_IN1, UNPACK_SYNC_SEM, UNPACK_TILE

__all__ = [
    "ARCH",
    "CASES",
    "CHECKS",
    "DATA",
    "DONE",
    "DRAM_BANKS",
    "DRAM_BASE",
    "DRAM_PAGE",
    "DRAM_PAGES",
    "FIVE",
    "GPRS",
    "INSTRN_BUF",
    "MOP_CFG",
    "MOP_SYNC",
    "NIU",
    "NOC_STATUS_OFFSET",
    "NOP",
    "NOT_RUN",
    "PACK_OUT",
    "PC_BUF_SYNC",
    "PROFILE",
    "RESULTS",
    "RING",
    "SEM",
    "SHARED",
    "SOURCE",
    "STREAM_ACKED",
    "STREAM_BYTES",
    "STREAM_RECEIVED",
    "TENSIX_CFG",
    "TRISC1",
    "TRISC2",
    "UNPACK_IN0",
    "UNPACK_IN1",
    "UNPACK_SYNC_SEM",
    "UNPACK_TILE",
    "Case",
    "Measured",
    "build_case",
    "build_companion",
    "run_all",
    "run_case",
    "summary",
    "table",
]
