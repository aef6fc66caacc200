"""The native engine in lockstep with the Python reference engine.

Random instruction streams on all three pipes (natively executed instructions with random operands,
including the modes they defer; MOP and REPLAY expansion from random configurations; semaphores and
waits that block pipes; BRISC pushes; undefined opcodes) run on both engines; after every cycle all
state, bookkeeping and statistics must be identical (tensixsim.tensix.native.lockstep).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import formats, native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native.lockstep import NATIVE_CANDIDATES, first_difference
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu.unit import FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT32, FMT_SRCB, LANES

ISA = isa_for("blackhole")
pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler: the native engine is absent")

# Drawn beside the candidates, with their operands 0 unless CLEAN_FIELDS names them: they block pipes,
# latch waits and change what the others see (the native handlers run them, or hand them to Python).
PYTHON_ONLY = [
    "SEMINIT",
    "SEMPOST",
    "SEMGET",
    "SEMWAIT",
    "STALLWAIT",
    "ATGETM",
    "ATRELM",
    "UNPACR",
    "UNPACR_NOP",
    "SETDVALID",
    "CLEARDVALID",
    "MOVA2D",
]
_PACR_UNPAGED = ("cfg_context", "row_pad_zero", "addr_cnt_context", "ovrd_thread_id", "ctxt_ctrl", "concat")
# Clean programs draw these operands from these values (the other operands of the Python-only
# instructions are 0), so that most programs run long without raising.
CLEAN_FIELDS = {
    "SETDMAREG": {"set_signals_mode": [0]},
    # PACR with the operands that have a Blackhole page and one read interface (prepare configures it)
    "PACR": {**{name: [0] for name in _PACR_UNPAGED}, "read_intf_sel": [1]},
    "SEMINIT": {"max_value": [1, 2], "init_value": [0, 1], "sem_sel": [1, 2]},
    "SEMPOST": {"sem_sel": [1, 2]},
    "SEMGET": {"sem_sel": [1, 2]},
    "SEMWAIT": {"stall_res": [0, 1, 0x40], "sem_sel": [1, 2], "wait_sem_cond": [1, 2]},
    "STALLWAIT": {"stall_res": [0, 1, 0x40], "wait_res": [0, 1, 2, 0x10, 0x80]},
    # the stream registers STREAMWAIT reads are 0: a zero target (with zero high bits) passes
    "STREAMWAIT": {"stall_res": [0, 1, 0x40], "target_value": [0, 0, 1]},
    "ATGETM": {"mutex_index": [0, 2]},  # mutexes that exist (others raise)
    "ATRELM": {"mutex_index": [0, 2]},
    "UNPACR_NOP": {"unpacker_select": [0, 1]},
    "SETDVALID": {"setvalid": [0, 1, 2, 3]},
    "CLEARDVALID": {"cleardvalid": [0, 1, 2, 3]},
    "ELWADD": {"clear_dvalid": [0, 1], "dst": [0, 16]},
    "MVMUL": {"dst": [0, 8]},
    "SFPLUT": {"dest_reg_addr": [0]},
    # The scalar unit's L1 forms (prepare points GPRs 0..3 into L1 in half the programs).
    "STOREIND": {"mem_hier_sel": [1]},
    "ATINCGET": {"mem_hier_sel": [0]},
    "ATINCGETPTR": {"mem_hier_sel": [0]},
    "ATSWAP": {"mem_hier_sel": [0]},
    "ATCAS": {"mem_hier_sel": [0], "data_reg_index": [0]},
    "REG2FLOP": {"target_sel": [0, 2, 3], "byte_offset": [0], "context_id_2": [0]},
}
LOCKSTEP = settings(
    # Each example runs both engines cycle by cycle: 60 under the CI profile keeps the suite's time;
    # HYPOTHESIS_PROFILE=thorough draws 600.
    max_examples=settings.default.max_examples * 6 // 10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def words_of(
    draw: st.DrawFn,
    names: list[str],
    wild: bool,
    isa=ISA,
    clean_fields: dict | None = None,
    candidates: object = NATIVE_CANDIDATES,
) -> int:
    """An instruction of ``isa`` from ``names``: operands 0 or 1 (those of an instruction outside
    ``candidates`` 0; ``clean_fields`` names a field's clean values), or (``wild``) anything their
    slot holds."""
    spec = isa.by_name[draw(st.sampled_from(names))]
    clean = (CLEAN_FIELDS if clean_fields is None else clean_fields).get(spec.name, {})
    fields = {}
    for field in spec.fields:
        top = (1 << field.width) - 1
        small = st.integers(0, min(top, 1))
        if wild:
            fields[field.name] = draw(st.one_of(small, small, small, st.integers(0, top)))
        elif field.name in clean:
            fields[field.name] = draw(st.sampled_from(clean[field.name]))
        elif spec.unit == "sfpu":  # LRegs 0..3 and the plainest modes
            fields[field.name] = draw(st.integers(0, 3)) if field.name.startswith("lreg") else 0
        else:
            fields[field.name] = draw(small) if spec.name in candidates else 0
    return isa.encode(spec.name, **fields)


@st.composite
def frontend_words(draw: st.DrawFn, wild: bool, isa=ISA) -> int:
    """MOP, MOP_CFG and REPLAY words of ``isa`` (in clean programs every replay slot is recorded
    beforehand)."""
    # MOP's low field: zmask_lo16_or_loop_count on Blackhole, zmask_lo16 on Wormhole.
    low = next(f.name for f in isa.by_name["MOP"].fields if f.name.startswith("zmask_lo16"))
    kind = draw(st.sampled_from(["mop0", "mop1", "mop_cfg", "record", "play", "play"]))
    if kind == "mop0":
        lo = draw(st.integers(0, 0xFFFF))
        return isa.encode("MOP", mop_type=0, loop_count=draw(st.integers(0, 5)), **{low: lo})
    if kind == "mop1":
        count = draw(st.sampled_from([0, 0, 0, 1])) if wild else 0
        return isa.encode("MOP", mop_type=1, loop_count=count, **{low: 0})
    if kind == "mop_cfg":
        return isa.encode("MOP_CFG", zmask_hi16=draw(st.sampled_from([0, 1, 0xFFFF, *([0x10000] * wild)])))
    return isa.encode(
        "REPLAY",
        start_idx=draw(st.integers(0, 33 if wild else 31)),
        len=draw(st.integers(0 if wild else 1, 6)),
        execute_while_loading=draw(st.integers(0, 1)),
        load_mode=int(kind == "record"),
    )


def any_word(wild: bool) -> st.SearchStrategy[int]:
    """Mostly natively executed instructions; in wild programs also any 32-bit word."""
    choices = [words_of(NATIVE_CANDIDATES, wild)] * 8
    # Unconfigured unpackers only raise (compression): clean programs leave them out.
    unclean = ("UNPACR", "UNPACR_NOP")
    python_only = PYTHON_ONLY if wild else [n for n in PYTHON_ONLY if n not in unclean]
    choices += [words_of(python_only, wild), frontend_words(wild)]
    if wild:
        choices.append(st.integers(0, 0xFFFF_FFFF))
    return st.one_of(*choices)


@st.composite
def programs(draw: st.DrawFn):
    """(pipe, entry) pairs, the three MOP configurations, a configuration word left unwritten (or
    None), a seed for the random state, and the words recorded in every replay slot (or None)."""
    wild = draw(st.integers(0, 3)) == 0  # a quarter of the programs may hold any word at all
    entries = []
    for pipe in range(3):
        cycle = draw(st.integers(0, 4))
        for _ in range(draw(st.integers(0, 16))):
            cycle += draw(st.sampled_from([0, 0, 1, 2, 7]))
            core = "brisc" if draw(st.integers(0, 7)) == 0 else f"trisc{pipe}"
            word = draw(any_word(wild))
            entries.append((pipe, PushedInstruction(word, core, 4 * len(entries), cycle, core != "brisc")))
    body = st.one_of(st.just(ISA.encode("NOP")), words_of(NATIVE_CANDIDATES, wild))
    mop = [
        [draw(st.integers(0, 3)), draw(st.integers(0, 3)), *(draw(body) for _ in range(7))] for _ in range(3)
    ]
    unwritten = draw(st.sampled_from([None, None, None, 0, 4])) if wild else None
    replay = None if wild else [draw(body) for _ in range(32)]
    return entries, mop, unwritten, draw(st.integers(0, 2**32 - 1)), replay


# A packer that runs PACR natively (BF16 Dst16b to BF16 L1) in both Config states, so that clean
# programs' PACRs write L1 through the engine's L1 notification rather than raise.
PACKER_CONFIG = {
    "THCON_SEC0_REG1_Disable_zero_compress": 1,
    "ALU_FORMAT_SPEC_REG2_Dstacc": formats.BF16,
    "THCON_SEC0_REG1_In_data_format": formats.BF16,
    "THCON_SEC0_REG1_Out_data_format": formats.BF16,
    "PCK_EDGE_OFFSET_SEC0_mask": 0xFFFF,
    "PCK0_ADDR_CTRL_XY_REG_0_Ystride": 32,
    "THCON_SEC0_REG1_L1_Dest_addr": 0x4000 - 1,
    "THCON_SEC0_REG9_Pack_0_2_limit_address": (1 << 17) - 1,
}


def configure_packer(copro) -> None:
    for name, value in PACKER_CONFIG.items():
        for state in (0, 1):
            copro.config.write_field(name, state, value)


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
        configure_packer(copro)

    return setup


@LOCKSTEP
@given(programs())
def test_native_engine_matches_the_python_engine_every_cycle(program):
    entries, mop, unwritten, seed, replay = program
    assert first_difference(prepare(mop, unwritten, seed, replay), entries, 400) is None


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


def test_without_a_compiler_the_python_engine_runs_and_says_so_once(tmp_path):
    """No C compiler and nothing cached: both tiles run the Python engine; one line on stderr."""
    script = (
        "from tensixsim import Tile\n"
        "tiles = [Tile('blackhole'), Tile('blackhole')]\n"
        "print(*(t.backend.engine for t in tiles))\n"
    )
    env = {"PATH": str(tmp_path), "CC": str(tmp_path / "no-cc"), "TENSIXSIM_CACHE": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["python", "python"]
    assert run.stderr.count("tensixsim: no C compiler found") == 1
    assert "100x slower" in run.stderr


@st.composite
def vector_programs(draw: st.DrawFn):
    """Dependent vector-unit arithmetic on LRegs 0..3 (so SFPMAD-family results often hold the next
    reader, which the native engine blocks and retries itself) on two pipes, scalar work on a third."""
    lreg = st.integers(0, 3)
    entries = []
    for pipe in (0, 1, 2):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(4, 20))):
            cycle += draw(st.sampled_from([0, 0, 1, 3]))
            if pipe == 2:
                word = draw(words_of(NATIVE_CANDIDATES[:9], False))
            else:
                kind = draw(st.sampled_from(["SFPMAD", "SFPADD", "SFPMUL", "SFPMOV", "SFPIADD", "SFPLOADI"]))
                if kind == "SFPLOADI":
                    word = ISA.encode(
                        kind, lreg_ind=draw(lreg), instr_mod0=0, imm16=draw(st.integers(0, 0xFFFF))
                    )
                elif kind in ("SFPMOV", "SFPIADD"):
                    iadd = kind == "SFPIADD"  # with an immediate and no flags; SFPMOV a plain copy
                    word = ISA.encode(
                        kind,
                        imm12_math=draw(st.integers(0, 9)) if iadd else 0,
                        lreg_c=draw(lreg),
                        lreg_dest=draw(lreg),
                        instr_mod1=4 if iadd else 0,
                    )
                else:
                    word = ISA.encode(
                        kind,
                        lreg_src_a=draw(lreg),
                        lreg_src_b=draw(lreg),
                        lreg_src_c=draw(lreg),
                        lreg_dest=draw(lreg),
                        instr_mod1=0,
                    )
            entries.append((pipe, PushedInstruction(word, f"trisc{pipe}", 4 * len(entries), cycle, True)))
    return entries, draw(st.integers(0, 2**32 - 1))


@settings(LOCKSTEP, max_examples=50)
@given(vector_programs())
def test_native_engine_matches_the_python_engine_through_sfpmad_holds(program):
    entries, seed = program
    assert first_difference(prepare([[0] * 9] * 3, None, seed), entries, 300) is None


def test_random_words_never_crash_the_native_engine():
    """100,000 random words through the three pipes in a subprocess (a native fault would kill it):
    every batch ends normally or in a named SimError, and most words really run, most of them in C."""
    run = subprocess.run(
        [sys.executable, "-m", "tensixsim.tensix.native.fuzz", "--words", "100000", "--seed", "11"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    counts = {line.rsplit(None, 1)[0]: int(line.rsplit(None, 1)[1]) for line in run.stdout.splitlines()[:-1]}
    assert "100000 words pushed, no other outcome" in run.stdout
    assert counts["words issued"] > 10_000
    assert counts["words executed natively"] > 0.8 * counts["words issued"]


SYNC_KINDS = ["ATGETM", "ATGETM", "ATRELM", "ATRELM", "STREAMWAIT", "STALLWAIT", "NOP"]


@st.composite
def sync_programs(draw: st.DrawFn):
    """Mutex traffic on all three pipes (ATGETM / ATRELM of mutexes 0 and 2, so that pipes contend
    and a release hands over), with STREAMWAIT and STALLWAIT latches and scalar work between."""
    entries = []
    for pipe in (0, 1, 2):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(4, 16))):
            cycle += draw(st.sampled_from([0, 0, 1, 3]))
            kind = draw(st.sampled_from(SYNC_KINDS))
            if kind in ("ATGETM", "ATRELM"):
                word = ISA.encode(kind, mutex_index=draw(st.sampled_from([0, 2])))
            elif kind == "NOP":
                word = draw(words_of(NATIVE_CANDIDATES[:9], False))
            else:
                word = draw(words_of([kind], False))
            entries.append((pipe, PushedInstruction(word, f"trisc{pipe}", 4 * len(entries), cycle, True)))
    return entries, draw(st.integers(0, 2**32 - 1))


@settings(LOCKSTEP, max_examples=60)
@given(sync_programs())
def test_native_engine_matches_the_python_engine_through_mutex_traffic(program):
    entries, seed = program
    assert first_difference(prepare([[0] * 9] * 3, None, seed), entries, 200) is None


def _mutex_pair_entries() -> list[tuple[int, PushedInstruction]]:
    """Pipes 0 and 1 each take mutex 2, do some work and release it; pipe 1 asks while 0 holds it."""
    work = ISA.encode("ADDDMAREG", op_b_is_const=1, result_reg_index=1, op_b_reg_index=1, op_a_reg_index=1)
    get, rel = ISA.encode("ATGETM", mutex_index=2), ISA.encode("ATRELM", mutex_index=2)
    entries = []
    for pipe, start in ((0, 0), (1, 2)):
        for i, word in enumerate([get, *[work] * 6, rel]):
            entries.append((pipe, PushedInstruction(word, f"trisc{pipe}", 4 * len(entries), start + i, True)))
    return entries


def test_a_mutex_pair_across_two_threads_runs_natively_as_in_python():
    runs = []
    for engine in ("native", "python"):
        tile = Tile("blackhole", engine=engine)
        tile.backend.retired = []
        for pipe, entry in _mutex_pair_entries():
            tile.queues[pipe].entries.append(entry)
        tile.backend.advance_to(1 << 62)
        runs.append((tile, list(tile.backend.retired)))
    (native_tile, native_trace), (python_tile, python_trace) = runs
    assert native_trace == python_trace
    assert len(native_trace) == 16
    # pipe 1's ATGETM retired only after pipe 0's ATRELM handed the mutex over
    get, rel = ISA.by_name["ATGETM"].opcode, ISA.by_name["ATRELM"].opcode
    release0 = next(c for t, w, c in native_trace if t == 0 and w >> 24 == rel)
    take1 = next(c for t, w, c in native_trace if t == 1 and w >> 24 == get)
    assert take1 > release0
    assert native_tile.backend.native.instructions == 16  # every one of them in C
    for tile in (native_tile, python_tile):
        assert list(tile.coprocessor.sync.mutex_owner) == [-1] * 8
        assert list(tile.coprocessor.sync.mutex_wanted) == [-1] * 3
    assert dict(native_tile.backend.pipes[1].stalled) == dict(python_tile.backend.pipes[1].stalled)
    assert native_tile.backend.pipes[1].stalled.get("ATGETM", 0) > 0


def test_the_checker_catches_a_gate_that_forgets_what_an_atgetm_wants():
    """Against a library whose gate does not record the mutex an ATGETM at it wants, the lockstep check
    fails (the hand-over then skips the waiting pipe)."""
    broken = native.library(defines=("TSIM_MUTANT_ATGETM_GATE",))
    assert broken is not None
    tile = Tile("blackhole", engine="native")
    tile.backend.native.use_library(broken)
    found = first_difference(prepare([[0] * 9] * 3, None, 1), _mutex_pair_entries(), 100, native=tile)
    assert found is not None and "sync.mutex_wanted" in found


# ------------------------------------------------------------------------------ SFPLOADMACRO

# What the scheduled work may be: every instruction of a sub-unit's column (LRegs 0..7, plain modes),
# and now and then a word of another unit (the model schedules SFPNOP instead).
_MACRO_TEMPLATES = sorted(set().union(*sfpu_macro.COLUMNS[:3]) - {"SFPNOP"})
_PLAIN_FORMATS = (FMT_FP16, FMT_BF16, FMT_FP32, FMT_INT32, FMT_SRCB)


# Instructions whose VC slot must be 0 (anything else is UndefinedBehavior).
_NO_VC = {"SFPENCC", "SFPPUSHC", "SFPPOPC", "SFPCOMPC", "SFPTRANSP"}


@st.composite
def macro_words(draw: st.DrawFn, names: list[str]) -> int:
    """LRegs 0..7, plain formats, small modes, immediates 0 (so that most programs run long)."""
    spec = ISA.by_name[draw(st.sampled_from(names))]
    fields = {}
    for field in spec.fields:
        if field.name.startswith("lreg") and not (field.name == "lreg_c" and spec.name in _NO_VC):
            fields[field.name] = draw(st.integers(0, 7))
        elif field.name == "instr_mod0":
            fields[field.name] = draw(st.sampled_from(_PLAIN_FORMATS))
        elif field.name == "instr_mod1":
            fields[field.name] = draw(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2, 4, 8]))
        else:
            fields[field.name] = 0
    return ISA.encode(spec.name, **fields)


@st.composite
def macro_sequences(draw: st.DrawFn) -> int:
    """A LoadMacroConfig Sequence: per sub-unit a selector (0 none, 2 SFPNOP, 3 SFPSTORE, 4..7 a
    template), a delay, and the VD-16 and swapped-operand bits."""
    value = 0
    for unit in range(4):
        select = draw(st.sampled_from([0, 0, 3, 4, 5, 6, 7] if unit == 3 else [0, 0, 2, 4, 5, 6, 7]))
        if unit == 3 and select:
            select = 3
        delay = draw(st.sampled_from([0, 0, 1, 2, 3, 7]))
        bits = draw(st.sampled_from([0, 0, 0, 0x40, 0x80]))
        value |= (select | delay << 3 | bits) << (8 * unit)
    return value


@st.composite
def macro_programs(draw: st.DrawFn):
    """LoadMacroConfig drawn at random (the same on every lane, but now and then not), and on two pipes
    SFPLOADMACROs between other vector-unit instructions, scalar work on the third."""
    templates = [draw(macro_words(_MACRO_TEMPLATES)) for _ in range(4)]
    sequences = [draw(macro_sequences()) for _ in range(4)]
    misc = draw(st.sampled_from(_PLAIN_FORMATS)) | draw(st.integers(0, 15)) << 4
    misc |= draw(st.sampled_from([0, 0, 0xF, 1, 2, 4, 8])) << 8
    uneven = draw(st.integers(0, 9)) == 0
    entries = []
    for pipe in (0, 1, 2):
        cycle = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(4, 24))):
            cycle += draw(st.sampled_from([0, 0, 1, 2, 5]))
            if pipe == 2:
                word = draw(words_of(NATIVE_CANDIDATES[:9], False))
            elif draw(st.integers(0, 2)):
                word = ISA.encode(
                    "SFPLOADMACRO",
                    lreg_ind=draw(st.integers(0, 15)),
                    instr_mod0=draw(st.sampled_from(_PLAIN_FORMATS)),
                    sfpu_addr_mode=0,
                    dest_reg_addr=draw(st.integers(0, 63)),
                )
            else:
                word = draw(macro_words([*_MACRO_TEMPLATES, "SFPNOP", "SFPNOP", "SFPLOAD", "SFPSTORE"]))
            entries.append((pipe, PushedInstruction(word, f"trisc{pipe}", 4 * len(entries), cycle, True)))
    return entries, templates, sequences, misc, uneven, draw(st.integers(0, 2**32 - 1))


def prepare_macros(templates, sequences, misc, uneven, seed):
    def setup(tile: Tile) -> None:
        s = tile.coprocessor.sfpu
        rng = np.random.default_rng(seed)
        s.lreg[:8] = rng.integers(0, 2**32, (8, LANES), dtype=np.uint32)
        s.macro_template[:] = templates
        s.macro_sequence[:] = sequences
        s.macro_misc[:] = misc
        if uneven:  # LoadMacroConfig differing between lanes: Unimplemented when used
            s.macro_sequence[5, rng.integers(0, 4)] ^= 1 << 3
        regs = tile.coprocessor.regs
        regs.dst[:] = rng.integers(0, 2**16, regs.dst.shape, dtype=np.uint16)

    return setup


@settings(LOCKSTEP, max_examples=120)
@given(macro_programs())
def test_native_engine_matches_the_python_engine_through_sfploadmacro_work(program):
    entries, templates, sequences, misc, uneven, seed = program
    tile = Tile("blackhole", engine="native")
    setup = prepare_macros(templates, sequences, misc, uneven, seed)
    assert first_difference(setup, entries, 300, native=tile) is None
    scheduled = int(tile.coprocessor.sfpu.macro_clock[sfpu_macro.NEXT_SEQ])
    event(f"instructions scheduled: {min(scheduled // 8, 4) * 8}+")


def test_the_checker_catches_a_broken_native_sfploadmacro():
    """Against a library whose scheduler counts the old work down one step too few, the lockstep check
    fails."""
    broken = native.library(defines=("TSIM_MUTANT_MACRO_TICK",))
    assert broken is not None
    tile = Tile("blackhole", engine="native")
    tile.backend.native.use_library(broken)
    delay_one = (4 | 1 << 3) | (3 | 2 << 3) << 24  # template 0 on Simple after 1, a store after 2
    setup = prepare_macros(
        [ISA.encode("SFPNOT", imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=0)] * 4,
        [delay_one] * 4,
        FMT_FP32,
        False,
        3,
    )
    macro = ISA.encode("SFPLOADMACRO", lreg_ind=0, instr_mod0=FMT_FP32, sfpu_addr_mode=0, dest_reg_addr=0)
    nop = ISA.encode("SFPNOP")
    entries = [
        (1, PushedInstruction(w, "trisc1", 4 * i, i, True)) for i, w in enumerate([macro, nop, nop, nop])
    ]
    found = first_difference(setup, entries, 40, native=tile)
    assert found is not None and "sfpu.macro_pending" in found
