"""The five-core demo, and the native hooks against their pure-Python twins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tensixsim.demo import run_demo
from tensixsim.sdk import programs

_RUN_COMPUTE = """
import json
from tensixsim import Tile
from tensixsim.riscv.native import native_library
from tensixsim.sdk import programs
tile = Tile("blackhole")
for core, path in programs.build_compute_bench(iters=4).items():
    tile.load_elf(core, path)
result = tile.run(max_cycles=10**9)
print(json.dumps({
    "native": native_library() is not None,
    "checksums": [int.from_bytes(tile.read(programs.BENCH_BASE + 4 * i, 4), "little") for i in range(5)],
    "cycles": {k: v.cycles for k, v in result.cores.items()},
    "instructions": {k: v.instructions for k, v in result.cores.items()},
}))
"""


@pytest.mark.parametrize("quantum", [500, 2000, 20_000])
def test_demo_all_checks_pass_and_timing_does_not_depend_on_quantum(quantum):
    tile, checks, _ = run_demo(quantum)
    assert all(checks.values()), checks
    result = tile.result()
    assert all(stats.state == "finished" for stats in result.cores.values())
    reference, _, _ = run_demo(2000)
    assert result.cycles == reference.result().cycles


def _compute(pure_python: bool) -> dict:
    env = dict(os.environ)
    env.pop("TENSIXSIM_PURE_PYTHON", None)
    if pure_python:
        env["TENSIXSIM_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _RUN_COMPUTE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_native_hooks_match_the_python_reference_path():
    programs.build_compute_bench(iters=4)  # build once, outside the subprocesses
    native, python = _compute(False), _compute(True)
    assert native["native"] and not python["native"]
    expected = [programs.compute_reference(i, 4) for i in range(5)]
    assert native["checksums"] == expected == python["checksums"]
    assert native["cycles"] == python["cycles"]
    assert native["instructions"] == python["instructions"]
