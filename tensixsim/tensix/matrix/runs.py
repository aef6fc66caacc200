"""The matrix unit's fast path: a run of MVMULs executed as a few vectorised steps.

A MOP or replay expansion that is a run of plain MVMULs (tensixsim/tensix/matrix/unit.py has their
semantics and the arithmetic model) is executed by :func:`mvmul_run` at once: the run's SrcA / SrcB
rows, fidelity phases, issue cycles (with Dst.md's read-after-write stalls) and final RWCs are worked
out first (:func:`_plan`, memoised on everything it depends on), every product is computed in one
stacked step, and each Dst block is accumulated visit by visit. The result, the Dst scheduling state,
the SrcA row latch, bank flips and RWCs equal issuing the instructions one at a time; the engine
(frontend/pipes.py) takes this path only when nothing else can act on the coprocessor before the run ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.tensix.adc import (
    AddrMod,
    Rwcs,
    addr_mod,
    addr_mod_words,
    read_rwcs,
    step_rwcs,
    write_rwcs,
)
from tensixsim.tensix.matrix.addressing import RULES, AddrModRule
from tensixsim.tensix.matrix.unit import (
    SAFE_PRODUCT,
    DstAccess,
    DstMode,
    Formats,
    K,
    arith_formats,
    both_banks_owned,
    dot16,
    flip_banks,
    no_underflow,
    products,
    read_dst,
    read_src,
    settle,
    src_a_fidelity_bits,
    src_b_fidelity_bits,
    src_bank,
    write_dst,
)
from tensixsim.tensix.regs import DST_COLS, SRC_ROWS, SRCA, SRCB, dst_mapping
from tensixsim.tensix.semantics import Context
from tensixsim.timing import MATRIX

if TYPE_CHECKING:
    from tensixsim.isa.spec import IsaTable
    from tensixsim.tensix.coprocessor import Coprocessor


def stacked_products(
    fmts: Formats,
    bank_a: np.ndarray,
    bank_b: np.ndarray,
    a_first: np.ndarray,
    b_first: np.ndarray,
    phases: np.ndarray,
) -> np.ndarray:
    """:func:`products` for a run of MVMULs: instruction n multiplies SrcB rows ``b_first[n]``.. (8) by
    SrcA rows ``a_first[n]``.. (16) at phase ``phases[n]``. Each bank is converted once per phase
    (the conversions are per datum), then gathered."""
    a_rows = a_first[:, None] + np.arange(K)
    b_rows = b_first[:, None] + np.arange(8)
    if fmts.integer:
        return products(fmts, bank_a[a_rows], bank_b[b_rows], phases[:, None, None])
    a_values, b_values = read_src(bank_a, fmts.style), read_src(bank_b, fmts.style)
    # SrcA's slice depends only on phase bit 0, SrcB's only on bit 1: two tables each.
    a_half, b_half = phases & 1, phases >> 1 & 1
    a_table = np.stack([src_a_fidelity_bits(a_values, p) if p in a_half else a_values for p in (0, 1)])
    b_table = np.stack([src_b_fidelity_bits(b_values, 2 * p) if p in b_half else b_values for p in (0, 1)])
    # Judged on the whole banks: a tiny value in a row no instruction reads only costs the FTZ path.
    safe = no_underflow(b_table, a_table)
    return dot16(b_table[b_half[:, None], b_rows], a_table[a_half[:, None], a_rows], safe=safe)


def multiples_of_min_normal(x: np.ndarray) -> bool:
    """Whether every value of ``x`` is zero, infinite/NaN or at least 2**-103 in magnitude (so a multiple
    of 2**-126, one ulp at the smallest normal exponent), and none is -0."""
    small = np.abs(x[x != 0]).min(initial=np.inf)
    return float(small) >= SAFE_PRODUCT and not np.any(np.signbit(x) & (x == 0))


@dataclass(frozen=True)
class _RunPlan:
    """What a run of MVMULs does, worked out from the state at its first issue (cycles relative to it)."""

    a_first: np.ndarray  # per instruction: first SrcA row, first SrcB row, fidelity phase
    b_first: np.ndarray
    phases: np.ndarray
    offsets: list[int]  # issue cycle of each instruction minus the first's
    rwcs: Rwcs  # the RWCs after the run
    flips: int  # the last instruction's FlipSrcA / FlipSrcB
    ready: dict[int, int]  # Dst block -> first readable cycle afterwards, minus the first's issue cycle
    targets: np.ndarray  # the distinct Dst rows the run starts blocks at
    waves: list[tuple[np.ndarray, np.ndarray]]  # per visit: (instructions, their index into targets)
    # When every visit covers every target: the instructions in visit-major, target-minor order.
    visit_order: np.ndarray | None


_PLANS: dict[tuple, _RunPlan | None] = {}
_PLAN_CACHE_SIZE = 256


def mvmul_run(ctx: Context, words: Sequence[int], limit: int) -> list[int] | None:
    """Execute the leading run of plain MVMULs in ``words`` (the first issuing at ``ctx.cycle``) at once.

    Returns the issue cycle of each instruction executed, or None when the run is shorter than two
    (the caller then issues one at a time). The run stops before any instruction that would raise,
    stall at its start, issue at or after ``limit``, or follow a bank flip; every effect (Dst, its
    scheduling state, RWCs, bank flips) equals issuing them one by one.

    Working out the run (addresses, phases, stalls) is memoised on everything it depends on, so a
    kernel that repeats one MOP pays for it once.
    """
    copro, thread, cycle = ctx.copro, ctx.thread, ctx.cycle
    fmts = arith_formats(copro, thread)
    if isinstance(fmts, str) or not both_banks_owned(copro):
        return None
    field = copro.config.field_for_thread
    rule = RULES[copro.arch.name]  # how this chip's MVMUL names its ADDR_MOD slot
    setup = (
        fmts,
        field("DEST_TARGET_REG_CFG_MATH_Offset", thread) + field("DEST_REGW_BASE_Base", thread),
        field("FIDELITY_BASE_Phase", thread),
        dst_mapping(copro, thread),
        rule,
        rule.set_base(copro, thread),
    )
    opcode = copro.isa.by_name["MVMUL"].opcode
    run = []
    for word in words:
        if word >> 24 != opcode:
            break
        run.append(word)
    rwcs = read_rwcs(copro.adc, thread)
    pending = np.maximum(copro.regs.dst_ready - cycle, 0)
    key = (tuple(run), rwcs, setup, _addr_mod_words_of(copro, thread), pending.tobytes(), id(copro.isa))
    if key in _PLANS:
        plan = _PLANS[key]
    else:
        plan, limited = _plan(copro, thread, run, rwcs, setup, pending.tolist(), limit - cycle)
        if not limited:  # what the limit cut short depends on the limit too: not kept
            if len(_PLANS) >= _PLAN_CACHE_SIZE:
                _PLANS.clear()
            _PLANS[key] = plan
    if plan is None or cycle + plan.offsets[-1] >= limit:
        return None  # too short, or planned for a quieter moment: one at a time now
    _execute(copro, thread, fmts, setup[3], plan)
    for block, ready in plan.ready.items():
        copro.regs.dst_ready[block] = cycle + ready
    copro.regs.srca_row_latch[0] = plan.a_first[-1]
    flip_banks(copro, thread, plan.flips)
    write_rwcs(copro.adc, thread, plan.rwcs)
    return [cycle + offset for offset in plan.offsets]


def _addr_mod_words_of(copro: Coprocessor, thread: int) -> bytes:
    """The raw ThreadConfig words of every ADDR_MOD slot of ``thread`` (part of a plan's key)."""
    config = copro.config
    return config.thread[thread, addr_mod_words(config.layout)].tobytes()


def _plan(
    copro: Coprocessor,
    thread: int,
    run: list[int],
    rwcs: Rwcs,
    setup: tuple,
    ready: list[int],
    limit: int,
) -> tuple[_RunPlan | None, bool]:
    """Work out the run from relative time 0 (``ready``: each Dst block's pending cycles); also whether
    ``limit`` cut it short. None: fewer than two instructions."""
    fmts, offset, fidelity_base, (remap, swizzle), rule, set_base = setup
    regs, isa = copro.regs, copro.isa
    rows8 = np.arange(8)
    mods: dict[int, AddrMod] = {}
    blocks_of: dict[int, tuple[int, ...]] = {}
    a_first: list[int] = []
    b_first: list[int] = []
    dst_first: list[int] = []
    phases: list[int] = []
    offsets: list[int] = []
    touched: dict[int, int] = {}
    flips = 0
    cycle = 0
    hidden = MATRIX.dst_write_hidden + 1
    limited = False
    for word in run:
        if flips:
            break
        decoded = _decoded_mvmul(isa, rule, word)
        if decoded is None:
            break
        operand, dst_row, word_flips = decoded
        slot = rule.index(rwcs, operand, set_base)
        srca, srcb = rwcs.srca & 0x38, rwcs.srcb & 0x38
        if srca + K > SRC_ROWS or srcb + 8 > SRC_ROWS:
            break
        first = (dst_row + offset + rwcs.dst) & 0x3F8
        blocks = blocks_of.get(first)
        if blocks is None:
            storage = regs.storage_rows(first + rows8, wide=fmts.dst.wide, remap=remap, swizzle=swizzle)
            blocks = blocks_of[first] = tuple(np.unique(storage // 8).tolist())
        start = max(cycle, *(ready[b] for b in blocks))
        if start > cycle and not offsets:
            return None, False  # the first one stalls: the one-at-a-time path waits
        if offsets and start >= limit:
            limited = True
            break
        mod = mods.get(slot) or mods.setdefault(slot, addr_mod(copro, thread, slot))
        if rule.problem(rwcs, mod, slot) is not None:
            break
        a_first.append(srca)
        b_first.append(srcb)
        dst_first.append(first)
        phases.append((rwcs.fidelity_phase + fidelity_base) & 3)
        offsets.append(start)
        for b in blocks:
            ready[b] = touched[b] = start + hidden
        rwcs = step_rwcs(rwcs, mod)
        flips = word_flips
        cycle = start + MATRIX.issue
    if len(offsets) < 2:
        return None, limited
    targets, block_index = np.unique(np.array(dst_first), return_inverse=True)
    visit = np.empty(len(offsets), np.int64)
    visits: dict[int, int] = {}
    for n, block in enumerate(block_index.tolist()):
        visit[n] = visits[block] = visits.get(block, -1) + 1
    waves = []
    for w in range(int(visit.max()) + 1):
        chosen = np.flatnonzero(visit == w)
        waves.append((chosen, block_index[chosen]))
    regular = all(len(where) == len(targets) for _, where in waves)
    visit_order = np.concatenate([chosen[np.argsort(where)] for chosen, where in waves]) if regular else None
    plan = _RunPlan(
        np.array(a_first),
        np.array(b_first),
        np.array(phases),
        offsets,
        rwcs,
        flips,
        touched,
        targets,
        waves,
        visit_order,
    )
    return plan, limited


def _execute(
    copro: Coprocessor, thread: int, fmts: Formats, mapping: tuple[bool, bool], plan: _RunPlan
) -> None:
    """The run's arithmetic and Dst writes."""
    rows8 = np.arange(8)
    result = stacked_products(
        fmts, src_bank(copro, SRCA), src_bank(copro, SRCB), plan.a_first, plan.b_first, plan.phases
    )
    # Each Dst block is read once, then accumulated visit by visit (the n-th visit of every block
    # together), each visit settling to what its Dst write would hold, and written once.
    access = DstAccess((plan.targets[:, None] + rows8).ravel(), fmts.dst, *mapping)
    values = read_dst(access.read_bits(copro), fmts.dst).reshape(len(plan.targets), 8, DST_COLS)
    with np.errstate(all="ignore"):
        if plan.visit_order is not None:
            visits = result[plan.visit_order].reshape(len(plan.waves), *values.shape)
            if (
                fmts.dst is DstMode.FP32
                and multiples_of_min_normal(visits)
                and multiples_of_min_normal(values)
            ):
                # Every operand is zero or a multiple of 2**-126 of at least 2**-103: so is every sum,
                # which is then zero or normal, and never -0. FTZ would change nothing.
                for visit in visits:
                    values = visit + values
            else:
                for visit in visits:
                    values = settle(fmts, visit + values)
        else:
            for chosen, where in plan.waves:
                values[where] = settle(fmts, result[chosen] + values[where])
    access.write_bits(copro, write_dst(values.reshape(-1, DST_COLS), fmts.dst))


_DECODED: dict[tuple[int, int, int], tuple[int, int, int] | None] = {}


def _decoded_mvmul(isa: IsaTable, rule: AddrModRule, word: int) -> tuple[int, int, int] | None:
    """(AddrMod, DstRow, clear_dvalid) of a plain MVMUL word; None if it broadcasts or sets
    undocumented bits (the one-at-a-time path reports those)."""
    key = (id(isa), rule.bits, word)
    if key not in _DECODED:
        fields = isa.decode(word).fields
        plain = not (fields["instr_mod19"] or fields["addr_mode"] >> rule.bits or fields["dst"] >> 10)
        _DECODED[key] = (fields["addr_mode"], fields["dst"], fields["clear_dvalid"]) if plain else None
    return _DECODED[key]
