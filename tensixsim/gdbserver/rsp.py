"""GDB remote serial protocol framing: pure functions over bytes, no sockets.

A packet is ``$payload#cc``: ``cc`` is the payload's byte sum modulo 256 in two hex digits. Inside a
payload ``#``, ``$``, ``}`` and ``*`` are escaped as ``}`` then the byte XOR 0x20 (binary data of
``X`` writes, and any reply). The receiver acknowledges a packet with ``+`` (or ``-``: send again)
until the client turns acknowledgements off (``QStartNoAckMode``). A lone byte 0x03 outside a packet
is an interrupt request (Ctrl-C). Reference: the GDB manual, "Remote Protocol / Overview".
"""

from __future__ import annotations

from dataclasses import dataclass

INTERRUPT = 0x03
_ESCAPE = 0x7D  # "}"
_SPECIAL = frozenset(b"#$}*")
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
MAX_PACKET = 0x4000  # longest payload accepted; anything longer is dropped as malformed


def checksum(payload: bytes) -> int:
    """The packet checksum: the payload's byte sum modulo 256."""
    return sum(payload) & 0xFF


def escape(data: bytes) -> bytes:
    """``data`` with the four framing bytes escaped (``}`` then the byte XOR 0x20)."""
    out = bytearray()
    for byte in data:
        if byte in _SPECIAL:
            out += bytes((_ESCAPE, byte ^ 0x20))
        else:
            out.append(byte)
    return bytes(out)


def unescape(data: bytes) -> bytes:
    """Undo :func:`escape`; raises ValueError on a trailing lone ``}``."""
    out = bytearray()
    it = iter(data)
    for byte in it:
        if byte == _ESCAPE:
            nxt = next(it, None)
            if nxt is None:
                raise ValueError("escape byte at the end of the data")
            out.append(nxt ^ 0x20)
        else:
            out.append(byte)
    return bytes(out)


def frame(payload: bytes) -> bytes:
    """The packet carrying ``payload`` (escaped) with its checksum."""
    body = escape(payload)
    return b"$" + body + b"#" + f"{checksum(body):02x}".encode()


@dataclass(frozen=True)
class Packet:
    """A framed packet received: its payload (still escaped, as the checksum covers it) and whether
    the checksum matched."""

    payload: bytes
    valid: bool


@dataclass(frozen=True)
class Ack:
    """A ``+`` (True) or ``-`` (False) acknowledgement."""

    positive: bool


@dataclass(frozen=True)
class Interrupt:
    """The client asked the target to stop (byte 0x03)."""


Event = Packet | Ack | Interrupt


class Decoder:
    """Splits the client's byte stream into packets, acknowledgements and interrupts.

    Bytes outside a packet that are none of these are ignored (line noise); a packet longer than
    :data:`MAX_PACKET` or whose checksum digits are not hex is reported invalid.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Event]:
        """Add received bytes; return the complete events they finish, in order."""
        self._buffer += data
        events: list[Event] = []
        buf = self._buffer
        while buf:
            first = buf[0]
            if first == ord("$"):
                end = buf.find(b"#", 1)
                if end < 0:
                    if len(buf) > MAX_PACKET + 1:
                        events.append(Packet(bytes(buf[1:64]), False))
                        del buf[:]
                    break
                if len(buf) < end + 3:
                    break
                payload = bytes(buf[1:end])
                digits = bytes(buf[end + 1 : end + 3])
                del buf[: end + 3]
                if not _is_hex(digits):
                    events.append(Packet(payload, False))
                    continue
                ok = len(payload) <= MAX_PACKET and checksum(payload) == int(digits, 16)
                events.append(Packet(payload, ok))
            else:
                del buf[:1]
                if first == ord("+"):
                    events.append(Ack(True))
                elif first == ord("-"):
                    events.append(Ack(False))
                elif first == INTERRUPT:
                    events.append(Interrupt())
        return events


def hex_bytes(data: bytes) -> bytes:
    """Bytes as lowercase hex digits, two per byte (memory and register contents)."""
    return data.hex().encode()


def from_hex(text: bytes) -> bytes:
    """Hex digits back to bytes; ValueError on odd length or a non-hex digit."""
    if len(text) % 2 or not _is_hex(text):
        raise ValueError(f"bad hex data {text[:32]!r}")
    return bytes.fromhex(text.decode("ascii"))


def hex_word(value: int, size: int = 4) -> bytes:
    """A register value as target (little-endian) bytes in hex."""
    return hex_bytes((value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"))


def parse_hex_int(text: bytes) -> int:
    """A big-endian hex number as in addresses and lengths (``1a2b``); ValueError if malformed."""
    if not text or len(text) > 16 or not _is_hex(text):
        raise ValueError(f"bad hex number {text!r}")
    return int(text.decode("ascii"), 16)


def _is_hex(text: bytes) -> bool:
    return all(byte in _HEX_DIGITS for byte in text)
