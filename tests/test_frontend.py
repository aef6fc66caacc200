"""The pipe engine: instructions flow from the queues through the frontend to the units."""

from __future__ import annotations

import contextlib

import pytest
from asm import assemble
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensixsim import CycleLimitExceeded, InvalidInstruction, MemoryFault, SimError, Tile, Unimplemented
from tensixsim.isa import isa_for
from tensixsim.timing import RISCV

ISA = isa_for("blackhole")


def inline(word: int) -> str:
    return f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"


def push_program(words: list[int]) -> str:
    """TRISC0 stores each word to its push address, then ends."""
    lines = ["li s0, 0xFFE40000"]
    for word in words:
        lines += [f"li t0, 0x{word:08x}", "sw t0, 0(s0)"]
    return "\n".join([*lines, "ecall"])


def run_trisc0(source: str, max_cycles: int = 1_000_000, **kwargs) -> Tile:
    tile = Tile("blackhole", **kwargs)
    tile.write(0x6000, assemble(source, base=0x6000))
    tile.run(release=["trisc0"], max_cycles=max_cycles)
    return tile


def test_nops_issue_one_per_cycle_and_the_run_waits_for_the_pipe():
    nop = ISA.encode("NOP")
    tile = run_trisc0("\n".join([inline(nop)] * 50 + ["ecall"]), record_pushes=True)
    pipe = tile.backend.pipes[0]
    assert pipe.issued == 50 and pipe.idle
    history = tile.pushed(0)
    assert len(history) == 50
    # Word i is pushed at cycle 1 + i and can issue the cycle after: the pipe keeps pace.
    assert pipe.last_cycle == history[-1].cycle + 1
    assert tile.result().cycles == pipe.last_cycle + 1


def test_unknown_opcode_names_the_pushing_core_and_pc():
    bad = 0x00 << 24  # no instruction has opcode 0
    assert 0 not in ISA.by_opcode
    with pytest.raises(InvalidInstruction) as info:
        run_trisc0(f"nop\n {inline(bad | 5)}\n ecall")
    error = info.value
    assert error.core == "trisc0" and error.pc == 0x6004 and error.value == 5
    assert "pipe 0" in str(error)


def test_instruction_without_semantics_is_unimplemented():
    # RAREB is in the instruction table, but no page documents what it does.
    word = ISA.encode("RAREB")
    with pytest.raises(Unimplemented) as info:
        run_trisc0(f"{inline(word)}\n ecall")
    assert "RAREB" in str(info.value) and info.value.core == "trisc0" and info.value.pc == 0x6000


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=6))
def test_random_words_execute_or_raise_a_named_error(words):
    # Never a crash, a hang, or an exception outside the emulator's hierarchy.
    tile = Tile("blackhole")
    tile.write(0x6000, assemble(push_program(words), base=0x6000))
    with contextlib.suppress(SimError):
        tile.run(release=["trisc0"], max_cycles=200_000)


def test_mop_expansion_issues_what_the_expander_emits_one_per_cycle():
    from tensixsim.tensix.expanders import expand_mop

    nop = ISA.encode("NOP")
    cfg = [3, 4] + [nop] * 7  # template 1: outer 3, inner 4, every op a NOP
    expected = list(expand_mop(cfg, 0, 1, 0, 0))
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    tile = run_trisc0("\n".join([*lines, inline(mop), "ecall"]), record_pushes=True)
    pipe = tile.backend.pipes[0]
    assert len(expected) >= 12 and pipe.issued == len(expected)
    taken = tile.queues[0].taken[0][0]
    assert pipe.last_cycle == taken + len(expected) - 1  # one per cycle from the cycle it was taken


def test_max_cycles_bounds_coprocessor_work_after_the_cores_finish():
    # TRISC0 pushes four MOPs of 127 x 127 NOPs and exits: the pipe alone would run about 64,000
    # cycles past the limit. The run stops at the limit instead, naming what was still running.
    nop = ISA.encode("NOP")
    cfg = [127, 127] + [nop] * 7
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    program = "\n".join([*lines, *[inline(mop)] * 4, "ecall"])
    with pytest.raises(CycleLimitExceeded, match="coprocessor") as info:
        run_trisc0(program, max_cycles=5_000)
    assert info.value.cycle == 5_000
    tile = run_trisc0(program, max_cycles=100_000)  # enough: the same program finishes
    assert tile.backend.pipes[0].issued == 4 * 127 * 127


@pytest.mark.parametrize("name", ["LOADREG", "STOREREG"])
def test_register_access_without_a_register_names_the_pushing_core(name):
    word = ISA.encode(name, tdma_data_reg_index=1, reg_addr=(0xFFB12000 - 0xFFB00000) >> 2)
    with pytest.raises(MemoryFault, match="no register") as info:
        run_trisc0(f"nop\n {inline(word)}\n ecall")
    assert (info.value.core, info.value.pc, info.value.address) == ("trisc0", 0x6004, 0xFFB12000)


@pytest.mark.parametrize("offset", [4, 8])  # CoprocessorDoneCheck, MOPExpanderDoneCheck
def test_done_check_read_returns_once_the_pipe_has_drained(offset):
    from tensixsim.tensix.expanders import expand_mop

    nop = ISA.encode("NOP")
    cfg = [5, 6] + [nop] * 7
    count = len(list(expand_mop(cfg, 0, 1, 0, 0)))
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    lines += [inline(mop), "li s1, 0xFFE80000", f"lw a0, {offset}(s1)", "csrr a1, mcycle", "ecall"]
    tile = run_trisc0("\n".join(lines))
    pipe = tile.backend.pipes[0]
    assert pipe.issued == count
    # The read completes only after the last expanded instruction left the pipe.
    assert tile.core("trisc0").reg("a1") > pipe.last_cycle


@pytest.mark.parametrize("quantum", [100, 2000])
def test_atcas_waiting_on_l1_is_released_by_a_core_store(quantum):
    # TRISC0's ATCAS waits for L1 0x20000 to hold 1; BRISC stores 1 there after a delay loop.
    # The pipe must retry at BRISC's store (the store is watched), not deadlock or miss it.
    atcas = ISA.encode(
        "ATCAS", mem_hier_sel=0, swap_val=7, cmp_val=1, sel32b=0, data_reg_index=0, addr_reg_index=3
    )
    trisc0 = "\n".join(
        [
            "li s0, 0xFFE00000",
            "li t0, 0x2000",
            "sw t0, 12(s0)",  # GPR3 = 0x20000 / 16
            inline(atcas),
            "li s1, 0xFFE80000",
            "lw a0, 4(s1)",
            "csrr a1, mcycle",
            "ecall",
        ]
    )
    brisc = "li t0, 3000\n 1: addi t0, t0, -1\n bnez t0, 1b\n csrr a1, mcycle\n li s0, 0x20000\n li t1, 1\n"
    brisc += "sw t1, 0(s0)\n ecall"
    tile = Tile("blackhole", quantum=quantum)
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.write(0, assemble(brisc))
    tile.run(release=["brisc", "trisc0"])
    assert tile.read(0x20000, 4) == (7).to_bytes(4, "little")  # the swap happened
    stored_at = tile.core("brisc").reg("a1")
    # TRISC0 went on (its done-check read returned) only after BRISC's store let the ATCAS through.
    assert tile.core("trisc0").reg("a1") > stored_at
    assert tile.core("trisc0").reg("a1") < stored_at + 200


def test_done_check_read_between_the_last_issue_and_the_unit_finishing_wakes_when_it_finishes():
    # TRISC0's scalar-unit instruction has issued (its queue is empty) but still occupies its unit
    # when the done check is read: the read must complete when the unit finishes, although nothing
    # more issues from that pipe and TRISC1 keeps running (busy, never parked) until TRISC0 is done.
    add = ISA.encode("ADDDMAREG", op_b_is_const=1, result_reg_index=2, op_b_reg_index=1, op_a_reg_index=3)
    trisc0 = "\n".join(
        [
            inline(add),
            "li s1, 0xFFE80000",
            "lw a0, 4(s1)",
            "csrr a1, mcycle",
            "li s0, 0x20000",
            "li t0, 1",
            "sw t0, 0(s0)",
            "ecall",
        ]
    )
    trisc1 = "li s0, 0x20000\n 1: addi a2, a2, 1\n lw t0, 0(s0)\n beqz t0, 1b\n ecall"
    tile = Tile("blackhole")
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.write(0xA000, assemble(trisc1, base=0xA000))
    tile.run(release=["trisc0", "trisc1"], max_cycles=200_000)
    pipe = tile.backend.pipes[0]
    assert pipe.issued == 1 and pipe.idle
    # The read was retried exactly when the unit finished; csrr follows once the read's response is in.
    assert tile.core("trisc0").reg("a1") == pipe.done_cycle + RISCV.mmio_read
    assert tile.result().cores["trisc1"].state == "finished"
