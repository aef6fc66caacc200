"""Build kernels for the tt-metal firmware with the SDK's toolchain.

A kernel is linked at the L1 address the launch puts it (position-dependent code), with ``_start``
(section ``.start``) first, and with the firmware globals it uses (``rta_l1_base``,
``dram_bank_to_noc_xy``, ...) resolved to their addresses in the firmware ELF of the same core, as
tt-metal links kernels against their firmware. Kernels have no writable static data: everything
must live on the firmware's stack, in the firmware's globals (``cb_interface``) or in L1 buffers
named by runtime arguments.

Kernels see the SDK's headers (``tensixsim/sdk/include``) and these macros, taken from the firmware
of the core they are built for: ``NUM_DRAM_BANKS`` (data-movement cores), ``OPERAND_START_STREAM``
(the stream of circular buffer 0), ``NOC_INDEX``, the NoC tt-metal gives the core's kernel by
default (NoC 0 for BRISC, the writer; NoC 1 for NCRISC, the reader), and ``DPRINT_BUFFER``, the L1
address of the core's DPRINT buffer where the firmware has per-core ones (``metal_dprint.h``), or
the ``DEVICE_PRINT_*`` layout of its shared buffer where it has that (``metal_device_print.h``; the
link script keeps the ``.device_print_strings*`` sections in the ELF, unloaded, where tt-metal's do).
``metal.h`` declares the firmware's ``LocalCBInterface`` by hand; :func:`check_cb_layout` compares it
with the firmware's DWARF before anything is built.

Wormhole's NCRISC runs its kernel from its instruction RAM: its firmware has the mover copy the
kernel there and BRISC resets NCRISC at the RAM's first word. Such a kernel's code is linked for the
instruction RAM and loaded at its L1 slot (the copy's source), with ``sdk/metal_ncrisc_iram.S`` first,
which takes back the state the firmware parked in ``wh_iram_trampoline``; its read-only data stay in L1
after the code (the instruction RAM serves instruction fetches only).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from tensixsim.errors import InvalidProgram
from tensixsim.metal.firmware import LoadedFirmware, print_buffers, processor_index
from tensixsim.observe.device_print import INFO_SECTION, STRINGS_SECTION, firmware_buffer
from tensixsim.sdk.build import BuildError, arch_flags, find_toolchain

FIRMWARE_SYMBOLS = (
    "rta_l1_base",
    "crta_l1_base",
    "dram_bank_to_noc_xy",
    "bank_to_dram_offset",
    "sem_l1_base",
    "cb_interface",
    "my_x",
    "my_y",
)
# metal.h's metal_cb_t: LocalCBInterface member -> (byte offset, size).
CB_LAYOUT = {
    "fifo_size": (0, 4),
    "fifo_limit": (4, 4),
    "fifo_page_size": (8, 4),
    "fifo_num_pages": (12, 4),
    "fifo_rd_ptr": (16, 4),
    "fifo_wr_ptr": (20, 4),
    "tiles_acked": (24, 2),
    "tiles_received": (26, 2),
    "fifo_wr_tile_ptr": (28, 4),
}
CB_SIZE = 32
STRINGS_ADDRESS, INFO_ADDRESS = 0x6400000, 0x6500000  # tt-metal's kernel_*.ld (ttnn 0.81.1)
DEFAULT_NOC = {"brisc": 0, "ncrisc": 1}
INCLUDE = Path(__file__).resolve().parent.parent / "sdk" / "include"
IRAM_ENTRY = INCLUDE.parent / "metal_ncrisc_iram.S"
# Where Wormhole's NCRISC firmware leaves its stack pointer before BRISC resets NCRISC into the
# instruction RAM (wh_iram_trampoline's `sw sp, 20(zero)` in both ttnn generations; tt-metal's
# MEM_NCRISC_HALT_STACK_MAILBOX_ADDRESS).
NCRISC_HALT_STACK = 20
IRAM_TRAMPOLINE = "wh_iram_trampoline"
CFLAGS = ("-O2", "-g", "-std=gnu11", "-Wall", "-ffreestanding", "-fno-builtin", "-fno-pic", "-mno-relax")


def link_script(address: int) -> str:
    return (
        "ENTRY(_start)\nSECTIONS {\n"
        f"  . = 0x{address:x};\n"
        "  .text : { KEEP(*(.start)) *(.text*) *(.rodata*) *(.srodata*) }\n"
        "  .data : { *(.data*) *(.sdata*) *(.bss*) *(.sbss*) *(COMMON) }\n"
        # DEVICE_PRINT's strings: kept in the ELF for the host, not loaded (tt-metal's kernel
        # linker scripts place them so).
        f"  {STRINGS_SECTION} 0x{STRINGS_ADDRESS:x} (INFO) : {{ KEEP(*({STRINGS_SECTION})) }}\n"
        f"  {INFO_SECTION} 0x{INFO_ADDRESS:x} (INFO) : {{\n"
        f"    __device_print_strings_info_start = .; KEEP(*({INFO_SECTION})) }}\n"
        "  /DISCARD/ : { *(.comment) *(.riscv.attributes) }\n}\n"
    )


def iram_link_script(iram: int, address: int) -> str:
    """Code for the instruction RAM at ``iram``, loaded at ``address`` in L1; data after it in L1."""
    return (
        "ENTRY(__ncrisc_iram_entry)\nSECTIONS {\n"
        f"  . = 0x{iram:x};\n"
        f"  .text : AT(0x{address:x}) {{ KEEP(*(.iram_entry)) KEEP(*(.start)) *(.text*) }}\n"
        f"  .rodata ALIGN(0x{address:x} + SIZEOF(.text), 16) : {{ *(.rodata*) *(.srodata*) }}\n"
        "  .data : { *(.data*) *(.sdata*) *(.bss*) *(.sbss*) *(COMMON) }\n"
        f"  {STRINGS_SECTION} 0x{STRINGS_ADDRESS:x} (INFO) : {{ KEEP(*({STRINGS_SECTION})) }}\n"
        f"  {INFO_SECTION} 0x{INFO_ADDRESS:x} (INFO) : {{\n"
        f"    __device_print_strings_info_start = .; KEEP(*({INFO_SECTION})) }}\n"
        "  /DISCARD/ : { *(.comment) *(.riscv.attributes) }\n}\n"
    )


def device_print_macros(loaded: LoadedFirmware, core: str) -> dict[str, str]:
    """What ``metal_device_print.h`` needs to know of the firmware: the shared buffer's layout, the
    core's processor index, where the launch message holds its kernel id (all from the DWARF)."""
    debug = loaded.firmware.debug("brisc")
    base = loaded.mailbox.base
    buffer = firmware_buffer(debug, base)
    index = processor_index(loaded.firmware, core)
    kernel_id = debug.field("launch_msg_t", f"kernel_config.watcher_kernel_ids[{index}]")
    if kernel_id.size != 2:
        raise InvalidProgram(f"watcher_kernel_ids entries of {kernel_id.size} bytes, not 2")
    values = {
        "DEVICE_PRINT_BUFFER": buffer.address,
        "DEVICE_PRINT_RISC_STATE": buffer.risc_state,
        "DEVICE_PRINT_LOCK": buffer.lock,
        "DEVICE_PRINT_DATA": buffer.data,
        "DEVICE_PRINT_DATA_SIZE": buffer.size,
        "DEVICE_PRINT_PROCESSORS": buffer.processors,
        "DEVICE_PRINT_PROCESSOR": index,
        "DEVICE_PRINT_LAUNCH_RD_PTR": base + debug.field("mailboxes_t", "launch_msg_rd_ptr").offset,
        "DEVICE_PRINT_LAUNCH0": base + debug.field("mailboxes_t", "launch[0]").offset,
        "DEVICE_PRINT_LAUNCH_SIZE": debug.size_of("launch_msg_t"),
        "DEVICE_PRINT_KERNEL_ID_OFFSET": kernel_id.offset,
    }
    return {name: f"{value}u" for name, value in values.items()}


def check_cb_layout(loaded: LoadedFirmware, core: str) -> None:
    """Refuse a firmware whose ``LocalCBInterface`` is not the one ``metal.h`` declares."""
    debug = loaded.firmware.debug(core)
    if debug.size_of("LocalCBInterface") != CB_SIZE:
        raise InvalidProgram(
            f"{core} firmware: LocalCBInterface is {debug.size_of('LocalCBInterface')} bytes"
        )
    for name, (offset, size) in CB_LAYOUT.items():
        where = debug.field("LocalCBInterface", name)
        if (where.offset, where.size) != (offset, size):
            raise InvalidProgram(
                f"{core} firmware: LocalCBInterface.{name} at {where.offset} ({where.size} bytes), "
                f"metal.h expects {offset} ({size} bytes)"
            )


def build_kernel(
    source: Path, core: str, loaded: LoadedFirmware, address: int, out_dir: Path, defines: dict | None = None
) -> Path:
    """Compile and link ``source`` for ``core`` at ``address``; returns the ELF (cached by inputs).
    A kernel for a core that runs from an instruction RAM (Wormhole's NCRISC) is linked for that RAM
    and loaded at ``address``."""
    tools = find_toolchain()
    symbols = loaded.images[core].symbols
    defsyms = [f"-Wl,--defsym={name}=0x{symbols[name]:x}" for name in FIRMWARE_SYMBOLS if name in symbols]
    debug = loaded.firmware.debug(core)
    macros = {}
    if debug.has_variable("cb_interface"):  # TRISC1's firmware sets up no circular buffers
        check_cb_layout(loaded, core)
        macros["OPERAND_START_STREAM"] = str(debug.constant("OPERAND_START_STREAM"))
    if debug.has_variable("dram_bank_to_noc_xy"):
        macros["NUM_DRAM_BANKS"] = str(debug.array_length("dram_bank_to_noc_xy") // 2)
    if core in DEFAULT_NOC:
        macros["NOC_INDEX"] = str(DEFAULT_NOC[core])
    if debug.has_field("mailboxes_t", "dprint_buf.data[0].aux.wpos"):  # per-core DPRINT buffers
        macros["DPRINT_BUFFER"] = f"0x{print_buffers(loaded)[core].address:x}u"
    if debug.has_field("mailboxes_t", "dprint_buf.buffer.aux.wpos"):  # the shared DEVICE_PRINT buffer
        macros.update(device_print_macros(loaded, core))
    macros.update({k: str(v) for k, v in (defines or {}).items()})
    arch = loaded.firmware.arch()  # the chip the firmware (and so the kernel) is for
    if arch.name != "blackhole":
        macros[f"SDK_ARCH_{arch.name.upper()}"] = "1"  # tensixsim.h: that chip's MMIO map
    iram = arch.core(core).iram
    sources = [source]
    if iram is None:
        script = link_script(address)
    else:
        if IRAM_TRAMPOLINE not in loaded.images[core].symbols:
            raise InvalidProgram(
                f"{core} firmware has no {IRAM_TRAMPOLINE}: where it leaves its state for a kernel in "
                "the instruction RAM is not known"
            )
        macros["METAL_FIRMWARE_GP"] = f"0x{loaded.images[core].symbols['__global_pointer$']:x}"
        macros["METAL_NCRISC_HALT_STACK"] = str(NCRISC_HALT_STACK)
        script = iram_link_script(iram[0], address)
        sources.insert(0, IRAM_ENTRY)
    flags = [*arch_flags(arch), *CFLAGS, f"-I{INCLUDE}", f"-I{source.parent}"]
    flags += [f"-D{k}={v}" for k, v in sorted(macros.items())]
    headers = sorted(source.parent.glob("*.h")) + sorted(INCLUDE.glob("*.h"))
    inputs = [*(s.read_text() for s in sources), *(h.read_text() for h in headers)]
    key = hashlib.sha256("\0".join([*inputs, core, script, *flags, *defsyms]).encode()).hexdigest()[:20]
    out_dir.mkdir(parents=True, exist_ok=True)
    elf = out_dir / f"{source.stem}-{core}-{key}.elf"
    if elf.is_file():
        return elf
    # Private names, then a rename: parallel builds of the same kernel never see half a file.
    with tempfile.TemporaryDirectory(prefix=".tmp-", dir=out_dir) as tmp:
        ld, built = Path(tmp) / f"{key}.ld", Path(tmp) / elf.name
        ld.write_text(script)
        command = [
            str(tools.gcc), *flags, "-nostdlib", "-static", "-Wl,--no-relax", "-Wl,--build-id=none",
            "-Wl,-n", "-T", str(ld), *defsyms, "-o", str(built), *map(str, sources), str(tools.libgcc),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"building {source.name} for {core} failed:\n{done.stderr}")
        if not built.is_file():
            raise InvalidProgram(f"{elf}: the linker wrote nothing")
        os.replace(built, elf)
    return elf
