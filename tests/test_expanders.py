"""MOP and replay expanders, against a literal reference of the documented functional models.

The reference below is transcribed from tt-isa-documentation WormholeB0/TensixTile/
TensixCoprocessor/MOPExpander.md and REPLAY.md, and decodes instruction fields from the documented
bit positions (Bits32_MOP / Bits32_MOP_CFG / Bits32_REPLAY diagrams), not through the ISA table or
the implementation. Where the documentation leaves the outcome open the implementation raises
UndefinedBehavior; the reference marks such output items (see ``undefined``) instead.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim.arch import BLACKHOLE
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.isa import isa_for
from tensixsim.isa.spec import OPERAND_MASK
from tensixsim.tensix.frontend.expanders import (
    REPLAY_SLOTS,
    FrontendState,
    expand_mop,
    mmio_registers,
)

ISA = isa_for("blackhole")
enc = ISA.encode
NOP = enc("NOP")
OP_NOP = ISA.by_name["NOP"].opcode
OP_MOP = ISA.by_name["MOP"].opcode
OP_MOP_CFG = ISA.by_name["MOP_CFG"].opcode
OP_REPLAY = ISA.by_name["REPLAY"].opcode


# ---------------------------------------------------------------------- reference model
def ref_is_nop(instruction):
    return (instruction >> 24) == OP_NOP


def ref_template0(mask, count1, mop_cfg):
    flags = mop_cfg[1]
    insn_b = mop_cfg[2]
    insn_a0 = mop_cfg[3]
    insn_a1 = mop_cfg[4]
    insn_a2 = mop_cfg[5]
    insn_a3 = mop_cfg[6]
    skip_a0 = mop_cfg[7]
    skip_b = mop_cfg[8]
    has_b = flags & 1
    has_a123 = flags & 2
    for _ in range(count1 + 1):
        if (mask & 1) == 0:
            yield insn_a0
            if has_a123:
                yield insn_a1
                yield insn_a2
                yield insn_a3
            if has_b:
                yield insn_b
        else:
            yield skip_a0
            if has_b:
                yield skip_b
        mask >>= 1


def ref_template1(mop_cfg):
    outer_count = mop_cfg[0] & 127
    inner_count = mop_cfg[1] & 127
    start_op = mop_cfg[2]
    end_op0 = mop_cfg[3]
    end_op1 = mop_cfg[4]
    loop_op = mop_cfg[5]
    loop_op1 = mop_cfg[6]
    loop0_last = mop_cfg[7]
    loop1_last = mop_cfg[8]
    if ref_is_nop(loop_op1):
        loop_op_flip = 0
    else:
        loop_op_flip = loop_op ^ loop_op1
        inner_count *= 2
    if outer_count == 1 and ref_is_nop(start_op) and inner_count == 0 and not ref_is_nop(end_op0):
        outer_count += 128  # hardware bug
    for j in range(outer_count):
        if not ref_is_nop(start_op):
            yield start_op
        for i in range(inner_count):
            if i != inner_count - 1:
                yield loop_op
            elif j != outer_count - 1:
                yield loop1_last
            else:
                yield loop0_last
            loop_op ^= loop_op_flip
        if not ref_is_nop(end_op0):
            yield end_op0
            if not ref_is_nop(end_op1):
                yield end_op1


def ref_mop_expander(stream, mop_cfg):
    mask_hi = 0
    for instruction in stream:
        opcode = instruction >> 24
        if opcode == OP_MOP_CFG:
            mask_hi = instruction & 0xFFFF  # MaskHi: bits 15..0
        elif opcode == OP_MOP:
            template = (instruction >> 23) & 1  # Template: bit 23
            count1 = (instruction >> 16) & 0x7F  # Count1: bits 22..16
            mask_lo = instruction & 0xFFFF  # MaskLo: bits 15..0
            if template == 0:
                yield from ref_template0((mask_hi << 16) + mask_lo, count1, mop_cfg)
            else:
                yield from ref_template1(mop_cfg)
        else:
            yield instruction


def ref_replay_expander(stream):
    replay_buffer = [None] * 32  # None: never recorded (no documented reset contents)
    stream = iter(stream)
    for instruction in stream:
        if (instruction >> 24) != OP_REPLAY:
            yield instruction
            continue
        load = instruction & 1  # bit 0
        execute = (instruction >> 1) & 1  # bit 1
        count = (instruction >> 4) & 0x3F  # bits 9..4
        index = (instruction >> 14) & 0x1F  # bits 18..14
        if load:
            for i in range(count or 64):
                instruction = next(stream, None)
                if instruction is None:
                    return
                replay_buffer[(index + i) % 32] = instruction
                if execute:
                    yield instruction
        else:
            for i in range(count or 64):
                yield replay_buffer[(index + i) % 32]


def undefined(item):
    """An output item whose fate the documentation leaves open: a never-recorded replay slot, or
    an instruction that is only ever meant to be handled before the wait gate."""
    return item is None or (item >> 24) in (OP_MOP, OP_MOP_CFG, OP_REPLAY)


def reference_frontend(stream, mop_cfg):
    """(the words reaching the wait gate up to the first undefined one, whether there was one)."""
    out = []
    for item in ref_replay_expander(ref_mop_expander(stream, mop_cfg)):
        if undefined(item):
            return out, True
        out.append(item)
    return out, False


# ---------------------------------------------------------------------- harness
def new_state(mop_cfg=None, thread=0):
    state = FrontendState.new(BLACKHOLE)
    for i, word in enumerate(mop_cfg or ()):
        state.write_mop_config(thread, i, word)
    return state


def run_frontend(state, stream, thread=0):
    """Words reaching the wait gate from ``stream`` pushed into ``thread``, and whether it
    stopped on UndefinedBehavior."""
    replay = state.replay(thread)
    out = []
    try:
        for word in stream:
            for expanded in state.mop_stage(thread, word):
                out.extend(replay.feed(expanded))
    except UndefinedBehavior:
        return out, True
    return out, False


def replay_word(start_idx, length, execute=0, load=0):
    return enc("REPLAY", start_idx=start_idx, len=length, execute_while_loading=execute, load_mode=load)


def mop(mop_type, loop_count=0, zmask_lo16=0):
    return enc("MOP", mop_type=mop_type, loop_count=loop_count, zmask_lo16_or_loop_count=zmask_lo16)


# ---------------------------------------------------------------------- strategies
PLAIN = ("MVMUL", "ELWADD", "SETRWC", "INCRWC", "UNPACR", "PACR", "SFPLOAD", "SEMPOST", "STALLWAIT")


# To the expanders an ordinary instruction is an opaque word; a fixed pool of them (every field
# random, built once) keeps data generation cheap.
_POOL_RANDOM = random.Random(2025)
PLAIN_POOL = tuple(
    enc(name, **{f.name: _POOL_RANDOM.randint(0, f.max_value) for f in ISA.by_name[name].fields})
    for name in PLAIN
    for _ in range(16)
)
plain_words = st.sampled_from(PLAIN_POOL)
FILL = [enc("SEMPOST", sem_sel=n) for n in range(REPLAY_SLOTS)]
# Template 1 tests NOPs by opcode alone, so NOPs come with random operand bits too.
nop_words = st.one_of(st.just(NOP), st.integers(0, OPERAND_MASK).map(lambda bits: NOP | bits))
replay_words = st.builds(
    replay_word, st.integers(0, 31), st.integers(0, 63), st.integers(0, 1), st.integers(0, 1)
)
short_replay_words = st.builds(
    replay_word, st.integers(0, 31), st.integers(0, 6), st.integers(0, 1), st.integers(0, 1)
)
mop_cfg_words = st.integers(0, 0xFFFF).map(lambda hi: enc("MOP_CFG", zmask_hi16=hi))
mop_words = st.one_of(
    st.builds(mop, st.just(0), st.integers(0, 8), st.integers(0, 0xFFFF)),
    st.just(mop(1)),
)
small_counts = st.integers(0, 5)
full_counts = st.integers(0, 127)
template_slot_words = st.one_of(plain_words, nop_words, short_replay_words)


@st.composite
def template1_cfg(draw, counts=full_counts, slot_words=template_slot_words):
    return [draw(counts), draw(counts)] + [draw(slot_words) for _ in range(7)]


# ---------------------------------------------------------------------- MOP templates
@settings(max_examples=300, deadline=None)
@given(
    cfg=st.lists(st.integers(0, 0xFFFF_FFFF), min_size=9, max_size=9),
    zmask_hi16=st.integers(0, 0xFFFF),
    loop_count=st.integers(0, 127),
    zmask_lo16=st.integers(0, 0xFFFF),
)
def test_template0_matches_reference(cfg, zmask_hi16, loop_count, zmask_lo16):
    got = list(expand_mop(cfg, zmask_hi16, 0, loop_count, zmask_lo16))
    want = list(ref_template0((zmask_hi16 << 16) + zmask_lo16, loop_count, cfg))
    assert got == want


@settings(max_examples=150, deadline=None)
@given(cfg=template1_cfg())
def test_template1_matches_reference(cfg):
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == list(ref_template1(cfg))


@settings(max_examples=300, deadline=None)
@given(cfg=template1_cfg(counts=st.integers(0, 3), slot_words=st.one_of(nop_words, plain_words)))
def test_template1_small_loops_match_reference(cfg):
    # Small counts reach the corner cases (zero loops, the 129-iteration bug) far more often.
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == list(ref_template1(cfg))


def test_template0_mask_bits_past_31_read_as_clear():
    a0, skip = enc("SEMPOST", sem_sel=1), enc("SEMPOST", sem_sel=2)
    cfg = [0, 0, NOP, a0, NOP, NOP, NOP, skip, NOP]
    words = list(expand_mop(cfg, 0xFFFF, 0, 39, 0xFFFF))
    assert words == [skip] * 32 + [a0] * 8


def test_template0_flags_use_only_their_low_two_bits():
    a0, a1, a2, a3, b, skip_a, skip_b = (enc("SEMPOST", sem_sel=n) for n in range(1, 8))
    cfg = [0, 0xFFFF_FFFC | 3, b, a0, a1, a2, a3, skip_a, skip_b]
    assert list(expand_mop(cfg, 0, 0, 1, 0b10)) == [a0, a1, a2, a3, b, skip_a, skip_b]


def test_template1_alternates_loop_ops_and_overrides_the_last_step():
    op0, op1, last_all, last_outer = (enc("SEMPOST", sem_sel=n) for n in range(1, 5))
    cfg = [2, 2, NOP, NOP, NOP, op0, op1, last_all, last_outer]
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == [op0, op1, op0, last_outer, op0, op1, op0, last_all]


def test_template1_single_end_op_runs_129_times():
    # MOPExpander.md: OuterCount 1, StartOp NOP, no inner loop, EndOp0 not NOP -> hardware bug.
    end0, end1 = enc("SEMPOST", sem_sel=1), enc("SEMPOST", sem_sel=2)
    cfg = [1, 0, NOP, end0, NOP, NOP, NOP, NOP, NOP]
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == [end0] * 129
    cfg[4] = end1
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == [end0, end1] * 129
    cfg[2] = enc("SEMPOST", sem_sel=3)  # with a start op the bug does not apply
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == [cfg[2], end0, end1]


def test_template1_end_op1_needs_end_op0():
    end1 = enc("SEMPOST", sem_sel=2)
    cfg = [3, 0, NOP, NOP, end1, NOP, NOP, NOP, NOP]
    assert list(expand_mop(cfg, 0, 1, 0, 0)) == []


def test_template1_longest_expansion_is_32639():
    op = enc("SEMPOST", sem_sel=1)
    cfg = [127, 127, op, op, op, op, op, op, op]
    assert sum(1 for _ in expand_mop(cfg, 0, 1, 0, 0)) == 32639  # MOPExpander.md's maximum


def test_template1_count_fields_are_refused():
    cfg = [1, 1] + [NOP] * 7
    with pytest.raises(Unimplemented):
        expand_mop(cfg, 0, 1, 1, 0)
    with pytest.raises(Unimplemented):
        expand_mop(cfg, 0, 1, 0, 5)


def test_template1_counts_above_seven_bits_are_refused():
    with pytest.raises(Unimplemented):
        expand_mop([128, 1] + [NOP] * 7, 0, 1, 0, 0)
    with pytest.raises(Unimplemented):
        expand_mop([1, 200] + [NOP] * 7, 0, 1, 0, 0)


def test_mop_config_is_sampled_when_the_mop_is_taken():
    cfg = [1, 3, NOP, NOP, NOP, enc("SEMPOST", sem_sel=1), NOP, NOP, NOP]
    words = expand_mop(cfg, 0, 1, 0, 0)
    cfg[5] = enc("SEMPOST", sem_sel=2)
    assert next(words) == enc("SEMPOST", sem_sel=1)


# ---------------------------------------------------------------------- MOP and replay stages
@settings(max_examples=200, deadline=None)
@given(
    cfg=template1_cfg(counts=small_counts),
    prefill=st.booleans(),
    body=st.lists(
        st.one_of(plain_words, plain_words, nop_words, replay_words, mop_words, mop_cfg_words),
        min_size=4,
        max_size=40,
    ),
)
def test_frontend_matches_reference(cfg, prefill, body):
    stream = ([replay_word(0, 32, 0, 1), *FILL] if prefill else []) + body
    got, got_undefined = run_frontend(new_state(cfg), stream)
    want, want_undefined = reference_frontend(stream, cfg)
    assert got_undefined == want_undefined
    if want_undefined:
        # A playback is refused as a whole, before any of its entries leave.
        assert got == want[: len(got)]
        assert len(want) - len(got) < 64
    else:
        assert got == want


@settings(max_examples=150, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.integers(0, 31), st.integers(0, 63), st.integers(0, 1), st.lists(plain_words, max_size=70)
        ),
        max_size=6,
    ),
    plays=st.lists(st.tuples(st.integers(0, 31), st.integers(0, 63)), max_size=6),
)
def test_replay_record_and_playback_match_reference(records, plays):
    stream = []
    for start, length, execute, words in records:
        stream += [replay_word(start, length, execute, 1), *words]
    stream += [replay_word(start, length) for start, length in plays]
    got, got_undefined = run_frontend(new_state(), stream)
    want, want_undefined = reference_frontend(stream, [0] * 9)
    assert got_undefined == want_undefined
    if want_undefined:
        assert got == want[: len(got)]
        assert len(want) - len(got) < 64
    else:
        assert got == want


def test_replay_inside_template0_expansion():
    fill = [enc("SEMPOST", sem_sel=n) for n in range(4)]
    cfg = [0, 0, NOP, replay_word(0, 2), NOP, NOP, NOP, replay_word(2, 2), NOP]
    stream = [replay_word(0, 4, 0, 1), *fill, mop(0, 2, 0b010)]
    got, bad = run_frontend(new_state(cfg), stream)
    assert not bad
    assert got == fill[0:2] + fill[2:4] + fill[0:2]


def test_record_without_execute_passes_nothing_on():
    state = new_state()
    replay = state.replay(0)
    assert replay.feed(replay_word(5, 2, 0, 1)) == []
    assert replay.recording
    assert replay.feed(NOP) == []
    assert replay.feed(enc("SEMPOST", sem_sel=4)) == []
    assert not replay.recording
    assert replay.feed(NOP) == [NOP]
    assert replay.feed(replay_word(5, 2)) == [NOP, enc("SEMPOST", sem_sel=4)]


def test_record_count_zero_means_64_and_wraps():
    state = new_state()
    replay = state.replay(0)
    words = [enc("SEMPOST", sem_sel=n) for n in range(64)]
    assert replay.feed(replay_word(3, 0, 1, 1)) == []
    assert [w for word in words for w in replay.feed(word)] == words  # executed while recording
    # The last 32 words overwrote the first 32; slot 3 holds word 32.
    assert replay.feed(replay_word(3, 32)) == words[32:]
    assert replay.feed(replay_word(3, 0)) == words[32:] * 2


def test_playback_ignores_execute_bit():
    state = new_state()
    replay = state.replay(0)
    replay.feed(replay_word(0, 1, 0, 1))
    replay.feed(NOP)
    assert replay.feed(replay_word(0, 1, 1, 0)) == [NOP]


def test_threads_have_separate_expanders():
    state = new_state()
    state.replay(1).feed(replay_word(0, 1, 0, 1))
    assert state.replay(0).feed(NOP) == [NOP]  # thread 0 is not recording
    assert state.replay(1).feed(enc("SEMPOST", sem_sel=1)) == []
    with pytest.raises(UndefinedBehavior):
        state.replay(0).feed(replay_word(0, 1))
    state.set_zmask_hi16(2, 0xABCD)
    assert int(state.zmask_hi16[2]) == 0xABCD and int(state.zmask_hi16[0]) == 0


# ---------------------------------------------------------------------- undocumented cases
def test_mop_in_replay_playback_is_undefined():
    state = new_state()
    replay = state.replay(0)
    replay.feed(replay_word(0, 1, 0, 1))
    replay.feed(mop(1))  # recording it is fine (as from BRISC, which pushes after the MOP stage)
    with pytest.raises(UndefinedBehavior, match="MOP played back"):
        replay.feed(replay_word(0, 1))


def test_replay_in_replay_playback_is_undefined():
    state = new_state()
    replay = state.replay(0)
    replay.feed(replay_word(0, 1, 0, 1))
    replay.feed(replay_word(4, 2))
    with pytest.raises(UndefinedBehavior, match="REPLAY played back"):
        replay.feed(replay_word(0, 1))


def test_replay_executed_while_recording_is_undefined():
    state = new_state()
    replay = state.replay(0)
    replay.feed(replay_word(0, 1, 1, 1))
    with pytest.raises(UndefinedBehavior, match="REPLAY recorded"):
        replay.feed(replay_word(4, 2))


def test_mop_from_mop_expansion_is_undefined():
    cfg = [0, 0, NOP, mop(0), NOP, NOP, NOP, NOP, NOP]
    _, bad = run_frontend(new_state(cfg), [mop(0)])
    assert bad


def test_playback_of_unrecorded_slots_is_undefined():
    state = new_state()
    replay = state.replay(0)
    replay.feed(replay_word(30, 2, 0, 1))
    replay.feed(NOP)
    replay.feed(NOP)
    assert replay.feed(replay_word(30, 2)) == [NOP, NOP]
    with pytest.raises(UndefinedBehavior, match=r"slots \[0\]"):
        replay.feed(replay_word(30, 3))


@pytest.mark.parametrize(
    "fields",
    [
        {"start_idx": 32, "len": 1, "execute_while_loading": 0, "load_mode": 0},
        {"start_idx": 0, "len": 64, "execute_while_loading": 0, "load_mode": 1},
        {"start_idx": 0, "len": 1, "execute_while_loading": 2, "load_mode": 1},
    ],
)
def test_replay_bits_outside_documented_fields_are_undefined(fields):
    with pytest.raises(UndefinedBehavior):
        new_state().replay(0).feed(enc("REPLAY", **fields))


def test_mop_cfg_above_16_bits_is_undefined():
    state = new_state()
    with pytest.raises(UndefinedBehavior):
        list(state.mop_stage(0, enc("MOP_CFG", zmask_hi16=0x1_0000)))


def test_mop_with_unwritten_configuration_is_undefined():
    state = new_state()
    with pytest.raises(UndefinedBehavior, match="never written"):
        state.mop_stage(0, mop(0))
    for i in range(1, 9):  # template 0 does not use MopCfg[0]
        state.write_mop_config(0, i, NOP)
    assert list(state.mop_stage(0, mop(0))) == [NOP]
    with pytest.raises(UndefinedBehavior, match=r"\[0\]"):
        state.mop_stage(0, mop(1))


def test_configuration_write_during_expansion_is_undefined():
    op = enc("SEMPOST", sem_sel=1)
    state = new_state([2, 1, NOP, NOP, NOP, op, NOP, op, op])
    words = state.mop_stage(0, mop(1))
    assert next(words) == op
    assert state.mop_busy[0]
    with pytest.raises(UndefinedBehavior, match="during a MOP expansion"):
        state.write_mop_config(0, 5, NOP)
    state.write_mop_config(1, 5, NOP)  # another thread's configuration is fine
    assert list(words) == [op]
    assert not state.mop_busy[0]
    state.write_mop_config(0, 5, NOP)


# ---------------------------------------------------------------------- MMIO window
def _fake(pipe, name="trisc"):
    core = SimpleNamespace(name=name, facts=SimpleNamespace(pipe=pipe), fault_pc=lambda: 0x1234)
    copro = SimpleNamespace(frontend=new_state(), arch=BLACKHOLE)
    return copro, core


@pytest.mark.parametrize("pipe", [0, 1, 2])
def test_each_trisc_writes_its_own_threads_configuration(pipe):
    copro, core = _fake(pipe)
    registers = mmio_registers(copro, core)
    assert sorted(registers) == [BLACKHOLE.mop_config_base + 4 * i for i in range(9)]
    for i, address in enumerate(sorted(registers)):
        registers[address].write(SimpleNamespace(core=core, address=address, cycle=7), 0x100 + i)
    assert copro.frontend.mop_config(pipe) == tuple(range(0x100, 0x109))
    for other in {0, 1, 2} - {pipe}:
        assert copro.frontend.mop_config(other) == (0,) * 9


def test_brisc_and_ncrisc_have_no_configuration_window():
    assert mmio_registers(*_fake(None, "brisc")) == {}


def test_reading_the_configuration_is_undefined():
    copro, core = _fake(1)
    register = mmio_registers(copro, core)[BLACKHOLE.mop_config_base]
    with pytest.raises(UndefinedBehavior, match="write-only") as info:
        register.read(SimpleNamespace(core=core, address=BLACKHOLE.mop_config_base, cycle=9))
    assert info.value.cycle == 9 and info.value.pc == 0x1234


# ---------------------------------------------------------------------- tt-llk vectors
# Configurations as tt-llk (tenstorrent/tt-llk @ 36b092e8, tt_llk_blackhole) programs them through
# ckernel_template / ckernel_unpack_template::program(), with the words its TT_OP_* macros build
# (argument order = our field order). Expected sequences worked by hand from MOPExpander.md.
ADDR_MOD = {n: n for n in range(8)}
P_SETRWC_CLR_A, P_SETRWC_CLR_AB, P_SETRWC_CR_AB = 1, 3, 3
P_SETRWC_SET_AB, P_SETRWC_SET_ABD_F = 0x3, 0xF
P_SETADC_PAC = 0b100


def ckernel_template(outer, inner, loop_op, loop_op1=NOP):
    """ckernel_template's constructor defaults: both last-iteration slots take the last loop op."""
    last = loop_op1 if loop_op1 != NOP else loop_op
    return {
        "outer": outer,
        "inner": inner,
        "start": NOP,
        "end0": NOP,
        "end1": NOP,
        "loop0": loop_op,
        "loop1": loop_op1,
        "last_outer": last,  # m_loop0_last_instr
        "last_inner": last,  # m_loop1_last_instr
    }


def program(t):
    """ckernel_template::program(): mop_cfg[0..8]."""
    keys = ("outer", "inner", "start", "end0", "end1", "loop0", "loop1", "last_outer", "last_inner")
    return [t[k] for k in keys]


def zeroed(name, **fields):
    """``name`` with every field 0 but those given."""
    return enc(name, **{**{f.name: 0 for f in ISA.by_name[name].fields}, **fields})


def unpacr(**fields):
    return zeroed("UNPACR", **fields)


def mvmul(addr_mode, clear=0):
    return enc("MVMUL", clear_dvalid=clear, instr_mod19=0, addr_mode=addr_mode, dst=0)


def test_llk_matmul_hifi4_replays_the_16_mvmuls_per_fidelity_phase():
    # llk_math_matmul.h, 32x32 tiles, HiFi4: load_replay_buf(16, 16, ...) records the MVMUL
    # sequence; the MOP is ckernel_template(1, 4, lltt::replay_insn(16, 16)) with
    # set_end_op(SETRWC(CLR_A, 0, 0, 0, 0, SET_ABD_F)) when reusing A.
    mvmuls = [mvmul(m) for m in (0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5)]
    t = ckernel_template(1, 4, replay_word(16, 16))
    t["end0"] = enc(
        "SETRWC",
        clear_ab_vld=P_SETRWC_CLR_A,
        rwc_cr=0,
        rwc_d=0,
        rwc_b=0,
        rwc_a=0,
        bit_mask=P_SETRWC_SET_ABD_F,
    )
    state = new_state(program(t), thread=1)
    stream = [replay_word(16, 16, 0, 1), *mvmuls, mop(1)]
    got, bad = run_frontend(state, stream, thread=1)
    assert not bad
    assert got == mvmuls * 4 + [t["end0"]]


def test_llk_eltwise_mul_partial_face_alternates_with_incrwc():
    # llk_math_eltwise_binary.h, ELWMUL, face_r_dim <= 8, 4 faces: ckernel_template(4, 1,
    # ELWMUL(0, 0, SRCB_NO_BCAST, ADDR_MOD_0, 0), INCRWC(0, 8, 8, 8)); the two-op constructor
    # makes both last-iteration slots INCRWC ("preventing the last-iteration override from
    # replacing INCRWC with a second ELWMUL"), then set_end_op(SETRWC(CLR_AB, CR_AB, 0, 0, 0, SET_AB)).
    elwmul = enc("ELWMUL", clear_dvalid=0, dest_accum_en=0, instr_mod19=0, addr_mode=ADDR_MOD[0], dst=0)
    incrwc = enc("INCRWC", rwc_cr=0, rwc_d=8, rwc_b=8, rwc_a=8)
    t = ckernel_template(4, 1, elwmul, incrwc)
    t["end0"] = enc(
        "SETRWC",
        clear_ab_vld=P_SETRWC_CLR_AB,
        rwc_cr=P_SETRWC_CR_AB,
        rwc_d=0,
        rwc_b=0,
        rwc_a=0,
        bit_mask=P_SETRWC_SET_AB,
    )
    got, bad = run_frontend(new_state(program(t), thread=1), [mop(1)], thread=1)
    assert not bad
    assert got == [elwmul, incrwc, t["end0"]] * 4


def test_llk_pack_block_uses_loop1_last_then_loop0_last():
    # experimental/llk_pack_block.h: the per-tile PACRs but the last are recorded at slot 0; the
    # MOP is ckernel_template(1, 1, NOP) with last_inner = PACR(ADDR_MOD_2, Last=0), last_outer =
    # PACR(ADDR_MOD_1, Last=1), start op REPLAY(0, len), end ops INCADCZW(PAC, 0, 0, 1, 0) and
    # SETADCZW(PAC, 0, 0, 0, 0, 0b0001); mop_cfg[0] is then patched to num_tiles (3 here).
    def pacr(addr_mode, last):
        return zeroed("PACR", addr_mode=addr_mode, last=last)

    recorded = [pacr(0, 0)] * 3 + [pacr(2, 0)] + [pacr(0, 0)] * 3
    t = ckernel_template(1, 1, NOP)
    t["last_inner"], t["last_outer"] = pacr(2, 0), pacr(1, 1)
    t["start"] = replay_word(0, len(recorded))
    t["end0"] = enc("INCADCZW", cnt_set_mask=P_SETADC_PAC, ch1_w=0, ch1_z=0, ch0_w=1, ch0_z=0)
    t["end1"] = enc("SETADCZW", cnt_set_mask=P_SETADC_PAC, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0, bit_mask=1)
    state = new_state(program(t), thread=2)
    got, bad = run_frontend(state, [replay_word(0, len(recorded), 0, 1), *recorded], thread=2)
    assert got == [] and not bad
    state.write_mop_config(2, 0, 3)
    got, bad = run_frontend(state, [mop(1)], thread=2)
    assert not bad
    tile = [*recorded, pacr(2, 0), t["end0"], t["end1"]]
    last_tile = [*recorded, pacr(1, 1), t["end0"], t["end1"]]
    assert got == tile * 2 + last_tile


@pytest.mark.parametrize("context, zmask", [(0, 0), (1, 0xFF)])
def test_llk_unpack_ab_matmul_picks_replay_half_by_context(context, zmask):
    # llk_unpack_AB_matmul.h, reuse A, no partial faces: 12 instructions recorded at slot 0 (6 per
    # config context); ckernel_unpack_template(false, false, REPLAY(0, 6), 0, 0, 0, REPLAY(6, 6),
    # 0, 0); run as TT_MOP(0, ct_dim - 1, unp_cfg_context == 0 ? 0 : 0xff), ct_dim = 3.
    recorded = [unpacr(cfg_context_id=ctx, addr_mode=n) for ctx in (0, 1) for n in range(6)]
    cfg = [0, 0, 0, replay_word(0, 6), 0, 0, 0, replay_word(6, 6), 0]  # lA: unused slots written as 0
    stream = [replay_word(0, 12, 0, 1), *recorded, mop(0, 3 - 1, zmask)]
    got, bad = run_frontend(new_state(cfg), stream)
    assert not bad
    assert got == recorded[6 * context : 6 * context + 6] * 3


def test_llk_unpack_template_run_sets_high_mask_with_mop_cfg():
    # ckernel_unpack_template::run(count, zmask): TT_MOP_CFG(zmask >> 16); TT_MOP(0, count - 1,
    # zmask & 0xFFFF). lBA-style: unpack B on, halo off (flags 0b01).
    a, b = unpacr(), unpacr(unpack_block_selection=1)  # SrcA, SrcB
    skip_a = enc("INCADCZW", cnt_set_mask=0b001, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=1)
    skip_b = enc("INCADCZW", cnt_set_mask=0b010, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=1)
    cfg = [0, 0b01, b, a, 0, 0, 0, skip_a, skip_b]
    zmask, count = (1 << 17) | (1 << 2), 20
    stream = [enc("MOP_CFG", zmask_hi16=zmask >> 16), mop(0, count - 1, zmask & 0xFFFF)]
    got, bad = run_frontend(new_state(cfg), stream)
    assert not bad
    want = []
    for i in range(count):
        want += [skip_a, skip_b] if (zmask >> i) & 1 else [a, b]
    assert got == want


def test_llk_record_with_exec_runs_and_keeps_the_sequence():
    # sfpu/ckernel_sfpu_topk.h: load_replay_buf<Exec>(0, 8, ...) records eight SFPU instructions
    # and executes them on the way; later lltt::replay(0, 8) replays them.
    body = [
        enc("SFPLOAD", lreg_ind=n % 4, instr_mod0=0, sfpu_addr_mode=0, dest_reg_addr=4 * n) for n in range(8)
    ]
    got, bad = run_frontend(new_state(), [replay_word(0, 8, 1, 1), *body, replay_word(0, 8)])
    assert not bad
    assert got == body + body


def test_wormhole_template1_ignores_the_instructions_count_fields():
    # Wormhole's MOP.md: template 1 exclusively uses the configuration, so Count1 and MaskLo change
    # nothing there (Blackhole's assembly.yaml makes them a loop-count override, refused above).
    from tensixsim.arch import WORMHOLE

    wh = isa_for("wormhole")
    s1, s2, s3 = (enc("SEMPOST", sem_sel=1 << i) for i in range(3))
    cfg = [2, 3, NOP, NOP, NOP, s1, NOP, s3, s2]  # outer 2, inner 3; LoopOp s1; last steps s3 / s2

    def stage(word: int) -> list[int]:
        state = FrontendState.new(WORMHOLE)
        for index, value in enumerate(cfg):
            state.write_mop_config(0, index, value)
        return list(state.mop_stage(0, word))

    plain = stage(wh.encode("MOP", mop_type=1, loop_count=0, zmask_lo16=0))
    assert plain == [s1, s1, s2, s1, s1, s3]  # each outer pass's last step replaced
    assert stage(wh.encode("MOP", mop_type=1, loop_count=5, zmask_lo16=0x1234)) == plain
    blackhole = FrontendState.new(BLACKHOLE)
    for index, value in enumerate(cfg):
        blackhole.write_mop_config(0, index, value)
    with pytest.raises(Unimplemented):
        blackhole.mop_stage(0, ISA.encode("MOP", mop_type=1, loop_count=5, zmask_lo16_or_loop_count=0))
