"""The RISC-V timing calibration microbenchmarks, as bare-metal programs.

Each case is measured the way the silicon figures were: a program reads the wall clock
(``WALL_CLOCK_L``), runs a counted loop whose body repeats the operation under test, reads the wall
clock again, then times the same loop with an empty body; the cost per operation is the difference
divided by the operations run (a stream's figure: bytes per cycle). Optional setup and teardown code
runs inside both timed regions, so its cost cancels. The silicon figures are the calibration list in
:mod:`tensixsim.timing` (``CALIBRATION``): Blackhole p100a, cycles at 1.35 GHz. Besides the cores'
own instructions, the list covers NoC requests to the own tile (issued as tt-metal issues them) and
the coprocessor's semaphores.

``python benchmarks/timing_table.py`` prints the table; tests/test_timing_calibration.py asserts the
calibrated rows and that docs/timing.md shows the same table.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.dram import Dram
from tensixsim.sdk.build import DEFAULT_BUILD_DIR, build
from tensixsim.sdk.layout import L1_USER_BASE
from tensixsim.tile import Tile

ARCH = "blackhole"
RESULTS = L1_USER_BASE + 0x100  # per core: body cycles, empty-loop cycles (16 bytes apart)
DATA = L1_USER_BASE + 0x1000  # per core: a 4 KiB L1 buffer the loads and stores use
SHARED = DATA + 0x10000  # one L1 word every core reads in the same-address case
# NIU counter MST_RD_RESP_RECEIVED (noc/registers.py COUNTER_BASE, Counters.md)
NOC_STATUS_OFFSET = 0x200 + 4 * 2

# Registers the bodies may use: s0 L1 data, s1 own local-RAM word, s2 another core's local RAM,
# s3 the MMIO register under test; a0..a7 and t0..t5 are scratch, t6 counts iterations.


@dataclass(frozen=True)
class Case:
    """One calibration figure: its body, how many operations one iteration holds, the silicon value."""

    name: str
    what: str
    body: str  # assembly of one loop iteration
    ops: int  # operations per iteration (the figure is cycles per operation)
    silicon: tuple[float, float]  # measured (a range when the measurements spread)
    cores: tuple[str, ...] = ("brisc",)  # cores running the loop at once
    figure_cores: tuple[str, ...] = ("brisc",)  # whose cost the figure is (their mean)
    iters: int = 32
    calibrated: bool = True  # asserted within 10%; False: printed as not yet calibrated
    # What s3 points at: "wall", "noc_status", "niu" (NoC #0's NIU), "pcbuf" or "stream" (stream 0).
    mmio: str = "wall"
    shared_l1: bool = False  # s0 is the same word for every core
    # Assembly run before and after the loop, inside the timed region of both the loop with the body
    # and the empty one (so its cost cancels): constants for the body, a final barrier.
    setup: str = ""
    teardown: str = ""
    bytes_per_op: int = 0  # nonzero: the figure is bytes per cycle (this many bytes an operation)

    @property
    def target(self) -> float:
        lo, hi = self.silicon
        return (lo + hi) / 2

    def figure(self, cycles_per_op: float) -> float:
        """The figure as the silicon list states it: cycles per operation, or bytes per cycle."""
        return self.bytes_per_op / cycles_per_op if self.bytes_per_op else cycles_per_op

    def silicon_text(self) -> str:
        lo, hi = self.silicon
        return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def _rept(count: int, text: str) -> str:
    return f".rept {count}\n{text}\n.endr"


def _offsets(count: int, text: str) -> str:
    """``text`` with ``OFF`` replaced by 0, 4, 8, ... (independent words)."""
    return "\n".join(text.replace("OFF", str(4 * i)) for i in range(count))


# NoC request sequences, as tt-metal's noc_nonblocking_api.h issues them through NIU #0's request
# initiator 0 (s3: the NIU window; register offsets of noc/registers.py): wait until the command
# buffer is ready (NOC_CMD_CTRL reads 0), write the request fields, write NOC_CMD_CTRL, count the
# request in a software counter (own local RAM, s1), and for a barrier poll the NIU counter until it
# equals the software one. Setup: a6 the tile's own coordinates (NOC_NODE_ID's x | y << 6), the
# counter copied.
_NOC_SETUP = "lw a6, 0x44(s3)\nslli a6, a6, 20\nsrli a6, a6, 20\naddi a2, s0, 0x400\nli a1, 1"


def _noc_counter(index: int) -> str:
    return f"lw t0, {0x200 + 4 * index}(s3)\nsw t0, 0(s1)"


def _noc_barrier(index: int) -> str:
    return f"4:\nlw t1, {0x200 + 4 * index}(s3)\nlw t0, 0(s1)\nbne t1, t0, 4b"


_NOC_READY = "3:\nlw t1, 0x40(s3)\nbnez t1, 3b"
_NOC_COUNT = "lw t0, 0(s1)\naddi t0, t0, 1\nsw t0, 0(s1)"
_WR_ACK, _RD_RESP, _AT_RESP = 1, 2, 0  # NIU counters MST_WR_ACK_RECEIVED, MST_RD_RESP_RECEIVED, ...


def _noc_write_setup(size: int) -> str:
    # CTRL: a write (2) with a response (RESP_MARKED, 0x10); the source is this tile's L1.
    return f"{_NOC_SETUP}\nli a7, 0x12\nli a3, {size}\nsw a6, 0x08(s3)\n{_noc_counter(_WR_ACK)}"


# s0 -> a2 (s0 + 0x400), this tile: CTRL, TARG_ADDR_LO, RET_ADDR_LO, RET_ADDR_MID,
# RET_ADDR_COORDINATE, AT_LEN_BE, CMD_CTRL.
_NOC_WRITE = (
    f"{_NOC_READY}\nsw a7, 0x1C(s3)\nsw s0, 0x00(s3)\nsw a2, 0x0C(s3)\nsw zero, 0x10(s3)\n"
    f"sw a6, 0x14(s3)\nsw a3, 0x20(s3)\nsw a1, 0x40(s3)\n{_NOC_COUNT}"
)


def _noc_read_setup(size: int) -> str:
    # CTRL: a read (0); the response comes back to this tile.
    return f"{_NOC_SETUP}\nsw zero, 0x1C(s3)\nsw a6, 0x14(s3)\nli a3, {size}\n{_noc_counter(_RD_RESP)}"


# a2 <- s0, this tile: RET_ADDR_LO, TARG_ADDR_LO, TARG_ADDR_MID, TARG_ADDR_COORDINATE, AT_LEN_BE, CMD_CTRL.
_NOC_READ = (
    f"{_NOC_READY}\nsw a2, 0x0C(s3)\nsw s0, 0x00(s3)\nsw zero, 0x04(s3)\nsw a6, 0x08(s3)\n"
    f"sw a3, 0x20(s3)\nsw a1, 0x40(s3)\n{_NOC_COUNT}"
)


def _noc_read_case(size: int, silicon: float) -> Case:
    return Case(
        f"noc_read_{size}",
        f"NoC own tile: {size} B read + flush",
        f"{_NOC_READ}\n{_noc_barrier(_RD_RESP)}",
        1,
        (silicon, silicon),
        mmio="niu",
        setup=_noc_read_setup(size),
    )


# An atomic increment of the word at s0 by one with its response (the old value) to a2: CTRL
# atomic (1) | RESP_MARKED; AT_LEN_BE increment (opcode 1 in bits 12..15) of all 32 bits (wrap 31 in
# bits 2..6) of word 0 of the 16-byte line; AT_DATA 1.
_NOC_ATOMIC_SETUP = (
    f"{_NOC_SETUP}\nli a7, 0x11\nli a3, 0x107C\nsw a2, 0x0C(s3)\nsw a6, 0x14(s3)\n{_noc_counter(_AT_RESP)}"
)
_NOC_ATOMIC = (
    f"{_NOC_READY}\nsw s0, 0x00(s3)\nsw zero, 0x04(s3)\nsw a6, 0x08(s3)\nsw a7, 0x1C(s3)\n"
    f"sw a3, 0x20(s3)\nsw a1, 0x28(s3)\nsw a1, 0x40(s3)\n{_NOC_COUNT}"
)
STREAM_BYTES = 8192

# DRAM through the interleaved bank table, as tt-metal's InterleavedAddrGenFast and
# noc_async_read / noc_async_write (dataflow_api.h, noc_nonblocking_api.h) do it: page p of a buffer
# at DRAM address 0 lives in bank p % 8 at (p / 8) * page size, and the bank's NoC coordinates come
# from a table in the core's local RAM (tt-metal's dram_bank_to_noc_xy; s1 + 32: one word a bank,
# x | y << 6, bank i being DRAM group i's first tile, dram.py). a5 counts pages; a2 is the page's L1
# buffer (one page, rewritten each time), a3 the page size.
DRAM_PAGE = 2048
_DRAM_BANKS = 8


def _dram_table() -> str:
    dram = Dram.new(get_arch(ARCH))
    assert dram is not None and dram.groups == _DRAM_BANKS
    xy = [dram.endpoint(group) for group in range(_DRAM_BANKS)]
    return "\n".join(f"li t0, {x | y << 6}\nsw t0, {32 + 4 * i}(s1)" for i, (x, y) in enumerate(xy))


def _dram_setup(counter: int, own: int) -> str:
    """The bank table, the page counter, and this tile's coordinates at ``own`` (the read's return
    coordinates, or the write's source)."""
    return (
        f"{_NOC_SETUP}\n{_dram_table()}\nsw a6, {own}(s3)\nli a3, {DRAM_PAGE}\nli a5, 0\n"
        f"{_noc_counter(counter)}"
    )


# The page's bank (t2), its address in the bank (t3) and the bank's coordinates (t4).
_DRAM_PAGE_ADDRESS = (
    f"andi t2, a5, {_DRAM_BANKS - 1}\nsrli t3, a5, 3\nslli t3, t3, {DRAM_PAGE.bit_length() - 1}\n"
    "sh2add t4, t2, s1\nlw t4, 32(t4)\naddi a5, a5, 1"
)
# Read: RET_ADDR_LO, TARG_ADDR_LO, TARG_ADDR_MID, TARG_ADDR_COORDINATE, AT_LEN_BE, CMD_CTRL (CTRL: read).
_DRAM_READ = (
    f"{_DRAM_PAGE_ADDRESS}\n{_NOC_READY}\nsw zero, 0x1C(s3)\nsw a2, 0x0C(s3)\nsw t3, 0x00(s3)\n"
    f"sw zero, 0x04(s3)\nsw t4, 0x08(s3)\nsw a3, 0x20(s3)\nsw a1, 0x40(s3)\n{_NOC_COUNT}"
)
# Write with acknowledgement: CTRL, TARG_ADDR_LO (the L1 source), RET_ADDR_LO, RET_ADDR_MID,
# RET_ADDR_COORDINATE, AT_LEN_BE, CMD_CTRL.
_DRAM_WRITE = (
    f"{_DRAM_PAGE_ADDRESS}\n{_NOC_READY}\nli t0, 0x12\nsw t0, 0x1C(s3)\nsw a2, 0x00(s3)\n"
    f"sw t3, 0x0C(s3)\nsw zero, 0x10(s3)\nsw t4, 0x14(s3)\nsw a3, 0x20(s3)\nsw a1, 0x40(s3)\n{_NOC_COUNT}"
)


def _tensix_word(opcode: int, arg: int) -> str:
    """A Tensix instruction in a TRISC's instruction stream (rotated left by two)."""
    word = opcode << 24 | arg
    return f".word 0x{(word << 2 | word >> 30) & 0xFFFFFFFF:08x}"


# SEMPOST and SEMGET of semaphore 1 (opcodes 0xA4 / 0xA5, sem_sel in bits 2..23), then the done check
# (a read of COPROCESSOR_DONE_CHECK, PC buffer + 4) that returns once the pipe has executed both.
_SEM_DRAIN = f"{_tensix_word(0xA4, 0b10 << 2)}\n{_tensix_word(0xA5, 0b10 << 2)}\nlw a0, 4(s3)"

# tt-metal's dataflow circular-buffer calls (dataflow_api.h) on ready buffers, as the memory accesses
# they make: the page counters are stream 0's registers (s3: tiles acked at +0x20, tiles received at
# +0x28; CB n uses stream n), the CB's interface is a struct in the core's local RAM (s1: fifo_size,
# fifo_limit, fifo_page_size, fifo_num_pages, fifo_rd_ptr, fifo_wr_ptr at words 0..5). One page per
# call; the buffer holds plenty of both pages and room, and never wraps. invalidate_l1_cache() is a
# fence on Blackhole.
_CB_SETUP = (
    "li t0, 0x100000\nsw t0, 0(s1)\nsw t0, 4(s1)\nli t0, 64\nsw t0, 8(s1)\nli t0, 4096\nsw t0, 12(s1)\n"
    "sw s0, 16(s1)\nsw s0, 20(s1)\nli t0, 2048\nsw t0, 0x28(s3)\nsw zero, 0x20(s3)\nli a1, 1"
)
# cb_wait_front: pages_acked read once, then tiles received read until received - acked >= pages.
_CB_WAIT_FRONT = "lw t0, 0x20(s3)\n3:\nlw t1, 0x28(s3)\nsub t1, t1, t0\nzext.h t1, t1\nbltu t1, a1, 3b"
# cb_reserve_back: pages received read once, then (fence, tiles acked, fifo_num_pages) until
# fifo_num_pages - (received - acked) >= pages.
_CB_RESERVE_BACK = (
    "lw t0, 0x28(s3)\n3:\nfence\nlw t1, 0x20(s3)\nlw t2, 12(s1)\nsub t3, t0, t1\nsub t3, t2, t3\n"
    "zext.h t3, t3\nblt t3, a1, 3b"
)


def _cb_advance(counter: int, pointer: int) -> str:
    """cb_push_back / cb_pop_front: counter register += pages; pointer += pages * fifo_page_size, and
    back by fifo_size on reaching fifo_limit."""
    return (
        f"lw t0, 8(s1)\nlw t1, {counter}(s3)\nadd t1, t1, a1\nsw t1, {counter}(s3)\n"
        f"lw t2, {pointer}(s1)\nadd t2, t2, t0\nsw t2, {pointer}(s1)\nlw t3, 4(s1)\nbne t2, t3, 3f\n"
        f"lw t3, 0(s1)\nsub t2, t2, t3\nsw t2, {pointer}(s1)\n3:"
    )


# tt-metal's semaphore calls on a semaphore in the core's L1 (s0), as dataflow_api.h has them:
# noc_semaphore_set stores the value; noc_semaphore_wait invalidates the core's L1 data cache
# (invalidate_l1_cache(): a fence on Blackhole) and loads the word until it equals the value (a1, which
# the setup stores there, so the first load satisfies it).
_SEM_SET = "sw t6, 0(s0)"
_SEM_WAIT = "3:\nfence\nlw t0, 0(s0)\nbne t0, a1, 3b"


def _cb_case(name: str, what: str, body: str, silicon: float, calibrated: bool = True) -> Case:
    return Case(
        name, what, body, 1, (silicon, silicon), mmio="stream", setup=_CB_SETUP, calibrated=calibrated
    )


FIVE = CORE_NAMES
CASES: tuple[Case, ...] = (
    Case("alu_dependent", "dependent add chain", _rept(32, "add a0, a0, a1"), 32, (1.0, 1.0)),
    Case(
        "shift_zba_zbb_dependent",
        "dependent slli / sh2add / rol / andn",
        _rept(8, "slli a0, a0, 1\nsh2add a0, a0, a1\nrol a0, a0, a1\nandn a0, a0, a2"),
        32,
        (1.0, 1.0),
    ),
    Case("lui_auipc", "lui, auipc", _rept(16, "lui a0, 1\nauipc a1, 0"), 32, (1.0, 1.0)),
    Case("branch_taken", "taken beq", _rept(32, "beq zero, zero, .+4"), 32, (1.0, 1.0)),
    Case("jal", "jal to the next instruction", _rept(32, "jal zero, .+4"), 32, (1.0, 1.0)),
    Case(
        "auipc_addi_jalr",
        "auipc + addi + jalr (per instruction)",
        _rept(16, "auipc a0, 0\naddi a0, a0, 12\njalr zero, 0(a0)"),
        48,
        (1.0, 1.0),
    ),
    Case(
        "mul_independent",
        "independent mul",
        _rept(8, "mul a0, a4, a5\nmul a1, a4, a5\nmul a2, a4, a5\nmul a3, a4, a5"),
        32,
        (1.0, 1.0),
    ),
    Case("remu_dependent", "dependent remu", _rept(16, "remu a0, a0, a5"), 16, (6.0, 6.0)),
    Case("l1_lw_x4", "4 independent L1 lw back to back", _offsets(4, "lw a0, OFF(s0)"), 4, (1.25, 1.25)),
    Case("l1_lw_x8", "8 independent L1 lw back to back", _offsets(8, "lw a0, OFF(s0)"), 8, (1.46, 1.63)),
    Case("l1_load_to_use", "L1 lw then its use", "lw a0, 0(s0)\nadd a1, a0, a0", 1, (9.0, 9.0)),
    Case(
        "l1_load_to_use_gap4",
        "L1 lw, 4 independent, then its use",
        "lw a0, 0(s0)\naddi a2, a2, 1\naddi a3, a3, 1\naddi a4, a4, 1\naddi a5, a5, 1\nadd a1, a0, a0",
        1,
        (9.0, 9.0),
    ),
    Case("l1_store", "L1 sw", _offsets(32, "sw a0, OFF(s0)"), 32, (1.0, 1.0)),
    Case(
        "local_sw_lw",
        "local RAM sw then lw of the word",
        _rept(16, "sw a0, 0(s1)\nlw a1, 0(s1)"),
        16,
        (3.0, 3.0),
    ),
    Case(
        "local_sw_lw_trisc2",
        "local RAM sw then lw of the word, TRISC2",
        _rept(16, "sw a0, 0(s1)\nlw a1, 0(s1)"),
        16,
        (4.0, 4.0),
        cores=("trisc2",),
        figure_cores=("trisc2",),
    ),
    Case("remote_local_lw", "lw from another core's local RAM", _rept(32, "lw a0, 0(s2)"), 32, (2.5, 2.5)),
    Case("mmio_wall_clock", "MMIO read: wall clock", _rept(8, "lw a0, 0(s3)"), 8, (2.0, 2.0), iters=8),
    Case(
        "mmio_noc_status",
        "MMIO read: NoC status register",
        _rept(8, "lw a0, 0(s3)"),
        8,
        (2.0, 2.0),
        iters=8,
        mmio="noc_status",
    ),
    Case("l1_rmw", "L1 read-modify-write (amoadd.w)", _rept(16, "amoadd.w a0, a5, (s0)"), 16, (8.0, 8.0)),
    Case(
        "five_wall_clock",
        "5 cores at once: wall-clock read",
        _rept(8, "lw a0, 0(s3)"),
        8,
        (2.25, 2.25),
        cores=FIVE,
        figure_cores=FIVE,
        iters=8,
        calibrated=False,
    ),
    Case(
        "five_l1_same_address",
        "5 cores at once: same-address L1 read",
        _rept(32, "lw a0, 0(s0)"),
        32,
        (2.667, 2.667),
        cores=FIVE,
        figure_cores=FIVE,
        shared_l1=True,
        calibrated=False,  # the L1 port sharing that gives it is off (timing.py l1_port_sharing)
    ),
    Case(
        "five_l1_rmw_b_nc_t0",
        "5 cores at once: L1 read-modify-write (BRISC, NCRISC, TRISC0)",
        _rept(16, "amoadd.w a0, a5, (s0)"),
        16,
        (14.5, 14.5),
        cores=FIVE,
        figure_cores=("brisc", "ncrisc", "trisc0"),
        shared_l1=True,
        calibrated=False,  # the L1 port sharing that gives it is off (timing.py l1_port_sharing)
    ),
    Case(
        "five_l1_rmw_t1_t2",
        "5 cores at once: L1 read-modify-write (TRISC1, TRISC2)",
        _rept(16, "amoadd.w a0, a5, (s0)"),
        16,
        (10.5, 10.5),
        cores=FIVE,
        figure_cores=("trisc1", "trisc2"),
        shared_l1=True,
        calibrated=False,  # the L1 port sharing that gives it is off (timing.py l1_port_sharing)
    ),
    Case(
        "five_remote_local_lw",
        "5 cores at once: lw from another core's local RAM",
        _rept(32, "lw a0, 0(s2)"),
        32,
        (17.0, 17.0),
        cores=FIVE,
        figure_cores=FIVE,
        calibrated=False,
    ),
    _cb_case("cb_wait_front", "cb_wait_front, ready (BRISC)", _CB_WAIT_FRONT, 22.0),
    _cb_case("cb_reserve_back", "cb_reserve_back, room (BRISC)", _CB_RESERVE_BACK, 23.0),
    _cb_case("cb_push_back", "cb_push_back (BRISC)", _cb_advance(0x28, 20), 31.0, calibrated=False),
    _cb_case("cb_pop_front", "cb_pop_front (BRISC)", _cb_advance(0x20, 16), 31.5, calibrated=False),
    Case(
        "ttsem_drain",
        "TTSEMPOST + TTSEMGET + drain (TRISC0)",
        _SEM_DRAIN,
        1,
        (9.0, 9.0),
        cores=("trisc0",),
        figure_cores=("trisc0",),
        mmio="pcbuf",
        calibrated=False,  # the front end's stages are not timed yet (docs/timing.md)
    ),
    Case(
        "noc_semaphore_set",
        "noc_semaphore_set (BRISC)",
        _SEM_SET,
        1,
        (12.0, 12.0),
        calibrated=False,  # one L1 store, 1.0 on silicon alone (docs/timing.md)
    ),
    Case(
        "noc_semaphore_wait",
        "noc_semaphore_wait, already satisfied (BRISC)",
        _SEM_WAIT,
        1,
        (19.1, 19.1),
        setup="li a1, 1\nsw a1, 0(s0)",
        calibrated=False,
    ),
    Case(
        "noc_write_4",
        "NoC own tile: 4 B write + barrier",
        f"{_NOC_WRITE}\n{_noc_barrier(_WR_ACK)}",
        1,
        (69.0, 69.0),
        mmio="niu",
        setup=_noc_write_setup(4),
    ),
    _noc_read_case(4, 79.0),
    _noc_read_case(16, 71.0),
    _noc_read_case(64, 71.0),
    _noc_read_case(256, 79.0),
    Case(
        "noc_atomic",
        "local NoC atomic increment with response",
        f"{_NOC_ATOMIC}\n{_noc_barrier(_AT_RESP)}",
        1,
        (99.0, 99.0),
        mmio="niu",
        setup=_NOC_ATOMIC_SETUP,
    ),
    Case(
        "noc_write_stream",
        "NoC one-source write stream (B/cycle)",
        _NOC_WRITE,
        1,
        (63.0, 64.7),
        mmio="niu",
        setup=_noc_write_setup(STREAM_BYTES),
        teardown=_noc_barrier(_WR_ACK),
        bytes_per_op=STREAM_BYTES,
    ),
)

_DRAM_CASES = (
    Case(
        "dram_read",
        "DRAM interleaved read, one core (B/cycle)",
        _DRAM_READ,
        1,
        (26.86, 26.86),
        mmio="niu",
        setup=_dram_setup(_RD_RESP, 0x14),
        teardown=_noc_barrier(_RD_RESP),
        bytes_per_op=DRAM_PAGE,
        calibrated=False,  # no GDDR bandwidth figure (docs/timing.md)
    ),
    Case(
        "dram_write",
        "DRAM interleaved write, one core (B/cycle)",
        _DRAM_WRITE,
        1,
        (27.63, 27.63),
        mmio="niu",
        setup=_dram_setup(_WR_ACK, 0x08),
        teardown=_noc_barrier(_WR_ACK),
        bytes_per_op=DRAM_PAGE,
        calibrated=False,
    ),
)
CASES = CASES + _DRAM_CASES

# Figures of the calibration list this table does not run (docs/timing.md says why): printed as not
# calibrated.
NOT_RUN: tuple[tuple[str, str], ...] = (("cb_push_back / cb_pop_front (TRISC2)", "41.0 / 41.5"),)

_TEMPLATE = """\
#include <stdint.h>
#include "tensixsim.h"

static volatile uint32_t scratch[16]; /* own local RAM (.bss) */

static inline uint32_t wall(void)
{
    return *(volatile uint32_t *)WALL_CLOCK;
}

#define LOOP(body)                                                                      \\
    __asm__ volatile(SETUP "\\nli t6, %[n]\\n1:\\n" body "\\naddi t6, t6, -1\\nbnez t6, 1b\\n" TEARDOWN \\
                     : "+r"(l1), "+r"(local), "+r"(remote), "+r"(mmio)                  \\
                     : [n] "i"(ITERS)                                                   \\
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", \\
                       "a4", "a5", "a6", "a7", "memory")

int main(void)
{
    register uint32_t l1 __asm__("s0") = L1_DATA;
    register uint32_t local __asm__("s1") = (uint32_t)&scratch[0];
    register uint32_t remote __asm__("s2") = REMOTE;
    register uint32_t mmio __asm__("s3") = MMIO;
    __asm__ volatile("li a4, 3\\nli a5, 7\\nli a1, 1\\nli a2, 5\\nli a0, 1" ::: "a0", "a1", "a2", "a4", "a5");
    uint32_t t0 = wall();
    LOOP(BODY);
    uint32_t t1 = wall();
    LOOP("");
    uint32_t t2 = wall();
    volatile uint32_t *out = (volatile uint32_t *)RESULT;
    out[0] = t1 - t0;
    out[1] = t2 - t1;
    return 0;
}
"""


def _c_string(asm: str) -> str:
    return '"' + "\\n".join(line.strip() for line in asm.strip().splitlines()) + '"'


def build_case(case: Case, core: str, build_dir: Path | None = None) -> Path:
    """Compile ``case`` for ``core``; returns the ELF."""
    arch = get_arch(ARCH)
    index = CORE_NAMES.index(core)
    neighbour = arch.cores[(index + 1) % len(arch.cores)]
    noc = arch.noc
    niu = noc.niu_bases[0] if noc else 0
    mmio = {
        "wall": arch.wall_clock_low,
        "noc_status": niu + NOC_STATUS_OFFSET,
        "niu": niu,
        "pcbuf": arch.pcbuf_base,
        "stream": arch.stream_base,
    }[case.mmio]
    defines = {
        "ITERS": case.iters,
        "BODY": _c_string(case.body),
        "SETUP": _c_string(case.setup),
        "TEARDOWN": _c_string(case.teardown),
        "L1_DATA": f"0x{SHARED if case.shared_l1 else DATA + 0x1000 * index:x}u",
        # Another core's local RAM, above where its .data and .bss lie.
        "REMOTE": f"0x{neighbour.local_ram_alias + 0x100:x}u",
        "MMIO": f"0x{mmio:x}u",
        "WALL_CLOCK": f"0x{arch.wall_clock_low:x}u",
        "RESULT": f"0x{RESULTS + 16 * index:x}u",
    }
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    source = root / "calibration" / "calibration.c"
    source.parent.mkdir(parents=True, exist_ok=True)
    if not source.exists() or source.read_text() != _TEMPLATE:
        # Atomically: parallel test workers build from the same file, and a compiler must never
        # read one half written.
        fd, tmp = tempfile.mkstemp(suffix=".c", dir=source.parent)
        with os.fdopen(fd, "w") as out:
            out.write(_TEMPLATE)
        os.replace(tmp, source)
    return build(
        core, [source], root / "calibration" / f"{case.name}_{core}.elf", defines=defines, build_dir=root
    )


@dataclass
class Measured:
    """What one case cost on the emulator, per operation, on each core that ran it."""

    case: Case
    per_core: dict[str, float] = field(default_factory=dict)

    @property
    def emulated(self) -> float:
        values = [self.per_core[c] for c in self.case.figure_cores]
        return self.case.figure(sum(values) / len(values))

    @property
    def ratio(self) -> float:
        return self.emulated / self.case.target

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= 0.10


def run_case(
    case: Case, build_dir: Path | None = None, tile_factory: Callable[[], Tile] | None = None
) -> Measured:
    """Run ``case`` on a fresh tile; the per-operation cost on each core that ran it."""
    tile = Tile(ARCH) if tile_factory is None else tile_factory()
    for core in case.cores:
        tile.load_elf(core, build_case(case, core, build_dir))
    tile.run(max_cycles=10_000_000, release=case.cores)
    measured = Measured(case)
    for core in case.cores:
        index = CORE_NAMES.index(core)
        raw = tile.read(RESULTS + 16 * index, 8)
        body, empty = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little")
        measured.per_core[core] = (body - empty) / (case.iters * case.ops)
    return measured


def run_all(cases: Sequence[Case] = CASES, build_dir: Path | None = None) -> list[Measured]:
    """Run every case of ``cases``, in order."""
    return [run_case(case, build_dir) for case in cases]


def table(results: Sequence[Measured]) -> str:
    """The Markdown table of emulated against silicon figures (cycles per operation)."""
    lines = [
        "| figure | emulated | silicon | ratio | |",
        "|---|---:|---:|---:|---|",
    ]
    for m in results:
        status = ("ok" if m.within else "OFF") if m.case.calibrated else "not yet calibrated"
        lines.append(
            f"| {m.case.what} | {m.emulated:.3f} | {m.case.silicon_text()} | {m.ratio:.2f} | {status} |"
        )
    for what, silicon in NOT_RUN:
        lines.append(f"| {what} | - | {silicon} | - | not yet calibrated |")
    return "\n".join(lines)


def summary(results: Sequence[Measured]) -> str:
    calibrated = [m for m in results if m.case.calibrated]
    good = sum(m.within for m in calibrated)
    return f"timing_within_10pct: {good}/{len(calibrated)} figures"


__all__ = ["CASES", "NOT_RUN", "Case", "Measured", "build_case", "run_all", "run_case", "summary", "table"]
