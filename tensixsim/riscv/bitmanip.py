"""Zba and Zbb (bit-manipulation 1.0, RV32) — instructions Unicorn 2.1.4 does not know.

They trap as illegal instructions and are executed here. Each instruction is one pure function of
uint32 operands, and one row of ``_ENCODINGS`` says how it is encoded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

MASK32 = 0xFFFFFFFF
_OP = 0b0110011
_OP_IMM = 0b0010011


def _signed(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def sh1add(a: int, b: int) -> int:
    return ((a << 1) + b) & MASK32


def sh2add(a: int, b: int) -> int:
    return ((a << 2) + b) & MASK32


def sh3add(a: int, b: int) -> int:
    return ((a << 3) + b) & MASK32


def andn(a: int, b: int) -> int:
    return a & ~b & MASK32


def orn(a: int, b: int) -> int:
    return (a | ~b) & MASK32


def xnor(a: int, b: int) -> int:
    return ~(a ^ b) & MASK32


def clz(a: int, _: int = 0) -> int:
    return 32 - a.bit_length()


def ctz(a: int, _: int = 0) -> int:
    return 32 if a == 0 else (a & -a).bit_length() - 1


def cpop(a: int, _: int = 0) -> int:
    return a.bit_count()


def max_(a: int, b: int) -> int:
    return a if _signed(a) >= _signed(b) else b


def maxu(a: int, b: int) -> int:
    return max(a, b)


def min_(a: int, b: int) -> int:
    return a if _signed(a) <= _signed(b) else b


def minu(a: int, b: int) -> int:
    return min(a, b)


def sext_b(a: int, _: int = 0) -> int:
    return (a & 0xFF) - ((a & 0x80) << 1) & MASK32


def sext_h(a: int, _: int = 0) -> int:
    return (a & 0xFFFF) - ((a & 0x8000) << 1) & MASK32


def zext_h(a: int, _: int = 0) -> int:
    return a & 0xFFFF


def rol(a: int, b: int) -> int:
    s = b & 31
    return ((a << s) | (a >> (32 - s))) & MASK32


def ror(a: int, b: int) -> int:
    s = b & 31
    return ((a >> s) | (a << (32 - s))) & MASK32


def rev8(a: int, _: int = 0) -> int:
    return int.from_bytes(a.to_bytes(4, "little"), "big")


def orc_b(a: int, _: int = 0) -> int:
    return int.from_bytes(bytes(0xFF if byte else 0 for byte in a.to_bytes(4, "little")), "little")


class Form(NamedTuple):
    name: str
    fn: Callable[[int, int], int]
    operand: str  # "rs2": register-register, "shamt": immediate in rs2 field, "unary": rs1 only


# (opcode, funct3, funct7, fixed rs2 or None) -> form. The rs2 column fixes the unary encodings.
_ENCODINGS: dict[tuple[int, int, int, int | None], Form] = {
    (_OP, 0b010, 0b0010000, None): Form("sh1add", sh1add, "rs2"),
    (_OP, 0b100, 0b0010000, None): Form("sh2add", sh2add, "rs2"),
    (_OP, 0b110, 0b0010000, None): Form("sh3add", sh3add, "rs2"),
    (_OP, 0b111, 0b0100000, None): Form("andn", andn, "rs2"),
    (_OP, 0b110, 0b0100000, None): Form("orn", orn, "rs2"),
    (_OP, 0b100, 0b0100000, None): Form("xnor", xnor, "rs2"),
    (_OP, 0b100, 0b0000101, None): Form("min", min_, "rs2"),
    (_OP, 0b101, 0b0000101, None): Form("minu", minu, "rs2"),
    (_OP, 0b110, 0b0000101, None): Form("max", max_, "rs2"),
    (_OP, 0b111, 0b0000101, None): Form("maxu", maxu, "rs2"),
    (_OP, 0b001, 0b0110000, None): Form("rol", rol, "rs2"),
    (_OP, 0b101, 0b0110000, None): Form("ror", ror, "rs2"),
    (_OP, 0b100, 0b0000100, 0): Form("zext.h", zext_h, "unary"),
    (_OP_IMM, 0b101, 0b0110000, None): Form("rori", ror, "shamt"),
    (_OP_IMM, 0b001, 0b0110000, 0): Form("clz", clz, "unary"),
    (_OP_IMM, 0b001, 0b0110000, 1): Form("ctz", ctz, "unary"),
    (_OP_IMM, 0b001, 0b0110000, 2): Form("cpop", cpop, "unary"),
    (_OP_IMM, 0b001, 0b0110000, 4): Form("sext.b", sext_b, "unary"),
    (_OP_IMM, 0b001, 0b0110000, 5): Form("sext.h", sext_h, "unary"),
    (_OP_IMM, 0b101, 0b0110100, 0b11000): Form("rev8", rev8, "unary"),
    (_OP_IMM, 0b101, 0b0010100, 0b00111): Form("orc.b", orc_b, "unary"),
}


class Decoded(NamedTuple):
    form: Form
    rd: int
    rs1: int
    rs2: int  # register number, or the shift amount for "shamt" forms


def decode(word: int) -> Decoded | None:
    """Decode a Zba/Zbb instruction word, or None when it is not one."""
    opcode, funct3, funct7 = word & 0x7F, (word >> 12) & 7, word >> 25
    rd, rs1, rs2 = (word >> 7) & 31, (word >> 15) & 31, (word >> 20) & 31
    form = _ENCODINGS.get((opcode, funct3, funct7, rs2)) or _ENCODINGS.get((opcode, funct3, funct7, None))
    if form is None:
        return None
    return Decoded(form, rd, rs1, rs2)


def execute(decoded: Decoded, read_reg: Callable[[int], int]) -> int:
    """The value written to rd."""
    a = read_reg(decoded.rs1)
    form = decoded.form
    if form.operand == "rs2":
        return form.fn(a, read_reg(decoded.rs2))
    if form.operand == "shamt":
        return form.fn(a, decoded.rs2)
    return form.fn(a, 0)
