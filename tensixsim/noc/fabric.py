"""The NoC between tiles as one NIU sees it: where coordinates lead, the packets a transfer puts on
the links, their dimension-order routes (RoutingPaths.md), and the chip's side (tensixsim.chip)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tensixsim.arch.common import NocFacts
from tensixsim.errors import InvalidProgram

if TYPE_CHECKING:
    from tensixsim.endpoints.device import MappedEndpoint
    from tensixsim.noc.niu import Noc

# Traffic from other tiles is ordered after this tile's own events of the same cycle, by sender and
# the sender's own count (Noc.schedule's ``order``): the same order whatever the chip's windows.
REMOTE_ORDER = 1 << 62


class NoEndpoint(InvalidProgram):
    """A NoC request names coordinates where the grid has no tile."""


class HarvestedTile(InvalidProgram):
    """A NoC request names a Tensix tile fused off on this chip (Chip(harvested=...))."""


@dataclass(frozen=True)
class Endpoint:
    """Where a request's coordinates lead: this tile, a DRAM group, another Tensix tile of a chip, or a
    passive endpoint of a chip (ARC, Ethernet)."""

    kind: str  # "tile", "dram", "remote" or "device" (an ARC / Ethernet endpoint of a chip, at xy)
    group: int = 0
    hops: int = 0  # routers passed on the way from this tile, on the request's NoC
    xy: tuple[int, int] | None = None  # NoC #0 coordinates of a remote tile or device


# What runs at the far end of a request: the NIU it reaches (of the same NoC) and the cycle.
RemoteAction = Callable[["Noc", int], None]

# A link between neighbouring routers: (NoC, x, y of the router it leaves, "x" or "y"), in the NoC's
# own coordinates (each NoC moves towards increasing coordinates of its own, wrapping).
Link = tuple[int, int, int, str]


@dataclass(frozen=True)
class Packet:
    """What a transfer between tiles puts on the links of its route (tensixsim.chip.Fabric).

    ``injected``: the cycle the unloaded model has its header enter the first link (the issuing NIU's
    ``niu_to_router`` after the packet left). ``flits``: header and data flits, each link carrying one
    a cycle. ``group``: packets of one multicast share it (the tree carries the flits once per link).

    A packet moving DRAM data also crosses its bank's controller (``bank``, a link of its own that
    both NoCs share), held ``bank_hold`` cycles: a read's response after it (``bank_first``: the
    controller is asked at ``bank_at``, the request's arrival, and the response's header enters its
    first link at ``injected``), a write's data before it (asked at ``bank_at``, the header's arrival
    at the DRAM tile).
    """

    noc: int
    source: tuple[int, int]  # NoC coordinates (of ``noc``) of the sending tile
    target: tuple[int, int]  # NoC coordinates (of ``noc``) of the receiving tile
    injected: int
    flits: int
    group: tuple | None = None
    bank: Link | None = None
    bank_hold: int = 0
    bank_at: int = 0
    bank_first: bool = False


def bank_link(bank: int) -> Link:
    """DRAM controller ``bank`` (Noc._controller's number) as a link of the routers' (NoC -1: both
    NoCs reach it)."""
    return (-1, bank, 0, "bank")


def route(facts: NocFacts, noc: int, source: tuple[int, int], target: tuple[int, int]) -> list[Link]:
    """The links a unicast packet crosses from ``source`` to ``target`` (``noc``'s coordinates):
    dimension order, X then Y where ``facts.x_first_routing[noc]`` (NoC #0), else Y then X (NoC #1),
    each step towards increasing coordinates with wrap-around (RoutingPaths.md)."""
    (x, y), (tx, ty) = source, target
    links: list[Link] = []
    for axis in ("x", "y") if facts.x_first_routing[noc] else ("y", "x"):
        if axis == "x":
            while x != tx:
                links.append((noc, x, y, "x"))
                x = (x + 1) % facts.width
        else:
            while y != ty:
                links.append((noc, x, y, "y"))
                y = (y + 1) % facts.height
    return links


class Fabric(Protocol):
    """The NoC between the tiles of a chip, as one NIU sees it (tensixsim.chip)."""

    def endpoint_kind(self, xy: tuple[int, int]) -> str | None:
        """What is at NoC #0 coordinates ``xy``: "tensix", "dram", another kind, or None (no endpoint)."""

    def device(self, xy: tuple[int, int]) -> MappedEndpoint | None:
        """The modelled passive endpoint (ARC, Ethernet) at NoC #0 ``xy``, or None (none modelled)."""

    def send(
        self,
        source: Noc,
        target: tuple[int, int],
        cycle: int,
        action: RemoteAction,
        packet: Packet,
        span: tuple[int, int] | None = None,
    ) -> None:
        """Run ``action`` at the NIU of the tile at ``target`` at ``cycle`` (at least
        ``NOC.lookahead`` after the sender's present cycle), later by what ``packet`` waits for links
        (and a DRAM controller) other packets hold. ``span``: the target's L1 bytes it writes."""
