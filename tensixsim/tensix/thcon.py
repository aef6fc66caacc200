"""Scalar unit (ThCon): GPRs and the DMAREG instructions, loads/stores, atomics. (stub)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tensixsim.arch import Arch
from tensixsim.memory import Register

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor


@dataclass
class ThconState:
    @classmethod
    def new(cls, arch: Arch) -> ThconState:
        return cls()


def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register."""
    return {}
