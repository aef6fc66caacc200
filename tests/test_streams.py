"""Stream registers: CB counters through MMIO, as tt-metal's cb_push_back / cb_pop_front use them."""

from __future__ import annotations

import pytest
from asm import L0_OFF, assemble
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.mmio.streams import TILES_ACKED, TILES_RECEIVED


def stream_reg(stream: int, index: int) -> int:
    return 0xFFB40000 + stream * 0x1000 + 4 * index


@settings(max_examples=10, deadline=None)
@given(stream=st.integers(0, 63), pushes=st.lists(st.integers(1, 0xFFFF), min_size=1, max_size=8))
def test_counters_accumulate_like_cb_push_back(stream, pushes):
    # Each push is `received += n` (a load and a store), as cb_push_back does; counters wrap at 2^32.
    body = [f"li s0, {stream_reg(stream, TILES_RECEIVED)}"]
    for n in pushes:
        body += ["lw t0, 0(s0)", f"li t1, {n}", "add t0, t0, t1", "sw t0, 0(s0)"]
    # fmt: off
    body += [f"li s1, {stream_reg(stream, TILES_ACKED)}", "li t0, 7", "sw t0, 0(s1)", "lw a1, 0(s1)",
             "lw a0, 0(s0)", "ecall"]
    # fmt: on
    tile = Tile("blackhole")
    tile.write(0x6000, assemble("\n".join(body), base=0x6000))
    tile.run(release=["trisc0"])
    assert tile.result().cores["trisc0"].exit_code == sum(pushes) & 0xFFFFFFFF
    assert tile.core("trisc0").reg("a1") == 7
    assert tile.streams.read(stream, TILES_RECEIVED) == sum(pushes) & 0xFFFFFFFF


def test_unmodelled_registers_read_zero_and_ignore_writes():
    program = f"""
        li s0, {stream_reg(5, 3)}
        li t0, 0x1234
        sw t0, 0(s0)
        lw a0, 0(s0)
        li s1, {stream_reg(48, 270)}
        sw t0, 0(s1)
        li s2, {stream_reg(2, 31)}
        sw t0, 0(s2)
        lw a1, 0(s2)
        ecall
    """
    tile = Tile("blackhole")
    tile.write(0, assemble(program))
    result = tile.run()
    assert result.cores["brisc"].exit_code == 0
    assert tile.core("brisc").reg("a1") == 0x1234


def test_byte_load_of_a_stream_register_reads_its_byte():
    # tt-metal kernels read the tile counters with lhu/lbu (tests/test_tile_control.py has the rest).
    tile = Tile("blackhole")
    source = f"li s0, {stream_reg(0, TILES_RECEIVED)}\n li t0, 0x8001\n sw t0, 0(s0)\n lb a0, 1(s0)\n ecall"
    tile.write(0, assemble(source))
    tile.run()
    assert tile.core("brisc").reg("a0") == 0xFFFFFF80


def _hand_over(quantum: int):
    # NCRISC produces 20 "tiles" (words in L1) and bumps tiles-received; TRISC0 waits for each,
    # sums it and bumps tiles-acked; NCRISC never runs more than 2 ahead (a 2-page CB).
    recv, acked, buf = stream_reg(3, TILES_RECEIVED), stream_reg(3, TILES_ACKED), 0x30000
    ncrisc = f"""
        li s0, {recv}
        li s1, {acked}
        li s2, {buf}
        li s3, 0            # pushed
    1:  lw t0, 0(s1)        # wait for space: pushed - acked < 2
        sub t1, s3, t0
        li t2, 2
        bge t1, t2, 1b
        andi t3, s3, 1
        slli t3, t3, 2
        add t3, t3, s2
        addi t4, s3, 100
        sw t4, 0(t3)        # the "tile"
        addi s3, s3, 1
        sw s3, 0(s0)        # cb_push_back
        li t5, 20
        blt s3, t5, 1b
        ecall
    """
    # (The consumer reads each tile without a fence: its L0 data cache off, as firmware has it.)
    trisc0 = (
        L0_OFF
        + f"""
        li s0, {recv}
        li s1, {acked}
        li s2, {buf}
        li s3, 0            # popped
        li s4, 0            # sum
    1:  lw t0, 0(s0)        # cb_wait_front
        beq t0, s3, 1b
        andi t3, s3, 1
        slli t3, t3, 2
        add t3, t3, s2
        lw t4, 0(t3)
        add s4, s4, t4
        addi s3, s3, 1
        sw s3, 0(s1)        # cb_pop_front
        li t5, 20
        blt s3, t5, 1b
        mv a0, s4
        ecall
    """
    )
    tile = Tile("blackhole", quantum=quantum)
    tile.write(0x12000, assemble(ncrisc, base=0x12000))
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    return tile.run(release=["ncrisc", "trisc0"])


@pytest.mark.parametrize("quantum", [100, 2000, 20_000])
def test_producer_and_consumer_cores_hand_over_through_a_stream(quantum):
    result = _hand_over(quantum)
    assert result.cores["trisc0"].exit_code == sum(range(100, 120))
    # Both poll loops read stream registers and are parked: the hand-overs are exact.
    assert result.cycles == _hand_over(100).cycles
