"""The mover (XMOV): copies and zero-fills in 16-byte units, the wait for it, and its errors.

The reference below is written from the functional model of tt-isa-documentation
WormholeB0/TensixTile/Mover.md and XMOV.md, with L1 as a ``bytearray`` and Config as lists of ints
updated by BackendConfiguration.md's rules for a store; the readings mover.py states where the page
is open (Blackhole's L1 size, overlap, ThreadConfig, the instruction RAM, "nowhere") are marked.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import RefFault, RefUB, RefUnimplemented, emulator_outcome, reference_outcome

from tensixsim import MemoryFault, Tile, UndefinedBehavior, Unimplemented, raw
from tensixsim.tensix.config import fields_blackhole as fields
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.semantics import Context, Retire, lookup
from tensixsim.timing import FRONTEND

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

L1_SIZE = 1536 * 1024  # Blackhole L1 (BabyRISCV memory map); the page's 1464 KiB is Wormhole's
XMOV_L0_TO_L1, XMOV_L1_TO_L0, XMOV_L0_TO_L0, XMOV_L1_TO_L1 = range(4)
STATE_WORDS = fields.CFG_STATE_SIZE * 4  # Config[i] words
GLOBAL_BASE = fields.GLOBAL_CFGREG_BASE_ADDR32
STATE_RESET_EN = fields.CONFIG_FIELDS["STATE_RESET_EN"][0]
CONFIG_BYTES = 3 * STATE_WORDS * 4  # Config[0], Config[1], ConfigDualWrite; ThreadConfig follows
B0, B4 = 1 << 0, 1 << 4
C9 = 1 << 9  # Blackhole STALLWAIT: the mover has memory requests outstanding


# ---------------------------------------------------------------------------- reference model


class Ref:
    """L1 and ``uint32_t Config[2][CFG_STATE_SIZE * 4]`` changed by Mover(dst, src, count, mode)."""

    def __init__(self, l1: np.ndarray, config: np.ndarray) -> None:
        self.L1 = bytearray(l1.tobytes())
        self.Config = [[int(v) for v in config[s]] for s in range(2)]

    # BackendConfiguration.md: a write of Config[i][j] (ConfigDualWrite: both i).
    def ConfigWrite(self, states: tuple[int, ...], j: int, value: int) -> None:
        for i in states:
            if j == STATE_RESET_EN:
                for k in range(GLOBAL_BASE):
                    self.Config[i][k] = 0
            elif j >= GLOBAL_BASE:
                self.Config[0][j] = self.Config[1][j] = value
            else:
                self.Config[i][j] = value

    def write(self, dst: int, data: bytes) -> None:
        kind, addr = dst
        if kind == "L1":
            self.L1[addr : addr + len(data)] = data
        elif kind == "CFG":
            for k in range(0, len(data), 4):
                j = (addr + k) // 4
                value = int.from_bytes(data[k : k + 4], "little")
                if j < STATE_WORDS:
                    self.ConfigWrite((0,), j, value)
                elif j < 2 * STATE_WORDS:
                    self.ConfigWrite((1,), j - STATE_WORDS, value)
                else:
                    self.ConfigWrite((0, 1), j - 2 * STATE_WORDS, value)
        # NOWHERE: discarded

    def Mover(self, dst: int, src: int, count: int, mode: int) -> None:
        if mode in (XMOV_L1_TO_L1, XMOV_L0_TO_L1):
            if dst >= L1_SIZE:
                raise RefUB
            if dst + count > L1_SIZE:
                raise RefFault  # reading: running off the end of L1
            target = ("L1", dst)
        else:
            if dst <= 0xFFFF:
                target = ("CFG", dst)
            elif 0x40000 <= dst <= 0x4FFFF:
                raise RefUnimplemented  # Blackhole has no RISCV NC instruction RAM
            else:
                target = ("NOWHERE", dst)  # reading: keeps dst's low 16 bits
            if (dst & 0xFFFF) + count > 0x10000:
                raise RefUB
            if target[0] == "CFG" and dst + count > CONFIG_BYTES:
                raise RefUnimplemented  # ThreadConfig and beyond: no documented mover write
        if mode in (XMOV_L1_TO_L1, XMOV_L1_TO_L0):
            if src >= L1_SIZE:
                raise RefUB
            if src + count > L1_SIZE:
                raise RefFault
            if mode == XMOV_L1_TO_L1 and count and src < dst + count and dst < src + count:
                raise RefUB  # reading: memcpy of overlapping ranges
            self.write(target, bytes(self.L1[src : src + count]))
        else:
            self.write(target, bytes(count))

    def XMOV(self, state: dict[str, int]) -> None:
        self.Mover(
            state["Destination_address"] << 4,
            state["Source_address"] << 4,
            (state["Buffer_size"] & 0xFFFF) << 4,
            state["Transfer_direction"],
        )


def ref_cycles(mode: int, count: int) -> int:
    """Mover.md "Performance", ideal conditions: a copy moves eight 16-byte units per 11 cycles, a
    memset writes one unit per cycle; XMOV itself takes one cycle."""
    units = count // 16
    if mode in (XMOV_L1_TO_L1, XMOV_L1_TO_L0):
        return max(1, (units * 11 + 7) // 8)
    return max(1, units)


# ---------------------------------------------------------------------------- set-up


TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
_RNG = np.random.default_rng(13)
L1_PATTERN = _RNG.integers(0, 256, L1_SIZE, dtype=np.uint8)


def word(name: str, **values: int) -> int:
    return ISA.encode(name, **(dict.fromkeys(ISA.by_name[name].field_names, 0) | values))


def configure(config, state: int, regs: dict[str, int]) -> None:
    for name, value in regs.items():
        config.write_field(f"THCON_SEC0_REG6_{name}", state, value)


def execute(thread: int, instruction_word: int, cycle: int = 100):
    ctx = Context(COPRO, thread, cycle, ISA.decode(instruction_word), f"trisc{thread}", 0x4000)
    return lookup("blackhole", ctx.instruction.name)(ctx, **ctx.instruction.fields)


def reset(config_words: np.ndarray) -> None:
    np.copyto(TILE.l1, L1_PATTERN)
    COPRO.config.config[:] = config_words


units_near = st.one_of(
    st.integers(0, 64),
    st.integers(0, 0x7FFF),
    st.integers(L1_SIZE // 16 - 80, L1_SIZE // 16 + 8),  # around the end of L1
    st.integers(0, (1 << 32) - 1),
)
# Non-L1 targets: Config and its edge, the end of the 64 KiB window, instruction RAM, nowhere.
target_units = st.one_of(
    st.integers(0, CONFIG_BYTES // 16 + 4),
    st.integers(0xFF0, 0xFFF),
    st.integers(0x4000, 0x4FFF),
    st.integers(0x1000, 0x3FFF),
    st.integers(0x5000, (1 << 32) - 1),
)
# Buffer_size is 30 bits, of which the model uses the low 16: small sizes with high bits set too.
sizes = st.one_of(
    st.integers(0, 80),
    st.integers(0, 1 << 16),
    st.integers(0, (1 << 30) - 1),
    st.builds(lambda low, high: low | high << 16, st.integers(0, 80), st.integers(1, (1 << 14) - 1)),
)


@st.composite
def mover_setups(draw):
    mode = draw(st.integers(0, 3))
    to_l1 = mode in (XMOV_L0_TO_L1, XMOV_L1_TO_L1)
    return {
        "Transfer_direction": mode,
        "Destination_address": draw(units_near if to_l1 else target_units),
        "Source_address": draw(units_near),
        "Buffer_size": draw(sizes),
    }


@SETTINGS
@given(
    regs=mover_setups(),
    thread=st.integers(0, 2),
    state=st.integers(0, 1),
    config_seed=st.integers(0, 2**32 - 1),
)
def test_xmov_matches_the_reference(regs, thread, state, config_seed):
    config_words = np.random.default_rng(config_seed).integers(
        0, 1 << 32, COPRO.config.config.shape, np.uint32
    )
    reset(config_words)
    config = COPRO.config
    config.write_thread_field("CFG_STATE_ID_StateID", thread, state)
    configure(config, state, regs)
    ref = Ref(TILE.l1, config.config)
    before = config.config.copy()

    result: list = []
    got = emulator_outcome(lambda: result.append(execute(thread, word("XMOV"))) or result[0])
    want = reference_outcome(lambda: ref.XMOV(regs))
    assert got == want, regs
    if got == "retire":
        assert result[0] == Retire(
            ref_cycles(regs["Transfer_direction"], (regs["Buffer_size"] & 0xFFFF) * 16)
        )
        assert TILE.l1.tobytes() == bytes(ref.L1)
        assert config.config.tolist() == ref.Config
    else:
        assert np.array_equal(TILE.l1, L1_PATTERN)  # nothing written
        assert np.array_equal(config.config, before)


# ---------------------------------------------------------------------------- examples


def setup_tile(regs: dict[str, int], state: int = 0) -> Tile:
    tile = Tile("blackhole")
    tile.l1[:] = L1_PATTERN
    configure(tile.coprocessor.config, state, regs)
    return tile


def test_copy_through_the_pipe():
    src, dst, units = 0x20000, 0x30000, 40
    tile = setup_tile(
        {
            "Source_address": src >> 4,
            "Destination_address": dst >> 4,
            "Buffer_size": units,
            "Transfer_direction": 3,
        }
    )
    raw.run_words(tile, 0, [word("XMOV")])
    assert tile.l1[dst : dst + units * 16].tobytes() == L1_PATTERN[src : src + units * 16].tobytes()
    assert np.array_equal(tile.l1[dst + units * 16 :], L1_PATTERN[dst + units * 16 :])
    assert np.array_equal(tile.l1[:dst], L1_PATTERN[:dst])


def test_memset_uses_the_issuing_threads_config_state():
    # Thread 2 uses Config[1]; Config[0] describes another transfer that must not happen.
    tile = setup_tile({"Destination_address": 0x100, "Buffer_size": 4, "Transfer_direction": 0}, state=1)
    configure(tile.coprocessor.config, 0, {"Destination_address": 0x200, "Buffer_size": 4})
    tile.coprocessor.config.write_thread_field("CFG_STATE_ID_StateID", 2, 1)
    raw.run_words(tile, 2, [word("XMOV")])
    assert not tile.l1[0x1000:0x1040].any()
    assert tile.l1[0x1040] == L1_PATTERN[0x1040]
    assert tile.l1[0x2000:0x2040].tobytes() == L1_PATTERN[0x2000:0x2040].tobytes()


def test_copy_into_config_and_dual_write():
    # Four words into Config[0] at index 8, four into ConfigDualWrite at index 12.
    tile = setup_tile({})
    copro = tile.coprocessor
    values = np.arange(1, 9, dtype="<u4") * 0x01010101
    tile.l1[0x8000:0x8020] = np.frombuffer(values.tobytes(), np.uint8)
    for dst, src in ((8 * 4, 0x8000), (2 * STATE_WORDS * 4 + 12 * 4, 0x8010)):
        configure(copro.config, 0, {"Source_address": src >> 4, "Destination_address": dst >> 4})
        configure(copro.config, 0, {"Buffer_size": 1, "Transfer_direction": 1})
        raw.run_words(tile, 0, [word("XMOV")])
    assert copro.config.config[0, 8:12].tolist() == values[:4].tolist()
    assert (
        copro.config.config[0, 12:16].tolist()
        == copro.config.config[1, 12:16].tolist()
        == values[4:].tolist()
    )
    assert not copro.config.config[1, 8:12].any()


def record_issues(tile: Tile) -> list[tuple[int, int, int]]:
    """Start the engine's trace of retired instructions (thread, word, issue cycle), on either engine."""
    tile.backend.retired = []
    return tile.backend.retired


def issue_cycles(issued, thread: int, name: str) -> list[int]:
    return [c for t, w, c in issued if t == thread and ISA.decode(w).name == name]


@pytest.mark.parametrize(("mode", "units", "cycles"), [(3, 64, 88), (3, 3, 5), (0, 50, 50), (2, 16, 16)])
def test_stallwait_c9_waits_for_the_transfer(mode, units, cycles):
    # Mode 2 zero-fills the start of Config[1] (thread 0 reads its transfer from Config[0]).
    dst = STATE_WORDS * 4 // 16 if mode == 2 else 0x4000
    tile = setup_tile(
        {
            "Source_address": 0x1000,
            "Destination_address": dst,
            "Buffer_size": units,
            "Transfer_direction": mode,
        }
    )
    issued = record_issues(tile)
    programs = {
        0: [word("XMOV"), word("XMOV")],
        1: [word("STALLWAIT", stall_res=B0, wait_res=C9), word("NOP")],
        2: [word("STALLWAIT", stall_res=B0, wait_res=1 << 4), word("NOP")],
    }
    for thread, words in programs.items():
        tile.queues[thread].entries.extend(PushedInstruction(w, f"trisc{thread}", 0, 0, False) for w in words)
    tile.backend.advance_to(raw.NEVER)
    first, second = issue_cycles(issued, 0, "XMOV")
    assert first == FRONTEND.push_to_issue  # pushed at cycle 0
    assert second == first + cycles  # the mover takes the next XMOV only once it is free
    # C9 passes the cycle after the mover has nothing outstanding (the gate sees the previous cycle);
    # the second XMOV issued before the STALLWAIT's NOP passed, so it waits for that one too.
    assert issue_cycles(issued, 1, "NOP") == [second + cycles + 1]
    # A wait on another condition (C4, matrix unit: idle) is not held by the mover.
    # (The wait gate's documented lag holds it one cycle.)
    assert issue_cycles(issued, 2, "NOP") == [issue_cycles(issued, 2, "STALLWAIT")[0] + 2]


# ---------------------------------------------------------------------------- errors


def error_of(regs: dict[str, int], instruction_word: int | None = None) -> Exception:
    tile = setup_tile(regs)
    with pytest.raises((UndefinedBehavior, Unimplemented, MemoryFault)) as info:
        raw.run_words(tile, 0, [instruction_word or word("XMOV")])
    assert np.array_equal(tile.l1, L1_PATTERN)
    assert info.value.core == "trisc0"
    return info.value


def test_end_of_l1_is_a_fault_naming_the_address():
    start = L1_SIZE - 0x20
    error = error_of({"Destination_address": start >> 4, "Buffer_size": 3, "Transfer_direction": 0})
    assert isinstance(error, MemoryFault) and error.address == start and error.write
    error = error_of(
        {"Source_address": start >> 4, "Destination_address": 0, "Buffer_size": 4, "Transfer_direction": 3}
    )
    assert isinstance(error, MemoryFault) and error.address == start and not error.write


def regs6(dst: int = 0, src: int = 0, units: int = 0, mode: int = 0) -> dict[str, int]:
    """THCON_SEC0_REG6 fields: addresses in 16-byte units, the size in units, the direction."""
    return {
        "Destination_address": dst,
        "Source_address": src,
        "Buffer_size": units,
        "Transfer_direction": mode,
    }


@pytest.mark.parametrize(
    ("regs", "kind", "match"),
    [
        (regs6(dst=L1_SIZE >> 4, mode=0), UndefinedBehavior, "beyond L1"),
        (regs6(src=1 << 20, mode=1), UndefinedBehavior, "beyond L1"),
        (regs6(dst=0x104, src=0x100, units=8, mode=3), UndefinedBehavior, "overlap"),
        (regs6(dst=0x100, src=0x104, units=8, mode=3), UndefinedBehavior, "overlap"),
        (regs6(dst=0xFFF, units=2, mode=2), UndefinedBehavior, "64 KiB"),
        (regs6(dst=0x1FFF, units=2, mode=2), UndefinedBehavior, "64 KiB"),
        (regs6(dst=0x4000, units=1, mode=2), Unimplemented, "instruction"),
        (regs6(dst=CONFIG_BYTES // 16, units=1, mode=2), Unimplemented, "ThreadConfig"),
    ],
)
def test_undefined_and_unmodelled_targets(regs, kind, match):
    error = error_of(regs)
    assert isinstance(error, kind) and match in str(error)


@pytest.mark.parametrize("fields", [{"mov_block_selection": 1}, {"last": 1}, {"last": 1 << 22}])
def test_instruction_bits_are_undocumented(fields):
    error = error_of({"Buffer_size": 1}, word("XMOV", **fields))
    assert isinstance(error, UndefinedBehavior)


def test_nowhere_discards_the_writes():
    tile = setup_tile({"Destination_address": 0x2000, "Buffer_size": 16, "Transfer_direction": 1})
    before = tile.coprocessor.config.config.copy()
    raw.run_words(tile, 0, [word("XMOV")])
    assert np.array_equal(tile.l1, L1_PATTERN)
    assert np.array_equal(tile.coprocessor.config.config, before)
