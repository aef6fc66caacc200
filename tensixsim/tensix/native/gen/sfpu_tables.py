"""``sfpu_tables.h``: the vector unit's mode bits, constants, tables and opcodes."""

from __future__ import annotations

from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.native.gen.common import (
    ARCH,
    _close,
    _Defines,
    _preamble,
    c_name,
)
from tensixsim.tensix.sfpu import convert as sfpu_convert
from tensixsim.tensix.sfpu import floats as sfpu_float
from tensixsim.tensix.sfpu import fma as sfpu_fma
from tensixsim.tensix.sfpu import lanes as sfpu_lanes
from tensixsim.tensix.sfpu import macro as sfpu_macro

# The vector-unit modules' integer constants the handlers use, by their Python name (<PREFIX>_<NAME>).
SFPU_MODULE_NAMES = {
    "FLOAT": (sfpu_float, (
        "SIGN", "INF", "CANONICAL_NAN", "ONE", "MAN",
        "MAD_NEGATE_VB", "MAD_NEGATE_VC", "MAD_INDIRECT_VA", "MAD_INDIRECT_VD",
        "MUL24_UPPER", "MUL24_INDIRECT_VA", "MUL24_INDIRECT_VD", "LUT_SGN_RETAIN", "LUT_INDIRECT_VD",
        "LUTFP32_FP16_3ENTRY_TABLE", "LUTFP32_FP16_6ENTRY_TABLE1", "LUTFP32_FP16_6ENTRY_TABLE2",
        "LUTFP32_SGN_RETAIN", "LUTFP32_INDIRECT_VD", "DIVP2_ADD", "ARECIP_RECIP", "ARECIP_COND_RECIP",
        "ARECIP_EXP", "CMP_SET_CC", "CMP_MUTATE_STACK", "CMP_MUTATE_OR", "CMP_SET_VD",
    )),
    "FMA": (sfpu_fma, ("WORMHOLE_NAN",)),
    "LANES": (sfpu_lanes, (
        "EXCHANGE_SRCB_SRCC", "SWAP_SWAP", "SHFT2_COPY4", "SHFT2_SUBVEC_CHAINED_COPY4",
        "SHFT2_SUBVEC_SHFLROR1_AND_COPY4", "SHFT2_SUBVEC_SHFLROR1", "SHFT2_SUBVEC_SHFLSHR1",
        "SHFT2_SHFT_LREG", "SHFT2_SHFT_IMM",
    )),
    "CONVERT": (sfpu_convert, (
        "CAST_RNE", "CAST_RNS", "CAST_INT32_ABS", "CAST_INT32_SM32", "RND_NEAREST", "RND_STOCH",
        "RND_ZERO", "STOCH_FP32_TO_FP16A", "STOCH_FP32_TO_FP16B", "STOCH_FP32_TO_UINT8",
        "STOCH_FP32_TO_INT8", "STOCH_FP32_TO_UINT16", "STOCH_FP32_TO_INT16", "STOCH_INT32_TO_UINT8",
        "STOCH_INT32_TO_INT8", "STOCH_USE_IMM5",
    )),
}  # fmt: skip
_MOD_VALUES = 16  # a 4-bit Mod0 / Mod1: tables indexed by it have this many entries
# Registers the probes of sfpu_float._reads_of name in the operand slots (distinct, none fixed there).
_PROBE_VC, _PROBE_VD, _PROBE_VB, _PROBE_IND = 9, 10, 11, 5
# The Mod-dependent operands of sfpu_float._reads_of that sfpu/floats.py spells as bare numbers, as
# masks over the Mod value (bit m: read with Mod m): name -> (instructions, Mod slot, LReg probed,
# 0 as the stalling logic sees it / 1 as really read, the other slots).
_VC_VD = {"lreg_c": _PROBE_VC, "lreg_dest": _PROBE_VD}
READ_PROBES = {
    "LOAD_READS_VD": (("SFPLOAD",), "instr_mod0", _PROBE_IND, 1, {"lreg_ind": _PROBE_IND}),
    "LOADI_READS_VD": (("SFPLOADI",), "instr_mod0", _PROBE_IND, 1, {"lreg_ind": _PROBE_IND}),
    "MOV_READS_VC": (("SFPMOV",), "instr_mod1", _PROBE_VC, 1, _VC_VD),
    "SET_READS_VD": (("SFPSETEXP", "SFPSETMAN", "SFPSETSGN"), "instr_mod1", _PROBE_VD, 1, _VC_VD),
    "ANDOR_READS_VB": (("SFPAND", "SFPOR"), "instr_mod1", _PROBE_VB, 1, {**_VC_VD, "imm12_math": _PROBE_VB}),
    "ANDOR_READS_VD": (("SFPAND", "SFPOR"), "instr_mod1", _PROBE_VD, 1, {**_VC_VD, "imm12_math": _PROBE_VB}),
    "IADD_READS_VD": (("SFPIADD",), "instr_mod1", _PROBE_VD, 1, _VC_VD),
    "SHFT_SEES_VC": (("SFPSHFT",), "instr_mod1", _PROBE_VC, 0, _VC_VD),
    "SHFT_READS_VC": (("SFPSHFT",), "instr_mod1", _PROBE_VC, 1, _VC_VD),
    "SHFT_READS_VD": (("SFPSHFT",), "instr_mod1", _PROBE_VD, 1, _VC_VD),
    "CONFIG_READS_L0": (("SFPCONFIG",), "instr_mod1", 0, 1, {}),
}


def _read_probe(names: tuple[str, ...], mod: str, lreg: int, really: int, slots: dict[str, int]) -> int:
    """The mask of Mod values with which sfpu_float._reads_of counts ``lreg`` (the same for each of
    ``names``)."""
    isa = isa_for(ARCH)
    masks = set()
    for name in names:
        spec = isa.by_name[name]
        mask = 0
        for m in range(_MOD_VALUES):
            fields = {f.name: 0 for f in spec.fields} | slots | {mod: m}
            if lreg in sfpu_float._reads_of(isa.decode(isa.encode(name, **fields)))[really]:
                mask |= 1 << m
        masks.add(mask)
    if len(masks) != 1:
        raise ValueError(f"{names}: sfpu_float._reads_of differs between them")
    return masks.pop()


def _table(out: _Defines, name: str, values: list[int], per_line: int = 8) -> None:
    """``name`` as a brace initializer of ``values`` (unsigned)."""
    cells = [f"0x{v:X}u" for v in values]
    rows = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
    out.add(f"{name}_SIZE", f"{len(values)}u")
    out.text(f"#define {name} {{ \\", *(f"    {row}, \\" for row in rows[:-1]), f"    {rows[-1]} }}")


def _macro_tables(out: _Defines) -> None:
    """SFPLOADMACRO's view of each opcode (sfpu/macro.py) on each architecture of ``native.ARCHES``: the
    sub-units whose column holds it, the sub-unit it goes to when issued, and where its VD / VC / VB
    operands sit (an opcode the architecture lacks is in no column: the model schedules SFPNOP). The
    library built with ``-DTSIM_<ARCH>`` gets its architecture's tables."""
    out.add("MACRO_NO_UNIT", f"{MACRO_NO_UNIT}u")
    out.add("MACRO_VD_WIDTH_SHIFT", f"{MACRO_VD_WIDTH_SHIFT}u")
    out.add("MACRO_HAS_VC_BIT", f"{MACRO_HAS_VC_BIT}u")
    out.add("MACRO_HAS_VB_BIT", f"{MACRO_HAS_VB_BIT}u")
    others = [arch for arch in native.ARCHES if arch != ARCH]
    for i, arch in enumerate([*others, ARCH]):
        out.text("#else" if arch == ARCH else f"{'#elif' if i else '#if'} defined(TSIM_{arch.upper()})")
        tables = _Defines()  # (each architecture defines the same names)
        _macro_tables_of(tables, arch)
        out.text(*tables.lines)
    out.names |= tables.names
    out.text("#endif /* TSIM_<ARCH> */")


def _macro_tables_of(out: _Defines, arch: str) -> None:
    isa = isa_for(arch)
    columns, regular, operands = [0] * 256, [MACRO_NO_UNIT] * 256, [0] * 256
    for spec in isa:
        if spec.unit != "sfpu":
            continue
        columns[spec.opcode] = sum(1 << u for u, names in enumerate(sfpu_macro.COLUMNS) if spec.name in names)
        unit = sfpu_macro.regular_unit(spec.name)
        regular[spec.opcode] = MACRO_NO_UNIT if unit is None else unit
        by_name = {f.name: f for f in spec.fields}
        vd = next((by_name[n] for n in sfpu_macro.VD_FIELDS if n in by_name), None)
        has_vc = any(n in by_name for n in sfpu_macro.VC_FIELDS)
        in_imm12 = sfpu_macro.VB_IN_IMM12_OF[arch]
        has_vb = any(n in by_name for n in sfpu_macro.VB_FIELDS) or spec.name in in_imm12
        if vd is not None:
            operands[spec.opcode] = vd.lo | vd.width << MACRO_VD_WIDTH_SHIFT
        operands[spec.opcode] |= has_vc << MACRO_HAS_VC_BIT | has_vb << MACRO_HAS_VB_BIT
    _table(out, "MACRO_COLUMNS_OF", columns, per_line=16)
    _table(out, "MACRO_REGULAR_UNIT", regular, per_line=16)
    _table(out, "MACRO_OPERANDS", operands)


# MACRO_OPERANDS entries: VD field's lowest bit | its width << MACRO_VD_WIDTH_SHIFT (0: no VD field) |
# has a VC field << MACRO_HAS_VC_BIT | has a VB operand slot << MACRO_HAS_VB_BIT.
MACRO_NO_UNIT, MACRO_VD_WIDTH_SHIFT, MACRO_HAS_VC_BIT, MACRO_HAS_VB_BIT = 0xFF, 8, 16, 17


def render_sfpu_tables() -> str:
    """``sfpu_tables.h``: the vector unit's mode bits, constants and tables (sfpu_float.c,
    sfpu_lanes.c, sfpu_convert.c) and its opcodes."""
    out = _preamble(
        "sfpu_tables.h",
        "the vector unit's mode bits, FP32 constants and tables, and its opcodes.",
        [
            "FLOAT_<NAME>              sfpu.floats.<NAME>; FMA_<NAME> sfpu.fma.<NAME>;",
            "                          LANES_<NAME> sfpu.lanes.<NAME>; CONVERT_<NAME> sfpu.convert.<NAME>",
            "FLOAT_RECIP_LUT, FLOAT_EXP_LUT    sfpu.floats._RECIP / _EXP (SFPARECIP's tables)",
            "LANES_SWAP_VD_GETS_MIN    sfpu.lanes.SWAP_VD_GETS_MIN by Mod1 (0: no lane)",
            "CONVERT_FLOAT_INT_KEEP_SIGN / _TOP   sfpu.convert._FLOAT_INT by Mod1 & 7 (0: not a mode)",
            "SFPU_OPCODE_BITS          the opcodes whose unit is sfpu, as 8 words of 32 bits",
            "MACRO_COLUMNS_OF, MACRO_REGULAR_UNIT, MACRO_OPERANDS   by opcode: sfpu.macro.COLUMNS it is in",
            "                          (bit per sub-unit), regular_unit (MACRO_NO_UNIT: none), operand slots",
            "                          (each architecture's: -DTSIM_<ARCH> selects them)",
            "HOLD_<NAME>               sfpu.floats._reads_of's reads by Mod (READ_PROBES; bit m: Mod m)",
            "<TABLE>_SIZE              a table's entry count",
        ],
    )
    for prefix, (module, names) in SFPU_MODULE_NAMES.items():
        path = module.__name__.removeprefix("tensixsim.tensix.").replace(".", "/")
        out.text(f"/* ---- {path}.py ---- */")
        for name in names:
            out.add(c_name(prefix, name), f"0x{int(getattr(module, name)):X}u")
        out.text("")
    _table(out, "FLOAT_RECIP_LUT", [int(v) for v in sfpu_float._RECIP])
    _table(out, "FLOAT_EXP_LUT", [int(v) for v in sfpu_float._EXP], per_line=16)
    gets_min = sfpu_lanes.SWAP_VD_GETS_MIN
    _table(out, "LANES_SWAP_VD_GETS_MIN", [gets_min.get(m, 0) for m in range(_MOD_VALUES)])
    modes = range(sfpu_convert.STOCH_USE_IMM5)  # Mod1 & 7
    float_int = sfpu_convert._FLOAT_INT
    _table(out, "CONVERT_FLOAT_INT_KEEP_SIGN", [int(float_int.get(m, (0, 0))[0]) for m in modes])
    _table(out, "CONVERT_FLOAT_INT_TOP", [float_int.get(m, (0, 0))[1] for m in modes])
    opcodes = {spec.opcode for spec in isa_for(ARCH) if spec.unit == "sfpu"}
    words = [sum(1 << (op & 31) for op in opcodes if op >> 5 == w) for w in range(8)]
    _table(out, "SFPU_OPCODE_BITS", words)
    _macro_tables(out)
    out.text("")
    for name, probe in READ_PROBES.items():
        out.add(c_name("HOLD", name), f"0x{_read_probe(*probe):04X}u")
    out.text("")
    return _close(out)
