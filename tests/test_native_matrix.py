"""The native matrix unit (tensixsim/tensix/native/matrix*.c, src_banks.c) against the Python semantics
(matrix/unit.py's MVMUL, DOTPV, GAPOOL, ELWADD, ELWSUB, ELWMUL; regs.py's ZEROACC, ZEROSRC, CLEARDVALID,
SETDVALID; unpack/src_banks.py's UNPACR_NOP; matrix/moves.py's MOVA2D, MOVB2D, MOVD2A, MOVD2B, MOVB2A and
held_until).

As in test_native_ops.py, two tiles start every example from identical random state; one runs a random
word natively, the other through the Python semantics. A deferred word must leave its tile exactly as
it was; an executed one must retire in the Python semantics' cycles and leave every state array of both
tiles equal. The state drawn here is the matrix unit's: SrcA / SrcB banks full of special 19-bit
datums (zero and all-ones exponents, FP16-range exponents, full and empty mantissas) or of ordinary
values (some small enough for products to underflow), bank ownership (the matrix unit's and the
unpackers' banks, hand-overs on their way, the unpackers' SrcRow, an UNPACR still fetching), Dst
(contents, undefined rows, blocks still hidden around the issue cycle), the RWCs, ADDR_MOD slots and
the configuration the formats, fidelity phase and Dst rows come from. Every instruction must really
run natively in a good share of its examples, so the comparison cannot pass by deferring everything;
fixed words and states show the ordinary cases run in C and the waits wait with Python's reason. In
the engine, random programs of these instructions on the unpack and math pipes run in lockstep with
the Python engine (native/lockstep.py), and a move waits for the bank the unpackers then hand over.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_native_ops import (
    FRESH,
    TILES,
    Comparison,
    _arrays,
    mismatches,
    native_settings,
    random_comparisons,
    random_dst,
    run_on_both,
)
from wormhole_lockstep import pushed

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.raw import MATH_THREAD, configure_matmul, load_src_tile, matmul_tile_words, run_words
from tensixsim.tensix import formats, native
from tensixsim.tensix.adc import ADDR_MODS
from tensixsim.tensix.config import fields_blackhole as cfg
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.matrix import moves
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.regs import SRCA, SRCB, SrcClient
from tensixsim.tensix.semantics import Wait
from tensixsim.tensix.sfpu import macro

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

NATIVE = ("MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWADD", "ELWSUB", "ELWMUL", "ZEROACC", "MOVA2D", "MOVB2D",
          "MOVD2A", "MOVD2B", "MOVB2A", "MOVDBGA2D", "ZEROSRC", "CLEARDVALID", "SETDVALID", "UNPACR_NOP",
          "SHIFTXA", "SHIFTXB", "TRNSPSRCB", "GATESRCRST", "CLREXPHIST")  # fmt: skip
# The share of random examples that must run natively, waits included (the rest defer: integer math,
# undocumented operand bits or ADDR_MOD state, forms Python does not implement...).
MIN_NATIVE_SHARE = 0.25

# ------------------------------------------------------------------------------- random state

# 19-bit Src datums are sign (bit 18), mantissa (8..17), exponent (0..7).
_SPECIAL_EXPONENTS = [0, 0, 1, 2, 0x1F, 0x20, 0x70, 0x71, 0x7F, 0x80, 0xFE, 0xFF, 0xFF, 15, 16, 31]
_SPECIAL_MANTISSAS = [0, 0x3FF, 0x200, 0x001, 0x007, 0x008, 0x07F, 0x380, 0x3F8, 0x1FF]


def _datums(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Src datums of one flavour: special-heavy, ordinary (exponents near 127), small (products that
    underflow), or anything; now and then a bit above the 19 set."""
    flavour = rng.choice(["special", "ordinary", "small", "any"], p=[0.35, 0.3, 0.15, 0.2])
    sign = rng.integers(0, 2, shape, dtype=np.uint32)
    man = rng.integers(0, 1 << 10, shape, dtype=np.uint32)
    if flavour == "ordinary":
        exp = rng.integers(110, 140, shape)
    elif flavour == "small":
        exp = rng.integers(1, 90, shape)
    else:
        exp = rng.integers(0, 256, shape)
    exp = exp.astype(np.uint32)
    if flavour == "special":
        pick = rng.random(shape) < 0.6
        exp = np.where(pick, np.array(_SPECIAL_EXPONENTS, np.uint32)[rng.integers(0, 16, shape)], exp)
        pick = rng.random(shape) < 0.5
        man = np.where(pick, np.array(_SPECIAL_MANTISSAS, np.uint32)[rng.integers(0, 10, shape)], man)
    zero = rng.random(shape) < rng.choice([0.0, 0.1, 0.5])
    exp = np.where(zero, 0, exp).astype(np.uint32)
    datums = sign << 18 | man << 8 | exp
    if rng.random() < 0.05:
        datums |= (rng.random(shape) < 0.1).astype(np.uint32) << rng.integers(19, 32, shape).astype(np.uint32)
    return datums.astype(np.uint32)


# Dst16 patterns worth hitting: zeros, the BF16 / FP16 extremes and NaN / infinity patterns in the
# Dst16 layouts (sign, mantissa, exponent), ones, small exponents.
_DST_SPECIAL = np.array(
    [0x0000, 0x8000, 0x00FF, 0x80FF, 0x7FFF, 0xFFFF, 0x01FF, 0x0001, 0x8001, 0x007F, 0x0080, 0x001F,
     0x7FE0, 0x7FFF, 0x0010, 0x0011, 0x7F01, 0x3F7F],
    np.uint16,
)  # fmt: skip


def _thread_field(values: np.ndarray, name: str, value: int, pipe: int) -> None:
    reg, shift, width = cfg.THREAD_FIELDS[name]
    mask = ((1 << width) - 1) << shift
    values[pipe, reg] = (int(values[pipe, reg]) & ~mask) | ((value << shift) & mask)


def _config_field(values: np.ndarray, name: str, state: int, value: int) -> None:
    word, shift, width = cfg.CONFIG_FIELDS[name]
    mask = ((1 << width) - 1) << shift
    values[state, word] = (int(values[state, word]) & ~mask) | ((value << shift) & mask)


_ADDR_MOD_FIELDS = (
    ("AB", ("SrcAIncr", "SrcACR", "SrcAClear", "SrcBIncr", "SrcBCR", "SrcBClear")),
    ("DST", ("DestIncr", "DestCR", "DestClear", "DestCToCR", "FidelityIncr", "FidelityClear")),
    ("BIAS", ("BiasIncr", "BiasClear")),
)
_FORMAT_CODES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15]  # 12 and 13 name no format


def draw_state(seed: int, cycle: int) -> dict[str, np.ndarray]:
    """A fresh tile's state with the arrays the matrix unit reads drawn from ``seed`` around ``cycle``."""
    rng = np.random.default_rng(seed)
    s = {name: array.copy() for name, array in FRESH.items() if name != "l1"}

    def chance(p: float) -> bool:
        return bool(rng.random() < p)

    # SrcA / SrcB: the banks, who owns them, which one the matrix unit reads.
    s["regs.srca"], s["regs.srcb"] = _datums(rng, (2, 64, 16)), _datums(rng, (2, 64, 16))
    bank = rng.integers(0, 2, 2).astype(np.uint8)
    s["regs.matrix_bank"], s["regs.unpacker_bank"] = bank, rng.integers(0, 2, 2).astype(np.uint8)
    client = rng.integers(0, 2, (2, 2)).astype(np.uint8)
    for file in (SRCA, SRCB):
        if chance(0.95):
            client[file, bank[file]] = SrcClient.MATRIX_UNIT
    s["regs.src_client"] = client
    s["regs.src_handover_at"] = np.where(rng.random((2, 2)) < 0.2, cycle + 5, -1).astype(np.int64)

    # Dst: contents, undefined rows, blocks hidden after a write around the issue cycle.
    ready = random_dst(s, rng, cycle, _DST_SPECIAL, hidden=0.3)
    s["regs.dst_sfpu_ready"] = (ready - rng.integers(0, 3, 128)).astype(np.int64)
    s["regs.move_hold"] = np.array([rng.integers(0, 7), cycle + rng.integers(-3, 4)], np.int64)
    s["regs.srca_row_latch"] = np.array([rng.integers(-1, 64)], np.int64)
    if chance(0.05):  # outstanding SFPLOADMACRO work: everything defers
        s["sfpu.macro_pending"][rng.integers(0, len(s["sfpu.macro_pending"])), macro.VALID] = 1

    # RWCs: mostly within their widths; ExtraAddrModBit (Unimplemented with any ADDR_MOD) rarely set.
    for name, width in (("srca", 6), ("srca_cr", 6), ("srcb", 6), ("srcb_cr", 6), ("dst", 10), ("dst_cr", 10),
                        ("fidelity_phase", 2)):  # fmt: skip
        key = f"adc.{name}"
        bits = width if chance(0.9) else int(rng.choice([10, 32]))
        s[key] = rng.integers(0, 1 << bits, s[key].shape, dtype=np.uint64).astype(np.uint32)
    if chance(0.6):  # MVMUL's sixteen SrcA rows within the bank, as programs keep them
        s["adc.srca"] = rng.integers(0, 48, 3).astype(np.uint32)
    s["adc.extra_addr_mod_bit"] = (rng.random(3) < 0.05).astype(np.uint32)

    # ThreadConfig: ADDR_MOD slots (the AB2 bits, Unimplemented, rarely set), the fidelity base, the
    # math Dst offset, the state id, FP16A_FORCE; now and then every register random.
    thread = s["config.thread"]
    if chance(0.05):
        thread[...] = rng.integers(0, 1 << 16, thread.shape, dtype=np.uint16)
    for pipe, slot in np.ndindex(len(thread), ADDR_MODS):
        for kind, names in _ADDR_MOD_FIELDS:
            for name in names:
                width = cfg.THREAD_FIELDS[f"ADDR_MOD_{kind}_SEC{slot}_{name}"][2]
                value = int(rng.integers(0, 1 << width)) if chance(0.4) else 0
                _thread_field(thread, f"ADDR_MOD_{kind}_SEC{slot}_{name}", value, pipe)
        for name in ("SrcAIncr", "SrcBIncr"):
            _thread_field(thread, f"ADDR_MOD_AB2_SEC{slot}_{name}", int(chance(0.02)), pipe)
    for pipe in range(len(thread)):
        _thread_field(thread, "FIDELITY_BASE_Phase", int(rng.integers(0, 4)), pipe)
        offset = int(rng.integers(0, 1 << 12)) if chance(0.4) else 0
        _thread_field(thread, "DEST_TARGET_REG_CFG_MATH_Offset", offset, pipe)
        _thread_field(thread, "CFG_STATE_ID_StateID", int(rng.integers(0, 2)), pipe)
        _thread_field(thread, "FP16A_FORCE_Enable", int(chance(0.1)), pipe)
        for name in ("CLR_DVALID_SrcA_Disable", "CLR_DVALID_SrcB_Disable"):
            _thread_field(thread, name, int(chance(0.3)), pipe)

    # Config: the formats, the Dst base, remap / swizzle; now and then every word random.
    words = s["config.config"]
    if chance(0.05):
        words[...] = rng.integers(0, 1 << 32, words.shape, dtype=np.uint32)
    for state in range(2):
        _config_field(words, "ALU_ACC_CTRL_Fp32_enabled", state, int(chance(0.5)))
        _config_field(words, "ALU_ACC_CTRL_INT8_math_enabled", state, int(chance(0.05)))
        _config_field(words, "ALU_ACC_CTRL_Zero_Flag_disabled_src", state, int(chance(0.3)))
        _config_field(words, "ALU_FORMAT_SPEC_REG_SrcA_override", state, int(chance(0.3)))
        for name in ("ALU_FORMAT_SPEC_REG_SrcA_val", "ALU_FORMAT_SPEC_REG0_SrcA"):
            code = int(rng.choice(_FORMAT_CODES)) if chance(0.95) else int(rng.integers(12, 14))
            _config_field(words, name, state, code)
        base = int(rng.integers(0, 1 << int(rng.choice([10, 16])))) if chance(0.4) else 0
        _config_field(words, "DEST_REGW_BASE_Base", state, base)
        for name in ("DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b"):
            _config_field(words, name, state, int(chance(0.3)))
    if chance(0.7):  # global words hold one value, really
        words[1, cfg.GLOBAL_CFGREG_BASE_ADDR32 :] = words[0, cfg.GLOBAL_CFGREG_BASE_ADDR32 :]

    # The unpackers' side of the banks: the SrcRow a hand-over resets it to, and an UNPACR still
    # fetching around the issue cycle (UNPACR_NOP waits for it).
    for pipe in range(len(thread)):
        for name in ("SRCA_SET_Base", "SRCB_SET_Base"):
            _thread_field(thread, name, int(rng.integers(0, 4)), pipe)
    s["regs.unpacker_src_row"] = rng.integers(0, 64, s["regs.unpacker_src_row"].shape).astype(np.uint32)
    late = rng.random(2) < 0.2
    end = np.where(late, cycle + rng.integers(1, 40, 2), cycle - rng.integers(0, 5, 2))
    s["unpackers.end"] = end.astype(np.int64)
    return s


def load_state(state: dict[str, np.ndarray]) -> None:
    """Give both tiles ``state`` (L1 and everything not drawn: a fresh tile's)."""
    for tile in TILES:
        for name, array in _arrays(tile).items():
            if name != "l1":  # no handler here touches L1; the snapshot still compares it
                array[...] = state.get(name, FRESH[name])


# ------------------------------------------------------------------------------- running one word


def compare(
    name: str,
    fields: dict[str, int],
    thread: int,
    cycle: int,
    seed: int,
    adjust: Callable[[dict[str, np.ndarray]], None] | None = None,
) -> Comparison:
    """Both tiles from the state drawn from ``seed`` (changed by ``adjust``); the word natively on one,
    through its Python semantics on the other."""
    state = draw_state(seed, cycle)
    if adjust is not None:
        adjust(state)
    load_state(state)
    return run_on_both(ISA.encode(name, **fields), thread, cycle)


# ------------------------------------------------------------------------------- random words


def _slot(name: str, field: str) -> st.SearchStrategy[int]:
    return st.integers(0, next(f.max_value for f in ISA.by_name[name].fields if f.name == field))


# The documented operands (the semantics' ctx.documented calls) and the common choices: most words
# keep to them, so most examples get past the operand checks; bank flips (clear_dvalid) always defer.
_WITHIN = {
    "clear_dvalid": st.just(0),
    "addr_mode": st.integers(0, 7),
    "dst": st.integers(0, 1023),
    "dest_accum_en": st.integers(0, 1),
    "clear_mode": st.integers(0, 3),
    "use_32_bit_mode": st.integers(0, 1),
    "clear_zero_flags": st.just(0),
    "where": st.one_of(st.integers(0, 80), st.integers(0, 1023)),
    "dest_32b_lo": st.integers(0, 1),
    "src": st.integers(0, 63),
    "instr_mod": st.sampled_from([0, 2]),  # MOVA2D's Move8Rows
    "movb2d_instr_mod": st.integers(0, 7),
    "pool_addr_mode": st.integers(0, 7),
    "srca": st.integers(0, 63),
    "srcb": st.integers(0, 63),
    "max_pool_index_en": st.sampled_from([0, 0, 0, 1]),
    # ZEROSRC, CLEARDVALID, SETDVALID
    "zero_val": st.integers(0, 1),
    "write_mode": st.integers(0, 1),
    "bank_mask": st.integers(0, 1),
    "src_mask": st.integers(0, 3),
    "cleardvalid": st.integers(0, 3),
    "reset": st.sampled_from([0, 0, 0, 1, 2, 3]),
    "setvalid": st.integers(0, 3),
    # UNPACR_NOP: ZEROSRC (unpack_pop 1), Nop or SETDVALID (2, clr_to1_fmt_ctrl 3), the overlay forms
    "unpacker_select": st.integers(0, 1),
    "stream_id": st.just(0),
    "msg_clr_cnt": st.just(0),
    "set_dvalid": st.integers(0, 1),
    "clr_to1_fmt_ctrl": st.sampled_from([0, 0, 0, 3]),
    "stall_clr_cntrl": st.integers(0, 1),
    "bank_clr_ctrl": st.integers(0, 1),
    "src_clr_val_ctrl": st.sampled_from([0, 0, 1, 2]),
    "unpack_pop": st.sampled_from([1, 1, 2, 2, 0, 3]),
    # SHIFTXA, SHIFTXB, GATESRCRST
    "log2_amount2": st.just(0),
    "shift_mode": st.sampled_from([2, 3, 2, 3, 0, 1]),
    "rot_shift": st.integers(0, 1),
    "shift_row": st.integers(0, 63),
    "reset_srcb_gate_control": st.integers(0, 1),
    "reset_srca_gate_control": st.integers(0, 1),
}
# instr_mod19's documented values: MVMUL's BroadcastSrcBRow, DOTPV's 0, GAPOOL's 0 or 1 (ignored),
# the element-wise instructions' two broadcast bits.
_MOD19 = {"MVMUL": 1, "DOTPV": 0, "GAPOOL": 1}


# Instructions whose forms take different operands: a valid word is one of these forms (the operands
# not named drawn as _WITHIN has them), now and then one of the rare ones (Python raises on most of
# them). UNPACR_NOP's Nop and SETDVALID want every other operand 0.
_QUIET_NOP = {n: st.just(0) for n in ("set_dvalid", "stall_clr_cntrl", "bank_clr_ctrl", "src_clr_val_ctrl")}
_FORMS: dict[str, tuple[dict[str, st.SearchStrategy[int]], ...]] = {
    "UNPACR_NOP": (
        {"unpack_pop": st.just(1), "clr_to1_fmt_ctrl": st.just(0)},
        {"unpack_pop": st.just(1)},
        {**_QUIET_NOP, "unpack_pop": st.just(2), "clr_to1_fmt_ctrl": st.sampled_from([0, 3])},
    ),
    # GMPOOL: the documented 16x16 pooling, with and without ArgMax
    "GMPOOL": ({"instr_mod19": st.just(1), "max_pool_index_en": st.integers(0, 1)},),
    # SHIFTXA's one operand beyond the direction must be 0
    "SHIFTXA": ({"shift_mode": st.sampled_from([2, 3])},),
}
_RARE_FORMS: dict[str, tuple[dict[str, st.SearchStrategy[int]], ...]] = {
    "UNPACR_NOP": ({"unpack_pop": st.sampled_from([0, 2, 3])},),  # the overlay forms, a noisy Nop
    "GMPOOL": ({"instr_mod19": st.integers(0, 7)},),  # pooling shapes no page describes
    "SHIFTXA": ({},),  # the reserved directions
}


def valid_words_of(name: str, rare: bool = True) -> st.SearchStrategy[dict[str, int]]:
    """Random words within the documented operands: one of the instruction's forms, or (``rare``) now
    and then one of its rare ones."""
    names = [f.name for f in ISA.by_name[name].fields]
    within = dict(_WITHIN, instr_mod19=st.integers(0, _MOD19.get(name, 3)))
    forms = _FORMS.get(name, ({},))
    forms = [*forms, *forms, *_RARE_FORMS.get(name, ())] if rare else forms
    return st.one_of([st.fixed_dictionaries({n: {**within, **form}[n] for n in names}) for form in forms])


def words_of(name: str) -> st.SearchStrategy[dict[str, int]]:
    """Random words: five in six within the documented operands, the rest anything."""
    valid = valid_words_of(name)
    anything = st.fixed_dictionaries({f.name: _slot(name, f.name) for f in ISA.by_name[name].fields})
    return st.one_of(valid, valid, valid, valid, valid, anything)


SETTINGS = native_settings(600)


@pytest.mark.parametrize("name", NATIVE)
def test_native_matches_python_or_defers_unchanged(name):
    cycles = st.one_of(st.integers(20, 64), st.integers(1000, 2**40))
    counts = random_comparisons(SETTINGS, words_of(name), cycles, lambda *a: compare(name, *a))
    assert counts["native"] >= MIN_NATIVE_SHARE * sum(counts.values()), counts


# ------------------------------------------------------------------------------- fixed words


def _ordinary(state: dict[str, np.ndarray], *, fp32: int = 1, src_format: int = formats.BF16) -> None:
    """A state an ordinary word runs natively in: both banks the matrix unit's, nothing hidden or
    scheduled, plain RWCs and ADDR_MOD slot 0, one Config state with the given Dst and SrcA formats."""
    state["regs.src_client"][...] = SrcClient.MATRIX_UNIT
    state["regs.dst_ready"][...] = 0
    state["sfpu.macro_pending"][...] = 0
    for name in ("srca", "srcb", "dst", "fidelity_phase", "extra_addr_mod_bit"):
        state[f"adc.{name}"][...] = 0
    thread = state["config.thread"]
    for pipe in range(len(thread)):
        for kind, names in _ADDR_MOD_FIELDS:
            for field in names:
                _thread_field(thread, f"ADDR_MOD_{kind}_SEC0_{field}", 0, pipe)
        for field in ("AB2_SEC0_SrcAIncr", "AB2_SEC0_SrcBIncr"):
            _thread_field(thread, f"ADDR_MOD_{field}", 0, pipe)
        _thread_field(thread, "CFG_STATE_ID_StateID", 0, pipe)
        _thread_field(thread, "FP16A_FORCE_Enable", 0, pipe)
    words = state["config.config"]
    _config_field(words, "ALU_ACC_CTRL_Fp32_enabled", 0, fp32)
    _config_field(words, "ALU_ACC_CTRL_INT8_math_enabled", 0, 0)
    _config_field(words, "ALU_FORMAT_SPEC_REG_SrcA_override", 0, 0)
    _config_field(words, "ALU_FORMAT_SPEC_REG0_SrcA", 0, src_format)


def _ordinary_values(state: dict[str, np.ndarray]) -> None:
    """Ordinary values in both Src files: no product can underflow (dot16's exact path)."""
    _ordinary(state)
    rng = np.random.default_rng(1)
    for file in ("srca", "srcb"):
        exp = rng.integers(110, 140, (2, 64, 16)).astype(np.uint32)
        state[f"regs.{file}"] = (
            rng.integers(0, 2, (2, 64, 16), dtype=np.uint32) << 18
            | exp
            | (rng.integers(0, 1 << 10, (2, 64, 16), dtype=np.uint32) << 8)
        )


def _tiny_values(state: dict[str, np.ndarray]) -> None:
    """Small values in both Src files: products and partial sums underflow (dot16's FTZ path)."""
    _ordinary_values(state)
    for file in ("srca", "srcb"):
        state[f"regs.{file}"] = (state[f"regs.{file}"] & ~np.uint32(0xFF)) | np.uint32(62)


def _handing(state: dict[str, np.ndarray]) -> None:
    """An ordinary state in which the unpackers own the banks they write (the matrix unit the others)
    and have nothing in flight: each file's banks are split, as between two tiles of a kernel."""
    _ordinary(state)
    bank = state["regs.matrix_bank"] = np.array([0, 1], np.uint8)
    state["regs.unpacker_bank"] = 1 - bank
    state["regs.src_client"][[SRCA, SRCB], 1 - bank] = SrcClient.UNPACKERS
    state["unpackers.end"][...] = 0


def _with(change: Callable[[dict[str, np.ndarray]], None]) -> Callable[[dict[str, np.ndarray]], None]:
    def adjust(state: dict[str, np.ndarray]) -> None:
        _ordinary(state)
        change(state)

    return adjust


def _set_thread(name: str, value: int) -> Callable[[dict[str, np.ndarray]], None]:
    return _with(lambda s: [_thread_field(s["config.thread"], name, value, p) for p in range(3)])


def _set_config(name: str, value: int) -> Callable[[dict[str, np.ndarray]], None]:
    return _with(lambda s: _config_field(s["config.config"], name, 0, value))


def _set(key: str, index: tuple[int, ...] | slice, value: int) -> Callable[[dict[str, np.ndarray]], None]:
    return _with(lambda s: s[key].__setitem__(index, value))


_MVMUL = dict(clear_dvalid=0, instr_mod19=0, addr_mode=0, dst=0)
_ELW = dict(clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=0, dst=0)
_ZEROACC = dict(clear_mode=0, use_32_bit_mode=0, clear_zero_flags=0, addr_mode=0, where=0)
_MOVE = dict(dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
_MOVB2D = dict(dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=0)
_ZEROSRC = dict(zero_val=0, write_mode=0, bank_mask=0, src_mask=3)
_NOP = dict(unpacker_select=0, stream_id=0, msg_clr_cnt=0, set_dvalid=0, clr_to1_fmt_ctrl=0,
            stall_clr_cntrl=0, bank_clr_ctrl=0, src_clr_val_ctrl=0, unpack_pop=2)  # fmt: skip
_NOP_ZEROSRC = {**_NOP, "unpack_pop": 1, "stall_clr_cntrl": 1}


def _fp16(state: dict[str, np.ndarray]) -> None:
    _ordinary(state, fp32=0, src_format=formats.FP16)


_GMPOOL = dict(clear_dvalid=0, instr_mod19=1, pool_addr_mode=0, max_pool_index_en=0, dst=0)
_ARGMAX = {**_GMPOOL, "max_pool_index_en": 1}
_SHIFTXB = dict(addr_mode=0, rot_shift=0, shift_row=0)
_RIGHT, _LEFT = dict(log2_amount2=0, shift_mode=2), dict(log2_amount2=0, shift_mode=3)


def _latched(row: int) -> Callable[[dict[str, np.ndarray]], None]:
    """An ordinary state with ordinary values whose latched SrcA row address (SHIFTXA's input) is ``row``."""

    def adjust(state: dict[str, np.ndarray]) -> None:
        _ordinary_values(state)
        state["regs.srca_row_latch"][...] = row

    return adjust


def _repeating(state: dict[str, np.ndarray]) -> None:
    """No SrcA row address latched, but the four 16-row blocks of SrcA alike: SHIFTXA's input is known."""
    _latched(-1)(state)
    state["regs.srca"][:, 16:] = np.tile(state["regs.srca"][:, :16], (1, 3, 1))


EXECUTES: dict[str, tuple[str, dict[str, int], Callable[[dict[str, np.ndarray]], None]]] = {
    "MVMUL FP32": ("MVMUL", {**_MVMUL, "dst": 16}, _ordinary_values),
    "MVMUL underflowing": ("MVMUL", {**_MVMUL, "dst": 16}, _tiny_values),
    "MVMUL BF16 Dst": ("MVMUL", {**_MVMUL, "dst": 8}, lambda s: _ordinary(s, fp32=0)),
    "MVMUL FP16": ("MVMUL", _MVMUL, lambda s: _ordinary(s, fp32=0, src_format=formats.FP16)),
    "MVMUL TF32 broadcast": ("MVMUL", {**_MVMUL, "instr_mod19": 1, "dst": 40},
                             lambda s: _ordinary(s, src_format=formats.TF32)),
    "ELWADD accumulating": ("ELWADD", {**_ELW, "dest_accum_en": 1, "dst": 8}, _ordinary),
    "ELWSUB broadcast": ("ELWSUB", {**_ELW, "instr_mod19": 3, "dst": 8}, _ordinary),
    "ELWMUL": ("ELWMUL", {**_ELW, "instr_mod19": 1, "dst": 24}, _ordinary),
    "ZEROACC one row": ("ZEROACC", {**_ZEROACC, "where": 5}, _ordinary),
    "ZEROACC face": ("ZEROACC", {**_ZEROACC, "clear_mode": 1, "use_32_bit_mode": 1, "where": 3}, _ordinary),
    "ZEROACC half": ("ZEROACC", {**_ZEROACC, "clear_mode": 2, "where": 1}, _ordinary),
    "ZEROACC all": ("ZEROACC", {**_ZEROACC, "clear_mode": 3}, _ordinary),
    "DOTPV": ("DOTPV", {**_ELW, "dst": 16}, _ordinary_values),
    "GAPOOL": ("GAPOOL", dict(clear_dvalid=0, instr_mod19=1, pool_addr_mode=0, max_pool_index_en=0, dst=12),
               _ordinary_values),
    "MOVD2A four rows": ("MOVD2A", {**_MOVE, "instr_mod": 2, "src": 5, "dst": 9}, _ordinary_values),
    "MOVD2B Dst16b": ("MOVD2B", {**_MOVE, "dst": 3}, lambda s: _ordinary(s, fp32=0)),
    "MOVD2A TF32 low half": ("MOVD2A", {**_MOVE, "dest_32b_lo": 1, "dst": 7},
                             lambda s: _ordinary(s, src_format=formats.TF32)),
    "MOVB2A four rows": ("MOVB2A", dict(srca=4, addr_mode=0, instr_mod=2, srcb=9), _ordinary_values),
    "MOVA2D eight rows": ("MOVA2D", {**_MOVE, "instr_mod": 2, "src": 9, "dst": 21}, _ordinary_values),
    "MOVA2D Dst32b low half": ("MOVA2D", {**_MOVE, "dest_32b_lo": 1, "dst": 5}, _ordinary_values),
    "MOVA2D TF32": ("MOVA2D", {**_MOVE, "dst": 30}, lambda s: _ordinary(s, src_format=formats.TF32)),
    "MOVA2D FP16": ("MOVA2D", {**_MOVE, "dst": 30}, lambda s: _ordinary(s, src_format=formats.FP16)),
    "MOVB2D broadcast": ("MOVB2D", {**_MOVB2D, "movb2d_instr_mod": 3, "src": 7, "dst": 16}, _ordinary_values),
    "MOVB2D four rows": ("MOVB2D", {**_MOVB2D, "movb2d_instr_mod": 4, "src": 6, "dst": 13}, _ordinary_values),
    "ZEROSRC unpackers' banks": ("ZEROSRC", _ZEROSRC, _ordinary_values),
    "ZEROSRC matrix unit's SrcA to -inf": (
        "ZEROSRC", {**_ZEROSRC, "zero_val": 1, "write_mode": 1, "src_mask": 1}, _ordinary_values
    ),
    "ZEROSRC both banks": ("ZEROSRC", {**_ZEROSRC, "bank_mask": 1, "src_mask": 2}, _ordinary_values),
    "CLEARDVALID flips": ("CLEARDVALID", dict(cleardvalid=3, reset=0), _handing),
    "CLEARDVALID keep reading": ("CLEARDVALID", dict(cleardvalid=1, reset=2), _handing),
    "CLEARDVALID reset": ("CLEARDVALID", dict(cleardvalid=0, reset=1), _handing),
    "SETDVALID both": ("SETDVALID", dict(setvalid=3), _handing),
    "SETDVALID SrcB": ("SETDVALID", dict(setvalid=2), _handing),
    "UNPACR_NOP Nop": ("UNPACR_NOP", _NOP, _handing),
    "UNPACR_NOP SETDVALID": ("UNPACR_NOP", {**_NOP, "unpacker_select": 1, "clr_to1_fmt_ctrl": 3}, _handing),
    "UNPACR_NOP ZEROSRC": ("UNPACR_NOP", _NOP_ZEROSRC, _handing),
    "UNPACR_NOP ZEROSRC to -inf, both banks, SETDVALID": (
        "UNPACR_NOP", {**_NOP_ZEROSRC, "src_clr_val_ctrl": 1, "bank_clr_ctrl": 1, "set_dvalid": 1}, _handing
    ),
    "UNPACR_NOP ZEROSRC of SrcB, SETDVALID": (
        "UNPACR_NOP", {**_NOP_ZEROSRC, "unpacker_select": 1, "set_dvalid": 1}, _handing
    ),
    "GMPOOL FP32": ("GMPOOL", {**_GMPOOL, "dst": 20}, _ordinary_values),
    "GMPOOL FP32 ArgMax, flipping": ("GMPOOL", {**_ARGMAX, "clear_dvalid": 3, "dst": 4}, _ordinary_values),
    "GMPOOL BF16 Dst ArgMax": ("GMPOOL", {**_ARGMAX, "dst": 8}, lambda s: _ordinary(s, fp32=0)),
    "GMPOOL TF32 ArgMax": ("GMPOOL", _ARGMAX, lambda s: _ordinary(s, src_format=formats.TF32)),
    "GMPOOL FP16": ("GMPOOL", {**_GMPOOL, "dst": 12}, _fp16),
    "GMPOOL FP16A_FORCE": ("GMPOOL", _GMPOOL, _set_thread("FP16A_FORCE_Enable", 1)),
    "GMPOOL integer math": ("GMPOOL", _ARGMAX, _set_config("ALU_ACC_CTRL_INT8_math_enabled", 1)),
    "GMPOOL undefined Dst": ("GMPOOL", _GMPOOL, _set("regs.dst_row_valid", slice(None), False)),
    "MOVDBGA2D eight rows": ("MOVDBGA2D", {**_MOVE, "instr_mod": 2, "src": 8, "dst": 16}, _ordinary_values),
    "MOVDBGA2D of a bank not handed over": (
        "MOVDBGA2D", {**_MOVE, "src": 3, "dst": 5}, _set("regs.src_client", (SRCA, slice(None)), 1)
    ),
    "SHIFTXA right": ("SHIFTXA", _RIGHT, _latched(37)),
    "SHIFTXA left": ("SHIFTXA", _LEFT, _latched(5)),
    "SHIFTXA right, no row latched, blocks alike": ("SHIFTXA", _RIGHT, _repeating),
    "SHIFTXB rotating": ("SHIFTXB", {**_SHIFTXB, "shift_row": 9}, _ordinary_values),
    "SHIFTXB shifting in zero": ("SHIFTXB", {**_SHIFTXB, "rot_shift": 1, "shift_row": 63}, _ordinary_values),
    "TRNSPSRCB": ("TRNSPSRCB", {}, _ordinary_values),
    "GATESRCRST": ("GATESRCRST", dict(reset_srcb_gate_control=1, reset_srca_gate_control=1), _ordinary),
    "CLREXPHIST": ("CLREXPHIST", {}, _ordinary),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(EXECUTES))
def test_an_ordinary_word_runs_natively(case):
    name, fields, adjust = EXECUTES[case]
    for seed in range(3):
        result = compare(name, fields, seed, 1000, seed, adjust)
        assert result.native_cycles != NATIVE_DEFER
        assert mismatches(result) == []


# Words and states that must defer: each is a case whose Python semantics raise, wait, or act through
# a service the native side leaves to Python.
DEFERS = {
    "MVMUL instr_mod19 bit 1": ("MVMUL", {**_MVMUL, "instr_mod19": 2}, _ordinary),
    "MVMUL addr_mode bit 3": ("MVMUL", {**_MVMUL, "addr_mode": 8}, _ordinary),
    "MVMUL dst bit 10": ("MVMUL", {**_MVMUL, "dst": 1 << 10}, _ordinary),
    "MVMUL integer math": ("MVMUL", _MVMUL, _set_config("ALU_ACC_CTRL_INT8_math_enabled", 1)),
    "MVMUL SrcAFmt 12": ("MVMUL", _MVMUL, _set_config("ALU_FORMAT_SPEC_REG0_SrcA", 12)),
    "MVMUL SrcA past row 63": ("MVMUL", _MVMUL, _set("adc.srca", slice(None), 56)),
    "MVMUL ExtraAddrModBit": ("MVMUL", _MVMUL, _set("adc.extra_addr_mod_bit", slice(None), 1)),
    "MVMUL AB2 bit": ("MVMUL", _MVMUL, _set_thread("ADDR_MOD_AB2_SEC0_SrcAIncr", 1)),
    "MVMUL SFPLOADMACRO work": ("MVMUL", _MVMUL, _set("sfpu.macro_pending", (0, macro.VALID), 1)),
    "ZEROACC clear_zero_flags": ("ZEROACC", {**_ZEROACC, "clear_zero_flags": 1}, _ordinary),
    "ZEROACC clear_mode bit 2": ("ZEROACC", {**_ZEROACC, "clear_mode": 4}, _ordinary),
    "ZEROACC where bit 10": ("ZEROACC", {**_ZEROACC, "where": 1 << 10}, _ordinary),
    "ZEROSRC zero_val bit 1": ("ZEROSRC", {**_ZEROSRC, "zero_val": 2}, _ordinary),
    "CLEARDVALID reset bit 2": ("CLEARDVALID", dict(cleardvalid=0, reset=4), _handing),
    "SETDVALID setvalid bit 2": ("SETDVALID", dict(setvalid=4), _handing),
    "UNPACR_NOP OverlayClear": ("UNPACR_NOP", {**_NOP, "unpack_pop": 0}, _handing),
    "UNPACR_NOP SETREG form": ("UNPACR_NOP", {**_NOP, "unpack_pop": 3}, _handing),
    "UNPACR_NOP reserved clr_to1_fmt_ctrl": ("UNPACR_NOP", {**_NOP, "clr_to1_fmt_ctrl": 1}, _handing),
    "UNPACR_NOP Nop with a bank operand": ("UNPACR_NOP", {**_NOP, "bank_clr_ctrl": 1}, _handing),
    "UNPACR_NOP ZEROSRC to one": ("UNPACR_NOP", {**_NOP_ZEROSRC, "src_clr_val_ctrl": 2}, _handing),
    "UNPACR_NOP ZEROSRC set_dvalid bit 1": ("UNPACR_NOP", {**_NOP_ZEROSRC, "set_dvalid": 2}, _handing),
    "UNPACR_NOP ZEROSRC stream_id": ("UNPACR_NOP", {**_NOP_ZEROSRC, "stream_id": 1}, _handing),
    "GMPOOL instr_mod19 0": ("GMPOOL", {**_GMPOOL, "instr_mod19": 0}, _ordinary),
    "GMPOOL pool_addr_mode bit 3": ("GMPOOL", {**_GMPOOL, "pool_addr_mode": 8}, _ordinary),
    "GMPOOL SrcAFmt 13": ("GMPOOL", _GMPOOL, _set_config("ALU_FORMAT_SPEC_REG0_SrcA", 13)),
    "GMPOOL AB2 bit": ("GMPOOL", _GMPOOL, _set_thread("ADDR_MOD_AB2_SEC0_SrcBIncr", 1)),
    "MOVDBGA2D instr_mod bit 0": ("MOVDBGA2D", {**_MOVE, "instr_mod": 1}, _ordinary),
    "SHIFTXA reserved direction": ("SHIFTXA", {**_RIGHT, "shift_mode": 1}, _latched(0)),
    "SHIFTXA by two lanes": ("SHIFTXA", {**_RIGHT, "log2_amount2": 1}, _latched(0)),
    "SHIFTXA input rows unknown": ("SHIFTXA", _LEFT, _latched(-1)),
    "SHIFTXB addr_mode bit 3": ("SHIFTXB", {**_SHIFTXB, "addr_mode": 8}, _ordinary),
    "SHIFTXB rot_shift bit 1": ("SHIFTXB", {**_SHIFTXB, "rot_shift": 2}, _ordinary),
    "SHIFTXB shift_row bit 6": ("SHIFTXB", {**_SHIFTXB, "shift_row": 64}, _ordinary),
    "SHIFTXB ExtraAddrModBit": ("SHIFTXB", _SHIFTXB, _set("adc.extra_addr_mod_bit", slice(None), 1)),
    "GATESRCRST bit 1 of its operand": (
        "GATESRCRST", dict(reset_srcb_gate_control=2, reset_srca_gate_control=0), _ordinary
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DEFERS))
def test_errors_waits_and_services_defer_to_python(case):
    name, fields, adjust = DEFERS[case]
    result = compare(name, fields, 1, 1000, 7, adjust)
    assert result.native_cycles == NATIVE_DEFER
    assert mismatches(result) == []


# Words and states whose Python semantics wait: the native side waits too, for the same reason and
# until, having changed nothing (the engine then blocks the pipe and retries it itself).
WAITS = {
    "MVMUL SrcB not handed over": ("MVMUL", _MVMUL, _set("regs.src_client", (SRCB, slice(None)), 1)),
    "MVMUL SrcA not handed over, flipping": (
        "MVMUL", {**_MVMUL, "clear_dvalid": 1}, _set("regs.src_client", (SRCA, slice(None)), 1)
    ),
    "ELWADD SrcA not handed over": ("ELWADD", _ELW, _set("regs.src_client", (SRCA, slice(None)), 1)),
    "MVMUL Dst rows hidden": ("MVMUL", _MVMUL, _set("regs.dst_ready", slice(None), 1001)),
    "ELWMUL Dst rows hidden": ("ELWMUL", _ELW, _set("regs.dst_ready", slice(None), 1001)),
    "UNPACR_NOP while its unpacker fetches": (
        "UNPACR_NOP", _NOP, lambda s: (_handing(s), s["unpackers.end"].__setitem__(0, 1003))
    ),
    "UNPACR_NOP ZEROSRC of a bank the matrix unit has": (
        "UNPACR_NOP", {**_NOP_ZEROSRC, "stall_clr_cntrl": 0}, _handing
    ),
    "GMPOOL SrcB not handed over": ("GMPOOL", _GMPOOL, _set("regs.src_client", (SRCB, slice(None)), 1)),
    "GMPOOL Dst rows hidden": ("GMPOOL", _GMPOOL, _set("regs.dst_ready", slice(None), 1002)),
    "SHIFTXA SrcA not handed over": ("SHIFTXA", _RIGHT, _set("regs.src_client", (SRCA, slice(None)), 1)),
    "SHIFTXB SrcB not handed over": ("SHIFTXB", _SHIFTXB, _set("regs.src_client", (SRCB, slice(None)), 1)),
    "TRNSPSRCB SrcB not handed over": ("TRNSPSRCB", {}, _set("regs.src_client", (SRCB, slice(None)), 1)),
    "MOVA2D SrcA not handed over": ("MOVA2D", _MOVE, _set("regs.src_client", (SRCA, slice(None)), 1)),
    "UNPACR_NOP ZEROSRC of a bank not handed back": (
        "UNPACR_NOP", {**_NOP_ZEROSRC, "unpacker_select": 1},
        lambda s: (_handing(s), s["regs.src_client"].__setitem__((SRCB, 0), SrcClient.MATRIX_UNIT)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(WAITS))
def test_waits_match_python(case):
    name, fields, adjust = WAITS[case]
    result = compare(name, fields, 1, 1000, 7, adjust)
    assert result.native_cycles == native.NATIVE_WAIT
    assert isinstance(result.python_outcome, Wait)
    assert mismatches(result) == []


@pytest.mark.parametrize(
    "name, fields, keep",
    [
        ("MVMUL", {**_MVMUL, "clear_dvalid": 1}, 0),
        ("ELWADD", {**_ELW, "clear_dvalid": 2}, 0),
        ("ELWSUB", {**_ELW, "clear_dvalid": 3}, 0),
        ("ELWMUL", {**_ELW, "clear_dvalid": 3}, 1),  # CLR_DVALID_SrcA_Disable: SrcA stays the matrix unit's
    ],
)
def test_bank_flips_run_natively(name, fields, keep):
    """The last instruction of a block hands its banks back to the unpackers and flips to the others
    (matrix.unit.flip_banks), unless CLR_DVALID_Src<A|B>_Disable keeps them."""
    result = compare(name, fields, 1, 1000, 7, _set_thread("CLR_DVALID_SrcA_Disable", keep))
    assert result.native_cycles != NATIVE_DEFER
    assert mismatches(result) == []
    assert (
        result.native_after["regs.matrix_bank"].tolist() != result.native_before["regs.matrix_bank"].tolist()
    )


def test_elementwise_without_accumulation_ignores_hidden_rows():
    # ELWADD / ELWSUB without AddDst read no Dst, so Dst.md's stall does not apply to them.
    result = compare("ELWADD", _ELW, 1, 1000, 7, _set("regs.dst_ready", slice(None), 1001))
    assert result.native_cycles != NATIVE_DEFER
    assert mismatches(result) == []


# ------------------------------------------------------------------------------- the data-move hold

MATRIX_NAMES = sorted(spec.name for spec in ISA if spec.unit == "matrix")


def _matrix_hold(copro, word: int, cycle: int) -> int:
    lib = native.library()
    hold = lib.tsim_matrix_hold
    hold.restype, hold.argtypes = ctypes.c_int64, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64]
    view, _arrays_kept = native.view_of(copro)
    return int(hold(ctypes.addressof(view), word, cycle))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    name=st.sampled_from(MATRIX_NAMES),
    kind=st.one_of(st.integers(0, len(moves.HOLDS)), st.just(0)),
    offset=st.integers(-4, 4),
    cycle=st.integers(0, 2**40),
)
def test_matrix_hold_is_held_until(name, kind, offset, cycle):
    copro = TILES[0].coprocessor
    copro.regs.move_hold[:] = (kind, cycle + offset)
    word = ISA.encode(name, **{f.name: 0 for f in ISA.by_name[name].fields})
    expected = moves.held_until(copro, name, cycle)
    assert _matrix_hold(copro, word, cycle) == (0 if expected is None else expected)


def test_a_hold_kind_no_move_leaves_is_pythons():
    copro = TILES[0].coprocessor
    copro.regs.move_hold[:] = (len(moves.HOLDS) + 1, 2000)
    assert _matrix_hold(copro, ISA.encode("MVMUL", **_MVMUL), 1000) == -1


# ------------------------------------------------------------------------------- the engine


def _hand_over_program(isa, unpacker_nops: tuple[int, ...]) -> list[tuple[int, PushedInstruction]]:
    """The math pipe moves SrcA rows to Dst while the unpack pipe clears the bank and hands it over
    (``unpacker_nops``: the UNPACR_NOP words doing that); the matrix unit gives it back with CLEARDVALID
    and waits for the other bank, which SETDVALID hands over."""
    move = isa.encode("MOVA2D", **{f.name: 0 for f in isa.by_name["MOVA2D"].fields})
    give_back = isa.encode("CLEARDVALID", cleardvalid=1, reset=0)
    words = [(1, move, 0), *((0, w, 6) for w in unpacker_nops), (1, give_back, 7), (1, move, 7)]
    words += [(0, isa.encode("SETDVALID", setvalid=1), 20), (1, move, 21)]
    return [(pipe, PushedInstruction(word, f"trisc{pipe}", 4 * i, cycle, True)) for i, (pipe, word, cycle) in
            enumerate(words)]  # fmt: skip


def _both_banks_the_unpackers(tile: Tile) -> None:
    regs = tile.coprocessor.regs
    regs.srca[:] = np.arange(regs.srca.size, dtype=np.uint32).reshape(regs.srca.shape) | 0x80
    regs.src_client[:] = SrcClient.UNPACKERS
    regs.matrix_bank[:] = regs.unpacker_bank[:] = 0


def test_a_move_waits_for_the_bank_the_unpackers_hand_over_natively():
    """MOVA2D waits (in the engine, with Python's reason) until UNPACR_NOP's ZEROSRC with set_dvalid
    hands SrcA's bank to the matrix unit, then runs; CLEARDVALID gives it back and SETDVALID hands the
    other one over. Every instruction runs in C, in lockstep with the Python engine, stall figures
    included."""
    nop = ISA.encode("UNPACR_NOP", **{**_NOP_ZEROSRC, "set_dvalid": 1})
    entries = _hand_over_program(ISA, (nop,))
    tile = Tile("blackhole", engine="native")
    assert first_difference(_both_banks_the_unpackers, entries, 60, native=tile) is None
    assert tile.backend.native.instructions == len(entries)
    assert tile.backend.pipes[1].stalled.get("MOVA2D", 0) > 0  # it did wait for the bank
    assert tile.coprocessor.regs.src_client[SRCA].tolist() == [SrcClient.UNPACKERS, SrcClient.MATRIX_UNIT]


@st.composite
def _programs(draw: st.DrawFn) -> tuple[list[tuple[int, PushedInstruction]], int]:
    """(pipe, entry) pairs of the words above (valid_words_of's operands, no rare form) on the unpack and
    math pipes, now and then the third, and a state seed."""
    words = st.sampled_from(NATIVE).flatmap(
        lambda n: valid_words_of(n, False).map(lambda f: ISA.encode(n, **f))
    )
    entries = pushed(draw, words, [(1,), (0, 1), (0, 1), (0, 1, 2)], 12, [0, 0, 1, 2, 6])
    return entries, draw(st.integers(0, 2**32 - 1))


@native_settings(40)
@given(_programs())
def test_random_programs_run_in_lockstep_with_the_python_engine(program):
    """Random programs of these instructions from draw_state's state, both engines compared after
    every cycle: the waits for a bank, a hidden Dst block or an unpacker's fetch, the holds after a
    move and the hand-overs between pipes play out as in Python."""
    entries, seed = program
    assert first_difference(program_state(seed), entries, 150) is None


def program_state(seed: int) -> Callable[[Tile], None]:
    """A tile set-up giving it draw_state's state, without what every ApplyAddrMod or vector-unit step
    would raise on (programs would stop at their first matrix-unit word)."""
    state = draw_state(seed, 20)
    state["sfpu.macro_pending"][...] = 0
    state["adc.extra_addr_mod_bit"][...] = 0
    for pipe, slot in np.ndindex(3, ADDR_MODS):  # the AB2 bits, and the Bias ones setting ExtraAddrModBit
        for field in ("AB2_SEC{}_SrcAIncr", "AB2_SEC{}_SrcBIncr", "BIAS_SEC{}_BiasIncr"):
            _thread_field(state["config.thread"], "ADDR_MOD_" + field.format(slot), 0, pipe)

    def setup(tile: Tile) -> None:
        for name, array in _arrays(tile).items():
            if name in state and name != "l1":
                array[...] = state[name]

    return setup


# ------------------------------------------------------------------------------- the engine: matmul


def _matmul(engine: str, phases: int) -> tuple[Tile, int]:
    rng = np.random.default_rng(5)
    tile = Tile("blackhole", engine=engine)
    tile.backend.fast_paths = False
    copro = tile.coprocessor
    configure_matmul(copro, fp32_dest=True)
    for file in (SRCA, SRCB):
        values = rng.standard_normal((32, 32)).astype(np.float32)
        values[rng.random((32, 32)) < 0.1] = 1e-30  # now and then a product that underflows
        load_src_tile(copro, file, formats.fp32_to_bf16(values.view(np.uint32)))
    end = 0
    for record in (True, False, False):
        end = run_words(tile, MATH_THREAD, matmul_tile_words(copro, phases, record=record))
    return tile, end


@pytest.mark.parametrize("phases", [1, 4])
def test_tile_matmul_runs_natively_with_the_python_engines_results_and_cycles(phases):
    native_tile, native_end = _matmul("native", phases)
    python_tile, python_end = _matmul("python", phases)
    assert native_tile.backend.engine == "native"
    assert native_end == python_end
    assert np.array_equal(native_tile.coprocessor.regs.dst, python_tile.coprocessor.regs.dst)
    assert native_tile.result() == python_tile.result()
    assert native_tile.backend.native.instructions >= 3 * 16 * phases  # every MVMUL ran in C
