"""Builds the package's C parts on first use and caches them per source hash.

Two libraries: ``riscv/native.c`` (the baby cores' Unicorn hooks) and ``tensix/native/*.c`` (the
coprocessor engine). They are compiled with the system C compiler the first time they are needed
(ctypes loads them; no Python headers, Unicorn headers or link step are involved) into
``$TENSIXSIM_CACHE`` (default ``~/.cache/tensixsim``), keyed by a hash of their sources, so an editable
checkout rebuilds exactly when a source changes. Without a compiler the pure-Python paths run; the
user is told so once, on stderr.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

_warned = False


def cache_dir() -> Path:
    root = os.environ.get("TENSIXSIM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tensixsim"
    )
    return Path(root)


def pure_python_requested() -> bool:
    """``TENSIXSIM_PURE_PYTHON`` set: use the Python reference paths only."""
    return bool(os.environ.get("TENSIXSIM_PURE_PYTHON"))


def warn_pure_python(reason: str) -> None:
    """Say once per process that the slow path runs, and why."""
    global _warned
    if _warned:
        return
    _warned = True
    print(
        f"tensixsim: {reason}; running the pure-Python engines, about 100x slower "
        "(install a C compiler, e.g. gcc, to get the native ones)",
        file=sys.stderr,
    )


def build_library(
    name: str, sources: Sequence[Path], tag: str = "", defines: Sequence[str] = ()
) -> ctypes.CDLL | None:
    """Compile ``sources`` into one shared library (cached) and load it; None without a compiler.
    ``defines`` are preprocessor macros (tests build deliberately broken variants with them)."""
    target = build_shared(name, sources, tag, defines)
    if target is None:
        return None
    try:
        return ctypes.CDLL(str(target))
    except OSError as error:
        warn_pure_python(f"loading {name} failed: {error}")
        return None


# -O3: its vectorising of the 32-lane loops makes the vector unit about 10% faster than -O2
# (benchmarks/sfpu.py). No option that changes floating-point results (no -ffast-math): the lanes
# are bit-exact models. The options are part of the cache key, so a change rebuilds.
_OPT = ("-O3",)


def build_shared(
    name: str,
    sources: Sequence[Path],
    tag: str = "",
    defines: Sequence[str] = (),
    link: Sequence[str] = (),
    warn: bool = True,
) -> Path | None:
    """Compile ``sources`` into one shared library in the cache (once per sources, defines and link
    flags); its path, or None when no compiler could build it (said on stderr when ``warn``)."""
    digest = hashlib.sha256((tag + " ".join([*_OPT, *defines, *link])).encode())
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    for header in sorted({h for s in sources for h in s.parent.glob("*.h")}):
        digest.update(header.read_bytes())
    target = cache_dir() / f"{name}-{digest.hexdigest()[:16]}.so"
    if not target.exists():
        compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if compiler is None:
            if warn:
                warn_pure_python("no C compiler found")
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        # Build to a private name and rename, so parallel workers never load a half-written file.
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
        os.close(fd)
        result = subprocess.run(
            [compiler, *_OPT, "-shared", "-fPIC", *(f"-D{d}" for d in defines), "-o", tmp]
            + [str(source) for source in sources]
            + list(link),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            os.unlink(tmp)
            if warn:
                warn_pure_python(f"building {name} failed:\n{result.stderr.strip()}")
            else:
                print(f"tensixsim: building {name} failed:\n{result.stderr.strip()}", file=sys.stderr)
            return None
        os.replace(tmp, target)
    return target
