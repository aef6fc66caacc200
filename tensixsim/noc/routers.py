"""The routers between the tiles of a chip: which packet each link carries next.

A router's output link carries one packet at a time, each for its flits (one a cycle). Packets asking
for the same link come in on different input ports: from the router's own NIU ("local"), or from the
neighbouring router along X or along Y. When the link is free, the router takes the next packet from
the ports in turn (round robin), each port's packets in the order they came; a packet that finds the
link free and no other asking takes it at once.

Taking turns between ports, not between packets, is what the Blackhole many-to-one write benches
show: K senders in one row writing 16 KiB packets to the tile at the row's end share the last link
(about 63 B/cycle in all), the sender next to the target getting half of it, the next a quarter while
the first runs, and so on (each sender's rate over its own run 63/2, 63/3, 63/4, ..., the two
furthest 63/K each). Serving packets in the order they reached the link would share it evenly.

A header alone (an acknowledgement, a read request) goes between the flits of the packet holding the
link, as on a virtual channel of its own, one a cycle; that packet's tail then follows a cycle later.

A DRAM bank's controller is one more link, shared by both NoCs (fabric.bank_link): a read's response
asks for it when the request reaches the bank and leaves into the links back once it is granted, a
write's data ask for it once they have crossed the links to the bank. It takes the accesses in the
order they reach it (one input port), each for its ``bank_hold`` cycles (NocTiming.dram_hold).

Grants are decided in cycle order and only below a bound no packet still to be sent can precede
(:meth:`Routers.advance`), so they depend only on what the tiles sent and when, never on how the
chip's windows fell. While a packet is on its way, :meth:`Routers.due` bounds when it can act at its
target (its unloaded cycle plus what it has waited, counting the link it waits for as busy until it
is free): the chip runs no tile past that, and decides grants up to it. A multicast's packets cross
each link of their tree once: the packets of one group (sent together) take a link at the same grant.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

from tensixsim.arch.common import NocFacts
from tensixsim.noc.fabric import Link, Packet, route
from tensixsim.results import count_bank_use
from tensixsim.tensix.frontend.pipes import NEVER
from tensixsim.timing import NOC

LOCAL, FROM_X, FROM_Y = 0, 1, 2  # input ports
PORTS = 3
_ARRIVE, _DECIDE = 0, 1  # event kinds; a cycle's arrivals come before its grants


@dataclass
class _Transit:
    """A packet on its way: the links of its route and the one it asks for next."""

    packet: Packet
    path: list[Link]
    token: object  # what the caller gets back with the packet's delay
    order: int  # ties between packets asking at one cycle, by sender (never by the windows)
    group: _Group | None
    arrival: int  # when its action runs at its target unloaded
    hop: int = 0
    due: int = 0  # the earliest its action can run at its target (``arrival`` + its delay so far)
    done: bool = False
    waits_for: Link | None = None  # the link it waits for, queued (or behind another of its group)


@dataclass
class _Group:
    """The packets of one multicast: the grant of each link of its tree (or, while the first packet to
    ask waits, the others that reached it)."""

    key: tuple
    grants: dict[Link, int | list[_Transit]] = field(default_factory=dict)
    members: int = 0


@dataclass
class _Output:
    """One link: free from ``free`` on; the port served last; each port's packets waiting."""

    free: int = 0
    headers: int = 0  # the next cycle a header alone can go
    last: int = PORTS - 1  # so that the first turn goes to the local port
    queues: tuple[deque, ...] = field(default_factory=lambda: tuple(deque() for _ in range(PORTS)))
    deciding: bool = False  # a grant of this link is scheduled


class Routers:
    """Every link of a chip's two NoCs and the packets asking for them."""

    def __init__(self, facts: NocFacts) -> None:
        self.facts = facts
        self.outputs: dict[Link, _Output] = {}
        # (cycle, kind, tie, item): a packet reaching a link, or a link choosing its next packet.
        self.events: list[tuple[int, int, object, object]] = []
        self.groups: dict[tuple, _Group] = {}
        self.on_the_way = 0  # packets not through their last link yet
        self._dues: list[tuple[int, int, _Transit]] = []  # (due, order, transit); stale ones skipped
        self.bound = 0  # every grant before it is decided
        # DRAM controllers (bank links) by group: accesses, cycles held, cycles waited (never cleared).
        self.banks: dict[int, list[int]] = {}

    def __len__(self) -> int:
        """Packets still on their way (a grant of some link of theirs not decided yet)."""
        return self.on_the_way

    def add(self, packet: Packet, token: object, order: int, due: int) -> list[tuple[object, int]]:
        """Put ``packet`` on its route (its header enters the first link at ``packet.injected``, at
        or after every bound given so far; ``due``: when its action runs at its target unloaded).
        Returns what is done at once: a packet with no link."""
        first = min(packet.injected, packet.bank_at) if packet.bank else packet.injected
        if first < self.bound:  # the grants it could have changed are decided: a bug
            raise AssertionError(f"packet injected at {first}, below the bound {self.bound}")
        path = route(self.facts, packet.noc, packet.source, packet.target)
        if packet.bank is not None:
            path = [packet.bank, *path] if packet.bank_first else [*path, packet.bank]
        if not path:
            return [(token, 0)]
        group = None
        if packet.group:
            key = (*packet.group, packet.injected)
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = _Group(key)
            group.members += 1
        self.on_the_way += 1
        transit = _Transit(packet, path, token, order, group, due, due=due)
        heapq.heappush(self.events, (self._ask(transit, 0), _ARRIVE, order, transit))
        heapq.heappush(self._dues, (due, order, transit))
        return []

    def due(self) -> int:
        """The earliest cycle the action of a packet still on its way can run at its target (NEVER:
        none): its unloaded cycle plus what it has waited so far, a link it waits for counted busy
        until free (brought up to date here, for the packet first in line only)."""
        dues = self._dues
        while dues:
            value, _, transit = dues[0]
            if transit.done or value != transit.due:
                heapq.heappop(dues)
            elif transit.waits_for is not None and self._hold(transit, self.outputs[transit.waits_for].free):
                continue  # (its new due is in the heap: this entry is stale now)
            else:
                return value
        return NEVER

    def advance(self, bound: int) -> list[tuple[object, int]]:
        """Decide every grant before ``bound``; returns (token, cycles late against unloaded) for each
        packet whose last link is now granted."""
        done: list[tuple[object, int]] = []
        events = self.events
        while events and events[0][0] < bound:
            cycle, kind, _, item = heapq.heappop(events)
            if kind == _ARRIVE:
                self._arrive(item, cycle, done)
            else:
                self._decide(item, cycle, done)
        self.bound = max(self.bound, bound)
        if bound >= NEVER:  # nothing on its way and no tile to act: what comes next starts afresh
            self.outputs.clear()
            self.bound = 0
        if not self.on_the_way:
            self._dues.clear()
        return done

    def _arrive(self, transit: _Transit, cycle: int, done: list) -> None:
        link = transit.path[transit.hop]
        group = transit.group
        if group is not None:
            grant = group.grants.get(link)
            if isinstance(grant, int):  # another packet of the multicast took it: the same flits
                self._granted(transit, grant, done)
                return
            if grant is not None:  # another packet of the multicast waits for it
                grant.append(transit)
                transit.waits_for = link
                self._hold(transit, max(cycle, self.outputs[link].free))
                return
        output = self.outputs.get(link)
        if output is None:
            output = self.outputs[link] = _Output()
        bank = link == transit.packet.bank
        if transit.packet.flits == 1 and not bank:
            # A header alone goes between the flits of the packet holding the link (on a virtual
            # channel of its own), which then ends a cycle later; headers go one a cycle.
            at = max(cycle, output.headers)
            output.headers = at + 1
            output.free = output.free + 1 if output.free > at else at + 1
            if group is not None:
                group.grants[link] = at
            self._granted(transit, at, done)
            return
        if group is not None:
            group.grants[link] = []
        # A DRAM controller takes requests in the order they reach it (from its NIU), and a response
        # leaves it into the DRAM tile's router as a local packet.
        before = transit.path[transit.hop - 1][3] if transit.hop else "bank"
        port = LOCAL if bank or before == "bank" else FROM_X if before == "x" else FROM_Y
        output.queues[port].append(transit)
        transit.waits_for = link
        self._hold(transit, max(cycle, output.free))
        if not output.deciding:
            output.deciding = True
            heapq.heappush(self.events, (max(cycle, output.free), _DECIDE, link, link))

    def _decide(self, link: Link, cycle: int, done: list) -> None:
        output = self.outputs[link]
        if cycle < output.free:  # headers went through meanwhile
            heapq.heappush(self.events, (output.free, _DECIDE, link, link))
            return
        queues = output.queues
        port = output.last
        for _ in range(PORTS):
            port = (port + 1) % PORTS
            if queues[port]:
                break
        transit = queues[port].popleft()
        output.last = port
        packet = transit.packet
        if link == packet.bank:
            output.free = cycle + packet.bank_hold
            count_bank_use(self.banks, link[1], packet.bank_hold, cycle - self._ask(transit, transit.hop))
        else:
            output.free = cycle + packet.flits
        if any(queues):
            heapq.heappush(self.events, (output.free, _DECIDE, link, link))
        else:
            output.deciding = False
        group = transit.group
        if group is not None:
            waiting = group.grants[link]
            group.grants[link] = cycle
            for other in waiting:
                self._granted(other, cycle, done)
        self._granted(transit, cycle, done)

    def _hold(self, transit: _Transit, start: int) -> bool:
        """``transit`` crosses its present link at ``start`` at the earliest: its action at its target
        is that much later than unloaded at least (a packet's pending decision comes at least a hop
        and an NIU before its due, so the bound the chip derives from dues always gets past it).
        Whether its due moved."""
        due = transit.arrival + start - self._ask(transit, transit.hop)
        if due <= transit.due:
            return False
        transit.due = due
        heapq.heappush(self._dues, (due, transit.order, transit))
        return True

    @staticmethod
    def _ask(transit: _Transit, hop: int) -> int:
        """The cycle the unloaded packet asks for link ``hop`` of its path: one router hop after the
        link before it, and a DRAM controller when the request reaches it (Packet)."""
        packet = transit.packet
        if packet.bank is None:
            return packet.injected + hop * NOC.router_hop
        if packet.bank_first:
            return packet.bank_at if hop == 0 else packet.injected + (hop - 1) * NOC.router_hop
        return packet.bank_at if hop == len(transit.path) - 1 else packet.injected + hop * NOC.router_hop

    def _granted(self, transit: _Transit, cycle: int, done: list) -> None:
        """``transit`` crosses its present link from ``cycle``: on to the next, or arrived."""
        transit.waits_for = None
        # Late by what it waited so far: this link's grant against the unloaded one.
        late = cycle - self._ask(transit, transit.hop)
        if transit.hop + 1 < len(transit.path):
            self._hold(transit, cycle)
            transit.hop += 1
            heapq.heappush(
                self.events, (self._ask(transit, transit.hop) + late, _ARRIVE, transit.order, transit)
            )
            return
        self.on_the_way -= 1
        transit.done = True
        done.append((transit.token, late))
        group = transit.group
        if group is not None:
            group.members -= 1
            if not group.members:
                del self.groups[group.key]
