"""Tensix instructions retired per second through the frontend (MOP + replay expansion).

TRISC0 records ten SETDMAREG/ADDDMAREG instructions into its replay buffer, then pushes one
template-1 MOP (outer 100 x inner 10) whose loop instruction replays them: 10,000 scalar-unit
instructions flow through the MOP expander, the replay expander, the wait gate and ThCon. The GPRs
are checked against the arithmetic before the figure is printed. ``--arch wormhole``: on a Wormhole
tile (the same program: these instructions encode alike on both chips).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tensixsim import Tile
from tensixsim.sdk.build import build

OUTER, INNER, BODY = 100, 10, 10
REPEATS = 10  # fresh tiles, for a steadier figure

SOURCE = f"""
#include "tensixsim.h"
#include "tensix_ops.h"

int main(void)
{{
    volatile uint32_t *mop = (volatile uint32_t *)0xFFB80000;
    TTI_SETDMAREG(0, 0, 0, 2);            /* GPR1 low half = 0 */
    TTI_SETDMAREG(0, 0, 0, 3);            /* GPR1 high half = 0 */
    TTI_REPLAY(0, {BODY}, 0, 1);          /* record the next {BODY} words into slots 0.. */
    for (int i = 0; i < {BODY // 2}; i++) {{
        TTI_SETDMAREG(0, 1, 0, 4);        /* GPR2 low half = 1 */
        TTI_ADDDMAREG(0, 1, 2, 1);        /* GPR1 += GPR2 */
    }}
    uint32_t replay = TT_OP_REPLAY(0, {BODY}, 0, 0);
    mop[0] = {OUTER};
    mop[1] = {INNER};
    mop[2] = TT_OP_NOP;
    mop[3] = TT_OP_NOP;
    mop[4] = TT_OP_NOP;
    mop[5] = replay;
    mop[6] = TT_OP_NOP;
    mop[7] = replay;
    mop[8] = replay;
    TTI_MOP(1, 0, 0);
    return 0;
}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("blackhole", "wormhole"), default="blackhole", help="the chip")
    args = parser.parse_args()
    root = Path("build") / "bench"
    root.mkdir(parents=True, exist_ok=True)
    source = root / "frontend.c"
    source.write_text(SOURCE)
    elf = build("trisc0", [source], root / f"frontend_{args.arch}_trisc0.elf", arch=args.arch, build_dir=root)
    wall = issued = 0
    for _ in range(REPEATS):
        tile = Tile(args.arch)
        tile.load_elf("trisc0", elf)
        start = time.perf_counter()
        result = tile.run(max_cycles=10**8, release=["trisc0"])
        wall += time.perf_counter() - start
        pipe = tile.backend.pipes[0]
        issued += pipe.issued
        expected_sum = OUTER * INNER * (BODY // 2)
        gpr1 = int(tile.coprocessor.thcon.gprs[0, 1])
        if gpr1 != expected_sum or pipe.issued < OUTER * INNER * BODY:
            raise SystemExit(f"GPR1 = {gpr1} (expected {expected_sum}), issued {pipe.issued}")
    print(result.summary(tile.arch.clock_hz))
    print(
        f"pipe 0 issued {pipe.issued:,} instructions per run by cycle {pipe.last_cycle:,}; "
        f"GPR1 = {gpr1} (checked)"
    )
    print(f"{REPEATS} runs, wall {wall:.2f} s")
    print(f"tensix_instructions_per_s: {issued / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
