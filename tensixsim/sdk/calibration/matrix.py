"""The matrix unit's bench (TRISC1 alone): its drain, and the source / Dst preparation before a
matmul. Its other rows (the MOP of one K-step, the initialisation) expanded whatever MOP
configuration an earlier launch left, or ran once against a twenty-iteration empty loop: not figures
of a known program."""

from __future__ import annotations

from tensixsim.sdk.calibration.case import BH, Case

# The bench's empty loop holds one instruction (and 20 iterations, as these rows).
_EMPTY = "lui s1, 0x4D0B0"


def _inline(name: str, **fields: int) -> str:
    word = BH.encode(name, **fields)
    return f".word 0x{(word << 2 | word >> 30) & 0xFFFFFFFF:08x}"


# STALLWAIT(SYNC; MATH | SFPU) inline, then the PC buffer's done check, as the bench built it.
_DRAIN = (
    f"{_inline('STALLWAIT', stall_res=0x2, wait_res=0x810)}\n"
    "lui t0, 0xffe80\naddi t0, t0, 4\nsw zero, 0(t0)\nlw s1, 0(t0)\nand zero, zero, s1"
)
# ZEROSRC of SrcA and SrcB, both banks; ZEROACC of all of Dst (ADDR_MOD 1); SETRWC clearing every
# counter.
_PREP = "\n".join(
    (
        _inline("ZEROSRC", zero_val=0, write_mode=0, bank_mask=1, src_mask=3),
        _inline("ZEROACC", clear_mode=3, use_32_bit_mode=0, clear_zero_flags=0, addr_mode=1, where=0),
        _inline("SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=15),
    )
)

_TRISC1 = {"cores": ("trisc1",), "figure_cores": ("trisc1",), "iters": 20, "empty": _EMPTY}
MATRIX_CASES = (
    Case(
        "math_drain", "STALLWAIT(SYNC; MATH, SFPU) + done check (TRISC1)", _DRAIN, 1, (7.95, 7.95), **_TRISC1
    ),
    Case(
        "math_prep_src",
        "ZEROSRC, ZEROACC, SETRWC, then the drain (TRISC1)",
        f"{_PREP}\n{_DRAIN}",
        1,
        (16.4, 16.4),
        # docs/timing.md, "Coprocessor figures": MatrixUnit.md gives the three one cycle each.
        calibrated=False,
        **_TRISC1,
    ),
)
