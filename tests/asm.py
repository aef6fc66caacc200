"""Assemble small RISC-V programs for the tests with the GNU toolchain (cached by content)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PREFIX = "riscv64-unknown-elf-"
MARCH = "rv32ima_zicsr_zba_zbb"
CACHE = Path(__file__).resolve().parent.parent / "build" / "test-asm"
# A raw program starts as the core comes out of reset, its L0 data cache on (Blackhole's cfg0
# DisLowCash clear). A poll of L1 through the cache is never parked, and sees another core's store
# only once a flush has emptied the cache (it is not coherent: docs/timing.md); a program standing
# in for a firmware-launched kernel turns it off first, as tt-metal's firmware does.
L0_OFF = "csrsi 0x7c0, 8\n"


def _tool(name: str) -> str:
    path = shutil.which(PREFIX + name)
    if path is None:
        raise RuntimeError(f"{PREFIX}{name} missing: run `make test` (installs gcc-riscv64-unknown-elf)")
    return path


def _part(path: Path) -> Path:
    """Where this process builds ``path`` before renaming it into place: parallel test workers that
    build the same cached file never see it half written, nor missing while another replaces it."""
    return path.with_name(f"{path.name}.{os.getpid()}.part")


def link(
    source: str, *, text: int = 0, march: str = MARCH, abi: str = "ilp32", extra: tuple[str, ...] = ()
) -> Path:
    """Assemble ``source`` and link it with .text at ``text``; returns the ELF path."""
    key = hashlib.sha256(f"{source}|{text}|{march}|{abi}|{extra}".encode()).hexdigest()[:20]
    elf = CACHE / f"{key}.elf"
    if elf.exists():
        return elf
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, out = Path(tmp, "a.s"), Path(tmp, "a.o"), Path(tmp, "a.elf")
        src.write_text(".option norvc\n.text\n.globl _start\n_start:\n" + source + "\n")
        subprocess.run([_tool("as"), f"-march={march}", f"-mabi={abi}", "-o", obj, src], check=True)
        subprocess.run(
            [_tool("ld"), "-m", "elf32lriscv", f"-Ttext=0x{text:x}", "-e", "_start", *extra, "-o", out, obj],
            check=True,
        )
        part = _part(elf)
        shutil.move(out, part)
        os.replace(part, elf)
    return elf


def assemble(source: str, *, base: int = 0, march: str = MARCH) -> bytes:
    """Machine code of ``source`` placed at ``base`` (raw bytes of .text)."""
    elf = link(source, text=base, march=march)
    binary = elf.with_suffix(".bin")
    if not binary.exists():
        part = _part(binary)
        subprocess.run([_tool("objcopy"), "-O", "binary", "-j", ".text", elf, part], check=True)
        os.replace(part, binary)
    return binary.read_bytes()
