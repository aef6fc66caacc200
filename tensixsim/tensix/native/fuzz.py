"""Random Tensix words through the native engine, to show it never faults.

``python -m tensixsim.tensix.native.fuzz --words 1000000 --seed 1`` pushes random words into the three
pipes of one tile, in batches, and runs the coprocessor after each batch. A batch either runs or stops
with a named :class:`~tensixsim.errors.SimError` (then the pipes are emptied and the next batch goes
on); anything else is a failure, and a native fault would kill the process. Most words are drawn from
the instruction table with random operands (so they get past decoding), some are any 32-bit value.
Prints a count per outcome; exits non-zero on an unexpected exception.
"""

from __future__ import annotations

import argparse
import collections
import sys

import numpy as np

from tensixsim.errors import SimError
from tensixsim.isa import isa_for
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native.lockstep import NATIVE_CANDIDATES
from tensixsim.tile import Tile

NEVER = 1 << 62
BATCH = 64  # words per pipe and batch
# The instructions the native engine executes (or defers in some modes), drawn most often: those of
# the lockstep tests, and the frontend's.
NATIVE_MIX = [*NATIVE_CANDIDATES, "REPLAY", "MOP"]


def random_words(rng: np.random.Generator, count: int, arch: str = "blackhole") -> list[int]:
    """``count`` words: instructions of the table with random operands (mostly small ones, which are
    valid far more often, and mostly instructions the native engine runs), and a few of any value."""
    isa = isa_for(arch)
    opcodes = np.array([spec.opcode for spec in isa], np.uint32)
    native = np.array([isa.by_name[name].opcode for name in NATIVE_MIX if name in isa.by_name], np.uint32)
    operands = rng.integers(0, 1 << 24, count, dtype=np.uint32)
    small = rng.random(count) < 0.9
    operands[small] &= rng.choice(np.array([0x1, 0x3, 0x3F, 0xFFF], np.uint32), int(small.sum()))
    pick = np.where(
        rng.random(count) < 0.8,
        native[rng.integers(0, len(native), count)],
        opcodes[rng.integers(0, len(opcodes), count)],
    )
    words = (pick << 24) | operands
    wild = rng.random(count) < 0.01
    words[wild] = rng.integers(0, 1 << 32, int(wild.sum()), dtype=np.uint64).astype(np.uint32)
    return [int(w) for w in words]


def _drop(tile: Tile, pipe: int | None) -> None:
    """After an error: drop what ``pipe`` (None: every pipe) has in flight and release its waits, so
    the run goes on from the state the error left."""
    engine = tile.backend
    copro = tile.coprocessor
    for p in engine.pipes if pipe is None else [engine.pipes[pipe]]:
        p.words.clear()
        p.blocked = None
        p.retry_at = None
        p.watch_l1 = None
        copro.sync.gate_kind[p.thread] = 0
        copro.frontend.mop_busy[p.thread] = False
        copro.frontend.record_left[p.thread] = 0
    if engine.native is not None:
        engine.native.discard_pending()


def fuzz(words: int, seed: int, *, engine: str = "native") -> collections.Counter[str]:
    """Push ``words`` random words and run them; each error, counted by kind, drops the instruction
    (or expansion) that raised and the run goes on."""
    rng = np.random.default_rng(seed)
    tile = Tile("blackhole", engine=engine)
    for thread in range(3):  # a MOP configuration of native instructions, so MOPs expand
        for index, word in enumerate([3, 2, *random_words(rng, 7)]):
            tile.coprocessor.frontend.write_mop_config(thread, index, word)
    outcomes: collections.Counter[str] = collections.Counter()
    cycle = 0
    done = 0
    while done < words:
        batch = random_words(rng, 3 * BATCH)
        for i, word in enumerate(batch):
            pipe = i % 3
            core = "brisc" if rng.random() < 0.1 else f"trisc{pipe}"
            tile.queues[pipe].entries.append(PushedInstruction(word, core, 4 * i, cycle + i // 3, True))
        done += len(batch)
        for _ in range(len(batch) + 1):
            try:
                tile.backend.advance_to(NEVER)
                break
            except SimError as error:
                outcomes[type(error).__name__] += 1
                _drop(tile, (error.pc // 4) % 3 if isinstance(error.pc, int) else None)
        _drop(tile, None)  # what still waits (a semaphore, a latched wait) never will be released
        for queue in tile.queues:
            queue.entries.clear()
        cycle = max([tile.backend.cycle, *(p.next_issue for p in tile.backend.pipes)]) + 1
    outcomes["words issued"] = sum(p.issued for p in tile.backend.pipes)
    if tile.backend.native is not None:
        outcomes["words executed natively"] = tile.backend.native.instructions
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=("native", "python"), default="native")
    args = parser.parse_args(argv)
    outcomes = fuzz(args.words, args.seed, engine=args.engine)
    for name, count in sorted(outcomes.items(), key=lambda kv: -kv[1]):
        print(f"{name:24} {count:>10}")
    print(f"{args.words} words pushed, no other outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main())
