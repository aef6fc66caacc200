"""Latency and throughput figures, one table per unit.

Figures come from the ISA documentation and are meant to be refined
against measurements; nothing else in the emulator spells a cycle count.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RiscvTiming:
    """Baby RISC-V core costs. Ordinary instructions cost one cycle each (CPI 1)."""

    mmio_load: int = 7  # an MMIO load occupies the core for at least this many cycles
    mmio_store: int = 1
    tensix_push: int = 1
    csr: int = 1
    release_delay: int = 1  # from the SOFT_RESET write to the released core's first instruction


@dataclass(frozen=True)
class RecorderTiming:
    """The stand-in consumer behind each pipe's input queue."""

    drain_interval: int = 1  # cycles between two instructions it takes from the queue


RISCV = RiscvTiming()
RECORDER = RecorderTiming()

# Loosely-timed scheduling: a core may run this many cycles ahead of the others between two
# synchronisation points. Results do not depend on it; cycle counts may move by up to about one
# quantum per cross-core handshake done through L1 polling (see docs/deviations.md).
DEFAULT_QUANTUM = 2000
