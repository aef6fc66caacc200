"""The NoC atomics besides increment and Zaamo, on both chips: compare and swap, swap by mask, swap by
index (Atomics.md), against a reference written from the pages' functional models. The NOC_AT_LEN_BE
layouts are typed from the pages' diagrams: CAS Ofs 0..1, CmpVal 2..5, SetVal 6..9, opcode 4; swap by
mask Mask 2..9, opcode 3; swap by index Ofs 0..1 with bit 2 set, opcode 6, or Ofs 2..3, opcode 7, or
(Blackhole) Ofs 0..1 with bits 8..11 = 3, opcode 0xA."""

from __future__ import annotations

import numpy as np
import pytest
import test_wormhole_noc as wh
from hypothesis import given
from hypothesis import strategies as st

from tensixsim import Tile, UndefinedBehavior, Unimplemented
from tensixsim.noc.registers import AT_DATA, AT_LEN_BE, CTRL, RET_HI, RET_LO, TARG_HI, TARG_LO

LINE, RESULT = 0x30000, 0x30100  # the 16-byte line operated on; where the response lands
AT, RESP_MARKED = 1, 1 << 4


def cas(ofs: int, cmp: int, new: int) -> int:
    return 4 << 12 | new << 6 | cmp << 2 | ofs


def swap_mask(mask: int) -> int:
    return 3 << 12 | mask << 2


def swap_index(form: int, ofs: int) -> int:
    return {6: 6 << 12 | 1 << 2 | ofs, 7: 7 << 12 | ofs << 2, 10: 0xA << 12 | 3 << 8 | ofs}[form]


def reference(line: list[int], word: int, at: int, data: int) -> tuple[list[int], int]:
    """Atomics.md: (the line's words after, Result = the word at NOC_TARG_ADDR_LO before)."""
    after, result = list(line), line[word]
    opcode = at >> 12 & 0xF
    if opcode == 3:
        halves = [h for w in line for h in (w & 0xFFFF, w >> 16)]
        for i in range(8):
            if at >> 2 + i & 1:
                halves[i] = data & 0xFFFF if i % 2 == 0 else data >> 16
        return [halves[2 * i] | halves[2 * i + 1] << 16 for i in range(4)], result
    ofs = at >> 2 & 3 if opcode == 7 else at & 3
    if opcode == 4:
        if line[ofs] == at >> 2 & 0xF:
            after[ofs] = at >> 6 & 0xF
    else:
        after[ofs] = data
    return after, result


_REUSED: list = []  # one tile for the property tests' examples (a tile takes a while to build)


def blackhole_atomic(
    line: list[int], word: int, at: int, data: int, reuse: bool = False
) -> tuple[list[int], int]:
    """Line and Result after the atomic, on a fresh tile, or with ``reuse`` on the shared one, each
    request 10,000 cycles after the last."""
    if not reuse:
        tile, cycle = Tile("blackhole"), 100
    else:
        if not _REUSED:
            _REUSED.append([Tile("blackhole"), 0])
        tile, cycle = _REUSED[0]
        _REUSED[0][1] = cycle = cycle + 10_000
    tile.write(LINE, np.array(line, np.uint32))
    tile.write(RESULT, np.zeros(1, np.uint32))
    own = tile.noc.position[0] | tile.noc.position[1] << 6
    f = tile.noc.requests[0, 0]
    f[TARG_LO], f[TARG_HI], f[RET_LO], f[RET_HI] = LINE + 4 * word, own, RESULT, own
    f[CTRL], f[AT_LEN_BE], f[AT_DATA] = AT | RESP_MARKED, at, data
    tile.noc.initiate(0, 0, cycle)
    tile.noc.deliver(cycle + 9_900)
    words = np.frombuffer(tile.read(LINE, 16), np.uint32).tolist()
    return words, int.from_bytes(tile.read(RESULT, 4), "little")


WORDS = st.lists(st.integers(0, 2**32 - 1), min_size=4, max_size=4)
SMALL = st.lists(st.integers(0, 15), min_size=4, max_size=4)  # CAS compares 4-bit values


@given(line=st.one_of(WORDS, SMALL), word=st.integers(0, 3), ofs=st.integers(0, 3), cmp=st.integers(0, 15),
       new=st.integers(0, 15))  # fmt: skip
def test_compare_and_swap_sets_the_word_only_when_it_equals_cmpval(line, word, ofs, cmp, new):
    at = cas(ofs, cmp, new)
    assert blackhole_atomic(line, word, at, 0, reuse=True) == reference(line, word, at, 0)


@given(line=WORDS, word=st.integers(0, 3), mask=st.integers(0, 255), data=st.integers(0, 2**32 - 1))
def test_swap_by_mask_writes_the_enabled_halfwords(line, word, mask, data):
    at = swap_mask(mask)
    assert blackhole_atomic(line, word, at, data, reuse=True) == reference(line, word, at, data)


@pytest.mark.parametrize("form", [6, 7, 10])
@given(line=WORDS, word=st.integers(0, 3), ofs=st.integers(0, 3), data=st.integers(0, 2**32 - 1))
def test_swap_by_index_writes_the_word_ofs_names(form, line, word, ofs, data):
    at = swap_index(form, ofs)
    assert blackhole_atomic(line, word, at, data, reuse=True) == reference(line, word, at, data)


def test_a_cas_that_matches_returns_the_old_value_hand_worked():
    # Word 2 holds 7: CAS(Ofs 2, CmpVal 7, SetVal 9) sets it to 9 and answers 7; then CmpVal 7 fails.
    assert blackhole_atomic([1, 2, 7, 4], 2, cas(2, 7, 9), 0) == ([1, 2, 9, 4], 7)
    assert blackhole_atomic([1, 2, 8, 4], 2, cas(2, 7, 9), 0) == ([1, 2, 8, 4], 8)


@pytest.mark.parametrize(
    ("at", "match"),
    [
        (6 << 12, "0x6 \\(swap by index\\) without bit 2"),
        (0xA << 12 | 1 << 8, "neither bit 11"),
    ],
)
def test_undocumented_operand_forms_are_undefined_and_change_nothing(at, match):
    with pytest.raises(UndefinedBehavior, match=match):
        blackhole_atomic([5, 6, 7, 8], 0, at, 3)


def test_parallel_addition_is_named_as_not_modelled():
    with pytest.raises(Unimplemented, match="parallel addition"):
        blackhole_atomic([5, 6, 7, 8], 0, 9 << 12, 3)


@pytest.mark.parametrize(
    ("at", "data", "line", "after"),
    [
        (cas(1, 2, 11), 0, [0, 2, 0, 0], [0, 11, 0, 0]),
        (swap_mask(0b1001), 0xAAAA5555, [0, 0, 0, 0], [0x5555, 0xAAAA << 16, 0, 0]),
        (swap_index(6, 3), 0x1234, [0, 0, 0, 0], [0, 0, 0, 0x1234]),
        (swap_index(7, 1), 0x4321, [0, 0, 0, 0], [0, 0x4321, 0, 0]),
    ],
)
def test_wormhole_performs_the_same_atomics(at, data, line, after):
    here = wh.mid(wh.OWN)
    fields = {wh.TARG_LO: wh.FLAG, wh.TARG_MID: here, wh.RET_LO: wh.OUT, wh.RET_MID: here}
    fields |= {wh.CTRL: wh.AT | wh.RESP_MARKED, wh.AT_LEN_BE: at, wh.AT_DATA: data}
    program = wh.request(0, fields) + wh.wait(wh.counter(0, wh.ATOMIC_RESP_RECEIVED), 1)
    tile = wh.run(program, lambda t: t.write(wh.FLAG, np.array(line, np.uint32)))
    assert np.frombuffer(tile.read(wh.FLAG, 16), np.uint32).tolist() == after
    assert int.from_bytes(tile.read(wh.OUT, 4), "little") == line[0]
