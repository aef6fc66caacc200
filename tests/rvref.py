"""Reference semantics of the RV32 instructions the baby cores implement, for the tests.

Written from the RISC-V unprivileged specification (RV32I chapter 2, "M" chapter, "A" chapter
for AMO*.W) and the bit-manipulation specification 1.0 (Zba, Zbb), independently of the emulator.
Every function is pure: register values are Python ints holding uint32 (0 .. 2**32-1) and results
are uint32; immediates are the signed value the assembler writes (``addi a0, a0, -1`` passes -1).
"""

from __future__ import annotations

MASK32 = 0xFFFF_FFFF
INT_MIN = 0x8000_0000  # as uint32
INT_MAX = 0x7FFF_FFFF


def u32(x: int) -> int:
    return x & MASK32


def s32(x: int) -> int:
    """The uint32 ``x`` read as two's-complement int32."""
    x &= MASK32
    return x - (1 << 32) if x & 0x8000_0000 else x


def sext(x: int, bits: int) -> int:
    """Sign-extend the low ``bits`` of ``x`` to uint32."""
    x &= (1 << bits) - 1
    if x & (1 << (bits - 1)):
        x -= 1 << bits
    return u32(x)


def _shamt(b: int) -> int:
    return b & 31  # RV32: only rs2[4:0] is used


# ----------------------------------------------------------------------------------------------
# RV32I register-register


def add(a: int, b: int) -> int:
    return u32(a + b)


def sub(a: int, b: int) -> int:
    return u32(a - b)


def sll(a: int, b: int) -> int:
    return u32(a << _shamt(b))


def slt(a: int, b: int) -> int:
    return int(s32(a) < s32(b))


def sltu(a: int, b: int) -> int:
    return int(u32(a) < u32(b))


def xor(a: int, b: int) -> int:
    return u32(a ^ b)


def srl(a: int, b: int) -> int:
    return u32(a) >> _shamt(b)


def sra(a: int, b: int) -> int:
    return u32(s32(a) >> _shamt(b))


def or_(a: int, b: int) -> int:
    return u32(a | b)


def and_(a: int, b: int) -> int:
    return u32(a & b)


# ----------------------------------------------------------------------------------------------
# RV32I register-immediate (imm: the signed 12-bit immediate; shamt: 0..31)


def addi(a: int, imm: int) -> int:
    return add(a, sext(imm, 12))


def slti(a: int, imm: int) -> int:
    return slt(a, sext(imm, 12))


def sltiu(a: int, imm: int) -> int:
    # The immediate is sign-extended, then compared as unsigned (so -1 compares as 0xFFFFFFFF).
    return sltu(a, sext(imm, 12))


def xori(a: int, imm: int) -> int:
    return xor(a, sext(imm, 12))


def ori(a: int, imm: int) -> int:
    return or_(a, sext(imm, 12))


def andi(a: int, imm: int) -> int:
    return and_(a, sext(imm, 12))


def slli(a: int, shamt: int) -> int:
    return sll(a, shamt)


def srli(a: int, shamt: int) -> int:
    return srl(a, shamt)


def srai(a: int, shamt: int) -> int:
    return sra(a, shamt)


def lui(imm20: int) -> int:
    return u32(imm20 << 12)


def auipc(pc: int, imm20: int) -> int:
    return u32(pc + (imm20 << 12))


# ----------------------------------------------------------------------------------------------
# Control transfer


def beq(a: int, b: int) -> bool:
    return u32(a) == u32(b)


def bne(a: int, b: int) -> bool:
    return u32(a) != u32(b)


def blt(a: int, b: int) -> bool:
    return s32(a) < s32(b)


def bge(a: int, b: int) -> bool:
    return s32(a) >= s32(b)


def bltu(a: int, b: int) -> bool:
    return u32(a) < u32(b)


def bgeu(a: int, b: int) -> bool:
    return u32(a) >= u32(b)


def jal_link(pc: int) -> int:
    return u32(pc + 4)


def jalr_target(rs1: int, imm: int) -> int:
    """Target of ``jalr``: (rs1 + sext(imm)) with bit 0 cleared."""
    return add(rs1, sext(imm, 12)) & ~1 & MASK32


# ----------------------------------------------------------------------------------------------
# M


def mul(a: int, b: int) -> int:
    return u32(a * b)


def mulh(a: int, b: int) -> int:
    return u32((s32(a) * s32(b)) >> 32)


def mulhsu(a: int, b: int) -> int:
    return u32((s32(a) * u32(b)) >> 32)


def mulhu(a: int, b: int) -> int:
    return u32((u32(a) * u32(b)) >> 32)


def _trunc_div(n: int, d: int) -> int:
    """Signed division rounding toward zero (Python's // rounds toward -infinity)."""
    q = abs(n) // abs(d)
    return -q if (n < 0) != (d < 0) else q


def div(a: int, b: int) -> int:
    if u32(b) == 0:
        return MASK32  # division by zero: -1
    if u32(a) == INT_MIN and u32(b) == MASK32:
        return INT_MIN  # overflow: the dividend
    return u32(_trunc_div(s32(a), s32(b)))


def divu(a: int, b: int) -> int:
    if u32(b) == 0:
        return MASK32  # 2**32 - 1
    return u32(a) // u32(b)


def rem(a: int, b: int) -> int:
    if u32(b) == 0:
        return u32(a)  # division by zero: the dividend
    if u32(a) == INT_MIN and u32(b) == MASK32:
        return 0  # overflow
    n, d = s32(a), s32(b)
    return u32(n - d * _trunc_div(n, d))  # the sign of the dividend


def remu(a: int, b: int) -> int:
    if u32(b) == 0:
        return u32(a)
    return u32(a) % u32(b)


# ----------------------------------------------------------------------------------------------
# Zba: rd = rs2 + (rs1 << n)


def sh1add(a: int, b: int) -> int:
    return u32(b + (a << 1))


def sh2add(a: int, b: int) -> int:
    return u32(b + (a << 2))


def sh3add(a: int, b: int) -> int:
    return u32(b + (a << 3))


# ----------------------------------------------------------------------------------------------
# Zbb


def andn(a: int, b: int) -> int:
    return u32(a & ~b)


def orn(a: int, b: int) -> int:
    return u32(a | ~b)


def xnor(a: int, b: int) -> int:
    return u32(~(a ^ b))


def clz(a: int) -> int:
    """Count leading zeros, scanning from bit 31 down; 32 for zero."""
    count = 0
    for bit in range(31, -1, -1):
        if (a >> bit) & 1:
            break
        count += 1
    return count


def ctz(a: int) -> int:
    """Count trailing zeros, scanning from bit 0 up; 32 for zero."""
    count = 0
    for bit in range(32):
        if (a >> bit) & 1:
            break
        count += 1
    return count


def cpop(a: int) -> int:
    return sum((a >> bit) & 1 for bit in range(32))


def min_(a: int, b: int) -> int:
    return a if s32(a) < s32(b) else b


def max_(a: int, b: int) -> int:
    return a if s32(a) > s32(b) else b


def minu(a: int, b: int) -> int:
    return a if u32(a) < u32(b) else b


def maxu(a: int, b: int) -> int:
    return a if u32(a) > u32(b) else b


def sext_b(a: int) -> int:
    return sext(a, 8)


def sext_h(a: int) -> int:
    return sext(a, 16)


def zext_h(a: int) -> int:
    return a & 0xFFFF


def rol(a: int, b: int) -> int:
    n = _shamt(b)
    return u32((a << n) | (u32(a) >> ((32 - n) & 31))) if n else u32(a)


def ror(a: int, b: int) -> int:
    n = _shamt(b)
    return u32((u32(a) >> n) | (a << ((32 - n) & 31))) if n else u32(a)


def rori(a: int, shamt: int) -> int:
    return ror(a, shamt)


def rev8(a: int) -> int:
    """Reverse the byte order (RV32: byte 0 <-> 3, 1 <-> 2)."""
    out = 0
    for i in range(4):
        out |= ((a >> (8 * i)) & 0xFF) << (8 * (3 - i))
    return out


def orc_b(a: int) -> int:
    """Each byte becomes 0xFF if any of its bits is set, else 0x00."""
    out = 0
    for i in range(4):
        if (a >> (8 * i)) & 0xFF:
            out |= 0xFF << (8 * i)
    return out


# ----------------------------------------------------------------------------------------------
# Zaamo: (mem, rs2) -> (rd, new mem). rd is the old memory word.


def amoswap(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), u32(b)


def amoadd(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), add(mem, b)


def amoxor(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), xor(mem, b)


def amoand(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), and_(mem, b)


def amoor(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), or_(mem, b)


def amomin(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), min_(mem, b)


def amomax(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), max_(mem, b)


def amominu(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), minu(mem, b)


def amomaxu(mem: int, b: int) -> tuple[int, int]:
    return u32(mem), maxu(mem, b)


# ----------------------------------------------------------------------------------------------
# Loads and stores over a little-endian byte image (``offset`` indexes ``mem``)


def _read(mem: bytes, offset: int, size: int) -> int:
    return int.from_bytes(bytes(mem[offset : offset + size]), "little")


def lb(mem: bytes, offset: int) -> int:
    return sext(_read(mem, offset, 1), 8)


def lbu(mem: bytes, offset: int) -> int:
    return _read(mem, offset, 1)


def lh(mem: bytes, offset: int) -> int:
    return sext(_read(mem, offset, 2), 16)


def lhu(mem: bytes, offset: int) -> int:
    return _read(mem, offset, 2)


def lw(mem: bytes, offset: int) -> int:
    return _read(mem, offset, 4)


def _write(mem: bytes, offset: int, size: int, value: int) -> bytes:
    data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    return bytes(mem[:offset]) + data + bytes(mem[offset + size :])


def sb(mem: bytes, offset: int, value: int) -> bytes:
    return _write(mem, offset, 1, value)


def sh(mem: bytes, offset: int, value: int) -> bytes:
    return _write(mem, offset, 2, value)


def sw(mem: bytes, offset: int, value: int) -> bytes:
    return _write(mem, offset, 4, value)


# ----------------------------------------------------------------------------------------------
# Tables by mnemonic


REG_REG = {
    "add": add, "sub": sub, "sll": sll, "slt": slt, "sltu": sltu, "xor": xor, "srl": srl,
    "sra": sra, "or": or_, "and": and_,
    "mul": mul, "mulh": mulh, "mulhsu": mulhsu, "mulhu": mulhu,
    "div": div, "divu": divu, "rem": rem, "remu": remu,
    "sh1add": sh1add, "sh2add": sh2add, "sh3add": sh3add,
    "andn": andn, "orn": orn, "xnor": xnor, "min": min_, "minu": minu, "max": max_, "maxu": maxu,
    "rol": rol, "ror": ror,
}  # fmt: skip

REG_IMM = {
    "addi": addi, "slti": slti, "sltiu": sltiu, "xori": xori, "ori": ori, "andi": andi,
}  # fmt: skip

SHIFT_IMM = {"slli": slli, "srli": srli, "srai": srai, "rori": rori}

UNARY = {
    "clz": clz, "ctz": ctz, "cpop": cpop, "sext.b": sext_b, "sext.h": sext_h, "zext.h": zext_h,
    "rev8": rev8, "orc.b": orc_b,
}  # fmt: skip

BRANCH = {"beq": beq, "bne": bne, "blt": blt, "bge": bge, "bltu": bltu, "bgeu": bgeu}

AMO = {
    "amoswap.w": amoswap, "amoadd.w": amoadd, "amoxor.w": amoxor, "amoand.w": amoand,
    "amoor.w": amoor, "amomin.w": amomin, "amomax.w": amomax, "amominu.w": amominu,
    "amomaxu.w": amomaxu,
}  # fmt: skip

LOAD = {"lb": lb, "lbu": lbu, "lh": lh, "lhu": lhu, "lw": lw}
LOAD_SIZE = {"lb": 1, "lbu": 1, "lh": 2, "lhu": 2, "lw": 4}
STORE = {"sb": sb, "sh": sh, "sw": sw}
STORE_SIZE = {"sb": 1, "sh": 2, "sw": 4}
