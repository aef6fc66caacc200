"""Wormhole's UNPACR in the native engine, in lockstep with the Python reference engine.

Wormhole's UNPACR is Blackhole's functional model with the WormholeB0 page's readings
(unpack/wormhole.py: 16 datums an input row in Tileize_mode for every format, no
Context_count_non_log2_en, Dst without remap or swizzle; bit 5 is rareb_en). Its library runs it in C
(unpack.c over Wormhole's configuration layout and readings); the cases unpack.c defers on Blackhole
(compressed, BFP and FP8 input, MultiContextMode, upsampling, RowSearch...) are Python's here too.

Random UNPACR programs on the unpacker pipe (now and then from another pipe too) run from random
unpacker state on both engines and are compared after every cycle (native/lockstep.py): the
configuration (formats, tile descriptor, addresses, strides, FIFO, Tileize / Haloize, Dst or Src
output, throttle, context counts), the ADCs, L1 contents, the Src banks and who owns them, Dst. Most
UNPACRs must really run in C.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_native_unpack import FORMAT_PAIRS, L1_BASE, WINDOW
from wormhole_lockstep import pushed

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.tensix import native
from tensixsim.tensix.formats import BF16, FP16, FP32, INT16, INT32, TF32
from tensixsim.tensix.frontend.capture import PushedInstruction
from tensixsim.tensix.native import gen_fields
from tensixsim.tensix.native.lockstep import first_difference
from tensixsim.tensix.regs import SrcClient

WH = isa_for("wormhole")
pytestmark = pytest.mark.skipif(
    not native.available("wormhole"), reason="no C compiler: the native engine is absent"
)
LOCKSTEP = settings(
    max_examples=max(10, settings.default.max_examples * 6 // 10),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_the_library_runs_wormholes_unpacr():
    assert "UNPACR" in gen_fields.native_instructions("wormhole")


@st.composite
def unpacr_words(draw: st.DrawFn, wild: bool) -> int:
    """An UNPACR of either unpacker: the regular mode mostly (a Src flip and AddrMod now and then), the
    IncrementContextCounter and FlushCache forms sometimes; ``wild``: any operand."""
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
            fields["rareb_en"] = draw(st.sampled_from([0] * 19 + [1]))
            fields["last"] = draw(st.integers(0, 1))
    return WH.encode("UNPACR", **fields)


@st.composite
def programs(draw: st.DrawFn):
    wild = draw(st.integers(0, 9)) == 0
    entries = pushed(draw, unpacr_words(wild), [(0,), (0,), (0, 1)], 8, [0, 1, 4, 40])
    return entries, draw(st.integers(0, 2**32 - 1))


def prepare(seed: int):
    def setup(tile: Tile) -> None:
        rng = np.random.default_rng(seed)
        copro = tile.coprocessor
        config, regs, adc, unpackers = copro.config, copro.regs, copro.adc, copro.unpackers

        def chance(p: float) -> bool:
            return bool(rng.random() < p)

        for unit in (0, 1):
            in_fmt, out_fmt = FORMAT_PAIRS[rng.integers(len(FORMAT_PAIRS))]
            x_dim = int(rng.choice([16, 64, 256, 1024])) if chance(0.8) else int(rng.integers(1, 2000))
            desc = (
                in_fmt
                | int(chance(0.97)) << 4  # IsUncompressed
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
            sec("REG2_Upsample_rate", 1 if chance(0.03) else 0)
            sec("REG2_Unpack_Src_Reg_Set_Upd", int(chance(0.5)))
            sec("REG2_Context_count", int(rng.integers(0, 4)))
            for i in range(3):
                sec(f"REG2_Shift_amount_cntx{i}", int(rng.choice([0, 0, 0, 1, 4, 8])))
            base = 0xFF if chance(0.9) else int(rng.choice([0x16DF0, 0x100]))  # near L1's end: faults
            sec("REG3_Base_address", base)
            sec("REG7_Offset_address", int(rng.integers(0, 8)) if chance(0.3) else 0)
            limit, fifo = (0x1FFFF, 0) if chance(0.8) else (0x180, 0x40)
            sec("REG2_Unpack_limit_address", limit)
            sec("REG2_Unpack_fifo_size", fifo)
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
        unpackers.context_counter[:] = rng.integers(0, 8, (2, 3)).astype(np.uint8)
        data = np.random.default_rng(seed ^ 0x5EED)
        tile.l1[L1_BASE : L1_BASE + WINDOW] = data.integers(0, 256, WINDOW, dtype=np.uint8)
        tile.l1[-WINDOW:] = data.integers(0, 256, WINDOW, dtype=np.uint8)

    return setup


@LOCKSTEP
@given(programs())
def test_unpacr_runs_natively_as_in_python_on_wormhole(program):
    entries, seed = program
    assert first_difference(prepare(seed), entries, 400, arch="wormhole") is None


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
    assert first_difference(setup, entries, 200, arch="wormhole") is None
    tile = Tile("wormhole", engine="native")
    setup(tile)
    for pipe, entry in entries:
        tile.queues[pipe].entries.append(entry)
    tile.backend.advance_to(200)
    assert tile.backend.pipes[0].issued == 2
    assert int(tile.backend.native.out[native.OUT_NATIVE]) == 2
