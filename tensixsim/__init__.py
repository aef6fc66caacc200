"""tensixsim: a cycle-approximate emulator of a Tenstorrent Tensix tile."""

from tensixsim.errors import (
    ArchitectureMismatch,
    CoreWhere,
    CycleLimitExceeded,
    Deadlock,
    InvalidInstruction,
    InvalidProgram,
    MemoryFault,
    RunStopped,
    SimError,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.tile import CoreStats, RunResult, Tile

__all__ = [
    "ArchitectureMismatch",
    "CoreStats",
    "CoreWhere",
    "CycleLimitExceeded",
    "Deadlock",
    "InvalidInstruction",
    "InvalidProgram",
    "MemoryFault",
    "RunResult",
    "RunStopped",
    "SimError",
    "Tile",
    "UndefinedBehavior",
    "Unimplemented",
]
