"""Perfetto traces of a run, written as the run goes.

:class:`PerfettoSink` receives tracks, slices and counter values from
:class:`~tensixsim.observe.events.EventLog` and writes them as Perfetto ``TracePacket`` protobufs
(the ``perfetto`` package's message classes, the optional ``trace`` extra). Packets are serialised
in chunks and appended to the file, so memory stays bounded however long the run: a Perfetto trace
is a sequence of packets, and the concatenation of serialised ``Trace`` messages is again one.

Timestamps are emulated cycles, written as nanoseconds: the UI's "1 ns" is one cycle (docs/observability.md).
Slice and counter names are interned (sent once, referred to by number) to keep traces small.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from tensixsim.errors import TraceError

_CHUNK = 4096  # packets serialised per write
_SEQUENCE = 1  # one writer, one packet sequence


def check_writable(path: str | Path) -> Path:
    """Open ``path`` for writing now (TraceError if it cannot be), so a bad path fails before a run."""
    path = Path(path)
    try:
        with open(path, "wb"):
            pass
    except OSError as error:
        raise TraceError(f"cannot write the trace file {str(path)!r}: {error.strerror or error}") from None
    return path


def _protos() -> Any:
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
    except ImportError:
        raise TraceError(
            "writing a trace needs the perfetto package: pip install 'tensixsim[trace]'"
        ) from None
    return perfetto_trace_pb2


class PerfettoSink:
    """Tracks, slices and counters into a Perfetto trace file (see the module doc)."""

    def __init__(self, path: str | Path, process_name: str = "tensix tile") -> None:
        self._pb = _protos()
        self.path = check_writable(path)
        self._file: IO[bytes] | None = open(self.path, "wb")  # noqa: SIM115 (closed by close())
        self._trace = self._pb.Trace()
        self._pending = 0
        self._uuids: dict[str, int] = {}
        self._names: dict[str, int] = {}
        self._first = True
        self.packets = 0
        self.bytes = 0
        self._root = self._new_track("", process_name, None, counter=False)

    # ------------------------------------------------------------------ tracks
    def track(self, key: str, name: str, counter: bool = False) -> None:
        """Declare a slice track (or a counter track) ``name``, referred to by ``key`` afterwards."""
        if key not in self._uuids:
            self._new_track(key, name, self._root, counter)

    def _new_track(self, key: str, name: str, parent: int | None, counter: bool) -> int:
        uuid = len(self._uuids) + 1
        self._uuids[key] = uuid
        packet = self._packet()
        descriptor = packet.track_descriptor
        descriptor.uuid = uuid
        descriptor.name = name
        if parent is not None:
            descriptor.parent_uuid = parent
        if counter:
            descriptor.counter.SetInParent()
        return uuid

    # ------------------------------------------------------------------ events
    def slice(self, key: str, start: int, end: int, name: str, count: int = 1) -> None:
        """A slice ``name`` on track ``key`` over cycles [start, end) standing for ``count`` instructions."""
        uuid = self._uuids[key]
        iid = self._intern(name)
        begin = self._event(start, uuid, self._pb.TrackEvent.TYPE_SLICE_BEGIN)
        begin.track_event.name_iid = iid
        if count > 1:
            annotation = begin.track_event.debug_annotations.add()
            annotation.name = "count"
            annotation.int_value = count
        self._event(max(end, start), uuid, self._pb.TrackEvent.TYPE_SLICE_END)

    def counter(self, key: str, cycle: int, value: int) -> None:
        packet = self._event(cycle, self._uuids[key], self._pb.TrackEvent.TYPE_COUNTER)
        packet.track_event.counter_value = value

    def _event(self, cycle: int, uuid: int, kind: int) -> Any:
        packet = self._packet()
        packet.timestamp = cycle
        packet.track_event.type = kind
        packet.track_event.track_uuid = uuid
        return packet

    def _intern(self, name: str) -> int:
        iid = self._names.get(name)
        if iid is None:
            iid = self._names[name] = len(self._names) + 1
            packet = self._packet()
            entry = packet.interned_data.event_names.add()
            entry.iid = iid
            entry.name = name
        return iid

    def _packet(self) -> Any:
        if self._pending >= _CHUNK:
            self.flush()
        packet = self._trace.packet.add()
        packet.trusted_packet_sequence_id = _SEQUENCE
        if self._first:
            packet.sequence_flags = self._pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            self._first = False
        else:
            packet.sequence_flags = self._pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        self._pending += 1
        self.packets += 1
        return packet

    # ------------------------------------------------------------------ file
    def flush(self) -> None:
        """Append the packets built so far to the file."""
        if self._pending and self._file is not None:
            data = self._trace.SerializeToString()
            self._file.write(data)
            self.bytes += len(data)
            self._trace = self._pb.Trace()
            self._pending = 0

    def close(self) -> None:
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None
