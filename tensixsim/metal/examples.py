"""Example programs for the tt-metal firmware, built from ``tensixsim/sdk/examples/metal``.

Add-one (``bf16(x + 1)`` over a DRAM buffer of bf16 tiles), with the roles tt-metal gives the cores:

- NCRISC, the reader (NoC 1): writes one tile of bf16 1.0 into CB 1 once, then reads each input
  tile from the interleaved DRAM buffer into CB 0.
- TRISC0 unpacks each CB 0 tile into SrcA and the ones tile into SrcB; TRISC1 adds them (ELWADD)
  into a 32-bit Dst half; TRISC2 packs the half to bf16 into CB 16 (the packer rounds to nearest,
  ties away from zero). Unpack and math meet at the Src banks, math and pack at a semaphore.
- BRISC, the writer (NoC 0): writes each CB 16 tile to the output DRAM buffer.

Every kernel gets the same runtime arguments: source base, destination base, tile count, page size.

A two-tile pipeline on a chip (:func:`pipeline_programs`): tile A's BRISC writes each input tile
from its L1 into tile B's input CB and counts B's semaphore up (a NoC atomic) after each; B runs
add-one's compute kernels, its reader handing each tile on once the semaphore says it landed and its
writer writing each result back into A's L1 and counting A's semaphore up, which A waits for.
"""

from __future__ import annotations

from pathlib import Path

from tensixsim.metal.firmware import LoadedFirmware
from tensixsim.metal.kernels import build_kernel
from tensixsim.metal.launch import CircularBuffer, Program, layout, semaphore_address

SOURCES = Path(__file__).resolve().parent.parent / "sdk" / "examples" / "metal"
ADD_ONE = {
    "ncrisc": "add1_reader.c",
    "trisc0": "add1_unpack.c",
    "trisc1": "add1_math.c",
    "trisc2": "add1_pack.c",
    "brisc": "add1_writer.c",
}
KERNEL_SLOT = 0x4000  # bytes of the kernel-text region each kernel is linked into
BF16_TILE = 32 * 32 * 2
CB_BASE = 0x100000  # the CBs' L1, above the firmware and the kernel configuration region
CB_IN, CB_ONES, CB_OUT = 0, 1, 16
CB_PAGES = 4


def build_add_one(loaded: LoadedFirmware, out_dir: Path) -> dict[str, Path]:
    """The five add-one kernels, each linked at its own slot of the kernel-text region (Wormhole's
    NCRISC kernel: loaded there, linked for its instruction RAM)."""
    start = layout(loaded).text_start
    return {
        core: build_kernel(SOURCES / name, core, loaded, start + i * KERNEL_SLOT, out_dir)
        for i, (core, name) in enumerate(ADD_ONE.items())
    }


def add_one_circular_buffers(page: int = BF16_TILE, pages: int = CB_PAGES) -> list[CircularBuffer]:
    """CB 0 (input) and CB 16 (output) of ``pages`` pages, CB 1 (the ones tile) of one."""
    cbs = []
    address = CB_BASE
    for index, count in ((CB_IN, pages), (CB_ONES, 1), (CB_OUT, pages)):
        cbs.append(CircularBuffer(index, address, page * count, count))
        address += page * count
    return cbs


def add_one_program(
    kernels: dict[str, Path], source: int, target: int, tiles: int, page: int = BF16_TILE
) -> Program:
    args = [source, target, tiles, page]
    return Program(
        kernels=dict(kernels),
        runtime_args={core: list(args) for core in kernels},
        circular_buffers=add_one_circular_buffers(page),
    )


PIPELINE = {
    "a": {"brisc": "pipe_send.c"},
    "b": {
        "ncrisc": "pipe_reader.c",
        **{c: ADD_ONE[c] for c in ("trisc0", "trisc1", "trisc2")},
        "brisc": "pipe_return.c",
    },
}


def build_pipeline(loaded: LoadedFirmware, out_dir: Path) -> dict[str, dict[str, Path]]:
    """The pipeline's kernels: ``{"a": {core: elf}, "b": {core: elf}}``, each core in its own slot."""
    start = layout(loaded).text_start
    slots = list(ADD_ONE)
    return {
        side: {
            core: build_kernel(SOURCES / name, core, loaded, start + slots.index(core) * KERNEL_SLOT, out_dir)
            for core, name in kernels.items()
        }
        for side, kernels in PIPELINE.items()
    }


def pipeline_programs(
    kernels: dict[str, dict[str, Path]],
    loaded: LoadedFirmware,
    a: tuple[int, int],
    b: tuple[int, int],
    source: int,
    result: int,
    tiles: int,
    page: int = BF16_TILE,
) -> dict[tuple[int, int], Program]:
    """The launch of each tile: A at NoC #0 ``a`` sends ``tiles`` pages from its L1 at ``source``;
    B at ``b`` returns them plus one to A's L1 at ``result``. B's input CB holds every tile."""
    sem = semaphore_address(loaded, 0)
    cbs = [CircularBuffer(CB_IN, CB_BASE, page * tiles, tiles)]
    address = CB_BASE + page * tiles
    for index, count in ((CB_ONES, 1), (CB_OUT, CB_PAGES)):
        cbs.append(CircularBuffer(index, address, page * count, count))
        address += page * count
    a_args = [*b, tiles, page, sem, source, CB_BASE]
    b_args = [*a, tiles, page, sem, 0, result]
    return {
        a: Program(kernels["a"], {c: a_args for c in kernels["a"]}, semaphores=[0]),
        b: Program(kernels["b"], {c: b_args for c in kernels["b"]}, circular_buffers=cbs, semaphores=[0]),
    }
