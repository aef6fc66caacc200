"""Another core's local RAM through its tile-wide window (mmio/local_ram.py): the bytes are the
owner's, and every core's loads share one path, RiscvTiming.remote_fabric cycles a load, granted
first come, first served in (cycle, core) order, so the cycles do not depend on the quantum."""

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.arch import get_arch
from tensixsim.timing import RISCV

ARCH = get_arch("blackhole")
CODE = {"brisc": 0x0, "ncrisc": 0x12000, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000}
WINDOW = {c.name: c.local_ram_alias for c in ARCH.cores}
WALL = 0xFFB121F0  # the wall clock's low word


def _timed_loads(window: int, loads: int) -> str:
    """``loads`` independent loads from ``window``, the wall clock read before and after, the
    difference stored at 0x30000 + 4 * core (a0 holds that address)."""
    body = "\n".join(f"lw t{1 + i % 3}, {4 * (i % 8)}(s2)" for i in range(loads))
    return f"""
        li s2, {window}
        li s3, {WALL}
        lw s4, 0(s3)
        {body}
        lw s5, 0(s3)
        sub s5, s5, s4
        sw s5, 0(a0)
        ecall
    """


def run(readers: dict[str, str], quantum: int = 1000) -> tuple[dict[str, int], dict[str, int]]:
    """Each reader runs its program; returns (wall-clock interval each stored, each core's cycles)."""
    tile = Tile("blackhole", quantum=quantum)
    for i, (core, text) in enumerate(readers.items()):
        tile.write(CODE[core], assemble(f"li a0, {0x30000 + 4 * i}\n" + text, base=CODE[core]))
    result = tile.run(release=list(readers), max_cycles=10**6)
    intervals = {c: int.from_bytes(tile.read(0x30000 + 4 * i, 4), "little") for i, c in enumerate(readers)}
    return intervals, {c: result.cores[c].cycles for c in readers}


def test_loads_read_the_owners_bytes_at_every_width_and_stores_land_there() -> None:
    tile = Tile("blackhole")
    tile.local_ram["trisc1"][:8] = np.frombuffer(bytes.fromhex("0123456789abcdef"), np.uint8)
    window = WINDOW["trisc1"]
    program = f"""
        li s2, {window}
        li a0, 0x30000
        lw t0, 0(s2)
        sw t0, 0(a0)
        lhu t0, 6(s2)
        sw t0, 4(a0)
        lb t0, 7(s2)
        sw t0, 8(a0)
        li t1, 0x5a
        sb t1, 2(s2)
        li t1, 0x1234
        sh t1, 4(s2)
        ecall
    """
    tile.write(0, assemble(program))
    tile.run(release=["brisc"], max_cycles=10**5)
    words = np.frombuffer(tile.read(0x30000, 12), np.uint32).tolist()
    assert words == [0x67452301, 0xEFCD, 0xFFFFFFEF]  # lb sign-extends 0xef
    assert tile.local_ram["trisc1"][:8].tobytes() == bytes.fromhex("01235a673412cdef")


def test_two_cores_loading_at_once_share_the_path_one_load_per_turn() -> None:
    # Alone, a core's own two reads in flight bound it; two cores issuing back-to-back loads at the
    # same time take one turn of the path each, remote_fabric cycles apart.
    loads = 32
    alone, _ = run({"brisc": _timed_loads(WINDOW["trisc0"], loads)})
    both, _ = run({c: _timed_loads(WINDOW["trisc0"], loads) for c in ("brisc", "ncrisc")})
    assert alone["brisc"] < 2 * RISCV.remote_fabric * loads
    for core in ("brisc", "ncrisc"):
        assert both[core] >= 2 * RISCV.remote_fabric * (loads - 2)
        assert both[core] <= 2 * RISCV.remote_fabric * (loads + 2)


def test_waiting_cores_are_served_first_come_first_served() -> None:
    # Five cores loading without pause: each waits for the four others' turns, whichever core it is
    # (the first to ask finishes first, at most a round of turns ahead of the last).
    loads = 24
    got, _ = run({c: _timed_loads(WINDOW["brisc"], loads) for c in CODE})
    spread = max(got.values()) - min(got.values())
    assert min(got.values()) >= 5 * RISCV.remote_fabric * (loads - 2)
    assert spread <= 2 * 5 * RISCV.remote_fabric


@settings(max_examples=25, deadline=None)  # each example builds two tiles
@given(
    cores=st.lists(st.sampled_from(sorted(CODE)), min_size=2, max_size=5, unique=True),
    owner=st.sampled_from(sorted(CODE)),
    loads=st.integers(1, 12),
    quantum=st.sampled_from([3, 17, 200]),
)
def test_the_cycles_do_not_depend_on_the_quantum(cores, owner, loads, quantum) -> None:
    programs = {c: _timed_loads(WINDOW[owner], loads + i) for i, c in enumerate(cores)}
    assert run(programs, quantum) == run(programs, 1000)


def _counted_loads(window: int, iterations: int) -> str:
    """A counted loop loading from ``window``; the loads' last value and the count left stored."""
    return f"""
        li s2, {window}
        li t6, {iterations}
    1:  beqz t6, 2f
        lw t1, 0(s2)
        addi t6, t6, -1
        j 1b
    2:  sw t1, 0(a0)
        sw t6, 64(a0)
        ecall
    """


@pytest.mark.parametrize("quantum", [5, 1000])
@pytest.mark.parametrize("pair", [("brisc", "ncrisc"), ("trisc0", "trisc1")])
def test_two_loops_taking_turns_on_the_path_are_no_deadlock(pair, quantum) -> None:
    # Each core reads the other's local RAM in a counted loop: they take turns on the path, every
    # other slice of each one held back before its load with nothing retired. Those slices repeat
    # the core's state without it spinning: the run ends, every load done, in both cores' figures
    # (8 cycles an iteration each: remote_fabric twice).
    tile = Tile("blackhole", quantum=quantum)
    for i, (core, other) in enumerate((pair, pair[::-1])):
        tile.local_ram[other][:4] = np.frombuffer((0x100 + i).to_bytes(4, "little"), np.uint8)
        program = f"li a0, {0x30000 + 4 * i}\n" + _counted_loads(WINDOW[other], 64)
        tile.write(CODE[core], assemble(program, base=CODE[core]))
    result = tile.run(release=list(pair), max_cycles=10**5)
    for i, core in enumerate(pair):
        assert int.from_bytes(tile.read(0x30000 + 4 * i, 4), "little") == 0x100 + i
        assert int.from_bytes(tile.read(0x30040 + 4 * i, 4), "little") == 0
        assert 2 * RISCV.remote_fabric * 62 <= result.cores[core].cycles <= 2 * RISCV.remote_fabric * 70


def test_reset_frees_the_path() -> None:
    tile = Tile("blackhole")
    tile.local_ram_path.free = 10**6
    tile.local_ram_path.reserved["brisc"] = 10**6
    tile.reset()
    assert tile.local_ram_path.free == 0 and not tile.local_ram_path.reserved


@pytest.mark.parametrize("owner", ["brisc", "trisc2"])
def test_a_core_reads_its_own_ram_through_its_window_too(owner) -> None:
    tile = Tile("blackhole")
    tile.local_ram[owner][:4] = np.frombuffer((0xCAFE).to_bytes(4, "little"), np.uint8)
    program = f"li s2, {WINDOW[owner]}\nlw t0, 0(s2)\nli a0, 0x30000\nsw t0, 0(a0)\necall"
    tile.write(CODE[owner], assemble(program, base=CODE[owner]))
    tile.run(release=[owner], max_cycles=10**5)
    assert int.from_bytes(tile.read(0x30000, 4), "little") == 0xCAFE
