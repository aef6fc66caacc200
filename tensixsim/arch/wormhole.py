"""Wormhole B0 tile facts: where they differ from Blackhole.

Partial: the sizes and addresses below are known, but the tile model is built and tested for
Blackhole first; :func:`tensixsim.arch.get_arch` marks this architecture as not yet runnable.
"""

from __future__ import annotations

from dataclasses import replace

from tensixsim.arch.blackhole import BLACKHOLE

_LOCAL_RAM = {
    "brisc": 4 * 1024,
    "ncrisc": 4 * 1024,
    "trisc0": 2 * 1024,
    "trisc1": 2 * 1024,
    "trisc2": 2 * 1024,
}

WORMHOLE = replace(
    BLACKHOLE,
    name="wormhole",
    clock_hz=1_000_000_000,
    l1_size=1464 * 1024,
    cores=tuple(replace(core, local_ram_size=_LOCAL_RAM[core.name]) for core in BLACKHOLE.cores),
    isa_string_prefix="rv32i2p0_m2p0",
    has_zba_zbb=False,
    tensix_isa_extension="xtttensixwh",  # Tag_RISCV_arch of the ttnn wheel's Wormhole TRISC firmware
    noc=None,  # Wormhole's NIUs differ (NOC_NODE_ID layout, grid size); not modelled yet
    clock_gating_registers=(),
    tdma_base=None,
    tile_registers=(),  # Wormhole's page differs in places; not tabulated yet
    mailboxes=None,
    pcbufs=None,  # (its PCBufs are not wired up yet)
)
