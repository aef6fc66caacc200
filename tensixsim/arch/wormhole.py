"""Wormhole B0 tile facts.

Sources: tt-isa-documentation WormholeB0 (TensixTile/BabyRISCV/README.md: clock, ISA, memory map,
local RAMs; BabyRISCV/InstructionRAM.md; SoftReset.md: reset PCs; NoC/Coordinates.md and
NoC/MemoryMap.md: the grid, NOC_NODE_ID, coordinate translation; DRAMTile/README.md), tt-metal's
``tt-1xx/wormhole`` headers as shipped in the ttnn wheel (dev_mem_map.h, tensix.h, cfg_defines.h)
and tt-umd's ``wormhole_implementation.hpp`` (the NoC #0 positions of every tile and DRAM port).
Everything not listed in the replace() below is the same on both chips (the same pages and headers
give the same figure for both).
"""

from __future__ import annotations

from dataclasses import replace

from tensixsim.arch.blackhole import BLACKHOLE
from tensixsim.arch.blackhole_registers import MAILBOXES, PCBUFS
from tensixsim.arch.common import CoreFacts, NocFacts, NocRegisters
from tensixsim.arch.wormhole_registers import TILE_REGISTERS

# BabyRISCV/README.md "Local data RAM": 4 KiB for RISCV B and NC, 2 KiB for T0..T2 (dev_mem_map.h
# agrees). No page or header gives another core's view of it: Wormhole has no local-RAM aliases.
_LOCAL_RAM = {"brisc": 4096, "ncrisc": 4096, "trisc0": 2048, "trisc1": 2048, "trisc2": 2048}

# InstructionRAM.md / dev_mem_map.h: RISCV NC's 16 KiB instruction RAM at MEM_NCRISC_IRAM_BASE.
NCRISC_IRAM = (0xFFC00000, 16 * 1024)

# SoftReset.md: the TRISC and NCRISC reset PCs are Config fields (TRISC_RESET_PC_SEC<i>_PC under the
# enable bits of TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en, NCRISC_RESET_PC_PC under
# NCRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en). cfg_defines.h puts them in words 158..163, past
# GLOBAL_CFGREG_BASE_ADDR32 (152), so both Config states hold the same value; CoreFacts names the
# MMIO address of each PC word (TENSIX_CFG_BASE + 4 * word), where a core writes it.
_CFG = 0xFFEF0000
RESET_PC_CONFIG_FIELDS = {
    "trisc0": ("TRISC_RESET_PC_SEC0_PC", "TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en", 0),
    "trisc1": ("TRISC_RESET_PC_SEC1_PC", "TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en", 1),
    "trisc2": ("TRISC_RESET_PC_SEC2_PC", "TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en", 2),
    "ncrisc": ("NCRISC_RESET_PC_PC", "NCRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en", 0),
}

_CORES = (
    CoreFacts("brisc", _LOCAL_RAM["brisc"], None, 11, 0x0, None, None, None),
    CoreFacts("ncrisc", _LOCAL_RAM["ncrisc"], None, 18, 0x12000, _CFG + 4 * 162, 0, None, iram=NCRISC_IRAM),
    CoreFacts("trisc0", _LOCAL_RAM["trisc0"], None, 12, 0x6000, _CFG + 4 * 158, 0, 0),
    CoreFacts("trisc1", _LOCAL_RAM["trisc1"], None, 13, 0xA000, _CFG + 4 * 159, 1, 1),
    CoreFacts("trisc2", _LOCAL_RAM["trisc2"], None, 14, 0xE000, _CFG + 4 * 160, 2, 2),
)

# tt-umd wormhole_implementation.hpp (DRAM_CORES_NOC0): six groups of three DRAM tiles, each group
# exposing the same 2 GiB (DRAMTile/README.md: "each 2 GiB of GDDR6 has six NIUs attached to it
# (three per NoC)"; tt-umd DRAM_BANK_SIZE).
_DRAM_GROUPS = (
    ((0, 0), (0, 1), (0, 11)),
    ((0, 5), (0, 6), (0, 7)),
    ((5, 0), (5, 1), (5, 11)),
    ((5, 2), (5, 9), (5, 10)),
    ((5, 3), (5, 4), (5, 8)),
    ((5, 5), (5, 6), (5, 7)),
)

# NoC/MemoryMap.md and tt-metal's wormhole noc_parameters.h: each request initiator (NOC_CMD_BUF_OFFSET
# 0x400 apart) holds ten request fields (no NOC_AT_LEN_BE_1, no NOC_BRCST_EXCLUDE; a 36-bit address in
# LO and the low 4 bits of MID, the X/Y coordinates from bit 4 of MID; the header's *_ADDR_HI words are
# storage no request reads, MemoryMap.md does not list them), NOC_CMD_CTRL
# at +0x28, NOC_NODE_ID / NOC_ENDPOINT_ID at +0x2C / +0x30; NOC_CLEAR_OUTSTANDING_REQ_CNT at +0x50 and
# the combined initiator status at +0x54 of the window. Translation: 32 4-bit entries per axis, the
# result written back into the MID registers (MemoryMap.md "NOC_CMD_CTRL").
WORMHOLE_NIU = NocRegisters(
    request_fields=(
        "NOC_TARG_ADDR_LO",
        "NOC_TARG_ADDR_MID",
        "NOC_TARG_ADDR_HI",
        "NOC_RET_ADDR_LO",
        "NOC_RET_ADDR_MID",
        "NOC_RET_ADDR_HI",
        "NOC_PACKET_TAG",
        "NOC_CTRL",
        "NOC_AT_LEN_BE",
        "NOC_AT_DATA",
    ),
    cmd_ctrl=0x28,
    node_id=0x2C,
    endpoint_id=0x30,
    clear_outstanding=0x50,
    coordinates="mid",
    # Each initiator's low NOC_CMD_CTRL bit: requests are taken on the cycle they are written.
    read_zero=(("NIU combined request initiator status", 0x54),),
    translation="tables",
    table_entry_bits=4,
)

WORMHOLE_NOC = NocFacts(
    niu_bases=(0xFFB20000, 0xFFB30000),  # MemoryMap.md NIU_BASE for a Tensix tile
    niu_size=0x10000,
    initiator_stride=0x400,  # NIU_BASE + i * NOC_CMD_BUF_OFFSET, i = 0..3
    initiators=4,
    width=10,  # NOC_NODE_ID: "in practice is always 10" / "12"
    height=12,
    x_first_routing=(True, False),
    tensix_endpoint_type=0x00,  # NOC_ENDPOINT_ID bits 16..23: 0 for a Tensix tile
    default_position=(1, 1),  # the first Tensix tile of tt-umd's TENSIX_CORES_NOC0
    dram_tiles={xy: group for group, tiles in enumerate(_DRAM_GROUPS) for xy in tiles},
    dram_group_bytes=2 << 30,
    dram_channel_bytes=1 << 30,  # DRAMTile/README.md: two 1 GiB GDDR6 channels in each group
    # tt-metal's wormhole_b0_80_arch.yaml: twelve banks (DRAM views), two per group, 1 GiB apart
    # (dram_address_offsets), each at its dram_preferred_worker_endpoint.
    dram_banks=tuple(
        (bank // 2, endpoint, (bank % 2) << 30)
        for bank, endpoint in enumerate(
            ((0, 11), (0, 1), (0, 5), (0, 7), (5, 1), (5, 11), (5, 2), (5, 9), (5, 8), (5, 3), (5, 5), (5, 7))
        )
    ),
    config_registers={
        "NIU_CFG_0": 0x100,
        **{f"ROUTER_CFG_{i}": 0x104 + 4 * i for i in range(5)},
        **{f"NOC_X_ID_TRANSLATE_TABLE_{i}": 0x118 + 4 * i for i in range(4)},
        **{f"NOC_Y_ID_TRANSLATE_TABLE_{i}": 0x128 + 4 * i for i in range(4)},
        "NOC_ID_LOGICAL": 0x138,
    },
    # tt-umd TENSIX_CORES_NOC0: columns 1-4 and 6-9, rows 1-5 and 7-11 (80 tiles).
    tensix_tiles=tuple((x, y) for y in (*range(1, 6), *range(7, 12)) for x in (*range(1, 5), *range(6, 10))),
    other_tiles={
        **{(x, y): "ethernet" for y in (0, 6) for x in (*range(1, 5), *range(6, 10))},  # ETH_CORES_NOC0
        (0, 3): "pcie",
        (0, 10): "arc",
        **{(0, y): "router" for y in (2, 4, 8, 9)},  # ROUTER_CORES_NOC0
    },
    registers=WORMHOLE_NIU,
    # noc_parameters.h: NOC_WORD_BYTES 32 (256-bit payload per flit), NOC_MAX_BURST_SIZE 256 words
    # (MemoryMap.md: a read or write moves at most 8192 bytes per packet; Counters.md counts
    # ceil(len / 8192) requests); a byte-enable mask covers 32 bytes.
    flit_bytes=32,
    max_packet_bytes=8192,
    write_be_bytes=32,
    # Atomics.md: increment, swap by mask, compare and swap, swap by index (no Zaamo operations;
    # parallel addition is not modelled).
    atomic_opcodes=(0x1, 0x3, 0x4, 0x6, 0x7),
    inline_l1_writes=True,  # MemoryMap.md NOC_AT_LEN_BE: an inline write to L1 is byte-enabled
    dram_alignment=32,  # tt-metal's DRAM_ALIGNMENT for Wormhole (NOC_L1_TO_DRAM_ALIGNMENT)
    # Coordinates.md, the firmware-configured tables (NoC #0 columns; the Y table depends on which
    # rows are harvested: this is the unharvested order of the Tensix rows, then the Ethernet rows).
    translate_x={16: 0, 17: 5, 18: 1, 19: 2, 20: 3, 21: 4, 22: 6, 23: 7, 24: 8, 25: 9},
    translate_y={16: 0, 17: 6, **{18 + i: y for i, y in enumerate((1, 2, 3, 4, 5, 7, 8, 9, 10, 11))}},
    translate_identity_below=16,
)

WORMHOLE = replace(
    BLACKHOLE,
    name="wormhole",
    clock_hz=1_000_000_000,  # BabyRISCV/README.md: "a clock speed of 1 GHz"
    l1_size=1464 * 1024,  # MEM_L1_SIZE; the memory map's 0x0..0x16FFFF
    cores=_CORES,
    # Tag_RISCV_arch of the ttnn wheel's Wormhole firmware: rv32i2p0_m2p0_zmmul1p0 (BRISC, NCRISC),
    # plus xtttensixwh on the TRISCs. BabyRISCV/README.md: "The full RV32IM instruction set is
    # implemented", and no other extension, no CSR.
    isa_string_prefix="rv32i2p0_m2p0",
    has_zba_zbb=False,
    has_zaamo=False,
    has_csrs=False,
    csrs=(),
    ttinsn_fusion=False,  # no Wormhole page describes fusing inline words
    tensix_isa_extension="xtttensixwh",
    soft_reset_register=0xFFB121B0,  # RISCV_DEBUG_REG_SOFT_RESET_0, same bits (SoftReset.md)
    soft_reset_all=0x47800,
    trisc_reset_pc_override_register=_CFG + 4 * 161,
    ncrisc_reset_pc_override_register=_CFG + 4 * 163,
    reset_pc_source="config",
    reset_pc_config_fields=RESET_PC_CONFIG_FIELDS,
    # WALL_CLOCK_L / WALL_CLOCK_1 (live high word) / WALL_CLOCK_H (latched): DebugTimestamper.md.
    wall_clock_low=0xFFB121F0,
    wall_clock_high=0xFFB121F4,
    wall_clock_high_latched=0xFFB121F8,
    # No Wormhole page or header gives the input FIFO's capacity; the tile model's figure is kept.
    pipe_queue_depth=BLACKHOLE.pipe_queue_depth,
    pipe_queue_accept=BLACKHOLE.pipe_queue_depth - 1,  # (no fusion: a push while not full)
    # tt-metal's wormhole noc_overlay_parameters.h: STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX 4 (tiles
    # received), STREAM_REMOTE_DEST_BUF_START_REG_INDEX 3 (tiles acked), the two the Wormhole
    # firmware's TRISC0 clears for every stream (Blackhole's: 10 and 8).
    stream_tiles_received=4,
    stream_tiles_acked=3,
    noc=WORMHOLE_NOC,
    # tensix.h RISCV_TDMA_REG_CLK_GATE_EN / _HYST: the same addresses as Blackhole's.
    clock_gating_registers=BLACKHOLE.clock_gating_registers,
    tdma_base=0xFFB11000,
    # TDMA-RISC.md: the mover's command queue, which tt-metal's NCRISC uses to fill its instruction RAM
    # (modelled by mmio/tdma.py's TdmaMover; the registers it does not model stay Unimplemented).
    tdma_unmodelled=tuple(
        (f"RISCV_TDMA_REG_{name}", 0xFFB11000 + offset)
        for name, offset in (
            ("XMOV_SRC_ADDR", 0x00),
            ("XMOV_DST_ADDR", 0x04),
            ("XMOV_SIZE", 0x08),
            ("XMOV_DIRECTION", 0x0C),
            ("COMMAND_ADDR", 0x10),
            ("STATUS", 0x14),
            ("XMOV_L1_BASE_ADDR", 0x2C),
        )
    ),
    tile_registers=TILE_REGISTERS,
    mailboxes=MAILBOXES,  # Mailboxes.md is a Wormhole page; tensix.h has the same four bases
    pcbufs=PCBUFS,  # PCBufs.md / TTSync.md are Wormhole pages
    # tt-exalens 0.4.2 hardware/wormhole/functional_worker_debug_bus_signals.py (``<core>_pc``).
    debug_bus_pcs={
        (0, 7, 2 * k): core
        for core, k in (("brisc", 5), ("trisc0", 6), ("trisc1", 7), ("trisc2", 8), ("ncrisc", 12))
    },
    debug_bus_pc_mask=0x7FFFFFFF,
)
