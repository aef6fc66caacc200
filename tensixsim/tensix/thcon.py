"""Scalar unit (ThCon): the Tensix GPRs and the instructions that work on them.

Functional model: tt-isa-documentation WormholeB0/TensixTile/TensixCoprocessor/ScalarUnit.md and
the per-instruction pages (no BlackholeA0 page changes them); the operand layouts are read off the
pages' encoding diagrams. Blackhole differences: L1 is ``arch.l1_size`` (1536 KiB) where the pages'
bound is Wormhole's 1464 KiB.

Each thread has 64 32-bit GPRs; instructions only reach their own thread's. Some address a GPR's
low or high 16 bits ("half-registers": half 2k is GPR k's low half, 2k+1 its high half) or an
aligned group of four GPRs (16 bytes, GPR 4k at the lowest address).

Where the table's encoding slot is wider than the documented operand (ADDDMAREG's result register:
slot 11 bits, operand 6), or a slot holds no documented operand (ATCAS's data register), the extra
bits must be zero: anything else raises UndefinedBehavior rather than guessing which bits the
hardware ignores.

REG2FLOP writes the configuration unit's Config (THCON words) and the address counters' ADCs.
SETDMAREG's special mode with an InputSource that reads packer state (0..9) and STOREIND to
SrcA/SrcB raise Unimplemented: the packers and the source registers are not modelled yet.

Deviation, timing only: the documentation lets LOADIND, LOADREG and ATINCGET deliver their result
to the GPR some cycles after the instruction leaves the unit, and posted stores reach L1 later. Here
every access completes when the instruction executes, so a program that waits as documented
(STALLWAIT/FLUSHDMA condition C0) sees the same values, and one that races sees them early.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.mmio.memory import Access, Register
from tensixsim.tensix.adc import ADC_MASKS
from tensixsim.tensix.config.unit import store_config
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import THCON

# Every instruction here is registered for both chips: the model is Wormhole's pages, with the same
# encoding on Blackhole; L1's size and the THCON configuration words come from the architecture.
BOTH = ("blackhole", "wormhole")

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor

MASK32 = 0xFFFF_FFFF
GPR_COUNT = 64  # per thread

# RISC-V view of the GPRs (BabyRISCV memory map, REGFILE_BASE): a TRISC sees its own thread's 64
# GPRs from the base; BRISC sees thread t's 0x100 * t further on.
REGFILE_BASE = 0xFFE0_0000
REGFILE_THREAD_STRIDE = GPR_COUNT * 4

# The MMIO window of STOREIND (MMIO), LOADREG and STOREREG: 0xFFB00000 + a word offset below 1 MiB;
# addresses below 0xFFB11000 (the cores' local RAM) are undefined.
MMIO_WINDOW_BASE = 0xFFB0_0000
MMIO_WINDOW_MASK = 0x000F_FFFC
MMIO_WINDOW_LOWEST = 0xFFB1_1000

# LOADIND / STOREIND OffsetIncrement: what is added to the 16-bit offset half-register.
OFFSET_INCREMENTS = (0, 2, 4, 16)


@dataclass
class ThconState(SharedArrays):
    """The GPRs, raw bits: ``gprs[thread, index]``."""

    gprs: np.ndarray  # (threads, 64) uint32

    @classmethod
    def new(cls, arch: Arch) -> ThconState:
        return cls(np.zeros((arch.pipe_count, GPR_COUNT), np.uint32))


# ---------------------------------------------------------------------------------- helpers


def _gprs(ctx: Context) -> np.ndarray:
    """The issuing thread's GPRs (a view: writes go to the state)."""
    return ctx.copro.thcon.gprs[ctx.thread]


def _half(gprs: np.ndarray, half: int) -> int:
    return (int(gprs[half >> 1]) >> (16 * (half & 1))) & 0xFFFF


def _set_half(gprs: np.ndarray, half: int, value: int) -> None:
    shift = 16 * (half & 1)
    word = int(gprs[half >> 1]) & ~(0xFFFF << shift)
    gprs[half >> 1] = (word | ((value & 0xFFFF) << shift)) & MASK32


def _group_bytes(gprs: np.ndarray, first: int) -> bytes:
    """Four GPRs from ``first`` as the 16 bytes they occupy in memory (little-endian)."""
    return gprs[first : first + 4].astype("<u4").tobytes()


def _check(ctx: Context, ok: bool, message: str, value: int | None = None) -> None:
    if not ok:
        raise ctx.error(UndefinedBehavior, message, value)


def _check_index(ctx: Context, name: str, value: int, width: int) -> None:
    """A table slot wider than its documented operand must hold a value the operand can."""
    _check(ctx, value < 1 << width, f"{name}={value} does not fit the documented {width}-bit operand", value)


def _check_zero(ctx: Context, name: str, value: int) -> None:
    """A table slot that holds no documented operand must be zero."""
    _check(ctx, value == 0, f"{name}={value}: the slot holds no documented operand", value)


def _check_l1(ctx: Context, address: int) -> None:
    size = ctx.copro.arch.l1_size
    _check(ctx, address < size, f"L1 address 0x{address:x} is beyond L1 ({size // 1024} KiB)", address)


def _read32(ctx: Context, address: int) -> int:
    return int.from_bytes(ctx.copro.l1_read(address, 4), "little")


def _write32(ctx: Context, address: int, value: int) -> None:
    ctx.copro.l1_write(address, (value & MASK32).to_bytes(4, "little"), ctx.cycle)


def _mmio_address(ctx: Context, address: int) -> int:
    _check(
        ctx,
        address >= MMIO_WINDOW_LOWEST,
        f"MMIO address 0x{address:08x} is below 0x{MMIO_WINDOW_LOWEST:08x}",
        address,
    )
    return address


# ---------------------------------------------------------------------------------- SETDMAREG

# SETDMAREG special mode, packed into payload_sig_sel: InputHalfReg (3 bits), InputSource (4),
# WhichPackers (4); the slot's top three bits are unassigned.
_INPUT_SOURCES_WITHOUT_DATA = 10  # InputSource 10..15 select nothing: the 128-bit value is zero

# TileHeader fields that ResultSize 3 writes, per 32-bit word (the rest is left as it was):
# TileSize; DataFormat, DisableZeroCompression, SpareBits; AllZeroFlags; nothing.
_TILE_HEADER_MASKS = (0x0000_FFFF, 0x00FF_0000, 0xFFFF_FFFF, 0x0000_0000)


@semantics("SETDMAREG", arches=BOTH)
def setdmareg(
    ctx: Context, payload_sig_sel_size: int, payload_sig_sel: int, set_signals_mode: int, reg_index_16b: int
) -> Outcome:
    gprs = _gprs(ctx)
    if not set_signals_mode:
        # Immediate mode: the two slots together are one 16-bit NewValue (bits 23..8).
        _set_half(gprs, reg_index_16b, (payload_sig_sel_size << 14) | payload_sig_sel)
        return Retire(THCON.setdmareg)
    input_half = payload_sig_sel & 7
    source = (payload_sig_sel >> 3) & 0xF
    _check_index(ctx, "payload_sig_sel", payload_sig_sel, 11)
    if source < _INPUT_SOURCES_WITHOUT_DATA:
        raise ctx.error(
            Unimplemented,
            f"SETDMAREG InputSource {source} reads packer configuration or state; "
            "the packers are not modelled yet",
        )
    values = [0, 0, 0, 0]
    result_size = payload_sig_sel_size
    if result_size == 0:  # one half of a value into one half-register
        _set_half(gprs, reg_index_16b, (values[input_half >> 1] >> (16 * (input_half & 1))) & 0xFFFF)
    elif result_size == 1:  # one value into one GPR
        gprs[reg_index_16b >> 1] = values[input_half >> 1]
    else:
        first = (reg_index_16b >> 1) & 0x3C
        for i in range(4):
            keep = 0 if result_size == 2 else ~_TILE_HEADER_MASKS[i] & MASK32
            gprs[first + i] = (int(gprs[first + i]) & keep) | (values[i] & ~keep & MASK32)
    return Retire(THCON.setdmareg)


# ---------------------------------------------------------------------------------- arithmetic


def _operands(
    ctx: Context, op_b_is_const: int, op_b_reg_index: int, op_a_reg_index: int
) -> tuple[int, int, int]:
    """(left, right, cycles): the right operand is the 6-bit immediate or a GPR."""
    gprs = _gprs(ctx)
    left = int(gprs[op_a_reg_index])
    if op_b_is_const:
        return left, op_b_reg_index, THCON.arithmetic
    same_group = op_a_reg_index >> 2 == op_b_reg_index >> 2
    return left, int(gprs[op_b_reg_index]), THCON.arithmetic if same_group else THCON.arithmetic_split


def _result(ctx: Context, result_reg_index: int, value: int, cycles: int) -> Retire:
    _gprs(ctx)[result_reg_index] = value & MASK32
    return Retire(cycles)


@semantics("ADDDMAREG", arches=BOTH)
def adddmareg(
    ctx: Context, op_b_is_const: int, result_reg_index: int, op_b_reg_index: int, op_a_reg_index: int
) -> Outcome:
    _check_index(ctx, "result_reg_index", result_reg_index, 6)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    return _result(ctx, result_reg_index, left + right, cycles)


@semantics("SUBDMAREG", arches=BOTH)
def subdmareg(
    ctx: Context, op_b_is_const: int, result_reg_index: int, op_b_reg_index: int, op_a_reg_index: int
) -> Outcome:
    _check_index(ctx, "result_reg_index", result_reg_index, 6)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    return _result(ctx, result_reg_index, left - right, cycles)


@semantics("MULDMAREG", arches=BOTH)
def muldmareg(
    ctx: Context, op_b_is_const: int, result_reg_index: int, op_b_reg_index: int, op_a_reg_index: int
) -> Outcome:
    _check_index(ctx, "result_reg_index", result_reg_index, 6)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    # Unsigned 16 x 16 -> 32 bits: only the low halves take part.
    return _result(ctx, result_reg_index, (left & 0xFFFF) * (right & 0xFFFF), cycles)


_BITWISE = {0: lambda a, b: a & b, 1: lambda a, b: a | b, 2: lambda a, b: a ^ b}  # AND, OR, XOR


@semantics("BITWOPDMAREG", arches=BOTH)
def bitwopdmareg(
    ctx: Context,
    op_b_is_const: int,
    op_sel: int,
    result_reg_index: int,
    op_b_reg_index: int,
    op_a_reg_index: int,
) -> Outcome:
    _check(ctx, op_sel in _BITWISE, f"mode {op_sel} is undefined (0 AND, 1 OR, 2 XOR)", op_sel)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    return _result(ctx, result_reg_index, _BITWISE[op_sel](left, right), cycles)


@semantics("SHIFTDMAREG", arches=BOTH)
def shiftdmareg(
    ctx: Context,
    op_b_is_const: int,
    op_sel: int,
    result_reg_index: int,
    op_b_reg_index: int,
    op_a_reg_index: int,
) -> Outcome:
    _check(ctx, op_sel in (0, 1), f"mode {op_sel} is undefined (0 left, 1 right)", op_sel)
    if op_b_is_const:
        _check_index(ctx, "op_b_reg_index (RightImm5)", op_b_reg_index, 5)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    amount = right & 0x1F  # a GPR amount uses its low five bits
    return _result(ctx, result_reg_index, left << amount if op_sel == 0 else left >> amount, cycles)


_COMPARE = {0: lambda a, b: a > b, 1: lambda a, b: a < b, 2: lambda a, b: a == b}  # GT, LT, EQ


@semantics("CMPDMAREG", arches=BOTH)
def cmpdmareg(
    ctx: Context,
    op_b_is_const: int,
    op_sel: int,
    result_reg_index: int,
    op_b_reg_index: int,
    op_a_reg_index: int,
) -> Outcome:
    _check(ctx, op_sel in _COMPARE, f"mode {op_sel} is undefined (0 GT, 1 LT, 2 EQ)", op_sel)
    left, right, cycles = _operands(ctx, op_b_is_const, op_b_reg_index, op_a_reg_index)
    # Unsigned: both operands are non-negative Python ints here.
    return _result(ctx, result_reg_index, int(_COMPARE[op_sel](left, right)), cycles)


# ---------------------------------------------------------------------------------- no-op, flush


@semantics("DMANOP", arches=BOTH)
def dmanop(ctx: Context) -> Outcome:
    return Retire(THCON.dmanop)


# FLUSHDMA conditions C1..C3 and the unit whose pipeline they watch. C0 (this unit's outstanding
# memory requests) never holds here: every access completes when its instruction executes.
_FLUSH_UNITS = ((1, "unpacker0"), (2, "unpacker1"), (3, "packer"))


@semantics("FLUSHDMA", arches=BOTH)
def flushdma(ctx: Context, flush_spec: int) -> Outcome:
    _check_index(ctx, "flush_spec", flush_spec, 4)
    mask = flush_spec or 0xF
    # Occupies the unit until every selected condition is met. We know when a unit is busy, not
    # which thread its instructions came from: wait for the whole unit (never shorter than the
    # hardware). Each unpacker is busy until its L1 fetch ends.
    end = ctx.cycle + THCON.flushdma
    for bit, unit in _FLUSH_UNITS:
        if mask >> bit & 1:
            end = max(end, ctx.copro.busy_end(unit))
    return Retire(end - ctx.cycle)


# ---------------------------------------------------------------------------------- L1 load/store


def _indexed_address(ctx: Context, offset_index: int, addr_reg_index: int) -> int:
    """GPR[AddrReg] * 16 + the 16-bit offset half-register, checked against L1."""
    gprs = _gprs(ctx)
    address = (int(gprs[addr_reg_index]) * 16 + _half(gprs, offset_index)) & MASK32
    _check_l1(ctx, address)
    return address


def _increment_offset(ctx: Context, offset_index: int, auto_inc_spec: int) -> None:
    gprs = _gprs(ctx)
    _set_half(gprs, offset_index, _half(gprs, offset_index) + OFFSET_INCREMENTS[auto_inc_spec])


# Size encodings of LOADIND and STOREIND (L1): bytes moved; the address is aligned down to it.
_SIZES = (16, 4, 2, 1)


@semantics("LOADIND", arches=BOTH)
def loadind(
    ctx: Context,
    size_sel: int,
    offset_index: int,
    auto_inc_spec: int,
    data_reg_index: int,
    addr_reg_index: int,
) -> Outcome:
    _check_index(ctx, "offset_index", offset_index, 7)
    address = _indexed_address(ctx, offset_index, addr_reg_index)
    _increment_offset(ctx, offset_index, auto_inc_spec)
    size = _SIZES[size_sel]
    data = ctx.copro.l1_read(address & ~(size - 1), size)
    gprs = _gprs(ctx)
    if size == 16:  # four consecutive GPRs
        first = data_reg_index & 0x3C
        gprs[first : first + 4] = np.frombuffer(data, "<u4")
    else:  # the low 8, 16 or 32 bits of one GPR; the rest stays
        keep = ~((1 << (8 * size)) - 1) & MASK32
        gprs[data_reg_index] = (int(gprs[data_reg_index]) & keep) | int.from_bytes(data, "little")
    return Retire(THCON.load_store)


@semantics("STOREIND", arches=BOTH)
def storeind(
    ctx: Context,
    mem_hier_sel: int,
    size_sel: int,
    reg_size_sel: int,
    offset_index: int,
    auto_inc_spec: int,
    data_reg_index: int,
    addr_reg_index: int,
) -> Outcome:
    if mem_hier_sel:
        size_code = (size_sel << 1) | reg_size_sel  # the two slots form the 2-bit Size
        return _storeind_l1(ctx, size_code, offset_index, auto_inc_spec, data_reg_index, addr_reg_index)
    if size_sel:
        _check(ctx, not reg_size_sel, "the MMIO form has no operand in bit 21 (reg_size_sel=1)")
        return _storeind_mmio(ctx, offset_index, auto_inc_spec, data_reg_index, addr_reg_index)
    target = "SrcB" if reg_size_sel else "SrcA"
    raise ctx.error(
        Unimplemented, f"STOREIND to {target} writes the source registers, which are not modelled yet"
    )


def _storeind_l1(
    ctx: Context,
    size_code: int,
    offset_index: int,
    auto_inc_spec: int,
    data_reg_index: int,
    addr_reg_index: int,
) -> Outcome:
    address = _indexed_address(ctx, offset_index, addr_reg_index)
    _increment_offset(ctx, offset_index, auto_inc_spec)
    # The data is read after the increment (as documented): a data register holding the offset
    # stores the incremented value.
    gprs = _gprs(ctx)
    size = _SIZES[size_code]
    if size == 16:
        data = _group_bytes(gprs, data_reg_index & 0x3C)
    else:
        data = (int(gprs[data_reg_index]) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    ctx.copro.l1_write(address & ~(size - 1), data, ctx.cycle)
    return Retire(THCON.load_store)


def _storeind_mmio(
    ctx: Context, offset_index: int, auto_inc_spec: int, data_reg_index: int, addr_reg_index: int
) -> Outcome:
    gprs = _gprs(ctx)
    # The offset counts bytes in 16ths here: only its upper 12 bits take part.
    word = (int(gprs[addr_reg_index]) + (_half(gprs, offset_index) >> 4)) & MASK32
    address = _mmio_address(ctx, MMIO_WINDOW_BASE + (word & MMIO_WINDOW_MASK))
    ctx.copro.register_write(address, int(gprs[data_reg_index]), ctx.cycle)
    _increment_offset(ctx, offset_index, auto_inc_spec)
    return Retire(THCON.load_store)


# ---------------------------------------------------------------------------------- MMIO load/store


@semantics("LOADREG", arches=BOTH)
def loadreg(ctx: Context, tdma_data_reg_index: int, reg_addr: int) -> Outcome:
    address = _mmio_address(ctx, MMIO_WINDOW_BASE + (reg_addr << 2))
    try:
        value = ctx.copro.register_read(address, ctx.cycle)
    except MemoryFault as fault:
        raise fault.at(ctx.core, ctx.pc) from None  # the pushing core's instruction faulted
    _gprs(ctx)[tdma_data_reg_index] = value & MASK32
    return Retire(THCON.load_store)


@semantics("STOREREG", arches=BOTH)
def storereg(ctx: Context, tdma_data_reg_index: int, reg_addr: int) -> Outcome:
    address = _mmio_address(ctx, MMIO_WINDOW_BASE + (reg_addr << 2))
    try:
        ctx.copro.register_write(address, int(_gprs(ctx)[tdma_data_reg_index]), ctx.cycle)
    except MemoryFault as fault:
        raise fault.at(ctx.core, ctx.pc) from None
    return Retire(THCON.load_store)


# ---------------------------------------------------------------------------------- atomics


def _check_l1_only(ctx: Context, mem_hier_sel: int) -> None:
    # The atomics' pages document only mem_hier_sel = 0 (L1).
    _check(ctx, not mem_hier_sel, "mem_hier_sel=1 is not documented for the atomics")


def _atomic_address(ctx: Context, addr_reg_index: int, word: int) -> int:
    """GPR[AddrReg] * 16 + 4 * word, checked against L1."""
    address = (int(_gprs(ctx)[addr_reg_index]) * 16 + 4 * word) & MASK32
    _check_l1(ctx, address)
    return address


def _masked_add(original: int, increment: int, mask: int) -> int:
    """The low bits ``mask`` of ``original`` advance by ``increment`` (wrapping there); the rest stay."""
    return (((original + increment) & mask) | (original & ~mask)) & MASK32


@semantics("ATINCGET", arches=BOTH)
def atincget(
    ctx: Context, mem_hier_sel: int, wrap_val: int, sel32b: int, data_reg_index: int, addr_reg_index: int
) -> Outcome:
    _check_l1_only(ctx, mem_hier_sel)
    _check_index(ctx, "wrap_val (IntWidth)", wrap_val, 5)
    address = _atomic_address(ctx, addr_reg_index, sel32b)
    gprs = _gprs(ctx)
    mask = ((2 << wrap_val) - 1) & MASK32  # IntWidth + 1 bits
    original = _read32(ctx, address)
    _write32(ctx, address, _masked_add(original, int(gprs[data_reg_index]), mask))
    gprs[data_reg_index] = original
    return Retire(THCON.atomic)


@semantics("ATINCGETPTR", arches=BOTH)
def atincgetptr(
    ctx: Context,
    mem_hier_sel: int,
    no_incr: int,
    incr_val: int,
    wrap_val: int,
    sel32b: int,
    data_reg_index: int,
    addr_reg_index: int,
) -> Outcome:
    _check_l1_only(ctx, mem_hier_sel)
    base = _atomic_address(ctx, addr_reg_index, 0)
    rd, wr = _read32(ctx, base), _read32(ctx, base + 4)
    occupancy = (wr - rd) & MASK32
    empty = occupancy == 0
    if sel32b & 1:  # odd word: a push, which needs room
        capacity = 1 << (wrap_val - 1) if wrap_val else 0x8000
        if occupancy % capacity == 0 and not empty:
            return Wait(f"FIFO at L1 0x{base:x} is full (rd=0x{rd:x} wr=0x{wr:x})", l1=(base, 8))
    elif empty:  # even word: a pop, which needs an element
        return Wait(f"FIFO at L1 0x{base:x} is empty (rd=wr=0x{rd:x})", l1=(base, 8))
    address = base + 4 * sel32b
    original = _read32(ctx, address)
    increment = 0 if no_incr else 1 << incr_val
    _write32(ctx, address, _masked_add(original, increment, (1 << wrap_val) - 1))
    _gprs(ctx)[data_reg_index] = original
    return Retire(THCON.atomic_blocking)


@semantics("ATSWAP", arches=BOTH)
def atswap(
    ctx: Context, mem_hier_sel: int, swap_mask: int, data_reg_index: int, addr_reg_index: int
) -> Outcome:
    _check_l1_only(ctx, mem_hier_sel)
    _check_index(ctx, "data_reg_index", data_reg_index, 6)
    # swap_mask's top bit is SingleDataReg; the low eight select 16-bit granules.
    single, mask = swap_mask >> 8, swap_mask & 0xFF
    base = _atomic_address(ctx, addr_reg_index, 0)
    gprs = _gprs(ctx)
    if single:  # one GPR, placed at its position within its group of four; the rest zero
        position = data_reg_index & 3
        word = int(gprs[data_reg_index]).to_bytes(4, "little")
        data = bytes(4 * position) + word + bytes(4 * (3 - position))
    else:
        data = _group_bytes(gprs, data_reg_index & 0x3C)
    for granule in range(8):
        if mask >> granule & 1:
            ctx.copro.l1_write(base + 2 * granule, data[2 * granule : 2 * granule + 2], ctx.cycle)
    return Retire(THCON.atomic)


@semantics("ATCAS", arches=BOTH)
def atcas(
    ctx: Context,
    mem_hier_sel: int,
    swap_val: int,
    cmp_val: int,
    sel32b: int,
    data_reg_index: int,
    addr_reg_index: int,
) -> Outcome:
    _check_l1_only(ctx, mem_hier_sel)
    _check_index(ctx, "swap_val (SetVal)", swap_val, 4)
    _check_zero(ctx, "data_reg_index", data_reg_index)
    address = _atomic_address(ctx, addr_reg_index, sel32b)
    current = _read32(ctx, address)
    if current != cmp_val:  # the whole word is compared with the 4-bit value
        return Wait(f"L1 0x{address:x} holds 0x{current:x}, not {cmp_val}", l1=(address, 4))
    _write32(ctx, address, swap_val)
    return Retire(THCON.atomic_blocking)


# ---------------------------------------------------------------------------------- REG2FLOP

# THCON_CFGREG_BASE_ADDR32 per architecture: the first Config word of the THCON_ fields, which run
# up to GLOBAL_CFGREG_BASE_ADDR32 (Blackhole: 64 and 180). Read off the field table once.
_THCON_CONFIG_BASE: dict[str, int] = {}


def _thcon_config_base(ctx: Context) -> int:
    arch = ctx.copro.arch.name
    if arch not in _THCON_CONFIG_BASE:
        fields = ctx.copro.config.layout.config_fields
        _THCON_CONFIG_BASE[arch] = min(
            word for name, (word, _, _) in fields.items() if name.startswith("THCON_")
        )
    return _THCON_CONFIG_BASE[arch]


@semantics("REG2FLOP", arches=BOTH)
def reg2flop(
    ctx: Context,
    size_sel: int,
    target_sel: int,
    byte_offset: int,
    context_id_2: int,
    flop_index: int,
    reg_index: int,
) -> Outcome:
    # target_sel 0: THCON configuration. 2 and 3: an ADC (bit 0 is OverrideThread); byte_offset is
    # then Shift8, context_id_2 ThreadSel, and flop_index packs Channel, ADCSel, Cr and XYZW.
    if target_sel == 0:
        return _reg2flop_config(ctx, size_sel, byte_offset, context_id_2, flop_index, reg_index)
    _check(ctx, target_sel != 1, "target_sel=1 is not documented (0: configuration, 2 or 3: ADC)")
    _check_index(ctx, "flop_index", flop_index, 6)
    value = int(_gprs(ctx)[reg_index])
    shift8 = byte_offset
    if size_sel == 0:  # 128 bits: not valid for an ADC, writes zero
        value = 0
    elif size_sel == 1:  # 32 bits
        value = 0 if shift8 else value
    elif size_sel == 2:  # 16 bits: the low or the high half
        value = value & 0xFFFF if shift8 == 0 else value >> 16 if shift8 == 2 else 0
    else:  # 8 bits: byte Shift8
        value = (value >> (8 * shift8)) & 0xFF
    thread = context_id_2 if target_sel & 1 else ctx.thread
    unit = (flop_index >> 3) & 3  # ADCSel: unpacker 0, unpacker 1, packers
    if thread >= ctx.copro.threads or unit == 3:
        return Retire(THCON.reg2flop)  # documented to write nothing
    channel, cr, dim = (flop_index >> 5) & 1, (flop_index >> 2) & 1, flop_index & 3
    counters = ctx.copro.adc.cr if cr else ctx.copro.adc.value  # only the one named is written
    counters[thread, unit, channel, dim] = value & ADC_MASKS[dim]
    return Retire(THCON.reg2flop)


def _reg2flop_config(
    ctx: Context, size_sel: int, byte_offset: int, context_id_2: int, flop_index: int, reg_index: int
) -> Outcome:
    """Config[StateID][THCON base + ThConCfgIndex] = GPR, or four words from an aligned group.

    Any size_sel but 0 writes 32 bits, as documented. (tt-llk's assembly.yaml calls 2 and 3 16-
    and 8-bit moves, with byte_offset picking the bytes; the documentation's model has no such
    form and its syntax passes byte_offset 0.)
    """
    _check_zero(ctx, "byte_offset", byte_offset)
    _check_zero(ctx, "context_id_2", context_id_2)
    config = ctx.copro.config
    base = _thcon_config_base(ctx)
    limit = config.layout.global_base - base
    _check(
        ctx, flop_index < limit, f"ThConCfgIndex {flop_index} is beyond the THCON configuration", flop_index
    )
    gprs = _gprs(ctx)
    state = config.state_id(ctx.thread)
    if size_sel == 0:
        for i in range(4):
            store_config(ctx.copro, state, base + (flop_index & ~3) + i, int(gprs[(reg_index & ~3) + i]))
    else:
        store_config(ctx.copro, state, base + flop_index, int(gprs[reg_index]))
    return Retire(THCON.reg2flop)


# ---------------------------------------------------------------------------------- RISC-V view


def _gpr_register(copro: Coprocessor, thread: int, index: int) -> Register:
    def read(access: Access) -> int:
        return int(copro.thcon.gprs[thread, index])

    def write(access: Access, value: int) -> None:
        copro.thcon.gprs[thread, index] = value & MASK32
        copro.state_changed(access.cycle)

    # tensix.h (REGFILE_BASE): "subword reads are supported through byte enables".
    return Register(f"T{thread}_GPR{index}", read, write, watch="coprocessor", narrow_loads=True)


def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register.

    BRISC sees every thread's GPRs (thread t at REGFILE_BASE + 0x100 * t), a TRISC its own thread's
    at REGFILE_BASE, NCRISC none. The documentation (MemoryOrdering.md) says a TRISC sees each GPR
    at several addresses (X and X + 256), without saying how many: only the first is mapped, and
    the others fault.
    """
    if core.facts.name == "brisc":
        views = [(thread, REGFILE_BASE + REGFILE_THREAD_STRIDE * thread) for thread in range(copro.threads)]
    elif core.facts.pipe is not None:
        views = [(core.facts.pipe, REGFILE_BASE)]
    else:
        return {}
    return {
        base + 4 * index: _gpr_register(copro, thread, index)
        for thread, base in views
        for index in range(GPR_COUNT)
    }
