"""Run a case on the emulator (the ``tensixsim diff`` side)."""

from __future__ import annotations

from pathlib import Path

from tensixsim.difftest.case import (
    EXIT_FLAG,
    STATUS_BASE,
    Case,
    Observation,
    build_programs,
    decode_status,
    status_size,
)
from tensixsim.errors import SimError


def run_on_emulator(case: Case, *, build_dir: Path | None = None, quantum: int | None = None) -> Observation:
    """Load, write inputs, run to completion, read the outputs back. A :class:`SimError` ends the run
    and is returned in ``error`` (with whatever the outputs hold then), as a device's failure is."""
    from tensixsim.tile import Tile

    elfs = build_programs(case, build_dir)
    tile = Tile(case.arch) if quantum is None else Tile(case.arch, quantum=quantum)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    _prepare(tile.write, case)
    # The go-ahead word is set before the run: cores report and then finish (difftest_main.c).
    tile.write(EXIT_FLAG, (1).to_bytes(4, "little"))
    observation = Observation()
    try:
        tile.run(max_cycles=case.max_cycles, release=list(case.release))
    except SimError as error:
        observation.error = f"{type(error).__name__}: {error}"
    codes, cycles, missing = decode_status(case, tile.read(STATUS_BASE, status_size(case)))
    observation.exit_codes, observation.cycles = codes, cycles
    if missing and observation.error is None:
        observation.error = f"no status record from {', '.join(missing)}"
    observation.outputs = {r.name: tile.read(r.address, r.size) for r in case.outputs}
    return observation


def _prepare(write, case: Case) -> None:
    """What every host does before releasing the cores: clear the status block and the output
    regions (a device's L1 holds whatever ran before), then write the inputs."""
    write(STATUS_BASE, bytes(status_size(case)))
    write(EXIT_FLAG, bytes(4))
    for region in case.outputs:
        write(region.address, bytes(region.size))
    for region in case.inputs:
        write(region.address, case.input_bytes(region))
