"""Lane predication at its boundaries: SFPSETCC's comparisons on zero, SFPPUSHC at and next to a
full flag stack. Property tests against tests/sfpu_reference.py, on tests/test_sfpu.py's random
vector-unit state.

``test_sfpu.test_simple_matches_reference`` draws any word and state, where a lane holding exactly 0
under a comparison mode, or a stack exactly seven or eight deep under a push, is rare: an off-by-one
there escaped it. These tests draw those cases on purpose, and their explicit examples (one per
comparison mode, one per stack depth) run under every profile and seed.
"""

from __future__ import annotations

import inspect
import sys
import textwrap

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from matrix_harness import ISA, SEEDS, SETTINGS, THREADS, words
from test_sfpu import PLAIN_PROFILE, profiles_with, run_case

from tensixsim.tensix import semantics
from tensixsim.tensix.semantics import Semantics, lookup
from tensixsim.tensix.sfpu.flags import SETCC_EQ0, SETCC_GTE0, SETCC_LT0, SETCC_NE0
from tensixsim.tensix.sfpu.unit import STACK_DEPTH

PROPERTY = settings(SETTINGS, max_examples=100)
COMPARISONS = [SETCC_LT0, SETCC_NE0, SETCC_GTE0, SETCC_EQ0]
ZERO_LREG = 9  # a constant LReg, 0 in every lane
# Integers either side of each comparison's edge.
EDGES = [0, 0, 0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
# Every lane's flags are used, none is taken over by a backdoor load, the stacks are empty.
PLAIN = {**PLAIN_PROFILE, "use": "all"}


def edge_profiles(depths: list[int | str]) -> st.SearchStrategy[dict]:
    """Random vector-unit state with the LRegs' lanes mostly at EDGES and the stacks ``depths`` deep."""
    return st.builds(
        lambda profile, depth, odds: {**profile, "depth": depth, "special_odds": odds},
        profiles_with(EDGES),
        st.sampled_from(depths),
        st.sampled_from([0.3, 0.7]),
    )


def setcc(mode: int, lreg_c: int) -> int:
    return ISA.encode("SFPSETCC", imm12_math=0, lreg_c=lreg_c, lreg_dest=0, instr_mod1=mode)


SETCC_COMPARISONS = words(
    "SFPSETCC",
    {
        "imm12_math": st.just(0),
        "lreg_c": st.sampled_from([*range(8), ZERO_LREG]),
        "lreg_dest": st.integers(0, 7),
        "instr_mod1": st.sampled_from(COMPARISONS),
    },
)


@PROPERTY
@given(word=SETCC_COMPARISONS, seed=SEEDS, profile=edge_profiles([0, "random"]), thread=THREADS)
@example(word=setcc(SETCC_LT0, ZERO_LREG), seed=0, profile=PLAIN, thread=0)
@example(word=setcc(SETCC_NE0, ZERO_LREG), seed=0, profile=PLAIN, thread=0)
@example(word=setcc(SETCC_GTE0, ZERO_LREG), seed=0, profile=PLAIN, thread=0)
@example(word=setcc(SETCC_EQ0, ZERO_LREG), seed=0, profile=PLAIN, thread=0)
def test_sfpsetcc_comparisons_at_their_edges_match_reference(
    word: int, seed: int, profile: dict, thread: int
) -> None:
    run_case("SFPSETCC", word, seed, profile, thread)


PUSH = ISA.encode("SFPPUSHC", imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0)
PUSHES = words(
    "SFPPUSHC",
    {
        "imm12_math": st.just(0),
        "lreg_c": st.just(0),
        "lreg_dest": st.integers(0, 7),
        # mostly a push (Mod1 0), sometimes a change of the top entry
        "instr_mod1": st.sampled_from([0, 0, 0, 1, 3, 13, 14]),
    },
)


@PROPERTY
@given(
    word=PUSHES, seed=SEEDS, profile=edge_profiles([STACK_DEPTH - 1, STACK_DEPTH, "random"]), thread=THREADS
)
@example(word=PUSH, seed=0, profile={**PLAIN, "depth": STACK_DEPTH - 1}, thread=0)  # fills the stack
@example(word=PUSH, seed=0, profile={**PLAIN, "depth": STACK_DEPTH}, thread=0)  # undefined: full
def test_sfppushc_at_and_next_to_a_full_stack_matches_reference(
    word: int, seed: int, profile: dict, thread: int
) -> None:
    run_case("SFPPUSHC", word, seed, profile, thread)


# ------------------------------------------------------------------------------ the tests' power
# Off-by-ones in the semantics these tests exist for: each must make its test fail, under every
# profile and seed (the explicit examples see to that).
MUTANTS = {
    "SFPSETCC LT0 as <= 0": ("SFPSETCC", "SETCC_LT0: c < 0", "SETCC_LT0: c <= 0"),
    "SFPSETCC GTE0 as > 0": ("SFPSETCC", "SETCC_GTE0: c >= 0", "SETCC_GTE0: c > 0"),
    "SFPPUSHC onto a full stack allowed": ("SFPPUSHC", "depth >= STACK_DEPTH)", "depth > STACK_DEPTH)"),
    "SFPPUSHC refused one early": ("SFPPUSHC", "depth >= STACK_DEPTH)", "depth >= STACK_DEPTH - 1)"),
}
EDGE_TESTS = {
    "SFPSETCC": test_sfpsetcc_comparisons_at_their_edges_match_reference,
    "SFPPUSHC": test_sfppushc_at_and_next_to_a_full_stack_matches_reference,
}


def mutated(name: str, old: str, new: str) -> Semantics:
    """``name``'s semantics function with ``old`` replaced by ``new`` in its source."""
    original = lookup("blackhole", name)
    assert original is not None
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(old) == 1, f"{old!r} is no longer in {original.__name__}: update MUTANTS"
    body = "\n".join(line for line in source.replace(old, new).splitlines() if not line.startswith("@"))
    namespace = dict(vars(sys.modules[original.__module__]))
    exec(compile(body, f"<mutant of {original.__name__}>", "exec"), namespace)
    return namespace[original.__name__]


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_an_off_by_one_at_the_edge_fails_its_test(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, old, new = MUTANTS[mutant]
    monkeypatch.setitem(semantics._REGISTRY["blackhole"], name, mutated(name, old, new))
    with pytest.raises(AssertionError):
        EDGE_TESTS[name]()
