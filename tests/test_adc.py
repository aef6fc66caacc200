"""Address counters: every ADC and RWC instruction, the ADDR_MOD slots and ApplyAddrMod.

The reference model is written from tt-isa-documentation WormholeB0 ADCs.md, RWCs.md and each
instruction's page, and decodes the instruction word itself by the bit positions of the pages'
encoding diagrams (not through the emulator's table), so the table's field split is checked too.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from outcomes import RefUB, emulator_outcome, reference_outcome

from tensixsim import Tile, Unimplemented
from tensixsim.tensix.adc import AdcState, AddrMod, PackAddrMod, addr_mod, apply_addr_mod, pack_addr_mod
from tensixsim.tensix.semantics import Context, lookup

# ADCs.md: uint18_t X, uint13_t Y, uint8_t Z, uint8_t W. RWCs.md: uint10_t Dst, uint6_t SrcA / SrcB,
# uint2_t FidelityPhase, uint1_t ExtraAddrModBit.
WIDTH = {"X": 18, "Y": 13, "Z": 8, "W": 8}
DIMS = "XYZW"
DST_W, SRC_W, FID_W = 10, 6, 2

# Bits inside one of the table's operand slots that no documented operand covers: the emulator
# raises UndefinedBehavior for them (its rule, shared with the scalar unit). Bits outside every slot
# (INCADCXY's 0..5, INCRWC's 0..5) are the decoder's business and ignored.
UNDOCUMENTED_IN_SLOT = {
    "SETADC": 0,
    "SETADCXY": 0x100030,
    "SETADCZW": 0x100030,
    "ADDRCRXY": 0x100030,
    "ADDRCRZW": 0x100030,
    "INCADCXY": 0x100000,
    "INCADCZW": 0x100000,
    "SETADCXX": 0x100000,
    "SETRWC": 0x000030,
    "INCRWC": 0xE00000,
}


def bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


class Ref:
    """``ADCs[3]`` and ``RWCs[3]`` as dicts, changed by the documented pseudocode."""

    UNITS = ("Unpacker0", "Unpacker1", "Packers")

    def __init__(self, adc: AdcState) -> None:
        self.ADCs = {
            (t, u, c, d): [int(adc.value[t, u, c, i]), int(adc.cr[t, u, c, i])]
            for t in range(3)
            for u in range(3)
            for c in range(2)
            for i, d in enumerate(DIMS)
        }
        self.RWCs = [
            {
                "Dst": int(adc.dst[t]),
                "Dst_Cr": int(adc.dst_cr[t]),
                "SrcA": int(adc.srca[t]),
                "SrcA_Cr": int(adc.srca_cr[t]),
                "SrcB": int(adc.srcb[t]),
                "SrcB_Cr": int(adc.srcb_cr[t]),
                "FidelityPhase": int(adc.fidelity_phase[t]),
                "ExtraAddrModBit": int(adc.extra_addr_mod_bit[t]),
            }
            for t in range(3)
        ]

    # ---- ADC helpers: a channel's counter and its _Cr copy, wrapping at the documented width
    def get(self, t, u, c, d, cr=False):
        return self.ADCs[t, u, c, d][1 if cr else 0]

    def put(self, t, u, c, d, value, cr=False):
        self.ADCs[t, u, c, d][1 if cr else 0] = value % (1 << WIDTH[d])

    def targets(self, word: int, CurrentThread: int, thread_override: bool = True):
        PK, U1, U0 = bits(word, 23, 23), bits(word, 22, 22), bits(word, 21, 21)
        ThreadOverride = bits(word, 18, 19) if thread_override else 0
        WhichThread = CurrentThread if ThreadOverride == 0 else ThreadOverride - 1
        units = [u for u, on in enumerate((U0, U1, PK)) if on]
        return WhichThread, units

    def check_slots(self, name: str, word: int) -> None:
        if word & UNDOCUMENTED_IN_SLOT[name]:
            raise RefUB

    def SETADC(self, word: int, CurrentThread: int) -> None:
        NewValue, XYZW, Channel = bits(word, 0, 17), bits(word, 18, 19), bits(word, 20, 20)
        ThreadOverride = NewValue >> 16
        WhichThread = CurrentThread if ThreadOverride == 0 else ThreadOverride - 1
        _, units = self.targets(word, CurrentThread, thread_override=False)
        for u in units:
            d = DIMS[XYZW]
            self.put(WhichThread, u, Channel, d, NewValue)
            self.put(WhichThread, u, Channel, d, NewValue, cr=True)

    def _four(self, word: int):
        """(enable bit, channel, value field) for X0/Y0/X1/Y1 (or Z0/W0/Z1/W1)."""
        return [
            (0, 0, bits(word, 6, 8)),
            (1, 0, bits(word, 9, 11)),
            (2, 1, bits(word, 12, 14)),
            (3, 1, bits(word, 15, 17)),
        ]

    def SETADCXY(self, word, CurrentThread, dims="XY", name="SETADCXY"):
        self.check_slots(name, word)
        t, units = self.targets(word, CurrentThread)
        for u in units:
            for bit, c, Val in self._four(word):
                d = dims[bit & 1]
                if word >> bit & 1:
                    self.put(t, u, c, d, Val)
                    self.put(t, u, c, d, Val, cr=True)

    def SETADCZW(self, word, CurrentThread):
        self.SETADCXY(word, CurrentThread, "ZW", "SETADCZW")

    def INCADCXY(self, word, CurrentThread, dims="XY", name="INCADCXY"):
        self.check_slots(name, word)
        t, units = self.targets(word, CurrentThread)
        for u in units:
            for bit, c, Inc in self._four(word):
                d = dims[bit & 1]
                self.put(t, u, c, d, self.get(t, u, c, d) + Inc)

    def INCADCZW(self, word, CurrentThread):
        self.INCADCXY(word, CurrentThread, "ZW", "INCADCZW")

    def ADDRCRXY(self, word, CurrentThread, dims="XY", name="ADDRCRXY"):
        self.check_slots(name, word)
        t, units = self.targets(word, CurrentThread)
        for u in units:
            for bit, c, Inc in self._four(word):
                d = dims[bit & 1]
                if word >> bit & 1:
                    self.put(t, u, c, d, self.get(t, u, c, d, cr=True) + Inc, cr=True)
                    self.put(t, u, c, d, self.get(t, u, c, d, cr=True))

    def ADDRCRZW(self, word, CurrentThread):
        self.ADDRCRXY(word, CurrentThread, "ZW", "ADDRCRZW")

    def SETADCXX(self, word, CurrentThread):
        self.check_slots("SETADCXX", word)
        X0Val, X1Val = bits(word, 0, 9), bits(word, 10, 19)
        _, units = self.targets(word, CurrentThread, thread_override=False)
        for u in units:
            for c, Val in ((0, X0Val), (1, X1Val)):
                self.put(CurrentThread, u, c, "X", Val)
                self.put(CurrentThread, u, c, "X", Val, cr=True)

    # ---- RWCs
    def SETRWC(self, word, CurrentThread):
        self.check_slots("SETRWC", word)
        SrcA, SrcB, Dst, Fidelity = (bits(word, i, i) for i in range(4))
        SrcAVal, SrcBVal, DstVal = bits(word, 6, 9), bits(word, 10, 13), bits(word, 14, 17)
        SrcACr, SrcBCr, DstCr, DstCtoCr = (bits(word, i, i) for i in range(18, 22))
        # Bits 22/23 flip SrcA/SrcB banks: register-file state, checked in tests/test_regs.py.
        RWC = self.RWCs[CurrentThread]
        if SrcA:
            if SrcACr:
                SrcAVal += RWC["SrcA_Cr"]
            RWC["SrcA"] = RWC["SrcA_Cr"] = SrcAVal % (1 << SRC_W)
        if SrcB:
            if SrcBCr:
                SrcBVal += RWC["SrcB_Cr"]
            RWC["SrcB"] = RWC["SrcB_Cr"] = SrcBVal % (1 << SRC_W)
        if Dst or DstCtoCr:
            if DstCtoCr:
                DstVal += RWC["Dst"]
            elif DstCr:
                DstVal += RWC["Dst_Cr"]
            RWC["Dst"] = RWC["Dst_Cr"] = DstVal % (1 << DST_W)
        if Fidelity:
            RWC["FidelityPhase"] = 0

    def INCRWC(self, word, CurrentThread):
        self.check_slots("INCRWC", word)
        SrcAInc, SrcBInc, DstInc = bits(word, 6, 9), bits(word, 10, 13), bits(word, 14, 17)
        SrcACr, SrcBCr, DstCr = bits(word, 18, 18), bits(word, 19, 19), bits(word, 20, 20)
        RWC = self.RWCs[CurrentThread]
        for name, Inc, Cr, width in (("SrcA", SrcAInc, SrcACr, SRC_W), ("SrcB", SrcBInc, SrcBCr, SRC_W),
                                     ("Dst", DstInc, DstCr, DST_W)):  # fmt: skip
            if Cr:
                RWC[name + "_Cr"] = (RWC[name + "_Cr"] + Inc) % (1 << width)
                RWC[name] = RWC[name + "_Cr"]
            else:
                RWC[name] = (RWC[name] + Inc) % (1 << width)

    def ApplyAddrMod(self, CurrentThread, mod: dict, UpdateFidelityPhase=True):
        """RWCs.md ApplyAddrMod with the slot's fields already looked up."""
        RWC = self.RWCs[CurrentThread]
        if mod["SrcAClear"]:
            RWC["SrcA"] = RWC["SrcA_Cr"] = 0
        elif mod["SrcACR"]:
            RWC["SrcA_Cr"] = (RWC["SrcA_Cr"] + mod["SrcAIncr"]) % (1 << SRC_W)
            RWC["SrcA"] = RWC["SrcA_Cr"]
        else:
            RWC["SrcA"] = (RWC["SrcA"] + mod["SrcAIncr"]) % (1 << SRC_W)
        if mod["SrcBClear"]:
            RWC["SrcB"] = RWC["SrcB_Cr"] = 0
        elif mod["SrcBCR"]:
            RWC["SrcB_Cr"] = (RWC["SrcB_Cr"] + mod["SrcBIncr"]) % (1 << SRC_W)
            RWC["SrcB"] = RWC["SrcB_Cr"]
        else:
            RWC["SrcB"] = (RWC["SrcB"] + mod["SrcBIncr"]) % (1 << SRC_W)
        if mod["DestClear"]:
            RWC["Dst"] = RWC["Dst_Cr"] = 0
        elif mod["DestCToCR"]:
            RWC["Dst"] = (RWC["Dst"] + mod["DestIncr"]) % (1 << DST_W)
            RWC["Dst_Cr"] = RWC["Dst"]
        elif mod["DestCR"]:
            RWC["Dst_Cr"] = (RWC["Dst_Cr"] + mod["DestIncr"]) % (1 << DST_W)
            RWC["Dst"] = RWC["Dst_Cr"]
        else:
            RWC["Dst"] = (RWC["Dst"] + mod["DestIncr"]) % (1 << DST_W)
        if UpdateFidelityPhase:
            if mod["FidelityClear"]:
                RWC["FidelityPhase"] = 0
            else:
                RWC["FidelityPhase"] = (RWC["FidelityPhase"] + mod["FidelityIncr"]) % (1 << FID_W)
        if mod["BiasClear"]:
            RWC["ExtraAddrModBit"] = 0
        elif mod["BiasIncr"] & 3:
            RWC["ExtraAddrModBit"] = (RWC["ExtraAddrModBit"] + 1) % 2


# ---------------------------------------------------------------- harness

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa


def load(seed: int) -> Ref:
    """Random counters (from ``seed``), each within its width, in the coprocessor and a reference."""
    rng = np.random.default_rng(seed)
    adc = COPRO.adc
    widths = np.array([WIDTH[d] for d in DIMS], np.uint64)
    for array in (adc.value, adc.cr):
        array[:] = (rng.integers(0, 1 << 18, array.shape, dtype=np.uint64) % (1 << widths)).astype(np.uint32)
    for name, width in (("srca", SRC_W), ("srcb", SRC_W), ("dst", DST_W)):
        getattr(adc, name)[:] = rng.integers(0, 1 << width, 3)
        getattr(adc, name + "_cr")[:] = rng.integers(0, 1 << width, 3)
    adc.fidelity_phase[:] = rng.integers(0, 4, 3)
    adc.extra_addr_mod_bit[:] = 0
    return Ref(adc)


def execute(word: int, thread: int):
    instruction = ISA.decode(word)
    ctx = Context(COPRO, thread, 100, instruction, f"trisc{thread}", 0x6000)
    return lookup("blackhole", instruction.name)(ctx, **instruction.fields)


def state_of(adc: AdcState) -> tuple:
    rwcs = ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr", "fidelity_phase", "extra_addr_mod_bit")
    return (adc.value.tolist(), adc.cr.tolist(), *(getattr(adc, n).tolist() for n in rwcs))


def ref_state(ref: Ref) -> tuple:
    value = [
        [[[ref.ADCs[t, u, c, d][0] for d in DIMS] for c in range(2)] for u in range(3)] for t in range(3)
    ]
    cr = [[[[ref.ADCs[t, u, c, d][1] for d in DIMS] for c in range(2)] for u in range(3)] for t in range(3)]
    keys = ("SrcA", "SrcA_Cr", "SrcB", "SrcB_Cr", "Dst", "Dst_Cr", "FidelityPhase", "ExtraAddrModBit")
    return (value, cr, *([r[k] for r in ref.RWCs] for k in keys))


def check(ref: Ref, word: int, thread: int) -> None:
    name = ISA.decode(word).name
    before = state_of(COPRO.adc)
    expected = reference_outcome(lambda: getattr(ref, name)(word, thread))
    got = emulator_outcome(lambda: execute(word, thread))
    assert got == expected
    if got != "retire":
        assert state_of(COPRO.adc) == before
    assert state_of(COPRO.adc) == ref_state(ref)


@st.composite
def instruction_words(draw, name: str) -> int:
    """An encoded ``name`` with random fields; the undocumented bits of its slots set one time in four."""
    spec = ISA.by_name[name]
    word = ISA.encode(name, **{f.name: draw(st.integers(0, f.max_value)) for f in spec.fields})
    word &= ~UNDOCUMENTED_IN_SLOT[name]
    stray = [bit for bit in range(24) if UNDOCUMENTED_IN_SLOT[name] >> bit & 1]
    if stray and draw(st.sampled_from(["clean", "clean", "clean", "stray"])) == "stray":
        word |= sum(1 << bit for bit in draw(st.lists(st.sampled_from(stray), min_size=1, unique=True)))
    return word


ADC_INSTRUCTIONS = (
    "SETADC",
    "SETADCXY",
    "SETADCZW",
    "SETADCXX",
    "INCADCXY",
    "INCADCZW",
    "ADDRCRXY",
    "ADDRCRZW",
)
seeds = st.integers(0, 2**32 - 1)
threads = st.integers(0, 2)
SLOW = settings(max_examples=80, deadline=None)

# ---------------------------------------------------------------- ADCs


@pytest.mark.parametrize("name", ADC_INSTRUCTIONS)
@SLOW
@given(seed=seeds, thread=threads, data=st.data())
def test_adc_instruction_matches_the_reference(name, seed, thread, data):
    ref = load(seed)
    check(ref, data.draw(instruction_words(name)), thread)


def test_setadc_thread_override_comes_from_the_top_of_the_value():
    load(1)
    word = ISA.encode(
        "SETADC", cnt_set_mask=0b100, channel_index=1, dimension_index=0, value=(3 << 16) | 0x155
    )
    execute(word, 0)
    # The packers' channel 1 X of thread 2 (ThreadOverride 3) gets the whole 18-bit value.
    assert COPRO.adc.value[2, 2, 1, 0] == COPRO.adc.cr[2, 2, 1, 0] == (3 << 16) | 0x155


def test_incadcxy_wraps_at_the_counter_width():
    load(2)
    COPRO.adc.value[1, 0, 0, 1] = (1 << 13) - 2  # Unpacker 0, channel 0, Y (13 bits)
    execute(ISA.encode("INCADCXY", cnt_set_mask=1, ch1_y=0, ch1_x=0, ch0_y=5, ch0_x=0), 1)
    assert COPRO.adc.value[1, 0, 0, 1] == 3


# ---------------------------------------------------------------- RWCs


@pytest.mark.parametrize("name", ["SETRWC", "INCRWC"])
@SLOW
@given(seed=seeds, thread=threads, data=st.data())
def test_rwc_instruction_matches_the_reference(name, seed, thread, data):
    ref = load(seed)
    check(ref, data.draw(instruction_words(name)), thread)


@pytest.mark.parametrize(("disable_a", "disable_b"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_setrwc_flips_src_banks_through_the_matrix_unit_when_there_is_one(disable_a, disable_b):
    load(4)
    calls: list[tuple[int, bool]] = []
    COPRO.clear_src_valid = lambda bank, release: calls.append((bank, release))
    try:
        COPRO.config.write_thread_field("CLR_DVALID_SrcA_Disable", 2, disable_a)
        COPRO.config.write_thread_field("CLR_DVALID_SrcB_Disable", 2, disable_b)
        word = ISA.encode("SETRWC", clear_ab_vld=0b11, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=9, bit_mask=0b0001)
        execute(word, 2)
    finally:
        del COPRO.clear_src_valid
        COPRO.config.thread[:] = 0
    assert calls == [(0, not disable_a), (1, not disable_b)]
    assert COPRO.adc.srca[2] == COPRO.adc.srca_cr[2] == 9


# ---------------------------------------------------------------- ADDR_MOD

# The register layouts as tt-llk's ckernel_addrmod.h packs them for SETC16 (Blackhole):
# ADDR_MOD_AB_SEC<i> (12 + i): srca.val() | srcb.val() << 8, val() = incr & 0x3F | cr << 6 | clr << 7;
# ADDR_MOD_DST_SEC<i> (28 + i): dest.val() | fidelity.val() << 13,
#   dest.val() = incr & 0x3FF | cr << 10 | clr << 11 | c_to_cr << 12, fidelity.val() = incr & 3 | clr << 2;
# ADDR_MOD_BIAS_SEC<i> (47 + i): incr & 0xF | clr << 4;
# ADDR_MOD_PACK_SEC<i> (37 + i): y_src.val() | y_dst.val() << 6 | z_src.val() << 12 | z_dst.val() << 14,
#   with val() = incr & 0xF | cr << 4 | clr << 5 and, for Z, incr & 1 | clr << 1.
AB, DST, BIAS, PACK = 12, 28, 47, 37

slot = st.fixed_dictionaries(
    {
        "SrcAIncr": st.integers(0, 63),
        "SrcACR": st.integers(0, 1),
        "SrcAClear": st.integers(0, 1),
        "SrcBIncr": st.integers(0, 63),
        "SrcBCR": st.integers(0, 1),
        "SrcBClear": st.integers(0, 1),
        "DestIncr": st.integers(0, 1023),
        "DestCR": st.integers(0, 1),
        "DestClear": st.integers(0, 1),
        "DestCToCR": st.integers(0, 1),
        "FidelityIncr": st.integers(0, 3),
        "FidelityClear": st.integers(0, 1),
        "BiasIncr": st.integers(0, 15),
        "BiasClear": st.integers(0, 1),
    }
)


def program_slot(thread: int, index: int, m: dict) -> None:
    """Configure ADDR_MOD slot ``index`` with SETC16s, as LLK's addr_mod_t::set() does."""
    srca = m["SrcAIncr"] | m["SrcACR"] << 6 | m["SrcAClear"] << 7
    srcb = m["SrcBIncr"] | m["SrcBCR"] << 6 | m["SrcBClear"] << 7
    dest = m["DestIncr"] | m["DestCR"] << 10 | m["DestClear"] << 11 | m["DestCToCR"] << 12
    fidelity = m["FidelityIncr"] | m["FidelityClear"] << 2
    bias = m["BiasIncr"] | m["BiasClear"] << 4
    for register, value in (
        (AB + index, srca | srcb << 8),
        (DST + index, dest | fidelity << 13),
        (BIAS + index, bias),
    ):
        execute(ISA.encode("SETC16", setc16_reg=register, setc16_value=value), thread)


@settings(max_examples=60, deadline=None)
@given(threads, st.integers(0, 7), slot)
def test_addr_mod_reads_a_slot_as_llk_programs_it(thread, index, m):
    COPRO.config.thread[:] = 0
    program_slot(thread, index, m)
    expected = AddrMod(
        srca_incr=m["SrcAIncr"], srca_cr=bool(m["SrcACR"]), srca_clear=bool(m["SrcAClear"]),
        srcb_incr=m["SrcBIncr"], srcb_cr=bool(m["SrcBCR"]), srcb_clear=bool(m["SrcBClear"]),
        dest_incr=m["DestIncr"], dest_cr=bool(m["DestCR"]), dest_clear=bool(m["DestClear"]),
        dest_c_to_cr=bool(m["DestCToCR"]), fidelity_incr=m["FidelityIncr"],
        fidelity_clear=bool(m["FidelityClear"]), bias_incr=m["BiasIncr"], bias_clear=bool(m["BiasClear"]),
        srca_incr2=0, srcb_incr2=0,
    )  # fmt: skip
    assert addr_mod(COPRO, thread, index) == expected
    assert addr_mod(COPRO, (thread + 1) % 3, index) == addr_mod(COPRO, (thread + 1) % 3, (index + 1) % 8)


@settings(max_examples=40, deadline=None)
@given(threads, st.integers(0, 3), st.integers(0, 15), st.integers(0, 15), st.tuples(*[st.booleans()] * 8))
def test_pack_addr_mod_reads_a_slot_as_llk_programs_it(thread, index, ysrc, ydst, flags):
    ysrc_cr, ysrc_clr, ydst_cr, ydst_clr, zsrc, zsrc_clr, zdst, zdst_clr = map(int, flags)
    COPRO.config.thread[:] = 0
    value = (ysrc | ysrc_cr << 4 | ysrc_clr << 5) | (ydst | ydst_cr << 4 | ydst_clr << 5) << 6
    value |= (zsrc | zsrc_clr << 1) << 12 | (zdst | zdst_clr << 1) << 14
    execute(ISA.encode("SETC16", setc16_reg=PACK + index, setc16_value=value), thread)
    assert pack_addr_mod(COPRO, thread, index) == PackAddrMod(
        ysrc, bool(ysrc_cr), bool(ysrc_clr), ydst, bool(ydst_cr), bool(ydst_clr), zsrc, bool(zsrc_clr), zdst,
        bool(zdst_clr),
    )  # fmt: skip


def test_addr_mod_index_out_of_range_is_a_caller_error():
    with pytest.raises(ValueError, match=r"0\.\.7"):
        addr_mod(COPRO, 0, 8)
    with pytest.raises(ValueError, match=r"0\.\.3"):
        pack_addr_mod(COPRO, 0, 4)


def apply_ctx(thread: int) -> Context:
    word = ISA.encode("ZEROACC", **{f.name: 0 for f in ISA.by_name["ZEROACC"].fields})
    return Context(COPRO, thread, 100, ISA.decode(word), f"trisc{thread}", 0x6000)


@settings(max_examples=100, deadline=None)
@given(seeds, threads, st.integers(0, 7), slot, st.booleans())
def test_apply_addr_mod_matches_the_reference(seed, thread, index, m, update_fidelity):
    ref = load(seed)
    COPRO.config.thread[:] = 0
    program_slot(thread, index, m)
    apply_addr_mod(apply_ctx(thread), index, update_fidelity=update_fidelity)
    ref.ApplyAddrMod(thread, m, update_fidelity)
    assert state_of(COPRO.adc) == ref_state(ref)


def test_apply_addr_mod_with_extra_addr_mod_bit_set_is_unimplemented():
    load(5)
    COPRO.config.thread[:] = 0
    COPRO.adc.extra_addr_mod_bit[1] = 1
    before = state_of(COPRO.adc)
    with pytest.raises(Unimplemented, match="ExtraAddrModBit"):
        apply_addr_mod(apply_ctx(1), 0)
    assert state_of(COPRO.adc) == before
    COPRO.adc.extra_addr_mod_bit[1] = 0


def test_apply_addr_mod_with_an_ab2_bit_set_is_unimplemented():
    load(6)
    COPRO.config.thread[:] = 0
    COPRO.config.write_thread_field("ADDR_MOD_AB2_SEC5_SrcBIncr", 0, 1)
    before = state_of(COPRO.adc)
    with pytest.raises(Unimplemented, match="AB2"):
        apply_addr_mod(apply_ctx(0), 5)
    assert state_of(COPRO.adc) == before
    COPRO.config.thread[:] = 0


def test_adc_state_is_plain_arrays():
    state = AdcState.new(TILE.arch)
    assert state.value.shape == state.cr.shape == (3, 3, 2, 4)
    assert all(a.dtype == np.uint32 and not a.any() for a in state_of_arrays(state))


def state_of_arrays(adc: AdcState) -> list[np.ndarray]:
    return [adc.value, adc.cr, adc.srca, adc.srca_cr, adc.srcb, adc.srcb_cr, adc.dst, adc.dst_cr,
            adc.fidelity_phase, adc.extra_addr_mod_bit]  # fmt: skip
