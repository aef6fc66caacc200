"""SFPLOADMACRO: its load, ``LoadMacroConfig`` and the work it schedules onto the vector sub-units.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPLOADMACRO.md (with
SFPLOAD.md for the load, SFPSTORE.md for the scheduled store, SFPCONFIG.md for ``LoadMacroConfig``,
VectorUnit.md for the sub-units). SFPCONFIG (VD 0..8), SFPMOV (``FROM_SPECIAL``, VC 0..8) and the
backdoor load that write and read ``LoadMacroConfig`` are in sfpu/unit.py.

Encoding (the page's BlackholeA0 diagram): ``lreg_ind`` is ``MacroIndex << 2 | VDLo``, ``dest_reg_addr``
bits 0..9 are ``Imm9 << 1 | VDHi`` (bits 10..12 belong to no operand: UndefinedBehavior if set), so
``VD = VDHi << 2 | VDLo`` (0..7) and ``Imm10 = dest_reg_addr & 0x3FF``.

State (in sfpu.unit.SfpuState)
------------------------------
``macro_template`` / ``macro_sequence`` / ``macro_misc`` are ``LoadMacroConfig[32]``. ``macro_pending``
holds one scheduled instruction per row (columns below): its sub-unit, the instruction word, the
operands SFPLOADMACRO gave it (VB, VC, VD; the store's Mod0 and Addr), its delay counter and kind, the
cycle it was scheduled, and the pipe / core / pc of the SFPLOADMACRO for errors. ``macro_clock``:
the last cycle whose due work has run and the last cycle whose countdown step has happened (both
meaningful only while work is outstanding), the cycle after the last scheduled SFPSWAP, a sequence
number, and which sub-units ran work at which cycle.

Scheduling (the page's countdown, as cycles)
--------------------------------------------
At every cycle, first the work whose counter is 0 runs (counters that reached 0 during the previous
cycle, and delay-0 work scheduled then); then the counters of the other work count down by one: every
cycle while all outstanding work waits for cycles, and only on cycles where a thread issues a
vector-unit instruction while any of it waits for instructions (``UnitDelayKind``). An SFPLOADMACRO at
cycle C counts down the older work first, then forgets work on the same sub-unit whose counter equals
the new delay (unless it is 7) and schedules the new work with counter = delay. So delay ``d`` waiting
for cycles runs at ``C + 1 + d``. Work that runs at cycle C runs before the instruction issued at C
(which sees its results); a regular instruction reaching a sub-unit that scheduled work occupies at C
is silently discarded (the page). Work is brought up to date lazily (``settle``): before any
coprocessor instruction executes and when the engine runs out of instructions, so it happens in cycle
order with everything that could observe it.

Readings where the pages are open
---------------------------------
- Work that runs in one cycle on several sub-units reads the state as it was before that cycle and
  its writes are merged (the sub-units act at once); two of them changing the same state element is
  Unimplemented (no page says which wins), except that the (†) rule makes a Simple and a Round
  instruction both writing, or both not writing, LReg[16] UndefinedBehavior. The scheduled store
  runs last, so nothing is written to Dst when another sub-unit raises.
- ``LoadMacroConfig`` that differs between the lanes in the parts one SFPLOADMACRO uses (its
  ``Sequence``, ``Misc``, the templates it selects) is Unimplemented: one scheduled instruction per
  sub-unit is modelled.
- A template whose opcode is not a vector-unit instruction of the sub-unit's column becomes SFPNOP
  (the model), which still occupies the sub-unit. SFPNOP scheduled on the store sub-unit, and a
  sequence selector of 1, are UndefinedBehaviour() (the model).
- Operand overrides: the instruction's own VB / VC are the table's ``lreg_src_b`` / ``lreg_c`` /
  ``lreg_src_c`` fields and SFPAND's / SFPOR's VB in ``imm12_math`` bits 0..3 (low four bits replaced);
  instructions without one get it through ``Context.vb`` / ``Context.vc`` (VB: always on the Simple
  sub-unit, whose models skip ``VB = VD``; on MAD / Round only when Sequence bit 7 sets it, as for
  SFPSHFT2's ``VB = Imm12 & 15``). VD 16 is passed as the value of the VD field (wider than its slot):
  the semantics treat it as LReg[16].
- The scheduled SFPSTORE uses SFPLOADMACRO's ``Addr`` (its Sp and RWCs are not read or advanced), its
  Mod0 (``MOD0_FMT_SRCB`` resolved when it runs), all lanes for ``DISABLE_BACKDOOR_LOAD``.
- A scheduled instruction whose semantics would wait (a stall no page gives for scheduled work) is
  Unimplemented.
- When no pipe has anything left, the engine lets outstanding work that counts cycles run to the end
  (``settle(None)``); an instruction a core pushes afterwards for an earlier cycle then counts as
  issued just after that work (``_now``). Work that counts instructions stays scheduled until enough
  vector-unit instructions issue, as on the hardware.
- (‡) SFPSWAP scheduled on the Simple sub-unit: the page asks for SFPNOP on MAD in the same cycle;
  tt-llk's exp kernel leaves MAD idle there instead, so only MAD work other than SFPNOP (scheduled,
  or issued in that cycle) is UndefinedBehavior. Anything but SFPNOP on Simple or Round, scheduled or
  issued, in the next cycle is UndefinedBehavior too.

Timing
------
SFPLOADMACRO issues at one per cycle (VectorUnit.md: IPC 1) and occupies the vector unit one cycle; its
load stalls like SFPLOAD's (sfpu/dst.py). Scheduled work occupies only its sub-unit, so it does not hold
the vector unit's issue; it extends the pipe's ``done_cycle`` (CoprocessorDoneCheck, run_words' end)
to the cycle after it runs, known when it is scheduled if it counts cycles. STALLWAIT's "SFPU busy"
condition (``busy_until``) does not see scheduled work.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import CORE_NAMES
from tensixsim.errors import InvalidInstruction, UndefinedBehavior, Unimplemented
from tensixsim.isa.spec import Instruction
from tensixsim.tensix.semantics import Context, Outcome, Retire, Semantics, Wait, lookup, semantics
from tensixsim.tensix.sfpu.dst import (
    BLACKHOLE_DST,
    DST_ACCESS,
    DstAccess,
    load_plan,
    resolve_srcb,
    store_plan,
)
from tensixsim.tensix.sfpu.unit import (
    LANES,
    MACRO_CLOCK,
    MACRO_CLOCK_RESET,
    MACRO_COLUMNS,
    SfpuState,
)
from tensixsim.timing import SFPU

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# Sub-units, in SFPLOADMACRO's order (its Sequence bytes), and the regular load sub-unit.
SIMPLE, MAD, ROUND, STORE, LOAD = range(5)
UNIT_NAMES = ("Simple", "MAD", "Round", "Store", "Load")
# The page's table: what each sub-unit can execute.
# fmt: off
COLUMNS: tuple[frozenset[str], ...] = (
    frozenset((
        "SFPABS", "SFPAND", "SFPARECIP", "SFPCAST", "SFPCOMPC", "SFPCONFIG", "SFPDIVP2", "SFPENCC",
        "SFPEXEXP", "SFPEXMAN", "SFPGT", "SFPIADD", "SFPLE", "SFPLZ", "SFPMOV", "SFPNOP", "SFPNOT", "SFPOR",
        "SFPPOPC", "SFPPUSHC", "SFPSETCC", "SFPSETEXP", "SFPSETMAN", "SFPSETSGN", "SFPSHFT", "SFPSWAP",
        "SFPTRANSP", "SFPXOR",
    )),
    frozenset((
        "SFPADD", "SFPADDI", "SFPLUT", "SFPLUTFP32", "SFPMAD", "SFPMUL", "SFPMULI", "SFPMUL24", "SFPNOP",
    )),
    frozenset(("SFPNOP", "SFPSHFT2", "SFP_STOCH_RND")),
    frozenset(("SFPSTORE",)),
)
# fmt: on
REGULAR_LOAD = frozenset({"SFPLOAD", "SFPLOADI", "SFPLOADMACRO"})

# Where an instruction's VD / VC / VB operands sit in the table's fields.
VD_FIELDS = ("lreg_dest", "lreg_ind", "config_dest")
VC_FIELDS = ("lreg_c", "lreg_src_c")
VB_FIELDS = ("lreg_src_b",)
VB_IN_IMM12 = frozenset({"SFPAND", "SFPOR"})
# By chip: Wormhole's SFPAND / SFPOR have no VB operand (their models assign ``VB = VD``, which
# SFPLOADMACRO replaces as for every simple-unit instruction).
VB_IN_IMM12_OF = {"blackhole": VB_IN_IMM12, "wormhole": frozenset()}

# macro_pending columns.
(VALID, UNIT, WORD, VB, VC, VD, MOD0, ADDR, THREAD, COUNT, KIND, BORN, SEQ, PC, CORE, NOP) = range(16)
NONE = -1  # no operand override
CYCLES, INSTRUCTIONS = 0, 1  # UnitDelayKind: WaitForElapsedCycles, WaitForElapsedInstructions
# macro_clock words.
EXECUTED, TICKED, SWAP_NEXT, NEXT_SEQ, UNITS_AT, UNITS_MASK = range(6)

if (MACRO_COLUMNS, MACRO_CLOCK) != (16, 6) or (
    [MACRO_CLOCK_RESET[i] for i in (SWAP_NEXT, UNITS_AT)] != [-1, -1]
):
    raise ImportError("SfpuState's scheduler arrays do not match sfpu.macro's layout")


# ------------------------------------------------------------------------------ helpers


def regular_unit(name: str) -> int | None:
    """The sub-unit a regular (issued) instruction goes to (None: SFPNOP, which needs none)."""
    if name in REGULAR_LOAD:
        return LOAD
    if name == "SFPNOP":
        return None
    for unit, column in enumerate(COLUMNS):
        if name in column:
            return unit
    return SIMPLE  # vector-unit instructions outside the table (none known) take the simple path


def _uniform(ctx: Context, values: np.ndarray, what: str) -> int:
    if np.any(values != values[0]):
        raise ctx.error(Unimplemented, f"LoadMacroConfig {what} differs between lanes (not modelled)")
    return int(values[0])


def _decode(ctx: Context, word: int) -> Instruction | None:
    try:
        return ctx.copro.isa.decode(word)
    except InvalidInstruction:
        return None


def _field(instruction: Instruction, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in instruction.fields), None)


def _splice(value: int, operand: int) -> int:
    """``value`` with its low four bits replaced by an LReg index (16 passes as is)."""
    return operand if operand > 15 else (value & ~0xF) | operand


def _tick(s: SfpuState, cycle: int) -> None:
    """The countdown step of ``cycle`` for work scheduled before it."""
    p = s.macro_pending
    if not p[:, VALID].any():
        return  # the clock matters only while work is outstanding (and then moves only here and in settle)
    older = (p[:, VALID] == 1) & (p[:, BORN] < cycle) & (p[:, COUNT] > 0)
    p[older, COUNT] -= 1
    s.macro_clock[TICKED] = max(int(s.macro_clock[TICKED]), cycle)


def _by_instructions(s: SfpuState, cycle: int) -> bool:
    """Whether outstanding work scheduled before ``cycle`` waits for instructions (then all of it does)."""
    p = s.macro_pending
    return bool(np.any((p[:, VALID] == 1) & (p[:, BORN] < cycle) & (p[:, KIND] == INSTRUCTIONS)))


def _now(s: SfpuState, cycle: int) -> int:
    """The scheduler's time for an instruction issued at ``cycle``. At the end of a run the engine lets
    outstanding work run ahead (``settle(None)``); an instruction a core pushes later but for an earlier
    cycle then counts as issued right after that work."""
    if not s.macro_pending[:, VALID].any():
        return cycle
    return max(cycle, int(s.macro_clock[EXECUTED]))


def pending(copro: Coprocessor) -> bool:
    """Whether any scheduled work is outstanding."""
    return np.count_nonzero(copro.sfpu.macro_pending[:, VALID]) != 0


# ------------------------------------------------------------------------------ running the work


def settle(copro: Coprocessor, cycle: int | None) -> None:
    """Run the scheduled work due at cycles up to ``cycle`` (None: as far as time alone takes it) and
    the countdown steps of the cycles before it."""
    s = copro.sfpu
    if not pending(copro):
        return  # the engine asks before every instruction; mostly nothing is scheduled
    clock = s.macro_clock
    while True:
        p = s.macro_pending
        valid = p[:, VALID] == 1
        t = int(clock[EXECUTED])
        if not valid.any():
            return  # nothing outstanding: the clock restarts with the next SFPLOADMACRO (``_now``)
        if cycle is not None and t >= cycle:
            return
        if clock[TICKED] < t and not _by_instructions(s, t):
            _tick(s, t)  # no vector-unit instruction issued at t (it would have counted down already)
        clock[TICKED] = max(int(clock[TICKED]), t)
        due = valid & (p[:, COUNT] == 0)
        if not due.any() and _by_instructions(s, t + 1):
            # Nothing runs until a vector-unit instruction issues.
            if cycle is not None:
                clock[EXECUTED], clock[TICKED] = cycle, cycle - 1
            return
        clock[EXECUTED] = t + 1
        if due.any():
            _run(copro, t + 1, np.flatnonzero(due))


def _run(copro: Coprocessor, cycle: int, rows: np.ndarray) -> None:
    """Run the work in ``macro_pending`` ``rows`` at ``cycle``: all at once (module docstring)."""
    s = copro.sfpu
    p = s.macro_pending
    work = sorted((p[r].copy() for r in rows), key=lambda op: int(op[UNIT]))
    by_unit = {int(op[UNIT]): op for op in work}
    ctx0 = _context(copro, work[0], cycle)
    simple, rnd = by_unit.get(SIMPLE), by_unit.get(ROUND)
    both = simple is not None and rnd is not None and not simple[NOP] and not rnd[NOP]
    if both and (simple[VD] == 16) == (rnd[VD] == 16):
        raise ctx0.error(
            UndefinedBehavior,
            "scheduled Simple and Round instructions in one cycle need exactly one with VD 16",
        )
    if s.macro_clock[SWAP_NEXT] == cycle:
        for unit in (SIMPLE, ROUND):
            if unit in by_unit and not by_unit[unit][NOP]:
                raise ctx0.error(
                    UndefinedBehavior, f"{UNIT_NAMES[unit]} work on the cycle after a scheduled SFPSWAP"
                )
    swap = simple is not None and not simple[NOP] and _name(copro, simple) == "SFPSWAP"
    if swap:
        mad = by_unit.get(MAD)
        if mad is not None and not mad[NOP]:
            raise ctx0.error(UndefinedBehavior, "a scheduled SFPSWAP needs SFPNOP on MAD in the same cycle")
    acting = [op for op in work if not op[NOP]]
    if len(acting) == 1:
        _execute(copro, acting[0], cycle)
    elif acting:
        _at_once(copro, acting, cycle)
    p[rows, VALID] = 0
    s.macro_clock[UNITS_AT] = cycle
    s.macro_clock[UNITS_MASK] = sum(1 << int(op[UNIT]) for op in work)
    if swap:
        s.macro_clock[SWAP_NEXT] = cycle + 1
    for op in work:
        copro.extend_done(int(op[THREAD]), cycle + 1)


def _at_once(copro: Coprocessor, work: list[np.ndarray], cycle: int) -> None:
    """Run ``work`` (several sub-units, store last) on copies of the state and merge the changes."""
    base = copro.sfpu
    results = []
    try:
        for op in work:
            copro.sfpu = base.copy()
            _execute(copro, op, cycle)
            results.append(copro.sfpu)
    finally:
        copro.sfpu = base
    for f in fields(base):
        if f.name in ("macro_pending", "macro_clock"):
            continue
        old = getattr(base, f.name)
        new, claimed = old.copy(), np.zeros(old.shape, bool)
        for op, result in zip(work, results, strict=True):
            changed = getattr(result, f.name) != old
            if np.any(changed & claimed):
                raise _context(copro, op, cycle).error(
                    Unimplemented, f"two sub-units change vector-unit {f.name} in one cycle"
                )
            new[changed] = getattr(result, f.name)[changed]
            claimed |= changed
        setattr(base, f.name, new)


def _name(copro: Coprocessor, op: np.ndarray) -> str:
    return copro.isa.decode(int(op[WORD])).name


def _context(copro: Coprocessor, op: np.ndarray, cycle: int) -> Context:
    # The CORE column indexes CORE_NAMES, as the native engine's queue entries do.
    core = CORE_NAMES[int(op[CORE])] if 0 <= op[CORE] < len(CORE_NAMES) else "coprocessor"
    return Context(
        copro,
        int(op[THREAD]),
        cycle,
        copro.isa.decode(int(op[WORD])),
        core,
        int(op[PC]),
        scheduled=True,
        vb=None if op[VB] == NONE else int(op[VB]),
        vc=None if op[VC] == NONE else int(op[VC]),
    )


def _execute(copro: Coprocessor, op: np.ndarray, cycle: int) -> None:
    """One scheduled instruction, with the semantics it has when issued (the store: SFPSTORE's lane
    work at SFPLOADMACRO's Addr)."""
    ctx = _context(copro, op, cycle)
    instruction = ctx.instruction
    if op[UNIT] == STORE:
        mod0 = resolve_srcb(ctx, int(op[MOD0]))
        access = DST_ACCESS[copro.arch.name]  # the chip's Dst conversions (sfpu/dst.py)
        store_plan(ctx, int(op[VD]), mod0, int(op[ADDR]), np.ones(LANES, bool), access)()
        return
    fn = lookup(copro.arch.name, instruction.name)
    if fn is None:
        raise ctx.error(Unimplemented, f"{instruction.name} (scheduled by SFPLOADMACRO) is not executed yet")
    kwargs = dict(instruction.fields)
    vd_field = _field(instruction, VD_FIELDS)
    if vd_field is not None:
        kwargs[vd_field] = _splice(kwargs[vd_field], int(op[VD]))
    for names, column in ((VC_FIELDS, VC), (VB_FIELDS, VB)):
        name = _field(instruction, names)
        if name is not None and op[column] != NONE:
            kwargs[name] = _splice(kwargs[name], int(op[column]))
    if instruction.name in VB_IN_IMM12_OF[copro.arch.name] and op[VB] != NONE:
        kwargs["imm12_math"] = _splice(kwargs["imm12_math"], int(op[VB]))
    outcome = fn(ctx, **kwargs)
    if isinstance(outcome, Wait):
        raise ctx.error(Unimplemented, f"scheduled by SFPLOADMACRO, it would wait ({outcome.reason})")


# ------------------------------------------------------------------------------ the engine's hook


def issue(ctx: Context, fn: Semantics) -> Outcome:
    """A thread issues vector-unit instruction ``ctx.instruction`` at ``ctx.cycle``: run the work due
    first, discard the instruction if scheduled work occupies its sub-unit, count the issue down."""
    copro, cycle = ctx.copro, ctx.cycle
    settle(copro, cycle)  # the engine has done it already; direct callers too
    s = copro.sfpu
    clock = s.macro_clock
    name = ctx.instruction.name
    unit = regular_unit(name)
    if clock[SWAP_NEXT] == cycle and unit in (SIMPLE, ROUND):
        raise ctx.error(
            UndefinedBehavior, "issued to the Simple or Round sub-unit the cycle after a scheduled SFPSWAP"
        )
    if clock[SWAP_NEXT] == cycle + 1 and unit == MAD:
        raise ctx.error(UndefinedBehavior, "issued to the MAD sub-unit in the cycle of a scheduled SFPSWAP")
    if unit is not None and clock[UNITS_AT] == cycle and (int(clock[UNITS_MASK]) >> unit) & 1:
        outcome: Outcome = Retire(SFPU.issue)  # the scheduled work takes priority: silently discarded
    else:
        outcome = fn(ctx, **ctx.instruction.fields)
    if not pending(copro):
        return outcome  # nothing to count down
    now = _now(s, cycle)
    if isinstance(outcome, Retire) and clock[TICKED] < now:
        _tick(s, now)
    return outcome


# ------------------------------------------------------------------------------ SFPLOADMACRO


def _plan(ctx: Context, macro: int, vd: int, mod0: int, addr: int) -> list[np.ndarray]:
    """The rows SFPLOADMACRO schedules (UNIT, COUNT and the operands set); raises having changed nothing."""
    s = ctx.copro.sfpu
    sequence = _uniform(ctx, s.macro_sequence[:, macro], f"Sequence[{macro}]")
    misc = _uniform(ctx, s.macro_misc, "Misc")
    store_mod0, uses_load_mod0, delay_kind = misc & 0xF, (misc >> 4) & 0xF, (misc >> 8) & 0xF
    nop = ctx.copro.isa.encode("SFPNOP")
    rows = []
    for unit in (SIMPLE, MAD, ROUND, STORE):
        bits = (sequence >> (8 * unit)) & 0xFF
        select, delay = bits & 7, (bits >> 3) & 7
        row = np.full(MACRO_COLUMNS, NONE, np.int64)
        row[UNIT], row[COUNT], row[NOP] = unit, delay, 0
        row[KIND] = INSTRUCTIONS if (delay_kind >> unit) & 1 else CYCLES
        if select == 0:
            row[VALID] = 0  # schedules nothing, but still forgets (the model's order)
            rows.append(row)
            continue
        if select == 1:
            raise ctx.error(
                UndefinedBehavior, f"Sequence[{macro}] selects 1 for the {UNIT_NAMES[unit]} sub-unit"
            )
        if select == 2:
            word = nop
        elif select == 3:
            word = ctx.copro.isa.encode(
                "SFPSTORE", lreg_ind=0, instr_mod0=0, sfpu_addr_mode=0, dest_reg_addr=0
            )
        else:
            word = _uniform(ctx, s.macro_template[:, select - 4], f"InstructionTemplate[{select - 4}]")
        instruction = _decode(ctx, word)
        if instruction is None or instruction.name not in COLUMNS[unit]:
            if unit == STORE:
                raise ctx.error(UndefinedBehavior, "SFPNOP scheduled on the Store sub-unit", word)
            word, instruction = nop, ctx.copro.isa.decode(nop)
        row[VALID], row[WORD], row[NOP] = 1, word, instruction.name == "SFPNOP"
        vd_field = _field(instruction, VD_FIELDS)
        own_vd = instruction.fields[vd_field] if vd_field else NONE
        if unit == STORE:
            row[VD] = 16 if bits & 0x40 else own_vd if bits & 0x80 else vd
            row[MOD0] = mod0 if (uses_load_mod0 >> macro) & 1 else store_mod0
            row[ADDR] = addr
        else:
            has_vc = _field(instruction, VC_FIELDS) is not None
            in_imm12 = VB_IN_IMM12_OF[ctx.copro.arch.name]
            has_vb = _field(instruction, VB_FIELDS) is not None or instruction.name in in_imm12
            if bits & 0x80:
                row[VB] = vd
                row[VC] = NONE if has_vc else own_vd
            else:
                row[VC] = vd
                # VB = the template's VD; only the simple sub-unit's models skip their own VB = VD
                row[VB] = NONE if has_vb or unit != SIMPLE else own_vd
            row[VD] = 16 if bits & 0x40 else vd
        rows.append(row)
    return rows


def _schedule(ctx: Context, rows: list[np.ndarray], now: int) -> None:
    s = ctx.copro.sfpu
    p = s.macro_pending
    for row in rows:
        unit, delay = int(row[UNIT]), int(row[COUNT])
        if delay != 7:  # ForgetFutureInstructionWhoseDelayIs(Delay)
            same = (p[:, VALID] == 1) & (p[:, UNIT] == unit) & (p[:, COUNT] == delay)
            p[same, VALID] = 0
        if not row[VALID]:
            continue
        free = np.flatnonzero(p[:, VALID] == 0)
        if free.size == 0:
            raise ctx.error(Unimplemented, "more scheduled vector-unit work than the model holds")
        row = row.copy()
        row[THREAD], row[BORN], row[PC] = ctx.thread, now, ctx.pc
        row[CORE] = CORE_NAMES.index(ctx.core) if ctx.core in CORE_NAMES else NONE
        row[SEQ] = s.macro_clock[NEXT_SEQ]
        s.macro_clock[NEXT_SEQ] += 1
        p[free[0]] = row
        if not _by_instructions(s, now + 1):  # counted in cycles: it runs at now + 1 + delay
            ctx.copro.extend_done(ctx.thread, now + delay + 2)


@semantics("SFPLOADMACRO")
def sfploadmacro(
    ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int
) -> Outcome:
    return loadmacro(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, dest_reg_addr, BLACKHOLE_DST)


def loadmacro(
    ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int, access: DstAccess
) -> Outcome:
    """SFPLOADMACRO's functional model, its load reaching Dst as ``access`` describes (the chip's)."""
    imm10 = ctx.documented("dest_reg_addr", dest_reg_addr, 10)
    macro, vd = lreg_ind >> 2, ((imm10 & 1) << 2) | (lreg_ind & 3)
    settle(ctx.copro, ctx.cycle)  # the engine has done it already; direct callers too
    plan = load_plan(ctx, vd, instr_mod0, sfpu_addr_mode, imm10, access)
    if isinstance(plan, Wait):
        return plan
    addr, commit = plan
    rows = _plan(ctx, macro, vd, instr_mod0, addr)
    commit()
    s = ctx.copro.sfpu
    now = _now(s, ctx.cycle)
    if pending(ctx.copro):
        if s.macro_clock[TICKED] < now:
            _tick(s, now)  # this issue counts the older work down before the new work is scheduled
    else:
        s.macro_clock[EXECUTED] = s.macro_clock[TICKED] = now
    _schedule(ctx, rows, now)
    return Retire(SFPU.issue)
