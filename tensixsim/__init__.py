"""tensixsim: a cycle-approximate emulator of a Tenstorrent Tensix tile."""

from tensixsim.errors import (
    CycleLimitExceeded,
    Deadlock,
    InvalidInstruction,
    InvalidProgram,
    MemoryFault,
    SimError,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.tile import CoreStats, RunResult, Tile

__all__ = [
    "CoreStats",
    "CycleLimitExceeded",
    "Deadlock",
    "InvalidInstruction",
    "InvalidProgram",
    "MemoryFault",
    "RunResult",
    "SimError",
    "Tile",
    "UndefinedBehavior",
    "Unimplemented",
]
