"""Build kernels for the tt-metal firmware with the SDK's toolchain.

A kernel is linked at the L1 address the launch puts it (position-dependent code), with ``_start``
(section ``.start``) first, and with the firmware globals it uses (``rta_l1_base``,
``dram_bank_to_noc_xy``, ...) resolved to their addresses in the firmware ELF of the same core, as
tt-metal links kernels against their firmware. Kernels have no writable static data: everything
must live on the firmware's stack or in L1 buffers named by runtime arguments.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from tensixsim.arch import get_arch
from tensixsim.errors import InvalidProgram
from tensixsim.metal.firmware import LoadedFirmware
from tensixsim.sdk.build import BuildError, arch_flags, find_toolchain

FIRMWARE_SYMBOLS = (
    "rta_l1_base",
    "crta_l1_base",
    "dram_bank_to_noc_xy",
    "bank_to_dram_offset",
    "sem_l1_base",
)
CFLAGS = ("-O2", "-g", "-std=gnu11", "-Wall", "-ffreestanding", "-fno-builtin", "-fno-pic", "-mno-relax")


def link_script(address: int) -> str:
    return (
        "ENTRY(_start)\nSECTIONS {\n"
        f"  . = 0x{address:x};\n"
        "  .text : { KEEP(*(.start)) *(.text*) *(.rodata*) *(.srodata*) }\n"
        "  .data : { *(.data*) *(.sdata*) *(.bss*) *(.sbss*) *(COMMON) }\n"
        "  /DISCARD/ : { *(.comment) *(.riscv.attributes) }\n}\n"
    )


def build_kernel(
    source: Path, core: str, loaded: LoadedFirmware, address: int, out_dir: Path, defines: dict | None = None
) -> Path:
    """Compile and link ``source`` for ``core`` at ``address``; returns the ELF (cached by inputs)."""
    tools = find_toolchain()
    symbols = loaded.images[core].symbols
    defsyms = [f"-Wl,--defsym={name}=0x{symbols[name]:x}" for name in FIRMWARE_SYMBOLS if name in symbols]
    debug = loaded.firmware.debug(core)
    banks = debug.array_length("dram_bank_to_noc_xy") // 2
    flags = [*arch_flags(get_arch("blackhole")), *CFLAGS, f"-DNUM_DRAM_BANKS={banks}"]
    flags += [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    script = link_script(address)
    key = hashlib.sha256(
        "\0".join([source.read_text(), core, script, *flags, *defsyms, "nmagic"]).encode()
    ).hexdigest()[:20]
    out_dir.mkdir(parents=True, exist_ok=True)
    elf = out_dir / f"{source.stem}-{core}-{key}.elf"
    if elf.is_file():
        return elf
    (out_dir / f"{key}.ld").write_text(script)
    command = [
        str(tools.gcc), *flags, "-nostdlib", "-static", "-Wl,--no-relax", "-Wl,--build-id=none", "-Wl,-n",
        "-T", str(out_dir / f"{key}.ld"), *defsyms, "-o", str(elf), str(source), str(tools.libgcc),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"building {source.name} for {core} failed:\n{done.stderr}")
    if not elf.is_file():
        raise InvalidProgram(f"{elf}: the linker wrote nothing")
    return elf
