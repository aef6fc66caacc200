"""SHIFTXA, SHIFTXB, TRNSPSRCB, GATESRCRST and CLREXPHIST against a reference written from the pages.

The reference follows tt-isa-documentation WormholeB0 SHIFTXA.md, TRNSPSRCB.md, GATESRCRST.md,
CLREXPHIST.md, the jasondavies fork's SHIFTXB.md (lanes 0..14 move, the corrected loop bound) and
RWCs.md (ApplyAddrMod), line by line, over Python lists. Words are decoded by bit position with the
Blackhole placement matrix/src_shifts.py documents: SHIFTXA Direction bits 0..1 (2 right, 3 left, 0 / 1
reserved) and a shift amount field at bits 2..23 that must be zero; SHIFTXB SrcRow bits 0..5,
ShiftInZero bit 10, AddrMod bits 14..16; GATESRCRST InvalidateSrcBCache bit 1 and the SrcA gate bit 0.
Other set bits of a field are undefined; TRNSPSRCB and CLREXPHIST have no fields, and bits outside
every field are not checked (isa/spec.py). It takes the readings matrix/src_shifts.py documents where
the pages are open: SHIFTXA's ``HardwareBug()`` row is ``regs.srca_row_latch`` where that is
known, and where it is unknown the instruction is unimplemented when the result depends on it;
ApplyAddrMod's Blackhole ExtraAddrModBit / AB2 cases are unimplemented (adc.py); GATESRCRST and
CLREXPHIST act on state the emulator has no trace of, so they change nothing.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import copy
from functools import partial

import numpy as np
import pytest
from dst_reference import bits
from hypothesis import given, settings
from hypothesis import strategies as st
from matrix_harness import (
    COPRO,
    ISA,
    MATRIX,
    SEEDS,
    SETTINGS,
    THREADS,
    UNPACKERS,
    RefState,
    execute,
    mostly,
    property_test,
    random_fill,
    words,
)
from matrix_harness import check as harness_check
from matrix_harness import configurations as harness_configurations
from matrix_harness import load as harness_load
from matrix_harness import plain_config as harness_plain_config
from outcomes import RefUB, RefUnimplemented, emulator_outcome

from tensixsim import Tile
from tensixsim.errors import Unimplemented
from tensixsim.raw import MATH_THREAD, configure_matmul, run_words, set_addr_mod
from tensixsim.tensix.matrix import src_shifts
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Retire, Wait

SHIFT_SETTINGS = settings(SETTINGS, max_examples=150)
DIRECTION_RIGHT, DIRECTION_LEFT = 2, 3
CYCLES = {"SHIFTXA": 1, "SHIFTXB": 2, "TRNSPSRCB": 1, "GATESRCRST": 1, "CLREXPHIST": 1}


# ---------------------------------------------------------------------------- reference


class Ref(RefState):
    """The pages' shifts over the shared reference state; ``HardwareBug()`` is the latched SrcA row,
    None where the emulator does not know it."""

    def __init__(self, regs: RegFiles, config: dict, thread: int):
        super().__init__(regs, config, thread)
        latch = int(regs.srca_row_latch[0])
        self.HardwareBugRow = None if latch < 0 else latch

    def _shiftxa_from(self, SrcA: list, InRow: int, Direction: int) -> list:
        """The page's loops, run on ``SrcA`` (a copy of the bank) with ``HardwareBug() == InRow``."""
        InRow &= 0x30
        for i in range(16):
            if Direction == DIRECTION_RIGHT:
                for Column in range(15, 0, -1):
                    SrcA[i][Column] = SrcA[InRow + i][Column - 1]
                SrcA[i][0] = 0
            else:
                for Column in range(15):
                    SrcA[i][Column] = SrcA[InRow + i][Column + 1]
                SrcA[i][15] = 0
        return SrcA

    def SHIFTXA(self, word: int) -> None:
        Direction = bits(word, 0, 1)
        if bits(word, 2, 23) or Direction not in (DIRECTION_RIGHT, DIRECTION_LEFT):
            raise RefUB
        if self.SrcAClient[self.SrcABank] != MATRIX:
            self.waited = True
            return
        bank = self.SrcA[self.SrcABank]
        if self.HardwareBugRow is not None:
            self.SrcA[self.SrcABank] = self._shiftxa_from(copy.deepcopy(bank), self.HardwareBugRow, Direction)
            return
        outcomes = [self._shiftxa_from(copy.deepcopy(bank), InRow, Direction) for InRow in (0, 16, 32, 48)]
        if any(o != outcomes[0] for o in outcomes):
            raise RefUnimplemented
        self.SrcA[self.SrcABank] = outcomes[0]

    def _decode_shiftxb(self, word: int) -> tuple[int, int, int]:
        """(SrcRow, ShiftInZero, AddrMod)."""
        SrcRow, ShiftInZero, AddrMod = bits(word, 0, 5), bits(word, 10, 10), bits(word, 14, 16)
        if bits(word, 6, 9) or bits(word, 11, 13) or bits(word, 17, 23):
            raise RefUB
        return SrcRow, ShiftInZero, AddrMod

    def SHIFTXB(self, word: int) -> None:
        SrcRow, ShiftInZero, AddrMod = self._decode_shiftxb(word)
        if self.SrcBClient[self.SrcBBank] != MATRIX:
            self.waited = True
            return
        SrcB = copy.deepcopy(self.SrcB)
        SrcRow = (SrcRow + self.RWC["SrcB"]) & 0x3F
        Column0 = SrcB[self.SrcBBank][SrcRow][0]
        for Column in range(15):
            SrcB[self.SrcBBank][SrcRow][Column] = SrcB[self.SrcBBank][SrcRow][Column + 1]
        SrcB[self.SrcBBank][SrcRow][15] = 0 if ShiftInZero else Column0
        self.ApplyAddrMod(AddrMod)  # may be unimplemented: then nothing changes
        self.SrcB = SrcB

    def TRNSPSRCB(self, word: int) -> None:
        # No operands: bits 0..23 lie outside every field, which decoding leaves unchecked (spec.py).
        if self.SrcBClient[self.SrcBBank] != MATRIX:
            self.waited = True
            return
        B = self.SrcB[self.SrcBBank]
        RowBase = 16
        for i in range(16):
            for j in range(i):
                ij = B[RowBase + i][j]
                ji = B[RowBase + j][i]
                B[RowBase + i][j] = ji
                B[RowBase + j][i] = ij

    def GATESRCRST(self, word: int) -> None:
        if bits(word, 2, 23):
            raise RefUB
        # InvalidateSrcBCache (bit 1) / SrcA gate reset (bit 0): no modelled state.

    def CLREXPHIST(self, word: int) -> None:
        # No operands (bits 0..23 unchecked, as for TRNSPSRCB).
        # ExponentHistogram Reset() on the four packers: no modelled state.
        del word


# ---------------------------------------------------------------------------- set-up

SRCA_LAYOUTS = ("random", "same_blocks", "same_low_lanes", "same_high_lanes", "zero")


@st.composite
def configurations(draw) -> dict:
    return draw(harness_configurations()) | {"srca_layout": draw(st.sampled_from(SRCA_LAYOUTS))}


def _layout_srca(srca: np.ndarray, layout: str, rng: np.random.Generator) -> None:
    """Shape SrcA's 16-row blocks so that SHIFTXA's result sometimes does not depend on the input
    block: all blocks equal, or equal in lanes 0..14 (what a right shift reads) / 1..15 (left)."""
    if layout == "zero":
        srca[:] = 0
        return
    for bank in range(2):
        block0 = srca[bank, :16].copy()
        for start in (16, 32, 48):
            if layout == "same_blocks":
                srca[bank, start : start + 16] = block0
            elif layout == "same_low_lanes":
                srca[bank, start : start + 16, :15] = block0[:, :15]
            elif layout == "same_high_lanes":
                srca[bank, start : start + 16, 1:] = block0[:, 1:]
    if layout in ("same_low_lanes", "same_high_lanes"):  # make the lane not read differ
        lane = 15 if layout == "same_low_lanes" else 0
        srca[:, :, lane] = rng.integers(0, 1 << 19, srca[:, :, lane].shape)


def shift_fill(rng: np.random.Generator, regs: RegFiles, layout: str, in_row: int | None) -> None:
    """The harness's random state, SrcA's blocks shaped by ``layout``, and ``in_row`` (None: unknown)
    as the latched SrcA row."""
    random_fill(rng, regs)
    _layout_srca(regs.srca, layout, rng)
    regs.srca_row_latch[0] = -1 if in_row is None else in_row


def load(seed: int, config: dict, thread: int, in_row: int | None = None) -> Ref:
    """Random register contents and the configuration given, in the coprocessor."""
    return harness_load(
        seed, config, thread, Ref, partial(shift_fill, layout=config["srca_layout"], in_row=in_row)
    )


def check(name: str, word: int, seed: int, config: dict, thread: int, in_row: int | None = None) -> str:
    fill = partial(shift_fill, layout=config["srca_layout"], in_row=in_row)
    return harness_check(name, word, seed, config, thread, Ref, fill, cycles=CYCLES[name])


def raw_words(name: str) -> st.SearchStrategy[int]:
    """Mostly the bare instruction, sometimes with arbitrary bits below the opcode."""
    opcode = ISA.by_name[name].opcode << 24
    return st.one_of(*[st.just(opcode)] * 7, st.integers(0, (1 << 24) - 1).map(lambda low: opcode | low))


WORDS = {
    "SHIFTXA": words(
        "SHIFTXA", {"log2_amount2": mostly(st.just(0), 22), "shift_mode": mostly(st.sampled_from([2, 3]), 2)}
    ),
    "SHIFTXB": words(
        "SHIFTXB",
        {
            "addr_mode": mostly(st.integers(0, 7), 10),
            "rot_shift": mostly(st.integers(0, 1), 4),
            "shift_row": mostly(st.integers(0, 63), 10),
        },
    ),
    "TRNSPSRCB": raw_words("TRNSPSRCB"),
    "GATESRCRST": words("GATESRCRST", {"reset_srcb_gate_control": mostly(st.integers(0, 1), 23)}),
    "CLREXPHIST": raw_words("CLREXPHIST"),
}


def _test(name: str):
    return property_test(name, WORDS[name], configurations(), check, SHIFT_SETTINGS)


test_shiftxa_matches_reference = _test("SHIFTXA")
test_shiftxb_matches_reference = _test("SHIFTXB")
test_trnspsrcb_matches_reference = _test("TRNSPSRCB")
test_gatesrcrst_matches_reference = _test("GATESRCRST")
test_clrexphist_matches_reference = _test("CLREXPHIST")


@SHIFT_SETTINGS
@given(
    word=WORDS["SHIFTXA"],
    seed=SEEDS,
    config=configurations(),
    thread=THREADS,
    in_row=st.integers(0, 63),
)
def test_shiftxa_with_a_known_input_row_matches_reference(
    word: int, seed: int, config: dict, thread: int, in_row: int
) -> None:
    """With the latched SrcA row known, SHIFTXA reads that row's block whatever SrcA holds."""
    check("SHIFTXA", word, seed, config, thread, in_row)


@SHIFT_SETTINGS
@given(seed=SEEDS, config=configurations(), thread=THREADS, direction=st.sampled_from([2, 3]))
def test_shiftxa_outcome_kinds_all_occur(seed: int, config: dict, thread: int, direction: int) -> None:
    """The layouts reach both outcomes: retire when the blocks agree on the lanes read."""
    word = ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=direction)
    got = check("SHIFTXA", word, seed, config, thread)
    layout = config["srca_layout"]
    if got == "wait":
        return
    reads_agree = layout in ("same_blocks", "zero") or (
        layout == ("same_low_lanes" if direction == DIRECTION_RIGHT else "same_high_lanes")
    )
    assert got == ("retire" if reads_agree else "unimplemented")


# ---------------------------------------------------------------------------- hand-worked vectors


def plain_config(**changes) -> dict:
    return harness_plain_config(srca_layout="random") | changes


def own_banks(bank: int = 1) -> None:
    regs = COPRO.regs
    regs.matrix_bank[:] = bank
    regs.src_client[:, bank] = MATRIX


def test_shiftxa_right_and_left_by_hand() -> None:
    load(10, plain_config(), 0)
    own_banks(1)
    regs = COPRO.regs
    block = np.arange(16 * 16, dtype=np.uint32).reshape(16, 16) + 1  # row i lane c holds 16 i + c + 1
    regs.srca[1] = np.tile(block, (4, 1))  # four equal blocks: the input block does not matter
    other_bank = regs.srca[0].copy()
    assert execute(ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=2), 0) == Retire(1)
    assert regs.srca[1, 3].tolist() == [0] + [16 * 3 + c + 1 for c in range(15)]
    assert regs.srca[1, 16:].tolist() == np.tile(block, (3, 1)).tolist()
    assert regs.srca[0].tolist() == other_bank.tolist()
    regs.srca[1] = np.tile(block, (4, 1))
    assert execute(ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=3), 0) == Retire(1)
    assert regs.srca[1, 3].tolist() == [16 * 3 + c + 2 for c in range(15)] + [0]


def test_shiftxa_reads_the_block_of_the_latched_row() -> None:
    load(11, plain_config(), 0, in_row=37)  # 37 & 0x30 = 32
    own_banks(0)
    regs = COPRO.regs
    regs.srca[0] = np.arange(64, dtype=np.uint32)[:, None] * 100 + np.arange(16, dtype=np.uint32)
    assert execute(ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=2), 0) == Retire(1)
    assert regs.srca[0, 0].tolist() == [0] + [3200 + c for c in range(15)]
    assert regs.srca[0, 15].tolist() == [0] + [4700 + c for c in range(15)]
    assert regs.srca[0, 32].tolist() == [3200 + c for c in range(16)]  # the input is unchanged


def test_shiftxa_unknown_input_block_is_unimplemented_and_changes_nothing() -> None:
    load(12, plain_config(), 0)
    own_banks(0)
    before = COPRO.regs.copy()
    word = ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=3)
    assert emulator_outcome(lambda: execute(word, 0)) == "unimplemented"
    assert COPRO.regs.equals(before)


# SHIFTXA after the instructions that latch a SrcA row address (the SrcA bank's four 16-row blocks
# distinct: row r lane c holds 100 r + c, so only the latched block gives SHIFTXA's result).
SHIFT_RIGHT = ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=DIRECTION_RIGHT)
SHIFT_LEFT = ISA.encode("SHIFTXA", log2_amount2=0, shift_mode=DIRECTION_LEFT)


def distinct_blocks(regs: RegFiles, bank: int) -> None:
    regs.srca[bank] = np.arange(64, dtype=np.uint32)[:, None] * 100 + np.arange(16, dtype=np.uint32)


def shifted(first_row: int, direction: int) -> list[list[int]]:
    """Rows ``first_row``.. of ``distinct_blocks`` shifted one lane, the vacated lane zero."""
    rows = [[100 * (first_row + i) + c for c in range(16)] for i in range(16)]
    return [[0, *row[:15]] if direction == DIRECTION_RIGHT else [*row[1:], 0] for row in rows]


def matrix_state(seed: int, config: dict | None = None) -> RegFiles:
    """Random state with an unknown latched row, both banks 0 the matrix unit's, SrcA bank 0 in
    distinct blocks, SrcB and Dst zero and defined (so MVMUL's results stay finite)."""
    load(seed, config or plain_config(), 0)
    own_banks(0)
    regs = COPRO.regs
    distinct_blocks(regs, 0)
    regs.srcb[:] = 0
    regs.dst[:] = 0
    regs.dst_row_valid[:] = True
    return regs


def test_shiftxa_after_mvmul_reads_the_block_of_its_first_srca_row() -> None:
    """RWC SrcA = 32: MVMUL reads SrcA rows 32..47 (RWC & 0x38 onwards) and latches 32; SHIFTXA
    then shifts rows 32..47 into rows 0..15."""
    regs = matrix_state(20, plain_config(rwc=plain_config()["rwc"] | {"SrcA": 32}))
    assert src_shifts.srca_row_latch(COPRO) is None
    assert execute(ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0), 0) == Retire()
    assert src_shifts.srca_row_latch(COPRO) == 32
    kept = regs.srca[0, 16:].copy()
    assert execute(SHIFT_RIGHT, 0, cycle=10) == Retire(1)
    assert regs.srca[0, :16].tolist() == shifted(32, DIRECTION_RIGHT)
    assert regs.srca[0, 16:].tolist() == kept.tolist()
    assert src_shifts.srca_row_latch(COPRO) == 32  # SHIFTXA computes no SrcA row address of its own


def test_shiftxa_after_mova2d_reads_the_block_of_its_srca_row() -> None:
    """MOVA2D from SrcA row 20 (block 1, rows 16..31) latches 20; SHIFTXA left reads rows 16..31."""
    regs = matrix_state(21)
    assert (
        execute(ISA.encode("MOVA2D", dest_32b_lo=0, src=20, addr_mode=0, instr_mod=0, dst=0), 0) == Retire()
    )
    assert src_shifts.srca_row_latch(COPRO) == 20
    assert execute(SHIFT_LEFT, 0, cycle=10) == Retire(1)
    assert regs.srca[0, :16].tolist() == shifted(16, DIRECTION_LEFT)


def test_shiftxa_after_movb2d_is_unimplemented_again() -> None:
    """MOVB2D names no SrcA address: after it the latched row is unknown, so with distinct blocks
    SHIFTXA raises Unimplemented and changes nothing."""
    regs = matrix_state(22)
    assert (
        execute(ISA.encode("MOVA2D", dest_32b_lo=0, src=20, addr_mode=0, instr_mod=0, dst=0), 0) == Retire()
    )
    assert src_shifts.srca_row_latch(COPRO) == 20
    word = ISA.encode("MOVB2D", dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=8)
    assert execute(word, 0, cycle=10) == Retire()
    assert src_shifts.srca_row_latch(COPRO) is None
    before = regs.copy()
    with pytest.raises(Unimplemented):
        execute(SHIFT_RIGHT, 0, cycle=20)
    assert COPRO.regs.equals(before)


def test_shiftxa_on_a_fresh_tile_treats_the_row_as_unknown() -> None:
    """Before any instruction latched a row: distinct blocks are Unimplemented, equal blocks retire."""
    copro = Tile("blackhole").coprocessor
    regs = copro.regs
    assert int(regs.srca_row_latch[0]) == -1
    assert src_shifts.srca_row_latch(copro) is None
    regs.src_client[0, 0] = MATRIX
    distinct_blocks(regs, 0)
    before = regs.copy()
    with pytest.raises(Unimplemented):
        execute(SHIFT_RIGHT, 0, copro=copro)
    assert regs.equals(before)
    regs.srca[0] = np.tile(regs.srca[0, :16], (4, 1))
    assert execute(SHIFT_RIGHT, 0, copro=copro) == Retire(1)
    assert regs.srca[0, :16].tolist() == shifted(0, DIRECTION_RIGHT)


@pytest.mark.parametrize("fast_paths", [True, False])
def test_shiftxa_after_an_mvmul_run_reads_the_block_of_the_last_mvmul(fast_paths: bool) -> None:
    """Through the pipeline: two replayed MVMULs with ADDR_MOD slot 3 adding 16 to the SrcA RWC (and 8
    to Dst's, so the second does not wait for the first's Dst rows) read SrcA rows 16..31 then
    32..47; SHIFTXA then reads rows 32..47, whether the MVMULs ran one by one or as one vectorised
    run (which latches the row of its last MVMUL)."""
    tile = Tile("blackhole", engine="python")  # the Python engine's vectorised MVMUL runs
    copro = tile.coprocessor
    tile.backend.fast_paths = fast_paths
    configure_matmul(copro, thread=MATH_THREAD)
    set_addr_mod(copro, MATH_THREAD, 3, SrcAIncr=16, DestIncr=8)
    regs = copro.regs
    regs.src_client[:, 0] = MATRIX
    distinct_blocks(regs, 0)
    copro.adc.srca[MATH_THREAD] = 16
    mvmul = ISA.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=3, dst=0)
    record = ISA.encode("REPLAY", start_idx=0, len=2, execute_while_loading=0, load_mode=1)
    play = ISA.encode("REPLAY", start_idx=0, len=2, execute_while_loading=0, load_mode=0)
    run_words(tile, MATH_THREAD, [record, mvmul, mvmul, play, SHIFT_RIGHT])  # a replayed run
    assert (tile.backend.fast_path_instructions >= 2) == fast_paths
    assert int(copro.adc.srca[MATH_THREAD]) == 48
    assert src_shifts.srca_row_latch(copro) == 32
    assert regs.srca[0, :16].tolist() == shifted(32, DIRECTION_RIGHT)


def test_shiftxa_reserved_direction_and_amount_are_undefined() -> None:
    load(13, plain_config(srca_layout="zero"), 0)
    own_banks(0)
    for fields in ({"log2_amount2": 0, "shift_mode": 0}, {"log2_amount2": 0, "shift_mode": 1}):
        assert emulator_outcome(lambda f=fields: execute(ISA.encode("SHIFTXA", **f), 0)) == "undefined"
    word = ISA.encode("SHIFTXA", log2_amount2=1, shift_mode=2)
    assert emulator_outcome(lambda: execute(word, 0)) == "undefined"


def test_shiftxb_rotates_and_shifts_in_zero_by_hand() -> None:
    config = plain_config()
    config["addr_mods"][5]["SrcBIncr"] = 2
    config["rwc"]["SrcB"] = 62
    load(14, config, 2)
    own_banks(1)
    regs = COPRO.regs
    regs.srcb[1, 3] = np.arange(1, 17)  # SrcRow 5 + RWC 62 = 67, modulo 64 row 3
    word = ISA.encode("SHIFTXB", addr_mode=5, rot_shift=0, shift_row=5)
    assert execute(word, 2) == Retire(2)
    assert regs.srcb[1, 3].tolist() == [*range(2, 17), 1]
    assert int(COPRO.adc.srcb[2]) == 0  # 62 + 2, modulo 64
    regs.srcb[1, 3] = np.arange(1, 17)
    COPRO.adc.srcb[2] = 62
    assert execute(ISA.encode("SHIFTXB", addr_mode=0, rot_shift=1, shift_row=5), 2) == Retire(2)
    assert regs.srcb[1, 3].tolist() == [*range(2, 17), 0]
    assert int(COPRO.adc.srcb[2]) == 62


def test_shiftxb_waits_until_srcb_is_the_matrix_units() -> None:
    load(15, plain_config(), 1)
    COPRO.regs.src_client[1, int(COPRO.regs.matrix_bank[1])] = UNPACKERS
    before = COPRO.regs.copy()
    outcome = execute(ISA.encode("SHIFTXB", addr_mode=0, rot_shift=0, shift_row=0), 1)
    assert isinstance(outcome, Wait)
    assert COPRO.regs.equals(before)


def test_trnspsrcb_by_hand() -> None:
    load(16, plain_config(), 0)
    own_banks(0)
    regs = COPRO.regs
    regs.srcb[0, 16:32] = np.arange(256, dtype=np.uint32).reshape(16, 16)  # row i lane j: 16 i + j
    rows_outside = np.r_[0:16, 32:64]
    kept = regs.srcb[0, rows_outside].copy()
    assert execute(ISA.encode("TRNSPSRCB"), 0) == Retire(1)
    assert regs.srcb[0, 16 + 2, 7] == 16 * 7 + 2
    assert regs.srcb[0, 16:32].tolist() == [[16 * j + i for j in range(16)] for i in range(16)]
    assert regs.srcb[0, rows_outside].tolist() == kept.tolist()


def test_trnspsrcb_waits_until_srcb_is_the_matrix_units() -> None:
    load(17, plain_config(), 0)
    own_banks(0)
    COPRO.regs.src_client[1, 0] = UNPACKERS
    before = COPRO.regs.copy()
    assert isinstance(execute(ISA.encode("TRNSPSRCB"), 0), Wait)
    assert COPRO.regs.equals(before)


def test_gatesrcrst_as_tt_llk_issues_it_changes_nothing() -> None:
    load(18, plain_config(), 1)
    COPRO.regs.src_client[:] = UNPACKERS  # no wait gate: it runs whoever owns the banks
    before = COPRO.regs.copy()
    word = ISA.encode("GATESRCRST", reset_srcb_gate_control=1, reset_srca_gate_control=1)
    assert word == 0x35 << 24 | 0b11
    assert execute(word, 1) == Retire(1)
    assert COPRO.regs.equals(before)
    bad = ISA.encode("GATESRCRST", reset_srcb_gate_control=2, reset_srca_gate_control=0)
    assert emulator_outcome(lambda: execute(bad, 1)) == "undefined"


def test_clrexphist_changes_nothing() -> None:
    load(19, plain_config(), 2)
    COPRO.regs.src_client[:] = UNPACKERS
    before = COPRO.regs.copy()
    assert execute(0x21 << 24, 2) == Retire(1)
    assert COPRO.regs.equals(before)
