"""The tile's hardware performance counters (tensixsim.mmio.perf_counters), driven as tt-metal's and
tt-llk's counter code drives them: configure a bank, start it (a rising edge of bit 0), run, stop it
(bit 1), then select each counter in the mode register and read OUT_L and OUT_H.

The references are independent of the counters: the instructions each thread issued and the cycles it
issued them at (the engine's retired-instruction log, Engine.retired), the cycles each instruction
holds its unit (one for the instructions used here: SETRWC, SFPNOP, DMANOP, MatrixUnit.md / SFPNOP.md /
DMANOP.md), and hand-worked windows."""

from __future__ import annotations

from itertools import pairwise

import pytest
from asm import assemble
from test_tile import RESET_PC, rotl2

from tensixsim import Tile, Unimplemented
from tensixsim.arch.perf_counters import BANKS, counters, events
from tensixsim.isa import isa_for
from tensixsim.tensix.sync import B5
from tensixsim.timing import FRONTEND

DEBUG = 0xFFB12000
RESULTS = 0x20000
BANK = {b.name: b for b in BANKS}
ENGINES = ("native", "python")


def word(isa, name: str, **fields: int) -> str:
    return f".word 0x{rotl2(isa.encode(name, **fields)):08x}"


def store(address: int, value: int) -> str:
    return f"li t0, {address}\n li t1, {value}\n sw t1, 0(t0)\n"


def configure_and_start(bank: str, mode: int = 0) -> str:
    """tt-llk's configure + start: reference period at its maximum, the mode, then 0 and START."""
    base = DEBUG + BANK[bank].control
    return store(base, 0xFFFFFFFF) + store(base + 4, mode) + store(base + 8, 0) + store(base + 8, 1)


def stop(bank: str) -> str:
    base = DEBUG + BANK[bank].control
    return store(base + 8, 0) + store(base + 8, 2)


def read_out(reads: list[tuple[str, int]]) -> str:
    """For each (bank, select): write the select into the mode register, then store OUT_L and OUT_H
    at RESULTS + 8 i."""
    code = f"li s1, {RESULTS}\n"
    for i, (bank, select) in enumerate(reads):
        facts = BANK[bank]
        code += store(DEBUG + facts.control + 4, select << 8)
        code += f"li t0, {DEBUG + facts.out}\n lw t1, 0(t0)\n lw t2, 4(t0)\n"
        code += f"sw t1, {8 * i}(s1)\n sw t2, {8 * i + 4}(s1)\n"
    return code


def delay(iterations: int) -> str:
    return f"li t2, {iterations}\n 1: addi t2, t2, -1\n bnez t2, 1b\n"


def run(programs: dict[str, str], arch: str = "blackhole", engine: str = "native") -> Tile:
    tile = Tile(arch, engine=engine)
    for core, source in programs.items():
        tile.write(RESET_PC[core], assemble(source + "\n ecall\n", base=RESET_PC[core]))
    tile.backend.retired = []
    tile.run(max_cycles=200_000, release=list(programs))
    return tile


def outputs(tile: Tile, count: int) -> list[tuple[int, int]]:
    data = tile.read(RESULTS, 8 * count)
    values = [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(2 * count)]
    return list(zip(values[0::2], values[1::2], strict=True))


def select(arch: str, bank: str, name: str) -> int:
    return next(s for s, n in counters(arch)[bank].items() if n == name)


# ---------------------------------------------------------------- counts against the retire log


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_instruction_counts_and_unit_occupancy(arch: str, engine: str):
    """TRISC1 starts INSTRN_THREAD and FPU, pushes 6 SETRWCs (matrix unit), 4 SFPNOPs (vector unit)
    and 3 DMANOPs (scalar unit), each holding its unit a cycle, and stops the banks once they have
    issued: thread 1 issued 13, the matrix unit was busy 6 cycles, the vector unit 4, either 10; no
    thread stalled (one instruction a cycle, no wait)."""
    isa = isa_for(arch)
    setrwc = word(isa, "SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=0)
    body = [setrwc] * 6 + [word(isa, "SFPNOP")] * 4 + [word(isa, "DMANOP")] * 3
    names = [
        ("INSTRN_THREAD", "THREAD_INSTRUCTIONS_1"),
        ("INSTRN_THREAD", "THREAD_INSTRUCTIONS_0"),
        ("INSTRN_THREAD", "THREAD_STALLS_1"),
        ("INSTRN_THREAD", "FPU_INSTRN_AVAILABLE_1"),
        ("INSTRN_THREAD", "THCON_INSTRN_AVAILABLE_1"),
        ("INSTRN_THREAD", "CFG_INSTRN_AVAILABLE_1"),
        ("FPU", "FPU_COUNTER"),
        ("FPU", "SFPU_COUNTER"),
        ("FPU", "MATH_COUNTER"),
    ]
    reads = [(bank, select(arch, bank, name)) for bank, name in names]
    program = (
        configure_and_start("INSTRN_THREAD")
        + configure_and_start("FPU")
        + "\n".join(body)
        + "\n"
        + delay(40)
        + stop("INSTRN_THREAD")
        + stop("FPU")
        + read_out(reads)
    )
    tile = run({"trisc1": program}, arch, engine)
    got = outputs(tile, len(reads))
    # The reference: every instruction issued within both windows, one a cycle.
    issued = [c for t, _, c in tile.backend.retired if t == 1]
    assert len(issued) == 13 and issued == list(range(issued[0], issued[0] + 13))
    assert [count for _, count in got] == [13, 0, 0, 10, 3, 0, 6, 4, 10]
    # OUT_L: the bank's window, the same for every select; INSTRN_THREAD started four stores earlier
    # and stopped two stores earlier than FPU, and each bank's window holds all 13 issues.
    windows = {
        bank: {ref for (b, _), (ref, _) in zip(reads, got, strict=True) if b == bank} for bank, _ in reads
    }
    assert all(len(w) == 1 for w in windows.values())
    instrn, fpu = windows["INSTRN_THREAD"].pop(), windows["FPU"].pop()
    assert instrn > fpu > issued[-1] - issued[0]


def test_a_blocked_thread_stalls_for_the_cycles_the_log_shows():
    """TRISC1 pushes SEMINIT (semaphore 0 empty), SEMWAIT(thcon, while empty) and a DMANOP; TRISC0
    posts the semaphore after a delay. The DMANOP waits from the cycle after the SEMWAIT issued to
    the cycle it issues: THREAD_STALLS_1, ANY_THREAD_STALL, WAITING_FOR_NONZERO_SEM_1 and the cycles
    of THCON_INSTRN_AVAILABLE_1 beyond its one issue are those cycles; thread 0 never stalled."""
    isa = isa_for("blackhole")
    trisc1 = (
        configure_and_start("INSTRN_THREAD")
        + "\n".join(
            [
                word(isa, "SEMINIT", max_value=1, init_value=0, sem_sel=1),
                word(isa, "SEMWAIT", stall_res=B5, sem_sel=1, wait_sem_cond=1),
                word(isa, "DMANOP"),
            ]
        )
        + "\n"
        + delay(300)
        + stop("INSTRN_THREAD")
        + read_out(
            [
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "THREAD_STALLS_1")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "THCON_INSTRN_AVAILABLE_1")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "SYNC_INSTRN_AVAILABLE_1")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "THREAD_STALLS_0")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "THREAD_INSTRUCTIONS_0")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "ANY_THREAD_STALL")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "WAITING_FOR_NONZERO_SEM_1")),
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "WAITING_FOR_NONFULL_SEM_1")),
            ]
        )
    )
    trisc0 = delay(100) + word(isa, "SEMPOST", sem_sel=1)
    for engine in ENGINES:
        tile = run({"trisc1": trisc1, "trisc0": trisc0}, engine=engine)
        log = tile.backend.retired
        semwait, dmanop = (c for t, w, c in log if t == 1 and isa.decode(w).name in ("SEMWAIT", "DMANOP"))
        stalled = dmanop - (semwait + 1)
        assert stalled > 100  # (the post comes after TRISC0's 100-iteration loop)
        got = outputs(tile, 8)
        assert [count for _, count in got] == [stalled, stalled + 1, 2, 0, 1, stalled, stalled, 0]


@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_a_stallwait_on_the_scalar_unit_counts_as_waiting_for_it(arch: str):
    """Four SHIFTDMAREGs keep the scalar unit busy (ScalarUnit.md: three cycles each, the log's spacing);
    STALLWAIT(thcon; C0, ThCon busy) issues after the last, and the DMANOP behind it first waits for
    the busy unit itself (a resource wait, not a STALLWAIT's), then is held by the STALLWAIT's
    condition: WAITING_FOR_THCON_IDLE_1 is the cycles from the later of the cycle after the STALLWAIT
    and the unit's free cycle to the DMANOP's issue, and nothing else is counted as a wait;
    THREAD_STALLS_1 is every gap between the thread's issues (each instruction was queued by then)."""
    isa = isa_for(arch)
    shift = word(
        isa, "SHIFTDMAREG", op_b_is_const=1, op_sel=0, result_reg_index=1, op_b_reg_index=1, op_a_reg_index=1
    )
    names = [f"WAITING_FOR_{w}_IDLE_1" for w in ("THCON", "UNPACK", "PACK", "MATH", "MOVE", "MMIO", "SFPU")]
    reads = [("INSTRN_THREAD", select(arch, "INSTRN_THREAD", name)) for name in [*names, "THREAD_STALLS_1"]]
    program = (
        configure_and_start("INSTRN_THREAD")
        + "\n".join([shift] * 4 + [word(isa, "STALLWAIT", stall_res=B5, wait_res=1), word(isa, "DMANOP")])
        + "\n"
        + delay(40)
        + stop("INSTRN_THREAD")
        + read_out(reads)
    )
    for engine in ENGINES:
        tile = run({"trisc1": program}, arch, engine)
        log = [(isa.decode(w).name, c) for t, w, c in tile.backend.retired if t == 1]
        stallwait, dmanop = (c for name, c in log if name in ("STALLWAIT", "DMANOP"))
        shifts = [c for name, c in log if name == "SHIFTDMAREG"]
        free = shifts[-1] + (shifts[1] - shifts[0])
        held = dmanop - max(stallwait + 1, free)
        assert held > 0
        # Every instruction was queued before the one ahead of it went: each gap is a stall.
        stalls = sum(b - a - 1 for (_, a), (_, b) in pairwise(log))
        assert [count for _, count in outputs(tile, len(reads))] == [held] + [0] * 6 + [stalls]


# ---------------------------------------------------------------- the registers themselves


def test_counts_run_on_until_stopped_and_a_start_zeroes_them():
    """Read while counting, OUT_H and OUT_L show the counts so far; a second start zeroes them; a
    stop freezes them (reads after it give the same)."""
    isa = isa_for("blackhole")
    nops = "\n".join([word(isa, "DMANOP")] * 5) + "\n"
    sel = select("blackhole", "INSTRN_THREAD", "THREAD_INSTRUCTIONS_1")
    out = DEBUG + BANK["INSTRN_THREAD"].out
    mode = DEBUG + BANK["INSTRN_THREAD"].control + 4

    def save(offset: int) -> str:
        return f"li t0, {out}\n lw t1, 0(t0)\n lw t2, 4(t0)\n sw t1, {offset}(s1)\n sw t2, {offset + 4}(s1)\n"

    program = (
        f"li s1, {RESULTS}\n"
        + configure_and_start("INSTRN_THREAD")
        + store(mode, sel << 8)
        + nops
        + delay(20)
        + save(0)  # running: 5 so far
        + nops
        + delay(20)
        + save(8)  # running: 10
        + store(DEBUG + BANK["INSTRN_THREAD"].control + 8, 0)
        + store(DEBUG + BANK["INSTRN_THREAD"].control + 8, 1)  # restart: zeroed
        + nops
        + delay(20)
        + stop("INSTRN_THREAD")
        + nops
        + delay(20)
        + save(16)  # stopped after 5 more
        + delay(20)
        + save(24)  # unchanged
    )
    tile = run({"trisc1": program})
    (l0, h0), (l1, h1), (l2, h2), (l3, h3) = outputs(tile, 4)
    assert (h0, h1, h2, h3) == (5, 10, 5, 5)
    assert 0 < l0 < l1 and (l2, h2) == (l3, h3) and l2 < l1


@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_registers_read_back_and_read_zero_before_a_start(arch: str):
    """Reference period, mode and control hold what is written (tt-metal polls the mode register back
    after a select); the outputs read 0 until the bank is first started; a host access works too."""
    tile = Tile(arch)
    for bank in BANKS:
        base = DEBUG + bank.control
        for offset, value in ((0, 0x12345678), (4, 0x1FF00), (8, 0)):
            tile.host_register(base + offset, 0, value)
            assert tile.host_register(base + offset, 0) == value
        assert tile.host_register(DEBUG + bank.out, 0) == tile.host_register(DEBUG + bank.out + 4, 0) == 0


def test_mode_two_keeps_no_window_and_mode_one_past_its_period_is_refused():
    """Mode 2 counts without the window's cycles (OUT_L reads 0); mode 1 stops itself after the
    reference period, which the emulator does not model: reading it after that is Unimplemented,
    naming the core, the pc and the period."""
    sel = select("blackhole", "INSTRN_THREAD", "THREAD_INSTRUCTIONS_1")
    isa = isa_for("blackhole")
    program = configure_and_start("INSTRN_THREAD", mode=2) + word(isa, "DMANOP") + "\n" + delay(10)
    program += stop("INSTRN_THREAD") + read_out([("INSTRN_THREAD", sel)])
    assert outputs(run({"trisc1": program}), 1) == [(0, 1)]

    base = DEBUG + BANK["INSTRN_THREAD"].control
    program = store(base, 5) + store(base + 4, 1) + store(base + 8, 1) + delay(10)
    program += f"li t0, {DEBUG + BANK['INSTRN_THREAD'].out}\n lw t1, 0(t0)\n"
    with pytest.raises(Unimplemented, match="mode 1") as error:
        run({"trisc1": program})
    assert error.value.core == "trisc1" and error.value.value == 5 and error.value.pc is not None


def test_perf_cnt_all_starts_and_stops_the_instruction_and_fpu_banks():
    """PERF_CNT_ALL (tt-llk's arm_all_counters): a rising edge starts INSTRN_THREAD and FPU together,
    not the others."""
    isa = isa_for("blackhole")
    all_reg = DEBUG + 0x3C
    program = (
        store(all_reg, 1)
        + "\n".join([word(isa, "SFPNOP")] * 3)
        + "\n"
        + delay(20)
        + store(all_reg, 2)
        + read_out(
            [
                ("INSTRN_THREAD", select("blackhole", "INSTRN_THREAD", "THREAD_INSTRUCTIONS_1")),
                ("FPU", select("blackhole", "FPU", "SFPU_COUNTER")),
                ("TDMA_PACK", select("blackhole", "TDMA_PACK", "PACKER_BUSY")),
            ]
        )
    )
    tile = run({"trisc1": program})
    got = outputs(tile, 3)
    assert [count for _, count in got] == [3, 3, 0]
    assert got[0][0] == got[1][0] > 0 and got[2] == (0, 0)
    # The run's result holds every counter of the two banks, and its summary the ones that counted.
    result = tile.result()
    assert set(result.perf_counters) == set(counters("blackhole")["INSTRN_THREAD"].values()) | set(
        counters("blackhole")["FPU"].values()
    )
    assert result.perf_counters["SFPU_COUNTER"] == got[1]
    summary = result.summary()
    assert "SFPU_COUNTER" in summary and "THREAD_STALLS_1" not in summary


def test_a_reset_tile_forgets_its_counters():
    tile = Tile("blackhole")
    control = DEBUG + BANK["FPU"].control
    tile.host_register(control + 8, 0, 1)
    tile.host_register(control + 8, 10, 2)
    assert tile.host_register(DEBUG + BANK["FPU"].out, 20) == 10
    tile.reset()
    assert tile.host_register(control + 8, 0) == 0
    assert tile.host_register(DEBUG + BANK["FPU"].out, 0) == 0


def test_every_modelled_counter_has_an_event_and_a_name():
    """The architecture tables: every event a counter counts exists (tensix.frontend.perf), and the
    counts of counters per bank are tt-metal's hw_counters.h's."""
    from tensixsim.tensix.frontend.perf import event_names

    known = set(event_names(3))
    for arch, sizes in (("blackhole", (59, 18, 3, 5)), ("wormhole", (59, 22, 3, 14))):
        tables = counters(arch)
        assert tuple(len(tables[b]) for b in ("INSTRN_THREAD", "TDMA_UNPACK", "FPU", "TDMA_PACK")) == sizes
        for bank, table in events(arch).items():
            assert set(table) <= set(tables[bank]) and set(table.values()) <= known


# ---------------------------------------------------------------- a matmul through three pipes


@pytest.mark.parametrize("engine", ENGINES)
def test_counters_of_a_matmul_through_three_pipes(engine: str):
    """The three-pipe matmul of test_e2e_raw (thread 0 unpacks both tiles, thread 1 runs 64 MVMULs,
    thread 2 waits on a semaphore and packs), with every bank started by the host before and stopped
    after: each thread's instruction count is the retire log's; the matrix unit was busy one cycle an
    MVMUL and a cycle for each other matrix-unit instruction, no vector-unit instruction ran, so MATH
    equals FPU; thread 0's UNPACRs account for both unpackers' fetch cycles, none is thread 1's; the
    packer's stall includes its wait from its SEMWAIT to the last MVMUL; ANY_THREAD_STALL lies between
    the longest thread's stalls and their sum; the window is the run."""
    import numpy as np
    from test_e2e_raw import (
        MATH_THREAD,
        PACK_THREAD,
        UNPACK_THREAD,
        configure_math,
        configure_packer,
        configure_unpackers,
        load_inputs,
        matmul_words,
        pack_words,
        random_bf16,
        run_three,
        unpack_words,
    )

    rng = np.random.default_rng(99)
    x, y = random_bf16(rng), random_bf16(rng)
    tile = Tile("blackhole", engine=engine)  # test_e2e_raw.new_tile on the engine asked for
    configure_unpackers(tile)
    configure_packer(tile, fp32_dest=True)
    configure_math(tile, fp32_dest=True)
    load_inputs(tile, y, x)
    log: list[tuple[int, int, int]] = []
    tile.backend.retired = log
    for bank in BANKS:
        tile.host_register(DEBUG + bank.control + 8, 0, 1)
    run_three(
        tile,
        {UNPACK_THREAD: unpack_words(tile), MATH_THREAD: matmul_words(tile), PACK_THREAD: pack_words(tile)},
    )
    end = max(p.done_cycle for p in tile.backend.pipes)
    for bank in BANKS:
        tile.host_register(DEBUG + bank.control + 8, end, 2)

    def count(bank: str, name: str) -> tuple[int, int]:
        tile.host_register(DEBUG + BANK[bank].control + 4, end, select("blackhole", bank, name) << 8)
        out = DEBUG + BANK[bank].out
        return tile.host_register(out, end), tile.host_register(out + 4, end)

    isa = tile.coprocessor.isa
    for t in range(3):
        assert count("INSTRN_THREAD", f"THREAD_INSTRUCTIONS_{t}") == (
            end,
            sum(1 for u, _, _ in log if u == t),
        )
    matrix = [c for _, w, c in log if isa.decode(w).spec.unit == "matrix"]
    assert sum(1 for _, w, _ in log if isa.decode(w).name == "MVMUL") == 64
    assert count("FPU", "FPU_COUNTER")[1] == count("FPU", "MATH_COUNTER")[1] == len(matrix)
    assert count("FPU", "SFPU_COUNTER")[1] == 0
    fetched = tile.result().units
    assert count("TDMA_UNPACK", "UNPACK0_BUSY_THREAD0")[1] == fetched["unpacker0"].busy_cycles > 0
    assert count("TDMA_UNPACK", "UNPACK1_BUSY_THREAD0")[1] == fetched["unpacker1"].busy_cycles > 0
    assert (
        count("TDMA_UNPACK", "UNPACK0_BUSY_THREAD1")[1]
        == count("TDMA_UNPACK", "UNPACK1_BUSY_THREAD1")[1]
        == 0
    )
    semwait = next(c for t, w, c in log if t == PACK_THREAD and isa.decode(w).name == "SEMWAIT")
    # A pipe's cycles are each counted once at most: stalled or issuing, and of one kind.
    kinds = ("CFG", "SYNC", "THCON", "MOVE", "FPU", "UNPACK", "PACK")
    for t in range(3):
        stalls, issued = count("INSTRN_THREAD", f"THREAD_STALLS_{t}")[1], sum(1 for u, _, _ in log if u == t)
        assert stalls + issued <= end
        available = sum(count("INSTRN_THREAD", f"{k}_INSTRN_AVAILABLE_{t}")[1] for k in kinds)
        assert issued <= available <= stalls + issued
    # The packer waited on the semaphore, the matrix unit for its Src banks; no pipe's blocks on the
    # kinds the counters name add up to more than its stalls.
    assert count("INSTRN_THREAD", "WAITING_FOR_NONZERO_SEM_2")[1] >= max(matrix) - semwait
    valid = (
        count("INSTRN_THREAD", "WAITING_FOR_SRCA_VALID")[1]
        + count("INSTRN_THREAD", "WAITING_FOR_SRCB_VALID")[1]
    )
    assert 0 < valid <= count("INSTRN_THREAD", "THREAD_STALLS_1")[1]
    names = counters("blackhole")["INSTRN_THREAD"].values()
    for t in range(3):
        waits = sum(
            count("INSTRN_THREAD", n)[1] for n in names if n.startswith("WAITING_FOR") and n.endswith(f"_{t}")
        )
        assert waits <= count("INSTRN_THREAD", f"THREAD_STALLS_{t}")[1]
    # Thread 2's words (SEMWAIT, the PACRs, SEMGET) were all queued at cycle 0 and reach the gate from
    # cycle 2 (timing.FRONTEND.push_to_issue), none expands or holds its thread: every cycle from
    # then to its last issue that issued nothing is a stall.
    issues = [c for u, _, c in log if u == PACK_THREAD]
    gaps = issues[0] - FRONTEND.push_to_issue + sum(b - a - 1 for a, b in pairwise(issues))
    assert count("INSTRN_THREAD", "THREAD_STALLS_2")[1] == gaps
    # Some pipe stalled: at least as long as any one did, at most as long as they did in all.
    stalls = [count("INSTRN_THREAD", f"THREAD_STALLS_{t}")[1] for t in range(3)]
    assert max(stalls) <= count("INSTRN_THREAD", "ANY_THREAD_STALL")[1] <= min(sum(stalls), end)
    assert count("INSTRN_THREAD", "THREAD_STALLS_2")[1] >= max(matrix) - semwait
    assert count("TDMA_PACK", "PACKER_BUSY")[1] == fetched["pack"].busy_cycles > 0


def test_a_mode_one_bank_can_be_started_again_after_its_period():
    """A start needs nothing of the window before it: restarting a mode-1 bank past its period (in
    mode 0) is a fresh window, not an access to the expired one."""
    tile = Tile("blackhole")
    base = DEBUG + BANK["FPU"].control
    tile.host_register(base, 0, 5)
    tile.host_register(base + 4, 0, 1)
    tile.host_register(base + 8, 0, 1)
    tile.host_register(base + 4, 100, 0)
    tile.host_register(base + 8, 100, 0)
    tile.host_register(base + 8, 100, 1)
    tile.host_register(base + 8, 110, 2)
    assert tile.host_register(DEBUG + BANK["FPU"].out, 120) == 10
