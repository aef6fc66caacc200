"""UNPACR (Regular, uncompressed) and UNPACR_NOP ZEROSRC / SETDVALID, from the pages' pseudocode.

Written line by line from tt-isa-documentation WormholeB0 UNPACR_Regular.md, UNPACR_NOP_ZEROSRC.md and
UNPACR_NOP_SETDVALID.md over plain Python ints and lists, with the readings tensixsim/tensix/unpack/
documents: MemoryFault for reads outside L1, UndefinedBehaviour for an X end before the X start and
for SrcA rows past the bank, undefined Dst rows becoming defined (zeros) when written, FP32ToFP16 as
flush-to-zero / saturate / truncate. No emulator code is imported.

``chip`` selects where the page's model meets a chip: :data:`WORMHOLE` is the page as written (1464 KiB
of L1, 16 datums an input row in DiscontiguousInputRows whatever the format, unpacker 1 contexts >= 2
undefined, FP8 unpacked as the high byte of FP16); :data:`BLACKHOLE` has the Blackhole readings
unpack/unit.py documents (1536 KiB, 32 datums a row for formats wider than a byte and no sub-byte datums
there, contexts >= 2, FP8 and upsampling not modelled). Upsample_rate 1 (one zero, or one skipped
position, after each datum) is modelled for Wormhole; rates 2 and 3 are not (the page's model and
Unpackers/README.md's table disagree on how many zeroes they insert).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

from outcomes import RefFault, RefUB, RefUnimplemented, RefWait

L1_SIZE = 1536 * 1024
BLACKHOLE = {
    "L1": L1_SIZE, "RowWidthWide": 32, "SubByteRows": False, "HighContext": RefUnimplemented, "FP8": False,
    "Upsample1": False,
}  # fmt: skip
WORMHOLE = {
    "L1": 1464 * 1024, "RowWidthWide": 16, "SubByteRows": True, "HighContext": RefUB, "FP8": True,
    "Upsample1": True,
}  # fmt: skip
FP32, FP16, BFP8a, BFP4a, TF32, BF16, BFP8, BFP4 = range(8)
INT32, INT16, FP8, BFP2a, INT8, BFP2 = 8, 9, 10, 11, 14, 15
KNOWN = {FP32, FP16, BFP8a, BFP4a, TF32, BF16, BFP8, BFP4, INT32, INT16, FP8, BFP2a, INT8, BFP2}
BFP = {BFP8, BFP8a, BFP4, BFP4a, BFP2, BFP2a}


def DatumSize16(fmt: int) -> int:
    """DatumSizeBytes * 16."""
    if fmt in (BFP2, BFP2a):
        return 4
    if fmt in (BFP4, BFP4a):
        return 8
    if fmt in (BFP8, BFP8a, FP8, INT8):
        return 16
    if fmt in (FP16, BF16, INT16):
        return 32
    return 64


def ReadL1Bits(L1: bytes, Addr16: int, Size16: int, Size: int = L1_SIZE) -> int:
    if Addr16 < 0 or (Addr16 + Size16 + 15) // 16 > Size:
        raise RefFault
    BitAddr = Addr16 // 2
    Result = 0
    for i in range(Size16 // 2):
        InByte = L1[(BitAddr + i) // 8]
        Result |= ((InByte >> ((BitAddr + i) & 7)) & 1) << i
    return Result


def WriteDstBF16(x: int) -> int:
    return (x & 0x8000) | ((x & 0x007F) << 8) | ((x & 0x7F80) >> 7)


def WriteDstFP16(x: int) -> int:
    return (x & 0x8000) | ((x & 0x03FF) << 5) | ((x & 0x7C00) >> 10)


def WriteDstFP32(x: int) -> int:
    return (WriteDstBF16(x >> 16) << 16) | (x & 0xFFFF)


def WriteSrcTF32(x: int) -> int:
    return (x & 0x40000) | ((x & 0x3FF) << 8) | ((x & 0x3FC00) >> 10)


def WriteSrcBF16(x: int) -> int:
    return WriteSrcTF32(x << 3)


def WriteSrcFP16(x: int) -> int:
    return WriteSrcTF32(((x & 0x8000) << 3) | (x & 0x7FFF))


def FP32ToFP16(x: int) -> int:
    Sign = (x >> 16) & 0x8000
    Exp = ((x >> 23) & 0xFF) - 112
    if Exp <= 0:
        return Sign
    if Exp > 31:
        return Sign | 0x7FFF
    return Sign | (Exp << 10) | ((x >> 13) & 0x3FF)


def LeadingZeros8(x: int) -> int:
    return 8 - x.bit_length()


def BFP8ToBF16(DatumBits: int, ExpBits: int) -> int:
    DatumBits &= 0xFF
    Sign, Mag = DatumBits >> 7, (DatumBits << 1) & 0xFF
    if Mag == 0:
        return 0xFF80 if Sign else 0
    LZ = LeadingZeros8(Mag)
    Mag = (Mag << LZ) & 0xFF
    ExpBits = (ExpBits - LZ) & 0xFF
    return (Sign << 15) | (ExpBits << 7) | (Mag & 0x7E)


def BFP8aToFP16(DatumBits: int, ExpBits: int) -> int:
    DatumBits &= 0xFF
    Sign, Mag = DatumBits >> 7, (DatumBits << 1) & 0xFF
    if Mag == 0:
        return 0xFC00 if Sign else 0
    LZ = LeadingZeros8(Mag)
    Mag = (Mag << LZ) & 0xFF
    ExpBits = (ExpBits - LZ) & 0xFF
    if ExpBits & 0xE0:
        raise RefUB
    return (Sign << 15) | (ExpBits << 10) | ((Mag & 0x7E) << 3)


def FormatConversion(In: int, Out: int, DatumBits: int, ExpBits: int, Unsigned: int, ToDst: bool) -> int:
    if In == FP32:
        if Out == FP32:
            pass
        elif Out == TF32:
            return WriteDstFP32(DatumBits) if ToDst else WriteSrcTF32(DatumBits >> 13)
        elif Out == BF16:
            if not DatumBits & 0x7F800000:
                DatumBits &= 0x80000000
            DatumBits >>= 16
            In = BF16
        elif Out == FP16:
            DatumBits = FP32ToFP16(DatumBits)
            In = FP16
        else:
            raise RefUB
    else:
        if In != Out:
            raise RefUB
        if In == FP8:
            DatumBits, In = DatumBits << 8, FP16
        elif In == BFP8:
            DatumBits, In = BFP8ToBF16(DatumBits, ExpBits), BF16
        elif In == BFP4:
            DatumBits, In = BFP8ToBF16(DatumBits << 4, ExpBits), BF16
        elif In == BFP2:
            DatumBits, In = BFP8ToBF16(DatumBits << 6, ExpBits), BF16
        elif In == BFP8a:
            DatumBits, In = BFP8aToFP16(DatumBits, ExpBits), FP16
        elif In == BFP4a:
            DatumBits, In = BFP8aToFP16(DatumBits << 4, ExpBits), FP16
        elif In == BFP2a:
            DatumBits, In = BFP8aToFP16(DatumBits << 6, ExpBits), FP16
        elif In == INT8:
            Sign = 0 if Unsigned else DatumBits & 0x80
            DatumBits -= Sign
            if DatumBits:
                DatumBits |= 16 << 10
            DatumBits |= Sign << 8
            In = FP16
        elif In == TF32:
            if ToDst:
                return WriteDstFP32(DatumBits)
            raise RefUB
    if In == INT16:
        return DatumBits if ToDst else ((DatumBits & 0xFF00) << 3) | (DatumBits & 0xFF)
    if In in (INT32, FP32):
        if ToDst:
            return WriteDstFP32(DatumBits)
        raise RefUB
    if In == BF16:
        return WriteDstBF16(DatumBits) if ToDst else WriteSrcBF16(DatumBits)
    return WriteDstFP16(DatumBits) if ToDst else WriteSrcFP16(DatumBits)


def Adj32(Row: int) -> int:
    Row &= 0x3FF
    return ((Row & 0x1F8) << 1) | (Row & 0x207)


def unpacr_regular(s: dict, L1: bytes, thread: int, unit: int, op: dict, chip: dict = BLACKHOLE) -> None:
    """Apply UNPACR (Regular) to state ``s`` (mutated only when it returns normally: the caller copies).

    ``s``: ADC [thread][unit][channel][dim], SrcA/SrcB [bank][row][col], Client [file][bank],
    UnpackBank [file], SrcRow [file][thread], Dst [1024][16], DstValid [1024], Counter [unit][thread],
    and ``cfg`` (the configuration, by concept). ``op``: the operands by page name.
    """
    c = s["cfg"][unit]
    MultiContextMode = op["MultiContextMode"]
    if MultiContextMode:
        WhichContext = s["Counter"][unit][thread] if op["UseContextCounter"] else op["ContextNumber"]
        WhichContext = (WhichContext + c["CfgContextOffset"][thread]) & 7
        WhichADC = op["ContextADC"]
        if WhichADC == 3:
            raise RefUB
        if unit == 1 and WhichContext >= 2:
            raise chip["HighContext"]
    else:
        WhichContext, WhichADC = 0, thread
    if op["RowSearch"]:
        raise RefUnimplemented
    IsUncompressed = (
        c["Disable_zero_compress_cntx"][WhichContext] if MultiContextMode else c["IsUncompressed"]
    )
    DiscontiguousInputRows = c["Tileize_mode"]
    if not IsUncompressed:  # decompression is not modelled; with Tileize_mode the page says undefined
        raise RefUB if DiscontiguousInputRows else RefUnimplemented
    XDim = c["Tile_x_dim_cntx"][WhichContext & 3] if MultiContextMode and unit == 0 else c["XDim"]
    YDim, ZDim, WDim = c["YDim"], c["ZDim"] or 1, c["WDim"] or 1
    if MultiContextMode and c["Ovrd_data_format"]:
        In, Out = c["Unpack_data_format_cntx"][WhichContext], c["Unpack_out_data_format_cntx"][WhichContext]
    else:
        In, Out = c["InDataFormat"], c["Out_data_format"]
    if In not in KNOWN or Out not in KNOWN:
        raise RefUB
    if FP8 in (In, Out) and not chip["FP8"]:
        raise RefUnimplemented
    Size16 = DatumSize16(In)
    if MultiContextMode and WhichContext != 0:
        InAddr = c["Base_cntx"][WhichContext] + (c["Offset_cntx"][WhichContext & 3] & 0xFFFF)
    else:
        InAddr = c["Base_cntx"][0] + (c["Offset_cntx"][0] & 0xFFFF)
    InAddr = (InAddr + 1 + c["DigestSize"]) * 16 * 16
    InAddr_Exponents = 0
    if In in BFP and not c["Force_shared_exp"]:
        InAddr_Exponents = InAddr
        if In in (BFP8, BFP8a) or not c["NoBFPExpSection"]:
            NumExponents = -(-(XDim * YDim * ZDim * WDim) // 16)
            InAddr += -(-NumExponents // 16) * 16 * 16
    ADC = s["ADC"]
    XY, ZW = ADC[WhichADC][unit][0], ADC[thread][unit][0]
    XPos, YPos = XY[0], XY[1]
    XEnd = ADC[WhichADC][unit][1][0] + 1
    if XEnd < XPos:
        raise RefUB
    FirstDatum = ((ZW[3] * ZDim + ZW[2]) * YDim + YPos) * XDim + XPos
    InputNumDatums = XEnd - XPos
    InAddr_Exponents += FirstDatum
    InAddr_Datums = InAddr + FirstDatum * Size16

    def WrapAddr(a: int) -> int:
        return a - c["Unpack_fifo_size"] * 256 if a > c["Unpack_limit_address"] * 256 else a

    InAddr_Exponents, InAddr_Datums = WrapAddr(InAddr_Exponents), WrapAddr(InAddr_Datums)
    if DiscontiguousInputRows:
        if Size16 < 16 and not chip["SubByteRows"]:
            raise RefUB  # ttsim: Tileize_mode needs whole-byte datums
        RowStride = (
            c["Shift_amount_cntx"][0] << 4 | c["Shift_amount_cntx"][1] << 8 | c["Shift_amount_cntx"][2] << 12
        ) * 16
        RowWidth = chip["RowWidthWide"] if Size16 > 16 else 16  # Blackhole (ttsim): 32; the page: 16
    else:
        RowStride = Size16 * 16
        RowWidth = 16
    if unit == 0:
        UnpackToDst = c["Unpack_if_sel_cntx"][WhichContext] if MultiContextMode else c["Unpack_If_Sel"]
        Transpose = c["Haloize_mode"]
    else:
        UnpackToDst = Transpose = 0
    Ch1 = ADC[thread][unit][1]
    OutAddr = c["OutBase"] + Ch1[1] * c["Ystride"] + Ch1[2] * c["Zstride"] + Ch1[3] * c["Wstride"]
    if Out in (FP32, TF32, INT32):
        if OutAddr & 3:
            raise RefUB
        OutAddr >>= 2
    elif Out in (FP16, BF16, INT16):
        if OutAddr & 1:
            raise RefUB
        OutAddr >>= 1
    if MultiContextMode and unit == 0:
        CtxOutAddr = c["Dest_cntx"][WhichContext & 3]
        OutAddr = OutAddr + CtxOutAddr if UnpackToDst or c["add_dest_addr_cntr"] else CtxOutAddr
    UpsampleZeroes = (1 << c["Upsample_rate"]) - 1
    UpsampleInterleave = c.get("Upsample_and_interleave", 0)
    if UpsampleZeroes:
        if DiscontiguousInputRows:
            raise RefUB
        if UpsampleZeroes != 1 or not chip["Upsample1"]:
            raise RefUnimplemented  # rates 2 and 3: the page's model and the README's table disagree
    ColShift = 0 if DiscontiguousInputRows or unit == 1 else c["Shift_amount_cntx"][WhichContext & 3]
    if (Transpose or DiscontiguousInputRows) and InAddr_Datums % 256:
        raise RefUB
    if UnpackToDst and (ColShift or Transpose):
        raise RefUB
    Bank = s["UnpackBank"][unit]
    if InputNumDatums and s["Client"][unit][Bank] != 1:
        raise RefWait
    Src = s["SrcB" if unit else "SrcA"][Bank]
    SrcRow = s["SrcRow"][unit][thread]
    for i in range(InputNumDatums):
        DatumBits = ReadL1Bits(L1, InAddr_Datums, Size16, chip["L1"])
        InAddr_Datums += Size16
        if (i + 1) % RowWidth == 0:
            InAddr_Datums = WrapAddr(InAddr_Datums - Size16 * RowWidth + RowStride)
        ExpBits = 0
        if In in BFP:
            if c["Force_shared_exp"]:
                ExpBits = c["shared_exp"]
            else:
                ExpBits = ReadL1Bits(L1, InAddr_Exponents - InAddr_Exponents % 16, 16, chip["L1"])
                InAddr_Exponents += 1
                if InAddr_Exponents % 256 == 0:
                    InAddr_Exponents = WrapAddr(InAddr_Exponents)
        Datum = FormatConversion(In, Out, DatumBits, ExpBits, c["Unsigned"], bool(UnpackToDst))
        if op["AllDatumsAreZero"]:
            Datum = 0
        for k in range(UpsampleZeroes + 1):
            if k:
                Datum = 0
            Row, Col = OutAddr // 16, OutAddr & 15
            OutAddr += 1
            if not (UpsampleInterleave and k != 0):
                Place(s, thread, unit, Out, Src, SrcRow, ColShift, Transpose, UnpackToDst, Row, Col, Datum)
    if MultiContextMode and op["UseContextCounter"]:
        Inc = (WhichContext + 1) & 7
        if Inc >= 1 << c["Context_count"]:
            Inc = 0
        s["Counter"][unit][thread] = Inc
    for i in range(3):
        if i in (thread, WhichADC):
            for ch, (yi, zi) in enumerate(((op["Ch0YInc"], op["Ch0ZInc"]), (op["Ch1YInc"], op["Ch1ZInc"]))):
                ADC[i][unit][ch][1] = (ADC[i][unit][ch][1] + yi) & 0x1FFF
                ADC[i][unit][ch][2] = (ADC[i][unit][ch][2] + zi) & 0xFF
    SrcRowBase = c["SRC_SET_Base"][thread] << 4
    if op["FlipSrc"]:
        s["Client"][unit][Bank] = 0
        s["UnpackBank"][unit] ^= 1
        s["SrcRow"][unit][thread] = SrcRowBase
    elif c["Unpack_Src_Reg_Set_Upd"]:
        s["SrcRow"][unit][thread] += 16 + SrcRowBase


def Place(s: dict, thread: int, unit: int, Out: int, Src: list, SrcRow: int, ColShift: int, Transpose: int,
          UnpackToDst: int, Row: int, Col: int, Datum: int) -> None:  # fmt: skip
    """The page's write of one datum to SrcB, SrcA or Dst (its ``continue`` is a return)."""
    if unit == 1:
        Src[(Row + SrcRow) & 0x3F][Col] = Datum
    elif not UnpackToDst:
        if Row < 4 or Col < ColShift:
            return
        Row, Col = Row - 4, Col - ColShift
        if s["SetOvrdWithAddr"][thread]:
            if Row >= 64:
                raise RefUB
        else:
            if Row >= 16:
                raise RefUB
            Row += SrcRow
            if Row >= 64:
                raise RefUB
        if Transpose:
            RowLowBits = Row & 0xF
            RowLowBits, Col = Col, RowLowBits
            Row = (Row & ~0xF) | RowLowBits
        Src[Row][Col] = Datum
    else:
        Row = (Row - 4) & (15 if s["SetOvrdWithAddr"][thread] else 0x3FF)
        if Out in (FP32, TF32, INT32):
            Parts = [(Adj32(Row), Datum >> 16), (Adj32(Row) + 8, Datum & 0xFFFF)]
        else:
            Parts = [(Row, Datum)]
        for R, V in Parts:
            if not s["DstValid"][R]:
                s["Dst"][R] = [0] * 16
                s["DstValid"][R] = True
            s["Dst"][R][Col] = V


def unpacr_nop_zerosrc(s: dict, thread: int, unit: int, op: dict) -> None:
    """UNPACR_NOP_ZEROSRC.md, then SETDVALID if ``op["SetDvalid"]``."""
    UnpackBank = s["UnpackBank"][unit]
    WaitBank = UnpackBank if op["WaitLikeUnpacr"] else s["MatrixBank"][unit]
    if s["Client"][unit][WaitBank] != 1:
        raise RefWait
    for Bank in range(2):
        if op["BothBanks"] or Bank == UnpackBank:
            ClearVal = (1 << 19) - 1 if unit == 0 and op["NegativeInfSrcA"] else 0
            s["SrcB" if unit else "SrcA"][Bank] = [[ClearVal] * 16 for _ in range(64)]
    if op["SetDvalid"]:
        setdvalid(s, thread, unit)


def setdvalid(s: dict, thread: int, unit: int) -> None:
    """UNPACR_NOP_SETDVALID.md."""
    s["Client"][unit][s["UnpackBank"][unit]] = 0
    s["UnpackBank"][unit] ^= 1
    s["SrcRow"][unit][thread] = s["cfg"][unit]["SRC_SET_Base"][thread] << 4
