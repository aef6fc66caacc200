"""A differential case: one program for a tile, its inputs, and what to read back.

A case is a directory ``traces/<name>/`` holding ``case.json`` (written by hand) and, once recorded on
a device, ``recorded/`` (``recording.json`` plus one ``<output>.bin`` per output region). The format
names no device: the same case runs on the emulator, on ttsim, or on a card.

``case.json``::

    {
      "description": "what the case pins",
      "arch": "blackhole",
      "tile": [1, 2],                     # NoC 0 coordinates of the Tensix tile on a device
      "programs": {                       # per core: SDK sources (built at run time) or an ELF
        "brisc": {"sources": ["prog.c"], "defines": {"N": "8u"}},
        "trisc0": {"sources": ["sdk:examples/kernels/unpack.c"]},
        "ncrisc": {"elf": "ncrisc.elf"}
      },
      "release": ["brisc"],               # cores the host takes out of reset (default: BRISC if
                                          # loaded, else every loaded core)
      "inputs": [{"address": "0x30000", "file": "a.npy"}],      # .npy: the array's bytes; else raw
      "outputs": [{"name": "out", "address": "0x40000", "size": 64, "format": "u32",
                   "reference": "out_model.npy"}],   # optional: what an independent model gives
      "max_cycles": 10000000,             # the emulator's budget
      "verdict": {"status": "agree"}      # or "device_wrong" / "emulator_wrong", see below
    }

Source paths are relative to the case directory; ``sdk:`` names a file under ``tensixsim/sdk/``.
Every program is linked with ``tensixsim/sdk/difftest_main.c`` (``-Wl,--wrap=main``), which reports
the core's exit code and wall-clock span in L1 at :data:`STATUS_BASE` and then waits for the host's
go-ahead (see that file for why), so programs need nothing special. A prebuilt ``elf`` must have been
linked the same way (with the wrapper and :func:`protocol_defines`): a core that never reports is an
error on every device.

``verdict.status``: ``agree`` (emulator and device match bit for bit), ``device_wrong`` (they differ
in ``verdict.outputs``, and the documentation says the emulator is right: ``verdict.notes`` says
why, with the source), ``device_unsupported`` (the device stops on something the documentation
defines: nothing to compare, the emulator must run the case to completion), ``emulator_wrong``
(the emulator is wrong: a known failure until fixed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tensixsim.arch import CORE_NAMES, get_arch

SDK_DIR = Path(__file__).resolve().parent.parent / "sdk"
MAIN_WRAPPER = SDK_DIR / "difftest_main.c"

# The L1 words through which programs report (difftest_main.c): one 16-byte record per core id
# (magic, exit code, wall clock at start, at end), then the host's go-ahead word. Below the SDK's
# user region (0x20000) and above every core's code window (the last ends at 0x16000).
STATUS_BASE = 0x1F000
STATUS_BYTES = 16
EXIT_FLAG = 0x1F080
MAGIC = 0x0D1FF0DE

FORMATS = ("u8", "u16", "u32", "i32", "fp32", "bf16", "fp16")
VERDICTS = ("agree", "device_wrong", "device_unsupported", "emulator_wrong")
DEFAULT_TILE = (1, 2)  # the first Tensix tile in NoC 0 coordinates on Blackhole and Wormhole


class CaseError(ValueError):
    """A case directory that cannot be used (missing file, bad field)."""


@dataclass(frozen=True)
class Program:
    """One core's program: SDK sources to build, or a prebuilt ELF."""

    core: str
    sources: tuple[Path, ...] = ()
    defines: dict[str, object] = field(default_factory=dict)
    elf: Path | None = None


@dataclass(frozen=True)
class Region:
    """L1 bytes: an input written before the run, or an output read back after it."""

    name: str
    address: int
    size: int
    format: str = "u8"
    file: Path | None = None  # inputs: where the bytes come from
    reference: Path | None = None  # outputs: an independent model's bytes, which the emulator must match


@dataclass(frozen=True)
class Verdict:
    status: str = "agree"
    outputs: tuple[str, ...] = ()
    notes: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    description: str
    arch: str
    tile: tuple[int, int]
    programs: dict[str, Program]
    release: tuple[str, ...]
    inputs: tuple[Region, ...]
    outputs: tuple[Region, ...]
    max_cycles: int
    verdict: Verdict

    @property
    def recorded_dir(self) -> Path:
        return self.path / "recorded"

    def input_bytes(self, region: Region) -> bytes:
        assert region.file is not None
        return _file_bytes(region.file)

    def reference_bytes(self, region: Region) -> bytes | None:
        return None if region.reference is None else _file_bytes(region.reference)

    def output(self, name: str) -> Region:
        for region in self.outputs:
            if region.name == name:
                return region
        raise KeyError(name)


def _number(value: object, what: str) -> int:
    if isinstance(value, bool):
        raise CaseError(f"{what}: {value!r} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            pass
    raise CaseError(f"{what}: {value!r} is not a number (int, or a string like '0x1000')")


def _file_bytes(path: Path) -> bytes:
    if path.suffix == ".npy":
        return np.ascontiguousarray(np.load(path, allow_pickle=False)).tobytes()
    return path.read_bytes()


def _resolve(case_dir: Path, name: str, what: str) -> Path:
    path = SDK_DIR / name[4:] if name.startswith("sdk:") else case_dir / name
    if not path.is_file():
        raise CaseError(f"{what}: {path} does not exist")
    return path


def load_case(path: str | Path) -> Case:
    """Read and check ``path``/case.json; raise :class:`CaseError` naming the bad field."""
    case_dir = Path(path).resolve()
    spec_path = case_dir / "case.json"
    if not spec_path.is_file():
        raise CaseError(f"{case_dir}: no case.json")
    try:
        spec = json.loads(spec_path.read_text())
    except json.JSONDecodeError as error:
        raise CaseError(f"{spec_path}: {error}") from None
    where = f"{case_dir.name}/case.json"
    arch = spec.get("arch", "blackhole")
    try:
        l1_size = get_arch(arch).l1_size
    except (KeyError, ValueError) as error:
        raise CaseError(f"{where}: arch: {error}") from None

    def in_l1(region: Region, field: str) -> Region:
        if not (0 <= region.address < l1_size and region.address + region.size <= l1_size):
            raise CaseError(
                f"{where}: {field}: 0x{region.address:x}..0x{region.address + region.size:x} is outside "
                f"{arch}'s L1 (0x{l1_size:x} bytes)"
            )
        return region

    programs: dict[str, Program] = {}
    for core, entry in spec.get("programs", {}).items():
        if core not in CORE_NAMES:
            raise CaseError(f"{where}: programs: unknown core {core!r} (cores: {', '.join(CORE_NAMES)})")
        if "elf" in entry:
            programs[core] = Program(core, elf=_resolve(case_dir, entry["elf"], f"{where}: {core}.elf"))
        else:
            sources = tuple(
                _resolve(case_dir, s, f"{where}: {core}.sources") for s in entry.get("sources", [])
            )
            if not sources:
                raise CaseError(f"{where}: programs.{core} needs sources or elf")
            programs[core] = Program(core, sources=sources, defines=dict(entry.get("defines", {})))
    if not programs:
        raise CaseError(f"{where}: no programs")
    release = tuple(spec.get("release", ["brisc"] if "brisc" in programs else list(programs)))
    for core in release:
        if core not in programs:
            raise CaseError(f"{where}: release names {core!r}, which has no program")
    inputs = []
    for i, entry in enumerate(spec.get("inputs", [])):
        file = _resolve(case_dir, entry["file"], f"{where}: inputs[{i}]")
        size = len(_file_bytes(file))
        address = _number(entry["address"], f"{where}: inputs[{i}].address")
        inputs.append(in_l1(Region(file.name, address, size, file=file), f"inputs[{i}]"))
    outputs = []
    for i, entry in enumerate(spec.get("outputs", [])):
        fmt = entry.get("format", "u8")
        if fmt not in FORMATS:
            raise CaseError(f"{where}: outputs[{i}].format {fmt!r} (formats: {', '.join(FORMATS)})")
        size = _number(entry["size"], f"{where}: outputs[{i}].size")
        if size <= 0 or size % _width(fmt):
            raise CaseError(f"{where}: outputs[{i}].size {size} is not a positive multiple of {fmt}'s width")
        reference = entry.get("reference")
        ref_path = _resolve(case_dir, reference, f"{where}: outputs[{i}].reference") if reference else None
        if ref_path is not None and len(_file_bytes(ref_path)) != size:
            raise CaseError(f"{where}: outputs[{i}].reference does not hold {size} bytes")
        address = _number(entry["address"], f"{where}: outputs[{i}].address")
        outputs.append(in_l1(Region(entry["name"], address, size, fmt, reference=ref_path), f"outputs[{i}]"))
    if len({r.name for r in outputs}) != len(outputs):
        raise CaseError(f"{where}: output names repeat")
    raw_verdict = spec.get("verdict", {})
    verdict = Verdict(
        raw_verdict.get("status", "agree"),
        tuple(raw_verdict.get("outputs", [])),
        raw_verdict.get("notes", ""),
    )
    if verdict.status not in VERDICTS:
        raise CaseError(f"{where}: verdict.status {verdict.status!r} (one of {', '.join(VERDICTS)})")
    tile = spec.get("tile", list(DEFAULT_TILE))
    return Case(
        name=case_dir.name,
        path=case_dir,
        description=spec.get("description", ""),
        arch=arch,
        tile=(int(tile[0]), int(tile[1])),
        programs=programs,
        release=release,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        max_cycles=_number(spec.get("max_cycles", 10_000_000), f"{where}: max_cycles"),
        verdict=verdict,
    )


def find_cases(root: str | Path) -> list[Path]:
    """The case directories under ``root`` (those holding a case.json), sorted by name."""
    return sorted(p.parent for p in Path(root).glob("*/case.json"))


def _width(fmt: str) -> int:
    return {"u8": 1, "u16": 2, "bf16": 2, "fp16": 2}.get(fmt, 4)


def protocol_defines() -> dict[str, object]:
    """The macros difftest_main.c needs."""
    return {
        "DIFFTEST_STATUS_BASE": f"0x{STATUS_BASE:X}u",
        "DIFFTEST_EXIT_FLAG": f"0x{EXIT_FLAG:X}u",
        "DIFFTEST_MAGIC": f"0x{MAGIC:X}u",
    }


def build_programs(case: Case, build_dir: Path | None = None) -> dict[str, Path]:
    """Every core's ELF: prebuilt ones as they are, sources compiled with the SDK (and the wrapper),
    cached under ``build_dir`` (default ``build/sdk`` in the current directory, as the SDK's)."""
    from tensixsim.sdk.build import DEFAULT_BUILD_DIR, build

    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    elfs = {}
    for core, program in case.programs.items():
        if program.elf is not None:
            elfs[core] = program.elf
            continue
        elfs[core] = build(
            core,
            [*program.sources, MAIN_WRAPPER],
            root / "traces" / case.name / f"{core}.elf",
            arch=case.arch,
            extra_cflags=["-Wl,--wrap=main"],
            defines={**protocol_defines(), **program.defines},
            build_dir=root,
        )
    return elfs


@dataclass
class Observation:
    """What one run of a case gave: output bytes, and per core its exit code and wall-clock span
    (difftest_main.c's record); ``error`` says why a run stopped early (then outputs may be missing)."""

    outputs: dict[str, bytes] = field(default_factory=dict)
    exit_codes: dict[str, int] = field(default_factory=dict)
    cycles: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def decode_status(case: Case, status: bytes) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """(exit codes, wall-clock spans, cores that never reported) from the status block's bytes."""
    arch = get_arch(case.arch)
    ids = {c.name: i for i, c in enumerate(arch.cores)}
    words = np.frombuffer(status, "<u4")
    codes, cycles, missing = {}, {}, []
    for core in case.programs:
        magic, code, start, end = (int(w) for w in words[4 * ids[core] : 4 * ids[core] + 4])
        if magic != MAGIC:
            missing.append(core)
            continue
        codes[core] = code - (1 << 32) if code & 0x80000000 else code
        cycles[core] = (end - start) & 0xFFFFFFFF
    return codes, cycles, missing


def status_size(case: Case) -> int:
    return STATUS_BYTES * len(get_arch(case.arch).cores)
