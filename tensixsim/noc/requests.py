"""The request kinds an NIU initiates from the request fields (Noc.initiate): reads, writes from L1,
inline writes, and broadcasts of writes and inline writes to a rectangle of tiles; each is checked,
then planned (what issuing it does). Atomics are noc/atomics.py. A mixin of tensixsim.noc.niu.Noc.

Modelled from BlackholeA0/NoC/MemoryMap.md, RoutingPaths.md and Counters.md (and their WormholeB0
counterparts). Supported: reads (split into 16 KiB packets), writes from L1 with a length or a
byte-enable mask, inline writes to MMIO, the atomics (increment, compare and swap, the swaps by mask
and by index, the Zaamo operations; parallel addition raises Unimplemented); broadcasts of writes from
L1, inline writes and posted atomics to a rectangle of Tensix tiles, wrapping round the torus where
its start lies past its end (in a chip; on a lone tile the tile itself). Everything is checked before
anything changes. Readings where the pages are silent:

- A request leaves the NIU on the cycle ``NOC_CMD_CTRL`` is written; the "started" / "sent" / "accepted"
  counters and ``REQS_OUTSTANDING`` count it then. Packets of one NIU share its outgoing link (one
  flit per cycle) and read responses its incoming link.
- Write data are read from L1 when the request is taken (``WRITE_REQS_OUTGOING`` drops once the packet
  has left, ``1 + flits`` cycles later); read data are read at the target when the response is
  built; atomics act at the target on arrival.
- A broadcast inline write is acknowledged by each receiver (as a broadcast write from L1 is); a
  broadcast atomic with a response is Unimplemented (each receiver would answer to the same
  ``NOC_RET_ADDR``). A rectangle with a corner outside the grid is :class:`NoEndpoint`.
- Inline writes to L1 (unsafe on Blackhole, MemoryMap.md) and zero-length reads / writes are
  :class:`~tensixsim.errors.UndefinedBehavior`; ``NOC_CMD_L1_ACC_AT_EN`` (unusable, a hardware bug) too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensixsim.errors import InvalidProgram, UndefinedBehavior, Unimplemented
from tensixsim.noc.fabric import Endpoint, NoEndpoint
from tensixsim.noc.registers import (
    AT_DATA,
    AT_LEN_BE,
    AT_LEN_BE_1,
    CMD_BRCST_PACKET,
    CMD_BRCST_SRC_INCLUDE,
    CMD_RESP_MARKED,
    CMD_WR_BE,
    CMD_WR_INLINE,
    CTRL,
    MST_CMD_ACCEPTED,
    MST_NONPOSTED_WR_DATA_WORD_SENT,
    MST_NONPOSTED_WR_REQ_SENT,
    MST_NONPOSTED_WR_REQ_STARTED,
    MST_POSTED_WR_DATA_WORD_SENT,
    MST_POSTED_WR_REQ_SENT,
    MST_POSTED_WR_REQ_STARTED,
    MST_RD_DATA_WORD_RECEIVED,
    MST_RD_REQ_SENT,
    MST_RD_REQ_STARTED,
    MST_RD_RESP_RECEIVED,
    MST_REQS_OUTSTANDING_ID,
    MST_WR_ACK_RECEIVED,
    MST_WRITE_REQS_OUTGOING_ID,
    PACKET_TAG,
    RET_HI,
    RET_LO,
    RET_MID,
    SLV_NONPOSTED_WR_DATA_WORD_RECEIVED,
    SLV_NONPOSTED_WR_REQ_RECEIVED,
    SLV_NONPOSTED_WR_REQ_STARTED,
    SLV_POSTED_WR_DATA_WORD_RECEIVED,
    SLV_POSTED_WR_REQ_RECEIVED,
    SLV_POSTED_WR_REQ_STARTED,
    SLV_RD_DATA_WORD_SENT,
    SLV_RD_REQ_RECEIVED,
    SLV_RD_RESP_SENT,
    SLV_REQ_ACCEPTED,
    SLV_WR_ACK_SENT,
    TARG_HI,
    TARG_LO,
    TARG_MID,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tensixsim.noc.fabric import RemoteAction
    from tensixsim.noc.host import NocHost as _Host
    from tensixsim.noc.niu import Noc
else:
    _Host = object


THIS_TILE = Endpoint("tile")  # the issuing (or receiving) NIU's own tile


class Requests(_Host):
    """The request part of :class:`~tensixsim.noc.niu.Noc`, which provides the state named below, its
    coordinates and endpoints, latencies, the memory at the endpoints, its events and counters; the
    DRAM path comes from :class:`~tensixsim.noc.dram_path.DramPath`."""

    def _txn(self, f: list[int]) -> int:
        return f[PACKET_TAG] >> 10 & 0xF

    def _own(self, noc: int, hi: int, what: str) -> None:
        if self.endpoint(noc, hi, what).kind != "tile":
            raise Unimplemented(f"NoC #{noc}: {what} elsewhere than this tile", value=hi)

    def _length(self, f: list[int], what: str) -> int:
        if f[AT_LEN_BE_1]:
            raise Unimplemented(f"{what} of 4 GiB or more", value=f[AT_LEN_BE_1])
        if f[AT_LEN_BE] == 0:
            raise UndefinedBehavior(f"zero-length {what}")
        return f[AT_LEN_BE]

    def _plan_read(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        size = self._length(f, "read")
        if f[CTRL] & CMD_BRCST_PACKET:
            raise UndefinedBehavior("broadcast read (NOC_CMD_BRCST_PACKET must be false for reads)")
        source = self.endpoint(noc, f[TARG_HI], "read source (NOC_TARG_ADDR_HI)")
        self._own(noc, f[RET_HI], "read destination (NOC_RET_ADDR_HI)")
        src = f[TARG_LO] | f[TARG_MID] << 32
        dst = f[RET_LO]
        if f[RET_MID]:
            raise Unimplemented("read destination above 4 GiB in a Tensix tile", value=f[RET_MID])
        self._check(source, src, size, "read source")
        self._l1_span(dst, size, "read destination")
        packets = -(-size // self.max_packet_bytes)
        txn = self._txn(f)
        loop = source.kind == "tile"
        back = 0 if loop else self._return_hops(noc, f[TARG_HI])

        def run() -> None:
            self._will_write(THIS_TILE, dst, size)
            self._count(
                noc,
                cycle,
                (MST_REQS_OUTSTANDING_ID + txn, packets),
                (MST_CMD_ACCEPTED, packets),
                (MST_RD_REQ_STARTED, packets),
                (MST_RD_REQ_SENT, packets),
            )
            for k in range(packets):
                offset = k * self.max_packet_bytes
                length = min(self.max_packet_bytes, size - offset)
                flits = self.flits(length)
                sent = max(cycle, self.tx_free[noc]) + 1  # one header flit
                self.tx_free[noc] = sent
                reached = sent + self._latency(source.hops)  # the request at its target
                chip = self._bank_in_fabric(source)
                turn = self._served(source, src + offset, reached, length, False)
                arrive = turn + self._read_access(source)
                first = arrive + self._latency(back)
                if chip:  # the response crosses its bank's controller and the links back (unloaded here)
                    packet = self._bank_packet(
                        noc, source, src + offset, reached, length, False, arrive, flits + 1
                    )
                    read = self._read_done(noc, txn, source, src + offset, dst + offset, length, loop)
                    span = (dst + offset, dst + offset + length)
                    self._inbound(first + flits, self._landing(noc, flits, read, span), packet, span)
                    continue
                if source.kind == "remote":
                    # The response's last flit is in ``first + flits - arrive`` after the request is
                    # served (later if it waits for links), then behind the responses before it.
                    served = self._read_served(
                        noc, txn, src + offset, dst + offset, length, first + flits - arrive
                    )
                    self._at(source, arrive, served, noc, sent, 1)
                    continue
                # The data are written into this tile's L1, and only then counted (Counters.md).
                read = self._read_done(noc, txn, source, src + offset, dst + offset, length, loop)
                self._landing(noc, flits, read, (dst + offset, dst + offset + length))(first + flits)

        return run

    def _read_served(self, noc: int, txn: int, src: int, dst: int, length: int, after: int) -> RemoteAction:
        """A read packet reaching another tile: its NIU reads the data as it builds the response, which
        lands here ``after`` cycles later (unloaded)."""

        def served(niu: Noc, cycle: int) -> None:
            data = niu._read(Endpoint("tile"), src, length)
            flits = self.flits(length)
            niu._count(
                noc,
                cycle,
                (SLV_REQ_ACCEPTED, 1),
                (SLV_RD_REQ_RECEIVED, 1),
                (SLV_RD_RESP_SENT, 1),
                (SLV_RD_DATA_WORD_SENT, flits),
            )

            def written(at: int) -> None:
                self.tile.l1_store(dst, data, at, by=("noc",))
                self._count(
                    noc,
                    at,
                    (MST_RD_RESP_RECEIVED, 1),
                    (MST_RD_DATA_WORD_RECEIVED, flits),
                    (MST_REQS_OUTSTANDING_ID + txn, -1),
                )

            def landed(_: Noc, at: int) -> None:
                # Counted once the data are written into this tile's L1 (Counters.md).
                ordered = self.orders_remote_writes
                self._landing(noc, flits, written, (dst, dst + length) if ordered else False)(at)

            niu._send(noc, self.position, cycle + after, landed, cycle, flits + 1)

        return served

    def _return_hops(self, noc: int, hi: int) -> int:
        return self.hops(noc, (hi & 0x3F, hi >> 6 & 0x3F), self.coordinates(noc))

    def _read_done(
        self, noc: int, txn: int, source: Endpoint, src: int, dst: int, length: int, loop: bool
    ) -> Callable[[int], None]:
        def done(cycle: int) -> None:
            data = self._read(source, src, length, cycle)
            self.tile.l1_store(dst, data, cycle, by=("noc",))
            flits = self.flits(length)
            changes = [
                (MST_RD_RESP_RECEIVED, 1),
                (MST_RD_DATA_WORD_RECEIVED, flits),
                (MST_REQS_OUTSTANDING_ID + txn, -1),
            ]
            if loop:
                changes += [
                    (SLV_REQ_ACCEPTED, 1),
                    (SLV_RD_REQ_RECEIVED, 1),
                    (SLV_RD_RESP_SENT, 1),
                    (SLV_RD_DATA_WORD_SENT, flits),
                ]
            self._count(noc, cycle, *changes)

        return done

    def _broadcast_targets(self, noc: int, hi: int, ctrl: int, what: str) -> list[Endpoint]:
        """The receivers of a broadcast to the rectangle in ``hi`` (RoutingPaths.md, MemoryMap.md):
        every Tensix tile in it, this one only with NOC_CMD_BRCST_SRC_INCLUDE; other tiles (and fused-off
        ones) opt out. A span whose start lies past its end wraps round the torus (``x <= EndX or
        StartX <= x``). In a chip any rectangle of the grid; on a lone tile, the tile itself."""
        if self.fabric is None:
            self._broadcast_target(noc, hi, ctrl, what)
            return [Endpoint("tile")]
        end, start = (hi & 0x3F, hi >> 6 & 0x3F), (hi >> 12 & 0x3F, hi >> 18 & 0x3F)
        if not all(x < self.facts.width and y < self.facts.height for x, y in (start, end)):
            raise NoEndpoint(
                f"NoC #{noc} broadcast {what} to {start}..{end}: a corner outside the "
                f"{self.facts.width}x{self.facts.height} grid",
                value=hi,
            )
        own = self.coordinates(noc)
        targets = []
        for y in _span(start[1], end[1], self.facts.height):
            for x in _span(start[0], end[0], self.facts.width):
                if (x, y) == own:
                    if ctrl & CMD_BRCST_SRC_INCLUDE:
                        targets.append(Endpoint("tile"))
                    continue
                noc0 = self.coordinates(noc, (x, y))
                if self.fabric.endpoint_kind(noc0) == "tensix":
                    targets.append(Endpoint("remote", hops=self.hops(noc, own, (x, y)), xy=noc0))
        return targets

    def _broadcast_target(self, noc: int, hi: int, ctrl: int, what: str) -> None:
        """A broadcast rectangle must be this tile alone, with the initiator included."""
        end, start = (hi & 0x3F, hi >> 6 & 0x3F), (hi >> 12 & 0x3F, hi >> 18 & 0x3F)
        own = self.coordinates(noc)
        if start != own or end != own:
            raise Unimplemented(
                f"NoC #{noc} broadcast {what} to {start}..{end}: only this tile {own} is modelled", value=hi
            )
        if not ctrl & CMD_BRCST_SRC_INCLUDE:
            raise Unimplemented(
                f"NoC #{noc} broadcast {what} excluding the initiator from a rectangle of itself alone",
                value=ctrl,
            )

    def _plan_write(self, noc: int, f: list[int], cycle: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        marked = bool(ctrl & CMD_RESP_MARKED)
        txn = self._txn(f)
        if ctrl & CMD_WR_INLINE:
            return self._plan_inline(noc, f, cycle, marked, txn)
        self._own(noc, f[TARG_HI], "write source (NOC_TARG_ADDR_HI)")
        if ctrl & CMD_BRCST_PACKET:
            targets = self._broadcast_targets(noc, f[RET_HI], ctrl, "write")
        else:
            targets = [self.endpoint(noc, f[RET_HI], "write destination (NOC_RET_ADDR_HI)")]
        # (Every receiver of a broadcast is a Tensix tile: one check covers them all.)
        target = targets[0] if targets else Endpoint("tile")
        src = f[TARG_LO]
        dst = f[RET_LO] | f[RET_MID] << 32
        if f[TARG_MID]:
            raise Unimplemented("write source above 4 GiB in a Tensix tile", value=f[TARG_MID])
        if ctrl & CMD_WR_BE:
            mask = f[AT_LEN_BE] | f[AT_LEN_BE_1] << 32
            src, dst = src & ~0xF, dst & ~0xF
            span = self.facts.write_be_bytes  # one mask bit per byte
            self._l1_span(src, span, "write source")
            self._check(target, dst, span, "write destination", True, self._device_data(target, src, span))
            pieces = [(0, span)]
        else:
            mask = None
            size = self._length(f, "write")
            self._l1_span(src, size, "write source")
            self._check(target, dst, size, "write destination", True, self._device_data(target, src, size))
            most = self.max_packet_bytes
            pieces = [(k, min(most, size - k)) for k in range(0, size, most)]
        packets = len(pieces)
        own = self.coordinates(noc)
        # Hops of each receiver's acknowledgement back to this tile.
        backs = [
            0 if t.kind == "tile" else self._return_hops(noc, f[RET_HI]) if t.kind in ("dram", "device")
            else self.hops(noc, self.coordinates(noc, t.xy), own)
            for t in targets
        ]  # fmt: skip
        # Each receiver acknowledges each packet (tt-metal's multicast barrier counts one per receiver).
        acks = packets * len(targets)
        extent = pieces[-1][0] + pieces[-1][1]

        def run() -> None:
            for target in targets:
                self._will_write(target, dst, extent)
            changes = [
                (MST_WRITE_REQS_OUTGOING_ID + txn, packets),
                (MST_CMD_ACCEPTED, packets),
                (MST_NONPOSTED_WR_REQ_STARTED if marked else MST_POSTED_WR_REQ_STARTED, packets),
            ]
            if marked:
                changes.append((MST_REQS_OUTSTANDING_ID + txn, acks))
            self._count(noc, cycle, *changes)
            for offset, length in pieces:
                data = self.tile.l1[src + offset : src + offset + length].tobytes()
                flits = self.flits(length)
                left = max(cycle, self.tx_free[noc]) + 1 + flits
                self.tx_free[noc] = left
                self.schedule(left, self._write_left(noc, txn, marked, flits))
                # A multicast's packets share the links their routes have in common.
                group = (self.position, noc, left) if len(targets) > 1 else None
                for target, back in zip(targets, backs, strict=True):
                    # The far NIU's counters count it (this tile's, or a remote tile's), not DRAM's (nor
                    # an ARC / Ethernet tile's NIU, not modelled).
                    loop = target.kind not in ("dram", "device")
                    reached = left + self._latency(target.hops)  # the header at the target
                    chip = self._bank_in_fabric(target)
                    turn = self._served(target, dst + offset, reached, length, True)
                    arrive = turn + self._write_access(target)
                    remote_ack = back if marked and target.kind == "remote" else None
                    arrived = self._write_arrived(
                        noc, target, dst + offset, data, mask, marked, loop, remote_ack, txn
                    )
                    if chip:  # the data cross the links and their bank's controller (unloaded here)
                        packet = self._bank_packet(
                            noc, target, dst + offset, reached, length, True, left, flits + 1
                        )
                        self._inbound(arrive, self._dram_written(noc, txn, arrived, marked, back), packet)
                        continue
                    span = (dst + offset, dst + offset + length)
                    self._at(target, arrive, arrived, noc, left, flits + 1, group, span)
                    if marked and remote_ack is None:
                        self.schedule(arrive + self._latency(back), self._acked(noc, txn))

        return run

    def _write_left(self, noc: int, txn: int, marked: bool, flits: int) -> Callable[[int], None]:
        def left(cycle: int) -> None:
            self._count(
                noc,
                cycle,
                (MST_NONPOSTED_WR_REQ_SENT if marked else MST_POSTED_WR_REQ_SENT, 1),
                (MST_NONPOSTED_WR_DATA_WORD_SENT if marked else MST_POSTED_WR_DATA_WORD_SENT, flits),
                (MST_WRITE_REQS_OUTGOING_ID + txn, -1),
            )

        return left

    def _write_arrived(
        self,
        noc: int,
        target: Endpoint,
        dst: int,
        data: bytes,
        mask: int | None,
        marked: bool,
        loop: bool,
        remote_ack: int | None = None,
        txn: int = 0,
    ) -> RemoteAction:
        """The write landing at ``target``; with ``remote_ack`` (the hops back), another tile sends its
        acknowledgement back over the links."""

        def arrived(niu: Noc, cycle: int) -> None:
            if remote_ack is not None:
                niu._send_ack(noc, self, cycle, remote_ack, txn)
            if mask is None:
                niu._write(target, dst, data, cycle)
            else:
                old = bytearray(niu._read(target, dst, len(data), cycle))
                for i in range(len(data)):
                    if mask >> i & 1:
                        old[i] = data[i]
                niu._write(target, dst, bytes(old), cycle)
            if loop:
                flits = self.flits(len(data))
                niu._count(
                    noc,
                    cycle,
                    (SLV_NONPOSTED_WR_REQ_STARTED if marked else SLV_POSTED_WR_REQ_STARTED, 1),
                    (
                        SLV_NONPOSTED_WR_DATA_WORD_RECEIVED if marked else SLV_POSTED_WR_DATA_WORD_RECEIVED,
                        flits,
                    ),
                    (SLV_NONPOSTED_WR_REQ_RECEIVED if marked else SLV_POSTED_WR_REQ_RECEIVED, 1),
                    *([(SLV_WR_ACK_SENT, 1)] if marked else []),
                )

        return arrived

    def _send_ack(self, noc: int, requester: Noc, cycle: int, hops: int, txn: int) -> None:
        """This (far) NIU acknowledges ``requester``'s write at ``cycle``: a one-flit packet back."""
        acked = requester._acked(noc, txn)
        self._send(noc, requester.position, cycle + self._latency(hops), lambda _, at: acked(at), cycle, 1)

    def _acked(self, noc: int, txn: int) -> Callable[[int], None]:
        def acked(cycle: int) -> None:
            self._count(noc, cycle, (MST_WR_ACK_RECEIVED, 1), (MST_REQS_OUTSTANDING_ID + txn, -1))

        return acked

    def _plan_inline(self, noc: int, f: list[int], cycle: int, marked: bool, txn: int) -> Callable[[], None]:
        ctrl = f[CTRL]
        if ctrl & CMD_BRCST_PACKET:
            targets = self._broadcast_targets(noc, f[TARG_HI], ctrl, "inline write")
        else:
            targets = [self.endpoint(noc, f[TARG_HI], "inline write destination (NOC_TARG_ADDR_HI)")]
        address = f[TARG_LO] | f[TARG_MID] << 32
        if any(t.kind == "dram" for t in targets):
            raise InvalidProgram(
                "inline write to a DRAM tile (NOC_CMD_WR_INLINE needs a Tensix or Ethernet tile)",
                value=address,
            )
        device = next((t for t in targets if t.kind == "device"), None)  # (a broadcast reaches Tensix tiles)
        to_l1 = self._device(device).in_l1(address, 4) if device else address < self.tile.arch.l1_size
        if to_l1 and not self.facts.inline_l1_writes:
            raise UndefinedBehavior(
                "inline write to L1 (unsafe on Blackhole: a hardware bug; tt-metal writes from L1 instead)",
                value=address,
            )
        if not to_l1 and (address & 3 or f[TARG_MID]):
            raise UndefinedBehavior("inline write to an unaligned or 64-bit MMIO address", value=address)
        value = f[AT_DATA]
        enables = f[AT_LEN_BE]
        own = self.coordinates(noc)
        line = (address & ~0xF, (address & ~0xF) + 16)  # (the L1 line an inline write changes)
        if device is not None and not to_l1:
            self._check(device, address, 4, "inline write destination", True, value.to_bytes(4, "little"))

        def arrived_at(back: int | None, target: Endpoint) -> RemoteAction:
            def arrived(niu: Noc, at: int) -> None:
                if target.kind == "device":  # its NIU (and counters) are not modelled
                    if to_l1:
                        niu._inline_l1(address, value, enables, at, target)
                    else:
                        niu._write(target, address, value.to_bytes(4, "little"), at)
                    return
                if to_l1:
                    niu._inline_l1(address, value, enables, at)
                else:
                    niu.tile.register_access(address, at, value)
                if niu is not self:  # wake the remote tile's cores polling that register
                    if not to_l1:
                        niu.tile.register_written(address & ~3, at)
                    if back is not None:
                        niu._send_ack(noc, self, at, back, txn)
                niu._count(
                    noc,
                    at,
                    (SLV_NONPOSTED_WR_REQ_STARTED if marked else SLV_POSTED_WR_REQ_STARTED, 1),
                    (SLV_NONPOSTED_WR_REQ_RECEIVED if marked else SLV_POSTED_WR_REQ_RECEIVED, 1),
                    (SLV_NONPOSTED_WR_DATA_WORD_RECEIVED if marked else SLV_POSTED_WR_DATA_WORD_RECEIVED, 1),
                    *([(SLV_WR_ACK_SENT, 1)] if marked else []),
                )

            return arrived

        def run() -> None:
            for target in targets if to_l1 else ():
                self._will_write(target, address & ~0xF, 16)
            changes = [
                (MST_CMD_ACCEPTED, 1),
                (MST_NONPOSTED_WR_REQ_STARTED if marked else MST_POSTED_WR_REQ_STARTED, 1),
                (MST_NONPOSTED_WR_REQ_SENT if marked else MST_POSTED_WR_REQ_SENT, 1),
            ]
            if marked:  # each receiver acknowledges (as for a multicast write from L1)
                changes.append((MST_REQS_OUTSTANDING_ID + txn, len(targets)))
            self._count(noc, cycle, *changes)
            sent = max(cycle, self.tx_free[noc]) + 1
            self.tx_free[noc] = sent
            group = (self.position, noc, sent) if len(targets) > 1 else None
            for target in targets:
                arrive = sent + self._latency(target.hops)
                remote = target.kind == "remote"
                far = target.kind in ("remote", "device")
                back = self.hops(noc, self.coordinates(noc, target.xy), own) if far else 0
                action = arrived_at(back if marked and remote else None, target)
                self._at(target, arrive, action, noc, sent, 1, group, line if to_l1 else None)
                if marked and not remote:
                    self.schedule(arrive + self._latency(back), self._acked(noc, txn))

        return run

    def _inline_l1(
        self, address: int, value: int, enables: int, cycle: int, target: Endpoint = THIS_TILE
    ) -> None:
        """An inline write reaching this tile's L1, or ``target``'s (WormholeB0 MemoryMap.md,
        NOC_AT_LEN_BE): byte ``i`` of the 16-byte line takes byte ``i & 3`` of ``value`` where bit ``i`` or
        bit ``16 + i`` of ``enables`` is set."""
        line = address & ~0xF
        data = bytearray(self._read(target, line, 16, cycle))
        for i in range(16):
            if (enables >> i | enables >> 16 + i) & 1:
                data[i] = value >> 8 * (i & 3) & 0xFF
        self._write(target, line, bytes(data), cycle)


def _span(start: int, end: int, size: int) -> list[int]:
    """A broadcast span's coordinates, wrapping round when ``start`` lies past ``end`` (MemoryMap.md)."""
    if start <= end:
        return list(range(start, end + 1))
    return [*range(end + 1), *range(start, size)]
