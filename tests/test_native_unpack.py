"""The native UNPACR (tensixsim/tensix/native/unpack.c) against the Python semantics (unpack/unit.py).

As in test_native_ops.py, two tiles start every example from identical state; one runs the word
natively, the other through the Python semantics. A deferred word must leave its tile exactly as it
was; an executed one must retire in the Python semantics' cycles and leave every state array of both
tiles equal, the pipes' bookkeeping (the done cycle an UNPACR's fetch extends) included. The state
drawn is the unpackers': their configuration (formats, every block-float format with or without its
exponent section or a forced shared exponent, tile descriptor, addresses, strides, FIFO limits that
wrap datums and exponents, Tileize / Haloize, Dst or Src output, throttle, every context's fields for
MultiContextMode, CfgContextOffset, the context counters), the ADCs, L1 contents (any bytes, or bytes
that keep BFP*a's datums defined), the Src banks and who owns them, Dst, and the other unpacker's
fetch still running (the two share L1). The words draw MultiContextMode half the time, with every
ContextNumber, ContextADC and UseContextCounter.

Fixed examples: tt-llk's UNPACR (MultiContextMode, the context from CfgContextOffset) of BF16 faces and
of every block-float format, and random unpacks shaped like it, must run in C; the cases Python raises
for (and the waits) must defer (wait) having changed nothing.
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
    BFP2,
    BFP2A,
    BFP4,
    BFP4A,
    BFP8,
    BFP8A,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
)
from tensixsim.tensix.regs import SrcClient
from tensixsim.tensix.unpack.unit import _base_field, _offset_field
from tensixsim.timing import UNPACK

ISA = isa_for("blackhole")
NATIVE_DEFER = native.NATIVE_DEFER
L1_BASE = 0x1000  # where the drawn tiles start (Base_address 0xFF: (0xFF + 1) * 16 bytes)
WINDOW = 0x4000  # bytes of L1 drawn at L1_BASE and at the end of L1

pytestmark = pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")

# The share of random examples that must run natively (the rest defer: waits, errors, rare modes).
MIN_NATIVE_SHARE = 0.28

BFP_FORMATS = (BFP8, BFP8A, BFP4, BFP4A, BFP2, BFP2A)
# (InDataFormat, OutDataFormat): the common ones often, every BFP format, some that defer (undefined
# conversions, format codes naming no format; FP8, which only Wormhole models).
FORMAT_PAIRS = [(BF16, BF16)] * 4 + [(FP16, FP16)] * 2 + [
    (FP32, FP32), (FP32, TF32), (FP32, BF16), (FP32, FP16), (TF32, TF32), (INT8, INT8), (INT16, INT16),
    (INT32, INT32), (BF16, FP16), (12, 12), (BFP8, BF16), (FP8, FP8),
] + [(f, f) for f in BFP_FORMATS] * 2  # fmt: skip
# Base_address choices (16-byte words less one): the drawn L1 window, a little further in (so a small
# FIFO limit wraps the exponents too), and near L1's end (faults).
BASES = (0xFF, 0xFF, 0xFF, 0x10F, 0x13F)
# (Unpack_limit_address, Unpack_fifo_size): no wrap mostly; else limits just past the bases, so the
# datums and the exponent sections (a sixteenth of a byte per datum) wrap within the window.
# Shift_amount_cntx<n>: SrcA's column shift (undefined into Dst), Tileize_mode's row pitch.
SHIFTS = (0, 0, 0, 0, 0, 1, 4, 8)
FIFOS = [(0x1FFFF, 0)] * 6 + [(0x180, 0x40), (0x110, 0x10), (0x111, 0x8), (0x140, 0x20), (0x100, 0x4)]


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

    def x_dim_choice() -> int:
        return int(rng.choice([16, 64, 256, 1024])) if chance(0.8) else int(rng.integers(0, 2000))

    x_dim = x_dim_choice()
    desc = (
        in_fmt
        | int(chance(0.97)) << 4  # IsUncompressed
        | int(chance(0.3)) << 5  # NoBFPExpSection
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
        _sec(writes, unit, f"REG2_Shift_amount_cntx{i}", int(rng.choice(SHIFTS)))

    def base() -> int:
        return int(rng.choice(BASES)) if chance(0.9) else int(rng.choice([0x17FF0, 0x17FFE, 0x100]))

    def datum_bytes(fmt: int) -> int:
        return 4 if fmt in (FP32, TF32, INT32) else 2 if fmt in (BF16, FP16, INT16) else 1

    _sec(writes, unit, "REG3_Base_address", base())
    _sec(writes, unit, "REG7_Offset_address", int(rng.integers(0, 8)) if chance(0.3) else 0)
    limit, fifo = FIFOS[rng.integers(len(FIFOS))]
    _sec(writes, unit, "REG2_Unpack_limit_address", limit)
    _sec(writes, unit, "REG2_Unpack_fifo_size", fifo)
    # SrcA's rows start at output row 4: 64 datums on
    out_base = 64 * datum_bytes(out_fmt) if chance(0.8) else int(rng.integers(0, 4096))
    writes.append((f"UNP{unit}_ADDR_BASE_REG_1_Base", out_base))
    # MultiContextMode's per-context fields (every context, both unpackers' tables).
    _sec(writes, unit, "REG2_Ovrd_data_format", int(chance(0.4)))
    for c in range(8):
        _sec(writes, unit, f"REG2_Disable_zero_compress_cntx{c}", int(chance(0.97)))
        _sec(writes, unit, f"REG2_Unpack_if_sel_cntx{c}", int(chance(0.3)))
        ctx_in, ctx_out = FORMAT_PAIRS[rng.integers(len(FORMAT_PAIRS))]
        _sec(writes, unit, f"REG7_Unpack_data_format_cntx{c}", ctx_in)
        _sec(writes, unit, f"REG7_Unpack_out_data_format_cntx{c}", ctx_out)
        if c:
            _sec(writes, unit, _base_field(c), base())
        if 0 < c < 4:
            _sec(writes, unit, _offset_field(c), int(rng.integers(0, 8)) if chance(0.3) else 0)
        if c < 4:
            _sec(writes, unit, f"REG5_Tile_x_dim_cntx{c}", x_dim_choice())
            dest = int(rng.choice([0, 64, 128])) if chance(0.8) else int(rng.integers(0, 1 << 16))
            _sec(writes, unit, f"REG5_Dest_cntx{c}_address", dest)
    _sec(writes, unit, "REG2_Shift_amount_cntx3", int(rng.choice(SHIFTS)))
    writes.append((f"UNP{unit}_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", int(chance(0.5))))
    # Block-float exponents: from L1, or forced (often small enough for BFP*a's five bits).
    _sec(writes, unit, "REG2_Force_shared_exp", int(chance(0.25)))
    shared = int(rng.integers(6, 32)) if chance(0.6) else int(rng.integers(0, 256))
    writes.append((f"UNP{unit}_FORCED_SHARED_EXP_shared_exp", shared))
    _sec(writes, unit, "REG2_Upsample_and_interleave", int(chance(0.5)))
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
        offset = int(rng.choice([0, 0, 1])) if chance(0.9) else int(rng.integers(0, 16))
        thread_field(f"UNPACK_MISC_CFG_CfgContextOffset_{unit}", pipe, offset)

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
    # The context counters: tt-llk's two contexts mostly (unpacker 1 has no context >= 2).
    s["unpackers.context_counter"] = rng.integers(0, 2 if chance(0.7) else 8, (2, 3)).astype(np.uint8)
    pipes = np.zeros_like(TILES[0].backend.state)
    pipes[:, :] = TILES[0].backend.state
    from tensixsim.tensix.frontend.pipes import DONE_CYCLE

    pipes[:, DONE_CYCLE] = cycle + rng.integers(-5, 200, len(pipes))
    return writes, s, pipes


def load_state(
    writes: list, state: dict[str, np.ndarray], pipes: np.ndarray, seed: int, tame: bool | None = None
) -> None:
    """Give both tiles the drawn state: arrays, L1 windows of random bytes, Config writes (state 0).
    The first window holds any bytes (BFP*a datums the page leaves undefined, exponents 0 and 255) or,
    ``tame`` (by default now and then), bytes small enough that block-float exponents read from it keep
    BFP*a's datums defined."""
    rng = np.random.default_rng(seed ^ 0x5EED)
    if tame is None:
        tame = bool(rng.random() < 0.5)
    low, high = (6, 32) if tame else (0, 256)
    start = rng.integers(low, high, WINDOW, dtype=np.uint8)
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
                   adjust: Callable[[list, dict[str, np.ndarray]], None] | None = None,
                   tame: bool | None = None):  # fmt: skip
    """Both tiles from the state drawn from ``seed``; UNPACR ``fields`` natively on one, in Python on
    the other. The comparison, and the pipes' bookkeeping differences."""
    writes, state, pipes = draw_state(seed, fields["unpack_block_selection"], thread, cycle)
    if adjust is not None:
        adjust(writes, state)
    load_state(writes, state, pipes, seed, tame)
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
        # Contexts 0 and 1 (tt-llk's two) most often; unpacker 1 has no context >= 2.
        "cfg_context_id": st.sampled_from([0, 0, 1, 2, 3, 4, 5, 6, 7, 1, 0, 0, 1, 0]),
        "addr_cnt_context_id": st.sampled_from([0, 0, 1, 2, 3, 0, 0, 1, 2, 0]),
        "ovrd_thread_id": st.integers(0, 1),
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


def ready_to_unpack(state: dict[str, np.ndarray]) -> None:
    """Thread 0's unpacker address counters at 0 (X end 255), both Src banks the unpackers', their
    rows at 0, and no unpacker busy."""
    adc = state["adc.value"]
    adc[0, :2] = 0
    adc[0, :2, 1, 0] = 255
    state["regs.src_client"][:] = SrcClient.UNPACKERS
    state["regs.unpacker_src_row"][:] = 0
    state["unpackers.end"][:] = 0


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
    ready_to_unpack(state)
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


# tt-llk's unpack (Blackhole configure_unpack_AB, llk_unpack_A / AB): every UNPACR is
# TTI_UNPACR(unit, 0b1, 0, 0, 0, 1 /* ovrd_thread_id */, 1 /* set_dat_valid */, 0, 0, 0, 0, 0, 1 /* last */),
# MultiContextMode with ContextNumber 0 and the context chosen by CfgContextOffset (switch_config_context
# writes 0x0101: context 1 for both unpackers, or 0), each context's tile in its own Base address.
TTLLK_BASES = (0xFF, 0x13F)  # contexts 0 and 1: 16-byte words less one, in the drawn L1 window


def ttllk_word(unit: int) -> dict[str, int]:
    return operands(unpack_block_selection=unit, addr_mode=1, ovrd_thread_id=1, set_dat_valid=1, last=1)


def ttllk(in_fmt: int = BF16, out_fmt: int = BF16, context: int = 1) -> Callable[[list, dict], None]:
    """tt-llk's unpack configuration for tiles of ``in_fmt`` unpacked as ``out_fmt`` (four 16x16 faces):
    uncompressed in every context, unpacker 0's per-context face size (Tile_x_dim_cntx, 256) over the
    descriptor's X of 0, Dest_cntx0/1 four rows in, added to the ADC's address (add_dest_addr_cntr),
    SrcA through SetOvrdWithAddr (SETC16 SRCA_SET 0x4), Throttle_mode 2, a Z stride of one face, and
    pipe 0's CfgContextOffset of both unpackers ``context``."""

    def adjust(writes: list, state: dict[str, np.ndarray]) -> None:
        out_bytes = 4 if out_fmt in (FP32, TF32, INT32) else 2 if out_fmt in (BF16, FP16, INT16) else 1
        for u in (0, 1):
            desc = in_fmt | 1 << 4 | (0 if u == 0 else 256) << 16 | 1 << 32 | 4 << 48
            writes.append((f"THCON_SEC{u}_REG0_TileDescriptor", desc))
            for name, value in (
                ("Out_data_format", out_fmt), ("Throttle_mode", 2), ("Context_count", 0),
                ("Haloize_mode", 0), ("Tileize_mode", 0), ("Unpack_Src_Reg_Set_Upd", 0), ("Unpack_If_Sel", 0),
                ("Upsample_rate", 0), ("Ovrd_data_format", 0), ("Force_shared_exp", 0),
                ("Unpack_limit_address", 0x1FFFF), ("Unpack_fifo_size", 0), ("Context_count_non_log2_en", 0),
                *((f"Shift_amount_cntx{c}", 0) for c in range(4)),
                *((f"Disable_zero_compress_cntx{c}", 1) for c in range(8)),
                *((f"Unpack_if_sel_cntx{c}", 0) for c in range(8)),
            ):  # fmt: skip
                writes.append((f"THCON_SEC{u}_REG2_{name}", value))
            writes += [
                (f"THCON_SEC{u}_REG3_Base_address", TTLLK_BASES[0]),
                (f"THCON_SEC{u}_REG3_Base_cntx1_address", TTLLK_BASES[1]),
                (f"THCON_SEC{u}_REG7_Offset_address", 0), (f"THCON_SEC{u}_REG7_Offset_cntx1_address", 0),
                (f"UNP{u}_ADDR_BASE_REG_1_Base", 0), (f"UNP{u}_ADDR_CTRL_XY_REG_1_Ystride", 0),
                (f"UNP{u}_ADDR_CTRL_ZW_REG_1_Zstride", 256 * out_bytes),
                (f"UNP{u}_ADDR_CTRL_ZW_REG_1_Wstride", 0),
            ]  # fmt: skip
        for c in (0, 1):
            writes += [
                (f"THCON_SEC0_REG5_Tile_x_dim_cntx{c}", 256),
                (f"THCON_SEC0_REG5_Dest_cntx{c}_address", 64),
            ]
        writes.append(("UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 1))
        from tensixsim.tensix.config import fields_blackhole as cfg

        thread_cfg = state["config.thread"]
        thread_cfg[0, :] = FRESH["config.thread"][0]
        for name, value in (("SRCA_SET_SetOvrdWithAddr", 1), ("SRCA_SET_Base", 0), ("SRCB_SET_Base", 0),
                            ("UNPACK_MISC_CFG_CfgContextOffset_0", context),
                            ("UNPACK_MISC_CFG_CfgContextOffset_1", context)):  # fmt: skip
            reg, shift, width = cfg.THREAD_FIELDS[name]
            mask = ((1 << width) - 1) << shift
            thread_cfg[0, reg] = (int(thread_cfg[0, reg]) & ~mask) | (value << shift)
        ready_to_unpack(state)

    return adjust


def face(adjust: Callable[[list, dict], None], unit: int, z: int) -> Callable[[list, dict], None]:
    """``adjust``, then the pipe's input and output face ``z`` (both channels' Z)."""

    def then(writes: list, state: dict[str, np.ndarray]) -> None:
        adjust(writes, state)
        state["adc.value"][0, unit, :, 2] = z

    return then


@pytest.mark.parametrize("unit", [0, 1])
@pytest.mark.parametrize("context", [0, 1])
@pytest.mark.parametrize("z", [0, 3])
def test_ttllks_face_unpack_with_ovrd_thread_id_runs_natively(unit, context, z):
    """tt-llk's BF16 face unpack: MultiContextMode (OvrdThreadId 1), the context from CfgContextOffset."""
    result, problems = compare_unpacr(ttllk_word(unit), 0, 5000, 7 + z, face(ttllk(context=context), unit, z))
    assert result.native_cycles == UNPACK.address_cycles  # ran in C, not deferred
    assert problems == []


@pytest.mark.parametrize("fmt", BFP_FORMATS)
@pytest.mark.parametrize("unit", [0, 1])
@pytest.mark.parametrize("z", [0, 2])
def test_a_block_float_tile_unpack_runs_natively(fmt, unit, z):
    """A block-float tile as tt-llk unpacks it: its exponent section (a byte per 16 datums) before the
    datums, the face's exponents and datums read, converted (BF16, or FP16 for BFP*a) and placed in C."""
    adjust = face(ttllk(fmt, fmt), unit, z)
    result, problems = compare_unpacr(ttllk_word(unit), 0, 5000, 11 + z, adjust, tame=True)
    assert result.native_cycles == UNPACK.address_cycles
    assert problems == []


def test_a_bfp8_tile_unpack_runs_in_c_with_the_values_python_gives():
    """The ordinary BFP8 tile into SrcA (single-context mode): nothing deferred, SrcA as Python has it,
    and the datums not all zero (the exponents were read)."""

    def adjust(writes: list, state: dict[str, np.ndarray]) -> None:
        eltwise(writes, state)
        desc = BFP8 | 1 << 4 | 256 << 16 | 1 << 32 | 4 << 48
        writes += [("THCON_SEC0_REG0_TileDescriptor", desc), ("THCON_SEC0_REG2_Out_data_format", BFP8),
                   ("UNP0_ADDR_BASE_REG_1_Base", 64), ("UNP0_ADDR_CTRL_ZW_REG_1_Zstride", 256)]  # fmt: skip

    result, problems = compare_unpacr(operands(addr_mode=1, set_dat_valid=1), 0, 5000, 21, adjust, tame=False)
    assert result.native_cycles == UNPACK.address_cycles
    assert problems == []
    bank = 1 - int(TILES[0].coprocessor.regs.unpacker_bank[0])  # the one just handed over
    assert TILES[0].coprocessor.regs.srca[bank, :16].any()


KERNEL_FORMATS = (BF16, FP16, FP32, INT8, *BFP_FORMATS, *BFP_FORMATS)


def test_kernel_shaped_unpacks_run_in_c():
    """Random unpacks shaped as kernels issue them (tt-llk's configuration: MultiContextMode, contexts 0
    and 1, faces of 1 to 16 rows, any format a kernel unpacks, BFP's exponents from L1 or forced, SrcA,
    SrcB or Dst, the other unpacker sometimes fetching): they match Python and all run in C."""
    counts: Counter[str] = Counter()

    @SETTINGS
    @given(
        unit=st.integers(0, 1),
        seed=st.integers(0, 2**32 - 1),
        use_counter=st.sampled_from([0, 0, 1]),
        set_dat_valid=st.integers(0, 1),
    )
    def check(unit, seed, use_counter, set_dat_valid):
        rng = np.random.default_rng(seed)
        fmt = int(rng.choice(KERNEL_FORMATS))
        out_fmt = int(rng.choice([BF16, FP16])) if fmt == FP32 else fmt  # FP32 itself only into Dst
        context = int(rng.integers(0, 2))
        base = ttllk(fmt, out_fmt, context=context)

        def adjust(writes: list, state: dict[str, np.ndarray]) -> None:
            base(writes, state)
            rows = int(rng.choice([1, 2, 4, 8, 16]))
            state["adc.value"][0, unit, 1, 0] = rows * 16 - 1
            state["adc.value"][0, unit, :, 2] = int(rng.integers(0, 4))
            state["unpackers.context_counter"][unit, 0] = int(rng.integers(0, 2 - context))  # context 0 or 1
            writes.append((f"THCON_SEC{unit}_REG2_Context_count", 1))
            if rng.random() < 0.3:
                writes += [(f"THCON_SEC{unit}_REG2_Force_shared_exp", 1),
                           (f"UNP{unit}_FORCED_SHARED_EXP_shared_exp", int(rng.integers(6, 32)))]  # fmt: skip
            if unit == 0 and rng.random() < 0.3:
                writes += [(f"THCON_SEC0_REG2_Unpack_if_sel_cntx{c}", 1) for c in (0, 1)]
            if rng.random() < 0.2:  # the other unpacker still fetching from the same pipe
                unpacker0_fetching(state, 1 - unit)
                state["unpackers.thread"][1 - unit] = 0

        fields = ttllk_word(unit) | {"auto_inc_context_id": use_counter, "set_dat_valid": set_dat_valid}
        result, problems = compare_unpacr(fields, 0, 5000, seed, adjust, tame=True)
        counts["deferred" if result.native_cycles == NATIVE_DEFER else "native"] += 1
        assert problems == []

    check()
    assert counts["deferred"] == 0, counts


@pytest.mark.parametrize(
    "case",
    ["forced shared exponent", "no exponent section", "exponent FIFO wrap", "context counter", "context 5",
     "Ovrd_data_format", "Dst"],
)  # fmt: skip
def test_context_and_block_float_variants_run_natively(case):
    """MultiContextMode's other choices and the block-float options, each on tt-llk's configuration."""
    fields = ttllk_word(0)
    fmt = BFP4 if case == "no exponent section" else BFP8A
    base = ttllk(fmt, fmt)

    def adjust(writes: list, state: dict[str, np.ndarray]) -> None:
        base(writes, state)
        if case == "forced shared exponent":
            writes += [("THCON_SEC0_REG2_Force_shared_exp", 1), ("UNP0_FORCED_SHARED_EXP_shared_exp", 20)]
        elif case == "no exponent section":  # BFP4's datums start at the base: exponents there too
            writes.append(("THCON_SEC0_REG0_TileDescriptor", BFP4 | 1 << 4 | 1 << 5 | 1 << 32 | 4 << 48))
        elif case == "exponent FIFO wrap":  # the exponents pass the limit at the next 16-byte boundary
            writes += [("THCON_SEC0_REG2_Unpack_limit_address", TTLLK_BASES[1] + 1),
                       ("THCON_SEC0_REG2_Unpack_fifo_size", 0x10)]  # fmt: skip
            state["adc.value"][0, 0, 1, 0] = 511  # two faces: 32 exponent bytes from the limit on
        elif case == "context counter":  # UseContextCounter: the counter (0) plus the offset, then advanced
            fields["auto_inc_context_id"] = 1
            writes.append(("THCON_SEC0_REG2_Context_count", 2))  # four contexts
            state["unpackers.context_counter"][0, 0] = 0
        elif case == "context 5":  # ContextNumber 4 plus the offset: Base_cntx5, Offset_cntx1, x dim cntx1
            fields["cfg_context_id"] = 4
            writes += [("THCON_SEC0_REG4_Base_cntx5_address", TTLLK_BASES[1]),
                       ("THCON_SEC0_REG2_Disable_zero_compress_cntx5", 1)]  # fmt: skip
        elif case == "Ovrd_data_format":  # the context's formats override the descriptor's
            writes += [("THCON_SEC0_REG2_Ovrd_data_format", 1),
                       ("THCON_SEC0_REG7_Unpack_data_format_cntx1", BF16),
                       ("THCON_SEC0_REG7_Unpack_out_data_format_cntx1", BF16)]  # fmt: skip
        elif case == "Dst":  # Unpack_if_sel_cntx1: into Dst at Dest_cntx1 plus the ADC's address
            writes.append(("THCON_SEC0_REG2_Unpack_if_sel_cntx1", 1))

    result, problems = compare_unpacr(fields, 0, 5000, 31, adjust, tame=True)
    assert result.native_cycles == UNPACK.address_cycles
    assert problems == []
    if case == "context counter":
        assert TILES[0].coprocessor.unpackers.context_counter[0, 0] == 2  # context (0 + 1), advanced


def unpacker0_fetching(state: dict[str, np.ndarray], unit: int = 0) -> None:
    """Unpacker 0 (or ``unit``) fetches 32 cycles' worth at x4 (4 * UNPACK.l1_bytes_per_cycle bytes a
    cycle) from cycle 4990 to 5022."""
    left = 32 * (UNPACK.l1_bytes_per_cycle << 2)
    for name, value in (("anchor", 4990), ("left", left), ("want", 2), ("shared_until", 4990),
                        ("shared_speed", 2), ("end", 4990 + 32)):  # fmt: skip
        state[f"unpackers.{name}"][unit] = value


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


def _then(adjust: Callable[[list, dict], None], *writes: tuple[str, int]) -> Callable[[list, dict], None]:
    return lambda w, s: (adjust(w, s), w.extend(writes))


DEFERS = {
    "compressed input": (operands(), _set([], "THCON_SEC0_REG0_TileDescriptor", BF16 | 1024 << 16 | 1 << 32)),
    "BFP8 input into BF16": (operands(), _set([], "THCON_SEC0_REG0_TileDescriptor", BFP8 | 1 << 4 | 1 << 32)),
    "RowSearch": (operands(row_search=1), eltwise),
    "srcb_bcast": (operands(srcb_bcast=1), eltwise),
    "an L1 read beyond L1": (operands(), _set([], "THCON_SEC0_REG3_Base_address", 0x17FFE)),
    "a SrcA row beyond 15": (operands(), _set([], "UNP0_ADDR_BASE_REG_1_Base", 2 * 20 * 16)),
    "upsampling": (operands(), _set([], "THCON_SEC0_REG2_Upsample_rate", 1)),
    "FP32 into SrcA": (
        operands(),
        _then(
            eltwise,
            ("THCON_SEC0_REG0_TileDescriptor", FP32 | 1 << 4 | 1 << 32),
            ("THCON_SEC0_REG2_Out_data_format", FP32),
        ),
    ),
    "a context counter with a non-log2 wrap": (
        operands(cfg_context_cnt_inc=1),
        _set([], "THCON_SEC0_REG2_Context_count_non_log2_en", 1),
    ),
    "FlushCache with an ADC increment": (operands(search_cache_flush=1, addr_mode=1), eltwise),
    # MultiContextMode and block-float input where Python raises
    "MultiContextMode with ContextADC 3": (ttllk_word(0) | {"addr_cnt_context_id": 3}, ttllk()),
    "MultiContextMode: unpacker 1 in context 2": (ttllk_word(1) | {"cfg_context_id": 1}, ttllk()),
    "MultiContextMode: a compressed context": (
        ttllk_word(0),
        _then(ttllk(), ("THCON_SEC0_REG2_Disable_zero_compress_cntx1", 0)),
    ),
    "MultiContextMode: the counter advancing with a non-log2 wrap": (
        ttllk_word(0) | {"auto_inc_context_id": 1},
        _then(ttllk(), ("THCON_SEC0_REG2_Context_count_non_log2_en", 1)),
    ),
    "a BFP8a datum beyond FP16's exponents": (
        ttllk_word(0),
        _then(
            ttllk(BFP8A, BFP8A),
            ("THCON_SEC0_REG2_Force_shared_exp", 1),
            ("UNP0_FORCED_SHARED_EXP_shared_exp", 40),
        ),
    ),
    "a BFP8 exponent read beyond L1": (  # the datums past the FIFO limit wrap back into L1
        ttllk_word(0),
        _then(
            ttllk(BFP8, BFP8),
            ("THCON_SEC0_REG3_Base_cntx1_address", 0x17FFF),
            ("THCON_SEC0_REG2_Unpack_limit_address", 0x18003),
            ("THCON_SEC0_REG2_Unpack_fifo_size", 0x10000),
        ),
    ),
    "BFP4 in Tileize_mode (Blackhole: undefined)": (
        ttllk_word(0),
        _then(ttllk(BFP4, BFP4), ("THCON_SEC0_REG2_Tileize_mode", 1)),
    ),
    "FP8 input (Blackhole: no model)": (ttllk_word(0), ttllk(FP8, FP8)),
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
    "the bank not the unpackers'": (
        operands(),
        lambda w, s: (
            _state("regs.src_client", (0, 0), SrcClient.MATRIX_UNIT)(w, s),
            s["regs.unpacker_bank"].fill(0),
        ),
    ),
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
