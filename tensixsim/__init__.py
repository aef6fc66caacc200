"""tensixsim: a cycle-approximate emulator of a Tenstorrent Tensix tile."""

from tensixsim.errors import (
    ArchitectureMismatch,
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
from tensixsim.results import CoreStats, RunResult
from tensixsim.tile import Tile

__all__ = [
    "ArchitectureMismatch",
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
