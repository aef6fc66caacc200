"""What a baby core is doing, as the scheduler, the tile and the debug unit see it. Its own module so
that the core's mixins (riscv/traps.py) can set it without importing riscv/core.py, which imports them.
"""

from __future__ import annotations

import enum


class CoreState(enum.Enum):
    RESET = "reset"  # held in soft reset
    RUNNING = "running"
    WAITING = "waiting"  # parked until a model event wakes it
    FINISHED = "finished"  # executed ecall
    HALTED = "halted"  # stopped by the debug unit (tensixsim.mmio.risc_debug) until it continues
