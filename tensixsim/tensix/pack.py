"""The packer: PACR (Dst -> L1) and PACR_SETREG.

Functional model: tt-isa-documentation WormholeB0 PACR.md, PACR_SETREG.md, Packers/README.md,
Packers/InputAddressGenerator.md, Packers/OutputAddressGenerator.md, Packers/FormatConversion.md,
Packers/EdgeMasking.md, Packers/ReLU.md, Packers/ExponentThresholding.md, Packers/Downsampling.md;
Dst.md (both the Wormhole page and the jasondavies fork's BlackholeA0 page) for Dst addressing and the
read-after-write stall. No BlackholeA0 page covers the packers. Blackhole has one packer (configured by
``THCON_SEC0_REG1_*``, the Wormhole pages' ``Packers[0].Config``) with four Dst read interfaces where
Wormhole has four packers; the Wormhole models are applied to packer 0, and what Blackhole changes
without a page saying how raises Unimplemented. The pipeline's stages (:func:`conversion`,
:func:`early`, :func:`relu`, :func:`threshold_exp`, :func:`late`, :func:`uniform_edge_mask`,
:func:`stream_writes`, :func:`accumulated`, :func:`advance_adc`) take the packer's configuration
prefix where it matters, so pack_wormhole.py runs Wormhole's four packers through them.

Blackhole encoding
------------------
PACR: ``cfg_context`` [23:21], ``row_pad_zero`` [20:18], ``dst_access_mode`` [17], ``addr_mode`` [16:15]
(AddrMod), ``addr_cnt_context`` [14:13], ``zero_write`` [12] (ZeroWrite), ``read_intf_sel`` [11:8]
(where Wormhole has PackerMask), ``ovrd_thread_id`` [7] (OvrdThreadId), ``concat`` [6:4] (Concat is one
bit on Wormhole), ``ctxt_ctrl`` [3:2], ``flush`` [1], ``last`` [0].

- ``read_intf_sel``: bit k enables Dst read interface k, 0 enables all four (tt-llk's
  ``ALL_INTF_ACTIVE``). Reading taken from ttsim's Blackhole model (no page): interface k reads
  ``InputNumDatums`` datums starting at Dst datum ``InputSourceAddr + 16 * k`` (row k below the start
  row), and the interfaces' datums enter the pipeline in interface order. Only the masks for which
  that reading is evidenced are accepted (0, 1, 3, 5, 7, 10, 15), with whole aligned rows (X start a
  multiple of 16 datums, 16 datums per interface) when more than one interface reads; a single
  interface must stay within its row. Anything else raises Unimplemented.
- ``concat``: the page gives Concat no effect without compression (which is not modelled); values 0
  and 1 are accepted, wider values raise Unimplemented.
- ``dst_access_mode`` (tt-llk's DST_ACCESS_STRIDED_MODE, which its Blackhole untilize uses): reading
  taken from ttsim's Blackhole packer (no page): read interface k starts 16 Dst rows (256 datums) on
  from the start instead of one row, so two interfaces read row r of a tile's left and right faces, one
  untilized 32-datum row. Accepted with ``read_intf_sel`` 0, 1 and 3 (the masks evidenced), else
  Unimplemented. Row validity, the read-after-write stall and Adj16 / Adj32 apply to the rows read.
- ``cfg_context``, ``row_pad_zero``, ``addr_cnt_context``,
  ``ovrd_thread_id`` (the Blackhole configuration has no ``Addr_cnt_context`` field) and ``ctxt_ctrl``
  have no Blackhole page: a non-zero value raises Unimplemented.

PACR_SETREG: the Blackhole slots (``push`` [23], ``mode_sel`` [22], ``unused`` [21:12], ``disable_stall``
[11:10], ``addr_sel`` [9:8], ``stream_id`` [7:2], ``flush`` [1], ``last`` [0]) are bit for bit the page's
``TT_PACR_SETREG(1, AddrSel, Value10, 0xf, AddrMid, 1, 0)``: ``mode_sel`` is AddrSel, ``unused`` Value10,
``stream_id`` AddrMid. Any other value of the constant slots raises UndefinedBehavior. The write goes to
``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)`` with a value scaled by
``SetRegHiScaler[Out_data_format & 3]``; the page says both are set through TDMA-RISC rather than
backend configuration, and no page or configuration field gives their addresses or reset values
(tt-llk's Blackhole kernels never issue PACR_SETREG). Although the NoC overlay stream registers it
targets are modelled (streams.py), the address and value cannot be formed: the documented form raises
Unimplemented.

Configuration (Blackhole names)
-------------------------------
``Packers[0].Config[StateID].X`` is ``THCON_SEC0_REG1_X``; ``Pack_limit_address`` / ``Pack_fifo_size``
are ``THCON_SEC0_REG9_Pack_0_2_limit_address`` / ``_fifo_size``; ``DEST_TARGET_REG_CFG_PACK_SEC[0]`` and
the ``PCK0_ADDR_*``, ``PCK_DEST_RD_CTRL_*``, ``PCK_EDGE_*``, ``TILE_ROW_SET_MAPPING_*``, ``STACC_RELU_*``,
``ALU_FORMAT_SPEC_REG*_Dstacc*`` and ``INT_DESCALE_*`` fields keep the pages' names. Edge masking uses
the low two bits of ``PCK_EDGE_TILE_ROW_SET_SELECT_select`` for packer 0.

Points the pages leave open, and the readings taken
---------------------------------------------------
- Output: datums are buffered and written to L1 as aligned 16-byte chunks at ``DataStream.ByteAddress``
  (which then advances by 16); a partial buffer stays pending across PACRs and is zero-padded and
  written on ``Last`` / ``Flush``, as OutputAddressGenerator.md says. Packer state (stream addresses,
  ``NeedsNewAddress`` flags, the pending bytes) lives in :class:`PackState`.
- A 16-byte write beyond Blackhole's 1536 KiB of L1 raises MemoryFault naming the address; every
  datum and chunk is computed first, so nothing (L1, ADCs, packer state) changes when an instruction
  raises or waits.
- ``YZW_Addr``: the page adds ``YZW_Addr & ~0xf`` to a 16-byte-unit address; ttsim's Blackhole model
  adds ``YZW_Addr >> 4``. A non-zero ``YZW_Addr`` when a new output address is taken therefore raises
  Unimplemented (the Y / Z / W counters still advance exactly).
- Dst rows go through Blackhole's Adj16 / Adj32 mapping (DEST_ACCESS_CFG) like every Dst access;
  Dst.md's further "also affect how packers address Dst" is read as applying that mapping to the rows
  the read interfaces (strided or not) name.
  Undefined Dst rows (ZEROACC) are fetched as raw zero. Dst.md's read-after-write rule applies: a PACR
  reading a block the matrix unit wrote less than five cycles ago waits (``Wait(until=...)``).
- ZeroWrite fetches raw zero datums (from ``/dev/null``) in place of Dst; they pass the early
  conversion, ReLU and thresholding like any datum, and skip edge masking (which is part of the Dst
  fetch) and the read-after-write stall.
- Early conversion (FormatConversion.md): ``IntermediateFormat`` must equal ``In_data_format`` (the late
  conversion's input), else Unimplemented. The table's "No" entries raise UndefinedBehavior. Supported:
  from Dst32b FP32 / TF32 (Read_raw, or rounding with Round_10b_mant) / BF16 (rounding or truncation) /
  INT32 (bitcast) / INT8 (sign and low 7 bits, low 8 bits, or saturation with a zero ShiftAmount); from
  Dst16b BF16 (rounding or identity) / TF32 (rounding) / FP16 (rounding or identity) / INT16.
  Rounding is formats.packer_round_* (ties away from zero, denormals and minus zero to +0, NaN to
  infinity). IntermediateFormat BFP8 is E8M6 (rounding, Read_raw false) or BF16 (truncation from Dst32b,
  identity from Dst16b, Read_raw true), held as BF16 bits; ReLU, thresholds and edge masking treat it as
  BF16. Not modelled (Unimplemented): the E5M7 / E5M6 (BFP8a) and FP8 intermediates, the
  TF32-in-BF16 form for a late TF32 -> FP16, TF32 with Read_raw to anything but FP32, INT8 from
  Dst16b, a non-zero ShiftAmount (the rounding rule of the shifted-out bits is not given),
  ``INT_DESCALE_Mode`` 1 ("for some value z"), stochastic rounding (``ALU_ROUNDING_MODE_Packer_srnd_en``).
- Block-float output (BFP8 / BFP4 / BFP2 and the a styles): the late conversion takes each datum to
  BF16 (b styles, by the rules below) or to FP16 and then E5M7 (a styles), and formats.bfp_from_bf16 /
  bfp_a_from_fp16 round each block of 16 to one shared exponent (that function's docstring gives the
  rounding and the readings where the page is silent: saturation at 127, +0 for zero magnitudes,
  exponent 0 as zero). The datums go to the data stream (BFP4: two a byte, BFP2: four, the first in
  the low bits) and the exponents, one byte per block (the a styles' five bits zero-extended), to the
  exponent stream, which OutputAddressGenerator.md places at the output address with the data
  ``Exp_section_size`` 16-byte units on (tt-llk's Blackhole set_packer_config sets it to the number
  of faces: 16 bytes of exponents per 256 datums). The exponent stream buffers and flushes like the
  data stream. A PACR must produce whole blocks of 16 datums (a block split across instructions is
  undocumented): Unimplemented otherwise. IntermediateFormat / In_data_format BFP4 / BFP2 (and a) are
  valid only as Out_data_format (the page's (‡)): UndefinedBehavior.
- Late conversion: truncation when the mantissa narrows; FP32 / TF32 / BF16 -> FP16 is
  formats.fp32_to_fp16 (truncate, saturate to exponent 31 / mantissa 1023, NaN to that "infinity");
  the page calls some inputs with 2**-15 < |x| < 2**-14 mishandled, so such a datum raises
  Unimplemented, and smaller ones flush to zero keeping their sign (formats' reading). FP16 ->
  FP32 / TF32 ("denormals mishandled"): a denormal raises Unimplemented; FP16 -> BF16 flushes denormals
  to zero keeping the sign. An FP16 datum with exponent 31 widening to an 8-bit exponent raises
  Unimplemented (the page does not say whether the packer reads it as infinity).
- Edge masking needs the tile position generator, whose starting state is not documented: it is
  modelled only when every mask the configured row sets can select is the same (the page's own
  advice), and ``PCK_EDGE_TILE_FACE_SET_SELECT_enable`` raises Unimplemented. A masked datum reads as
  zero, or with ``PCK_EDGE_MODE_mode`` as negative infinity (FP32 / TF32 / BF16 only; FP16 has no
  infinity pattern and integers none at all: Unimplemented).
- ReLU is the page's model on the intermediate datum (order compared as numbers; NaN compares
  false); integer intermediates accept ``ApplyRelu`` 0 and 1 only (1: negative magnitudes become
  zero), other values raise Unimplemented, as do ``ApplyRelu`` bits 2..3.
- Exponent thresholding is the page's model (zero is +0). With ReLU mode 3 as well, the order of the
  two stages matters and is not documented: Unimplemented.
- L1 accumulation (``THCON_SEC0_REG1_Pack_L1_Acc``, the field tt-llk's Blackhole
  reconfigure_packer_l1_acc sets, with ``Disable_pack_zero_flags`` which only matters for
  compression): each 16-byte chunk the packer writes is added lane by lane to what L1 holds, the
  near-memory accumulate of WormholeB0 L1.md (4 x FP32, 4 x INT32 sign-magnitude with saturation,
  8 x FP16 or 8 x BF16): formats.accumulate_float / accumulate_int32, whose docstrings give the
  rounding reading (no page gives it). Other output formats raise Unimplemented. Zero padding written
  on Last / Flush accumulates like data (adding zero).
- Not modelled, raising Unimplemented: compression,
  downsampling (``Downsample_mask`` other than 0 / 0xffff, ``Downsample_rate``), L1 as input source,
  ``Add_l1_dest_addr_offset`` (TDMA-RISC state), ``Dis_shared_exp_assembler``, ``Enable_out_fifo``,
  ``Add_tile_header_size``, ``Auto_set_last_pacr_intf_sel``, ``pack_start_intf_pos``,
  ``pack_dis_y_pos_start_offset``, and output format FP8 (Blackhole's e4m3 form, selected by
  ``Pac_LF8_4b_exp``, has no page; the Wormhole page's FP8 is e5m2).

Timing (timing.PACK): address generation, and 128 bits written a cycle (L1.md: each packer "one 128-bit
write per cycle, or one 128-bit atomic accumulate every five cycles, or one 128-bit non-atomic
accumulate every two cycles"; Blackhole's packer writes twice that). Which of the two accumulate forms
Blackhole's packer uses is not given: the atomic one (five cycles per 16-byte chunk) is charged. The
packer is a pipeline: the issuing thread waits only until it has accepted the work (Packers/README.md),
which it does once the previous PACR's writes are done, and it stays busy for STALLWAIT, FLUSHDMA and
the done check until its pipeline has drained (:func:`accept`). The datums land in L1 when the PACR
issues, so a core reading them without waiting for the packer sees them early. Port and bank
contention are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS, PackAddrMod, W, X, Y, Z, pack_addr_mod
from tensixsim.tensix.formats import (
    BF16,
    BFP2,
    BFP2A,
    BFP4,
    BFP4A,
    BFP8,
    BFP8A,
    FORMAT_NAMES,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.regs import dst_mapping
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import PACK, PackTiming

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

OUT_BYTES = {FP32: 4, TF32: 4, INT32: 4, BF16: 2, FP16: 2, INT16: 2, INT8: 1, FP8: 1}
BFP_BITS = {BFP8: 8, BFP4: 4, BFP2: 2, BFP8A: 8, BFP4A: 4, BFP2A: 2}  # bits per datum
BFP_A = frozenset({BFP8A, BFP4A, BFP2A})  # the 5-bit shared exponent styles
LATE_ONLY = frozenset({BFP4, BFP4A, BFP2, BFP2A})  # valid only as LateToFormat
ACCUMULATE = {FP32: "fp32", BF16: "bf16", FP16: "fp16", INT32: "int32"}  # L1's accumulate lane formats
INTERFACE_MASKS = {0: (0, 1, 2, 3), 1: (0,), 3: (0, 1), 5: (0, 2), 7: (0, 1, 2), 10: (1, 3), 15: (0, 1, 2, 3)}
STRIDED_MASKS = frozenset({0, 1, 3})  # the masks evidenced with dst_access_mode (tt-llk untilize, ttsim)
STRIDED_INTERFACE_DATUMS = 256  # dst_access_mode: read interface k starts 16 Dst rows on
FLOAT32_LIKE = frozenset({FP32, TF32})
NEG_INF32, NEG_INF_BF16 = 0xFF800000, 0xFF80
L1_ADDRESS_MASK = 0x1FFFF


# PackState.stream's words (native/pack.c's PACK_* indices mirror them).
STREAM_DATA_ADDRESS, STREAM_EXPONENT_ADDRESS, STREAM_NEEDS_NEW_ADDRESS = 0, 1, 2
STREAM_PENDING, STREAM_EXPONENT_PENDING = 3, 4  # how many bytes of buffer[0] / buffer[1] are pending
STREAM_DRAINED = 5  # the first cycle from which the packer has nothing in flight (timing.PackTiming)
STREAM_WORDS = 6
STREAM_BUFFER_BYTES = 16  # a stream's buffer holds fewer than 16 bytes between instructions


def _fresh_stream() -> np.ndarray:
    stream = np.zeros(STREAM_WORDS, np.int64)
    stream[STREAM_NEEDS_NEW_ADDRESS] = 1
    return stream


DST_NOT_READABLE = "Dst block written by the matrix unit less than five cycles ago"  # why PACR waits


@dataclass
class PackState(SharedArrays):
    """The packer's state between instructions (OutputAddressGenerator.md's streams and buffers), in
    arrays the native engine shares (native/pack.c); the properties give the Python model plain values."""

    # DataStream.ByteAddress, ExponentStream.ByteAddress, the three streams' NeedsNewAddress (always
    # set together here), and the pending byte counts of the two buffers.
    stream: np.ndarray = field(default_factory=_fresh_stream)  # (STREAM_WORDS,) int64
    # The datums (row 0) and BFP shared exponents (row 1) buffered before L1.
    buffer: np.ndarray = field(default_factory=lambda: np.zeros((2, STREAM_BUFFER_BYTES), np.uint8))

    @property
    def data_address(self) -> int:
        return int(self.stream[STREAM_DATA_ADDRESS])

    @data_address.setter
    def data_address(self, value: int) -> None:
        self.stream[STREAM_DATA_ADDRESS] = value

    @property
    def exponent_address(self) -> int:
        return int(self.stream[STREAM_EXPONENT_ADDRESS])

    @exponent_address.setter
    def exponent_address(self, value: int) -> None:
        self.stream[STREAM_EXPONENT_ADDRESS] = value

    @property
    def needs_new_address(self) -> bool:
        return bool(self.stream[STREAM_NEEDS_NEW_ADDRESS])

    @needs_new_address.setter
    def needs_new_address(self, value: bool) -> None:
        self.stream[STREAM_NEEDS_NEW_ADDRESS] = int(bool(value))

    @property
    def pending(self) -> bytes:
        """Datums buffered before L1, fewer than 16 bytes."""
        return self._pending(0, STREAM_PENDING)

    @pending.setter
    def pending(self, value: bytes) -> None:
        self._set_pending(0, STREAM_PENDING, value)

    @property
    def exponent_pending(self) -> bytes:
        """BFP shared exponents buffered before L1, fewer than 16 bytes."""
        return self._pending(1, STREAM_EXPONENT_PENDING)

    @exponent_pending.setter
    def exponent_pending(self, value: bytes) -> None:
        self._set_pending(1, STREAM_EXPONENT_PENDING, value)

    def _pending(self, row: int, count: int) -> bytes:
        return self.buffer[row, : int(self.stream[count])].tobytes()

    def _set_pending(self, row: int, count: int, value: bytes) -> None:
        if len(value) >= STREAM_BUFFER_BYTES:
            raise ValueError(f"a packer stream buffers fewer than {STREAM_BUFFER_BYTES} bytes: {len(value)}")
        self.buffer[row] = 0  # the bytes past the pending ones are kept zero: one state, one representation
        self.buffer[row, : len(value)] = np.frombuffer(value, np.uint8)
        self.stream[count] = len(value)


@dataclass
class PackersState(SharedArrays):
    """Several packers' streams and buffers (Wormhole has four): per packer what :class:`PackState`
    holds, as rows of two arrays; :meth:`packer` gives one packer's as a PackState over those rows."""

    stream: np.ndarray  # (packers, STREAM_WORDS) int64
    buffer: np.ndarray  # (packers, 2, STREAM_BUFFER_BYTES) uint8

    @classmethod
    def new(cls, packers: int) -> PackersState:
        stream = np.zeros((packers, STREAM_WORDS), np.int64)
        stream[:, STREAM_NEEDS_NEW_ADDRESS] = 1
        return cls(stream, np.zeros((packers, 2, STREAM_BUFFER_BYTES), np.uint8))

    def packer(self, index: int) -> PackState:
        """Packer ``index``'s state; writes through it land in these arrays."""
        return PackState(self.stream[index], self.buffer[index])


# The name the coprocessor's ``busy_end`` / ``unit_busy`` take for the packers with accepted work still
# in their pipeline (STALLWAIT's packer conditions, FLUSHDMA).
PACKER_UNIT = "packer"


def drained(state: PackState | PackersState) -> int:
    """The first cycle from which no packer has work in flight."""
    return int(np.max(state.stream[..., STREAM_DRAINED]))


def accept(
    ctx: Context, state: PackState | PackersState, write_cycles: int, timing: PackTiming = PACK
) -> Retire:
    """The packers take a PACR whose L1 writes take ``write_cycles`` (timing.PackTiming): the issuing
    thread goes on once they have, and they drain later. Every packer's row keeps the latest drain
    (STALLWAIT's packer conditions wait for them all; the native engine reads the first row)."""
    taken = max(timing.issue_cycles, write_cycles)
    end = max(drained(state), ctx.cycle + taken + timing.drain_cycles)
    state.stream[..., STREAM_DRAINED] = end
    ctx.copro.extend_done(ctx.thread, end)
    return Retire(taken)


# Packers per chip: Blackhole's one packer keeps the PackState the native engine shares.
PACKER_COUNT = {"blackhole": 1, "wormhole": 4}


def new_state(arch_name: str) -> PackState | PackersState:
    """The packer state of a coprocessor of chip ``arch_name``, as at reset."""
    count = PACKER_COUNT[arch_name]
    return PackState() if count == 1 else PackersState.new(count)


def pack_state(copro: Coprocessor) -> PackState:
    """The coprocessor's packer state."""
    return copro.packer


# ------------------------------------------------------------------------------ helpers


def _field(ctx: Context, name: str) -> int:
    config = ctx.copro.config
    return config.read_field(name, config.state_id(ctx.thread))


def input_address(ctx: Context, ch0: list[int]) -> int:
    """The packers' input address generator: the Dst address counters ``ch0`` (X, Y, Z, W) through
    the PCK0 base and strides (only the low four bits of the X stride count), as both chips' pages
    give it."""
    return (
        _field(ctx, "PCK0_ADDR_BASE_REG_0_Base")
        + ch0[X] * (_field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Xstride") & 0xF)
        + ch0[Y] * _field(ctx, "PCK0_ADDR_CTRL_XY_REG_0_Ystride")
        + ch0[Z] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Zstride")
        + ch0[W] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_0_Wstride")
    ) & 0xFFFFFFFF


def _cfg(ctx: Context, name: str) -> int:
    """``Packers[0].Config[StateID].name``: THCON_SEC0_REG1_<name>."""
    return _field(ctx, f"THCON_SEC0_REG1_{name}")


def _i64(values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(np.int64)


def _is_nan(bits: np.ndarray, fmt: int) -> np.ndarray:
    if fmt in FLOAT32_LIKE:
        return ((bits & 0x7F800000) == 0x7F800000) & (bits & 0x7FFFFF != 0)
    if fmt == BF16:
        return ((bits & 0x7F80) == 0x7F80) & (bits & 0x7F != 0)
    return np.zeros(np.shape(bits), bool)  # FP16 has no NaN on the coprocessor


def _key(bits: np.ndarray | int, fmt: int) -> np.ndarray:
    """Non-NaN floats' order as signed integers (sign-magnitude; -0 == +0)."""
    top = 31 if fmt in FLOAT32_LIKE else 15
    mag = bits & ((1 << top) - 1)
    return np.where(bits >> top & 1, -mag, mag)


def _undefined(ctx: Context, message: str, value: int | None = None) -> UndefinedBehavior:
    return ctx.error(UndefinedBehavior, message, value)  # type: ignore[return-value]


def _unimplemented(ctx: Context, message: str, value: int | None = None) -> Unimplemented:
    return ctx.error(Unimplemented, message, value)  # type: ignore[return-value]


# ------------------------------------------------------------------------------ conversions


@dataclass(frozen=True)
class Conversion:
    """The configured early and late conversions (checked once per instruction)."""

    read32: bool
    inter: int  # IntermediateFormat == LateFromFormat
    out: int  # LateToFormat
    raw: bool  # Read_raw (PCK_DEST_RD_CTRL_Read_int8)
    unsigned: bool
    round10: bool


PACKER0 = "THCON_SEC0_REG1_"  # Packers[0].Config's fields


def conversion(ctx: Context, packer: str = PACKER0, *, fp8_out: bool = False) -> Conversion:
    """The configured conversions of the packer whose Config fields start ``packer``; ``fp8_out``:
    LateToFormat FP8 (e5m2) is modelled (Wormhole's FormatConversion.md)."""
    read32 = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_32b_data"))
    raw = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_int8"))
    unsigned = bool(_field(ctx, "PCK_DEST_RD_CTRL_Read_unsigned"))
    round10 = bool(_field(ctx, "PCK_DEST_RD_CTRL_Round_10b_mant"))
    if _field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_override"):
        inter = _field(ctx, "ALU_FORMAT_SPEC_REG_Dstacc_val")
    else:
        inter = _field(ctx, "ALU_FORMAT_SPEC_REG2_Dstacc")
    late_from, out = _field(ctx, packer + "In_data_format"), _field(ctx, packer + "Out_data_format")
    for what, code in (
        ("IntermediateFormat", inter),
        ("In_data_format", late_from),
        ("Out_data_format", out),
    ):
        if code not in FORMAT_NAMES:
            raise _undefined(ctx, f"{what} {code} names no format", code)
    for what, code in (("IntermediateFormat", inter), ("In_data_format", late_from)):
        if code in LATE_ONLY:
            raise _undefined(ctx, f"{what} {FORMAT_NAMES[code]} is valid only as Out_data_format", code)
    if (out not in OUT_BYTES and out not in BFP_BITS) or (out == FP8 and not fp8_out):
        raise _unimplemented(ctx, f"output format {FORMAT_NAMES[out]} is not modelled", out)
    if inter == BFP8A:
        raise _unimplemented(ctx, "the E5M7 / E5M6 intermediates (IntermediateFormat BFP8a)", inter)
    if inter != late_from:
        raise _unimplemented(
            ctx,
            f"IntermediateFormat {FORMAT_NAMES[inter]} differs from In_data_format {FORMAT_NAMES[late_from]}",
            inter,
        )
    if _field(ctx, "ALU_ROUNDING_MODE_Packer_srnd_en"):
        raise _unimplemented(ctx, "stochastic rounding (ALU_ROUNDING_MODE_Packer_srnd_en)")
    name = FORMAT_NAMES[inter]
    no = f"early conversion from Dst{'32' if read32 else '16'}b to {name} does not exist"
    if read32:
        if inter in (FP16, INT16):
            raise _undefined(ctx, no, inter)
        if inter == BF16 and round10:
            raise _unimplemented(ctx, "BF16 intermediate with Round_10b_mant (TF32 for a late TF32 -> FP16)")
        if inter == BFP8 and round10:
            raise _unimplemented(ctx, "BFP8 intermediate with Round_10b_mant")
        if inter == TF32 and raw and out != FP32:
            raise _unimplemented(ctx, "TF32 intermediate with Read_raw converted to anything but FP32")
        if inter == INT8 and not raw:
            shift = 0
            if _field(ctx, "INT_DESCALE_Enable"):
                if _field(ctx, "INT_DESCALE_Mode"):
                    raise _unimplemented(ctx, "INT_DESCALE_Mode 1 (per-z shift amounts)")
                shift = _field(ctx, "INT_DESCALE_VALUES_SEC0_Value") & 31
            if shift:
                raise _unimplemented(ctx, "INT8 with a non-zero ShiftAmount (rounding rule not given)", shift)
        if inter not in (FP32, TF32, BF16, BFP8, INT32, INT8):
            raise _unimplemented(ctx, f"{name} intermediate from Dst32b is not modelled", inter)
    else:
        if inter == INT32 or (inter == FP32 and not (round10 and not raw)):
            raise _undefined(ctx, no, inter)
        if inter in (BF16, BFP8, FP16) and round10:
            raise _unimplemented(ctx, f"{name} intermediate from Dst16b with Round_10b_mant")
        if inter == TF32 and raw:
            raise _unimplemented(ctx, "TF32 intermediate from Dst16b with Read_raw")
        if inter not in (FP32, TF32, BF16, BFP8, FP16, INT16):
            raise _unimplemented(ctx, f"{name} intermediate from Dst16b is not modelled", inter)
    ints = {INT32: INT32, INT16: INT16, INT8: INT8}
    if (
        (inter in ints) != (out in ints)
        or (inter in ints and inter != out)
        or (inter == FP32 and out == TF32)
    ):
        raise _undefined(ctx, f"late conversion {name} -> {FORMAT_NAMES[out]} does not exist", out)
    return Conversion(read32, inter, out, raw, unsigned, round10)


def early(conv: Conversion, raw: np.ndarray) -> np.ndarray:
    """EarlyFormatConversion of Dst datums (raw register-file bits) to intermediate datums: FP32 /
    TF32 / INT32 as plain 32-bit, BF16 / FP16 / INT16 as plain 16-bit, INT8 as the L1 byte."""
    inter = conv.inter
    if conv.read32:
        value = _i64(formats.dst32_to_fp32(raw))
        if inter == FP32:
            return _i64(formats.packer_round_fp32_to_tf32(value)) if conv.round10 and not conv.raw else value
        if inter == TF32:
            return value if conv.raw else _i64(formats.packer_round_fp32_to_tf32(value))
        if inter == BF16:
            return value >> 16 if conv.raw else _i64(formats.packer_round_fp32_to_bf16(value))
        if inter == BFP8:  # truncation to BF16, or rounding to E8M6 (held as BF16 bits)
            return value >> 16 if conv.raw else _i64(formats.packer_round_to_e8m6(value))
        if inter == INT32:
            return value
        # INT8 (ShiftAmount is zero)
        sign, mag = value >> 31, value & 0x7FFFFFFF
        if conv.raw:
            return mag & 0xFF if conv.unsigned else sign << 7 | (mag & 0x7F)
        if conv.unsigned:
            return np.where(sign == 1, 0, np.minimum(mag, 255))
        return sign << 7 | np.minimum(mag, 127)
    if inter == INT16:
        return _i64(raw)
    if inter == FP16:
        value = formats.dst16_to_fp16(raw)
        return _i64(value if conv.raw else formats.packer_round_fp16(value))
    value = formats.dst16_to_bf16(raw)
    if inter == BF16:
        return _i64(value if conv.raw else formats.packer_round_bf16(value))
    if inter == BFP8:  # identity, or rounding to E8M6 (held as BF16 bits)
        return _i64(value if conv.raw else formats.packer_round_to_e8m6(_i64(value) << 16))
    # TF32 (or FP32 with Round_10b_mant): no bits dropped, only the rounding flushes apply
    return _i64(formats.packer_round_fp32_to_tf32(_i64(value) << 16))


def relu(conv: Conversion, mode: int, threshold: int, bits: np.ndarray) -> np.ndarray:
    """ReLUStage on intermediate datums (ReLU.md)."""
    if mode == 0:
        return bits
    inter = BF16 if conv.inter == BFP8 else conv.inter
    if inter in (INT32, INT16, INT8):
        top = {INT32: 31, INT16: 15, INT8: 7}[inter]
        if inter == INT8 and conv.unsigned:
            return bits  # UINT8 datums are never negative
        return np.where(bits >> top & 1, 0, bits)
    t = threshold << 16 if inter in FLOAT32_LIKE else threshold
    nan = _is_nan(bits, inter)
    x = _key(bits, inter)
    t_nan = bool(_is_nan(np.int64(t), inter))
    t_key = int(_key(t, inter))
    if mode == 1:
        zero = x <= 0
    elif mode == 2:
        zero = x <= t_key if not t_nan else np.zeros(len(bits), bool)
    else:
        zero = x <= 0
        if not t_nan:
            bits = np.where(~nan & (x > t_key), t, bits)
    return np.where(~nan & zero, 0, bits)


def threshold_exp(inter: int, threshold: int, bits: np.ndarray) -> np.ndarray:
    """ApplyExponentThresholding (ExponentThresholding.md) with Exp_threshold_en set."""
    inter = BF16 if inter == BFP8 else inter
    if inter in FLOAT32_LIKE:
        exp = bits >> 23 & 0xFF
    elif inter == BF16:
        exp = bits >> 7 & 0xFF
    elif inter == FP16:
        exp = bits >> 10 & 0x1F
    else:
        return bits
    return np.where(exp < threshold, 0, bits)


def late(ctx: Context, conv: Conversion, bits: np.ndarray) -> np.ndarray:
    """The late format conversion of intermediate datums to their L1 values (OUT_BYTES wide each); for
    a BFP output, to the BF16 (BFP*) or FP16 (BFP*a, whose E5M7 step is in formats) datums that are
    then rounded in blocks of 16 (FormatConversion.md: "converted to BF16 ... then round")."""
    inter, out = conv.inter, conv.out
    if out == FP8:  # e5m2: FP16's rule ("saturate ..., then truncate"), then two mantissa bits
        return late(ctx, replace(conv, out=FP16), bits) >> 8
    inter = BF16 if inter == BFP8 else inter
    if out in BFP_BITS:
        out = FP16 if out in BFP_A else BF16
    if inter in (INT32, INT16, INT8):
        return bits
    if inter == FP16:
        if out == FP16:
            return bits
        exp, man = bits >> 10 & 0x1F, bits & 0x3FF
        problem = (exp == 31) | ((exp == 0) & (man != 0) & (out != BF16))
        if problem.any():
            value = int(bits[np.argmax(problem)])
            if value >> 10 & 0x1F == 31:
                why = f"FP16 datum {value:#06x} with exponent 31 widened to an 8-bit exponent"
            else:
                why = f"FP16 denormal {value:#06x} widened (documented as mishandled)"
            raise _unimplemented(ctx, why)
        wide = _i64(formats.fp16_to_fp32(bits))
        if out == BF16:
            return np.where((exp == 0) & (man != 0), bits & 0x8000, wide >> 16)
        return wide
    value = bits << 16 if inter == BF16 else bits  # FP32 bits
    if out in FLOAT32_LIKE:
        return value
    if out == BF16:
        return value >> 16
    # -> FP16
    mag = value & 0x7FFFFFFF
    problem = (mag > 0x38000000) & (mag < 0x38800000)  # 2**-15 < |x| < 2**-14
    if problem.any():
        first = int(value[np.argmax(problem)])
        raise _unimplemented(
            ctx, f"FP32 {first:#010x} in 2**-15 < |x| < 2**-14 to FP16 (documented as mishandled)"
        )
    return _i64(formats.fp32_to_fp16(value))


def uniform_edge_mask(ctx: Context, packer: int = 0) -> int:
    """The one EdgeMask every datum of packer ``packer`` sees (its two bits of the row-set select),
    or Unimplemented if it would depend on the position."""
    if _field(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable"):
        raise _unimplemented(ctx, "PCK_EDGE_TILE_FACE_SET_SELECT_enable (tile position generator)")
    b = _field(ctx, "PCK_EDGE_TILE_ROW_SET_SELECT_select") >> (2 * packer) & 3
    cs = {_field(ctx, f"TILE_ROW_SET_MAPPING_{b}_row_set_mapping_{y}") for y in range(16)}
    masks = {_field(ctx, f"PCK_EDGE_OFFSET_SEC{c}_mask") for c in cs}
    if len(masks) != 1:
        raise _unimplemented(
            ctx, "edge masks that differ by row (tile position generator start not documented)"
        )
    return masks.pop()


# ------------------------------------------------------------------------------ PACR


_ZERO_CHECKS = (
    "Add_l1_dest_addr_offset", "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size",
    "Auto_set_last_pacr_intf_sel", "pack_start_intf_pos", "pack_dis_y_pos_start_offset",
    "Source_interface_selection", "Downsample_rate", "All_pack_disable_zero_compress_ovrd",
)  # fmt: skip


@semantics("PACR")
def pacr(
    ctx: Context,
    cfg_context: int,
    row_pad_zero: int,
    dst_access_mode: int,
    addr_mode: int,
    addr_cnt_context: int,
    zero_write: int,
    read_intf_sel: int,
    ovrd_thread_id: int,
    concat: int,
    ctxt_ctrl: int,
    flush: int,
    last: int,
) -> Outcome:
    for name, value in (
        ("cfg_context", cfg_context),
        ("row_pad_zero", row_pad_zero),
        ("addr_cnt_context", addr_cnt_context),
        ("ovrd_thread_id", ovrd_thread_id),
        ("ctxt_ctrl", ctxt_ctrl),
    ):
        if value:
            raise _unimplemented(ctx, f"{name}={value} (no Blackhole page)", value)
    if concat > 1:
        raise _unimplemented(ctx, f"concat={concat} (Blackhole's wider Concat field)", concat)
    if read_intf_sel not in INTERFACE_MASKS:
        raise _unimplemented(ctx, f"read_intf_sel={read_intf_sel:#06b} (interface mapping not evidenced)")
    if dst_access_mode and read_intf_sel not in STRIDED_MASKS:
        raise _unimplemented(ctx, f"strided Dst access with read_intf_sel={read_intf_sel:#06b}")
    for name in _ZERO_CHECKS:
        value = _cfg(ctx, name)
        if value:
            raise _unimplemented(ctx, f"THCON_SEC0_REG1_{name}={value} is not modelled", value)
    if not _cfg(ctx, "Disable_zero_compress"):
        raise _unimplemented(ctx, "compression (Disable_zero_compress clear) is not modelled")
    if _cfg(ctx, "Downsample_mask") not in (0, 0xFFFF):
        raise _unimplemented(ctx, "downsampling (Downsample_mask) is not modelled")

    copro, thread = ctx.copro, ctx.thread
    adc, regs = copro.adc, copro.regs
    state = pack_state(copro)
    conv = conversion(ctx)
    l1_acc = bool(_cfg(ctx, "Pack_L1_Acc"))
    if l1_acc and conv.out not in ACCUMULATE:
        why = f"L1 accumulation in {FORMAT_NAMES[conv.out]} (L1 accumulates FP32 / INT32 / FP16 / BF16)"
        raise _unimplemented(ctx, why, conv.out)
    relu_mode = _field(ctx, "STACC_RELU_ApplyRelu")
    if relu_mode > 3:
        raise _unimplemented(ctx, f"STACC_RELU_ApplyRelu={relu_mode} (bits 2..3)", relu_mode)
    relu_threshold = _field(ctx, "STACC_RELU_ReluThreshold")
    if relu_mode in (2, 3):
        if conv.inter in (INT32, INT16, INT8):
            raise _unimplemented(ctx, f"threshold ReLU {relu_mode} on an integer intermediate")
        if relu_threshold & 0x8000:
            raise _undefined(ctx, f"ReLU threshold {relu_threshold:#06x} is negative", relu_threshold)
    exp_threshold = _cfg(ctx, "Exp_threshold") if _cfg(ctx, "Exp_threshold_en") else None
    if exp_threshold is not None and relu_mode == 3:
        raise _unimplemented(ctx, "exponent thresholding with ReLU mode 3 (stage order not documented)")
    edge_mode = _field(ctx, "PCK_EDGE_MODE_mode")
    edge_mask = 0xFFFF if zero_write or flush else uniform_edge_mask(ctx)
    if edge_mask != 0xFFFF and edge_mode and conv.inter not in (FP32, TF32, BF16, BFP8):
        raise _unimplemented(ctx, f"edge mode -infinity in {FORMAT_NAMES[conv.inter]}")
    masked = (NEG_INF_BF16 if conv.inter in (BF16, BFP8) else NEG_INF32) if edge_mode else 0

    # ---- input address generator
    ch0 = [int(v) for v in adc.value[thread, PACKERS, 0]]
    ch1 = [int(v) for v in adc.value[thread, PACKERS, 1]]
    addr = input_address(ctx, ch0)
    bytes_per_datum, x_mask = {0: (4, 3), 1: (2, 7)}.get(conv.inter & 3, (1, 0xF))
    if flush:
        count = 0
    else:
        count = ch1[X] - ch0[X] + 1
        if count < 0:
            raise _undefined(ctx, f"X end {ch1[X]} before X start {ch0[X]} (count wraps)", ch0[X])
    addr = ((addr // bytes_per_datum) & ~x_mask) + (ch0[X] & x_mask)
    addr += _field(ctx, "DEST_TARGET_REG_CFG_PACK_SEC0_Offset") << 4
    source = addr & 0x3FFF
    interfaces = INTERFACE_MASKS[read_intf_sel]
    if count:
        if len(interfaces) > 1 and (source & 15 or count != 16):
            raise _unimplemented(
                ctx, f"{len(interfaces)} read interfaces with {count} datums from column {source & 15}"
            )
        if len(interfaces) == 1 and (source & 15) + count > 16:
            raise _unimplemented(ctx, f"one read interface reading {count} datums from column {source & 15}")
    if conv.out in BFP_BITS and (count * len(interfaces)) % formats.BFP_BLOCK:
        raise _unimplemented(
            ctx, f"BFP output of {count * len(interfaces)} datums (a 16-datum block split across PACRs)"
        )
    # interface k starts one Dst row (16 datums) on, or in the strided mode one face (16 rows) on
    spacing = STRIDED_INTERFACE_DATUMS if dst_access_mode else 16
    offsets = spacing * np.array(interfaces, np.int64)[:, None] + np.arange(count, dtype=np.int64)
    addresses = (source + offsets.ravel()) & 0x3FFF

    # ---- fetch (with the read-after-write stall)
    from_dst = not (zero_write or flush)
    raw_datums = np.zeros(len(addresses), np.int64)
    if from_dst and len(addresses):
        remap, swizzle = dst_mapping(copro, thread)
        rows, which = np.unique(addresses >> 4, return_inverse=True)
        storage = regs.storage_rows(rows, wide=conv.read32, remap=remap, swizzle=swizzle)
        until = regs.readable_from(storage)
        if until > ctx.cycle:
            return Wait(DST_NOT_READABLE, until=until)
        if conv.read32:
            values = regs.read32(rows, remap=remap, swizzle=swizzle)
        else:
            values = regs.read16(rows, remap=remap)
        raw_datums = values[which.ravel(), addresses & 15].astype(np.int64)

    # ---- the datums' pipeline
    datums = raw_datums
    if len(addresses):
        datums = early(conv, datums)
        if from_dst and edge_mask != 0xFFFF:
            datums = np.where((edge_mask >> (addresses & 15)) & 1 == 1, datums, masked)
        datums = relu(conv, relu_mode, relu_threshold, datums)
        if exp_threshold is not None:
            datums = threshold_exp(conv.inter, exp_threshold, datums)
        datums = late(ctx, conv, datums)
    exponents = b""
    if conv.out in BFP_BITS:
        to_blocks = formats.bfp_a_from_fp16 if conv.out in BFP_A else formats.bfp_from_bf16
        shared, bfp = to_blocks(datums, BFP_BITS[conv.out])
        out, exponents = formats.bfp_datum_bytes(bfp, BFP_BITS[conv.out]), shared.astype(np.uint8).tobytes()
    else:
        width = OUT_BYTES[conv.out]
        out = datums.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :width].tobytes()

    # ---- output address generator
    data_address, exponent_address = state.data_address, state.exponent_address
    if state.needs_new_address:
        out_addr = (
            _cfg(ctx, "L1_Dest_addr") + (0 if _cfg(ctx, "Sub_l1_tile_header_size") else 1)
        ) & 0xFFFFFFFF
        yzw = (
            _field(ctx, "PCK0_ADDR_BASE_REG_1_Base")
            + ch1[Y] * _field(ctx, "PCK0_ADDR_CTRL_XY_REG_1_Ystride")
            + ch1[Z] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride")
            + ch1[W] * _field(ctx, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride")
        )
        if yzw:
            raise _unimplemented(ctx, f"YZW_Addr {yzw:#x} (Blackhole's unit for it is not documented)", yzw)
        if out_addr > _field(ctx, "THCON_SEC0_REG9_Pack_0_2_limit_address") * 2 + 1:
            out_addr -= _field(ctx, "THCON_SEC0_REG9_Pack_0_2_fifo_size") * 2
        out_addr &= 0xFFFFFFFF
        if conv.out & 2:  # OutputFormatLessThan16Bits: the exponent stream takes its address first
            exponent_address = (out_addr & L1_ADDRESS_MASK) << 4
            out_addr += _cfg(ctx, "Exp_section_size")
        data_address = (out_addr & L1_ADDRESS_MASK) << 4

    # ---- the 16-byte writes of both streams (checked before anything is written)
    flushing = bool(last or flush)
    data = stream_writes(ctx, data_address, state.pending + out, flushing)
    exps = stream_writes(ctx, exponent_address, state.exponent_pending + exponents, flushing)

    # ---- commit
    for address, buffered, whole in (data, exps):
        if whole:  # the 16-byte chunks are consecutive: one write
            chunk = buffered[:whole]
            if l1_acc:
                chunk = accumulated(copro.tile.l1[address : address + whole], chunk, conv.out)
            copro.l1_write(address, chunk, ctx.cycle)
    state.data_address = data_address + data[2]
    state.exponent_address = exponent_address + exps[2]
    state.pending = data[1][data[2] :]
    state.exponent_pending = exps[1][exps[2] :]
    state.needs_new_address = flushing
    advance_adc(copro, thread, pack_addr_mod(copro, thread, addr_mode))
    if l1_acc:  # one 128-bit read-modify-write per chunk written
        return accept(ctx, state, data[2] // 16 * PACK.l1_accumulate_cycles)
    return accept(ctx, state, -(-(len(out) + len(exponents)) // PACK.l1_bytes_per_cycle))


def advance_adc(copro: Coprocessor, which: int, mod: PackAddrMod) -> None:
    """The AddrMod step of both address generators on ADC ``which``'s packer channels: Y and Z of
    Channel[0] (input) and Channel[1] (output)."""
    adc = copro.adc
    for channel, y_clear, y_cr, y_incr, z_clear, z_incr in (
        (0, mod.ysrc_clear, mod.ysrc_cr, mod.ysrc_incr, mod.zsrc_clear, mod.zsrc_incr),
        (1, mod.ydst_clear, mod.ydst_cr, mod.ydst_incr, mod.zdst_clear, mod.zdst_incr),
    ):
        if y_clear:
            adc.set(which, PACKERS, channel, Y, 0)
        elif y_cr:
            adc.increment_cr(which, PACKERS, channel, Y, y_incr)
        else:
            adc.increment(which, PACKERS, channel, Y, y_incr)
        if z_clear:
            adc.set(which, PACKERS, channel, Z, 0)
        else:
            adc.increment(which, PACKERS, channel, Z, z_incr)


def accumulated(old: np.ndarray, new: bytes, fmt: int) -> bytes:
    """The L1 bytes after accumulating ``new`` onto ``old`` lane by lane in output format ``fmt``."""
    lanes = np.dtype("<u4") if fmt in (FP32, INT32) else np.dtype("<u2")
    before = np.frombuffer(old.tobytes(), lanes)
    after = np.frombuffer(new, lanes)
    if fmt == INT32:
        total = formats.accumulate_int32(before, after)
    else:
        total = formats.accumulate_float(before, after, ACCUMULATE[fmt])
    return total.astype(lanes).tobytes()


def stream_writes(ctx: Context, address: int, buffered: bytes, flushing: bool) -> tuple[int, bytes, int]:
    """An output stream's buffer (zero-padded to 16 bytes when flushing) and how many of its bytes go
    to L1 now, as whole 16-byte chunks from ``address``; MemoryFault if one would leave L1."""
    if flushing and len(buffered) % 16:
        buffered += bytes(16 - len(buffered) % 16)
    whole = len(buffered) - len(buffered) % 16
    l1_size = ctx.copro.arch.l1_size
    if whole and address + whole > l1_size:
        raise MemoryFault(
            f"pipe {ctx.thread} PACR: packer L1 write outside L1",
            address=address + 16 * max(0, (l1_size - address) // 16),
            size=16,
            write=True,
            core=ctx.core,
            pc=ctx.pc,
            cycle=ctx.cycle,
        )
    return address, buffered, whole


# ------------------------------------------------------------------------------ PACR_SETREG


@semantics("PACR_SETREG")
def pacr_setreg(
    ctx: Context,
    push: int,
    mode_sel: int,
    unused: int,
    disable_stall: int,
    addr_sel: int,
    stream_id: int,
    flush: int,
    last: int,
) -> Outcome:
    for name, value, expected in (
        ("push", push, 1),
        ("disable_stall", disable_stall, 3),
        ("addr_sel", addr_sel, 3),
        ("flush", flush, 1),
        ("last", last, 0),
    ):
        if value != expected:
            raise _undefined(ctx, f"{name}={value}: the documented form has {expected}", value)
    raise _unimplemented(
        ctx,
        f"PACR_SETREG AddrSel {mode_sel} AddrMid {stream_id:#x} Value10 {unused:#x}: SetRegBase / "
        "SetRegHiScaler (TDMA-RISC) and the NoC overlay registers it writes are not modelled",
    )
