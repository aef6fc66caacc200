"""A small TRISC0 kernel with a known outcome, to show a tile still works (after an error and
``Tile.reset``) exactly as a new one does.

It pushes scalar-unit arithmetic on GPRs, a semaphore set-up and post, and a MOP of NOPs, waits for
its pipe to drain, then stores a GPR and the semaphore's value to L1 and exits with the GPR.
"""

from __future__ import annotations

import functools

from asm import assemble

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix.native.lockstep import differences, snapshot

ISA = isa_for("blackhole")
BASE = 0x6000  # TRISC0's reset PC
OUT = 0x20000  # L1: [GPR 2, semaphore 3's value]


def _inline(word: int) -> str:
    return f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"


def _words() -> list[int]:
    add = "ADDDMAREG"
    return [
        ISA.encode(add, op_b_is_const=1, result_reg_index=1, op_b_reg_index=5, op_a_reg_index=0),
        ISA.encode(add, op_b_is_const=1, result_reg_index=2, op_b_reg_index=7, op_a_reg_index=1),
        ISA.encode("SEMINIT", max_value=4, init_value=2, sem_sel=1 << 3),
        ISA.encode("SEMPOST", sem_sel=1 << 3),
        ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0),
    ]


def source() -> str:
    nop = ISA.encode("NOP")
    lines = ["li s0, 0xFFB80000"]  # the MOP configuration: outer 2, inner 3, every op a NOP
    for i, word in enumerate([2, 3] + [nop] * 7):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    lines += [_inline(w) for w in _words()]
    lines += [
        "li s1, 0xFFE80000",
        "lw t1, 4(s1)",  # CoprocessorDoneCheck: returns once the pipe has drained
        "li s2, 0xFFE00000",
        "lw a0, 8(s2)",  # GPR 2 of pipe 0
        f"li s3, 0x{OUT:x}",
        "sw a0, 0(s3)",
        "lw t2, 0x2c(s1)",  # semaphore 3
        "sw t2, 4(s3)",
        "ecall",
    ]
    return "\n".join(lines)


@functools.cache
def _image() -> bytes:
    return assemble(source(), base=BASE)


EXPECTED_GPR = 12  # (0 + 5) + 7
EXPECTED_SEM = 3  # initialised to 2, posted once


def run_known_kernel(tile: Tile) -> dict[str, object]:
    """Load and run the kernel on ``tile``; check its results; return what a new tile must match."""
    tile.write(BASE, _image())
    result = tile.run(release=["trisc0"], max_cycles=100_000)
    gpr, sem = (int.from_bytes(tile.read(OUT + 4 * i, 4), "little") for i in range(2))
    assert (gpr, sem) == (EXPECTED_GPR, EXPECTED_SEM)
    assert result.cores["trisc0"].exit_code == EXPECTED_GPR
    state = snapshot(tile)
    del state["l1"]  # the failed program may have left other bytes in L1
    return {"result": result, "state": state}


def assert_like_a_new_tile(tile: Tile) -> None:
    """The kernel runs on ``tile`` with the results, cycles and coprocessor state of a new tile."""
    got = run_known_kernel(tile)
    want = _on_a_new_tile(tile.backend.engine)
    assert got["result"] == want["result"]
    assert differences(got["state"], want["state"]) == [], differences(got["state"], want["state"])


@functools.cache
def _on_a_new_tile(engine: str) -> dict[str, object]:
    return run_known_kernel(Tile("blackhole", engine=engine))
