"""The shape of the Tensix instruction table, and encode / decode / disassemble over it.

A Tensix instruction is one 32-bit word: the opcode in bits 31..24, operand fields in bits 23..0.
The per-architecture tables (``blackhole.py``, ``wormhole.py``) are data only; this module holds
the classes, the mapping from the reference's execution resources to our unit modules, and the
checks that keep a table well-formed. Nothing else in the emulator spells an opcode.

Field order: every instruction lists its fields highest bits first. That is the order of the
arguments of the ``TT_OP_<NAME>`` C macros and of the operands the Tenstorrent toolchain's objdump
prints, so one order serves the encoder, the disassembler and the SDK header.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from tensixsim.errors import InvalidInstruction

OPCODE_SHIFT = 24
OPERAND_BITS = 24
OPERAND_MASK = (1 << OPERAND_BITS) - 1
WORD_MASK = 0xFFFF_FFFF

# A word in a TRISC's instruction stream is the instruction rotated left by 2. The core tells a
# Tensix word from a RISC-V one by its low two bits (0b11 means RISC-V), and those are the
# opcode's top two bits after rotation, so only opcodes below 0xC0 can be written inline.
INLINE_OPCODE_LIMIT = 0xC0

# Our backend modules, one per hardware block (see design.md). "misc" is for an instruction no
# block claims; no current entry needs it.
UNITS = ("frontend", "sync", "thcon", "config", "unpack", "matrix", "pack", "sfpu", "xmov", "misc")

# tt-llk's assembly.yaml names an execution resource per instruction; this is the one place that
# maps it to our unit. Entries the mapping gets wrong carry an explicit ``unit=`` override in the
# arch table, with the reason next to it.
RESOURCE_UNITS: Mapping[str, str] = MappingProxyType(
    {
        "NONE": "frontend",  # NOP, REPLAY, RESOURCEDECL: consumed before the backend
        "SYNC": "sync",
        "THCON": "thcon",
        "CFG": "config",
        # The yaml's TDMA resource holds the address-counter (ADC) instructions, which set up
        # unpacker and packer addressing; they are filed with the unpackers. The two other
        # TDMA entries (SETDVALID, DMANOP) are overridden in the tables.
        "TDMA": "unpack",
        "UNPACK": "unpack",
        "MATH": "matrix",
        "PACK": "pack",
        "SFPU": "sfpu",
        "XMOV": "xmov",
    }
)

# Fields at least this wide print in hex in the disassembly (addresses, masks, immediates).
_HEX_WIDTH = 8


def to_stream_word(word: int) -> int:
    """The word as it appears inline in a TRISC's instruction stream (rotated left by 2)."""
    return ((word << 2) | (word >> 30)) & WORD_MASK


def from_stream_word(stream_word: int) -> int:
    """The instruction word a core pushes for an inline stream word (rotated right by 2)."""
    return ((stream_word >> 2) | (stream_word << 30)) & WORD_MASK


@dataclass(frozen=True)
class Field:
    """One operand field: ``width`` bits starting at bit ``lo`` of the 32-bit word."""

    name: str
    lo: int
    width: int

    @property
    def hi(self) -> int:
        return self.lo + self.width - 1

    @property
    def max_value(self) -> int:
        return (1 << self.width) - 1

    @property
    def mask(self) -> int:
        """The field's bits in place within the word."""
        return self.max_value << self.lo

    def extract(self, word: int) -> int:
        return (word >> self.lo) & self.max_value


@dataclass(frozen=True)
class InstrSpec:
    """One instruction: its name, opcode, operand fields (highest bits first) and unit."""

    name: str
    opcode: int
    fields: tuple[Field, ...]
    unit: str

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"instruction name {self.name!r} is not an identifier")
        if not 0 <= self.opcode <= 0xFF:
            raise ValueError(f"{self.name}: opcode 0x{self.opcode:x} does not fit in 8 bits")
        if self.unit not in UNITS:
            raise ValueError(f"{self.name}: unknown unit {self.unit!r}; known: {', '.join(UNITS)}")
        seen_bits = 0
        seen_names: set[str] = set()
        for f in self.fields:
            if not f.name.isidentifier():
                raise ValueError(f"{self.name}: field name {f.name!r} is not an identifier")
            if f.name in seen_names:
                raise ValueError(f"{self.name}: field {f.name} declared twice")
            if f.width < 1 or f.lo < 0 or f.hi >= OPERAND_BITS:
                raise ValueError(
                    f"{self.name}.{f.name}: bits {f.hi}..{f.lo} are outside the operand bits 23..0"
                )
            if seen_bits & f.mask:
                raise ValueError(f"{self.name}.{f.name}: overlaps another field")
            seen_bits |= f.mask
            seen_names.add(f.name)
        if [f.lo for f in self.fields] != sorted((f.lo for f in self.fields), reverse=True):
            raise ValueError(f"{self.name}: fields must be listed highest bits first")

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def unassigned_mask(self) -> int:
        """Operand bits no field covers. The references leave them unnamed; decoding keeps them
        in ``Instruction.word`` and the disassembly shows them if set."""
        used = 0
        for f in self.fields:
            used |= f.mask
        return OPERAND_MASK & ~used

    @property
    def inlinable(self) -> bool:
        """Whether a TRISC can carry this instruction inline in its instruction stream."""
        return self.opcode < INLINE_OPCODE_LIMIT


def declare(
    name: str,
    opcode: int,
    resource: str,
    *fields: tuple[str, int, int],
    unit: str | None = None,
) -> InstrSpec:
    """One table entry: ``resource`` is the reference's execution resource, mapped through
    :data:`RESOURCE_UNITS` unless ``unit`` overrides it."""
    if unit is None:
        if resource not in RESOURCE_UNITS:
            raise ValueError(f"{name}: no unit for execution resource {resource!r}")
        unit = RESOURCE_UNITS[resource]
    return InstrSpec(name, opcode, tuple(Field(*f) for f in fields), unit)


@dataclass(frozen=True)
class Instruction:
    """A decoded instruction word. ``fields`` is derived from ``word``; equality and hashing use
    the spec and the word alone."""

    spec: InstrSpec
    word: int
    fields: Mapping[str, int] = field(compare=False)

    def __post_init__(self) -> None:
        # A plain dict handed in by a caller must not stay mutable behind a frozen instance.
        if not isinstance(self.fields, MappingProxyType):
            object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def opcode(self) -> int:
        return self.spec.opcode

    @property
    def unit(self) -> str:
        return self.spec.unit

    def __getitem__(self, field_name: str) -> int:
        return self.fields[field_name]


def _elsewhere(arch: str, opcode: int) -> list[tuple[str, str]]:
    """(architecture, instruction) of every other architecture that has ``opcode``."""
    from tensixsim.isa import ARCH_NAMES, isa_for  # the package builds every table through here

    found = []
    for other in ARCH_NAMES:
        if other != arch:
            spec = isa_for(other).by_opcode.get(opcode)
            if spec is not None:
                found.append((other, spec.name))
    return found


class IsaTable:
    """The instruction set of one architecture: lookup by name and opcode, encode, decode and
    disassemble. Validates the whole table when built."""

    def __init__(self, arch: str, specs: Iterable[InstrSpec]) -> None:
        self.arch = arch
        by_name: dict[str, InstrSpec] = {}
        by_opcode: dict[int, InstrSpec] = {}
        for spec in specs:
            if spec.name in by_name:
                raise ValueError(f"{arch}: instruction {spec.name} declared twice")
            if spec.opcode in by_opcode:
                other = by_opcode[spec.opcode].name
                raise ValueError(f"{arch}: {spec.name} and {other} share opcode 0x{spec.opcode:02x}")
            by_name[spec.name] = spec
            by_opcode[spec.opcode] = spec
        self.by_name: Mapping[str, InstrSpec] = MappingProxyType(by_name)
        self.by_opcode: Mapping[int, InstrSpec] = MappingProxyType(dict(sorted(by_opcode.items())))
        # Decoding is on the emulator's hot path and programs repeat the same few hundred words
        # (MOP and replay bodies); Instruction is immutable, so caching is safe.
        self._decode_cached = lru_cache(maxsize=8192)(self._decode)

    def __iter__(self) -> Iterator[InstrSpec]:
        """Every instruction, in opcode order."""
        return iter(self.by_opcode.values())

    def __len__(self) -> int:
        return len(self.by_opcode)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __repr__(self) -> str:
        return f"IsaTable({self.arch!r}, {len(self)} instructions)"

    def encode(self, name: str, /, **fields: int) -> int:
        """The 32-bit word for instruction ``name`` with every field given by keyword."""
        spec = self.by_name.get(name)
        if spec is None:
            raise ValueError(f"{self.arch}: unknown instruction {name!r}")
        unknown = set(fields) - set(spec.field_names)
        if unknown:
            raise ValueError(
                f"{name}: unknown field(s) {', '.join(sorted(unknown))}; "
                f"fields are {', '.join(spec.field_names) or '(none)'}"
            )
        word = spec.opcode << OPCODE_SHIFT
        for f in spec.fields:
            if f.name not in fields:
                raise ValueError(f"{name}: missing field {f.name}")
            value = fields[f.name]
            if not isinstance(value, int):
                raise TypeError(f"{name}.{f.name}: {value!r} is not an integer")
            if not 0 <= value <= f.max_value:
                raise ValueError(
                    f"{name}.{f.name}: {value} does not fit in {f.width} bits (0..{f.max_value})"
                )
            word |= value << f.lo
        return word

    def decode(self, word: int) -> Instruction:
        """The instruction a pushed (unrotated) 32-bit word holds.

        Raises :class:`InvalidInstruction` if no entry has the word's opcode. Bits outside every
        field are kept in ``word`` and not checked: the references do not say the hardware
        rejects them.
        """
        if not 0 <= word <= WORD_MASK:
            raise InvalidInstruction(f"{self.arch}: not a 32-bit instruction word", value=word)
        return self._decode_cached(word)

    def _decode(self, word: int) -> Instruction:
        spec = self.by_opcode.get(word >> OPCODE_SHIFT)
        if spec is None:
            elsewhere = "".join(
                f" ({arch}'s {name})" for arch, name in _elsewhere(self.arch, word >> OPCODE_SHIFT)
            )
            raise InvalidInstruction(
                f"{self.arch}: no Tensix instruction has opcode 0x{word >> OPCODE_SHIFT:02x}{elsewhere}",
                value=word,
            )
        values = {f.name: (word >> f.lo) & f.max_value for f in spec.fields}
        return Instruction(spec, word, MappingProxyType(values))

    def disasm(self, word: int) -> str:
        """One line of assembly: the name, then ``field=value`` for every field highest bits
        first. Fields of 8 bits or more print in hex (values below 10 read the same either way
        and print bare). Set bits outside every field follow as a comment."""
        instr = self.decode(word)
        parts = [instr.name]
        for f in instr.spec.fields:
            value = instr.fields[f.name]
            text = f"0x{value:x}" if f.width >= _HEX_WIDTH and value >= 10 else str(value)
            parts.append(f"{f.name}={text}")
        stray = word & instr.spec.unassigned_mask
        if stray:
            parts.append(f"; unassigned bits 0x{stray:06x}")
        return " ".join(parts)
