"""MOP and replay expanders. (stub)"""

from __future__ import annotations

from dataclasses import dataclass

from tensixsim.arch import Arch


@dataclass
class FrontendState:
    @classmethod
    def new(cls, arch: Arch) -> FrontendState:
        return cls()
