"""MOP and replay expanders: the first two stages of each Tensix pipe's frontend.

Functional model: tt-isa-documentation, WormholeB0/TensixTile/TensixCoprocessor/MOPExpander.md,
MOP.md, MOP_CFG.md and REPLAY.md. Blackhole has no pages of its own for these blocks; its frontend
diagram (BlackholeA0 PushTensixInstruction.md) shows the same ones per thread (a MOP expander with
nine 32-bit configuration words, then a replay expander with a 32-entry buffer) and its memory map
puts the configuration at the same address, so the Wormhole model is used for both. Where
Blackhole's tt-llk ``assembly.yaml`` hints at something more, the code says so and refuses it.

How an instruction word travels (per thread)::

    pushed word -> MOP expander -> replay expander -> wait gate -> unit

The MOP expander handles only ``MOP`` (replaced by a template's expansion) and ``MOP_CFG`` (sets the
high half of template 0's mask, emits nothing); everything else passes through. The replay
expander handles only ``REPLAY`` (record the next words into its buffer, or play buffer entries
back) and passes everything else through. A ``REPLAY`` coming out of a MOP expansion is expanded
like any other; nothing a replay expander emits is looked at again, so ``MOP``, ``MOP_CFG`` and
``REPLAY`` words leaving it would reach the wait gate, which the documentation never allows
(``REPLAY`` playback "cannot contain" ``MOP``): that raises :class:`UndefinedBehavior`.

API for the pipe engine (``copro.frontend`` is a :class:`FrontendState`)
------------------------------------------------------------------------
``state.mop_stage(thread, word) -> Iterator[int]``
    The MOP expander fed one word a TRISC pushed: a ``MOP``'s expansion, nothing for ``MOP_CFG``,
    otherwise the word itself. The configuration is sampled when it is called (as the functional
    model does); errors in the ``MOP`` word are raised by the call, not by the first ``next``. The
    thread's expander counts as busy (``state.mop_busy[thread]``) from the first word pulled until
    the iterator is exhausted or closed, so an engine that pulls one word per cycle gets the
    hardware's notion of "still expanding" (what MOPExpanderDoneCheck waits for) for free.
``state.replay(thread).feed(word) -> list[int]``
    The replay expander fed one word leaving the MOP stage: the words it passes on, in order
    (``[]`` while recording without execution, or for a ``REPLAY`` that starts a recording).
    BRISC pushes after the MOP expander, so its words go straight to ``feed``.
``expand_mop(cfg_words, zmask_hi16, mop_type, loop_count, zmask_lo16_or_loop_count)``
    The pure expansion behind ``mop_stage`` (``state.expand_mop(thread, ...)`` supplies the
    thread's configuration and mask and tracks ``mop_busy``).
``state.set_zmask_hi16(thread, value)``, ``state.mop_config(thread)``, ``state.write_mop_config``
    ``MOP_CFG``'s effect, the nine configuration words, and the TRISC's MMIO write into them.

The functions raise :class:`~tensixsim.errors.SimError` subclasses without a location (they do not
know the pushing core, pc or cycle); the engine re-raises them with one, e.g.
``raise type(e)(e.message, core=..., pc=..., cycle=..., value=e.value) from e``.

Timing (documented; applied by the engine, see ``timing.FRONTEND``): each expander takes in and
hands on at most one instruction per cycle; a ``MOP`` is taken in and its expansion emitted at one
per cycle, its control flow costing nothing; after an expansion, a next instruction that is not a
``MOP`` costs one cycle during which the MOP expander neither takes nor emits. ``REPLAY`` playback
emits its first entry in the cycle it takes the ``REPLAY`` and one more per cycle after that, taking
nothing meanwhile; a recording ``REPLAY`` emits nothing, and each recorded word takes one cycle
(emitted in the same cycle when executing while recording). Neither expander has other penalties.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.isa import ARCH_NAMES, isa_for
from tensixsim.isa.spec import OPCODE_SHIFT, IsaTable
from tensixsim.mmio.memory import Access, Register
from tensixsim.tensix.shared_state import SharedArrays

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor

MOP_CFG_WORDS = 9
REPLAY_SLOTS = 32

_MOP_COUNT_MASK = 0x7F  # template 1 uses the low seven bits of MopCfg[0] and MopCfg[1]
_ZMASK_HALF = 0xFFFF
_REPLAY_COUNT_LIMIT = 64  # the documented Count field is six bits wide, and 0 means 64


def _common_opcode(name: str) -> int:
    """``name``'s opcode, which the frontend relies on being the same on every architecture."""
    codes = {isa_for(arch).by_name[name].opcode for arch in ARCH_NAMES}
    if len(codes) != 1:
        raise ValueError(f"{name} has different opcodes on {', '.join(ARCH_NAMES)}; make it per-arch data")
    return codes.pop()


_NOP = _common_opcode("NOP")
_MOP = _common_opcode("MOP")
_MOP_CFG = _common_opcode("MOP_CFG")
_REPLAY = _common_opcode("REPLAY")
# Handled before the wait gate; never valid past the replay expander.
_FRONTEND_ONLY = {_MOP: "MOP", _MOP_CFG: "MOP_CFG", _REPLAY: "REPLAY"}


def is_nop(word: int) -> bool:
    """Template 1's NOP test: the opcode of a plain NOP, whatever the other bits (not DMANOP or
    SFPNOP)."""
    return word >> OPCODE_SHIFT == _NOP


# ---------------------------------------------------------------------- the MOP templates
def expand_mop(
    cfg_words: Sequence[int],
    zmask_hi16: int,
    mop_type: int,
    loop_count: int,
    zmask_lo16_or_loop_count: int,
) -> Iterator[int]:
    """The instruction words one ``MOP`` expands to, given the thread's nine configuration words
    and the high mask half from its last ``MOP_CFG``.

    Checks run at the call; the words come lazily. The configuration is copied at the call, as
    in the documented functional model (the hardware reads most words as it goes, which is why
    software must not change them during an expansion; :meth:`FrontendState.write_mop_config`
    refuses that).
    """
    cfg = tuple(int(w) & 0xFFFF_FFFF for w in cfg_words)
    if len(cfg) != MOP_CFG_WORDS:
        raise ValueError(f"a MOP configuration has {MOP_CFG_WORDS} words, not {len(cfg)}")
    if not 0 <= zmask_hi16 <= _ZMASK_HALF:
        raise ValueError(f"zmask_hi16 0x{zmask_hi16:x} does not fit in 16 bits")
    if not 0 <= loop_count <= _MOP_COUNT_MASK or not 0 <= zmask_lo16_or_loop_count <= _ZMASK_HALF:
        raise ValueError("MOP fields out of range")
    if mop_type == 0:
        return _template0(cfg, (zmask_hi16 << 16) | zmask_lo16_or_loop_count, loop_count)
    if mop_type != 1:
        raise ValueError(f"mop_type {mop_type} is not 0 or 1")
    # The documentation says template 1 uses the configuration only. Blackhole's assembly.yaml
    # says non-zero fields override the loop counts ({outer[5:0], inner[9:0]} in the low 16 bits,
    # outer[9:6] in loop_count); how exactly is not documented and tt-llk never does it (it
    # always pushes MOP(1, 0, 0)), so we refuse rather than guess.
    if loop_count or zmask_lo16_or_loop_count:
        raise Unimplemented(
            "MOP template 1 with non-zero count fields (Blackhole loop-count override)",
            value=(loop_count << 16) | zmask_lo16_or_loop_count,
        )
    # Documented: only the low seven bits of the counts are used. The same Blackhole hint (10-bit
    # loop counts) makes wider values suspect there, so they are refused rather than masked.
    for index in (0, 1):
        if cfg[index] > _MOP_COUNT_MASK:
            raise Unimplemented(
                f"MOP template 1 with MopCfg[{index}] above 127 (only seven bits are documented)",
                value=cfg[index],
            )
    return _template1(cfg)


def _template0(cfg: tuple[int, ...], mask: int, count1: int) -> Iterator[int]:
    """Template 0: ``count1 + 1`` iterations; iteration i emits the A sequence when mask bit i is
    clear (bits past 31 read as clear) and the skip sequence when it is set."""
    flags = cfg[1]  # only bits 0 (HasB) and 1 (HasA123) mean anything
    insn_b, a0, a1, a2, a3, skip_a0, skip_b = cfg[2:9]
    a_sequence = (a0, a1, a2, a3) if flags & 2 else (a0,)
    skip_sequence: tuple[int, ...] = (skip_a0,)
    if flags & 1:
        a_sequence += (insn_b,)
        skip_sequence += (skip_b,)
    for i in range(count1 + 1):
        yield from skip_sequence if (mask >> i) & 1 else a_sequence


def _template1(cfg: tuple[int, ...]) -> Iterator[int]:
    """Template 1: an outer loop around [start op] inner loop [end ops]."""
    outer = cfg[0] & _MOP_COUNT_MASK
    inner = cfg[1] & _MOP_COUNT_MASK
    start_op, end_op0, end_op1, loop_op, loop_op1, last_of_all, last_of_outer = cfg[2:9]
    # A non-NOP LoopOp1 makes the inner loop alternate LoopOp, LoopOp1, ... for twice as many
    # steps; its last step is replaced by Loop0Last (last outer iteration) or Loop1Last (others).
    alternate = not is_nop(loop_op1)
    steps = 2 * inner if alternate else inner
    with_start = not is_nop(start_op)
    end_ops: tuple[int, ...] = ()
    if not is_nop(end_op0):
        end_ops = (end_op0,) if is_nop(end_op1) else (end_op0, end_op1)
    # Documented (Wormhole) hardware bug: an expansion that would be just the end ops once runs
    # 129 times. Nothing says whether Blackhole fixed it; we assume it did not.
    if outer == 1 and not with_start and steps == 0 and end_ops:
        outer += 128
    for j in range(outer):
        if with_start:
            yield start_op
        for i in range(steps - 1):
            yield loop_op1 if alternate and i % 2 else loop_op
        if steps:
            yield last_of_all if j == outer - 1 else last_of_outer
        yield from end_ops


# ---------------------------------------------------------------------- state
@dataclass
class FrontendState(SharedArrays):
    """Per thread: the MOP configuration and mask half, and the replay buffer with its recording
    state. Index 0 of every array is the thread (pipe)."""

    arch_name: str
    mop_cfg: np.ndarray  # (threads, 9) uint32: the words the TRISC wrote at arch.mop_config_base
    mop_cfg_written: np.ndarray  # (threads, 9) bool: reset contents are not documented
    zmask_hi16: np.ndarray  # (threads,) uint32: MaskHi, 0 at reset per the functional model
    mop_busy: np.ndarray  # (threads,) bool: a MOP expansion is in progress
    replay_buffer: np.ndarray  # (threads, 32) uint32
    replay_written: np.ndarray  # (threads, 32) bool: slots recorded at least once
    record_slot: np.ndarray  # (threads,) int32: where the next recorded word goes
    record_left: np.ndarray  # (threads,) int32: words still to record (0: not recording)
    record_exec: np.ndarray  # (threads,) bool: recorded words are also passed on

    @classmethod
    def new(cls, arch: Arch) -> FrontendState:
        threads = arch.pipe_count
        return cls(
            arch_name=arch.name,
            mop_cfg=np.zeros((threads, MOP_CFG_WORDS), np.uint32),
            mop_cfg_written=np.zeros((threads, MOP_CFG_WORDS), bool),
            zmask_hi16=np.zeros(threads, np.uint32),
            mop_busy=np.zeros(threads, bool),
            replay_buffer=np.zeros((threads, REPLAY_SLOTS), np.uint32),
            replay_written=np.zeros((threads, REPLAY_SLOTS), bool),
            record_slot=np.zeros(threads, np.int32),
            record_left=np.zeros(threads, np.int32),
            record_exec=np.zeros(threads, bool),
        )

    # ------------------------------------------------------------------ MOP expander
    def mop_config(self, thread: int) -> tuple[int, ...]:
        """The thread's nine configuration words (a copy)."""
        return tuple(int(w) for w in self.mop_cfg[thread])

    def write_mop_config(self, thread: int, index: int, value: int) -> None:
        """The TRISC stores ``value`` into configuration word ``index``."""
        if self.mop_busy[thread]:
            # Documented: hardware reads most words as the expansion goes, so software must wait
            # (MOPExpanderDoneCheck) before writing; which words a late write affects is not said.
            raise UndefinedBehavior(
                f"MOP configuration word {index} of thread {thread} written during a MOP expansion",
                value=value,
            )
        self.mop_cfg[thread, index] = value & 0xFFFF_FFFF
        self.mop_cfg_written[thread, index] = True

    def set_zmask_hi16(self, thread: int, zmask_hi16: int) -> None:
        """``MOP_CFG``: the high 16 bits of the next template 0 masks."""
        if not 0 <= zmask_hi16 <= _ZMASK_HALF:
            # The documented encoding has a 16-bit MaskHi; bits 23..16 are not assigned.
            raise UndefinedBehavior("MOP_CFG with bits above bit 15 set", value=zmask_hi16)
        self.zmask_hi16[thread] = zmask_hi16

    def expand_mop(
        self, thread: int, mop_type: int, loop_count: int, zmask_lo16_or_loop_count: int
    ) -> Iterator[int]:
        """:func:`expand_mop` with ``thread``'s configuration; busy until the iterator ends."""
        # Every word the template's functional model samples must have been written: 1..8 for
        # template 0 (MopCfg[0] unused), all nine for template 1. The reset contents are not
        # documented (tt-llk always programs them first).
        first = 1 if mop_type == 0 else 0
        missing = [i for i in range(first, MOP_CFG_WORDS) if not self.mop_cfg_written[thread, i]]
        if missing:
            raise UndefinedBehavior(
                f"MOP template {mop_type} on thread {thread} uses configuration words "
                f"{missing} that were never written"
            )
        words = expand_mop(
            self.mop_config(thread),
            int(self.zmask_hi16[thread]),
            mop_type,
            loop_count,
            zmask_lo16_or_loop_count,
        )
        return self._tracked(thread, words)

    def _tracked(self, thread: int, words: Iterator[int]) -> Iterator[int]:
        # Busy from the first word pulled until the last: an iterator dropped unstarted never
        # leaves the flag set.
        self.mop_busy[thread] = True
        try:
            yield from words
        finally:
            self.mop_busy[thread] = False

    def mop_stage(self, thread: int, word: int) -> Iterator[int]:
        """The MOP expander fed one word: a MOP's expansion, nothing for MOP_CFG, else ``word``."""
        opcode = word >> OPCODE_SHIFT
        if opcode == _MOP:
            fields = isa_for(self.arch_name).decode(word).fields
            count, low = fields["loop_count"], word & _ZMASK_HALF
            # The low field is zmask_lo16 on Wormhole, zmask_lo16_or_loop_count on Blackhole. Where it
            # is not also a loop count (Wormhole), template 1 takes nothing from the instruction: it
            # "exclusively uses pre-programmed configuration" (MOP.md), whatever the fields hold.
            if fields["mop_type"] == 1 and "zmask_lo16_or_loop_count" not in fields:
                count = low = 0
            return self.expand_mop(thread, fields["mop_type"], count, low)
        if opcode == _MOP_CFG:
            self.set_zmask_hi16(thread, isa_for(self.arch_name).decode(word)["zmask_hi16"])
            return iter(())
        return iter((word,))

    # ------------------------------------------------------------------ replay expander
    def replay(self, thread: int) -> ReplayExpander:
        """The thread's replay expander (a view of this state)."""
        return ReplayExpander(self, thread, isa_for(self.arch_name))


class ReplayExpander:
    """One thread's replay expander, operating on a :class:`FrontendState`."""

    def __init__(self, state: FrontendState, thread: int, isa: IsaTable) -> None:
        self.state = state
        self.thread = thread
        self.isa = isa

    @property
    def recording(self) -> bool:
        return bool(self.state.record_left[self.thread])

    def feed(self, word: int) -> list[int]:
        """Take one word from the MOP stage; return the words passed on towards the wait gate."""
        state, t = self.state, self.thread
        left = int(state.record_left[t])
        if left:
            # Every word is recorded as it is, REPLAY included: the documented model does not
            # interpret words while recording.
            slot = int(state.record_slot[t])
            state.replay_buffer[t, slot] = word
            state.replay_written[t, slot] = True
            state.record_slot[t] = (slot + 1) % REPLAY_SLOTS
            state.record_left[t] = left - 1
            return [_passed_on(word, "recorded with execute_while_loading")] if state.record_exec[t] else []
        if word >> OPCODE_SHIFT != _REPLAY:
            return [_passed_on(word, "passed through the replay expander")]
        fields = self.isa.decode(word).fields
        start, count = fields["start_idx"], fields["len"]
        execute, load = fields["execute_while_loading"], fields["load_mode"]
        # The documented encoding has a 5-bit Index (bits 18..14), a 6-bit Count (bits 9..4) and a
        # 1-bit Exec (bit 1); the table's wider slots hold bits the documentation leaves
        # unassigned (tt-llk's yaml claims the hardware ignores them, but also claims Count is
        # cut to five bits, which contradicts the documented "Count or 64"). Refuse them.
        if start >= REPLAY_SLOTS or count >= _REPLAY_COUNT_LIMIT or execute > 1:
            raise UndefinedBehavior(
                "REPLAY with bits set outside the documented Index, Count and Exec fields", value=word
            )
        count = count or _REPLAY_COUNT_LIMIT
        if load:
            # Counts above 32 wrap around the buffer, later words overwriting earlier ones.
            state.record_slot[t] = start
            state.record_left[t] = count
            state.record_exec[t] = bool(execute)
            return []
        # Playback (Exec is ignored, as documented). A slot never recorded has no documented
        # contents (the model's zero fill is not an instruction either).
        slots = [(start + i) % REPLAY_SLOTS for i in range(count)]
        unwritten = sorted({s for s in slots if not state.replay_written[t, s]})
        if unwritten:
            raise UndefinedBehavior(
                f"REPLAY plays back slots {unwritten} of thread {t}, which were never recorded", value=word
            )
        return [_passed_on(int(state.replay_buffer[t, s]), "played back by REPLAY") for s in slots]


def _passed_on(word: int, how: str) -> int:
    """``word`` as it leaves the replay expander: frontend-only instructions may not."""
    name = _FRONTEND_ONLY.get(word >> OPCODE_SHIFT)
    if name is not None:
        # MOP.md: a REPLAY expansion "cannot contain" MOP; MOP_CFG and REPLAY are likewise never
        # meant to reach the wait gate (STALLWAIT.md: "never reaches the Wait Gate"). What the
        # hardware does with one is not documented.
        raise UndefinedBehavior(f"{name} {how} would reach the wait gate", value=word)
    return word


# ---------------------------------------------------------------------- MMIO
def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register.

    Each TRISC sees its own thread's nine MOP configuration words; BRISC and NCRISC see nothing.
    The window is write-only: reading it is documented as undefined behaviour.
    """
    thread = core.facts.pipe
    if thread is None:
        return {}
    state = copro.frontend

    def read(access: Access) -> int:
        raise UndefinedBehavior(
            "the MOP configuration is write-only; reading it is undefined",
            core=access.core.name,
            pc=access.core.fault_pc(),
            cycle=access.cycle,
            value=access.address,
        )

    def writer(index: int):
        def write(access: Access, value: int) -> None:
            try:
                state.write_mop_config(thread, index, value)
            except UndefinedBehavior as exc:
                raise UndefinedBehavior(
                    exc.message,
                    core=access.core.name,
                    pc=access.core.fault_pc(),
                    cycle=access.cycle,
                    value=value,
                ) from exc

        return write

    return {
        copro.arch.mop_config_base + 4 * i: Register(f"MOP_CFG[{i}]", read=read, write=writer(i))
        for i in range(MOP_CFG_WORDS)
    }
