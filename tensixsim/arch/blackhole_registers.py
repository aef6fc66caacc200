"""Blackhole's tile-control / debug registers and RISC-V mailboxes, as data.

Names and addresses: tt-metal's ``tt_metal/hw/inc/blackhole/tensix.h`` (``RISCV_DEBUG_REG_*``,
``RISC_PIC_*``, ``TENSIX_MAILBOX*_BASE``), cross-checked with tt-isa-documentation's BlackholeA0
memory map (BabyRISCV/README.md) and the pages that describe a register's bits. A register whose
effect no page describes is ``storage``: it holds what is written, or, when read-only, reads its
reset value (zero unless a source gives one). Offsets no source names are left unmapped, so that an
access to one is still a MemoryFault naming it.
"""

from __future__ import annotations

from tensixsim.arch.common import MailboxFacts, PcBufFacts, RegisterFacts
from tensixsim.arch.perf_counters import BANKS as PERF_BANKS
from tensixsim.arch.perf_counters import PERF_CNT_ALL

TENSIX_H = "tt-metal blackhole tensix.h"
_DOCS = "tt-isa-documentation BlackholeA0/TensixTile/"
PUSH_DOC = _DOCS + "BabyRISCV/PushTensixInstruction.md"
MEMORY_MAP_DOC = _DOCS + "BabyRISCV/README.md"
SOFT_RESET_DOC = _DOCS + "SoftReset.md"
TIMESTAMPER_DOC = _DOCS + "DebugTimestamper.md"
BACKEND_CONFIG_DOC = _DOCS + "TensixCoprocessor/BackendConfiguration.md (debug registers)"
MAILBOX_DOC = _DOCS + "BabyRISCV/Mailboxes.md (shared with Wormhole)"
PCBUF_DOC = "tt-isa-documentation WormholeB0/TensixTile/BabyRISCV/PCBufs.md, TTSync.md"

RISC_DEBUG_SOURCE = "the debug protocol tt-exalens drives (baby_risc_debug.py): tensixsim.mmio.risc_debug"

DEBUG_BASE = 0xFFB12000  # RISCV_DEBUG_REGS_START_ADDR
PIC_BASE = 0xFFB13000  # RISC_PIC_BASE


def _storage(
    name: str, offset: int, access: str = "rw", note: str = "", base: int = DEBUG_BASE
) -> RegisterFacts:
    return RegisterFacts(name, base + offset, access, 0, "storage", TENSIX_H, note)


def _modelled(
    name: str, offset: int, access: str, behaviour: str, source: str, reset: int = 0, note: str = ""
) -> RegisterFacts:
    return RegisterFacts(name, DEBUG_BASE + offset, access, reset, behaviour, f"{TENSIX_H}; {source}", note)


_PERF_DOC = "tt-llk docs/performance_counters/performance_counters.md (tensixsim.arch.perf_counters)"


def _perf(name: str, offset: int, what: str, bank: str = "", access: str = "rw") -> RegisterFacts:
    """A performance-counter register (tensixsim.mmio.perf_counters): ``what`` of ``bank``."""
    return _modelled(name, offset, access, f"perf_{what}:{bank}", _PERF_DOC)


def _perf_bank(bank: str, prefix: str, out_name: str) -> tuple[RegisterFacts, ...]:
    """A bank's reference period, mode and start / stop registers (``PERF_CNT_<prefix>0..2``), and
    its two outputs (``PERF_CNT_OUT_L_<out_name>``, ``_H_``)."""
    facts = next(b for b in PERF_BANKS if b.name == bank)
    return (
        *(
            _perf(f"PERF_CNT_{prefix}{i}", facts.control + 4 * i, what, bank)
            for i, what in enumerate(("ref", "mode", "control"))
        ),
        _perf(f"PERF_CNT_OUT_L_{out_name}", facts.out, "out_l", bank, "ro"),
        _perf(f"PERF_CNT_OUT_H_{out_name}", facts.out + 4, "out_h", bank, "ro"),
    )


_DEBUG_BUS = "debug daisychain (not modelled)"

_DEBUG_PAGE: tuple[RegisterFacts, ...] = (
    *_perf_bank("INSTRN_THREAD", "INSTRN_THREAD", "INSTRN_THREAD"),
    *_perf_bank("TDMA_UNPACK", "TDMA_UNPACK", "TDMA_UNPACK"),
    *_perf_bank("FPU", "FPU", "FPU"),
    *_perf_bank("L1", "L1_", "DBG_L1"),
    _perf("PERF_CNT_ALL", PERF_CNT_ALL, "all"),
    *(_storage(f"DBG_L1_MEM_REG{i}", 0x48 + 4 * i, note=_DEBUG_BUS) for i in range(3)),
    _modelled(
        "DBG_BUS_CTRL",
        0x54,
        "rw",
        "debug_bus_ctrl",
        "tensixsim.mmio.debug_bus",
        note="DBG_BUS_CNTL_REG in the ISA documentation: selects the debug-bus slice DBG_RD_DATA reads",
    ),
    _modelled(
        "TENSIX_CREG_READ",
        0x58,
        "rw",
        "cfgreg_rd_cntl",
        BACKEND_CONFIG_DOC,
        note="CFGREG_RD_CNTL in the ISA documentation and tt-exalens: which Config word to read",
    ),
    _modelled(
        "DBG_RD_DATA",
        0x5C,
        "ro",
        "debug_bus_data",
        "tensixsim.mmio.debug_bus",
        note="also THREAD1_CREG_READ; the cores' pcs only (other signals: Unimplemented)",
    ),
    _storage("DBG_ARRAY_RD_EN", 0x60, note=_DEBUG_BUS),
    _storage("DBG_ARRAY_RD_CMD", 0x64, note=_DEBUG_BUS),
    _storage("DBG_FEATURE_DISABLE", 0x68, note="which features the bits disable is not documented"),
    _storage("DBG_ARRAY_RD_DATA", 0x6C, "ro", _DEBUG_BUS + ": reads 0"),
    _storage("CG_CTRL_HYST0", 0x70, note="clock gating: no functional effect"),
    _storage("CG_CTRL_HYST1", 0x74, note="clock gating: no functional effect"),
    _modelled(
        "TENSIX_CREG_RDDATA",
        0x78,
        "ro",
        "cfgreg_rddata",
        BACKEND_CONFIG_DOC,
        note="also THREAD0_CREG_RDDATA; CFGREG_RDDATA in the ISA documentation and tt-exalens: the "
        "word at TENSIX_CFG_BASE + 4 * (CFGREG_RD_CNTL & 0x7ff)",
    ),
    _storage("CG_CTRL_HYST2", 0x7C, note="also THREAD1_CREG_RDDATA; clock gating: no functional effect"),
    _modelled("RISC_DBG_CNTL_0", 0x80, "rw", "risc_debug_cntl0", RISC_DEBUG_SOURCE),
    _modelled("RISC_DBG_CNTL_1", 0x84, "rw", "risc_debug_cntl1", RISC_DEBUG_SOURCE),
    _modelled("RISC_DBG_STATUS_0", 0x88, "ro", "risc_debug_status0", RISC_DEBUG_SOURCE),
    _modelled("RISC_DBG_STATUS_1", 0x8C, "ro", "risc_debug_status1", RISC_DEBUG_SOURCE),
    _modelled(
        "TRISC_PC_BUF_OVERRIDE",
        0x90,
        "rw",
        "pcbuf_override",
        PCBUF_DOC,
        note="per PCBuf (10 bits each): OverrideEn, OverrideBusy, an 8-bit OverrideValue",
    ),
    _storage("DBG_INVALID_INSTRN", 0x94),
    _modelled(
        "INSTRN_BUF_CTRL0",
        0xA0,
        "rw",
        "instrn_buf_ctrl0",
        PUSH_DOC,
        note="bit i: the debug bus controls pipe i's FIFO; bit 4+i rising: push INSTRN_BUF_CTRL1 into it",
    ),
    _modelled(
        "INSTRN_BUF_CTRL1", 0xA4, "rw", "instrn_buf_ctrl1", PUSH_DOC, note="the word a debug push pushes"
    ),
    _modelled(
        "INSTRN_BUF_STATUS",
        0xA8,
        "ro",
        "instrn_buf_status",
        PUSH_DOC,
        note="bit i: pipe i's input FIFO not full; bit 4+i: it is empty",
    ),
    _storage("STOCH_RND_MASK0", 0xAC),
    _storage("STOCH_RND_MASK1", 0xB0),
    _storage("FPU_STICKY_BITS", 0xB4),
    _storage("ETH_RISC_PREFECTH_CTRL", 0xB8),
    _storage("ETH_RISC_PREFECTH_PC", 0xBC),
    *_perf_bank("TDMA_PACK", "TDMA_PACK", "TDMA_PACK"),
    _modelled(
        "SOFT_RESET_0",
        0x1B0,
        "rw",
        "soft_reset",
        SOFT_RESET_DOC,
        reset=0x47800,
        note="bits 11-14 and 18 hold BRISC, TRISC0-2 and NCRISC in reset; the other units' bits hold",
    ),
    _storage("BREAKPOINT_CTRL", 0x1C0, note="RISC-V debug interface (not modelled)"),
    _storage("BREAKPOINT_STATUS", 0x1C4, "ro", "RISC-V debug interface (not modelled): reads 0"),
    _storage("BREAKPOINT_DATA", 0x1C8, note="RISC-V debug interface (not modelled)"),
    _storage("ECC_CTRL", 0x1D0, note="no ECC errors are modelled"),
    _storage("ECC_STATUS", 0x1D4, "ro", "no ECC errors are modelled: reads 0"),
    _storage("WATCHDOG_TIMER", 0x1E0, note="the watchdog is not modelled"),
    _storage("WDT_CNTL", 0x1E4, note="the watchdog is not modelled"),
    _storage("WDT_STATUS", 0x1E8, "ro", "the watchdog is not modelled: reads 0"),
    _modelled("WALL_CLOCK_L", 0x1F0, "ro", "wall_clock_low", TIMESTAMPER_DOC, note="also WALL_CLOCK_0"),
    _modelled("WALL_CLOCK_1", 0x1F4, "ro", "wall_clock_high", TIMESTAMPER_DOC),
    _modelled(
        "WALL_CLOCK_H",
        0x1F8,
        "ro",
        "wall_clock_high_latched",
        TIMESTAMPER_DOC,
        note="also WALL_CLOCK_1_AT: the high word as it was when WALL_CLOCK_L was last read",
    ),
    _storage("TIMESTAMP_DUMP_CMD", 0x1FC, note="the timestamper's L1 dumps are not modelled"),
    _storage("TIMESTAMP_DUMP_CNTL", 0x200, note="the timestamper's L1 dumps are not modelled"),
    _storage("TIMESTAMP_DUMP_STATUS", 0x204, "ro", "the timestamper's L1 dumps are not modelled: reads 0"),
    *(
        _storage(f"TIMESTAMP_DUMP_BUF{i}_{end}_ADDR", 0x208 + 8 * i + 4 * j, note="timestamper dump buffer")
        for i in range(2)
        for j, end in enumerate(("START", "END"))
    ),
    _storage("PERF_CNT_MUX_CTRL", 0x218, note="selects the L1 bank's counters, none of which is modelled"),
    _storage("DBG_L1_READBACK_OFFSET", 0x21C, note=_DEBUG_BUS),
    _storage("LFSR_HIT_MASK", 0x220),
    _storage("DISABLE_RESET", 0x224),
    *(
        _modelled(f"TRISC{i}_RESET_PC", 0x228 + 4 * i, "rw", f"reset_pc:trisc{i}", SOFT_RESET_DOC)
        for i in range(3)
    ),
    _modelled(
        "TRISC_RESET_PC_OVERRIDE",
        0x234,
        "rw",
        "trisc_reset_pc_override",
        SOFT_RESET_DOC,
        note="bit i: TRISCi starts at TRISCi_RESET_PC",
    ),
    _modelled("NCRISC_RESET_PC", 0x238, "rw", "reset_pc:ncrisc", SOFT_RESET_DOC),
    _modelled(
        "NCRISC_RESET_PC_OVERRIDE",
        0x23C,
        "rw",
        "ncrisc_reset_pc_override",
        SOFT_RESET_DOC,
        note="bit 0: NCRISC starts at NCRISC_RESET_PC",
    ),
    _storage("DEST_CG_CTRL", 0x240, note="clock gating: no functional effect"),
    _storage("CG_CTRL_EN", 0x244, note="clock gating: no functional effect"),
    _storage("CG_KICK", 0x248, note="clock gating: no functional effect"),
)

_PIC = "interrupt controller: nothing in the tile raises an interrupt"
# RISC_PIC_*: word offsets 0-5 named singly, then 32 SW_INT_REGS, 4 HW_INTS, and INT_PCS up to the
# end of the PIC's range in the memory map (0xFFB13137).
_PIC_PAGE: tuple[RegisterFacts, ...] = (
    *(
        _storage(f"PIC_{name}", 4 * i, note=_PIC, base=PIC_BASE)
        for i, name in enumerate(
            (
                "BRISC_SW_INT_EN",
                "BRISC_HW_INT_EN",
                "BRISC_INT_NO",
                "NCRISC_SW_INT_EN",
                "NCRISC_HW_INT_EN",
                "NCRISC_INT_NO",
            )
        )
    ),
    *(_storage(f"PIC_SW_INT_REGS_{i}", 0x18 + 4 * i, note=_PIC, base=PIC_BASE) for i in range(32)),
    *(_storage(f"PIC_HW_INTS_{i}", 0x98 + 4 * i, note=_PIC, base=PIC_BASE) for i in range(4)),
    *(_storage(f"PIC_INT_PCS_{i}", 0xA8 + 4 * i, note=_PIC, base=PIC_BASE) for i in range(36)),
    *(
        RegisterFacts(
            f"{core.upper()}_PC_SNAPSHOT",
            PIC_BASE + 0x138 + 4 * i,
            "ro",
            0,
            f"pc_snapshot:{core}",
            MEMORY_MAP_DOC + " (RISCV pc snapshot)",
            "the reading core: the load's own pc; another core: where it has got to",
        )
        for i, core in enumerate(("brisc", "ncrisc", "trisc0", "trisc1", "trisc2"))
    ),
)

TILE_REGISTERS: tuple[RegisterFacts, ...] = (*_DEBUG_PAGE, *_PIC_PAGE)

# TENSIX_MAILBOX0..3_BASE; capacities and the query bit from the Mailboxes page.
MAILBOXES = MailboxFacts(
    base=0xFFEC0000,
    stride=0x1000,
    cores=("brisc", "trisc0", "trisc1", "trisc2"),
    capacity=4,
    writer_capacity=4,
    query_bit=4,
)

# BRISC -> TRISC0 / TRISC1 / TRISC2 FIFOs (PCBufs.md; Blackhole's memory map has the same windows:
# tensix.h PC_BUF_BASE, PC1_BUF_BASE, PC2_BUF_BASE).
PCBUFS = PcBufFacts(
    base=0xFFE80000,
    window=0x10000,
    readers=("trisc0", "trisc1", "trisc2"),
    capacity=16,
    override_bits=10,
)
