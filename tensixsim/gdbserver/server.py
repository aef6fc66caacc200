"""A GDB remote-serial-protocol server for one tile: five threads, one per baby core.

All-stop mode: when one core stops (breakpoint, step, watchpoint, Ctrl-C, an error) the whole tile
stops with it, and everything runs again on ``continue`` or ``step``. The session is driven from
inside the tile's scheduler (the tile calls :class:`GdbServer` back after each slice), so it needs no
thread of its own. A malformed or unknown request gets an error (``E xx``) or empty reply; a client
that goes away detaches (the run goes on to its end).
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterable
from typing import NoReturn

from tensixsim.errors import InvalidProgram, MemoryFault, RunStopped, SimError
from tensixsim.gdbserver import rsp
from tensixsim.gdbserver.monitor import MonitorError, monitor
from tensixsim.gdbserver.target import PC_REGISTER, REGISTER_COUNT, StopEvent, TargetError, TileTarget, Watch
from tensixsim.results import RunResult
from tensixsim.riscv.core import Core, CoreState
from tensixsim.riscv.cpu import ABI_NAMES
from tensixsim.tile import Tile

SIGINT, SIGILL, SIGTRAP, SIGABRT, SIGSEGV = 2, 4, 5, 6, 11
E_INVALID, E_THREAD, E_MEMORY = b"E16", b"E03", b"E0e"  # EINVAL, ESRCH, EFAULT
PACKET_SIZE = 0x1000  # what qSupported announces; longer m replies are cut to it


class KilledByDebugger(RunStopped):
    """The debugger killed the run (GDB's ``kill``)."""


def target_xml() -> bytes:
    """The target description: RV32, the 32 integer registers and pc (regnums 0..32)."""
    regs = "".join(
        f'<reg name="{name}" bitsize="32" type="{"data_ptr" if name in ("sp", "gp", "tp") else "int"}"'
        f' regnum="{i}"/>'
        for i, name in enumerate(ABI_NAMES)
    )
    return (
        '<?xml version="1.0"?><!DOCTYPE target SYSTEM "gdb-target.dtd">'
        "<target><architecture>riscv:rv32</architecture>"
        f'<feature name="org.gnu.gdb.riscv.cpu">{regs}'
        f'<reg name="pc" bitsize="32" type="code_ptr" regnum="{PC_REGISTER}"/></feature></target>'
    ).encode()


class _Resume(Exception):
    """Internal: the client resumed the tile."""


class _Detached(Exception):
    """Internal: the client detached or went away."""


def _signal_for(error: BaseException) -> int:
    if isinstance(error, MemoryFault):
        return SIGSEGV
    if isinstance(error, InvalidProgram):
        return SIGILL
    return SIGABRT


class GdbServer:
    """Serves ``tile`` to one GDB client on ``host:port`` (port 0: one the system picks; see
    :attr:`port`). :meth:`run` waits for the client, then runs the tile under its control."""

    def __init__(self, tile: Tile, port: int = 0, host: str = "127.0.0.1") -> None:
        self.tile = tile
        self.target = TileTarget(tile)
        self._listener = socket.create_server((host, port))
        self.port: int = self._listener.getsockname()[1]
        self._conn: socket.socket | None = None
        self._decoder = rsp.Decoder()
        self._events: list[rsp.Event] = []
        self._acks = True
        self._interrupted = False  # the client asked the running tile to stop
        self._hardware: set[int] = set()  # breakpoints inserted as hardware ones (Z1)
        self._stop_reasons: set[bytes] = set()  # "swbreak" / "hwbreak", if the client takes them
        self._g_core = tile.cores[0]  # the thread registers and memory refer to (Hg)
        self._c_core: Core | None = None  # the thread a step applies to (Hc; None: the g thread)
        self._last_stop = b"S05"
        self._stop_events: dict[int, StopEvent] = {}
        self._xml = target_xml()

    # ------------------------------------------------------------------ running
    def run(
        self,
        max_cycles: int = 100_000_000,
        release: Iterable[str] | None = None,
        accept_timeout: float | None = None,
    ) -> RunResult:
        """Wait for a client (at most ``accept_timeout`` seconds: TimeoutError), let it inspect the
        tile and set breakpoints, then run the tile (``Tile.run``'s arguments) until it ends. The
        result and cycles are those of a run without the debugger. An error the run raises is shown
        to the client as a stop first (the faulting core's thread, SIGSEGV / SIGILL / SIGABRT), then
        raised; a ``kill`` raises :class:`KilledByDebugger`."""
        self._listener.settimeout(accept_timeout)
        try:
            conn, _ = self._listener.accept()
        finally:
            self._listener.close()
        conn.settimeout(None)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conn = conn
        self.tile.debugger = self
        try:
            try:
                self._last_stop = self._stop_reply(SIGTRAP, self._g_core)
                self._serve()  # the client looks around before the first continue
                result = self.tile.run(max_cycles=max_cycles, release=release)
            except KilledByDebugger:
                raise
            except SimError as error:
                self._report_error(error)
                raise
            self._report_exit(result)
            return result
        finally:
            self._close()

    def _close(self) -> None:
        self.tile.debugger = None
        self.target.remove_all()
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _report_exit(self, result: RunResult) -> None:
        codes = [s.exit_code for s in result.cores.values() if s.exit_code]
        self._send(b"W%02x" % ((codes[0] if codes else 0) & 0xFF))

    def _report_error(self, error: SimError) -> None:
        if self._conn is None:
            return
        names = [c.name for c in self.tile.cores]
        index = names.index(error.core) if error.core in names else 0
        signal = _signal_for(error)
        self._send_console(f"tensixsim: {type(error).__name__}: {error}\n")
        try:
            self._stop(self.tile.cores[index], self._stop_reply(signal, self.tile.cores[index]))
        except KilledByDebugger:
            return  # the run's own error is the one raised
        if self._conn is not None:
            self._send(b"X%02x" % signal)

    # ------------------------------------------------------------------ the tile calls these
    def cut(self, core: Core) -> bool:
        event = self.target.take_event(core)
        if event is None:
            return False
        self._stop_events[core.index] = event
        return True

    def stopped(self, core: Core) -> None:
        event = self._stop_events.pop(core.index)
        extra = b""
        if event.reason == "watch" and event.watch is not None:
            extra = b"%s:%x;" % (event.watch.value.encode(), event.address)
        elif event.reason == "break":
            kind = b"hwbreak" if event.address in self._hardware else b"swbreak"
            extra = kind + b":;" if kind in self._stop_reasons else b""
        self._stop(core, self._stop_reply(SIGTRAP, core, extra))

    def slice_done(self, core: Core) -> None:
        if self.target.stepping(core) and core.state is CoreState.FINISHED:
            self.target.disarm_step(core)
            self._stop(core, self._stop_reply(SIGTRAP, core))
            return
        conn = self._conn
        if conn is None:
            return
        if not self._interrupted and select.select([conn], [], [], 0)[0]:
            try:
                data = conn.recv(4096)
            except OSError:
                data = b""
            if not data:
                self._detach()
                return
            for event in self._decoder.feed(data):
                if isinstance(event, rsp.Interrupt):
                    self._interrupted = True
                else:
                    self._events.append(event)  # answered at the next stop
        if self._interrupted:
            self._interrupted = False
            self._stop(core, self._stop_reply(SIGINT, core))

    # ------------------------------------------------------------------ stopping
    def _stop_reply(self, signal: int, core: Core, extra: bytes = b"") -> bytes:
        return b"T%02xthread:%x;%s" % (signal, core.index + 1, extra)

    def _stop(self, core: Core, reply: bytes) -> None:
        """Report the stop, then serve the client until it resumes (or detaches)."""
        if self._conn is None:
            return
        self.target.stopped_at(core)
        self._g_core = core
        self._last_stop = reply
        self._send(reply)
        self._serve()

    def _serve(self) -> None:
        while self._conn is not None:
            try:
                packet = self._next_packet()
                reply = self._handle(packet)
            except _Resume:
                self.target.prepare_resume()
                # An interrupt sent right behind the resume request stops the tile at once.
                if any(isinstance(e, rsp.Interrupt) for e in self._events):
                    self._interrupted = True
                    self._events = [e for e in self._events if not isinstance(e, rsp.Interrupt)]
                return
            except _Detached:
                self._detach()
                return
            if reply is not None:
                self._send(reply)

    def _detach(self) -> None:
        """The client is gone: the run goes on to its end without it."""
        self.tile.debugger = None
        self.target.remove_all()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ transport
    def _next_packet(self) -> bytes:
        while True:
            while self._events:
                event = self._events.pop(0)
                if isinstance(event, rsp.Interrupt):
                    continue  # the tile is stopped already
                if isinstance(event, rsp.Packet):
                    if self._acks:
                        self._raw(b"+" if event.valid else b"-")
                    if event.valid:
                        return event.payload
            if self._conn is None:  # sending failed: the client is gone
                raise _Detached
            try:
                data = self._conn.recv(4096)
            except OSError:
                data = b""
            if not data:
                raise _Detached
            self._events += self._decoder.feed(data)

    def _raw(self, data: bytes) -> None:
        if self._conn is None:
            return
        try:
            self._conn.sendall(data)
        except OSError:
            self._detach()

    def _send(self, payload: bytes) -> None:
        self._raw(rsp.frame(payload))

    def _send_console(self, text: str) -> None:
        self._send(b"O" + rsp.hex_bytes(text.encode()))

    # ------------------------------------------------------------------ requests
    def _handle(self, packet: bytes) -> bytes | None:
        """The reply to one request (None: no reply)."""
        try:
            payload = rsp.unescape(packet)
            return self._dispatch(payload)
        except (_Resume, _Detached, KilledByDebugger):
            raise
        except (TargetError, SimError):
            return E_MEMORY
        except Exception:  # a request this server cannot take apart: an error reply, never a crash
            return E_INVALID

    def _dispatch(self, p: bytes) -> bytes | None:
        kind = p[:1]
        if kind == b"?":
            return self._last_stop
        if kind == b"g":
            return b"".join(
                rsp.hex_word(self.target.read_register(self._g_core, i)) for i in range(REGISTER_COUNT)
            )
        if kind == b"G":
            data = rsp.from_hex(p[1:])
            if len(data) < 4 * REGISTER_COUNT:
                return E_INVALID
            for i in range(REGISTER_COUNT):
                self.target.write_register(self._g_core, i, int.from_bytes(data[4 * i : 4 * i + 4], "little"))
            return b"OK"
        if kind == b"p":
            number = rsp.parse_hex_int(p[1:])
            if number >= REGISTER_COUNT:
                return E_INVALID
            return rsp.hex_word(self.target.read_register(self._g_core, number))
        if kind == b"P":
            number, value = p[1:].split(b"=")
            data = rsp.from_hex(value)
            if len(data) != 4 or rsp.parse_hex_int(number) >= REGISTER_COUNT:
                return E_INVALID
            self.target.write_register(
                self._g_core, rsp.parse_hex_int(number), int.from_bytes(data, "little")
            )
            return b"OK"
        if kind == b"m":
            address, length = (rsp.parse_hex_int(x) for x in p[1:].split(b","))
            length = min(length, PACKET_SIZE // 2)
            return rsp.hex_bytes(self.target.read_memory(self._g_core, address, length))
        if kind in (b"M", b"X"):
            where, data = p[1:].split(b":", 1)
            address, length = (rsp.parse_hex_int(x) for x in where.split(b","))
            data = rsp.from_hex(data) if kind == b"M" else data
            if len(data) != length:
                return E_INVALID
            if length:
                self.target.write_memory(self._g_core, address, data)
            return b"OK"
        if kind in (b"Z", b"z"):
            return self._breakpoint(kind == b"Z", p[1:])
        if kind in (b"c", b"C"):
            self._resume(None)
        if kind in (b"s", b"S"):
            self._resume(self._c_core or self._g_core)
        if kind == b"H":
            core = self._thread(p[2:])
            if p[1:2] == b"g":
                self._g_core = core or self._g_core
            elif p[1:2] == b"c":
                self._c_core = core
            else:
                return E_INVALID
            return b"OK"
        if kind == b"T":
            return b"OK" if self._thread(p[1:]) is not None else E_THREAD
        if kind == b"D":
            self._send(b"OK")
            raise _Detached
        if kind == b"k":
            self._close()
            raise KilledByDebugger("killed by the debugger", cycle=self.tile.cycle)
        if kind == b"v":
            return self._v_packet(p)
        if kind == b"q":
            return self._query(p)
        if p == b"QStartNoAckMode":
            self._send(b"OK")
            self._acks = False
            return None
        return b""  # unsupported: the empty reply

    def _resume(self, step: Core | None) -> NoReturn:
        """Run the tile on; ``step``: until that core retired one instruction. A step asked for
        earlier and not finished (another core stopped first) is forgotten, as GDB expects."""
        for core in self.tile.cores:
            self.target.disarm_step(core)
        if step is not None:
            self.target.arm_step(step)
        raise _Resume

    def _thread(self, text: bytes) -> Core | None:
        """The core a thread id names; None for "any" (0) or "all" (-1); ValueError otherwise."""
        if text in (b"-1", b"0"):
            return None
        number = rsp.parse_hex_int(text)
        if not 1 <= number <= len(self.tile.cores):
            raise ValueError(f"no thread {number}")
        return self.tile.cores[number - 1]

    def _breakpoint(self, insert: bool, args: bytes) -> bytes:
        kind, address, length = args.split(b",")[:3]
        address_n = rsp.parse_hex_int(address)
        length_n = rsp.parse_hex_int(length.split(b";")[0])
        if kind in (b"0", b"1"):
            if length_n != 4:
                return E_INVALID  # RV32 without the C extension: 4-byte instructions only
            if insert:
                self.target.add_breakpoint(address_n)
                (self._hardware.add if kind == b"1" else self._hardware.discard)(address_n)
            else:
                self.target.remove_breakpoint(address_n)
                self._hardware.discard(address_n)
            return b"OK"
        watch = {b"2": Watch.WRITE, b"3": Watch.READ, b"4": Watch.ACCESS}.get(kind)
        if watch is None:
            return b""
        if insert:
            self.target.add_watchpoint(address_n, length_n, watch)
        else:
            self.target.remove_watchpoint(address_n, length_n, watch)
        return b"OK"

    def _v_packet(self, p: bytes) -> bytes | None:
        if p == b"vCont?":
            return b"vCont;c;C;s;S"
        if p.startswith(b"vCont;"):
            step_core = None
            for action in p[6:].split(b";"):
                verb, _, thread = action.partition(b":")
                if verb[:1] in (b"s", b"S"):
                    step_core = (self._thread(thread) if thread else None) or self._c_core or self._g_core
                elif verb[:1] not in (b"c", b"C"):
                    return E_INVALID
            self._resume(step_core)
        if p.startswith(b"vKill"):
            self._send(b"OK")
            self._close()
            raise KilledByDebugger("killed by the debugger", cycle=self.tile.cycle)
        return b""  # vMustReplyEmpty, vFile, ...: unsupported

    def _query(self, p: bytes) -> bytes:
        if p.startswith(b"qSupported"):
            features = p.partition(b":")[2].split(b";")
            self._stop_reasons = {f[:-1] for f in features if f in (b"swbreak+", b"hwbreak+")}
            return (
                b"PacketSize=%x;qXfer:features:read+;swbreak+;hwbreak+;QStartNoAckMode+;vContSupported+"
                % (PACKET_SIZE)
            )
        if p.startswith(b"qXfer:features:read:target.xml:"):
            offset, length = (rsp.parse_hex_int(x) for x in p.split(b":")[4].split(b","))
            chunk = self._xml[offset : offset + min(length, PACKET_SIZE - 16)]
            return (b"l" if offset + len(chunk) >= len(self._xml) else b"m") + chunk
        if p.startswith(b"qXfer:"):
            return b"E00"
        if p == b"qfThreadInfo":
            return b"m" + b",".join(b"%x" % (c.index + 1) for c in self.tile.cores)
        if p == b"qsThreadInfo":
            return b"l"
        if p == b"qC":
            return b"QC%x" % (self._g_core.index + 1)
        if p.startswith(b"qAttached"):
            return b"1"
        if p.startswith(b"qThreadExtraInfo,"):
            core = self._thread(p.split(b",")[1])
            if core is None:
                return E_THREAD
            info = f"{core.name} {core.state.value} cycle {core.time}"
            return rsp.hex_bytes(info.encode())
        if p.startswith(b"qRcmd,"):
            command = rsp.from_hex(p[6:]).decode("utf-8", "replace")
            try:
                text = monitor(self.tile, command)
            except MonitorError as error:
                text = f"error: {error}"
            self._send_console(text + "\n")
            return b"OK"
        if p.startswith(b"qSymbol"):
            return b"OK"
        return b""
