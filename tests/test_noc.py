"""NoC requests from a core, checked against a small model written from BlackholeA0/NoC/*.md.

One fixed BRISC program (assembled once) issues the requests described by a table in L1 and then
polls the NIU counters for the values the table says they reach; hypothesis varies the table. The
model below computes final memory and counters from the pages' functional descriptions (Counters.md
lists, MemoryMap.md field tables, Atomics.md pseudocode), with plain Python bytes and ints.
"""

from __future__ import annotations

import random
import struct

import pytest
from asm import assemble
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.noc import NoEndpoint
from tensixsim.timing import RISCV

NIU = (0xFFB20000, 0xFFB30000)
TABLE = 0x20000  # request records: count, then 16 words each
WAITS = 0x28000  # (address, expected) pairs the program polls until equal
SRC = 0x40000  # L1 source data
SRC_SIZE = 0x10000
DST = 0x60000  # L1 destinations, handed out without overlap
SEMS = 0x100000  # atomic targets, 16 bytes apart
RET = 0x101000  # atomic results
OWN = (1, 2)  # NoC #0 position of the tile (the default)
WIDTH, HEIGHT = 17, 12

PROGRAM = f"""
    li s0, {TABLE}
    lw s1, 0(s0)
    addi s0, s0, 16
1:  beqz s1, 3f
    lw t0, 0(s0)
    addi t1, s0, 4
    li t2, 12
2:  lw t3, 0(t1)
    sw t3, 0(t0)
    addi t0, t0, 4
    addi t1, t1, 4
    addi t2, t2, -1
    bnez t2, 2b
    lw t0, 0(s0)
    li t3, 1
    sw t3, 0x40(t0)
    addi s0, s0, 64
    addi s1, s1, -1
    j 1b
3:  li s0, {WAITS}
    lw s1, 0(s0)
    addi s0, s0, 4
4:  beqz s1, 6f
    lw t0, 0(s0)
    lw t1, 4(s0)
5:  lw t2, 0(t0)
    bne t2, t1, 5b
    addi s0, s0, 8
    addi s1, s1, -1
    j 4b
6:  ecall
"""

# Counter indices, Counters.md.
C = {
    name: i
    for i, name in enumerate(
        [
            "ATOMIC_RESP_RECEIVED",
            "WR_ACK_RECEIVED",
            "RD_RESP_RECEIVED",
            "RD_DATA_WORD_RECEIVED",
            "CMD_ACCEPTED",
            "RD_REQ_SENT",
            "NONPOSTED_ATOMIC_SENT",
            "POSTED_ATOMIC_SENT",
            "NONPOSTED_WR_DATA_WORD_SENT",
            "POSTED_WR_DATA_WORD_SENT",
            "NONPOSTED_WR_REQ_SENT",
            "POSTED_WR_REQ_SENT",
            "NONPOSTED_WR_REQ_STARTED",
            "POSTED_WR_REQ_STARTED",
            "RD_REQ_STARTED",
            "NONPOSTED_ATOMIC_STARTED",
        ]
    )
}
SLV = {
    name: 48 + i
    for i, name in enumerate(
        [
            "ATOMIC_RESP_SENT",
            "WR_ACK_SENT",
            "RD_RESP_SENT",
            "RD_DATA_WORD_SENT",
            "REQ_ACCEPTED",
            "RD_REQ_RECEIVED",
            "NONPOSTED_ATOMIC_RECEIVED",
            "POSTED_ATOMIC_RECEIVED",
            "NONPOSTED_WR_DATA_WORD_RECEIVED",
            "POSTED_WR_DATA_WORD_RECEIVED",
            "NONPOSTED_WR_REQ_RECEIVED",
            "POSTED_WR_REQ_RECEIVED",
            "NONPOSTED_WR_REQ_STARTED",
            "POSTED_WR_REQ_STARTED",
        ]
    )
}


def on_noc(noc: int, xy: tuple[int, int]) -> tuple[int, int]:
    """NoC #0 coordinates as NoC #1 sees them (Coordinates.md: NoC #1 counts from the far corner)."""
    return xy if noc == 0 else (WIDTH - 1 - xy[0], HEIGHT - 1 - xy[1])


def hi(noc: int, xy: tuple[int, int]) -> int:
    x, y = on_noc(noc, xy)
    return x | y << 6


# DRAM group -> NoC #0 coordinates of one of its tiles (the NoC #0 map: D0 at column 0 row 0, ...).
DRAM_TILE = {0: (0, 0), 1: (0, 2), 2: (0, 4), 3: (0, 5), 4: (9, 0), 5: (9, 2), 6: (9, 4), 7: (9, 5)}


def flits(n: int) -> int:
    return max(1, -(-n // 64))


class Model:
    """Final memory and counters after a list of non-overlapping requests."""

    def __init__(self, l1: bytearray) -> None:
        self.l1 = l1
        self.dram: dict[tuple[int, int], int] = {}  # (group, address) -> byte
        self.counters = [[0] * 64 for _ in range(2)]

    def add(self, noc: int, **changes: int) -> None:
        for name, delta in changes.items():
            slv = name.startswith("SLV_")
            index = SLV[name[4:]] if slv else C[name]
            self.counters[noc][index] = (self.counters[noc][index] + delta) & 0xFFFFFFFF

    def read(self, noc: int, source: tuple, size: int, dst: int) -> None:
        kind, where, address = source
        for i in range(size):
            self.l1[dst + i] = (
                self.l1[address + i] if kind == "l1" else self.dram.get((where, address + i), 0)
            )
        packets = -(-size // 16384)
        words = sum(flits(min(16384, size - k)) for k in range(0, size, 16384))
        self.add(noc, CMD_ACCEPTED=packets, RD_REQ_STARTED=packets, RD_REQ_SENT=packets)
        self.add(noc, RD_RESP_RECEIVED=packets, RD_DATA_WORD_RECEIVED=words)
        if kind == "l1":
            self.add(noc, SLV_REQ_ACCEPTED=packets, SLV_RD_REQ_RECEIVED=packets)
            self.add(noc, SLV_RD_RESP_SENT=packets, SLV_RD_DATA_WORD_SENT=words)

    def write(self, noc: int, src: int, size: int, target: tuple, marked: bool) -> None:
        kind, where, address = target
        for i in range(size):
            if kind == "l1":
                self.l1[address + i] = self.l1[src + i]
            else:
                self.dram[(where, address + i)] = self.l1[src + i]
        pieces = [min(16384, size - k) for k in range(0, size, 16384)]
        p = "NONPOSTED" if marked else "POSTED"
        self.add(noc, CMD_ACCEPTED=len(pieces), **{f"{p}_WR_REQ_STARTED": len(pieces)})
        self.add(noc, **{f"{p}_WR_REQ_SENT": len(pieces), f"{p}_WR_DATA_WORD_SENT": sum(map(flits, pieces))})
        if marked:
            self.add(noc, WR_ACK_RECEIVED=len(pieces))
        if kind == "l1":
            self.add(noc, **{f"SLV_{p}_WR_REQ_STARTED": len(pieces), f"SLV_{p}_WR_REQ_RECEIVED": len(pieces)})
            self.add(noc, **{f"SLV_{p}_WR_DATA_WORD_RECEIVED": sum(map(flits, pieces))})
            if marked:
                self.add(noc, SLV_WR_ACK_SENT=len(pieces))

    def increment(self, noc: int, address: int, ofs: int, width: int, data: int, ret: int | None) -> None:
        (result,) = struct.unpack_from("<I", self.l1, address)
        where = (address & ~0xF) + ofs * 4
        (original,) = struct.unpack_from("<I", self.l1, where)
        mask = (2 << width) - 1
        struct.pack_into("<I", self.l1, where, ((original + data) & mask) | (original & ~mask & 0xFFFFFFFF))
        self.add(noc, CMD_ACCEPTED=1, SLV_REQ_ACCEPTED=1)
        if ret is None:
            self.add(noc, POSTED_ATOMIC_SENT=1, SLV_POSTED_ATOMIC_RECEIVED=1)
        else:
            self.add(noc, NONPOSTED_ATOMIC_STARTED=1, NONPOSTED_ATOMIC_SENT=1, ATOMIC_RESP_RECEIVED=1)
            self.add(noc, SLV_NONPOSTED_ATOMIC_RECEIVED=1, SLV_ATOMIC_RESP_SENT=1)
            struct.pack_into("<I", self.l1, ret, result)


# Requests as hypothesis draws them: (kind, noc, size, detail).
request = st.one_of(
    st.tuples(st.just("read_l1"), st.integers(0, 1), st.integers(1, 40000), st.integers(0, SRC_SIZE // 2)),
    st.tuples(st.just("read_dram"), st.integers(0, 1), st.integers(1, 20000), st.integers(0, 7)),
    st.tuples(st.just("write_l1"), st.integers(0, 1), st.integers(1, 20000), st.booleans()),
    st.tuples(st.just("write_dram"), st.integers(0, 1), st.integers(1, 20000), st.booleans()),
    st.tuples(st.just("increment"), st.integers(0, 1), st.integers(0, 31), st.integers(0, 0xFFFFFFFF)),
)


def run_requests(requests: list[tuple], seed: int) -> None:
    rng = random.Random(seed)
    tile = Tile("blackhole")
    init = bytes(rng.getrandbits(8) for _ in range(256)) * (SRC_SIZE // 256)
    tile.write(SRC, init)
    sems = bytes(rng.getrandbits(8) for _ in range(16 * 16))
    tile.write(SEMS, sems)
    dram_seed = {g: bytes(rng.getrandbits(8) for _ in range(64)) * 64 for g in range(8)}
    for g, data in dram_seed.items():
        tile.noc.dram.write(g, 0x1000, data)
    model = Model(bytearray(tile.l1.tobytes()))
    for g, data in dram_seed.items():
        for i, b in enumerate(data):
            model.dram[(g, 0x1000 + i)] = b
    records = []
    dst = DST
    dram_next = {g: 0x100000 for g in range(8)}
    sem = 0
    for n, (kind, noc, size, detail) in enumerate(requests):
        initiator = NIU[noc] + (n % 4) * 0x800
        f = [0] * 12
        if kind in ("read_l1", "read_dram"):
            if kind == "read_l1":
                source = ("l1", None, SRC + detail)
                f[0], f[2] = SRC + detail, hi(noc, OWN)
            else:
                size = min(size, len(dram_seed[detail]))
                source = ("dram", detail, 0x1000)
                f[0], f[2] = 0x1000, hi(noc, DRAM_TILE[detail])
            if dst + size > 0xE0000:
                continue
            f[3], f[5], f[7], f[8] = dst, hi(noc, OWN), 0, size
            f[6] = (n % 16) << 10
            model.read(noc, source, size, dst)
            dst += -(-size // 64) * 64
        elif kind in ("write_l1", "write_dram"):
            marked = detail
            src = SRC + rng.randrange(0, SRC_SIZE - size)
            if kind == "write_l1":
                if dst + size > 0xE0000:
                    continue
                target = ("l1", None, dst)
                f[5] = hi(noc, OWN)
                f[3] = dst
                dst += -(-size // 64) * 64
            else:
                group = rng.randrange(8)
                target = ("dram", group, dram_next[group])
                f[3], f[5] = dram_next[group], hi(noc, DRAM_TILE[group])
                dram_next[group] += -(-size // 64) * 64
            f[0], f[2], f[7], f[8] = src, hi(noc, OWN), 2 | (0x10 if marked else 0), size
            model.write(noc, src, size, target, marked)
        else:
            width, data = size, detail
            address = SEMS + 16 * (sem % 16) + 4 * (sem % 4)
            marked = sem % 2 == 0
            ret = RET + 4 * sem if marked else None
            f[0], f[2], f[10] = address, hi(noc, OWN), data
            f[8] = (sem % 4) | width << 2 | 1 << 12
            f[7] = 1 | (0x10 if marked else 0)
            if marked:
                f[3], f[5] = ret, hi(noc, OWN)
            model.increment(noc, address, sem % 4, width, data, ret)
            sem += 1
        records.append(struct.pack("<13I", initiator, *f) + bytes(12))
    tile.write(TABLE, struct.pack("<I", len(records)) + bytes(12) + b"".join(records))
    waits = []
    for noc in (0, 1):
        for name in ("RD_RESP_RECEIVED", "WR_ACK_RECEIVED", "ATOMIC_RESP_RECEIVED", "POSTED_WR_REQ_SENT"):
            waits.append((NIU[noc] + 0x200 + 4 * C[name], model.counters[noc][C[name]]))
    tile.write(WAITS, struct.pack("<I", len(waits)) + b"".join(struct.pack("<II", *w) for w in waits))
    tile.write(0, assemble(PROGRAM))
    tile.run(release=["brisc"], max_cycles=5_000_000)
    assert tile.l1[SRC:].tobytes() == bytes(model.l1[SRC:])  # below SRC: the program and its tables
    for (group, address), value in model.dram.items():
        assert tile.noc.dram.read(group, address, 1)[0] == value, (group, hex(address))
    for noc in (0, 1):
        got = [int(v) for v in tile.noc.counters[noc]]
        assert got[:16] == model.counters[noc][:16], noc
        assert got[48:62] == model.counters[noc][48:62], noc
        assert got[16:48] == [0] * 32  # every request finished: nothing outstanding or outgoing


@settings(max_examples=12, deadline=None)
@given(requests=st.lists(request, min_size=1, max_size=8), seed=st.integers(0, 1000))
def test_requests_match_the_model(requests, seed):
    run_requests(requests, seed)


@pytest.mark.parametrize("kind", ["read_l1", "read_dram", "write_l1", "write_dram", "increment"])
@pytest.mark.parametrize("noc", [0, 1])
def test_each_request_kind_on_each_noc(kind, noc):
    detail = {"read_l1": 100, "read_dram": 3, "write_l1": True, "write_dram": False, "increment": 7}[kind]
    size = 31 if kind == "increment" else 20000
    run_requests([(kind, noc, size, detail)], seed=1)


# ---------------------------------------------------------------- timing and polling


def issue_one(tile: Tile, noc: int, fields: dict[int, int], wait_counter: int, expected: int) -> int:
    """Issue one request from BRISC, poll ``wait_counter`` until ``expected``; the cycle it ended."""
    f = [0] * 12
    for k, v in fields.items():
        f[k] = v
    record = struct.pack("<13I", NIU[noc], *f) + bytes(12)
    tile.write(TABLE, struct.pack("<I", 1) + bytes(12) + record)
    tile.write(WAITS, struct.pack("<III", 1, NIU[noc] + 0x200 + 4 * wait_counter, expected))
    tile.write(0, assemble(PROGRAM))
    return tile.run(release=["brisc"]).cycles


def test_dram_reads_take_longer_than_loopback_and_grow_with_size():
    def cycles(source_hi: int, size: int) -> int:
        tile = Tile("blackhole")
        return issue_one(
            tile, 0, {0: 0x1000, 2: source_hi, 3: DST, 5: hi(0, OWN), 8: size}, C["RD_RESP_RECEIVED"], 1
        )

    loop_small, loop_big = cycles(hi(0, OWN), 64), cycles(hi(0, OWN), 8192)
    dram_small = cycles(hi(0, DRAM_TILE[0]), 64)
    assert loop_small < dram_small
    # One 64-byte flit per cycle at best, as seen by a poll loop that reads the counter once per
    # iteration (an MMIO read and a branch: timing.RISCV.mmio_read + 1 cycles), so up to one
    # iteration less.
    poll = RISCV.mmio_read + 1
    assert loop_big - loop_small >= (8192 - 64) // 64 - (poll - 1)


def test_the_program_really_waits_for_the_counter():
    # Expecting one more response than the request produces: the poll never ends.
    tile = Tile("blackhole")
    from tensixsim import Deadlock

    with pytest.raises(Deadlock):
        issue_one(tile, 0, {0: SRC, 2: hi(0, OWN), 3: DST, 5: hi(0, OWN), 8: 64}, C["RD_RESP_RECEIVED"], 2)


# ---------------------------------------------------------------- errors


def fail(fields: dict[int, int], noc: int = 0):
    tile = Tile("blackhole")
    f = [0] * 12
    for k, v in fields.items():
        f[k] = v
    record = struct.pack("<13I", NIU[noc], *f) + bytes(12)
    tile.write(TABLE, struct.pack("<I", 1) + bytes(12) + record)
    tile.write(WAITS, struct.pack("<I", 0))
    tile.write(0, assemble(PROGRAM))
    tile.run(release=["brisc"])
    return tile


def test_request_outside_the_grid_is_no_endpoint():
    with pytest.raises(NoEndpoint) as info:
        fail({0: 0, 2: 20 | 3 << 6, 3: DST, 5: hi(0, OWN), 8: 64})
    assert info.value.core == "brisc" and "(20, 3)" in str(info.value) and "read request" in str(info.value)


def test_request_to_another_tensix_tile_is_unimplemented():
    with pytest.raises(Unimplemented, match=r"\(3, 4\)"):
        fail({0: 0, 2: 3 | 4 << 6, 3: DST, 5: hi(0, OWN), 8: 64})


def test_inline_write_to_l1_is_undefined():
    with pytest.raises(UndefinedBehavior, match="inline write to L1"):
        fail({0: DST, 2: hi(0, OWN), 7: 2 | 8, 10: 5})


def test_read_past_l1_is_refused_before_anything_changes():
    with pytest.raises(Unimplemented, match="not L1"):
        fail({0: 0x17FFF0, 2: hi(0, OWN), 3: DST, 5: hi(0, OWN), 8: 64})


# ---------------------------------------------------------------- DRAM helpers


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 3), cols=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_tilize_places_faces_as_documented(rows, cols, seed):
    rng = random.Random(seed)
    h, w = 32 * rows, 32 * cols
    matrix = [[rng.getrandbits(16) for _ in range(w)] for _ in range(h)]
    import numpy as np

    flat = tilize(np.array(matrix, np.uint16))
    # Independent index formula: tile (tr, tc), face (fr, fc), row r, column c within the face.
    for i in range(0, h * w, 37):
        tile, inner = divmod(i, 1024)
        face, within = divmod(inner, 256)
        r, c = divmod(within, 16)
        tr, tc = divmod(tile, cols)
        fr, fc = divmod(face, 2)
        assert flat[i] == matrix[32 * tr + 16 * fr + r][32 * tc + 16 * fc + c]
    assert (untilize(flat, h, w) == np.array(matrix, np.uint16)).all()


@settings(max_examples=20, deadline=None)
@given(
    page=st.integers(1, 5000), pages=st.integers(1, 40), banks=st.integers(1, 8), base=st.integers(0, 1 << 20)
)
def test_interleaved_pages_go_round_robin(page, pages, banks, base):
    tile = Tile("blackhole")
    buffer = InterleavedBuffer(base, page, pages, banks)
    data = bytes(random.Random(page).getrandbits(8) for _ in range(page * pages))
    buffer.write(tile.noc.dram, data)
    assert buffer.read(tile.noc.dram) == data
    stride = -(-page // 64) * 64
    for p in range(pages):
        assert (
            tile.noc.dram.read(p % banks, base + (p // banks) * stride, page)
            == data[p * page : (p + 1) * page]
        )


# ---------------------------------------------------------------- coordinate translation

# The translation registers (MemoryMap.md, "NIU and NoC Router Configuration"): offsets from NIU_BASE.
TRANSLATION_REGS = {
    **{f"NOC_X_ID_TRANSLATE_TABLE_{i}": 0x118 + 4 * i for i in range(6)},
    **{f"NOC_Y_ID_TRANSLATE_TABLE_{i}": 0x130 + 4 * i for i in range(6)},
    "NOC_ID_TRANSLATE_COL_MASK": 0x150,
    "NOC_ID_TRANSLATE_ROW_MASK": 0x154,
    **{f"DDR_COORD_TRANSLATE_TABLE_{i}": 0x158 + 4 * i for i in range(6)},
    "DDR_COORD_TRANSLATE_COL_SWAP": 0x170,
}
NIU_CFG_0, NOC_ID_LOGICAL = 0x100, 0x148
TRANSLATE = 1 << 14  # NIU_CFG_0: coordinate translation enable


def table_entries(regs: dict[str, int], prefix: str) -> list[int]:
    """The 32 five-bit entries of a six-register table, low bits of each register first."""
    entries = []
    for i in range(6):
        word = regs[f"{prefix}_{i}"]
        for _ in range(6):
            entries.append(word & 31)
            word >>= 5
    return entries[:32]


def reference_translate(regs: dict[str, int], x: int, y: int) -> tuple[int, int]:
    """Coordinates.md, "Translation Algorithm": translated (x, y) -> raw NoC coordinates."""
    xs = table_entries(regs, "NOC_X_ID_TRANSLATE_TABLE")
    ys = table_entries(regs, "NOC_Y_ID_TRANSLATE_TABLE")
    ddr = table_entries(regs, "DDR_COORD_TRANSLATE_TABLE")
    ddr_x = []
    if regs["DDR_COORD_TRANSLATE_TABLE_5"] & (1 << 10):
        ddr_x.append(9)
    if regs["DDR_COORD_TRANSLATE_TABLE_5"] & (1 << 11):
        ddr_x.append(0)
    lx, ly = x % 32, y % 32
    if (regs["DDR_COORD_TRANSLATE_COL_SWAP"] & (1 << ly)) and (lx ^ 9) in ddr_x:
        new_x = lx ^ 9
    elif regs["NOC_ID_TRANSLATE_ROW_MASK"] & (1 << ly):
        new_x = x
    else:
        new_x = xs[lx]
    if lx in ddr_x:
        new_y = ddr[ly]
    elif regs["NOC_ID_TRANSLATE_COL_MASK"] & (1 << lx):
        new_y = y
    else:
        new_y = ys[ly]
    return new_x, new_y


def reference_hi(regs: dict[str, int], value: int, rectangle: bool) -> int:
    """A ``*_ADDR_HI`` value as the NIU uses it: (x, y) in bits 0..11 translated, and for a broadcast
    rectangle (StartX, StartY) in bits 12..23 too (MemoryMap.md); other bits kept."""
    corners = [0, 12] if rectangle else [0]
    for shift in corners:
        x, y = reference_translate(regs, (value >> shift) % 64, (value >> (shift + 6)) % 64)
        value = (value & ~(0xFFF << shift)) | (x << shift) | (y << (shift + 6))
    return value


# Register contents: the special values (nothing, everything, the DDR column flags) and anything.
register_word = st.one_of(
    st.sampled_from([0, 0xFFFFFFFF, 1 << 10, 1 << 11, 3 << 10]), st.integers(0, 0xFFFFFFFF)
)
translation_regs = st.fixed_dictionaries({name: register_word for name in TRANSLATION_REGS})


@settings(max_examples=25, deadline=None)
@given(
    regs=translation_regs,
    other=translation_regs,
    noc=st.integers(0, 1),
    his=st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=6),
)
def test_translation_matches_the_documented_algorithm(regs, other, noc, his):
    tile = Tile("blackhole")
    for n, values in ((noc, regs), (1 - noc, other)):  # each NIU has its own tables
        for name, offset in TRANSLATION_REGS.items():
            tile.noc.config[n, (offset - 0x100) // 4] = values[name]
    got = {(x, y): tile.noc.translate(noc, x, y) for x in range(64) for y in range(64)}
    want = {(x, y): reference_translate(regs, x, y) for x in range(64) for y in range(64)}
    assert got == want
    for value in his:
        assert tile.noc.translate_hi(noc, value, False) == reference_hi(regs, value, False)
        assert tile.noc.translate_hi(noc, value, True) == reference_hi(regs, value, True)


def store_words(stores: list[tuple[int, int]]) -> str:
    return "".join(f"li t0, {address}\n li t1, {value}\n sw t1, 0(t0)\n" for address, value in stores)


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_translation_registers_hold_what_the_core_writes(seed):
    rng = random.Random(seed)
    tile = Tile("blackhole")
    offsets = [NIU_CFG_0, NOC_ID_LOGICAL, *TRANSLATION_REGS.values()]
    values = {
        (noc, off): rng.getrandbits(32) | (TRANSLATE if off == NIU_CFG_0 else 0)
        for noc in (0, 1)
        for off in offsets
    }
    stores = store_words([(NIU[noc] + off, v) for (noc, off), v in values.items()])
    loads = "".join(
        f"li t0, {NIU[noc] + off}\n lw t1, 0(t0)\n li t2, {WAITS + 4 * k}\n sw t1, 0(t2)\n"
        for k, (noc, off) in enumerate(values)
    )
    tile.write(0, assemble(stores + loads + "ecall"))
    tile.run(release=["brisc"])
    got = struct.unpack_from(f"<{len(values)}I", tile.l1, WAITS)
    assert list(got) == list(values.values())
    # The words written through the bus are the ones translation uses.
    for noc in (0, 1):
        regs = {name: values[(noc, off)] for name, off in TRANSLATION_REGS.items()}
        for x, y in ((0, 0), (9, 3), (17, 30), (63, 41), (rng.randrange(64), rng.randrange(64))):
            assert tile.noc.translate(noc, x, y) == reference_translate(regs, x, y)


def set_entry(regs: dict[str, int], prefix: str, index: int, value: int) -> None:
    word, slot = divmod(index, 6)
    name = f"{prefix}_{word}"
    regs[name] = regs[name] & ~(31 << 5 * slot) | value << 5 * slot


def lead_to(regs: dict[str, int], translated: tuple[int, int], raw: tuple[int, int]) -> None:
    """Change ``regs`` so that the translated pair goes to ``raw`` (through the tables)."""
    tx, ty = translated[0] % 32, translated[1] % 32
    regs["DDR_COORD_TRANSLATE_COL_SWAP"] &= ~(1 << ty)
    regs["NOC_ID_TRANSLATE_ROW_MASK"] &= ~(1 << ty)
    set_entry(regs, "NOC_X_ID_TRANSLATE_TABLE", tx, raw[0])
    if reference_translate(regs, *translated)[1] != raw[1]:
        if tx in (0, 9) and regs["DDR_COORD_TRANSLATE_TABLE_5"] & (1 << (11 if tx == 0 else 10)):
            set_entry(regs, "DDR_COORD_TRANSLATE_TABLE", ty, raw[1])
        else:
            regs["NOC_ID_TRANSLATE_COL_MASK"] &= ~(1 << tx)
            set_entry(regs, "NOC_Y_ID_TRANSLATE_TABLE", ty, raw[1])


def hi_of(xy: tuple[int, int]) -> int:
    return xy[0] | xy[1] << 6


@settings(max_examples=6, deadline=None)
@given(data=st.data(), regs=translation_regs, noc=st.integers(0, 1), seed=st.integers(0, 1000))
def test_requests_with_translation_reach_the_translated_endpoints(data, regs, noc, seed):
    """Reads, writes and broadcasts through a core whose NIU translates, against the reference."""
    regs = dict(regs)
    own = on_noc(noc, OWN)
    dram_raw = {on_noc(noc, xy): group for group, xy in DRAM_TILE.items()}
    pair = st.tuples(st.integers(0, 63), st.integers(0, 63))
    lead_to(regs, data.draw(pair), own)
    lead_to(regs, data.draw(pair), data.draw(st.sampled_from(sorted(dram_raw))))
    mapped = {(x, y): reference_translate(regs, x, y) for x in range(64) for y in range(64)}
    to_own = sorted(p for p, r in mapped.items() if r == own)
    to_dram = sorted(p for p, r in mapped.items() if r in dram_raw)
    assume(to_own and to_dram)  # the second change can undo the first
    pick_own = st.sampled_from(to_own)
    pick_dram = st.sampled_from(to_dram)
    junk = st.integers(0, 0xFFFFF)  # bits 12..31 of a unicast HI field: reserved, kept, ignored

    def own_hi() -> int:
        return hi_of(data.draw(pick_own)) | data.draw(junk) << 12

    rng = random.Random(seed)
    tile = Tile("blackhole")
    src = bytes(rng.getrandbits(8) for _ in range(0x1000))
    tile.write(SRC, src)
    read_from = data.draw(pick_dram)
    read_group = dram_raw[mapped[read_from]]
    dram_data = bytes(rng.getrandbits(8) for _ in range(512))
    tile.noc.dram.write(read_group, 0x1000, dram_data)
    write_to = data.draw(pick_dram)
    write_group = dram_raw[mapped[write_to]]
    sems = bytes(rng.getrandbits(8) for _ in range(16))
    tile.write(SEMS, sems)
    rect = hi_of(data.draw(pick_own)) | hi_of(data.draw(pick_own)) << 12  # EndX/EndY, StartX/StartY
    brcst, include = 1 << 5, 1 << 17
    requests = [  # (noc, {field: value}), fields as in REQUEST_FIELDS
        (noc, {0: SRC, 2: own_hi(), 3: DST, 5: own_hi(), 8: 256}),
        (noc, {0: 0x1000, 2: hi_of(read_from), 3: DST + 0x1000, 5: own_hi(), 8: 512}),
        (noc, {0: SRC + 0x800, 2: own_hi(), 3: 0x200000, 5: hi_of(write_to), 7: 2 | 0x10, 8: 300}),
        (
            noc,
            {
                0: SEMS,
                2: rect,
                3: RET,
                5: own_hi(),
                7: 1 | 0x10 | brcst | include,
                8: 31 << 2 | 1 << 12,
                10: 5,
            },
        ),
        (noc, {0: SRC + 0x400, 2: own_hi(), 3: DST + 0x2000, 5: rect, 7: 2 | brcst | include, 8: 128}),
        # The other NIU does not translate: raw coordinates, whatever its tables hold.
        (1 - noc, {0: SRC, 2: hi(1 - noc, OWN), 3: DST + 0x3000, 5: hi(1 - noc, OWN), 8: 64}),
    ]
    records = []
    for n, (on, fields) in enumerate(requests):
        f = [fields.get(k, 0) for k in range(12)]
        records.append(struct.pack("<13I", NIU[on] + (n % 4) * 0x800, *f) + bytes(12))
    tile.write(TABLE, struct.pack("<I", len(records)) + bytes(12) + b"".join(records))
    waits = [
        (NIU[noc] + 0x200 + 4 * C["RD_RESP_RECEIVED"], 2),
        (NIU[noc] + 0x200 + 4 * C["WR_ACK_RECEIVED"], 1),
        (NIU[noc] + 0x200 + 4 * C["ATOMIC_RESP_RECEIVED"], 1),
        (NIU[noc] + 0x200 + 4 * C["POSTED_WR_REQ_SENT"], 1),
        (NIU[1 - noc] + 0x200 + 4 * C["RD_RESP_RECEIVED"], 1),
    ]
    tile.write(WAITS, struct.pack("<I", len(waits)) + b"".join(struct.pack("<II", *w) for w in waits))
    other_tables = {name: rng.getrandbits(32) for name in TRANSLATION_REGS}
    config = [(NIU[noc] + TRANSLATION_REGS[name], v) for name, v in regs.items()]
    config += [(NIU[1 - noc] + TRANSLATION_REGS[name], v) for name, v in other_tables.items()]
    config += [(NIU[noc] + NIU_CFG_0, TRANSLATE)]
    # After the requests: every initiator's NOC_TARG_ADDR_HI and NOC_RET_ADDR_HI, on both NIUs.
    readback = "".join(
        f"li t0, {NIU[on] + i * 0x800 + off}\n lw t1, 0(t0)\n li t2, {0x29000 + 4 * k}\n sw t1, 0(t2)\n"
        for k, (on, i, off) in enumerate((on, i, off) for on in (0, 1) for i in range(4) for off in (8, 0x14))
    )
    tile.write(0, assemble(store_words(config) + PROGRAM.replace("6:  ecall", "6:\n" + readback + "ecall")))
    tile.run(release=["brisc"], max_cycles=2_000_000)

    l1 = tile.l1.tobytes()
    assert l1[DST : DST + 256] == src[:256]
    assert l1[DST + 0x1000 : DST + 0x1200] == dram_data
    assert tile.noc.dram.read(write_group, 0x200000, 300) == src[0x800 : 0x800 + 300]
    (old,) = struct.unpack_from("<I", sems, 0)
    assert struct.unpack_from("<II", l1, SEMS)[0] == (old + 5) & 0xFFFFFFFF
    assert struct.unpack_from("<I", l1, RET)[0] == old
    assert l1[DST + 0x2000 : DST + 0x2080] == src[0x400:0x480]
    assert l1[DST + 0x3000 : DST + 0x3040] == src[:64]
    # Blackhole keeps what software wrote in the HI fields (Wormhole would write back the result).
    last = {}
    for n, (on, fields) in enumerate(requests):
        last[(on, n % 4)] = (fields.get(2, 0), fields.get(5, 0))
    got = struct.unpack_from("<16I", l1, 0x29000)
    for k, (on, i) in enumerate((on, i) for on in (0, 1) for i in range(4)):
        assert got[2 * k : 2 * k + 2] == last.get((on, i), (0, 0)), (on, i)


def test_translated_coordinates_outside_the_grid_name_both_values():
    tile = Tile("blackhole")
    config = [(NIU[0] + TRANSLATION_REGS[f"NOC_X_ID_TRANSLATE_TABLE_{i}"], 0xFFFFFFFF) for i in range(6)]
    config.append((NIU[0] + NIU_CFG_0, TRANSLATE))
    record = struct.pack("<13I", NIU[0], 0, 0, hi(0, OWN), DST, 0, hi(0, OWN), 0, 0, 64, 0, 0, 0) + bytes(12)
    tile.write(TABLE, struct.pack("<I", 1) + bytes(12) + record)
    tile.write(WAITS, struct.pack("<I", 0))
    tile.write(0, assemble(store_words(config) + PROGRAM))
    with pytest.raises(NoEndpoint) as info:
        tile.run(release=["brisc"])
    message = str(info.value)
    assert f"NOC_TARG_ADDR_HI=0x{hi(0, OWN):x}" in message  # what software wrote
    assert "(31, " in message and "translated" in message  # where the table sent it
    assert tile.noc.requests[0, 0, 2] == hi(0, OWN)
