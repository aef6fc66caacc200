"""Record a case on a device through tt-umd (``tensixsim record``).

A device is a simulator directory holding a library with the libttsim API (``libttsim*.so``, e.g.
Tenstorrent's ttsim, plus the ``soc_descriptor.yaml`` tt-umd reads beside it), or ``pcie:N`` for
card N. tt-umd's Python package (``tt_umd``) drives either with the same calls: NoC reads and
writes of the tile's L1 and of its soft-reset register. Each NoC access advances a simulator's
clock, so polling the status words is what runs it.

The device runs in a child process: libttsim ends its host process on any error it detects
(``_Exit``, by design), and a card's driver may hang; the parent survives both and records the
error. tt-umd need not be importable by tensixsim's own interpreter: ``client_path`` (or
``$TENSIXSIM_CLIENT_PATH``) is put on the child's path, so a private install
(``pip install --target DIR tt-umd``) is enough.

A ``device.json`` in the simulator directory, if present, labels the recording (device name,
version, commit, how it was built); the library's SHA-256 is recorded in any case.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tensixsim.arch import get_arch
from tensixsim.difftest.case import (
    EXIT_FLAG,
    MAGIC,
    STATUS_BASE,
    Case,
    CaseError,
    Observation,
    build_programs,
    decode_status,
    status_size,
)

CLIENT_PATH_ENV = "TENSIXSIM_CLIENT_PATH"


class DeviceError(RuntimeError):
    """The device could not be opened or driven at all (not a failure of the case on it)."""


def simulator_library(device: str | Path) -> Path:
    """The libttsim library in a simulator directory (or the library itself)."""
    path = Path(device)
    if path.is_file():
        return path
    if not path.is_dir():
        raise DeviceError(f"{device}: not a simulator directory, a library, or pcie:N")
    found = sorted(path.glob("libttsim*.so"))
    if len(found) != 1:
        raise DeviceError(f"{device}: expected one libttsim*.so, found {[p.name for p in found]}")
    return found[0]


def device_label(device: str) -> dict[str, object]:
    """What the recording says it was recorded on."""
    if device.startswith("pcie:"):
        return {"device": "card", "pcie": int(device[5:])}
    library = simulator_library(device)
    label: dict[str, object] = {"device": library.name}
    meta = library.parent / "device.json"
    if meta.is_file():
        label.update(json.loads(meta.read_text()))
    label["library_sha256"] = hashlib.sha256(library.read_bytes()).hexdigest()
    return label


def _segments(case: Case, elfs: dict[str, Path]) -> list[tuple[int, str]]:
    """(address, hex bytes) of every loadable segment, zero-filled to its memory size."""
    from tensixsim.loader.elf import read_elf

    arch = get_arch(case.arch)
    writes = []
    for core, elf in elfs.items():
        for seg in read_elf(elf).segments:
            in_local_ram = arch.local_ram_base <= seg.address < arch.local_ram_base + 0x10000
            if in_local_ram and not seg.data:
                continue  # .bss in the core's local RAM: crt0 zeroes it (only L1 is written from outside)
            if not (seg.address >= 0 and seg.address + seg.memsz <= arch.l1_size):
                raise CaseError(f"{case.name}: {core}'s segment at 0x{seg.address:x} is outside L1")
            writes.append((seg.address, (seg.data + bytes(seg.memsz - len(seg.data))).hex()))
    return writes


def job_for(case: Case, elfs: dict[str, Path], device: str, timeout_s: float) -> dict[str, object]:
    """Everything the child needs, as plain data: what to write, which cores to release, what to read."""
    arch = get_arch(case.arch)
    release = 0
    for name in case.release:
        release |= 1 << arch.core(name).soft_reset_bit
    writes = [(STATUS_BASE, bytes(status_size(case)).hex()), (EXIT_FLAG, bytes(4).hex())]
    writes += [(r.address, bytes(r.size).hex()) for r in case.outputs]
    writes += _segments(case, elfs)
    writes += [(r.address, case.input_bytes(r).hex()) for r in case.inputs]
    ids = {c.name: i for i, c in enumerate(arch.cores)}
    return {
        "device": device,
        "tile": list(case.tile),
        "soft_reset": arch.soft_reset_register,
        "hold_all": arch.soft_reset_all,
        "release": release,
        "writes": writes,
        "status_base": STATUS_BASE,
        "status_size": status_size(case),
        "wait_for": [STATUS_BASE + 16 * ids[c] for c in case.programs],
        "magic": MAGIC,
        "reads": [(r.name, r.address, r.size) for r in case.outputs],
        "timeout_s": timeout_s,
    }


def run_on_device(
    case: Case,
    device: str,
    *,
    client_path: str | None = None,
    build_dir: Path | None = None,
    timeout_s: float = 120.0,
) -> Observation:
    """Run ``case`` on ``device`` in a child process; the device's failure is the observation's error."""
    if not device.startswith("pcie:"):
        simulator_library(device)  # a bad directory fails here, before anything is built
    elfs = build_programs(case, build_dir)
    job = job_for(case, elfs, device, timeout_s)
    env = dict(os.environ)
    extra = client_path or os.environ.get(CLIENT_PATH_ENV)
    paths = [str(Path(__file__).resolve().parent.parent.parent)]
    if extra:
        paths.insert(0, extra)
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tensixsim.difftest.device_child"],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout_s + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Observation(error=f"device did not answer within {timeout_s + 60:.0f} s")
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
    if result is None:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        # The simulator's own error line says why; the client's log lines around it do not.
        tail = [ln for ln in lines if "ERROR" in ln][-2:] or lines[-3:]
        return Observation(error=f"device process ended with status {proc.returncode}: " + " | ".join(tail))
    if "fatal" in result:
        if "No module named 'tt_umd'" in result["fatal"]:
            raise DeviceError(
                f"tt_umd is not importable: install it (pip install --target DIR tt-umd) and pass "
                f"--client-path DIR or set {CLIENT_PATH_ENV}"
            )
        raise DeviceError(result["fatal"])
    observation = Observation(
        outputs={name: bytes.fromhex(data) for name, data in result.get("outputs", {}).items()},
        error=result.get("error"),
    )
    codes, cycles, missing = decode_status(case, bytes.fromhex(result["status"]))
    observation.exit_codes, observation.cycles = codes, cycles
    if missing and observation.error is None:
        observation.error = f"no status record from {', '.join(missing)}"
    return observation


def record(
    case: Case,
    device: str,
    *,
    client_path: str | None = None,
    build_dir: Path | None = None,
    timeout_s: float = 120.0,
) -> dict[str, object]:
    """Run ``case`` on ``device`` and write ``recorded/``: the output regions as ``<name>.bin`` and
    ``recording.json`` (device label, client, date, exit codes, wall-clock spans, error)."""
    observation = run_on_device(
        case, device, client_path=client_path, build_dir=build_dir, timeout_s=timeout_s
    )
    out = case.recorded_dir
    out.mkdir(exist_ok=True)
    for stale in out.glob("*.bin"):
        stale.unlink()
    for name, data in observation.outputs.items():
        (out / f"{name}.bin").write_bytes(data)
    meta = {
        "arch": case.arch,
        **device_label(device),
        "client": _client_version(client_path),
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "exit_codes": observation.exit_codes,
        "cycles": observation.cycles,
        "cycles_unit": "wall-clock ticks between the program's start and its end (difftest_main.c)",
        "error": observation.error,
    }
    (out / "recording.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def load_recording(case: Case) -> tuple[dict[str, object], Observation] | None:
    """The recorded observation of ``case`` (None when it was never recorded)."""
    meta_path = case.recorded_dir / "recording.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(meta_path.read_text())
    if meta.get("arch") != case.arch:
        raise CaseError(f"{meta_path}: arch: recorded on {meta.get('arch')!r}, the case is for {case.arch!r}")
    outputs = {}
    for region in case.outputs:
        path = case.recorded_dir / f"{region.name}.bin"
        if path.is_file():
            outputs[region.name] = path.read_bytes()
    observation = Observation(
        outputs=outputs,
        exit_codes=dict(meta.get("exit_codes", {})),
        cycles={k: int(v) for k, v in meta.get("cycles", {}).items()},
        error=meta.get("error"),
    )
    return meta, observation


def _client_version(client_path: str | None) -> str:
    code = "import importlib.metadata as m; print(m.version('tt-umd'))"
    env = dict(os.environ)
    extra = client_path or os.environ.get(CLIENT_PATH_ENV)
    if extra:
        env["PYTHONPATH"] = os.pathsep.join([extra, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    return f"tt-umd {proc.stdout.strip()}" if proc.returncode == 0 else "tt-umd (version unknown)"
