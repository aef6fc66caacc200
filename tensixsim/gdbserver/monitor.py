"""``monitor`` commands (GDB's qRcmd): the Tensix state a RISC-V debugger cannot see by itself.

Each command reads the tile's state arrays and returns text; none changes anything.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensixsim.tensix.formats import FORMATS, to_float32
from tensixsim.tensix.regs import DST_ROWS, SRC_ROWS
from tensixsim.tile import Tile

HELP = """\
monitor commands (numbers in decimal or 0x hex):
  cores                         state, pc and cycle of the five cores
  dst ROW [COUNT] [FORMAT]      Dst rows (16-bit view; FORMAT hex, dst16_bf16, dst16_fp16,
                                dst16_int8, or dst32_fp32 / dst32_int32 for the 32-bit view)
  srca BANK ROW [COUNT] [FORMAT], srcb ...   Src rows (FORMAT hex, src_bf16, src_fp16, src_tf32...)
  lreg [N] [FORMAT]             vector-unit LRegs (all 17, or LReg N), 32 lanes (FORMAT hex, fp32)
  cfg NAME [STATE]              a configuration field by name (a prefix lists the matching names)
  sem                           the eight semaphores: value / max
  queues                        each pipe's input queue and what its wait gate holds
  stream ID                     a stream's registers (tiles acked, received, scratch)"""


class MonitorError(ValueError):
    """A monitor command that cannot be answered (unknown command, bad argument)."""


def _number(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise MonitorError(f"not a number: {text!r}") from None


def _rows(bits: np.ndarray, first: int, fmt: str) -> str:
    """One line per row: hex words, or values in ``fmt`` (a tensixsim.tensix.formats layout)."""
    lines = []
    for i, row in enumerate(bits):
        if fmt == "hex":
            cells = " ".join(f"{int(v):0{2 * row.itemsize}x}" for v in row)
        else:
            if fmt not in FORMATS:
                raise MonitorError(f"unknown format {fmt!r}; known: hex, {', '.join(FORMATS)}")
            cells = " ".join(f"{float(v):.6g}" for v in to_float32(row, fmt))
        lines.append(f"{first + i:4d}: {cells}")
    return "\n".join(lines)


def _dst(tile: Tile, args: list[str]) -> str:
    row = _number(args[0]) if args else 0
    count = _number(args[1]) if len(args) > 1 else 1
    fmt = args[2] if len(args) > 2 else "hex"
    wide = fmt.startswith("dst32")
    limit = DST_ROWS // 2 if wide else DST_ROWS
    if not (row >= 0 and count > 0 and row + count <= limit):
        raise MonitorError(f"Dst rows {row}..{row + count - 1} outside 0..{limit - 1}")
    regs = tile.coprocessor.regs
    rows = np.arange(row, row + count)
    bits = regs.read32(rows) if wide else regs.read16(rows)
    return _rows(bits, row, fmt)


def _src(file: int) -> Callable[[Tile, list[str]], str]:
    def show(tile: Tile, args: list[str]) -> str:
        if not args:
            raise MonitorError("give BANK ROW [COUNT] [FORMAT]")
        bank = _number(args[0])
        row = _number(args[1]) if len(args) > 1 else 0
        count = _number(args[2]) if len(args) > 2 else 1
        fmt = args[3] if len(args) > 3 else "hex"
        if bank not in (0, 1) or not (row >= 0 and count > 0 and row + count <= SRC_ROWS):
            raise MonitorError(f"bank 0 or 1, rows within 0..{SRC_ROWS - 1}")
        return _rows(tile.coprocessor.regs.src(file)[bank, row : row + count], row, fmt)

    return show


def _lreg(tile: Tile, args: list[str]) -> str:
    lreg = tile.coprocessor.sfpu.lreg
    fmt = "hex"
    if args and not args[-1][0].isdigit():
        fmt = args.pop()
    if args:
        n = _number(args[0])
        if not 0 <= n < len(lreg):
            raise MonitorError(f"no LReg {n}; 0..{len(lreg) - 1}")
        return _rows(lreg[n : n + 1], n, fmt)
    return _rows(lreg, 0, fmt)


def _cfg(tile: Tile, args: list[str]) -> str:
    if not args:
        raise MonitorError("give a field NAME (or a prefix) [STATE]")
    config = tile.coprocessor.config
    fields = config.layout.config_fields
    name = args[0]
    state = _number(args[1]) if len(args) > 1 else 0
    if state not in (0, 1):
        raise MonitorError("STATE is 0 or 1")
    if name in fields:
        value = config.read_field(name, state)
        return f"{name}[state {state}] = {value} (0x{value:x})"
    matches = sorted(f for f in fields if f.startswith(name.upper()) or f.startswith(name))
    if not matches:
        raise MonitorError(f"no configuration field {name!r}")
    return "\n".join(f"{f} = 0x{config.read_field(f, state):x}" for f in matches[:200])


def _sem(tile: Tile, args: list[str]) -> str:
    sync = tile.coprocessor.sync
    return "\n".join(
        f"sem {i}: {int(v)} / {int(m)}"
        for i, (v, m) in enumerate(zip(sync.sem_value, sync.sem_max, strict=True))
    )


def _queues(tile: Tile, args: list[str]) -> str:
    lines = []
    pipes = getattr(tile.backend, "pipes", [])
    for queue in tile.queues:
        line = f"pipe {queue.pipe}: {len(queue.entries)}/{queue.depth} queued"
        if queue.pipe < len(pipes):
            pipe = pipes[queue.pipe]
            line += f", {pipe.issued} issued"
            if pipe.blocked:
                line += f", blocked since cycle {pipe.blocked_at} at {pipe.blocked}"
        lines.append(line)
    return "\n".join(lines)


def _stream(tile: Tile, args: list[str]) -> str:
    if not args:
        raise MonitorError("give a stream ID")
    stream = _number(args[0])
    if not 0 <= stream < tile.arch.stream_count:
        raise MonitorError(f"no stream {stream}; 0..{tile.arch.stream_count - 1}")
    from tensixsim.mmio.streams import SCRATCH

    streams = tile.streams
    names = {streams.tiles_acked: "tiles acked", streams.tiles_received: "tiles received", SCRATCH: "scratch"}
    return "\n".join(
        f"stream {stream} reg {i} (0x{tile.streams.address(stream, i):08x}, {what}): "
        f"{tile.streams.read(stream, i)}"
        for i, what in names.items()
    )


def _cores(tile: Tile, args: list[str]) -> str:
    return "\n".join(
        f"{c.name:7} {c.state.value:9} pc=0x{c.pc:08x} cycle={c.time} instret={c.instructions}"
        + (f" ({c.wait_reason})" if c.wait_reason and c.state.value == "waiting" else "")
        for c in tile.cores
    )


COMMANDS: dict[str, Callable[[Tile, list[str]], str]] = {
    "cores": _cores,
    "dst": _dst,
    "srca": _src(0),
    "srcb": _src(1),
    "lreg": _lreg,
    "cfg": _cfg,
    "sem": _sem,
    "queues": _queues,
    "stream": _stream,
    "help": lambda tile, args: HELP,
}


def monitor(tile: Tile, line: str) -> str:
    """The answer to ``monitor line``; MonitorError for a command that cannot be answered."""
    words = line.split()
    if not words:
        return HELP
    command = COMMANDS.get(words[0])
    if command is None:
        raise MonitorError(f"unknown monitor command {words[0]!r}; try 'monitor help'")
    return command(tile, words[1:])
