"""Tenstorrent's own tools drive tensixsim through the simulator directory ``tensixsim simdir`` writes.

tt-umd's Python API (TTSimTTDevice) and tt-exalens in simulation mode load ``libttsim.so`` exactly as
they load Tenstorrent's simulator; they are the optional extra ``tensixsim[tools]`` (pinned versions)
and these tests skip, saying so, when they are not installed. Expected values come from the SDK's
demo reference (computed in Python) and from a hand-written program whose result is worked out here.
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tensixsim.arch import get_arch
from tensixsim.riscv.core import CoreState
from tensixsim.sdk import programs
from tensixsim.simlib import bridge, write_simdir

tt_umd = pytest.importorskip("tt_umd", reason="tt-umd is not installed (pip install 'tensixsim[tools]')")

LOCAL_RAM = 0xFFB00000


@pytest.fixture(autouse=True)
def nothing_refused():
    """Every call the tools made was served (a refused one is logged and kept in bridge.errors)."""
    before = len(bridge.errors)
    yield
    assert bridge.errors[before:] == []


@pytest.fixture(scope="module")
def simdir(tmp_path_factory) -> Path:
    return write_simdir(tmp_path_factory.mktemp("sim"))


@pytest.fixture
def device(simdir):
    dev = tt_umd.TTSimTTDevice.create(str(simdir))
    yield dev
    del dev
    gc.collect()


def test_tt_umd_reads_and_writes_tensix_l1(device):
    data = bytes(range(256)) * 4
    device.noc_write(1, 2, 0x10000, data)
    device.noc_write(16, 11, 0x20, b"\xa5" * 12)
    assert device.noc_read(1, 2, 0x10000, len(data)) == data
    assert device.noc_read(16, 11, 0x20, 12) == b"\xa5" * 12
    assert bridge.host.chip.tile(1, 2).read(0x10000, len(data)) == data
    assert device.noc_read32(3, 4, 0xFFB121B0) == 0x47800  # every core held in soft reset


def test_tt_umd_reads_and_writes_dram(device):
    # Translated DRAM coordinates (tt-umd's): bank 0 port 0 = (17, 12), bank 0 port 2 = (17, 14);
    # bank 4 port 0 = (18, 12), the first tile of NoC #0 column 9.
    device.noc_write(17, 12, 0x100_0000, b"\x3c" * 64)
    assert device.noc_read(17, 14, 0x100_0000, 64) == b"\x3c" * 64  # same bank, another port
    assert bridge.host.chip.dram.read(0, 0x100_0000, 64) == b"\x3c" * 64
    device.noc_write(18, 12, 0x40, b"\x01\x02\x03\x04")
    assert bridge.host.chip.dram.read(4, 0x40, 4) == b"\x01\x02\x03\x04"


def load_segments(device, xy, core: str, path: Path) -> None:
    """Write an ELF's loadable segments the way a host does: local-RAM data at the core's NoC alias."""
    alias = get_arch("blackhole").core(core).local_ram_alias
    with path.open("rb") as f:
        for segment in ELFFile(f).iter_segments():
            if segment["p_type"] != "PT_LOAD" or not segment["p_filesz"]:
                continue
            address = segment["p_paddr"]
            if LOCAL_RAM <= address < LOCAL_RAM + 0x2000:
                address = alias + address - LOCAL_RAM
            device.noc_write(*xy, address, segment.data())


def test_tt_umd_loads_and_runs_the_five_core_demo(device, tmp_path):
    elfs = programs.build_demo(build_dir=tmp_path)
    xy = (3, 4)
    for core, path in elfs.items():
        load_segments(device, xy, core, path)
    device.deassert_risc_reset(
        tt_umd.CoreCoord(*xy, tt_umd.CoreType.TENSIX, tt_umd.CoordSystem.TRANSLATED), tt_umd.RiscType.BRISC
    )
    tile = bridge.host.chip.tile(*xy)
    for _ in range(100_000):  # every read lets the chip run one cycle (tt-umd clocks after reads)
        device.noc_read32(*xy, programs.DEMO_BASE)
        if tile.core("brisc").state is CoreState.FINISHED:
            break
    # struct demo_shared (examples/demo/demo.h): input, transformed, scan (N words each), result[8],
    # done[8], summary.
    expected = programs.demo_expected()
    n = len(expected.input)
    raw = device.noc_read(*xy, programs.DEMO_BASE, 4 * (3 * n + 17))
    words = [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)]
    assert words[:n] == expected.input
    assert words[n : 2 * n] == expected.transformed
    assert words[2 * n : 3 * n] == expected.scan
    assert words[3 * n + 16] == expected.summary
    assert all(c.state is CoreState.FINISHED and c.exit_code == 0 for c in tile.cores)
    assert tile.result().cycles < bridge.host.cycle  # the run fitted in the clocks tt-umd gave


# ---------------------------------------------------------------------- tt-exalens
PROGRAM = textwrap.dedent(
    """
        .section .init, "ax"
        .globl _start
    _start:
        li t0, 0
        li t1, 1
        li t2, 101
    1:  add t0, t0, t1
        addi t1, t1, 1
        bne t1, t2, 1b
        li a0, 0x20000
        sw t0, 0(a0)
        li a1, 0xC0FFEE
        .globl done
    done:
        j done
    """
)


@pytest.fixture
def exalens(simdir):
    pytest.importorskip("ttexalens", reason="tt-exalens is not installed (pip install 'tensixsim[tools]')")
    from ttexalens import tt_exalens_init
    from ttexalens.context import NocId

    context = tt_exalens_init.init_ttexalens(simulation_directory=str(simdir), noc_id=NocId.NOC0)
    yield context
    tt_exalens_init.set_active_context(None)
    del context
    gc.collect()


@pytest.fixture(scope="module")
def sum_elf(tmp_path_factory) -> Path:
    gcc = shutil.which("riscv64-unknown-elf-gcc")
    if gcc is None:
        pytest.skip("riscv64-unknown-elf-gcc is not installed")
    root = tmp_path_factory.mktemp("exalens")
    (root / "sum.S").write_text(PROGRAM)
    (root / "link.ld").write_text("SECTIONS { . = 0x0; .init : { *(.init) } }\n")
    out = root / "sum.elf"
    subprocess.run(
        [
            gcc,
            "-march=rv32i",
            "-mabi=ilp32",
            "-nostdlib",
            "-nostartfiles",
            "-T",
            str(root / "link.ld"),
            str(root / "sum.S"),
            "-o",
            str(out),
        ],
        check=True,
    )
    return out


def test_tt_exalens_reads_and_writes_memory(exalens):
    from ttexalens import tt_exalens_lib as lib

    lib.write_to_device("1-2", 0x1000, bytes(range(16)), context=exalens)
    assert bytes(lib.read_from_device("1-2", 0x1000, num_bytes=16, context=exalens)) == bytes(range(16))
    lib.write_words_to_device("5-6", 0x2000, [0xDEADBEEF, 7], context=exalens)
    assert lib.read_word_from_device("5-6", 0x2004, context=exalens) == 7
    assert bridge.host.chip.tile(5, 6).read(0x2000, 4) == (0xDEADBEEF).to_bytes(4, "little")


def test_tt_exalens_runs_an_elf_and_reads_the_core_through_the_debug_unit(exalens, sum_elf):
    from ttexalens import tt_exalens_lib as lib
    from ttexalens.coordinate import OnChipCoordinate

    with sum_elf.open("rb") as f:
        done = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name("done")[0]["st_value"]
    lib.run_elf(str(sum_elf), "2-2", "brisc", context=exalens)
    for _ in range(5_000):
        if lib.read_word_from_device("2-2", 0x20000, context=exalens) == 5050:  # 1 + 2 + ... + 100
            break
    assert lib.read_word_from_device("2-2", 0x20000, context=exalens) == 5050
    location = OnChipCoordinate.create("2-2", device=exalens.devices[0])
    risc = location.noc_block.get_risc_debug(risc_name="brisc")
    brisc = bridge.host.chip.tile(2, 2).core("brisc")
    with risc.ensure_halted():
        assert brisc.state is CoreState.HALTED
        assert risc.read_gpr(32) == done  # the pc, through the debug bus
        assert risc.read_gpr(11) == 0xC0FFEE  # a1
        assert risc.read_gpr(5) == 5050  # t0
        risc.write_gpr(5, 17)
        assert risc.read_gpr(5) == 17
    assert brisc.state is CoreState.RUNNING and brisc.reg("t0") == 17
