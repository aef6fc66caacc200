"""The native timing walk (with its whole-block fast path) against its pure-Python twin, instruction
for instruction, on random programs that exercise what the walk models: loads of L1, local RAM and
another core's local RAM, reads of the tile's registers (answered late), stores that coalesce or
not, a store then a load of its word, multiplies, divides of every size (the divide hook), fences,
CSR reads, and one-cycle instructions that rewrite the same few registers while a load holds
retirement up (the retire-order queue and the forwarding rule), the L0 data cache (on out of reset:
lines filled, hit, evicted, dropped by stores, flushed by fences and at random). Both paths must
give the same cycles and instruction counts, core by core."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from asm import assemble

from tensixsim.isa import isa_for

PROGRAMS = 48
SEED = 20261128

# Registers: s0 L1 data, s1 own local RAM, s2 BRISC's local RAM through its window, s3 the wall clock;
# a0..a5, t0..t2 data.
_DATA = ["a0", "a1", "a2", "a3", "a4", "a5", "t0", "t1", "t2"]
_FEW = ["a0", "a1", "a2"]  # rewritten often: several unretired writers


def _instruction(rng: random.Random) -> str:
    r = rng.choice
    kind = rng.choices(
        [
            "alu",
            "alu_few",
            "load_l1",
            "load_local",
            "load_remote",
            "load_register",
            "store_l1",
            "store_local",
            "sw_lw",
            "mul",
            "div",
            "fence",
            "csr",
            "branch",
        ],
        weights=[10, 8, 4, 3, 1, 2, 4, 2, 2, 2, 2, 1, 1, 2],
    )[0]
    off = 4 * rng.randrange(16)
    if kind == "alu":
        return f"{r(['add', 'sub', 'xor', 'or', 'sh2add', 'andn'])} {r(_DATA)}, {r(_DATA)}, {r(_DATA)}"
    if kind == "alu_few":
        return f"addi {r(_FEW)}, {r(_FEW)}, {rng.randrange(-8, 8)}"
    if kind == "load_l1":  # (over ten 16-byte lines: more than the L0 data cache holds)
        return f"{r(['lw', 'lhu', 'lbu'])} {r(_DATA)}, {4 * rng.randrange(40)}(s0)"
    if kind == "load_local":
        return f"lw {r(_DATA)}, {off}(s1)"
    if kind == "load_remote":
        return f"lw {r(_DATA)}, {off}(s2)"
    if kind == "load_register":  # the wall clock's low or high word: answered 7 cycles on
        return f"lw {r(_DATA)}, {r([0, 8])}(s3)"
    if kind == "store_l1":
        return f"{r(['sw', 'sh', 'sb'])} {r(_DATA)}, {off}(s0)"
    if kind == "store_local":
        return f"sw {r(_DATA)}, {off}(s1)"
    if kind == "sw_lw":
        return f"sw {r(_DATA)}, {off}(s0)\nlw {r(_DATA)}, {off}(s0)"
    if kind == "mul":
        return f"mul {r(_DATA)}, {r(_DATA)}, {r(_DATA)}"
    if kind == "div":
        return f"{r(['div', 'divu', 'rem', 'remu'])} {r(_DATA)}, {r(_DATA)}, {r(_DATA)}"
    if kind == "fence":
        return "fence"
    if kind == "csr":
        return f"csrr {r(_DATA)}, mcycle"
    return f"beq {r(_DATA)}, {r(_DATA)}, .+8\naddi {r(_FEW)}, {r(_FEW)}, 1"


def _simple(rng: random.Random) -> str:
    """One-cycle instructions only: a block the walk's fast path may take whole."""
    r = rng.choice
    few = f"addi {r(_FEW)}, {r(_FEW)}, {rng.randrange(-8, 8)}"
    alu = f"{r(['add', 'xor', 'sh2add'])} {r(_DATA)}, {r(_DATA)}, {r(_DATA)}"
    return few if rng.random() < 0.6 else alu


def _program(rng: random.Random) -> str:
    # Segments ended by a taken branch to the next instruction (a block boundary): some hold any
    # instruction, some only one-cycle ones, so whole simple blocks follow loads still retiring.
    segments = []
    for _ in range(rng.randrange(2, 7)):
        make = _simple if rng.random() < 0.5 else _instruction
        segments.append("\n".join(make(rng) for _ in range(rng.randrange(1, 10))))
    body = "\nbeq zero, zero, .+4\n".join(segments)
    values = "\n".join(f"li {reg}, {rng.randrange(-(2**31), 2**31)}" for reg in _DATA)
    return (
        f"li s0, 0x30000\nli s1, 0xFFB00400\nli s2, 0xFFB14400\nli s3, 0xFFB121F0\n{values}\n"
        f"li t6, {rng.randrange(3, 40)}\n1:\n{body}\naddi t6, t6, -1\nbnez t6, 1b\necall"
    )


_RUN = """
import json, sys
from tensixsim import Tile
from tensixsim.riscv.native import native_library
images = json.loads(sys.stdin.read())
core, base = sys.argv[2], int(sys.argv[3])
out = []
for image in images:
    tile = Tile(sys.argv[1])
    tile.write(base, bytes.fromhex(image))
    result = tile.run(max_cycles=10**7, release=[core])
    stats = result.cores[core]
    out.append([stats.cycles, stats.instructions, tile.core(core).reg("a0")])
print(json.dumps({"native": native_library() is not None, "runs": out}))
"""


def _run(
    images: list[str], pure_python: bool, arch: str = "blackhole", core: str = "brisc", base: int = 0
) -> dict:
    env = dict(os.environ)
    env.pop("TENSIXSIM_PURE_PYTHON", None)
    if pure_python:
        env["TENSIXSIM_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _RUN, arch, core, str(base)],
        input=json.dumps(images),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_native_walk_and_its_python_twin_give_the_same_cycles_on_random_programs():
    rng = random.Random(SEED)
    images = [assemble(_program(rng), base=0).hex() for _ in range(PROGRAMS)]
    native, python = _run(images, False), _run(images, True)
    assert native["native"] and not python["native"]
    assert native["runs"] == python["runs"]
    # The programs do stall (else they would test little): loads, divides and fences cost cycles.
    assert sum(cycles > instructions for cycles, instructions, _ in native["runs"]) == PROGRAMS


def test_the_same_on_wormhole_whose_walk_has_its_own_figures():
    """Wormhole's walk (its branch bubble, multiplies holding the next instruction, no coalescing of
    L1 stores) in C and in Python, on the same kind of programs without Zba/Zbb."""
    rng = random.Random(SEED + 1)
    # (Wormhole has no window onto another core's local RAM, s2 reads the own one instead, and its
    # cores have no CSRs.)
    sources = [
        _program(rng).replace("sh2add", "add").replace("andn", "and").replace("0xFFB14400", "0xFFB00600")
        for _ in range(PROGRAMS // 2)
    ]
    sources = [
        "\n".join("nop" if line.startswith("csr") else line for line in s.splitlines()) for s in sources
    ]
    # Each iteration also fills a 16-byte block word by word: stores Blackhole's queue would coalesce.
    block = "sw a0, 0(s0)\nsw a1, 4(s0)\nsw a2, 8(s0)\nsw a3, 12(s0)\n"
    sources = [source.replace("\n1:\n", f"\n1:\n{block}", 1) for source in sources]
    images = [assemble(source, base=0).hex() for source in sources]
    native, python = _run(images, False, "wormhole"), _run(images, True, "wormhole")
    assert native["native"] and not python["native"]
    assert native["runs"] == python["runs"]


# cfg0's timing fields (DisLdBufByp, DisBp, DisLowCash, SyncAllOps, DisCsrSync, DisStMerge,
# DisRegForwarding, DisLowCachePeriodicFlush).
_CFG0_BITS = (1 << 0, 1 << 1, 1 << 3, 1 << 9, 1 << 10, 1 << 12, 1 << 20, 1 << 24)


def test_the_same_under_every_cfg0_timing_field_and_pmacfg() -> None:
    """Random programs run with random cfg0 timing fields set, and pmacfg0's ordering on or off, the
    fields changing again inside the loop (the instructions before a CSR write are accounted under
    the old settings, those after it under the new)."""
    rng = random.Random(SEED + 2)
    sources = []
    for _ in range(PROGRAMS // 2):
        first = sum(bit for bit in _CFG0_BITS if rng.random() < 0.4)
        toggled = rng.choice(_CFG0_BITS)
        order = "li t0, 1\ncsrw 0x7c1, t0\n" if rng.random() < 0.3 else ""
        source = _program(rng)
        setup = f"li t0, {first}\ncsrs 0x7c0, t0\n{order}"
        # Each iteration flips one field (t0 and t1 are data again afterwards).
        flip = f"li t1, {toggled}\ncsrr t0, 0x7c0\nxor t0, t0, t1\ncsrw 0x7c0, t0\n"
        flip = flip if rng.random() < 0.5 else ""
        source = source.replace("\n1:\n", f"\n{setup}1:\n{flip}", 1)
        sources.append(source)
    images = [assemble(source, base=0).hex() for source in sources]
    native, python = _run(images, False), _run(images, True)
    assert native["native"] and not python["native"]
    assert native["runs"] == python["runs"]


def test_the_same_for_a_trisc_fusing_inline_words() -> None:
    """TRISC1 runs the random programs with runs of inline Tensix NOPs among them: adjacent words
    fuse (four a cycle) until the input FIFO fills, a full FIFO stalls the core and ends the group;
    some programs turn fusion off and on again inside the loop."""
    nop = isa_for("blackhole").encode("NOP")
    word = f".word {((nop << 2) | (nop >> 30)) & 0xFFFFFFFF:#x}"
    rng = random.Random(SEED + 3)
    sources = []
    for _ in range(PROGRAMS // 2):
        source = _program(rng)
        lines = []
        for line in source.splitlines():
            lines.append(line)
            if rng.random() < 0.3:
                lines += [word] * rng.randrange(1, 9)
        if rng.random() < 0.4:
            flip = "li t1, 0x40000\ncsrr t0, 0x7c0\nxor t0, t0, t1\ncsrw 0x7c0, t0"
            lines.insert(lines.index("1:") + 1, flip)
        sources.append("\n".join(lines))
    images = [assemble(source, base=0xA000).hex() for source in sources]
    native = _run(images, False, core="trisc1", base=0xA000)
    python = _run(images, True, core="trisc1", base=0xA000)
    assert native["native"] and not python["native"]
    assert native["runs"] == python["runs"]
