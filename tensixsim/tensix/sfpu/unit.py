"""The vector unit (SFPU): its state and data movement, and what the unit's other modules share
(flags: lane predication; integers: integer and bit instructions; floats: the FMA family, LUTs,
reciprocal; lanes: swaps and shuffles; convert: casts, stochastic rounding, the PRNG; macro:
SFPLOADMACRO; all in this package).

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 VectorUnit.md, LReg.md,
SFPLOAD.md, SFPSTORE.md, SFPLOADI.md, SFPMOV.md, SFPNOP.md and SFPCONFIG.md; Dst.md and WormholeB0
ZEROACC.md for undefined Dst rows; RWCs.md (ApplyPartialAddrMod, via adc.py).

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
pages whose models test the bit, so every instruction here with a VD does it except SFPCONFIG (whose
VD 12..14 writes LReg, as kernels rely on) and SFPNOP (no VD). What is not lane work (the RWC advance
and Sp of SFPLOAD / SFPSTORE) still happens. An instruction scheduled by SFPLOADMACRO reads the bit as
set (``Context.scheduled``).
The scheduling note of SFPCONFIG (the next instruction may see the old or the new
DISABLE_BACKDOOR_LOAD) is not modelled: it sees the new value.

VD 16 (LReg[16]) comes only from SFPLOADMACRO; the simple-unit models write it (``VD < 8 || VD == 16``)
and set no LaneFlags for it, and use ``Context.implicit_vb`` where the model assigns ``VB = VD``.

Blackhole encoding (the pages' BlackholeA0 diagrams; tt-llk's ckernel_ops.h agrees)
---------------------------------------------------------------------------------
- SFPLOAD / SFPSTORE: ``lreg_ind`` is VD, ``instr_mod0`` Mod0, ``sfpu_addr_mode`` the 3-bit AddrMod,
  ``dest_reg_addr`` bits 0..9 Imm10.
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
- Undefined Dst rows (ZEROACC): an SFPLOAD lane that reads one, or an SFPSTORE lane that writes one
  (an SFPSTORE writes at most 8 of a row's 16 columns, so always only some of them), is undefined
  behaviour (ZEROACC.md). A Dst32b datum is undefined if either of its storage rows is.
- SFPLOADI with an undocumented Mod0 reaches UndefinedBehaviour() only on enabled lanes, so it raises
  only if some lane is enabled (and VD < 8).
- SFPPUSHC / SFPPOPC: the model's UndefinedBehaviour() (pushing onto a full stack, mutating or popping
  an empty one) raises if any lane reaches it.
- The Dst access honours ``DEST_ACCESS_CFG_remap_addrs`` / ``swizzle_32b`` (regs.dst_mapping).

Timing
------
VectorUnit.md gives every instruction here an IPC of 1: each occupies the vector unit one cycle
(``Retire(SFPU.issue)``). Results are written at issue; latencies (1 cycle, SFPCONFIG up to 2) are
not modelled. SFPLOAD.md's scheduling rule (software must leave three instructions between a
matrix-unit write of Dst and an SFPLOAD of the same rows) is modelled as a stall: an SFPLOAD (and the
load of SFPLOADMACRO) whose lanes read a block the matrix unit wrote fewer than
``SFPU.matrix_write_gap + 1`` cycles before waits (``Wait(until=...)``) until it may read it
(``regs.RegFiles.matrix_ready``); the vector unit's own writes do not hold it. Dst.md says the block
an instruction writes cannot be read for four cycles: an SFPSTORE marks the 8x16 blocks it wrote
(``regs.RegFiles.written``), so matrix-unit and packer readers of them wait. The work SFPLOADMACRO
schedules runs at its documented cycles (sfpu/macro.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix import formats
from tensixsim.tensix.adc import apply_addr_mod
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import MATRIX, SFPU

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
            if len(_ENABLED) >= _MEMO_SIZE:
                _ENABLED.clear()
            _ENABLED[key] = enabled
        return enabled


def _lane_enabled(lane_config: np.ndarray, use_lane_flags: np.ndarray, lane_flags: np.ndarray) -> np.ndarray:
    """``IsLaneEnabled``: the row mask of LaneConfig, then the lane flags if they are in use."""
    row_masked = (lane_config[LANE & 7] >> (ROW_MASK_SHIFT + LANE // 8)) & 1
    return (row_masked == 0) & (~use_lane_flags | lane_flags)


# Answers that depend only on their (hashable) inputs, kept for reuse by the hot paths; a bound on
# their size keeps a program that cycles through many configurations from growing them without end.
_MEMO_SIZE = 4096
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


# ------------------------------------------------------------------------------ Dst access


def resolve_srcb(ctx: Context, mod0: int) -> int:
    if mod0 != FMT_SRCB:
        return mod0
    config = ctx.copro.config
    state = config.state_id(ctx.thread)
    if config.read_field("ALU_ACC_CTRL_SFPU_Fp32_enabled", state):
        return FMT_FP32
    if config.read_field("ALU_FORMAT_SPEC_REG_SrcB_override", state):
        fmt = config.read_field("ALU_FORMAT_SPEC_REG_SrcB_val", state)
    else:
        fmt = config.read_field("ALU_FORMAT_SPEC_REG1_SrcB", state)
    return FMT_BF16 if fmt in SRCB_AS_BF16 else FMT_FP16


def _dst_addr(ctx: Context, imm10: int, mod0: int, *, store: bool) -> tuple[int, int]:
    """(Addr, the new Sp) as SFPLOAD (``store`` False) or SFPSTORE compute them."""
    config, thread = ctx.copro.config, ctx.thread
    state = config.state_id(thread)
    addr = imm10 + config.thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread)
    dst_offset = (int(ctx.copro.adc.dst[thread]) + config.read_field("DEST_REGW_BASE_Base", state)) & 0x3FF
    sp = int(unit_state(ctx).sp[thread])
    incr = config.thread_field("SFPU_STACK_Incr", thread)
    sp_base = config.read_field("DEST_SP_BASE_Base", state)
    if mod0 == FMT_INT32_ALL:
        if not store and sp != 0:
            sp = (sp - incr) & 0x3FF
        sp_offset = (sp + sp_base) & 0x3FF
        addr += sp_offset + (dst_offset & 3)
        if store:
            sp = (sp + incr) & 0x3FF
    else:
        sp_offset = (sp + sp_base) & 0x3FF
        addr += dst_offset + (sp_offset & 3)
    return addr & 0x3FF, sp


def _lane_cells(addr: int, exchange: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each lane's Dst row and column: four rows from ``addr & ~3``, even or odd columns."""
    rows = ((addr & ~3) + LANE // 8) & 0x3FF
    cols = (LANE & 7) * 2 + (((addr & 2) != 0) | exchange)
    return rows, cols


class Cells(NamedTuple):
    """Where each lane of an SFPLOAD / SFPSTORE at one ``Addr`` goes in Dst (read-only arrays)."""

    rows: np.ndarray  # (32,) Dst16b / Dst32b row
    cols: np.ndarray  # (32,) column
    storage: np.ndarray  # (1, 32) Dst16b: the DstBits rows; (2, 32) Dst32b: those of the high, low halves
    reach: np.ndarray  # (32,) the lanes LaneConfig's BLOCK_SFPU_RD_FROM_DEST (load) or
    # BLOCK_DEST_WR_FROM_SFPU (store) does not keep away from Dst
    capture: np.ndarray  # (32,) the lanes whose LaneConfig has ENABLE_DEST_INDEX and
    # CAPTURE_DEFAULT_DEST_INDEX (SFPLOAD with VD < 4 writes their Dst index to LReg[VD + 4])


_CELLS: dict[tuple, Cells] = {}


def _cells(ctx: Context, lane_config: np.ndarray, addr: int, wide: bool, *, store: bool) -> Cells:
    """The lanes' Dst cells at ``addr`` under the configuration of ``ctx``'s thread: a function of
    LaneConfig, the address and the Dst mapping only, so remembered."""
    remap, swizzle = dst_mapping(ctx.copro, ctx.thread)
    key = (lane_config.tobytes(), lane_config.dtype.char, addr, wide, store, remap, swizzle)
    cells = _CELLS.get(key)
    if cells is not None:
        return cells
    regs = ctx.copro.regs
    exchange = (lane_config[LANE & 7] & (DEST_WR_COL_EXCHANGE if store else DEST_RD_COL_EXCHANGE)) != 0
    rows, cols = _lane_cells(addr, exchange)
    if wide:
        high = regs.dst32_rows(rows, remap=remap, swizzle=swizzle)
        storage = np.stack([high, high + 8])
    else:
        storage = np.stack([regs.dst16_rows(rows, remap=remap)])
    reach = (lane_config & (BLOCK_DEST_WR_FROM_SFPU if store else BLOCK_SFPU_RD_FROM_DEST)) == 0
    capture = ((lane_config & ENABLE_DEST_INDEX) != 0) & ((lane_config & CAPTURE_DEFAULT_DEST_INDEX) != 0)
    cells = Cells(rows, cols, storage, reach, capture)
    for array in cells:
        array.flags.writeable = False
    if len(_CELLS) >= _MEMO_SIZE:
        _CELLS.clear()
    _CELLS[key] = cells
    return cells


def _read_fp16(x: np.ndarray, inf: np.ndarray) -> np.ndarray:
    """SFPLOAD.md ``ReadFP16`` of Dst16b bits."""
    x = x.astype(np.uint32)
    sign, man, exp = x >> 15, (x >> 5) & 0x3FF, x & 0x1F
    as_inf = inf & (exp == 0x1F) & (man == 0x3FF)
    exp = np.where(as_inf, 255, np.where(exp != 0, exp + 112, 0))
    man = np.where(as_inf, 0, man)
    return (sign << 31) | (exp << 23) | (man << 13)


def _load_datum(mod0: int, raw: np.ndarray, old: np.ndarray, fp16_inf: np.ndarray) -> np.ndarray:
    """SFPLOAD's Datum from the raw Dst16b / Dst32b bits (``old``: the LReg lanes)."""
    r = raw.astype(np.uint32)
    if mod0 == FMT_FP16:
        return _read_fp16(r, fp16_inf)
    if mod0 == FMT_BF16:
        return formats.dst16_to_bf16(r.astype(np.uint16)).astype(np.uint32) << 16
    if mod0 in LOAD_WIDE:
        return formats.dst32_to_fp32(r)
    if mod0 == FMT_INT8:
        return ((r >> 15) << 31) | ((r >> 5) & 0xFF)
    if mod0 == FMT_INT8_COMP:
        return ((r >> 15) << 31) | ((r >> 5) & 0x3FF)
    if mod0 == FMT_LO16_ONLY:
        return (old & 0xFFFF0000) | r
    if mod0 == FMT_HI16_ONLY:
        return (r << 16) | (old & 0xFFFF)
    if mod0 == FMT_INT16:
        return ((r >> 15) << 31) | (r & 0x7FFF)
    if mod0 in (FMT_UINT16, FMT_LO16):
        return r
    if mod0 == FMT_HI16:
        return r << 16
    return np.zeros(LANES, np.uint32)  # FMT_ZERO


def _to_fp16(x: np.ndarray) -> np.ndarray:
    """SFPSTORE.md ``ToFP16`` (plain FP16 bits)."""
    sign = x >> 31
    exp = ((x >> 23) & 0xFF).astype(np.int64) - 112
    man = x & 0x7FFFFF
    under, over = exp <= 0, exp > 31
    exp = np.where(under, 0, np.where(over, 31, exp)).astype(np.uint32)
    man = np.where(under, 0, np.where(over, 0x7FFFFF, man)).astype(np.uint32)
    return (sign << 15) | (exp << 10) | (man >> 13)


def _flush(x: np.ndarray) -> np.ndarray:
    """Zero the mantissa of a zero-exponent FP32 (``ToFP32``, and ``ToBF16`` before truncating)."""
    return np.where((x & 0x7F800000) == 0, x & 0x80000000, x)


def _store_datum(mod0: int, x: np.ndarray) -> np.ndarray:
    """SFPSTORE's raw Dst16b / Dst32b bits for the LReg lanes ``x``."""
    x = x.astype(np.uint32)
    if mod0 == FMT_FP16:
        return formats.dst16_from_fp16(_to_fp16(x).astype(np.uint16)).astype(np.uint32)
    if mod0 == FMT_BF16:
        return formats.dst16_from_bf16((_flush(x) >> 16).astype(np.uint16)).astype(np.uint32)
    if mod0 == FMT_FP32:
        return formats.dst32_from_fp32(_flush(x))
    if mod0 in (FMT_INT32, FMT_INT32_ALL, FMT_INT32_SM):
        return formats.dst32_from_fp32(x)
    if mod0 in (FMT_INT8, FMT_INT8_COMP):
        fp16 = ((x >> 31) << 15) | (16 << 10) | (x & 0x3FF)
        return formats.dst16_from_fp16(fp16.astype(np.uint16)).astype(np.uint32)
    if mod0 in (FMT_LO16_ONLY, FMT_UINT16):
        return x & 0xFFFF
    if mod0 == FMT_HI16_ONLY:
        return x >> 16
    if mod0 == FMT_INT16:
        return ((x >> 31) << 15) | (x & 0x7FFF)
    if mod0 == FMT_LO16:
        return ((x << 16) | (x >> 16)) & 0xFFFFFFFF
    if mod0 == FMT_HI16:
        return x
    return np.zeros(LANES, np.uint32)  # FMT_ZERO


class DstAccess(NamedTuple):
    """How SFPLOAD, SFPSTORE and SFPLOADMACRO reach Dst on one chip: the pages' address computation,
    datum conversions and AddrMod (per-architecture data; Wormhole's is in sfpu/wormhole.py)."""

    # (ctx, Imm10, resolved Mod0, store=...) -> (Addr, the pipe's new Sp)
    address: Callable[..., tuple[int, int]]
    # (Mod0, raw Dst16b / Dst32b bits, the LReg lanes, ENABLE_FP16A_INF lanes) -> Datum
    load_datum: Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    # (Mod0, the LReg lanes) -> raw Dst16b / Dst32b bits
    store_datum: Callable[[int, np.ndarray], np.ndarray]
    # ApplyPartialAddrMod: (ctx, AddrMod, update_fidelity=False)
    apply_addr_mod: Callable[..., None]


BLACKHOLE_DST = DstAccess(_dst_addr, _load_datum, _store_datum, apply_addr_mod)
# By architecture name, for SFPLOADMACRO's scheduled store (sfpu/macro.py); sfpu/wormhole.py adds its own.
DST_ACCESS: dict[str, DstAccess] = {"blackhole": BLACKHOLE_DST}


# ------------------------------------------------------------------------------ data movement


def _after_matrix_write(ctx: Context, storage: np.ndarray, lanes: np.ndarray) -> int:
    """The first cycle the vector unit may read the DstBits rows ``storage`` (``Cells.storage``) of
    ``lanes`` after the matrix unit's last write of their blocks: SFPLOAD.md's three-instruction gap, as
    cycles."""
    regs = ctx.copro.regs
    # Only blocks the matrix unit wrote last count, those whose two ready cycles differ
    # (regs.RegFiles.dst_sfpu_ready): most of the time there are none.
    if not (regs.dst_ready != regs.dst_sfpu_ready).any():
        return 0
    ready = regs.matrix_ready(storage[:, lanes].ravel())  # write cycle + MATRIX.dst_write_hidden + 1
    return ready - MATRIX.dst_write_hidden + SFPU.matrix_write_gap if ready else 0


def _check_defined(ctx: Context, storage: np.ndarray, lanes: np.ndarray, message: str) -> None:
    """UndefinedBehavior if a lane of ``lanes`` has a datum in a DstBits row ZEROACC left undefined."""
    valid = ctx.copro.regs.dst_row_valid
    if not valid.all():  # most of the time every row is defined
        defined = np.logical_and.reduce(valid[storage])
        if np.any(lanes & ~defined):
            raise ctx.error(UndefinedBehavior, message)


@semantics("SFPLOAD")
def sfpload(ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int) -> Outcome:
    imm10 = ctx.documented("dest_reg_addr", dest_reg_addr, 10)
    plan = load_plan(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, imm10, BLACKHOLE_DST)
    if isinstance(plan, Wait):
        return plan
    plan[1]()
    return Retire(SFPU.issue)


def load_plan(
    ctx: Context, vd: int, instr_mod0: int, sfpu_addr_mode: int, imm10: int, access: DstAccess
) -> Wait | tuple[int, Callable[[], None]]:
    """SFPLOAD's functional model (SFPLOADMACRO's load too) on the chip ``access`` describes: raises or
    waits having changed nothing, else returns ``Addr`` and the function that makes the changes (it may
    still raise first, in ApplyPartialAddrMod)."""
    s, regs = unit_state(ctx), ctx.copro.regs
    backdoor = backdoor_lanes(ctx, s, vd)
    mod0 = resolve_srcb(ctx, instr_mod0)
    addr, sp = access.address(ctx, imm10, mod0, store=False)
    writes: list[tuple[int, np.ndarray, np.ndarray]] = []
    if vd < 8:
        config = s.lane_config
        cells = _cells(ctx, config, addr, mod0 in LOAD_WIDE, store=False)
        rows, cols, storage = cells.rows, cells.cols, cells.storage
        lanes = cells.reach if mod0 == FMT_INT32_ALL else cells.reach & s.lane_enabled()
        if mod0 == FMT_ZERO:
            raw = np.zeros(LANES, np.uint32)
        else:
            until = _after_matrix_write(ctx, storage, lanes)
            if until > ctx.cycle:
                return Wait(f"Dst rows the matrix unit wrote are readable from cycle {until}", until=until)
            _check_defined(ctx, storage, lanes, "reads a Dst row that ZEROACC left undefined")
            halves = regs.dst[storage, cols].astype(np.uint32)
            raw = (halves[0] << 16) | halves[1] if len(halves) == 2 else halves[0]
        fp16_inf = (config & ENABLE_FP16A_INF) != 0 if mod0 == FMT_FP16 else NO_LANES
        datum = access.load_datum(mod0, raw, s.lreg[vd], fp16_inf)
        writes.append((vd, datum, lanes))
        if vd < 4:
            capture = lanes & cells.capture
            if capture.any():  # (a write on no lane changes nothing)
                writes.append((vd + 4, (rows << 4) | cols, capture))

    def commit() -> None:
        access.apply_addr_mod(ctx, sfpu_addr_mode, update_fidelity=False)  # raises before changing anything
        s.sp[ctx.thread] = sp
        for reg, values, lanes in writes:
            write_lanes(s, reg, values, lanes)
        load_template(ctx, s, vd, backdoor)

    return addr, commit


@semantics("SFPSTORE")
def sfpstore(
    ctx: Context, lreg_ind: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int
) -> Outcome:
    return store(ctx, lreg_ind, instr_mod0, sfpu_addr_mode, dest_reg_addr, BLACKHOLE_DST)


def store(
    ctx: Context, vd: int, instr_mod0: int, sfpu_addr_mode: int, dest_reg_addr: int, access: DstAccess
) -> Outcome:
    """SFPSTORE's functional model on the chip ``access`` describes."""
    s = unit_state(ctx)
    imm10 = ctx.documented("dest_reg_addr", dest_reg_addr, 10)
    backdoor = backdoor_lanes(ctx, s, vd)
    mod0 = resolve_srcb(ctx, instr_mod0)
    addr, sp = access.address(ctx, imm10, mod0, store=True)
    write = store_plan(ctx, vd, mod0, addr, ALL_LANES if backdoor is NO_LANES else ~backdoor, access)
    access.apply_addr_mod(ctx, sfpu_addr_mode, update_fidelity=False)  # raises before changing anything
    s.sp[ctx.thread] = sp
    write()
    load_template(ctx, s, vd, backdoor)
    return Retire(SFPU.issue)


def store_plan(
    ctx: Context, vd: int, mod0: int, addr: int, allowed: np.ndarray, access: DstAccess
) -> Callable[[], None]:
    """SFPSTORE's lane work at ``Addr`` on the ``allowed`` lanes, Mod0 resolved (SFPLOADMACRO's
    scheduled SFPSTORE shares it): raises having changed nothing, else returns the write."""
    s, regs = unit_state(ctx), ctx.copro.regs
    wide = mod0 in STORE_WIDE
    cells = _cells(ctx, s.lane_config, addr, wide, store=True)
    lanes = allowed & cells.reach
    if mod0 != FMT_INT32_ALL:
        lanes = lanes & s.lane_enabled()
    _check_defined(ctx, cells.storage, lanes, "writes some columns of a Dst row that ZEROACC left undefined")
    datum = access.store_datum(mod0, s.lreg[vd])

    def write() -> None:
        rows, cols, values = cells.storage[:, lanes], cells.cols[lanes], datum[lanes]
        # One row of halves per storage row: [high, low] (Dst32b) or [the 16 bits] (Dst16b).
        halves = np.array((values >> 16, values & 0xFFFF)) if wide else values[np.newaxis]
        regs.dst[rows, cols] = halves.astype(np.uint16)
        if rows.size:
            regs.written(rows.ravel(), ctx.cycle, SFPU.dst_write_hidden, sfpu=True)

    return write


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
