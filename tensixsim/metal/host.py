"""One slow-dispatch launch from files: what ``tensixsim metal`` does.

Find the firmware set (a ``pre-compiled`` folder of several builds, or one build's folder holding
``brisc/brisc.elf`` ...), load and boot it on a fresh tile, write the input files into interleaved DRAM
buffers, launch the kernels (reader on NCRISC, the three compute kernels on TRISC0..2, writer on
BRISC, as tt-metal assigns them) with the given runtime arguments and circular buffers, and read the
output buffers back into files.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tensixsim.arch import CORE_NAMES
from tensixsim.dram import InterleavedBuffer
from tensixsim.errors import InvalidProgram, Unimplemented
from tensixsim.metal.firmware import (
    FirmwareSet,
    boot,
    enable_firmware_prints,
    find_firmware_set,
    load_firmware,
)
from tensixsim.metal.launch import CircularBuffer, Program, launch_program
from tensixsim.observe.dprint import PrintLine
from tensixsim.observe.trace import check_writable
from tensixsim.tile import Tile


@dataclass(frozen=True)
class DramFile:
    """A host file and the interleaved DRAM buffer it fills or is read from."""

    path: Path
    base: int
    size: int | None = None  # bytes to read back (outputs); inputs take the file's size


@dataclass(frozen=True)
class LaunchReport:
    firmware: Path
    boot_cycles: int
    launch_cycles: int
    wall_seconds: float


def firmware_set(directory: Path, arch: str) -> FirmwareSet:
    """A build folder (holding every core's ELF) as it is, or the first ``arch`` build under it."""
    directory = Path(directory)
    for nested in (True, False):  # <core>/<core>.elf as tt-metal's build leaves them, or <core>.elf
        if (directory / ("brisc/brisc.elf" if nested else "brisc.elf")).is_file():
            elfs = {c: directory / (f"{c}/{c}.elf" if nested else f"{c}.elf") for c in CORE_NAMES}
            missing = [str(p) for p in elfs.values() if not p.is_file()]
            if missing:
                raise InvalidProgram(f"{directory}: missing {', '.join(missing)}")
            return FirmwareSet(directory, elfs)
    if not directory.is_dir():
        raise InvalidProgram(f"{directory}: no such firmware folder")
    return find_firmware_set(directory, arch)


def parse_cb(text: str) -> CircularBuffer:
    """``INDEX:ADDRESS:SIZE:PAGES`` (numbers in any base Python reads, e.g. 0x100000)."""
    parts = text.split(":")
    if len(parts) != 4:
        raise ValueError(f"circular buffer {text!r}: expected INDEX:ADDRESS:SIZE:PAGES")
    index, address, size, pages = (int(p, 0) for p in parts)
    if pages <= 0 or size % pages:
        raise ValueError(f"circular buffer {text!r}: size must be a positive multiple of the page count")
    return CircularBuffer(index, address, size, pages)


def parse_dram_file(text: str, *, output: bool) -> DramFile:
    """``FILE@ADDRESS`` (inputs) or ``FILE@ADDRESS:BYTES`` (outputs)."""
    path, _, where = text.rpartition("@")
    if not path or not where:
        raise ValueError(f"{text!r}: expected FILE@ADDRESS{':BYTES' if output else ''}")
    if output:
        base, _, size = where.partition(":")
        if not size:
            raise ValueError(f"{text!r}: an output needs its size, FILE@ADDRESS:BYTES")
        return DramFile(Path(path), int(base, 0), int(size, 0))
    return DramFile(Path(path), int(where, 0))


def run_launch(
    firmware_dir: Path,
    kernels: dict[str, Path],
    *,
    args: list[int],
    circular_buffers: list[CircularBuffer],
    core_args: dict[str, list[int]] | None = None,
    inputs: list[DramFile] = (),
    outputs: list[DramFile] = (),
    page_size: int = 2048,
    arch: str = "blackhole",
    max_cycles: int = 50_000_000,
    progress: TextIO | None = None,
    trace: str | Path | None = None,
    prints: Callable[[PrintLine], None] | None = None,
) -> LaunchReport:
    """Boot, launch ``kernels`` (core -> ELF) once, save the outputs. Each kernel gets its
    ``core_args`` entry as runtime arguments, or else ``args``. ``progress``: see :meth:`Tile.run`.
    ``trace``: a Perfetto trace of the launch (not the boot) is written to this file. ``prints``:
    read the kernels' prints (the firmware's print buffers, started after the boot as tt-metal's
    host attaches its print server to a running device) and pass each line to it."""
    start = time.perf_counter()
    if trace is not None:
        check_writable(trace)  # before the boot, not after it
    firmware = firmware_set(firmware_dir, arch)
    tile = Tile(arch)
    tile.progress = progress
    loaded = load_firmware(tile, firmware)
    booted = boot(tile, loaded)
    if prints is not None:
        enable_firmware_prints(tile, loaded, prints)
    banks = firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2

    def buffer(spec: DramFile, size: int) -> InterleavedBuffer:
        if size % page_size:
            raise InvalidProgram(f"{spec.path}: {size} bytes is not a whole number of {page_size}-byte pages")
        return InterleavedBuffer(spec.base, page_size, size // page_size, banks, tile.arch.noc.dram_alignment)

    if tile.noc is None and (inputs or outputs):
        raise Unimplemented(f"{arch}: DRAM buffers need NoC traffic, not modelled on {arch} yet")
    for spec in inputs:
        data = spec.path.read_bytes()
        buffer(spec, len(data)).write(tile.noc.dram, data)
    program = Program(
        kernels=dict(kernels),
        runtime_args={core: list((core_args or {}).get(core, args)) for core in kernels},
        circular_buffers=list(circular_buffers),
    )
    state = launch_program(tile, loaded, program, max_cycles=max_cycles, trace=trace)
    for spec in outputs:
        spec.path.write_bytes(buffer(spec, spec.size or 0).read(tile.noc.dram))
    return LaunchReport(
        firmware.path, booted.cycles, state.cycles - booted.cycles, time.perf_counter() - start
    )
