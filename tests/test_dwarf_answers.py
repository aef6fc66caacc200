"""DebugInfo remembers its answers on disk: a second reader of the same ELF gives the same answers
without parsing it, errors are not remembered, and an ELF without debug information still fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from asm import link

from tensixsim import InvalidProgram
from tensixsim.metal import dwarf
from tensixsim.metal.firmware import find_firmware_set
from tensixsim.metal.wheel import precompiled_firmware

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "ttnn"

QUESTIONS = (
    ("constant", ("mailboxes",)),
    ("size_of", ("mailboxes_t",)),
    ("field", ("mailboxes_t", "go_messages[0].signal")),
    ("array_length", ("dram_bank_to_noc_xy",)),
    ("has_variable", ("cb_interface",)),
    ("has_variable", ("no_such_variable",)),
    ("constant_names", ()),
    ("inlined_argument", ("do_crt1", "data_image")),
)


@pytest.fixture(scope="module")
def brisc_elf() -> Path:
    return find_firmware_set(precompiled_firmware(CACHE), "blackhole").elfs["brisc"]


def ask(info: dwarf.DebugInfo) -> list[object]:
    return [getattr(info, name)(*args) for name, args in QUESTIONS]


def test_remembered_answers_equal_parsed_ones(brisc_elf, tmp_path, monkeypatch):
    monkeypatch.setenv("TENSIXSIM_CACHE", str(tmp_path))
    first = dwarf.DebugInfo(brisc_elf)
    answers = ask(first)
    assert first._indexed  # the first reader parsed the ELF
    second = dwarf.DebugInfo(brisc_elf)
    assert ask(second) == answers
    assert not second._indexed  # ... the second did not need to
    assert answers[0] > 0 and answers[2].size == 1 and answers[4] is True and answers[5] is False


def test_errors_are_not_remembered(brisc_elf, tmp_path, monkeypatch):
    monkeypatch.setenv("TENSIXSIM_CACHE", str(tmp_path))
    for _ in range(2):
        with pytest.raises(InvalidProgram, match="no constant nonexistent"):
            dwarf.DebugInfo(brisc_elf).constant("nonexistent")


def test_an_elf_without_debug_information_fails_on_its_first_question(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSIXSIM_CACHE", str(tmp_path))
    bare = link("    nop\n    ecall\n")  # assembled without debug information
    with pytest.raises(InvalidProgram, match="no debug information"):
        dwarf.DebugInfo(bare).constant("mailboxes")
