"""The differential-testing machinery: case files, the comparison and its report, the recorder's
protocol with a device (through a stand-in for tt-umd's Python module)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from tensixsim.difftest import CaseError, Observation, compare, load_case
from tensixsim.difftest.case import EXIT_FLAG, MAGIC, STATUS_BASE, decode_status
from tensixsim.difftest.device import DeviceError, job_for, load_recording, record, run_on_device

ROOT = Path(__file__).resolve().parent.parent
MULDIV = ROOT / "traces" / "rv_muldiv"


def _case_dir(tmp_path: Path, spec: dict, files: dict[str, bytes] | None = None) -> Path:
    d = tmp_path / "case"
    d.mkdir()
    (d / "case.json").write_text(json.dumps(spec))
    for name, data in (files or {}).items():
        (d / name).write_bytes(data)
    return d


def _spec(**outputs_and_more) -> dict:
    spec = {"programs": {"brisc": {"sources": ["p.c"]}}, "outputs": []}
    spec.update(outputs_and_more)
    return spec


# ------------------------------------------------------------------------------------ the report


def test_a_corrupted_expectation_reports_the_exact_mismatch(tmp_path: Path):
    shutil.copytree(MULDIV, tmp_path / "rv_muldiv")
    case = load_case(tmp_path / "rv_muldiv")
    _, recorded = load_recording(case)
    words = np.frombuffer(recorded.outputs["results"], "<u4").copy()
    index = 3 * 144 + 5  # mulhu of operands 0 and 5
    good = int(words[index])
    words[index] ^= 0x00010000
    (case.recorded_dir / "results.bin").write_bytes(words.tobytes())
    _, corrupted = load_recording(case)
    actual = Observation(outputs=dict(recorded.outputs), exit_codes={"brisc": 0}, cycles={"brisc": 100})
    diff = compare(case, corrupted, actual)
    assert not diff.same
    assert diff.counts == {"results": 1}
    (m,) = diff.mismatches["results"]
    assert (m.index, m.address) == (index, 0x40000 + 4 * index)
    assert (m.expected_bits, m.actual_bits) == (good ^ 0x10000, good)
    report = diff.report()
    assert f"[{index}] 0x{0x40000 + 4 * index:08x}: expected {good ^ 0x10000} " in report
    assert f"actual {good} (0x{good:x})" in report


def test_mismatches_are_decoded_by_format_and_limited(tmp_path: Path):
    spec = _spec(
        outputs=[
            {"name": "h", "address": "0x100", "size": 8, "format": "bf16"},
            {"name": "f", "address": "0x200", "size": 8, "format": "fp32"},
            {"name": "i", "address": "0x300", "size": 8, "format": "i32"},
            {"name": "same", "address": "0x400", "size": 4, "format": "u32"},
        ]
    )
    case = load_case(_case_dir(tmp_path, spec, {"p.c": b""}))
    bf16 = lambda *v: np.array(v, np.float32).view(np.uint32).__rshift__(16).astype("<u2").tobytes()
    f32 = lambda *v: np.array(v, "<f4").tobytes()
    expected = Observation(
        outputs={"h": bf16(1, 2, 3, -4), "f": f32(0.5, 1.5), "i": struct.pack("<2i", -1, 7), "same": b"abcd"}
    )
    actual = Observation(
        outputs={
            "h": bf16(1, 2.5, 3, 4),
            "f": f32(0.5, 1.75),
            "i": struct.pack("<2i", -2, 7),
            "same": b"abcd",
        }
    )
    diff = compare(case, expected, actual, limit=1)
    assert diff.counts == {"h": 2, "f": 1, "i": 1}
    (h,) = diff.mismatches["h"]  # limited to the first
    assert (h.index, h.address, h.expected, h.actual) == (1, 0x102, "2.0", "2.5")
    assert (diff.mismatches["f"][0].expected, diff.mismatches["f"][0].actual) == ("1.5", "1.75")
    assert (diff.mismatches["i"][0].expected, diff.mismatches["i"][0].actual) == ("-1", "-2")
    assert "h: 2 datum(s) differ; first 1:" in diff.report(limit=1)


def test_cycles_are_compared_as_a_ratio_and_do_not_make_a_difference(tmp_path: Path):
    case = load_case(_case_dir(tmp_path, _spec(), {"p.c": b""}))
    diff = compare(case, Observation(cycles={"brisc": 200}), Observation(cycles={"brisc": 300}))
    assert diff.same
    assert "brisc: cycles expected 200, actual 300, actual/expected 1.50" in diff.report()


def test_a_device_error_and_differing_exit_codes_are_differences(tmp_path: Path):
    case = load_case(_case_dir(tmp_path, _spec(), {"p.c": b""}))
    assert not compare(case, Observation(error="ERROR: x"), Observation()).same
    diff = compare(case, Observation(exit_codes={"brisc": 0}), Observation(exit_codes={"brisc": 3}))
    assert diff.exit_codes == {"brisc": (0, 3)}
    assert "brisc: exit code expected 0, actual 3" in diff.report()


# ------------------------------------------------------------------------------------ case files


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"outputs": [{"name": "o", "address": "0x0", "size": 6, "format": "u32"}]}, "multiple of u32"),
        ({"outputs": [{"name": "o", "address": "0x0", "size": 4, "format": "f64"}]}, "format 'f64'"),
        ({"programs": {"risc9": {"sources": ["p.c"]}}}, "unknown core 'risc9'"),
        ({"programs": {"brisc": {"sources": ["nope.c"]}}}, "nope.c does not exist"),
        ({"release": ["trisc0"]}, "release names 'trisc0'"),
        ({"verdict": {"status": "maybe"}}, "verdict.status 'maybe'"),
        ({"inputs": [{"address": "zero", "file": "p.c"}]}, "is not a number"),
        ({"inputs": [{"address": "0x180000", "file": "p.c"}]}, r"inputs\[0\]: 0x180000..0x180000 is outside"),
        (
            {"outputs": [{"name": "o", "address": "0x17FFFC", "size": 8}]},
            r"outputs\[0\]: .* outside blackhole's L1",
        ),
    ],
)
def test_a_bad_case_is_refused_naming_the_field(tmp_path: Path, change: dict, message: str):
    with pytest.raises(CaseError, match=message):
        load_case(_case_dir(tmp_path, _spec(**change), {"p.c": b""}))


def test_the_status_records_decode_to_exit_codes_and_spans(tmp_path: Path):
    case = load_case(
        _case_dir(
            tmp_path,
            _spec(programs={"brisc": {"sources": ["p.c"]}, "trisc1": {"sources": ["p.c"]}}),
            {"p.c": b""},
        )
    )
    status = bytearray(80)
    struct.pack_into("<4I", status, 0, MAGIC, 0xFFFFFFFF, 0xFFFFFFF0, 0x10)  # exit -1, clock wrapped
    codes, cycles, missing = decode_status(case, bytes(status))
    assert (codes, cycles, missing) == ({"brisc": -1}, {"brisc": 0x20}, ["trisc1"])


# ------------------------------------------------------------------------------------ the recorder

FAKE_UMD = '''
"""Stands in for tt-umd's module: an L1 and a soft-reset register; releasing cores "runs" them."""
import os, struct, sys

class _Device:
    def __init__(self, path):
        self.path, self.l1, self.reset, self.log = path, bytearray(0x180000), 0, []
    def init_tt_device(self):
        pass
    def noc_write32(self, x, y, addr, value):
        self.noc_write(x, y, addr, struct.pack("<I", value))
    def noc_read32(self, x, y, addr):
        return struct.unpack("<I", self.noc_read(x, y, addr, 4))[0]
    def noc_write(self, x, y, addr, data):
        if addr == 0xFFB121B0:
            released = self.reset & ~struct.unpack("<I", data)[0]
            self.reset = struct.unpack("<I", data)[0]
            if released & (1 << 11):  # BRISC: its "program" squares the word at 0x30000 into 0x40000
                if os.environ.get("FAKE_UMD_DIE"):
                    print("[7] ERROR: UnimplementedFunctionality: fake", flush=True)
                    os._exit(1)
                if not os.environ.get("FAKE_UMD_HANG"):
                    v = struct.unpack_from("<I", self.l1, 0x30000)[0]
                    struct.pack_into("<I", self.l1, 0x40000, v * v & 0xFFFFFFFF)
                    struct.pack_into("<4I", self.l1, 0x1F000, 0x0D1FF0DE, 0, 100, 142)
            return
        self.log.append((addr, len(data)))
        self.l1[addr : addr + len(data)] = data
    def noc_read(self, x, y, addr, size):
        assert (x, y) == (1, 2)
        return bytes(self.l1[addr : addr + size])

class TTSimTTDevice:
    @staticmethod
    def create(path):
        return _Device(path)
'''


@pytest.fixture
def fake_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    client = tmp_path / "client"
    (client / "tt_umd").mkdir(parents=True)
    (client / "tt_umd" / "__init__.py").write_text(FAKE_UMD)
    device = tmp_path / "sim"
    device.mkdir()
    (device / "libttsim.so").write_bytes(b"not a real library")
    (device / "device.json").write_text(json.dumps({"device": "fake", "version": "v0"}))
    source = tmp_path / "src"
    source.mkdir()
    (source / "p.c").write_text(
        "#include <stdint.h>\nint main(void) { *(volatile uint32_t *)0x40000u = 0; return 0; }\n"
    )
    spec = _spec(
        inputs=[{"address": "0x30000", "file": "in.bin"}],
        outputs=[{"name": "out", "address": "0x40000", "size": 4, "format": "u32"}],
    )
    case_dir = _case_dir(
        tmp_path, spec, {"p.c": (source / "p.c").read_bytes(), "in.bin": struct.pack("<I", 12345)}
    )
    return load_case(case_dir), str(device), str(client)


def test_record_writes_the_outputs_and_a_labelled_recording(fake_device, tmp_path: Path):
    case, device, client = fake_device
    meta = record(case, device, client_path=client, build_dir=tmp_path / "build", timeout_s=20)
    assert meta["error"] is None
    assert (meta["device"], meta["version"], meta["cycles"], meta["exit_codes"]) == (
        "fake",
        "v0",
        {"brisc": 42},
        {"brisc": 0},
    )
    assert len(meta["library_sha256"]) == 64
    assert (case.recorded_dir / "out.bin").read_bytes() == struct.pack("<I", 12345 * 12345 & 0xFFFFFFFF)
    _, observation = load_recording(case)
    assert observation.outputs["out"] == struct.pack("<I", 12345 * 12345 & 0xFFFFFFFF)


def test_the_job_holds_every_core_writes_the_program_and_releases_only_brisc(fake_device, tmp_path: Path):
    case, device, _ = fake_device
    from tensixsim.difftest.case import build_programs

    job = job_for(case, build_programs(case, tmp_path / "build"), device, 10)
    assert (job["soft_reset"], job["hold_all"], job["release"]) == (0xFFB121B0, 0x47800, 1 << 11)
    addresses = [a for a, _ in job["writes"]]
    assert addresses[:2] == [STATUS_BASE, EXIT_FLAG] and 0 in addresses and 0x30000 in addresses
    assert job["wait_for"] == [STATUS_BASE]


def test_a_simulator_that_ends_its_process_is_a_recorded_error(fake_device, tmp_path: Path, monkeypatch):
    case, device, client = fake_device
    monkeypatch.setenv("FAKE_UMD_DIE", "1")
    observation = run_on_device(case, device, client_path=client, build_dir=tmp_path / "build", timeout_s=20)
    assert observation.error is not None
    assert "ERROR: UnimplementedFunctionality: fake" in observation.error
    assert observation.outputs == {}


def test_a_program_that_never_reports_times_out(fake_device, tmp_path: Path, monkeypatch):
    case, device, client = fake_device
    monkeypatch.setenv("FAKE_UMD_HANG", "1")
    observation = run_on_device(case, device, client_path=client, build_dir=tmp_path / "build", timeout_s=0.5)
    assert observation.error.startswith("timeout after 0.5 s: no status record at ['0x1f000']")
    assert observation.outputs == {"out": bytes(4)}  # cleared before the run, as every output region


def test_without_tt_umd_the_recorder_says_how_to_get_it(fake_device, tmp_path: Path, monkeypatch):
    case, device, _ = fake_device
    monkeypatch.delenv("TENSIXSIM_CLIENT_PATH", raising=False)
    # The client path comes first on the child's path: a tt_umd there that fails to import stands for
    # a machine without it, whether or not this one has it installed.
    absent = tmp_path / "absent"
    absent.mkdir()
    stand_in = 'raise ModuleNotFoundError("No module named \'tt_umd\'", name="tt_umd")\n'
    (absent / "tt_umd.py").write_text(stand_in)
    with pytest.raises(DeviceError, match="tt_umd is not importable"):
        run_on_device(case, device, client_path=str(absent), build_dir=tmp_path / "build")


def test_a_device_that_is_not_a_simulator_directory_is_refused(fake_device, tmp_path: Path):
    case, _, client = fake_device
    with pytest.raises(DeviceError, match="expected one libttsim"):
        run_on_device(case, str(tmp_path), client_path=client)


# ------------------------------------------------------------------------------------ the commands


def test_diff_command_reports_identical_and_differing_cases(tmp_path: Path, capsys, monkeypatch):
    from tensixsim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["diff", str(MULDIV)]) == 0
    assert "rv_muldiv: results identical" in capsys.readouterr().out
    shutil.copytree(MULDIV, tmp_path / "altered")
    words = np.fromfile(tmp_path / "altered" / "recorded" / "results.bin", "<u4")
    words[7] += 1
    words.tofile(tmp_path / "altered" / "recorded" / "results.bin")
    assert main(["diff", str(tmp_path / "altered")]) == 1
    out = capsys.readouterr().out
    assert "results: 1 datum(s) differ" in out and "[7] 0x0004001c" in out and "verdict: agree" in out


def test_diff_and_record_refuse_what_is_not_a_case(tmp_path: Path, capsys):
    from tensixsim.cli import main

    assert main(["diff", str(tmp_path)]) == 2
    assert "not a case directory" in capsys.readouterr().err
    assert main(["record", str(MULDIV), "--device", str(tmp_path)]) == 2
    assert "expected one libttsim" in capsys.readouterr().err


def test_a_recording_of_another_architecture_is_refused(tmp_path: Path):
    shutil.copytree(MULDIV, tmp_path / "case")
    meta_path = tmp_path / "case" / "recorded" / "recording.json"
    meta = json.loads(meta_path.read_text())
    assert meta["arch"] == "blackhole"
    meta_path.write_text(json.dumps({**meta, "arch": "wormhole"}))
    with pytest.raises(
        CaseError, match=r"recording\.json: arch: recorded on 'wormhole', the case is for 'blackhole'"
    ):
        load_recording(load_case(tmp_path / "case"))
