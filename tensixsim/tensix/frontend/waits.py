"""What a blocked instruction waits for, in the kinds the performance counters' wait-reason counters
name (WAITING_FOR_..._IDLE_t, WAITING_FOR_NONZERO_SEM_t, WAITING_FOR_SRCA_VALID...).

Both engines give a block its kind when they set it: the native engine from its block code
(engine.c waiting_kind), the reference engine from the reason its gate or semantics gave, whose texts
the functions of tensixsim.tensix.sync, matrix, regs, unpack make (``kind_of``). The lockstep tests
hold the two to the same kinds. A reason no counter names (a mutex, a stream, Dst not readable, the
vector unit's result hold, the gate's one-cycle lag) is NONE.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.tensix.matrix.unit import SRC_NOT_HANDED
from tensixsim.tensix.regs import SrcClient
from tensixsim.tensix.sync import STALLWAIT_CONDITIONS_BY_ARCH, Condition

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

# The kinds, in the order of the pipe fields that count them (frontend.pipes.WAITING; engine.h
# WAITING_*). The first nine are per pipe on silicon; the four Src ones are the tile's.
KINDS = (
    "thcon",
    "unpack",
    "pack",
    "math",
    "nonzero_sem",
    "nonfull_sem",
    "move",
    "mmio",
    "sfpu",
    "srca_clear",
    "srcb_clear",
    "srca_valid",
    "srcb_valid",
)
NONE = -1
KIND = {name: i for i, name in enumerate(KINDS)}

_UNIT_KINDS = {
    "thcon": "thcon",
    "unpacker0": "unpack",
    "unpacker1": "unpack",
    "packer": "pack",
    "matrix": "math",
    "xmov": "move",
    "sfpu": "sfpu",
}
_SRC_KINDS = {
    "srca_unpacker": "srca_clear",
    "srcb_unpacker": "srcb_clear",
    "srca_matrix": "srca_valid",
    "srcb_matrix": "srcb_valid",
}


def _condition_kind(condition: Condition) -> int:
    if condition.src_bank is not None:
        return KIND[_SRC_KINDS[condition.src_bank]]
    if condition.unit is not None:
        return KIND[_UNIT_KINDS[condition.unit]] if condition.unit in _UNIT_KINDS else NONE
    return KIND["mmio"] if "MMIO" in condition.what else NONE


@cache
def _condition_kinds(arch: str) -> tuple[int, ...]:
    conditions = STALLWAIT_CONDITIONS_BY_ARCH[arch]
    return tuple(_condition_kind(c) for c in conditions) + (NONE,) * (16 - len(conditions))


def stallwait_kinds(arch: str) -> np.ndarray:
    """Per STALLWAIT condition bit of ``arch`` (16 slots): the kind of a wait on it (the native
    engine's table)."""
    return np.array(_condition_kinds(arch), np.int8)


_STALLWAIT = re.compile(r"^STALLWAIT: .* \(C(\d+)\)$")
_SEM = re.compile(r"^SEMWAIT sem \d+ (== 0|>= max)")
_TO_UNPACKERS = re.compile(r"^Src([AB]) bank \d+ is not handed to the unpackers$")
_TO_MATRIX = re.compile(r"^Src([AB]) bank not handed to the matrix unit$")
_FETCHING = re.compile(r"^unpacker \d is fetching from L1 until cycle")


def matrix_src_kind(copro: Coprocessor) -> int:
    """What a matrix-unit instruction waiting for both Src banks waits for first: SrcA's, unless the
    matrix unit has it (engine.c waiting_kind)."""
    regs = copro.regs
    srca = int(regs.src_client[0, int(regs.matrix_bank[0])])
    return KIND["srca_valid"] if srca != SrcClient.MATRIX_UNIT else KIND["srcb_valid"]


def kind_of(reason: str, copro: Coprocessor) -> int:
    """The kind of a block whose reason is ``reason`` (without the instruction's name)."""
    if (match := _STALLWAIT.match(reason)) is not None:
        return _condition_kinds(copro.arch.name)[int(match.group(1))]
    if (match := _SEM.match(reason)) is not None:
        return KIND["nonzero_sem" if match.group(1) == "== 0" else "nonfull_sem"]
    if (match := _TO_UNPACKERS.match(reason)) is not None:
        return KIND[f"src{match.group(1).lower()}_clear"]
    if (match := _TO_MATRIX.match(reason)) is not None:
        return KIND[f"src{match.group(1).lower()}_valid"]
    if reason == SRC_NOT_HANDED:
        return matrix_src_kind(copro)
    if _FETCHING.match(reason):
        return KIND["unpack"]
    return NONE
