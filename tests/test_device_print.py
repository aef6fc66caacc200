"""DEVICE_PRINT (tt-metal's shared print buffer, ttnn 0.81.1): the message decoder against hand-built
messages and hand-worked texts, the host side of the buffer protocol, and kernels built with
``metal_device_print.h`` printing through the real firmware from two cores.

References: the header's bit-fields are checked against a ctypes structure (laid out by the C ABI,
as GCC lays out DevicePrintHeader); fmt's f/e/g/d/x/o presentations against the C library's printf;
the shortest float form against hand-worked values of fmt's rule (fixed notation for decimal
exponents in [-4, 7) for float, [-4, 16) for double, scientific otherwise).
"""

from __future__ import annotations

import ctypes
import struct
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import TTNN_CACHE
from hypothesis import given
from hypothesis import strategies as st
from metal_prints import booted, print_kernels

from tensixsim import InvalidProgram, Tile, Unimplemented
from tensixsim.cli import main
from tensixsim.metal.firmware import enable_firmware_prints, find_firmware_set
from tensixsim.metal.launch import Program, launch_program
from tensixsim.metal.wheel import precompiled_firmware
from tensixsim.observe.device_print import (
    RESET_BUFFER_MAGIC,
    WRITE_STALL_FLAG,
    DevicePrintServer,
    Header,
    SharedBuffer,
    StringTable,
    format_value,
    parse_format,
    read_arguments,
)
from tensixsim.observe.dprint import STARTING_MAGIC

ROOT = Path(__file__).resolve().parent.parent
HELLO = ROOT / "tensixsim" / "sdk" / "examples" / "metal" / "device_print_hello.c"
DEVICE_PRINT_VERSION = "0.81.1"


# ---------------------------------------------------------------------------- the header
class _CHeader(ctypes.LittleEndianStructure):
    _fields_ = [
        ("is_kernel", ctypes.c_uint32, 1),
        ("risc_id", ctypes.c_uint32, 5),
        ("message_payload", ctypes.c_uint32, 10),
        ("info_id", ctypes.c_uint32, 16),
    ]


@given(st.integers(0, 2**32 - 1))
def test_the_header_fields_are_the_c_bit_fields(word):
    c = _CHeader.from_buffer_copy(word.to_bytes(4, "little"))
    h = Header.from_word(word)
    assert (h.is_kernel, h.risc_id, h.payload, h.info_id) == (
        bool(c.is_kernel),
        c.risc_id,
        c.message_payload,
        c.info_id,
    )
    assert h.word == word


def test_wrap_and_kernel_headers():
    assert Header.from_word(0xFFFF << 16).is_wrap
    assert not Header.from_word(0xFFFF << 16 | 1).is_wrap
    announce = Header.from_word(1 | 2 << 1 | 1023 << 6 | 17 << 16)
    assert announce.announces_kernel and announce.info_id == 17 and announce.risc_id == 2


# ---------------------------------------------------------------------------- formats
def render(fmt: str, payload: bytes, strings=lambda a: f"<{a:x}>") -> str:
    parts = parse_format(fmt)
    values = read_arguments(parts, payload)
    return "".join(
        p if isinstance(p, str) else format_value(p.kind, values[p.slot], p.spec, strings) for p in parts
    )


@pytest.mark.parametrize(
    ("fmt", "payload", "expected"),
    [
        ("plain {{braces}}\n", b"", "plain {braces}\n"),
        ("n={0,I} m={1,i}", struct.pack("<Ii", 42, -7), "n=42 m=-7"),
        ("{1,I}/{0,I}", struct.pack("<II", 1, 2), "2/1"),  # slots, not order of appearance
        ("[{0,I:>5}][{0,I:<5}][{0,I:^5}][{0,I:*^6}]", struct.pack("<I", 42), "[   42][42   ][ 42  ][**42**]"),
        ("{0,I:#x} {0,I:X} {0,I:08b} {0,I:#B}", struct.pack("<I", 0xAB), "0xab AB 10101011 0B10101011"),
        ("{0,i:+d} {1,i:+05d} {2,B:c}", struct.pack("<iiB", 5, -3, 65), "+5 -0003 A"),
        ("{0,q} {1,Q} {2,h} {3,H} {4,b}", struct.pack("<qQhHb", -(2**40), 2**63, -300, 65535, -1),
         f"{-(2**40)} {2**63} -300 65535 -1"),
        ("{0,f:.3f} {1,d:.2e} {2,f:8.2f}|", struct.pack("<fdf", 3.14159, 12345.678, 2.5)[:0]
         + struct.pack("<f", 3.14159) + struct.pack("<d", 12345.678) + struct.pack("<f", 2.5),
         "3.142 1.23e+04     2.50|"),
        ("{0,?} {1,?} {0,?:>6}", bytes([1, 0]), "true false   true"),
        ("{0,w} {1,w}", struct.pack("<HH", 0x3FC0, 0xC040), "1.5 -3"),  # bf16: the top half of a float
        ("{0,p}", struct.pack("<I", 0x1234), "0x1234"),
        ("{0,s}!", struct.pack("<I", 0x6400010), "<6400010>!"),
        ("{0,f:.3}", struct.pack("<f", 1.0), "1"),  # no presentation, a precision: general format
    ],
)  # fmt: skip
def test_messages_format_as_fmt_does(fmt, payload, expected):
    assert render(fmt, payload) == expected


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("f", 0.1, "0.1"),
        ("f", 1.0, "1"),
        ("f", -0.0, "-0"),
        ("f", 0.0001, "0.0001"),
        ("f", 0.00001, "1e-05"),
        ("f", 1234567.0, "1234567"),
        ("f", 1e7, "1e+07"),
        ("f", 16777216.0, "1.6777216e+07"),
        ("f", 1.5e-5, "1.5e-05"),
        ("f", float("inf"), "inf"),
        ("f", float("-inf"), "-inf"),
        ("d", 0.1, "0.1"),
        ("d", 1e15, "1000000000000000"),
        ("d", 1e16, "1e+16"),
        ("d", 123456.789, "123456.789"),
    ],
)
def test_the_shortest_float_form(kind, value, expected):
    assert format_value(kind, value, "", str) == expected


_libc = ctypes.CDLL(None)


def printf(spec: str, value) -> str:
    out = ctypes.create_string_buffer(128)
    _libc.snprintf(out, 128, spec.encode(), value)
    return out.value.decode()


@given(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.integers(0, 9),
    st.sampled_from("feEgG"),
    st.sampled_from(["", "+", " "]),
)
def test_float_presentations_print_as_printf_does(value, precision, kind, sign):
    payload = struct.pack("<f", value)
    assert render(f"{{0,f:{sign}.{precision}{kind}}}", payload) == printf(
        f"%{sign}.{precision}{kind}", ctypes.c_double(struct.unpack("<f", payload)[0])
    )


@given(st.integers(-(2**31), 2**31 - 1), st.sampled_from("dxXo"), st.integers(0, 12))
def test_integer_presentations_print_as_printf_does(value, kind, width):
    c = ctypes.c_int32(value) if kind == "d" else ctypes.c_uint32(value & 0xFFFFFFFF)
    fmt_type = "i" if kind == "d" else "I"
    payload = struct.pack("<i" if kind == "d" else "<I", c.value)
    assert render(f"{{0,{fmt_type}:{width}{kind}}}", payload) == printf(f"%{width}{kind}", c)


def test_bad_and_unsupported_messages_are_named():
    with pytest.raises(InvalidProgram, match="ends before argument 1"):
        render("{0,I}{1,I}", bytes(4))
    with pytest.raises(InvalidProgram, match="bad placeholder"):
        render("{x}", b"")
    with pytest.raises(Unimplemented, match="typed arrays"):
        render("{0,A}", bytes(8))
    with pytest.raises(Unimplemented, match="enums"):
        render("{0,/e_I_Color}", bytes(4))
    with pytest.raises(Unimplemented, match="octal prefix"):
        render("{0,I:#o}", bytes(4))


# ---------------------------------------------------------------------------- the host side
BUFFER = SharedBuffer(address=0x40000, rpos=0x40004, risc_state=0x40008, processors=5, lock=0x40010,
                      data=0x40014, size=1000)  # fmt: skip
FAKE_ELF = Path("kernel.elf")


def _server(tile: Tile, formats: list[str]) -> DevicePrintServer:
    strings = b"".join(f.encode() + b"\0" for f in formats)
    starts = [0x6400000 + sum(len(f) + 1 for f in formats[:i]) for i in range(len(formats))]
    table = StringTable(FAKE_ELF, [(a, 0, 0) for a in starts], 0x6400000, strings)
    server = DevicePrintServer(
        BUFFER, ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"], lambda c, k: FAKE_ELF
    )
    server.tables[FAKE_ELF] = table
    tile.enable_prints(server=server)
    return server


def message(risc: int, info: int, payload: bytes = b"", kernel: bool = True) -> bytes:
    payload += bytes(-len(payload) % 4)
    return struct.pack("<I", Header(kernel, risc, len(payload), info).word) + payload


def announce(risc: int, kernel_id: int = 3) -> bytes:
    return struct.pack("<I", Header(True, risc, 1023, kernel_id).word)


def _positions(tile: Tile) -> tuple[int, int]:
    return struct.unpack("<II", tile.read(BUFFER.address, 8))


def test_the_host_starts_the_buffer_as_tt_metal_does():
    tile = Tile("blackhole")
    tile.write(BUFFER.address, b"\x55" * (BUFFER.end - BUFFER.address))
    server = _server(tile, ["x\n"])
    assert tile.read(BUFFER.address, 4) == STARTING_MAGIC.to_bytes(4, "little")
    assert tile.read(BUFFER.address + 4, BUFFER.end - BUFFER.address - 4) == bytes(
        BUFFER.end - BUFFER.address - 4
    )
    server.poll(tile, "", 1)  # starting magic: nothing to read
    assert server.lines == []


def test_messages_from_rpos_to_wpos_and_the_announcement_first():
    tile = Tile("blackhole")
    server = _server(tile, ["n={0,I}\n", "half "])
    data = (
        announce(1)
        + message(1, 0, struct.pack("<I", 5))
        + message(1, 1)
        + announce(0)
        + message(0, 0, bytes(4))
    )
    tile.write(BUFFER.data, data)
    tile.write(BUFFER.address, struct.pack("<II", len(data), 0))
    server.poll(tile, "", 50)
    assert [(line.cycle, line.core, line.text) for line in server.lines] == [
        (50, "ncrisc", "n=5"),
        (50, "brisc", "n=0"),
    ]
    assert server.kernel_ids == {"ncrisc": 3, "brisc": 3}
    assert _positions(tile) == (len(data), len(data))
    server.flush(tile)  # "half " was never ended
    assert server.lines[-1].text == "half " and server.lines[-1].core == "ncrisc"


def test_a_kernel_message_before_any_announcement_is_passed_over():
    tile = Tile("blackhole")
    server = _server(tile, ["skipped\n", "seen\n"])
    data = message(2, 0) + announce(2) + message(2, 1)
    tile.write(BUFFER.data, data)
    tile.write(BUFFER.address, struct.pack("<II", len(data), 0))
    server.poll(tile, "", 1)
    assert [line.text for line in server.lines] == ["seen"] and server.skipped == 1


def test_a_wrapped_buffer_is_read_to_the_wrap_marker_then_from_the_start():
    tile = Tile("blackhole")
    server = _server(tile, ["tail\n", "head\n"])
    tail = announce(0) + message(0, 0)
    tile.write(BUFFER.data + 980, tail + struct.pack("<I", Header(False, 0, 0, 0xFFFF).word) + b"junk")
    head = message(0, 1)
    tile.write(BUFFER.data, head)
    tile.write(BUFFER.address, struct.pack("<II", len(head), 980))  # rpos > wpos: the writer wrapped
    server.poll(tile, "", 7)
    assert [line.text for line in server.lines] == ["tail", "head"] and server.wraps == 1
    assert _positions(tile) == (len(head), len(head))


def test_a_waiting_writer_is_told_to_start_afresh():
    tile = Tile("blackhole")
    server = _server(tile, ["a\n"])
    data = announce(0) + message(0, 0)
    tile.write(BUFFER.data, data)
    tile.write(BUFFER.address, struct.pack("<II", len(data) | WRITE_STALL_FLAG, 0))
    server.poll(tile, "", 3)
    assert [line.text for line in server.lines] == ["a"]
    assert _positions(tile) == (len(data) | WRITE_STALL_FLAG, RESET_BUFFER_MAGIC)


def test_corrupt_buffers_are_named():
    tile = Tile("blackhole")
    server = _server(tile, ["a\n"])
    tile.write(BUFFER.data, message(9, 0))
    tile.write(BUFFER.address, struct.pack("<II", 4, 0))
    with pytest.raises(InvalidProgram, match="processor 9"):
        server.poll(tile, "", 3)
    tile.write(BUFFER.data, announce(0) + struct.pack("<I", Header(True, 0, 64, 0).word))
    tile.write(BUFFER.address, struct.pack("<II", 8, 0))
    with pytest.raises(InvalidProgram, match="runs past the written end"):
        server.poll(tile, "", 3)
    tile.write(BUFFER.address, struct.pack("<II", 5000, 0))
    with pytest.raises(InvalidProgram, match="past its 1000 bytes"):
        server.poll(tile, "", 3)


# ---------------------------------------------------------------------------- through the firmware
ARGS = {"brisc": [7, 60], "ncrisc": [9, 50]}  # enough lines that the 1000-byte buffer wraps


def expected(number: int, lines: int) -> list[str]:
    return [
        f"hello from kernel {number}",
        *(f"i={i} i*i={i * i:>4}" for i in range(lines)),
        f"-5000000000 0x{0xBEEF00 + number:x} -{number} -300 200",
        "1.23e+04 3.142 0.1 1.5 true",
        "name:  right|{}",
        "two",
        "lines",
    ]


@pytest.fixture(scope="module")
def firmware():
    return find_firmware_set(precompiled_firmware(TTNN_CACHE, DEVICE_PRINT_VERSION), "blackhole")


def kernels(loaded) -> dict[str, Path]:
    return print_kernels(HELLO, ARGS, loaded)


def test_prints_from_two_cores_through_the_shared_buffer(firmware):
    tile, loaded = booted(firmware)
    echoed = []
    server = enable_firmware_prints(tile, loaded, echoed.append)
    assert isinstance(server, DevicePrintServer)
    start = max(c.time for c in tile.cores)
    state = launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
    assert state.waits_for_go(loaded.mailbox)
    assert server.lines == echoed
    for core, args in ARGS.items():
        mine = [line for line in server.lines if line.core == core]
        assert [line.text for line in mine] == expected(*args)
        cycles = [line.cycle for line in mine]
        assert start < cycles[0] and cycles[-1] <= state.cycles
        assert all(a <= b for a, b in pairwise(cycles))
    assert server.wraps >= 1 and server.skipped == 0
    assert server.kernel_ids == {"brisc": 0, "ncrisc": 0}  # watcher ids: the launch writes none


def test_device_print_cycles_do_not_depend_on_the_quantum(firmware):
    # (Quanta of 2000 and more: with 500 this firmware's boot itself ends 264 cycles later.)
    runs = []
    for quantum in (2000, 9000):
        tile, loaded = booted(firmware, quantum)
        server = enable_firmware_prints(tile, loaded)
        launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
        runs.append(sorted((line.cycle, line.core, line.text) for line in server.lines))
    assert runs[0] == runs[1]


def test_a_core_whose_printing_is_disabled_is_not_decoded(firmware):
    tile, loaded = booted(firmware)
    server = enable_firmware_prints(tile, loaded)
    server.disabled = frozenset({"ncrisc"})
    server.start(tile)  # as the host writes PrintingDisabled for a processor it does not print from
    launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
    assert {line.core for line in server.lines} == {"brisc"}
    assert server.skipped == len(expected(*ARGS["ncrisc"])) - 1  # "two\nlines\n" is one message


def test_cli_metal_dprint_on_device_print_firmware(firmware, capsys):
    _, loaded = booted(firmware)
    elfs = kernels(loaded)
    folder = precompiled_firmware(TTNN_CACHE, DEVICE_PRINT_VERSION)
    argv = ["metal", "--firmware", str(folder), "--quiet", "--dprint"]
    argv += ["--writer", str(elfs["brisc"]), "--writer-args", *map(str, ARGS["brisc"])]
    argv += ["--reader", str(elfs["ncrisc"]), "--reader-args", *map(str, ARGS["ncrisc"])]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    for core, args in ARGS.items():
        mine = [line for line in out if line.startswith(f"{core} @")]
        assert [line.split(": ", 1)[1] for line in mine] == expected(*args)
