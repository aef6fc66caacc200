"""libtensixsim and what it serves: the PCIe endpoint, the host's view of a chip, the debug unit.

References: the TLB field layout and translated coordinates of tt-umd's blackhole_implementation.hpp
(bit positions written out here by hand), the libttsim API (tenstorrent/ttsim docs/libttsim_api.md),
and the debug-unit protocol tt-exalens drives (strobe values built here from its bit fields).
"""

from __future__ import annotations

import ctypes
import logging
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
import rvenc
from hypothesis import given
from hypothesis import strategies as st

from tensixsim.arch.blackhole_host import TLB_2M_FIELDS
from tensixsim.chip import Chip
from tensixsim.cli import main
from tensixsim.endpoints.host import ChipHost
from tensixsim.endpoints.pcie import decode_tlb
from tensixsim.errors import InvalidProgram, MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.noc import NoEndpoint
from tensixsim.riscv.core import CoreState
from tensixsim.simlib import LIBRARY_NAME, SOC_DESCRIPTOR_NAME, bridge, soc_descriptor, write_simdir

BAR0, BAR2, BAR4 = 0x1_0000_0000, 0x1_2000_0000, 0x8_0000_0000  # as configuration space reports them
TLB_CONFIG = 0x1FC00000
MIB = 1 << 20
SOFT_RESET = 0xFFB121B0
pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler"
)


def tlb_2m(x: int, y: int, window: int, *, start: tuple[int, int] = (0, 0), mcast: bool = False) -> int:
    """A 2 MiB TLB configuration: local offset bits 0..42, x_end 43, y_end 49, x_start 55, y_start 61,
    mcast 69 (tt-umd TLB_2M_OFFSET)."""
    return window | x << 43 | y << 49 | start[0] << 55 | start[1] << 61 | int(mcast) << 69


def tlb_4g(x: int, y: int, window: int) -> int:
    """A 4 GiB TLB configuration: local offset bits 0..31, x_end 32, y_end 38 (TLB_4G_OFFSET)."""
    return window | x << 32 | y << 38


def program_tlb(host: ChipHost, index: int, config: int) -> None:
    """Write a TLB's three configuration words as tt-umd does (three 32-bit writes)."""
    for word in range(3):
        value = (config >> (32 * word)) & 0xFFFFFFFF
        host.pcie.write(BAR0 + TLB_CONFIG + 12 * index + 4 * word, value.to_bytes(4, "little"))


# ---------------------------------------------------------------------- the PCIe endpoint
@given(st.integers(0, 63), st.integers(0, 63), st.integers(0, (1 << 43) - 1))
def test_tlb_2m_decode_names_the_target_and_window(x, y, window):
    decoded = decode_tlb(tlb_2m(x, y, window), TLB_2M_FIELDS, 2 * MIB)
    assert decoded.end == (x, y)
    assert decoded.address == window * 2 * MIB
    assert not decoded.multicast


def test_configuration_space_identifies_a_blackhole_and_its_bars():
    host = ChipHost()
    assert host.config_read(0, 0) == 0x1E52 | 0xB140 << 16
    bars = [host.config_read(0, offset) for offset in range(0x10, 0x28, 4)]
    assert bars == [BAR0 & 0xFFFFFFFF | 4, BAR0 >> 32, BAR2 & 0xFFFFFFFF | 4, BAR2 >> 32, 4, BAR4 >> 32]
    # Sizing: all ones written to BAR0's low word reads back its 512 MiB alignment.
    host.config_write(0, 0x10, 0xFFFFFFFF)
    assert host.config_read(0, 0x10) == (0xFFFFFFFF & ~(512 * MIB - 1)) | 4
    assert host.config_read(8, 0) == 0xFFFFFFFF  # device 1: none (what enumeration stops at)
    with pytest.raises(UndefinedBehavior):
        host.config_read(0, 2)


def test_the_pcie_niu_reports_translation_on_and_its_node_id():
    host = ChipHost()
    cfg0 = int.from_bytes(host.pcie.read(BAR0 + 0x1FD04100, 4), "little")
    assert cfg0 >> 14 & 1
    node = int.from_bytes(host.pcie.read(BAR0 + 0x1FD04044, 4), "little")
    assert (node & 0x3F, node >> 6 & 0x3F) == (2, 0)
    node1 = int.from_bytes(host.pcie.read(BAR0 + 0x1FD14044, 4), "little")
    assert (node1 & 0x3F, node1 >> 6 & 0x3F) == (14, 11)  # NoC #1 counts from the far corner
    with pytest.raises(Unimplemented):
        host.pcie.read(BAR0 + 0x1FD04200, 4)


def test_a_2m_window_reaches_a_tensix_tiles_l1():
    host = ChipHost()
    program_tlb(host, 5, tlb_2m(3, 4, 0))
    data = bytes(range(64))
    host.pcie.write(BAR0 + 5 * 2 * MIB + 0x1000, data)
    assert host.chip.tile(3, 4).read(0x1000, 64) == data
    assert host.pcie.read(BAR0 + 5 * 2 * MIB + 0x1000, 64) == data
    # The configuration reads back as written.
    words = np.frombuffer(host.pcie.read(BAR0 + TLB_CONFIG + 60, 12), np.uint32)
    assert int(words[0]) | int(words[1]) << 32 | int(words[2]) << 64 == tlb_2m(3, 4, 0)


def test_dram_is_reached_by_translated_and_noc0_coordinates():
    host = ChipHost()
    # Bank 0, port 1 is NoC #0 (0, 1): translated (17, 13); bank 5 port 0 is (9, 2): translated (18, 15).
    program_tlb(host, 0, tlb_2m(17, 13, 3))  # window 3: target addresses 6 MiB..8 MiB
    host.pcie.write(BAR0 + 0x40, b"\x11" * 8)
    assert host.chip.dram.read(0, 6 * MIB + 0x40, 8) == b"\x11" * 8
    host.write((18, 15), 0x100, b"\x22" * 4)
    assert host.chip.dram.read(5, 0x100, 4) == b"\x22" * 4
    assert host.read((0, 11), 6 * MIB + 0x40, 8) == b"\x11" * 8  # another port of bank 0, NoC #0
    # A 4 GiB window in BAR4 (TLB 202 + i): DRAM bank 7 port 2 (9, 6) = translated (18, 23).
    program_tlb(host, 203, tlb_4g(18, 23, 0))
    host.pcie.write(BAR4 + (1 << 32) + 0x1234_5678, b"\x33" * 4)
    assert host.chip.dram.read(7, 0x1234_5678, 4) == b"\x33" * 4


def test_a_multicast_window_writes_every_tensix_tile_of_its_rectangle():
    host = ChipHost()
    program_tlb(host, 1, tlb_2m(3, 3, 0, start=(1, 2), mcast=True))
    host.pcie.write(BAR0 + 2 * MIB + 0x200, b"\x5a" * 16)
    for xy in [(1, 2), (2, 2), (3, 2), (1, 3), (2, 3), (3, 3)]:
        assert host.chip.tile(*xy).read(0x200, 16) == b"\x5a" * 16
    assert (4, 3) not in host.chip.tiles
    with pytest.raises(UndefinedBehavior):
        host.pcie.read(BAR0 + 2 * MIB + 0x200, 4)


def test_bad_accesses_are_named_errors_and_change_nothing():
    host = ChipHost()
    program_tlb(host, 0, tlb_2m(1, 2, 0))
    with pytest.raises(MemoryFault):
        host.pcie.write(BAR0 + 2 * MIB - 4, b"\0" * 8)  # runs past its window
    with pytest.raises(MemoryFault):
        host.pcie.read(BAR0 + 0x1940_0000, 4)  # between the windows and their configuration
    with pytest.raises(MemoryFault):
        host.pcie.read(0x10, 4)  # outside every BAR
    with pytest.raises(Unimplemented):
        host.pcie.read(BAR2 + 0x100, 4)  # DMA channel registers
    with pytest.raises(NoEndpoint):
        host.read((8, 8), 0, 4)  # a router alone
    with pytest.raises(NoEndpoint):
        host.write((40, 40), 0, b"\0" * 4)
    with pytest.raises(Unimplemented):
        host.read((8, 0), 0, 4)  # the ARC tile
    with pytest.raises(MemoryFault):
        host.read((1, 2), SOFT_RESET + 2, 4)  # registers are whole words
    with pytest.raises(MemoryFault):
        host.write((1, 2), 1536 * 1024 - 4, b"\0" * 8)  # past L1
    assert host.chip.tile(1, 2).read(0, 64) == bytes(64)


def test_soft_reset_through_the_host_releases_a_core_that_the_clock_runs():
    host = ChipHost()
    code = rvenc.to_bytes(rvenc.assemble("li t0, 0x4000\nli t1, 77\nsw t1, 0(t0)\nloop:\nj loop"))
    assert int.from_bytes(host.read((1, 2), SOFT_RESET, 4), "little") == 0x47800
    with pytest.raises(InvalidProgram):  # nothing loaded at BRISC's reset pc
        host.write((1, 2), SOFT_RESET, (0x47800 & ~(1 << 11)).to_bytes(4, "little"))
    host.write((1, 2), 0, code)
    host.write((1, 2), SOFT_RESET, (0x47800 & ~(1 << 11)).to_bytes(4, "little"))
    host.clock(200)
    assert int.from_bytes(host.read((1, 2), 0x4000, 4), "little") == 77
    brisc = host.chip.tile(1, 2).core("brisc")
    # Spinning in its loop, which reads nothing: parked there.
    assert brisc.state is CoreState.WAITING and brisc.wait_reason == "spins in a loop that reads nothing"


# ---------------------------------------------------------------------- the debug unit
def debug_write(host: ChipHost, xy, core_id: int, register: int, value: int) -> None:
    """CNTL_1 = value, then CNTL_0 = strobe | write | core | register, then CNTL_0 = 0."""
    host.write(xy, 0xFFB12084, value.to_bytes(4, "little"))
    host.write(xy, 0xFFB12080, (1 << 31 | 1 << 16 | core_id << 17 | register).to_bytes(4, "little"))
    host.write(xy, 0xFFB12080, bytes(4))


def debug_read(host: ChipHost, xy, core_id: int, register: int) -> int:
    host.write(xy, 0xFFB12080, (1 << 31 | core_id << 17 | register).to_bytes(4, "little"))
    host.write(xy, 0xFFB12080, bytes(4))
    assert int.from_bytes(host.read(xy, 0xFFB12088, 4), "little") >> 30 & 1  # read valid
    return int.from_bytes(host.read(xy, 0xFFB1208C, 4), "little")


def test_the_debug_unit_halts_reads_writes_and_continues_a_core():
    host, xy = ChipHost(), (2, 3)
    # TRISC0 (debug id 1) counts in t0 at its default reset pc 0x6000.
    code = rvenc.assemble("li t0, 0\nloop:\naddi t0, t0, 1\nj loop", base=0x6000)
    host.write(xy, 0x6000, rvenc.to_bytes(code))
    host.write(xy, SOFT_RESET, (0x47800 & ~(1 << 12)).to_bytes(4, "little"))
    host.clock(500)
    core = host.chip.tile(*xy).core("trisc0")
    assert debug_read(host, xy, 1, 0) & 1 == 0  # running
    debug_write(host, xy, 1, 1, 1 << 31 | 0x1)  # halt
    assert debug_read(host, xy, 1, 0) & 1 == 1
    count = core.reg("t0")
    assert count > 10
    host.clock(500)
    assert core.reg("t0") == count  # a halted core does not run
    debug_write(host, xy, 1, 2, 5)  # read x5 (t0)
    debug_write(host, xy, 1, 1, 1 << 31 | 0x8)
    assert debug_read(host, xy, 1, 4) == count
    debug_write(host, xy, 1, 2, 32)  # read the pc
    debug_write(host, xy, 1, 1, 1 << 31 | 0x8)
    assert debug_read(host, xy, 1, 4) in (0x6004, 0x6008)  # inside the loop
    debug_write(host, xy, 1, 3, 1000)  # t0 = 1000
    debug_write(host, xy, 1, 2, 5)
    debug_write(host, xy, 1, 1, 1 << 31 | 0x10)
    debug_write(host, xy, 1, 2, 0x6000)  # read the first word of its code through the core
    debug_write(host, xy, 1, 1, 1 << 31 | 0x20)
    assert debug_read(host, xy, 1, 4) == code[0]
    debug_write(host, xy, 1, 1, 1 << 31 | 0x4)  # continue
    assert core.state is CoreState.RUNNING
    host.clock(200)
    assert core.reg("t0") > 1000


def test_the_debug_bus_shows_each_cores_pc():
    host, xy = ChipHost(), (1, 2)
    host.write(xy, 0, rvenc.to_bytes(rvenc.assemble("loop:\nnop\nj loop")))
    host.write(xy, SOFT_RESET, (0x47800 & ~(1 << 11)).to_bytes(4, "little"))
    host.clock(100)
    # brisc_pc: enable bit 29, read select 1 (bits 25..), daisy 7 (bits 16..), signal 2 * 5 + 1.
    host.write(xy, 0xFFB12054, (1 << 29 | 1 << 25 | 7 << 16 | 11).to_bytes(4, "little"))
    pc = int.from_bytes(host.read(xy, 0xFFB1205C, 4), "little")
    assert pc == host.chip.tile(*xy).core("brisc").pc and pc in (0, 4)
    host.write(xy, 0xFFB12054, (1 << 29 | 7 << 16 | 3).to_bytes(4, "little"))
    with pytest.raises(Unimplemented):
        host.read(xy, 0xFFB1205C, 4)


def test_debug_errors_are_named():
    host, xy = ChipHost(), (1, 2)
    with pytest.raises(UndefinedBehavior):  # halting a core held in reset
        debug_write(host, xy, 0, 1, 1 << 31 | 0x1)
    with pytest.raises(Unimplemented):  # NCRISC (id 4) has no debug hardware
        debug_write(host, xy, 4, 1, 1 << 31 | 0x1)
    with pytest.raises(Unimplemented):  # watchpoints
        debug_write(host, xy, 0, 5, 0x8)
    with pytest.raises(UndefinedBehavior):  # register access of a core that is not halted
        debug_write(host, xy, 0, 1, 1 << 31 | 0x8)


# ---------------------------------------------------------------------- the library
def test_simdir_writes_the_library_and_a_soc_descriptor_of_the_chip(tmp_path):
    assert main(["simdir", str(tmp_path / "sim")]) == 0
    assert (tmp_path / "sim" / LIBRARY_NAME).exists()
    text = (tmp_path / "sim" / SOC_DESCRIPTOR_NAME).read_text()
    assert text == soc_descriptor()
    workers = text.split("functional_workers: [")[1].split("]")[0].split(", ")
    assert len(workers) == 140 and "1-2" in workers and "16-11" in workers and "8-2" not in workers
    assert "[0-0, 0-1, 0-11]" in text and "arch_name: BLACKHOLE" in text


@pytest.fixture
def library(tmp_path):
    lib = ctypes.CDLL(str(write_simdir(tmp_path)))
    lib.libttsim_pci_config_rd32.restype = ctypes.c_uint32
    lib.libttsim_init()
    yield lib
    lib.libttsim_exit()


def test_the_library_serves_a_chip_in_this_process(library):
    assert library.libttsim_pci_config_rd32(0, 0) == 0xB1401E52
    data = (ctypes.c_uint8 * 8)(*range(1, 9))
    library.libttsim_tile_wr_bytes(4, 5, ctypes.c_uint64(0x2000), data, 8)
    out = (ctypes.c_uint8 * 8)()
    library.libttsim_tile_rd_bytes(4, 5, ctypes.c_uint64(0x2000), out, 8)
    assert list(out) == list(range(1, 9))
    assert bridge.host.chip.tile(4, 5).read(0x2000, 8) == bytes(range(1, 9))
    library.libttsim_clock(25)
    assert bridge.host.cycle == 25


def test_refused_calls_read_all_ones_and_keep_the_host_alive(library):
    errors = len(bridge.errors)
    out = (ctypes.c_uint8 * 4)()
    library.libttsim_tile_rd_bytes(8, 8, ctypes.c_uint64(0), out, 4)  # a router alone
    assert list(out) == [0xFF] * 4
    library.libttsim_pci_mem_rd_bytes(ctypes.c_uint64(0x10), out, 4)  # outside every BAR
    assert list(out) == [0xFF] * 4
    assert [type(e) for e in bridge.errors[errors:]] == [NoEndpoint, MemoryFault]
    assert library.libttsim_pci_config_rd32(0, 0) == 0xB1401E52  # still serving


HOST_PROGRAM = textwrap.dedent(
    """
    #include <dlfcn.h>
    #include <stdint.h>
    #include <stdio.h>
    typedef void (*init_fn)(void);
    typedef uint32_t (*config_fn)(uint32_t, uint32_t);
    typedef void (*write_fn)(uint32_t, uint32_t, uint64_t, const void *, uint32_t);
    typedef void (*read_fn)(uint32_t, uint32_t, uint64_t, void *, uint32_t);
    typedef void (*clock_fn)(uint32_t);
    int main(int argc, char **argv) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen failed\\n"); return 1; }
        init_fn init = (init_fn)dlsym(h, "libttsim_init");
        config_fn cfg = (config_fn)dlsym(h, "libttsim_pci_config_rd32");
        write_fn wr = (write_fn)dlsym(h, "libttsim_tile_wr_bytes");
        read_fn rd = (read_fn)dlsym(h, "libttsim_tile_rd_bytes");
        clock_fn clk = (clock_fn)dlsym(h, "libttsim_clock");
        init();
        uint32_t w[2] = {0x12345678, 0x9abcdef0}, r[2] = {0, 0};
        wr(1, 2, 0x3000, w, 8);
        clk(5);
        rd(1, 2, 0x3000, r, 8);
        printf("id %08x read %08x %08x\\n", cfg(0, 0), r[0], r[1]);
        rd(8, 8, 0, r, 4);
        printf("refused %08x\\n", r[0]);
        fflush(stdout);
        return 0;
    }
    """
)


def test_a_program_without_python_embeds_the_interpreter(tmp_path):
    library = write_simdir(tmp_path / "sim")
    (tmp_path / "host.c").write_text(HOST_PROGRAM)
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-o", str(tmp_path / "host"), str(tmp_path / "host.c"), "-ldl"], check=True)
    result = subprocess.run(
        [str(tmp_path / "host"), str(library)], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["id b1401e52 read 12345678 9abcdef0", "refused ffffffff"]
    assert "NoEndpoint" in result.stderr


def test_chip_advance_pauses_instead_of_reporting_a_deadlock():
    chip = Chip("blackhole")
    tile = chip.tile(1, 2)
    # BRISC polls a word the host writes later: waiting is no deadlock while the host drives the clock.
    tile.write(
        0, rvenc.to_bytes(rvenc.assemble("li t0, 0x4000\nwait:\nlw t1, 0(t0)\nbeq t1, zero, wait\necall"))
    )
    tile.release("brisc")
    chip.advance(5000, ((1, 2),))
    assert tile.core("brisc").state in (CoreState.RUNNING, CoreState.WAITING)
    tile.write(0x4000, (1).to_bytes(4, "little"))
    chip.advance(10000, ((1, 2),))
    assert tile.core("brisc").state is CoreState.FINISHED


def test_a_repeated_refusal_is_logged_once_and_kept_bounded(library, caplog, monkeypatch):
    monkeypatch.setattr(bridge, "errors", [])
    monkeypatch.setattr(bridge, "refused", type(bridge.refused)())
    monkeypatch.setattr(bridge, "KEPT_ERRORS", 3)
    out = (ctypes.c_uint8 * 4)()
    with caplog.at_level(logging.DEBUG, logger="tensixsim.simlib"):
        for _ in range(5):
            library.libttsim_tile_rd_bytes(8, 8, ctypes.c_uint64(0), out, 4)  # a router alone
    levels = [r.levelno for r in caplog.records if r.name == "tensixsim.simlib"]
    assert levels == [logging.ERROR] + [logging.DEBUG] * 4
    assert len(bridge.errors) == 3 and bridge.refused[("libttsim_tile_rd_bytes", "NoEndpoint")] == 5
