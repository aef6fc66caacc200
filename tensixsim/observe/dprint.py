"""Kernel prints: tt-metal's DPRINT buffers, read on the host as its print server reads them.

Each core has a print buffer in L1 (tt-metal's ``DebugPrintMemLayout``, 204 bytes): a header of
``wpos`` (u32, where the core writes next), ``rpos`` (u32, how far the host has read), two u16 core
coordinates, then the data. The core appends type-tagged records, ``[type u8][size u8][payload]``,
and moves ``wpos`` past a record only once it is complete. When a record would not fit, the core
waits until the host has read everything (``rpos == wpos``), then starts again at 0 (both positions
0). ``wpos`` holding :data:`STARTING_MAGIC` (written by the host when its server starts) tells the
core to start at 0; :data:`DISABLED_MAGIC` tells it to print nothing. The type ids are the order of
``DPRINT_TYPES`` in tt-metal's ``hostdevcommon/dprint_common.h``; values print as a C++ ostream
prints them (``HEX``/``OCT``/``DEC`` change the base until changed back, ``SETW`` the width of the
next value only, ``SETPRECISION``/``FIXED``/``DEFAULTFLOAT`` the float format). 8-bit integers print
as numbers (as tt-metal's current server prints them; older ones printed a UINT8 as a character).

The host side here is :class:`PrintServer`. The tile write-protects the buffers' pages in every core,
so the store that moves a write position reaches the server at its own cycle: each line carries the
cycle of the store that completed it, whatever the scheduling quantum. (The tile also looks after
every slice and at the end of a run, for buffers written by other means.) The SDK's ``tensix_print.h`` writes
the same records into buffers of its own (:data:`tensixsim.sdk.layout.DPRINT_BASE`).

Newer tt-metal (``DEVICE_PRINT``, one buffer for all five cores and format strings kept in the
kernel ELF) is a different protocol, read by :mod:`tensixsim.observe.device_print`; :func:`firmware_buffers`
says so rather than misread it.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tensixsim.errors import InvalidProgram, Unimplemented
from tensixsim.mmio.memory import PAGE

if TYPE_CHECKING:
    from tensixsim.metal.dwarf import DebugInfo
    from tensixsim.tile import Tile

BUFFER_SIZE = 204  # DPRINT_BUFFER_SIZE, per core
WPOS, RPOS = 0, 4  # offsets in the header
HEADER_SIZE = 12  # wpos, rpos, core_x (u16), core_y (u16)
DATA_SIZE = BUFFER_SIZE - HEADER_SIZE
STARTING_MAGIC = 0x98989898  # DEBUG_PRINT_SERVER_STARTING_MAGIC
DISABLED_MAGIC = 0xF8F8F8F8  # DEBUG_PRINT_SERVER_DISABLED_MAGIC

# DPRINT_TYPES, in order (the enum DPrintTypeID numbers them from 0).
TYPE_NAMES = (
    "CSTR",
    "ENDL",
    "SETW",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "FLOAT32",
    "CHAR",
    "BFLOAT16",
    "SETPRECISION",
    "FIXED",
    "DEFAULTFLOAT",
    "HEX",
    "OCT",
    "DEC",
    "TILESLICE",
    "U32_ARRAY",
    "TYPED_U32_ARRAY",
)
TYPE_ID = {name: index for index, name in enumerate(TYPE_NAMES)}
ARRAY_RAW = 1  # TypedU32_ARRAY_Format_Raw, the element type of a plain word array
# Integer types: (struct format, bits).
_INTEGERS = {
    "UINT8": ("<B", 8),
    "UINT16": ("<H", 16),
    "UINT32": ("<I", 32),
    "UINT64": ("<Q", 64),
    "INT8": ("<b", 8),
    "INT16": ("<h", 16),
    "INT32": ("<i", 32),
    "INT64": ("<q", 64),
}


def records(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(type id, payload) of each record in ``data`` (a buffer's bytes from rpos to wpos)."""
    at = 0
    while at < len(data):
        if at + 2 > len(data):
            raise InvalidProgram(f"print buffer: a record header cut off at byte {at}", value=at)
        kind, size = data[at], data[at + 1]
        if at + 2 + size > len(data):
            raise InvalidProgram(
                f"print buffer: a {size}-byte record at byte {at} runs past the written end {len(data)}",
                value=size,
            )
        yield kind, bytes(data[at + 2 : at + 2 + size])
        at += 2 + size


@dataclass
class Formatter:
    """One core's ostream state and the line it is building."""

    base: int = 10
    width: int = 0  # applies to the next value only
    precision: int = 6
    fixed: bool = False
    line: str = ""

    def feed(self, kind: int, payload: bytes) -> list[str]:
        """Apply one record; the lines it completed."""
        name = TYPE_NAMES[kind] if kind < len(TYPE_NAMES) else None
        if name is None:
            raise InvalidProgram(f"print buffer: unknown record type {kind}", value=kind)
        if name == "CSTR":
            return self._text(self._pad(payload.split(b"\0", 1)[0].decode("utf-8", "replace")))
        if name == "ENDL":
            done, self.line = self.line, ""
            return [done]
        if name == "CHAR":
            return self._text(self._pad(payload[:1].decode("latin-1")))
        if name == "SETW":
            self.width = payload[0]
        elif name == "SETPRECISION":
            self.precision = payload[0]
        elif name in ("FIXED", "DEFAULTFLOAT"):
            self.fixed = name == "FIXED"
        elif name in ("HEX", "OCT", "DEC"):
            self.base = {"HEX": 16, "OCT": 8, "DEC": 10}[name]
        elif name in _INTEGERS:
            fmt, bits = _INTEGERS[name]
            (value,) = struct.unpack(fmt, payload[: struct.calcsize(fmt)])
            self.line += self._pad(self._integer(value, bits))
        elif name == "FLOAT32":
            self.line += self._pad(self._float(struct.unpack("<f", payload[:4])[0]))
        elif name == "BFLOAT16":
            bits = int.from_bytes(payload[:2], "little") << 16
            self.line += self._pad(self._float(struct.unpack("<f", bits.to_bytes(4, "little"))[0]))
        elif name in ("U32_ARRAY", "TYPED_U32_ARRAY"):
            self.line += self._array(
                name, struct.unpack(f"<{len(payload) // 4}I", payload[: len(payload) // 4 * 4])
            )
        else:  # TILESLICE: a tile's worth of data the emulator does not decode
            raise Unimplemented(f"print buffer: {name} records are not decoded yet", value=kind)
        return []

    def _array(self, name: str, words: tuple[int, ...]) -> str:
        """A U32_ARRAY is raw words; a TYPED_U32_ARRAY's last word is (type << 16) | subtype, type 1
        raw words, type 2 Tensix register data (not decoded here). Raw words print as ``0x...``
        each followed by a space, and leave the base at hexadecimal, as tt-metal's server does."""
        if name == "TYPED_U32_ARRAY":
            if not words:
                raise InvalidProgram("print buffer: a typed array without its type word")
            kind, words = words[-1] >> 16, words[:-1]
            if kind != ARRAY_RAW:
                raise Unimplemented(
                    f"print buffer: typed arrays of type {kind} are not decoded yet", value=kind
                )
        self.base = 16
        return "".join(f"0x{w:x} " for w in words)

    def _text(self, text: str) -> list[str]:
        *done, self.line = (self.line + text).split("\n")
        return done

    def _pad(self, text: str) -> str:
        width, self.width = self.width, 0
        return text.rjust(width)

    def _integer(self, value: int, bits: int) -> str:
        if self.base == 10:
            return str(value)
        value &= (1 << bits) - 1  # an ostream shows a negative number's bits in hex and octal
        return format(value, "x" if self.base == 16 else "o")

    def _float(self, value: float) -> str:
        if math.isnan(value):
            return "nan" if math.copysign(1, value) > 0 else "-nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if self.fixed:
            return f"{value:.{self.precision}f}"
        return f"{value:.{max(self.precision, 1)}g}"


@dataclass(frozen=True)
class PrintLine:
    """One line a core printed, and the cycle the host saw it at."""

    cycle: int
    core: str
    text: str

    def __str__(self) -> str:
        return f"{self.core} @{self.cycle}: {self.text}"


@dataclass(frozen=True)
class PrintBuffer:
    """Where one core's print buffer lies in L1."""

    core: str
    address: int


@dataclass
class PrintServer:
    """Drains the print buffers of a tile. ``echo`` gets each line as it completes."""

    buffers: dict[str, PrintBuffer]
    echo: Callable[[PrintLine], None] | None = None
    lines: list[PrintLine] = field(default_factory=list)
    before_echo: Callable[[], None] | None = None  # e.g. erase a status line the echo would run into
    _formatters: dict[str, Formatter] = field(default_factory=dict)

    def start(self, tile: Tile) -> None:
        """Tell every core its buffer is read, as tt-metal's print server does when it attaches a
        device (``WriteInitMagic`` in its dprint_server.cpp): the whole buffer zeroed, the starting
        magic in ``wpos``."""
        for buffer in self.buffers.values():
            tile.write(buffer.address, STARTING_MAGIC.to_bytes(4, "little") + bytes(BUFFER_SIZE - 4))

    @property
    def pages(self) -> set[int]:
        """The L1 pages the buffers lie in (the tile catches every store into them)."""
        return {
            page
            for b in self.buffers.values()
            for page in range(b.address // PAGE, (b.address + BUFFER_SIZE - 1) // PAGE + 1)
        }

    def stored(self, tile: Tile, address: int, size: int, cycle: int) -> None:
        """A core stored ``size`` bytes at ``address`` at ``cycle``: if that moved a buffer's write
        position (the last store of a record), read the buffer now, at that cycle."""
        for buffer in self.buffers.values():
            if address < buffer.address + WPOS + 4 and buffer.address + WPOS < address + size:
                self.poll(tile, buffer.core, cycle)

    def poll(self, tile: Tile, core: str, cycle: int) -> None:
        """Read what ``core`` wrote since the last look and mark it read."""
        buffer = self.buffers.get(core)
        if buffer is None:
            return
        l1 = tile.l1
        base = buffer.address
        wpos = int.from_bytes(l1[base + WPOS : base + WPOS + 4].tobytes(), "little")
        rpos = int.from_bytes(l1[base + RPOS : base + RPOS + 4].tobytes(), "little")
        if wpos in (STARTING_MAGIC, DISABLED_MAGIC) or wpos <= rpos:
            return
        if wpos > DATA_SIZE:
            raise InvalidProgram(
                f"{core}'s print buffer at 0x{base:x}: write position {wpos} past its {DATA_SIZE} bytes",
                core=core,
                cycle=cycle,
                value=wpos,
            )
        data = l1[base + HEADER_SIZE + rpos : base + HEADER_SIZE + wpos].tobytes()
        formatter = self._formatters.setdefault(core, Formatter())
        for kind, payload in records(data):
            for text in formatter.feed(kind, payload):
                self._emit(PrintLine(cycle, core, text))
        # Marked read through the tile, so a core parked waiting for room wakes.
        tile.l1_store(base + RPOS, wpos.to_bytes(4, "little"), cycle)

    def poll_all(self, tile: Tile) -> None:
        for core in self.buffers:
            self.poll(tile, core, tile.core(core).time)

    def flush(self, tile: Tile) -> None:
        """Emit the lines still unfinished (a core that printed without ENDL), at the core's cycle."""
        for core, formatter in self._formatters.items():
            if formatter.line:
                self._emit(PrintLine(tile.core(core).time, core, formatter.line))
                formatter.line = ""

    def _emit(self, line: PrintLine) -> None:
        self.lines.append(line)
        if self.echo is not None:
            if self.before_echo is not None:
                self.before_echo()
            self.echo(line)


def sdk_buffers(cores: Sequence[str], base: int) -> dict[str, PrintBuffer]:
    """The SDK's buffers: one per core, in core order from ``base``."""
    return {core: PrintBuffer(core, base + index * BUFFER_SIZE) for index, core in enumerate(cores)}


def firmware_buffers(debug: DebugInfo, mailbox_base: int, cores: Sequence[str]) -> dict[str, PrintBuffer]:
    """The buffers of tt-metal firmware, from its DWARF: ``mailboxes_t.dprint_buf.data[i]``, one
    ``DebugPrintMemLayout`` per core, ``cores`` in processor order (the index a kernel's
    ``get_hw_thread_idx()`` gives: BRISC, NCRISC, TRISC0..2 on Blackhole;
    :func:`tensixsim.metal.firmware.print_buffers` orders them from the firmware's enumerators).

    Generations: ttnn 0.67.4's firmware has these buffers (in a union with the shared
    ``DevicePrintMemoryLayout`` of its optional ``DEVICE_PRINT``); 0.81.1's has only the shared
    ``dprint_buf.buffer`` (:func:`tensixsim.observe.device_print.firmware_buffer`)."""
    if debug.has_field("mailboxes_t", "dprint_buf.buffer.aux.wpos"):
        raise Unimplemented(
            f"{debug.path}: this firmware uses DEVICE_PRINT (one buffer shared by the cores, format "
            "strings in the kernel ELF), not per-core DPRINT buffers: see tensixsim.observe.device_print"
        )
    if not debug.has_field("mailboxes_t", "dprint_buf.data[0].aux.wpos"):
        raise InvalidProgram(f"{debug.path}: no DPRINT buffers in mailboxes_t")
    size = debug.size_of("DebugPrintMemLayout")
    spots = [debug.field("DebugPrintMemLayout", path).offset for path in ("aux.wpos", "aux.rpos", "data")]
    if size != BUFFER_SIZE or spots != [WPOS, RPOS, HEADER_SIZE]:
        raise Unimplemented(
            f"{debug.path}: DPRINT buffers of {size} bytes with wpos, rpos, data at {spots} "
            f"(known: {BUFFER_SIZE} bytes, {[WPOS, RPOS, HEADER_SIZE]})",
            value=size,
        )
    return {
        core: PrintBuffer(core, mailbox_base + debug.field("mailboxes_t", f"dprint_buf.data[{index}]").offset)
        for index, core in enumerate(cores)
    }
