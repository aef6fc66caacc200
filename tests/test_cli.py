"""The command line: run, disasm, demo, metal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from asm import link

from tensixsim.cli import UsageError, main
from tensixsim.errors import MemoryFault
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
    words = [line for line in lines if line.startswith("0x0000")]
    assert sum("NOP" in line for line in words) == 8  # the inline half; the rest are stores
    # The rest name the source lines the words come from (see test_source_lines).
    assert all("tensix_push.c:" in line for line in lines if line not in words)


def test_run_prints_the_per_core_summary(capsys):
    elf = link("li a0, 42\n ecall", text=0x6000)
    assert main(["run", "--trisc0", str(elf), "--max-cycles", "1000"]) == 1  # a non-zero exit code
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
    # The writer's own arguments send the results elsewhere.
    argv += ["--writer-args", "0x100000", "0x500000", str(tiles), "2048"]
    for cb in cbs:
        argv += ["--cb", cb]
    argv += ["--input", f"{tmp_path / 'in.bin'}@0x100000"]
    argv += ["--output", f"{tmp_path / 'out.bin'}@0x500000:{tiles * 2048}"]
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


# ------------------------------------------------------------------------------ inputs, outputs, errors


def test_run_places_inputs_and_dumps_results(capsys, tmp_path):
    """--input puts a file (raw, or a .npy array's bytes) into L1 before the run, --dump saves L1 after
    it: the program adds the two words it finds and stores the sum."""
    program = link(
        "li t0, 0x20000\n lw a0, 0(t0)\n lw a1, 4(t0)\n add a2, a0, a1\n sw a2, 8(t0)\n li a0, 0\n ecall",
        text=0x6000,
    )
    raw = tmp_path / "a.bin"
    raw.write_bytes((40).to_bytes(4, "little"))
    array = tmp_path / "b.npy"
    np.save(array, np.array([2], np.uint32))
    out_raw, out_npy = tmp_path / "sum.bin", tmp_path / "sum.npy"
    argv = ["run", "--trisc0", str(program), "--input", f"0x20000={raw}", "--input", f"0x20004={array}"]
    argv += ["--dump", f"0x20008:4={out_raw}", "--dump", f"0x20000:12={out_npy}", "--regs"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert int.from_bytes(out_raw.read_bytes(), "little") == 42
    assert np.load(out_npy).tolist() == [40, 0, 0, 0, 2, 0, 0, 0, 42, 0, 0, 0]
    assert "x12=0x0000002a" in out  # a2
    assert f"wrote {out_raw} (4 bytes from L1 0x20008)" in out


def test_run_fails_when_a_core_exits_with_a_nonzero_code(capsys):
    elf = link("li a0, 3\n ecall", text=0x6000)
    assert main(["run", "--trisc0", str(elf)]) == 1
    assert capsys.readouterr().err.strip() == "tensixsim run: trisc0 exited with 3"


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("tensixsim 0.")


def test_run_on_wormhole(tmp_path, capsys):
    from asm import link

    elf = link("li a0, 7\n ecall", text=0x6000, march="rv32im")
    assert main(["--arch", "wormhole", "run", "--trisc0", str(elf)]) == 1  # exit code 7: a failed run
    assert "trisc0 exited with 7" in capsys.readouterr().err
    amo = link("li a1, 0x20000\n amoadd.w a0, a0, (a1)\n ecall", text=0x6000)
    assert main(["--arch", "wormhole", "run", "--trisc0", str(amo)]) == 1
    assert "built for blackhole" in capsys.readouterr().err


def test_demo_on_wormhole_runs_the_five_core_part(capsys):
    assert main(["--arch", "wormhole", "demo"]) == 0
    out = capsys.readouterr().out
    assert "five cores run compiled C on one Wormhole tile" in out and "[FAIL]" not in out
    assert "the matmul part runs on Blackhole only" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arch", "foo", "run", "--brisc", "x"], "tensixsim run: unknown architecture 'foo'; known: "),
        (["disasm", "zz"], "tensixsim disasm: instruction word 'zz' is not a number"),
        (["disasm", "0x1ffffffff"], "tensixsim disasm: instruction word 0x1ffffffff is not 32 bits"),
        (["disasm"], "tensixsim disasm: give instruction words"),
        (["run"], "tensixsim run: give at least one of --brisc"),
        (["run", "--brisc", "/no/such.elf"], "tensixsim run: --brisc /no/such.elf: no such file"),
        (["run", "--max-cycles", "-5", "--brisc", "x"], "tensixsim run: argument --max-cycles: must be"),
        (["run", "--quantum", "0", "--brisc", "x"], "tensixsim run: argument --quantum: must be positive"),
        (["bogus"], "tensixsim: argument command: invalid choice: 'bogus'"),
    ],
)
def test_every_error_is_one_line_with_a_nonzero_status(capsys, argv, message):
    try:
        status = main(argv)
    except SystemExit as stop:  # argparse's own errors
        status = stop.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_bad_inputs_and_dumps_are_one_line_errors(capsys, tmp_path):
    elf = link("li a0, 0\n ecall", text=0x6000)
    for extra, message in [
        (["--input", "0x20000"], "--input takes ADDR=FILE"),
        (["--input", f"zz={tmp_path}/x"], "--input address 'zz' is not a number"),
        (["--input", f"0x20000={tmp_path}/missing.bin"], "does not exist"),
        (["--dump", f"0x20000={tmp_path}/o"], "--dump takes ADDR:LEN=FILE"),
        (["--dump", f"0x20000:0={tmp_path}/o"], "--dump length must be positive"),
    ]:
        assert main(["run", "--trisc0", str(elf), *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("tensixsim run: ") and message in err and err.count("\n") == 1, err


def test_a_missing_toolchain_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("TENSIXSIM_RISCV_PREFIX", "no-such-toolchain-")
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tensixsim demo: no-such-toolchain-gcc not found on PATH") and err.count("\n") == 1


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(UsageError, match="unknown architecture"):
        main(["--debug", "--arch", "foo", "disasm", "0x0"])
    elf = link("li t0, 0x40000000\n lw a0, 0(t0)", text=0x0)
    with pytest.raises(MemoryFault):
        main(["--debug", "run", "--brisc", str(elf)])
