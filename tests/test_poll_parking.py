"""Parking poll loops changes nothing a program can see: the cycles, instructions and Tensix
statistics of a run are those of running every poll iteration.

A core spinning on a synchronised register (a stream counter, a Tensix semaphore) is parked and woken
at the iteration whose read first sees the change (Tile._wake); these tests run the same programs with
``park_polls`` off, where every iteration runs, and compare.
"""

from __future__ import annotations

import zlib

import pytest
from asm import L0_OFF, assemble
from test_sdk_kernels import eltwise_inputs

from tensixsim import Tile
from tensixsim.errors import Deadlock
from tensixsim.riscv.core import CoreState
from tensixsim.riscv.loop_probe import MMIO_SPIN_THRESHOLD
from tensixsim.sdk import programs
from tensixsim.tile import Tile as TileClass


def run(elfs: dict, inputs: dict[int, bytes], park: bool, monkeypatch: pytest.MonkeyPatch, l1_order=False):
    """The run's result and L1 digest, and how many times a core was parked polling a register.
    (With ``l1_order`` the reader and writer copying L1 hold the consumers' poll loops to their
    cycles, which seldom leaves a whole iteration to probe: few loops are parked.)"""
    tile = Tile("blackhole", l1_order=l1_order)
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
    ordered = run(elfs, inputs, True, monkeypatch, l1_order=True)
    assert ordered[:2] == running[:2]  # the cores share no L1 word: ordering changes nothing
    by_page = run(elfs, inputs, True, monkeypatch, l1_order="pages")
    assert by_page[:2] == running[:2]


def _slow_poll(quantum: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int]:
    """TRISC0 polls an L1 flag with a loop of about 40 cycles an iteration; BRISC sets the flag
    after a while. Returns (TRISC0's cycles, its instructions, how often it was parked)."""

    flag = 0x30000
    trisc0 = L0_OFF + f"li t0, {flag}\n1: lw t1, 0(t0)\n" + "nop\n" * 30 + "beqz t1, 1b\n ecall"
    brisc = "li t2, 3000\n1: addi t2, t2, -1\n bnez t2, 1b\n"
    brisc += f"li t0, {flag}\n li t1, 1\n sw t1, 0(t0)\n ecall"
    tile = Tile("blackhole", quantum=quantum)
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.write(0, assemble(brisc))
    parked = [0]
    try_park = TileClass._try_park

    def counting(self, core):
        try_park(self, core)
        parked[0] += core.state is CoreState.WAITING

    monkeypatch.setattr(TileClass, "_try_park", counting)
    result = tile.run(release=["brisc", "trisc0"], max_cycles=10**6)
    return result.cores["trisc0"].cycles, result.cores["trisc0"].instructions, parked[0]


def test_a_poll_loop_longer_than_the_quantum_allows_is_parked_all_the_same(monkeypatch):
    # The loop count carries across slices cut by the quantum, so a loop needing several slices to
    # be recognised is still parked, and woken at the store's cycle: the same cycles at any quantum.
    slow = _slow_poll(2000, monkeypatch)
    assert slow[2] >= 1
    for quantum in (50, 300):
        got = _slow_poll(quantum, monkeypatch)
        assert got[2] >= 1, quantum
        assert got[:2] == slow[:2], quantum


STREAM8_RECEIVED = 0xFFB40000 + 8 * 0x1000 + 10 * 4  # a stream register cores read and write


def _two_pollers(
    delays: tuple[int, int], quantum: int, park: bool, monkeypatch: pytest.MonkeyPatch, lead: int = 0
):
    """TRISC0 and TRISC1 each poll their own stream register at the same time; BRISC sets TRISC0's
    after ``lead`` nops and ``delays[0]`` loop iterations, then TRISC1's after ``delays[1]`` more.
    Returns every core's (cycles, instructions) and how often a core was parked on a register."""

    registers = (STREAM8_RECEIVED, STREAM8_RECEIVED + 0x1000)

    def poller(register: int, base: int) -> bytes:
        return assemble(f"li t0, {register}\n1: lw t1, 0(t0)\n beqz t1, 1b\n ecall", base=base)

    brisc = f"li s0, {STREAM8_RECEIVED + 0x2000}\n" + "nop\n" * lead
    for register, delay in zip(registers, delays, strict=True):
        # (each iteration reads a third register: BRISC's time moves in steps as the pollers' does)
        brisc += f"li t2, {delay}\n2: lw t3, 0(s0)\n addi t2, t2, -1\n bnez t2, 2b\n"
        brisc += f"li t0, {register}\n li t1, 1\n sw t1, 0(t0)\n"
    tile = Tile("blackhole", quantum=quantum)
    tile.park_polls = park
    tile.write(0, assemble(brisc + "ecall"))
    tile.write(0x6000, poller(registers[0], 0x6000))
    tile.write(0xA000, poller(registers[1], 0xA000))
    parked = [0]
    try_park = TileClass._try_park

    def counting(self, core):
        try_park(self, core)
        parked[0] += core.state is CoreState.WAITING and bool(core.watch_registers)

    monkeypatch.setattr(TileClass, "_try_park", counting)
    result = tile.run(release=["brisc", "trisc0", "trisc1"], max_cycles=10**6)
    return {name: (c.cycles, c.instructions) for name, c in result.cores.items()}, parked[0]


@pytest.mark.parametrize("quantum", [16, 1000])
@pytest.mark.parametrize("delays", [(300, 5), (40, 200), (1, 1)])
def test_two_cores_polling_registers_at_once_are_both_parked_and_woken_at_the_write(
    monkeypatch, delays, quantum
):
    # Each poll of a core ahead of the other stops it until the other catches up, so neither loop
    # runs a whole iteration alone: its probe reads the register past the other core, and it is
    # woken by the write at the write's cycle.
    running, none = _two_pollers(delays, quantum, False, monkeypatch)
    parked, count = _two_pollers(delays, quantum, True, monkeypatch)
    assert none == 0
    assert parked == running
    if min(delays) > 20:
        assert count >= 2


@pytest.mark.parametrize("lead", range(0, 30, 3))
def test_a_write_before_a_probe_read_past_the_writer_is_seen_by_that_read(monkeypatch, lead):
    # BRISC writes soon after TRISC0's probe read its register past BRISC's cycle, sometimes at a
    # cycle before that read: the read sees it (the core resumes at the probe iteration's head),
    # as when every poll runs.
    for first in range(1, 6):
        running, _ = _two_pollers((first, 3), 16, False, monkeypatch, lead)
        parked, _ = _two_pollers((first, 3), 16, True, monkeypatch, lead)
        assert parked == running, first


# NCRISC counts its starts in L1 and, the first time, spins in `j .` (as a firmware trampoline waits
# for the core that loads its next image); BRISC releases it, later holds it in reset and releases it
# again, when it ends.
TRAMPOLINE = {
    "brisc": """
        li t0, 0xFFB121B0
        li t1, 0x47800 & ~(1 << 11) & ~(1 << 18)
        sw t1, 0(t0)             # release NCRISC
        li t2, 400
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t1, 0x47800 & ~(1 << 11)
        sw t1, 0(t0)             # hold it
        li t1, 0x47800 & ~(1 << 11) & ~(1 << 18)
        sw t1, 0(t0)             # release it again
        ecall
    """,
    "ncrisc": """
        li t0, 0x30000
        lw t1, 0(t0)
        addi t1, t1, 1
        sw t1, 0(t0)
        li t2, 2
        beq t1, t2, 2f
    1:  j 1b
    2:  ecall
    """,
}


@pytest.mark.parametrize("quantum", [1, 7, 60, 2000])
def test_a_core_held_in_a_loop_that_reads_nothing_stops_at_the_hold(quantum):
    # The spin reads nothing and changes nothing: it is parked, and the hold counts its iterations
    # up to the hold's cycle (undoing any it was counted past it), so NCRISC's instructions and
    # cycles are the same at every quantum, and those of running every iteration with a quantum of
    # one cycle (where a running core cannot overrun the hold: larger quanta let it run on to its
    # slice's end, docs/deviations.md).

    def ncrisc_at(q: int, park: bool) -> tuple[int, int]:
        tile = Tile("blackhole", quantum=q)
        tile.park_polls = park
        tile.write(0, assemble(TRAMPOLINE["brisc"]))
        tile.write(0x12000, assemble(TRAMPOLINE["ncrisc"], base=0x12000))
        result = tile.run(release=["brisc"], max_cycles=10**6)
        assert tile.read(0x30000, 4) == (2).to_bytes(4, "little")
        return result.cores["ncrisc"].cycles, result.cores["ncrisc"].instructions

    reference = ncrisc_at(1, park=False)
    assert ncrisc_at(quantum, park=True) == reference
    assert reference[1] > 700  # (the spin ran about 800 cycles, one instruction each)


def test_a_loop_that_reads_nothing_is_a_deadlock_at_once():

    tile = Tile("blackhole")
    tile.write(0, assemble("1: j 1b"))  # a loop head at address 0 too
    with pytest.raises(Deadlock, match="waits: spins in a loop that reads nothing") as info:
        tile.run(max_cycles=10**6)
    assert info.value.cycle < 100


_TWO_LOOPS = """
    li s0, 0x30000
1:  lw t0, 0(s0)
    beqz t0, 1b
    rdcycle a0
    sw a0, 0x80(s0)
2:  lw t0, 0x40(s0)
    beqz t0, 2b
    ecall
"""


def _parked_in_the_second_loop(found_by_the_probe: bool) -> tuple[int, int]:
    """BRISC polls word A, then word B. A is set by the host either while the first loop is still
    being counted, or just after its spin was detected, so that the probe iteration reads it, leaves
    the loop and runs into the second one, where it stops spinning. Returns the cycles from the
    second loop's entry to where the core stands parked in it, and to that loop's fixed point."""
    tile = Tile("blackhole")
    tile.write(0, assemble(L0_OFF + _TWO_LOOPS))
    tile.release("brisc", cycle=0)
    core = tile.core("brisc")
    slices = 0
    while not core.stopped_spinning:
        core.run_slice(50)
        slices += 1
        if slices == 1 and not found_by_the_probe:
            tile.write(0x30000, (1).to_bytes(4, "little"))
    if found_by_the_probe:
        tile.write(0x30000, (1).to_bytes(4, "little"))
    tile._try_park(core)
    while core.state is CoreState.RUNNING:
        core.run_slice(50)
        if core.stopped_spinning:
            tile._try_park(core)
    assert core.state is CoreState.WAITING and core.watch == [(0x30040, 4)]
    entered = int.from_bytes(tile.read(0x30080, 4), "little")
    return core.time - entered, core.fixed_point_cycle - entered


def test_a_loop_a_probe_ran_into_is_parked_where_a_slice_would_have_parked_it():
    # The probe iteration of the first loop ran on into the second and stopped spinning there: the
    # iterations it counted go on counting, and once parked the core stands as many iterations
    # past the loop's fixed point as after any detection, so where it ends does not depend on
    # where the scheduler happened to find it.
    assert _parked_in_the_second_loop(True) == _parked_in_the_second_loop(False)


def test_a_one_block_register_poll_is_probed_after_a_few_iterations(monkeypatch):
    # A loop of one block (a read of a synchronised register and the branch back) is known as a loop
    # from its second entry, so it is probed after MMIO_SPIN_THRESHOLD iterations, not after the
    # LOOP_BLOCKS + 1 a longer loop needs to be recognised. (Parking is exact either way: this is
    # host time. The ring of tiles polls NoC counters with such loops, 9 cycles an iteration.)
    poller = f"li t0, {STREAM8_RECEIVED}\n1: lw t1, 0(t0)\n beqz t1, 1b\n ecall"
    brisc = "li t2, 2000\n2: addi t2, t2, -1\n bnez t2, 2b\n"
    brisc += f"li t0, {STREAM8_RECEIVED}\n li t1, 1\n sw t1, 0(t0)\n ecall"
    tile = Tile("blackhole")
    tile.write(0, assemble(brisc))
    tile.write(0x6000, assemble(poller, base=0x6000))
    probed = []
    try_park = TileClass._try_park

    def first_probe(self, core):
        if core.name == "trisc0" and not probed:
            probed.append(core.instructions)
        try_park(self, core)

    monkeypatch.setattr(TileClass, "_try_park", first_probe)
    tile.run(release=["brisc", "trisc0"], max_cycles=10**6)
    assert probed, "the poll loop was never probed"
    iterations = (probed[0] - 2) // 2  # (the two instructions of the lui / addi before the loop)
    assert iterations <= MMIO_SPIN_THRESHOLD + 1, iterations
