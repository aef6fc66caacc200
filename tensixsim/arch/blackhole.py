"""Blackhole tile facts (tt-isa-documentation BlackholeA0, tt-metal dev_mem_map.h)."""

from __future__ import annotations

from tensixsim.arch.blackhole_csrs import BLACKHOLE_CSRS, CFG0
from tensixsim.arch.blackhole_registers import MAILBOXES, PCBUFS, TILE_REGISTERS
from tensixsim.arch.common import Arch, CoreFacts, NocFacts, NocRegisters

_LOCAL_RAM = 0xFFB00000
_TILE_CONTROL = 0xFFB12000

# BlackholeA0/NoC/MemoryMap.md: each request initiator (NOC_CMD_BUF_OFFSET 0x800 apart) holds twelve
# request fields, NOC_CMD_CTRL at +0x40, the identification registers at +0x44 / +0x48;
# NOC_CLEAR_OUTSTANDING_REQ_CNT at +0x60 of the window. Coordinates sit in the *_ADDR_HI fields.
BLACKHOLE_NIU = NocRegisters(
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
        "NOC_AT_LEN_BE_1",
        "NOC_AT_DATA",
        "NOC_BRCST_EXCLUDE",
    ),
    cmd_ctrl=0x40,
    node_id=0x44,
    endpoint_id=0x48,
    clear_outstanding=0x60,
    coordinates="hi",
    translation="tables_and_masks",
    table_entry_bits=5,
)

BLACKHOLE = Arch(
    name="blackhole",
    clock_hz=1_350_000_000,
    l1_size=1536 * 1024,
    local_ram_base=_LOCAL_RAM,
    cores=(
        CoreFacts("brisc", 8 * 1024, 0xFFB14000, 11, 0x0, None, None, None),
        CoreFacts("ncrisc", 8 * 1024, 0xFFB16000, 18, 0x12000, 0xFFB12238, 0, None),
        CoreFacts("trisc0", 4 * 1024, 0xFFB18000, 12, 0x6000, 0xFFB12228, 0, 0),
        CoreFacts("trisc1", 4 * 1024, 0xFFB1A000, 13, 0xA000, 0xFFB1222C, 1, 1),
        CoreFacts("trisc2", 4 * 1024, 0xFFB1C000, 14, 0xE000, 0xFFB12230, 2, 2),
    ),
    isa_string_prefix="rv32i2p1_m2p0_zmmul1p0_zaamo1p0_zba1p0_zbb1p0",
    has_zba_zbb=True,
    tensix_isa_extension="xtttensixbh",  # Tag_RISCV_arch of the ttnn wheel's Blackhole TRISC firmware
    soft_reset_register=_TILE_CONTROL + 0x1B0,
    soft_reset_all=0x47800,
    trisc_reset_pc_override_register=_TILE_CONTROL + 0x234,
    ncrisc_reset_pc_override_register=_TILE_CONTROL + 0x23C,
    wall_clock_low=_TILE_CONTROL + 0x1F0,
    wall_clock_high=_TILE_CONTROL + 0x1F4,
    wall_clock_high_latched=_TILE_CONTROL + 0x1F8,
    tensix_push_base=0xFFE40000,
    tensix_push_stride=0x10000,
    pipe_count=3,
    pipe_queue_depth=32,
    # PushTensixInstruction.md: 32 words are reached only by a fused group of four pushed at 28;
    # above 28 the FIFO takes nothing until it is back at 28.
    pipe_queue_accept=28,
    mop_config_base=0xFFB80000,
    pcbuf_base=0xFFE80000,
    csr_cfg0=CFG0,
    csr_queue_status=0xBC0,
    csr_backend_status=0xBC1,
    csrs=BLACKHOLE_CSRS,
    ttinsn_fusion=True,
    tile_control_base=_TILE_CONTROL,
    tile_control_size=0x1000,
    stream_base=0xFFB40000,
    stream_stride=0x1000,
    stream_count=64,
    # tt-metal's blackhole noc_overlay_parameters.h: STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX 10,
    # STREAM_REMOTE_DEST_BUF_START_REG_INDEX 8.
    stream_tiles_received=10,
    stream_tiles_acked=8,
    noc=NocFacts(
        niu_bases=(0xFFB20000, 0xFFB30000),
        niu_size=0x10000,
        initiator_stride=0x800,
        initiators=4,
        width=17,
        height=12,
        x_first_routing=(True, False),
        tensix_endpoint_type=0x0100,
        default_position=(1, 2),  # the first Tensix tile (NoC #0 column 1, row 2)
        # Columns 0 and 9 of NoC #0: D0..D3 and D4..D7, three tiles per group (NoC #0 map, Coordinates.md).
        dram_tiles={
            (column, row): group + 4 * (column == 9)
            for column in (0, 9)
            for row, group in enumerate((0, 0, 1, 1, 2, 3, 3, 3, 2, 2, 1, 0))
        },
        dram_group_bytes=4 << 30,  # "the same 4 GiB of GDDR6 is common across groups of three DRAM tiles"
        # The NoC #0 map (Coordinates.md; tt-umd's blackhole_implementation.hpp lists the same): Tensix
        # tiles in columns 1..7 and 10..16, rows 2..11 (140; a product may fuse some off: not modelled).
        tensix_tiles=tuple((x, y) for y in range(2, 12) for x in (*range(1, 8), *range(10, 17))),
        other_tiles={
            **{(x, 1): "ethernet" for x in (*range(1, 8), *range(10, 17))},
            (2, 0): "pcie",
            (11, 0): "pcie",
            (8, 0): "arc",
            (8, 2): "security",
            **{(8, y): "l2cpu" for y in (3, 5, 7, 9)},
            **{(x, 0): "router" for x in (1, 3, 4, 5, 6, 7, 10, 12, 13, 14, 15, 16)},
            **{(8, y): "router" for y in (1, 4, 6, 8, 10, 11)},
        },
        # MemoryMap.md, "NIU and NoC Router Configuration"; 0x14C is not named there.
        config_registers={
            "NIU_CFG_0": 0x100,
            **{f"ROUTER_CFG_{i}": 0x104 + 4 * i for i in range(5)},
            **{f"NOC_X_ID_TRANSLATE_TABLE_{i}": 0x118 + 4 * i for i in range(6)},
            **{f"NOC_Y_ID_TRANSLATE_TABLE_{i}": 0x130 + 4 * i for i in range(6)},
            "NOC_ID_LOGICAL": 0x148,
            "NOC_ID_TRANSLATE_COL_MASK": 0x150,
            "NOC_ID_TRANSLATE_ROW_MASK": 0x154,
            **{f"DDR_COORD_TRANSLATE_TABLE_{i}": 0x158 + 4 * i for i in range(6)},
            "DDR_COORD_TRANSLATE_COL_SWAP": 0x170,
            "DEBUG_COUNTER_RESET": 0x174,
            "NIU_TRANS_COUNT_RTZ_CFG": 0x178,
            "NIU_TRANS_COUNT_RTZ_CLR": 0x17C,
        },
        registers=BLACKHOLE_NIU,
    ),
    # Names and addresses from tt-metal's blackhole tensix.h (RISCV_TDMA_REG_*); those of the
    # tile-control page are in TILE_REGISTERS.
    clock_gating_registers=(
        ("TDMA_CLK_GATE_EN", 0xFFB11024),
        ("TDMA_CLK_GATE_HYST", 0xFFB11028),
    ),
    tdma_base=0xFFB11000,
    tile_registers=TILE_REGISTERS,
    mailboxes=MAILBOXES,
    pcbufs=PCBUFS,
    # tt-exalens 0.4.2 hardware/blackhole/functional_worker_debug_bus_signals.py (``<core>_pc``).
    debug_bus_pcs={
        (1, 7, 2 * k + 1): core
        for core, k in (("brisc", 5), ("trisc0", 6), ("trisc1", 7), ("trisc2", 8), ("ncrisc", 12))
    },
    debug_bus_pc_mask=0x3FFFFFFF,
)
