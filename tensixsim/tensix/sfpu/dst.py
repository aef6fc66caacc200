"""The vector unit's way to and from Dst: SFPLOAD, SFPSTORE, the Dst address, cells and datum conversions.

Functional model: the jasondavies fork of tt-isa-documentation, BlackholeA0 SFPLOAD.md, SFPSTORE.md and
VectorUnit.md; Dst.md and WormholeB0 ZEROACC.md for undefined Dst rows; RWCs.md (ApplyPartialAddrMod,
via adc.py). The state (LRegs, LaneConfig, Sp), the Mod0 codes, the lane enables, the backdoor load and
the operand rule (set bits beyond an operand raise UndefinedBehavior) are sfpu/unit.py's (its
docstring). Wormhole's SFPLOAD / SFPSTORE (sfpu/wormhole.py) share the plans here through ``DstAccess``.

Blackhole encoding (the pages' BlackholeA0 diagrams; tt-llk's ckernel_ops.h agrees)
---------------------------------------------------------------------------------
- SFPLOAD / SFPSTORE: ``lreg_ind`` is VD, ``instr_mod0`` Mod0, ``sfpu_addr_mode`` the 3-bit AddrMod,
  ``dest_reg_addr`` bits 0..9 Imm10.

Readings where the pages are open
---------------------------------
- Undefined Dst rows (ZEROACC): an SFPLOAD lane that reads one, or an SFPSTORE lane that writes one
  (an SFPSTORE writes at most 8 of a row's 16 columns, so always only some of them), is undefined
  behaviour (ZEROACC.md). A Dst32b datum is undefined if either of its storage rows is.
- The Dst access honours ``DEST_ACCESS_CFG_remap_addrs`` / ``swizzle_32b`` (regs.dst_mapping).

Timing
------
Like every instruction of sfpu/unit.py, SFPLOAD and SFPSTORE occupy the vector unit one cycle
(VectorUnit.md: IPC 1, ``Retire(SFPU.issue)``) and write their results at issue. SFPLOAD.md's scheduling
rule (software must leave three instructions between a matrix-unit write of Dst and an SFPLOAD of the
same rows) is modelled as a stall: an SFPLOAD (and the load of SFPLOADMACRO) whose lanes read a block
the matrix unit wrote fewer than ``SFPU.matrix_write_gap + 1`` cycles before waits
(``Wait(until=...)``) until it may read it (``regs.RegFiles.matrix_ready``); the vector unit's own
writes do not hold it. Dst.md says the block an instruction writes cannot be read for four cycles: an
SFPSTORE marks the 8x16 blocks it wrote (``regs.RegFiles.written``), so matrix-unit and packer readers
of them wait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.tensix import formats
from tensixsim.tensix.adc import apply_addr_mod
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.sfpu.unit import (
    ALL_LANES,
    BLOCK_DEST_WR_FROM_SFPU,
    BLOCK_SFPU_RD_FROM_DEST,
    CAPTURE_DEFAULT_DEST_INDEX,
    DEST_RD_COL_EXCHANGE,
    DEST_WR_COL_EXCHANGE,
    ENABLE_DEST_INDEX,
    ENABLE_FP16A_INF,
    FMT_BF16,
    FMT_FP16,
    FMT_FP32,
    FMT_HI16,
    FMT_HI16_ONLY,
    FMT_INT8,
    FMT_INT8_COMP,
    FMT_INT16,
    FMT_INT32,
    FMT_INT32_ALL,
    FMT_INT32_SM,
    FMT_LO16,
    FMT_LO16_ONLY,
    FMT_SRCB,
    FMT_UINT16,
    FMT_ZERO,
    LANE,
    LANES,
    LOAD_WIDE,
    MEMO_SIZE,
    NO_LANES,
    SRCB_AS_BF16,
    STORE_WIDE,
    backdoor_lanes,
    load_template,
    unit_state,
    write_lanes,
)
from tensixsim.timing import MATRIX, SFPU

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
    if len(_CELLS) >= MEMO_SIZE:
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
