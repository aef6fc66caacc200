"""The matrix unit's section of ``constants.h``."""

from __future__ import annotations

import math
from collections.abc import Callable

from tensixsim import timing
from tensixsim.isa import isa_for
from tensixsim.tensix import adc, regs
from tensixsim.tensix.native.gen.common import (
    ARCH,
    LAYOUT_MODULES,
    _Defines,
    c_name,
)
from tensixsim.tensix.semantics import Retire

# ------------------------------------------------------------------------------ matrix unit
# The matrix unit's constants (matrix*.c and src_banks.c: MATRIX_*, MXF_*): the register-file shapes of
# regs.py, matrix/unit.py's arithmetic facts, matrix.moves.HOLDS as opcode sets, and the configuration
# fields the matrix unit and the Src banks' hand-over read through Config.field_for_thread (a
# ThreadConfig field of the pipe, else a Config field of the state its CFG_STATE_ID selects).
MATRIX_FIELDS = (
    "CFG_STATE_ID_StateID", "FP16A_FORCE_Enable", "ALU_ACC_CTRL_INT8_math_enabled",
    "ALU_ACC_CTRL_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcA_val",
    "ALU_FORMAT_SPEC_REG0_SrcA", "FIDELITY_BASE_Phase", "DEST_TARGET_REG_CFG_MATH_Offset",
    "DEST_REGW_BASE_Base", "DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b",
    "CLR_DVALID_SrcA_Disable", "CLR_DVALID_SrcB_Disable", "ALU_ACC_CTRL_Zero_Flag_disabled_src",
    "SRCA_SET_Base", "SRCB_SET_Base",
)  # fmt: skip
_FORMAT_CODES = 16  # a 4-bit SrcAFmt


def _fidelity_masks(slice_of: Callable[..., object], phase_bit: int) -> tuple[int, int]:
    """(high, low): the masks of matrix.unit.src_a_fidelity_bits / src_b_fidelity_bits (``slice_of``),
    found by probing an all-ones mantissa and checked on random values: without ``phase_bit`` the
    slice is FTZ(bits & high), with it FTZ(x - (bits & low))."""
    import numpy as np

    from tensixsim.tensix.matrix import unit

    f32, u32 = np.float32, np.uint32
    probe = np.array([0x3FFFFFFF], u32).view(f32)  # exponent 127, every mantissa bit set
    sign_exp_top = 0xC000_0000  # the bits the probe cannot show (sign, exponent bit 7): kept
    high = int(np.asarray(slice_of(probe, 0)).view(u32)[0]) | sign_exp_top
    with np.errstate(all="ignore"):
        low = int((probe - np.asarray(slice_of(probe, phase_bit), f32)).view(u32)[0]) | sign_exp_top
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(u32)
    bits = bits[((bits >> 23) & 0xFF) != 0xFF]  # finite values (NaN payloads are the host's business)
    x = bits.view(f32)
    with np.errstate(all="ignore"):
        for phase, expected in (
            (0, (bits & u32(high)).view(f32)),
            (phase_bit, x - (bits & u32(low)).view(f32)),
        ):
            got = np.asarray(slice_of(x, phase), f32).view(u32)
            if not np.array_equal(got, unit.ftz(expected).view(u32)):
                raise ValueError(f"{slice_of.__name__} is no longer a mask-and-subtract slice")
    return high, low


def _elementwise_divisors() -> tuple[int, int]:
    """ELWADD / ELWSUB's divisors for fidelity phase bits 0 and 1 (matrix.unit.elementwise), found by
    dividing 1.0 and checked to compose for phase 3."""
    import numpy as np

    from tensixsim.tensix.formats import BF16
    from tensixsim.tensix.matrix import unit

    fmts = unit.Formats(BF16, unit.DstMode.FP32)
    one, zero = np.array([[127]], np.uint32), np.array([[0]], np.uint32)  # Src datums 1.0 and 0

    def quotient(phase: int) -> float:
        return float(unit.elementwise(fmts, "add", one, zero, phase)[0, 0])

    divisors = (round(1 / quotient(1)), round(1 / quotient(2)))
    if quotient(3) != 1 / (divisors[0] * divisors[1]) or any(d & (d - 1) for d in divisors):
        raise ValueError("matrix.unit.elementwise's fidelity divisions are no longer two powers of two")
    return divisors


def _fp16_rebias() -> int:
    """What matrix.unit.read_src and formats.fp16_to_fp32 add to an FP16 exponent (Tensix FP16 has
    exponent 31 as an ordinary binade), found by reading exponent 1 and checked to agree."""
    import numpy as np

    from tensixsim.tensix import formats
    from tensixsim.tensix.matrix import unit

    src = int(unit.read_src(np.array([1], np.uint32), formats.FP16).view(np.uint32)[0]) >> 23
    plain = int(formats.fp16_to_fp32(np.array([1 << 10], np.uint16))[0]) >> 23
    if src != plain:
        raise ValueError("matrix.unit.read_src and formats.fp16_to_fp32 rebias FP16 exponents differently")
    return src - 1


def _opcode_set(out: _Defines, name: str, rows: list[set[str]], arch: str = ARCH) -> None:
    """``name``: an initializer of ``[len(rows)][8]`` words, bit ``op & 31`` of word ``op >> 5`` set for
    each instruction of a row (names ``arch``'s ISA does not have are left out: no word decodes to
    them)."""
    isa = isa_for(arch)
    lines = []
    for names in rows:
        ops = {isa.by_name[n].opcode for n in names if n in isa.by_name}
        words = [sum(1 << (op & 31) for op in ops if op >> 5 == w) for w in range(8)]
        lines.append("    {" + ", ".join(f"0x{w:08X}u" for w in words) + "}")
    out.text(f"#define {name} " + "{ \\", *(line + ", \\" for line in lines[:-1]), lines[-1] + "}")


def _hold_constants(out: _Defines, arch: str) -> None:
    """matrix_hold.c's constants: matrix.moves.HOLDS as ``arch``'s opcode sets."""
    from tensixsim.tensix.matrix import moves

    holds = moves.HOLDS
    out.add("MATRIX_HOLD_KINDS", f"{len(holds)}u")
    for kind, (name, (cycles, _, _)) in enumerate(holds.items(), start=1):  # move_hold's kind, cycles
        out.add(c_name("MATRIX_HOLD", name, "KIND"), f"{kind}")
        out.add(c_name("MATRIX_HOLD", name, "CYCLES"), f"{cycles}")
    every = sum(1 << i for i, (_, held, _) in enumerate(holds.values()) if held is None)
    out.add("MATRIX_HOLD_EVERY", f"0x{every:X}u")  # bit kind - 1: every instruction but the allowed
    _opcode_set(out, "MATRIX_HOLD_HELD", [set(held or ()) for _, held, _ in holds.values()], arch)
    _opcode_set(out, "MATRIX_HOLD_ALLOWED", [set(allowed) for _, _, allowed in holds.values()], arch)


# The matrix unit's fields a layout may lack, read as 0 there (regs.dst_mapping: Wormhole's Dst has
# neither remap nor swizzle); any other missing field is an error.
_MATRIX_ZERO_WHEN_ABSENT = ("DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b")


def _matrix_constants(out: _Defines, arch: str = ARCH) -> None:
    """matrix.c's (and matrix_hold.c's) section of ``constants.h``, over ``arch``'s configuration layout
    and instruction table."""
    from tensixsim.tensix import formats
    from tensixsim.tensix.matrix import moves, src_shifts, unit

    out.text("/* ---- matrix*.c, src_banks.c: regs.py, the matrix package (MATRIX_*, MXF_*) ---- */")
    for name in ("SRC_BANKS", "SRC_ROWS", "SRC_COLS", "DST_ROWS", "DST_COLS", "DST32_ROWS", "DST_BLOCK_ROWS",
                 "FACE_ROWS", "ROW_MASK", "SRCA", "SRCB"):  # fmt: skip
        out.add(c_name("MATRIX", name), f"{int(getattr(regs, name))}u")
    out.add("MATRIX_SRC_ROW_MASK", f"0x{regs.SRC_ROWS - 1:X}u")  # a 6-bit Src row
    out.add("MATRIX_SRC_BLOCK_MASK", f"0x{(regs.SRC_ROWS - 1) & ~(regs.DST_BLOCK_ROWS - 1):X}u")  # 8-aligned
    out.add("MATRIX_CLIENT_MATRIX_UNIT", f"{int(regs.SrcClient.MATRIX_UNIT)}u")
    out.add("MATRIX_CLIENT_UNPACKERS", f"{int(regs.SrcClient.UNPACKERS)}u")
    for mode in ("ONE_ROW", "16_ROWS", "HALF_OF_DST", "ALL_OF_DST"):
        out.add(c_name("MATRIX_ZEROACC", mode), f"{getattr(regs, f'ZEROACC_MODE_{mode}')}u")
    out.add("MATRIX_K", f"{unit.K}u")
    out.add("MATRIX_FP16_REBIAS", f"{_fp16_rebias()}u")
    out.add("MATRIX_RWC_FIDELITY_MASK", f"0x{adc.FIDELITY_MASK:X}u")
    safe_exp = math.frexp(unit.SAFE_PRODUCT)
    if safe_exp[0] != 0.5:
        raise ValueError("matrix.unit.SAFE_PRODUCT is no longer a power of two")
    out.add("MATRIX_SAFE_PRODUCT_EXP", str(safe_exp[1] - 1))  # SAFE_PRODUCT = 2**this
    out.add("MATRIX_EXP32", f"0x{int(unit._EXP32):08X}u")
    out.add("MATRIX_CANONICAL_NAN", f"0x{int(unit._CANONICAL_NAN):08X}u")
    for name, fn, bit in (
        ("A", unit.src_a_fidelity_bits, 1),
        ("B", unit.src_b_fidelity_bits, 2),
    ):
        high, low = _fidelity_masks(fn, bit)
        out.add(f"MATRIX_FIDELITY_{name}_BIT", f"{bit}u")
        out.add(f"MATRIX_FIDELITY_{name}_HIGH", f"0x{high:08X}u")
        out.add(f"MATRIX_FIDELITY_{name}_LOW", f"0x{low:08X}u")
    odd_a, odd_b = _elementwise_divisors()
    out.add("MATRIX_ELW_DIVISOR_A", f"{odd_a}.0f")
    out.add("MATRIX_ELW_DIVISOR_B", f"{odd_b}.0f")
    for name in ("BF16", "FP16", "TF32", "INT8"):
        out.add(c_name("MATRIX_STYLE", name), f"{getattr(formats, name)}u")
    # matrix.moves.EIGHT_BIT_EXPONENT as a mask over format codes (MOVA2D / MOVB2D's conversion).
    out.add("MATRIX_EIGHT_BIT_EXPONENT_MASK", f"0x{sum(1 << f for f in moves.EIGHT_BIT_EXPONENT):04X}u")
    styles = [moves.src_style(code) for code in range(_FORMAT_CODES)]
    out.add("MATRIX_NO_STYLE", "0xFFu")
    out.text(
        "#define MATRIX_SRC_STYLES {" + ", ".join("0xFFu" if s is None else f"{s}u" for s in styles) + "}"
    )
    # src_banks.c: a SrcA datum cleared to negative infinity (every bit set), UNPACR_NOP's unpacker cycles.
    out.add("MATRIX_SRC_MASK", f"0x{regs.SRC_MASK:X}u")
    out.add("MATRIX_UNPACR_NOP_CYCLES", str(timing.UNPACK.nop))
    # matrix_shifts.c: SHIFTXA's directions and block, TRNSPSRCB's first row (matrix/src_shifts.py).
    out.add("MATRIX_SHIFT_RIGHT", f"{src_shifts.DIRECTION_RIGHT}u")
    out.add("MATRIX_SHIFT_LEFT", f"{src_shifts.DIRECTION_LEFT}u")
    out.add("MATRIX_SHIFT_ROWS", f"{src_shifts._BLOCK}u")
    out.add("MATRIX_TRANSPOSE_BASE", f"{src_shifts._TRANSPOSE_BASE}u")
    # matrix_pool.c: the index GMPOOL's ArgMax records for SrcA rows 0..7 (unit._NONLINEAR_I_TRANSFORM).
    index_of = ", ".join(f"{i}u" for i in unit._NONLINEAR_I_TRANSFORM)
    out.text(f"#define MATRIX_GMPOOL_INDEX_OF {{{index_of}}}")
    out.names.add("MATRIX_GMPOOL_INDEX_OF")
    out.add("MATRIX_ISSUE_CYCLES", str(timing.MATRIX.issue))
    out.add("MATRIX_DST_WRITE_HIDDEN", str(timing.MATRIX.dst_write_hidden))
    out.add("MATRIX_RETIRE_DEFAULT", str(Retire().cycles))
    _hold_constants(out, arch)
    layout = LAYOUT_MODULES[arch]
    for name in MATRIX_FIELDS:
        thread = name in layout.THREAD_FIELDS
        if not thread and name not in layout.CONFIG_FIELDS:
            if name not in _MATRIX_ZERO_WHEN_ABSENT:
                raise ValueError(f"{name} is not in the {arch} configuration layout")
            thread, (index, shift, width) = True, (0, 0, 0)  # ThreadConfig word 0, an empty mask: 0
        else:
            index, shift, width = layout.THREAD_FIELDS[name] if thread else layout.CONFIG_FIELDS[name]
        if width > 32:
            raise ValueError(f"{name} spans {width} bits; matrix.c reads fields of one word only")
        out.add(c_name("MXF", name, "THREAD"), f"{int(thread)}")
        out.add(c_name("MXF", name, "INDEX"), f"{index}u")
        out.add(c_name("MXF", name, "SHIFT"), f"{shift}u")
        out.add(c_name("MXF", name, "MASK"), f"0x{((1 << width) - 1) << shift:08X}u")
    out.text("")
