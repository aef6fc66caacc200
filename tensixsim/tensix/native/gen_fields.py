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
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from tensixsim import timing
from tensixsim.isa import isa_for
from tensixsim.isa.spec import OPCODE_SHIFT
from tensixsim.tensix import adc, native, regs, thcon
from tensixsim.tensix.config import fields_blackhole as cfg
from tensixsim.tensix.config import fields_wormhole
from tensixsim.tensix.semantics import Retire
from tensixsim.tensix.sfpu import convert as sfpu_convert
from tensixsim.tensix.sfpu import floats as sfpu_float
from tensixsim.tensix.sfpu import fma as sfpu_fma
from tensixsim.tensix.sfpu import hazards as sfpu_hazards
from tensixsim.tensix.sfpu import lanes as sfpu_lanes
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu import unit as sfpu

_HERE = Path(__file__).resolve().parent
FIELDS_PATH = _HERE / "fields.h"
CONSTANTS_PATH = _HERE / "constants.h"
SFPU_TABLES_PATH = _HERE / "sfpu_tables.h"
ARCH = native.ARCH
# Each architecture's configuration layout (config.unit.LAYOUTS' modules).
LAYOUT_MODULES = {"blackhole": cfg, "wormhole": fields_wormhole}

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


def c_name(*parts: str) -> str:
    """Upper-case C identifier made of ``parts`` joined by underscores (anything else becomes one)."""
    return re.sub(r"[^A-Z0-9_]", "_", "_".join(parts).upper())


class _Defines:
    """``#define`` lines; a name defined twice (two table names sanitising alike) is an error."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: set[str] = set()
        self.guard = ""
        self.redirected = False

    def add(self, name: str, value: str) -> None:
        head = name.split("(", 1)[0]
        if head in self.names:
            raise ValueError(f"{head} would be defined twice")
        self.names.add(head)
        self.lines.append(f"#define {name:<56} {value}")

    def text(self, *more: str) -> None:
        self.lines.extend(more)


def header_name(name: str, arch: str) -> str:
    """``name`` (``fields.h``) as the header of ``arch``: the name itself for Blackhole, the full
    engine's, ``fields_wormhole.h`` for another."""
    return name if arch == ARCH else name.replace(".h", f"_{arch}.h")


def _preamble(
    name: str, summary: str, legend: list[str], *, includes: tuple[str, ...] = (), arch: str = ARCH
) -> _Defines:
    """A header's opening comment, include guard and includes; ``#endif`` is added by :func:`_close`.
    Blackhole's header stands for ``arch``'s in a library built with ``-DTSIM_<ARCH>``."""
    out = _Defines()
    own = header_name(name, arch)
    out.guard = c_name("TENSIXSIM_NATIVE", own.replace(".", "_"))
    out.text(
        f"/* {own}: {summary}",
        " *",
        " * GENERATED by tensixsim/tensix/native/gen_fields.py. Do not edit; regenerate with",
        " *     python -m tensixsim.tensix.native.gen_fields",
        " *",
        *(f" * {line}".rstrip() for line in legend),
        " */",
        f"#ifndef {out.guard}",
        f"#define {out.guard}",
        "",
    )
    others = [a for a in native.ARCHES if a != ARCH and name in PER_ARCH_HEADERS]
    if arch == ARCH and others:
        # The sources include Blackhole's names; another architecture's library is built with
        # -DTSIM_<ARCH>, which makes each of them its own header.
        for i, other in enumerate(others):
            keyword = "#if" if i == 0 else "#elif"
            out.text(f"{keyword} defined(TSIM_{other.upper()})", f'#include "{header_name(name, other)}"')
        out.text("#else", "")
        out.redirected = True
    out.text(*(f"#include <{header}>" for header in includes), *([""] if includes else []))
    return out


def _close(out: _Defines) -> str:
    if out.redirected:
        out.text("#endif /* TSIM_<ARCH> */")
    out.text(f"#endif /* {out.guard} */", "")
    return "\n".join(out.lines)


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
PER_ARCH_HEADERS = ("fields.h", "constants.h")
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


def _field(out: _Defines, prefix: str, index_suffix: str, name: str, spec: tuple[int, int, int]) -> None:
    word, shift, width = spec
    if width > 32:
        raise ValueError(f"{name} spans {width} bits; the handlers read fields of one word only")
    out.add(c_name(prefix, name, index_suffix), f"{word}u" if word != _ABSENT[0] else f"0x{word:X}u")
    out.add(c_name(prefix, name, "SHIFT"), f"{shift}u")
    out.add(c_name(prefix, name, "MASK"), f"0x{((1 << width) - 1) << shift:08X}u")


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


# A field the layout lacks: no bits, in a word no configuration has (a comparison never matches it).
_ABSENT = (0xFFFF_FFFF, 0, 0)


# ------------------------------------------------------------------------------ matrix unit
# The matrix unit's constants (matrix*.c and src_banks.c: MATRIX_*, MXF_*): the register-file shapes of
# regs.py, matrix/unit.py's arithmetic facts, matrix.moves.HOLDS as opcode sets, and the configuration
# fields the matrix unit and the Src banks' hand-over read through Config.field_for_thread (a
# ThreadConfig field of the pipe, else a Config field of the state its CFG_STATE_ID selects).
MATRIX_FIELDS = (
    "CFG_STATE_ID_StateID", "FP16A_FORCE_Enable", "ALU_ACC_CTRL_INT8_math_enabled",
    "ALU_ACC_CTRL_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcA_val",
    "ALU_FORMAT_SPEC_REG0_SrcA", "FIDELITY_BASE_Phase", "DEST_TARGET_REG_CFG_MATH_Offset",
    "DEST_REGW_BASE_Base", "DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b",
    "CLR_DVALID_SrcA_Disable", "CLR_DVALID_SrcB_Disable", "ALU_ACC_CTRL_Zero_Flag_disabled_src",
    "SRCA_SET_Base", "SRCB_SET_Base",
)  # fmt: skip
_FORMAT_CODES = 16  # a 4-bit SrcAFmt


def _fidelity_masks(slice_of: Callable[..., object], phase_bit: int) -> tuple[int, int]:
    """(high, low): the masks of matrix.unit.src_a_fidelity_bits / src_b_fidelity_bits (``slice_of``),
    found by probing an all-ones mantissa and checked on random values: without ``phase_bit`` the
    slice is FTZ(bits & high), with it FTZ(x - (bits & low))."""
    import numpy as np

    from tensixsim.tensix.matrix import unit

    f32, u32 = np.float32, np.uint32
    probe = np.array([0x3FFFFFFF], u32).view(f32)  # exponent 127, every mantissa bit set
    sign_exp_top = 0xC000_0000  # the bits the probe cannot show (sign, exponent bit 7): kept
    high = int(np.asarray(slice_of(probe, 0)).view(u32)[0]) | sign_exp_top
    with np.errstate(all="ignore"):
        low = int((probe - np.asarray(slice_of(probe, phase_bit), f32)).view(u32)[0]) | sign_exp_top
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(u32)
    bits = bits[((bits >> 23) & 0xFF) != 0xFF]  # finite values (NaN payloads are the host's business)
    x = bits.view(f32)
    with np.errstate(all="ignore"):
        for phase, expected in (
            (0, (bits & u32(high)).view(f32)),
            (phase_bit, x - (bits & u32(low)).view(f32)),
        ):
            got = np.asarray(slice_of(x, phase), f32).view(u32)
            if not np.array_equal(got, unit.ftz(expected).view(u32)):
                raise ValueError(f"{slice_of.__name__} is no longer a mask-and-subtract slice")
    return high, low


def _elementwise_divisors() -> tuple[int, int]:
    """ELWADD / ELWSUB's divisors for fidelity phase bits 0 and 1 (matrix.unit.elementwise), found by
    dividing 1.0 and checked to compose for phase 3."""
    import numpy as np

    from tensixsim.tensix.formats import BF16
    from tensixsim.tensix.matrix import unit

    fmts = unit.Formats(BF16, unit.DstMode.FP32)
    one, zero = np.array([[127]], np.uint32), np.array([[0]], np.uint32)  # Src datums 1.0 and 0

    def quotient(phase: int) -> float:
        return float(unit.elementwise(fmts, "add", one, zero, phase)[0, 0])

    divisors = (round(1 / quotient(1)), round(1 / quotient(2)))
    if quotient(3) != 1 / (divisors[0] * divisors[1]) or any(d & (d - 1) for d in divisors):
        raise ValueError("matrix.unit.elementwise's fidelity divisions are no longer two powers of two")
    return divisors


def _fp16_rebias() -> int:
    """What matrix.unit.read_src and formats.fp16_to_fp32 add to an FP16 exponent (Tensix FP16 has
    exponent 31 as an ordinary binade), found by reading exponent 1 and checked to agree."""
    import numpy as np

    from tensixsim.tensix import formats
    from tensixsim.tensix.matrix import unit

    src = int(unit.read_src(np.array([1], np.uint32), formats.FP16).view(np.uint32)[0]) >> 23
    plain = int(formats.fp16_to_fp32(np.array([1 << 10], np.uint16))[0]) >> 23
    if src != plain:
        raise ValueError("matrix.unit.read_src and formats.fp16_to_fp32 rebias FP16 exponents differently")
    return src - 1


def _opcode_set(out: _Defines, name: str, rows: list[set[str]], arch: str = ARCH) -> None:
    """``name``: an initializer of ``[len(rows)][8]`` words, bit ``op & 31`` of word ``op >> 5`` set for
    each instruction of a row (names ``arch``'s ISA does not have are left out: no word decodes to
    them)."""
    isa = isa_for(arch)
    lines = []
    for names in rows:
        ops = {isa.by_name[n].opcode for n in names if n in isa.by_name}
        words = [sum(1 << (op & 31) for op in ops if op >> 5 == w) for w in range(8)]
        lines.append("    {" + ", ".join(f"0x{w:08X}u" for w in words) + "}")
    out.text(f"#define {name} " + "{ \\", *(line + ", \\" for line in lines[:-1]), lines[-1] + "}")


def _hold_constants(out: _Defines, arch: str) -> None:
    """matrix_hold.c's constants: matrix.moves.HOLDS as ``arch``'s opcode sets."""
    from tensixsim.tensix.matrix import moves

    holds = moves.HOLDS
    out.add("MATRIX_HOLD_KINDS", f"{len(holds)}u")
    for kind, (name, (cycles, _, _)) in enumerate(holds.items(), start=1):  # move_hold's kind, cycles
        out.add(c_name("MATRIX_HOLD", name, "KIND"), f"{kind}")
        out.add(c_name("MATRIX_HOLD", name, "CYCLES"), f"{cycles}")
    every = sum(1 << i for i, (_, held, _) in enumerate(holds.values()) if held is None)
    out.add("MATRIX_HOLD_EVERY", f"0x{every:X}u")  # bit kind - 1: every instruction but the allowed
    _opcode_set(out, "MATRIX_HOLD_HELD", [set(held or ()) for _, held, _ in holds.values()], arch)
    _opcode_set(out, "MATRIX_HOLD_ALLOWED", [set(allowed) for _, _, allowed in holds.values()], arch)


# The matrix unit's fields a layout may lack, read as 0 there (regs.dst_mapping: Wormhole's Dst has
# neither remap nor swizzle); any other missing field is an error.
_MATRIX_ZERO_WHEN_ABSENT = ("DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b")


def _matrix_constants(out: _Defines, arch: str = ARCH) -> None:
    """matrix.c's (and matrix_hold.c's) section of ``constants.h``, over ``arch``'s configuration layout
    and instruction table."""
    from tensixsim.tensix import formats
    from tensixsim.tensix.matrix import moves, src_shifts, unit

    out.text("/* ---- matrix*.c, src_banks.c: regs.py, the matrix package (MATRIX_*, MXF_*) ---- */")
    for name in ("SRC_BANKS", "SRC_ROWS", "SRC_COLS", "DST_ROWS", "DST_COLS", "DST32_ROWS", "DST_BLOCK_ROWS",
                 "FACE_ROWS", "ROW_MASK", "SRCA", "SRCB"):  # fmt: skip
        out.add(c_name("MATRIX", name), f"{int(getattr(regs, name))}u")
    out.add("MATRIX_SRC_ROW_MASK", f"0x{regs.SRC_ROWS - 1:X}u")  # a 6-bit Src row
    out.add("MATRIX_SRC_BLOCK_MASK", f"0x{(regs.SRC_ROWS - 1) & ~(regs.DST_BLOCK_ROWS - 1):X}u")  # 8-aligned
    out.add("MATRIX_CLIENT_MATRIX_UNIT", f"{int(regs.SrcClient.MATRIX_UNIT)}u")
    out.add("MATRIX_CLIENT_UNPACKERS", f"{int(regs.SrcClient.UNPACKERS)}u")
    for mode in ("ONE_ROW", "16_ROWS", "HALF_OF_DST", "ALL_OF_DST"):
        out.add(c_name("MATRIX_ZEROACC", mode), f"{getattr(regs, f'ZEROACC_MODE_{mode}')}u")
    out.add("MATRIX_K", f"{unit.K}u")
    out.add("MATRIX_FP16_REBIAS", f"{_fp16_rebias()}u")
    out.add("MATRIX_RWC_FIDELITY_MASK", f"0x{adc.FIDELITY_MASK:X}u")
    safe_exp = math.frexp(unit.SAFE_PRODUCT)
    if safe_exp[0] != 0.5:
        raise ValueError("matrix.unit.SAFE_PRODUCT is no longer a power of two")
    out.add("MATRIX_SAFE_PRODUCT_EXP", str(safe_exp[1] - 1))  # SAFE_PRODUCT = 2**this
    out.add("MATRIX_EXP32", f"0x{int(unit._EXP32):08X}u")
    out.add("MATRIX_CANONICAL_NAN", f"0x{int(unit._CANONICAL_NAN):08X}u")
    for name, fn, bit in (
        ("A", unit.src_a_fidelity_bits, 1),
        ("B", unit.src_b_fidelity_bits, 2),
    ):
        high, low = _fidelity_masks(fn, bit)
        out.add(f"MATRIX_FIDELITY_{name}_BIT", f"{bit}u")
        out.add(f"MATRIX_FIDELITY_{name}_HIGH", f"0x{high:08X}u")
        out.add(f"MATRIX_FIDELITY_{name}_LOW", f"0x{low:08X}u")
    odd_a, odd_b = _elementwise_divisors()
    out.add("MATRIX_ELW_DIVISOR_A", f"{odd_a}.0f")
    out.add("MATRIX_ELW_DIVISOR_B", f"{odd_b}.0f")
    for name in ("BF16", "FP16", "TF32", "INT8"):
        out.add(c_name("MATRIX_STYLE", name), f"{getattr(formats, name)}u")
    # matrix.moves.EIGHT_BIT_EXPONENT as a mask over format codes (MOVA2D / MOVB2D's conversion).
    out.add("MATRIX_EIGHT_BIT_EXPONENT_MASK", f"0x{sum(1 << f for f in moves.EIGHT_BIT_EXPONENT):04X}u")
    styles = [moves.src_style(code) for code in range(_FORMAT_CODES)]
    out.add("MATRIX_NO_STYLE", "0xFFu")
    out.text(
        "#define MATRIX_SRC_STYLES {" + ", ".join("0xFFu" if s is None else f"{s}u" for s in styles) + "}"
    )
    # src_banks.c: a SrcA datum cleared to negative infinity (every bit set), UNPACR_NOP's unpacker cycles.
    out.add("MATRIX_SRC_MASK", f"0x{regs.SRC_MASK:X}u")
    out.add("MATRIX_UNPACR_NOP_CYCLES", str(timing.UNPACK.nop))
    # matrix_shifts.c: SHIFTXA's directions and block, TRNSPSRCB's first row (matrix/src_shifts.py).
    out.add("MATRIX_SHIFT_RIGHT", f"{src_shifts.DIRECTION_RIGHT}u")
    out.add("MATRIX_SHIFT_LEFT", f"{src_shifts.DIRECTION_LEFT}u")
    out.add("MATRIX_SHIFT_ROWS", f"{src_shifts._BLOCK}u")
    out.add("MATRIX_TRANSPOSE_BASE", f"{src_shifts._TRANSPOSE_BASE}u")
    # matrix_pool.c: the index GMPOOL's ArgMax records for SrcA rows 0..7 (unit._NONLINEAR_I_TRANSFORM).
    index_of = ", ".join(f"{i}u" for i in unit._NONLINEAR_I_TRANSFORM)
    out.text(f"#define MATRIX_GMPOOL_INDEX_OF {{{index_of}}}")
    out.names.add("MATRIX_GMPOOL_INDEX_OF")
    out.add("MATRIX_ISSUE_CYCLES", str(timing.MATRIX.issue))
    out.add("MATRIX_DST_WRITE_HIDDEN", str(timing.MATRIX.dst_write_hidden))
    out.add("MATRIX_RETIRE_DEFAULT", str(Retire().cycles))
    _hold_constants(out, arch)
    layout = LAYOUT_MODULES[arch]
    for name in MATRIX_FIELDS:
        thread = name in layout.THREAD_FIELDS
        if not thread and name not in layout.CONFIG_FIELDS:
            if name not in _MATRIX_ZERO_WHEN_ABSENT:
                raise ValueError(f"{name} is not in the {arch} configuration layout")
            thread, (index, shift, width) = True, (0, 0, 0)  # ThreadConfig word 0, an empty mask: 0
        else:
            index, shift, width = layout.THREAD_FIELDS[name] if thread else layout.CONFIG_FIELDS[name]
        if width > 32:
            raise ValueError(f"{name} spans {width} bits; matrix.c reads fields of one word only")
        out.add(c_name("MXF", name, "THREAD"), f"{int(thread)}")
        out.add(c_name("MXF", name, "INDEX"), f"{index}u")
        out.add(c_name("MXF", name, "SHIFT"), f"{shift}u")
        out.add(c_name("MXF", name, "MASK"), f"0x{((1 << width) - 1) << shift:08X}u")
    out.text("")


_PACK_ZERO_CHECKS = (
    "Add_l1_dest_addr_offset", "Dis_shared_exp_assembler", "Enable_out_fifo", "Add_tile_header_size",
    "Auto_set_last_pacr_intf_sel", "pack_start_intf_pos", "pack_dis_y_pos_start_offset",
    "Source_interface_selection", "Downsample_rate", "All_pack_disable_zero_compress_ovrd",
)  # pack.unit._ZERO_CHECKS (checked equal in _pack_constants)  # fmt: skip
# pack.c: the Config fields PACR reads (PKF_<NAME>_WORD / _SHIFT / _MASK; Config fields only, read in
# the pipe's CFG_STATE_ID state, as pack.convert._field does).
PACK_FIELDS = (
    "PCK_DEST_RD_CTRL_Read_32b_data", "PCK_DEST_RD_CTRL_Read_int8", "PCK_DEST_RD_CTRL_Read_unsigned",
    "PCK_DEST_RD_CTRL_Round_10b_mant", "ALU_FORMAT_SPEC_REG_Dstacc_override",
    "ALU_FORMAT_SPEC_REG_Dstacc_val", "ALU_FORMAT_SPEC_REG2_Dstacc", "ALU_ROUNDING_MODE_Packer_srnd_en",
    "INT_DESCALE_Enable", "INT_DESCALE_Mode", "INT_DESCALE_VALUES_SEC0_Value", "STACC_RELU_ApplyRelu",
    "STACC_RELU_ReluThreshold", "PCK_EDGE_MODE_mode", "PCK_EDGE_TILE_FACE_SET_SELECT_enable",
    "PCK_EDGE_TILE_ROW_SET_SELECT_select", "PCK0_ADDR_BASE_REG_0_Base", "PCK0_ADDR_CTRL_XY_REG_0_Xstride",
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
        raise ValueError("pack.unit._ZERO_CHECKS changed: update gen_fields._PACK_ZERO_CHECKS")
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
    "PCK_DEST_RD_CTRL_Read_32b_data", "PCK_DEST_RD_CTRL_Read_int8", "PCK_DEST_RD_CTRL_Read_unsigned",
    "PCK_DEST_RD_CTRL_Round_10b_mant", "ALU_FORMAT_SPEC_REG_Dstacc_override",
    "ALU_FORMAT_SPEC_REG_Dstacc_val", "ALU_FORMAT_SPEC_REG2_Dstacc", "ALU_ROUNDING_MODE_Packer_srnd_en",
    "INT_DESCALE_Enable", "INT_DESCALE_Mode", "INT_DESCALE_VALUES_SEC0_Value", "STACC_RELU_ApplyRelu",
    "STACC_RELU_ReluThreshold", "PCK_EDGE_MODE_mode", "PCK_EDGE_TILE_FACE_SET_SELECT_enable",
    "PCK_EDGE_TILE_ROW_SET_SELECT_select",
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


# sync.c's kinds of STALLWAIT condition (SYNC_CONDITIONS_INIT rows: kind, index, waits_while).
_COND_NONE, _COND_UNIT, _COND_UNPACKER, _COND_SRC, _COND_PACKER = range(5)


def _busy_row(unit: str) -> tuple[int, int]:
    """(kind, index) of what a condition on ``unit`` reads: an unpacker's fetch, the packers' drain
    (with the pack unit's clock), or a unit's clock."""
    from tensixsim.tensix.frontend.pipes import UNIT_INDEX
    from tensixsim.tensix.pack.stream import PACKER_UNIT
    from tensixsim.tensix.unpack.fetch import UNPACKER_UNITS

    if unit in UNPACKER_UNITS:
        return _COND_UNPACKER, UNPACKER_UNITS.index(unit)
    if unit == PACKER_UNIT:
        return _COND_PACKER, UNIT_INDEX["pack"]
    return _COND_UNIT, UNIT_INDEX[unit]


def _sync_constants(out: _Defines, arch: str) -> None:
    """sync.c's section of ``constants.h``: sync.py's semaphores, latches, block bits per opcode and
    ``arch``'s STALLWAIT conditions (each as what it tests: a unit's clock, an unpacker's fetch, a Src
    bank); STREAMWAIT's operands and fields where ``arch`` has it."""
    from tensixsim.mmio import streams
    from tensixsim.tensix import sync
    from tensixsim.tensix.pack.stream import STREAM_DRAINED

    layout = LAYOUT_MODULES[arch]
    conditions = sync.STALLWAIT_CONDITIONS_BY_ARCH[arch]
    out.text("", "/* ---- sync.c: sync.py (SYNC_*, LATCH_*), streams.py (STREAMS_*) ---- */")
    for name in ("SEMAPHORES", "SEM_LIMIT", "MUTEX_SLOTS", "DEFAULT_BLOCK"):
        out.add(c_name("SYNC", name), f"{int(getattr(sync, name))}u")
    out.add("SYNC_DEFAULT_CONDITIONS", f"{sync.DEFAULT_CONDITIONS_BY_ARCH[arch]}u")
    out.add("SYNC_SEM_MASK_BITS", f"{sync._SEM_MASK_BITS}u")
    out.add("SYNC_STALLWAIT_CONDITION_BITS", f"{len(conditions)}u")  # sync.stallwait's width check
    out.add("SYNC_CONDITION_COUNT", f"{len(conditions)}u")
    for latch in sync.Latch:
        out.add(c_name("LATCH", latch.name), f"{int(latch)}u")
    bits = sync._BLOCK_BITS[arch]
    table = [0] * 256
    for spec in isa_for(arch):
        table[spec.opcode] = bits[spec.name]
    out.add("SYNC_BLOCK_BITS_INIT", "{" + ", ".join(f"0x{b:03X}" for b in table) + "}")
    for kind, value in (
        ("NONE", _COND_NONE),
        ("UNIT", _COND_UNIT),
        ("UNPACKER", _COND_UNPACKER),
        ("SRC", _COND_SRC),
        ("PACKER", _COND_PACKER),
    ):
        out.add(f"SYNC_COND_{kind}", str(value))
    # Where a PACKER condition finds the packers' drain: the first packer's stream words
    # (pack.stream.accept writes it into every packer's).
    out.add("SYNC_PACKER_DRAINED_WORD", f"{STREAM_DRAINED}u")
    rows = []
    for condition in conditions:
        if condition.unit is not None:
            row = (*_busy_row(condition.unit), 0)
        elif condition.src_bank is not None:
            file, side = regs._SRC_BANK_NAMES[condition.src_bank]
            row = (_COND_SRC, 2 * file + (side == "matrix"), int(condition.src_waits_while))
        else:
            row = (_COND_NONE, 0, 0)
        rows.append("{{{}, {}, {}}}".format(*row))
    out.add("SYNC_CONDITIONS_INIT", "{" + ", ".join(rows) + "}")
    # The mutexes that exist (a bit per index; ATGETM / ATRELM of any other raise in Python).
    out.add("SYNC_NOBODY", str(sync.NOBODY))
    out.add("SYNC_MUTEX_VALID", f"0x{sum(1 << i for i in sync.MUTEXES[arch]):02X}u")
    # streams.py: the registers Streams.read answers from its array (column order); any other reads 0.
    out.add("STREAMS_STORED_COUNT", f"{len(streams._STORED)}u")
    out.add("STREAMS_STORED_INIT", "{" + ", ".join(f"{r}u" for r in streams._STORED) + "}")
    if "STREAMWAIT" not in isa_for(arch).by_name:
        return
    # STREAMWAIT: operand widths, its two conditions as {stream register, ThreadConfig register of
    # the target's high bits, shift, mask}, and the STREAM_ID_SYNC_SEC<n>_BankSel fields
    # {register, shift, mask}.
    out.add("SYNC_STREAM_TARGET_BITS", f"{sync._STREAM_TARGET_BITS}u")
    out.add("SYNC_STREAM_SELECT_BITS", f"{sync._STREAM_SELECT_BITS}u")
    out.add("SYNC_STREAM_CONDITION_COUNT", f"{len(sync._STREAM_CONDITIONS)}u")
    stream_rows = []
    for _, register, high_field in sync._STREAM_CONDITIONS:
        word, shift, width = layout.THREAD_FIELDS[high_field]
        stream_rows.append(f"{{{register}u, {word}u, {shift}u, 0x{(1 << width) - 1:X}u}}")
    out.add("SYNC_STREAM_CONDITIONS_INIT", "{" + ", ".join(stream_rows) + "}")
    selects = 1 << sync._STREAM_SELECT_BITS
    id_rows = []
    for n in range(selects):
        word, shift, width = layout.THREAD_FIELDS[f"STREAM_ID_SYNC_SEC{n}_BankSel"]
        id_rows.append(f"{{{word}u, {shift}u, 0x{(1 << width) - 1:X}u}}")
    out.add("SYNC_STREAM_ID_INIT", "{" + ", ".join(id_rows) + "}")


def _thcon_constants(out: _Defines, layout: ModuleType) -> None:
    """thcon_mem.c's section of ``constants.h``: LOADIND/STOREIND's offset increments, REG2FLOP's
    first THCON Config word, and FLUSHDMA's conditions (each as the clock it reads, as sync.c's)."""
    from tensixsim.tensix import thcon

    out.text("", "/* ---- thcon_mem.c: thcon.py (THCON_*) ---- */")
    out.add("THCON_OFFSET_INCREMENTS_INIT", "{" + ", ".join(str(i) for i in thcon.OFFSET_INCREMENTS) + "}")
    # thcon._thcon_config_base, read off the same field table.
    base = min(word for name, (word, _, _) in layout.CONFIG_FIELDS.items() if name.startswith("THCON_"))
    out.add("THCON_CONFIG_BASE_WORD", f"{base}u")
    rows = []
    for bit, unit in thcon._FLUSH_UNITS:
        rows.append("{{{}, {}, {}}}".format(bit, *_busy_row(unit)))
    out.add("THCON_FLUSH_UNIT_COUNT", f"{len(rows)}u")
    out.add("THCON_FLUSH_UNITS_INIT", "{" + ", ".join(rows) + "}")


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
