"""Instruction semantics registered against the ISA table.

A unit module declares each instruction it executes with :func:`semantics`::

    @semantics("SEMPOST")
    def sempost(ctx: Context, sem_sel: int) -> Outcome:
        ...
        return Retire(TIMING.sync)

The function's parameters after ``ctx`` must be exactly the instruction's fields in the table
(checked at import), so a renamed field cannot go unnoticed. It returns :class:`Retire` (the
instruction executed; ``cycles`` is how long it occupies its unit) or :class:`Wait` (it cannot
execute yet; the pipe holds it and tries again when coprocessor state changes). A function that
returns ``Wait`` must not have changed any state. Errors are raised with :meth:`Context.error`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from tensixsim.errors import SimError, UndefinedBehavior, Unimplemented
from tensixsim.isa import isa_for
from tensixsim.isa.spec import Instruction

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor


@dataclass(frozen=True)
class Retire:
    """The instruction executed; its unit is busy for ``cycles`` cycles from issue."""

    cycles: int = 1


@dataclass(frozen=True)
class Wait:
    """The instruction cannot execute yet (and changed nothing); ``reason`` shows in deadlocks.

    ``l1`` names the L1 bytes (address, size) it waits on when cores may change them: the tile then
    retries it when a core stores there (coprocessor changes retry every waiting instruction).
    ``until`` is the cycle at which the wait ends by itself (a scheduling stall), if it does.
    """

    reason: str
    l1: tuple[int, int] | None = None
    until: int | None = None


Outcome = Union[Retire, Wait]  # noqa: UP007 - readable on 3.10 too


@dataclass
class Context:
    """What a semantics function sees: the coprocessor, the pipe, the cycle, the instruction."""

    copro: Coprocessor
    thread: int  # pipe 0/1/2 (fed by TRISC0/1/2 and BRISC)
    cycle: int  # the issue cycle
    instruction: Instruction
    core: str  # the core that pushed it
    pc: int  # its address in that core's program
    # An instruction SFPLOADMACRO scheduled onto a vector sub-unit (sfpu/macro.py): its functional model
    # reads LaneConfig.DISABLE_BACKDOOR_LOAD as true, it cannot wait, and ``vb`` / ``vc`` (when not None)
    # replace the model's ``VB = VD`` / ``VC = VD`` assignment (SFPLOADMACRO.md).
    scheduled: bool = False
    vb: int | None = None
    vc: int | None = None

    @property
    def word(self) -> int:
        """The instruction's 32-bit word (what a backdoor load writes)."""
        return self.instruction.word

    def implicit_vb(self, vd: int) -> int:
        """VB of a functional model that assigns ``VB = VD``."""
        return vd if self.vb is None else self.vb

    def implicit_vc(self, vd: int) -> int:
        """VC of a functional model that assigns ``VC = VD`` (SFPADDI, SFPMULI)."""
        return vd if self.vc is None else self.vc

    def documented(self, name: str, value: int, bits: int) -> int:
        """``value`` of operand slot ``name``, whose documented operand has only its low ``bits`` bits;
        any other set bit is undefined behaviour (the units' shared rule: never guess)."""
        if value >> bits:
            raise self.error(
                UndefinedBehavior, f"{name}={value:#x} sets bits no documented operand has", value
            )
        return value

    def error(self, kind: type[SimError], message: str, value: int | None = None) -> SimError:
        """An exception naming the pipe, instruction, pushing core, pc and cycle."""
        return kind(
            f"pipe {self.thread} {self.instruction.name}: {message}",
            core=self.core,
            pc=self.pc,
            cycle=self.cycle,
            value=value,
        )


Semantics = Callable[..., Outcome]
_REGISTRY: dict[str, dict[str, Semantics]] = {"blackhole": {}, "wormhole": {}}
# Instructions registered only to refuse by name (:func:`refuse`): not implemented.
_REFUSED: dict[str, set[str]] = {"blackhole": set(), "wormhole": set()}


def semantics(name: str, *, arches: tuple[str, ...] = ("blackhole",)) -> Callable[[Semantics], Semantics]:
    """Register ``fn`` as the semantics of instruction ``name`` on ``arches``."""

    def register(fn: Semantics) -> Semantics:
        params = list(inspect.signature(fn).parameters)[1:]
        for arch in arches:
            spec = isa_for(arch).by_name.get(name)
            if spec is None:
                raise ValueError(f"{fn.__name__}: {arch} has no instruction {name}")
            if set(params) != set(spec.field_names):
                raise ValueError(
                    f"{fn.__name__}: parameters {params} do not match "
                    f"{name}'s fields {list(spec.field_names)}"
                )
            if name in _REGISTRY[arch]:
                raise ValueError(f"{name} registered twice for {arch}")
            _REGISTRY[arch][name] = fn
        return fn

    return register


def refuse(name: str, why: str, *, arches: tuple[str, ...]) -> None:
    """Register instruction ``name`` on ``arches`` as one the emulator cannot execute for a known
    reason (no page gives its functional model): it raises Unimplemented saying ``why``, changing
    nothing, and it does not count as implemented."""

    def refused(ctx: Context, **fields: int) -> Outcome:
        raise ctx.error(Unimplemented, why)

    for arch in arches:
        if name not in isa_for(arch).by_name:
            raise ValueError(f"refuse: {arch} has no instruction {name}")
        if name in _REGISTRY[arch]:
            raise ValueError(f"{name} registered twice for {arch}")
        _REGISTRY[arch][name] = refused
        _REFUSED[arch].add(name)


def lookup(arch: str, name: str) -> Semantics | None:
    return _REGISTRY[arch].get(name)


def implemented(arch: str) -> frozenset[str]:
    """Names of the instructions with registered semantics (not those registered to refuse)."""
    return frozenset(_REGISTRY[arch]) - _REFUSED[arch]


def refused(arch: str) -> frozenset[str]:
    """Names of the instructions registered with :func:`refuse`."""
    return frozenset(_REFUSED[arch])
