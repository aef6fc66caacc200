"""The matrix unit's register files: SrcA, SrcB (with their bank hand-over) and Dst.

Functional model: tt-isa-documentation WormholeB0 SrcASrcB.md, Dst.md, ZEROACC.md, ZEROSRC.md,
CLEARDVALID.md, SETDVALID.md and SETRWC.md (FlipSrcA / FlipSrcB); the jasondavies fork's BlackholeA0
Dst.md for the Blackhole ``Adj16`` / ``Adj32`` row mapping. The BlackholeA0 pages do not cover the
four instructions, so the Wormhole descriptions are applied, with the Blackhole encoding (below).

State is raw bits only: SrcA / SrcB hold 19-bit datums, Dst 16-bit halves. Interpreting them as
numbers is formats.py's job.

Dst row validity
----------------
ZEROACC does not write zeros: it marks rows of ``DstBits`` undefined, and readers then see the
identity element of what they do (zero for packers and most matrix-unit instructions, negative
infinity for the max-pool ones). ``dst_row_valid`` is one flag per ``DstBits`` row; marking a
``Dst32b`` row marks both storage rows it spans. A reader passes the identity it needs (in raw
bits: the format is its business). Writing a whole row makes it defined again.

Blackhole ZEROACC encoding
--------------------------
The Blackhole table splits ZEROACC as clear_mode[23:19] use_32_bit_mode[18] clear_zero_flags[17]
addr_mode[16:14] where[13:0]; the Wormhole page has Mode[20:19] UseDst32b[21] Revert[18]
AddrMod[16:15] Imm10[9:0]. tt-llk's Blackhole kernels pass the 32-bit choice in bit 18
(``TT_ZEROACC(CLR_16, is_fp32_dest_acc_en, ...)``), so here ``use_32_bit_mode`` is UseDst32b,
``clear_mode`` bits 0..1 are Mode and ``where`` bits 0..9 are Imm10. Set bits of ``clear_mode`` or
``where`` beyond those raise UndefinedBehavior (the rule of adc.py and the scalar unit). Whether and
where Blackhole has the Revert bit, and what ``clear_zero_flags`` does, is undocumented: a set
``clear_zero_flags`` raises Unimplemented (tt-llk sets it after unpacking to Dst).

Not modelled: ``RISCV_DEBUG_REG_DBG_FEATURE_DISABLE`` bit 11 (Dst16b as the high halves of Dst32b)
is taken as clear; Dst's read-after-write scheduling stall is the scheduler's business.

Services offered to other units (wired on the coprocessor): :func:`src_valid` (the wait gate's
STALLWAIT C5..C8) and :func:`clear_src_valid` (SETRWC's FlipSrcA / FlipSrcB); :func:`hand_over` gives
a bank to the matrix unit from a later cycle (an unpacker's FlipSrc once its data has landed), and
the pipe engine makes pending hand-overs in cycle order (:func:`next_handover`, :func:`apply_handovers`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.adc import apply_addr_mod, apply_addr_mod_wormhole
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.shared_state import SharedArrays

# ZEROSRC, CLEARDVALID and SETDVALID: Wormhole's pages, the same encoding on both chips. (ZEROACC's
# encodings differ: it is Blackhole's only.)
BOTH = ("blackhole", "wormhole")

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

SRC_BANKS, SRC_ROWS, SRC_COLS = 2, 64, 16
SRC_MASK = (1 << 19) - 1  # a SrcA / SrcB datum is 19 bits wide
SRCA, SRCB = 0, 1  # index of the file in the per-file arrays (SETRWC's bank numbering too)
DST_ROWS, DST_COLS = 1024, 16  # DstBits[1024][16] of uint16
DST32_ROWS = 512  # distinct Dst32b rows
ROW_MASK = DST_ROWS - 1  # Dst row indices are 10 bits wide
DST_BLOCK_ROWS = 8  # the matrix unit works on aligned 8x16 blocks of Dst
FACE_ROWS = 16  # a 16x16 face is 16 consecutive rows
TILE_FACES = 4  # a 32x32 tile is 4 consecutive faces: top-left, top-right, bottom-left, bottom-right

# ZEROACC Mode values (ZEROACC.md supporting definitions).
ZEROACC_MODE_ONE_ROW, ZEROACC_MODE_16_ROWS, ZEROACC_MODE_HALF_OF_DST, ZEROACC_MODE_ALL_OF_DST = range(4)


def dst_hidden(ready: int) -> str:
    """Why an instruction reading Dst rows the matrix unit wrote too recently waits (until ``ready``)."""
    return f"Dst rows written by the matrix unit are readable from cycle {ready}"


def bank_not_handed_to_matrix(file: int) -> str:
    """Why a move or shift waits for the matrix unit's bank of SrcA (``file`` 0) or SrcB (1)."""
    return f"Src{'AB'[file]} bank not handed to the matrix unit"


class SrcClient(IntEnum):
    """Who may use a SrcA / SrcB bank (``AllowedClient``; the page's enum order)."""

    MATRIX_UNIT = 0
    UNPACKERS = 1


@dataclass
class RegFiles(SharedArrays):
    """SrcA, SrcB and Dst of one coprocessor, as raw data."""

    srca: np.ndarray  # (2, 64, 16) uint32: SrcA[Bank][Row][Column], 19-bit datums
    srcb: np.ndarray  # (2, 64, 16) uint32: SrcB likewise
    src_client: np.ndarray  # (2 files, 2 banks) uint8: SrcX[Bank].AllowedClient, a SrcClient
    matrix_bank: np.ndarray  # (2,) uint8: MatrixUnit::SrcABank, SrcBBank
    unpacker_bank: np.ndarray  # (2,) uint8: Unpackers[0]::SrcBank (SrcA), Unpackers[1]::SrcBank (SrcB)
    # A hand-over to the matrix unit still on its way: the cycle from which SrcX[bank] becomes the
    # matrix unit's (the unpacker is still moving its data), -1 for none (see hand_over).
    src_handover_at: np.ndarray  # (2 files, 2 banks) int64
    # Unpackers[u].SrcRow[thread]: the unpack unit's write row, reset by SETDVALID, so it lives here.
    unpacker_src_row: np.ndarray  # (2, pipes) uint32
    dst: np.ndarray  # (1024, 16) uint16: DstBits
    dst_row_valid: np.ndarray  # (1024,) bool: False once ZEROACC marked the DstBits row undefined
    # Scheduling state (Dst.md "Instruction scheduling"): the first cycle at which each aligned 8-row
    # block of DstBits may be read again after a matrix-unit write.
    dst_ready: np.ndarray  # (128,) int64
    # The same for the vector unit's writes only (SFPSTORE also sets dst_ready): a block whose two
    # entries differ was last written by the matrix unit (SFPLOAD.md's gap, ``matrix_ready``).
    dst_sfpu_ready: np.ndarray  # (128,) int64
    # The matrix unit's hold after a data move (matrix.moves.HOLDS): [move index + 1 (0: none), the
    # first cycle it no longer holds].
    move_hold: np.ndarray  # (2,) int64
    # The SrcA row address the matrix unit last computed (SHIFTXA.md's HardwareBug()); -1: unknown
    # (never computed, or computed by an instruction whose SrcA address no page gives).
    srca_row_latch: np.ndarray  # (1,) int64

    @classmethod
    def new(cls, arch: Arch) -> RegFiles:
        # Reset contents are not documented: zeros, and every Dst row defined (so a reader of
        # never-written Dst sees zeros rather than an error; the banks start as the pages say).
        return cls(
            srca=np.zeros((SRC_BANKS, SRC_ROWS, SRC_COLS), np.uint32),
            srcb=np.zeros((SRC_BANKS, SRC_ROWS, SRC_COLS), np.uint32),
            src_client=np.full((2, SRC_BANKS), SrcClient.UNPACKERS, np.uint8),
            matrix_bank=np.zeros(2, np.uint8),
            unpacker_bank=np.zeros(2, np.uint8),
            src_handover_at=np.full((2, SRC_BANKS), -1, np.int64),
            unpacker_src_row=np.zeros((2, arch.pipe_count), np.uint32),
            dst=np.zeros((DST_ROWS, DST_COLS), np.uint16),
            dst_row_valid=np.ones(DST_ROWS, bool),
            dst_ready=np.zeros(DST_ROWS // DST_BLOCK_ROWS, np.int64),
            dst_sfpu_ready=np.zeros(DST_ROWS // DST_BLOCK_ROWS, np.int64),
            move_hold=np.zeros(2, np.int64),
            srca_row_latch=np.full(1, -1, np.int64),
        )

    def copy(self) -> RegFiles:
        """An independent snapshot."""
        return RegFiles(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def equals(self, other: RegFiles) -> bool:
        """Whether every array of both snapshots is equal."""
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def src(self, file: int) -> np.ndarray:
        """SrcA (``file`` 0) or SrcB (1): the (2, 64, 16) array itself."""
        return (self.srca, self.srcb)[file]

    # ------------------------------------------------------------------ Dst row views
    def dst16_rows(self, rows: np.ndarray | int, *, remap: bool = False) -> np.ndarray:
        """The DstBits rows that ``Dst16b[rows]`` names."""
        return adj16(np.asarray(rows), remap)

    def dst32_rows(self, rows: np.ndarray | int, *, remap: bool = False, swizzle: bool = False) -> np.ndarray:
        """The DstBits rows holding the high halves of ``Dst32b[rows]`` (the low halves are 8 on)."""
        return adj32(np.asarray(rows), remap, swizzle)

    def read16(self, rows: np.ndarray | int, *, identity: int = 0, remap: bool = False) -> np.ndarray:
        """``Dst16b[rows][:]`` as a reader sees it: undefined rows read as ``identity`` (raw bits)."""
        storage = self.dst16_rows(rows, remap=remap)
        values = self.dst[storage].copy()
        values[~self.dst_row_valid[storage]] = identity
        return values

    def write16(self, rows: np.ndarray | int, values: np.ndarray, *, remap: bool = False) -> None:
        """Write whole rows ``Dst16b[rows][:]``; they become defined."""
        storage = self.dst16_rows(rows, remap=remap)
        self.dst[storage] = values
        self.dst_row_valid[storage] = True

    def read32(
        self, rows: np.ndarray | int, *, identity: int = 0, remap: bool = False, swizzle: bool = False
    ) -> np.ndarray:
        """``Dst32b[rows][:]`` as a reader sees it. A datum either of whose two storage rows is
        undefined reads as ``identity`` (mixing the views is the program's risk; the safest reading)."""
        high = self.dst32_rows(rows, remap=remap, swizzle=swizzle)
        values = (self.dst[high].astype(np.uint32) << 16) | self.dst[high + 8]
        values[~(self.dst_row_valid[high] & self.dst_row_valid[high + 8])] = identity
        return values

    def write32(
        self, rows: np.ndarray | int, values: np.ndarray, *, remap: bool = False, swizzle: bool = False
    ) -> None:
        """Write whole rows ``Dst32b[rows][:]`` (both halves); they become defined."""
        high = self.dst32_rows(rows, remap=remap, swizzle=swizzle)
        values = np.asarray(values, np.uint32)
        self.dst[high] = values >> 16
        self.dst[high + 8] = values & 0xFFFF
        self.dst_row_valid[high] = self.dst_row_valid[high + 8] = True

    def storage_rows(
        self, rows: np.ndarray | int, *, wide: bool, remap: bool = False, swizzle: bool = False
    ) -> np.ndarray:
        """Every DstBits row that ``Dst32b[rows]`` (``wide``) or ``Dst16b[rows]`` occupies."""
        if not wide:
            return self.dst16_rows(rows, remap=remap)
        high = self.dst32_rows(rows, remap=remap, swizzle=swizzle)
        return np.concatenate([np.ravel(high), np.ravel(high) + 8])

    def readable_from(self, storage: np.ndarray) -> int:
        """The first cycle at which the DstBits rows ``storage`` may all be read."""
        return int(self.dst_ready[np.asarray(storage) // DST_BLOCK_ROWS].max(initial=0))

    def written(self, storage: np.ndarray, cycle: int, hidden: int, *, sfpu: bool = False) -> None:
        """An instruction issued at ``cycle`` (a matrix-unit one, or the vector unit's if ``sfpu``) wrote
        DstBits rows ``storage``: their blocks cannot be read for the next ``hidden`` cycles."""
        blocks = np.asarray(storage) // DST_BLOCK_ROWS
        self.dst_ready[blocks] = cycle + hidden + 1
        if sfpu:
            self.dst_sfpu_ready[blocks] = cycle + hidden + 1

    def matrix_ready(self, storage: np.ndarray) -> int:
        """``readable_from`` over the blocks of DstBits rows ``storage`` the matrix unit wrote last
        (0 if none): what SFPLOAD.md's gap counts from."""
        blocks = np.asarray(storage) // DST_BLOCK_ROWS
        ready = self.dst_ready[blocks]
        return int(ready[ready != self.dst_sfpu_ready[blocks]].max(initial=0))

    def mark_undefined16(self, rows: np.ndarray | int, *, remap: bool = False) -> None:
        """``Dst16b[rows][:] = Undefined``."""
        self.dst_row_valid[self.dst16_rows(rows, remap=remap)] = False

    def mark_undefined32(self, rows: np.ndarray | int, *, remap: bool = False, swizzle: bool = False) -> None:
        """``Dst32b[rows][:] = Undefined``: both storage rows of each."""
        high = self.dst32_rows(rows, remap=remap, swizzle=swizzle)
        self.dst_row_valid[high] = self.dst_row_valid[high + 8] = False

    def dst32(self) -> np.ndarray:
        """A (512, 16) uint32 copy of ``Dst32b[0..511]``, raw (validity ignored, no remapping)."""
        high = adj32(np.arange(DST32_ROWS), False, False)
        return (self.dst[high].astype(np.uint32) << 16) | self.dst[high + 8]

    # ------------------------------------------------------------------ faces and tiles
    def read_face16(self, face: int, *, identity: int = 0) -> np.ndarray:
        """Face ``face`` (0..63) of Dst16b: rows 16*face.. as a (16, 16) uint16 array."""
        return self.read16(_face_rows(face, DST_ROWS), identity=identity)

    def write_face16(self, face: int, data: np.ndarray) -> None:
        self.write16(_face_rows(face, DST_ROWS), _shaped(data, (FACE_ROWS, DST_COLS), np.uint16))

    def read_face32(self, face: int, *, identity: int = 0) -> np.ndarray:
        """Face ``face`` (0..31) of Dst32b as a (16, 16) uint32 array."""
        return self.read32(_face_rows(face, DST32_ROWS), identity=identity)

    def write_face32(self, face: int, data: np.ndarray) -> None:
        self.write32(_face_rows(face, DST32_ROWS), _shaped(data, (FACE_ROWS, DST_COLS), np.uint32))

    def read_tile16(self, tile: int, *, identity: int = 0) -> np.ndarray:
        """Tile ``tile`` (0..15) of Dst16b, faces 4*tile.. assembled into a (32, 32) uint16 array."""
        return _assemble([self.read_face16(f, identity=identity) for f in _tile_faces(tile, DST_ROWS)])

    def write_tile16(self, tile: int, data: np.ndarray) -> None:
        data = _shaped(data, (2 * FACE_ROWS, 2 * DST_COLS), np.uint16)
        for face, part in zip(_tile_faces(tile, DST_ROWS), _split(data), strict=True):
            self.write_face16(face, part)

    def read_tile32(self, tile: int, *, identity: int = 0) -> np.ndarray:
        """Tile ``tile`` (0..7) of Dst32b as a (32, 32) uint32 array."""
        return _assemble([self.read_face32(f, identity=identity) for f in _tile_faces(tile, DST32_ROWS)])

    def write_tile32(self, tile: int, data: np.ndarray) -> None:
        data = _shaped(data, (2 * FACE_ROWS, 2 * DST_COLS), np.uint32)
        for face, part in zip(_tile_faces(tile, DST32_ROWS), _split(data), strict=True):
            self.write_face32(face, part)


# ------------------------------------------------------------------------------ row mapping


def adj16(rows: np.ndarray, remap: bool) -> np.ndarray:
    """BlackholeA0 Dst.md ``Adj16``: the DstBits row of Dst16b row ``rows`` (10-bit indices)."""
    r = np.asarray(rows, np.int64) & ROW_MASK
    if remap:  # Config.DEST_ACCESS_CFG_remap_addrs
        r = (r & 0x3C7) ^ ((r & 0x030) >> 1) ^ ((r & 0x008) << 2)
    return r


def adj32(rows: np.ndarray, remap: bool, swizzle: bool) -> np.ndarray:
    """BlackholeA0 Dst.md ``Adj32``: the DstBits row of the high half of Dst32b row ``rows``."""
    r = adj16(rows, remap)
    if swizzle:  # Config.DEST_ACCESS_CFG_swizzle_32b
        r = (r & 0x3F3) ^ ((r & 0x018) >> 1) ^ ((r & 0x004) << 1)
    return ((r & 0x1F8) << 1) | (r & 0x207)


def dst_mapping(copro: Coprocessor, thread: int) -> tuple[bool, bool]:
    """(remap, swizzle) as ``thread``'s Config state sets them, for the ``remap``/``swizzle`` keywords."""
    config = copro.config
    if "DEST_ACCESS_CFG_remap_addrs" not in config.layout.config_fields:
        # Wormhole has neither: its Dst.md maps rows as Adj16 / Adj32 do with both off.
        return False, False
    return (
        bool(config.field_for_thread("DEST_ACCESS_CFG_remap_addrs", thread)),
        bool(config.field_for_thread("DEST_ACCESS_CFG_swizzle_32b", thread)),
    )


def _face_rows(face: int, rows: int) -> np.ndarray:
    if not 0 <= face < rows // FACE_ROWS:
        raise ValueError(f"face {face} is not in 0..{rows // FACE_ROWS - 1}")
    return np.arange(face * FACE_ROWS, (face + 1) * FACE_ROWS)


def _tile_faces(tile: int, rows: int) -> range:
    tiles = rows // (FACE_ROWS * TILE_FACES)
    if not 0 <= tile < tiles:
        raise ValueError(f"tile {tile} is not in 0..{tiles - 1}")
    return range(tile * TILE_FACES, (tile + 1) * TILE_FACES)


def _shaped(data: np.ndarray, shape: tuple[int, int], dtype: type) -> np.ndarray:
    """``data`` as ``dtype`` if it has ``shape`` and every value fits (nothing is truncated silently)."""
    array = np.asarray(data)
    if array.shape != shape:
        raise ValueError(f"expected shape {shape}, got {array.shape}")
    if array.size and (array.min() < 0 or array.max() > np.iinfo(dtype).max):
        raise ValueError(f"values do not fit {np.dtype(dtype).name}")
    return array.astype(dtype)


def _assemble(faces: list[np.ndarray]) -> np.ndarray:
    return np.block([[faces[0], faces[1]], [faces[2], faces[3]]])


def _split(tile: np.ndarray) -> list[np.ndarray]:
    h, w = FACE_ROWS, DST_COLS
    return [tile[:h, :w], tile[:h, w:], tile[h:, :w], tile[h:, w:]]


# ------------------------------------------------------------------------------ services

# src_valid's bank names: (file, whose current bank).
_SRC_BANK_NAMES: dict[str, tuple[int, str]] = {
    "srca_unpacker": (SRCA, "unpacker"),
    "srcb_unpacker": (SRCB, "unpacker"),
    "srca_matrix": (SRCA, "matrix"),
    "srcb_matrix": (SRCB, "matrix"),
}


def src_valid(copro: Coprocessor, bank: str) -> bool:
    """Whether the named SrcA/SrcB bank is handed to the matrix unit (``AllowedClient ==
    MatrixUnit``). ``bank``: ``srca_unpacker`` / ``srcb_unpacker`` (the bank unpacker 0 / 1 writes
    now) or ``srca_matrix`` / ``srcb_matrix`` (the bank the matrix unit reads now)."""
    if bank not in _SRC_BANK_NAMES:
        raise ValueError(f"unknown SrcA/SrcB bank name {bank!r} (one of {', '.join(_SRC_BANK_NAMES)})")
    regs = copro.regs
    file, side = _SRC_BANK_NAMES[bank]
    index = int((regs.unpacker_bank if side == "unpacker" else regs.matrix_bank)[file])
    return int(regs.src_client[file, index]) == SrcClient.MATRIX_UNIT


def hand_over(copro: Coprocessor, file: int, bank: int, at: int, cycle: int) -> None:
    """Give SrcA / SrcB (``file``) ``bank`` to the matrix unit from cycle ``at`` on; ``cycle`` is now.
    A later hand-over waits in ``src_handover_at`` and :func:`apply_handovers` makes it: the matrix
    unit's own tests of ``src_client`` cannot see a bank before the unpacker has filled it."""
    if at <= cycle:
        copro.regs.src_client[file, bank] = SrcClient.MATRIX_UNIT
    else:
        copro.regs.src_handover_at[file, bank] = at


def next_handover(copro: Coprocessor) -> int | None:
    """The cycle of the earliest pending hand-over (None: none)."""
    pending = copro.regs.src_handover_at
    if pending.max() < 0:  # asked before every instruction: mostly nothing is pending
        return None
    return int(pending[pending >= 0].min())


def apply_handovers(copro: Coprocessor, cycle: int) -> bool:
    """Make every pending hand-over due at or before ``cycle``; whether there was one."""
    regs = copro.regs
    due = (regs.src_handover_at >= 0) & (regs.src_handover_at <= cycle)
    if not due.any():
        return False
    regs.src_client[due] = SrcClient.MATRIX_UNIT
    regs.src_handover_at[due] = -1
    return True


def clear_src_valid(copro: Coprocessor, bank: int, release: bool) -> None:
    """SETRWC FlipSrcA (``bank`` 0) / FlipSrcB (1): give the matrix unit's current bank of that file
    back to the unpackers if ``release`` (CLR_DVALID_Src<A|B>_Disable clear), then flip the matrix
    unit to the other bank."""
    if bank not in (SRCA, SRCB):
        raise ValueError(f"SrcA/SrcB file {bank} is not 0 (SrcA) or 1 (SrcB)")
    regs = copro.regs
    if release:
        regs.src_client[bank, int(regs.matrix_bank[bank])] = SrcClient.UNPACKERS
    regs.matrix_bank[bank] ^= 1


# ------------------------------------------------------------------------------ semantics


@semantics("ZEROACC")
def zeroacc(
    ctx: Context, clear_mode: int, use_32_bit_mode: int, clear_zero_flags: int, addr_mode: int, where: int
) -> Outcome:
    mode = ctx.documented("clear_mode", clear_mode, 2)
    imm10 = ctx.documented("where", where, 10)
    if clear_zero_flags:
        raise ctx.error(Unimplemented, "clear_zero_flags is set; its Blackhole meaning is undocumented")
    return _zeroacc(ctx, mode, use_32_bit_mode, imm10, lambda: apply_addr_mod(ctx, addr_mode))


@semantics("ZEROACC", arches=("wormhole",))
def zeroacc_wormhole(ctx: Context, clear_mode: int, addr_mode: int, dst: int) -> Outcome:
    """Wormhole's ZEROACC.md encoding: Mode bits 19..20, UseDst32b 21, AddrMod 15..16, Revert 18,
    Imm10 0..9; the other bits of the table's slots are in no documented field."""
    mode = ctx.documented("clear_mode", clear_mode, 3) & 3
    use_dst32 = clear_mode >> 2
    if addr_mode & 0b0100:
        ctx.documented("addr_mode", addr_mode & 0b0111, 2)  # bit 17: in no documented field
    revert = addr_mode >> 3
    imm10 = ctx.documented("dst", dst, 10)
    if revert and mode != ZEROACC_MODE_ONE_ROW:
        raise ctx.error(UndefinedBehavior, "Revert is set (the page: undefined behaviour)", addr_mode)
    return _zeroacc(ctx, mode, use_dst32, imm10, lambda: apply_addr_mod_wormhole(ctx, addr_mode & 3))


def _zeroacc(
    ctx: Context, mode: int, use_32_bit_mode: int, imm10: int, apply_mod: Callable[[], None]
) -> Outcome:
    """ZEROACC.md's functional model (the two chips differ in encoding and in ApplyAddrMod)."""
    copro, thread = ctx.copro, ctx.thread
    config, regs = copro.config, copro.regs
    remap, swizzle = dst_mapping(copro, thread)
    rows16 = rows32 = np.zeros(0, np.int64)  # the Dst16b / Dst32b rows to mark undefined
    if mode == ZEROACC_MODE_ONE_ROW:
        state = config.state_id(thread)
        row = imm10 + config.thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread)
        row += int(copro.adc.dst[thread]) + config.read_field("DEST_REGW_BASE_Base", state)
        row &= ROW_MASK  # uint10_t Row
        wide = config.read_field("ALU_ACC_CTRL_Fp32_enabled", state) or config.read_field(
            "ALU_ACC_CTRL_INT8_math_enabled", state
        )
        if wide:
            rows32 = np.array([row])
        else:
            rows16 = np.array([row])
    elif mode == ZEROACC_MODE_16_ROWS:
        block = imm10 & 0xFF
        # Out of range: documented as doing nothing (the address modifier still applies).
        if use_32_bit_mode:
            if block < DST32_ROWS // FACE_ROWS:
                rows32 = np.arange(block * FACE_ROWS, (block + 1) * FACE_ROWS)
        elif block < DST_ROWS // FACE_ROWS:
            rows16 = np.arange(block * FACE_ROWS, (block + 1) * FACE_ROWS)
    elif mode == ZEROACC_MODE_HALF_OF_DST:
        high = imm10 & 1
        rows16 = np.arange(DST_ROWS // 2) + high * (DST_ROWS // 2)
        rows32 = np.arange(DST32_ROWS // 2) + high * (DST32_ROWS // 2)
    else:  # ZEROACC_MODE_ALL_OF_DST
        rows16, rows32 = np.arange(DST_ROWS), np.arange(DST32_ROWS)
    if mode in (ZEROACC_MODE_ONE_ROW, ZEROACC_MODE_16_ROWS):
        # Rows were computed from the RWC before it advances; apply_addr_mod raises (if it does)
        # before changing anything, so no state has changed when it does.
        apply_mod()
    regs.mark_undefined16(rows16, remap=remap)
    regs.mark_undefined32(rows32, remap=remap, swizzle=swizzle)
    return Retire()


@semantics("ZEROSRC", arches=BOTH)
def zerosrc(ctx: Context, zero_val: int, write_mode: int, bank_mask: int, src_mask: int) -> Outcome:
    # Encoding: ClearSrcA/ClearSrcB bits 0..1, BothBanks 2, SingleBankMatrixUnit 3, NegativeInfSrcA 4.
    negative_inf_srca = ctx.documented("zero_val", zero_val, 1)
    regs = ctx.copro.regs
    for file, clear in ((SRCA, src_mask & 1), (SRCB, src_mask >> 1 & 1)):
        if not clear:
            continue
        if bank_mask:  # BothBanks
            banks = [0, 1]
        elif write_mode:  # SingleBankMatrixUnit
            banks = [int(regs.matrix_bank[file])]
        else:
            banks = [int(regs.unpacker_bank[file])]
        # ~0u in a 19-bit datum: all ones, which SrcA reads as negative infinity.
        value = SRC_MASK if negative_inf_srca and file == SRCA else 0
        regs.src(file)[banks] = value
    return Retire()


@semantics("CLEARDVALID", arches=BOTH)
def cleardvalid(ctx: Context, cleardvalid: int, reset: int) -> Outcome:
    # cleardvalid: FlipSrcA bit 0, FlipSrcB bit 1; reset: Reset bit 0, KeepReadingSameSrc bit 1.
    ctx.documented("reset", reset, 2)
    regs = ctx.copro.regs
    if reset & 1:
        regs.matrix_bank[:] = 0
        regs.unpacker_bank[:] = 0
        regs.src_client[:] = SrcClient.UNPACKERS
        regs.src_handover_at[:] = -1  # a hand-over still on its way is reset too
        return Retire()
    keep_reading_same = reset >> 1 & 1
    for file in (SRCA, SRCB):
        if cleardvalid >> file & 1:
            regs.src_client[file, int(regs.matrix_bank[file])] = SrcClient.UNPACKERS
            if not keep_reading_same:
                regs.matrix_bank[file] ^= 1
    return Retire()


@semantics("SETDVALID", arches=BOTH)
def setdvalid(ctx: Context, setvalid: int) -> Outcome:
    # setvalid: FlipSrcA bit 0, FlipSrcB bit 1.
    ctx.documented("setvalid", setvalid, 2)
    copro, thread = ctx.copro, ctx.thread
    regs = copro.regs
    for file, base in ((SRCA, "SRCA_SET_Base"), (SRCB, "SRCB_SET_Base")):
        if setvalid >> file & 1:
            regs.src_client[file, int(regs.unpacker_bank[file])] = SrcClient.MATRIX_UNIT
            regs.unpacker_bank[file] ^= 1
            regs.unpacker_src_row[file, thread] = copro.config.thread_field(base, thread) << 4
    return Retire()
