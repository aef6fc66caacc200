"""Blackhole's ARC tile as the NoC reaches it: boot status, telemetry, the message queues.

No ARC firmware runs. The endpoint holds what the firmware publishes once it has booted, as
tt-umd reads it (facts and sources: :mod:`tensixsim.arch.blackhole_endpoints`):

- **Reset unit.** ``SCRATCH[0..7]`` (0x80030060; ``SCRATCH[0]`` is the post code) and
  ``SCRATCH_RAM[0..63]`` (0x80030400) are storage. At power-on ``SCRATCH_RAM[2]`` (boot status)
  reads 5, "message queue ready, hardware initialised", the value tt-umd waits for;
  ``SCRATCH_RAM[11]``, ``[12]`` and ``[13]`` hold the addresses of the message-queue descriptor, the
  telemetry values and the telemetry table; every other word reads 0 until written.
- **CSM** (512 KiB at 0x10000000): storage, holding the message queues and the telemetry table where
  this emulator puts them (``CSM_*``).
- **Telemetry**: the entries :data:`TELEMETRY_SOURCES` lists, values from the architecture facts
  (AICLK = the chip clock, 1350 MHz; the enabled Tensix columns, DRAM groups and L2CPUs of this
  chip) or nominal ones, those of a p150 board with serial 0: its PCIe instance at (2, 0) is the
  endpoint the host reaches and the one at (11, 0) unused, and 12 of its 14 Ethernet channels are
  enabled (channels 5 and 8 off; the chip still serves all 14 Ethernet tiles). Tags the table does
  not list are absent (tt-umd's ``is_entry_available`` is false): no firmware versions, sensors or
  heartbeat, since no firmware runs.
- **Messages.** Writing ``ARC_MISC_CNTL`` (0x80030100) with ``irq0_trig`` set (tt-umd writes
  0x10000) runs every queued request of every queue on the cycle the write lands, as the firmware's
  interrupt handler does, and the register reads back with ``irq0_trig`` clear. Answered as the
  firmware answers them: ``TEST`` (argument + 1, last serial + 1), ``SET_LAST_SERIAL``,
  ``REPORT_SCRATCH_ONLY``, ``NOP``, ``AICLK_GO_BUSY`` / ``AICLK_GO_LONG_IDLE`` (the AICLK telemetry
  becomes 1350 / 800 MHz; the chip's own clock does not change: cycles are cycles); a code with no
  firmware handler gets status 0xFF. Any other message the firmware implements raises
  :class:`~tensixsim.errors.Unimplemented` naming it, before any queue changes.
- ``NOC_NODE_ID`` of both NIUs (0x80050044, 0x80058044), read-only.

Other ARC addresses: the cores' ICCM and the APB crossbar (0x80000000 ..) raise ``Unimplemented``;
anything else is a :class:`~tensixsim.errors.MemoryFault`. Writing core-control fields of
``ARC_MISC_CNTL`` (run, halt, resets, clock disables) raises ``Unimplemented``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tensixsim.arch import Arch
from tensixsim.arch import blackhole_endpoints as facts
from tensixsim.endpoints.device import MappedEndpoint, WordRegister, node_id, storage
from tensixsim.errors import InvalidProgram, Unimplemented

XY = tuple[int, int]

# Where each telemetry value comes from (docs and reports name these).
TELEMETRY_SOURCES = {
    facts.TAG_BOARD_ID_HIGH: "nominal board id (p150 UPI 0x40, serial 0), high word",
    facts.TAG_BOARD_ID_LOW: "nominal board id, low word",
    facts.TAG_AICLK: "the chip clock in MHz (Arch.clock_hz); 800 after AICLK_GO_LONG_IDLE",
    facts.TAG_ENABLED_TENSIX_COL: "one bit per Tensix column not harvested (tt-umd's column order)",
    facts.TAG_ENABLED_ETH: "one bit per Ethernet channel but 5 and 8 (nominal: 12 of 14, as every product)",
    facts.TAG_ENABLED_GDDR: "one bit per DRAM group (all present)",
    facts.TAG_ENABLED_L2CPU: "one bit per L2CPU tile (all present)",
    facts.TAG_PCIE_USAGE: "PCIe instance 0, (2, 0), an endpoint; instance 1, (11, 0), unused: a p150's",
    facts.TAG_ASIC_LOCATION: "0, as the firmware reports on every board but a p300",
    facts.TAG_AICLK_LIMIT_MAX: "the chip clock in MHz",
}


def _mask(count: int) -> int:
    return (1 << count) - 1


class Arc(MappedEndpoint):
    """The ARC tile of a Blackhole chip (NoC #0 ``xy``); ``harvested``: fused-off Tensix columns."""

    def __init__(self, arch: Arch, xy: XY = facts.ARC_NOC0, harvested: Iterable[int] = ()) -> None:
        noc = arch.noc
        self.clock_mhz = arch.clock_hz // 1_000_000
        self.csm = np.zeros(facts.ARC_CSM[1], np.uint8)
        self.scratch = np.zeros(facts.ARC_RESET_SCRATCH_COUNT, np.uint32)
        self.scratch_ram = np.zeros(facts.ARC_SCRATCH_RAM_COUNT, np.uint32)
        self.misc_cntl = np.zeros(1, np.uint32)
        registers: dict[int, WordRegister] = {}
        for i in range(facts.ARC_RESET_SCRATCH_COUNT):
            registers[facts.ARC_RESET_SCRATCH + 4 * i] = storage(f"ARC_RESET.SCRATCH[{i}]", self.scratch, i)
        for i in range(facts.ARC_SCRATCH_RAM_COUNT):
            address = facts.ARC_SCRATCH_RAM + 4 * i
            registers[address] = storage(f"ARC_RESET.SCRATCH_RAM[{i}]", self.scratch_ram, i)
        registers[facts.ARC_MISC_CNTL] = WordRegister(
            "ARC_RESET.ARC_MISC_CNTL", lambda _c: int(self.misc_cntl[0]), self._misc_write, self._misc_check
        )
        for n, window in enumerate(facts.ARC_NIU_WINDOWS):
            registers[window + 0x44] = WordRegister(
                f"NOC_NODE_ID (NoC #{n})", lambda _c, n=n: node_id(noc, xy, n)
            )
        super().__init__(
            "arc",
            xy,
            memories=[("CSM", facts.ARC_CSM[0], self.csm)],
            registers=registers,
            unmodelled=[
                ("the ARC cores' ICCM", *facts.ARC_ICCM),
                *(
                    (f"NIU register (NoC #{n})", w, facts.ARC_NIU_WINDOW_SIZE)
                    for n, w in enumerate(facts.ARC_NIU_WINDOWS)
                ),
                ("the ARC's APB register", *facts.ARC_XBAR),
            ],
        )
        columns = set(facts.TENSIX_COLUMN_ORDER) - set(harvested)
        kinds = list(noc.other_tiles.values())
        self.telemetry = {
            facts.TAG_BOARD_ID_HIGH: facts.NOMINAL_BOARD_ID >> 32,
            facts.TAG_BOARD_ID_LOW: facts.NOMINAL_BOARD_ID & 0xFFFFFFFF,
            facts.TAG_AICLK: self.clock_mhz,
            facts.TAG_ENABLED_TENSIX_COL: sum(
                1 << i for i, x in enumerate(facts.TENSIX_COLUMN_ORDER) if x in columns
            ),
            facts.TAG_ENABLED_ETH: _mask(kinds.count("ethernet"))
            & ~sum(1 << c for c in facts.NOMINAL_ETH_HARVESTED),
            facts.TAG_ENABLED_GDDR: _mask(len(set(noc.dram_tiles.values()))),
            facts.TAG_ENABLED_L2CPU: _mask(kinds.count("l2cpu")),
            facts.TAG_PCIE_USAGE: facts.PCIE_USAGE_ENDPOINT,
            facts.TAG_ASIC_LOCATION: 0,
            facts.TAG_AICLK_LIMIT_MAX: self.clock_mhz,
        }
        self._publish()

    # ------------------------------------------------------------------ what the firmware publishes
    def _word(self, address: int, value: int | None = None) -> int:
        """The CSM word at ARC ``address`` (written first when ``value`` is given)."""
        offset = address - facts.ARC_CSM[0]
        view = self.csm[offset : offset + 4].view(np.uint32)
        if value is not None:
            view[0] = value & 0xFFFFFFFF
        return int(view[0])

    @property
    def telemetry_values(self) -> int:
        """ARC address of the telemetry values (what SCRATCH_RAM[12] holds)."""
        return facts.CSM_TELEMETRY_TABLE + 8 + 4 * len(self.telemetry)

    def _publish(self) -> None:
        """Power-on state: boot done, the queue descriptor and the telemetry table in CSM."""
        ram = self.scratch_ram
        ram[facts.SCRATCH_BOOT_STATUS0] = facts.BOOT_STATUS_DONE
        ram[facts.SCRATCH_MSG_QUEUE_INFO] = facts.CSM_MSG_QUEUE_INFO
        ram[facts.SCRATCH_TELEMETRY_TABLE] = facts.CSM_TELEMETRY_TABLE
        ram[facts.SCRATCH_TELEMETRY_DATA] = self.telemetry_values
        self._word(facts.CSM_MSG_QUEUE_INFO, facts.CSM_MSG_QUEUES)
        self._word(facts.CSM_MSG_QUEUE_INFO + 4, facts.MSG_QUEUE_ENTRIES | facts.MSG_QUEUES << 8)
        table = facts.CSM_TELEMETRY_TABLE
        self._word(table, 0)  # version: tt-umd does not read it
        self._word(table + 4, len(self.telemetry))
        for index, (tag, value) in enumerate(self.telemetry.items()):
            self._word(table + 8 + 4 * index, tag | index << 16)
            self._word(self.telemetry_values + 4 * index, value)

    def set_telemetry(self, tag: int, value: int) -> None:
        """Change a published telemetry value (the firmware's periodic update, here on demand)."""
        index = list(self.telemetry).index(tag)
        self.telemetry[tag] = value
        self._word(self.telemetry_values + 4 * index, value)

    # ------------------------------------------------------------------ ARC_MISC_CNTL and messages
    def _misc_check(self, value: int) -> None:
        changed = (value ^ int(self.misc_cntl[0])) & ~facts.MISC_CNTL_IRQ0_TRIG
        names = [name for name, bits in facts.MISC_CNTL_CORE_CONTROL if changed & bits]
        if names:
            raise Unimplemented(
                f"ARC_MISC_CNTL {', '.join(names)} of {self.where}: the ARC cores are not modelled",
                value=value,
            )
        if value & facts.MISC_CNTL_IRQ0_TRIG:
            for queue in range(facts.MSG_QUEUES):
                for request in self._pending(queue):
                    self._refuse_unmodelled(request[0] & 0xFF, queue)

    def _misc_write(self, value: int, _cycle: int) -> None:
        # The firmware's interrupt handler clears irq0_trig, then runs every queue.
        self.misc_cntl[0] = value & ~facts.MISC_CNTL_IRQ0_TRIG
        if value & facts.MISC_CNTL_IRQ0_TRIG:
            for queue in range(facts.MSG_QUEUES):
                self._run_queue(queue)

    def _queue(self, queue: int) -> int:
        return facts.CSM_MSG_QUEUES + queue * facts.MSG_QUEUE_BYTES

    def _header(self, queue: int, name: str, value: int | None = None) -> int:
        return self._word(self._queue(queue) + 4 * facts.MSG_HEADER[name], value)

    def _entry(self, queue: int, response: bool, pointer: int) -> int:
        slot = pointer % facts.MSG_QUEUE_ENTRIES + (facts.MSG_QUEUE_ENTRIES if response else 0)
        return self._queue(queue) + 4 * facts.MSG_WORDS * (1 + slot)

    def _pending(self, queue: int) -> list[list[int]]:
        """The requests the firmware would run now: while there are requests and response slots."""
        wrap = 2 * facts.MSG_QUEUE_ENTRIES
        names = ("request_wptr", "request_rptr", "response_wptr", "response_rptr")
        pointers = {name: self._header(queue, name) for name in names}
        bad = {name: p for name, p in pointers.items() if p >= wrap}
        if bad:
            raise InvalidProgram(
                f"ARC message queue {queue} of {self.where}: pointers must be below {wrap}, not {bad}",
                value=max(bad.values()),
            )
        requests = (pointers["request_wptr"] - pointers["request_rptr"]) % wrap
        free = facts.MSG_QUEUE_ENTRIES - (pointers["response_wptr"] - pointers["response_rptr"]) % wrap
        rptr = pointers["request_rptr"]
        return [
            [self._word(self._entry(queue, False, rptr + k) + 4 * w) for w in range(facts.MSG_WORDS)]
            for k in range(min(requests, free))
        ]

    def _refuse_unmodelled(self, code: int, queue: int) -> None:
        modelled = (
            facts.MSG_TEST,
            facts.MSG_SET_LAST_SERIAL,
            facts.MSG_REPORT_SCRATCH_ONLY,
            facts.MSG_AICLK_GO_BUSY,
            facts.MSG_AICLK_GO_LONG_IDLE,
            0x11,  # NOP
        )
        if code in facts.ARC_MESSAGES and code not in modelled:
            raise Unimplemented(
                f"ARC message 0x{code:02x} ({facts.ARC_MESSAGES[code]}) in queue {queue} of {self.where} "
                "is not modelled",
                value=code,
            )

    def _run_queue(self, queue: int) -> None:
        wrap = 2 * facts.MSG_QUEUE_ENTRIES
        for request in self._pending(queue):
            rptr, wptr = self._header(queue, "request_rptr"), self._header(queue, "response_wptr")
            response = self._answer(queue, request)
            base = self._entry(queue, True, wptr)
            for w, value in enumerate(response):
                self._word(base + 4 * w, value)
            self._header(queue, "request_rptr", (rptr + 1) % wrap)
            self._header(queue, "response_wptr", (wptr + 1) % wrap)
            if request[0] & 0xFF != facts.MSG_SET_LAST_SERIAL:
                self._header(queue, "last_serial", self._header(queue, "last_serial") + 1)

    def _answer(self, queue: int, request: list[int]) -> list[int]:
        """The firmware's response to ``request`` (msgqueue.c process_queued_message)."""
        code = request[0] & 0xFF
        response = [0] * facts.MSG_WORDS
        if code == facts.MSG_TEST:
            response[1] = (request[1] + 1) & 0xFFFFFFFF
            response[2] = (self._header(queue, "last_serial") + 1) & 0xFFFFFFFF
        elif code == facts.MSG_SET_LAST_SERIAL:
            self._header(queue, "last_serial", request[1])
        elif code == facts.MSG_REPORT_SCRATCH_ONLY:
            response[0] = facts.MSG_STATUS_SCRATCH_ONLY
        elif code == facts.MSG_AICLK_GO_BUSY:
            self.set_telemetry(facts.TAG_AICLK, self.clock_mhz)
        elif code == facts.MSG_AICLK_GO_LONG_IDLE:
            self.set_telemetry(facts.TAG_AICLK, facts.AICLK_IDLE_MHZ)
        elif code not in facts.ARC_MESSAGES:
            response[0] = facts.MSG_STATUS_UNRECOGNISED
        return response  # (NOP: status 0, nothing else)
