"""The baby cores' own figures: their instructions, their loads and stores (L1, local RAM, MMIO),
and two or all five cores at once."""

from __future__ import annotations

from tensixsim.arch import CORE_NAMES
from tensixsim.sdk.calibration.case import Case, li, rept


def offsets(count: int, text: str) -> str:
    """``text`` with ``OFF`` replaced by 0, 4, 8, ... and ``N`` by 0, 1, 2, ... (independent words
    into distinct registers)."""
    return "\n".join(text.replace("OFF", str(4 * i)).replace("N", str(i)) for i in range(count))


# --------------------------------------------------------------------------- the core's own
CORE_CASES = (
    Case("alu_dependent", "dependent add chain", rept(8, "add a0, a0, a1"), 8, (1.0, 1.0)),
    Case(
        "shift_zba_zbb_dependent",
        "dependent slli / sh2add / rol / andn",
        rept(2, "slli a0, a0, 1\nsh2add a0, a0, a1\nrol a0, a0, a1\nandn a0, a0, a2"),
        8,
        (1.0, 1.0),
    ),
    Case("lui_auipc", "lui, auipc", rept(4, "lui a0, 1\nauipc a1, 0"), 8, (1.0, 1.0)),
    Case("branch_taken", "taken beq", rept(8, "beq zero, zero, .+4"), 8, (1.0, 1.0)),
    Case("jal", "jal to the next instruction", rept(8, "jal zero, .+4"), 8, (1.0, 1.0)),
    Case(
        "auipc_addi_jalr",
        "auipc + addi + jalr (per instruction)",
        "auipc a0, 0\naddi a0, a0, 12\njalr zero, 0(a0)",
        3,
        (1.0, 1.0),
    ),
    Case(
        "mul_independent",
        "independent mul",
        "mul a0, a0, a5\nmul a1, a1, a5\nmul a2, a2, a5\nmul a3, a3, a5",
        4,
        (1.0, 1.0),
    ),
    Case("mul_dependent", "dependent mul", rept(4, "mul a0, a0, a5"), 4, (1.75, 1.75)),
    # 1 % 3 on every iteration after the first.
    Case("remu_dependent", "dependent remu", "remu a0, a0, a5", 1, (6.0, 6.0), setup="li a5, 3"),
    # 0x12345679 divided by 3 again and again: 0 after 18 divides; 10,000 iterations as measured.
    Case(
        "divu_dependent",
        "dependent divu (0x12345679 / 3, ...)",
        "divu a0, a0, a5",
        1,
        (6.023, 6.023),
        iters=10_000,
        setup=f"{li('a0', 0x12345679)}\nli a5, 3",
    ),
    Case("fence", "fence", "fence", 1, (4.0, 4.0)),
    Case("csr_read", "csrr of cfg0", rept(4, "csrr a0, 0x7c0"), 4, (4.0, 4.0)),
)

# --------------------------------------------------------------------------- memory
MEMORY_CASES = (
    Case("l1_lw_fixed", "L1 lw of one word", "lw a0, 0(s0)", 1, (2.6, 2.6)),
    Case("l1_lbu_fixed", "L1 lbu of one byte", "lbu a0, 0(s0)", 1, (2.6, 2.6)),
    Case("l1_lw_x4", "4 independent L1 lw (one 16-byte line)", offsets(4, "lw aN, OFF(s0)"), 4, (1.25, 1.25)),
    Case("l1_lw_x8", "8 independent L1 lw (two lines)", offsets(8, "lw aN, OFF(s0)"), 8, (1.46, 1.63)),
    Case(
        "l1_lw_chase",
        "L1 lw chain (a word pointing at itself)",
        "lw s0, 0(s0)",
        1,
        (5.0, 5.0),
        setup="sw s0, 0(s0)",
    ),
    Case("l1_load_to_use", "L1 lw then its use", "lw a0, 0(s0)\nadd a1, a1, a0", 2, (4.5, 4.5)),
    Case(
        "l1_load_to_use_gap4",
        "L1 lw, 4 independent, then its use",
        "lw a0, 0(s0)\naddi a2, a2, 1\naddi a3, a3, 1\naddi a4, a4, 1\naddi a5, a5, 1\nadd a1, a1, a0",
        6,
        (1.5, 1.5),
    ),
    Case("l1_store", "L1 sw of one word", "sw a0, 4(s0)", 1, (1.0, 1.0)),
    Case("l1_store_x4", "4 L1 sw (one 16-byte line)", offsets(4, "sw a0, OFF(s0)"), 4, (1.0, 1.0)),
    Case("l1_sw_lw", "L1 sw then lw of the word", "sw a0, 4(s0)\nlw a1, 4(s0)", 2, (3.25, 3.25)),
    Case("local_lw", "local RAM lw", "lw a0, 0(s1)", 1, (1.0, 1.0)),
    Case("local_lw_chase", "local RAM lw chain", "lw s1, 0(s1)", 1, (1.0, 1.0), setup="sw s1, 0(s1)"),
    Case("local_sw_lw", "local RAM sw then lw of the word", "sw a0, 4(s1)\nlw a1, 4(s1)", 2, (1.5, 1.5)),
    Case(
        "local_sw_lw_trisc2",
        "local RAM sw then lw of the word, TRISC2",
        "sw a0, 4(s1)\nlw a1, 4(s1)",
        2,
        (2.0, 2.0),
        cores=("trisc2",),
        figure_cores=("trisc2",),
    ),
    Case("remote_local_lw", "lw from another core's local RAM", "lw a0, 0(s2)", 1, (2.5, 2.5)),
    Case("mmio_wall_clock", "MMIO read: wall clock", "lw a0, 0(s3)", 1, (2.0, 2.0)),
    Case(
        "mmio_noc_status", "MMIO read: NoC status register", "lw a0, 0(s3)", 1, (2.0, 2.0), mmio="noc_status"
    ),
    # The measured read-modify-write is a load and a store of the word (two operations).
    Case(
        "l1_rmw",
        "L1 read-modify-write (lw, sw of the word)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (8.0, 8.0),
    ),
)


# Two cores at once, each in its own loop (the contention report's pairs: BRISC with NCRISC, and
# BRISC with TRISC0).
def _pair_case(
    pair: tuple[str, str], name: str, what: str, body: str, ops: int, silicon: float, **kw
) -> Case:
    return Case(
        f"pair_{name}_{pair[1]}",
        f"2 cores at once ({pair[0].upper()}, {pair[1].upper()}): {what}",
        body,
        ops,
        (silicon, silicon),
        cores=pair,
        figure_cores=pair,
        **kw,
    )


PAIR_CASES = tuple(
    case
    for pair in (("brisc", "ncrisc"), ("brisc", "trisc0"))
    for case in (
        _pair_case(pair, "wall_clock", "wall-clock read", "lw a0, 0(s3)", 1, 2.0),
        _pair_case(pair, "l1_same_address", "same-address L1 read", "lw a0, 0(s0)", 1, 2.5, shared_l1=True),
        _pair_case(
            pair,
            "l1_rmw",
            "L1 read-modify-write",
            "lw a0, 8(s0)\nsw a0, 8(s0)",
            2,
            7.999 if pair[1] == "ncrisc" else 10.999,
            shared_l1=True,
            # docs/timing.md: BRISC with TRISC0 is held up where BRISC with NCRISC is not, which no
            # documented port wiring gives.
            calibrated=pair[1] == "ncrisc",
        ),
        _pair_case(pair, "remote_local_lw", "lw from another core's local RAM", "lw a0, 0(s2)", 1, 4.998),
    )
)

FIVE = CORE_NAMES
FIVE_CORE_CASES = (
    Case(
        "five_wall_clock",
        "5 cores at once: wall-clock read",
        "lw a0, 0(s3)",
        1,
        (2.25, 2.25),
        cores=FIVE,
        figure_cores=FIVE,
        calibrated=False,  # docs/timing.md: no contention for the tile's registers is modelled
    ),
    Case(
        "five_l1_same_address",
        "5 cores at once: same-address L1 read",
        "lw a0, 0(s0)",
        1,
        (2.667, 2.667),
        cores=FIVE,
        figure_cores=FIVE,
        shared_l1=True,
    ),
    Case(
        "five_l1_rmw_b_nc_t0",
        "5 cores at once: L1 read-modify-write (BRISC, NCRISC, TRISC0)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (14.5, 14.5),
        cores=FIVE,
        figure_cores=("brisc", "ncrisc", "trisc0"),
        shared_l1=True,
        calibrated=False,
    ),
    Case(
        "five_l1_rmw_t1_t2",
        "5 cores at once: L1 read-modify-write (TRISC1, TRISC2)",
        "lw a0, 8(s0)\nsw a0, 8(s0)",
        2,
        (10.5, 10.5),
        cores=FIVE,
        figure_cores=("trisc1", "trisc2"),
        shared_l1=True,
        calibrated=False,
    ),
    Case(
        "five_remote_local_lw",
        "5 cores at once: lw from another core's local RAM",
        "lw a0, 0(s2)",
        1,
        (17.0, 17.0),
        cores=FIVE,
        figure_cores=FIVE,
    ),
)
