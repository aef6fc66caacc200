"""A tiny RISC-V (RV32IM + Zicsr + Zaamo + Zba + Zbb) encoder and assembler for the tests.

Written from the RISC-V unprivileged specification (base formats R/I/S/B/U/J, chapter 2; the AMO
format, "A" chapter; bit-manipulation specification 1.0 for Zba/Zbb), independently of the
emulator. ``tests/test_rvenc.py`` checks every mnemonic against the GNU assembler.

Two entry points:

* :func:`encode` takes a mnemonic and operands (register names or numbers, integers) in the order
  they are written in assembly, with a memory operand ``imm(rs1)`` given as two operands
  ``imm, rs1``; it returns one 32-bit word.
* :func:`assemble` takes assembly text (one instruction, label or ``.word`` per line, ``#``
  comments) and returns the words. Branch and jump targets are labels, ``.``, ``.+N`` / ``.-N``
  (relative to the instruction) or a plain integer (an absolute address).

Only the pseudo-instructions the tests need exist: ``nop mv not neg li la j jr ret csrr csrw``;
``li`` expands like GNU ``as`` (``addi`` alone, ``lui`` alone, or ``lui`` + ``addi``), ``la`` is
always ``auipc`` + ``addi``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MASK32 = 0xFFFF_FFFF

ABI_NAMES = (
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
)  # fmt: skip

REGISTERS: dict[str, int] = {f"x{i}": i for i in range(32)}
REGISTERS.update({name: i for i, name in enumerate(ABI_NAMES)})
REGISTERS["fp"] = 8

CSR_NAMES: dict[str, int] = {
    "mstatus": 0x300,
    "misa": 0x301,
    "mie": 0x304,
    "mtvec": 0x305,
    "mscratch": 0x340,
    "mepc": 0x341,
    "mcause": 0x342,
    "mtval": 0x343,
    "mip": 0x344,
    "mcycle": 0xB00,
    "minstret": 0xB02,
    "mcycleh": 0xB80,
    "minstreth": 0xB82,
    "cycle": 0xC00,
    "time": 0xC01,
    "instret": 0xC02,
    "cycleh": 0xC80,
    "timeh": 0xC81,
    "instreth": 0xC82,
    "mvendorid": 0xF11,
    "marchid": 0xF12,
    "mimpid": 0xF13,
    "mhartid": 0xF14,
}

# Major opcodes (unprivileged spec, table "RISC-V base opcode map").
OP_LOAD = 0b0000011
OP_MISC_MEM = 0b0001111
OP_IMM = 0b0010011
OP_AUIPC = 0b0010111
OP_STORE = 0b0100011
OP_AMO = 0b0101111
OP_OP = 0b0110011
OP_LUI = 0b0110111
OP_BRANCH = 0b1100011
OP_JALR = 0b1100111
OP_JAL = 0b1101111
OP_SYSTEM = 0b1110011


@dataclass(frozen=True)
class Form:
    """One mnemonic: its operand syntax and the fixed fields of its encoding.

    ``syntax`` names the operand list: ``rrr`` rd,rs1,rs2; ``rr`` rd,rs1 (unary: the rs2 field or
    the immediate is the fixed ``extra``); ``rri`` rd,rs1,imm12; ``shift`` rd,rs1,shamt (``extra``
    is imm[11:5]); ``load`` rd,imm(rs1); ``store`` rs2,imm(rs1); ``branch`` rs1,rs2,target;
    ``u`` rd,imm20; ``jal`` rd,target; ``jalr`` rd,imm(rs1); ``amo`` rd,rs2,(rs1) (``extra`` is
    funct5); ``csr`` rd,csr,rs1; ``csri`` rd,csr,uimm5; ``none`` no operands (``extra`` is imm12).
    """

    syntax: str
    opcode: int
    funct3: int = 0
    extra: int = 0  # funct7, fixed rs2/imm12 or funct5, depending on the syntax


def _r(funct7: int, funct3: int) -> Form:
    return Form("rrr", OP_OP, funct3, funct7)


def _unary_imm(imm12: int, funct3: int) -> Form:
    return Form("rr", OP_IMM, funct3, imm12)


FORMS: dict[str, Form] = {
    # RV32I
    "lui": Form("u", OP_LUI),
    "auipc": Form("u", OP_AUIPC),
    "jal": Form("jal", OP_JAL),
    "jalr": Form("jalr", OP_JALR, 0b000),
    "beq": Form("branch", OP_BRANCH, 0b000),
    "bne": Form("branch", OP_BRANCH, 0b001),
    "blt": Form("branch", OP_BRANCH, 0b100),
    "bge": Form("branch", OP_BRANCH, 0b101),
    "bltu": Form("branch", OP_BRANCH, 0b110),
    "bgeu": Form("branch", OP_BRANCH, 0b111),
    "lb": Form("load", OP_LOAD, 0b000),
    "lh": Form("load", OP_LOAD, 0b001),
    "lw": Form("load", OP_LOAD, 0b010),
    "lbu": Form("load", OP_LOAD, 0b100),
    "lhu": Form("load", OP_LOAD, 0b101),
    "sb": Form("store", OP_STORE, 0b000),
    "sh": Form("store", OP_STORE, 0b001),
    "sw": Form("store", OP_STORE, 0b010),
    "addi": Form("rri", OP_IMM, 0b000),
    "slti": Form("rri", OP_IMM, 0b010),
    "sltiu": Form("rri", OP_IMM, 0b011),
    "xori": Form("rri", OP_IMM, 0b100),
    "ori": Form("rri", OP_IMM, 0b110),
    "andi": Form("rri", OP_IMM, 0b111),
    "slli": Form("shift", OP_IMM, 0b001, 0b0000000),
    "srli": Form("shift", OP_IMM, 0b101, 0b0000000),
    "srai": Form("shift", OP_IMM, 0b101, 0b0100000),
    "add": _r(0b0000000, 0b000),
    "sub": _r(0b0100000, 0b000),
    "sll": _r(0b0000000, 0b001),
    "slt": _r(0b0000000, 0b010),
    "sltu": _r(0b0000000, 0b011),
    "xor": _r(0b0000000, 0b100),
    "srl": _r(0b0000000, 0b101),
    "sra": _r(0b0100000, 0b101),
    "or": _r(0b0000000, 0b110),
    "and": _r(0b0000000, 0b111),
    "ecall": Form("none", OP_SYSTEM, 0b000, 0x000),
    "ebreak": Form("none", OP_SYSTEM, 0b000, 0x001),
    # Zicsr
    "csrrw": Form("csr", OP_SYSTEM, 0b001),
    "csrrs": Form("csr", OP_SYSTEM, 0b010),
    "csrrc": Form("csr", OP_SYSTEM, 0b011),
    "csrrwi": Form("csri", OP_SYSTEM, 0b101),
    "csrrsi": Form("csri", OP_SYSTEM, 0b110),
    "csrrci": Form("csri", OP_SYSTEM, 0b111),
    # M
    "mul": _r(0b0000001, 0b000),
    "mulh": _r(0b0000001, 0b001),
    "mulhsu": _r(0b0000001, 0b010),
    "mulhu": _r(0b0000001, 0b011),
    "div": _r(0b0000001, 0b100),
    "divu": _r(0b0000001, 0b101),
    "rem": _r(0b0000001, 0b110),
    "remu": _r(0b0000001, 0b111),
    # Zaamo (funct5)
    "amoadd.w": Form("amo", OP_AMO, 0b010, 0b00000),
    "amoswap.w": Form("amo", OP_AMO, 0b010, 0b00001),
    "amoxor.w": Form("amo", OP_AMO, 0b010, 0b00100),
    "amoor.w": Form("amo", OP_AMO, 0b010, 0b01000),
    "amoand.w": Form("amo", OP_AMO, 0b010, 0b01100),
    "amomin.w": Form("amo", OP_AMO, 0b010, 0b10000),
    "amomax.w": Form("amo", OP_AMO, 0b010, 0b10100),
    "amominu.w": Form("amo", OP_AMO, 0b010, 0b11000),
    "amomaxu.w": Form("amo", OP_AMO, 0b010, 0b11100),
    # Zba
    "sh1add": _r(0b0010000, 0b010),
    "sh2add": _r(0b0010000, 0b100),
    "sh3add": _r(0b0010000, 0b110),
    # Zbb
    "andn": _r(0b0100000, 0b111),
    "orn": _r(0b0100000, 0b110),
    "xnor": _r(0b0100000, 0b100),
    "clz": _unary_imm(0b0110000_00000, 0b001),
    "ctz": _unary_imm(0b0110000_00001, 0b001),
    "cpop": _unary_imm(0b0110000_00010, 0b001),
    "sext.b": _unary_imm(0b0110000_00100, 0b001),
    "sext.h": _unary_imm(0b0110000_00101, 0b001),
    "zext.h": Form("rr", OP_OP, 0b100, 0b0000100_00000),  # RV32: pack rd, rs1, x0 (funct7, rs2)
    "min": _r(0b0000101, 0b100),
    "minu": _r(0b0000101, 0b101),
    "max": _r(0b0000101, 0b110),
    "maxu": _r(0b0000101, 0b111),
    "rol": _r(0b0110000, 0b001),
    "ror": _r(0b0110000, 0b101),
    "rori": Form("shift", OP_IMM, 0b101, 0b0110000),
    "rev8": _unary_imm(0b011010011000, 0b101),  # RV32 encoding
    "orc.b": _unary_imm(0b001010000111, 0b101),
}

ZBA = ("sh1add", "sh2add", "sh3add")
ZBB = (
    "andn", "orn", "xnor", "clz", "ctz", "cpop", "min", "minu", "max", "maxu",
    "sext.b", "sext.h", "zext.h", "rol", "ror", "rori", "rev8", "orc.b",
)  # fmt: skip
AMO_ORDERINGS = {"": 0b00, ".aq": 0b10, ".rl": 0b01, ".aqrl": 0b11}

PSEUDOS = ("nop", "mv", "not", "neg", "li", "la", "j", "jr", "ret", "csrr", "csrw")


def reg(name: str | int) -> int:
    """Register number of ``x0``..``x31``, an ABI name, or an int 0..31."""
    if isinstance(name, int):
        if not 0 <= name < 32:
            raise ValueError(f"register number {name} out of range")
        return name
    try:
        return REGISTERS[name.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown register {name!r}") from None


def csr_number(name: str | int) -> int:
    if isinstance(name, str):
        text = name.strip().lower()
        value = CSR_NAMES[text] if text in CSR_NAMES else int(text, 0)
    else:
        value = name
    if not 0 <= value < 4096:
        raise ValueError(f"CSR number {value:#x} out of range")
    return value


def _signed(value: int, bits: int, what: str) -> int:
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f"{what} {value} does not fit in {bits} signed bits")
    return value & ((1 << bits) - 1)


def _unsigned(value: int, bits: int, what: str) -> int:
    if not 0 <= value < (1 << bits):
        raise ValueError(f"{what} {value} does not fit in {bits} unsigned bits")
    return value


def r_type(opcode: int, rd: int, funct3: int, rs1: int, rs2: int, funct7: int) -> int:
    return (funct7 << 25) | (rs2 << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | opcode


def i_type(opcode: int, rd: int, funct3: int, rs1: int, imm12: int) -> int:
    """``imm12`` is a signed immediate (-2048..-1) or the raw 12-bit field (0..4095)."""
    imm = _signed(imm12, 12, "I-immediate") if imm12 < 0 else _unsigned(imm12, 12, "I-field")
    return (imm << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | opcode


def s_type(opcode: int, funct3: int, rs1: int, rs2: int, imm12: int) -> int:
    imm = _signed(imm12, 12, "S-immediate")
    return (((imm >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (funct3 << 12) | ((imm & 0x1F) << 7)) | opcode


def b_type(opcode: int, funct3: int, rs1: int, rs2: int, offset: int) -> int:
    if offset & 1:
        raise ValueError(f"branch offset {offset} is odd")
    imm = _signed(offset, 13, "branch offset")
    return (
        (((imm >> 12) & 1) << 31)
        | (((imm >> 5) & 0x3F) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (funct3 << 12)
        | (((imm >> 1) & 0xF) << 8)
        | (((imm >> 11) & 1) << 7)
        | opcode
    )


def u_type(opcode: int, rd: int, imm20: int) -> int:
    return (_unsigned(imm20, 20, "U-immediate") << 12) | (rd << 7) | opcode


def j_type(opcode: int, rd: int, offset: int) -> int:
    if offset & 1:
        raise ValueError(f"jump offset {offset} is odd")
    imm = _signed(offset, 21, "jump offset")
    return (
        (((imm >> 20) & 1) << 31)
        | (((imm >> 1) & 0x3FF) << 21)
        | (((imm >> 11) & 1) << 20)
        | (((imm >> 12) & 0xFF) << 12)
        | (rd << 7)
        | opcode
    )


def _split_amo(mnemonic: str) -> tuple[str, int] | None:
    for suffix in (".aqrl", ".aq", ".rl"):
        if mnemonic.endswith(suffix) and mnemonic[: -len(suffix)] in FORMS:
            return mnemonic[: -len(suffix)], AMO_ORDERINGS[suffix]
    return None


def encode(mnemonic: str, *operands: str | int) -> int:
    """Encode one real (non-pseudo) instruction; branch/jump targets are byte offsets."""
    mnemonic = mnemonic.lower()
    ordering = 0
    if mnemonic not in FORMS and (split := _split_amo(mnemonic)) is not None:
        mnemonic, ordering = split
        if FORMS[mnemonic].syntax != "amo":
            raise ValueError(f"{mnemonic} takes no ordering suffix")
    try:
        form = FORMS[mnemonic]
    except KeyError:
        raise ValueError(f"unknown mnemonic {mnemonic!r}") from None
    want = {
        "rrr": 3, "rr": 2, "rri": 3, "shift": 3, "load": 3, "store": 3, "branch": 3, "u": 2,
        "jal": 2, "jalr": 3, "amo": 3, "csr": 3, "csri": 3, "none": 0,
    }[form.syntax]  # fmt: skip
    if len(operands) != want:
        raise ValueError(f"{mnemonic} takes {want} operands, got {operands!r}")
    op, f3, extra = form.opcode, form.funct3, form.extra
    match form.syntax:
        case "rrr":
            rd, rs1, rs2 = operands
            return r_type(op, reg(rd), f3, reg(rs1), reg(rs2), extra)
        case "rr":
            rd, rs1 = operands
            if op == OP_OP:  # fixed funct7 and rs2 packed in ``extra``
                return r_type(op, reg(rd), f3, reg(rs1), extra & 0x1F, extra >> 5)
            return i_type(op, reg(rd), f3, reg(rs1), extra)
        case "rri":
            rd, rs1, imm = operands
            return i_type(op, reg(rd), f3, reg(rs1), _signed(int(imm), 12, "immediate"))
        case "shift":
            rd, rs1, shamt = operands
            imm = (extra << 5) | _unsigned(int(shamt), 5, "shift amount")
            return i_type(op, reg(rd), f3, reg(rs1), imm)
        case "load" | "jalr":
            rd, imm, rs1 = operands
            return i_type(op, reg(rd), f3, reg(rs1), _signed(int(imm), 12, "offset"))
        case "store":
            rs2, imm, rs1 = operands
            return s_type(op, f3, reg(rs1), reg(rs2), int(imm))
        case "branch":
            rs1, rs2, offset = operands
            return b_type(op, f3, reg(rs1), reg(rs2), int(offset))
        case "u":
            rd, imm = operands
            return u_type(op, reg(rd), int(imm))
        case "jal":
            rd, offset = operands
            return j_type(op, reg(rd), int(offset))
        case "amo":
            rd, rs2, rs1 = operands
            return r_type(op, reg(rd), f3, reg(rs1), reg(rs2), (extra << 2) | ordering)
        case "csr":
            rd, csr, rs1 = operands
            return i_type(op, reg(rd), f3, reg(rs1), csr_number(csr))
        case "csri":
            rd, csr, uimm = operands
            return i_type(op, reg(rd), f3, _unsigned(int(uimm), 5, "CSR uimm"), csr_number(csr))
        case "none":
            return i_type(op, 0, f3, 0, extra)
    raise AssertionError(form.syntax)


def li_words(rd: str | int, value: int) -> list[int]:
    """``li rd, value`` as GNU ``as`` expands it for RV32 (one or two words)."""
    if not -(1 << 31) <= value <= MASK32:
        raise ValueError(f"li value {value} does not fit in 32 bits")
    value &= MASK32
    signed = value - (1 << 32) if value & 0x8000_0000 else value
    if -2048 <= signed < 2048:
        return [encode("addi", rd, "zero", signed)]
    lo = ((value & 0xFFF) ^ 0x800) - 0x800
    hi = ((value - lo) >> 12) & 0xFFFFF
    words = [encode("lui", rd, hi)]
    if lo or reg(rd) == 0:  # GNU as keeps the addi when rd is x0
        words.append(encode("addi", rd, rd, lo))
    return words


# ----------------------------------------------------------------------------------------------
# Text assembler


_MEM = re.compile(r"^(?P<imm>[^()]*)\((?P<base>[^()]+)\)$")
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _int(text: str | int) -> int:
    if isinstance(text, int):
        return text
    return int(text.strip().replace("_", ""), 0)


def _split_operands(text: str) -> list[str]:
    """Split on commas, turning ``imm(rs1)`` into ``imm, rs1`` and ``(rs1)`` into ``rs1``."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")) if text.strip() else ():
        if m := _MEM.match(part):
            imm = m["imm"].strip()
            if imm:
                out.append(imm)
            out.append(m["base"].strip())
        else:
            out.append(part)
    return out


def _size(mnemonic: str, operands: list[str], known: Callable[[str], int]) -> int:
    if mnemonic == "li":
        return len(li_words(operands[0], known(operands[1])))
    if mnemonic == "la":
        return 2
    return 1


_EXPR = re.compile(r"^(?P<sym>[A-Za-z_][A-Za-z0-9_.]*)\s*(?P<sign>[+-])\s*(?P<num>.+)$")


def assemble(source: str, base: int = 0, symbols: dict[str, int] | None = None) -> list[int]:
    """Assemble text into words placed at ``base`` (see :func:`assemble_labels`)."""
    return assemble_labels(source, base, symbols)[0]


def assemble_labels(
    source: str, base: int = 0, symbols: dict[str, int] | None = None
) -> tuple[list[int], dict[str, int]]:
    """Assemble text into words placed at ``base``; also return the labels' addresses.

    Each line holds labels (``name:``) and at most one ``.word value`` or instruction. Targets of
    branches and ``jal``/``j`` may be labels (from this text or ``symbols``), ``.``, ``.+N``,
    ``.-N``, ``label+N``, ``label-N`` or integers (absolute addresses). ``la rd, target`` is
    ``auipc`` + ``addi``. Integer operands may be names from ``symbols``; ``li`` takes only
    integers or ``symbols`` (its size must be known in the first pass).
    """
    parsed: list[tuple[int, str, list[str], str]] = []
    labels: dict[str, int] = dict(symbols or {})

    def value(text: str) -> int:
        text = text.strip()
        if text in labels:
            return labels[text]
        if (m := _EXPR.match(text)) and m["sym"] in labels:
            number = _int(m["num"])
            return labels[m["sym"]] + (number if m["sign"] == "+" else -number)
        return _int(text)

    def offset(text: str, pc: int) -> int:
        text = text.replace(" ", "")
        if text == ".":
            return 0
        if text.startswith((".+", ".-")):
            return _int(text[1:])
        return value(text) - pc

    address = base
    for number, raw in enumerate(source.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        where = f"line {number}: {raw.strip()}"
        while (colon := line.find(":")) >= 0 and _LABEL.match(line[:colon].strip()):
            labels[line[:colon].strip()] = address
            line = line[colon + 1 :].strip()
        if not line:
            continue
        mnemonic, _, rest = line.partition(" ")
        mnemonic = mnemonic.lower()
        operands = _split_operands(rest)
        parsed.append((address, mnemonic, operands, where))
        try:
            size = 1 if mnemonic == ".word" else _size(mnemonic, operands, value)
        except (ValueError, IndexError) as exc:
            raise ValueError(f"{where}: {exc}") from exc
        address += 4 * size

    words: list[int] = []
    for pc, mnemonic, ops, where in parsed:
        try:
            words.extend(_expand(mnemonic, ops, pc, value, offset))
        except (ValueError, KeyError, IndexError) as exc:
            raise ValueError(f"{where}: {exc}") from exc
    return words, labels


def la_words(rd: str | int, pc: int, target: int) -> list[int]:
    """``auipc rd, hi; addi rd, rd, lo`` with rd = target, for an ``auipc`` placed at ``pc``."""
    delta = (target - pc) & MASK32
    lo = ((delta & 0xFFF) ^ 0x800) - 0x800
    hi = ((delta - lo) >> 12) & 0xFFFFF
    return [encode("auipc", rd, hi), encode("addi", rd, rd, lo)]


def _expand(
    mnemonic: str,
    ops: list[str],
    pc: int,
    value: Callable[[str], int],
    offset: Callable[[str, int], int],
) -> list[int]:
    syntax = FORMS[mnemonic].syntax if mnemonic in FORMS else None
    match mnemonic:
        case ".word":
            (word,) = ops
            return [value(word) & MASK32]
        case "nop":
            return [encode("addi", "zero", "zero", 0)]
        case "mv":
            return [encode("addi", ops[0], ops[1], 0)]
        case "not":
            return [encode("xori", ops[0], ops[1], -1)]
        case "neg":
            return [encode("sub", ops[0], "zero", ops[1])]
        case "li":
            return li_words(ops[0], value(ops[1]))
        case "la":
            return la_words(ops[0], pc, pc + offset(ops[1], pc))
        case "j":
            return [encode("jal", "zero", offset(ops[0], pc))]
        case "jr":
            return [encode("jalr", "zero", 0, ops[0])]
        case "ret":
            return [encode("jalr", "zero", 0, "ra")]
        case "csrr":
            return [encode("csrrs", ops[0], ops[1], "zero")]
        case "csrw":
            return [encode("csrrw", "zero", ops[0], ops[1])]
    if syntax is None and _split_amo(mnemonic) is not None:
        syntax = "amo"
    match syntax:
        case "branch":
            return [encode(mnemonic, ops[0], ops[1], offset(ops[2], pc))]
        case "jal":
            if len(ops) == 1:
                ops = ["ra", ops[0]]
            return [encode(mnemonic, ops[0], offset(ops[1], pc))]
        case "jalr":
            if len(ops) == 1:  # jalr rs1
                ops = ["ra", "0", ops[0]]
            elif len(ops) == 2:  # jalr rd, (rs1) or jalr rd, rs1
                ops = [ops[0], "0", ops[1]]
            elif ops[1] in REGISTERS:  # jalr rd, rs1, imm
                ops = [ops[0], ops[2], ops[1]]
            return [encode(mnemonic, ops[0], value(ops[1]), ops[2])]
        case "rri" | "shift" | "u":
            return [encode(mnemonic, *ops[:-1], value(ops[-1]))]
        case "load" | "store":
            return [encode(mnemonic, ops[0], value(ops[1]), ops[2])]
        case "csri":
            return [encode(mnemonic, ops[0], ops[1], value(ops[2]))]
    return [encode(mnemonic, *ops)]


def to_bytes(words: list[int]) -> bytes:
    """Little-endian image of the words."""
    return b"".join((w & MASK32).to_bytes(4, "little") for w in words)
