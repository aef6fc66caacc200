"""tt-metal firmware on the tiles of a chip: boot them together, then launch a program per tile.

Each tile gets the firmware as a lone tile does (:func:`~tensixsim.metal.firmware.load_firmware`: the
images, the host tables with that tile's own coordinates, and its logical coordinates in the
mailbox), and the firmware reads its NoC coordinates from its own NIUs (``NOC_NODE_ID``), so the
kernels of each tile see that tile's ``my_x`` / ``my_y``. A launch writes each tile's program and go
message (:func:`~tensixsim.metal.launch.prepare_launch`) and then runs the chip until every tile's
firmware waits for the host again: tiles talk to each other through the NoC meanwhile, with the
chip's one clock (:mod:`tensixsim.chip`).

    chip = Chip("blackhole")
    metal = MetalChip.boot(chip, firmware, [(1, 2), (2, 2)])
    states = metal.launch({(1, 2): program_a, (2, 2): program_b})
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tensixsim.chip import XY, Chip
from tensixsim.errors import CycleLimitExceeded, Deadlock, InvalidProgram
from tensixsim.metal.firmware import (
    FirmwareSet,
    LoadedFirmware,
    RunState,
    expect_go_wait,
    load_firmware,
    run_state,
)
from tensixsim.metal.launch import LaunchTimeout, Program, prepare_launch


def logical_coordinates(chip: Chip, xy: XY) -> XY:
    """A Tensix tile's logical coordinates: its column among the chip's working Tensix columns (the
    harvested ones skipped), its row among the Tensix rows (tt-metal's worker logical coordinates)."""
    columns = sorted({x for x, _ in chip.tensix_tiles})
    rows = sorted({y for _, y in chip.tensix_tiles})
    return columns.index(xy[0]), rows.index(xy[1])


@dataclass
class MetalChip:
    """A chip whose Tensix tiles in ``loaded`` run tt-metal firmware."""

    chip: Chip
    loaded: dict[XY, LoadedFirmware]

    @classmethod
    def boot(
        cls, chip: Chip, firmware: FirmwareSet, tiles: Iterable[XY], *, max_cycles: int = 20_000_000
    ) -> MetalChip:
        """Load ``firmware`` on each of ``tiles`` (NoC #0 coordinates) and boot them all at once: every
        BRISC released, until every core of every tile waits for a go message (else Deadlock)."""
        tiles = list(dict.fromkeys(tiles))
        for xy in tiles:
            chip.tile(*xy)  # refuses a coordinate without a Tensix tile before anything is loaded
        loaded = {}
        columns = tuple(sorted({x for x, _ in chip.tensix_tiles}))
        for xy in tiles:
            lx, ly = logical_coordinates(chip, xy)
            tile = chip.tile(*xy)
            loaded[xy] = load_firmware(tile, firmware, logical_x=lx, logical_y=ly, worker_columns=columns)
        metal = cls(chip, loaded)
        states = metal._run({xy: ("brisc",) for xy in tiles}, max_cycles)
        for xy, state in states.items():
            expect_go_wait(state, loaded[xy].mailbox, f"boot of tile {xy}")
        return metal

    def launch(self, programs: dict[XY, Program], *, max_cycles: int = 50_000_000) -> dict[XY, RunState]:
        """Launch ``programs[xy]`` on each tile and run the chip until every tile's firmware reports
        done; returns each booted tile's state. Tiles without a program stay waiting.

        Every program is checked before any is written (:class:`~tensixsim.metal.launch.KernelOverrun`,
        InvalidProgram: nothing written anywhere). :class:`LaunchTimeout` when the cores stop (or the
        cycle limit passes) before every tile's firmware reports done.
        """
        unknown = sorted(set(programs) - set(self.loaded))
        if unknown:
            raise ValueError(f"no tt-metal firmware booted on {', '.join(map(str, unknown))}")
        writes = [prepare_launch(self.chip.tile(*xy), self.loaded[xy], p) for xy, p in programs.items()]
        for write in writes:
            write()
        try:
            states = self._run({}, max_cycles)
            for xy, state in states.items():
                expect_go_wait(state, self.loaded[xy].mailbox, f"launch on tile {xy}")
        except Deadlock as stop:
            raise LaunchTimeout(
                f"the firmware never reported done: {stop.message}", cycle=stop.cycle
            ) from None
        except CycleLimitExceeded as stop:
            raise LaunchTimeout(
                f"the firmware never reported done within {max_cycles} cycles: {stop.message}",
                cycle=max_cycles,
            ) from None
        return states

    def _run(self, release: dict[XY, tuple[str, ...]], max_cycles: int) -> dict[XY, RunState]:
        """Run the chip until nothing can act without the host; each firmware tile's state."""
        result = self.chip.run(max_cycles, release, quiet=True)
        states = {}
        for xy, loaded in self.loaded.items():
            if xy not in result.waiting:
                raise InvalidProgram(
                    f"tile {xy}: the firmware finished (ecall) instead of waiting for the host"
                )
            states[xy] = run_state(self.chip.tile(*xy), loaded, result.waiting[xy])
        return states
