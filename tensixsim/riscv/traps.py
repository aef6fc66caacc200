"""What Unicorn hands back to Python from a core's instruction stream: trapped instructions (inline
Tensix words and the pushes they make, with the store-pushes and the pushes the native hooks took;
Zba/Zbb where the hooks did not execute it; CSRs; ``ecall``), RISC-V exceptions and Unicorn's own
errors, named as SimErrors. A mixin of tensixsim.riscv.core.Core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from unicorn import Uc, UcError
from unicorn import riscv_const as rv
from unicorn import unicorn_const as ucc

from tensixsim.errors import InvalidInstruction, InvalidProgram, MemoryFault, SimError
from tensixsim.mmio.memory import Stall
from tensixsim.riscv import bitmanip
from tensixsim.riscv.core_state import CoreState
from tensixsim.riscv.cpu import (
    _OPCODE_AMO,
    EXC_BREAKPOINT,
    EXC_ECALL_U,
    EXC_FETCH_FAULT,
    EXC_FETCH_MISALIGNED,
    EXC_ILLEGAL,
    EXC_LOAD_FAULT,
    EXC_LOAD_MISALIGNED,
    EXC_STORE_FAULT,
    EXC_STORE_MISALIGNED,
)
from tensixsim.tensix.frontend.capture import (
    CORE_INDEX,
    QE_CORE,
    QE_CYCLE,
    QE_FIELDS,
    QE_INLINE,
    QE_PC,
    QE_WORD,
)

if TYPE_CHECKING:
    from tensixsim.riscv.csrs import CsrFile
    from tensixsim.riscv.native import Hooks
    from tensixsim.tile import Tile

_EBREAK = 0x00100073


class Traps:
    """The trap part of :class:`~tensixsim.riscv.core.Core`, which provides the state named below
    (``Core._clear`` and ``Core._init_cpu``, which installs ``_on_exception`` as the interrupt hook),
    its clock (``now``, ``_natural``), its registers (``reg``, ``set_reg``), ``_fail`` and
    ``_stall``; ``run_slice`` calls ``_drain_pushes``, ``_store_push`` and ``_unicorn_error``."""

    uc: Uc
    hooks: Hooks
    tile: Tile
    csrs: CsrFile
    name: str
    state: CoreState
    error: BaseException | None
    exit_code: int | None
    wait_key: tuple | None
    wait_reason: str
    inline_pipe: int | None
    tensix_pushed: int
    _l1_words: np.ndarray
    _push_ring: np.ndarray
    _slice_start: int

    if TYPE_CHECKING:

        def now(self, pc: int) -> int: ...
        def _natural(self, pc: int) -> int: ...
        def reg(self, which: int | str) -> int: ...
        def set_reg(self, which: int | str, value: int) -> None: ...
        def _fail(self, error: BaseException) -> None: ...
        def _stall(self, stall: Stall, pc: int, cycle: int) -> None: ...

    # ------------------------------------------------------------------ Unicorn's errors, pushes
    def _unicorn_error(self, exc: UcError) -> SimError:
        """Translate an error Unicorn reports itself (the hooks record most faults first)."""
        pc = self.uc.reg_read(rv.UC_RISCV_REG_PC)
        cycle = self.now(pc)  # the failing instruction's issue cycle
        if exc.errno == ucc.UC_ERR_INSN_INVALID:
            word = self.fetch(pc)
            if word == _EBREAK:
                return InvalidProgram("ebreak", core=self.name, pc=pc, cycle=cycle)
            return InvalidInstruction("illegal instruction", core=self.name, pc=pc, cycle=cycle, value=word)
        fetch = exc.errno in (ucc.UC_ERR_FETCH_UNMAPPED, ucc.UC_ERR_FETCH_PROT, ucc.UC_ERR_FETCH_UNALIGNED)
        return MemoryFault(
            f"{'instruction fetch' if fetch else 'access'} failed ({exc})",
            address=pc,
            size=4,
            write=False,
            core=self.name,
            pc=pc,
            cycle=cycle,
        )

    def _drain_pushes(self) -> None:
        """Hand the pushes the native hooks took to the tile, in order (before any Python work).

        Pushes that went straight into the native engine are counted; from here on in the slice,
        Python sees every push (it may change what the engine was told at slice start)."""
        s = self.hooks.state
        s.engine = None
        s.sync_valid = 0  # Python may wake a core here: the sync limit is asked again
        storage = self.hooks.storage
        if storage is not None:
            storage.engine = storage.asked = 0
        if s.engine_pushes:
            self.tile.note_pushed(self, s.pushed_pipes)
            s.pushed_pipes = 0
            self.tensix_pushed += s.engine_pushes
            self.tile.note_side_effect(s.engine_pushes)
            s.engine_pushes = 0
        count = s.push_count
        if not count:
            return
        s.push_count = 0
        s.pushed_pipes = 0  # (push_batch notes the ring's pipes)
        ring = self._push_ring[:count].astype(np.int64)  # word, pc, done, pipe (bit 8: inline)
        rows = np.empty((count, QE_FIELDS), np.int64)
        rows[:, QE_WORD], rows[:, QE_PC] = ring[:, 0], ring[:, 1]
        # The hooks' cycle, relative to the slice's start (signed: a word fused with the words
        # that ended the slice before is dated in their cycle).
        rows[:, QE_CYCLE] = self._slice_start + ring[:, 2].astype(np.int32)
        rows[:, QE_CORE] = CORE_INDEX[self.name]
        rows[:, QE_INLINE] = ring[:, 3] >> 8
        pipes = ring[:, 3] & 0xFF
        for pipe in sorted(set(pipes.tolist())):  # in order within each pipe
            self.tile.push_batch(self, pipe, rows[pipes == pipe])

    def _store_push(self, pc: int, cycle: int) -> bool:
        """A store-push the native hooks could not take; True when it has now been accepted."""
        s = self.hooks.state
        if not s.fault_write:
            self.error = MemoryFault(
                "Tensix push port takes only 32-bit stores to its first word",
                address=s.fault_addr,
                size=s.fault_size,
                write=False,
                core=self.name,
                pc=pc,
                cycle=cycle,
            )
            return False
        try:
            self.tile.push(self, s.pending_pipe, s.pending_word, pc, cycle, inline=False)
        except Stall as stall:
            if stall.until is not None and stall.until > cycle:
                self.hooks.state.extra += stall.until - self._natural(pc)
            elif stall.wait_key is not None:
                self.state = CoreState.WAITING
                self.wait_key = stall.wait_key
            self.wait_reason = stall.reason
            return False
        return True

    # ------------------------------------------------------------------ trapped instructions
    def _on_exception(self, uc: Uc, intno: int, _: object) -> None:
        # Exceptions must not cross the C boundary: every path records and stops instead.
        self.hooks.l0_restore()  # (the Python hooks' twin of native.c's, which already did)
        next_pc = uc.reg_read(rv.UC_RISCV_REG_PC)
        pc = next_pc - 4
        try:
            self._drain_pushes()
            s = self.hooks.state
            if pc == s.block_addr + s.block_size:
                # QEMU leaves a trapping instruction out of its block's size unless it opens the
                # block; count it here so that every retired instruction is counted once.
                s.icount += 1
                s.block_size += 4
            if s.probing and not self.hooks.native and not self._bitmanip_trap(intno, pc):
                # (native.c's tsim_intr_hook does this first)
                if s.probe_unsynced:
                    s.probe_wrote = 1
                    self.hooks.probe_stop(uc, pc)
                    return
                s.probe_strict = 1
            if intno == EXC_ILLEGAL:
                self._illegal(pc)
            elif intno == EXC_ECALL_U:
                self.exit_code = uc.reg_read(rv.UC_RISCV_REG_A0)
                self.state = CoreState.FINISHED
                uc.emu_stop()
            elif intno == EXC_BREAKPOINT:
                self._fail(InvalidProgram("ebreak", core=self.name, pc=pc, cycle=self.now(pc)))
            else:
                self._fail(self._exception_fault(intno, pc))
        except BaseException as exc:
            self._fail(exc)
        if self.error is not None:
            # A failing instruction did not retire: the core stays on it (running on fails again).
            uc.reg_write(rv.UC_RISCV_REG_PC, pc)

    def _bitmanip_trap(self, intno: int, pc: int) -> bool:
        """The trap at ``pc`` is a Zba/Zbb instruction this architecture has (no lasting effect)."""
        if intno != EXC_ILLEGAL or not self.tile.arch.has_zba_zbb:
            return False
        word = self.fetch(pc)
        return word & 3 == 3 and bitmanip.decode(word) is not None

    def _exception_fault(self, intno: int, pc: int) -> SimError:
        kinds = {
            EXC_FETCH_MISALIGNED: "misaligned instruction fetch",
            EXC_FETCH_FAULT: "instruction fetch fault",
            EXC_LOAD_MISALIGNED: "misaligned load",
            EXC_LOAD_FAULT: "load access fault",
            EXC_STORE_MISALIGNED: "misaligned store/AMO",
            EXC_STORE_FAULT: "store access fault",
        }
        message = kinds.get(intno, f"unexpected RISC-V exception {intno}")
        return MemoryFault(
            message,
            address=pc,
            size=4,
            write=intno in (6, 7),
            core=self.name,
            pc=pc,
            cycle=self.now(pc + 4),
        )

    def fetch(self, pc: int) -> int:
        if 0 <= pc < self.tile.arch.l1_size:
            return int(self._l1_words[pc >> 2])
        return int.from_bytes(self.uc.mem_read(pc, 4), "little")

    def _illegal(self, pc: int) -> None:
        word = self.fetch(pc)
        if word & 3 != 3:
            self._tensix_word(pc, word)
            return
        arch = self.tile.arch
        decoded = bitmanip.decode(word)
        if decoded is not None and arch.has_zba_zbb:
            value = bitmanip.execute(decoded, self.reg)
            self.set_reg(decoded.rd, value)
            return
        is_csr = word & 0x7F == 0x73 and (word >> 12) & 7
        if is_csr and arch.has_csrs:
            self._csr(pc, word)
            return
        # Instructions of extensions this chip's cores lack (on Wormhole: RV32IM only): name them.
        lacking = (
            "a Zba/Zbb instruction" if decoded is not None else
            "an atomic memory operation (Zaamo)" if word & 0x7F == _OPCODE_AMO and not arch.has_zaamo else
            f"a CSR instruction (CSR 0x{word >> 20:03x})" if is_csr else None
        )  # fmt: skip
        if lacking is not None:
            raise InvalidInstruction(
                f"{lacking}: {arch.name}'s baby cores do not have it (ISA {arch.isa_string_prefix})",
                core=self.name,
                pc=pc,
                cycle=self.now(pc),
                value=word,
            )
        raise InvalidInstruction("illegal instruction", core=self.name, pc=pc, cycle=self.now(pc), value=word)

    def _tensix_word(self, pc: int, word: int) -> None:
        if self.inline_pipe is None:
            raise InvalidInstruction(
                f"Tensix instruction word on {self.name}, which cannot push Tensix instructions",
                core=self.name,
                pc=pc,
                cycle=self.now(pc),
                value=word,
            )
        instruction = ((word >> 2) | (word << 30)) & 0xFFFFFFFF
        if not self._push(self.inline_pipe, instruction, pc, inline=True):
            self.uc.reg_write(rv.UC_RISCV_REG_PC, pc)  # retry the word when resumed
            self.uc.emu_stop()

    def _push(self, pipe: int, instruction: int, pc: int, *, inline: bool) -> bool:
        """Push into ``pipe``; False when the core must stop and retry later."""
        cycle = self.now(pc)
        try:
            self.tile.push(self, pipe, instruction, pc, cycle, inline=inline)
        except Stall as stall:
            self._stall(stall, pc, cycle)
            return False
        if self.hooks.native:
            # The native hooks ran out of known room; the queue has drained since the slice began.
            # The room at this push's own cycle: a fused word may follow in the same cycle, and a
            # slot the pipe frees at a cycle takes a push only from the next (as in the native engine).
            self.hooks.state.push_free = self.tile.push_room(self, cycle)
        return True

    @property
    def cfg0(self) -> int:
        return self.csrs.cfg0

    @property
    def csr_values(self) -> dict[int, int]:
        """The values of the CSRs that keep one (by number)."""
        return self.csrs.values

    def _csr(self, pc: int, word: int) -> None:
        csr, funct3 = word >> 20, (word >> 12) & 7
        rd, field = (word >> 7) & 31, (word >> 15) & 31
        operand = field if funct3 & 4 else self.reg(field)
        swap = funct3 & 3 == 1
        # Zicsr: csrrw with rd = x0 does not read the CSR; csrrs / csrrc with x0 (or 0) do not write it.
        old = 0 if swap and rd == 0 else self.csrs.read(csr, pc)
        if swap or field != 0:
            new = {1: operand, 2: old | operand, 3: old & ~operand}[funct3 & 3]
            self.csrs.write(csr, new & 0xFFFFFFFF, pc)
        self.set_reg(rd, old)
