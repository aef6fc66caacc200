"""GDB itself (gdb-multiarch, batch mode) debugging the SDK's demo through the tile's gdb server:
breakpoints on C functions, locals read through DWARF, steps, an L1 watchpoint, monitor commands,
and a run continued to its end with the results and cycles of a run without gdb. The expected values
come from programs.demo_expected, the demo's model written in Python."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from gdb_client import TIMEOUT, serve

from tensixsim import Tile
from tensixsim.sdk import programs
from tensixsim.sdk.build import ToolchainMissing, find_toolchain

GDB = shutil.which("gdb-multiarch")
pytestmark = pytest.mark.skipif(GDB is None, reason="gdb-multiarch missing: run `make test` (installs it)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    try:
        find_toolchain()
    except ToolchainMissing as missing:  # pragma: no cover - the container has the toolchain
        pytest.skip(str(missing))
    return programs.build_demo(build_dir=tmp_path_factory.mktemp("gdb"))


def demo_tile(elfs: dict) -> Tile:
    tile = Tile("blackhole")
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    return tile


def gdb_batch(port: int, elf, commands: list[str]) -> str:
    args = [GDB, "-nx", "-batch", "-ex", "set architecture riscv:rv32", "-ex", f"target remote :{port}"]
    for command in commands:
        args += ["-ex", command]
    done = subprocess.run([*args, str(elf)], capture_output=True, text=True, timeout=4 * TIMEOUT)
    return done.stdout + done.stderr


def test_gdb_breaks_steps_watches_and_runs_to_the_same_end(demo: dict) -> None:
    reference_tile = demo_tile(demo)
    reference = reference_tile.run()
    expected = programs.demo_expected()
    tile = demo_tile(demo)
    served = serve(tile)
    out = gdb_batch(
        served.port,
        demo["ncrisc"],
        [
            "info threads",
            "break main",
            "continue",
            "next",
            "next",
            "info locals",
            "print/x d->input[0]",
            "watch -l d->transformed[2]",
            "continue",
            "print i",
            "delete",
            "monitor cores",
            "continue",
        ],
    )
    sys.stdout.write(out)  # shown when the test fails
    for name in ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2"):
        assert f"({name} " in out  # qThreadExtraInfo names the core
    assert "hit Breakpoint 1, main () at" in out and "ncrisc.c:8" in out
    # After two `next`s the loop body's first statement ran for i = 0: t is input[0] transformed.
    assert f"t = {expected.transformed[0]}" in out
    assert "i = 0" in out and "sum = 0" in out
    assert f"= 0x{expected.input[0]:x}" in out
    assert "Old value = 0" in out and f"New value = {expected.transformed[2]}" in out
    assert "$2 = 2" in out  # the watchpoint stopped in iteration 2
    assert "ncrisc  running" in out  # monitor output
    assert "exited normally" in out
    result = served.result
    assert result.cycles == reference.cycles
    assert {n: s.cycles for n, s in result.cores.items()} == {n: s.cycles for n, s in reference.cores.items()}
    size = programs.DEMO_OFFSETS["summary"] + 4
    assert tile.read(programs.DEMO_BASE, size) == reference_tile.read(programs.DEMO_BASE, size)
    summary = programs.DEMO_BASE + programs.DEMO_OFFSETS["summary"]
    assert int.from_bytes(tile.read(summary, 4), "little") == expected.summary


def test_gdb_reads_registers_and_disassembles_any_core(demo: dict) -> None:
    tile = demo_tile(demo)
    served = serve(tile)
    out = gdb_batch(
        served.port,
        demo["brisc"],
        ["break main", "continue", "info registers pc sp", "thread 3", "x/2i $pc", "monitor sem", "kill"],
    )
    sys.stdout.write(out)
    assert "hit Breakpoint 1, main ()" in out and "brisc.c" in out
    assert f"0x{tile.core('brisc').symbols['main']:x}" in out
    assert "sem 0: 0 / 0" in out
    assert "[Switching to thread 3" in out
    served.join()
    assert type(served.outcome.get("error")).__name__ == "KilledByDebugger"
