"""Sync unit: mutexes, semaphores, STALLWAIT / SEMWAIT / STREAMWAIT and the wait gate. (stub)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tensixsim.arch import Arch
from tensixsim.memory import Register

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor


@dataclass
class SyncState:
    @classmethod
    def new(cls, arch: Arch) -> SyncState:
        return cls()


def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register."""
    return {}
