"""The native engine in lockstep with the Python reference engine.

Random instruction streams on all three pipes (natively executed instructions with random operands,
including the modes they defer; MOP and REPLAY expansion from random configurations; semaphores and
waits that block pipes; BRISC pushes; undefined opcodes) run on both engines; after every cycle all
state, bookkeeping and statistics must be identical (tensixsim.tensix.native.lockstep).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.capture import PushedInstruction
from tensixsim.tensix.native.lockstep import first_difference

ISA = isa_for("blackhole")
pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler: the native engine is absent")

NATIVE_CANDIDATES = [
    "NOP",
    "DMANOP",
    "SETDMAREG",
    "ADDDMAREG",
    "SUBDMAREG",
    "MULDMAREG",
    "BITWOPDMAREG",
    "SHIFTDMAREG",
    "CMPDMAREG",
    "SETADC",
    "SETADCXY",
    "SETADCZW",
    "SETADCXX",
    "INCADCXY",
    "INCADCZW",
    "ADDRCRXY",
    "ADDRCRZW",
    "SETRWC",
    "INCRWC",
    "SETC16",
    "RMWCIB0",
    "RMWCIB1",
    "RMWCIB2",
    "RMWCIB3",
    "WRCFG",
    "RDCFG",
    "CFGSHIFTMASK",
]
# Handled by the Python semantics only: they block pipes, latch waits and change what others see.
PYTHON_ONLY = ["SEMINIT", "SEMPOST", "SEMGET", "SEMWAIT", "STALLWAIT", "ATGETM", "ATRELM"]
LOCKSTEP = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def words_of(draw: st.DrawFn, names: list[str]) -> int:
    spec = ISA.by_name[draw(st.sampled_from(names))]
    fields = {}
    for field in spec.fields:
        top = (1 << field.width) - 1
        fields[field.name] = draw(st.one_of(st.integers(0, min(top, 3)), st.integers(0, top)))
    return ISA.encode(spec.name, **fields)


@st.composite
def frontend_words(draw: st.DrawFn) -> int:
    kind = draw(st.sampled_from(["mop0", "mop1", "mop_cfg", "record", "play"]))
    if kind == "mop0":
        return ISA.encode(
            "MOP",
            mop_type=0,
            loop_count=draw(st.integers(0, 5)),
            zmask_lo16_or_loop_count=draw(st.integers(0, 0xFFFF)),
        )
    if kind == "mop1":
        return ISA.encode(
            "MOP", mop_type=1, loop_count=draw(st.sampled_from([0, 0, 0, 1])), zmask_lo16_or_loop_count=0
        )
    if kind == "mop_cfg":
        return ISA.encode("MOP_CFG", zmask_hi16=draw(st.sampled_from([0, 1, 0xFFFF, 0x10000])))
    return ISA.encode(
        "REPLAY",
        start_idx=draw(st.integers(0, 33)),
        len=draw(st.integers(0, 6)),
        execute_while_loading=draw(st.integers(0, 1)),
        load_mode=int(kind == "record"),
    )


def any_word() -> st.SearchStrategy[int]:
    return st.one_of(
        words_of(NATIVE_CANDIDATES),
        words_of(NATIVE_CANDIDATES),
        words_of(NATIVE_CANDIDATES),
        words_of(PYTHON_ONLY),
        frontend_words(),
        st.integers(0, 0xFFFF_FFFF),
    )


@st.composite
def programs(draw: st.DrawFn):
    entries = []
    for pipe in range(3):
        cycle = draw(st.integers(0, 4))
        for _ in range(draw(st.integers(0, 10))):
            cycle += draw(st.sampled_from([0, 0, 1, 2, 7]))
            core = "brisc" if draw(st.integers(0, 7)) == 0 else f"trisc{pipe}"
            word = draw(any_word())
            entries.append((pipe, PushedInstruction(word, core, 4 * len(entries), cycle, core != "brisc")))
    mop = [
        [
            draw(st.integers(0, 3)),
            draw(st.integers(0, 3)),
            *(
                draw(st.one_of(st.just(ISA.encode("NOP")), words_of(NATIVE_CANDIDATES), frontend_words()))
                for _ in range(7)
            ),
        ]
        for _ in range(3)
    ]
    unwritten = draw(st.sampled_from([None, None, None, 0, 4]))
    seed = draw(st.integers(0, 2**32 - 1))
    return entries, mop, unwritten, seed


def prepare(mop, unwritten, seed):
    def setup(tile: Tile) -> None:
        copro = tile.coprocessor
        rng = np.random.default_rng(seed)
        copro.thcon.gprs[:] = rng.integers(0, 2**32, copro.thcon.gprs.shape, dtype=np.uint32)
        copro.config.thread[:] = rng.integers(0, 4, copro.config.thread.shape, dtype=np.uint16)
        for thread, words in enumerate(mop):
            for index, value in enumerate(words):
                if index != unwritten:
                    copro.frontend.write_mop_config(thread, index, value)

    return setup


@LOCKSTEP
@given(programs())
def test_native_engine_matches_the_python_engine_every_cycle(program):
    entries, mop, unwritten, seed = program
    assert first_difference(prepare(mop, unwritten, seed), entries, 400) is None


def test_the_checker_catches_a_broken_native_instruction():
    """The same check against a library whose SETDMAREG writes one wrong bit must fail."""
    broken = native.library(defines=("TSIM_MUTANT_SETDMAREG",))
    assert broken is not None
    tile = Tile("blackhole", engine="native")
    tile.backend.native.use_library(broken)
    word = ISA.encode(
        "SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=5, set_signals_mode=0, reg_index_16b=4
    )
    entries = [(0, PushedInstruction(word, "trisc0", 0, 0, True))]
    found = first_difference(prepare([[0] * 9] * 3, None, 1), entries, 20, native=tile)
    assert found is not None and "thcon.gprs" in found


def test_native_and_python_runs_of_the_frontend_benchmark_agree():
    """A MOP whose loop replays scalar-unit instructions: same GPRs, pipe and unit figures."""
    setdma = ISA.encode(
        "SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=1, set_signals_mode=0, reg_index_16b=4
    )
    add = ISA.encode("ADDDMAREG", op_b_is_const=0, result_reg_index=1, op_b_reg_index=2, op_a_reg_index=1)
    body = [setdma, add] * 5
    mop = [
        [
            50,
            10,
            *[ISA.encode("NOP")] * 3,
            ISA.encode("REPLAY", start_idx=0, len=10, execute_while_loading=0, load_mode=0),
            ISA.encode("NOP"),
            *[ISA.encode("REPLAY", start_idx=0, len=10, execute_while_loading=0, load_mode=0)] * 2,
        ]
    ] * 3
    record = ISA.encode("REPLAY", start_idx=0, len=10, execute_while_loading=0, load_mode=1)
    words = [record, *body, ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)]
    entries = [(0, PushedInstruction(w, "trisc0", 4 * i, i, True)) for i, w in enumerate(words)]
    results = []
    for engine in ("native", "python"):
        tile = Tile("blackhole", engine=engine)
        prepare(mop, None, 3)(tile)
        for pipe, entry in entries:
            tile.queues[pipe].entries.append(entry)
        tile.backend.advance_to(1 << 62)
        results.append((tile.coprocessor.thcon.gprs.copy(), tile.result().pipes, tile.result().units))
    assert np.array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:]
    assert results[0][1][0].issued == 50 * 10 * 10
