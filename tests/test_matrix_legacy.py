"""MOVDBGA2D and the legacy MFCONV3S1 / CONV3S1 / CONV3S2 / APOOL3S1 / APOOL3S2 against references.

MOVDBGA2D: tt-isa-documentation WormholeB0 MOVDBGA2D.md says it is MOVA2D without the Wait Gate, so
its reference is the MOVA2D reference of test_matrix_moves.py (written from MOVA2D.md) run with the
Wait Gate paragraph skipped.

The legacy five: MatrixUnit.md says all they do is ``Dst += 0``; RWCs.md that they apply their
AddrMod. The reference below takes the readings matrix/legacy.py states: it retires only when no
Dst row is undefined, ``clear_dvalid`` is 0, both Src banks are the matrix unit's, and every Dst
datum in the configured view comes back unchanged from the arithmetic model's ``Dst + 0`` (written
with the MVMUL reference's scalar helpers, fpu_reference.py) and is not a NaN; then only the RWCs
change. Word fields by bit position: clear_dvalid 22..23, AddrMod 14..16 (MFCONV3S1 / CONV3S*) or
15..17 with bits 18..21 undefined (APOOL3S*).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

from functools import lru_cache

import numpy as np
from dst_reference import bits
from fpu_reference import (
    FTZ,
    S_FP16,
    S_INT8,
    FpuRef,
    ReadDstBF16,
    ReadDstFP16,
    ReadDstFP32,
    ReadDstInt32,
    RoundToBF16,
    RoundToFP16,
    SaturateAddInt32,
    WriteDstBF16,
    WriteDstFP16,
    WriteDstFP32,
    WriteDstInt32,
)
from hypothesis import settings
from hypothesis import strategies as st
from matrix_harness import (
    BF16,
    COPRO,
    FP16,
    FP32,
    INT8,
    ISA,
    MATRIX,
    SETTINGS,
    TF32,
    UNPACKERS,
    configurations,
    execute,
    mostly,
    plain_config,
    property_test,
    random_fill,
    words,
)
from matrix_harness import check as harness_check
from matrix_harness import load as harness_load
from outcomes import RefUB, RefUnimplemented, emulator_outcome
from test_matrix_moves import Ref as MovesRef

from tensixsim.tensix.matrix import moves
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Retire, Wait
from tensixsim.timing import MATRIX as MATRIX_TIMING

LEGACY_SETTINGS = settings(SETTINGS, max_examples=50)

# ---------------------------------------------------------------------------- references


@lru_cache(maxsize=1 << 16)
def DstPlusZero(SrcAStyle: str, UseDst32b: bool, DstVal: int) -> int | None:
    """The Dst bits ``Dst += 0`` writes for ``DstVal``; None for a NaN (its propagation is open)."""
    with np.errstate(all="ignore"):
        if SrcAStyle == S_INT8:
            return WriteDstInt32(SaturateAddInt32(0, ReadDstInt32(DstVal)))
        if UseDst32b:
            x = FTZ(np.float32(0.0) + ReadDstFP32(DstVal))
            return None if np.isnan(x) else WriteDstFP32(x)
        if SrcAStyle == S_FP16:
            x = FTZ(np.float32(0.0) + ReadDstFP16(DstVal))
            return WriteDstFP16(RoundToFP16(x))
        x = FTZ(np.float32(0.0) + ReadDstBF16(DstVal))
        return None if np.isnan(x) else WriteDstBF16(RoundToBF16(x))


class LegacyRef(FpuRef):
    def _decode_legacy(self, word: int, Pool: bool) -> tuple[int, int]:
        """(FlipSrc, AddrMod)."""
        FlipSrc = bits(word, 22, 23)
        if Pool:
            AddrMod = bits(word, 15, 17)
            if bits(word, 18, 21):
                raise RefUB
        else:
            AddrMod = bits(word, 14, 16)
        return FlipSrc, AddrMod

    def _legacy(self, word: int, Pool: bool) -> None:
        FlipSrc, AddrMod = self._decode_legacy(word, Pool)
        SrcAStyle, UseDst32b = self._formats()
        if FlipSrc:
            raise RefUnimplemented
        if self.SrcAClient[self.SrcABank] != MATRIX or self.SrcBClient[self.SrcBBank] != MATRIX:
            raise RefUnimplemented
        if self.Undefined:
            raise RefUnimplemented
        for Row in range(512 if UseDst32b else 1024):
            for Col in range(16):
                DstVal = self.Read32(Row, Col) if UseDst32b else self.Read16(Row, Col)
                if DstPlusZero(SrcAStyle, UseDst32b, DstVal) != DstVal:
                    raise RefUnimplemented
        self.ApplyAddrMod(AddrMod)

    def MFCONV3S1(self, word: int) -> None:
        self._legacy(word, Pool=False)

    def CONV3S1(self, word: int) -> None:
        self._legacy(word, Pool=False)

    def CONV3S2(self, word: int) -> None:
        self._legacy(word, Pool=False)

    def APOOL3S1(self, word: int) -> None:
        self._legacy(word, Pool=True)

    def APOOL3S2(self, word: int) -> None:
        self._legacy(word, Pool=True)


class DebugMoveRef(MovesRef):
    def MOVDBGA2D(self, word: int) -> None:
        """MOVA2D's functional model, ignoring the paragraph about the Wait Gate."""
        Saved = list(self.SrcAClient)
        self.SrcAClient[self.SrcABank] = MATRIX
        try:
            self.MOVA2D(word)
        finally:
            self.SrcAClient = Saved


# ---------------------------------------------------------------------------- random state

# Low bytes of a 16-bit Dst storage word that are a normal exponent in every view: BF16 / Dst32b
# high half (bits 0..7 in 1..254) and FP16 (bits 0..4 nonzero).
_NORMAL_LOW = np.array([b for b in range(1, 255) if b & 0x1F], np.int64)


def legacy_fill(rng: np.random.Generator, regs: RegFiles) -> None:
    """Random Src data, banks mostly the matrix unit's; every Dst row defined and every datum normal
    (a fixed point of Dst + 0), a third of the time with a few exceptions: exponent 0 or 255,
    sign-only words, an undefined row."""
    random_fill(rng, regs)
    regs.src_client[:] = np.where(rng.random((2, 2)) < 0.9, MATRIX, UNPACKERS)
    dst = rng.integers(0, 256, regs.dst.shape) << 8 | rng.choice(_NORMAL_LOW, regs.dst.shape)
    regs.dst_row_valid[:] = True
    if rng.random() < 0.33:
        for _ in range(int(rng.integers(1, 4))):
            row, col = int(rng.integers(0, 1024)), int(rng.integers(0, 16))
            kind = int(rng.integers(0, 4))
            if kind == 3:
                regs.dst_row_valid[row] = False
            else:
                dst[row, col] = [dst[row, col] & 0xFF00, dst[row, col] | 0xFF, 0x8000][kind]
    regs.dst[:] = dst


FORMATS = st.one_of(st.sampled_from([BF16, FP16, TF32, FP32, INT8]), st.integers(0, 15))


@st.composite
def legacy_configurations(draw) -> dict:
    return draw(configurations()) | {
        "REG0_SrcA": draw(FORMATS),
        "SrcA_val": draw(FORMATS),
        "INT8_math_enabled": draw(st.sampled_from([0, 0, 0, 1])),
        "blocked": [False] * 16,
    }


def legacy_check(name: str, word: int, seed: int, config: dict, thread: int) -> str:
    return harness_check(name, word, seed, config, thread, LegacyRef, legacy_fill, cycles=MATRIX_TIMING.issue)


def debug_check(name: str, word: int, seed: int, config: dict, thread: int) -> str:
    return harness_check(name, word, seed, config, thread, DebugMoveRef)


@st.composite
def usually(draw, documented: st.SearchStrategy[int], width: int) -> int:
    """The documented values, and one time in eight any value of the ``width``-bit slot."""
    if draw(st.integers(0, 7)) == 0:
        return draw(st.integers(0, (1 << width) - 1))
    return draw(documented)


CLEAR_DVALID = usually(st.just(0), 2)
CONV_WORDS = {"clear_dvalid": CLEAR_DVALID}
POOL_WORDS = {"clear_dvalid": CLEAR_DVALID, "pool_addr_mode": usually(st.integers(0, 7), 7)}


def _legacy_test(name: str, fields: dict):
    return property_test(name, words(name, fields), legacy_configurations(), legacy_check, LEGACY_SETTINGS)


test_mfconv3s1_matches_reference = _legacy_test("MFCONV3S1", CONV_WORDS)
test_conv3s1_matches_reference = _legacy_test("CONV3S1", CONV_WORDS)
test_conv3s2_matches_reference = _legacy_test("CONV3S2", CONV_WORDS)
test_apool3s1_matches_reference = _legacy_test("APOOL3S1", POOL_WORDS)
test_apool3s2_matches_reference = _legacy_test("APOOL3S2", POOL_WORDS)

test_movdbga2d_matches_reference = property_test(
    "MOVDBGA2D",
    words(
        "MOVDBGA2D",
        {"instr_mod": mostly(st.sampled_from([0, 2]), 2), "dst": mostly(st.integers(0, 1023), 12)},
    ),
    configurations(),
    debug_check,
)


# ---------------------------------------------------------------------------- hand-worked vectors

THREAD = 1
BF16_ONE = 0x007F  # Dst16b BF16 1.0: sign 0, mantissa 0, exponent 127 in bits 0..7
STEP = {"SrcAIncr": 4, "DestIncr": 8}  # ADDR_MOD slot 2 in the vectors below


def prepare(**changes) -> None:
    """Plain BF16 configuration, ADDR_MOD slot 2 = STEP, both banks the matrix unit's, Dst all 1.0."""
    config = plain_config(**changes)
    config["addr_mods"][2] = config["addr_mods"][2] | STEP
    harness_load(0, config, THREAD)
    regs = COPRO.regs
    regs.src_client[:] = MATRIX
    regs.dst[:] = BF16_ONE
    regs.dst_row_valid[:] = True
    regs.srca_row_latch[0] = 5


def outcome_of(word: int) -> str:
    return emulator_outcome(lambda: execute(word, THREAD))


def test_conv3s1_applies_addr_mod_and_leaves_dst() -> None:
    prepare()
    before = COPRO.regs.dst.copy()
    word = ISA.encode("CONV3S1", clear_dvalid=0, rotate_weights=0x1F, addr_mode=2, dst=0x3FFF)
    assert execute(word, THREAD) == Retire(MATRIX_TIMING.issue)
    assert np.array_equal(COPRO.regs.dst, before)
    assert (int(COPRO.adc.srca[THREAD]), int(COPRO.adc.dst[THREAD])) == (4, 8)
    assert int(COPRO.regs.srca_row_latch[0]) == -1  # SHIFTXA can no longer tell its row


def test_apool3s2_takes_addr_mod_from_bits_15_to_17() -> None:
    prepare()
    word = ISA.encode("APOOL3S2", clear_dvalid=0, pool_addr_mode=2, index_en=1, dst=7)
    assert word >> 15 & 7 == 2
    assert execute(word, THREAD) == Retire(MATRIX_TIMING.issue)
    assert (int(COPRO.adc.srca[THREAD]), int(COPRO.adc.dst[THREAD])) == (4, 8)
    prepare()
    assert outcome_of(ISA.encode("APOOL3S1", clear_dvalid=0, pool_addr_mode=8 | 2, index_en=0, dst=0)) == (
        "undefined"
    )


def test_legacy_declines_where_the_rows_would_matter() -> None:
    conv = ISA.encode("MFCONV3S1", clear_dvalid=0, rotate_weights=0, addr_mode=2, dst=0)
    cases = {
        "denormal BF16": lambda regs: regs.dst.__setitem__((700, 3), 0x4100),  # exponent 0
        "-0 in BF16": lambda regs: regs.dst.__setitem__((9, 0), 0x8000),
        "NaN in BF16": lambda regs: regs.dst.__setitem__((9, 0), 0x01FF),
        # The quiet NaN 0x7FC0 (mantissa 0x40 at bits 8..14, exponent 255): a NaN is never a fixed point.
        "quiet NaN in BF16": lambda regs: regs.dst.__setitem__((9, 0), 0x40FF),
        "undefined row": lambda regs: regs.dst_row_valid.__setitem__(1000, False),
        "SrcB bank with the unpacker": lambda regs: regs.src_client.__setitem__(
            (1, int(regs.matrix_bank[1])), UNPACKERS
        ),
    }
    for name, change in cases.items():
        prepare()
        change(COPRO.regs)
        before = COPRO.regs.copy()
        assert outcome_of(conv) == "unimplemented", name
        assert COPRO.regs.equals(before), name
        assert int(COPRO.adc.srca[THREAD]) == 0, name
    prepare()
    flip = ISA.encode("CONV3S2", clear_dvalid=1, rotate_weights=0, addr_mode=2, dst=0)
    assert outcome_of(flip) == "unimplemented"
    # Infinity is a fixed point: +inf + 0 = +inf (Dst16b BF16 exponent 255, mantissa 0).
    prepare()
    COPRO.regs.dst[5, 5] = 0x00FF
    assert outcome_of(conv) == "retire"


def test_legacy_int32_dst_minus_zero_is_not_a_fixed_point() -> None:
    conv = ISA.encode("CONV3S1", clear_dvalid=0, rotate_weights=0, addr_mode=0, dst=0)
    prepare(INT8_math_enabled=1)
    COPRO.regs.dst[:] = 0x0001  # Dst32b sign-magnitude values, none of them -0
    assert outcome_of(conv) == "retire"
    prepare(INT8_math_enabled=1)
    COPRO.regs.dst[:] = 0x0001
    COPRO.regs.dst[16] = 0x8000  # high halves of Dst32b row 8 (rows 16 / 24): sign only
    COPRO.regs.dst[24] = 0x0000
    assert outcome_of(conv) == "unimplemented"


def test_legacy_waits_for_dst_written_by_the_matrix_unit() -> None:
    prepare()
    COPRO.regs.written(np.array([600]), 10, MATRIX_TIMING.dst_write_hidden)
    ready = COPRO.regs.readable_from(np.array([600]))
    assert ready > 11
    word = ISA.encode("APOOL3S1", clear_dvalid=0, pool_addr_mode=2, index_en=0, dst=0)
    ctx_word = execute(word, THREAD, cycle=11)
    assert isinstance(ctx_word, Wait) and ctx_word.until == ready
    assert int(COPRO.adc.srca[THREAD]) == 0
    assert execute(word, THREAD, cycle=ready) == Retire(MATRIX_TIMING.issue)


def test_movdbga2d_moves_from_a_bank_the_unpacker_owns() -> None:
    prepare()
    regs = COPRO.regs
    bank = int(regs.matrix_bank[0])
    regs.src_client[0, bank] = UNPACKERS
    # SrcA row 3: BF16 1.5 (sign 0, mantissa 0x200 in bits 8..17, exponent 127) in every column.
    regs.srca[bank, 3] = 0x200 << 8 | 127
    word = ISA.encode("MOVDBGA2D", dest_32b_lo=0, src=3, addr_mode=2, instr_mod=0, dst=40)
    mova2d = ISA.encode("MOVA2D", dest_32b_lo=0, src=3, addr_mode=2, instr_mod=0, dst=40)
    assert isinstance(execute(mova2d, THREAD), Wait)
    assert execute(word, THREAD, cycle=20) == Retire()
    # Dst16b BF16: sign, mantissa 7 bits (0x40 for .5) at bits 8..14, exponent 127 in bits 0..7.
    assert regs.dst[40].tolist() == [0x40 << 8 | 127] * 16
    assert (int(COPRO.adc.srca[THREAD]), int(COPRO.adc.dst[THREAD])) == (4, 8)
    assert regs.src_client[0, bank] == UNPACKERS
    # MOVA2D's scheduling hold: the listed Dst readers wait three cycles.
    assert moves.held_until(COPRO, "MVMUL", 21) == 24
    assert moves.held_until(COPRO, "CONV3S1", 23) == 24
    assert moves.held_until(COPRO, "MVMUL", 24) is None
