"""The TDMA-RISC register page (``RISCV_TDMA_REG_*`` in tt-metal's tensix.h).

It holds the mover (XMOV) command registers, packer status and clock-gating controls. The
clock-gating controls are modelled (they have no functional effect in the emulator and hold what is
written, reading 0 until then), and on a tile whose NCRISC has an instruction RAM (Wormhole) the
mover command queue as :class:`TdmaMover` describes. The registers ``arch.tdma_unmodelled`` names raise
:class:`~tensixsim.errors.Unimplemented`; any other register in the page is a
:class:`~tensixsim.errors.MemoryFault` naming its offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import SimError, UndefinedBehavior, Unimplemented
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, Register
from tensixsim.tensix.mover import transfer_cycles

# TDMA-RISC.md's command processor: opcodes, and the mover's directions (Mover.md).
CMD_MOVER, CMD_MOVER_WAIT, CMD_L1_WRITE, CMD_NOP = 0x40, 0x46, 0x66, 0x89
L1_TO_L0, L1_TO_L1 = 1, 3
IRAM_WINDOW = 0x40000  # where the mover sees RISCV NC's instruction RAM (Mover.md)
_QUEUE_CAPACITY = 4
# RISCV_TDMA_REG_STATUS bits (TDMA-RISC.md StatusBits): mover busy 0, queue empty 3, parameter queue
# empty 5, the queue's remaining capacity in bits 8..15.
_STATUS_IDLE = 1 << 3 | 1 << 5 | _QUEUE_CAPACITY << 8


@dataclass
class TdmaMover:
    """TDMA-RISC's command queue in front of the mover, as a Wormhole tile has it.

    A command is processed when it is written (the queue never fills: a deviation in timing only),
    and the mover is busy for the transfer's cycles (mover.transfer_cycles) from then on, which
    ``STATUS`` shows. Supported: the mover command with parameters copying L1 to RISCV NC's
    instruction RAM (how tt-metal's NCRISC firmware loads a kernel) or L1 to L1, the mover-wait and
    NOP commands. The compact command form, the L1 write command and the mover's other directions
    raise Unimplemented; an undocumented opcode is UndefinedBehavior."""

    iram: np.ndarray | None  # RISCV NC's instruction RAM, as the tile holds it
    l1: np.ndarray
    forget_iram_code: Callable[[int, int], None]  # (lo, hi) of the instruction RAM rewritten
    params: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    busy_until: int = 0

    def command(self, access: Access, cmd: int) -> None:
        opcode = cmd & 0xFF
        if opcode in (CMD_MOVER_WAIT, CMD_NOP):
            return  # commands run when written: the mover has already finished
        if opcode != CMD_MOVER:
            kind = Unimplemented if opcode == CMD_L1_WRITE else UndefinedBehavior
            raise _error(
                kind, access, f"TDMA-RISC command 0x{cmd:08x} (opcode 0x{opcode:02x}) is not modelled"
            )
        if cmd >> 31:
            raise _error(
                Unimplemented, access, f"TDMA-RISC compact mover command 0x{cmd:08x} is not modelled"
            )
        src, dst = self.params[0] << 4, self.params[1] << 4
        count, mode = (self.params[2] & 0xFFFF) << 4, self.params[3] & 3
        if mode == L1_TO_L0 and self.iram is not None and dst >> 16 == IRAM_WINDOW >> 16:
            target, offset = self.iram, dst - IRAM_WINDOW
        elif mode == L1_TO_L1:
            target, offset = self.l1, dst
        else:
            raise _error(Unimplemented, access, f"a TDMA-RISC mover transfer to 0x{dst:x} in mode {mode}")
        if target is self.l1 and count and src < dst + count and dst < src + count:
            raise _error(UndefinedBehavior, access, f"mover copy 0x{src:x} -> 0x{dst:x} overlaps itself")
        if src + count > self.l1.size or offset + count > target.size:
            raise _error(
                UndefinedBehavior,
                access,
                f"mover transfer of {count} bytes 0x{src:x} -> 0x{dst:x} leaves its memory",
            )
        target[offset : offset + count] = self.l1[src : src + count]
        if target is self.iram:
            self.forget_iram_code(offset, offset + count)
        self.busy_until = access.cycle + transfer_cycles(mode, count)

    def status(self, access: Access) -> int:
        return _STATUS_IDLE | int(access.cycle < self.busy_until)


def _error(kind: type[SimError], access: Access, message: str) -> SimError:
    return kind(message, core=access.core.name, pc=access.core.fault_pc(), cycle=access.cycle)


@dataclass
class Tdma:
    arch: Arch
    clock_gating: dict[int, int] = field(default_factory=dict)
    mover: TdmaMover | None = None  # the command queue, where the architecture's page has it modelled

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
        if self.mover is not None:
            mover = self.mover
            for i, name in enumerate(("XMOV_SRC_ADDR", "XMOV_DST_ADDR", "XMOV_SIZE", "XMOV_DIRECTION")):
                registers[4 * i] = Register(
                    f"RISCV_TDMA_REG_{name}",
                    read=lambda _: 0,
                    write=lambda _, v, i=i: mover.params.__setitem__(i, v),
                )
            registers[0x10] = Register("RISCV_TDMA_REG_COMMAND_ADDR", read=lambda _: 0, write=mover.command)
            registers[0x14] = Register("RISCV_TDMA_REG_STATUS", read=mover.status, write=lambda _, v: None)
        for name, address in self.arch.tdma_unmodelled:
            if self.mover is not None and address - base in registers:
                continue
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
