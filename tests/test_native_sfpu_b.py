"""The native vector-unit instructions of sfpu_float.c, sfpu_lanes.c and sfpu_convert.c against the
Python semantics, and the wait gate's MAD-result hold (``tsim_sfpu_mad_hold``) against
``sfpu_float.mad_hold``.

The comparison is test_native_ops's: two tiles start each example from identical state, one runs the
word natively (``exec_one``), the other through ``sfpu_macro.issue`` and the instruction's semantics
(as the engine runs a vector-unit instruction). A deferred word must leave its tile exactly as it
was; an executed one must retire in the Python cycles and leave every state array of both tiles equal.
The vector unit's state is drawn per example: LRegs heavy in FP32 special values (signed zeros,
denormals, infinities, NaNs, extreme and near-overflow normals, exact ties, near cancellations, small
integers), lane enables, flags and stacks, the PRNG, the MAD result in flight, and now and then
outstanding SFPLOADMACRO work (which must defer).

The multiply-add itself (``tsim_sfpu_fma``) is also compared lane by lane with ``sfpu_float.fma`` and
with the independent reference ``sfpu_float_reference.fma_bh``; Wormhole's (``tsim_sfpu_fma_wormhole``)
with ``sfpu.fma.fma_wormhole`` and ``sfpu_wormhole_reference.fma_wh``, on triples biased to the exponents
it treats apart, near cancellations and the denormal edge, a large random batch and the hand-worked
vectors of test_wormhole_sfpu.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sfpu_float_reference import fma_bh
from sfpu_wormhole_reference import fma_wh
from test_native_ops import TILES, Comparison, mismatches, native_settings, reset, run_on_both
from test_wormhole_sfpu import CHIP_VECTORS

from tensixsim.errors import SimError, UndefinedBehavior
from tensixsim.isa import isa_for
from tensixsim.isa.spec import Field
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.semantics import Context, Outcome, lookup
from tensixsim.tensix.sfpu import convert as sfpu_convert
from tensixsim.tensix.sfpu import floats as sfpu_float
from tensixsim.tensix.sfpu import lanes as sfpu_lanes
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu import unit as sfpu
from tensixsim.tensix.sfpu.fma import ONE, fma_wormhole

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER
PC = 0x6000
CYCLE = 1000  # the issue cycle of most examples (macro_clock and mad_ready are drawn around it)

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

FLOAT = ("SFPMAD", "SFPADD", "SFPMUL", "SFPADDI", "SFPMULI", "SFPMUL24", "SFPLUT", "SFPLUTFP32", "SFPDIVP2",
         "SFPARECIP", "SFPGT", "SFPLE")  # fmt: skip
LANES_MOVES = ("SFPSWAP", "SFPTRANSP", "SFPSHFT2")
CONVERT = ("SFPCAST", "SFP_STOCH_RND")
NATIVE = (*FLOAT, *LANES_MOVES, *CONVERT)
SFPU_INSTRUCTIONS = tuple(spec.name for spec in ISA if spec.unit == "sfpu")

# ------------------------------------------------------------------------------- the C entry points


def _function(name: str, restype: type, *argtypes: type, lib: ctypes.CDLL | None = None):
    """A private ctypes prototype of ``name`` in ``lib`` (the shared library object stays untouched);
    None where the native engine cannot be built (the module's tests are skipped there)."""
    lib = lib or native.library()
    return None if lib is None else ctypes.CFUNCTYPE(restype, *argtypes)((name, lib))


FMA = _function("tsim_sfpu_fma", ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)
FMA_WORMHOLE = _function(
    "tsim_sfpu_fma_wormhole", ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32
)
MAD_HOLD = _function("tsim_sfpu_mad_hold", ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64)


def native_fma(x: np.ndarray, y: np.ndarray, z: np.ndarray, function=None) -> np.ndarray:
    """``function`` (tsim_sfpu_fma by default) on each lane of the FP32 bit patterns."""
    function = function or FMA
    return np.array([function(int(a), int(b), int(c)) for a, b, c in zip(x, y, z, strict=True)], np.uint32)


def native_fma_wormhole(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    return native_fma(x, y, z, FMA_WORMHOLE)


def native_mad_hold(copro, word: int, cycle: int) -> int:
    view, _arrays = native.view_of(copro)  # the arrays stay referenced during the call
    return MAD_HOLD(ctypes.addressof(view), word, cycle)


# ------------------------------------------------------------------------------- FP32 values

SIGN = sfpu_float.SIGN
# Signed zeros, denormals, the smallest and largest normals, infinities, NaNs, 1.0 and its neighbours,
# half an ulp of 1.0, SFPLUT's and SFPARECIP's thresholds, powers of two whose products underflow or
# overflow, 65536 and -32768 (SFP_STOCH_RND's integer bounds).
SPECIAL = np.array(
    [
        0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x00800001, 0x01000000,
        0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0xFFC00000,
        0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x33800000, 0x34000000, 0xB3800000, 0x3FC00000,
        0x40000000, 0x3F000000, 0x40400000, 0x40800000, 0x3FBFFFFF, 0x403FFFFF, 0x407FFFFF, 0x1F800000,
        0x5F800000, 0x7EFFFFFF, 0x7E800000, 0x3C800000, 0x3F320000, 0x00FFFFFF, 0x47800000, 0xC7000000,
    ],
    np.uint32,
)  # fmt: skip


def fp32_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """FP32 bit patterns heavy in the cases the multiply-add and the conversions treat apart."""
    n = int(np.prod(shape))
    sign = rng.integers(0, 2, n).astype(np.uint32) << 31
    man = rng.integers(0, 1 << 23, n).astype(np.uint32)
    few_bits = rng.integers(0, 2, n).astype(bool)
    man = np.where(few_bits, man & 0x7F0000, man).astype(np.uint32)  # exact products, ties
    kinds = [
        SPECIAL[rng.integers(0, len(SPECIAL), n)],
        rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),  # any bits
        sign | (rng.integers(118, 137, n).astype(np.uint32) << 23) | man,  # near one: sums cancel, round
        sign | (rng.integers(245, 255, n).astype(np.uint32) << 23) | man,  # near overflow
        sign | (rng.integers(0, 8, n).astype(np.uint32) << 23) | man,  # near underflow, denormals
        sign | rng.integers(0, 1 << rng.integers(1, 31), n).astype(np.uint32),  # sign-magnitude integers
        sign | rng.integers(0, 400, n).astype(np.uint32),  # small integers
    ]
    choice = rng.integers(0, len(kinds), n)
    out = np.choose(choice, kinds).astype(np.uint32)
    return out.reshape(shape)


def with_cancellations(rng: np.random.Generator, lreg: np.ndarray) -> np.ndarray:
    """Make some cells the negation (or a near neighbour) of another register's cell in the lane."""
    out = lreg.copy()
    regs, lanes = out.shape
    cells = rng.random((regs, lanes)) < 0.15
    other = rng.integers(0, regs, (regs, lanes))
    nudge = rng.integers(-2, 3, (regs, lanes)).astype(np.int64)
    source = out[other, np.arange(lanes)].astype(np.int64) + nudge * rng.integers(0, 2, (regs, lanes))
    negated = (source & 0xFFFFFFFF).astype(np.uint32) ^ np.uint32(SIGN)
    return np.where(cells, negated, out).astype(np.uint32)


# ------------------------------------------------------------------------------- the vector unit's state

LANE_CONFIG_BITS = (
    sfpu.DISABLE_BACKDOOR_LOAD,
    sfpu.ENABLE_DEST_INDEX,
    sfpu_lanes.EXCHANGE_SRCB_SRCC,
    *(1 << (sfpu.ROW_MASK_SHIFT + row) for row in range(4)),
)


def sfpu_state(seed: int, cycle: int) -> dict[str, np.ndarray]:
    """A random vector-unit state (sfpu.SfpuState's arrays by name) for an issue at ``cycle``."""
    rng = np.random.default_rng(seed)
    lreg = with_cancellations(rng, fp32_values(rng, (sfpu.LREGS, sfpu.LANES)))
    if rng.random() < 0.6:  # indirect operands name LRegs, LReg[7] their index
        lreg[7] = rng.integers(0, 17, sfpu.LANES)
    lanes = sfpu.LANES
    # LaneConfig: mostly plain; some bits on every lane (whole-vector tests), some per lane.
    config = np.zeros(lanes, np.uint32)
    for bit in LANE_CONFIG_BITS:
        r = rng.random()
        if r < 0.15:
            config |= np.uint32(bit)
        elif r < 0.3:
            config |= np.where(rng.random(lanes) < 0.3, bit, 0).astype(np.uint32)
    if rng.random() < 0.1:
        config |= rng.integers(0, sfpu.LANE_CONFIG_MASK + 1, lanes).astype(np.uint32)
    use_flags = rng.random(lanes) < (0.5 if rng.random() < 0.3 else 0.0)
    depth = rng.integers(0, sfpu.STACK_DEPTH + 1, lanes).astype(np.uint8)
    if rng.random() < 0.05:
        depth[rng.integers(0, lanes)] = sfpu.STACK_DEPTH + 1  # beyond the stack: Python's index fails
    stack = rng.random((lanes, sfpu.STACK_DEPTH, 2)) < 0.5
    stack &= np.arange(sfpu.STACK_DEPTH)[None, :, None] < depth[:, None, None].astype(np.int64)
    pending = np.zeros((sfpu.MACRO_SLOTS, sfpu.MACRO_COLUMNS), np.int64)
    clock = rng.integers(0, cycle, sfpu.MACRO_CLOCK).astype(np.int64)
    busy = rng.random()
    if busy < 0.04:
        pending[rng.integers(0, sfpu.MACRO_SLOTS), sfpu_macro.VALID] = 1
    elif busy < 0.08:
        clock[sfpu_macro.SWAP_NEXT] = cycle + rng.integers(0, 2)
    elif busy < 0.12:
        clock[sfpu_macro.UNITS_AT] = cycle + rng.integers(0, 2)
    return {
        "lreg": lreg,
        "lane_flags": rng.random(lanes) < 0.5,
        "use_lane_flags": use_flags,
        "flag_stack": stack,
        "stack_depth": depth,
        "lane_config": config,
        "sp": rng.integers(0, 1 << 10, len(TILES[0].coprocessor.sfpu.sp)).astype(np.uint32),
        "prng": rng.integers(0, 1 << 32, lanes, dtype=np.uint64).astype(np.uint32),
        "mad_ready": np.array([cycle + rng.integers(-2, 3)], np.int64),
        "mad_seen": rng.random(sfpu.LREGS) < rng.choice([0.0, 0.1, 0.5]),
        "mad_wrote": rng.random(sfpu.LREGS) < rng.choice([0.0, 0.1, 0.5]),
        "macro_template": rng.integers(0, 1 << 32, (lanes, 4), dtype=np.uint64).astype(np.uint32),
        "macro_sequence": rng.integers(0, 1 << 32, (lanes, 4), dtype=np.uint64).astype(np.uint32),
        "macro_misc": rng.integers(0, 1 << 12, lanes).astype(np.uint32),
        "macro_pending": pending,
        "macro_clock": clock,
    }


def set_state(seed: int, cycle: int, **changes: np.ndarray) -> None:
    """Both tiles: test_native_ops.reset's state, then this vector-unit state (``changes`` override it)."""
    reset(seed)
    state = sfpu_state(seed, cycle) | changes
    for tile in TILES:
        s = tile.coprocessor.sfpu
        for name, value in state.items():
            getattr(s, name)[...] = value


# ------------------------------------------------------------------------------- running one word


def run_python(tile, thread: int, word: int, cycle: int) -> Outcome | SimError | IndexError:
    """The word as the engine issues a vector-unit instruction: the outcome, or the error raised."""
    instruction = ISA.decode(word)
    ctx = Context(tile.coprocessor, thread, cycle, instruction, f"trisc{thread}", PC)
    try:
        return sfpu_macro.issue(ctx, lookup("blackhole", instruction.name))
    except (SimError, IndexError) as error:  # IndexError: an index the Python model does not check
        return error


def compare(name: str, fields: dict[str, int], thread: int, cycle: int, seed: int, **changes) -> Comparison:
    """Give both tiles the state of ``seed``, run the word natively on one and in Python on the other."""
    set_state(seed, cycle, **changes)
    return run_on_both(ISA.encode(name, **fields), thread, cycle, run_python)


# ------------------------------------------------------------------------------- random words


def slot_values(f: Field) -> st.SearchStrategy[int]:
    """Any value of the slot, zero and the register range drawn often."""
    options = [st.just(0), st.integers(0, min(f.max_value, 7)), st.integers(0, min(f.max_value, 15))]
    options.append(st.integers(0, f.max_value))
    if f.name == "imm16_math":  # a BF16: the special values' upper halves
        options.append(st.sampled_from(sorted({int(v) >> 16 for v in SPECIAL})))
    return st.one_of(options)


def _keep(fields: dict[str, int], name: str, mask: int) -> None:
    fields[name] &= mask


def tidy(name: str, fields: dict[str, int]) -> dict[str, int]:
    """The word with its operands cut to their documented widths (most examples: so that they run)."""
    f = dict(fields)
    if name in ("SFPMAD", "SFPADD", "SFPMUL", "SFPMUL24"):
        _keep(f, "lreg_src_a", 0xF)
    elif name == "SFPLUT":
        _keep(f, "dest_reg_addr", 0)
    elif name == "SFPLUTFP32":
        _keep(f, "lreg_dest", 0xF00F)
    elif name == "SFPDIVP2":
        _keep(f, "imm12_math", 0xFF)
    elif name == "SFPARECIP":
        _keep(f, "imm12_math", 0xF)
    elif name in ("SFPGT", "SFPLE", "SFPSWAP"):
        _keep(f, "imm12_math", 0)
    elif name == "SFPTRANSP":
        for slot in ("imm12_math", "lreg_c", "instr_mod1"):
            _keep(f, slot, 0)
    elif name == "SFPSHFT2":
        f["instr_mod1"] %= sfpu_lanes.SHFT2_SHFT_IMM + 1  # the higher Mod1 values are undefined
        if f["instr_mod1"] == sfpu_lanes.SHFT2_SHFT_IMM:  # Imm12 is the shift amount, VC fixed at 0
            _keep(f, "lreg_src_c", 0)
        else:
            _keep(f, "imm12_math", 0xF)
    elif name == "SFPCAST":
        _keep(f, "lreg_src_c", 0xF)
    elif name == "SFP_STOCH_RND":
        _keep(f, "rnd_mode", 3)
        integer = (sfpu_convert.STOCH_INT32_TO_UINT8, sfpu_convert.STOCH_INT32_TO_INT8)
        if f["instr_mod1"] & 7 not in integer:  # the floating-point modes fix Imm5 and UseImm5 at 0
            _keep(f, "imm8_math", 0)
            _keep(f, "instr_mod1", 7)
    return f


@st.composite
def words_of(draw: st.DrawFn, name: str) -> dict[str, int]:
    fields = draw(st.fixed_dictionaries({f.name: slot_values(f) for f in ISA.by_name[name].fields}))
    return tidy(name, fields) if draw(st.sampled_from([True, True, True, False])) else fields


SETTINGS = native_settings(60)
seeds = st.integers(0, 2**32 - 1)
pipes = st.integers(0, 2)
cycle_offsets = st.integers(-3, 3)  # around CYCLE, where mad_ready and the macro clock are drawn


@pytest.mark.parametrize("name", NATIVE)
def test_native_matches_python_or_defers_unchanged(name):
    counts: Counter[str] = Counter()

    @SETTINGS
    @given(fields=words_of(name), thread=pipes, offset=cycle_offsets, seed=seeds)
    def check(fields, thread, offset, seed):
        result = compare(name, fields, thread, CYCLE + offset, seed)
        counts["deferred" if result.native_cycles == NATIVE_DEFER else "native"] += 1
        assert mismatches(result) == []

    check()
    # Most words are tidy and the state mostly idle: a handler that deferred them would be useless.
    assert counts["native"] >= 0.4 * sum(counts.values()), counts


# One ordinary word per instruction that must run natively on an idle vector unit.
EXECUTES = {
    "SFPMAD": dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=4, instr_mod1=0),
    "SFPADD": dict(lreg_src_a=10, lreg_src_b=2, lreg_src_c=3, lreg_dest=5, instr_mod1=2),
    "SFPMUL": dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=9, lreg_dest=0, instr_mod1=1),
    "SFPADDI": dict(imm16_math=0x3F80, lreg_dest=3, instr_mod1=0),
    "SFPMULI": dict(imm16_math=0xC040, lreg_dest=6, instr_mod1=0),
    "SFPMUL24": dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=4, instr_mod1=1),
    "SFPLUT": dict(lreg_ind=4, instr_mod0=4, dest_reg_addr=0),
    "SFPLUTFP32": dict(lreg_dest=5, instr_mod1=2),
    "SFPDIVP2": dict(imm12_math=0x7F, lreg_c=1, lreg_dest=2, instr_mod1=1),
    "SFPARECIP": dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=0),
    "SFPGT": dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=9),
    "SFPLE": dict(imm12_math=0, lreg_c=3, lreg_dest=1, instr_mod1=1),
    "SFPSWAP": dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=1),
    "SFPTRANSP": dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0),
    "SFPSHFT2": dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=3),
    "SFPCAST": dict(lreg_src_c=1, lreg_dest=2, instr_mod1=1),
    "SFP_STOCH_RND": dict(rnd_mode=1, imm8_math=0, lreg_src_b=1, lreg_src_c=2, lreg_dest=3, instr_mod1=2),
}
IDLE = dict(
    macro_pending=np.zeros((sfpu.MACRO_SLOTS, sfpu.MACRO_COLUMNS), np.int64),
    macro_clock=np.zeros(sfpu.MACRO_CLOCK, np.int64),
    lane_config=np.zeros(sfpu.LANES, np.uint32),
    use_lane_flags=np.zeros(sfpu.LANES, bool),
    stack_depth=np.full(sfpu.LANES, 2, np.uint8),
)


@pytest.mark.parametrize("name", NATIVE)
def test_an_ordinary_word_runs_natively(name):
    for seed in range(4):
        result = compare(name, EXECUTES[name], seed % 3, CYCLE, seed, **IDLE)
        assert result.native_cycles != NATIVE_DEFER
        assert mismatches(result) == []


def test_the_slow_lane_moves_occupy_the_unit_two_cycles():
    swap = compare("SFPSWAP", EXECUTES["SFPSWAP"], 0, CYCLE, 1, **IDLE)
    shuffle = compare("SFPSHFT2", EXECUTES["SFPSHFT2"], 0, CYCLE, 1, **IDLE)
    copy = compare("SFPSHFT2", {**EXECUTES["SFPSHFT2"], "instr_mod1": 0}, 0, CYCLE, 1, **IDLE)
    assert (swap.native_cycles, shuffle.native_cycles, copy.native_cycles) == (2, 2, 1)


def test_an_sfpmad_records_its_result_in_flight():
    fields = dict(_MAD, lreg_src_a=1, instr_mod1=sfpu_float.MAD_INDIRECT_VD)
    result = compare("SFPMAD", fields, 1, CYCLE, 5, **IDLE)
    assert mismatches(result) == []
    after = result.native_after
    assert after["sfpu.mad_ready"][0] == CYCLE + 2
    assert after["sfpu.mad_seen"].all()  # INDIRECT_VD: the logic assumes every LReg is written


# Words that must defer: (instruction, fields, state changes, whether the Python semantics raise).
_BUSY_CLOCK = np.zeros(sfpu.MACRO_CLOCK, np.int64)
_BUSY_CLOCK[sfpu_macro.SWAP_NEXT] = CYCLE
_PENDING = np.zeros((sfpu.MACRO_SLOTS, sfpu.MACRO_COLUMNS), np.int64)
_PENDING[3, sfpu_macro.VALID] = 1
_HALF_BACKDOOR = np.where(np.arange(sfpu.LANES) < 16, sfpu.DISABLE_BACKDOOR_LOAD, 0).astype(np.uint32)
_MAD = dict(lreg_src_b=2, lreg_src_c=3, lreg_dest=4, instr_mod1=0)
_SIMPLE = dict(lreg_c=1, lreg_dest=2, instr_mod1=0)
_SWAP = dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=0)
_TRANSP = dict(imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0)
_STOCH = dict(rnd_mode=0, imm8_math=0, lreg_src_b=0, lreg_src_c=1, lreg_dest=2, instr_mod1=0)
_CAST = dict(lreg_src_c=1, lreg_dest=2, instr_mod1=0)
DEFERS = {
    "SFPMAD VA beyond 4 bits": ("SFPMAD", dict(_MAD, lreg_src_a=0x10), {}, True),
    "SFPMUL24 VA beyond 4 bits": ("SFPMUL24", dict(_MAD, lreg_src_a=0x81), {}, True),
    "SFPLUT dest_reg_addr": ("SFPLUT", dict(lreg_ind=1, instr_mod0=0, dest_reg_addr=1), {}, True),
    "SFPLUTFP32 bits of no operand": ("SFPLUTFP32", dict(lreg_dest=0x10, instr_mod1=0), {}, True),
    "SFPDIVP2 Imm12 beyond 8 bits": ("SFPDIVP2", dict(_SIMPLE, imm12_math=0x100), {}, True),
    "SFPARECIP Imm12 beyond 4 bits": ("SFPARECIP", dict(_SIMPLE, imm12_math=0x10), {}, True),
    "SFPGT Imm12": ("SFPGT", dict(_SIMPLE, imm12_math=1), {}, True),
    "SFPLE Imm12": ("SFPLE", dict(_SIMPLE, imm12_math=0x800), {}, True),
    "SFPSWAP Imm12": ("SFPSWAP", dict(_SWAP, imm12_math=4), {}, True),
    "SFPTRANSP VC": ("SFPTRANSP", dict(_TRANSP, lreg_c=1), {}, True),
    "SFPSHFT2 Mod1 7": ("SFPSHFT2", dict(_SWAP, instr_mod1=7), {}, True),
    "SFPSHFT2 SHFT_IMM with VC": ("SFPSHFT2", dict(_SWAP, imm12_math=3, instr_mod1=6), {}, True),
    "SFPSHFT2 VB beyond 4 bits": ("SFPSHFT2", dict(_SWAP, imm12_math=0x10, instr_mod1=5), {}, True),
    "SFPCAST VC beyond 4 bits": ("SFPCAST", dict(_CAST, lreg_src_c=0x11), {}, True),
    "SFP_STOCH_RND RoundingMode 4": ("SFP_STOCH_RND", dict(_STOCH, rnd_mode=4), {}, True),
    "SFP_STOCH_RND UseImm5 in a float mode": ("SFP_STOCH_RND", dict(_STOCH, instr_mod1=8), {}, True),
    "SFPTRANSP lanes disagree on the backdoor": (
        "SFPTRANSP", dict(_TRANSP, lreg_dest=12), {"lane_config": _HALF_BACKDOOR}, True),
    "SFPSHFT2 lanes disagree on the backdoor": (
        "SFPSHFT2", dict(_SWAP, lreg_dest=13, instr_mod1=3), {"lane_config": _HALF_BACKDOOR}, True),
    "SFPGT mutating a stack deeper than it holds": (
        "SFPGT", dict(_SIMPLE, imm12_math=0, instr_mod1=2), {"stack_depth": np.full(sfpu.LANES, 9, np.uint8)},
        True),
    "SFPMAD with SFPLOADMACRO work outstanding": (
        "SFPMAD", dict(_MAD, lreg_src_a=1), {"macro_pending": _PENDING}, False),
    "SFPCAST the cycle after a scheduled SFPSWAP": ("SFPCAST", _CAST, {"macro_clock": _BUSY_CLOCK}, False),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DEFERS))
def test_errors_and_scheduled_work_defer_to_python(case):
    name, fields, changes, raises = DEFERS[case]
    result = compare(name, fields, 1, CYCLE, 7, **{**IDLE, **changes})
    assert result.native_cycles == NATIVE_DEFER
    assert mismatches(result) == []
    if raises:  # the Python semantics really refuse it
        outcome = run_python(TILES[1], 1, ISA.encode(name, **fields), CYCLE)
        assert isinstance(outcome, (SimError, IndexError)), outcome


# ------------------------------------------------------------------------------- the comparison itself


def test_the_comparison_catches_a_wrong_result_bit_wrong_cycles_and_a_dirty_defer():
    good = compare("SFPMAD", EXECUTES["SFPMAD"], 0, CYCLE, 11, **IDLE)
    assert mismatches(good) == []
    flipped = {**good.native_after, "sfpu.lreg": good.native_after["sfpu.lreg"].copy()}
    flipped["sfpu.lreg"][4, 17] ^= 1  # the last bit of one lane's result
    assert mismatches(dataclasses.replace(good, native_after=flipped)) == ["sfpu.lreg differs"]
    late = dataclasses.replace(good, native_cycles=good.native_cycles + 1)
    assert mismatches(late) == [f"native took {good.native_cycles + 1} cycles, Python {good.native_cycles}"]
    dirty = dataclasses.replace(good, native_cycles=NATIVE_DEFER)
    assert "deferred, yet changed sfpu.lreg" in mismatches(dirty)


def test_the_fma_comparison_catches_ties_rounded_up():
    """A build whose multiply-add rounds ties up (TSIM_MUTANT_FMA_TIES) differs from the Python model on
    the random operands, on a few of them only."""
    mutant = native.library(("TSIM_MUTANT_FMA_TIES",))
    assert mutant is not None
    fma = _function("tsim_sfpu_fma", ctypes.c_uint32, *(ctypes.c_uint32,) * 3, lib=mutant)
    x, y, z = fma_operands(3, 4000)
    want = sfpu_float.fma(x, y, z)
    wrong = [fma(int(a), int(b), int(c)) != f for a, b, c, f in zip(x, y, z, want, strict=True)]
    assert 0 < sum(wrong) < len(wrong) // 4  # caught, on ties only
    assert (native_fma(x, y, z) == want).all()


# ------------------------------------------------------------------------------- the multiply-add itself


def fma_operands(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Special-heavy triples, a third with z near -(x * y) (cancellations, ties, the denormal edge)."""
    rng = np.random.default_rng(seed)
    x, y, z = (fp32_values(rng, (n,)) for _ in range(3))
    near = rng.random(n) < 0.35
    product = sfpu_float.fma(x, y, np.zeros(n, np.uint32)).astype(np.int64)
    nudged = (product + rng.integers(-3, 4, n)) & 0xFFFFFFFF
    z = np.where(near, nudged.astype(np.uint32) ^ np.uint32(SIGN), z).astype(np.uint32)
    return x, y, z


def test_fma_matches_the_python_model_bit_for_bit():
    x, y, z = fma_operands(1, 60000)
    got, want = native_fma(x, y, z), sfpu_float.fma(x, y, z)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(x[i]), hex(y[i]), hex(z[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_fma_matches_the_documented_reference():
    x, y, z = fma_operands(2, 4000)
    got = native_fma(x, y, z)
    want = [fma_bh(int(a), int(b), int(c)) for a, b, c in zip(x, y, z, strict=True)]
    assert [hex(v) for v in got] == [hex(v) for v in want]


@pytest.mark.parametrize(
    ("x", "y", "z", "expected"),
    [
        (0x3F800000, 0x3F800000, 0xBF800000, 0x00000000),  # 1 * 1 - 1: +0
        (0x80000000, 0x3F800000, 0x80000000, 0x80000000),  # -0 * 1 + -0: -0
        (0x7F800000, 0x00000000, 0x3F800000, 0x7FC00000),  # inf * 0: the canonical NaN
        (0x7F800000, 0x3F800000, 0xFF800000, 0x7FC00000),  # inf - inf
        (0x7F7FFFFF, 0x40000000, 0x00000000, 0x7F800000),  # overflow
        (0x00800000, 0x3F000000, 0x00000000, 0x00000000),  # a denormal result flushes
        (0x00000001, 0x7F7FFFFF, 0x3F800000, 0x3F800000),  # a denormal input is zero
        # (1 + u)**2 - 1 with u = 2**-23: the product's sticky bit (u**2) survives the cancellation and
        # is shifted up with the rest, 2u * (1 + 1/16) (the documented model's own result, not IEEE's 2u)
        (0x3F800001, 0x3F800001, 0xBF800000, 0x34880000),
    ],
)
def test_fma_well_known_results(x, y, z, expected):
    assert FMA(x, y, z) == expected == int(sfpu_float.fma(*(np.array([v], np.uint32) for v in (x, y, z)))[0])


# ------------------------------------------------------------------------------- Wormhole's multiply-add

# The exponents fma_wormhole treats apart: zeros and denormals (0), products that underflow (1..8),
# sums that cancel and round (100..154), products that overflow, infinities and NaNs (247..255).
WH_EXPONENTS = st.one_of(
    st.just(0), st.integers(1, 8), st.integers(100, 154), st.integers(247, 255), st.integers(0, 255)
)
# Zeros and infinities (no mantissa bits), the lowest NaN and denormal, exact products and ties, and
# mantissas whose low bits are clear (products with few sticky bits: the normalising shift's sticky step).
WH_MANTISSAS = st.one_of(
    st.sampled_from([0, 1, 0x400000, 0x7FFFFF]),
    st.integers(0, 0x7F).map(lambda m: m << 16),
    st.tuples(st.integers(0, 0x7FFFFF), st.integers(0, 22)).map(lambda t: t[0] >> t[1] << t[1]),
    st.integers(0, 0x7FFFFF),
)


@st.composite
def wormhole_fp32s(draw: st.DrawFn) -> int:
    """FP32 bit patterns biased to WH_EXPONENTS and WH_MANTISSAS, or one of SPECIAL."""
    if draw(st.integers(0, 3)) == 0:
        return int(draw(st.sampled_from(SPECIAL.tolist())))
    return draw(st.integers(0, 1)) << 31 | draw(WH_EXPONENTS) << 23 | draw(WH_MANTISSAS)


def assert_fma_wormhole_matches(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
    got, want = native_fma_wormhole(x, y, z), fma_wormhole(x, y, z)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(x[i]), hex(y[i]), hex(z[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


@settings(SETTINGS, max_examples=2 * SETTINGS.max_examples)
@given(
    triples=st.lists(st.tuples(wormhole_fp32s(), wormhole_fp32s(), wormhole_fp32s()), min_size=1, max_size=64)
)
def test_fma_wormhole_matches_the_python_model_on_special_exponents(triples):
    assert_fma_wormhole_matches(*(np.array(column, np.uint32) for column in zip(*triples, strict=True)))


@SETTINGS
@given(
    x=wormhole_fp32s(),
    y_exp=st.integers(-3, 3),
    y=st.integers(0, 0xFFFFFF),
    cancel=st.booleans(),
    nudge=st.integers(-3, 3),
)
def test_fma_wormhole_near_cancellation_and_the_denormal_edge(x, y_exp, y, cancel, nudge):
    """test_wormhole_sfpu's construction: products whose exponent lands near 0, and addends that
    (nearly) cancel x * 1; and x * y plus the product itself (its Python result, a few ulps off), of
    the opposite sign (a cancellation) and of the same (a carry)."""
    x_exp = (x >> 23) & 0xFF
    ye = min(max(127 - x_exp + y_exp, 0), 255)
    y = (y & 0x807FFFFF) | ye << 23
    z = x ^ (SIGN if cancel else 0)
    product = int(fma_wormhole(*(np.array([v], np.uint32) for v in (x, y, 0)))[0])
    near = (product + nudge) & 0xFFFFFFFF
    columns = ([x, x, x, x], [y, ONE, y, y], [0, z, near ^ SIGN, near])
    assert_fma_wormhole_matches(*(np.array(column, np.uint32) for column in columns))


EXPONENT_LSB = 1 << 23  # FP32 bits minus this: a normal value halved


def fma_wormhole_operands(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each operand half from fp32_values' special patterns, half any bits. A fifth of the products
    exact or nearly (x's lowest k bits cleared, y's about 21 - k: the sticky bit of a sum normalised
    right by two places is then its bit 1 alone); a third of the addends near -(x * y) as fma_wormhole
    computes it (cancellations, ties, the denormal edge), a tenth near x * y and a tenth near half of it
    (carries, normalised right by one and two places)."""
    rng = np.random.default_rng(seed)

    def operand() -> np.ndarray:
        any_bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        return np.where(rng.random(n) < 0.5, fp32_values(rng, (n,)), any_bits).astype(np.int64)

    x, y, z = operand(), operand(), operand()
    exact = rng.random(n) < 0.2
    low_x = rng.integers(0, 22, n)
    low_y = np.clip(21 - low_x + rng.integers(-1, 2, n), 0, 22)
    x = np.where(exact, x >> low_x << low_x, x).astype(np.uint32)
    y = np.where(exact, y >> low_y << low_y, y).astype(np.uint32)
    product = fma_wormhole(x, y, np.zeros(n, np.uint32)).astype(np.int64)
    nudged = product + rng.integers(-3, 4, n)
    near = rng.random(n)
    z = np.where(
        near < 0.35,
        nudged ^ SIGN,
        np.where(near < 0.45, nudged, np.where(near < 0.55, nudged - EXPONENT_LSB, z)),
    )
    return x, y, (z & 0xFFFFFFFF).astype(np.uint32)


def test_fma_wormhole_matches_the_python_model_on_a_large_batch():
    assert_fma_wormhole_matches(*fma_wormhole_operands(5, 200_000))


def test_fma_wormhole_matches_the_documented_reference():
    x, y, z = fma_wormhole_operands(6, 4000)
    got = native_fma_wormhole(x, y, z)
    want = [fma_wh(int(a), int(b), int(c)) for a, b, c in zip(x, y, z, strict=True)]
    assert [hex(v) for v in got] == [hex(v) for v in want]


@pytest.mark.parametrize(
    ("x", "y", "z", "expected"),
    [
        # 1.6884 * 1.7039 + 1.3889 (an exact product): the sum carries two places and the second bit it
        # drops is no sticky bit, so 1/16 ulp above a tie rounds to even (Blackhole, IEEE: 0x40888019)
        (0x3FD81C00, 0x3FDA1800, 0x3FB1C82D, 0x40888018),
        # x * y just under 1.5 * 2**-126, minus 2**-126: the sum's exponent after normalising is -1,
        # zero before rounding (rounded at the normal position it would carry to 2**-126)
        (0x20001002, 0x203FE800, 0x80800000, 0x00000000),
    ],
)
def test_fma_wormhole_well_known_results(x, y, z, expected):
    args = [np.array([v], np.uint32) for v in (x, y, z)]
    assert FMA_WORMHOLE(x, y, z) == expected == int(fma_wormhole(*args)[0]) == fma_wh(x, y, z)


@pytest.mark.parametrize(("x", "y", "z", "wormhole", "blackhole"), CHIP_VECTORS)
def test_fma_wormhole_and_fma_differ_as_the_chips_do(x, y, z, wormhole, blackhole):
    """test_wormhole_sfpu's hand-worked differences between the chips, each function its chip's."""
    args = [np.array([v], np.uint32) for v in (x, y, z)]
    assert FMA_WORMHOLE(x, y, z) == wormhole == int(fma_wormhole(*args)[0])
    assert FMA(x, y, z) == blackhole


# ------------------------------------------------------------------------------- the MAD-result hold


def python_mad_hold(copro, word: int, cycle: int) -> int | str:
    """sfpu_float.mad_hold as tsim_sfpu_mad_hold answers: 0 it goes, 1 held, 'raises' (UndefinedBehavior),
    'fails' (an index the Python model does not check)."""
    try:
        return 0 if sfpu_float.mad_hold(copro, ISA.decode(word), cycle) is None else 1
    except UndefinedBehavior:
        return "raises"
    except IndexError:
        return "fails"


def set_mad_state(seed: int, cycle: int) -> None:
    """A random MAD result in flight around ``cycle`` (all mad_hold reads) on the first tile."""
    rng = np.random.default_rng(seed)
    s = TILES[0].coprocessor.sfpu
    s.mad_ready[0] = cycle + rng.integers(-2, 3)
    s.mad_seen[...] = rng.random(sfpu.LREGS) < rng.choice([0.0, 0.1, 0.3])
    s.mad_wrote[...] = rng.random(sfpu.LREGS) < rng.choice([0.0, 0.1, 0.5])


def random_fields(rng: np.random.Generator, name: str) -> dict[str, int]:
    """slot_values / words_of with numpy: each slot zero, below 8, below 16 or anything; mostly tidy."""
    fields = {}
    for f in ISA.by_name[name].fields:
        top = (0, min(f.max_value, 7), min(f.max_value, 15), f.max_value)[rng.integers(0, 4)]
        fields[f.name] = int(rng.integers(0, top + 1))
    return tidy(name, fields) if rng.random() < 0.75 else fields


# Instructions whose reads the stalling logic never sees (or, for SFPLOAD / SFPLOADI, in two Mod0 values).
NEVER_SEEN_READING = ("SFPNOP", "SFPLOADMACRO", "SFPENCC", "SFPCOMPC", "SFPPUSHC", "SFPPOPC", "SFPCONFIG",
                      "SFPLOAD", "SFPLOADI")  # fmt: skip
WORDS_PER_EXAMPLE = 40  # mad_hold is cheap: each example checks this many words


@pytest.mark.parametrize("name", SFPU_INSTRUCTIONS)
def test_mad_hold_matches_python(name):
    counts: Counter[object] = Counter()
    copro = TILES[0].coprocessor

    @settings(SETTINGS, max_examples=max(SETTINGS.max_examples // 4, 1))
    @given(seed=seeds)
    def check(seed):
        rng = np.random.default_rng(seed)
        for i in range(WORDS_PER_EXAMPLE):
            set_mad_state(seed + i, CYCLE)
            word, cycle = ISA.encode(name, **random_fields(rng, name)), CYCLE + int(rng.integers(-3, 4))
            want = python_mad_hold(copro, word, cycle)
            got = native_mad_hold(copro, word, cycle)
            counts[want] += 1
            assert got == {"raises": -1, "fails": -1}.get(want, want), (hex(word), cycle)

    check()
    assert counts[0] and (counts[1] or name in NEVER_SEEN_READING), counts


@pytest.mark.parametrize("name", ["NOP", "SETDMAREG", "MVMUL", "STALLWAIT"])
def test_mad_hold_lets_other_units_go(name):
    set_state(4, CYCLE, mad_ready=np.array([CYCLE + 5], np.int64), mad_seen=np.ones(sfpu.LREGS, bool))
    spec = ISA.by_name[name]
    word = ISA.encode(name, **{f.name: 0 for f in spec.fields})
    copro = TILES[0].coprocessor
    assert native_mad_hold(copro, word, CYCLE) == 0 == python_mad_hold(copro, word, CYCLE)


# ------------------------------------------------------------------------------- in the engine, in lockstep

# Instructions that read and write LReg[0..3] mostly, so SFPMAD-family results are read the next cycle.
LOCKSTEP_MIX = (*NATIVE, "SFPNOP", "SFPMAD", "SFPMAD", "SFPADD", "SFPMUL")


def lockstep_program(seed: int) -> list[tuple[int, PushedInstruction]]:
    """(pipe, entry) pairs: tidy words of the instructions here on three pipes, small register numbers."""
    rng = np.random.default_rng(seed)
    entries = []
    for pipe in range(3):
        cycle = int(rng.integers(0, 3))
        for _ in range(int(rng.integers(4, 14))):
            name = LOCKSTEP_MIX[rng.integers(0, len(LOCKSTEP_MIX))]
            fields = tidy(name, random_fields(rng, name))
            for slot in ("lreg_src_a", "lreg_src_b", "lreg_src_c", "lreg_c", "lreg_dest", "lreg_ind"):
                if slot in fields and rng.random() < 0.8:
                    fields[slot] &= 3
            cycle += int(rng.choice([0, 0, 1, 3]))
            entries.append(
                (pipe, PushedInstruction(ISA.encode(name, **fields), f"trisc{pipe}", 0, cycle, True))
            )
    return entries


def lockstep_setup(seed: int):
    def setup(tile) -> None:
        rng = np.random.default_rng(seed)
        s = tile.coprocessor.sfpu
        s.lreg[:8] = with_cancellations(rng, fp32_values(rng, (8, sfpu.LANES)))

    return setup


@settings(SETTINGS, max_examples=max(SETTINGS.max_examples // 15, 1))
@given(seed=seeds)
def test_the_native_engine_runs_them_in_lockstep_with_the_python_engine(seed):
    """Every cycle the same state, pipe bookkeeping and errors (the MAD-result holds and the wait gate's
    UndefinedBehavior for a read its logic misses included)."""
    assert first_difference(lockstep_setup(seed), lockstep_program(seed), 200) is None
