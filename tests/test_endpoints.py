"""The ARC and Ethernet tiles of a Blackhole chip as NoC endpoints: what cores and hosts reach there.

References, written out here independently of tensixsim: the ARC registers tt-umd and the ARC
firmware name (tt-umd blackhole_implementation.hpp: the reset unit at 0x80030000 of the ARC tile,
SCRATCH_RAM[n] at +0x400 + 4n, ARC_FW_INT at +0x100 written with 0x10000; tt-zephyr-platforms
status_reg.h: SCRATCH_RAM[2] is the boot status, "done" when its low three bits read 5), the telemetry
table layout of tt-umd's ArcTelemetryReader (version, count, then tag | index << 16 per entry) and tag
numbers of tt-umd telemetry.hpp (AICLK 14, BOARD_ID_HIGH 1), the message-queue protocol of tt-umd's
BlackholeArcMessageQueue and the firmware's msgqueue.c, the Ethernet tile's 512 KiB L1 and SOFT_RESET
bits (tt-isa-documentation BlackholeA0 EthernetTile, ethdump.c), the chip clock (1350 MHz), and the
NoC latencies docs/chip.md works out (5 + 9 * hops + 5 each way, L1 read 5, L1 write 33).
"""

from __future__ import annotations

import ctypes
import datetime
import gc
import shutil

import numpy as np
import pytest
import rvenc
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim.chip import Chip
from tensixsim.endpoints.host import ChipHost
from tensixsim.errors import InvalidProgram, MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.noc.registers import (
    AT_DATA,
    AT_LEN_BE,
    CMD_AT,
    CMD_RD,
    CMD_RESP_MARKED,
    CMD_WR,
    CMD_WR_INLINE,
    CTRL,
    MST_RD_RESP_RECEIVED,
    MST_WR_ACK_RECEIVED,
    RET_HI,
    RET_LO,
    TARG_HI,
    TARG_LO,
)
from tensixsim.timing import NOC

ARC = (8, 0)
ETH = (3, 1)  # an Ethernet tile (NoC #0 row 1)
RESET_UNIT = 0x8003_0000
SCRATCH_RAM = RESET_UNIT + 0x400
ARC_FW_INT = RESET_UNIT + 0x100
ETH_L1 = 512 * 1024
ETH_SOFT_RESET = 0xFFB1_21B0
TAG_AICLK, TAG_BOARD_ID_HIGH = 14, 1
NIU0 = 0xFFB2_0000
NOC_CMD_CTRL, COUNTERS = 0x40, 0x200
DATA = 0x4000  # where the test programs put what they read


def xy(x: int, y: int) -> int:
    return x | y << 6


def words(data: bytes) -> list[int]:
    return [int(w) for w in np.frombuffer(data, np.uint32)]


# ---------------------------------------------------------------------------- a core's requests
def request(fields: dict[int, int | str]) -> list[str]:
    """Assembly writing NoC #0 initiator 0's request fields (t0 holds the NIU base; a field given as a
    register name is stored from that register), then NOC_CMD_CTRL."""
    lines = []
    for index in (TARG_LO, TARG_HI, RET_LO, RET_HI, CTRL, AT_LEN_BE, AT_DATA):
        value = fields.get(index, 0)
        if isinstance(value, str):
            lines.append(f"sw {value}, {4 * index}(t0)")
        else:
            lines += [f"li t1, {value}", f"sw t1, {4 * index}(t0)"]
    return [*lines, "li t1, 1", f"sw t1, {NOC_CMD_CTRL}(t0)"]


def wait_counter(index: int, at_least: int, label: str) -> list[str]:
    return [f"li t2, {at_least}", f"{label}:", f"lw t3, {COUNTERS + 4 * index}(t0)", f"bltu t3, t2, {label}"]


def run_program(chip: Chip, tile_xy: tuple[int, int], lines: list[str], max_cycles: int = 200_000) -> None:
    tile = chip.tile(*tile_xy)
    tile.write(0, rvenc.to_bytes(rvenc.assemble("\n".join([f"li t0, {NIU0}", *lines, "ecall"]))))
    chip.run(max_cycles=max_cycles, release={tile_xy: ("brisc",)})


def test_a_core_follows_the_arc_pointers_to_the_boot_status_and_telemetry() -> None:
    chip = Chip("blackhole")
    own = xy(1, 2)
    read = {TARG_HI: xy(*ARC), RET_HI: own, CTRL: CMD_RD}
    lines = [
        # SCRATCH_RAM[0..15] (64 bytes: boot status, message queue, telemetry pointers).
        *request({**read, TARG_LO: SCRATCH_RAM, RET_LO: DATA, AT_LEN_BE: 64}),
        *wait_counter(MST_RD_RESP_RECEIVED, 1, "first"),
        # The telemetry table at SCRATCH_RAM[13], then the values at SCRATCH_RAM[12], as tt-umd does.
        f"li a1, {DATA}",
        "lw a2, 52(a1)",  # SCRATCH_RAM[13]
        *request({**read, TARG_LO: "a2", RET_LO: DATA + 0x100, AT_LEN_BE: 256}),
        *wait_counter(MST_RD_RESP_RECEIVED, 2, "second"),
        "lw a2, 48(a1)",  # SCRATCH_RAM[12]
        *request({**read, TARG_LO: "a2", RET_LO: DATA + 0x200, AT_LEN_BE: 256}),
        *wait_counter(MST_RD_RESP_RECEIVED, 3, "third"),
    ]
    run_program(chip, (1, 2), lines)
    tile = chip.tile(1, 2)
    scratch = words(tile.read(DATA, 64))
    assert scratch[2] & 7 == 5  # boot done: message queue ready, hardware initialised
    table = words(tile.read(DATA + 0x100, 256))
    count = table[1]
    entries = {e & 0xFFFF: e >> 16 for e in table[2 : 2 + count]}
    values = words(tile.read(DATA + 0x200, 256))
    assert values[entries[TAG_AICLK]] == 1350
    assert values[entries[TAG_BOARD_ID_HIGH]] >> 4 == 0x40  # UPI of a p150 (board id bits 36..55)
    # Each request went out only as the previous response landed: three reads, nothing else.
    assert tile.noc.counters[0, MST_RD_RESP_RECEIVED] == 3


def test_an_arc_read_lands_after_the_documented_noc_latencies() -> None:
    chip = Chip("blackhole")
    a = chip.tile(1, 2)
    f = a.noc.requests[0, 0]
    f[TARG_LO], f[TARG_HI], f[RET_LO], f[RET_HI] = SCRATCH_RAM + 8, xy(*ARC), DATA, xy(1, 2)
    f[CTRL], f[AT_LEN_BE] = CMD_RD, 4
    a.noc.initiate(0, 0, 100)
    # Worked by hand: the header leaves at 101; NoC #0 goes right and down with wrap-around, so
    # (1, 2) -> (8, 0) is 7 + 10 hops and (8, 0) -> (1, 2) is 10 + 2. The ARC answers after
    # NOC.l1_read cycles (as an L1 read), the response's one data flit follows its header, and the data
    # are written into (1, 2)'s L1 (NOC.l1_write cycles) before the counter counts them.
    served = 101 + 5 + 9 * 17 + 5 + NOC.l1_read
    landed = served + 5 + 9 * 12 + 5 + 1 + NOC.l1_write
    a.noc.deliver(landed - 1)
    assert a.noc.counters[0, MST_RD_RESP_RECEIVED] == 0
    a.noc.deliver(landed)
    assert a.noc.counters[0, MST_RD_RESP_RECEIVED] == 1
    assert words(a.read(DATA, 4)) == [5]


@settings(max_examples=12, deadline=None)
@given(
    channel=st.sampled_from([(1, 1), (16, 1), (7, 1), (10, 1)]),
    offset=st.integers(0, ETH_L1 // 16 - 64).map(lambda n: n * 16),
    data=st.binary(min_size=4, max_size=1024).filter(lambda b: len(b) % 4 == 0),
)
def test_a_core_writes_then_reads_an_ethernet_l1(channel, offset, data) -> None:
    chip = Chip("blackhole")
    tile = chip.tile(4, 5)
    tile.write(DATA, data)
    own = xy(4, 5)
    lines = [
        *request({TARG_LO: DATA, TARG_HI: own, RET_LO: offset, RET_HI: xy(*channel)} | {
            CTRL: CMD_WR | CMD_RESP_MARKED, AT_LEN_BE: len(data)}),
        *wait_counter(MST_WR_ACK_RECEIVED, 1, "acked"),
        *request({TARG_LO: offset, TARG_HI: xy(*channel), RET_LO: DATA + 0x1000, RET_HI: own} | {
            CTRL: CMD_RD, AT_LEN_BE: len(data)}),
        *wait_counter(MST_RD_RESP_RECEIVED, 1, "read"),
    ]  # fmt: skip
    run_program(chip, (4, 5), lines)
    assert chip.endpoint(*channel).read(offset, len(data), 0) == data
    assert tile.read(DATA + 0x1000, len(data)) == data


def test_an_atomic_increment_acts_on_ethernet_l1_and_answers_the_old_value() -> None:
    chip = Chip("blackhole")
    eth = chip.endpoint(*ETH)
    eth.write(0x7CC00, np.array([41, 0, 0, 0], np.uint32).tobytes(), 0)
    a = chip.tile(1, 2)
    f = a.noc.requests[0, 0]
    increment = 1 << 12 | 31 << 2  # Atomics.md: opcode 1, IntWidth 31, Ofs 0
    f[TARG_LO], f[TARG_HI], f[RET_LO], f[RET_HI] = 0x7CC00, xy(*ETH), DATA, xy(1, 2)
    f[CTRL], f[AT_LEN_BE], f[AT_DATA] = CMD_AT | CMD_RESP_MARKED, increment, 2
    a.noc.initiate(0, 0, 0)
    a.noc.deliver(10_000)
    assert words(eth.read(0x7CC00, 4, 0)) == [43]
    assert words(a.read(DATA, 4)) == [41]


# ---------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    ("target", "address", "error", "words_"),
    [
        (ETH, ETH_L1, MemoryFault, "ethernet tile at (3, 1)"),  # just past L1
        (ETH, 0xFFB0_0000, MemoryFault, "ethernet tile at (3, 1)"),  # local data RAM: not on the NoC
        (ARC, 0x2000_0000, MemoryFault, "arc tile at (8, 0)"),  # nothing there
        (ARC, 0x8002_0100, Unimplemented, "APB register 0x80020100"),  # a PLL: documented, not modelled
        ((8, 2), 0, Unimplemented, "security tile"),
    ],
)
def test_a_write_outside_what_is_modelled_names_core_pc_cycle_and_coordinates(target, address, error, words_):
    chip = Chip("blackhole")
    own = xy(1, 2)
    fields = {TARG_LO: DATA, TARG_HI: own, RET_LO: address, RET_HI: xy(*target), CTRL: CMD_WR, AT_LEN_BE: 16}
    with pytest.raises(error) as caught:
        run_program(chip, (1, 2), request(fields))
    e = caught.value
    assert e.core == "brisc" and e.pc is not None and e.cycle is not None
    assert words_ in e.message and f"({target[0]}, {target[1]})" in e.message
    tile = chip.tile(1, 2)
    assert not tile.noc.counters.any() and not tile.noc.pending  # nothing was sent
    assert all(not ep.l1.any() for ep in chip.endpoints.values() if ep.l1 is not None)


def test_an_atomic_on_the_arc_and_an_inline_write_to_ethernet_l1_are_refused() -> None:
    chip = Chip("blackhole")
    a = chip.tile(1, 2)
    f = a.noc.requests[0, 0]
    f[TARG_LO], f[TARG_HI], f[CTRL], f[AT_LEN_BE] = 0x1000_0000, xy(*ARC), CMD_AT, 1 << 12
    with pytest.raises(InvalidProgram, match="atomic on the arc tile"):
        a.noc.initiate(0, 0, 0)
    f[TARG_LO], f[TARG_HI], f[CTRL], f[AT_LEN_BE] = 0x100, xy(*ETH), CMD_WR | CMD_WR_INLINE, 0xF
    with pytest.raises(UndefinedBehavior, match="inline write to L1"):  # unsafe on Blackhole, as on Tensix L1
        a.noc.initiate(0, 0, 0)
    assert not a.noc.pending


def test_releasing_an_ethernet_core_is_refused_and_keeping_them_held_is_stored() -> None:
    chip = Chip("blackhole")
    eth = chip.endpoint(*ETH)
    assert words(eth.read(ETH_SOFT_RESET, 4, 0)) == [0x1800]  # E0 (bit 11) and E1 (bit 12) held
    for value, names in ((0x1000, "erisc0"), (0x0800, "erisc1"), (0, "erisc0 and erisc1")):
        with pytest.raises(Unimplemented, match=f"would release {names} "):
            eth.write(ETH_SOFT_RESET, value.to_bytes(4, "little"), 0)
        assert words(eth.read(ETH_SOFT_RESET, 4, 0)) == [0x1800]
    eth.write(ETH_SOFT_RESET, (0x1800 | 1 << 18).to_bytes(4, "little"), 0)
    assert words(eth.read(ETH_SOFT_RESET, 4, 0)) == [0x1800 | 1 << 18]
    eth.write(0xFFB1_4000, (0x4000).to_bytes(4, "little"), 0)  # ERISC0's reset PC: storage
    assert words(eth.read(0xFFB1_4000, 4, 0)) == [0x4000]


# ---------------------------------------------------------------------------- ARC messages
def send(host: ChipHost, queue: int, request_words: list[int]) -> None:
    """tt-umd's BlackholeArcMessageQueue push: the entry, the write pointer, then ring the ARC."""
    info = words(host.read(ARC, SCRATCH_RAM + 4 * 11, 4))[0]
    base, sizes = words(host.read(ARC, info, 8))
    entries = sizes & 0xFF
    q = base + queue * (32 + 2 * entries * 32)
    wptr = words(host.read(ARC, q, 4))[0]
    padded = (request_words + [0] * 8)[:8]
    host.write(ARC, q + 32 + (wptr % entries) * 32, np.array(padded, np.uint32).tobytes())
    host.write(ARC, q, ((wptr + 1) % (2 * entries)).to_bytes(4, "little"))
    host.write(ARC, ARC_FW_INT, (0x10000).to_bytes(4, "little"))


def receive(host: ChipHost, queue: int) -> list[int]:
    """The response pop: the entry at the response read pointer (when the write pointer moved on)."""
    info = words(host.read(ARC, SCRATCH_RAM + 4 * 11, 4))[0]
    base, sizes = words(host.read(ARC, info, 8))
    entries = sizes & 0xFF
    q = base + queue * (32 + 2 * entries * 32)
    header = words(host.read(ARC, q, 32))
    rptr, wptr = header[1], header[5]
    assert rptr != wptr, "no response"
    response = words(host.read(ARC, q + 32 + (entries + rptr % entries) * 32, 32))
    host.write(ARC, q + 4, ((rptr + 1) % (2 * entries)).to_bytes(4, "little"))
    return response


def aiclk(host: ChipHost) -> int:
    table = words(host.read(ARC, SCRATCH_RAM + 4 * 13, 4))[0]
    values = words(host.read(ARC, SCRATCH_RAM + 4 * 12, 4))[0]
    count = words(host.read(ARC, table + 4, 4))[0]
    entries = {e & 0xFFFF: e >> 16 for e in words(host.read(ARC, table + 8, 4 * count))}
    return words(host.read(ARC, values + 4 * entries[TAG_AICLK], 4))[0]


def test_arc_messages_are_answered_as_the_firmware_answers_them() -> None:
    host = ChipHost()
    send(host, 3, [0x90, 41])  # TEST: argument + 1, then last serial + 1
    assert receive(host, 3)[:3] == [0, 42, 1]
    send(host, 3, [0x90, 7])
    assert receive(host, 3)[:3] == [0, 8, 2]
    send(host, 1, [0x77])  # no handler in the firmware
    assert receive(host, 1)[0] & 0xFF == 0xFF
    send(host, 3, [0x54])  # AICLK_GO_LONG_IDLE
    assert receive(host, 3)[0] == 0 and aiclk(host) == 800
    send(host, 3, [0x52])  # AICLK_GO_BUSY
    assert receive(host, 3)[0] == 0 and aiclk(host) == 1350
    assert words(host.read(ARC, ARC_FW_INT, 4)) == [0]  # the interrupt bits read back clear


def test_an_unmodelled_arc_message_is_refused_by_name_and_changes_nothing() -> None:
    host = ChipHost()
    arc = host.chip.endpoint(*ARC)
    with pytest.raises(Unimplemented, match=r"0xb6 \(TOGGLE_GDDR_RESET\)"):
        send(host, 3, [0xB6, 0])
    before = arc.csm.copy()
    with pytest.raises(Unimplemented, match="TOGGLE_GDDR_RESET"):  # still queued, still refused
        host.write(ARC, ARC_FW_INT, (0x10000).to_bytes(4, "little"))
    assert np.array_equal(arc.csm, before)
    with pytest.raises(Unimplemented, match="soft_reset"):
        host.write(ARC, ARC_FW_INT, (1 << 12).to_bytes(4, "little"))


# ---------------------------------------------------------------------------- the host
MIB = 1 << 20
BAR0 = 0x1_0000_0000


def test_the_host_reaches_arc_and_ethernet_through_a_tlb_window() -> None:
    host = ChipHost()
    # A 2 MiB window onto the ARC's reset unit: local offset (in windows) in bits 0..42, then x, y.
    config = RESET_UNIT // (2 * MIB) | 8 << 43 | 0 << 49
    for word in range(3):
        host.pcie.write(
            BAR0 + 0x1FC0_0000 + 4 * word, (config >> 32 * word & 0xFFFFFFFF).to_bytes(4, "little")
        )
    inside = RESET_UNIT % (2 * MIB) + 0x408
    assert words(host.pcie.read(BAR0 + inside, 4)) == [5]
    # Ethernet channel 2 at translated (22, 25) is NoC #0 (2, 1); window 1 onto its L1.
    config = 22 << 43 | 25 << 49
    for word in range(3):
        host.pcie.write(
            BAR0 + 0x1FC0_0000 + 12 + 4 * word, (config >> 32 * word & 0xFFFFFFFF).to_bytes(4, "little")
        )
    host.pcie.write(BAR0 + 2 * MIB + 0x7CC00, b"\x11\x22\x33\x44")
    assert host.chip.endpoint(2, 1).read(0x7CC00, 4, 0) == b"\x11\x22\x33\x44"
    with pytest.raises(MemoryFault):
        host.pcie.read(BAR0 + 2 * MIB + ETH_L1, 4)


needs_cc = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler"
)


@needs_cc
def test_the_simulator_library_serves_arc_and_ethernet(tmp_path) -> None:
    from tensixsim.simlib import bridge, write_simdir

    lib = ctypes.CDLL(str(write_simdir(tmp_path)))
    lib.libttsim_init()
    try:
        errors = len(bridge.errors)
        out = (ctypes.c_uint8 * 4)()
        lib.libttsim_tile_rd_bytes(8, 0, ctypes.c_uint64(SCRATCH_RAM + 8), out, 4)
        assert bytes(out) == (5).to_bytes(4, "little")
        data = (ctypes.c_uint8 * 8)(*range(1, 9))
        lib.libttsim_tile_wr_bytes(20, 25, ctypes.c_uint64(0x100), data, 8)  # Ethernet channel 0
        assert bridge.host.chip.endpoint(1, 1).read(0x100, 8, 0) == bytes(range(1, 9))
        assert bridge.errors[errors:] == []
        lib.libttsim_tile_rd_bytes(20, 25, ctypes.c_uint64(ETH_L1), out, 4)  # past L1: refused
        assert bytes(out) == b"\xff" * 4 and isinstance(bridge.errors[-1], MemoryFault)
    finally:
        lib.libttsim_exit()


@needs_cc
def test_tt_umd_opens_the_chip_and_reads_the_arc_telemetry(tmp_path) -> None:
    tt_umd = pytest.importorskip("tt_umd", reason="tt-umd is not installed (pip install 'tensixsim[tools]')")
    from tensixsim.simlib import bridge, write_simdir

    if not hasattr(tt_umd.TTSimTTDevice, "init_tt_device"):
        pytest.skip("this tt-umd's simulation device has no init_tt_device")
    device = tt_umd.TTSimTTDevice.create(str(write_simdir(tmp_path)))
    try:
        errors = len(bridge.errors)
        # What tt-umd does on a card: wait for the ARC's boot status, find its message queue and
        # telemetry, read the firmware version and the chip's identity.
        device.init_tt_device(datetime.timedelta(seconds=5))
        assert device.get_clock() == 1350
        telemetry = device.get_arc_telemetry_reader()
        assert telemetry.read_entry(int(tt_umd.TelemetryTag.AICLK)) == 1350
        assert not telemetry.is_entry_available(int(tt_umd.TelemetryTag.FLASH_BUNDLE_VERSION))
        assert device.get_board_type() == tt_umd.BoardType.P150
        masks = device.get_chip_info().harvesting_masks
        assert masks.tensix_harvesting_mask == 0 and masks.eth_harvesting_mask == 0x120
        assert device.arc_msg(0x90, True, [41], 1000)[:2] == (0, 42)  # TEST
        device.noc_write(20, 25, 0x200, b"\x5a" * 16)  # Ethernet channel 0, translated coordinates
        assert device.noc_read(20, 25, 0x200, 16) == b"\x5a" * 16
        assert bridge.errors[errors:] == []
    finally:
        del device
        gc.collect()
