"""The chip's DRAM as NoC endpoints: GDDR6 groups, interleaved buffers, host access, tile layout.

Facts (BlackholeA0/NoC/README.md, Coordinates.md): each group of three DRAM tiles exposes the same
4 GiB of GDDR6; the NoC #0 map puts groups D0..D3 in column 0 and D4..D7 in column 9. Memory is
stored sparsely in 64 KiB chunks, allocated on first write; unwritten bytes read as zero (real GDDR
holds whatever was there before: reading it is a program error the emulator does not detect).

Interleaved buffers follow tt-metal's convention: page ``p`` of a buffer lives in bank
``p % banks`` at ``base + (p // banks) * aligned_page + bank_offset[bank]``. Banks are the
architecture's ``NocFacts.dram_banks`` (Wormhole: tt-metal's twelve, two per group 1 GiB apart), or
one per group (Blackhole: bank ``i`` is group ``i``, bank offset 0).

Tile layout (tt-metal's ``TILE_LAYOUT``): a 32x32 tile is four 16x16 faces (top-left, top-right,
bottom-left, bottom-right), each stored row by row; tiles of a matrix follow in row-major order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import MemoryFault

CHUNK = 1 << 16
TILE = 32
FACE = 16
DRAM_ALIGNMENT = 64  # tt-metal's DRAM page alignment on Blackhole


@dataclass
class Dram:
    """Every DRAM group of one chip, addressed by group index and byte offset."""

    tiles: dict[tuple[int, int], int]  # NoC #0 coordinates -> group
    group_bytes: int
    chunks: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (group, chunk) -> bytes
    # tt-metal's banks: (group, NoC #0 coordinates, offset in the group); empty: one per group.
    banks: tuple[tuple[int, tuple[int, int], int], ...] = ()

    @classmethod
    def new(cls, arch: Arch) -> Dram | None:
        facts = arch.noc
        if facts is None or not facts.dram_tiles:
            return None
        return cls(dict(facts.dram_tiles), facts.dram_group_bytes, banks=facts.dram_banks)

    @property
    def groups(self) -> int:
        return len(set(self.tiles.values()))

    def endpoint(self, group: int) -> tuple[int, int]:
        """The NoC #0 coordinates the host tables name for ``group`` (its first tile, row order)."""
        return min((xy for xy, g in self.tiles.items() if g == group), key=lambda xy: (xy[1], xy[0]))

    @property
    def bank_count(self) -> int:
        return len(self.banks) or self.groups

    def bank(self, index: int) -> tuple[int, tuple[int, int], int]:
        """tt-metal's bank ``index``: (group, NoC #0 coordinates its kernels use, offset in the group)."""
        if self.banks:
            return self.banks[index]
        if not 0 <= index < self.groups:
            raise IndexError(f"no DRAM bank {index}: {self.groups} banks")
        return index, self.endpoint(index), 0

    def check(self, group: int, address: int, size: int, *, write: bool) -> None:
        if not 0 <= group < self.groups:
            raise MemoryFault(f"no DRAM group {group}", address=address, size=size, write=write)
        if address < 0 or size < 0 or address + size > self.group_bytes:
            raise MemoryFault(
                f"DRAM group {group}: access past its {self.group_bytes >> 30} GiB",
                address=address,
                size=size,
                write=write,
            )

    def read(self, group: int, address: int, size: int) -> bytes:
        self.check(group, address, size, write=False)
        out = bytearray(size)
        done = 0
        while done < size:
            where = address + done
            index, offset = divmod(where, CHUNK)
            step = min(CHUNK - offset, size - done)
            chunk = self.chunks.get((group, index))
            if chunk is not None:
                out[done : done + step] = chunk[offset : offset + step].tobytes()
            done += step
        return bytes(out)

    def write(self, group: int, address: int, data: bytes) -> None:
        self.check(group, address, len(data), write=True)
        raw = np.frombuffer(bytes(data), np.uint8)
        done = 0
        while done < raw.size:
            where = address + done
            index, offset = divmod(where, CHUNK)
            step = min(CHUNK - offset, raw.size - done)
            chunk = self.chunks.get((group, index))
            if chunk is None:
                chunk = self.chunks[(group, index)] = np.zeros(CHUNK, np.uint8)
            chunk[offset : offset + step] = raw[done : done + step]
            done += step


# ---------------------------------------------------------------------------- interleaved buffers
def aligned_page(page_size: int, alignment: int = DRAM_ALIGNMENT) -> int:
    return -(-page_size // alignment) * alignment


@dataclass(frozen=True)
class InterleavedBuffer:
    """A DRAM buffer whose pages go round-robin over ``banks`` banks from ``base`` in each."""

    base: int
    page_size: int
    pages: int
    banks: int
    alignment: int = DRAM_ALIGNMENT  # tt-metal's DRAM page alignment (NocFacts.dram_alignment)

    def location(self, page: int) -> tuple[int, int]:
        """(bank, byte address in that bank) of ``page``."""
        if not 0 <= page < self.pages:
            raise IndexError(f"page {page} outside a {self.pages}-page buffer")
        stride = aligned_page(self.page_size, self.alignment)
        return page % self.banks, self.base + (page // self.banks) * stride

    def place(self, dram: Dram, page: int) -> tuple[int, int]:
        """(group, byte address in the group) of ``page``: its bank's offset added."""
        bank, address = self.location(page)
        group, _, offset = dram.bank(bank)
        return group, address + offset

    @property
    def size(self) -> int:
        return self.page_size * self.pages

    def write(self, dram: Dram, data: bytes | np.ndarray) -> None:
        """Host write of the whole buffer (``size`` bytes, page after page)."""
        raw = _as_bytes(data)
        if len(raw) != self.size:
            raise ValueError(f"buffer holds {self.size} bytes, got {len(raw)}")
        for page in range(self.pages):
            group, address = self.place(dram, page)
            dram.write(group, address, raw[page * self.page_size : (page + 1) * self.page_size])

    def read(self, dram: Dram) -> bytes:
        parts = []
        for page in range(self.pages):
            group, address = self.place(dram, page)
            parts.append(dram.read(group, address, self.page_size))
        return b"".join(parts)


def _as_bytes(data: bytes | np.ndarray) -> bytes:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    return np.ascontiguousarray(data).tobytes()


# ---------------------------------------------------------------------------- tile layout
def tilize(matrix: np.ndarray) -> np.ndarray:
    """A (rows, cols) matrix (multiples of 32) in tile layout, as a flat array of the same dtype."""
    rows, cols = matrix.shape
    if rows % TILE or cols % TILE:
        raise ValueError(f"a {rows}x{cols} matrix is not a whole number of 32x32 tiles")
    tiles = matrix.reshape(rows // TILE, 2, FACE, cols // TILE, 2, FACE)
    # (tile row, tile col, face row, face col, row in face, col in face)
    return tiles.transpose(0, 3, 1, 4, 2, 5).reshape(-1).copy()


def untilize(flat: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The inverse of :func:`tilize`."""
    if rows % TILE or cols % TILE or flat.size != rows * cols:
        raise ValueError(f"{flat.size} values do not make a {rows}x{cols} matrix of 32x32 tiles")
    tiles = flat.reshape(rows // TILE, cols // TILE, 2, 2, FACE, FACE)
    return tiles.transpose(0, 2, 4, 1, 3, 5).reshape(rows, cols).copy()
