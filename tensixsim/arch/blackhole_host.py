"""What a host sees of a Blackhole chip: PCI identity, BARs, the PCIe tile's TLB windows, translated
NoC coordinates (tt-umd's blackhole_implementation.hpp and blackhole_coordinate_manager.cpp; the BAR
layout of Tenstorrent's simulator API, docs/libttsim_api.md of tenstorrent/ttsim).

Physical addresses of the BARs are the simulator's own choice (a host passes back the bases it read
from configuration space); the offsets inside them are the chip's.
"""

from __future__ import annotations

from dataclasses import dataclass

PCI_VENDOR_ID = 0x1E52  # Tenstorrent
PCI_DEVICE_ID = 0xB140  # Blackhole
PCI_CLASS_REVISION = 0x12000000  # processing accelerator, revision 0

# BAR: (config-space offset of its low word, physical base, size). 64-bit memory BARs.
BAR0 = (0x10, 0x1_0000_0000, 512 << 20)  # TLB windows and their configuration
BAR2 = (0x18, 0x1_2000_0000, 1 << 20)  # PCIe controller: DMA channels, iATU
BAR4 = (0x20, 0x8_0000_0000, 32 << 30)  # the 4 GiB TLB windows
BAR_MEMORY_64 = 0x4  # low bits of a BAR register: 64-bit memory, not prefetchable

# TLB windows (blackhole_implementation.hpp): 202 windows of 2 MiB from BAR0 offset 0, then 8 of 4 GiB
# from BAR4 offset 0; each has a 12-byte configuration register at 0x1FC00000 + 12 * index.
TLB_2M_COUNT = 202
TLB_2M_SIZE = 2 << 20
TLB_4G_COUNT = 8
TLB_4G_SIZE = 4 << 30
TLB_CONFIG_BASE = 0x1FC00000  # in BAR0
TLB_CONFIG_BYTES = 12

# The PCIe tile's NIU registers, one window per NoC in BAR0 (tt-umd NIU_CFG_NOC0_BAR_PCIE_ADDR): tt-umd
# reads NIU_CFG_0 there to learn whether coordinate translation is on.
PCIE_NIU_WINDOWS = (0x1FD04000, 0x1FD14000)
PCIE_NIU_WINDOW_SIZE = 0x2000
PCIE_NOC0 = (2, 0)  # the PCIe tile tt-umd talks through (NoC #0 coordinates)

# iATU (outbound address translation) registers in BAR2: 0x1000 + 0x200 * region (tt-umd writes
# them while opening the chip; outbound DMA is not modelled, so they are storage).
IATU_BASE = 0x1000
IATU_END = 0x3000


@dataclass(frozen=True)
class TlbFields:
    """Bit positions of a TLB configuration (blackhole_implementation.hpp TLB_2M_OFFSET / TLB_4G_OFFSET):
    the window's base in the target, in units of the window size, then the target's coordinates."""

    local_offset: int
    x_end: int
    y_end: int
    x_start: int
    y_start: int
    noc_sel: int
    mcast: int
    ordering: int
    linked: int
    static_vc: int
    end: int  # first bit past the configuration


TLB_2M_FIELDS = TlbFields(0, 43, 49, 55, 61, 67, 69, 70, 72, 73, 75)
TLB_4G_FIELDS = TlbFields(0, 32, 38, 44, 50, 56, 58, 59, 61, 62, 64)
COORDINATE_BITS = 6

# Translated coordinates (blackhole_implementation.hpp): DRAM ports from (17, 12), banks 0..3 (NoC #0
# column 0) in x = 17 and banks 4..7 (column 9) in x = 18, each bank's three ports in a row of y
# (blackhole_coordinate_manager.cpp map_dram_banks); PCIe at (19, 24); Ethernet from (20, 25). Tensix
# tiles keep their NoC #0 coordinates (no harvesting).
DRAM_TRANSLATED_START = (17, 12)
PCIE_TRANSLATED = (19, 24)
ETH_TRANSLATED_START = (20, 25)
# The DRAM banks as the soc descriptor lists them: each bank's NoC #0 ports, in port order.
DRAM_BANKS = (
    ((0, 0), (0, 1), (0, 11)),
    ((0, 2), (0, 10), (0, 3)),
    ((0, 9), (0, 4), (0, 8)),
    ((0, 5), (0, 7), (0, 6)),
    ((9, 0), (9, 1), (9, 11)),
    ((9, 2), (9, 10), (9, 3)),
    ((9, 9), (9, 4), (9, 8)),
    ((9, 5), (9, 7), (9, 6)),
)
# Ethernet tiles in channel order (the soc descriptor's list).
ETH_CHANNELS = ((1, 1), (16, 1), (2, 1), (15, 1), (3, 1), (14, 1), (4, 1), (13, 1), (5, 1), (12, 1), (6, 1))
ETH_CHANNELS += ((11, 1), (7, 1), (10, 1))

# Soft reset of a Tensix tile, as tt-umd writes it (TENSIX_SOFT_RESET_ADDR).
TENSIX_SOFT_RESET = 0xFFB121B0


def translated_to_noc0() -> dict[tuple[int, int], tuple[int, int]]:
    """Translated coordinates of the non-Tensix endpoints -> NoC #0 coordinates."""
    table: dict[tuple[int, int], tuple[int, int]] = {}
    x0, y0 = DRAM_TRANSLATED_START
    half = len(DRAM_BANKS) // 2
    for bank, ports in enumerate(DRAM_BANKS):
        for port, xy in enumerate(ports):
            table[(x0 + bank // half, y0 + (bank % half) * len(ports) + port)] = xy
    table[PCIE_TRANSLATED] = (2, 0)
    ex, ey = ETH_TRANSLATED_START
    for channel, xy in enumerate(ETH_CHANNELS):
        table[(ex + channel, ey)] = xy
    return table
