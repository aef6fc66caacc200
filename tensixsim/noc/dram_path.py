"""The DRAM path of a request: the controller that serves a DRAM access (its group's, or its GDDR6
channel's: NocFacts.dram_channel_bytes), the turn it takes there, and on a chip the packet that
carries the access's data through the fabric, with what lands once it has come through.
A mixin of tensixsim.noc.niu.Noc.

A DRAM bank's controller serves the accesses reaching it one after another (NocTiming.dram_hold):
a lone tile's NIU keeps the controllers (``bank_free``); on a chip the routers do, and the data of
a DRAM access cross the links of their route (Fabric.send), so the action lands here once they
have come through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensixsim.noc.fabric import Packet, bank_link
from tensixsim.results import DramBankUse, count_bank_use
from tensixsim.timing import NOC

if TYPE_CHECKING:
    from collections.abc import Callable

    from tensixsim.noc.fabric import Endpoint, RemoteAction
    from tensixsim.noc.host import NocHost as _Host
    from tensixsim.noc.niu import Noc
else:
    _Host = object


class DramPath(_Host):
    """The DRAM part of :class:`~tensixsim.noc.niu.Noc`, which provides the state named below, its
    coordinates (``coordinates``), latencies (``_latency``) and events (``schedule``); ``_acked``
    comes from :class:`~tensixsim.noc.requests.Requests`."""

    def _served(self, endpoint: Endpoint, address: int, reached: int, length: int, write: bool) -> int:
        """The cycle ``endpoint`` starts an access of ``length`` bytes at ``address`` that reaches it at
        ``reached``: a lone tile's DRAM controller takes it at its turn, first come first served
        (NocTiming.dram_hold); on a chip the routers give that turn (``_bank_packet``)."""
        if endpoint.kind != "dram" or self._bank_in_fabric(endpoint):
            return reached
        bank = self._controller(endpoint, address)
        start = max(reached, self.bank_free.get(bank, 0))
        hold = NOC.dram_hold(length, write, self.arch)
        self.bank_free[bank] = start + hold
        count_bank_use(self._bank_use, bank, hold, start - reached)
        return start

    def _controller(self, dram: Endpoint, address: int) -> int:
        """The DRAM controller an access at ``address`` of ``dram``'s group asks: the group's, or where a
        group has several GDDR6 channels (NocFacts.dram_channel_bytes), its channel's, numbered across
        the chip (group * channels + channel, tt-metal's bank order)."""
        channel = self.facts.dram_channel_bytes
        if not channel:
            return dram.group
        return dram.group * (self.facts.dram_group_bytes // channel) + address // channel

    def bank_use(self) -> dict[int, DramBankUse]:
        """A lone tile's DRAM controllers (``_controller``'s numbers): what they did for it (a chip's:
        Chip)."""
        return {bank: DramBankUse(*use) for bank, use in self._bank_use.items()}

    def _bank_in_fabric(self, endpoint: Endpoint) -> bool:
        """Whether ``endpoint`` is a DRAM bank whose controller a chip's routers keep."""
        return endpoint.kind == "dram" and self.fabric is not None

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
    ) -> Packet:
        """The packet of a chip's DRAM access that moves its data: a read's response (its data ready to
        leave at ``ready`` unloaded) or a write's data (sent at ``ready``), crossing the controller of
        ``dram``'s group (asked at ``reached``, the request's arrival) and the links of its route."""
        far, own = self.coordinates(noc, dram.xy), self.coordinates(noc)
        return Packet(
            noc,
            own if write else far,
            far if write else own,
            ready + NOC.niu_to_router,
            flits,
            bank=bank_link(self._controller(dram, address)),
            bank_hold=NOC.dram_hold(length, write, self.arch),
            bank_at=reached,
            bank_first=not write,
        )

    def _inbound(
        self, cycle: int, action: Callable[[int], None], packet: Packet, span: tuple[int, int] | None = None
    ) -> None:
        """Run ``action`` here at ``cycle`` unloaded, later by what ``packet`` waits for in the chip's
        fabric (its bank's controller, links other packets hold); ``span``: the L1 bytes it writes."""
        counted = span is not None
        self.inbound += counted

        def arrived(niu: Noc, at: int) -> None:
            niu.inbound = max(0, niu.inbound - counted)  # (the NIU may have been reset meanwhile)
            action(at)

        self.fabric.send(self, self.position, cycle, arrived, packet, span)

    def _dram_written(
        self, noc: int, txn: int, arrived: RemoteAction, marked: bool, back: int
    ) -> Callable[[int], None]:
        """A chip's write reaching DRAM (once its bank's controller has taken it): the bytes land, and
        the acknowledgement comes back ``back`` hops later."""

        def written(cycle: int) -> None:
            arrived(self, cycle)
            if marked:
                self.schedule(cycle + self._latency(back), self._acked(noc, txn))

        return written
