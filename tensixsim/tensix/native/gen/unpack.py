"""The unpackers' section of ``constants.h``."""

from __future__ import annotations

from collections.abc import Callable

from tensixsim import timing
from tensixsim.tensix import regs
from tensixsim.tensix.native.gen.common import (
    ARCH,
    LAYOUT_MODULES,
    _Defines,
    c_name,
)

# ------------------------------------------------------------------------------ unpackers
# unpack.c's constants (UNPACK_*, UF_*, UTF_*, UCF_*): the unpack package's timing, formats, readings
# and layout facts, and the configuration fields UNPACR reads, per unpacker (UTF_: ThreadConfig; UCF_:
# per context, _unpack_context_fields). ``{u}`` is the unpacker; a field only unpacker 0 has, or one
# the chip lacks, is given as an empty spec (it reads 0; unpack.c never reads it where it is absent).
# THCON_SEC<u>_REG0's 128-bit tile descriptor is its four words, DESC0..DESC3.
UNPACK_FIELDS = (
    "THCON_SEC{u}_REG2_Out_data_format", "THCON_SEC{u}_REG2_Throttle_mode", "THCON_SEC{u}_REG2_Context_count",
    "THCON_SEC{u}_REG2_Haloize_mode", "THCON_SEC{u}_REG2_Tileize_mode",
    "THCON_SEC{u}_REG2_Unpack_Src_Reg_Set_Upd", "THCON_SEC{u}_REG2_Unpack_If_Sel",
    "THCON_SEC{u}_REG2_Upsample_rate", "THCON_SEC{u}_REG2_Shift_amount_cntx0",
    "THCON_SEC{u}_REG2_Shift_amount_cntx1", "THCON_SEC{u}_REG2_Shift_amount_cntx2",
    "THCON_SEC{u}_REG2_Context_count_non_log2_en", "THCON_SEC{u}_REG2_Unpack_limit_address",
    "THCON_SEC{u}_REG2_Unpack_fifo_size",
    "UNP{u}_ADDR_BASE_REG_1_Base", "UNP{u}_ADDR_CTRL_XY_REG_1_Ystride", "UNP{u}_ADDR_CTRL_ZW_REG_1_Zstride",
    "UNP{u}_ADDR_CTRL_ZW_REG_1_Wstride", "ALU_FORMAT_SPEC_REG0_Src{ab}Unsigned",
    "THCON_SEC{u}_REG2_Ovrd_data_format", "THCON_SEC{u}_REG2_Upsample_and_interleave",
    "THCON_SEC{u}_REG2_Force_shared_exp", "UNP{u}_FORCED_SHARED_EXP_shared_exp",
    "UNP{u}_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr",
)  # fmt: skip
UNPACK_THREAD_FIELDS = (
    "SRC{ab}_SET_Base",
    "SRCA_SET_SetOvrdWithAddr",
    "UNPACK_MISC_CFG_CfgContextOffset_{u}",
)


def _unpack_context_fields() -> dict[str, Callable[[int], str]]:
    """MultiContextMode's per-context fields (UCF_*): for each, the field unpack/unit.py reads for
    context ``c`` (``{u}`` the unpacker). Fields with four contexts are read at ``c & 3``; the base and
    offset of context 0 are the single-context mode's own fields, so entry 0 serves both modes."""
    from tensixsim.tensix.unpack import unit as unpack_unit

    return {
        "DISABLE_ZERO_COMPRESS": lambda c: f"THCON_SEC{{u}}_REG2_Disable_zero_compress_cntx{c}",
        "UNPACK_IF_SEL": lambda c: f"THCON_SEC{{u}}_REG2_Unpack_if_sel_cntx{c}",
        "IN_DATA_FORMAT": lambda c: f"THCON_SEC{{u}}_REG7_Unpack_data_format_cntx{c}",
        "OUT_DATA_FORMAT": lambda c: f"THCON_SEC{{u}}_REG7_Unpack_out_data_format_cntx{c}",
        "BASE_ADDRESS": lambda c: "THCON_SEC{u}_" + unpack_unit._base_field(c),
        "OFFSET_ADDRESS": lambda c: "THCON_SEC{u}_" + unpack_unit._offset_field(c & 3),
        "TILE_X_DIM": lambda c: f"THCON_SEC{{u}}_REG5_Tile_x_dim_cntx{c & 3}",
        "DEST_ADDRESS": lambda c: f"THCON_SEC{{u}}_REG5_Dest_cntx{c & 3}_address",
        "SHIFT_AMOUNT": lambda c: f"THCON_SEC{{u}}_REG2_Shift_amount_cntx{c & 3}",
    }


def _unpack_field_name(template: str) -> str:
    """``THCON_SEC{u}_REG2_Out_data_format`` -> ``UF_OUT_DATA_FORMAT``: the field without its unpacker."""
    short = template.split("_REG", 1)[1].split("_", 1)[1] if template.startswith("THCON") else template
    return c_name("UF", short.replace("{u}", "").replace("{ab}", "X")).rstrip("_")


def _unpack_constants(out: _Defines, arch: str = ARCH) -> None:
    """unpack.c's section of ``constants.h``, over ``arch``'s configuration layout and unpacker
    readings (unpack.unit.UnpackerReadings: Blackhole's, or unpack/wormhole.py's)."""
    from tensixsim.tensix import formats
    from tensixsim.tensix.unpack import convert as unpack_convert
    from tensixsim.tensix.unpack import unit as unpack_unit
    from tensixsim.tensix.unpack import wormhole as unpack_wormhole

    layout = LAYOUT_MODULES[arch]
    readings = {"blackhole": unpack_unit.BLACKHOLE, "wormhole": unpack_wormhole.WORMHOLE}[arch]

    out.text("/* ---- unpack.c: the unpack package, timing.UNPACK, formats.py (UNPACK_*, U*F_*) ---- */")
    t = timing.UNPACK
    out.add("UNPACK_ADDRESS_CYCLES", str(t.address_cycles))
    out.add("UNPACK_NOP_CYCLES", str(t.nop))
    rows = ", ".join("{" + ", ".join(f"{{{a}, {b}}}" for a, b in row) + "}" for row in t.shared_speeds)
    out.add("UNPACK_SHARED_SPEEDS", "{" + rows + "}")
    out.add("UNPACK_SPEEDS", f"{len(t.shared_speeds)}u")
    for name in ("FP32", "FP16", "BFP8A", "BFP4A", "TF32", "BF16", "BFP8", "BFP4", "INT32", "INT16", "FP8",
                 "BFP2A", "INT8", "BFP2"):  # fmt: skip
        out.add(c_name("UNPACK_FMT", name), f"{getattr(formats, name)}u")
    sixteenths = [unpack_convert.DATUM_SIXTEENTHS.get(code, 0) for code in range(16)]
    out.add("UNPACK_DATUM_SIXTEENTHS", "{" + ", ".join(map(str, sixteenths)) + "}")
    out.add("UNPACK_TILEIZE_ROW_WIDE", str(readings.tileize_row_wide))
    out.add("UNPACK_TILEIZE_ROW_NARROW", str(readings.tileize_row_narrow))
    out.add("UNPACK_TILEIZE_SUB_BYTE", str(int(readings.tileize_sub_byte)))
    out.add("UNPACK_FP8_INPUT", str(int(readings.fp8_input)))
    out.add("UNPACK_UPSAMPLE_ONE", str(int(readings.upsample_one)))
    out.add("UNPACK_CONTEXTS", str(unpack_unit.CONTEXTS))
    out.add("UNPACK_SRC_MASK", f"0x{regs.SRC_MASK:X}u")
    out.add("UNPACK_SRC_ROWS", f"{regs.SRC_ROWS}u")
    out.add("UNPACK_CLIENT_UNPACKERS", f"{int(regs.SrcClient.UNPACKERS)}u")
    out.add("UNPACK_CLIENT_MATRIX_UNIT", f"{int(regs.SrcClient.MATRIX_UNIT)}u")
    names = [_unpack_field_name(f) for f in UNPACK_FIELDS] + [f"UF_DESC{i}" for i in range(4)]
    names += [_unpack_field_name(f).replace("UF_", "UTF_") for f in UNPACK_THREAD_FIELDS]
    for i, name in enumerate(names[: len(UNPACK_FIELDS) + 4]):
        out.add(name, f"{i}u")
    out.add("UNPACK_FIELD_COUNT", f"{len(UNPACK_FIELDS) + 4}u")
    for i, name in enumerate(names[len(UNPACK_FIELDS) + 4 :]):
        out.add(name, f"{i}u")
    out.add("UNPACK_THREAD_FIELD_COUNT", f"{len(UNPACK_THREAD_FIELDS)}u")

    def spec(table: dict[str, tuple[int, int, int]], name: str) -> str:
        if name not in table:
            return "{0u, 0u, 0x0u}"
        word, shift, width = table[name]
        if width > 32:
            raise ValueError(f"{name} spans {width} bits; unpack.c reads fields of one word only")
        return f"{{{word}u, {shift}u, 0x{((1 << width) - 1) << shift:X}u}}"

    config_rows, thread_rows = [], []
    for u in range(2):
        ab = "AB"[u]
        specs = [spec(layout.CONFIG_FIELDS, f.format(u=u, ab=ab)) for f in UNPACK_FIELDS]
        desc_word = layout.CONFIG_FIELDS[f"THCON_SEC{u}_REG0_TileDescriptor"][0]
        specs += [f"{{{desc_word + i}u, 0u, 0xFFFFFFFFu}}" for i in range(4)]
        config_rows.append("    {" + ", ".join(specs) + "}")
        specs = [spec(layout.THREAD_FIELDS, f.format(u=u, ab=ab)) for f in UNPACK_THREAD_FIELDS]
        thread_rows.append("    {" + ", ".join(specs) + "}")
    context_fields = _unpack_context_fields()
    for i, name in enumerate(context_fields):
        out.add(f"UCF_{name}", f"{i}u")
    out.add("UNPACK_CONTEXT_FIELD_COUNT", f"{len(context_fields)}u")
    context_rows = []
    for u in range(2):
        per_field = []
        for field_of in context_fields.values():
            names = [field_of(c).format(u=u) for c in range(unpack_unit.CONTEXTS)]
            if missing := [name for name in names if name not in layout.CONFIG_FIELDS]:
                raise ValueError(f"{arch} has no {missing[0]} (unpack.c reads every context's fields)")
            per_field.append("{" + ", ".join(spec(layout.CONFIG_FIELDS, name) for name in names) + "}")
        context_rows.append("    {" + ", ".join(per_field) + "}")
    for macro, rows in (
        ("UNPACK_FIELD_SPECS", config_rows),
        ("UNPACK_THREAD_FIELD_SPECS", thread_rows),
        ("UNPACK_CONTEXT_FIELD_SPECS", context_rows),
    ):
        out.names.add(macro)
        out.text(f"#define {macro} " + "{ \\", *(row + ", \\" for row in rows[:-1]), rows[-1] + "}")
    out.text("")
