"""Blackhole's L0 data cache (BlackholeA0 BabyRISCV README, "L0 Data Cache"; CSRs.md, cfg0): four
16-byte lines between a core and L1, on out of reset (cfg0 DisLowCash clear), a hit answering after 2
cycles as the core's own local RAM does, a fence or an atomic flushing it, a store to L1 dropping
its line, and a hit flushing it all with a small chance unless DisLowCachePeriodicFlush is set. It
is not coherent: another client's write to L1 leaves the bytes it holds as they were.
The expected cycles and values are worked by hand from those rules (see each test), not taken from
the emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from asm import assemble

from tensixsim import Tile
from tensixsim.errors import Deadlock
from tensixsim.riscv.hook_state import L0_SEED
from tensixsim.sdk import calibration
from tensixsim.sdk.calibration.case import Case, pointer_cycle, rept
from tensixsim.timing import RISCV

CACHE_ON = "csrci 0x7c0, 8"  # the SDK's start-up code sets DisLowCash; the measured probes cleared it
NO_PERIODIC_FLUSH = "li t0, 0x1000000\ncsrs 0x7c0, t0"
CHASE = rept(8, "lw a0, 0(a0)")  # eight dependent loads an iteration


def _slope(body: str, setup: str = "", prologue: str = "") -> float:
    """Cycles one iteration of ``body`` adds to the measured loop (the loop with an empty body
    subtracted), from the difference of a 32- and a 64-iteration run: no first-pass costs."""
    case = Case("l0", "l0", body, 1, (1.0, 1.0), setup=setup)
    totals = [
        calibration.run_case(replace(case, iters=n, prologue=prologue)).per_core["brisc"] * n
        for n in (32, 64)
    ]
    return (totals[1] - totals[0]) / 32


def _chase_slope(latency: int) -> int:
    """Eight dependent loads of ``latency`` in the harness loop (beqz, body, addi, j): the next
    iteration's first load issues at the later of its operand and the loop's three instructions
    after the last load; the empty loop's three cycles subtracted."""
    return 7 * latency + max(latency, 4) - 3


ON = f"{CACHE_ON}\n{NO_PERIODIC_FLUSH}"


def test_a_chase_through_one_line_hits_as_fast_as_local_ram() -> None:
    hit = _chase_slope(RISCV.l0_hit_latency)
    assert hit == 15  # 7 x 2 + 4 - 3
    assert _slope(CHASE, pointer_cycle(1), ON) == hit
    # The core's own local RAM: "a latency of two cycles" (the README), the same chase.
    assert _slope(CHASE, pointer_cycle(1, "s1", 0x40), ON) == hit
    # DisLowCash set (as the SDK's start-up code leaves it): every load goes to L1.
    assert _slope(CHASE, pointer_cycle(1)) == _chase_slope(RISCV.l1_load_latency) == 61  # 7 x 8 + 8 - 3


def test_four_lines_fit_and_a_fifth_evicts_the_least_recently_used_every_time() -> None:
    hit, miss = _chase_slope(RISCV.l0_hit_latency), _chase_slope(RISCV.l1_load_latency)
    assert _slope(CHASE, pointer_cycle(4), ON) == hit
    # A cycle of five lines: the line a load needs is always the one evicted four loads before.
    assert _slope(CHASE, pointer_cycle(5), ON) == miss
    assert _slope(CHASE, pointer_cycle(8), ON) == miss


@pytest.mark.parametrize(
    ("what", "body", "other"),
    [
        # A store to L1 drops the line it writes (a word of the loaded line, another line's word).
        ("store", "lw a1, 0x100(s0)\nsw a2, 0x108(s0)", "lw a1, 0x100(s0)\nsw a2, 0x148(s0)"),
        ("fence", "lw a1, 0x100(s0)\nfence", "lw a1, 0x100(s0)\nnop"),
        (
            "atomic",
            "lw a1, 0x100(s0)\namoadd.w zero, a2, (t0)",
            "lw a1, 0x100(s0)\nsw a2, 0x148(s0)",
        ),
    ],
)
def test_a_store_drops_its_line_and_a_fence_or_an_atomic_flushes_the_cache(
    what: str, body: str, other: str
) -> None:
    """With the line gone at each iteration's load, the loop costs what it does with no cache at all
    (the miss is an L1 load like any); without, the load hits and the loop is cheaper."""
    setup = "addi t0, s0, 0x140\nli a2, 1"
    body += "\nadd a3, a1, a1"  # the load's use
    assert _slope(body, setup, ON) == _slope(body, setup)
    assert _slope(other + "\nadd a3, a1, a1", setup, ON) < _slope(other + "\nadd a3, a1, a1", setup)


def _misses(loads: int, one_in: int) -> int:
    """The misses of a chase of ``loads`` loads through one line, the cache empty at the first, each
    hit flushing it when the core's xorshift draw (x ^= x << 13, x >> 17, x << 5 on 32 bits, from the
    seed out of reset) is a multiple of ``one_in``."""
    x, present, misses = L0_SEED, False, 0
    for _ in range(loads):
        if not present:
            misses += 1
            present = True
            continue
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        present = x % one_in != 0
    return misses


def _raw_cycles(arch: str, iterations: int, prologue: str = "") -> int:
    """A raw program (no start-up code: cfg0 as out of reset) chasing one L1 word eight times an
    iteration, with the loop's addi and bnez."""
    source = "\n".join(
        (
            prologue,
            "li a0, 0x30000\nsw a0, 0(a0)\nfence",
            f"li t6, {iterations}\n1:",
            CHASE,
            "addi t6, t6, -1\nbnez t6, 1b\necall",
        )
    )
    tile = Tile(arch)
    tile.write(0, assemble(source, base=0))
    return tile.run(max_cycles=10**6, release=["brisc"]).cores["brisc"].cycles


def test_hits_flush_the_cache_now_and_then_unless_told_not_to() -> None:
    """A chase of 8 x 1000 loads through one line: every flush makes the next load a miss, 8 cycles
    instead of 2 (fewer where the loop's addi and bnez hid part of the hit). The misses follow the
    documented rule with the core's own generator (about one hit in RISCV.l0_flush_one_in)."""
    on = _raw_cycles("blackhole", 2000) - _raw_cycles("blackhole", 1000)
    steady = _raw_cycles("blackhole", 2000, NO_PERIODIC_FLUSH) - _raw_cycles(
        "blackhole", 1000, NO_PERIODIC_FLUSH
    )
    assert steady == 1000 * 17  # 7 x 2 + 3 an iteration (the next first load after addi and bnez)
    flushes = _misses(8 * 2000, RISCV.l0_flush_one_in) - _misses(8 * 1000, RISCV.l0_flush_one_in)
    assert 0.004 < flushes / (8 * 1000) < 0.012  # "approximately a 0.8% chance"
    # Each flush turns a hit into a miss: 6 cycles more, or 5 when it is an iteration's first load
    # (the loop's instructions took 3 cycles after the previous load, not 2).
    assert 5 * flushes <= on - steady <= 6 * flushes


def test_out_of_reset_a_blackhole_core_has_the_cache_on_and_a_wormhole_core_has_none() -> None:
    per_iteration = {
        name: (_raw_cycles(arch, 64, prologue) - _raw_cycles(arch, 32, prologue)) / 32
        for name, arch, prologue in (
            ("blackhole", "blackhole", NO_PERIODIC_FLUSH),
            ("blackhole off", "blackhole", "csrsi 0x7c0, 8"),
            ("wormhole", "wormhole", ""),
        )
    }
    assert per_iteration == {"blackhole": 7 * 2 + 3, "blackhole off": 8 * 8, "wormhole": 8 * 8}


POLLER = """
li s0, 0x30000
1:  lw a0, 0(s0)
    beqz a0, 1b
sw a0, 4(s0)
ecall
"""


def _writer(countdown: int, more: str = "") -> str:
    """Counts down (2 cycles an iteration), then stores 7 to the polled word (and does ``more``)."""
    countdown = f"li t0, {countdown}\n2:  addi t0, t0, -1\n    bnez t0, 2b\n"
    return f"{countdown}li s0, 0x30000\nli a0, 7\nsw a0, 0(s0)\n{more}ecall"


WRITER = _writer(3000)


@pytest.mark.parametrize(
    ("prefix", "fence", "parked"),
    [("", "", False), ("", "fence\n", True), ("csrsi 0x7c0, 8\n", "", True)],
    ids=["through the cache", "with a fence", "cache off"],
)
def test_a_poll_through_the_cache_is_not_parked_and_runs_as_with_parking_off(
    prefix: str, fence: str, parked: bool
) -> None:
    """A poll loop's hits move the flush generator on (and a miss fills a line), so its iterations do
    not all cost the same: it runs every iteration, the same cycles as with parking off. With a
    fence in the loop (the README's advice for polls), each load misses and the fence empties the
    cache again: every iteration the same, parked and woken by the store, as with the cache off."""
    poller = prefix + POLLER.replace("beqz a0, 1b", f"{fence}beqz a0, 1b")
    runs = []
    for park in (True, False):
        tile = Tile("blackhole")
        tile.park_polls = park
        tile.write(0x0, assemble(poller, base=0x0))
        tile.write(0x12000, assemble(WRITER, base=0x12000))
        result = tile.run(max_cycles=10**6, release=["brisc", "ncrisc"])
        runs.append(({n: (c.cycles, c.instructions) for n, c in result.cores.items()}, tile.wakes))
        assert tile.read(0x30004, 4) == (7).to_bytes(4, "little")
    (with_parking, wakes), (without, _) = runs
    assert with_parking == without
    assert (wakes > 0) == parked


# Another core's store to a line the reader's cache holds (raw programs: cfg0 as out of reset). The
# reader fills the line, waits until long after the writer's store, reads it again (words, a byte,
# a half-word), flushes with a fence and reads once more.
READER = """
li s0, 0x30000
lw a1, 0(s0)
li t0, 1000
2:  addi t0, t0, -1
    bnez t0, 2b
lw a2, 0(s0)
lbu a3, 5(s0)
lhu a4, 6(s0)
fence
lw a5, 0(s0)
ecall
"""
LATE_WRITER = _writer(200, "li a0, 9\nsb a0, 5(s0)\n")
LINE = bytes(range(1, 17))  # the line's bytes before the writer's store
WRITTEN = (7).to_bytes(4, "little") + bytes([5, 9]) + LINE[6:]


def _reader_and_writer(
    reader: str, writer: str, quantum: int = 2000, park: bool = True, line: bytes = LINE
) -> tuple[Tile, dict]:
    tile = Tile("blackhole", quantum=quantum)
    tile.park_polls = park
    tile.write(0x30000, line)
    tile.write(0x0, assemble(reader, base=0x0))
    tile.write(0x12000, assemble(writer, base=0x12000))
    result = tile.run(max_cycles=10**6, release=["brisc", "ncrisc"])
    return tile, {n: (c.cycles, c.instructions) for n, c in result.cores.items()}


def _reads(tile: Tile) -> list[int]:
    return [tile.core("brisc").reg(r) for r in ("a1", "a2", "a3", "a4", "a5")]


@pytest.mark.parametrize("quantum", [2000, 7, 1])
def test_another_cores_store_leaves_the_cached_line_as_it_was_until_a_fence(quantum: int) -> None:
    """The README: "The cache is _not_ coherent: if other clients write to L1, doing so will not
    invalidate the L0 of any baby RISCV". The reader's loads after the store hit its line and answer
    with the bytes it held (the word, byte 5, the half-word at 6), at any quantum; the fence
    empties the cache and the next load reads the writer's bytes. L1 itself holds what the writer
    stored (the hits' bytes never leave the reader)."""
    tile, _ = _reader_and_writer(NO_PERIODIC_FLUSH + READER, LATE_WRITER, quantum)
    old = int.from_bytes(LINE[:4], "little")
    assert _reads(tile) == [old, old, LINE[5], int.from_bytes(LINE[6:8], "little"), 7]
    assert tile.read(0x30000, 16) == WRITTEN


def test_with_the_cache_off_every_load_reads_l1_as_it_is() -> None:
    tile, _ = _reader_and_writer("csrsi 0x7c0, 8\n" + READER, LATE_WRITER)
    assert _reads(tile) == [int.from_bytes(LINE[:4], "little"), 7, 9, int.from_bytes(LINE[6:8], "little"), 7]
    assert tile.read(0x30000, 16) == WRITTEN


POLL_COUNTING = """
li s0, 0x30000
li t1, 0
1:  lw a0, 0(s0)
    addi t1, t1, 1
    beqz a0, 1b
sw t1, 0x40(s0)
ecall
"""
WRITER_AT_3000 = _writer(1500)
CLEAR = bytes(16)  # the polled flag 0 at first


def _miss(load: int) -> bool:
    """Whether load number ``load`` (from 0) of a core reading one line over and over misses, by the
    documented rule and the core's generator (see _misses)."""
    return _misses(load + 1, RISCV.l0_flush_one_in) > _misses(load, RISCV.l0_flush_one_in)


@pytest.mark.parametrize("park", [True, False], ids=["parking", "no parking"])
def test_a_poll_without_a_fence_sees_the_store_only_at_its_next_miss(park: bool) -> None:
    """The poll's hits keep answering with the line's old bytes after the writer's store; the first
    load to see the new word is a miss (a periodic flush emptied the cache just before), which the
    documented rule and the core's generator place (_miss). The same with parking on or off."""
    tile, cycles = _reader_and_writer(POLL_COUNTING, WRITER_AT_3000, park=park, line=CLEAR)
    loads = int.from_bytes(tile.read(0x30040, 4), "little")
    assert _miss(loads - 1)
    # The miss before it came before the store (the writer's at about 3000 cycles), this one after:
    # an iteration takes 3 cycles with a hit (the load's 2, then addi and beqz), 6 more with a miss.
    misses = [i for i in range(loads) if _miss(i)]
    assert len(misses) >= 2
    issued = [3 * i + 6 * misses.index(i) for i in misses[-2:]]
    assert issued[0] < 3000 < issued[1]
    _, cycles_off = _reader_and_writer(
        "csrsi 0x7c0, 8\n" + POLL_COUNTING, WRITER_AT_3000, park=park, line=CLEAR
    )
    assert cycles_off["brisc"][0] < cycles["brisc"][0]  # without the cache it sees the store at once


BOUNDED_POLL = """
li s0, 0x30000
li t1, 3000
1:  lw a0, 0(s0)
    bnez a0, 3f
    addi t1, t1, -1
    bnez t1, 1b
3:  sw a0, 0x40(s0)
ecall
"""


def test_without_periodic_flushes_a_poll_without_a_fence_never_sees_the_store() -> None:
    """DisLowCachePeriodicFlush set: nothing empties the cache, so 3000 polls (9000 cycles, the store
    at about 3000) all read the line's old word, 0; with the cache off the poll sees 7."""
    for prefix, seen in ((NO_PERIODIC_FLUSH + "\n", 0), ("csrsi 0x7c0, 8\n", 7)):
        tile, _ = _reader_and_writer(prefix + BOUNDED_POLL, WRITER_AT_3000, line=CLEAR)
        assert tile.read(0x30040, 4) == seen.to_bytes(4, "little")


def test_a_poll_its_cache_hides_a_store_from_is_a_deadlock_only_when_nothing_will_flush_it() -> None:
    """Each of BRISC and NCRISC polls a flag (in one line) the other sets after seeing its own, with
    no fence: every poll goes on hitting a line its cache filled before the other's store, until a
    periodic flush. Not a deadlock: the run completes. With the periodic flush off, nothing
    will ever show the poller the store (as on silicon, it waits for good): a deadlock."""
    ping = "li s0, 0x30000\nli a0, 1\nsw a0, 4(s0)\n1:  lw a1, 0(s0)\n    beqz a1, 1b\necall"
    pong = "li s0, 0x30000\n1:  lw a1, 4(s0)\n    beqz a1, 1b\nli a0, 1\nsw a0, 0(s0)\necall"
    runs = [_reader_and_writer(ping, pong, quantum=quantum, line=CLEAR)[1] for quantum in (2000, 13, 1)]
    assert runs[0] == runs[1] == runs[2]  # (and whatever the quantum)
    with pytest.raises(Deadlock, match="brisc"):
        _reader_and_writer(
            NO_PERIODIC_FLUSH + "\n" + POLL_COUNTING.replace("addi t1, t1, 1", "nop"),
            WRITER_AT_3000,
            line=CLEAR,
        )


_TWO_CORES = """
import json, sys
from tensixsim import Tile
from tensixsim.riscv.native import native_library
line, reader, writer = json.loads(sys.stdin.read())
tile = Tile("blackhole")
tile.write(0x30000, bytes.fromhex(line))
tile.write(0x0, bytes.fromhex(reader))
tile.write(0x12000, bytes.fromhex(writer))
result = tile.run(max_cycles=10**6, release=["brisc", "ncrisc"])
print(json.dumps({
    "native": native_library() is not None,
    "cycles": {n: [c.cycles, c.instructions] for n, c in result.cores.items()},
    "regs": tile.core("brisc").regs,
    "l1": tile.read(0x30000, 0x80).hex(),
}))
"""


@pytest.mark.parametrize(
    ("reader", "line"),
    [(NO_PERIODIC_FLUSH + READER, LINE), (POLL_COUNTING, CLEAR)],
    ids=["stale reads and a fence", "poll until a miss"],
)
def test_the_python_hooks_keep_the_same_lines_and_bytes(reader: str, line: bytes) -> None:
    """The pure-Python hooks (no compiler) against the native ones on the two programs above: the
    same values read, the same cycles, the same L1."""
    runs = []
    for pure in (False, True):
        env = dict(os.environ)
        env.pop("TENSIXSIM_PURE_PYTHON", None)
        if pure:
            env["TENSIXSIM_PURE_PYTHON"] = "1"
        images = [line.hex(), assemble(reader, base=0).hex(), assemble(WRITER_AT_3000, base=0x12000).hex()]
        out = subprocess.run(
            [sys.executable, "-c", _TWO_CORES],
            input=json.dumps(images),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout))
    native, python = runs
    assert native["native"] and not python["native"]
    assert {k: v for k, v in native.items() if k != "native"} == {
        k: v for k, v in python.items() if k != "native"
    }
