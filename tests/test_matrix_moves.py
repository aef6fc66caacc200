"""MOVA2D, MOVB2D, MOVD2A, MOVD2B and MOVB2A against a reference written from the pages' pseudocode.

The reference follows tt-isa-documentation WormholeB0 MOVA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md,
the jasondavies fork's MOVB2A.md, RWCs.md (ApplyAddrMod) and BlackholeA0 Dst.md (Adj16 / Adj32),
line by line, over Python lists. Words are decoded by bit position, with the Blackhole placement that
matrix_moves.py documents: UseDst32bLo bit 23, SrcRow / SrcARow bits 17..22, AddrMod bits 14..16,
Move8Rows / Move4Rows bit 13 (MOVB2D: Move4Rows 13, Broadcast1RowTo8 12, BroadcastCol0 11), DstRow /
SrcBRow from bit 0. It takes the readings matrix_moves.py documents where the pages are open: the
corrected ShuffleTF32 mask, SrcAFmt codes 12 / 13 undefined in MOVD2A / MOVD2B, undefined Dst reading
as zero and partly written rows becoming defined with the value seen, and ApplyAddrMod's Blackhole
ExtraAddrModBit / AB2 cases unimplemented (adc.py).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
from dst_reference import Adj16, Adj32, bits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import RefUB, RefUnimplemented, emulator_outcome, reference_outcome

from tensixsim import Tile
from tensixsim.tensix import matrix_moves
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MATRIX, UNPACKERS = 0, 1  # SrcClient values as regs.py stores them

FP32, FP16, BFP8a, BFP4a, TF32, BF16, BFP8, BFP4 = range(8)
INT32, INT16, FP8, BFP2a, INT8, BFP2 = 8, 9, 10, 11, 14, 15


def execute(word: int, thread: int):
    ctx = Context(COPRO, thread, 0, ISA.decode(word), f"trisc{thread}", 0)
    return lookup("blackhole", ctx.instruction.name)(ctx, **ctx.instruction.fields)


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
    SignHiMan = x & 0x7F800  # the page prints 0x3fc000: see matrix_moves.py
    Exp = x & 0x0007F8
    LoMan = x & 0x000007
    return SignHiMan | (LoMan << 8) | (Exp >> 3)


class Ref:
    """The pages' state as lists; Dst's Undefined as a set of DstBits rows."""

    def __init__(self, regs: RegFiles, config: dict, thread: int):
        self.SrcA = [[[int(v) for v in row] for row in regs.srca[b]] for b in range(2)]
        self.SrcB = [[[int(v) for v in row] for row in regs.srcb[b]] for b in range(2)]
        self.SrcAClient = [int(regs.src_client[0, b]) for b in range(2)]
        self.SrcBClient = [int(regs.src_client[1, b]) for b in range(2)]
        self.SrcABank, self.SrcBBank = int(regs.matrix_bank[0]), int(regs.matrix_bank[1])
        self.DstBits = [[int(v) for v in row] for row in regs.dst]
        self.Undefined = {r for r in range(1024) if not regs.dst_row_valid[r]}
        self.c = config
        self.RWC = dict(config["rwc"])
        self.Blocked = config["blocked"]
        self.waited = False
        self.thread = thread

    # Dst views (BlackholeA0 Dst.md), undefined rows reading as zero.
    def Dst16Read(self, Row: int, Col: int) -> int:
        a = Adj16(Row, self.c["remap"])
        return 0 if a in self.Undefined else self.DstBits[a][Col]

    def Dst32Read(self, Row: int, Col: int) -> int:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        if a in self.Undefined or a + 8 in self.Undefined:
            return 0
        return (self.DstBits[a][Col] << 16) | self.DstBits[a + 8][Col]

    def Dst16Define(self, Row: int) -> None:
        """A written row becomes defined; its other columns keep what a reader saw."""
        seen = [self.Dst16Read(Row, col) for col in range(16)]
        a = Adj16(Row, self.c["remap"])
        self.DstBits[a] = seen
        self.Undefined.discard(a)

    def Dst32Define(self, Row: int) -> None:
        seen = [self.Dst32Read(Row, col) for col in range(16)]
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        self.DstBits[a] = [v >> 16 for v in seen]
        self.DstBits[a + 8] = [v & 0xFFFF for v in seen]
        self.Undefined -= {a, a + 8}

    def Dst16Write(self, Row: int, Col: int, Val: int) -> None:
        self.DstBits[Adj16(Row, self.c["remap"])][Col] = Val & 0xFFFF

    def Dst32Write(self, Row: int, Col: int, Val: int) -> None:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        self.DstBits[a][Col] = (Val >> 16) & 0xFFFF
        self.DstBits[a + 8][Col] = Val & 0xFFFF

    def SrcAFmt(self) -> int:
        c = self.c
        return c["SrcA_val"] if c["SrcA_override"] else c["REG0_SrcA"]

    def ApplyAddrMod(self, Index: int) -> None:
        RWC, m = self.RWC, self.c["addr_mods"][Index]
        if RWC["ExtraAddrModBit"] or m["AB2_SrcAIncr"] or m["AB2_SrcBIncr"]:
            raise RefUnimplemented
        if m["SrcAClear"]:
            RWC["SrcA"] = RWC["SrcA_Cr"] = 0
        elif m["SrcACR"]:
            RWC["SrcA_Cr"] = (RWC["SrcA_Cr"] + m["SrcAIncr"]) % 64
            RWC["SrcA"] = RWC["SrcA_Cr"]
        else:
            RWC["SrcA"] = (RWC["SrcA"] + m["SrcAIncr"]) % 64
        if m["SrcBClear"]:
            RWC["SrcB"] = RWC["SrcB_Cr"] = 0
        elif m["SrcBCR"]:
            RWC["SrcB_Cr"] = (RWC["SrcB_Cr"] + m["SrcBIncr"]) % 64
            RWC["SrcB"] = RWC["SrcB_Cr"]
        else:
            RWC["SrcB"] = (RWC["SrcB"] + m["SrcBIncr"]) % 64
        if m["DestClear"]:
            RWC["Dst"] = RWC["Dst_Cr"] = 0
        elif m["DestCToCR"]:
            RWC["Dst"] = (RWC["Dst"] + m["DestIncr"]) % 1024
            RWC["Dst_Cr"] = RWC["Dst"]
        elif m["DestCR"]:
            RWC["Dst_Cr"] = (RWC["Dst_Cr"] + m["DestIncr"]) % 1024
            RWC["Dst"] = RWC["Dst_Cr"]
        else:
            RWC["Dst"] = (RWC["Dst"] + m["DestIncr"]) % 1024
        if m["FidelityClear"]:
            RWC["FidelityPhase"] = 0
        else:
            RWC["FidelityPhase"] = (RWC["FidelityPhase"] + m["FidelityIncr"]) % 4
        if m["BiasClear"]:
            RWC["ExtraAddrModBit"] = 0
        elif m["BiasIncr"] & 3:
            RWC["ExtraAddrModBit"] = (RWC["ExtraAddrModBit"] + 1) % 2

    # ------------------------------------------------------------------ Src -> Dst
    def _to_dst(self, word: int, FromB: bool) -> None:
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
        else:
            Move8Rows, DstRow = bits(word, 13, 13), bits(word, 0, 9)
            if bits(word, 12, 12) or bits(word, 10, 11):
                raise RefUB
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
    def _from_dst(self, word: int, ToB: bool) -> None:
        UseDst32bLo, SrcRow, AddrMod = bits(word, 23, 23), bits(word, 17, 22), bits(word, 14, 16)
        Move4Rows, DstRow = bits(word, 13, 13), bits(word, 0, 9)
        if bits(word, 12, 12) or bits(word, 10, 11):
            raise RefUB
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

    def MOVB2A(self, word: int) -> None:
        SrcARow, AddrMod, Move4Rows, SrcBRow = (
            bits(word, 17, 22),
            bits(word, 14, 16),
            bits(word, 13, 13),
            bits(word, 0, 5),
        )
        if bits(word, 23, 23) or bits(word, 12, 12) or bits(word, 6, 11):
            raise RefUB
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

RWC_NAMES = {
    "SrcA": "srca",
    "SrcA_Cr": "srca_cr",
    "SrcB": "srcb",
    "SrcB_Cr": "srcb_cr",
    "Dst": "dst",
    "Dst_Cr": "dst_cr",
    "FidelityPhase": "fidelity_phase",
    "ExtraAddrModBit": "extra_addr_mod_bit",
}
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


def rare(value: int = 1) -> st.SearchStrategy[int]:
    return st.sampled_from([0] * 15 + [value])


@st.composite
def addr_mods(draw) -> dict:
    m = {name: draw(st.integers(0, (1 << w) - 1)) for name, w in (AB_FIELDS | DST_FIELDS).items()}
    m |= {"BiasIncr": draw(rare(1)), "BiasClear": draw(st.integers(0, 1))}
    m |= {"AB2_SrcAIncr": draw(rare()), "AB2_SrcBIncr": draw(rare())}
    return m


@st.composite
def configurations(draw) -> dict:
    return {
        "remap": draw(st.booleans()),
        "swizzle": draw(st.booleans()),
        "Fp32_enabled": draw(st.integers(0, 1)),
        "INT8_math_enabled": draw(st.integers(0, 1)),
        "MATH_Offset": draw(st.integers(0, 4095)),
        "DEST_REGW_BASE": draw(st.integers(0, 0xFFFF)),
        "SrcA_override": draw(st.integers(0, 1)),
        "SrcA_val": draw(st.integers(0, 15)),
        "REG0_SrcA": draw(st.integers(0, 15)),
        "FP16A_FORCE_Enable": draw(st.sampled_from([0, 0, 0, 1])),
        "Zero_Flag_disabled_src": draw(st.integers(0, 1)),
        "state": draw(st.integers(0, 1)),
        "addr_mods": draw(st.lists(addr_mods(), min_size=8, max_size=8)),
        "rwc": {
            "SrcA": draw(st.integers(0, 63)),
            "SrcA_Cr": draw(st.integers(0, 63)),
            "SrcB": draw(st.integers(0, 63)),
            "SrcB_Cr": draw(st.integers(0, 63)),
            "Dst": draw(st.integers(0, 1023)),
            "Dst_Cr": draw(st.integers(0, 1023)),
            "FidelityPhase": draw(st.integers(0, 3)),
            "ExtraAddrModBit": draw(rare()),
        },
        "blocked": draw(st.one_of(st.just([False] * 16), st.lists(st.booleans(), min_size=16, max_size=16))),
    }


def load(seed: int, config: dict, thread: int) -> Ref:
    """Random register contents and the configuration given, in the coprocessor."""
    rng = np.random.default_rng(seed)
    regs = RegFiles.new(COPRO.arch)
    for src in (regs.srca, regs.srcb):
        src[:] = rng.integers(0, 1 << 19, src.shape)
        src[rng.random(src.shape) < 0.2] &= np.uint32(0x7FF00)  # zero exponents: the flush path
    regs.src_client[:] = rng.choice([MATRIX, MATRIX, MATRIX, UNPACKERS], (2, 2))
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.8
    COPRO.regs = regs
    cfg = COPRO.config
    cfg.config[:] = 0
    cfg.thread[:] = 0
    state = config["state"]
    for name, key in (
        ("DEST_ACCESS_CFG_remap_addrs", "remap"),
        ("DEST_ACCESS_CFG_swizzle_32b", "swizzle"),
        ("ALU_ACC_CTRL_Fp32_enabled", "Fp32_enabled"),
        ("ALU_ACC_CTRL_INT8_math_enabled", "INT8_math_enabled"),
        ("ALU_ACC_CTRL_Zero_Flag_disabled_src", "Zero_Flag_disabled_src"),
        ("DEST_REGW_BASE_Base", "DEST_REGW_BASE"),
        ("ALU_FORMAT_SPEC_REG_SrcA_override", "SrcA_override"),
        ("ALU_FORMAT_SPEC_REG_SrcA_val", "SrcA_val"),
        ("ALU_FORMAT_SPEC_REG0_SrcA", "REG0_SrcA"),
    ):
        cfg.write_field(name, state, int(config[key]))
    cfg.write_thread_field("CFG_STATE_ID_StateID", thread, state)
    cfg.write_thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread, config["MATH_Offset"])
    cfg.write_thread_field("FP16A_FORCE_Enable", thread, config["FP16A_FORCE_Enable"])
    for slot, m in enumerate(config["addr_mods"]):
        for kind, names in (("AB", AB_FIELDS), ("DST", DST_FIELDS), ("BIAS", BIAS_FIELDS)):
            for name in names:
                cfg.write_thread_field(f"ADDR_MOD_{kind}_SEC{slot}_{name}", thread, m[name])
        for name in ("SrcAIncr", "SrcBIncr"):
            cfg.write_thread_field(f"ADDR_MOD_AB2_SEC{slot}_{name}", thread, m[f"AB2_{name}"])
    adc = COPRO.adc
    for attr in RWC_NAMES.values():
        getattr(adc, attr)[:] = 0
    for key, attr in RWC_NAMES.items():
        getattr(adc, attr)[thread] = config["rwc"][key]
    return Ref(regs, config, thread)


def assert_matches(ref: Ref) -> None:
    regs = COPRO.regs
    assert regs.srca.tolist() == ref.SrcA
    assert regs.srcb.tolist() == ref.SrcB
    assert regs.src_client.tolist() == [ref.SrcAClient, ref.SrcBClient]
    assert regs.matrix_bank.tolist() == [ref.SrcABank, ref.SrcBBank]
    assert regs.dst.tolist() == ref.DstBits
    assert {r for r in range(1024) if not regs.dst_row_valid[r]} == ref.Undefined
    for key, attr in RWC_NAMES.items():
        values = getattr(COPRO.adc, attr).tolist()
        assert values[ref.thread] == ref.RWC[key], key
        assert values[: ref.thread] + values[ref.thread + 1 :] == [0, 0]


def check(name: str, word: int, seed: int, config: dict, thread: int) -> str:
    ref = load(seed, config, thread)
    before = COPRO.regs.copy()
    rwcs_before = {attr: getattr(COPRO.adc, attr).copy() for attr in RWC_NAMES.values()}
    expected = reference_outcome(lambda: getattr(ref, name)(word))
    if expected == "retire" and ref.waited:
        expected = "wait"
    waited = []

    def run():
        outcome = execute(word, thread)
        if isinstance(outcome, Wait):
            waited.append(outcome)
            return Retire()
        return outcome

    saved = matrix_moves.blocked_columns
    matrix_moves.blocked_columns = lambda copro: np.array(config["blocked"], bool)
    try:
        got = emulator_outcome(run)
    finally:
        matrix_moves.blocked_columns = saved
    if waited:
        got = "wait"
    assert got == expected
    if got == "retire":
        assert_matches(ref)
    else:  # nothing changed
        assert COPRO.regs.equals(before)
        for attr, values in rwcs_before.items():
            assert np.array_equal(getattr(COPRO.adc, attr), values)
    return got


def words(name: str, fields: dict[str, st.SearchStrategy[int]]) -> st.SearchStrategy[int]:
    spec = ISA.by_name[name]
    return st.fixed_dictionaries(
        {f.name: fields.get(f.name, st.integers(0, (1 << f.width) - 1)) for f in spec.fields}
    ).map(lambda values: ISA.encode(name, **values))


def mostly(documented: st.SearchStrategy[int], width: int) -> st.SearchStrategy[int]:
    return st.one_of(*[documented] * 7, st.integers(0, (1 << width) - 1))


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
SEEDS = st.integers(0, 2**32 - 1)
THREADS = st.integers(0, 2)


def _test(name: str):
    @SETTINGS
    @given(word=WORDS[name], seed=SEEDS, config=configurations(), thread=THREADS)
    def test(word: int, seed: int, config: dict, thread: int) -> None:
        check(name, word, seed, config, thread)

    test.__name__ = f"test_{name.lower()}_matches_reference"
    return test


test_mova2d_matches_reference = _test("MOVA2D")
test_movb2d_matches_reference = _test("MOVB2D")
test_movd2a_matches_reference = _test("MOVD2A")
test_movd2b_matches_reference = _test("MOVD2B")
test_movb2a_matches_reference = _test("MOVB2A")


# ---------------------------------------------------------------------------- pinned cases


def plain_config(**changes) -> dict:
    config = {
        "remap": False,
        "swizzle": False,
        "Fp32_enabled": 0,
        "INT8_math_enabled": 0,
        "MATH_Offset": 0,
        "DEST_REGW_BASE": 0,
        "SrcA_override": 0,
        "SrcA_val": 0,
        "REG0_SrcA": BF16,
        "FP16A_FORCE_Enable": 0,
        "Zero_Flag_disabled_src": 1,
        "state": 0,
        "addr_mods": [
            dict.fromkeys(
                list(AB_FIELDS) + list(DST_FIELDS) + list(BIAS_FIELDS) + ["AB2_SrcAIncr", "AB2_SrcBIncr"], 0
            )
        ]
        * 8,
        "rwc": dict.fromkeys(RWC_NAMES, 0),
        "blocked": [False] * 16,
    }
    return config | changes


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
    execute(ISA.encode("MOVD2A", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=5), 1)
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
