"""NoC atomics (BlackholeA0/NoC/Atomics.md and its WormholeB0 counterpart): the request that carries
one to its target (with or without a response; broadcast to a rectangle of tiles, posted) and the
operations as the page models them (increment, compare and swap, the swaps by mask and by index, the
Zaamo operations), a read-modify-write of the target's L1. The opcodes an architecture has are
NocFacts.atomic_opcodes. A mixin of tensixsim.noc.niu.Noc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import InvalidProgram, UndefinedBehavior, Unimplemented
from tensixsim.noc.fabric import Endpoint
from tensixsim.noc.registers import (
    AT_CAS,
    AT_DATA,
    AT_INCREMENT,
    AT_LEN_BE,
    AT_SWAP_INDEX,
    AT_SWAP_INDEX_HIGH,
    AT_SWAP_MASK,
    AT_ZAAMO,
    ATOMIC_NAMES,
    CMD_BRCST_PACKET,
    CMD_RESP_MARKED,
    CTRL,
    MST_ATOMIC_RESP_RECEIVED,
    MST_CMD_ACCEPTED,
    MST_NONPOSTED_ATOMIC_SENT,
    MST_NONPOSTED_ATOMIC_STARTED,
    MST_POSTED_ATOMIC_SENT,
    MST_REQS_OUTSTANDING_ID,
    RET_HI,
    RET_LO,
    SLV_ATOMIC_RESP_SENT,
    SLV_NONPOSTED_ATOMIC_RECEIVED,
    SLV_POSTED_ATOMIC_RECEIVED,
    SLV_REQ_ACCEPTED,
    TARG_HI,
    TARG_LO,
    TARG_MID,
)
from tensixsim.noc.requests import THIS_TILE
from tensixsim.timing import NOC

if TYPE_CHECKING:
    from collections.abc import Callable

    from tensixsim.noc.host import NocHost as _Host
    from tensixsim.noc.niu import Noc
else:
    _Host = object


class Atomics(_Host):
    """The atomic part of :class:`~tensixsim.noc.niu.Noc`, which provides the state named below, its
    endpoints and latencies, the memory at the endpoints, its events and counters; the request
    fields' helpers and the broadcast receivers come from :class:`~tensixsim.noc.requests.Requests`."""

    def _plan_atomic(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        marked = bool(ctrl & CMD_RESP_MARKED)
        txn = self._txn(f)
        if ctrl & CMD_BRCST_PACKET:
            if marked and self.fabric is not None:
                raise Unimplemented(
                    "broadcast atomic with NOC_CMD_RESP_MARKED (the pages do not say which receiver's "
                    "response lands at NOC_RET_ADDR): posted broadcast atomics are modelled",
                    value=ctrl,
                )
            targets = self._broadcast_targets(noc, f[TARG_HI], ctrl, "atomic")
            target = targets[0] if targets else Endpoint("tile")
        else:
            target = self.endpoint(noc, f[TARG_HI], "atomic target (NOC_TARG_ADDR_HI)")
            targets = [target]
        if target.kind == "dram":
            raise InvalidProgram("atomic on a DRAM tile (atomics act on Tensix or Ethernet L1 only)")
        device = self._device(target) if target.kind == "device" else None
        if device is not None and device.l1 is None:
            raise InvalidProgram(f"atomic on {device.where} (atomics act on Tensix or Ethernet L1 only)")
        address = f[TARG_LO]
        if f[TARG_MID]:
            raise InvalidProgram("atomic target above 4 GiB", value=f[TARG_MID])
        if device is None:
            self._l1_span(address & ~0xF, 16, "atomic target")
        elif not device.in_l1(address & ~0xF, 16):
            raise Unimplemented(
                f"atomic target 0x{address:x} outside the L1 of {device.where}", value=address
            )
        at = f[AT_LEN_BE]
        opcode = at >> 12 & 0xF
        if opcode not in self.facts.atomic_opcodes:
            names = dict.fromkeys(ATOMIC_NAMES[o] for o in self.facts.atomic_opcodes)
            what = ATOMIC_NAMES.get(opcode, "no documented atomic")
            raise Unimplemented(
                f"NoC atomic opcode 0x{opcode:x} ({what}; {', '.join(names)} modelled)", value=at
            )
        _check_atomic_operand(at)
        if marked:
            self._own(noc, f[RET_HI], "atomic response (NOC_RET_ADDR_HI)")
            self._l1_span(f[RET_LO], 4, "atomic response")
        ret = f[RET_LO]
        data = f[AT_DATA]
        line = (address & ~0xF, (address & ~0xF) + 16)  # (what the read-modify-write changes)
        back = self._return_hops(noc, f[TARG_HI]) if target.kind in ("remote", "device") else 0
        # What the receiving NIU acts on: its own tile's L1, or the ARC / Ethernet endpoint's.
        acted_on = target if device is not None else THIS_TILE

        def run() -> None:
            for receiver in targets:
                self._will_write(receiver, address & ~0xF, 16)
            if marked:
                self._will_write(THIS_TILE, ret, 4)
            changes = [
                (MST_CMD_ACCEPTED, 1),
                (MST_NONPOSTED_ATOMIC_SENT if marked else MST_POSTED_ATOMIC_SENT, 1),
            ]
            if marked:
                changes += [(MST_REQS_OUTSTANDING_ID + txn, 1), (MST_NONPOSTED_ATOMIC_STARTED, 1)]
            self._count(noc, cycle, *changes)
            sent = max(cycle, self.tx_free[noc]) + 1
            self.tx_free[noc] = sent
            # A read-modify-write of the target's L1 (L1.md: the operation of a narrow write).
            arrive = sent + self._latency(target.hops) + NOC.l1_write
            result: list[int] = []

            def arrived(niu: Noc, when: int) -> None:
                result.append(niu._atomic(address, at, data, when, acted_on))
                value = result[-1]
                if device is not None:
                    return  # (the endpoint's NIU counters are not modelled)
                niu._count(
                    noc,
                    when,
                    (SLV_REQ_ACCEPTED, 1),
                    (SLV_NONPOSTED_ATOMIC_RECEIVED if marked else SLV_POSTED_ATOMIC_RECEIVED, 1),
                    *([(SLV_ATOMIC_RESP_SENT, 1)] if marked else []),
                )
                if marked and niu is not self:  # the response carries the value back
                    niu._send(
                        noc,
                        self.position,
                        when + self._latency(back),
                        lambda _, c: self.schedule(
                            c + NOC.l1_write,
                            lambda w: responded(w, value),
                            l1=(ret, ret + 4) if self.orders_remote_writes else False,
                        ),
                        when,
                        1,
                    )

            def responded(when: int, value: int) -> None:
                self.tile.l1_store(ret, value.to_bytes(4, "little"), when, by=("noc",))
                self._count(noc, when, (MST_ATOMIC_RESP_RECEIVED, 1), (MST_REQS_OUTSTANDING_ID + txn, -1))

            if len(targets) > 1 or not marked:  # posted (a broadcast is): each receiver acts on its own
                group = (self.position, noc, sent) if len(targets) > 1 else None
                for receiver in targets:
                    reach = sent + self._latency(receiver.hops) + NOC.l1_write
                    self._at(receiver, reach, arrived, noc, sent, 1, group, line)
                return
            self._at(target, arrive, arrived, noc, sent, 1, span=line)
            if target.kind != "remote":
                # The response is written into this L1 before it is counted (Counters.md).
                self.schedule(
                    arrive + self._latency(back) + NOC.l1_write,
                    lambda when: responded(when, result[0]),
                    l1=(ret, ret + 4),
                )

        return run

    def _atomic(self, address: int, at: int, data: int, cycle: int, target: Endpoint = THIS_TILE) -> int:
        """Atomics.md's functional models (increment, the swaps, compare and swap, the Zaamo
        operations) on this tile's L1 (or ``target``'s); returns ``Result``."""
        result = int.from_bytes(self._read(target, address, 4, cycle), "little")
        line = address & ~0xF
        opcode = at >> 12 & 0xF
        if opcode == AT_SWAP_MASK:  # halfword i of the line takes NOC_AT_DATA's half i & 1
            halves = list(np.frombuffer(self._read(target, line, 16, cycle), np.uint16))
            for i in range(8):
                if at >> 2 + i & 1:
                    halves[i] = data >> 16 * (i & 1) & 0xFFFF
            self._write(target, line, np.array(halves, np.uint16).tobytes(), cycle)
            return result
        ofs = at >> 2 & 3 if opcode == AT_SWAP_INDEX_HIGH else at & 3
        where = line + ofs * 4
        old = int.from_bytes(self._read(target, where, 4, cycle), "little")
        if opcode == AT_INCREMENT:
            mask = (2 << (at >> 2 & 0x1F)) - 1
            new = ((old + data) & mask) | (old & ~mask)
        elif opcode == AT_CAS:  # 4-bit CmpVal (bits 2..5) and SetVal (bits 6..9)
            new = at >> 6 & 0xF if old == at >> 2 & 0xF else old
        elif opcode == AT_ZAAMO and at >> 11 & 1:
            new = _zaamo(at >> 8 & 7, old, data)
        else:  # the swaps by index
            new = data
        self._write(target, where, (new & 0xFFFFFFFF).to_bytes(4, "little"), cycle)
        return result


def _check_atomic_operand(at: int) -> None:
    """NOC_AT_LEN_BE as Atomics.md draws it for its opcode: fixed bits must hold their value (0xA:
    bit 11, a Zaamo operation, or bits 8..11 = 3, a swap by index; 0x6: bit 2); any other form is
    undefined."""
    opcode = at >> 12 & 0xF
    if opcode == AT_SWAP_INDEX and not at >> 2 & 1:
        raise UndefinedBehavior("atomic opcode 0x6 (swap by index) without bit 2 set", value=at)
    if opcode == AT_ZAAMO and not at >> 11 & 1 and at >> 8 & 0xF != 3:
        raise UndefinedBehavior(
            "atomic opcode 0xA with neither bit 11 (Zaamo) nor bits 8..11 = 3 (swap by index)", value=at
        )


def _zaamo(op: int, old: int, data: int) -> int:
    def signed(v: int) -> int:
        return v - (1 << 32) if v >> 31 else v

    return [
        old + data,
        old ^ data,
        old | data,
        old & data,
        old if signed(old) < signed(data) else data,
        old if signed(old) > signed(data) else data,
        old if old < data else data,
        old if old > data else data,
    ][op] & 0xFFFFFFFF
