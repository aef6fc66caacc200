"""The tile's debug daisychain, as far as it is modelled: the cores' program counters.

``DBG_BUS_CNTL_REG`` (0xFFB12054) selects a 32-bit slice of one signal group: enable bit 29,
read select bits 25..26, daisy select bits 16..23, signal select bits 0..15; ``DBG_RD_DATA``
(0xFFB1205C) reads it. Which slice carries which core's pc (the next instruction it executes), and
under which mask, differs between chips: ``Arch.debug_bus_pcs`` / ``debug_bus_pc_mask``.

Any other selection is Unimplemented when read (the daisychain carries thousands of signals).
"""

from __future__ import annotations

from tensixsim.errors import Unimplemented

ENABLE = 1 << 29


def selection(control: int) -> tuple[int, int, int]:
    """(read select, daisy select, signal select) of a DBG_BUS_CNTL_REG value."""
    return control >> 25 & 0x3, control >> 16 & 0xFF, control & 0xFFFF


def signal_core(control: int, pc_signals: dict[tuple[int, int, int], str]) -> str:
    """The core whose pc ``control`` selects (``pc_signals``: the chip's table); Unimplemented for every
    other signal."""
    core = pc_signals.get(selection(control)) if control & ENABLE else None
    if core is None:
        rd, daisy, sig = selection(control)
        raise Unimplemented(
            f"debug bus signal (read select {rd}, daisy {daisy}, signal {sig}) not modelled "
            "(only the cores' pcs are)",
            value=control,
        )
    return core
