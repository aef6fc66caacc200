"""RSP framing (tensixsim.gdbserver.rsp) against hand-worked packets from the GDB manual's rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensixsim.gdbserver import rsp


def test_checksum_is_the_byte_sum_modulo_256() -> None:
    # "OK": 0x4f + 0x4b = 0x9a; "g": 0x67.
    assert rsp.checksum(b"OK") == 0x9A
    assert rsp.frame(b"OK") == b"$OK#9a"
    assert rsp.frame(b"g") == b"$g#67"
    assert rsp.frame(b"") == b"$#00"


def test_the_four_framing_bytes_are_escaped() -> None:
    # '}' then the byte XOR 0x20: '#' 0x23 -> 0x03, '$' 0x24 -> 0x04, '}' 0x7d -> 0x5d, '*' 0x2a -> 0x0a.
    assert rsp.escape(b"a#b$c}d*") == b"a}\x03b}\x04c}\x5dd}\x0a"
    assert rsp.frame(b"#") == b"$}\x03#80"  # 0x7d + 0x03


@given(st.binary(max_size=200))
def test_unescape_undoes_escape(data: bytes) -> None:
    assert rsp.unescape(rsp.escape(data)) == data
    assert not set(rsp.escape(data)) & set(b"#$")


def test_unescape_rejects_a_trailing_escape() -> None:
    with pytest.raises(ValueError):
        rsp.unescape(b"ab}")


def test_decoder_splits_packets_acks_and_interrupts() -> None:
    d = rsp.Decoder()
    assert d.feed(b"+$g#6") == [rsp.Ack(True)]  # the checksum's second digit still missing
    assert d.feed(b"7-\x03$m0,4#fd") == [
        rsp.Packet(b"g", True),
        rsp.Ack(False),
        rsp.Interrupt(),
        rsp.Packet(b"m0,4", True),
    ]


def test_decoder_marks_bad_checksums_and_non_hex_digits_invalid() -> None:
    d = rsp.Decoder()
    assert d.feed(b"$g#00$g#zz") == [rsp.Packet(b"g", False), rsp.Packet(b"g", False)]


def test_decoder_drops_noise_and_overlong_packets() -> None:
    d = rsp.Decoder()
    assert d.feed(b"xyz") == []
    events = d.feed(b"$" + b"a" * (rsp.MAX_PACKET + 10))
    assert events and isinstance(events[0], rsp.Packet) and not events[0].valid
    assert d.feed(b"$g#67") == [rsp.Packet(b"g", True)]


@given(st.lists(st.binary(max_size=40), max_size=6), st.integers(1, 7))
def test_decoder_recovers_framed_payloads_fed_in_any_chunks(payloads: list[bytes], chunk: int) -> None:
    stream = b"".join(rsp.frame(p) for p in payloads)
    d = rsp.Decoder()
    events = []
    for i in range(0, len(stream), chunk):
        events += d.feed(stream[i : i + chunk])
    assert [rsp.unescape(e.payload) for e in events] == payloads
    assert all(e.valid for e in events)


def test_hex_helpers() -> None:
    assert rsp.hex_word(0x12345678) == b"78563412"  # target byte order: little-endian
    assert rsp.from_hex(b"0aff") == b"\x0a\xff"
    assert rsp.parse_hex_int(b"1f") == 31
    for bad in (b"", b"0x1", b"+1", b"1 2", b"g", b"1" * 17):
        with pytest.raises(ValueError):
            rsp.parse_hex_int(bad)
    for bad in (b"a", b"0g", b"0 a1"):
        with pytest.raises(ValueError):
            rsp.from_hex(bad)
