"""Kernel prints of newer tt-metal (``DEVICE_PRINT``): one ring buffer per Tensix tile shared by its
five cores, format strings kept in the kernel ELF. Read on the host as tt-metal's print server reads
it (ttnn 0.81.1; tt-metal's ``device_print.h``, ``device_print_common.h``,
``device_print_structures.h`` and the host's ``dprint_server.cpp`` / ``dprint_parser.cpp``).

The buffer (``mailboxes_t.dprint_buf.buffer``, found from the firmware's DWARF): ``wpos`` (u32),
``rpos`` (u32), ``risc_state[5]`` (u8 each, padded to a word), ``lock`` (u32), then the data (1000
bytes on Blackhole). A core prints a message under the lock: a header word, then its arguments,
padded to a whole number of words. The header (``DevicePrintHeader``, bit-fields from the least
significant bit as the RISC-V psABI lays them out): ``is_kernel`` (1 bit), ``risc_id`` (5: the
processor index), ``message_payload`` (10: bytes after the header), ``info_id`` (16: the index of
the message's ``DevicePrintStringInfo`` in the ELF's ``.device_print_strings_info`` section). Special
headers: ``is_kernel`` with payload 1023 announces a kernel (``info_id`` = its watcher kernel id) on
a core's first print of a launch; all fields 0 but ``info_id`` 0xFFFF marks the wrap to the start.

A ``DevicePrintStringInfo`` is four words: the address of the format string, of the source file name
(both in ``.device_print_strings``), the line, padding. The device rewrites a format string at compile
time: each placeholder becomes ``{N,T[:spec]}``, N the argument's slot in the payload (arguments are
packed largest first), T its type (``b B h H i I q Q f d ? w s p``...), spec the fmt format spec.
Argument N lies after arguments 0..N-1, each the size of its type.

The host: it starts the buffer by zeroing it with the starting magic in ``wpos`` and marks each
processor ``KernelNotPrinted`` (0) or ``PrintingDisabled`` (2) in ``risc_state``; it reads from
``rpos`` to ``wpos`` (around the end when ``rpos > wpos``) and writes ``rpos``; a ``wpos`` with bit 31
set (a writer waiting for room) gets ``rpos`` = 0xF0E1D2C3, which tells the writer to start afresh.

What is decoded: integers, floats and doubles, bools, bf16, strings that are compile-time constants
(pointers into ``.device_print_strings``), pointers. Not yet (``Unimplemented``): bf4/bf8, typed
arrays, tile slices, call stacks, enums by name, and strings elsewhere in device memory.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from elftools.elf.elffile import ELFFile

from tensixsim.errors import InvalidProgram, Unimplemented
from tensixsim.mmio.memory import PAGE
from tensixsim.observe.dprint import DISABLED_MAGIC, STARTING_MAGIC, PrintLine

if TYPE_CHECKING:
    from tensixsim.metal.dwarf import DebugInfo
    from tensixsim.tile import Tile

RESET_BUFFER_MAGIC = 0xF0E1D2C3  # DEVICE_PRINT_RESET_BUFFER_MAGIC (dprint_common.h)
WRITE_STALL_FLAG = 1 << 31  # DEVICE_PRINT_WRITE_STALL_FLAG
WRAP_INFO_ID = 0xFFFF  # DevicePrintHeader::max_info_id_value, the wrap marker's info_id
KERNEL_PAYLOAD = 1023  # DevicePrintHeader::max_message_payload_size, a kernel announcement's payload
KERNEL_NOT_PRINTED, KERNEL_PRINTED, PRINTING_DISABLED = 0, 1, 2  # DevicePrintRiscCoreState
STRINGS_SECTION = ".device_print_strings"
INFO_SECTION = ".device_print_strings_info"
INFO_SIZE = 16  # DevicePrintStringInfo32: format, file, line, padding
# Type characters (device_print_type<T>::value in device_print.h) -> (struct format, size). 's' and
# 'p' are pointers, 4 bytes on these 32-bit cores.
TYPES = {
    "b": ("<b", 1),
    "B": ("<B", 1),
    "h": ("<h", 2),
    "H": ("<H", 2),
    "i": ("<i", 4),
    "I": ("<I", 4),
    "q": ("<q", 8),
    "Q": ("<Q", 8),
    "f": ("<f", 4),
    "d": ("<d", 8),
    "?": ("<B", 1),
    "w": ("<H", 2),  # bf16: the upper half of a binary32
    "s": ("<I", 4),
    "p": ("<I", 4),
}
UNDECODED_TYPES = {
    "e": "bf4",
    "E": "bf8",
    "A": "typed arrays",
    "t": "tile slices",
    "c": "call stacks",
    "/": "enums",
}


# ---------------------------------------------------------------------------- messages
@dataclass(frozen=True)
class Header:
    is_kernel: bool
    risc_id: int
    payload: int
    info_id: int

    @classmethod
    def from_word(cls, word: int) -> Header:
        return cls(bool(word & 1), (word >> 1) & 0x1F, (word >> 6) & 0x3FF, word >> 16)

    @property
    def word(self) -> int:
        return int(self.is_kernel) | self.risc_id << 1 | self.payload << 6 | self.info_id << 16

    @property
    def is_wrap(self) -> bool:
        return not self.is_kernel and self.risc_id == 0 and self.payload == 0 and self.info_id == WRAP_INFO_ID

    @property
    def announces_kernel(self) -> bool:
        return self.is_kernel and self.payload == KERNEL_PAYLOAD


@dataclass(frozen=True)
class Placeholder:
    slot: int  # the argument's slot in the payload
    kind: str  # its type character
    spec: str  # the fmt format spec after ':', or ''


# {N,T[:spec]}; an enum's T is "/e_<T>_<name>" or "/E_..." (names may hold "::").
_PLACEHOLDER = re.compile(r"\{(\d+),(/[eE]_._(?:[^:}]|::)*|[^:}])(?::([^{}]*))?\}")


def parse_format(text: str) -> list[str | Placeholder]:
    """A device format string as literal text and placeholders (``{{`` and ``}}`` are braces)."""
    parts: list[str | Placeholder] = []
    literal = ""
    at = 0
    while at < len(text):
        if text.startswith(("{{", "}}"), at):
            literal += text[at]
            at += 2
        elif text[at] == "{":
            match = _PLACEHOLDER.match(text, at)
            if match is None:
                raise InvalidProgram(f"device print format {text!r}: bad placeholder at {at}", value=at)
            parts += [literal, Placeholder(int(match[1]), match[2][0], match[3] or "")]
            literal = ""
            at = match.end()
        else:
            literal += text[at]
            at += 1
    return [*parts, literal]


def read_arguments(parts: list[str | Placeholder], payload: bytes) -> dict[int, int | float]:
    """Each slot's value: slots in order, each after the ones before it (the device packs them so)."""
    kinds: dict[int, str] = {}
    for part in parts:
        if isinstance(part, Placeholder):
            if part.kind in UNDECODED_TYPES:
                raise Unimplemented(f"device print: {UNDECODED_TYPES[part.kind]} are not decoded yet")
            if part.kind not in TYPES:
                raise InvalidProgram(f"device print: unknown argument type {part.kind!r}")
            kinds[part.slot] = part.kind
    if kinds and sorted(kinds) != list(range(len(kinds))):
        raise InvalidProgram(f"device print: argument slots {sorted(kinds)} are not 0..{len(kinds) - 1}")
    values: dict[int, int | float] = {}
    offset = 0
    for slot in range(len(kinds)):
        fmt, size = TYPES[kinds[slot]]
        if offset + size > len(payload):
            raise InvalidProgram(
                f"device print: a {len(payload)}-byte payload ends before argument {slot}", value=len(payload)
            )
        (values[slot],) = struct.unpack_from(fmt, payload, offset)
        offset += size
    return values


# ---------------------------------------------------------------------------- fmt formatting
_SPEC = re.compile(
    r"(?:(?P<fill>[^{}])?(?P<align>[<>^]))?(?P<sign>[-+ ])?(?P<alt>#)?(?P<zero>0)?(?P<width>\d+)?"
    r"(?:\.(?P<precision>\d+))?(?P<locale>L)?(?P<type>[aAbBcdeEfFgGopsxX?])?"
)
# fmt's shortest ("{}") float form: fixed notation for decimal exponents in [-4, exp_upper),
# exp_upper = min(16, digits10 + 1): 7 for float, 16 for double (fmt's exp_upper<T>()).
EXP_UPPER = {"float": 7, "double": 16}


def _shortest(value: float, width: str) -> str:
    """fmt's ``{}`` of a float/double: the fewest digits that read back as the same value."""
    if math.isnan(value):
        return "-nan" if math.copysign(1, value) < 0 else "nan"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    number = np.float32(value) if width == "float" else np.float64(value)
    sign = "-" if math.copysign(1, value) < 0 else ""
    mantissa, exponent = np.format_float_scientific(abs(number), unique=True, trim="-").split("e")
    digits, exp = mantissa.replace(".", ""), int(exponent)
    if -4 <= exp < EXP_UPPER[width]:
        if exp >= 0:
            whole = digits[: exp + 1].ljust(exp + 1, "0")
            rest = digits[exp + 1 :]
            return sign + whole + ("." + rest if rest else "")
        return sign + "0." + "0" * (-exp - 1) + digits
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def format_value(kind: str, value: int | float, spec: str, strings: Callable[[int], str]) -> str:
    """``value`` (of device type ``kind``) as fmt formats it with ``spec``. ``strings`` reads a
    string at a device address."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise InvalidProgram(f"device print: format spec {spec!r} is not fmt's", value=0)
    if match["locale"]:
        raise Unimplemented(f"device print: the locale option in {spec!r}")
    presentation = match["type"] or ""
    if kind == "s":
        text = strings(int(value))
        return _pad(text, match, default_align="<")
    if kind == "p":
        return _pad(f"0x{int(value):x}", match, default_align=">")
    if kind == "?" and presentation in ("", "s"):
        return _pad("true" if value else "false", match, default_align="<")
    if kind in ("f", "d", "w"):
        if kind == "w":
            value = float(np.frombuffer((int(value) << 16).to_bytes(4, "little"), np.float32)[0])
            kind = "f"
        if presentation in ("a", "A"):
            raise Unimplemented("device print: hexadecimal float presentation")
        if presentation == "" and match["precision"] is None:
            text = _shortest(float(value), "float" if kind == "f" else "double")
            if match["sign"] in ("+", " ") and not text.startswith("-"):
                text = match["sign"] + text
            return _pad(text, match, default_align=">", numeric=True)
        python = _python_spec(match, presentation or "g")
        return format(float(value), python)
    if presentation in ("", "d", "x", "X", "b", "B", "c", "o"):
        if presentation == "o" and match["alt"]:
            raise Unimplemented("device print: '#o' (fmt's octal prefix is 0, not 0o)")
        text = format(int(value), _python_spec(match, presentation))
        return text.replace("0b", "0B", 1) if presentation == "B" and match["alt"] else text
    raise InvalidProgram(f"device print: presentation {presentation!r} for type {kind!r}", value=0)


def _python_spec(match: re.Match, presentation: str) -> str:
    """The same spec in Python's format language (identical to fmt's for these presentations)."""
    parts = [
        (match["fill"] or "") + (match["align"] or ""),
        match["sign"] or "",
        match["alt"] or "",
        match["zero"] or "",
        match["width"] or "",
        "." + match["precision"] if match["precision"] is not None else "",
        "b" if presentation == "B" else presentation,
    ]
    return "".join(parts)


def _pad(text: str, match: re.Match, *, default_align: str, numeric: bool = False) -> str:
    width = int(match["width"] or 0)
    if match["zero"] and numeric and not match["align"]:
        sign = text[0] if text[:1] in "+- " else ""
        return sign + text[len(sign) :].rjust(width - len(sign), "0")
    align = match["align"] or default_align
    return format(text, f"{match['fill'] or ' '}{align}{width}" if width else "")


# ---------------------------------------------------------------------------- strings in the ELF
@dataclass
class StringTable:
    """An ELF's ``.device_print_strings_info`` entries and ``.device_print_strings`` text."""

    path: Path
    infos: list[tuple[int, int, int]]  # (format address, file address, line)
    strings_address: int
    strings: bytes

    @classmethod
    def from_elf(cls, path: Path) -> StringTable:
        with open(path, "rb") as stream:
            elf = ELFFile(stream)
            info = elf.get_section_by_name(INFO_SECTION)
            text = elf.get_section_by_name(STRINGS_SECTION)
            raw = info.data() if info is not None else b""
            count = len(raw) // INFO_SIZE
            infos = [struct.unpack_from("<III", raw, i * INFO_SIZE) for i in range(count)]
            return cls(
                Path(path),
                infos,
                text["sh_addr"] if text is not None else 0,
                text.data() if text is not None else b"",
            )

    def string(self, address: int) -> str:
        at = address - self.strings_address
        if not 0 <= at < len(self.strings):
            raise Unimplemented(
                f"{self.path}: a string at 0x{address:x}, outside {STRINGS_SECTION} (device memory "
                "strings are not read yet)",
                value=address,
            )
        return self.strings[at : self.strings.index(b"\0", at)].decode("utf-8", "replace")

    def format(self, info_id: int, payload: bytes) -> str:
        if info_id >= len(self.infos):
            raise InvalidProgram(
                f"{self.path}: message info id {info_id}, the ELF has {len(self.infos)}", value=info_id
            )
        parts = parse_format(self.string(self.infos[info_id][0]))
        values = read_arguments(parts, payload)
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(format_value(part.kind, values[part.slot], part.spec, self.string))
        return "".join(out)


# ---------------------------------------------------------------------------- the buffer
@dataclass(frozen=True)
class SharedBuffer:
    """Where a tile's ``DevicePrintBuffer`` lies (L1 addresses) and its shape, from the DWARF."""

    address: int  # wpos
    rpos: int
    risc_state: int
    processors: int
    lock: int
    data: int
    size: int  # data bytes

    @property
    def end(self) -> int:
        return self.data + self.size


def firmware_buffer(debug: DebugInfo, mailbox_base: int) -> SharedBuffer:
    """The shared buffer of ``DEVICE_PRINT`` firmware: ``mailboxes_t.dprint_buf.buffer``."""
    root = "dprint_buf.buffer"
    if not debug.has_field("mailboxes_t", f"{root}.aux.wpos"):
        raise InvalidProgram(f"{debug.path}: no DEVICE_PRINT buffer (mailboxes_t.{root}) in this firmware")

    def where(path: str):
        return debug.field("mailboxes_t", f"{root}.{path}")

    spots = {name: where(f"aux.{name}") for name in ("wpos", "rpos", "risc_state", "lock")}
    data = where("data")
    if (spots["wpos"].size, spots["rpos"].size, spots["rpos"].offset - spots["wpos"].offset) != (4, 4, 4):
        raise Unimplemented(f"{debug.path}: a DEVICE_PRINT buffer whose wpos/rpos are not two adjacent words")
    return SharedBuffer(
        address=mailbox_base + spots["wpos"].offset,
        rpos=mailbox_base + spots["rpos"].offset,
        risc_state=mailbox_base + spots["risc_state"].offset,
        processors=spots["risc_state"].size,
        lock=mailbox_base + spots["lock"].offset,
        data=mailbox_base + data.offset,
        size=data.size,
    )


@dataclass
class DevicePrintServer:
    """Drains a tile's shared ``DEVICE_PRINT`` buffer, as tt-metal's print server does.

    ``cores``: core name by processor index (``risc_id``). ``elf_for(core, is_kernel)``: the ELF
    whose strings a core's message refers to (the kernel it runs, or its firmware). Lines go to
    ``lines`` and ``echo`` as they complete, each with the cycle of the store that completed it.
    """

    buffer: SharedBuffer
    cores: list[str]
    elf_for: Callable[[str, bool], Path]
    echo: Callable[[PrintLine], None] | None = None
    disabled: frozenset[str] = frozenset()
    lines: list[PrintLine] = field(default_factory=list)
    kernel_ids: dict[str, int] = field(default_factory=dict)  # core -> the kernel id it announced
    before_echo: Callable[[], None] | None = None
    _partial: dict[str, str] = field(default_factory=dict)
    tables: dict[Path, StringTable] = field(default_factory=dict)  # by ELF path, read once
    wraps: int = 0  # wrap markers read (the writers went back to the start)
    skipped: int = 0  # kernel messages from a core that never announced its kernel

    def start(self, tile: Tile) -> None:
        """Zero the buffer with the starting magic in ``wpos`` and mark each processor enabled or
        disabled, as the server's ``WriteInitMagic`` and ``enable_print_buffers_for_core`` do."""
        b = self.buffer
        tile.write(b.address, STARTING_MAGIC.to_bytes(4, "little") + bytes(b.end - b.address - 4))
        states = bytes(
            PRINTING_DISABLED if core in self.disabled else KERNEL_NOT_PRINTED for core in self.cores
        )
        tile.write(b.risc_state, states[: b.processors])

    @property
    def pages(self) -> set[int]:
        return set(range(self.buffer.address // PAGE, (self.buffer.end - 1) // PAGE + 1))

    def stored(self, tile: Tile, address: int, size: int, cycle: int) -> None:
        """A store moved ``wpos`` (a message complete, a wrap, a writer waiting): read now."""
        if address < self.buffer.address + 4 and self.buffer.address < address + size:
            self.poll(tile, "", cycle)

    def poll(self, tile: Tile, core: str, cycle: int) -> None:
        b = self.buffer
        wpos, rpos = struct.unpack("<II", tile.read(b.address, 8))
        if wpos in (STARTING_MAGIC, DISABLED_MAGIC) or wpos == rpos or rpos == RESET_BUFFER_MAGIC:
            return  # nothing new, or the writer has yet to take up the reset
        stall = bool(wpos & WRITE_STALL_FLAG)
        wpos &= ~WRITE_STALL_FLAG
        if wpos > b.size or rpos > b.size:
            raise InvalidProgram(
                f"device print buffer at 0x{b.address:x}: wpos {wpos}, rpos {rpos} past its {b.size} bytes",
                cycle=cycle,
                value=wpos,
            )
        if rpos > wpos:  # the writer wrapped: the rest up to the end first
            self._messages(tile.read(b.data + rpos, b.size - rpos), cycle)
            rpos = 0
        if rpos < wpos:
            self._messages(tile.read(b.data + rpos, wpos - rpos), cycle)
            rpos = wpos
        # A writer waiting for room (bit 31 of wpos) is told to start afresh; tt-metal's server then
        # reads again at once, the emulated one when the writer next moves wpos (its store is caught).
        tile.l1_store(b.rpos, (RESET_BUFFER_MAGIC if stall else rpos).to_bytes(4, "little"), cycle)

    def poll_all(self, tile: Tile) -> None:
        self.poll(tile, "", max(c.time for c in tile.cores))

    def flush(self, tile: Tile) -> None:
        for core, text in self._partial.items():
            if text:
                self._emit(PrintLine(tile.core(core).time, core, text))
        self._partial.clear()

    def _messages(self, data: bytes, cycle: int) -> None:
        at = 0
        while at + 4 <= len(data):
            header = Header.from_word(int.from_bytes(data[at : at + 4], "little"))
            at += 4
            if header.is_wrap:
                self.wraps += 1
                return
            if header.risc_id >= len(self.cores):
                raise InvalidProgram(
                    f"device print: a message from processor {header.risc_id}, the tile has "
                    f"{len(self.cores)}",
                    cycle=cycle,
                    value=header.word,
                )
            core = self.cores[header.risc_id]
            if header.announces_kernel:
                self.kernel_ids[core] = header.info_id
                continue
            if at + header.payload > len(data):
                raise InvalidProgram(
                    f"device print: {core}'s {header.payload}-byte message runs past the written end",
                    core=core,
                    cycle=cycle,
                    value=header.word,
                )
            if header.is_kernel and core not in self.kernel_ids:
                # tt-metal's host learns a kernel's ELF from its announcement; without one (a core
                # whose printing is disabled) it cannot decode the message and passes over it.
                self.skipped += 1
                at += (header.payload + 3) // 4 * 4
                continue
            path = Path(self.elf_for(core, header.is_kernel))
            table = self.tables.get(path)
            if table is None:
                table = self.tables[path] = StringTable.from_elf(path)
            text = table.format(header.info_id, data[at : at + header.payload])
            at += (header.payload + 3) // 4 * 4
            *done, rest = (self._partial.get(core, "") + text).split("\n")
            self._partial[core] = rest
            for line in done:
                self._emit(PrintLine(cycle, core, line))

    def _emit(self, line: PrintLine) -> None:
        self.lines.append(line)
        if self.echo is not None:
            if self.before_echo is not None:
                self.before_echo()
            self.echo(line)
