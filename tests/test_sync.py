"""Sync unit: semaphores, mutexes, the wait gate and the RISC-V semaphore view.

The reference below is written from tt-isa-documentation BlackholeA0 SyncUnit.md and the SEMINIT,
SEMPOST, SEMGET, SEMWAIT, STALLWAIT, ATGETM and ATRELM pages, as literally as the pseudocode reads,
and knows nothing of the implementation's arrays. Tests drive the implementation as the pipe engine
does: the wait gate first (``gate_blocks``), then the semantics, retrying Wait outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from asm import assemble
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensixsim import Tile
from tensixsim.errors import Deadlock, InvalidProgram, MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.isa import isa_for, to_stream_word
from tensixsim.tensix import sync
from tensixsim.tensix.pack.stream import STREAM_DRAINED
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup

ISA = isa_for("blackhole")
THREADS = 3
MUTEXES = (0, 2, 3, 4)
SEM_BASE = 0xFFE80020
RESULTS = 0x20000
RESET_PC = {"brisc": 0x0, "ncrisc": 0x12000, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------- documented facts

# STALLWAIT.md "exact set of instructions blocked from starting by each bit", transposed: the
# instructions each block bit holds. STALLWAIT, SEMWAIT and STREAMWAIT are held by every bit.
_DOC_BLOCKED = {
    0: """ADDDMAREG ADDRCRXY ADDRCRZW ATCAS ATINCGET ATINCGETPTR ATSWAP BITWOPDMAREG CMPDMAREG DMANOP
        FLUSHDMA INCADCXY INCADCZW LOADIND LOADREG MOP MOP_CFG MULDMAREG NOP PACR PACR_SETREG REG2FLOP
        REPLAY RESOURCEDECL RSTDMA SETADC SETADCXX SETADCXY SETADCZW SETDMAREG SETDVALID SHIFTDMAREG
        STOREIND STOREREG SUBDMAREG UNPACR UNPACR_NOP XMOV""",
    1: "ATGETM ATRELM SEMGET SEMINIT SEMPOST",
    2: "PACR PACR_SETREG",
    3: "UNPACR UNPACR_NOP",
    4: "XMOV",
    5: """ADDDMAREG ATCAS ATINCGET ATINCGETPTR ATSWAP BITWOPDMAREG CMPDMAREG DMANOP FLUSHDMA LOADIND
        LOADREG MULDMAREG REG2FLOP SETDMAREG SHIFTDMAREG STOREIND STOREREG SUBDMAREG""",
    6: """APOOL3S1 APOOL3S2 CLEARDVALID CLREXPHIST CONV3S1 CONV3S2 DOTPV ELWADD ELWMUL ELWSUB GAPOOL
        GATESRCRST GMPOOL INCRWC MFCONV3S1 MOVA2D MOVB2A MOVB2D MOVD2A MOVD2B MOVDBGA2D MPOOL3S1
        MPOOL3S2 MVMUL SETRWC SHIFTXA SHIFTXB TRNSPSRCB ZEROACC ZEROSRC""",
    7: "CFGSHIFTMASK RDCFG RMWCIB SETC16 STREAMWRCFG WRCFG",
    8: """SFPABS SFPADD SFPADDI SFPAND SFPARECIP SFPCAST SFPCOMPC SFPCONFIG SFPDIVP2 SFPENCC SFPEXEXP
        SFPEXMAN SFPGT SFPIADD SFPLE SFPLOAD SFPLOADI SFPLOADMACRO SFPLUT SFPLUTFP32 SFPLZ SFPMAD SFPMOV
        SFPMUL SFPMUL24 SFPMULI SFPNOP SFPNOT SFPOR SFPPOPC SFPPUSHC SFPSETCC SFPSETEXP SFPSETMAN
        SFPSETSGN SFPSHFT SFPSHFT2 SFPSTOCHRND SFPSTORE SFPSWAP SFPTRANSP SFPXOR""",
}
# The page's names for instructions the table spells differently.
_DOC_ALIASES = {"RMWCIB": ("RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3"), "SFPSTOCHRND": ("SFP_STOCH_RND",)}


def _documented_blocks() -> dict[str, int]:
    blocks: dict[str, int] = dict.fromkeys(("STALLWAIT", "SEMWAIT", "STREAMWAIT"), 0x1FF)
    for bit, names in _DOC_BLOCKED.items():
        for name in names.split():
            for table_name in _DOC_ALIASES.get(name, (name,)):
                blocks[table_name] = blocks.get(table_name, 0) | 1 << bit
    return blocks


DOC_BLOCKS = _documented_blocks()

# STALLWAIT.md condition bits, and the unit whose busy state stands for each (C5..C8 are SrcA/SrcB
# ownership; C10, a pending RISC-V MMIO access, never holds in the emulator). C1 / C2 watch one
# unpacker each (its L1 fetch, unpack/fetch.py), not the unpackers' shared issue slot.
CONDITION_UNITS = {
    0: "thcon",
    1: "unpacker0",
    2: "unpacker1",
    3: "packer",
    4: "matrix",
    9: "xmov",
    11: "sfpu",
    12: "config",
}
UNITS = sorted(set(CONDITION_UNITS.values()))


# ---------------------------------------------------------------------------- reference model


@dataclass
class RefLatch:
    opcode: str
    condition_mask: int
    semaphore_mask: int
    block_mask: int
    cycle: int


class Reference:
    """The documented Sync Unit and wait gates, one Python statement per pseudocode line."""

    def __init__(self, busy_until: dict[str, int] | None = None) -> None:
        self.value = [0] * 8
        self.max = [0] * 8
        self.held_by: dict[int, int | None] = dict.fromkeys(MUTEXES)
        self.trying: list[int | None] = [None] * THREADS
        self.latched: list[RefLatch | None] = [None] * THREADS
        self.busy_until = dict(busy_until or {})

    # SEMINIT / SEMPOST / SEMGET functional models
    def seminit(self, new_max: int, new_value: int, mask: int) -> None:
        for i in range(8):
            if mask >> i & 1:
                self.value[i] = new_value
                self.max[i] = new_max

    def sempost(self, mask: int) -> None:
        for i in range(8):
            if mask >> i & 1 and self.value[i] < 15:
                self.value[i] += 1

    def semget(self, mask: int) -> None:
        for i in range(8):
            if mask >> i & 1 and self.value[i] > 0:
                self.value[i] -= 1

    # SEMWAIT / STALLWAIT functional models
    def semwait(self, thread: int, cycle: int, block: int, mask: int, condition: int) -> None:
        if condition:
            latch = RefLatch("SEMWAIT", condition, mask, 0, cycle)
        else:
            latch = RefLatch("STALLWAIT", 0x0F, 0, 0, cycle)
        latch.block_mask = block if block else 1 << 6
        self.latched[thread] = latch

    def stallwait(self, thread: int, cycle: int, block: int, condition: int) -> None:
        self.latched[thread] = RefLatch(
            "STALLWAIT", condition if condition else 0x0F, 0, block if block else 1 << 6, cycle
        )

    def keep_waiting(self, thread: int, cycle: int) -> bool:
        latch = self.latched[thread]
        assert latch is not None
        if latch.opcode == "SEMWAIT":
            for i in range(8):
                if latch.semaphore_mask >> i & 1:
                    if latch.condition_mask & 1 and self.value[i] == 0:
                        return True
                    if latch.condition_mask & 2 and self.value[i] >= self.max[i]:
                        return True
            return False
        for bit, unit in CONDITION_UNITS.items():
            # Seen one cycle late: the gate opens the cycle after the conditions are met.
            if latch.condition_mask >> bit & 1 and self.busy_until.get(unit, 0) > cycle - 1:
                return True
        return False

    def gate(self, thread: int, name: str, cycle: int, mutex: int | None = None) -> bool:
        """True when the wait gate holds instruction ``name``."""
        latch = self.latched[thread]
        held = False
        if latch is not None:
            if cycle >= latch.cycle + 2 and not self.keep_waiting(thread, cycle):
                self.latched[thread] = None
            else:
                held = bool(DOC_BLOCKS[name] & latch.block_mask)
        if not held and name == "ATGETM":
            self.trying[thread] = mutex
        return held

    # ATGETM / ATRELM functional models
    def atgetm(self, thread: int, index: int) -> str:
        if self.held_by[index] not in (None, thread):
            return "wait"
        self.held_by[index] = thread
        self.trying[thread] = None
        return "retire"

    def atrelm(self, thread: int, index: int) -> None:
        if self.held_by[index] == thread:
            self.held_by[index] = None
            # Released with other threads trying: the next one round-robin gets it.
            for step in (1, 2):
                other = (thread + step) % 3
                if self.trying[other] == index:
                    self.held_by[index] = other
                    break


# ---------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def tile() -> Tile:
    return Tile("blackhole")


def reset(copro, busy_until: dict[str, int] | None = None) -> None:
    copro.sync = sync.SyncState.new(copro.arch)
    copro.busy_until = dict(busy_until or {})
    for u, name in enumerate(("unpacker0", "unpacker1")):  # an unpacker's busy time is its own state
        copro.unpackers.end[u] = copro.busy_until.pop(name, 0)
    copro.packer.stream[STREAM_DRAINED] = copro.busy_until.pop("packer", 0)  # so is the packers' drain


def instruction(name: str, **fields: int):
    spec = ISA.by_name[name]
    values = {f: 0 for f in spec.field_names} | fields
    return ISA.decode(ISA.encode(name, **values))


def execute(copro, thread: int, name: str, cycle: int = 0, **fields: int):
    """The semantics alone, called with a Context as the pipe engine would call them."""
    instr = instruction(name, **fields)
    ctx = Context(copro, thread, cycle, instr, f"trisc{thread}", 0x6000)
    return lookup("blackhole", name)(ctx, **ctx.instruction.fields)


def snapshot(state: sync.SyncState) -> dict[str, np.ndarray]:
    return {name: value.copy() for name, value in vars(state).items()}


def attempt(copro, thread: int, name: str, cycle: int, **fields: int) -> str:
    """One try to issue, as the engine does it: "held" at the gate, "wait" or "retire"."""
    instr = instruction(name, **fields)
    if sync.gate_blocks(copro, thread, instr, cycle) is not None:
        return "held"
    fn = lookup("blackhole", name)
    if fn is None or instr.unit != "sync":
        return "retire"  # another unit's instruction: only the gate matters here
    before = snapshot(copro.sync)
    outcome = fn(Context(copro, thread, cycle, instr, f"trisc{thread}", 0), **instr.fields)
    if isinstance(outcome, Wait):
        after = snapshot(copro.sync)
        assert all(np.array_equal(before[k], after[k]) for k in before), "a Wait changed state"
        return "wait"
    assert isinstance(outcome, Retire)
    return "retire"


def ref_attempt(ref: Reference, thread: int, name: str, cycle: int, **f: int) -> str:
    if ref.gate(thread, name, cycle, f.get("mutex_index")):
        return "held"
    if name == "SEMINIT":
        ref.seminit(f["max_value"], f["init_value"], f["sem_sel"])
    elif name == "SEMPOST":
        ref.sempost(f["sem_sel"])
    elif name == "SEMGET":
        ref.semget(f["sem_sel"])
    elif name == "SEMWAIT":
        ref.semwait(thread, cycle, f["stall_res"], f["sem_sel"], f["wait_sem_cond"])
    elif name == "STALLWAIT":
        ref.stallwait(thread, cycle, f["stall_res"], f["wait_res"])
    elif name == "ATGETM":
        return ref.atgetm(thread, f["mutex_index"])
    elif name == "ATRELM":
        ref.atrelm(thread, f["mutex_index"])
    return "retire"


def assert_matches(copro, ref: Reference) -> None:
    state = copro.sync
    assert state.sem_value.tolist() == ref.value
    assert state.sem_max.tolist() == ref.max
    assert {
        m: (None if state.mutex_owner[m] < 0 else int(state.mutex_owner[m])) for m in MUTEXES
    } == ref.held_by
    assert [None if w < 0 else int(w) for w in state.mutex_wanted] == ref.trying
    for thread, latch in enumerate(ref.latched):
        kind = sync.Latch(int(state.gate_kind[thread]))
        if latch is None:
            assert kind is sync.Latch.NONE
            continue
        assert kind.name == latch.opcode
        assert int(state.gate_block[thread]) == latch.block_mask
        assert int(state.gate_conditions[thread]) == latch.condition_mask
        assert int(state.gate_sems[thread]) == latch.semaphore_mask


# ---------------------------------------------------------------------------- block mask


def test_block_bits_match_the_documented_table():
    table = sync._BLOCK_BITS["blackhole"]
    for name, bits in DOC_BLOCKS.items():
        assert name in table, f"documented instruction {name} missing from the ISA table"
        assert table[name] == bits, f"{name}: 0x{table[name]:x} != documented 0x{bits:x}"
    # What the page does not list gets its unit's bits; this list notices a table change.
    undocumented = {name: table[name] for name in table if name not in DOC_BLOCKS}
    assert undocumented == {
        "MOVDBGB2D": 1 << 6,
        "RAREB": 1 << 6,
        "SETASHRMH": 1 << 6,
        "SETASHRMH0": 1 << 6,
        "SETASHRMH1": 1 << 6,
        "SETASHRMV": 1 << 6,
        "SETIBRWC": 1 << 6,
        "SETPKEDGOF": 1 << 6,
        "TRNSPSRCA": 1 << 6,
        "TBUFCMD": 1 << 0 | 1 << 2,
    }


def test_every_stallwait_condition_bit_is_modelled():
    assert [c.label for c in sync.STALLWAIT_CONDITIONS] == [f"C{i}" for i in range(13)]
    units = {i: c.unit for i, c in enumerate(sync.STALLWAIT_CONDITIONS) if c.unit}
    assert units == CONDITION_UNITS


# ---------------------------------------------------------------------------- semaphores


def test_semget_at_zero_stays_zero(tile):
    copro = tile.coprocessor
    reset(copro)
    assert execute(copro, 0, "SEMGET", sem_sel=0xFF) == Retire(1)
    assert copro.sync.sem_value.tolist() == [0] * 8


def test_sempost_at_15_stays_15(tile):
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 0, "SEMINIT", max_value=15, init_value=15, sem_sel=0b100)
    execute(copro, 1, "SEMPOST", sem_sel=0b100)
    assert int(copro.sync.sem_value[2]) == 15


def test_sempost_ignores_max(tile):
    # SEMINIT.md: Max is only used by SEMWAIT; SEMPOST counts on past it up to 15.
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 0, "SEMINIT", max_value=1, init_value=1, sem_sel=0b1)
    execute(copro, 0, "SEMPOST", sem_sel=0b1)
    assert int(copro.sync.sem_value[0]) == 2 and int(copro.sync.sem_max[0]) == 1


sem_ops = st.one_of(
    st.builds(
        lambda m, v, s: ("SEMINIT", {"max_value": m, "init_value": v, "sem_sel": s}),
        st.integers(0, 15),
        st.integers(0, 15),
        st.integers(0, 255),
    ),
    st.builds(lambda s: ("SEMPOST", {"sem_sel": s}), st.integers(0, 255)),
    st.builds(lambda s: ("SEMGET", {"sem_sel": s}), st.integers(0, 255)),
)


@SETTINGS
@given(ops=st.lists(st.tuples(st.integers(0, 2), sem_ops), max_size=60))
def test_semaphore_instructions_match_the_reference(tile, ops):
    copro = tile.coprocessor
    reset(copro)
    ref = Reference()
    for cycle, (thread, (name, fields)) in enumerate(ops):
        assert attempt(copro, thread, name, cycle, **fields) == ref_attempt(
            ref, thread, name, cycle, **fields
        )
    assert_matches(copro, ref)


def test_operand_bits_beyond_the_documented_width_are_undefined(tile):
    copro = tile.coprocessor
    reset(copro)
    for name, fields in [
        ("SEMPOST", {"sem_sel": 0x100}),
        ("SEMGET", {"sem_sel": 0x200}),
        ("SEMINIT", {"sem_sel": 0x100}),
        ("SEMWAIT", {"sem_sel": 0x100, "wait_sem_cond": 1}),
        ("STALLWAIT", {"wait_res": 1 << 13}),
        ("STREAMWAIT", {"target_value": 1 << 10}),
        ("STREAMWAIT", {"wait_stream_sel": 4}),
    ]:
        with pytest.raises(UndefinedBehavior, match="documented"):
            execute(copro, 0, name, **fields)


# ---------------------------------------------------------------------------- mutexes


def test_atgetm_waits_while_another_thread_holds_the_mutex(tile):
    copro = tile.coprocessor
    reset(copro)
    assert execute(copro, 0, "ATGETM", mutex_index=2) == Retire(1)
    outcome = execute(copro, 1, "ATGETM", mutex_index=2)
    assert outcome == Wait("mutex 2 held by thread 0")
    assert execute(copro, 0, "ATGETM", mutex_index=2) == Retire(1)  # already its own: no wait
    execute(copro, 0, "ATRELM", mutex_index=2)
    assert execute(copro, 1, "ATGETM", mutex_index=2) == Retire(1)
    assert int(copro.sync.mutex_owner[2]) == 1


def test_atrelm_by_another_thread_changes_nothing(tile):
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 2, "ATGETM", mutex_index=4)
    assert execute(copro, 0, "ATRELM", mutex_index=4) == Retire(1)
    assert int(copro.sync.mutex_owner[4]) == 2


@pytest.mark.parametrize("releaser, winner", [(0, 1), (1, 2), (2, 0)])
def test_release_with_both_others_trying_goes_round_robin(tile, releaser, winner):
    copro = tile.coprocessor
    reset(copro)
    assert attempt(copro, releaser, "ATGETM", 0, mutex_index=3) == "retire"
    others = [t for t in range(THREADS) if t != releaser]
    for thread in others:
        assert attempt(copro, thread, "ATGETM", 1, mutex_index=3) == "wait"
    assert attempt(copro, releaser, "ATRELM", 2, mutex_index=3) == "retire"
    # The loser tries first in the same cycle and still waits; the winner then gets it.
    loser = next(t for t in others if t != winner)
    assert attempt(copro, loser, "ATGETM", 3, mutex_index=3) == "wait"
    assert attempt(copro, winner, "ATGETM", 3, mutex_index=3) == "retire"
    assert int(copro.sync.mutex_owner[3]) == winner


@pytest.mark.parametrize("index", [1, 5, 7, 0x10000])
def test_a_mutex_that_does_not_exist_is_an_invalid_program(tile, index):
    copro = tile.coprocessor
    reset(copro)
    for name in ("ATGETM", "ATRELM"):
        with pytest.raises(InvalidProgram, match="does not exist") as info:
            execute(copro, 1, name, mutex_index=index)
        assert info.value.core == "trisc1" and info.value.pc == 0x6000


# ---------------------------------------------------------------------------- three-thread programs

_GATE_ONLY = ("MVMUL", "PACR", "UNPACR", "SETC16", "SFPNOP", "XMOV", "SETDMAREG", "NOP")
_SMALL_MASK = st.integers(0, 3)  # two semaphores: lots of contention
thread_ops = st.one_of(
    st.builds(
        lambda m, v, s: ("SEMINIT", {"max_value": m, "init_value": v, "sem_sel": s}),
        st.integers(0, 3),
        st.integers(0, 3),
        _SMALL_MASK,
    ),
    st.builds(lambda s: ("SEMPOST", {"sem_sel": s}), _SMALL_MASK),
    st.builds(lambda s: ("SEMGET", {"sem_sel": s}), _SMALL_MASK),
    st.builds(
        lambda b, s, c: ("SEMWAIT", {"stall_res": b, "sem_sel": s, "wait_sem_cond": c}),
        st.sampled_from([0, 1 << 1, 1 << 6, 0x1FF, 1 << 0 | 1 << 1]),
        _SMALL_MASK,
        st.integers(0, 3),
    ),
    st.builds(
        lambda b, c: ("STALLWAIT", {"stall_res": b, "wait_res": c}),
        st.integers(0, 0x1FF),
        st.sampled_from([0, 1, 1 << 4, 1 << 9, 1 << 10, 1 << 11, 1 << 12, 0x1A1F]),
    ),
    st.builds(lambda m: ("ATGETM", {"mutex_index": m}), st.sampled_from([0, 2])),
    st.builds(lambda m: ("ATRELM", {"mutex_index": m}), st.sampled_from([0, 2])),
    st.builds(lambda n: (n, {}), st.sampled_from(_GATE_ONLY)),
)


@SETTINGS
@given(
    programs=st.lists(st.lists(thread_ops, min_size=4, max_size=12), min_size=THREADS, max_size=THREADS),
    schedule=st.lists(st.tuples(st.integers(0, THREADS - 1), st.integers(0, 3)), min_size=20, max_size=150),
    busy=st.dictionaries(st.sampled_from(UNITS), st.integers(0, 40), max_size=4),
)
def test_random_three_thread_programs_match_the_reference(tile, programs, schedule, busy):
    """Each step, one thread tries its next instruction (retrying what was held or waited): every
    outcome and the final state agree with the reference, so no wake-up is lost or spurious."""
    copro = tile.coprocessor
    reset(copro, busy)
    ref = Reference(busy)
    pcs = [0] * THREADS
    cycle = 0
    for choice, gap in schedule:
        unfinished = [t for t in range(THREADS) if pcs[t] < len(programs[t])]
        if not unfinished:
            break
        thread = unfinished[choice % len(unfinished)]
        cycle += gap
        name, fields = programs[thread][pcs[thread]]
        got = attempt(copro, thread, name, cycle, **fields)
        expected = ref_attempt(ref, thread, name, cycle, **fields)
        assert got == expected, f"thread {thread} {name} {fields} at cycle {cycle}"
        if got == "retire":
            pcs[thread] += 1
    assert_matches(copro, ref)


# ---------------------------------------------------------------------------- the wait gate


@SETTINGS
@given(
    block=st.integers(0, 0x1FF),
    conditions=st.sets(st.sampled_from([*sorted(CONDITION_UNITS), 10])),
    busy=st.dictionaries(st.sampled_from(UNITS), st.integers(0, 30)),
    name=st.sampled_from(sorted(DOC_BLOCKS)),
    offset=st.integers(1, 35),
)
def test_stallwait_gate_on_random_masks(tile, block, conditions, busy, name, offset):
    copro = tile.coprocessor
    reset(copro, busy)
    ref = Reference(busy)
    wait_res = sum(1 << c for c in conditions)
    latch_cycle = 5
    assert attempt(copro, 1, "STALLWAIT", latch_cycle, stall_res=block, wait_res=wait_res) == "retire"
    ref.stallwait(1, latch_cycle, block, wait_res)
    cycle = latch_cycle + offset
    held = sync.gate_blocks(copro, 1, instruction(name), cycle)
    assert (held is not None) == ref.gate(1, name, cycle, mutex=0)  # instruction() zeroes fields
    assert_matches(copro, ref)
    # Other threads' gates are their own.
    assert sync.gate_blocks(copro, 0, instruction(name), cycle) is None
    if held is not None:
        assert held.startswith("STALLWAIT")
        release = sync.gate_release_cycle(copro, 1, cycle)
        assert release is not None  # unit conditions clear by themselves
        assert sync.gate_blocks(copro, 1, instruction(name), release) is None
        if release - 1 > cycle:
            reset(copro, busy)
            execute(copro, 1, "STALLWAIT", latch_cycle, stall_res=block, wait_res=wait_res)
            assert sync.gate_blocks(copro, 1, instruction(name), release - 1) is not None


@SETTINGS
@given(
    values=st.lists(st.integers(0, 15), min_size=8, max_size=8),
    maxes=st.lists(st.integers(0, 15), min_size=8, max_size=8),
    block=st.integers(0, 0x1FF),
    sems=st.integers(0, 255),
    condition=st.integers(0, 3),
    name=st.sampled_from(sorted(DOC_BLOCKS)),
    offset=st.integers(1, 4),
)
def test_semwait_gate_on_random_masks(tile, values, maxes, block, sems, condition, name, offset):
    copro = tile.coprocessor
    reset(copro)
    ref = Reference()
    copro.sync.sem_value[:] = values
    copro.sync.sem_max[:] = maxes
    ref.value, ref.max = list(values), list(maxes)
    execute(copro, 2, "SEMWAIT", 10, stall_res=block, sem_sel=sems, wait_sem_cond=condition)
    ref.semwait(2, 10, block, sems, condition)
    reason = sync.gate_blocks(copro, 2, instruction(name), 10 + offset)
    assert (reason is not None) == ref.gate(2, name, 10 + offset, mutex=0)
    assert_matches(copro, ref)
    if reason is not None and offset >= 2 and condition:
        assert reason.startswith("SEMWAIT sem ")
        assert sync.gate_release_cycle(copro, 2, 10 + offset) is None  # only a semaphore change helps


def test_semwait_reason_names_the_semaphore_and_the_instruction_after_waits_a_cycle(tile):
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 0, "SEMINIT", max_value=3, init_value=0, sem_sel=0b100)
    execute(copro, 0, "SEMWAIT", 7, stall_res=0, sem_sel=0b100, wait_sem_cond=1)
    mvmul = instruction("MVMUL")
    assert sync.gate_blocks(copro, 0, mvmul, 9) == "SEMWAIT sem 2 == 0"
    assert sync.gate_blocks(copro, 0, instruction("SEMPOST", sem_sel=4), 9) is None  # B1 not set
    execute(copro, 1, "SEMPOST", sem_sel=0b100)
    assert sync.gate_blocks(copro, 0, mvmul, 10) is None
    assert copro.sync.gate_kind[0] == sync.Latch.NONE
    # Right after the wait instruction the gate holds even when the condition is already met.
    execute(copro, 0, "SEMWAIT", 20, stall_res=0, sem_sel=0b100, wait_sem_cond=1)
    assert "opens next cycle" in sync.gate_blocks(copro, 0, mvmul, 21)
    assert sync.gate_release_cycle(copro, 0, 21) == 22
    assert sync.gate_blocks(copro, 0, mvmul, 22) is None


def test_semwait_on_max(tile):
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 0, "SEMINIT", max_value=2, init_value=2, sem_sel=0b1000)
    execute(copro, 0, "SEMWAIT", 0, stall_res=1 << 1, sem_sel=0b1000, wait_sem_cond=2)
    sempost = instruction("SEMPOST", sem_sel=0b1000)
    assert sync.gate_blocks(copro, 0, sempost, 5) == "SEMWAIT sem 3 >= max (2 >= 2)"
    execute(copro, 1, "SEMGET", sem_sel=0b1000)
    assert sync.gate_blocks(copro, 0, sempost, 6) is None


def test_semwait_without_a_condition_is_a_stallwait_on_c0_to_c3(tile):
    copro = tile.coprocessor
    reset(copro, {"packer": 50})
    execute(copro, 1, "SEMWAIT", 0, stall_res=0, sem_sel=0xFF, wait_sem_cond=0)
    state = copro.sync
    assert sync.Latch(int(state.gate_kind[1])) is sync.Latch.STALLWAIT
    assert int(state.gate_conditions[1]) == 0x0F and int(state.gate_sems[1]) == 0
    assert int(state.gate_block[1]) == 1 << 6
    assert sync.gate_blocks(copro, 1, instruction("MVMUL"), 10) == "STALLWAIT: packer busy (C3)"
    assert sync.gate_release_cycle(copro, 1, 10) == 51


def test_a_latch_met_while_nothing_was_blocked_is_forgotten(tile):
    # The gate re-evaluates every cycle: conditions met once, then unmet again, do not hold later.
    copro = tile.coprocessor
    reset(copro)
    execute(copro, 0, "STALLWAIT", 0, stall_res=1 << 6, wait_res=1 << 4)  # matrix busy, block B6
    assert sync.gate_blocks(copro, 0, instruction("PACR"), 3) is None  # not blocked; latch forgotten
    copro.busy_until["matrix"] = 100
    assert sync.gate_blocks(copro, 0, instruction("MVMUL"), 4) is None


def test_src_conditions_need_the_register_files(tile, monkeypatch):
    copro = tile.coprocessor
    reset(copro)
    if not hasattr(copro, "src_valid"):
        with pytest.raises(Unimplemented, match="C5, C8"):
            execute(copro, 0, "STALLWAIT", stall_res=0x1FF, wait_res=1 << 5 | 1 << 8)
    valid = {"srca_unpacker": True, "srcb_unpacker": False, "srca_matrix": False, "srcb_matrix": True}
    monkeypatch.setattr(copro, "src_valid", lambda bank: valid[bank], raising=False)
    mvmul = instruction("MVMUL")
    for bit, waits in [(5, True), (6, False), (7, True), (8, False)]:
        reset(copro)
        execute(copro, 0, "STALLWAIT", 0, stall_res=0, wait_res=1 << bit)
        reason = sync.gate_blocks(copro, 0, mvmul, 3)
        assert (reason is not None) == waits, bit
        if waits:
            assert f"(C{bit})" in reason and sync.gate_release_cycle(copro, 0, 3) is None


class StubStreams:
    def __init__(self, registers: dict[tuple[int, int], int]) -> None:
        self.registers = registers

    def read(self, stream: int, index: int) -> int:
        return self.registers.get((stream, index), 0)


class StubConfig:
    def __init__(self, fields: dict[str, int]) -> None:
        self.fields = fields

    def thread_field(self, name: str, thread: int) -> int:
        return self.fields.get(name, 0)


@pytest.mark.parametrize("target_sel, register", [(0, 29), (1, 259)])
def test_streamwait_waits_for_the_stream_register(monkeypatch, target_sel, register):
    tile = Tile("blackhole")
    copro = tile.coprocessor
    high = "STREAMWAIT_PHASE_HI_Val" if target_sel == 0 else "STREAMWAIT_NUM_MSGS_HI_Val"
    monkeypatch.setattr(copro, "config", StubConfig({high: 1, "STREAM_ID_SYNC_SEC2_BankSel": 17}))
    streams = StubStreams({(17, register): 1024 + 4})
    monkeypatch.setattr(tile, "streams", streams)
    execute(
        copro, 1, "STREAMWAIT", 0, stall_res=1 << 3, target_value=5, target_sel=target_sel, wait_stream_sel=2
    )
    assert int(copro.sync.gate_target[1]) == 1024 + 5
    unpacr = instruction("UNPACR")
    reason = sync.gate_blocks(copro, 1, unpacr, 4)
    assert reason is not None and reason.startswith("STREAMWAIT stream 17") and "1028 < 1029" in reason
    assert sync.gate_blocks(copro, 1, instruction("MVMUL"), 4) is None  # not in the block mask
    streams.registers[(17, register)] = 1029
    assert sync.gate_blocks(copro, 1, unpacr, 5) is None


# ---------------------------------------------------------------------------- RISC-V view


def run_programs(programs: dict[str, str], max_cycles: int = 2_000_000, **setup) -> Tile:
    tile = Tile("blackhole")
    for core, source in programs.items():
        tile.write(RESET_PC[core], assemble(source, base=RESET_PC[core]))
    for name, value in setup.items():
        setattr(tile.coprocessor, name, value)
    tile.run(max_cycles=max_cycles, release=list(programs))
    return tile


def words(tile: Tile, count: int) -> list[int]:
    data = tile.read(RESULTS, 4 * count)
    return [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(count)]


def test_trisc_posts_gets_and_reads_semaphores_through_mmio():
    program = f"""
        li t0, {SEM_BASE}
        li t1, 1
        li s1, {RESULTS}
        sw x0, 8(t0)        # post sem 2 twice, get once
        sw x0, 8(t0)
        sw t1, 8(t0)
        lw a0, 8(t0)
        sw a0, 0(s1)
        sw t1, 0(t0)        # get sem 0 at zero: stays zero
        lw a0, 0(t0)
        sw a0, 4(s1)
        li t2, 20           # post sem 7 twenty times: stops at 15
    1:  sw x0, 28(t0)
        addi t2, t2, -1
        bnez t2, 1b
        lw a0, 28(t0)
        sw a0, 8(s1)
        li t3, 6            # any even value posts, any odd value gets
        sw t3, 12(t0)
        lw a0, 12(t0)
        sw a0, 12(s1)
        ecall
    """
    tile = run_programs({"trisc0": program})
    assert words(tile, 4) == [1, 0, 15, 1]
    assert tile.coprocessor.sync.sem_value.tolist() == [0, 0, 1, 1, 0, 0, 0, 15]


def test_an_mmio_semaphore_write_is_a_coprocessor_state_change(tile):
    copro = tile.coprocessor
    region = next(r for r in tile.core("trisc1").regions if r.contains(SEM_BASE))
    from tensixsim.mmio.memory import Access

    version = copro.version
    region.write(Access(tile.core("trisc1"), SEM_BASE + 4, 4, 10), 0)
    assert copro.version == version + 1 and copro.version_cycle >= 10


def test_only_triscs_see_the_semaphores():
    # NCRISC has nothing there; BRISC reaches PCBuf 0 there (tests/test_pcbufs.py), not a semaphore.
    tile = Tile("blackhole")
    tile.write(
        RESET_PC["ncrisc"], assemble(f"li t0, {SEM_BASE}\n lw a0, 0(t0)\n ecall", base=RESET_PC["ncrisc"])
    )
    with pytest.raises(MemoryFault) as info:
        tile.run(release=["ncrisc"])
    assert info.value.address == SEM_BASE
    tile = Tile("blackhole")
    tile.write(RESET_PC["brisc"], assemble(f"li t0, {SEM_BASE}\n li t1, 3\n sw t1, 0(t0)\n ecall"))
    tile.run(release=["brisc"])
    assert list(tile.pcbufs.values[0][:1]) == [3] and int(tile.coprocessor.sync.sem_value.sum()) == 0


def test_tensix_semaphores_and_semwait_meet_the_riscv_view():
    """TRISC0 pushes SEMINIT, a SEMWAIT on sem 0 and a SEMPOST of sem 1; TRISC1 polls sem 1 through
    MMIO; TRISC2 posts sem 0 through MMIO after a while, which lets the SEMPOST through."""
    seminit = ISA.encode("SEMINIT", max_value=15, init_value=0, sem_sel=0b11)
    semwait = ISA.encode("SEMWAIT", stall_res=1 << 1, sem_sel=0b1, wait_sem_cond=1)
    sempost = ISA.encode("SEMPOST", sem_sel=0b10)
    trisc0 = "\n".join(f".word 0x{to_stream_word(w):08x}" for w in (seminit, semwait, sempost)) + "\n ecall"
    trisc1 = f"""
        li t0, {SEM_BASE}
    1:  lw a0, 4(t0)
        beqz a0, 1b
        csrr a1, mcycle
        li s1, {RESULTS}
        sw a0, 0(s1)
        sw a1, 4(s1)
        ecall
    """
    trisc2 = f"""
        li t2, 300
    1:  addi t2, t2, -1
        bnez t2, 1b
        csrr a1, mcycle
        li t0, {SEM_BASE}
        sw x0, 0(t0)
        li s1, {RESULTS}
        sw a1, 8(s1)
        ecall
    """
    tile = run_programs({"trisc0": trisc0, "trisc1": trisc1, "trisc2": trisc2})
    seen, seen_at, posted_at = words(tile, 3)
    assert seen == 1
    assert seen_at > posted_at
    assert tile.coprocessor.sync.sem_value.tolist()[:2] == [1, 1]


DONE_CHECK = """
    li t0, 0xFFE80000
    sw x0, {offset}(t0)
    lw t1, {offset}(t0)
    and x0, x0, t1
    csrr a0, mcycle
    li s1, {results}
    sw a0, 0(s1)
    ecall
"""


@pytest.mark.parametrize("offset, service", [(4, "thread_idle"), (8, "mop_expander_idle")])
def test_done_checks_return_at_once_when_the_thread_is_idle(offset, service):
    calls = []

    def idle(thread: int, cycle: int) -> bool:
        calls.append(thread)
        return True

    tile = run_programs({"trisc1": DONE_CHECK.format(offset=offset, results=RESULTS)}, **{service: idle})
    assert calls == [1]
    assert tile.result().cores["trisc1"].state == "finished"


@pytest.mark.parametrize(
    "offset, service, register",
    [(4, "thread_idle", "CoprocessorDoneCheck"), (8, "mop_expander_idle", "MOPExpanderDoneCheck")],
)
def test_done_checks_wait_for_the_thread_to_become_idle(offset, service, register):
    # Nothing here wakes the core (the coprocessor would, when the thread drains): a deadlock that
    # names the wait.
    with pytest.raises(Deadlock, match=f"trisc2 pc=0x0000e008 waits: {register}: Tensix thread 2 busy"):
        run_programs(
            {"trisc2": DONE_CHECK.format(offset=offset, results=RESULTS)}, **{service: lambda t, c: False}
        )


def test_a_met_semwait_lets_the_next_instruction_through_a_cycle_later():
    seminit = ISA.encode("SEMINIT", max_value=15, init_value=1, sem_sel=0b1)
    semwait = ISA.encode("SEMWAIT", stall_res=1 << 1, sem_sel=0b1, wait_sem_cond=1)
    sempost = ISA.encode("SEMPOST", sem_sel=0b10)
    trisc0 = "\n".join(f".word 0x{to_stream_word(w):08x}" for w in (seminit, semwait, sempost)) + "\n ecall"
    tile = run_programs({"trisc0": trisc0}, max_cycles=100_000)
    assert tile.coprocessor.sync.sem_value.tolist()[:2] == [1, 1]
