"""ELFs linked the way Tenstorrent's test tools link them (tt-llk's and tt-exalens's): code at an
address no core starts at, and what they link into the core's local RAM staged by the host at their
.loader_init section, which their own start-up code copies across. ``load_elf`` places them as those
tools' loaders do and makes the core start at the entry (``Tile.start_at``)."""

from __future__ import annotations

import pytest
from asm import link

from tensixsim import InvalidProgram, Tile

STAGE, RESULT, MAGIC = 0x21000, 0x30000, 0x5A17C0DE
CODE = {"brisc": 0x20000, "ncrisc": 0x24000, "trisc0": 0x28000, "trisc1": 0x2C000, "trisc2": 0x34000}


def staged_program(core: str, loader_init: bool = True) -> str:
    """A program whose start-up copies four words from the staging area into local RAM, then stores
    the first word of its local-RAM data at RESULT + 4 * (its code's index)."""
    copy = f"""
        li t0, {STAGE + 0x400 * list(CODE).index(core)}
        li t1, 0xFFB00000
        li t2, 4
    1:  lw t3, 0(t0)
        sw t3, 0(t1)
        addi t0, t0, 4
        addi t1, t1, 4
        addi t2, t2, -1
        bnez t2, 1b
    """
    body = f"""
        {copy if loader_init else ""}
        li t0, 0xFFB00000
        lw t1, 0(t0)
        li t2, {RESULT + 4 * list(CODE).index(core)}
        sw t1, 0(t2)
        ecall
        .section .data
        .word {MAGIC}, 1, 2, 3
    """
    if loader_init:
        body += '\n.section .loader_init, "aw", @nobits\n.space 0x100\n'
    return body


def elf_for(core: str, loader_init: bool = True):
    # (RV32IM: an image either chip's cores run)
    extra = ["-n", "--section-start=.data=0xffb00000"]  # (-n: no headers in a segment)
    if loader_init:
        extra.append(f"--section-start=.loader_init=0x{STAGE + 0x400 * list(CODE).index(core):x}")
    return link(staged_program(core, loader_init), text=CODE[core], march="rv32im", extra=tuple(extra))


@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
@pytest.mark.parametrize("core", list(CODE))
def test_a_staged_elf_starts_at_its_entry_and_its_start_up_finds_its_data(arch, core):
    tile = Tile(arch)
    tile.load_elf(core, elf_for(core))
    index = list(CODE).index(core)
    # The local-RAM data went to the staging area, not into local RAM (the program copies it).
    assert int.from_bytes(tile.read(STAGE + 0x400 * index, 4), "little") == MAGIC
    assert not tile.local_ram[core][:4].any()
    result = tile.run(release=[core], max_cycles=10**5)
    assert result.cores[core].exit_code is not None
    assert int.from_bytes(tile.read(RESULT + 4 * index, 4), "little") == MAGIC
    assert tile.reset_pc_of(core) == (0 if core == "brisc" else CODE[core])


@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_without_a_staging_area_the_data_is_loaded_in_place(arch):
    tile = Tile(arch)
    tile.load_elf("trisc1", elf_for("trisc1", loader_init=False))
    assert int.from_bytes(tile.local_ram["trisc1"][:4].tobytes(), "little") == MAGIC
    tile.run(release=["trisc1"], max_cycles=10**5)
    assert int.from_bytes(tile.read(RESULT + 4 * 3, 4), "little") == MAGIC


def test_brisc_reaches_its_entry_through_a_jump_at_its_reset_pc():
    tile = Tile("blackhole")
    tile.load_elf("brisc", elf_for("brisc"))
    word = int.from_bytes(tile.read(0, 4), "little")
    assert word & 0x7F == 0x6F and (word >> 7) & 31 == 0  # jal x0, ...
    # J-type immediate, hand-decoded: the jump lands on the entry.
    imm = (
        (word >> 31) << 20
        | ((word >> 12) & 0xFF) << 12
        | ((word >> 20) & 1) << 11
        | ((word >> 21) & 0x3FF) << 1
    )
    assert imm == CODE["brisc"]


def test_a_core_released_where_nothing_is_loaded_names_the_entry_of_its_elf():
    tile = Tile("wormhole")
    tile.load_elf("trisc0", elf_for("trisc0"))
    tile.start_at("trisc0", 0x6000)  # (put back to its default: nothing there)
    with pytest.raises(InvalidProgram, match=r"enters at 0x28000: tile.start_at\('trisc0', 0x28000\)"):
        tile.run(release=["trisc0"], max_cycles=10**5)
