"""The baby cores' debug unit: halt, continue, registers and memory through RISC_DBG_CNTL/STATUS.

The interface (the register-level protocol tt-exalens drives on Blackhole; baby_risc_debug.py of
tt-exalens 0.4.2 and its functional-worker register table): four tile-control registers,
``RISC_DBG_CNTL_0`` / ``RISC_DBG_CNTL_1`` / ``RISC_DBG_STATUS_0`` / ``RISC_DBG_STATUS_1`` (0xFFB12080..8C),
reach a small register file per core with debug hardware (BRISC, TRISC0..2: debug ids 0..3; NCRISC
has none).

- Writing ``CNTL_0`` with bit 31 set strobes an access to debug register ``bits 0..15`` of core
  ``bits 17..19``: a write (bit 16) stores ``CNTL_1`` there; a read copies the register to
  ``STATUS_1`` and sets the read-valid bit (30) of ``STATUS_0``. Software then writes ``CNTL_0`` back
  to 0 (a write without bit 31 does nothing else).
- Debug registers: 0 status (bit 0 halted; watchpoint and ebreak bits stay 0: not modelled),
  1 command, 2 / 3 arguments, 4 return value, 5 watchpoint settings, 10..17 watchpoint addresses.
- Commands (bits of register 1; bit 31 = debug mode): halt, continue, read / write a register
  (argument 0 the index, 32 the pc; argument 1 the value), read / write a 32-bit word of memory as
  the core sees it (argument 0 the address), flush (restart at argument 1), flush registers (no
  effect here). The access commands and flush need the core halted (UndefinedBehavior otherwise).

Not modelled (Unimplemented when used): single step, watchpoints (settings other than 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tensixsim.errors import UndefinedBehavior, Unimplemented

STROBE = 1 << 31
WRITE = 1 << 16
READ_VALID = 1 << 30
CORE_SHIFT, CORE_MASK = 17, 0x7
REGISTER_MASK = 0xFFFF

STATUS, COMMAND, ARG0, ARG1, RETURN_VALUE, WATCHPOINT_SETTINGS = 0, 1, 2, 3, 4, 5
WATCHPOINTS = range(10, 18)
REGISTERS = 18
PC_INDEX = 32

HALT, STEP, CONTINUE = 0x1, 0x2, 0x4
READ_REGISTER, WRITE_REGISTER, READ_MEMORY, WRITE_MEMORY = 0x8, 0x10, 0x20, 0x40
FLUSH_REGISTERS, FLUSH = 0x80, 0x100
DEBUG_MODE = 1 << 31
STATUS_HALTED = 0x1

# Debug ids of the cores with debug hardware (tt-exalens's BabyRiscInfo risc_id); NCRISC has none.
DEBUG_IDS = ("brisc", "trisc0", "trisc1", "trisc2")


@dataclass(frozen=True)
class DebugPort:
    """What the debug unit needs of the tile: per core name, at a cycle."""

    halt: Callable[[str, int], None]
    resume: Callable[[str, int], None]
    halted: Callable[[str], bool]
    read_register: Callable[[str, int], int]  # index 0..31, or PC_INDEX
    write_register: Callable[[str, int, int], None]
    read_word: Callable[[str, int], int]  # a 32-bit word as the core sees it
    write_word: Callable[[str, int, int, int], None]  # (core, address, value, cycle)


@dataclass
class RiscDebug:
    """The debug unit of one tile: the four interface registers and each core's debug registers."""

    port: DebugPort
    control: list[int] = field(default_factory=lambda: [0, 0])  # CNTL_0, CNTL_1
    status: list[int] = field(default_factory=lambda: [0, 0])  # STATUS_0, STATUS_1
    registers: np.ndarray = field(default_factory=lambda: np.zeros((len(DEBUG_IDS), REGISTERS), np.uint32))

    def write_control0(self, value: int, cycle: int) -> None:
        self.control[0] = value & 0xFFFFFFFF
        if not value & STROBE:
            return
        debug_id = value >> CORE_SHIFT & CORE_MASK
        if debug_id >= len(DEBUG_IDS):
            raise Unimplemented(f"no debug hardware with id {debug_id} (NCRISC has none)", value=value)
        core = DEBUG_IDS[debug_id]
        register = value & REGISTER_MASK
        if register >= REGISTERS:
            raise UndefinedBehavior(f"{core}: no debug register {register}", value=value)
        if value & WRITE:
            self._write(debug_id, core, register, self.control[1], cycle)
        else:
            self.status[1] = self._read(debug_id, core, register)
            self.status[0] |= READ_VALID

    def write_control1(self, value: int) -> None:
        self.control[1] = value & 0xFFFFFFFF

    def _read(self, debug_id: int, core: str, register: int) -> int:
        if register == STATUS:
            return STATUS_HALTED if self.port.halted(core) else 0
        return int(self.registers[debug_id, register])

    def _write(self, debug_id: int, core: str, register: int, value: int, cycle: int) -> None:
        if register == WATCHPOINT_SETTINGS and value:
            raise Unimplemented(f"{core}: hardware watchpoints are not modelled", value=value)
        if register == STATUS:
            raise UndefinedBehavior(f"{core}: the debug status register is read-only", value=value)
        self.registers[debug_id, register] = value
        if register == COMMAND:
            self._command(debug_id, core, value, cycle)

    def _command(self, debug_id: int, core: str, value: int, cycle: int) -> None:
        regs = self.registers[debug_id]
        command = value & ~DEBUG_MODE
        if command & STEP:
            raise Unimplemented(f"{core}: single step through the debug unit is not modelled", value=value)
        if command & HALT:
            self.port.halt(core, cycle)
        needs_halt = READ_REGISTER | WRITE_REGISTER | READ_MEMORY | WRITE_MEMORY | FLUSH
        if command & needs_halt and not self.port.halted(core):
            raise UndefinedBehavior(f"{core}: debug access while the core runs (halt it first)", value=value)
        if command & READ_REGISTER:
            regs[RETURN_VALUE] = self.port.read_register(core, self._index(core, int(regs[ARG0])))
        if command & WRITE_REGISTER:
            self.port.write_register(core, self._index(core, int(regs[ARG0])), int(regs[ARG1]))
        if command & READ_MEMORY:
            regs[RETURN_VALUE] = self.port.read_word(core, int(regs[ARG0]))
        if command & WRITE_MEMORY:
            self.port.write_word(core, int(regs[ARG0]), int(regs[ARG1]), cycle)
        if command & FLUSH:
            self.port.write_register(core, PC_INDEX, int(regs[ARG1]))
        if command & CONTINUE:
            self.port.resume(core, cycle)

    @staticmethod
    def _index(core: str, index: int) -> int:
        if not 0 <= index <= PC_INDEX:
            raise UndefinedBehavior(f"{core}: no register {index} (0..31, 32 = pc)", value=index)
        return index
