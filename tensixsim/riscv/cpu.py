"""The Unicorn RV32 CPU as the baby cores need it: context patches, register names, AMO semantics."""

from __future__ import annotations

import ctypes

from unicorn import Uc
from unicorn import riscv_const as rv

from tensixsim.errors import InvalidInstruction, InvalidProgram

# Offsets into Unicorn 2.1.4's saved RISC-V CPU context (measured; asserted on every core).
_CTX_PRIV_VER, _CTX_MISA, _CTX_MISA_MASK = 448, 452, 456
_PRIV_1_11, _PRIV_1_9_1 = 0x00011100, 0x00010901
_MISA_A, _MISA_C = 1 << 0, 1 << 2

# fmt: off
ABI_NAMES = (
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
)
# fmt: on
REG_INDEX = {name: i for i, name in enumerate(ABI_NAMES)} | {f"x{i}": i for i in range(32)}
REG_INDEX["fp"] = 8
X_REGS = [rv.UC_RISCV_REG_X0 + i for i in range(32)]
# Unicorn's RISC-V exception numbers (mcause values).
EXC_FETCH_MISALIGNED, EXC_FETCH_FAULT, EXC_ILLEGAL, EXC_BREAKPOINT = 0, 1, 2, 3
EXC_LOAD_MISALIGNED, EXC_LOAD_FAULT, EXC_STORE_MISALIGNED, EXC_STORE_FAULT = 4, 5, 6, 7
EXC_ECALL_U = 8
_OPCODE_AMO = 0x2F  # RV32A's major opcode (AMO*.W, LR.W, SC.W)


def amo(funct5: int, old: int, operand: int) -> int:
    """The value an AMO*.W stores (RV32A), from its funct5."""

    def signed(x: int) -> int:
        return x - (1 << 32) if x & 0x80000000 else x

    ops = {
        0b00001: lambda: operand,
        0b00000: lambda: old + operand,
        0b00100: lambda: old ^ operand,
        0b01100: lambda: old & operand,
        0b01000: lambda: old | operand,
        0b10000: lambda: old if signed(old) <= signed(operand) else operand,
        0b10100: lambda: old if signed(old) >= signed(operand) else operand,
        0b11000: lambda: min(old, operand),
        0b11100: lambda: max(old, operand),
    }
    if funct5 not in ops:
        raise InvalidInstruction("unknown AMO", value=funct5)
    return ops[funct5]() & 0xFFFFFFFF


def configure_cpu(uc: Uc, *, atomics: bool = True) -> None:
    """Disable the C extension (and, with ``atomics`` false, the A extension: its instructions then
    trap as illegal) and the counters in the saved context, then drop to U-mode."""
    context = uc.context_save()
    base = ctypes.cast(context.context, ctypes.c_void_p).value
    assert base is not None
    fields = {
        off: ctypes.c_uint32.from_address(base + off) for off in (_CTX_PRIV_VER, _CTX_MISA, _CTX_MISA_MASK)
    }
    misa = uc.reg_read(rv.UC_RISCV_REG_MISA)
    if fields[_CTX_PRIV_VER].value != _PRIV_1_11 or fields[_CTX_MISA].value != misa:
        raise RuntimeError("unexpected Unicorn CPU context layout; tensixsim needs unicorn==2.1.4")
    disabled = _MISA_C if atomics else _MISA_C | _MISA_A
    fields[_CTX_MISA].value &= ~disabled
    fields[_CTX_MISA_MASK].value &= ~disabled
    # With the 1.9.1 privileged spec QEMU honours mcounteren, so U-mode counter reads trap.
    fields[_CTX_PRIV_VER].value = _PRIV_1_9_1
    uc.context_restore(context)
    uc.reg_write(rv.UC_RISCV_REG_MCOUNTEREN, 0)
    uc.reg_write(rv.UC_RISCV_REG_PRIV, 0)


_JAL_OPCODE = 0x6F


def jal(source: int, target: int) -> int:
    """``jal x0, target`` placed at ``source`` (J-type immediate)."""
    offset = target - source
    if offset % 2 or not -(1 << 20) <= offset < (1 << 20):
        raise InvalidProgram(f"boot jump 0x{source:x} -> 0x{target:x} out of range", value=target)
    imm = offset & 0x1FFFFF
    word = (
        ((imm >> 20) & 1) << 31
        | ((imm >> 1) & 0x3FF) << 21
        | ((imm >> 11) & 1) << 20
        | ((imm >> 12) & 0xFF) << 12
        | _JAL_OPCODE
    )
    return word
