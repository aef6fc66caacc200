"""The unpackers' format conversion (UNPACR_Regular.md ``FormatConversion``,
Unpackers/FormatConversion.md) and the gathering of the datums and their BFP exponents from L1
(``ReadL1Bytes``), on whole arrays of datums.

``FP32ToFP16`` is undefined by the page: formats.fp32_to_fp16 with truncation (its docstring).
"""

from __future__ import annotations

import numpy as np

from tensixsim.errors import MemoryFault, UndefinedBehavior
from tensixsim.tensix import formats
from tensixsim.tensix.formats import (
    BF16,
    BFP2,
    BFP2A,
    BFP4,
    BFP4A,
    BFP8,
    BFP8A,
    FORMAT_NAMES,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.semantics import Context

BFP_FORMATS = frozenset({BFP8, BFP8A, BFP4, BFP4A, BFP2, BFP2A})
WIDE_FORMATS = frozenset({FP32, TF32, INT32})  # 32-bit Dst / 4-byte output addresses
HALF_FORMATS = frozenset({FP16, BF16, INT16})
# DatumSizeBytes in sixteenths of a byte (addresses are kept in sixteenths: BFP2 datums are 2 bits
# and BFP exponents advance 1/16 byte per datum).
DATUM_SIXTEENTHS = {
    BFP2: 4, BFP2A: 4, BFP4: 8, BFP4A: 8, BFP8: 16, BFP8A: 16, FP8: 16, INT8: 16,
    FP16: 32, BF16: 32, INT16: 32, FP32: 64, TF32: 64, INT32: 64,
}  # fmt: skip


# The count of leading zeros of every byte (8 for zero): BFP normalisation's shift.
_LEADING_ZEROS8 = np.array([8 - v.bit_length() for v in range(256)], np.int64)


def _normalised(datums: np.ndarray, exps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BFP8 datums (sign, 7-bit magnitude) and their shared exponents: the sign, the magnitude shifted
    up to its leading one and the exponent lowered to match (the pages' shared first steps).
    Zero magnitudes come back as magnitude 0 (callers give them their own result)."""
    datums = datums & 0xFF
    sign, mag = datums >> 7, (datums << 1) & 0xFF
    lz = _LEADING_ZEROS8[mag]
    return sign, (mag << lz) & 0xFF, (exps - lz) & 0xFF


def bfp8_to_bf16(datums: np.ndarray, exps: np.ndarray) -> np.ndarray:
    """UNPACR_Regular.md ``BFP8ToBF16`` on arrays of uint8 operands."""
    sign, mag, exp = _normalised(datums, exps)
    return np.where(mag == 0, sign * 0xFF80, (sign << 15) | (exp << 7) | (mag & 0x7E))


def bfp8a_to_fp16(datums: np.ndarray, exps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """UNPACR_Regular.md ``BFP8aToFP16`` on arrays, with the mask of datums for which the page says
    UndefinedBehaviour (a normalised exponent beyond FP16's five bits)."""
    sign, mag, exp = _normalised(datums, exps)
    zero = mag == 0
    value = np.where(zero, sign * 0xFC00, (sign << 15) | ((exp & 0x1F) << 10) | ((mag & 0x7E) << 3))
    return value, ~zero & (exp & 0xE0 != 0)


def _i64(values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(np.int64)


def convert(
    ctx: Context, unit: int, in_fmt: int, out_fmt: int, bits: np.ndarray, exps: np.ndarray, to_dst: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """UNPACR_Regular.md ``FormatConversion`` on arrays of datums: the raw values written to Dst or
    SrcA / SrcB, and the mask of datums whose conversion is undefined (None if none can be). A
    conversion that is undefined for every datum raises."""

    def undefined(why: str) -> UndefinedBehavior:
        return ctx.error(UndefinedBehavior, f"format conversion {why}", in_fmt << 4 | out_fmt)

    fmt, bad = in_fmt, None
    if in_fmt == FP32:
        if out_fmt == FP32:
            pass
        elif out_fmt == TF32:
            return _i64(formats.dst32_from_fp32(bits) if to_dst else formats.src_from_tf32(bits)), None
        elif out_fmt == BF16:
            bits, fmt = formats.unpack_fp32_to_bf16(bits), BF16
        elif out_fmt == FP16:
            bits, fmt = formats.fp32_to_fp16(bits), FP16
        else:
            raise undefined(f"FP32 -> {FORMAT_NAMES.get(out_fmt, out_fmt)} is not possible")
    else:
        if in_fmt != out_fmt:
            raise undefined("with InDataFormat != OutDataFormat (only FP32 input converts)")
        if in_fmt == FP8:  # e5m2: the high byte of an FP16 (Wormhole; Blackhole refuses FP8 earlier)
            bits, fmt = bits << 8, FP16
        elif in_fmt in (BFP8, BFP4, BFP2):
            shift = {BFP8: 0, BFP4: 4, BFP2: 6}[in_fmt]
            bits, fmt = bfp8_to_bf16(bits << shift, exps), BF16
        elif in_fmt in (BFP8A, BFP4A, BFP2A):
            shift = {BFP8A: 0, BFP4A: 4, BFP2A: 6}[in_fmt]
            bits, bad = bfp8a_to_fp16(bits << shift, exps)
            fmt = FP16
        elif in_fmt == INT8:
            config = ctx.copro.config
            name = f"ALU_FORMAT_SPEC_REG0_Src{'B' if unit else 'A'}Unsigned"
            unsigned = config.read_field(name, config.state_id(ctx.thread))
            bits, fmt = formats.int8_from_sm8(bits, unsigned=bool(unsigned)), FP16
        elif in_fmt == TF32:
            if to_dst:
                return _i64(formats.dst32_from_fp32(bits)), None
            raise undefined("TF32 input is only valid when unpacking to Dst")
    if fmt == INT16:
        return _i64(bits if to_dst else formats.src_from_int16(bits)), bad
    if fmt in (INT32, FP32):
        if to_dst:
            return _i64(formats.dst32_from_fp32(bits)), bad
        raise undefined(f"{FORMAT_NAMES[fmt]} cannot be written to SrcA / SrcB")
    if fmt == BF16:
        return _i64(formats.dst16_from_bf16(bits) if to_dst else formats.src_from_bf16(bits)), bad
    return _i64(formats.dst16_from_fp16(bits) if to_dst else formats.src_from_fp16(bits)), bad


def datum_addresses(start: int, count: int, size16: int, width: int, row_stride: int, wrap) -> np.ndarray:
    """The input address (sixteenths) of each datum: ``width`` datums a row, the next row
    ``row_stride`` on from the row's start, the FIFO wrap applied at each row start."""
    rows = -(-count // width)
    starts = np.empty(rows, np.int64)
    addr = start
    for r in range(rows):
        starts[r] = addr
        addr = wrap(addr + row_stride)
    return (starts[:, None] + size16 * np.arange(width, dtype=np.int64)).ravel()[:count]


def exponent_addresses(start: int, count: int, wrap) -> np.ndarray:
    """The exponent address (sixteenths) of each datum: one sixteenth on per datum, the FIFO wrap
    applied each time the address reaches a 16-byte boundary."""
    out = np.empty(count, np.int64)
    i, addr = 0, start
    while i < count:
        n = min(count - i, 256 - addr % 256)
        out[i : i + n] = addr + np.arange(n, dtype=np.int64)
        i, addr = i + n, addr + n
        if addr % 256 == 0:
            addr = wrap(addr)
    return out


def gather_bits(l1: np.ndarray, addr16: np.ndarray, size16: int) -> np.ndarray:
    """``ReadL1Bytes`` of ``size16`` sixteenths at each address (sixteenths), bits from the lowest up.
    Addresses outside L1 give garbage here; the caller checks them first (``unit._regular``)."""
    bit = addr16 // 2  # sixteenths of a byte are half-bits; datums start on whole bits
    byte, shift = bit >> 3, bit & 7
    nbits = size16 // 2
    last = len(l1) - 1
    raw = np.zeros(len(addr16), np.uint64)
    for k in range((7 + nbits + 7) // 8):
        raw |= l1[np.clip(byte + k, 0, last)].astype(np.uint64) << np.uint64(8 * k)
    return ((raw >> shift.astype(np.uint64)) & np.uint64((1 << nbits) - 1)).astype(np.int64)


def read_fault(ctx: Context, addr16: int, size16: int) -> MemoryFault:
    return MemoryFault(
        f"pipe {ctx.thread} {ctx.instruction.name}: unpacker L1 read outside L1",
        address=max(addr16 // 16, 0),
        size=max(size16 // 16, 1),
        write=False,
        core=ctx.core,
        pc=ctx.pc,
        cycle=ctx.cycle,
    )
