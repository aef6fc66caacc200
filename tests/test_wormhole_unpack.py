"""UNPACR and UNPACR_NOP on a Wormhole tile.

The reference is unpack_reference.py with ``chip=WORMHOLE``: UNPACR_Regular.md, UNPACR_NOP_ZEROSRC.md and
UNPACR_NOP_SETDVALID.md as the Wormhole pages give them (16 datums an input row in
DiscontiguousInputRows for every format, sub-byte datums there, FP8 input, unpacker 1 contexts >= 2
undefined, 1464 KiB of L1). Instruction words come from Wormhole's encoder; the encodings' documented
forms (the pages' diagrams) are checked against the operands that reach the model.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from outcomes import emulator_outcome as outcome
from outcomes import reference_outcome as ref_outcome
from unpack_reference import (
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
    WORMHOLE,
    BFP2a,
    BFP4a,
    BFP8a,
    setdvalid,
    unpacr_nop_zerosrc,
    unpacr_regular,
)

from tensixsim.raw import run_words
from tensixsim.tensix import formats
from tensixsim.tensix.regs import apply_handovers
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup
from tensixsim.tile import Tile

TILE = Tile("wormhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WINDOW = 1 << 13  # random L1 bytes around the tile data and at the end of L1
L1_END = 1464 * 1024


def word(name: str, **fields: int) -> int:
    return ISA.encode(name, **{f: fields.get(f, 0) for f in ISA.by_name[name].field_names})


def execute(name: str, thread: int, **fields: int):
    ctx = Context(COPRO, thread, 0, ISA.decode(word(name, **fields)), f"trisc{thread}", 0)
    return lookup("wormhole", name)(ctx, **ctx.instruction.fields)


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
    regs.src_handover_at[:] = -1
    COPRO.unpackers.context_counter[:] = 0
    COPRO.unpackers.end[:] = 0  # every test starts at cycle 0 with idle unpackers
    TILE.l1[:] = 0


def sec(unit: int, name: str, value: int) -> None:
    COPRO.config.write_field(f"THCON_SEC{unit}_{name}", 0, value)


def unp(unit: int, name: str, value: int) -> None:
    COPRO.config.write_field(f"UNP{unit}_{name}", 0, value)


def descriptor(c: dict) -> int:
    """UNPACR_Regular.md's TileDescriptor table."""
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
    """Write the concept-named configuration ``c`` of unpacker ``unit`` into Wormhole's layout."""
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
        "Unpack_Src_Reg_Set_Upd", "Throttle_mode", "Upsample_and_interleave",
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
        "Throttle_mode": 0, "Upsample_and_interleave": 0, "OutBase": 64 * 2, "Ystride": 0, "Zstride": 0,
        "Wstride": 0, "shared_exp": 0, "add_dest_addr_cntr": 0, "Unsigned": 0, "CfgContextOffset": [0] * 3,
        "SRC_SET_Base": [0] * 3,
    }  # fmt: skip
    c.update(changes)
    return c


def snapshot() -> dict:
    regs, adc = COPRO.regs, COPRO.adc
    return {
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
        "counter": COPRO.unpackers.context_counter.copy(),
    }


def ref_state(cfgs: list[dict], set_ovrd: list[int]) -> dict:
    regs, adc = COPRO.regs, COPRO.adc
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
        "Counter": COPRO.unpackers.context_counter.astype(int).tolist(),
        "SetOvrdWithAddr": set_ovrd,
    }


def assert_state(ref: dict, before: dict) -> None:
    now = snapshot()
    for key, name in (("srca", "SrcA"), ("srcb", "SrcB"), ("client", "Client"), ("ubank", "UnpackBank"),
                      ("srcrow", "SrcRow"), ("dst", "Dst"), ("valid", "DstValid"), ("adc", "ADC"),
                      ("counter", "Counter")):  # fmt: skip
        np.testing.assert_array_equal(now[key], np.array(ref[name]), err_msg=key)
    np.testing.assert_array_equal(now["l1"], before["l1"])
    np.testing.assert_array_equal(now["cr"], before["cr"])


def assert_unchanged(before: dict) -> None:
    now = snapshot()
    for key, value in before.items():
        np.testing.assert_array_equal(now[key], value, err_msg=key)


# ---------------------------------------------------------------------------- property tests

FORMAT_PAIRS = [
    (FP32, TF32), (FP32, BF16), (FP32, FP16), (FP32, FP32), (TF32, TF32), (BF16, BF16), (FP16, FP16),
    (INT16, INT16), (INT32, INT32), (INT8, INT8), (BFP8, BFP8), (BFP4, BFP4), (BFP2, BFP2),
    (BFP8a, BFP8a), (BFP4a, BFP4a), (BFP2a, BFP2a), (FP8, FP8), (BF16, FP16), (12, 12), (FP32, INT8),
    (FP32, FP8),
]  # fmt: skip
# The pairs valid into SrcA / SrcB as well as Dst (Unpackers/FormatConversion.md), drawn more often.
EVERYWHERE = [(FP32, TF32), (FP32, BF16), (FP32, FP16), (BF16, BF16), (FP16, FP16), (INT16, INT16),
              (INT8, INT8), (BFP8, BFP8), (BFP4, BFP4), (BFP2, BFP2), (FP8, FP8)]  # fmt: skip
small = st.integers(0, 3)
bit = st.integers(0, 1)
rare = st.sampled_from([0] * 7 + [1])


@st.composite
def unit_config(draw, unit: int) -> dict:
    in_fmt, out_fmt = draw(st.sampled_from(EVERYWHERE) | st.sampled_from(FORMAT_PAIRS))
    fmts = st.sampled_from([p[0] for p in FORMAT_PAIRS[:17]])
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
        # near the start of L1, or straddling Wormhole's end of L1 (0x16E00 16-byte units)
        Base_cntx=[draw(st.one_of(st.integers(0x100, 0x200), st.just(0x16DF0))) for _ in range(8)],
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
        Upsample_rate=draw(st.sampled_from([0] * 10 + [1, 1, 1, 2, 3])),
        Upsample_and_interleave=draw(bit),
        Context_count=draw(small),
        Unpack_Src_Reg_Set_Upd=draw(bit),
        # mostly rows 4.. of SrcA (the page's first four rows are skipped), sometimes anywhere
        OutBase=draw(st.one_of(st.sampled_from([128, 256, 192, 4 * 64]), st.integers(0, 2048))),
        Ystride=draw(st.sampled_from([0, 0, 16, 32, 64, 128, 6])),
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
        "count": st.one_of(st.integers(0, 70), st.integers(-2, 70)),
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


def randomise_regs(rng: np.random.Generator) -> list[int]:
    regs = COPRO.regs
    regs.srca[:] = rng.integers(0, 1 << 19, regs.srca.shape)
    regs.srcb[:] = rng.integers(0, 1 << 19, regs.srcb.shape)
    regs.src_client[:] = rng.choice([0, 1, 1, 1], regs.src_client.shape)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_src_row[:] = rng.choice([0, 16, 32, 48], regs.unpacker_src_row.shape)
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.8
    COPRO.unpackers.context_counter[:] = rng.integers(0, 8, (2, 3))
    set_ovrd = [int(v) for v in rng.integers(0, 2, 3)]
    for t in range(3):
        COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", t, set_ovrd[t])
    return set_ovrd


def compare_with_reference(c: dict, unit: int, thread: int, adcs: dict, seed: int, operands: dict,
                           set_ovrd_all: int | None = None) -> str:  # fmt: skip
    """One UNPACR with configuration ``c`` on the emulator and the reference; the outcome."""
    reset()
    rng = np.random.default_rng(seed)
    cfgs = [plain(), plain()]
    cfgs[unit] = c
    apply_config(unit, c)
    TILE.l1[0x1000 : 0x1000 + WINDOW] = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    TILE.l1[-WINDOW:] = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    set_ovrd = randomise_regs(rng)
    if set_ovrd_all is not None:
        set_ovrd = [set_ovrd_all] * 3
        for t in range(3):
            COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", t, set_ovrd_all)
    set_adcs(rng, adcs, thread, unit)
    before = snapshot()
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
    new = copy.deepcopy(ref_state(copy.deepcopy(cfgs), set_ovrd))
    expected = ref_outcome(lambda: unpacr_regular(new, TILE.l1.tobytes(), thread, unit, op, WORMHOLE))
    got = outcome(lambda: execute("UNPACR", thread, unpack_block_selection=unit, **operands))
    event(f"UNPACR {got}")
    assert got == expected
    if got == "retire":
        apply_handovers(COPRO, 1 << 62)  # FlipSrc's hand-over happens once the data has landed
        assert_state(new, before)
    else:
        assert_unchanged(before)
    return got


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
def test_unpacr_matches_the_wormhole_page(cfg, unit, thread, adcs, seed, operands):
    compare_with_reference(cfg.draw(unit_config(unit)), unit, thread, adcs, seed, operands)


TILEIZE_FORMATS = [(BF16, BF16), (FP16, FP16), (FP32, BF16), (FP32, TF32), (INT8, INT8), (BFP8, BFP8),
                   (INT16, INT16), (FP32, FP32), (TF32, TF32), (BFP4, BFP4), (BFP2a, BFP2a),
                   (FP8, FP8)]  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    formats_=st.sampled_from(TILEIZE_FORMATS),
    to_dst=bit,
    shifts=st.lists(st.integers(0, 15), min_size=3, max_size=3),
    count=st.integers(1, 1024),
    x0=st.sampled_from([0, 0, 0, 16, 3, 32]),
    out_base=st.sampled_from([64, 128, 130]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tileize_reads_16_datums_a_row_as_the_page_says(formats_, to_dst, shifts, count, x0, out_base, seed):
    """Tileize_mode (DiscontiguousInputRows): 16 datums of every format an input row, then RowStride from
    the three Shift_amount fields; the 16-byte alignment rule; sub-byte datums allowed."""
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
    mode=st.sampled_from(["zerosrc", "zerosrc", "setdvalid", "nop"]),
    fields=st.fixed_dictionaries({"negative_inf": bit, "both_banks": bit, "wait_like_unpacr": bit}),
    bases=st.lists(small, min_size=3, max_size=3),
)
def test_unpacr_nop_matches_the_wormhole_pages(unit, thread, seed, mode, fields, bases):
    """UNPACR_NOP's ZEROSRC (NegativeInfSrcA 2, BothBanks 3, WaitLikeUnpacr 4 above the mode 0b01),
    SETDVALID (0x7) and Nop (0x2) forms, each from its page's diagram."""
    reset()
    rng = np.random.default_rng(seed)
    cfgs = [plain(), plain()]
    cfgs[unit]["SRC_SET_Base"] = bases
    apply_config(unit, cfgs[unit])
    set_ovrd = randomise_regs(rng)
    before = snapshot()
    new = ref_state(copy.deepcopy(cfgs), set_ovrd)
    if mode == "zerosrc":
        no_op = 1 | fields["negative_inf"] << 2 | fields["both_banks"] << 3 | fields["wait_like_unpacr"] << 4
        op = {"WaitLikeUnpacr": fields["wait_like_unpacr"], "BothBanks": fields["both_banks"],
              "NegativeInfSrcA": fields["negative_inf"], "SetDvalid": 0}  # fmt: skip
        expected = ref_outcome(lambda: unpacr_nop_zerosrc(new, thread, unit, op))
    elif mode == "setdvalid":
        no_op = 0x7
        expected = ref_outcome(lambda: setdvalid(new, thread, unit))
    else:
        no_op = 0x2
        expected = "retire"
    got = outcome(lambda: execute("UNPACR_NOP", thread, unpack_block_selection=unit, no_op=no_op))
    assert got == expected
    if got == "retire":
        assert_state(new, before)
    else:
        assert_unchanged(before)


# ---------------------------------------------------------------------------- hand-worked vectors


def bf16_bytes(values: list[int]) -> bytes:
    return b"".join(v.to_bytes(2, "little") for v in values)


def test_bf16_face_into_srca_through_the_pipe():
    """A BF16 face into SrcA rows 0..15 by an UNPACR word from Wormhole's encoder, through the pipe:
    FlipSrc hands bank 0 to the matrix unit once the 512 bytes have landed (two address cycles, then
    16 bytes a cycle), and Ch0Y / Ch1Y advance by one."""
    reset()
    apply_config(0, plain())
    values = [(0x3F80 + i) & 0xFFFF for i in range(256)]
    TILE.write(0x1000, bf16_bytes(values))
    COPRO.adc.value[0, 0, 1, 0] = 255  # Ch1.X: X end 256
    run_words(TILE, 0, [word("UNPACR", set_dat_valid=1, addr_mode=0b01000100, last=1)])
    expected = formats.src_from_bf16(np.array(values, np.uint16)).reshape(16, 16)
    np.testing.assert_array_equal(COPRO.regs.srca[0, :16], expected)
    state = COPRO.unpackers  # the fetch starts after the two address cycles
    assert state.end[0] - state.anchor[0] == 512 // 16
    assert COPRO.regs.src_client[0, 0] == 0 and COPRO.regs.unpacker_bank[0] == 1
    assert COPRO.adc.value[0, 0, 0, 1] == 1 and COPRO.adc.value[0, 0, 1, 1] == 1


def test_fp8_is_the_high_byte_of_fp16_into_dst():
    """UNPACR_Regular.md FormatConversion: ``case FP8: DatumBits <<= 8; InDataFormat = FP16``."""
    reset()
    apply_config(0, plain(InDataFormat=FP8, Out_data_format=FP8, Unpack_If_Sel=1, OutBase=64))
    TILE.write(0x1000, bytes([0x3C, 0xBE, 0x00, 0x7F]))  # 1.0, -1.5, 0, the largest pattern
    COPRO.adc.value[0, 0, 1, 0] = 3
    assert isinstance(execute("UNPACR", 0), Retire)
    fp16 = formats.dst16_to_fp16(COPRO.regs.dst[0, :4])
    assert fp16.tolist() == [0x3C00, 0xBE00, 0x0000, 0x7F00]


def test_tileize_reads_each_16_datums_from_the_next_input_row():
    """A 16x16 BF16 face tilized out of a row-major block 32 datums wide (RowStride 64 bytes:
    Shift_amount_cntx[0] = 4): one UNPACR of 256 datums, 16 from each input row."""
    reset()
    apply_config(0, plain(Tileize_mode=1, Shift_amount_cntx=[4, 0, 0, 0]))
    block = np.arange(16 * 32, dtype=np.uint16).reshape(16, 32) | 0x3F80
    TILE.write(0x1000, block.tobytes())
    COPRO.adc.value[0, 0, 0, 0] = 16  # the right half: 32 bytes into the first row
    COPRO.adc.value[0, 0, 1, 0] = 16 + 255
    assert isinstance(execute("UNPACR", 0), Retire)
    got = formats.src_to_bf16(COPRO.regs.srca[0, :16])
    np.testing.assert_array_equal(got, block[:, 16:])


@pytest.mark.parametrize("interleave", [0, 1])
def test_upsample_rate_1_inserts_a_zero_or_skips_a_position(interleave):
    """Unpackers/README.md: rate 1 inserts one zero datum after every datum, or with
    Upsample_and_interleave skips one output position; rates 2 and 3 are not modelled."""
    reset()
    apply_config(0, plain(Upsample_rate=1, Upsample_and_interleave=interleave))
    TILE.write(0x1000, bf16_bytes([0x3F80, 0x4000, 0x4040, 0x4080]))
    COPRO.regs.srca[:] = 7
    COPRO.adc.value[0, 0, 1, 0] = 3
    assert isinstance(execute("UNPACR", 0), Retire)
    row = formats.src_to_bf16(COPRO.regs.srca[0, 0, :9]).tolist()
    gap = formats.src_to_bf16(np.array([7], np.uint32)).tolist() if interleave else [0]
    assert row == [0x3F80, *gap, 0x4000, *gap, 0x4040, *gap, 0x4080, *gap, row[8]]
    assert COPRO.regs.srca[0, 0, 8] == 7
    for rate in (2, 3):
        apply_config(0, plain(Upsample_rate=rate))
        COPRO.unpackers.end[:] = 0  # the first UNPACR's fetch is over
        assert outcome(lambda: execute("UNPACR", 0)) == "unimplemented"


def test_unpacker_1_context_2_is_undefined_on_wormhole():
    reset()
    apply_config(1, plain())
    COPRO.adc.value[0, 1, 1, 0] = 15
    before = snapshot()
    assert outcome(lambda: execute("UNPACR", 0, unpack_block_selection=1, ovrd_thread_id=1,
                                   cfg_context_id=2)) == "undefined"  # fmt: skip
    assert_unchanged(before)


@pytest.mark.parametrize(("changes", "count", "cycles"), [
    ({"Throttle_mode": 0}, 256, 2 + 512 // 16),  # x1: 16 bytes a cycle after two address cycles
    ({"Throttle_mode": 1}, 256, 2 + 512 // 32),
    ({"Throttle_mode": 2}, 256, 2 + 512 // 64),
    ({"Throttle_mode": 0, "Tileize_mode": 1}, 256, 2 + 512 // 64),  # DiscontiguousInputRows: x4
    ({"Throttle_mode": 2, "InDataFormat": BFP2, "Out_data_format": BFP2}, 256, 2 + 64 // 16),  # x1
    ({"Throttle_mode": 2, "InDataFormat": BFP4, "Out_data_format": BFP4, "Unpack_If_Sel": 1},
     256, 2 + 128 // 32),  # BFP4 into Dst: at most x2
])  # fmt: skip
def test_unpacr_fetches_at_the_speed_the_mode_wants(changes, count, cycles):
    reset()
    apply_config(0, plain(**changes))
    COPRO.config.write_thread_field("SRCA_SET_SetOvrdWithAddr", 0, 1)
    COPRO.adc.value[0, 0, 1, 0] = count - 1
    result = execute("UNPACR", 0)
    assert isinstance(result, Retire) and result.cycles == 2
    assert COPRO.unpackers.end[0] == cycles


def test_increment_context_counter_and_flush_cache():
    reset()
    sec(1, "REG2_Context_count", 1)  # two contexts
    for expected in (1, 0, 1):
        assert isinstance(execute("UNPACR", 2, unpack_block_selection=1, cfg_context_cnt_inc=1), Retire)
        assert COPRO.unpackers.context_counter[1, 2] == expected
    assert isinstance(execute("UNPACR", 2, search_cache_flush=1, ovrd_thread_id=1), Retire)


def test_operands_outside_the_documented_forms():
    reset()
    before = snapshot()
    cases = [
        ("UNPACR", {"cfg_context_cnt_inc": 2}, "undefined"),  # bit 14: IncrementContextCounter is bit 13
        ("UNPACR", {"cfg_context_cnt_inc": 1, "zero_write2": 1}, "undefined"),
        ("UNPACR", {"search_cache_flush": 1, "addr_mode": 1}, "undefined"),
        ("UNPACR", {"rareb_en": 1}, "unimplemented"),
        ("UNPACR", {"row_search": 1}, "unimplemented"),
        ("UNPACR_NOP", {"no_op": 0x0}, "unimplemented"),  # OverlayClear
        ("UNPACR_NOP", {"no_op": 0x3 | 5 << 4 | 7 << 16}, "unimplemented"),  # OverlayClear, stream 7
        ("UNPACR_NOP", {"no_op": 0x4 | 1 << 22}, "unimplemented"),  # SETREG
        ("UNPACR_NOP", {"no_op": 0x6}, "undefined"),  # no page
        ("UNPACR_NOP", {"no_op": 0x1 | 1 << 6}, "undefined"),  # ZEROSRC with the yaml's set-dvalid bit
        ("UNPACR_NOP", {"no_op": 0x1 | 1 << 5}, "undefined"),
        ("UNPACR_NOP", {"no_op": 0x2 | 1 << 8}, "undefined"),
        ("UNPACR_NOP", {"no_op": 0x7 | 1 << 3}, "undefined"),
    ]
    for name, fields, kind in cases:
        assert outcome(lambda n=name, f=fields: execute(n, 0, **f)) == kind, (name, fields)
    assert_unchanged(before)


def test_unpacr_nop_waits_for_the_unpackers_fetch():
    """UNPACR_NOP is sequenced after the unpacker's UNPACR: it waits until that fetch has ended."""
    reset()
    apply_config(0, plain())
    COPRO.adc.value[0, 0, 1, 0] = 255
    assert isinstance(execute("UNPACR", 0), Retire)
    waited = execute("UNPACR_NOP", 0, no_op=0x2)
    assert isinstance(waited, Wait) and waited.until == 2 + 512 // 16
