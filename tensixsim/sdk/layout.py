"""Where the SDK puts each core's program: SDK conventions layered on the architecture facts.

The hardware fixes where each core starts (its reset PC) and how big its local data RAM is; those
come from :mod:`tensixsim.arch`. How much L1 a program's code may take and where user buffers begin
are choices of this SDK, not hardware facts, so they live here, once. The linker scripts, the C
header and the tests all read them from this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from tensixsim.arch import Arch

# Each core's code + rodata + .data load image fits in this much L1 from its reset PC. 16 KiB is the
# gap between the TRISC reset PCs (0x6000, 0xA000, 0xE000, 0x12000), so the windows tile exactly.
CODE_WINDOW_SIZE = 16 * 1024

# L1 from here up belongs to user programs (buffers shared between cores). It lies above every
# core's code window; :func:`core_layouts` checks that.
L1_USER_BASE = 0x20000

# The print buffers of tensix_print.h: one per core (tt-metal's 204-byte DPRINT layout, see
# tensixsim.observe.dprint), in core order, in the free L1 between BRISC's code window and TRISC0's.
DPRINT_BASE = 0x5000
DPRINT_BUFFER_SIZE = 204

# The linker refuses a program whose .data + .bss leave less than this for the stack.
MIN_STACK_SIZE = 512


@dataclass(frozen=True)
class CoreLayout:
    """Where one core's program lives."""

    core: str
    core_id: int  # index in ``arch.cores``; the C code sees it as SDK_CORE_ID
    code_base: int  # = the core's default reset PC; _start goes here
    code_size: int
    local_ram_base: int
    local_ram_size: int

    @property
    def code_end(self) -> int:
        return self.code_base + self.code_size

    @property
    def stack_top(self) -> int:
        return self.local_ram_base + self.local_ram_size


def core_layouts(arch: Arch) -> dict[str, CoreLayout]:
    """Every core's layout, checked for overlaps and against the user region and L1's size."""
    layouts = {
        c.name: CoreLayout(
            core=c.name,
            core_id=i,
            code_base=c.default_reset_pc,
            code_size=CODE_WINDOW_SIZE,
            local_ram_base=arch.local_ram_base,
            local_ram_size=c.local_ram_size,
        )
        for i, c in enumerate(arch.cores)
    }
    windows = sorted(layouts.values(), key=lambda layout: layout.code_base)
    for lo, hi in pairwise(windows):
        if lo.code_end > hi.code_base:
            raise ValueError(f"{arch.name}: code windows of {lo.core} and {hi.core} overlap")
    if windows[-1].code_end > L1_USER_BASE or arch.l1_size <= L1_USER_BASE:
        raise ValueError(f"{arch.name}: L1_USER_BASE 0x{L1_USER_BASE:x} overlaps code or L1 end")
    prints_end = DPRINT_BASE + DPRINT_BUFFER_SIZE * len(layouts)
    if any(w.code_base < prints_end and w.code_end > DPRINT_BASE for w in windows):
        raise ValueError(f"{arch.name}: the print buffers at 0x{DPRINT_BASE:x} overlap a code window")
    return layouts


def core_layout(arch: Arch, core: str) -> CoreLayout:
    """The layout of ``core`` (one of ``tensixsim.arch.CORE_NAMES``)."""
    layouts = core_layouts(arch)
    if core not in layouts:
        raise ValueError(f"unknown core {core!r}; cores: {', '.join(layouts)}")
    return layouts[core]
