"""What the kernel-print tests on real firmware share: a booted tile, print kernels built per core."""

from __future__ import annotations

from pathlib import Path

from tensixsim import Tile
from tensixsim.metal.firmware import boot, load_firmware
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import layout

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "metal"


def booted(firmware, quantum: int | None = None):
    tile = Tile("blackhole") if quantum is None else Tile("blackhole", quantum=quantum)
    loaded = load_firmware(tile, firmware)
    boot(tile, loaded)
    return tile, loaded


def print_kernels(source: Path, cores, loaded) -> dict[str, Path]:
    """``source`` built for each of ``cores``, 16 KiB apart in the kernel slot."""
    start = layout(loaded).text_start
    return {
        core: build_kernel(source, core, loaded, start + i * 0x4000, BUILD) for i, core in enumerate(cores)
    }
