"""Tile control / debug / status registers, built from the architecture's register table.

Each register of ``arch.tile_registers`` is either plain storage (it holds what is written; a
read-only one reads its reset value) or has one of the behaviours below, named in the table:

- ``soft_reset``: SOFT_RESET_0; a write holds or releases cores (the tile does it).
- ``wall_clock_low`` / ``wall_clock_high`` / ``wall_clock_high_latched``: the debug timestamper's
  64-bit cycle counter; reading the low word latches the high word.
- ``reset_pc:<core>``, ``trisc_reset_pc_override``, ``ncrisc_reset_pc_override``: where a released
  core starts.
- ``instrn_buf_status``: INSTRN_BUF_STATUS, from the pipes' input FIFOs.
- ``instrn_buf_ctrl0`` / ``instrn_buf_ctrl1``: debug-bus pushes into the pipes' input FIFOs.
- ``pc_snapshot:<core>``: the core's pc.
- ``cfgreg_rd_cntl`` / ``cfgreg_rddata``: the debug read of backend configuration.
- ``pcbuf_override``: TRISC_PC_BUF_OVERRIDE, the PCBufs' override bits (tensixsim.mmio.pcbufs).
- ``debug_bus_ctrl`` / ``debug_bus_data``: the debug daisychain's cores' pcs (tensixsim.mmio.debug_bus).
- ``risc_debug_cntl0`` / ``_cntl1`` / ``_status0`` / ``_status1``: the cores' debug unit
  (tensixsim.mmio.risc_debug).
- ``perf_ref`` / ``perf_mode`` / ``perf_control`` / ``perf_out_l`` / ``perf_out_h``, each ``:<bank>``,
  and ``perf_all``: the performance counters (tensixsim.mmio.perf_counters).

The windows take 8- and 16-bit accesses (byte enables): tt-metal's kernels, which run on the
hardware, read such registers with ``lhu``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tensixsim.arch import Arch
from tensixsim.arch.common import RegisterFacts
from tensixsim.mmio.debug_bus import signal_core
from tensixsim.mmio.memory import PAGE, Access, MmioRegion, ReadFn, Register, WriteFn
from tensixsim.mmio.perf_counters import PerfCounters, Totals

if TYPE_CHECKING:
    from tensixsim.mmio.risc_debug import RiscDebug
    from tensixsim.riscv.core import Core

_CFGREG_INDEX_MASK = 0x7FF  # CFGREG_RD_CNTL bits used (BackendConfiguration.md, debug registers)

# Called when SOFT_RESET_0 is written: (new value, cycle, writing core or None for the host).
ResetWriter = Callable[[int, int, "Core | None"], None]


@dataclass
class TileServices:
    """What the registers with a behaviour need from the tile."""

    write_soft_reset: ResetWriter
    queue_fill: Callable[[], list[tuple[int, int]]]  # per pipe: (entries, pushes it takes) of its input FIFO
    pc_of: Callable[[str, Access], int]  # a core's pc as another core's access sees it
    config_word: Callable[[int, Access], int]  # word i of the backend configuration (TENSIX_CFG_BASE)
    debug_push: Callable[[int, int, Access], None]  # (pipe, instruction, access): a debug-bus push
    # TRISC_PC_BUF_OVERRIDE: its value, and a store of one at a cycle (None: no PCBufs, plain storage)
    pcbuf_override: tuple[Callable[[], int], Callable[[int, int], None]] | None = None
    risc_debug: RiscDebug | None = None  # the cores' debug unit (None: its registers are storage)
    perf_totals: Totals = lambda _cycle: {}  # the coprocessor's event totals as of a cycle (none: all 0)


@dataclass
class TileControl:
    """The values behind the tile-control registers."""

    arch: Arch
    soft_reset: int
    reset_pc: dict[str, int]  # the programmable reset PCs (TRISCs, NCRISC)
    trisc_override: int = 0
    ncrisc_override: int = 0
    wall_latched_high: int = 0
    cfgreg_index: int = 0  # CFGREG_RD_CNTL: the backend-configuration word CFGREG_RDDATA shows
    debug_bus_ctrl: int = 0  # DBG_BUS_CNTL_REG: the debug-bus slice DBG_RD_DATA shows
    instrn_buf_ctrl: list[int] = field(default_factory=lambda: [0, 0])  # INSTRN_BUF_CTRL0, CTRL1
    storage: dict[int, int] = field(default_factory=dict)  # address -> value of plain-storage registers
    perf: PerfCounters = field(init=False)  # the performance counters' banks (the arch's)

    @classmethod
    def new(cls, arch: Arch) -> TileControl:
        pcs = {c.name: c.default_reset_pc for c in arch.cores if c.reset_pc_register is not None}
        storage = {r.address: r.reset for r in arch.tile_registers if r.behaviour == "storage"}
        return cls(arch, arch.soft_reset_all, pcs, storage=storage)

    def __post_init__(self) -> None:
        self.perf = PerfCounters.new(self.arch.name)

    def reset_pc_of(self, name: str) -> int:
        """Where ``name`` starts when released: its reset-PC register if overridden, else the default."""
        facts = self.arch.core(name)
        if facts.reset_pc_register is None:
            return facts.default_reset_pc
        override = self.trisc_override if facts.pipe is not None else self.ncrisc_override
        enabled = override >> facts.reset_pc_override_bit & 1
        return self.reset_pc[name] if enabled else facts.default_reset_pc

    def regions(self, services: TileServices) -> list[MmioRegion]:
        """One window per page of the register table."""
        pages: dict[int, dict[int, Register]] = {}
        for facts in self.arch.tile_registers:
            read, write = self._handlers(facts, services)
            if write is None and facts.access != "ro":
                raise ValueError(f"register table: {facts.name} ({facts.behaviour}) cannot be written")
            register = Register(
                facts.name,
                read=read if facts.access != "wo" else None,
                write=write if facts.access != "ro" else None,
            )
            page = facts.address - facts.address % PAGE
            registers = pages.setdefault(page, {})
            if facts.address - page in registers:
                raise ValueError(f"two tile registers at 0x{facts.address:08x}")
            registers[facts.address - page] = register
        name = {self.arch.tile_control_base: "tile_control"}
        return [
            MmioRegion(name.get(page, f"tile_control@0x{page:08x}"), page, PAGE, registers, byte_enables=True)
            for page, registers in pages.items()
        ]

    def _handlers(self, facts: RegisterFacts, services: TileServices) -> tuple[ReadFn, WriteFn | None]:
        behaviour, _, argument = facts.behaviour.partition(":")
        address = facts.address
        if behaviour == "storage":
            return (
                lambda _: self.storage[address],
                lambda _, value: self.storage.__setitem__(address, value & 0xFFFFFFFF),
            )
        if behaviour == "soft_reset":
            return (
                lambda _: self.soft_reset,
                lambda access, value: services.write_soft_reset(value, access.cycle, access.core),
            )
        if behaviour == "wall_clock_low":
            return self._wall_low, None
        if behaviour == "wall_clock_high":
            return lambda access: access.cycle >> 32, None
        if behaviour == "wall_clock_high_latched":
            return lambda _: self.wall_latched_high, None
        if behaviour == "reset_pc":
            return (
                lambda _: self.reset_pc[argument],
                lambda _, value: self.reset_pc.__setitem__(argument, value & 0xFFFFFFFF),
            )
        if behaviour in ("trisc_reset_pc_override", "ncrisc_reset_pc_override"):
            attribute = behaviour.split("_")[0] + "_override"
            # One enable bit per core with a programmable reset pc of that kind.
            bits = [
                c.reset_pc_override_bit
                for c in self.arch.cores
                if c.reset_pc_register is not None and (c.pipe is not None) == (attribute == "trisc_override")
            ]
            mask = sum(1 << b for b in bits if b is not None)
            return (
                lambda _: getattr(self, attribute),
                lambda _, value: setattr(self, attribute, value & mask),
            )
        if behaviour == "instrn_buf_status":
            return lambda _: _instrn_buf_status(services.queue_fill()), None
        if behaviour == "instrn_buf_ctrl0":
            return lambda _: self.instrn_buf_ctrl[0], lambda access, value: self._debug_push(
                access, value, services
            )
        if behaviour == "instrn_buf_ctrl1":
            return (
                lambda _: self.instrn_buf_ctrl[1],
                lambda _, value: self.instrn_buf_ctrl.__setitem__(1, value & 0xFFFFFFFF),
            )
        if behaviour == "cfgreg_rd_cntl":
            return lambda _: self.cfgreg_index, lambda _, value: setattr(self, "cfgreg_index", value)
        if behaviour == "cfgreg_rddata":
            # The page says the word is copied "a few cycles" after CFGREG_RD_CNTL is written; here a
            # read shows the word as it is when read (no program can rely on reading it earlier).
            return lambda access: services.config_word(self.cfgreg_index & _CFGREG_INDEX_MASK, access), None
        if behaviour == "pcbuf_override" and services.pcbuf_override is not None:
            value_of, store = services.pcbuf_override
            return lambda _: value_of(), lambda access, value: store(value, access.cycle)
        if behaviour == "pcbuf_override":  # (an architecture without PCBufs: it holds what is written)
            self.storage.setdefault(address, facts.reset)
            return (
                lambda _: self.storage[address],
                lambda _, value: self.storage.__setitem__(address, value & 0xFFFFFFFF),
            )
        if behaviour == "debug_bus_ctrl":
            return lambda _: self.debug_bus_ctrl, lambda _, value: setattr(self, "debug_bus_ctrl", value)
        if behaviour == "debug_bus_data":
            pcs, mask = self.arch.debug_bus_pcs, self.arch.debug_bus_pc_mask
            return lambda access: services.pc_of(signal_core(self.debug_bus_ctrl, pcs), access) & mask, None
        if behaviour.startswith("risc_debug_"):
            return self._risc_debug(behaviour, address, services.risc_debug)
        if behaviour == "pc_snapshot":
            return lambda access: services.pc_of(argument, access), None
        if behaviour.startswith("perf_"):
            return self._perf(behaviour.removeprefix("perf_"), argument, services)
        raise ValueError(f"register table: {facts.name} has unknown behaviour {facts.behaviour!r}")

    def _perf(self, what: str, bank: str, services: TileServices) -> tuple[ReadFn, WriteFn | None]:
        """A performance-counter register (tensixsim.mmio.perf_counters). ``self.perf`` is looked up
        at each access: a reset gives the tile control a new one."""
        totals = services.perf_totals

        def read(access: Access) -> int:
            return self.perf.read(what, bank, access, totals)

        def write(access: Access, value: int) -> None:
            self.perf.write(what, bank, access, value, totals)

        return read, None if what in ("out_l", "out_h") else write

    def _risc_debug(self, behaviour: str, address: int, unit: RiscDebug | None) -> tuple[ReadFn, WriteFn]:
        """RISC_DBG_CNTL_0/1 and RISC_DBG_STATUS_0/1 (tensixsim.mmio.risc_debug)."""
        if unit is None:
            self.storage.setdefault(address, 0)
            return (
                lambda _: self.storage[address],
                lambda _, value: self.storage.__setitem__(address, value & 0xFFFFFFFF),
            )
        which = behaviour.removeprefix("risc_debug_")
        if which == "cntl0":
            return lambda _: unit.control[0], lambda access, value: unit.write_control0(value, access.cycle)
        if which == "cntl1":
            return lambda _: unit.control[1], lambda _, value: unit.write_control1(value)
        index = {"status0": 0, "status1": 1}[which]
        return lambda _: unit.status[index], None

    def _debug_push(self, access: Access, value: int, services: TileServices) -> None:
        """INSTRN_BUF_CTRL0 (PushTensixInstruction.md): while bit i gives the debug bus pipe i's FIFO,
        a change of bit 4 + i from 0 to 1 pushes INSTRN_BUF_CTRL1 into it. Bits 8 and up read zero."""
        old, new = self.instrn_buf_ctrl[0], value & 0xFF
        for pipe in range(self.arch.pipe_count):
            if new >> pipe & 1 and new >> (4 + pipe) & 1 and not old >> (4 + pipe) & 1:
                services.debug_push(pipe, self.instrn_buf_ctrl[1], access)
        self.instrn_buf_ctrl[0] = new

    def _wall_low(self, access: Access) -> int:
        # Reading the low word latches the high word (read back at WALL_CLOCK_H).
        self.wall_latched_high = access.cycle >> 32
        return access.cycle & 0xFFFFFFFF


def _instrn_buf_status(fill: list[tuple[int, int]]) -> int:
    """PushTensixInstruction.md: bit i set while pipe i's FIFO is not full, bit 4 + i while it is empty.

    The page describes the FIFO before each Replay Expander; the tile models one input FIFO per pipe
    (where pushes land), so that is the one reported. "Not full": it takes a push (on Blackhole, while
    it holds 28 words or fewer)."""
    value = 0
    for pipe, (entries, room) in enumerate(fill):
        value |= (room > 0) << pipe
        value |= (entries == 0) << (4 + pipe)
    return value
