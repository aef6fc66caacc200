"""The Tensix instruction tables: shape, encode/decode/disassemble, and the generated C headers."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim.errors import InvalidInstruction
from tensixsim.isa import (
    ARCH_NAMES,
    INLINE_OPCODE_LIMIT,
    UNITS,
    Field,
    InstrSpec,
    IsaTable,
    from_stream_word,
    isa_for,
    to_stream_word,
)
from tensixsim.sdk import gen_ops_header

ALL_SPECS = [(arch, spec) for arch in ARCH_NAMES for spec in isa_for(arch)]


def _field_values(spec: InstrSpec) -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries({f.name: st.integers(0, f.max_value) for f in spec.fields})


# ---- the tables' shape ----------------------------------------------------------------------


def test_blackhole_has_137_instructions() -> None:
    assert len(isa_for("blackhole")) == 137


def test_wormhole_has_128_instructions() -> None:
    assert len(isa_for("wormhole")) == 128


def test_blackhole_adds_nine_instructions_to_wormhole() -> None:
    bh, wh = isa_for("blackhole"), isa_for("wormhole")
    assert set(wh.by_name) < set(bh.by_name)
    assert set(bh.by_name) - set(wh.by_name) == {
        "CFGSHIFTMASK", "MOVDBGB2D", "RESOURCEDECL", "SFPARECIP", "SFPGT", "SFPLE", "SFPMUL24",
        "STREAMWAIT", "STREAMWRCFG",
    }  # fmt: skip


def test_isa_for_accepts_reference_spellings_and_caches() -> None:
    assert isa_for("Wormhole B0") is isa_for("wormhole_b0") is isa_for("wormhole")
    assert isa_for("BLACKHOLE").arch == "blackhole"
    with pytest.raises(ValueError, match="grayskull"):
        isa_for("grayskull")


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_fields_never_overlap_and_stay_in_operand_bits(arch: str) -> None:
    for spec in isa_for(arch):
        used = 0
        for f in spec.fields:
            mask = ((1 << f.width) - 1) << f.lo
            assert mask & ~0xFFFFFF == 0, (spec.name, f.name)
            assert used & mask == 0, (spec.name, f.name)
            used |= mask
        assert used | spec.unassigned_mask == 0xFFFFFF


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_names_and_opcodes_are_unique_and_lookups_agree(arch: str) -> None:
    table = isa_for(arch)
    assert len({s.name for s in table}) == len({s.opcode for s in table}) == len(table)
    for spec in table:
        assert table.by_name[spec.name] is table.by_opcode[spec.opcode] is spec
    assert [s.opcode for s in table] == sorted(s.opcode for s in table)


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_every_unit_is_one_of_our_modules_and_none_is_misc(arch: str) -> None:
    units = {spec.unit for spec in isa_for(arch)}
    assert units <= set(UNITS)
    assert "misc" not in units


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("MOP", "frontend"), ("MOP_CFG", "frontend"), ("REPLAY", "frontend"), ("NOP", "frontend"),
        ("ATGETM", "sync"), ("SEMWAIT", "sync"), ("STALLWAIT", "sync"), ("STREAMWAIT", "sync"),
        ("SETDMAREG", "thcon"), ("LOADIND", "thcon"), ("ATCAS", "thcon"), ("DMANOP", "thcon"),
        ("STOREREG", "thcon"), ("SETC16", "config"), ("RDCFG", "config"),
        ("CFGSHIFTMASK", "config"), ("STREAMWRCFG", "config"), ("UNPACR", "unpack"),
        ("SETADCXY", "unpack"), ("ADDRCRZW", "unpack"), ("MVMUL", "matrix"),
        ("SETDVALID", "matrix"), ("CLEARDVALID", "matrix"), ("SETRWC", "matrix"),
        ("PACR", "pack"), ("SFPLOADMACRO", "sfpu"), ("XMOV", "xmov"),
    ],
)  # fmt: skip
def test_instruction_runs_on_the_documented_unit(name: str, unit: str) -> None:
    assert isa_for("blackhole").by_name[name].unit == unit


def test_wormhole_and_blackhole_differ_where_the_references_do() -> None:
    # ckernel_ops.h of each arch: MVMUL's addr_mode moved from bit 15 (WH) to bit 14 (BH).
    assert isa_for("wormhole").by_name["MVMUL"].fields[2] == Field("addr_mode", 15, 4)
    assert isa_for("blackhole").by_name["MVMUL"].fields[2] == Field("addr_mode", 14, 5)


# ---- validation at construction -------------------------------------------------------------


def test_overlapping_fields_are_rejected() -> None:
    with pytest.raises(ValueError, match="overlaps"):
        InstrSpec("BAD", 0x26, (Field("a", 8, 4), Field("b", 4, 6)), "matrix")


def test_field_outside_operand_bits_is_rejected() -> None:
    with pytest.raises(ValueError, match="outside"):
        InstrSpec("BAD", 0x26, (Field("a", 20, 5),), "matrix")


def test_fields_out_of_documented_order_are_rejected() -> None:
    with pytest.raises(ValueError, match="highest bits first"):
        InstrSpec("BAD", 0x26, (Field("a", 0, 4), Field("b", 4, 4)), "matrix")


def test_unknown_unit_is_rejected() -> None:
    with pytest.raises(ValueError, match="unit"):
        InstrSpec("BAD", 0x26, (), "fpu")


def test_duplicate_names_or_opcodes_are_rejected() -> None:
    a = InstrSpec("A", 0x10, (), "matrix")
    with pytest.raises(ValueError, match="twice"):
        IsaTable("test", [a, InstrSpec("A", 0x11, (), "matrix")])
    with pytest.raises(ValueError, match="share opcode"):
        IsaTable("test", [a, InstrSpec("B", 0x10, (), "matrix")])


# ---- encode / decode / disassemble ----------------------------------------------------------


def _check_round_trip(arch: str, spec: InstrSpec, values: dict[str, int]) -> None:
    table = isa_for(arch)
    where = f"{arch} {spec.name} {values}"
    word = table.encode(spec.name, **values)
    assert word >> 24 == spec.opcode, where
    decoded = table.decode(word)
    assert decoded.spec is spec, where
    assert decoded.word == word, where
    assert dict(decoded.fields) == values, where
    tokens = table.disasm(word).split()
    assert tokens[0] == spec.name, where
    assert [tok.split("=")[0] for tok in tokens[1:]] == list(spec.field_names), where


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_round_trip_through_encode_and_decode(data: st.DataObject) -> None:
    # One example draws values for every instruction of both arches: each is exercised on every
    # run, for a fraction of the cost of a separate hypothesis test per instruction.
    for arch, spec in ALL_SPECS:
        values = data.draw(_field_values(spec))
        _check_round_trip(arch, spec, values)


@pytest.mark.parametrize(("arch", "spec"), ALL_SPECS, ids=[f"{a}-{s.name}" for a, s in ALL_SPECS])
def test_each_field_alone_at_its_maximum_round_trips(arch: str, spec: InstrSpec) -> None:
    # A field at all-ones with its neighbours at zero shows any bleed between fields.
    zeros = dict.fromkeys(spec.field_names, 0)
    _check_round_trip(arch, spec, zeros)
    _check_round_trip(arch, spec, {f.name: f.max_value for f in spec.fields})
    for f in spec.fields:
        _check_round_trip(arch, spec, {**zeros, f.name: f.max_value})


@settings(max_examples=300, deadline=None)
@given(arch=st.sampled_from(ARCH_NAMES), data=st.data())
def test_any_word_with_a_known_opcode_decodes_and_reencodes(arch: str, data: st.DataObject):
    table = isa_for(arch)
    spec = data.draw(st.sampled_from(list(table)))
    word = spec.opcode << 24 | data.draw(st.integers(0, 0xFFFFFF))
    instr = table.decode(word)
    # Bits no field covers survive in .word but not in the fields.
    assert table.encode(spec.name, **instr.fields) == word & ~spec.unassigned_mask


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_unknown_opcode_raises_invalid_instruction_with_the_word(arch: str) -> None:
    table = isa_for(arch)
    unknown = [op for op in range(256) if op not in table.by_opcode]
    assert unknown
    for op in unknown:
        word = op << 24 | 0x123456
        with pytest.raises(InvalidInstruction) as info:
            table.decode(word)
        assert info.value.value == word
        with pytest.raises(InvalidInstruction):
            table.disasm(word)


def test_word_wider_than_32_bits_is_invalid() -> None:
    with pytest.raises(InvalidInstruction):
        isa_for("blackhole").decode(1 << 32)


def test_encode_rejects_unknown_missing_and_out_of_range_fields() -> None:
    isa = isa_for("blackhole")
    with pytest.raises(ValueError, match="unknown instruction"):
        isa.encode("MVMULX")
    with pytest.raises(ValueError, match="unknown field"):
        isa.encode("SEMPOST", sem_sel=1, bogus=0)
    with pytest.raises(ValueError, match="missing field sem_sel"):
        isa.encode("SEMPOST")
    with pytest.raises(ValueError, match="does not fit"):
        isa.encode("SEMINIT", max_value=16, init_value=0, sem_sel=1)
    with pytest.raises(ValueError, match="does not fit"):
        isa.encode("SEMINIT", max_value=-1, init_value=0, sem_sel=1)
    with pytest.raises(TypeError):
        isa.encode("SEMPOST", sem_sel="1")


def test_decoded_instruction_is_immutable() -> None:
    instr = isa_for("blackhole").decode(0x26000000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        instr.word = 0  # type: ignore[misc]
    assert isinstance(instr.fields, Mapping)
    with pytest.raises(TypeError):
        instr.fields["dst"] = 1  # type: ignore[index]


def test_disasm_lists_fields_highest_bits_first() -> None:
    # 0x26000000 is MVMUL with every field zero (TT_OP_MVMUL(0,0,0,0)).
    assert isa_for("blackhole").disasm(0x26000000) == ("MVMUL clear_dvalid=0 instr_mod19=0 addr_mode=0 dst=0")


def test_disasm_prints_wide_fields_in_hex_and_narrow_ones_in_decimal() -> None:
    isa = isa_for("blackhole")
    word = isa.encode("SETC16", setc16_reg=38, setc16_value=0x2820)
    assert isa.disasm(word) == "SETC16 setc16_reg=0x26 setc16_value=0x2820"
    word = isa.encode("SEMINIT", max_value=15, init_value=12, sem_sel=4)
    assert isa.disasm(word) == "SEMINIT max_value=15 init_value=12 sem_sel=4"


def test_disasm_shows_set_bits_outside_every_field() -> None:
    isa = isa_for("blackhole")
    word = isa.encode("SEMPOST", sem_sel=2) | 0b11  # SEMPOST's bits 1..0 belong to no field
    assert isa.disasm(word) == "SEMPOST sem_sel=2 ; unassigned bits 0x000003"


# ---- known vectors --------------------------------------------------------------------------

# From real binaries: the SFPI toolchain's objdump of tt-metal's add1_sfpu kernels built for
# Blackhole (boopdotpng/tenstorrent-docs, disasms/add1_sfpu_single_file/compute_trisc*.objdump.txt).
# Each word is as stored in the TRISC's instruction stream (rotated left by 2); the fields are the
# operands that objdump printed, which it lists highest bits first as we do (SFPADD excepted).
BLACKHOLE_OBJDUMP_VECTORS = [
    (0x80000002, "ATGETM", {"mutex_index": 0}),  # ttatgetm 0
    (0x84000002, "ATRELM", {"mutex_index": 0}),  # ttatrelm 0
    (0x80000001, "DMANOP", {}),  # ttdmanop
    (0x06000000, "MOP", {"mop_type": 1, "loop_count": 0, "zmask_lo16_or_loop_count": 0}),
    (0x08000000, "NOP", {}),  # ttnop
    (0x94000202, "SEMGET", {"sem_sel": 32}),  # ttsemget 32
    (0x8C800022, "SEMINIT", {"max_value": 2, "init_value": 0, "sem_sel": 2}),  # ttseminit 2,0,2
    (0x90000022, "SEMPOST", {"sem_sel": 2}),  # ttsempost 2
    (0x9A84002A, "SEMWAIT", {"stall_res": 322, "sem_sel": 2, "wait_sem_cond": 2}),
    (0x788FF001, "SETADCXX", {"cnt_set_mask": 1, "x_end2": 255, "x_start": 0}),
    (0x4580002D, "SETADCXY",
     {"cnt_set_mask": 3, "ch1_y": 0, "ch1_x": 0, "ch0_y": 0, "ch0_x": 0, "bit_mask": 11}),
    (0x5180003D, "SETADCZW",
     {"cnt_set_mask": 3, "ch1_w": 0, "ch1_z": 0, "ch0_w": 0, "ch0_z": 0, "bit_mask": 15}),
    (0xC898A082, "SETC16", {"setc16_reg": 38, "setc16_value": 10272}),  # ttsetc16 38,10272
    (0xDC00003C, "SETRWC",
     {"clear_ab_vld": 0, "rwc_cr": 0, "rwc_d": 0, "rwc_b": 0, "rwc_a": 0, "bit_mask": 15}),
    (0x88042042, "STALLWAIT", {"stall_res": 2, "wait_res": 2064}),  # ttstallwait 2,2064
    (0xC0300116, "WRCFG", {"gpr_address": 12, "wr128b": 0, "cfg_reg": 69}),  # ttwrcfg 12,0,69
    (0x4400001C, "ZEROSRC", {"zero_val": 0, "write_mode": 0, "bank_mask": 1, "src_mask": 3}),
    # sfpadd L0,L10,L0,L1,0 (SFPI syntax: dest, a, b, c, mod)
    (0x14280402, "SFPADD",
     {"lreg_src_a": 10, "lreg_src_b": 0, "lreg_src_c": 1, "lreg_dest": 0, "instr_mod1": 0}),
    (0x3C000002, "SFPNOP", {}),  # sfpnop
]  # fmt: skip


@pytest.mark.parametrize(("stream_word", "name", "fields"), BLACKHOLE_OBJDUMP_VECTORS)
def test_blackhole_words_from_real_kernels(stream_word: int, name: str, fields: dict) -> None:
    isa = isa_for("blackhole")
    instr = isa.decode(from_stream_word(stream_word))
    assert instr.name == name
    assert dict(instr.fields) == fields
    assert to_stream_word(isa.encode(name, **fields)) == stream_word


# From the documentation: tt-isa-documentation WormholeB0 encoding diagrams (Diagrams/Src/
# Bits32.lua), built bit by bit from the documented positions, then decoded with our names.
WORMHOLE_DOC_VECTORS = [
    # MVMUL: FlipSrcB=1 @23, BroadcastSrcBRow=1 @19, AddrMod=2 @15..16, DstRow=0x18 @0..9.
    (0x26 << 24 | 1 << 23 | 1 << 19 | 2 << 15 | 0x18, "MVMUL",
     {"clear_dvalid": 2, "instr_mod19": 1, "addr_mode": 2, "dst": 0x18}),
    # SETC16: CfgIndex=0x25 @16..23, NewValue=0x1234 @0..15.
    (0xB2 << 24 | 0x25 << 16 | 0x1234, "SETC16", {"setc16_reg": 0x25, "setc16_value": 0x1234}),
    # SETDMAREG immediate: NewValue=0xABCD @8..23, bit 7 = 0, ResultHalfReg=5 @0..6; the yaml
    # splits NewValue into payload_sig_sel (14 bits) and payload_sig_sel_size (2 bits).
    (0x45 << 24 | 0xABCD << 8 | 5, "SETDMAREG",
     {"payload_sig_sel_size": 2, "payload_sig_sel": 0x2BCD, "set_signals_mode": 0,
      "reg_index_16b": 5}),
    # REPLAY: Index=3 @14..18, Count=16 @4..9, Exec=1 @1, Load=1 @0.
    (0x04 << 24 | 3 << 14 | 16 << 4 | 1 << 1 | 1, "REPLAY",
     {"start_idx": 3, "len": 16, "execute_while_loading": 1, "load_mode": 1}),
    # SEMINIT: NewMax=4 @20..23, NewValue=1 @16..19, SemaphoreMask=0x80 @2..9.
    (0xA3 << 24 | 4 << 20 | 1 << 16 | 0x80 << 2, "SEMINIT",
     {"max_value": 4, "init_value": 1, "sem_sel": 0x80}),
]  # fmt: skip


@pytest.mark.parametrize(("word", "name", "fields"), WORMHOLE_DOC_VECTORS)
def test_wormhole_words_from_the_documentation(word: int, name: str, fields: dict) -> None:
    isa = isa_for("wormhole")
    instr = isa.decode(word)
    assert instr.name == name
    assert dict(instr.fields) == fields
    assert isa.encode(name, **fields) == word


def test_mvmul_addr_mode_position_differs_between_arches() -> None:
    # tt-llk ckernel_ops.h: TT_OP_MVMUL shifts addr_mode by 14 on Blackhole, 15 on Wormhole.
    fields = {"clear_dvalid": 0, "instr_mod19": 0, "addr_mode": 1, "dst": 0}
    assert isa_for("blackhole").encode("MVMUL", **fields) == 0x26004000
    assert isa_for("wormhole").encode("MVMUL", **fields) == 0x26008000


@given(word=st.integers(0, 0xFFFFFFFF))
def test_stream_rotation_is_inverted_by_the_core(word: int) -> None:
    assert from_stream_word(to_stream_word(word)) == word
    # An inline word must not look like a 32-bit RISC-V instruction (low bits 0b11).
    assert (to_stream_word(word) & 0b11 == 0b11) == (word >> 24 >= INLINE_OPCODE_LIMIT)


# ---- the generated C headers ----------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_committed_header_matches_render(arch: str) -> None:
    path = gen_ops_header.header_path(arch)
    assert path.read_text() == gen_ops_header.render(isa_for(arch)), (
        "stale header: run python -m tensixsim.sdk.gen_ops_header"
    )


def test_committed_dispatch_header_matches_render() -> None:
    assert gen_ops_header.DISPATCH_PATH.read_text() == gen_ops_header.render_dispatch(), (
        "stale header: run python -m tensixsim.sdk.gen_ops_header"
    )
    assert gen_ops_header.main(["--check"]) == 0


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_header_defines_every_macro_form(arch: str) -> None:
    text = gen_ops_header.header_path(arch).read_text()
    defined = set(re.findall(r"^#define (\w+)", text, re.MULTILINE))
    for spec in isa_for(arch):
        assert f"TT_OP_{spec.name}" in defined
        assert f"TT_{spec.name}" in defined
        assert (f"TTI_{spec.name}" in defined) == (spec.opcode < INLINE_OPCODE_LIMIT)
    assert "TT_PUSH_ADDR" in defined


def test_header_has_no_inline_form_for_opcodes_from_0xc0() -> None:
    table = IsaTable("blackhole", [InstrSpec("HIGHOP", 0xC1, (Field("x", 0, 4),), "config")])
    text = gen_ops_header.render(table)
    assert "#define TT_OP_HIGHOP(x)" in text
    assert "#define TT_HIGHOP(x)" in text
    assert "#define TTI_HIGHOP" not in text


def _toolchain() -> tuple[str, str] | None:
    gcc = shutil.which("riscv64-unknown-elf-gcc")
    objdump = shutil.which("riscv64-unknown-elf-objdump")
    return (gcc, objdump) if gcc and objdump else None


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_header_inline_macros_compile_to_rotated_words(arch: str, tmp_path: Path) -> None:
    tools = _toolchain()
    assert tools is not None, "riscv64-unknown-elf toolchain missing: `make test` installs it"
    gcc, objdump = tools
    isa = isa_for(arch)
    calls = [
        ("TTI_SEMWAIT(322, 2, 2)", isa.encode("SEMWAIT", stall_res=322, sem_sel=2, wait_sem_cond=2)),
        ("TTI_SETC16(38, 10272)", isa.encode("SETC16", setc16_reg=38, setc16_value=10272)),
        ("TTI_NOP", isa.encode("NOP")),
        # -1 is masked to the 12-bit immediate rather than spilling into the opcode.
        ("TTI_SFPIADD(-1, 3, 2, 5)",
         isa.encode("SFPIADD", imm12_math=0xFFF, lreg_c=3, lreg_dest=2, instr_mod1=5)),
    ]  # fmt: skip
    source = tmp_path / "t.c"
    body = "".join(f"    {call};\n" for call, _ in calls)
    source.write_text(
        f'#include "tensix_ops_{arch}.h"\nvoid f(uint32_t n) {{\n{body}    TT_SEMPOST(n);\n}}\n'
    )
    obj = tmp_path / "t.o"
    subprocess.run(
        [gcc, "-march=rv32im_zicsr", "-mabi=ilp32", "-O2", "-ffreestanding", "-Wall", "-Werror",
         "-I", str(gen_ops_header.INCLUDE_DIR), "-c", str(source), "-o", str(obj)],
        check=True, capture_output=True,
    )  # fmt: skip
    listing = subprocess.run([objdump, "-d", str(obj)], check=True, capture_output=True, text=True).stdout
    words = [int(w, 16) for w in re.findall(r"\.word\s+0x([0-9a-f]+)", listing)]
    assert words == [to_stream_word(word) for _, word in calls]
    assert "0xffe40" in listing  # TT_SEMPOST stores to TT_PUSH_ADDR
