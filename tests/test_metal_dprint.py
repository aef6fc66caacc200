"""Kernel prints through the real tt-metal firmware: kernels built with ``metal_dprint.h`` write
tt-metal's type-tagged DPRINT records into the per-core buffers of the firmware's mailbox (ttnn
0.67.4), found from the firmware's DWARF; the host's print server decodes them.

The expected lines are written out by hand from what the kernel prints (tensixsim/sdk/examples/
metal/dprint_hello.c) and how a C++ ostream shows each value.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from conftest import TTNN_CACHE
from metal_prints import booted, print_kernels

from tensixsim import Tile, Unimplemented
from tensixsim.cli import main
from tensixsim.metal.firmware import (
    enable_firmware_prints,
    find_firmware_set,
    load_firmware,
    print_buffers,
)
from tensixsim.metal.launch import LaunchTimeout, Program, launch_program
from tensixsim.metal.wheel import precompiled_firmware
from tensixsim.observe.dprint import BUFFER_SIZE, DISABLED_MAGIC, STARTING_MAGIC

ROOT = Path(__file__).resolve().parent.parent
HELLO = ROOT / "tensixsim" / "sdk" / "examples" / "metal" / "dprint_hello.c"
PER_CORE_DPRINT = "0.67.4"  # the ttnn generation whose firmware keeps one DPRINT buffer per core
ARGS = {"brisc": [7, 3], "ncrisc": [9, 2]}  # the number to print, the count of i / i*i lines
LONG = "0123456789abcdefghijklmnopqrstuvwxyz" * 6  # 216 characters: more than one buffer holds


def expected(number: int, lines: int) -> list[str]:
    return [
        f"hello from kernel {number}",
        *(f"i={i} i*i={i * i:>4}" for i in range(lines)),
        f"{0xBEEF00 + number:x} -{number} -5000000000",  # hex, then decimal again
        "3.142 1.5",  # setprecision(3) fixed; defaultfloat bf16 0x3FC0
        f"0x1 0x2 0x{number:x} ",  # a word array: 0x.. and a space each
        LONG,
    ]


@pytest.fixture(scope="module")
def firmware():
    return find_firmware_set(precompiled_firmware(TTNN_CACHE, PER_CORE_DPRINT), "blackhole")


def kernels(loaded) -> dict[str, Path]:
    return print_kernels(HELLO, ARGS, loaded)


def test_the_buffers_are_the_mailbox_array_in_processor_order(firmware):
    _, loaded = booted(firmware)
    buffers = print_buffers(loaded)
    order = ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"]  # hw_thread.h's index order
    base = buffers["brisc"].address
    assert {core: b.address for core, b in buffers.items()} == {
        core: base + BUFFER_SIZE * i for i, core in enumerate(order)
    }
    mailbox = loaded.mailbox
    assert mailbox.base < base and base + 5 * BUFFER_SIZE <= mailbox.base + mailbox.size


def test_prints_from_two_cores_reach_the_host_with_core_and_cycle(firmware):
    tile, loaded = booted(firmware)
    echoed = []
    server = enable_firmware_prints(tile, loaded, echoed.append)
    start = max(c.time for c in tile.cores)
    state = launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
    assert state.waits_for_go(loaded.mailbox)
    assert server.lines == echoed
    for core, args in ARGS.items():
        mine = [line for line in server.lines if line.core == core]
        assert [line.text for line in mine] == expected(*args)
        cycles = [line.cycle for line in mine]
        assert start < cycles[0] and cycles[-1] <= state.cycles
        assert all(a < b for a, b in pairwise(cycles))


def test_print_cycles_do_not_depend_on_the_quantum(firmware):
    runs = []
    for quantum in (500, 5000):
        tile, loaded = booted(firmware, quantum)
        server = enable_firmware_prints(tile, loaded)
        launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
        runs.append(sorted((line.cycle, line.core, line.text) for line in server.lines))
    assert runs[0] == runs[1]


def test_a_core_whose_printing_is_disabled_prints_nothing_and_does_not_wait(firmware):
    tile, loaded = booted(firmware)
    server = enable_firmware_prints(tile, loaded)
    ncrisc = print_buffers(loaded)["ncrisc"].address
    # What tt-metal's host writes for a processor it does not print from.
    tile.write(ncrisc, DISABLED_MAGIC.to_bytes(4, "little") + bytes(BUFFER_SIZE - 4))
    state = launch_program(tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS))
    assert state.waits_for_go(loaded.mailbox)
    assert {line.core for line in server.lines} == {"brisc"}
    assert tile.read(ncrisc, BUFFER_SIZE) == DISABLED_MAGIC.to_bytes(4, "little") + bytes(BUFFER_SIZE - 4)


def test_the_host_starts_a_buffer_as_tt_metal_does(firmware):
    tile, loaded = booted(firmware)
    brisc = print_buffers(loaded)["brisc"].address
    tile.write(brisc, b"\x55" * BUFFER_SIZE)  # whatever was there
    enable_firmware_prints(tile, loaded)
    assert tile.read(brisc, BUFFER_SIZE) == STARTING_MAGIC.to_bytes(4, "little") + bytes(BUFFER_SIZE - 4)


def test_without_a_print_server_a_full_buffer_waits_forever(firmware):
    # As tt-metal's dprint.h warns: the buffers as the firmware load leaves them (zeroed, no magic)
    # take records nobody reads; when one would not fit, the core waits for the host, which never comes.
    tile, loaded = booted(firmware)
    with pytest.raises(LaunchTimeout):
        launch_program(
            tile, loaded, Program(kernels=kernels(loaded), runtime_args=ARGS), max_cycles=2_000_000
        )


def test_cli_metal_dprint(firmware, capsys):
    _, loaded = booted(firmware)
    elfs = kernels(loaded)
    folder = precompiled_firmware(TTNN_CACHE, PER_CORE_DPRINT)
    argv = ["metal", "--firmware", str(folder), "--quiet", "--dprint"]
    argv += ["--writer", str(elfs["brisc"]), "--writer-args", *map(str, ARGS["brisc"])]
    argv += ["--reader", str(elfs["ncrisc"]), "--reader-args", *map(str, ARGS["ncrisc"])]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    for core, args in ARGS.items():
        mine = [line for line in out if line.startswith(f"{core} @")]
        assert [line.split(": ", 1)[1] for line in mine] == expected(*args)


def test_firmware_without_per_core_buffers_is_named():
    newer = find_firmware_set(precompiled_firmware(TTNN_CACHE, "0.81.1"), "blackhole")
    tile = Tile("blackhole")
    loaded = load_firmware(tile, newer)
    with pytest.raises(Unimplemented, match="DEVICE_PRINT"):
        print_buffers(loaded)
