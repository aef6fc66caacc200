"""What every calibration block shares: the ``Case`` a figure is, the harness's addresses, and the
assembly helpers the bodies are written with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tensixsim.arch import get_arch
from tensixsim.isa import isa_for
from tensixsim.sdk.layout import L1_USER_BASE

ARCH = "blackhole"
# Per core: body cycles, empty-loop cycles, a 64-byte line each (the line the tile orders the cores'
# L1 accesses by: another core's results in it would order each core's after the others').
RESULTS = L1_USER_BASE + 0x100
RESULT_STRIDE = 64
DATA = L1_USER_BASE + 0x1000  # per core: a 4 KiB L1 buffer the loads and stores use
SHARED = DATA + 0x10000  # one L1 word every core reads in the same-address case
PROFILE = RESULTS + 0x140  # the profiler's two samples, past every core's results (one core profiles)
DONE = RESULTS + 0x180  # set to 1 by the figure cores when their loops are over (for companions)
RING = L1_USER_BASE + 0x40000  # the DRAM cases' L1 pages (64 of DRAM_PAGE bytes)
# NIU counter MST_RD_RESP_RECEIVED (noc/registers.py COUNTER_BASE, Counters.md)
NOC_STATUS_OFFSET = 0x200 + 4 * 2
SOURCE = (1, 2)  # the tile the peer cases run on (the measurements': logical and NoC #0 (1, 2))
# The PC buffer's done check (a store and a load of it: the load returns once the pipe has executed
# everything).
PC_BUF_SYNC = 0xFFE80004
MOP_CFG = 0xFFB80000
MOP_SYNC = 0xFFE80008  # the MOP expander's done check
TENSIX_CFG = 0xFFEF0000
GPRS = 0xFFE00000  # the thread's own GPRs

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
    # What s3 points at: "wall", "noc_status", "niu" / "niu1" (NoC #0's / #1's NIU), "pcbuf" or "stream"
    # (stream 0).
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
    # With ``peer``: run BRISC's program on each of these tiles (NoC #0 coordinates) instead of on
    # SOURCE, all released at once; the figure is ``figure_tile``'s.
    senders: tuple[tuple[int, int], ...] = ()
    figure_tile: tuple[int, int] | None = None
    # With ``senders``: the figure is theirs together (every sender's bytes over the longest sender's
    # timed region: they start together), as a many-core bench sums its cores' bytes over its window.
    aggregate: bool = False
    # Assembly run once before the first timed region (a configuration the measured program set up
    # before its clock reads).
    prologue: str = ""
    # Other cores running a program of their own (core, assembly) while the loops run, until the
    # figure cores have finished (the word at DONE turns nonzero).
    companions: tuple[tuple[str, str], ...] = ()
    # The figure is the interval between the two samples the body's own profiler records stored
    # (``profiler_record``), as the measured program's profiler took it, not the timed loop's.
    profiled: bool = False

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


def profiler_record(stop: bool) -> str:
    """One sample of the measured programs' profiler (blackhole-py's Profiler.record): the wall
    clock read into a register, then stored to its sample word; the stop sample ends in a fence. The
    store uses the read's result, so it waits for the response."""
    clock = get_arch(ARCH).wall_clock_low
    return "\n".join(
        (
            li("t5", clock),
            "lw t4, 0(t5)",
            li("t3", PROFILE + (4 if stop else 0)),
            "sw t4, 0(t3)",
            *(("fence",) if stop else ()),
        )
    )


def rept(count: int, text: str) -> str:
    """``text`` repeated ``count`` times by the assembler."""
    return f".rept {count}\n{text}\n.endr"


# The probe suite's loops (tenstorrent-docs fresh-results.md): the body, ``addi`` and ``bne`` on t0,
# run this many times (silicon's figures are the slopes between 64, 128 and 256 runs).
PROBE_RUNS = 128


def probe_loop(body: str) -> str:
    """``body`` run ``PROBE_RUNS`` times by the probe suite's loop."""
    return "\n".join(
        line for line in (f"li t0, {PROBE_RUNS}", "1:", body, "addi t0, t0, -1", "bne t0, zero, 1b") if line
    )


def pointer_cycle(lines: int, base: str = "s0", start: int = 0x100) -> str:
    """a0 at the first of ``lines`` 16-byte lines at ``base`` + ``start``, each line's first word
    pointing at the next line's (the last at the first), then a fence (which empties the L0 data
    cache): what a chain of ``lw a0, 0(a0)`` walks."""
    stores = (
        f"addi a1, {base}, {start + (i + 1) % lines * 16}\nsw a1, {start + i * 16}({base})"
        for i in range(lines)
    )
    return "\n".join((f"addi a0, {base}, {start}", *stores, "fence"))


def li(reg: str, value: int) -> str:
    """A 32-bit constant as the measured programs load one: lui, then addi when the low bits are
    not zero."""
    hi, lo = ((value + 0x800) >> 12) & 0xFFFFF, ((value & 0xFFF) ^ 0x800) - 0x800
    return f"lui {reg}, {hi:#x}" + (f"\naddi {reg}, {reg}, {lo}" if lo else "")


def la(reg: str, symbol: str) -> str:
    """The address of a local-RAM symbol, in two instructions as a constant address would be."""
    return f"lui {reg}, %hi({symbol})\naddi {reg}, {reg}, %lo({symbol})"


BH = isa_for(ARCH)


def word(name: str, **fields: int) -> int:
    """A Tensix instruction word; the fields not given are zero."""
    return BH.encode(name, **({f.name: 0 for f in BH.by_name[name].fields} | fields))


def write32(address: int, value: int) -> str:
    """A RISC-V store of a constant (``t0`` the address, ``t1`` the value)."""
    return f"{li('t0', address)}\n" + ("sw zero, 0(t0)" if value == 0 else f"{li('t1', value)}\nsw t1, 0(t0)")


def done_check(address: int) -> str:
    """A store and a load of a done-check register (``PC_BUF_SYNC``, ``MOP_SYNC``): the load returns
    once that unit has run everything before it."""
    return f"{li('t0', address)}\nsw zero, 0(t0)\nlw t1, 0(t0)\nand zero, zero, t1"


def inline(instruction: int) -> str:
    """A Tensix instruction word inline in a TRISC's instruction stream (rotated left by two)."""
    return f".word 0x{(instruction << 2 | instruction >> 30) & 0xFFFFFFFF:08x}"


def setc16(reg: int, value: int) -> int:
    return word("SETC16", setc16_reg=reg, setc16_value=value)


def mop_config(words: Sequence[int]) -> str:
    """The MOP expander's configuration registers written with ``words``, once it is idle."""
    return f"{done_check(MOP_SYNC)}\n" + "\n".join(write32(MOP_CFG + 4 * i, w) for i, w in enumerate(words))


def rmwcib(reg: int, byte: int, mask: int, data: int) -> int:
    return word(f"RMWCIB{byte}", mask=mask, data=data & mask, cfg_reg_addr=reg)
