"""Address counters: ADCs (unpackers and packers) and RWCs (matrix and vector units).

Functional model: tt-isa-documentation WormholeB0 ADCs, RWCs, SETADC, SETADCXY, SETADCZW, SETADCXX,
INCADCXY, INCADCZW, ADDRCRXY, ADDRCRZW, SETRWC and INCRWC. The BlackholeA0 pages do not cover these
instructions; the Blackhole encodings (isa/blackhole.py) put every documented field at the same bits,
so the Wormhole descriptions are applied as they stand.

Counters are unsigned integers of the documented widths: every write and increment wraps.

Where the table's encoding slot is wider than the documented operand (SETADCXY's ``ch1_y`` slot holds
Y1Val and ThreadOverride in five of its six bits; ``bit_mask`` has four documented bits of six), the
extra bits must be zero: anything else raises UndefinedBehavior rather than guessing what the
hardware does with them (the scalar unit's rule too).

SETRWC's FlipSrcA / FlipSrcB (``clear_ab_vld``) act on the SrcA / SrcB register files of the matrix
unit, which are not modelled here: a set bit calls ``copro.clear_src_valid(bank, release=...)``
(bank 0 SrcA, 1 SrcB; ``release`` False when ThreadConfig CLR_DVALID_Src<A|B>_Disable is set), which
must hand that file's current matrix-side bank back to the unpackers if ``release`` and then flip the
matrix unit's bank. Without that method the instruction raises Unimplemented, changing nothing.

Timing: timing.py has no table for these instructions yet; each occupies its unit for Retire's
default single cycle.

The ADDR_MOD slots that instructions use to advance RWCs (and the packers' ADCs) live in
ThreadConfig; :func:`addr_mod` and :func:`pack_addr_mod` read them by name for the units that consume
them, and :func:`apply_addr_mod` is the documented ``ApplyAddrMod``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import Unimplemented
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.shared_state import SharedArrays

# The instructions here are Wormhole's pages applied to both chips (the same encodings).
BOTH = ("blackhole", "wormhole")

if TYPE_CHECKING:
    from tensixsim.tensix.config.unit import ConfigLayout
    from tensixsim.tensix.coprocessor import Coprocessor

# ADCs[thread]: Unpacker[0], Unpacker[1], Packers (one set shared by the four packers).
UNPACKER0, UNPACKER1, PACKERS = 0, 1, 2
ADC_UNITS = 3
X, Y, Z, W = 0, 1, 2, 3
ADC_WIDTHS = (18, 13, 8, 8)  # uint18_t X, uint13_t Y, uint8_t Z, uint8_t W
ADC_MASKS = np.array([(1 << w) - 1 for w in ADC_WIDTHS], np.uint32)

# RWCs[thread]: uint10_t Dst, uint6_t SrcA / SrcB, uint2_t FidelityPhase, uint1_t ExtraAddrModBit.
DST_MASK, SRC_MASK, FIDELITY_MASK = (1 << 10) - 1, (1 << 6) - 1, (1 << 2) - 1
ADDR_MODS, PACK_ADDR_MODS = 8, 4  # ADDR_MOD_*_SEC0..7, ADDR_MOD_PACK_SEC0..3


@dataclass
class AdcState(SharedArrays):
    """ADCs and RWCs of every pipe."""

    # ADCs[thread].<unit>.Channel[channel].<X|Y|Z|W> and the matching _Cr copies.
    value: np.ndarray  # (pipes, ADC_UNITS, 2, 4) uint32
    cr: np.ndarray  # (pipes, ADC_UNITS, 2, 4) uint32
    # RWCs[thread]
    srca: np.ndarray  # (pipes,) uint32, and the same for each below
    srca_cr: np.ndarray
    srcb: np.ndarray
    srcb_cr: np.ndarray
    dst: np.ndarray
    dst_cr: np.ndarray
    fidelity_phase: np.ndarray
    extra_addr_mod_bit: np.ndarray

    @classmethod
    def new(cls, arch: Arch) -> AdcState:
        pipes = arch.pipe_count

        def rwc() -> np.ndarray:
            return np.zeros(pipes, np.uint32)

        return cls(
            value=np.zeros((pipes, ADC_UNITS, 2, 4), np.uint32),
            cr=np.zeros((pipes, ADC_UNITS, 2, 4), np.uint32),
            srca=rwc(),
            srca_cr=rwc(),
            srcb=rwc(),
            srcb_cr=rwc(),
            dst=rwc(),
            dst_cr=rwc(),
            fidelity_phase=rwc(),
            extra_addr_mod_bit=rwc(),
        )

    # The three ways the ADC instructions change one counter.
    def set(self, thread: int, unit: int, channel: int, dim: int, value: int) -> None:
        """``Ch.<dim> = Ch.<dim>_Cr = value``."""
        self.value[thread, unit, channel, dim] = self.cr[thread, unit, channel, dim] = value & ADC_MASKS[dim]

    def increment(self, thread: int, unit: int, channel: int, dim: int, amount: int) -> None:
        """``Ch.<dim> += amount`` (the _Cr copy is unchanged)."""
        old = int(self.value[thread, unit, channel, dim])
        self.value[thread, unit, channel, dim] = (old + amount) & ADC_MASKS[dim]

    def increment_cr(self, thread: int, unit: int, channel: int, dim: int, amount: int) -> None:
        """``Ch.<dim>_Cr += amount, Ch.<dim> = Ch.<dim>_Cr``."""
        new = (int(self.cr[thread, unit, channel, dim]) + amount) & ADC_MASKS[dim]
        self.value[thread, unit, channel, dim] = self.cr[thread, unit, channel, dim] = new


# ---------------------------------------------------------------------- ADC instructions
def _target(ctx: Context, thread_override: int) -> int:
    """``ThreadOverride == 0 ? CurrentThread : ThreadOverride - 1``."""
    return ctx.thread if thread_override == 0 else thread_override - 1


def _units(cnt_set_mask: int) -> list[int]:
    """The ADC sets named by the U0 / U1 / PK bits."""
    return [unit for unit in range(ADC_UNITS) if cnt_set_mask >> unit & 1]


def _split_high(ctx: Context, name: str, field_value: int) -> tuple[int, int]:
    """The yaml's 6-bit ``ch1_y`` / ``ch1_w`` slot holds the u3 Y1 (W1) operand in bits 0..2 and the
    u2 ThreadOverride in bits 3..4; its bit 5 (instruction bit 20) is in no documented field."""
    ctx.documented(name, field_value, 5)
    return field_value & 7, field_value >> 3 & 3


@semantics("SETADC", arches=BOTH)
def setadc(ctx: Context, cnt_set_mask: int, channel_index: int, dimension_index: int, value: int) -> Outcome:
    adc = ctx.copro.adc
    # ThreadOverride is the top two bits of NewValue, which is still written whole (truncated to
    # the counter's width).
    thread = _target(ctx, value >> 16)
    for unit in _units(cnt_set_mask):
        adc.set(thread, unit, channel_index, dimension_index, value)
    return Retire()


def _operands(
    ctx: Context, dims: tuple[int, int], ch1_hi: int, ch1_lo: int, ch0_hi: int, ch0_lo: int
) -> list[tuple[int, int, int, int]]:
    """(thread, channel, dim, operand) for the four counters of an XY / ZW instruction, in the
    order of their enable bits (X0/Z0, Y0/W0, X1/Z1, Y1/W1)."""
    lo, hi = dims
    hi1, override = _split_high(ctx, "ch1_y" if hi == Y else "ch1_w", ch1_hi)
    thread = _target(ctx, override)
    return [(thread, 0, lo, ch0_lo), (thread, 0, hi, ch0_hi), (thread, 1, lo, ch1_lo), (thread, 1, hi, hi1)]


def _xyzw(
    ctx: Context,
    change: Callable[[AdcState, int, int, int, int, int], None],
    dims: tuple[int, int],
    cnt_set_mask: int,
    bit_mask: int | None,
    *operands: int,
) -> Outcome:
    """Apply ``change`` (AdcState.set, .increment or .increment_cr) to the counters an XY / ZW
    instruction enables (all four when it has no ``bit_mask``) in each ADC set it names."""
    targets = _operands(ctx, dims, *operands)
    enabled = 0b1111 if bit_mask is None else ctx.documented("bit_mask", bit_mask, 4)
    adc = ctx.copro.adc
    for unit in _units(cnt_set_mask):
        for bit, (thread, channel, dim, operand) in enumerate(targets):
            if enabled >> bit & 1:
                change(adc, thread, unit, channel, dim, operand)
    return Retire()


@semantics("SETADCXY", arches=BOTH)
def setadcxy(
    ctx: Context, cnt_set_mask: int, ch1_y: int, ch1_x: int, ch0_y: int, ch0_x: int, bit_mask: int
) -> Outcome:
    return _xyzw(ctx, AdcState.set, (X, Y), cnt_set_mask, bit_mask, ch1_y, ch1_x, ch0_y, ch0_x)


@semantics("SETADCZW", arches=BOTH)
def setadczw(
    ctx: Context, cnt_set_mask: int, ch1_w: int, ch1_z: int, ch0_w: int, ch0_z: int, bit_mask: int
) -> Outcome:
    return _xyzw(ctx, AdcState.set, (Z, W), cnt_set_mask, bit_mask, ch1_w, ch1_z, ch0_w, ch0_z)


@semantics("INCADCXY", arches=BOTH)
def incadcxy(ctx: Context, cnt_set_mask: int, ch1_y: int, ch1_x: int, ch0_y: int, ch0_x: int) -> Outcome:
    return _xyzw(ctx, AdcState.increment, (X, Y), cnt_set_mask, None, ch1_y, ch1_x, ch0_y, ch0_x)


@semantics("INCADCZW", arches=BOTH)
def incadczw(ctx: Context, cnt_set_mask: int, ch1_w: int, ch1_z: int, ch0_w: int, ch0_z: int) -> Outcome:
    return _xyzw(ctx, AdcState.increment, (Z, W), cnt_set_mask, None, ch1_w, ch1_z, ch0_w, ch0_z)


@semantics("ADDRCRXY", arches=BOTH)
def addrcrxy(
    ctx: Context, cnt_set_mask: int, ch1_y: int, ch1_x: int, ch0_y: int, ch0_x: int, bit_mask: int
) -> Outcome:
    return _xyzw(ctx, AdcState.increment_cr, (X, Y), cnt_set_mask, bit_mask, ch1_y, ch1_x, ch0_y, ch0_x)


@semantics("ADDRCRZW", arches=BOTH)
def addrcrzw(
    ctx: Context, cnt_set_mask: int, ch1_w: int, ch1_z: int, ch0_w: int, ch0_z: int, bit_mask: int
) -> Outcome:
    return _xyzw(ctx, AdcState.increment_cr, (Z, W), cnt_set_mask, bit_mask, ch1_w, ch1_z, ch0_w, ch0_z)


@semantics("SETADCXX", arches=BOTH)
def setadcxx(ctx: Context, cnt_set_mask: int, x_end2: int, x_start: int) -> Outcome:
    # No ThreadOverride here. X1Val is u10 (bits 10..19); the slot's bit 20 is in no documented field.
    ctx.documented("x_end2", x_end2, 10)
    adc = ctx.copro.adc
    for unit in _units(cnt_set_mask):
        adc.set(ctx.thread, unit, 0, X, x_start)
        adc.set(ctx.thread, unit, 1, X, x_end2)
    return Retire()


# ---------------------------------------------------------------------- RWC instructions
@semantics("SETRWC", arches=BOTH)
def setrwc(
    ctx: Context, clear_ab_vld: int, rwc_cr: int, rwc_d: int, rwc_b: int, rwc_a: int, bit_mask: int
) -> Outcome:
    copro = ctx.copro
    ctx.documented("bit_mask", bit_mask, 4)
    if clear_ab_vld and not hasattr(copro, "clear_src_valid"):
        # FlipSrcA / FlipSrcB hand a SrcA / SrcB bank back to the unpackers: those register files
        # are not modelled yet. Checked first, so nothing has changed when this is raised.
        raise ctx.error(Unimplemented, f"clear_ab_vld={clear_ab_vld}: SrcA/SrcB banks are not modelled yet")
    rwc, t = copro.adc, ctx.thread
    src_a_cr, src_b_cr, dst_cr, dst_c_to_cr = (rwc_cr >> i & 1 for i in range(4))
    if bit_mask & 1:  # SrcA
        value = (rwc_a + (int(rwc.srca_cr[t]) if src_a_cr else 0)) & SRC_MASK
        rwc.srca[t] = rwc.srca_cr[t] = value
    if bit_mask & 2:  # SrcB
        value = (rwc_b + (int(rwc.srcb_cr[t]) if src_b_cr else 0)) & SRC_MASK
        rwc.srcb[t] = rwc.srcb_cr[t] = value
    if bit_mask & 4 or dst_c_to_cr:  # Dst
        base = int(rwc.dst[t]) if dst_c_to_cr else int(rwc.dst_cr[t]) if dst_cr else 0
        rwc.dst[t] = rwc.dst_cr[t] = (rwc_d + base) & DST_MASK
    if bit_mask & 8:  # Fidelity
        rwc.fidelity_phase[t] = 0
    for bank, name in ((0, "SrcA"), (1, "SrcB")):
        if clear_ab_vld >> bank & 1:
            disabled = copro.config.thread_field(f"CLR_DVALID_{name}_Disable", t)
            # The matrix unit gives its current bank back to the unpackers unless disabled, then flips.
            copro.clear_src_valid(bank, release=not disabled)
    return Retire()


@semantics("INCRWC", arches=BOTH)
def incrwc(ctx: Context, rwc_cr: int, rwc_d: int, rwc_b: int, rwc_a: int) -> Outcome:
    rwc, t = ctx.copro.adc, ctx.thread
    ctx.documented("rwc_cr", rwc_cr, 3)  # SrcACr, SrcBCr, DstCr
    if rwc_cr & 1:
        rwc.srca[t] = rwc.srca_cr[t] = (int(rwc.srca_cr[t]) + rwc_a) & SRC_MASK
    else:
        rwc.srca[t] = (int(rwc.srca[t]) + rwc_a) & SRC_MASK
    if rwc_cr & 2:
        rwc.srcb[t] = rwc.srcb_cr[t] = (int(rwc.srcb_cr[t]) + rwc_b) & SRC_MASK
    else:
        rwc.srcb[t] = (int(rwc.srcb[t]) + rwc_b) & SRC_MASK
    if rwc_cr & 4:
        rwc.dst[t] = rwc.dst_cr[t] = (int(rwc.dst_cr[t]) + rwc_d) & DST_MASK
    else:
        rwc.dst[t] = (int(rwc.dst[t]) + rwc_d) & DST_MASK
    return Retire()


# ---------------------------------------------------------------------- ADDR_MOD
@dataclass(frozen=True)
class AddrMod:
    """ADDR_MOD slot ``index`` of a pipe: ThreadConfig ADDR_MOD_AB_SEC / ADDR_MOD_DST_SEC /
    ADDR_MOD_BIAS_SEC (and Blackhole's ADDR_MOD_AB2_SEC)."""

    srca_incr: int
    srca_cr: bool
    srca_clear: bool
    srcb_incr: int
    srcb_cr: bool
    srcb_clear: bool
    dest_incr: int
    dest_cr: bool
    dest_clear: bool
    dest_c_to_cr: bool
    fidelity_incr: int
    fidelity_clear: bool
    bias_incr: int
    bias_clear: bool
    # ADDR_MOD_AB2_SEC<n>_SrcAIncr / _SrcBIncr: one bit each, Blackhole only, meaning undocumented.
    srca_incr2: int
    srcb_incr2: int


_ADDR_MOD_NAMES = {
    "AB": ("SrcAIncr", "SrcACR", "SrcAClear", "SrcBIncr", "SrcBCR", "SrcBClear"),
    "AB2": ("SrcAIncr", "SrcBIncr"),
    "DST": ("DestIncr", "DestCR", "DestClear", "DestCToCR", "FidelityIncr", "FidelityClear"),
    "BIAS": ("BiasIncr", "BiasClear"),
}
# Decoded slots by (slot, the raw ThreadConfig words they live in): instructions read them constantly.
_ADDR_MOD_CACHE: dict[tuple[int, ...], AddrMod] = {}


_ADDR_MOD_WORDS: dict[tuple[int, int], list[int]] = {}


def _addr_mod_words(layout: ConfigLayout, index: int) -> list[int]:
    """The ThreadConfig word indices that hold ADDR_MOD slot ``index``'s fields."""
    key = (id(layout), index)
    if key not in _ADDR_MOD_WORDS:
        names = (f"ADDR_MOD_{kind}_SEC{index}_{n}" for kind, ns in _ADDR_MOD_NAMES.items() for n in ns)
        # (AB2 is Blackhole's only: a layout without it reads it as 0.)
        fields = layout.thread_fields
        _ADDR_MOD_WORDS[key] = sorted({fields[n][0] for n in names if n in fields or "_AB2_" not in n})
    return _ADDR_MOD_WORDS[key]


def addr_mod_words(layout: ConfigLayout) -> list[int]:
    """The ThreadConfig word indices that hold any ADDR_MOD slot."""
    return sorted({word for index in range(ADDR_MODS) for word in _addr_mod_words(layout, index)})


def addr_mod(copro: Coprocessor, thread: int, index: int) -> AddrMod:
    """The ADDR_MOD slot ``index`` (0..7) as pipe ``thread`` has configured it."""
    if not 0 <= index < ADDR_MODS:
        raise ValueError(f"ADDR_MOD index {index} is not in 0..{ADDR_MODS - 1}")
    config = copro.config
    words = _addr_mod_words(config.layout, index)
    key = (id(config.layout), index, *config.thread[thread, words].tolist())
    cached = _ADDR_MOD_CACHE.get(key)
    if cached is not None:
        return cached

    def get(kind: str, name: str) -> int:
        field = f"ADDR_MOD_{kind}_SEC{index}_{name}"
        if kind == "AB2" and field not in config.layout.thread_fields:
            return 0  # Blackhole's only
        return config.thread_field(field, thread)

    mod = AddrMod(
        srca_incr=get("AB", "SrcAIncr"),
        srca_cr=bool(get("AB", "SrcACR")),
        srca_clear=bool(get("AB", "SrcAClear")),
        srcb_incr=get("AB", "SrcBIncr"),
        srcb_cr=bool(get("AB", "SrcBCR")),
        srcb_clear=bool(get("AB", "SrcBClear")),
        dest_incr=get("DST", "DestIncr"),
        dest_cr=bool(get("DST", "DestCR")),
        dest_clear=bool(get("DST", "DestClear")),
        dest_c_to_cr=bool(get("DST", "DestCToCR")),
        fidelity_incr=get("DST", "FidelityIncr"),
        fidelity_clear=bool(get("DST", "FidelityClear")),
        bias_incr=get("BIAS", "BiasIncr"),
        bias_clear=bool(get("BIAS", "BiasClear")),
        srca_incr2=get("AB2", "SrcAIncr"),
        srcb_incr2=get("AB2", "SrcBIncr"),
    )
    _ADDR_MOD_CACHE[key] = mod
    return mod


@dataclass(frozen=True)
class PackAddrMod:
    """Packer ADDR_MOD slot ``index`` of a pipe: ThreadConfig ADDR_MOD_PACK_SEC<index>."""

    ysrc_incr: int
    ysrc_cr: bool
    ysrc_clear: bool
    ydst_incr: int
    ydst_cr: bool
    ydst_clear: bool
    zsrc_incr: int
    zsrc_clear: bool
    zdst_incr: int
    zdst_clear: bool


def pack_addr_mod(copro: Coprocessor, thread: int, index: int) -> PackAddrMod:
    """The packer ADDR_MOD slot ``index`` (0..3) as pipe ``thread`` has configured it."""
    if not 0 <= index < PACK_ADDR_MODS:
        raise ValueError(f"packer ADDR_MOD index {index} is not in 0..{PACK_ADDR_MODS - 1}")
    prefix = f"ADDR_MOD_PACK_SEC{index}_"

    def get(name: str) -> int:
        return copro.config.thread_field(prefix + name, thread)

    return PackAddrMod(
        ysrc_incr=get("YsrcIncr"),
        ysrc_cr=bool(get("YsrcCR")),
        ysrc_clear=bool(get("YsrcClear")),
        ydst_incr=get("YdstIncr"),
        ydst_cr=bool(get("YdstCR")),
        ydst_clear=bool(get("YdstClear")),
        zsrc_incr=get("ZsrcIncr"),
        zsrc_clear=bool(get("ZsrcClear")),
        zdst_incr=get("ZdstIncr"),
        zdst_clear=bool(get("ZdstClear")),
    )


class Rwcs(NamedTuple):
    """One pipe's RWCs as plain integers (the state ApplyAddrMod changes)."""

    srca: int
    srca_cr: int
    srcb: int
    srcb_cr: int
    dst: int
    dst_cr: int
    fidelity_phase: int
    extra_addr_mod_bit: int


_RWC_FIELDS = Rwcs._fields


def read_rwcs(adc: AdcState, thread: int) -> Rwcs:
    return Rwcs(*(int(getattr(adc, name)[thread]) for name in _RWC_FIELDS))


def write_rwcs(adc: AdcState, thread: int, rwcs: Rwcs) -> None:
    for name, value in zip(_RWC_FIELDS, rwcs, strict=True):
        getattr(adc, name)[thread] = value


def addr_mod_problem(rwcs: Rwcs, mod: AddrMod, index: int) -> str | None:
    """Why ApplyAddrMod with slot ``index`` (``mod``) is unimplemented on Blackhole from ``rwcs``
    (None: it is not)."""
    if rwcs.extra_addr_mod_bit:
        return "RWC ExtraAddrModBit is set; its Blackhole meaning is undocumented"
    if mod.srca_incr2 or mod.srcb_incr2:
        return f"ADDR_MOD_AB2_SEC{index} is set; its meaning is undocumented"
    return None


def step_rwcs(r: Rwcs, mod: AddrMod, *, update_fidelity: bool = True) -> Rwcs:
    """RWCs.md ``ApplyAddrMod`` as a pure function (``addr_mod_problem`` must be None)."""
    srca, srca_cr, srcb, srcb_cr, dst, dst_cr, fidelity, extra = r
    if mod.srca_clear:
        srca = srca_cr = 0
    elif mod.srca_cr:
        srca = srca_cr = (srca_cr + mod.srca_incr) & SRC_MASK
    else:
        srca = (srca + mod.srca_incr) & SRC_MASK

    if mod.srcb_clear:
        srcb = srcb_cr = 0
    elif mod.srcb_cr:
        srcb = srcb_cr = (srcb_cr + mod.srcb_incr) & SRC_MASK
    else:
        srcb = (srcb + mod.srcb_incr) & SRC_MASK

    if mod.dest_clear:
        dst = dst_cr = 0
    elif mod.dest_c_to_cr:
        dst = dst_cr = (dst + mod.dest_incr) & DST_MASK
    elif mod.dest_cr:
        dst = dst_cr = (dst_cr + mod.dest_incr) & DST_MASK
    else:
        dst = (dst + mod.dest_incr) & DST_MASK

    if update_fidelity:
        fidelity = 0 if mod.fidelity_clear else (fidelity + mod.fidelity_incr) & FIDELITY_MASK

    if mod.bias_clear:
        extra = 0
    elif mod.bias_incr & 3:
        extra = (extra + 1) & 1
    return Rwcs(srca, srca_cr, srcb, srcb_cr, dst, dst_cr, fidelity, extra)


def wormhole_addr_mod_index(rwcs: Rwcs, addr_mode: int, set_base: int) -> int:
    """The ADDR_MOD slot Wormhole's two-bit AddrMod names: ``AddrMod``, or ``AddrMod + 4`` while the
    RWC's ExtraAddrModBit or ThreadConfig's ADDR_MOD_SET_Base (``set_base``) is set (RWCs.md)."""
    return addr_mode + 4 if rwcs.extra_addr_mod_bit or set_base else addr_mode


def apply_addr_mod_wormhole(ctx: Context, addr_mode: int, *, update_fidelity: bool = True) -> None:
    """Wormhole's RWCs.md ``ApplyAddrMod``: a two-bit AddrMod names slot ``AddrMod``, or
    ``AddrMod + 4`` while the RWC's ExtraAddrModBit or ThreadConfig's ADDR_MOD_SET_Base is set."""
    adc, t = ctx.copro.adc, ctx.thread
    rwcs = read_rwcs(adc, t)
    set_base = ctx.copro.config.thread_field("ADDR_MOD_SET_Base", t)
    index = wormhole_addr_mod_index(rwcs, ctx.documented("addr_mode", addr_mode, 2), set_base)
    write_rwcs(adc, t, step_rwcs(rwcs, addr_mod(ctx.copro, t, index), update_fidelity=update_fidelity))


def apply_addr_mod(ctx: Context, addr_mode: int, *, update_fidelity: bool = True) -> None:
    """RWCs.md ``ApplyAddrMod``: advance the pipe's RWCs by ADDR_MOD slot ``addr_mode``.

    Blackhole instructions carry a 3-bit AddrMod that names the slot directly, and Blackhole's
    ThreadConfig has no ADDR_MOD_SET_Base. How ExtraAddrModBit (Wormhole: "+4") and the AB2 bits
    act on Blackhole is undocumented, so a set ExtraAddrModBit or AB2 bit raises Unimplemented
    (before anything changes). SFPLOAD / SFPSTORE / SFPLOADMACRO pass ``update_fidelity=False``.
    """
    adc, t = ctx.copro.adc, ctx.thread
    rwcs = read_rwcs(adc, t)
    mod = addr_mod(ctx.copro, t, addr_mode)
    problem = addr_mod_problem(rwcs, mod, addr_mode)
    if problem is not None:
        raise ctx.error(Unimplemented, problem)
    write_rwcs(adc, t, step_rwcs(rwcs, mod, update_fidelity=update_fidelity))
