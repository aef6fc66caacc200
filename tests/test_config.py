"""Configuration unit: the field table, SETC16 / WRCFG / RDCFG / RMWCIB / CFGSHIFTMASK / STREAMWRCFG,
and the RISC-V view of Config and ThreadConfig.

The reference model below is written from tt-isa-documentation BlackholeA0 (BackendConfiguration and
each instruction's functional model) as literally as Python allows, with its operands' documented
names. The constants it needs are copied from tt-metal's Blackhole cfg_defines.h (labelled), not
taken from the emulator's table, so the table is checked too.
"""

# The reference keeps the documentation's CamelCase operand names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import struct

import numpy as np
import pytest
from asm import assemble
from hypothesis import given, settings
from hypothesis import strategies as st
from outcomes import RefUB, RefUnimplemented, emulator_outcome, reference_outcome

from tensixsim import MemoryFault, Tile, Unimplemented
from tensixsim.tensix.config import fields_blackhole as table
from tensixsim.tensix.config.unit import ConfigState
from tensixsim.tensix.semantics import Context, lookup

M32 = 0xFFFFFFFF
DATA = 0x20000

# ---------------------------------------------------------------- facts from cfg_defines.h
# tt-metal tt_metal/hw/inc/blackhole/cfg_defines.h (commit 120b164d), copied by hand.
CFG_STATE_SIZE = 56
THD_STATE_SIZE = 68
GLOBAL_CFGREG_BASE_ADDR32 = 180
STATE_RESET_EN_ADDR32 = 4
CFG_STATE_ID_StateID_ADDR32 = 0  # ThreadConfig, mask 0x1
SCRATCH_SEC_val_ADDR32 = (209, 210, 211)
STREAM_ID_SYNC_SEC_BankSel_ADDR32 = (59, 60, 61, 62)  # ThreadConfig, mask 0x3f
UNPACK_MISC_CFG_ADDR32 = 41  # ThreadConfig: CfgContextCntReset_0 0x10, _1 0x1000, _metadata 0x4000,
CNT_RESET = (0x10, 0x1000)  # _metadata_zstart 0x8000
CNT_RESET_METADATA = 0x4000 | 0x8000
PRNG_SEED_Seed_Val_ADDR32 = 186
RISCV_IC_INVALIDATE_InvalidateAll_ADDR32 = 185
CONFIG_WORDS = CFG_STATE_SIZE * 4

# name: (ADDR32, SHAMT, MASK), as cfg_defines.h spells them.
CFG_DEFINES = {
    "ALU_FORMAT_SPEC_REG0_SrcA": (1, 17, 0x1E0000),
    "ALU_FORMAT_SPEC_REG2_Dstacc": (1, 25, 0x1E000000),
    "ALU_ACC_CTRL_INT8_math_enabled": (1, 31, 0x80000000),
    "STACC_RELU_ReluThreshold": (2, 6, 0x3FFFC0),
    "ECC_SCRUBBER_Delay": (3, 3, 0x3FF8),
    "STATE_RESET_EN": (4, 0, 0x1),
    "PCK0_ADDR_BASE_REG_0_Base": (16, 0, 0x3FFFF),
    "UNP0_ADDR_CTRL_ZW_REG_0_Wstride": (45, 16, 0xFFFF0000),
    "THCON_SEC0_REG0_TileDescriptor": (64, 0, (1 << 128) - 1),
    "THCON_SEC0_REG1_pack_start_intf_pos": (70, 17, 0x1E0000),
    "THCON_SEC1_REG10_Unpack_limit_address_en": (153, 17, 0x20000),
    "DEST_TARGET_REG_CFG_PACK_SEC0_ZOffset": (180, 12, 0x3F000),
    "RISCV_IC_INVALIDATE_InvalidateAll": (185, 0, 0x1F),
    "PRNG_SEED_Seed_Val": (186, 0, 0xFFFFFFFF),
}
THREAD_CFG_DEFINES = {
    "CFG_STATE_ID_StateID": (0, 0, 0x1),
    "DEST_TARGET_REG_CFG_MATH_Offset": (1, 0, 0xFFF),
    "SFPU_DEST_FMT_Base": (4, 1, 0x1E),
    "ADDR_MOD_AB_SEC0_SrcBIncr": (12, 8, 0x3F00),
    "ADDR_MOD_AB_SEC3_SrcBClear": (15, 15, 0x8000),
}

# ---------------------------------------------------------------- reference model


def rotr(x: int, amt: int) -> int:
    """Rotate the 32-bit ``x`` right by ``amt`` bits (as a string of bits, unlike the emulator)."""
    bits = format(x, "032b")
    return int(bits[32 - amt :] + bits[: 32 - amt], 2)


class Ref:
    """``uint32_t Config[2][CFG_STATE_SIZE*4]``, ``ThreadConfig[3][THD_STATE_SIZE]``, ``GPRs[3][64]``."""

    def __init__(self, config: np.ndarray, thread: np.ndarray, gprs: np.ndarray) -> None:
        self.Config = [[int(v) for v in row] for row in config]
        self.ThreadConfig = [[int(v) for v in row] for row in thread]
        self.GPRs = [[int(v) for v in row] for row in gprs]
        self.context_counter = [[1, 1, 1], [1, 1, 1]]  # Unpackers[u].ContextCounter[thread]

    def write(self, i: int, j: int, value: int, *, rmwcib: bool = False) -> None:
        """BackendConfiguration "Special cases" of a write to Config[i][j]."""
        if j == STATE_RESET_EN_ADDR32 and not rmwcib:
            for k in range(GLOBAL_CFGREG_BASE_ADDR32):
                self.Config[i][k] = 0
            return
        if j >= GLOBAL_CFGREG_BASE_ADDR32:
            self.Config[0][j] = self.Config[1][j] = value & M32
        else:
            self.Config[i][j] = value & M32

    def state_id(self, CurrentThread: int) -> int:
        return self.ThreadConfig[CurrentThread][CFG_STATE_ID_StateID_ADDR32] & 1

    def SETC16(self, CurrentThread: int, CfgIndex: int, NewValue: int) -> None:
        if CfgIndex >= THD_STATE_SIZE:
            raise RefUB
        if CfgIndex == UNPACK_MISC_CFG_ADDR32 and NewValue & CNT_RESET_METADATA:
            raise RefUnimplemented
        self.ThreadConfig[CurrentThread][CfgIndex] = NewValue
        if CfgIndex == UNPACK_MISC_CFG_ADDR32:
            for u in (0, 1):
                if NewValue & CNT_RESET[u]:
                    self.context_counter[u][CurrentThread] = 0

    def WRCFG(self, CurrentThread: int, InputReg: int, Is128Bit: int, CfgIndex: int) -> None:
        if CfgIndex >= CONFIG_WORDS or InputReg >= 64:
            raise RefUB
        StateID = self.state_id(CurrentThread)
        if Is128Bit:
            for k in range(4):
                self.write(StateID, (CfgIndex & ~3) + k, self.GPRs[CurrentThread][(InputReg & ~3) + k])
        else:
            self.write(StateID, CfgIndex, self.GPRs[CurrentThread][InputReg])

    def RDCFG(self, CurrentThread: int, ResultReg: int, CfgIndex: int) -> None:
        if CfgIndex >= CONFIG_WORDS or ResultReg >= 64:
            raise RefUB
        StateID = self.state_id(CurrentThread)
        self.GPRs[CurrentThread][ResultReg] = self.Config[StateID][CfgIndex]

    def RMWCIB(self, CurrentThread: int, Index1: int, Mask: int, NewValue: int, Index4: int) -> None:
        if Index4 >= CONFIG_WORDS:
            raise RefUB
        StateID = self.state_id(CurrentThread)
        word = self.Config[StateID][Index4]
        as_bytes = bytearray(struct.pack("<I", word))
        OldValue = as_bytes[Index1]
        as_bytes[Index1] = ((NewValue & Mask) | (OldValue & ~Mask)) & 0xFF
        self.write(StateID, Index4, struct.unpack("<I", as_bytes)[0], rmwcib=True)

    def CFGSHIFTMASK(
        self,
        CurrentThread: int,
        MaskMode: int,
        AluMode: int,
        MaskWidth: int,
        RotateAmt: int,
        ScratchIndex: int,
        CfgIndex: int,
    ) -> None:
        if CfgIndex >= CONFIG_WORDS:
            raise RefUB
        ScratchValue = self.Config[0][
            SCRATCH_SEC_val_ADDR32[ScratchIndex if ScratchIndex < 3 else CurrentThread]
        ]
        MaskValue = ((2 << MaskWidth) - 1) & M32
        ScratchValue = rotr(ScratchValue & MaskValue, RotateAmt)
        StateID = self.state_id(CurrentThread)
        CfgValue = self.Config[StateID][CfgIndex]
        if MaskMode == 0:
            CfgValue &= ~rotr(MaskValue, RotateAmt) & M32
        CfgValue = {
            0: lambda: CfgValue | ScratchValue,
            1: lambda: CfgValue & ScratchValue,
            2: lambda: CfgValue ^ ScratchValue,
            3: lambda: CfgValue + ScratchValue,
            4: lambda: CfgValue | (ScratchValue ^ M32),
            5: lambda: CfgValue & (ScratchValue ^ M32),
            6: lambda: CfgValue ^ (ScratchValue ^ M32),
            7: lambda: CfgValue - ScratchValue,
        }[AluMode]()
        self.write(StateID, CfgIndex, CfgValue & M32)

    def STREAMWRCFG(
        self, CurrentThread: int, StreamSelect: int, RegIndex: int, CfgIndex: int, streams
    ) -> None:
        if CfgIndex >= CONFIG_WORDS or StreamSelect >= 4:
            raise RefUB
        StreamIndex = self.ThreadConfig[CurrentThread][STREAM_ID_SYNC_SEC_BankSel_ADDR32[StreamSelect]] & 0x3F
        StateID = self.state_id(CurrentThread)
        self.write(StateID, CfgIndex, streams.read(StreamIndex, RegIndex))


# ---------------------------------------------------------------- harness

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa


def load(seed: int, *, state_id: int | None = None) -> Ref:
    """Random Config, ThreadConfig and GPRs (from ``seed``) in the coprocessor and a reference."""
    rng = np.random.default_rng(seed)
    config = rng.integers(0, 1 << 32, (2, CONFIG_WORDS), dtype=np.uint64).astype(np.uint32)
    config[1, GLOBAL_CFGREG_BASE_ADDR32:] = config[0, GLOBAL_CFGREG_BASE_ADDR32:]  # one copy, really
    thread = rng.integers(0, 1 << 16, (3, THD_STATE_SIZE), dtype=np.uint32).astype(np.uint16)
    if state_id is not None:
        thread[:, CFG_STATE_ID_StateID_ADDR32] = state_id
    gprs = rng.integers(0, 1 << 32, (3, 64), dtype=np.uint64).astype(np.uint32)
    COPRO.config.config[:] = config
    COPRO.config.thread[:] = thread
    COPRO.config.unpack_context[:] = 1
    COPRO.thcon.gprs[:] = gprs
    return Ref(config, thread, gprs)


def execute(name: str, thread: int, **fields: int):
    word = ISA.encode(name, **fields)
    ctx = Context(COPRO, thread, 100, ISA.decode(word), f"trisc{thread}", 0x6000)
    return lookup("blackhole", name)(ctx, **ctx.instruction.fields)


def snapshot() -> tuple[np.ndarray, ...]:
    c = COPRO.config
    return c.config.copy(), c.thread.copy(), c.unpack_context.copy(), COPRO.thcon.gprs.copy()


def check(ref: Ref, ref_call, name: str, thread: int, **fields: int) -> None:
    """Run the reference and the semantics: same outcome, same state afterwards (unchanged on error)."""
    before = snapshot()
    expected = reference_outcome(lambda: ref_call())
    got = emulator_outcome(lambda: execute(name, thread, **fields))
    assert got == expected
    if got != "retire":
        assert all(np.array_equal(a, b) for a, b in zip(before, snapshot(), strict=True))
    assert COPRO.config.config.tolist() == ref.Config
    assert COPRO.config.thread.tolist() == ref.ThreadConfig
    assert COPRO.thcon.gprs.tolist() == ref.GPRs
    assert COPRO.config.unpack_context.tolist() == ref.context_counter


seeds = st.integers(0, 2**32 - 1)
threads = st.integers(0, 2)
# Config indices: mostly valid, with the special words and the bounds hit often.
cfg_index = st.one_of(
    st.integers(0, CONFIG_WORDS - 1),
    st.sampled_from([STATE_RESET_EN_ADDR32, 179, 180, 181, PRNG_SEED_Seed_Val_ADDR32, 223, 224, 255]),
)
# GPR indices: the slot is 8 bits, the operand 6.
gpr_index = st.one_of(st.integers(0, 63), st.sampled_from([64, 65, 128, 255]), st.integers(0, 255))
SLOW = settings(max_examples=60, deadline=None)

# ---------------------------------------------------------------- the field table


@pytest.mark.parametrize(
    ("fields", "words", "widest"),
    [(table.CONFIG_FIELDS, CONFIG_WORDS, 32), (table.THREAD_FIELDS, THD_STATE_SIZE, 16)],
    ids=["Config", "ThreadConfig"],
)
def test_field_table_has_no_overlapping_fields_and_every_field_fits_its_word(fields, words, widest):
    used: dict[int, int] = {}  # word -> bits claimed so far
    for name, (word, shift, width) in fields.items():
        assert name.isidentifier()
        if width > 32:  # a wide field: whole words from bit 0 (only the 128-bit tile descriptors)
            assert name.endswith("_TileDescriptor") and shift == 0 and width % 32 == 0
            spans = [(word + i, M32) for i in range(width // 32)]
        else:
            assert 1 <= width <= widest and shift + width <= widest, name
            spans = [(word, ((1 << width) - 1) << shift)]
        for w, bits in spans:
            assert 0 <= w < words, name
            assert not used.get(w, 0) & bits, f"{name} overlaps another field in word {w}"
            used[w] = used.get(w, 0) | bits
    assert not set(table.CONFIG_FIELDS) & set(table.THREAD_FIELDS)  # a name says which it is


def test_sizes_match_cfg_defines():
    assert (table.CFG_STATE_SIZE, table.THD_STATE_SIZE) == (CFG_STATE_SIZE, THD_STATE_SIZE)
    assert table.GLOBAL_CFGREG_BASE_ADDR32 == GLOBAL_CFGREG_BASE_ADDR32
    assert COPRO.config.config.shape == (2, CONFIG_WORDS)
    assert COPRO.config.thread.shape == (3, THD_STATE_SIZE)


@pytest.mark.parametrize(
    ("fields", "name", "expected"),
    [(table.CONFIG_FIELDS, n, v) for n, v in CFG_DEFINES.items()]
    + [(table.THREAD_FIELDS, n, v) for n, v in THREAD_CFG_DEFINES.items()],
    ids=[*CFG_DEFINES, *THREAD_CFG_DEFINES],
)
def test_named_fields_match_cfg_defines(fields, name, expected):
    word, shift, width = fields[name]
    assert (word, shift, ((1 << width) - 1) << shift) == expected


@SLOW
@given(seeds, st.sampled_from(sorted(table.CONFIG_FIELDS)), st.integers(0, 1), st.data())
def test_write_field_sets_only_that_field(seed, name, state, data):
    load(seed)
    word, shift, width = table.CONFIG_FIELDS[name]
    value = data.draw(st.integers(0, (1 << width) - 1))
    before = COPRO.config.config.copy()
    COPRO.config.write_field(name, state, value)
    assert COPRO.config.read_field(name, state) == value
    after = COPRO.config.config
    states = [0, 1] if word >= GLOBAL_CFGREG_BASE_ADDR32 else [state]
    for s in (0, 1):
        for w in range(CONFIG_WORDS):
            bits = 0
            if s in states and word <= w < word + max(1, width // 32):
                bits = M32 if width >= 32 else ((1 << width) - 1) << shift
            assert int(after[s, w]) & ~bits & M32 == int(before[s, w]) & ~bits & M32


def test_write_field_rejects_a_value_wider_than_the_field():
    with pytest.raises(ValueError, match="4 bits"):
        COPRO.config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, 16)


def test_the_tile_descriptor_spans_four_words_lowest_first():
    load(1)
    COPRO.config.write_field("THCON_SEC1_REG0_TileDescriptor", 1, 0x44444444_33333333_22222222_11111111)
    assert COPRO.config.config[1, 112:116].tolist() == [0x11111111, 0x22222222, 0x33333333, 0x44444444]
    assert (
        COPRO.config.read_field("THCON_SEC1_REG0_TileDescriptor", 1) == 0x44444444_33333333_22222222_11111111
    )


@given(threads, st.integers(0, 1), st.integers(0, 15), st.integers(0, 15))
def test_field_for_thread_reads_the_state_cfg_state_id_selects(thread, state, in_state0, in_state1):
    load(2)
    config = COPRO.config
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 0, in_state0)
    config.write_field("ALU_FORMAT_SPEC_REG0_SrcA", 1, in_state1)
    config.write_thread_field("CFG_STATE_ID_StateID", thread, state)
    assert config.field_for_thread("ALU_FORMAT_SPEC_REG0_SrcA", thread) == (in_state0, in_state1)[state]
    # ThreadConfig fields are the thread's own, whatever its state.
    assert config.field_for_thread("CFG_STATE_ID_StateID", thread) == state
    config.write_thread_field("FIDELITY_BASE_Phase", thread, 3)
    assert config.field_for_thread("FIDELITY_BASE_Phase", thread) == 3


# ---------------------------------------------------------------- SETC16


@SLOW
@given(
    seeds, threads, st.one_of(st.integers(0, 255), st.just(UNPACK_MISC_CFG_ADDR32)), st.integers(0, 0xFFFF)
)
def test_setc16_matches_the_reference(seed, thread, index, value):
    ref = load(seed)
    check(
        ref, lambda: ref.SETC16(thread, index, value), "SETC16", thread, setc16_reg=index, setc16_value=value
    )


@pytest.mark.parametrize("bit", [0x4000, 0x8000])
def test_setc16_resetting_metadata_context_counters_is_unimplemented(bit):
    load(3)
    with pytest.raises(Unimplemented, match="metadata"):
        execute("SETC16", 1, setc16_reg=UNPACK_MISC_CFG_ADDR32, setc16_value=bit)


def test_setc16_resets_only_the_context_counters_whose_bit_is_set():
    load(4)
    # LLK's unpack init writes offsets alone (0x0104) and later resets both counters (0x1010).
    execute("SETC16", 2, setc16_reg=UNPACK_MISC_CFG_ADDR32, setc16_value=0x0104)
    assert COPRO.config.unpack_context.tolist() == [[1, 1, 1], [1, 1, 1]]
    execute("SETC16", 2, setc16_reg=UNPACK_MISC_CFG_ADDR32, setc16_value=0x1000)
    assert COPRO.config.unpack_context.tolist() == [[1, 1, 1], [1, 1, 0]]
    execute("SETC16", 0, setc16_reg=UNPACK_MISC_CFG_ADDR32, setc16_value=0x1010)
    assert COPRO.config.unpack_context.tolist() == [[0, 1, 1], [0, 1, 0]]


# ---------------------------------------------------------------- WRCFG / RDCFG


@SLOW
@given(seeds, threads, gpr_index, st.integers(0, 1), cfg_index)
def test_wrcfg_matches_the_reference(seed, thread, input_reg, is_128, index):
    ref = load(seed)
    check(
        ref,
        lambda: ref.WRCFG(thread, input_reg, is_128, index),
        "WRCFG",
        thread,
        gpr_address=input_reg,
        wr128b=is_128,
        cfg_reg=index,
    )


@SLOW
@given(
    seeds,
    threads,
    gpr_index,
    st.one_of(cfg_index, st.integers(0, 0xFFFF)),
)
def test_rdcfg_matches_the_reference(seed, thread, result_reg, index):
    ref = load(seed)
    check(
        ref,
        lambda: ref.RDCFG(thread, result_reg, index),
        "RDCFG",
        thread,
        gpr_address=result_reg,
        cfg_reg=index,
    )


@pytest.mark.parametrize("state", [0, 1])
def test_wrcfg_writes_the_state_its_thread_selected(state):
    load(5, state_id=1 - state)
    COPRO.config.write_thread_field("CFG_STATE_ID_StateID", 1, state)
    COPRO.thcon.gprs[1, 9] = 0xA5A5A5A5
    execute("WRCFG", 1, gpr_address=9, wr128b=0, cfg_reg=100)
    assert COPRO.config.config[state, 100] == 0xA5A5A5A5
    assert COPRO.config.config[1 - state, 100] != 0xA5A5A5A5


def test_wrcfg_128_bits_rounds_both_indices_down_to_four():
    load(6, state_id=0)
    COPRO.thcon.gprs[0, 8:12] = [1, 2, 3, 4]
    execute("WRCFG", 0, gpr_address=10, wr128b=1, cfg_reg=66)
    assert COPRO.config.config[0, 64:68].tolist() == [1, 2, 3, 4]


def test_a_write_to_state_reset_en_clears_that_states_non_global_words():
    load(7, state_id=1)
    before = COPRO.config.config.copy()
    execute("WRCFG", 0, gpr_address=0, wr128b=0, cfg_reg=STATE_RESET_EN_ADDR32)
    after = COPRO.config.config
    assert not after[1, :GLOBAL_CFGREG_BASE_ADDR32].any()
    assert np.array_equal(after[1, GLOBAL_CFGREG_BASE_ADDR32:], before[1, GLOBAL_CFGREG_BASE_ADDR32:])
    assert np.array_equal(after[0], before[0])


def test_global_words_have_one_value_for_both_states():
    load(8, state_id=0)
    COPRO.thcon.gprs[2, 1] = 0x600DF00D
    COPRO.config.write_thread_field("CFG_STATE_ID_StateID", 2, 1)
    execute("WRCFG", 2, gpr_address=1, wr128b=0, cfg_reg=GLOBAL_CFGREG_BASE_ADDR32 + 3)
    assert COPRO.config.config[:, GLOBAL_CFGREG_BASE_ADDR32 + 3].tolist() == [0x600DF00D] * 2


def test_writing_the_prng_seed_reseeds_through_the_coprocessor_when_a_prng_exists():
    load(9, state_id=0)
    seeds_seen: list[int] = []
    COPRO.seed_prng = seeds_seen.append
    try:
        COPRO.thcon.gprs[0, 0] = 1234
        execute("WRCFG", 0, gpr_address=0, wr128b=0, cfg_reg=PRNG_SEED_Seed_Val_ADDR32)
    finally:
        del COPRO.seed_prng
    assert seeds_seen == [1234]
    assert COPRO.config.read_field("PRNG_SEED_Seed_Val", 1) == 1234


# ---------------------------------------------------------------- RMWCIB / CFGSHIFTMASK


@SLOW
@given(seeds, threads, st.integers(0, 3), st.integers(0, 255), st.integers(0, 255), cfg_index)
def test_rmwcib_changes_the_masked_bits_of_one_byte(seed, thread, byte, mask, data, index):
    ref = load(seed)
    check(
        ref,
        lambda: ref.RMWCIB(thread, byte, mask, data, index),
        f"RMWCIB{byte}",
        thread,
        mask=mask,
        data=data,
        cfg_reg_addr=index,
    )


def test_rmwcib_on_state_reset_en_does_not_reset():
    load(10, state_id=0)
    before = COPRO.config.config.copy()
    execute("RMWCIB0", 0, mask=1, data=1, cfg_reg_addr=STATE_RESET_EN_ADDR32)
    expected = before.copy()
    expected[0, STATE_RESET_EN_ADDR32] |= 1
    assert np.array_equal(COPRO.config.config, expected)


@SLOW
@given(
    seeds,
    threads,
    st.integers(0, 1),
    st.integers(0, 7),
    st.integers(0, 31),
    st.integers(0, 31),
    st.integers(0, 3),
    cfg_index,
)
def test_cfgshiftmask_matches_the_reference(seed, thread, mask_mode, alu_mode, width, rotate, scratch, index):
    ref = load(seed)
    check(
        ref,
        lambda: ref.CFGSHIFTMASK(thread, mask_mode, alu_mode, width, rotate, scratch, index),
        "CFGSHIFTMASK",
        thread,
        disable_mask_on_old_val=mask_mode,
        operation=alu_mode,
        mask_width=width,
        right_cshift_amt=rotate,
        scratch_sel=scratch,
        cfg_reg=index,
    )


def test_cfgshiftmask_adds_a_scratch_value_as_llk_uses_it():
    # MaskMode 1, AluMode 3 (add), MaskWidth 31, no rotation: Config += SCRATCH_SEC[thread].
    load(11, state_id=0)
    COPRO.config.config[0, 50] = 0xFFFFFFF0
    COPRO.config.write_field("SCRATCH_SEC2_val", 0, 0x20)
    execute("CFGSHIFTMASK", 2, disable_mask_on_old_val=1, operation=3, mask_width=31,
            right_cshift_amt=0, scratch_sel=3, cfg_reg=50)  # fmt: skip
    assert COPRO.config.config[0, 50] == 0x10


# ---------------------------------------------------------------- STREAMWRCFG


class StubStreams:
    def read(self, stream: int, index: int) -> int:
        return (stream * 0x10000 + index * 7 + 1) & M32


@SLOW
@given(seeds, threads, st.integers(0, 7), st.integers(0, 1023), st.one_of(cfg_index, st.integers(0, 2047)))
def test_streamwrcfg_reads_the_stream_its_thread_selected(seed, thread, select, reg, index):
    ref = load(seed)
    real = TILE.streams
    TILE.streams = StubStreams()
    try:
        check(
            ref,
            lambda: ref.STREAMWRCFG(thread, select, reg, index, TILE.streams),
            "STREAMWRCFG",
            thread,
            stream_id_sel=select,
            stream_reg_addr=reg,
            cfg_reg=index,
        )
    finally:
        TILE.streams = real


def test_streamwrcfg_reads_a_real_stream_register():
    load(12, state_id=0)
    COPRO.config.write_thread_field("STREAM_ID_SYNC_SEC1_BankSel", 0, 5)
    TILE.streams.write(5, 10, 0x77)
    execute("STREAMWRCFG", 0, stream_id_sel=1, stream_reg_addr=10, cfg_reg=30)
    assert COPRO.config.config[0, 30] == 0x77


# ---------------------------------------------------------------- the RISC-V view

BASE = table.TENSIX_CFG_BASE
STATE1 = BASE + CFG_STATE_SIZE * 16  # tt-llk get_cfg_pointer(): state 1 at CFG_STATE_SIZE * 16 bytes
DUAL = BASE + 2 * CFG_STATE_SIZE * 16
THREAD_CONFIG = BASE + 3 * CFG_STATE_SIZE * 16
RESET_PC = {"brisc": 0x0, "ncrisc": 0x12000, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000}


def run_core(core: str, source: str, setup=None) -> Tile:
    tile = Tile("blackhole")
    if setup is not None:
        setup(tile)
    tile.write(RESET_PC[core], assemble(source, base=RESET_PC[core]))
    tile.run(release=[core])
    return tile


def test_a_trisc_reads_and_writes_both_states_the_dual_window_and_thread_config():
    def setup(tile: Tile) -> None:
        tile.coprocessor.config.thread[1, 11] = 0xBEEF
        tile.coprocessor.config.thread[2, 67] = 0x1234

    tile = run_core(
        "trisc0",
        f"""
        li t0, {BASE}
        li t1, 0x11111111
        sw t1, 20(t0)            # Config[0][5]
        li t0, {STATE1}
        li t1, 0x22222222
        sw t1, 20(t0)            # Config[1][5]
        li t1, 0x33333333
        sw t1, {4 * 200}(t0)     # Config[1][200]: global
        li t0, {DUAL}
        li t1, 0x44444444
        sw t1, 28(t0)            # ConfigDualWrite[7]
        li t5, {DATA}
        li t0, {BASE}
        lw t1, {4 * 200}(t0)     # Config[0][200]
        sw t1, 0(t5)
        li t0, {DUAL}
        lw t1, 20(t0)            # ConfigDualWrite[5] reads Config[0][5]
        sw t1, 4(t5)
        li t0, {THREAD_CONFIG}
        lw t1, {4 * (THD_STATE_SIZE + 11)}(t0)        # ThreadConfig[1][11]
        sw t1, 8(t5)
        lw t1, {4 * (2 * THD_STATE_SIZE + 67)}(t0)    # ThreadConfig[2][67]
        sw t1, 12(t5)
        ecall
        """,
        setup,
    )
    config = tile.coprocessor.config.config
    assert config[0, 5] == 0x11111111 and config[1, 5] == 0x22222222
    assert config[:, 200].tolist() == [0x33333333] * 2
    assert config[:, 7].tolist() == [0x44444444] * 2
    assert struct.unpack("<4I", tile.read(DATA, 16)) == (0x33333333, 0x11111111, 0xBEEF, 0x1234)


def test_brisc_resets_a_state_through_state_reset_en_and_writes_the_icache_invalidate_register():
    def setup(tile: Tile) -> None:
        tile.coprocessor.config.config[:] = 0x5A5A5A5A

    tile = run_core(
        "brisc",
        f"""
        li t0, {STATE1}
        sw zero, {4 * STATE_RESET_EN_ADDR32}(t0)
        li t0, {BASE}
        li t1, 0x1F
        sw t1, {4 * RISCV_IC_INVALIDATE_InvalidateAll_ADDR32}(t0)   # 0xFFEF02E4, as firmware does
        ecall
        """,
        setup,
    )
    config = tile.coprocessor.config.config
    assert not config[1, :GLOBAL_CFGREG_BASE_ADDR32].any()
    assert (config[0, :GLOBAL_CFGREG_BASE_ADDR32] == 0x5A5A5A5A).all()
    assert BASE + 4 * RISCV_IC_INVALIDATE_InvalidateAll_ADDR32 == 0xFFEF02E4
    assert config[:, RISCV_IC_INVALIDATE_InvalidateAll_ADDR32].tolist() == [0x1F, 0x1F]


def test_thread_config_is_read_only_to_the_cores():
    with pytest.raises(MemoryFault, match="read-only"):
        run_core("trisc1", f"li t0, {THREAD_CONFIG}\n sw zero, 0(t0)\n ecall")


def test_ncrisc_has_no_config_view():
    with pytest.raises(MemoryFault) as info:
        run_core("ncrisc", f"li t0, {BASE}\n lw t1, 0(t0)\n ecall")
    assert info.value.address == BASE


def test_nothing_is_mapped_past_thread_config():
    end = THREAD_CONFIG + 3 * THD_STATE_SIZE * 4
    with pytest.raises(MemoryFault) as info:
        run_core("trisc2", f"li t0, {end}\n lw t1, 0(t0)\n ecall")
    assert info.value.address == end


def test_a_trisc_pushes_setc16_and_wrcfg_then_polls_the_value_back():
    regfile = 0xFFE00000  # the TRISC's own GPRs (BabyRISCV memory map)
    setc16 = ISA.encode("SETC16", setc16_reg=CFG_STATE_ID_StateID_ADDR32, setc16_value=1)
    wrcfg = ISA.encode("WRCFG", gpr_address=5, wr128b=0, cfg_reg=12)

    def inline(word: int) -> str:
        return f".word 0x{((word << 2) | (word >> 30)) & M32:08x}"

    tile = run_core(
        "trisc0",
        f"""
        li t0, {regfile}
        li t1, 0xC0FFEE
        sw t1, 20(t0)            # GPR 5
        {inline(setc16)}
        {inline(wrcfg)}
        li t0, {STATE1}
    poll:
        lw t2, 48(t0)            # Config[1][12]
        bne t2, t1, poll
        li t0, {THREAD_CONFIG}
        lw t3, 0(t0)             # ThreadConfig[0][CFG_STATE_ID]
        li t5, {DATA}
        sw t3, 0(t5)
        ecall
        """,
    )
    assert tile.coprocessor.config.config[1, 12] == 0xC0FFEE
    assert tile.coprocessor.config.config[0, 12] == 0
    assert tile.read(DATA, 4) == (1).to_bytes(4, "little")


def test_config_state_is_plain_arrays():
    state = ConfigState.new(TILE.arch)
    assert state.config.dtype == np.uint32 and state.thread.dtype == np.uint16
    assert not state.config.any() and not state.thread.any()
