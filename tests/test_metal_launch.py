"""Slow-dispatch launches through the real tt-metal firmware: a DRAM copy, and add-one on five cores.

The copy kernel (tensixsim/sdk/examples/metal/copy.c) uses the firmware's runtime-argument pointer
and the DRAM bank tables the host wrote before boot; the expected result is the input buffer itself.

Add-one (tensixsim/metal/examples.py): reader on NCRISC, unpack / math / pack on the TRISCs, writer
on BRISC, meeting at the circular buffers the firmware sets up from the launch message. The
expected bits come from :func:`add_one_reference`, written from the documented arithmetic, not
from the emulator's code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensixsim import Tile
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.metal.examples import add_one_program, build_add_one
from tensixsim.metal.firmware import boot, load_firmware
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import KernelOverrun, LaunchTimeout, Program, launch_program, layout
from tensixsim.noc import NoEndpoint

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tensixsim" / "sdk" / "examples" / "metal"
BUILD = ROOT / "build" / "metal"
TILE_BYTES = 32 * 32 * 2  # one bf16 tile
L1_BUFFER = 0x80000


@pytest.fixture
def firmware(blackhole_set):
    """Each firmware generation of conftest.FIRMWARE_VERSIONS."""
    return blackhole_set


def booted(firmware):
    tile = Tile("blackhole")
    loaded = load_firmware(tile, firmware)
    boot(tile, loaded)
    return tile, loaded


def copy_kernel(loaded, core: str = "brisc", offset: int = 0) -> Path:
    return build_kernel(KERNELS / "copy.c", core, loaded, layout(loaded).text_start + offset, BUILD)


@pytest.mark.parametrize("noc", [0, 1])
def test_copy_64_bf16_tiles_through_dram(firmware, noc):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    rng = np.random.default_rng(noc)
    matrix = rng.integers(0, 1 << 16, size=(8 * 32, 8 * 32), dtype=np.uint16)  # 64 tiles
    source = InterleavedBuffer(0x100000, TILE_BYTES, 64, banks)
    target = InterleavedBuffer(0x400000, TILE_BYTES, 64, banks)
    source.write(tile.noc.dram, tilize(matrix))
    program = Program(
        kernels={"brisc": copy_kernel(loaded)},
        runtime_args={"brisc": [source.base, target.base, 64, TILE_BYTES, L1_BUFFER, noc]},
    )
    state = launch_program(tile, loaded, program)
    assert state.waits_for_go(loaded.mailbox)
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 8 * 32, 8 * 32)
    assert (result == matrix).all()


def test_copy_on_ncrisc(firmware):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("ncrisc").array_length("dram_bank_to_noc_xy") // 2
    data = np.arange(4 * TILE_BYTES // 2, dtype=np.uint16)
    source = InterleavedBuffer(0x200000, TILE_BYTES, 4, banks)
    target = InterleavedBuffer(0x300000, TILE_BYTES, 4, banks)
    source.write(tile.noc.dram, data)
    program = Program(
        kernels={"ncrisc": copy_kernel(loaded, "ncrisc")},
        runtime_args={"ncrisc": [source.base, target.base, 4, TILE_BYTES, L1_BUFFER, 0]},
    )
    launch_program(tile, loaded, program)
    assert target.read(tile.noc.dram) == data.tobytes()


def test_noc_request_to_a_coordinate_outside_the_grid_is_named(firmware):
    tile, loaded = booted(firmware)
    # Corrupt BRISC's copy of the bank table: bank 0 now points outside the 17x12 grid.
    symbols = loaded.images["brisc"].symbols
    table = symbols["dram_bank_to_noc_xy"] - tile.arch.local_ram_base
    tile.local_ram["brisc"][table : table + 2] = np.frombuffer((30 | 30 << 6).to_bytes(2, "little"), np.uint8)
    program = Program(
        kernels={"brisc": copy_kernel(loaded)},
        runtime_args={"brisc": [0x100000, 0x400000, 1, TILE_BYTES, L1_BUFFER, 0]},
    )
    with pytest.raises(NoEndpoint, match=r"\(30, 30\)") as info:
        launch_program(tile, loaded, program)
    assert info.value.core == "brisc"


def test_a_launch_that_never_reports_done_is_a_timeout(firmware):
    tile, loaded = booted(firmware)
    # The kernel polls an L1 word that nothing ever writes.
    spin = KERNELS / "spin.c"
    elf = build_kernel(spin, "brisc", loaded, layout(loaded).text_start, BUILD)
    with pytest.raises(LaunchTimeout):
        launch_program(tile, loaded, Program(kernels={"brisc": elf}), max_cycles=2_000_000)


def test_a_kernel_outside_its_slot_is_refused(firmware):
    tile, loaded = booted(firmware)
    where = layout(loaded)
    elf = build_kernel(KERNELS / "copy.c", "brisc", loaded, where.text_end - 64, BUILD)
    before = tile.l1.copy()
    with pytest.raises(KernelOverrun, match="outside the kernel slot"):
        launch_program(tile, loaded, Program(kernels={"brisc": elf}))
    assert (tile.l1 == before).all()  # nothing written


# ---------------------------------------------------------------------------- add-one
def add_one_reference(bits: np.ndarray) -> np.ndarray:
    """bf16(x + 1) as the tile computes it, from the documented steps, over bf16 bit patterns.

    The unpacker and the matrix unit read a bf16 datum whose exponent field is zero as +0.0; ELWADD
    is one binary32 addition (round to nearest even) whose result, if its exponent field is zero, is
    +0.0; the packer rounds the binary32 Dst value to bf16 to nearest, ties away from zero (a
    magnitude carry into the exponent field is the next binade, or infinity). NaN inputs are not
    covered (the documentation does not say which NaN the matrix unit produces).
    """
    x = bits.astype(np.uint32) << 16
    x[(x & 0x7F800000) == 0] = 0
    assert not ((x & 0x7F800000) == 0x7F800000).__and__((x & 0x007FFFFF) != 0).any(), "NaN input"
    total = (x.view(np.float32) + np.float32(1.0)).view(np.uint32)
    total[(total & 0x7F800000) == 0] = 0
    sign, magnitude = total & 0x80000000, total & 0x7FFFFFFF
    rounded = sign | (((magnitude + 0x8000) >> 16) << 16)
    return (rounded >> 16).astype(np.uint16)


def every_non_nan_bf16(rows: int, cols: int, seed: int) -> np.ndarray:
    """Every bf16 bit pattern but the NaNs, shuffled, the rest filled with values whose x + 1 is a
    bf16 tie (x = 2**k + 2**(k-7) .. needs the packer's ties-away rounding)."""
    patterns = np.arange(1 << 16, dtype=np.uint32)
    exponent, mantissa = (patterns >> 7) & 0xFF, patterns & 0x7F
    patterns = patterns[~((exponent == 0xFF) & (mantissa != 0))].astype(np.uint16)
    rng = np.random.default_rng(seed)
    # x in [2**8, 2**9) with an even last mantissa bit: x + 1 lies exactly halfway between two bf16s.
    ties = (0x4380 | (rng.integers(0, 64, rows * cols - len(patterns)) * 2)).astype(np.uint16)
    data = np.concatenate([patterns, ties])
    return rng.permutation(data).reshape(rows, cols)


def test_add_one_reference_rounds_ties_away_and_flushes():
    one = 0x3F80
    cases = {
        0x0000: one, 0x8000: one, 0x0001: one, 0xBF80: 0x0000,  # 0, -0, denormal, -1 + 1 = +0
        0x4380: 0x4381, 0x4382: 0x4383,  # 256 + 1 = 257 rounds away to 258; 260 + 1 -> 262
        0xC380: 0xC37F,  # -256 + 1 = -255 exactly
        0x7F80: 0x7F80, 0xFF80: 0xFF80, 0x7F7F: 0x7F7F,  # infinities, the largest finite value
        0x4B80: 0x4B80,  # 2**24: the 1 is lost in binary32
    }  # fmt: skip
    got = add_one_reference(np.array(list(cases), np.uint16))
    assert [hex(v) for v in got] == [hex(v) for v in cases.values()]


def test_add_one_on_64_bf16_tiles_through_the_firmware(firmware):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    matrix = every_non_nan_bf16(8 * 32, 8 * 32, seed=1)  # 64 tiles
    source = InterleavedBuffer(0x100000, TILE_BYTES, 64, banks)
    target = InterleavedBuffer(0x400000, TILE_BYTES, 64, banks)
    source.write(tile.noc.dram, tilize(matrix))
    program = add_one_program(build_add_one(loaded, BUILD), source.base, target.base, 64)
    state = launch_program(tile, loaded, program)
    assert state.waits_for_go(loaded.mailbox)
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 8 * 32, 8 * 32)
    expected = add_one_reference(matrix)
    wrong = np.flatnonzero(result != expected)
    assert wrong.size == 0, [
        (hex(matrix.flat[i]), hex(result.flat[i]), hex(expected.flat[i])) for i in wrong[:8]
    ]


def test_add_one_takes_the_same_cycles_at_every_quantum_by_default(firmware):
    """The firmware's cores hand off through L1 words (run-state bytes, circular-buffer words):
    ordered by default, every launch runs the same instructions in the same cycles, however short
    the slices are, and no page's first use by a second core came late."""

    def launch_at(quantum: int) -> tuple:
        tile = Tile("blackhole", quantum=quantum)
        loaded = load_firmware(tile, firmware)
        boot(tile, loaded)
        banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
        source = InterleavedBuffer(0x100000, TILE_BYTES, 8, banks)
        target = InterleavedBuffer(0x400000, TILE_BYTES, 8, banks)
        source.write(
            tile.noc.dram, tilize(np.random.default_rng(2).integers(0, 0x7F00, (32, 8 * 32), np.uint16))
        )
        start = tile.cycle
        launch_program(
            tile, loaded, add_one_program(build_add_one(loaded, BUILD), source.base, target.base, 8)
        )
        assert tile.l1_order_late[0] == 0
        cores = tuple((c.time, c.instructions) for c in tile.cores)
        return tile.cycle - start, cores, target.read(tile.noc.dram)

    reference = launch_at(2000)
    for quantum in (13, 50, 300):
        assert launch_at(quantum) == reference, quantum


def test_add_one_without_its_output_buffer_never_reports_done(firmware):
    tile, loaded = booted(firmware)
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    source = InterleavedBuffer(0x100000, TILE_BYTES, 4, banks)
    source.write(tile.noc.dram, bytes(source.size))
    program = add_one_program(build_add_one(loaded, BUILD), source.base, 0x400000, 4)
    # No CB 16: the firmware leaves its interface zeroed (no pages), so the packer never finds room.
    program.circular_buffers = [cb for cb in program.circular_buffers if cb.index != 16]
    # TRISC2 waits on CB 16's stream counter forever (parked on it: nothing will ever write it).
    with pytest.raises(LaunchTimeout, match=r"trisc2 pc=0x[0-9a-f]+ waits: polls register 0xffb50020"):
        launch_program(tile, loaded, program, max_cycles=300_000)


def test_a_firmware_whose_cb_interface_differs_from_metal_h_is_refused(firmware, monkeypatch):
    from tensixsim.errors import InvalidProgram
    from tensixsim.metal import kernels

    _, loaded = booted(firmware)
    kernels.check_cb_layout(loaded, "trisc0")  # the real layout passes
    monkeypatch.setitem(kernels.CB_LAYOUT, "tiles_received", (24, 2))
    with pytest.raises(InvalidProgram, match=r"tiles_received at 26 \(2 bytes\), metal.h expects 24"):
        build_kernel(KERNELS / "add1_unpack.c", "trisc0", loaded, layout(loaded).text_start, BUILD)


# ------------------------------------------------------------------------------ what users bring


def _copy_program(tile, loaded, kernel, seed: int, count: int = 4):
    """A copy of ``count`` random tiles through DRAM with ``kernel``: (program, source matrix, target)."""
    banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
    matrix = np.random.default_rng(seed).integers(0, 1 << 16, size=(32, 32 * count), dtype=np.uint16)
    source = InterleavedBuffer(0x100000, TILE_BYTES, count, banks)
    target = InterleavedBuffer(0x400000 + 0x100000 * seed, TILE_BYTES, count, banks)
    source.write(tile.noc.dram, tilize(matrix))
    args = [source.base, target.base, count, TILE_BYTES, L1_BUFFER, 0]
    return Program(kernels={"brisc": kernel}, runtime_args={"brisc": args}), matrix, target


def _copied(tile, matrix, target) -> bool:
    result = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), *matrix.shape)
    return bool((result == matrix).all())


def test_several_launches_in_a_row(firmware):
    tile, loaded = booted(firmware)
    for seed in (1, 2, 3):
        program, matrix, target = _copy_program(tile, loaded, copy_kernel(loaded), seed)
        assert launch_program(tile, loaded, program).waits_for_go(loaded.mailbox)
        assert _copied(tile, matrix, target)


def test_a_kernel_as_a_raw_image_with_its_load_address(firmware):
    from tensixsim.loader.elf import read_elf
    from tensixsim.metal.launch import KernelImage

    tile, loaded = booted(firmware)
    elf = read_elf(copy_kernel(loaded))
    (segment,) = [s for s in elf.segments if s.address >= layout(loaded).text_start]
    image = KernelImage(segment.data + bytes(segment.memsz - len(segment.data)), segment.address, elf.entry)
    program, matrix, target = _copy_program(tile, loaded, image, 1)
    assert launch_program(tile, loaded, program).waits_for_go(loaded.mailbox)
    assert _copied(tile, matrix, target)


def test_a_firmware_set_in_a_flat_folder(firmware, tmp_path):
    from tensixsim.metal.firmware import find_firmware_sets

    for core, path in firmware.elfs.items():
        (tmp_path / f"{core}.elf").symlink_to(path)
    (flat,) = find_firmware_sets(tmp_path)
    assert flat.elfs == {core: tmp_path / f"{core}.elf" for core in firmware.elfs}
    tile, loaded = booted(flat)
    program, matrix, target = _copy_program(tile, loaded, copy_kernel(loaded), 1)
    assert launch_program(tile, loaded, program).waits_for_go(loaded.mailbox)
    assert _copied(tile, matrix, target)


def test_a_launch_message_without_a_field_of_this_generation_is_written_without_it(firmware, monkeypatch):
    """Firmware generations differ in launch_msg_t's members (kernel_text_size is recent): the launch
    writes only the members the firmware's DWARF has, and refuses one that lacks an essential one."""
    from tensixsim.errors import InvalidProgram
    from tensixsim.metal.dwarf import DebugInfo

    real = DebugInfo.has_field
    dropped: set[str] = {"kernel_text_size", "min_remote_cb_start_index"}
    asked: list[str] = []

    def older(self, type_name: str, path: str) -> bool:
        asked.append(path)
        if type_name == "launch_msg_t" and any(f".{name}" in path for name in dropped):
            return False
        return real(self, type_name, path)

    monkeypatch.setattr(DebugInfo, "has_field", older)
    tile, loaded = booted(firmware)
    program, matrix, target = _copy_program(tile, loaded, copy_kernel(loaded), 1)
    assert launch_program(tile, loaded, program).waits_for_go(loaded.mailbox)
    assert _copied(tile, matrix, target)
    assert any("kernel_text_size" in path for path in asked)
    dropped.add("enables")
    with pytest.raises(InvalidProgram, match=r"launch_msg_t has no kernel_config\.enables"):
        launch_program(tile, loaded, _copy_program(tile, loaded, copy_kernel(loaded), 2)[0])


# ------------------------------------------------------- kernels shaped like an earlier generation
FEATURE_DISABLE = 0xFFB12068  # RISCV_DEBUG_REG_DBG_FEATURE_DISABLE (tt-metal's tensix.h)
MARKS = 0x30000  # where these kernels leave what they saw (free L1)
UNUSED_CB = 7  # a circular buffer no kernel of the program configures


def _mailbox(core: str) -> int:
    """The mailbox page reaching ``core`` (tt-llk's mailbox_base[thread + 1] for TRISCn)."""
    from tensixsim.arch.blackhole_registers import MAILBOXES

    return MAILBOXES.base + MAILBOXES.stride * MAILBOXES.cores.index(core)


def _earlier_generation_kernels(loaded, stream: int) -> dict:
    """Raw images (no ELF) for all five cores, each ending in ``ret`` to the firmware.

    NCRISC (the reader) pushes 3 tiles into an unused CB: it adds 3 to the tiles-received register
    of the CB's stream (cb_push_back). TRISC0 opens with the debug-feature store older compute
    kernels start with, waits with ``lhu`` until received and acked differ (cb_wait_front), pops the
    tiles (adds 3 to tiles acked), then asks TRISC1 through the mailboxes and waits for the answer
    (tt-llk's handshake); TRISC2 makes the prologue store too; BRISC leaves a mark.
    """
    received = 0xFFB40000 + stream * 0x1000 + 4 * 10  # the stream's tiles-received register
    acked = 0xFFB40000 + stream * 0x1000 + 4 * 8
    from asm import assemble

    from tensixsim.metal.launch import KernelImage

    sources = {
        "ncrisc": f"li t0, {received}\n lw t1, 0(t0)\n addi t1, t1, 3\n sw t1, 0(t0)\n li a0, 0\n ret",
        "trisc0": f"""
            li t0, {FEATURE_DISABLE}
            li t1, 0x40000
            sw t1, 0(t0)
            lw a0, 0(t0)
            li t0, {received}
        1:  lhu a1, 0(t0)
            lhu t1, {acked - received}(t0)
            beq a1, t1, 1b
            lhu a2, 2(t0)
            addi t1, t1, 3
            sw t1, {acked - received}(t0)
            li t0, {_mailbox("trisc1")}
            li t1, 0x1234
            sw t1, 0(t0)
            lw a3, 0(t0)
            li t2, {MARKS}
            sw a0, 0(t2)
            sw a1, 4(t2)
            sw a2, 8(t2)
            sw a3, 12(t2)
            li a0, 0
            ret""",
        "trisc1": f"""
            li t0, {_mailbox("trisc0")}
        1:  lw t1, 4(t0)
            beqz t1, 1b
            lw a1, 0(t0)
            addi t1, a1, 1
            sw t1, 0(t0)
            li t2, {MARKS + 0x10}
            sw a1, 0(t2)
            li a0, 0
            ret""",
        "trisc2": f"""
            li t0, {FEATURE_DISABLE}
            li t1, 0x40000
            sw t1, 0(t0)
            li t2, {MARKS + 0x14}
            li t1, 0x7A2
            sw t1, 0(t2)
            li a0, 0
            ret""",
        "brisc": f"li t2, {MARKS + 0x18}\n li t1, 0xB0\n sw t1, 0(t2)\n li a0, 0\n ret",
    }
    start = layout(loaded).text_start
    return {
        core: KernelImage(assemble(source), start + 0x400 * i)
        for i, (core, source) in enumerate(sources.items())
    }


def test_earlier_generation_kernels_through_the_launch(firmware):
    tile, loaded = booted(firmware)
    stream = loaded.firmware.debug("trisc0").constant("OPERAND_START_STREAM") + UNUSED_CB
    kernels = _earlier_generation_kernels(loaded, stream)
    for _ in range(2):  # twice: the firmware goes back to waiting between launches
        tile.write(MARKS, bytes(0x20))
        state = launch_program(tile, loaded, Program(kernels=kernels))
        assert state.waits_for_go(loaded.mailbox)
        seen = np.frombuffer(tile.read(MARKS, 0x1C), np.uint32).tolist()
        # 3 again on the second launch: BRISC has TRISC0 zero every CB counter after each run.
        assert seen == [0x40000, 3, 0, 0x1235, 0x1234, 0x7A2, 0xB0]
        assert (tile.streams.read(stream, 10), tile.streams.read(stream, 8)) == (0, 0)
        assert tile.register_access(FEATURE_DISABLE, 0, None) == 0x40000
