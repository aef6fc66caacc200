"""Scalar unit (ThCon): GPRs and the DMAREG instructions, loads/stores, atomics. (stub)"""

from __future__ import annotations

from dataclasses import dataclass

from tensixsim.arch import Arch


@dataclass
class ThconState:
    @classmethod
    def new(cls, arch: Arch) -> ThconState:
        return cls()
