"""PACR on Blackhole (one packer, packer 0's configuration), from the pages' pseudocode.

Written from tt-isa-documentation WormholeB0 Packers/InputAddressGenerator.md, OutputAddressGenerator.md,
FormatConversion.md, EdgeMasking.md, ReLU.md and ExponentThresholding.md and the Dst.md pages, over
plain Python ints, with the readings tensixsim/tensix/pack.py documents (read interface k reads 16*k
datums on; output in 16-byte chunks with a pending buffer; flushed zeros keep their sign; the
documented-as-mishandled inputs are RefUnimplemented). No emulator code is imported.

``c`` is a dict of concept-named configuration; ``dst`` a list of 1024 rows of 16 uint16 (DstBits) and
``valid`` 1024 bools; ``adc`` a dict {"ch0": [x, y, z, w], "ch1": [...], "ch0_cr": ..., "ch1_cr": ...};
``state`` {"addr": int, "needs_new": bool, "pending": bytes}; ``l1`` a bytearray.
"""

# ruff: noqa: N802, N806

from __future__ import annotations

from outcomes import RefFault, RefUB, RefUnimplemented, RefWait

L1_SIZE = 1536 * 1024
FP32, FP16, TF32, BF16, INT32, INT16, INT8 = 0, 1, 4, 5, 8, 9, 14
SIZE = {FP32: 4, TF32: 4, INT32: 4, BF16: 2, FP16: 2, INT16: 2, INT8: 1}
MASKS = {0: [0, 1, 2, 3], 1: [0], 3: [0, 1], 5: [0, 2], 7: [0, 1, 2], 10: [1, 3], 15: [0, 1, 2, 3]}


def Adj32(r: int) -> int:  # remap_addrs / swizzle_32b clear
    return ((r & 0x1F8) << 1) | (r & 0x207)


def Dst32ToCpu(v: int) -> int:
    return (v & 0x8000FFFF) | ((v & 0x7F000000) >> 8) | ((v & 0x00FF0000) << 7)


def Dst16ToBF16(v: int) -> int:
    return (v & 0x8000) | ((v & 0xFF) << 7) | ((v >> 8) & 0x7F)


def Dst16ToFP16(v: int) -> int:
    return (v & 0x8000) | ((v & 0x1F) << 10) | ((v >> 5) & 0x3FF)


def RoundE8(v: int, drop: int) -> int:
    """Rounding with an 8-bit exponent: flush denormals / zeros to +0, NaN to infinity, ties away."""
    sign, exp, man = v & 0x80000000, (v >> 23) & 0xFF, v & 0x7FFFFF
    if exp == 0:
        return 0
    if exp == 0xFF and man:
        return sign | 0x7F800000
    mag = ((v & 0x7FFFFFFF) + (1 << (drop - 1))) >> drop << drop
    return sign | mag


def Early(c: dict, raw: int) -> int:
    inter = c["inter"]
    if c["read32"]:
        v = Dst32ToCpu(raw)
        if inter == FP32:
            return RoundE8(v, 13) if c["round10"] and not c["raw"] else v
        if inter == TF32:
            return v if c["raw"] else RoundE8(v, 13)
        if inter == BF16:
            return v >> 16 if c["raw"] else RoundE8(v, 16) >> 16
        if inter == INT32:
            return v
        sign, mag = v >> 31, v & 0x7FFFFFFF
        if c["raw"]:
            return mag & 0xFF if c["unsigned"] else (sign << 7) | (mag & 0x7F)
        if c["unsigned"]:
            return 0 if sign else min(mag, 255)
        return (sign << 7) | min(mag, 127)
    if inter == INT16:
        return raw
    if inter == FP16:
        v = Dst16ToFP16(raw)
        return v if c["raw"] or (v & 0x7C00) else 0
    v = Dst16ToBF16(raw)
    if inter == BF16:
        return v if c["raw"] else RoundE8(v << 16, 16) >> 16
    return RoundE8(v << 16, 13)


def Value(bits: int, wide: bool) -> tuple[bool, int]:
    """(is NaN, signed order key)."""
    if wide:
        nan = (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF
        mag, s = bits & 0x7FFFFFFF, bits >> 31
    else:
        nan = False
        mag, s = bits & 0x7FFF, bits >> 15
    return bool(nan), (-mag if s else mag)


def ReLU(c: dict, x: int) -> int:
    mode, inter = c["relu"], c["inter"]
    if mode == 0:
        return x
    if inter in (INT32, INT16, INT8):
        if mode != 1:
            raise RefUnimplemented
        if inter == INT8 and c["unsigned"]:
            return x
        top = {INT32: 31, INT16: 15, INT8: 7}[inter]
        return 0 if x >> top & 1 else x
    wide = inter in (FP32, TF32)
    T = c["relu_threshold"] << 16 if wide else c["relu_threshold"]
    if inter == BF16:  # compare BF16 as the top half of FP32
        x32, T32 = x << 16, T << 16
    else:
        x32, T32 = x, T
    w = inter != FP16
    xn, xk = Value(x32 if w else x, w)
    tn, tk = Value(T32 if w else T, w)
    if xn:
        return x
    if mode == 1:
        return 0 if xk <= 0 else x
    if mode == 2:
        return 0 if (not tn and xk <= tk) else x
    if xk <= 0:
        return 0
    return T if (not tn and xk > tk) else x


def ExpThreshold(c: dict, d: int) -> int:
    if not c["exp_threshold_en"]:
        return d
    inter = c["inter"]
    if inter in (FP32, TF32):
        e = (d >> 23) & 0xFF
    elif inter == BF16:
        e = (d >> 7) & 0xFF
    elif inter == FP16:
        e = (d >> 10) & 0x1F
    else:
        return d
    return 0 if e < c["exp_threshold"] else d


def ToFP16(v: int) -> int:
    sign = (v >> 16) & 0x8000
    mag = v & 0x7FFFFFFF
    if mag <= 0x38000000:
        return sign
    if mag < 0x38800000:
        raise RefUnimplemented
    e = ((v >> 23) & 0xFF) - 112
    if e > 31:
        return sign | 0x7FFF
    return sign | (e << 10) | ((v >> 13) & 0x3FF)


def Late(c: dict, d: int) -> bytes:
    inter, out = c["inter"], c["out"]
    if inter in (INT32, INT16, INT8):
        return d.to_bytes(SIZE[out], "little")
    if inter == FP16:
        if out == FP16:
            return d.to_bytes(2, "little")
        e, m = (d >> 10) & 0x1F, d & 0x3FF
        if e == 31:
            raise RefUnimplemented
        if e == 0 and m:
            if out != BF16:
                raise RefUnimplemented
            return (d & 0x8000).to_bytes(2, "little")
        v = ((d & 0x8000) << 16) | (((e + 112) << 23) if e else 0) | (m << 13)
    else:
        v = d << 16 if inter == BF16 else d
    if out in (FP32, TF32):
        return v.to_bytes(4, "little")
    if out == BF16:
        return (v >> 16).to_bytes(2, "little")
    return ToFP16(v).to_bytes(2, "little")


def CheckConversion(c: dict) -> None:
    """FormatConversion.md's tables: "No" is undefined; forms not modelled are unimplemented."""
    inter, out, raw, r10 = c["inter"], c["out"], c["raw"], c["round10"]
    if c["read32"]:
        if inter in (FP16, INT16):
            raise RefUB
        if inter == BF16 and r10:
            raise RefUnimplemented
        if inter == TF32 and raw and out != FP32:
            raise RefUnimplemented
    else:
        if inter == INT32 or (inter == FP32 and not (r10 and not raw)):
            raise RefUB
        if inter in (BF16, FP16) and r10:
            raise RefUnimplemented
        if inter == TF32 and raw:
            raise RefUnimplemented
    ints = (INT32, INT16, INT8)
    if (inter in ints or out in ints) and inter != out:
        raise RefUB
    if inter == FP32 and out == TF32:
        raise RefUB


def pacr(c: dict, dst, valid, adc: dict, state: dict, l1: bytearray, ready, cycle: int, f: dict) -> None:
    """One PACR with instruction fields ``f`` (read_intf_sel, zero_write, flush, last, addr_mode)."""
    if f["read_intf_sel"] not in MASKS:
        raise RefUnimplemented
    CheckConversion(c)
    if c["relu"] >= 2 and c["inter"] in (INT32, INT16, INT8):
        raise RefUnimplemented
    if c["relu"] >= 2 and c["relu_threshold"] & 0x8000:
        raise RefUB
    if c["exp_threshold_en"] and c["relu"] == 3:
        raise RefUnimplemented
    edge_used = not (f["zero_write"] or f["flush"]) and c["edge_mask"] != 0xFFFF
    if edge_used and c["edge_mode"] and c["inter"] not in (FP32, TF32, BF16):
        raise RefUnimplemented
    ch0, ch1 = adc["ch0"], adc["ch1"]
    bpd, xmask = {0: (4, 3), 1: (2, 7)}.get(c["inter"] & 3, (1, 15))
    Addr = (
        c["base0"] + ch0[0] * (c["xstride"] & 0xF) + ch0[1] * c["ystride"] + ch0[2] * c["zstride"]
    ) & 0xFFFFFFFF
    n = 0 if f["flush"] else ch1[0] - ch0[0] + 1
    if n < 0:
        raise RefUB
    Addr = ((Addr // bpd) & ~xmask) + (ch0[0] & xmask)
    Addr += c["offset"] << 4
    Src = Addr & 0x3FFF
    ifs = MASKS[f["read_intf_sel"]]
    if n and len(ifs) > 1 and (Src % 16 or n != 16):
        raise RefUnimplemented
    if n and len(ifs) == 1 and Src % 16 + n > 16:
        raise RefUnimplemented
    from_dst = not (f["zero_write"] or f["flush"])
    addrs = [(Src + 16 * k + i) & 0x3FFF for k in ifs for i in range(n)]
    edge = c["edge_mask"] if from_dst else 0xFFFF
    if edge != 0xFFFF and c["edge_mode"] and c["inter"] not in (FP32, TF32, BF16):
        raise RefUnimplemented
    datums = []
    for a in addrs:
        raw = 0
        if from_dst:
            row, col = a >> 4, a & 15
            rows = [Adj32(row), Adj32(row) + 8] if c["read32"] else [row & 0x3FF]
            for r in rows:
                if ready[r // 8] > cycle:
                    raise RefWait
            if all(valid[r] for r in rows):
                raw = (dst[rows[0]][col] << 16 | dst[rows[1]][col]) if c["read32"] else dst[rows[0]][col]
            if not (edge >> col) & 1:
                datums.append(("masked", 0))
                continue
        datums.append(("raw", raw))
    out = bytearray()
    for kind, raw in datums:
        if kind == "masked":
            d = (0xFF80 if c["inter"] == BF16 else 0xFF800000) if c["edge_mode"] else 0
        else:
            d = Early(c, raw)
        d = ReLU(c, d)
        d = ExpThreshold(c, d)
        out += Late(c, d)
    # output address generator
    addr = state["addr"]
    if state["needs_new"]:
        A = (c["l1_dest"] + (0 if c["sub_header"] else 1)) & 0xFFFFFFFF
        if c["limit"] * 2 + 1 < A:
            A -= c["fifo"] * 2
        A &= 0xFFFFFFFF
        if c["out"] & 2:
            A += c["exp_section"]
        addr = (A & 0x1FFFF) << 4
    buf = state["pending"] + bytes(out)
    last = f["last"] or f["flush"]
    if last and len(buf) % 16:
        buf += bytes(16 - len(buf) % 16)
    whole = len(buf) // 16 * 16
    if whole and addr + whole > L1_SIZE:
        raise RefFault
    l1[addr : addr + whole] = buf[:whole]
    state["addr"], state["pending"], state["needs_new"] = addr + whole, buf[whole:], bool(last)
    m = c["addr_mods"][f["addr_mode"]]
    for ch, key in ((ch0, "src"), (ch1, "dst")):
        crkey = "ch0_cr" if ch is ch0 else "ch1_cr"
        if m[f"y{key}_clear"]:
            ch[1] = adc[crkey][1] = 0
        elif m[f"y{key}_cr"]:
            adc[crkey][1] = (adc[crkey][1] + m[f"y{key}_incr"]) & 0x1FFF
            ch[1] = adc[crkey][1]
        else:
            ch[1] = (ch[1] + m[f"y{key}_incr"]) & 0x1FFF
        if m[f"z{key}_clear"]:
            ch[2] = adc[crkey][2] = 0
        else:
            ch[2] = (ch[2] + m[f"z{key}_incr"]) & 0xFF
