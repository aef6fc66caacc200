"""The Python side of libtensixsim: ctypes callbacks that serve the ``libttsim_*`` calls.

``libttsim_init`` runs :func:`attach` with the address of the library's call table; the table is
filled with callbacks into one :class:`~tensixsim.endpoints.host.ChipHost` (:data:`host`), made
afresh at every ``libttsim_init``. The API has no error returns: a call the chip refuses is logged
(logger ``tensixsim.simlib``: once per call and kind of error, later ones at debug level; :data:`errors`
keeps the first ``KEPT_ERRORS``, :data:`refused` counts them all) and a refused read returns all
ones, as a PCIe read nobody answers does. Nothing else reaches the host process: an unexpected
Python exception is logged the same way.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections import Counter
from collections.abc import Callable

from tensixsim.endpoints.host import ChipHost
from tensixsim.errors import SimError

log = logging.getLogger("tensixsim.simlib")

DMA_RD = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32)
DMA_WR = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32)
VOID = ctypes.CFUNCTYPE(None)
CONFIG_RD = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)
CONFIG_WR = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)
MEM = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32)
TILE = ctypes.CFUNCTYPE(
    None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32
)
CLOCK = ctypes.CFUNCTYPE(None, ctypes.c_uint32)


class Bridge(ctypes.Structure):
    """struct bridge of libtensixsim.c (same order)."""

    _fields_ = [
        ("version", ctypes.c_uint32),
        ("ready", ctypes.c_uint32),
        ("dma_rd", DMA_RD),
        ("dma_wr", DMA_WR),
        ("init", VOID),
        ("exit", VOID),
        ("config_rd32", CONFIG_RD),
        ("config_wr32", CONFIG_WR),
        ("mem_rd", MEM),
        ("mem_wr", MEM),
        ("tile_rd", TILE),
        ("tile_wr", TILE),
        ("clock", CLOCK),
    ]


host: ChipHost | None = None  # the chip the library serves (between libttsim_init and libttsim_exit)
KEPT_ERRORS = 1000  # a tool retrying a bad access forever must not grow the host's memory
errors: list[BaseException] = []  # the first KEPT_ERRORS refused calls' errors, in order
refused: Counter[tuple[str, str]] = Counter()  # (call, error class) -> how many were refused
_table: Bridge | None = None
_callbacks: list = []  # the ctypes callback objects must outlive the table that points at them


def _refused(call: str, error: BaseException) -> None:
    if len(errors) < KEPT_ERRORS:
        errors.append(error)
    kind = (call, type(error).__name__)
    refused[kind] += 1
    level = logging.ERROR if refused[kind] == 1 else logging.DEBUG
    if isinstance(error, SimError):
        log.log(level, "%s refused: %s: %s", call, type(error).__name__, error)
    else:  # a bug in tensixsim: still never the host's problem
        log.log(level, "%s failed: %s: %s", call, type(error).__name__, error, exc_info=error)


def _guard(call: str, action: Callable[[], object], default: object = None) -> object:
    if host is None:
        _refused(call, RuntimeError(f"{call} without libttsim_init"))
        return default
    try:
        return action()
    except Exception as error:
        _refused(call, error)
        return default


def _read_into(call: str, pointer: int, size: int, read: Callable[[], bytes]) -> None:
    data = _guard(call, read)
    if not isinstance(data, bytes) or len(data) != size:
        ctypes.memset(pointer, 0xFF, size)
        return
    ctypes.memmove(pointer, data, size)


def _init() -> None:
    global host
    try:
        host = ChipHost()
    except Exception as error:
        _refused("libttsim_init", error)


def _exit() -> None:
    global host
    host = None


def _config_rd(bdf: int, offset: int) -> int:
    value = _guard("libttsim_pci_config_rd32", lambda: host.config_read(bdf, offset), 0xFFFFFFFF)
    return int(value) & 0xFFFFFFFF


def _config_wr(bdf: int, offset: int, value: int) -> None:
    _guard("libttsim_pci_config_wr32", lambda: host.config_write(bdf, offset, value))


def _mem_rd(paddr: int, pointer: int, size: int) -> None:
    _read_into("libttsim_pci_mem_rd_bytes", pointer, size, lambda: host.pcie.read(paddr, size))


def _mem_wr(paddr: int, pointer: int, size: int) -> None:
    data = ctypes.string_at(pointer, size)
    _guard("libttsim_pci_mem_wr_bytes", lambda: host.pcie.write(paddr, data))


def _tile_rd(x: int, y: int, address: int, pointer: int, size: int) -> None:
    _read_into("libttsim_tile_rd_bytes", pointer, size, lambda: host.read((x, y), address, size))


def _tile_wr(x: int, y: int, address: int, pointer: int, size: int) -> None:
    data = ctypes.string_at(pointer, size)
    _guard("libttsim_tile_wr_bytes", lambda: host.write((x, y), address, data))


def _clock(clocks: int) -> None:
    _guard("libttsim_clock", lambda: host.clock(clocks))


def attach(address: int) -> None:
    """Fill the library's call table at ``address`` (libttsim_init calls this once per process)."""
    global _table
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tensixsim: %(message)s"))
        log.addHandler(handler)
    table = Bridge.from_address(address)
    callbacks = [
        ("init", VOID(_init)),
        ("exit", VOID(_exit)),
        ("config_rd32", CONFIG_RD(_config_rd)),
        ("config_wr32", CONFIG_WR(_config_wr)),
        ("mem_rd", MEM(_mem_rd)),
        ("mem_wr", MEM(_mem_wr)),
        ("tile_rd", TILE(_tile_rd)),
        ("tile_wr", TILE(_tile_wr)),
        ("clock", CLOCK(_clock)),
    ]
    _callbacks[:] = [c for _, c in callbacks]
    for name, callback in callbacks:
        setattr(table, name, callback)
    table.ready = 1
    _table = table
