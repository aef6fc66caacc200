"""From a code address back to the program's source: function, offset, file and line.

The tables come from the ELF's symbol table and DWARF line program (read by
:class:`tensixsim.metal.dwarf.DebugInfo`, which keeps them in ``~/.cache/tensixsim``), and are built
only when an address is asked about: running a program never touches them. An error from a core names
its source this way (:meth:`tensixsim.tile.Tile.locate`).
"""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import DWARFError, ELFError

from tensixsim.errors import SimError


@dataclass(frozen=True)
class SourceLocation:
    """Where a code address came from. Either half may be missing: ``function`` without DWARF,
    ``file`` / ``line`` for code outside every function symbol."""

    address: int
    function: str | None = None
    offset: int = 0  # from the start of ``function``
    file: str | None = None
    line: int | None = None

    @property
    def source(self) -> str | None:
        """``file:line``, or None."""
        return f"{self.file}:{self.line}" if self.file is not None and self.line else None

    def __str__(self) -> str:
        parts = []
        if self.function is not None:
            parts.append(f"{self.function}+0x{self.offset:x}")
        if self.source is not None:
            parts.append(f"({self.source})" if parts else self.source)
        return " ".join(parts) or f"0x{self.address:08x}"


class SourceMap:
    """The address tables of one ELF, ready for bisection."""

    def __init__(self, table: dict[str, list]) -> None:
        self.files: list[str] = table["files"]
        rows = table["rows"]
        self._row_addresses = [row[0] for row in rows]
        self._rows = rows
        functions = table["functions"]
        self._function_starts = [f[0] for f in functions]
        self._functions = functions

    def locate(self, address: int) -> SourceLocation | None:
        """The function and line holding ``address``, or None when the ELF knows neither."""
        function, offset = None, 0
        index = bisect.bisect_right(self._function_starts, address) - 1
        if index >= 0:
            start, end, name = self._functions[index]
            if address < end:
                function, offset = name, address - start
        file, line = None, None
        index = bisect.bisect_right(self._row_addresses, address) - 1
        if index >= 0:
            _, file_index, row_line = self._rows[index]
            if row_line:
                file, line = self.files[file_index], row_line
        if function is None and file is None:
            return None
        return SourceLocation(address, function, offset, file, line)

    def lines(self) -> Iterable[tuple[int, str, int]]:
        """(address, file, line) of every row that starts a line, in address order."""
        for address, file_index, line in self._rows:
            if line:
                yield address, self.files[file_index], line


@functools.lru_cache(maxsize=32)
def _source_map(path: str, mtime_ns: int, size: int) -> SourceMap:
    from tensixsim.metal.dwarf import DebugInfo

    return SourceMap(DebugInfo(Path(path)).line_table())


def source_map(path: str | Path) -> SourceMap | None:
    """The tables of the ELF at ``path`` (kept in memory per file version), or None when it cannot
    be read any more."""
    try:
        stat = os.stat(path)
        return _source_map(str(path), stat.st_mtime_ns, stat.st_size)
    except (OSError, ELFError, DWARFError, SimError, ValueError, KeyError, IndexError, AssertionError):
        return None  # a vanished or unreadable ELF only costs the source names


def locate(images: Sequence, address: int) -> SourceLocation | None:
    """Where ``address`` came from, in the newest of ``images`` (ElfImage) whose code covers it."""
    for image in reversed(images):
        if not any(start <= address < start + len(data) for start, data in image.text_ranges):
            continue
        found = source_map(image.path)
        return found.locate(address) if found is not None else None
    return None


@functools.lru_cache(maxsize=16)
def _source_lines(path: str, mtime_ns: int) -> tuple[str, ...]:
    return tuple(Path(path).read_text(errors="replace").splitlines())


def source_text(file: str, line: int) -> str | None:
    """Line ``line`` (from 1) of ``file``, or None when the file or the line is not there."""
    try:
        lines = _source_lines(file, os.stat(file).st_mtime_ns)
    except OSError:
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None
