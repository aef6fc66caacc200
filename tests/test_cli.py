"""The command line: run, disasm, demo."""

from __future__ import annotations

from asm import link

from tensixsim.cli import main
from tensixsim.sdk import programs


def test_disasm_names_the_instruction(capsys):
    assert main(["disasm", "0x26000000", "0x02000000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("26000000  MVMUL")
    assert out[1].startswith("02000000  NOP")


def test_disasm_finds_inline_words_in_a_compiled_kernel(capsys):
    elf = programs.build_tensix_push("trisc0", count=16)
    assert main(["disasm", "--elf", str(elf)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum("NOP" in line for line in lines) == 8  # the inline half; the rest are stores
    assert all(line.startswith("0x0000") for line in lines)


def test_run_prints_the_per_core_summary(capsys):
    elf = link("li a0, 42\n ecall", text=0x6000)
    assert main(["run", "--trisc0", str(elf), "--max-cycles", "1000"]) == 0
    out = capsys.readouterr().out
    assert "trisc0   finished" in out and " 42" in out and "total: " in out


def test_run_reports_errors_without_a_traceback(capsys):
    elf = link("li t0, 0x40000000\n lw a0, 0(t0)", text=0x0)
    assert main(["run", "--brisc", str(elf)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tensixsim: MemoryFault: brisc pc=0x00000004")


def test_demo_command(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "[ok] BRISC's verdict" in out
    assert "[ok] C = A @ B within BF16 rounding" in out and "FAIL" not in out
    assert "stalled on" in out and "matrix" in out  # per-pipe and per-unit cycles
