"""ELF loading with pyelftools.

An image is checked whole before anything is written, so a rejected load leaves the tile unchanged:
it must be a 32-bit little-endian RISC-V executable without compressed instructions or floating
point, and every PT_LOAD segment must fit in L1 or in the target core's local RAM without overlapping
another segment.
"""

from __future__ import annotations

import io
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from tensixsim.errors import ArchitectureMismatch, InvalidProgram

if TYPE_CHECKING:
    from tensixsim.arch import Arch
    from tensixsim.tile import Tile

_EF_RISCV_RVC = 0x1
_EF_RISCV_FLOAT_ABI = 0x6
# Extensions a Blackhole/Wormhole baby core can execute (zicsr/zifencei are implied by the base
# here; zmmul is a subset of m; zaamo is the atomic-memory-operation half of a).
_SUPPORTED = {"i", "m", "a", "zicsr", "zifencei", "zmmul", "zaamo", "zalrsc", "zba", "zbb"}


@dataclass(frozen=True)
class Segment:
    address: int
    data: bytes
    memsz: int


@dataclass(frozen=True)
class ElfImage:
    """What a checked ELF holds: loadable segments, entry point, symbols, Tensix-word ranges."""

    path: str
    entry: int
    segments: tuple[Segment, ...]
    symbols: dict[str, int]
    text_ranges: tuple[tuple[int, bytes], ...]  # executable sections: (address, bytes)
    isa: str | None
    # Where the image's own start-up code expects the host to have put what it links into the core's
    # local RAM (and instruction RAM): the addresses of sections .loader_init (.loader_code), whose
    # start-up code copies them across (tt-llk's and tt-exalens's test ELFs); None: loaded in place.
    loader_data: int | None = None
    loader_code: int | None = None


def _invalid(path: Path, message: str, value: int | None = None) -> InvalidProgram:
    return InvalidProgram(f"{path}: {message}", value=value)


def riscv_extensions(isa: str) -> set[str]:
    """Extension names of an ISA string such as ``rv32i2p1_m2p0_zba1p0``."""
    match = re.match(r"rv(32|64)([a-z])(\d+p\d+)?(.*)", isa)
    if not match:
        return set()
    names = {match.group(2)}
    rest = match.group(4)
    for part in filter(None, rest.split("_")):
        name = re.sub(r"\d+p\d+$", "", part)
        if name.startswith(("z", "x", "s")):
            names.add(name)
        else:
            names.update(name)  # single-letter extensions run together: "mafd"
    return names


def _isa_string(elf: ELFFile) -> str | None:
    section = elf.get_section_by_name(".riscv.attributes")
    if section is None:
        return None
    data = section.data()
    match = re.search(rb"rv(32|64)[a-z0-9_]+", data)
    return match.group(0).decode() if match else None


def read_elf(path: Path) -> ElfImage:
    """Parse and check ``path``; raise InvalidProgram naming what is wrong."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _invalid(path, f"cannot read: {exc.strerror}") from None
    try:
        elf = ELFFile(io.BytesIO(raw))
        if elf["e_machine"] != "EM_RISCV":
            raise _invalid(path, f"not a RISC-V ELF (machine {elf['e_machine']})")
        if elf.elfclass != 32:
            raise _invalid(path, f"{elf.elfclass}-bit ELF; the baby cores are RV32")
        if not elf.little_endian:
            raise _invalid(path, "big-endian ELF")
        flags = elf["e_flags"]
        if flags & _EF_RISCV_RVC:
            raise _invalid(path, "built with compressed instructions (the cores have no C extension)", flags)
        if flags & _EF_RISCV_FLOAT_ABI:
            raise _invalid(path, "built for a floating-point ABI (the cores have no FPU)", flags)
        isa = _isa_string(elf)
        if isa is not None:
            unsupported = {e for e in riscv_extensions(isa) - _SUPPORTED if not e.startswith("x")}
            if unsupported:
                raise _invalid(
                    path, f"needs ISA extensions the cores lack: {', '.join(sorted(unsupported))} ({isa})"
                )
        segments = []
        for segment in elf.iter_segments():
            if segment["p_type"] != "PT_LOAD" or segment["p_memsz"] == 0:
                continue
            if segment["p_filesz"] > segment["p_memsz"]:
                raise _invalid(
                    path,
                    f"a program header's file size 0x{segment['p_filesz']:x} exceeds its memory size "
                    f"0x{segment['p_memsz']:x}",
                    segment["p_paddr"],
                )
            data = segment.data()
            if len(data) != segment["p_filesz"]:
                # The reader returns what is there: loading it would zero-fill the rest silently.
                raise _invalid(
                    path,
                    f"a program header's file bytes 0x{segment['p_offset']:x}..0x"
                    f"{segment['p_offset'] + segment['p_filesz']:x} lie past the end of the file "
                    f"(0x{len(raw):x} bytes)",
                    segment["p_offset"],
                )
            segments.append(Segment(segment["p_paddr"], data, segment["p_memsz"]))
        symbols: dict[str, int] = {}
        symtab = elf.get_section_by_name(".symtab")
        if symtab is not None and not isinstance(symtab, SymbolTableSection):
            raise _invalid(path, f".symtab is not a symbol table (section type {symtab['sh_type']})")
        if symtab is not None:
            for symbol in symtab.iter_symbols():
                if symbol.name and symbol["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE"):
                    symbols.setdefault(symbol.name, symbol["st_value"])
        code = [
            s
            for s in elf.iter_sections()
            if s["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and s["sh_type"] == "SHT_PROGBITS"
        ]
        text = tuple((s["sh_addr"], s.data()) for s in code)
        for section, (_, data) in zip(code, text, strict=True):
            if len(data) != section["sh_size"]:
                raise _invalid(
                    path,
                    f"section {section.name or '?'}'s bytes 0x{section['sh_offset']:x}..0x"
                    f"{section['sh_offset'] + section['sh_size']:x} lie past the end of the file "
                    f"(0x{len(raw):x} bytes)",
                    section["sh_offset"],
                )
        staging = {
            name: section["sh_addr"]
            for name in (".loader_init", ".loader_code")
            if (section := elf.get_section_by_name(name)) is not None
        }
        return ElfImage(
            str(path),
            elf["e_entry"],
            tuple(segments),
            symbols,
            text,
            isa,
            staging.get(".loader_init"),
            staging.get(".loader_code"),
        )
    except ELFError as exc:
        raise _invalid(path, f"malformed ELF: {exc}") from None
    except (ValueError, KeyError, IndexError, AssertionError) as exc:
        raise _invalid(path, f"malformed ELF: {exc}") from None


def _place(tile: Tile, core: str, segment: Segment, path: Path) -> tuple[str, int]:
    """Which buffer a segment goes to: ("l1" | core name, offset)."""
    arch = tile.arch
    end = segment.address + segment.memsz
    if segment.address >= 0 and end <= arch.l1_size:
        return "l1", segment.address
    facts = arch.core(core)
    base = arch.local_ram_base
    if base <= segment.address and end <= base + facts.local_ram_size:
        return core, segment.address - base
    if facts.iram is not None and facts.iram[0] <= segment.address and end <= facts.iram[0] + facts.iram[1]:
        # The loader fills the instruction RAM directly (on the hardware the mover copies it from L1).
        return "iram", segment.address - facts.iram[0]
    rams = f"{core}'s local RAM" + (" and instruction RAM" if facts.iram is not None else "")
    raise _invalid(
        path,
        f"segment 0x{segment.address:08x}..0x{end:08x} is outside L1 and {rams}",
        segment.address,
    )


# Base extensions that name a chip when the image needs them (its cores execute them; the other's
# do not). Zicsr is left out: a program may be built with it and never touch a CSR.
_CHIP_EXTENSIONS = {"a", "zaamo", "zba", "zbb"}


def check_architecture(arch: Arch, image: ElfImage) -> None:
    """Refuse an image built for another architecture, naming both.

    Two marks tell: the Tensix extension Tenstorrent's toolchain (and the SDK, for Wormhole) records
    (``xtttensixbh``, ``xtttensixwh``) names the chip; and base extensions the tile's cores lack but
    another chip's have (Blackhole's A/Zaamo, Zba, Zbb on a Wormhole tile). A plain RV32IM image
    without a Tensix extension (tt-metal's Wormhole BRISC and NCRISC firmware) names no chip: it
    loads on both, since Blackhole's cores run RV32IM.
    """
    if image.isa is None:
        return
    from tensixsim.arch import ARCHES  # the table of every architecture, not just this tile's

    extensions = riscv_extensions(image.isa)
    foreign = {e for e in extensions if e.startswith("xtttensix")} - {arch.tensix_isa_extension}
    if foreign:
        named = {a.tensix_isa_extension: a.name for a in ARCHES.values()}
        built_for = ", ".join(named.get(e, f"an unknown chip ({e})") for e in sorted(foreign))
        raise ArchitectureMismatch(
            f"{image.path}: built for {built_for} (ISA {image.isa}), but this tile is {arch.name}"
        )
    lacking = (extensions & _CHIP_EXTENSIONS) - _core_extensions(arch)
    if lacking:
        owners = [a.name for a in ARCHES.values() if a.name != arch.name and lacking <= _core_extensions(a)]
        built_for = " or ".join(owners) if owners else "another chip"
        raise ArchitectureMismatch(
            f"{image.path}: built for {built_for} (ISA {image.isa} needs {', '.join(sorted(lacking))}), "
            f"but this tile is {arch.name}, whose cores lack them"
        )


def _core_extensions(arch: Arch) -> set[str]:
    """The chip-naming base extensions ``arch``'s cores execute."""
    names = set(riscv_extensions(arch.isa_string_prefix))
    if arch.has_zaamo:
        names |= {"a", "zaamo"}  # (the SDK asks GCC 12 for "a": it has no zaamo)
    return names & _CHIP_EXTENSIONS


def load_elf(tile: Tile, core: str, path: Path) -> ElfImage:
    """Check ``path`` and write its segments; the tile is untouched when it is rejected."""
    facts = tile.arch.core(core)  # unknown core names fail before reading anything
    image = read_elf(path)
    check_architecture(tile.arch, image)
    if image.entry != facts.default_reset_pc:
        # Linked for another core: this one would start at its own reset pc, in someone else's code
        # or in nothing. (An entry no core starts at is the caller's business: a reset-PC override.)
        owner = next((c.name for c in tile.arch.cores if c.default_reset_pc == image.entry), None)
        if owner is not None:
            raise _invalid(
                path,
                f"linked for {owner} (its entry 0x{image.entry:x} is {owner}'s reset pc), not for {core} "
                f"(which starts at 0x{facts.default_reset_pc:x})",
                image.entry,
            )
    if not image.segments:
        # Loading it would change nothing: a relocatable object, or headers lost to corruption.
        raise _invalid(path, "no loadable segment (no PT_LOAD program header with a memory size)")
    # (the staging areas' own zero-filled placeholders give way to what is staged there)
    staging = {image.loader_data, image.loader_code} - {None}
    segments = [seg for seg in image.segments if not (seg.address in staging and not seg.data)]
    placed = [(_place(tile, core, _staged(tile, core, image, seg), path), seg) for seg in segments]
    spans = sorted((buffer, off, off + seg.memsz) for (buffer, off), seg in placed)
    for (b1, _, end1), (b2, start2, _) in itertools.pairwise(spans):
        if b1 == b2 and start2 < end1:
            raise _invalid(path, f"overlapping segments in {b1} at offset 0x{start2:x}", start2)
    for (buffer, offset), segment in placed:
        rams = {"l1": tile.l1, "iram": tile.iram.get(core)}
        target = rams[buffer] if buffer in rams else tile.local_ram[buffer]
        target[offset : offset + len(segment.data)] = memoryview(segment.data)
        target[offset + len(segment.data) : offset + segment.memsz] = 0
        if buffer == "iram":
            base = tile.arch.core(core).iram[0]
            tile.core(core).forget_code_range(base + offset, base + offset + segment.memsz)
    tile.core(core).symbols.update(image.symbols)
    tile.core(core).add_image(image)
    if image.entry != facts.default_reset_pc and not any(
        seg.address <= facts.default_reset_pc < seg.address + seg.memsz for seg in image.segments
    ):
        # Linked to start elsewhere: the core starts at the entry, as a host's loader makes it do
        # (a reset-PC override, or BRISC's jump from its reset pc).
        tile.start_at(core, image.entry)
    return image


def _staged(tile: Tile, core: str, image: ElfImage, segment: Segment) -> Segment:
    """``segment`` where the host puts it: at ``image``'s staging area in L1 if it links into the
    core's local RAM (instruction RAM) and the image has one, else where it links."""
    facts = tile.arch.core(core)
    rams = [(tile.arch.local_ram_base, facts.local_ram_size, image.loader_data)]
    if facts.iram is not None:
        rams.append((facts.iram[0], facts.iram[1], image.loader_code))
    for base, size, staging in rams:
        if staging is not None and base <= segment.address < base + size:
            return Segment(segment.address - base + staging, segment.data, segment.memsz)
    return segment
