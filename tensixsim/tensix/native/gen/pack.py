"""The packers' section of ``constants.h``."""

from __future__ import annotations

import dataclasses
from types import ModuleType

from tensixsim import timing
from tensixsim.tensix import adc
from tensixsim.tensix.config import fields_blackhole as cfg
from tensixsim.tensix.native.gen.common import (
    ARCH,
    LAYOUT_MODULES,
    _Defines,
    _field,
    c_name,
)

_PACK_ZERO_CHECKS = (
    "Add_l1_dest_addr_offset", "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size",
    "Auto_set_last_pacr_intf_sel", "pack_start_intf_pos", "pack_dis_y_pos_start_offset",
    "Source_interface_selection", "Downsample_rate", "All_pack_disable_zero_compress_ovrd",
)  # pack.unit._ZERO_CHECKS (checked equal in _pack_constants)  # fmt: skip
# The Config fields both chips' PACR read alike (pack_common.h), first in each chip's PKF_ table.
_COMMON_PACK_FIELDS = (
    "PCK_DEST_RD_CTRL_Read_32b_data", "PCK_DEST_RD_CTRL_Read_int8", "PCK_DEST_RD_CTRL_Read_unsigned",
    "PCK_DEST_RD_CTRL_Round_10b_mant", "ALU_FORMAT_SPEC_REG_Dstacc_override",
    "ALU_FORMAT_SPEC_REG_Dstacc_val", "ALU_FORMAT_SPEC_REG2_Dstacc", "ALU_ROUNDING_MODE_Packer_srnd_en",
    "INT_DESCALE_Enable", "INT_DESCALE_Mode", "INT_DESCALE_VALUES_SEC0_Value", "STACC_RELU_ApplyRelu",
    "STACC_RELU_ReluThreshold", "PCK_EDGE_MODE_mode", "PCK_EDGE_TILE_FACE_SET_SELECT_enable",
    "PCK_EDGE_TILE_ROW_SET_SELECT_select",
)  # fmt: skip
# pack.c: the Config fields PACR reads (PKF_<NAME>_WORD / _SHIFT / _MASK; Config fields only, read in
# the pipe's CFG_STATE_ID state, as pack.convert._field does).
PACK_FIELDS = (
    *_COMMON_PACK_FIELDS, "PCK0_ADDR_BASE_REG_0_Base", "PCK0_ADDR_CTRL_XY_REG_0_Xstride",
    "PCK0_ADDR_CTRL_XY_REG_0_Ystride", "PCK0_ADDR_CTRL_ZW_REG_0_Zstride", "PCK0_ADDR_CTRL_ZW_REG_0_Wstride",
    "DEST_TARGET_REG_CFG_PACK_SEC0_Offset", "PCK0_ADDR_BASE_REG_1_Base", "PCK0_ADDR_CTRL_XY_REG_1_Ystride",
    "PCK0_ADDR_CTRL_ZW_REG_1_Zstride", "PCK0_ADDR_CTRL_ZW_REG_1_Wstride",
    "THCON_SEC0_REG9_Pack_0_2_limit_address", "THCON_SEC0_REG9_Pack_0_2_fifo_size",
    *(f"THCON_SEC0_REG1_{name}" for name in (
        *_PACK_ZERO_CHECKS, "Disable_zero_compress", "Downsample_mask", "Pack_L1_Acc", "Exp_threshold",
        "Exp_threshold_en", "L1_Dest_addr", "Sub_l1_tile_header_size", "In_data_format", "Out_data_format",
        "Exp_section_size")),
)  # fmt: skip


def _spec(table: dict[str, tuple[int, int, int]], name: str) -> str:
    """``{word, shift, mask in place}`` of a one-word field."""
    word, shift, width = table[name]
    if width > 32:
        raise ValueError(f"{name} spans {width} bits; the handlers read fields of one word only")
    return f"{{{word}u, {shift}u, 0x{((1 << width) - 1) << shift:X}u}}"


def _pack_constants(out: _Defines, arch: str = ARCH) -> None:
    """The section of ``constants.h`` pack.c and pack_wormhole.c read: the pack package's tables, the
    formats it names, the chip's packer timing (timing.PACK, timing.PACK_WORMHOLE), the Config fields
    it reads and the packer ADDR_MOD slots, edge-mask row sets and masks, over ``arch``'s configuration
    layout, and how many separate L1 writes an instruction notifies (coprocessor.L1_WRITTEN_RANGES: a
    PACR's). Wormhole's adds its packers' own fields (pack/wormhole.py's PACKER_CONFIG, PACK_LIMITS and
    Dst offsets) and PackerMask table."""
    from tensixsim.tensix import coprocessor
    from tensixsim.tensix.pack import stream as pack_stream
    from tensixsim.tensix.pack import unit as pack_unit

    layout = LAYOUT_MODULES[arch]
    if arch == ARCH and _PACK_ZERO_CHECKS != pack_unit._ZERO_CHECKS:
        raise ValueError("pack.unit._ZERO_CHECKS changed: update gen.pack._PACK_ZERO_CHECKS")
    name = "timing.PACK" if arch == ARCH else f"timing.PACK_{arch.upper()}"
    out.text(f"/* ---- pack.c: the pack package, formats.py, {name} (PACK_*, PKF_*) ---- */")
    pack_timing = timing.PACK if arch == ARCH else getattr(timing, f"PACK_{arch.upper()}")
    for f in dataclasses.fields(pack_timing):
        out.add(c_name("PACK_TIMING", f.name), str(int(getattr(pack_timing, f.name))))
    _pack_formats(out)
    if arch == ARCH:
        out.add("PACK_STRIDED_INTERFACE_DATUMS", f"{pack_unit.STRIDED_INTERFACE_DATUMS}u")
        out.add("PACK_STRIDED_MASKS", f"0x{sum(1 << m for m in pack_unit.STRIDED_MASKS):04X}u")
        # read_intf_sel -> its interfaces as a bit set (0: not evidenced, Unimplemented)
        interfaces = [sum(1 << k for k in pack_unit.INTERFACE_MASKS.get(m, ())) for m in range(16)]
        out.text("#define PACK_INTERFACES {" + ", ".join(f"0x{i:X}u" for i in interfaces) + "}")
        out.names.add("PACK_INTERFACES")
    for index, field in enumerate(("DATA_ADDRESS", "EXPONENT_ADDRESS", "NEEDS_NEW_ADDRESS", "PENDING",
                                   "EXPONENT_PENDING", "DRAINED")):  # fmt: skip
        if getattr(pack_stream, f"STREAM_{field}") != index:
            raise ValueError(f"pack.stream.STREAM_{field} moved")
        out.add(c_name("PACK_STREAM", field), f"{index}u")
    out.add("PACK_STREAM_WORDS", f"{pack_stream.STREAM_WORDS}u")
    out.add("COPRO_L1_WRITTEN_RANGES", f"{coprocessor.L1_WRITTEN_RANGES}u")  # a PACR's separate writes
    out.add("PACK_STREAM_BUFFER_BYTES", f"{pack_stream.STREAM_BUFFER_BYTES}u")
    if arch == ARCH:
        for field in PACK_FIELDS:
            _field(out, "PKF", "WORD", field, cfg.CONFIG_FIELDS[field])
    else:
        _packers_constants(out, layout)
    _pack_layout_tables(out, layout)


def _pack_formats(out: _Defines) -> None:
    """The formats pack.c names; pack.convert's and pack.stream's format sets (named, late only, block
    floats, their a styles, those L1 accumulates in) as bit sets over the codes; the bytes or bits of
    an output datum by code; the block-float block."""
    from tensixsim.tensix import formats
    from tensixsim.tensix.pack import convert as pack_convert
    from tensixsim.tensix.pack import stream as pack_stream

    for name in ("FP32", "TF32", "BF16", "FP16", "INT32", "INT16", "INT8", "FP8", "BFP8", "BFP8A"):
        out.add(c_name("PACK_FMT", name), f"{getattr(formats, name)}u")
    for name, codes in (("NAMED", formats.FORMAT_NAMES), ("LATE_ONLY", pack_convert.LATE_ONLY),
                        ("BFP", pack_convert.BFP_BITS), ("BFP_A", pack_convert.BFP_A),
                        ("ACCUMULATE", pack_stream.ACCUMULATE)):  # fmt: skip
        out.add(c_name("PACK_FORMAT", name), f"0x{sum(1 << code for code in codes):04X}u")
    # Out_data_format -> the bytes of an L1 datum (pack.convert.OUT_BYTES) / the bits of a block-float one
    for name, table in (("OUT_BYTES", pack_convert.OUT_BYTES), ("BFP_BITS", pack_convert.BFP_BITS)):
        out.text(f"#define PACK_{name} {{" + ", ".join(f"{table.get(code, 0)}u" for code in range(16)) + "}")
        out.names.add(f"PACK_{name}")
    out.add("PACK_BFP_BLOCK", f"{formats.BFP_BLOCK}u")
    out.add("PACK_L1_ADDRESS_MASK", f"0x{pack_stream.L1_ADDRESS_MASK:X}u")


# pack_wormhole.c: the Config fields all packers share (PKF_<NAME>_WORD / _SHIFT / _MASK), and each
# packer's own (pack/wormhole.py: ``Packers[i].Config``'s prefix, its FIFO limits, its Dst offset),
# PPF_<NAME> indexing a row of PACK_PACKER_FIELD_SPECS.
WORMHOLE_PACK_FIELDS = (
    *_COMMON_PACK_FIELDS,
    "PCK0_ADDR_BASE_REG_0_Base", "PCK0_ADDR_CTRL_XY_REG_0_Xstride", "PCK0_ADDR_CTRL_XY_REG_0_Ystride",
    "PCK0_ADDR_CTRL_ZW_REG_0_Zstride", "PCK0_ADDR_CTRL_ZW_REG_0_Wstride", "PCK0_ADDR_BASE_REG_1_Base",
    "PCK0_ADDR_CTRL_XY_REG_1_Ystride", "PCK0_ADDR_CTRL_ZW_REG_1_Zstride", "PCK0_ADDR_CTRL_ZW_REG_1_Wstride",
    "THCON_SEC0_REG1_All_pack_disable_zero_compress", "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd",
)  # fmt: skip
WORMHOLE_PACKER_FIELDS = (
    "Disable_zero_compress", "Source_interface_selection", "Add_l1_dest_addr_offset", "In_data_format",
    "Out_data_format", "Pack_L1_Acc", "Exp_threshold_en", "Exp_threshold", "Addr_cnt_context",
    "Downsample_mask", "L1_Dest_addr", "Sub_l1_tile_header_size", "Exp_section_size",
)  # fmt: skip


def _packers_constants(out: _Defines, layout: ModuleType) -> None:
    """Wormhole's packers: PACK_PACKERS, PACK_PACKER_MASKS (PackerMask -> the packers it names, as a bit
    set; 0: undefined), the shared fields and PACK_PACKER_FIELD_SPECS[packer][PPF_COUNT]: each packer's
    own Config fields, then its undescribed ones (PPF_UNDESCRIBED..), its FIFO limit and size and its
    Dst offset."""
    from tensixsim.tensix.pack import stream as pack_stream
    from tensixsim.tensix.pack import wormhole as pack_wormhole

    packers = pack_stream.PACKER_COUNT["wormhole"]
    if len(pack_wormhole.PACKER_CONFIG) != packers or len(pack_wormhole.PACK_LIMITS) != packers:
        raise ValueError("pack.wormhole's per-packer tables and pack.stream.PACKER_COUNT disagree")
    out.add("PACK_PACKERS", f"{packers}u")
    masks = [sum(1 << i for i in pack_wormhole.PACKER_MASKS.get(m, ())) for m in range(16)]
    if 0 in (masks[m] for m in pack_wormhole.PACKER_MASKS):
        raise ValueError("a PackerMask names no packer: 0 cannot mean undefined")
    out.text("#define PACK_PACKER_MASKS {" + ", ".join(f"0x{m:X}u" for m in masks) + "}")
    out.names.add("PACK_PACKER_MASKS")
    for field in WORMHOLE_PACK_FIELDS:
        _field(out, "PKF", "WORD", field, layout.CONFIG_FIELDS[field])
    names = [*WORMHOLE_PACKER_FIELDS, *pack_wormhole.UNDESCRIBED]
    for i, field in enumerate(WORMHOLE_PACKER_FIELDS):
        out.add(c_name("PPF", field), f"{i}u")
    out.add("PPF_UNDESCRIBED", f"{len(WORMHOLE_PACKER_FIELDS)}u")
    out.add("PPF_UNDESCRIBED_COUNT", f"{len(pack_wormhole.UNDESCRIBED)}u")
    out.add("PPF_LIMIT_ADDRESS", f"{len(names)}u")
    out.add("PPF_FIFO_SIZE", f"{len(names) + 1}u")
    out.add("PPF_DST_OFFSET", f"{len(names) + 2}u")
    out.add("PPF_COUNT", f"{len(names) + 3}u")
    rows = []
    for i, prefix in enumerate(pack_wormhole.PACKER_CONFIG):
        fields = [prefix + n for n in names]
        fields += [pack_wormhole.PACK_LIMITS[i] + "limit_address", pack_wormhole.PACK_LIMITS[i] + "fifo_size"]
        fields.append(f"DEST_TARGET_REG_CFG_PACK_SEC{i}_Offset")
        rows.append("    {" + ", ".join(_spec(layout.CONFIG_FIELDS, f) for f in fields) + "}")
    out.names.add("PACK_PACKER_FIELD_SPECS")
    out.text("#define PACK_PACKER_FIELD_SPECS { \\", *(row + ", \\" for row in rows[:-1]), rows[-1] + "}")


def _pack_layout_tables(out: _Defines, layout: ModuleType) -> None:
    """The packer ADDR_MOD slots (PAM_*, PACK_ADDR_MOD_SPECS), edge-mask row sets and masks, over
    ``layout``."""
    mods = [f.name for f in dataclasses.fields(adc.PackAddrMod)]
    # adc.pack_addr_mod's field names: ysrc_cr -> YsrcCR, zdst_incr -> ZdstIncr
    camel = {m: "".join(p.upper() if p == "cr" else p.capitalize() for p in m.split("_")) for m in mods}
    for i, name in enumerate(mods):
        out.add(c_name("PAM", name), f"{i}u")
    out.add("PACK_ADDR_MOD_SLOTS", f"{adc.PACK_ADDR_MODS}u")
    out.add("PACK_ADDR_MOD_FIELD_COUNT", f"{len(mods)}u")
    slots = range(adc.PACK_ADDR_MODS)
    specs = [[_spec(layout.THREAD_FIELDS, f"ADDR_MOD_PACK_SEC{s}_{camel[m]}") for m in mods] for s in slots]
    rows = ["    {" + ", ".join(row) + "}" for row in specs]
    out.names.add("PACK_ADDR_MOD_SPECS")
    out.text("#define PACK_ADDR_MOD_SPECS { \\", *(row + ", \\" for row in rows[:-1]), rows[-1] + "}")
    rows = [
        "    {"
        + ", ".join(
            _spec(layout.CONFIG_FIELDS, f"TILE_ROW_SET_MAPPING_{b}_row_set_mapping_{y}") for y in range(16)
        )
        + "}"
        for b in range(4)
    ]
    out.names.add("PACK_ROW_SET_MAPPING_SPECS")
    out.text("#define PACK_ROW_SET_MAPPING_SPECS { \\", *(row + ", \\" for row in rows[:-1]), rows[-1] + "}")
    masks = ", ".join(_spec(layout.CONFIG_FIELDS, f"PCK_EDGE_OFFSET_SEC{c}_mask") for c in range(4))
    out.names.add("PACK_EDGE_MASK_SPECS")
    out.text(f"#define PACK_EDGE_MASK_SPECS {{{masks}}}", "")
