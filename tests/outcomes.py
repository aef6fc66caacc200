"""Comparing what an instruction did with what a reference model says it should do."""

from __future__ import annotations

from collections.abc import Callable

from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.tensix.semantics import Retire, Wait


class RefUB(Exception):
    """The reference pseudocode reaches undefined behaviour."""


class RefUnimplemented(Exception):
    """Behaviour the emulator declines to guess (a match if it raises Unimplemented)."""


class RefFault(Exception):
    """A memory access outside what the tile maps (a match if it raises MemoryFault)."""


class RefWait(Exception):
    """The instruction waits (a match if its semantics answer Wait)."""


def reference_outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except RefUB:
        return "undefined"
    except RefUnimplemented:
        return "unimplemented"
    except RefFault:
        return "fault"
    except RefWait:
        return "wait"
    return "retire"


def emulator_outcome(call: Callable[[], object]) -> str:
    try:
        outcome = call()
    except UndefinedBehavior:
        return "undefined"
    except Unimplemented:
        return "unimplemented"
    except MemoryFault:
        return "fault"
    if isinstance(outcome, Wait):
        return "wait"
    assert isinstance(outcome, Retire), outcome
    return "retire"
