"""The vector unit (SFPU): its state, immediate loads, moves and configuration, and what the unit's
other modules share (dst: SFPLOAD, SFPSTORE and the way to and from Dst; flags: lane predication;
integers: integer and bit instructions; floats: the FMA family, LUTs, reciprocal; lanes: swaps and
shuffles; convert: casts, stochastic rounding, the PRNG; macro: SFPLOADMACRO; all in this package).

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 VectorUnit.md, LReg.md,
SFPLOADI.md, SFPMOV.md, SFPNOP.md and SFPCONFIG.md; SFPLOAD.md and SFPSTORE.md for the Mod0 codes
defined here (their model is sfpu/dst.py's).

State
-----
``SfpuState`` holds, as plain numpy data:

- ``lreg``: ``LReg[17][32]`` raw 32-bit lanes. 0..7 general; 8 (0.8373), 9 (zero) and 10 (1.0) are
  read-only constants; 11..14 written only by SFPCONFIG; 15 holds ``2 * lane``; 16 is reachable only
  through SFPLOADMACRO (a 4-bit VD never names it).
- ``lane_flags`` / ``use_lane_flags``: VectorUnit.md's ``LaneFlags`` and ``UseLaneFlagsForLaneEnable``.
- ``flag_stack`` / ``stack_depth``: each lane's ``FlagStack`` of (LaneFlags, UseLaneFlagsForLaneEnable)
  entries, eight deep (SFPPUSHC.md: pushing onto eight entries is undefined behaviour). Entries above
  the depth are kept False.
- ``lane_config``: ``LaneConfig[32]`` (18 bits each; SFPCONFIG.md's table).
- ``sp``: ``RWCs[thread].Sp`` (10 bits), which SFPLOAD / SFPSTORE read and their ``MOD0_FMT_INT32_ALL``
  mode steps by ``ThreadConfig.SFPU_STACK_Incr``. No page documents its width or another instruction
  that changes it; the emulator changes it nowhere else.
- ``prng``: VectorUnit.md's PRNG ``State[32]``; its advance rule, seeding and reset value are in
  sfpu/convert.py (SFPMOV ``FROM_SPECIAL`` with VC 9 reads and advances it).
- ``hazard`` / ``shfl_vc`` (Wormhole only): the rule an unstalled instruction leaves for the next cycle
  (sfpu/hazards.py) and the LReg[VC] SFPSHFT2's SUBVEC_SHFLROR1 modes last read, which Wormhole's
  SUBVEC_SHFLSHR1 bug reads (sfpu/wormhole.py; -1: none since reset).
- ``macro_template`` / ``macro_sequence`` / ``macro_misc``: ``LoadMacroConfig[32]`` (SFPLOADMACRO.md),
  written by SFPCONFIG with VD 0..8 and by the backdoor load, read by SFPMOV ``FROM_SPECIAL`` with
  VC 0..8 and by SFPLOADMACRO; ``macro_pending`` / ``macro_clock``: the instructions SFPLOADMACRO
  scheduled and the scheduler's clock (layout in sfpu/macro.py).

Reset values: the pages give those of LReg[8..10] and LReg[15], of the lane flags (false) and of
``LaneConfig.DISABLE_BACKDOOR_LOAD`` (false, "the default"). The others are undocumented and start
as zero (LReg[0..7], LReg[11..14], the rest of LaneConfig, Sp, LoadMacroConfig).

The "backdoor load" (SFPCONFIG.md's LaneConfig table): an instruction with VD >= 12 on a lane whose
``LaneConfig.DISABLE_BACKDOOR_LOAD`` is clear writes its own bits to
``LoadMacroConfig.InstructionTemplate[VD - 12]`` of that lane instead of doing its lane work there
(``backdoor_lanes`` / ``load_template``). The table says "instructions with VD >= 12", wider than the
pages whose models test the bit, so every vector-unit instruction with a VD does it except SFPCONFIG
(whose VD 12..14 writes LReg, as kernels rely on) and SFPNOP (no VD). What is not lane work (the RWC
advance and Sp of SFPLOAD / SFPSTORE) still happens. An instruction scheduled by SFPLOADMACRO reads the bit as
set (``Context.scheduled``).
The scheduling note of SFPCONFIG (the next instruction may see the old or the new
DISABLE_BACKDOOR_LOAD) is not modelled: it sees the new value.

VD 16 (LReg[16]) comes only from SFPLOADMACRO; the simple-unit models write it (``VD < 8 || VD == 16``)
and set no LaneFlags for it, and use ``Context.implicit_vb`` where the model assigns ``VB = VD``.

Blackhole encoding (the pages' BlackholeA0 diagrams; tt-llk's ckernel_ops.h agrees)
---------------------------------------------------------------------------------
- SFPLOADI: ``lreg_ind`` VD, ``instr_mod0`` Mod0, ``imm16`` Imm16.
- Simple-unit instructions: ``lreg_dest`` VD, ``lreg_c`` VC, ``instr_mod1`` Mod1 and ``imm12_math``
  Imm12 (SFPIADD, SFPSHFT: signed), Imm8 (SFPSETEXP: bits 0..7), Imm1 (SFPSETCC, SFPSETSGN: bit 0),
  Imm2 (SFPENCC: bits 0..1) or VB (SFPAND, SFPOR: bits 0..3).
- SFPCONFIG: ``imm16_math`` Imm16, ``config_dest`` VD, ``instr_mod1`` Mod1.

Where a page's syntax fixes an operand at 0 (SFPXOR's and SFPNOT's Imm12 and Mod1, SFPENCC's VC, ...)
or an operand is narrower than its slot, set bits beyond it raise UndefinedBehavior (the rule of
adc.py and regs.py), before anything changes. Mod1 bits a functional model never tests are ignored,
as the model ignores them.

Readings where the pages are open
---------------------------------
- SFPLOADI with an undocumented Mod0 reaches UndefinedBehaviour() only on enabled lanes, so it raises
  only if some lane is enabled (and VD < 8).
- SFPPUSHC / SFPPOPC: the model's UndefinedBehaviour() (pushing onto a full stack, mutating or popping
  an empty one) raises if any lane reaches it.

Timing
------
VectorUnit.md gives every instruction here an IPC of 1: each occupies the vector unit one cycle
(``Retire(SFPU.issue)``). Results are written at issue; latencies (1 cycle, SFPCONFIG up to 2) are
not modelled. SFPLOAD's stall after a matrix-unit write of Dst and SFPSTORE's marking of the blocks it
wrote are sfpu/dst.py's. The work SFPLOADMACRO schedules runs at its documented cycles (sfpu/macro.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import SFPU

LANES = 32
LREGS = 17
STACK_DEPTH = 8
LANE = np.arange(LANES)
# SFPLOADMACRO's scheduler state: slots of scheduled instructions and clock words (sfpu/macro.py).
MACRO_SLOTS, MACRO_COLUMNS, MACRO_CLOCK = 32, 16, 6
# macro_clock at reset, in sfpu/macro.py's column order (EXECUTED, TICKED, SWAP_NEXT, NEXT_SEQ, UNITS_AT,
# UNITS_MASK): no scheduled SFPSWAP and no scheduled sub-unit work has a cycle yet (-1), so nothing
# issued at cycle 0 collides with them.
MACRO_CLOCK_RESET = (0, 0, -1, 0, -1, 0)
# SfpuState.hazard at reset (sfpu/hazards.py's layout): no rule for any cycle.
HAZARD_WORDS, HAZARD_RESET = 4, (-1, 0, 0, 0)

# LaneConfig bits (SFPCONFIG.md).
ENABLE_FP16A_INF = 1 << 0
DISABLE_BACKDOOR_LOAD = 1 << 1
ENABLE_DEST_INDEX = 1 << 2
CAPTURE_DEFAULT_DEST_INDEX = 1 << 3
BLOCK_DEST_WR_FROM_SFPU = 1 << 4
BLOCK_SFPU_RD_FROM_DEST = 1 << 5
DEST_RD_COL_EXCHANGE = 1 << 6
DEST_WR_COL_EXCHANGE = 1 << 7
ROW_MASK_SHIFT = 12
LANE_CONFIG_MASK = (1 << 18) - 1

# SFPLOAD / SFPSTORE Mod0 (the pages' supporting definitions).
(
    FMT_SRCB,
    FMT_FP16,
    FMT_BF16,
    FMT_FP32,
    FMT_INT32,
    FMT_INT8,
    FMT_UINT16,
    FMT_HI16,
    FMT_INT16,
    FMT_LO16,
    FMT_INT32_ALL,
    FMT_ZERO,
    FMT_INT32_SM,
    FMT_INT8_COMP,
    FMT_LO16_ONLY,
    FMT_HI16_ONLY,
) = range(16)
LOAD_WIDE = frozenset({FMT_FP32, FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM})
STORE_WIDE = LOAD_WIDE | {FMT_LO16, FMT_HI16}

# Data format codes in the SrcB format fields, and those SFPLOAD / SFPSTORE's MOD0_FMT_SRCB treats as BF16.
_FP32, _TF32, _BF16, _BFP8, _BFP4, _INT32, _INT16, _BFP2 = 0, 4, 5, 6, 7, 8, 9, 15
SRCB_AS_BF16 = frozenset({_FP32, _TF32, _BF16, _BFP8, _BFP4, _BFP2, _INT32, _INT16})


def _f32_bits(value: float) -> int:
    return int(np.float32(value).view(np.uint32))


# SFPCONFIG's MOD1_IMM16_IS_VALUE values of LReg[11..14].
CONFIG_DEFAULTS = {
    11: _f32_bits(-1.0),
    12: _f32_bits(1 / 65536),
    13: _f32_bits(-0.67487759),
    14: _f32_bits(-0.34484843),
}


@dataclass
class SfpuState(SharedArrays):
    """The vector unit's architectural state (module docstring)."""

    lreg: np.ndarray  # (17, 32) uint32
    lane_flags: np.ndarray  # (32,) bool
    use_lane_flags: np.ndarray  # (32,) bool
    flag_stack: np.ndarray  # (32, 8, 2) bool: [lane][entry][LaneFlags, UseLaneFlagsForLaneEnable]
    stack_depth: np.ndarray  # (32,) uint8
    lane_config: np.ndarray  # (32,) uint32, 18 bits
    sp: np.ndarray  # (pipes,) uint32: RWCs[thread].Sp, 10 bits
    prng: np.ndarray  # (32,) uint32: VectorUnit.md's per-lane PRNG State (sfpu/convert.py)
    # The MAD sub-unit's result in flight (sfpu/floats.py): the cycle it is ready, the LRegs the
    # hardware's stalling logic thinks it writes and those it writes.
    mad_ready: np.ndarray  # (1,) int64
    mad_seen: np.ndarray  # (17,) bool
    mad_wrote: np.ndarray  # (17,) bool
    # The cycle from which an SFPNOP can issue (sfpu/lanes.py nop_from: the cycle after an SFPSWAP or a
    # lane shuffle, while the unit holds everything else), and the unit's clock that holds for.
    nop_from: np.ndarray  # (2,) int64
    macro_template: np.ndarray  # (32, 4) uint32: LoadMacroConfig[lane].InstructionTemplate
    macro_sequence: np.ndarray  # (32, 4) uint32: LoadMacroConfig[lane].Sequence
    macro_misc: np.ndarray  # (32,) uint32: LoadMacroConfig[lane].Misc, 12 bits
    macro_pending: np.ndarray  # (MACRO_SLOTS, MACRO_COLUMNS) int64: scheduled instructions
    macro_clock: np.ndarray  # (MACRO_CLOCK,) int64
    # Wormhole only (sfpu/hazards.py, sfpu/wormhole.py): the rule an instruction left for the one issued
    # on the next cycle, and the LReg[VC] the last SFPSHFT2 SHFLROR1 mode saw (-1: none since reset).
    hazard: np.ndarray  # (HAZARD_WORDS,) int64
    shfl_vc: np.ndarray  # (32,) int64

    @classmethod
    def new(cls, arch: Arch) -> SfpuState:
        lreg = np.zeros((LREGS, LANES), np.uint32)
        lreg[8] = _f32_bits(0.8373)
        lreg[10] = _f32_bits(1.0)
        lreg[15] = 2 * LANE
        return cls(
            lreg=lreg,
            lane_flags=np.zeros(LANES, bool),
            use_lane_flags=np.zeros(LANES, bool),
            flag_stack=np.zeros((LANES, STACK_DEPTH, 2), bool),
            stack_depth=np.zeros(LANES, np.uint8),
            lane_config=np.zeros(LANES, np.uint32),
            sp=np.zeros(arch.pipe_count, np.uint32),
            prng=np.zeros(LANES, np.uint32),
            mad_ready=np.zeros(1, np.int64),
            mad_seen=np.zeros(LREGS, bool),
            mad_wrote=np.zeros(LREGS, bool),
            nop_from=np.zeros(2, np.int64),
            macro_template=np.zeros((LANES, 4), np.uint32),
            macro_sequence=np.zeros((LANES, 4), np.uint32),
            macro_misc=np.zeros(LANES, np.uint32),
            macro_pending=np.zeros((MACRO_SLOTS, MACRO_COLUMNS), np.int64),
            macro_clock=np.array(MACRO_CLOCK_RESET, np.int64),
            hazard=np.array(HAZARD_RESET, np.int64),
            shfl_vc=np.full(LANES, -1, np.int64),
        )

    def copy(self) -> SfpuState:
        return SfpuState(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def equals(self, other: SfpuState) -> bool:
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def lane_enabled(self) -> np.ndarray:
        """VectorUnit.md ``IsLaneEnabled`` for every lane (read-only: it may be shared)."""
        config, use, flags = self.lane_config, self.use_lane_flags, self.lane_flags
        # Every vector-unit instruction asks, and the inputs rarely change: remember the answer by their
        # contents (so in-place changes of the arrays are seen too).
        key = (config.tobytes(), use.tobytes(), flags.tobytes(), config.dtype.char, use.dtype.char)
        enabled = _ENABLED.get(key)
        if enabled is None:
            enabled = _lane_enabled(config, use, flags)
            enabled.flags.writeable = False
            if len(_ENABLED) >= MEMO_SIZE:
                _ENABLED.clear()
            _ENABLED[key] = enabled
        return enabled


def _lane_enabled(lane_config: np.ndarray, use_lane_flags: np.ndarray, lane_flags: np.ndarray) -> np.ndarray:
    """``IsLaneEnabled``: the row mask of LaneConfig, then the lane flags if they are in use."""
    row_masked = (lane_config[LANE & 7] >> (ROW_MASK_SHIFT + LANE // 8)) & 1
    return (row_masked == 0) & (~use_lane_flags | lane_flags)


# Answers that depend only on their (hashable) inputs, kept for reuse by the hot paths; a bound on
# their size keeps a program that cycles through many configurations from growing them without end.
MEMO_SIZE = 4096
_ENABLED: dict[tuple, np.ndarray] = {}


# ------------------------------------------------------------------------------ helpers


def unit_state(ctx: Context) -> SfpuState:
    return ctx.copro.sfpu


NO_LANES, ALL_LANES = np.zeros(LANES, bool), np.ones(LANES, bool)
NO_LANES.flags.writeable = ALL_LANES.flags.writeable = False


def backdoor_lanes(ctx: Context, s: SfpuState, vd: int) -> np.ndarray:
    """The lanes on which an instruction with this VD is a backdoor load (module docstring); read-only."""
    if vd < 12 or ctx.scheduled:
        return NO_LANES
    return (s.lane_config & DISABLE_BACKDOOR_LOAD) == 0


def load_template(ctx: Context, s: SfpuState, vd: int, lanes: np.ndarray) -> None:
    """The backdoor load: the instruction's own bits to ``InstructionTemplate[VD - 12]`` of ``lanes``."""
    if lanes is not NO_LANES and np.any(lanes):
        s.macro_template[lanes, vd - 12] = ctx.word


def signed12(value: int) -> int:
    return value - (1 << 12) if value & 0x800 else value


def as_int32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.uint32).view(np.int32)


def write_lanes(s: SfpuState, vd: int, values: np.ndarray, lanes: np.ndarray) -> None:
    s.lreg[vd] = np.where(lanes, np.asarray(values, np.uint32), s.lreg[vd])


def write_with_flags(
    s: SfpuState, vd: int, result: np.ndarray, lanes: np.ndarray, flags: np.ndarray, *, invert: bool
) -> None:
    """Write ``result`` to LReg ``vd`` in the enabled ``lanes`` and set their LaneFlags to ``flags``
    (complemented if ``invert``), the tail shared by the flag-setting integer instructions."""
    write_lanes(s, vd, result, lanes)
    if vd < 8:  # LReg[16] (SFPLOADMACRO) leaves the flags alone
        s.lane_flags = np.where(lanes, ~flags if invert else flags, s.lane_flags)


_LOADI_MODES = (0, 1, 2, 4, 8, 10)
# SFPLOADI, SFPMOV, SFPNOP and SFPCONFIG: Wormhole's pages give the same encoding, functional model and
# LaneConfig bits, so they are registered for both chips; Wormhole's SFPLOAD / SFPSTORE are in
# sfpu/wormhole.py (their encoding and conversions differ).


@semantics("SFPLOADI", arches=("blackhole", "wormhole"))
def sfploadi(ctx: Context, lreg_ind: int, instr_mod0: int, imm16: int) -> Outcome:
    s, vd, mod0 = unit_state(ctx), lreg_ind, instr_mod0
    if vd >= 8:
        load_template(ctx, s, vd, backdoor_lanes(ctx, s, vd))
        return Retire(SFPU.issue)
    lanes = s.lane_enabled()
    if mod0 not in _LOADI_MODES:
        if np.any(lanes):
            raise ctx.error(UndefinedBehavior, f"Mod0={mod0} is not a documented SFPLOADI mode", mod0)
        return Retire(SFPU.issue)
    old = s.lreg[vd]
    if mod0 == 0:
        value = np.uint32(imm16 << 16)
    elif mod0 == 1:
        sign, exp, man = imm16 >> 15, (imm16 >> 10) & 0x1F, imm16 & 0x3FF
        value = np.uint32((sign << 31) | ((exp + 112) << 23) | (man << 13))
    elif mod0 == 2:
        value = np.uint32(imm16)
    elif mod0 == 4:
        value = np.uint32((imm16 - 0x10000 if imm16 & 0x8000 else imm16) & 0xFFFFFFFF)
    elif mod0 == 8:
        value = (np.uint32(imm16) << 16) | (old & 0xFFFF)
    else:
        value = (old & 0xFFFF0000) | np.uint32(imm16)
    write_lanes(s, vd, np.broadcast_to(value, (LANES,)), lanes)
    return Retire(SFPU.issue)


# SFPMOV Mod1
MOV_NEGATE, MOV_ALL_LANES_ENABLED, MOV_FROM_SPECIAL = 1, 2, 8


@semantics("SFPMOV", arches=("blackhole", "wormhole"))  # Wormhole's SFPMOV.md: the same
def sfpmov(ctx: Context, imm12_math: int, lreg_c: int, lreg_dest: int, instr_mod1: int) -> Outcome:
    s, vc, vd, mod1 = unit_state(ctx), lreg_c, lreg_dest, instr_mod1
    ctx.documented("imm12_math", imm12_math, 0)
    backdoor = backdoor_lanes(ctx, s, vd)
    active = ~backdoor & (s.lane_enabled() | (mod1 == MOV_ALL_LANES_ENABLED))
    if mod1 & MOV_FROM_SPECIAL:
        if vc <= 3:
            x = s.macro_template[:, vc].copy()
        elif vc <= 7:
            x = s.macro_sequence[:, vc - 4].copy()
        elif vc == 8:
            x = s.macro_misc.copy()
        elif vc == 9:
            from tensixsim.tensix.sfpu.convert import advance_prng  # that module imports this one

            # AdvancePRNG() runs on every enabled lane, whether or not VD is written.
            x = advance_prng(s, active)
        else:
            x = s.lane_config.copy() if vc == 15 else np.zeros(LANES, np.uint32)
    else:
        x = s.lreg[vc].copy()
        if mod1 & MOV_NEGATE:
            x ^= np.uint32(0x80000000)
    if vd < 8 or vd == 16:
        write_lanes(s, vd, x, active)
    load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.issue)


@semantics("SFPNOP", arches=("blackhole", "wormhole"))
def sfpnop(ctx: Context) -> Outcome:
    return Retire(SFPU.issue)


# SFPCONFIG Mod1
CFG_IMM16_IS_VALUE, CFG_OR, CFG_AND, CFG_XOR, CFG_IMM16_IS_LANE_MASK = 1, 2, 4, 6, 8


@semantics("SFPCONFIG", arches=("blackhole", "wormhole"))
def sfpconfig(ctx: Context, imm16_math: int, config_dest: int, instr_mod1: int) -> Outcome:
    s, vd, mod1, imm16 = unit_state(ctx), config_dest, instr_mod1, imm16_math
    lanes = np.ones(LANES, bool)
    if mod1 & CFG_IMM16_IS_LANE_MASK:
        lanes &= ((imm16 >> ((LANE & 7) * 2)) & 1) != 0
    col = LANE & 7
    lanes &= ~s.use_lane_flags[col] | s.lane_flags[col]
    source = s.lreg[0][col]
    if vd <= 3:  # InstructionTemplate: always from LReg[0]
        s.macro_template[lanes, vd] = source[lanes]
        return Retire(SFPU.issue)
    if vd <= 7:
        value = np.full(LANES, imm16, np.uint32) if mod1 & CFG_IMM16_IS_VALUE else source
        s.macro_sequence[lanes, vd - 4] = value[lanes]
        return Retire(SFPU.issue)
    if vd == 8:  # Misc: a uint12_t Value
        original = s.macro_misc
        value = (np.full(LANES, imm16, np.uint32) if mod1 & CFG_IMM16_IS_VALUE else source) & np.uint32(0xFFF)
        new = {0: value, CFG_OR: original | value, CFG_AND: original & value, CFG_XOR: original ^ value}
        s.macro_misc = np.where(lanes, new[mod1 & 6], original).astype(np.uint32)
        return Retire(SFPU.issue)
    if vd in (9, 10) or vd > 15:  # VD 16 (from SFPLOADMACRO) matches no case of the model
        return Retire(SFPU.issue)
    if vd <= 14:
        value = np.full(LANES, CONFIG_DEFAULTS[vd], np.uint32) if mod1 & CFG_IMM16_IS_VALUE else source
        write_lanes(s, vd, value, lanes)
        return Retire(SFPU.issue)
    original = s.lane_config
    value = np.full(LANES, imm16, np.uint32) if mod1 & CFG_IMM16_IS_VALUE else source & LANE_CONFIG_MASK
    op = mod1 & 6
    new = {0: value, CFG_OR: original | value, CFG_AND: original & value, CFG_XOR: original ^ value}[op]
    if mod1 & CFG_IMM16_IS_VALUE:
        new = new | (original & ~np.uint32(0xFFFF) & LANE_CONFIG_MASK)
    s.lane_config = np.where(lanes, new, original).astype(np.uint32)
    return Retire(SFPU.issue)


# ------------------------------------------------------------------------------ shared by the unit's modules


def simple_operands(ctx: Context, vd: int) -> tuple[SfpuState, np.ndarray] | None:
    """The state and enabled lanes of a simple-unit instruction that writes LReg[VD] (None: VD 8..15,
    which the model leaves untouched, after the backdoor load of VD 12..15)."""
    s = unit_state(ctx)
    if vd >= 8 and vd != 16:
        load_template(ctx, s, vd, backdoor_lanes(ctx, s, vd))
        return None
    return s, s.lane_enabled()
