"""The routers' arbitration of the links between tiles (tensixsim/noc/routers.py): hand-worked grants,
a cycle-by-cycle reference model of the same rule, and independence from how the bounds fall."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim.arch import get_arch
from tensixsim.chip import Chip
from tensixsim.noc import Packet, route
from tensixsim.noc.fabric import bank_link
from tensixsim.noc.routers import NEVER, Routers
from tensixsim.sdk.calibration.case import RESULTS
from tensixsim.sdk.calibration.harness import build_case
from tensixsim.sdk.calibration.noc import arbitration_case
from tensixsim.timing import NOC

FACTS = get_arch("blackhole").noc


def _late(packets: list[Packet], bounds: tuple[int, ...] = ()) -> dict[int, int]:
    """Each packet's delay (by index). The grants are decided up to each of ``bounds`` in turn, every
    packet injected before a bound being added before it (and none earlier: as a chip sends them)."""
    routers = Routers(FACTS)
    late: dict[int, int] = {}
    order = sorted(range(len(packets)), key=lambda i: (_first(packets[i]), i))
    added = 0
    for bound in (*sorted(bounds), NEVER):
        while added < len(order) and _first(packets[order[added]]) < bound:
            i = order[added]
            added += 1
            late.update(routers.add(packets[i], i, i, 0))
        late.update(routers.advance(bound))
    assert not len(routers)
    return late


def _first(packet: Packet) -> int:
    """The first cycle ``packet`` asks for anything (a DRAM read's response: its controller)."""
    return min(packet.injected, packet.bank_at) if packet.bank else packet.injected


def test_a_header_alone_goes_between_the_flits_of_the_packet_holding_the_link() -> None:
    # P (1 + 32 flits) from (1, 2) to (3, 2): router 1's X link from 100, router 2's from 109 to 142.
    # Q, a header alone from (2, 2), asks for router 2's link at 120: it goes at once, and P's tail
    # leaves a cycle later (143). R (1 + 1 flits) from (2, 2) asks at 121 and waits for 143: 22 late.
    p = Packet(0, (1, 2), (3, 2), 100, 33)
    q = Packet(0, (2, 2), (3, 2), 120, 1)
    r = Packet(0, (2, 2), (3, 2), 121, 2)
    assert _late([p, q, r]) == {0: 0, 1: 0, 2: 22}
    # Two headers asking for a free link in one cycle go one a cycle.
    assert _late([Packet(0, (1, 2), (3, 2), 100, 1), Packet(0, (2, 2), (3, 2), 109, 1)]) == {0: 0, 1: 1}


def test_a_link_serves_its_input_ports_in_turn_not_its_packets_in_order() -> None:
    # Three senders in row 2 stream 4 packets of 11 flits each (back to back from 100) to (4, 2).
    # Router 3's link has two ports: its own NIU (C) and router 2's (A and B, alternating there), so
    # C gets every other turn: C, B, C, A, C, B, C, A, then the rest. A's and B's turns at router 2
    # alternate likewise, so their packets reach router 3 in the order B A B A ..., C's never wait.
    flits = 11
    packets = [Packet(0, (x, 2), (4, 2), 100 + flits * k, flits) for x in (1, 2, 3) for k in range(4)]
    late = _late(packets)
    c = [late[8 + k] for k in range(4)]
    # Router 3's grants: C 100, B 111 (asked 109), C 122, A 133 (asked 118), C 144, B 155, C 166, A 177,
    # then B 188, A 199, B 210, A 221 (C done).
    assert c == [0, 11, 22, 33]
    b = [late[4 + k] for k in range(4)]
    a = [late[k] for k in range(4)]
    # Unloaded, A's k-th packet takes router 3's link at 118 + 11k, B's at 109 + 11k.
    assert b == [111 - 109, 155 - 120, 188 - 131, 210 - 142]
    assert a == [133 - 118, 177 - 129, 199 - 140, 221 - 151]


# -------------------------------------------------------------------------- the reference model
def _reference(packets: list[Packet]) -> dict[int, int]:
    """The same rule, stepped cycle by cycle: each cycle first the packets reaching a link (a header
    alone goes at once, between flits; the others queue on their input port), then every free link
    with packets waiting takes the next port in turn after the one it served last."""
    paths = [_path(p) for p in packets]
    hop = [0] * len(packets)
    asks = {i: _unloaded(p, paths[i], 0) for i, p in enumerate(packets) if paths[i]}
    late = {i: 0 for i, p in enumerate(packets) if not paths[i]}
    free: dict = {}
    headers: dict = {}
    last: dict = {}
    queues: dict = {}
    cycle = min(asks.values(), default=0)
    while asks or any(any(q) for q in queues.values()):
        for i in sorted(i for i, t in asks.items() if t == cycle):
            del asks[i]
            link = paths[i][hop[i]]
            if packets[i].flits == 1 and link[3] != "bank":
                at = max(cycle, headers.get(link, 0))
                headers[link] = at + 1
                free[link] = free[link] + 1 if free.get(link, 0) > at else at + 1
                _went(i, at, paths, hop, asks, late, packets)
            else:
                before = paths[i][hop[i] - 1][3] if hop[i] else "bank"
                port = 0 if "bank" in (link[3], before) else 1 if before == "x" else 2
                queues.setdefault(link, (deque(), deque(), deque()))[port].append(i)
        for link, ports in sorted(queues.items()):
            if free.get(link, 0) <= cycle and any(ports):
                port = last.get(link, 2)
                for _ in range(3):
                    port = (port + 1) % 3
                    if ports[port]:
                        break
                i = ports[port].popleft()
                last[link] = port
                free[link] = cycle + (packets[i].bank_hold if link[3] == "bank" else packets[i].flits)
                _went(i, cycle, paths, hop, asks, late, packets)
        cycle += 1
    return late


def _path(p: Packet) -> list:
    """The route, with a DRAM controller before it (a read's response) or after it (a write's data)."""
    path = route(FACTS, p.noc, p.source, p.target)
    if p.bank is None:
        return path
    return [p.bank, *path] if p.bank_first else [*path, p.bank]


def _unloaded(p: Packet, path: list, hop: int) -> int:
    """When the packet asks for link ``hop`` with nothing in its way (Packet): the controller at
    ``bank_at``, the route's links from ``injected`` one router hop apart."""
    if path[hop][3] == "bank":
        return p.bank_at
    return p.injected + (hop - (p.bank is not None and p.bank_first)) * NOC.router_hop


def _went(i, cycle, paths, hop, asks, late, packets) -> None:
    p, path = packets[i], paths[i]
    if hop[i] + 1 < len(path):
        hop[i] += 1
        asks[i] = cycle + _unloaded(p, path, hop[i]) - _unloaded(p, path, hop[i] - 1)
    else:
        late[i] = cycle - _unloaded(p, path, hop[i])


@st.composite
def _packet(draw) -> Packet:
    noc = draw(st.sampled_from([0, 1]))
    source = draw(st.tuples(st.integers(0, 5), st.integers(0, 3)))
    target = draw(st.tuples(st.integers(0, 5), st.integers(0, 3)))
    injected = draw(st.integers(0, 120))
    flits = draw(st.sampled_from([1, 2, 5, 17]))
    if not draw(st.booleans()):
        return Packet(noc, source, target, injected, flits)
    # A DRAM access: a read's response (the controller asked before its header leaves) or a write's
    # data (the controller asked once its header has come the whole route); two controllers.
    first = draw(st.booleans())
    hops = len(route(FACTS, noc, source, target))
    gap = draw(st.integers(1, 40))
    at = injected if first else injected + hops * NOC.router_hop + gap
    injected += gap if first else 0
    bank = bank_link(draw(st.integers(0, 1)))
    hold = draw(st.integers(1, 40))
    return Packet(
        noc, source, target, injected, max(flits, 2), bank=bank, bank_hold=hold, bank_at=at, bank_first=first
    )


_packets = st.lists(_packet(), min_size=1, max_size=14)


def test_a_dram_controller_serves_both_nocs_first_come_first_served() -> None:
    # Three 2 KiB reads of one bank reach its controller at 100 (NoC #0), 101 (NoC #1) and 102 (NoC #0):
    # each holds it 35 cycles, so they are taken at 100, 135 and 170, whatever the NoC. Their responses
    # leave 300 cycles after (asked 300 later unloaded), on links of their own: late 0, 34 and 68.
    bank = bank_link(0)
    reads = [
        Packet(
            noc,
            (0, 0),
            (1, 2) if noc == 0 else (15, 9),
            at + 300,
            33,
            bank=bank,
            bank_hold=35,
            bank_at=at,
            bank_first=True,
        )
        for noc, at in ((0, 100), (1, 101), (0, 102))
    ]
    assert _late(reads) == {0: 0, 1: 34, 2: 68}
    # A write's data reach the controller after their route, and wait for the reads before them.
    write = Packet(0, (1, 2), (0, 0), 60, 33, bank=bank, bank_hold=37, bank_at=150, bank_first=False)
    assert _late([*reads, write])[3] == 205 - 150
    # Another bank's controller is free.
    other = Packet(0, (1, 2), (0, 2), 60, 33, bank=bank_link(1), bank_hold=37, bank_at=150)
    assert _late([*reads, other])[3] == 0


@settings(max_examples=150, deadline=None)
@given(_packets, st.lists(st.integers(0, 200), max_size=4))
def test_grants_are_the_reference_models_however_the_bounds_fall(packets, bounds) -> None:
    reference = _reference(packets)
    assert _late(packets) == reference
    assert _late(packets, tuple(bounds)) == reference


# -------------------------------------------------------------------------- on a chip
@pytest.mark.parametrize(("quantum", "window"), [(100, None), (2000, 5)])
def test_many_senders_to_one_tile_take_the_same_cycles_at_every_quantum_and_window(quantum, window):
    case = arbitration_case(0, 4, 0, 0.0)
    elf = build_case(case, "brisc")

    def cycles(**kw) -> list[bytes]:
        chip = Chip("blackhole", **kw)
        for xy in case.senders:
            chip.tile(*xy).load_elf("brisc", elf)
        chip.tile(*case.peer)
        chip.run(max_cycles=10_000_000, release={xy: ("brisc",) for xy in case.senders})
        return [chip.tile(*xy).read(RESULTS, 8) for xy in case.senders]

    assert cycles(quantum=quantum, window=window) == cycles()
