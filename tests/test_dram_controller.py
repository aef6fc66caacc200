"""A DRAM bank's controller (NocTiming.dram_hold): the accesses reaching one bank are served one after
another, first come first served, on a lone tile (its NIU keeps the controllers) and on a chip (the
routers do, so the order never depends on the chip's windows)."""

from __future__ import annotations

import struct

import pytest
from asm import assemble
from test_noc import DRAM_TILE, DST, NIU, PROGRAM, SRC, TABLE, WAITS, C, hi

from tensixsim import Tile
from tensixsim.chip import Chip, ChipResult
from tensixsim.results import DramBankUse, RunResult
from tensixsim.sdk.calibration.case import RESULTS
from tensixsim.sdk.calibration.harness import build_case, run_case
from tensixsim.sdk.calibration.noc import DRAM_PAGE, DRAM_PAGES, bench_group, dram_case
from tensixsim.timing import NOC, RISCV

SIZE = 16384  # one packet
DRAM_AT = 0x100000


def _load(tile: Tile, kind: str, groups: list[int], nocs: tuple[int, ...] = (0, 1)) -> None:
    """BRISC's program: a 16 KiB read (or acknowledged write) to each of ``groups`` in turn, on each of
    ``nocs`` in turn (alternating, the NIUs' own links do not bind), then a poll until all are done."""
    own = tile.noc.position
    records = []
    issued = [0, 0]  # per NoC
    for n, group in enumerate(groups):
        noc = nocs[n % len(nocs)]
        issued[noc] += 1
        far = hi(noc, DRAM_TILE[group])
        f = [0] * 12
        if kind == "read":
            f[0], f[2], f[3], f[5], f[8] = 0x1000, far, DST + SIZE * n, hi(noc, own), SIZE
        else:
            f[0], f[2], f[3], f[5], f[7], f[8] = SRC, hi(noc, own), DRAM_AT + SIZE * n, far, 2 | 0x10, SIZE
        records.append(struct.pack("<13I", NIU[noc] + (n // 2 % 4) * 0x800, *f) + bytes(12))
    counter = C["RD_RESP_RECEIVED" if kind == "read" else "WR_ACK_RECEIVED"]
    waits = [(NIU[noc] + 0x200 + 4 * counter, issued[noc]) for noc in (0, 1)]
    tile.write(TABLE, struct.pack("<I", len(records)) + bytes(12) + b"".join(records))
    tile.write(WAITS, struct.pack("<I", len(waits)) + b"".join(struct.pack("<II", *w) for w in waits))
    tile.write(0, assemble(PROGRAM))


def _run(kind: str, groups: list[int]) -> RunResult:
    """``_load``'s program on a lone tile: how it ran."""
    tile = Tile("blackhole")
    _load(tile, kind, groups)
    return tile.run(release=["brisc"], max_cycles=1_000_000)


def _cycles(kind: str, groups: list[int]) -> int:
    return _run(kind, groups).cycles


@pytest.mark.parametrize("kind", ["read", "write"])
def test_one_banks_accesses_are_served_one_after_another(kind):
    hold = NOC.dram_hold(SIZE, kind == "write")
    assert hold == -(-SIZE * (NOC.dram_write_page if kind == "write" else NOC.dram_read_page) // 2048)
    # Four more accesses of one bank end four controller turns later (give or take the poll loop's
    # iteration: an MMIO read and a branch), whichever NoC each comes on.
    poll = RISCV.mmio_read + 1
    one_bank = _cycles(kind, [0] * 6) - _cycles(kind, [0] * 2)
    assert abs(one_bank - 4 * hold) < poll
    # The run says so: the bank took six accesses, busy a turn each, and they waited behind each
    # other (the program issues them faster than the controller takes them).
    use = _run(kind, [0] * 6).dram
    assert use.keys() == {0} and (use[0].accesses, use[0].busy_cycles) == (6, 6 * hold)
    assert use[0].waited_cycles > 5 * 4 * hold // 10
    # Spread over two banks (one per NoC), the same accesses end far sooner: the program's issue and
    # the NIUs' links bind, not a controller.
    two_banks = _cycles(kind, [0, 4] * 3) - _cycles(kind, [0, 4])
    assert two_banks < 0.6 * 4 * hold


def _bank_run(case, **chip) -> tuple[list[bytes], dict[int, DramBankUse]]:
    """``case`` on its tiles of a chip: each tile's timed cycles (raw), and the chip's DRAM banks."""
    elf = build_case(case, "brisc")
    sim = Chip("blackhole", **chip)
    for xy in case.senders:
        sim.tile(*xy).load_elf("brisc", elf)
    result = sim.run(max_cycles=10_000_000, release={xy: ("brisc",) for xy in case.senders})
    assert "dram bank" in result.summary()
    return [sim.tile(*xy).read(RESULTS, 8) for xy in case.senders], result.dram


@pytest.mark.parametrize("kind", ["read", "write"])
def test_tiles_sharing_a_bank_get_its_controllers_rate_at_every_quantum_and_window(kind):
    case = dram_case(kind, 1.0, direct=True, tiles=3)
    default, banks = _bank_run(case)
    assert _bank_run(case, quantum=100, window=5)[0] == default
    assert _bank_run(case, quantum=7)[0] == default
    # The run's summary shows the bank busy for every page, and the pages waiting for it.
    use = banks[bench_group(0)]
    page = NOC.dram_write_page if kind == "write" else NOC.dram_read_page
    assert (use.accesses, use.busy_cycles) == (3 * DRAM_PAGES, 3 * DRAM_PAGES * page)
    assert use.waited_cycles > 3 * DRAM_PAGES * page  # each asks about as often as the bank serves
    # Together they move a page per controller turn (their loops ask more), give or take the start
    # and the last responses: within 2%.
    longest = max(int.from_bytes(raw[:4], "little") for raw in default)
    rate = 3 * DRAM_PAGES * DRAM_PAGE / longest
    assert rate == pytest.approx(DRAM_PAGE / page, rel=0.02)


@pytest.mark.parametrize("kind", ["read", "write"])
def test_one_tile_of_a_chip_streams_as_a_lone_tile_does(kind):
    # Alone, its traffic waits for nothing in the fabric: the same cycles as without one.
    alone = run_case(dram_case(kind, 1.0, direct=True))
    assert run_case(dram_case(kind, 1.0, direct=True, tiles=1)).per_core == alone.per_core
    # And its bank's controller took its pages at the same turns.
    lone = Tile("blackhole")
    run_case(dram_case(kind, 1.0, direct=True), tile_factory=lambda: lone)
    _, banks = _bank_run(dram_case(kind, 1.0, direct=True, tiles=1))
    assert lone.result().dram == banks


@pytest.mark.parametrize("kind", ["read", "write"])
def test_a_chips_bank_serves_both_nocs_and_every_tile_through_one_controller(kind):
    # Two tiles, six accesses of bank 0 each, one tile on NoC #0 and the other on NoC #1: the bank
    # takes all twelve one after another, so the pair ends about six turns after either alone.
    hold = NOC.dram_hold(SIZE, kind == "write")

    def run(tiles: dict) -> ChipResult:
        sim = Chip("blackhole")
        for xy, noc in tiles.items():
            _load(sim.tile(*xy), kind, [0] * 6, (noc,))
        return sim.run(max_cycles=1_000_000, release={xy: ("brisc",) for xy in tiles})

    alone = [run({xy: noc}).cycles for xy, noc in (((1, 2), 0), ((2, 2), 1))]
    both = run({(1, 2): 0, (2, 2): 1})
    assert (both.dram[0].accesses, both.dram[0].busy_cycles) == (12, 12 * hold)
    assert both.cycles >= max(alone) + 5 * hold


@pytest.mark.parametrize("noc", [0, 1])
def test_the_spread_modes_cores_each_stream_their_own_bank(noc):
    # The bench's spread mode: its n-th core (column by column) works on bank n % 7, which the program
    # works out from its own coordinates on the NoC it uses. Seven tiles: each of the seven banks left
    # takes one tile's 512 pages, and none waits for another's (the card's fused-off bank takes none).
    case = dram_case("read", 1.0, tiles=7, spread=True, noc=noc)
    assert case.senders == tuple((1, y) for y in range(2, 9))
    default, banks = _bank_run(case)
    assert sorted(banks) == sorted(bench_group(bank) for bank in range(7))
    assert all(use.accesses == DRAM_PAGES and use.waited_cycles == 0 for use in banks.values())
    # Their responses share links, and the routers decide which goes first in cycle order.
    assert _bank_run(case, quantum=100, window=5)[0] == default


@pytest.mark.parametrize("kind", ["read", "write"])
def test_a_chip_tiles_packets_of_one_bank_end_when_a_lone_tiles_do(kind):
    # Eight 16 KiB packets of one bank, back to back: the controller (280 cycles a read packet) and
    # the tile's incoming port (257 flits a packet) are both busy. A response waits for the controller
    # in the chip's fabric, then for the port at its real arrival, as on a lone tile; taking the port's
    # turn at its unloaded arrival as well counted the wait twice (3,946 cycles where the lone tile
    # takes 2,980).
    lone = Tile("blackhole")
    _load(lone, kind, [0] * 8, nocs=(0,))
    alone = lone.run(release=["brisc"], max_cycles=1_000_000)
    chip = Chip("blackhole")
    _load(chip.tile(1, 2), kind, [0] * 8, nocs=(0,))
    together = chip.run(release={(1, 2): ("brisc",)}, max_cycles=1_000_000)
    assert together.cycles == alone.cycles
    assert together.dram == alone.dram
