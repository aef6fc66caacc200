"""The mover: XMOV's bulk copy / zero-fill in aligned 16-byte units.

Functional model: tt-isa-documentation WormholeB0/TensixTile/TensixCoprocessor/XMOV.md and
WormholeB0/TensixTile/Mover.md, on both chips (one registration: the encodings agree, and the
configuration fields ``THCON_SEC0_REG6_*`` of the issuing thread's Config state have the same names).
No BlackholeA0 page covers the mover; the Wormhole model is applied there too. BlackholeA0 pages
confirm the parts they mention: ConfigurationUnit.md lists "Mover write request" (a write to Config
with a value from L1, or zero) and STALLWAIT.md's condition C9 waits for the mover (Wormhole: C12).
What differs between the chips is data: the size of L1 and whether there is an instruction RAM.

``Mover(dst, src, count, mode)`` with ``dst``/``src`` the 16-byte-unit fields shifted left by 4 and
``count`` the low 16 bits of Buffer_size times 16:

- XMOV_L0_TO_L1 (0): zero-fill ``count`` bytes of L1 at ``dst``.
- XMOV_L1_TO_L0 (1): copy L1 ``src`` to the non-L1 target ``dst``.
- XMOV_L0_TO_L0 (2): zero-fill the non-L1 target ``dst``.
- XMOV_L1_TO_L1 (3): copy L1 ``src`` to L1 ``dst``.

Non-L1 targets: ``dst <= 0xffff`` is Tensix Backend Configuration at TENSIX_CFG_BASE + dst;
0x40000..0x4ffff is RISCV NC instruction RAM; anything else is nowhere (the writes are discarded).

Readings where the pages are open:

- L1 is ``arch.l1_size``: the page's 1464 KiB on Wormhole, 1536 KiB on Blackhole. A start address
  beyond it is UndefinedBehavior (the page); a transfer that starts inside L1 and runs past its end
  is a MemoryFault naming the start address (the page is silent).
- The copy is ``memcpy``: overlapping L1 source and destination ranges are UndefinedBehavior (the
  page does not say in which order the mover reads and writes its units).
- Backend Configuration: the mover writes Config[0], Config[1] and ConfigDualWrite as a RISC-V store
  to the same address does (BackendConfiguration.md: global words land in both states, a write of
  STATE_RESET_EN clears the state, PRNG_SEED reseeds), one 32-bit word at a time in address order.
  No page says that the mover can write ThreadConfig (RISC-V stores cannot) or what lies beyond it in
  the 64 KiB window: Unimplemented.
- RISCV NC instruction RAM: ``dst - 0x40000`` is an offset into NCRISC's instruction RAM where the
  tile has one (Wormhole: 16 KiB, ``arch`` core facts). The 64 KiB window is larger than the RAM and
  no page says what lies past its end: UndefinedBehavior. Code NCRISC had translated from the bytes
  written is dropped (as for TDMA-RISC's mover commands); the page's warning that the RAM is
  corrupted when NCRISC fetches from it during the write is not modelled (the write is at issue).
  Blackhole has no RISCV NC instruction RAM (BabyRISCV memory map) and no page says what the mover
  does with that window there: Unimplemented.
- "Nowhere" keeps ``dst``'s low 16 bits for the page's 64 KiB region check (only the region
  decodes to nothing).
- The instruction word has no documented operand (the encoding diagram: bit 23 is 0, the rest
  blank; syntax ``TT_XMOV(0, 0)``): a set bit in either slot is UndefinedBehavior.

Timing (timing.MOVER, Mover.md's ideal-conditions figures): XMOV issues in one cycle; the mover is
busy for the whole transfer from the issue cycle, so a later XMOV (any thread) waits until it is
free, and STALLWAIT's mover condition (Blackhole C9, Wormhole C12; unit ``xmov``) waits until the
transfer ends. The data lands when XMOV issues (as every unit here delivers results at issue): a program that
waits as documented sees the same values, one that races sees them early. The mover's writes to
Config are not charged to the configuration unit. TDMA-RISC (the RISC-V cores' command queue for the
mover) is modelled for Wormhole's L1-to-instruction-RAM and L1-to-L1 copies in mmio/tdma.py; the two
keep separate busy times, although they drive one mover (a transfer from each at once overlaps).
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.errors import MemoryFault, UndefinedBehavior, Unimplemented
from tensixsim.tensix.config.unit import store_config
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.timing import MOVER

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor

UNIT = 16  # bytes: the mover works in aligned 16-byte units
WINDOW = 0x10000  # a non-L1 target region
CONFIG_WINDOW_END = 0xFFFF  # dst <= this: Tensix Backend Configuration
IRAM_WINDOW = range(0x40000, 0x50000)  # RISCV NC instruction RAM
IRAM_CORE = "ncrisc"  # RISCV NC: whose instruction RAM the window reaches


class Direction(IntEnum):
    """THCON_SEC0_REG6_Transfer_direction (Mover.md's xmov_direction_t)."""

    L0_TO_L1 = 0  # zero-fill L1
    L1_TO_L0 = 1  # copy L1 to a non-L1 target
    L0_TO_L0 = 2  # zero-fill a non-L1 target
    L1_TO_L1 = 3  # copy L1 to L1


class Target(IntEnum):
    L1 = 0
    CONFIG = 1
    NOWHERE = 2
    IRAM = 3


def transfer_cycles(direction: int, count: int) -> int:
    """Cycles the mover is busy with a transfer of ``count`` bytes (at least XMOV's issue cycle)."""
    units = count // UNIT
    if direction in (Direction.L1_TO_L0, Direction.L1_TO_L1):
        cycles = -(-units * MOVER.copy_cycles // MOVER.copy_units)
    else:
        cycles = units * MOVER.set_cycles_per_unit
    return max(MOVER.issue, cycles)


def _undefined(ctx: Context, message: str, value: int) -> UndefinedBehavior:
    return ctx.error(UndefinedBehavior, message, value)


def _check_l1(ctx: Context, what: str, address: int, count: int, *, write: bool) -> None:
    """``what`` must start in L1 (else undefined) and end inside it (else a fault)."""
    size = ctx.copro.arch.l1_size
    if address >= size:
        raise _undefined(ctx, f"{what} 0x{address:x} is beyond L1 ({size // 1024} KiB)", address)
    if address + count > size:
        raise MemoryFault(
            f"pipe {ctx.thread} XMOV: {what} runs past the end of L1",
            address=address,
            size=count,
            write=write,
            core=ctx.core,
            pc=ctx.pc,
            cycle=ctx.cycle,
        )


def _check_config(ctx: Context, offset: int, count: int) -> None:
    """The words written must lie in Config[0], Config[1] or ConfigDualWrite."""
    layout = ctx.copro.config.layout
    if offset + count > layout.thread_offset:
        raise ctx.error(
            Unimplemented,
            f"a mover write to TENSIX_CFG_BASE+0x{offset:x}..+0x{offset + count:x} reaches past "
            f"ConfigDualWrite (ThreadConfig from +0x{layout.thread_offset:x}): no page documents it",
            offset,
        )


def _require_iram(ctx: Context, dst: int) -> None:
    """The tile must have RISCV NC instruction RAM for the window at ``dst`` to reach."""
    if ctx.copro.arch.core(IRAM_CORE).iram is None:
        raise ctx.error(
            Unimplemented,
            f"destination 0x{dst:x} is RISCV NC instruction RAM, which {ctx.copro.arch.name} does not have",
            dst,
        )


def _check_iram(ctx: Context, offset: int, count: int) -> None:
    """The bytes written must lie in the instruction RAM."""
    iram = ctx.copro.arch.core(IRAM_CORE).iram
    assert iram is not None  # _require_iram
    if offset + count > iram[1]:
        raise _undefined(
            ctx,
            f"{count} bytes at instruction RAM offset 0x{offset:x} run past its {iram[1] // 1024} KiB "
            "(no page says what the rest of the 64 KiB window is)",
            IRAM_WINDOW.start + offset,
        )


def _write_iram(copro: Coprocessor, offset: int, data: bytes) -> None:
    """Store ``data`` in NCRISC's instruction RAM and drop the code it had translated from there."""
    tile = copro.tile
    tile.iram[IRAM_CORE][offset : offset + len(data)] = np.frombuffer(data, np.uint8)
    base = copro.arch.core(IRAM_CORE).iram[0]
    tile.core(IRAM_CORE).forget_code_range(base + offset, base + offset + len(data))


def _write_config(copro: Coprocessor, offset: int, data: bytes) -> None:
    """Store ``data`` at TENSIX_CFG_BASE + ``offset`` word by word, as RISC-V stores would."""
    state_words = copro.config.layout.state_words
    for i in range(0, len(data), 4):
        word = (offset + i) // 4
        part, index = divmod(word, state_words)
        store_config(copro, None if part == 2 else part, index, int.from_bytes(data[i : i + 4], "little"))


@semantics("XMOV", arches=("blackhole", "wormhole"))
def xmov(ctx: Context, mov_block_selection: int, last: int) -> Outcome:
    ctx.documented("mov_block_selection", mov_block_selection, 0)
    ctx.documented("last", last, 0)
    config = ctx.copro.config
    dst = config.field_for_thread("THCON_SEC0_REG6_Destination_address", ctx.thread) << 4
    src = config.field_for_thread("THCON_SEC0_REG6_Source_address", ctx.thread) << 4
    count = (config.field_for_thread("THCON_SEC0_REG6_Buffer_size", ctx.thread) & 0xFFFF) << 4
    mode = Direction(config.field_for_thread("THCON_SEC0_REG6_Transfer_direction", ctx.thread))
    copies = mode in (Direction.L1_TO_L0, Direction.L1_TO_L1)

    # Where the data goes (every check before anything changes).
    if mode in (Direction.L0_TO_L1, Direction.L1_TO_L1):
        target = Target.L1
        _check_l1(ctx, "destination", dst, count, write=True)
    else:
        if dst in IRAM_WINDOW:
            _require_iram(ctx, dst)
            target = Target.IRAM
        else:
            target = Target.CONFIG if dst <= CONFIG_WINDOW_END else Target.NOWHERE
        if (dst & (WINDOW - 1)) + count > WINDOW:
            raise _undefined(ctx, f"{count} bytes from 0x{dst:x} cross a 64 KiB target region", dst)
        if target is Target.CONFIG:
            _check_config(ctx, dst, count)
        elif target is Target.IRAM:
            _check_iram(ctx, dst - IRAM_WINDOW.start, count)
    if copies:
        _check_l1(ctx, "source", src, count, write=False)
        if target is Target.L1 and count and src < dst + count and dst < src + count:
            raise _undefined(
                ctx, f"memcpy source 0x{src:x} and destination 0x{dst:x} ({count} bytes) overlap", src
            )

    copro = ctx.copro
    data = copro.l1_read(src, count) if copies and count else bytes(count)
    if count and target is Target.L1:
        copro.l1_write(dst, data, ctx.cycle)
    elif target is Target.CONFIG:
        _write_config(copro, dst, data)
    elif target is Target.IRAM and count:
        _write_iram(copro, dst - IRAM_WINDOW.start, data)
    return Retire(transfer_cycles(mode, count))
