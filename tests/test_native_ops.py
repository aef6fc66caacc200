"""The native instruction handlers (tensixsim/tensix/native/*.c) against the Python semantics.

Two Blackhole tiles start every example from identical random state. One runs a random instruction
word natively (``exec_one``), the other through the instruction's Python semantics. A word the native
side defers must leave its tile exactly as it was; a word it executes must retire in the cycles the
Python semantics give and leave every state array of both tiles equal.

The two tiles are built once per module and reset to identical state before each example (every
state array restored from a fresh tile's, then the arrays the instructions read randomised): building
a Tile per example costs 50 ms, which would make this file take minutes.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.arch import CORE_NAMES
from tensixsim.errors import SimError
from tensixsim.isa import isa_for
from tensixsim.isa.spec import Field
from tensixsim.tensix import native
from tensixsim.tensix.config import fields_blackhole as cfg
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.frontend.pipes import NATIVE_WAITS
from tensixsim.tensix.native import gen_fields
from tensixsim.tensix.native.lockstep import THCON_MEMORY
from tensixsim.tensix.semantics import Context, Outcome, Retire, Wait, lookup
from tensixsim.tensix.sfpu import macro
from tensixsim.tensix.thcon import GPR_COUNT

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER
PC = 0x6000

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

# Every instruction with a native handler (the ones tsim_native_op may execute).
THCON = ("DMANOP", "SETDMAREG", "ADDDMAREG", "SUBDMAREG", "MULDMAREG", "BITWOPDMAREG", "SHIFTDMAREG",
         "CMPDMAREG")  # fmt: skip
ADC = ("SETADC", "SETADCXY", "SETADCZW", "SETADCXX", "INCADCXY", "INCADCZW", "ADDRCRXY", "ADDRCRZW",
       "SETRWC", "INCRWC")  # fmt: skip
CONFIG = ("SETC16", "WRCFG", "RDCFG", "RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3", "CFGSHIFTMASK")
SYNC = ("SEMINIT", "SEMPOST", "SEMGET", "SEMWAIT", "STALLWAIT", "STREAMWAIT", "ATGETM", "ATRELM")
NATIVE = ("NOP", *THCON, *ADC, *CONFIG, *SYNC)

# One ordinary word per instruction that must run natively (so the random tests cannot pass by
# deferring everything).
EXECUTES = {
    "NOP": {},
    "DMANOP": {},
    "SETDMAREG": dict(payload_sig_sel_size=2, payload_sig_sel=0x1234, set_signals_mode=0, reg_index_16b=9),
    "ADDDMAREG": dict(op_b_is_const=0, result_reg_index=5, op_b_reg_index=8, op_a_reg_index=1),
    "SUBDMAREG": dict(op_b_is_const=1, result_reg_index=5, op_b_reg_index=63, op_a_reg_index=1),
    "MULDMAREG": dict(op_b_is_const=0, result_reg_index=63, op_b_reg_index=2, op_a_reg_index=3),
    "BITWOPDMAREG": dict(op_b_is_const=0, op_sel=2, result_reg_index=7, op_b_reg_index=4, op_a_reg_index=5),
    "SHIFTDMAREG": dict(op_b_is_const=1, op_sel=1, result_reg_index=7, op_b_reg_index=31, op_a_reg_index=5),
    "CMPDMAREG": dict(op_b_is_const=0, op_sel=1, result_reg_index=0, op_b_reg_index=60, op_a_reg_index=1),
    "SETADC": dict(cnt_set_mask=5, channel_index=1, dimension_index=0, value=0x2FFFF),
    "SETADCXY": dict(cnt_set_mask=7, ch1_y=0x0D, ch1_x=3, ch0_y=4, ch0_x=5, bit_mask=0xB),
    "SETADCZW": dict(cnt_set_mask=2, ch1_w=7, ch1_z=3, ch0_w=4, ch0_z=5, bit_mask=0xF),
    "SETADCXX": dict(cnt_set_mask=3, x_end2=0x3FF, x_start=0x155),
    "INCADCXY": dict(cnt_set_mask=7, ch1_y=0x17, ch1_x=7, ch0_y=1, ch0_x=2),
    "INCADCZW": dict(cnt_set_mask=1, ch1_w=1, ch1_z=2, ch0_w=3, ch0_z=4),
    "ADDRCRXY": dict(cnt_set_mask=6, ch1_y=2, ch1_x=1, ch0_y=7, ch0_x=6, bit_mask=0x5),
    "ADDRCRZW": dict(cnt_set_mask=7, ch1_w=0x1F, ch1_z=7, ch0_w=7, ch0_z=7, bit_mask=0xA),
    "SETRWC": dict(clear_ab_vld=0, rwc_cr=0xB, rwc_d=9, rwc_b=3, rwc_a=15, bit_mask=0xF),
    "INCRWC": dict(rwc_cr=5, rwc_d=15, rwc_b=1, rwc_a=2),
    "SETC16": dict(setc16_reg=1, setc16_value=0xBEEF),
    "WRCFG": dict(gpr_address=6, wr128b=1, cfg_reg=181),  # global words: both states
    "RDCFG": dict(gpr_address=63, cfg_reg=223),
    "RMWCIB0": dict(mask=0xF0, data=0xA5, cfg_reg_addr=4),  # STATE_RESET_EN: RMWCIB only stores
    "RMWCIB1": dict(mask=0xFF, data=0x5A, cfg_reg_addr=0),
    "RMWCIB2": dict(mask=0x0F, data=0x33, cfg_reg_addr=180),
    "RMWCIB3": dict(mask=0x81, data=0xFF, cfg_reg_addr=100),
    "CFGSHIFTMASK": dict(
        disable_mask_on_old_val=0, operation=7, mask_width=11, right_cshift_amt=30, scratch_sel=3, cfg_reg=17
    ),
    "SEMINIT": dict(max_value=2, init_value=1, sem_sel=0x81),
    "SEMPOST": dict(sem_sel=0xFF),
    "SEMGET": dict(sem_sel=0x0F),
    "SEMWAIT": dict(stall_res=0x40, sem_sel=0x06, wait_sem_cond=2),
    "STALLWAIT": dict(stall_res=0x1FF, wait_res=0x1FFF),
    "STREAMWAIT": dict(stall_res=0x10, target_value=0x3FF, target_sel=1, wait_stream_sel=3),
    "ATGETM": dict(mutex_index=2),  # takes it, or waits for its owner (the mutexes are drawn)
    "ATRELM": dict(mutex_index=4),
}

# Words that must defer: each is a case whose Python semantics raise, or act through a service.
_SETC16_RESET = cfg.THREAD_FIELDS["UNPACK_MISC_CFG_CfgContextCntReset_1"]
DEFERS = {
    "special-mode SETDMAREG": ("SETDMAREG", dict(payload_sig_sel_size=1, payload_sig_sel=0x50,
                                                 set_signals_mode=1, reg_index_16b=0)),
    "ADDDMAREG result beyond 6 bits": ("ADDDMAREG", dict(op_b_is_const=0, result_reg_index=64,
                                                         op_b_reg_index=0, op_a_reg_index=0)),
    "BITWOPDMAREG op_sel 3": ("BITWOPDMAREG", dict(op_b_is_const=0, op_sel=3, result_reg_index=0,
                                                   op_b_reg_index=0, op_a_reg_index=0)),
    "SHIFTDMAREG immediate 32": ("SHIFTDMAREG", dict(op_b_is_const=1, op_sel=0, result_reg_index=0,
                                                     op_b_reg_index=32, op_a_reg_index=0)),
    "CMPDMAREG op_sel 3": ("CMPDMAREG", dict(op_b_is_const=0, op_sel=3, result_reg_index=0,
                                             op_b_reg_index=0, op_a_reg_index=0)),
    "SETADCXY ch1_y bit 5": ("SETADCXY", dict(cnt_set_mask=1, ch1_y=0x20, ch1_x=0, ch0_y=0, ch0_x=0,
                                              bit_mask=1)),
    "ADDRCRZW bit_mask bit 4": ("ADDRCRZW", dict(cnt_set_mask=1, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0,
                                                 bit_mask=0x10)),
    "SETADCXX x_end2 bit 10": ("SETADCXX", dict(cnt_set_mask=1, x_end2=0x400, x_start=0)),
    "SEMPOST sem_sel bit 8": ("SEMPOST", dict(sem_sel=0x100)),
    "SEMWAIT sem_sel bit 8": ("SEMWAIT", dict(stall_res=1, sem_sel=0x101, wait_sem_cond=1)),
    "STALLWAIT wait_res bit 13": ("STALLWAIT", dict(stall_res=1, wait_res=1 << 13)),
    "STREAMWAIT target_value bit 10": ("STREAMWAIT", dict(stall_res=1, target_value=0x400, target_sel=0,
                                                          wait_stream_sel=0)),
    "STREAMWAIT wait_stream_sel bit 2": ("STREAMWAIT", dict(stall_res=1, target_value=1, target_sel=0,
                                                            wait_stream_sel=4)),
    "ATGETM of a mutex that does not exist": ("ATGETM", dict(mutex_index=1)),
    "ATRELM beyond the mutexes": ("ATRELM", dict(mutex_index=8)),
    "SETRWC FlipSrcA": ("SETRWC", dict(clear_ab_vld=1, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=1)),
    "INCRWC rwc_cr bit 3": ("INCRWC", dict(rwc_cr=8, rwc_d=0, rwc_b=0, rwc_a=0)),
    "SETC16 beyond ThreadConfig": ("SETC16", dict(setc16_reg=cfg.THD_STATE_SIZE, setc16_value=0)),
    "SETC16 resetting a context counter": ("SETC16", dict(setc16_reg=_SETC16_RESET[0],
                                                          setc16_value=1 << _SETC16_RESET[1])),
    "SETC16 to CFG_STATE_ID": ("SETC16", dict(setc16_reg=cfg.THREAD_FIELDS["CFG_STATE_ID_StateID"][0],
                                              setc16_value=1)),
    "WRCFG to STATE_RESET_EN": ("WRCFG", dict(gpr_address=0, wr128b=1,
                                              cfg_reg=cfg.CONFIG_FIELDS["STATE_RESET_EN"][0])),
    "WRCFG to the PRNG seed": ("WRCFG", dict(gpr_address=0, wr128b=0,
                                             cfg_reg=cfg.CONFIG_FIELDS["PRNG_SEED_Seed_Val"][0])),
    "WRCFG GPR beyond 6 bits": ("WRCFG", dict(gpr_address=64, wr128b=0, cfg_reg=0)),
    "RDCFG beyond Config": ("RDCFG", dict(gpr_address=0, cfg_reg=cfg.CFG_STATE_SIZE * 4)),
    "RMWCIB2 to the PRNG seed": ("RMWCIB2", dict(mask=1, data=1,
                                                 cfg_reg_addr=cfg.CONFIG_FIELDS["PRNG_SEED_Seed_Val"][0])),
    "CFGSHIFTMASK to STATE_RESET_EN": ("CFGSHIFTMASK", dict(
        disable_mask_on_old_val=0, operation=0, mask_width=0, right_cshift_amt=0, scratch_sel=0,
        cfg_reg=cfg.CONFIG_FIELDS["STATE_RESET_EN"][0])),
}  # fmt: skip

# ------------------------------------------------------------------------------- two tiles

TILES = (Tile("blackhole"), Tile("blackhole"))  # (native, Python)
PUSHER = (2, 3, 4)  # the core pushing into each pipe (CORE_NAMES indices: trisc0, trisc1, trisc2)
_NOT_STATE = ("tile", "arch", "isa", "layout")


def _state_objects(tile: Tile) -> dict[str, object]:
    """The tile's L1 and every part of its coprocessor's state, by name."""
    copro = tile.coprocessor
    parts: dict[str, object] = {"l1": tile.l1}
    for name, value in vars(copro).items():
        if name not in _NOT_STATE and (isinstance(value, np.ndarray) or dataclasses.is_dataclass(value)):
            parts[name] = value
    return parts


def _arrays(tile: Tile) -> dict[str, np.ndarray]:
    """Every state array of the tile (live), by dotted name."""
    out: dict[str, np.ndarray] = {}
    for part, obj in _state_objects(tile).items():
        if isinstance(obj, np.ndarray):
            out[part] = obj
        else:
            out.update({f"{part}.{n}": v for n, v in vars(obj).items() if isinstance(v, np.ndarray)})
    return out


FRESH = {name: array.copy() for name, array in _arrays(Tile("blackhole")).items()}
# Arrays this large (L1) are compared in place with a fresh tile's rather than copied per snapshot.
_LARGE = 1 << 16
_AS_FRESH = "as in a fresh tile"


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.nbytes % 8 == 0 and a.flags.c_contiguous and b.flags.c_contiguous:
        a, b = a.reshape(-1).view(np.uint64), b.reshape(-1).view(np.uint64)  # a smaller temporary
    return bool(np.array_equal(a, b))


def snapshot(tile: Tile) -> dict[str, object]:
    """Every state array (copied) and plain state value of the tile, by dotted name."""
    out: dict[str, object] = {}
    for name, array in _arrays(tile).items():
        large_and_fresh = array.nbytes >= _LARGE and _equal(array, FRESH[name])
        out[name] = _AS_FRESH if large_and_fresh else array.copy()
    for part, obj in _state_objects(tile).items():
        if not isinstance(obj, np.ndarray):
            for name, value in vars(obj).items():
                if isinstance(value, (int, bool, bytes, str)):
                    out[f"{part}.{name}"] = value
    return out


def differences(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """The names whose values differ between two snapshots."""
    names = sorted(set(a) | set(b))
    return [n for n in names if n not in a or n not in b or not np.array_equal(a[n], b[n])]  # type: ignore[arg-type]


# The state the handlers read, randomised per example: everything else keeps a fresh tile's values.
RANDOMISED = ("thcon.", "config.", "adc.")


def reset(seed: int) -> None:
    """Give both tiles the same state: a fresh tile's, with GPRs, ADCs, RWCs, Config and ThreadConfig
    (and the unpack context counters a SETC16 may reset) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    drawn: dict[str, np.ndarray] = {}
    for name, array in _arrays(TILES[0]).items():
        value = FRESH[name]
        if name.startswith(RANDOMISED):
            info = np.iinfo(array.dtype)
            value = rng.integers(info.min, info.max, array.shape, dtype=array.dtype, endpoint=True)
            if rng.integers(2):  # the usual case: counters within their widths, small values
                value &= array.dtype.type(min(0x3FF, info.max))
            if name == "config.config" and rng.integers(2):  # global words hold one value, really
                value[1, cfg.GLOBAL_CFGREG_BASE_ADDR32 :] = value[0, cfg.GLOBAL_CFGREG_BASE_ADDR32 :]
        drawn[name] = value
    # The mutexes: free, or held (and wanted) by one of the pipes, so that ATGETM waits and ATRELM
    # hands over.
    for name in ("sync.mutex_owner", "sync.mutex_wanted"):
        drawn[name] = rng.integers(-1, 3, FRESH[name].shape).astype(FRESH[name].dtype)
    for tile in TILES:
        for name, array in _arrays(tile).items():
            if not (array.nbytes >= _LARGE and _equal(array, drawn[name])):  # L1 is rarely written
                array[...] = drawn[name]


def random_dst(
    state: dict[str, np.ndarray], rng: np.random.Generator, cycle: int, special: np.ndarray, hidden: float
) -> np.ndarray:
    """Draw Dst into ``state``: contents (some from ``special`` patterns), undefined rows, and with
    probability ``hidden`` blocks still hidden after a matrix-unit write around ``cycle``. Returns the
    blocks' ready cycles."""
    dst = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint32).astype(np.uint16)
    chosen = rng.random((1024, 16)) < rng.choice([0.0, 0.2, 0.6])
    state["regs.dst"] = np.where(chosen, special[rng.integers(0, len(special), (1024, 16))], dst)
    valid = np.ones(1024, bool)
    if rng.random() < 0.3:
        valid &= rng.random(1024) > rng.choice([0.02, 0.3])
    state["regs.dst_row_valid"] = valid
    ready = cycle - rng.integers(0, 12, 128)
    if rng.random() < hidden:
        late = rng.random(128) < rng.choice([0.05, 0.3])
        ready = np.where(late, cycle + rng.integers(1, 5, 128), ready)
    state["regs.dst_ready"] = ready.astype(np.int64)
    return ready


# ------------------------------------------------------------------------------- running one word


def run_python(tile: Tile, thread: int, word: int, cycle: int) -> Outcome | SimError:
    """The word through its Python semantics as Engine._issue runs them (the work SFPLOADMACRO
    scheduled up to ``cycle`` first; a vector-unit instruction through sfpu.macro.issue): the outcome,
    or the error it raised."""
    instruction = ISA.decode(word)
    copro = tile.coprocessor
    ctx = Context(copro, thread, cycle, instruction, CORE_NAMES[PUSHER[thread]], PC)
    fn = lookup("blackhole", instruction.name)
    try:
        macro.settle(copro, cycle)
        if instruction.unit == "sfpu":
            return macro.issue(ctx, fn)
        return fn(ctx, **instruction.fields)
    except SimError as error:
        return error


@dataclasses.dataclass
class Comparison:
    """What one word did on each side."""

    native_cycles: int
    native_before: dict[str, object]
    native_after: dict[str, object]
    python_outcome: Outcome | SimError | None  # None: not run (the native side deferred)
    python_after: dict[str, object] | None
    native_wait: tuple[str, int | None] | None = None  # NATIVE_WAIT: its text and until


def mismatches(c: Comparison) -> list[str]:
    """How the native side differs from the Python semantics (empty: it does not)."""
    if c.native_cycles == NATIVE_DEFER:
        return [f"deferred, yet changed {name}" for name in differences(c.native_before, c.native_after)]
    problems = []
    if c.native_cycles == native.NATIVE_WAIT:
        outcome = c.python_outcome
        got = (outcome.reason, outcome.until) if isinstance(outcome, Wait) else None
        if got != c.native_wait:
            problems.append(f"native waits {c.native_wait}; Python gave {c.python_outcome!r}")
        problems += [f"waited, yet changed {name}" for name in differences(c.native_before, c.native_after)]
    elif not isinstance(c.python_outcome, Retire):
        problems.append(f"native retired in {c.native_cycles} cycles; Python gave {c.python_outcome!r}")
    elif c.python_outcome.cycles != c.native_cycles:
        problems.append(f"native took {c.native_cycles} cycles, Python {c.python_outcome.cycles}")
    assert c.python_after is not None
    problems += [f"{name} differs" for name in differences(c.native_after, c.python_after)]
    return problems


def run_on_both(
    word: int, thread: int, cycle: int, python: Callable[..., object] | None = None
) -> Comparison:
    """``word`` natively on the first tile, through ``python`` (default: the instruction's semantics,
    run_python) on the second, both already holding the same state."""
    native_tile, python_tile = TILES
    if word >> 24 == ISA.by_name["SFPLOADMACRO"].opcode:  # it records the pushing core and pc it finds
        for tile in TILES:  # in the pipe's source entry (the other instructions never read it)
            tile.backend.pipes[thread].source = PushedInstruction(
                word, CORE_NAMES[PUSHER[thread]], PC, cycle, False
            )
    before = snapshot(native_tile)
    wait: list[int | None] = []
    cycles = native.exec_one(native_tile.coprocessor, thread, word, cycle, wait)
    if cycles == NATIVE_DEFER:
        return Comparison(cycles, before, snapshot(native_tile), None, None)
    outcome = (python or run_python)(python_tile, thread, word, cycle)
    waited = None
    if wait:
        reason, until, detail = wait
        waited = (
            NATIVE_WAITS[reason](until if until is not None else -1, detail, native_tile.arch.name),
            until,
        )
    return Comparison(cycles, before, snapshot(native_tile), outcome, snapshot(python_tile), waited)


def compare(name: str, fields: dict[str, int], thread: int, cycle: int, seed: int) -> Comparison:
    """Reset both tiles from ``seed`` and run the word natively on one, in Python on the other."""
    reset(seed)
    return run_on_both(ISA.encode(name, **fields), thread, cycle)


# ------------------------------------------------------------------------------- random words

# Values worth hitting in index slots: Config's special words and bounds, ThreadConfig's context
# reset register and bounds, the GPR bound.
_SPECIAL = sorted(
    {
        cfg.CONFIG_FIELDS["STATE_RESET_EN"][0],
        cfg.CONFIG_FIELDS["PRNG_SEED_Seed_Val"][0],
        cfg.GLOBAL_CFGREG_BASE_ADDR32 - 1,
        cfg.GLOBAL_CFGREG_BASE_ADDR32,
        cfg.CFG_STATE_SIZE * 4 - 1,
        cfg.CFG_STATE_SIZE * 4,
        cfg.THREAD_FIELDS["UNPACK_MISC_CFG_CfgContextCntReset_0"][0],
        cfg.THD_STATE_SIZE - 1,
        cfg.THD_STATE_SIZE,
        GPR_COUNT - 1,
        GPR_COUNT,
    }
)


def field_values(f: Field) -> st.SearchStrategy[int]:
    """Any value of the slot, with zero, small values and the special indices drawn often."""
    options = [st.integers(0, f.max_value), st.just(0), st.integers(0, min(f.max_value, 7))]
    if f.max_value > 255:
        options.append(st.integers(0, 255))
    options.append(st.sampled_from([v for v in (*_SPECIAL, f.max_value) if v <= f.max_value]))
    return st.one_of(options)


def words_of(name: str) -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries({f.name: field_values(f) for f in ISA.by_name[name].fields})


def native_settings(examples: int) -> settings:
    """Hypothesis settings of the native comparison tests: ``examples`` by default,
    $TENSIXSIM_NATIVE_EXAMPLES (e.g. 2000) for a deeper run; the same examples everywhere."""
    return settings(
        max_examples=int(os.environ.get("TENSIXSIM_NATIVE_EXAMPLES", str(examples))),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def random_comparisons(
    settings_: settings,
    fields: st.SearchStrategy[dict[str, int]],
    cycles: st.SearchStrategy[int],
    run: Callable[[dict[str, int], int, int, int], Comparison],
    tally: Callable[[Comparison, Counter[str]], None] | None = None,
) -> Counter[str]:
    """Draw (fields, thread, cycle, seed), ``run`` the word on both sides and require no mismatch;
    returns how many ran natively and how many deferred (plus what ``tally`` counts)."""
    counts: Counter[str] = Counter()

    @settings_
    @given(fields=fields, thread=st.integers(0, 2), cycle=cycles, seed=st.integers(0, 2**32 - 1))
    def check(fields, thread, cycle, seed):
        # Hypothesis draws small seeds often: mix the whole example in, so the states differ.
        seed = int(np.random.SeedSequence([seed, thread, cycle, *fields.values()]).generate_state(1)[0])
        result = run(fields, thread, cycle, seed)
        counts["deferred" if result.native_cycles == NATIVE_DEFER else "native"] += 1
        if tally is not None:
            tally(result, counts)
        assert mismatches(result) == []

    check()
    return counts


SETTINGS = native_settings(60)
seeds = st.integers(0, 2**32 - 1)
pipes = st.integers(0, 2)
cycles_ = st.integers(0, 2**40)


@pytest.mark.parametrize("name", NATIVE)
@SETTINGS
@given(data=st.data(), thread=pipes, cycle=cycles_, seed=seeds)
def test_native_matches_python_or_defers_unchanged(name, data, thread, cycle, seed):
    fields = data.draw(words_of(name), label="fields")
    result = compare(name, fields, thread, cycle, seed)
    event("deferred" if result.native_cycles == NATIVE_DEFER else "native")
    assert mismatches(result) == []


@pytest.mark.parametrize("name", NATIVE)
def test_an_ordinary_word_runs_natively(name):
    for seed in range(4):
        result = compare(name, EXECUTES[name], seed % 3, 1000, seed)
        assert result.native_cycles != NATIVE_DEFER
        assert mismatches(result) == []


@pytest.mark.parametrize("case", sorted(DEFERS))
def test_errors_and_side_effects_defer_to_python(case):
    name, fields = DEFERS[case]
    result = compare(name, fields, 1, 1000, 7)
    assert result.native_cycles == NATIVE_DEFER
    assert mismatches(result) == []


# The vector unit's instructions (native handlers, and SFPLOADMACRO's deferral) are compared in
# test_native_sfpu_a.py and test_native_sfpu_b.py, the matrix unit's and its Src banks' hand-over
# (UNPACR_NOP's too) in test_native_matrix.py.
# fmt: off
MATRIX_NATIVE = {"MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWADD", "ELWSUB", "ELWMUL", "ZEROACC", "MOVA2D",
                 "MOVB2D", "MOVD2A", "MOVD2B", "MOVB2A", "MOVDBGA2D", "ZEROSRC", "CLEARDVALID", "SETDVALID",
                 "UNPACR_NOP", "SHIFTXA", "SHIFTXB", "TRNSPSRCB", "GATESRCRST", "CLREXPHIST"}
# fmt: on
UNPACK_NATIVE = {"UNPACR"}  # compared in test_native_unpack.py
# Compared in test_native_thcon_mem.py (their words need GPRs pointing into drawn L1).
THCON_MEMORY_NATIVE = set(THCON_MEMORY)
WITHOUT_HANDLER = sorted(
    n
    for n in set(ISA.by_name) - set(NATIVE) - MATRIX_NATIVE - UNPACK_NATIVE - THCON_MEMORY_NATIVE
    if ISA.by_name[n].unit != "sfpu"
)


@pytest.mark.parametrize("name", WITHOUT_HANDLER)
def test_instructions_without_a_handler_defer(name):
    spec = ISA.by_name[name]
    for fill in (0, 1, None):  # all fields zero, all one, all at their maximum
        fields = {f.name: f.max_value if fill is None else min(fill, f.max_value) for f in spec.fields}
        result = compare(name, fields, 0, 1000, 3)
        assert result.native_cycles == NATIVE_DEFER
        assert mismatches(result) == []


@pytest.mark.parametrize("name", ["DMANOP", "ADDDMAREG", "SETADC", "SETC16"])
def test_a_pipe_that_does_not_exist_defers(name):
    reset(5)
    before = snapshot(TILES[0])
    assert native.exec_one(TILES[0].coprocessor, 3, ISA.encode(name, **EXECUTES[name]), 0) == NATIVE_DEFER
    assert differences(before, snapshot(TILES[0])) == []


# ------------------------------------------------------------------------------- mutexes


def _mutexes(owner: list[int], wanted: list[int]) -> None:
    for tile in TILES:
        tile.coprocessor.sync.mutex_owner[:] = owner
        tile.coprocessor.sync.mutex_wanted[:] = wanted


@pytest.mark.parametrize("owner", [0, 2, -3])
def test_atgetm_of_a_mutex_another_thread_holds_waits_with_pythons_text(owner):
    reset(1)
    _mutexes([-1, -1, -1, owner, -1, -1, -1, -1], [-1, 3, -1])
    result = run_on_both(ISA.encode("ATGETM", mutex_index=3), 1, 500)
    assert result.native_cycles == native.NATIVE_WAIT
    assert result.native_wait == (f"mutex 3 held by thread {owner}", None)
    assert mismatches(result) == []


@pytest.mark.parametrize("owner", [-1, 1])
def test_atgetm_of_a_free_or_own_mutex_takes_it(owner):
    reset(2)
    _mutexes([-1, -1, -1, owner, -1, -1, -1, -1], [-1, 3, 0])
    result = run_on_both(ISA.encode("ATGETM", mutex_index=3), 1, 500)
    assert result.native_cycles != NATIVE_DEFER and mismatches(result) == []
    assert result.native_after["sync.mutex_owner"][3] == 1
    assert list(result.native_after["sync.mutex_wanted"]) == [-1, -1, 0]


# (releasing thread, who wants mutex 2) -> its next owner: thread + 1 first, round robin.
HAND_OVER = [
    (0, [-1, 2, 2], 1),
    (1, [2, -1, 2], 2),
    (2, [2, 2, -1], 0),
    (0, [-1, -1, 2], 2),
    (0, [-1, 4, -1], -1),
    (1, [-1, -1, -1], -1),
]


@pytest.mark.parametrize(("thread", "wanted", "next_owner"), HAND_OVER)
def test_atrelm_hands_the_mutex_over_as_python_does(thread, wanted, next_owner):
    reset(3)
    _mutexes([-1, -1, thread, -1, -1, -1, -1, -1], wanted)
    result = run_on_both(ISA.encode("ATRELM", mutex_index=2), thread, 500)
    assert result.native_cycles != NATIVE_DEFER and mismatches(result) == []
    assert result.native_after["sync.mutex_owner"][2] == next_owner


def test_atrelm_of_a_mutex_the_thread_does_not_hold_changes_nothing():
    reset(4)
    _mutexes([-1, -1, 1, -1, -1, -1, -1, -1], [2, -1, 2])
    result = run_on_both(ISA.encode("ATRELM", mutex_index=2), 0, 500)
    assert result.native_cycles != NATIVE_DEFER and mismatches(result) == []
    assert differences(result.native_before, result.native_after) == []


def test_streamwait_latches_the_target_with_its_high_bits():
    reset(5)
    for tile in TILES:
        tile.coprocessor.config.write_thread_field("STREAMWAIT_NUM_MSGS_HI_Val", 2, 0x55)
    word = ISA.encode("STREAMWAIT", stall_res=0, target_value=0x123, target_sel=1, wait_stream_sel=2)
    result = run_on_both(word, 2, 77)
    assert result.native_cycles != NATIVE_DEFER and mismatches(result) == []
    assert result.native_after["sync.gate_target"][2] == 0x55 << 10 | 0x123
    assert result.native_after["sync.gate_stream_select"][2] == 2
    assert result.native_after["sync.gate_block"][2] == 0x40  # a zero block mask means B6


def test_streamwait_defers_when_the_streams_are_not_a_plain_streams(monkeypatch):
    class Other:
        def read(self, stream: int, index: int) -> int:
            return 0

    reset(6)
    monkeypatch.setattr(TILES[0], "streams", Other())
    word = ISA.encode("STREAMWAIT", **EXECUTES["STREAMWAIT"])
    result = run_on_both(word, 0, 10)
    assert result.native_cycles == NATIVE_DEFER and mismatches(result) == []


# ------------------------------------------------------------------------------- the comparison itself


def test_the_comparison_catches_a_wrong_result_bit_wrong_cycles_and_a_dirty_defer():
    fields = EXECUTES["ADDDMAREG"]
    good = compare("ADDDMAREG", fields, 0, 1000, 11)
    assert mismatches(good) == []
    # A handler whose sum had one bit flipped.
    flipped = {**good.native_after, "thcon.gprs": good.native_after["thcon.gprs"].copy()}
    flipped["thcon.gprs"][0, fields["result_reg_index"]] ^= 1 << 7
    assert mismatches(dataclasses.replace(good, native_after=flipped)) == ["thcon.gprs differs"]
    # A handler charging one cycle more than the Python semantics.
    late = dataclasses.replace(good, native_cycles=good.native_cycles + 1)
    assert mismatches(late) == [f"native took {good.native_cycles + 1} cycles, Python {good.native_cycles}"]
    # A handler that wrote the result and then deferred.
    dirty = dataclasses.replace(good, native_cycles=NATIVE_DEFER)
    assert mismatches(dirty) == ["deferred, yet changed thcon.gprs"]


# ------------------------------------------------------------------------------- generated headers


def test_generated_headers_match_their_generator():
    for path, text in gen_fields.headers().items():
        stale = f"{path.name} is stale: run python -m tensixsim.tensix.native.gen_fields"
        assert path.read_text() == text, stale
    assert gen_fields.main(["--check"]) == 0


_FIELD_MACRO = re.compile(r"#define (F_\w+)\(w\) +\(\(\(\(uint32_t\)\(w\)\) >> (\d+)\) & 0x([0-9A-F]+)u\)")
_OPCODE_MACRO = re.compile(r"#define (OP_\w+) +0x([0-9A-F]{2})u")


def test_every_opcode_and_field_macro_extracts_what_the_table_says():
    text = gen_fields.FIELDS_PATH.read_text()
    opcodes = {name: int(value, 16) for name, value in _OPCODE_MACRO.findall(text)}
    extract = {name: (int(lo), int(mask, 16)) for name, lo, mask in _FIELD_MACRO.findall(text)}
    assert opcodes == {f"OP_{spec.name}": spec.opcode for spec in ISA}
    expected = {f"F_{s.name}_{f.name}".upper(): (f.lo, f.max_value) for s in ISA for f in s.fields}
    assert extract == expected
