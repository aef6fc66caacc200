"""Tensix instructions retired per second through the frontend (MOP + replay expansion).

TRISC0 records ten SETDMAREG/ADDDMAREG instructions into its replay buffer, then pushes one
template-1 MOP (outer 100 x inner 10) whose loop instruction replays them: 10,000 scalar-unit
instructions flow through the MOP expander, the replay expander, the wait gate and ThCon. The GPRs
are checked against the arithmetic before the figure is printed. ``--arch wormhole``: on a Wormhole
tile (the same program: these instructions encode alike on both chips).

A run this short is mostly the run's fixed cost (starting the cores, the first translation): about a
millisecond. ``--long``: the largest MOP instead (outer 127 x inner 127, 161,290 instructions a run,
three runs), which the coprocessor engine's own rate sets; printed as ``tensix_mop_long_per_s``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tensixsim import Tile
from tensixsim.sdk.build import build

OUTER, INNER, BODY = 100, 10, 10
REPEATS = 10  # fresh tiles, for a steadier figure
LONG_OUTER, LONG_INNER, LONG_REPEATS = 127, 127, 3  # the MOP's loop counts are at most 127


def source(outer: int, inner: int) -> str:
    """The TRISC0 program: the replayed body in a template-1 MOP of ``outer`` x ``inner``."""
    return f"""
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
    mop[0] = {outer};
    mop[1] = {inner};
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
    parser.add_argument("--long", action="store_true", help="the largest MOP: the engine's own rate")
    args = parser.parse_args()
    outer, inner, repeats = (LONG_OUTER, LONG_INNER, LONG_REPEATS) if args.long else (OUTER, INNER, REPEATS)
    root = Path("build") / "bench"
    root.mkdir(parents=True, exist_ok=True)
    tag = "_long" if args.long else ""
    path = root / f"frontend{tag}.c"
    path.write_text(source(outer, inner))
    elf = build(
        "trisc0", [path], root / f"frontend{tag}_{args.arch}_trisc0.elf", arch=args.arch, build_dir=root
    )
    wall = issued = 0
    for _ in range(repeats):
        tile = Tile(args.arch)
        tile.load_elf("trisc0", elf)
        start = time.perf_counter()
        result = tile.run(max_cycles=10**8, release=["trisc0"])
        wall += time.perf_counter() - start
        pipe = tile.backend.pipes[0]
        issued += pipe.issued
        expected_sum = outer * inner * (BODY // 2)
        gpr1 = int(tile.coprocessor.thcon.gprs[0, 1])
        if gpr1 != expected_sum or pipe.issued < outer * inner * BODY:
            raise SystemExit(f"GPR1 = {gpr1} (expected {expected_sum}), issued {pipe.issued}")
    print(result.summary(tile.arch.clock_hz))
    print(
        f"pipe 0 issued {pipe.issued:,} instructions per run by cycle {pipe.last_cycle:,}; "
        f"GPR1 = {gpr1} (checked)"
    )
    print(f"{repeats} runs, wall {wall:.2f} s")
    name = "tensix_mop_long_per_s" if args.long else "tensix_instructions_per_s"
    print(f"{name}: {issued / wall:.0f} instructions/s")


if __name__ == "__main__":
    main()
