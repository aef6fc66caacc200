"""The RISC-V timing calibration microbenchmarks, as bare-metal programs.

Each case runs the loop the silicon figure was measured with: the wall clock read
(``WALL_CLOCK_L``) around a counted loop (``beqz`` on the counter, the body, ``addi``, ``j``), then
the same loop with the measurement's empty body (nothing, or one one-cycle instruction); the cost
per operation is the difference divided by the operations run (a stream's figure: bytes per cycle).
Optional setup and teardown code runs inside both timed regions, so its cost cancels; a prologue runs
once before them (a configuration the measured program made before its clock reads), and companion
programs on other cores run alongside until the timed core is done. The bodies do
what the measured ones did, instruction for instruction (registers renamed to the harness's):
the silicon figures are the calibration list of :mod:`tensixsim.timing` (``CALIBRATION``), Blackhole
p100a microbenchmarks (cycles at 1.35 GHz; docs/timing.md names them). Besides the cores' own
instructions, the list covers tt-metal-style circular-buffer and semaphore calls, Tensix
instruction pushes and the coprocessor's semaphores, NoC requests to the own tile and DRAM, and the
coprocessor's own benches (the unpackers' matmul rows, the scalar unit's rates, the packer, the vector
unit's schedules and rates).

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
from tensixsim.chip import Chip
from tensixsim.dram import Dram
from tensixsim.isa import isa_for
from tensixsim.sdk.build import DEFAULT_BUILD_DIR, build
from tensixsim.sdk.layout import L1_USER_BASE
from tensixsim.tile import Tile

ARCH = "blackhole"
RESULTS = L1_USER_BASE + 0x100  # per core: body cycles, empty-loop cycles (16 bytes apart)
DATA = L1_USER_BASE + 0x1000  # per core: a 4 KiB L1 buffer the loads and stores use
SHARED = DATA + 0x10000  # one L1 word every core reads in the same-address case
DONE = RESULTS + 0x80  # set to 1 by the figure cores when their loops are over (for companions)
RING = L1_USER_BASE + 0x40000  # the DRAM cases' L1 pages (64 of DRAM_PAGE bytes)
# NIU counter MST_RD_RESP_RECEIVED (noc/registers.py COUNTER_BASE, Counters.md)
NOC_STATUS_OFFSET = 0x200 + 4 * 2

# Registers the bodies may use: s0 L1 data, s1 own local-RAM word, s2 another core's local RAM,
# s3 the MMIO register under test; a0..a7 and t0..t5 are scratch, t6 counts iterations.
NOP = "addi zero, zero, 0"  # the one-cycle empty body of the circular-buffer, semaphore and NoC figures


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
    empty: str = ""  # the body of the loop subtracted (the measurement's empty loop)
    subtract_empty: bool = True  # False: the figure is the whole timed region's (a stream's)
    # Run on tile SOURCE of a Chip, with the Tensix tile ``peer`` (NoC #0 coordinates) there too; its
    # coordinates are in a7 (x | y << 6) for the program's requests.
    peer: tuple[int, int] | None = None
    # Assembly run once before the first timed region (a configuration the measured program set up
    # before its clock reads).
    prologue: str = ""
    # Other cores running a program of their own (core, assembly) while the loops run, until the
    # figure cores have finished (the word at DONE turns nonzero).
    companions: tuple[tuple[str, str], ...] = ()

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
    """``text`` with ``OFF`` replaced by 0, 4, 8, ... and ``N`` by 0, 1, 2, ... (independent words
    into distinct registers)."""
    return "\n".join(text.replace("OFF", str(4 * i)).replace("N", str(i)) for i in range(count))


def _li(reg: str, value: int) -> str:
    """A 32-bit constant as the measured programs load one: lui, then addi when the low bits are
    not zero."""
    hi, lo = ((value + 0x800) >> 12) & 0xFFFFF, ((value & 0xFFF) ^ 0x800) - 0x800
    return f"lui {reg}, {hi:#x}" + (f"\naddi {reg}, {reg}, {lo}" if lo else "")


def _la(reg: str, symbol: str) -> str:
    """The address of a local-RAM symbol, in two instructions as a constant address would be."""
    return f"lui {reg}, %hi({symbol})\naddi {reg}, {reg}, %lo({symbol})"


_BH = isa_for(ARCH)


def _tensix_word(name: str, **fields: int) -> str:
    """A Tensix instruction inline in a TRISC's instruction stream (rotated left by two)."""
    word = _BH.encode(name, **fields)
    return f".word 0x{(word << 2 | word >> 30) & 0xFFFFFFFF:08x}"


# --------------------------------------------------------------------------- the core's own
_CORE = (
    Case("alu_dependent", "dependent add chain", _rept(8, "add a0, a0, a1"), 8, (1.0, 1.0)),
    Case(
        "shift_zba_zbb_dependent",
        "dependent slli / sh2add / rol / andn",
        _rept(2, "slli a0, a0, 1\nsh2add a0, a0, a1\nrol a0, a0, a1\nandn a0, a0, a2"),
        8,
        (1.0, 1.0),
    ),
    Case("lui_auipc", "lui, auipc", _rept(4, "lui a0, 1\nauipc a1, 0"), 8, (1.0, 1.0)),
    Case("branch_taken", "taken beq", _rept(8, "beq zero, zero, .+4"), 8, (1.0, 1.0)),
    Case("jal", "jal to the next instruction", _rept(8, "jal zero, .+4"), 8, (1.0, 1.0)),
    Case(
        "auipc_addi_jalr",
        "auipc + addi + jalr (per instruction)",
        "auipc a0, 0\naddi a0, a0, 12\njalr zero, 0(a0)",
        3,
        (1.0, 1.0),
    ),
    Case(
        "mul_independent",
        "independent mul",
        "mul a0, a0, a5\nmul a1, a1, a5\nmul a2, a2, a5\nmul a3, a3, a5",
        4,
        (1.0, 1.0),
    ),
    Case("mul_dependent", "dependent mul", _rept(4, "mul a0, a0, a5"), 4, (1.75, 1.75)),
    # 1 % 3 on every iteration after the first.
    Case("remu_dependent", "dependent remu", "remu a0, a0, a5", 1, (6.0, 6.0), setup="li a5, 3"),
    # 0x12345679 divided by 3 again and again: 0 after 18 divides; 10,000 iterations as measured.
    Case(
        "divu_dependent",
        "dependent divu (0x12345679 / 3, ...)",
        "divu a0, a0, a5",
        1,
        (6.023, 6.023),
        iters=10_000,
        setup=f"{_li('a0', 0x12345679)}\nli a5, 3",
    ),
    Case("fence", "fence", "fence", 1, (4.0, 4.0)),
    Case("csr_read", "csrr of cfg0", _rept(4, "csrr a0, 0x7c0"), 4, (4.0, 4.0)),
)

# --------------------------------------------------------------------------- memory
_MEMORY = (
    Case("l1_lw_fixed", "L1 lw of one word", "lw a0, 0(s0)", 1, (2.6, 2.6)),
    Case("l1_lbu_fixed", "L1 lbu of one byte", "lbu a0, 0(s0)", 1, (2.6, 2.6)),
    Case(
        "l1_lw_x4", "4 independent L1 lw (one 16-byte line)", _offsets(4, "lw aN, OFF(s0)"), 4, (1.25, 1.25)
    ),
    Case("l1_lw_x8", "8 independent L1 lw (two lines)", _offsets(8, "lw aN, OFF(s0)"), 8, (1.46, 1.63)),
    Case(
        "l1_lw_chase",
        "L1 lw chain (a word pointing at itself)",
        "lw s0, 0(s0)",
        1,
        (5.0, 5.0),
        setup="sw s0, 0(s0)",
    ),
    Case("l1_load_to_use", "L1 lw then its use", "lw a0, 0(s0)\nadd a1, a1, a0", 2, (4.5, 4.5)),
    Case(
        "l1_load_to_use_gap4",
        "L1 lw, 4 independent, then its use",
        "lw a0, 0(s0)\naddi a2, a2, 1\naddi a3, a3, 1\naddi a4, a4, 1\naddi a5, a5, 1\nadd a1, a1, a0",
        6,
        (1.5, 1.5),
    ),
    Case("l1_store", "L1 sw of one word", "sw a0, 4(s0)", 1, (1.0, 1.0)),
    Case("l1_store_x4", "4 L1 sw (one 16-byte line)", _offsets(4, "sw a0, OFF(s0)"), 4, (1.0, 1.0)),
    Case("l1_sw_lw", "L1 sw then lw of the word", "sw a0, 4(s0)\nlw a1, 4(s0)", 2, (3.25, 3.25)),
    Case("local_lw", "local RAM lw", "lw a0, 0(s1)", 1, (1.0, 1.0)),
    Case("local_lw_chase", "local RAM lw chain", "lw s1, 0(s1)", 1, (1.0, 1.0), setup="sw s1, 0(s1)"),
    Case("local_sw_lw", "local RAM sw then lw of the word", "sw a0, 4(s1)\nlw a1, 4(s1)", 2, (1.5, 1.5)),
    Case(
        "local_sw_lw_trisc2",
        "local RAM sw then lw of the word, TRISC2",
        "sw a0, 4(s1)\nlw a1, 4(s1)",
        2,
        (2.0, 2.0),
        cores=("trisc2",),
        figure_cores=("trisc2",),
    ),
    Case("remote_local_lw", "lw from another core's local RAM", "lw a0, 0(s2)", 1, (2.5, 2.5)),
    Case("mmio_wall_clock", "MMIO read: wall clock", "lw a0, 0(s3)", 1, (2.0, 2.0)),
    Case(
        "mmio_noc_status", "MMIO read: NoC status register", "lw a0, 0(s3)", 1, (2.0, 2.0), mmio="noc_status"
    ),
    # The measured read-modify-write is a load and a store of the word (two operations).
    Case(
        "l1_rmw",
        "L1 read-modify-write (lw, sw of the word)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (8.0, 8.0),
    ),
)

FIVE = CORE_NAMES
_FIVE_CORES = (
    Case(
        "five_wall_clock",
        "5 cores at once: wall-clock read",
        "lw a0, 0(s3)",
        1,
        (2.25, 2.25),
        cores=FIVE,
        figure_cores=FIVE,
    ),
    Case(
        "five_l1_same_address",
        "5 cores at once: same-address L1 read",
        "lw a0, 0(s0)",
        1,
        (2.667, 2.667),
        cores=FIVE,
        figure_cores=FIVE,
        shared_l1=True,
    ),
    Case(
        "five_l1_rmw_b_nc_t0",
        "5 cores at once: L1 read-modify-write (BRISC, NCRISC, TRISC0)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (14.5, 14.5),
        cores=FIVE,
        figure_cores=("brisc", "ncrisc", "trisc0"),
        shared_l1=True,
        calibrated=False,
    ),
    Case(
        "five_l1_rmw_t1_t2",
        "5 cores at once: L1 read-modify-write (TRISC1, TRISC2)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (10.5, 10.5),
        cores=FIVE,
        figure_cores=("trisc1", "trisc2"),
        shared_l1=True,
        calibrated=False,
    ),
    Case(
        "five_remote_local_lw",
        "5 cores at once: lw from another core's local RAM",
        "lw a0, 0(s2)",
        1,
        (17.0, 17.0),
        cores=FIVE,
        figure_cores=FIVE,
    ),
)

# --------------------------------------------------------------------------- circular buffers, semaphores
# tt-metal-style circular-buffer calls on ready buffers, as the measured ones make them: the CB's
# interface is a struct in the core's local RAM (cb_iface: fifo_size, fifo_limit, page_size,
# num_pages, rd_ptr, wr_ptr, then received << 16 | acked), its page counters stream 8's tiles-acked
# and tiles-received registers. The buffer never wraps. a0 the interface, a1..a5 scratch.
STREAM_ACKED = 0xFFB48020
STREAM_RECEIVED = 0xFFB48028


def _cb_setup(received: int, acked: int) -> str:
    return "\n".join(
        (
            _la("a0", "cb_iface"),
            "li a1, 0x1000000\nsw a1, 0(a0)\nli a1, 0x7ffffff0\nsw a1, 4(a0)\nli a1, 2048\nsw a1, 8(a0)",
            "li a1, 32768\nsw a1, 12(a0)\nsw zero, 16(a0)\nsw zero, 20(a0)",
            f"{_li('a1', received << 16 | acked)}\nsw a1, 24(a0)",
            f"{_li('a2', STREAM_RECEIVED)}\nli a1, {received}\nsw a1, 0(a2)",
            f"{_li('a2', STREAM_ACKED)}\nli a1, {acked}\nsw a1, 0(a2)\nfence",
        )
    )


_CB_WAIT_FRONT = (
    f"{_la('a0', 'cb_iface')}\nlw a1, 24(a0)\nslli a2, a1, 16\nsrli a2, a2, 16\nli a5, 1\n"
    f"3:\n{_li('a3', STREAM_RECEIVED)}\nlhu a3, 0(a3)\nsub a4, a3, a2\nli a5, 1\nbgeu a4, a5, 4f\n"
    "fence\nj 3b\n4:\nfence"
)
_CB_RESERVE_BACK = (
    f"{_la('a0', 'cb_iface')}\nlw a1, 24(a0)\nsrli a1, a1, 16\n"
    f"3:\n{_li('a2', STREAM_ACKED)}\nlhu a2, 0(a2)\nsub a3, a1, a2\nlw a4, 12(a0)\nsub a3, a4, a3\n"
    "li a5, 1\nbge a3, a5, 4f\nfence\nj 3b\n4:\nfence"
)
_CB_WR_PTR = (
    "lw a1, 20(a0)\nlw a2, 8(a0)\nadd a1, a1, a2\nlw a2, 4(a0)\nbltu a1, a2, 3f\nlw a2, 0(a0)\n"
    "sub a1, a1, a2\n3:\nsw a1, 20(a0)"
)
_CB_RD_PTR = (
    "lw a1, 16(a0)\nlw a2, 8(a0)\nadd a1, a1, a2\nlw a2, 4(a0)\nbltu a1, a2, 3f\nlw a2, 0(a0)\n"
    "sub a1, a1, a2\n3:\nsw a1, 16(a0)"
)
# The page counter: received (a5) + 1 into the packed word, and written to the stream register.
_CB_RECEIVED = (
    f"lw a3, 24(a0)\nslli a4, a3, 16\nsrli a4, a4, 16\nsrli a5, a3, 16\naddi a5, a5, 1\nslli a5, a5, 16\n"
    f"or a3, a5, a4\nsw a3, 24(a0)\nsrli a5, a5, 16\n{_li('a2', STREAM_RECEIVED)}\nsw a5, 0(a2)"
)
_CB_ACKED = (
    "lw a3, 24(a0)\nslli a4, a3, 16\nsrli a4, a4, 16\nsrli a5, a3, 16\naddi a4, a4, 1\nslli a4, a4, 16\n"
    f"srli a4, a4, 16\nslli a5, a5, 16\nor a3, a5, a4\nsw a3, 24(a0)\n{_li('a2', STREAM_ACKED)}\n"
    "sw a4, 0(a2)"
)


def _cb_tensix(value: str, gpr16: int, wait: int, gpr: int, register: int) -> str:
    """The TRISC calls' coprocessor path: SETDMAREG of the count into a GPR (a word built at run time,
    pushed through the instruction buffer), STALLWAIT on the packer or unpackers, STOREREG of the GPR
    into the stream register (pushed)."""
    setdmareg = _BH.encode(
        "SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=0, set_signals_mode=0, reg_index_16b=gpr16
    )
    storereg = _BH.encode("STOREREG", tdma_data_reg_index=gpr, reg_addr=(register >> 2) & 0x3FFFF)
    return (
        f"slli a2, {value}, 8\n{_li('a1', setdmareg)}\nadd a2, a2, a1\nlui a1, 0xffe40\nsw a2, 0(a1)\n"
        f"{_tensix_word('STALLWAIT', stall_res=0x20, wait_res=wait)}\n{_li('a3', storereg)}\nsw a3, 0(a1)"
    )


_CB_PUSH_BACK = f"{_la('a0', 'cb_iface')}\n{_CB_WR_PTR}\n{_CB_RECEIVED}\nfence"
_CB_POP_FRONT = f"{_la('a0', 'cb_iface')}\n{_CB_ACKED}\n{_CB_RD_PTR}\nfence"
_CB_PUSH_BACK_TENSIX = (
    f"{_la('a0', 'cb_iface')}\n{_CB_WR_PTR}\n{_CB_RECEIVED}\n"
    f"{_cb_tensix('a5', 48, 0x8, 24, STREAM_RECEIVED)}\nfence"
)
_CB_POP_FRONT_TENSIX = (
    f"{_la('a0', 'cb_iface')}\n{_CB_ACKED}\n{_cb_tensix('a4', 8, 0x6, 4, STREAM_ACKED)}\n{_CB_RD_PTR}\nfence"
)

# A semaphore in L1 (SEM), as tt-metal's noc_semaphore_set / noc_semaphore_wait: a store and a
# fence; fences around loads until the value is there (it is).
SEM = L1_USER_BASE + 0x30100
_SEM_SET = f"{_li('a0', SEM)}\nli a1, 1\nsw a1, 0(a0)\nfence"
_SEM_WAIT = f"{_li('a0', SEM)}\nli a2, 1\n3:\nfence\nlw a1, 0(a0)\nbeq a1, a2, 4f\nj 3b\n4:\nfence"

# The coprocessor's semaphore 1 (sem_sel bit 1) from TRISC2, and the sync through the PC buffer's
# done check (a store and a load of it: the load returns once the pipe has executed everything).
PC_BUF_SYNC = 0xFFE80004
_SYNC = f"{_li('a0', PC_BUF_SYNC)}\nsw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"


def _seminit(init: int) -> str:
    return f"{_tensix_word('SEMINIT', max_value=15, init_value=init, sem_sel=2)}\n{_SYNC}"


def _cb_case(name: str, what: str, body: str, silicon: float, received: int, acked: int, **kw) -> Case:
    return Case(name, what, body, 1, (silicon, silicon), setup=_cb_setup(received, acked), empty=NOP, **kw)


TRISC2 = {"cores": ("trisc2",), "figure_cores": ("trisc2",)}
_SYNC_CASES = (
    _cb_case("cb_wait_front", "cb_wait_front, ready (BRISC)", _CB_WAIT_FRONT, 22.0, 1, 0),
    _cb_case("cb_reserve_back", "cb_reserve_back, room (BRISC)", _CB_RESERVE_BACK, 23.0, 0, 0),
    _cb_case("cb_push_back", "cb_push_back (BRISC)", _CB_PUSH_BACK, 31.0, 1004, 0),
    _cb_case("cb_pop_front", "cb_pop_front (BRISC)", _CB_POP_FRONT, 31.5, 1004, 0),
    _cb_case(
        "cb_push_back_trisc2",
        "cb_push_back with the coprocessor's STOREREG (TRISC2)",
        _CB_PUSH_BACK_TENSIX,
        41.0,
        1004,
        0,
        **TRISC2,
    ),
    _cb_case(
        "cb_pop_front_trisc2",
        "cb_pop_front with the coprocessor's STOREREG (TRISC2)",
        _CB_POP_FRONT_TENSIX,
        41.5,
        1004,
        0,
        **TRISC2,
    ),
    Case("noc_semaphore_set", "noc_semaphore_set (BRISC)", _SEM_SET, 1, (12.0, 12.0), empty=NOP),
    Case(
        "noc_semaphore_wait",
        "noc_semaphore_wait, already satisfied (BRISC)",
        _SEM_WAIT,
        1,
        (19.1, 19.1),
        setup=f"{_li('a0', SEM)}\nli a1, 1\nsw a1, 0(a0)\nfence",
        empty=NOP,
    ),
    Case(
        "ttsem_drain",
        "TTSEMPOST + TTSEMGET + drain (TRISC2)",
        f"{_tensix_word('SEMPOST', sem_sel=2)}\n{_tensix_word('SEMGET', sem_sel=2)}\n{_SYNC}",
        1,
        (9.0, 9.0),
        setup=_seminit(1),
        empty=NOP,
        **TRISC2,
    ),
    Case(
        "ttsemwait_drain",
        "TTSEMWAIT (satisfied) + drain (TRISC2)",
        f"{_tensix_word('SEMWAIT', stall_res=2, sem_sel=2, wait_sem_cond=2)}\n{_SYNC}",
        1,
        (8.0, 8.0),
        setup=_seminit(0),
        empty=NOP,
        **TRISC2,
    ),
)

# --------------------------------------------------------------------------- Tensix instruction pushes
# TRISC1 stores instruction words to the instruction buffer (a3), then syncs through the PC buffer.
_PUSH_SETUP = (
    f"lui a3, 0xffe40\n{_li('a0', PC_BUF_SYNC)}\n{_li('a2', _BH.encode('NOP'))}\n"
    f"{_li('a4', _BH.encode('STALLWAIT', stall_res=0, wait_res=0))}\n"
    f"{_li('a5', _BH.encode('SEMINIT', max_value=1, init_value=0, sem_sel=2))}"
)
_PUSH_SYNC = "sw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"
TRISC1 = {"cores": ("trisc1",), "figure_cores": ("trisc1",), "setup": _PUSH_SETUP}
_PUSH_CASES = (
    Case("push_sync_empty", "PC-buffer sync, nothing pushed (TRISC1)", _PUSH_SYNC, 1, (5.98, 5.98), **TRISC1),
    Case("push_nop", "NOP pushed (TRISC1)", _rept(8, "sw a2, 0(a3)"), 8, (0.995, 0.995), **TRISC1),
    Case(
        "push_nop_sync",
        "NOP pushed, then a sync (per push, TRISC1)",
        f"{_rept(8, 'sw a2, 0(a3)')}\n{_PUSH_SYNC}",
        8,
        (1.999, 1.999),
        **TRISC1,
    ),
    Case(
        "push_stallwait",
        "STALLWAIT with nothing to wait for, pushed (TRISC1)",
        _rept(8, "sw a4, 0(a3)"),
        8,
        (1.542, 1.542),
        **TRISC1,
    ),
    Case("push_seminit", "SEMINIT pushed (TRISC1)", _rept(4, "sw a5, 0(a3)"), 4, (0.99, 0.99), **TRISC1),
    Case(
        "push_seminit_sync",
        "SEMINIT pushed, then a sync (per push, TRISC1)",
        f"{_rept(4, 'sw a5, 0(a3)')}\n{_PUSH_SYNC}",
        4,
        (2.998, 2.998),
        **TRISC1,
    ),
)

# --------------------------------------------------------------------------- NoC
# Requests through NIU #0 as the measured programs issue them: a read through request initiator 1,
# a write through initiator 0, an atomic through initiator 3; for each, wait until its NOC_CMD_CTRL
# reads 0, write the fields (CTRL: a static virtual channel, the response marked), write
# NOC_CMD_CTRL, count the request in a register (a4); a flush / barrier polls the NIU counter until
# it reaches that count, then fences. a6: this tile's coordinates; s0 the source, a2 = s0 + 0x400
# the destination; a3 the length.
NIU = 0xFFB20000
_NOC_SETUP = "lw a6, 0x44(s3)\nslli a6, a6, 20\nsrli a6, a6, 20\naddi a2, s0, 0x400"


def _ready(initiator: int) -> str:
    return f"{_li('t3', NIU + 0x800 * initiator + 0x40)}\n3:\nlw t4, 0(t3)\nbne t4, zero, 3b"


def _noc_read(coordinates: str = "a6") -> str:
    return (
        f"{_ready(1)}\n{_li('t3', NIU + 0x800 + 0x1C)}\n{_li('t4', 0x2090)}\nsw t4, 0(t3)\n"
        f"sw a2, -16(t3)\nsw zero, -12(t3)\nsw a6, -8(t3)\nsw s0, -28(t3)\nsw zero, -24(t3)\n"
        f"sw {coordinates}, -20(t3)\nsw a3, 4(t3)\nsw zero, 8(t3)\naddi t4, zero, 1\nsw t4, 36(t3)\n"
        "addi a4, a4, 1"
    )


def _noc_write(coordinates: str = "a6") -> str:
    return (
        f"{_ready(0)}\n{_li('t3', NIU + 0x1C)}\n{_li('t4', 0x2092)}\nsw t4, 0(t3)\nsw s0, -28(t3)\n"
        f"sw a2, -16(t3)\nsw zero, -12(t3)\nsw {coordinates}, -8(t3)\nsw a3, 4(t3)\nsw zero, 8(t3)\n"
        "addi t4, zero, 1\nsw t4, 36(t3)\naddi a4, a4, 1"
    )


def _noc_wait(counter: int) -> str:
    return f"{_li('t3', NIU + 0x200 + 4 * counter)}\n4:\nlw t4, 0(t3)\nbltu t4, a4, 4b\nfence"


_WR_ACK, _RD_RESP, _AT_RESP = 1, 2, 0  # NIU counters MST_WR_ACK_RECEIVED, MST_RD_RESP_RECEIVED, ...


def _noc_setup(size: int, counter: int) -> str:
    # The write's source coordinates (initiator 0's TARG_ADDR_MID / _COORDINATE) as firmware sets
    # them once; the software counter starts at the NIU's.
    return (
        f"{_NOC_SETUP}\nsw zero, 0x04(s3)\nsw a6, 0x08(s3)\nli a3, {size}\nlw a4, {0x200 + 4 * counter}(s3)"
    )


def _noc_read_case(size: int, silicon: float) -> Case:
    return Case(
        f"noc_read_{size}",
        f"NoC own tile: {size} B read + flush",
        f"{_noc_read()}\n{_noc_wait(_RD_RESP)}",
        1,
        (silicon, silicon),
        mmio="niu",
        setup=_noc_setup(size, _RD_RESP),
        empty=NOP,
    )


# An atomic increment of the semaphore word at s0 by one, its response (the old value) to a2:
# initiator 3, CTRL atomic | response marked | static VC, AT_LEN_BE increment of word 0 (0x107C),
# AT_DATA 1; the NIU counter read first, then waited for (own coordinates read from local RAM).
_NOC_ATOMIC = (
    f"{_la('t2', 'noc_xy')}\nlbu t0, 0(t2)\nlbu t1, 1(t2)\nslli t1, t1, 6\nor a5, t0, t1\n"
    f"{_li('t0', NIU + 0x200)}\nlw a4, 0(t0)\naddi a4, a4, 1\n{_ready(3)}\n"
    f"{_li('t0', NIU + 0x1800 + 0x0C)}\naddi t1, a2, 0\nsw t1, 0(t0)\nsw zero, 4(t0)\nsw a5, 8(t0)\n"
    f"sw s0, -12(t0)\nsw zero, -8(t0)\nsw a5, -4(t0)\n{_li('t1', 0x2091)}\nsw t1, 16(t0)\n"
    f"{_li('t1', 0x107C)}\nsw t1, 20(t0)\nsw zero, 24(t0)\naddi t1, zero, 1\nsw t1, 28(t0)\n"
    f"addi t1, zero, 1\nsw t1, 52(t0)\n{_li('t0', NIU + 0x200)}\n5:\nlw t1, 0(t0)\nbltu t1, a4, 5b"
)
# This tile's x and y (bytes) in local RAM, where the atomic's program reads them.
_NOC_XY = f"{_NOC_SETUP}\n{_la('t2', 'noc_xy')}\nandi t0, a6, 63\nsb t0, 0(t2)\nsrli t0, a6, 6\nsb t0, 1(t2)"

STREAM_BYTES = 8192
SOURCE = (1, 2)  # the tile the peer cases run on (the measurements': logical and NoC #0 (1, 2))


def _peer_case(kind: str, size: int, peer: tuple[int, int], silicon: float) -> Case:
    """A read + flush or write + barrier of ``size`` bytes between SOURCE and another Tensix tile."""
    x, y = peer
    request, counter = (_noc_read("a7"), _RD_RESP) if kind == "read" else (_noc_write("a7"), _WR_ACK)
    what = f"{size} B read + flush" if kind == "read" else f"{size} B write + barrier"
    return Case(
        f"noc_peer_{kind}_{size}_{x}_{y}",
        f"NoC peer {peer}: {what}",
        f"{request}\n{_noc_wait(counter)}",
        1,
        (silicon, silicon),
        mmio="niu",
        setup=f"{_noc_setup(size, counter)}\nli a7, {x | y << 6}",
        empty=NOP,
        peer=peer,
    )


_NOC_CASES = (
    Case(
        "noc_read_4_issue",
        "NoC own tile: 4 B read, issue only",
        _noc_read(),
        1,
        (24.97, 24.97),
        mmio="niu",
        setup=_noc_setup(4, _RD_RESP),
        empty=NOP,
    ),
    Case(
        "noc_write_4_issue",
        "NoC own tile: 4 B write, issue only",
        _noc_write(),
        1,
        (22.98, 22.98),
        mmio="niu",
        setup=_noc_setup(4, _WR_ACK),
        empty=NOP,
    ),
    Case(
        "noc_write_4",
        "NoC own tile: 4 B write + barrier",
        f"{_noc_write()}\n{_noc_wait(_WR_ACK)}",
        1,
        (69.0, 69.0),
        mmio="niu",
        setup=_noc_setup(4, _WR_ACK),
        empty=NOP,
    ),
    _noc_read_case(4, 79.0),
    _noc_read_case(16, 71.0),
    _noc_read_case(64, 71.0),
    _noc_read_case(256, 79.0),
    # Another tile: its east neighbour, and one 13 columns on (NoC #0 goes east and wraps, so a request
    # and its response go once round the row whatever the distance: the measurements are flat too).
    _peer_case("read", 4, (2, 2), 230.96),
    _peer_case("read", 64, (2, 2), 222.96),
    _peer_case("write", 4, (2, 2), 228.96),
    _peer_case("write", 64, (2, 2), 221.07),
    _peer_case("read", 4, (14, 2), 231.0),
    _peer_case("write", 4, (14, 2), 229.0),
    Case(
        "noc_atomic",
        "local NoC atomic increment with response",
        _NOC_ATOMIC,
        1,
        (99.0, 99.0),
        mmio="niu",
        setup=_NOC_XY,
        empty=NOP,
    ),
    Case(
        "noc_write_stream",
        "NoC one-source write stream (B/cycle)",
        _noc_write(),
        1,
        (63.0, 64.7),
        mmio="niu",
        setup=_noc_setup(STREAM_BYTES, _WR_ACK),
        teardown=_noc_wait(_WR_ACK),
        bytes_per_op=STREAM_BYTES,
    ),
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


def _dram_setup(counter: int) -> str:
    dram = Dram.new(get_arch(ARCH))
    assert dram is not None
    x, y = dram.endpoint(0)
    return (
        f"lw a5, 0x44(s3)\nslli a5, a5, 20\nsrli a5, a5, 20\nsw zero, 0x04(s3)\nsw a5, 0x08(s3)\n"
        f"lw a7, {0x200 + 4 * counter}(s3)\n{_la('t2', 'bank_table')}\nli t0, {x | y << 6}\n"
        + "\n".join(f"sh t0, {2 * i}(t2)" for i in range(DRAM_BANKS))
        + f"\nli a3, {DRAM_BANKS}\nli a4, {DRAM_PAGE}\nli a6, 0\nli s1, {DRAM_BASE}\nli s2, 0\nli s3, 0\n"
        f"{_li('s0', RING)}"
    )


_DRAM_ADDRESS = (
    "add a1, s2, a6\nmul a1, a1, a3\nadd a1, a1, s3\naddi a0, s1, 0\naddi a2, a3, 0\naddi t0, a1, 0\n"
    "remu a1, t0, a2\ndivu t0, t0, a2\nslli t0, t0, 11\nadd a0, a0, t0\naddi t1, a1, 0\nslli t1, t1, 1\n"
    f"{_la('t2', 'bank_table')}\nadd t2, t2, t1\nlhu a2, 0(t2)\nandi t5, a6, 63\nmul t5, t5, a4\n"
    f"{_li('t2', RING)}\nadd t5, t5, t2"
)
_DRAM_READ = (
    f"{_DRAM_ADDRESS}\n{_ready(1)}\n{_li('t3', NIU + 0x800 + 0x1C)}\n{_li('t4', 0x2090)}\nsw t4, 0(t3)\n"
    "sw t5, -16(t3)\nsw zero, -12(t3)\nsw a5, -8(t3)\nsw a0, -28(t3)\nsw zero, -24(t3)\nsw a2, -20(t3)\n"
    "sw a4, 4(t3)\nsw zero, 8(t3)\naddi t4, zero, 1\nsw t4, 36(t3)\naddi a7, a7, 1\naddi a6, a6, 1"
)
_DRAM_WRITE = (
    f"{_DRAM_ADDRESS}\n{_ready(0)}\n{_li('t3', NIU + 0x1C)}\n{_li('t4', 0x2092)}\nsw t4, 0(t3)\n"
    "sw t5, -28(t3)\nsw a0, -16(t3)\nsw zero, -12(t3)\nsw a2, -8(t3)\nsw a4, 4(t3)\nsw zero, 8(t3)\n"
    "addi t4, zero, 1\nsw t4, 36(t3)\naddi a7, a7, 1\naddi a6, a6, 1"
)


def _dram_wait(counter: int) -> str:
    return f"{_li('t3', NIU + 0x200 + 4 * counter)}\n4:\nlw t4, 0(t3)\nbltu t4, a7, 4b\nfence"


_DRAM_CASES = (
    Case(
        "dram_read",
        "DRAM interleaved read, one core (B/cycle)",
        _DRAM_READ,
        1,
        (26.86, 26.86),
        iters=DRAM_PAGES,
        mmio="niu",
        setup=_dram_setup(_RD_RESP),
        teardown=_dram_wait(_RD_RESP),
        bytes_per_op=DRAM_PAGE,
        subtract_empty=False,
    ),
    Case(
        "dram_write",
        "DRAM interleaved write, one core (B/cycle)",
        _DRAM_WRITE,
        1,
        (27.63, 27.63),
        iters=DRAM_PAGES,
        mmio="niu",
        setup=_dram_setup(_WR_ACK),
        teardown=_dram_wait(_WR_ACK),
        bytes_per_op=DRAM_PAGE,
        subtract_empty=False,
    ),
)

# --------------------------------------------------------------------------- the unpackers
# The matmul unpack bench (TRISC0; blackhole-py examples/microbench_unpack_backend.py): each row
# waits until it is at most two rows ahead (semaphore 5, UNPACK_SYNC, read on the PC-buffer page),
# writes its in1 (SrcA) and in0 (SrcB) tiles' L1 addresses into the unpackers' base-address
# registers of the current configuration context (0 or 1, alternating), posts the semaphore, then
# pushes STALLWAIT (unpack instructions wait for those stores), UNPACR of in0 into SrcB, a MOP that
# plays the context's replay twice (UNPACR of in1 into SrcA, then RDCFG / ADDDMAREG / STALLWAIT /
# WRCFG moving the base address one tile on, NOP), SEMGET of the semaphore and SETC16 flipping the
# context. Every UNPACR hands its bank to the matrix unit (SetDatValid): TRISC1 hands them back,
# pushing SETRWC(FlipSrcA | FlipSrcB) again and again until the figure core is done (DONE).
# Registers (the harness's in brackets): s3 semaphore 5 [s7], s0 / s1 the in0 / in1 tiles' first
# 16-byte unit [s0 / s1], a4 = a5 one tile in 16-byte units [a4 / a5], s2 / a6 unpacker 0's / 1's
# base-address register of context 0 [s4 / s5], a7 the context word in local RAM [s11], a2 / a3 the
# in0 / in1 tile index [s9 / s10].
UNPACK_IN0 = 0x57000  # the harness's SCRATCH0 and SCRATCH1 (L1 bytes)
UNPACK_IN1 = 0x97000
UNPACK_TILE = 2048  # one 32x32 BF16 tile
UNPACK_SYNC_SEM = 0xFFE80034  # semaphore 5 on the PC-buffer page
INSTRN_BUF = 0xFFE40000
MOP_CFG = 0xFFB80000
MOP_SYNC = 0xFFE80008  # the MOP expander's done check
TENSIX_CFG = 0xFFEF0000
GPRS = 0xFFE00000  # the thread's own GPRs


def _word(name: str, **fields: int) -> int:
    """A Tensix instruction word; the fields not given are zero."""
    return _BH.encode(name, **({f.name: 0 for f in _BH.by_name[name].fields} | fields))


def _write32(address: int, value: int) -> str:
    """A RISC-V store of a constant (``t0`` the address, ``t1`` the value)."""
    return f"{_li('t0', address)}\n" + (
        "sw zero, 0(t0)" if value == 0 else f"{_li('t1', value)}\nsw t1, 0(t0)"
    )


def _push(word: int) -> str:
    """A Tensix instruction pushed by a store to the instruction buffer (not inline)."""
    return _write32(INSTRN_BUF, word)


def _done_check(address: int) -> str:
    return f"{_li('t0', address)}\nsw zero, 0(t0)\nlw t1, 0(t0)\nand zero, zero, t1"


def _inline(word: int) -> str:
    return f".word 0x{(word << 2 | word >> 30) & 0xFFFFFFFF:08x}"


def _unpacr(srcb: int, addr_mode: int = 0) -> int:
    # MultiContextMode (the context from UNPACK_MISC_CFG_CfgContextOffset), FlipSrc, Last
    return _word(
        "UNPACR", unpack_block_selection=srcb, addr_mode=addr_mode, ovrd_thread_id=1, set_dat_valid=1, last=1
    )


def _replay_words(cfg_reg: int) -> tuple[int, ...]:
    """The replay of one context: UNPACR of in1, then its base address (``cfg_reg``) one tile on
    (GPR 36 holds a tile in 16-byte units)."""
    return (
        _unpacr(0),
        _word("RDCFG", gpr_address=12, cfg_reg=cfg_reg),
        _word("ADDDMAREG", op_b_is_const=0, result_reg_index=12, op_b_reg_index=12, op_a_reg_index=36),
        _word("STALLWAIT", stall_res=0x80, wait_res=0x1),
        _word("WRCFG", gpr_address=12, wr128b=0, cfg_reg=cfg_reg),
        _word("NOP"),
    )


def _setc16(reg: int, value: int) -> int:
    return _word("SETC16", setc16_reg=reg, setc16_value=value)


_BASE0 = 76  # THCON_SEC0_REG3_Base_address; THCON_SEC1_REG3_Base_address is 124, cntx1 the next word
_CFG_CONTEXT = 41  # ThreadConfig UNPACK_MISC_CFG (CfgContextOffset_0 / _1)
_UNPACK_MOP = (
    0,
    0,
    0,
    _word("REPLAY", start_idx=0, len=6, execute_while_loading=0, load_mode=0),
    0,
    0,
    0,
    _word("REPLAY", start_idx=6, len=6, execute_while_loading=0, load_mode=0),
    0,
)


def _mop_config(words: Sequence[int]) -> str:
    return f"{_done_check(MOP_SYNC)}\n" + "\n".join(_write32(MOP_CFG + 4 * i, w) for i, w in enumerate(words))


# Unpack.init(Float16_b, 2048-byte tiles, the matmul MOP) and the harness's set-up, once, as
# measured: register writes by RISC-V stores (configuration state 0), instruction pushes, inline words.
_UNPACK_PROLOGUE = "\n".join(
    (
        _inline(_setc16(0, 0)),  # CFG_STATE_ID 0
        f"{_la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        _inline(_setc16(_CFG_CONTEXT, 0)),
        _inline(_word("ZEROSRC", zero_val=0, write_mode=0, bank_mask=1, src_mask=3)),
        _inline(_setc16(0, 0)),
        # semaphore 5 reads 0
        f"{_li('t0', UNPACK_SYNC_SEM)}\n1:\nlw t1, 0(t0)\nandi t1, t1, 0xFF\nbeq t1, zero, 2f\nfence\nj 1b",
        "2:",
        _inline(_word("SETADCXY", cnt_set_mask=3, ch1_y=0, ch1_x=0, ch0_y=0, ch0_x=0, bit_mask=0xB)),
        _inline(_word("SETADCZW", cnt_set_mask=3, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0, bit_mask=0xF)),
        _write32(TENSIX_CFG + 4 * 57, 0x200),  # UNP0_ADDR_CTRL_ZW_REG_1 Zstride
        _write32(TENSIX_CFG + 4 * 59, 0x200),  # UNP1_ADDR_CTRL_ZW_REG_1 Zstride
        _inline(_word("ATGETM", mutex_index=0)),
        # ALU_FORMAT_SPEC_REG, ALU_FORMAT_SPEC_REG0/1/2 and ALU_ACC_CTRL, ALU_ACC_CTRL_Zero_Flag
        *(
            _push(_word(f"RMWCIB{byte}", mask=mask, data=data, cfg_reg_addr=reg))
            for byte, mask, data, reg in (
                (0, 0xFF, 0, 0),
                (1, 0x7F, 0, 0),
                (0, 0x07, 0, 1),
                (1, 0x80, 0, 1),
                (2, 0x01, 0, 1),
                (3, 0x60, 0, 1),
                (0, 0x01, 1, 2),
            )
        ),
        _inline(_word("ATRELM", mutex_index=0)),
        # Tile descriptors: BF16, uncompressed, Y 1, Z 4 (unpacker 1: X 256)
        _write32(TENSIX_CFG + 4 * 64, 0x15),
        _write32(TENSIX_CFG + 4 * 65, 0x00040001),
        _write32(TENSIX_CFG + 4 * 112, 0x01000015),
        _write32(TENSIX_CFG + 4 * 113, 0x00040001),
        # THCON_SEC0/1_REG2: out BF16, Throttle_mode 2 (x4); contexts 0..7 uncompressed
        _write32(TENSIX_CFG + 4 * 72, 0x25),
        _write32(TENSIX_CFG + 4 * 73, 0x000F000F),
        _write32(TENSIX_CFG + 4 * 120, 0x25),
        _write32(TENSIX_CFG + 4 * 121, 0x000F000F),
        _push(_word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        _push(_word("SETADCXX", cnt_set_mask=2, x_end2=255, x_start=0)),
        _write32(TENSIX_CFG + 4 * 84, 0x00400040),  # THCON_SEC0_REG5_Dest_cntx0/1_address
        _write32(TENSIX_CFG + 4 * 86, 0x01000100),  # THCON_SEC0_REG5_Tile_x_dim_cntx0/1
        _write32(TENSIX_CFG + 4 * 50, 0x100),  # UNP0_ADD_DEST_ADDR_CNTR
        *(_write32(GPRS + 4 * (40 + i), (0x100 >> i) * 0x10001) for i in range(5)),  # face dimensions
        _inline(_setc16(5, 4)),  # SRCA_SET_SetOvrdWithAddr
        f"{_la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        _inline(_setc16(_CFG_CONTEXT, 0)),
        # GPR 36 / 37 low halves: a tile in 16-byte units
        _push(
            _word(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=UNPACK_TILE >> 4,
                set_signals_mode=0,
                reg_index_16b=72,
            )
        ),
        _push(
            _word(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=UNPACK_TILE >> 4,
                set_signals_mode=0,
                reg_index_16b=74,
            )
        ),
        _push(_word("RMWCIB1", mask=1, data=0, cfg_reg_addr=72)),
        _inline(_word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        _push(_word("RMWCIB1", mask=1, data=0, cfg_reg_addr=72)),
        _inline(_word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        _mop_config(_UNPACK_MOP),
        _done_check(PC_BUF_SYNC),
        # The harness: whole tiles (X 0..1023), the two replays, semaphore 5 with maximum 2.
        _inline(_word("SETADCXX", cnt_set_mask=1, x_end2=1023, x_start=0)),
        _inline(_word("SETADCXX", cnt_set_mask=2, x_end2=1023, x_start=0)),
        _inline(_word("REPLAY", start_idx=0, len=6, execute_while_loading=0, load_mode=1)),
        *(_inline(w) for w in _replay_words(_BASE0)),
        _inline(_word("REPLAY", start_idx=6, len=6, execute_while_loading=0, load_mode=1)),
        *(_inline(w) for w in _replay_words(_BASE0 + 1)),
        _inline(_word("SEMINIT", max_value=2, init_value=0, sem_sel=1 << 5)),
        _done_check(PC_BUF_SYNC),
        f"{_la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        _inline(_setc16(_CFG_CONTEXT, 0)),
    )
)
# The harness's registers, loaded before the clock read. The base addresses are in 16-byte units
# minus one, as the registers take them: the harness wrote byte addresses (tile * 2048 + 0x57000 - 1),
# which as 16-byte units lie far beyond L1.
_UNPACK_SETUP = "\n".join(
    (
        _li("s0", UNPACK_IN0 >> 4),
        _li("s1", UNPACK_IN1 >> 4),
        f"li a4, {UNPACK_TILE >> 4}\nli a5, {UNPACK_TILE >> 4}",
        _li("s3", UNPACK_SYNC_SEM),
        _la("a7", "unpack_ctx"),
        _li("s2", TENSIX_CFG + 4 * _BASE0),
        _li("a6", TENSIX_CFG + 4 * 124),
    )
)
_UNPACK_ROW = "\n".join(
    (
        "1:\nlw t1, 0(s3)\nandi t1, t1, 0xFE\nbeq t1, zero, 2f\nfence\nj 1b",
        "2:\nmul a0, a2, a4\nadd a0, a0, s0\naddi a0, a0, -1",
        "mul a1, a3, a5\nadd a1, a1, s1\naddi a1, a1, -1",
        "lw t2, 0(a7)\naddi t3, s2, 0\nbeq t2, zero, 3f\naddi t3, t3, 4\n3:\nsw a1, 0(t3)",
        "addi t3, a6, 0\nbeq t2, zero, 3f\naddi t3, t3, 4\n3:\nsw a0, 0(t3)",
        "sw zero, 0(s3)",
        _inline(_word("STALLWAIT", stall_res=0x8, wait_res=0x400)),
        _inline(_unpacr(1)),
        # template 0, one pass, mask 0 / 0xFF: the context's replay twice
        f"bne t2, zero, 4f\n{_inline(_word('MOP', loop_count=1))}\nj 5f",
        f"4:\n{_inline(_word('MOP', loop_count=1, zmask_lo16_or_loop_count=0xFF))}",
        f"5:\n{_inline(_word('SEMGET', sem_sel=1 << 5))}",
        "addi t3, zero, 1\nsub t3, t3, t2\nsw t3, 0(a7)",
        f"beq t2, zero, 6f\n{_inline(_setc16(_CFG_CONTEXT, 0))}\nj 7f",
        f"6:\n{_inline(_setc16(_CFG_CONTEXT, 0x101))}\n7:",
    )
)


def _unpack_subblock(bw: int) -> str:
    """One 2x2 output subblock of a matmul with inner dimension ``bw``: 2 * bw rows."""
    rows = [_inline(_word("SETADCZW", cnt_set_mask=3, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0, bit_mask=0xF))]
    for inner in range(bw):
        rows.append(f"addi a2, zero, {inner}\naddi a3, zero, {2 * inner}\n{_UNPACK_ROW}")
        rows.append(f"addi a2, zero, {bw + inner}\n{_UNPACK_ROW}")
    return "\n".join(rows)


# TRISC1 hands the Src banks back: SETRWC(FlipSrcA | FlipSrcB, SrcA and SrcB counters 0) until DONE.
_CLEAR_VALID = (
    f"{_li('a0', DONE)}\n1:\nlw t0, 0(a0)\nbne t0, zero, 2f\n"
    f"{_inline(_word('SETRWC', clear_ab_vld=3, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=3))}\nj 1b\n2:"
)


def _unpack_case(name: str, what: str, body: str, ops: int, silicon: float, **kw) -> Case:
    return Case(
        name,
        what,
        body,
        ops,
        (silicon, silicon),
        cores=("trisc0",),
        figure_cores=("trisc0",),
        iters=10,
        prologue=_UNPACK_PROLOGUE,
        setup=_UNPACK_SETUP,
        empty=NOP,
        companions=(("trisc1", _CLEAR_VALID),),
        **kw,
    )


_UNPACK_CASES = (
    _unpack_case(
        "unpack_subblock_bw1",
        "matmul unpack, 2x2 subblock, inner 1 (per subblock, TRISC0)",
        _unpack_subblock(1),
        1,
        74.6,
    ),
    _unpack_case(
        "unpack_subblock_bw4",
        "matmul unpack, 2x2 subblock, inner 4 (per subblock, TRISC0)",
        _unpack_subblock(4),
        1,
        300.0,
    ),
    _unpack_case(
        "unpack_row",
        "matmul unpack, one row alone (TRISC0)",
        f"addi a2, zero, 0\naddi a3, zero, 0\n{_UNPACK_ROW}",
        1,
        51.3,
    ),
)

# --------------------------------------------------------------------------- the scalar unit (ThCon)
# The ThCon bench (TRISC1; blackhole-py microbenching/tensix/microbench_xmov.py, 4 iterations):
# instruction words pushed by stores to the instruction buffer (a3), then the drain: STALLWAIT(SYNC;
# C9) pushed (a6) and the PC buffer's done check (a0). The figure is the steady cost of one
# operation in the unit: the loop with four pushes and the drain, minus the loop with the drain
# alone, per push. The distinct words sit in a2, a4, a5, a7 in first-use order [s4, s5, s6, t0].
_THCON_DRAIN = "sw a6, 0(a3)\nsw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"


def _thcon_setup(words: Sequence[int]) -> str:
    regs = ("a2", "a4", "a5", "a7")
    return "\n".join(
        (
            f"lui a3, 0xffe40\n{_li('a0', PC_BUF_SYNC)}",
            _li("a6", _word("STALLWAIT", stall_res=0x2, wait_res=0x200)),
            *(_li(regs[i], w) for i, w in enumerate(dict.fromkeys(words))),
        )
    )


def _thcon_case(name: str, what: str, words: Sequence[int], silicon: float, **kw) -> Case:
    regs = {w: r for w, r in zip(dict.fromkeys(words), ("a2", "a4", "a5", "a7"), strict=False)}
    pushes = "\n".join(f"sw {regs[w]}, 0(a3)" for w in words)
    return Case(
        name,
        what,
        f"{pushes}\n{_THCON_DRAIN}",
        len(words),
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=4,
        setup=_thcon_setup(words),
        empty=_THCON_DRAIN,
        **kw,
    )


_THCON_CASES = (
    Case(
        "thcon_drain",
        "STALLWAIT(SYNC; C9) pushed + done check, nothing else (TRISC1)",
        _THCON_DRAIN,
        1,
        (12.25, 12.25),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=4,
        setup=_thcon_setup(()),
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
    _thcon_case(
        "thcon_setdmareg",
        "SETDMAREG, steady (per instruction, TRISC1)",
        [_word("SETDMAREG", payload_sig_sel=i, reg_index_16b=24) for i in range(4)],
        1.0,
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
    _thcon_case(
        "thcon_shiftdmareg",
        "SHIFTDMAREG by an immediate, steady (per instruction, TRISC1)",
        [
            _word(
                "SHIFTDMAREG",
                op_b_is_const=1,
                op_sel=0,
                result_reg_index=24 + (i & 1),
                op_b_reg_index=i,
                op_a_reg_index=24,
            )
            for i in range(4)
        ],
        3.062,
    ),
    _thcon_case("thcon_dmanop", "DMANOP, steady (per instruction, TRISC1)", [_word("DMANOP")] * 4, 1.25),
)

# --------------------------------------------------------------------------- the packer
# Packing 1024 values of an FP32 Dst tile into L1 (TRISC2; blackhole-py
# tests/movement/packer/test_l1_accumulation.py, the "overwrite" figures): the packer configured
# for BF16 or FP32 output from FP32 Dst, then per pass the Dst position reset (SETADC), the L1
# destination and Dst offset written, a MOP of 64 PACRs of one 16-value Dst row each, STALLWAIT(SYNC;
# PACK0) and the done check. The figure is the profiler's interval: its store of the first clock
# read, then the passes. On silicon TRISC0 unpacked the values into Dst and TRISC1 handed Dst over
# first; the packer's cycles do not depend on the values, so Dst is left as it is (rows never
# written read as zero) and the hand-over is left out.
PACK_OUT = 0x3F000  # the harness's OUTPUT (L1 bytes)
_BF16, _FP32 = 5, 0  # data format codes


def _pacr(**fields: int) -> int:
    return _word("PACR", **fields)


def _rmwcib(reg: int, byte: int, mask: int, data: int) -> int:
    return _word(f"RMWCIB{byte}", mask=mask, data=data & mask, cfg_reg_addr=reg)


def _pack_prologue(fmt: int) -> str:
    size = 4 if fmt == _FP32 else 2
    nop = _word("NOP")
    return "\n".join(
        (
            # configure_packer(fmt)
            _inline(_rmwcib(71, 2, 0x80, 0)),  # THCON_SEC0_REG1_Pac_LF8_4b_exp
            _inline(_setc16(0, 0)),
            _inline(_rmwcib(1, 3, 0x1E, fmt << 1)),  # ALU_FORMAT_SPEC_REG2_Dstacc
            _inline(_rmwcib(1, 0, 0x07, 0)),  # rounding
            *(_inline(_rmwcib(2, byte, mask, 0)) for byte, mask in enumerate((0xFC, 0xFF, 0x3F))),  # ReLU
            _write32(TENSIX_CFG + 4 * 68, 0x40000),  # THCON_SEC0_REG1 section sizes
            _write32(TENSIX_CFG + 4 * 70, 1 | fmt << 4 | fmt << 8),  # uncompressed, out / in format
            _write32(TENSIX_CFG + 4 * 18, 1),  # PCK_DEST_RD_CTRL_Read_32b_data
            _write32(TENSIX_CFG + 4 * 12, 16 * size << 16),  # PCK0_ADDR_CTRL_XY_REG_0 Ystride
            _write32(TENSIX_CFG + 4 * 13, 256 * size | 1024 * size << 16),  # Zstride, Wstride
            _write32(TENSIX_CFG + 4 * 28, 0x1000),  # PACK_COUNTERS
            _write32(TENSIX_CFG + 4 * 24, 0xFFFF),  # PCK_EDGE_OFFSET_SEC0_mask
            *(_write32(TENSIX_CFG + 4 * reg, 0) for reg in (25, 20, 21)),
            _write32(GPRS + 4 * 16, 1024 * size >> 4),
            _write32(GPRS + 4 * 52, 0x40000),
            *(_inline(_setc16(37 + i, v)) for i, v in enumerate((0x0104, 0x2820, 0x1120))),
            _inline(_word("SETADCXY", cnt_set_mask=4, bit_mask=0xB)),
            _inline(_word("SETADCZW", cnt_set_mask=4, bit_mask=0xF)),
            _mop_config((4, 4, nop, nop, nop, _pacr(), nop, _pacr(addr_mode=1, last=1), _pacr(addr_mode=2))),
            _done_check(PC_BUF_SYNC),
            # one 16-value Dst row a PACR: address mode 0 moves Dst Y on, 1 resets it
            *(_inline(_setc16(37 + i, v)) for i, v in enumerate((1, 0x20, 0))),
            _write32(TENSIX_CFG + 4 * 28, 0x100),
            _mop_config(
                (
                    1,
                    64,
                    nop,
                    nop,
                    nop,
                    _pacr(read_intf_sel=1),
                    nop,
                    _pacr(read_intf_sel=1, addr_mode=1, last=1),
                    nop,
                )
            ),
            _inline(_word("STALLWAIT", stall_res=0x80, wait_res=0x8)),
            _inline(_rmwcib(70, 0, 4, 0)),  # Disable_pack_zero_flags
            _inline(_rmwcib(71, 2, 8, 0)),  # Pack_L1_Acc off
            _done_check(PC_BUF_SYNC),
        )
    )


_PACK_PASS = "\n".join(
    (
        *(_inline(_word("SETADC", cnt_set_mask=4, dimension_index=d)) for d in (1, 2, 3)),
        _write32(TENSIX_CFG + 4 * 69, ((PACK_OUT >> 4) - 1) | 0x80000000),  # THCON_SEC0_REG1_L1_Dest_addr
        _write32(TENSIX_CFG + 4 * 180, 0),  # DEST_TARGET_REG_CFG_PACK_SEC0
        _inline(_word("SETADCXX", cnt_set_mask=4, x_end2=15)),
        _inline(_word("MOP", mop_type=1)),
        _inline(_word("STALLWAIT", stall_res=0x2, wait_res=0x8)),
        _done_check(PC_BUF_SYNC),
    )
)


def _pack_case(fmt: int, passes: int, silicon: float) -> Case:
    name = "bf16" if fmt == _BF16 else "fp32"
    return Case(
        f"pack_1024_{name}_x{passes}",
        f"pack 1024 values, FP32 Dst to {name.upper()}, {passes} pass{'es' if passes > 1 else ''} (TRISC2)",
        "\n".join(("sw zero, 0(s0)", *([_PACK_PASS] * passes))),
        1,
        (silicon, silicon),
        cores=("trisc2",),
        figure_cores=("trisc2",),
        iters=1,
        prologue=_pack_prologue(fmt),
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    )


_PACK_CASES = (
    _pack_case(_BF16, 1, 116.0),
    _pack_case(_FP32, 1, 180.0),
    _pack_case(_BF16, 4, 428.0),
    _pack_case(_FP32, 4, 684.0),
)


# --------------------------------------------------------------------------- the vector unit (SFPU)
# Doubling 8192 FP32 values of Dst (rows 0..511, one vector of 32 per two rows; TRISC1;
# blackhole-py tests/compute/sfpu/test_loadmacro_pipeline.py): per vector an explicit SFPLOAD /
# SFPMUL by L6 = 2.0 / SFPNOP / SFPSTORE, or SFPLOADMACRO with a macro that schedules the multiply
# one cycle and the store three cycles on (after three SFPNOPs, or back to back over four
# registers), the words inline, or 4 vectors replayed by a MOP 64 times. The figure is the
# profiler's interval: the store of its first clock read (after loading the address), the words,
# four SFPNOPs, STALLWAIT(SYNC; SFPU), the done check, then loading the clock's address again.
# Dst is configured for 32-bit data as the bench did; TRISC0 had unpacked the values into it and
# handed it over first, which is left out (the vector unit's cycles do not depend on the values).
PROFILE = RESULTS + 0x40  # the profiler's sample word
_SFPU_DRAIN = _inline(_word("STALLWAIT", stall_res=0x2, wait_res=0x800))
_PROFILE_START = f"{_li('t0', PROFILE)}\nsw zero, 0(t0)"
_PROFILE_STOP = _li("t0", 0xFFB121F0)  # the second clock read's address (the template reads it)


def _sfpu_prologue(macro: bool) -> str:
    words = [
        _setc16(0, 0),
        _setc16(1, 0),
        _word("STALLWAIT", stall_res=0x80, wait_res=0x10 | 0x800),
        _rmwcib(1, 3, 0x20, 0x20),  # ALU_ACC_CTRL_Fp32_enabled
        *(_setc16(reg, 0) for reg in (12, 28, 47)),  # ADDR_MOD 0: nothing moves
        _word("SETRWC", bit_mask=0xF),
        _word("SFPENCC", instr_mod1=2),
        _word("STALLWAIT", stall_res=0x2, wait_res=0x800),
        _word("SFPLOADI", lreg_ind=6, instr_mod0=0, imm16=0x4000),  # L6 = 2.0
    ]
    if macro:
        words += [
            _word("SFPCONFIG", imm16_math=0, config_dest=15, instr_mod1=1),
            _word("SFPNOP"),
            # the macro's MAD template: L6 * VB + L9 (zero) into VD
            _word("SFPMUL", lreg_src_a=6, lreg_src_b=0, lreg_src_c=9, lreg_dest=12, instr_mod1=0),
            _word("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=0x1300),
            _word("SFPLOADI", lreg_ind=0, instr_mod0=10, imm16=0x8400),
            _word("SFPCONFIG", imm16_math=0, config_dest=4, instr_mod1=0),
            _word("SFPCONFIG", imm16_math=3, config_dest=8, instr_mod1=1),
        ]
    words.append(_word("STALLWAIT", stall_res=0x2, wait_res=0x800))
    return "\n".join((*map(_inline, words), _done_check(PC_BUF_SYNC)))


def _sfpu_vector(schedule: str, row: int, address: int) -> list[int]:
    reg = (row // 2) % 4
    if schedule == "explicit":
        return [
            _word("SFPLOAD", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address),
            _word("SFPMUL", lreg_src_a=6, lreg_src_b=reg, lreg_src_c=9, lreg_dest=reg),
            _word("SFPNOP"),
            _word("SFPSTORE", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address),
        ]
    serial = [_word("SFPNOP")] * 3 if schedule == "macro_serial" else []
    return [_word("SFPLOADMACRO", lreg_ind=reg, instr_mod0=3, dest_reg_addr=address), *serial]


def _sfpu_scale(schedule: str, replay: bool) -> str:
    if replay:
        body = [
            w for row in range(0, 8, 2) for w in (*_sfpu_vector(schedule, row, 0), _word("INCRWC", rwc_d=2))
        ]
        play = _word("REPLAY", start_idx=0, len=len(body), execute_while_loading=0, load_mode=0)
        nop = _word("NOP")
        words = "\n".join(
            (
                _inline(_word("REPLAY", start_idx=0, len=len(body), execute_while_loading=0, load_mode=1)),
                *map(_inline, body),
                _mop_config((1, 64, nop, nop, nop, play, nop, play, nop)),
                _inline(_word("MOP", mop_type=1)),
            )
        )
    else:
        words = "\n".join(_inline(w) for row in range(0, 512, 2) for w in _sfpu_vector(schedule, row, row))
    return "\n".join(
        (
            _PROFILE_START,
            words,
            *[_inline(_word("SFPNOP"))] * 4,
            _SFPU_DRAIN,
            _done_check(PC_BUF_SYNC),
            _PROFILE_STOP,
        )
    )


def _sfpu_case(schedule: str, replay: bool, what: str, silicon: float, calibrated: bool = True) -> Case:
    return Case(
        f"sfpu_scale_{schedule}{'_replay' if replay else ''}",
        f"SFPU doubling 256 FP32 vectors of Dst: {what} (TRISC1)",
        _sfpu_scale(schedule, replay),
        1,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=_sfpu_prologue(schedule != "explicit"),
        calibrated=calibrated,
    )


_SFPU_CASES = (
    Case(
        "sfpu_profile_control",
        "the profiler's interval around STALLWAIT(SYNC; SFPU) alone (TRISC1)",
        f"{_PROFILE_START}\n{_SFPU_DRAIN}\n{_PROFILE_STOP}",
        1,
        (13.0, 13.0),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=_sfpu_prologue(False),
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
    _sfpu_case("explicit", False, "SFPLOAD, SFPMUL, SFPNOP, SFPSTORE each", 1054.0),
    _sfpu_case("macro_serial", False, "SFPLOADMACRO and three SFPNOPs each", 1164.0, calibrated=False),
    _sfpu_case("macro_pipeline", False, "SFPLOADMACRO each, four registers", 306.0),
    _sfpu_case("explicit", True, "explicit, 4 vectors replayed 64 times", 1377.0),
    _sfpu_case("macro_pipeline", True, "SFPLOADMACRO, 4 vectors replayed 64 times", 597.0),
)


# Vector-unit rates as slopes. The SFPU probes (tenstorrent-docs fresh-results.md, TRISC1, fusion
# off): a loop of 16 inline words, ``addi`` and ``bne`` run N times, then STALLWAIT(SYNC; SFPU) and
# the done check, per word, the loop's two instructions included (silicon: the slope between N = 64,
# 128 and 256; here the whole run at N = 128, whose fixed part adds about 0.005 a word). LRegs 0..7
# hold 1.0.
_SLOPE_N = 128
_SLOPE_PROLOGUE = "\n".join(
    (
        _inline(_word("SFPENCC", instr_mod1=2)),
        *(_inline(_word("SFPLOADI", lreg_ind=i, instr_mod0=0, imm16=0x3F80)) for i in range(8)),
        _SFPU_DRAIN,
        _done_check(PC_BUF_SYNC),
        "fence",
    )
)


def _slope_case(name: str, what: str, words: Sequence[int], silicon: float) -> Case:
    body = "\n".join(
        (
            f"li t0, {_SLOPE_N}",
            "1:",
            *map(_inline, words),
            "addi t0, t0, -1\nbne t0, zero, 1b",
            _SFPU_DRAIN,
            _done_check(PC_BUF_SYNC),
        )
    )
    return Case(
        name,
        what,
        body,
        len(words) * _SLOPE_N,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=_SLOPE_PROLOGUE,
    )


# Dst bandwidth (blackhole-py tests/compute/fpu/test_dst_bandwidth.py, TRISC1): a replay of 32
# SFPLOADs or SFPSTOREs (ADDR_MOD 3, which moves nothing) played R times by a MOP, then
# STALLWAIT(SYNC; MATH, SFPU) and the done check; silicon's figure is the slope over R, here the run
# with R = 64 minus the run with R = 32 (each with its MOP configuration), per instruction.
def _dst_run(repeats: int) -> str:
    nop = _word("NOP")
    play = _word("REPLAY", start_idx=0, len=32, execute_while_loading=0, load_mode=0)
    return "\n".join(
        (
            _mop_config((1, repeats, nop, nop, nop, play, nop, play, play)),
            _inline(_word("MOP", mop_type=1)),
            _inline(_word("STALLWAIT", stall_res=0x2, wait_res=0x810)),
            _done_check(PC_BUF_SYNC),
        )
    )


def _dst_case(name: str, what: str, words: Sequence[int], silicon: float) -> Case:
    prologue = "\n".join(
        (
            *(_inline(_setc16(reg, 0)) for reg in (15, 31, 50)),  # ADDR_MOD 3: nothing moves
            _inline(_word("REPLAY", start_idx=0, len=32, execute_while_loading=0, load_mode=1)),
            *map(_inline, words),
            _done_check(PC_BUF_SYNC),
        )
    )
    return Case(
        name,
        what,
        _dst_run(64),
        32 * 32,
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=1,
        prologue=prologue,
        empty=_dst_run(32),
    )


_SFPU_RATE_CASES = (
    _slope_case("sfpu_nop", "SFPNOP, 16 inline a loop (per word, TRISC1)", [_word("SFPNOP")] * 16, 1.125),
    _slope_case(
        "sfpu_mad_independent",
        "SFPMAD over 4 LRegs, 16 inline a loop (per word, TRISC1)",
        [_word("SFPMAD", lreg_src_a=i % 4, lreg_src_b=10, lreg_src_c=9, lreg_dest=i % 4) for i in range(16)],
        1.125,
    ),
    _slope_case(
        "sfpu_mad_dependent",
        "SFPMAD dependent chain, 16 inline a loop (per word, TRISC1)",
        [_word("SFPMAD", lreg_src_a=0, lreg_src_b=10, lreg_src_c=9, lreg_dest=0)] * 16,
        2.0,
    ),
    _dst_case(
        "dst_sfpload",
        "SFPLOAD from Dst, replayed by a MOP (per instruction, TRISC1)",
        [
            _word("SFPLOAD", lreg_ind=j % 4, instr_mod0=3, sfpu_addr_mode=3, dest_reg_addr=2 * j)
            for j in range(32)
        ],
        1.0,
    ),
    _dst_case(
        "dst_sfpstore",
        "SFPSTORE to Dst, replayed by a MOP (per instruction, TRISC1)",
        [
            _word("SFPSTORE", lreg_ind=0, instr_mod0=3, sfpu_addr_mode=3, dest_reg_addr=2 * j)
            for j in range(32)
        ],
        1.0,
    ),
)


CASES: tuple[Case, ...] = (
    _CORE
    + _MEMORY
    + _FIVE_CORES
    + _SYNC_CASES
    + _PUSH_CASES
    + _NOC_CASES
    + _DRAM_CASES
    + _UNPACK_CASES
    + _THCON_CASES
    + _PACK_CASES
    + _SFPU_CASES
    + _SFPU_RATE_CASES
)

# Figures of the calibration list this table does not run (docs/timing.md says why).
NOT_RUN: tuple[tuple[str, str], ...] = ()

_TEMPLATE = """\
#include <stdint.h>
#include "tensixsim.h"

static volatile uint32_t scratch[16]; /* own local RAM (.bss) */
/* What the bodies address by name (local RAM): a circular buffer's interface, the DRAM bank table,
 * this tile's NoC coordinates. */
volatile uint32_t cb_iface[8] __attribute__((used, aligned(16)));
volatile uint16_t bank_table[16] __attribute__((used));
volatile uint8_t noc_xy[4] __attribute__((used));
volatile uint32_t unpack_ctx __attribute__((used)); /* the unpack bench's configuration context */

static inline uint32_t wall(void)
{
    return *(volatile uint32_t *)WALL_CLOCK;
}

/* The measured loop: beqz on the counter, the body, addi, j. No linker relaxation: every
 * instruction stays as written. */
#define LOOP(body)                                                                      \\
    __asm__ volatile(".option push\\n.option norelax\\n" SETUP "\\nli t6, %[n]\\n9:\\nbeqz t6, 8f\\n" \\
                     body "\\naddi t6, t6, -1\\nj 9b\\n8:\\n" TEARDOWN "\\n.option pop"        \\
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
#ifdef PROLOGUE
    __asm__ volatile(".option push\\n.option norelax\\n" PROLOGUE "\\n.option pop"
                     : "+r"(l1), "+r"(local), "+r"(remote), "+r"(mmio)
                     :
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                       "a7", "memory");
    l1 = L1_DATA;
    local = (uint32_t)&scratch[0];
    remote = REMOTE;
    mmio = MMIO;
#endif
    __asm__ volatile("li a4, 3\\nli a5, 7\\nli a1, 1\\nli a2, 5\\nli a0, 1" ::: "a0", "a1", "a2", "a4", "a5");
    uint32_t t0 = wall();
    LOOP(BODY);
    uint32_t t1 = wall();
    l1 = L1_DATA;
    local = (uint32_t)&scratch[0];
    remote = REMOTE;
    mmio = MMIO;
    __asm__ volatile("li a4, 3\\nli a5, 7\\nli a1, 1\\nli a2, 5\\nli a0, 1" ::: "a0", "a1", "a2", "a4", "a5");
    uint32_t t2 = wall();
    LOOP(EMPTY);
    uint32_t t3 = wall();
    volatile uint32_t *out = (volatile uint32_t *)RESULT;
    out[0] = t1 - t0;
    out[1] = t3 - t2;
#ifdef DONE_FLAG
#ifdef DONE_CHECK
    /* Wait until the coprocessor has run what this core pushed: the companions may be serving it. */
    *(volatile uint32_t *)DONE_CHECK = 0;
    (void)*(volatile uint32_t *)DONE_CHECK;
#endif
    *(volatile uint32_t *)DONE_FLAG = 1;
#endif
    return 0;
}
"""

# A companion core's program: its assembly, once.
_COMPANION_TEMPLATE = """\
#include <stdint.h>
#include "tensixsim.h"

int main(void)
{
    __asm__ volatile(".option push\\n.option norelax\\n" PROGRAM "\\n.option pop"
                     :
                     :
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                       "a7", "memory");
    return 0;
}
"""


def _c_string(asm: str) -> str:
    """``asm`` as a C string for an extended asm statement (% doubled)."""
    lines = (line.strip().replace("%", "%%") for line in asm.strip().splitlines())
    return '"' + "\\n".join(lines) + '"'


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
        "EMPTY": _c_string(case.empty),
        "L1_DATA": f"0x{SHARED if case.shared_l1 else DATA + 0x1000 * index:x}u",
        # Another core's local RAM, above where its .data and .bss lie.
        "REMOTE": f"0x{neighbour.local_ram_alias + 0x100:x}u",
        "MMIO": f"0x{mmio:x}u",
        "WALL_CLOCK": f"0x{arch.wall_clock_low:x}u",
        "RESULT": f"0x{RESULTS + 16 * index:x}u",
    }
    if case.prologue:
        defines["PROLOGUE"] = _c_string(case.prologue)
    if case.companions:
        defines["DONE_FLAG"] = f"0x{DONE:x}u"
        if core.startswith("trisc"):
            defines["DONE_CHECK"] = f"0x{PC_BUF_SYNC:x}u"
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    source = _source(root, "calibration.c", _TEMPLATE)
    return build(
        core, [source], root / "calibration" / f"{case.name}_{core}.elf", defines=defines, build_dir=root
    )


def build_companion(case: Case, core: str, program: str, build_dir: Path | None = None) -> Path:
    """Compile the companion ``program`` of ``case`` for ``core``; returns the ELF."""
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    source = _source(root, "companion.c", _COMPANION_TEMPLATE)
    return build(
        core,
        [source],
        root / "calibration" / f"{case.name}_{core}_companion.elf",
        defines={"PROGRAM": _c_string(program)},
        build_dir=root,
    )


def _source(root: Path, name: str, text: str) -> Path:
    source = root / "calibration" / name
    source.parent.mkdir(parents=True, exist_ok=True)
    if not source.exists() or source.read_text() != text:
        # Atomically: parallel test workers build from the same file, and a compiler must never
        # read one half written.
        fd, tmp = tempfile.mkstemp(suffix=".c", dir=source.parent)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, source)
    return source


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
    """Run ``case`` on a fresh tile (of a chip, for a peer case); the per-operation cost on each core
    that ran it."""
    if case.peer is not None:
        chip = Chip(ARCH)
        tile = chip.tile(*SOURCE)
        chip.tile(*case.peer)
        for core in case.cores:
            tile.load_elf(core, build_case(case, core, build_dir))
        chip.run(max_cycles=10_000_000, release={SOURCE: case.cores})
    else:
        tile = Tile(ARCH) if tile_factory is None else tile_factory()
        for core in case.cores:
            tile.load_elf(core, build_case(case, core, build_dir))
        for core, program in case.companions:
            tile.load_elf(core, build_companion(case, core, program, build_dir))
        tile.run(max_cycles=10_000_000, release=case.cores + tuple(c for c, _ in case.companions))
    measured = Measured(case)
    for core in case.cores:
        index = CORE_NAMES.index(core)
        raw = tile.read(RESULTS + 16 * index, 8)
        body, empty = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little")
        cycles = body - empty if case.subtract_empty else body
        measured.per_core[core] = cycles / (case.iters * case.ops)
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
