"""Kernel prints: the DPRINT record decoder against hand-built buffers, the host side of the buffer
protocol, and the SDK's print facility end to end on two cores.

The hand-built records follow tt-metal's format as its headers describe it: a type byte (the order
of DPRINT_TYPES in hostdevcommon/dprint_common.h, written out here as numbers), a size byte, the
payload; the expected text is what a C++ ostream prints for the same operations.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensixsim import InvalidProgram, MemoryFault, Tile, Unimplemented
from tensixsim.cli import main
from tensixsim.metal.dwarf import DebugInfo
from tensixsim.observe.dprint import (
    DISABLED_MAGIC,
    STARTING_MAGIC,
    Formatter,
    PrintBuffer,
    PrintServer,
    firmware_buffers,
    records,
)
from tensixsim.sdk.build import build
from tensixsim.sdk.layout import DPRINT_BASE

# DPrintTypeID values, from the enum's order.
CSTR, ENDL, SETW, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FLOAT32, CHAR = range(13)
BFLOAT16, SETPRECISION, FIXED, DEFAULTFLOAT, HEX, OCT, DEC, TILESLICE, U32_ARRAY, TYPED_U32_ARRAY = range(
    13, 23
)


def rec(kind: int, payload: bytes) -> bytes:
    return bytes([kind, len(payload)]) + payload


def text(s: str) -> bytes:
    return rec(CSTR, s.encode() + b"\0")


def u32(v: int) -> bytes:
    return rec(UINT32, struct.pack("<I", v))


def i32(v: int) -> bytes:
    return rec(INT32, struct.pack("<i", v))


def flag(kind: int, value: int = 0) -> bytes:
    return rec(kind, bytes([value]))


def f32(v: float) -> bytes:
    return rec(FLOAT32, struct.pack("<f", v))


def decode(data: bytes) -> list[str]:
    formatter = Formatter()
    lines = []
    for kind, payload in records(data):
        lines += formatter.feed(kind, payload)
    return [*lines, formatter.line] if formatter.line else lines


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (text("hello") + flag(ENDL), ["hello"]),
        (text("n=") + u32(42) + text(" m=") + i32(-7) + flag(ENDL), ["n=42 m=-7"]),
        (flag(SETW, 5) + u32(42) + u32(1), ["   421"]),  # the width holds for one value
        (
            flag(HEX) + u32(0xBEEF) + text(" ") + i32(-1) + flag(DEC) + text(" ") + u32(10),
            ["beef ffffffff 10"],
        ),
        (flag(OCT) + u32(8), ["10"]),
        (f32(0.1) + text(" ") + f32(1234567.0) + text(" ") + f32(2.5), ["0.1 1.23457e+06 2.5"]),
        (
            flag(SETPRECISION, 3)
            + flag(FIXED)
            + f32(3.14159)
            + flag(DEFAULTFLOAT)
            + text(" ")
            + f32(3.14159),
            ["3.142 3.14"],
        ),
        (
            rec(BFLOAT16, struct.pack("<H", 0x3FC0)) + text(" ") + rec(BFLOAT16, struct.pack("<H", 0xC040)),
            ["1.5 -3"],
        ),
        (
            rec(UINT8, b"\xc8")
            + text(" ")
            + rec(INT8, b"\xff")
            + text(" ")
            + rec(INT16, struct.pack("<h", -300)),
            ["200 -1 -300"],
        ),
        (
            rec(UINT64, struct.pack("<Q", 2**40)) + text(" ") + rec(INT64, struct.pack("<q", -(2**40))),
            ["1099511627776 -1099511627776"],
        ),
        (rec(CHAR, b"x") + rec(UINT16, struct.pack("<H", 65535)), ["x65535"]),
        (text("a\nb\n") + text("c"), ["a", "b", "c"]),  # a newline inside a string ends a line
        # Raw word arrays: "0x..." and a space each; the stream stays in hexadecimal after them.
        (rec(U32_ARRAY, struct.pack("<3I", 1, 2, 255)) + u32(26), ["0x1 0x2 0xff 1a"]),
        (rec(TYPED_U32_ARRAY, struct.pack("<3I", 4, 5, (1 << 16) | 0)), ["0x4 0x5 "]),  # last word: type
        (f32(float("inf")) + text(" ") + f32(float("-inf")), ["inf -inf"]),
    ],
)
def test_records_print_as_an_ostream_prints_them(data: bytes, expected: list[str]) -> None:
    assert decode(data) == expected


def test_a_record_cut_short_is_an_error():
    with pytest.raises(InvalidProgram, match="runs past the written end"):
        decode(text("hello")[:-2])
    with pytest.raises(InvalidProgram, match="unknown record type 60"):
        decode(rec(60, b"\0"))
    with pytest.raises(Unimplemented, match="TILESLICE"):
        decode(rec(TILESLICE, bytes(20)))
    with pytest.raises(Unimplemented, match="type 2"):  # Tensix register data
        decode(rec(TYPED_U32_ARRAY, struct.pack("<2I", 7, (2 << 16) | 5)))


def _buffer(tile: Tile, address: int, wpos: int, rpos: int, data: bytes) -> None:
    tile.write(address, struct.pack("<IIHH", wpos, rpos, 0, 0) + data)


def test_the_server_reads_from_rpos_to_wpos_and_marks_it_read():
    tile = Tile("blackhole")
    server = PrintServer({"ncrisc": PrintBuffer("ncrisc", 0x30000)})
    first = text("skipped") + flag(ENDL)
    data = first + text("seen ") + u32(3) + flag(ENDL) + text("half")
    _buffer(tile, 0x30000, len(data), len(first), data)
    server.poll(tile, "ncrisc", 77)
    assert [(line.cycle, line.core, line.text) for line in server.lines] == [(77, "ncrisc", "seen 3")]
    assert struct.unpack("<I", tile.read(0x30004, 4))[0] == len(data)  # rpos = wpos
    server.poll(tile, "ncrisc", 80)  # nothing new
    assert len(server.lines) == 1
    server.flush(tile)  # the unfinished line, at the core's cycle
    assert str(server.lines[-1]) == f"ncrisc @{tile.core('ncrisc').time}: half"


@pytest.mark.parametrize("magic", [STARTING_MAGIC, DISABLED_MAGIC])
def test_buffers_not_in_use_are_left_alone(magic):
    tile = Tile("blackhole")
    server = PrintServer({"brisc": PrintBuffer("brisc", 0x30000)})
    _buffer(tile, 0x30000, magic, 0, text("x"))
    server.poll(tile, "brisc", 1)
    assert server.lines == [] and struct.unpack("<I", tile.read(0x30004, 4))[0] == 0


def test_a_write_position_past_the_buffer_is_an_error():
    tile = Tile("blackhole")
    server = PrintServer({"brisc": PrintBuffer("brisc", 0x30000)})
    _buffer(tile, 0x30000, 500, 0, b"")
    with pytest.raises(InvalidProgram, match="past its 192 bytes") as caught:
        server.poll(tile, "brisc", 9)
    assert caught.value.core == "brisc" and caught.value.value == 500


PRINTER_C = """#include "tensixsim.h"
#include "tensix_print.h"

int main(void)
{
    print_str("hello from core ");
    print_u32(SDK_CORE_ID);
    print_endl();
    print_str("n=");
    print_i32(-5);
    print_str(" hex=");
    print_hex(0xdeadbeefu);
    print_char('!');
    print_endl();
    for (uint32_t i = 0; i < 40; i++) {  /* far more than one 192-byte buffer holds */
        print_str("line ");
        print_u32(i * 1000u + SDK_CORE_ID);
        print_endl();
    }
    print_str("two\\nlines\\n");
    return 0;
}
"""
CORE_IDS = {"trisc0": 2, "trisc1": 3}


def _printers(tmp_path: Path) -> dict[str, Path]:
    source = tmp_path / "printer.c"
    source.write_text(PRINTER_C)
    return {core: build(core, [source], tmp_path / f"{core}.elf") for core in CORE_IDS}


def _expected(core_id: int) -> list[str]:
    lines = [f"hello from core {core_id}", "n=-5 hex=deadbeef!"]
    return [*lines, *(f"line {i * 1000 + core_id}" for i in range(40)), "two", "lines"]


def _run_printers(elfs: dict[str, Path], quantum: int) -> tuple[list, object]:
    tile = Tile("blackhole", quantum=quantum)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    echoed = []
    server = tile.enable_prints(echo=echoed.append)
    result = tile.run(release=list(CORE_IDS))
    assert server.lines == echoed
    return server.lines, result


def test_sdk_prints_from_two_cores_reach_the_host(tmp_path):
    lines, result = _run_printers(_printers(tmp_path), 2000)
    for core, core_id in CORE_IDS.items():
        mine = [line for line in lines if line.core == core]
        assert [line.text for line in mine] == _expected(core_id)
        cycles = [line.cycle for line in mine]
        assert cycles == sorted(cycles) and cycles[-1] <= result.cores[core].cycles
        # The cycle of the store that completed the line, not of a slice boundary after it.
        assert 0 < cycles[0] < 2000
        assert all(a < b for a, b in pairwise(cycles[:-1]))  # one line each
        assert cycles[-2] == cycles[-1]  # "two\nlines\n": one record, two lines
        assert result.cores[core].exit_code == 0


def test_print_cycles_do_not_depend_on_the_quantum(tmp_path):
    elfs = _printers(tmp_path)
    runs = [_run_printers(elfs, quantum) for quantum in (300, 2000, 9000)]
    canonical = [sorted((line.cycle, line.core, line.text) for line in lines) for lines, _ in runs]
    assert canonical[0] == canonical[1] == canonical[2]
    assert runs[0][1].cycles == runs[1][1].cycles == runs[2][1].cycles


def test_prints_start_afresh_after_a_reset(tmp_path):
    elfs = _printers(tmp_path)
    tile = Tile("blackhole")
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    server = tile.enable_prints()
    tile.run(release=["trisc0"])
    tile.reset()
    tile.run(release=["trisc0"])
    texts = [line.text for line in server.lines]
    assert texts == _expected(2) * 2


def test_without_a_reading_host_the_sdk_prints_nothing_and_never_waits(tmp_path):
    tile = Tile("blackhole")
    for core, elf in _printers(tmp_path).items():
        tile.load_elf(core, elf)
    result = tile.run(release=list(CORE_IDS), max_cycles=1_000_000)
    assert all(result.cores[core].exit_code == 0 for core in CORE_IDS)
    assert tile.read(DPRINT_BASE, 5 * 204) == bytes(5 * 204)  # not one byte written


def test_cli_dprint_prints_the_lines_with_core_and_cycle(tmp_path, capsys):
    elfs = _printers(tmp_path)
    assert main(["run", "--trisc0", str(elfs["trisc0"]), "--dprint"]) == 0
    out = capsys.readouterr().out.splitlines()
    prints = [line for line in out if line.startswith("trisc0 @")]
    assert [line.split(": ", 1)[1] for line in prints] == _expected(2)
    assert out.index(prints[-1]) < next(i for i, line in enumerate(out) if line.startswith("core "))


LAYOUT_C = """#include <stdint.h>
/* The shape of tt-metal's mailbox as far as DPRINT goes (the emulator reads it from DWARF). */
typedef struct {
    struct { uint32_t wpos; uint32_t rpos; uint16_t core_x; uint16_t core_y; } __attribute__((packed)) aux;
    uint8_t data[204 - 12];
} __attribute__((packed)) DebugPrintMemLayout;
typedef struct { DebugPrintMemLayout data[5]; uint32_t pad; } dprint_buf_msg_t;
typedef struct { uint32_t launch[33]; dprint_buf_msg_t dprint_buf; } mailboxes_t;
volatile mailboxes_t mailboxes_image;
int main(void) { return (int)mailboxes_image.launch[0]; }
"""


def test_the_firmware_layout_comes_from_dwarf(tmp_path):
    source = tmp_path / "layout.c"
    source.write_text(LAYOUT_C)
    debug = DebugInfo(build("trisc0", [source], tmp_path / "layout.elf"))
    cores = ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"]
    buffers = firmware_buffers(debug, 0x60, cores)
    assert {c: b.address for c, b in buffers.items()} == {
        c: 0x60 + 132 + 204 * i for i, c in enumerate(cores)
    }


CACHE = Path(__file__).resolve().parent.parent / ".cache" / "ttnn"


def test_device_print_firmware_has_no_per_core_buffers():
    from tensixsim.metal.firmware import find_firmware_set
    from tensixsim.metal.wheel import precompiled_firmware

    firmware = find_firmware_set(precompiled_firmware(CACHE), "blackhole")
    with pytest.raises(Unimplemented, match="DEVICE_PRINT"):
        firmware_buffers(firmware.debug("brisc"), 0x60, ["brisc"])


FAULT_AFTER_PRINT_C = """#include "tensixsim.h"
#include "tensix_print.h"

int main(void)
{
    print_str("about to fail");
    print_endl();
    *(volatile uint32_t *)0xFFF00000u = 1;
    return 0;
}
"""


def test_what_was_printed_before_an_error_still_reaches_the_host(tmp_path):
    source = tmp_path / "fails.c"
    source.write_text(FAULT_AFTER_PRINT_C)
    tile = Tile("blackhole")
    tile.load_elf("trisc0", build("trisc0", [source], tmp_path / "fails.elf"))
    server = tile.enable_prints()
    with pytest.raises(MemoryFault):
        tile.run(release=["trisc0"], max_cycles=100_000)
    assert [line.text for line in server.lines] == ["about to fail"]


def test_a_line_erases_the_progress_line_before_it_is_echoed(tmp_path, monkeypatch):
    events = []

    class Line:
        def update(self, tile):
            pass

        def close(self):
            events.append("erase")

    monkeypatch.setattr("tensixsim.tile.progress_for", lambda stream: Line())
    tile = Tile("blackhole")
    for core, elf in _printers(tmp_path).items():
        tile.load_elf(core, elf)
    tile.enable_prints(echo=lambda line: events.append(line.text))
    tile.run(release=["trisc0"], progress=sys.stderr)  # (the stand-in above draws nothing)
    first = events.index("hello from core 2")
    assert events[first - 1] == "erase"


# ---- against the C library: an ostream formats numbers as printf does (%d, %x, %o, %g, %f)
_libc = ctypes.CDLL(None)


def printf(spec: str, *args) -> str:
    out = ctypes.create_string_buffer(128)
    _libc.snprintf(out, 128, spec.encode(), *args)
    return out.value.decode()


@given(st.integers(-(2**31), 2**31 - 1), st.sampled_from([(DEC, "%d"), (HEX, "%x"), (OCT, "%o")]))
def test_int32_in_each_base_prints_as_printf_does(value, base):
    kind, spec = base
    assert decode(flag(kind) + i32(value)) == [printf(spec, ctypes.c_int32(value))]


@given(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.integers(1, 9),
    st.booleans(),
)
def test_float32_prints_as_printf_does(value, precision, fixed):
    data = flag(SETPRECISION, precision) + (flag(FIXED) if fixed else b"") + f32(value)
    spec = f"%.{precision}{'f' if fixed else 'g'}"
    assert decode(data) == [printf(spec, ctypes.c_double(value))]


# metal_dprint.h (the header kernels on tt-metal firmware print with) on bare metal, its buffer
# where the SDK's host server reads: a string longer than the buffer goes in pieces, the core
# waiting for the host between them.
LONG_PRINTER_C = """#include "tensixsim.h"
#define DPRINT_BUFFER (%d + SDK_CORE_ID * %d)
#include "metal_dprint.h"

int main(void)
{
    dprint_str("%s");
    dprint_endl();
    dprint_u32(SDK_CORE_ID);
    dprint_endl();
    return 0;
}
"""
LONG_TEXT = "0123456789abcdefghijklmnopqrstuvwxyz" * 6  # 216 characters: two pieces


@pytest.mark.parametrize("quantum", [5, 40, 2000])
def test_a_string_longer_than_the_buffer_reaches_the_host_whenever_it_reads(tmp_path, quantum):
    # Two cores printing at once cut each other's slices at every L1 access, so the host reads the
    # buffers between almost any two stores. The header used to reset rpos before wpos between two
    # pieces: a host reading then found rpos < wpos over bytes the next piece was overwriting.
    source = tmp_path / "long_printer.c"
    source.write_text(LONG_PRINTER_C % (DPRINT_BASE, 204, LONG_TEXT))
    cores = {"trisc0": 2, "trisc1": 3}
    tile = Tile("blackhole", quantum=quantum, l1_order=True)
    for core in cores:
        tile.load_elf(core, build(core, [source], tmp_path / f"{core}.elf"))
    server = tile.enable_prints()
    tile.run(release=list(cores))
    for core, core_id in cores.items():
        assert [line.text for line in server.lines if line.core == core] == [LONG_TEXT, str(core_id)]
