"""The native UNPACR (tensixsim/tensix/native/unpack.c) against the Python semantics (unpack/unit.py).

As in test_native_ops.py, two tiles start every example from identical state; one runs the word
natively, the other through the Python semantics. A deferred word must leave its tile exactly as it
was; an executed one must retire in the Python semantics' cycles and leave every state array of both
tiles equal, the pipes' bookkeeping (the done cycle an UNPACR's fetch extends) included. The state
drawn is the unpackers': their configuration (formats, tile descriptor, addresses, strides, FIFO,
Tileize / Haloize, Dst or Src output, throttle), the ADCs, L1 contents, the Src banks and who owns
them, Dst, and the other unpacker's fetch still running (the two share L1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_native_ops import FRESH, TILES, _arrays, mismatches, native_settings, run_on_both

from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.formats import (
    BF16,
    BFP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.regs import SrcClient
from tensixsim.timing import UNPACK

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER
L1_BASE = 0x1000  # where the drawn tiles start (Base_address 0xFF: (0xFF + 1) * 16 bytes)
WINDOW = 0x4000  # bytes of L1 drawn at L1_BASE and at the end of L1

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

# The share of random examples that must run natively (the rest defer: waits, errors, rare modes).
MIN_NATIVE_SHARE = 0.25

# (InDataFormat, OutDataFormat): the native ones often, some that defer (BFP, undefined conversions).
FORMAT_PAIRS = [(BF16, BF16)] * 4 + [(FP16, FP16)] * 2 + [
    (FP32, FP32), (FP32, TF32), (FP32, BF16), (FP32, FP16), (TF32, TF32), (INT8, INT8), (INT16, INT16),
    (INT32, INT32), (BFP8, BFP8), (BF16, FP16), (12, 12),
]  # fmt: skip


def _sec(writes: list, unit: int, name: str, value: int) -> None:
    writes.append((f"THCON_SEC{unit}_{name}", value))


Drawn = tuple[list, dict[str, np.ndarray], np.ndarray]


def draw_state(seed: int, unit: int, thread: int, cycle: int) -> Drawn:
    """(Config writes, state arrays, pipe bookkeeping) drawn from ``seed`` for an UNPACR of ``unit``
    issued by ``thread`` at ``cycle``."""
    rng = np.random.default_rng(seed)

    def chance(p: float) -> bool:
        return bool(rng.random() < p)

    in_fmt, out_fmt = FORMAT_PAIRS[rng.integers(len(FORMAT_PAIRS))]
    x_dim = int(rng.choice([16, 64, 256, 1024])) if chance(0.8) else int(rng.integers(1, 2000))
    desc = (
        in_fmt
        | int(chance(0.97)) << 4  # IsUncompressed
        | x_dim << 16
        | int(rng.integers(0, 3)) << 32  # YDim
        | int(rng.integers(0, 3)) << 48  # ZDim
        | int(rng.integers(0, 2)) << 64  # WDim
        | (int(rng.integers(0, 3)) if chance(0.2) else 0) << 120  # DigestSize
    )
    writes: list = []
    _sec(writes, unit, "REG0_TileDescriptor", desc)
    _sec(writes, unit, "REG2_Out_data_format", out_fmt)
    _sec(writes, unit, "REG2_Throttle_mode", int(rng.integers(0, 4)))
    _sec(writes, unit, "REG2_Tileize_mode", int(chance(0.15)))
    _sec(writes, unit, "REG2_Haloize_mode", int(chance(0.1)))
    _sec(writes, unit, "REG2_Unpack_If_Sel", int(chance(0.3)))
    _sec(writes, unit, "REG2_Upsample_rate", 1 if chance(0.03) else 0)
    _sec(writes, unit, "REG2_Unpack_Src_Reg_Set_Upd", int(chance(0.5)))
    _sec(writes, unit, "REG2_Context_count", int(rng.integers(0, 4)))
    _sec(writes, unit, "REG2_Context_count_non_log2_en", int(chance(0.1)))
    for i in range(3):
        _sec(writes, unit, f"REG2_Shift_amount_cntx{i}", int(rng.choice([0, 0, 0, 1, 4, 8])))
    base = 0xFF if chance(0.85) else int(rng.choice([0x17FF0, 0x17FFE, 0x100]))  # near L1's end: faults
    _sec(writes, unit, "REG3_Base_address", base)
    _sec(writes, unit, "REG7_Offset_address", int(rng.integers(0, 8)) if chance(0.3) else 0)
    limit, fifo = (0x1FFFF, 0) if chance(0.8) else (0x180, 0x40)
    _sec(writes, unit, "REG2_Unpack_limit_address", limit)
    _sec(writes, unit, "REG2_Unpack_fifo_size", fifo)
    datum_bytes = 4 if out_fmt in (FP32, TF32, INT32) else 2 if out_fmt in (BF16, FP16, INT16) else 1
    # SrcA's rows start at output row 4: 64 datums on
    out_base = 64 * datum_bytes if chance(0.8) else int(rng.integers(0, 4096))
    writes.append((f"UNP{unit}_ADDR_BASE_REG_1_Base", out_base))
    writes.append((f"UNP{unit}_ADDR_CTRL_XY_REG_1_Ystride", int(rng.choice([0, 16, 32, 64, 6]))))
    writes.append((f"UNP{unit}_ADDR_CTRL_ZW_REG_1_Zstride", int(rng.choice([0, 64, 256]))))
    writes.append((f"UNP{unit}_ADDR_CTRL_ZW_REG_1_Wstride", int(rng.choice([0, 1024]))))
    writes.append((f"ALU_FORMAT_SPEC_REG0_Src{'AB'[unit]}Unsigned", int(chance(0.5))))
    writes.append(("DEST_ACCESS_CFG_remap_addrs", int(chance(0.3))))
    writes.append(("DEST_ACCESS_CFG_swizzle_32b", int(chance(0.3))))

    s = {name: array.copy() for name, array in FRESH.items() if name != "l1"}
    thread_cfg = s["config.thread"]
    from tensixsim.tensix.config import fields_blackhole as cfg

    def thread_field(name: str, pipe: int, value: int) -> None:
        reg, shift, width = cfg.THREAD_FIELDS[name]
        mask = ((1 << width) - 1) << shift
        thread_cfg[pipe, reg] = (int(thread_cfg[pipe, reg]) & ~mask) | ((value << shift) & mask)

    for pipe in range(3):
        thread_field("SRCA_SET_SetOvrdWithAddr", pipe, int(chance(0.3)))
        thread_field("SRCA_SET_Base", pipe, int(rng.integers(0, 4)))
        thread_field("SRCB_SET_Base", pipe, int(rng.integers(0, 4)))
        thread_field("CFG_STATE_ID_StateID", pipe, int(chance(0.05)))  # state 1 keeps a fresh tile's

    # The ADCs: the issuing pipe's X range, Y / Z / W of both channels.
    adc = s["adc.value"]
    adc[...] = rng.integers(0, 4, adc.shape)
    x0 = int(rng.choice([0, 0, 0, 16, 5])) if chance(0.9) else int(rng.integers(0, 300))
    count = int(rng.choice([256, 256, 16, 64, 1024, 0, 1])) if chance(0.85) else int(rng.integers(0, 300))
    if chance(0.02):
        count = -1  # an X end before the start
    adc[thread, unit, 0, 0] = x0
    adc[thread, unit, 1, 0] = max(x0 + count - 1, 0)
    adc[thread, unit, :, 1:] = rng.integers(0, 3, (2, 3)) if chance(0.3) else 0

    # The register files.
    regs_ = s
    regs_["regs.srca"] = rng.integers(0, 1 << 19, (2, 64, 16), dtype=np.uint32)
    regs_["regs.srcb"] = rng.integers(0, 1 << 19, (2, 64, 16), dtype=np.uint32)
    bank = rng.integers(0, 2, 2).astype(np.uint8)
    regs_["regs.unpacker_bank"] = bank
    client = rng.integers(0, 2, (2, 2)).astype(np.uint8)
    if chance(0.9):
        client[unit, bank[unit]] = SrcClient.UNPACKERS
    regs_["regs.src_client"] = client
    rows = rng.choice([0, 0, 16, 32, 48], (2, 3)) if chance(0.9) else rng.integers(0, 80, (2, 3))
    regs_["regs.unpacker_src_row"] = rows.astype(np.uint32)
    regs_["regs.dst"] = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint32).astype(np.uint16)
    regs_["regs.dst_row_valid"] = rng.random(1024) < (0.7 if chance(0.5) else 1.0)
    handover = np.full((2, 2), -1, np.int64)

    # The unpackers' fetches: mostly idle; now and then the other one (or this one: a wait) fetching.
    names = ("end", "anchor", "left", "want", "shared_until", "shared_speed", "thread")
    u = {k: s[f"unpackers.{k}"] for k in names}
    u["end"][:] = cycle - rng.integers(0, 50, 2)
    u["thread"][:] = rng.integers(-1, 3, 2)
    u["want"][:] = rng.integers(0, 3, 2)
    u["shared_speed"][:] = u["want"]
    u["anchor"][:] = u["shared_until"][:] = u["end"] - 10
    other = 1 - unit
    if chance(0.35):  # the other unpacker still fetching: L1 shared from the start
        left = int(rng.integers(1, 4096))
        anchor = cycle - int(rng.integers(0, 20))
        want = int(rng.integers(0, 3))
        u["anchor"][other], u["left"][other], u["want"][other] = anchor, left, want
        u["shared_until"][other], u["shared_speed"][other] = anchor, want
        end = anchor + -(-left // (16 << want))
        u["end"][other] = max(end, cycle + 3)
        u["left"][other] = (u["end"][other] - anchor) * (16 << want)
        u["thread"][other] = thread if chance(0.6) else int(rng.integers(0, 3))
        if chance(0.5):
            handover[other, rng.integers(0, 2)] = u["end"][other]
    if chance(0.05):
        u["end"][unit] = cycle + 5  # this unpacker still fetching: the UNPACR waits
    regs_["regs.src_handover_at"] = handover
    s["unpackers.context_counter"] = rng.integers(0, 8, (2, 3)).astype(np.uint8)
    pipes = np.zeros_like(TILES[0].backend.state)
    pipes[:, :] = TILES[0].backend.state
    from tensixsim.tensix.frontend.pipes import DONE_CYCLE

    pipes[:, DONE_CYCLE] = cycle + rng.integers(-5, 200, len(pipes))
    return writes, s, pipes


def load_state(writes: list, state: dict[str, np.ndarray], pipes: np.ndarray, seed: int) -> None:
    """Give both tiles the drawn state: arrays, L1 windows of random bytes, Config writes (state 0)."""
    rng = np.random.default_rng(seed ^ 0x5EED)
    start = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    end = rng.integers(0, 256, WINDOW, dtype=np.uint8)
    for tile in TILES:
        for name, array in _arrays(tile).items():
            if name == "l1":
                array[L1_BASE : L1_BASE + WINDOW] = start
                array[-WINDOW:] = end
            else:
                array[...] = state.get(name, FRESH[name])
        config = tile.coprocessor.config
        for name, value in writes:
            config.write_field(name, 0, value)
        tile.backend.state[...] = pipes


def compare_unpacr(fields: dict[str, int], thread: int, cycle: int, seed: int,
                   adjust: Callable[[list, dict[str, np.ndarray]], None] | None = None):  # fmt: skip
    """Both tiles from the state drawn from ``seed``; UNPACR ``fields`` natively on one, in Python on
    the other. The comparison, and the pipes' bookkeeping differences."""
    writes, state, pipes = draw_state(seed, fields["unpack_block_selection"], thread, cycle)
    if adjust is not None:
        adjust(writes, state)
    load_state(writes, state, pipes, seed)
    result = run_on_both(ISA.encode("UNPACR", **fields), thread, cycle)
    problems = mismatches(result)
    native_pipes, python_pipes = (t.backend.state for t in TILES)
    if result.native_cycles == NATIVE_DEFER:
        if not np.array_equal(native_pipes, pipes):
            problems.append("deferred, yet changed the pipes' bookkeeping")
    elif not np.array_equal(native_pipes, python_pipes):
        problems.append("pipes' bookkeeping differs")
    return result, problems


def operands(**changes: int) -> dict[str, int]:
    """UNPACR's regular mode: unpacker 0, no ADC increments, nothing else set."""
    fields = {f.name: 0 for f in ISA.by_name["UNPACR"].fields}
    fields.update(changes)
    return fields


rare = st.sampled_from([0] * 30 + [1])
UNPACR_FIELDS = st.fixed_dictionaries(
    {
        "unpack_block_selection": st.integers(0, 1),
        "addr_mode": st.one_of(st.just(0), st.just(1), st.integers(0, 255)),
        "cfg_context_cnt_inc": st.sampled_from([0] * 40 + [1, 2]),
        "cfg_context_id": st.integers(0, 7),
        "addr_cnt_context_id": st.integers(0, 3),
        "ovrd_thread_id": rare,
        "set_dat_valid": st.integers(0, 1),
        "srcb_bcast": rare,
        "zero_write2": rare,
        "auto_inc_context_id": st.integers(0, 1),
        "row_search": rare,
        "search_cache_flush": rare,
        "last": st.integers(0, 1),
    }
)

SETTINGS = native_settings(500)


def test_native_matches_python_or_defers_unchanged():
    counts: Counter[str] = Counter()

    @SETTINGS
    @given(
        fields=UNPACR_FIELDS,
        thread=st.integers(0, 2),
        cycle=st.one_of(st.integers(60, 200), st.integers(1000, 2**40)),
        seed=st.integers(0, 2**32 - 1),
    )
    def check(fields, thread, cycle, seed):
        # Hypothesis draws small seeds often: mix the whole example in, so the states differ.
        mixed = np.random.SeedSequence([seed, thread, cycle % 2**32, *fields.values()])
        seed = int(mixed.generate_state(1)[0])
        result, problems = compare_unpacr(fields, thread, cycle, seed)
        counts["deferred" if result.native_cycles == NATIVE_DEFER else "native"] += 1
        assert problems == []

    check()
    assert counts["native"] >= MIN_NATIVE_SHARE * sum(counts.values()), counts


# ------------------------------------------------------------------------------- fixed words


def eltwise(writes: list, state: dict[str, np.ndarray], unit: int = 0) -> None:
    """The eltwise kernels' configuration (benchmarks/eltwise_e2e.py): a BF16 32x32 tile's 256-datum
    faces into SrcA / SrcB, Unpack_Src_Reg_Set_Upd, idle unpackers, the bank the unpackers'."""
    for u in (0, 1):
        desc = BF16 | 1 << 4 | 1024 << 16 | 1 << 32 | 1 << 48 | 1 << 64
        writes += [
            (f"THCON_SEC{u}_REG0_TileDescriptor", desc), (f"THCON_SEC{u}_REG2_Out_data_format", BF16),
            (f"THCON_SEC{u}_REG2_Tileize_mode", 0), (f"THCON_SEC{u}_REG2_Haloize_mode", 0),
            (f"THCON_SEC{u}_REG2_Unpack_If_Sel", 0), (f"THCON_SEC{u}_REG2_Upsample_rate", 0),
            (f"THCON_SEC{u}_REG2_Unpack_Src_Reg_Set_Upd", 1), (f"THCON_SEC{u}_REG3_Base_address", 0xFF),
            (f"THCON_SEC{u}_REG2_Unpack_limit_address", 0x1FFFF), (f"THCON_SEC{u}_REG2_Unpack_fifo_size", 0),
            (f"THCON_SEC{u}_REG2_Shift_amount_cntx0", 0), (f"THCON_SEC{u}_REG7_Offset_address", 0),
            (f"UNP{u}_ADDR_BASE_REG_1_Base", 64 * 2 if u == 0 else 0),
            (f"UNP{u}_ADDR_CTRL_XY_REG_1_Ystride", 0), (f"UNP{u}_ADDR_CTRL_ZW_REG_1_Zstride", 512),
        ]  # fmt: skip
    adc = state["adc.value"]
    adc[0, :2] = 0
    adc[0, :2, 1, 0] = 255
    state["regs.src_client"][:] = SrcClient.UNPACKERS
    state["regs.unpacker_src_row"][:] = 0
    state["unpackers.end"][:] = 0
    state["config.thread"][0, :] = FRESH["config.thread"][0]


@pytest.mark.parametrize("unit", [0, 1])
@pytest.mark.parametrize("flip", [0, 1])
@pytest.mark.parametrize("z", [0, 1, 3])
def test_the_eltwise_configuration_runs_natively(unit, flip, z):
    def adjust(writes, state):
        eltwise(writes, state)
        state["adc.value"][0, unit, 0, 2] = z  # the input face (Z)

    fields = operands(unpack_block_selection=unit, addr_mode=1, set_dat_valid=flip)
    result, problems = compare_unpacr(fields, 0, 5000, 42 + z, adjust)
    assert result.native_cycles != NATIVE_DEFER
    assert problems == []


def unpacker0_fetching(state: dict[str, np.ndarray]) -> None:
    """Unpacker 0 fetches 32 cycles' worth at x4 (4 * UNPACK.l1_bytes_per_cycle bytes a cycle) from
    cycle 4990 to 5022."""
    left = 32 * (UNPACK.l1_bytes_per_cycle << 2)
    for name, value in (("anchor", 4990), ("left", left), ("want", 2), ("shared_until", 4990),
                        ("shared_speed", 2), ("end", 4990 + 32)):  # fmt: skip
        state[f"unpackers.{name}"][0] = value


def test_a_second_fetch_shares_l1_with_the_first():
    """Unpacker 1 starts while unpacker 0 fetches (same pipe): both schedules and the pending FlipSrc
    hand-over move, natively as in Python."""

    def adjust(writes, state):
        eltwise(writes, state)
        unpacker0_fetching(state)
        state["unpackers.thread"][0] = 0
        state["regs.src_handover_at"][0, 1] = 4990 + 32
        writes.append(("THCON_SEC1_REG2_Throttle_mode", 2))  # both want x4: each gets x2

    result, problems = compare_unpacr(operands(unpack_block_selection=1, addr_mode=1), 0, 5000, 3, adjust)
    assert result.native_cycles != NATIVE_DEFER
    assert problems == []
    assert TILES[0].coprocessor.regs.src_handover_at[0, 1] > 4990 + 32  # slowed down


def _set(writes: list, name: str, value: int) -> Callable[[list, dict], None]:
    return lambda w, s: (eltwise(w, s), w.append((name, value)))


def _state(name: str, index: tuple, value: int) -> Callable[[list, dict], None]:
    def adjust(w: list, s: dict) -> None:
        eltwise(w, s)
        s[name][index] = value

    return adjust


DEFERS = {
    "compressed input": (operands(), _set([], "THCON_SEC0_REG0_TileDescriptor", BF16 | 1024 << 16 | 1 << 32)),
    "BFP8 input": (operands(), _set([], "THCON_SEC0_REG0_TileDescriptor", BFP8 | 1 << 4 | 1 << 32)),
    "MultiContextMode": (operands(ovrd_thread_id=1), eltwise),
    "RowSearch": (operands(row_search=1), eltwise),
    "srcb_bcast": (operands(srcb_bcast=1), eltwise),
    "an L1 read beyond L1": (operands(), _set([], "THCON_SEC0_REG3_Base_address", 0x17FFE)),
    "a SrcA row beyond 15": (operands(), _set([], "UNP0_ADDR_BASE_REG_1_Base", 2 * 20 * 16)),
    "upsampling": (operands(), _set([], "THCON_SEC0_REG2_Upsample_rate", 1)),
    "FP32 into SrcA": (operands(), _set([], "THCON_SEC0_REG2_Out_data_format", FP32)),
    "a context counter with a non-log2 wrap": (
        operands(cfg_context_cnt_inc=1),
        _set([], "THCON_SEC0_REG2_Context_count_non_log2_en", 1),
    ),
    "FlushCache with an ADC increment": (operands(search_cache_flush=1, addr_mode=1), eltwise),
}


@pytest.mark.parametrize("case", sorted(DEFERS))
def test_waits_errors_and_rare_modes_defer_to_python(case):
    fields, adjust = DEFERS[case]
    result, problems = compare_unpacr(fields, 0, 5000, 9, adjust)
    assert result.native_cycles == NATIVE_DEFER
    assert problems == []


# Python waits: the native side waits for the same reason and until, having changed nothing.
WAITS = {
    "the unpacker still fetching": (operands(), _state("unpackers.end", (0,), 5005)),
    "the bank not the unpackers'": (operands(), _state("regs.src_client", (0, 0), SrcClient.MATRIX_UNIT)),
}


@pytest.mark.parametrize("case", sorted(WAITS))
def test_waits_match_python(case):
    fields, adjust = WAITS[case]
    result, problems = compare_unpacr(fields, 0, 5000, 9, adjust)
    assert result.native_cycles == native.NATIVE_WAIT
    assert problems == []


def test_a_fetch_slowing_another_pipes_fetch_defers():
    """Python must tell the tile that the other pipe's done cycle moved (Tile.pipe_progress)."""

    def adjust(writes, state):
        eltwise(writes, state)
        unpacker0_fetching(state)
        state["unpackers.thread"][0] = 2
        writes.append(("THCON_SEC1_REG2_Throttle_mode", 2))

    result, problems = compare_unpacr(operands(unpack_block_selection=1, addr_mode=1), 0, 5000, 3, adjust)
    assert result.native_cycles == NATIVE_DEFER
    assert problems == []


@pytest.mark.parametrize("mode", ["increment", "flush"])
def test_the_counter_and_flush_modes_run_natively(mode):
    fields = operands(cfg_context_cnt_inc=1) if mode == "increment" else operands(search_cache_flush=1)
    result, problems = compare_unpacr(fields, 1, 5000, 5, eltwise)
    assert result.native_cycles != NATIVE_DEFER
    assert problems == []
