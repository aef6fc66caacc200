"""The native engine on a Wormhole tile, in lockstep with the Python reference engine.

Wormhole's library is built from the same sources over Wormhole's headers (fields_wormhole.h,
constants_wormhole.h) and runs only the instructions whose Wormhole semantics and encoding are
exactly Blackhole's, and those whose handlers implement Wormhole's own semantics too (the vector
unit's: gen_fields.native_instructions, OWN_HANDLERS; test_wormhole_native_sfpu.py checks them);
every other step goes to Python. Random streams
of those instructions, of ones it hands back, of MOP / MOP_CFG / REPLAY words and of any word at all
run on both engines, compared after every cycle (tensixsim.tensix.native.lockstep); so do the
frontend benchmark's program and the SDK's eltwise and matmul kernels.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import test_native_engine as blackhole_tests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.sdk import programs
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native import gen_fields
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.semantics import lookup

WH = isa_for("wormhole")
BH = isa_for("blackhole")
pytestmark = pytest.mark.skipif(
    not native.available("wormhole"), reason="no C compiler: the native engine is absent"
)

NATIVE = list(gen_fields.native_instructions("wormhole"))
# Instructions the Wormhole library hands to Python: shared with Blackhole but without a handler.
DEFERRED = [
    "LOADREG",
    "STOREREG",
]
# Operands of clean programs (the others are 0 or 1), so that most programs run long without raising.
CLEAN_FIELDS = {
    "SETDMAREG": {"set_signals_mode": [0]},
    "SEMINIT": {"max_value": [1, 2], "init_value": [0, 1], "sem_sel": [1, 2]},
    "SEMPOST": {"sem_sel": [1, 2]},
    "SEMGET": {"sem_sel": [1, 2]},
    "SEMWAIT": {"stall_res": [0, 1, 0x40], "sem_sel": [1, 2], "wait_sem_cond": [1, 2]},
    "STALLWAIT": {"stall_res": [0, 1, 0x40], "wait_res": [0, 1, 2, 0x10, 0x80, 0x4000]},
    "ATGETM": {"mutex_index": [0, 2, 5]},  # mutexes that exist on Wormhole (others raise)
    "ATRELM": {"mutex_index": [0, 2, 5]},
    "SETDVALID": {"setvalid": [0, 1, 2, 3]},
    "CLEARDVALID": {"cleardvalid": [0, 1, 2, 3]},
    "UNPACR_NOP": {"no_op": [0x01, 0x02, 0x07, 0x11]},  # ZEROSRC, Nop, SETDVALID, ZEROSRC WaitLikeUnpacr
    "STOREIND": {"mem_hier_sel": [1]},
    "ATINCGET": {"mem_hier_sel": [0]},
    "ATINCGETPTR": {"mem_hier_sel": [0]},
    "ATSWAP": {"mem_hier_sel": [0]},
    "ATCAS": {"mem_hier_sel": [0], "data_reg_index": [0]},
    "REG2FLOP": {"target_sel": [0, 2, 3], "byte_offset": [0], "context_id_2": [0]},
}
LOCKSTEP = settings(
    max_examples=max(10, settings.default.max_examples * 3 // 10),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_the_wormhole_library_runs_exactly_the_instructions_shared_with_blackhole():
    assert Tile("wormhole").backend.engine == "native"
    # The frontend, ThCon, ADC (RWCs included), configuration, sync and vector-unit instructions (with
    # SFPLOADMACRO), the matrix unit's arithmetic, data moves, shifts and ZEROACC, the Src banks'
    # hand-over (ZEROSRC, CLEARDVALID, SETDVALID, UNPACR_NOP), UNPACR and PACR; not PACR_SETREG (Python's
    # on Wormhole).
    shown = {"NOP", "SETDMAREG", "STOREIND", "SETADCXY", "SETRWC", "WRCFG", "SEMWAIT", "STALLWAIT"}
    shown |= {"SFPLOADI", "SFPMOV", "SFPIADD", "SFPSWAP", "SFPTRANSP", "SFPLOAD", "SFPMAD", "SFPLOADMACRO"}
    shown |= {"MVMUL", "ELWADD", "UNPACR", "PACR", "ZEROSRC", "CLEARDVALID", "SETDVALID", "UNPACR_NOP"}
    shown |= {"MOVDBGA2D", "SHIFTXB"}
    assert shown <= set(NATIVE)
    assert "PACR_SETREG" not in NATIVE
    own = set(gen_fields.OWN_HANDLERS["wormhole"])
    for name in NATIVE:
        wh, bh = WH.by_name[name], BH.by_name[name]
        if name in own:  # Wormhole's own semantics, which its handler implements too
            assert lookup("wormhole", name) is not lookup("blackhole", name), name
            assert (
                wh.unit == bh.unit
                and wh.unit in ("sfpu", "matrix", "unpack", "pack")
                and wh.opcode == bh.opcode
            ), name
            continue
        assert lookup("wormhole", name) is lookup("blackhole", name), name
        assert (wh.opcode, wh.fields, wh.unit) == (bh.opcode, bh.fields, bh.unit), name
    # Blackhole's library runs the shared ones (and more).
    assert set(NATIVE) - own < set(gen_fields.native_instructions("blackhole"))


def _word(name: str, **fields: int) -> int:
    spec = WH.by_name[name]
    return WH.encode(name, **{f.name: fields.get(f.name, 0) for f in spec.fields})


def test_an_instruction_outside_the_list_is_deferred_even_where_blackhole_runs_it():
    """Opcode 0x97 is Blackhole's SFPGT and no Wormhole instruction: Wormhole's library defers it, having
    changed nothing; Blackhole's runs it (LReg[2] > LReg[1] on lanes 0..4: all ones there)."""
    word = BH.encode("SFPGT", imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=8)
    assert word >> 24 not in {spec.opcode for spec in WH}
    for arch, runs in (("wormhole", False), ("blackhole", True)):
        copro = Tile(arch).coprocessor
        copro.sfpu.lreg[1] = np.arange(32, dtype=np.uint32) << 20
        copro.sfpu.lreg[2] = 5 << 20
        before = copro.sfpu.lreg.copy()
        cycles = native.exec_one(copro, 0, word, 10)
        assert (cycles != native.NATIVE_DEFER) == runs
        assert np.array_equal(copro.sfpu.lreg, before) != runs


def words_of(names: list[str], wild: bool) -> st.SearchStrategy[int]:
    """test_native_engine's instruction words, drawn from Wormhole's table and clean values."""
    return blackhole_tests.words_of(names, wild, WH, CLEAN_FIELDS, WH.by_name)


def frontend_words(wild: bool) -> st.SearchStrategy[int]:
    """MOP (Wormhole's fields), MOP_CFG and REPLAY words."""
    return blackhole_tests.frontend_words(wild, WH)


@st.composite
def programs_of(draw: st.DrawFn):
    """(pipe, entry) pairs, the three MOP configurations, a configuration word left unwritten (or
    None), a seed for the random state, and the words recorded in every replay slot (or None)."""
    wild = draw(st.integers(0, 3)) == 0
    choices = [words_of(NATIVE, wild)] * 6 + [words_of(DEFERRED, wild), frontend_words(wild)]
    if wild:
        choices.append(st.integers(0, 0xFFFF_FFFF))
    word = st.one_of(*choices)
    entries = []
    for pipe in range(3):
        cycle = draw(st.integers(0, 4))
        for _ in range(draw(st.integers(0, 16))):
            cycle += draw(st.sampled_from([0, 0, 1, 2, 7]))
            core = "brisc" if draw(st.integers(0, 7)) == 0 else f"trisc{pipe}"
            entry = PushedInstruction(draw(word), core, 4 * len(entries), cycle, core != "brisc")
            entries.append((pipe, entry))
    body = st.one_of(st.just(WH.encode("NOP")), words_of(NATIVE, wild))
    mop = [
        [draw(st.integers(0, 3)), draw(st.integers(0, 3)), *(draw(body) for _ in range(7))] for _ in range(3)
    ]
    unwritten = draw(st.sampled_from([None, None, None, 0, 4])) if wild else None
    replay = None if wild else [draw(body) for _ in range(32)]
    return entries, mop, unwritten, draw(st.integers(0, 2**32 - 1)), replay


def prepare(mop, unwritten, seed, replay=None):
    def setup(tile: Tile) -> None:
        copro = tile.coprocessor
        rng = np.random.default_rng(seed)
        copro.thcon.gprs[:] = rng.integers(0, 2**32, copro.thcon.gprs.shape, dtype=np.uint32)
        if rng.integers(2):  # L1 addresses (in 16-byte units) for the scalar unit's loads and stores
            copro.thcon.gprs[:, :4] &= 0x3FFF
        copro.config.thread[:] = rng.integers(0, 4, copro.config.thread.shape, dtype=np.uint16)
        for thread, words in enumerate(mop):
            for index, value in enumerate(words):
                if index != unwritten:
                    copro.frontend.write_mop_config(thread, index, value)
        if replay is not None:
            copro.frontend.replay_buffer[:] = replay
            copro.frontend.replay_written[:] = True

    return setup


@LOCKSTEP
@given(programs_of())
def test_native_engine_matches_the_python_engine_every_cycle_on_wormhole(program):
    entries, mop, unwritten, seed, replay = program
    assert first_difference(prepare(mop, unwritten, seed, replay), entries, 300, arch="wormhole") is None


def test_the_checker_catches_a_broken_native_instruction_on_wormhole():
    """The same check against a Wormhole library whose SETDMAREG writes one wrong bit must fail."""
    broken = native.library(defines=("TSIM_MUTANT_SETDMAREG",), arch="wormhole")
    assert broken is not None and broken is not native.library(arch="wormhole")
    tile = Tile("wormhole", engine="native")
    tile.backend.native.use_library(broken)
    word = _word("SETDMAREG", payload_sig_sel=5, reg_index_16b=4)
    entries = [(0, PushedInstruction(word, "trisc0", 0, 0, True))]
    found = first_difference(prepare([[0] * 9] * 3, None, 1), entries, 20, native=tile, arch="wormhole")
    assert found is not None and "thcon.gprs" in found


def test_native_and_python_runs_of_the_frontend_benchmark_agree_on_wormhole():
    """A MOP whose loop replays scalar-unit instructions: same GPRs, pipe and unit figures, cycles."""
    setdma = _word("SETDMAREG", payload_sig_sel=1, reg_index_16b=4)
    add = _word("ADDDMAREG", result_reg_index=1, op_b_reg_index=2, op_a_reg_index=1)
    replay = _word("REPLAY", start_idx=0, len=10)
    nop = WH.encode("NOP")
    mop = [[50, 10, nop, nop, nop, replay, nop, replay, replay]] * 3
    record = _word("REPLAY", start_idx=0, len=10, load_mode=1)
    words = [record, *[setdma, add] * 5, _word("MOP", mop_type=1)]
    entries = [(0, PushedInstruction(w, "trisc0", 4 * i, i, True)) for i, w in enumerate(words)]
    results = []
    for engine in ("native", "python"):
        tile = Tile("wormhole", engine=engine)
        prepare(mop, None, 3)(tile)
        for pipe, entry in entries:
            tile.queues[pipe].entries.append(entry)
        tile.backend.advance_to(1 << 62)
        result = tile.result()
        results.append((tile.coprocessor.thcon.gprs.copy(), result.pipes, result.units, tile.backend.cycle))
        if engine == "native":
            assert tile.backend.native.instructions == 50 * 10 * 10  # all of them, in C
    assert np.array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:]
    assert results[0][1][0].issued == 50 * 10 * 10  # (the recorded words are not executed)


def _kernel_run(elfs: dict, inputs: dict[int, bytes], engine: str) -> tuple:
    tile = Tile("wormhole", engine=engine)
    assert tile.backend.engine == engine
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    for address, data in inputs.items():
        tile.write(address, data)
    result = tile.run(max_cycles=10**7)
    native_count = tile.backend.native.instructions if tile.backend.native is not None else 0
    return zlib.crc32(tile.l1), result.cycles, result.pipes, result.units, native_count


@pytest.mark.parametrize("kernel", ["eltwise", "matmul"])
def test_sdk_kernels_give_the_same_l1_and_cycles_on_both_engines(kernel: str):
    rng = np.random.default_rng(7)
    a, b = programs.random_bf16_tiles(rng, 4), programs.random_bf16_tiles(rng, 4)
    if kernel == "eltwise":
        elfs = programs.build_eltwise("add", tiles=2, arch="wormhole")
    else:
        elfs = programs.build_matmul(mt=1, nt=2, kt=2, arch="wormhole")
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    fast, reference = (_kernel_run(elfs, inputs, engine) for engine in ("native", "python"))
    assert fast[:4] == reference[:4]
    assert fast[4] > 0  # the semaphores, waits and configuration writes ran in C


def test_a_native_stallwait_block_names_wormholes_condition():
    """Wormhole numbers its STALLWAIT conditions its own way (C7: the matrix unit busy; Blackhole's C7
    is SrcA not valid for it). Thread 1 keeps the matrix unit busy with SETRWCs while thread 0's
    DMANOP waits behind STALLWAIT(C7): on both engines the block names the matrix unit, and counts
    as WAITING_FOR_MATH_IDLE_0."""
    from tensixsim.tensix.sync import B5

    setrwc = WH.encode("SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=0)
    stallwait = WH.encode("STALLWAIT", stall_res=B5, wait_res=1 << 7)
    texts = []
    for engine in ("native", "python"):
        tile = Tile("wormhole", engine=engine)
        tile.host_register(0xFFB12000 + 8, 0, 1)  # start the INSTRN_THREAD bank
        for thread, words in (
            (1, [setrwc] * 30),
            (0, [WH.encode("NOP")] * 3 + [stallwait, WH.encode("DMANOP")]),
        ):
            tile.queues[thread].entries.extend(
                PushedInstruction(w, f"trisc{thread}", 0, 0, False) for w in words
            )
        tile.backend.advance_to(12)
        texts.append(tile.backend.pipes[0].blocked)
        tile.backend.advance_to(1000)
        assert tile.backend.pipes[0].blocked is None and not tile.queues[0].entries
        counted = tile.perf_counters()["WAITING_FOR_MATH_IDLE_0"][1]
        assert 20 <= counted <= 30
    assert texts[0] == texts[1] == "DMANOP: STALLWAIT: matrix unit busy (C7)"
