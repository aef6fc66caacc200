"""Driving the coprocessor with raw Tensix instructions from Python, with no RISC-V program.

For property tests, benchmarks and experiments: put words straight into a pipe's input queue (they go
through the MOP and replay expanders, the wait gate and the units like pushed words), load tiles into
SrcA / SrcB, read Dst back, and build common instruction sequences such as the 32x32x32 tile matmul.

    tile = Tile("blackhole")
    configure_matmul(tile.coprocessor, fp32_dest=True)
    load_src_tile(tile.coprocessor, SRCA, y_bf16); load_src_tile(tile.coprocessor, SRCB, x_bf16)
    run_words(tile, MATH_THREAD, matmul_tile_words(tile.coprocessor, phases=4))
    c = dst_tile_fp32(tile.coprocessor)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from tensixsim.tensix import formats
from tensixsim.tensix.coprocessor import Coprocessor
from tensixsim.tensix.formats import BF16
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.matrix.unit import read_src
from tensixsim.tensix.regs import FACE_ROWS, SRCA, SRCB, SrcClient
from tensixsim.tile import Tile

MATH_THREAD = 1
NEVER = 1 << 62

__all__ = [
    "MATH_THREAD",
    "MATMUL_ADDR_MODS",
    "SRCA",
    "SRCB",
    "configure_matmul",
    "dst_tile_fp32",
    "dst_tile_int32",
    "load_src_tile",
    "matmul_tile_words",
    "run_words",
    "set_addr_mod",
    "src_tile_fp32",
]


def run_words(tile: Tile, thread: int, words: Iterable[int], *, cycle: int | None = None) -> int:
    """Enter ``words`` into ``thread``'s input queue at ``cycle`` (default: where the coprocessor is)
    and run the coprocessor until every pipe is idle or blocked. Returns the cycle after the last
    instruction's unit is free."""
    if not 0 <= thread < len(tile.queues):
        raise IndexError(f"no thread {thread}; threads: {', '.join(str(q.pipe) for q in tile.queues)}")
    engine = tile.backend
    start = engine.cycle if cycle is None else cycle
    queue = tile.queues[thread]
    queue.entries.extend(PushedInstruction(word, f"trisc{thread}", 0, start, False) for word in words)
    engine.advance_to(NEVER)
    return max(pipe.done_cycle for pipe in engine.pipes)


def set_addr_mod(copro: Coprocessor, thread: int, slot: int, **fields: int) -> None:
    """Set ADDR_MOD slot ``slot`` of ``thread``: keyword names are the config field suffixes (``SrcAIncr``,
    ``SrcACR``, ``SrcAClear``, the same for SrcB, ``DestIncr``, ``DestCR``, ``DestClear``, ``DestCToCR``,
    ``FidelityIncr``, ``FidelityClear``, ``BiasIncr``, ``BiasClear``); unnamed fields become zero."""
    ab = ("SrcAIncr", "SrcACR", "SrcAClear", "SrcBIncr", "SrcBCR", "SrcBClear")
    dst = ("DestIncr", "DestCR", "DestClear", "DestCToCR", "FidelityIncr", "FidelityClear")
    bias = ("BiasIncr", "BiasClear")
    unknown = set(fields) - set(ab) - set(dst) - set(bias)
    if unknown:
        raise ValueError(f"unknown ADDR_MOD fields {sorted(unknown)}")
    for kind, names in (("AB", ab), ("DST", dst), ("BIAS", bias)):
        for name in names:
            copro.config.write_thread_field(f"ADDR_MOD_{kind}_SEC{slot}_{name}", thread, fields.get(name, 0))


def load_src_tile(copro: Coprocessor, file: int, tile_bf16: np.ndarray, *, bank: int | None = None) -> None:
    """Write a (32, 32) BF16 tile (uint16 bits) into SrcA / SrcB as four faces of 16 rows and hand the
    bank to the matrix unit (as an unpacker's data-valid would)."""
    regs = copro.regs
    bank = int(regs.matrix_bank[file]) if bank is None else bank
    tile_bf16 = np.asarray(tile_bf16, np.uint16).reshape(32, 32)
    faces = [tile_bf16[r : r + 16, c : c + 16] for r in (0, 16) for c in (0, 16)]
    for face, data in enumerate(faces):
        regs.src(file)[bank, face * FACE_ROWS : (face + 1) * FACE_ROWS] = formats.src_from_bf16(data)
    regs.src_client[file, bank] = SrcClient.MATRIX_UNIT


def dst_tile_fp32(copro: Coprocessor, tile: int = 0) -> np.ndarray:
    """Dst tile ``tile`` as (32, 32) fp32 values: Dst32b if ALU_ACC_CTRL_Fp32_enabled, else Dst16b BF16."""
    regs = copro.regs
    if copro.config.field_for_thread("ALU_ACC_CTRL_Fp32_enabled", MATH_THREAD):
        bits = formats.dst32_to_fp32(regs.read_tile32(tile))
    else:
        bits = formats.bf16_to_fp32(formats.dst16_to_bf16(regs.read_tile16(tile)))
    return bits.astype(np.uint32).view(np.float32)


def dst_tile_int32(copro: Coprocessor, tile: int = 0) -> np.ndarray:
    """Dst32b tile ``tile`` as (32, 32) int64 values (Integer "32", sign-magnitude)."""
    return formats.int32_to_int(formats.dst32_to_fp32(copro.regs.read_tile32(tile)))


def src_tile_fp32(copro: Coprocessor, file: int, *, bank: int | None = None, style: int = BF16) -> np.ndarray:
    """Rows 0..63 of a SrcA / SrcB bank (default: the matrix unit's) as a (32, 32) tile of fp32 values,
    faces in 16-row blocks, read in ``style`` (BF16, TF32 or FP16 format code) as the matrix unit
    reads them."""
    regs = copro.regs
    bank = int(regs.matrix_bank[file]) if bank is None else bank
    rows = regs.src(file)[bank]
    faces = [read_src(rows[f * FACE_ROWS : (f + 1) * FACE_ROWS], style) for f in range(4)]
    return np.block([[faces[0], faces[1]], [faces[2], faces[3]]])


# ------------------------------------------------------------------------------ the tile matmul
# Dst[32x32] += SrcB[32x32] @ SrcA[32x32] with faces in 16-row blocks (SrcB / Dst face f at rows
# 16f.., SrcA likewise). One MVMUL is an 8-row half of an output face times one SrcA face; sixteen
# cover the tile: for inner half t (SrcA faces 2t, 2t+1; SrcB faces t, t+2) and each output face.
# The RWCs walk it through the ADDR_MOD slots; the fidelity loop is the outer loop, so every Dst
# block is revisited eight instructions later and nothing stalls.
_NEXT_ROWS = {"SrcBIncr": 8, "DestIncr": 8}  # next 8 rows of the SrcB face and of Dst
_NEXT_A_FACE = {"SrcAIncr": 16, "SrcBCR": 1, "DestIncr": 8}  # next SrcA face, SrcB back to its face start
_LOWER_B = {"SrcACR": 1, "SrcBIncr": 32, "SrcBCR": 1, "DestIncr": 8}  # lower SrcB faces, first SrcA face
_SECOND_HALF = {"SrcAIncr": 32, "SrcACR": 1, "SrcBIncr": 48, "SrcBCR": 1, "DestClear": 1}
_NEXT_PHASE = {"SrcAClear": 1, "SrcBClear": 1, "DestClear": 1, "FidelityIncr": 1}
MATMUL_ADDR_MODS = {  # Blackhole: a three-bit AddrMod names the slot
    0: _NEXT_ROWS,
    1: _NEXT_A_FACE,
    2: _LOWER_B,
    4: _SECOND_HALF,
    5: _NEXT_PHASE,
    6: {"SrcAClear": 1, "SrcBClear": 1, "DestClear": 1, "FidelityClear": 1},  # the tile is done
}
_MATMUL_SLOTS = (0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0)  # then the last one with slot 5


@dataclass(frozen=True)
class MatmulPlan:
    """One chip's ADDR_MOD slots and MVMUL AddrMod operands for the tile matmul."""

    addr_mods: dict[int, dict[str, int]]
    replay: tuple[int, ...]  # the fifteen recorded MVMULs
    phase: int  # the sixteenth, per fidelity phase
    last: int  # the sixteenth of the last phase
    # Words after the MOP (Wormhole: a SETRWC puts the fidelity phase back to 0).
    tail: tuple[tuple[str, dict[str, int]], ...] = field(default=())


# Wormhole's two AddrMod bits name slots 0..3, or 4..7 while the RWC's ExtraAddrModBit is set
# (RWCs.md): the second inner-half step (slot 3) sets the bit, the second half uses copies of slots
# 0..2 in 4..6, and slot 7 steps the phase and clears the bit. No slot is left for "the tile is
# done": the last MVMUL steps the phase too and a SETRWC clears it.
MATMUL_PLANS = {
    "blackhole": MatmulPlan(MATMUL_ADDR_MODS, _MATMUL_SLOTS, 5, 6),
    "wormhole": MatmulPlan(
        {
            0: _NEXT_ROWS,
            1: _NEXT_A_FACE,
            2: _LOWER_B,
            3: {**_SECOND_HALF, "BiasIncr": 1},
            4: _NEXT_ROWS,
            5: _NEXT_A_FACE,
            6: _LOWER_B,
            7: {**_NEXT_PHASE, "BiasClear": 1},
        },
        (0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0),
        3,
        3,
        (("SETRWC", {"clear_ab_vld": 0, "rwc_cr": 0, "rwc_d": 0, "rwc_b": 0, "rwc_a": 0, "bit_mask": 8}),),
    ),
}


def configure_matmul(
    copro: Coprocessor, *, fp32_dest: bool = False, thread: int = MATH_THREAD, src_format: int = BF16
) -> None:
    """Formats (SrcA format code ``src_format``, Dst FP32 or BF16) and the matmul ADDR_MOD slots."""
    config = copro.config
    state = config.state_id(thread)
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", state, src_format)
    config.write_field("ALU_ACC_CTRL_Fp32_enabled", state, int(fp32_dest))
    for slot, fields in MATMUL_PLANS[copro.arch.name].addr_mods.items():
        set_addr_mod(copro, thread, slot, **fields)


def matmul_tile_words(
    copro: Coprocessor, phases: int, *, thread: int = MATH_THREAD, record: bool = True
) -> list[int]:
    """The words that compute one 32x32x32 tile matmul at ``phases`` fidelity phases (1 LoFi .. 4 HiFi4).

    With ``record``, fifteen MVMULs are first recorded into the replay buffer (once is enough for any
    number of tiles). Then one MOP (template 1) runs an outer loop over the phases: the fifteen
    replayed MVMULs and a sixteenth that rewinds the RWCs and steps the fidelity phase (on the last
    phase: clears it). Also writes the MOP configuration, as the TRISC would through its MOP
    configuration registers.
    """
    if not 1 <= phases <= 4:
        raise ValueError(f"phases must be 1..4, not {phases}")
    isa = copro.isa
    plan = MATMUL_PLANS[copro.arch.name]

    def mvmul(slot: int) -> int:
        return isa.encode("MVMUL", clear_dvalid=0, instr_mod19=0, addr_mode=slot, dst=0)

    count = len(plan.replay)
    nop = isa.encode("NOP")
    play = isa.encode("REPLAY", start_idx=0, len=count, execute_while_loading=0, load_mode=0)
    phase, last = mvmul(plan.phase), mvmul(plan.last)
    # Template 1: OuterCount, InnerCount, StartOp, EndOp0, EndOp1, LoopOp, LoopOp1, Loop0Last, Loop1Last.
    for index, value in enumerate((phases, 1, play, nop, nop, phase, nop, last, phase)):
        copro.frontend.write_mop_config(thread, index, value)
    # (The MOP's third field is zmask_lo16_or_loop_count on Blackhole, zmask_lo16 on Wormhole.)
    words = [isa.encode("MOP", **{**dict.fromkeys(isa.by_name["MOP"].field_names, 0), "mop_type": 1})]
    words += [isa.encode(name, **fields) for name, fields in plan.tail]
    if record:
        load = isa.encode("REPLAY", start_idx=0, len=count, execute_while_loading=0, load_mode=1)
        words[:0] = [load, *(mvmul(slot) for slot in plan.replay)]
    return words
