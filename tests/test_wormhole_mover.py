"""XMOV on a Wormhole tile: copies and zero-fills into L1, the backend configuration and NCRISC's
instruction RAM, the wait for the mover, and its errors.

The reference is written from tt-isa-documentation WormholeB0/TensixTile/Mover.md and XMOV.md (on
Wormhole the page's L1 bound, 1464 KiB, and its RISCV NC instruction RAM window are the chip's own),
with L1 and the 16 KiB instruction RAM (BabyRISCV/InstructionRAM.md) as ``bytearray`` and Config as
lists of ints updated by BackendConfiguration.md's rules for a store. Where the pages are open it takes
the readings mover.py states: a transfer starting in L1 and running past its end faults; overlapping
copies are undefined; Config, its second state and ConfigDualWrite are written as RISC-V stores write
them, anything past them (ThreadConfig) is unimplemented; bytes past the instruction RAM's 16 KiB in
its 64 KiB window are undefined; "nowhere" keeps the low 16 bits of the address for the window check.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble, link
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import RefFault, RefUB, RefUnimplemented, emulator_outcome, reference_outcome
from test_mover import ref_cycles  # Mover.md's performance figures (a Wormhole page)

from tensixsim import MemoryFault, Tile, UndefinedBehavior, Unimplemented, raw
from tensixsim.tensix.config import fields_wormhole as fields
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.semantics import Context, Retire, lookup

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

L1_SIZE = 1024 * 1464  # Mover.md: "dst must be an address in L1": dst >= 1024*1464 is undefined
IRAM_SIZE = 16 * 1024  # InstructionRAM.md: RISCV NC's instruction RAM
IRAM_BASE = 0xFFC00000  # MEM_NCRISC_IRAM_BASE, where NCRISC fetches it
XMOV_L0_TO_L1, XMOV_L1_TO_L0, XMOV_L0_TO_L0, XMOV_L1_TO_L1 = range(4)
STATE_WORDS = fields.CFG_STATE_SIZE * 4  # Config[i] words
GLOBAL_BASE = fields.GLOBAL_CFGREG_BASE_ADDR32
STATE_RESET_EN = fields.CONFIG_FIELDS["STATE_RESET_EN"][0]
CONFIG_BYTES = 3 * STATE_WORDS * 4  # Config[0], Config[1], ConfigDualWrite; ThreadConfig follows
B0 = 1 << 0
C12 = 1 << 12  # Wormhole STALLWAIT.md: the mover has memory requests outstanding

# ---------------------------------------------------------------------------- reference model


class Ref:
    """L1, ``uint32_t Config[2][CFG_STATE_SIZE * 4]`` and the instruction RAM, changed by Mover()."""

    def __init__(self, l1: np.ndarray, config: np.ndarray, iram: np.ndarray) -> None:
        self.L1 = bytearray(l1.tobytes())
        self.Config = [[int(v) for v in config[s]] for s in range(2)]
        self.IRAM = bytearray(iram.tobytes())

    def ConfigWrite(self, states: tuple[int, ...], j: int, value: int) -> None:
        """BackendConfiguration.md: a write of Config[i][j] (ConfigDualWrite: both i)."""
        for i in states:
            if j == STATE_RESET_EN:
                for k in range(GLOBAL_BASE):
                    self.Config[i][k] = 0
            elif j >= GLOBAL_BASE:
                self.Config[0][j] = self.Config[1][j] = value
            else:
                self.Config[i][j] = value

    def write(self, target: tuple[str, int], data: bytes) -> None:
        kind, addr = target
        if kind == "L1":
            self.L1[addr : addr + len(data)] = data
        elif kind == "IRAM":
            self.IRAM[addr : addr + len(data)] = data
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
            if dst >= 1024 * 1464:
                raise RefUB
            if dst + count > L1_SIZE:
                raise RefFault  # reading: running off the end of L1
            target = ("L1", dst)
        else:
            if dst <= 0xFFFF:
                target = ("CFG", dst)
            elif 0x40000 <= dst <= 0x4FFFF:
                target = ("IRAM", dst - 0x40000)
            else:
                target = ("NOWHERE", dst)  # reading: keeps dst's low 16 bits
            if (dst & 0xFFFF) + count > 0x10000:
                raise RefUB
            if target[0] == "CFG" and dst + count > CONFIG_BYTES:
                raise RefUnimplemented  # ThreadConfig and beyond: no documented mover write
            if target[0] == "IRAM" and target[1] + count > IRAM_SIZE:
                raise RefUB  # reading: past the 16 KiB of RAM in the 64 KiB window
        if mode in (XMOV_L1_TO_L1, XMOV_L1_TO_L0):
            if src >= 1024 * 1464:
                raise RefUB
            if src + count > L1_SIZE:
                raise RefFault
            if mode == XMOV_L1_TO_L1 and count and src < dst + count and dst < src + count:
                raise RefUB  # reading: memcpy of overlapping ranges
            self.write(target, bytes(self.L1[src : src + count]))
        else:
            self.write(target, bytes(count))

    def XMOV(self, state: dict[str, int]) -> None:
        # XMOV.md: the issuing thread's Config state's THCON_SEC0_REG6 fields.
        self.Mover(
            state["Destination_address"] << 4,
            state["Source_address"] << 4,
            (state["Buffer_size"] & 0xFFFF) << 4,
            state["Transfer_direction"],
        )


# ---------------------------------------------------------------------------- set-up

TILE = Tile("wormhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
_RNG = np.random.default_rng(17)
L1_PATTERN = _RNG.integers(0, 256, L1_SIZE, dtype=np.uint8)
IRAM_PATTERN = _RNG.integers(0, 256, IRAM_SIZE, dtype=np.uint8)


def word(name: str, **values: int) -> int:
    return ISA.encode(name, **(dict.fromkeys(ISA.by_name[name].field_names, 0) | values))


def configure(config, state: int, regs: dict[str, int]) -> None:
    for name, value in regs.items():
        config.write_field(f"THCON_SEC0_REG6_{name}", state, value)


def execute(thread: int, instruction_word: int, cycle: int = 100):
    ctx = Context(COPRO, thread, cycle, ISA.decode(instruction_word), f"trisc{thread}", 0x6000)
    return lookup("wormhole", ctx.instruction.name)(ctx, **ctx.instruction.fields)


units_near = st.one_of(
    st.integers(0, 64),
    st.integers(0, 0x7FFF),
    st.integers(L1_SIZE // 16 - 80, L1_SIZE // 16 + 8),  # around the end of L1
    st.integers(0, (1 << 32) - 1),
)
# Non-L1 targets: Config and its edge, the end of a 64 KiB window, the instruction RAM and its end,
# nowhere.
target_units = st.one_of(
    st.integers(0, CONFIG_BYTES // 16 + 4),
    st.integers(0xFF0, 0xFFF),
    st.integers(0x4000, 0x4000 + IRAM_SIZE // 16 + 4),
    st.integers(0x4000, 0x4FFF),
    st.integers(0x1000, 0x3FFF),
    st.integers(0x5000, (1 << 32) - 1),
)
sizes = st.one_of(
    st.integers(0, 80),
    st.integers(0, 1 << 16),
    st.builds(lambda low, high: low | high << 16, st.integers(0, 80), st.integers(1, (1 << 14) - 1)),
)


@st.composite
def mover_setups(draw) -> dict[str, int]:
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
    config = COPRO.config
    config.config[:] = np.random.default_rng(config_seed).integers(0, 1 << 32, config.config.shape, np.uint32)
    np.copyto(TILE.l1, L1_PATTERN)
    np.copyto(TILE.iram["ncrisc"], IRAM_PATTERN)
    config.write_thread_field("CFG_STATE_ID_StateID", thread, state)
    configure(config, state, regs)
    ref = Ref(TILE.l1, config.config, TILE.iram["ncrisc"])
    before = config.config.copy()

    result: list = []
    got = emulator_outcome(lambda: result.append(execute(thread, word("XMOV"))) or result[0])
    want = reference_outcome(lambda: ref.XMOV(regs))
    assert got == want, regs
    if got == "retire":
        size = (regs["Buffer_size"] & 0xFFFF) * 16
        assert result[0] == Retire(ref_cycles(regs["Transfer_direction"], size))
        assert TILE.l1.tobytes() == bytes(ref.L1)
        assert TILE.iram["ncrisc"].tobytes() == bytes(ref.IRAM)
        assert config.config.tolist() == ref.Config
    else:  # nothing written
        assert np.array_equal(TILE.l1, L1_PATTERN) and np.array_equal(TILE.iram["ncrisc"], IRAM_PATTERN)
        assert np.array_equal(config.config, before)


# ---------------------------------------------------------------------------- examples


def setup_tile(regs: dict[str, int], state: int = 0) -> Tile:
    tile = Tile("wormhole")
    tile.l1[:] = L1_PATTERN
    configure(tile.coprocessor.config, state, regs)
    return tile


def test_ncrisc_runs_what_xmov_copies_into_its_instruction_ram():
    """XMOV_L1_TO_L0 to 0x40000 fills RISCV NC's instruction RAM (Mover.md), which NCRISC runs from
    0xFFC00000; a second XMOV replaces the code, and NCRISC runs the new code (nothing translated
    from the old bytes survives)."""
    tile = Tile("wormhole")
    tile.load_elf("ncrisc", link(f"li t0, 0x{IRAM_BASE:x}\n jr t0", text=0x12000, march="rv32im"))
    for value in (0x11, 0x22):
        code = assemble(f"li a0, {value}\n ecall", base=IRAM_BASE, march="rv32im").ljust(16, b"\0")
        tile.l1[0x20000 : 0x20000 + len(code)] = np.frombuffer(code, np.uint8)
        regs = {"Source_address": 0x2000, "Destination_address": 0x4000, "Buffer_size": 1}
        configure(tile.coprocessor.config, 0, regs | {"Transfer_direction": XMOV_L1_TO_L0})
        raw.run_words(tile, 0, [word("XMOV")])
        assert tile.iram["ncrisc"][:16].tobytes() == code
        assert tile.run(release=["ncrisc"]).cores["ncrisc"].exit_code == value
        tile.reset()


def test_zero_fill_of_the_instruction_ram_leaves_the_rest():
    tile = setup_tile({"Destination_address": 0x4000 + 2, "Buffer_size": 3, "Transfer_direction": 2})
    tile.iram["ncrisc"][:] = IRAM_PATTERN
    raw.run_words(tile, 0, [word("XMOV")])
    assert not tile.iram["ncrisc"][32:80].any()
    assert tile.iram["ncrisc"][:32].tobytes() == IRAM_PATTERN[:32].tobytes()
    assert tile.iram["ncrisc"][80:].tobytes() == IRAM_PATTERN[80:].tobytes()


def issue_cycles(issued, thread: int, name: str) -> list[int]:
    return [c for t, w, c in issued if t == thread and ISA.decode(w).name == name]


def test_stallwait_c12_waits_for_the_transfer():
    # 64 units of L1-to-L1 copy: Mover.md's eight units per 11 cycles, 88 cycles.
    tile = setup_tile(
        {"Source_address": 0x1000, "Destination_address": 0x4000, "Buffer_size": 64, "Transfer_direction": 3}
    )
    tile.backend.retired = []
    issued = tile.backend.retired
    programs = {
        0: [word("XMOV"), word("XMOV")],
        1: [word("STALLWAIT", stall_res=B0, wait_res=C12), word("NOP")],
    }
    for thread, words in programs.items():
        tile.queues[thread].entries.extend(PushedInstruction(w, f"trisc{thread}", 0, 0, False) for w in words)
    tile.backend.advance_to(raw.NEVER)
    first, second = issue_cycles(issued, 0, "XMOV")
    assert second == first + 88  # the mover takes the next XMOV only once it is free
    assert issue_cycles(issued, 1, "NOP") == [second + 88 + 1]


def error_of(regs: dict[str, int]) -> Exception:
    tile = setup_tile(regs)
    tile.iram["ncrisc"][:] = IRAM_PATTERN
    with pytest.raises((UndefinedBehavior, Unimplemented, MemoryFault)) as info:
        raw.run_words(tile, 0, [word("XMOV")])
    assert np.array_equal(tile.l1, L1_PATTERN) and np.array_equal(tile.iram["ncrisc"], IRAM_PATTERN)
    return info.value


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
        (regs6(dst=L1_SIZE >> 4), UndefinedBehavior, "beyond L1"),
        (regs6(dst=(L1_SIZE >> 4) - 1, units=2), MemoryFault, "past the end of L1"),
        (regs6(dst=0x4400 - 1, units=2, mode=2), UndefinedBehavior, "16 KiB"),
        (regs6(dst=0x4FFF, units=2, mode=2), UndefinedBehavior, "64 KiB"),
        (regs6(dst=CONFIG_BYTES // 16, units=1, mode=2), Unimplemented, "ThreadConfig"),
    ],
)
def test_undefined_and_unmodelled_targets(regs, kind, match):
    error = error_of(regs)
    assert isinstance(error, kind) and match in str(error)
