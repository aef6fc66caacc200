"""The fuzzing harness (tools/fuzz.py): a small corpus of every family runs clean, and the harness
really does catch what it is meant to catch (exceptions, crashes, hangs, memory growth)."""

from __future__ import annotations

import collections
import importlib.util
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "fuzz.py"
_spec = importlib.util.spec_from_file_location("tensixsim_fuzz_tool", TOOL)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # dataclasses look their module up by name
_spec.loader.exec_module(fuzz)

PER_FAMILY = 40
WORMHOLE_PER_FAMILY = 20
SEED = 1
# One worker runs this module: its corpus fixture (about 10 s, in children of its own) would
# otherwise run again in every worker (`make test` distributes with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("fuzz_corpus")


@pytest.fixture(scope="module")
def corpus() -> list:
    cases = fuzz.make_cases(PER_FAMILY * len(fuzz.FAMILIES), SEED, list(fuzz.FAMILIES))
    return fuzz.fuzz(cases, jobs=2, timeout=60, as_mb=fuzz.DEFAULT_AS_MB, rss_mb=fuzz.DEFAULT_RSS_MB)


@pytest.fixture(scope="module")
def wormhole_corpus() -> list:
    cases = fuzz.make_cases(WORMHOLE_PER_FAMILY * len(fuzz.FAMILIES), SEED, list(fuzz.FAMILIES), "wormhole")
    return fuzz.fuzz(cases, jobs=2, timeout=60, as_mb=fuzz.DEFAULT_AS_MB, rss_mb=fuzz.DEFAULT_RSS_MB)


def test_the_corpus_has_no_failures(corpus):
    failures = [f"{r.case.key} {r.outcome}\n{r.detail}" for r in corpus if r.failed]
    assert not failures, "\n".join(failures)
    assert len(corpus) == PER_FAMILY * len(fuzz.FAMILIES)


@pytest.mark.parametrize("family", fuzz.FAMILIES)
def test_every_family_reaches_both_a_finished_run_and_a_named_error(corpus, family):
    # A generator whose inputs all die at the first instruction (or all do nothing) tests little.
    outcomes = collections.Counter(r.outcome for r in corpus if r.case.family == family)
    assert outcomes["ok"] > 0, outcomes
    assert sum(n for o, n in outcomes.items() if o != "ok" and not o.startswith("FAILURE")) > 0, outcomes


def test_the_wormhole_corpus_has_no_failures_and_runs_on_wormhole_tiles(wormhole_corpus):
    failures = [f"{r.case.key} {r.outcome}\n{r.detail}" for r in wormhole_corpus if r.failed]
    assert not failures, "\n".join(failures)
    assert all(r.case.key.endswith(":wormhole") for r in wormhole_corpus)
    outcomes = collections.Counter(r.outcome for r in wormhole_corpus)
    assert outcomes["ok"] > 0 and sum(outcomes.values()) - outcomes["ok"] > 0, outcomes
    # The ELFs are built for Wormhole's ISA: a Blackhole one would be refused before it ran.
    elf = collections.Counter(r.outcome for r in wormhole_corpus if r.case.family == "elf")
    assert elf["ok"] > 0 and not elf["ArchitectureMismatch"], elf


def test_a_wormhole_case_is_its_own_input_drawn_from_wormholes_table():
    from tensixsim.isa import isa_for

    case = fuzz.Case("tensix", 5, 2, "wormhole")
    assert fuzz.Case.parse(case.key) == case and case.key == "tensix:5:2:wormhole"
    assert fuzz.Case.parse("tensix:5:2") == fuzz.Case("tensix", 5, 2, "blackhole")
    spec = fuzz.make_input(case)
    assert spec["arch"] == "wormhole" and spec != fuzz.make_input(fuzz.Case("tensix", 5, 2))
    # Draws come from Wormhole's instruction table: over many cases, only its opcodes (or the few
    # words of any value) appear, and Blackhole-only opcodes do not.
    wormhole, blackhole = isa_for("wormhole"), isa_for("blackhole")
    only_blackhole = {s.opcode for s in blackhole} - {s.opcode for s in wormhole}
    assert only_blackhole
    fuzz.set_arch("wormhole")  # what make_input does before drawing a Wormhole case
    try:
        words = [
            w for i in range(60) for w in fuzz.tensix_words(fuzz.case_rng(fuzz.Case("tensix", i, 2)), 20)
        ]
    finally:
        fuzz.set_arch("blackhole")
    assert sum((w >> 24) in only_blackhole for w in words) <= 0.002 * len(words)


def test_inputs_depend_on_family_index_and_seed_only():
    for family in fuzz.FAMILIES:
        a = fuzz.make_input(fuzz.Case(family, 7, 3))
        assert a == fuzz.make_input(fuzz.Case(family, 7, 3))
        assert a != fuzz.make_input(fuzz.Case(family, 8, 3))
        assert a != fuzz.make_input(fuzz.Case(family, 7, 4))


def test_elf_mutations_hit_headers_and_tables():
    notes = [n for i in range(60) for n in fuzz.make_input(fuzz.Case("elf", i, SEED))["notes"]]
    kinds = {n.split(":")[0].split(".")[-1] for n in notes}
    assert {"flip", "truncate", "append"} <= kinds
    assert any(k.startswith("e_") for k in kinds)
    assert any(k.startswith("p_") for k in kinds) and any(k.startswith("sh_") for k in kinds)


def _run(
    *keys: str, timeout: float = 30, rss_mb: int = fuzz.DEFAULT_RSS_MB, startup: float = fuzz.STARTUP
) -> dict[str, object]:
    cases = [fuzz.Case.parse(k) for k in keys]
    results = fuzz.run_batch(cases, timeout, fuzz.DEFAULT_AS_MB, rss_mb, startup)
    assert sorted(r.case.key for r in results) == sorted(keys)
    return {r.case.key: r for r in results}


def test_an_exception_outside_the_hierarchy_is_a_failure_with_its_traceback():
    results = _run("rv32:0:1", "_raise:0:0", "rv32:1:1")
    bad = results["_raise:0:0"]
    assert bad.failed and bad.outcome == "FAILURE:RuntimeError"
    assert "deliberate failure" in bad.detail and "Traceback" in bad.detail
    assert not results["rv32:0:1"].failed and not results["rv32:1:1"].failed


def test_a_crashing_case_is_found_by_rerunning_the_rest_of_the_batch_alone():
    # The child dies at the second case: the first was reported, the others are rerun one per child.
    results = _run("rv32:0:1", "_exit:0:0", "rv32:1:1", "mmio:0:1")
    assert results["_exit:0:0"].outcome == "FAILURE:crash" and "exit status 3" in results["_exit:0:0"].detail
    assert [k for k, r in results.items() if r.failed] == ["_exit:0:0"]


def test_a_hanging_case_is_a_timeout():
    results = _run("_hang:0:0", "rv32:0:1", timeout=2, startup=4)
    assert results["_hang:0:0"].outcome == "FAILURE:timeout"
    assert not results["rv32:0:1"].failed


def test_a_childs_peak_rss_is_its_own_not_its_parents():
    """A child started from a process holding more than the cap (a test worker late in a run) is
    measured on its own: Linux's ru_maxrss would start it at its parent's peak."""
    held = bytearray(384 << 20)
    held[::4096] = b"\1" * len(held[::4096])  # touched, so it counts in this process's RSS
    results = _run("rv32:0:1", rss_mb=256)
    assert not results["rv32:0:1"].failed
    assert results["rv32:0:1"].rss_mb < 256
    del held


def test_a_case_over_the_rss_cap_is_a_failure():
    results = _run("_hog:0:0", rss_mb=256)
    assert results["_hog:0:0"].outcome == "FAILURE:rss"


def test_the_command_line_exits_non_zero_on_a_failure(capsys):
    assert fuzz.main(["--cases", "2", "--families", "rv32,_raise", "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAILURE:RuntimeError" in out and "--replay _raise:0:1" in out
    assert fuzz.main(["--cases", "3", "--families", "rv32", "--seed", "1"]) == 0
