"""A minimal GDB remote-protocol client over a raw socket, and a tile served in a background thread:
what the gdb server tests drive it with (every wait bounded, so a test cannot hang)."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

from tensixsim import Tile
from tensixsim.gdbserver import rsp

TIMEOUT = 20.0  # seconds any single wait may take


@dataclass
class Served:
    """A tile run by its gdb server in a thread: the outcome once ``join`` returned."""

    thread: threading.Thread
    port: int
    outcome: dict = field(default_factory=dict)

    def join(self) -> None:
        self.thread.join(TIMEOUT * 3)
        assert not self.thread.is_alive(), "the served run did not end"

    @property
    def result(self):
        self.join()
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["result"]


def serve(tile: Tile, **run_kwargs) -> Served:
    """Start ``tile``'s gdb server on a port the system picks and run the tile under it."""
    server = tile.gdb_server(0)
    served = Served(threading.Thread(daemon=True, target=lambda: None), server.port)

    def go() -> None:
        try:
            served.outcome["result"] = server.run(accept_timeout=TIMEOUT, **run_kwargs)
        except BaseException as error:  # handed to the test
            served.outcome["error"] = error

    served.thread = threading.Thread(target=go, daemon=True)
    served.thread.start()
    return served


class Client:
    """Sends requests and reads replies; acknowledges every packet as GDB does."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # GDB does too
        self.decoder = rsp.Decoder()
        self.pending: list[rsp.Event] = []
        self.console: list[str] = []

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, payload: bytes) -> None:
        self.send_raw(rsp.frame(payload))

    def event(self) -> rsp.Event:
        while not self.pending:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.pending += self.decoder.feed(data)
        return self.pending.pop(0)

    def reply(self) -> bytes:
        """The next packet's payload (acknowledged; console output ``O...`` collected)."""
        while True:
            event = self.event()
            if isinstance(event, rsp.Packet):
                assert event.valid, event
                self.send_raw(b"+")
                payload = rsp.unescape(event.payload)
                if payload.startswith(b"O") and payload != b"OK":
                    self.console.append(rsp.from_hex(payload[1:]).decode())
                    continue
                return payload

    def ask(self, payload: bytes) -> bytes:
        self.send(payload)
        return self.reply()

    def register(self, number: int) -> int:
        return int.from_bytes(rsp.from_hex(self.ask(b"p%x" % number)), "little")

    def stop_thread(self, reply: bytes) -> int:
        """The thread a ``T`` stop reply names."""
        assert reply.startswith(b"T"), reply
        fields = dict(f.split(b":", 1) for f in reply[3:].split(b";") if b":" in f)
        return int(fields[b"thread"], 16)
