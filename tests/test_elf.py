"""ELF loading: good images land where they belong, bad ones are refused and change nothing."""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import pytest
from asm import link

from tensixsim import InvalidProgram, Tile

PROGRAM = """
    la t0, value
    lw a0, 0(t0)
    ecall
    .data
value: .word 0x1234
"""


def digest(tile: Tile) -> int:
    crc = zlib.crc32(tile.l1)
    for ram in tile.local_ram.values():
        crc = zlib.crc32(ram, crc)
    return crc


def rejected(path: Path, core: str = "brisc") -> InvalidProgram:
    tile = Tile("blackhole")
    tile.l1[:16] = 0xA5
    before = digest(tile)
    with pytest.raises(InvalidProgram) as info:
        tile.load_elf(core, path)
    assert digest(tile) == before, "a rejected load must leave the tile unchanged"
    return info.value


def test_segments_go_to_l1_and_local_ram_and_symbols_are_kept():
    elf = link(PROGRAM, text=0x0, extra=("-Tdata=0xFFB00000",))
    tile = Tile("blackhole")
    tile.load_elf("brisc", elf)
    assert int.from_bytes(tile.local_ram["brisc"][:4].tobytes(), "little") == 0x1234
    assert tile.core("brisc").symbols["value"] == 0xFFB00000
    assert tile.run().cores["brisc"].exit_code == 0x1234


def test_local_ram_segment_goes_to_the_named_core():
    elf = link(PROGRAM, text=0x6000, extra=("-Tdata=0xFFB00000",))
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    assert tile.local_ram["trisc0"][:4].tobytes() == (0x1234).to_bytes(4, "little")
    assert not tile.local_ram["brisc"].any()


def test_non_riscv_elf_is_rejected():
    error = rejected(Path(sys.executable).resolve())
    assert "not a RISC-V ELF" in str(error)


def test_rv64_elf_is_rejected(tmp_path):
    elf = link("nop", march="rv64i", abi="lp64", extra=("-m", "elf64lriscv"))
    assert "64-bit" in str(rejected(elf))


def test_compressed_elf_is_rejected():
    elf = link(".option rvc\n c.nop\n c.nop", march="rv32imc")
    assert "compressed" in str(rejected(elf))


def test_floating_point_extension_is_rejected():
    elf = link("nop", march="rv32imf")
    assert "f" in str(rejected(elf))


def test_big_endian_is_rejected(tmp_path):
    raw = bytearray(link(PROGRAM, extra=("-Tdata=0xFFB00000",)).read_bytes())
    raw[5] = 2  # EI_DATA = ELFDATA2MSB
    path = tmp_path / "be.elf"
    path.write_bytes(raw)
    rejected(path)


def _patched(tmp_path: Path, name: str, patch) -> Path:
    """PROGRAM's ELF with ``patch(raw, header)`` applied to its bytes (header: ELF32 e_* offsets)."""
    raw = bytearray(link(PROGRAM, extra=("-Tdata=0xFFB00000",)).read_bytes())
    phoff, shoff = struct.unpack_from("<II", raw, 28)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", raw, 42)
    patch(raw, dict(phoff=phoff, shoff=shoff, phentsize=phentsize, phnum=phnum, shentsize=shentsize,
                    shnum=shnum))  # fmt: skip
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def test_file_size_beyond_memory_size_is_rejected_before_loading(tmp_path):
    def grow_first_load(raw, h):
        for i in range(h["phnum"]):
            at = h["phoff"] + i * h["phentsize"]
            if struct.unpack_from("<I", raw, at)[0] == 1:  # PT_LOAD
                memsz = struct.unpack_from("<I", raw, at + 20)[0]
                struct.pack_into("<I", raw, at + 16, memsz + 64)  # p_filesz past p_memsz
                return

    path = _patched(tmp_path, "filesz.elf", grow_first_load)
    tile = Tile("blackhole")
    before = digest(tile)
    with pytest.raises(InvalidProgram, match=r"file size .* exceeds its memory size"):
        tile.load_elf("brisc", path)
    assert digest(tile) == before  # nothing was written


def test_symtab_of_another_section_type_is_rejected(tmp_path):
    def retype_symtab(raw, h):
        for i in range(h["shnum"]):
            at = h["shoff"] + i * h["shentsize"]
            if struct.unpack_from("<I", raw, at + 4)[0] == 2:  # SHT_SYMTAB
                struct.pack_into("<I", raw, at + 4, 1)  # SHT_PROGBITS
                return
        raise AssertionError("no symbol table")

    error = rejected(_patched(tmp_path, "symtab.elf", retype_symtab))
    assert ".symtab is not a symbol table" in str(error)


def test_segment_outside_l1_and_local_ram_is_rejected():
    elf = link("nop", text=0x180000)  # L1 ends at 1536 KiB = 0x180000
    error = rejected(elf)
    assert "outside L1" in str(error) and "..0x00180004" in str(error)


def test_other_cores_local_ram_window_is_out_of_range_for_trisc():
    # TRISC local RAM is 4 KiB: a data segment at 0xFFB01000 does not fit it.
    elf = link(PROGRAM, text=0x6000, extra=("-Tdata=0xFFB01000",))
    assert "outside" in str(rejected(elf, "trisc0"))


def test_overlapping_segments_are_rejected(tmp_path):
    elf = link(PROGRAM, text=0x0, extra=("-Tdata=0x4", "--no-check-sections"))
    raw = bytearray(elf.read_bytes())
    (phoff,) = struct.unpack_from("<I", raw, 28)
    phentsize, phnum = struct.unpack_from("<HH", raw, 42)
    loads = [
        phoff + i * phentsize
        for i in range(phnum)
        if struct.unpack_from("<I", raw, phoff + i * phentsize)[0] == 1
    ]
    assert len(loads) >= 2, "the linker should emit .text and .data as two PT_LOAD segments"
    path = tmp_path / "overlap.elf"
    path.write_bytes(raw)
    assert "overlapping" in str(rejected(path))


@pytest.mark.parametrize("size", [0, 10, 52, 200])
def test_truncated_elf_is_rejected(tmp_path, size):
    raw = link(PROGRAM, extra=("-Tdata=0xFFB00000",)).read_bytes()
    path = tmp_path / "cut.elf"
    path.write_bytes(raw[:size])
    rejected(path)


def test_missing_file_is_rejected(tmp_path):
    assert "cannot read" in str(rejected(tmp_path / "nope.elf"))


def test_unknown_core_name():
    with pytest.raises(KeyError):
        Tile("blackhole").load_elf("trisc3", "x.elf")


# ---------------------------------------------------------------------- corrupted headers
# Offsets of ELF32 fields: the file header's e_*, a program header's p_* and a section header's sh_*.
E_PHOFF, E_SHOFF, E_PHENTSIZE, E_PHNUM, E_SHENTSIZE, E_SHNUM, E_SHSTRNDX = 28, 32, 42, 44, 46, 48, 50
P_TYPE, P_OFFSET, P_PADDR, P_FILESZ, P_MEMSZ, P_FLAGS = 0, 4, 12, 16, 20, 24
SH_TYPE, SH_FLAGS, SH_OFFSET, SH_SIZE, SH_LINK, SH_ENTSIZE = 4, 8, 16, 20, 24, 36
PT_LOAD, SHT_SYMTAB, SHF_EXECINSTR = 1, 2, 4


class Headers:
    """PROGRAM's linked image, with where its program and section headers are."""

    def __init__(self, raw: bytearray) -> None:
        self.raw = raw
        phoff, shoff = struct.unpack_from("<II", raw, E_PHOFF)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", raw, E_PHENTSIZE)
        self.programs = [phoff + i * phentsize for i in range(phnum)]
        self.sections = [shoff + i * shentsize for i in range(shnum)]
        self.shentsize = shentsize

    def get(self, at: int) -> int:
        return struct.unpack_from("<I", self.raw, at)[0]

    def put(self, at: int, value: int, fmt: str = "<I") -> None:
        struct.pack_into(fmt, self.raw, at, value)

    @property
    def loads(self) -> list[int]:
        return [p for p in self.programs if self.get(p + P_TYPE) == PT_LOAD]

    @property
    def symtab(self) -> int:
        (at,) = [s for s in self.sections if self.get(s + SH_TYPE) == SHT_SYMTAB]
        return at

    @property
    def text(self) -> int:
        return next(s for s in self.sections if self.get(s + SH_FLAGS) & SHF_EXECINSTR)


def _past_end(h: Headers) -> int:
    return len(h.raw) + 0x1000


# name -> (the corruption, what the error says)
CORRUPTIONS = {
    "p_offset past the end": (
        lambda h: h.put(h.loads[0] + P_OFFSET, _past_end(h)),
        "past the end of the file",
    ),
    "p_offset in the last bytes": (
        lambda h: h.put(h.loads[0] + P_OFFSET, len(h.raw) - 4),
        "past the end of the file",
    ),
    "p_filesz past the end": (
        lambda h: (h.put(h.loads[0] + P_FILESZ, len(h.raw)), h.put(h.loads[0] + P_MEMSZ, len(h.raw) + 16)),
        "past the end of the file",
    ),
    "p_memsz beyond L1": (lambda h: h.put(h.loads[0] + P_MEMSZ, 0xFFFFFFF0), "outside L1"),
    "p_paddr wrapping": (lambda h: h.put(h.loads[0] + P_PADDR, 0xFFFFFFFC), "outside L1"),
    "every PT_LOAD retyped": (
        lambda h: [h.put(p + P_TYPE, 0) for p in h.loads],
        "no loadable segment",
    ),
    "e_phnum PN_XNUM with no count": (lambda h: h.put(E_PHNUM, 0xFFFF, "<H"), "no loadable segment"),
    "e_phentsize too small": (lambda h: h.put(E_PHENTSIZE, 8, "<H"), "e_phentsize"),
    "e_phoff past the end": (lambda h: h.put(E_PHOFF, _past_end(h)), "malformed ELF"),
    "e_shoff past the end": (lambda h: h.put(E_SHOFF, _past_end(h)), "malformed ELF"),
    "e_shnum too large": (lambda h: h.put(E_SHNUM, 0xFFFF, "<H"), "malformed ELF"),
    "e_shentsize zero": (lambda h: h.put(E_SHENTSIZE, 0, "<H"), "e_shentsize"),
    "e_shstrndx out of range": (lambda h: h.put(E_SHSTRNDX, 0x7FFF, "<H"), "malformed ELF"),
    ".symtab entry size zero": (lambda h: h.put(h.symtab + SH_ENTSIZE, 0), "entry size"),
    ".symtab bytes past the end": (lambda h: h.put(h.symtab + SH_OFFSET, _past_end(h)), "malformed ELF"),
    ".symtab size too large": (lambda h: h.put(h.symtab + SH_SIZE, 0x7FFFFFF0), "malformed ELF"),
    ".symtab linked to itself": (
        lambda h: h.put(h.symtab + SH_LINK, h.sections.index(h.symtab)),
        "expected SHT_STRTAB",
    ),
    ".symtab linked past the sections": (lambda h: h.put(h.symtab + SH_LINK, 999), "malformed ELF"),
    ".symtab's strings retyped": (
        lambda h: h.put(h.sections[h.get(h.symtab + SH_LINK)] + SH_TYPE, 1),  # SHT_PROGBITS
        "expected SHT_STRTAB",
    ),
    ".symtab retyped SHT_NOBITS": (lambda h: h.put(h.symtab + SH_TYPE, 8), "not a symbol table"),
    ".symtab retyped SHT_NOTE": (lambda h: h.put(h.symtab + SH_TYPE, 7), "not a symbol table"),
    ".symtab retyped SHT_DYNAMIC": (lambda h: h.put(h.symtab + SH_TYPE, 6), "not a symbol table"),
    ".symtab retyped SHT_REL": (lambda h: h.put(h.symtab + SH_TYPE, 9), "malformed ELF"),
    ".symtab retyped SHT_HASH": (lambda h: h.put(h.symtab + SH_TYPE, 5), "malformed ELF"),
    ".text bytes past the end": (
        lambda h: h.put(h.text + SH_OFFSET, _past_end(h)),
        "past the end of the file",
    ),
}


def _corrupted(tmp_path: Path, corrupt) -> Path:
    headers = Headers(bytearray(link(PROGRAM, extra=("-Tdata=0xFFB00000",)).read_bytes()))
    corrupt(headers)
    path = tmp_path / "corrupted.elf"
    path.write_bytes(headers.raw)
    return path


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupted_headers_are_rejected_and_the_tile_is_unchanged(tmp_path, name):
    corrupt, message = CORRUPTIONS[name]
    path = _corrupted(tmp_path, corrupt)
    tile = Tile("blackhole")
    tile.l1[:16] = 0xA5
    tile.local_ram["brisc"][:4] = 0x5A
    before = digest(tile)
    with pytest.raises(InvalidProgram, match=message) as info:
        tile.load_elf("brisc", path)
    assert type(info.value) is InvalidProgram and str(path) in str(info.value)
    assert digest(tile) == before, "a rejected load must leave the tile unchanged"
    assert tile.core("brisc").image is None and not tile.core("brisc").symbols


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda h: [h.put(p + P_FLAGS, 0) for p in h.programs], id="p_flags cleared"),
        pytest.param(lambda h: [h.put(p + P_FLAGS, 7) for p in h.programs], id="p_flags rwx"),
        pytest.param(lambda h: h.put(h.text + SH_TYPE, 8), id=".text retyped SHT_NOBITS"),
    ],
)
def test_header_fields_the_loader_does_not_use_change_nothing(tmp_path, corrupt):
    # The cores ignore segment permissions, and what is loaded comes from the program headers.
    good = Tile("blackhole")
    good.load_elf("brisc", link(PROGRAM, extra=("-Tdata=0xFFB00000",)))
    tile = Tile("blackhole")
    tile.load_elf("brisc", _corrupted(tmp_path, corrupt))
    assert digest(tile) == digest(good)
    assert tile.run().cores["brisc"].exit_code == 0x1234


def test_an_elf_linked_for_another_core_is_refused_naming_it():
    trisc1 = link("li a0, 0\n ecall", text=0xA000)
    tile = Tile("blackhole")
    before = tile.l1.copy()
    for core in ("brisc", "trisc0", "ncrisc"):
        with pytest.raises(InvalidProgram, match=f"linked for trisc1 .* not for {core}"):
            tile.load_elf(core, trisc1)
    assert (tile.l1 == before).all()
    tile.load_elf("trisc1", trisc1)  # its own core
    assert tile.run(release=["trisc1"]).cores["trisc1"].exit_code == 0


def _with_arch_attribute(isa: str, text: int = 0x6000) -> Path:
    """A TRISC0 program (text at its reset pc, data in a 2 KiB local RAM, as Wormhole's TRISCs
    have) whose ISA attribute is ``isa``, as tt-metal's toolchain records it."""
    source = f'.attribute arch, "{isa}"\n' + PROGRAM
    return link(source, text=text, march="rv32im", extra=("-Tdata=0xFFB00000",))


def test_a_wormhole_trisc_elf_is_refused_naming_both_architectures():
    from tensixsim import ArchitectureMismatch

    wormhole = _with_arch_attribute("rv32i2p0_m2p0_zmmul1p0_xtttensixwh1p0")
    error = rejected(wormhole, "trisc0")
    assert isinstance(error, ArchitectureMismatch)
    assert "built for wormhole" in str(error) and "this tile is blackhole" in str(error)
    assert "xtttensixwh" in str(error)


def test_an_unknown_tensix_extension_is_refused():
    error = rejected(_with_arch_attribute("rv32i2p0_m2p0_xtttensixqsr1p0"), "trisc0")
    assert "an unknown chip (xtttensixqsr)" in str(error)


@pytest.mark.parametrize(
    "isa",
    [
        "rv32i2p0_m2p0_zmmul1p0_zba1p0_zbb1p0_xtttensixbh1p0",  # Blackhole compute code
        "rv32i2p0_m2p0_zmmul1p0",  # no Tensix extension: nothing says which chip, and Blackhole runs RV32IM
    ],
)
def test_blackhole_and_plain_rv32im_trisc_elfs_load_and_run(isa):
    tile = Tile("blackhole")
    tile.load_elf("trisc0", _with_arch_attribute(isa))
    assert tile.run(release=["trisc0"]).cores["trisc0"].exit_code == 0x1234
