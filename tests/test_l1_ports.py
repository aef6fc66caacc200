"""L1 access-port sharing between the baby cores (timing.py ``l1_ports``, docs/timing.md).

The sharing is off by default (``l1_port_sharing``); these tests turn it on, but the first.

Reference: round-robin among the n cores of a port that are out of reset gives a core one turn in n,
and an atomic holds the port ``l1_port_atomic`` cycles; back-to-back amoadd.w of one core therefore
issue every max(atomic_latency, n * l1_port_atomic) cycles, worked out by hand below.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_tile import tile_with, word_at

import tensixsim.tile as tile_module
from tensixsim.timing import RISCV

SHARING = replace(RISCV, l1_port_sharing=True)

DATA = 0x20000
RESULT = 0x21000
WALL = 0xFFB121F0
AMOS = 16
IDLE = "ecall"  # a core out of reset takes its port share even when it has finished


def amo_loop(result: int, rounds: int = 1) -> str:
    """``rounds`` times: read the wall clock, AMOS amoadd.w to one L1 word; then the elapsed cycles
    of the whole to ``result``."""
    body = "\n".join(["lw s6, 0(t0)"] + ["amoadd.w a0, a5, (s0)"] * AMOS)
    return f"""
        li s0, {DATA}
        li t0, {WALL}
        li a5, 1
        lw s5, 0(t0)
        .rept {rounds}
        {body}
        .endr
        lw s6, 0(t0)
        sub a0, s6, s5
        li t1, {result}
        sw a0, 0(t1)
        ecall
    """


def elapsed(programs: dict[str, str], core: str, **kwargs) -> int:
    tile = tile_with(programs, **kwargs)
    tile.run(max_cycles=1_000_000, release=list(programs))
    return word_at(tile, RESULT + 16 * ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"].index(core))


def expected_extra(share: int, amos: int = AMOS) -> int:
    """Cycles a chain of ``amos`` atomics takes beyond the one-core chain with ``share`` port users."""
    period = max(RISCV.atomic_latency, share * RISCV.l1_port_atomic)
    return (amos - 1) * (period - RISCV.atomic_latency)


@pytest.fixture(autouse=True)
def sharing(monkeypatch):
    monkeypatch.setattr(tile_module, "RISCV", SHARING)


def test_by_default_idle_port_mates_cost_nothing(monkeypatch):
    monkeypatch.setattr(tile_module, "RISCV", RISCV)
    alone = elapsed({"ncrisc": amo_loop(RESULT + 16)}, "ncrisc")
    beside = elapsed({"ncrisc": amo_loop(RESULT + 16), "brisc": IDLE, "trisc0": IDLE}, "ncrisc")
    assert beside == alone
    assert expected_extra(3) > 0  # (what sharing would have added)


@pytest.mark.parametrize(
    ("core", "others", "share"),
    [
        ("ncrisc", ("brisc",), 2),
        ("ncrisc", ("brisc", "trisc0"), 3),
        ("ncrisc", ("trisc1", "trisc2"), 1),  # the other port
        ("trisc1", ("trisc2",), 2),
        ("trisc1", ("brisc", "ncrisc", "trisc0"), 1),
    ],
)
def test_cores_out_of_reset_on_the_same_port_share_it(core, others, share):
    index = ["brisc", "ncrisc", "trisc0", "trisc1", "trisc2"].index(core)
    alone = elapsed({core: amo_loop(RESULT + 16 * index)}, core)
    shared = elapsed({core: amo_loop(RESULT + 16 * index), **dict.fromkeys(others, IDLE)}, core)
    assert shared - alone == expected_extra(share)


def test_the_ports_are_the_documented_wiring():
    assert RISCV.port_mates("brisc") == ("brisc", "ncrisc", "trisc0")
    assert RISCV.port_mates("trisc2") == ("trisc1", "trisc2")


# BRISC releases NCRISC, waits, then releases TRISC0 while NCRISC is in the middle of its atomics.
LATE_RELEASE = {
    "brisc": """
        li t0, 0xFFB121B0
        li t1, 0x47800 & ~(1 << 11) & ~(1 << 18)
        sw t1, 0(t0)             # release NCRISC
        li t2, 120
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t1, 0x47800 & ~(1 << 11) & ~(1 << 18) & ~(1 << 12)
        sw t1, 0(t0)             # and TRISC0
        ecall
    """,
    "ncrisc": amo_loop(RESULT + 16, rounds=8),
    "trisc0": IDLE,
}


@pytest.mark.parametrize("quantum", [16, 300, 5000])
def test_a_share_change_by_another_core_does_not_depend_on_the_quantum(quantum):
    def run(q: int) -> int:
        tile = tile_with(LATE_RELEASE, quantum=q)
        tile.run(max_cycles=1_000_000, release=["brisc"])
        return word_at(tile, RESULT + 16)

    late = run(quantum)
    assert late == run(100)
    # NCRISC shares its port with BRISC from the start and with TRISC0 from a wall-clock read after
    # the second release: between the two whole-run extremes.
    two, three = expected_extra(2, 8 * AMOS), expected_extra(3, 8 * AMOS)
    base = elapsed({"ncrisc": amo_loop(RESULT + 16, rounds=8)}, "ncrisc")
    assert base + two < late < base + three


def test_a_tile_reset_forgets_the_shares():
    tile = tile_with(dict.fromkeys(("brisc", "ncrisc", "trisc0"), IDLE))
    tile.release("brisc", "ncrisc", "trisc0")
    assert tile.core("ncrisc").hooks.state.port_share == 3
    tile.reset()
    assert tile.core("ncrisc").hooks.state.port_share == 1
