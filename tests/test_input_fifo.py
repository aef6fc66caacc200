"""The input FIFO in front of each pipe: when a push enters (Blackhole PushTensixInstruction.md).

"The very first FIFO has a capacity of 32 instructions, but this capacity can only be hit by starting
with 28 instructions and pushing four instructions in a single cycle via .ttinsn fusion. Once the FIFO
contains more than 28 instructions, it needs to drop back down to 28 instructions before it'll accept
any more." A TRISC pushes faster than its pipe runs the words: one a cycle of SHIFTDMAREG, which
holds its unit three cycles, or fused groups of four SETDMAREGs, which the pipe runs one a cycle.
From the queue's record of every push and every take, the words the queue held as each push
entered are counted (a slot the pipe frees at a cycle takes a push from the next), on both engines.
"""

from __future__ import annotations

import pytest
from asm import assemble

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import native

ENGINES = ["python"] + (["native"] if native.available() else [])
ISA = isa_for("blackhole")
SETDMAREG = ISA.encode(
    "SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=5, set_signals_mode=0, reg_index_16b=4
)
SHIFTDMAREG = ISA.encode(
    "SHIFTDMAREG", op_b_is_const=1, op_sel=0, result_reg_index=24, op_b_reg_index=1, op_a_reg_index=24
)


def held_at_each_push(monkeypatch: pytest.MonkeyPatch, engine: str, fused: bool) -> list[tuple[int, bool]]:
    """(words the queue held, continues a fused group) as each of TRISC0's 200 pushes entered."""
    monkeypatch.setenv("TENSIXSIM_ENGINE", engine)
    pushed = SETDMAREG if fused else SHIFTDMAREG
    word = f".word {((pushed << 2) | (pushed >> 30)) & 0xFFFFFFFF:#x}"
    fusion = [] if fused else ["li t0, 0x40000", "csrs 0x7c0, t0"]  # DisTriscCache: one word a cycle
    tile = Tile("blackhole", record_pushes=True)
    assert tile.backend.engine == engine
    tile.write(0x6000, assemble("\n".join([*fusion, *[word] * 200, "ecall"]), base=0x6000))
    tile.run(max_cycles=100_000, release=["trisc0"])
    queue = tile.queues[0]
    taken = sorted(cycle for cycle, _ in queue.taken)
    pushes = [entry.cycle for entry in queue.history()]
    assert len(pushes) == len(taken) == 200
    held = []
    for i, cycle in enumerate(pushes):
        freed = sum(1 for t in taken if t < cycle)
        held.append((i - freed, i > 0 and pushes[i - 1] == cycle))
    return held


@pytest.mark.parametrize("engine", ENGINES)
def test_one_word_a_cycle_enters_only_at_28_or_fewer(monkeypatch, engine):
    held = held_at_each_push(monkeypatch, engine, fused=False)
    assert not any(continues for _, continues in held)
    assert max(count for count, _ in held) == 28  # so the queue holds 29 at most


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fused_group_started_at_28_fills_it_to_32(monkeypatch, engine):
    held = held_at_each_push(monkeypatch, engine, fused=True)
    assert max(count for count, continues in held if not continues) == 28
    assert max(count for count, continues in held if continues) == 31  # the fourth word: 32 held
