"""What the NIU's mixins (translation.py, dram_path.py, requests.py, atomics.py) use of one another
and of :class:`~tensixsim.noc.niu.Noc`, for type checkers only: ``Noc`` inherits every mixin, and each
mixin derives from :class:`NocHost` only while type checking (``object`` at run time), so one
declaration of each shared attribute and method serves them all."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from tensixsim.arch.common import NocFacts
    from tensixsim.endpoints.device import MappedEndpoint
    from tensixsim.noc.fabric import Endpoint, Fabric, Packet, RemoteAction
    from tensixsim.tile import Tile


class NocHost(Protocol):
    """The attributes and methods a mixin of ``Noc`` reaches through ``self``."""

    facts: NocFacts
    position: tuple[int, int]
    arch: str
    tile: Tile | None
    fabric: Fabric | None
    tx_free: list[int]
    bank_free: dict[int, int]
    _bank_use: dict[int, list[int]]
    inbound: int
    requests: np.ndarray

    def _config(self, noc: int, name: str) -> int: ...
    def coordinates(self, noc: int, position: tuple[int, int] | None = None) -> tuple[int, int]: ...
    def _latency(self, hops: int) -> int: ...
    def schedule(
        self,
        cycle: int,
        action: Callable[[int], None],
        order: int | None = None,
        l1: bool | tuple[int, int] = False,
    ) -> None: ...
    def _acked(self, noc: int, txn: int) -> Callable[[int], None]: ...
    @property
    def max_packet_bytes(self) -> int: ...
    @property
    def orders_remote_writes(self) -> bool: ...
    def hops(self, noc: int, source: tuple[int, int], target: tuple[int, int]) -> int: ...
    def endpoint(self, noc: int, hi: int, what: str) -> Endpoint: ...
    def _read_access(self, endpoint: Endpoint) -> int: ...
    def _write_access(self, endpoint: Endpoint) -> int: ...
    def _served(self, endpoint: Endpoint, address: int, reached: int, length: int, write: bool) -> int: ...
    def _bank_in_fabric(self, endpoint: Endpoint) -> bool: ...
    def _bank_packet(
        self,
        noc: int,
        dram: Endpoint,
        address: int,
        reached: int,
        length: int,
        write: bool,
        ready: int,
        flits: int,
    ) -> Packet: ...
    def _inbound(
        self,
        cycle: int,
        action: Callable[[int], None],
        packet: Packet,
        span: tuple[int, int] | None = None,
    ) -> None: ...
    def _landing(
        self, noc: int, flits: int, write: Callable[[int], None], span: bool | tuple[int, int]
    ) -> Callable[[int], None]: ...
    def flits(self, size: int) -> int: ...
    def _l1_span(self, address: int, size: int, what: str) -> None: ...
    def _device(self, endpoint: Endpoint) -> MappedEndpoint: ...
    def _device_data(self, target: Endpoint, src: int, size: int) -> bytes | None: ...
    def _check(
        self,
        endpoint: Endpoint,
        address: int,
        size: int,
        what: str,
        write: bool = False,
        data: bytes | None = None,
    ) -> None: ...
    def _read(self, endpoint: Endpoint, address: int, size: int, cycle: int = 0) -> bytes: ...
    def _write(self, endpoint: Endpoint, address: int, data: bytes, cycle: int) -> None: ...
    def _will_write(self, target: Endpoint, address: int, size: int) -> None: ...
    def _at(
        self,
        target: Endpoint,
        cycle: int,
        action: RemoteAction,
        noc: int = 0,
        left: int = 0,
        flits: int = 1,
        group: tuple | None = None,
        span: tuple[int, int] | None = None,
    ) -> None: ...
    def _send(
        self,
        noc: int,
        xy: tuple[int, int],
        cycle: int,
        action: RemoteAction,
        left: int,
        flits: int,
        group: tuple | None = None,
    ) -> None: ...
    def _count(self, noc: int, cycle: int | None, *changes: tuple[int, int]) -> None: ...
    def _dram_written(
        self, noc: int, txn: int, arrived: RemoteAction, marked: bool, back: int
    ) -> Callable[[int], None]: ...
    def _txn(self, f: list[int]) -> int: ...
    def _own(self, noc: int, hi: int, what: str) -> None: ...
    def _return_hops(self, noc: int, hi: int) -> int: ...
    def _broadcast_targets(self, noc: int, hi: int, ctrl: int, what: str) -> list[Endpoint]: ...
