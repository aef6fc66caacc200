"""Wormhole's vector unit in the native engine, in lockstep with the Python reference engine.

Wormhole's library runs the vector-unit instructions whose Wormhole semantics are Blackhole's, and
those whose Wormhole semantics it implements itself (gen_fields.OWN_HANDLERS: SFPLOAD / SFPSTORE's
addressing and conversions, the multiply-add, the instructions with fewer modes, SFPLOADMACRO with the
work it schedules, run by the same handlers). Wormhole has no automatic stall after the SFPMAD family
or SFPSHFT2's shuffles: the next instruction must not touch what they wrote (sfpu/hazards.py), which
the native wait gate checks (sfpu_hazard.c) and hands to Python to raise; scheduled work leaves no
such rule.

Random vector-unit programs on one to three pipes, from random state (LRegs heavy in special floats,
lane flags and stacks, LaneConfig, Dst with undefined rows, RWCs, ADDR_MOD slots, the Dst bases and
SrcB format), run on both engines and are compared after every cycle (native/lockstep.py): state,
pipe bookkeeping, statistics, and any error's type, text and place. Back-to-back issues make the
hazard rules bite. Other programs put SFPLOADMACROs among them over random LoadMacroConfig (templates
of every sub-unit's column in Wormhole's modes, now and then one the model turns into SFPNOP;
sequences with every selector, delay and operand bit; Misc's store format, load-format bits and delay
kinds; now and then differing between lanes), so scheduled work runs alone, on several sub-units at
once, discards issued instructions and meets the rules. Most instructions must really run in C, so
the comparison cannot pass by deferring.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_native_sfpu_a import DOCUMENTED, SPECIAL

from tensixsim import Tile
from tensixsim.errors import UndefinedBehavior
from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.adc import ADDR_MODS
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native import gen_fields
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu import unit as sfpu
from tensixsim.tensix.sfpu.hazards import MAD_RESULT

WH = isa_for("wormhole")
pytestmark = pytest.mark.skipif(
    not native.available("wormhole"), reason="no C compiler: the native engine is absent"
)
NATIVE = set(gen_fields.native_instructions("wormhole"))
SFPU = [spec.name for spec in WH if spec.unit == "sfpu"]
# The multiply-add family, drawn more often: its results are what the next cycle's rule guards.
MAD = ("SFPMAD", "SFPADD", "SFPMUL", "SFPADDI", "SFPMULI", "SFPLUT", "SFPLUTFP32")
LOCKSTEP = settings(
    max_examples=max(10, settings.default.max_examples * 6 // 10),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------------------- random words


# Clean values of the slots whose other values Wormhole's semantics reject (UndefinedBehavior): its
# missing modes (negation, SFPSHFT's ARITHMETIC / ARG_IMM_USE_VC, SFPPUSHC's stack-top modes, SFPCAST's
# integer modes, SFP_STOCH_RND's wider rounding field), on top of the documented operand widths the
# Blackhole tests keep to (test_native_sfpu_a.DOCUMENTED).
_NO_NEGATION = [0, 4, 8, 12]
_SMALL = list(range(16))
CLEAN = {
    "SFPMAD": {"instr_mod1": _NO_NEGATION, "lreg_src_a": _SMALL},
    "SFPADD": {"instr_mod1": _NO_NEGATION, "lreg_src_a": _SMALL},
    "SFPMUL": {"instr_mod1": _NO_NEGATION, "lreg_src_a": _SMALL},
    "SFPADDI": {"instr_mod1": [0, 1, 4, 5, 8, 9]},
    "SFPMULI": {"instr_mod1": [0, 1, 4, 5, 8, 9]},
    "SFPLUT": {"dest_reg_addr": [0]},
    "SFPLUTFP32": {"lreg_dest": _SMALL},
    "SFPLOADI": {"instr_mod0": [0, 1, 2, 4, 8, 10]},
    "SFPDIVP2": {"imm12_math": list(range(256))},
    "SFPSHFT": {"instr_mod1": [0, 1, 8, 9]},
    "SFPSHFT2": {"instr_mod1": [0, 1, 2, 3, 4, 5, 6], "imm12_math": _SMALL, "lreg_src_c": [0, 1, 2, 3]},
    "SFPSWAP": {"imm12_math": [0]},
    "SFPTRANSP": {"imm12_math": [0], "lreg_c": [0], "instr_mod1": [0]},
    "SFPPUSHC": {"instr_mod1": [0]},
    "SFPCAST": {"instr_mod1": [0, 1, 4, 5, 8, 13], "lreg_src_c": _SMALL},
    "SFP_STOCH_RND": {"rnd_mode": [0, 1], "imm8_math": [0], "instr_mod1": [0, 1, 2, 3, 4, 5, 6, 7, 12, 13]},
    "SFPAND": {"imm12_math": [0], "instr_mod1": [0]},
    "SFPOR": {"imm12_math": [0], "instr_mod1": [0]},
}


@st.composite
def sfpu_words(draw: st.DrawFn, wild: bool, clean: bool | None = None, names: list[str] | None = None) -> int:
    """A vector-unit word (of ``names``, or any, the multiply-add family and the Dst moves more often):
    LRegs mostly 0..7, any mode, immediates within their documented widths (and the slots of CLEAN
    clean) if ``clean``, else (None) three times in four; Imm10 within Dst. ``wild``: any value of
    every slot."""
    name = draw(st.sampled_from(names or [*SFPU, *MAD, *MAD, "SFPLOAD", "SFPSTORE"]))
    spec = WH.by_name[name]
    if clean is None:
        clean = draw(st.integers(0, 3)) > 0
    documented = DOCUMENTED.get(name, {}) if clean else {}
    fields = {}
    for f in spec.fields:
        top = (1 << f.width) - 1
        if wild:
            value = draw(st.one_of(st.integers(0, min(top, 3)), st.integers(0, top)))
        elif clean and f.name in CLEAN.get(name, {}):
            value = draw(st.sampled_from(CLEAN[name][f.name]))
        elif f.name in documented:
            value = draw(st.integers(0, (1 << documented[f.name]) - 1))
        elif f.name.startswith("lreg") or f.name == "config_dest":
            value = draw(st.one_of(st.integers(0, min(top, 7)), st.integers(0, min(top, 15))))
        elif f.name.startswith("instr_mod") or f.name == "sfpu_addr_mode":
            value = draw(st.integers(0, min(top, 15)))
        elif f.name == "dest_reg_addr":
            value = draw(st.one_of(st.integers(0, 63), st.integers(0, 1023)))
        elif f.name == "rnd_mode":
            value = draw(st.integers(0, 1))
        else:  # immediates: zero or small often
            value = draw(st.one_of(st.just(0), st.integers(0, min(top, 15)), st.integers(0, top)))
        fields[f.name] = value
    return WH.encode(name, **fields)


@st.composite
def programs(draw: st.DrawFn):
    """(pipe, entry) pairs on one to three pipes, issued back to back often, and a state seed. In a
    clean program (most) every word is clean and an SFPMAD-family word is mostly followed by an SFPNOP
    (as kernels leave the cycle its rule asks for), so that programs run long."""
    kind = draw(st.sampled_from(["clean", "clean", "clean", "mixed", "wild"]))
    nop = WH.encode("SFPNOP")
    entries = []
    for pipe in draw(st.sampled_from([(1,), (1,), (0, 1), (0, 1, 2)])):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(1, 24))):
            cycle += draw(st.sampled_from([0, 0, 0, 1, 2]))
            word = draw(sfpu_words(kind == "wild", clean=True if kind == "clean" else None))
            entries.append((pipe, PushedInstruction(word, f"trisc{pipe}", 4 * len(entries), cycle, True)))
            if kind == "clean" and WH.decode(word).name in MAD and draw(st.integers(0, 4)):
                entries.append((pipe, PushedInstruction(nop, f"trisc{pipe}", 4 * len(entries), cycle, True)))
    return entries, draw(st.integers(0, 2**32 - 1))


# ------------------------------------------------------------------------------- random state


def _lanes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    special = SPECIAL[rng.integers(0, len(SPECIAL), shape)]
    random = rng.integers(0, 1 << 32, shape, dtype=np.uint32)
    random = np.where(rng.random(shape) < 0.2, random & 0x3F, random)
    return np.where(rng.random(shape) < 0.5, special, random).astype(np.uint32)


def prepare(seed: int):
    def setup(tile: Tile) -> None:
        rng = np.random.default_rng(seed)
        copro = tile.coprocessor
        s, regs, config, adc = copro.sfpu, copro.regs, copro.config, copro.adc

        def chance(p: float) -> bool:
            return bool(rng.random() < p)

        s.lreg[:] = _lanes(rng, s.lreg.shape)
        if chance(0.8):  # the constant LRegs keep their values mostly
            s.lreg[[8, 9, 10, 15]] = FRESH_CONSTANTS
        if chance(0.3):  # small LReg[7] values: INDIRECT_VA / VD name real LRegs
            s.lreg[7] = rng.integers(0, 16, sfpu.LANES, dtype=np.uint32)
        s.use_lane_flags[:] = rng.random(sfpu.LANES) < rng.choice([0.0, 0.5, 1.0])
        s.lane_flags[:] = rng.random(sfpu.LANES) < rng.choice([0.2, 0.5, 0.8])
        depth = rng.integers(0, sfpu.STACK_DEPTH + 1, sfpu.LANES).astype(np.uint8)
        if chance(0.5):
            depth[:] = depth[0]
        s.stack_depth[:] = depth
        s.flag_stack[:] = rng.random(s.flag_stack.shape) < 0.5
        p = float(rng.choice([0.0, 0.0, 0.05, 0.2]))
        bits = rng.random((sfpu.LANES, 18)) < p
        s.lane_config[:] = (bits * (1 << np.arange(18))).sum(axis=1).astype(np.uint32)
        s.prng[:] = rng.integers(0, 1 << 32, sfpu.LANES, dtype=np.uint32)
        if chance(0.3):
            s.shfl_vc[:] = _lanes(rng, (sfpu.LANES,)).astype(np.int64)
        if chance(0.1):  # a rule left for the first cycles
            s.hazard[:] = (int(rng.integers(0, 4)), int(rng.integers(0, 1 << 17)), 0, MAD_RESULT)

        regs.dst[:] = _lanes(rng, regs.dst.shape).astype(np.uint16)
        regs.dst_row_valid[:] = rng.random(regs.dst_row_valid.shape) > (0.02 if chance(0.2) else 0.0)

        for name in ("srca", "srcb", "dst", "dst_cr"):
            width = 6 if "src" in name else 10
            getattr(adc, name)[:] = rng.integers(0, 1 << width, 3, dtype=np.uint32)
        adc.extra_addr_mod_bit[:] = rng.random(3) < 0.2
        for thread in range(3):
            for slot in range(ADDR_MODS):
                for field in ("AB_SEC{}_SrcAIncr", "AB_SEC{}_SrcBIncr", "DST_SEC{}_DestIncr",
                              "DST_SEC{}_DestCR", "DST_SEC{}_DestClear", "DST_SEC{}_DestCToCR",
                              "BIAS_SEC{}_BiasIncr", "BIAS_SEC{}_BiasClear"):  # fmt: skip
                    name = "ADDR_MOD_" + field.format(slot)
                    width = config.layout.thread_fields[name][2]
                    if chance(0.4):
                        config.write_thread_field(name, thread, int(rng.integers(0, 1 << width)))
            config.write_thread_field("ADDR_MOD_SET_Base", thread, int(chance(0.2)))
            offset = int(rng.integers(0, 1 << 12)) if chance(0.4) else 0
            config.write_thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread, offset)
            config.write_thread_field("CFG_STATE_ID_StateID", thread, int(chance(0.3)))
        for state in range(2):
            base = int(rng.integers(0, 1 << 10)) if chance(0.5) else 0
            config.write_field("DEST_REGW_BASE_Base", state, base)
            for name in ("ALU_ACC_CTRL_SFPU_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcB_override"):
                config.write_field(name, state, int(chance(0.4)))
            for name in ("ALU_FORMAT_SPEC_REG_SrcB_val", "ALU_FORMAT_SPEC_REG1_SrcB"):
                config.write_field(name, state, int(rng.integers(0, 16)))

    return setup


FRESH_CONSTANTS = Tile("wormhole").coprocessor.sfpu.lreg[[8, 9, 10, 15]].copy()


# ------------------------------------------------------------------------------- tests


@LOCKSTEP
@given(programs())
def test_the_vector_unit_runs_natively_as_in_python_on_wormhole(program):
    entries, seed = program
    assert first_difference(prepare(seed), entries, 200, arch="wormhole") is None


# One clean word per instruction the library runs (benign operands and modes), in an order where each
# finds what it needs (SFPPOPC a pushed entry).
EXECUTES = {
    "SFPLOADI": dict(lreg_ind=2, instr_mod0=1, imm16=0xBC00),
    "SFPLOAD": dict(lreg_ind=3, instr_mod0=sfpu.FMT_FP32, sfpu_addr_mode=2, dest_reg_addr=0x155),
    "SFPSTORE": dict(lreg_ind=1, instr_mod0=sfpu.FMT_FP16, sfpu_addr_mode=1, dest_reg_addr=0x3FF),
    # (LoadMacroConfig is zero: macro 0 schedules nothing, a load into LReg[5])
    "SFPLOADMACRO": dict(lreg_ind=1, instr_mod0=sfpu.FMT_FP32, sfpu_addr_mode=3, dest_reg_addr=0x2A1),
    "SFPMAD": dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=4, instr_mod1=0),
    "SFPADD": dict(lreg_src_a=1, lreg_src_b=10, lreg_src_c=3, lreg_dest=5, instr_mod1=0),
    "SFPMUL": dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=9, lreg_dest=6, instr_mod1=4),
    "SFPADDI": dict(imm16_math=0x3F80, lreg_dest=5, instr_mod1=0),
    "SFPMULI": dict(imm16_math=0x4000, lreg_dest=5, instr_mod1=0),
    "SFPLUT": dict(lreg_ind=4, instr_mod0=4, dest_reg_addr=0),
    "SFPLUTFP32": dict(lreg_dest=6, instr_mod1=0),
    "SFPAND": dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=0),
    "SFPOR": dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=0),
    "SFPXOR": dict(imm12_math=0, lreg_c=7, lreg_dest=7, instr_mod1=0),
    "SFPNOT": dict(imm12_math=0, lreg_c=3, lreg_dest=5, instr_mod1=0),
    "SFPSHFT": dict(imm12_math=3, lreg_c=0, lreg_dest=3, instr_mod1=1),
    "SFPIADD": dict(imm12_math=0x801, lreg_c=1, lreg_dest=0, instr_mod1=1),
    "SFPLZ": dict(imm12_math=0, lreg_c=1, lreg_dest=3, instr_mod1=2),
    "SFPABS": dict(imm12_math=0, lreg_c=4, lreg_dest=3, instr_mod1=1),
    "SFPEXEXP": dict(imm12_math=0, lreg_c=4, lreg_dest=3, instr_mod1=0),
    "SFPEXMAN": dict(imm12_math=0, lreg_c=4, lreg_dest=3, instr_mod1=0),
    "SFPSETEXP": dict(imm12_math=0x7F, lreg_c=4, lreg_dest=3, instr_mod1=1),
    "SFPSETMAN": dict(imm12_math=0xABC, lreg_c=4, lreg_dest=3, instr_mod1=1),
    "SFPSETSGN": dict(imm12_math=1, lreg_c=4, lreg_dest=3, instr_mod1=1),
    "SFPDIVP2": dict(imm12_math=3, lreg_c=1, lreg_dest=2, instr_mod1=1),
    "SFPCAST": dict(lreg_src_c=1, lreg_dest=2, instr_mod1=0),
    "SFP_STOCH_RND": dict(rnd_mode=1, imm8_math=0, lreg_src_b=0, lreg_src_c=1, lreg_dest=2, instr_mod1=1),
    "SFPMOV": dict(imm12_math=0, lreg_c=9, lreg_dest=4, instr_mod1=1),
    "SFPSWAP": dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=1),
    "SFPTRANSP": dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0),
    "SFPSHFT2": dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=3),
    "SFPSETCC": dict(imm12_math=0, lreg_c=2, lreg_dest=0, instr_mod1=4),
    "SFPPUSHC": dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0),
    "SFPCOMPC": dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0),
    "SFPPOPC": dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0),
    "SFPENCC": dict(imm12_math=3, lreg_c=0, lreg_dest=0, instr_mod1=10),
    "SFPCONFIG": dict(imm16_math=0x1234, config_dest=15, instr_mod1=3),
    "SFPNOP": {},
}


def _entries(words: list[int], gap: int = 1) -> list[tuple[int, PushedInstruction]]:
    """``words`` pushed by TRISC1 to its pipe, each ``gap`` cycles after the one before."""
    return [(1, PushedInstruction(w, "trisc1", 4 * i, gap * i, True)) for i, w in enumerate(words)]


def test_every_vector_unit_instruction_of_the_library_runs_in_c_on_wormhole():
    """Each runs natively (none handed to Python) with the state and cycles the Python engine gives,
    an SFPNOP after each leaving the cycle the rules ask for."""
    assert set(EXECUTES) == {name for name in NATIVE if WH.by_name[name].unit == "sfpu"}
    nop = WH.encode("SFPNOP")
    words = [w for name, fields in EXECUTES.items() for w in (WH.encode(name, **fields), nop)]
    entries = _entries(words)
    assert first_difference(prepare(7), entries, 200, arch="wormhole") is None
    tile = Tile("wormhole", engine="native")
    prepare(7)(tile)
    tile.coprocessor.sfpu.lane_config[:] = 0  # every lane enabled, no blocked Dst access
    tile.coprocessor.sfpu.use_lane_flags[:] = False
    for pipe, entry in entries:
        tile.queues[pipe].entries.append(entry)
    tile.backend.advance_to(200)
    assert sum(p.issued for p in tile.backend.pipes) == len(words)
    assert int(tile.backend.native.out[native.OUT_NATIVE]) == len(words)


def test_reading_an_sfpmad_result_on_the_next_cycle_is_undefined_on_both_engines():
    """SFPMAD writes LReg[4]; an SFPMOV reading it on the next cycle breaks the rule (the native gate
    hands it to Python, which raises the same error); one that waits a cycle, or reads another LReg,
    runs in C."""
    mad = WH.encode("SFPMAD", **EXECUTES["SFPMAD"])
    reads = WH.encode("SFPMOV", imm12_math=0, lreg_c=4, lreg_dest=5, instr_mod1=0)
    other = WH.encode("SFPMOV", imm12_math=0, lreg_c=3, lreg_dest=5, instr_mod1=0)
    for words, gap, error in (([mad, reads], 1, True), ([mad, other], 1, False), ([mad, reads], 2, False)):
        entries = _entries(words, gap)
        assert first_difference(prepare(3), entries, 20, arch="wormhole") is None
        tile = Tile("wormhole", engine="native")
        prepare(3)(tile)
        for pipe, entry in entries:
            tile.queues[pipe].entries.append(entry)
        if error:
            with pytest.raises(UndefinedBehavior, match=re.escape("SFPMOV reads LReg[4] on the cycle after")):
                tile.backend.advance_to(20)
        else:
            tile.backend.advance_to(20)
            assert int(tile.backend.native.out[native.OUT_NATIVE]) == 2


# ------------------------------------------------------------------------------- SFPLOADMACRO

# What the scheduled work may be: every Wormhole instruction of a sub-unit's column (the multiply-add
# family more often), in clean modes; now and then a word the model schedules SFPNOP for instead (another
# unit's, or an opcode only Blackhole has).
_COLUMN_NAMES = sorted(set().union(*sfpu_macro.COLUMNS[:3]) - {"SFPNOP"})
TEMPLATES = [name for name in _COLUMN_NAMES if name in WH.by_name]
_BLACKHOLE_ONLY_OPCODES = sorted(
    {spec.opcode for spec in isa_for("blackhole")} - {spec.opcode for spec in WH}
)
# SFPLOAD / SFPSTORE formats: the plain ones mostly, Wormhole's integer conversions, any.
_FORMATS = [sfpu.FMT_FP32, sfpu.FMT_FP16, sfpu.FMT_BF16, sfpu.FMT_INT32, sfpu.FMT_SRCB]
_FORMATS += [sfpu.FMT_INT32_SM, sfpu.FMT_INT8_COMP, sfpu.FMT_INT8]


@st.composite
def templates(draw: st.DrawFn, clean: bool) -> int:
    """An InstructionTemplate: a clean word of a column mostly; unless ``clean``, a wilder one or a word
    the model schedules SFPNOP for now and then."""
    kind = draw(st.integers(0, 15)) if not clean else 15
    if kind == 0:
        return draw(st.sampled_from(_BLACKHOLE_ONLY_OPCODES)) << 24 | draw(st.integers(0, 0xFFFFFF))
    if kind == 1:
        return WH.encode("SETDMAREG", **{f.name: 0 for f in WH.by_name["SETDMAREG"].fields})
    return draw(sfpu_words(False, clean=kind > 3, names=[*TEMPLATES, *MAD]))


@st.composite
def macro_sequences(draw: st.DrawFn, clean: bool) -> int:
    """A LoadMacroConfig Sequence: per sub-unit a selector (0 none, 2 SFPNOP, 3 SFPSTORE, 4..7 a
    template; unless ``clean``, now and then 1, or a template on the Store sub-unit: UndefinedBehavior),
    a delay, and the VD-16 and swapped-operand bits."""
    value = 0
    for unit in range(4):
        if unit == sfpu_macro.STORE:
            select = draw(st.sampled_from([0, 0, *[3] * 6, *([] if clean else [4, 1])]))
        else:
            select = draw(st.sampled_from([0, 0, 2, *[4, 5, 6, 7] * 2, *([] if clean else [1])]))
        delay = draw(st.sampled_from([0, 0, 1, 2, 3, 7]))
        bits = draw(st.sampled_from([0, 0, 0, 0, 0x40, 0x80, 0xC0]))
        value |= (select | delay << 3 | bits) << (8 * unit)
    return value


@st.composite
def loadmacro_words(draw: st.DrawFn, clean: bool) -> int:
    """SFPLOADMACRO: any macro and VD, a format, any AddrMod, Imm10 within a few tiles of Dst mostly
    (unless ``clean``, now and then a set bit of no operand)."""
    high = not clean and draw(st.integers(0, 15)) == 0
    return WH.encode(
        "SFPLOADMACRO",
        lreg_ind=draw(st.integers(0, 15)),
        instr_mod0=draw(st.sampled_from([*_FORMATS, *_FORMATS, *range(16)])),
        sfpu_addr_mode=draw(st.integers(0, 3)),
        dest_reg_addr=draw(
            st.integers(0, (1 << 14) - 1) if high else st.one_of(st.integers(0, 63), st.integers(0, 1023))
        ),
    )


@st.composite
def macro_programs(draw: st.DrawFn):
    """(pipe, entry) pairs: SFPLOADMACROs among SFPNOPs and clean vector-unit words on one to three pipes,
    back to back often (an SFPMAD-family word mostly followed by an SFPNOP); the LoadMacroConfig
    (templates, sequences, Misc, whether it differs between lanes) and a state seed. In a clean program
    (most) nothing the model rejects is drawn on purpose, so that programs run long."""
    clean = draw(st.integers(0, 3)) > 0
    config = (
        [draw(templates(clean)) for _ in range(4)],
        [draw(macro_sequences(clean)) for _ in range(4)],
        draw(st.sampled_from([*_FORMATS, *range(16)]))
        | draw(st.integers(0, 15)) << 4
        | draw(st.sampled_from([0, 0, 0, 0xF, 1, 2, 4, 8])) << 8,
        not clean and draw(st.integers(0, 3)) == 0,
    )
    nop = WH.encode("SFPNOP")
    word = st.one_of(
        loadmacro_words(clean), loadmacro_words(clean), st.just(nop), sfpu_words(False, clean=True)
    )
    entries = []
    for pipe in draw(st.sampled_from([(1,), (1,), (0, 1), (0, 1, 2)])):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(2, 24))):
            cycle += draw(st.sampled_from([0, 0, 1, 2, 5]))
            w = draw(word)
            entries.append((pipe, PushedInstruction(w, f"trisc{pipe}", 4 * len(entries), cycle, True)))
            if WH.decode(w).name in MAD and draw(st.integers(0, 4)):
                entries.append((pipe, PushedInstruction(nop, f"trisc{pipe}", 4 * len(entries), cycle, True)))
    return entries, config, draw(st.integers(0, 2**32 - 1))


def prepare_macros(config, seed: int):
    """``prepare``'s random state with ``config``'s LoadMacroConfig (on every lane; differing between
    them in one bit of a Sequence if its last item is set)."""
    template, sequence, misc, uneven = config

    def setup(tile: Tile) -> None:
        prepare(seed)(tile)
        s = tile.coprocessor.sfpu
        s.macro_template[:] = template
        s.macro_sequence[:] = sequence
        s.macro_misc[:] = misc
        if uneven:
            s.macro_sequence[seed % sfpu.LANES, seed % 4] ^= 1 << 3

    return setup


@LOCKSTEP
@given(macro_programs())
def test_sfploadmacro_and_its_work_run_natively_as_in_python_on_wormhole(program):
    entries, config, seed = program
    tile = Tile("wormhole", engine="native")
    assert first_difference(prepare_macros(config, seed), entries, 300, native=tile, arch="wormhole") is None
    scheduled = int(tile.coprocessor.sfpu.macro_clock[sfpu_macro.NEXT_SEQ])
    event(f"instructions scheduled: {min(scheduled // 8, 4) * 8}+")


def _sequence(*units: tuple[int, int, int]) -> int:
    """A Sequence of (selector, delay, operand bits) per sub-unit (Simple, MAD, Round, Store)."""
    return sum((select | delay << 3 | bits) << (8 * unit) for unit, (select, delay, bits) in enumerate(units))


# Templates for the example: SFPAND (its VB the macro's on Wormhole), SFPMAD (Wormhole's multiply-add),
# SFP_STOCH_RND (Round) and SFPSHFT2's SHFLROR1 (Round, recording the LReg[VC] it shuffled).
EXAMPLE_TEMPLATES = [
    WH.encode("SFPAND", imm12_math=0, lreg_c=3, lreg_dest=2, instr_mod1=0),
    WH.encode("SFPMAD", lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=0, instr_mod1=0),
    WH.encode(
        "SFP_STOCH_RND", rnd_mode=0, imm8_math=0, lreg_src_b=0, lreg_src_c=5, lreg_dest=0, instr_mod1=1
    ),
    WH.encode("SFPSHFT2", imm12_math=0, lreg_src_c=6, lreg_dest=0, instr_mod1=3),
]
EXAMPLE_SEQUENCES = [
    # macro 0: SFPAND at once, SFPMAD after 1 (VD 16), the store after 2 (LReg[16])
    _sequence((4, 0, 0), (5, 1, 0x40), (0, 0, 0), (3, 2, 0x40)),
    # macro 1: SFPMAD with the operands swapped, SFP_STOCH_RND after 1, the store of VD after 3
    _sequence((0, 0, 0), (5, 0, 0x80), (6, 1, 0), (3, 3, 0)),
    # macro 2: SFPAND and SFPSHFT2 in one cycle (one writes LReg[16]), the store after 1
    _sequence((4, 1, 0x40), (2, 0, 0), (7, 1, 0), (3, 2, 0)),
    # macro 3: waits for instructions: SFPMAD after two vector-unit issues, the store after three
    _sequence((0, 0, 0), (5, 2, 0), (0, 0, 0), (3, 3, 0)),
]
EXAMPLE_MISC = sfpu.FMT_INT32_SM | 0b0010 << 4 | 0b1010 << 8  # macro 1 stores in its load's format


def benign_macros(config, seed: int):
    """``prepare_macros`` with every lane enabled, no blocked Dst access, Dst defined, no rule left."""

    def setup(tile: Tile) -> None:
        prepare_macros(config, seed)(tile)
        s = tile.coprocessor.sfpu
        s.lane_config[:] = 0
        s.use_lane_flags[:] = False
        s.hazard[:] = sfpu.HAZARD_RESET
        tile.coprocessor.regs.dst_row_valid[:] = True

    return setup


def test_a_pipeline_of_sfploadmacros_runs_entirely_in_c_on_wormhole():
    """SFPLOADMACROs over the four macros, each scheduling work on two to three sub-units (at once, in
    one cycle, counted in cycles or in instructions) among SFPNOPs and an issued SFPMAD the scheduled
    work discards: every instruction runs in C, with the state and cycles the Python engine gives."""
    macro = [
        WH.encode("SFPLOADMACRO", lreg_ind=m << 2 | vd & 3, instr_mod0=fmt, sfpu_addr_mode=am,
                  dest_reg_addr=(imm << 1 | vd >> 2) & 0x3FF)
        for m, vd, fmt, am, imm in ((0, 1, sfpu.FMT_FP32, 1, 4), (1, 5, sfpu.FMT_INT32, 0, 8),
                                    (2, 2, sfpu.FMT_FP16, 2, 12), (3, 3, sfpu.FMT_BF16, 0, 16),
                                    (0, 6, sfpu.FMT_FP32, 3, 20))
    ]  # fmt: skip
    nop = WH.encode("SFPNOP")
    mad = WH.encode("SFPMAD", lreg_src_a=1, lreg_src_b=10, lreg_src_c=3, lreg_dest=7, instr_mod1=0)
    words = [macro[0], nop, macro[1], mad, nop, nop, nop, macro[2], nop, nop, macro[3], nop, nop, nop,
             nop, macro[4], nop, nop, nop, nop]  # fmt: skip
    setup = benign_macros((EXAMPLE_TEMPLATES, EXAMPLE_SEQUENCES, EXAMPLE_MISC, False), 5)
    entries = _entries(words)
    assert first_difference(setup, entries, 100, arch="wormhole") is None
    tile = Tile("wormhole", engine="native")
    setup(tile)
    before, l7 = tile.coprocessor.regs.dst.copy(), tile.coprocessor.sfpu.lreg[7].copy()
    for pipe, entry in entries:
        tile.queues[pipe].entries.append(entry)
    tile.backend.advance_to(100)
    s = tile.coprocessor.sfpu
    assert sum(p.issued for p in tile.backend.pipes) == len(words)
    assert int(tile.backend.native.out[native.OUT_NATIVE]) == len(words)
    assert int(s.macro_clock[sfpu_macro.NEXT_SEQ]) == 3 + 3 + 4 + 2 + 3  # every row was scheduled...
    assert not s.macro_pending[:, sfpu_macro.VALID].any()  # ...and has run
    assert not np.array_equal(tile.coprocessor.regs.dst, before)  # (the stores wrote Dst)
    assert (s.shfl_vc >= 0).all()  # the scheduled SFPSHFT2 recorded what it read
    assert np.array_equal(s.lreg[7], l7)  # the issued SFPMAD (VD 7) was discarded


def test_the_checker_catches_a_broken_native_sfploadmacro_on_wormhole():
    """Against a Wormhole library whose scheduler counts the old work down one step too few, the
    lockstep check fails."""
    broken = native.library(defines=("TSIM_MUTANT_MACRO_TICK",), arch="wormhole")
    assert broken is not None
    tile = Tile("wormhole", engine="native")
    tile.backend.native.use_library(broken)
    config = (EXAMPLE_TEMPLATES, EXAMPLE_SEQUENCES, sfpu.FMT_FP32, False)
    macro = WH.encode("SFPLOADMACRO", lreg_ind=0, instr_mod0=sfpu.FMT_FP32, sfpu_addr_mode=0, dest_reg_addr=0)
    nop = WH.encode("SFPNOP")
    found = first_difference(benign_macros(config, 3), _entries([macro, nop, nop, nop]), 40, native=tile,
                             arch="wormhole")  # fmt: skip
    assert found is not None and "sfpu.macro_pending" in found
