"""Reference helpers shared by the register-file and matrix-move tests, from the Dst pages."""

from __future__ import annotations


def bits(word: int, lo: int, hi: int) -> int:
    """Bits ``hi..lo`` of ``word``, as the pages write ``word[hi:lo]``."""
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def Adj16(r: int, remap: bool) -> int:  # noqa: N802 - the pages' name
    if remap:
        r = (r & 0x3C7) ^ ((r & 0x030) >> 1) ^ ((r & 0x008) << 2)
    return r


def Adj32(r: int, remap: bool, swizzle: bool) -> int:  # noqa: N802 - the pages' name
    r = Adj16(r, remap)
    if swizzle:
        r = (r & 0x3F3) ^ ((r & 0x018) >> 1) ^ ((r & 0x004) << 1)
    return ((r & 0x1F8) << 1) | (r & 0x207)
