"""Vector-unit (SFPU) kernels written in C with the SDK (examples/kernels/sfpu_math.c), on a whole tile.

BRISC reads BF16 tiles into a circular buffer, TRISC0 unpacks each to SrcA (SrcB zeroed), TRISC1 copies
it into an FP32 Dst half with ELWADD and runs relu, exp, a reciprocal or an SFPLOADMACRO-scheduled
``x * a + b`` over the half with FP32 SFPLOAD / SFPSTORE, TRISC2 packs it (FP32 or BF16) and NCRISC writes
it out. Each result is checked two ways:

- bit for bit against a per-lane reference of the same instruction sequence: the words TRISC1 pushed
  to the vector unit are recorded and must equal the sequence this file builds with the encoder (with
  its own constants); that sequence then runs on the tests' references (sfpu_reference.py,
  sfpu_float_reference.py's ``fma_bh`` / ``ApproxRecip``, sfpu_lanes_reference.py's SFPCAST and
  SFP_STOCH_RND), over the Dst the copy leaves (test_matmul's model of ELWADD into FP32 Dst), then
  through the packer's conversion (pack_reference.py);
- against numpy in float64, within the error bound each method documents (derived below).

Error bounds (u = 2**-24; the SFPMAD model keeps the product to three bits beyond FP32 with a sticky
bit and rounds once, to nearest):

- relu is exact.
- exp: f = fma(x, L, -n) with L = FP32(log2 e) errs by |x| * |L - log2 e| (the constant),
  |x L| * 2**-26 (product bits below the guard bits) and |f| u + 2**-27 <= u (the rounding, and n's
  bits lost in the alignment); 2**f then errs by ln 2 times that, relatively. The degree-7 Taylor
  polynomial of 2**f on |f| <= 1/2 errs by at most (ln2 / 2)**8 / 8! * 2**0.5 / 2**-0.5 < 1.1e-8
  relatively; its FP32 coefficients by < 0.6 u; the seven
  Horner steps (one ulp each, damped by |f| <= 1/2 towards the inner ones) by < 6 u. Adding n to the
  exponent is exact. So |rel. error| <= ln2 (|x| (|L - log2 e| + L 2**-26) + u) + 1.1e-8 + 6.6 u,
  about 7e-7 at |x| = 10 and 3e-6 at |x| = 88.
- reciprocal: SFPARECIP.md bounds y0 by 0.9944 / x < y0 < 1.0054 / x, so |e0| < 0.0056. A step
  y (2 - x y) in exact arithmetic squares the error; 2 - x y errs by at most 2**-26 + u and y * e by u,
  so e_{k+1} <= e_k**2 + 3 u: 3.16e-5 after one step, 1.8e-7 after two.
- affine (fma(a, x, b)): at most u |result| (the rounding) plus |a x| 2**-26 (the product's cut).

On Wormhole (the kernels' SDK_ARCH_WORMHOLE sequences, built here by ``Words("wormhole")``; the reference
is sfpu_wormhole_reference.py's ``WormholeRef``, its ``fma_wh`` and its SFPLOAD / SFPSTORE conversions):
exp rounds t to n by adding 1.5 * 2**23 (ties to even instead of SFP_STOCH_RND's), which leaves
|f| <= 1/2 and so the same bound; the reciprocal starts from 0x7EF311C3 - m with m = x's mantissa in
[1, 2), whose relative error is below 0.0506 (computed over all 2**23 mantissas), so the same recurrence
gives 2.56e-3 after one step and 6.6e-6 after two, and the final exponent adjustment is exact.
"""

# The reference keeps the pages' names.
# ruff: noqa: N806

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pack_reference import BF16, FP32, Early, Late
from sfpu_float_reference import SfpuFloatRef
from sfpu_lanes_reference import LanesRef
from sfpu_reference import FMT_FP32, FP32Shuffle, LoadDatum, StoreDatum
from sfpu_wormhole_reference import LoadDatum as LoadDatumWH
from sfpu_wormhole_reference import StoreDatum as StoreDatumWH
from sfpu_wormhole_reference import WormholeRef
from test_e2e_raw import Trace
from test_matmul import reference_eltwise
from test_sdk_kernels import PACRS_PER_TILE, check_finished_cleanly

from tensixsim import Tile
from tensixsim.isa import isa_for
from tensixsim.sdk import programs

MATH, PACK = 1, 2
U = 2.0**-24
TILE_DATUMS = 1024
SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARCHES = ("blackhole", "wormhole")


def f32_bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


# ------------------------------------------------------------------------------ the instruction sequences
# Operands by their documented meaning; the encoder places them (the BlackholeA0 / WormholeB0 diagrams).
FP32_MOD0 = 3  # SFPLOAD / SFPSTORE Mod0 FP32
# The AddrMod operands of the kernel's SFPSTORE (step) and SFPLOAD (stay): ADDR_MOD slots 6 and 7, which
# Wormhole's two-bit operand reaches as 2 and 3 under ADDR_MOD_SET_Base.
ADDR_OPERANDS = {"blackhole": (6, 7), "wormhole": (2, 3)}
ZERO, ONE = 9, 10  # LReg[9] = 0.0, LReg[10] = 1.0
EI, RI = 2, 8  # SFPENCC: UseLaneFlagsForLaneEnable from Imm2 bit 0; LaneFlags from Imm2 bit 1
LT0, NE0, GTE0 = 0, 2, 4  # SFPSETCC Mod1
LOG2E = f32_bits(1 / math.log(2))
EXP_COEFFS = [f32_bits(math.log(2) ** k / math.factorial(k)) for k in range(1, 8)]
EXP_HIGH, EXP_LOW = 88.5, -87.0
ROUND = 1.5 * 2**23  # Wormhole's exp: adding it rounds to an integer held in the low mantissa bits
RECIP_Y0 = 0x7EF311C3  # Wormhole's reciprocal: y0 = RECIP_Y0 - m as integers (x = m 2**E, m in [1, 2))


class Words:
    """The words of one chip's vector-unit instructions, built with its encoder."""

    def __init__(self, arch: str) -> None:
        self.arch = arch
        self.isa = isa_for(arch)
        self.step, self.stay = ADDR_OPERANDS[arch]

    def enc(self, name: str, **fields: int) -> int:
        return self.isa.encode(name, **fields)

    def name(self, word: int) -> str:
        return self.isa.decode(word).name

    def load(self, vd: int) -> int:
        return self.enc(
            "SFPLOAD", lreg_ind=vd, instr_mod0=FP32_MOD0, sfpu_addr_mode=self.stay, dest_reg_addr=0
        )

    def store(self, vd: int) -> int:
        return self.enc(
            "SFPSTORE", lreg_ind=vd, instr_mod0=FP32_MOD0, sfpu_addr_mode=self.step, dest_reg_addr=0
        )

    def loadi(self, vd: int, mod0: int, imm16: int) -> int:
        return self.enc("SFPLOADI", lreg_ind=vd, instr_mod0=mod0, imm16=imm16)

    def loadi32(self, vd: int, value: int) -> list[int]:
        return [self.loadi(vd, 8, value >> 16), self.loadi(vd, 10, value & 0xFFFF)]  # high, then low

    def simple(self, name: str, imm12: int, vc: int, vd: int, mod1: int) -> int:
        return self.enc(name, imm12_math=imm12 & 0xFFF, lreg_c=vc, lreg_dest=vd, instr_mod1=mod1)

    def mad(self, va: int, vb: int, vc: int, vd: int, mod1: int = 0) -> int:
        return self.enc("SFPMAD", lreg_src_a=va, lreg_src_b=vb, lreg_src_c=vc, lreg_dest=vd, instr_mod1=mod1)

    def config(self, imm16: int, vd: int, mod1: int) -> int:
        return self.enc("SFPCONFIG", imm16_math=imm16, config_dest=vd, instr_mod1=mod1)

    def encc(self, imm2: int, mod1: int) -> int:
        return self.simple("SFPENCC", imm2, 0, 0, mod1)

    def nop(self) -> int:
        return self.enc("SFPNOP")


Program = tuple[list[int], list[int], list[int], list[int]]


def exp_program(w: Words) -> Program:
    c = EXP_COEFFS
    init = [*w.loadi32(4, c[0]), *w.loadi32(5, c[1]), *w.loadi32(6, c[2]), *w.loadi32(7, c[3])]
    for lreg, value in ((11, c[4]), (12, c[5]), (13, c[6]), (14, LOG2E)):
        init += [*w.loadi32(0, value), w.config(0, lreg, 0)]
    if w.arch == "wormhole":
        return init, [], exp_step_wormhole(w), []
    step = [
        w.load(0),
        w.mad(0, 14, ZERO, 1),  # t = x * log2(e)
        w.enc(
            "SFP_STOCH_RND", rnd_mode=0, imm8_math=0, lreg_src_b=1, lreg_src_c=1, lreg_dest=2, instr_mod1=7
        ),
        w.enc("SFPCAST", lreg_src_c=2, lreg_dest=3, instr_mod1=0),  # n as FP32
        w.mad(0, 14, 3, 3, 2),  # f = x * log2(e) - n
        w.mad(13, 3, 12, 1),  # Horner: c7 f + c6, ..., then * f + 1
        w.mad(1, 3, 11, 1),
        w.mad(1, 3, 7, 1),
        w.mad(1, 3, 6, 1),
        w.mad(1, 3, 5, 1),
        w.mad(1, 3, 4, 1),
        w.mad(1, 3, ONE, 1),
        w.enc("SFPCAST", lreg_src_c=2, lreg_dest=2, instr_mod1=3),  # n to two's complement
        w.simple("SFPSHFT", 23, 0, 2, 1),
        w.simple("SFPIADD", 0, 2, 1, 4),  # exponent += n, lane flags untouched
        w.encc(3, EI | RI),
        w.loadi(2, 0, f32_bits(EXP_HIGH) >> 16),
        w.simple("SFPGT", 0, 2, 0, 1),  # flags: 88.5 < x
        w.loadi(1, 0, 0x7F80),
        w.encc(3, EI | RI),
        w.loadi(2, 0, f32_bits(EXP_LOW) >> 16),
        w.simple("SFPGT", 0, 0, 2, 1),  # flags: x < -87
        w.loadi(1, 0, 0),
        w.encc(0, EI),
        w.store(1),
    ]
    return init, [], step, []


def exp_step_wormhole(w: Words) -> list[int]:
    """Wormhole's exp step (no SFPGT, no SFPMAD negation, no integer SFPCAST): n from adding 1.5 * 2**23
    (its bits shifted left by 23 are n << 23), and an SFPNOP wherever the next instruction reads an
    SFPMAD's result (SFPMAD.md: Wormhole does not wait for it)."""
    horner = []
    for va, vc in ((13, 12), (1, 11), (1, 7), (1, 6), (1, 5), (1, 4), (1, ONE)):
        horner += [w.mad(va, 3, vc, 1), w.nop()]
    return [
        w.load(0),
        w.loadi(2, 0, f32_bits(ROUND) >> 16),
        w.mad(0, 14, 2, 1),  # t + 1.5 * 2**23
        w.loadi(2, 0, f32_bits(-ROUND) >> 16),
        w.mad(1, ONE, 2, 3),  # n
        w.simple("SFPMOV", 0, 1, 2, 0),
        w.simple("SFPSHFT", 23, 0, 2, 1),  # n << 23
        w.simple("SFPMOV", 0, 3, 3, 1),  # -n
        w.mad(0, 14, 3, 3),  # f = x * log2(e) + (-n)
        w.nop(),
        *horner,  # 2**f
        w.simple("SFPIADD", 0, 2, 1, 4),  # exponent += n, lane flags untouched
        w.encc(3, EI | RI),
        w.loadi(2, 0, f32_bits(-EXP_HIGH) >> 16),
        w.mad(0, ONE, 2, 2),  # x - 88.5
        w.nop(),
        w.simple("SFPSETCC", 0, 2, 0, GTE0),
        w.simple("SFPSETCC", 0, 2, 0, NE0),  # flags: x > 88.5
        w.loadi(1, 0, 0x7F80),
        w.encc(3, EI | RI),
        w.loadi(2, 0, f32_bits(-EXP_LOW) >> 16),
        w.mad(0, ONE, 2, 2),  # x + 87
        w.nop(),
        w.simple("SFPSETCC", 0, 2, 0, LT0),  # flags: x < -87
        w.loadi(1, 0, 0),
        w.encc(0, EI),
        w.store(1),
    ]


def relu_program(w: Words) -> Program:
    step = [w.load(0), w.simple("SFPSETCC", 0, 0, 0, LT0), w.loadi(0, 0, 0), w.encc(0, 0), w.store(0)]
    return [], [w.encc(1, EI)], step, [w.encc(0, EI)]


def recip_program(w: Words, steps: int) -> Program:
    if w.arch == "wormhole":
        # x = m 2**E; y0 = RECIP_Y0 - m as integers; Newton on m with -m from SFPMOV, an SFPNOP after each
        # SFPMAD; then y's exponent field minus E. Lanes E < -126 become +-inf and E >= 126 +-0 (SFPSETEXP /
        # SFPSETMAN keep x's sign).
        newton = [w.mad(6, 1, 4, 7), w.nop(), w.mad(1, 7, ZERO, 1), w.nop()]  # e in L7: L2 keeps E
        step = [
            w.load(0),
            w.simple("SFPEXEXP", 0, 0, 2, 0),  # E
            w.simple("SFPSETEXP", 127, 0, 3, 1),  # m
            w.simple("SFPMOV", 0, 3, 6, 1),  # -m
            w.simple("SFPMOV", 0, 3, 1, 0),
            w.simple("SFPIADD", 0, 5, 1, 2 | 4),  # y0 = RECIP_Y0 - m, lane flags untouched
            w.encc(3, EI | RI),
            w.simple("SFPIADD", 126, 2, 3, 1),  # flags: E + 126 < 0
            w.simple("SFPSETEXP", 255, 0, 1, 1),
            w.simple("SFPSETMAN", 0, 1, 1, 1),
            w.encc(3, EI | RI),
            w.simple("SFPIADD", -126, 2, 3, 1 | 8),  # flags: E - 126 >= 0
            w.simple("SFPSETEXP", 0, 0, 1, 1),
            w.simple("SFPSETMAN", 0, 1, 1, 1),
            w.encc(3, EI | RI),
            w.simple("SFPIADD", 126, 2, 3, 1 | 8),  # flags: E + 126 >= 0
            w.simple("SFPIADD", -126, 2, 3, 1),  # flags (of those): E - 126 < 0
            *newton * steps,
            w.simple("SFPEXEXP", 0, 1, 3, 1),  # y's exponent field
            w.simple("SFPIADD", 0, 3, 2, 2 | 4),  # ... minus E
            w.simple("SFPSETEXP", 0, 1, 2, 0),
            w.simple("SFPMOV", 0, 2, 1, 0),
            w.encc(0, EI),
            w.store(1),
        ]
        return [w.loadi(4, 0, 0x4000), *w.loadi32(5, RECIP_Y0)], [], step, []
    newton = [w.mad(0, 1, 4, 2, 1), w.mad(1, 2, ZERO, 1)]  # e = 2 - x y; y = y e
    step = [
        w.load(0),
        w.simple("SFPARECIP", 0, 0, 1, 0),
        w.simple("SFPEXEXP", 0, 0, 2, 0),
        w.encc(3, EI | RI),
        w.simple("SFPIADD", 126, 2, 3, 1 | 8),  # flags: E + 126 >= 0
        w.simple("SFPIADD", -126, 2, 3, 1),  # flags (of those): E - 126 < 0
        *newton * steps,
        w.encc(0, EI),
        w.store(1),
    ]
    return [w.loadi(4, 0, 0x4000)], [], step, []


AFFINE_SEQUENCE = (((2 << 3) | 3) << 24) | ((0x80 | 4) << 8)


def affine_program(w: Words) -> Program:
    init = [
        *w.loadi32(4, programs.SFPU_AFFINE_SCALE),
        *w.loadi32(5, programs.SFPU_AFFINE_BIAS),
        w.mad(4, 0, 5, 12),  # VD 12: the backdoor load of InstructionTemplate[0]
        *w.loadi32(0, AFFINE_SEQUENCE),
        w.config(0, 4, 0),
        w.config(FP32_MOD0, 8, 1),
    ]
    macros = [
        w.enc("SFPLOADMACRO", lreg_ind=vd, instr_mod0=FP32_MOD0, sfpu_addr_mode=w.step, dest_reg_addr=0)
        for vd in range(4)
    ]
    return init, [], macros, [w.nop()] * 3


def program(op: str, recip_steps: int = 2, arch: str = "blackhole") -> Program:
    """(once, per-tile start, per-step, per-tile end) words of the kernel's vector-unit work."""
    w = Words(arch)
    return {
        "relu": relu_program,
        "exp": exp_program,
        "recip": lambda w: recip_program(w, recip_steps),
        "affine": affine_program,
    }[op](w)


def expected_words(op: str, tiles: int, recip_steps: int = 2, arch: str = "blackhole") -> list[int]:
    init, begin, step, end = program(op, recip_steps, arch)
    repeats = 8 if op == "affine" else 32
    return init + (begin + step * repeats + end) * tiles


# ------------------------------------------------------------------------------ the reference


class KernelRef(SfpuFloatRef, LanesRef):
    """The vector unit's pages, every instruction the kernels use."""


def fresh_sfpu() -> SimpleNamespace:
    """The vector unit at reset (VectorUnit.md / LReg.md: LReg[8] 0.8373, LReg[9] 0, LReg[10] 1.0,
    LReg[15] 2 * lane; flags clear; the rest zero; Wormhole's SFPSHFT2 has seen no LReg[VC])."""
    lreg = np.zeros((17, 32), np.uint32)
    lreg[8], lreg[10], lreg[15] = f32_bits(0.8373), f32_bits(1.0), 2 * np.arange(32)
    return SimpleNamespace(
        lreg=lreg,
        lane_flags=np.zeros(32, bool),
        use_lane_flags=np.zeros(32, bool),
        stack_depth=np.zeros(32, np.uint8),
        flag_stack=np.zeros((32, 8, 2), bool),
        lane_config=np.zeros(32, np.uint32),
        sp=np.zeros(3, np.uint32),
        prng=np.zeros(32, np.uint32),
        macro_template=np.zeros((32, 4), np.uint32),
        macro_sequence=np.zeros((32, 4), np.uint32),
        macro_misc=np.zeros(32, np.uint32),
        shfl_vc=np.full(32, -1, np.int64),
    )


def reference(arch: str) -> SfpuFloatRef:
    """The chip's vector-unit reference at reset: Blackhole's pages, or Wormhole's (WormholeRef keeps
    Blackhole's methods for the instructions whose WormholeB0 page is the BlackholeA0 one)."""
    if arch == "wormhole":
        return WormholeRef(fresh_sfpu(), MATH)
    return KernelRef(fresh_sfpu(), MATH)


# SFPLOAD / SFPSTORE's datum conversions by chip (Wormhole's FP32 store keeps denormals).
DATUMS = {"blackhole": (LoadDatum, StoreDatum), "wormhole": (LoadDatumWH, StoreDatumWH)}


def bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def lane_cell(addr: int, lane: int) -> tuple[int, int]:
    """SFPLOAD.md / SFPSTORE.md: lane -> (Dst row, column) for Addr (no column exchange)."""
    return (addr & ~3) + lane // 8, (lane & 7) * 2 + ((addr >> 1) & 1)


class DstHalf:
    """One tile of FP32 Dst as the vector unit sees it: 64 rows of 16 raw Dst32 datums."""

    def __init__(self, values: np.ndarray, arch: str = "blackhole") -> None:
        flat = programs.tile_to_faces(np.asarray(values, np.float32).view(np.uint32))
        self.raw = [[FP32Shuffle(int(v)) for v in flat[16 * r : 16 * r + 16]] for r in range(64)]
        self.load_datum, self.store_datum = DATUMS[arch]

    def load(self, ref: SfpuFloatRef, vd: int, addr: int) -> None:
        for lane in range(32):
            if ref.LaneEnabled(lane):
                row, col = lane_cell(addr, lane)
                ref.LReg[vd][lane] = self.load_datum(FMT_FP32, 0, self.raw[row][col], 0, False)

    def store(self, ref: SfpuFloatRef, vd: int, addr: int, mod0: int = FMT_FP32) -> None:
        for lane in range(32):
            if ref.LaneEnabled(lane):
                row, col = lane_cell(addr, lane)
                self.raw[row][col] = self.store_datum(mod0, ref.LReg[vd][lane])


def run_macro(ref: SfpuFloatRef, w: Words, dst: DstHalf, word: int, addr: int) -> None:
    """SFPLOADMACRO.md for what the affine kernel configures: the load, then the scheduled work in its
    order (MAD at delay 0, Store later), with the page's operand overrides."""
    VDLo, Mod0, Imm = bits(word, 20, 21), bits(word, 16, 19), bits(word, 0, 12)
    Macro, VD = bits(word, 22, 23), (bits(Imm, 0, 0) << 2) | VDLo
    assert Mod0 == FMT_FP32 and Imm >> 1 == 0
    dst.load(ref, VD, addr)
    Sequence, Misc = ref.Sequence[0][Macro], ref.Misc[0]
    assert all(ref.Sequence[lane][Macro] == Sequence and ref.Misc[lane] == Misc for lane in range(32))
    work = []
    for unit in range(4):
        SequenceBits = (Sequence >> (8 * unit)) & 0xFF
        work.append(((SequenceBits >> 3) & 7, unit, SequenceBits))
    for _, unit, SequenceBits in sorted(work):
        select = SequenceBits & 7
        if select == 0:
            continue
        if unit == 3:
            assert select == 3 and not SequenceBits & 0xC0
            StoreMod0 = Mod0 if (Misc >> (4 + Macro)) & 1 else Misc & 0xF
            dst.store(ref, VD, addr, StoreMod0)
            continue
        assert unit == 1 and select >= 4 and SequenceBits & 0x80 and not SequenceBits & 0x40
        template = ref.InstructionTemplate[0][select - 4]
        assert w.name(template) == "SFPMAD"
        # Insn.VB = VD (bit 7), VC kept, Insn.VD = VD.
        insn = (template & ~(0xF << 12) & ~(0xF << 4)) | (VD << 12) | (VD << 4)
        ref.SFPMAD(insn)


def pack(c: dict, raw: int) -> int:
    """The packer's conversion of one Dst32 datum (pack_reference's Early then Late)."""
    data = Late(c, Early(c, raw))
    return int.from_bytes(data, "little")


def reference_tiles(
    op: str, dst_tiles: list[np.ndarray], out_fmt: str, recip_steps: int = 2, arch: str = "blackhole"
) -> list[np.ndarray]:
    """The kernel's output tiles (bit patterns) from the copied Dst values, on the references."""
    w = Words(arch)
    init, begin, step, end = program(op, recip_steps, arch)
    ref = reference(arch)
    for word in init:
        getattr(ref, w.name(word))(word)
    fmt = {"fp32": FP32, "bf16": BF16}[out_fmt]
    c = {"read32": 1, "inter": fmt, "out": fmt, "raw": 0, "unsigned": 0, "round10": 0}
    outs = []
    for values in dst_tiles:
        dst = DstHalf(values, arch)
        for word in begin:
            getattr(ref, w.name(word))(word)
        addr = 0
        while addr < 64:
            for word in step:
                name = w.name(word)
                if name == "SFPLOAD":
                    dst.load(ref, bits(word, 20, 23), addr)
                elif name == "SFPSTORE":
                    dst.store(ref, bits(word, 20, 23), addr)
                    addr += 2
                elif name == "SFPLOADMACRO":
                    run_macro(ref, w, dst, word, addr)
                    addr += 2
                else:
                    getattr(ref, name)(word)
        for word in end:
            getattr(ref, w.name(word))(word)
        flat = [pack(c, dst.raw[r][col]) for r in range(64) for col in range(16)]
        dtype = np.uint32 if out_fmt == "fp32" else np.uint16
        outs.append(programs.tile_from_faces(np.array(flat, dtype)))
    return outs


# ------------------------------------------------------------------------------ running a kernel


def run_sfpu(
    op: str,
    inputs: list[np.ndarray],
    out_fmt: str,
    monkeypatch,
    recip_steps: int = 2,
    arch: str = "blackhole",
):
    """Build and run the kernel on BF16 tiles; returns (output bit-pattern tiles, tile, trace)."""
    elfs = programs.build_sfpu(op, tiles=len(inputs), out_fmt=out_fmt, recip_steps=recip_steps, arch=arch)
    tile = Tile(arch)
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(inputs))
    trace = Trace(tile, monkeypatch)
    tile.run(max_cycles=400_000)
    size = 4 if out_fmt == "fp32" else 2
    data = tile.read(programs.KERNEL_DST, len(inputs) * TILE_DATUMS * size)
    outs = programs.tiles_from_l1(data, len(inputs), "<u4" if out_fmt == "fp32" else "<u2")
    check_finished_cleanly(tile, len(inputs), len(inputs), two_inputs=False)
    return outs, tile, trace


def copied(tile_bits: np.ndarray) -> np.ndarray:
    """What the copy leaves in FP32 Dst for a BF16 tile: x + 0 (test_matmul's ELWADD model)."""
    x = (np.asarray(tile_bits, np.uint32) << 16).view(np.float32)
    return reference_eltwise("add", x, np.zeros_like(x), 1, True)


def as_float(out: np.ndarray, out_fmt: str) -> np.ndarray:
    u = np.asarray(out, np.uint32)
    return (u if out_fmt == "fp32" else u << 16).view(np.float32).astype(np.float64)


def check_pipeline(
    op: str, inputs, outs, trace: Trace, out_fmt: str, recip_steps: int = 2, arch: str = "blackhole"
) -> list[np.ndarray]:
    """The words pushed, the bit-exact reference, and the ordering of the units; returns Dst values."""
    assert trace.words(MATH, "sfpu") == expected_words(op, len(inputs), recip_steps, arch)
    dsts = [copied(t) for t in inputs]
    expected = reference_tiles(op, dsts, out_fmt, recip_steps, arch)
    for t, (got, want) in enumerate(zip(outs, expected, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=f"tile {t}")
    # Per tile: the vector unit starts after the matrix unit's copy, the packer after the vector unit.
    first = "SFPLOADMACRO" if op == "affine" else "SFPLOAD"
    loads, elwadds = trace.cycles(MATH, first), trace.cycles(MATH, "ELWADD")
    stores = loads if op == "affine" else trace.cycles(MATH, "SFPSTORE")
    packs, posts = trace.cycles(PACK, "PACR"), trace.cycles(MATH, "SEMPOST")
    per = len(loads) // len(inputs)
    for t in range(len(inputs)):
        assert min(loads[per * t : per * t + per]) > max(elwadds[8 * t : 8 * t + 8])
        # The macro's store runs three cycles after it; the SEMPOST waited for an idle vector unit.
        assert posts[t] > max(stores[per * t : per * t + per]) + (3 if op == "affine" else 0)
        assert packs[PACRS_PER_TILE[arch] * t] > posts[t]
    return dsts


# ------------------------------------------------------------------------------ inputs

SPECIAL_BF16 = [
    0x0000,
    0x8000,
    0x0001,
    0x8001,
    0x0080,
    0x8080,
    0x7F7F,
    0xFF7F,
    0x7F80,
    0xFF80,
    0x3F80,
    0xBF80,
]


@st.composite
def bf16_tiles(draw, lo: float, hi: float, specials: list[int]) -> np.ndarray:
    """A BF16 tile: uniform values in [lo, hi] (rounded to BF16) with ``specials`` scattered in."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.uniform(lo, hi, (32, 32)).astype(np.float32)
    tile = ((values.view(np.uint32) + 0x8000) >> 16).astype(np.uint16)
    picks = draw(st.lists(st.tuples(st.integers(0, 1023), st.sampled_from(specials)), max_size=48))
    for index, value in picks:
        tile.flat[index] = value
    return tile


def bf16(x: float) -> int:
    return f32_bits(x) >> 16


# ------------------------------------------------------------------------------ relu


def check_relu(a: np.ndarray, out_fmt: str, arch: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        outs, _, trace = run_sfpu("relu", [a], out_fmt, monkeypatch, arch=arch)
    (x,) = check_pipeline("relu", [a], outs, trace, out_fmt, arch=arch)
    got = as_float(outs[0], out_fmt)
    want = np.where(x > 0, x, 0.0)  # +0 for every x <= 0 (and -0)
    np.testing.assert_array_equal(got, want)
    assert not (np.asarray(outs[0]) >> (31 if out_fmt == "fp32" else 15)).any()  # no sign bit left
    assert (x < 0).any() and (x > 0).any()


@SETTINGS
@given(a=bf16_tiles(-100.0, 100.0, SPECIAL_BF16), out_fmt=st.sampled_from(["bf16", "fp32"]))
def test_relu_kernel(a: np.ndarray, out_fmt: str) -> None:
    check_relu(a, out_fmt, "blackhole")


@SETTINGS
@given(a=bf16_tiles(-100.0, 100.0, SPECIAL_BF16), out_fmt=st.sampled_from(["bf16", "fp32"]))
def test_relu_kernel_on_wormhole(a: np.ndarray, out_fmt: str) -> None:
    check_relu(a, out_fmt, "wormhole")


# ------------------------------------------------------------------------------ exp


def exp_bound(x: np.ndarray) -> np.ndarray:
    """The relative error bound of the module docstring for exp."""
    L = float(np.float32(1 / math.log(2)))
    return math.log(2) * (np.abs(x) * (abs(L - 1 / math.log(2)) + L * 2.0**-26) + U) + 1.1e-8 + 6.6 * U


EXP_SPECIAL = [
    *SPECIAL_BF16,
    bf16(EXP_HIGH),
    bf16(89.0),
    bf16(EXP_LOW),
    bf16(-87.5),
    bf16(0.5),
    bf16(-0.5),
    bf16(1e30),
    bf16(-1e30),
]


def check_exp(x: np.ndarray, got: np.ndarray, out_fmt: str) -> None:
    inside = (x >= EXP_LOW) & (x <= EXP_HIGH)
    exact = np.exp(x[inside])
    bound = exp_bound(x[inside]) + (2.0**-8 if out_fmt == "bf16" else 0.0)  # half a BF16 ulp
    error = np.abs(got[inside] - exact) / exact
    assert (error <= bound).all(), f"worst {error.max():.3g} at x = {x[inside][np.argmax(error / bound)]}"
    assert (got[x > EXP_HIGH] == np.inf).all() and (got[x < EXP_LOW] == 0).all()


@SETTINGS
@given(a=bf16_tiles(-10.0, 10.0, EXP_SPECIAL), b=bf16_tiles(-10.0, 10.0, EXP_SPECIAL))
def test_exp_kernel(a: np.ndarray, b: np.ndarray) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        outs, _, trace = run_sfpu("exp", [a, b], "fp32", monkeypatch)
    dsts = check_pipeline("exp", [a, b], outs, trace, "fp32")
    for x, out in zip(dsts, outs, strict=True):
        check_exp(x, as_float(out, "fp32"), "fp32")
    # SFPMAD.md: the next instruction reading an SFPMAD's result is stalled one cycle. Per step, the
    # SFP_STOCH_RND after t and each dependent Horner SFPMAD issue two cycles after their producer.
    mads, rounds = trace.cycles(MATH, "SFPMAD"), trace.cycles(MATH, "SFP_STOCH_RND")
    assert len(mads) == 9 * 64 and len(rounds) == 64
    for k in range(64):
        step = mads[9 * k : 9 * k + 9]
        assert rounds[k] == step[0] + 2
        assert np.diff(step[1:]).tolist() == [2] * 7


@SETTINGS
@given(a=bf16_tiles(-10.0, 10.0, EXP_SPECIAL))
def test_exp_kernel_on_wormhole(a: np.ndarray) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        outs, _, trace = run_sfpu("exp", [a], "fp32", monkeypatch, arch="wormhole")
    (x,) = check_pipeline("exp", [a], outs, trace, "fp32", arch="wormhole")
    check_exp(x, as_float(outs[0], "fp32"), "fp32")
    # Wormhole does not hold a reader of an SFPMAD's result (SFPMAD.md): the SFPNOP after each dependent
    # Horner SFPMAD puts it two cycles after its producer, as Blackhole's stall does.
    mads = trace.cycles(MATH, "SFPMAD")
    assert len(mads) == 12 * 32
    for k in range(32):
        assert np.diff(mads[12 * k + 3 : 12 * k + 10]).tolist() == [2] * 6


@pytest.mark.parametrize("arch", ARCHES)
def test_exp_kernel_over_its_whole_range_packed_as_bf16(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Magnitudes from 2**-20 to 88.5 (uniform in the exponent), both signs, and the range's edges; the
    # packer then rounds to BF16.
    rng = np.random.default_rng(7)
    mags = np.exp2(rng.uniform(-20, math.log2(88.5), 1024)).astype(np.float32)
    values = np.where(rng.integers(0, 2, 1024) == 1, -mags, mags)
    values = np.clip(values, EXP_LOW, EXP_HIGH).astype(np.float32)
    a = ((values.view(np.uint32) + 0x8000) >> 16).astype(np.uint16).reshape(32, 32)
    a[0, :4] = [bf16(EXP_HIGH), bf16(EXP_LOW), bf16(89.0), bf16(-87.5)]
    outs, _, trace = run_sfpu("exp", [a], "bf16", monkeypatch, arch=arch)
    (x,) = check_pipeline("exp", [a], outs, trace, "bf16", arch=arch)
    check_exp(x, as_float(outs[0], "bf16"), "bf16")
    # The fp32 bound holds before the packer's rounding: the same tile, unrounded, in the reference.
    fp32 = as_float(reference_tiles("exp", [x], "fp32", arch=arch)[0], "fp32")
    check_exp(x, fp32, "fp32")
    assert np.abs(x).max() > 80


# ------------------------------------------------------------------------------ reciprocal


# The first approximation's relative error: SFPARECIP.md's accuracy of ApproxRecip (Blackhole), and for
# Wormhole's RECIP_Y0 - m (m in [1, 2)) the largest over its 2**23 mantissas (recip_y0_error below); the
# exponent adjustment after the Newton steps is exact.
RECIP_Y0_ERROR = {"blackhole": 0.0056, "wormhole": 0.0506}


def recip_bound(steps: int, arch: str = "blackhole") -> float:
    e = RECIP_Y0_ERROR[arch]
    for _ in range(steps):
        e = e * e + 3 * U
    return e


RECIP_SPECIAL = [
    *SPECIAL_BF16,
    bf16(2.0**-126),
    bf16(-(2.0**-126)),
    bf16(2.0**125),
    bf16(2.0**126),
    bf16(-(2.0**126)),
    bf16(3e38),
]


@st.composite
def wide_bf16_tiles(draw) -> np.ndarray:
    """BF16 tiles of every sign and binade, with special values scattered in."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tile = (
        rng.integers(0, 2, (32, 32)) << 15
        | rng.integers(1, 255, (32, 32)) << 7
        | rng.integers(0, 128, (32, 32))
    )
    tile = tile.astype(np.uint16)
    picks = draw(st.lists(st.tuples(st.integers(0, 1023), st.sampled_from(RECIP_SPECIAL)), max_size=48))
    for index, value in picks:
        tile.flat[index] = value
    return tile


def recip_y0_error() -> float:
    """max |y0 m - 1| for Wormhole's y0 = RECIP_Y0 - m (as integers) over m in [1, 2)."""
    x = np.arange(0x3F800000, 0x40000000, dtype=np.uint32)
    y0 = (np.uint32(RECIP_Y0) - x).view(np.float32).astype(np.float64)
    return float(np.abs(y0 * x.view(np.float32).astype(np.float64) - 1).max())


def test_wormhole_first_approximation_error_is_the_bound_used() -> None:
    assert 0.0505 < recip_y0_error() <= RECIP_Y0_ERROR["wormhole"]


def check_recip(x: np.ndarray, got: np.ndarray, steps: int, arch: str = "blackhole") -> float:
    inside = (np.abs(x) >= 2.0**-126) & (np.abs(x) < 2.0**126)
    exact = 1 / x[inside]
    error = np.abs(got[inside] - exact) / np.abs(exact)
    assert (error <= recip_bound(steps, arch)).all(), f"worst {error.max():.3g}"
    # Outside the approximation's range: 1/+-0 = +-inf, else +-0 (SFPARECIP's result on Blackhole, set
    # by the kernel on Wormhole).
    with np.errstate(divide="ignore"):
        assert (got[x == 0] == 1 / x[x == 0]).all()
    big = np.abs(x) >= 2.0**126
    assert (got[big] == 0).all() and (np.signbit(got[big]) == np.signbit(x[big])).all()
    return float(error.max())


def check_recip_two_steps(a: np.ndarray, arch: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        outs, _, trace = run_sfpu("recip", [a], "fp32", monkeypatch, arch=arch)
    (x,) = check_pipeline("recip", [a], outs, trace, "fp32", arch=arch)
    check_recip(x, as_float(outs[0], "fp32"), 2, arch)


@SETTINGS
@given(a=wide_bf16_tiles())
def test_recip_kernel_two_newton_steps(a: np.ndarray) -> None:
    check_recip_two_steps(a, "blackhole")


@SETTINGS
@given(a=wide_bf16_tiles())
def test_recip_kernel_two_newton_steps_on_wormhole(a: np.ndarray) -> None:
    check_recip_two_steps(a, "wormhole")


@pytest.mark.parametrize("arch", ARCHES)
def test_recip_kernel_one_newton_step_is_coarser(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    a = (
        rng.integers(0, 2, (32, 32)) << 15
        | rng.integers(60, 190, (32, 32)) << 7
        | rng.integers(0, 128, (32, 32))
    )
    a = a.astype(np.uint16)
    outs, _, trace = run_sfpu("recip", [a], "fp32", monkeypatch, recip_steps=1, arch=arch)
    (x,) = check_pipeline("recip", [a], outs, trace, "fp32", recip_steps=1, arch=arch)
    worst = check_recip(x, as_float(outs[0], "fp32"), 1, arch)
    assert worst > recip_bound(2, arch)  # a single step does not reach the two-step accuracy


# ------------------------------------------------------------------------------ SFPLOADMACRO: x * a + b


@pytest.mark.parametrize("arch", ARCHES)
def test_affine_kernel_scheduled_by_sfploadmacro(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    tiles = [random_tile(rng) for _ in range(2)]
    tiles[0][0, : len(SPECIAL_BF16)] = SPECIAL_BF16
    tiles[0][1, :4] = [bf16(1.5), bf16(-1.5), bf16(3.0), bf16(0.375)]  # cancellation near a x = -b
    outs, tile, trace = run_sfpu("affine", tiles, "fp32", monkeypatch, arch=arch)
    dsts = check_pipeline("affine", tiles, outs, trace, "fp32", arch=arch)
    a = float(np.uint32(programs.SFPU_AFFINE_SCALE).view(np.float32))
    b = float(np.uint32(programs.SFPU_AFFINE_BIAS).view(np.float32))
    for x, out in zip(dsts, outs, strict=True):
        got, exact = as_float(out, "fp32"), a * x.astype(np.float64) + b
        finite = np.isfinite(exact)
        bound = U * np.abs(exact) + 2.0**-26 * np.abs(a * x)
        assert (np.abs(got[finite] - exact[finite]) <= bound[finite]).all()
        assert (got[~finite] == exact[~finite]).all()
    # The SFPMADs and SFPSTOREs ran without being issued: the only SFPMAD issued is the backdoor load.
    macros = trace.cycles(MATH, "SFPLOADMACRO")
    assert len(macros) == 32 * len(tiles)
    # One per cycle: each macro's store runs while the next macros load and multiply.
    assert (np.diff(macros[:32]) == 1).all()
    assert len(trace.cycles(MATH, "SFPMAD")) == 1 and not trace.cycles(MATH, "SFPSTORE")
    assert not tile.coprocessor.sfpu.macro_pending[:, 0].any()


def random_tile(rng: np.random.Generator) -> np.ndarray:
    mantissa = rng.integers(0, 128, (32, 32))
    exponent = rng.integers(127 - 8, 127 + 8, (32, 32))
    sign = rng.integers(0, 2, (32, 32))
    return (sign << 15 | exponent << 7 | mantissa).astype(np.uint16)


# ------------------------------------------------------------------------------ the recipe


def test_build_sfpu_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="op must be"):
        programs.build_sfpu("tanh")
    with pytest.raises(ValueError, match="out_fmt"):
        programs.build_sfpu("exp", out_fmt="fp16")
    with pytest.raises(ValueError, match="recip_steps"):
        programs.build_sfpu("recip", recip_steps=3)
