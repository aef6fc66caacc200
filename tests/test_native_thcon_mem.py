"""The scalar unit's memory instructions natively (tensixsim/tensix/native/thcon_mem.c) against the
Python semantics (thcon.py): LOADIND, STOREIND, ATINCGET, ATINCGETPTR, ATSWAP, ATCAS, REG2FLOP and
FLUSHDMA.

As in test_native_ops.py, two tiles start every example from identical state; one runs the word
natively, the other through the Python semantics. A deferred word must leave its tile exactly as it
was; an executed one must retire in the Python semantics' cycles and leave every state array of both
tiles (L1 included) equal. On top of test_native_ops.reset's random GPRs, Config and ADCs, the state
drawn here points GPRs into a window of random L1 bytes (and at L1's end), plants FIFO pointers and
compare values at the addressed words so that the atomics' waits and retirements both occur, and
sets the unpackers' and the packers' busy clocks FLUSHDMA reads.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_native_ops import TILES, Comparison, field_values, mismatches, native_settings, reset, run_on_both

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.frontend.pipes import UNIT_INDEX
from tensixsim.tensix.native.lockstep import first_difference

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER
L1_SIZE = TILES[0].arch.l1_size
WINDOW_BASE = 0x4000  # random bytes from here: GPR[AddrReg] * 16 + a 16-bit offset reaches 64 KiB on
WINDOW = 0x14000
END = 0x100  # and L1's last bytes, where wide accesses cross the end

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

MEMORY = ("LOADIND", "STOREIND", "ATINCGET", "ATINCGETPTR", "ATSWAP", "ATCAS", "REG2FLOP", "FLUSHDMA")

# The share of random examples that must run natively, per instruction (the rest defer: waits,
# undefined operands, addresses beyond L1, MMIO forms).
MIN_NATIVE_SHARE = 0.3


def _gpr_value(rng: np.random.Generator) -> int:
    """A GPR: mostly an L1 address in 16-byte units inside the window, sometimes at L1's end, a small
    number, or anything."""
    kind = rng.choice(4, p=[0.6, 0.15, 0.15, 0.1])
    if kind == 0:
        return int(rng.integers(WINDOW_BASE // 16, (WINDOW_BASE + 0x1000) // 16))
    if kind == 1:
        return int(L1_SIZE // 16 - rng.integers(1, 3))  # the last or next-to-last 16 bytes, or beyond
    if kind == 2:
        return int(rng.integers(0, 0x100))
    return int(rng.integers(0, 2**32))


def _word_address(name: str, fields: dict[str, int], gprs: np.ndarray) -> int | None:
    """The L1 word an atomic compares or pops/pushes (None: not an atomic that waits)."""
    if name not in ("ATCAS", "ATINCGETPTR"):
        return None
    base = (int(gprs[fields["addr_reg_index"]]) * 16) & 0xFFFF_FFFF
    return base if name == "ATINCGETPTR" else base + 4 * fields["sel32b"]


def draw_state(name: str, fields: dict[str, int], thread: int, cycle: int, seed: int) -> None:
    """Both tiles: test_native_ops.reset(seed), then GPRs, L1 bytes, FIFO words and busy clocks."""
    reset(seed)
    rng = np.random.default_rng(seed ^ 0x5EED)
    gprs = np.array([_gpr_value(rng) for _ in range(64)], np.uint32)
    if rng.random() < 0.7:  # offsets: small half-registers, so addresses stay in the window
        gprs[rng.random(64) < 0.5] &= 0x0FFF_0FFF
    window = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    end = rng.integers(0, 256, END, dtype=np.uint8)
    address = _word_address(name, fields, gprs)
    plant: list[tuple[int, int]] = []  # (address, 32-bit value) written into L1
    if address is not None and address + 8 <= L1_SIZE and rng.random() < 0.9:
        if name == "ATCAS":  # equal (swaps), or close to it
            plant.append((address, fields["cmp_val"] if rng.random() < 0.8 else int(rng.integers(0, 32))))
        else:
            rd = int(rng.integers(0, 2**32)) if rng.random() < 0.5 else int(rng.integers(0, 64))
            wrap = fields["wrap_val"]
            capacity = 1 << (wrap - 1) if wrap else 0x8000
            used = rng.choice([0, capacity, 2 * capacity, int(rng.integers(1, 64))])
            plant += [(address, rd), (address + 4, (rd + int(used)) & 0xFFFF_FFFF)]
    clocks = cycle + rng.integers(-5, 40, 3)
    for tile in TILES:
        copro = tile.coprocessor
        copro.thcon.gprs[thread] = gprs
        tile.l1[WINDOW_BASE : WINDOW_BASE + WINDOW] = window
        tile.l1[L1_SIZE - END :] = end
        for at, value in plant:
            tile.l1[at : at + 4] = np.frombuffer(value.to_bytes(4, "little"), np.uint8)
        copro.unpackers.end[:] = np.maximum(clocks[:2], 0)
        copro.unit_clock[UNIT_INDEX["pack"]] = max(int(clocks[2]), 0)


def compare_memory(name: str, fields: dict[str, int], thread: int, cycle: int, seed: int) -> Comparison:
    draw_state(name, fields, thread, cycle, seed)
    return run_on_both(ISA.encode(name, **fields), thread, cycle)


def _contiguous_granules(lo: int, count: int, single: int) -> int:
    return single << 8 | (((1 << count) - 1) << lo) & 0xFF


# Slots whose random values would mostly make the word defer: drawn towards the native modes as
# well (the L1 form of STOREIND, L1 atomics, ATSWAP's 6-bit register and contiguous granules).
_MOSTLY_ZERO = st.sampled_from([0, 0, 0, 1])
_TOWARDS: dict[tuple[str, str], st.SearchStrategy[int]] = {
    ("STOREIND", "mem_hier_sel"): st.sampled_from([1, 1, 1, 0]),
    ("ATINCGET", "mem_hier_sel"): _MOSTLY_ZERO,
    ("ATINCGET", "wrap_val"): st.one_of(st.integers(0, 31), st.integers(0, 511)),
    ("ATINCGETPTR", "mem_hier_sel"): _MOSTLY_ZERO,
    ("ATSWAP", "mem_hier_sel"): _MOSTLY_ZERO,
    ("ATSWAP", "data_reg_index"): st.one_of(st.integers(0, 63), st.integers(0, 255)),
    ("ATSWAP", "swap_mask"): st.one_of(
        st.builds(_contiguous_granules, st.integers(0, 7), st.integers(0, 8), st.integers(0, 1)),
        st.integers(0, 0x1FF),
    ),
    ("ATCAS", "mem_hier_sel"): _MOSTLY_ZERO,
    ("ATCAS", "data_reg_index"): _MOSTLY_ZERO,
    ("ATCAS", "swap_val"): st.one_of(st.integers(0, 15), st.integers(0, 31)),
    ("REG2FLOP", "target_sel"): st.sampled_from([0, 2, 3, 1]),
    ("FLUSHDMA", "flush_spec"): st.one_of(st.integers(0, 15), st.integers(0, 0xFFFFFF)),
}


def words_of(name: str) -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries(
        {f.name: _TOWARDS.get((name, f.name), field_values(f)) for f in ISA.by_name[name].fields}
    )


SETTINGS = native_settings(120)


@pytest.mark.parametrize("name", MEMORY)
def test_native_matches_python_or_defers_unchanged(name):
    counts: Counter[str] = Counter()

    @SETTINGS
    @given(
        fields=words_of(name),
        thread=st.integers(0, 2),
        cycle=st.integers(50, 2**40),
        seed=st.integers(0, 2**32 - 1),
    )
    def check(fields, thread, cycle, seed):
        # Hypothesis draws small seeds often: mix the whole example in, so the states differ.
        mixed = np.random.SeedSequence([seed, thread, cycle % 2**32, *fields.values()])
        result = compare_memory(name, fields, thread, cycle, int(mixed.generate_state(1)[0]))
        counts["deferred" if result.native_cycles == NATIVE_DEFER else "native"] += 1
        assert mismatches(result) == []

    check()
    assert counts["native"] >= MIN_NATIVE_SHARE * sum(counts.values()), counts


# ------------------------------------------------------------------------------- fixed words


def fixed(
    name: str,
    fields: dict[str, int],
    gprs: dict[int, int],
    l1: dict[int, int] | None = None,
    thread: int = 1,
    cycle: int = 1000,
    seed: int = 7,
) -> Comparison:
    """``name`` with GPRs and L1 words set as given (the rest drawn from ``seed``)."""
    reset(seed)
    for tile in TILES:
        for index, value in gprs.items():
            tile.coprocessor.thcon.gprs[thread, index] = value
        for at, value in (l1 or {}).items():
            tile.l1[at : at + 4] = np.frombuffer(value.to_bytes(4, "little"), np.uint8)
    return run_on_both(ISA.encode(name, **fields), thread, cycle)


A = 0x1000  # GPR value of the fixed cases' address register: L1 0x10000
EXECUTES = {
    "LOADIND 16 bytes": (
        "LOADIND",
        dict(size_sel=0, offset_index=5, auto_inc_spec=3, data_reg_index=9, addr_reg_index=1),
        {1: A, 2: 0x0030_0000},
        {0x10030: 0xDEADBEEF},
    ),
    "LOADIND 1 byte, offset in the data register": (
        "LOADIND",
        dict(size_sel=3, offset_index=4, auto_inc_spec=1, data_reg_index=2, addr_reg_index=1),
        {1: A, 2: 0x1234_0007},
        {0x10004: 0xA1B2C3D4},
    ),
    "STOREIND 16 bytes": (
        "STOREIND",
        dict(
            mem_hier_sel=1,
            size_sel=0,
            reg_size_sel=0,
            offset_index=6,
            auto_inc_spec=2,
            data_reg_index=8,
            addr_reg_index=1,
        ),
        {1: A, 3: 0x10, 8: 1, 9: 2, 10: 3, 11: 4},
        None,
    ),
    "STOREIND 2 bytes, misaligned offset": (
        "STOREIND",
        dict(
            mem_hier_sel=1,
            size_sel=1,
            reg_size_sel=0,
            offset_index=6,
            auto_inc_spec=2,
            data_reg_index=3,
            addr_reg_index=1,
        ),
        {1: A, 3: 0xBEEF_0003},
        None,
    ),
    "ATINCGET": (
        "ATINCGET",
        dict(mem_hier_sel=0, wrap_val=7, sel32b=2, data_reg_index=4, addr_reg_index=1),
        {1: A, 4: 0x1FF},
        {0x10008: 0x1234_56F0},
    ),
    "ATINCGET all 32 bits": (
        "ATINCGET",
        dict(mem_hier_sel=0, wrap_val=31, sel32b=0, data_reg_index=4, addr_reg_index=1),
        {1: A, 4: 0xFFFF_FFFF},
        {0x10000: 5},
    ),
    "ATINCGETPTR pop": (
        "ATINCGETPTR",
        dict(mem_hier_sel=0, no_incr=0, incr_val=0, wrap_val=4, sel32b=0, data_reg_index=5, addr_reg_index=1),
        {1: A},
        {0x10000: 7, 0x10004: 9},
    ),
    "ATINCGETPTR push": (
        "ATINCGETPTR",
        dict(mem_hier_sel=0, no_incr=0, incr_val=1, wrap_val=4, sel32b=1, data_reg_index=5, addr_reg_index=1),
        {1: A},
        {0x10000: 7, 0x10004: 9},
    ),
    "ATSWAP granules 2..5": (
        "ATSWAP",
        dict(mem_hier_sel=0, swap_mask=0x3C, data_reg_index=12, addr_reg_index=1),
        {1: A, 12: 1, 13: 2, 14: 3, 15: 4},
        None,
    ),
    "ATSWAP single register": (
        "ATSWAP",
        dict(mem_hier_sel=0, swap_mask=0x1FF, data_reg_index=14, addr_reg_index=1),
        {1: A, 14: 0xCAFEF00D},
        None,
    ),
    "ATCAS equal": (
        "ATCAS",
        dict(mem_hier_sel=0, swap_val=9, cmp_val=3, sel32b=1, data_reg_index=0, addr_reg_index=1),
        {1: A},
        {0x10004: 3},
    ),
    "REG2FLOP configuration word": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=0, byte_offset=0, context_id_2=0, flop_index=115, reg_index=3),
        {3: 0x1234_5678},
        None,
    ),
    "REG2FLOP configuration group": (
        "REG2FLOP",
        dict(size_sel=0, target_sel=0, byte_offset=0, context_id_2=0, flop_index=6, reg_index=9),
        {},
        None,
    ),
    "REG2FLOP ADC byte": (
        "REG2FLOP",
        dict(size_sel=3, target_sel=2, byte_offset=1, context_id_2=0, flop_index=0b101101, reg_index=3),
        {3: 0x1234_5678},
        None,
    ),
    "REG2FLOP ADC of another pipe": (
        "REG2FLOP",
        dict(size_sel=2, target_sel=3, byte_offset=2, context_id_2=2, flop_index=0b010000, reg_index=3),
        {3: 0xFFFF_0001},
        None,
    ),
    "REG2FLOP ADCSel 3 writes nothing": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=2, byte_offset=0, context_id_2=0, flop_index=0b011000, reg_index=3),
        {},
        None,
    ),
    "FLUSHDMA all": ("FLUSHDMA", dict(flush_spec=0), {}, None),
    "FLUSHDMA packers": ("FLUSHDMA", dict(flush_spec=8), {}, None),
}

DEFERS = {
    "LOADIND offset beyond 7 bits": (
        "LOADIND",
        dict(size_sel=1, offset_index=128, auto_inc_spec=0, data_reg_index=0, addr_reg_index=1),
        {1: A},
        None,
    ),
    "LOADIND beyond L1": (
        "LOADIND",
        dict(size_sel=1, offset_index=4, auto_inc_spec=0, data_reg_index=0, addr_reg_index=1),
        {1: L1_SIZE // 16, 2: 0},
        None,
    ),
    "STOREIND MMIO": (
        "STOREIND",
        dict(
            mem_hier_sel=0,
            size_sel=1,
            reg_size_sel=0,
            offset_index=0,
            auto_inc_spec=0,
            data_reg_index=0,
            addr_reg_index=1,
        ),
        {1: 0x100},
        None,
    ),
    "STOREIND to SrcA": (
        "STOREIND",
        dict(
            mem_hier_sel=0,
            size_sel=0,
            reg_size_sel=0,
            offset_index=0,
            auto_inc_spec=0,
            data_reg_index=0,
            addr_reg_index=1,
        ),
        {1: A},
        None,
    ),
    "STOREIND 16 bytes beyond L1": (
        "STOREIND",
        dict(
            mem_hier_sel=1,
            size_sel=0,
            reg_size_sel=0,
            offset_index=4,
            auto_inc_spec=0,
            data_reg_index=0,
            addr_reg_index=1,
        ),
        {1: L1_SIZE // 16 - 1, 2: 0x10},
        None,
    ),
    "ATINCGET mem_hier_sel 1": (
        "ATINCGET",
        dict(mem_hier_sel=1, wrap_val=0, sel32b=0, data_reg_index=0, addr_reg_index=1),
        {1: A},
        None,
    ),
    "ATINCGET IntWidth beyond 5 bits": (
        "ATINCGET",
        dict(mem_hier_sel=0, wrap_val=32, sel32b=0, data_reg_index=0, addr_reg_index=1),
        {1: A},
        None,
    ),
    "ATINCGETPTR pop from an empty FIFO (waits)": (
        "ATINCGETPTR",
        dict(mem_hier_sel=0, no_incr=0, incr_val=0, wrap_val=4, sel32b=0, data_reg_index=5, addr_reg_index=1),
        {1: A},
        {0x10000: 9, 0x10004: 9},
    ),
    "ATINCGETPTR push to a full FIFO (waits)": (
        "ATINCGETPTR",
        dict(mem_hier_sel=0, no_incr=0, incr_val=0, wrap_val=4, sel32b=1, data_reg_index=5, addr_reg_index=1),
        {1: A},
        {0x10000: 1, 0x10004: 9},
    ),
    "ATSWAP granules 0 and 7": (
        "ATSWAP",
        dict(mem_hier_sel=0, swap_mask=0x81, data_reg_index=0, addr_reg_index=1),
        {1: A},
        None,
    ),
    "ATSWAP data register beyond 6 bits": (
        "ATSWAP",
        dict(mem_hier_sel=0, swap_mask=1, data_reg_index=64, addr_reg_index=1),
        {1: A},
        None,
    ),
    "ATCAS unequal (waits)": (
        "ATCAS",
        dict(mem_hier_sel=0, swap_val=9, cmp_val=3, sel32b=1, data_reg_index=0, addr_reg_index=1),
        {1: A},
        {0x10004: 4},
    ),
    "ATCAS data register": (
        "ATCAS",
        dict(mem_hier_sel=0, swap_val=9, cmp_val=3, sel32b=1, data_reg_index=1, addr_reg_index=1),
        {1: A},
        {0x10004: 3},
    ),
    "ATCAS SetVal beyond 4 bits": (
        "ATCAS",
        dict(mem_hier_sel=0, swap_val=16, cmp_val=3, sel32b=1, data_reg_index=0, addr_reg_index=1),
        {1: A},
        {0x10004: 3},
    ),
    "REG2FLOP beyond the THCON configuration": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=0, byte_offset=0, context_id_2=0, flop_index=116, reg_index=0),
        {},
        None,
    ),
    "REG2FLOP configuration with a byte offset": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=0, byte_offset=1, context_id_2=0, flop_index=0, reg_index=0),
        {},
        None,
    ),
    "REG2FLOP target_sel 1": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=1, byte_offset=0, context_id_2=0, flop_index=0, reg_index=0),
        {},
        None,
    ),
    "REG2FLOP ADC index beyond 6 bits": (
        "REG2FLOP",
        dict(size_sel=1, target_sel=2, byte_offset=0, context_id_2=0, flop_index=64, reg_index=0),
        {},
        None,
    ),
    "FLUSHDMA flush_spec beyond 4 bits": ("FLUSHDMA", dict(flush_spec=16), {}, None),
}


def test_every_instruction_has_a_word_that_runs_natively():
    assert {case[0] for case in EXECUTES.values()} == set(MEMORY)


@pytest.mark.parametrize("case", sorted(EXECUTES))
def test_an_ordinary_word_runs_natively(case):
    name, fields, gprs, l1 = EXECUTES[case]
    result = fixed(name, fields, gprs, l1)
    assert result.native_cycles != NATIVE_DEFER
    assert mismatches(result) == []


@pytest.mark.parametrize("case", sorted(DEFERS))
def test_errors_waits_and_services_defer_to_python(case):
    name, fields, gprs, l1 = DEFERS[case]
    result = fixed(name, fields, gprs, l1)
    assert result.native_cycles == NATIVE_DEFER
    assert mismatches(result) == []


def test_a_store_tells_the_tile_which_bytes_changed(monkeypatch):
    """The native store's range reaches Tile.coprocessor_wrote_l1, once, merged across ATSWAP's granules."""
    told: list[tuple[int, int, int]] = []
    tile = TILES[0]
    monkeypatch.setattr(tile, "coprocessor_wrote_l1", lambda a, n, c: told.append((a, n, c)))
    name, fields, gprs, l1 = EXECUTES["ATSWAP granules 2..5"]
    assert fixed(name, fields, gprs, l1, cycle=1234).native_cycles != NATIVE_DEFER
    assert told == [(0x10004, 8, 1234)]


def test_flushdma_waits_for_the_busiest_selected_unit():
    reset(3)
    for tile in TILES:
        tile.coprocessor.unpackers.end[:] = (1100, 1050)
        tile.coprocessor.unit_clock[UNIT_INDEX["pack"]] = 1300
    for spec, cycles in ((0, 300), (2, 100), (4, 50), (1, 2), (6, 100)):
        result = run_on_both(ISA.encode("FLUSHDMA", flush_spec=spec), 0, 1000)
        assert (result.native_cycles, mismatches(result)) == (cycles, [])


# ------------------------------------------------------------------------------- through the engine


def _entries(program: list[tuple[int, int, int]]) -> list[tuple[int, PushedInstruction]]:
    """(pipe, entry) pairs of ``program``'s (pipe, cycle, word) triples."""
    return [
        (pipe, PushedInstruction(word, f"trisc{pipe}", 4 * i, cycle, True))
        for i, (pipe, cycle, word) in enumerate(program)
    ]


def test_native_stores_release_atomics_waiting_in_python():
    """Lockstep with the Python engine: pipe 0's ATCAS and pipe 2's FIFO pop wait (deferred: Python
    watches their L1 words); pipe 1's native STOREIND and push write those words, and the waiters go
    on from the cycles Python's engine would let them."""
    e = ISA.encode

    def setup(tile: Tile) -> None:
        gprs = tile.coprocessor.thcon.gprs
        gprs[:, 1] = A  # L1 0x10000: ATCAS's word at +4
        gprs[:, 2] = 4  # half-register 4: the offset 4
        gprs[:, 3] = A + 0x10  # a FIFO at L1 0x10100 (rd, wr)

    program = [
        (
            0,
            0,
            e("ATCAS", mem_hier_sel=0, swap_val=9, cmp_val=3, sel32b=1, data_reg_index=0, addr_reg_index=1),
        ),
        (0, 0, e("LOADIND", size_sel=1, offset_index=4, auto_inc_spec=0, data_reg_index=6, addr_reg_index=1)),
        (
            2,
            0,
            e(
                "ATINCGETPTR",
                mem_hier_sel=0,
                no_incr=0,
                incr_val=0,
                wrap_val=4,
                sel32b=0,
                data_reg_index=7,
                addr_reg_index=3,
            ),
        ),
        (2, 0, e("ATSWAP", mem_hier_sel=0, swap_mask=0x3, data_reg_index=7, addr_reg_index=1)),
        (
            1,
            30,
            e("SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=3, set_signals_mode=0, reg_index_16b=10),
        ),
        (
            1,
            30,
            e(
                "STOREIND",
                mem_hier_sel=1,
                size_sel=0,
                reg_size_sel=1,
                offset_index=4,
                auto_inc_spec=0,
                data_reg_index=5,
                addr_reg_index=1,
            ),
        ),
        (
            1,
            60,
            e(
                "ATINCGETPTR",
                mem_hier_sel=0,
                no_incr=0,
                incr_val=0,
                wrap_val=4,
                sel32b=1,
                data_reg_index=8,
                addr_reg_index=3,
            ),
        ),
        (1, 60, e("FLUSHDMA", flush_spec=0)),
        (
            1,
            60,
            e("REG2FLOP", size_sel=1, target_sel=2, byte_offset=0, context_id_2=0, flop_index=1, reg_index=5),
        ),
    ]
    tile = Tile("blackhole", engine="native")
    assert first_difference(setup, _entries(program), 200, native=tile) is None
    copro = tile.coprocessor
    assert int.from_bytes(tile.l1[0x10004:0x10008].tobytes(), "little") == 9
    assert copro.thcon.gprs[0, 6] == 9  # LOADIND after the swap
    assert list(tile.l1[0x10100:0x10108].view("<u4")) == [1, 1]  # one push, one pop
    assert tile.backend.native.instructions >= 6  # the stores, the push, the pop's retry, FLUSHDMA...


@st.composite
def memory_programs(draw: st.DrawFn) -> list[tuple[int, int, int]]:
    """Up to 12 words per pipe of the memory instructions (and a few GPR writes) on GPRs 0..3."""
    program = []
    for pipe in range(3):
        cycle = draw(st.integers(0, 4))
        for _ in range(draw(st.integers(0, 12))):
            cycle += draw(st.sampled_from([0, 0, 1, 3, 20]))
            name = draw(st.sampled_from([*MEMORY, "ADDDMAREG", "SETDMAREG"]))
            fields = {f.name: draw(st.integers(0, min(f.max_value, 3))) for f in ISA.by_name[name].fields}
            fields.update({k: v for (n, k), v in _CLEAN.items() if n == name})
            program.append((pipe, cycle, ISA.encode(name, **fields)))
    return program


# Operands that keep random programs running (an undefined one raises, which ends the run).
_CLEAN = {
    ("STOREIND", "mem_hier_sel"): 1,
    ("ATINCGET", "mem_hier_sel"): 0,
    ("ATINCGETPTR", "mem_hier_sel"): 0,
    ("ATSWAP", "mem_hier_sel"): 0,
    ("ATCAS", "mem_hier_sel"): 0,
    ("ATCAS", "data_reg_index"): 0,
    ("REG2FLOP", "byte_offset"): 0,
    ("REG2FLOP", "context_id_2"): 0,
    ("REG2FLOP", "target_sel"): 2,
    ("SETDMAREG", "set_signals_mode"): 0,
}


@native_settings(25)
@given(program=memory_programs(), seed=st.integers(0, 2**32 - 1))
def test_random_memory_programs_run_in_lockstep(program, seed):
    def setup(tile: Tile) -> None:
        rng = np.random.default_rng(seed)
        tile.coprocessor.thcon.gprs[:] = rng.integers(0, 4, tile.coprocessor.thcon.gprs.shape) + A
        tile.l1[0x10000:0x10100] = rng.integers(0, 4, 0x100, dtype=np.uint8)

    assert first_difference(setup, _entries(program), 150) is None
