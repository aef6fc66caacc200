"""PACR and PACR_SETREG against pack_reference.py (the pages' pseudocode), hand-worked vectors and bad
configurations (which must change nothing)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import emulator_outcome as outcome
from outcomes import reference_outcome as ref_outcome
from pack_reference import (
    BF16,
    BFP2,
    BFP4,
    BFP8,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
    BFP2a,
    BFP4a,
    BFP8a,
    pacr,
)

from tensixsim.tensix import formats
from tensixsim.tensix.pack.stream import STREAM_DRAINED, pack_state
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup
from tensixsim.tile import Tile
from tensixsim.timing import PACK

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CYCLE = 100
PACKERS = 2

# (Read_32b_data, IntermediateFormat = In_data_format, Out_data_format, Read_raw, Read_unsigned,
# Round_10b_mant): the combinations the pages describe, plus some they call "No".
COMBOS = [
    (1, FP32, FP32, 0, 0, 0), (1, FP32, FP32, 0, 0, 1), (1, FP32, BF16, 1, 0, 0), (1, FP32, FP16, 0, 0, 0),
    (1, TF32, TF32, 0, 0, 0), (1, TF32, FP32, 1, 0, 0), (1, TF32, FP16, 0, 0, 0), (1, TF32, BF16, 0, 0, 1),
    (1, BF16, BF16, 0, 0, 0), (1, BF16, BF16, 1, 0, 0), (1, BF16, FP32, 0, 0, 0), (1, BF16, FP16, 0, 0, 0),
    (1, INT32, INT32, 0, 0, 0), (1, INT8, INT8, 0, 0, 0), (1, INT8, INT8, 1, 0, 0), (1, INT8, INT8, 0, 1, 0),
    (1, INT8, INT8, 1, 1, 0), (0, BF16, BF16, 0, 0, 0), (0, BF16, BF16, 1, 0, 0), (0, BF16, FP32, 0, 0, 0),
    (0, BF16, FP16, 1, 0, 0), (0, TF32, TF32, 0, 0, 0), (0, FP16, FP16, 0, 0, 0), (0, FP16, FP16, 1, 0, 0),
    (0, FP16, FP32, 1, 0, 0), (0, FP16, BF16, 0, 0, 0), (0, INT16, INT16, 0, 0, 0),
    # block-float outputs (Dst -> BF16 / E8M6 / FP16 -> BFP*)
    (1, FP32, BFP8, 0, 0, 0), (1, BF16, BFP4, 0, 0, 0), (1, BFP8, BFP8, 0, 0, 0), (1, BFP8, BFP2, 1, 0, 0),
    (0, BFP8, BFP8, 0, 0, 0), (0, BFP8, BFP4, 1, 0, 0), (0, BF16, BFP8, 1, 0, 0), (0, FP16, BFP8a, 0, 0, 0),
    (0, FP16, BFP4a, 1, 0, 0), (1, FP32, BFP8a, 0, 0, 0), (1, TF32, BFP2a, 0, 0, 0), (0, FP16, BFP2, 0, 0, 0),
    (1, BFP8, FP32, 0, 0, 0), (0, BFP8, BF16, 1, 0, 0),
    (1, FP16, FP16, 0, 0, 0), (0, INT32, INT32, 0, 0, 0), (1, FP32, TF32, 0, 0, 0), (1, BF16, INT8, 0, 0, 0),
    (1, BFP4, BFP4, 0, 0, 0), (1, INT32, BFP8, 0, 0, 0),
]  # fmt: skip
UNDEFINED_COMBOS = COMBOS[-6:]


def execute(name: str, cycle: int = CYCLE, **fields: int):
    word = ISA.encode(name, **{f: fields.get(f, 0) for f in ISA.by_name[name].field_names})
    ctx = Context(COPRO, 0, cycle, ISA.decode(word), "trisc0", 0)
    return lookup("blackhole", name)(ctx, **ctx.instruction.fields)


def setf(name: str, value: int, copro=COPRO) -> None:
    copro.config.write_field(name, 0, value)


def reset() -> None:
    config, regs, adc = COPRO.config, COPRO.regs, COPRO.adc
    config.config[:] = 0
    config.thread[:] = 0
    regs.dst[:] = 0
    regs.dst_row_valid[:] = True
    regs.dst_ready[:] = 0
    adc.value[:] = 0
    adc.cr[:] = 0
    state = pack_state(COPRO)
    state.data_address = state.exponent_address = 0
    state.needs_new_address, state.pending, state.exponent_pending = True, b"", b""
    state.stream[STREAM_DRAINED] = 0
    TILE.l1[:] = 0


def base_config(**changes) -> dict:
    c = {
        "read32": 1, "inter": FP32, "out": FP32, "raw": 0, "unsigned": 0, "round10": 0,
        "base0": 0, "xstride": 0, "ystride": 64, "zstride": 1024, "offset": 0,
        "l1_dest": 0x100 - 1, "sub_header": 0, "limit": 0x1FFFF, "fifo": 0, "exp_section": 0,
        "relu": 0, "relu_threshold": 0, "exp_threshold_en": 0, "exp_threshold": 0,
        "edge_mask": 0xFFFF, "edge_mode": 0, "l1_acc": 0,
        "addr_mods": [
            {"ysrc_incr": 0, "ysrc_cr": 0, "ysrc_clear": 0, "ydst_incr": 0, "ydst_cr": 0, "ydst_clear": 0,
             "zsrc_incr": 0, "zsrc_clear": 0, "zdst_incr": 0, "zdst_clear": 0}
        ] * 4,
    }  # fmt: skip
    c.update(changes)
    return c


def apply(c: dict, copro=COPRO) -> None:
    setf("THCON_SEC0_REG1_Disable_zero_compress", 1, copro)
    setf("PCK_DEST_RD_CTRL_Read_32b_data", c["read32"], copro)
    setf("PCK_DEST_RD_CTRL_Read_int8", c["raw"], copro)
    setf("PCK_DEST_RD_CTRL_Read_unsigned", c["unsigned"], copro)
    setf("PCK_DEST_RD_CTRL_Round_10b_mant", c["round10"], copro)
    setf("ALU_FORMAT_SPEC_REG2_Dstacc", c["inter"], copro)
    setf("THCON_SEC0_REG1_In_data_format", c["inter"], copro)
    setf("THCON_SEC0_REG1_Out_data_format", c["out"], copro)
    setf("PCK0_ADDR_BASE_REG_0_Base", c["base0"], copro)
    setf("PCK0_ADDR_CTRL_XY_REG_0_Xstride", c["xstride"], copro)
    setf("PCK0_ADDR_CTRL_XY_REG_0_Ystride", c["ystride"], copro)
    setf("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", c["zstride"], copro)
    setf("DEST_TARGET_REG_CFG_PACK_SEC0_Offset", c["offset"], copro)
    setf("THCON_SEC0_REG1_L1_Dest_addr", c["l1_dest"], copro)
    setf("THCON_SEC0_REG1_Sub_l1_tile_header_size", c["sub_header"], copro)
    setf("THCON_SEC0_REG9_Pack_0_2_limit_address", c["limit"], copro)
    setf("THCON_SEC0_REG9_Pack_0_2_fifo_size", c["fifo"], copro)
    setf("THCON_SEC0_REG1_Exp_section_size", c["exp_section"], copro)
    setf("STACC_RELU_ApplyRelu", c["relu"], copro)
    setf("STACC_RELU_ReluThreshold", c["relu_threshold"], copro)
    setf("THCON_SEC0_REG1_Exp_threshold_en", c["exp_threshold_en"], copro)
    setf("THCON_SEC0_REG1_Exp_threshold", c["exp_threshold"], copro)
    for i in range(4):
        setf(f"PCK_EDGE_OFFSET_SEC{i}_mask", c["edge_mask"], copro)
    setf("PCK_EDGE_MODE_mode", c["edge_mode"], copro)
    setf("THCON_SEC0_REG1_Pack_L1_Acc", c["l1_acc"], copro)
    for i, m in enumerate(c["addr_mods"]):
        for key, value in m.items():
            name = {"ysrc": "Ysrc", "ydst": "Ydst", "zsrc": "Zsrc", "zdst": "Zdst"}[key[:4]]
            suffix = {"incr": "Incr", "cr": "CR", "clear": "Clear"}[key[5:]]
            copro.config.write_thread_field(f"ADDR_MOD_PACK_SEC{i}_{name}{suffix}", 0, value)


def set_adc(adc: dict) -> None:
    COPRO.adc.value[0, PACKERS, 0] = adc["ch0"]
    COPRO.adc.value[0, PACKERS, 1] = adc["ch1"]
    COPRO.adc.cr[0, PACKERS, 0] = adc["ch0_cr"]
    COPRO.adc.cr[0, PACKERS, 1] = adc["ch1_cr"]


def run_both(c: dict, adc: dict, program: list[dict], dst: np.ndarray, valid: np.ndarray, ready: np.ndarray):
    """Run ``program`` (PACR field dicts) on the emulator and the reference; return both outcomes."""
    reset()
    apply(c)
    set_adc(adc)
    COPRO.regs.dst[:] = dst
    COPRO.regs.dst_row_valid[:] = valid
    COPRO.regs.dst_ready[:] = ready
    noise = np.random.default_rng(int(dst[0, 0]))  # what L1 holds where the output goes (L1 accumulation)
    TILE.l1[0xF00:0x3000] = noise.integers(0, 256, 0x2100, dtype=np.uint8)
    ref_l1 = bytearray(TILE.l1.tobytes())
    ref_adc = {k: list(v) for k, v in adc.items()}
    state = {"addr": 0, "needs_new": True, "pending": b"", "exp_addr": 0, "exp_pending": b""}
    dst_list, valid_list, ready_list = dst.tolist(), valid.tolist(), ready.tolist()
    results = []
    for fields in program:
        ref = ref_outcome(
            lambda f=fields: pacr(c, dst_list, valid_list, ref_adc, state, ref_l1, ready_list, CYCLE, f)
        )
        emu = outcome(lambda f=fields: execute("PACR", **f))
        results.append((emu, ref))
        if ref != "retire" or emu != "retire":
            break
    return results, ref_l1, ref_adc


fields_st = st.fixed_dictionaries(
    {
        "read_intf_sel": st.sampled_from([0, 1, 1, 1, 3, 5, 7, 10, 15, 1, 0, 2]),
        "zero_write": st.sampled_from([0, 0, 0, 1]),
        "flush": st.sampled_from([0, 0, 0, 0, 1]),
        "last": st.integers(0, 1),
        "addr_mode": st.integers(0, 3),
        "dst_access_mode": st.sampled_from([0, 0, 0, 1]),
    }
)
addr_mod_st = st.fixed_dictionaries(
    {
        "ysrc_incr": st.integers(0, 15), "ysrc_cr": st.integers(0, 1), "ysrc_clear": st.integers(0, 1),
        "ydst_incr": st.just(0), "ydst_cr": st.just(0), "ydst_clear": st.integers(0, 1),
        "zsrc_incr": st.integers(0, 1), "zsrc_clear": st.integers(0, 1),
        "zdst_incr": st.just(0), "zdst_clear": st.just(0),
    }
)  # fmt: skip
SPECIAL32 = [
    0,
    0x80000000,
    0x7F800000,
    0xFF800000,
    0x7FC00001,
    0x00000001,
    0x80400000,
    0x38400000,
    0x37FFFFFF,
]


@st.composite
def scenarios(draw):
    combo = draw(st.sampled_from(COMBOS[: -len(UNDEFINED_COMBOS)] * 4 + UNDEFINED_COMBOS))
    read32, inter, out, raw, unsigned, round10 = combo
    c = base_config(
        read32=read32, inter=inter, out=out, raw=raw, unsigned=unsigned, round10=round10,
        base0=draw(st.sampled_from([0, 0, 64, 1000])), xstride=draw(st.sampled_from([0, 0, 2, 4, 17])),
        ystride=draw(st.sampled_from([16, 32, 64, 0])), zstride=draw(st.sampled_from([0, 512, 1024])),
        offset=draw(st.sampled_from([0, 0, 16, 1000])),
        l1_dest=draw(st.sampled_from([0xFF, 0x2000, 0x2000, 0x17FFE, 0x1FFFF, 0xFFFFFFFF])),
        sub_header=draw(st.integers(0, 1)), limit=draw(st.sampled_from([0x1FFFF, 0x800])),
        fifo=draw(st.sampled_from([0, 0x400])), exp_section=draw(st.sampled_from([0, 3])),
        relu=draw(st.sampled_from([0, 0, 0, 1, 2, 3])),
        relu_threshold=draw(st.sampled_from([0, 0x3F80, 0x3C00, 0x3C00, 0x8001])),
        exp_threshold_en=draw(st.sampled_from([0, 0, 1])),
        exp_threshold=draw(st.sampled_from([0, 15, 120, 127])),
        edge_mask=draw(st.sampled_from([0xFFFF, 0xFFFF, 0x00FF, 0])), edge_mode=draw(st.integers(0, 1)),
        l1_acc=draw(st.sampled_from([0, 0, 0, 1])),
        addr_mods=draw(st.lists(addr_mod_st, min_size=4, max_size=4)),
    )  # fmt: skip
    x0 = draw(st.sampled_from([0, 0, 0, 0, 3, 8]))
    x1 = x0 + draw(st.sampled_from([15, 15, 15, 7, 0, -1, 12])) - (x0 if draw(st.booleans()) else 0)
    adc = {
        "ch0": [x0, draw(st.integers(0, 20)), draw(st.integers(0, 3)), 0],
        "ch1": [max(x1, 0) if draw(st.booleans()) else x1 & 0x3FFFF, draw(st.integers(0, 3)), 0, 0],
        "ch0_cr": [0, draw(st.integers(0, 20)), 0, 0],
        "ch1_cr": [0, 0, 0, 0],
    }
    program = draw(st.lists(fields_st, min_size=1, max_size=3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dst = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint32)
    if draw(st.booleans()):
        picks = rng.integers(0, len(SPECIAL32), (1024, 16))
        special = np.array(SPECIAL32, np.uint32)[picks]
        hi = formats.dst32_from_fp32(special) >> 16
        dst = np.where(rng.random((1024, 16)) < 0.3, hi, dst)
    valid = rng.random(1024) > 0.1
    ready = np.where(rng.random(128) < 0.05, CYCLE + 3, 0).astype(np.int64)
    return c, adc, program, dst.astype(np.uint16), valid, ready


@SETTINGS
@given(scenarios())
def test_pacr_matches_reference(scenario):
    c, adc, program, dst, valid, ready = scenario
    results, ref_l1, ref_adc = run_both(c, adc, program, dst, valid, ready)
    for emu, ref in results:
        assert emu == ref, (results, c, adc, program)
    if results[-1][0] == "retire":
        assert TILE.l1.tobytes() == bytes(ref_l1)
        assert COPRO.adc.value[0, PACKERS, 0].tolist() == ref_adc["ch0"]
        assert COPRO.adc.value[0, PACKERS, 1].tolist() == ref_adc["ch1"]


def test_combos_include_undefined_ones():
    for combo in UNDEFINED_COMBOS:
        reset()
        read32, inter, out, raw, unsigned, round10 = combo
        apply(base_config(read32=read32, inter=inter, out=out, raw=raw, unsigned=unsigned, round10=round10))
        COPRO.adc.value[0, PACKERS, 1, 0] = 15
        assert outcome(lambda: execute("PACR", read_intf_sel=1, last=1)) == "undefined", combo


# ---------------------------------------------------------------------------- hand-worked vectors


def test_fp32_face_to_bf16_rounds_ties_away():
    """A 16x16 FP32 face in Dst32b rows 0..15 packed to BF16 at L1 0x1000 by four PACRs of four rows."""
    reset()
    apply(base_config(inter=BF16, out=BF16, ystride=32))
    ties = [0x3F808000, 0xBF808000, 0x3F818000, 0x3F807FFF, 0x7F7FFFFF, 0x00400000, 0x7FC00000, 0x80000000]
    face = np.array((ties * 32)[:256], np.uint32).reshape(16, 16)
    COPRO.regs.write_face32(0, formats.dst32_from_fp32(face))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    setf("THCON_SEC0_REG1_L1_Dest_addr", 0xFF)
    COPRO.config.write_thread_field("ADDR_MOD_PACK_SEC1_YsrcIncr", 0, 4)
    for i in range(4):
        assert isinstance(execute("PACR", addr_mode=1, last=int(i == 3)), Retire)
    got = np.frombuffer(TILE.l1[0x1000:0x1200].tobytes(), np.uint16)
    expected = [0x3F81, 0xBF81, 0x3F82, 0x3F80, 0x7F80, 0x0000, 0x7F80, 0x0000]
    assert got.tolist() == (expected * 32)[:256]
    assert TILE.l1[0x1200:0x1210].tobytes() == bytes(16)
    assert COPRO.adc.value[0, PACKERS, 0, 1] == 16


def test_partial_output_waits_for_last():
    """Eight BF16 datums (16 bytes) are written at once; four (8 bytes) stay pending until Last."""
    reset()
    apply(base_config(read32=0, inter=BF16, out=BF16, raw=1, ystride=32))
    COPRO.regs.dst[0, :] = formats.dst16_from_bf16(np.arange(1, 17, dtype=np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 3
    execute("PACR", read_intf_sel=1)
    assert TILE.l1[0x1000:0x1010].tobytes() == bytes(16)
    execute("PACR", read_intf_sel=1, last=1)
    want = np.array([1, 2, 3, 4, 1, 2, 3, 4], np.uint16).tobytes()
    assert TILE.l1[0x1000:0x1020].tobytes() == want + bytes(16)
    assert pack_state(COPRO).needs_new_address


def test_int32_to_int8_saturates_and_relu_zero():
    reset()
    apply(base_config(inter=INT8, out=INT8, relu=1))
    values = formats.int32_from_int(np.array([5, -5, 200, -200, 127, -128, 0, 1] * 2))
    COPRO.regs.write32(np.array([0]), formats.dst32_from_fp32(values).reshape(1, 16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    execute("PACR", read_intf_sel=1, last=1)
    assert list(TILE.l1[0x1000:0x1008]) == [5, 0, 127, 0, 127, 0, 0, 1]


def test_four_interfaces_read_four_rows_and_undefined_rows_pack_zero():
    reset()
    apply(base_config(read32=0, inter=INT16, out=INT16, ystride=32))
    for r in range(4):
        COPRO.regs.dst[r, :] = np.arange(16) + 100 * r
    COPRO.regs.mark_undefined16(np.array([2]))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    execute("PACR", read_intf_sel=0, last=1)
    got = np.frombuffer(TILE.l1[0x1000:0x1080].tobytes(), np.uint16).reshape(4, 16)
    assert got[0].tolist() == list(range(16)) and got[3].tolist() == [300 + i for i in range(16)]
    assert got[2].tolist() == [0] * 16


def test_read_after_matrix_write_waits():
    reset()
    apply(base_config())
    COPRO.regs.written(np.array([3]), CYCLE - 2, 4)
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    before = TILE.l1.tobytes()
    result = execute("PACR", read_intf_sel=1, last=1)
    assert isinstance(result, Wait) and result.until == CYCLE + 3
    assert TILE.l1.tobytes() == before and COPRO.adc.value[0, PACKERS, 1, 0] == 15
    assert isinstance(execute("PACR", cycle=CYCLE + 3, read_intf_sel=1, last=1), Retire)


# A block of 16 BF16 values and its BFP8 form by hand: the shared exponent is 2.0's (0x80); 1.0 is
# 32 / 64 * 2, 1.5 is 48, -0.25 is sign | 8, 0x407F (3.984375) rounds to 128 and saturates to 127,
# 0x3F81 is 32.25 -> 32, 0x3F82 is the tie 32.5 -> 33, tiny values become +0 whatever their sign.
BLOCK_BF16 = [0x3F80, 0x3FC0, 0x4000, 0xBE80, 0, 0x407F, 0x3F81, 0x3F82,
              0x3A80, 0xBA80, 0x8000, 0xC000, 0x3F80, 0x3F80, 0x3F80, 0x3F80]  # fmt: skip
BLOCK_BFP8 = [32, 48, 64, 0x88, 0, 127, 32, 33, 0, 0, 0, 0xC0, 32, 32, 32, 32]


def pack_block(out: int) -> None:
    reset()
    apply(base_config(read32=0, inter=BF16, out=out, raw=1, exp_section=1))
    COPRO.regs.dst[0, :] = formats.dst16_from_bf16(np.array(BLOCK_BF16, np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", read_intf_sel=1, last=1), Retire)


def test_bfp8_block_shares_the_largest_exponent_and_rounds_ties_away():
    pack_block(BFP8)
    assert TILE.l1[0x1000:0x1010].tobytes() == bytes([0x80] + [0] * 15)  # exponent section (16 bytes)
    assert list(TILE.l1[0x1010:0x1020]) == BLOCK_BFP8
    assert not TILE.l1[0x1020:0x1040].any()


def test_bfp4_and_bfp2_truncate_the_bfp8_magnitudes_two_and_four_a_byte():
    pack_block(BFP4)
    nibbles = [(v >> 7) << 3 | (v & 0x7F) >> 4 if (v & 0x7F) >> 4 else 0 for v in BLOCK_BFP8]
    assert list(TILE.l1[0x1010:0x1018]) == [nibbles[i] | nibbles[i + 1] << 4 for i in range(0, 16, 2)]
    assert not TILE.l1[0x1018:0x1020].any() and TILE.l1[0x1000] == 0x80
    pack_block(BFP2)
    pairs = [(v >> 7) << 1 | 1 if (v & 0x7F) >> 6 else 0 for v in BLOCK_BFP8]  # only 64 and 127 keep a bit
    want = [sum(pairs[i + k] << (2 * k) for k in range(4)) for i in range(0, 16, 4)]
    assert list(TILE.l1[0x1010:0x1014]) == want and want == [0x10, 0x04, 0xC0, 0]


def test_bfp8a_from_fp16_uses_the_five_bit_exponent():
    reset()
    apply(base_config(read32=0, inter=FP16, out=BFP8a, raw=1, exp_section=1))
    values = [0x3C00, 0x4000, 0xB800] + [0] * 13  # 1.0, 2.0, -0.5
    COPRO.regs.dst[0, :] = formats.dst16_from_fp16(np.array(values, np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", read_intf_sel=1, last=1), Retire)
    assert TILE.l1[0x1000] == 16  # 2.0's FP16 exponent
    assert list(TILE.l1[0x1010:0x1013]) == [32, 64, 0x80 | 16]


def test_bfp_exponents_and_datums_stream_separately_across_pacrs():
    """Two PACRs of 64 BFP8 datums: four exponents each, appended to the exponent stream."""
    reset()
    apply(base_config(inter=BFP8, out=BFP8, exp_section=1, ystride=16))  # BFP8 reads Dst a byte a datum
    rows = formats.dst32_from_fp32(np.arange(128, dtype=np.uint32).reshape(8, 16) << 23)  # 2**(i-127)
    COPRO.regs.write32(np.arange(8), rows)
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    COPRO.config.write_thread_field("ADDR_MOD_PACK_SEC1_YsrcIncr", 0, 4)
    for last in (0, 1):
        assert isinstance(execute("PACR", addr_mode=1, read_intf_sel=0, last=last), Retire)
    # each block's largest exponent is its last datum's; 0 has exponent 0 (and packs as 0)
    assert list(TILE.l1[0x1000:0x1008]) == [15, 31, 47, 63, 79, 95, 111, 127]
    assert not TILE.l1[0x1008:0x1010].any()
    data = TILE.l1[0x1010:0x1090].reshape(8, 16)
    assert data[:, 15].tolist() == [64] * 8 and data[:, 14].tolist() == [32] * 8 and data[0, 0] == 0


def test_untilize_strided_mode_packs_one_tile_row_from_two_faces():
    """tt-llk's Blackhole untilize: two read interfaces in the strided mode read row r of face 0 and of
    face 1 (16 Dst rows apart), one 32-datum row of the untilized tile per PACR."""
    reset()
    apply(base_config(read32=0, inter=BF16, out=BF16, raw=1, ystride=32))
    tile = np.arange(1024, dtype=np.uint16).reshape(32, 32) | 0x4000  # distinct BF16 values
    faces = [tile[:16, :16], tile[:16, 16:], tile[16:, :16], tile[16:, 16:]]
    for f, face in enumerate(faces):
        COPRO.regs.dst[16 * f : 16 * f + 16] = formats.dst16_from_bf16(face)
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    COPRO.config.write_thread_field("ADDR_MOD_PACK_SEC1_YsrcIncr", 0, 1)
    for _ in range(16):  # the top half of the tile: rows 0..15 of faces 0 and 1
        assert isinstance(execute("PACR", addr_mode=1, read_intf_sel=3, dst_access_mode=1, last=0), Retire)
    execute("PACR", flush=1)
    got = np.frombuffer(TILE.l1[0x1000 : 0x1000 + 16 * 64].tobytes(), np.uint16).reshape(16, 32)
    assert np.array_equal(got, tile[:16])


def test_bfp_output_needs_whole_blocks_of_16():
    reset()
    apply(base_config(inter=BF16, out=BFP8))
    COPRO.adc.value[0, PACKERS, 1, 0] = 7
    assert outcome(lambda: execute("PACR", read_intf_sel=1, last=1)) == "unimplemented"
    assert not TILE.l1.any()


# ---------------------------------------------------------------------------- bad configurations


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"out": 12}, "undefined"),
        ({"out": FP8, "inter": FP16, "read32": 0}, "unimplemented"),
        ({"out": BFP8, "inter": BFP4}, "undefined"),
        ({"l1_dest": 0x17FFF}, "fault"),
        ({"l1_dest": 0x1FFFE}, "fault"),
    ],
)
def test_bad_configuration_changes_nothing(change, kind):
    reset()
    apply(base_config(**change))
    COPRO.regs.dst[:] = 0x1234
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    TILE.l1[:] = 0x5A
    before = TILE.l1.tobytes()
    adc_before = COPRO.adc.value.copy()
    assert outcome(lambda: execute("PACR", read_intf_sel=0, last=1)) == kind
    assert TILE.l1.tobytes() == before
    assert np.array_equal(COPRO.adc.value, adc_before)
    assert pack_state(COPRO).needs_new_address and pack_state(COPRO).pending == b""


@pytest.mark.parametrize(
    "fields",
    [{"cfg_context": 1}, {"row_pad_zero": 1}, {"dst_access_mode": 1, "read_intf_sel": 5},
     {"ovrd_thread_id": 1}, {"ctxt_ctrl": 1}, {"concat": 2}, {"read_intf_sel": 6}],
)  # fmt: skip
def test_undocumented_fields_raise_unimplemented(fields):
    reset()
    apply(base_config())
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert outcome(lambda: execute("PACR", last=1, **fields)) == "unimplemented"
    assert not TILE.l1.any()


def test_compression_and_l1_accumulation_in_int8_unimplemented():
    for changes, name, value in (
        ({"inter": INT8, "out": INT8}, "THCON_SEC0_REG1_Pack_L1_Acc", 1),
        ({}, "THCON_SEC0_REG1_Disable_zero_compress", 0),
    ):
        reset()
        apply(base_config(**changes))
        setf(name, value)
        assert outcome(lambda: execute("PACR", last=1)) == "unimplemented"


def test_l1_accumulation_adds_onto_l1_and_takes_five_cycles_a_chunk():
    reset()
    apply(base_config(l1_acc=1))  # FP32 out
    COPRO.regs.write32(np.array([0]), formats.dst32_from_fp32(np.full((1, 16), 0x3F800000, np.uint32)))
    TILE.l1[0x1000:0x1040] = np.frombuffer(np.full(16, 0x40000000, "<u4").tobytes(), np.uint8)  # 2.0
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    result = execute("PACR", read_intf_sel=1, last=1)
    # Four 16-byte chunks, five cycles each: the packer takes the next PACR after them (its address
    # cycle overlaps) and has drained PACK.drain_cycles later.
    assert isinstance(result, Retire) and result.cycles == 4 * 5
    assert pack_state(COPRO).stream[STREAM_DRAINED] == CYCLE + 4 * 5 + PACK.drain_cycles
    got = np.frombuffer(TILE.l1[0x1000:0x1040].tobytes(), "<u4")
    assert (got == 0x40400000).all()  # 3.0


def test_pacr_setreg():
    reset()
    documented = {"push": 1, "disable_stall": 3, "addr_sel": 3, "flush": 1, "unused": 5, "stream_id": 4}
    assert outcome(lambda: execute("PACR_SETREG", **documented)) == "unimplemented"
    assert outcome(lambda: execute("PACR_SETREG", **{**documented, "push": 0})) == "undefined"
