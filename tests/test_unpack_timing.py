"""UNPACR timing: the two unpackers fetch from L1 concurrently and share its bandwidth.

The reference is UNPACR_Regular.md "Performance" (WormholeB0), stepped one cycle at a time: an
UNPACR spends two cycles computing its input address (its thread and every other UNPACR wait), then
fetches at the speed it wants (x1 / x2 / x4: 16 / 32 / 64 bytes a cycle) or, while the other
unpacker fetches too, at the speed the page's interference table grants. A new UNPACR on an
unpacker still fetching waits for it; FlipSrc hands the bank to the matrix unit once the data has
landed; STALLWAIT C1 / C2 wait for unpacker 0 / 1.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_e2e_raw import Trace

from tensixsim import raw
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.regs import SrcClient
from tensixsim.tensix.sync import B0
from tensixsim.tensix.unpack import fetch
from tensixsim.tile import Tile
from tensixsim.timing import FRONTEND, UNPACK

# The hand-worked schedules below count a word pushed at cycle 0 as issuing at 1; the front end takes
# this many cycles more (FRONTEND.push_to_issue).
D = FRONTEND.push_to_issue - 1
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BF16 = 5
A_ADDR, B_ADDR = 0x10000, 0x11000
UNPACKER_THREADS = (0, 2)  # pipes issuing UNPACRs in the random programs
MATH_THREAD = 1
ARCH = Tile("blackhole").arch

# ------------------------------------------------------------------------------ reference model

# The page's speeds (UNPACR_Regular.md, Wormhole's figures). The mechanism is checked at these rates:
# the tiles below are set to them (UnpackState.bytes_per_cycle); Blackhole's own rate is timing.UNPACK's.
PAGE_RATE = 16
BYTES_PER_CYCLE = {"x1": PAGE_RATE, "x2": 2 * PAGE_RATE, "x4": 4 * PAGE_RATE}
SPEED_NAMES = ("x1", "x2", "x4")  # Throttle_mode 0 / 1 / 2
# The page's table: (unpacker 0 wants, unpacker 1 wants) -> (unpacker 0 gets, unpacker 1 gets).
BOTH_ACTIVE = {
    ("x1", "x1"): ("x1", "x1"),
    ("x2", "x1"): ("x2", "x1"),
    ("x4", "x1"): ("x4", "x1"),
    ("x1", "x2"): ("x1", "x2"),
    ("x2", "x2"): ("x1", "x1"),
    ("x4", "x2"): ("x2", "x1"),
    ("x1", "x4"): ("x1", "x4"),
    ("x2", "x4"): ("x1", "x2"),
    ("x4", "x4"): ("x2", "x2"),
}
ADDRESS_CYCLES = 2


def fetch_ends(transfers: list[tuple[int, int, int, str]]) -> list[int]:
    """Each transfer's end (the first cycle it no longer fetches), stepping one cycle at a time.
    ``transfers``: (unpacker, first fetch cycle, bytes, wanted speed); one unpacker's transfers do not
    overlap."""
    left = [n for _, _, n, _ in transfers]
    ends = [start if n == 0 else -1 for (_, start, n, _) in transfers]
    cycle = min((t[1] for t in transfers), default=0)
    while any(e < 0 for e in ends):
        active = {transfers[i][0]: i for i, e in enumerate(ends) if e < 0 and transfers[i][1] <= cycle}
        if len(active) == 2:
            wants = (transfers[active[0]][3], transfers[active[1]][3])
            speeds = dict(enumerate(BOTH_ACTIVE[wants]))
        else:
            speeds = {u: transfers[i][3] for u, i in active.items()}
        for u, i in active.items():
            left[i] -= BYTES_PER_CYCLE[speeds[u]]
            if left[i] <= 0:
                ends[i] = cycle + 1
        cycle += 1
    return ends


def reference_schedule(
    program: list[tuple[int, int, int]], nbytes: dict[tuple[int, int], int], wants: tuple[str, str]
) -> tuple[list[int], list[int]]:
    """Issue cycles and fetch ends of ``program``'s UNPACRs: (thread, unpacker, cycle pushed), each
    thread's in order. A pushed word can issue FRONTEND.push_to_issue cycles later; the UNPACR then
    needs its thread and the shared address slot free, and its unpacker done fetching; at equal
    cycles the lower thread goes first."""
    issues: list[int | None] = [None] * len(program)
    transfers: list[tuple[int, int, int, str]] = []
    thread_free = {t: 0 for t, _, _ in program}
    slot_free = 0
    while None in issues:
        candidates = []
        for thread in thread_free:
            pending = [k for k, (t, _, _) in enumerate(program) if t == thread and issues[k] is None]
            if not pending:
                continue
            k = pending[0]
            _, unit, pushed = program[k]
            ends = fetch_ends(transfers)
            unit_free = max((e for (u, *_), e in zip(transfers, ends, strict=True) if u == unit), default=0)
            ready = pushed + FRONTEND.push_to_issue
            candidates.append((max(ready, thread_free[thread], slot_free, unit_free), thread, k))
        cycle, thread, k = min(candidates)
        _, unit, _ = program[k]
        issues[k] = cycle
        slot_free = thread_free[thread] = cycle + ADDRESS_CYCLES
        transfers.append((unit, cycle + ADDRESS_CYCLES, nbytes[thread, unit], wants[unit]))
    order = sorted(range(len(program)), key=lambda k: issues[k])
    ends = fetch_ends(transfers)
    return [c for c in issues if c is not None], [ends[order.index(k)] for k in range(len(program))]


def test_reference_table_is_the_pages():
    # Spot checks of the table read from the page, written out again by hand.
    assert BOTH_ACTIVE["x2", "x2"] == ("x1", "x1")  # both want x2: both get x1
    assert BOTH_ACTIVE["x4", "x1"] == ("x4", "x1")
    assert fetch_ends([(0, 0, 64, "x4"), (1, 0, 64, "x4")]) == [2, 2]  # x2 each: two cycles


# ------------------------------------------------------------------------------ the model's own functions


@SETTINGS
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 12), st.integers(0, 700), st.integers(0, 2)),
        min_size=1,
        max_size=8,
    )
)
def test_start_fetch_matches_the_cycle_stepped_reference(steps):
    """fetch.start_fetch / left_at (closed form, piecewise) against fetch_ends (cycle by cycle) over
    random byte counts, speeds and start offsets."""
    state = fetch.UnpackState.new(ARCH)
    state.bytes_per_cycle[0] = PAGE_RATE
    transfers: list[tuple[int, int, int, str]] = []
    latest: dict[int, int] = {}  # unpacker -> index of its latest transfer
    got: list[int] = []
    start = 0
    for unit, gap, nbytes, speed in steps:
        # The shared address slot: two cycles between starts; an unpacker's next fetch after its last.
        start = max(start + ADDRESS_CYCLES + gap, int(state.end[unit]) + ADDRESS_CYCLES)
        before = {u: left for u in (0, 1) if (left := fetch.left_at(state, u, start)) >= 0}
        fetch.start_fetch(state, unit, start, nbytes, speed, 0)
        transfers.append((unit, start, nbytes, SPEED_NAMES[speed]))
        got.append(int(state.end[unit]))
        latest[unit] = len(transfers) - 1
        if 1 - unit in latest:  # the other's end may have moved
            got[latest[1 - unit]] = int(state.end[1 - unit])
        assert fetch.left_at(state, unit, start) == nbytes
        assert fetch.left_at(state, 1 - unit, start) == before[1 - unit]
    assert got == fetch_ends(transfers)


# ------------------------------------------------------------------------------ through the pipes


def new_tile(counts: dict[tuple[int, int], int], throttle: tuple[int, int], flip: bool = False) -> Tile:
    """Both unpackers configured for BF16 rows into SrcA / SrcB, each thread's X end per unpacker from
    ``counts`` (datums), Throttle_mode per unpacker."""
    tile = Tile("blackhole")
    copro = tile.coprocessor
    copro.unpackers.bytes_per_cycle[0] = PAGE_RATE
    config = copro.config
    for unit, addr in ((0, A_ADDR), (1, B_ADDR)):
        descriptor = BF16 | 1 << 4 | 256 << 16 | 1 << 32 | 1 << 48 | 1 << 64
        config.write_field(f"THCON_SEC{unit}_REG0_TileDescriptor", 0, descriptor)
        config.write_field(f"THCON_SEC{unit}_REG2_Out_data_format", 0, BF16)
        config.write_field(f"THCON_SEC{unit}_REG3_Base_address", 0, addr // 16 - 1)
        config.write_field(f"THCON_SEC{unit}_REG2_Unpack_limit_address", 0, 0x1FFFF)
        config.write_field(f"THCON_SEC{unit}_REG2_Throttle_mode", 0, throttle[unit])
    config.write_field("UNP0_ADDR_BASE_REG_1_Base", 0, 4 * 16 * 2)  # SrcA's first four rows are discarded
    for (thread, unit), count in counts.items():
        copro.adc.value[thread, unit, 1, 0] = count - 1  # channel 1 X: the X end
    rng = np.random.default_rng(7)
    tile.l1[A_ADDR : A_ADDR + 0x2000] = rng.integers(0, 256, 0x2000, dtype=np.uint8)
    return tile


def unpacr(tile: Tile, unit: int, flip: int = 0) -> int:
    isa = tile.coprocessor.isa
    fields = dict.fromkeys(isa.by_name["UNPACR"].field_names, 0)
    return isa.encode("UNPACR", **(fields | {"unpack_block_selection": unit, "set_dat_valid": flip}))


def word(tile: Tile, name: str, **values: int) -> int:
    isa = tile.coprocessor.isa
    return isa.encode(name, **(dict.fromkeys(isa.by_name[name].field_names, 0) | values))


def test_two_unpackers_overlap_and_share_l1():
    # Both want x4, 512 bytes each. Unpacker 0 issues at 1 and fetches from 3 at 64 bytes a cycle;
    # unpacker 1 issues at 3 (the address slot) and fetches from 5: both get x2 while both fetch.
    # Unpacker 0 has 512 - 2 * 64 = 384 bytes left at 5: 12 cycles at 32, done at 17; unpacker 1
    # moved 12 * 32 = 384 by then, its last 128 at x4 take 2 cycles: done at 19.
    tile = new_tile({(0, 0): 256, (0, 1): 256}, (2, 2))
    trace = Trace(tile)
    done = raw.run_words(tile, 0, [unpacr(tile, 0), unpacr(tile, 1)])
    assert trace.cycles(0, "UNPACR") == [1 + D, 3 + D]
    assert list(tile.coprocessor.unpackers.end) == [17 + D, 19 + D]
    assert done == 19 + D
    assert fetch_ends([(0, 3 + D, 512, "x4"), (1, 5 + D, 512, "x4")]) == [17 + D, 19 + D]
    # Run statistics: each unpacker's fetch time, unpacker 0's including its slow-down (8 + 6).
    units = tile.result().units
    assert (units["unpacker0"].instructions, units["unpacker0"].busy_cycles) == (1, 17 - 3)
    assert (units["unpacker1"].instructions, units["unpacker1"].busy_cycles) == (1, 19 - 5)


def test_one_unpacker_serialises_its_unpacrs():
    # The second UNPACR on unpacker 0 waits until the first has fetched its 512 bytes (x4: 3 + 8).
    tile = new_tile({(0, 0): 256}, (2, 2))
    trace = Trace(tile)
    done = raw.run_words(tile, 0, [unpacr(tile, 0), unpacr(tile, 0)])
    assert trace.cycles(0, "UNPACR") == [1 + D, 11 + D]
    assert done == 11 + D + 2 + 8


@SETTINGS
@given(
    counts=st.fixed_dictionaries({(t, u): st.integers(1, 256) for t in UNPACKER_THREADS for u in (0, 1)}),
    throttle=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    program=st.lists(
        st.tuples(st.sampled_from(UNPACKER_THREADS), st.integers(0, 1), st.integers(0, 20)),
        min_size=1,
        max_size=8,
    ),
)
def test_random_unpacrs_match_the_reference_schedule(counts, throttle, program):
    tile = new_tile(counts, throttle)
    trace = Trace(tile)
    pushed = []
    for thread, unit, gap in program:
        at = max([p for t, _, p in pushed if t == thread], default=0) + gap  # a thread's words in order
        pushed.append((thread, unit, at))
        entry = PushedInstruction(unpacr(tile, unit), f"trisc{thread}", 0, at, False)
        tile.queues[thread].entries.append(entry)
    tile.backend.advance_to(raw.NEVER)
    nbytes = {key: 2 * count for key, count in counts.items()}
    wants = (SPEED_NAMES[throttle[0]], SPEED_NAMES[throttle[1]])
    issues, ends = reference_schedule(pushed, nbytes, wants)
    got = sorted(c for thread in UNPACKER_THREADS for c in trace.cycles(thread, "UNPACR"))
    assert got == sorted(issues)
    for thread in UNPACKER_THREADS:
        mine = [c for t, _, c in trace.issued if t == thread]
        assert mine == [issues[k] for k, p in enumerate(pushed) if p[0] == thread]
        last = [ends[k] for k, p in enumerate(pushed) if p[0] == thread]
        assert tile.backend.pipes[thread].done_cycle == max(last, default=0)
    for unit in (0, 1):
        mine = [ends[k] for k, p in enumerate(pushed) if p[1] == unit]
        assert int(tile.coprocessor.unpackers.end[unit]) == max(mine, default=0)


def test_stallwait_c1_and_c2_watch_their_own_unpacker():
    # Unpacker 0 fetches 512 bytes at x1 (issue 1, fetch 3..35), unpacker 1 64 bytes at x1 (issue 3,
    # fetch 5..9; both x1 together: no slow-down). The wait gate passes the cycle after the
    # unpacker is done (it sees the previous cycle's state).
    for condition, expected in ((1, 35 + D + 1), (2, 9 + D + 1)):
        tile = new_tile({(0, 0): 256, (0, 1): 32}, (0, 0))
        trace = Trace(tile)
        raw.run_words(tile, 0, [unpacr(tile, 0), unpacr(tile, 1)])
        assert list(tile.coprocessor.unpackers.end) == [35 + D, 9 + D]
        stallwait = word(tile, "STALLWAIT", stall_res=B0, wait_res=1 << condition)
        raw.run_words(tile, MATH_THREAD, [stallwait, word(tile, "NOP")], cycle=0)
        assert trace.cycles(MATH_THREAD, "NOP") == [expected]


def test_matrix_unit_waits_for_the_data():
    # FlipSrc on both unpackers: the banks are the matrix unit's from the end of each fetch (x1:
    # unpacker 0 fetches 512 bytes from 3 to 35, unpacker 1 512 bytes from 5 to 37), so the
    # ELWADD, queued at once, issues at 37, when both have landed.
    tile = new_tile({(0, 0): 256, (0, 1): 256}, (0, 0))
    copro = tile.coprocessor
    for field in ("ALU_FORMAT_SPEC_REG0_SrcA", "ALU_FORMAT_SPEC_REG1_SrcB"):
        copro.config.write_field(field, copro.config.state_id(MATH_THREAD), BF16)
    trace = Trace(tile)
    for thread, words in (
        (0, [unpacr(tile, 0, 1), unpacr(tile, 1, 1)]),
        (MATH_THREAD, [word(tile, "ELWADD")]),
    ):
        tile.queues[thread].entries.extend(PushedInstruction(w, f"trisc{thread}", 0, 0, False) for w in words)
    tile.backend.advance_to(34)  # part way: nothing handed over yet
    assert (copro.regs.src_client[:, 0] == SrcClient.UNPACKERS).all()
    assert list(copro.regs.src_handover_at[:, 0]) == [35 + D, 37 + D]
    tile.backend.advance_to(raw.NEVER)
    assert fetch_ends([(0, 3 + D, 512, "x1"), (1, 5 + D, 512, "x1")]) == [35 + D, 37 + D]
    assert trace.cycles(MATH_THREAD, "ELWADD") == [37 + D]
    assert (copro.regs.src_handover_at == -1).all()


def test_each_chip_starts_at_its_own_rate():
    assert Tile("blackhole").coprocessor.unpackers.bytes_per_cycle[0] == UNPACK.l1_bytes_per_cycle
    assert Tile("wormhole").coprocessor.unpackers.bytes_per_cycle[0] == PAGE_RATE
