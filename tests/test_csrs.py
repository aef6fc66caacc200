"""Blackhole's CSRs (BlackholeA0 BabyRISCV/CSRs.md): what each reads and keeps, which raise, and the
timing cfg0's fields and pmacfg0/1 give the core. The reference values below are copied from the
page, not from the emulator's table."""

from __future__ import annotations

from dataclasses import replace

import pytest
from asm import assemble

from tensixsim import InvalidProgram, Tile, Unimplemented
from tensixsim.sdk import calibration
from tensixsim.sdk.calibration.case import Case
from tensixsim.timing import FRONTEND, RISCV

RESET_PC = {"brisc": 0x0, "ncrisc": 0x12000, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000}
DATA = 0x20000

# CSRs.md: read-only CSRs and their values.
CONSTANT = {0x008: 0, 0x300: 0x80006600, 0x301: 0x40201123, 0xF14: 0}
# CSRs that hold what is written (scratch, configuration, vector state), with their reset values:
# every field of cfg0 clear except StMergeTimer (bits 13..17) = 16; vlenb "initially 16".
STORED = {
    0x003: 0,
    0x009: 0,
    0x00A: 0,
    0x320: 0,
    0x323: 0,
    0x324: 0,
    0x7C0: 16 << 13,
    0x7C1: 0,
    0x7C2: 0,
    0x7C3: 0,
    0x7C4: 0,
    0x7C5: 0,
    0x7C6: 0,
    0xBCA: 0,
    0xC20: 0,
    0xC21: 0,
    0xC22: 16,
}
SSTATUS = range(0xBC2, 0xBCA)  # scratch on BRISC and NCRISC, a stream register elsewhere


def run(core: str, source: str) -> Tile:
    tile = Tile("blackhole")
    tile.write(RESET_PC[core], assemble(source, base=RESET_PC[core]))
    tile.run(max_cycles=100_000, release=[core])
    return tile


def words(tile: Tile, count: int) -> list[int]:
    raw = tile.read(DATA, 4 * count)
    return [int.from_bytes(raw[4 * i : 4 * i + 4], "little") for i in range(count)]


@pytest.mark.parametrize("core", ["brisc", "ncrisc", "trisc1"])
def test_every_csr_reads_its_reset_value_keeps_what_is_written_or_ignores_it(core: str) -> None:
    scratch = list(SSTATUS) if core in ("brisc", "ncrisc") else []
    csrs = [*CONSTANT, *STORED, *scratch]
    lines = [f"li s0, {DATA}", "li t1, 0x5A5A0000"]
    for i, csr in enumerate(csrs):
        lines += [f"csrr a0, {csr:#x}", f"sw a0, {8 * i}(s0)", f"addi t2, t1, {i}"]
        # pmacfg's low bit would order every access: write a value with it clear.
        lines += [f"csrw {csr:#x}, t2", f"csrr a0, {csr:#x}", f"sw a0, {8 * i + 4}(s0)"]
    tile = run(core, "\n".join([*lines, "ecall"]))
    got = words(tile, 2 * len(csrs))
    for i, csr in enumerate(csrs):
        reset = CONSTANT.get(csr, STORED.get(csr, 0))
        written = reset if csr in CONSTANT else 0x5A5A0000 + i
        assert (got[2 * i], got[2 * i + 1]) == (reset, written), f"CSR {csr:#x}"


@pytest.mark.parametrize(
    ("core", "access", "csr"),
    [
        ("trisc0", "csrr a0, 0xbc2", 0xBC2),  # a TRISC's sstatus: which stream's register, unstated
        ("trisc2", "csrw 0xbc9, a1", 5),
        ("brisc", "csrr a0, 0xbc0", 0xBC0),  # tt_cfg_qstatus
        ("trisc1", "csrr a0, 0xbc1", 0xBC1),  # tt_cfg_bstatus
        ("brisc", "csrr a0, 0xb03", 0xB03),  # mhpmcounter3: its events are not documented
        ("ncrisc", "csrw 0xb84, a1", 5),  # mhpmcounter4h (a write names the value)
    ],
)
def test_unmodelled_csrs_raise_unimplemented_naming_core_pc_and_csr(core: str, access: str, csr: int) -> None:
    tile = Tile("blackhole")
    source = f"li a1, 5\nnop\n{access}\necall"
    tile.write(RESET_PC[core], assemble(source, base=RESET_PC[core]))
    with pytest.raises(Unimplemented) as info:
        tile.run(max_cycles=100_000, release=[core])
    assert (info.value.core, info.value.pc, info.value.value) == (core, RESET_PC[core] + 8, csr)


def test_csrrw_to_x0_does_not_read_and_csrrs_of_x0_does_not_write() -> None:
    """Zicsr: the write-only and read-only forms never touch the other side (here an unmodelled
    side would raise)."""
    tile = Tile("blackhole")
    tile.write(0, assemble("csrrs a0, 0xbc2, x0\ncsrrw x0, 0x7c3, a0\ncsrr a1, 0x7c3\necall", base=0))
    tile.run(max_cycles=100_000, release=["brisc"])
    assert tile.core("brisc").reg("a1") == 0  # sstatus0 on BRISC: scratch, zero out of reset
    with pytest.raises(Unimplemented):
        run("brisc", "li a0, 1\ncsrrs a1, 0xbc0, a0\necall")


def test_a_counter_counts_on_from_the_value_written() -> None:
    """``csrw mcycle, 0`` then ``csrr mcycle``: the CSR access's RISCV.csr cycles; minstret likewise
    counts the one instruction retired in between; the high word is written on its own."""
    tile = run(
        "brisc",
        "csrw mcycle, zero\ncsrr a0, mcycle\ncsrw minstret, zero\ncsrr a1, minstret\n"
        "li t0, 7\ncsrw mcycleh, t0\ncsrr a2, mcycleh\necall",
    )
    core = tile.core("brisc")
    assert (core.reg("a0"), core.reg("a1"), core.reg("a2")) == (RISCV.csr, 1, 7)


def test_a_soft_reset_brings_the_csrs_back_to_their_reset_values() -> None:
    """TRISC0 records cfg1 and cfg0 as it starts, then changes both; BRISC holds it in reset and
    releases it again: the second start finds the reset values again."""
    release, hold = 0x47800 & ~(1 << 11) & ~(1 << 12), 0x47800 & ~(1 << 11)  # BRISC stays out of reset
    trisc = f"""
        li t1, {DATA}
        csrr a0, 0x7c3
        sw a0, 0(t1)
        csrr a0, 0x7c0
        sw a0, 4(t1)
        li t0, 99
        csrw 0x7c3, t0
        li t0, 0x1000
        csrs 0x7c0, t0
    1:  j 1b
    """
    wait = "li t2, 400\n2: addi t2, t2, -1\nbnez t2, 2b"
    brisc = f"""
        li t0, 0xFFB121B0
        li t1, {release}
        sw t1, 0(t0)
        {wait}
        li t1, {hold}
        sw t1, 0(t0)
        li t3, {DATA}
        li t4, -1
        sw t4, 0(t3)
        sw t4, 4(t3)
        li t1, {release}
        sw t1, 0(t0)
        {wait}
        li t1, {hold}
        sw t1, 0(t0)
        ecall
    """
    tile = Tile("blackhole")
    tile.write(0, assemble(brisc, base=0))
    tile.write(RESET_PC["trisc0"], assemble(trisc, base=RESET_PC["trisc0"]))
    tile.run(max_cycles=100_000, release=["brisc"])
    assert words(tile, 2) == [0, 16 << 13]
    assert tile.core("trisc0").csr_values[0x7C3] == 99


def test_unknown_csrs_stay_invalid_programs() -> None:
    with pytest.raises(InvalidProgram):
        run("brisc", "csrr a0, 0x7c7\necall")


# ---------------------------------------------------------------- timing


def _slope(body: str, prologue: str = "") -> float:
    """Cycles one iteration of ``body`` adds to the measured loop (the loop with an empty body
    subtracted), from the difference of a 32- and a 64-iteration run: no first-pass costs."""
    case = Case("cfg0", "cfg0", body, 1, (1.0, 1.0))
    totals = [
        calibration.run_case(replace(case, iters=n, prologue=prologue)).per_core["brisc"] * n
        for n in (32, 64)
    ]
    return (totals[1] - totals[0]) / 32


def _cfg0(bits: int) -> str:
    return f"li t0, {bits:#x}\ncsrs 0x7c0, t0"


def test_dis_bp_every_taken_branch_or_jump_costs_the_bubble() -> None:
    """cfg0 DisBp: nothing is predicted, so a taken branch or jump costs itself and the four-cycle
    bubble (BabyRISCV README); a branch not taken costs nothing more, the frontend fetching on."""
    bubble = RISCV.branch_mispredict
    assert _slope("jal zero, .+8\nnop") == 1
    assert _slope("jal zero, .+8\nnop", _cfg0(1 << 1)) == 1 + bubble
    assert _slope("beqz zero, .+8\nnop", _cfg0(1 << 1)) == 1 + bubble
    assert _slope("bnez zero, .+8\nnop", _cfg0(1 << 1)) == 2


def test_sync_all_ops_makes_every_instruction_cost_what_a_csr_access_does() -> None:
    """cfg0 SyncAllOps: the next instruction waits until the previous one has retired, as after a
    CSR access (4.0 measured): eight dependent adds take 8 x RISCV.csr."""
    chain = "\n".join(["add a0, a0, a1"] * 8)
    assert _slope(chain) == 8
    assert _slope(chain, _cfg0(1 << 9)) == 8 * RISCV.csr


def test_dis_csr_sync_lets_csr_accesses_and_fences_go_at_one_a_cycle() -> None:
    assert _slope("csrr a0, 0x7c0") == RISCV.csr
    assert _slope("csrr a0, 0x7c0", _cfg0(1 << 10)) == 1
    assert _slope("fence") == RISCV.fence
    assert _slope("fence", _cfg0(1 << 10)) == 1


def test_dis_st_merge_makes_every_l1_store_a_narrow_write() -> None:
    """cfg0 DisStMerge: four stores filling a 16-byte block no longer coalesce; each is a narrow
    write of RISCV.l1_store_drain cycles, one after another, so the loop takes 4 x 5 = 20 cycles
    an iteration, its own three instructions hidden under the writes."""
    block = "\n".join(f"sw a0, {4 * i}(s0)" for i in range(4))
    assert _slope(block) == 4
    assert _slope(block, _cfg0(1 << 12)) == 4 * RISCV.l1_store_drain - 3


def test_dis_reg_forwarding_makes_a_dependent_instruction_wait_for_retirement() -> None:
    """cfg0 DisRegForwarding: an add reading the previous add's result issues the cycle after that
    add retires, two cycles apart; the chain's first add reads a result three instructions old."""
    chain = "\n".join(["add a0, a0, a1"] * 8)
    assert _slope(chain, _cfg0(1 << 20)) == 1 + 7 * 2


def test_dis_ld_buf_byp_makes_a_load_wait_for_the_store_queue_to_drain() -> None:
    """cfg0 DisLdBufByp: the load of another word after a store waits in EX1 until the store has
    left the queue (issue + 1 + RISCV.l1_store_drain): the iteration takes 10 cycles (sw, the wait,
    lw, the loop's three), 3 of them the loop's."""
    body = "sw a0, 4(s0)\nlw a1, 8(s0)"
    assert _slope(body, _cfg0(1 << 0)) == (1 + RISCV.l1_store_drain) + 1 + 3 - 3


def test_pmacfg_orders_every_load_and_store_as_if_a_fence_came_first() -> None:
    """pmacfg0's low bit: each lw waits for the previous one's answer (RISCV.l1_load_latency), as a
    fence does, then the fence's RISCV.fence cycles: 12 cycles an iteration, 3 of them the loop's."""
    assert _slope("lw a0, 0(s0)", "li t0, 1\ncsrw 0x7c1, t0") == RISCV.l1_load_latency + RISCV.fence - 3
    # pmacfg1 alike; a value with the low bit clear orders nothing.
    assert _slope("lw a0, 0(s0)", "li t0, 1\ncsrw 0x7c2, t0") == RISCV.l1_load_latency + RISCV.fence - 3
    assert _slope("lw a0, 0(s0)", "li t0, 2\ncsrw 0x7c1, t0") == _slope("lw a0, 0(s0)")


def _nop_word() -> int:
    from tensixsim.isa import isa_for

    nop = isa_for("blackhole").encode("NOP")
    return ((nop << 2) | (nop >> 30)) & 0xFFFFFFFF


def _pushing(cfg0: int, body: str) -> tuple[int, int]:
    """TRISC1 with cfg0 bits ``cfg0`` set runs ``body`` between two mcycle reads, then the PC
    buffer's done check: (cycles of the body and the second read, cycles until the coprocessor has
    run everything)."""
    source = (
        f"li t0, {cfg0}\ncsrs 0x7c0, t0\ncsrr a0, mcycle\n{body}\ncsrr a1, mcycle\n"
        "li t0, 0xFFE80004\nsw zero, 0(t0)\nlw t1, 0(t0)\nand zero, zero, t1\ncsrr a2, mcycle\necall"
    )
    tile = run("trisc1", source)
    core = tile.core("trisc1")
    return core.reg("a1") - core.reg("a0"), core.reg("a2") - core.reg("a0")


def test_a_trisc_fuses_up_to_four_adjacent_inline_words_into_one_cycle() -> None:
    """PushTensixInstruction.md: up to four adjacent .ttinsn words are fused and executed in one
    cycle while cfg0's DisTriscCache (bit 18) is clear, as out of reset. Ten words: groups of 4, 4
    and 2, three cycles; with DisTriscCache set, ten. Any other instruction ends a group."""
    word = f".word {_nop_word():#x}"
    ten = "\n".join([word] * 10)
    fused, _ = _pushing(0, ten)
    assert fused == RISCV.csr + 3
    unfused, _ = _pushing(1 << 18, ten)
    assert unfused == RISCV.csr + 10
    split = "\n".join([word, word, "addi a3, a3, 1", word, word, word, word, word])
    assert _pushing(0, split)[0] == RISCV.csr + 1 + 1 + 1 + 1  # (2) addi (4) (1)


def test_fused_words_still_leave_the_queue_one_a_cycle() -> None:
    """The frontend takes four words a cycle but issues one a thread a cycle: the done check after
    ten fused NOPs returns no earlier than ten cycles after the first reached the wait gate."""
    ten = "\n".join([f".word {_nop_word():#x}"] * 10)
    _, fused_total = _pushing(0, ten)
    _, unfused_total = _pushing(1 << 18, ten)
    push_to_issue = FRONTEND.push_to_issue
    assert fused_total >= RISCV.csr + push_to_issue + 10
    assert fused_total < unfused_total
