"""A chip of Tensix tiles: the grid, NoC requests between tiles, and one clock across them.

The end-to-end programs are the SDK's chip examples (tensixsim/sdk/examples/chip): results are
checked bit for bit against numpy, cycle counts across quanta and chip windows. Request timing is
checked against figures worked by hand from NocTiming's documented latencies.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.chip import SENDER_STRIDE, Chip
from tensixsim.errors import CycleLimitExceeded, Deadlock, Unimplemented
from tensixsim.noc import REMOTE_ORDER, NoEndpoint, route
from tensixsim.noc.registers import (
    AT_DATA,
    AT_LEN_BE,
    AT_LEN_BE_1,
    BRCST_EXCLUDE,
    CMD_AT,
    CMD_BRCST_PACKET,
    CMD_RESP_MARKED,
    CMD_WR,
    CMD_WR_BE,
    CMD_WR_INLINE,
    CTRL,
    MST_ATOMIC_RESP_RECEIVED,
    MST_WR_ACK_RECEIVED,
    RET_HI,
    RET_LO,
    TARG_HI,
    TARG_LO,
)
from tensixsim.sdk import programs
from tensixsim.sdk.programs import CHIP_ARGS, CHIP_DST, CHIP_FLAG, CHIP_OUT, CHIP_SRC, ring_expected
from tensixsim.tensix.frontend.pipes import NEVER
from tensixsim.timing import NOC

WIDTH, HEIGHT = 17, 12
NOC_LOOKAHEAD = 19
# Counters.md indices.
WR_ACK_RECEIVED, RD_RESP_RECEIVED, CMD_ACCEPTED = 1, 2, 4
SLV_RD_REQ_RECEIVED, SLV_POSTED_ATOMIC_RECEIVED = 53, 55
SLV_NONPOSTED_WR_REQ_RECEIVED, SLV_POSTED_WR_REQ_RECEIVED = 58, 59


@pytest.fixture(scope="module")
def elfs():
    return programs.build_chip_examples()


def settle(chip: Chip) -> list[int]:
    """Claim the links of every packet sent (no tile runs on in these tests); the arrival cycles."""
    chip.fabric.resolve(NEVER)
    return [cycle for cycle, *_ in chip.fabric.in_flight]


def word_data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


# ---------------------------------------------------------------------------- the grid
def test_grid_kinds_follow_the_noc0_map() -> None:
    chip = Chip("blackhole")
    assert len(chip.tensix_tiles) == 140
    assert chip.kind_at((1, 2)) == chip.kind_at((16, 11)) == chip.kind_at((10, 7)) == "tensix"
    assert chip.kind_at((0, 0)) == chip.kind_at((9, 11)) == "dram"
    assert chip.kind_at((1, 1)) == "ethernet"
    assert chip.kind_at((8, 0)) == "arc"
    assert chip.kind_at((2, 0)) == chip.kind_at((11, 0)) == "pcie"
    assert chip.kind_at((8, 3)) == "l2cpu"
    assert chip.kind_at((8, 4)) is None  # a router alone
    assert chip.kind_at((17, 2)) is None
    # Every grid position is exactly one kind.
    kinds = [chip.kind_at((x, y)) for x in range(WIDTH) for y in range(HEIGHT)]
    assert kinds.count("tensix") == 140 and kinds.count("dram") == 24 and kinds.count("ethernet") == 14


def test_tiles_are_built_on_first_touch_at_their_coordinates() -> None:
    chip = Chip("blackhole")
    assert chip.tiles == {}
    tile = chip.tile(5, 7)
    assert list(chip.tiles) == [(5, 7)] and chip.tile(5, 7) is tile
    assert tile.noc.position == (5, 7)
    assert tile.noc.node_id(0) & 0xFFF == 5 | 7 << 6
    assert tile.noc.dram is chip.dram
    with pytest.raises(ValueError, match="a dram tile"):
        chip.tile(0, 3)
    with pytest.raises(ValueError, match="no endpoint"):
        chip.tile(8, 4)


# ---------------------------------------------------------------------------- request timing
def _write_request(tile: Tile, noc: int, src: int, target: tuple[int, int], dst: int, size: int) -> None:
    f = tile.noc.requests[noc, 0]
    own = tile.noc.coordinates(noc)
    x, y = tile.noc.coordinates(noc, target)
    f[TARG_LO], f[TARG_HI] = src, own[0] | own[1] << 6
    f[RET_LO], f[RET_HI] = dst, x | y << 6
    f[CTRL] = CMD_WR | CMD_RESP_MARKED
    f[AT_LEN_BE] = size


@pytest.mark.parametrize(
    ("noc", "hops_there", "hops_back"),
    [
        # NoC #0 moves right and down, wrapping: (1,2) -> (4,5) is 3 + 3, back 14 + 9.
        (0, 6, 23),
        # NoC #1 moves left and up: (1,2) -> (4,5) is 14 + 9, back 3 + 3.
        (1, 23, 6),
    ],
)
def test_remote_write_lands_and_is_acknowledged_at_the_documented_cycles(
    noc: int, hops_there: int, hops_back: int
) -> None:
    chip = Chip("blackhole")
    a, b = chip.tile(1, 2), chip.tile(4, 5)
    data = word_data(64, 1)  # 256 bytes: 4 data flits
    a.write(CHIP_SRC, data)
    _write_request(a, noc, CHIP_SRC, (4, 5), CHIP_DST, 256)
    a.noc.initiate(noc, 0, 100)
    # Worked by hand: header + 4 flits leave at 100 + 1 + 4; then 5 + 9 * hops + 5 to the far NIU, and
    # NOC.l1_write cycles until the L1 write has completed; the acknowledgement takes the hops back.
    left = 105
    arrive = left + 10 + 9 * hops_there + NOC.l1_write
    acked = arrive + 10 + 9 * hops_back
    assert settle(chip) == [arrive]
    assert sorted(cycle for cycle, *_ in a.noc.pending) == [left]
    chip.fabric.hand_over()
    assert b.noc.next_event() == arrive
    b.noc.deliver(arrive - 1)
    assert not b.read(CHIP_DST, 256).strip(b"\0")
    b.noc.deliver(arrive)
    assert np.array_equal(np.frombuffer(b.read(CHIP_DST, 256), np.uint32), data)
    assert b.noc.counters[noc, SLV_NONPOSTED_WR_REQ_RECEIVED] == 1
    # The acknowledgement is a packet from B back to A.
    assert settle(chip) == [acked]
    chip.fabric.hand_over()
    a.noc.deliver(acked - 1)
    assert a.noc.counters[noc, WR_ACK_RECEIVED] == 0
    a.noc.deliver(acked)
    assert a.noc.counters[noc, WR_ACK_RECEIVED] == 1


def _request(tile: Tile, target: tuple[int, int], fields: dict[int, int]) -> None:
    """NoC #0 initiator 0 of ``tile``: TARG at ``target``, RET at the tile itself, then ``fields``."""
    f = tile.noc.requests[0, 0]
    f[:] = 0
    own = tile.noc.position
    f[TARG_HI], f[RET_HI] = target[0] | target[1] << 6, own[0] | own[1] << 6
    for index, value in fields.items():
        f[index] = value


def test_remote_read_is_served_at_the_far_tile_and_lands_at_the_documented_cycle() -> None:
    chip = Chip("blackhole")
    a, b = chip.tile(1, 2), chip.tile(4, 5)
    data = word_data(64, 3)
    b.write(CHIP_SRC, data)
    _request(a, (4, 5), {TARG_LO: CHIP_SRC, RET_LO: CHIP_DST, CTRL: 0, AT_LEN_BE: 256})
    a.noc.initiate(0, 0, 100)
    # Worked by hand: the header leaves at 101, reaches B after 5 + 9 * 6 + 5, B's L1 answers after
    # NOC.l1_read; the response's header comes back over 5 + 9 * 23 + 5 hops' worth and its 4 data
    # flits follow; A's L1 write of the data completes NOC.l1_write cycles later, and only then is the
    # response counted.
    served = 101 + 64 + NOC.l1_read
    landed = served + 217 + 4
    assert settle(chip) == [served]
    chip.fabric.hand_over()
    b.noc.deliver(served)
    assert b.noc.counters[0, SLV_RD_REQ_RECEIVED] == 1
    assert settle(chip) == [landed]
    chip.fabric.hand_over()
    a.noc.deliver(landed + NOC.l1_write - 1)
    assert a.noc.counters[0, RD_RESP_RECEIVED] == 0 and not a.read(CHIP_DST, 256).strip(b"\0")
    a.noc.deliver(landed + NOC.l1_write)
    assert a.noc.counters[0, RD_RESP_RECEIVED] == 1
    assert np.array_equal(np.frombuffer(a.read(CHIP_DST, 256), np.uint32), data)


def test_remote_atomic_increment_with_response_returns_the_old_value() -> None:
    chip = Chip("blackhole")
    a, b = chip.tile(1, 2), chip.tile(4, 5)
    b.write(CHIP_FLAG, np.array([0, 0, 41, 7], np.uint32))  # word 2 of the 16-byte line is the target
    increment = 1 << 12 | 31 << 2 | 2  # Atomics.md: opcode 1, IntWidth 31, Ofs 2
    fields = {TARG_LO: CHIP_FLAG, RET_LO: CHIP_OUT, CTRL: CMD_AT | CMD_RESP_MARKED, AT_LEN_BE: increment}
    _request(a, (4, 5), {**fields, AT_DATA: 5})
    a.noc.initiate(0, 0, 100)
    arrive = 101 + 64 + NOC.l1_write  # B's L1 read-modify-write completes that long after the header
    settle(chip)
    chip.fabric.hand_over()
    b.noc.deliver(arrive)
    assert list(np.frombuffer(b.read(CHIP_FLAG, 16), np.uint32)) == [0, 0, 46, 7]
    assert settle(chip) == [arrive + 217]
    chip.fabric.hand_over()
    a.noc.deliver(arrive + 217 + NOC.l1_write - 1)
    assert a.noc.counters[0, MST_ATOMIC_RESP_RECEIVED] == 0
    a.noc.deliver(arrive + 217 + NOC.l1_write)  # the response is written into A's L1, then counted
    assert a.noc.counters[0, MST_ATOMIC_RESP_RECEIVED] == 1
    # Result is the word at the request's own address (word 0 of the line), as Atomics.md says.
    assert int.from_bytes(a.read(CHIP_OUT, 4), "little") == 0
    assert a.noc.counters[0, 0] == 1  # ATOMIC_RESP_RECEIVED
    assert b.noc.counters[0, 54] == 1  # SLV_NONPOSTED_ATOMIC_RECEIVED


def test_remote_byte_enable_write_and_zaamo_atomic_act_at_the_far_tile() -> None:
    chip = Chip("blackhole")
    a, b = chip.tile(1, 2), chip.tile(2, 2)
    old = np.frombuffer(bytes(range(64)), np.uint8)
    new = np.full(64, 0xEE, np.uint8)
    b.write(CHIP_DST, old)
    a.write(CHIP_SRC, new)
    mask = 0xF0F0_0000_0000_00FF  # bytes 0..7, 52..55 and 60..63 (MemoryMap.md: one bit per byte)
    fields = {TARG_LO: CHIP_SRC, RET_LO: CHIP_DST, CTRL: CMD_WR | CMD_WR_BE, AT_LEN_BE: mask & 0xFFFFFFFF}
    _request(a, (2, 2), {**fields, AT_LEN_BE_1: mask >> 32})
    # The request's TARG is the source (this tile), RET the destination.
    a.noc.requests[0, 0, TARG_HI] = 1 | 2 << 6
    a.noc.requests[0, 0, RET_HI] = 2 | 2 << 6
    a.noc.initiate(0, 0, 0)
    # A 32-bit signed max (Zaamo op 5) of -3 into word 1 of B's flag line (holding 7), posted.
    b.write(CHIP_FLAG, np.array([0, 7, 0, 0], np.uint32))
    zaamo_max = 0xA << 12 | 1 << 11 | 5 << 8 | 1
    _request(a, (2, 2), {TARG_LO: CHIP_FLAG, CTRL: CMD_AT, AT_LEN_BE: zaamo_max, AT_DATA: 0xFFFFFFFD})
    a.noc.initiate(0, 0, 10)
    settle(chip)
    chip.fabric.hand_over()
    b.noc.deliver(10_000)
    expected = np.where([(mask >> i) & 1 for i in range(64)], new, old)
    assert np.array_equal(np.frombuffer(b.read(CHIP_DST, 64), np.uint8), expected)
    assert list(np.frombuffer(b.read(CHIP_FLAG, 16), np.uint32)) == [0, 7, 0, 0]  # max(7, -3) = 7
    _request(a, (2, 2), {TARG_LO: CHIP_FLAG, CTRL: CMD_AT, AT_LEN_BE: zaamo_max, AT_DATA: 9})
    a.noc.initiate(0, 0, 10_000)  # (after what B has done: the fabric's grants go in cycle order)
    settle(chip)
    chip.fabric.hand_over()
    b.noc.deliver(20_000)
    assert list(np.frombuffer(b.read(CHIP_FLAG, 16), np.uint32)) == [0, 9, 0, 0]


def test_same_cycle_arrivals_from_two_tiles_land_in_sender_order_not_issue_order() -> None:
    chip = Chip("blackhole")
    b = chip.tile(3, 4)
    # Both two hops from (3, 4) on NoC #0, so their 64-byte writes arrive on the same cycle.
    senders = {(1, 4): word_data(16, 1), (3, 2): word_data(16, 2)}
    for xy, data in senders.items():  # (1, 4) issues first, (3, 2) second
        tile = chip.tile(*xy)
        tile.write(CHIP_SRC, data)
        _write_request(tile, 0, CHIP_SRC, (3, 4), CHIP_DST, 64)
        tile.noc.initiate(0, 0, 100)
    (arrive,) = set(settle(chip))
    chip.fabric.hand_over()
    b.noc.deliver(arrive)
    # The grid's row order puts (1, 4) after (3, 2): its write lands last, whoever issued first.
    assert np.array_equal(np.frombuffer(b.read(CHIP_DST, 64), np.uint32), senders[(1, 4)])


# ---------------------------------------------------------------------------- link contention
def test_routes_follow_dimension_order_with_wrap_around() -> None:
    facts = Chip("blackhole").facts
    # NoC #0: X first, then Y, both increasing: (1, 2) -> (4, 5) crosses 3 X links then 3 Y links.
    assert route(facts, 0, (1, 2), (4, 5)) == [
        (0, 1, 2, "x"), (0, 2, 2, "x"), (0, 3, 2, "x"), (0, 4, 2, "y"), (0, 4, 3, "y"), (0, 4, 4, "y"),
    ]  # fmt: skip
    # NoC #1 (its own coordinates: (1, 2) is (15, 9), (4, 5) is (12, 6)): Y first, wrapping 9 -> 6 over
    # the 12 rows (9 links), then X wrapping 15 -> 12 over the 17 columns (14 links).
    links = route(facts, 1, (15, 9), (12, 6))
    assert [axis for *_, axis in links] == ["y"] * 9 + ["x"] * 14
    assert links[0] == (1, 15, 9, "y") and links[8] == (1, 15, 5, "y") and links[9] == (1, 15, 6, "x")
    assert links[-1] == (1, 11, 6, "x")


def _stream(chip: Chip, sender: tuple[int, int], packets: int) -> None:
    """``packets`` writes of 2048 bytes (32 data flits) from ``sender`` to (4, 2), all issued at 100."""
    tile = chip.tile(*sender)
    for _ in range(packets):
        _write_request(tile, 0, CHIP_SRC, (4, 2), CHIP_DST, 2048)
        tile.noc.initiate(0, 0, 100)


def _arrivals(chip: Chip) -> dict[tuple[int, int], list[int]]:
    chip.fabric.resolve(NEVER)
    found: dict[tuple[int, int], list[int]] = {}
    for cycle, order, *_ in sorted(chip.fabric.in_flight):
        sender = divmod((order - REMOTE_ORDER) // SENDER_STRIDE, WIDTH)
        found.setdefault((sender[1], sender[0]), []).append(cycle)
    return found


def test_two_streams_over_a_shared_link_take_twice_as_long_as_one() -> None:
    """Worked by hand. A packet is 1 + 32 = 33 flits; the NIU sends them back to back, so A's leave
    at 133, 166, 199, 232 and their headers enter A's first link 5 cycles later (138, 171, ...). A at
    (1, 2) crosses the X links of routers 1, 2, 3 of row 2; B at (2, 2) those of 2 and 3. Unloaded, a
    packet from A has landed (its L1 write complete) 5 + 3 * 9 + 5 + W = 37 + W cycles after it left
    (W = NOC.l1_write): 170 + W, 203 + W, 236 + W, 269 + W."""
    w = NOC.l1_write
    alone = Chip("blackhole")
    _stream(alone, (1, 2), 4)
    assert _arrivals(alone) == {(1, 2): [170 + w, 203 + w, 236 + w, 269 + w]}
    # With B streaming too, router 2's link serves its two input ports in turn: B's (local) packets
    # and A's (from router 1). B's first header asks at 138 and finds the link free: it holds it over
    # [138, 171). A's first asks at 147 and waits; at 171 A's (the port not served last) goes before
    # B's second (asking then), at 204 B's second, and so on: B 138, A 171, B 204, A 237, B 270, A 303,
    # B 336, A 369, back to back. Router 3's link then carries each 9 cycles later without waiting. A
    # packet lands 9 + 5 + 9 + W after its grant at router 2: B's 33, 66 and 99 late from the second
    # on (161 + W, 227 + W, ...), A's 24 late from the first (194 + W, ...).
    both = Chip("blackhole")
    _stream(both, (1, 2), 4)
    _stream(both, (2, 2), 4)
    assert _arrivals(both) == {
        (1, 2): [194 + w, 260 + w, 326 + w, 392 + w],
        (2, 2): [161 + w, 227 + w, 293 + w, 359 + w],
    }
    # Twice the data over the shared link: the last packet lands 392 + W - 138 cycles after the first
    # header, against 269 + W - 138 alone (the link's busy time doubles, 132 -> 264; the fixed latency
    # does not).


def test_a_multicast_crosses_each_link_of_its_tree_once() -> None:
    chip = Chip("blackhole")
    a = chip.tile(1, 2)
    f = a.noc.requests[0, 0]
    f[TARG_LO], f[TARG_HI] = CHIP_SRC, 1 | 2 << 6
    # Rectangle (2, 2)..(4, 2): three receivers along row 2, each one router further.
    f[RET_LO], f[RET_HI] = CHIP_DST, (4 | 2 << 6) | (2 | 2 << 6) << 12
    f[CTRL] = CMD_WR | CMD_BRCST_PACKET
    f[AT_LEN_BE] = 2048
    a.noc.initiate(0, 0, 100)
    # Unloaded for each: left at 133, 5 + 9 * hops + 5 + NOC.l1_write later. Were each receiver's
    # packet claiming its own links, the second and third would wait 33 and 66 cycles behind the first.
    w = NOC.l1_write
    assert sorted(settle(chip)) == [133 + 19 + w, 133 + 28 + w, 133 + 37 + w]


# ---------------------------------------------------------------------------- end to end
def _pair(elfs, n: int, quantum: int = 2000, window: int | None = None, a=(1, 2), b=(3, 4)):
    chip = Chip("blackhole", quantum=quantum, window=window)
    tile_a, tile_b = chip.tile(*a), chip.tile(*b)
    tile_a.load_elf("brisc", elfs["pair_a"])
    tile_b.load_elf("brisc", elfs["pair_b"])
    data = word_data(n, 7)
    tile_a.write(CHIP_SRC, data)
    tile_a.write(CHIP_ARGS, np.array([*b, n], np.uint32))
    tile_b.write(CHIP_ARGS, np.array([*a, n, 9, 2, 0x1000], np.uint32))  # DRAM tile (9, 2): group 5
    result = chip.run(max_cycles=2_000_000)
    return chip, tile_a, tile_b, data, result


def test_two_tiles_exchange_data_bit_exact_with_counters_on_both_sides(elfs) -> None:
    n = 1000
    chip, a, b, data, result = _pair(elfs, n)
    expected = data + np.uint32(1)  # wraps like the cores' adds
    assert np.array_equal(np.frombuffer(a.read(CHIP_DST, 4 * n), np.uint32), expected)
    assert np.array_equal(np.frombuffer(chip.dram.read(5, 0x1000, 4 * n), np.uint32), expected)
    assert np.array_equal(np.frombuffer(b.read(CHIP_DST, 4 * n), np.uint32), data)
    assert int.from_bytes(a.read(CHIP_FLAG, 4), "little") == 1
    assert set(result.tiles) == {(1, 2), (3, 4)}
    assert all(r.cores["brisc"].exit_code == 0 for r in result.tiles.values())
    # A: one write (acknowledged) and one inline write issued; B read from it, wrote to it, and
    # counted its flag up. B: one read, two acknowledged writes; A's write and inline write arrived.
    ca, cb = a.noc.counters[0], b.noc.counters[0]
    assert (ca[CMD_ACCEPTED], ca[WR_ACK_RECEIVED], ca[RD_RESP_RECEIVED]) == (2, 1, 0)
    assert (ca[SLV_RD_REQ_RECEIVED], ca[SLV_NONPOSTED_WR_REQ_RECEIVED], ca[SLV_POSTED_ATOMIC_RECEIVED]) == (
        1,
        1,
        1,
    )
    assert (cb[CMD_ACCEPTED], cb[WR_ACK_RECEIVED], cb[RD_RESP_RECEIVED]) == (4, 2, 1)
    assert (cb[SLV_NONPOSTED_WR_REQ_RECEIVED], cb[SLV_POSTED_WR_REQ_RECEIVED]) == (1, 1)


def _pairs(elfs, n: int, pairs, quantum: int = 2000, window: int | None = None):
    """The pair example on each (a, b) of ``pairs`` in one chip: each B's results at DRAM group 5."""
    chip = Chip("blackhole", quantum=quantum, window=window)
    data = word_data(n, 7)
    for i, (a, b) in enumerate(pairs):
        chip.tile(*a).load_elf("brisc", elfs["pair_a"])
        chip.tile(*b).load_elf("brisc", elfs["pair_b"])
        chip.tile(*a).write(CHIP_SRC, data)
        chip.tile(*a).write(CHIP_ARGS, np.array([*b, n], np.uint32))
        chip.tile(*b).write(CHIP_ARGS, np.array([*a, n, 9, 2, 0x1000 + 0x10000 * i], np.uint32))
    result = chip.run(max_cycles=2_000_000)
    for i, (a, _) in enumerate(pairs):
        assert np.array_equal(
            np.frombuffer(chip.tile(*a).read(CHIP_DST, 4 * n), np.uint32), data + np.uint32(1)
        )
        got = np.frombuffer(chip.dram.read(5, 0x1000 + 0x10000 * i, 4 * n), np.uint32)
        assert np.array_equal(got, data + np.uint32(1))
    return {xy: r.cycles for xy, r in result.tiles.items()}


def test_pairs_sharing_links_wait_for_each_other_the_same_at_every_window(elfs) -> None:
    # (1, 2) -> (4, 2) and (2, 2) -> (5, 2) on NoC #0 share the X links of routers 2..4 of row 2 (and
    # the answers coming back round the torus share row 2's links from column 5 on).
    pairs = [((1, 2), (4, 2)), ((2, 2), (5, 2))]
    n = 2048  # 8 KiB each way
    alone = _pairs(elfs, n, pairs[:1])
    cycles = _pairs(elfs, n, pairs)
    assert cycles[(1, 2)] > alone[(1, 2)]  # the first pair waits for links the second one holds
    for window, quantum in ((1, 2000), (6, 2000), (19, 500)):
        assert _pairs(elfs, n, pairs, quantum, window) == cycles, (window, quantum)


def test_two_tile_cycles_do_not_depend_on_quantum_or_window(elfs) -> None:
    runs = [_pair(elfs, 256, quantum, window)[4] for quantum, window in [(2000, None), (100, 1), (500, 7)]]
    cycles = {tuple((xy, r.cycles) for xy, r in sorted(run.tiles.items())) for run in runs}
    assert len(cycles) == 1, cycles
    # A finishes after B: it waits for B's flag.
    (first,) = cycles
    assert dict(first)[(1, 2)] > dict(first)[(3, 4)] > 0


RING = [(1, 2), (10, 7), (16, 11)]


def _ring(
    elfs,
    coords,
    n: int,
    rounds: int,
    quantum: int = 2000,
    window: int | None = None,
    max_cycles: int = 5_000_000,
    arch: str = "blackhole",
):
    chip = Chip(arch, quantum=quantum, window=window)
    sources = []
    for i, xy in enumerate(coords):
        tile = chip.tile(*xy)
        tile.load_elf("brisc", elfs["ring"])
        sources.append(word_data(n, 100 + i))
        tile.write(CHIP_SRC, sources[-1])
        tile.write(CHIP_ARGS, np.array([*coords[(i + 1) % len(coords)], n, rounds], np.uint32))
    return chip, sources, chip.run(max_cycles=max_cycles)


def test_ring_of_tiles_is_bit_exact_and_quantum_independent(elfs) -> None:
    n, rounds = 48, 4
    cycles = set()
    for quantum, window in [(2000, None), (100, 1), (300, 11)]:
        chip, sources, result = _ring(elfs, RING, n, rounds, quantum, window)
        expected = ring_expected(sources, rounds)
        for i, xy in enumerate(RING):
            for r in range(rounds):
                got = np.frombuffer(chip.tile(*xy).read(CHIP_DST + 4 * n * r, 4 * n), np.uint32)
                assert np.array_equal(got, expected[i][r]), (xy, r)
        cycles.add(tuple(r.cycles for _, r in sorted(result.tiles.items())))
    assert len(cycles) == 1, cycles


def test_a_ring_of_16_tiles_sharing_row_links_takes_the_same_cycles_at_every_window(elfs) -> None:
    # Sixteen tiles in grid order, each writing 1 KiB to the next: the row's links are shared both
    # ways round, and tiles wait for their data with nothing of their own to do, so a transfer on
    # its way is what wakes them (the grants may be decided only up to its arrival).
    coords = Chip("blackhole").tensix_tiles[:16]
    cycles = set()
    for quantum, window in [(2000, None), (2000, 1), (300, None)]:
        chip, sources, result = _ring(elfs, coords, 256, 10, quantum, window)
        for i, xy in enumerate(coords):
            got = np.frombuffer(chip.tile(*xy).read(CHIP_DST, 4 * 256 * 10), np.uint32)
            assert np.array_equal(got, np.concatenate(ring_expected(sources, 10)[i])), xy
        cycles.add(tuple(r.cycles for _, r in sorted(result.tiles.items())))
    assert len(cycles) == 1, cycles


def test_ring_of_wormhole_tiles_is_bit_exact() -> None:
    """The ring example built for Wormhole (noc.h's Wormhole NIU layout: coordinates in _MID)."""
    wormhole = programs.build_chip_examples(arch="wormhole")
    coords, n, rounds = [(1, 1), (6, 5), (9, 11)], 48, 4
    chip, sources, _ = _ring(wormhole, coords, n, rounds, arch="wormhole")
    expected = ring_expected(sources, rounds)
    for i, xy in enumerate(coords):
        got = np.frombuffer(chip.tile(*xy).read(CHIP_DST, 4 * n * rounds), np.uint32)
        assert np.array_equal(got, np.concatenate(expected[i])), xy


@settings(max_examples=4, deadline=None)
@given(
    coords=st.lists(st.sampled_from(Chip("blackhole").tensix_tiles), min_size=2, max_size=4, unique=True),
    window=st.integers(1, 19),
    quantum=st.sampled_from([150, 700]),
)
def test_any_ring_gives_the_same_bits_and_cycles_for_any_window(elfs, coords, window, quantum) -> None:
    n, rounds = 24, 3
    chip, sources, reference = _ring(elfs, coords, n, rounds)
    chip, _, result = _ring(elfs, coords, n, rounds, quantum, window)
    expected = ring_expected(sources, rounds)
    for i, xy in enumerate(coords):
        got = np.frombuffer(chip.tile(*xy).read(CHIP_DST, 4 * n * rounds), np.uint32)
        assert np.array_equal(got, np.concatenate(expected[i])), xy
    assert {xy: r.cycles for xy, r in result.tiles.items()} == {
        xy: r.cycles for xy, r in reference.tiles.items()
    }


def test_chip_of_one_tile_runs_like_a_tile(elfs) -> None:
    n, rounds = 32, 3
    chip, _, result = _ring(elfs, [(1, 2)], n, rounds)
    tile = Tile("blackhole")
    tile.load_elf("brisc", elfs["ring"])
    tile.write(CHIP_SRC, word_data(n, 100))
    tile.write(CHIP_ARGS, np.array([1, 2, n, rounds], np.uint32))
    alone = tile.run(max_cycles=5_000_000)
    assert result.cycles == alone.cycles
    assert chip.tile(1, 2).read(CHIP_DST, 4 * n * rounds) == tile.read(CHIP_DST, 4 * n * rounds)


def test_tiles_running_the_five_core_eltwise_kernel_match_a_lone_tile() -> None:
    # Three independent tiles, every core and the coprocessor busy, cut into windows of 1 to 19 cycles
    # by each other: the same bits and cycles as one Tile.
    count = 3
    elfs = programs.build_eltwise("add", tiles=count)
    rng = np.random.default_rng(5)
    a, b = ((rng.integers(0, 1 << 16, (count, 32, 32)) & 0xBFFF).astype(np.uint16) for _ in range(2))

    def load(tile: Tile) -> None:
        for core, elf in elfs.items():
            tile.load_elf(core, elf)
        tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
        tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))

    alone = Tile("blackhole")
    load(alone)
    cycles = alone.run(max_cycles=1_000_000).cycles
    out = alone.read(programs.KERNEL_DST, count * programs.BF16_TILE_BYTES)
    for quantum, window in [(2000, None), (2000, 1), (100, 5)]:
        chip = Chip("blackhole", quantum=quantum, window=window)
        for xy in [(1, 2), (2, 2), (5, 9)]:
            load(chip.tile(*xy))
        result = chip.run(max_cycles=1_000_000)
        assert {r.cycles for r in result.tiles.values()} == {cycles}
        for tile in chip.tiles.values():
            assert tile.read(programs.KERNEL_DST, count * programs.BF16_TILE_BYTES) == out


# ---------------------------------------------------------------------------- distance-aware windows
def test_reach_is_the_torus_distance_the_shorter_way_round() -> None:
    chip = Chip("blackhole")
    # 5 + 9 * hops + 5. (1, 2) -> (10, 7): X 9 one way, 8 the other; Y 5 or 7: 13 hops.
    assert chip.reach((1, 2), (10, 7)) == chip.reach((10, 7), (1, 2)) == 5 + 9 * 13 + 5
    assert chip.reach((1, 2), (2, 2)) == 19  # neighbours: the lookahead
    assert chip.reach((1, 2), (16, 11)) == 5 + 9 * (2 + 3) + 5  # round both wraps
    assert Chip("blackhole", window=7).reach((1, 2), (10, 7)) == 7  # an explicit window is uniform


def test_far_apart_tiles_run_in_longer_windows_with_the_same_cycles() -> None:
    count = 3
    elfs = programs.build_eltwise("add", tiles=count)
    rng = np.random.default_rng(5)
    a, b = ((rng.integers(0, 1 << 16, (count, 32, 32)) & 0xBFFF).astype(np.uint16) for _ in range(2))

    def run(coords, window):
        chip = Chip("blackhole", window=window)
        for xy in coords:
            tile = chip.tile(*xy)
            for core, elf in elfs.items():
                tile.load_elf(core, elf)
            tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
            tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))
        result = chip.run(max_cycles=1_000_000)
        out = {chip.tile(*xy).read(programs.KERNEL_DST, count * programs.BF16_TILE_BYTES) for xy in coords}
        return result.windows, {r.cycles for r in result.tiles.values()}, out

    far, near = [(1, 2), (10, 7)], [(1, 2), (2, 2)]
    windows, cycles, out = run(far, None)
    uniform, same_cycles, same_out = run(far, NOC_LOOKAHEAD)
    assert (cycles, out) == (same_cycles, same_out) and len(out) == 1
    # 13 hops apart: windows of up to 127 cycles instead of 19 (far fewer of them, though the tiles'
    # own synchronisation cuts some short).
    assert windows * 3 < uniform
    # Neighbours: the reach is the lookahead, as before.
    assert run(near, None)[0] == run(near, NOC_LOOKAHEAD)[0]


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("target", "error", "words"),
    [((8, 4), NoEndpoint, "router with no endpoint"), ((8, 2), Unimplemented, "security tile")],
)
def test_request_to_a_coordinate_without_a_tensix_endpoint_raises_and_changes_nothing(
    elfs, target, error, words
) -> None:
    chip = Chip("blackhole")
    a = chip.tile(1, 2)
    a.load_elf("brisc", elfs["pair_a"])
    a.write(CHIP_ARGS, np.array([*target, 64], np.uint32))
    with pytest.raises(error) as caught:
        chip.run(max_cycles=100_000)
    e = caught.value
    assert e.core == "brisc" and e.pc is not None and e.cycle is not None and e.cycle > 0
    assert words in e.message and f"({target[0]}, {target[1]})" in e.message
    assert not a.noc.counters.any() and not chip.fabric.in_flight and not chip.fabric.waiting
    assert not a.noc.pending
    assert list(chip.tiles) == [(1, 2)]


def test_waiting_for_a_tile_with_no_program_is_a_deadlock_naming_the_tile(elfs) -> None:
    chip = Chip("blackhole")
    a = chip.tile(1, 2)
    a.load_elf("brisc", elfs["ring"])
    a.write(CHIP_SRC, word_data(16, 3))
    a.write(CHIP_ARGS, np.array([2, 2, 16, 2], np.uint32))
    with pytest.raises(Deadlock, match=r"tile \(1, 2\)"):
        chip.run(max_cycles=1_000_000)
    # The tile it wrote to was built by the write, which landed.
    assert (2, 2) in chip.tiles
    got = np.frombuffer(chip.tile(2, 2).read(CHIP_DST, 64), np.uint32)
    assert np.array_equal(got, word_data(16, 3) + np.uint32(1))


def test_window_is_bounded_by_the_lookahead() -> None:
    with pytest.raises(ValueError, match="lookahead"):
        Chip("blackhole", window=20)


def test_a_tile_of_a_chip_does_not_run_alone() -> None:
    with pytest.raises(ValueError, match=r"Chip\.run"):
        Chip("blackhole").tile(1, 2).run()


def test_cycle_limit_names_the_tile_that_would_go_on(elfs) -> None:
    with pytest.raises(CycleLimitExceeded, match=r"tile \((1, 2|10, 7|16, 11)\)") as caught:
        _ring(elfs, RING, 48, 4, max_cycles=1500)
    assert caught.value.cycle == 1500


# ---------------------------------------------------------------------------- multicast


def _multicast(elfs, sender, rect, receivers, include_self=False, n=64, quantum=2000):
    """The sender multicasts n words and a go flag to rect; each of ``receivers`` (in order: slot k)
    scales the words by k + 2 and writes them back into the sender's slot k."""
    chip = Chip("blackhole", quantum=quantum)
    tile = chip.tile(*sender)
    tile.load_elf("brisc", elfs["mcast_sender"])
    data = word_data(n, 11)
    tile.write(CHIP_SRC, data)
    reached = len(receivers) + int(include_self)
    args = [*rect[0], *rect[1], n, reached, int(include_self), len(receivers)]
    tile.write(CHIP_ARGS, np.array(args, np.uint32))
    for k, xy in enumerate(receivers):
        other = chip.tile(*xy)
        other.load_elf("brisc", elfs["mcast_receiver"])
        other.write(CHIP_ARGS, np.array([*sender, n, k], np.uint32))
    result = chip.run(max_cycles=2_000_000)
    return chip, tile, data, result


def test_a_multicast_reaches_every_tensix_tile_of_the_rectangle(elfs) -> None:
    receivers = [(3, 4), (4, 4), (3, 5), (4, 5)]
    chip, tile, data, result = _multicast(elfs, (1, 2), ((3, 4), (4, 5)), receivers)
    for k, xy in enumerate(receivers):
        assert np.array_equal(np.frombuffer(chip.tile(*xy).read(CHIP_DST, data.nbytes), np.uint32), data)
        back = np.frombuffer(tile.read(CHIP_DST + 0x4000 + k * data.nbytes, data.nbytes), np.uint32)
        assert np.array_equal(back, data * np.uint32(k + 2))
    # Two multicasts, each acknowledged by all four receivers (their results are their own writes).
    assert chip.tile(1, 2).noc.counters[0][MST_WR_ACK_RECEIVED] == 8
    assert result.cycles == _multicast(elfs, (1, 2), ((3, 4), (4, 5)), receivers, quantum=300)[3].cycles


def test_non_tensix_tiles_opt_out_and_the_sender_only_with_src_include(elfs) -> None:
    # Columns 8 (routers, L2CPU) and 9 (DRAM) lie in the rectangle; only (7, 4) receives. The
    # sender (7, 5) is in it too and receives only with NOC_CMD_BRCST_SRC_INCLUDE.
    for include in (False, True):
        chip, tile, data, _ = _multicast(elfs, (7, 5), ((7, 4), (9, 5)), [(7, 4)], include_self=include)
        assert np.array_equal(np.frombuffer(chip.tile(7, 4).read(CHIP_DST, data.nbytes), np.uint32), data)
        own = np.frombuffer(tile.read(CHIP_DST, data.nbytes), np.uint32)
        assert np.array_equal(own, data) == include
        assert chip.tile(7, 5).noc.counters[0][MST_WR_ACK_RECEIVED] == 2 * (1 + include)
        assert sorted(chip.tiles) == [(7, 4), (7, 5)]  # nothing built for the tiles that opt out


SIGNAL = 0xFFB40000 + 4 * 31  # stream 0's scratch register: an MMIO target for inline writes


def _rectangle(start: tuple[int, int], end: tuple[int, int]) -> int:
    """A broadcast ``*_ADDR_HI``: the end corner in bits 0..11, the start in bits 12..23."""
    return end[0] | end[1] << 6 | (start[0] | start[1] << 6) << 12


def _broadcast(chip: Chip, sender: tuple[int, int], fields: dict[int, int], cycle: int = 100) -> None:
    f = chip.tile(*sender).noc.requests[0, 0]
    f[:] = 0
    for index, value in fields.items():
        f[index] = value
    chip.tile(*sender).noc.initiate(0, 0, cycle)


def test_a_multicast_inline_write_reaches_each_receiver_at_its_distance_and_each_acknowledges() -> None:
    chip = Chip("blackhole")
    rect = _rectangle((2, 2), (3, 3))
    ctrl = CMD_WR | CMD_WR_INLINE | CMD_BRCST_PACKET | CMD_RESP_MARKED
    _broadcast(chip, (1, 2), {TARG_LO: SIGNAL, TARG_HI: rect, CTRL: ctrl, AT_DATA: 0x5EED})
    # One flit leaves at 101; each receiver gets it 5 + 9 * hops + 5 later: (2, 2) is one hop away,
    # (3, 2) and (2, 3) two, (3, 3) three.
    assert sorted(settle(chip)) == [120, 129, 129, 138]
    chip.fabric.hand_over()
    for xy in [(2, 2), (3, 2), (2, 3), (3, 3)]:
        chip.tile(*xy).noc.deliver(1000)
        assert chip.tile(*xy).register_access(SIGNAL, 1000, None) == 0x5EED
    # The acknowledgements go the long way round on NoC #0: (2, 2) 16 hops back, (3, 2) 15, (2, 3)
    # 16 + 11, (3, 3) 15 + 11: 120 + 10 + 144 = 274, 129 + 10 + 135 = 274, 129 + 10 + 243 = 382,
    # 138 + 10 + 234 = 382. (3, 2)'s meets (2, 2)'s on the X link out of router 3 of row 2 in the
    # same cycle and goes one cycle later, as (3, 3)'s behind (2, 3)'s in row 3.
    assert sorted(settle(chip)) == [274, 275, 382, 383]
    chip.fabric.hand_over()
    a = chip.tile(1, 2)
    a.noc.deliver(382)
    assert a.noc.counters[0, MST_WR_ACK_RECEIVED] == 3
    a.noc.deliver(383)
    assert a.noc.counters[0, MST_WR_ACK_RECEIVED] == 4


def test_a_posted_multicast_atomic_counts_up_every_receiver() -> None:
    chip = Chip("blackhole")
    receivers = [(5, 7), (6, 7), (7, 7)]
    for xy in receivers:
        chip.tile(*xy).write(CHIP_FLAG, np.array([10, 0, 0, 0], np.uint32))
    increment = 1 << 12 | 31 << 2  # Atomics.md: opcode 1, IntWidth 31, Ofs 0
    fields = {TARG_LO: CHIP_FLAG, TARG_HI: _rectangle((5, 7), (7, 7)), AT_LEN_BE: increment, AT_DATA: 3}
    _broadcast(chip, (1, 2), {**fields, CTRL: CMD_AT | CMD_BRCST_PACKET})
    settle(chip)
    chip.fabric.hand_over()
    for xy in receivers:
        chip.tile(*xy).noc.deliver(10_000)
        assert int.from_bytes(chip.tile(*xy).read(CHIP_FLAG, 4), "little") == 13
    # With a response (whose value would land from each receiver): refused, nothing sent.
    with pytest.raises(Unimplemented, match="broadcast atomic with NOC_CMD_RESP_MARKED"):
        _broadcast(chip, (1, 2), {**fields, CTRL: CMD_AT | CMD_BRCST_PACKET | CMD_RESP_MARKED})
    assert not chip.fabric.waiting and not chip.fabric.in_flight


def test_a_rectangle_whose_start_lies_past_its_end_wraps_round_the_torus() -> None:
    chip = Chip("blackhole")
    sender = chip.tile(5, 5)
    data = word_data(16, 4)
    sender.write(CHIP_SRC, data)
    # X span 16..1 wrapping: columns 16, 0 (DRAM: opts out) and 1; Y span 11..2 wrapping: rows 11,
    # 0, 1 (no Tensix tiles) and 2. Receivers: (1, 2), (16, 2), (1, 11), (16, 11).
    fields = {TARG_LO: CHIP_SRC, TARG_HI: 5 | 5 << 6, RET_LO: CHIP_DST, AT_LEN_BE: 64}
    _broadcast(
        chip, (5, 5), {**fields, RET_HI: _rectangle((16, 11), (1, 2)), CTRL: CMD_WR | CMD_BRCST_PACKET}
    )
    settle(chip)
    targets = chip.fabric.hand_over()
    assert targets == {(1, 2), (16, 2), (1, 11), (16, 11)}
    for xy in targets:
        chip.tile(*xy).noc.deliver(10_000)
        assert np.array_equal(np.frombuffer(chip.tile(*xy).read(CHIP_DST, 64), np.uint32), data)


@pytest.mark.parametrize(
    ("field", "rectangle", "ctrl"),
    [
        (RET_HI, _rectangle((2, 2), (17, 3)), CMD_WR),  # EndX past the 17 columns
        (RET_HI, _rectangle((2, 40), (3, 3)), CMD_WR),  # StartY past the 12 rows
        (TARG_HI, _rectangle((20, 2), (3, 3)), CMD_WR | CMD_WR_INLINE),
        (TARG_HI, _rectangle((2, 2), (3, 12)), CMD_AT),
    ],
)
def test_a_broadcast_rectangle_with_a_corner_off_the_grid_is_refused_and_sends_nothing(
    field: int, rectangle: int, ctrl: int
) -> None:
    chip = Chip("blackhole")
    fields = {TARG_LO: SIGNAL if ctrl & CMD_WR_INLINE else CHIP_SRC, TARG_HI: 1 | 2 << 6, RET_LO: CHIP_DST}
    fields.update({AT_LEN_BE: 64 if ctrl == CMD_WR else 1 << 12 | 31 << 2, field: rectangle})
    with pytest.raises(NoEndpoint, match="a corner outside the 17x12 grid"):
        _broadcast(chip, (1, 2), {**fields, CTRL: ctrl | CMD_BRCST_PACKET})
    a = chip.tile(1, 2)
    assert not a.noc.counters.any() and not a.noc.pending and not chip.fabric.waiting
    assert list(chip.tiles) == [(1, 2)]


def test_a_broadcast_excluding_part_of_its_rectangle_is_refused() -> None:
    chip = Chip("blackhole")
    fields = {TARG_LO: CHIP_SRC, TARG_HI: 1 | 2 << 6, RET_LO: CHIP_DST, AT_LEN_BE: 64, BRCST_EXCLUDE: 1}
    with pytest.raises(Unimplemented, match="NOC_BRCST_EXCLUDE"):
        _broadcast(
            chip, (1, 2), {**fields, RET_HI: _rectangle((2, 2), (3, 3)), CTRL: CMD_WR | CMD_BRCST_PACKET}
        )
    assert not chip.tile(1, 2).noc.counters.any() and not chip.fabric.waiting


# ---------------------------------------------------------------------------- harvesting
def test_harvested_columns_are_not_tensix_tiles() -> None:
    chip = Chip("blackhole", harvested=(4, 13))
    assert len(chip.tensix_tiles) == 120  # a p100a's count
    assert chip.kind_at((4, 2)) == "harvested" and chip.kind_at((5, 2)) == "tensix"
    with pytest.raises(ValueError, match="a harvested Tensix tile"):
        chip.tile(4, 7)
    with pytest.raises(ValueError, match="harvested columns must be Tensix columns"):
        Chip("blackhole", harvested=(8,))


def test_a_request_to_a_harvested_tile_names_core_pc_cycle_and_coordinates(elfs) -> None:
    from tensixsim.noc import HarvestedTile

    chip = Chip("blackhole", harvested=(3,))
    a = chip.tile(1, 2)
    a.load_elf("brisc", elfs["pair_a"])
    a.write(CHIP_SRC, word_data(64, 1))
    a.write(CHIP_ARGS, np.array([3, 4, 64], np.uint32))  # B at (3, 4): fused off
    with pytest.raises(HarvestedTile, match=r"names \(3, 4\).*harvested Tensix tile") as info:
        chip.run(max_cycles=1_000_000)
    assert info.value.core == "brisc" and info.value.pc is not None and info.value.cycle > 0
    assert list(chip.tiles) == [(1, 2)] and not chip.fabric.waiting


def test_a_multicast_skips_harvested_tiles(elfs) -> None:
    chip = Chip("blackhole", harvested=(4,))
    sender = chip.tile(1, 2)
    data = word_data(16, 2)
    sender.write(CHIP_SRC, data)
    fields = {TARG_LO: CHIP_SRC, TARG_HI: 1 | 2 << 6, RET_LO: CHIP_DST, AT_LEN_BE: 64}
    ctrl = CMD_WR | CMD_BRCST_PACKET | CMD_RESP_MARKED
    _broadcast(chip, (1, 2), {**fields, RET_HI: _rectangle((3, 2), (5, 2)), CTRL: ctrl})
    settle(chip)
    assert chip.fabric.hand_over() == {(3, 2), (5, 2)}
    assert sender.noc.counters[0, 16] == 2  # REQS_OUTSTANDING: one acknowledgement per receiver


# ---------------------------------------------------------------------------- a matmul over a 2x2 grid


def _grid_matmul(quantum: int):
    """C = A @ B, 128x128 BF16 each, on four worker tiles: a distributor tile multicasts A's row
    blocks along the grid's rows and B's column blocks down its columns, then releases each worker
    with a NoC inline write to its SOFT_RESET_0; each worker runs the SDK's five-core matmul kernel
    on its 64x64 block of C (2x4 by 4x2 tiles, HiFi4). Returns the chip's result, each worker's C
    tiles and the blocks they were given."""
    from test_matmul import bf16_values, bits

    mt, kt, nt = 2, 4, 2
    rng = np.random.default_rng(77)
    a_tiles = [bf16_values(rng, 3) for _ in range(16)]  # 4x4 tiles, row-major
    b_tiles = [bf16_values(rng, 3) for _ in range(16)]

    def a_block(i: int) -> list:  # tile rows 2i, 2i+1, all four columns: mt x kt, row-major
        return [a_tiles[r * 4 + k] for r in (2 * i, 2 * i + 1) for k in range(4)]

    def b_block(j: int) -> list:  # all four tile rows, columns 2j, 2j+1: kt x nt, row-major
        return [b_tiles[k * 4 + c] for k in range(4) for c in (2 * j, 2 * j + 1)]

    def l1(tiles: list) -> np.ndarray:
        return programs.tiles_to_l1([bits(t) >> 16 for t in tiles])

    chip = Chip("blackhole", quantum=quantum)
    x0, y0 = 3, 4
    source = chip.tile(1, 2)
    source.load_elf("brisc", programs.build_chip_examples()["mm_distribute"])
    block = len(l1(a_block(0)))
    for i in range(2):
        source.write(0x100000 + i * block, l1(a_block(i)))  # mm_distribute.c's MM_A
        source.write(0x108000 + i * block, l1(b_block(i)))  # MM_B
    source.write(CHIP_ARGS, np.array([x0, y0, block], np.uint32))
    workers = {(i, j): chip.tile(x0 + j, y0 + i) for i in range(2) for j in range(2)}
    for worker in workers.values():
        for core, elf in programs.build_matmul(mt=mt, nt=nt, kt=kt, phases=4).items():
            worker.load_elf(core, elf)
    # Only the distributor is released by the host; the workers by the distributor's NoC writes.
    result = chip.run(max_cycles=5_000_000, release={(1, 2): ("brisc",)})
    got = {
        ij: programs.tiles_from_l1(w.read(programs.KERNEL_DST, mt * nt * 2048), mt * nt)
        for ij, w in workers.items()
    }
    blocks = {(i, j): (a_block(i), b_block(j)) for i in range(2) for j in range(2)}
    return result, got, blocks


def test_a_128x128_matmul_split_over_a_2x2_grid_is_bit_exact() -> None:
    from test_sdk_kernels import matmul_expected

    result, got, blocks = _grid_matmul(2000)
    for ij, (a, b) in blocks.items():
        expected = matmul_expected(a, b, 2, 2, 4, 4)
        for t in range(4):
            np.testing.assert_array_equal(got[ij][t], expected[t], err_msg=f"worker {ij} tile {t}")
    again, _, _ = _grid_matmul(300)
    assert {xy: r.cycles for xy, r in again.tiles.items()} == {xy: r.cycles for xy, r in result.tiles.items()}
