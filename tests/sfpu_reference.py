"""A reference for the vector unit's instructions, from the BlackholeA0 pages, over Python ints.

``SfpuRef`` extends the matrix harness's ``RefState`` (Dst with its undefined rows, the RWCs,
ApplyAddrMod) with the vector unit's state as lists: ``LReg[17][32]``, ``LaneFlags[32]``,
``UseLaneFlagsForLaneEnable[32]``, ``FlagStack[32]`` (lists of (LaneFlags, UseLaneFlagsForLaneEnable)
tuples, top last), ``LaneConfig[32]`` and ``Sp``. Each instruction is a method taking the word, with
its operands cut out of the word by the pages' BlackholeA0 encoding diagrams. The outcome boundary
follows the emulator's stated readings: RefUB where the pages say undefined (or where an operand
the syntax fixes at 0 is not), RefUnimplemented where state is not modelled (the backdoor load of
instructions whose methods still call ``backdoor``). ``PRNGState[32]`` is VectorUnit.md's PRNG state;
``InstructionTemplate[32][4]``, ``Sequence[32][4]`` and ``Misc[32]`` are SFPLOADMACRO.md's
``LoadMacroConfig``.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import struct

from dst_reference import Adj16, Adj32, bits
from matrix_harness import RefState
from outcomes import RefUB, RefUnimplemented

M32 = 0xFFFFFFFF
(
    FMT_SRCB,
    FMT_FP16,
    FMT_BF16,
    FMT_FP32,
    FMT_INT32,
    FMT_INT8,
    FMT_UINT16,
    FMT_HI16,
    FMT_INT16,
    FMT_LO16,
    FMT_INT32_ALL,
    FMT_ZERO,
    FMT_INT32_SM,
    FMT_INT8_COMP,
    FMT_LO16_ONLY,
    FMT_HI16_ONLY,
) = range(16)


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def i32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def sext(x: int, width: int) -> int:
    return x - (1 << width) if x >> (width - 1) & 1 else x


def clz(c: int) -> int:
    return 32 - c.bit_length()


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


def fields(word: int) -> tuple[int, int, int, int]:
    """(Imm12, VC, VD, Mod1) of a simple-unit instruction word."""
    return bits(word, 12, 23), bits(word, 8, 11), bits(word, 4, 7), bits(word, 0, 3)


def zero(value: int) -> None:
    if value:
        raise RefUB  # an operand the page's syntax fixes at 0


def SignMag11ToFP16(x: int) -> int:
    return ((x >> 31) << 15) | (16 << 10) | (x & 0x3FF)


def BF16Shuffle(x: int) -> int:
    return (x & 0x8000) | ((x & 0x7F) << 8) | ((x & 0x7F80) >> 7)


def FP16Shuffle(x: int) -> int:
    return (x & 0x8000) | ((x & 0x3FF) << 5) | ((x & 0x7C00) >> 10)


def UnshuffleBF16(x: int) -> int:
    return (x & 0x8000) | ((x & 0xFF) << 7) | ((x & 0x7F00) >> 8)


def UnshuffleFP32(x: int) -> int:
    return (UnshuffleBF16(x >> 16) << 16) | (x & 0xFFFF)


def FP32Shuffle(x: int) -> int:
    return (BF16Shuffle(x >> 16) << 16) | (x & 0xFFFF)


def ToFP16(x: int) -> int:
    Sign, Exp, Man = x >> 31, ((x >> 23) & 0xFF) - 112, x & 0x7FFFFF
    if Exp <= 0:
        Exp = Man = 0
    elif Exp > 31:
        Exp, Man = 31, 0x7FFFFF
    return (Sign << 15) | (Exp << 10) | (Man >> 13)


def ToBF16(x: int) -> int:
    Sign, Exp, Man = x & 0x80000000, x & 0x7F800000, x & 0x7FFFFF
    if Exp == 0:
        Man = 0
    return (Sign | Exp | Man) >> 16


def ToFP32(x: int) -> int:
    Sign, Exp, Man = x & 0x80000000, x & 0x7F800000, x & 0x7FFFFF
    if Exp == 0:
        Man = 0
    return Sign | Exp | Man


def ReadFP16(x: int, inf: bool) -> int:
    Sign, Man, Exp = x >> 15, (x >> 5) & 0x3FF, x & 0x1F
    if inf and Exp == 0x1F and Man == 0x3FF:
        Exp, Man = 255, 0
    elif Exp != 0:
        Exp += 112
    return (Sign << 31) | (Exp << 23) | (Man << 13)


def LoadDatum(Mod0: int, d16: int, d32: int, old: int, inf: bool) -> int:
    """SFPLOAD's Datum from a Dst16b / Dst32b datum and the LReg lane's old value."""
    if Mod0 == FMT_FP16:
        return ReadFP16(d16, inf)
    if Mod0 == FMT_BF16:
        return UnshuffleBF16(d16) << 16
    if Mod0 in (FMT_FP32, FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM):
        return UnshuffleFP32(d32)
    if Mod0 == FMT_INT8:
        return ((d16 >> 15) << 31) | ((d16 >> 5) & 0xFF)
    if Mod0 == FMT_INT8_COMP:
        return ((d16 >> 15) << 31) | ((d16 >> 5) & 0x3FF)
    if Mod0 == FMT_LO16_ONLY:
        return (old & 0xFFFF0000) | d16
    if Mod0 == FMT_HI16_ONLY:
        return (d16 << 16) | (old & 0xFFFF)
    if Mod0 == FMT_INT16:
        return ((d16 >> 15) << 31) | (d16 & 0x7FFF)
    if Mod0 in (FMT_UINT16, FMT_LO16):
        return d16
    if Mod0 == FMT_HI16:
        return d16 << 16
    return 0  # FMT_ZERO


def StoreDatum(Mod0: int, Datum: int) -> int:
    """SFPSTORE's Dst16b / Dst32b datum from an LReg lane."""
    if Mod0 == FMT_FP16:
        return FP16Shuffle(ToFP16(Datum))
    if Mod0 == FMT_BF16:
        return BF16Shuffle(ToBF16(Datum))
    if Mod0 == FMT_FP32:
        return FP32Shuffle(ToFP32(Datum))
    if Mod0 in (FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM):
        return FP32Shuffle(Datum)
    if Mod0 in (FMT_INT8, FMT_INT8_COMP):
        return FP16Shuffle(SignMag11ToFP16(Datum))
    if Mod0 in (FMT_LO16_ONLY, FMT_UINT16):
        return Datum & 0xFFFF
    if Mod0 == FMT_HI16_ONLY:
        return Datum >> 16
    if Mod0 == FMT_INT16:
        return ((Datum >> 31) << 15) | (Datum & 0x7FFF)
    if Mod0 == FMT_LO16:
        return ((Datum << 16) | (Datum >> 16)) & M32
    if Mod0 == FMT_HI16:
        return Datum
    return 0  # FMT_ZERO


BF16_SRCB_FORMATS = {0, 4, 5, 6, 7, 15, 8, 9}  # FP32, TF32, BF16, BFP8, BFP4, BFP2, INT32, INT16


class SfpuRef(RefState):
    """The pages' vector unit state next to the matrix harness's Dst, RWCs and configuration."""

    def __init__(self, sfpu, thread: int, regs=None, config: dict | None = None, extra: dict | None = None):
        if regs is not None:  # instructions that touch Dst, the RWCs or the configuration
            super().__init__(regs, config, thread)
        self.thread = thread
        self.LReg = [[int(v) for v in row] for row in sfpu.lreg]
        self.LaneFlags = [bool(v) for v in sfpu.lane_flags]
        self.UseLaneFlagsForLaneEnable = [bool(v) for v in sfpu.use_lane_flags]
        self.FlagStack = [
            [(bool(sfpu.flag_stack[lane, i, 0]), bool(sfpu.flag_stack[lane, i, 1])) for i in range(d)]
            for lane, d in enumerate(sfpu.stack_depth.tolist())
        ]
        self.LaneConfig = [int(v) for v in sfpu.lane_config]
        self.Sp = int(sfpu.sp[thread])
        self.PRNGState = [int(v) for v in sfpu.prng]
        self.InstructionTemplate = [[int(v) for v in row] for row in sfpu.macro_template]
        self.Sequence = [[int(v) for v in row] for row in sfpu.macro_sequence]
        self.Misc = [int(v) for v in sfpu.macro_misc]
        self.x = extra or {}

    # ------------------------------------------------------------------ shared pieces
    def LaneEnabled(self, Lane: int) -> bool:
        if (self.LaneConfig[Lane & 7] >> (12 + Lane // 8)) & 1:
            return False
        if self.UseLaneFlagsForLaneEnable[Lane]:
            return self.LaneFlags[Lane]
        return True

    def AdvancePRNG(self, Lane: int) -> int:
        # VectorUnit.md "PRNG"
        Result = self.PRNGState[Lane]
        Taps = bin(Result & 0x80200003).count("1")
        self.PRNGState[Lane] = ((~Taps << 31) | (Result >> 1)) & M32
        return Result

    def backdoor(self, VD: int) -> None:
        if VD >= 12 and any(not (c >> 1) & 1 for c in self.LaneConfig):
            raise RefUnimplemented

    def BackdoorLanes(self, VD: int) -> list[bool]:
        # SFPCONFIG.md's LaneConfig table: VD >= 12 and DISABLE_BACKDOOR_LOAD clear
        return [VD >= 12 and not (self.LaneConfig[Lane] >> 1) & 1 for Lane in range(32)]

    def LoadTemplate(self, VD: int, word: int, Lanes: list[bool]) -> None:
        for Lane in range(32):
            if Lanes[Lane]:
                self.InstructionTemplate[Lane][VD - 12] = word

    def ApplyPartialAddrMod(self, AddrMod: int) -> None:
        phase = self.RWC["FidelityPhase"]
        self.ApplyAddrMod(AddrMod)
        self.RWC["FidelityPhase"] = phase

    def Dst16Valid(self, Row: int) -> bool:
        return Adj16(Row, self.c["remap"]) not in self.Undefined

    def Dst32Valid(self, Row: int) -> bool:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        return a not in self.Undefined and a + 8 not in self.Undefined

    def Dst16Raw(self, Row: int, Col: int) -> int:
        return self.DstBits[Adj16(Row, self.c["remap"])][Col]

    def Dst32Raw(self, Row: int, Col: int) -> int:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        return (self.DstBits[a][Col] << 16) | self.DstBits[a + 8][Col]

    def ResolveMod0(self, Mod0: int) -> int:
        if Mod0 != FMT_SRCB:
            return Mod0
        x = self.x
        if x["SFPU_Fp32_enabled"]:
            return FMT_FP32
        SrcBFmt = x["SrcB_val"] if x["SrcB_override"] else x["REG1_SrcB"]
        return FMT_BF16 if SrcBFmt in BF16_SRCB_FORMATS else FMT_FP16

    # ------------------------------------------------------------------ data movement
    def SFPLOAD(self, word: int) -> None:
        VD, Mod0, AddrMod, Imm = bits(word, 20, 23), bits(word, 16, 19), bits(word, 13, 15), bits(word, 0, 12)
        if Imm >> 10:
            raise RefUB
        Backdoor = self.BackdoorLanes(VD)
        Mod0 = self.ResolveMod0(Mod0)
        x = self.x
        Addr = (Imm + self.c["MATH_Offset"]) % 1024
        DstOffset = (self.RWC["Dst"] + self.c["DEST_REGW_BASE"]) % 1024
        Sp = self.Sp
        if Mod0 == FMT_INT32_ALL:
            if Sp != 0:
                Sp = (Sp - x["SFPU_STACK_Incr"]) % 1024
            SpOffset = (Sp + x["DEST_SP_BASE"]) % 1024
            Addr = (Addr + SpOffset + (DstOffset & 3)) % 1024
        else:
            SpOffset = (Sp + x["DEST_SP_BASE"]) % 1024
            Addr = (Addr + DstOffset + (SpOffset & 3)) % 1024
        new = {}
        if VD < 8:
            for Lane in range(32):
                cfg = self.LaneConfig[Lane]
                if (cfg >> 5) & 1:
                    continue
                if not (self.LaneEnabled(Lane) or Mod0 == FMT_INT32_ALL):
                    continue
                Row = ((Addr & ~3) + Lane // 8) % 1024
                Column = (Lane & 7) * 2
                if (Addr & 2) or (self.LaneConfig[Lane & 7] >> 6) & 1:
                    Column += 1
                wide = Mod0 in (FMT_FP32, FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM)
                if Mod0 != FMT_ZERO and not (self.Dst32Valid(Row) if wide else self.Dst16Valid(Row)):
                    raise RefUB
                d16, d32 = self.Dst16Raw(Row, Column), self.Dst32Raw(Row, Column)
                Datum = LoadDatum(Mod0, d16, d32, self.LReg[VD][Lane], bool(cfg & 1))
                new[VD, Lane] = Datum
                if VD < 4 and (cfg >> 2) & 1 and (cfg >> 3) & 1:
                    new[VD + 4, Lane] = (Row << 4) | Column
        self.ApplyPartialAddrMod(AddrMod)
        self.Sp = Sp
        for (r, lane), v in new.items():
            self.LReg[r][lane] = v
        self.LoadTemplate(VD, word, Backdoor)

    def SFPSTORE(self, word: int) -> None:
        VD, Mod0, AddrMod, Imm = bits(word, 20, 23), bits(word, 16, 19), bits(word, 13, 15), bits(word, 0, 12)
        if Imm >> 10:
            raise RefUB
        Backdoor = self.BackdoorLanes(VD)
        Mod0 = self.ResolveMod0(Mod0)
        x = self.x
        Addr = (Imm + self.c["MATH_Offset"]) % 1024
        DstOffset = (self.RWC["Dst"] + self.c["DEST_REGW_BASE"]) % 1024
        SpOffset = (self.Sp + x["DEST_SP_BASE"]) % 1024
        Sp = self.Sp
        if Mod0 == FMT_INT32_ALL:
            Addr = (Addr + SpOffset + (DstOffset & 3)) % 1024
            Sp = (Sp + x["SFPU_STACK_Incr"]) % 1024
        else:
            Addr = (Addr + DstOffset + (SpOffset & 3)) % 1024
        writes = []
        for Lane in range(32):
            if (self.LaneConfig[Lane] >> 4) & 1 or Backdoor[Lane]:
                continue
            if not (self.LaneEnabled(Lane) or Mod0 == FMT_INT32_ALL):
                continue
            Datum = self.LReg[VD][Lane]
            Row = ((Addr & ~3) + Lane // 8) % 1024
            Column = (Lane & 7) * 2
            if (Addr & 2) or (self.LaneConfig[Lane & 7] >> 7) & 1:
                Column += 1
            wide = Mod0 in (FMT_FP32, FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM, FMT_LO16, FMT_HI16)
            if not (self.Dst32Valid(Row) if wide else self.Dst16Valid(Row)):
                raise RefUB
            value = StoreDatum(Mod0, Datum)
            writes.append((wide, Row, Column, value))
        self.ApplyPartialAddrMod(AddrMod)
        self.Sp = Sp
        for wide, Row, Column, value in writes:
            (self.Dst32Write if wide else self.Dst16Write)(Row, Column, value)
        self.LoadTemplate(VD, word, Backdoor)

    def SFPLOADI(self, word: int) -> None:
        VD, Mod0, Imm16 = bits(word, 20, 23), bits(word, 16, 19), bits(word, 0, 15)
        if VD >= 8:
            self.LoadTemplate(VD, word, self.BackdoorLanes(VD))
            return
        for Lane in range(32):
            if not self.LaneEnabled(Lane):
                continue
            old = self.LReg[VD][Lane]
            if Mod0 == 0:
                v = Imm16 << 16
            elif Mod0 == 1:
                v = ((Imm16 >> 15) << 31) | ((((Imm16 >> 10) & 0x1F) + 112) << 23) | ((Imm16 & 0x3FF) << 13)
            elif Mod0 == 2:
                v = Imm16
            elif Mod0 == 4:
                v = sext(Imm16, 16) & M32
            elif Mod0 == 8:
                v = (Imm16 << 16) | (old & 0xFFFF)
            elif Mod0 == 10:
                v = (old & 0xFFFF0000) | Imm16
            else:
                raise RefUB
            self.LReg[VD][Lane] = v

    def SFPMOV(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        Backdoor = self.BackdoorLanes(VD)
        old = [row[:] for row in self.LReg]
        for Lane in range(32):
            if Backdoor[Lane]:
                self.InstructionTemplate[Lane][VD - 12] = word
                continue
            if self.LaneEnabled(Lane) or Mod1 == 2:
                if Mod1 & 8:
                    if VC <= 3:
                        x = self.InstructionTemplate[Lane][VC]
                    elif VC <= 7:
                        x = self.Sequence[Lane][VC - 4]
                    elif VC == 8:
                        x = self.Misc[Lane]
                    elif VC == 9:
                        x = self.AdvancePRNG(Lane)
                    else:
                        x = self.LaneConfig[Lane] if VC == 15 else 0
                else:
                    x = old[VC][Lane] ^ (0x80000000 if Mod1 & 1 else 0)
                if VD < 8:
                    self.LReg[VD][Lane] = x

    def SFPNOP(self, word: int) -> None:
        pass

    def SFPCONFIG(self, word: int) -> None:
        Imm16, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        Flags = self.LaneFlags[:]
        Use = self.UseLaneFlagsForLaneEnable[:]
        L0 = self.LReg[0][:]
        for Lane in range(32):
            if Mod1 & 8 and not (Imm16 >> ((Lane & 7) * 2)) & 1:
                continue
            if Use[Lane & 7] and not Flags[Lane & 7]:
                continue
            if VD <= 3:
                self.InstructionTemplate[Lane][VD] = L0[Lane & 7]
            elif VD <= 7:
                self.Sequence[Lane][VD - 4] = Imm16 if Mod1 & 1 else L0[Lane & 7]
            elif VD == 8:
                Value = (Imm16 if Mod1 & 1 else L0[Lane & 7]) & 0xFFF
                Misc = self.Misc[Lane]
                self.Misc[Lane] = {0: Value, 2: Misc | Value, 4: Misc & Value, 6: Misc ^ Value}[Mod1 & 6]
            elif VD in (11, 12, 13, 14):
                if Mod1 & 1:
                    Value = {11: f32(-1.0), 12: f32(1 / 65536), 13: f32(-0.67487759), 14: f32(-0.34484843)}[
                        VD
                    ]
                else:
                    Value = L0[Lane & 7]
                self.LReg[VD][Lane] = Value
            elif VD == 15:
                Original = self.LaneConfig[Lane]
                Value = Imm16 if Mod1 & 1 else L0[Lane & 7] & 0x3FFFF
                op = Mod1 & 6
                n = {0: Value, 2: Original | Value, 4: Original & Value, 6: Original ^ Value}[op]
                if Mod1 & 1:
                    n |= Original & ~0xFFFF & 0x3FFFF
                self.LaneConfig[Lane] = n

    # ------------------------------------------------------------------ predication
    def SFPSETCC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 1:
            raise RefUB
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        en = [self.LaneEnabled(lane) for lane in range(32)]
        for Lane in range(32):
            if en[Lane] and not Backdoor[Lane]:
                if not self.UseLaneFlagsForLaneEnable[Lane] or Mod1 & 8:
                    self.LaneFlags[Lane] = False
                elif Mod1 & 1:
                    self.LaneFlags[Lane] = Imm12 != 0
                else:
                    c = i32(self.LReg[VC][Lane])
                    self.LaneFlags[Lane] = {0: c < 0, 2: c != 0, 4: c >= 0, 6: c == 0}[Mod1]

    def SFPENCC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 2:
            raise RefUB
        zero(VC)
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            if Backdoor[Lane]:
                continue
            if Mod1 & 2:
                self.UseLaneFlagsForLaneEnable[Lane] = (Imm12 & 1) != 0
            elif Mod1 & 1:
                self.UseLaneFlagsForLaneEnable[Lane] = not self.UseLaneFlagsForLaneEnable[Lane]
            self.LaneFlags[Lane] = (Imm12 & 2) != 0 if Mod1 & 8 else True

    def SFPPUSHC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(VC)
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            S = self.FlagStack[Lane]
            if Backdoor[Lane]:
                continue
            if Mod1 == 0:
                if len(S) >= 8:
                    raise RefUB
                S.append((self.LaneFlags[Lane], self.UseLaneFlagsForLaneEnable[Lane]))
                continue
            if not S:
                raise RefUB
            TopFlags, TopUse = S[-1]
            if Mod1 <= 12:
                TopUse = self.UseLaneFlagsForLaneEnable[Lane]
                TopFlags = BooleanOp(Mod1, TopFlags, self.LaneFlags[Lane])
            elif Mod1 == 13:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]
                TopUse, TopFlags = self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane]
            elif Mod1 == 14:
                TopUse, TopFlags = True, True
            else:
                TopUse, TopFlags = True, False
            S[-1] = (TopFlags, TopUse)

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
                self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane] = TopUse, TopFlags
            elif Mod1 <= 12:
                self.UseLaneFlagsForLaneEnable[Lane] = TopUse
                self.LaneFlags[Lane] = BooleanOp(Mod1, self.LaneFlags[Lane], TopFlags)
            elif Mod1 == 13:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]
            elif Mod1 == 14:
                self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane] = True, True
            else:
                self.UseLaneFlagsForLaneEnable[Lane], self.LaneFlags[Lane] = True, False

    def SFPCOMPC(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(VC)
        zero(Mod1)
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            S = self.FlagStack[Lane]
            if Backdoor[Lane]:
                continue
            TopFlags, TopUse = S[-1] if S else (True, True)
            if TopUse and self.UseLaneFlagsForLaneEnable[Lane]:
                self.LaneFlags[Lane] = TopFlags and not self.LaneFlags[Lane]
            else:
                self.LaneFlags[Lane] = False

    # ------------------------------------------------------------------ integer and bit operations
    def lanewise(self, VD: int, op, word: int | None = None) -> None:
        """Run ``op(Lane)`` on each enabled lane if VD < 8 (8..11: nothing; 12..15: the backdoor load of
        ``word``, or RefUnimplemented without it)."""
        if word is None:
            self.backdoor(VD)
        else:
            self.LoadTemplate(VD, word, self.BackdoorLanes(VD))
        if VD >= 8:
            return
        for Lane in [lane for lane in range(32) if self.LaneEnabled(lane)]:
            op(Lane)

    def SFPAND(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 4:
            raise RefUB
        VB = Imm12 if Mod1 & 1 else VD

        def op(Lane):
            self.LReg[VD][Lane] = self.LReg[VB][Lane] & self.LReg[VC][Lane]

        self.lanewise(VD, op, word)

    def SFPOR(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 4:
            raise RefUB
        VB = Imm12 if Mod1 & 1 else VD

        def op(Lane):
            self.LReg[VD][Lane] = self.LReg[VB][Lane] | self.LReg[VC][Lane]

        self.lanewise(VD, op, word)

    def SFPXOR(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(Mod1)

        def op(Lane):
            self.LReg[VD][Lane] = self.LReg[VD][Lane] ^ self.LReg[VC][Lane]

        self.lanewise(VD, op, word)

    def SFPNOT(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        zero(Mod1)

        def op(Lane):
            self.LReg[VD][Lane] = ~self.LReg[VC][Lane] & M32

        self.lanewise(VD, op, word)

    def SFPIADD(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)

        def op(Lane):
            c, b = self.LReg[VC][Lane], self.LReg[VD][Lane]
            if Mod1 & 1:
                r = c + sext(Imm12, 12)
            elif Mod1 & 2:
                r = c - b
            else:
                r = c + b
            self.LReg[VD][Lane] = r & M32
            if not Mod1 & 4:
                self.LaneFlags[Lane] = i32(r & M32) < 0
            if Mod1 & 8:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]

        self.lanewise(VD, op, word)

    def SFPSHFT(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)

        def op(Lane):
            x = self.LReg[VD][Lane]
            Shift = i32(self.LReg[VC][Lane])
            if Mod1 & 1:
                if Mod1 & 4:
                    x = Shift & M32
                Shift = sext(Imm12, 12)
            if Shift >= 0:
                r = (x << (Shift & 31)) & M32
            elif Mod1 & 2:
                r = (i32(x) >> ((-Shift) & 31)) & M32
            else:
                r = x >> ((-Shift) & 31)
            self.LReg[VD][Lane] = r

        self.lanewise(VD, op, word)

    def SFPLZ(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)

        def op(Lane):
            c = self.LReg[VC][Lane]
            if Mod1 & 4:
                c &= 0x7FFFFFFF
            self.LReg[VD][Lane] = clz(c)
            if Mod1 & 2:
                self.LaneFlags[Lane] = c != 0
            if Mod1 & 8:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]

        self.lanewise(VD, op, word)

    def SFPABS(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)

        def op(Lane):
            x = self.LReg[VC][Lane]
            if x >= 0x80000000:
                if Mod1 & 1:
                    if not x > 0xFF800000:
                        x &= 0x7FFFFFFF
                else:
                    x = (-x) & M32
            self.LReg[VD][Lane] = x

        self.lanewise(VD, op, word)

    def SFPEXEXP(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        Bias = 0 if Mod1 & 1 else 127

        def op(Lane):
            e = ((self.LReg[VC][Lane] >> 23) & 0xFF) - Bias
            self.LReg[VD][Lane] = e & M32
            if Mod1 & 2:
                self.LaneFlags[Lane] = e < 0
            if Mod1 & 8:
                self.LaneFlags[Lane] = not self.LaneFlags[Lane]

        self.lanewise(VD, op, word)

    def SFPEXMAN(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        zero(Imm12)
        Hidden = 0 if Mod1 & 1 else 1 << 23

        def op(Lane):
            self.LReg[VD][Lane] = Hidden + (self.LReg[VC][Lane] & 0x7FFFFF)

        self.lanewise(VD, op, word)

    def SFPSETEXP(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 8:
            raise RefUB

        def op(Lane):
            c, b = self.LReg[VC][Lane], self.LReg[VD][Lane]
            Exp = Imm12 if Mod1 & 1 else (b >> 23) & 0xFF if Mod1 & 2 else b & 0xFF
            self.LReg[VD][Lane] = (c & 0x80000000) | (Exp << 23) | (c & 0x7FFFFF)

        self.lanewise(VD, op, word)

    def SFPSETMAN(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)

        def op(Lane):
            c, b = self.LReg[VC][Lane], self.LReg[VD][Lane]
            Man = Imm12 << 11 if Mod1 & 1 else b & 0x7FFFFF
            self.LReg[VD][Lane] = (c & 0xFF800000) | Man

        self.lanewise(VD, op, word)

    def SFPSETSGN(self, word: int) -> None:
        Imm12, VC, VD, Mod1 = fields(word)
        if Imm12 >> 1:
            raise RefUB

        def op(Lane):
            c, b = self.LReg[VC][Lane], self.LReg[VD][Lane]
            Sign = Imm12 if Mod1 & 1 else b >> 31
            self.LReg[VD][Lane] = (Sign << 31) | (c & 0x7FFFFFFF)

        self.lanewise(VD, op, word)
