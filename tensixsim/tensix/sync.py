"""Sync unit: semaphores, mutexes, the wait gate (STALLWAIT / SEMWAIT / STREAMWAIT), and the RISC-V
view of semaphores and Manual TTSync.

Functional model: tt-isa-documentation (jasondavies fork) BlackholeA0/TensixTile/TensixCoprocessor/
SyncUnit.md and the SEMINIT, SEMPOST, SEMGET, SEMWAIT, STALLWAIT, STREAMWAIT, ATGETM and ATRELM pages;
BabyRISCV/ManualTTSync.md, PCBufs.md and the BabyRISCV memory map. Masks as tt-llk
tt_llk_blackhole/common/inc/ckernel_instr_params.h (``p_stall``) uses them.

The wait gate
-------------
STALLWAIT, SEMWAIT and STREAMWAIT only *latch* a wait instruction in their thread's wait gate: a block
mask (B0..B8: which instructions may not pass) and conditions. The pipe engine calls
:func:`gate_blocks` before it issues any instruction; while the latched conditions are not all met,
an instruction the block mask selects is held there, with a reason. The gate forgets a latch as soon
as it sees the conditions met, whatever instruction is waiting (so a later instruction is not held
by conditions that became true and then false again while nothing was blocked).

The documentation gives a one-cycle lag between the conditions being met and the mask being
removed, so the instruction right after the wait instruction is held at least one cycle. Modelled
as: at cycle ``c`` the gate tests the conditions as they were at ``c - 1`` (unit timers exactly; the
other state as it is, the engine having processed everything before ``c``), and never releases
before the wait instruction's cycle + 2. :func:`gate_release_cycle` tells the engine when a held
instruction can pass without any other state change (conditions on busy units clear by themselves).

Services this module needs from the coprocessor, beyond those in coprocessor.py
-------------------------------------------------------------------------------
Each is looked up when first needed; a missing one raises :class:`Unimplemented` naming it, never a
guess.

- ``copro.src_valid(bank) -> bool`` (STALLWAIT C5..C8): True when the SrcA/SrcB bank named by
  ``bank`` is handed to the matrix unit (``AllowedClient == MatrixUnit``), False when the unpackers
  may write it. ``bank`` is ``"srca_unpacker"`` / ``"srcb_unpacker"`` (the bank unpacker 0 / 1
  currently writes) or ``"srca_matrix"`` / ``"srcb_matrix"`` (the bank the matrix unit reads).
- ``copro.config.thread_field(name, thread) -> int`` (STREAMWAIT): a ThreadConfig field by its
  cfg_defines name (``STREAMWAIT_PHASE_HI_Val``, ``STREAM_ID_SYNC_SEC0_BankSel``).
- ``copro.tile.streams.read(stream_id, register_index) -> int`` (STREAMWAIT): a stream register.
- ``copro.thread_idle(thread, cycle) -> bool`` (CoprocessorDoneCheck): no instruction of ``thread``
  is in the coprocessor at ``cycle`` (queued, expanding, held at the gate or still in its unit).
  While it is False the load stalls with ``wait_key=("thread_idle", thread)``: the tile must wake
  that key when the thread becomes idle. ``copro.thread_idle_at(thread) -> int | None`` (optional):
  the cycle the thread becomes idle when only its unit is still busy; the load then retries then.
- ``copro.mop_expander_idle(thread, cycle) -> bool`` (MOPExpanderDoneCheck): no MOP of ``thread`` is
  queued before its MOP expander or being expanded at ``cycle``; waits on
  ``("mop_expander_idle", thread)`` likewise.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import InvalidProgram, UndefinedBehavior, Unimplemented
from tensixsim.isa import isa_for
from tensixsim.isa.spec import InstrSpec, Instruction
from tensixsim.mmio.memory import Access, ReadFn, Register, Stall, WriteFn
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import SYNC

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor

SEMAPHORES = 8
SEM_LIMIT = 15  # Value and Max are 4 bits; SEMPOST and the RISC-V post saturate here, not at Max
MUTEX_SLOTS = 8  # owner array size; which indices exist is per architecture (MUTEXES)
NOBODY = -1

# Mutex indices that exist (ATGETM.md: Blackhole has 0, 2, 3 and 4; any other index waits forever).
# Wormhole's ATGETM.md: an index of 1 or above 7 waits forever.
MUTEXES: dict[str, tuple[int, ...]] = {"blackhole": (0, 2, 3, 4), "wormhole": (0, 2, 3, 4, 5, 6, 7)}

# Block mask bits (STALLWAIT.md "Block mask"; tt-llk p_stall::STALL_*).
B0, B1, B2, B3, B4, B5, B6, B7, B8 = (1 << i for i in range(9))
ALL_BLOCKS = (1 << 9) - 1
DEFAULT_BLOCK = B6  # a zero block mask means B6 (matrix unit)
DEFAULT_CONDITIONS = 0x0F  # a zero STALLWAIT condition mask (or SEMWAIT's) means C0..C3

# Documented operand widths where the table's slot is wider (the extra bits must be zero).
_SEM_MASK_BITS = 8
_STALLWAIT_CONDITION_BITS = 13
_STREAM_TARGET_BITS = 10
_STREAM_SELECT_BITS = 2

# RISC-V view (BabyRISCV memory map), relative to arch.pcbuf_base.
COPROCESSOR_DONE_CHECK = 0x4
MOP_EXPANDER_DONE_CHECK = 0x8
PC_BUF_SEMAPHORE_BASE = 8  # word index of SemaphoreAccess[0] (tt-llk ckernel_structs.h)
SEMAPHORE_ACCESS = 4 * PC_BUF_SEMAPHORE_BASE

# STREAMWAIT (Blackhole noc_overlay_parameters.h): the stream registers its two conditions read,
# and the ThreadConfig fields that give the target's high bits.
STREAM_CURR_PHASE_REG_INDEX = 29
STREAM_NUM_MSGS_RECEIVED_REG_INDEX = 259
_STREAM_CONDITIONS = (
    ("phase", STREAM_CURR_PHASE_REG_INDEX, "STREAMWAIT_PHASE_HI_Val"),
    ("messages received", STREAM_NUM_MSGS_RECEIVED_REG_INDEX, "STREAMWAIT_NUM_MSGS_HI_Val"),
)


class Latch(IntEnum):
    """What a thread's wait gate holds (the latched instruction's opcode, or nothing)."""

    NONE = 0
    STALLWAIT = 1
    SEMWAIT = 2
    STREAMWAIT = 3


@dataclass
class SyncState(SharedArrays):
    """Semaphores, mutexes and the three wait gates, as raw data."""

    sem_value: np.ndarray  # (8,) uint8, 0..15
    sem_max: np.ndarray  # (8,) uint8, 0..15
    mutex_owner: np.ndarray  # (MUTEX_SLOTS,) int8: holding thread, or NOBODY
    # The mutex a thread's ATGETM is trying to take at its wait gate (NOBODY if none): the
    # arbitration on release needs to know who is trying (ATRELM.md).
    mutex_wanted: np.ndarray  # (threads,) int8
    # The latched wait instruction of each thread's wait gate.
    gate_kind: np.ndarray  # (threads,) uint8, a Latch
    gate_block: np.ndarray  # (threads,) uint16, B0..B8
    gate_conditions: np.ndarray  # (threads,) uint16: STALLWAIT C0..C12, SEMWAIT C0..C1, STREAMWAIT C0/C1
    gate_sems: np.ndarray  # (threads,) uint8: SEMWAIT's semaphore mask
    gate_stream_select: np.ndarray  # (threads,) uint8: STREAMWAIT's STREAM_ID_SYNC_SEC index
    gate_target: np.ndarray  # (threads,) uint32: STREAMWAIT's target value
    gate_cycle: np.ndarray  # (threads,) int64: when the wait instruction executed

    @classmethod
    def new(cls, arch: Arch) -> SyncState:
        threads = arch.pipe_count
        return cls(
            sem_value=np.zeros(SEMAPHORES, np.uint8),
            sem_max=np.zeros(SEMAPHORES, np.uint8),
            mutex_owner=np.full(MUTEX_SLOTS, NOBODY, np.int8),
            mutex_wanted=np.full(threads, NOBODY, np.int8),
            gate_kind=np.zeros(threads, np.uint8),
            gate_block=np.zeros(threads, np.uint16),
            gate_conditions=np.zeros(threads, np.uint16),
            gate_sems=np.zeros(threads, np.uint8),
            gate_stream_select=np.zeros(threads, np.uint8),
            gate_target=np.zeros(threads, np.uint32),
            gate_cycle=np.zeros(threads, np.int64),
        )


# ------------------------------------------------------------------------------ block mask

# Which block bits hold an instruction. STALLWAIT.md lists every instruction; its table is
# reproduced by the instruction's unit (the table's unit column) and a few documented exceptions.
# Instructions the page does not list (MOVDBGB2D, RAREB, SETASHRMH*, SETASHRMV, SETIBRWC, SETPKEDGOF,
# TBUFCMD, TRNSPSRCA) get their unit's bits, the page's "approximate meaning" of each bit.
UNIT_BLOCKS: dict[str, int] = {
    "frontend": B0,  # NOP, MOP, MOP_CFG, REPLAY, RESOURCEDECL
    "thcon": B0 | B5,
    "unpack": B0 | B3,
    "pack": B0 | B2,
    "xmov": B0 | B4,
    "matrix": B6,
    "config": B7,
    "sfpu": B8,
    "sync": B1,
}
BLOCK_EXCEPTIONS: dict[str, int] = {
    # Address-counter instructions (filed with the unpackers) and RSTDMA: B0 only.
    **dict.fromkeys(
        ("ADDRCRXY", "ADDRCRZW", "INCADCXY", "INCADCZW", "SETADC", "SETADCXX", "SETADCXY", "SETADCZW"), B0
    ),
    "RSTDMA": B0,
    "SETDVALID": B0,
    # A wait instruction waits for the previous one whatever its block mask.
    "STALLWAIT": ALL_BLOCKS,
    "SEMWAIT": ALL_BLOCKS,
    "STREAMWAIT": ALL_BLOCKS,
}


def block_bits(spec: InstrSpec) -> int:
    """The block-mask bits that hold instruction ``spec`` at the wait gate."""
    if spec.name in BLOCK_EXCEPTIONS:
        return BLOCK_EXCEPTIONS[spec.name]
    if spec.unit not in UNIT_BLOCKS:
        raise Unimplemented(f"{spec.name}: no wait-gate block bits known for unit {spec.unit!r}")
    return UNIT_BLOCKS[spec.unit]


# Per architecture this module registers semantics for: instruction name -> block bits.
# (Wormhole's STALLWAIT.md table is the one this reproduces; tests/test_wormhole_coprocessor.py
# checks it row by row.)
_BLOCK_BITS: dict[str, dict[str, int]] = {
    arch: {spec.name: block_bits(spec) for spec in isa_for(arch)} for arch in ("blackhole", "wormhole")
}


# ------------------------------------------------------------------------------ conditions


@dataclass(frozen=True)
class Condition:
    """One STALLWAIT condition bit: keep waiting while it holds."""

    label: str  # C0..C12
    what: str
    unit: str | None = None  # keep waiting while copro.unit_busy(unit)
    src_bank: str | None = None  # keep waiting while copro.src_valid(src_bank) == src_waits_while
    src_waits_while: bool = False


# Blackhole STALLWAIT condition bits (tt-llk p_stall name in brackets) and how each is evaluated:
# this is the one mapping from documented conditions to unit names. Per-thread conditions use the
# unit's busy state for all threads, which waits at least as long as the hardware (the page says so
# itself for C4 and C11).
STALLWAIT_CONDITIONS: tuple[Condition, ...] = (
    Condition("C0", "ThCon memory requests outstanding", unit="thcon"),  # THCON
    # One unpacker each: its UNPACR's address cycles and data phase (coprocessor.busy_end).
    Condition("C1", "unpacker 0 busy", unit="unpacker0"),  # UNPACK0
    Condition("C2", "unpacker 1 busy", unit="unpacker1"),  # UNPACK1
    Condition("C3", "packer busy", unit="packer"),  # PACK0: until its pipeline drains (pack.stream.accept)
    Condition("C4", "matrix unit busy", unit="matrix"),  # MATH
    # SrcA/SrcB ownership: SrcX[bank].AllowedClient != the client that waits.
    Condition("C5", "SrcA not released to the unpackers", src_bank="srca_unpacker", src_waits_while=True),
    Condition("C6", "SrcB not released to the unpackers", src_bank="srcb_unpacker", src_waits_while=True),
    Condition("C7", "SrcA not valid for the matrix unit", src_bank="srca_matrix", src_waits_while=False),
    Condition("C8", "SrcB not valid for the matrix unit", src_bank="srcb_matrix", src_waits_while=False),
    Condition("C9", "mover memory requests outstanding", unit="xmov"),  # XMOV
    # TRISC_CFG: a RISC-V store to GPRs/config/TDMA-RISC not yet processed. Here a core's MMIO
    # access completes when the core makes it, before anything it pushes later, so never true.
    Condition("C10", "RISC-V MMIO request pending"),
    Condition("C11", "SFPU busy", unit="sfpu"),  # WAIT_SFPU
    Condition("C12", "configuration unit busy", unit="config"),  # CFGEXU
)
# Wormhole's STALLWAIT.md: fifteen condition bits, four packers, no configuration-unit condition;
# a zero mask (and SEMWAIT without a semaphore condition) means C0..C6. The tile models one packer,
# so C3..C6 all wait for it.
WORMHOLE_STALLWAIT_CONDITIONS: tuple[Condition, ...] = (
    Condition("C0", "ThCon memory requests outstanding", unit="thcon"),
    Condition("C1", "unpacker 0 busy", unit="unpacker0"),
    Condition("C2", "unpacker 1 busy", unit="unpacker1"),
    *(Condition(f"C{3 + i}", f"packer {i} busy", unit="packer") for i in range(4)),
    Condition("C7", "matrix unit busy", unit="matrix"),
    Condition("C8", "SrcA not released to the unpackers", src_bank="srca_unpacker", src_waits_while=True),
    Condition("C9", "SrcB not released to the unpackers", src_bank="srcb_unpacker", src_waits_while=True),
    Condition("C10", "SrcA not valid for the matrix unit", src_bank="srca_matrix", src_waits_while=False),
    Condition("C11", "SrcB not valid for the matrix unit", src_bank="srcb_matrix", src_waits_while=False),
    Condition("C12", "mover memory requests outstanding", unit="xmov"),
    Condition("C13", "RISC-V MMIO request pending"),  # (never pending here: see Blackhole's C10)
    Condition("C14", "SFPU busy", unit="sfpu"),
)
STALLWAIT_CONDITIONS_BY_ARCH: dict[str, tuple[Condition, ...]] = {
    "blackhole": STALLWAIT_CONDITIONS,
    "wormhole": WORMHOLE_STALLWAIT_CONDITIONS,
}
DEFAULT_CONDITIONS_BY_ARCH: dict[str, int] = {"blackhole": DEFAULT_CONDITIONS, "wormhole": 0x7F}


def _src_conditions(conditions: tuple[Condition, ...]) -> int:
    return sum(1 << i for i, c in enumerate(conditions) if c.src_bank)


_SRC_CONDITIONS = _src_conditions(STALLWAIT_CONDITIONS)
_SRC_CONDITIONS_BY_ARCH = {arch: _src_conditions(c) for arch, c in STALLWAIT_CONDITIONS_BY_ARCH.items()}


def _service(owner: Any, name: str, needed_for: str, cycle: int | None) -> Any:
    """A service this unit depends on (see the module docstring), or Unimplemented."""
    service = getattr(owner, name, None)
    if service is None:
        raise Unimplemented(f"{needed_for} needs coprocessor service {name!r}, not modelled yet", cycle=cycle)
    return service


# Why a latched wait holds an instruction (the gate's reasons; the native engine rebuilds the same).
def stallwait_text(bit: int, arch: str = "blackhole") -> str:
    condition = STALLWAIT_CONDITIONS_BY_ARCH[arch][bit]
    return f"STALLWAIT: {condition.what} ({condition.label})"


def sem_empty_text(sem: int) -> str:
    return f"SEMWAIT sem {sem} == 0"


def sem_full_text(sem: int, value: int, top: int) -> str:
    return f"SEMWAIT sem {sem} >= max ({value} >= {top})"


def stream_text(stream: int, condition: int, value: int, target: int) -> str:
    """STREAMWAIT's unmet condition ``condition`` (an index of _STREAM_CONDITIONS), without the prefix."""
    return f"stream {stream} {_STREAM_CONDITIONS[condition][0]} {value} < {target}"


def mutex_held_text(mutex_index: int, owner: int) -> str:
    return f"mutex {mutex_index} held by thread {owner}"


def lag_text(kind: int) -> str:
    return f"{Latch(kind).name}: the wait gate opens next cycle"


def _stallwait_unmet(copro: Coprocessor, conditions: int, at: int) -> str | None:
    """The first selected STALLWAIT condition that still holds at cycle ``at``, or None."""
    arch = copro.arch.name
    for bit, condition in enumerate(STALLWAIT_CONDITIONS_BY_ARCH[arch]):
        if not conditions >> bit & 1:
            continue
        if condition.unit is not None:
            if copro.unit_busy(condition.unit, at):
                return stallwait_text(bit, arch)
        elif condition.src_bank is not None:
            src_valid = _service(copro, "src_valid", f"STALLWAIT {condition.label}", at)
            if bool(src_valid(condition.src_bank)) == condition.src_waits_while:
                return stallwait_text(bit, arch)
    return None


def _semwait_unmet(state: SyncState, conditions: int, sems: int) -> str | None:
    for i in range(SEMAPHORES):
        if not sems >> i & 1:
            continue
        value, top = int(state.sem_value[i]), int(state.sem_max[i])
        if conditions & 1 and value == 0:
            return sem_empty_text(i)
        if conditions & 2 and value >= top:
            return sem_full_text(i, value, top)
    return None


def _streamwait_unmet(copro: Coprocessor, thread: int, at: int) -> str | None:
    state = copro.sync
    condition = int(state.gate_conditions[thread]).bit_length() - 1
    _, register, _ = _STREAM_CONDITIONS[condition]
    select = int(state.gate_stream_select[thread])
    thread_field = _service(copro.config, "thread_field", "STREAMWAIT", at)
    stream = int(thread_field(f"STREAM_ID_SYNC_SEC{select}_BankSel", thread))
    value = _service(copro.tile, "streams", "STREAMWAIT", at).read(stream, register)
    target = int(state.gate_target[thread])
    if value < target:
        return stream_text(stream, condition, value, target)
    return None


def _unmet(copro: Coprocessor, thread: int, at: int) -> str | None:
    """Why the latched wait of ``thread`` goes on at cycle ``at`` (None: all its conditions are met)."""
    state = copro.sync
    kind = Latch(int(state.gate_kind[thread]))
    conditions = int(state.gate_conditions[thread])
    if kind is Latch.STALLWAIT:
        return _stallwait_unmet(copro, conditions, at)
    if kind is Latch.SEMWAIT:
        return _semwait_unmet(state, conditions, int(state.gate_sems[thread]))
    if kind is Latch.STREAMWAIT:
        unmet = _streamwait_unmet(copro, thread, at)
        return None if unmet is None else f"STREAMWAIT {unmet}"
    return None


def _forget(state: SyncState, thread: int) -> None:
    state.gate_kind[thread] = Latch.NONE
    state.gate_block[thread] = 0
    state.gate_conditions[thread] = 0
    state.gate_sems[thread] = 0
    state.gate_stream_select[thread] = 0
    state.gate_target[thread] = 0


_NO_LATCH = int(Latch.NONE)  # a plain int: this test runs before every instruction


def gate_blocks(copro: Coprocessor, thread: int, instruction: Instruction, cycle: int) -> str | None:
    """Why ``thread``'s wait gate holds ``instruction`` at ``cycle``; None if it may pass.

    Called by the pipe engine before it issues any instruction of ``thread`` (then the semantics
    run). Forgets the thread's latched wait instruction once its conditions are met, whether or not
    this instruction is one it would block. The reason names the wait ("STALLWAIT: matrix unit busy
    (C4)", "SEMWAIT sem 2 == 0"). See :func:`gate_release_cycle` for when to try again.
    """
    state = copro.sync
    reason = None
    if state.gate_kind[thread] != _NO_LATCH:
        unmet = _unmet(copro, thread, cycle - 1)
        if cycle <= int(state.gate_cycle[thread]) + 1:
            # The documented lag: the instruction right after the wait is held at least a cycle.
            reason = unmet or lag_text(int(state.gate_kind[thread]))
        elif unmet is None:
            _forget(state, thread)
        else:
            reason = unmet
        if reason is not None and not _BLOCK_BITS[copro.arch.name][instruction.name] & int(
            state.gate_block[thread]
        ):
            reason = None  # latched, but this instruction is not one it blocks
    if reason is None and instruction.name == "ATGETM" and instruction["mutex_index"] < MUTEX_SLOTS:
        # The ATGETM is now at the gate trying to take its mutex (ATRELM's arbitration uses this).
        state.mutex_wanted[thread] = instruction["mutex_index"]
    return reason


def gate_release_cycle(copro: Coprocessor, thread: int, cycle: int) -> int | None:
    """The earliest cycle from ``cycle`` on at which the latched wait of ``thread`` can be met with no
    other state change (busy units free up by themselves, the lag passes); None when only a state
    change can meet it (a semaphore, a stream, SrcA/SrcB ownership) or nothing is latched."""
    state = copro.sync
    kind = Latch(int(state.gate_kind[thread]))
    if kind is Latch.NONE:
        return None
    earliest = max(cycle, int(state.gate_cycle[thread]) + 2)
    if kind is not Latch.STALLWAIT:
        return earliest if _unmet(copro, thread, cycle) is None else None
    conditions = int(state.gate_conditions[thread])
    arch = copro.arch.name
    if _stallwait_unmet(copro, conditions & _SRC_CONDITIONS_BY_ARCH[arch], cycle) is not None:
        return None
    for bit, condition in enumerate(STALLWAIT_CONDITIONS_BY_ARCH[arch]):
        if conditions >> bit & 1 and condition.unit is not None:
            # Tested at the previous cycle: free at busy_until, so passes one cycle later.
            earliest = max(earliest, copro.busy_end(condition.unit) + 1)
    return earliest


def _latch(
    ctx: Context,
    kind: Latch,
    block: int,
    conditions: int,
    sems: int = 0,
    stream_select: int = 0,
    target: int = 0,
) -> Retire:
    state, thread = ctx.copro.sync, ctx.thread
    state.gate_kind[thread] = kind
    state.gate_block[thread] = block or DEFAULT_BLOCK
    state.gate_conditions[thread] = conditions
    state.gate_sems[thread] = sems
    state.gate_stream_select[thread] = stream_select
    state.gate_target[thread] = target
    state.gate_cycle[thread] = ctx.cycle
    return Retire(SYNC.sync)


def _check_width(ctx: Context, name: str, value: int, width: int) -> None:
    """A table slot wider than its documented operand must hold a value the operand can."""
    if value >> width:
        raise ctx.error(
            UndefinedBehavior, f"{name}={value} does not fit the documented {width}-bit operand", value
        )


def _selected(mask: int) -> np.ndarray:
    """The semaphores an 8-bit mask selects, as a boolean array."""
    return (mask >> np.arange(SEMAPHORES)) & 1 == 1


# ------------------------------------------------------------------------------ semaphores


# SEMINIT, SEMPOST, SEMGET, SEMWAIT, STALLWAIT, ATGETM and ATRELM: the same encoding and functional
# model on Wormhole (its pages are the ones quoted), with per-architecture condition, default and
# mutex tables.
BOTH = ("blackhole", "wormhole")


@semantics("SEMINIT", arches=BOTH)
def seminit(ctx: Context, max_value: int, init_value: int, sem_sel: int) -> Outcome:
    _check_width(ctx, "sem_sel", sem_sel, _SEM_MASK_BITS)
    state, selected = ctx.copro.sync, _selected(sem_sel)
    state.sem_value[selected] = init_value
    state.sem_max[selected] = max_value
    return Retire(SYNC.sync)


@semantics("SEMPOST", arches=BOTH)
def sempost(ctx: Context, sem_sel: int) -> Outcome:
    _check_width(ctx, "sem_sel", sem_sel, _SEM_MASK_BITS)
    state = ctx.copro.sync
    state.sem_value[_selected(sem_sel) & (state.sem_value < SEM_LIMIT)] += 1
    return Retire(SYNC.sync)


@semantics("SEMGET", arches=BOTH)
def semget(ctx: Context, sem_sel: int) -> Outcome:
    _check_width(ctx, "sem_sel", sem_sel, _SEM_MASK_BITS)
    state = ctx.copro.sync
    state.sem_value[_selected(sem_sel) & (state.sem_value > 0)] -= 1
    return Retire(SYNC.sync)


# ------------------------------------------------------------------------------ wait instructions


@semantics("SEMWAIT", arches=BOTH)
def semwait(ctx: Context, stall_res: int, sem_sel: int, wait_sem_cond: int) -> Outcome:
    _check_width(ctx, "sem_sel", sem_sel, _SEM_MASK_BITS)
    if wait_sem_cond == 0:
        # No semaphore condition: latched as a STALLWAIT on the default conditions (Blackhole C0..C3,
        # Wormhole C0..C6), the semaphore mask dropped.
        return _latch(ctx, Latch.STALLWAIT, stall_res, DEFAULT_CONDITIONS_BY_ARCH[ctx.copro.arch.name])
    return _latch(ctx, Latch.SEMWAIT, stall_res, wait_sem_cond, sems=sem_sel)


@semantics("STALLWAIT", arches=BOTH)
def stallwait(ctx: Context, stall_res: int, wait_res: int) -> Outcome:
    arch = ctx.copro.arch.name
    table = STALLWAIT_CONDITIONS_BY_ARCH[arch]
    _check_width(ctx, "wait_res", wait_res, len(table))
    conditions = wait_res or DEFAULT_CONDITIONS_BY_ARCH[arch]
    if conditions & _SRC_CONDITIONS_BY_ARCH[arch] and getattr(ctx.copro, "src_valid", None) is None:
        labels = [c.label for i, c in enumerate(table) if c.src_bank and conditions >> i & 1]
        raise ctx.error(
            Unimplemented, f"conditions {', '.join(labels)} need the SrcA/SrcB register files", wait_res
        )
    return _latch(ctx, Latch.STALLWAIT, stall_res, conditions)


@semantics("STREAMWAIT")
def streamwait(
    ctx: Context, stall_res: int, target_value: int, target_sel: int, wait_stream_sel: int
) -> Outcome:
    _check_width(ctx, "target_value", target_value, _STREAM_TARGET_BITS)
    _check_width(ctx, "wait_stream_sel", wait_stream_sel, _STREAM_SELECT_BITS)
    for owner, service in ((ctx.copro.config, "thread_field"), (ctx.copro.tile, "streams")):
        if getattr(owner, service, None) is None:
            raise ctx.error(Unimplemented, f"needs coprocessor service {service!r}, not modelled yet")
    _, _, high_field = _STREAM_CONDITIONS[target_sel]
    # The target's high bits are read now; the stream number when the condition is tested.
    high = int(ctx.copro.config.thread_field(high_field, ctx.thread))
    target = (high << _STREAM_TARGET_BITS) | target_value
    return _latch(
        ctx, Latch.STREAMWAIT, stall_res, 1 << target_sel, stream_select=wait_stream_sel, target=target
    )


# ------------------------------------------------------------------------------ mutexes


def _check_mutex(ctx: Context, mutex_index: int) -> None:
    valid = MUTEXES[ctx.copro.arch.name]
    if mutex_index not in valid:
        # Documented: an invalid index makes the thread wait forever. Raised at once instead.
        raise ctx.error(
            InvalidProgram,
            f"mutex {mutex_index} does not exist (valid: {', '.join(map(str, valid))}); "
            "the hardware would wait forever",
            mutex_index,
        )


@semantics("ATGETM", arches=BOTH)
def atgetm(ctx: Context, mutex_index: int) -> Outcome:
    _check_mutex(ctx, mutex_index)
    state = ctx.copro.sync
    owner = int(state.mutex_owner[mutex_index])
    if owner not in (NOBODY, ctx.thread):
        return Wait(mutex_held_text(mutex_index, owner))
    # Taking a mutex the thread already holds succeeds (at most a cycle or two later: not modelled).
    state.mutex_owner[mutex_index] = ctx.thread
    state.mutex_wanted[ctx.thread] = NOBODY
    return Retire(SYNC.sync)


@semantics("ATRELM", arches=BOTH)
def atrelm(ctx: Context, mutex_index: int) -> Outcome:
    _check_mutex(ctx, mutex_index)
    state, thread = ctx.copro.sync, ctx.thread
    if int(state.mutex_owner[mutex_index]) != thread:
        return Retire(SYNC.sync)  # documented: completes and changes nothing
    # Round-robin hand-over: with both other threads trying, thread + 1 gets it (ATRELM.md). A
    # single waiter is the only thread trying (the releaser is busy releasing), so it gets it too.
    threads = len(state.mutex_wanted)
    state.mutex_owner[mutex_index] = NOBODY
    for step in range(1, threads):
        other = (thread + step) % threads
        if int(state.mutex_wanted[other]) == mutex_index:
            state.mutex_owner[mutex_index] = other
            break
    return Retire(SYNC.sync)


# ------------------------------------------------------------------------------ RISC-V view


def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register.

    Only the TRISCs see the semaphores and Manual TTSync at arch.pcbuf_base (the tile adds their
    PCBuf word at offset 0: tensixsim.mmio.pcbufs). BRISC sees its side of the PCBufs there, NCRISC
    nothing.
    """
    thread = core.facts.pipe
    if thread is None:
        return {}
    base = copro.arch.pcbuf_base
    registers = {
        base + SEMAPHORE_ACCESS + 4 * i: Register(
            f"SEMAPHORE{i}", read=_semaphore_reader(copro, i), write=_semaphore_writer(copro, i)
        )
        for i in range(SEMAPHORES)
    }
    registers[base + COPROCESSOR_DONE_CHECK] = Register(
        "COPROCESSOR_DONE_CHECK", read=_done_check(copro, thread, "thread_idle"), write=_discard
    )
    registers[base + MOP_EXPANDER_DONE_CHECK] = Register(
        "MOP_EXPANDER_DONE_CHECK", read=_done_check(copro, thread, "mop_expander_idle"), write=_discard
    )
    return registers


def _semaphore_reader(copro: Coprocessor, index: int) -> ReadFn:
    def read(access: Access) -> int:
        # The core brought the coprocessor up to access.cycle first (a synchronising region).
        return int(copro.sync.sem_value[index])

    return read


def _semaphore_writer(copro: Coprocessor, index: int) -> WriteFn:
    def write(access: Access, value: int) -> None:
        values = copro.sync.sem_value
        if value & 1:  # like SEMGET
            if values[index] > 0:
                values[index] -= 1
        elif values[index] < SEM_LIMIT:  # like SEMPOST
            values[index] += 1
        copro.state_changed(access.cycle)  # a SEMWAIT may now be met

    return write


def _done_check(copro: Coprocessor, thread: int, service_name: str) -> ReadFn:
    register = "CoprocessorDoneCheck" if service_name == "thread_idle" else "MOPExpanderDoneCheck"

    def read(access: Access) -> int:
        service = getattr(copro, service_name, None)
        if service is None:
            raise Unimplemented(
                f"{register} needs coprocessor service {service_name!r}, not modelled yet",
                core=access.core.name,
                pc=access.core.fault_pc(),
                cycle=access.cycle,
            )
        overridden = getattr(copro, "pcbuf_overridden", None)
        if overridden is not None and overridden(thread):
            return 0  # PCBuf OverrideEn and OverrideBusy end the wait (TTSync.md)
        if not service(thread, access.cycle):
            reason = f"{register}: Tensix thread {thread} busy"
            # Everything issued and only the unit still busy: no later issue will signal the event,
            # so the read completes when the unit finishes (unless a new push makes it wait again).
            idle_at = getattr(copro, "thread_idle_at", None) if service_name == "thread_idle" else None
            until = idle_at(thread) if idle_at is not None else None
            if until is not None and until > access.cycle:
                raise Stall(reason, until=until)
            # The load waits in the memory subsystem until the coprocessor signals this event.
            raise Stall(reason, wait_key=(service_name, thread))
        return 0  # documented as undefined; firmware only waits for it

    return read


def _discard(access: Access, value: int) -> None:
    """Stores to the done checks are dropped (they only order earlier stores before the load)."""
