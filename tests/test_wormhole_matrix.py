"""The matrix unit on a Wormhole tile: each instruction registered for it against a reference from the
Wormhole pages, in Wormhole's encodings; the instructions it refuses by name; and a 32x32x32 matmul
(LoFi and HiFi4) and an ELWADD run end to end against a numpy model of the pages, bit for bit.

The references. The Blackhole tests' models (fpu_reference.FpuRef, test_matrix_moves.Ref,
test_src_shifts.Ref, test_matrix_legacy.LegacyRef and DebugMoveRef) are written line by line from the
WormholeB0 pages (MVMUL.md, DOTPV.md, GAPOOL.md, GMPOOL.md, ELWMUL.md, ELWADD.md, ELWSUB.md, MOVA2D.md,
MOVDBGA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md, MOVB2A.md, SHIFTXA.md, SHIFTXB.md, TRNSPSRCB.md,
GATESRCRST.md, MatrixUnit.md); Wormhole executes those models as written, so their bodies are reused.
Two parts of them are Blackhole's and are replaced here, from the Wormhole pages:

- word decoding: the encoding diagrams of the pages above (the tenstorrent documentation's
  Diagrams/Src/Bits32.lua; MOVB2A's from the jasondavies fork), written below as bit positions;
- ApplyAddrMod's slot: RWCs.md, two AddrMod bits naming slot ``AddrMod``, or ``AddrMod + 4`` while
  ExtraAddrModBit or ThreadConfig's ADDR_MOD_SET_Base is set; Blackhole's Unimplemented cases do not
  exist on Wormhole. The counters then advance as the same page says (RefState.AdvanceRWCs).

Dst rows map as Dst.md's AdjRow (dst_reference.Adj32 with remap and swizzle off: checked below). The
readings the Blackhole references take where the pages are open (matrix/unit.py's number model,
ShuffleTF32's mask, legacy ``Dst += 0``) are the same on Wormhole.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import test_matrix_legacy as legacy_tests
import test_matrix_unit as unit_tests
import test_src_shifts as shift_tests
from dst_reference import Adj16, Adj32, bits
from fpu_reference import FpuRef
from hypothesis import settings
from hypothesis import strategies as st
from matrix_harness import (
    MATRIX,
    SETTINGS,
    RefState,
    check,
    configurations,
    execute,
    load,
    plain_config,
    property_test,
    random_fill,
    words,
)
from outcomes import RefUB, emulator_outcome
from test_matrix_legacy import DebugMoveRef, LegacyRef
from test_matrix_moves import Ref as MovesRef
from test_src_shifts import Ref as ShiftsRef

from tensixsim import Tile, Unimplemented, raw
from tensixsim.raw import MATH_THREAD, load_src_tile, run_words
from tensixsim.tensix import formats
from tensixsim.tensix.matrix import src_shifts
from tensixsim.tensix.regs import SRCA, SRCB, adj32
from tensixsim.tensix.semantics import implemented, lookup, refused
from tensixsim.timing import MATRIX as MATRIX_TIMING

TILE = Tile("wormhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
THREAD = 1
FAST = settings(SETTINGS, max_examples=30)
FEW = settings(SETTINGS, max_examples=15)

# ---------------------------------------------------------------------------- references


class WormholeRWCs(RefState):
    """RWCs.md ApplyAddrMod with Wormhole's two AddrMod bits."""

    def ApplyAddrMod(self, AddrMod: int) -> None:
        Index = AddrMod
        if self.RWC["ExtraAddrModBit"] or self.c.get("ADDR_MOD_SET_Base", 0):
            Index += 4
        self.AdvanceRWCs(self.c["addr_mods"][Index])


def _undefined(*spans: tuple[int, int, int]) -> None:
    """Raise RefUB if ``word`` (first of each span) has a bit set in [lo, hi]."""
    for word, lo, hi in spans:
        if bits(word, lo, hi):
            raise RefUB


class WhFpu(WormholeRWCs, FpuRef):
    """MVMUL.md's diagram: FlipSrcB 23, FlipSrcA 22, BroadcastSrcBRow 19, AddrMod 15..16, DstRow 0..9;
    DOTPV.md / GAPOOL.md: the same without BroadcastSrcBRow; ELW*.md: AddDst 21, BroadcastSrcBRow 20,
    BroadcastSrcBCol0 19; GMPOOL.md: ArgMax 14. The table's slots around them: instr_mod19 19..21
    (DOTPV / ELW*: 19..20), addr_mode 15..18, dst 0..14 (GAPOOL / GMPOOL: 0..13)."""

    def MVMUL(self, word: int) -> None:
        _undefined((word, 20, 21), (word, 17, 18), (word, 10, 14))
        with np.errstate(all="ignore"):
            self._matmul(bits(word, 22, 23), bits(word, 19, 19), bits(word, 15, 16), bits(word, 0, 9), False)

    def DOTPV(self, word: int) -> None:
        # Bit 21 is in no field of DOTPV.md's diagram (the syntax passes a constant there): ignored.
        _undefined((word, 19, 20), (word, 17, 18), (word, 10, 14))
        with np.errstate(all="ignore"):
            self._matmul(bits(word, 22, 23), 0, bits(word, 15, 16), bits(word, 0, 9), False)

    def GAPOOL(self, word: int) -> None:
        # The syntax's second operand: 0 there, 1 in tt-llk (DIM_16X16); either is accepted.
        if bits(word, 19, 21) > 1:
            raise RefUB
        _undefined((word, 17, 18), (word, 14, 14), (word, 10, 13))
        with np.errstate(all="ignore"):
            self._matmul(bits(word, 22, 23), 0, bits(word, 15, 16), bits(word, 0, 9), True)

    def _decode_elementwise(self, word: int) -> tuple[int, int, int, int, int]:
        _undefined((word, 17, 18), (word, 10, 14))
        return (
            bits(word, 22, 23),
            bits(word, 21, 21),
            bits(word, 19, 20),
            bits(word, 15, 16),
            bits(word, 0, 9),
        )

    def _decode_gmpool(self, word: int) -> tuple[int, int, int, int, int, bool]:
        undefined = bool(bits(word, 17, 18) or bits(word, 10, 13))
        Fields = bits(word, 22, 23), bits(word, 19, 21), bits(word, 15, 16), bits(word, 14, 14)
        return (*Fields, bits(word, 0, 9), undefined)


class WhMoveWords(RefState):
    """MOVA2D.md / MOVDBGA2D.md / MOVD2A.md / MOVD2B.md: UseDst32bLo 23, SrcRow 17..22, AddrMod 15..16,
    Move8Rows / Move4Rows 13, DstRow 0..9 (slots: instr_mod 12..14, dst 0..11). MOVB2D.md: Move4Rows
    14, Broadcast1RowTo8 13, BroadcastCol0 12. MOVB2A.md: SrcARow 17..22 (slot to 23), AddrMod 15..16,
    Move4Rows 13 (slot 12..14), SrcBRow 0..5 (slot 0..11)."""

    def _decode_to_dst(self, word: int, FromB: bool) -> tuple[int, ...]:
        _undefined((word, 10, 11))
        Head = bits(word, 23, 23), bits(word, 17, 22), bits(word, 15, 16), bits(word, 0, 9)
        if FromB:
            return (*Head, bits(word, 14, 14), bits(word, 13, 13), bits(word, 12, 12))
        _undefined((word, 12, 12), (word, 14, 14))
        return (*Head, bits(word, 13, 13))

    def _decode_from_dst(self, word: int) -> tuple[int, int, int, int, int]:
        _undefined((word, 10, 12), (word, 14, 14))
        return (
            bits(word, 23, 23),
            bits(word, 17, 22),
            bits(word, 15, 16),
            bits(word, 13, 13),
            bits(word, 0, 9),
        )

    def _decode_movb2a(self, word: int) -> tuple[int, int, int, int]:
        _undefined((word, 23, 23), (word, 12, 12), (word, 14, 14), (word, 6, 11))
        return bits(word, 17, 22), bits(word, 15, 16), bits(word, 13, 13), bits(word, 0, 5)


class WhMoves(WormholeRWCs, WhMoveWords, MovesRef):
    pass


class WhDebugMoves(WormholeRWCs, WhMoveWords, DebugMoveRef):
    pass


class WhShifts(WormholeRWCs, ShiftsRef):
    """SHIFTXB.md: SrcRow 0..5 (slot 0..9), ShiftInZero 10 (slot 10..14), AddrMod 15..16 (slot 15..23).
    SHIFTXA, TRNSPSRCB, GATESRCRST: the diagrams are Blackhole's placement (the reused decoders)."""

    def _decode_shiftxb(self, word: int) -> tuple[int, int, int]:
        _undefined((word, 6, 9), (word, 11, 14), (word, 17, 23))
        return bits(word, 0, 5), bits(word, 10, 10), bits(word, 15, 16)


class WhLegacy(WormholeRWCs, LegacyRef):
    """No diagram: the table's slots (tt-llk's yaml). MFCONV3S1 / CONV3S*: AddrMod 15..16. APOOL3S*:
    AddrMod 15..16 of a slot 15..21."""

    def _decode_legacy(self, word: int, Pool: bool) -> tuple[int, int]:
        if Pool:
            _undefined((word, 17, 21))
        return bits(word, 22, 23), bits(word, 15, 16)


# ---------------------------------------------------------------------------- set-up


@st.composite
def on_wormhole(draw, base: st.SearchStrategy[dict]) -> dict:
    """A Blackhole-shaped configuration made Wormhole's: no Dst remapping or AB2 slots; ExtraAddrModBit,
    ADDR_MOD_SET_Base and BiasIncr drawn often, so slots 4..7 are used and switched to."""
    config = draw(base)
    mods = [
        m | {"AB2_SrcAIncr": 0, "AB2_SrcBIncr": 0, "BiasIncr": draw(st.integers(0, 15))}
        for m in config["addr_mods"]
    ]
    return config | {
        "remap": False,
        "swizzle": False,
        "addr_mods": mods,
        "rwc": config["rwc"] | {"ExtraAddrModBit": draw(st.integers(0, 1))},
        "ADDR_MOD_SET_Base": draw(st.integers(0, 1)),
    }


@st.composite
def usually(draw, documented: st.SearchStrategy[int], width: int) -> int:
    """The documented values, and one time in ten any value of the ``width``-bit slot."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.integers(0, (1 << width) - 1))
    return draw(documented)


def _wh_words(name: str, fields: dict) -> st.SearchStrategy[int]:
    return words(name, fields, isa=ISA)


def _run(ref_class, fill, cycles: int | None, name: str, word: int, seed: int, config: dict, thread: int):
    return check(name, word, seed, config, thread, ref_class, fill, cycles=cycles, copro=COPRO)


ADDR_MODE = usually(st.integers(0, 3), 4)
DST = usually(st.integers(0, 1023), 15)
POOL_DST = usually(st.integers(0, 1023), 14)
FPU_WORDS = {
    "MVMUL": {"instr_mod19": usually(st.integers(0, 1), 3), "addr_mode": ADDR_MODE, "dst": DST},
    "DOTPV": {"instr_mod19": usually(st.just(0), 2), "addr_mode": ADDR_MODE, "dst": DST},
    "GAPOOL": {
        "instr_mod19": usually(st.integers(0, 1), 3),
        "addr_mode": ADDR_MODE,
        "max_pool_index_en": usually(st.just(0), 1),
        "dst": POOL_DST,
    },
    "GMPOOL": {"instr_mod19": usually(st.just(1), 3), "addr_mode": ADDR_MODE, "dst": POOL_DST},
    "ELWADD": {"addr_mode": ADDR_MODE, "dst": DST},
    "ELWSUB": {"addr_mode": ADDR_MODE, "dst": DST},
    "ELWMUL": {"addr_mode": ADDR_MODE, "dst": DST},
}
ROWS = {
    "dest_32b_lo": usually(st.just(0), 1),  # set, it is mostly undefined with 16-bit Dst
    "instr_mod": usually(st.sampled_from([0, 2]), 3),
    "dst": usually(st.integers(0, 1023), 12),
}
MOVE_WORDS = {
    "MOVA2D": ROWS,
    "MOVD2A": ROWS,
    "MOVD2B": ROWS,
    "MOVB2D": {"dst": usually(st.integers(0, 1023), 12)},
    "MOVB2A": {
        "srca": usually(st.integers(0, 63), 7),
        "instr_mod": usually(st.sampled_from([0, 2]), 3),
        "srcb": usually(st.integers(0, 63), 12),
    },
}
SHIFT_WORDS = {
    "SHIFTXA": {"log2_amount2": usually(st.just(0), 22), "shift_mode": usually(st.sampled_from([2, 3]), 2)},
    "SHIFTXB": {
        "addr_mode": usually(st.integers(0, 3), 9),
        "rot_shift": usually(st.integers(0, 1), 5),
        "shift_row": usually(st.integers(0, 63), 10),
    },
    "GATESRCRST": {"reset_srcb_gate_control": usually(st.integers(0, 1), 23)},
}
CLEAR_DVALID = usually(st.just(0), 2)
LEGACY_WORDS = {
    "MFCONV3S1": {"clear_dvalid": CLEAR_DVALID},
    "CONV3S1": {"clear_dvalid": CLEAR_DVALID},
    "CONV3S2": {"clear_dvalid": CLEAR_DVALID},
    "APOOL3S1": {"clear_dvalid": CLEAR_DVALID, "addr_mode": usually(st.integers(0, 3), 7)},
    "APOOL3S2": {"clear_dvalid": CLEAR_DVALID, "addr_mode": usually(st.integers(0, 3), 7)},
}


# MatrixUnit.md (Wormhole's page): every instruction here issues one per cycle but SHIFTXB (one per two).
def _fpu_test(name: str):
    run = partial(_run, WhFpu, unit_tests.fpu_fill, MATRIX_TIMING.issue)
    configs = on_wormhole(unit_tests.fpu_configurations())
    return property_test(name, _wh_words(name, FPU_WORDS[name]), configs, run, FAST)


def _move_test(name: str, ref_class=WhMoves):
    run = partial(_run, ref_class, random_fill, MATRIX_TIMING.issue)
    return property_test(
        name, _wh_words(name, MOVE_WORDS.get(name, ROWS)), on_wormhole(configurations()), run, FAST
    )


def _shift_run(name: str, word: int, seed: int, config: dict, thread: int):
    fill = partial(shift_tests.shift_fill, layout=config["srca_layout"], in_row=config["in_row"])
    return _run(WhShifts, fill, shift_tests.CYCLES[name], name, word, seed, config, thread)


@st.composite
def shift_configurations(draw) -> dict:
    """SrcA laid out as test_src_shifts does; SHIFTXA's latched SrcA row known or not (None)."""
    in_row = st.one_of(st.none(), st.integers(0, 63))
    return draw(on_wormhole(shift_tests.configurations())) | {"in_row": draw(in_row)}


def _shift_test(name: str):
    strategy = _wh_words(name, SHIFT_WORDS[name]) if name in SHIFT_WORDS else st.just(ISA.encode(name))
    return property_test(name, strategy, shift_configurations(), _shift_run, settings(FAST, max_examples=40))


def _legacy_test(name: str):
    run = partial(_run, WhLegacy, legacy_tests.legacy_fill, MATRIX_TIMING.issue)
    configs = on_wormhole(legacy_tests.legacy_configurations())
    return property_test(name, _wh_words(name, LEGACY_WORDS[name]), configs, run, FEW)


test_mvmul_matches_reference = _fpu_test("MVMUL")
test_dotpv_matches_reference = _fpu_test("DOTPV")
test_gapool_matches_reference = _fpu_test("GAPOOL")
test_gmpool_matches_reference = _fpu_test("GMPOOL")
test_elwadd_matches_reference = _fpu_test("ELWADD")
test_elwsub_matches_reference = _fpu_test("ELWSUB")
test_elwmul_matches_reference = _fpu_test("ELWMUL")
test_mova2d_matches_reference = _move_test("MOVA2D")
test_movdbga2d_matches_reference = _move_test("MOVDBGA2D", WhDebugMoves)
test_movb2d_matches_reference = _move_test("MOVB2D")
test_movd2a_matches_reference = _move_test("MOVD2A")
test_movd2b_matches_reference = _move_test("MOVD2B")
test_movb2a_matches_reference = _move_test("MOVB2A")
test_shiftxa_matches_reference = _shift_test("SHIFTXA")
test_shiftxb_matches_reference = _shift_test("SHIFTXB")
test_trnspsrcb_matches_reference = _shift_test("TRNSPSRCB")
test_gatesrcrst_matches_reference = _shift_test("GATESRCRST")
test_clrexphist_matches_reference = _shift_test("CLREXPHIST")
test_mfconv3s1_matches_reference = _legacy_test("MFCONV3S1")
test_conv3s1_matches_reference = _legacy_test("CONV3S1")
test_conv3s2_matches_reference = _legacy_test("CONV3S2")
test_apool3s1_matches_reference = _legacy_test("APOOL3S1")
test_apool3s2_matches_reference = _legacy_test("APOOL3S2")


# ---------------------------------------------------------------------------- encodings and addressing

# Each documented operand as the Wormhole page's encoding diagram places it: (table slot, lowest bit
# of the operand within the slot, width). A slot the page leaves wider than its operand is checked
# as undefined by the property tests above.
DIAGRAMS = {
    "MVMUL": {"BroadcastSrcBRow": ("instr_mod19", 19, 1), "AddrMod": ("addr_mode", 15, 2)},
    "ELWADD": {"AddDst": ("dest_accum_en", 21, 1), "BroadcastSrcBCol0": ("instr_mod19", 19, 1)},
    "GMPOOL": {"ArgMax": ("max_pool_index_en", 14, 1), "AddrMod": ("addr_mode", 15, 2)},
    "MOVA2D": {"Move8Rows": ("instr_mod", 13, 1), "AddrMod": ("addr_mode", 15, 2), "SrcRow": ("src", 17, 6)},
    "MOVB2D": {"BroadcastCol0": ("instr_mod", 12, 1), "Move4Rows": ("instr_mod", 14, 1)},
    "MOVB2A": {"SrcBRow": ("srcb", 0, 6), "Move4Rows": ("instr_mod", 13, 1), "SrcARow": ("srca", 17, 6)},
    "SHIFTXB": {"ShiftInZero": ("rot_shift", 10, 1), "AddrMod": ("addr_mode", 15, 2)},
}


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_the_table_holds_each_documented_operand_where_the_page_draws_it(name: str) -> None:
    spec = ISA.by_name[name]
    for operand, (slot, lo, width) in DIAGRAMS[name].items():
        field = next(f for f in spec.fields if f.name == slot)
        assert field.lo <= lo and lo + width <= field.lo + field.width, (name, operand)
        values = dict.fromkeys(spec.field_names, 0) | {slot: ((1 << width) - 1) << (lo - field.lo)}
        assert ISA.encode(name, **values) & 0xFFFFFF == ((1 << width) - 1) << lo


def test_dst32_rows_are_wormholes_adjrow() -> None:
    # Dst.md: AdjRow = ((Row & 0x1f8) << 1) | (Row & 0x207); the reused reference and the emulator agree.
    rows = np.arange(1024)
    page = ((rows & 0x1F8) << 1) | (rows & 0x207)
    assert [Adj32(r, False, False) for r in rows] == page.tolist()
    assert [Adj16(r, False) for r in rows] == rows.tolist()
    assert adj32(rows, False, False).tolist() == page.tolist()


def _slot_config(**changes) -> dict:
    """Plain BF16; ADDR_MOD slot n adds n + 1 to the Dst RWC (slot 5: 6), so the RWC names the slot."""
    config = plain_config(**changes)
    config["addr_mods"] = [m | {"DestIncr": n + 1} for n, m in enumerate(config["addr_mods"])]
    return config


@pytest.mark.parametrize(("set_base", "extra", "slot"), [(0, 0, 1), (1, 0, 5), (0, 1, 5), (1, 1, 5)])
def test_addr_mod_1_names_slot_5_under_set_base_or_extra_bit(set_base: int, extra: int, slot: int) -> None:
    config = _slot_config(ADDR_MOD_SET_Base=set_base, rwc=plain_config()["rwc"] | {"ExtraAddrModBit": extra})
    for name in ("MVMUL", "ELWADD", "MOVA2D", "SHIFTXB"):
        load(0, config, THREAD, copro=COPRO)
        COPRO.regs.src_client[:] = MATRIX
        fields = dict.fromkeys(ISA.by_name[name].field_names, 0) | {"addr_mode": 1}
        execute(ISA.encode(name, **fields), THREAD, copro=COPRO)
        assert int(COPRO.adc.dst[THREAD]) == slot + 1, name


def test_bias_incr_switches_the_following_instructions_to_slots_4_to_7() -> None:
    """Slot 2's BiasIncr sets ExtraAddrModBit: the next AddrMod 2 names slot 6, whose BiasClear
    clears it again. Dst RWC: 0 + 3 (slot 2) + 7 (slot 6) + 3 (slot 2)."""
    config = _slot_config()
    config["addr_mods"][2] |= {"BiasIncr": 1}
    config["addr_mods"][6] |= {"BiasClear": 1}
    load(0, config, THREAD, copro=COPRO)
    COPRO.regs.src_client[:] = MATRIX
    word = ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=2, dst=0)
    rwcs = []
    for cycle in (0, 10, 20):
        execute(word, THREAD, cycle, copro=COPRO)
        rwcs.append((int(COPRO.adc.dst[THREAD]), int(COPRO.adc.extra_addr_mod_bit[THREAD])))
    assert rwcs == [(3, 1), (10, 0), (13, 1)]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("MVMUL", {"addr_mode": 4}),
        ("ELWSUB", {"addr_mode": 8}),
        ("MVMUL", {"dst": 1 << 10}),
        ("MOVA2D", {"instr_mod": 4}),
        ("MOVB2A", {"srca": 1 << 6}),
        ("SHIFTXB", {"addr_mode": 1 << 8}),
        ("APOOL3S1", {"addr_mode": 4}),
    ],
)
def test_bits_beyond_a_documented_operand_are_undefined_and_change_nothing(name: str, fields: dict) -> None:
    load(3, plain_config(), THREAD, copro=COPRO)
    COPRO.regs.src_client[:] = MATRIX
    before = COPRO.regs.copy()
    word = ISA.encode(name, **(dict.fromkeys(ISA.by_name[name].field_names, 0) | fields))
    assert emulator_outcome(lambda: execute(word, THREAD, copro=COPRO)) == "undefined"
    assert COPRO.regs.equals(before) and int(COPRO.adc.dst[THREAD]) == 0


def test_shiftxa_reads_the_block_of_a_wormhole_mvmuls_srca_rows() -> None:
    """SHIFTXA.md's HardwareBug(): the last MVMUL's SrcA row 32 (RWC SrcA 37 & 0x38) picks rows
    32..47 as the input block, shifted right into rows 0..15."""
    config = plain_config(rwc=plain_config()["rwc"] | {"SrcA": 37})
    load(5, config, THREAD, copro=COPRO)
    regs = COPRO.regs
    regs.src_client[:] = MATRIX
    regs.dst_row_valid[:] = True
    execute(ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0), THREAD, copro=COPRO)
    bank = regs.srca[int(regs.matrix_bank[SRCA])]
    want = np.zeros((16, 16), np.uint32)
    want[:, 1:] = bank[32:48, :15]
    execute(ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=2), THREAD, copro=COPRO)
    assert np.array_equal(bank[:16], want)
    assert src_shifts.srca_row_latch(COPRO) == 32


# ---------------------------------------------------------------------------- refused by name

NO_MODEL = ("MPOOL3S1", "MPOOL3S2", "TRNSPSRCA", "RAREB", "SETASHRMH", "SETASHRMH0", "SETASHRMH1")
NO_MODEL += ("SETASHRMV", "SETIBRWC", "SETPKEDGOF")


@pytest.mark.parametrize("name", NO_MODEL)
def test_instructions_without_a_documented_model_raise_unimplemented_by_name(name: str) -> None:
    assert name in refused("wormhole") and name not in implemented("wormhole")
    tile = Tile("wormhole")
    before = tile.coprocessor.regs.copy()
    word = ISA.encode(name, **dict.fromkeys(ISA.by_name[name].field_names, 0))
    with pytest.raises(Unimplemented, match=rf"{name}: .*(no documented functional model|no Wormhole page)"):
        run_words(tile, THREAD, [word])
    assert tile.coprocessor.regs.equals(before)


def test_wormhole_registrations_are_their_own_where_the_encodings_differ() -> None:
    for name in ("MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWADD", "MOVA2D", "MOVB2D", "MOVB2A", "SHIFTXB"):
        assert lookup("wormhole", name) is not lookup("blackhole", name), name
    for name in ("SHIFTXA", "TRNSPSRCB", "GATESRCRST", "XMOV"):
        assert lookup("wormhole", name) is lookup("blackhole", name), name


# ---------------------------------------------------------------------------- end to end
# A 32x32 tile is four 16x16 faces in 16-row blocks of SrcA / SrcB / Dst (raw.load_src_tile's layout).
# MVMUL computes Dst[8 rows of an output face] += SrcB[those rows, one inner half] @ SrcA[that half's
# face]; sixteen cover the tile, the RWCs walked by ADDR_MOD slots. Wormhole's two AddrMod bits reach
# four slots: the eighth MVMUL's slot 3 also sets ExtraAddrModBit (BiasIncr), so the next eight name
# slots 4..7, and the last one's slot 7 clears it (BiasClear) and steps the fidelity phase.

SLOTS = {
    0: {"SrcBIncr": 8, "DestIncr": 8},  # next 8 rows of the SrcB face and of Dst
    1: {"SrcAIncr": 16, "SrcBCR": 1, "DestIncr": 8},  # next SrcA face, SrcB back to its face start
    2: {"SrcACR": 1, "SrcBIncr": 32, "SrcBCR": 1, "DestIncr": 8},  # lower SrcB faces, first SrcA face
    3: {"SrcAIncr": 32, "SrcACR": 1, "SrcBIncr": 48, "SrcBCR": 1, "DestClear": 1, "BiasIncr": 1},
}
SLOTS |= {4: SLOTS[0], 5: SLOTS[1], 6: SLOTS[2]}
SLOTS[7] = {"SrcAClear": 1, "SrcBClear": 1, "DestClear": 1, "FidelityIncr": 1, "BiasClear": 1}
SEQUENCE = (0, 1, 0, 2, 0, 1, 0, 3) * 2  # AddrMod of the sixteen MVMULs of one phase
KINDS = {"SrcA": "AB", "SrcB": "AB", "Dest": "DST", "Fidelity": "DST", "Bias": "BIAS"}


def _configure(copro, fp32_dest: bool) -> None:
    config = copro.config
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, formats.BF16)
    config.write_field("ALU_ACC_CTRL_Fp32_enabled", 0, int(fp32_dest))
    for slot, fields in SLOTS.items():
        for name, value in fields.items():
            kind = next(k for prefix, k in KINDS.items() if name.startswith(prefix))
            config.write_thread_field(f"ADDR_MOD_{kind}_SEC{slot}_{name}", MATH_THREAD, value)


def _bf16_tile(rng: np.random.Generator) -> np.ndarray:
    """BF16 bits of values in +-[0.5, 4): every mantissa bit used, no zero or denormal."""
    values = (rng.uniform(0.5, 4.0, (32, 32)) * rng.choice([-1, 1], (32, 32))).astype(np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def _f32(bits32: np.ndarray) -> np.ndarray:
    return np.asarray(bits32, np.uint32).view(np.float32)


def _ftz(x: np.ndarray) -> np.ndarray:
    return np.where((x.view(np.uint32) & 0x7F800000) == 0, np.float32(0), x).astype(np.float32)


def _fidelity(x: np.ndarray, keep: int, rest: int, later: bool) -> np.ndarray:
    """ELWMUL.md's Src*FidelityBits: the first slice (``keep`` mask) or what the next one keeps."""
    u = x.view(np.uint32)
    return _ftz(x - _f32(u & rest)) if later else _ftz(_f32(u & keep))


def _reference_matmul(a16: np.ndarray, b16: np.ndarray, phases: int) -> np.ndarray:
    """MVMUL.md over the tile into FP32 Dst, as SEQUENCE issues it: per phase, inner half 0 then 1;
    x = sum over k in order (each product and sum one fp32 operation, flushed), then Dst += x."""
    a = _f32(a16.astype(np.uint32) << 16)
    b = _f32(b16.astype(np.uint32) << 16)
    dst = np.zeros((32, 32), np.float32)
    for phase in range(phases):
        a_p = _fidelity(a, 0xFFF80000, 0xFFF83FFF, bool(phase & 1))
        b_p = _fidelity(b, 0xFFFE0000, 0xFFFE1FFF, bool(phase & 2))
        for half in (0, 1):
            x = np.zeros((32, 32), np.float32)
            for k in range(16 * half, 16 * half + 16):
                x = _ftz(x + _ftz(b_p[:, k, None] * a_p[None, k, :]))
            dst = _ftz(x + dst)
    return dst


def _run_matmul(a16: np.ndarray, b16: np.ndarray, phases: int, fast_paths: bool) -> tuple[Tile, int]:
    tile = Tile("wormhole", engine="python")  # (the Python engine's fast path, or one at a time)
    tile.backend.fast_paths = fast_paths
    copro = tile.coprocessor
    _configure(copro, fp32_dest=True)
    load_src_tile(copro, SRCA, a16)
    load_src_tile(copro, SRCB, b16)
    mvmuls = [ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=m, dst=0) for m in SEQUENCE]
    record = ISA.encode("REPLAY", start_idx=0, len=16, execute_while_loading=0, load_mode=1)
    play = ISA.encode("REPLAY", start_idx=0, len=16, execute_while_loading=0, load_mode=0)
    end = run_words(tile, MATH_THREAD, [record, *mvmuls, *[play] * phases])
    return tile, end


@pytest.mark.parametrize("phases", [1, 4], ids=["LoFi", "HiFi4"])
def test_a_tile_matmul_matches_the_pages_bit_for_bit(phases: int) -> None:
    rng = np.random.default_rng(phases)
    a16, b16 = _bf16_tile(rng), _bf16_tile(rng)
    want = _reference_matmul(a16, b16, phases)
    results = []
    for fast_paths in (True, False):
        tile, end = _run_matmul(a16, b16, phases, fast_paths)
        copro = tile.coprocessor
        got = _f32(formats.dst32_to_fp32(copro.regs.read_tile32(0)))
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
        rwcs = [
            int(getattr(copro.adc, n)[MATH_THREAD]) for n in ("srca", "srcb", "dst", "extra_addr_mod_bit")
        ]
        assert rwcs == [0, 0, 0, 0] and int(copro.adc.fidelity_phase[MATH_THREAD]) == phases % 4
        assert (tile.backend.fast_path_instructions > 0) == fast_paths
        results.append((got.tobytes(), end))
    assert results[0] == results[1]  # the fast path's bits and cycles are the one-at-a-time ones
    # A matmul indeed: HiFi4 is fp32 products of the full BF16 mantissas; LoFi drops low bits.
    exact = b16.astype(np.uint32) << 16
    exact = _f32(exact).astype(np.float64) @ _f32(a16.astype(np.uint32) << 16).astype(np.float64)
    scale = np.abs(_f32(b16.astype(np.uint32) << 16)) @ np.abs(_f32(a16.astype(np.uint32) << 16))
    error = np.abs(want - exact) / scale
    assert error.max() < (2.0**-20 if phases == 4 else 2.0**-3)
    assert phases == 4 or error.max() > 2.0**-12


def test_elwadd_of_tiles_moved_from_dst_matches_numpy_bit_for_bit() -> None:
    """Two BF16-valued tiles in Dst32b (tiles 1 and 2, FP32) are moved into SrcA and SrcB by MOVD2A /
    MOVD2B four rows at a time (MOVD2A.md: BF16 style from FP32 Dst is ShuffleBF16 of the high half,
    exact for BF16 values), the banks handed to the matrix unit by SETDVALID; eight ELWADDs write
    SrcA + SrcB into Dst tile 0. The numpy model: each datum FTZ(a + b) in fp32 (ELWADD.md, AddDst
    false, FP32 Dst)."""
    rng = np.random.default_rng(7)
    a16, b16 = _bf16_tile(rng), _bf16_tile(rng)
    tile = Tile("wormhole")
    copro = tile.coprocessor
    config = copro.config
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, formats.BF16)
    config.write_field("ALU_ACC_CTRL_Fp32_enabled", 0, 1)
    # FP32 in Dst32b's layout (Dst.md: Sign, HiMan(7), Exp(8) | LoMan(16)): rows 64..127 and 128..191.
    copro.regs.write_tile32(1, formats.dst32_from_fp32(a16.astype(np.uint32) << 16))
    copro.regs.write_tile32(2, formats.dst32_from_fp32(b16.astype(np.uint32) << 16))
    for slot, step in ((0, 4), (1, 8)):  # slot 0 for the four-row moves, slot 1 for ELWADD
        for name in ("AB_SEC{}_SrcAIncr", "AB_SEC{}_SrcBIncr", "DST_SEC{}_DestIncr"):
            config.write_thread_field("ADDR_MOD_" + name.format(slot), MATH_THREAD, step)
    rewind = ISA.encode("SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=7)
    words = [ISA.encode("SETDVALID", setvalid=3)]
    for move, first in (("MOVD2A", 64), ("MOVD2B", 128)):
        words.append(rewind)
        words += [ISA.encode(move, dest_32b_lo=0, src=0, addr_mode=0, instr_mod=2, dst=first)] * 16
    words.append(rewind)
    words += [ISA.encode("ELWADD", clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=1, dst=0)] * 8
    run_words(tile, MATH_THREAD, words)
    a = _f32(a16.astype(np.uint32) << 16)
    b = _f32(b16.astype(np.uint32) << 16)
    got = _f32(formats.dst32_to_fp32(copro.regs.read_tile32(0)))
    assert got.view(np.uint32).tolist() == _ftz(a + b).view(np.uint32).tolist()
    # What the moves put in SrcA is the first tile, face by face (a check of the data path itself).
    assert np.array_equal(raw.src_tile_fp32(copro, SRCA), a)
