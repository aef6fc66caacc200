"""Rules the vector unit leaves to software for the instruction issued on the next cycle (Wormhole).

Wormhole's vector unit has no interlock where Blackhole's has one: its pages (the jasondavies fork of
tt-isa-documentation, WormholeB0 SFPMAD.md and the pages that point to it, SFPSHFT2.md "Instruction
scheduling") say what software must not do on the cycle after some instructions, and the emulator
raises UndefinedBehavior at the wait gate when a thread issues such an instruction then (the hardware
would read a stale value or misbehave):

- after an SFPMAD-family instruction (SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI, SFPLUT, SFPLUTFP32):
  no instruction that reads an LReg it wrote;
- after SFPSHFT2 in SUBVEC_SHFLROR1_AND_COPY4: no instruction that reads LReg[0..3] or writes
  LReg[1..3]; in SUBVEC_SHFLROR1 or SUBVEC_SHFLSHR1 with VD < 8: none that reads LReg[VD]; after any of
  the three: none of the instructions in ``AFTER_SHUFFLE`` (the page's list).

The instruction that leaves a rule records it in ``SfpuState.hazard`` (``record``): the cycle it applies
to (its issue cycle + 1), the LRegs that may not be read and written (bit masks) and its kind. An
instruction SFPLOADMACRO schedules records none: the pages leave the timing of scheduled work to
software, as on Blackhole. Blackhole never records one.

What an instruction reads and writes (``reads``, ``writes``) follows Wormhole's functional models:
every LReg a model reads on some enabled lane in the instruction's mode (SFPMAD's INDIRECT_VA: LReg[7]
and the LRegs LReg[7] names on any lane; SFPLUTFP32's three-entry table: LReg[0..3] only), and the
LRegs it may write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import UndefinedBehavior
from tensixsim.isa.spec import Instruction
from tensixsim.tensix.sfpu.unit import (
    CAPTURE_DEFAULT_DEST_INDEX,
    ENABLE_DEST_INDEX,
    LREGS,
    SfpuState,
)

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# SfpuState.hazard words, and the kinds of rule.
AT, NO_READ, NO_WRITE, KIND = range(4)
MAD_RESULT, LANE_SHUFFLE = 1, 2
_SOURCES = {
    MAD_RESULT: "an SFPMAD-family instruction wrote it (SFPMAD.md: software must leave a cycle)",
    LANE_SHUFFLE: "SFPSHFT2's lane shuffle (SFPSHFT2.md: software must leave a cycle)",
}
# SFPSHFT2.md: what may not execute on the cycle after SUBVEC_SHFLROR1_AND_COPY4, SUBVEC_SHFLROR1 or
# SUBVEC_SHFLSHR1 (SFPSHFT2 itself only in the modes COPY4, SUBVEC_CHAINED_COPY4, SHFT_LREG, SHFT_IMM).
# fmt: off
AFTER_SHUFFLE = frozenset((
    "SFPABS", "SFPAND", "SFPCAST", "SFPDIVP2", "SFPEXEXP", "SFPEXMAN", "SFPIADD", "SFPLZ", "SFPMOV",
    "SFPNOT", "SFPOR", "SFPSETEXP", "SFPSETMAN", "SFPSETSGN", "SFPSHFT", "SFP_STOCH_RND", "SFPXOR",
))
# fmt: on
AFTER_SHUFFLE_SHFT2_MODES = frozenset({0, 1, 5, 6})


def mask(lregs: set[int] | frozenset[int] | np.ndarray) -> int:
    """A bit mask of LReg indices (or of a boolean array over the LRegs)."""
    if isinstance(lregs, np.ndarray):
        lregs = {int(r) for r in np.flatnonzero(lregs)}
    return sum(1 << r for r in lregs if r < LREGS)


def record(s: SfpuState, cycle: int, kind: int, no_read: int, no_write: int = 0) -> None:
    """Leave a rule of ``kind`` for the instruction issued at ``cycle + 1``."""
    s.hazard[:] = (cycle + 1, no_read, no_write, kind)


# ------------------------------------------------------------------------------ reads and writes

_MAD = frozenset({"SFPMAD", "SFPADD", "SFPMUL"})
_READS_VC = frozenset({"SFPLZ", "SFPABS", "SFPEXEXP", "SFPEXMAN", "SFPNOT", "SFPDIVP2", "SFPCAST"})
_READS_VC_VD = frozenset({"SFPXOR", "SFPAND", "SFPOR", "SFPSWAP"})
_SETS = frozenset({"SFPSETEXP", "SFPSETMAN", "SFPSETSGN"})
_NO_LREG_WRITE = frozenset(
    {"SFPSETCC", "SFPENCC", "SFPPUSHC", "SFPPOPC", "SFPCOMPC", "SFPNOP", "SFPSTORE", "SFPCONFIG"}
)


def _indices(values: np.ndarray) -> set[int]:
    return {int(v) for v in np.unique(values & 15)}


def _loadmacro_vd(f: dict[str, int]) -> int:
    return ((f["dest_reg_addr"] & 1) << 2) | (f["lreg_ind"] & 3)


def reads(s: SfpuState, ins: Instruction) -> set[int]:
    """The LRegs ``ins`` reads (Wormhole's functional models, module docstring)."""
    name, f = ins.name, ins.fields
    vc, vd = f.get("lreg_c", f.get("lreg_src_c", 0)), f.get("lreg_dest", 0)
    mod1 = f.get("instr_mod1", 0)
    if name in _MAD:
        got = {f["lreg_src_b"], vc}
        got |= {7} | _indices(s.lreg[7]) if mod1 & 4 else {f["lreg_src_a"] & 15}
        return got | ({7} if mod1 & 8 else set())
    if name in ("SFPADDI", "SFPMULI"):
        return {vd} | ({7} if mod1 & 8 else set())
    if name == "SFPLUT":
        return {0, 1, 2, 3} | ({7} if f["instr_mod0"] & 8 else set())
    if name == "SFPLUTFP32":
        table = {0, 1, 2, 3} if mod1 & 10 == 10 else set(range(7))
        return table | ({7} if mod1 & 8 else set())
    if name in ("SFPLOAD", "SFPLOADMACRO", "SFPLOADI"):
        target = _loadmacro_vd(f) if name == "SFPLOADMACRO" else f["lreg_ind"]
        keeps_half = (8, 10) if name == "SFPLOADI" else (14, 15)  # the modes that keep half of VD
        return {target} if f["instr_mod0"] in keeps_half and target < 8 else set()
    if name == "SFPSTORE":
        return {f["lreg_ind"]}
    if name == "SFPMOV":
        return set() if mod1 & 8 else {vc}
    if name == "SFPSETCC":
        return set() if mod1 & 9 else {vc}
    if name in _READS_VC:
        return {vc}
    if name in _READS_VC_VD:
        return {vc, vd}
    if name in _SETS or name == "SFPIADD":
        return {vc} if mod1 & 1 else {vc, vd}
    if name == "SFPSHFT":
        return {vd} if mod1 & 1 else {vc, vd}
    if name == "SFPCONFIG":
        target = f["config_dest"]
        from_l0 = target <= 3 or (not mod1 & 1 and target not in (9, 10))
        return {0} if from_l0 else set()
    if name == "SFPSHFT2":
        vb = f["imm12_math"] & 15
        return {
            0: {1, 2, 3},
            1: {0, 1, 2, 3},
            2: {1, 2, 3, vc},
            3: {vc},
            4: {vc},
            5: {vb, vc},
            6: {vb},
        }.get(mod1, set())
    if name == "SFPTRANSP":
        return set(range(8))
    if name == "SFP_STOCH_RND":
        int_int = mod1 & 7 in (4, 5) and not mod1 & 8
        return {vc} | ({f["lreg_src_b"]} if int_int else set())
    return set()


def writes(s: SfpuState, ins: Instruction) -> set[int]:
    """The LRegs ``ins`` may write (Wormhole's functional models, module docstring)."""
    name, f = ins.name, ins.fields
    vc, vd = f.get("lreg_c", f.get("lreg_src_c", 0)), f.get("lreg_dest", 0)
    mod1 = f.get("instr_mod1", 0)
    if name in _NO_LREG_WRITE:
        return {f["config_dest"]} & {11, 12, 13, 14} if name == "SFPCONFIG" else set()
    if name in ("SFPLOAD", "SFPLOADMACRO"):
        target = _loadmacro_vd(f) if name == "SFPLOADMACRO" else f["lreg_ind"]
        if target >= 8:
            return set()
        captures = ENABLE_DEST_INDEX | CAPTURE_DEFAULT_DEST_INDEX
        capture = target < 4 and bool(np.any((s.lane_config & captures) == captures))
        return {target} | ({target + 4} if capture else set())
    if name in ("SFPLOADI", "SFPLUT"):
        vd = f["lreg_ind"]
    if name == "SFPLUTFP32":
        vd = vd & 15
    indirect = {"SFPLUT": f.get("instr_mod0", 0) & 8}.get(name, mod1 & 8)
    if name in _MAD | {"SFPADDI", "SFPMULI", "SFPLUT", "SFPLUTFP32"} and indirect:
        return {r for r in _indices(s.lreg[7]) if r < 8}
    if name == "SFPSWAP":
        index = bool(np.any(s.lane_config & ENABLE_DEST_INDEX))
        return {r for r in (vc, vd) if r < 8} | ({4 + (vc & 3), 4 + (vd & 3)} if index else set())
    if name == "SFPTRANSP":
        return set(range(8))
    if name == "SFPSHFT2" and mod1 <= 2:
        return {0, 1, 2, 3}
    return {vd} if vd < 8 else set()


# ------------------------------------------------------------------------------ the check


def check(copro: Coprocessor, ins: Instruction, cycle: int) -> None:
    """Raise UndefinedBehavior if vector-unit instruction ``ins``, issued at ``cycle``, breaks the rule
    the instruction before it left (module docstring)."""
    s = copro.sfpu
    at, no_read, no_write, kind = (int(v) for v in s.hazard)
    if at != cycle:
        return
    source = _SOURCES[kind]
    stale = sorted(r for r in reads(s, ins) if (no_read >> r) & 1)
    if stale:
        raise UndefinedBehavior(
            f"{ins.name} reads LReg[{stale[0]}] on the cycle after {source}", cycle=cycle, value=ins.word
        )
    clobbered = sorted(r for r in writes(s, ins) if (no_write >> r) & 1)
    if clobbered:
        raise UndefinedBehavior(
            f"{ins.name} writes LReg[{clobbered[0]}] on the cycle after {source}", cycle=cycle, value=ins.word
        )
    if kind == LANE_SHUFFLE and (
        ins.name in AFTER_SHUFFLE
        or (ins.name == "SFPSHFT2" and ins.fields["instr_mod1"] in AFTER_SHUFFLE_SHFT2_MODES)
    ):
        raise UndefinedBehavior(
            f"{ins.name} executes on the cycle after {source}", cycle=cycle, value=ins.word
        )
