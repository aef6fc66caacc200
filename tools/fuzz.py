"""Fuzz the emulator end to end: mutated ELFs, random RISC-V code, MMIO accesses, Tensix words, MOPs,
and NoC requests between the tiles of a chip.

    python tools/fuzz.py --cases 2000 --seed 1 [--families elf,rv32,mmio,tensix,mop] [--jobs 2]
    python tools/fuzz.py --arch wormhole --cases 500   # the same families on a Wormhole tile
    python tools/fuzz.py --replay rv32:17:1      # run one case in-process and print its outcome

The contract under test: whatever the input, a run ends normally ("ok") or raises a
:class:`tensixsim.errors.SimError` subclass; the host process never dies, never hangs and stays within
a memory bound. Anything else is a FAILURE: another exception (with its traceback), a crash (signal or
exit without a report), a timeout, or a peak RSS over the cap.

Case ``i`` of family ``F`` with seed ``S`` is always the same input: its random generator is seeded
from the string ``"F:i:S"`` alone, so a failure is reproduced with ``--replay F:i:S``. On Wormhole the
key is ``"F:i:S:wormhole"``: its own inputs, drawn with Wormhole's instruction table, L1 size and reset
PCs, run on a Wormhole tile.

Cases run in child processes (``--child``), a batch per child so Python and the emulator are imported
once per batch, not once per case. A child prints one JSON line per case. If it crashes or times out,
the cases it did not report are run again one per child, which names the culprit.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import random
import resource
import selectors
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The generators reuse the tests' pure-Python RISC-V encoder and their cached GNU linker wrapper.
sys.path.insert(0, str(ROOT / "tests"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import rvenc  # noqa: E402

FAMILIES = ("elf", "rv32", "mmio", "tensix", "mop", "noc")
# Hidden families used by tests/test_fuzz.py to prove that failures are caught and classified.
SELFTEST_FAMILIES = ("_raise", "_exit", "_hang", "_hog")

ARCHES = ("blackhole", "wormhole")
CORES = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")
TRISCS = ("trisc0", "trisc1", "trisc2")
# The chip the generators draw for (set_arch; each case sets its own before drawing). The address map
# below is the same on both chips; the L1 size and the reset PCs come from tensixsim.arch.
ARCH = "blackhole"
RESET_PC = {"brisc": 0x0, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000, "ncrisc": 0x12000}
L1_SIZE = 1536 * 1024
PUSH_BASE, PUSH_STRIDE = 0xFFE40000, 0x10000
MOP_CFG_BASE = 0xFFB80000
# Bases of the MMIO blocks of tensixsim.arch.blackhole, so that random addresses land near registers
# that exist far more often than a uniform draw over 0xFFB00000..0xFFFFFFFF would.
MMIO_BASES = (
    0xFFB00000,  # local RAM
    0xFFB12000,  # tile control
    0xFFB14000, 0xFFB16000, 0xFFB18000, 0xFFB1A000, 0xFFB1C000,  # per-core blocks
    0xFFB20000, 0xFFB30000,  # NIUs
    0xFFB40000,  # streams
    MOP_CFG_BASE,
    PUSH_BASE, PUSH_BASE + PUSH_STRIDE, PUSH_BASE + 2 * PUSH_STRIDE,
    0xFFE80000,  # PC buffers
    0xFFEF0000, 0xFFF00000, 0xFFFFF000,
)  # fmt: skip
ECALL = rvenc.encode("ecall")

DEFAULT_TIMEOUT = 20.0  # seconds per case; a case runs at most a few hundred thousand cycles
STARTUP = 10.0  # seconds more for a child's first case (its imports)
# A tile maps about a third of a GiB of (mostly untouched) address space, its cores' translation
# buffers (riscv.core.TCG_BUFFER_BYTES); a NoC case builds the tiles its requests reach, up to about
# fifteen. The address-space limit is a backstop against runaway allocation; the real memory bound is
# the peak RSS (peak_rss_mb).
DEFAULT_AS_MB = 8192
DEFAULT_RSS_MB = 1024
BATCH = 40


@dataclass(frozen=True)
class Case:
    family: str
    index: int
    seed: int
    arch: str = "blackhole"

    @property
    def key(self) -> str:
        key = f"{self.family}:{self.index}:{self.seed}"
        return key if self.arch == "blackhole" else f"{key}:{self.arch}"

    @staticmethod
    def parse(text: str) -> Case:
        family, index, seed, *arch = text.split(":")
        return Case(family, int(index), int(seed), *arch)


def set_arch(name: str) -> None:
    """Draw the next inputs for chip ``name``: its L1 size and reset PCs (the MMIO map, the push and
    MOP-configuration addresses are the same on both chips: checked here)."""
    global ARCH, L1_SIZE
    from tensixsim.arch import get_arch

    facts = get_arch(name)
    assert (facts.tensix_push_base, facts.tensix_push_stride, facts.mop_config_base) == (
        PUSH_BASE, PUSH_STRIDE, MOP_CFG_BASE,
    ), f"{name}'s push or MOP_CFG addresses moved: the generators need them per chip"  # fmt: skip
    ARCH, L1_SIZE = name, facts.l1_size
    RESET_PC.update({core.name: core.default_reset_pc for core in facts.cores})


def case_rng(case: Case) -> random.Random:
    # Seeding from the string makes the input depend on (family, index, seed) alone, whatever the
    # batch, the job count or the order the cases run in.
    return random.Random(case.key)


# ------------------------------------------------------------------------------------------- inputs


def rand_value(rng: random.Random) -> int:
    """A 32-bit value biased to the interesting ones: small, L1 addresses, MMIO addresses, extremes."""
    pick = rng.random()
    if pick < 0.2:
        return rng.randrange(-16, 64) & 0xFFFFFFFF
    if pick < 0.45:
        return rng.randrange(L1_SIZE + 0x100)
    if pick < 0.7:
        return (rng.choice(MMIO_BASES) + rng.randrange(0x1000)) & 0xFFFFFFFF
    if pick < 0.8:
        return rng.choice((0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFC, 0x80000000 - 4))
    return rng.getrandbits(32)


def li(rd: str | int, value: int) -> list[int]:
    return rvenc.li_words(rd, value & 0xFFFFFFFF)


def random_rv32_instruction(rng: random.Random) -> int:
    """A real encoding from rvenc's table with random registers and immediates."""
    mnemonic = rng.choice(sorted(rvenc.FORMS))
    syntax = rvenc.FORMS[mnemonic].syntax
    r = lambda: rng.randrange(32)
    # Branch and jump offsets stay small and word-aligned most of the time, so control flow mostly
    # lands inside the program instead of always in zeroed memory.
    off = lambda bits: rng.choice((rng.randrange(-16, 17) * 4, rng.randrange(-(1 << bits), 1 << bits, 2)))
    # The standard CSRs, the Tensix ones (cfg0, queue and backend status) and any 12-bit number.
    csr = lambda: rng.choice((*rvenc.CSR_NAMES.values(), 0x7C0, 0xBC0, 0xBC1, rng.getrandbits(12)))
    operands: tuple = {
        "rrr": lambda: (r(), r(), r()),
        "rr": lambda: (r(), r()),
        "rri": lambda: (r(), r(), rng.randrange(-2048, 2048)),
        "shift": lambda: (r(), r(), rng.randrange(32)),
        "load": lambda: (r(), rng.randrange(-2048, 2048), r()),
        "jalr": lambda: (r(), rng.randrange(-2048, 2048), r()),
        "store": lambda: (r(), rng.randrange(-2048, 2048), r()),
        "branch": lambda: (r(), r(), off(12)),
        "u": lambda: (r(), rng.getrandbits(20)),
        "jal": lambda: (r(), off(20)),
        "amo": lambda: (r(), r(), r()),
        "csr": lambda: (r(), csr(), r()),
        "csri": lambda: (r(), csr(), rng.randrange(32)),
        "none": lambda: (),
    }[syntax]()  # fmt: skip
    if syntax == "amo":
        mnemonic += rng.choice(list(rvenc.AMO_ORDERINGS))
    return rvenc.encode(mnemonic, *operands)


def gen_rv32(rng: random.Random) -> dict:
    core = rng.choice(CORES)
    words: list[int] = []
    # Some registers start with interesting values, so loads, stores and jumps reach beyond address 0.
    for _ in range(rng.randrange(5)):
        words += li(rng.randrange(1, 32), rand_value(rng))
    for _ in range(rng.randrange(1, 40)):
        words.append(rng.getrandbits(32) if rng.random() < 0.25 else random_rv32_instruction(rng))
    if rng.random() < 0.7:
        words.append(ECALL)
    return {"kind": "program", "core": core, "words": words, "max_cycles": rng.choice((500, 5_000, 50_000))}


LOADS = ("lb", "lh", "lw", "lbu", "lhu")
STORES = ("sb", "sh", "sw")
WIDTH = {"lb": 1, "lbu": 1, "sb": 1, "lh": 2, "lhu": 2, "sh": 2, "lw": 4, "sw": 4}


def mmio_address(rng: random.Random, width: int) -> int:
    pick = rng.random()
    if pick < 0.5:
        address = rng.choice(MMIO_BASES) + rng.randrange(0, 0x400) * 4
    elif pick < 0.65:
        address = rng.randrange(0xFFB00000, 1 << 32)
    elif pick < 0.9:
        address = rng.randrange(0x20000, L1_SIZE)  # L1 above the five programs
    else:
        address = rng.choice((L1_SIZE - 4, L1_SIZE, L1_SIZE + 0x1000, rng.randrange(1 << 32)))
    address &= ~(width - 1)
    if rng.random() < 0.2:
        address += rng.randrange(1, 4)  # unaligned
    return address & 0xFFFFFFFF


def gen_mmio(rng: random.Random) -> dict:
    core = rng.choice(CORES)
    words: list[int] = []
    for _ in range(rng.randrange(1, 12)):
        op = rng.choice(LOADS + STORES)
        address = mmio_address(rng, WIDTH[op])
        # The offset field is used too, so that base + offset wrapping around 2^32 is exercised.
        offset = rng.choice((0, 0, 0, rng.randrange(-2048, 2048)))
        words += li("t0", address - offset)
        if op in STORES:
            words += li("t1", rand_value(rng))
            words.append(rvenc.encode(op, "t1", offset, "t0"))
        else:
            words.append(rvenc.encode(op, "t2", offset, "t0"))
    words.append(ECALL)
    return {"kind": "program", "core": core, "words": words, "max_cycles": 20_000}


def _isa():
    from tensixsim.isa import isa_for

    return isa_for(ARCH)


def rotate_for_inline(word: int) -> int:
    # A TRISC executes a Tensix instruction embedded in its code as the word rotated left by 2
    # (see tests/test_frontend.py ``inline``).
    return ((word << 2) | (word >> 30)) & 0xFFFFFFFF


def tensix_words(rng: random.Random, count: int) -> list[int]:
    import numpy as np

    from tensixsim.tensix.native.fuzz import random_words

    return random_words(np.random.default_rng(rng.getrandbits(64)), count, ARCH)


def push_address(rng: random.Random) -> int:
    # A core pushes to its own pipe at PUSH_BASE; the other strides are unmapped for it and mostly
    # end the run with a MemoryFault, so they are drawn rarely.
    return PUSH_BASE if rng.random() < 0.9 else PUSH_BASE + PUSH_STRIDE * rng.randrange(1, 3)


def gen_tensix(rng: random.Random) -> dict:
    words = tensix_words(rng, rng.randrange(1, 24))
    mode = rng.choice(("raw", "inline", "push"))
    if mode == "raw":
        return {"kind": "raw", "thread": rng.randrange(3), "words": words}
    core = rng.choice(TRISCS) if mode == "inline" or rng.random() < 0.8 else rng.choice(CORES)
    code: list[int] = []
    if mode == "inline":
        code = [rotate_for_inline(w) for w in words]
    else:
        for w in words:
            code += li("t0", push_address(rng))
            code += li("t1", w)
            code.append(rvenc.encode("sw", "t1", 0, "t0"))
    code.append(ECALL)
    return {"kind": "program", "core": core, "words": code, "max_cycles": 100_000}


def gen_mop(rng: random.Random) -> dict:
    isa = _isa()
    core = rng.choice(TRISCS)
    code: list[int] = []
    # The nine MOP_CFG words (and a few past them), sometimes holding real instructions so that the
    # templates expand to something that executes.
    # Most cases write all nine words, as a MOP reading a word never written is UndefinedBehavior;
    # a few write past the ninth, which is no register.
    indices = (
        list(range(9)) if rng.random() < 0.6 else [rng.randrange(9) for _ in range(rng.randrange(1, 10))]
    )
    if rng.random() < 0.05:
        indices.append(rng.randrange(9, 16))
    for index in indices:
        value = tensix_words(rng, 1)[0] if rng.random() < 0.5 else rand_value(rng)
        code += li("t0", MOP_CFG_BASE + 4 * index)
        code += li("t1", value)
        code.append(rvenc.encode("sw", "t1", 0, "t0"))
    words: list[int] = []
    for _ in range(rng.randrange(1, 10)):
        pick = rng.random()
        if pick < 0.4:
            # The third field's name differs between the chips' tables (zmask_lo16 on Wormhole).
            mop_type, loop_count, low16 = (f.name for f in isa.by_name["MOP"].fields)
            fields = {
                mop_type: rng.randrange(2),
                loop_count: rng.choice((0, 1, 2, 3, rng.randrange(128))),
                low16: rng.choice((0, 1, 0xFFFF, rng.getrandbits(16))),
            }
            words.append(isa.encode("MOP", **fields))
        elif pick < 0.75:
            words.append(
                isa.encode(
                    "REPLAY",
                    start_idx=rng.choice((0, rng.randrange(32), rng.randrange(1024))),
                    len=rng.choice((0, 1, 2, rng.randrange(64), rng.randrange(1024))),
                    execute_while_loading=rng.randrange(8),
                    load_mode=rng.randrange(2),
                )
            )
        elif pick < 0.85:
            words.append(isa.encode("MOP_CFG", zmask_hi16=rng.getrandbits(24)))
        else:
            words += tensix_words(rng, 1)
    if rng.random() < 0.5:
        for w in words:
            code += li("t0", push_address(rng))
            code += li("t1", w)
            code.append(rvenc.encode("sw", "t1", 0, "t0"))
    else:
        code += [rotate_for_inline(w) for w in words]
    code.append(ECALL)
    return {"kind": "program", "core": core, "words": code, "max_cycles": 100_000}


# ------------------------------------------------------------------------------------------- NoC

# NOC_CTRL commands (tensixsim/sdk/examples/chip/noc.h): read, write, atomic, inline write, an
# acknowledged write, a multicast write (BRCST_PACKET, bit 5; BRCST_SRC_INCLUDE, bit 17).
NOC_RD, NOC_AT, NOC_WR, NOC_INLINE, NOC_MARKED, NOC_BRCST, NOC_SRC_INCLUDE = 0, 1, 2, 8, 16, 32, 1 << 17
NOC_COMMANDS = (
    NOC_RD, NOC_WR, NOC_WR | NOC_MARKED, NOC_WR | NOC_INLINE, NOC_AT, NOC_AT | NOC_MARKED,
    NOC_WR | NOC_MARKED | NOC_BRCST, NOC_WR | NOC_BRCST | NOC_SRC_INCLUDE, NOC_AT | NOC_BRCST,
)  # fmt: skip
NOC_COUNTERS = 0x200  # the NIU's counters, a word each from here


def gen_noc(rng: random.Random) -> dict:
    """BRISC of one Tensix tile of a chip issues a few NoC requests (on either NoC, from any request
    initiator) to its own tile, nearby Tensix tiles, DRAM, the other endpoints or coordinates off the
    grid, and reads the NIU's counters; the requests' fields are drawn as real programs fill them
    (noc.h), now and then with a bit flipped."""
    from tensixsim.arch import get_arch

    facts = get_arch(ARCH).noc
    regs = facts.registers
    tiles = list(facts.tensix_tiles)
    own = rng.choice(tiles[:8])
    # A few peers near the requester (so that requests meet on links) and every other endpoint kind.
    peers = [rng.choice(tiles[:24]) for _ in range(3)]
    # One multicast rectangle a case (at most 3x3 tiles), so that a case builds a bounded set of tiles.
    corner, size = rng.choice(tiles[:24]), (rng.randrange(3), rng.randrange(3))
    others = sorted(facts.dram_tiles) + sorted(facts.other_tiles)

    noc = 0  # the NoC of the request being drawn (xy numbers coordinates for it)

    def xy(p: tuple[int, int]) -> int:
        # NoC #1 numbers the grid from the opposite corner (Coordinates.md).
        x, y = p if noc == 0 else (facts.width - 1 - p[0], facts.height - 1 - p[1])
        return x | y << 6

    def remote() -> int:
        pick = rng.random()
        if pick < 0.7:
            return xy(rng.choice([*peers, own]))
        if pick < 0.95:
            return xy(rng.choice(others))
        return xy((rng.randrange(64), rng.randrange(64)))

    def own_l1(length: int) -> int:  # an address of the requester's L1 with room for `length`
        return (
            rng.randrange(0x20000, max(L1_SIZE - length, 0x20010), 16)
            if rng.random() < 0.95
            else rand_value(rng)
        )

    def address() -> int:
        pick = rng.random()
        if pick < 0.8:
            return rng.randrange(0x20000, L1_SIZE, 16)
        if pick < 0.95:
            return rng.randrange(facts.dram_group_bytes or 1 << 30) & ~15
        return rand_value(rng)

    words: list[int] = []
    for _ in range(rng.randrange(1, 8)):
        noc = rng.randrange(2)
        base = (
            facts.niu_bases[noc]
            + rng.choice((0, 0, rng.randrange(facts.initiators))) * facts.initiator_stride
        )
        ctrl = rng.choice(NOC_COMMANDS)
        if rng.random() < 0.03:
            ctrl ^= 1 << rng.randrange(32)
        length = (
            rng.choice((4, 16, 64, 2048, 8192, 16384))
            if rng.random() < 0.95
            else rng.choice((0, rng.randrange(1 << 17)))
        )
        targ, ret = address(), address()
        if ctrl & NOC_BRCST:  # a rectangle: its end in coordinate bits 0..11, its start in 12..23
            # The case's small rectangle: a multicast builds every tile it reaches (one that wraps round
            # the torus, nearly the whole grid: a few GB, more than a child may hold). NoC #1's
            # numbering runs the other way, so its start is the corner NoC #0 calls the end.
            x0, y0 = corner
            x1, y1 = x0 + size[0], y0 + size[1]
            start, end = ((x0, y0), (x1, y1)) if noc == 0 else ((x1, y1), (x0, y0))
            rectangle = xy(end) | xy(start) << 12
            if ctrl & 3 == NOC_AT:  # the rectangle in the target's coordinates, posted
                targ_xy, ret_xy = rectangle, 0
            else:  # a write from the own L1 to the rectangle
                targ, targ_xy, ret_xy = own_l1(length), xy(own), rectangle
        elif ctrl & 3 == NOC_WR and not ctrl & NOC_INLINE:  # from the own L1 to a remote address
            targ, targ_xy, ret_xy = own_l1(length), xy(own), remote()
        elif ctrl & 3 == NOC_RD:  # from a remote address into the own L1
            targ_xy, ret, ret_xy = remote(), own_l1(length), xy(own)
        elif ctrl & NOC_INLINE:  # a remote register (a stream's scratch register, as noc.h's signal)
            targ_xy, ret_xy = remote(), 0
            if rng.random() < 0.8:
                targ = get_arch(ARCH).stream_base + 4 * 31
        else:  # an atomic on a remote line, its response (marked) back into the own L1
            targ_xy, ret, ret_xy = remote(), own_l1(16), xy(own) if ctrl & NOC_MARKED else 0
        mid = regs.coordinates == "mid"
        fields = {
            "NOC_TARG_ADDR_LO": targ,
            "NOC_TARG_ADDR_MID": targ_xy << 4 if mid else 0,
            "NOC_TARG_ADDR_HI": 0 if mid else targ_xy,
            "NOC_RET_ADDR_LO": ret,
            "NOC_RET_ADDR_MID": ret_xy << 4 if mid else 0,
            "NOC_RET_ADDR_HI": 0 if mid else ret_xy,
            "NOC_CTRL": ctrl,
            "NOC_AT_LEN_BE": length
            if ctrl & 3 != NOC_AT
            else (1 << 12 | 31 << 2 if rng.random() < 0.9 else rand_value(rng)),
            "NOC_AT_DATA": rand_value(rng),
        }
        for index, name in enumerate(regs.request_fields):
            # A multicast's coordinates stay its small rectangle (see above).
            drawn = rng.random() < 0.01 and not (
                ctrl & NOC_BRCST and ("ADDR_HI" in name or "ADDR_MID" in name)
            )
            value = rand_value(rng) if drawn else fields.get(name, 0)
            words += li("t0", base + 4 * index)
            words += li("t1", value)
            words.append(rvenc.encode("sw", "t1", 0, "t0"))
        if rng.random() < 0.9:  # issue it
            words += li("t0", base + regs.cmd_ctrl)
            words += li("t1", 1)
            words.append(rvenc.encode("sw", "t1", 0, "t0"))
        if rng.random() < 0.4:  # read a counter (the flush and barrier loops poll them)
            words += li("t0", facts.niu_bases[noc] + NOC_COUNTERS + 4 * rng.randrange(8))
            words.append(rvenc.encode("lw", "t2", 0, "t0"))
    words.append(ECALL)
    return {"kind": "chip", "tile": own, "words": words, "max_cycles": rng.choice((2_000, 20_000))}


# ------------------------------------------------------------------------------------------- ELFs

ELF_CACHE = ROOT / "build" / "fuzz"  # build/ is git-ignored

# Small valid programs, one per core kind, with data, rodata and bss so that mutations reach every
# kind of segment and section (including one placed in a core's local RAM).
BASE_PROGRAMS = (
    ("brisc", 0x0, "la t0, value\n lw t1, 0(t0)\n addi t1, t1, 1\n sw t1, 0(t0)\n ecall\n"
     ".data\nvalue: .word 41\n.section .rodata\n.word 1, 2, 3\n.bss\n.space 64\n", ("-Tdata=0x4000",)),
    ("trisc0", 0x6000, "li t0, 3\n1: addi t0, t0, -1\n bnez t0, 1b\n ecall\n.data\n.word 7\n",
     ("-Tdata=0x9000",)),
    ("ncrisc", 0x12000, "la t0, buf\n sw t0, 0(t0)\n ecall\n.data\nbuf: .word 0\n",
     ("-Tdata=0xFFB00100",)),
    ("trisc2", 0xE000, "li t0, 0xFFE60000\n li t1, 0x02000000\n sw t1, 0(t0)\n ecall\n", ()),
)  # fmt: skip


# The ISA each chip's ELFs name (the loader refuses an ELF built for extensions its chip lacks).
MARCH = {"blackhole": None, "wormhole": "rv32im"}  # None: tests/asm.py's default, Blackhole's


def base_elves(arch: str = "blackhole") -> list[tuple[str, bytes]]:
    """The base ELFs for ``arch``: linked once by the GNU toolchain (tests/asm.py caches them by
    content). The parent builds them before starting children, so children only read the cache."""
    from asm import link

    march = {} if MARCH[arch] is None else {"march": MARCH[arch]}
    return [
        (core, link(src, text=text, extra=extra, **march).read_bytes())
        for core, text, src, extra in BASE_PROGRAMS
    ]


EHDR = {  # ELF32 header fields: offset, struct format
    "e_type": (16, "<H"), "e_machine": (18, "<H"), "e_version": (20, "<I"), "e_entry": (24, "<I"),
    "e_phoff": (28, "<I"), "e_shoff": (32, "<I"), "e_flags": (36, "<I"), "e_ehsize": (40, "<H"),
    "e_phentsize": (42, "<H"), "e_phnum": (44, "<H"), "e_shentsize": (46, "<H"), "e_shnum": (48, "<H"),
    "e_shstrndx": (50, "<H"),
}  # fmt: skip
PHDR = {"p_type": 0, "p_offset": 4, "p_vaddr": 8, "p_paddr": 12, "p_filesz": 16, "p_memsz": 20, "p_flags": 24}
SHDR = {
    "sh_name": 0,
    "sh_type": 4,
    "sh_flags": 8,
    "sh_addr": 12,
    "sh_offset": 16,
    "sh_size": 20,
    "sh_link": 24,
}


def _interesting(rng: random.Random, old: int, bits: int) -> int:
    mask = (1 << bits) - 1
    return rng.choice(
        (0, 1, mask, mask >> 1, (mask >> 1) + 1, old + rng.randrange(-8, 9), old ^ (1 << rng.randrange(bits)),
         old * 2, old + 0x1000, rng.getrandbits(bits), rand_value(rng))
    ) & mask  # fmt: skip


def mutate_elf(rng: random.Random, data: bytes) -> tuple[bytearray, list[str]]:
    out = bytearray(data)
    notes: list[str] = []

    def field(offset: int, fmt: str, name: str) -> None:
        if offset + struct.calcsize(fmt) > len(out):
            return
        (old,) = struct.unpack_from(fmt, out, offset)
        new = _interesting(rng, old, 8 * struct.calcsize(fmt))
        struct.pack_into(fmt, out, offset, new)
        notes.append(f"{name}:{old:#x}->{new:#x}")

    for _ in range(rng.randrange(1, 4)):
        # Read the header from the mutated bytes each time, so one mutation may build on another.
        if len(out) < 52:  # no whole ELF header left to read the tables' places from
            phoff = shoff = phnum = shnum = 0
        else:
            phoff, shoff = struct.unpack_from("<II", out, 28)
            phnum, shnum = struct.unpack_from("<H", out, 44)[0], struct.unpack_from("<H", out, 48)[0]
        kind = rng.choice(("flip", "flip", "ehdr", "phdr", "phdr", "shdr", "shdr", "truncate", "append"))
        if kind == "flip":
            for _ in range(rng.randrange(1, 8)):
                at = rng.randrange(len(out)) if rng.random() < 0.5 else rng.randrange(min(len(out), 0x100))
                out[at] ^= 1 << rng.randrange(8)
            notes.append("flip")
        elif kind == "ehdr":
            name = rng.choice(list(EHDR))
            field(EHDR[name][0], EHDR[name][1], name)
        elif kind == "phdr" and phnum:
            i = rng.randrange(min(phnum, 16))
            name = rng.choice(list(PHDR))
            field(phoff + 32 * i + PHDR[name], "<I", f"ph{i}.{name}")
        elif kind == "shdr" and shnum:
            i = rng.randrange(min(shnum, 64))
            name = rng.choice(list(SHDR))
            field(shoff + 40 * i + SHDR[name], "<I", f"sh{i}.{name}")
        elif kind == "truncate":
            size = rng.choice((rng.randrange(len(out)), rng.randrange(64), len(out) - rng.randrange(1, 64)))
            del out[max(size, 0) :]
            notes.append(f"truncate:{len(out)}")
            if not out:
                break
        elif kind == "append":
            n = rng.choice((1, 16, 4096, rng.randrange(1 << 16)))
            out += rng.randbytes(n)
            notes.append(f"append:{n}")
    return out, notes


def gen_elf(rng: random.Random) -> dict:
    bases = base_elves(ARCH)
    which = rng.randrange(len(bases))
    core, data = bases[which]
    elf, notes = mutate_elf(rng, data)
    if rng.random() < 0.15:
        core = rng.choice(CORES)  # the right ELF for the wrong core
    return {"kind": "elf", "core": core, "elf": bytes(elf), "base": which, "notes": notes,
            "max_cycles": 20_000}  # fmt: skip


GENERATORS: dict[str, Callable[[random.Random], dict]] = {
    "elf": gen_elf,
    "rv32": gen_rv32,
    "mmio": gen_mmio,
    "tensix": gen_tensix,
    "mop": gen_mop,
    "noc": gen_noc,
}


def make_input(case: Case) -> dict:
    if case.family in SELFTEST_FAMILIES:
        return {"kind": case.family}
    set_arch(case.arch)
    return {**GENERATORS[case.family](case_rng(case)), "arch": case.arch}


# ------------------------------------------------------------------------------------------- running


def execute(spec: dict, scratch: Path) -> None:
    """Run one input; returns normally or raises what the emulator raised."""
    from tensixsim import Tile

    kind = spec["kind"]
    if kind == "_raise":
        raise RuntimeError("deliberate failure (self-test)")
    if kind == "_exit":
        os._exit(3)
    if kind == "_hang":
        time.sleep(3600)
    if kind == "_hog":
        hog = bytearray(384 << 20)  # touched, so it counts in the RSS
        hog[::4096] = b"\1" * len(hog[::4096])
        return
    if kind == "chip":
        from tensixsim.chip import Chip

        chip = Chip(spec["arch"])
        x, y = spec["tile"]
        chip.tile(x, y).write(RESET_PC["brisc"], rvenc.to_bytes(spec["words"]))
        chip.run(max_cycles=spec["max_cycles"], release={(x, y): ("brisc",)})
        return
    tile = Tile(spec["arch"])
    if kind == "program":
        tile.write(RESET_PC[spec["core"]], rvenc.to_bytes(spec["words"]))
        tile.run(max_cycles=spec["max_cycles"], release=[spec["core"]])
    elif kind == "raw":
        from tensixsim.raw import run_words

        run_words(tile, spec["thread"], spec["words"])
    elif kind == "elf":
        path = scratch / "case.elf"
        path.write_bytes(spec["elf"])
        tile.load_elf(spec["core"], path)
        tile.run(max_cycles=spec["max_cycles"], release=[spec["core"]])
    else:
        raise ValueError(f"unknown input kind {kind!r}")


def run_one(case: Case, scratch: Path) -> dict:
    """Outcome of one case: "ok", a SimError class name, or another exception (a failure)."""
    from tensixsim.errors import SimError

    record: dict = {"case": case.key}
    try:
        spec = make_input(case)
        execute(spec, scratch)
        record["outcome"] = "ok"
    except SimError as exc:
        record["outcome"] = type(exc).__name__
    except BaseException as exc:  # everything else, even SystemExit or MemoryError, is a finding
        record["outcome"] = "FAILURE:" + type(exc).__name__
        record["detail"] = traceback.format_exc()
    # Drop the tile (and any traceback holding it): each one maps ~5 GiB of address space, and the
    # next case's tile must fit under the RLIMIT_AS.
    gc.collect()
    record["rss_mb"] = peak_rss_mb()
    return record


def peak_rss_mb() -> float:
    """The child's own peak RSS. Linux's ru_maxrss of a process started from a large one (a test
    worker holding a gigabyte) begins at its parent's peak, since exec carries the replaced address
    space's high-water mark over; VmHWM is the child's address space's alone."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_main(keys: list[str], as_mb: int) -> int:
    limit = as_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import tensixsim.tile  # noqa: F401  (import before the first case so its cost is not the case's)

    with tempfile.TemporaryDirectory(prefix="tensixsim-fuzz-") as tmp:
        for key in keys:
            print(json.dumps(run_one(Case.parse(key), Path(tmp))), flush=True)
    return 0


@dataclass
class Result:
    case: Case
    outcome: str
    detail: str = ""
    rss_mb: float = 0.0

    @property
    def failed(self) -> bool:
        return self.outcome.startswith("FAILURE")


def _child(
    cases: list[Case], timeout: float, as_mb: int, startup: float = STARTUP
) -> tuple[list[dict], bool, int, str]:
    """Run ``cases`` in one child: the records it printed, whether it timed out, its exit status and
    the end of its stderr. The first case may take ``startup`` seconds more (the child's imports)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--as-mb", str(as_mb)]
    records: list[dict] = []
    timed_out = False
    # stderr goes to a file, not a pipe: a child writing much to it must not block while only stdout
    # is read.
    with tempfile.TemporaryFile() as errors, selectors.DefaultSelector() as sel:
        proc = subprocess.Popen(
            [*command, *[c.key for c in cases]], stdout=subprocess.PIPE, stderr=errors, env=env, cwd=ROOT
        )
        sel.register(proc.stdout, selectors.EVENT_READ)
        buffer = b""
        deadline = time.monotonic() + timeout + startup
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                proc.kill()
                break
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                records.append(json.loads(line))
                deadline = time.monotonic() + timeout  # the timeout is per case
        code = proc.wait()
        proc.stdout.close()
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")[-4000:]
    return records, timed_out, code, stderr


def run_batch(
    cases: list[Case], timeout: float, as_mb: int, rss_mb: int, startup: float = STARTUP
) -> list[Result]:
    """Run ``cases`` in one child; on a crash or timeout, run the cases it did not report one per
    child so the culprit is named."""
    records, timed_out, code, stderr = _child(cases, timeout, as_mb, startup)
    by_key = {c.key: c for c in cases}
    results: list[Result] = []
    over = False
    for record in records:
        case = by_key[record["case"]]
        result = Result(case, record["outcome"], record.get("detail", ""), record["rss_mb"])
        if not result.failed and result.rss_mb > rss_mb and not over:
            # ru_maxrss only grows, so this is the case during which the peak went over the cap.
            result = Result(
                case, "FAILURE:rss", f"peak RSS {result.rss_mb:.0f} MB > {rss_mb} MB", result.rss_mb
            )
            over = True
        results.append(result)
    missing = [c for c in cases if c.key not in {r.case.key for r in results}]
    if not missing and code == 0:
        return results
    if len(cases) == 1:
        what = "timeout" if timed_out else "crash"
        how = f"no report after {timeout:.0f} s" if timed_out else f"exit status {code}"
        return [*results, Result(cases[0], f"FAILURE:{what}", f"{how}\n{stderr}")]
    if not missing:  # every case reported, then the child failed on the way out
        return [
            *results,
            Result(cases[-1], "FAILURE:crash", f"child exit {code} after its last case\n{stderr}"),
        ]
    alone = [r for c in missing for r in run_batch([c], timeout, as_mb, rss_mb, startup)]
    if not any(r.failed for r in alone):
        # Only the batch failed: state carried from case to case. Blame the first unreported case.
        alone[0] = Result(missing[0], "FAILURE:batch",
                          f"the batch {'timed out' if timed_out else f'exited {code}'} at this case, which "
                          f"passes alone\n{stderr}")  # fmt: skip
    return [*results, *alone]


def fuzz(
    cases: list[Case], *, jobs: int, timeout: float, as_mb: int, rss_mb: int, batch: int = BATCH,
    progress: bool = False,
) -> list[Result]:  # fmt: skip
    for arch in {c.arch for c in cases if c.family == "elf"}:
        base_elves(arch)  # link once, in the parent, before children read the cache
    # Interleave families across batches so every batch (and every job) gets a mix.
    batches = [cases[i : i + batch] for i in range(0, len(cases), batch)]
    results: list[Result] = []
    with ThreadPoolExecutor(jobs) as pool:
        for done, found in enumerate(pool.map(lambda b: run_batch(b, timeout, as_mb, rss_mb), batches), 1):
            results += found
            if progress:
                bad = sum(r.failed for r in results)
                print(f"\r{done}/{len(batches)} batches, {bad} failures", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return results


def table(results: list[Result]) -> str:
    families = list(dict.fromkeys(r.case.family for r in results))
    counts = {
        f: collections.Counter(r.outcome.split("\n")[0] for r in results if r.case.family == f)
        for f in families
    }
    outcomes = sorted(
        {o for c in counts.values() for o in c}, key=lambda o: (o.startswith("FAILURE"), o != "ok", o)
    )
    width = max([len(o) for o in outcomes] + [7])
    lines = [f"{'outcome':<{width}} " + " ".join(f"{f:>7}" for f in families) + f" {'total':>7}"]
    for o in outcomes:
        row = [counts[f][o] for f in families]
        lines.append(f"{o:<{width}} " + " ".join(f"{n:>7}" for n in row) + f" {sum(row):>7}")
    totals = [sum(counts[f].values()) for f in families]
    lines.append(f"{'total':<{width}} " + " ".join(f"{n:>7}" for n in totals) + f" {sum(totals):>7}")
    peak = max((r.rss_mb for r in results), default=0)
    lines.append(f"peak child RSS: {peak:.0f} MB")
    return "\n".join(lines)


def make_cases(count: int, seed: int, families: list[str], arch: str = "blackhole") -> list[Case]:
    # Case n goes to family n % len(families): every family gets its share, in a fixed order.
    return [Case(families[n % len(families)], n // len(families), seed, arch) for n in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500, help="total cases, shared among the families")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--arch", choices=ARCHES, default="blackhole", help="the chip of every case")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=BATCH, help="cases per child process")
    parser.add_argument("--as-mb", type=int, default=DEFAULT_AS_MB, help="RLIMIT_AS of a child")
    parser.add_argument("--rss-mb", type=int, default=DEFAULT_RSS_MB, help="peak RSS cap of a child")
    parser.add_argument("--replay", metavar="FAMILY:INDEX:SEED", help="run one case here and show it")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("keys", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.keys, args.as_mb)
    if args.replay:
        case = Case.parse(args.replay)
        spec = make_input(case)
        shown = {k: (f"<{len(v)} bytes>" if isinstance(v, bytes) else v) for k, v in spec.items()}
        print(json.dumps(shown, default=str)[:2000])
        with tempfile.TemporaryDirectory() as tmp:
            record = run_one(case, Path(tmp))
        print(record["outcome"])
        print(record.get("detail", ""), end="")
        return 1 if record["outcome"].startswith("FAILURE") else 0
    families = [f for f in args.families.split(",") if f]
    unknown = set(families) - set(FAMILIES) - set(SELFTEST_FAMILIES)
    if unknown:
        parser.error(f"unknown families {', '.join(sorted(unknown))}; families: {', '.join(FAMILIES)}")
    start = time.monotonic()
    results = fuzz(
        make_cases(args.cases, args.seed, families, args.arch), jobs=args.jobs, timeout=args.timeout,
        as_mb=args.as_mb, rss_mb=args.rss_mb, batch=args.batch, progress=sys.stderr.isatty(),
    )  # fmt: skip
    print(table(results))
    print(f"wall time: {time.monotonic() - start:.1f} s, {len(results)} cases, seed {args.seed}, {args.arch}")
    failures = [r for r in results if r.failed]
    for r in failures:
        print(f"\nFAILURE {r.outcome} in {r.case.key}: python tools/fuzz.py --replay {r.case.key}")
        print("  " + r.detail.strip().replace("\n", "\n  "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
