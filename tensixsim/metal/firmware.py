"""tt-metal firmware sets: find the five ELFs of one build, load them the way the host does, boot.

tt-metal ships pre-compiled firmware as ``pre-compiled/<hash>/<core>/<core>.elf``, one directory per
build configuration. Loading follows tt-metal's host: every core is held in soft reset; each ELF's
PT_LOAD segments are written to L1 at their physical address, except segments destined for a core's
local RAM (``0xFFB00000``...), which the host cannot reach: those go to an L1 staging area from which
the core's start-up code (``do_crt1``) copies them. The staging address is read from the ELF's DWARF
(the constant argument of ``do_crt1``) or, where the DWARF does not record it, from ``do_crt1``'s own
code (:func:`local_image_source`), not from a table, since it moves between tt-metal versions.
BRISC's reset PC is fixed (L1 address 0), so the host writes a ``jal`` to the firmware entry there;
the other cores' reset PCs are set by the BRISC firmware itself before it releases them. The host
then writes the go message's initial state (``RUN_MSG_INIT``) and releases BRISC alone.

Booted means: BRISC has set the go message to ``RUN_MSG_DONE`` and every core waits in its
firmware's poll loop (BRISC for a go message, the others for ``RUN_SYNC_MSG_GO`` in their
``subordinate_sync`` byte). Nothing changes after that until the host writes a launch message, so the
emulator finds every core parked and reports it as :class:`~tensixsim.errors.Deadlock`;
:func:`run_until_quiet` turns that outcome into a :class:`RunState` and lets every other error
through. :func:`launch` then plays the host's part of a slow-dispatch launch (launch message, go
message) and runs until the cores wait again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tensixsim.arch import ARCHES, CORE_NAMES, Arch
from tensixsim.errors import ArchitectureMismatch, Deadlock, InvalidProgram
from tensixsim.loader.elf import ElfImage, read_elf, riscv_extensions
from tensixsim.metal.dwarf import DebugInfo
from tensixsim.observe.device_print import DevicePrintServer, firmware_buffer
from tensixsim.observe.dprint import PrintBuffer, PrintLine, PrintServer, firmware_buffers
from tensixsim.riscv.core import CoreState

if TYPE_CHECKING:
    from tensixsim.tile import Tile


@dataclass
class FirmwareSet:
    """The five Tensix-core firmware ELFs of one pre-compiled build."""

    path: Path
    elfs: dict[str, Path]
    _debug: dict[str, DebugInfo] = field(default_factory=dict, repr=False)

    @property
    def build_hash(self) -> str:
        return self.path.name

    def isa(self) -> str:
        """The RISC-V ISA string the set was built for (from BRISC's attributes)."""
        image = read_elf(self.elfs["brisc"])
        if image.isa is None:
            raise InvalidProgram(f"{self.elfs['brisc']}: no RISC-V ISA attribute")
        return image.isa

    def arch(self) -> Arch:
        """The architecture whose ISA string the firmware's attributes match."""
        return architecture_of(self.isa(), str(self.elfs["brisc"]))

    def debug(self, core: str) -> DebugInfo:
        if core not in self._debug:
            self._debug[core] = DebugInfo(self.elfs[core])
        return self._debug[core]


def architecture_of(isa: str, where: str) -> Arch:
    """The architecture an ISA string was built for: the one whose extensions it has, most specific first.

    Blackhole's baby cores add Zaamo, Zba and Zbb to Wormhole's RV32IM; a tt-metal Blackhole build
    also names Tenstorrent's own extension (``xttzbkb``), which plays no part in the choice.
    """
    extensions = riscv_extensions(isa)
    candidates = []
    for arch in ARCHES.values():
        required = riscv_extensions(arch.isa_string_prefix)
        if required <= extensions:
            candidates.append((len(required), arch))
    if not candidates:
        raise InvalidProgram(f"{where}: ISA {isa} matches no known architecture")
    return max(candidates, key=lambda c: c[0])[1]


def _firmware_elfs(directory: Path) -> dict[str, Path] | None:
    """The five firmware ELFs of ``directory``: nested (``<core>/<core>.elf``, as tt-metal's build
    leaves them) or flat (``<core>.elf``); None if it holds neither."""
    for layout in (lambda core: directory / core / f"{core}.elf", lambda core: directory / f"{core}.elf"):
        elfs = {core: layout(core) for core in CORE_NAMES}
        if all(path.is_file() for path in elfs.values()):
            return elfs
    return None


def find_firmware_sets(precompiled: Path) -> list[FirmwareSet]:
    """Every firmware set at ``precompiled``: the folder itself, or each folder under it, holding the
    five Tensix-core firmware ELFs (nested or flat)."""
    root = Path(precompiled)
    own = _firmware_elfs(root)
    if own is not None:
        return [FirmwareSet(root, own)]
    sets = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        elfs = _firmware_elfs(directory)
        if elfs is not None:
            sets.append(FirmwareSet(directory, elfs))
    return sets


def find_firmware_set(precompiled: Path, arch: str) -> FirmwareSet:
    """The first firmware set (in hash order) built for ``arch``."""
    for candidate in find_firmware_sets(precompiled):
        if candidate.arch().name == arch:
            return candidate
    raise InvalidProgram(f"{precompiled}: no {arch} firmware set")


# ---------------------------------------------------------------------------- mailbox layout
@dataclass(frozen=True)
class Mailbox:
    """Where the firmware keeps its run state, read from BRISC's debug information."""

    base: int  # L1 address of mailboxes_t
    size: int
    go_signal: int  # L1 address of go_messages[0].signal
    go_message_index: int
    subordinate_sync: int  # L1 address of the four run-state bytes (dm1, trisc0, trisc1, trisc2)
    subordinate_bytes: dict[str, int]  # core -> L1 address of its run-state byte
    core_info_logical_x: int
    core_info_logical_y: int
    constants: dict[str, int]  # RUN_MSG_* / RUN_SYNC_MSG_* values

    @classmethod
    def from_debug(cls, debug: DebugInfo) -> Mailbox:
        base = debug.constant("mailboxes")
        kind = "mailboxes_t"
        sync = base + debug.field(kind, "subordinate_sync").offset
        sync_type = "subordinate_map_t"
        members = {"ncrisc": "dm1", "trisc0": "trisc0", "trisc1": "trisc1", "trisc2": "trisc2"}
        names = [n for n in debug.constant_names() if n.startswith(("RUN_MSG_", "RUN_SYNC_MSG_"))]
        return cls(
            base=base,
            size=debug.size_of(kind),
            go_signal=base + debug.field(kind, "go_messages[0].signal").offset,
            go_message_index=base + debug.field(kind, "go_message_index").offset,
            subordinate_sync=sync,
            subordinate_bytes={c: sync + debug.field(sync_type, m).offset for c, m in members.items()},
            core_info_logical_x=base + debug.field(kind, "core_info.absolute_logical_x").offset,
            core_info_logical_y=base + debug.field(kind, "core_info.absolute_logical_y").offset,
            constants={n: debug.constant(n) for n in names},
        )


# ---------------------------------------------------------------------------- loading
@dataclass(frozen=True)
class Placement:
    core: str
    l1_address: int
    size: int
    memsz: int
    destination: int  # where the firmware runs it from (the segment's physical address)


_LUI, _OP_IMM, _STORE, _BRANCH = 0x37, 0x13, 0x23, 0x63


def lui_constants(code: bytes, address: int, start: int, end: int) -> list[int]:
    """The constants ``lui rX, hi`` + ``addi rY, rX, lo`` build in ``[start, end)`` of ``code``
    (which is loaded at ``address``), in code order.

    A straight scan, not a data-flow analysis: a register counts as holding the ``lui`` value until
    an instruction writes it. Tensix words (low bits not 0b11) are skipped; they write no register.
    """
    upper: dict[int, int] = {}
    found = []
    for pc in range(max(start, address), min(end, address + len(code)) - 3, 4):
        word = int.from_bytes(code[pc - address : pc - address + 4], "little")
        if word & 3 != 3:
            continue
        opcode, rd, funct3, rs1 = word & 0x7F, word >> 7 & 31, word >> 12 & 7, word >> 15 & 31
        if opcode == _OP_IMM and funct3 == 0 and rs1 in upper:
            found.append((upper[rs1] + ((word >> 20) ^ 0x800) - 0x800) & 0xFFFFFFFF)
        if opcode in (_STORE, _BRANCH) or rd == 0:
            continue  # writes no register
        upper.pop(rd, None)
        if opcode == _LUI:
            upper[rd] = word & 0xFFFFF000
    return found


def local_image_source(firmware: FirmwareSet, core: str, image: ElfImage, l1_size: int) -> int:
    """The L1 address ``core``'s start-up code copies its local-RAM image from (``do_crt1``'s
    ``data_image``), where the host must stage that image.

    Recent firmware (ttnn 0.81) records it as the location of the inlined argument. Older builds
    (ttnn 0.67.4 .. 0.70 at least) leave the argument without a location; there it is the one L1
    address the inlined ``do_crt1`` builds with ``lui``/``addi`` (the others it builds are
    local-RAM addresses: ``__ldm_data_start``, ``__ldm_bss_end``). A build where that is not exactly
    one address is refused.
    """
    debug = firmware.debug(core)
    try:
        return debug.inlined_argument("do_crt1", "data_image")
    except InvalidProgram:
        pass
    values: set[int] = set()
    for start, end in debug.inlined_ranges("do_crt1"):
        for address, code in image.text_ranges:
            values.update(v for v in lui_constants(code, address, start, end) if 0 < v < l1_size)
    if len(values) != 1:
        found = ", ".join(f"0x{v:x}" for v in sorted(values)) or "none"
        raise InvalidProgram(
            f"{firmware.elfs[core]}: cannot tell where do_crt1 copies {core}'s local-RAM image from "
            f"(L1 constants in its code: {found})"
        )
    return values.pop()


def plan_load(tile: Tile, firmware: FirmwareSet) -> tuple[dict[str, ElfImage], list[Placement]]:
    """Check the set against the tile and work out where every segment goes (nothing written yet)."""
    arch = firmware.arch()
    if arch.name != tile.arch.name:
        raise ArchitectureMismatch(
            f"{firmware.path}: firmware built for {arch.name} ({firmware.isa()}), tile is {tile.arch.name}"
        )
    images: dict[str, ElfImage] = {}
    placements: list[Placement] = []
    for core in CORE_NAMES:
        path = firmware.elfs[core]
        image = read_elf(path)
        if image.isa is not None and architecture_of(image.isa, str(path)).name != tile.arch.name:
            raise ArchitectureMismatch(f"{path}: built for {image.isa}, tile is {tile.arch.name}")
        images[core] = image
        facts = tile.arch.core(core)
        local_base, local_size = tile.arch.local_ram_base, facts.local_ram_size
        staging: int | None = None
        for segment in image.segments:
            end = segment.address + segment.memsz
            if local_base <= segment.address and end <= local_base + local_size:
                if staging is None:
                    staging = local_image_source(firmware, core, image, tile.arch.l1_size)
                where = staging + segment.address - local_base
            elif segment.address >= 0 and end <= tile.arch.l1_size:
                where = segment.address
            else:
                raise InvalidProgram(
                    f"{path}: segment 0x{segment.address:08x}..0x{end:08x} is outside L1 and "
                    f"{core}'s local RAM",
                    value=segment.address,
                )
            if where + len(segment.data) > tile.arch.l1_size:
                raise InvalidProgram(f"{path}: staging area 0x{where:x} runs past L1", value=where)
            placements.append(Placement(core, where, len(segment.data), segment.memsz, segment.address))
    spans = sorted((p.l1_address, p.l1_address + p.size, p.core) for p in placements if p.size)
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise InvalidProgram(
                f"{firmware.path}: {first} and {second} images overlap at 0x{start:x}", value=start
            )
    return images, placements


@dataclass
class LoadedFirmware:
    firmware: FirmwareSet
    images: dict[str, ElfImage]
    mailbox: Mailbox
    staging: dict[str, int]  # core -> L1 address its local-RAM image was written to


def load_firmware(
    tile: Tile,
    firmware: FirmwareSet,
    *,
    logical_x: int = 0,
    logical_y: int = 0,
    worker_columns: tuple[int, ...] | None = None,
) -> LoadedFirmware:
    """Hold every core in reset and write the firmware and the initial mailbox, as tt-metal's host does.

    ``worker_columns``: the NoC #0 columns of the working Tensix tiles, in logical order (default:
    all fourteen); a harvested chip has fewer.

    The tile is untouched when the set is rejected (wrong architecture, bad ELF).
    """
    images, placements = plan_load(tile, firmware)
    mailbox = Mailbox.from_debug(firmware.debug("brisc"))
    tile.hold(*CORE_NAMES)
    for core, image in images.items():
        for segment, placement in zip(image.segments, [p for p in placements if p.core == core], strict=True):
            tile.write(placement.l1_address, segment.data)
        tile.core(core).symbols.update(image.symbols)
        tile.core(core).add_image(image)
    tile.start_at("brisc", images["brisc"].entry)
    tile.write(mailbox.base, bytes(mailbox.size))
    tile.write(mailbox.go_signal, bytes([mailbox.constants["RUN_MSG_INIT"]]))
    tile.write(mailbox.core_info_logical_x, bytes([logical_x]))
    tile.write(mailbox.core_info_logical_y, bytes([logical_y]))
    staging = {
        p.core: p.l1_address - (p.destination - tile.arch.local_ram_base)
        for p in placements
        if p.destination >= tile.arch.local_ram_base
    }
    loaded = LoadedFirmware(firmware, images, mailbox, staging)
    if tile.noc is not None and tile.noc.dram is not None:
        from tensixsim.metal.launch import write_host_tables  # launch builds on this module

        write_host_tables(tile, loaded, worker_columns)
    return loaded


# ---------------------------------------------------------------------------- running
# The processor index of each core in a launch message's per-processor arrays and enable mask
# (tt-metal's TensixProcessorTypes enumerators).
_PROCESSOR_ENUM = {"brisc": "DM0", "ncrisc": "DM1", "trisc0": "MATH0", "trisc1": "MATH1", "trisc2": "MATH2"}


def processor_index(firmware: FirmwareSet, core: str) -> int:
    """``core``'s index among the Tensix processors (its ``TensixProcessorTypes`` enumerator): the
    index of its entries in the launch message and of its print buffer."""
    return firmware.debug("brisc").enumerator(f"TensixProcessorTypes::{_PROCESSOR_ENUM[core]}")


def print_buffers(loaded: LoadedFirmware) -> dict[str, PrintBuffer]:
    """Each core's DPRINT buffer in this firmware's mailbox
    (:func:`tensixsim.observe.dprint.firmware_buffers`); raises ``Unimplemented`` for firmware that
    has none (``DEVICE_PRINT``)."""
    cores = sorted(CORE_NAMES, key=lambda core: processor_index(loaded.firmware, core))
    return firmware_buffers(loaded.firmware.debug("brisc"), loaded.mailbox.base, cores)


def enable_firmware_prints(
    tile: Tile, loaded: LoadedFirmware, echo: Callable[[PrintLine], None] | None = None
) -> PrintServer | DevicePrintServer:
    """Start the host's print server on the firmware's print buffers (:meth:`Tile.enable_prints`):
    per-core DPRINT buffers (:mod:`tensixsim.observe.dprint`) or the shared ``DEVICE_PRINT`` buffer
    (:mod:`tensixsim.observe.device_print`), whichever the firmware's mailbox has."""
    debug = loaded.firmware.debug("brisc")
    if not debug.has_field("mailboxes_t", "dprint_buf.buffer.aux.wpos"):
        return tile.enable_prints(print_buffers(loaded), echo)
    cores = sorted(CORE_NAMES, key=lambda core: processor_index(loaded.firmware, core))
    firmware = {core: Path(path) for core, path in loaded.firmware.elfs.items()}

    def elf_for(core: str, is_kernel: bool) -> Path:
        # A kernel's strings are in the kernel ELF the last launch put on the core (tt-metal's
        # host finds it from the kernel id the core announces; the emulator knows what it loaded).
        if is_kernel:
            for image in reversed(tile.core(core).images):
                if Path(image.path) != firmware[core]:
                    return Path(image.path)
            raise InvalidProgram(f"{core} printed from a kernel, but no kernel ELF was launched on it")
        return firmware[core]

    buffer = firmware_buffer(debug, loaded.mailbox.base)
    return tile.enable_prints(server=DevicePrintServer(buffer, cores, elf_for, echo))


@dataclass(frozen=True)
class RunState:
    """The tile once every core waits for the host again."""

    cycles: int
    go_signal: int
    subordinate_state: dict[str, int]  # core -> its subordinate_sync byte
    polled: dict[str, tuple[int, ...]]  # core -> L1 addresses its poll loop reads
    waiting: dict[str, str]  # core -> what it waits for, as the scheduler describes it
    pcs: dict[str, int]
    reason: str  # the scheduler's account of why nothing can move

    def waits_for_go(self, mailbox: Mailbox) -> bool:
        """True when BRISC polls the go message and every other core its run-state byte."""
        done = mailbox.constants["RUN_MSG_DONE"]
        if self.go_signal != done or set(self.polled) != set(CORE_NAMES):
            return False
        if mailbox.go_signal not in self.polled["brisc"]:
            return False
        return all(
            self.polled[core] == (address,)
            and self.subordinate_state[core] == mailbox.constants["RUN_SYNC_MSG_DONE"]
            for core, address in mailbox.subordinate_bytes.items()
        )


def run_until_quiet(
    tile: Tile,
    loaded: LoadedFirmware,
    *,
    max_cycles: int,
    release: tuple[str, ...] = (),
    trace: str | Path | None = None,
) -> RunState:
    """Run until no core can go on without the host, and describe where each one waits.

    The firmware never finishes: a run ends when every core is parked in a poll loop, which the
    scheduler reports as a deadlock. That is the expected outcome here; any other error propagates.
    ``trace``: a Perfetto trace of the run to write (Tile.run).
    """
    try:
        tile.run(max_cycles=max_cycles, release=release, trace=trace)
    except Deadlock as stop:
        reason = stop.message
    else:
        raise InvalidProgram("the firmware finished (ecall) instead of waiting for the host")
    return run_state(tile, loaded, reason)


def run_state(tile: Tile, loaded: LoadedFirmware, reason: str) -> RunState:
    """Where each core of ``tile`` waits, once nothing can move (``reason``: the scheduler's account)."""
    mailbox = loaded.mailbox
    waiting = [c for c in tile.cores if c.state is CoreState.WAITING]
    return RunState(
        cycles=max(c.time for c in tile.cores),
        go_signal=tile.read(mailbox.go_signal, 1)[0],
        subordinate_state={c: tile.read(a, 1)[0] for c, a in mailbox.subordinate_bytes.items()},
        polled={c.name: tuple(a for a, _ in c.watch) for c in waiting},
        waiting={c.name: c.wait_reason for c in waiting},
        pcs={c.name: c.pc for c in tile.cores},
        reason=reason,
    )


def expect_go_wait(state: RunState, mailbox: Mailbox, what: str) -> RunState:
    """``state``, if every core waits for the host's next go message; else Deadlock naming ``what``."""
    if not state.waits_for_go(mailbox):
        raise Deadlock(
            f"{what} stopped short of waiting for a go message (go signal 0x{state.go_signal:02x}, "
            f"run states {state.subordinate_state}): {state.reason}",
            cycle=state.cycles,
        )
    return state


def boot(tile: Tile, loaded: LoadedFirmware, *, max_cycles: int = 20_000_000) -> RunState:
    """Release BRISC, as the host does, and run until every core waits for a go message.

    Raises :class:`~tensixsim.errors.Deadlock` when the cores stop anywhere else.
    """
    state = run_until_quiet(tile, loaded, max_cycles=max_cycles, release=("brisc",))
    return expect_go_wait(state, loaded.mailbox, "boot")


def _itype(opcode: int, rd: int, funct3: int, rs1: int, imm: int) -> int:
    return (imm & 0xFFF) << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


# A kernel that returns at once: ``addi a0, zero, 0; jalr zero, 0(ra)`` (firmware calls a kernel as
# ``uint32_t kernel()`` and records the value as unused stack).
EMPTY_KERNEL = b"".join(
    word.to_bytes(4, "little") for word in (_itype(0x13, 10, 0, 0, 0), _itype(0x67, 0, 0, 1, 0))
)


def launch(
    tile: Tile,
    loaded: LoadedFirmware,
    kernels: dict[str, bytes],
    *,
    kernel_config_base: int | None = None,
    max_cycles: int = 20_000_000,
) -> RunState:
    """Write a launch message running ``kernels`` (core -> code) and a go message, then run.

    The message is the one tt-metal's host writes in slow-dispatch mode (``DISPATCH_MODE_HOST``: no
    completion is sent over the NoC). No circular buffers, runtime arguments or semaphores. Kernel
    code goes at ``kernel_config_base`` (default: BRISC's local-RAM staging area, which tt-metal
    also reuses as the kernel configuration buffer once the firmware has booted), 16-byte aligned.
    """
    debug = loaded.firmware.debug("brisc")
    mailbox = loaded.mailbox
    unknown = set(kernels) - set(CORE_NAMES)
    if unknown:
        raise ValueError(f"no core named {', '.join(sorted(unknown))}")
    base = kernel_config_base if kernel_config_base is not None else loaded.staging["brisc"]
    read_ptr = int.from_bytes(
        tile.read(mailbox.base + debug.field("mailboxes_t", "launch_msg_rd_ptr").offset, 4), "little"
    )
    message = mailbox.base + debug.field("mailboxes_t", f"launch[{read_ptr}]").offset
    config = "kernel_config"
    fields: dict[str, int] = {
        f"{config}.kernel_config_base[{debug.enumerator('ProgrammableCoreType::TENSIX')}]": base,
        f"{config}.mode": debug.enumerator("dispatch_mode::DISPATCH_MODE_HOST"),
        f"{config}.brisc_noc_mode": debug.enumerator("noc_mode::DM_DEDICATED_NOC"),
        f"{config}.min_remote_cb_start_index": debug.array_length("cb_interface"),
    }
    image = bytearray()
    enables = 0
    for core, code in kernels.items():
        index = debug.enumerator(f"TensixProcessorTypes::{_PROCESSOR_ENUM[core]}")
        offset = len(image)
        image += code + bytes(-len(code) % 16)
        enables |= 1 << index
        fields[f"{config}.kernel_text_offset[{index}]"] = offset
        fields[f"{config}.kernel_text_size[{index}]"] = len(code)
        if core == "ncrisc":
            # Wormhole: NCRISC's firmware copies this many 16-byte units into its instruction RAM
            # and runs the kernel there (a raw image must be position-independent).
            fields[f"{config}.ncrisc_kernel_size16"] = -(-len(code) // 16)
    fields[f"{config}.enables"] = enables
    raw = bytearray(debug.size_of("launch_msg_t"))
    for path, value in fields.items():
        if "kernel_text_offset" in path or path.endswith(".enables"):
            pass  # without these nothing runs: field() names them if this firmware lacks them
        elif not debug.has_field("launch_msg_t", path):
            continue  # a member of another firmware generation
        where = debug.field("launch_msg_t", path)
        raw[where.offset : where.offset + where.size] = value.to_bytes(where.size, "little")
    if base + len(image) > tile.arch.l1_size:
        raise InvalidProgram(f"kernels at 0x{base:x} run past L1", value=base)
    tile.write(base, bytes(image))
    tile.write(message, bytes(raw))
    index = int.from_bytes(tile.read(mailbox.go_message_index, 4), "little")
    go = mailbox.base + debug.field("mailboxes_t", f"go_messages[{index}].signal").offset
    tile.write(go, bytes([mailbox.constants["RUN_MSG_GO"]]))
    return expect_go_wait(run_until_quiet(tile, loaded, max_cycles=max_cycles), mailbox, "launch")
