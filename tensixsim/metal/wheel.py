"""Fetch tt-metal's pre-compiled firmware from the ``ttnn`` wheel on PyPI.

The wheel is downloaded with pip into a cache folder (never into the repository), and only the
Tensix-core firmware ELFs are unpacked from it: ``<cache>/<version>/pre-compiled/<hash>/<core>/<core>.elf``.
A marker file records a complete extraction, so an interrupted one is redone. ttnn wheels carry
pre-compiled firmware from 0.67.4 on; ``VERSION`` is the release tensixsim targets (the metal tests also
run the oldest, see ``docs/running-kernels.md``).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tensixsim.arch import CORE_NAMES
from tensixsim.errors import InvalidProgram

PACKAGE = "ttnn"
VERSION = "0.81.1"
# The wheel is pure data for us; these only select which build pip fetches.
PYTHON_VERSION = "3.12"
PLATFORM = "manylinux_2_34_x86_64"
_PRECOMPILED = "ttnn/tt_metal/pre-compiled/"
_DONE = ".complete"


def download_wheel(cache: Path, version: str = VERSION) -> Path:
    """The cached ``ttnn`` wheel, downloading it first if needed (raises when pip fails)."""
    cache.mkdir(parents=True, exist_ok=True)
    pattern = f"{PACKAGE}-{version}-*.whl"
    found = sorted(cache.glob(pattern))
    if found:
        return found[0]
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        PYTHON_VERSION,
        "--platform",
        PLATFORM,
        f"{PACKAGE}=={version}",
        "-d",
        str(cache),
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    found = sorted(cache.glob(pattern))
    if done.returncode != 0 or not found:
        raise RuntimeError(f"pip could not download {PACKAGE}=={version}:\n{done.stdout}\n{done.stderr}")
    return found[0]


def extract_firmware(wheel: Path, destination: Path) -> Path:
    """Unpack the wheel's Tensix-core firmware ELFs; returns the ``pre-compiled`` folder."""
    target = destination / "pre-compiled"
    if (destination / _DONE).is_file():
        return target
    if target.exists():
        shutil.rmtree(target)
    wanted = {f"{core}/{core}.elf" for core in CORE_NAMES}
    with zipfile.ZipFile(wheel) as archive:
        names = []
        for name in archive.namelist():
            if not name.startswith(_PRECOMPILED):
                continue
            relative = name[len(_PRECOMPILED) :]
            parts = relative.split("/", 1)
            if len(parts) == 2 and parts[1] in wanted:
                names.append((name, relative))
        if not names:  # ttnn wheels before 0.67.4 build firmware at run time and ship none
            raise InvalidProgram(f"{wheel}: no pre-compiled Tensix-core firmware in this wheel")
        for name, relative in names:
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(name))
    destination.mkdir(parents=True, exist_ok=True)
    (destination / _DONE).write_text(wheel.name + "\n")
    return target


def precompiled_firmware(cache: Path, version: str = VERSION) -> Path:
    """Download (once) and unpack (once) the firmware of ``ttnn==version``; returns ``pre-compiled``.
    Processes doing this at once (parallel test workers) take turns: the first does the work."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheel = download_wheel(cache, version)
        return extract_firmware(wheel, cache / version)
