"""Compile bare-metal C/assembly programs for one core of a Tensix tile.

``build("trisc1", [Path("k.c")], Path("k.elf"))`` compiles the sources together with the SDK's
``crt0.S`` and ``runtime.c`` against a linker script rendered for that core (see
:mod:`tensixsim.sdk.gen_linker_scripts`) and writes a statically linked ELF. Results are cached by a
hash of everything that goes into them (the headers as the compiler lists the ones included, through
every ``-I``), so repeated test runs do not recompile and a changed header always does. The SDK's
``include/`` and the example kernels' folder (``kernels.h``) are on the include path.

Toolchain facts that shape the flags (Debian's GCC 12 ``riscv64-unknown-elf-gcc``):

* The cores have no compressed (C) instructions: ``-march`` never contains ``c``.
* GCC 12 does not know ``zaamo`` (the AMOs without LR/SC that Blackhole has), so we ask for the
  whole ``a`` extension. Plain C never produces LR/SC; ``__atomic_compare_exchange``, ``__sync_*``
  CAS and sub-word atomics do, and would not run on the hardware: do not use them.
* With a rv32 ``-march`` that has no multilib (everything past rv32im), GCC 12 silently hands out
  the rv64 libgcc, so we link the rv32im/ilp32 libgcc explicitly; it holds no C instructions.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensixsim.arch import Arch, get_arch
from tensixsim.sdk.layout import core_layout

SDK_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = SDK_DIR / "include"
# The example kernels' own header (kernels.h), which the docs tell new kernels to include.
KERNELS_INCLUDE_DIR = SDK_DIR / "examples" / "kernels"
CRT0 = SDK_DIR / "crt0.S"
RUNTIME = SDK_DIR / "runtime.c"

# Override to use another toolchain, e.g. TENSIXSIM_RISCV_PREFIX=riscv32-unknown-elf-
PREFIX_ENV = "TENSIXSIM_RISCV_PREFIX"
DEFAULT_PREFIX = "riscv64-unknown-elf-"
DEFAULT_BUILD_DIR = Path("build") / "sdk"

# -O2 for code like a real kernel's; -fno-builtin and -ffreestanding because there is no libc;
# -fno-tree-loop-distribute-patterns so loops stay loops instead of becoming memset/memcpy calls
# (runtime.c provides those, but byte-at-a-time); sections + --gc-sections keep the 16 KiB windows
# roomy; -g costs nothing at run time and lets traces name source lines.
CFLAGS: tuple[str, ...] = (
    "-O2",
    "-g",
    "-std=gnu11",
    "-Wall",
    "-ffreestanding",
    "-fno-builtin",
    "-fno-tree-loop-distribute-patterns",
    "-ffunction-sections",
    "-fdata-sections",
    "-fno-asynchronous-unwind-tables",
    "-fno-pic",
)
LDFLAGS: tuple[str, ...] = ("-nostdlib", "-static", "-Wl,--gc-sections", "-Wl,--build-id=none")

# Bump when the build recipe changes in a way the hashed inputs do not show.
_RECIPE_VERSION = "2"

# Extensions GCC 12 knows by name and that the hardware has; zmmul is implied by m.
_GCC12_Z_EXTENSIONS = ("zicsr", "zba", "zbb")


class ToolchainMissing(RuntimeError):
    """The RISC-V cross compiler is not installed."""


class BuildError(RuntimeError):
    """The compiler or linker rejected a program."""


@dataclass(frozen=True)
class Toolchain:
    """Paths of the cross tools."""

    gcc: Path
    objdump: Path
    readelf: Path

    @functools.cached_property
    def libgcc(self) -> Path:
        """The rv32im/ilp32 libgcc (see the module docstring for why not the -march one)."""
        out = subprocess.run(
            [str(self.gcc), "-march=rv32im", "-mabi=ilp32", "-print-libgcc-file-name"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        path = Path(out)
        if not path.is_file():
            raise ToolchainMissing(f"{self.gcc} has no rv32im/ilp32 libgcc (asked: got {out!r})")
        return path


def find_toolchain() -> Toolchain:
    """Locate the cross compiler, objdump and readelf, or raise :class:`ToolchainMissing`."""
    prefix = os.environ.get(PREFIX_ENV, DEFAULT_PREFIX)
    tools = {}
    for tool in ("gcc", "objdump", "readelf"):
        found = shutil.which(prefix + tool)
        if found is None:
            raise ToolchainMissing(
                f"{prefix}{tool} not found on PATH: install it with "
                "`apt-get install gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf` "
                f"(`make test` installs it), or point {PREFIX_ENV} at another RISC-V toolchain"
            )
        tools[tool] = Path(found)
    return Toolchain(**tools)


def march_for(arch: Arch) -> str:
    """GCC's -march for ``arch``, derived from the ISA string in its ELF attributes.

    >>> march_for(get_arch("blackhole"))
    'rv32ima_zicsr_zba_zbb'
    >>> march_for(get_arch("wormhole"))
    'rv32im_xtttensixwh1p0'
    """
    names = [re.sub(r"\d+p\d+$", "", part) for part in arch.isa_string_prefix.split("_")]
    base, rest = names[0], names[1:]
    if not base.startswith("rv32"):
        raise ValueError(f"{arch.name}: unexpected ISA string {arch.isa_string_prefix!r}")
    singles = "".join(n for n in rest if len(n) == 1)
    if "zaamo" in rest and "a" not in singles:
        singles += "a"  # GCC 12 spells zaamo as a (see the module docstring)
    if "c" in singles:
        raise ValueError(f"{arch.name}: the SDK never enables compressed instructions")
    zs = ["zicsr"] if arch.has_csrs else []
    zs += [n for n in rest if n in _GCC12_Z_EXTENSIONS and n != "zicsr"]
    if _needs_chip_tag(arch):
        # Its base ISA is a subset of another chip's, so nothing in it says which chip a program is
        # for: name Tenstorrent's Tensix extension for the chip, as Tenstorrent's toolchain does in
        # compute code (GCC records it in the ELF's arch attribute and emits nothing for it).
        zs.append(f"{arch.tensix_isa_extension}1p0")
    return "_".join([base + singles, *zs])


def _needs_chip_tag(arch: Arch) -> bool:
    from tensixsim.arch import ARCHES
    from tensixsim.loader.elf import riscv_extensions

    own = riscv_extensions(arch.isa_string_prefix)
    others = (a for a in ARCHES.values() if a.name != arch.name)
    return any(own <= riscv_extensions(other.isa_string_prefix) for other in others)


def arch_flags(arch: Arch) -> list[str]:
    """Target flags for ``arch``."""
    return [f"-march={march_for(arch)}", "-mabi=ilp32"]


def core_defines(arch: Arch, core: str) -> dict[str, str]:
    """The macros every program sees: which core and which architecture it is built for."""
    layout = core_layout(arch, core)
    return {
        "SDK_CORE_ID": str(layout.core_id),
        f"SDK_CORE_{core.upper()}": "1",
        f"SDK_ARCH_{arch.name.upper()}": "1",
    }


def build(
    core: str,
    sources: Sequence[Path],
    out: Path,
    *,
    arch: str = "blackhole",
    extra_cflags: Iterable[str] = (),
    defines: Mapping[str, object] | None = None,
    build_dir: Path | None = None,
) -> Path:
    """Compile ``sources`` (C or assembly) for ``core`` into the ELF ``out``; return ``out``.

    ``defines`` become ``-DNAME=value`` (``None`` gives a bare ``-DNAME``). The linked program is
    cached under ``build_dir`` (default ``build/sdk`` in the current directory) by a hash of the
    sources, the headers they can see, the SDK files, the flags and the compiler, and copied to
    ``out``.
    """
    facts = get_arch(arch)
    core_layout(facts, core)  # rejects an unknown core before anything runs
    tools = find_toolchain()
    sources = [Path(s).resolve() for s in sources]
    if not sources:
        raise ValueError("build() needs at least one source file")
    for src in sources:
        if not src.is_file():
            raise FileNotFoundError(f"source {src} does not exist")
    all_defines: dict[str, object] = {**core_defines(facts, core), **(defines or {})}
    cflags = [*arch_flags(facts), *CFLAGS, *extra_cflags, f"-I{INCLUDE_DIR}", f"-I{KERNELS_INCLUDE_DIR}"]
    cflags += [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(all_defines.items())]
    script = render_linker_script(facts, core)

    key = _cache_key(tools, cflags, script, sources)
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    # Named for people browsing the cache; only the keys decide a hit. The headers a build includes
    # (the compiler's own dependency list, through every -I) key a second level: a program is
    # rebuilt when any of them changes.
    entry = root / "cache" / f"{core}-{sources[0].stem}-{key[:20]}"
    cached_elf = _cached(entry)
    if cached_elf is None:
        cached_elf = _compile(tools, cflags, script, sources, root, entry)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.resolve() != cached_elf.resolve():
        # Copied under a private name and renamed into place: another process building the same
        # program to the same path (a process pool's workers) may be loading ``out`` right now.
        part = out.with_name(f".{out.name}.{os.getpid()}.part")
        shutil.copyfile(cached_elf, part)
        os.replace(part, out)
    return out


def render_linker_script(arch: Arch, core: str) -> str:
    """The linker script ``build`` links ``core``'s programs with."""
    # Imported here so that `python -m tensixsim.sdk.gen_linker_scripts` does not find its own
    # module already imported through the package's __init__.
    from tensixsim.sdk.gen_linker_scripts import render

    return render(arch, core)


_DEPS = "headers.txt"  # in a cache entry: the headers its builds included, one path per line


def _headers_key(headers: Sequence[str]) -> str:
    h = hashlib.sha256()
    for name in headers:
        path = Path(name)
        data = path.read_bytes() if path.is_file() else b"(missing)"
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:20]


def _cached(entry: Path) -> Path | None:
    """The cached program of ``entry`` built with today's headers, or None."""
    try:
        headers = (entry / _DEPS).read_text().splitlines()
    except OSError:
        return None
    elf = entry / _headers_key(headers) / "program.elf"
    return elf if elf.is_file() else None


def _included_headers(tools: Toolchain, cflags: list[str], sources: list[Path]) -> list[str]:
    """The headers the sources include (``gcc -MM``: through every -I, not the compiler's own)."""
    cmd = [str(tools.gcc), *cflags, "-MM", *map(str, sources)]
    result = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if result.returncode != 0:
        names = ", ".join(s.name for s in sources)
        raise BuildError(f"building {names} failed (listing its headers):\n{result.stderr}")
    words = result.stdout.replace("\\\n", " ").split()
    own = {str(s) for s in sources}
    return sorted({str(Path(w).resolve()) for w in words if not w.endswith(":") and w not in own})


def _cache_key(tools: Toolchain, cflags: list[str], script: str, sources: list[Path]) -> str:
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(f"{label}\0{len(data)}\0".encode())
        h.update(data)

    add("recipe", _RECIPE_VERSION.encode())
    st = tools.gcc.resolve().stat()
    add("gcc", f"{tools.gcc.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode())
    add("flags", "\0".join([*cflags, *LDFLAGS]).encode())
    add("script", script.encode())
    for path in [CRT0, RUNTIME, *sources]:  # (the headers key the entry's second level)
        add(str(path), path.read_bytes())
    return h.hexdigest()


def _compile(
    tools: Toolchain,
    cflags: list[str],
    script: str,
    sources: list[Path],
    root: Path,
    entry: Path,
) -> Path:
    """Build into ``entry``'s level for the headers the sources include now; returns the program."""
    headers = _included_headers(tools, cflags, sources)
    final_dir = entry / _headers_key(headers)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    # Build in a private directory and rename it into place, so parallel test runs never see a
    # half-written ELF; the loser of a race throws its copy away.
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final_dir.parent))
    try:
        (tmp / "link.ld").write_text(script)
        cmd = [
            str(tools.gcc),
            *cflags,
            *LDFLAGS,
            "-T",
            str(tmp / "link.ld"),
            f"-Wl,-Map={tmp / 'program.map'}",
            "-o",
            str(tmp / "program.elf"),
            str(CRT0),  # first, so _start's section leads .text even without KEEP ordering
            *map(str, sources),
            str(RUNTIME),
            str(tools.libgcc),
        ]
        (tmp / "command.txt").write_text(" ".join(cmd) + "\n")
        result = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(
                f"building {', '.join(s.name for s in sources)} failed "
                f"(exit {result.returncode}):\n{result.stderr}\ncommand: {' '.join(cmd)}"
            )
        try:
            tmp.rename(final_dir)
        except OSError:
            if not (final_dir / "program.elf").is_file():
                raise
        deps = entry / f".{_DEPS}.{os.getpid()}"
        deps.write_text("".join(f"{h}\n" for h in headers))
        deps.replace(entry / _DEPS)  # atomically: a parallel build reads the old list or this one
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final_dir / "program.elf"
