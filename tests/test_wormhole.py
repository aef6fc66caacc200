"""Wormhole B0: the architecture's facts, and its tile running bare-metal programs on all five cores.

References: tt-isa-documentation WormholeB0 (BabyRISCV/README.md, SoftReset.md, InstructionRAM.md,
NoC/Coordinates.md, NoC/MemoryMap.md), tt-umd's wormhole_implementation.hpp, tt-metal's wormhole
headers; the expected values below are typed from those pages, not read from tensixsim.arch.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from asm import assemble, link

from tensixsim import ArchitectureMismatch, InvalidInstruction, MemoryFault, Tile, Unimplemented
from tensixsim.arch import get_arch
from tensixsim.sdk.build import build
from tensixsim.tensix.config import fields_blackhole, fields_wormhole

ROOT = Path(__file__).resolve().parent.parent
WH = get_arch("wormhole")
RESET_PC = {"brisc": 0x0, "ncrisc": 0x12000, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000}
RV32IM = "rv32im"  # what a Wormhole program is assembled for (tests/asm.py's default has a, zba, zbb)


def wormhole_tile(programs: dict[str, str], march: str = RV32IM) -> Tile:
    tile = Tile("wormhole")
    for core, source in programs.items():
        tile.load_elf(core, link(source, text=RESET_PC[core], march=march))
    return tile


# ---------------------------------------------------------------- facts


def test_memories_clock_and_cores_are_wormholes():
    # BabyRISCV/README.md: 1464 KiB of L1, 1 GHz, 4 KiB local RAM for B and NC, 2 KiB for T0..T2,
    # NC's 16 KiB instruction RAM at 0xFFC00000 (InstructionRAM.md).
    assert (WH.l1_size, WH.clock_hz) == (1464 * 1024, 1_000_000_000)
    sizes = {c.name: c.local_ram_size for c in WH.cores}
    assert sizes == {"brisc": 4096, "ncrisc": 4096, "trisc0": 2048, "trisc1": 2048, "trisc2": 2048}
    assert {c.name: c.iram for c in WH.cores if c.iram} == {"ncrisc": (0xFFC00000, 16 * 1024)}
    assert all(c.local_ram_alias is None for c in WH.cores)
    # SoftReset.md: bits 11..14 and 18; the default reset PCs.
    assert {c.name: (c.soft_reset_bit, c.default_reset_pc) for c in WH.cores} == {
        "brisc": (11, 0),
        "trisc0": (12, 0x6000),
        "trisc1": (13, 0xA000),
        "trisc2": (14, 0xE000),
        "ncrisc": (18, 0x12000),
    }
    assert not (WH.has_zba_zbb or WH.has_zaamo or WH.has_csrs)


def test_the_noc_grid_places_every_tile_once():
    noc = WH.noc
    assert (noc.width, noc.height) == (10, 12)
    tensix = set(noc.tensix_tiles)
    assert len(tensix) == 80 and {x for x, _ in tensix} == {1, 2, 3, 4, 6, 7, 8, 9}
    assert {y for _, y in tensix} == {1, 2, 3, 4, 5, 7, 8, 9, 10, 11}
    dram = set(noc.dram_tiles)
    groups = sorted(noc.dram_tiles.values())
    assert len(dram) == 18 and groups == sorted(list(range(6)) * 3)  # six groups of three (DRAMTile)
    assert noc.dram_group_bytes == 2 << 30
    others = set(noc.other_tiles)
    assert not (tensix & dram or tensix & others or dram & others)
    assert len(tensix | dram | others) == 10 * 12  # every router of the torus is one kind of tile
    assert noc.other_tiles[(0, 3)] == "pcie" and noc.other_tiles[(0, 10)] == "arc"
    assert sum(kind == "ethernet" for kind in noc.other_tiles.values()) == 16


def test_coordinate_translation_maps_the_tensix_columns_and_rows_onto_the_grid():
    # Coordinates.md: translated X 18..25 are the Tensix columns in order, 16/17 the DRAM columns;
    # translated Y 18.. the Tensix rows, 16/17 the Ethernet rows.
    noc = WH.noc
    columns = [noc.translate_x[x] for x in range(18, 26)]
    assert columns == [1, 2, 3, 4, 6, 7, 8, 9]
    assert {noc.translate_x[16], noc.translate_x[17]} == {x for x, _ in noc.dram_tiles}
    assert [noc.translate_y[y] for y in range(18, 28)] == [1, 2, 3, 4, 5, 7, 8, 9, 10, 11]
    assert {noc.translate_y[16], noc.translate_y[17]} == {0, 6}
    assert noc.translate_identity_below == 16


def _generator():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_config_fields
    finally:
        sys.path.pop(0)
    return gen_config_fields


def _wheel_header(arch_dir: str) -> str:
    wheels = sorted((ROOT / ".cache" / "ttnn").glob("ttnn-0.81.1-*.whl"))
    if not wheels:
        pytest.skip("the ttnn 0.81.1 wheel is not cached (the metal tests download it)")
    with zipfile.ZipFile(wheels[0]) as archive:
        name = next(n for n in archive.namelist() if n.endswith(f"/tt-1xx/{arch_dir}cfg_defines.h"))
        return archive.read(name).decode()


def test_the_field_table_generator_reproduces_blackholes_table_from_its_header():
    # Blackhole's table came from ttsim's JSON; rendered from tt-metal's header by the same
    # generator that rendered Wormhole's, it must come out the same.
    sizes, config, thread = _generator().parse(_wheel_header("blackhole/"))
    assert config == fields_blackhole.CONFIG_FIELDS
    assert thread == fields_blackhole.THREAD_FIELDS
    assert sizes["CFG_STATE_SIZE"] == fields_blackhole.CFG_STATE_SIZE


def test_wormholes_field_table_is_the_generators_output():
    text = _wheel_header("wormhole/wormhole_b0_defines/")
    generator = _generator()
    source = "tt_metal/hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines/cfg_defines.h (ttnn 0.81.1)"
    assert generator.render("wormhole", source, text) == Path(fields_wormhole.__file__).read_text()


def test_wormholes_reset_pc_fields_are_where_the_backend_configuration_says():
    # SoftReset.md names them; they are global words (both Config states).
    fields = fields_wormhole.CONFIG_FIELDS
    words = [fields[f"TRISC_RESET_PC_SEC{i}_PC"][0] for i in range(3)]
    assert words == [158, 159, 160] and fields["TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en"] == (161, 0, 3)
    assert fields["NCRISC_RESET_PC_PC"] == (162, 0, 32)
    assert min(words) >= fields_wormhole.GLOBAL_CFGREG_BASE_ADDR32


# ---------------------------------------------------------------- bare-metal programs


def test_sdk_programs_run_on_all_five_cores(tmp_path):
    source = tmp_path / "id.c"
    source.write_text('#include "tensixsim.h"\nint main(void) { return SDK_CORE_ID * 3 + 1; }\n')
    tile = Tile("wormhole")
    for core in RESET_PC:
        elf = build(core, [source], tmp_path / f"{core}.elf", arch="wormhole", build_dir=tmp_path)
        tile.load_elf(core, elf)
    result = tile.run(release=list(RESET_PC))
    assert {name: stats.exit_code for name, stats in result.cores.items()} == {
        "brisc": 1,
        "ncrisc": 4,
        "trisc0": 7,
        "trisc1": 10,
        "trisc2": 13,
    }


def test_the_demo_runs_on_wormhole():
    from tensixsim.demo import run_demo

    tile, checks, _ = run_demo(arch="wormhole")
    assert all(checks.values()), checks
    assert tile.arch.name == "wormhole"


def test_a_blackhole_elf_on_a_wormhole_tile_and_the_reverse_are_refused_naming_both(tmp_path):
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    elfs = {
        arch: build("trisc1", [source], tmp_path / f"{arch}.elf", arch=arch, build_dir=tmp_path)
        for arch in ("blackhole", "wormhole")
    }
    for tile_arch, elf_arch in (("wormhole", "blackhole"), ("blackhole", "wormhole")):
        tile = Tile(tile_arch)
        before = tile.l1.copy()
        with pytest.raises(ArchitectureMismatch) as info:
            tile.load_elf("trisc1", elfs[elf_arch])
        assert f"built for {elf_arch}" in str(info.value) and f"this tile is {tile_arch}" in str(info.value)
        assert (tile.l1 == before).all()
        tile.load_elf("trisc1", elfs[tile_arch])
        assert tile.run(release=["trisc1"]).cores["trisc1"].exit_code == 0


@pytest.mark.parametrize(
    ("instruction", "what"),
    [
        ("amoadd.w a0, a1, (a2)", "atomic memory operation"),
        ("csrr a0, mcycle", "CSR instruction (CSR 0xb00)"),
        ("csrw 0x7c0, a1", "CSR instruction (CSR 0x7c0)"),
        ("sh1add a0, a1, a2", "Zba/Zbb instruction"),
        ("cpop a0, a1", "Zba/Zbb instruction"),
    ],
)
def test_instructions_beyond_rv32im_are_refused_naming_wormhole(instruction, what):
    # Written into L1 as bytes (the loader would refuse the ELF: its ISA attribute names Blackhole's
    # extensions), as code arriving at run time would be.
    program = f"li a2, 0x20000\n li a1, 5\n {instruction}\n ecall"
    tile = Tile("wormhole")
    tile.write(0x6000, assemble(program, base=0x6000))
    tile.l1[0x20000:0x20004] = [7, 0, 0, 0]
    with pytest.raises(InvalidInstruction) as info:
        tile.run(release=["trisc0"])
    error = info.value
    assert what in str(error) and "wormhole's baby cores do not have it" in str(error)
    assert error.core == "trisc0" and error.pc == 0x6008
    assert list(tile.l1[0x20000:0x20004]) == [7, 0, 0, 0]  # the AMO changed nothing


def test_the_same_atomic_runs_on_blackhole():
    tile = Tile("blackhole")
    tile.load_elf("trisc0", link("li a2, 0x20000\n li a1, 5\n amoadd.w a0, a1, (a2)\n ecall", text=0x6000))
    tile.l1[0x20000:0x20004] = [7, 0, 0, 0]
    assert tile.run(release=["trisc0"]).cores["trisc0"].exit_code == 7
    assert list(tile.l1[0x20000:0x20004]) == [12, 0, 0, 0]


def test_a_trisc_past_its_2_kib_of_local_ram_faults_and_brisc_reaches_its_4_kib():
    store = "li a0, 0xFFB00800\n li a1, 0x55\n sw a1, 0(a0)\n lw a0, 0(a0)\n ecall"
    ok = wormhole_tile({"brisc": store}).run(release=["brisc"])
    assert ok.cores["brisc"].exit_code == 0x55
    tile = wormhole_tile({"trisc2": store})
    with pytest.raises(MemoryFault) as info:
        tile.run(release=["trisc2"])
    assert "past trisc2's 2 KiB local RAM" in str(info.value) and info.value.address == 0xFFB00800
    assert not tile.local_ram_pages["trisc2"].any()  # the store was undone
    tile = wormhole_tile({"trisc0": "li a0, 0xFFB007FC\n li a1, 9\n sw a1, 0(a0)\n lw a0, 0(a0)\n ecall"})
    assert tile.run(release=["trisc0"]).cores["trisc0"].exit_code == 9


def test_ncrisc_runs_code_from_its_instruction_ram_and_cannot_load_from_it():
    iram = 0xFFC00000
    tile = Tile("wormhole")
    tile.load_elf("ncrisc", link(f"li t0, 0x{iram:x}\n jr t0", text=0x12000, march=RV32IM))
    tile.load_elf("ncrisc", link("li a0, 0x4D\n ecall", text=iram, march=RV32IM, extra=("-N",)))
    assert tile.iram["ncrisc"][:4].any()
    assert tile.run(release=["ncrisc"]).cores["ncrisc"].exit_code == 0x4D
    tile = wormhole_tile({"ncrisc": f"li t0, 0x{iram:x}\n lw a0, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault, match="instruction RAM, which only its instruction fetch reaches"):
        tile.run(release=["ncrisc"])
    tile = wormhole_tile({"ncrisc": f"li t0, 0x{iram:x}\n sw t0, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault, match="store to ncrisc's instruction RAM"):
        tile.run(release=["ncrisc"])


def test_brisc_moves_a_triscs_reset_pc_through_the_backend_configuration():
    # SoftReset.md: T0 starts at Config.TRISC_RESET_PC_SEC0_PC when override bit 0 is set. BRISC
    # writes both through the Config window (TENSIX_CFG_BASE + 4 * word), then releases TRISC0.
    entry = 0x30000
    brisc = f"""
        li t0, 0xFFEF0000
        li t1, 0x{entry:x}
        sw t1, {4 * 158}(t0)
        li t1, 1
        sw t1, {4 * 161}(t0)
        li t0, 0xFFB121B0
        lw t1, 0(t0)
        li t2, ~(1 << 12)
        and t1, t1, t2
        sw t1, 0(t0)
        li a0, 0
        ecall
    """
    tile = wormhole_tile({"brisc": brisc})
    tile.load_elf("trisc0", link("li a0, 0x7E\n ecall", text=entry, march=RV32IM))
    result = tile.run(release=["brisc"])
    assert result.cores["trisc0"].exit_code == 0x7E
    assert tile.reset_pc_of("trisc0") == entry and tile.reset_pc_of("trisc1") == 0xA000


def test_the_wall_clock_counts_cycles_at_the_same_registers():
    # DebugTimestamper.md: WALL_CLOCK_L at 0xFFB121F0, the latched high word at 0x1F8.
    tile = wormhole_tile({"brisc": "li t0, 0xFFB121F0\n nop\n nop\n lw a0, 0(t0)\n lw a1, 8(t0)\n ecall"})
    result = tile.run(release=["brisc"])
    low = result.cores["brisc"].exit_code
    assert 0 < low < result.cores["brisc"].cycles and tile.core("brisc").reg("a1") == 0


def test_the_niu_identifies_the_tile():
    # MemoryMap.md NOC_NODE_ID: X 0..5, Y 6..11, width 12..18, height 19..25, X-first routing bit 28
    # (NoC #0: true; NoC #1 counts from the opposite corner and routes Y first).
    program = (
        "li t0, 0xFFB2002C\n lw a0, 0(t0)\n li t0, 0xFFB3042C\n lw a1, 0(t0)\n"
        "li t0, 0xFFB20138\n lw a2, 0(t0)\n ecall"
    )
    tile = wormhole_tile({"brisc": program})
    assert tile.run(release=["brisc"]).cores["brisc"].exit_code == 1 | 1 << 6 | 10 << 12 | 12 << 19 | 1 << 28
    assert tile.core("brisc").reg("a1") == 8 | 10 << 6 | 10 << 12 | 12 << 19
    assert tile.core("brisc").reg("a2") == 1 | 1 << 6  # NOC_ID_LOGICAL's power-on value


def test_wormhole_results_and_cycles_do_not_depend_on_the_quantum():
    from tensixsim.demo import run_demo

    tiles = [run_demo(quantum=q, arch="wormhole")[0] for q in (200, 2000)]
    first, second = (np.frombuffer(t.read(0x20000, 0x1000), np.uint8) for t in tiles)
    assert (first == second).all()
    summaries = [{n: (s.exit_code, s.cycles) for n, s in t.result().cores.items()} for t in tiles]
    assert summaries[0] == summaries[1]


def test_reloading_the_instruction_ram_runs_the_new_code():
    # Translated code from the instruction RAM is dropped when the RAM is rewritten.
    iram = 0xFFC00000
    tile = Tile("wormhole")
    tile.load_elf("ncrisc", link(f"li t0, 0x{iram:x}\n jr t0", text=0x12000, march=RV32IM))
    for value in (0x11, 0x22):
        tile.load_elf("ncrisc", link(f"li a0, {value}\n ecall", text=iram, march=RV32IM, extra=("-N",)))
        assert tile.run(release=["ncrisc"]).cores["ncrisc"].exit_code == value
        tile.reset()


def test_the_debug_bus_shows_a_cores_pc_at_wormholes_selection():
    # tt-exalens's Wormhole signal map: trisc0_pc at read select 0, daisy 7, signal 2 * 6, mask
    # 0x7FFFFFFF (Blackhole's read select 1, signal 2 * 6 + 1 is another signal here).
    select = 1 << 29 | 7 << 16 | 12
    tile = wormhole_tile(
        {"brisc": f"li t0, 0xFFB12054\n li t1, {select}\n sw t1, 0(t0)\n lw a0, 8(t0)\n ecall"}
    )
    result = tile.run(release=["brisc"])
    assert result.cores["brisc"].exit_code == RESET_PC["trisc0"]  # held in reset at its reset pc
    blackhole_select = 1 << 29 | 1 << 25 | 7 << 16 | 13
    tile = wormhole_tile(
        {"brisc": f"li t0, 0xFFB12054\n li t1, {blackhole_select}\n sw t1, 0(t0)\n lw a0, 8(t0)\n ecall"}
    )
    with pytest.raises(Unimplemented):
        tile.run(release=["brisc"])


def _timed(arch: str, body: str, setup: str = "") -> int:
    """Wall-clock cycles BRISC of an ``arch`` tile takes over ``body`` (assembly)."""
    source = f"""
        {setup}
        li t0, 0xFFB121F0     # the wall clock
        lw s1, 0(t0)
        {body}
        lw s2, 0(t0)
        sub a0, s2, s1
        ecall
    """
    tile = Tile(arch)
    tile.load_elf("brisc", link(source, text=RESET_PC["brisc"], march=RV32IM))
    return tile.run(release=["brisc"]).cores["brisc"].exit_code


@pytest.mark.parametrize("arch", ["wormhole", "blackhole"])
def test_a_mispredicted_branch_costs_the_chips_bubble(arch):
    """64 iterations of a branch that is always taken (mispredicted once, while its counter learns)
    against one that alternates (mispredicted every time, and 32 more addi): 63 bubbles and 32
    cycles apart. BabyRISCV README: two cycles on Wormhole, four on Blackhole."""

    def cycles(toggle: int) -> int:
        loop = f"""
        1:  beqz a4, 2f
            addi a5, a5, 1
        2:  xori a4, a4, {toggle}
            addi s0, s0, -1
            bnez s0, 1b
        """
        return _timed(arch, loop, setup="li s0, 64\nli a4, 0")

    bubble = {"wormhole": 2, "blackhole": 4}[arch]
    assert cycles(1) - cycles(0) == 63 * bubble + 32


@pytest.mark.parametrize("arch", ["wormhole", "blackhole"])
def test_multiplies_and_l1_stores_at_each_chips_rate(arch):
    """16 independent mul against 16 add: a Wormhole multiply holds the next instruction one cycle
    (it occupies the Integer Unit for two), a Blackhole one does not. Sustained L1 stores (the 16
    sw after the first 16, filling 16-byte blocks word by word): one every five cycles on Wormhole
    (no coalescing), one a cycle on Blackhole (whole blocks coalesced). Each chip's BabyRISCV
    README."""
    setup = "li t1, 0x20000\nli a2, 3"
    adds = _timed(arch, "\n".join(f"add a{3 + i % 4}, a2, a2" for i in range(16)), setup)
    muls = _timed(arch, "\n".join(f"mul a{3 + i % 4}, a2, a2" for i in range(16)), setup)
    stores = [_timed(arch, "\n".join(f"sw a2, {4 * i}(t1)" for i in range(n)), setup) for n in (16, 32)]
    wormhole = arch == "wormhole"
    assert muls - adds == (16 if wormhole else 0)
    assert stores[1] - stores[0] == 16 * (5 if wormhole else 1)
