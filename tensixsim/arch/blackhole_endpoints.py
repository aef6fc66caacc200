"""Facts of Blackhole's ARC and Ethernet tiles as the NoC reaches them.

Sources: tt-isa-documentation BlackholeA0 (EthernetTile/README.md, EthernetTile/BabyRISCV/README.md,
EthernetTile/Samples/ethdump/ethdump.c), tt-metal's blackhole ``dev_mem_map.h``, tt-umd
(``blackhole_implementation.hpp``, ``types/blackhole_arc.hpp``, ``types/telemetry.hpp``,
``arc/blackhole_arc_message_queue.{hpp,cpp}``, ``arc/arc_telemetry_reader.cpp``,
``firmware/blackhole_device_firmware.cpp``), and the ARC firmware tt-umd talks to
(tt-zephyr-platforms: ``lib/tenstorrent/bh_arc/status_reg.h``, ``msgqueue.c``, ``telemetry.c``,
``include/tenstorrent/msgqueue.h``, ``dts/vendor/tenstorrent/tt_blackhole_smc.dtsi``).

Addresses are those of the tile's NoC address space (what a NoC request's ``*_ADDR_LO`` names).
Values marked "emulator's choice" are not facts of any chip: they are where this emulator puts
what firmware would publish, or nominal identities a host needs to find.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------- ARC
ARC_NOC0 = (8, 0)  # NoC #0 (and, with translation on, translated) coordinates (tt-umd ARC_CORES_NOC0)

# The ARC's memory and peripherals as the NoC reaches them.
ARC_ICCM = (0x0000_0000, 0x1000)  # each ARC core's 4 KiB ICCM at 0 (the SMC devicetree)
ARC_CSM = (0x1000_0000, 0x8_0000)  # CSM, 512 KiB at 0x1000_0000 (the SMC devicetree)
ARC_XBAR = (0x8000_0000, 0x8000_0000)  # APB crossbar: ARC_NOC_XBAR_ADDRESS_START .. ARC_XBAR_ADDRESS_END

# The reset unit (ARC_RESET_UNIT_OFFSET 0x30000 into the crossbar).
ARC_RESET_UNIT = 0x8003_0000
ARC_RESET_SCRATCH = ARC_RESET_UNIT + 0x60  # SCRATCH[0..7]; SCRATCH[0] holds the post code
ARC_RESET_SCRATCH_COUNT = 8
ARC_MISC_CNTL = ARC_RESET_UNIT + 0x100  # ARC_FW_INT_ADDR: tt-umd writes 0x10000 to ring the firmware
ARC_SCRATCH_RAM = ARC_RESET_UNIT + 0x400  # SCRATCH_RAM[0..63]
ARC_SCRATCH_RAM_COUNT = 64

# ARC_MISC_CNTL fields (msgqueue.c RESET_UNIT_ARC_MISC_CNTL_reg_t): run 0..3, halt 4..7, soft_reset
# 12, dbg_cache_rst 13, mbus_clkdis 14, dbus_clkdis 15, irq0_trig 16..19, self_reset 31.
MISC_CNTL_IRQ0_TRIG = 0xF << 16
MISC_CNTL_CORE_CONTROL = (
    ("run", 0xF),
    ("halt", 0xF << 4),
    ("soft_reset", 1 << 12),
    ("dbg_cache_rst", 1 << 13),
    ("mbus_clkdis", 1 << 14),
    ("dbus_clkdis", 1 << 15),
    ("self_reset", 1 << 31),
)

# SCRATCH_RAM words the firmware publishes (status_reg.h; tt-umd SCRATCH_RAM_2 / 4 / 11 / 12 / 13).
SCRATCH_FW_VERSION = 0
SCRATCH_BOOT_STATUS0 = 2
SCRATCH_ERROR_STATUS0 = 4
SCRATCH_MSG_QUEUE_INFO = 11
SCRATCH_TELEMETRY_DATA = 12
SCRATCH_TELEMETRY_TABLE = 13
# BOOT_STATUS0: msg_queue_ready bit 0, hw_init_status bits 1..2 (2: done), fw_id bits 3..6. tt-umd
# waits for (BOOT_STATUS0 & 7) == 5: the message queue ready and the hardware initialised.
BOOT_STATUS_DONE = 1 | 2 << 1

# The ARC's NIUs, one register window per NoC (tt-umd NIU_CFG_NOC0_ARC_ADDR / NIU_CFG_NOC1_ARC_ADDR
# are NIU_CFG_0, 0x100 into each); NOC_NODE_ID at 0x44 as in every NIU (NoC MemoryMap.md).
ARC_NIU_WINDOWS = (0x8005_0000, 0x8005_8000)
ARC_NIU_WINDOW_SIZE = 0x8000

# Message queues (msgqueue.h; tt-umd BlackholeArcMessageQueue). SCRATCH_RAM[11] holds the address of
# a descriptor: the first queue's address, then (entries per queue) | (queues << 8). Each queue is a
# header of eight words (request write pointer 0, response read pointer 1 written by the host;
# request read pointer 4, response write pointer 5, last serial 6 written by the ARC), then its request
# entries, then its response entries, eight words each. Pointers wrap at twice the queue size.
MSG_QUEUES = 4
MSG_QUEUE_ENTRIES = 4
MSG_WORDS = 8  # header, request and response entries alike
MSG_HEADER = {"request_wptr": 0, "response_rptr": 1, "request_rptr": 4, "response_wptr": 5, "last_serial": 6}
MSG_QUEUE_BYTES = 4 * MSG_WORDS * (1 + 2 * MSG_QUEUE_ENTRIES)
# Response word 0: status in bits 0..7 (below 240: done, the handler's exit code; 0xFF: no handler;
# 0xFE: "scratch only"), a return value in bits 16..31.
MSG_STATUS_UNRECOGNISED = 0xFF
MSG_STATUS_SCRATCH_ONLY = 0xFE

# The message codes the ARC firmware implements (tt-umd types/blackhole_arc.hpp: "only message IDs
# that have actually been implemented in CMFW"). A code outside this table has no handler: the
# firmware answers MSG_STATUS_UNRECOGNISED.
ARC_MESSAGES = {
    0x11: "NOP",
    0x12: "SET_VOLTAGE",
    0x13: "GET_VOLTAGE",
    0x14: "SWITCH_CLK_SCHEME",
    0x16: "REPORT_SCRATCH_ONLY",
    0x17: "SEND_PCIE_MSI",
    0x18: "SWITCH_VOUT_CONTROL",
    0x19: "READ_EEPROM",
    0x1A: "WRITE_EEPROM",
    0x1B: "READ_TS",
    0x1C: "READ_PD",
    0x1D: "READ_VM",
    0x1E: "I2C_MESSAGE",
    0x1F: "EFUSE_BURN_BITS",
    0x22: "SET_TDP_LIMIT",
    0x33: "FORCE_AICLK",
    0x39: "FORCE_VDD",
    0x52: "AICLK_GO_BUSY",
    0x54: "AICLK_GO_LONG_IDLE",
    0x56: "TRIGGER_RESET",
    0x90: "TEST",
    0x9B: "PCIE_DMA_CHIP_TO_HOST_TRANSFER",
    0x9C: "PCIE_DMA_HOST_TO_CHIP_TRANSFER",
    0xA0: "ASIC_STATE0",
    0xA1: "ASIC_STATE1",
    0xA3: "ASIC_STATE3",
    0xA5: "ASIC_STATE5",
    0xB6: "TOGGLE_GDDR_RESET",
    0xBE: "SET_LAST_SERIAL",
    0xBF: "EFUSE_BURN",
    0xC2: "SPI_UNLOCK",
    0xC3: "SPI_LOCK",
}
MSG_TEST, MSG_SET_LAST_SERIAL, MSG_REPORT_SCRATCH_ONLY = 0x90, 0xBE, 0x16
MSG_AICLK_GO_BUSY, MSG_AICLK_GO_LONG_IDLE = 0x52, 0x54
AICLK_IDLE_MHZ = 800  # tt-umd AICLK_IDLE_VAL: what AICLK_GO_LONG_IDLE settles at (busy: the chip clock)

# Telemetry (telemetry.c; tt-umd ArcTelemetryReader). SCRATCH_RAM[13] holds the table's address: a
# version word, the entry count, then one word per entry (tag in bits 0..15, the index of its value in
# bits 16..31). SCRATCH_RAM[12] holds the address of the values, one word each.
# Tag numbers (tt-umd types/telemetry.hpp, the firmware's telemetry.h).
TAG_BOARD_ID_HIGH = 1
TAG_BOARD_ID_LOW = 2
TAG_AICLK = 14
TAG_ENABLED_TENSIX_COL = 34
TAG_ENABLED_ETH = 35
TAG_ENABLED_GDDR = 36
TAG_ENABLED_L2CPU = 37
TAG_PCIE_USAGE = 38
TAG_ASIC_LOCATION = 52
TAG_AICLK_LIMIT_MAX = 63
# ENABLED_TENSIX_COL bit i is the Tensix column at NoC #0 x = TENSIX_COLUMN_ORDER[i] (tt-umd
# HARVESTING_NOC_LOCATIONS, the physical layout the firmware reports in).
TENSIX_COLUMN_ORDER = (1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10)
# PCIE_USAGE: two bits per PCIe instance (instance 0 bits 0..1, instance 1 bits 2..3); 1 is "endpoint"
# (tt-umd get_chip_info treats any other value as the instance harvested; on a p150, tt-umd requires the
# instance at (11, 0) harvested).
PCIE_USAGE_ENDPOINT = 1
# ENABLED_ETH bit i is Ethernet channel i (blackhole_host.ETH_CHANNELS order). Every Blackhole product
# has 12 or 0 of the 14 Ethernet tiles available (BlackholeA0/README.md) and tt-umd refuses any other
# count. Emulator's choice: the nominal board reports channels 5 and 8 fused off (tt-umd's mock
# Blackhole cluster, "example value from silicon machine": eth_harvesting_mask 0x120); the chip
# still serves all 14 Ethernet tiles.
NOMINAL_ETH_HARVESTED = (5, 8)
# Emulator's choice: a nominal board id whose UPI (bits 36..55) is 0x40, a p150 in tt-umd's board table
# (tt-umd needs a known board type), serial number 0. No such board exists.
NOMINAL_BOARD_ID = 0x40 << 36

# Emulator's choice: where in CSM the published structures live (firmware puts them where its linker
# does). The message-queue descriptor, then the queues, then the telemetry table and its values.
CSM_MSG_QUEUE_INFO = ARC_CSM[0]
CSM_MSG_QUEUES = ARC_CSM[0] + 0x100
CSM_TELEMETRY_TABLE = ARC_CSM[0] + 0x1000

# --------------------------------------------------------------------------------------------- Ethernet
# L1: 512 KiB from 0 (EthernetTile/README.md, BabyRISCV/README.md "MEM_ETH_BASE"; tt-metal MEM_ETH_SIZE).
# tt-umd's soc descriptors say eth_l1_size 262144, yet tt-umd itself reads boot results at 0x7CC00.
ETH_L1_SIZE = 512 * 1024
# The tile's registers from 0xFFB00000; the RISCVs' local data RAM (0xFFB00000..0xFFB01FFF) is not
# reachable from the NoC ("Unmapped" in the BabyRISCV memory map).
ETH_MMIO_BASE = 0xFFB0_0000
ETH_LOCAL_RAM = (0xFFB0_0000, 0x2000)
# SOFT_RESET_0 (ethdump.c SOFT_RESET_ADDR, the Tensix tile's address): bit 11 holds RISCV E0, bit 12 E1.
ETH_SOFT_RESET = 0xFFB1_21B0
ETH_SOFT_RESET_CORES = (("erisc0", 1 << 11), ("erisc1", 1 << 12))
# Emulator's choice: both cores held at power-on (no ERISC runs here; on a card, base firmware runs on
# E0 of a connected port).
ETH_SOFT_RESET_POWER_ON = 0x1800
# Reset PCs the host writes before releasing a core: E0 at 0xFFB14000 (tt-metal IERISC_RESET_PC), E1 at
# 0xFFB14008 (SUBORDINATE_IERISC_RESET_PC; ethdump.c E1_RESET_PC_ADDR) and E1's end PC at 0xFFB1400C
# (ethdump.c E1_END_PC_ADDR).
ETH_RESET_PC_REGISTERS = (
    ("ERISC0_RESET_PC", 0xFFB1_4000),
    ("ERISC1_RESET_PC", 0xFFB1_4008),
    ("ERISC1_END_PC", 0xFFB1_400C),
)
