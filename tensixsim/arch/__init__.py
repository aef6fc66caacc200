"""Architecture facts, one module per chip."""

from __future__ import annotations

from tensixsim.arch.blackhole import BLACKHOLE
from tensixsim.arch.common import CORE_NAMES, Arch, CoreFacts
from tensixsim.arch.wormhole import WORMHOLE

ARCHES: dict[str, Arch] = {"blackhole": BLACKHOLE, "wormhole": WORMHOLE}


def get_arch(name: str) -> Arch:
    """Return the facts for ``name`` ("blackhole" or "wormhole"; "Wormhole B0" and "wormhole_b0"
    name Wormhole too)."""
    key = name.lower().replace(" ", "").replace("_b0", "").replace("b0", "")
    if key not in ARCHES:
        raise ValueError(f"unknown architecture {name!r}; known: {', '.join(ARCHES)}")
    return ARCHES[key]


__all__ = ["ARCHES", "BLACKHOLE", "CORE_NAMES", "WORMHOLE", "Arch", "CoreFacts", "get_arch"]
