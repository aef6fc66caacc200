"""The pipe engine: instructions flow from the queues through the frontend to the units."""

from __future__ import annotations

import functools

import pytest
import rvenc
from asm import assemble
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from known_kernel import assert_like_a_new_tile

from tensixsim import (
    CycleLimitExceeded,
    Deadlock,
    InvalidInstruction,
    MemoryFault,
    SimError,
    Tile,
    UndefinedBehavior,
    Unimplemented,
)
from tensixsim.isa import isa_for
from tensixsim.tensix.native.lockstep import STATE_OBJECTS, differences, snapshot
from tensixsim.tensix.semantics import lookup
from tensixsim.timing import FRONTEND, RISCV

ISA = isa_for("blackhole")


def inline(word: int) -> str:
    return f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"


def push_program(words: list[int]) -> str:
    """TRISC0 stores each word to its push address, then ends."""
    lines = ["li s0, 0xFFE40000"]
    for word in words:
        lines += [f"li t0, 0x{word:08x}", "sw t0, 0(s0)"]
    return "\n".join([*lines, "ecall"])


def run_trisc0(source: str, max_cycles: int = 1_000_000, **kwargs) -> Tile:
    tile = Tile("blackhole", **kwargs)
    tile.write(0x6000, assemble(source, base=0x6000))
    tile.run(release=["trisc0"], max_cycles=max_cycles)
    return tile


def test_nops_issue_one_per_cycle_and_the_run_waits_for_the_pipe():
    nop = ISA.encode("NOP")
    # Fusion off (cfg0 DisTriscCache): word i is pushed at cycle 1 + i after the CSR write and can
    # issue FRONTEND.push_to_issue cycles later (the input FIFO and the expanders): the pipe keeps pace.
    no_fusion = "li t0, 0x40000\ncsrs 0x7c0, t0"
    tile = run_trisc0("\n".join([no_fusion] + [inline(nop)] * 50 + ["ecall"]), record_pushes=True)
    pipe = tile.backend.pipes[0]
    assert pipe.issued == 50 and pipe.idle
    history = tile.pushed(0)
    assert len(history) == 50
    assert [h.cycle - history[0].cycle for h in history] == list(range(50))
    assert pipe.last_cycle == history[-1].cycle + FRONTEND.push_to_issue
    assert tile.result().cycles == pipe.last_cycle + 1
    # Out of reset the core fuses four words a cycle (until the input FIFO fills); the pipe still
    # issues one a cycle from the first.
    tile = run_trisc0("\n".join([inline(nop)] * 50 + ["ecall"]), record_pushes=True)
    pipe, history = tile.backend.pipes[0], tile.pushed(0)
    assert [h.cycle - history[0].cycle for h in history[:12]] == [0] * 4 + [1] * 4 + [2] * 4
    assert pipe.issued == 50 and pipe.last_cycle == history[0].cycle + FRONTEND.push_to_issue + 49


def test_unknown_opcode_names_the_pushing_core_and_pc():
    bad = 0x00 << 24  # no instruction has opcode 0
    assert 0 not in ISA.by_opcode
    with pytest.raises(InvalidInstruction) as info:
        run_trisc0(f"nop\n {inline(bad | 5)}\n ecall")
    error = info.value
    assert error.core == "trisc0" and error.pc == 0x6004 and error.value == 5
    assert "pipe 0" in str(error)


def test_instruction_without_semantics_is_unimplemented():
    # RAREB is in the instruction table, but no page documents what it does.
    word = ISA.encode("RAREB")
    with pytest.raises(Unimplemented) as info:
        run_trisc0(f"{inline(word)}\n ecall")
    assert "RAREB" in str(info.value) and info.value.core == "trisc0" and info.value.pc == 0x6000


# ------------------------------------------------------------------ bad words
# Each bad word is pushed by a store at a fixed place, so an error's pc names the word: word i is
# stored at FIRST_PUSH + PUSH_STRIDE * i.
FIRST_PUSH, PUSH_STRIDE = 0x600C, 12
WITHOUT_SEMANTICS = sorted(
    s.name for s in ISA if lookup("blackhole", s.name) is None and s.unit != "frontend"
)
UNKNOWN_OPCODES = [op for op in range(256) if op not in ISA.by_opcode]
NO_REGISTER = (0xFFB1314C, 0xFFB1F000)  # LOADREG/STOREREG addresses with no register behind them


def fixed_push_program(words: list[int]) -> bytes:
    """TRISC0 stores each word to its push address (three instructions a word, whatever its value),
    then ends. Encoded here rather than by the assembler: hypothesis builds hundreds of them."""
    code = [rvenc.encode("lui", "s0", 0xFFE40)]
    for word in words:
        low = (word & 0xFFF) - ((word & 0x800) << 1)  # sign-extended, as addi adds it
        code += [
            rvenc.encode("lui", "t0", ((word - low) >> 12) & 0xFFFFF),
            rvenc.encode("addi", "t0", "t0", low),
            rvenc.encode("sw", "t0", 0, "s0"),
        ]
    return rvenc.to_bytes([*code, rvenc.encode("ecall")])


def fields_of(name: str) -> st.SearchStrategy[int]:
    """``name`` with random operands."""
    spec = ISA.by_name[name]
    return st.fixed_dictionaries({f.name: st.integers(0, (1 << f.width) - 1) for f in spec.fields}).map(
        lambda fields: ISA.encode(name, **fields)
    )


def dmareg(name: str) -> st.SearchStrategy[int]:
    gpr = st.integers(0, 63)
    return st.builds(
        lambda const, r, b, a: ISA.encode(
            name, op_b_is_const=const, result_reg_index=r, op_b_reg_index=b, op_a_reg_index=a
        ),
        st.integers(0, 1),
        gpr,
        gpr,
        gpr,
    )


# Words that always retire whatever came before them.
GOOD_WORDS = st.one_of(
    st.just(ISA.encode("NOP")),
    dmareg("ADDDMAREG"),
    dmareg("SUBDMAREG"),
    st.integers(0, 255).map(lambda sems: ISA.encode("SEMPOST", sem_sel=sems)),
)


def _register_word(name: str) -> st.SearchStrategy[tuple[int, int]]:
    return st.builds(
        lambda data, address: (
            ISA.encode(name, tdma_data_reg_index=data, reg_addr=(address - 0xFFB00000) >> 2),
            address & ~3,
        ),
        st.integers(0, 63),
        st.integers(*NO_REGISTER),
    )


# Kind of bad word -> (its words, each with what the error must name, the error raised). The MOP
# stage has no configuration written and the replay buffer has never recorded anything.
BAD_WORDS: dict[str, tuple[st.SearchStrategy[tuple[int, int | None]], type[SimError]]] = {
    "unknown opcode": (
        st.builds(
            lambda op, low: ((op << 24) | low, None),
            st.sampled_from(UNKNOWN_OPCODES),
            st.integers(0, 2**24 - 1),
        ),
        InvalidInstruction,
    ),
    "no semantics": (
        st.sampled_from(WITHOUT_SEMANTICS).flatmap(fields_of).map(lambda w: (w, None)),
        Unimplemented,
    ),
    "LOADREG without a register": (_register_word("LOADREG"), MemoryFault),
    "STOREREG without a register": (_register_word("STOREREG"), MemoryFault),
    "MOP of an unwritten template": (fields_of("MOP").map(lambda w: (w, None)), UndefinedBehavior),
    "REPLAY of unrecorded slots": (
        st.builds(
            lambda start, count: (
                ISA.encode("REPLAY", start_idx=start, len=count, execute_while_loading=0, load_mode=0),
                None,
            ),
            st.integers(0, 31),
            st.integers(0, 63),
        ),
        UndefinedBehavior,
    ),
}


@st.composite
def programs_with_a_bad_word(draw: st.DrawFn, kind: str) -> tuple[list[int], int, int | None]:
    bad, address = draw(BAD_WORDS[kind][0])
    before = draw(st.lists(GOOD_WORDS, max_size=4))
    after = draw(st.lists(st.one_of(GOOD_WORDS, st.integers(0, 2**32 - 1)), max_size=3))
    return [*before, bad, *after], len(before), address


# Any 32-bit value, or (as often) one with a known opcode and random operands, which gets past decoding.
ANY_WORD = st.one_of(
    st.integers(0, 0xFFFFFFFF),
    st.builds(
        lambda op, low: op << 24 | low, st.sampled_from(sorted(ISA.by_opcode)), st.integers(0, 2**24 - 1)
    ),
)


@functools.cache
def reused_tiles(engine: str) -> tuple[Tile, Tile]:
    """Two tiles per engine that the bad-word tests reuse, reset before every example: a new tile
    costs far more than a run, and many failed programs on one tile test Tile.reset harder."""
    return Tile("blackhole", engine=engine), Tile("blackhole", engine=engine)


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("kind", sorted(BAD_WORDS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_bad_word_raises_its_own_error_changes_nothing_and_the_tile_runs_on(engine, kind, data):
    words, index, address = data.draw(programs_with_a_bad_word(kind))
    expected = BAD_WORDS[kind][1]
    tile, prefix = reused_tiles(engine)
    tile.reset()
    tile.write(0x6000, fixed_push_program(words))
    with pytest.raises(SimError) as info:
        tile.run(release=["trisc0"], max_cycles=200_000)
    error = info.value
    assert type(error) is expected, error
    assert (error.core, error.pc) == ("trisc0", FIRST_PUSH + PUSH_STRIDE * index)
    assert error.cycle is not None and error.cycle > 0
    if address is None:
        assert error.value == words[index]
    else:
        assert isinstance(error, MemoryFault) and error.address == address
    # Nothing of the bad word happened: the units are as after the good words before it alone.
    prefix.reset()
    prefix.write(0x6000, fixed_push_program(words[:index]))
    prefix.run(release=["trisc0"], max_cycles=200_000)
    units = [k for k in snapshot(tile) if k.split(".")[0] in STATE_OBJECTS]
    got, want = snapshot(tile), snapshot(prefix)
    assert differences({k: got[k] for k in units}, {k: want[k] for k in units}) == []
    tile.reset()
    assert_like_a_new_tile(tile)


@pytest.mark.parametrize("engine", ["native", "python"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(ANY_WORD, min_size=1, max_size=6))
def test_random_words_raise_only_errors_their_words_explain_and_the_tile_runs_on(engine, words):
    tile = reused_tiles(engine)[0]
    tile.reset()
    tile.write(0x6000, fixed_push_program(words))
    known = [word >> 24 in ISA.by_opcode for word in words]
    try:
        tile.run(release=["trisc0"], max_cycles=200_000)
    except (Deadlock, CycleLimitExceeded) as error:
        # A word waits for good: no unknown opcode before it was reached.
        assert error.cycle is not None and [w.name for w in error.cores] == [c.name for c in tile.cores]
    except SimError as error:
        assert error.core == "trisc0" and error.cycle is not None
        index, rest = divmod(error.pc - FIRST_PUSH, PUSH_STRIDE)
        assert rest == 0 and 0 <= index < len(words), error
        assert all(known[:index]), "an earlier unknown opcode would have raised first"
        # An undecodable word raises InvalidInstruction naming it; a decodable one never does.
        assert isinstance(error, InvalidInstruction) == (not known[index]), error
        if not known[index]:
            assert error.value == words[index]
    else:
        assert all(known), "an unknown opcode that is reached always raises"
    tile.reset()
    assert_like_a_new_tile(tile)


def test_mop_expansion_issues_what_the_expander_emits_one_per_cycle():
    from tensixsim.tensix.frontend.expanders import expand_mop

    nop = ISA.encode("NOP")
    cfg = [3, 4] + [nop] * 7  # template 1: outer 3, inner 4, every op a NOP
    expected = list(expand_mop(cfg, 0, 1, 0, 0))
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    tile = run_trisc0("\n".join([*lines, inline(mop), "ecall"]), record_pushes=True)
    pipe = tile.backend.pipes[0]
    assert len(expected) >= 12 and pipe.issued == len(expected)
    taken = tile.queues[0].taken[0][0]
    assert pipe.last_cycle == taken + len(expected) - 1  # one per cycle from the cycle it was taken


def test_max_cycles_bounds_coprocessor_work_after_the_cores_finish():
    # TRISC0 pushes four MOPs of 127 x 127 NOPs and exits: the pipe alone would run about 64,000
    # cycles past the limit. The run stops at the limit instead, naming what was still running.
    nop = ISA.encode("NOP")
    cfg = [127, 127] + [nop] * 7
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    program = "\n".join([*lines, *[inline(mop)] * 4, "ecall"])
    with pytest.raises(CycleLimitExceeded, match="coprocessor") as info:
        run_trisc0(program, max_cycles=5_000)
    assert info.value.cycle == 5_000
    tile = run_trisc0(program, max_cycles=100_000)  # enough: the same program finishes
    assert tile.backend.pipes[0].issued == 4 * 127 * 127


@pytest.mark.parametrize("name", ["LOADREG", "STOREREG"])
def test_register_access_without_a_register_names_the_pushing_core(name):
    word = ISA.encode(name, tdma_data_reg_index=1, reg_addr=(0xFFB12024 - 0xFFB00000) >> 2)
    with pytest.raises(MemoryFault, match="no register") as info:
        run_trisc0(f"nop\n {inline(word)}\n ecall")
    assert (info.value.core, info.value.pc, info.value.address) == ("trisc0", 0x6004, 0xFFB12024)


@pytest.mark.parametrize("offset", [4, 8])  # CoprocessorDoneCheck, MOPExpanderDoneCheck
def test_done_check_read_returns_once_the_pipe_has_drained(offset):
    from tensixsim.tensix.frontend.expanders import expand_mop

    nop = ISA.encode("NOP")
    cfg = [5, 6] + [nop] * 7
    count = len(list(expand_mop(cfg, 0, 1, 0, 0)))
    mop = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(cfg):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    lines += [inline(mop), "li s1, 0xFFE80000", f"lw a0, {offset}(s1)", "csrr a1, mcycle", "ecall"]
    tile = run_trisc0("\n".join(lines))
    pipe = tile.backend.pipes[0]
    assert pipe.issued == count
    # The read completes only after the last expanded instruction left the pipe.
    assert tile.core("trisc0").reg("a1") > pipe.last_cycle


@pytest.mark.parametrize("quantum", [100, 2000])
def test_atcas_waiting_on_l1_is_released_by_a_core_store(quantum):
    # TRISC0's ATCAS waits for L1 0x20000 to hold 1; BRISC stores 1 there after a delay loop.
    # The pipe must retry at BRISC's store (the store is watched), not deadlock or miss it.
    atcas = ISA.encode(
        "ATCAS", mem_hier_sel=0, swap_val=7, cmp_val=1, sel32b=0, data_reg_index=0, addr_reg_index=3
    )
    trisc0 = "\n".join(
        [
            "li s0, 0xFFE00000",
            "li t0, 0x2000",
            "sw t0, 12(s0)",  # GPR3 = 0x20000 / 16
            inline(atcas),
            "li s1, 0xFFE80000",
            "lw a0, 4(s1)",
            "csrr a1, mcycle",
            "ecall",
        ]
    )
    brisc = "li t0, 3000\n 1: addi t0, t0, -1\n bnez t0, 1b\n csrr a1, mcycle\n li s0, 0x20000\n li t1, 1\n"
    brisc += "sw t1, 0(s0)\n ecall"
    tile = Tile("blackhole", quantum=quantum)
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.write(0, assemble(brisc))
    tile.run(release=["brisc", "trisc0"])
    assert tile.read(0x20000, 4) == (7).to_bytes(4, "little")  # the swap happened
    stored_at = tile.core("brisc").reg("a1")
    # TRISC0 went on (its done-check read returned) only after BRISC's store let the ATCAS through.
    assert tile.core("trisc0").reg("a1") > stored_at
    assert tile.core("trisc0").reg("a1") < stored_at + 200


def test_done_check_read_between_the_last_issue_and_the_unit_finishing_wakes_when_it_finishes():
    # TRISC0's scalar-unit instruction has issued (its queue is empty) but still occupies its unit
    # when the done check is read: the read must complete when the unit finishes, although nothing
    # more issues from that pipe and TRISC1 keeps running (busy, never parked) until TRISC0 is done.
    add = ISA.encode("ADDDMAREG", op_b_is_const=1, result_reg_index=2, op_b_reg_index=1, op_a_reg_index=3)
    trisc0 = "\n".join(
        [
            inline(add),
            "li s1, 0xFFE80000",
            # The read comes once the ADDDMAREG has issued (FRONTEND.push_to_issue after its push).
            *["nop"] * FRONTEND.push_to_issue,
            "lw a0, 4(s1)",
            "add a2, a0, zero",
            "csrr a1, mcycle",
            "li s0, 0x20000",
            "li t0, 1",
            "sw t0, 0(s0)",
            "ecall",
        ]
    )
    trisc1 = "li s0, 0x20000\n 1: addi a2, a2, 1\n lw t0, 0(s0)\n beqz t0, 1b\n ecall"
    tile = Tile("blackhole")
    tile.write(0x6000, assemble(trisc0, base=0x6000))
    tile.write(0xA000, assemble(trisc1, base=0xA000))
    tile.run(release=["trisc0", "trisc1"], max_cycles=200_000)
    pipe = tile.backend.pipes[0]
    assert pipe.issued == 1 and pipe.idle
    # The read was retried exactly when the unit finished; the instruction using its result issues once
    # the response is in (a read of the PC-buffer page), and csrr the cycle after.
    assert tile.core("trisc0").reg("a1") == pipe.done_cycle + RISCV.window_costs("pcbuf")[0] + 1
    assert tile.result().cores["trisc1"].state == "finished"
