"""Every differential case in traces/ replayed on the emulator and held to its recording and verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensixsim.difftest import compare, find_cases, load_case
from tensixsim.difftest.device import load_recording
from tensixsim.difftest.emulator import run_on_emulator

ROOT = Path(__file__).resolve().parent.parent
CASES = find_cases(ROOT / "traces")


def test_there_are_recorded_cases_of_every_family():
    names = {p.name for p in CASES}
    assert len(names) >= 20
    for prefix in ("rv_", "tensix_", "eltwise_", "matmul_", "sfpu_", "cb_"):
        assert any(n.startswith(prefix) for n in names), prefix
    for path in CASES:
        assert (path / "recorded" / "recording.json").is_file(), f"{path.name} was never recorded"


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_case(path: Path, tmp_path: Path):
    case = load_case(path)
    recording = load_recording(case)
    assert recording is not None, f"{case.name}: record it first (docs/differential-testing.md)"
    meta, expected = recording
    assert (meta.get("device") and meta.get("library_sha256")) or meta.get("device") == "card"
    actual = run_on_emulator(case, build_dir=ROOT / "build" / "sdk")
    assert actual.error is None, actual.error
    diff = compare(case, expected, actual)
    for region in case.outputs:  # an independent model's answer binds whatever the device said
        reference = case.reference_bytes(region)
        if reference is not None:
            assert actual.outputs[region.name] == reference, f"{region.name} differs from {region.reference}"
    status = case.verdict.status
    if status == "agree":
        assert diff.same, diff.report()
        assert actual.exit_codes == expected.exit_codes
    elif status == "device_wrong":
        # The device finished, the outputs differ only where the verdict says (and say why).
        assert expected.error is None and case.verdict.notes
        assert diff.counts and set(diff.counts) <= set(case.verdict.outputs), diff.report()
    elif status == "device_unsupported":
        # The device stopped (re-record and re-judge once it does not); the emulator ran every program
        # to its end (what the programs compute is checked against models in the tests the notes name).
        assert expected.error is not None and case.verdict.notes
        assert set(actual.exit_codes) == set(case.programs)
    else:  # emulator_wrong: a known failure until it is fixed
        assert not diff.same, f"{case.name} now agrees: change its verdict to 'agree'"
        pytest.xfail(f"{case.name}: {case.verdict.notes}")
