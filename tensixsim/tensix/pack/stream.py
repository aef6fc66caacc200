"""The packers' output streams: their L1 addresses and 16-byte buffers between instructions
(Packers/OutputAddressGenerator.md; :class:`PackState`, :class:`PackersState`), the writes to L1 and
its accumulate (L1.md), and the pipeline that accepts a PACR and drains later.

Points the pages leave open, and the readings taken
---------------------------------------------------
- Output: datums are buffered and written to L1 as aligned 16-byte chunks at ``DataStream.ByteAddress``
  (which then advances by 16); a partial buffer stays pending across PACRs and is zero-padded and
  written on ``Last`` / ``Flush``, as OutputAddressGenerator.md says. Packer state (stream addresses,
  ``NeedsNewAddress`` flags, the pending bytes) lives in :class:`PackState`.
- A 16-byte write beyond Blackhole's 1536 KiB of L1 raises MemoryFault naming the address; every
  datum and chunk is computed first, so nothing (L1, ADCs, packer state) changes when an instruction
  raises or waits.
- L1 accumulation (``THCON_SEC0_REG1_Pack_L1_Acc``, the field tt-llk's Blackhole
  reconfigure_packer_l1_acc sets, with ``Disable_pack_zero_flags`` which only matters for
  compression): each 16-byte chunk the packer writes is added lane by lane to what L1 holds, the
  near-memory accumulate of WormholeB0 L1.md (4 x FP32, 4 x INT32 sign-magnitude with saturation,
  8 x FP16 or 8 x BF16): formats.accumulate_float / accumulate_int32, whose docstrings give the
  rounding reading (no page gives it). Other output formats raise Unimplemented. Zero padding written
  on Last / Flush accumulates like data (adding zero).

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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import MemoryFault
from tensixsim.tensix import formats
from tensixsim.tensix.formats import BF16, FP16, FP32, INT32
from tensixsim.tensix.semantics import Context, Retire
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import PACK, PackTiming

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

ACCUMULATE = {FP32: "fp32", BF16: "bf16", FP16: "fp16", INT32: "int32"}  # L1's accumulate lane formats
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
