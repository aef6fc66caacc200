"""With ``Tile(l1_order=True)`` L1 traffic between cores is seen in cycle order, whatever the quantum.
``l1_order="pages"`` orders only the pages more than one core uses; where it counts no late first
use (Tile.l1_order_late) its results and cycles are those of the full ordering.

Cores run ahead of each other in slices; an L1 load, store or atomic is performed only once no other
running core is behind its cycle (Tile.sync_limit), so a store is visible to exactly the loads of
other cores at later cycles. These programs poll plain L1 words in loops that cannot be parked (each
iteration stores a count), so nothing but that ordering makes them agree across quanta.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from asm import L0_OFF, assemble
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.timing import NOC

FLAG, ACK, OUT = 0x30000, 0x30040, 0x30080
QUANTA = (7, 13, 37, 100, 2000, 5000)


def _handshake(
    quantum: int, order: bool | str = True, *, early: bool = False, delays: tuple[int, int] = (700, 300)
) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """BRISC counts down, notes rdcycle, sets FLAG; TRISC0 polls FLAG, counting its polls in L1 and
    noting the rdcycle at which it saw the flag, then sets ACK after a while; BRISC polls ACK the same
    way. ``early``: BRISC stores to the page first thing (and TRISC0 waits a little before it starts
    polling), so both cores use it from the start. ``delays``: the two countdowns. Returns the OUT
    words and each core's (cycles, instructions)."""
    first = "sw zero, 28(s2)" if early else "nop"
    wait = 12 if early else 1
    # (Both poll without a fence: with their L0 data caches off, as firmware has them, each sees
    # the other's store at its first load after it.)
    brisc = (
        L0_OFF
        + f"""
        li s0, {FLAG}
        li s1, {ACK}
        li s2, {OUT}
        {first}
        li t2, {delays[0]}
    1:  addi t2, t2, -1
        bnez t2, 1b
        rdcycle t3
        sw t3, 0(s2)
        li t1, 1
        sw t1, 0(s0)
        li t4, 0
    2:  addi t4, t4, 1
        sw t4, 16(s2)
        lw t1, 0(s1)
        beqz t1, 2b
        rdcycle t3
        sw t3, 20(s2)
        ecall
    """
    )
    trisc0 = (
        L0_OFF
        + f"""
        li s0, {FLAG}
        li s1, {ACK}
        li s2, {OUT}
        li t2, {wait}
    3:  addi t2, t2, -1
        bnez t2, 3b
        li t4, 0
    1:  addi t4, t4, 1
        sw t4, 4(s2)
        lw t1, 0(s0)
        beqz t1, 1b
        rdcycle t3
        sw t3, 8(s2)
        li t2, {delays[1]}
    2:  addi t2, t2, -1
        bnez t2, 2b
        rdcycle t3
        sw t3, 12(s2)
        li t1, 1
        sw t1, 0(s1)
        ecall
    """
    )
    tile, _, cores = _run_pair(brisc, trisc0, quantum, order)
    _LATE[0] = int(tile.l1_order_late[0])
    return tile.read(OUT, 24), cores


def _run_pair(
    brisc: str, trisc0: str, quantum: int, order
) -> tuple[Tile, object, dict[str, tuple[int, int]]]:
    """Run BRISC's and TRISC0's programs; the tile, the result and each core's (cycles, instructions)."""
    tile = Tile("blackhole", quantum=quantum, l1_order=order)
    tile.write(0, assemble(brisc))
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    result = tile.run(release=["brisc", "trisc0"], max_cycles=10**6)
    cores = {n: (result.cores[n].cycles, result.cores[n].instructions) for n in ("brisc", "trisc0")}
    return tile, result, cores


_LATE = [0]  # the last _handshake's Tile.l1_order_late


def _words(data: bytes) -> list[int]:
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]


def test_a_store_is_seen_by_the_first_poll_after_its_cycle():
    out, _ = _handshake(2000)
    set_flag, polls, seen, acked, ack_polls, seen_ack = _words(out)
    # An iteration of either poll loop (count, store, load, branch) takes about 12 cycles and a load
    # answers 9 cycles after it issues: the flag is seen within an iteration and a load of the store,
    # not at the next slice boundary (up to 2000 cycles later).
    assert set_flag < seen <= set_flag + 32
    assert acked < seen_ack <= acked + 32
    assert polls > 10 and ack_polls > 10  # both really polled


@pytest.mark.parametrize("quantum", QUANTA)
def test_handshake_results_and_cycles_do_not_depend_on_the_quantum(quantum):
    assert _handshake(quantum) == _handshake(1000)


_PURE = """
import json, sys
sys.path.insert(0, {tests!r})
from test_l1_between_cores import _LATE, _handshake
from tensixsim.riscv.native import native_library
out, cores = _handshake(37, {order!r})
answer = {{"native": native_library() is not None, "out": out.hex(), "cores": cores, "late": _LATE[0]}}
print(json.dumps(answer))
"""


@pytest.mark.parametrize("order", ["full", "pages"])
def test_the_python_hooks_order_l1_the_same_way(order):
    out, cores = _handshake(37, order)
    late = _LATE[0]
    env = dict(os.environ, TENSIXSIM_PURE_PYTHON="1")
    code = _PURE.format(tests=str(Path(__file__).parent), order=order)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    pure = json.loads(run.stdout)
    assert not pure["native"]
    assert bytes.fromhex(pure["out"]) == out
    assert {name: tuple(c) for name, c in pure["cores"].items()} == cores
    assert pure["late"] == late


def _last_store_wins(quantum: int) -> tuple[int, int, int]:
    """BRISC stores 0xB at about cycle 1400, TRISC0 0x70 at about 900 (both counted down); BRISC
    reads the word back and adds 0x100 at about 1700, TRISC0 adds 0x1000 at about 2500. Returns
    the word after the stores, after the adds, and the cycle BRISC's store issued at."""
    brisc = f"""
        li s0, {FLAG}
        li t2, 700
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t1, 0xB
        rdcycle t3
        sw t1, 0(s0)
        sw t3, 8(s0)
        li t2, 150
    2:  addi t2, t2, -1
        bnez t2, 2b
        lw t4, 0(s0)
        sw t4, 4(s0)
        li t1, 0x100
        amoadd.w zero, t1, 0(s0)
        ecall
    """
    trisc0 = f"""
        li s0, {FLAG}
        li t2, 450
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t1, 0x70
        sw t1, 0(s0)
        li t2, 800
    2:  addi t2, t2, -1
        bnez t2, 2b
        li t1, 0x1000
        amoadd.w zero, t1, 0(s0)
        ecall
    """
    tile = Tile("blackhole", quantum=quantum, l1_order=True)
    tile.write(0, assemble(brisc))
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.run(release=["brisc", "trisc0"], max_cycles=10**6)
    final, after_stores, stored_at = _words(tile.read(FLAG, 12))
    return after_stores, final, stored_at


@pytest.mark.parametrize("quantum", QUANTA)
def test_stores_of_two_cores_apply_in_cycle_order(quantum):
    after_stores, final, stored_at = _last_store_wins(quantum)
    assert 1200 < stored_at < 1600  # BRISC's store is the later one (TRISC0's: about 900)
    assert after_stores == 0xB  # BRISC read back its own value: TRISC0's earlier store came first
    assert final == 0xB + 0x100 + 0x1000  # both atomics applied


@pytest.mark.parametrize("quantum", (13, 2000))
def test_a_parked_poller_sees_the_count_reach_its_bound_no_earlier(quantum):
    # BRISC counts a word up every ~200 cycles and notes the cycle of its 30th store; NCRISC's poll
    # loop (parked) waits for the count to reach 30 and notes the cycle it saw it. (A core running
    # ahead in its slice used to let NCRISC see counts stored thousands of cycles later.)
    brisc = f"""
        li t0, {FLAG}
        li t1, 0
        li t2, 40
        li t5, 30
    loop:
        addi t1, t1, 1
        rdcycle t3
        sw t1, 0(t0)
        bne t1, t5, 1f
        sw t3, 4(t0)
    1:  li t4, 100
    delay:
        addi t4, t4, -1
        bnez t4, delay
        bne t1, t2, loop
        ecall
    """
    ncrisc = L0_OFF + f"li t0, {FLAG}\n li t2, 30\npoll:\n lw t1, 0(t0)\n bltu t1, t2, poll\n"
    ncrisc += "rdcycle t3\n sw t3, 8(t0)\n ecall"
    tile = Tile("blackhole", quantum=quantum, l1_order=True)
    tile.write(0, assemble(brisc))
    tile.write(0x12000, assemble(ncrisc, base=0x12000))
    tile.run(release=["brisc", "ncrisc"])
    stored, seen = _words(tile.read(FLAG + 4, 8))
    assert 29 * 200 < stored < seen <= stored + 32


@pytest.mark.parametrize("quantum", (7, 37, 2000))
def test_ordering_by_page_equals_the_full_ordering_when_both_cores_start_on_the_page(quantum):
    # BRISC stores to the page first thing, TRISC0 first uses it a few cycles later: a first use
    # that the other core has not run past (it waits for it), so from then on every access to the
    # page is ordered.
    full = _handshake(quantum, "full", early=True)
    assert _handshake(quantum, "pages", early=True) == full
    assert _LATE[0] == 0


def test_ordering_by_page_counts_accesses_it_could_not_order():
    # TRISC0 polls the page alone, in slices of 37 cycles that run past the cycle BRISC first stores
    # to it at (about 1400): BRISC's stores to the lines TRISC0 read (the flag) or wrote (its poll
    # count) come too late to be ordered before those accesses. Counted, and the result does differ
    # (TRISC0 sees the flag a slice late).
    full = _handshake(37, "full")
    by_page = _handshake(37, "pages")
    assert _LATE[0] >= 2
    assert by_page != full
    assert _words(by_page[0])[2] > _words(full[0])[2]


def _pure_handshake(quantum: int, order, delay: int) -> tuple[bytes, dict[str, tuple[int, int]], int]:
    """As _handshake, with poll loops that only load (they can be parked): TRISC0 polls FLAG from
    the start, before BRISC first stores to its page (after a countdown of ``delay``). Returns the
    OUT words, each core's (cycles, instructions) and the accesses counted late."""
    brisc = (
        L0_OFF
        + f"""
        li s0, {FLAG}
        li s1, {ACK}
        li s2, {OUT}
        li t2, {delay}
    1:  addi t2, t2, -1
        bnez t2, 1b
        rdcycle t3
        sw t3, 0(s2)
        li t1, 1
        sw t1, 0(s0)
    2:  lw t1, 0(s1)
        beqz t1, 2b
        rdcycle t3
        sw t3, 4(s2)
        ecall
    """
    )
    trisc0 = (
        L0_OFF
        + f"""
        li s0, {FLAG}
        li s1, {ACK}
        li s2, {OUT}
    1:  lw t1, 0(s0)
        beqz t1, 1b
        rdcycle t3
        sw t3, 8(s2)
        li t1, 1
        sw t1, 0(s1)
        ecall
    """
    )
    tile, _, cores = _run_pair(brisc, trisc0, quantum, order)
    return tile.read(OUT, 12), cores, int(tile.l1_order_late[0])


@pytest.mark.parametrize("delay", (32, 36, 700))
@pytest.mark.parametrize("quantum", (1, 7, 20, 37, 50, 100, 300, 2000))
def test_a_poller_that_used_its_page_alone_is_parked_before_the_first_store_to_it(quantum, delay):
    """TRISC0 polls a page only it has used and never stored to: its loop is checked after
    PRIVATE_POLL_SPIN_THRESHOLD iterations and parked, so BRISC's first store to the page wakes it
    at its cycle however far the quantum let TRISC0 run ahead. By page gives the fully ordered
    results and cycles, and nothing is counted late. (With SPIN_THRESHOLD, the short countdowns'
    store came before the loop was parked: at quanta from 20 up, TRISC0 ran past it, saw the flag
    an iteration late, and the store was counted. A store within about 60 cycles of the first poll
    still can be: docs/timing.md, "L1 between cores".)"""
    full = _pure_handshake(quantum, "full", delay)
    by_page = _pure_handshake(quantum, "pages", delay)
    assert by_page == full and full[2] == 0
    set_flag, seen_ack, seen = _words(full[0])
    assert set_flag < seen <= set_flag + 32 and seen < seen_ack


_PURE_POLLER = """
import json, sys
sys.path.insert(0, {tests!r})
from test_l1_between_cores import _pure_handshake
from tensixsim.riscv.native import native_library
out, cores, late = _pure_handshake(37, "pages", {delay})
print(json.dumps({{"native": native_library() is not None, "out": out.hex(), "cores": cores, "late": late}}))
"""


@pytest.mark.parametrize("delay", (26, 36))
def test_the_python_hooks_park_a_poller_of_a_page_used_alone_the_same_way(delay):
    """The pure-Python hooks lower the loop check's threshold for the same loads (26: a store that
    still comes too early, and is counted; 36: the poller parked first)."""
    out, cores, late = _pure_handshake(37, "pages", delay)
    env = dict(os.environ, TENSIXSIM_PURE_PYTHON="1")
    code = _PURE_POLLER.format(tests=str(Path(__file__).parent), delay=delay)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    pure = json.loads(run.stdout)
    assert not pure["native"]
    assert bytes.fromhex(pure["out"]) == out and pure["late"] == late
    assert {name: tuple(c) for name, c in pure["cores"].items()} == cores


def _neighbours(quantum: int, order, line_apart: bool) -> tuple[bytes, dict, int, str]:
    """TRISC0 counts in a word of a page alone, in a long loop; BRISC, after a while, stores once to
    the same page, 64 bytes further (another line) or 4 bytes further (the same line), then reads
    it back. With a short quantum TRISC0 uses the page first and runs up to a slice ahead of BRISC.
    Returns the words, each core's (cycles, instructions), l1_order_late and the run's summary."""
    offset = 64 if line_apart else 4
    brisc = f"""
        li s0, {FLAG}
        li t2, 300
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t1, 7
        sw t1, {offset}(s0)
        lw t3, {offset}(s0)
        sw t3, {offset + 8}(s0)
        ecall
    """
    trisc0 = f"""
        li s0, {FLAG}
        li t2, 200
    1:  lw t1, 0(s0)
        addi t1, t1, 1
        sw t1, 0(s0)
        addi t2, t2, -1
        bnez t2, 1b
        ecall
    """
    tile, result, cores = _run_pair(brisc, trisc0, quantum, order)
    assert result.l1_order_late == int(tile.l1_order_late[0])
    if order == "pages":
        assert tile.l1_pages.owner[FLAG // 4096] == 1 << 2  # TRISC0 used the page first
    return tile.read(FLAG, 80), cores, int(tile.l1_order_late[0]), result.summary()


@pytest.mark.parametrize("quantum", (37, 50, 500))
def test_a_second_core_on_another_line_of_a_private_page_is_no_late_access(quantum):
    # TRISC0's unordered accesses to its word run past BRISC's first store to the page, but touch
    # another 64-byte line: nothing BRISC does could have seen them or been seen by them out of
    # order. None counted, and the results and cycles are the full ordering's.
    memory, cores, late, summary = _neighbours(quantum, "pages", line_apart=True)
    assert late == 0 and "L1 order" not in summary
    assert (memory, cores) == _neighbours(quantum, "full", line_apart=True)[:2]


def test_a_second_core_on_the_same_line_of_a_private_page_is_counted():
    # The same with BRISC's store 4 bytes from TRISC0's word, at a quantum that lets TRISC0 run past
    # it: TRISC0 loaded and stored that line at cycles past BRISC's store, unordered. Counted (a
    # line is the granule looked at, so this counts although the bytes differ).
    _, _, late, summary = _neighbours(50, "pages", line_apart=False)
    assert late >= 1
    assert f"L1 order: {late} access(es) by another core" in summary


@settings(max_examples=15, deadline=None)
@given(
    quantum=st.sampled_from((7, 37, 500, 2000, 5000)),
    early=st.booleans(),
    delays=st.tuples(st.integers(20, 1500), st.integers(1, 400)),
)
def test_ordering_by_page_without_a_late_first_use_equals_the_full_ordering(quantum, early, delays):
    by_page = _handshake(quantum, "pages", early=early, delays=delays)
    if _LATE[0] == 0:
        assert by_page == _handshake(quantum, "full", early=early, delays=delays)


def test_an_unknown_ordering_is_refused():
    with pytest.raises(ValueError, match="l1_order"):
        Tile("blackhole", l1_order="some")


def test_a_reset_forgets_which_core_used_which_page():
    # The clock starts again at 0 after a reset: the cycles the pages were used at mean nothing then.
    tile = Tile("blackhole", quantum=37, l1_order="pages")
    tile.write(0, assemble(f"li t0, {FLAG}\n sw t0, 0(t0)\n ecall"))
    tile.write(
        0x6000,
        assemble(f"li t2, 40\n1: addi t2, t2, -1\n bnez t2, 1b\n li t0, {FLAG}\n lw t1, 0(t0)\n ecall"),
    )
    tile.run(release=["brisc", "trisc0"])
    page = FLAG // 4096
    assert tile.l1_sharers[page] == 0b101 and tile.l1_private_last[page] > 0  # BRISC (0), TRISC0 (2)
    tile.reset()
    assert not tile.l1_sharers.any() and (tile.l1_private_last == -1).all() and tile.l1_order_late[0] == 0


# --------------------------------------------------------------------------- the NoC's writes
NIU = 0xFFB20000  # NIU #0; request initiator 0's fields (BlackholeA0 NoC MemoryMap.md)
SRC, SEEN, NOTED = 0x40000, 0x31000, 0x32000
WALL_CLOCK = 0xFFB121F0


def _noc_writer(delay: int, target: int | None = None) -> str:
    """BRISC NoC-writes the word 0 to FLAG of the tile at NoC #0 ``target`` (x | y << 6; None: its
    own tile), counts down ``delay``, notes rdcycle at NOTED and NoC-writes 1 there."""
    return _noc_rounds([(0, 0), (delay, 1)], target)


def _noc_rounds(rounds: list[tuple[int, int]], target: int | None = None) -> str:
    """BRISC, for each (delay, value) of ``rounds``: counts down ``delay``, notes rdcycle at NOTED,
    stores the value at SRC and NoC-writes it from there to FLAG of the tile at NoC #0 ``target``
    (x | y << 6; None: its own tile) through NIU #0's request initiator 0; then waits until the
    initiator has taken the last request."""
    steps = "".join(
        f"""
        li t2, {delay + 1}
    1:  addi t2, t2, -1
        bnez t2, 1b
        rdcycle t5
        li t0, {NOTED}
        sw t5, 0(t0)
        li t1, {value}
        sw t1, 0(s0)
    3:  lw t4, 0x40(s3)
        bnez t4, 3b
        sw s0, 0x00(s3)
        li t4, {FLAG}
        sw t4, 0x0C(s3)
        sw zero, 0x10(s3)
        sw a7, 0x14(s3)
        li t4, 4
        sw t4, 0x20(s3)
        li t4, 0x2092
        sw t4, 0x1C(s3)
        li t4, 1
        sw t4, 0x40(s3)"""
        for delay, value in rounds
    )
    return f"""
        li s3, {NIU}
        lw a6, 0x44(s3)
        slli a6, a6, 20
        srli a6, a6, 20
        {"mv a7, a6" if target is None else f"li a7, {target}"}
        sw zero, 0x04(s3)
        sw a6, 0x08(s3)
        li s0, {SRC}
        {steps}
    4:  lw t4, 0x40(s3)
        bnez t4, 4b
        ecall
    """


# TRISC0 (or BRISC of another tile) waits a little, reads the wall clock (a synchronised register:
# by then the first write has made FLAG's page one the NoC writes), then polls FLAG in a loop that
# cannot be parked (each iteration stores its count) and notes the rdcycle at which it saw the 1.
_NOC_POLLER = f"""
    {L0_OFF}
    li t2, 150
3:  addi t2, t2, -1
    bnez t2, 3b
    li t0, {WALL_CLOCK}
    lw t0, 0(t0)
    li s0, {FLAG}
    li s2, {SEEN}
    li t4, 0
1:  addi t4, t4, 1
    sw t4, 0(s2)
    lw t1, 0(s0)
    beqz t1, 1b
    rdcycle t3
    sw t3, 4(s2)
    ecall
"""


def _noc_handshake(quantum: int, order, delay: int = 600) -> tuple[list[int], dict, int]:
    """The polls, the cycle the poller saw FLAG set and the one BRISC wrote it at; each core's
    (cycles, instructions); the late count."""
    tile, _, cores = _run_pair(_noc_writer(delay), _NOC_POLLER, quantum, order)
    words = _words(tile.read(SEEN, 8)) + _words(tile.read(NOTED, 4))
    return words, cores, int(tile.l1_order_late[0])


@pytest.mark.parametrize("order", ["pages", "full"])
@pytest.mark.parametrize("quantum", (7, 50, 300, 2000))
def test_a_noc_write_is_seen_by_the_first_poll_after_it_lands_at_any_quantum(order, quantum):
    # A core polling L1 the NoC writes sees the write at its cycle, not at the end of the slice it
    # happens to be in: the same polls and cycles at every quantum as at quantum 1.
    words, cores, late = _noc_handshake(quantum, order)
    assert (words, cores) == _noc_handshake(1, order)[:2]
    assert late == 0
    polls, seen, written = words
    # The write lands NocTiming's path (about 30 cycles) after BRISC writes NOC_CMD_CTRL, some 20
    # cycles after its rdcycle; a poll iteration takes about a dozen cycles.
    assert written + NOC.first_landing < seen < written + 100
    assert polls > 20


def test_a_noc_write_to_a_page_a_core_used_alone_past_it_is_counted():
    # BRISC counts down before its first request, and TRISC0 does not read the register: TRISC0
    # first uses FLAG's page (in order: BRISC is past it) before any NoC write makes it one the NoC
    # writes, then polls it alone; at a quantum of 2000 it has polled past the first write's cycle
    # by the time BRISC makes the request. Counted.
    poller = _NOC_POLLER.replace(f"li t0, {WALL_CLOCK}\n    lw t0, 0(t0)", "nop")
    writer = "li t2, 400\n1: addi t2, t2, -1\n bnez t2, 1b\n" + _noc_writer(600)
    tile, result, _ = _run_pair(writer, poller, 2000, "pages")
    assert tile.l1_order_late[0] >= 1
    assert "L1 order:" in result.summary()


def _chip_noc_handshake(quantum: int, window: int | None, order) -> tuple:
    """The same with the writer on BRISC of tile (1, 2) and the poller on BRISC of tile (3, 4)."""
    from tensixsim.chip import Chip

    chip = Chip("blackhole", quantum=quantum, window=window, l1_order=order)
    a, b = chip.tile(1, 2), chip.tile(3, 4)
    a.write(0, assemble(_noc_writer(600, target=3 | 4 << 6)))
    b.write(0, assemble(_NOC_POLLER))
    result = chip.run(max_cycles=10**6, release={(1, 2): ("brisc",), (3, 4): ("brisc",)})
    cycles = {xy: (r.cycles, r.cores["brisc"].instructions) for xy, r in result.tiles.items()}
    return _words(b.read(SEEN, 8)), cycles, int(b.l1_order_late[0])


def test_another_tiles_noc_write_is_seen_at_its_cycle_in_every_window():
    # Under the full ordering a core does not pass the window's end on L1 at all: the second write
    # from the other tile is seen at its cycle at every quantum and window.
    reference = _chip_noc_handshake(1, 1, "full")
    (polls, seen), _, _ = reference
    assert polls > 20 and seen > 600
    for quantum, window in ((2000, None), (300, 7), (50, None)):
        assert _chip_noc_handshake(quantum, window, "full") == reference


@pytest.mark.parametrize(("quantum", "window"), [(1, 1), (50, None), (300, 7), (2000, None)])
def test_by_page_another_tiles_write_a_core_ran_past_is_counted(quantum, window):
    # By page, a core of a chip's tile does not wait for the window's end on a page other tiles
    # write (it would advance a window at a time): where it polled past the second write it is
    # counted, and where nothing is counted the run is the full ordering's.
    words, cycles, late = _chip_noc_handshake(quantum, window, "pages")
    if late == 0:
        assert (words, cycles) == _chip_noc_handshake(1, 1, "full")[:2]
    if quantum == 2000:
        assert late >= 1


_PURE_NOC = """
import json, sys
sys.path.insert(0, {tests!r})
from test_l1_between_cores import _noc_handshake
from tensixsim.riscv.native import native_library
words, cores, late = _noc_handshake(300, {order!r})
print(json.dumps({{"native": native_library() is not None, "words": words, "cores": cores, "late": late}}))
"""


@pytest.mark.parametrize("order", ["full", "pages"])
def test_the_python_hooks_order_the_nocs_writes_the_same_way(order):
    words, cores, late = _noc_handshake(300, order)
    env = dict(os.environ, TENSIXSIM_PURE_PYTHON="1")
    code = _PURE_NOC.format(tests=str(Path(__file__).parent), order=order)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    pure = json.loads(run.stdout)
    assert not pure["native"]
    assert (pure["words"], {n: tuple(c) for n, c in pure["cores"].items()}, pure["late"]) == (
        words,
        cores,
        late,
    )


# Waits for FLAG to reach 1, 2, ... in a loop that reads it twice an iteration (shapes of
# test_multicore_schedules.POLLS), noting the rdcycle at which it saw each value.
_TWICE = {
    "twice": "1: lw t0, 0(s0)\nbeq t0, a1, 2f\nfence\nlw t0, 0(s0)\nbne t0, a1, 1b\n2:",
    "second": "1: lw t2, 0(s0)\nfence\ncsrr t3, 0x7c0\nfence\nlw t0, 0(s0)\nbne t0, a1, 1b",
}


def _twice_poller(shape: str, rounds: int) -> str:
    return (
        L0_OFF
        + f"""
        li t2, 100
    6:  addi t2, t2, -1
        bnez t2, 6b
        li t0, {WALL_CLOCK}
        lw t0, 0(t0)
        li s0, {FLAG}
        li s2, {SEEN}
        li a1, 0
        li a2, {rounds}
    5:  addi a1, a1, 1
        {_TWICE[shape]}
        rdcycle t3
        sw t3, 0(s2)
        addi s2, s2, 4
        bne a1, a2, 5b
        ecall
    """
    )


@pytest.mark.parametrize("order", ["pages", "full"])
@pytest.mark.parametrize("shape", sorted(_TWICE))
def test_a_noc_write_between_a_parked_pollers_two_reads_is_seen_by_the_second(shape, order):
    # BRISC NoC-writes 1, 2, ... 12 to FLAG, each after a wait that grows by a few cycles, so the
    # writes land at every point of TRISC0's poll iteration (parked by then), between its two reads
    # of FLAG too. The second read sees such a write in that iteration: the parked poller resumes
    # at the iteration's head and the NoC's write waits for it (Parking.noc_write_waits), so the
    # cycles are those of running every poll, at every quantum.
    for step in (3, 7, 11):
        writer = _noc_rounds([(0, 0)] + [(300 + step * r, r) for r in range(1, 13)])
        poller = _twice_poller(shape, 12)

        def run(quantum: int, park: bool, writer: str = writer, poller: str = poller) -> tuple:
            tile = Tile("blackhole", quantum=quantum, l1_order=order)
            tile.park_polls = park
            tile.write(0, assemble(writer))
            tile.write(0x6000, assemble(poller, base=0x6000))
            result = tile.run(release=["brisc", "trisc0"], max_cycles=10**6)
            cores = {n: (result.cores[n].cycles, result.cores[n].instructions) for n in ("brisc", "trisc0")}
            return tile.read(SEEN, 48), cores, int(tile.l1_order_late[0]), tile.wakes

        reference = run(1000, False)
        assert reference[2] == 0
        for quantum in (1, 60, 2000):
            parked = run(quantum, True)
            assert parked[:3] == reference[:3], (step, quantum)
            if quantum == 2000:
                assert parked[3] >= 12  # (TRISC0 was parked in every round)
