"""PACR on Wormhole (four packers), from the pages' pseudocode.

Written from tt-isa-documentation WormholeB0 PACR.md, Packers/InputAddressGenerator.md,
OutputAddressGenerator.md, Downsampling.md, EdgeMasking.md, ReLU.md, ExponentThresholding.md,
FormatConversion.md, the pipeline diagram of Packers/README.md and Dst.md, over plain Python ints. No
emulator code is imported.

The per-datum stages are pack_reference.py's (``Early``, ``ReLU``, ``ExpThreshold``, ``Late``,
``BfpBytes``, ``AccumulateL1``, ``CheckConversion``): that reference was written from these same
Wormhole pages (FormatConversion.md, ReLU.md, ExponentThresholding.md, L1.md), which describe one packer
the same way whichever of the four it is. What is Wormhole's own is here: PACR.md's PackerMask table,
the per-packer configuration and address generators (OvrdThreadId, Packer0InitialAddr, ``YZW_Addr &
~0xf``, the FIFO wrap per packer), downsampling, the pipeline order (ZeroWrite's datums join after
exponent thresholding; ReLU before thresholding), ``ApplyRelu & 3``, LateToFormat FP8 (e5m2: the FP16
rule, then two mantissa bits), and the readings pack/wormhole.py documents: modes the emulator does
not model are RefUnimplemented; ReLU modes 2 / 3 on integers are RefUB.

``cfg`` is a dict: the shared fields (``read32``, ``inter``, ``raw``, ``unsigned``, ``round10``,
``relu``, ``relu_threshold``, ``edge_mode``, ``base0``, ``xstride``, ``ystride``, ``zstride``,
``base1``, ``ystride1``, ``zstride1``, ``addr_mods``) and ``packers``: four dicts of per-packer fields
(``in``, ``out``, ``offset``, ``l1_dest``, ``sub_header``, ``limit``, ``fifo``, ``exp_section``,
``exp_threshold_en``, ``exp_threshold``, ``downsample``, ``edge_mask``, ``l1_acc``,
``addr_cnt_context``). ``adcs[thread]`` is {"ch0": [x, y, z, w], "ch1": ..., "ch0_cr": ..., "ch1_cr":
...}; ``states[i]`` is {"addr", "needs_new", "pending", "exp_addr", "exp_pending"}.
"""

# ruff: noqa: N802, N806

from __future__ import annotations

from outcomes import RefFault, RefUB, RefUnimplemented, RefWait
from pack_reference import (
    BF16,
    BFP8,
    BFP_BITS,
    FP8,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    TF32,
    AccumulateL1,
    Adj32,
    BfpBytes,
    CheckConversion,
    Early,
    ExpThreshold,
    Late,
    ReLU,
)

L1_SIZE = 1464 * 1024
MASKS = {0: [0], 1: [0], 2: [1], 4: [2], 8: [3], 3: [0, 1], 12: [2, 3], 15: [0, 1, 2, 3]}
INTS = (INT32, INT16, INT8)


def Stages(cfg: dict, p: dict) -> dict:
    """pack_reference's one-packer configuration dict for packer ``p`` (its In / Out formats)."""
    return {
        **cfg,
        "inter": cfg["inter"],
        "out": p["out"],
        "exp_threshold_en": p["exp_threshold_en"],
        "exp_threshold": p["exp_threshold"],
        "relu": cfg["relu"] & 3,
    }


def Check(cfg: dict, p: dict) -> None:
    if p["in"] != cfg["inter"]:
        raise RefUnimplemented  # IntermediateFormat differing from In_data_format
    out = FP16 if p["out"] == FP8 else p["out"]  # FP8 is the FP16 row of the late table
    CheckConversion({**cfg, "out": out})
    if p["l1_acc"] and p["out"] not in (FP32, BF16, FP16, INT32):
        raise RefUnimplemented


def LateFP8(c: dict, d: int) -> bytes:
    if c["out"] == FP8:
        return bytes([int.from_bytes(Late({**c, "out": FP16}, d), "little") >> 8])
    return Late(c, d)


def pacr(cfg, dst, valid, adcs, states, l1: bytearray, ready, cycle: int, thread: int, f: dict) -> None:
    """One PACR with instruction fields ``f`` (pack_sel, zero_write, flush, last, addr_mode, ovrd)."""
    if f["pack_sel"] not in MASKS:
        raise RefUB
    from_dst = not (f["zero_write"] or f["flush"])
    relu = cfg["relu"] & 3
    packer0 = cfg["packers"][0]
    Packer0InitialAddr = (packer0["l1_dest"] + (0 if packer0["sub_header"] else 1)) & 0xFFFFFFFF
    results, used = [], set()
    for i in MASKS[f["pack_sel"]]:
        p = cfg["packers"][i]
        c = Stages(cfg, p)
        Check(cfg, p)
        if relu >= 2 and cfg["inter"] in INTS:
            raise RefUB
        if relu >= 2 and cfg["relu_threshold"] & 0x8000:
            raise RefUB
        if from_dst and p["edge_mask"] != 0xFFFF and cfg["edge_mode"] and cfg["inter"] not in (
            FP32, TF32, BF16, BFP8,
        ):  # fmt: skip
            raise RefUnimplemented
        WhichADC = thread
        if f["ovrd"]:
            WhichADC = p["addr_cnt_context"]
            if WhichADC == 3:
                WhichADC = 0
        used.add(WhichADC)
        adc = adcs[WhichADC]
        ch0, ch1 = adc["ch0"], adc["ch1"]
        Addr = (
            cfg["base0"] + ch0[0] * (cfg["xstride"] & 0xF) + ch0[1] * cfg["ystride"] + ch0[2] * cfg["zstride"]
        ) & 0xFFFFFFFF
        bpd, xmask = {0: (4, 3), 1: (2, 7)}.get(p["in"] & 3, (1, 15))
        n = 0 if f["flush"] else ch1[0] - ch0[0] + 1
        if n < 0:
            raise RefUB
        Addr = ((Addr // bpd) & ~xmask) + (ch0[0] & xmask)
        Addr += p["offset"] << 4
        Source = Addr & 0x3FFF
        # Downsampling.md: the rotating mask decides which fetched datums go on
        mask = p["downsample"] or 0xFFFF
        keep = []
        for _ in range(n):
            keep.append(mask & 1)
            mask = ((mask << 15) | (mask >> 1)) & 0xFFFF
        if c["out"] in BFP_BITS and sum(keep) % 16:
            raise RefUnimplemented
        datums = []
        for k in range(n):
            a = (Source + k) & 0x3FFF
            d = 0
            if from_dst:
                row, col = a >> 4, a & 15
                rows = [Adj32(row), Adj32(row) + 8] if cfg["read32"] else [row & 0x3FF]
                for r in rows:
                    if ready[r // 8] > cycle:
                        raise RefWait
                raw = 0
                if all(valid[r] for r in rows):
                    raw = dst[rows[0]][col]
                    if cfg["read32"]:
                        raw = raw << 16 | dst[rows[1]][col]
                if (p["edge_mask"] >> col) & 1:
                    d = Early(c, raw)
                elif cfg["edge_mode"]:
                    d = 0xFF80 if cfg["inter"] in (BF16, BFP8) else 0xFF800000
                d = ExpThreshold(c, ReLU(c, d))
            if keep[k]:
                datums.append(d)
        out = [LateFP8(c, d) for d in datums]
        if c["out"] in BFP_BITS:
            data, exps = BfpBytes(c, out)
        else:
            data, exps = b"".join(out), b""
        # output address generator
        s = states[i]
        addr, exp_addr = s["addr"], s["exp_addr"]
        if s["needs_new"]:
            A = (p["l1_dest"] + (0 if p["sub_header"] else 1)) & 0xFFFFFFFF
            if i != 0 and Packer0InitialAddr >> 31:
                A += Packer0InitialAddr
            YZW = (cfg["base1"] + ch1[1] * cfg["ystride1"] + ch1[2] * cfg["zstride1"]) & 0xFFFFFFFF
            A = (A + (YZW & ~0xF)) & 0xFFFFFFFF
            if p["limit"] * 2 + 1 < A:
                A = (A - p["fifo"] * 2) & 0xFFFFFFFF
            if p["out"] & 2:
                exp_addr = (A & 0x1FFFF) << 4
                A += p["exp_section"]
            addr = (A & 0x1FFFF) << 4
        last = f["last"] or f["flush"]
        writes = []
        for key, at, new in (("pending", addr, data), ("exp_pending", exp_addr, exps)):
            buf = s[key] + new
            if last and len(buf) % 16:
                buf += bytes(16 - len(buf) % 16)
            whole = len(buf) // 16 * 16
            if whole and at + whole > L1_SIZE:
                raise RefFault
            writes.append((key, at, buf, whole))
        results.append((i, p, writes, last))
    for i, p, writes, last in results:
        s = states[i]
        for key, at, buf, whole in writes:
            chunks = buf[:whole]
            if p["l1_acc"] and whole:
                chunks = AccumulateL1(p["out"], bytes(l1[at : at + whole]), chunks)
            l1[at : at + whole] = chunks
            s[key] = buf[whole:]
        s["addr"], s["exp_addr"] = writes[0][1] + writes[0][3], writes[1][1] + writes[1][3]
        s["needs_new"] = bool(last)
    m = cfg["addr_mods"][f["addr_mode"]]
    for which in sorted(used):
        adc = adcs[which]
        for chan, key in (("ch0", "src"), ("ch1", "dst")):
            ch, cr = adc[chan], adc[chan + "_cr"]
            if m[f"y{key}_clear"]:
                ch[1] = cr[1] = 0
            elif m[f"y{key}_cr"]:
                cr[1] = (cr[1] + m[f"y{key}_incr"]) & 0x1FFF
                ch[1] = cr[1]
            else:
                ch[1] = (ch[1] + m[f"y{key}_incr"]) & 0x1FFF
            if m[f"z{key}_clear"]:
                ch[2] = cr[2] = 0
            else:
                ch[2] = (ch[2] + m[f"z{key}_incr"]) & 0xFF
