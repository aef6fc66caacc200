"""Tile control registers: soft reset, reset PCs and their overrides, the wall clock, clock gating."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tensixsim.arch import Arch
from tensixsim.memory import Access, MmioRegion, Register

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core

# Called when SOFT_RESET_0 is written: (new value, cycle, writing core or None for the host).
ResetWriter = Callable[[int, int, "Core | None"], None]


@dataclass
class TileControl:
    """The values behind the tile-control registers."""

    arch: Arch
    soft_reset: int
    reset_pc: dict[str, int]  # the programmable reset PCs (TRISCs, NCRISC)
    trisc_override: int = 0
    ncrisc_override: int = 0
    wall_latched_high: int = 0
    clock_gating: dict[int, int] = field(default_factory=dict)  # address -> value (no effect)
    _names: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def new(cls, arch: Arch) -> TileControl:
        pcs = {c.name: c.default_reset_pc for c in arch.cores if c.reset_pc_register is not None}
        return cls(arch, arch.soft_reset_all, pcs)

    def reset_pc_of(self, name: str) -> int:
        """Where ``name`` starts when released: its reset-PC register if overridden, else the default."""
        facts = self.arch.core(name)
        if facts.reset_pc_register is None:
            return facts.default_reset_pc
        override = self.trisc_override if facts.pipe is not None else self.ncrisc_override
        enabled = override >> facts.reset_pc_override_bit & 1
        return self.reset_pc[name] if enabled else facts.default_reset_pc

    def region(self, write_soft_reset: ResetWriter) -> MmioRegion:
        a = self.arch
        base = a.tile_control_base

        def wall_low(access: Access) -> int:
            # Reading the low word latches the high word (read back at WALL_CLOCK_H_AT).
            self.wall_latched_high = access.cycle >> 32
            return access.cycle & 0xFFFFFFFF

        def setter(attribute: str, mask: int) -> Callable[[Access, int], None]:
            return lambda _, value: setattr(self, attribute, value & mask)

        registers = {
            a.soft_reset_register - base: Register(
                "SOFT_RESET_0",
                read=lambda _: self.soft_reset,
                write=lambda access, value: write_soft_reset(value, access.cycle, access.core),
            ),
            a.wall_clock_low - base: Register("WALL_CLOCK_L", read=wall_low),
            a.wall_clock_high - base: Register("WALL_CLOCK_H", read=lambda access: access.cycle >> 32),
            a.wall_clock_high_latched - base: Register(
                "WALL_CLOCK_H_AT", read=lambda _: self.wall_latched_high
            ),
            a.trisc_reset_pc_override_register - base: Register(
                "TRISC_RESET_PC_OVERRIDE",
                read=lambda _: self.trisc_override,
                write=setter("trisc_override", 7),
            ),
            a.ncrisc_reset_pc_override_register - base: Register(
                "NCRISC_RESET_PC_OVERRIDE",
                read=lambda _: self.ncrisc_override,
                write=setter("ncrisc_override", 1),
            ),
        }
        for name, address in a.clock_gating_registers:
            if base <= address < base + a.tile_control_size:
                registers[address - base] = Register(
                    name,
                    read=lambda _, x=address: self.clock_gating.get(x, 0),
                    write=lambda _, v, x=address: self.clock_gating.__setitem__(x, v),
                )
        for facts in a.cores:
            if facts.reset_pc_register is not None:
                registers[facts.reset_pc_register - base] = Register(
                    f"{facts.name.upper()}_RESET_PC",
                    read=lambda _, n=facts.name: self.reset_pc[n],
                    write=lambda _, v, n=facts.name: self.reset_pc.__setitem__(n, v),
                )
        return MmioRegion("tile_control", base, a.tile_control_size, registers)
