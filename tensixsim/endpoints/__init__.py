"""The chip's endpoints other than Tensix tiles and DRAM: what a host reaches through PCIe
(:mod:`~tensixsim.endpoints.pcie`, :mod:`~tensixsim.endpoints.host`), and the ARC and Ethernet tiles
NoC requests reach (:mod:`~tensixsim.endpoints.arc`, :mod:`~tensixsim.endpoints.ethernet`)."""

from __future__ import annotations

from collections.abc import Callable

from tensixsim.arch import Arch
from tensixsim.endpoints.arc import Arc
from tensixsim.endpoints.device import MappedEndpoint
from tensixsim.endpoints.ethernet import Ethernet

# Per architecture: the kinds of tile (NocFacts.other_tiles) with a model, and how to build one from
# the architecture, the tile's NoC #0 coordinates and the chip's harvested Tensix columns.
MODELS: dict[str, dict[str, Callable[[Arch, tuple[int, int], frozenset[int]], MappedEndpoint]]] = {
    "blackhole": {
        "arc": lambda arch, xy, harvested: Arc(arch, xy, harvested),
        "ethernet": lambda arch, xy, _harvested: Ethernet(arch, xy),
    },
}

__all__ = ["MODELS", "Arc", "Ethernet", "MappedEndpoint"]
