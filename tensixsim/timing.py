"""Latency and throughput figures, one table per unit.

Figures come from the ISA documentation and are meant to be refined
against measurements; nothing else in the emulator spells a cycle count.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass

# Where the RISC-V figures come from: "Blackhole p100a microbenchmarks" is the calibration list of
# per-operation costs measured on a p100a card (counted loops timed with the wall-clock registers);
# "Memory Ordering" is tt-isa-documentation's BlackholeA0 baby RISC-V page (the retire-order queue,
# the four-entry store queue, what fences and atomics wait for). docs/timing.md has the table of
# measured against emulated figures.
CALIBRATION = "Blackhole p100a microbenchmarks"


@functools.lru_cache(maxsize=1024)
def _window_match(windows: tuple[tuple[str, int, int], ...], region: str) -> tuple[int, int] | None:
    """The (read, write) of the first of ``windows`` whose pattern ``region`` matches (every core of
    every tile asks for each of its regions: remembered)."""
    for window, read, write in windows:
        if fnmatch.fnmatchcase(region, window):
            return read, write
    return None


# RiscvTiming fields the timing walk does not read (tables and switches the Python side applies).
_NOT_WALKED = ("mmio_windows", "wormhole_windows", "l1_ports", "l1_port_sharing", "remote_fabric", "wormhole")


@dataclass(frozen=True)
class RiscvTiming:
    """Baby RISC-V core costs, applied per instruction by the timing walk (riscv/native.c).

    An instruction issues one cycle after its predecessor (taken branches, jumps and ALU operations
    cost nothing more: 1.0 measured), or later when a source register is not ready yet or a memory
    it needs has no room. ``*_latency``: cycles from issue until the result can be used.
    """

    # The silicon figures below are per operation of the measured loops (`beq` / body / `addi` /
    # `j`, the same loop with an empty body subtracted), as tensixsim/sdk/calibration/ runs them.
    # L1 loads: a dependent chain of lw takes 8 cycles a load, and lw then its use 9 whatever sits
    # between them (measured), so the result is ready 8 cycles after issue.
    l1_load_latency: int = 8
    # At most this many L1 reads in flight, each holding its slot until its response: four and
    # eight independent lw (one and two 16-byte lines) cost 1.25 and 1.46-1.63 each (measured).
    l1_read_slots: int = 4
    l1_read_occupancy: int = 8
    # The store queue emits an L1 write that does not cover its whole 16-byte block as a
    # read-modify-write taking the write path this long, one after another; stores coalesce into
    # whole blocks, which take one cycle (BabyRISCV README: "one coalesced store every five
    # cycles").
    l1_store_drain: int = 5
    # An L1 load of bytes an earlier store writes, while that store is not yet performed (within
    # store_done of its issue, queued or on its way), does not hold EX1: the queue drains ahead of
    # it (Memory Ordering) and its read, processed behind the write in L1, answers this much later
    # than l1_load_latency. Measured: L1 sw then lw of the word 3.25 per instruction (the late
    # answer only holds up the retire-order queue), lw then sw of the word 8.0 (the next store
    # waits for the answer: 19 cycles an iteration).
    l1_store_conflict: int = 7
    # A conditional branch the frontend predicted the wrong way: "a four cycle pipeline bubble"
    # (BlackholeA0 BabyRISCV README, EX1). The predictor is not documented; the walk's is a two-bit
    # counter per branch, starting weakly not taken (riscv/native.c predict).
    branch_mispredict: int = 4
    # Cycles a multiply holds the next instruction back: none on Blackhole (a multiply spends one
    # cycle in EX1, then one in EX2; independent mul 1.0 measured).
    mul_hold: int = 0
    # Whether the store queue coalesces L1 stores into 16-byte blocks (Blackhole's README).
    l1_store_coalesce: int = 1
    # The L0 data cache between a core and L1 (BlackholeA0 BabyRISCV README, "L0 Data Cache"), used
    # while cfg0's DisLowCash is clear (out of reset; tt-metal's firmware and the SDK's start-up code
    # set it): four 16-byte lines, a load it answers ready after 2 cycles (the README's latency
    # table: "L1 ... with L0 data cache hit 2"), a fence or an atomic flushing it, a store to L1
    # dropping its line. A hit flushes the whole cache with "approximately a 0.8% chance" (CSRs.md,
    # DisLowCachePeriodicFlush clear): one in 128 here. Which line a miss evicts is not documented:
    # the least recently used. Measured with it on: a chain of lw through one line 2.10 to 2.16 a
    # load, through eight lines 8.0 (every load misses).
    l0_lines: int = 4
    l0_hit_latency: int = 2
    l0_flush_one_in: int = 128
    # What Wormhole's cores do differently, from WormholeB0's BabyRISCV README (no Wormhole figure
    # was measured): "a mispredicted branch causes a two cycle pipeline bubble"; a multiply
    # "occupies the Integer Unit for two cycles, and the next instruction cannot enter the unit
    # until the multiply instruction has finished"; "throughput of sustained stores to L1 is at most
    # one store every five cycles" (no coalescing).
    wormhole: tuple[tuple[str, int], ...] = (
        ("branch_mispredict", 2),
        ("mul_hold", 1),
        ("l1_store_coalesce", 0),
        ("l0_lines", 0),  # no L0 data cache on Wormhole's pages
    )
    # Own local RAM: "local RAM 2" (ISA documentation); sw then lw of the same word costs 1.5 per
    # instruction (measured), so the store becomes visible to the load 2 cycles after its issue
    # (TRISC2: see ``local_store_visible_trisc2``).
    local_load_latency: int = 2
    local_store_visible: int = 2
    local_store_visible_trisc2: int = 3  # TRISC2: sw then lw 2.0 per instruction (measured)
    # Another core's local RAM: "at least eight cycles, the same latency as loading from L1"
    # (BabyRISCV README); two reads in flight, each until its response.
    remote_load_latency: int = 8
    remote_read_slots: int = 2
    remote_read_occupancy: int = 8
    # Every core's loads from another core's local RAM share one path (mmio/local_ram.py), each
    # holding it this long: with the loop's three instructions, one reader takes 2.5 a load (its own
    # slots bound it), two readers 5.0 each, five readers 17.0 each (measured), i.e. 8 and 20 cycles
    # an iteration for two and five loads, whichever core's RAM they read.
    remote_fabric: int = 4
    mul_latency: int = 2  # independent mul 1.0, dependent 1.75 per mul (measured); latency 2 (ISA docs)
    # A divide holds EX1 (the next instruction waits) for two cycles when dividing by zero or one,
    # else between six and 33 by the magnitude of the dividend (BabyRISCV README): one cycle per
    # significant bit of the dividend plus one, at least div_min. Measured: a chain of divu by 3
    # that has reached 0 costs 6.0; 0xFFFFFFFF / 3 33.0; 3 / 1 2.0.
    div_min: int = 6
    div_fast: int = 2
    # An atomic (AMO) waits for the store queue to drain and every earlier response (Memory
    # Ordering), and answers only once its write is done, later than a load ("L1 atomic >= 12" in
    # the public Blackhole timing reference; no loop figure measures one).
    atomic_latency: int = 12
    # The retire-order queue (BabyRISCV README, Retire Unit): an instruction takes an entry as it
    # issues and frees it when it retires, in program order, one a cycle, once its result is in.
    # A register written by several unretired instructions cannot be forwarded from any of them:
    # its readers wait until the older writers retire. With the loop's own instructions this gives
    # the measured lw of one fixed L1 word, 2.6 per load, and the chase and load-to-use figures.
    retire_queue: int = 8
    # A CSR access and a fence hold back the next instruction until they have retired (BabyRISCV
    # README: no instruction enters EX1 before earlier csrrw/csrrs/.../fence instructions retire):
    # csrrs / csrrc of cfg0 and a fence alone each cost 4.0 (measured).
    csr: int = 4
    fence: int = 4
    # A fence also waits until every earlier store has been performed, this many cycles after the
    # store issued, whatever memory it wrote: the calls that end in a fence after a store cost
    # 12.0 (noc_semaphore_set: an L1 store), 31.0 (cb_push_back: a stream-register store last) and
    # 31.5 (cb_pop_front: a local-RAM store last) on silicon, which 9 gives (12, 31, 32); a fence
    # that waited only for the store queue to drain (Memory Ordering) would cost 4 in each.
    store_done: int = 9
    store_queue: int = 4  # entries (Memory Ordering); L1 store 1.0 (measured)
    # MMIO (BabyRISCV README, "Load/Store Unit" and its table of load latencies; Memory Ordering):
    # a register read leaves EX1 like any load, without waiting for its response, and only an
    # instruction that uses its result waits for it. The latency is by region: Tensix GPRs, backend
    # configuration and TDMA-RISC ">= 4" (``mmio_read``, also every region without a window below);
    # mailboxes, PC buffers, TTSync and semaphores ">= 3"; tile control / debug, PIC, both NoCs' and
    # the overlay's registers ">= 7". Measured: a loop of independent wall-clock or NoC-status reads
    # costs 2.0 a read, which 7 gives here through the retire-order queue (the loop's counter, written
    # again before its older writes retire, cannot be forwarded); the profiler's interval, whose
    # first sample is stored by a store that uses the clock read's result (it waits for the
    # response), costs 7 more than its instructions alone (docs/timing.md, "Coprocessor figures").
    mmio_read: int = 4
    mmio_write: int = 1
    # Windows with their own figures: (region name or pattern, read latency, write cost).
    # "streams": the 64 stream (NoC overlay) register pages (">= 7"); cb_wait_front (22.0 measured)
    # and cb_reserve_back (23.0) on ready buffers each read one of them amid 11 and 12 other
    # instructions (local-RAM loads, a closing fence). "pcbuf": a TRISC's PC-buffer page, whose done
    # check answers once its pipe has executed what was pushed: a store to it, the load and a use of
    # the result cost 5.98 with nothing pushed (measured), so a read answers after 4 cycles (">= 3").
    # Writes: no figure, one cycle each.
    mmio_windows: tuple[tuple[str, int, int], ...] = (
        ("tile_control", 7, 1),
        ("tile_control@*", 7, 1),  # the PIC's page
        ("noc0", 7, 1),
        ("noc1", 7, 1),
        ("streams", 7, 1),
        ("mailbox[0-9]", 3, 1),
        ("pcbuf", 4, 1),
    )
    # Wormhole's BabyRISCV README puts TDMA-RISC with the tile-control registers (">= 7").
    wormhole_windows: tuple[tuple[str, int, int], ...] = (("tdma", 7, 1),)
    tensix_push: int = 1  # an instruction word or a store to a push address (measured 1.0)
    release_delay: int = 1  # from the SOFT_RESET write to the released core's first instruction
    # L1 access ports (tt-isa-documentation WormholeB0 L1.md, "Port assignments"): BRISC, NCRISC and
    # TRISC0 are muxed onto one access port, TRISC1 and TRISC2 onto another, each mux allocating
    # round-robin; a port takes one request a cycle, and an atomic read-modify-write blocks it for five
    # cycles. The Blackhole pages have no diagram: the same wiring is assumed, which the silicon
    # figures bear out (five cores at once, amoadd.w: 14.5 for BRISC / NCRISC / TRISC0, 10.5 for
    # TRISC1 / TRISC2, i.e. 3 x 5 and 2 x 5 cycles). A plain store takes the port one cycle: L1 sw
    # 1.0 back to back (measured; the Wormhole page's five-cycle narrow write does not show).
    # Under contention round-robin gives each of n busy requesters one grant every n port cycles; the
    # walk charges that share to every core (see docs/timing.md), n being the cores of its port that
    # are out of reset.
    # Off by default: the share is charged from the port-mates out of reset, whether or not they use
    # L1 (a quantity that does not depend on the scheduling quantum; docs/timing.md). That is exact
    # for the five-cores-at-once figures but makes a core copying through L1 up to n times slower
    # while its port-mates only poll registers or wait, the usual case in kernels (a reader core
    # beside a TRISC0 that polls stream registers: 58% more cycles for the matmul demo), so it is
    # not applied until a model of the port-mates' actual requests can be quantum-independent.
    l1_port_sharing: bool = False
    l1_ports: tuple[tuple[str, ...], ...] = (("brisc", "ncrisc", "trisc0"), ("trisc1", "trisc2"))
    l1_port_cycles: int = 1
    l1_port_atomic: int = 5

    def window(self, region: str, arch: str = "blackhole") -> tuple[int, int] | None:
        """(read latency, write cost) of the MMIO region named ``region`` when a window of
        ``mmio_windows`` (or of ``wormhole_windows`` on Wormhole) covers it, else None."""
        windows = (self.wormhole_windows if arch == "wormhole" else ()) + self.mmio_windows
        return _window_match(windows, region)

    def window_costs(self, name: str, arch: str = "blackhole") -> tuple[int, int]:
        """(read latency, write cost) of the MMIO window ``name`` (the defaults when none covers it)."""
        return self.window(name, arch) or (self.mmio_read, self.mmio_write)

    def port_mates(self, core: str) -> tuple[str, ...]:
        """The cores sharing ``core``'s L1 access port (``core`` included)."""
        for port in self.l1_ports:
            if core in port:
                return port
        return (core,)

    def walk_figures(self, core: str, arch: str = "blackhole") -> dict[str, int]:
        """The figures the timing walk of ``core`` of an ``arch`` tile reads (riscv/native.py
        TIMING_PARAMS)."""
        figures = {name: getattr(self, name) for name in self.__dataclass_fields__ if name not in _NOT_WALKED}
        if core == "trisc2":
            figures["local_store_visible"] = self.local_store_visible_trisc2
        if arch == "wormhole":
            figures.update(self.wormhole)
        return figures


@dataclass(frozen=True)
class RecorderTiming:
    """The stand-in consumer behind each pipe's input queue."""

    drain_interval: int = 1  # cycles between two instructions it takes from the queue


@dataclass(frozen=True)
class FrontendTiming:
    """The pipe's input FIFO, MOP and replay expanders."""

    expand: int = 1  # each expander emits at most one instruction per cycle
    mop_exit_penalty: int = 1  # a MOP followed by a non-MOP instruction costs one more cycle
    # An instruction pushed at cycle c reaches the wait gate, and can issue, from c + push_to_issue:
    # the input FIFO, the MOP expander and the replay expander take a cycle each (MOPExpander.md,
    # REPLAY.md: each takes and emits one instruction a cycle). Measured: TRISC1 pushing 8 NOPs
    # (4 SEMINITs) then syncing through the PC buffer's done check costs 2.0 (3.0) a push, the sync
    # alone 6.0 (docs/timing.md).
    push_to_issue: int = 2


@dataclass(frozen=True)
class SyncTiming:
    """Sync unit: mutexes, semaphores, STALLWAIT/SEMWAIT/STREAMWAIT."""

    sync: int = 1


@dataclass(frozen=True)
class ThconTiming:
    """Scalar unit (ThCon): GPR arithmetic, loads/stores, atomics."""

    setdmareg: int = 1
    dmanop: int = 1
    # ADDDMAREG, SUBDMAREG, MULDMAREG, BITWOPDMAREG, SHIFTDMAREG, CMPDMAREG: three cycles with an
    # immediate operand or with both GPRs in one aligned group of four, four otherwise
    # (tt-isa-documentation ScalarUnit and each instruction's Performance section; MULDMAREG is no
    # slower than the others).
    arithmetic: int = 3
    arithmetic_split: int = 4
    load_store: int = 3  # LOADIND, STOREIND, LOADREG, STOREREG (at least)
    atomic: int = 3  # ATINCGET, ATSWAP: at least 3 (sustained: one per 12 cycles at best)
    atomic_blocking: int = 15  # ATCAS, ATINCGETPTR: at least 15 per attempt
    reg2flop: int = 2
    flushdma: int = 2  # at least; longer while the selected conditions hold


@dataclass(frozen=True)
class ConfigTiming:
    """Configuration unit."""

    setc16: int = 1
    wrcfg: int = 2
    rdcfg: int = 2
    rmwcib: int = 1
    cfgshiftmask: int = 1
    streamwrcfg: int = 2


@dataclass(frozen=True)
class MatrixTiming:
    """Matrix unit (FPU): MatrixUnit.md's latency / throughput table and Dst.md's scheduling rule."""

    issue: int = 1  # one instruction per cycle (one per fidelity phase for the multiplying ones)
    # After an instruction writes Dst, the aligned 8x16 block it wrote cannot be read for this many
    # cycles: a matrix-unit or packer instruction that reads it stalls (Dst.md, "Instruction scheduling").
    dst_write_hidden: int = 4
    # SHIFTXB: throughput one per two cycles; the matrix unit accepts nothing on the cycle after it
    # (MatrixUnit.md, SHIFTXB.md "Instruction scheduling").
    shiftxb: int = 2


@dataclass(frozen=True)
class UnpackTiming:
    """Unpackers (UNPACR_Regular.md "Performance"; UNPACR_NOP_Nop.md)."""

    address_cycles: int = 2  # computing the initial input address of uncompressed data
    # At x1 speed; x2 / x4 (Throttle_mode 1 / 2) double / quadruple it. 16: Wormhole's page (no
    # Blackhole page gives one); Blackhole's is UNPACK's below.
    l1_bytes_per_cycle: int = 16
    nop: int = 1  # UNPACR_NOP and the non-moving UNPACR modes occupy the unpacker one cycle
    # Both unpackers fetching from L1 at once: ``shared_speeds[want0][want1]`` is (gets0, gets1), each
    # speed 0 / 1 / 2 for x1 / x2 / x4 (the page's table; rows: what unpacker 0 wants).
    shared_speeds: tuple[tuple[tuple[int, int], ...], ...] = (
        ((0, 0), (0, 1), (0, 2)),
        ((1, 0), (0, 0), (0, 1)),
        ((2, 0), (1, 0), (1, 1)),
    )


@dataclass(frozen=True)
class SfpuTiming:
    """Vector unit (SFPU): VectorUnit.md's instruction table and Dst.md's scheduling rule."""

    issue: int = 1  # every instruction modelled so far has an IPC of 1
    # The MAD sub-unit (SFPMAD and the instructions scheduled "as per SFPMAD") needs this many cycles
    # for its result; the hardware stalls a next vector-unit instruction that reads it (SFPMAD.md).
    mad_latency: int = 2
    # SFPSWAP, and SFPSHFT2's SUBVEC_SHFLROR1_AND_COPY4 / SUBVEC_SHFLROR1 / SUBVEC_SHFLSHR1 modes: IPC
    # at most 1, latency 2; on the next cycle the unit accepts only SFPNOP and stalls anything else
    # (SFPSWAP.md, SFPSHFT2.md "Instruction scheduling"). Modelled as occupying the unit two cycles,
    # an SFPNOP issuing on the second (sfpu/lanes.py nop_from; the Blackhole probes: SFPSWAP or a
    # shuffle each followed by an SFPNOP, 2.125 cycles a pair with the loop's two instructions).
    swap: int = 2
    lane_shuffle: int = 2
    # SFPLOAD.md / SFPLOADMACRO.md: at least three instructions between a matrix-unit write of Dst and
    # a vector-unit load of the same rows; modelled as a stall until this many cycles have passed.
    matrix_write_gap: int = 3
    # An SFPSTORE's write hides the aligned 8x16 blocks of Dst it wrote from matrix-unit and packer
    # readers for this many cycles (Dst.md, "Instruction scheduling": any instruction writing Dst).
    dst_write_hidden: int = 4


@dataclass(frozen=True)
class PackTiming:
    """The packer (PACR, PACR_SETREG): WormholeB0 L1.md's packer bandwidth, Packers/README.md's
    pipeline.

    The packer is a pipeline (Dst read, format conversions, L1 writes) and the thread issuing a PACR
    waits only until the packer has accepted the work (Packers/README.md). The packer takes a PACR
    once it has written the previous one's L1 bytes, so a run of PACRs costs the larger of the address
    cycles and the L1 write cycles each; the packer counts as busy (STALLWAIT C3, FLUSHDMA, the done
    check) until ``drain_cycles`` after its last write slot.
    """

    issue_cycles: int = 1  # address generation
    l1_bytes_per_cycle: int = 16  # one 128-bit write per cycle (Wormhole; Blackhole's is PACK's below)
    # One 128-bit L1 accumulate every five cycles (atomic read-modify-write) or two (non-atomic);
    # the atomic figure is the one charged (which form the packer uses is not documented).
    l1_accumulate_cycles: int = 5
    l1_accumulate_nonatomic_cycles: int = 2
    setreg: int = 1
    # From the packer's last L1 write slot until it has nothing in flight. No page gives it; calibrated
    # on Blackhole p100a: 1024 values packed from FP32 Dst cost 104 (BF16) and 168 (FP32) cycles a
    # pass of 64 PACRs (docs/timing.md, "Coprocessor figures"), 64 and 128 of them the L1 writes at
    # 32 bytes a cycle; the rest is the pass's own instructions and this drain, 19 and 20 cycles.
    drain_cycles: int = 20


@dataclass(frozen=True)
class MoverTiming:
    """The mover (XMOV): WormholeB0 Mover.md "Performance", measured under ideal conditions (no L1
    access-port contention; with contention the page measures a copy at a third of this speed and an
    L1 memset at one write per three cycles, which is not modelled). No Blackhole page gives figures."""

    issue: int = 1  # XMOV executes in a single cycle; the transfer goes on in the background
    copy_units: int = 8  # memcpy: eight 16-byte reads and eight 16-byte writes ...
    copy_cycles: int = 11  # ... every eleven cycles
    set_cycles_per_unit: int = 1  # memset (to L1 or not): one 16-byte write per cycle


@dataclass(frozen=True)
class NocTiming:
    """NoC requests (BlackholeA0/NoC/README.md "Performance"; the endpoint figures are measured or guessed).

    A packet is one header flit and ``ceil(bytes / flit_bytes)`` data flits; a link moves one flit per
    cycle. A packet's header reaches the far NIU after ``niu_to_router + hops * router_hop +
    router_to_niu`` cycles and its last flit one cycle per further flit later. Responses travel back
    on the same NoC. No page gives L1 or GDDR access times as seen from the NoC. ``l1_read`` and
    ``l1_write`` are calibrated against the silicon figures (docs/timing.md); ``dram_access`` is a guess.
    """

    niu_to_router: int = 5  # "~5 cycles"
    router_hop: int = 9  # router to neighbouring router
    router_to_niu: int = 5  # "~5 cycles"
    flit_bytes: int = 64  # 512-bit flits, one per cycle per link
    max_packet_bytes: int = 16384  # 256 data flits
    # The NIU's own L1 operations, as the NoC sees them. No page gives their latency; Counters.md orders
    # the counters after them: a write is acknowledged, and a read response or an atomic response is
    # counted at the requester, only once its write into L1 has completed; a read is answered once its
    # data have been read. ``l1_write``: a write into L1 until it has completed; ``l1_read``: a read of
    # L1 until its data are ready. An atomic is a read-modify-write of L1, the operation L1.md says
    # narrow writes are too (both block the bank five cycles), so it takes ``l1_write`` as well; an
    # atomic's response lands in the requester's L1 as a narrow write (``l1_write`` again) before
    # NIU_MST_ATOMIC_RESP_RECEIVED counts it. Calibrated on Blackhole p100a, where a program sees
    # completion only through its poll of an NIU counter, a register read answering after 7 cycles
    # (RiscvTiming.mmio_windows): one poll every 8 to 9 cycles, so the measured figures move in steps of
    # that size (the reads + flush: 79 / 71 / 71 / 79 for 4 / 16 / 64 / 256 B). Any ``l1_write``
    # from 8 to 12 gives the 4 B write + barrier (69) 73, the reads + flush 75 / 75 / 75 / 83 and
    # the peer figures within 2%; 10 with ``l1_read`` = 3 gives the atomic increment with its
    # response (99) 100 (docs/timing.md).
    l1_read: int = 3
    l1_write: int = 10
    # A request initiator takes a request in over this many cycles after NOC_CMD_CTRL is written,
    # which reads 1 until then. A 4 B read or write issued back to back after polling NOC_CMD_CTRL
    # costs 25.0 / 23.0 (measured), 6 more than its instructions alone: the poll's read latency, the
    # branch waiting for its answer. So the next request's poll, 6 instructions after the write, must
    # find the initiator free: at most 6 (no page gives the figure; the largest the figures allow).
    command_busy: int = 6
    dram_access: int = 300  # guess: a GDDR6 access through a DRAM tile
    # One DRAM bank's controller serves the accesses that reach it (from any of its tiles, on either
    # NoC) one after another, first come first served, each for its bytes at the bank's rate. No page
    # gives the rate. Measured on Blackhole p100a (the DRAM bench, 2 KiB pages of one bank streamed by
    # 2 to 16 worker tiles at once): about 58.5 bytes a cycle in all for reads and 55 for writes in
    # most runs (some give 42 to 48, and 32 tiles or more about 45), whichever of the bank's three
    # tiles the requests go to, where one core alone issues at 26.9 (bank table) or 51.4 (one tile
    # addressed directly). So a 2 KiB page holds the controller 35
    # cycles read and 37 written, calibrated on the four-tile rows (docs/timing.md).
    dram_page_bytes: int = 2048
    dram_read_page: int = 35
    dram_write_page: int = 37
    # Wormhole B0 (DRAMTile/README.md, "Performance"): a controller per GDDR6 channel (two per group
    # of three DRAM tiles), measured reading 22.2 to 22.3 GB/s and writing 21.8 to 22.0 GB/s with 1,
    # 12 or 48 tiles at once (static virtual channels): at 1 GHz, 22.3 and 21.9 bytes a cycle, a 2 KiB
    # page 92 and 94 cycles.
    wormhole_dram_page: tuple[int, int] = (92, 94)

    def dram_hold(self, length: int, write: bool, arch: str = "blackhole") -> int:
        """Cycles an access of ``length`` bytes holds its DRAM controller on an ``arch`` chip (at least
        one)."""
        read_page, write_page = (
            self.wormhole_dram_page if arch == "wormhole" else (self.dram_read_page, self.dram_write_page)
        )
        return max(1, -(-length * (write_page if write else read_page) // self.dram_page_bytes))

    @property
    def first_landing(self) -> int:
        """The fewest cycles from a core writing NOC_CMD_CTRL to the request writing into any L1: its
        header crosses from the NIU into the router and back out before anything lands."""
        return self.niu_to_router + self.router_to_niu

    @property
    def lookahead(self) -> int:
        """The fewest cycles from a tile acting to another tile seeing it: one hop between neighbours,
        from the NIU through a router into the next NIU (every request, response and acknowledgement
        between two tiles takes at least this long). Tiles of a chip run at most this far apart."""
        return self.niu_to_router + self.router_hop + self.router_to_niu


RISCV = RiscvTiming()
RECORDER = RecorderTiming()
FRONTEND = FrontendTiming()
SYNC = SyncTiming()
THCON = ThconTiming()
CONFIG = ConfigTiming()
MATRIX = MatrixTiming()
# Blackhole's unpackers and packers move more bytes a cycle to and from L1 than Wormhole's pages give
# (no Blackhole page gives a figure; Blackhole doubled the NoC's bytes per cycle, NoC README). The
# measurements: a TRISC0 unpacking a row of a 2x2 matmul subblock (4 KiB on unpacker 0, x4, both
# unpackers fetching) takes 37.5 cycles in all, which Wormhole's 64 bytes a cycle at x4 (halved while
# both fetch) would take 128 for; a later FP8 profile gives about 4 cycles a KiB. Both are met by
# four times Wormhole's rate (x4: 256 bytes a cycle). Packing 1024 BF16 / FP32 values costs 1.625 /
# 2.625 cycles a 32 / 64-byte row: 32 bytes a cycle more, twice Wormhole's (docs/timing.md,
# "Coprocessor figures").
UNPACK = UnpackTiming(l1_bytes_per_cycle=64)
PACK = PackTiming(l1_bytes_per_cycle=32)
UNPACK_WORMHOLE = UnpackTiming()
PACK_WORMHOLE = PackTiming()
MOVER = MoverTiming()
SFPU = SfpuTiming()
NOC = NocTiming()

# Loosely-timed scheduling: a core may run this many cycles ahead of the others between two
# synchronisation points. Results do not depend on it; cycle counts may move by up to about one
# quantum per cross-core handshake done through L1 polling (see docs/deviations.md).
DEFAULT_QUANTUM = 2000
