"""tt-metal firmware on several tiles of a chip: coordinates, launches at once, a two-tile pipeline.

The firmware is the real pre-compiled set of each ttnn release in conftest.FIRMWARE_VERSIONS. The
expected bits of add-one come from tests/test_metal_launch.add_one_reference (the documented
arithmetic); the expected coordinates from the NoC #0 grid and NoC #1's mirror of it
(Coordinates.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_metal_launch import BUILD, KERNELS, TILE_BYTES, add_one_reference

from tensixsim.chip import Chip
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.metal.chip import MetalChip, logical_coordinates
from tensixsim.metal.examples import add_one_program, build_add_one, build_pipeline, pipeline_programs
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import KernelOverrun, Program, layout

WIDTH, HEIGHT = 17, 12
A, B = (1, 2), (4, 5)
SOURCE, RESULT = 0x140000, 0x150000  # A's L1: input tiles, results written back by B


@pytest.fixture
def firmware(blackhole_set):
    """Each firmware generation of conftest.FIRMWARE_VERSIONS."""
    return blackhole_set


def random_bf16(rows: int, cols: int, seed: int) -> np.ndarray:
    """Random bf16 bit patterns without NaNs (add_one_reference does not cover them)."""
    bits = np.random.default_rng(seed).integers(0, 1 << 16, (rows, cols)).astype(np.uint16)
    nan = ((bits >> 7) & 0xFF == 0xFF) & (bits & 0x7F != 0)
    bits[nan] = 0x4380 | (bits[nan] & 0x7E)  # x + 1 a bf16 tie: the packer's rounding shows
    return bits


def booted(firmware, tiles, **chip_options) -> MetalChip:
    return MetalChip.boot(Chip("blackhole", **chip_options), firmware, tiles)


def test_logical_coordinates_count_the_tensix_columns_and_rows() -> None:
    chip = Chip("blackhole")
    assert logical_coordinates(chip, (1, 2)) == (0, 0)
    assert logical_coordinates(chip, (10, 2)) == (7, 0)  # column 8 and 9 hold no Tensix tiles
    assert logical_coordinates(chip, (16, 11)) == (13, 9)
    harvested = Chip("blackhole", harvested=(2, 12))  # the harvested columns are skipped
    assert logical_coordinates(harvested, (3, 2)) == (1, 0)
    assert logical_coordinates(harvested, (16, 11)) == (11, 9)


def test_each_tiles_firmware_sees_its_own_noc_coordinates(firmware) -> None:
    tiles = [(1, 2), (10, 7), (16, 11)]
    metal = booted(firmware, tiles)
    loaded = metal.loaded[tiles[0]]
    out = 0x30000
    kernels = {
        core: build_kernel(
            KERNELS / "whereami.c", core, loaded, layout(loaded).text_start + i * 0x4000, BUILD
        )
        for i, core in enumerate(("brisc", "ncrisc"))
    }
    program = Program(kernels, {"brisc": [out], "ncrisc": [out + 16]})
    states = metal.launch(dict.fromkeys(tiles, program))
    for x, y in tiles:
        assert states[(x, y)].waits_for_go(loaded.mailbox)
        seen = metal.chip.tile(x, y).read(out, 20)
        # my_x / my_y of NoC #0 and NoC #1 (which counts from the opposite corner), on both cores.
        expected = [x, y, WIDTH - 1 - x, HEIGHT - 1 - y]
        assert list(seen[:4]) == list(seen[16:20]) == expected


def test_firmware_boots_and_launches_on_a_harvested_chip(firmware) -> None:
    metal = MetalChip.boot(Chip("blackhole", harvested=(2,)), firmware, [(3, 2)])
    loaded = metal.loaded[(3, 2)]
    elf = build_kernel(KERNELS / "whereami.c", "brisc", loaded, layout(loaded).text_start, BUILD)
    states = metal.launch({(3, 2): Program({"brisc": elf}, {"brisc": [0x30000]})})
    assert states[(3, 2)].waits_for_go(loaded.mailbox)
    assert list(metal.chip.tile(3, 2).read(0x30000, 2)) == [3, 2]


def test_add_one_on_two_tiles_at_once_is_bit_exact(firmware) -> None:
    metal = booted(firmware, [A, B])
    loaded = metal.loaded[A]
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    kernels = build_add_one(loaded, BUILD)
    programs, cases = {}, {}
    for i, xy in enumerate((A, B)):
        matrix = random_bf16(32, 32 * 8, seed=10 + i)  # 8 tiles each
        source = InterleavedBuffer(0x100000 + 0x100000 * i, TILE_BYTES, 8, banks)
        target = InterleavedBuffer(0x800000 + 0x100000 * i, TILE_BYTES, 8, banks)
        source.write(metal.chip.dram, tilize(matrix))
        programs[xy] = add_one_program(kernels, source.base, target.base, 8)
        cases[xy] = (matrix, target)
    states = metal.launch(programs)
    for xy, (matrix, target) in cases.items():
        assert states[xy].waits_for_go(loaded.mailbox)
        result = untilize(np.frombuffer(target.read(metal.chip.dram), np.uint16), 32, 32 * 8)
        assert (result == add_one_reference(matrix)).all(), xy


def run_pipeline(firmware, tiles: int, **chip_options) -> tuple[np.ndarray, np.ndarray, dict]:
    metal = booted(firmware, [A, B], **chip_options)
    loaded = metal.loaded[A]
    matrix = random_bf16(32, 32 * tiles, seed=tiles)
    metal.chip.tile(*A).write(SOURCE, tilize(matrix))
    states = metal.launch(
        pipeline_programs(build_pipeline(loaded, BUILD), loaded, A, B, SOURCE, RESULT, tiles)
    )
    for state in states.values():
        assert state.waits_for_go(loaded.mailbox)
    raw = np.frombuffer(metal.chip.tile(*A).read(RESULT, TILE_BYTES * tiles), np.uint16)
    return matrix, untilize(raw, 32, 32 * tiles), {xy: s.cycles for xy, s in states.items()}


def test_two_tile_pipeline_through_the_firmware_is_bit_exact(firmware) -> None:
    matrix, result, cycles = run_pipeline(firmware, 4)
    assert (result == add_one_reference(matrix)).all()
    # B finishes before A, which waits for B's last result and its semaphore increment.
    assert cycles[B] < cycles[A]


def test_pipeline_cycles_do_not_depend_on_the_quantum(firmware) -> None:
    _, result, cycles = run_pipeline(firmware, 2)
    for quantum in (300, 10_000):
        _, again, same = run_pipeline(firmware, 2, quantum=quantum)
        assert (again == result).all()
        assert same == cycles


def test_pipeline_results_and_cycles_do_not_depend_on_the_window(firmware) -> None:
    """The firmware's cores poll L1 words (run-state bytes, semaphores) the other tile's NoC writes
    change: parked, each sees the write in the iteration a running loop would have, however the
    windows cut its slices; and a loop is parked at the same iteration however they cut it (at
    windows of 7 and 8, a probe of the loop before it was cut short inside it)."""
    matrix, result, cycles = run_pipeline(firmware, 2)
    assert (result == add_one_reference(matrix)).all()
    for window in (5, 7, 8, 18):
        _, again, same = run_pipeline(firmware, 2, window=window)
        assert (again == result).all()
        assert same == cycles, window


def test_a_launch_refused_on_one_tile_writes_nothing_on_any(firmware) -> None:
    metal = booted(firmware, [A, B])
    loaded = metal.loaded[A]
    good = Program(
        {"brisc": build_kernel(KERNELS / "copy.c", "brisc", loaded, layout(loaded).text_start, BUILD)}
    )
    bad_elf = build_kernel(KERNELS / "copy.c", "brisc", loaded, layout(loaded).text_end - 64, BUILD)
    before = {xy: metal.chip.tile(*xy).l1.copy() for xy in (A, B)}
    with pytest.raises(KernelOverrun):
        metal.launch({A: good, B: Program({"brisc": bad_elf})})
    for xy in (A, B):
        assert (metal.chip.tile(*xy).l1 == before[xy]).all()
    with pytest.raises(ValueError, match=r"no tt-metal firmware booted on \(2, 2\)"):
        metal.launch({(2, 2): good})
