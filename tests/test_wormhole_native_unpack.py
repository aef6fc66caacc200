"""Wormhole's UNPACR in the native engine, in lockstep with the Python reference engine.

Wormhole's UNPACR is Blackhole's functional model with the WormholeB0 page's readings
(unpack/wormhole.py: 16 datums an input row in Tileize_mode for every format, sub-byte datums allowed
there, FP8 (e5m2) input, Upsample_rate 1, no Context_count_non_log2_en, Dst without remap or swizzle;
bit 5 is rareb_en). Its library runs it in C (unpack.c over Wormhole's configuration layout and
readings), MultiContextMode and block-float input included; the cases unpack.c defers on Blackhole
for Python's errors (compressed input, RowSearch, the other upsampling rates...) are Python's here too.

Random UNPACR programs on the unpacker pipe (now and then from another pipe too) run from random
unpacker state on both engines and are compared after every cycle (native/lockstep.py): the
configuration (formats, every block-float one, exponent sections or a forced shared exponent, tile
descriptor, addresses, strides, FIFO limits, Tileize / Haloize, upsampling, Dst or Src output,
throttle, every context's fields, CfgContextOffset, context counts), the ADCs, L1 contents, the Src
banks and who owns them, Dst. Half the programs start from a kernel's sort of state that Python does
not raise for, so they run long. The UNPACRs that complete must nearly all run in C, and tt-llk's
UNPACRs (MultiContextMode) of BF16, block-float and FP8 tiles all.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_native_unpack import BFP_FORMATS, FIFOS, FORMAT_PAIRS, L1_BASE, SHIFTS, TTLLK_BASES, WINDOW
from wormhole_lockstep import all_in_c, pushed

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.formats import BF16, BFP2, BFP4A, BFP8, FP8, FP16, FP32, INT8, INT16, INT32, TF32
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native import gen_fields
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.regs import SrcClient
from tensixsim.tensix.unpack.unit import _base_field, _offset_field

WH = isa_for("wormhole")
pytestmark = pytest.mark.skipif(
    not native.available("wormhole"), reason="no C compiler: the native engine is absent"
)
# The share of the random programs' completed UNPACRs (an error ends a program) that must have run in C:
# the rest defer although Python completes them (another pipe's fetch slowed down).
MIN_NATIVE_SHARE = 0.9
LOCKSTEP = settings(
    max_examples=max(10, settings.default.max_examples * 6 // 10),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_the_library_runs_wormholes_unpacr():
    assert "UNPACR" in gen_fields.native_instructions("wormhole")


@st.composite
def unpacr_words(draw: st.DrawFn, wild: bool, clean: bool = False) -> int:
    """An UNPACR of either unpacker: the regular mode mostly (a Src flip and AddrMod now and then), the
    IncrementContextCounter and FlushCache forms sometimes; ``wild``: any operand; ``clean``: none of
    the regular mode's operands Python raises for (with :func:`prepare`'s clean state)."""
    spec = WH.by_name["UNPACR"]
    if wild:
        fields = {f.name: draw(st.integers(0, (1 << f.width) - 1)) for f in spec.fields}
    else:
        fields = {f.name: 0 for f in spec.fields}
        fields["unpack_block_selection"] = draw(st.integers(0, 1))
        form = draw(st.sampled_from(["regular"] * 6 + ["increment", "flush"]))
        if form == "increment":
            fields["cfg_context_cnt_inc"] = 1
        elif form == "flush":
            fields["search_cache_flush"] = 1
        else:
            fields["set_dat_valid"] = draw(st.sampled_from([0, 0, 1]))
            fields["addr_mode"] = draw(st.sampled_from([0, 0, 0, 1, 5, 0x40]))
            fields["zero_write2"] = draw(st.sampled_from([0] * 9 + [1]))
            fields["rareb_en"] = 0 if clean else draw(st.sampled_from([0] * 19 + [1]))
            fields["last"] = draw(st.integers(0, 1))
            # MultiContextMode (tt-llk's every UNPACR): ContextNumber or the counter, ContextADC (3:
            # undefined); unpacker 1 has contexts 0 and 1 only
            fields["ovrd_thread_id"] = draw(st.integers(0, 1))
            unit1 = clean and fields["unpack_block_selection"] == 1
            fields["cfg_context_id"] = draw(st.sampled_from([0, 1] if unit1 else [0, 0, 1, 2, 5, 1, 0]))
            fields["auto_inc_context_id"] = draw(st.sampled_from([0, 0, 1]))
            fields["addr_cnt_context_id"] = draw(
                st.sampled_from([0, 0, 1, 2, 0] if clean else [0, 0, 1, 3, 2, 0])
            )
    return WH.encode("UNPACR", **fields)


@st.composite
def programs(draw: st.DrawFn):
    clean = draw(st.booleans())
    wild = not clean and draw(st.integers(0, 9)) == 0
    entries = pushed(draw, unpacr_words(wild, clean), [(0,), (0,), (0, 1)], 8, [0, 1, 4, 40])
    return entries, draw(st.integers(0, 2**32 - 1)), clean


# (InDataFormat, OutDataFormat) defined into SrcA, SrcB and Dst alike (prepare's clean state).
CLEAN_PAIRS = [(BF16, BF16), (FP16, FP16), (FP32, BF16), (FP32, FP16), (FP32, TF32), (INT8, INT8),
               (INT16, INT16), (FP8, FP8)] + [(f, f) for f in BFP_FORMATS] * 2  # fmt: skip


def prepare(seed: int, clean: bool = False):
    """Random unpacker state from ``seed``: any (errors of every kind drawn now and then), or ``clean``:
    a kernel's sort of state, formats defined everywhere, addresses in the drawn L1 window and in
    range of SrcA (through SetOvrdWithAddr), no column shift, Haloize_mode or Tileize_mode, unpacker 1
    kept to contexts 0 and 1, so that programs run long."""

    def setup(tile: Tile) -> None:
        rng = np.random.default_rng(seed)
        copro = tile.coprocessor
        config, regs, adc, unpackers = copro.config, copro.regs, copro.adc, copro.unpackers

        def chance(p: float) -> bool:
            return bool(rng.random() < p)

        def x_dim_choice() -> int:
            return int(rng.choice([16, 64, 256, 1024])) if chance(0.8) else int(rng.integers(0, 2000))

        def base() -> int:  # in the drawn window (BASES' sense), or near L1's end: faults
            return (
                int(rng.choice([0xFF, 0xFF, 0x10F, 0x13F]))
                if chance(0.9)
                else int(rng.choice([0x16DF0, 0x100]))
            )

        for unit in (0, 1):
            in_fmt, out_fmt = FORMAT_PAIRS[rng.integers(len(FORMAT_PAIRS))]
            x_dim = x_dim_choice()
            desc = (
                in_fmt
                | int(chance(0.97)) << 4  # IsUncompressed
                | int(chance(0.3)) << 5  # NoBFPExpSection
                | x_dim << 16
                | int(rng.integers(0, 3)) << 32  # YDim
                | int(rng.integers(0, 3)) << 48  # ZDim
                | int(rng.integers(0, 2)) << 64  # WDim
            )

            def sec(name: str, value: int, unit: int = unit) -> None:
                config.write_field(f"THCON_SEC{unit}_{name}", 0, value)

            sec("REG0_TileDescriptor", desc)
            sec("REG2_Out_data_format", out_fmt)
            sec("REG2_Throttle_mode", int(rng.integers(0, 4)))
            sec("REG2_Tileize_mode", int(chance(0.15)))
            sec("REG2_Haloize_mode", int(chance(0.1)))
            sec("REG2_Unpack_If_Sel", int(chance(0.3)))
            sec("REG2_Upsample_rate", int(rng.choice([1, 1, 2]) if chance(0.1) else 0))  # Wormhole models 1
            sec("REG2_Upsample_and_interleave", int(chance(0.5)))
            sec("REG2_Unpack_Src_Reg_Set_Upd", int(chance(0.5)))
            sec("REG2_Context_count", int(rng.integers(0, 4)))
            for i in range(4):
                sec(f"REG2_Shift_amount_cntx{i}", int(rng.choice(SHIFTS)))
            sec("REG3_Base_address", base())
            sec("REG7_Offset_address", int(rng.integers(0, 8)) if chance(0.3) else 0)
            limit, fifo = FIFOS[rng.integers(len(FIFOS))]
            sec("REG2_Unpack_limit_address", limit)
            sec("REG2_Unpack_fifo_size", fifo)
            # MultiContextMode's per-context fields, every context
            sec("REG2_Ovrd_data_format", int(chance(0.4)))
            for c in range(8):
                sec(f"REG2_Disable_zero_compress_cntx{c}", int(chance(0.97)))
                sec(f"REG2_Unpack_if_sel_cntx{c}", int(chance(0.3)))
                ctx_in, ctx_out = FORMAT_PAIRS[rng.integers(len(FORMAT_PAIRS))]
                sec(f"REG7_Unpack_data_format_cntx{c}", ctx_in)
                sec(f"REG7_Unpack_out_data_format_cntx{c}", ctx_out)
                if c:
                    sec(_base_field(c), base())
                if 0 < c < 4:
                    sec(_offset_field(c), int(rng.integers(0, 8)) if chance(0.3) else 0)
                if c < 4:
                    sec(f"REG5_Tile_x_dim_cntx{c}", x_dim_choice())
                    dest = int(rng.choice([0, 64, 128])) if chance(0.8) else int(rng.integers(0, 1 << 16))
                    sec(f"REG5_Dest_cntx{c}_address", dest)
            config.write_field(f"UNP{unit}_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 0, int(chance(0.5)))
            # Block-float exponents: from L1, or forced (often small enough for BFP*a's five bits)
            sec("REG2_Force_shared_exp", int(chance(0.25)))
            shared = int(rng.integers(6, 32)) if chance(0.6) else int(rng.integers(0, 256))
            config.write_field(f"UNP{unit}_FORCED_SHARED_EXP_shared_exp", 0, shared)
            wide = out_fmt in (FP32, TF32, INT32)
            datum_bytes = 4 if wide else 2 if out_fmt in (BF16, FP16, INT16) else 1
            out_base = 64 * datum_bytes if chance(0.8) else int(rng.integers(0, 4096))
            config.write_field(f"UNP{unit}_ADDR_BASE_REG_1_Base", 0, out_base)
            config.write_field(
                f"UNP{unit}_ADDR_CTRL_XY_REG_1_Ystride", 0, int(rng.choice([0, 16, 32, 64, 6]))
            )
            config.write_field(f"UNP{unit}_ADDR_CTRL_ZW_REG_1_Zstride", 0, int(rng.choice([0, 64, 256])))
            config.write_field(f"UNP{unit}_ADDR_CTRL_ZW_REG_1_Wstride", 0, int(rng.choice([0, 1024])))
            config.write_field(f"ALU_FORMAT_SPEC_REG0_Src{'AB'[unit]}Unsigned", 0, int(chance(0.5)))
        for pipe in range(3):
            config.write_thread_field("SRCA_SET_SetOvrdWithAddr", pipe, int(chance(0.3)))
            config.write_thread_field("SRCA_SET_Base", pipe, int(rng.integers(0, 4)))
            config.write_thread_field("SRCB_SET_Base", pipe, int(rng.integers(0, 4)))
            for unit in (0, 1):
                offset = int(rng.choice([0, 0, 1])) if chance(0.9) else int(rng.integers(0, 16))
                config.write_thread_field(f"UNPACK_MISC_CFG_CfgContextOffset_{unit}", pipe, offset)

        adc.value[...] = rng.integers(0, 4, adc.value.shape)
        for thread, unit in np.ndindex(3, 2):
            x0 = int(rng.choice([0, 0, 0, 16, 5])) if chance(0.9) else int(rng.integers(0, 300))
            count = int(rng.choice([256, 256, 16, 64, 1024, 1])) if chance(0.9) else int(rng.integers(0, 300))
            adc.value[thread, unit, 0, 0] = x0
            adc.value[thread, unit, 1, 0] = max(x0 + count - 1, 0)
            adc.value[thread, unit, :, 1:] = rng.integers(0, 3, (2, 3)) if chance(0.3) else 0

        regs.srca[:] = rng.integers(0, 1 << 19, regs.srca.shape, dtype=np.uint32)
        regs.srcb[:] = rng.integers(0, 1 << 19, regs.srcb.shape, dtype=np.uint32)
        bank = rng.integers(0, 2, 2).astype(np.uint8)
        regs.unpacker_bank[:], regs.matrix_bank[:] = bank, 1 - bank
        client = np.full((2, 2), int(SrcClient.MATRIX_UNIT), np.uint8)
        for unit in (0, 1):
            if chance(0.9):
                client[unit, bank[unit]] = SrcClient.UNPACKERS
        regs.src_client[:] = client
        rows = rng.choice([0, 0, 16, 32, 48], (2, 3)) if chance(0.9) else rng.integers(0, 80, (2, 3))
        regs.unpacker_src_row[:] = rows.astype(np.uint32)
        regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape, dtype=np.uint32).astype(np.uint16)
        regs.dst_row_valid[:] = rng.random(regs.dst_row_valid.shape) < (0.7 if chance(0.5) else 1.0)
        unpackers.context_counter[:] = rng.integers(0, 2 if chance(0.7) else 8, (2, 3)).astype(np.uint8)
        data = np.random.default_rng(seed ^ 0x5EED)
        tame = clean or data.random() < 0.5  # test_native_unpack.load_state's two kinds of bytes
        low, high = (6, 32) if tame else (0, 256)
        tile.l1[L1_BASE : L1_BASE + WINDOW] = data.integers(low, high, WINDOW, dtype=np.uint8)
        tile.l1[-WINDOW:] = data.integers(0, 256, WINDOW, dtype=np.uint8)
        if clean:
            make_clean(tile, rng)

    return setup


def make_clean(tile: Tile, rng: np.random.Generator) -> None:
    """Overwrite what :func:`prepare` drew that Python raises for (its docstring's clean state)."""
    copro = tile.coprocessor
    config, adc = copro.config, copro.adc
    for unit in (0, 1):
        for c in range(9):  # the plain fields (c 8), then each context's
            in_fmt, out_fmt = CLEAN_PAIRS[rng.integers(len(CLEAN_PAIRS))]
            if c == 8:
                old = config.read_field(f"THCON_SEC{unit}_REG0_TileDescriptor", 0)
                config.write_field(f"THCON_SEC{unit}_REG0_TileDescriptor", 0, (old & ~0x1F) | 1 << 4 | in_fmt)
                config.write_field(f"THCON_SEC{unit}_REG2_Out_data_format", 0, out_fmt)
                continue
            config.write_field(f"THCON_SEC{unit}_REG7_Unpack_data_format_cntx{c}", 0, in_fmt)
            config.write_field(f"THCON_SEC{unit}_REG7_Unpack_out_data_format_cntx{c}", 0, out_fmt)
            config.write_field(f"THCON_SEC{unit}_REG2_Disable_zero_compress_cntx{c}", 0, 1)
            config.write_field(f"THCON_SEC{unit}_{_base_field(c)}", 0, int(rng.choice(TTLLK_BASES)))
            if c < 4:
                config.write_field(f"THCON_SEC{unit}_REG5_Dest_cntx{c}_address", 0, int(rng.choice([0, 64])))
                config.write_field(f"THCON_SEC{unit}_REG5_Tile_x_dim_cntx{c}", 0, int(rng.choice([16, 256])))
        for name, value in (("Tileize_mode", 0), ("Haloize_mode", 0),
                            ("Upsample_rate", int(rng.integers(0, 2))),
                            ("Context_count", 1 if unit else int(rng.integers(0, 4))),
                            *((f"Shift_amount_cntx{c}", 0) for c in range(4))):  # fmt: skip
            config.write_field(f"THCON_SEC{unit}_REG2_{name}", 0, value)
        for name in (
            "ADDR_CTRL_XY_REG_1_Ystride",
            "ADDR_CTRL_ZW_REG_1_Zstride",
            "ADDR_CTRL_ZW_REG_1_Wstride",
        ):
            config.write_field(f"UNP{unit}_{name}", 0, 0)
        config.write_field(f"UNP{unit}_ADDR_BASE_REG_1_Base", 0, 64 * int(rng.choice([1, 2, 4])))
    for pipe in range(3):
        config.write_thread_field("SRCA_SET_SetOvrdWithAddr", pipe, 1)
        config.write_thread_field("UNPACK_MISC_CFG_CfgContextOffset_0", pipe, int(rng.integers(0, 2)))
        config.write_thread_field("UNPACK_MISC_CFG_CfgContextOffset_1", pipe, 0)
    adc.value[...] = 0
    for thread, unit in np.ndindex(3, 2):
        adc.value[thread, unit, 1, 0] = int(rng.choice([16, 64, 256])) - 1
    copro.unpackers.context_counter[:] = rng.integers(0, 2, (2, 3)).astype(np.uint8)


def test_unpacr_runs_natively_as_in_python_on_wormhole():
    """Random programs in lockstep; over them all, nearly every UNPACR issued (completed) ran in C."""
    issued = ran = 0

    @LOCKSTEP
    @given(programs())
    def check(program):
        nonlocal issued, ran
        entries, seed, clean = program
        tile = Tile("wormhole", engine="native")
        assert first_difference(prepare(seed, clean), entries, 400, native=tile, arch="wormhole") is None
        issued += sum(pipe.issued for pipe in tile.backend.pipes)
        ran += int(tile.backend.native.out[native.OUT_NATIVE])

    check()
    assert ran >= MIN_NATIVE_SHARE * issued, (ran, issued)


def test_most_unpacrs_run_in_c_on_wormhole():
    """Over a fixed batch of eltwise-like UNPACRs (BF16 tiles into SrcA and SrcB, banks handed over),
    every one is executed by the C handler, with the Python engine's state and cycles."""
    zero = {f.name: 0 for f in WH.by_name["UNPACR"].fields}
    words = [
        WH.encode("UNPACR", **(zero | {"unpack_block_selection": u, "set_dat_valid": 1})) for u in (0, 1)
    ]

    def setup(tile: Tile) -> None:
        prepare(5)(tile)
        copro = tile.coprocessor
        for unit in (0, 1):
            desc = BF16 | 1 << 4 | 256 << 16 | 1 << 32 | 1 << 48
            copro.config.write_field(f"THCON_SEC{unit}_REG0_TileDescriptor", 0, desc)
            copro.config.write_field(f"THCON_SEC{unit}_REG2_Out_data_format", 0, BF16)
            for name in ("Tileize_mode", "Haloize_mode", "Upsample_rate", "Unpack_If_Sel"):
                copro.config.write_field(f"THCON_SEC{unit}_REG2_{name}", 0, 0)
            copro.config.write_field(f"THCON_SEC{unit}_REG3_Base_address", 0, 0xFF)
            copro.config.write_field(f"THCON_SEC{unit}_REG2_Unpack_limit_address", 0, 0x1FFFF)
            copro.config.write_field(f"THCON_SEC{unit}_REG2_Unpack_fifo_size", 0, 0)
            copro.config.write_field(f"UNP{unit}_ADDR_BASE_REG_1_Base", 0, 128)
            copro.regs.src_client[unit, copro.regs.unpacker_bank[unit]] = SrcClient.UNPACKERS
            copro.adc.value[0, unit, 0, 0], copro.adc.value[0, unit, 1, 0] = 0, 255
            copro.adc.value[0, unit, :, 1:] = 0
        copro.regs.unpacker_src_row[:] = 0

    entries = [(0, PushedInstruction(w, "trisc0", 4 * i, 60 * i, True)) for i, w in enumerate(words)]
    all_in_c(setup, entries, 200)


def ttllk_setup(fmt: int, context: int):
    """tt-llk's unpack configuration on Wormhole (configure_unpack_AB, as test_native_unpack.ttllk has it
    for Blackhole) for tiles of ``fmt``, pipe 0's CfgContextOffset ``context``, both banks the
    unpackers', the L1 window's bytes small enough that BFP*a's datums are defined."""
    out_bytes = 2 if fmt in (BF16, FP16) else 1

    def setup(tile: Tile) -> None:
        prepare(5, clean=True)(tile)
        copro = tile.coprocessor
        config = copro.config
        for unit in (0, 1):
            desc = fmt | 1 << 4 | (0 if unit == 0 else 256) << 16 | 1 << 32 | 4 << 48
            config.write_field(f"THCON_SEC{unit}_REG0_TileDescriptor", 0, desc)
            for name, value in (("Out_data_format", fmt), ("Throttle_mode", 2), ("Upsample_rate", 0),
                                ("Ovrd_data_format", 0), ("Force_shared_exp", 0),
                                ("Unpack_limit_address", 0x1FFFF), ("Unpack_fifo_size", 0),
                                *((f"Unpack_if_sel_cntx{c}", 0) for c in range(8))):  # fmt: skip
                config.write_field(f"THCON_SEC{unit}_REG2_{name}", 0, value)
            config.write_field(f"THCON_SEC{unit}_REG3_Base_address", 0, TTLLK_BASES[0])
            config.write_field(f"THCON_SEC{unit}_REG3_Base_cntx1_address", 0, TTLLK_BASES[1])
            config.write_field(f"THCON_SEC{unit}_REG7_Offset_address", 0, 0)
            config.write_field(f"THCON_SEC{unit}_REG7_Offset_cntx1_address", 0, 0)
            config.write_field(f"UNP{unit}_ADDR_BASE_REG_1_Base", 0, 0)
            config.write_field(f"UNP{unit}_ADDR_CTRL_ZW_REG_1_Zstride", 0, 256 * out_bytes)
            config.write_thread_field(f"UNPACK_MISC_CFG_CfgContextOffset_{unit}", 0, context)
            copro.adc.value[0, unit, 1, 0] = 255
        for c in (0, 1):
            config.write_field(f"THCON_SEC0_REG5_Tile_x_dim_cntx{c}", 0, 256)
            config.write_field(f"THCON_SEC0_REG5_Dest_cntx{c}_address", 0, 64)
        config.write_field("UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 0, 1)
        config.write_thread_field("SRCA_SET_Base", 0, 0)
        config.write_thread_field("SRCB_SET_Base", 0, 0)
        copro.regs.src_client[:] = SrcClient.UNPACKERS
        copro.regs.unpacker_src_row[:] = 0

    return setup


@pytest.mark.parametrize("fmt", [BF16, BFP8, BFP4A, BFP2, FP8])
@pytest.mark.parametrize("context", [0, 1])
def test_ttllks_unpacks_run_in_c_on_wormhole(fmt, context):
    """tt-llk's UNPACRs (MultiContextMode, FlipSrc, the next face by Ch0 Z) of BF16, block-float and
    FP8 (e5m2) tiles: two faces into each Src, every one executed by the C handler, in lockstep."""
    zero = {f.name: 0 for f in WH.by_name["UNPACR"].fields}
    ttllk = {"addr_mode": 1, "ovrd_thread_id": 1, "set_dat_valid": 1, "last": 1}
    words = [WH.encode("UNPACR", **(zero | ttllk | {"unpack_block_selection": u})) for u in (0, 1, 0, 1)]
    setup = ttllk_setup(fmt, context)
    entries = [(0, PushedInstruction(w, "trisc0", 4 * i, 60 * i, True)) for i, w in enumerate(words)]
    all_in_c(setup, entries, 400)
