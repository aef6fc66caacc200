"""Stream (NoC overlay) registers, as far as circular-buffer synchronisation uses them.

64 streams at 0xFFB40000 + id * 0x1000, one 32-bit register every 4 bytes. tt-metal keeps a
circular buffer's counters in its stream's registers: ``cb_push_back`` adds the pages it pushed to
the tiles-received register (Blackhole: 10, Wormhole: 4; ``Arch.stream_tiles_received``) and
``cb_pop_front`` adds to the tiles-acked one (Blackhole: 8, Wormhole: 3), each by a load and a store,
so they are plain storage here (a hardware auto-increment would count twice). Which stream a CB uses
is the kernel's business (current tt-metal: CB n -> stream n on Blackhole).

Modelled: those two registers of every stream, register 31 (read/write scratch), and writes to
register 270 of stream 48. Every other stream register reads 0 and ignores writes. 8- and 16-bit
loads and stores reach the addressed bytes of a register.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensixsim.arch import Arch
from tensixsim.mmio.memory import STORAGE_PYTHON, STORAGE_ZERO, Access, MmioRegion, Register

TILES_ACKED = 8  # Blackhole's (the arch's stream_tiles_acked)
TILES_RECEIVED = 10  # Blackhole's (the arch's stream_tiles_received)
SCRATCH = 31
# Blackhole's stored registers, which the native engine (generated for Blackhole only) is built with.
_STORED = (TILES_ACKED, TILES_RECEIVED, SCRATCH)
_WRITE_ONLY = {(48, 270)}  # accepted and dropped (firmware writes it during set-up)


@dataclass
class Streams:
    """The stream registers that hold state."""

    arch: Arch
    values: np.ndarray  # (stream_count, len(_STORED)) uint32

    @classmethod
    def new(cls, arch: Arch) -> Streams:
        return cls(arch, np.zeros((arch.stream_count, len(stored(arch))), np.uint32))

    @property
    def tiles_received(self) -> int:
        """The index of the tiles-received register on this chip."""
        return self.arch.stream_tiles_received

    @property
    def tiles_acked(self) -> int:
        """The index of the tiles-acked register on this chip."""
        return self.arch.stream_tiles_acked

    def address(self, stream: int, index: int) -> int:
        return self.arch.stream_base + stream * self.arch.stream_stride + 4 * index

    def read(self, stream: int, index: int) -> int:
        """Register ``index`` of stream ``stream`` (0 for registers that hold nothing)."""
        kept = stored(self.arch)
        if index in kept:
            return int(self.values[stream, kept.index(index)])
        return 0

    def write(self, stream: int, index: int, value: int) -> None:
        kept = stored(self.arch)
        if index in kept:
            self.values[stream, kept.index(index)] = value & 0xFFFFFFFF

    def regions(self, observer: Callable[[int, int, int, Access], None] | None = None) -> list[MmioRegion]:
        """One page per stream; unmodelled registers read 0 and ignore writes. ``observer(stream,
        index, value, access)`` is told of every write to a register that holds state."""

        def write(access: Access, value: int, stream: int, index: int) -> None:
            self.write(stream, index, value)
            if observer is not None:
                observer(stream, index, value & 0xFFFFFFFF, access)

        regions = []
        flat = self.values.reshape(-1)  # a view: what native reads see (storage_current)
        for stream in range(self.arch.stream_count):
            base = self.address(stream, 0)
            registers = {
                4 * index: Register(
                    f"STREAM{stream}_REG{index}",
                    read=lambda _, s=stream, i=index: self.read(s, i),
                    write=lambda access, v, s=stream, i=index: write(access, v, s, i),
                    watch="write",
                )
                for index in stored(self.arch)
            }
            registers |= {
                4 * index: Register(f"STREAM{s}_REG{index}", write=lambda _a, _v: None)
                for s, index in _WRITE_ONLY
                if s == stream
            }
            regions.append(
                MmioRegion(
                    f"stream{stream}",
                    base,
                    self.arch.stream_stride,
                    registers,
                    fallback=_IGNORED,
                    # tt-metal's kernels read the 16-bit tile counters with lhu, on hardware.
                    byte_enables=True,
                    storage=(flat, self._slots(stream)),
                )
            )
        return regions

    def _slots(self, stream: int) -> np.ndarray:
        """Per register of ``stream``'s page: where its value lives in ``values`` (MmioRegion.storage)."""
        slots = np.full(self.arch.stream_stride // 4, STORAGE_ZERO, np.int32)
        kept = stored(self.arch)
        for column, index in enumerate(kept):
            slots[index] = stream * len(kept) + column
        for s, index in _WRITE_ONLY:
            if s == stream:
                slots[index] = STORAGE_PYTHON  # (reading it is a fault: Python reports it)
        return slots

    def storage_current(self, values: np.ndarray) -> bool:
        """Native reads of the storage given out as ``values`` still equal ``read``'s (neither the
        array nor ``read`` was replaced)."""
        return values.base is self.values and "read" not in vars(self)


def stored(arch: Arch) -> tuple[int, int, int]:
    """The registers of a stream that hold state: tiles acked, tiles received, scratch (the columns of
    ``Streams.values``)."""
    return (arch.stream_tiles_acked, arch.stream_tiles_received, SCRATCH)


def _read_zero(_: Access) -> int:
    return 0


def _ignore(_: Access, __: int) -> None:
    return None


_IGNORED = Register("unmodelled stream register", read=_read_zero, write=_ignore, watch="write")
