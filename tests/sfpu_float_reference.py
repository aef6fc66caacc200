"""A reference for the vector unit's floating-point instructions, from the BlackholeA0 pages, per lane
over Python ints.

``fma_bh`` follows the bit-exact multiply-add model that SFPMAD.md points to (``fma_model_bh``, with
its 32- and 64-bit C integer widths spelled out); ``SfpuFloatRef`` adds to ``SfpuRef`` one method per
instruction, each the page's functional model with the operands cut out of the word by the BlackholeA0
encoding diagrams. Outcome boundary as in sfpu_reference.py: RefUB for set bits outside a documented
operand; the backdoor load (VD >= 12, DISABLE_BACKDOOR_LOAD clear) writes the word to the lane's
``InstructionTemplate[VD - 12]`` instead of the lane work.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806, SIM108

from __future__ import annotations

import struct

from dst_reference import bits
from outcomes import RefUB
from sfpu_reference import SfpuRef

M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


def clz32(v: int) -> int:
    return 32 - v.bit_length()


def fma_bh(x: int, y: int, z: int) -> int:
    """``x * y + z`` of FP32 bit patterns, Blackhole's SFPMAD."""

    def unpack(v: int) -> tuple[int, int]:
        e = (v >> 23) & 255
        m = (v & 0x7FFFFF) ^ 0x800000
        if e == 0:  # flush denormals
            m = 0
        return e, m

    x_e, x_m = unpack(x)
    y_e, y_m = unpack(y)
    z_e, z_m = unpack(z)
    z_sign = z & 0x80000000
    p_sign = (x ^ y) & 0x80000000
    p_m = x_m * y_m  # uint64_t
    p_e = x_e + y_e - 23 - 127
    p_m <<= 3
    z_m <<= 3
    p_m = (p_m >> 23) | int((p_m & 0x7FFFFF) != 0)
    p_e += 23
    if x_e == 255 or y_e == 255 or p_e >= 255 or z_e == 255:
        if (
            (x_e == 255 and (x_m != 0x800000 or y_m == 0))
            or (y_e == 255 and (y_m != 0x800000 or x_m == 0))
            or (z_e == 255 and z_m != 0x4000000)
            or (z_e == 255 and (x_e == 255 or y_e == 255) and z_sign != p_sign)
        ):
            return 0x7FC00000
        if z_e == 255:
            return z
        return p_sign | 0x7F800000
    if p_m == 0 or p_e < 0:
        return z if z_m else z_sign & p_sign

    def semi_sticky_shift(var: int, s: int, width: int) -> int:
        if s >= width:
            return 0
        orig = var
        var >>= s
        if var:
            var |= int(((var << s) & ((1 << width) - 1)) != orig)
        return var

    r_e = p_e if p_e > z_e else z_e
    if p_e < r_e:
        p_m = semi_sticky_shift(p_m, r_e - p_e, 64)
    if z_e < r_e:
        z_m = semi_sticky_shift(z_m, r_e - z_e, 32)
    r_sign = p_sign if p_m >= z_m else z_sign
    if z_sign != r_sign:
        z_m = ~z_m & M32
    if p_sign != r_sign:
        p_m = ~p_m & M64
    r_m = (z_m + p_m + int(p_sign != z_sign)) & M32  # uint32_t
    if r_m == 0:
        return z_sign & p_sign
    n = 5 - clz32(r_m)
    r_e += n
    if r_e >= 255:
        return r_sign | 0x7F800000
    if r_e <= 0:
        n += 1
        r_e = 0
    if n <= 0:
        r_m = (r_m << -n) & M32
    else:
        r_m = (r_m >> n) | int((r_m & (n | 1)) != 0)
    r = ((r_e << 23) + ((r_m >> 3) & 0x7FFFFF)) & M32
    r += int(((r_m & 7) + (r & 1)) > 4)
    if not (r >> 23):
        r = 0
    return r_sign | r


def BF16ToFP32(x: int) -> int:
    return x << 16


def Lut8ToFp32(x: int) -> int:
    if x == 0xFF:
        return 0
    Sign, Exp, Man = x >> 7, (x >> 4) & 7, x & 0xF
    return (Sign << 31) | ((127 - Exp) << 23) | (Man << 19)


def Lut16ToFp32(x: int) -> int:
    Sign, Exp, Man = x >> 15, (x >> 10) & 0x1F, x & 0x3FF
    return (Sign << 31) | ((0 if Exp == 0x1F else 112 + Exp) << 23) | (Man << 13)


def fabsf(x: int) -> int:
    return x & 0x7FFFFFFF


def copysignf(d: int, s: int) -> int:
    return (d & 0x7FFFFFFF) | (s & 0x80000000)


def less(a: int, b: float) -> bool:
    """``a < b`` for FP32 bits ``a`` and a non-negative threshold ``b`` (float compare)."""

    value = struct.unpack("<f", struct.pack("<I", a))[0]
    return value < b  # NaN compares false


def Mul24ShiftAdd(p_m: int, z: int) -> int:
    z_e = (z >> 23) & 0xFF
    if z_e:
        p_e = 129
        r_e = p_e if p_e > z_e else z_e
        s = (r_e - z_e) & 31
        z_m = (1 << 23) + (z & 0x7FFFFF)
        z_m_grs = z_m << 3
        p_m >>= (r_e - p_e) & 31
        z_m = z_m_grs >> s
        if z_m:
            p_m += z_m
            p_m += int(((z_m << s) ^ z_m_grs) > 0xFFFF) << 16
            p_m &= 0x7FFFFF
    return p_m


# The pages' tables, as data.
# fmt: off
RECIP_LUT = [
    127, 125, 123, 121, 119, 117, 116, 114, 112, 110, 109, 107, 105, 104, 102, 100, 99, 97, 96, 94,
    93, 91, 90, 88, 87, 85, 84, 83, 81, 80, 79, 77, 76, 75, 74, 72, 71, 70, 69, 68,
    66, 65, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,
    46, 45, 44, 43, 42, 41, 40, 40, 39, 38, 37, 36, 35, 35, 34, 33, 32, 31, 31, 30,
    29, 28, 28, 27, 26, 25, 25, 24, 23, 23, 22, 21, 21, 20, 19, 19, 18, 17, 17, 16,
    15, 15, 14, 14, 13, 12, 12, 11, 11, 10, 9, 9, 8, 8, 7, 7, 6, 5, 5, 4,
    4, 3, 3, 2, 2, 1, 1, 0,
]
EXP_LUT = [
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
    9, 9, 9, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11,
    11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12, 12, 12,
    12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13,
    13, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 17, 17, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 18, 19, 19,
    19, 19, 19, 19, 19, 20, 20, 20, 20, 20, 20, 20, 21, 21, 21, 21, 21, 21, 21, 22,
    22, 22, 22, 22, 22, 22, 23, 23, 23, 23, 23, 23, 24, 24, 24, 24, 24, 24, 24, 25,
    25, 25, 25, 25, 25, 25, 26, 26, 26, 26, 26, 26, 27, 27, 27, 27, 27, 27, 27, 28,
    28, 28, 28, 28, 28, 28, 29, 29, 29, 29, 29, 29, 30, 30, 30, 30, 30, 30, 30, 31,
    31, 31, 31, 31, 31, 32, 32, 32, 32, 32, 32, 33, 33, 33, 33, 33, 33, 33, 34, 34,
    34, 34, 34, 34, 35, 35, 35, 35, 35, 35, 36, 36, 36, 36, 36, 37, 37, 37, 38, 38,
    38, 39, 39, 39, 40, 40, 40, 41, 41, 41, 42, 42, 42, 43, 43, 43, 44, 44, 44, 45,
    45, 45, 46, 46, 46, 47, 47, 47, 48, 48, 49, 49, 49, 50, 50, 50, 51, 51, 51, 52,
    52, 52, 53, 53, 53, 54, 54, 54, 55, 55, 56, 56, 56, 57, 57, 57, 58, 58, 58, 59,
    59, 60, 60, 60, 61, 61, 61, 62, 62, 63, 63, 63, 64, 64, 64, 65, 65, 66, 66, 66,
    67, 67, 67, 68, 68, 69, 69, 69, 70, 70, 71, 71, 71, 72, 72, 72, 73, 73, 74, 74,
    74, 75, 75, 76, 76, 76, 77, 77, 78, 78, 78, 79, 79, 80, 80, 80, 81, 81, 82, 82,
    83, 83, 84, 85, 86, 87, 88, 88, 89, 90, 91, 92, 93, 94, 94, 95, 96, 97, 98, 99,
    100, 101, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 113, 114, 115, 116, 117,
    118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4,
    5, 5, 6, 6, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 15, 15,
    16, 16, 17, 17, 18, 19, 19, 20, 20, 21, 21, 22, 23, 23, 24, 24, 25, 26, 26, 27,
    27, 28, 29, 29, 30, 31, 31, 32, 32, 33, 34, 34, 35, 36, 36, 37, 38, 38, 39, 39,
    40, 41, 41, 42, 43, 43, 44, 45, 45, 47, 48, 50, 51, 52, 54, 55, 57, 58, 60, 61,
    63, 64, 66, 67, 69, 70, 72, 73, 75, 76, 78, 80, 81, 83, 85, 86, 88, 90, 91, 93,
    95, 97, 98, 100, 102, 104, 106, 107, 109, 111, 113, 115, 117, 119, 121, 123, 125, 127, 128, 129,
    130, 131, 132, 133, 134, 135, 136, 137, 139, 140, 141, 142, 143, 144, 145, 146, 147, 149, 150, 151,
    152, 153, 155, 156, 157, 158, 159, 161, 162, 163, 165, 166, 167, 168, 170, 171, 172, 174, 175, 177,
    178, 179, 181, 182, 184, 185, 187, 188, 189, 191, 192, 194, 196, 197, 199, 200, 202, 203, 205, 207,
    208, 210, 211, 213, 215, 216, 218, 220, 222, 223, 225, 227, 229, 230, 232, 234,
]
# fmt: on


def ApproxRecip(x: int) -> int:
    if x < 0x00800000:
        return 0x7F800000
    if x < 0x7E800000:
        return ((253 - (x >> 23)) << 23) | (RECIP_LUT[(x >> 16) & 0x7F] << 16)
    return 0


def ApproxExp(x: int) -> int:
    if x < 0x00800000:
        return 0x3F800000
    if x < 0x3C800000:
        return 0x3F810000 | (x & 0xFFFF)
    if x < 0x3F320000:
        return 0x3F800000 | (EXP_LUT[(x >> 16) - 0x3C80] << 16) | (x & 0xFFFF)
    if x < 0x40000000:
        return 0x40000000 | (EXP_LUT[(x >> 16) - 0x3C80] << 16) | (x & 0xFFFF)
    return 0x40800000 | (x & 0xFFFF)


def SignMagIsSmaller(C: int, D: int) -> bool:
    def i32(v: int) -> int:
        return v - (1 << 32) if v & 0x80000000 else v

    C ^= ((i32(C) >> 30) & M32) >> 1
    D ^= ((i32(D) >> 30) & M32) >> 1
    return i32(C) < i32(D)


class SfpuFloatRef(SfpuRef):
    """SfpuRef with the floating-point instructions."""

    def mad_lanes(self, VD: int, word: int) -> list[int]:
        """The lanes a MAD-sub-unit instruction computes on, after the backdoor load of the others."""
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        return [Lane for Lane in range(32) if not Backdoor[Lane] and self.LaneEnabled(Lane)]

    def mad_write(self, Lane: int, VD: int, indirect: bool, d: int) -> None:
        vd = self.LReg[7][Lane] & 15 if indirect and VD != 16 else VD
        if vd < 8 or vd == 16:
            self.LReg[vd][Lane] = d

    def SFPMAD(self, word: int) -> None:
        VA, VB, VC, VD, Mod1 = (
            bits(word, 16, 23),
            bits(word, 12, 15),
            bits(word, 8, 11),
            bits(word, 4, 7),
            bits(word, 0, 3),
        )
        if VA >> 4:
            raise RefUB
        for Lane in self.mad_lanes(VD, word):
            va = self.LReg[7][Lane] & 15 if Mod1 & 4 else VA
            a, b, c = self.LReg[va][Lane], self.LReg[VB][Lane], self.LReg[VC][Lane]
            if Mod1 & 1:
                b ^= 0x80000000
            if Mod1 & 2:
                c ^= 0x80000000
            self.mad_write(Lane, VD, bool(Mod1 & 8), fma_bh(a, b, c))

    SFPADD = SFPMAD
    SFPMUL = SFPMAD

    def SFPADDI(self, word: int) -> None:
        Imm16, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        VC = VD
        for Lane in self.mad_lanes(VD, word):
            c = self.LReg[VC][Lane] ^ (0x80000000 if Mod1 & 2 else 0)
            self.mad_write(Lane, VD, bool(Mod1 & 8), fma_bh(BF16ToFP32(Imm16), 0x3F800000, c))

    def SFPMULI(self, word: int) -> None:
        Imm16, VD, Mod1 = bits(word, 8, 23), bits(word, 4, 7), bits(word, 0, 3)
        VC = VD
        for Lane in self.mad_lanes(VD, word):
            c = self.LReg[VC][Lane] ^ (0x80000000 if Mod1 & 2 else 0)
            self.mad_write(Lane, VD, bool(Mod1 & 8), fma_bh(BF16ToFP32(Imm16), c, 0))

    def SFPMUL24(self, word: int) -> None:
        VA, VB, VC, VD, Mod1 = (
            bits(word, 16, 23),
            bits(word, 12, 15),
            bits(word, 8, 11),
            bits(word, 4, 7),
            bits(word, 0, 3),
        )
        if VA >> 4:
            raise RefUB
        for Lane in self.mad_lanes(VD, word):
            va = self.LReg[7][Lane] & 15 if Mod1 & 4 else VA
            a, b = self.LReg[va][Lane], self.LReg[VB][Lane]
            if Mod1 & 1:
                d = ((a & 0x7FFFFF) * (b & 0x7FFFFF)) >> 23
            else:
                d = ((a * b) & M32) & 0x7FFFFF
            d = Mul24ShiftAdd(d, self.LReg[VC][Lane])
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    def SFPLUT(self, word: int) -> None:
        VD, Mod0, Rest = bits(word, 20, 23), bits(word, 16, 19), bits(word, 0, 15)
        if Rest:
            raise RefUB
        for Lane in self.mad_lanes(VD, word):
            l3 = self.LReg[3][Lane]
            b = fabsf(l3)
            coeffs = self.LReg[0 if less(b, 1.0) else 1 if less(b, 2.0) else 2][Lane]
            a, c = Lut8ToFp32((coeffs >> 8) & 0xFF), Lut8ToFp32(coeffs & 0xFF)
            d = fma_bh(a, b, c)
            if Mod0 & 4:
                d = copysignf(d, l3)
            self.mad_write(Lane, VD, bool(Mod0 & 8), d)

    def SFPLUTFP32(self, word: int) -> None:
        VD, Mod1, Mirror = bits(word, 4, 7), bits(word, 0, 3), bits(word, 16, 19)
        if bits(word, 8, 15) or bits(word, 20, 23):
            raise RefUB
        del Mirror  # scheduling only
        for Lane in self.mad_lanes(VD, word):
            l3 = self.LReg[3][Lane]
            b = fabsf(l3)
            i = 0 if less(b, 1.0) else 1 if less(b, 2.0) else 2
            if Mod1 & 2:
                if (Mod1 & 10) == 10:
                    a = Lut16ToFp32((self.LReg[i][Lane] >> 16) & 0xFFFF)
                    c = Lut16ToFp32(self.LReg[i][Lane] & 0xFFFF)
                else:
                    cut = 4.0 if (Mod1 & 3) == 3 else 3.0
                    if less(b, 0.5):
                        j = 0
                    elif less(b, 1.0):
                        j = 16
                    elif less(b, 1.5):
                        j = 0
                    elif less(b, 2.0):
                        j = 16
                    elif less(b, cut):
                        j = 0
                    else:
                        j = 16
                    a = Lut16ToFp32((self.LReg[0 + i][Lane] >> j) & 0xFFFF)
                    c = Lut16ToFp32((self.LReg[4 + i][Lane] >> j) & 0xFFFF)
            else:
                a, c = self.LReg[0 + i][Lane], self.LReg[4 + i][Lane]
            d = fma_bh(a, b, c)
            if Mod1 & 4:
                d = copysignf(d, l3)
            self.mad_write(Lane, VD, bool(Mod1 & 8), d)

    def SFPDIVP2(self, word: int) -> None:
        Imm, VC, VD, Mod1 = bits(word, 12, 23), bits(word, 8, 11), bits(word, 4, 7), bits(word, 0, 3)
        if Imm >> 8:
            raise RefUB
        Imm8 = Imm

        def op(Lane):
            c = self.LReg[VC][Lane]
            Sign, Exp, Man = c >> 31, (c >> 23) & 0xFF, c & 0x7FFFFF
            if Mod1 & 1:
                if Exp != 255:
                    Exp = (Exp + Imm8) & 0xFF
            else:
                Exp = Imm8
            self.LReg[VD][Lane] = (Sign << 31) | (Exp << 23) | Man

        self.lanewise(VD, op, word)

    def SFPARECIP(self, word: int) -> None:
        Imm, VC, VD, Mod1 = bits(word, 12, 23), bits(word, 8, 11), bits(word, 4, 7), bits(word, 0, 3)
        if Imm >> 4:
            raise RefUB
        VB = Imm

        def op(Lane):
            x = self.LReg[VC][Lane]
            Sign = x & 0x80000000
            if Mod1 == 0:
                x = Sign + ApproxRecip(x - Sign)
            elif Mod1 == 1:
                if self.LReg[VB][Lane] & 0x80000000:  # .i32 < 0
                    x = ApproxRecip(x - Sign)
            else:
                x = Sign + ApproxExp(x - Sign)
            self.LReg[VD][Lane] = x

        self.lanewise(VD, op, word)

    def compare(self, word: int, le: bool) -> None:
        Imm, VC, VD, Mod1 = bits(word, 12, 23), bits(word, 8, 11), bits(word, 4, 7), bits(word, 0, 3)
        if Imm:
            raise RefUB
        VB = VD
        Backdoor = self.BackdoorLanes(VD)
        self.LoadTemplate(VD, word, Backdoor)
        for Lane in range(32):
            if Backdoor[Lane]:
                continue
            r = SignMagIsSmaller(self.LReg[VC][Lane], self.LReg[VB][Lane])
            if le:
                r = not r
            if self.LaneEnabled(Lane):
                if Mod1 & 8 and (VD < 8 or VD == 16):
                    self.LReg[VD][Lane] = M32 if r else 0
                if Mod1 & 1:
                    self.LaneFlags[Lane] = r
            if Mod1 & 2 and self.FlagStack[Lane]:
                flags, use = self.FlagStack[Lane][-1]
                flags = (flags or r) if Mod1 & 4 else (flags and r)
                self.FlagStack[Lane][-1] = (flags, use)

    def SFPGT(self, word: int) -> None:
        self.compare(word, le=False)

    def SFPLE(self, word: int) -> None:
        self.compare(word, le=True)
