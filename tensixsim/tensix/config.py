"""Configuration registers: thread config (SETC16) and the two unit-config states. (stub)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tensixsim.arch import Arch
from tensixsim.memory import Register

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor


@dataclass
class ConfigState:
    @classmethod
    def new(cls, arch: Arch) -> ConfigState:
        return cls()


def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register."""
    return {}
