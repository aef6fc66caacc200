"""The tile's debug daisychain, as far as it is modelled: the cores' program counters.

``DBG_BUS_CNTL_REG`` (0xFFB12054) selects a 32-bit slice of one signal group: enable bit 29,
read select bits 25..26, daisy select bits 16..23, signal select bits 0..15; ``DBG_RD_DATA``
(0xFFB1205C) reads it. Selections (tt-exalens 0.4.2, hardware/blackhole/
functional_worker_debug_bus_signals.py: ``<core>_pc``, mask 0x3FFFFFFF): daisy 7, read select 1,
signal 2 * k + 1 with k = 5, 6, 7, 8, 12 for BRISC, TRISC0, TRISC1, TRISC2, NCRISC. The slice holds
the core's pc in bits 0..29 (the next instruction it executes).

Any other selection is Unimplemented when read (the daisychain carries thousands of signals).
"""

from __future__ import annotations

from tensixsim.errors import Unimplemented

ENABLE = 1 << 29
PC_MASK = 0x3FFFFFFF
PC_SIGNALS = {
    (1, 7, 2 * k + 1): core
    for core, k in (("brisc", 5), ("trisc0", 6), ("trisc1", 7), ("trisc2", 8), ("ncrisc", 12))
}


def selection(control: int) -> tuple[int, int, int]:
    """(read select, daisy select, signal select) of a DBG_BUS_CNTL_REG value."""
    return control >> 25 & 0x3, control >> 16 & 0xFF, control & 0xFFFF


def signal_core(control: int) -> str:
    """The core whose pc ``control`` selects; Unimplemented for every other signal."""
    core = PC_SIGNALS.get(selection(control)) if control & ENABLE else None
    if core is None:
        rd, daisy, sig = selection(control)
        raise Unimplemented(
            f"debug bus signal (read select {rd}, daisy {daisy}, signal {sig}) not modelled "
            "(only the cores' pcs are)",
            value=control,
        )
    return core
