"""The PCBufs (BRISC -> TRISC FIFOs) and TRISC_PC_BUF_OVERRIDE, against PCBufs.md / TTSync.md's
functional model worked by hand: FIFO order, blocking reads and writes, BRISC's drain wait, the
override bits."""

from __future__ import annotations

import pytest
from test_tile import rotl2, run, tile_with

from tensixsim.errors import Deadlock, MemoryFault
from tensixsim.isa import isa_for

PC_BUF = 0xFFE80000  # BRISC: PCBuf i at PC_BUF + i * 0x10000; TRISC i: its own at PC_BUF
OVERRIDE = 0xFFB12090  # RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE
NOP = rotl2(isa_for("blackhole").encode("NOP"))


def pcbuf(i: int) -> int:
    return PC_BUF + i * 0x10000


def override_bits(i: int, enable: bool, busy: bool = False, value: int = 0) -> int:
    return (int(enable) | int(busy) << 1 | value << 2) << (10 * i)


def test_values_reach_the_trisc_in_order():
    brisc = "\n".join(
        [f"li t0, {pcbuf(1) + 0x1234}"]  # any word of the window
        + [f"li t1, {v}\n sw t1, 0(t0)" for v in (5, 7, 11)]
        + ["ecall"]
    )
    trisc1 = f"""
        li t0, {PC_BUF}
        lw a0, 0(t0)
        lw a1, 0(t0)
        lw a2, 0(t0)
        ecall
    """
    tile = run({"brisc": brisc, "trisc1": trisc1})
    assert [tile.core("trisc1").reg(r) for r in ("a0", "a1", "a2")] == [5, 7, 11]
    assert list(tile.pcbufs.count) == [0, 0, 0]


def test_a_trisc_read_waits_for_the_push():
    brisc = f"""
        li t2, 2000
    1:  addi t2, t2, -1
        bnez t2, 1b
        csrr a1, mcycle
        li t0, {pcbuf(2)}
        li t1, 0xABC
        sw t1, 0(t0)
        ecall
    """
    trisc2 = f"li t0, {PC_BUF}\n lw a0, 0(t0)\n csrr a1, mcycle\n ecall"
    tile = run({"brisc": brisc, "trisc2": trisc2})
    assert tile.core("trisc2").reg("a0") == 0xABC
    assert tile.core("trisc2").reg("a1") > tile.core("brisc").reg("a1") > 2000


def test_the_seventeenth_push_waits_for_a_pop():
    pushes = "\n".join(f"li t1, {v}\n sw t1, 0(t0)" for v in range(1, 18))
    brisc = f"li t0, {pcbuf(0)}\n{pushes}\n csrr a1, mcycle\n ecall"
    trisc0 = f"""
        li t2, 3000
    1:  addi t2, t2, -1
        bnez t2, 1b
        csrr a1, mcycle
        li t0, {PC_BUF}
        lw a0, 0(t0)
        ecall
    """
    tile = run({"brisc": brisc, "trisc0": trisc0})
    assert tile.core("trisc0").reg("a0") == 1
    assert tile.core("brisc").reg("a1") > tile.core("trisc0").reg("a1")
    assert int(tile.pcbufs.count[0]) == 16
    assert list(tile.pcbufs.values[0]) == list(range(2, 18))


def test_pushing_into_a_full_pcbuf_nobody_reads_is_a_deadlock():
    pushes = "\n".join("sw t1, 0(t0)" for _ in range(17))
    tile = tile_with({"brisc": f"li t0, {pcbuf(1)}\n li t1, 1\n{pushes}\n ecall"})
    with pytest.raises(Deadlock, match="PCBuf 1 full"):
        tile.run(max_cycles=100_000)


def test_brisc_read_waits_until_the_trisc_drained_it_blocked_and_its_thread_is_idle():
    # BRISC hands over two values and waits; TRISC0 takes them, pushes Tensix work, blocks on a third.
    brisc = f"""
        li t0, {pcbuf(0)}
        li t1, 3
        sw t1, 0(t0)
        li t1, 4
        sw t1, 0(t0)
        lw a0, 0(t0)          # returns 0 once TRISC0 is blocked on the empty PCBuf, thread 0 idle
        csrr a1, mcycle
        li t1, 99
        sw t1, 0(t0)          # lets TRISC0 finish
        ecall
    """
    nops = "\n".join(f".word 0x{NOP:08x}" for _ in range(24))
    trisc0 = f"""
        li t0, {PC_BUF}
        lw a2, 0(t0)
        lw a3, 0(t0)
        {nops}
        csrr a1, mcycle
        lw a0, 0(t0)          # blocks until BRISC's 99
        ecall
    """
    tile = run({"brisc": brisc, "trisc0": trisc0})
    b, t = tile.core("brisc"), tile.core("trisc0")
    assert (t.reg("a2"), t.reg("a3"), t.reg("a0"), b.reg("a0")) == (3, 4, 99, 0)
    assert b.reg("a1") > t.reg("a1")  # after TRISC0 blocked
    assert b.reg("a1") >= tile.backend.pipes[0].done_cycle  # and after its last NOP left the pipe


def test_override_value_answers_an_empty_read_and_busy_ends_the_waits():
    brisc = f"""
        li t0, {OVERRIDE}
        li t1, {override_bits(2, True, value=0x5A) | override_bits(0, True, busy=True)}
        sw t1, 0(t0)
        li t0, {pcbuf(0)}
        lw a0, 0(t0)          # OverrideEn and OverrideBusy: 0 at once, although nobody drains it
        li t0, 0xFFB121B0     # release TRISC2
        li t1, 0x47800 & ~(1 << 14)
        sw t1, 0(t0)
        ecall
    """
    trisc2 = f"li t0, {PC_BUF}\n lw a0, 0(t0)\n lw a1, 0(t0)\n ecall"
    tile = run({"brisc": brisc, "trisc2": trisc2}, release=["brisc"])
    assert tile.core("brisc").reg("a0") == 0
    assert (tile.core("trisc2").reg("a0"), tile.core("trisc2").reg("a1")) == (0x5A, 0x5A)
    assert int(tile.pcbufs.override[0]) == override_bits(2, True, value=0x5A) | override_bits(
        0, True, busy=True
    )


def test_override_busy_ends_a_done_check_wait():
    # TRISC1's done check would wait for thread 1 forever (an MVMUL waiting for Src data no unpacker
    # ever hands over); OverrideEn and OverrideBusy for PCBuf 1 end it.
    mvmul = rotl2(isa_for("blackhole").encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0))
    trisc1 = f"""
        .word 0x{mvmul:08x}
        li t0, {PC_BUF + 4}
        sw zero, 0(t0)
        lw a0, 0(t0)          # CoprocessorDoneCheck
        li a0, 7
        ecall
    """
    stuck = tile_with({"trisc1": trisc1})
    with pytest.raises(Deadlock, match="CoprocessorDoneCheck"):
        stuck.run(release=["trisc1"], max_cycles=200_000)
    brisc = f"li t0, {OVERRIDE}\n li t1, {override_bits(1, True, busy=True)}\n sw t1, 0(t0)\n ecall"
    tile = tile_with({"trisc1": trisc1, "brisc": brisc})
    with pytest.raises(Deadlock, match="pipe 1 blocked") as info:  # (the MVMUL still waits)
        tile.run(release=["trisc1", "brisc"], max_cycles=200_000)
    assert "CoprocessorDoneCheck" not in str(info.value)
    assert tile.core("trisc1").state.value == "finished" and tile.core("trisc1").reg("a0") == 7


def test_trisc_stores_are_discarded_and_narrow_accesses_fault():
    tile = run({"trisc0": f"li t0, {PC_BUF}\n li t1, 5\n sw t1, 0(t0)\n ecall"})
    assert list(tile.pcbufs.count) == [0, 0, 0]
    tile = tile_with({"brisc": f"li t0, {pcbuf(0)}\n li t1, 5\n sh t1, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault):
        tile.run()


def test_ncrisc_has_no_pcbuf_and_reset_empties_them():
    tile = tile_with({"ncrisc": f"li t0, {pcbuf(0)}\n lw a0, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault):
        tile.run(release=["ncrisc"])
    tile = run({"brisc": f"li t0, {pcbuf(2)}\n li t1, 9\n sw t1, 0(t0)\n ecall"})
    assert int(tile.pcbufs.count[2]) == 1
    tile.reset()
    assert int(tile.pcbufs.count[2]) == 0
