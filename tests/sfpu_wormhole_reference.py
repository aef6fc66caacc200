"""A reference for Wormhole's vector unit, from the WormholeB0 pages, over Python ints.

The pages are the jasondavies fork of tt-isa-documentation (WormholeB0 SFP*.md, Dst.md, RWCs.md and
Miscellaneous/FMA/fma.c). ``WormholeRef`` keeps Blackhole's reference methods (sfpu_reference.py,
sfpu_float_reference.py, sfpu_lanes_reference.py) for the instructions in ``SAME_PAGE``, whose
WormholeB0 functional model and encoding are the BlackholeA0 ones word for word, and has its own method
for every other one, written from the Wormhole page with the operands cut out of the word by
Wormhole's encoding diagrams. ``fma_wh`` transcribes ``fma_model_wh`` with its C integer widths spelled
out. ``WormholeDst`` is Dst (Dst.md: no row remap or swizzle), the pipe's RWCs and ApplyAddrMod
(RWCs.md: a two-bit AddrMod, plus 4 under ExtraAddrModBit or ADDR_MOD_SET_Base) and the configuration
SFPLOAD / SFPSTORE read.

Outcome boundary as in sfpu_reference.py: RefUB where the pages say undefined, where an operand the
syntax fixes at 0 is not, or where a mode bit Blackhole gives a meaning is set (the emulator's reading:
Wormhole has no such mode), and where SFPSHFT2's hardware bug reads a value no earlier instruction set.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806, SIM108

from __future__ import annotations

from dst_reference import bits
from outcomes import RefUB
from sfpu_float_reference import BF16ToFP32, Lut8ToFp32, Lut16ToFp32, SfpuFloatRef, copysignf, fabsf, less
from sfpu_lanes_reference import LanesRef
from sfpu_reference import (
    FMT_BF16,
    FMT_FP16,
    FMT_FP32,
    FMT_HI16,
    FMT_HI16_ONLY,
    FMT_INT8,
    FMT_INT8_COMP,
    FMT_INT16,
    FMT_INT32,
    FMT_INT32_ALL,
    FMT_INT32_SM,
    FMT_LO16,
    FMT_LO16_ONLY,
    FMT_SRCB,
    FMT_UINT16,
    FMT_ZERO,
    M32,
    BF16Shuffle,
    FP16Shuffle,
    FP32Shuffle,
    SfpuRef,
    ToBF16,
    ToFP16,
    UnshuffleBF16,
    UnshuffleFP32,
    fields,
    sext,
    zero,
)

# WormholeB0 pages identical to the BlackholeA0 ones (functional model and encoding).
SAME_PAGE = frozenset(
    {
        "SFPABS",
        "SFPCOMPC",
        "SFPCONFIG",
        "SFPDIVP2",
        "SFPENCC",
        "SFPEXEXP",
        "SFPEXMAN",
        "SFPIADD",
        "SFPLOADI",
        "SFPLZ",
        "SFPMOV",
        "SFPNOP",
        "SFPNOT",
        "SFPSETCC",
        "SFPSETEXP",
        "SFPSETMAN",
        "SFPSETSGN",
        "SFPSWAP",  # the pages differ only in a caution about SFPLOADMACRO
        "SFPTRANSP",
        "SFPXOR",
    }
)


def clz32(v: int) -> int:
    return 32 - v.bit_length()


def fma_wh(x: int, y: int, z: int) -> int:
    """fma.c ``fma_model_wh`` (uint32_t / uint64_t arithmetic masked where it can wrap)."""

    def unpack(v: int) -> tuple[int, int]:
        e = (v >> 23) & 255
        return e, 0 if e == 0 else (v & 0x7FFFFF) ^ 0x800000

    x_e, x_m = unpack(x)
    y_e, y_m = unpack(y)
    z_e, z_m = unpack(z)
    z_sign = z & 0x80000000
    p_sign = (x ^ y) & 0x80000000
    p_m = x_m * y_m
    p_e = x_e + y_e - 23 - 127
    p_m <<= 3
    z_m <<= 3
    p_m = (p_m >> 23) | int((p_m & 0x7FFFFF) != 0)
    p_e += 23
    nan_result = 0
    if x_e == 255 or y_e == 255 or p_e >= 255 or z_e == 255:
        product_inf = x_e == 255 or y_e == 255 or p_e >= 255
        if (
            (x_e == 255 and (x_m != 0x800000 or y_m == 0))
            or (y_e == 255 and (y_m != 0x800000 or x_m == 0))
            or (z_e == 255 and z_m == 0x4000000 and product_inf and z_sign != p_sign)
        ):
            nan_result = p_sign | 0x7F800001
        elif z_e == 255 and z_m != 0x4000000:
            nan_result = z_sign | 0x7F800001
        elif z_e == 255:
            return z
        else:
            return p_sign | 0x7F800000
        if p_e > 255:
            p_e = 255
    if p_m == 0 or p_e < 0:
        if nan_result:
            p_m, p_e = 0, 0
        else:
            return z if z_m else 0

    def semi_sticky_shift(var: int, s: int) -> int:
        if s >= 64:
            return 0
        out = var >> s
        if out:
            out |= int(((out << s) & ((1 << 64) - 1)) != var)
        return out

    r_e = p_e if p_e > z_e else z_e
    if p_e < r_e:
        p_m = semi_sticky_shift(p_m, r_e - p_e)
    if z_e < r_e:
        z_m = semi_sticky_shift(z_m, r_e - z_e)
    r_sign = p_sign if p_m >= z_m else z_sign
    if z_sign != r_sign:
        z_m = ~z_m & M32
    if p_sign != r_sign:
        p_m = ~p_m & M32
    r_m = (z_m + p_m + int(p_sign != z_sign)) & M32
    if r_m == 0:
        return nan_result
    n = 5 - clz32(r_m)
    r_e += n
    if r_e >= 255:
        return nan_result if nan_result else r_sign | 0x7F800000
    if r_e < 0:
        return nan_result
    if n <= 0:
        r_m = (r_m << -n) & M32
    else:
        r_m = (r_m >> n) | (r_m & 1)
    r = ((r_e << 23) + ((r_m >> 3) & 0x7FFFFF)) & M32
    r += int(((r_m & 7) + (r & 1)) > 4)
    if not (r >> 23):
        return nan_result
    return (nan_result if nan_result else r_sign) | r


# ------------------------------------------------------------------------------ Dst, RWCs, configuration

AB_FIELDS = {"SrcAIncr": 6, "SrcACR": 1, "SrcAClear": 1, "SrcBIncr": 6, "SrcBCR": 1, "SrcBClear": 1}
DST_FIELDS = {
    "DestIncr": 10,
    "DestCR": 1,
    "DestClear": 1,
    "DestCToCR": 1,
    "FidelityIncr": 2,
    "FidelityClear": 1,
}
BIAS_FIELDS = {"BiasIncr": 4, "BiasClear": 1}
RWC_NAMES = ("SrcA", "SrcA_Cr", "SrcB", "SrcB_Cr", "Dst", "Dst_Cr", "FidelityPhase", "ExtraAddrModBit")
RWC_WIDTHS = {"SrcA": 6, "SrcA_Cr": 6, "SrcB": 6, "SrcB_Cr": 6, "Dst": 10, "Dst_Cr": 10}
RWC_WIDTHS |= {"FidelityPhase": 2, "ExtraAddrModBit": 1}
BF16_SRCB_FORMATS = {0, 4, 5, 6, 7, 15, 8, 9}  # FP32, TF32, BF16, BFP8, BFP4, BFP2, INT32, INT16


class WormholeDst:
    """Dst (DstBits, its undefined rows), the pipe's RWCs and the configuration (a dict: MATH_Offset,
    DEST_REGW_BASE, ADDR_MOD_SET_Base, addr_mods, SFPU_Fp32_enabled, SrcB_override, SrcB_val,
    REG1_SrcB)."""

    def __init__(self, dst_bits: list[list[int]], undefined: set[int], rwc: dict, config: dict):
        self.DstBits = [row[:] for row in dst_bits]
        self.Undefined = set(undefined)
        self.RWC = dict(rwc)
        self.c = config

    @staticmethod
    def AdjRow(Row: int) -> int:
        return ((Row & 0x1F8) << 1) | (Row & 0x207)

    def Valid(self, Row: int, wide: bool) -> bool:
        if wide:
            a = self.AdjRow(Row)
            return a not in self.Undefined and a + 8 not in self.Undefined
        return Row not in self.Undefined

    def Dst16b(self, Row: int, Col: int) -> int:
        return self.DstBits[Row][Col]

    def Dst32b(self, Row: int, Col: int) -> int:
        a = self.AdjRow(Row)
        return (self.DstBits[a][Col] << 16) | self.DstBits[a + 8][Col]

    def Write16(self, Row: int, Col: int, Val: int) -> None:
        self.DstBits[Row][Col] = Val & 0xFFFF

    def Write32(self, Row: int, Col: int, Val: int) -> None:
        a = self.AdjRow(Row)
        self.DstBits[a][Col] = (Val >> 16) & 0xFFFF
        self.DstBits[a + 8][Col] = Val & 0xFFFF

    def ApplyPartialAddrMod(self, AddrMod: int) -> None:
        """RWCs.md ``ApplyAddrMod(AddrMod, /* UpdateFidelityPhase = */ false)``."""
        RWC = self.RWC
        Index = AddrMod + (4 if RWC["ExtraAddrModBit"] or self.c["ADDR_MOD_SET_Base"] else 0)
        m = self.c["addr_mods"][Index]
        if m["SrcAClear"]:
            RWC["SrcA"] = RWC["SrcA_Cr"] = 0
        elif m["SrcACR"]:
            RWC["SrcA_Cr"] += m["SrcAIncr"]
            RWC["SrcA"] = RWC["SrcA_Cr"]
        else:
            RWC["SrcA"] += m["SrcAIncr"]
        if m["SrcBClear"]:
            RWC["SrcB"] = RWC["SrcB_Cr"] = 0
        elif m["SrcBCR"]:
            RWC["SrcB_Cr"] += m["SrcBIncr"]
            RWC["SrcB"] = RWC["SrcB_Cr"]
        else:
            RWC["SrcB"] += m["SrcBIncr"]
        if m["DestClear"]:
            RWC["Dst"] = RWC["Dst_Cr"] = 0
        elif m["DestCToCR"]:
            RWC["Dst"] += m["DestIncr"]
            RWC["Dst_Cr"] = RWC["Dst"]
        elif m["DestCR"]:
            RWC["Dst_Cr"] += m["DestIncr"]
            RWC["Dst"] = RWC["Dst_Cr"]
        else:
            RWC["Dst"] += m["DestIncr"]
        if m["BiasClear"]:
            RWC["ExtraAddrModBit"] = 0
        elif m["BiasIncr"] & 3:
            RWC["ExtraAddrModBit"] += 1
        for name, width in RWC_WIDTHS.items():  # the uintN_t fields wrap
            RWC[name] %= 1 << width

    def ResolveMod0(self, Mod0: int) -> int:
        if Mod0 != FMT_SRCB:
            return Mod0
        c = self.c
        if c["SFPU_Fp32_enabled"]:
            return FMT_FP32
        SrcBFmt = c["SrcB_val"] if c["SrcB_override"] else c["REG1_SrcB"]
        return FMT_BF16 if SrcBFmt in BF16_SRCB_FORMATS else FMT_FP16

    def Addr(self, Imm10: int, Mod0: int) -> int:
        Addr = Imm10 + self.c["MATH_Offset"]
        Offset = self.RWC["Dst"] + self.c["DEST_REGW_BASE"]
        Addr += Offset & 3 if Mod0 == FMT_INT32_ALL else Offset
        return Addr % 1024


# SFPLOAD.md / SFPSTORE.md supporting definitions (those Blackhole's reference has are imported).
def ReadFP16(x: int, ENABLE_FP16A_INF: bool) -> int:
    Sign, Man, Exp = x >> 15, (x >> 5) & 0x3FF, x & 0x1F
    if ENABLE_FP16A_INF and Exp == 0x1F and Man == 0x3FF:
        Exp, Man = 255, 0
    elif Exp != 0:
        Exp += 112
    return (Sign << 31) | (Exp << 23) | (Man << 13)


def SignMagToTwosComp(x: int) -> int:
    Sign, Mag = x & 0x80000000, x & 0x7FFFFFFF
    return (-Mag & M32) if Sign else Mag


def ToSignMag(x: int) -> int:
    Sign = x & 0x80000000
    Mag = (-x & M32) if Sign else x
    return Sign | (Mag & 0x7FFFFFFF)


def SignMag11ToFP16(x: int) -> int:
    return ((x >> 31) << 15) | (16 << 10) | (x & 0x3FF)


WIDE_LOADS = {FMT_FP32, FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM}
WIDE_STORES = WIDE_LOADS | {FMT_LO16, FMT_HI16}


def LoadDatum(Mod0: int, d16: int, d32: int, old: int, inf: bool) -> int:
    return {
        FMT_FP16: lambda: ReadFP16(d16, inf),
        FMT_BF16: lambda: UnshuffleBF16(d16) << 16,
        FMT_FP32: lambda: UnshuffleFP32(d32),
        FMT_INT32: lambda: UnshuffleFP32(d32),
        FMT_INT32_ALL: lambda: UnshuffleFP32(d32),
        FMT_INT32_SM: lambda: SignMagToTwosComp(UnshuffleFP32(d32)),
        FMT_INT8: lambda: ((d16 >> 15) << 31) | ((d16 >> 5) & 0x7F),  # SignMag8ToSignMag32
        FMT_INT8_COMP: lambda: SignMagToTwosComp(((d16 >> 15) << 31) | ((d16 >> 5) & 0x3FF)),
        FMT_LO16_ONLY: lambda: (old & 0xFFFF0000) | d16,
        FMT_HI16_ONLY: lambda: (d16 << 16) | (old & 0xFFFF),
        FMT_INT16: lambda: ((d16 >> 15) << 31) | (d16 & 0x7FFF),
        FMT_UINT16: lambda: d16,
        FMT_LO16: lambda: d16,
        FMT_HI16: lambda: d16 << 16,
        FMT_ZERO: lambda: 0,
    }[Mod0]()


def StoreDatum(Mod0: int, Datum: int) -> int:
    return {
        FMT_FP16: lambda: FP16Shuffle(ToFP16(Datum)),
        FMT_BF16: lambda: BF16Shuffle(ToBF16(Datum)),
        FMT_FP32: lambda: FP32Shuffle(Datum),
        FMT_INT32: lambda: FP32Shuffle(Datum),
        FMT_INT32_ALL: lambda: FP32Shuffle(Datum),
        FMT_INT32_SM: lambda: FP32Shuffle(ToSignMag(Datum)),
        FMT_INT8: lambda: FP16Shuffle(SignMag11ToFP16(Datum)),
        FMT_INT8_COMP: lambda: FP16Shuffle(SignMag11ToFP16(ToSignMag(Datum))),
        FMT_LO16_ONLY: lambda: Datum & 0xFFFF,
        FMT_HI16_ONLY: lambda: Datum >> 16,
        FMT_INT16: lambda: ((Datum >> 31) << 15) | (Datum & 0x7FFF),
        FMT_UINT16: lambda: Datum & 0xFFFF,
        FMT_LO16: lambda: ((Datum << 16) | (Datum >> 16)) & M32,
        FMT_HI16: lambda: Datum,
        FMT_ZERO: lambda: 0,
    }[Mod0]()


# ------------------------------------------------------------------------------ the reference


class WormholeRef(SfpuFloatRef, LanesRef):
    """Wormhole's vector unit state (SfpuRef's, plus the LReg[VC] SFPSHFT2's SHFLROR1 modes last saw),
    and Dst through ``dst`` (a WormholeDst) for SFPLOAD / SFPSTORE."""

    def __init__(self, sfpu, thread: int, dst: WormholeDst | None = None):
        SfpuRef.__init__(self, sfpu, thread)
        self.ShflVc = [int(v) for v in sfpu.shfl_vc]  # -1: not known
        self.dst = dst

    # ------------------------------------------------------------------ data movement
    def SFPLOAD(self, word: int) -> None:
        VD, Mod0, AddrMod, Imm = bits(word, 20, 23), bits(word, 16, 19), bits(word, 14, 15), bits(word, 0, 13)
        if Imm >> 10:
            raise RefUB  # Imm10 is ten bits
        D = self.dst
        Backdoor = self.BackdoorLanes(VD)
        Mod0 = D.ResolveMod0(Mod0)
        Addr = D.Addr(Imm, Mod0)
        new = {}
        if VD < 8:
            for Lane in range(32):
                cfg = self.LaneConfig[Lane]
                if (cfg >> 5) & 1:  # BLOCK_SFPU_RD_FROM_DEST
                    continue
                if not (self.LaneEnabled(Lane) or Mod0 == FMT_INT32_ALL):
                    continue
                Row = ((Addr & ~3) + Lane // 8) % 1024
                Column = (Lane & 7) * 2
                if (Addr & 2) or (self.LaneConfig[Lane & 7] >> 6) & 1:  # DEST_RD_COL_EXCHANGE
                    Column += 1
                wide = Mod0 in WIDE_LOADS
                if Mod0 != FMT_ZERO and not D.Valid(Row, wide):
                    raise RefUB  # a row ZEROACC left undefined (the emulator's reading)
                d16, d32 = D.Dst16b(Row, Column), D.Dst32b(Row, Column)
                new[VD, Lane] = LoadDatum(Mod0, d16, d32, self.LReg[VD][Lane], bool(cfg & 1))
                if VD < 4 and (cfg >> 2) & 1 and (cfg >> 3) & 1:
                    new[VD + 4, Lane] = (Row << 4) | Column
        D.ApplyPartialAddrMod(AddrMod)
        for (r, Lane), v in new.items():
            self.LReg[r][Lane] = v
        self.LoadTemplate(VD, word, Backdoor)

    def SFPSTORE(self, word: int) -> None:
        VD, Mod0, AddrMod, Imm = bits(word, 20, 23), bits(word, 16, 19), bits(word, 14, 15), bits(word, 0, 13)
        if Imm >> 10:
            raise RefUB
        D = self.dst
        Backdoor = self.BackdoorLanes(VD)
        Mod0 = D.ResolveMod0(Mod0)
        Addr = D.Addr(Imm, Mod0)
        writes = []
        for Lane in range(32):
            if (self.LaneConfig[Lane] >> 4) & 1 or Backdoor[Lane]:  # BLOCK_DEST_WR_FROM_SFPU
                continue
            if not (self.LaneEnabled(Lane) or Mod0 == FMT_INT32_ALL):
                continue
            Row = ((Addr & ~3) + Lane // 8) % 1024
            Column = (Lane & 7) * 2
            if (Addr & 2) or (self.LaneConfig[Lane & 7] >> 7) & 1:  # DEST_WR_COL_EXCHANGE
                Column += 1
            wide = Mod0 in WIDE_STORES
            if not D.Valid(Row, wide):
                raise RefUB
            writes.append((wide, Row, Column, StoreDatum(Mod0, self.LReg[VD][Lane])))
        D.ApplyPartialAddrMod(AddrMod)
        for wide, Row, Column, value in writes:
            (D.Write32 if wide else D.Write16)(Row, Column, value)
        self.LoadTemplate(VD, word, Backdoor)

    # ------------------------------------------------------------------ the MAD sub-unit
    def SFPMAD(self, word: int) -> None:
        VA, VB, VC = bits(word, 16, 23), bits(word, 12, 15), bits(word, 8, 11)
        VD, Mod1 = bits(word, 4, 7), bits(word, 0, 3)
        if VA >> 4 or Mod1 & 3:
            raise RefUB  # VA is four bits; Mod1 defines only INDIRECT_VA (4) and INDIRECT_VD (8)
        for Lane in self.mad_lanes(VD, word):
            va = self.LReg[7][Lane] & 15 if Mod1 & 4 else VA
            d = fma_wh(self.LReg[va][Lane], self.LReg[VB][Lane], self.LReg[VC][Lane])
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    SFPADD = SFPMAD
    SFPMUL = SFPMAD

    def SFPADDI(self, word: int) -> None:
        Imm16, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        if Mod1 & 2:
            raise RefUB  # Blackhole's NEGATE_VC
        VC = VD
        for Lane in self.mad_lanes(VD, word):
            d = fma_wh(BF16ToFP32(Imm16), 0x3F800000, self.LReg[VC][Lane])
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    def SFPMULI(self, word: int) -> None:
        Imm16, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        if Mod1 & 2:
            raise RefUB
        VC = VD
        for Lane in self.mad_lanes(VD, word):
            d = fma_wh(BF16ToFP32(Imm16), self.LReg[VC][Lane], 0)
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    def SFPLUT(self, word: int) -> None:
        VD, Mod0, Rest = bits(word, 20, 23), bits(word, 16, 19), bits(word, 0, 15)
        zero(Rest)
        for Lane in self.mad_lanes(VD, word):
            l3 = self.LReg[3][Lane]
            b = fabsf(l3)
            coeffs = self.LReg[0 if less(b, 1.0) else 1 if less(b, 2.0) else 2][Lane]
            d = fma_wh(Lut8ToFp32((coeffs >> 8) & 0xFF), b, Lut8ToFp32(coeffs & 0xFF))
            if Mod0 & 4:  # SFPLUT_MOD0_SGN_RETAIN
                d = copysignf(d, l3)
            self.mad_write(Lane, VD, bool(Mod0 & 8), d)

    def SFPLUTFP32(self, word: int) -> None:
        VD, Mod1 = bits(word, 4, 7), bits(word, 0, 3)
        zero(bits(word, 8, 23))  # Wormhole's diagram: VD and Mod1 only
        for Lane in self.mad_lanes(VD, word):
            l3 = self.LReg[3][Lane]
            b = fabsf(l3)
            i = 0 if less(b, 1.0) else 1 if less(b, 2.0) else 2
            if Mod1 & 2:  # SFPLUTFP32_MOD1_FP16_6ENTRY_TABLE1
                if (Mod1 & 10) == 10:  # SFPLUTFP32_MOD1_FP16_3ENTRY_TABLE
                    a = Lut16ToFp32(self.LReg[i][Lane] >> 16)
                    c = Lut16ToFp32(self.LReg[i][Lane] & 0xFFFF)
                else:
                    cut = 4.0 if (Mod1 & 3) == 3 else 3.0
                    steps = ((0.5, 0), (1.0, 16), (1.5, 0), (2.0, 16), (cut, 0))
                    j = next((shift for limit, shift in steps if less(b, limit)), 16)
                    a = Lut16ToFp32((self.LReg[i][Lane] >> j) & 0xFFFF)
                    c = Lut16ToFp32((self.LReg[4 + i][Lane] >> j) & 0xFFFF)
            else:
                a, c = self.LReg[i][Lane], self.LReg[4 + i][Lane]
            d = fma_wh(a, b, c)
            if Mod1 & 4:
                d = copysignf(d, l3)
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    # ------------------------------------------------------------------ the simple sub-unit
    def SFPAND(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(Mod1)
        VB = VD

        def op(Lane):
            self.LReg[VD][Lane] = self.LReg[VB][Lane] & self.LReg[VC][Lane]

        self.lanewise(VD, op, word)

    def SFPOR(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(Mod1)
        VB = VD

        def op(Lane):
            self.LReg[VD][Lane] = self.LReg[VB][Lane] | self.LReg[VC][Lane]

        self.lanewise(VD, op, word)

    def SFPSHFT(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Mod1 & 6:
            raise RefUB  # Blackhole's ARITHMETIC, ARG_IMM_USE_VC
        VB = VD

        def op(Lane):
            ShiftAmount = sext(Imm12, 12) if Mod1 & 1 else sext(self.LReg[VC][Lane], 32)
            if ShiftAmount >= 0:
                self.LReg[VD][Lane] = (self.LReg[VB][Lane] << (ShiftAmount & 31)) & M32
            else:
                self.LReg[VD][Lane] = self.LReg[VB][Lane] >> ((-ShiftAmount) & 31)

        self.lanewise(VD, op, word)

    def SFPPUSHC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(VC)
        zero(Mod1)
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            if Backdoor[Lane]:
                continue
            if len(self.FlagStack[Lane]) >= 8:
                raise RefUB
            self.FlagStack[Lane].append((self.LaneFlags[Lane], self.UseLaneFlagsForLaneEnable[Lane]))

    def SFPPOPC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(VC)
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            S = self.FlagStack[Lane]
            if Backdoor[Lane]:
                continue
            TopFlags, TopUse = S[-1] if S else (False, False)
            if Mod1 == 0:
                if not S:
                    raise RefUB
                S.pop()
            elif len(S) == 8:
                S[0] = (TopFlags, TopUse)  # the page's hardware bug
            if Mod1 == 0:
                self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane] = TopUse, TopFlags
            elif Mod1 <= 12:
                self.UseLaneFlagsForLaneEnable[Lane] = TopUse
                self.LaneFlags[Lane] = BooleanOp(Mod1, self.LaneFlags[Lane], TopFlags)
            elif Mod1 == 13:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]
            else:
                self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane] = True, Mod1 == 14

    def SFPCAST(self, word: int) -> None:
        VC, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        if VC >> 4 or Mod1 & 2:
            raise RefUB  # VC is four bits; Mod1 & 2: Blackhole's integer modes
        self.Backdoor(VD, word)
        for Lane in range(32):
            if not self.Guard(VD, Lane) or not self.LaneEnabled(Lane):
                continue
            c = self.LReg[VC][Lane]
            Sign, Mag = c & 0x80000000, c & 0x7FFFFFFF
            LZ = clz32(Mag) if Mag else 157
            Norm = (Mag << (LZ & 31)) & M32
            d = Sign + ((157 - LZ) << 23) + (Norm >> 8)
            if Mod1 & 1:  # SFPCAST_MOD1_RND_STOCH
                if (Norm & 0xFE) > ((self.AdvancePRNG(Lane) >> 9) & 0xFE):
                    d += 1
            elif (Norm & 0x80) and (Norm & 0x17F):
                d += 1
            if VD < 8 or VD == 16:
                self.LReg[VD][Lane] = d & M32

    def SFP_STOCH_RND(self, word: int) -> None:
        Stochastic, Imm5 = bits(word, 21, 23), bits(word, 16, 20)
        VB, VC, VD = bits(word, 12, 15), bits(word, 8, 11), bits(word, 4, 7)
        UseImm5, Mod1 = bits(word, 3, 3), bits(word, 0, 2)
        if Stochastic >> 1:
            raise RefUB  # StochasticRounding is one bit
        if Mod1 not in (4, 5):
            zero(Imm5)  # fixed at 0 by the floating-point pages' syntax (VB: accepted, never read)
            zero(UseImm5)
        self.Backdoor(VD, word)
        for Lane in range(32):
            if not self.Guard(VD, Lane) or not self.LaneEnabled(Lane):
                continue
            PRNGBits = self.AdvancePRNG(Lane) & 0x7FFFFF
            if not Stochastic:
                PRNGBits = 0x400000
            c = self.LReg[VC][Lane]
            if Mod1 in (0, 1):
                x = self.FloatFloat(c, Mod1, PRNGBits)
            elif Mod1 in (4, 5):
                x = self.IntInt(c, Mod1, Imm5 if UseImm5 else self.LReg[VB][Lane] & 31, PRNGBits)
            else:
                x = self.FloatInt(c, Mod1, PRNGBits)
            if VD < 8 or VD == 16:
                self.LReg[VD][Lane] = x

    # ------------------------------------------------------------------ SFPSHFT2
    def SFPSHFT2(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = bits(word, 12, 23), bits(word, 8, 11), bits(word, 4, 7), bits(word, 0, 3)
        if Mod1 > 6:
            raise RefUB
        if Mod1 == 6:
            zero(VC)
            Imm12 = sext(Imm12, 12)
        elif Imm12 >> 4:
            raise RefUB
        VB = Imm12 & 15
        L = self.LReg
        if Mod1 in (2, 3):
            if not self.GuardOnce(VD):
                self.Backdoor(VD, word)
                return
            self.ShflVc = L[VC][:]  # vc0 for a later SUBVEC_SHFLSHR1
        self.Backdoor(VD, word)
        Enabled = [self.LaneEnabled(Lane) and self.Guard(VD, Lane) for Lane in range(32)]
        vc, v0 = L[VC][:], L[0][:]
        if Mod1 in (0, 1, 2):
            for Lane in range(32):
                if Enabled[Lane]:
                    L[0][Lane], L[1][Lane], L[2][Lane] = L[1][Lane], L[2][Lane], L[3][Lane]
                    if Mod1 == 0:
                        L[3][Lane] = 0
                    elif Mod1 == 1:
                        L[3][Lane] = v0[Lane + 8] if Lane < 24 else 0
                    else:
                        L[3][Lane] = vc[Lane - 1] if Lane & 7 else vc[Lane + 7]
            return
        if not (VD < 8 or VD == 16):
            return
        new = {}
        for Lane in [lane for lane in range(32) if Enabled[lane]]:
            if Mod1 == 3:
                new[Lane] = vc[Lane - 1] if Lane & 7 else vc[Lane + 7]
            elif Mod1 == 4:
                if Lane & 7:
                    new[Lane] = vc[Lane - 1]
                elif self.ShflVc[Lane + 7] < 0:
                    raise RefUB  # HardwareBug() before any SHFLROR1 mode has run
                else:
                    new[Lane] = self.ShflVc[Lane + 7]
            else:
                Amount = sext(vc[Lane], 32) if Mod1 == 5 else Imm12
                if Amount >= 0:
                    new[Lane] = (L[VB][Lane] << (Amount & 31)) & M32
                else:
                    new[Lane] = L[VB][Lane] >> ((-Amount) & 31)
        for Lane, value in new.items():
            L[VD][Lane] = value


def BooleanOp(Mod1: int, A: bool, B: bool) -> bool:
    return {
        1: B,
        2: not B,
        3: A and B,
        4: A or B,
        5: A and not B,
        6: A or not B,
        7: (not A) and B,
        8: (not A) or B,
        9: (not A) and (not B),
        10: (not A) or (not B),
        11: A != B,
        12: A == B,
    }[Mod1]
