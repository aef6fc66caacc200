"""The scalar unit's (ThCon's) figures: steady rates of instructions pushed to it."""

from __future__ import annotations

from collections.abc import Sequence

from tensixsim.sdk.calibration.case import PC_BUF_SYNC, Case, li, word

# --------------------------------------------------------------------------- the scalar unit (ThCon)
# The ThCon bench (TRISC1; blackhole-py microbenching/tensix/microbench_xmov.py, 4 iterations):
# instruction words pushed by stores to the instruction buffer (a3), then the drain: STALLWAIT(SYNC;
# C9) pushed (a6) and the PC buffer's done check (a0). The figure is the steady cost of one
# operation in the unit: the loop with four pushes and the drain, minus the loop with the drain
# alone, per push. The distinct words sit in a2, a4, a5, a7 in first-use order [s4, s5, s6, t0].
_THCON_DRAIN = "sw a6, 0(a3)\nsw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"


def _thcon_setup(words: Sequence[int]) -> str:
    regs = ("a2", "a4", "a5", "a7")
    return "\n".join(
        (
            f"lui a3, 0xffe40\n{li('a0', PC_BUF_SYNC)}",
            li("a6", word("STALLWAIT", stall_res=0x2, wait_res=0x200)),
            *(li(regs[i], w) for i, w in enumerate(dict.fromkeys(words))),
        )
    )


def _thcon_case(name: str, what: str, words: Sequence[int], silicon: float, **kw) -> Case:
    regs = {w: r for w, r in zip(dict.fromkeys(words), ("a2", "a4", "a5", "a7"), strict=False)}
    pushes = "\n".join(f"sw {regs[w]}, 0(a3)" for w in words)
    return Case(
        name,
        what,
        f"{pushes}\n{_THCON_DRAIN}",
        len(words),
        (silicon, silicon),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=4,
        setup=_thcon_setup(words),
        empty=_THCON_DRAIN,
        **kw,
    )


THCON_CASES = (
    Case(
        "thcon_drain",
        "STALLWAIT(SYNC; C9) pushed + done check, nothing else (TRISC1)",
        _THCON_DRAIN,
        1,
        (12.25, 12.25),
        cores=("trisc1",),
        figure_cores=("trisc1",),
        iters=4,
        setup=_thcon_setup(()),
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
    _thcon_case(
        "thcon_setdmareg",
        "SETDMAREG, steady (per instruction, TRISC1)",
        [word("SETDMAREG", payload_sig_sel=i, reg_index_16b=24) for i in range(4)],
        1.0,
    ),
    _thcon_case(
        "thcon_shiftdmareg",
        "SHIFTDMAREG by an immediate, steady (per instruction, TRISC1)",
        [
            word(
                "SHIFTDMAREG",
                op_b_is_const=1,
                op_sel=0,
                result_reg_index=24 + (i & 1),
                op_b_reg_index=i,
                op_a_reg_index=24,
            )
            for i in range(4)
        ],
        3.062,
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
    _thcon_case(
        "thcon_dmanop",
        "DMANOP, steady (per instruction, TRISC1)",
        [word("DMANOP")] * 4,
        1.25,
        calibrated=False,  # docs/timing.md, "Coprocessor figures"
    ),
)
