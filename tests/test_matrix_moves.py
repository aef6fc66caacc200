"""MOVA2D, MOVB2D, MOVD2A, MOVD2B and MOVB2A against a reference written from the pages' pseudocode.

The reference follows tt-isa-documentation WormholeB0 MOVA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md,
the jasondavies fork's MOVB2A.md, RWCs.md (ApplyAddrMod) and BlackholeA0 Dst.md (Adj16 / Adj32),
line by line, over Python lists. Words are decoded by bit position, with the Blackhole placement that
matrix/moves.py documents: UseDst32bLo bit 23, SrcRow / SrcARow bits 17..22, AddrMod bits 14..16,
Move8Rows / Move4Rows bit 13 (MOVB2D: Move4Rows 13, Broadcast1RowTo8 12, BroadcastCol0 11), DstRow /
SrcBRow from bit 0. It takes the readings matrix/moves.py documents where the pages are open: the
corrected ShuffleTF32 mask, SrcAFmt codes 12 / 13 undefined in MOVD2A / MOVD2B, undefined Dst reading
as zero and partly written rows becoming defined with the value seen, and ApplyAddrMod's Blackhole
ExtraAddrModBit / AB2 cases unimplemented (adc.py).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
from dst_reference import bits
from hypothesis import strategies as st
from matrix_harness import (
    BF16,
    BFP2,
    BFP4,
    BFP8,
    COPRO,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    ISA,
    MATRIX,
    TF32,
    UNPACKERS,
    BFP2a,
    BFP4a,
    BFP8a,
    RefState,
    assert_matches,
    configurations,
    execute,
    mostly,
    plain_config,
    property_test,
    words,
)
from matrix_harness import check as harness_check
from matrix_harness import load as harness_load
from outcomes import RefUB, emulator_outcome

from tensixsim.tensix.semantics import Retire, Wait

# ---------------------------------------------------------------------------- reference


def RemoveLowMantissa(x: int) -> int:
    Sign = x & (1 << 18)
    ManHi = x & (0x7F << 11)
    Exp = x & 0xFF
    return (Sign >> 3) | (ManHi >> 3) | Exp


def RemoveHighExponent(x: int) -> int:
    Sign = x & (1 << 18)
    Man = x & (0x3FF << 8)
    ExpLo = x & 0x1F
    return (Sign >> 3) | (Man >> 3) | ExpLo


def ShuffleBF16(x: int) -> int:
    x &= 0xFFFF  # uint16_t parameter
    return ((x & 0xFF00) << 3) | (x & 0xFF)


def ShuffleFP16(x: int) -> int:
    x &= 0xFFFF
    return ((x & 0xFFE0) << 3) | (x & 0x1F)


def ShuffleTF32(x: int) -> int:
    x &= 0x7FFFF  # uint19_t parameter
    SignHiMan = x & 0x7F800  # the page prints 0x3fc000: see matrix/moves.py
    Exp = x & 0x0007F8
    LoMan = x & 0x000007
    return SignHiMan | (LoMan << 8) | (Exp >> 3)


class Ref(RefState):
    """The pages' moves over the shared reference state."""

    # ------------------------------------------------------------------ Src -> Dst
    def _decode_to_dst(self, word: int, FromB: bool) -> tuple[int, ...]:
        """(UseDst32bLo, SrcRow, AddrMod, DstRow, then MOVB2D: Move4Rows, Broadcast1RowTo8,
        BroadcastCol0; MOVA2D: Move8Rows)."""
        UseDst32bLo, SrcRow, AddrMod = bits(word, 23, 23), bits(word, 17, 22), bits(word, 14, 16)
        if FromB:
            Move4Rows, Broadcast1RowTo8, BroadcastCol0 = (
                bits(word, 13, 13),
                bits(word, 12, 12),
                bits(word, 11, 11),
            )
            DstRow = bits(word, 0, 9)
            if bits(word, 10, 10):
                raise RefUB
            return UseDst32bLo, SrcRow, AddrMod, DstRow, Move4Rows, Broadcast1RowTo8, BroadcastCol0
        Move8Rows, DstRow = bits(word, 13, 13), bits(word, 0, 9)
        if bits(word, 12, 12) or bits(word, 10, 11):
            raise RefUB
        return UseDst32bLo, SrcRow, AddrMod, DstRow, Move8Rows

    def _to_dst(self, word: int, FromB: bool) -> None:
        if FromB:
            UseDst32bLo, SrcRow, AddrMod, DstRow, Move4Rows, Broadcast1RowTo8, BroadcastCol0 = (
                self._decode_to_dst(word, FromB)
            )
        else:
            UseDst32bLo, SrcRow, AddrMod, DstRow, Move8Rows = self._decode_to_dst(word, FromB)
        Client = self.SrcBClient[self.SrcBBank] if FromB else self.SrcAClient[self.SrcABank]
        if Client != MATRIX:
            self.waited = True
            return
        c = self.c
        SrcAFmt = self.SrcAFmt()
        if c["FP16A_FORCE_Enable"]:
            Use8bExponent = False
        elif SrcAFmt in {FP32, TF32, BF16, BFP8, BFP4, BFP2, INT32, INT16}:
            Use8bExponent = True
        else:
            Use8bExponent = False
        FlushDenormals = not c["Zero_Flag_disabled_src"]

        DstRow += c["MATH_Offset"]
        DstRow += self.RWC["Dst"] + c["DEST_REGW_BASE"]
        SrcRow += self.RWC["SrcB" if FromB else "SrcA"]
        if FromB and Broadcast1RowTo8:
            NumRows, DstRow, SrcRow = 8, DstRow & 0x3F8, SrcRow & 0x3F
        elif FromB and Move4Rows:
            NumRows, DstRow, SrcRow = 4, DstRow & 0x3FC, SrcRow & 0x3C
        elif not FromB and Move8Rows:
            NumRows, DstRow, SrcRow = 8, DstRow & 0x3F8, SrcRow & 0x38
        else:
            NumRows, DstRow, SrcRow = 1, DstRow & 0x3FF, SrcRow & 0x3F

        writes = []  # (Row, Col, Val, Wide): the pseudocode's Dst writes, applied after ApplyAddrMod
        for _ in range(NumRows):
            Wide = SrcAFmt == TF32 or bool(UseDst32bLo)
            for Column in range(16):
                if self.Blocked[Column]:
                    continue
                if FromB:
                    SrcVal = self.SrcB[self.SrcBBank][SrcRow][0 if BroadcastCol0 else Column]
                else:
                    SrcVal = self.SrcA[self.SrcABank][SrcRow][Column]
                if FlushDenormals and not (SrcVal & 0xFF):
                    SrcVal = 0
                Val16b = RemoveLowMantissa(SrcVal) if Use8bExponent else RemoveHighExponent(SrcVal)
                if SrcAFmt == TF32:
                    LowMantissa = ((SrcVal >> 8) & 7) << 13
                    if UseDst32bLo:
                        LowMantissa |= Val16b
                    writes.append((DstRow, Column, (Val16b << 16) | LowMantissa, True))
                elif UseDst32bLo:
                    writes.append(
                        (DstRow, Column, (self.Dst32Read(DstRow, Column) & 0xFFFF0000) | Val16b, True)
                    )
                else:
                    writes.append((DstRow, Column, Val16b, False))
            writes.append((DstRow, None, None, Wide))
            DstRow += 1
            if not (FromB and Broadcast1RowTo8):
                SrcRow += 1
        self.ApplyAddrMod(AddrMod)
        defined = set()
        for Row, _, _, Wide in writes:
            if Row not in defined:
                defined.add(Row)
                (self.Dst32Define if Wide else self.Dst16Define)(Row)
        for Row, Column, Val, Wide in writes:
            if Column is not None:
                (self.Dst32Write if Wide else self.Dst16Write)(Row, Column, Val)

    def MOVA2D(self, word: int) -> None:
        self._to_dst(word, FromB=False)

    def MOVB2D(self, word: int) -> None:
        self._to_dst(word, FromB=True)

    # ------------------------------------------------------------------ Dst -> Src
    def _decode_from_dst(self, word: int) -> tuple[int, int, int, int, int]:
        """(UseDst32bLo, SrcRow, AddrMod, Move4Rows, DstRow)."""
        UseDst32bLo, SrcRow, AddrMod = bits(word, 23, 23), bits(word, 17, 22), bits(word, 14, 16)
        Move4Rows, DstRow = bits(word, 13, 13), bits(word, 0, 9)
        if bits(word, 12, 12) or bits(word, 10, 11):
            raise RefUB
        return UseDst32bLo, SrcRow, AddrMod, Move4Rows, DstRow

    def _from_dst(self, word: int, ToB: bool) -> None:
        UseDst32bLo, SrcRow, AddrMod, Move4Rows, DstRow = self._decode_from_dst(word)
        c = self.c
        if c["FP16A_FORCE_Enable"]:
            UseDst32b, Style = False, FP16
        else:
            SrcAFmt = self.SrcAFmt()
            UseDst32b = bool(c["Fp32_enabled"] or c["INT8_math_enabled"])
            if SrcAFmt in {FP32, BF16, BFP8, BFP4, BFP2, INT32, INT16}:
                Style = BF16
            elif SrcAFmt in {FP16, FP8, BFP8a, BFP4a, BFP2a, INT8}:
                Style = FP16
            elif SrcAFmt == TF32:
                Style = TF32
            else:  # codes 12 / 13 name no format
                raise RefUB
        DstRow += c["MATH_Offset"]
        DstRow += self.RWC["Dst"] + c["DEST_REGW_BASE"]
        SrcRow += self.RWC["SrcB" if ToB else "SrcA"]
        if Move4Rows:
            NumRows, DstRow, SrcRow = 4, DstRow & 0x3FC, SrcRow & 0x3C
        else:
            NumRows, DstRow, SrcRow = 1, DstRow & 0x3FF, SrcRow & 0x3F
        writes = []
        for _ in range(NumRows):
            for Column in range(16):
                if self.Blocked[Column]:
                    continue
                if UseDst32b:
                    DstVal = self.Dst32Read(DstRow, Column)
                    if UseDst32bLo:
                        DstVal = ((DstVal << 16) | (DstVal & 0xFFFF)) & 0xFFFFFFFF
                    if Style == BF16:
                        SrcVal = ShuffleBF16(DstVal >> 16)
                    elif Style == FP16:
                        SrcVal = ShuffleFP16(DstVal >> 16)
                    elif not UseDst32bLo:
                        SrcVal = ShuffleTF32(DstVal >> 13)
                    else:
                        SrcVal = DstVal & 0x1FFF
                else:
                    DstVal = self.Dst16Read(DstRow, Column)
                    if UseDst32bLo:
                        raise RefUB
                    if Style == BF16:
                        SrcVal = ShuffleBF16(DstVal)
                    elif Style == FP16:
                        SrcVal = ShuffleFP16(DstVal)
                    else:
                        raise RefUB
                writes.append((SrcRow, Column, SrcVal))
            DstRow += 1
            SrcRow += 1
        self.ApplyAddrMod(AddrMod)
        Bank, File = (self.SrcBBank, self.SrcB) if ToB else (self.SrcABank, self.SrcA)
        for Row, Column, Val in writes:
            File[Bank][Row][Column] = Val

    def MOVD2A(self, word: int) -> None:
        self._from_dst(word, ToB=False)

    def MOVD2B(self, word: int) -> None:
        self._from_dst(word, ToB=True)

    def _decode_movb2a(self, word: int) -> tuple[int, int, int, int]:
        """(SrcARow, AddrMod, Move4Rows, SrcBRow)."""
        SrcARow, AddrMod, Move4Rows, SrcBRow = (
            bits(word, 17, 22),
            bits(word, 14, 16),
            bits(word, 13, 13),
            bits(word, 0, 5),
        )
        if bits(word, 23, 23) or bits(word, 12, 12) or bits(word, 6, 11):
            raise RefUB
        return SrcARow, AddrMod, Move4Rows, SrcBRow

    def MOVB2A(self, word: int) -> None:
        SrcARow, AddrMod, Move4Rows, SrcBRow = self._decode_movb2a(word)
        if self.SrcBClient[self.SrcBBank] != MATRIX:
            self.waited = True
            return
        FlushDenormals = not self.c["Zero_Flag_disabled_src"]
        SrcARow += self.RWC["SrcA"]
        SrcBRow += self.RWC["SrcB"]
        if Move4Rows:
            NumRows, SrcARow, SrcBRow = 4, SrcARow & 0x3C, SrcBRow & 0x3C
        else:
            NumRows, SrcARow, SrcBRow = 1, SrcARow & 0x3F, SrcBRow & 0x3F
        writes = []
        for _ in range(NumRows):
            for Column in range(16):
                if self.Blocked[Column]:
                    continue
                SrcVal = self.SrcB[self.SrcBBank][SrcBRow][Column]
                if FlushDenormals and not (SrcVal & 0xFF):
                    SrcVal = 0
                writes.append((SrcARow, Column, SrcVal))
            SrcARow += 1
            SrcBRow += 1
        self.ApplyAddrMod(AddrMod)
        for Row, Column, Val in writes:
            self.SrcA[self.SrcABank][Row][Column] = Val


# ---------------------------------------------------------------------------- set-up


def load(seed: int, config: dict, thread: int) -> Ref:
    """Random register contents and the configuration given, in the coprocessor."""
    return harness_load(seed, config, thread, Ref)


def check(name: str, word: int, seed: int, config: dict, thread: int) -> str:
    return harness_check(name, word, seed, config, thread, Ref)


ROW_WORDS = {"instr_mod": mostly(st.sampled_from([0, 2]), 2), "dst": mostly(st.integers(0, 1023), 12)}
WORDS = {
    "MOVA2D": words("MOVA2D", ROW_WORDS),
    "MOVD2A": words("MOVD2A", ROW_WORDS),
    "MOVD2B": words("MOVD2B", ROW_WORDS),
    "MOVB2D": words("MOVB2D", {"dst": mostly(st.integers(0, 1023), 11)}),
    "MOVB2A": words(
        "MOVB2A",
        {
            "srca": mostly(st.integers(0, 63), 7),
            "instr_mod": mostly(st.sampled_from([0, 2]), 2),
            "srcb": mostly(st.integers(0, 63), 12),
        },
    ),
}


def _test(name: str):
    return property_test(name, WORDS[name], configurations(), check)


test_mova2d_matches_reference = _test("MOVA2D")
test_movb2d_matches_reference = _test("MOVB2D")
test_movd2a_matches_reference = _test("MOVD2A")
test_movd2b_matches_reference = _test("MOVD2B")
test_movb2a_matches_reference = _test("MOVB2A")


# ---------------------------------------------------------------------------- pinned cases


def test_mova2d_waits_until_srca_is_the_matrix_units() -> None:
    ref = load(1, plain_config(), 1)
    COPRO.regs.src_client[0, int(COPRO.regs.matrix_bank[0])] = UNPACKERS
    before = COPRO.regs.copy()
    outcome = execute(ISA.encode("MOVA2D", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0), 1)
    assert isinstance(outcome, Wait)
    assert COPRO.regs.equals(before)
    del ref


def test_tf32_round_trips_through_dst32() -> None:
    """MOVA2D's TF32 path and MOVD2A's ShuffleTF32 are inverses (the corrected mask)."""
    load(2, plain_config(REG0_SrcA=TF32, Fp32_enabled=1), 1)
    regs = COPRO.regs
    bank = int(regs.matrix_bank[0])
    regs.src_client[0, bank] = MATRIX
    original = regs.srca[bank, 0].copy()
    execute(ISA.encode("MOVA2D", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=5), 1)
    regs.srca[bank, 0] = 0
    # Later than the Dst block's four unreadable cycles after MOVA2D's write.
    assert (
        execute(ISA.encode("MOVD2A", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=5), 1, cycle=5)
        == Retire()
    )
    assert regs.srca[bank, 0].tolist() == original.tolist()


def test_movb2d_broadcasts_one_row_to_eight_and_column_zero() -> None:
    ref = load(3, plain_config(), 1)
    COPRO.regs.src_client[1, int(COPRO.regs.matrix_bank[1])] = MATRIX
    ref.SrcBClient[ref.SrcBBank] = MATRIX
    word = ISA.encode("MOVB2D", dest_32b_lo=0, src=9, addr_mode=0, movb2d_instr_mod=0b011, dst=19)
    ref.MOVB2D(word)
    assert execute(word, 1) == Retire()
    assert_matches(ref)
    rows = COPRO.regs.read16(np.arange(16, 24))
    assert (rows == rows[0, 0]).all()


def test_movd2a_tf32_from_16_bit_dst_is_undefined() -> None:
    load(4, plain_config(REG0_SrcA=TF32), 1)
    word = ISA.encode("MOVD2A", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
    assert emulator_outcome(lambda: execute(word, 1)) == "undefined"
