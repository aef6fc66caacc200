"""Wormhole's tile-control / debug registers, as data.

Names and offsets: tt-metal's ``tt_metal/hw/inc/internal/tt-1xx/wormhole/tensix.h``
(``RISCV_DEBUG_REG_*``), cross-checked with tt-isa-documentation's WormholeB0 pages
(TileControlDebugStatus.md, DebugTimestamper.md, BabyRISCV/DebugInterface.md, SoftReset.md). Where
a register is at the same offset and has the same documented behaviour as Blackhole's, its entry is
Blackhole's under Wormhole's name. Registers Wormhole does not have (the reset-PC registers, which
are backend-configuration fields on Wormhole; the PIC page, which no Wormhole source details) stay
unmapped, so an access to one is a MemoryFault naming it.
"""

from __future__ import annotations

from dataclasses import replace

from tensixsim.arch.blackhole_registers import DEBUG_BASE
from tensixsim.arch.blackhole_registers import TILE_REGISTERS as _BLACKHOLE
from tensixsim.arch.common import RegisterFacts

TENSIX_H = "tt-metal wormhole tensix.h"
TIMESTAMPER_DOC = "tt-isa-documentation WormholeB0/TensixTile/DebugTimestamper.md"
DEBUG_INTERFACE_DOC = "tt-isa-documentation WormholeB0/TensixTile/BabyRISCV/DebugInterface.md"

# Offset -> Wormhole's name, for every RISCV_DEBUG_REG_* of Wormhole's tensix.h, plus the two the
# pages name that the header leaves out (WALL_CLOCK_1 at 0x1F4, the debug interface's 0x80..0x8C).
WORMHOLE_NAMES: dict[int, str] = {
    **{4 * i: f"PERF_CNT_INSTRN_THREAD{i}" for i in range(3)},
    **{0xC + 4 * i: f"PERF_CNT_TDMA_UNPACK{i}" for i in range(3)},
    **{0x18 + 4 * i: f"PERF_CNT_FPU{i}" for i in range(3)},
    **{0x30 + 4 * i: f"PERF_CNT_L1_{i}" for i in range(3)},
    0x3C: "PERF_CNT_ALL",
    **{0x48 + 4 * i: f"DBG_L1_MEM_REG{i}" for i in range(3)},
    0x54: "DBG_BUS_CNTL_REG",
    0x58: "CFGREG_RD_CNTL",
    0x5C: "DBG_RD_DATA",
    0x60: "DBG_ARRAY_RD_EN",
    0x64: "DBG_ARRAY_RD_CMD",
    0x68: "DBG_FEATURE_DISABLE",
    0x6C: "DBG_ARRAY_RD_DATA",
    0x70: "CG_CTRL_HYST0",
    0x74: "CG_CTRL_HYST1",
    0x78: "CFGREG_RDDATA",
    0x7C: "CG_CTRL_HYST2",
    0x80: "RISC_DBG_CNTL_0",
    0x84: "RISC_DBG_CNTL_1",
    0x88: "RISC_DBG_STATUS_0",
    0x8C: "RISC_DBG_STATUS_1",
    0x90: "TRISC_PC_BUF_OVERRIDE",
    0xA0: "INSTRN_BUF_CTRL0",
    0xA4: "INSTRN_BUF_CTRL1",
    0xA8: "INSTRN_BUF_STATUS",
    0xB4: "FPU_STICKY_BITS",
    **{0xF0 + 4 * i: f"PERF_CNT_TDMA_PACK{i}" for i in range(3)},
    **{
        0x100 + 8 * i + 4 * j: f"PERF_CNT_OUT_{half}_{what}"
        for i, what in enumerate(("INSTRN_THREAD", "TDMA_UNPACK", "TDMA_PACK", "DBG_L1", "FPU"))
        for j, half in enumerate("LH")
    },
    0x1B0: "SOFT_RESET_0",
    0x1C0: "BREAKPOINT_CTRL",
    0x1C4: "BREAKPOINT_STATUS",
    0x1C8: "BREAKPOINT_DATA",
    0x1E0: "WDT",
    0x1E4: "WDT_CNTL",
    0x1E8: "WDT_STATUS",
    0x1F0: "WALL_CLOCK_L",
    0x1F4: "WALL_CLOCK_1",
    0x1F8: "WALL_CLOCK_H",
    0x1FC: "TIMESTAMP",
    0x204: "TIMESTAMP_STATUS",
    0x218: "PERF_CNT_MUX_CTRL",
}


def _wormhole(facts: RegisterFacts) -> RegisterFacts:
    name = WORMHOLE_NAMES[facts.address - DEBUG_BASE]
    source = facts.source.replace("tt-metal blackhole tensix.h", TENSIX_H)
    source = source.replace("BlackholeA0", "WormholeB0")
    return replace(facts, name=name, source=source)


TILE_REGISTERS: tuple[RegisterFacts, ...] = tuple(
    _wormhole(r)
    for r in _BLACKHOLE
    if DEBUG_BASE <= r.address < DEBUG_BASE + 0x1000 and r.address - DEBUG_BASE in WORMHOLE_NAMES
)
