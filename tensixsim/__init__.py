"""tensixsim: a cycle-approximate emulator of a Tenstorrent Tensix tile."""

from tensixsim.errors import (
    CoreWhere,
    CycleLimitExceeded,
    Deadlock,
    InvalidInstruction,
    InvalidProgram,
    MemoryFault,
    RunInterrupted,
    RunStopped,
    SimError,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.tile import CoreStats, RunResult, Tile

__all__ = [
    "CoreStats",
    "CoreWhere",
    "CycleLimitExceeded",
    "Deadlock",
    "InvalidInstruction",
    "InvalidProgram",
    "MemoryFault",
    "RunInterrupted",
    "RunResult",
    "RunStopped",
    "SimError",
    "Tile",
    "UndefinedBehavior",
    "Unimplemented",
]
