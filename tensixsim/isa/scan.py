"""Find the inline Tensix instruction words in a program's code."""

from __future__ import annotations

from collections.abc import Iterator

from tensixsim.errors import InvalidInstruction
from tensixsim.isa.spec import IsaTable, from_stream_word
from tensixsim.loader.elf import ElfImage


def inline_words(table: IsaTable, image: ElfImage) -> Iterator[tuple[int, int, str]]:
    """(address, instruction word, disassembly) for every word of executable code whose low two
    bits are not 0b11, i.e. every word a TRISC would push rather than execute."""
    for base, data in image.text_ranges:
        for offset in range(0, len(data) - 3, 4):
            stream = int.from_bytes(data[offset : offset + 4], "little")
            if stream & 3 == 3:
                continue
            word = from_stream_word(stream)
            try:
                text = table.disasm(word)
            except InvalidInstruction:
                text = f"<unknown opcode 0x{word >> 24:02x}>"
            yield base + offset, word, text
