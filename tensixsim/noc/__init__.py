"""The NoC as the tiles see it: each tile's two NIUs (:mod:`~tensixsim.noc.niu`, with coordinate
translation in :mod:`~tensixsim.noc.translation`, the request kinds in :mod:`~tensixsim.noc.requests`
and :mod:`~tensixsim.noc.atomics`, and a request's DRAM path in :mod:`~tensixsim.noc.dram_path`), their
registers (:mod:`~tensixsim.noc.registers`), the fabric between tiles (:mod:`~tensixsim.noc.fabric`) and
its routers' arbitration of the links (:mod:`~tensixsim.noc.routers`)."""

from tensixsim.noc.fabric import (
    REMOTE_ORDER,
    Endpoint,
    Fabric,
    HarvestedTile,
    Link,
    NoEndpoint,
    Packet,
    RemoteAction,
    route,
)
from tensixsim.noc.niu import Noc

__all__ = [
    "REMOTE_ORDER",
    "Endpoint",
    "Fabric",
    "HarvestedTile",
    "Link",
    "NoEndpoint",
    "Noc",
    "Packet",
    "RemoteAction",
    "route",
]
