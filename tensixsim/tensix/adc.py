"""Address counters: ADCs (unpackers, packer) and RWCs (matrix unit). (stub)"""

from __future__ import annotations

from dataclasses import dataclass

from tensixsim.arch import Arch


@dataclass
class AdcState:
    @classmethod
    def new(cls, arch: Arch) -> AdcState:
        return cls()
