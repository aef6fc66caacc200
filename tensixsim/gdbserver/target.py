"""What a debugger can do to a tile's five baby cores: registers, memory, breakpoints, watchpoints,
single steps. Protocol-free (the RSP session in server.py speaks for it).

Breakpoints and single steps are Unicorn code hooks bounded to the addresses concerned, so code
elsewhere runs as fast as without a debugger; a hook stops its core before the instruction executes
(Unicorn checks for a stop request right after a code hook) and the tile's scheduler then waits for
the debugger (Tile._debugged_slice). Adding or removing one drops the core's translations, since
Unicorn instruments code only when it translates it. Watchpoints are memory hooks over the watched
L1 bytes. Unicorn performs the access after the hook returns, even when asked to stop, so the hook
saves what the access will change (the bytes, or the load's destination register) and the access is
undone once the core has stopped; a store into a write-protected page (another core's code or poll
loop is in it), which would reach the tile, is cancelled instead. The core then stands on the
accessing instruction, not retired, which is where GDB expects a RISC-V watchpoint to stop
("non-steppable" watchpoints: GDB steps over the instruction itself with the watchpoint removed).
Nothing else in the tile moves while a core is stopped, so a run's results and cycles are the same
with and without the debugger.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from unicorn import riscv_const as rv
from unicorn import unicorn_const as ucc

from tensixsim.errors import SimError
from tensixsim.mmio.memory import PAGE, Access
from tensixsim.riscv.core import Core, CoreState
from tensixsim.riscv.cpu import X_REGS
from tensixsim.tile import Tile

REGISTER_COUNT = 33  # x0..x31, pc: GDB's RV32 integer register set
PC_REGISTER = 32
_ALL = (1, 0)  # Unicorn's "every address" hook bounds
_OP_LOAD, _OP_STORE, _OP_AMO = 0x03, 0x23, 0x2F


class Watch(enum.Enum):
    """GDB's watchpoint kinds (Z2 / Z3 / Z4)."""

    WRITE = "watch"
    READ = "rwatch"
    ACCESS = "awatch"


@dataclass(frozen=True)
class StopEvent:
    """Why a core stopped: "break", "step", or "watch" (with ``watch`` and ``address``)."""

    reason: str
    address: int = 0
    watch: Watch | None = None


class TargetError(Exception):
    """A request the target cannot honour (unmapped memory, a bad register number); the protocol
    answers it with an error reply, the run goes on."""


@dataclass
class _Undo:
    """What a watched access changed, to be put back once the core has stopped."""

    address: int = 0
    old_bytes: bytes = b""
    rd: int = 0
    old_rd: int | None = None


class TileTarget:
    """The debug view of ``tile``; thread ``i`` (from 1) is ``tile.cores[i - 1]``."""

    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.cores = tile.cores
        self.breakpoints: dict[int, list[int]] = {}  # address -> hook handle per core
        self.watchpoints: dict[tuple[int, int, Watch], list[int]] = {}  # (address, length, kind)
        self._events: dict[int, StopEvent] = {}  # core index -> why its slice was cut
        self._undo: dict[int, _Undo] = {}
        # A core resumed on the breakpoint it stopped at executes that instruction first:
        # core index -> (pc, instructions retired).
        self._skip: dict[int, tuple[int, int]] = {}
        self._stood: dict[int, int] = {}  # core index -> the pc its last debugger stop left it at
        self._step: dict[int, tuple[int, int]] = {}  # core index -> (hook, instructions retired)

    # ------------------------------------------------------------------ registers
    def read_register(self, core: Core, number: int) -> int:
        if number == PC_REGISTER:
            return core.pc
        if 0 <= number < 32:
            return core.reg(number)
        raise TargetError(f"no register {number}")

    def write_register(self, core: Core, number: int, value: int) -> None:
        if number == PC_REGISTER:
            core.pc = value
        elif 0 <= number < 32:
            core.set_reg(number, value)  # x0 stays zero
        else:
            raise TargetError(f"no register {number}")

    # ------------------------------------------------------------------ memory
    def read_memory(self, core: Core, address: int, length: int) -> bytes:
        """``length`` bytes as ``core`` sees them: L1, its local RAM, the other cores' local RAMs,
        and the MMIO registers whose reads have no side effect (those a poll loop may be parked on:
        stream registers, semaphores...). Anything else raises TargetError."""
        found = self._ram(core, address, length)
        if found is not None:
            buffer, offset = found
            return buffer[offset : offset + length].tobytes()
        return self._read_registers(core, address, length)

    def write_memory(self, core: Core, address: int, data: bytes) -> None:
        """Write L1 or a local RAM (MMIO is not written: a write may have side effects)."""
        found = self._ram(core, address, len(data))
        if found is None:
            raise TargetError(f"cannot write {len(data)} bytes at 0x{address:08x}")
        buffer, offset = found
        if buffer is self.tile.l1:
            # As a store by another agent: stale translations dropped, pollers woken.
            self.tile.l1_store(address, bytes(data), self.tile.cycle)
        else:
            buffer[offset : offset + len(data)] = list(data)

    def _ram(self, core: Core, address: int, length: int):
        arch = self.tile.arch
        end = address + length
        if address >= 0 and end <= arch.l1_size:
            return self.tile.l1, address
        own = self.tile.local_ram[core.name]
        if arch.local_ram_base <= address and end <= arch.local_ram_base + own.nbytes:
            return own, address - arch.local_ram_base
        for facts in arch.cores:
            ram = self.tile.local_ram[facts.name]
            if facts.local_ram_alias is None:
                continue  # (Wormhole: no core sees another's local RAM)
            if facts.local_ram_alias <= address and end <= facts.local_ram_alias + ram.nbytes:
                return ram, address - facts.local_ram_alias
        return None

    def _read_registers(self, core: Core, address: int, length: int) -> bytes:
        out = bytearray()
        word = address & ~3
        while word < address + length:
            out += self._peek(core, word).to_bytes(4, "little")
            word += 4
        start = address & 3
        return bytes(out[start : start + length])

    def _peek(self, core: Core, address: int) -> int:
        for region in core.regions:
            if region.contains(address):
                register = region.register_at(address)
                # A register a poll loop may be parked on is read without side effects (Tile._try_park
                # relies on it); the others (FIFOs, push ports) are not read at all.
                if register is None or register.read is None or register.watch is None:
                    break
                try:
                    return region.read(Access(core, address, 4, core.time)) & 0xFFFFFFFF
                except SimError as error:  # a register reading it is undefined for, say
                    raise TargetError(str(error)) from None
        raise TargetError(f"no side-effect-free register at 0x{address:08x}")

    # ------------------------------------------------------------------ breakpoints
    def add_breakpoint(self, address: int) -> None:
        if address in self.breakpoints or address & 3:
            if address & 3:
                raise TargetError(f"breakpoint at misaligned address 0x{address:08x}")
            return
        handles = []
        for core in self.cores:
            handles.append(core.uc.hook_add(ucc.UC_HOOK_CODE, self._on_break, core, address, address))
            self._flush_code(core)
        self.breakpoints[address] = handles

    def remove_breakpoint(self, address: int) -> None:
        handles = self.breakpoints.pop(address, None)
        if handles is None:
            return
        for core, handle in zip(self.cores, handles, strict=True):
            core.uc.hook_del(handle)
            self._flush_code(core)

    def _on_break(self, uc, address: int, size: int, core: Core) -> None:
        skip = self._skip.get(core.index)
        if skip is not None and skip == (address, core.retired_before(address)):
            return  # the instruction the core was resumed on
        self._cut(core, StopEvent("break", address))

    def _cut(self, core: Core, event: StopEvent) -> None:
        self._events.setdefault(core.index, event)
        core.uc.emu_stop()

    # ------------------------------------------------------------------ watchpoints
    def add_watchpoint(self, address: int, length: int, kind: Watch) -> None:
        key = (address, length, kind)
        if key in self.watchpoints:
            return
        if not (address >= 0 and length > 0 and address + length <= self.tile.arch.l1_size):
            raise TargetError("watchpoints cover L1 only")
        types = {
            Watch.WRITE: ucc.UC_HOOK_MEM_WRITE,
            Watch.READ: ucc.UC_HOOK_MEM_READ,
            Watch.ACCESS: ucc.UC_HOOK_MEM_READ | ucc.UC_HOOK_MEM_WRITE,
        }[kind]
        last = address + length - 1
        self.watchpoints[key] = [
            core.uc.hook_add(types, self._on_access, (core, kind), address, last) for core in self.cores
        ]

    def remove_watchpoint(self, address: int, length: int, kind: Watch) -> None:
        handles = self.watchpoints.pop((address, length, kind), None)
        for core, handle in zip(self.cores, handles or (), strict=False):
            core.uc.hook_del(handle)

    def _on_access(self, uc, access: int, address: int, size: int, value: int, data) -> None:
        core, kind = data
        if core.index in self._events:
            return
        pc = uc.reg_read(rv.UC_RISCV_REG_PC)
        word = core.fetch(pc)
        uc.reg_write(rv.UC_RISCV_REG_PC, pc)  # Unicorn leaves right after this instruction
        undo = _Undo()
        if word & 0x7F in (_OP_STORE, _OP_AMO):
            if address // PAGE in core.protected_pages:
                # The store would reach the tile (Core._on_write_protected: another core's code or
                # poll loop is in that page), whose reactions cannot be undone: it is cancelled.
                core.cancel_protected_store()
            else:
                undo.address = address
                undo.old_bytes = self.tile.l1[address : address + size].tobytes()
        if word & 0x7F in (_OP_LOAD, _OP_AMO):
            undo.rd = (word >> 7) & 31
            undo.old_rd = core.reg(undo.rd)
        self._undo[core.index] = undo
        self._cut(core, StopEvent("watch", address, kind))

    # ------------------------------------------------------------------ stepping and resuming
    def arm_step(self, core: Core) -> None:
        """Stop ``core`` once it has retired one more instruction (a trapped Tensix word, a CSR
        access, a stall retried later: whatever it takes for one instruction to retire)."""
        self.disarm_step(core)
        handle = core.uc.hook_add(ucc.UC_HOOK_CODE, self._on_step, core, *_ALL)
        self._flush_code(core)
        self._step[core.index] = (handle, core.instructions)

    def disarm_step(self, core: Core) -> None:
        armed = self._step.pop(core.index, None)
        if armed is not None:
            core.uc.hook_del(armed[0])
            self._flush_code(core)

    def stepping(self, core: Core) -> bool:
        return core.index in self._step

    def _on_step(self, uc, address: int, size: int, core: Core) -> None:
        armed = self._step.get(core.index)
        if armed is not None and core.retired_before(address) > armed[1]:
            self._cut(core, StopEvent("step", address))

    def _flush_code(self, core: Core) -> None:
        """Drop every translation of ``core``: code hooks are compiled into translated blocks. (Dropping
        only the hooked addresses with ctl_remove_cache left a block translated before, starting at
        the hooked address, in use: measured with Unicorn 2.1.4.)"""
        core.uc.ctl_flush_tb()

    def prepare_resume(self) -> None:
        """Before the tile runs on: a core that stopped on a breakpoint (or stepped or was stopped
        onto one) executes that instruction first. Another core that merely stands at a breakpoint
        (its slice ended there) stops at it when it gets to run."""
        self._skip = {
            core.index: (core.pc, core.instructions)
            for core in self.cores
            if core.pc in self.breakpoints
            and self._stood.get(core.index) == core.pc
            and core.state in (CoreState.RUNNING, CoreState.WAITING)
        }
        self._stood.clear()

    def stopped_at(self, core: Core) -> None:
        """``core`` is the one reported stopped (an event, an interrupt, an error) at its pc."""
        self._stood[core.index] = core.pc

    def take_event(self, core: Core) -> StopEvent | None:
        """Why ``core``'s last slice was cut (None: it was not); undoes a watched access."""
        event = self._events.pop(core.index, None)
        if event is None:
            return None
        undo = self._undo.pop(core.index, None)
        if undo is not None:
            if undo.old_bytes:
                self.tile.l1[undo.address : undo.address + len(undo.old_bytes)] = list(undo.old_bytes)
            if undo.old_rd is not None:
                core.uc.reg_write(X_REGS[undo.rd], undo.old_rd)
        if core.index in self._step and event.reason in ("step", "break", "watch"):
            self.disarm_step(core)
        return event

    def remove_all(self) -> None:
        """Every breakpoint, watchpoint and step removed (detach)."""
        for address in list(self.breakpoints):
            self.remove_breakpoint(address)
        for key in list(self.watchpoints):
            self.remove_watchpoint(*key)
        for core in self.cores:
            self.disarm_step(core)
        self._skip.clear()
