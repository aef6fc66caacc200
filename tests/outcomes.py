"""Comparing what an instruction did with what a reference model says it should do."""

from __future__ import annotations

from collections.abc import Callable

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.tensix.semantics import Retire


class RefUB(Exception):
    """The reference pseudocode reaches undefined behaviour."""


class RefUnimplemented(Exception):
    """Behaviour the emulator declines to guess (a match if it raises Unimplemented)."""


def reference_outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except RefUB:
        return "undefined"
    except RefUnimplemented:
        return "unimplemented"
    return "retire"


def emulator_outcome(call: Callable[[], object]) -> str:
    try:
        outcome = call()
    except UndefinedBehavior:
        return "undefined"
    except Unimplemented:
        return "unimplemented"
    assert isinstance(outcome, Retire), outcome
    return "retire"
