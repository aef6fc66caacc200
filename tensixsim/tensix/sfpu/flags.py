"""The vector unit's lane predication: SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC and SFPCOMPC.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPSETCC.md, SFPENCC.md,
SFPPUSHC.md, SFPPOPC.md and SFPCOMPC.md. The lane flags and the flag stack are SfpuState fields, and
the readings (undefined stack operations raise if any lane reaches them) are in sfpu/unit.py's docstring.
"""

from __future__ import annotations

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.sfpu.unit import (
    LANE,
    LANES,
    STACK_DEPTH,
    SfpuState,
    as_int32,
    backdoor_lanes,
    load_template,
    unit_state,
)
from tensixsim.timing import SFPU

SETCC_IMM_BIT0, SETCC_CLEAR = 1, 8
SETCC_LT0, SETCC_NE0, SETCC_GTE0, SETCC_EQ0 = 0, 2, 4, 6


@semantics("SFPSETCC", arches=("blackhole", "wormhole"))  # Wormhole's SFPSETCC.md: the same
def sfpsetcc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    s, mod1 = unit_state(ctx), instr_mod1
    imm1 = ctx.documented("imm12_math", imm12_math, 1)
    backdoor = backdoor_lanes(ctx, s, lreg_dest)
    c = as_int32(s.lreg[lreg_c])
    if mod1 & SETCC_CLEAR:
        flags = np.zeros(LANES, bool)
    elif mod1 & SETCC_IMM_BIT0:
        flags = np.full(LANES, imm1 != 0)
    else:
        flags = {SETCC_LT0: c < 0, SETCC_NE0: c != 0, SETCC_GTE0: c >= 0, SETCC_EQ0: c == 0}[mod1]
    flags = flags & s.use_lane_flags
    s.lane_flags = np.where(s.lane_enabled() & ~backdoor, flags, s.lane_flags)
    load_template(ctx, s, lreg_dest, backdoor)
    return Retire(SFPU.issue)


ENCC_EC, ENCC_EI, ENCC_RI = 1, 2, 8
ENCC_IMM2_E, ENCC_IMM2_R = 1, 2


@semantics("SFPENCC", arches=("blackhole", "wormhole"))  # Wormhole SFPENCC.md: the same
def sfpencc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    s, mod1 = unit_state(ctx), instr_mod1
    imm2 = ctx.documented("imm12_math", imm12_math, 2)
    ctx.documented("lreg_c", lreg_c, 0)
    backdoor = backdoor_lanes(ctx, s, lreg_dest)
    if mod1 & ENCC_EI:
        s.use_lane_flags = np.where(backdoor, s.use_lane_flags, (imm2 & ENCC_IMM2_E) != 0)
    elif mod1 & ENCC_EC:
        s.use_lane_flags = np.where(backdoor, s.use_lane_flags, ~s.use_lane_flags)
    s.lane_flags = np.where(backdoor, s.lane_flags, (imm2 & ENCC_IMM2_R) != 0 if mod1 & ENCC_RI else True)
    load_template(ctx, s, lreg_dest, backdoor)
    return Retire(SFPU.issue)


def _boolean_op(mod1: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SFPPUSHC.md / SFPPOPC.md ``BooleanOp`` (Mod1 1..12)."""
    return {
        1: b,
        2: ~b,
        3: a & b,
        4: a | b,
        5: a & ~b,
        6: a | ~b,
        7: ~a & b,
        8: ~a | b,
        9: ~a & ~b,
        10: ~a | ~b,
        11: a != b,
        12: a == b,
    }[mod1]


_FLAG_FIELDS = ("lane_flags", "use_lane_flags", "flag_stack", "stack_depth")


def _stack_operands(
    ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int
) -> tuple[SfpuState, np.ndarray, list[np.ndarray]]:
    """The state, the lanes a backdoor load takes over and the flag state to put back on them."""
    ctx.documented("imm12_math", imm12_math, 0)
    ctx.documented("lreg_c", lreg_c, 0)
    s = unit_state(ctx)
    return s, backdoor_lanes(ctx, s, lreg_dest), [getattr(s, name).copy() for name in _FLAG_FIELDS]


def _stack_done(
    ctx: Context, s: SfpuState, vd: int, backdoor: np.ndarray, saved: list[np.ndarray]
) -> Outcome:
    """Put back the flag state of the lanes a backdoor load took over and write their template."""
    if np.any(backdoor):
        for name, old in zip(_FLAG_FIELDS, saved, strict=True):
            new = getattr(s, name).copy()
            new[backdoor] = old[backdoor]
            setattr(s, name, new)
        load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.issue)


def _top(s: SfpuState, empty: tuple[bool, bool]) -> tuple[np.ndarray, np.ndarray]:
    """Each lane's stack top (LaneFlags, UseLaneFlagsForLaneEnable), ``empty`` where the stack is."""
    depth = s.stack_depth.astype(np.int64)
    top = s.flag_stack[LANE, np.maximum(depth - 1, 0)]
    has = depth > 0
    return np.where(has, top[:, 0], empty[0]), np.where(has, top[:, 1], empty[1])


@semantics("SFPPUSHC")
def sfppushc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    (s, backdoor, saved), mod1 = _stack_operands(ctx, imm12_math, lreg_c, lreg_dest), instr_mod1
    depth = s.stack_depth.astype(np.int64)
    if mod1 == 0:
        if np.any(~backdoor & (depth >= STACK_DEPTH)):
            raise ctx.error(UndefinedBehavior, "pushes onto a full flag stack")
        at = np.minimum(depth, STACK_DEPTH - 1)  # a full stack only on lanes put back below
        s.flag_stack[LANE, at, 0] = s.lane_flags
        s.flag_stack[LANE, at, 1] = s.use_lane_flags
        s.stack_depth = (depth + 1).astype(np.uint8)
        return _stack_done(ctx, s, lreg_dest, backdoor, saved)
    if np.any(~backdoor & (depth == 0)):
        raise ctx.error(UndefinedBehavior, f"Mod1={mod1} mutates an empty flag stack", mod1)
    top_flags, _ = _top(s, (False, False))
    if mod1 <= 12:
        new_flags = _boolean_op(mod1, top_flags, s.lane_flags)
        new_use = s.use_lane_flags
    elif mod1 == 13:
        s.lane_flags = ~s.lane_flags
        new_flags, new_use = s.lane_flags, s.use_lane_flags
    else:
        new_flags, new_use = np.full(LANES, mod1 == 14), np.ones(LANES, bool)
    s.flag_stack[LANE, depth - 1, 0] = new_flags
    s.flag_stack[LANE, depth - 1, 1] = new_use
    return _stack_done(ctx, s, lreg_dest, backdoor, saved)


@semantics("SFPPOPC")
def sfppopc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    return popc(ctx, imm12_math, lreg_c, lreg_dest, instr_mod1, full_stack_bug=False)


def popc(
    ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int, *, full_stack_bug: bool
) -> Outcome:
    """SFPPOPC's functional model; ``full_stack_bug``: Wormhole's, where Mod1 != 0 on a full stack also
    copies the stack's top to its bottom (SFPPOPC.md)."""
    (s, backdoor, saved), mod1 = _stack_operands(ctx, imm12_math, lreg_c, lreg_dest), instr_mod1
    depth = s.stack_depth.astype(np.int64)
    top_flags, top_use = _top(s, (False, False))
    if mod1 == 0:
        if np.any(~backdoor & (depth == 0)):
            raise ctx.error(UndefinedBehavior, "pops an empty flag stack")
        s.flag_stack[LANE, depth - 1] = False
        s.stack_depth = (depth - 1).astype(np.uint8)
        s.use_lane_flags, s.lane_flags = top_use, top_flags
        return _stack_done(ctx, s, lreg_dest, backdoor, saved)
    if full_stack_bug:
        full = depth == STACK_DEPTH
        s.flag_stack[full, 0, 0], s.flag_stack[full, 0, 1] = top_flags[full], top_use[full]
    if mod1 <= 12:
        s.use_lane_flags, s.lane_flags = top_use, _boolean_op(mod1, s.lane_flags, top_flags)
    elif mod1 == 13:
        s.lane_flags = ~s.lane_flags
    else:
        s.use_lane_flags, s.lane_flags = np.ones(LANES, bool), np.full(LANES, mod1 == 14)
    return _stack_done(ctx, s, lreg_dest, backdoor, saved)


@semantics("SFPCOMPC", arches=("blackhole", "wormhole"))  # Wormhole's SFPCOMPC.md: the same
def sfpcompc(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    s, backdoor, saved = _stack_operands(ctx, imm12_math, lreg_c, lreg_dest)
    ctx.documented("instr_mod1", instr_mod1, 0)
    top_flags, top_use = _top(s, (True, True))
    s.lane_flags = top_use & s.use_lane_flags & top_flags & ~s.lane_flags
    return _stack_done(ctx, s, lreg_dest, backdoor, saved)
