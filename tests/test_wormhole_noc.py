"""Wormhole B0 NoC requests from a BRISC program, checked against values worked by hand.

The register offsets, field layouts and counter indices below are typed from WormholeB0/NoC/
MemoryMap.md, Counters.md, Atomics.md and Coordinates.md (and tt-metal's wormhole noc_parameters.h
for what the pages leave out), not read from tensixsim: initiators 0x400 apart, ten fields, the 36-bit
address in ``*_ADDR_LO`` and the low 4 bits of ``*_ADDR_MID``, X at bit 4 and Y at bit 10 of MID,
``NOC_CMD_CTRL`` at +0x28, 32-byte flits, at most 8192 bytes per packet.
"""

from __future__ import annotations

import numpy as np
import pytest
from asm import link

from tensixsim import MemoryFault, Tile, Unimplemented
from tensixsim.chip import Chip
from tensixsim.dram import InterleavedBuffer

NIU = (0xFFB20000, 0xFFB30000)
INITIATOR = 0x400
TARG_LO, TARG_MID, RET_LO, RET_MID, PACKET_TAG, CTRL, AT_LEN_BE, AT_DATA = (
    0x00, 0x04, 0x0C, 0x10, 0x18, 0x1C, 0x20, 0x24,
)  # fmt: skip
CMD_CTRL = 0x28
CFG = 0x100  # NIU_CFG_0; X tables at 0x118, Y tables at 0x128
COUNTERS = 0x200
# Counters.md indices.
ATOMIC_RESP_RECEIVED, WR_ACK_RECEIVED, RD_RESP_RECEIVED, RD_DATA_WORD_RECEIVED, CMD_ACCEPTED = 0, 1, 2, 3, 4
NONPOSTED_WR_DATA_WORD_SENT, NONPOSTED_WR_REQ_SENT, POSTED_ATOMIC_SENT = 8, 10, 7
REQS_OUTSTANDING_0 = 16
SLV_POSTED_ATOMIC_RECEIVED, SLV_NONPOSTED_WR_REQ_RECEIVED = 55, 58
# NOC_CTRL (MemoryMap.md).
RD, AT, WR, WR_BE, WR_INLINE, RESP_MARKED = 0, 1, 2, 1 << 2, 1 << 3, 1 << 4
OWN = (1, 1)  # a lone Wormhole tile's NoC #0 position
WIDTH, HEIGHT = 10, 12
SRC, DST, DST2, FLAG, OUT = 0x40000, 0x60000, 0x80000, 0x100000, 0x100100


def mid(xy: tuple[int, int], high: int = 0) -> int:
    """A unicast ``*_ADDR_MID``: address bits 32..35, then X (6 bits) and Y (6 bits)."""
    return high | xy[0] << 4 | xy[1] << 10


def on_noc(noc: int, xy: tuple[int, int]) -> tuple[int, int]:
    """NoC #0 coordinates as NoC #1 names them (the opposite corner is NoC #1's origin)."""
    return xy if noc == 0 else (WIDTH - 1 - xy[0], HEIGHT - 1 - xy[1])


def request(noc: int, fields: dict[int, int], initiator: int = 0) -> str:
    base = NIU[noc] + initiator * INITIATOR
    lines = [f"li t0, 0x{base:x}"]
    for offset, value in fields.items():
        lines += [f"li t1, 0x{value:x}", f"sw t1, 0x{offset:x}(t0)"]
    lines += ["li t1, 1", f"sw t1, 0x{CMD_CTRL:x}(t0)"]
    return "\n".join(lines) + "\n"


def wait(address: int, value: int) -> str:
    """Poll the word at ``address`` until it holds ``value``."""
    return f"li t0, 0x{address:x}\nli t1, 0x{value:x}\n1: lw t2, 0(t0)\nbne t2, t1, 1b\n"


def counter(noc: int, index: int) -> int:
    return NIU[noc] + COUNTERS + 4 * index


def run(program: str, setup=None) -> Tile:
    tile = Tile("wormhole")
    tile.load_elf("brisc", link(program + "li a0, 0\necall\n", text=0, march="rv32im"))
    if setup is not None:
        setup(tile)
    result = tile.run(release=["brisc"], max_cycles=2_000_000)
    assert result.cores["brisc"].exit_code == 0
    return tile


def data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def read(tile: Tile, address: int, n: int) -> np.ndarray:
    return np.frombuffer(tile.read(address, n), np.uint8)


@pytest.mark.parametrize("noc", [0, 1])
def test_write_to_own_l1_is_acknowledged_and_counts_32_byte_flits(noc: int) -> None:
    payload = data(1000, 1)
    here = mid(on_noc(noc, OWN))
    fields = {TARG_LO: SRC, TARG_MID: here, RET_LO: DST, RET_MID: here, CTRL: WR | RESP_MARKED}
    program = request(noc, {**fields, AT_LEN_BE: 1000}) + wait(counter(noc, WR_ACK_RECEIVED), 1)
    tile = run(program, lambda t: t.write(SRC, payload))
    assert np.array_equal(read(tile, DST, 1000), payload)
    c = tile.noc.counters[noc]
    # ceil(1000 / 32) = 32 data flits; one packet; the acknowledgement brought REQS_OUTSTANDING(0) back.
    assert (c[CMD_ACCEPTED], c[NONPOSTED_WR_REQ_SENT], c[NONPOSTED_WR_DATA_WORD_SENT]) == (1, 1, 32)
    assert (c[REQS_OUTSTANDING_0], c[SLV_NONPOSTED_WR_REQ_RECEIVED]) == (0, 1)


def test_read_of_20000_bytes_is_three_packets_of_at_most_8192() -> None:
    payload = data(20000, 2)
    here = mid(on_noc(1, OWN))
    fields = {TARG_LO: SRC, TARG_MID: here, RET_LO: DST, RET_MID: here, CTRL: RD, AT_LEN_BE: 20000}
    program = request(1, fields) + wait(counter(1, RD_RESP_RECEIVED), 3)
    tile = run(program, lambda t: t.write(SRC, payload))
    assert np.array_equal(read(tile, DST, 20000), payload)
    # 8192 + 8192 + 3616 bytes: 256 + 256 + 113 flits of 32 bytes.
    assert tile.noc.counters[1, RD_DATA_WORD_RECEIVED] == 625
    assert tile.noc.counters[1, CMD_ACCEPTED] == 3


def test_dram_write_and_read_back_through_another_tile_of_the_group() -> None:
    # (0, 0) and (0, 1) are DRAM tiles of the same group (tt-umd's DRAM_CORES_NOC0, group D0); (5, 0)
    # is another group. Each group is 2 GiB: 0x7FFF_F000 is near its top.
    payload = data(1024, 3)
    here, top = mid(OWN), 0x7FFF_F000
    write = {TARG_LO: SRC, TARG_MID: here, RET_LO: top, RET_MID: mid((0, 0)), CTRL: WR | RESP_MARKED}
    back = {TARG_LO: top, TARG_MID: mid((0, 1)), RET_LO: DST, RET_MID: here, CTRL: RD}
    other = {TARG_LO: top, TARG_MID: mid((5, 0)), RET_LO: DST2, RET_MID: here, CTRL: RD}
    program = (
        request(0, {**write, AT_LEN_BE: 1024})
        + wait(counter(0, WR_ACK_RECEIVED), 1)
        + request(0, {**back, AT_LEN_BE: 1024})
        + wait(counter(0, RD_RESP_RECEIVED), 1)
        + request(0, {**other, AT_LEN_BE: 1024})
        + wait(counter(0, RD_RESP_RECEIVED), 2)
    )

    def setup(tile: Tile) -> None:
        tile.write(SRC, payload)
        tile.write(DST2, np.full(1024, 0x55, np.uint8))

    tile = run(program, setup)
    assert np.array_equal(read(tile, DST, 1024), payload)
    assert tile.noc.dram.read(0, top, 1024) == payload.tobytes()
    assert not read(tile, DST2, 1024).any()  # group D2 holds nothing there


def test_address_bits_32_to_35_come_from_mid() -> None:
    # The same DRAM address with MID's bit 0 set is 0x1_7FFF_F000: past the group's 2 GiB.
    fields = {TARG_LO: 0x7FFF_F000, TARG_MID: mid((0, 0), 1), RET_LO: DST, RET_MID: mid(OWN), CTRL: RD}
    tile = Tile("wormhole")
    tile.load_elf("brisc", link(request(0, {**fields, AT_LEN_BE: 64}) + "ecall\n", text=0, march="rv32im"))
    with pytest.raises(MemoryFault, match="0x17ffff000") as error:
        tile.run(release=["brisc"])
    assert error.value.core == "brisc" and not tile.noc.counters.any()


def test_inline_write_to_l1_writes_the_enabled_bytes_of_its_16_byte_line() -> None:
    # MemoryMap.md: byte i of the line at TARG & ~0xF takes byte i & 3 of NOC_AT_DATA when bit i or
    # bit 16 + i of NOC_AT_LEN_BE is set. Enables: bytes 4..7 (low half) and byte 9 (high half).
    enables = 0x00F0 | 1 << 16 + 9
    fields = {TARG_LO: DST + 6, TARG_MID: mid(OWN), CTRL: WR | WR_INLINE | RESP_MARKED}
    program = request(0, {**fields, AT_LEN_BE: enables, AT_DATA: 0xAABBCCDD}) + wait(
        counter(0, WR_ACK_RECEIVED), 1
    )
    tile = run(program, lambda t: t.write(DST, bytes(range(16))))
    expected = [0, 1, 2, 3, 0xDD, 0xCC, 0xBB, 0xAA, 8, 0xCC, 10, 11, 12, 13, 14, 15]
    assert list(read(tile, DST, 16)) == expected


def test_atomic_increment_returns_the_addressed_word_and_wraps_within_int_width() -> None:
    # Atomics.md: Ofs (bits 0..1) picks the word of the 16-byte line, IntWidth (bits 2..6) the bits
    # incremented, opcode 1 at bits 12..15; Result is the word at NOC_TARG_ADDR_LO itself.
    increment = 1 << 12 | 31 << 2 | 2
    narrow = 1 << 12 | 7 << 2 | 3  # an 8-bit increment of word 3
    here = mid(OWN)
    fields = {TARG_LO: FLAG, TARG_MID: here, RET_LO: OUT, RET_MID: here, CTRL: AT | RESP_MARKED}
    program = (
        request(0, {**fields, AT_LEN_BE: increment, AT_DATA: 5})
        + wait(counter(0, ATOMIC_RESP_RECEIVED), 1)
        + request(0, {**fields, AT_LEN_BE: narrow, AT_DATA: 1, RET_LO: OUT + 4})
        + wait(counter(0, ATOMIC_RESP_RECEIVED), 2)
    )
    tile = run(program, lambda t: t.write(FLAG, np.array([9, 0, 41, 0x1FF], np.uint32)))
    assert list(np.frombuffer(tile.read(FLAG, 16), np.uint32)) == [9, 0, 46, 0x100]
    assert list(np.frombuffer(tile.read(OUT, 8), np.uint32)) == [9, 9]


def test_translated_coordinates_are_written_back_into_mid() -> None:
    # Coordinates.md's firmware tables: translated X 18 -> NoC #0 X 1, translated Y 18 -> Y 1 (the
    # tile itself); 32 entries of 4 bits, eight per word, identity below 16.
    x_table = [*range(16), 0, 5, 1, 2, 3, 4, 6, 7, 8, 9, *([0] * 6)]
    y_table = [*range(16), 0, 6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, *([0] * 4)]
    words = [
        sum(e << 4 * i for i, e in enumerate(t[k : k + 8]))
        for t in (x_table, y_table)
        for k in (0, 8, 16, 24)
    ]
    setup = f"li t0, 0x{NIU[0]:x}\n" + "".join(
        f"li t1, 0x{w:x}\nsw t1, 0x{0x118 + 4 * i:x}(t0)\n" for i, w in enumerate(words)
    )
    setup += f"li t1, 0x{1 << 14:x}\nsw t1, 0x{CFG:x}(t0)\n"
    translated = mid((18, 18))
    fields = {TARG_LO: SRC, TARG_MID: translated, RET_LO: DST, RET_MID: translated, CTRL: WR | RESP_MARKED}
    program = setup + request(0, {**fields, AT_LEN_BE: 64}) + wait(counter(0, WR_ACK_RECEIVED), 1)
    program += f"li t0, 0x{NIU[0]:x}\nlw s1, 0x{TARG_MID:x}(t0)\nlw s2, 0x{RET_MID:x}(t0)\n"
    payload = data(64, 4)
    tile = run(program, lambda t: t.write(SRC, payload))
    assert np.array_equal(read(tile, DST, 64), payload)
    assert (tile.core("brisc").reg("s1"), tile.core("brisc").reg("s2")) == (mid(OWN), mid(OWN))


def test_byte_enable_write_covers_32_bytes() -> None:
    # MemoryMap.md: with NOC_CMD_WR_BE, at most 32 bytes from TARG & ~0xF to RET & ~0xF, one mask bit per
    # byte.
    mask = 0x8000_00F1
    here = mid(OWN)
    fields = {
        TARG_LO: SRC + 3,
        TARG_MID: here,
        RET_LO: DST + 5,
        RET_MID: here,
        CTRL: WR | WR_BE | RESP_MARKED,
    }
    program = request(0, {**fields, AT_LEN_BE: mask}) + wait(counter(0, WR_ACK_RECEIVED), 1)
    new = data(64, 5)

    def setup(tile: Tile) -> None:
        tile.write(SRC, new)
        tile.write(DST, np.zeros(64, np.uint8))

    tile = run(program, setup)
    expected = [new[i] if i < 32 and mask >> i & 1 else 0 for i in range(64)]
    assert list(read(tile, DST, 64)) == expected


def test_zaamo_atomics_are_blackholes_and_raise_on_wormhole() -> None:
    fields = {TARG_LO: FLAG, TARG_MID: mid(OWN), CTRL: AT, AT_LEN_BE: 0xA << 12 | 1 << 11 | 5 << 8}
    tile = Tile("wormhole")
    tile.load_elf("brisc", link(request(0, fields) + "ecall\n", text=0, march="rv32im"))
    with pytest.raises(Unimplemented, match=r"atomic opcode 0xa \(Zaamo") as error:
        tile.run(release=["brisc"])
    assert error.value.core == "brisc" and error.value.cycle is not None
    assert not tile.noc.counters.any()  # nothing was sent


def test_two_wormhole_tiles_exchange_data_through_the_chip() -> None:
    # A writes to B and counts B's flag up (posted atomic); B, seeing it, sends the data back to A and
    # counts A's flag up.
    a_xy, b_xy = (1, 1), (3, 2)
    payload = data(3000, 6)
    increment = 1 << 12 | 31 << 2
    a_program = (
        request(
            0,
            {
                TARG_LO: SRC,
                TARG_MID: mid(a_xy),
                RET_LO: DST,
                RET_MID: mid(b_xy),
                CTRL: WR | RESP_MARKED,
                AT_LEN_BE: 3000,
            },
        )
        + wait(counter(0, WR_ACK_RECEIVED), 1)
        + request(0, {TARG_LO: FLAG, TARG_MID: mid(b_xy), CTRL: AT, AT_LEN_BE: increment, AT_DATA: 1})
        + wait(FLAG, 1)
    )
    b_program = (
        wait(FLAG, 1)
        + request(
            1,
            {
                TARG_LO: DST,
                TARG_MID: mid(on_noc(1, b_xy)),
                RET_LO: DST2,
                RET_MID: mid(on_noc(1, a_xy)),
                CTRL: WR | RESP_MARKED,
                AT_LEN_BE: 3000,
            },
        )
        + wait(counter(1, WR_ACK_RECEIVED), 1)
        + request(
            1, {TARG_LO: FLAG, TARG_MID: mid(on_noc(1, a_xy)), CTRL: AT, AT_LEN_BE: increment, AT_DATA: 1}
        )
    )
    chip = Chip("wormhole")
    a, b = chip.tile(*a_xy), chip.tile(*b_xy)
    a.load_elf("brisc", link(a_program + "li a0, 0\necall\n", text=0, march="rv32im"))
    b.load_elf("brisc", link(b_program + "li a0, 0\necall\n", text=0, march="rv32im"))
    a.write(SRC, payload)
    result = chip.run(max_cycles=2_000_000)
    assert all(r.cores["brisc"].exit_code == 0 for r in result.tiles.values())
    assert np.array_equal(read(b, DST, 3000), payload)
    assert np.array_equal(read(a, DST2, 3000), payload)
    ca, cb = a.noc.counters, b.noc.counters
    # A: a write of ceil(3000 / 32) = 94 flits and a posted atomic on NoC #0; B's write arrived on NoC #1.
    assert (ca[0, NONPOSTED_WR_DATA_WORD_SENT], ca[0, POSTED_ATOMIC_SENT], ca[0, WR_ACK_RECEIVED]) == (
        94,
        1,
        1,
    )
    assert (ca[1, SLV_NONPOSTED_WR_REQ_RECEIVED], ca[1, SLV_POSTED_ATOMIC_RECEIVED]) == (1, 1)
    assert (cb[0, SLV_NONPOSTED_WR_REQ_RECEIVED], cb[0, SLV_POSTED_ATOMIC_RECEIVED]) == (1, 1)
    assert (cb[1, CMD_ACCEPTED], cb[1, WR_ACK_RECEIVED]) == (2, 1)
    # Both runs end at cycles that do not depend on the host.
    again = Chip("wormhole")
    for xy, program in ((a_xy, a_program), (b_xy, b_program)):
        again.tile(*xy).load_elf("brisc", link(program + "li a0, 0\necall\n", text=0, march="rv32im"))
    again.tile(*a_xy).write(SRC, payload)
    assert again.run(max_cycles=2_000_000).cycles == result.cycles


def test_interleaved_pages_go_round_twelve_banks_two_per_group_1_gib_apart() -> None:
    # tt-metal's wormhole_b0_80_arch.yaml: bank b is DRAM view b, on channel b // 2 at offset
    # (b % 2) GiB; pages of 1000 bytes sit 1024 bytes apart in a bank (32-byte alignment).
    dram = Tile("wormhole").noc.dram
    payload = data(30 * 1000, 7).tobytes()
    InterleavedBuffer(0x1000, 1000, 30, 12, 32).write(dram, payload)
    assert dram.read(0, 0x1000 + 1024 + (1 << 30), 1000) == payload[13000:14000]  # page 13: bank 1, row 1
    assert dram.read(2, 0x1000, 1000) == payload[4000:5000]  # page 4: bank 4, group 2, offset 0
    assert dram.read(1, 0x1000 + 2048 + (1 << 30), 1000) == payload[27000:28000]  # page 27: bank 3, row 2


def test_inline_write_to_mmio_stores_the_word() -> None:
    # PERF_CNT_INSTRN_THREAD0 (tensix.h, 0xFFB12000) holds what is written; NOC_AT_LEN_BE is ignored.
    fields = {TARG_LO: 0xFFB12000, TARG_MID: mid(OWN), CTRL: WR | WR_INLINE | RESP_MARKED, AT_DATA: 0x1234567}
    program = request(0, fields) + wait(counter(0, WR_ACK_RECEIVED), 1)
    program += "li t0, 0xFFB12000\nlw s1, 0(t0)\n"
    assert run(program).core("brisc").reg("s1") == 0x1234567


def test_a_multicast_write_reaches_every_tile_of_its_rectangle_and_each_acknowledges() -> None:
    # MemoryMap.md: a broadcast's MID holds EndX, EndY, StartX, StartY from bit 4; (2, 1)..(3, 2) is four
    # Tensix tiles, the sender (1, 1) outside it.
    rectangle = 3 << 4 | 2 << 10 | 2 << 16 | 1 << 22
    broadcast = 1 << 5
    fields = {TARG_LO: SRC, TARG_MID: mid(OWN), RET_LO: DST, RET_MID: rectangle, AT_LEN_BE: 256}
    program = request(0, {**fields, CTRL: WR | RESP_MARKED | broadcast}) + wait(
        counter(0, WR_ACK_RECEIVED), 4
    )
    chip = Chip("wormhole")
    sender = chip.tile(*OWN)
    sender.load_elf("brisc", link(program + "li a0, 0\necall\n", text=0, march="rv32im"))
    payload = data(256, 8)
    sender.write(SRC, payload)
    chip.run(max_cycles=1_000_000)
    receivers = [(2, 1), (3, 1), (2, 2), (3, 2)]
    assert sorted(chip.tiles) == sorted([OWN, *receivers], key=lambda xy: (xy[0], xy[1]))
    for xy in receivers:
        assert np.array_equal(read(chip.tile(*xy), DST, 256), payload)
        assert chip.tile(*xy).noc.counters[0, SLV_NONPOSTED_WR_REQ_RECEIVED] == 1
    assert not read(sender, DST, 256).any()


@pytest.mark.parametrize("write", [False, True])
def test_each_gddr6_channel_of_a_group_has_a_controller_of_its_own(write: bool) -> None:
    # DRAMTile/README.md: a group of three DRAM tiles holds two 1 GiB GDDR6 channels, each measured at
    # 22.3 GB/s read and 21.9 GB/s written (at 1 GHz: bytes a cycle). Four 8 KiB accesses of group D0
    # issued back to back: all in its first GiB, they queue for one controller; alternating between
    # its two GiB, each channel takes two.
    here = mid(OWN)

    def accesses(addresses: list[int]) -> str:
        program = ""
        for n, address in enumerate(addresses):
            if write:
                fields = {TARG_LO: SRC, TARG_MID: here, RET_LO: address, RET_MID: mid((0, 0))}
                fields |= {CTRL: WR | RESP_MARKED}
            else:
                fields = {TARG_LO: address, TARG_MID: mid((0, 0)), RET_LO: DST + 8192 * n, RET_MID: here}
                fields |= {CTRL: RD}
            program += request(0, {**fields, AT_LEN_BE: 8192}, initiator=n % 4)
        done = WR_ACK_RECEIVED if write else RD_RESP_RECEIVED
        return program + wait(counter(0, done), len(addresses))

    one = run(accesses([0, 0x2000, 0x4000, 0x6000])).result()
    two = run(accesses([0, 1 << 30, 0x2000, (1 << 30) + 0x2000])).result()
    rate = 21.9 if write else 22.3
    assert sorted(one.dram) == [0] and sorted(two.dram) == [0, 1]
    assert one.dram[0].accesses == 4 and two.dram[0].accesses == two.dram[1].accesses == 2
    # Each access holds its channel for its bytes at the measured rate (within 1%, a page's rounding).
    for use in (*one.dram.values(), *two.dram.values()):
        assert use.busy_cycles / use.accesses == pytest.approx(8192 / rate, rel=0.01)
    # One channel: the k-th access waits k turns less how far behind the first it arrived. Writes
    # leave one packet every 257 cycles (256 data flits of 32 bytes and a header, a flit a cycle);
    # reads are a header each, issued within a few dozen cycles of each other.
    hold = one.dram[0].busy_cycles // 4
    if write:
        assert one.dram[0].waited_cycles == (1 + 2 + 3) * (hold - 257)
    else:
        assert one.dram[0].waited_cycles > (1 + 2 + 3) * (hold - 100)
    assert two.dram[0].waited_cycles + two.dram[1].waited_cycles < one.dram[0].waited_cycles / 2


def _stream_reads(own: tuple[int, int], endpoint: tuple[int, int], base: int, packets: int) -> str:
    """BRISC reads ``packets`` of 8 KiB from DRAM at ``base`` on, through the DRAM tile at
    ``endpoint``, into a ring of eight 8 KiB slots at DST, back to back, then waits for them all."""
    start = NIU[0]
    return (
        f"li s0, 0\nli s1, {packets}\nli s2, 0x{base:x}\nli s3, 0x{DST:x}\nli t0, 0x{start:x}\n"
        "2:\n"
        f"1: lw t1, 0x{CMD_CTRL:x}(t0)\nbnez t1, 1b\n"
        "slli t2, s0, 13\nadd t1, s2, t2\n"
        f"sw t1, 0x{TARG_LO:x}(t0)\nli t1, 0x{mid(endpoint):x}\nsw t1, 0x{TARG_MID:x}(t0)\n"
        "andi t2, s0, 7\nslli t2, t2, 13\nadd t1, s3, t2\n"
        f"sw t1, 0x{RET_LO:x}(t0)\nli t1, 0x{mid(own):x}\nsw t1, 0x{RET_MID:x}(t0)\n"
        f"li t1, {RD}\nsw t1, 0x{CTRL:x}(t0)\nli t1, 8192\nsw t1, 0x{AT_LEN_BE:x}(t0)\n"
        f"li t1, 1\nsw t1, 0x{CMD_CTRL:x}(t0)\naddi s0, s0, 1\nblt s0, s1, 2b\n"
        + wait(counter(0, RD_RESP_RECEIVED), packets)
    )


@pytest.mark.parametrize("spread", [False, True])
def test_tiles_streaming_dram_get_the_channel_rate_wormholes_page_measures(spread: bool) -> None:
    # DRAMTile/README.md, "Performance": one tile reading 1 MiB from one channel moves 22.2 GB/s (at
    # 1 GHz, bytes a cycle); twelve tiles each reading 1 MiB from a channel of its own, paired with
    # care (each next to its channel's DRAM tile, so no two share a link), move 265.5 GB/s in all.
    # Each tile here sits one hop east of its channel's endpoint (tt-metal's preferred one, NoC #0).
    from tensixsim.arch import get_arch

    banks = get_arch("wormhole").noc.dram_banks  # (group, endpoint, offset in the group)
    chosen = banks if spread else banks[:1]
    chip = Chip("wormhole")
    packets = 128  # 1 MiB
    for _, (x, y), offset in chosen:
        own = (x + 1, y)
        program = _stream_reads(own, (x, y), offset, packets)
        chip.tile(*own).load_elf("brisc", link(program + "li a0, 0\necall\n", text=0, march="rv32im"))
    result = chip.run(max_cycles=2_000_000)
    assert all(r.cores["brisc"].exit_code == 0 for r in result.tiles.values())
    moved = len(chosen) * packets * 8192 / result.cycles
    assert moved == pytest.approx(265.5 if spread else 22.2, rel=0.10)
    # Every channel served its own tile's 128 reads, and none waited for another tile's.
    assert sorted(result.dram) == list(range(len(chosen)))
    assert all(use.accesses == packets for use in result.dram.values())
