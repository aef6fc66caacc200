"""The Tensix coprocessor instruction set as data: one table per architecture.

>>> from tensixsim.isa import isa_for
>>> isa = isa_for("blackhole")
>>> isa.disasm(isa.encode("SEMPOST", sem_sel=4))
'SEMPOST sem_sel=4'
"""

from __future__ import annotations

from functools import cache

from tensixsim.isa import blackhole, wormhole
from tensixsim.isa.spec import (
    INLINE_OPCODE_LIMIT,
    RESOURCE_UNITS,
    UNITS,
    Field,
    InstrSpec,
    Instruction,
    IsaTable,
    from_stream_word,
    to_stream_word,
)

_SPECS = {"blackhole": blackhole.SPECS, "wormhole": wormhole.SPECS}
ARCH_NAMES: tuple[str, ...] = tuple(_SPECS)


def _normalise(arch_name: str) -> str:
    # Accept the spellings the references use ("Wormhole B0", "wormhole_b0"), as arch.get_arch does.
    return arch_name.lower().replace(" ", "").replace("_b0", "").replace("b0", "")


def isa_for(arch_name: str) -> IsaTable:
    """The instruction table of ``arch_name`` ("blackhole" or "wormhole"), built once."""
    return _table(_normalise(arch_name))


@cache
def _table(key: str) -> IsaTable:
    if key not in _SPECS:
        raise ValueError(f"no instruction table for {key!r}; known: {', '.join(ARCH_NAMES)}")
    return IsaTable(key, _SPECS[key])


__all__ = [
    "ARCH_NAMES",
    "INLINE_OPCODE_LIMIT",
    "RESOURCE_UNITS",
    "UNITS",
    "Field",
    "InstrSpec",
    "Instruction",
    "IsaTable",
    "from_stream_word",
    "isa_for",
    "to_stream_word",
]
