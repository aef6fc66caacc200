"""MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD, ELWSUB and GMPOOL against fpu_reference.py.

Property tests run random register contents and configurations through the emulator and through the
reference written from the pages' pseudocode, comparing the outcome kind and the whole state. Pinned
cases check both against vectors worked by hand.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fpu_reference import F, FpuRef, ReadDst, RoundToBF16, RoundToFP16
from hypothesis import settings
from hypothesis import strategies as st
from matrix_harness import (
    BF16,
    BFP8,
    COPRO,
    FP8,
    FP16,
    FP32,
    INT8,
    INT32,
    ISA,
    MATRIX,
    SETTINGS,
    TF32,
    UNPACKERS,
    BFP8a,
    check,
    configurations,
    execute,
    load,
    plain_config,
    property_test,
    words,
)
from outcomes import emulator_outcome, reference_outcome

from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Retire, Wait

FPU_SETTINGS = settings(SETTINGS, max_examples=100)
THREAD = 1

# ---------------------------------------------------------------------------- random state


def fpu_fill(rng: np.random.Generator, regs: RegFiles) -> None:
    """Src data with exponents mostly near 1.0 (BF16 / TF32 and FP16 biases), zero exponents, a few
    exponent-255 values, all signs; sometimes drawn from a small pool (ties, exact cancellation).
    Dst data with realistic exponents, some zero exponents and some largest-magnitude patterns."""
    for src in (regs.srca, regs.srcb):
        shape = src.shape
        sign = rng.integers(0, 2, shape) << 18
        man = rng.integers(0, 1024, shape) << 8
        pick = rng.random(shape)
        exp = np.where(
            pick < 0.4,
            rng.integers(118, 137, shape),  # BF16 / TF32 near 1.0
            np.where(pick < 0.65, rng.integers(0, 8, shape) << 5 | rng.integers(12, 19, shape), 0),
        )
        exp = np.where(pick >= 0.65, rng.integers(1, 255, shape), exp)
        exp[rng.random(shape) < 0.15] = 0
        exp[rng.random(shape) < 0.01] = 255
        values = sign | man | exp
        if rng.random() < 0.25:
            values = rng.choice(values.reshape(-1)[:6], shape)
        src[:] = values
    regs.src_client[:] = np.where(rng.random((2, 2)) < 0.9, MATRIX, UNPACKERS)
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    dst = rng.integers(0, 1 << 16, regs.dst.shape)
    pick = rng.random(dst.shape)
    dst = np.where(pick < 0.6, (dst & 0xFF00) | rng.integers(110, 145, dst.shape), dst)
    dst = np.where((pick >= 0.6) & (pick < 0.7), dst & 0xFF00, dst)
    dst = np.where((pick >= 0.7) & (pick < 0.73), rng.choice([0x7FFF, 0xFFFF], dst.shape), dst)
    regs.dst[:] = dst
    regs.dst_row_valid[:] = rng.random(1024) < 0.8


FORMATS = st.one_of(
    st.sampled_from([BF16, FP16, TF32, FP32, INT8, BFP8, BFP8a, INT32, FP8]), st.integers(0, 15)
)


@st.composite
def fpu_configurations(draw) -> dict:
    config = draw(configurations())
    return config | {
        "REG0_SrcA": draw(FORMATS),
        "SrcA_val": draw(FORMATS),
        "INT8_math_enabled": draw(st.sampled_from([0, 0, 0, 1])),
        "rwc": config["rwc"] | {"SrcA": draw(usually(st.integers(0, 47), 6))},
        "FIDELITY_BASE": draw(st.integers(0, 3)),
        "CLR_DVALID_SrcA_Disable": draw(st.integers(0, 1)),
        "CLR_DVALID_SrcB_Disable": draw(st.integers(0, 1)),
        "blocked": [False] * 16,
    }


@st.composite
def usually(draw, documented: st.SearchStrategy[int], width: int) -> int:
    """The documented values, and one time in twenty any value of the slot."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.integers(0, (1 << width) - 1))
    return draw(documented)


ADDR_MODE = usually(st.integers(0, 7), 5)
DST = usually(st.integers(0, 1023), 14)
WORDS = {
    "MVMUL": words(
        "MVMUL", {"instr_mod19": usually(st.integers(0, 1), 3), "addr_mode": ADDR_MODE, "dst": DST}
    ),
    "DOTPV": words("DOTPV", {"instr_mod19": usually(st.just(0), 2), "addr_mode": ADDR_MODE, "dst": DST}),
    "GAPOOL": words(
        "GAPOOL",
        {
            "instr_mod19": usually(st.integers(0, 1), 3),
            "pool_addr_mode": usually(st.integers(0, 7), 4),
            "max_pool_index_en": usually(st.just(0), 1),
            "dst": DST,
        },
    ),
    "ELWMUL": words("ELWMUL", {"addr_mode": ADDR_MODE, "dst": DST}),
    "ELWADD": words("ELWADD", {"addr_mode": ADDR_MODE, "dst": DST}),
    "ELWSUB": words("ELWSUB", {"addr_mode": ADDR_MODE, "dst": DST}),
    "GMPOOL": words(
        "GMPOOL",
        {"instr_mod19": usually(st.just(1), 3), "pool_addr_mode": usually(st.integers(0, 7), 4), "dst": DST},
    ),
}


def _check(name: str, word: int, seed: int, config: dict, thread: int) -> str:
    return check(name, word, seed, config, thread, FpuRef, fpu_fill)


def _test(name: str):
    return property_test(name, WORDS[name], fpu_configurations(), _check, FPU_SETTINGS)


test_mvmul_matches_reference = _test("MVMUL")
test_dotpv_matches_reference = _test("DOTPV")
test_gapool_matches_reference = _test("GAPOOL")
test_elwmul_matches_reference = _test("ELWMUL")
test_elwadd_matches_reference = _test("ELWADD")
test_elwsub_matches_reference = _test("ELWSUB")
test_gmpool_matches_reference = _test("GMPOOL")


# ---------------------------------------------------------------------------- hand-worked vectors


def src(sign: int, man10: int, exp: int) -> int:
    """A 19-bit Src datum: sign bit 18, mantissa bits 8..17, exponent bits 0..7."""
    return sign << 18 | man10 << 8 | exp


def prepare(config: dict, setup: Callable[[RegFiles], None]) -> FpuRef:
    """Zeroed, defined, matrix-owned registers, then ``setup``; a reference over the result."""
    load(0, config, THREAD, FpuRef)
    regs = COPRO.regs
    regs.srca[:] = 0
    regs.srcb[:] = 0
    regs.dst[:] = 0
    regs.dst_row_valid[:] = True
    regs.src_client[:] = MATRIX
    regs.matrix_bank[:] = 0
    setup(regs)
    return FpuRef(regs, config, THREAD)


def run_both(name: str, word: int, config: dict, setup: Callable[[RegFiles], None]) -> FpuRef:
    """Run ``word`` on the reference and the emulator from the same state; return the reference."""
    ref = prepare(config, setup)
    getattr(ref, name)(word)
    assert execute(word, THREAD) == Retire()
    return ref


def dst16(ref: FpuRef, row: int) -> tuple[list[int], list[int]]:
    """Dst16b[row] as (reference, emulator)."""
    return [ref.Read16(row, c) for c in range(16)], COPRO.regs.read16(row).tolist()


def dst32(ref: FpuRef, row: int) -> tuple[list[int], list[int]]:
    return [ref.Read32(row, c) for c in range(16)], COPRO.regs.read32(row).tolist()


def test_mvmul_identity_keeps_five_bits_of_srca_per_phase() -> None:
    """SrcB rows 0..7 = the 8x16 identity (BF16 1.0: Src exponent 127, mantissa 0), so Dst row i =
    SrcA row i as the multipliers see it. SrcA[k][j] = BF16 with exponent 127 + k % 4 and 7-bit
    mantissa m = (8j + k) & 0x7F (Src mantissa m << 3).

    Phase 0 keeps the implicit one and the top 4 mantissa bits: m & 0x78. For example SrcA[1][15] =
    1.1111001b * 2 (m = 121 = 0x79) gives 1.1111b * 2 = 3.875 = BF16 0x4078; in Dst16 (sign, man(7),
    exp(8)) 0x7880. Phase 1 keeps the next five (here BF16's last three, m & 7): 0.0000001b * 2 =
    2**-6 = BF16 0x3C80, Dst16 0x0079. Phase 0 plus phase 1 into FP32 Dst is SrcA exactly: 3.890625
    = FP32 0x40790000, Dst32 (sign, man-hi(7), exp(8) | man-lo(16)) 0x79800000.
    """

    def setup(regs: RegFiles) -> None:
        for i in range(8):
            regs.srcb[0, i, i] = src(0, 0, 127)
        for k in range(16):
            for j in range(16):
                regs.srca[0, k, j] = src(0, ((8 * j + k) & 0x7F) << 3, 127 + k % 4)

    word = ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0)
    ref = run_both("MVMUL", word, plain_config(), setup)
    for i in range(8):
        want = [(((8 * j + i) & 0x78) << 8) | (127 + i % 4) for j in range(16)]
        assert dst16(ref, i) == (want, want)
    assert dst16(ref, 1)[1][15] == 0x7880

    rwc1 = plain_config()["rwc"] | {"FidelityPhase": 1}
    ref = run_both("MVMUL", word, plain_config(rwc=rwc1), setup)
    assert dst16(ref, 1)[1][15] == 0x0079

    # Two phases into FP32 Dst: exact.
    ref = prepare(plain_config(Fp32_enabled=1), setup)
    ref.MVMUL(word)
    assert execute(word, THREAD) == Retire()
    ref.RWC["FidelityPhase"] = 1
    COPRO.adc.fidelity_phase[THREAD] = 1
    ref.MVMUL(word)
    assert execute(word, THREAD, cycle=100) == Retire()  # after the Dst read-after-write latency
    for i in range(8):
        want = []
        for j in range(16):
            m = (8 * j + i) & 0x7F
            want.append(m << 24 | (127 + i % 4) << 16)
        assert dst32(ref, i) == (want, want)
    assert dst32(ref, 1)[1][15] == 0x79800000


def test_fidelity_base_adds_to_the_rwc_phase() -> None:
    """FIDELITY_BASE_Phase 3 with RWC phase 2: phase (2 + 3) & 3 = 1, as the test above."""

    def setup(regs: RegFiles) -> None:
        regs.srcb[0, 1, 1] = src(0, 0, 127)
        regs.srca[0, 1, 15] = src(0, 0x79 << 3, 128)

    config = plain_config(FIDELITY_BASE=3, rwc=plain_config()["rwc"] | {"FidelityPhase": 2})
    ref = run_both(
        "MVMUL", ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0), config, setup
    )
    assert dst16(ref, 1)[0][15] == dst16(ref, 1)[1][15] == 0x0079


def test_mvmul_row_broadcast_writes_every_other_row() -> None:
    """BroadcastSrcBRow: SrcB row RWC.SrcB (here 5, unaligned) times SrcA, into Dst rows 0, 2, 4 and 6
    (NumRows 7, DstRow &= 0x3F9); rows 1, 3, 5 and 7 keep their bits. SrcB[5][0] = 2.0, SrcA[0][j] =
    1.5 (mantissa 0x40 << 3): every written datum is 3.0 = BF16 0x4040, Dst16 0x4080."""

    def setup(regs: RegFiles) -> None:
        regs.srcb[0, 5, 0] = src(0, 0, 128)
        regs.srca[0, 0, :] = src(0, 0x40 << 3, 127)
        regs.dst[0:8, :] = 0x1234

    config = plain_config(rwc=plain_config()["rwc"] | {"SrcB": 5})
    ref = run_both(
        "MVMUL", ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=1, addr_mode=0, dst=0), config, setup
    )
    for row in range(8):
        want = [0x4080 if row % 2 == 0 and row < 7 else 0x1234] * 16
        assert dst16(ref, row) == (want, want)


def test_bf16_dst_rounds_ties_away_from_zero() -> None:
    """ELWADD with AddDst into BF16 Dst: SrcA = 2**-8 (exponent 119), SrcB = 0, Dst = 1.0 (Dst16
    0x007F). 1 + 2**-8 = FP32 0x3F808000 lies halfway between BF16 0x3F80 and 0x3F81; ties away
    gives 0x3F81 (even would give 0x3F80), Dst16 0x017F. With the signs negated, 0xBF81 = Dst16
    0x817F. Column 2 holds 1 + 2**-9 (below the tie): 0x3F80, Dst16 0x007F."""
    assert RoundToBF16(F(0x3F808000)) == 0x3F81
    assert RoundToBF16(F(0xBF808000)) == 0xBF81

    def setup(regs: RegFiles) -> None:
        regs.srca[0, 0:8, :] = src(0, 0, 119)
        regs.srca[0, 0:8, 1] = src(1, 0, 119)
        regs.srca[0, 0:8, 2] = src(0, 0, 118)
        regs.dst[0:8, :] = 0x007F
        regs.dst[0:8, 1] = 0x807F

    ref = run_both(
        "ELWADD",
        ISA.encode("ELWADD", clear_dvalid=0, dest_accum_en=1, instr_mod19=0, addr_mode=0, dst=0),
        plain_config(),
        setup,
    )
    want = [0x017F, 0x817F, 0x007F] + [0x017F] * 13
    for row in range(8):
        assert dst16(ref, row) == (want, want)


def test_fp16_dst_rounds_ties_away_and_saturates() -> None:
    """FP16 Dst: 1 + 2**-11 (FP32 0x3F801000) is halfway between FP16 0x3C00 and 0x3C01: ties away
    gives 0x3C01. 2**17 is beyond exponent 31 (2**16): saturates to 0x7FFF. 2**-15 (rebiased
    exponent 0) flushes to a signed zero, 0x8000 for the negative."""
    assert RoundToFP16(F(0x3F801000)) == 0x3C01
    assert RoundToFP16(F(0x48000000)) == 0x7FFF
    assert RoundToFP16(F(0xB8000000)) == 0x8000

    # ELWADD with FP16A force: SrcA = 1.0 (FP16 exponent 15), SrcB = 2**-11 (exponent 4): FP16 0x3C01,
    # Dst16 (sign, man(10), exp(5)) 0x002F.
    def setup(regs: RegFiles) -> None:
        regs.srca[0, 0:8, :] = src(0, 0, 15)
        regs.srcb[0, 0:8, :] = src(0, 0, 4)
        regs.srca[0, 0:8, 1] = src(0, 0, 31)  # 2**16 + 2**16 = 2**17: saturates, Dst16 0x7FFF
        regs.srcb[0, 0:8, 1] = src(0, 0, 31)

    ref = run_both(
        "ELWADD",
        ISA.encode("ELWADD", clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=0, dst=0),
        plain_config(FP16A_FORCE_Enable=1),
        setup,
    )
    want = [0x002F, 0x7FFF] + [0x002F] * 14
    for row in range(8):
        assert dst16(ref, row) == (want, want)


def test_int8_elwmul_saturates_and_masks_magnitudes() -> None:
    """INT8 math, phase 0: SrcA keeps magnitude bits 5..7 (mask 0x4E0FF), SrcB bits 4..9 (0x7F0FF).
    SrcA magnitude 511 reads as 224, SrcB 1008 as 1008: product 225792. Dst = 2**31 - 100 (Dst32
    0x7FFFFF9C: sign-magnitude, shuffle leaves the all-ones exponent-position byte in place) plus
    225792 saturates to 2**31 - 1 = Dst32 0x7FFFFFFF. Column 1 negates SrcA and Dst: -(2**31 - 1),
    Dst32 0xFFFFFFFF. Column 2: SrcA 31 reads as 0 (bits 0..4 are phase 1's): Dst unchanged."""

    def setup(regs: RegFiles) -> None:
        regs.srca[0, 0:8, :] = src(0, 511, 16)
        regs.srca[0, 0:8, 1] = src(1, 511, 16)
        regs.srca[0, 0:8, 2] = src(0, 31, 16)
        regs.srcb[0, 0:8, :] = src(0, 1008, 16)
        for row in range(8):
            regs.write32(row, np.array([0x7FFFFF9C, 0xFFFFFF9C] + [0x7FFFFF9C] * 14, np.uint32))

    ref = run_both(
        "ELWMUL",
        ISA.encode("ELWMUL", clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=0, dst=0),
        plain_config(INT8_math_enabled=1),
        setup,
    )
    want = [0x7FFFFFFF, 0xFFFFFFFF, 0x7FFFFF9C] + [0x7FFFFFFF] * 13
    for row in range(8):
        assert dst32(ref, row) == (want, want)


def test_gmpool_argmax_breaks_ties_by_visiting_order() -> None:
    """BF16 SrcA with Fp32 Dst and ArgMax: BF16 max in the high half, index in the low bits. SrcB
    row 0 = 1.0 (exponent 127: no scaling). Dst32 row 0 = 0 (reads as BF16 exponent 127 - low);
    rows 1..3 = 0x200. IndexPhase = (0 + 0x100) & 0xF00 = 0x100, so indices are 0x10 + T[i], T =
    0, 3, 6, 1, 4, 7, 2, 5, over rows visited 4, 5, 6, 7, 0, 1, 2, 3, 8, ..., 15; >= lets the later
    visit win ties.

    Column 0: rows 2 and 5 hold 3.0 (Src mantissa 0x200, exponent 128), the rest 1.0. Row 2 is
    visited after row 5: index 0x10 + T[2] = 0x16; max 3.0 = Dst hi 0x4080: 0x40800116.
    Column 1: row 3 = 2.0 leads the first eight; row 12 = 4.0 is the max but not indexed: index
    0x10 + T[3] = 0x11, max 4.0 = hi 0x0081: 0x00810111. Other columns all 1.0: every row ties,
    the last of the first eight visited is row 3: 0x007F0111. Rows 1..3: (0x200 + 0x100) & 0xF00
    = 0x300."""

    def setup(regs: RegFiles) -> None:
        regs.srcb[0, 0, :] = src(0, 0, 127)
        regs.srca[0, 0:16, :] = src(0, 0, 127)
        regs.srca[0, 2, 0] = regs.srca[0, 5, 0] = src(0, 0x200, 128)
        regs.srca[0, 3, 1] = src(0, 0, 128)
        regs.srca[0, 12, 1] = src(0, 0, 129)
        regs.write32(0, np.zeros(16, np.uint32))
        regs.write32(np.arange(1, 4), np.full((3, 16), 0x200, np.uint32))

    word = ISA.encode("GMPOOL", clear_dvalid=0, instr_mod19=1, pool_addr_mode=0, max_pool_index_en=1, dst=0)
    ref = run_both("GMPOOL", word, plain_config(Fp32_enabled=1), setup)
    want = [0x40800116, 0x00810111] + [0x007F0111] * 14
    assert dst32(ref, 0) == (want, want)
    for row in (1, 2, 3):
        assert dst32(ref, row) == ([0x300] * 16, [0x300] * 16)
    assert ReadDst(0x40800116, "BF16") == (0, 128 + 127, 0x200)


def test_gmpool_tf32_argmax_returns_the_index_only() -> None:
    """TF32 SrcA with ArgMax: Dst gets IndexPhase | MaxIndex alone. Column 0 as above: 0x116."""

    def setup(regs: RegFiles) -> None:
        regs.srcb[0, 0, :] = src(0, 0, 127)
        regs.srca[0, 0:16, :] = src(0, 0, 127)
        regs.srca[0, 2, 0] = regs.srca[0, 5, 0] = src(0, 0x200, 128)
        regs.write32(np.arange(0, 4), np.zeros((4, 16), np.uint32))

    word = ISA.encode("GMPOOL", clear_dvalid=0, instr_mod19=1, pool_addr_mode=0, max_pool_index_en=1, dst=0)
    ref = run_both("GMPOOL", word, plain_config(REG0_SrcA=TF32, Fp32_enabled=1), setup)
    want = [0x116] + [0x111] * 15
    assert dst32(ref, 0) == (want, want)


def test_matrix_unit_waits_for_both_banks_and_flips_them() -> None:
    """The wait gate needs both SrcA and SrcB banks; FlipSrcA / FlipSrcB then hand the banks back
    to the unpackers (unless CLR_DVALID_Src*_Disable) and flip to the other bank."""
    word = ISA.encode("ELWADD", clear_dvalid=3, dest_accum_en=0, instr_mod19=0, addr_mode=0, dst=0)
    for file in (0, 1):
        prepare(plain_config(), lambda regs, f=file: regs.src_client.__setitem__((f, 0), UNPACKERS))
        before = COPRO.regs.copy()
        assert isinstance(execute(word, THREAD), Wait)
        assert COPRO.regs.equals(before)
    prepare(plain_config(CLR_DVALID_SrcB_Disable=1), lambda regs: None)
    assert execute(word, THREAD) == Retire()
    assert COPRO.regs.src_client.tolist() == [[UNPACKERS, MATRIX], [MATRIX, MATRIX]]
    assert COPRO.regs.matrix_bank.tolist() == [1, 1]


def test_mvmul_srca_rows_beyond_63_are_undefined() -> None:
    """RWC SrcA 56: SrcA rows 56..71; nothing changes."""
    config = plain_config(rwc=plain_config()["rwc"] | {"SrcA": 57})
    ref = prepare(config, lambda regs: None)
    word = ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0)
    assert reference_outcome(lambda: ref.MVMUL(word)) == "undefined"
    before = COPRO.regs.copy()
    assert emulator_outcome(lambda: execute(word, THREAD)) == "undefined"
    assert COPRO.regs.equals(before)


def test_gmpool_reads_undefined_dst_as_all_bits_set() -> None:
    """GMPOOL.md: GMPOOL "reads undefined rows as minus infinity (i.e. all bits set)". With Dst32b rows
    0..3 undefined, DstVal = 0xFFFFFFFF: Max = ReadDst(DstVal, BF16) = (1, 0xFF + 127, 0x3F8), below
    any Src datum here; MaxIndex = 0xFF; IndexPhase = (0xFFFFFFFF + 0x100) & 0xF00 = 0 (uint32 wraps).
    SrcA all 1.0 but row 2 of column 0 = 3.0, SrcB scalers 1.0. Column 0: index T[2] = 6 and max
    3.0: 0x40800006. Other columns tie on 1.0; the last of the first eight visited is row 3, T[3] =
    1: 0x007F0001. Rows 1..3 (ArgMax garbage): (0xFFFFFFFF + 0x100) & 0xF00 = 0."""

    def setup(regs: RegFiles) -> None:
        regs.srcb[0, 0, :] = src(0, 0, 127)
        regs.srca[0, 0:16, :] = src(0, 0, 127)
        regs.srca[0, 2, 0] = src(0, 0x200, 128)
        regs.mark_undefined32(np.arange(0, 4))

    word = ISA.encode("GMPOOL", clear_dvalid=0, instr_mod19=1, pool_addr_mode=0, max_pool_index_en=1, dst=0)
    ref = prepare(plain_config(Fp32_enabled=1), setup)
    ref.GMPOOL(word)
    want = [0x40800006] + [0x007F0001] * 15
    assert [ref.Read32(0, c) for c in range(16)] == want
    for row in (1, 2, 3):
        assert [ref.Read32(row, c) for c in range(16)] == [0] * 16
    assert execute(word, THREAD) == Retire()
    assert COPRO.regs.read32(0).tolist() == want
    for row in (1, 2, 3):
        assert COPRO.regs.read32(row).tolist() == [0] * 16
