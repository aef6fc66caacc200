"""The host's side of a tt-metal slow-dispatch launch: tables, runtime arguments, kernel images.

Host tables (written before boot, since the BRISC firmware copies them into its local RAM at start):

- At ``MEM_BANK_TO_NOC_SCRATCH`` (read from the firmware: the L1 address its ``main`` copies the bank
  tables from, which is the staging area past TRISC2's and NCRISC's images; 0x13080 in ttnn 0.81.1):
  ``dram_bank_to_noc_xy[NUM_NOCS][NUM_DRAM_BANKS]`` and ``l1_bank_to_noc_xy[NUM_NOCS][NUM_L1_BANKS]``
  (``uint16``, ``x | y << 6`` in the raw coordinates of each NoC), then ``bank_to_dram_offset`` and
  ``bank_to_l1_offset`` (``int32``), each table at the offset the sizes in the firmware's DWARF give.
  DRAM banks are ``NocFacts.dram_banks`` (Blackhole: bank ``i`` is group ``i``, offset 0; Wormhole:
  twelve banks, two per group 1 GiB apart, at tt-metal's preferred worker endpoints); every L1 bank
  is this tile (offset 0).
- 1 KiB further on (``MEM_BANK_TO_NOC_XY_SIZE + MEM_BANK_OFFSET_SIZE`` past the bank tables): the
  worker logical-to-virtual column and row maps (``uint8``). Logical column ``i`` is the ``i``-th
  Tensix column of NoC #0 (Blackhole: 1..7, 10..16), logical row ``j`` the ``j``-th Tensix row
  (Blackhole: ``2 + j``; Wormhole: 1..5, 7..11): "virtual" coordinates
  here are raw NoC #0 coordinates, since no NIU translates coordinates in the emulator.

Kernel configuration region (from ``kernel_config_base``, BRISC's staging area once booted): runtime
arguments of each processor (``RTA_WORDS`` words each, then the common ones), semaphores,
circular-buffer configuration (four words per CB index: address, size, page count, page size, as
``setup_local_cb_read_write_interfaces`` reads them), then kernel images. A kernel image is an ELF
linked at its final L1 address (see :mod:`tensixsim.metal.kernels`); it must lie wholly in the
kernel-text part of the region, below ``kernel_config_limit``.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tensixsim.arch import CORE_NAMES
from tensixsim.errors import CycleLimitExceeded, Deadlock, InvalidProgram
from tensixsim.loader.elf import ElfImage, read_elf
from tensixsim.metal.firmware import (
    _PROCESSOR_ENUM,
    LoadedFirmware,
    RunState,
    expect_go_wait,
    run_until_quiet,
)
from tensixsim.tile import Tile

RTA_WORDS = 64  # runtime-argument words per processor
SEMAPHORES = 16
CB_WORDS = 4
MEM_BANK_TO_NOC_XY_SIZE = 1024  # dev_mem_map.h
MEM_BANK_OFFSET_SIZE = 1024


class LaunchTimeout(Deadlock):
    """A launch whose kernels never let the firmware report done."""


class KernelOverrun(InvalidProgram):
    """A kernel image outside its slot in the kernel configuration region."""


@dataclass(frozen=True)
class Layout:
    """Where a launch puts things, as offsets from ``base`` (bytes)."""

    base: int
    rta: int = 0
    crta: int = RTA_WORDS * 4 * len(CORE_NAMES)
    semaphores: int = RTA_WORDS * 4 * (len(CORE_NAMES) + 1)
    cbs: int = RTA_WORDS * 4 * (len(CORE_NAMES) + 1) + 16 * SEMAPHORES
    text: int = 0x2000  # kernel images from base + text
    limit: int = 0x40000  # the region ends at base + limit

    @property
    def text_start(self) -> int:
        return self.base + self.text

    @property
    def text_end(self) -> int:
        return self.base + self.limit


def layout(loaded: LoadedFirmware) -> Layout:
    return Layout(loaded.staging["brisc"])


# ---------------------------------------------------------------------------- host tables
def bank_table_address(loaded: LoadedFirmware, tile: Tile) -> int:
    """The firmware's ``MEM_BANK_TO_NOC_SCRATCH``: past TRISC2's staged image and NCRISC's IRAM scratch."""
    trisc2 = loaded.staging["trisc2"] + tile.arch.core("trisc2").local_ram_size
    return trisc2 + tile.arch.core("ncrisc").local_ram_size


def write_host_tables(
    tile: Tile, loaded: LoadedFirmware, worker_columns: tuple[int, ...] | None = None
) -> dict[str, int]:
    """Bank-to-NoC and logical-to-virtual tables where the firmware reads them at boot
    (``worker_columns``: the working Tensix columns, default all of them)."""
    tensix = tile.arch.noc.tensix_tiles
    if worker_columns is None:
        worker_columns = tuple(sorted({x for x, _ in tensix}))
    worker_columns = tuple(worker_columns)
    worker_rows = tuple(sorted({y for _, y in tensix}))
    debug = loaded.firmware.debug("brisc")
    nocs = len(tile.arch.noc.niu_bases)
    dram_banks = debug.array_length("dram_bank_to_noc_xy") // nocs
    l1_banks = debug.array_length("l1_bank_to_noc_xy") // nocs
    dram = tile.noc.dram
    if dram_banks > dram.bank_count:
        raise InvalidProgram(f"firmware wants {dram_banks} DRAM banks, the chip has {dram.bank_count}")
    raw = bytearray()
    for noc in range(nocs):
        for bank in range(dram_banks):
            x, y = tile.noc.coordinates(noc, dram.bank(bank)[1])
            raw += struct.pack("<H", x | y << 6)
    for noc in range(nocs):
        x, y = tile.noc.coordinates(noc)
        raw += struct.pack("<H", x | y << 6) * l1_banks
    raw += b"".join(struct.pack("<i", dram.bank(bank)[2]) for bank in range(dram_banks)) + bytes(4 * l1_banks)
    base = bank_table_address(loaded, tile)
    tile.write(base, bytes(raw))
    columns = debug.array_length("worker_logical_col_to_virtual_col")
    rows = debug.array_length("worker_logical_row_to_virtual_row")
    col_map = bytes(worker_columns[i] if i < len(worker_columns) else 0 for i in range(columns))
    row_map = bytes(worker_rows[j] if j < len(worker_rows) else 0 for j in range(rows))
    logical = base + MEM_BANK_TO_NOC_XY_SIZE + MEM_BANK_OFFSET_SIZE
    tile.write(logical, col_map + row_map)
    return {"bank_tables": base, "logical_to_virtual": logical, "dram_banks": dram_banks}


# ---------------------------------------------------------------------------- launch
@dataclass(frozen=True)
class CircularBuffer:
    index: int
    address: int
    size: int
    pages: int

    @property
    def page_size(self) -> int:
        return self.size // self.pages


@dataclass(frozen=True)
class KernelImage:
    """A kernel as a raw image (no ELF): its bytes, the L1 address they load at, and where it starts
    (default: the load address)."""

    data: bytes
    address: int
    entry: int | None = None


@dataclass
class Program:
    """What one launch runs: kernels per core (ELF paths or raw images), their arguments, CBs and
    semaphores."""

    kernels: dict[str, Path | KernelImage]
    runtime_args: dict[str, list[int]] = field(default_factory=dict)
    common_args: list[int] = field(default_factory=list)
    circular_buffers: list[CircularBuffer] = field(default_factory=list)
    semaphores: list[int] = field(default_factory=list)


def _iram_bytes(image: ElfImage, iram: tuple[int, int], what: str) -> int:
    """How many bytes of ``image``'s code its core runs from the instruction RAM ``iram`` (base,
    size): all its code must be linked there (tensixsim.metal.kernels does)."""
    base, size = iram
    ends = []
    for address, data in image.text_ranges:
        if data and not (base <= address and address + len(data) <= base + size):
            raise KernelOverrun(
                f"{what}: code at 0x{address:x}..0x{address + len(data):x} is not in the instruction RAM "
                f"0x{base:x}..0x{base + size:x} its core runs kernels from",
                value=address,
            )
        ends.append(address + len(data))
    return max(ends, default=base) - base


def semaphore_address(loaded: LoadedFirmware, index: int) -> int:
    """L1 address of a launch's semaphore ``index`` (the same on every tile running this firmware)."""
    if not 0 <= index < SEMAPHORES:
        raise ValueError(f"semaphore {index}: a launch has {SEMAPHORES}")
    where = layout(loaded)
    return where.base + where.semaphores + 16 * index


def launch_program(
    tile: Tile,
    loaded: LoadedFirmware,
    program: Program,
    *,
    max_cycles: int = 50_000_000,
    trace: str | Path | None = None,
) -> RunState:
    """Write ``program`` and a launch message, send go, run until the firmware reports done.

    Raises :class:`KernelOverrun` for an image outside its slot and :class:`LaunchTimeout` when the
    cores stop (or the cycle limit passes) before the firmware reports done. Nothing is written when
    the program is refused. ``trace``: write a Perfetto trace of the launch's run to this file.
    """
    prepare_launch(tile, loaded, program)()
    try:
        state = run_until_quiet(tile, loaded, max_cycles=max_cycles, trace=trace)
        return expect_go_wait(state, loaded.mailbox, "launch")
    except Deadlock as stop:
        raise LaunchTimeout(f"the firmware never reported done: {stop.message}", cycle=stop.cycle) from None
    except CycleLimitExceeded:
        raise LaunchTimeout(
            f"the firmware never reported done within {max_cycles} cycles", cycle=max_cycles
        ) from None


def prepare_launch(tile: Tile, loaded: LoadedFirmware, program: Program) -> Callable[[], None]:
    """Check ``program`` against the firmware and the kernel slot (raises, writing nothing), and return
    what writes it, its launch message and the go message into ``tile``."""
    debug = loaded.firmware.debug("brisc")
    mailbox = loaded.mailbox
    where = layout(loaded)
    unknown = set(program.kernels) - set(CORE_NAMES)
    if unknown:
        raise ValueError(f"no core named {', '.join(sorted(unknown))}")
    writes: list[tuple[int, bytes]] = []
    kernel_images = {}  # core -> the kernel ELF it runs (for naming source lines)
    config = "kernel_config"
    # Values of the launch message's fields, by member path; computed only for the fields this
    # firmware's launch_msg_t has (its DWARF says which: generations add and drop fields).
    tensix = debug.enumerator("ProgrammableCoreType::TENSIX")
    fields: dict[str, Callable[[], int]] = {
        f"{config}.kernel_config_base[{tensix}]": lambda: where.base,
        f"{config}.mode": lambda: debug.enumerator("dispatch_mode::DISPATCH_MODE_HOST"),
        f"{config}.brisc_noc_mode": lambda: debug.enumerator("noc_mode::DM_DEDICATED_NOC"),
        f"{config}.min_remote_cb_start_index": lambda: debug.array_length("cb_interface"),
        f"{config}.sem_offset[{tensix}]": lambda: where.semaphores,
        f"{config}.local_cb_offset": lambda: where.cbs,
        f"{config}.remote_cb_offset": lambda: where.cbs + CB_WORDS * 4 * debug.array_length("cb_interface"),
    }
    essential = {f"{config}.enables"}  # without it nothing runs
    enables = 0
    for core, kernel in program.kernels.items():
        index = debug.enumerator(f"TensixProcessorTypes::{_PROCESSOR_ENUM[core]}")
        iram = tile.arch.core(core).iram
        if isinstance(kernel, KernelImage):
            what = f"{core}'s raw kernel image"
            entry = kernel.address if kernel.entry is None else kernel.entry
            spans = [(kernel.address, bytes(kernel.data))]
            iram_bytes = len(kernel.data)  # (position-independent: it runs where it is copied)
        else:
            what = str(kernel)
            image = read_elf(Path(kernel))
            kernel_images[core] = image
            entry = image.entry
            spans = [(s.address, s.data + bytes(s.memsz - len(s.data))) for s in image.segments]
            iram_bytes = 0 if iram is None else _iram_bytes(image, iram, what)
        for address, data in spans:
            end = address + len(data)
            if not (where.text_start <= address and end <= where.text_end):
                raise KernelOverrun(
                    f"{what}: {core} kernel segment 0x{address:x}..0x{end:x} is outside the kernel "
                    f"slot 0x{where.text_start:x}..0x{where.text_end:x}",
                    value=address,
                )
            writes.append((address, data))
        if iram is not None:
            # The firmware copies the kernel's first iram_bytes from its L1 slot into the instruction RAM
            # and resets the core at the RAM's first word (Wormhole's NCRISC).
            start = min(address for address, _ in spans)
            if not isinstance(kernel, KernelImage) and entry != iram[0]:
                raise KernelOverrun(
                    f"{what}: entry 0x{entry:x}, but {core} starts at its instruction RAM, 0x{iram[0]:x}",
                    value=entry,
                )
            fields[f"{config}.ncrisc_kernel_size16"] = lambda n=iram_bytes: -(-n // 16)
            essential.add(f"{config}.ncrisc_kernel_size16")
            entry = start
        if not where.text_start <= entry < where.text_end:
            raise KernelOverrun(f"{what}: entry 0x{entry:x} outside the kernel slot", value=entry)
        enables |= 1 << index
        text_size = sum(len(data) for _, data in spans)
        fields[f"{config}.kernel_text_offset[{index}]"] = lambda e=entry: e - where.base
        essential.add(f"{config}.kernel_text_offset[{index}]")
        fields[f"{config}.kernel_text_size[{index}]"] = lambda n=text_size: n
        args = program.runtime_args.get(core, [])
        if len(args) > RTA_WORDS:
            raise InvalidProgram(f"{core}: {len(args)} runtime arguments, at most {RTA_WORDS}")
        rta = where.rta + RTA_WORDS * 4 * CORE_NAMES.index(core)
        writes.append((where.base + rta, struct.pack(f"<{len(args)}I", *args)))
        fields[f"{config}.rta_offset[{index}].rta_offset"] = lambda r=rta: r
        fields[f"{config}.rta_offset[{index}].crta_offset"] = lambda: where.crta
    spans = sorted((a, a + len(d)) for a, d in writes if a >= where.text_start)
    for (_, end), (start, _) in itertools.pairwise(spans):
        if start < end:
            raise KernelOverrun(f"kernel images overlap at 0x{start:x}", value=start)
    if len(program.common_args) > RTA_WORDS:
        raise InvalidProgram(f"{len(program.common_args)} common runtime arguments, at most {RTA_WORDS}")
    writes.append(
        (where.base + where.crta, struct.pack(f"<{len(program.common_args)}I", *program.common_args))
    )
    if len(program.semaphores) > SEMAPHORES:
        raise InvalidProgram(f"{len(program.semaphores)} semaphores, at most {SEMAPHORES}")
    # One semaphore per 16 bytes (L1 alignment of the NoC).
    writes.append(
        (where.base + where.semaphores, b"".join(struct.pack("<I12x", v) for v in program.semaphores))
    )
    mask = 0
    for cb in program.circular_buffers:
        mask |= 1 << cb.index
        writes.append(
            (
                where.base + where.cbs + CB_WORDS * 4 * cb.index,
                struct.pack("<4I", cb.address, cb.size, cb.pages, cb.page_size),
            )
        )
    fields[f"{config}.local_cb_mask"] = lambda: mask
    fields[f"{config}.enables"] = lambda: enables
    missing = sorted(path for path in essential if not debug.has_field("launch_msg_t", path))
    if missing:
        raise InvalidProgram(f"this firmware's launch_msg_t has no {', '.join(missing)}: it cannot launch")
    read_ptr = int.from_bytes(
        tile.read(mailbox.base + debug.field("mailboxes_t", "launch_msg_rd_ptr").offset, 4), "little"
    )
    message = mailbox.base + debug.field("mailboxes_t", f"launch[{read_ptr}]").offset
    raw = bytearray(debug.size_of("launch_msg_t"))
    for path, value in fields.items():
        if not debug.has_field("launch_msg_t", path):
            continue  # a field of another firmware generation
        spot = debug.field("launch_msg_t", path)
        raw[spot.offset : spot.offset + spot.size] = value().to_bytes(spot.size, "little")

    def write() -> None:
        for address, data in writes:
            tile.write(address, data)
        for core, image in kernel_images.items():
            tile.core(core).add_image(image)
        tile.write(message, bytes(raw))
        index = int.from_bytes(tile.read(mailbox.go_message_index, 4), "little")
        go = mailbox.base + debug.field("mailboxes_t", f"go_messages[{index}].signal").offset
        tile.write(go, bytes([mailbox.constants["RUN_MSG_GO"]]))

    return write
