"""The vector unit's lane and register movement: SFPSWAP, SFPTRANSP and SFPSHFT2.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPSWAP.md, SFPTRANSP.md,
SFPSHFT2.md, VectorUnit.md (instruction table, timing) and SFPCONFIG.md (the LaneConfig bits
``ENABLE_DEST_INDEX`` and ``EXCHANGE_SRCB_SRCC``). Shared pieces (state, lane enables, the
backdoor-load refusal) come from sfpu/unit.py.

Blackhole encoding (the pages' BlackholeA0 diagrams)
----------------------------------------------------
- SFPSWAP: ``lreg_src_c`` VC, ``lreg_dest`` VD, ``instr_mod1`` Mod1; the syntax fixes ``imm12_math`` at 0.
- SFPTRANSP: only ``lreg_dest`` VD; the syntax fixes ``imm12_math``, ``lreg_c`` and ``instr_mod1`` at 0.
- SFPSHFT2: ``lreg_src_c`` VC, ``lreg_dest`` VD, ``instr_mod1`` Mod1 and ``imm12_math`` VB (bits 0..3;
  the rest is no operand) or, in ``SFPSHFT2_MOD1_SHFT_IMM``, the signed Imm12 (VC is then fixed at 0).

Readings where the pages are open
---------------------------------
- SFPSWAP Mod1 9..15 take the page's ``default`` (VD gets the maximum in every lane), although
  ttsim refuses 10..15.
- SFPSWAP with ``ENABLE_DEST_INDEX`` follows the page's model exactly: LReg[VC] and LReg[VD] are
  written only when below 4, and the index pair LReg[4 + (VC & 3)], LReg[4 + (VD & 3)] always swaps.
- SFPSHFT2 with Mod1 7..15: the page's switch has no case for them, and nothing documents them; the
  emulator raises UndefinedBehavior (ttsim does too) rather than doing nothing.
- The backdoor load (VD >= 12 on a lane whose ``DISABLE_BACKDOOR_LOAD`` is clear, sfpu/unit.py): such a lane
  loads the instruction's bits into its ``InstructionTemplate[VD - 12]`` and does nothing else, in
  every mode, also in the SFPSHFT2 modes whose model omits the test (SFPCONFIG.md's LaneConfig table
  applies to every instruction). SFPTRANSP.md and SFPSHFT2's SUBVEC_SHFLROR1_AND_COPY4 and
  SUBVEC_SHFLROR1 make the test once, outside the lane loop, on an unqualified ``LaneConfig``: when all
  lanes agree it is clear; when they disagree the emulator raises Unimplemented.
- SFPSHFT2's copy modes (0..2) ignore VD but for that test; SFPTRANSP likewise. LReg[16] (VD 16, only
  through SFPLOADMACRO) is written where the models say ``VD < 8 || VD == 16``.

Timing
------
VectorUnit.md: SFPTRANSP and SFPSHFT2's modes 0, 1, 5 and 6 have an IPC of 1 (``Retire(SFPU.issue)``).
SFPSWAP and SFPSHFT2's modes 2, 3 and 4 leave the unit able to accept only SFPNOP on the next cycle,
stalling anything else one cycle: the unit is occupied for two cycles (``SFPU.swap``,
``SFPU.lane_shuffle``), but an SFPNOP issues on the second (:func:`nop_from`), as the Blackhole
probes show (SFPSWAP or a shuffle each followed by an SFPNOP: 2.125 cycles a pair with the loop's
two instructions, one word a cycle).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.sfpu.unit import (
    ENABLE_DEST_INDEX,
    LANE,
    LANES,
    SfpuState,
    backdoor_lanes,
    load_template,
    unit_state,
    write_lanes,
)
from tensixsim.timing import SFPU

EXCHANGE_SRCB_SRCC = 1 << 8  # LaneConfig bit (SFPCONFIG.md)

# ------------------------------------------------------------------------------ SFPSWAP

SWAP_SWAP = 0
# Mod1 -> the lanes (bit per lane) where VD gets the minimum; other Mod1 values: none.
SWAP_VD_GETS_MIN = {
    1: 0xFFFFFFFF,  # VEC_MIN_MAX
    2: 0x0000FFFF,  # SUBVEC_MIN01_MAX23
    3: 0x00FF00FF,  # SUBVEC_MIN02_MAX13
    4: 0xFF0000FF,  # SUBVEC_MIN03_MAX12
    5: 0x000000FF,  # SUBVEC_MIN0_MAX123
    6: 0x0000FF00,  # SUBVEC_MIN1_MAX023
    7: 0x00FF0000,  # SUBVEC_MIN2_MAX013
    8: 0xFF000000,  # SUBVEC_MIN3_MAX012
}


def _total_order(x: np.ndarray) -> np.ndarray:
    """Signed keys ordering sign-magnitude integers (and FP32 as -NaN < -Inf < ... < -0 < +0 < ... < +NaN):
    a negative value's magnitude bits are inverted, so -0 sorts just below +0."""
    x = x.astype(np.uint32)
    return np.where(x >> 31, x ^ np.uint32(0x7FFFFFFF), x).astype(np.uint32).view(np.int32)


@semantics("SFPSWAP", arches=("blackhole", "wormhole"))  # Wormhole's SFPSWAP.md: the same
def sfpswap(ctx: Context, imm12_math: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    s, vc, vd, mod1 = unit_state(ctx), lreg_src_c, lreg_dest, instr_mod1
    backdoor = backdoor_lanes(ctx, s, vd)
    c, d = s.lreg[vc].copy(), s.lreg[vd].copy()
    if mod1 == SWAP_SWAP:
        swap = np.ones(LANES, bool)
    else:
        gets_min = ((SWAP_VD_GETS_MIN.get(mod1, 0) >> LANE) & 1) != 0
        c_smaller = _total_order(c) < _total_order(d)
        swap = np.where(gets_min, c_smaller, ~c_smaller)
        swap ^= (s.lane_config & EXCHANGE_SRCB_SRCC) != 0
    swap &= s.lane_enabled() & ~backdoor
    index = (s.lane_config & ENABLE_DEST_INDEX) != 0
    plain, indexed = swap & ~index, swap & index
    if vc < 8:
        write_lanes(s, vc, d, plain | (indexed & (vc < 4)))
    if vd < 8:
        write_lanes(s, vd, c, plain | (indexed & (vd < 4)))
    vca, vda = 4 + (vc & 3), 4 + (vd & 3)
    ca, da = s.lreg[vca].copy(), s.lreg[vda].copy()
    write_lanes(s, vca, da, indexed)
    write_lanes(s, vda, ca, indexed)
    load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.swap)


def nop_from(holds_all_but_nop: bool, cycle: int, cycles: int) -> int:
    """The cycle from which an SFPNOP can issue after a vector-unit instruction issued at ``cycle``
    occupying the unit ``cycles``: the next cycle after SFPSWAP or a lane shuffle (the unit then
    accepts only SFPNOP), else once the unit is free."""
    return cycle + 1 if holds_all_but_nop and cycles > 1 else cycle + cycles


# ------------------------------------------------------------------------------ SFPTRANSP


def _whole_vector_backdoor(ctx: Context, s: SfpuState, vd: int) -> bool:
    """The test ``VD < 12 || LaneConfig.DISABLE_BACKDOOR_LOAD`` that SFPTRANSP.md and two SFPSHFT2 modes
    make once, outside any lane loop: True (after the backdoor load) if it fails on every lane, False if
    on none; lanes that disagree leave the page open (Unimplemented)."""
    backdoor = backdoor_lanes(ctx, s, vd)
    if not backdoor.any():
        return False
    if not backdoor.all():
        raise ctx.error(
            Unimplemented,
            f"VD={vd}: lanes disagree on LaneConfig.DISABLE_BACKDOOR_LOAD, which the page tests once",
        )
    load_template(ctx, s, vd, backdoor)
    return True


@semantics("SFPTRANSP", arches=("blackhole", "wormhole"))  # Wormhole's SFPTRANSP.md: the same
def sfptransp(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("lreg_c", lreg_c, 0)
    ctx.documented("instr_mod1", instr_mod1, 0)
    s = unit_state(ctx)
    if _whole_vector_backdoor(ctx, s, lreg_dest):
        return Retire(SFPU.issue)
    # Each group of four LRegs as [register][row][column]; the transpose swaps register and row.
    enabled = s.lane_enabled().reshape(1, 4, 8)  # a cell [i][j][col] is lane j * 8 + col
    for base in (0, 4):
        block = s.lreg[base : base + 4].reshape(4, 4, 8)
        s.lreg[base : base + 4] = np.where(enabled, block.transpose(1, 0, 2), block).reshape(4, LANES)
    return Retire(SFPU.issue)


# ------------------------------------------------------------------------------ SFPSHFT2

(
    SHFT2_COPY4,
    SHFT2_SUBVEC_CHAINED_COPY4,
    SHFT2_SUBVEC_SHFLROR1_AND_COPY4,
    SHFT2_SUBVEC_SHFLROR1,
    SHFT2_SUBVEC_SHFLSHR1,
    SHFT2_SHFT_LREG,
    SHFT2_SHFT_IMM,
) = range(7)
_SLOW_SHFT2 = frozenset({SHFT2_SUBVEC_SHFLROR1_AND_COPY4, SHFT2_SUBVEC_SHFLROR1, SHFT2_SUBVEC_SHFLSHR1})
_PREVIOUS_IN_ROW = np.where(LANE & 7, LANE - 1, LANE + 7)  # rotate right by one within each 8 lanes


def _shift(b: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """``b << amount`` for a non-negative amount, else ``b >> -amount`` (logical), both mod 32."""
    b64 = b.astype(np.uint64)
    left = (b64 << (amount & 31).astype(np.uint64)) & np.uint64(0xFFFFFFFF)
    right = b64 >> ((-amount) & 31).astype(np.uint64)
    return np.where(amount >= 0, left, right).astype(np.uint32)


@dataclass(frozen=True)
class Shft2Model:
    """What SFPSHFT2 does differently on each chip."""

    # How long SUBVEC_SHFLROR1_AND_COPY4, SUBVEC_SHFLROR1 and SUBVEC_SHFLSHR1 occupy the unit.
    shuffle_cycles: int
    # SUBVEC_SHFLSHR1 fills each row's first lane from the LReg[VC] the last SUBVEC_SHFLROR1(_AND_COPY4)
    # saw (SfpuState.shfl_vc), Wormhole's hardware bug, instead of with zero.
    stale_row_start: bool


BLACKHOLE_SHFT2 = Shft2Model(SFPU.lane_shuffle, stale_row_start=False)


@semantics("SFPSHFT2")
def sfpshft2(ctx: Context, imm12_math: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return shft2(ctx, imm12_math, lreg_src_c, lreg_dest, instr_mod1, BLACKHOLE_SHFT2)


def shft2(
    ctx: Context, imm12_math: int, lreg_src_c: int, lreg_dest: int, instr_mod1: int, model: Shft2Model
) -> Outcome:
    """SFPSHFT2's functional model on the chip ``model`` describes."""
    s, vc, vd, mod1 = unit_state(ctx), lreg_src_c, lreg_dest, instr_mod1
    if mod1 > SHFT2_SHFT_IMM:
        raise ctx.error(UndefinedBehavior, f"Mod1={mod1} is not a documented SFPSHFT2 mode", mod1)
    if mod1 == SHFT2_SHFT_IMM:
        ctx.documented("lreg_src_c", lreg_src_c, 0)
        vb = imm12_math & 15
        imm = imm12_math - (1 << 12) if imm12_math & 0x800 else imm12_math
        amount = np.full(LANES, imm, np.int64)
    else:
        vb = ctx.documented("imm12_math", imm12_math, 4)
        amount = s.lreg[vc].view(np.int32).astype(np.int64)
    cycles = model.shuffle_cycles if mod1 in _SLOW_SHFT2 else SFPU.issue
    backdoor = backdoor_lanes(ctx, s, vd)
    once = mod1 in (SHFT2_SUBVEC_SHFLROR1_AND_COPY4, SHFT2_SUBVEC_SHFLROR1)
    if once and _whole_vector_backdoor(ctx, s, vd):
        return Retire(cycles)
    lanes = s.lane_enabled() & ~backdoor
    vc_value = s.lreg[vc].copy()
    row_start = np.zeros(LANES, np.uint32)
    if mod1 == SHFT2_SUBVEC_SHFLSHR1 and model.stale_row_start and (vd < 8 or vd == 16):
        stale = s.shfl_vc[_PREVIOUS_IN_ROW]
        if np.any(lanes & ((LANE & 7) == 0) & (stale < 0)):
            raise ctx.error(
                UndefinedBehavior,
                "SUBVEC_SHFLSHR1 fills each row's first lane from the LReg[VC] the last SUBVEC_SHFLROR1 "
                "saw (a hardware bug), and none has run since reset",
            )
        row_start = stale.astype(np.uint32)
    if once and model.stale_row_start:
        s.shfl_vc = vc_value  # what the bug of a later SUBVEC_SHFLSHR1 reads
    if mod1 <= SHFT2_SUBVEC_SHFLROR1_AND_COPY4:
        if mod1 == SHFT2_COPY4:
            l3 = np.zeros(LANES, np.uint32)
        elif mod1 == SHFT2_SUBVEC_CHAINED_COPY4:
            l3 = np.where(LANE < 24, s.lreg[0][np.minimum(LANE + 8, LANES - 1)], 0).astype(np.uint32)
        else:
            l3 = vc_value[_PREVIOUS_IN_ROW]
        new = [s.lreg[1].copy(), s.lreg[2].copy(), s.lreg[3].copy(), l3]
        for reg, values in enumerate(new):
            write_lanes(s, reg, values, lanes)
    elif vd < 8 or vd == 16:
        if mod1 == SHFT2_SUBVEC_SHFLROR1:
            result = vc_value[_PREVIOUS_IN_ROW]
        elif mod1 == SHFT2_SUBVEC_SHFLSHR1:
            result = np.where(LANE & 7, vc_value[_PREVIOUS_IN_ROW], row_start).astype(np.uint32)
        else:
            result = _shift(s.lreg[vb], amount)
        write_lanes(s, vd, result, lanes)
    load_template(ctx, s, vd, backdoor)
    return Retire(cycles)
