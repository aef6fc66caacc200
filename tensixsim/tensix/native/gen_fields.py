"""Render the native engine's generated headers: ``fields.h`` (the ISA) and ``constants.h`` (timing
and state facts), so no opcode, bit position, latency or layout figure is typed in the C sources.

    python -m tensixsim.tensix.native.gen_fields           # (re)write both headers
    python -m tensixsim.tensix.native.gen_fields --check   # exit 1 if a committed header is stale

``fields.h`` comes from the Blackhole instruction table (``tensixsim/isa/blackhole.py``): per
instruction ``OP_<NAME>`` (the opcode), and per field ``F_<NAME>_<FIELD>(w)`` (the field's value in
word ``w``) and ``F_<NAME>_<FIELD>_WIDTH`` (its slot width in bits).

``sfpu_tables.h`` holds the vector unit's mode bits, FP32 constants and lookup tables of
``sfpu/floats.py``, ``sfpu/lanes.py`` and ``sfpu/convert.py``, and which opcodes are vector-unit
instructions (the ISA table's unit column).

``constants.h`` comes from the Python model itself: the ThCon, configuration-unit, matrix-unit and
vector-unit latencies (``tensixsim/timing.py``) and Retire's default, the counter widths and ADDR_MOD
slot fields of ``adc.py``, the GPR count of ``thcon.py``, the vector unit's state shapes, LaneConfig
bits, SFPLOAD / SFPSTORE Mod0 codes and PRNG taps (``sfpu/unit.py``, ``sfpu/convert.py``), the
SFPLOADMACRO scheduler words a handler tests (``sfpu/macro.py``), Dst's shape (``regs.py``), and the
configuration layout and the few fields the handlers test (``config/fields_blackhole.py``).

Each other architecture of ``native.ARCHES`` (Wormhole) gets ``fields_<arch>.h`` and
``constants_<arch>.h`` from its own instruction table, configuration layout and sync tables; its
library is built with ``-DTSIM_<ARCH>``, which makes ``fields.h`` and ``constants.h`` include them.
``fields_<arch>.h`` also lists the instructions that library runs (:func:`native_instructions`:
exactly Blackhole's semantics and encoding, or the architecture's own semantics where the handlers
implement them, :data:`OWN_HANDLERS`).

The units' sections of ``constants.h`` and all of ``sfpu_tables.h`` are rendered by the modules of
``gen/`` (matrix, pack, unpack, sync, sfpu_tables), over ``gen/common.py``'s ``#define`` writer.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

from tensixsim import timing
from tensixsim.isa import isa_for
from tensixsim.isa.spec import OPCODE_SHIFT
from tensixsim.tensix import adc, native, regs, thcon
from tensixsim.tensix.config import fields_blackhole as cfg
from tensixsim.tensix.native.gen.common import (
    _ABSENT,
    ARCH,
    LAYOUT_MODULES,
    _close,
    _Defines,
    _field,
    _preamble,
    c_name,
    header_name,
)
from tensixsim.tensix.native.gen.matrix import _matrix_constants
from tensixsim.tensix.native.gen.pack import _pack_constants
from tensixsim.tensix.native.gen.sfpu_tables import render_sfpu_tables
from tensixsim.tensix.native.gen.sync import _sync_constants, _thcon_constants
from tensixsim.tensix.native.gen.unpack import _unpack_constants
from tensixsim.tensix.semantics import Retire
from tensixsim.tensix.sfpu import convert as sfpu_convert
from tensixsim.tensix.sfpu import hazards as sfpu_hazards
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu import unit as sfpu

_HERE = Path(__file__).resolve().parent
FIELDS_PATH = _HERE / "fields.h"
CONSTANTS_PATH = _HERE / "constants.h"
SFPU_TABLES_PATH = _HERE / "sfpu_tables.h"

# The timing tables the native handlers charge, by the prefix their constants get.
TIMING_TABLES = {
    "FRONTEND": timing.FRONTEND,
    "THCON": timing.THCON,
    "CONFIG": timing.CONFIG,
    "MATRIX": timing.MATRIX,
    "SFPU": timing.SFPU,
    "SYNC": timing.SYNC,
}
# Config fields the handlers test (side effects of a store, CFGSHIFTMASK's scratch registers; the
# vector unit's Dst addressing and MOD0_FMT_SRCB resolution).
CONFIG_FIELDS = ("STATE_RESET_EN", "PRNG_SEED_Seed_Val", "SCRATCH_SEC0_val", "SCRATCH_SEC1_val",
                 "SCRATCH_SEC2_val", "ALU_ACC_CTRL_SFPU_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcB_override",
                 "ALU_FORMAT_SPEC_REG_SrcB_val", "ALU_FORMAT_SPEC_REG1_SrcB", "DEST_REGW_BASE_Base",
                 "DEST_SP_BASE_Base", "DEST_ACCESS_CFG_remap_addrs",
                 "DEST_ACCESS_CFG_swizzle_32b")  # fmt: skip
# ThreadConfig fields the handlers test (the Config state a pipe uses; SETC16's context resets).
THREAD_FIELDS = (
    "CFG_STATE_ID_StateID",
    "UNPACK_MISC_CFG_CfgContextCntReset_0",
    "UNPACK_MISC_CFG_CfgContextCntReset_1",
    "UNPACK_MISC_CFG_CfgContextCntReset_metadata",
    "UNPACK_MISC_CFG_CfgContextCntReset_metadata_zstart",
    "DEST_TARGET_REG_CFG_MATH_Offset",
    "SFPU_STACK_Incr",
    "ADDR_MOD_SET_Base",
)
# sfpu/unit.py's integer constants the vector-unit handlers use, by their Python name (SFPU_<NAME> in C):
# state shapes, LaneConfig bits, SFPLOAD / SFPSTORE Mod0 codes.
SFPU_NAMES = (
    "LANES", "LREGS", "STACK_DEPTH", "MACRO_SLOTS", "MACRO_COLUMNS", "MACRO_CLOCK",
    "ENABLE_FP16A_INF", "DISABLE_BACKDOOR_LOAD", "ENABLE_DEST_INDEX", "CAPTURE_DEFAULT_DEST_INDEX",
    "BLOCK_DEST_WR_FROM_SFPU", "BLOCK_SFPU_RD_FROM_DEST", "DEST_RD_COL_EXCHANGE", "DEST_WR_COL_EXCHANGE",
    "ROW_MASK_SHIFT", "LANE_CONFIG_MASK",
    "FMT_SRCB", "FMT_FP16", "FMT_BF16", "FMT_FP32", "FMT_INT32", "FMT_INT8", "FMT_UINT16", "FMT_HI16",
    "FMT_INT16", "FMT_LO16", "FMT_INT32_ALL", "FMT_ZERO", "FMT_INT32_SM", "FMT_INT8_COMP",
    "FMT_LO16_ONLY", "FMT_HI16_ONLY",
)  # fmt: skip
# sfpu/macro.py's macro_pending columns, macro_clock words, sub-units and delay kinds (SFPU_MACRO_<NAME>).
MACRO_NAMES = (
    "VALID", "UNIT", "WORD", "VB", "VC", "VD", "MOD0", "ADDR", "THREAD", "COUNT", "KIND", "BORN", "SEQ",
    "PC", "CORE", "NOP",
    "EXECUTED", "TICKED", "SWAP_NEXT", "NEXT_SEQ", "UNITS_AT", "UNITS_MASK",
    "SIMPLE", "MAD", "ROUND", "STORE", "LOAD", "CYCLES", "INSTRUCTIONS",
)  # fmt: skip
# sfpu/hazards.py's SfpuState.hazard words and rule kinds (SFPU_HAZARD_<NAME>).
HAZARD_NAMES = ("AT", "NO_READ", "NO_WRITE", "KIND", "MAD_RESULT", "LANE_SHUFFLE")
# regs.py's Dst shape (REGS_<NAME>).
REGS_NAMES = ("DST_ROWS", "DST_COLS", "DST_BLOCK_ROWS", "ROW_MASK")
_ADC_DIMS = "XYZW"  # adc.X, Y, Z, W


def render_fields(arch: str = ARCH) -> str:
    """``fields.h``: opcodes and field extractors of every instruction of ``arch``; for another
    architecture than Blackhole also the instructions its library runs (:func:`native_instructions`)."""
    isa = isa_for(arch)
    legend = [
        "OPCODE_OF(w)              the opcode of instruction word w",
        "OP_<NAME>                 an instruction's opcode",
        "F_<NAME>_<FIELD>(w)       that field's value in instruction word w",
        "F_<NAME>_<FIELD>_WIDTH    the field's slot width in bits",
    ]
    if arch != ARCH:
        legend += [
            "NATIVE_OPCODE_BITS_INIT   the opcodes the native handlers run on this architecture (8 words",
            "                          of 32 bits; every other instruction is deferred to Python)",
        ]
    out = _preamble(
        "fields.h",
        f"the {arch} Tensix instruction table ({len(isa)} instructions).",
        legend,
        includes=("stdint.h",),
        arch=arch,
    )
    out.add("OPCODE_OF(w)", f"(((uint32_t)(w)) >> {OPCODE_SHIFT})")
    out.text("")
    if arch != ARCH:
        names = native_instructions(arch)
        listed = textwrap.wrap(f"{len(names)} instructions: {', '.join(names)}", 100)
        out.text("/* " + listed[0], *(f" * {line}" for line in listed[1:]), " */")
        opcodes = {isa.by_name[n].opcode for n in names}
        words = [sum(1 << (op & 31) for op in opcodes if op >> 5 == w) for w in range(8)]
        out.add("NATIVE_OPCODE_BITS_INIT", "{" + ", ".join(f"0x{w:08X}u" for w in words) + "}")
        out.text("")
    for spec in isa:
        out.add(c_name("OP", spec.name), f"0x{spec.opcode:02X}u")
        for f in spec.fields:
            name = c_name("F", spec.name, f.name)
            out.add(f"{name}(w)", f"((((uint32_t)(w)) >> {f.lo}) & 0x{f.max_value:X}u)")
            out.add(f"{name}_WIDTH", f"{f.width}u")
        out.text("")
    return _close(out)


# The architectures whose library builds from other headers than Blackhole's, and the headers that
# are per architecture (sfpu_tables.h holds chip-neutral vector-unit facts, but for the SFPLOADMACRO
# scheduler's opcode tables, which it holds for each architecture; its other opcode table serves the
# automatic stall, Blackhole's only).
# Instructions whose semantics on another architecture differ from Blackhole's and whose native
# handlers implement that architecture's as well (the TSIM_<ARCH> branches of the handlers, checked
# against its Python semantics by tests/test_wormhole_native_*.py): they run natively there too.
# fmt: off
OWN_HANDLERS: dict[str, tuple[str, ...]] = {
    "wormhole": (
        "SFPLOAD", "SFPSTORE", "SFPMAD", "SFPADD", "SFPMUL", "SFPADDI", "SFPMULI", "SFPLUT", "SFPLUTFP32",
        "SFPAND", "SFPOR", "SFPSHFT", "SFPPUSHC", "SFPPOPC", "SFPCAST", "SFP_STOCH_RND", "SFPSHFT2",
        "MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWADD", "ELWSUB", "ELWMUL", "MOVA2D", "MOVDBGA2D", "MOVB2D",
        "MOVD2A", "MOVD2B", "MOVB2A", "SHIFTXB", "ZEROACC", "UNPACR", "UNPACR_NOP", "PACR", "SFPLOADMACRO",
    ),
}
# fmt: on


def native_instructions(arch: str) -> tuple[str, ...]:
    """The instructions the native handlers run on ``arch``: those with a case in ops.c's dispatch,
    and, on another architecture than Blackhole, only where ``arch`` registers the very semantics
    function Blackhole does with the same opcode, fields and unit, or its handler implements that
    architecture's own semantics (:data:`OWN_HANDLERS`)."""
    from tensixsim.tensix.semantics import lookup

    cases = set(re.findall(r"case OP_(\w+):", (_HERE / "ops.c").read_text()))
    own, full = isa_for(arch), isa_for(ARCH)
    names = []
    for spec in own:
        if spec.name not in cases:
            continue
        if arch != ARCH and spec.name not in OWN_HANDLERS.get(arch, ()):
            other = full.by_name.get(spec.name)
            fn = lookup(arch, spec.name)
            if other is None or fn is None or fn is not lookup(ARCH, spec.name):
                continue
            if (spec.opcode, spec.fields, spec.unit) != (other.opcode, other.fields, other.unit):
                continue
        names.append(spec.name)
    return tuple(sorted(names))


def _addr_mod_table(out: _Defines, layout: ModuleType = cfg) -> None:
    """``ADDR_MOD_SLOTS``, an index ``AM_<KIND>_<NAME>`` per slot field (adc._ADDR_MOD_NAMES order),
    ``ADDR_MOD_FIELD_COUNT`` and ``ADDR_MOD_FIELD_SPECS``: an initializer of
    ``[ADDR_MOD_SLOTS][ADDR_MOD_FIELD_COUNT]`` {ThreadConfig register, shift, mask in place} over
    ``layout``. A field the layout lacks (Wormhole has no AB2) reads as 0, as adc.addr_mod reads it:
    register 0 with an empty mask."""
    names = [(kind, name) for kind, ns in adc._ADDR_MOD_NAMES.items() for name in ns]
    out.add("ADDR_MOD_SLOTS", f"{adc.ADDR_MODS}u")
    for i, (kind, name) in enumerate(names):
        out.add(c_name("AM", kind, name), f"{i}u")
    out.add("ADDR_MOD_FIELD_COUNT", f"{len(names)}u")
    rows = []
    for slot in range(adc.ADDR_MODS):
        specs = []
        for kind, name in names:
            reg, shift, width = layout.THREAD_FIELDS.get(f"ADDR_MOD_{kind}_SEC{slot}_{name}", (0, 0, 0))
            specs.append(f"{{{reg}u, {shift}u, 0x{((1 << width) - 1) << shift:X}u}}")
        rows.append("    {" + ", ".join(specs) + "}")
    out.names.add("ADDR_MOD_FIELD_SPECS")
    out.text("#define ADDR_MOD_FIELD_SPECS " + "{ \\", *(row + ", \\" for row in rows[:-1]), rows[-1] + "}")


def _prng_taps() -> int:
    """The state bits whose parity sfpu_convert._prng_step feeds (complemented) into bit 31, checked
    to be all it does beyond shifting right."""
    import numpy as np

    def step(x: int) -> int:
        return int(sfpu_convert._prng_step(np.array([x], np.uint32))[0])

    taps = sum(1 << i for i in range(32) if (step(1 << i) ^ step(0)) >> 31)
    for x in (0, 1, 0x80200003, 0xDEADBEEF, 0x12345678, 0xFFFFFFFF):
        expected = ((1 ^ bin(x & taps).count("1") & 1) << 31) | (x >> 1)
        if step(x) != expected:
            raise ValueError("sfpu_convert._prng_step is no longer a parity-feedback shift")
    return taps


def render_constants(arch: str = ARCH) -> str:
    """``constants.h``: latencies and state facts of the Python model, over ``arch``'s configuration
    layout and tables (the matrix-unit, packer and unpacker sections take the architecture's own
    readings and tables where its handlers implement its own semantics), and a field its layout lacks
    is rendered with no bits (mask 0) in no word (an index no Config or ThreadConfig has)."""
    layout = LAYOUT_MODULES[arch]
    layout_path = layout.__name__.removeprefix("tensixsim.tensix.").replace(".", "/")
    legend = [
        "TIMING_<UNIT>_<NAME>      tensixsim/timing.py (FRONTEND, THCON, CONFIG, MATRIX, SFPU .<name>)",
        "TIMING_RETIRE_DEFAULT     semantics.Retire().cycles (the ADC and RWC instructions)",
        "ADC_MASK_<X|Y|Z|W>        adc.ADC_MASKS; RWC_<SRC|DST>_MASK adc.SRC_MASK / DST_MASK",
        "SFPU_<NAME>               sfpu.unit.<NAME>; SFPU_MACRO_<NAME> sfpu.macro.<NAME>",
        "SFPU_HAZARD_<NAME>        sfpu.hazards.<NAME> (Wormhole's rules for the next cycle)",
        "REGS_<NAME>               regs.<NAME>; AM_*, ADDR_MOD_* adc.py's ADDR_MOD slot fields",
        "CFG_<FIELD>_WORD / _SHIFT / _MASK   a Config field (mask in place)",
        "THD_<FIELD>_REG / _SHIFT / _MASK    a ThreadConfig field (mask in place)",
    ]
    if arch != ARCH:
        legend.append(f"(the {arch} configuration layout, {layout_path}.py)")
    out = _preamble(
        "constants.h",
        "latencies and state facts the native handlers share with the Python model.",
        legend,
        arch=arch,
    )
    out.text("/* ---- timing.py ---- */")
    for unit, table in TIMING_TABLES.items():
        for f in dataclasses.fields(table):
            out.add(c_name("TIMING", unit, f.name), str(int(getattr(table, f.name))))
    out.add("TIMING_RETIRE_DEFAULT", str(Retire().cycles))
    out.text("", "/* ---- thcon.py, adc.py ---- */")
    out.add("THCON_GPR_COUNT", f"{thcon.GPR_COUNT}u")
    out.add("ADC_UNIT_COUNT", f"{adc.ADC_UNITS}u")
    for dim, width in zip(_ADC_DIMS, adc.ADC_WIDTHS, strict=True):
        out.add(c_name("ADC_MASK", dim), f"0x{(1 << width) - 1:X}u")
    out.add("RWC_SRC_MASK", f"0x{adc.SRC_MASK:X}u")
    out.add("RWC_DST_MASK", f"0x{adc.DST_MASK:X}u")
    out.text("", "/* ---- sfpu/unit.py, sfpu/macro.py, regs.py ---- */")
    for name in SFPU_NAMES:
        out.add(c_name("SFPU", name), f"{int(getattr(sfpu, name))}u")
    for name in MACRO_NAMES:
        out.add(c_name("SFPU_MACRO", name), f"{int(getattr(sfpu_macro, name))}u")
    out.add("SFPU_MACRO_NONE", str(sfpu_macro.NONE))  # no operand override (a signed column value)
    for name in REGS_NAMES:
        out.add(c_name("REGS", name), f"{int(getattr(regs, name))}u")
    # LOAD_WIDE / STORE_WIDE / SRCB_AS_BF16 as bit masks over their codes.
    out.add("SFPU_LOAD_WIDE_MASK", f"0x{sum(1 << m for m in sfpu.LOAD_WIDE):04X}u")
    out.add("SFPU_STORE_WIDE_MASK", f"0x{sum(1 << m for m in sfpu.STORE_WIDE):04X}u")
    out.add("SFPU_SRCB_AS_BF16_MASK", f"0x{sum(1 << m for m in sfpu.SRCB_AS_BF16):08X}u")
    # sfpu_convert._prng_step: state >> 1, bit 31 = NOT parity(state & SFPU_PRNG_TAPS); the taps are
    # found by stepping each one-bit state, so they are the function's own.
    out.add("SFPU_PRNG_TAPS", f"0x{_prng_taps():08X}u")
    # SFPCONFIG's MOD1_IMM16_IS_VALUE values of LReg[11..14].
    for reg, bits in sorted(sfpu.CONFIG_DEFAULTS.items()):
        out.add(f"SFPU_CONFIG_DEFAULT_{reg}", f"0x{bits:08X}u")
    for name in HAZARD_NAMES:
        out.add(c_name("SFPU_HAZARD", name), f"{int(getattr(sfpu_hazards, name))}u")
    # sfpu.hazards.AFTER_SHUFFLE as 8 words of opcode bits, AFTER_SHUFFLE_SHFT2_MODES as Mod1 bits.
    after = {spec.opcode for spec in isa_for(arch) if spec.name in sfpu_hazards.AFTER_SHUFFLE}
    words = ", ".join(f"0x{sum(1 << (op & 31) for op in after if op >> 5 == w):08X}u" for w in range(8))
    out.add("SFPU_HAZARD_AFTER_SHUFFLE_INIT", "{" + words + "}")
    modes = sum(1 << m for m in sfpu_hazards.AFTER_SHUFFLE_SHFT2_MODES)
    out.add("SFPU_HAZARD_AFTER_SHUFFLE_SHFT2_MODES", f"0x{modes:X}u")
    out.text("", "/* ---- adc.py ADDR_MOD slots (ThreadConfig ADDR_MOD_<KIND>_SEC<n>_<NAME>) ---- */")
    _addr_mod_table(out, layout)
    out.text("", f"/* ---- {layout_path}.py ---- */")
    out.add("CFG_STATE_WORDS", f"{layout.CFG_STATE_SIZE * 4}u")
    out.add("CFG_GLOBAL_BASE_WORD", f"{layout.GLOBAL_CFGREG_BASE_ADDR32}u")
    out.add("THD_STATE_REGS", f"{layout.THD_STATE_SIZE}u")
    for name in CONFIG_FIELDS:
        _field(out, "CFG", "WORD", name, layout.CONFIG_FIELDS.get(name, _ABSENT))
    for name in THREAD_FIELDS:
        _field(out, "THD", "REG", name, layout.THREAD_FIELDS.get(name, _ABSENT))
    out.text("")
    _matrix_constants(out, arch)
    _pack_constants(out, arch)
    _unpack_constants(out, arch)
    _sync_constants(out, arch)
    _thcon_constants(out, layout)
    return _close(out)


def headers() -> dict[Path, str]:
    """Each generated header and its current text (Blackhole's, then each other architecture's)."""
    texts = {
        FIELDS_PATH: render_fields(),
        CONSTANTS_PATH: render_constants(),
        SFPU_TABLES_PATH: render_sfpu_tables(),
    }
    for arch in native.ARCHES:
        if arch != ARCH:
            texts[_HERE / header_name("fields.h", arch)] = render_fields(arch)
            texts[_HERE / header_name("constants.h", arch)] = render_constants(arch)
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale headers instead of writing them")
    args = parser.parse_args(argv)
    stale = 0
    for path, text in headers().items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"stale: {path} (run python -m tensixsim.tensix.native.gen_fields)", file=sys.stderr)
                stale = 1
        else:
            path.write_text(text)
            print(f"wrote {path}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
