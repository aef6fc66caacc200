"""The TDMA-RISC register page (``RISCV_TDMA_REG_*`` in tt-metal's tensix.h).

It holds the mover (XMOV) command registers, packer status and clock-gating controls. Only the
clock-gating controls are modelled: they have no functional effect in the emulator and hold what is
written (reading 0 until then). The registers ``arch.tdma_unmodelled`` names raise
:class:`~tensixsim.errors.Unimplemented`; any other register in the page is a
:class:`~tensixsim.errors.MemoryFault` naming its offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensixsim.arch import Arch
from tensixsim.errors import Unimplemented
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, Register


@dataclass
class Tdma:
    arch: Arch
    clock_gating: dict[int, int] = field(default_factory=dict)

    def regions(self) -> list[MmioRegion]:
        base = self.arch.tdma_base
        if base is None:
            return []
        registers = {
            address - base: Register(
                name,
                read=lambda _, x=address: self.clock_gating.get(x, 0),
                write=lambda _, v, x=address: self.clock_gating.__setitem__(x, v),
            )
            for name, address in self.arch.clock_gating_registers
            if base <= address < base + PAGE
        }
        for name, address in self.arch.tdma_unmodelled:
            registers[address - base] = Register(
                name,
                read=lambda access, n=name: _unmodelled(access, n),
                write=lambda access, v, n=name: _unmodelled(access, n, v),
            )
        return [MmioRegion("tdma", base, PAGE, registers)]


def _unmodelled(access: Access, name: str, value: int | None = None) -> int:
    raise Unimplemented(
        f"{'store to' if value is not None else 'load from'} {name}: the TDMA-RISC mover command queue is "
        f"not modelled yet",
        core=access.core.name,
        pc=access.core.fault_pc(),
        cycle=access.cycle,
        value=value,
    )
