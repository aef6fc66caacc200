"""Configuration registers: thread config (SETC16) and the two unit-config states. (stub)"""

from __future__ import annotations

from dataclasses import dataclass

from tensixsim.arch import Arch


@dataclass
class ConfigState:
    @classmethod
    def new(cls, arch: Arch) -> ConfigState:
        return cls()
