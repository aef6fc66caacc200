"""The test encoder (tests/rvenc.py) agrees with the GNU assembler on every mnemonic."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import rvenc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

AS = "riscv64-unknown-elf-as"
LD = "riscv64-unknown-elf-ld"
OBJCOPY = "riscv64-unknown-elf-objcopy"
MARCH = "rv32ima_zicsr_zba_zbb"

needs_binutils = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in (AS, LD, OBJCOPY)),
    reason="riscv64-unknown-elf binutils not installed",
)

# The Zba, Zbb and Zaamo instructions the baby cores implement; the table holds exactly these.
CORE_ZBA = {"sh1add", "sh2add", "sh3add"}
CORE_ZBB = {
    "andn", "orn", "xnor", "clz", "ctz", "cpop", "min", "minu", "max", "maxu",
    "sext.b", "sext.h", "zext.h", "rol", "ror", "rori", "rev8", "orc.b",
}  # fmt: skip
CORE_AMO = {f"amo{op}.w" for op in ["swap", "add", "xor", "and", "or", "min", "max", "minu", "maxu"]}


def gnu_assemble(source: str) -> list[int]:
    """Assemble with GNU ``as`` and link at 0 (no relaxation, no compressed); the .text words."""
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, elf, binary = (Path(tmp) / n for n in ("t.s", "t.o", "t.elf", "t.bin"))
        src.write_text(source + "\n")
        subprocess.run(
            [
                AS,
                f"-march={MARCH}",
                "-mabi=ilp32",
                "-mno-relax",
                str(src),
                "-o",
                str(obj),
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                LD,
                "-m",
                "elf32lriscv",
                "--no-relax",
                "-Ttext=0",
                "-e",
                "0",
                str(obj),
                "-o",
                str(elf),
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [OBJCOPY, "-O", "binary", "-j", ".text", str(elf), str(binary)],
            check=True,
            capture_output=True,
        )
        data = binary.read_bytes()
    assert len(data) % 4 == 0
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]


def assert_same_as_gnu(lines: list[str]) -> None:
    source = "\n".join(lines)
    if rvenc.assemble(source) == gnu_assemble(source):
        return
    for line in lines:  # name the first disagreeing line
        ours, theirs = rvenc.assemble(line), gnu_assemble(line)
        assert ours == theirs, f"{line!r}: ours {_hex(ours)}, GNU as {_hex(theirs)}"
    pytest.fail("whole program differs but every line agrees (label or placement bug)")


def _hex(words: list[int]) -> list[str]:
    return [f"{w:08x}" for w in words]


# ----------------------------------------------------------------------------------------------
# Operand strategies

registers = st.sampled_from(sorted(rvenc.REGISTERS))
imm12 = st.one_of(st.sampled_from([-2048, -1, 0, 1, 2047]), st.integers(-2048, 2047))
shamt = st.integers(0, 31)
uimm5 = st.integers(0, 31)
imm20 = st.one_of(st.sampled_from([0, 1, 0x80000, 0xFFFFF]), st.integers(0, 0xFFFFF))
branch_offset = st.one_of(
    st.sampled_from([-4096, 0, 2, 4, 4094]),
    st.integers(-2048, 2047).map(lambda n: 2 * n),
)
jal_offset = st.one_of(
    st.sampled_from([-(1 << 20), 0, 2, (1 << 20) - 2]),
    st.integers(-(1 << 19), (1 << 19) - 1).map(lambda n: 2 * n),
)
csrs = st.one_of(
    st.sampled_from(["mscratch", "mcycle", "minstret", "mcycleh", "mstatus", "0x7c0"]),
    st.integers(0x7C0, 0x7FF).map(hex),
)
li_values = st.one_of(
    st.sampled_from([0, 1, -1, 2047, 2048, -2048, -2049, 0x7FFFF800, 0x80000000, 0xFFFFFFFF]),
    st.integers(0, 1 << 12).map(lambda n: n << 12),
    st.integers(-(1 << 31), (1 << 32) - 1),
)
la_offsets = st.one_of(
    st.sampled_from([0, 4, -4, 0x7FC, 0x800, -0x800, -0x804, 0x7FFFF7FC, -0x7FFFF800]),
    st.integers(-0x7FFFF800, 0x7FFFF7FC).map(lambda n: n & ~3),
)


def _target(offset: int) -> str:
    return f".{offset:+d}" if offset else "."


@st.composite
def instruction_lines(draw: st.DrawFn, mnemonic: str) -> str:
    """One assembly line for ``mnemonic`` with drawn operands."""
    syntax = rvenc.FORMS[mnemonic].syntax if mnemonic in rvenc.FORMS else mnemonic
    r = lambda: draw(registers)
    match syntax:
        case "rrr":
            return f"{mnemonic} {r()}, {r()}, {r()}"
        case "rr":
            return f"{mnemonic} {r()}, {r()}"
        case "rri":
            return f"{mnemonic} {r()}, {r()}, {draw(imm12)}"
        case "shift":
            return f"{mnemonic} {r()}, {r()}, {draw(shamt)}"
        case "load" | "store" | "jalr":
            return f"{mnemonic} {r()}, {draw(imm12)}({r()})"
        case "branch":
            return f"{mnemonic} {r()}, {r()}, {_target(draw(branch_offset))}"
        case "u":
            return f"{mnemonic} {r()}, {draw(imm20):#x}"
        case "jal":
            return f"{mnemonic} {r()}, {_target(draw(jal_offset))}"
        case "amo":
            suffix = draw(st.sampled_from(sorted(rvenc.AMO_ORDERINGS)))
            return f"{mnemonic}{suffix} {r()}, {r()}, ({r()})"
        case "csr":
            return f"{mnemonic} {r()}, {draw(csrs)}, {r()}"
        case "csri":
            return f"{mnemonic} {r()}, {draw(csrs)}, {draw(uimm5)}"
        case "none" | "nop" | "ret":
            return mnemonic
        case "mv" | "not" | "neg":
            return f"{mnemonic} {r()}, {r()}"
        case "li":
            return f"li {r()}, {draw(li_values)}"
        case "la":
            return f"la {r()}, {_target(draw(la_offsets))}"
        case "j":
            return f"j {_target(draw(jal_offset))}"
        case "jr":
            return f"jr {r()}"
        case "csrr":
            return f"csrr {r()}, {draw(csrs)}"
        case "csrw":
            return f"csrw {draw(csrs)}, {r()}"
    raise AssertionError(mnemonic)


ALL_MNEMONICS = sorted(rvenc.FORMS) + list(rvenc.PSEUDOS)
any_instruction = st.sampled_from(ALL_MNEMONICS).flatmap(instruction_lines)


# ----------------------------------------------------------------------------------------------
# Tests


def test_table_holds_every_bitmanip_and_amo_mnemonic_the_cores_implement() -> None:
    assert set(rvenc.ZBA) == CORE_ZBA
    assert set(rvenc.ZBB) == CORE_ZBB
    assert {m for m, f in rvenc.FORMS.items() if f.syntax == "amo"} == CORE_AMO
    assert set(rvenc.FORMS) >= CORE_ZBA | CORE_ZBB


def test_register_names_cover_x_and_abi_names() -> None:
    assert [rvenc.reg(f"x{i}") for i in range(32)] == list(range(32))
    assert [rvenc.reg(n) for n in rvenc.ABI_NAMES] == list(range(32))
    assert rvenc.reg("fp") == rvenc.reg("s0") == 8
    with pytest.raises(ValueError):
        rvenc.reg("x32")


@pytest.mark.parametrize(
    "line",
    [
        "addi a0, a0, 2048",
        "addi a0, a0, -2049",
        "slli a0, a0, 32",
        "rori a0, a0, 32",
        "beq a0, a1, .+3",
        "beq a0, a1, .+4096",
        "jal ra, .+1048576",
        "lui a0, 0x100000",
        "lw a0, 2048(a1)",
        "sw a0, -2049(a1)",
        "csrrwi a0, 0x7c0, 32",
        "add a0, a1",
        "add a0, a1, x32",
        "frobnicate a0, a1, a2",
        "amoadd.w.rl.aq a0, a1, (a2)",
        "add.aq a0, a1, a2",
    ],
)
def test_out_of_range_operands_are_rejected(line: str) -> None:
    with pytest.raises(ValueError):
        rvenc.assemble(line)


def test_labels_resolve_forward_and_backward() -> None:
    words = rvenc.assemble(
        """
        top: addi a0, a0, 1
             beq a0, a1, done
             j top
        done: ecall
        """,
        base=0x100,
    )
    assert words == [
        rvenc.encode("addi", "a0", "a0", 1),
        rvenc.encode("beq", "a0", "a1", 8),
        rvenc.encode("jal", "zero", -8),
        rvenc.encode("ecall"),
    ]


@needs_binutils
@pytest.mark.parametrize("mnemonic", ALL_MNEMONICS)
def test_each_mnemonic_matches_gnu_as_on_edge_operands(mnemonic: str) -> None:
    """Every register in every field, and the extreme immediates, in one ``as`` run."""
    lines = []
    names = [f"x{i}" for i in range(32)]
    for i in range(32):
        a, b, c = names[i], rvenc.ABI_NAMES[(i + 7) % 32], names[(i + 19) % 32]
        lines.extend(_edge_lines(mnemonic, a, b, c, i))
    assert_same_as_gnu(lines)


def _edge_lines(mnemonic: str, a: str, b: str, c: str, i: int) -> list[str]:
    syntax = rvenc.FORMS[mnemonic].syntax if mnemonic in rvenc.FORMS else mnemonic
    imm = [-2048, -1, 0, 1, 2047, 0x555, -0x556, 0x7FF][i % 8]
    off = [-4096, -2, 0, 2, 4094, 0x2AA, -0xAAA, 0x800][i % 8]
    joff = [-(1 << 20), -2, 0, 2, (1 << 20) - 2, 0x55554, -0xAAAAA, 0x800][i % 8]
    match syntax:
        case "rrr":
            return [f"{mnemonic} {a}, {b}, {c}"]
        case "rr" | "mv" | "not" | "neg":
            return [f"{mnemonic} {a}, {b}"]
        case "rri":
            return [f"{mnemonic} {a}, {b}, {imm}"]
        case "shift":
            return [f"{mnemonic} {a}, {b}, {i}"]
        case "load" | "store" | "jalr":
            return [f"{mnemonic} {a}, {imm}({b})"]
        case "branch":
            return [f"{mnemonic} {a}, {b}, {_target(off)}"]
        case "u":
            return [f"{mnemonic} {a}, {[0, 1, 0x80000, 0xFFFFF, 0x12345][i % 5]:#x}"]
        case "jal":
            return [f"{mnemonic} {a}, {_target(joff)}"]
        case "j":
            return [f"j {_target(joff)}"]
        case "amo":
            return [f"{mnemonic}{s} {a}, {b}, ({c})" for s in rvenc.AMO_ORDERINGS]
        case "csr":
            return [
                f"{mnemonic} {a}, {0x7C0 + i:#x}, {b}",
                f"{mnemonic} {a}, mscratch, {b}",
            ]
        case "csri":
            return [f"{mnemonic} {a}, {0x7C0 + i:#x}, {i}"]
        case "csrr":
            return [f"csrr {a}, {n}" for n in ("mcycle", "minstret", "mcycleh", "0x7c0")]
        case "csrw":
            return [f"csrw {n}, {a}" for n in ("mscratch", "0x7c0", "0x7c5")]
        case "li":
            value = [0, -1, 2047, 2048, -2048, -2049, 0x7FFFF800, 0x80000000][i % 8]
            return [f"li {a}, {value}", f"li {a}, {0x12345678 + i * 0x11111}", f"li {a}, {i << 12}"]
        case "jr":
            return [f"jr {a}"]
        case "la":
            return [f"la {a}, {_target(off)}", f"la {a}, {_target(joff * 2047)}"]
        case "none" | "nop" | "ret":
            return [mnemonic]
    raise AssertionError(mnemonic)


@needs_binutils
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(any_instruction, min_size=20, max_size=80))
def test_random_programs_match_gnu_as(lines: list[str]) -> None:
    assert_same_as_gnu(lines)


@needs_binutils
def test_tensix_inline_word_is_emitted_verbatim() -> None:
    assert_same_as_gnu([".word 0x4048d158", "ecall"])
