"""Tile.reset: after any error a tile runs the next kernel exactly as a new tile would."""

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble
from known_kernel import ISA, assert_like_a_new_tile, run_known_kernel

from tensixsim import (
    CycleLimitExceeded,
    Deadlock,
    InvalidInstruction,
    InvalidProgram,
    MemoryFault,
    SimError,
    Tile,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.tensix.native.lockstep import differences, snapshot

ENGINES = ["native", "python"]


def inline(word: int) -> str:
    return f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"


NO_REGISTER = ISA.encode("LOADREG", tdma_data_reg_index=1, reg_addr=(0xFFB12024 - 0xFFB00000) >> 2)
NOP = ISA.encode("NOP")


def mop_config(words: list[int]) -> str:
    """TRISC0 code writing its pipe's nine MOP configuration words."""
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(words):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    return "\n".join(lines)


# Template 1, once: start op REPLAY-record 1 word, last op a NOP (recorded into slot 0), end op a
# playback of slot 5, never recorded: the expansion fails after it changed the replay buffer.
RECORD_ONE = ISA.encode("REPLAY", start_idx=0, len=1, execute_while_loading=0, load_mode=1)
PLAY_SLOT_5 = ISA.encode("REPLAY", start_idx=5, len=1, execute_while_loading=0, load_mode=0)
FAILING_MOP = [1, 1, RECORD_ONE, PLAY_SLOT_5, NOP, NOP, NOP, NOP, NOP]
MOP = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
# name: (TRISC0 program, the error it raises, max_cycles)
FAILURES = {
    "unknown opcode": (f"nop\n {inline(5)}\n ecall", InvalidInstruction, 100_000),
    "unimplemented instruction": (f"{inline(ISA.encode('RAREB'))}\n ecall", Unimplemented, 100_000),
    "LOADREG without a register": (f"nop\n {inline(NO_REGISTER)}\n ecall", MemoryFault, 100_000),
    "MOP of a template never written": (f"nop\n {inline(MOP)}\n ecall", UndefinedBehavior, 100_000),
    "MOP expansion failing mid-way": (
        f"{mop_config(FAILING_MOP)}\n {inline(MOP)}\n ecall",
        UndefinedBehavior,
        100_000,
    ),
    "RISC-V load from nowhere": ("li t0, 0x80000000\n lw t1, 0(t0)\n ecall", MemoryFault, 100_000),
    "illegal RISC-V instruction": ("nop\n nop\n .word 0xFFFFFFFF\n ecall", InvalidInstruction, 100_000),
    "ebreak": ("nop\n ebreak\n ecall", InvalidProgram, 100_000),
    # A pipe blocked for good on a semaphore no one posts, mutex 0 held, a MOP mid-expansion.
    "pipe blocked on a semaphore": (
        "\n".join(
            [
                mop_config([5, 6] + [NOP] * 7),  # template 1: 5 x 6 NOPs
                inline(ISA.encode("ATGETM", mutex_index=0)),
                inline(ISA.encode("SEMINIT", max_value=1, init_value=0, sem_sel=1)),
                inline(ISA.encode("SEMWAIT", stall_res=0x7F, sem_sel=1, wait_sem_cond=1)),
                inline(ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)),
                "ecall",
            ]
        ),
        Deadlock,
        100_000,
    ),
    # Parked on an L1 word the known kernel writes (its page write-protected in the other cores).
    "core polling L1 for good": ("li t0, 0x20000\n 1: lw t1, 0(t0)\n beqz t1, 1b\n ecall", Deadlock, 100_000),
    # Past the known kernel's own limit: the clock must start again at 0.
    "runaway loop": ("1: addi t0, t0, 1\n j 1b", CycleLimitExceeded, 200_000),
}


def fail(tile: Tile, name: str) -> SimError:
    program, kind, max_cycles = FAILURES[name]
    tile.write(0x6000, assemble(program, base=0x6000))
    with pytest.raises(kind) as info:
        tile.run(release=["trisc0"], max_cycles=max_cycles)
    return info.value


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(FAILURES))
def test_after_an_error_and_a_reset_a_known_kernel_runs_as_on_a_new_tile(engine, name):
    tile = Tile("blackhole", engine=engine)
    error = fail(tile, name)
    assert error.cycle is not None
    if isinstance(error, CycleLimitExceeded | Deadlock):
        assert any(where.name == "trisc0" for where in error.cores)
    else:
        assert (error.core, error.pc is not None) == ("trisc0", True)
    tile.reset()
    assert_like_a_new_tile(tile)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(FAILURES))
def test_a_failed_run_changes_nothing_and_fails_again_the_same_way(engine, name):
    tile = Tile("blackhole", engine=engine)
    first = fail(tile, name)
    before = snapshot(tile)
    again = fail(tile, name)
    if isinstance(first, Deadlock | CycleLimitExceeded):
        # The cores run on (a parked one polls again: the host may have written what it polls)
        # and stop where they stopped before.
        assert [(c.name, c.state, c.pc) for c in again.cores] == [
            (c.name, c.state, c.pc) for c in first.cores
        ]
    else:
        assert (again.core, again.pc, again.cycle, again.value) == (
            first.core,
            first.pc,
            first.cycle,
            first.value,
        )
        assert str(again) == str(first)
    assert differences(before, snapshot(tile)) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failed_expansion_leaves_the_replay_buffer_as_it_was(engine):
    tile = Tile("blackhole", engine=engine)
    error = fail(tile, "MOP expansion failing mid-way")
    code = assemble(FAILURES["MOP expansion failing mid-way"][0], base=0x6000)
    assert error.value == PLAY_SLOT_5 and error.pc == 0x6000 + len(code) - 8  # the MOP, before ecall
    frontend = tile.coprocessor.frontend
    assert not frontend.replay_written.any() and not frontend.record_left.any()
    assert len(tile.queues[0].entries) == 1  # the MOP is still at the head of its queue


@pytest.mark.parametrize("engine", ENGINES)
def test_without_a_reset_the_failed_instruction_raises_again(engine):
    # The tile stays as the error found it (nothing corrupted, nothing skipped): running on repeats it.
    tile = Tile("blackhole", engine=engine)
    first = fail(tile, "unknown opcode")
    with pytest.raises(InvalidInstruction) as again:
        run_known_kernel(tile)
    assert (again.value.core, again.value.pc, again.value.value) == (first.core, first.pc, first.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_replay_recording_left_open_is_closed_by_a_reset(engine):
    # The program ends while the replay expander still records 20 words: on the same tile the next
    # kernel's instructions would be recorded instead of executed.
    tile = Tile("blackhole", engine=engine)
    record = ISA.encode("REPLAY", start_idx=0, len=20, execute_while_loading=0, load_mode=1)
    tile.write(0x6000, assemble(f"{inline(record)}\n ecall", base=0x6000))
    tile.run(release=["trisc0"])
    assert tile.coprocessor.frontend.record_left[0] == 20
    tile.reset()
    assert_like_a_new_tile(tile)


@pytest.mark.parametrize("engine", ENGINES)
def test_reset_gives_the_state_of_a_new_tile_and_keeps_memory_and_objects(engine):
    tile = Tile("blackhole", engine=engine, record_pushes=True)
    copro, trisc0 = tile.coprocessor, tile.core("trisc0")
    gprs, dst = copro.thcon.gprs, copro.regs.dst
    fail(tile, "pipe blocked on a semaphore")
    assert tile.pushed(0)
    copro.regs.dst[:] = 0x3C00
    tile.streams.values[:] = 7
    tile.local_ram["ncrisc"][:4] = 9
    l1 = tile.l1.copy()
    tile.reset()
    new = Tile("blackhole", engine=engine, record_pushes=True)
    new.l1[:] = tile.l1
    assert differences(snapshot(tile), snapshot(new)) == []
    assert np.array_equal(tile.l1, l1) and list(tile.local_ram["ncrisc"][:4]) == [9] * 4
    assert tile.coprocessor is copro and tile.core("trisc0") is trisc0
    assert copro.thcon.gprs is gprs and copro.regs.dst is dst  # views of them stay valid
    assert not tile.streams.values.any()
    assert tile.cycle == 0 and tile.control.soft_reset == new.control.soft_reset
    for core, fresh in zip(tile.cores, new.cores, strict=True):
        assert (core.state, core.pc, core.time, core.regs) == (fresh.state, fresh.pc, fresh.time, fresh.regs)
    assert tile.result() == new.result()
    assert tile.pushed(0) == []  # recording stays on, with nothing recorded


def test_a_recording_tile_resets_to_cycle_zero():
    tile = Tile("blackhole", backend="recorder")
    tile.write(0x6000, assemble(f"{inline(ISA.encode('NOP'))}\n" * 8 + "ecall", base=0x6000))
    first = tile.run(release=["trisc0"])
    tile.reset()
    assert tile.cycle == 0 and tile.backend.cycle == 0
    assert tile.run(release=["trisc0"]) == first
