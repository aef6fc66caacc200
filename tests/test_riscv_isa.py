"""RISC-V conformance of the baby cores: RV32IM + Zicsr + Zaamo + Zba + Zbb.

Each test assembles a program with the test encoder (``tests/rvenc.py``), runs it on a fresh
Blackhole tile and compares what the program stored in L1 with the independent reference
semantics (``tests/rvref.py``). To keep the suite fast, one program applies an instruction to a
whole batch of operands: per batch item, load the operands from L1, execute, store the result.

Operand strategies are edge-biased: 0, 1, -1, INT_MIN, INT_MAX, powers of two and their
neighbours, byte patterns (for ``orc.b``/``rev8``), equal pairs, then uniform random words.
Set TENSIXSIM_ISA_EXAMPLES to run more hypothesis examples per test (default below).
"""

from __future__ import annotations

import itertools
import os
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
import rvenc
import rvref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.errors import InvalidInstruction, InvalidProgram

MASK = rvref.MASK32
INT_MIN = rvref.INT_MIN
INT_MAX = rvref.INT_MAX

# Reset PCs (Blackhole: BRISC at 0, TRISC0/1/2 at 0x6000/0xA000/0xE000, NCRISC at 0x12000); each
# program must end before the next core's code. Per-core L1 scratch lies clear of all code.
RESET_PC = {"brisc": 0x0, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000, "ncrisc": 0x12000}
CODE_END = {"brisc": 0x6000, "trisc0": 0xA000, "trisc1": 0xE000, "trisc2": 0x12000, "ncrisc": 0x20000}
DATA = {"brisc": 0x40000, "ncrisc": 0x60000, "trisc0": 0x80000, "trisc1": 0xA0000, "trisc2": 0xC0000}
LOCAL_RAM = 0xFFB00000
CORES = tuple(RESET_PC)
TRISCS = ("trisc0", "trisc1", "trisc2")

EXAMPLES = int(os.environ.get("TENSIXSIM_ISA_EXAMPLES", "12"))
isa_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
few_settings = settings(isa_settings, max_examples=max(2, EXAMPLES // 3))

EXIT = "li a0, 0\necall"


# ----------------------------------------------------------------------------------------------
# Running programs


@dataclass
class Ran:
    tile: Tile
    result: object

    def read(self, addr: int, size: int) -> bytes:
        return bytes(self.tile.l1[addr : addr + size])

    def words(self, addr: int, count: int) -> list[int]:
        return [int(w) for w in np.frombuffer(self.read(addr, 4 * count), dtype="<u4")]


def pack(values: Iterable[int]) -> bytes:
    values = [v & MASK for v in values]
    return struct.pack(f"<{len(values)}I", *values)


def run(
    programs: dict[str, str],
    data: dict[int, bytes] | None = None,
    *,
    exit_codes: dict[str, int] | None = None,
    max_cycles: int = 2_000_000,
    backend: str = "coprocessor",
) -> Ran:
    """Load one program per core at its reset PC, release those cores, run to their ``ecall``."""
    tile = Tile("blackhole", backend=backend)
    for core, source in programs.items():
        image = rvenc.to_bytes(rvenc.assemble(source, base=RESET_PC[core]))
        assert RESET_PC[core] + len(image) <= CODE_END[core], f"{core} program too long"
        tile.write(RESET_PC[core], image)
    for addr, blob in (data or {}).items():
        tile.write(addr, blob)
    result = tile.run(max_cycles=max_cycles, release=list(programs))
    for core in programs:
        want = (exit_codes or {}).get(core, 0)
        assert result.cores[core].exit_code == want, f"{core} exit code"
    return Ran(tile, result)


def compare(what: str, items: Sequence[object], got: Sequence[int], want: Sequence[int]) -> None:
    """Fail naming every disagreeing batch item (inputs, expected, got) in hex."""
    bad = [
        f"  {what} {_fmt(item)}: expected {w:#010x}, got {g:#010x}"
        for item, g, w in zip(items, got, want, strict=True)
        if g != w
    ]
    assert not bad, f"{len(bad)} of {len(items)} disagree with the reference:\n" + "\n".join(bad[:20])


def _fmt(item: object) -> str:
    if isinstance(item, tuple):
        return "(" + ", ".join(_fmt(x) for x in item) + ")"
    if isinstance(item, int):
        return f"{item:#x}"
    return str(item)


# ----------------------------------------------------------------------------------------------
# Strategies


def _edge_values() -> tuple[int, ...]:
    values = {0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000}
    values |= {INT_MAX, INT_MIN, INT_MIN + 1, MASK, MASK - 1, 31, 32, 33, 63}
    values |= {0x55555555, 0xAAAAAAAA, 0x0F0F0F0F, 0x00FF00FF, 0x80808080, 0x01010101}
    values |= {0x12345678, 0x87654321, 0xFF00FF00, 0x00800080}
    for k in range(32):
        values |= {1 << k, (1 << k) - 1, MASK ^ (1 << k), (MASK << k) & MASK}
    return tuple(sorted(values))


EDGE_VALUES = _edge_values()
# A smaller set for exhaustive pair sweeps (all pairs fit one program).
SWEEP_VALUES = (
    0, 1, 2, 31, 32, 33, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF,
    INT_MAX, INT_MIN, INT_MIN + 1, MASK, MASK - 1, 0x55555555, 0xAAAAAAAA, 0x12345678,
)  # fmt: skip

byte_patterns = st.lists(
    st.one_of(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF]), st.integers(0, 255)),
    min_size=4,
    max_size=4,
).map(lambda b: int.from_bytes(bytes(b), "little"))

words = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(0, MASK),
    byte_patterns,
    st.integers(0, 64),
    st.integers(0, 31).map(lambda n: (MASK << 5 | n) & MASK),  # shift amount with high bits set
)
pairs = st.one_of(
    st.tuples(words, words),
    words.map(lambda x: (x, x)),
    words.map(lambda x: (x, (x + 1) & MASK)),
    words.map(lambda x: (x, (-x) & MASK)),
)
imm12 = st.one_of(
    st.sampled_from([0, 1, -1, 2047, -2048, 0x7FF, 0x400, -0x400, 31, 32]),
    st.integers(-2048, 2047),
)
shamts = st.integers(0, 31)
imm20 = st.one_of(st.sampled_from([0, 1, 0x7FFFF, 0x80000, 0xFFFFF]), st.integers(0, 0xFFFFF))


def batches(element: st.SearchStrategy, min_size: int = 8, max_size: int = 48) -> st.SearchStrategy:
    return st.lists(element, min_size=min_size, max_size=max_size)


# ----------------------------------------------------------------------------------------------
# Batch programs for register results


def _binop_batch(op: str, operands: Sequence[tuple[int, int]], core: str = "brisc") -> list[int]:
    lines = [f"li s0, {DATA[core]}"]
    for _ in operands:
        lines += ["lw a0, 0(s0)", "lw a1, 4(s0)", f"{op} a2, a0, a1", "sw a2, 8(s0)"]
        lines += ["addi s0, s0, 12"]
    data = pack(v for a, b in operands for v in (a, b, 0xCCCCCCCC))
    ran = run({core: "\n".join(lines) + "\n" + EXIT}, {DATA[core]: data})
    return ran.words(DATA[core], 3 * len(operands))[2::3]


def _unary_batch(instruction: str, operands: Sequence[int], core: str = "brisc") -> list[int]:
    """``instruction`` reads its operand from a0 and writes its result to a2."""
    lines = [f"li s0, {DATA[core]}"]
    for _ in operands:
        lines += ["lw a0, 0(s0)", instruction, "sw a2, 4(s0)", "addi s0, s0, 8"]
    data = pack(v for a in operands for v in (a, 0xCCCCCCCC))
    ran = run({core: "\n".join(lines) + "\n" + EXIT}, {DATA[core]: data})
    return ran.words(DATA[core], 2 * len(operands))[1::2]


def _imm_batch(op: str, items: Sequence[tuple[int, int]]) -> list[int]:
    """Items are (a, immediate); each gets its own instruction."""
    lines = [f"li s0, {DATA['brisc']}"]
    for _, imm in items:
        lines += ["lw a0, 0(s0)", f"{op} a2, a0, {imm}", "sw a2, 4(s0)", "addi s0, s0, 8"]
    data = pack(v for a, _ in items for v in (a, 0xCCCCCCCC))
    ran = run({"brisc": "\n".join(lines) + "\n" + EXIT}, {DATA["brisc"]: data})
    return ran.words(DATA["brisc"], 2 * len(items))[1::2]


REG_REG_OPS = sorted(rvref.REG_REG)


# ----------------------------------------------------------------------------------------------
# The reference itself (spec tables and examples; no emulator)


def test_reference_division_follows_the_spec_table() -> None:
    # Unprivileged spec, "Division by zero and overflow" table.
    assert rvref.div(1234, 0) == MASK and rvref.divu(1234, 0) == MASK
    assert rvref.rem(1234, 0) == 1234 and rvref.remu(1234, 0) == 1234
    assert rvref.div(INT_MIN, MASK) == INT_MIN and rvref.rem(INT_MIN, MASK) == 0
    assert rvref.div(rvref.u32(-7), 2) == rvref.u32(-3)  # rounds toward zero
    assert rvref.rem(rvref.u32(-7), 2) == rvref.u32(-1)  # sign of the dividend
    assert rvref.rem(7, rvref.u32(-2)) == 1


def test_reference_bitmanip_examples() -> None:
    assert rvref.clz(0) == 32 and rvref.ctz(0) == 32 and rvref.cpop(MASK) == 32
    assert rvref.clz(1) == 31 and rvref.ctz(INT_MIN) == 31
    assert rvref.rev8(0x12345678) == 0x78563412
    assert rvref.orc_b(0x00010080) == 0x00FF00FF
    assert rvref.rol(0x80000001, 1) == 0x00000003 and rvref.ror(0x80000001, 33) == 0xC0000000
    assert rvref.sext_b(0x80) == 0xFFFFFF80 and rvref.sext_h(0x12347FFF) == 0x7FFF
    assert rvref.zext_h(0xFFFF8000) == 0x8000
    assert rvref.min_(1, MASK) == MASK and rvref.minu(1, MASK) == 1
    assert rvref.sh3add(1, 2) == 10
    assert rvref.mulhsu(MASK, MASK) == MASK  # -1 * (2**32 - 1), high word
    assert rvref.mulh(INT_MIN, INT_MIN) == 0x40000000


def test_reference_matches_python_big_int_formulations() -> None:
    for a in EDGE_VALUES:
        assert rvref.clz(a) == 32 - a.bit_length()
        assert rvref.cpop(a) == bin(a).count("1")
        assert rvref.rev8(a) == int.from_bytes(a.to_bytes(4, "little"), "big")
        for n in (0, 1, 7, 31):
            assert rvref.rol(a, n) == rvref.ror(a, (32 - n) % 32)


# ----------------------------------------------------------------------------------------------
# Register-register ALU, M, Zba, Zbb


@pytest.mark.parametrize("op", REG_REG_OPS)
@isa_settings
@given(operands=batches(pairs))
def test_reg_reg_op_matches_reference(op: str, operands: list[tuple[int, int]]) -> None:
    got = _binop_batch(op, operands)
    compare(op, operands, got, [rvref.REG_REG[op](a, b) for a, b in operands])


@pytest.mark.parametrize("op", REG_REG_OPS)
def test_reg_reg_op_on_every_pair_of_edge_values(op: str) -> None:
    operands = [(a, b) for a in SWEEP_VALUES for b in SWEEP_VALUES]
    got = _binop_batch(op, operands)
    compare(op, operands, got, [rvref.REG_REG[op](a, b) for a, b in operands])


# ----------------------------------------------------------------------------------------------
# Register-immediate


@pytest.mark.parametrize("op", sorted(rvref.REG_IMM))
@isa_settings
@given(items=batches(st.tuples(words, imm12)))
def test_reg_imm_op_matches_reference(op: str, items: list[tuple[int, int]]) -> None:
    got = _imm_batch(op, items)
    compare(op, items, got, [rvref.REG_IMM[op](a, imm) for a, imm in items])


@pytest.mark.parametrize("op", sorted(rvref.SHIFT_IMM))
@isa_settings
@given(items=batches(st.tuples(words, shamts)))
def test_shift_imm_op_matches_reference(op: str, items: list[tuple[int, int]]) -> None:
    got = _imm_batch(op, items)
    compare(op, items, got, [rvref.SHIFT_IMM[op](a, n) for a, n in items])


@pytest.mark.parametrize("op", sorted(rvref.SHIFT_IMM))
def test_shift_imm_op_on_every_shift_amount(op: str) -> None:
    items = [(a, n) for a in (1, INT_MIN, MASK, 0x12345678, 0x80000001) for n in range(32)]
    got = _imm_batch(op, items)
    compare(op, items, got, [rvref.SHIFT_IMM[op](a, n) for a, n in items])


# ----------------------------------------------------------------------------------------------
# Zbb unary


@pytest.mark.parametrize("op", sorted(rvref.UNARY))
@isa_settings
@given(operands=batches(words))
def test_unary_op_matches_reference(op: str, operands: list[int]) -> None:
    got = _unary_batch(f"{op} a2, a0", operands)
    compare(op, operands, got, [rvref.UNARY[op](a) for a in operands])


@pytest.mark.parametrize("op", sorted(rvref.UNARY))
def test_unary_op_on_every_edge_value_and_byte_pattern(op: str) -> None:
    patterns = [
        int.from_bytes(bytes((b0, b1, b2, b3)), "little")
        for b0 in (0, 1, 0x80, 0xFF)
        for b1 in (0, 1, 0x80, 0xFF)
        for b2 in (0, 0x7F, 0x80)
        for b3 in (0, 0x7F, 0x80)
    ]
    operands = list(EDGE_VALUES) + patterns
    got = _unary_batch(f"{op} a2, a0", operands)
    compare(op, operands, got, [rvref.UNARY[op](a) for a in operands])


# ----------------------------------------------------------------------------------------------
# lui, auipc


@isa_settings
@given(imms=batches(imm20))
def test_lui_and_auipc_match_reference(imms: list[int]) -> None:
    base = DATA["brisc"]
    lines = [f"li s0, {base}"]
    for i, imm in enumerate(imms):
        lines += [f"lui a2, {imm:#x}", "sw a2, 0(s0)"]
        lines += [f"A{i}: auipc a3, {imm:#x}", "sw a3, 4(s0)", "addi s0, s0, 8"]
    _, labels = rvenc.assemble_labels("\n".join(lines), base=RESET_PC["brisc"])
    ran = run({"brisc": "\n".join(lines) + "\n" + EXIT})
    got = ran.words(base, 2 * len(imms))
    compare("lui", imms, got[0::2], [rvref.lui(imm) for imm in imms])
    want = [rvref.auipc(labels[f"A{i}"], imm) for i, imm in enumerate(imms)]
    compare("auipc", imms, got[1::2], want)


# ----------------------------------------------------------------------------------------------
# Any registers, x0 included: rd == rs1 == rs2, writes to x0 discarded


POOL = [n for n in rvenc.ABI_NAMES if n != "s0"]  # s0 is the data pointer
MIXED_OPS = REG_REG_OPS + sorted(rvref.UNARY) + sorted(rvref.REG_IMM) + sorted(rvref.SHIFT_IMM)


@st.composite
def mixed_items(draw: st.DrawFn) -> tuple:
    op = draw(st.sampled_from(MIXED_OPS))
    regs = st.one_of(st.sampled_from(["zero", "a0", "a1"]), st.sampled_from(POOL))
    rd, rs1, rs2 = draw(regs), draw(regs), draw(regs)
    a, b = draw(pairs)
    imm = draw(shamts if op in rvref.SHIFT_IMM else imm12)
    return op, rd, rs1, rs2, a, b, imm


def _mixed_expected(op: str, rd: str, rs1: str, rs2: str, a: int, b: int, imm: int) -> int:
    regs = {"zero": 0}
    for name, value in ((rs1, a), (rs2, b)):
        if name != "zero":
            regs[name] = value
    x, y = regs[rs1], regs[rs2]
    if op in rvref.REG_REG:
        result = rvref.REG_REG[op](x, y)
    elif op in rvref.UNARY:
        result = rvref.UNARY[op](x)
    elif op in rvref.REG_IMM:
        result = rvref.REG_IMM[op](x, imm)
    else:
        result = rvref.SHIFT_IMM[op](x, imm)
    if rd != "zero":
        regs[rd] = result
    return regs[rd]


def _mixed_line(op: str, rd: str, rs1: str, rs2: str, imm: int) -> str:
    if op in rvref.REG_REG:
        return f"{op} {rd}, {rs1}, {rs2}"
    if op in rvref.UNARY:
        return f"{op} {rd}, {rs1}"
    return f"{op} {rd}, {rs1}, {imm}"


@isa_settings
@given(items=batches(mixed_items(), min_size=16, max_size=64))
def test_any_register_choice_including_x0(items: list[tuple]) -> None:
    base = DATA["brisc"]
    lines = [f"li s0, {base}"]
    for op, rd, rs1, rs2, _, _, imm in items:
        lines += [f"lw {rs1}, 0(s0)", f"lw {rs2}, 4(s0)", _mixed_line(op, rd, rs1, rs2, imm)]
        lines += [f"sw {rd}, 8(s0)", "addi s0, s0, 12"]
    data = pack(v for item in items for v in (item[4], item[5], 0xCCCCCCCC))
    ran = run({"brisc": "\n".join(lines) + "\n" + EXIT}, {base: data})
    got = ran.words(base, 3 * len(items))[2::3]
    compare("op,rd,rs1,rs2,a,b,imm", items, got, [_mixed_expected(*item) for item in items])


# ----------------------------------------------------------------------------------------------
# Branches and jumps


@isa_settings
@given(items=batches(st.tuples(st.sampled_from(sorted(rvref.BRANCH)), pairs)))
def test_branch_taken_and_not_taken_forward_and_backward(items: list[tuple]) -> None:
    """Per item: a forward branch and a backward branch on the same operands."""
    base = DATA["brisc"]
    lines = [f"li s0, {base}"]
    for i, (op, _) in enumerate(items):
        lines += ["lw a0, 0(s0)", "lw a1, 4(s0)"]
        lines += ["li a2, 1", f"{op} a0, a1, F{i}", "li a2, 0", f"F{i}: sw a2, 8(s0)"]
        lines += ["li a3, 1", f"j C{i}", f"B{i}: j D{i}", f"C{i}: {op} a0, a1, B{i}", "li a3, 0"]
        lines += [f"D{i}: sw a3, 12(s0)", "addi s0, s0, 16"]
    data = pack(v for _, (a, b) in items for v in (a, b, 0xCCCCCCCC, 0xCCCCCCCC))
    ran = run({"brisc": "\n".join(lines) + "\n" + EXIT}, {base: data})
    got = ran.words(base, 4 * len(items))
    want = [int(rvref.BRANCH[op](a, b)) for op, (a, b) in items]
    compare("forward taken? op,(a,b)", items, got[2::4], want)
    compare("backward taken? op,(a,b)", items, got[3::4], want)


def test_branches_reach_plus_4092_and_minus_4096_bytes() -> None:
    """beq at its farthest reach both ways, then a jal over 12 KB of nops."""
    base = DATA["brisc"]
    nops = ["nop"] * 1020
    lines = [f"li s0, {base}", "li a2, 0", "beq zero, zero, FAR_FWD", "li a0, 1", "ecall"]
    lines += [*nops, "FAR_FWD: addi a2, a2, 1", "j BACK_SRC"]
    lines += ["BACK_DST: addi a2, a2, 2", "j DONE", *nops, "li a0, 2", "ecall"]
    lines += ["BACK_SRC: beq zero, zero, BACK_DST", "li a0, 3", "ecall"]
    lines += ["DONE: jal zero, JAL_FAR", *(["nop"] * 3000), "li a0, 4", "ecall"]
    lines += ["JAL_FAR: sw a2, 0(s0)", EXIT]
    source = "\n".join(lines)
    words_, labels = rvenc.assemble_labels(source)
    assert words_[2] == rvenc.encode("beq", "zero", "zero", 4092)
    assert words_[labels["BACK_SRC"] // 4] == rvenc.encode("beq", "zero", "zero", -4096)
    ran = run({"brisc": source})
    assert ran.words(base, 1) == [3]


LINK_REGS = st.sampled_from(["ra", "t0", "t1", "a5", "s11", "zero", "t6"])


@isa_settings
@given(items=batches(LINK_REGS, min_size=4, max_size=32))
def test_jal_links_the_next_instruction(items: list[str]) -> None:
    base = DATA["brisc"]
    lines = [f"li s0, {base}"]
    for i, rd in enumerate(items):
        lines += [f"li {rd}, 0x5A5A5A5A" if rd != "zero" else "nop"]
        lines += [f"J{i}: jal {rd}, T{i}", "li a0, 1", "ecall"]
        lines += [f"T{i}: sw {rd}, 0(s0)", "addi s0, s0, 4"]
    source = "\n".join(lines) + "\n" + EXIT
    _, labels = rvenc.assemble_labels(source)
    ran = run({"brisc": source})
    want = [0 if rd == "zero" else rvref.jal_link(labels[f"J{i}"]) for i, rd in enumerate(items)]
    compare("jal rd", items, ran.words(base, len(items)), want)


@isa_settings
@given(
    items=batches(
        st.tuples(imm12, st.booleans(), st.sampled_from(["ra", "t1", "t0", "zero"])),
        min_size=4,
        max_size=32,
    )
)
def test_jalr_jumps_to_rs1_plus_imm_with_bit0_cleared_and_links(items: list[tuple]) -> None:
    """``rd`` may be ``t0`` (the base register itself): the target uses the old value."""
    base = DATA["brisc"]
    lines = [f"li s0, {base}"]
    for i, (imm, odd, rd) in enumerate(items):
        lines += [f"la t0, T{i}{int(odd) - imm:+d}", f"J{i}: jalr {rd}, {imm}(t0)"]
        lines += ["li a0, 1", "ecall", f"T{i}: sw {rd}, 0(s0)", "addi s0, s0, 4"]
    source = "\n".join(lines) + "\n" + EXIT
    _, labels = rvenc.assemble_labels(source)
    for i, (imm, odd, _) in enumerate(items):  # the test's own arithmetic
        rs1 = labels[f"T{i}"] + int(odd) - imm
        assert rvref.jalr_target(rs1, imm) == labels[f"T{i}"]
    ran = run({"brisc": source})
    want = [0 if rd == "zero" else labels[f"J{i}"] + 4 for i, (_, _, rd) in enumerate(items)]
    compare("jalr imm,odd,rd", items, ran.words(base, len(items)), want)


# ----------------------------------------------------------------------------------------------
# Loads and stores, on L1 and on each core's local RAM

REGION = 256  # bytes of memory under test; the base register points at its middle
LOAD_STORE_PLACES = [("brisc", "l1")] + [(core, "local") for core in CORES]


def _copy_words(src: str, dst: str, count: int) -> list[str]:
    lines = []
    for k in range(count):
        lines += [f"lw t0, {4 * k}({src})", f"sw t0, {4 * k}({dst})"]
    return lines


@st.composite
def load_items(draw: st.DrawFn) -> tuple[str, int]:
    op = draw(st.sampled_from(sorted(rvref.LOAD)))
    size = rvref.LOAD_SIZE[op]
    offset = draw(st.integers(-REGION // 2 // size, REGION // 2 // size - 1)) * size
    return op, offset


@pytest.mark.parametrize(("core", "where"), LOAD_STORE_PLACES)
@isa_settings
@given(
    memory=st.one_of(
        st.binary(min_size=REGION, max_size=REGION),
        st.lists(st.sampled_from([0, 0x7F, 0x80, 0xFF]), min_size=REGION, max_size=REGION).map(bytes),
    ),
    items=batches(load_items(), min_size=16, max_size=64),
)
def test_loads_sign_and_zero_extend_like_the_reference(
    core: str, where: str, memory: bytes, items: list[tuple[str, int]]
) -> None:
    data = DATA[core]
    src, out = data, data + REGION
    region = src if where == "l1" else LOCAL_RAM
    lines = [f"li s2, {src}", f"li s1, {region + REGION // 2}", f"li s0, {out}"]
    if where == "local":
        lines += ["addi s3, s1, -128", *_copy_words("s2", "s3", REGION // 4)]
    for op, offset in items:
        lines += [f"{op} a2, {offset}(s1)", "sw a2, 0(s0)", "addi s0, s0, 4"]
    ran = run({core: "\n".join(lines) + "\n" + EXIT}, {src: memory})
    want = [rvref.LOAD[op](memory, REGION // 2 + offset) for op, offset in items]
    compare(f"{core} {where} load,offset", items, ran.words(out, len(items)), want)


@st.composite
def store_items(draw: st.DrawFn) -> tuple[str, int, int]:
    op = draw(st.sampled_from(sorted(rvref.STORE)))
    size = rvref.STORE_SIZE[op]
    offset = draw(st.integers(-REGION // 2 // size, REGION // 2 // size - 1)) * size
    return op, offset, draw(words)


@pytest.mark.parametrize(("core", "where"), LOAD_STORE_PLACES)
@isa_settings
@given(
    memory=st.binary(min_size=REGION, max_size=REGION),
    items=batches(store_items(), min_size=16, max_size=64),
)
def test_stores_write_only_their_bytes(
    core: str, where: str, memory: bytes, items: list[tuple[str, int, int]]
) -> None:
    """Stores in sequence (overlapping); the whole region then read back with ``lw``."""
    data = DATA[core]
    src, values, out = data, data + REGION, data + REGION + 4 * len(items)
    region = src if where == "l1" else LOCAL_RAM
    lines = [f"li s2, {src}", f"li s1, {region + REGION // 2}", f"li s0, {values}"]
    lines += ["addi s3, s1, -128", f"li s4, {out}"]
    if where == "local":
        lines += _copy_words("s2", "s3", REGION // 4)
    for op, offset, _ in items:
        lines += ["lw a1, 0(s0)", f"{op} a1, {offset}(s1)", "addi s0, s0, 4"]
    lines += _copy_words("s3", "s4", REGION // 4)
    ran = run(
        {core: "\n".join(lines) + "\n" + EXIT},
        {src: memory, values: pack(v for _, _, v in items)},
    )
    want = memory
    for op, offset, value in items:
        want = rvref.STORE[op](want, REGION // 2 + offset, value)
    got = ran.read(out, REGION)
    if where == "l1":
        assert ran.read(src, REGION) == got, "lw read back differs from L1 contents"
    bad = [f"  byte {i - REGION // 2:+d}: {w:#04x} != {g:#04x}" for i, (g, w) in
           enumerate(zip(got, want, strict=True)) if g != w]  # fmt: skip
    assert not bad, f"{core} {where} stores {items}:\n" + "\n".join(bad[:20])


def test_load_store_immediates_reach_plus_2047_and_minus_2048() -> None:
    base = DATA["brisc"] + 0x1000
    lines = [f"li s1, {base}", "li a1, 0x11223344"]
    lines += ["sb a1, 2047(s1)", "sh a1, -2048(s1)", "lbu a2, 2047(s1)", "lh a3, -2048(s1)"]
    lines += ["sw a2, 0(s1)", "sw a3, 4(s1)", EXIT]
    ran = run({"brisc": "\n".join(lines)})
    assert ran.read(base + 2047, 1) == b"\x44"
    assert ran.read(base - 2048, 2) == b"\x44\x33"
    assert ran.words(base, 2) == [0x44, 0x3344]


def test_local_ram_is_private_to_each_core() -> None:
    """All five cores store different words at LOCAL_RAM, meet at an L1 counter, read back."""
    counter = 0x30000
    programs = {}
    for i, core in enumerate(CORES):
        programs[core] = "\n".join(
            [
                f"li s1, {LOCAL_RAM}",
                f"li a1, {0xC0DE0000 + i}",
                "sw a1, 0(s1)",
                "sh a1, 6(s1)",
                f"li s2, {counter}",
                "li t0, 1",
                "amoadd.w zero, t0, (s2)",
                f"li t1, {len(CORES)}",
                "WAIT: lw t2, 0(s2)",
                "bne t2, t1, WAIT",
                "lw a2, 0(s1)",
                "lw a3, 4(s1)",
                f"li s3, {DATA[core]}",
                "sw a2, 0(s3)",
                "sw a3, 4(s3)",
                EXIT,
            ]
        )
    ran = run(programs, {counter: pack([0])})
    for i, core in enumerate(CORES):
        word = 0xC0DE0000 + i
        assert ran.words(DATA[core], 2)[0] == word, core
        assert ran.words(DATA[core], 2)[1] >> 16 == word & 0xFFFF, core


# ----------------------------------------------------------------------------------------------
# AMOs


@st.composite
def amo_items(draw: st.DrawFn) -> tuple[str, str, str, int, int]:
    op = draw(st.sampled_from(sorted(rvref.AMO)))
    ordering = draw(st.sampled_from(sorted(rvenc.AMO_ORDERINGS)))
    rd = draw(st.sampled_from(["a2", "a2", "a1", "zero"]))  # a1 is rs2
    mem, b = draw(pairs)
    return op, ordering, rd, mem, b


@pytest.mark.parametrize("where", ["l1", "local"])
@isa_settings
@given(items=batches(amo_items(), min_size=8, max_size=48))
def test_amo_returns_old_word_and_writes_reference_result(where: str, items: list[tuple]) -> None:
    """Per item [rs2 value, memory word, rd]: ``amo rd, a1, (s1)``; rd may be rs2 or x0."""
    base = DATA["brisc"]
    lines = [f"li s0, {base}", f"li s1, {LOCAL_RAM + 0x100}"]
    for op, ordering, rd, _, _ in items:
        lines += ["li a2, 0x77777777", "lw a1, 0(s0)"]
        if where == "l1":
            lines += ["addi s1, s0, 4", f"{op}{ordering} {rd}, a1, (s1)"]
        else:
            lines += ["lw t0, 4(s0)", "sw t0, 0(s1)", f"{op}{ordering} {rd}, a1, (s1)"]
            lines += ["lw t0, 0(s1)", "sw t0, 4(s0)", "addi s1, s1, 4"]
        lines += [f"sw {rd}, 8(s0)", "addi s0, s0, 12"]
    data = pack(v for *_, mem, b in items for v in (b, mem, 0xCCCCCCCC))
    ran = run({"brisc": "\n".join(lines) + "\n" + EXIT}, {base: data})
    got = ran.words(base, 3 * len(items))
    want_rd, want_mem = [], []
    for op, _, rd, mem, b in items:
        old, new = rvref.AMO[op](mem, b)
        want_rd.append({"a2": old, "a1": old, "zero": 0}[rd])
        want_mem.append(new)
    compare(f"{where} op,ordering,rd,mem,rs2 -> rd", items, got[2::3], want_rd)
    compare(f"{where} op,ordering,rd,mem,rs2 -> memory", items, got[1::3], want_mem)


def test_amoadd_from_every_core_on_one_word_loses_no_update() -> None:
    counter, rounds = 0x30000, 200
    program = "\n".join(
        [
            f"li s1, {counter}",
            f"li s2, {rounds}",
            "li t0, 1",
            "LOOP: amoadd.w zero, t0, (s1)",
            "addi s2, s2, -1",
            "bne s2, zero, LOOP",
            EXIT,
        ]
    )
    ran = run(dict.fromkeys(CORES, program), {counter: pack([0])})
    assert ran.words(counter, 1) == [rounds * len(CORES)]


# ----------------------------------------------------------------------------------------------
# CSRs


def test_counters_are_readable_and_monotonic() -> None:
    base = DATA["brisc"]
    read = ["csrr s1, mcycle", "csrr s2, mcycleh", "csrr s3, minstret"]
    store = ["sw s1, {0}(s0)", "sw s2, {1}(s0)", "sw s3, {2}(s0)"]
    lines = [f"li s0, {base}", *read, *(s.format(0, 4, 8) for s in store)]
    lines += ["li t0, 50", "LOOP: addi t0, t0, -1", "bne t0, zero, LOOP"]
    lines += [*read, *(s.format(12, 16, 20) for s in store), EXIT]
    ran = run({"brisc": "\n".join(lines)})
    lo1, hi1, ret1, lo2, hi2, ret2 = ran.words(base, 6)
    cycles = ((hi2 << 32) | lo2) - ((hi1 << 32) | lo1)
    assert cycles > 0, "mcycle did not advance"
    assert ret2 > ret1, "minstret did not advance"
    assert ret2 - ret1 >= 100, "minstret advanced less than the loop's 100 instructions"
    assert cycles >= ret2 - ret1, "a single-issue core retired more instructions than cycles"


def test_minstret_counts_every_retired_instruction_once() -> None:
    """Between two reads: 12 instructions of every kind, Zbb (emulated by trap) included."""
    base = DATA["brisc"]
    body = [
        "addi t0, zero, 5",
        "clz t1, t0",
        "rev8 t1, t1",
        "sh2add t1, t1, t0",
        "mul t2, t1, t0",
        "beq zero, zero, .+8",  # taken: skips the next (not counted)
        "addi t2, t2, 1",
        "orc.b t2, t2",
        "lw t3, 0(s0)",
        "sw t3, 16(s0)",
        "amoadd.w t4, t0, (s0)",
        "max t5, t0, t1",
        "cpop t6, t5",
    ]
    lines = [f"li s0, {base}", "csrr s1, minstret", *body, "csrr s2, minstret"]
    lines += ["sw s1, 4(s0)", "sw s2, 8(s0)", EXIT]
    ran = run({"brisc": "\n".join(lines)})
    before, after = ran.words(base + 4, 2)
    assert after - before == len(body) - 1 + 1  # the skipped one out, the first csrr in


CSR_OPS = st.one_of(
    st.tuples(st.sampled_from(["csrrw", "csrrs", "csrrc"]), words),
    st.tuples(st.sampled_from(["csrrwi", "csrrsi", "csrrci"]), st.integers(0, 31)),
)


def _csr_reference(value: int, op: str, operand: int) -> int:
    kind = op.removesuffix("i")[-1]
    return {"w": operand, "s": value | operand, "c": value & ~operand & MASK}[kind]


@pytest.mark.parametrize("core", ["brisc", "trisc1"])
@isa_settings
@given(first=words, ops=batches(CSR_OPS, min_size=1, max_size=24))
def test_cfg0_reads_back_what_was_written(core: str, first: int, ops: list[tuple]) -> None:
    """``csrw 0x7C0, x; csrr`` gives x; then every Zicsr form returns the old value."""
    base = DATA[core]
    lines = [f"li s0, {base}", f"li a1, {first}", "csrw 0x7c0, a1", "csrr a2, 0x7c0"]
    lines += ["sw a2, 0(s0)"]
    for i, (op, operand) in enumerate(ops):
        if op.endswith("i"):
            lines += [f"{op} a2, 0x7c0, {operand}"]
        else:
            lines += [f"li a1, {operand}", f"{op} a2, 0x7c0, a1"]
        lines += [f"sw a2, {4 * (i + 1)}(s0)"]
    lines += ["csrr a2, 0x7c0", f"sw a2, {4 * (len(ops) + 1)}(s0)", EXIT]
    ran = run({core: "\n".join(lines)})
    want, value = [first], first
    for op, operand in ops:
        want.append(value)
        value = _csr_reference(value, op, operand)
    want.append(value)
    compare("csr op,operand", [("csrw", first), *ops, ("csrr", 0)], ran.words(base, len(want)), want)


@pytest.mark.parametrize("core", ["brisc", "trisc0"])
@pytest.mark.parametrize("access", ["csrr a0, 0x7c8", "csrw 0x7c8, a1", "csrrsi a0, 0x7c8, 1"])
def test_unknown_csr_raises_invalid_program_naming_core_and_pc(core: str, access: str) -> None:
    source = "\n".join(["li a1, 5", "nop", f"BAD: {access}", EXIT])
    _, labels = rvenc.assemble_labels(source, base=RESET_PC[core])
    with pytest.raises(InvalidProgram) as info:
        run({core: source})
    assert (info.value.core, info.value.pc, info.value.value) == (core, labels["BAD"], 0x7C8)


# ----------------------------------------------------------------------------------------------
# No compressed instructions: a non-32-bit word in a TRISC's stream is a Tensix instruction


def tensix_inline(word: int) -> int:
    """A Tensix instruction as it sits in a TRISC's instruction stream: rotated left by 2."""
    return ((word << 2) | (word >> 30)) & MASK


# Vectors: 0x10123456, the test plan's example (its inline form 0x4048D158 reads as c.sw a4,36(a0) then
# c.lw a0,4(s0) if decoded as RVC); 0x02000000 is the Tensix NOP (opcode 0x02), whose inline
# form has the all-zero (defined-illegal) RVC parcel as its low half.
TENSIX_VECTORS = [0x10123456, 0x02000000]


@pytest.mark.parametrize("pipe", range(3))
@pytest.mark.parametrize("tensix_word", TENSIX_VECTORS)
def test_inline_word_is_captured_as_tensix_instruction_not_compressed(pipe: int, tensix_word: int) -> None:
    core = TRISCS[pipe]
    canary, out = DATA[core], DATA[core] + 0x100
    assert tensix_inline(0x10123456) == 0x4048D158
    source = "\n".join(
        [
            f"li a0, {canary}",  # c.sw a4, 36(a0) would write 0xDEADBEEF into the canary
            "li a4, 0xDEADBEEF",
            f"li s0, {canary + 64}",  # c.lw a0, 4(s0) would load 0x5555_5555 into a0
            f"INLINE: .word {tensix_inline(tensix_word)}",
            f"li s1, {out}",
            "sw a0, 0(s1)",
            "li a0, 7",
            "ecall",
        ]
    )
    _, labels = rvenc.assemble_labels(source, base=RESET_PC[core])
    ran = run(
        {core: source},
        {canary: bytes(64) + pack([0x55555555] * 4)},
        exit_codes={core: 7},
        backend="recorder",  # this is about capture: the coprocessor need not execute the word
    )
    assert ran.read(canary, 64) == bytes(64), "the word executed as c.sw"
    assert ran.words(out, 1) == [canary], "the word executed as c.lw"
    pushed = ran.tile.pushed(pipe)
    assert [(p.word, p.core, p.pc) for p in pushed] == [(tensix_word, core, labels["INLINE"])]
    assert ran.result.cores[core].tensix_pushed == 1


# ----------------------------------------------------------------------------------------------
# Bit-manipulation in loops, and on every core at once


LOOP_OPS = [
    "clz a2, a0", "ctz a2, a0", "cpop a2, a0", "rev8 a2, a0", "orc.b a2, a0", "sext.b a2, a0",
    "sext.h a2, a0", "zext.h a2, a0", "rori a2, a0, 13", "andn a2, a0, a1", "orn a2, a0, a1",
    "xnor a2, a0, a1", "min a2, a0, a1", "minu a2, a0, a1", "max a2, a0, a1", "maxu a2, a0, a1",
    "rol a2, a0, a1", "ror a2, a0, a1", "sh1add a2, a0, a1", "sh2add a2, a0, a1",
    "sh3add a2, a0, a1",
]  # fmt: skip


def _loop_expected(line: str, a: int, b: int) -> int:
    op = line.split()[0]
    if op == "rori":
        return rvref.rori(a, 13)
    if op in rvref.UNARY:
        return rvref.UNARY[op](a)
    return rvref.REG_REG[op](a, b)


@isa_settings
@given(values=st.lists(words, min_size=2, max_size=40))
def test_bitmanip_inside_a_loop(values: list[int]) -> None:
    """The same Zba/Zbb words run on every iteration (a=values[i], b=values[i+1])."""
    base = DATA["brisc"]
    count, out = len(values) - 1, base + 4 * len(values)
    lines = [f"li s0, {base}", f"li s1, {out}", f"li s2, {count}"]
    lines += ["LOOP: cpop a3, s2", "lw a0, 0(s0)", "lw a1, 4(s0)"]  # a Zbb word as branch target
    for k, line in enumerate(LOOP_OPS):
        lines += [line, f"sw a2, {4 * k}(s1)"]
    lines += [f"sw a3, {4 * len(LOOP_OPS)}(s1)"]
    lines += ["addi s0, s0, 4", f"addi s1, s1, {4 * (len(LOOP_OPS) + 1)}", "addi s2, s2, -1"]
    lines += ["bne s2, zero, LOOP", EXIT]
    ran = run({"brisc": "\n".join(lines)}, {base: pack(values)})
    got = ran.words(out, count * (len(LOOP_OPS) + 1))
    items = []
    for i, (a, b) in enumerate(itertools.pairwise(values)):
        items += [(line, a, b) for line in LOOP_OPS] + [("cpop a3, s2", count - i, 0)]
    want = [_loop_expected(*item) if item[0] != "cpop a3, s2" else rvref.cpop(item[1]) for item in items]
    compare("op,a,b", items, got, want)


@few_settings
@given(operands=batches(pairs, min_size=4, max_size=16))
def test_bitmanip_on_every_core_at_once(operands: list[tuple[int, int]]) -> None:
    programs, data = {}, {}
    for core in CORES:
        lines = [f"li s0, {DATA[core]}"]
        for _ in operands:
            lines += ["lw a0, 0(s0)", "lw a1, 4(s0)"]
            for k, line in enumerate(LOOP_OPS):
                lines += [line, f"sw a2, {8 + 4 * k}(s0)"]
            lines += [f"addi s0, s0, {8 + 4 * len(LOOP_OPS)}"]
        programs[core] = "\n".join(lines) + "\n" + EXIT
        data[DATA[core]] = pack(v for a, b in operands for v in (a, b, *[0] * len(LOOP_OPS)))
    ran = run(programs, data)
    stride = 2 + len(LOOP_OPS)
    items = [(line, a, b) for a, b in operands for line in LOOP_OPS]
    want = [_loop_expected(*item) for item in items]
    for core in CORES:
        got = ran.words(DATA[core], stride * len(operands))
        got = [w for i, w in enumerate(got) if i % stride >= 2]
        compare(f"{core} op,a,b", items, got, want)


def test_exit_code_is_a0_and_a_bitmanip_word_may_be_first_and_last() -> None:
    source = "\n".join(["cpop a0, zero", "li a1, 0x7F", "cpop a0, a1", "ecall"])
    run({"brisc": source}, exit_codes={"brisc": 7})


def test_undecodable_word_raises_invalid_instruction_naming_core_and_pc() -> None:
    """An all-ones word is no RV32 instruction."""
    source = "\n".join(["nop", "BAD: .word 0xFFFFFFFF", EXIT])
    with pytest.raises(InvalidInstruction) as info:
        run({"brisc": source})
    assert (info.value.core, info.value.pc) == ("brisc", 4)


def test_inline_tensix_word_on_ncrisc_is_an_invalid_instruction() -> None:
    """NCRISC cannot push Tensix instructions: the word neither pushes nor runs as RVC. (BRISC's inline
    word pushes to pipe 0, as its store to INSTRN_BUF_BASE does: test_tile.py.)"""
    source = "\n".join(["nop", f"BAD: .word {tensix_inline(0x10123456)}", EXIT])
    _, labels = rvenc.assemble_labels(source, base=RESET_PC["ncrisc"])
    with pytest.raises(InvalidInstruction) as info:
        run({"ncrisc": source})
    assert (info.value.core, info.value.pc) == ("ncrisc", labels["BAD"])
