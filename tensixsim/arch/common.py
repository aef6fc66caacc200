"""The shape of an architecture description.

Every address, size and clock the emulator uses lives in one :class:`Arch` instance per chip
(``blackhole.py``, ``wormhole.py``); code elsewhere reads them by name and never spells a literal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CORE_NAMES: tuple[str, ...] = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")


@dataclass(frozen=True)
class CoreFacts:
    """Per-core facts: local RAM, reset wiring, the pipe it pushes Tensix instructions into."""

    name: str
    local_ram_size: int
    local_ram_alias: int | None  # where the other cores and the host see this core's local RAM (or nowhere)
    soft_reset_bit: int
    default_reset_pc: int
    reset_pc_register: int | None  # MMIO register holding an overriding reset PC (None: fixed)
    reset_pc_override_bit: int | None  # bit in the override-enable register
    pipe: int | None  # Tensix pipe (thread) fed by this core's inline words; None for BRISC/NCRISC
    # A core-local instruction RAM: (base, size). Only the core's frontend reads it (code runs from
    # it); its loads and stores do not reach it.
    iram: tuple[int, int] | None = None


@dataclass(frozen=True)
class CsrFacts:
    """One CSR the baby cores recognise: its number, name, and what the tile does with it
    (``behaviour``, see tensixsim/arch/blackhole_csrs.py); ``reset``: its value out of reset."""

    address: int
    name: str
    behaviour: str
    reset: int = 0


@dataclass(frozen=True)
class RegisterFacts:
    """One 32-bit register of a tile-control window, as the sources name it.

    ``access``: "rw", "ro" (a store faults) or "wo" (a load faults). ``behaviour``: "storage" (it
    holds what is written, starting at ``reset``; its effect on the hardware is not modelled) or the
    name of the documented behaviour the tile gives it (see tensixsim/mmio/control.py).
    """

    name: str
    address: int
    access: str
    reset: int
    behaviour: str
    source: str
    note: str = ""


@dataclass(frozen=True)
class MailboxFacts:
    """The RISC-V mailboxes: one FIFO from each participant to each (Mailboxes.md)."""

    base: int  # mailbox i's page is base + i * stride (i: index into cores)
    stride: int
    cores: tuple[str, ...]  # participants, in page order
    capacity: int  # values one mailbox holds
    writer_capacity: int  # values all the mailboxes one core writes hold together
    query_bit: int  # a load with this address bit set asks "anything to read?" instead of popping


@dataclass(frozen=True)
class PcBufFacts:
    """The PCBufs: one FIFO from BRISC to each TRISC (PCBufs.md)."""

    base: int  # BRISC reaches PCBuf i anywhere in [base + i * window, base + (i + 1) * window)
    window: int
    readers: tuple[str, ...]  # PCBuf i's reader, which pops it at ``base`` (one word)
    capacity: int  # values one FIFO holds
    override_bits: int  # bits of TRISC_PC_BUF_OVERRIDE per PCBuf: OverrideEn, OverrideBusy, value


@dataclass(frozen=True)
class NocRegisters:
    """One NIU's register layout and how its request fields are decoded (NoC/MemoryMap.md).

    Offsets are from the NIU window's base; request fields (and NOC_CMD_CTRL, NOC_NODE_ID,
    NOC_ENDPOINT_ID) repeat in every request initiator.
    """

    request_fields: tuple[str, ...]  # 32-bit fields from each initiator's start, in offset order
    cmd_ctrl: int  # NOC_CMD_CTRL
    node_id: int  # NOC_NODE_ID
    endpoint_id: int  # NOC_ENDPOINT_ID
    clear_outstanding: int  # NOC_CLEAR_OUTSTANDING_REQ_CNT (window-wide)
    # Where a request's X/Y coordinates sit: "hi" (bits 0.. of *_ADDR_HI; LO and MID form a 64-bit
    # address) or "mid" (bits 4.. of *_ADDR_MID, whose bits 0..3 are address bits 32..35).
    coordinates: str = "hi"
    # Window-wide read-only registers that always read 0 as modelled: (name, offset).
    read_zero: tuple[tuple[str, int], ...] = ()
    # Coordinate translation (Coordinates.md): "tables_and_masks" (Blackhole: 5-bit X/Y tables, the
    # row/column masks and the DRAM tables, the registers keep what software wrote) or "tables"
    # (Wormhole: 4-bit X/Y tables only, the translated coordinates written back into the registers).
    translation: str = "tables_and_masks"
    table_entry_bits: int = 5  # a translation table's entries, packed from bit 0 of each word


@dataclass(frozen=True)
class NocFacts:
    """The tile's two NoC interface units (NIUs) as its cores see them (BlackholeA0/NoC/MemoryMap.md)."""

    niu_bases: tuple[int, ...]  # one register window per NoC
    niu_size: int
    initiator_stride: int  # request initiator i starts at niu_base + i * initiator_stride
    initiators: int
    width: int  # NIUs per NoC row
    height: int  # NIUs per NoC column
    x_first_routing: tuple[bool, ...]  # per NoC: unicast routes move in X before Y
    tensix_endpoint_type: int  # NOC_ENDPOINT_ID bits 8..23 of a Tensix tile
    default_position: tuple[int, int]  # NoC #0 coordinates of a tile built without a position
    # DRAM tiles: NoC #0 coordinates -> the memory group (channel) they expose. Every tile of a group
    # reaches the same memory (BlackholeA0/NoC/README.md, the NoC #0 map in Coordinates.md).
    dram_tiles: dict[tuple[int, int], int] = field(default_factory=dict)
    dram_group_bytes: int = 0
    # The bytes of a group one DRAM controller serves (a GDDR6 channel's); 0: the whole group.
    dram_channel_bytes: int = 0
    # tt-metal's DRAM banks (its soc descriptor's DRAM views), in bank order: (group, the NoC #0
    # coordinates its kernels reach the bank at, the bank's byte offset in the group). Empty: bank i is
    # group i from offset 0, at the group's first tile (Dram.endpoint).
    dram_banks: tuple[tuple[int, tuple[int, int], int], ...] = ()
    # Named configuration registers: name -> offset from the NIU base (32 bits each; a six-word table
    # is listed word by word, NAME_0 .. NAME_5).
    config_registers: dict[str, int] = field(default_factory=dict)
    # The rest of the grid (NoC #0 coordinates): where the Tensix tiles are, and the kind of every
    # other endpoint ("ethernet", "pcie", "arc", "security", "l2cpu"); "router" marks a router with
    # no endpoint behind it. Coordinates of neither list are DRAM tiles (dram_tiles).
    tensix_tiles: tuple[tuple[int, int], ...] = ()
    other_tiles: dict[tuple[int, int], str] = field(default_factory=dict)
    # The NIU register layout (NocRegisters); None: the facts above are known but the registers are
    # not modelled (an access raises Unimplemented).
    registers: NocRegisters | None = None
    # Packets: data bytes per flit and the most data one packet carries (None: tensixsim.timing.NOC's
    # figures, Blackhole's), and the bytes a byte-enabled write covers (one mask bit per byte).
    flit_bytes: int | None = None
    max_packet_bytes: int | None = None
    write_be_bytes: int = 64
    # NOC_AT_LEN_BE opcodes (bits 12..15) of the atomics the NIU performs (Atomics.md: increment,
    # swap by mask, compare and swap, swap by index, and 0xA: Zaamo or swap by index); others raise
    # Unimplemented (parallel addition, 0x9, is not modelled).
    atomic_opcodes: tuple[int, ...] = (0x1, 0x3, 0x4, 0x6, 0x7, 0xA)
    # Whether an inline write may target L1 (a byte-enabled write of NOC_AT_DATA within one 16-byte
    # line); where it may not, it is UndefinedBehavior.
    inline_l1_writes: bool = False
    # tt-metal's page alignment of DRAM buffers (bytes).
    dram_alignment: int = 64
    # Coordinate translation as firmware configures it (Coordinates.md): translated X or Y -> NoC #0
    # raw X or Y. Coordinates below translate_identity_below map to themselves.
    translate_x: dict[int, int] = field(default_factory=dict)
    translate_y: dict[int, int] = field(default_factory=dict)
    translate_identity_below: int = 0


@dataclass(frozen=True)
class Arch:
    """Facts about one chip's Tensix tile."""

    name: str
    clock_hz: int
    l1_size: int
    local_ram_base: int
    cores: tuple[CoreFacts, ...]
    # The ELF attribute prefix that identifies this architecture's RISC-V ISA string.
    isa_string_prefix: str
    has_zba_zbb: bool
    # The ISA extension name Tenstorrent's toolchain gives the Tensix coprocessor in an ELF's arch
    # attribute (TRISC code); it names the architecture, where the base ISA alone may not.
    tensix_isa_extension: str
    # Tile control registers.
    soft_reset_register: int
    soft_reset_all: int
    trisc_reset_pc_override_register: int
    ncrisc_reset_pc_override_register: int
    wall_clock_low: int
    wall_clock_high: int
    wall_clock_high_latched: int  # the high word as it was when the low word was last read
    # Tensix instruction push addresses: BRISC may push into any pipe, a TRISC into its own.
    tensix_push_base: int
    tensix_push_stride: int
    pipe_count: int
    pipe_queue_depth: int
    # The input FIFO takes a push, or the first word of a fused group (the rest of the group follows
    # it in the same cycle), only while it holds at most this many words.
    pipe_queue_accept: int
    mop_config_base: int  # each TRISC's own pipe's nine MOP configuration words
    pcbuf_base: int  # PCBufs / TTSync; a TRISC's semaphore view starts at pcbuf_base + 0x20
    # Custom CSRs.
    csr_cfg0: int
    csr_queue_status: int
    csr_backend_status: int
    # Region sizes used by MMIO windows.
    tile_control_base: int
    tile_control_size: int
    stream_base: int
    stream_stride: int
    stream_count: int
    # The stream registers tt-metal keeps a circular buffer's counters in (tiles received, tiles acked:
    # STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX and STREAM_REMOTE_DEST_BUF_START_REG_INDEX), plain storage
    # in the model (mmio/streams.py).
    stream_tiles_received: int
    stream_tiles_acked: int
    extra: dict[str, int] = field(default_factory=dict)
    noc: NocFacts | None = None
    # Clock-gating controls: no functional effect in the emulator, so they hold what is written.
    clock_gating_registers: tuple[tuple[str, int], ...] = ()
    tdma_base: int | None = None  # the TDMA-RISC register page (mover, packer status, clock gating)
    # TDMA-RISC registers the hardware has and the tile does not model: an access raises Unimplemented
    # naming it (rather than a MemoryFault, which would say the program is wrong).
    tdma_unmodelled: tuple[tuple[str, int], ...] = ()
    # Every named register of the tile-control / debug windows (the 0xFFB12000 page, the PIC and
    # pc-snapshot page); offsets no source names stay unmapped.
    tile_registers: tuple[RegisterFacts, ...] = ()
    mailboxes: MailboxFacts | None = None
    pcbufs: PcBufFacts | None = None
    # The baby cores' ISA beyond RV32IM: the atomic memory operations (Zaamo), and CSRs (Zicsr: the
    # counters and the custom CSRs above). Without them such an instruction is an InvalidInstruction.
    has_zaamo: bool = True
    has_csrs: bool = True
    csrs: tuple[CsrFacts, ...] = ()  # every CSR a core recognises (an unlisted one: InvalidProgram)
    # Whether a TRISC's instruction cache fuses up to four adjacent inline Tensix words into one
    # cycle while cfg0's DisTriscCache is clear (Blackhole's PushTensixInstruction.md; no Wormhole
    # page describes it).
    ttinsn_fusion: bool = False
    # Where the programmable reset PCs live: "tile_control" (the registers CoreFacts.reset_pc_register
    # names, in the tile-control page) or "config" (fields of the Tensix backend configuration, named
    # by reset_pc_config_fields: core -> (PC field, override-enable field, enable bit)).
    reset_pc_source: str = "tile_control"
    reset_pc_config_fields: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    # The debug daisychain's slices that carry each core's pc: (read select, daisy select, signal
    # select) -> core, and the mask of the pc bits in that slice (tensixsim.mmio.debug_bus).
    debug_bus_pcs: dict[tuple[int, int, int], str] = field(default_factory=dict)
    debug_bus_pc_mask: int = 0

    def core(self, name: str) -> CoreFacts:
        for facts in self.cores:
            if facts.name == name:
                return facts
        raise KeyError(f"{self.name} has no core named {name!r}; cores: {', '.join(CORE_NAMES)}")

    def push_address(self, pipe: int) -> int:
        return self.tensix_push_base + pipe * self.tensix_push_stride
