"""The Tensix tile's hardware performance counters, as data: their banks, registers and counter selects.

Sources:

- the counter selects and their names: tt-metal's ``tt_metal/hw/inc/internal/tt-1xx/<arch>/hw_counters.h``
  (what tt-metal's device profiler reads);
- the registers: tt-llk's ``docs/performance_counters/performance_counters.md``. Each bank has three
  control registers at consecutive words, reference period, mode and start / stop, and two outputs,
  ``OUT_L`` (the cycles of the counting window) and ``OUT_H`` (the selected counter's count). The mode
  register's bits 7:0 are the mode and bits 16:8 the counter select; the control register acts on a
  rising edge of bit 0 (start, which also zeroes the counts) or bit 1 (stop);
- ``PERF_CNT_ALL`` starts and stops the INSTRN_THREAD and FPU banks together (tt-llk's counters
  header, ``arm_all_counters``).

Which emulated event each counter counts is ``events(arch)`` (the events: tensixsim.tensix.frontend.perf);
every other counter reads 0 (docs/observability.md; the support matrix lists them all).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class PerfBank:
    """One counter bank: its control registers (reference period, mode, start / stop, one word apart)
    and its two outputs, as offsets in the debug-register page."""

    name: str
    control: int  # the reference-period register; mode and start / stop follow
    out: int  # OUT_L; OUT_H follows


BANKS: tuple[PerfBank, ...] = (
    PerfBank("INSTRN_THREAD", 0x000, 0x100),
    PerfBank("TDMA_UNPACK", 0x00C, 0x108),
    PerfBank("FPU", 0x018, 0x120),
    PerfBank("L1", 0x030, 0x118),
    PerfBank("TDMA_PACK", 0x0F0, 0x110),
)
PERF_CNT_ALL = 0x03C
ALL_BANKS = ("INSTRN_THREAD", "FPU")  # what PERF_CNT_ALL starts and stops

START, STOP = 1, 2  # control-register bits, each acting on its rising edge
MODE_MASK = 0xFF
SELECT_SHIFT, SELECT_MASK = 8, 0x1FF
# Modes besides 0 (count until stopped): count for the reference period, then stop; count until
# stopped without the window's cycles (OUT_L reads 0).
MODE_PERIOD, MODE_NO_REFERENCE = 1, 2

_CLASSES = ("CFG", "SYNC", "THCON", "MOVE", "FPU", "UNPACK", "PACK")
_CLASS_SELECT = {"CFG": 0, "SYNC": 3, "THCON": 6, "MOVE": 12, "FPU": 15, "UNPACK": 18, "PACK": 21}
_SRC_WAITS = ("SRCA_CLEAR", "SRCB_CLEAR", "SRCA_VALID", "SRCB_VALID")
_WAITS = ("THCON", "UNPACK", "PACK", "MATH", "NONZERO_SEM", "NONFULL_SEM", "MOVE", "MMIO", "SFPU")


def _wait_name(wait: str, thread: int) -> str:
    """A per-thread wait counter's name: WAITING_FOR_<unit>_IDLE_t, or WAITING_FOR_<sem wait>_t."""
    return f"WAITING_FOR_{wait}_{thread}" if "SEM" in wait else f"WAITING_FOR_{wait}_IDLE_{thread}"


def _instrn(arch: str) -> dict[int, str]:
    names = {_CLASS_SELECT[c] + t: f"{c}_INSTRN_AVAILABLE_{t}" for c in _CLASSES for t in range(3)}
    names.update({24 + t: f"THREAD_STALLS_{t}" for t in range(3)})
    # Blackhole's four source waits are selects 27..30, Wormhole's every third select from 27 (its
    # hw_counters.h: "replicated stall conditions"); the per-thread waits follow, nine a thread.
    step = 1 if arch == "blackhole" else 3
    names.update({27 + step * i: f"WAITING_FOR_{w}" for i, w in enumerate(_SRC_WAITS)})
    first = 27 + 4 * step
    names.update({first + 9 * t + i: _wait_name(w, t) for t in range(3) for i, w in enumerate(_WAITS)})
    names.update({256 + 8 * t: f"THREAD_INSTRUCTIONS_{t}" for t in range(3)})
    names[283] = "ANY_THREAD_STALL"
    return names


_UNPACK_COMMON = {
    0: "MATH_SRC_DATA_READY",
    1: "DATA_HAZARD_STALLS_MOVD2A",
    3: "MATH_INSTRN_STARTED",
    4: "MATH_INSTRN_AVAILABLE",
    5: "SRCB_WRITE_AVAILABLE",
    6: "SRCA_WRITE_AVAILABLE",
    7: "UNPACK0_BUSY_THREAD0",
    8: "UNPACK1_BUSY_THREAD0",
    9: "UNPACK0_BUSY_THREAD1",
    10: "UNPACK1_BUSY_THREAD1",
    259: "SRCB_WRITE_ACTUAL",
    260: "SRCB_WRITE_NOT_BLOCKED_PORT",
    261: "SRCA_WRITE_NOT_BLOCKED_OVR",
    262: "SRCA_WRITE_ACTUAL",
    263: "SRCA_WRITE_THREAD0",
    264: "SRCB_WRITE_THREAD0",
    265: "SRCA_WRITE_THREAD1",
    266: "SRCB_WRITE_THREAD1",
}
_UNPACK_WORMHOLE = {
    2: "MATH_FIDELITY_STALL",
    256: "MATH_INSTRN_HF_4_CYCLE",
    257: "MATH_INSTRN_HF_2_CYCLE",
    258: "MATH_INSTRN_HF_1_CYCLE",
}
_PACK = {11: "PACKER_DEST_READ_AVAILABLE", 18: "PACKER_BUSY", 267: "DEST_READ_GRANTED_0"}
_PACK.update({271: "MATH_NOT_STALLED_DEST_WR_PORT", 272: "AVAILABLE_MATH"})
_PACK_WORMHOLE = {
    **{12 + i: f"PACKER_DEST_READ_{i + 1}" for i in range(3)},
    **{15 + i: f"PACKER_BUSY_{i}" for i in range(3)},
    **{268 + i: f"DEST_READ_GRANTED_{i + 1}" for i in range(3)},
}
_FPU = {0: "FPU_COUNTER", 1: "SFPU_COUNTER", 257: "MATH_COUNTER"}


@cache
def counters(arch: str) -> dict[str, dict[int, str]]:
    """Per bank (but L1, whose counters no emulated event feeds): counter select -> the counter's name
    (one table per architecture, shared: not to be changed)."""
    unpack = {**_UNPACK_COMMON, **(_UNPACK_WORMHOLE if arch == "wormhole" else {})}
    pack = {**_PACK, **(_PACK_WORMHOLE if arch == "wormhole" else {})}
    return {
        "INSTRN_THREAD": _instrn(arch),
        "TDMA_UNPACK": dict(sorted(unpack.items())),
        "FPU": _FPU,
        "TDMA_PACK": dict(sorted(pack.items())),
    }


# Counter name -> the emulated event it counts (tensixsim.tensix.frontend.perf.totals), for the
# counters the emulator models. Blackhole has one packer, whose PACKER_BUSY is the pack unit's
# occupancy; Wormhole's four packers' counters are not modelled.
_COMMON_EVENTS = {
    **{f"{c}_INSTRN_AVAILABLE_{t}": f"available.{c.lower()}{t}" for c in _CLASSES for t in range(3)},
    **{f"THREAD_STALLS_{t}": f"stalls{t}" for t in range(3)},
    "ANY_THREAD_STALL": "stalls.any",
    **{_wait_name(w, t): f"waiting.{w.lower()}{t}" for w in _WAITS for t in range(3)},
    **{f"WAITING_FOR_{s}": f"waiting.{s.lower()}" for s in _SRC_WAITS},
    **{f"THREAD_INSTRUCTIONS_{t}": f"instructions{t}" for t in range(3)},
    "FPU_COUNTER": "busy.fpu",
    "SFPU_COUNTER": "busy.sfpu",
    "MATH_COUNTER": "busy.math",
    **{f"UNPACK{u}_BUSY_THREAD{t}": f"busy.unpack{u}.{t}" for u in range(2) for t in range(2)},
}


@cache
def events(arch: str) -> dict[str, dict[int, str]]:
    """Per bank: counter select -> emulated event, for the counters the emulator models on ``arch``
    (shared: not to be changed)."""
    modelled = dict(_COMMON_EVENTS)
    if arch == "blackhole":
        modelled["PACKER_BUSY"] = "busy.pack"
    return {
        bank: {select: modelled[name] for select, name in table.items() if name in modelled}
        for bank, table in counters(arch).items()
    }
