"""Vector-unit (SFPU) instructions per second on a 32x32 fp32 tile loop.

TRISC1 records a three-instruction body into its replay buffer (SFPLOAD a 32-lane slice of Dst tile
0 as FP32, SFPMAD x * 0.5 + 0.25, SFPSTORE it back while the ADDR_MOD steps the Dst address by two
rows), then pushes template-1 MOPs whose inner loop replays the body 32 times (one pass over the
tile's 64 Dst rows) and whose end op rewinds the Dst counter. Every instruction goes through the MOP
and replay expanders, the wait gate (the SFPSTORE waits a cycle for SFPMAD's result) and the vector
unit. The tile is checked against numpy (x -> x * 0.5 + 0.25 applied once per pass, each step
rounded to fp32) before the figure is printed. ``--arch wormhole``: on a Wormhole tile, whose vector
unit does not hold the SFPSTORE for the SFPMAD's result: an SFPNOP goes between them (a four-
instruction body).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from tensixsim import Tile
from tensixsim.sdk.build import build
from tensixsim.tensix import formats

PASSES = 120  # tile passes per MOP (at most 127: seven bits)
MOPS = 4
BODY = {"blackhole": 3, "wormhole": 4}
REPEATS = 3  # fresh tiles, for a steadier figure

SOURCE = f"""
#include "tensix_kernel.h"

int main(void)
{{
    volatile uint32_t *mop = (volatile uint32_t *)TENSIX_MOP_CFG_BASE;
    TTI_SETC16(THD_ADDR_MOD_DST_SEC1_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC1_DestIncr, 2));
    TTI_SFPLOADI(3, 0, 0x3F00);           /* LReg3 = 0.5 */
    TTI_SFPLOADI(4, 0, 0x3E80);           /* LReg4 = 0.25 */
    TTI_REPLAY(0, BODY, 0, 1);            /* record the next BODY words into slots 0.. */
    TTI_SFPLOAD(0, 3, 0, 0);              /* LReg0 = Dst (FP32) */
    TTI_SFPMAD(0, 3, 4, 1, 0);            /* LReg1 = LReg0 * LReg3 + LReg4 */
#if defined(SDK_ARCH_WORMHOLE)
    TTI_SFPNOP;                           /* Wormhole: the SFPMAD's result is not ready */
#endif
    TTI_SFPSTORE(1, 3, 1, 0);             /* Dst = LReg1; ADDR_MOD 1: Dst += 2 */
    uint32_t replay = TT_OP_REPLAY(0, BODY, 0, 0);
    mop[0] = {PASSES};
    mop[1] = 32;
    mop[2] = TT_OP_NOP;
    mop[3] = TT_OP_SETRWC(0, 0, 0, 0, 0, 4); /* end op: Dst counter back to 0 */
    mop[4] = TT_OP_NOP;
    mop[5] = replay;
    mop[6] = TT_OP_NOP;
    mop[7] = replay;
    mop[8] = replay;
    for (int i = 0; i < {MOPS}; i++)
        TTI_MOP(1, 0, 0);
    return 0;
}}
"""


def expected(x: np.ndarray, passes: int) -> np.ndarray:
    half, quarter = np.float32(0.5), np.float32(0.25)
    for _ in range(passes):
        x = (x * half + quarter).astype(np.float32)  # x * 0.5 is exact: one rounding, as in the FMA
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    root = Path("build") / "bench"
    root.mkdir(parents=True, exist_ok=True)
    source = root / "sfpu.c"
    source.write_text(SOURCE)
    elf = build(
        "trisc1",
        [source],
        root / f"sfpu_{args.arch}_trisc1.elf",
        arch=args.arch,
        defines={"BODY": BODY[args.arch]},
        build_dir=root,
    )
    rng = np.random.default_rng(5)
    data = (rng.standard_normal((32, 32)) * 4).astype(np.float32)
    wall = sfpu_instructions = 0
    for _ in range(REPEATS):
        tile = Tile(args.arch)
        tile.load_elf("trisc1", elf)
        tile.coprocessor.regs.write_tile32(0, formats.dst32_from_fp32(data.view(np.uint32)))
        start = time.perf_counter()
        result = tile.run(max_cycles=10**8, release=["trisc1"])
        wall += time.perf_counter() - start
        got = formats.dst32_to_fp32(tile.coprocessor.regs.read_tile32(0)).astype(np.uint32).view(np.float32)
        want = expected(data, PASSES * MOPS)
        if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
            raise SystemExit(f"Dst differs from numpy in {int((got != want).sum())} datums")
        sfpu = result.units["sfpu"]
        sfpu_instructions += sfpu.instructions
    print(result.summary(tile.arch.clock_hz))
    print(
        f"{sfpu.instructions:,} SFPU instructions per run ({PASSES * MOPS} passes over a 32x32 fp32 tile), "
        f"Dst checked against numpy"
    )
    print(f"{REPEATS} runs, wall {wall:.2f} s")
    print(f"sfpu_instructions_per_s: {sfpu_instructions / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
