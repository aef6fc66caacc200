"""Parking poll loops changes nothing a program can see: the cycles, instructions and Tensix
statistics of a run are those of running every poll iteration.

A core spinning on a synchronised register (a stream counter, a Tensix semaphore) is parked and woken
at the iteration whose read first sees the change (Tile._wake); these tests run the same programs with
``park_polls`` off, where every iteration runs, and compare.
"""

from __future__ import annotations

import zlib

import pytest
from test_sdk_kernels import eltwise_inputs

from tensixsim import Tile
from tensixsim.riscv.core import CoreState
from tensixsim.sdk import programs
from tensixsim.tile import Tile as TileClass


def run(elfs: dict, inputs: dict[int, bytes], park: bool, monkeypatch: pytest.MonkeyPatch):
    """The run's result and L1 digest, and how many times a core was parked polling a register."""
    tile = Tile("blackhole")
    tile.park_polls = park
    parked_on_registers = [0]
    try_park = TileClass._try_park

    def counting(self, core):
        try_park(self, core)
        if core.state is CoreState.WAITING and core.watch_registers:
            parked_on_registers[0] += 1

    monkeypatch.setattr(TileClass, "_try_park", counting)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    for address, data in inputs.items():
        tile.write(address, data)
    tile.run(max_cycles=10**7)
    return tile.result(), zlib.crc32(tile.l1), parked_on_registers[0]


@pytest.mark.parametrize("op, tiles", [("add", 6), ("mul", 3)])
def test_parked_run_equals_running_every_poll(monkeypatch, op, tiles):
    a, b = eltwise_inputs(11, tiles)
    elfs = programs.build_eltwise(op, tiles=tiles)
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    parked = run(elfs, inputs, True, monkeypatch)
    running = run(elfs, inputs, False, monkeypatch)
    assert parked[2] >= tiles  # the consumers waited on stream counters, parked
    assert running[2] == 0
    assert parked[:2] == running[:2]
