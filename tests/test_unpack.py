"""UNPACR and UNPACR_NOP against unpack_reference.py (the pages' pseudocode), hand-worked vectors and
bad configurations (which must change nothing)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import emulator_outcome as outcome
from outcomes import reference_outcome as ref_outcome
from unpack_reference import (
    BF16,
    BFP2,
    BFP4,
    BFP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
    BFP2a,
    BFP4a,
    BFP8a,
    setdvalid,
    unpacr_nop_zerosrc,
    unpacr_regular,
)

from tensixsim.tensix import formats
from tensixsim.tensix.regs import apply_handovers
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup
from tensixsim.tile import Tile
from tensixsim.timing import UNPACK

R = UNPACK.l1_bytes_per_cycle  # the unpackers' bytes a cycle at x1 (Blackhole's)

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WINDOW = 1 << 14  # random L1 bytes around the tile data


def execute(name: str, thread: int, **fields: int):
    word = ISA.encode(name, **{f: fields.get(f, 0) for f in ISA.by_name[name].field_names})
    ctx = Context(COPRO, thread, 0, ISA.decode(word), f"trisc{thread}", 0)
    return lookup("blackhole", name)(ctx, **ctx.instruction.fields)


# ---------------------------------------------------------------------------- emulator set-up


def reset() -> None:
    config, regs, adc = COPRO.config, COPRO.regs, COPRO.adc
    config.config[:] = 0
    config.thread[:] = 0
    for array in (regs.srca, regs.srcb, regs.unpacker_src_row, regs.dst, adc.value, adc.cr):
        array[:] = 0
    regs.src_client[:] = 1
    regs.matrix_bank[:] = 0
    regs.unpacker_bank[:] = 0
    regs.dst_row_valid[:] = True
    if hasattr(COPRO, "unpackers"):
        COPRO.unpackers.context_counter[:] = 0
        COPRO.unpackers.end[:] = 0  # every test starts at cycle 0 with idle unpackers
    regs.src_handover_at[:] = -1
    TILE.l1[:] = 0


def sec(unit: int, name: str, value: int) -> None:
    COPRO.config.write_field(f"THCON_SEC{unit}_{name}", 0, value)


def unp(unit: int, name: str, value: int) -> None:
    COPRO.config.write_field(f"UNP{unit}_{name}", 0, value)


def descriptor(c: dict) -> int:
    return (
        c["InDataFormat"]
        | c["IsUncompressed"] << 4
        | c["NoBFPExpSection"] << 5
        | c["XDim"] << 16
        | c["YDim"] << 32
        | c["ZDim"] << 48
        | c["WDim"] << 64
        | c["DigestSize"] << 120
    )


def apply_config(unit: int, c: dict) -> None:
    """Write the concept-named configuration ``c`` of unpacker ``unit`` into the emulator."""
    config = COPRO.config
    sec(unit, "REG0_TileDescriptor", descriptor(c))
    sec(unit, "REG2_Out_data_format", c["Out_data_format"])
    for i in range(8):
        sec(unit, f"REG2_Disable_zero_compress_cntx{i}", c["Disable_zero_compress_cntx"][i])
        sec(unit, f"REG7_Unpack_data_format_cntx{i}", c["Unpack_data_format_cntx"][i])
        sec(unit, f"REG7_Unpack_out_data_format_cntx{i}", c["Unpack_out_data_format_cntx"][i])
        base = "REG3_Base_address" if i == 0 else f"REG{3 if i < 4 else 4}_Base_cntx{i}_address"
        sec(unit, base, c["Base_cntx"][i])
        if unit == 0:
            sec(0, f"REG2_Unpack_if_sel_cntx{i}", c["Unpack_if_sel_cntx"][i])
    for i in range(4):
        sec(unit, "REG7_Offset_address" if i == 0 else f"REG7_Offset_cntx{i}_address", c["Offset_cntx"][i])
        sec(unit, f"REG2_Shift_amount_cntx{i}", c["Shift_amount_cntx"][i])
        if unit == 0:
            sec(0, f"REG5_Tile_x_dim_cntx{i}", c["Tile_x_dim_cntx"][i])
            sec(0, f"REG5_Dest_cntx{i}_address", c["Dest_cntx"][i])
    for name in (
        "Ovrd_data_format", "Force_shared_exp", "Unpack_limit_address", "Unpack_fifo_size",
        "Tileize_mode", "Haloize_mode", "Unpack_If_Sel", "Upsample_rate", "Context_count",
        "Unpack_Src_Reg_Set_Upd",
    ):  # fmt: skip
        sec(unit, f"REG2_{name}", c[name])
    unp(unit, "ADDR_BASE_REG_1_Base", c["OutBase"])
    unp(unit, "ADDR_CTRL_XY_REG_1_Ystride", c["Ystride"])
    unp(unit, "ADDR_CTRL_ZW_REG_1_Zstride", c["Zstride"])
    unp(unit, "ADDR_CTRL_ZW_REG_1_Wstride", c["Wstride"])
    unp(unit, "FORCED_SHARED_EXP_shared_exp", c["shared_exp"])
    if unit == 0:
        unp(0, "ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", c["add_dest_addr_cntr"])
    config.write_field(f"ALU_FORMAT_SPEC_REG0_Src{'AB'[unit]}Unsigned", 0, c["Unsigned"])
    for t in range(3):
        config.write_thread_field(f"UNPACK_MISC_CFG_CfgContextOffset_{unit}", t, c["CfgContextOffset"][t])
        config.write_thread_field(f"SRC{'AB'[unit]}_SET_Base", t, c["SRC_SET_Base"][t])


def plain(**changes) -> dict:
    """A configuration that unpacks a BF16 16x16 face from L1 address 0x1000 into SrcA rows 0..15."""
    c = {
        "InDataFormat": BF16, "Out_data_format": BF16, "IsUncompressed": 1, "NoBFPExpSection": 0,
        "XDim": 256, "YDim": 1, "ZDim": 1, "WDim": 1, "DigestSize": 0,
        "Disable_zero_compress_cntx": [1] * 8, "Unpack_data_format_cntx": [BF16] * 8,
        "Unpack_out_data_format_cntx": [BF16] * 8, "Base_cntx": [0x100 - 1] * 8, "Offset_cntx": [0] * 4,
        "Unpack_if_sel_cntx": [0] * 8, "Shift_amount_cntx": [0] * 4, "Tile_x_dim_cntx": [256] * 4,
        "Dest_cntx": [0] * 4, "Ovrd_data_format": 0, "Force_shared_exp": 0,
        "Unpack_limit_address": 0x1FFFF, "Unpack_fifo_size": 0, "Tileize_mode": 0, "Haloize_mode": 0,
        "Unpack_If_Sel": 0, "Upsample_rate": 0, "Context_count": 0, "Unpack_Src_Reg_Set_Upd": 0,
        "OutBase": 64 * 2, "Ystride": 0, "Zstride": 0, "Wstride": 0, "shared_exp": 0,
        "add_dest_addr_cntr": 0, "Unsigned": 0, "CfgContextOffset": [0] * 3, "SRC_SET_Base": [0] * 3,
    }  # fmt: skip
    c.update(changes)
    return c


def snapshot() -> dict:
    regs, adc = COPRO.regs, COPRO.adc
    state = {
        "srca": regs.srca.copy(),
        "srcb": regs.srcb.copy(),
        "client": regs.src_client.copy(),
        "handover": regs.src_handover_at.copy(),
        "ubank": regs.unpacker_bank.copy(),
        "mbank": regs.matrix_bank.copy(),
        "srcrow": regs.unpacker_src_row.copy(),
        "dst": regs.dst.copy(),
        "valid": regs.dst_row_valid.copy(),
        "adc": adc.value.copy(),
        "cr": adc.cr.copy(),
        "l1": TILE.l1.copy(),
    }
    counters = getattr(COPRO, "unpackers", None)
    state["counter"] = counters.context_counter.copy() if counters else np.zeros((2, 3), np.uint8)
    return state


def ref_state(cfgs: list[dict], set_ovrd: list[int]) -> dict:
    regs, adc = COPRO.regs, COPRO.adc
    counters = getattr(COPRO, "unpackers", None)
    return {
        "cfg": cfgs,
        "ADC": adc.value.astype(int).tolist(),
        "SrcA": regs.srca.astype(int).tolist(),
        "SrcB": regs.srcb.astype(int).tolist(),
        "Client": regs.src_client.astype(int).tolist(),
        "UnpackBank": regs.unpacker_bank.astype(int).tolist(),
        "MatrixBank": regs.matrix_bank.astype(int).tolist(),
        "SrcRow": regs.unpacker_src_row.astype(int).tolist(),
        "Dst": regs.dst.astype(int).tolist(),
        "DstValid": regs.dst_row_valid.tolist(),
        "Counter": counters.context_counter.astype(int).tolist() if counters else [[0] * 3, [0] * 3],
        "SetOvrdWithAddr": set_ovrd,
    }


def assert_state(ref: dict, before: dict) -> None:
    now = snapshot()
    np.testing.assert_array_equal(now["srca"], np.array(ref["SrcA"]))
    np.testing.assert_array_equal(now["srcb"], np.array(ref["SrcB"]))
    np.testing.assert_array_equal(now["client"], np.array(ref["Client"]))
    np.testing.assert_array_equal(now["ubank"], np.array(ref["UnpackBank"]))
    np.testing.assert_array_equal(now["srcrow"], np.array(ref["SrcRow"]))
    np.testing.assert_array_equal(now["dst"], np.array(ref["Dst"]))
    np.testing.assert_array_equal(now["valid"], np.array(ref["DstValid"]))
    np.testing.assert_array_equal(now["adc"], np.array(ref["ADC"]))
    np.testing.assert_array_equal(now["counter"], np.array(ref["Counter"]))
    np.testing.assert_array_equal(now["l1"], before["l1"])
    np.testing.assert_array_equal(now["cr"], before["cr"])


def assert_unchanged(before: dict) -> None:
    now = snapshot()
    for key, value in before.items():
        np.testing.assert_array_equal(now[key], value, err_msg=key)


# ---------------------------------------------------------------------------- hand-worked vectors


def bf16_bytes(values: list[int]) -> bytes:
    return b"".join(v.to_bytes(2, "little") for v in values)


def test_bf16_face_into_srca_rows_0_to_15():
    reset()
    apply_config(0, plain())
    values = [(0x3F80 + i) & 0xFFFF for i in range(256)]  # 1.0 upwards
    TILE.write(0x1000, bf16_bytes(values))
    COPRO.adc.value[0, 0, 1, 0] = 255  # Ch1.X: X end 256
    assert isinstance(execute("UNPACR", 0, set_dat_valid=1, addr_mode=0b01000100), Retire)
    srca = COPRO.regs.srca[0]
    # BF16 0x3F80 (1.0): sign 0, exponent 0x7F, mantissa 0 -> Src datum exponent in the low 8 bits.
    assert srca[0, 0] == 0x7F
    assert srca[0, 1] == (1 << 11) | 0x7F  # mantissa 1 lands at bit 8 + 3
    for i, v in enumerate(values):
        mantissa, exponent, sign = v & 0x7F, (v >> 7) & 0xFF, v >> 15
        assert srca[i // 16, i % 16] == (sign << 18) | (mantissa << 11) | exponent
    assert srca[16:].sum() == 0
    # FlipSrc hands bank 0 to the matrix unit once the 512 bytes have landed (two address cycles, then
    # R bytes a cycle: Throttle_mode 0); the unpacker moves on to bank 1 at once. Ch0Y and Ch1Y
    # advanced by one.
    assert COPRO.regs.src_client[0, 0] == 1 and COPRO.regs.src_handover_at[0, 0] == 2 + -(-512 // R)
    assert COPRO.regs.unpacker_bank[0] == 1
    apply_handovers(COPRO, 2 + 512 // 16)
    assert COPRO.regs.src_client[0, 0] == 0
    assert COPRO.adc.value[0, 0, 0, 1] == 1 and COPRO.adc.value[0, 0, 1, 1] == 1


def test_fp32_to_dst_and_int8_into_srcb():
    reset()
    apply_config(0, plain(InDataFormat=FP32, Out_data_format=FP32, Unpack_If_Sel=1, OutBase=64 * 4))
    TILE.write(0x1000, (0x3FC00001).to_bytes(4, "little") + (0xC0000000).to_bytes(4, "little"))
    COPRO.adc.value[1, 0, 1, 0] = 1
    assert isinstance(execute("UNPACR", 1), Retire)
    # Dst32b row 0: high half BF16-shuffled (sign, mantissa 7, exponent 8), low half kept.
    assert COPRO.regs.dst[0, 0] == (0x40 << 8) | 0x7F and COPRO.regs.dst[8, 0] == 0x0001
    assert COPRO.regs.dst[0, 1] == 0x8000 | 0x80 and COPRO.regs.dst[8, 1] == 0
    reset()
    apply_config(1, plain(InDataFormat=INT8, Out_data_format=INT8, OutBase=16))
    TILE.write(0x1000, bytes([0x85, 0x05, 0x00, 0x80]))
    COPRO.adc.value[0, 1, 1, 0] = 3
    assert isinstance(execute("UNPACR", 0, unpack_block_selection=1), Retire)
    # Integer "8": exponent 16 when non-zero, sign at FP16's sign, then the Src FP16 placement.
    row = COPRO.regs.srcb[0, 1]  # OutBase 16 -> SrcB row 1
    assert list(row[:4]) == [(1 << 18) | (5 << 8) | 16, (5 << 8) | 16, 0, 1 << 18]


def test_bfp8_with_exponent_section():
    reset()
    apply_config(1, plain(InDataFormat=BFP8, Out_data_format=BFP8, XDim=16, OutBase=0))
    TILE.write(0x1000, bytes([0x80] + [0] * 15))  # one exponent (0x80) for the 16 datums, padded
    TILE.write(0x1010, bytes([0x40, 0xC0, 0x00, 0x80]))
    COPRO.adc.value[0, 1, 1, 0] = 3
    assert isinstance(execute("UNPACR", 0, unpack_block_selection=1), Retire)
    # 0x40: magnitude 0x80 after <<1, no leading zeros -> BF16 exponent 0x80, mantissa 0 -> 2.0.
    assert list(COPRO.regs.srcb[0, 0, :4]) == [0x80, (1 << 18) | 0x80, 0, (1 << 18) | 0xFF]  # 0x80: -inf


def test_tileize_reads_a_row_major_block_32_datums_a_row():
    """Blackhole Tileize_mode: a 32x32 BF16 tile from a row-major block two tiles wide (rows of 128
    bytes: Shift_amount 8), 1024 datums in one UNPACR; each group of 32 datums is one input row, so
    SrcA row 2r holds input row r's columns 0..15 and row 2r + 1 its columns 16..31."""
    reset()
    apply_config(0, plain(Tileize_mode=1, XDim=1024, Shift_amount_cntx=[8, 0, 0, 0]))
    COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", 0, 1)
    block = np.arange(32 * 64, dtype=np.uint16).reshape(32, 64) | 0x3F80  # distinct BF16 values
    TILE.write(0x1000, block.tobytes())
    COPRO.adc.value[0, 0, 1, 0] = 1023
    assert isinstance(execute("UNPACR", 0), Retire)
    srca = formats.src_to_bf16(COPRO.regs.srca[0]).reshape(32, 32)
    assert np.array_equal(srca, block[:, :32])


def test_tileize_needs_a_16_byte_aligned_start():
    reset()
    apply_config(0, plain(Tileize_mode=1, Shift_amount_cntx=[2, 0, 0, 0]))
    COPRO.adc.value[0, 0, 0, 0] = 1  # X start 1: the first BF16 datum is 2 bytes into the row
    COPRO.adc.value[0, 0, 1, 0] = 255
    before = snapshot()
    assert outcome(lambda: execute("UNPACR", 0)) == "undefined"
    assert_unchanged(before)


def test_tileize_byte_formats_read_16_datums_a_row():
    reset()
    apply_config(0, plain(Tileize_mode=1, InDataFormat=INT8, Out_data_format=INT8, XDim=256,
                          Shift_amount_cntx=[4, 0, 0, 0], OutBase=64))  # fmt: skip
    block = (np.arange(16 * 64) % 100).astype(np.uint8).reshape(16, 64)  # rows of 64 bytes
    TILE.write(0x1000, block.tobytes())
    COPRO.adc.value[0, 0, 1, 0] = 255
    assert isinstance(execute("UNPACR", 0), Retire)
    got = formats.src_to_fp16(COPRO.regs.srca[0, :16]) & 0x3FF
    assert np.array_equal(got, block[:, :16])


@pytest.mark.parametrize(("changes", "count", "cycles"), [
    ({"Throttle_mode": 0}, 256, 2 + -(-512 // R)),  # x1: R bytes a cycle after two address cycles
    ({"Throttle_mode": 1}, 256, 2 + -(-512 // (2 * R))),
    ({"Throttle_mode": 2}, 256, 2 + -(-512 // (4 * R))),
    ({"Throttle_mode": 0, "Tileize_mode": 1, "XDim": 1024}, 1024, 2 + -(-2048 // (4 * R))),  # tileize: x4
    ({"Throttle_mode": 2, "InDataFormat": BFP2, "Out_data_format": BFP2}, 256, 2 + -(-64 // R)),  # BFP2: x1
])  # fmt: skip
def test_unpacr_cycles_follow_the_speed_the_mode_wants(changes, count, cycles):
    reset()
    throttle = changes.pop("Throttle_mode")
    apply_config(0, plain(**changes))
    sec(0, "REG2_Throttle_mode", throttle)
    COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", 0, 1)
    COPRO.adc.value[0, 0, 1, 0] = count - 1
    result = execute("UNPACR", 0)
    # The shared issue slot is taken for the two address cycles; the unpacker fetches until ``cycles``.
    assert isinstance(result, Retire) and result.cycles == 2
    assert COPRO.unpackers.end[0] == cycles


def test_nop_variants():
    reset()
    COPRO.regs.srca[:] = 5
    assert isinstance(execute("UNPACR_NOP", 0, unpack_pop=2), Retire)
    assert (COPRO.regs.srca == 5).all()
    assert isinstance(execute("UNPACR_NOP", 0, unpack_pop=1, src_clr_val_ctrl=1, set_dvalid=1), Retire)
    assert (COPRO.regs.srca[0] == (1 << 19) - 1).all() and (COPRO.regs.srca[1] == 5).all()
    assert COPRO.regs.src_client[0, 0] == 0 and COPRO.regs.unpacker_bank[0] == 1
    # The matrix unit's bank (0) now belongs to the matrix unit: ZEROSRC without WaitLikeUnpacr waits.
    assert isinstance(execute("UNPACR_NOP", 0, unpack_pop=1), Wait)
    assert isinstance(execute("UNPACR_NOP", 0, unpack_pop=1, stall_clr_cntrl=1, bank_clr_ctrl=0), Retire)
    assert (COPRO.regs.srca[1] == 0).all()
    COPRO.config.write_thread_field("SRCA_SET_Base", 2, 2)
    assert isinstance(execute("UNPACR_NOP", 2, unpack_pop=2, clr_to1_fmt_ctrl=3), Retire)
    assert COPRO.regs.src_client[0, 1] == 0 and COPRO.regs.unpacker_bank[0] == 0
    assert COPRO.regs.unpacker_src_row[0, 2] == 32


# ---------------------------------------------------------------------------- bad configurations

BAD = [
    ("base beyond L1", plain(Base_cntx=[(1536 * 1024) // 16] * 8), "fault"),
    ("unknown format", plain(InDataFormat=12, Out_data_format=12), "undefined"),
    ("int32 into SrcA", plain(InDataFormat=INT32, Out_data_format=INT32), "undefined"),
    ("formats disagree", plain(InDataFormat=BF16, Out_data_format=FP16), "undefined"),
    ("compressed", plain(IsUncompressed=0), "unimplemented"),
    ("upsampling", plain(Upsample_rate=1), "unimplemented"),
    ("tileize compressed", plain(Tileize_mode=1, IsUncompressed=0), "undefined"),
    ("tileize upsampling", plain(Tileize_mode=1, Upsample_rate=1), "undefined"),
    ("tileize sub-byte", plain(Tileize_mode=1, InDataFormat=BFP4, Out_data_format=BFP4), "undefined"),
    ("misaligned output", plain(OutBase=64 * 2 + 1), "undefined"),
    ("SrcA row beyond 15", plain(OutBase=64 * 2 + 16 * 2 * 16), "undefined"),
]


@pytest.mark.parametrize(("label", "cfg", "kind"), BAD, ids=[b[0] for b in BAD])
def test_bad_configuration_changes_nothing(label, cfg, kind):
    reset()
    apply_config(0, cfg)
    TILE.l1[0x1000:0x1200] = 0x11
    COPRO.adc.value[0, 0, 1, 0] = 255
    COPRO.regs.srca[:] = 3
    before = snapshot()
    assert outcome(lambda: execute("UNPACR", 0, addr_mode=0xFF, set_dat_valid=1)) == kind
    assert_unchanged(before)


def test_bad_operands():
    reset()
    before = snapshot()
    assert outcome(lambda: execute("UNPACR", 0, cfg_context_cnt_inc=2)) == "undefined"
    assert outcome(lambda: execute("UNPACR", 0, cfg_context_cnt_inc=1, zero_write2=1)) == "undefined"
    assert outcome(lambda: execute("UNPACR", 0, search_cache_flush=1, addr_mode=1)) == "undefined"
    assert outcome(lambda: execute("UNPACR", 0, srcb_bcast=1)) == "unimplemented"
    assert outcome(lambda: execute("UNPACR", 0, row_search=1)) == "unimplemented"
    assert outcome(lambda: execute("UNPACR_NOP", 0, unpack_pop=0)) == "unimplemented"
    assert outcome(lambda: execute("UNPACR_NOP", 0, unpack_pop=2, stream_id=1)) == "undefined"
    assert outcome(lambda: execute("UNPACR_NOP", 0, unpack_pop=1, set_dvalid=2)) == "undefined"
    assert outcome(lambda: execute("UNPACR_NOP", 0, unpack_pop=1, src_clr_val_ctrl=2)) == "unimplemented"
    assert_unchanged(before)


def test_increment_context_counter():
    reset()
    sec(1, "REG2_Context_count", 1)  # two contexts
    for expected in (1, 0, 1):
        assert isinstance(execute("UNPACR", 2, unpack_block_selection=1, cfg_context_cnt_inc=1), Retire)
        assert COPRO.unpackers.context_counter[1, 2] == expected
    assert isinstance(execute("UNPACR", 2, search_cache_flush=1, ovrd_thread_id=1), Retire)


# ---------------------------------------------------------------------------- property tests

FORMAT_PAIRS = [
    (FP32, TF32), (FP32, BF16), (FP32, FP16), (FP32, FP32), (TF32, TF32), (BF16, BF16), (FP16, FP16),
    (INT16, INT16), (INT32, INT32), (INT8, INT8), (BFP8, BFP8), (BFP4, BFP4), (BFP2, BFP2),
    (BFP8a, BFP8a), (BFP4a, BFP4a), (BFP2a, BFP2a), (BF16, FP16), (12, 12), (FP32, INT8),
]  # fmt: skip
small = st.integers(0, 3)
bit = st.integers(0, 1)
rare = st.sampled_from([0] * 7 + [1])


@st.composite
def unit_config(draw, unit: int) -> dict:
    in_fmt, out_fmt = draw(st.sampled_from(FORMAT_PAIRS))
    fmts = st.sampled_from([p[0] for p in FORMAT_PAIRS[:16]])
    return plain(
        InDataFormat=in_fmt,
        Out_data_format=out_fmt,
        IsUncompressed=draw(st.sampled_from([1] * 15 + [0])),
        NoBFPExpSection=draw(rare),
        XDim=draw(st.integers(1, 64)),
        YDim=draw(st.integers(0, 4)),
        ZDim=draw(small),
        WDim=draw(small),
        DigestSize=draw(small),
        Disable_zero_compress_cntx=[draw(st.sampled_from([1] * 7 + [0])) for _ in range(8)],
        Unpack_data_format_cntx=[draw(fmts) for _ in range(8)],
        Unpack_out_data_format_cntx=[draw(fmts) for _ in range(8)],
        Base_cntx=[draw(st.one_of(st.integers(0x100, 0x200), st.just(0x17FF0))) for _ in range(8)],
        Offset_cntx=[draw(st.integers(0, 8)) for _ in range(4)],
        Unpack_if_sel_cntx=[draw(rare) for _ in range(8)],
        Shift_amount_cntx=[draw(st.sampled_from([0, 0, 0, 1, 3])) for _ in range(4)],
        Tile_x_dim_cntx=[draw(st.integers(1, 64)) for _ in range(4)],
        Dest_cntx=[draw(st.integers(0, 1200)) for _ in range(4)],
        Ovrd_data_format=draw(bit),
        Force_shared_exp=draw(bit),
        Unpack_limit_address=draw(st.sampled_from([0x1FFFF, 0x1FFFF, 0x180])),
        Unpack_fifo_size=draw(st.sampled_from([0, 0x40])),
        Tileize_mode=draw(st.sampled_from([0] * 7 + [1])),
        Haloize_mode=draw(rare) if unit == 0 else 0,
        Unpack_If_Sel=draw(st.sampled_from([0, 0, 1])) if unit == 0 else 0,
        Upsample_rate=draw(st.sampled_from([0] * 15 + [1])),
        Context_count=draw(small),
        Unpack_Src_Reg_Set_Upd=draw(bit),
        OutBase=draw(st.integers(0, 2048)),
        Ystride=draw(st.sampled_from([0, 16, 32, 64, 128, 6])),
        Zstride=draw(st.sampled_from([0, 64, 256])),
        Wstride=draw(st.sampled_from([0, 1024])),
        shared_exp=draw(st.integers(0, 255)),
        add_dest_addr_cntr=draw(bit),
        Unsigned=draw(bit),
        CfgContextOffset=[draw(st.sampled_from([0, 0, 1, 5])) for _ in range(3)],
        SRC_SET_Base=[draw(small) for _ in range(3)],
    )


adc_values = st.fixed_dictionaries(
    {
        "x0": st.integers(0, 40),
        "count": st.integers(-2, 70),
        "y0": small,
        "z0": small,
        "w0": st.integers(0, 1),
        "y1": small,
        "z1": small,
        "w1": st.integers(0, 1),
    }
)


def set_adcs(rng: np.random.Generator, drawn: dict, thread: int, unit: int) -> None:
    value = COPRO.adc.value
    value[:] = rng.integers(0, 4, value.shape)
    for t in range(3):
        value[t, unit, 0, 0] = drawn["x0"]
        value[t, unit, 1, 0] = max(drawn["x0"] + drawn["count"] - 1, 0)
    value[thread, unit, 0, 1:] = [drawn["y0"], drawn["z0"], drawn["w0"]]
    value[thread, unit, 1, 1:] = [drawn["y1"], drawn["z1"], drawn["w1"]]


def randomise_regs(rng: np.random.Generator, thread_rows: bool) -> list[int]:
    regs = COPRO.regs
    regs.srca[:] = rng.integers(0, 1 << 19, regs.srca.shape)
    regs.srcb[:] = rng.integers(0, 1 << 19, regs.srcb.shape)
    regs.src_client[:] = rng.choice([0, 1, 1, 1], regs.src_client.shape)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_src_row[:] = rng.choice([0, 16, 32, 48], regs.unpacker_src_row.shape) if thread_rows else 0
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.8
    COPRO.unpackers.context_counter[:] = rng.integers(0, 8, (2, 3))
    set_ovrd = [int(v) for v in rng.integers(0, 2, 3)]
    for t in range(3):
        COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", t, set_ovrd[t])
    return set_ovrd


@SETTINGS
@given(
    cfg=st.data(),
    unit=bit,
    thread=st.integers(0, 2),
    adcs=adc_values,
    seed=st.integers(0, 2**32 - 1),
    operands=st.fixed_dictionaries(
        {
            "addr_mode": st.integers(0, 255),
            "cfg_context_id": st.integers(0, 7),
            "addr_cnt_context_id": st.sampled_from([0, 1, 2, 3]),
            "ovrd_thread_id": rare,
            "set_dat_valid": bit,
            "zero_write2": rare,
            "auto_inc_context_id": bit,
            "last": bit,
        }
    ),
)
def test_unpacr_matches_reference(cfg, unit, thread, adcs, seed, operands):
    compare_with_reference(cfg.draw(unit_config(unit)), unit, thread, adcs, seed, operands)


def compare_with_reference(c: dict, unit: int, thread: int, adcs: dict, seed: int, operands: dict,
                           set_ovrd_all: int | None = None) -> str:  # fmt: skip
    """One UNPACR with configuration ``c`` on the emulator and the reference; the outcome."""
    reset()
    from tensixsim.tensix.unpack.fetch import unpack_state

    unpack_state(COPRO)
    rng = np.random.default_rng(seed)
    cfgs = [plain(), plain()]
    cfgs[unit] = c
    apply_config(unit, c)
    TILE.l1[0x1000 : 0x1000 + WINDOW] = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    TILE.l1[-WINDOW:] = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    set_ovrd = randomise_regs(rng, thread_rows=True)
    if set_ovrd_all is not None:
        set_ovrd = [set_ovrd_all] * 3
        for t in range(3):
            COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", t, set_ovrd_all)
    set_adcs(rng, adcs, thread, unit)
    before = snapshot()
    ref = ref_state(copy.deepcopy(cfgs), set_ovrd)
    op = {
        "MultiContextMode": operands["ovrd_thread_id"],
        "UseContextCounter": operands["auto_inc_context_id"],
        "ContextNumber": operands["cfg_context_id"],
        "ContextADC": operands["addr_cnt_context_id"],
        "RowSearch": 0,
        "AllDatumsAreZero": operands["zero_write2"],
        "FlipSrc": operands["set_dat_valid"],
        "Ch0ZInc": operands["addr_mode"] & 3,
        "Ch0YInc": operands["addr_mode"] >> 2 & 3,
        "Ch1ZInc": operands["addr_mode"] >> 4 & 3,
        "Ch1YInc": operands["addr_mode"] >> 6 & 3,
    }
    new = copy.deepcopy(ref)
    expected = ref_outcome(lambda: unpacr_regular(new, TILE.l1.tobytes(), thread, unit, op))
    got = outcome(lambda: execute("UNPACR", thread, unpack_block_selection=unit, **operands))
    assert got == expected
    if got == "retire":
        apply_handovers(COPRO, 1 << 62)  # FlipSrc's hand-over happens once the data has landed
        assert_state(new, before)
    else:
        assert_unchanged(before)
    return got


TILEIZE_FORMATS = [(BF16, BF16), (FP16, FP16), (FP32, BF16), (FP32, TF32), (INT8, INT8), (BFP8, BFP8),
                   (INT16, INT16), (FP32, FP32), (TF32, TF32), (BFP4, BFP4)]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    formats_=st.sampled_from(TILEIZE_FORMATS),
    to_dst=bit,
    shifts=st.lists(st.integers(0, 15), min_size=3, max_size=3),
    count=st.integers(1, 1024),
    x0=st.sampled_from([0, 0, 0, 16, 3]),
    out_base=st.sampled_from([64, 128, 130]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tileize_matches_reference(formats_, to_dst, shifts, count, x0, out_base, seed):
    """Tileize_mode over whole tiles: row widths, row strides from the three Shift_amount fields, and
    the alignment rule; unpacker 0 into SrcA (SetOvrdWithAddr, 64 rows) or Dst."""
    in_fmt, out_fmt = formats_
    scale = 4 if out_fmt in (FP32, TF32) else 2 if out_fmt in (BF16, FP16, INT16) else 1  # OutBase is bytes
    c = plain(InDataFormat=in_fmt, Out_data_format=out_fmt, Tileize_mode=1, XDim=1024, YDim=1,
              Shift_amount_cntx=[*shifts, 0], Unpack_If_Sel=to_dst, OutBase=out_base * scale)  # fmt: skip
    adcs = {"x0": x0, "count": count, "y0": 0, "z0": 0, "w0": 0, "y1": 0, "z1": 0, "w1": 0}
    operands = {"addr_mode": 0, "cfg_context_id": 0, "addr_cnt_context_id": 0, "ovrd_thread_id": 0,
                "set_dat_valid": 0, "zero_write2": 0, "auto_inc_context_id": 0, "last": 1}  # fmt: skip
    compare_with_reference(c, 0, 0, adcs, seed, operands, set_ovrd_all=0 if to_dst else 1)


@SETTINGS
@given(
    unit=bit,
    thread=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
    pop=st.sampled_from([1, 1, 2]),
    fields=st.fixed_dictionaries(
        {
            "src_clr_val_ctrl": st.integers(0, 1),
            "bank_clr_ctrl": bit,
            "stall_clr_cntrl": bit,
            "set_dvalid": bit,
        }
    ),
    set_dvalid_flavour=bit,
    bases=st.lists(small, min_size=3, max_size=3),
)
def test_unpacr_nop_matches_reference(unit, thread, seed, pop, fields, set_dvalid_flavour, bases):
    reset()
    from tensixsim.tensix.unpack.fetch import unpack_state

    unpack_state(COPRO)
    rng = np.random.default_rng(seed)
    cfgs = [plain(), plain()]
    cfgs[unit]["SRC_SET_Base"] = bases
    apply_config(unit, cfgs[unit])
    set_ovrd = randomise_regs(rng, thread_rows=True)
    before = snapshot()
    new = ref_state(copy.deepcopy(cfgs), set_ovrd)
    if pop == 1:
        op = {
            "WaitLikeUnpacr": fields["stall_clr_cntrl"],
            "BothBanks": fields["bank_clr_ctrl"],
            "NegativeInfSrcA": fields["src_clr_val_ctrl"],
            "SetDvalid": fields["set_dvalid"],
        }
        expected = ref_outcome(lambda: unpacr_nop_zerosrc(new, thread, unit, op))
        got = outcome(lambda: execute("UNPACR_NOP", thread, unpacker_select=unit, unpack_pop=1, **fields))
    else:
        flavour = 3 if set_dvalid_flavour else 0
        expected = ref_outcome(lambda: setdvalid(new, thread, unit) if flavour else None)
        got = outcome(
            lambda: execute(
                "UNPACR_NOP", thread, unpacker_select=unit, unpack_pop=2, clr_to1_fmt_ctrl=flavour
            )
        )
    assert got == expected
    if got == "retire":
        assert_state(new, before)
    else:
        assert_unchanged(before)
