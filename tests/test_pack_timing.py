"""PACR timing: the packer is a pipeline the issuing thread waits on only until it accepts the work.

Packers/README.md: "the issuing Tensix thread will be blocked until the packers referenced by the
instruction have accepted the work"; STALLWAIT waits for them to have finished it. The packer takes
the next PACR once it has written the previous one's L1 bytes (timing.PACK: 32 bytes a cycle on
Blackhole), so a run of one-row PACRs of BF16 (32 bytes) issues one a cycle and of FP32 (64 bytes)
one every two; the packer stays busy ``PACK.drain_cycles`` after its last write slot, for STALLWAIT
C3, FLUSHDMA and the done check. The schedules below are worked by hand from those rules, on both
engines.
"""

from __future__ import annotations

import pytest
from test_e2e_raw import Trace, run_three
from test_pack import apply, base_config
from test_unpack_timing import D, word

from tensixsim import raw
from tensixsim.tensix import native
from tensixsim.tensix.adc import PACKERS
from tensixsim.tensix.formats import BF16, FP32
from tensixsim.tensix.pack.stream import STREAM_DRAINED
from tensixsim.tensix.sync import B0
from tensixsim.tile import Tile
from tensixsim.timing import PACK

ENGINES = ["python"] + (["native"] if native.available() else [])
PACK_THREAD, OTHER_THREAD = 0, 1
C3 = 1 << 3  # STALLWAIT: the packer busy
ROW_BYTES = {BF16: 32, FP32: 64}  # one 16-datum Dst row packed


def packing_tile(monkeypatch: pytest.MonkeyPatch, engine: str, out: int) -> Tile:
    """A tile whose packer takes one FP32 Dst row of 16 datums a PACR into L1 as ``out``."""
    monkeypatch.setenv("TENSIXSIM_ENGINE", engine)
    tile = Tile("blackhole")
    assert tile.backend.engine == engine
    apply(base_config(out=out), tile.coprocessor)
    tile.coprocessor.adc.value[PACK_THREAD, PACKERS, 1, 0] = 15  # X end: 16 datums
    return tile


def pacr(tile: Tile) -> int:
    return word(tile, "PACR", read_intf_sel=1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out", [BF16, FP32])
def test_a_run_of_pacrs_issues_at_the_l1_write_rate_and_drains_after(monkeypatch, engine, out):
    tile = packing_tile(monkeypatch, engine, out)
    trace = Trace(tile)
    writes = ROW_BYTES[out] // PACK.l1_bytes_per_cycle  # 1 (BF16) or 2 (FP32): no address cycle added
    done = raw.run_words(tile, PACK_THREAD, [pacr(tile)] * 8)
    first = 1 + D
    assert trace.cycles(PACK_THREAD, "PACR") == [first + k * writes for k in range(8)]
    last_write_slot_end = first + 8 * writes
    assert tile.coprocessor.packer.stream[STREAM_DRAINED] == last_write_slot_end + PACK.drain_cycles
    assert done == last_write_slot_end + PACK.drain_cycles  # the done check waits for the drain


@pytest.mark.parametrize("engine", ENGINES)
def test_stallwait_on_the_packer_waits_for_the_drain(monkeypatch, engine):
    tile = packing_tile(monkeypatch, engine, BF16)
    trace = Trace(tile)
    stallwait = word(tile, "STALLWAIT", stall_res=B0, wait_res=C3)
    run_three(
        tile,
        {PACK_THREAD: [pacr(tile)] * 4, OTHER_THREAD: [stallwait, word(tile, "NOP")], 2: [word(tile, "NOP")]},
    )
    drained = 1 + D + 4 + PACK.drain_cycles
    # The wait gate sees the previous cycle's state: the NOP goes the cycle after the drain.
    assert trace.cycles(OTHER_THREAD, "NOP") == [drained + 1]
    # A pipe that issued no PACR is not held by the packer's drain.
    assert tile.backend.pipes[2].done_cycle == 1 + D + 1


@pytest.mark.parametrize("engine", ENGINES)
def test_flushdma_on_the_packer_waits_for_the_drain(monkeypatch, engine):
    tile = packing_tile(monkeypatch, engine, FP32)
    trace = Trace(tile)
    raw.run_words(tile, PACK_THREAD, [pacr(tile)] * 3, cycle=0)
    drained = 1 + D + 3 * 2 + PACK.drain_cycles
    raw.run_words(tile, OTHER_THREAD, [word(tile, "FLUSHDMA", flush_spec=C3), word(tile, "DMANOP")], cycle=0)
    (flush,) = trace.cycles(OTHER_THREAD, "FLUSHDMA")
    assert flush < drained  # it issues at once and holds its unit until the packer has drained
    assert trace.cycles(OTHER_THREAD, "DMANOP") == [drained]
