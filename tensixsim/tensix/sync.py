"""Sync unit: mutexes, semaphores, STALLWAIT / SEMWAIT / STREAMWAIT and the wait gate. (stub)"""

from __future__ import annotations

from dataclasses import dataclass

from tensixsim.arch import Arch


@dataclass
class SyncState:
    @classmethod
    def new(cls, arch: Arch) -> SyncState:
        return cls()
