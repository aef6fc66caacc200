"""Stream-register reads answered by native code (riscv/native.c, tsim_storage_read) are exactly the
reads Python answers (Core._mmio_read): same values, same cycles, same instructions, same memory.

The reference runs are the same programs with native storage reads turned off (the tile says the
storage is stale, so every read goes to Python)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from asm import assemble
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sdk_kernels import eltwise_inputs
from test_streams import _hand_over, stream_reg

from tensixsim import Tile
from tensixsim.errors import MemoryFault
from tensixsim.mmio.memory import MmioRegion
from tensixsim.mmio.streams import TILES_ACKED, TILES_RECEIVED, Streams
from tensixsim.riscv.core import _storage_runs
from tensixsim.riscv.native import native_library
from tensixsim.sdk import programs
from tensixsim.tensix import native

pytestmark = pytest.mark.skipif(
    native_library() is None or not native.available(), reason="no C compiler: nothing is read natively"
)


def python_reads_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Streams, "storage_current", lambda self, values: False)


def outcome(tile: Tile) -> tuple:
    return tile.result(), zlib.crc32(tile.l1), tuple(tuple(c.regs) for c in tile.cores)


def native_reads(tile: Tile) -> int:
    return sum(c.storage_reads for c in tile.cores)


_LOADS = {"lb": (1, True), "lbu": (1, False), "lh": (2, True), "lhu": (2, False), "lw": (4, False)}


def _narrow_program(stream: int, index: int, value: int, loads: list[tuple[str, int]]) -> str:
    lines = [f"li s0, {stream_reg(stream, index)}", f"li t0, {value}", "sw t0, 0(s0)", "li a0, 0"]
    for op, offset in loads:
        lines += [f"{op} t1, {offset}(s0)", "slli a0, a0, 1", "xor a0, a0, t1"]
    return "\n".join([*lines, "ecall"])


def _expected(value: int, loads: list[tuple[str, int]]) -> int:
    acc = 0
    for op, offset in loads:
        width, signed = _LOADS[op]
        part = (value >> (8 * offset)) & ((1 << (8 * width)) - 1)
        if signed and part >> (8 * width - 1):
            part -= 1 << (8 * width)
        acc = ((acc << 1) ^ part) & 0xFFFFFFFF
    return acc


_load = st.sampled_from(sorted(_LOADS)).flatmap(
    lambda op: st.tuples(st.just(op), st.sampled_from([o for o in range(4) if o % _LOADS[op][0] == 0]))
)


@settings(max_examples=15, deadline=None)
@given(
    stream=st.integers(0, 63),
    index=st.sampled_from([TILES_ACKED, TILES_RECEIVED, 31, 3, 200]),  # stored ones and ones reading 0
    value=st.integers(0, 0xFFFFFFFF),
    loads=st.lists(_load, min_size=1, max_size=6),
)
def test_narrow_and_full_loads_read_what_python_reads(stream, index, value, loads):
    program = assemble(_narrow_program(stream, index, value, loads))
    outcomes = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for reference in (False, True):
            if reference:
                python_reads_only(monkeypatch)
            tile = Tile("blackhole")
            tile.write(0, program)
            tile.run()
            outcomes.append((outcome(tile), native_reads(tile)))
    (fast, served), (slow, none) = outcomes
    assert fast == slow
    assert served == len(loads) and none == 0
    stored = index in (TILES_ACKED, TILES_RECEIVED, 31)
    assert fast[0].cores["brisc"].exit_code == _expected(value if stored else 0, loads)


@pytest.mark.parametrize("quantum", [100, 2000])
def test_cores_handing_over_through_a_stream_give_the_same_run(monkeypatch, quantum):
    fast = _hand_over(quantum)
    python_reads_only(monkeypatch)
    assert _hand_over(quantum) == fast
    assert fast.cores["trisc0"].exit_code == sum(range(100, 120))


def test_five_core_eltwise_kernel_gives_the_same_run(monkeypatch):
    a, b = eltwise_inputs(11, 4)
    elfs = programs.build_eltwise("add", tiles=4)

    def run() -> tuple[tuple, int]:
        tile = Tile("blackhole")
        for core, elf in elfs.items():
            tile.load_elf(core, elf)
        tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
        tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))
        tile.run(max_cycles=2_000_000)
        return outcome(tile), native_reads(tile)

    fast, served = run()
    python_reads_only(monkeypatch)
    slow, none = run()
    assert fast == slow
    assert served > 0 and none == 0


def test_a_replaced_read_or_array_is_honoured():
    # Native code reads the array it was given; replacing Streams.read or the array turns it off.
    program = assemble(f"li s0, {stream_reg(7, TILES_RECEIVED)}\n lw a0, 0(s0)\n lw a1, 0(s0)\n ecall")
    tile = Tile("blackhole")
    tile.streams.read = lambda stream, index: 0x5A5A  # an instance attribute, as a test double would
    tile.write(0, program)
    tile.run()
    assert (tile.core("brisc").reg("a0"), tile.core("brisc").reg("a1")) == (0x5A5A, 0x5A5A)
    assert native_reads(tile) == 0

    tile = Tile("blackhole")
    tile.streams.values = tile.streams.values.copy()
    tile.streams.values[7, 1] = 99  # column 1: TILES_RECEIVED
    tile.write(0, program)
    tile.run()
    assert tile.core("brisc").reg("a0") == 99
    assert native_reads(tile) == 0


def test_a_write_only_register_still_faults_on_a_read():
    tile = Tile("blackhole")
    tile.write(0, assemble(f"li s0, {stream_reg(48, 270)}\n lw a0, 0(s0)\n ecall"))
    with pytest.raises(MemoryFault, match="write-only"):
        tile.run()


def test_adjacent_storage_pages_over_one_array_are_one_window():
    """A core maps storage regions that follow each other over one values array as one native
    window (the streams' 64 pages: one mapping); a gap, another array or slots not covering a
    region start a new window."""
    shared, other = np.zeros(8, np.uint32), np.zeros(8, np.uint32)

    def region(base: int, values: np.ndarray, words: int = 1024) -> MmioRegion:
        return MmioRegion(f"r{base:x}", base, 0x1000, storage=(values, np.zeros(words, np.int32)))

    regions = [region(0x3000, shared), region(0x1000, shared), region(0x2000, shared), region(0x5000, shared)]
    regions += [region(0x6000, other), region(0x7000, other, words=16), region(0x8000, other)]
    runs = [[r.base for r in run] for run in _storage_runs(regions)]
    assert runs == [[0x1000, 0x2000, 0x3000], [0x5000], [0x6000], [0x7000], [0x8000]]
    tile = Tile("blackhole")
    streams = [r for r in tile.core("brisc").regions if r.name.startswith("stream")]
    assert len(streams) == 64 and len(_storage_runs(streams)) == 1
