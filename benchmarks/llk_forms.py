"""64 tiles through all five cores with the unpackers driven in tt-llk's form.

Kernels compiled against tt-llk set OvrdThreadId (MultiContextMode) on every UNPACR and often read
block-float tiles; the SDK's kernels can unpack the same way (``TK_UNPACK_MULTI_CONTEXT`` in
tensix_kernel.h). Two programs, the same pipeline as eltwise_e2e.py otherwise (BRISC reads, TRISC0
unpacks, TRISC1 adds, TRISC2 packs, NCRISC writes):

- default: the bf16 element-wise add of 64 tile pairs, checked bit for bit against the model;
- ``--bfp8``: 64 bfp8_b tiles copied to fp16 (unpacked into SrcA, SrcB zeroed, ELWADD, packed),
  checked against the shared-exponent decoding.

Prints the emulated cycles and the wall time of the run (building and loading excluded); the last
line is ``llk_eltwise64_wall_s`` or ``llk_bfp8_copy64_wall_s``. ``--arch wormhole``: on a Wormhole tile.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tensixsim import Tile
from tensixsim.sdk import programs

TILES = 64


def bfp8_expected(exponents: np.ndarray, datums: np.ndarray) -> np.ndarray:
    """The fp16 tile (face order) a bfp8_b tile with no zero-magnitude negative datum copies to:
    each datum is sign, then a 7-bit magnitude scaled by 2 ** (exponent - 127 - 6)."""
    flat = programs.tile_to_faces(datums).astype(np.int64)
    exps = np.repeat(exponents.astype(np.int64), 16)
    values = (flat & 0x7F) * np.exp2(exps - 127 - 6)
    values = np.where(flat & 0x80, -values, values)
    return values.astype(np.float16).view(np.uint16)  # exact: 7 bits over FP16's range


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfp8", action="store_true", help="copy bfp8_b tiles to fp16, not add bf16")
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()

    rng = np.random.default_rng(2026)
    tile = Tile(args.arch)
    if args.bfp8:
        elfs = programs.build_copy_bfp8_to_fp16(tiles=TILES, multi_context=True, arch=args.arch)
        exponents = [rng.integers(122, 133, 64).astype(np.uint8) for _ in range(TILES)]
        datums = [rng.integers(0, 256, (32, 32)).astype(np.uint8) for _ in range(TILES)]
        for d in datums:
            d[d == 0x80] = 0  # sign with magnitude zero decodes to -infinity: kept out of the check
        data = b"".join(programs.bfp8_tile_bytes(e, d) for e, d in zip(exponents, datums, strict=True))
        tile.write(programs.KERNEL_SRC0, np.frombuffer(data, np.uint8))
    else:
        elfs = programs.build_eltwise("add", tiles=TILES, multi_context=True, arch=args.arch)
        a, b = programs.random_bf16_tiles(rng, TILES), programs.random_bf16_tiles(rng, TILES)
        tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
        tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))
    for core, elf in elfs.items():
        tile.load_elf(core, elf)

    start = time.perf_counter()
    result = tile.run(max_cycles=10**8)
    wall = time.perf_counter() - start

    out = programs.tiles_from_l1(tile.read(programs.KERNEL_DST, TILES * programs.BF16_TILE_BYTES), TILES)
    for t in range(TILES):
        if args.bfp8:
            want = programs.tile_from_faces(bfp8_expected(exponents[t], datums[t]))
        else:
            want = programs.eltwise_model("add", a[t], b[t])
        if not np.array_equal(out[t], want):
            raise SystemExit(f"tile {t}: wrong result")
    print(result.summary(tile.arch.clock_hz))
    print(f"{TILES} tiles checked; {result.cycles / TILES:.0f} emulated cycles per tile")
    name = "llk_bfp8_copy64" if args.bfp8 else "llk_eltwise64"
    print(f"{name}_cycles: {result.cycles}")
    print(f"{name}_wall_s: {wall:.2f} s")


if __name__ == "__main__":
    main()
