"""The command line: run, disasm, demo, metal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def test_metal_runs_add_one_through_the_firmware(capsys, tmp_path):
    from tensixsim import Tile
    from tensixsim.metal.examples import CB_BASE, add_one_circular_buffers, build_add_one
    from tensixsim.metal.firmware import find_firmware_set, load_firmware
    from tensixsim.metal.wheel import precompiled_firmware

    root = Path(__file__).resolve().parent.parent
    precompiled = precompiled_firmware(root / ".cache" / "ttnn")
    loaded = load_firmware(Tile("blackhole"), find_firmware_set(precompiled, "blackhole"))
    elfs = build_add_one(loaded, root / "build" / "metal")
    tiles = 3
    # bf16 values whose x + 1 is exact: k / 8 for small integers k.
    values = (np.arange(tiles * 1024, dtype=np.float32) % 97 - 48) / 8
    (tmp_path / "in.bin").write_bytes((values.view(np.uint32) >> 16).astype(np.uint16).tobytes())
    cbs = [f"{cb.index}:{cb.address:#x}:{cb.size}:{cb.pages}" for cb in add_one_circular_buffers()]
    assert all(cb.address >= CB_BASE for cb in add_one_circular_buffers())
    argv = ["metal", "--firmware", str(precompiled), "--reader", str(elfs["ncrisc"])]
    argv += ["--compute", str(elfs["trisc0"]), str(elfs["trisc1"]), str(elfs["trisc2"])]
    argv += ["--writer", str(elfs["brisc"]), "--args", "0x100000", "0x400000", str(tiles), "2048"]
    for cb in cbs:
        argv += ["--cb", cb]
    argv += ["--input", f"{tmp_path / 'in.bin'}@0x100000"]
    argv += ["--output", f"{tmp_path / 'out.bin'}@0x400000:{tiles * 2048}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "launch: " in out and "cycles" in out
    result = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.uint16).astype(np.uint32) << 16
    assert (result.view(np.float32) == values + 1).all()


def test_metal_refuses_a_malformed_circular_buffer(capsys, tmp_path):
    assert main(["metal", "--firmware", str(tmp_path), "--reader", "r.elf", "--cb", "0:0x1000:2048"]) == 2
    assert "INDEX:ADDRESS:SIZE:PAGES" in capsys.readouterr().err


def test_metal_reports_a_missing_firmware_folder(capsys, tmp_path):
    assert main(["metal", "--firmware", str(tmp_path / "none"), "--reader", "r.elf"]) == 1
    assert "no such firmware folder" in capsys.readouterr().err
