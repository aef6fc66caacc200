"""NoC figures: requests to the own tile and to another Tensix tile, an atomic, a write stream, and
DRAM streams through the interleaved bank table."""

from __future__ import annotations

from tensixsim.arch import get_arch
from tensixsim.arch.blackhole_host import DRAM_BANKS as DRAM_PORTS
from tensixsim.sdk.calibration.case import ARCH, NOP, RING, Case, la, li

# --------------------------------------------------------------------------- NoC
# Requests through NIU #0 as the measured programs issue them: a read through request initiator 1,
# a write through initiator 0, an atomic through initiator 3; for each, wait until its NOC_CMD_CTRL
# reads 0, write the fields (CTRL: a static virtual channel, the response marked), write
# NOC_CMD_CTRL, count the request in a register (a4); a flush / barrier polls the NIU counter until
# it reaches that count, then fences. a6: this tile's coordinates; s0 the source, a2 = s0 + 0x400
# the destination; a3 the length.
NIU = 0xFFB20000
_NOC_SETUP = "lw a6, 0x44(s3)\nslli a6, a6, 20\nsrli a6, a6, 20\naddi a2, s0, 0x400"


def _ready(initiator: int, niu: int = NIU) -> str:
    return f"{li('t3', niu + 0x800 * initiator + 0x40)}\n3:\nlw t4, 0(t3)\nbne t4, zero, 3b"


def noc_read(coordinates: str = "a6", niu: int = NIU) -> str:
    """A read request through ``niu`` (NoC #0's by default)."""
    return (
        f"{_ready(1, niu)}\n{li('t3', niu + 0x800 + 0x1C)}\n{li('t4', 0x2090)}\nsw t4, 0(t3)\n"
        f"sw a2, -16(t3)\nsw zero, -12(t3)\nsw a6, -8(t3)\nsw s0, -28(t3)\nsw zero, -24(t3)\n"
        f"sw {coordinates}, -20(t3)\nsw a3, 4(t3)\nsw zero, 8(t3)\naddi t4, zero, 1\nsw t4, 36(t3)\n"
        "addi a4, a4, 1"
    )


def noc_write(coordinates: str = "a6", niu: int = NIU) -> str:
    """A write request through ``niu`` (NoC #0's by default)."""
    return (
        f"{_ready(0, niu)}\n{li('t3', niu + 0x1C)}\n{li('t4', 0x2092)}\nsw t4, 0(t3)\nsw s0, -28(t3)\n"
        f"sw a2, -16(t3)\nsw zero, -12(t3)\nsw {coordinates}, -8(t3)\nsw a3, 4(t3)\nsw zero, 8(t3)\n"
        "addi t4, zero, 1\nsw t4, 36(t3)\naddi a4, a4, 1"
    )


def noc_wait(counter: int, niu: int = NIU) -> str:
    return f"{li('t3', niu + 0x200 + 4 * counter)}\n4:\nlw t4, 0(t3)\nbltu t4, a4, 4b\nfence"


WR_ACK, RD_RESP, AT_RESP = 1, 2, 0  # NIU counters MST_WR_ACK_RECEIVED, MST_RD_RESP_RECEIVED, ...


def noc_setup(size: int, counter: int) -> str:
    # The write's source coordinates (initiator 0's TARG_ADDR_MID / _COORDINATE) as firmware sets
    # them once; the software counter starts at the NIU's.
    return (
        f"{_NOC_SETUP}\nsw zero, 0x04(s3)\nsw a6, 0x08(s3)\nli a3, {size}\nlw a4, {0x200 + 4 * counter}(s3)"
    )


def own_tile_case(kind: str, size: int, silicon: float, noc: int = 0, *, wait: bool = True) -> Case:
    """A ``kind`` ("read" or "write") request of ``size`` bytes to the own tile through NoC ``noc``:
    issue only, or with its flush (a read) or barrier (a write)."""
    niu = get_arch(ARCH).noc.niu_bases[noc]
    request, counter = (noc_read(niu=niu), RD_RESP) if kind == "read" else (noc_write(niu=niu), WR_ACK)
    done = (" + flush" if kind == "read" else " + barrier") if wait else ", issue only"
    return Case(
        f"noc{noc if noc else ''}_{kind}_{size}{'' if wait else '_issue'}",
        f"NoC own tile: {size} B {kind}{done}" + (f" (NoC #{noc})" if noc else ""),
        f"{request}\n{noc_wait(counter, niu)}" if wait else request,
        1,
        (silicon, silicon),
        mmio="niu1" if noc else "niu",
        setup=noc_setup(size, counter),
        empty=NOP,
    )


# An atomic increment of the semaphore word at s0 by one, its response (the old value) to a2:
# initiator 3, CTRL atomic | response marked | static VC, AT_LEN_BE increment of word 0 (0x107C),
# AT_DATA 1; then a wait until the NIU's atomic-response counter reaches a4. As the sem/CB bench
# makes it (``each_call``), every call first reads this tile's coordinates from local RAM into a5
# and the counter into a4; as the multicast bench's loop does, those stay in registers (``target``:
# the register with the target's coordinates).
def noc_atomic(target: str = "a5", *, each_call: bool = True) -> str:
    prefix = (
        f"{la('t2', 'noc_xy')}\nlbu t0, 0(t2)\nlbu t1, 1(t2)\nslli t1, t1, 6\nor a5, t0, t1\n"
        f"{li('t0', NIU + 0x200)}\nlw a4, 0(t0)\n"
    )
    return (
        f"{prefix if each_call else ''}addi a4, a4, 1\n{_ready(3)}\n"
        f"{li('t0', NIU + 0x1800 + 0x0C)}\naddi t1, a2, 0\nsw t1, 0(t0)\nsw zero, 4(t0)\nsw a5, 8(t0)\n"
        f"sw s0, -12(t0)\nsw zero, -8(t0)\nsw {target}, -4(t0)\n{li('t1', 0x2091)}\nsw t1, 16(t0)\n"
        f"{li('t1', 0x107C)}\nsw t1, 20(t0)\nsw zero, 24(t0)\naddi t1, zero, 1\nsw t1, 28(t0)\n"
        f"addi t1, zero, 1\nsw t1, 52(t0)\n{li('t0', NIU + 0x200)}\n5:\nlw t1, 0(t0)\nbltu t1, a4, 5b"
    )


# This tile's x and y (bytes) in local RAM, where the atomic's program reads them.
NOC_XY = f"{_NOC_SETUP}\n{la('t2', 'noc_xy')}\nandi t0, a6, 63\nsb t0, 0(t2)\nsrli t0, a6, 6\nsb t0, 1(t2)"

STREAM_BYTES = 8192


def peer_case(kind: str, size: int, peer: tuple[int, int], silicon: float, noc: int = 0) -> Case:
    """A read + flush or write + barrier of ``size`` bytes between SOURCE and another Tensix tile
    (``peer``: NoC #0 coordinates) through NoC ``noc``."""
    x, y = peer
    facts = get_arch(ARCH).noc
    tx, ty = (x, y) if noc == 0 else (facts.width - 1 - x, facts.height - 1 - y)  # NoC #1's corner
    niu = facts.niu_bases[noc]
    request, counter = (noc_read("a7", niu), RD_RESP) if kind == "read" else (noc_write("a7", niu), WR_ACK)
    what = f"{size} B read + flush" if kind == "read" else f"{size} B write + barrier"
    return Case(
        f"noc{noc}_peer_{kind}_{size}_{x}_{y}" if noc else f"noc_peer_{kind}_{size}_{x}_{y}",
        f"NoC peer {peer}: {what}" + (f" (NoC #{noc})" if noc else ""),
        f"{request}\n{noc_wait(counter, niu)}",
        1,
        (silicon, silicon),
        mmio="niu1" if noc else "niu",
        setup=f"{noc_setup(size, counter)}\nli a7, {tx | ty << 6}",
        empty=NOP,
        peer=peer,
    )


NOC_CASES = (
    own_tile_case("read", 4, 24.97, wait=False),
    own_tile_case("write", 4, 22.98, wait=False),
    own_tile_case("write", 4, 69.0),
    own_tile_case("read", 4, 79.0),
    own_tile_case("read", 16, 71.0),
    own_tile_case("read", 64, 71.0),
    own_tile_case("read", 256, 79.0),
    # Another tile: its east neighbour, and one 13 columns on (NoC #0 goes east and wraps, so a request
    # and its response go once round the row whatever the distance: the measurements are flat too).
    peer_case("read", 4, (2, 2), 230.96),
    peer_case("read", 64, (2, 2), 222.96),
    peer_case("write", 4, (2, 2), 228.96),
    peer_case("write", 64, (2, 2), 221.07),
    peer_case("read", 4, (14, 2), 231.0),
    peer_case("write", 4, (14, 2), 229.0),
    Case(
        "noc_atomic",
        "local NoC atomic increment with response",
        noc_atomic(),
        1,
        (99.0, 99.0),
        mmio="niu",
        setup=NOC_XY,
        empty=NOP,
    ),
    Case(
        "noc_write_stream",
        "NoC one-source write stream (B/cycle)",
        noc_write(),
        1,
        (63.0, 64.7),
        mmio="niu",
        setup=noc_setup(STREAM_BYTES, WR_ACK),
        teardown=noc_wait(WR_ACK),
        bytes_per_op=STREAM_BYTES,
    ),
)

# --------------------------------------------------------------------------- many senders, one target
# The arbitration bench: K BRISCs of one row each write 128 packets of 16 KiB (non-posted) to a slice
# of their own on the tile at the row's end, then wait for the acknowledgements; each figure is one
# sender's bytes over its own run. The senders are the working columns next to the target (a p100a's:
# NoC #0 columns 6 and 15 are harvested), on NoC #0 towards the row's last column, on NoC #1 towards
# its first. The measured rates per sender, nearest the target first: every sender's packets share
# the target's last link, and which goes when is the routers' arbitration (noc/routers.py).
P100A_COLUMNS = (1, 2, 3, 4, 5, 7, 10, 11, 12, 13, 14, 16)
ARBITRATION_ROW = 4
ARBITRATION_PACKETS = 128
_ARBITRATION = {
    (0, 2): (31.508, 31.392),
    (0, 4): (31.611, 21.020, 15.795, 15.766),
    (0, 8): (31.505, 21.006, 15.766, 12.623, 10.521, 9.024, 7.895, 7.887),
    (1, 2): (31.520, 31.407),
    (1, 4): (31.520, 21.051, 15.784, 15.754),
    (1, 8): (31.558, 21.080, 15.799, 12.643, 10.536, 9.035, 7.906, 7.898),
}


def arbitration_case(noc: int, senders: int, nearest: int, silicon: float) -> Case:
    """The ``nearest``-th sender (0: next to the target) of ``senders`` writing to one tile on NoC
    ``noc``."""
    facts = get_arch(ARCH).noc
    y = ARBITRATION_ROW
    if noc == 0:
        target, columns = P100A_COLUMNS[-1], P100A_COLUMNS[-1 - senders : -1][::-1]
        tx, ty = target, y
    else:
        target, columns = P100A_COLUMNS[0], P100A_COLUMNS[1 : 1 + senders]
        tx, ty = facts.width - 1 - target, facts.height - 1 - y  # NoC #1's coordinates
    niu = facts.niu_bases[noc]
    # Each sender's slice: 32 KiB per its x (this NIU's coordinates) from 1 MiB.
    slice_ = f"andi t0, a6, 63\nslli t0, t0, 15\n{li('a2', 0x100000)}\nadd a2, a2, t0"
    return Case(
        f"noc{noc}_to_one_{senders}_{nearest}",
        f"NoC #{noc}: {senders} senders to one tile, 16 KiB writes, sender {nearest + 1} from it (B/cycle)",
        noc_write("a7", niu),
        1,
        (silicon, silicon),
        iters=ARBITRATION_PACKETS,
        mmio="niu1" if noc else "niu",
        setup=f"{noc_setup(16384, WR_ACK)}\nli a7, {tx | ty << 6}\n{slice_}",
        teardown=noc_wait(WR_ACK, niu),
        bytes_per_op=16384,
        subtract_empty=False,
        peer=(target, y),
        senders=tuple((x, y) for x in columns),
        figure_tile=(columns[nearest], y),
    )


ARBITRATION_CASES = tuple(
    arbitration_case(noc, senders, i, silicon)
    for (noc, senders), rates in _ARBITRATION.items()
    for i, silicon in enumerate(rates)
)

# --------------------------------------------------------------------------- DRAM
# 512 pages of 2 KiB from one DRAM bank through the interleaved bank table, back to back, one flush
# or barrier at the end (all inside the figure: no empty loop subtracted), as measured: page i's
# logical tile (start + i) * banks + bank, its bank tile % banks and page tile / banks (remu, divu),
# the bank's coordinates from a uint16 table in local RAM, the L1 page (i % 64) * 2048 of the ring
# at s0. s1 the DRAM base address, a3 banks (7: the p100a's), a4 the page size, a5 this tile's
# coordinates, a6 the page, a7 the request count; s2 the first page, s3 the bank.
DRAM_PAGE = 2048
DRAM_PAGES = 512
DRAM_BANKS = 7
DRAM_BASE = 0x40

# The bench's card and harness (blackhole-py's device and DRAM bench sources):
# - its cores, in the order it hands them out: column by column (x over the card's Tensix columns,
#   then y from 2 to 11), the first n of them for an n-core run;
# - each bank's three endpoints, port by port (arch.blackhole_host.DRAM_BANKS, tt-umd's order); its
#   firmware's bank table takes port 2 on NoC #0 and port 1 on NoC #1, the direct mode a port
#   the run names;
# - a p100a has one of its eight banks fused off, and the bench's logical bank i is the i-th bank left.
#   Which one the card lacks is not in the report. Only with bank 0 or 1 fused off do the seven-core
#   spread runs agree with each other (NoC #0 and #1 reads, NoC #1 writes: their routes differ by which
#   banks are left), and the fourteen-core read picks bank 0 (docs/timing.md).
TABLE_PORT = (2, 1)  # the bank table's port, by NoC
FUSED_BANK = 0


def bench_cores(count: int) -> tuple[tuple[int, int], ...]:
    """The bench's first ``count`` cores (NoC #0 coordinates)."""
    return tuple((x, y) for x in P100A_COLUMNS for y in range(2, 12))[:count]


def bench_group(bank: int) -> int:
    """The DRAM group (the card's bank) of the bench's logical bank ``bank``."""
    return bank + (bank >= FUSED_BANK)


def bank_endpoint(bank: int, port: int, noc: int = 0) -> int:
    """The coordinates (``x | y << 6``, NoC ``noc``'s) of port ``port`` of the bench's logical bank."""
    x, y = DRAM_PORTS[bench_group(bank)][port]
    facts = get_arch(ARCH).noc
    if noc:
        x, y = facts.width - 1 - x, facts.height - 1 - y
    return x | y << 6


def _own_bank(noc: int) -> str:
    """s3 = this core's bank in the spread mode: its place in ``bench_cores`` modulo the banks. a5 holds
    this tile's coordinates on NoC ``noc``; the place is the column's index (x less one, less one for
    every column short of x that holds no Tensix tile of the card) times 10, plus y - 2."""
    facts = get_arch(ARCH).noc
    xy = "andi t0, a5, 63\nsrli t1, a5, 6\nandi t1, t1, 63\n"
    if noc:  # back to NoC #0's coordinates
        xy += f"li t2, {facts.width - 1}\nsub t0, t2, t0\nli t2, {facts.height - 1}\nsub t1, t2, t1\n"
    gaps = [c for c in range(P100A_COLUMNS[0], P100A_COLUMNS[-1]) if c not in P100A_COLUMNS]
    column = "".join(f"li t2, {c}\nsltu t2, t2, t0\nsub t0, t0, t2\n" for c in gaps)
    return (
        f"{xy}{column}addi t0, t0, -1\nli t2, 10\nmul t0, t0, t2\nadd t0, t0, t1\naddi t0, t0, -2\n"
        f"li t2, {DRAM_BANKS}\nremu s3, t0, t2"
    )


def dram_setup(counter: int, *, direct: bool = False, noc: int = 0, spread: bool = False) -> str:
    """The DRAM loops' registers, s3 set up by the harness as NoC ``noc``'s NIU: the bank table (each
    bank's table port), and s3 the bank (0, or the core's own with ``spread``) or, ``direct``, bank 0's
    port 0 (the bench's direct mode)."""
    table = "".join(
        f"li t0, {bank_endpoint(i, TABLE_PORT[noc], noc)}\nsh t0, {2 * i}(t2)\n" for i in range(DRAM_BANKS)
    )
    bank = f"li s3, {bank_endpoint(0, 0, noc)}" if direct else _own_bank(noc) if spread else "li s3, 0"
    return (
        f"lw a5, 0x44(s3)\nslli a5, a5, 20\nsrli a5, a5, 20\nsw zero, 0x04(s3)\nsw a5, 0x08(s3)\n"
        f"lw a7, {0x200 + 4 * counter}(s3)\n{la('t2', 'bank_table')}\n{table}"
        f"li a3, {DRAM_BANKS}\nli a4, {DRAM_PAGE}\nli a6, 0\nli s1, {DRAM_BASE}\nli s2, 0\n{bank}\n"
        + li("s0", RING)
    )


_DRAM_ADDRESS = (
    "add a1, s2, a6\nmul a1, a1, a3\nadd a1, a1, s3\naddi a0, s1, 0\naddi a2, a3, 0\naddi t0, a1, 0\n"
    "remu a1, t0, a2\ndivu t0, t0, a2\nslli t0, t0, 11\nadd a0, a0, t0\naddi t1, a1, 0\nslli t1, t1, 1\n"
    f"{la('t2', 'bank_table')}\nadd t2, t2, t1\nlhu a2, 0(t2)\nandi t5, a6, 63\nmul t5, t5, a4\n"
    f"{li('t2', RING)}\nadd t5, t5, t2"
)
# The bench's direct mode: the page's bytes from the base of one bank (its start page + i, times the
# page size), at the coordinates of one of the bank's endpoints (s3).
_DRAM_DIRECT_ADDRESS = (
    "add a1, s2, a6\nmul t0, a1, a4\naddi a0, s1, 0\nadd a0, a0, t0\naddi a2, s3, 0\nandi t5, a6, 63\n"
    f"mul t5, t5, a4\n{li('t2', RING)}\nadd t5, t5, t2"
)


def _dram_read(address: str, niu: int = NIU) -> str:
    return (
        f"{address}\n{_ready(1, niu)}\n{li('t3', niu + 0x800 + 0x1C)}\n{li('t4', 0x2090)}\nsw t4, 0(t3)\n"
        "sw t5, -16(t3)\nsw zero, -12(t3)\nsw a5, -8(t3)\nsw a0, -28(t3)\nsw zero, -24(t3)\nsw a2, -20(t3)\n"
        "sw a4, 4(t3)\nsw zero, 8(t3)\naddi t4, zero, 1\nsw t4, 36(t3)\naddi a7, a7, 1\naddi a6, a6, 1"
    )


def _dram_write(address: str, niu: int = NIU) -> str:
    return (
        f"{address}\n{_ready(0, niu)}\n{li('t3', niu + 0x1C)}\n{li('t4', 0x2092)}\nsw t4, 0(t3)\n"
        "sw t5, -28(t3)\nsw a0, -16(t3)\nsw zero, -12(t3)\nsw a2, -8(t3)\nsw a4, 4(t3)\nsw zero, 8(t3)\n"
        "addi t4, zero, 1\nsw t4, 36(t3)\naddi a7, a7, 1\naddi a6, a6, 1"
    )


def dram_wait(counter: int, niu: int = NIU) -> str:
    return f"{li('t3', niu + 0x200 + 4 * counter)}\n4:\nlw t4, 0(t3)\nbltu t4, a7, 4b\nfence"


def dram_case(
    kind: str,
    silicon: float,
    *,
    direct: bool = False,
    tiles: int = 0,
    spread: bool = False,
    noc: int = 0,
    calibrated: bool = True,
) -> Case:
    """The DRAM loop's 512 pages to or from the bench's bank 0 (``direct``: its port 0 addressed
    directly, the bench's direct mode), on one core of a lone tile, or with ``tiles`` on the bench's
    first cores of a chip at once: all on bank 0 (the bench's single-bank mode) or, ``spread``, each on
    its own bank (its place among them modulo the banks, the spread mode); the bytes of all over the
    window. Through NoC ``noc``."""
    read = kind == "read"
    niu = get_arch(ARCH).noc.niu_bases[noc]
    body = (_dram_read if read else _dram_write)(_DRAM_DIRECT_ADDRESS if direct else _DRAM_ADDRESS, niu)
    counter = RD_RESP if read else WR_ACK
    how = "addressed directly" if direct else "through the bank table"
    on = f" (NoC #{noc})" if noc else ""
    if tiles:
        senders = bench_cores(tiles)
        mode = "spread" if spread else "bank"
        name = f"dram_{mode}_{kind}_{tiles}{'_direct' if direct else ''}{f'_noc{noc}' if noc else ''}"
        where = "each on its own bank" if spread else "on one bank"
        what = f"DRAM {kind}, {tiles} tiles {where} {how}{on} (B/cycle, all together)"
        chip = {"peer": senders[0], "senders": senders, "aggregate": True}
    else:
        name = f"dram_{'direct_' if direct else ''}{kind}{f'_noc{noc}' if noc else ''}"
        what = (
            f"DRAM {kind}, one bank addressed directly, one core{on} (B/cycle)"
            if direct
            else f"DRAM interleaved {kind}, one core{on} (B/cycle)"
        )
        chip = {}
    return Case(
        name,
        what,
        body,
        1,
        (silicon, silicon),
        iters=DRAM_PAGES,
        mmio="niu1" if noc else "niu",
        setup=dram_setup(counter, direct=direct, noc=noc, spread=spread),
        teardown=dram_wait(counter, niu),
        bytes_per_op=DRAM_PAGE,
        subtract_empty=False,
        calibrated=calibrated,
        **chip,
    )


DRAM_CASES = (
    dram_case("read", 26.86),
    dram_case("write", 27.63),
    # The bank's controller (NocTiming.dram_read_page / dram_write_page): four tiles through the bank
    # table, as the bench's single-bank runs (NoC #0; the firmware table's endpoint).
    dram_case("read", 58.88, tiles=4),
    dram_case("write", 54.01, tiles=4),
)
