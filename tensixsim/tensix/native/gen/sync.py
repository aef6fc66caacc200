"""The sync unit's and the scalar unit's memory instructions' sections of ``constants.h``."""

from __future__ import annotations

from types import ModuleType

from tensixsim.isa import isa_for
from tensixsim.tensix import regs
from tensixsim.tensix.native.gen.common import (
    LAYOUT_MODULES,
    _Defines,
    c_name,
)

# sync.c's kinds of STALLWAIT condition (SYNC_CONDITIONS_INIT rows: kind, index, waits_while).
_COND_NONE, _COND_UNIT, _COND_UNPACKER, _COND_SRC, _COND_PACKER = range(5)


def _busy_row(unit: str) -> tuple[int, int]:
    """(kind, index) of what a condition on ``unit`` reads: an unpacker's fetch, the packers' drain
    (with the pack unit's clock), or a unit's clock."""
    from tensixsim.tensix.frontend.pipes import UNIT_INDEX
    from tensixsim.tensix.pack.stream import PACKER_UNIT
    from tensixsim.tensix.unpack.fetch import UNPACKER_UNITS

    if unit in UNPACKER_UNITS:
        return _COND_UNPACKER, UNPACKER_UNITS.index(unit)
    if unit == PACKER_UNIT:
        return _COND_PACKER, UNIT_INDEX["pack"]
    return _COND_UNIT, UNIT_INDEX[unit]


def _sync_constants(out: _Defines, arch: str) -> None:
    """sync.c's section of ``constants.h``: sync.py's semaphores, latches, block bits per opcode and
    ``arch``'s STALLWAIT conditions (each as what it tests: a unit's clock, an unpacker's fetch, a Src
    bank); STREAMWAIT's operands and fields where ``arch`` has it."""
    from tensixsim.mmio import streams
    from tensixsim.tensix import sync
    from tensixsim.tensix.pack.stream import STREAM_DRAINED

    layout = LAYOUT_MODULES[arch]
    conditions = sync.STALLWAIT_CONDITIONS_BY_ARCH[arch]
    out.text("", "/* ---- sync.c: sync.py (SYNC_*, LATCH_*), streams.py (STREAMS_*) ---- */")
    for name in ("SEMAPHORES", "SEM_LIMIT", "MUTEX_SLOTS", "DEFAULT_BLOCK"):
        out.add(c_name("SYNC", name), f"{int(getattr(sync, name))}u")
    out.add("SYNC_DEFAULT_CONDITIONS", f"{sync.DEFAULT_CONDITIONS_BY_ARCH[arch]}u")
    out.add("SYNC_SEM_MASK_BITS", f"{sync._SEM_MASK_BITS}u")
    out.add("SYNC_STALLWAIT_CONDITION_BITS", f"{len(conditions)}u")  # sync.stallwait's width check
    out.add("SYNC_CONDITION_COUNT", f"{len(conditions)}u")
    for latch in sync.Latch:
        out.add(c_name("LATCH", latch.name), f"{int(latch)}u")
    bits = sync._BLOCK_BITS[arch]
    table = [0] * 256
    for spec in isa_for(arch):
        table[spec.opcode] = bits[spec.name]
    out.add("SYNC_BLOCK_BITS_INIT", "{" + ", ".join(f"0x{b:03X}" for b in table) + "}")
    for kind, value in (
        ("NONE", _COND_NONE),
        ("UNIT", _COND_UNIT),
        ("UNPACKER", _COND_UNPACKER),
        ("SRC", _COND_SRC),
        ("PACKER", _COND_PACKER),
    ):
        out.add(f"SYNC_COND_{kind}", str(value))
    # Where a PACKER condition finds the packers' drain: the first packer's stream words
    # (pack.stream.accept writes it into every packer's).
    out.add("SYNC_PACKER_DRAINED_WORD", f"{STREAM_DRAINED}u")
    rows = []
    for condition in conditions:
        if condition.unit is not None:
            row = (*_busy_row(condition.unit), 0)
        elif condition.src_bank is not None:
            file, side = regs._SRC_BANK_NAMES[condition.src_bank]
            row = (_COND_SRC, 2 * file + (side == "matrix"), int(condition.src_waits_while))
        else:
            row = (_COND_NONE, 0, 0)
        rows.append("{{{}, {}, {}}}".format(*row))
    out.add("SYNC_CONDITIONS_INIT", "{" + ", ".join(rows) + "}")
    # The mutexes that exist (a bit per index; ATGETM / ATRELM of any other raise in Python).
    out.add("SYNC_NOBODY", str(sync.NOBODY))
    out.add("SYNC_MUTEX_VALID", f"0x{sum(1 << i for i in sync.MUTEXES[arch]):02X}u")
    # streams.py: the registers Streams.read answers from its array (column order); any other reads 0.
    out.add("STREAMS_STORED_COUNT", f"{len(streams._STORED)}u")
    out.add("STREAMS_STORED_INIT", "{" + ", ".join(f"{r}u" for r in streams._STORED) + "}")
    if "STREAMWAIT" not in isa_for(arch).by_name:
        return
    # STREAMWAIT: operand widths, its two conditions as {stream register, ThreadConfig register of
    # the target's high bits, shift, mask}, and the STREAM_ID_SYNC_SEC<n>_BankSel fields
    # {register, shift, mask}.
    out.add("SYNC_STREAM_TARGET_BITS", f"{sync._STREAM_TARGET_BITS}u")
    out.add("SYNC_STREAM_SELECT_BITS", f"{sync._STREAM_SELECT_BITS}u")
    out.add("SYNC_STREAM_CONDITION_COUNT", f"{len(sync._STREAM_CONDITIONS)}u")
    stream_rows = []
    for _, register, high_field in sync._STREAM_CONDITIONS:
        word, shift, width = layout.THREAD_FIELDS[high_field]
        stream_rows.append(f"{{{register}u, {word}u, {shift}u, 0x{(1 << width) - 1:X}u}}")
    out.add("SYNC_STREAM_CONDITIONS_INIT", "{" + ", ".join(stream_rows) + "}")
    selects = 1 << sync._STREAM_SELECT_BITS
    id_rows = []
    for n in range(selects):
        word, shift, width = layout.THREAD_FIELDS[f"STREAM_ID_SYNC_SEC{n}_BankSel"]
        id_rows.append(f"{{{word}u, {shift}u, 0x{(1 << width) - 1:X}u}}")
    out.add("SYNC_STREAM_ID_INIT", "{" + ", ".join(id_rows) + "}")


def _thcon_constants(out: _Defines, layout: ModuleType) -> None:
    """thcon_mem.c's section of ``constants.h``: LOADIND/STOREIND's offset increments, REG2FLOP's
    first THCON Config word, and FLUSHDMA's conditions (each as the clock it reads, as sync.c's)."""
    from tensixsim.tensix import thcon

    out.text("", "/* ---- thcon_mem.c: thcon.py (THCON_*) ---- */")
    out.add("THCON_OFFSET_INCREMENTS_INIT", "{" + ", ".join(str(i) for i in thcon.OFFSET_INCREMENTS) + "}")
    # thcon._thcon_config_base, read off the same field table.
    base = min(word for name, (word, _, _) in layout.CONFIG_FIELDS.items() if name.startswith("THCON_"))
    out.add("THCON_CONFIG_BASE_WORD", f"{base}u")
    rows = []
    for bit, unit in thcon._FLUSH_UNITS:
        rows.append("{{{}, {}, {}}}".format(bit, *_busy_row(unit)))
    out.add("THCON_FLUSH_UNIT_COUNT", f"{len(rows)}u")
    out.add("THCON_FLUSH_UNITS_INIT", "{" + ", ".join(rows) + "}")
