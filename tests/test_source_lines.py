"""Errors from a core or a pipe name the source of their pc; ``disasm --elf`` shows source lines.

The reference for function and line is the toolchain's own ``addr2line`` (a separate reader of the
same symbol table and DWARF), and the line numbers of the statements in the sources written here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from asm import link

import tensixsim.loader.source as source
from tensixsim import SimError, Tile
from tensixsim.cli import main
from tensixsim.errors import Deadlock, InvalidInstruction, MemoryFault
from tensixsim.sdk.build import build, find_toolchain

# A store to an address nothing is mapped at, from a function of its own.
FAULT_C = """#include "tensixsim.h"

__attribute__((noinline)) void poke(volatile uint32_t *where, uint32_t value)
{
    *where = value;  /* the faulting store */
}

int main(void)
{
    poke((volatile uint32_t *)0xFFF00000u, 7);
    return 0;
}
"""

# An inline Tensix word with no instruction behind it (opcode 0x00 with a non-zero field), pushed from
# a function of its own: the pipe rejects it, naming the push.
BAD_WORD_C = """#include "tensixsim.h"

__attribute__((noinline)) void emit_unknown(void)
{
    __asm__ volatile(".word 0x14");  /* the unknown word */
}

int main(void)
{
    emit_unknown();
    __asm__ volatile(".word 0x08000000");  /* NOP, so the pipe reaches the bad word first */
    return 0;
}
"""


def _line_of(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


def _kernel(tmp_path: Path, name: str, text: str, core: str = "trisc0") -> Path:
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return build(core, [path], tmp_path / f"{name}.elf")


def _readelf_lines(elf: Path) -> list[tuple[int, str, int]]:
    """(address, file name, line) rows of ``readelf --debug-dump=decodedline``; line 0 ends a
    sequence."""
    readelf = str(find_toolchain().readelf)
    done = subprocess.run(
        [readelf, "--debug-dump=decodedline", str(elf)], capture_output=True, text=True, check=True
    )
    rows = []
    for text in done.stdout.splitlines():
        parts = text.split()
        if len(parts) >= 3 and parts[2].startswith("0x") and (parts[1].isdigit() or parts[1] == "-"):
            rows.append((int(parts[2], 16), parts[0], 0 if parts[1] == "-" else int(parts[1])))
    return rows


def _reference_line(rows: list[tuple[int, str, int]], address: int) -> tuple[str, int] | None:
    """The last row at or before ``address`` (ends of sequences first at a shared address)."""
    before = sorted((r for r in rows if r[0] <= address), key=lambda r: (r[0], r[2] != 0))
    if not before or before[-1][2] == 0:
        return None
    return before[-1][1], before[-1][2]


def test_a_faulting_store_names_function_file_and_line(tmp_path):
    elf = _kernel(tmp_path, "fault", FAULT_C)
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    with pytest.raises(MemoryFault) as caught:
        tile.run(release=["trisc0"], max_cycles=100_000)
    error = caught.value
    line = _line_of(FAULT_C, "the faulting store")
    assert error.function == "poke"
    assert error.source == f"{tmp_path / 'fault.c'}:{line}"
    assert error.location.line == line and error.location.file == str(tmp_path / "fault.c")
    assert _reference_line(_readelf_lines(elf), error.pc) == ("fault.c", line)
    assert f"in poke+0x{error.location.offset:x} ({tmp_path / 'fault.c'}:{line})" in str(error)


def test_a_pipe_error_names_the_line_that_pushed_the_word(tmp_path):
    elf = _kernel(tmp_path, "bad_word", BAD_WORD_C)
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    with pytest.raises(InvalidInstruction, match="unknown Tensix opcode") as caught:
        tile.run(release=["trisc0"], max_cycles=100_000)
    error = caught.value
    assert error.core == "trisc0"
    assert error.pc == tile.core("trisc0").symbols["emit_unknown"]  # the word's own address
    assert error.function == "emit_unknown"
    # GCC files an asm statement at the start of a function under the function's opening line.
    file, line = _reference_line(_readelf_lines(elf), error.pc)
    assert error.source == f"{tmp_path / file}:{line}"
    assert line in (_line_of(BAD_WORD_C, "the unknown word"), _line_of(BAD_WORD_C, "the unknown word") - 1)


def test_lines_agree_with_readelf_across_a_kernel(tmp_path):
    elf = _kernel(tmp_path, "fault", FAULT_C)
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    rows = _readelf_lines(elf)
    start, code = tile.core("trisc0").images[-1].text_ranges[0]
    for address in range(start, start + len(code), 4):
        found = tile.locate("trisc0", address)
        expected = _reference_line(rows, address)
        got = None if found is None or found.line is None else (Path(found.file).name, found.line)
        assert got == expected, hex(address)
    assert tile.locate("trisc0", start).function == "_start"  # crt0.S gives _start a type and size
    assert tile.locate("trisc0", start + len(code) + 0x100) is None  # past the code


def test_the_tables_are_read_only_when_the_error_is_looked_at(tmp_path, monkeypatch):
    elf = _kernel(tmp_path, "fault", FAULT_C)
    calls = []
    real = source.locate
    monkeypatch.setattr(source, "locate", lambda images, pc: calls.append(pc) or real(images, pc))
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    with pytest.raises(MemoryFault) as caught:
        tile.run(release=["trisc0"], max_cycles=100_000)
    assert calls == []  # raising did not look anything up
    assert caught.value.function == "poke"
    str(caught.value)
    assert calls == [caught.value.pc]  # looked up once, then remembered


def test_code_without_symbols_keeps_the_plain_message():
    tile = Tile("blackhole")
    tile.write(0x6000, (0x00002503).to_bytes(4, "little"))  # lw a0, 0(zero): fine; then zeros
    with pytest.raises(SimError) as caught:
        tile.run(release=["trisc0"], max_cycles=10_000)
    assert caught.value.location is None and caught.value.function is None
    assert str(caught.value) == caught.value.args[0]  # nothing appended


def test_symbols_without_dwarf_still_name_the_function():
    elf = link(  # no -g: a symbol table, no DWARF
        "nop\n jal poke\n.globl poke\n.type poke, @function\npoke:\n li t0, 0x40000000\n"
        " lw a0, 0(t0)\n ret\n.size poke, .-poke",
        text=0x6000,
    )
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    with pytest.raises(MemoryFault) as caught:
        tile.run(release=["trisc0"], max_cycles=10_000)
    error = caught.value
    assert (error.function, error.location.offset, error.source) == ("poke", 4, None)
    assert str(error).endswith(" in poke+0x4")


NOP_C = """#include "tensixsim.h"

volatile uint32_t counter;

int main(void)
{
    counter = 1;
    __asm__ volatile(".word 0x08000000");  /* NOP */
    counter = 2;
    return 0;
}
"""


def test_disasm_elf_interleaves_source_lines(tmp_path, capsys):
    elf = _kernel(tmp_path, "nop", NOP_C)
    assert main(["disasm", "--elf", str(elf)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith("02000000  NOP"))
    address = int(lines[at].split(":")[0], 16)
    # GCC files an asm statement's words under the line before it (its .loc follows the asm).
    file, line = _reference_line(_readelf_lines(elf), address)
    assert line in (_line_of(NOP_C, "/* NOP */") - 1, _line_of(NOP_C, "/* NOP */"))
    assert lines[at - 1] == f"{tmp_path / file}:{line}  {NOP_C.splitlines()[line - 1].strip()}"


def test_disasm_elf_names_the_file_when_the_source_is_gone(tmp_path, capsys):
    elf = _kernel(tmp_path, "nop", NOP_C)
    (tmp_path / "nop.c").unlink()
    assert main(["disasm", "--elf", str(elf)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith("02000000  NOP"))
    file, line = _reference_line(_readelf_lines(elf), int(lines[at].split(":")[0], 16))
    assert lines[at - 1] == f"{tmp_path / file}:{line}"  # the place, without the text


# A tt-metal kernel (built for the firmware's kernel ABI) that stores to an unmapped address.
METAL_FAULT_C = """#include <stdint.h>

__attribute__((noinline)) void poke(volatile uint32_t *where)
{
    *where = 1;  /* the faulting store */
}

__attribute__((section(".start"), used)) uint32_t _start(void) {
    poke((volatile uint32_t *)0xFFF00000u);
    return 0;
}
"""


def test_a_fault_in_a_metal_kernel_names_the_kernel_source(tmp_path):
    from tensixsim.metal.firmware import boot, find_firmware_set, load_firmware
    from tensixsim.metal.kernels import build_kernel
    from tensixsim.metal.launch import Program, launch_program, layout
    from tensixsim.metal.wheel import precompiled_firmware

    root = Path(__file__).resolve().parent.parent
    firmware = find_firmware_set(precompiled_firmware(root / ".cache" / "ttnn"), "blackhole")
    tile = Tile("blackhole")
    loaded = load_firmware(tile, firmware)
    boot(tile, loaded)
    source_file = tmp_path / "metal_fault.c"
    source_file.write_text(METAL_FAULT_C)
    elf = build_kernel(source_file, "brisc", loaded, layout(loaded).text_start, tmp_path)
    with pytest.raises(MemoryFault) as caught:
        launch_program(tile, loaded, Program(kernels={"brisc": elf}))
    error = caught.value
    assert error.core == "brisc" and error.function == "poke"
    assert error.source == f"{source_file}:{_line_of(METAL_FAULT_C, 'the faulting store')}"
    # The firmware that called the kernel is named from its own ELF.
    firmware_pc = loaded.images["brisc"].entry
    assert tile.locate("brisc", firmware_pc) is not None
    assert tile.locate("brisc", firmware_pc).function is not None


WAIT_C = """#include "tensixsim.h"

__attribute__((noinline)) void wait_for(volatile uint32_t *flag)
{
    while (*flag == 0) {  /* the wait */
    }
}

int main(void)
{
    wait_for((volatile uint32_t *)0x30000u);
    return 0;
}
"""


def test_a_deadlock_names_where_each_stuck_core_waits(tmp_path):
    elf = _kernel(tmp_path, "wait", WAIT_C)
    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    with pytest.raises(Deadlock) as caught:
        tile.run(release=["trisc0"], max_cycles=1_000_000)
    found = caught.value.source_of("trisc0")
    assert found is not None and found.function == "wait_for"
    assert found.line == _line_of(WAIT_C, "the wait")
    assert str(caught.value).endswith(f"; trisc0 in {found}")
    assert caught.value.source_of("trisc1") is None  # held in reset: no program
