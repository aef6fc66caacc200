"""MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD, ELWSUB and GMPOOL, written from the pages' pseudocode.

The functional models are tt-isa-documentation WormholeB0 MVMUL.md, DOTPV.md, GAPOOL.md, ELWMUL.md,
ELWADD.md, ELWSUB.md and GMPOOL.md, followed line by line over Python ints and ``numpy.float32``
scalars. Where the pages are open this takes the readings of notes/fpu_readings.md:

- Every float operation is one IEEE binary32 operation, round to nearest even, and FTZ(x) (exponent
  field zero -> +0.0) is applied to each result: x = FTZ(x + FTZ(B * A)) per k, then FTZ(x + Dst).
- ReadBF16 / ReadTF32 / ReadFP16 take the 19-bit Src datum (sign bit 18, mantissa bits 8..17,
  exponent bits 0..7); exponent zero reads as +0.0; FP16 uses the low five exponent bits, rebiased
  by 112, with exponent 31 an ordinary binade.
- RoundToBF16 / RoundToFP16 round to nearest with ties away from zero. BF16: a carry out of the top
  binade gives infinity, NaN stays NaN with the quiet bit set. FP16 (no infinity or NaN): a rebiased
  exponent <= 0 gives a signed zero before rounding, > 31 (infinity and NaN included) or a round-up
  past 31 gives exponent 31 mantissa 1023.
- Integer "32" in Dst is sign-magnitude under the Dst32 shuffle; SaturateAddInt32 clamps at
  +-(2**31 - 1).
- Undefined Dst rows read as zero, except in GMPOOL, whose page says it reads them as minus infinity
  (all bits set); a 32-bit datum either of whose storage rows is undefined is undefined.
- SrcA format codes 12 and 13 name no format: UndefinedBehavior (after the wait gate, where the pages
  determine the formats).

Blackhole encodings (bit positions): clear_dvalid 22..23 (FlipSrcB << 1 | FlipSrcA) throughout.
MVMUL: instr_mod19 19..21 (bit 0 BroadcastSrcBRow, bits 1..2 undefined), addr_mode 14..18 (bits 3..4
undefined), dst 0..13 (bits 10..13 undefined). DOTPV / ELWMUL / ELWADD / ELWSUB: dest_accum_en 21
(AddDst for ELWADD / ELWSUB, ignored otherwise), instr_mod19 19..20 (DOTPV: must be zero; ELW*:
BroadcastSrcBRow << 1 | BroadcastSrcBCol0), addr_mode and dst as MVMUL. GMPOOL / GAPOOL:
instr_mod19 19..21, pool_addr_mode 15..18 (bit 3 undefined), max_pool_index_en 14, dst 0..13.
GMPOOL needs instr_mod19 == 1 (otherwise unimplemented); GAPOOL accepts 0 or 1 and needs
max_pool_index_en clear.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
from dst_reference import Adj16, Adj32, bits
from matrix_harness import (
    BF16,
    BFP2,
    BFP4,
    BFP8,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    MATRIX,
    TF32,
    UNPACKERS,
    BFP2a,
    BFP4a,
    BFP8a,
    RefState,
)
from outcomes import RefUB, RefUnimplemented

# SrcAStyle / DstStyle values (the pages reuse format names; strings keep them apart from codes).
S_BF16, S_FP16, S_TF32, S_INT8, S_INT32 = "BF16", "FP16", "TF32", "INT8", "INT32"

# ---------------------------------------------------------------------------- scalars


def F(u: int) -> np.float32:
    """The float32 whose bits are ``u``."""
    return np.array([u & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]


def U(x: np.float32) -> int:
    """The bits of float32 ``x``."""
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def FTZ(x: np.float32) -> np.float32:
    return np.float32(0.0) if (U(x) >> 23) & 0xFF == 0 else x


def ReadBF16(v: int) -> np.float32:
    Exp = v & 0xFF
    if Exp == 0:
        return np.float32(0.0)
    return F(((v >> 18) & 1) << 31 | Exp << 23 | ((v >> 11) & 0x7F) << 16)


def ReadTF32(v: int) -> np.float32:
    Exp = v & 0xFF
    if Exp == 0:
        return np.float32(0.0)
    return F(((v >> 18) & 1) << 31 | Exp << 23 | ((v >> 8) & 0x3FF) << 13)


def ReadFP16(v: int) -> np.float32:
    Exp = v & 0x1F
    if Exp == 0:
        return np.float32(0.0)
    return F(((v >> 18) & 1) << 31 | (Exp + 112) << 23 | ((v >> 8) & 0x3FF) << 13)


def ReadSrcInt8(x: int) -> int:
    Sign = (x >> 18) & 1
    Mag = (x >> 8) & 0x3FF
    return -Mag if Sign else Mag


def SrcAFidelityBits(x: np.float32, FidelityPhase: int) -> np.float32:
    u = U(x)
    if (FidelityPhase & 1) == 0:
        return FTZ(F(u & 0xFFF80000))
    return FTZ(x - F(u & 0xFFF83FFF))


def SrcBFidelityBits(x: np.float32, FidelityPhase: int) -> np.float32:
    u = U(x)
    if (FidelityPhase & 2) == 0:
        return FTZ(F(u & 0xFFFE0000))
    return FTZ(x - F(u & 0xFFFE1FFF))


def SaturateAddInt32(a: int, b: int) -> int:
    Limit = 2**31 - 1
    return max(-Limit, min(Limit, a + b))


def UnshuffleDst32(v: int) -> int:
    """Dst32 (sign, man-hi(7), exp(8) | man-lo(16)) -> plain FP32 / sign-magnitude int32 order."""
    Sign = (v >> 31) & 1
    ManHi = (v >> 24) & 0x7F
    Exp = (v >> 16) & 0xFF
    return Sign << 31 | Exp << 23 | ManHi << 16 | (v & 0xFFFF)


def ShuffleDst32(u: int) -> int:
    Sign = (u >> 31) & 1
    Exp = (u >> 23) & 0xFF
    ManHi = (u >> 16) & 0x7F
    return Sign << 31 | ManHi << 24 | Exp << 16 | (u & 0xFFFF)


def ReadDstFP32(v: int) -> np.float32:
    return FTZ(F(UnshuffleDst32(v)))


def WriteDstFP32(x: np.float32) -> int:
    return ShuffleDst32(U(FTZ(x)))


def ReadDstInt32(v: int) -> int:
    u = UnshuffleDst32(v)
    Mag = u & 0x7FFFFFFF
    return -Mag if u >> 31 else Mag


def WriteDstInt32(i: int) -> int:
    u = (1 << 31 | -i) if i < 0 else i
    return ShuffleDst32(u)


def ReadDstBF16(v: int) -> np.float32:
    # Dst16 BF16 is sign, man(7), exp(8).
    Sign, Man, Exp = (v >> 15) & 1, (v >> 8) & 0x7F, v & 0xFF
    return FTZ(F(Sign << 31 | Exp << 23 | Man << 16))


def RoundToBF16(x: np.float32) -> int:
    """Plain BF16 bits: nearest, ties away from zero, on the magnitude."""
    u = U(x)
    Sign, Mag = u >> 31, u & 0x7FFFFFFF
    if Mag > 0x7F800000:  # NaN: keep it a NaN
        return ((u >> 16) | 0x40) & 0xFFFF
    Mag = (Mag + 0x8000) >> 16  # a carry out of exponent 254 lands on infinity
    return Sign << 15 | Mag


def WriteDstBF16(b: int) -> int:
    Sign, Exp, Man = (b >> 15) & 1, (b >> 7) & 0xFF, b & 0x7F
    return Sign << 15 | Man << 8 | Exp


def ReadDstFP16(v: int) -> np.float32:
    # Dst16 FP16 is sign, man(10), exp(5).
    Sign, Man, Exp = (v >> 15) & 1, (v >> 5) & 0x3FF, v & 0x1F
    if Exp == 0:
        return np.float32(0.0)
    return FTZ(F(Sign << 31 | (Exp + 112) << 23 | Man << 13))


def RoundToFP16(x: np.float32) -> int:
    """Plain FP16 bits (sign, exp(5), man(10); no infinity): nearest, ties away from zero."""
    u = U(x)
    Sign = u >> 31
    Exp = ((u >> 23) & 0xFF) - 112
    if Exp <= 0:
        return Sign << 15
    if Exp > 31:
        return Sign << 15 | 0x7FFF
    Mag = (Exp << 23 | (u & 0x7FFFFF)) + (1 << 12)
    Mag >>= 13
    return Sign << 15 | min(Mag, 0x7FFF)


def WriteDstFP16(h: int) -> int:
    Sign, Exp, Man = (h >> 15) & 1, (h >> 10) & 0x1F, h & 0x3FF
    return Sign << 15 | Man << 5 | Exp


# ---------------------------------------------------------------------------- instructions

BF16_STYLE = {FP32, BF16, BFP8, BFP4, BFP2, INT32, INT16}
FP16_STYLE = {FP16, FP8, BFP8a, BFP4a, BFP2a, INT8}
NONLINEAR_I_TRANSFORM = [0, 3, 6, 1, 4, 7, 2, 5]


class FpuRef(RefState):
    """The pages' arithmetic instructions over the shared reference state."""

    # GMPOOL's page: undefined Dst reads as minus infinity, "i.e. all bits set" (the whole DstVal,
    # so also MaxIndex 0xFF and IndexPhase 0). False: the smallest Datum (1, 0x1FF, 0x3FF) as Max,
    # the index bits read as zero.
    GMPOOL_UNDEFINED_ALL_ONES = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.NanCells: list[tuple[tuple[int, ...], int]] = []

    # Dst reads with an identity for undefined data; writes are collected, then applied.
    def Read16(self, Row: int, Col: int, Identity: int = 0) -> int:
        a = Adj16(Row, self.c["remap"])
        return Identity & 0xFFFF if a in self.Undefined else self.DstBits[a][Col]

    def Read32(self, Row: int, Col: int, Identity: int = 0) -> int:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        if a in self.Undefined or a + 8 in self.Undefined:
            return Identity
        return (self.DstBits[a][Col] << 16) | self.DstBits[a + 8][Col]

    def _undefined(self, Row: int, Wide: bool) -> bool:
        if Wide:
            a = Adj32(Row, self.c["remap"], self.c["swizzle"])
            return a in self.Undefined or a + 8 in self.Undefined
        return Adj16(Row, self.c["remap"]) in self.Undefined

    def _commit(self, writes: list[tuple[int, int, int, bool]], FlipSrc: int, AddrMod: int) -> None:
        """The pseudocode's tail: Dst writes, bank flips, ApplyAddrMod (which may decline first)."""
        c = self.c
        # ApplyAddrMod's Unimplemented cases are checked before anything changes.
        self.ApplyAddrMod(AddrMod)
        for Row, Col, Val, Wide in writes:
            if Wide:
                a = Adj32(Row, c["remap"], c["swizzle"])
                self.Undefined -= {a, a + 8}
                self.Dst32Write(Row, Col, Val)
            else:
                self.Undefined.discard(Adj16(Row, c["remap"]))
                self.Dst16Write(Row, Col, Val)
        if FlipSrc & 1:
            if not c.get("CLR_DVALID_SrcA_Disable", 0):
                self.SrcAClient[self.SrcABank] = UNPACKERS
            self.SrcABank ^= 1
        if FlipSrc & 2:
            if not c.get("CLR_DVALID_SrcB_Disable", 0):
                self.SrcBClient[self.SrcBBank] = UNPACKERS
            self.SrcBBank ^= 1

    # NaN results: IEEE 754 leaves open which NaN operand's payload (and sign) an operation returns,
    # so a NaN written where the reference writes a NaN of the same Dst layout is a match.
    def _note_nan(self, Row: int, Col: int, Wide: bool) -> None:
        c = self.c
        if Wide:
            a = Adj32(Row, c["remap"], c["swizzle"])
            self.NanCells.append(((a, a + 8), Col))
        else:
            self.NanCells.append(((Adj16(Row, c["remap"]),), Col))

    def accept_dst(self, got: list[list[int]]) -> int:
        """Copy the reference's bits into ``got`` wherever both hold a NaN; how many differed."""
        differed = 0
        for Rows, Col in getattr(self, "NanCells", []):
            Mine = [self.DstBits[r][Col] for r in Rows]
            Theirs = [got[r][Col] for r in Rows]
            if Theirs != Mine and IsDstNaN(Theirs):
                differed += 1
                for r, v in zip(Rows, Mine, strict=True):
                    got[r][Col] = v
        return differed

    def _gate(self) -> bool:
        """The wait gate: True when both matrix-side banks belong to the matrix unit."""
        if self.SrcAClient[self.SrcABank] != MATRIX or self.SrcBClient[self.SrcBBank] != MATRIX:
            self.waited = True
            return False
        return True

    def _formats(self) -> tuple[str, bool]:
        c = self.c
        if c["FP16A_FORCE_Enable"]:
            return S_FP16, False
        if c["INT8_math_enabled"]:
            return S_INT8, True
        SrcAFmt = self.SrcAFmt()
        if SrcAFmt in BF16_STYLE:
            SrcAStyle = S_BF16
        elif SrcAFmt in FP16_STYLE:
            SrcAStyle = S_FP16
        elif SrcAFmt == TF32:
            SrcAStyle = S_TF32
        else:  # codes 12 / 13 name no format
            raise RefUB
        return SrcAStyle, bool(c["Fp32_enabled"])

    def _dst_base(self, DstRow: int) -> int:
        c = self.c
        DstRow += c["MATH_Offset"]
        DstRow += self.RWC["Dst"] + c["DEST_REGW_BASE"]
        return DstRow

    def _fidelity(self) -> int:
        return (self.RWC["FidelityPhase"] + self.c.get("FIDELITY_BASE", 0)) & 3

    def _read_fp(self, SrcAStyle: str, Val: int) -> np.float32:
        if SrcAStyle == S_BF16:
            return ReadBF16(Val)
        if SrcAStyle == S_FP16:
            return ReadFP16(Val)
        return ReadTF32(Val)

    def _accumulate(
        self, writes: list, SrcAStyle: str, UseDst32b: bool, Row: int, Col: int, x, AddDst: bool = True
    ) -> None:
        """Add ``x`` to Dst (if AddDst) and queue the write, as the pages' Dst-type branches."""
        if SrcAStyle == S_INT8:
            if AddDst:
                x = SaturateAddInt32(x, ReadDstInt32(self.Read32(Row, Col)))
            writes.append((Row, Col, WriteDstInt32(x), True))
        elif UseDst32b:
            if AddDst:
                x = FTZ(x + ReadDstFP32(self.Read32(Row, Col)))
            if np.isnan(x):
                self._note_nan(Row, Col, True)
            writes.append((Row, Col, WriteDstFP32(x), True))
        elif SrcAStyle == S_FP16:
            if AddDst:
                x = FTZ(x + ReadDstFP16(self.Read16(Row, Col)))
            writes.append((Row, Col, WriteDstFP16(RoundToFP16(x)), False))
        else:
            if AddDst:
                x = FTZ(x + ReadDstBF16(self.Read16(Row, Col)))
            if np.isnan(x):
                self._note_nan(Row, Col, False)
            writes.append((Row, Col, WriteDstBF16(RoundToBF16(x)), False))

    # ------------------------------------------------------------------ MVMUL, DOTPV, GAPOOL
    def _matmul(self, FlipSrc: int, BroadcastSrcBRow: int, AddrMod: int, DstRow: int, GAPOOL: bool) -> None:
        if not self._gate():
            return
        SrcAStyle, UseDst32b = self._formats()
        NumRows = 4 if GAPOOL else (7 if BroadcastSrcBRow else 8)
        SrcARow = self.RWC["SrcA"] & 0x38
        SrcBRow = self.RWC["SrcB"] & (0x3F if BroadcastSrcBRow else 0x38)
        DstRow = self._dst_base(DstRow)
        DstRow &= 0x400 - NumRows
        FidelityPhase = self._fidelity()
        if SrcARow + 15 > 63:
            raise RefUB  # SrcA rows beyond 63
        A, B = self.SrcA[self.SrcABank], self.SrcB[self.SrcBBank]

        SrcBMatrix = [[0] * 16 for _ in range(NumRows)]
        for i in range(NumRows):
            for j in range(16):
                SrcBVal = B[SrcBRow + (0 if BroadcastSrcBRow else i)][j]
                if SrcAStyle == S_INT8:
                    SrcBMatrix[i][j] = ReadSrcInt8(SrcBVal & (0x40FFF if FidelityPhase & 2 else 0x7F0FF))
                else:
                    SrcBMatrix[i][j] = SrcBFidelityBits(self._read_fp(SrcAStyle, SrcBVal), FidelityPhase)
        SrcAMatrix = [[0] * 16 for _ in range(16)]
        for i in range(16):
            for j in range(16):
                SrcAVal = A[SrcARow + i][j]
                if SrcAStyle == S_INT8:
                    SrcAMatrix[i][j] = ReadSrcInt8(SrcAVal & (0x41FFF if FidelityPhase & 1 else 0x4E0FF))
                else:
                    SrcAMatrix[i][j] = SrcAFidelityBits(self._read_fp(SrcAStyle, SrcAVal), FidelityPhase)

        writes: list = []
        for i in range(0, NumRows, 2 if BroadcastSrcBRow else 1):
            for j in range(16):
                if SrcAStyle == S_INT8:
                    x = 0
                    for k in range(16):
                        x += SrcBMatrix[i][k] * SrcAMatrix[k][j]
                else:
                    x = np.float32(0.0)
                    for k in range(16):
                        x = FTZ(x + FTZ(SrcBMatrix[i][k] * SrcAMatrix[k][j]))
                self._accumulate(writes, SrcAStyle, UseDst32b, DstRow + i, j, x)
        self._commit(writes, FlipSrc, AddrMod)

    def MVMUL(self, word: int) -> None:
        FlipSrc, InstrMod, AddrMod, DstRow = (
            bits(word, 22, 23),
            bits(word, 19, 21),
            bits(word, 14, 18),
            bits(word, 0, 13),
        )
        if InstrMod & 6 or AddrMod & 0x18 or DstRow & 0x3C00:
            raise RefUB
        with np.errstate(all="ignore"):
            self._matmul(FlipSrc, InstrMod & 1, AddrMod, DstRow, GAPOOL=False)

    def DOTPV(self, word: int) -> None:
        FlipSrc, InstrMod, AddrMod, DstRow = (
            bits(word, 22, 23),
            bits(word, 19, 20),
            bits(word, 14, 18),
            bits(word, 0, 13),
        )
        if InstrMod or AddrMod & 0x18 or DstRow & 0x3C00:
            raise RefUB
        with np.errstate(all="ignore"):
            self._matmul(FlipSrc, 0, AddrMod, DstRow, GAPOOL=False)

    def GAPOOL(self, word: int) -> None:
        FlipSrc, InstrMod, AddrMod, ArgMax, DstRow = (
            bits(word, 22, 23),
            bits(word, 19, 21),
            bits(word, 15, 18),
            bits(word, 14, 14),
            bits(word, 0, 13),
        )
        if InstrMod > 1 or AddrMod & 8 or ArgMax or DstRow & 0x3C00:
            raise RefUB
        with np.errstate(all="ignore"):
            self._matmul(FlipSrc, 0, AddrMod, DstRow, GAPOOL=True)

    # ------------------------------------------------------------------ ELWMUL, ELWADD, ELWSUB
    def _decode_elementwise(self, word: int) -> tuple[int, int, int, int, int]:
        """(FlipSrc, AddDst, BroadcastSrcBRow << 1 | BroadcastSrcBCol0, AddrMod, DstRow)."""
        FlipSrc, AddDst, InstrMod, AddrMod, DstRow = (
            bits(word, 22, 23),
            bits(word, 21, 21),
            bits(word, 19, 20),
            bits(word, 14, 18),
            bits(word, 0, 13),
        )
        if AddrMod & 0x18 or DstRow & 0x3C00:
            raise RefUB
        return FlipSrc, AddDst, InstrMod, AddrMod, DstRow

    def _elementwise(self, word: int, Op: str) -> None:
        FlipSrc, AddDst, InstrMod, AddrMod, DstRow = self._decode_elementwise(word)
        BroadcastSrcBRow, BroadcastSrcBCol0 = InstrMod >> 1, InstrMod & 1
        if not self._gate():
            return
        SrcAStyle, UseDst32b = self._formats()
        SrcARow = self.RWC["SrcA"] & 0x38
        SrcBRow = self.RWC["SrcB"] & (0x3F if BroadcastSrcBRow else 0x38)
        DstRow = self._dst_base(DstRow)
        DstRow &= 0x3F8
        FidelityPhase = self._fidelity()
        A, B = self.SrcA[self.SrcABank], self.SrcB[self.SrcBBank]

        writes: list = []
        for i in range(8):
            for j in range(16):
                SrcAVal = A[SrcARow + i][j]
                SrcBVal = B[SrcBRow + (0 if BroadcastSrcBRow else i)][0 if BroadcastSrcBCol0 else j]
                if Op == "MUL":
                    if SrcAStyle == S_INT8:
                        SrcAValInt = ReadSrcInt8(SrcAVal & (0x41FFF if FidelityPhase & 1 else 0x4E0FF))
                        SrcBValInt = ReadSrcInt8(SrcBVal & (0x40FFF if FidelityPhase & 2 else 0x7F0FF))
                        Result = SrcAValInt * SrcBValInt
                    else:
                        SrcAValFP = self._read_fp(SrcAStyle, SrcAVal)
                        SrcBValFP = self._read_fp(SrcAStyle, SrcBVal)
                        Result = FTZ(
                            SrcAFidelityBits(SrcAValFP, FidelityPhase)
                            * SrcBFidelityBits(SrcBValFP, FidelityPhase)
                        )
                    self._accumulate(writes, SrcAStyle, UseDst32b, DstRow + i, j, Result)
                    continue
                if SrcAStyle == S_INT8:
                    a, b = ReadSrcInt8(SrcAVal), ReadSrcInt8(SrcBVal)
                    Result = a + b if Op == "ADD" else a - b
                else:
                    a, b = self._read_fp(SrcAStyle, SrcAVal), self._read_fp(SrcAStyle, SrcBVal)
                    Result = FTZ(a + b if Op == "ADD" else a - b)
                    if FidelityPhase & 1:
                        Result = FTZ(Result / np.float32(32.0))
                    if FidelityPhase & 2:
                        Result = FTZ(Result / np.float32(128.0))
                self._accumulate(writes, SrcAStyle, UseDst32b, DstRow + i, j, Result, AddDst=bool(AddDst))
        self._commit(writes, FlipSrc, AddrMod)

    def ELWMUL(self, word: int) -> None:
        with np.errstate(all="ignore"):
            self._elementwise(word, "MUL")

    def ELWADD(self, word: int) -> None:
        with np.errstate(all="ignore"):
            self._elementwise(word, "ADD")

    def ELWSUB(self, word: int) -> None:
        with np.errstate(all="ignore"):
            self._elementwise(word, "SUB")

    # ------------------------------------------------------------------ GMPOOL
    def _decode_gmpool(self, word: int) -> tuple[int, int, int, int, int, bool]:
        """(FlipSrc, the instr_mod19 slot, AddrMod, ArgMax, DstRow, whether a bit is undefined)."""
        FlipSrc, InstrMod, AddrMod, ArgMax, DstRow = (
            bits(word, 22, 23),
            bits(word, 19, 21),
            bits(word, 15, 18),
            bits(word, 14, 14),
            bits(word, 0, 13),
        )
        return FlipSrc, InstrMod, AddrMod, ArgMax, DstRow, bool(AddrMod & 8 or DstRow & 0x3C00)

    def GMPOOL(self, word: int) -> None:
        FlipSrc, InstrMod, AddrMod, ArgMax, DstRow, UB = self._decode_gmpool(word)
        if InstrMod != 1:
            if UB:  # either check may come first
                self.acceptable = {"undefined", "unimplemented"}
            raise RefUnimplemented
        if UB:
            raise RefUB
        if not self._gate():
            return
        c = self.c
        if c["FP16A_FORCE_Enable"]:
            SrcAStyle, DstStyle, UseDst32b = S_FP16, S_FP16, False
        elif c["INT8_math_enabled"]:
            SrcAStyle, DstStyle, UseDst32b = S_INT8, S_INT32, True
        else:
            SrcAFmt = self.SrcAFmt()
            UseDst32b = bool(c["Fp32_enabled"])
            if SrcAFmt in BF16_STYLE:
                SrcAStyle = S_BF16
                DstStyle = S_BF16 if ArgMax and UseDst32b else (S_TF32 if UseDst32b else S_BF16)
            elif SrcAFmt in FP16_STYLE:
                SrcAStyle = S_FP16
                DstStyle = S_FP16 if ArgMax and UseDst32b else (S_TF32 if UseDst32b else S_FP16)
            elif SrcAFmt == TF32:
                SrcAStyle = S_TF32
                DstStyle = S_INT32 if ArgMax else (S_TF32 if UseDst32b else S_BF16)
            else:
                raise RefUB

        SrcARow = self.RWC["SrcA"] & 0x30
        SrcBRow = self.RWC["SrcB"] & 0x38
        DstRow = self._dst_base(DstRow)
        DstRow &= 0x3FC
        A, B = self.SrcA[self.SrcABank], self.SrcB[self.SrcBBank]

        writes: list = []
        for j in range(16):
            # Undefined Dst reads as minus infinity: all bits set.
            Ones = 0xFFFFFFFF if self.GMPOOL_UNDEFINED_ALL_ONES else 0
            DstVal = self.Read32(DstRow, j, Ones) if UseDst32b else self.Read16(DstRow, j, Ones) << 16
            Max = ReadDst(DstVal, DstStyle)
            if not self.GMPOOL_UNDEFINED_ALL_ONES and self._undefined(DstRow, UseDst32b):
                Max = (1, 0x1FF, 0x3FF)
            MaxIndex = DstVal & 0xFF
            IndexPhase = (DstVal + 0x100) & 0xF00
            for i_ in range(16):
                i = (i_ ^ 4) if i_ < 8 else i_
                SrcAVal = A[SrcARow + i][j]
                SrcBVal = B[SrcBRow][i]
                x = ReadAndScaleSrc(SrcAVal, SrcAStyle, SrcBVal)
                if AsComparable(x) >= AsComparable(Max):
                    Max = x
                    if i < len(NONLINEAR_I_TRANSFORM):
                        MaxIndex = ((IndexPhase >> 4) + NONLINEAR_I_TRANSFORM[i]) & 0xFF
            if ArgMax:
                IndexResult = IndexPhase | MaxIndex
                DstVal = IndexResult if DstStyle == S_INT32 else WriteDst(Max, DstStyle) | IndexResult
            else:
                DstVal = WriteDst(Max, DstStyle)
            if UseDst32b:
                writes.append((DstRow, j, DstVal, True))
                for i in range(1, 4):  # zero or garbage to the other three rows
                    Val = (self.Read32(DstRow + i, j, Ones) + 0x100) & 0xF00 if ArgMax else 0
                    writes.append((DstRow + i, j, Val, True))
            else:
                writes.append((DstRow, j, DstVal >> 16, False))
                for i in range(1, 4):
                    writes.append((DstRow + i, j, 0, False))
        self._commit(writes, FlipSrc, AddrMod)


def IsDstNaN(Bits: list[int]) -> bool:
    """A Dst16b BF16 (one row) or Dst32b FP32 (high, low) NaN."""
    Hi = Bits[0]
    Man = (Hi >> 8) & 0x7F | (Bits[1] if len(Bits) > 1 else 0)
    return (Hi & 0xFF) == 0xFF and Man != 0


# GMPOOL's Datum: (Sign uint1, Exponent uint9, MagOrMan uint10) as a tuple.


def ReadDst(DstVal: int, DstStyle: str) -> tuple[int, int, int]:
    Sign = (DstVal >> 31) & 1
    if DstStyle == S_INT32:
        MagOrMan = DstVal & 0x3FF
        Exponent = (DstVal >> 10) & 0x3F
        Exponent += ((DstVal >> 24) & 7) << 6
    elif DstStyle == S_FP16:
        Exponent = ((DstVal >> 16) & 0x1F) + 15
        MagOrMan = (DstVal >> 21) & 0x3FF
    else:
        Exponent = ((DstVal >> 16) & 0xFF) + 127
        MagOrMan = ((DstVal >> 24) & 0x7F) << 3
        if DstStyle == S_TF32:
            MagOrMan += (DstVal >> 13) & 7
    return Sign, Exponent & 0x1FF, MagOrMan & 0x3FF


def WriteDst(d: tuple[int, int, int], DstStyle: str) -> int:
    Sign, Exponent, MagOrMan = d
    if DstStyle == S_INT32:
        return (Sign << 31) | ((Exponent & 7) << 10) | MagOrMan
    if DstStyle == S_FP16:
        if (Exponent & 0x3F) == 0:
            return 0
        Exponent = (Exponent - 15) & 0x1FF  # wraps if the SrcB scaler was not 1.0
        return (Sign << 31) | (MagOrMan << 21) | ((Exponent & 0x1F) << 16)
    if Exponent == 0:
        return 0
    Exponent = (Exponent - 127) & 0x1FF
    x = (Sign << 31) | ((MagOrMan & 0x3F8) << 21) | ((Exponent & 0xFF) << 16)
    if DstStyle == S_TF32:
        x += (MagOrMan & 7) << 13
    return x


def ReadAndScaleSrc(SrcAVal: int, SrcAStyle: str, SrcBVal: int) -> tuple[int, int, int]:
    SrcAExponent = SrcAVal & 0xFF
    SrcBExponent = SrcBVal & 0xFF
    if SrcBExponent == 0:
        return 1, 0x1FF, 0x3FF  # effectively minus infinity
    if SrcAExponent == 0:
        return 0, 0, 0  # denormals flush to zero
    SrcAMagOrMan = (SrcAVal >> 8) & 0x3FF
    Sign = (SrcAVal >> 18) & 1
    if SrcAStyle == S_INT8:
        return Sign, 0, SrcAMagOrMan
    if SrcAStyle == S_FP16:
        return Sign, (SrcAExponent & 0x1F) + (SrcBExponent & 0x1F), SrcAMagOrMan
    if SrcAStyle == S_TF32:
        return Sign, (SrcAExponent + SrcBExponent) & 0x1FF, SrcAMagOrMan
    return Sign, (SrcAExponent + SrcBExponent) & 0x1FF, SrcAMagOrMan & 0x3F8


def AsComparable(x: tuple[int, int, int]) -> int:
    Sign, Exponent, MagOrMan = x
    return (-1 if Sign else 1) * ((Exponent << 10) + MagOrMan)
