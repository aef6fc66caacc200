"""The vector unit's multiply-add (the MAD sub-unit's arithmetic) on each chip, over numpy integers.

Both are bit-exact transcriptions of the software models SFPMAD.md points to (the jasondavies fork of
tt-isa-documentation, Miscellaneous/FMA/fma.c and its README).

Blackhole (``fma``, ``fma_model_bh``):

- denormal inputs are zero; the exact 48-bit product is cut by 23 bits to the addend's width plus three
  guard bits, the dropped bits ORed into a sticky bit (no rounding), and the smaller term is lined up
  with the larger by a shift whose sticky bit is dropped when nothing else survives;
- a product that underflows (its exponent below 0) counts as exactly zero; one that overflows is
  infinity whatever the addend (an infinite addend wins);
- one rounding, to nearest with ties to even; a denormal result (after rounding) becomes a zero of its
  sign. A sum below the normal range is shifted right one place only, not to its denormal position, so
  one just under 2**-127 with an all-ones mantissa rounds up to 2**-126 (the model's own behaviour);
- NaN results are always 0x7FC00000; a zero result is -0 only when both the product and the addend
  are negative (-0 * 1 + -0), +0 otherwise (x * 1 + -x).

Wormhole (``fma_wormhole``, ``fma_model_wh``), the same up to the alignment, then:

- every zero result is +0 (an exact zero, an underflowing product with a zero addend, a flushed result);
- a NaN result is not canonical: it starts as the sign of the product (an invalid operation: NaN or
  infinity times zero operands, or infinities of opposite signs) or of a NaN addend with 0x7F800001, and
  the rest of the computation goes on, ORing in the bits of the result it would have given (its
  exponent capped at 255) unless that result is zero, denormal, infinite or below the normal range;
- a finite product that overflows against an addend of the opposite infinity is NaN, not infinity;
- normalising right by two places keeps only the lowest bit as sticky (the hardware drops the other);
- a result whose exponent (after normalising) is below 0 is zero before rounding; one whose exponent
  is 0 rounds at the normal position and is zero unless rounding carries it to 2**-126.
"""

from __future__ import annotations

import numpy as np

SIGN, INF, CANONICAL_NAN = 0x80000000, 0x7F800000, 0x7FC00000
ONE = 0x3F800000
MAN = 0x7FFFFF
# fma_model_wh: the bits every NaN result of Wormhole's multiply-add has (with a sign).
WORMHOLE_NAN = 0x7F800001


def _k(value: int) -> np.ndarray:
    """A 0-d int64 constant: numpy combines a small array with one faster than with a Python int."""
    return np.array(value, np.int64)


# The multiply-add's constants, named after their values.
_0, _1, _3, _4, _7, _20, _23, _27, _63, _127, _255 = map(_k, (0, 1, 3, 4, 7, 20, 23, 27, 63, 127, 255))
_0xFF, _0xFFFFF, _MAN, _HIDDEN = map(_k, (0xFF, 0xFFFFF, MAN, MAN + 1))
_SIGN, _INF, _NAN, _ZM_ONE = map(_k, (SIGN, INF, CANONICAL_NAN, (MAN + 1) << 3))


def _bit_length(v: np.ndarray) -> np.ndarray:
    """Bit lengths of non-negative int64 values below 2**53: frexp's exponent, exact there (each such
    value converts to float64 without rounding)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def _semi_sticky_shift(v: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """``v >> amount`` with the shifted-out bits ORed into bit 0, unless nothing at all remains."""
    amount = np.minimum(amount, _63)
    out = v >> amount
    return (out | ((out << amount) != v)) * (out != _0)


def _some(mask: np.ndarray) -> bool:
    return np.count_nonzero(mask) != 0  # as mask.any(), faster on small arrays


class _Operands:
    """The operands of ``x * y + z`` (FP32 bit patterns) as both chips' MAD sub-units take them apart:
    exponents, mantissas with the hidden bit (denormals flushed to zero), ``z``'s mantissa with three
    guard bits, and the product's sign, exponent and mantissa cut to 28 bits (the dropped ones sticky)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
        v = np.array((x, y, z), np.int64)
        self.e = e = (v >> _23) & _0xFF
        m = ((v & _MAN) | _HIDDEN) * (e != _0)
        x, y, self.z = v
        xe, ye, self.ze = e
        self.xm, self.ym, zm = m
        self.zm = zm << _3
        self.p_sign, self.z_sign = (x ^ y) & _SIGN, self.z & _SIGN
        q = self.xm * self.ym  # below 2**48: with three guard bits (q << 3), cut by 23 bits
        self.pm = (q >> _20) | ((q & _0xFFFFF) != _0)  # below 2**28
        self.pe = xe + ye - _127


def fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Lanewise ``x * y + z`` of FP32 bit patterns (equal-shaped) as Blackhole's MAD sub-unit computes
    it (module docstring).

    Every lane is first computed as a sum of finite terms; the rarer outcomes (an overflow, an exact
    zero, no product, a NaN or infinite operand) then replace it, each only when some lane has one."""
    o = _Operands(x, y, z)
    z, e, xm, ym, zm, ze = o.z, o.e, o.xm, o.ym, o.zm, o.ze
    p_sign, z_sign, pm, pe = o.p_sign, o.z_sign, o.pm, o.pe

    re = np.maximum(pe, ze)
    pm_aligned = _semi_sticky_shift(pm, re - pe)
    zm_aligned = _semi_sticky_shift(zm, re - ze)
    r_sign = np.where(pm_aligned >= zm_aligned, p_sign, z_sign)
    same_sign = p_sign == z_sign
    rm = np.where(same_sign, pm_aligned + zm_aligned, np.abs(pm_aligned - zm_aligned))  # below 2**29
    exact_zero = rm == _0

    n = _bit_length(rm) - _27  # normalise to 26 fraction bits
    re = re + n
    low = re <= _0
    n = n + low
    # -27 <= n <= 3 (rm is below 2**29), so neither shift below reaches 63.
    right = np.maximum(n, _0)
    shifted_right = (rm >> right) | ((rm & (right | _1)) != _0)
    rm = np.where(n <= _0, rm << np.maximum(-n, _0), shifted_right)
    r = (np.maximum(re, _0) << _23) + ((rm >> _3) & _MAN)
    r = r + (((rm & _7) + (r & _1)) > _4)  # to nearest, ties to even
    r = r * ((r >> _23) != _0)  # a denormal result flushes to zero
    result = r_sign | r

    overflow = re >= _255
    if _some(overflow):
        result = np.where(overflow, r_sign | _INF, result)
    if _some(exact_zero):
        result = np.where(exact_zero, z_sign & p_sign, result)
    no_product = (pm == _0) | (pe < _0)
    if _some(no_product):
        result = np.where(no_product, np.where(zm != _0, z, z_sign & p_sign), result)
    x_special, y_special, z_special = e == _255
    special = x_special | y_special | z_special | (pe >= _255)
    if _some(special):
        nan = (
            (x_special & ((xm != _HIDDEN) | (ym == _0)))
            | (y_special & ((ym != _HIDDEN) | (xm == _0)))
            | (z_special & (zm != _ZM_ONE))
            | (z_special & (x_special | y_special) & (z_sign != p_sign))
        )
        special_result = np.where(nan, _NAN, np.where(z_special, z, p_sign | _INF))
        result = np.where(special, special_result, result)
    return result.astype(np.uint32)


_WH_NAN = _k(WORMHOLE_NAN)


def fma_wormhole(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Lanewise ``x * y + z`` of FP32 bit patterns (equal-shaped) as Wormhole's MAD sub-unit computes
    it (module docstring): every lane through the sum of its terms, then the earlier exits of
    ``fma_model_wh`` in its order."""
    o = _Operands(x, y, z)
    z, e, xm, ym, zm, ze = o.z, o.e, o.xm, o.ym, o.zm, o.ze
    p_sign, z_sign, pm, pe = o.p_sign, o.z_sign, o.pm, o.pe

    x_special, y_special, z_special = e == _255
    product_special = x_special | y_special | (pe >= _255)
    special = product_special | z_special
    invalid = (
        (x_special & ((xm != _HIDDEN) | (ym == _0)))
        | (y_special & ((ym != _HIDDEN) | (xm == _0)))
        | (z_special & (zm == _ZM_ONE) & product_special & (z_sign != p_sign))
    )
    z_nan = z_special & (zm != _ZM_ONE) & ~invalid
    has_nan = invalid | z_nan
    nan = np.where(invalid, p_sign | _WH_NAN, np.where(z_nan, z_sign | _WH_NAN, _0))
    pe = np.where(has_nan, np.minimum(pe, _255), pe)
    no_product = (pm == _0) | (pe < _0)
    pm = np.where(no_product & has_nan, _0, pm)  # a NaN goes on with no product
    pe = np.where(no_product & has_nan, _0, pe)

    re = np.maximum(pe, ze)
    pm_aligned = _semi_sticky_shift(pm, re - pe)
    zm_aligned = _semi_sticky_shift(zm, re - ze)
    r_sign = np.where(pm_aligned >= zm_aligned, p_sign, z_sign)
    rm = np.where(p_sign == z_sign, pm_aligned + zm_aligned, np.abs(pm_aligned - zm_aligned))
    exact_zero = rm == _0
    n = _bit_length(rm) - _27  # normalise to 26 fraction bits; n <= 2 (rm is below 2**29)
    re = re + n
    # The hardware's sticky step keeps only bit 0 of what it shifts out.
    rm = np.where(n <= _0, rm << np.maximum(-n, _0), (rm >> np.maximum(n, _0)) | (rm & _1))
    r = (np.maximum(re, _0) << _23) + ((rm >> _3) & _MAN)
    r = r + (((rm & _7) + (r & _1)) > _4)  # to nearest, ties to even
    result = np.where(has_nan, nan, r_sign) | r
    result = np.select(
        [exact_zero, re >= _255, re < _0, (r >> _23) == _0],
        [nan, np.where(has_nan, nan, r_sign | _INF), nan, nan],
        result,
    )
    result = np.where(no_product & ~has_nan, np.where(zm != _0, z, _0), result)
    result = np.where(special & ~has_nan, np.where(z_special, z, p_sign | _INF), result)
    return result.astype(np.uint32)
