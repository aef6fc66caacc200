"""Where this tile is on each NoC (NoC #1 counts from the opposite corner) and the translation of
the coordinates in a request's ``*_ADDR_HI`` fields through the issuing NIU's tables, with the
write-back of the translated coordinates into Wormhole's ``*_ADDR_MID`` registers. A mixin of
tensixsim.noc.niu.Noc.

Coordinate translation (Coordinates.md, "Translation Algorithm"). While bit 14 of the issuing NIU's
``NIU_CFG_0`` is set, the X/Y coordinates in ``NOC_TARG_ADDR_HI`` and ``NOC_RET_ADDR_HI`` go through
:meth:`Noc.translate`, with that NIU's tables and masks, when ``NOC_CMD_CTRL`` is written; the result
is raw coordinates of the request's NoC and the request is routed as an untranslated one is. As on
Blackhole (not Wormhole) the registers keep what software wrote. Readings where the pages are silent:

- Both ``HI`` fields are translated for every request type, used or not (the page names both).
- A broadcast rectangle (``NOC_TARG_ADDR_HI`` of an atomic or inline write, ``NOC_RET_ADDR_HI`` of a
  write from L1) has its corners translated as the pairs (StartX, StartY) and (EndX, EndY), since the
  algorithm maps an ``X, Y`` pair; the span is then taken from the translated corners (MemoryMap.md).
- Bits 12..31 of a unicast ``HI`` field (reserved) and bits 24..31 of a rectangle pass unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensixsim.noc.registers import (
    CMD_AT,
    CMD_BRCST_PACKET,
    CMD_WR,
    CMD_WR_INLINE,
    CTRL,
    RET_HI,
    TARG_HI,
    TRANSLATION_ENABLE,
)

if TYPE_CHECKING:
    from tensixsim.noc.host import NocHost as _Host
else:
    _Host = object


class Translation(_Host):
    """The coordinate part of :class:`~tensixsim.noc.niu.Noc`, which provides the state named below
    and ``_config`` (a configuration register by name)."""

    def _table(self, noc: int, name: str, index: int) -> int:
        """Entry ``index`` (0..31) of the lookup table ``name``: entries of ``table_entry_bits`` packed
        from bit 0 of each 32-bit word (Blackhole: six 5-bit entries, bits 30 and 31 unused; Wormhole:
        eight 4-bit entries)."""
        bits = self.facts.registers.table_entry_bits
        word, slot = divmod(index, 32 // bits)
        return self._config(noc, f"{name}_{word}") >> bits * slot & (1 << bits) - 1

    # ------------------------------------------------------------------ coordinate translation
    def translating(self, noc: int) -> bool:
        return bool(self._config(noc, "NIU_CFG_0") & TRANSLATION_ENABLE)

    def translate(self, noc: int, x: int, y: int) -> tuple[int, int]:
        """Raw coordinates for the translated pair (x, y) (6 bits each) at NIU ``noc``
        (Coordinates.md, "Translation Algorithm"; Wormhole's: the X and Y tables alone)."""
        x5, y5 = x & 0x1F, y & 0x1F
        if self.facts.registers.translation == "tables":
            # Wormhole's tables have 32 entries per axis; a coordinate of 32 or more (6 bits) is not
            # covered by the page: its low 5 bits index the table.
            x_table, y_table = "NOC_X_ID_TRANSLATE_TABLE", "NOC_Y_ID_TRANSLATE_TABLE"
            return self._table(noc, x_table, x5), self._table(noc, y_table, y5)
        # Two bits above the last DDR table entry mark columns 9 and 0 as DRAM columns.
        flags = self._config(noc, "DDR_COORD_TRANSLATE_TABLE_5")
        dram_columns = {c for c, bit in ((9, 10), (0, 11)) if flags >> bit & 1}
        if self._config(noc, "DDR_COORD_TRANSLATE_COL_SWAP") >> y5 & 1 and (x5 ^ 9) in dram_columns:
            raw_x = x5 ^ 9
        elif self._config(noc, "NOC_ID_TRANSLATE_ROW_MASK") >> y5 & 1:
            raw_x = x
        else:
            raw_x = self._table(noc, "NOC_X_ID_TRANSLATE_TABLE", x5)
        # Y depends on the X given, not on the X produced.
        if x5 in dram_columns:
            raw_y = self._table(noc, "DDR_COORD_TRANSLATE_TABLE", y5)
        elif self._config(noc, "NOC_ID_TRANSLATE_COL_MASK") >> x5 & 1:
            raw_y = y
        else:
            raw_y = self._table(noc, "NOC_Y_ID_TRANSLATE_TABLE", y5)
        return raw_x, raw_y

    def translate_hi(self, noc: int, hi: int, rectangle: bool) -> int:
        """A ``*_ADDR_HI`` value with its coordinates translated: (x, y) in bits 0..11, and for a
        broadcast rectangle also (StartX, StartY) in bits 12..23; other bits unchanged."""
        corners = 2 if rectangle else 1
        for k in range(corners):
            shift = 12 * k
            x, y = self.translate(noc, hi >> shift & 0x3F, hi >> shift + 6 & 0x3F)
            hi = hi & ~(0xFFF << shift) | (x | y << 6) << shift
        return hi

    def _translated_fields(self, noc: int, f: list[int]) -> tuple[int, int]:
        """``NOC_TARG_ADDR_HI`` and ``NOC_RET_ADDR_HI`` of request fields ``f`` as the NIU uses them."""
        ctrl = f[CTRL]
        broadcast = bool(ctrl & CMD_BRCST_PACKET)
        # The field holding a broadcast rectangle: the target of an atomic or an inline write, the
        # return address (destination) of a write from L1.
        targ_rect = (ctrl & 3) == CMD_AT or ((ctrl & 3) == CMD_WR and bool(ctrl & CMD_WR_INLINE))
        return (
            self.translate_hi(noc, f[TARG_HI], broadcast and targ_rect),
            self.translate_hi(noc, f[RET_HI], broadcast and not targ_rect),
        )

    def coordinates(self, noc: int, position: tuple[int, int] | None = None) -> tuple[int, int]:
        """``position`` (default: this tile) on ``noc``: NoC #1 counts from the opposite corner."""
        x, y = position if position is not None else self.position
        if noc == 0:
            return x, y
        return self.facts.width - 1 - x, self.facts.height - 1 - y

    def _write_back(self, noc: int, initiator: int, targ: int, ret: int) -> None:
        """Put translated coordinates back into the ``*_ADDR_MID`` registers (Wormhole)."""
        fields = self.facts.registers.request_fields
        for name, hi in (("NOC_TARG_ADDR_MID", targ), ("NOC_RET_ADDR_MID", ret)):
            index = fields.index(name)
            word = int(self.requests[noc, initiator, index])
            self.requests[noc, initiator, index] = word & 0xF000000F | (hi & 0xFFFFFF) << 4
