"""Real tt-metal firmware (the ``ttnn`` wheel from PyPI) boots on the tile and runs empty launches.

The wheel is downloaded once per machine into ``.cache/ttnn/`` (ignored by git); a failed download
fails these tests. Every address and value checked below comes from the firmware's own DWARF.
"""

from __future__ import annotations

import numpy as np
import pytest
from asm import assemble
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import Deadlock, InvalidProgram, MemoryFault, Tile, Unimplemented
from tensixsim.arch import CORE_NAMES
from tensixsim.metal.firmware import (
    EMPTY_KERNEL,
    ArchitectureMismatch,
    FirmwareSet,
    LoadedFirmware,
    RunState,
    boot,
    find_firmware_set,
    find_firmware_sets,
    launch,
    load_firmware,
    lui_constants,
)
from tensixsim.riscv.core import CoreState
from tensixsim.riscv.cpu import jal

MARKS = 0x30000  # where the test kernels leave their marks (free L1)


def booted(firmware: FirmwareSet) -> tuple[Tile, LoadedFirmware, RunState]:
    tile = Tile("blackhole")
    loaded = load_firmware(tile, firmware)
    return tile, loaded, boot(tile, loaded)


def text_span(loaded: LoadedFirmware, core: str) -> range:
    (segment,) = [s for s in loaded.images[core].segments if s.address < 0x80000000]
    return range(segment.address, segment.address + segment.memsz)


# ---------------------------------------------------------------- finding and checking firmware sets


def test_the_wheel_holds_blackhole_and_wormhole_sets(precompiled):
    arches = {s.arch().name for s in find_firmware_sets(precompiled)}
    assert arches == {"blackhole", "wormhole"}


def test_wormhole_firmware_is_refused_by_a_blackhole_tile(precompiled):
    wormhole = find_firmware_set(precompiled, "wormhole")
    tile = Tile("blackhole")
    reset = tile.control.soft_reset
    with pytest.raises(ArchitectureMismatch) as info:
        load_firmware(tile, wormhole)
    assert "wormhole" in str(info.value) and isinstance(info.value, InvalidProgram)
    assert not tile.l1.any() and tile.control.soft_reset == reset  # nothing written


def test_a_set_with_a_wormhole_elf_among_blackhole_ones_is_refused(precompiled, blackhole_set):
    wormhole = find_firmware_set(precompiled, "wormhole")
    mixed = FirmwareSet(blackhole_set.path, {**blackhole_set.elfs, "trisc1": wormhole.elfs["trisc1"]})
    tile = Tile("blackhole")
    with pytest.raises(ArchitectureMismatch, match="trisc1"):
        load_firmware(tile, mixed)
    assert not tile.l1.any()


# ---------------------------------------------------------------- boot


def test_blackhole_firmware_boots_to_waiting_for_go(blackhole_set):
    tile, loaded, state = booted(blackhole_set)
    mailbox = loaded.mailbox
    assert state.go_signal == mailbox.constants["RUN_MSG_DONE"] != mailbox.constants["RUN_MSG_INIT"]
    assert all(core.state is CoreState.WAITING for core in tile.cores)
    # BRISC polls the go message; every other core polls its own run-state byte, which reads DONE.
    assert mailbox.go_signal in state.polled["brisc"]
    for core, address in mailbox.subordinate_bytes.items():
        assert state.polled[core] == (address,)
        assert state.subordinate_state[core] == mailbox.constants["RUN_SYNC_MSG_DONE"]
    assert state.waits_for_go(mailbox)
    # Each core waits inside its own firmware.
    for core in CORE_NAMES:
        assert state.pcs[core] in text_span(loaded, core)


def test_boot_reaches_waiting_for_go_at_any_quantum(blackhole_set):
    # The firmware's handshakes go through L1 words the cores poll; L1 accesses to the pages they
    # share happen in cycle order between cores (by default), so every core waits from the same
    # cycle, has run the same instructions and stands at the same cycle at every quantum, even one
    # shorter than a poll loop's iteration. BRISC's go-message loop (four blocks, with a register
    # read where the other cores' progress may stop it) is recognised by the same head at every
    # quantum: a slice resumed at a register access does not count the rest of its block again.
    def boot_at(quantum: int, order) -> tuple[tuple[int, int, int], ...]:
        tile = Tile("blackhole", quantum=quantum, l1_order=order)
        loaded = load_firmware(tile, blackhole_set)
        assert boot(tile, loaded).waits_for_go(loaded.mailbox)
        assert tile.l1_order_late[0] == 0
        return tuple((core.fixed_point_cycle, core.time, core.instructions) for core in tile.cores)

    reference = boot_at(2000, True)
    for quantum in (7, 13, 37, 100, 5000):
        assert boot_at(quantum, True) == reference, quantum
        assert boot_at(quantum, "pages") == reference, quantum


def test_boot_that_stops_elsewhere_is_a_deadlock(blackhole_set):
    tile = Tile("blackhole")
    loaded = load_firmware(tile, blackhole_set)
    # BRISC never gets to its firmware: it polls a word nobody writes.
    tile.write(0, assemble("1: lw a0, 0x200(zero)\n beqz a0, 1b\n ecall"))
    with pytest.raises(Deadlock, match="stopped short of waiting for a go message"):
        boot(tile, loaded)


def test_brisc_firmware_points_the_other_cores_at_their_entries(blackhole_set):
    tile, loaded, _ = booted(blackhole_set)
    for core in ("ncrisc", "trisc0", "trisc1", "trisc2"):
        assert tile.control.reset_pc_of(core) == loaded.images[core].entry
    assert tile.control.soft_reset & tile.arch.soft_reset_all == 0  # all five released


def test_local_ram_images_reach_local_ram_through_the_staging_area(blackhole_set):
    tile, loaded, _ = booted(blackhole_set)
    checked = 0
    for core, image in loaded.images.items():
        for segment in image.segments:
            if segment.address >= tile.arch.local_ram_base and segment.data:
                offset = segment.address - tile.arch.local_ram_base
                assert tile.local_ram[core][offset : offset + len(segment.data)].tobytes() == segment.data
                staged = loaded.staging[core] + offset
                assert tile.read(staged, len(segment.data)) == segment.data
                checked += 1
    assert checked  # at least BRISC has initialised data


def test_firmware_enables_both_nius(blackhole_set):
    tile, _, _ = booted(blackhole_set)
    # device_setup sets bit 0 of NIU_CFG_0 and ROUTER_CFG_0 on both NoCs.
    assert tile.noc.config[:, 0:2].tolist() == [[1, 1], [1, 1]]


def test_boot_is_deterministic(blackhole_set):
    first = booted(blackhole_set)[2]
    second = booted(blackhole_set)[2]
    assert first == second


def test_other_blackhole_builds_boot_too(precompiled):
    sets = [s for s in find_firmware_sets(precompiled) if s.arch().name == "blackhole"]
    assert len(sets) > 4
    for firmware in sets[1::9]:  # a sample: each boot takes most of a second
        _, loaded, state = booted(firmware)
        assert state.waits_for_go(loaded.mailbox), firmware.build_hash


# ---------------------------------------------------------------- launches


def marking_kernel(mark: int, slot: int) -> bytes:
    return assemble(f"li t0, {mark}\n li t1, {MARKS + 4 * slot}\n sw t0, 0(t1)\n li a0, 0\n ret")


def marks(tile: Tile) -> list[int]:
    return np.frombuffer(tile.read(MARKS, 4 * len(CORE_NAMES)), np.uint32).tolist()


def test_empty_launch_runs_and_returns_to_waiting_for_go(blackhole_set):
    tile, loaded, _ = booted(blackhole_set)
    state = launch(tile, loaded, {core: EMPTY_KERNEL for core in CORE_NAMES})
    assert state.waits_for_go(loaded.mailbox)


def test_every_enabled_kernel_runs_once_per_launch(blackhole_set):
    tile, loaded, _ = booted(blackhole_set)
    kernels = {core: marking_kernel(0xC0DE00 + i, i) for i, core in enumerate(CORE_NAMES)}
    for _ in range(2):
        tile.write(MARKS, bytes(4 * len(CORE_NAMES)))
        state = launch(tile, loaded, kernels)
        assert state.waits_for_go(loaded.mailbox)
        assert marks(tile) == [0xC0DE00 + i for i in range(len(CORE_NAMES))]


# BRISC starts the three TRISCs together (a compute kernel is always all three), so they are enabled
# together here too.
@pytest.mark.parametrize(
    "chosen", [("brisc",), ("ncrisc",), ("brisc", "ncrisc"), ("trisc0", "trisc1", "trisc2")]
)
def test_only_enabled_kernels_run(blackhole_set, chosen):
    tile, loaded, _ = booted(blackhole_set)
    slots = {core: i for i, core in enumerate(CORE_NAMES) if core in chosen}
    state = launch(tile, loaded, {core: marking_kernel(0xAB00 + i, i) for core, i in slots.items()})
    assert state.waits_for_go(loaded.mailbox)
    assert marks(tile) == [0xAB00 + i if core in chosen else 0 for i, core in enumerate(CORE_NAMES)]


def test_debug_info_names_what_it_cannot_find(blackhole_set):
    debug = blackhole_set.debug("brisc")
    with pytest.raises(InvalidProgram, match="no_such_member"):
        debug.field("mailboxes_t", "go_messages[0].no_such_member")
    with pytest.raises(InvalidProgram, match="not an array"):
        debug.field("mailboxes_t", "launch_msg_rd_ptr[1]")
    with pytest.raises(InvalidProgram, match="no_such_function"):
        debug.inlined_argument("no_such_function", "data_image")


# ---------------------------------------------------------------- the boot jump


@settings(max_examples=15, deadline=None)
@given(target=st.integers(0, (1 << 19) - 1).map(lambda t: t * 2))
def test_boot_jump_matches_the_assembler(target):
    expected = assemble(f"jal x0, _start + {target}")
    assert jal(0, target).to_bytes(4, "little") == expected


def test_boot_jump_out_of_range_is_refused():
    with pytest.raises(InvalidProgram):
        jal(0, 1 << 20)


# ---------------------------------------------------------------- NoC interface registers
# Expected values are built from BlackholeA0/NoC/MemoryMap.md's field tables.

NIU = (0xFFB20000, 0xFFB30000)


def run_brisc(tile: Tile, source: str) -> None:
    tile.write(0, assemble(source))
    tile.run(release=["brisc"])


def word(tile: Tile, address: int) -> int:
    return int.from_bytes(tile.read(address, 4), "little")


@pytest.mark.parametrize("x,y", [(1, 2), (16, 11), (0, 0), (7, 5)])
def test_node_and_endpoint_ids(x, y):
    tile = Tile("blackhole")
    tile.noc.place(x, y)
    loads = "\n".join(
        f"li t0, {NIU[noc] + off}\n lw t1, 0(t0)\n li t2, {0x20000 + 16 * noc + k * 4}\n sw t1, 0(t2)"
        for noc in (0, 1)
        for k, off in enumerate((0x44, 0x48, 0x148, 0x844))
    )
    run_brisc(tile, loads + "\n ecall")
    for noc, (nx, ny) in enumerate([(x, y), (16 - x, 11 - y)]):  # NoC #1 counts from the far corner
        node = nx | ny << 6 | 17 << 12 | 12 << 19 | (1 if noc == 0 else 0) << 28
        base = 0x20000 + 16 * noc
        assert word(tile, base) == node
        assert word(tile, base + 4) == 0x0100 << 8 | noc << 24  # Tensix tile, tile index 0
        assert word(tile, base + 8) == nx | ny << 6  # NOC_ID_LOGICAL: power-on value
        assert word(tile, base + 12) == node  # repeated at every initiator


def test_request_fields_and_configuration_hold_what_is_written():
    tile = Tile("blackhole")
    run_brisc(
        tile,
        f"li t0, {NIU[1] + 0x1800}\n li t1, 0x12345678\n sw t1, 0x28(t0)\n lw a0, 0x28(t0)\n"
        f"li t0, {NIU[0] + 0x100}\n li t1, 0xABCD\n sw t1, 0x48(t0)\n lw a1, 0x48(t0)\n"
        f"lw a2, 0x40(t0)\n ecall",
    )
    brisc = tile.core("brisc")
    assert brisc.reg("a0") == 0x12345678 and brisc.reg("a1") == 0xABCD
    assert tile.noc.requests[1, 3, 10] == 0x12345678


def test_a_write_request_from_an_unmodelled_tile_is_unimplemented():
    # All request fields zero: the write's source is DRAM tile (0, 0), which no model serves.
    tile = Tile("blackhole")
    with pytest.raises(Unimplemented) as info:
        run_brisc(tile, f"li t0, {NIU[0] + 0x800}\n li t1, 2\n sw t1, 0x1C(t0)\n li t1, 1\n sw t1, 0x40(t0)")
    # li t0 is two instructions (lui, addi), so the store to NOC_CMD_CTRL is the sixth.
    assert info.value.core == "brisc" and info.value.pc == 20 and "write request" in str(info.value)


def test_unmodelled_niu_register_is_a_memory_fault():
    tile = Tile("blackhole")
    with pytest.raises(MemoryFault) as info:
        run_brisc(tile, f"li t0, {NIU[0] + 0x64}\n lw a0, 0(t0)\n ecall")
    assert info.value.address == NIU[0] + 0x64 and info.value.core == "brisc" and "noc0" in str(info.value)


# ---------------------------------------------------------------- clock gating and the TDMA page


def test_clock_gating_controls_hold_what_is_written():
    tile = Tile("blackhole")
    run_brisc(
        tile,
        "li t0, 0xFFB12240\n li t1, 0x5A\n sw t1, 0(t0)\n lw a0, 0(t0)\n"
        "li t0, 0xFFB11024\n li t1, 0x3F\n sw t1, 0(t0)\n lw a1, 0(t0)\n lw a2, 4(t0)\n ecall",
    )
    brisc = tile.core("brisc")
    assert (brisc.reg("a0"), brisc.reg("a1"), brisc.reg("a2")) == (0x5A, 0x3F, 0)


def test_unmodelled_tdma_register_is_a_memory_fault():
    tile = Tile("blackhole")
    with pytest.raises(MemoryFault) as info:
        run_brisc(tile, "li t0, 0xFFB11000\n li t1, 1\n sw t1, 0(t0)\n ecall")
    assert info.value.address == 0xFFB11000 and info.value.write and "tdma" in str(info.value)


# ---------------------------------------------------------------- firmware generations


def test_the_two_generations_differ_in_their_launch_message():
    """What makes the second generation worth running: ttnn 0.67.4's launch_msg_t (tt-metal's
    dev_msgs.h of that release) has three programmable core types, no kernel_text_size, and every
    member past rta_offset at another offset than 0.81.1's."""
    from conftest import TTNN_CACHE

    from tensixsim.metal.wheel import precompiled_firmware

    debug = {
        version: find_firmware_set(precompiled_firmware(TTNN_CACHE, version), "blackhole").debug("brisc")
        for version in ("0.67.4", "0.81.1")
    }
    facts = {  # size; offsets of kernel_config.{kernel_config_base[2], kernel_text_offset[0], enables}
        "0.67.4": (112, 8, 44, 80),
        "0.81.1": (144, 8, 52, 112),
    }
    for version, info in debug.items():
        config = "kernel_config"
        offsets = tuple(
            info.field("launch_msg_t", f"{config}.{member}").offset
            for member in ("kernel_config_base[2]", "kernel_text_offset[0]", "enables")
        )
        assert (info.size_of("launch_msg_t"), *offsets) == facts[version]
    assert not debug["0.67.4"].has_field("launch_msg_t", "kernel_config.kernel_text_size")
    assert debug["0.81.1"].has_field("launch_msg_t", "kernel_config.kernel_text_size[4]")
    assert not debug["0.67.4"].has_field("launch_msg_t", "kernel_config.kernel_config_base[3]")
    assert debug["0.81.1"].has_field("launch_msg_t", "kernel_config.kernel_config_base[3]")


def test_local_image_source_read_from_the_code_agrees_with_the_dwarf(blackhole_set, ttnn_version):
    """Where the DWARF records do_crt1's argument, the constant its code builds is the same address;
    where it does not (ttnn 0.67.4), the code is what tells."""
    from tensixsim.loader.elf import read_elf
    from tensixsim.metal.firmware import local_image_source

    l1_size = Tile("blackhole").arch.l1_size
    for core in CORE_NAMES:
        debug = blackhole_set.debug(core)
        image = read_elf(blackhole_set.elfs[core])
        found = local_image_source(blackhole_set, core, image, l1_size)
        try:
            recorded = debug.inlined_argument("do_crt1", "data_image")
        except InvalidProgram:
            recorded = None
        from_code = {
            v
            for start, end in debug.inlined_ranges("do_crt1")
            for address, code in image.text_ranges
            for v in lui_constants(code, address, start, end)
            if 0 < v < l1_size
        }
        assert from_code == {found}, core
        assert recorded in (None, found)
    if ttnn_version == "0.67.4":
        with pytest.raises(InvalidProgram, match="found none"):
            blackhole_set.debug("brisc").inlined_argument("do_crt1", "data_image")


def test_lui_constants_follow_each_register_from_lui_to_addi():
    code = assemble(
        """
        lui a5, 0xffb00
        lui a4, 0xa
        addi a5, a5, 20
        addi a4, a4, -512
        .word 0x00000008
        lui a1, 0xc
        mv a1, a0
        addi a1, a1, 4
        lui s0, 0x13
        addi a2, s0, 0x100
        addi a3, s0, -0x100
        addi a6, zero, 8
        """,
        base=0x100,
    )
    found = lui_constants(code, 0x100, 0x100, 0x100 + len(code))
    # a5 and a4 interleaved; the Tensix word is skipped; a1 overwritten before its addi; s0 kept for two.
    assert found == [0xFFB00014, 0x9E00, 0x13100, 0x12F00]
    assert lui_constants(code, 0x100, 0x108, 0x110) == []  # the range starts past both lui


def test_an_index_past_the_end_of_an_array_member_is_no_field(blackhole_set):
    debug = blackhole_set.debug("brisc")
    count = debug.enumerator("ProgrammableCoreType::COUNT")  # 3 in ttnn 0.67.4, 4 in 0.81.1
    assert debug.has_field("launch_msg_t", f"kernel_config.kernel_config_base[{count - 1}]")
    assert not debug.has_field("launch_msg_t", f"kernel_config.kernel_config_base[{count}]")
    with pytest.raises(InvalidProgram, match=rf"kernel_config_base has {count} elements, no \[{count}\]"):
        debug.field("launch_msg_t", f"kernel_config.kernel_config_base[{count}]")


def test_a_wheel_without_precompiled_firmware_is_named(tmp_path):
    import zipfile

    from tensixsim.metal.wheel import extract_firmware

    wheel = tmp_path / "ttnn-0.0.0-cp312-cp312-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("ttnn/tt_metal/hw/firmware/src/brisc.cc", "int main() {}\n")
        archive.writestr("ttnn/tt_metal/pre-compiled/123/brisc/brisc_weakened.elf", b"\x7fELF")
    with pytest.raises(InvalidProgram, match="no pre-compiled Tensix-core firmware"):
        extract_firmware(wheel, tmp_path / "out")
    assert not (tmp_path / "out" / ".complete").exists()
