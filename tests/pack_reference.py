"""PACR on Blackhole (one packer, packer 0's configuration), from the pages' pseudocode.

Written from tt-isa-documentation WormholeB0 Packers/InputAddressGenerator.md, OutputAddressGenerator.md,
FormatConversion.md, EdgeMasking.md, ReLU.md and ExponentThresholding.md and the Dst.md pages, over
plain Python ints, with the readings tensixsim/tensix/pack/ documents (read interface k reads 16*k
datums on; output in 16-byte chunks with a pending buffer; flushed zeros keep their sign; the
documented-as-mishandled inputs are RefUnimplemented). No emulator code is imported.

``c`` is a dict of concept-named configuration; ``dst`` a list of 1024 rows of 16 uint16 (DstBits) and
``valid`` 1024 bools; ``adc`` a dict {"ch0": [x, y, z, w], "ch1": [...], "ch0_cr": ..., "ch1_cr": ...};
``state`` {"addr": int, "needs_new": bool, "pending": bytes, "exp_addr": int, "exp_pending": bytes};
``l1`` a bytearray.

BFP output follows the value table of FloatBitPatterns.md (a BFP8 datum means Mag / 2**6 * 2**(Exp - bias))
and FormatConversion.md's late conversion ("converted to BF16, then round to BFP8 with one shared 8b
exponent per 16 datums"; BFP4 / BFP2 truncate the BFP8 result; BFP8a goes through E5M7), with the
readings pack/convert.py documents: the shared exponent is the block's largest, rounding is to nearest with
ties away from zero over exact fractions, a magnitude past 127 saturates, exponent 0 is zero, and a
zero magnitude is written with sign 0.
"""

# ruff: noqa: N802, N806

from __future__ import annotations

from fractions import Fraction

from outcomes import RefFault, RefUB, RefUnimplemented, RefWait

L1_SIZE = 1536 * 1024
FP32, FP16, TF32, BF16, INT32, INT16, INT8 = 0, 1, 4, 5, 8, 9, 14
BFP8a, BFP4a, BFP8, BFP4, FP8, BFP2a, BFP2 = 2, 3, 6, 7, 10, 11, 15
SIZE = {FP32: 4, TF32: 4, INT32: 4, BF16: 2, FP16: 2, INT16: 2, INT8: 1}
BFP_BITS = {BFP8: 8, BFP4: 4, BFP2: 2, BFP8a: 8, BFP4a: 4, BFP2a: 2}
A_STYLE = (BFP8a, BFP4a, BFP2a)
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
        if inter == BFP8:  # truncating to BF16, or rounding to E8M6
            return v >> 16 if c["raw"] else RoundE8(v, 17) >> 16
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
    if inter == BFP8:
        return v if c["raw"] else RoundE8(v << 16, 17) >> 16
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
    inter = BF16 if inter == BFP8 else inter  # E8M6 is held as BF16
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
    inter = BF16 if c["inter"] == BFP8 else c["inter"]
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
    """One datum's L1 bytes; for BFP outputs, the BF16 (or FP16 for the a styles) before blocking."""
    inter, out = c["inter"], c["out"]
    inter = BF16 if inter == BFP8 else inter
    if out in BFP_BITS:
        out = FP16 if out in A_STYLE else BF16
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


def BfpBlock(c: dict, block: list[int]) -> tuple[int, list[int]]:
    """16 datums (BF16, or FP16 for the a styles) -> (shared exponent, BFP datums)."""
    a = c["out"] in A_STYLE
    fields = []
    for d in block:
        if a:  # FP16 -> E5M7: truncate three mantissa bits
            fields.append((d >> 15, (d >> 10) & 0x1F, (d & 0x3FF) >> 3))
        else:
            fields.append((d >> 15, (d >> 7) & 0xFF, d & 0x7F))
    shared = max(e for _, e, _ in fields)
    bits = BFP_BITS[c["out"]]
    out = []
    for sign, e, m in fields:
        if e == 0:
            mag = 0
        else:
            # value = (1 + m / 128) * 2**(e - bias) = Mag / 64 * 2**(shared - bias)
            exact = (128 + m) * Fraction(2) ** (e - shared) / 2
            mag = min(int(exact + Fraction(1, 2)), 127)  # nearest, ties away from zero; saturate
        mag >>= 8 - bits  # BFP4 / BFP2: truncate the BFP8 magnitude
        out.append((sign << (bits - 1) | mag) if mag else 0)
    return shared, out


def BfpBytes(c: dict, datums: list[int]) -> tuple[bytes, bytes]:
    """Datum bytes (low bits first) and exponent bytes of a whole number of 16-datum blocks."""
    bits = BFP_BITS[c["out"]]
    data, exps = bytearray(), bytearray()
    for b in range(0, len(datums), 16):
        shared, block = BfpBlock(c, [int.from_bytes(d, "little") for d in datums[b : b + 16]])
        exps.append(shared)
        acc = 0
        for i, v in enumerate(block):
            acc |= v << (bits * i)
        data += acc.to_bytes(16 * bits // 8, "little")
    return bytes(data), bytes(exps)


ACC_FLOATS = {"fp32": (8, 23), "bf16": (8, 7), "fp16": (5, 10)}


def Accumulate(a: int, b: int, fmt: str) -> int:
    """L1 accumulation of one lane ("fp32" / "bf16" / "fp16" bits): the exact sum (fractions) rounded
    to nearest even, with the readings pack/stream.py documents (denormals read as zero, underflow to signed
    zero, NaN / inf rules with an 8-bit exponent, FP16 saturating)."""
    eb, mb = ACC_FLOATS[fmt]
    top, max_e, bias = eb + mb, (1 << eb) - 1, (1 << (eb - 1)) - 1
    fields = [(x >> top & 1, x >> mb & max_e, x & ((1 << mb) - 1)) for x in (a, b)]
    if eb == 8:
        nan = [e == max_e and m for _, e, m in fields]
        inf = [e == max_e and not m for _, e, m in fields]
        if any(nan) or (all(inf) and fields[0][0] != fields[1][0]):
            return max_e << mb | 1 << (mb - 1)
        if inf[0]:
            return a
        if inf[1]:
            return b
    values = [
        Fraction(0) if e == 0 else (-1) ** s * (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
        for s, e, m in fields
    ]
    total = values[0] + values[1]
    if total == 0:
        both_zero = values[0] == 0 and values[1] == 0
        return (fields[0][0] & fields[1][0]) << top if both_zero else 0
    sign, v = int(total < 0), abs(total)
    e = bias
    while v >= Fraction(2) ** (e + 1 - bias):
        e += 1
    while v < Fraction(2) ** (e - bias):
        e -= 1
    scaled = v / Fraction(2) ** (e - bias) * (1 << mb)  # in [2**mb, 2**(mb+1))
    q, r = divmod(scaled, 1)
    q = int(q) + (r > Fraction(1, 2) or (r == Fraction(1, 2) and int(q) % 2 == 1))
    if q == 2 << mb:
        q, e = q >> 1, e + 1
    if e <= 0:
        return sign << top
    if eb == 8 and e >= max_e:
        return sign << top | max_e << mb
    if eb == 5 and e > max_e:
        return sign << top | ((1 << top) - 1)
    return sign << top | e << mb | (q - (1 << mb))


def AccumulateL1(out: int, old: bytes, new: bytes) -> bytes:
    """L1.md's near-memory accumulate, lane by lane: FP32 / INT32 in 4-byte lanes, BF16 / FP16 in 2."""
    size = 4 if out in (FP32, INT32) else 2
    result = bytearray()
    for i in range(0, len(new), size):
        a = int.from_bytes(old[i : i + size], "little")
        b = int.from_bytes(new[i : i + size], "little")
        if out == INT32:  # sign-magnitude, saturating
            va = -(a & 0x7FFFFFFF) if a >> 31 else a & 0x7FFFFFFF
            vb = -(b & 0x7FFFFFFF) if b >> 31 else b & 0x7FFFFFFF
            v = max(-0x7FFFFFFF, min(0x7FFFFFFF, va + vb))
            r = (0x80000000 | -v) if v < 0 else v
        else:
            r = Accumulate(a, b, {FP32: "fp32", BF16: "bf16", FP16: "fp16"}[out])
        result += r.to_bytes(size, "little")
    return bytes(result)


def CheckConversion(c: dict) -> None:
    """FormatConversion.md's tables: "No" is undefined; forms not modelled are unimplemented."""
    inter, out, raw, r10 = c["inter"], c["out"], c["raw"], c["round10"]
    if inter in (BFP4, BFP4a, BFP2, BFP2a):
        raise RefUB  # valid only as LateToFormat
    if out == FP8 or inter in (BFP8a, FP8):
        raise RefUnimplemented
    if inter == BFP8 and r10:
        raise RefUnimplemented
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
    strided = f.get("dst_access_mode", 0)  # interface k reads 16 rows on (ttsim's Blackhole packer)
    if strided and f["read_intf_sel"] not in (0, 1, 3):
        raise RefUnimplemented
    CheckConversion(c)
    if c.get("l1_acc") and c["out"] not in (FP32, BF16, FP16, INT32):
        raise RefUnimplemented
    if c["relu"] >= 2 and c["inter"] in (INT32, INT16, INT8):
        raise RefUnimplemented
    if c["relu"] >= 2 and c["relu_threshold"] & 0x8000:
        raise RefUB
    if c["exp_threshold_en"] and c["relu"] == 3:
        raise RefUnimplemented
    edge_used = not (f["zero_write"] or f["flush"]) and c["edge_mask"] != 0xFFFF
    if edge_used and c["edge_mode"] and c["inter"] not in (FP32, TF32, BF16, BFP8):
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
    if c["out"] in BFP_BITS and n * len(ifs) % 16:
        raise RefUnimplemented
    from_dst = not (f["zero_write"] or f["flush"])
    addrs = [(Src + (256 if strided else 16) * k + i) & 0x3FFF for k in ifs for i in range(n)]
    edge = c["edge_mask"] if from_dst else 0xFFFF
    if edge != 0xFFFF and c["edge_mode"] and c["inter"] not in (FP32, TF32, BF16, BFP8):
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
    out = []
    for kind, raw in datums:
        if kind == "masked":
            d = (0xFF80 if c["inter"] in (BF16, BFP8) else 0xFF800000) if c["edge_mode"] else 0
        else:
            d = Early(c, raw)
        d = ReLU(c, d)
        d = ExpThreshold(c, d)
        out.append(Late(c, d))
    if c["out"] in BFP_BITS:
        data, exps = BfpBytes(c, out)
    else:
        data, exps = b"".join(out), b""
    # output address generator
    addr, exp_addr = state["addr"], state["exp_addr"]
    if state["needs_new"]:
        A = (c["l1_dest"] + (0 if c["sub_header"] else 1)) & 0xFFFFFFFF
        if c["limit"] * 2 + 1 < A:
            A -= c["fifo"] * 2
        A &= 0xFFFFFFFF
        if c["out"] & 2:
            exp_addr = (A & 0x1FFFF) << 4
            A += c["exp_section"]
        addr = (A & 0x1FFFF) << 4
    last = f["last"] or f["flush"]
    writes = []
    for key, at, new in (("pending", addr, data), ("exp_pending", exp_addr, exps)):
        buf = state[key] + new
        if last and len(buf) % 16:
            buf += bytes(16 - len(buf) % 16)
        whole = len(buf) // 16 * 16
        if whole and at + whole > L1_SIZE:
            raise RefFault
        writes.append((key, at, buf, whole))
    for key, at, buf, whole in writes:
        chunks = buf[:whole]
        if c.get("l1_acc") and whole:
            chunks = AccumulateL1(c["out"], bytes(l1[at : at + whole]), chunks)
        l1[at : at + whole] = chunks
        state[key] = buf[whole:]
    state["addr"], state["exp_addr"] = addr + writes[0][3], exp_addr + writes[1][3]
    state["needs_new"] = bool(last)
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
