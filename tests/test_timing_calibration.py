"""The RISC-V timing model against the Blackhole silicon calibration figures (docs/timing.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensixsim.sdk import calibration
from tensixsim.tile import Tile
from tensixsim.timing import RISCV

# One worker runs this module: its fixtures measure the whole tables (about 20 s each), which every
# worker would otherwise measure again (`make test` distributes with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("timing_tables")

DOC = Path(__file__).resolve().parent.parent / "docs" / "timing.md"
CALIBRATED = [c for c in calibration.CASES if c.calibrated]


@pytest.fixture(scope="module")
def results() -> dict[str, calibration.Measured]:
    return {m.case.name: m for m in calibration.run_all()}


@pytest.fixture(scope="module")
def checks() -> dict[str, calibration.Measured]:
    return {m.case.name: m for m in calibration.run_all(calibration.CHECKS)}


@pytest.mark.parametrize("case", CALIBRATED, ids=lambda c: c.name)
def test_calibration_figure_is_within_ten_percent_of_silicon(results, case):
    measured = results[case.name]
    assert measured.within, f"{case.what}: {measured.emulated:.3f} against {case.silicon_text()}"


@pytest.mark.parametrize("case", [c for c in calibration.CHECKS if c.calibrated], ids=lambda c: c.name)
def test_a_check_figure_no_timing_figure_was_set_from_is_within_ten_percent(checks, case):
    measured = checks[case.name]
    assert measured.within, f"{case.what}: {measured.emulated:.3f} against {case.silicon_text()}"


def test_the_check_cases_are_not_calibration_cases():
    assert not {c.name for c in calibration.CHECKS} & {c.name for c in calibration.CASES}


def _shown(marker: str) -> str:
    text = DOC.read_text()
    start, end = f"<!-- {marker} -->\n", f"<!-- /{marker} -->"
    return text[text.index(start) + len(start) : text.index(end)].strip()


def test_the_doc_shows_the_current_tables(results, checks):
    hint = "run `python benchmarks/timing_table.py` and paste the tables into docs/timing.md"
    assert _shown("timing-table") == calibration.table([results[c.name] for c in calibration.CASES]), hint
    expected = calibration.table([checks[c.name] for c in calibration.CHECKS], not_run=())
    assert _shown("timing-checks") == expected, hint


@pytest.mark.parametrize(
    "name",
    [
        "l1_lw_x8",
        "l1_load_to_use",
        "local_sw_lw",
        "mmio_wall_clock",
        "five_l1_same_address",
        "pair_remote_local_lw_ncrisc",
        "noc_write_4",
        "unpack_subblock_bw1",
        "sfpu_scale_macro_pipeline",
    ],
)
def test_calibration_cycles_do_not_depend_on_the_quantum(results, name):
    case = next(c for c in calibration.CASES if c.name == name)
    for quantum in (7, 50):
        small = calibration.run_case(case, tile_factory=lambda q=quantum: Tile("blackhole", quantum=q))
        assert small.per_core == results[name].per_core


@pytest.mark.parametrize("name", ["release_signal", "cb_wait_front_released", "five_chase_brisc_ram"])
def test_check_cycles_do_not_depend_on_the_quantum(checks, name):
    """Two cores handshaking through L1 words, and five through one core's local RAM: the same
    cycles at every quantum, by page as fully ordered, with nothing counted late. (NCRISC polls the
    handshake's page alone until BRISC's first request: its loop is parked first, see
    PRIVATE_POLL_SPIN_THRESHOLD.)"""
    case = next(c for c in calibration.CHECKS if c.name == name)
    full = calibration.run_case(case, tile_factory=lambda: Tile("blackhole", l1_order="full"))
    assert checks[name].per_core == full.per_core and checks[name].l1_order_late == 0
    for quantum in (7, 50, 100):
        for order in ("full", "pages"):
            small = calibration.run_case(
                case, tile_factory=lambda q=quantum, o=order: Tile("blackhole", quantum=q, l1_order=o)
            )
            assert small.per_core == full.per_core and small.l1_order_late == 0


_PURE = """
import json
from tensixsim.riscv.native import native_library
from tensixsim.sdk import calibration
names = {names!r}
cases = [c for c in calibration.CASES if c.name in names]
print(json.dumps({{"native": native_library() is not None,
                  "figures": {{m.case.name: m.per_core for m in calibration.run_all(cases)}}}}))
"""


def test_the_python_timing_walk_gives_the_native_cycles(results):
    names = [
        "remu_dependent",
        "l1_lw_x4",
        "l1_load_to_use_gap4",
        "local_sw_lw_trisc2",
        "remote_local_lw",
        "mmio_noc_status",
        "l1_rmw",
        "five_l1_rmw_t1_t2",
        "noc_read_256",
        "cb_reserve_back",
        "ttsem_drain",
        "noc_atomic",
        "divu_dependent",
        "fence",
        "l1_store_x4",
        "l1_sw_lw",
        "cb_push_back_trisc2",
        "push_nop_sync",
        "noc_read_4_issue",
        "unpack_row",
        "thcon_shiftdmareg",
        "pack_1024_bf16_x1",
        "sfpu_profile_control",
    ]
    for case in calibration.CASES:
        if case.name in names:
            calibration.build_case(case, case.cores[0])  # build outside the subprocess
    env = dict(os.environ, TENSIXSIM_PURE_PYTHON="1")
    out = subprocess.run(
        [sys.executable, "-c", _PURE.format(names=names)], env=env, capture_output=True, text=True, check=True
    )
    pure = json.loads(out.stdout)
    assert not pure["native"]
    assert pure["figures"] == {name: results[name].per_core for name in names}


@pytest.mark.parametrize("gap", [0, 7, 8])
@pytest.mark.parametrize("load", ["lw a1, 8(s0)", "lb a1, 9(s0)", "lw a1, 12(s0)"])
def test_an_l1_load_of_bytes_a_store_writes_answers_late_until_the_store_is_performed(load, gap):
    """Hand-worked: sw at s, ``gap`` nops, the load at s + 1 + gap and a use of it when it answers,
    then the loop's addi, j and beqz before the next sw. A load of bytes the store writes before
    the store is performed (s + store_done) answers l1_store_conflict later than any other L1 load.
    Minus the empty loop's three cycles."""
    body = "\n".join(["sw a0, 8(s0)", *["nop"] * gap, load, "add a2, a1, a1"])
    measured = calibration.run_case(calibration.Case("probe", "probe", body, 1, (1.0, 1.0)))
    late = "12(s0)" not in load and 1 + gap < RISCV.store_done
    latency = RISCV.l1_load_latency + (RISCV.l1_store_conflict if late else 0)
    expected = 1 + gap + latency + 4 - 3
    assert measured.per_core["brisc"] == pytest.approx(expected, abs=0.1)


@pytest.mark.parametrize("toggle", [1, 0])
def test_a_branch_that_alternates_is_mispredicted_every_time(toggle):
    """Hand-worked, from a4 = 0. With the toggle the branch goes taken, not taken, taken, ...; its
    counter starts weakly not taken and steps across the threshold each time, so every outcome is
    mispredicted: beqz, xori and a bubble, then beqz, addi, xori and a bubble. Without it the branch
    is always taken: mispredicted the first time only (32 iterations)."""
    body = f"beqz a4, 1f\naddi a5, a5, 1\n1:\nxori a4, a4, {toggle}"
    case = calibration.Case("probe", "probe", body, 1, (1.0, 1.0), setup="li a4, 0")
    measured = calibration.run_case(case).per_core["brisc"]
    bubble = RISCV.branch_mispredict
    expected = (2 + 3) / 2 + bubble if toggle else 2 + bubble / case.iters
    assert measured == pytest.approx(expected, abs=0.1)
