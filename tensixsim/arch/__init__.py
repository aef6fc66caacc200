"""Architecture facts, one module per chip."""

from __future__ import annotations

from tensixsim.arch.blackhole import BLACKHOLE
from tensixsim.arch.common import CORE_NAMES, Arch, CoreFacts
from tensixsim.arch.wormhole import WORMHOLE
from tensixsim.errors import Unimplemented

ARCHES: dict[str, Arch] = {"blackhole": BLACKHOLE, "wormhole": WORMHOLE}
RUNNABLE = ("blackhole",)


def get_arch(name: str) -> Arch:
    """Return the facts for ``name`` ("blackhole" or "wormhole")."""
    key = name.lower().replace(" ", "").replace("_b0", "").replace("b0", "")
    if key not in ARCHES:
        raise ValueError(f"unknown architecture {name!r}; known: {', '.join(ARCHES)}")
    if key not in RUNNABLE:
        raise Unimplemented(f"the {key} tile model is not built yet (facts only); use blackhole")
    return ARCHES[key]


__all__ = ["ARCHES", "BLACKHOLE", "CORE_NAMES", "WORMHOLE", "Arch", "CoreFacts", "get_arch"]
