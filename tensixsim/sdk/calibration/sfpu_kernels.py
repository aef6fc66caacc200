"""The vector-unit kernels of the unary and reduction benches (tenstorrent-docs microbenching/tensix
microbench_sfpu_transcendental.py and microbench_sfpu_reduce.py, blackhole-py ttk/sfpu.py helpers):
each op's Tensix words, as TRISC1 issues them inline, one op a loop iteration.

The figure is the whole loop per iteration (``beq``, the words, ``addi``, ``jal``; no empty loop
subtracted): where the vector unit keeps up, the loop's issue (one word a cycle) sets it, where it
does not (the swaps and lane shuffles of the reductions, two cycles each), the unit does.
"""

from __future__ import annotations

from tensixsim.sdk.calibration.case import BH, word

NOP = word("SFPNOP")


def _op(name: str, *values: int) -> int:
    """A vector-unit word from its fields in the ISA's order."""
    return word(name, **dict(zip((f.name for f in BH.by_name[name].fields), values, strict=True)))


def _loadi32(reg: int, bits: int) -> list[int]:
    """An FP32 constant in two SFPLOADIs: the low half, then the high half."""
    return [_op("SFPLOADI", reg, 10, bits & 0xFFFF), _op("SFPLOADI", reg, 8, bits >> 16)]


def _mul(a: int, b: int, dest: int, mod1: int = 0) -> int:
    return _op("SFPMUL", a, b, 9, dest, mod1)  # LReg 9: 0.0 added


def _add(b: int, c: int, dest: int, mod1: int = 0) -> int:
    return _op("SFPADD", 10, b, c, dest, mod1)  # LReg 10: 1.0 times b


def _mov(src: int, dest: int) -> int:
    return _op("SFPMOV", 0, src, dest, 0)


def _swap(c: int, d: int) -> int:
    return _op("SFPSWAP", 0, c, d, 1)  # VD the larger, VC the smaller


def exp(x: int, out: int, c: int, e: int, m: int, p: int) -> list[int]:
    """e ** LReg[x] into LReg[out] (tt-llk's 21f bf16 scheme): x log2(e) + 127 clamped to [0, 255]
    by two swaps, split into exponent and mantissa, a degree-2 polynomial, the exponent set back.
    c, e, m, p: scratch LRegs (a constant, the exponent, the mantissa, the polynomial)."""
    return [
        *_loadi32(c, 0x3FB8AA3B),  # log2(e)
        _mul(x, c, out),
        NOP,
        _op("SFPADDI", 0x42FE, out, 0),  # + 127.0
        NOP,
        _op("SFPLOADI", c, 0, 0x0000),
        _swap(out, c),
        NOP,
        _op("SFPLOADI", c, 0, 0x437F),
        _swap(c, out),
        NOP,
        _op("SFPEXEXP", 0, out, e, 0),
        _op("SFPEXMAN", 0, out, m, 0),
        _op("SFPSHFT", 0, e, m, 0),
        NOP,
        _op("SFPEXEXP", 0, m, e, 1),
        _op("SFPEXMAN", 0, m, m, 1),
        _op("SFPCAST", m, m, 0),
        NOP,
        *_loadi32(p, 0x27ACA418),
        _mul(p, m, p),
        NOP,
        *_loadi32(c, 0x33A85ADA),
        _add(p, c, p),
        NOP,
        _mul(p, m, p),
        NOP,
        *_loadi32(c, 0x3F803885),
        _add(p, c, p),
        NOP,
        _op("SFPSETEXP", 0, p, e, 0),
        NOP,
        _mov(e, out),
    ]


def reciprocal(src: int, out: int, x: int, two: int, t: int) -> list[int]:
    """1 / LReg[src] into LReg[out]: SFPARECIP's estimate and two Newton steps (t = x y - 2, then
    y = -(t y)); x, two, t: scratch LRegs."""
    newton = [_op("SFPMAD", x, out, two, t, 2), NOP, _mul(t, out, out, 1), NOP]
    return [_mov(src, x), *_loadi32(two, 0x40000000), _op("SFPARECIP", 0, src, out, 0), NOP, *newton * 2]


def rsqrt() -> list[int]:
    """1 / sqrt(LReg[0]) near 1: y = 1, then five steps y = y (1.5 - 0.5 x y y)."""
    step = [
        _mul(2, 2, 5),
        NOP,
        _mul(1, 5, 5),
        NOP,
        _mul(3, 5, 5),
        NOP,
        _add(4, 5, 5, 2),  # 1.5 - 0.5 x y y
        NOP,
        _mul(2, 5, 2),
        NOP,
    ]
    loads = [_op("SFPLOADI", reg, 0, bits) for reg, bits in ((2, 0x3F80), (3, 0x3F00), (4, 0x3FC0))]
    return [_mov(0, 1), *loads, *step * 5, _mov(2, 0)]


def sigmoid(neg: int, one: int, e: int, m: int, p: int, x: int, two: int, t: int) -> list[int]:
    """1 / (1 + e ** -LReg[0]) into LReg[0] (the scratch LRegs named as exp's and reciprocal's)."""
    return [
        *_loadi32(one, 0x3F800000),
        _mul(0, one, neg, 1),
        NOP,
        *exp(neg, 0, one, e, m, p),
        _add(0, one, 0),
        NOP,
        *reciprocal(0, 0, x, two, t),
    ]


def silu() -> list[int]:
    """LReg[0] * sigmoid(LReg[0])."""
    return [_mov(0, 1), *sigmoid(2, 3, 4, 5, 6, 2, 3, 4), _mul(1, 0, 0), NOP]


def sum32() -> list[int]:
    """The sum of LReg[0]'s 32 lanes: seven rotations within each row of 8 added up, then the four
    rows through a transpose."""
    rotate = [_op("SFPSHFT2", 0, 0, 2, 3), NOP, _add(1, 2, 1), NOP, _mov(2, 0)]
    rows = [_op("SFPLOADI", reg, 2, 0) for reg in (1, 2, 3)]
    total = [w for reg in (1, 2, 3) for w in (_add(0, reg, 0), NOP)]
    return [_mov(0, 1), *rotate * 7, _mov(1, 0), *rows, _op("SFPTRANSP", 0, 0, 0, 0), NOP, *total]


def horizontal_max() -> list[int]:
    """The maximum of each row of 8 lanes of LReg[0] and of LReg[4]: shifted copies (by 4, 2, 1
    lanes) swapped with them, then rotated into place."""
    words = []
    for shift in (4, 2, 1):
        words += [_mov(0, 1), _mov(4, 5)]
        words += [_op("SFPSHFT2", 0, 1, 1, 4), _op("SFPSHFT2", 0, 5, 5, 4)] * shift
        words += [_swap(0, 1), _swap(4, 5)]
    return [*words, _op("SFPSHFT2", 0, 0, 0, 3), _op("SFPSHFT2", 0, 4, 4, 3)]


def max8x4() -> list[int]:
    return [_mov(0, 4), *horizontal_max()]


def row_max() -> list[int]:
    """Each row's maximum of a 32x32 tile in Dst (bf16): per half of the faces and group of 8 rows,
    eight loads, a swap network, the horizontal maximum, two stores."""
    words = [_op("SFPCONFIG", 0, 15, 1)]
    for base in (0, 32):
        for r0 in (0, 8):
            r1 = r0 + 4
            rows = (r0, r0 + 2, 16 + r0, 16 + r0 + 2, r1, r1 + 2, 16 + r1, 16 + r1 + 2)
            # bf16, ADDR_MOD 7 (which moves nothing)
            words += [_op("SFPLOAD", reg, 2, 7, base + row) for reg, row in enumerate(rows)]
            words += [_swap(c, d) for c, d in ((0, 2), (4, 6), (1, 3), (5, 7), (0, 1), (4, 5))]
            words += horizontal_max()
            words += [_op("SFPSTORE", 0, 2, 7, base + r0), _op("SFPSTORE", 4, 2, 7, base + r1), NOP]
    return words


# (name, what, words, silicon cycles an iteration)
KERNELS = (
    ("exp", "exp", exp(0, 0, 1, 2, 3, 4), 40),
    ("recip", "reciprocal, two Newton steps", reciprocal(0, 0, 1, 2, 3), 16),
    ("rsqrt", "reciprocal square root, five Newton steps", rsqrt(), 58),
    ("sigmoid", "sigmoid", sigmoid(1, 2, 3, 4, 5, 1, 2, 3), 59),
    ("silu", "SiLU", silu(), 62),
    ("sum32", "sum of 32 lanes", sum32(), 51),
    ("max8x4", "maximum of each row of 8 lanes", max8x4(), 51),
    ("rowmax", "row maximum of a 32x32 tile", row_max(), 293),
)
