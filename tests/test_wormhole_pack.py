"""PACR and PACR_SETREG on a Wormhole tile: the four packers against wormhole_pack_reference.py (the
Wormhole pages' pseudocode), hand-worked vectors, the encodings' documented forms, and an end-to-end
round trip (a BF16 tile unpacked from L1 into Dst with tilize, packed back with untilize in BF16, FP32
and BFP8) compared with numpy."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from outcomes import emulator_outcome as outcome
from outcomes import reference_outcome as ref_outcome
from wormhole_pack_reference import BF16, BFP8, FP8, FP16, FP32, INT8, INT16, INT32, TF32, pacr

from tensixsim.raw import run_words
from tensixsim.tensix import formats
from tensixsim.tensix.adc import PACKERS
from tensixsim.tensix.formats import BFP2A, BFP4
from tensixsim.tensix.pack.stream import STREAM_DRAINED
from tensixsim.tensix.pack.wormhole import PACK_LIMITS, PACKER_CONFIG
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup
from tensixsim.tile import Tile
from tensixsim.timing import PACK_WORMHOLE

TILE = Tile("wormhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CYCLE = 100


def word(name: str, **fields: int) -> int:
    return ISA.encode(name, **{f: fields.get(f, 0) for f in ISA.by_name[name].field_names})


def execute(name: str, thread: int = 0, cycle: int = CYCLE, **fields: int):
    ctx = Context(COPRO, thread, cycle, ISA.decode(word(name, **fields)), f"trisc{thread}", 0)
    return lookup("wormhole", name)(ctx, **ctx.instruction.fields)


def setf(name: str, value: int) -> None:
    COPRO.config.write_field(name, 0, value)


def reset() -> None:
    config, regs, adc = COPRO.config, COPRO.regs, COPRO.adc
    config.config[:] = 0
    config.thread[:] = 0
    regs.dst[:] = 0
    regs.dst_row_valid[:] = True
    regs.dst_ready[:] = 0
    adc.value[:] = 0
    adc.cr[:] = 0
    state = COPRO.packer
    state.stream[:] = 0
    state.stream[:, 2] = 1  # NeedsNewAddress
    state.buffer[:] = 0
    TILE.l1[:] = 0


NO_MOD = {"ysrc_incr": 0, "ysrc_cr": 0, "ysrc_clear": 0, "ydst_incr": 0, "ydst_cr": 0, "ydst_clear": 0,
          "zsrc_incr": 0, "zsrc_clear": 0, "zdst_incr": 0, "zdst_clear": 0}  # fmt: skip


def packer(**changes) -> dict:
    p = {
        "in": FP32, "out": FP32, "offset": 0, "l1_dest": 0x100 - 1, "sub_header": 0, "limit": 0x1FFFF,
        "fifo": 0, "exp_section": 0, "exp_threshold_en": 0, "exp_threshold": 0, "downsample": 0,
        "edge_mask": 0xFFFF, "l1_acc": 0, "addr_cnt_context": 0,
    }  # fmt: skip
    p.update(changes)
    return p


def base_config(**changes) -> dict:
    c = {
        "read32": 1, "inter": FP32, "raw": 0, "unsigned": 0, "round10": 0, "relu": 0, "relu_threshold": 0,
        "edge_mode": 0, "base0": 0, "xstride": 0, "ystride": 64, "zstride": 1024, "base1": 0,
        "ystride1": 0, "zstride1": 0, "addr_mods": [dict(NO_MOD)] * 4,
        "packers": [packer(l1_dest=0x100 - 1 + 0x40 * i) for i in range(4)],
    }  # fmt: skip
    c.update(changes)
    return c


def apply(c: dict) -> None:
    """Write the configuration into Wormhole's layout (Packers[i].Config per PACKER_CONFIG)."""
    setf("PCK_DEST_RD_CTRL_Read_32b_data", c["read32"])
    setf("PCK_DEST_RD_CTRL_Read_int8", c["raw"])
    setf("PCK_DEST_RD_CTRL_Read_unsigned", c["unsigned"])
    setf("PCK_DEST_RD_CTRL_Round_10b_mant", c["round10"])
    setf("ALU_FORMAT_SPEC_REG2_Dstacc", c["inter"])
    setf("STACC_RELU_ApplyRelu", c["relu"])
    setf("STACC_RELU_ReluThreshold", c["relu_threshold"])
    setf("PCK_EDGE_MODE_mode", c["edge_mode"])
    setf("PCK0_ADDR_BASE_REG_0_Base", c["base0"])
    setf("PCK0_ADDR_CTRL_XY_REG_0_Xstride", c["xstride"])
    setf("PCK0_ADDR_CTRL_XY_REG_0_Ystride", c["ystride"])
    setf("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", c["zstride"])
    setf("PCK0_ADDR_BASE_REG_1_Base", c["base1"])
    setf("PCK0_ADDR_CTRL_XY_REG_1_Ystride", c["ystride1"])
    setf("PCK0_ADDR_CTRL_ZW_REG_1_Zstride", c["zstride1"])
    select = 0
    for i, p in enumerate(c["packers"]):
        prefix = PACKER_CONFIG[i]
        setf(prefix + "Disable_zero_compress", 1)
        setf(prefix + "In_data_format", p["in"])
        setf(prefix + "Out_data_format", p["out"])
        setf(prefix + "L1_Dest_addr", p["l1_dest"])
        setf(prefix + "Sub_l1_tile_header_size", p["sub_header"])
        setf(prefix + "Exp_section_size", p["exp_section"])
        setf(prefix + "Exp_threshold_en", p["exp_threshold_en"])
        setf(prefix + "Exp_threshold", p["exp_threshold"])
        setf(prefix + "Downsample_mask", p["downsample"])
        setf(prefix + "Pack_L1_Acc", p["l1_acc"])
        setf(prefix + "Addr_cnt_context", p["addr_cnt_context"])
        setf(PACK_LIMITS[i] + "limit_address", p["limit"])
        setf(PACK_LIMITS[i] + "fifo_size", p["fifo"])
        setf(f"DEST_TARGET_REG_CFG_PACK_SEC{i}_Offset", p["offset"])
        # packer i's edge masks: row-set i selects mask register i for every row
        select |= i << (2 * i)
        setf(f"PCK_EDGE_OFFSET_SEC{i}_mask", p["edge_mask"])
        for y in range(16):
            setf(f"TILE_ROW_SET_MAPPING_{i}_row_set_mapping_{y}", i)
    setf("PCK_EDGE_TILE_ROW_SET_SELECT_select", select)
    for t in range(3):
        for i, m in enumerate(c["addr_mods"]):
            for key, value in m.items():
                name = {"ysrc": "Ysrc", "ydst": "Ydst", "zsrc": "Zsrc", "zdst": "Zdst"}[key[:4]]
                suffix = {"incr": "Incr", "cr": "CR", "clear": "Clear"}[key[5:]]
                COPRO.config.write_thread_field(f"ADDR_MOD_PACK_SEC{i}_{name}{suffix}", t, value)


def set_adcs(adcs: list[dict]) -> None:
    for t, adc in enumerate(adcs):
        for key, array, channel in (("ch0", COPRO.adc.value, 0), ("ch1", COPRO.adc.value, 1),
                                    ("ch0_cr", COPRO.adc.cr, 0), ("ch1_cr", COPRO.adc.cr, 1)):  # fmt: skip
            array[t, PACKERS, channel] = adc[key]


def fresh_states() -> list[dict]:
    return [
        {"addr": 0, "needs_new": True, "pending": b"", "exp_addr": 0, "exp_pending": b""} for _ in range(4)
    ]


def assert_states(states: list[dict]) -> None:
    for i, s in enumerate(states):
        got = COPRO.packer.packer(i)
        assert (got.data_address, got.exponent_address, got.needs_new_address) == (
            s["addr"], s["exp_addr"], s["needs_new"]
        ), i  # fmt: skip
        assert (got.pending, got.exponent_pending) == (s["pending"], s["exp_pending"]), i


# ---------------------------------------------------------------------------- the reference, over hypothesis

# (Read_32b_data, IntermediateFormat = In_data_format, [Out_data_format...], Read_raw, Read_unsigned,
# Round_10b_mant): the combinations FormatConversion.md describes, and a few it calls "No".
COMBOS = [
    (1, FP32, [FP32, BF16, FP16, FP8, BFP8, BFP4], 0, 0, 0), (1, TF32, [TF32, FP16, BF16], 0, 0, 0),
    (1, BF16, [BF16, FP32, FP16, BFP8], 0, 0, 0), (1, BF16, [BF16, FP8], 1, 0, 0),
    (1, BFP8, [BFP8, BFP4, FP32], 0, 0, 0), (1, INT32, [INT32], 0, 0, 0), (1, INT8, [INT8], 0, 0, 0),
    (1, INT8, [INT8], 1, 1, 0), (0, BF16, [BF16, FP32, BFP8, BFP4], 1, 0, 0), (0, BF16, [BF16], 0, 0, 0),
    (0, FP16, [FP16, FP8, FP32, BFP2A], 0, 0, 0), (0, FP16, [FP16, BF16], 1, 0, 0),
    (0, INT16, [INT16], 0, 0, 0), (0, TF32, [TF32, FP16], 0, 0, 0),
    (1, FP16, [FP16], 0, 0, 0), (0, INT32, [INT32], 0, 0, 0), (1, FP32, [TF32], 0, 0, 0),
    (1, BF16, [INT8], 0, 0, 0),
]  # fmt: skip
UNDEFINED_COMBOS = 4  # the last four
PACK_SELS = [1, 0, 2, 4, 8, 3, 12, 15, 15, 15, 5]
SPECIAL32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x00000001, 0x80400000, 0x38400000,
             0x37FFFFFF, 0x3F800000, 0xC0000000]  # fmt: skip

addr_mod_st = st.fixed_dictionaries(
    {
        "ysrc_incr": st.integers(0, 15), "ysrc_cr": st.integers(0, 1), "ysrc_clear": st.integers(0, 1),
        "ydst_incr": st.integers(0, 3), "ydst_cr": st.integers(0, 1), "ydst_clear": st.integers(0, 1),
        "zsrc_incr": st.integers(0, 1), "zsrc_clear": st.integers(0, 1),
        "zdst_incr": st.integers(0, 1), "zdst_clear": st.integers(0, 1),
    }
)  # fmt: skip
fields_st = st.fixed_dictionaries(
    {
        "pack_sel": st.sampled_from(PACK_SELS),
        "zero_write": st.sampled_from([0, 0, 0, 1]),
        "flush": st.sampled_from([0, 0, 0, 0, 1]),
        "last": st.integers(0, 1),
        "addr_mode": st.integers(0, 3),
        "ovrd": st.sampled_from([0, 0, 1]),
    }
)


@st.composite
def scenarios(draw):
    combo = draw(st.sampled_from(COMBOS[:-UNDEFINED_COMBOS] * 4 + COMBOS[-UNDEFINED_COMBOS:]))
    read32, inter, outs, raw, unsigned, round10 = combo

    def one_packer(i: int) -> dict:
        return packer(
            **{"in": inter}, out=draw(st.sampled_from(outs)),
            offset=draw(st.sampled_from([0, 0, 16 * i, 1000])),
            # packer 0's bit 31 makes the others' addresses relative to its own
            l1_dest=draw(st.sampled_from([0xFF + 0x40 * i] * 3 + [0x200 + 0x40 * i, 0x16DFF]
                                         + [0x80000010 + i * 0x40] * 2)),
            sub_header=draw(st.integers(0, 1)), limit=draw(st.sampled_from([0x1FFFF, 0x800])),
            fifo=draw(st.sampled_from([0, 0x400])), exp_section=draw(st.sampled_from([0, 3])),
            exp_threshold_en=draw(st.sampled_from([0, 0, 1])),
            exp_threshold=draw(st.sampled_from([0, 15, 120, 127])),
            downsample=draw(st.sampled_from([0, 0, 0xFFFF, 0x5555, 0x00FF, 0x0F0F])),
            edge_mask=draw(st.sampled_from([0xFFFF, 0xFFFF, 0x00FF, 0])),
            l1_acc=draw(st.sampled_from([0] * 7 + [1])), addr_cnt_context=draw(st.integers(0, 3)),
        )  # fmt: skip

    c = base_config(
        read32=read32, inter=inter, raw=raw, unsigned=unsigned, round10=round10,
        relu=draw(st.sampled_from([0, 0, 0, 1, 2, 3, 7])),
        relu_threshold=draw(st.sampled_from([0, 0x3F80, 0x3C00, 0x3C00, 0x8001])),
        edge_mode=draw(st.integers(0, 1)),
        base0=draw(st.sampled_from([0, 0, 64, 1000])), xstride=draw(st.sampled_from([0, 0, 2, 4, 17])),
        ystride=draw(st.sampled_from([16, 32, 64, 0])), zstride=draw(st.sampled_from([0, 512, 1024])),
        base1=draw(st.sampled_from([0, 0, 0x10, 0x25])), ystride1=draw(st.sampled_from([0, 0, 16, 7])),
        zstride1=draw(st.sampled_from([0, 32])),
        addr_mods=draw(st.lists(addr_mod_st, min_size=4, max_size=4)),
        packers=[one_packer(i) for i in range(4)],
    )  # fmt: skip
    adcs = []
    for _ in range(3):
        x0 = draw(st.sampled_from([0, 0, 0, 0, 3, 8]))
        x1 = x0 + draw(st.sampled_from([15, 15, 31, 7, 0, -1, 47])) - (x0 if draw(st.booleans()) else 0)
        adcs.append({
            "ch0": [x0, draw(st.integers(0, 20)), draw(st.integers(0, 3)), 0],
            "ch1": [max(x1, 0) if draw(st.booleans()) else x1 & 0x3FFFF, draw(st.integers(0, 3)),
                    draw(st.integers(0, 3)), 0],
            "ch0_cr": [0, draw(st.integers(0, 20)), 0, 0],
            "ch1_cr": [0, draw(st.integers(0, 3)), 0, 0],
        })  # fmt: skip
    program = draw(st.lists(fields_st, min_size=1, max_size=3))
    thread = draw(st.integers(0, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dst = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint32)
    if draw(st.booleans()):
        special = np.array(SPECIAL32, np.uint32)[rng.integers(0, len(SPECIAL32), (1024, 16))]
        dst = np.where(rng.random((1024, 16)) < 0.5, formats.dst32_from_fp32(special) >> 16, dst)
    valid = rng.random(1024) > 0.1
    ready = np.where(rng.random(128) < 0.03, CYCLE + 3, 0).astype(np.int64)
    return c, adcs, program, thread, dst.astype(np.uint16), valid, ready


@SETTINGS
@given(scenarios())
def test_pacr_matches_the_wormhole_pages(scenario):
    c, adcs, program, thread, dst, valid, ready = scenario
    reset()
    apply(c)
    set_adcs(adcs)
    COPRO.regs.dst[:] = dst
    COPRO.regs.dst_row_valid[:] = valid
    COPRO.regs.dst_ready[:] = ready
    noise = np.random.default_rng(int(dst[0, 0]))  # what L1 holds where the output goes (accumulation)
    TILE.l1[0xF00:0x6000] = noise.integers(0, 256, 0x5100, dtype=np.uint8)
    ref_l1 = bytearray(TILE.l1.tobytes())
    ref_adcs, states = copy.deepcopy(adcs), fresh_states()
    dst_list, valid_list, ready_list = dst.tolist(), valid.tolist(), ready.tolist()
    for f in program:
        ref = ref_outcome(
            lambda f=f: pacr(c, dst_list, valid_list, ref_adcs, states, ref_l1, ready_list, CYCLE, thread, f)
        )
        fields = {"addr_mode": f["addr_mode"], "zero_write": f["zero_write"], "pack_sel": f["pack_sel"],
                  "ovrd_thread_id": f["ovrd"], "flush": f["flush"], "last": f["last"]}  # fmt: skip
        emu = outcome(lambda fields=fields: execute("PACR", thread, **fields))
        event(f"PACR {emu}" + (f" packers {f['pack_sel']:#06b}" if emu == "retire" else ""))
        assert emu == ref, (c, adcs, program)
        if emu != "retire":
            break
        assert TILE.l1.tobytes() == bytes(ref_l1)
        for t in range(3):
            assert COPRO.adc.value[t, PACKERS, 0].tolist() == ref_adcs[t]["ch0"]
            assert COPRO.adc.value[t, PACKERS, 1].tolist() == ref_adcs[t]["ch1"]
        assert_states(states)


# ---------------------------------------------------------------------------- hand-worked vectors


def bf16_face(seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).integers(0x3000, 0x5000, (16, 16))).astype(np.uint16)


def test_four_packers_pack_four_faces_to_four_places():
    """PackerMask 0b1111: each packer reads 256 datums from its DEST_TARGET_REG_CFG_PACK_SEC[i] offset
    (one face each) and writes them at its own L1_Dest_addr; the instruction takes as long as one."""
    reset()
    c = base_config(read32=0, inter=BF16, raw=1, ystride=0, zstride=0)
    c["packers"] = [packer(**{"in": BF16}, out=BF16, offset=16 * i, l1_dest=0x100 - 1 + 0x40 * i)
                    for i in range(4)]  # fmt: skip
    apply(c)
    faces = [bf16_face(i) for i in range(4)]
    for i, face in enumerate(faces):
        COPRO.regs.dst[16 * i : 16 * i + 16] = formats.dst16_from_bf16(face)
    COPRO.adc.value[0, PACKERS, 1, 0] = 255
    result = execute("PACR", pack_sel=0xF, last=1)
    # 512 bytes a packer, 16 a cycle, in parallel; then the packers drain (pack.stream.accept).
    assert isinstance(result, Retire) and result.cycles == 512 // 16
    assert (COPRO.packer.stream[:, STREAM_DRAINED] == CYCLE + 512 // 16 + PACK_WORMHOLE.drain_cycles).all()
    for i, face in enumerate(faces):
        got = np.frombuffer(TILE.l1[0x1000 + 0x400 * i : 0x1200 + 0x400 * i].tobytes(), np.uint16)
        np.testing.assert_array_equal(got.reshape(16, 16), face)


def test_packer0_address_with_bit_31_is_added_to_the_others():
    """OutputAddressGenerator.md: packers 1..3 add packer 0's first address when its bit 31 is set."""
    reset()
    c = base_config(read32=0, inter=BF16, raw=1)
    c["packers"] = [packer(**{"in": BF16}, out=BF16, l1_dest=a, sub_header=1)
                    for a in (0x80000100, 0x20, 0x40, 0x60)]  # fmt: skip
    apply(c)
    COPRO.regs.dst[0] = formats.dst16_from_bf16(np.arange(1, 17, dtype=np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", pack_sel=0b0010, last=1), Retire)  # packer 1 only
    # (0x80000100 + 0x20) & 0x1FFFF = 0x120 sixteen-byte units
    assert np.frombuffer(TILE.l1[0x1200:0x1220].tobytes(), np.uint16).tolist() == list(range(1, 17))


def test_yzw_address_counts_in_256_byte_steps():
    """``Addr += YZW_Addr & ~0xf``: the output ADC's Y times Ystride, with its low four bits dropped."""
    reset()
    c = base_config(read32=0, inter=BF16, raw=1, ystride1=0x13)
    c["packers"][0] = packer(**{"in": BF16}, out=BF16, l1_dest=0xFF)
    apply(c)
    COPRO.regs.dst[0] = formats.dst16_from_bf16(np.full(16, 0x3F80, np.uint16))
    COPRO.adc.value[0, PACKERS, 1, :2] = [15, 1]  # X end 15, Y 1: YZW_Addr 0x13 -> 0x10 units on
    assert isinstance(execute("PACR", pack_sel=1, last=1), Retire)
    assert TILE.l1[0x1100:0x1120].view(np.uint16).tolist() == [0x3F80] * 16
    assert not TILE.l1[0x1000:0x1100].any()


def test_downsampling_keeps_the_datums_the_rotating_mask_names():
    reset()
    c = base_config(read32=0, inter=INT16, raw=0)
    c["packers"][0] = packer(**{"in": INT16}, out=INT16, downsample=0x00F1, l1_dest=0xFF)
    apply(c)
    COPRO.regs.dst[0:2] = np.arange(32, dtype=np.uint16).reshape(2, 16)
    COPRO.adc.value[0, PACKERS, 1, 0] = 31
    assert isinstance(execute("PACR", pack_sel=1, last=1), Retire)
    kept = [i for i in range(32) if 0x00F1 >> (i % 16) & 1]
    assert TILE.l1[0x1000:0x1014].view(np.uint16).tolist() == kept
    assert not TILE.l1[0x1014:0x1020].any()  # zero padding on Last


def test_ovrd_thread_id_reads_the_adc_addr_cnt_context_names():
    reset()
    c = base_config(read32=0, inter=INT16)
    c["packers"][0] = packer(**{"in": INT16}, out=INT16, addr_cnt_context=2, l1_dest=0xFF)
    c["addr_mods"] = [dict(NO_MOD, ysrc_incr=1)] * 4
    apply(c)
    COPRO.regs.dst[3] = np.arange(100, 116, dtype=np.uint16)
    COPRO.adc.value[2, PACKERS, 0, 1] = 3  # ADC 2: Y 3, of 32 bytes (one Dst row of INT16): row 3
    COPRO.config.write_field("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 0, 32)
    COPRO.adc.value[2, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", thread=0, pack_sel=1, ovrd_thread_id=1, last=1), Retire)
    assert TILE.l1[0x1000:0x1020].view(np.uint16).tolist() == list(range(100, 116))
    assert COPRO.adc.value[2, PACKERS, 0, 1] == 4 and COPRO.adc.value[0, PACKERS, 0, 1] == 0


def test_relu_clamp_then_exponent_threshold_and_zero_write_skips_both():
    """The pipeline diagram: ReLU, then exponent thresholding; /dev/null datums join after both."""
    reset()
    c = base_config(read32=0, inter=BF16, raw=1, relu=3, relu_threshold=0x4000)  # clamp to (0, 2.0]
    c["packers"][0] = packer(**{"in": BF16}, out=BF16, exp_threshold_en=1, exp_threshold=0x7E, l1_dest=0xFF)
    apply(c)
    values = [0x3F80, 0x4100, 0xBF80, 0x3E80, 0x3F00] + [0x3F80] * 11  # 1, 8, -1, 0.25, 0.5
    COPRO.regs.dst[0] = formats.dst16_from_bf16(np.array(values, np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", pack_sel=1), Retire)
    assert isinstance(execute("PACR", pack_sel=1, zero_write=1, last=1), Retire)
    got = TILE.l1[0x1000:0x1040].view(np.uint16).tolist()
    assert got[:5] == [0x3F80, 0x4000, 0, 0, 0x3F00]  # 8 clamps to 2; 0.25's exponent 0x7D < 0x7E
    assert got[16:] == [0] * 16


def test_fp8_output_is_fp16_truncated_to_two_mantissa_bits():
    reset()
    c = base_config(read32=0, inter=FP16, raw=1)
    c["packers"][0] = packer(**{"in": FP16}, out=FP8, l1_dest=0xFF)
    apply(c)
    values = [0x3C00, 0x3DFF, 0xC000, 0x7BFF] + [0] * 12
    COPRO.regs.dst[0] = formats.dst16_from_fp16(np.array(values, np.uint16))
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert isinstance(execute("PACR", pack_sel=1, last=1), Retire)
    assert list(TILE.l1[0x1000:0x1004]) == [0x3C, 0x3D, 0xC0, 0x7B]


def test_read_after_matrix_write_waits_and_changes_nothing():
    reset()
    apply(base_config())
    COPRO.regs.written(np.array([3]), CYCLE - 2, 4)
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    result = execute("PACR", pack_sel=1, last=1)
    assert isinstance(result, Wait) and result.until == CYCLE + 3
    assert not TILE.l1.any() and COPRO.packer.packer(0).needs_new_address
    assert isinstance(execute("PACR", cycle=CYCLE + 3, pack_sel=1, last=1), Retire)


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"pack_sel": 5}, "undefined"),  # not in PACR.md's table
        ({"pack_sel": 1, "addr_mode": 4}, "undefined"),  # bit 17
        ({"pack_sel": 1, "addr_mode": 1 << 8}, "undefined"),  # bit 23 (the diagram's 0)
        ({"pack_sel": 1, "zero_write": 2}, "undefined"),
        ({"pack_sel": 1, "concat": 2}, "undefined"),
        ({"pack_sel": 1, "flush": 2}, "undefined"),
    ],
)
def test_operands_outside_the_documented_form_are_undefined(fields, kind):
    reset()
    apply(base_config())
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    assert outcome(lambda: execute("PACR", last=1, **fields)) == kind
    assert not TILE.l1.any()


@pytest.mark.parametrize(
    ("name", "value", "kind"),
    [
        ("THCON_SEC0_REG8_Disable_zero_compress", 0, "unimplemented"),  # packer 1 compressing
        ("THCON_SEC0_REG1_Source_interface_selection", 1, "unimplemented"),  # packer 0 reading L1
        ("THCON_SEC0_REG8_Add_l1_dest_addr_offset", 1, "unimplemented"),
        ("THCON_SEC1_REG1_Add_tile_header_size", 1, "unimplemented"),
        ("THCON_SEC1_REG8_Downsample_rate", 1, "unimplemented"),
        ("ALU_ROUNDING_MODE_Packer_srnd_en", 1, "unimplemented"),
        ("PCK_EDGE_TILE_FACE_SET_SELECT_enable", 1, "unimplemented"),
        ("THCON_SEC1_REG1_Out_data_format", 12, "undefined"),
        ("THCON_SEC1_REG8_L1_Dest_addr", 0x16DFF, "fault"),  # past Wormhole's 1464 KiB
    ],
)
def test_configuration_not_modelled_or_undefined_changes_nothing(name, value, kind):
    reset()
    apply(base_config())
    setf(name, value)
    COPRO.regs.dst[:] = 0x1234
    COPRO.adc.value[0, PACKERS, 1, 0] = 15
    TILE.l1[:] = 0x5A
    before, adc_before = TILE.l1.tobytes(), COPRO.adc.value.copy()
    assert outcome(lambda: execute("PACR", pack_sel=0xF, last=1)) == kind
    assert TILE.l1.tobytes() == before and np.array_equal(COPRO.adc.value, adc_before)
    assert COPRO.packer.stream[:, 2].all() and not COPRO.packer.stream[:, 3].any()


def test_pacr_setreg_documented_form_is_unimplemented_others_undefined():
    reset()
    documented = {"push": 1, "addr_sel": 1, "wr_data": 5, "pack_sel": 0xF, "stream_id": 4, "flush": 1}
    assert outcome(lambda: execute("PACR_SETREG", **documented)) == "unimplemented"
    for change in ({"push": 0}, {"pack_sel": 1}, {"flush": 0}, {"last": 1}):
        assert outcome(lambda c=change: execute("PACR_SETREG", **{**documented, **c})) == "undefined"


# ---------------------------------------------------------------------------- end to end


def to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 -> BF16 bits, rounding to nearest even (numpy's side of the comparison)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def tilize_words() -> list[int]:
    """Unpacker 0 into Dst with Tileize_mode: four UNPACRs, one face each (X start 0 / 16 / 512 / 528 of
    the row-major 32x32 tile, 16 datums an input row, RowStride 64 bytes), Ch1 Z advancing one face
    (256 datums) of Dst per UNPACR."""
    words = []
    for x0 in (0, 16, 512, 528):
        words += [word("SETADCXX", cnt_set_mask=1, x_start=x0, x_end2=x0 + 255)]
        words += [word("UNPACR", addr_mode=0b00010000, last=1)]  # Ch1ZInc 1
    return words


def untilize_words() -> list[int]:
    """Packer 0 writes the tile back row-major: for each of its 32 rows, 16 datums of the left face and
    16 of the right (SETADC picks Dst face Z and face row Y), one output stream, Last at the end."""
    words = []
    for row in range(32):
        for half in (0, 1):
            face = 2 * (row // 16) + half
            words += [word("SETADC", cnt_set_mask=4, channel_index=0, dimension_index=2, value=face)]
            words += [word("SETADC", cnt_set_mask=4, channel_index=0, dimension_index=1, value=row % 16)]
            words += [word("PACR", pack_sel=1, last=int(row == 31 and half == 1))]
    return words


@pytest.mark.parametrize("out_fmt", [BF16, FP32, BFP8])
def test_a_bf16_tile_round_trips_through_dst_with_tilize_and_untilize(out_fmt):
    tile = Tile("wormhole")
    copro = tile.coprocessor
    rng = np.random.default_rng(7)
    values = rng.standard_normal((32, 32)).astype(np.float32) * 4
    bits = to_bf16(values)
    tile.write(0x10000, bits.tobytes())  # row-major, 64 bytes a row

    def cfg(name: str, value: int) -> None:
        copro.config.write_field(name, 0, value)

    # unpacker 0: BF16 from 0x10000 (Base_address is 16-byte units, less the one-unit header), into Dst
    cfg("THCON_SEC0_REG0_TileDescriptor", BF16 | 1 << 4 | 1024 << 16 | 1 << 32)
    cfg("THCON_SEC0_REG2_Out_data_format", BF16)
    cfg("THCON_SEC0_REG3_Base_address", 0x1000 - 1)
    cfg("THCON_SEC0_REG2_Unpack_If_Sel", 1)
    cfg("THCON_SEC0_REG2_Tileize_mode", 1)
    cfg("THCON_SEC0_REG2_Shift_amount_cntx0", 4)  # RowStride 4 << 4 = 64 bytes
    cfg("THCON_SEC0_REG2_Unpack_limit_address", 0x1FFFF)
    cfg("UNP0_ADDR_BASE_REG_1_Base", 4 * 16 * 2)  # Dst row 0 (the page's Row -= 4), in bytes of BF16
    cfg("UNP0_ADDR_CTRL_ZW_REG_1_Zstride", 256 * 2)
    run_words(tile, 0, tilize_words())
    faces = [bits[:16, :16], bits[:16, 16:], bits[16:, :16], bits[16:, 16:]]
    for f, face in enumerate(faces):
        np.testing.assert_array_equal(formats.dst16_to_bf16(copro.regs.dst[16 * f : 16 * f + 16]), face)

    # packer 0: Dst16b BF16 (identity) to out_fmt at 0x20000
    cfg("PCK_DEST_RD_CTRL_Read_int8", 1)  # Read_raw: the identity conversion
    cfg("ALU_FORMAT_SPEC_REG2_Dstacc", BF16)
    cfg("THCON_SEC0_REG1_In_data_format", BF16)
    cfg("THCON_SEC0_REG1_Out_data_format", out_fmt)
    cfg("THCON_SEC0_REG1_Disable_zero_compress", 1)
    cfg("THCON_SEC0_REG1_L1_Dest_addr", 0x2000 - 1)
    cfg("THCON_SEC0_REG1_Exp_section_size", 4)  # BFP8: 64 bytes of exponents, then the datums
    cfg("THCON_SEC0_REG9_Pack_0_2_limit_address", 0x1FFFF)
    cfg("PCK_EDGE_OFFSET_SEC0_mask", 0xFFFF)  # edge masking passes every column (0 would zero them)
    cfg("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 32)  # one Dst row of BF16
    cfg("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", 512)  # one face
    copro.adc.value[2, PACKERS, 1, 0] = 15  # 16 datums per PACR
    run_words(tile, 2, untilize_words())

    if out_fmt == BF16:
        got = np.frombuffer(tile.l1[0x20000:0x20800].tobytes(), np.uint16).reshape(32, 32)
        np.testing.assert_array_equal(got, bits)
    elif out_fmt == FP32:
        got = np.frombuffer(tile.l1[0x20000:0x21000].tobytes(), np.float32).reshape(32, 32)
        np.testing.assert_array_equal(got, (bits.astype(np.uint32) << 16).view(np.float32))
    else:
        exps = tile.l1[0x20000:0x20040]  # one shared exponent per 16 datums (a half tile row)
        datums = tile.l1[0x20040:0x20440].astype(np.int64).reshape(64, 16)
        blocks = (bits.astype(np.uint32) << 16).view(np.float32).reshape(64, 16)
        # numpy's side: a block's exponent is its largest; each value is sign * mag / 64 * 2**(exp - 127)
        want_exp = ((bits.reshape(64, 16) >> 7) & 0xFF).max(axis=1)
        np.testing.assert_array_equal(exps, want_exp)
        sign = np.where(datums & 0x80, -1.0, 1.0)
        decoded = sign * (datums & 0x7F) / 64.0 * np.exp2(exps.astype(np.float64)[:, None] - 127)
        step = np.exp2(exps.astype(np.float64)[:, None] - 127) / 64.0  # one unit of the shared scale
        assert np.all(np.abs(decoded - blocks) <= step / 2 + 1e-30)
