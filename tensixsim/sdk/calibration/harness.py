"""Running the calibration cases: the programs they compile to, their runs on a tile (or a chip),
and the table of emulated against silicon figures."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.chip import Chip
from tensixsim.sdk.build import DEFAULT_BUILD_DIR, build
from tensixsim.sdk.calibration.case import (
    ARCH,
    DATA,
    DONE,
    NOC_STATUS_OFFSET,
    PC_BUF_SYNC,
    PROFILE,
    RESULT_STRIDE,
    RESULTS,
    SHARED,
    SOURCE,
    Case,
)
from tensixsim.sdk.calibration.matrix import MATRIX_CASES
from tensixsim.sdk.calibration.noc import ARBITRATION_CASES, DRAM_CASES, NOC_CASES
from tensixsim.sdk.calibration.pack import PACK_CASES
from tensixsim.sdk.calibration.riscv import CORE_CASES, FIVE_CORE_CASES, MEMORY_CASES, PAIR_CASES
from tensixsim.sdk.calibration.sfpu import SFPU_CASES, SFPU_RATE_CASES
from tensixsim.sdk.calibration.sync import PUSH_CASES, SYNC_CASES
from tensixsim.sdk.calibration.thcon import THCON_CASES
from tensixsim.sdk.calibration.unpack import UNPACK_CASES
from tensixsim.tile import Tile

# Every figure, in the order the table shows them.
CASES: tuple[Case, ...] = (
    CORE_CASES
    + MEMORY_CASES
    + PAIR_CASES
    + FIVE_CORE_CASES
    + SYNC_CASES
    + PUSH_CASES
    + MATRIX_CASES
    + NOC_CASES
    + ARBITRATION_CASES
    + DRAM_CASES
    + UNPACK_CASES
    + THCON_CASES
    + PACK_CASES
    + SFPU_CASES
    + SFPU_RATE_CASES
)

# Figures of the calibration list this table does not run (docs/timing.md says why).
NOT_RUN: tuple[tuple[str, str], ...] = ()

_TEMPLATE = """\
#include <stdint.h>
#include "tensixsim.h"

static volatile uint32_t scratch[16]; /* own local RAM (.bss) */
/* What the bodies address by name (local RAM): a circular buffer's interface, the DRAM bank table,
 * this tile's NoC coordinates. */
volatile uint32_t cb_iface[8] __attribute__((used, aligned(16)));
volatile uint16_t bank_table[16] __attribute__((used));
volatile uint8_t noc_xy[4] __attribute__((used));
volatile uint32_t unpack_ctx __attribute__((used)); /* the unpack bench's configuration context */

/* The measured loop between two wall-clock reads: beqz on the counter, the body, addi, j. The first
 * read's response is waited for (its use), so the loop starts with nothing of the read left to retire:
 * a register read leaves the instructions after it unretired for its latency, and a register written
 * twice meanwhile (the counter, a constant) could not be forwarded, a stall of the harness rather
 * than of the loop, which the few iterations of a run would show. Both reads are in the same block as
 * the loop, so the body's and the empty loop's intervals hold the same instructions but the body (the
 * compiler places nothing between them). No linker relaxation: every instruction stays as written. */
#define LOOP(body, start, end)                                                                \\
    __asm__ volatile(".option push\\n.option norelax\\nlw %[s], 0(%[clock])\\nand zero, zero, %[s]\\n" \\
                     SETUP "\\nli t6, %[n]\\n9:\\nbeqz t6, 8f\\n" body                            \\
                     "\\naddi t6, t6, -1\\nj 9b\\n8:\\n" TEARDOWN                                 \\
                     "\\nlw %[e], 0(%[clock])\\n.option pop"                                  \\
                     : "+r"(l1), "+r"(local), "+r"(remote), "+r"(mmio), [s] "=&r"(start),  \\
                       [e] "=&r"(end)                                                       \\
                     : [n] "i"(ITERS), [clock] "r"(WALL_CLOCK)                            \\
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3",   \\
                       "a4", "a5", "a6", "a7", "memory")

int main(void)
{
    /* No fusion of inline Tensix words (cfg0 DisTriscCache), as tt-metal's firmware sets it on
     * Blackhole: the measured programs ran so (the SFPU probes say so). */
    __asm__ volatile("csrs 0x7c0, %0" ::"r"(1u << 18));
    register uint32_t l1 __asm__("s0") = L1_DATA;
    register uint32_t local __asm__("s1") = (uint32_t)&scratch[0];
    register uint32_t remote __asm__("s2") = REMOTE;
    register uint32_t mmio __asm__("s3") = MMIO;
#ifdef PROLOGUE
    __asm__ volatile(".option push\\n.option norelax\\n" PROLOGUE "\\n.option pop"
                     : "+r"(l1), "+r"(local), "+r"(remote), "+r"(mmio)
                     :
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                       "a7", "memory");
    l1 = L1_DATA;
    local = (uint32_t)&scratch[0];
    remote = REMOTE;
    mmio = MMIO;
#endif
    __asm__ volatile("li a4, 3\\nli a5, 7\\nli a1, 1\\nli a2, 5\\nli a0, 1" ::: "a0", "a1", "a2", "a4", "a5");
    uint32_t t0, t1, t2, t3;
    LOOP(BODY, t0, t1);
    l1 = L1_DATA;
    local = (uint32_t)&scratch[0];
    remote = REMOTE;
    mmio = MMIO;
    __asm__ volatile("li a4, 3\\nli a5, 7\\nli a1, 1\\nli a2, 5\\nli a0, 1" ::: "a0", "a1", "a2", "a4", "a5");
    LOOP(EMPTY, t2, t3);
    volatile uint32_t *out = (volatile uint32_t *)RESULT;
    out[0] = t1 - t0;
    out[1] = t3 - t2;
#ifdef DONE_FLAG
#ifdef DONE_CHECK
    /* Wait until the coprocessor has run what this core pushed: the companions may be serving it. */
    *(volatile uint32_t *)DONE_CHECK = 0;
    (void)*(volatile uint32_t *)DONE_CHECK;
#endif
    *(volatile uint32_t *)DONE_FLAG = 1;
#endif
    return 0;
}
"""

# A companion core's program: its assembly, once.
_COMPANION_TEMPLATE = """\
#include <stdint.h>
#include "tensixsim.h"

int main(void)
{
    __asm__ volatile("csrs 0x7c0, %0" ::"r"(1u << 18)); /* as main's */
    __asm__ volatile(".option push\\n.option norelax\\n" PROGRAM "\\n.option pop"
                     :
                     :
                     : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                       "a7", "memory");
    return 0;
}
"""


def _c_string(asm: str) -> str:
    """``asm`` as a C string for an extended asm statement (% doubled)."""
    lines = (line.strip().replace("%", "%%") for line in asm.strip().splitlines())
    return '"' + "\\n".join(lines) + '"'


def build_case(case: Case, core: str, build_dir: Path | None = None) -> Path:
    """Compile ``case`` for ``core``; returns the ELF."""
    arch = get_arch(ARCH)
    index = CORE_NAMES.index(core)
    neighbour = arch.cores[(index + 1) % len(arch.cores)]
    noc = arch.noc
    niu = noc.niu_bases[0] if noc else 0
    niu1 = noc.niu_bases[1] if noc and len(noc.niu_bases) > 1 else 0
    mmio = {
        "wall": arch.wall_clock_low,
        "noc_status": niu + NOC_STATUS_OFFSET,
        "niu": niu,
        "niu1": niu1,
        "pcbuf": arch.pcbuf_base,
        "stream": arch.stream_base,
    }[case.mmio]
    defines = {
        "ITERS": case.iters,
        "BODY": _c_string(case.body),
        "SETUP": _c_string(case.setup),
        "TEARDOWN": _c_string(case.teardown),
        "EMPTY": _c_string(case.empty),
        "L1_DATA": f"0x{SHARED if case.shared_l1 else DATA + 0x1000 * index:x}u",
        # Another core's local RAM, above where its .data and .bss lie.
        "REMOTE": f"0x{neighbour.local_ram_alias + 0x100:x}u",
        "MMIO": f"0x{mmio:x}u",
        "WALL_CLOCK": f"0x{arch.wall_clock_low:x}u",
        "RESULT": f"0x{RESULTS + RESULT_STRIDE * index:x}u",
    }
    if case.prologue:
        defines["PROLOGUE"] = _c_string(case.prologue)
    if case.companions:
        defines["DONE_FLAG"] = f"0x{DONE:x}u"
        if core.startswith("trisc"):
            defines["DONE_CHECK"] = f"0x{PC_BUF_SYNC:x}u"
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    source = _source(root, "calibration.c", _TEMPLATE)
    return build(core, [source], _elf(root, f"{case.name}_{core}", defines), defines=defines, build_dir=root)


def build_companion(case: Case, core: str, program: str, build_dir: Path | None = None) -> Path:
    """Compile the companion ``program`` of ``case`` for ``core``; returns the ELF."""
    root = Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR
    source = _source(root, "companion.c", _COMPANION_TEMPLATE)
    defines = {"PROGRAM": _c_string(program)}
    return build(
        core, [source], _elf(root, f"{case.name}_{core}_companion", defines), defines=defines, build_dir=root
    )


def _elf(root: Path, name: str, defines: dict[str, object]) -> Path:
    """Where a case's program is put: named by what it is built from too, so that two processes
    building different programs under one case name (a test's ad hoc cases, in parallel workers)
    never load each other's."""
    digest = hashlib.sha256(repr(sorted(defines.items())).encode()).hexdigest()[:12]
    return root / "calibration" / f"{name}_{digest}.elf"


def _source(root: Path, name: str, text: str) -> Path:
    source = root / "calibration" / name
    source.parent.mkdir(parents=True, exist_ok=True)
    if not source.exists() or source.read_text() != text:
        # Atomically: parallel test workers build from the same file, and a compiler must never
        # read one half written.
        fd, tmp = tempfile.mkstemp(suffix=".c", dir=source.parent)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, source)
    return source


@dataclass
class Measured:
    """What one case cost on the emulator, per operation, on each core that ran it; ``l1_order_late``:
    the run's L1 accesses the default ordering could not keep in cycle order (docs/timing.md)."""

    case: Case
    per_core: dict[str, float] = field(default_factory=dict)
    l1_order_late: int = 0

    @property
    def emulated(self) -> float:
        values = [self.per_core[c] for c in self.case.figure_cores]
        return self.case.figure(sum(values) / len(values))

    @property
    def ratio(self) -> float:
        return self.emulated / self.case.target

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= 0.10


def run_case(
    case: Case, build_dir: Path | None = None, tile_factory: Callable[[], Tile] | None = None
) -> Measured:
    """Run ``case`` on a fresh tile (of a chip, for a peer case); the per-operation cost on each core
    that ran it."""
    if case.peer is not None:
        chip = _chip_run(case, build_dir)
        tile = chip.tile(*(case.figure_tile or SOURCE))
    else:
        tile = Tile(ARCH) if tile_factory is None else tile_factory()
        for core in case.cores:
            tile.load_elf(core, build_case(case, core, build_dir))
        for core, program in case.companions:
            tile.load_elf(core, build_companion(case, core, program, build_dir))
        tile.run(max_cycles=10_000_000, release=case.cores + tuple(c for c, _ in case.companions))
    measured = Measured(case, l1_order_late=int(tile.l1_order_late[0]))
    tiles = [chip.tile(*xy) for xy in case.senders] if case.aggregate else [tile]
    if case.profiled:
        start, end = (int.from_bytes(tile.read(PROFILE + 4 * i, 4), "little") for i in (0, 1))
        for core in case.figure_cores:
            measured.per_core[core] = ((end - start) & 0xFFFFFFFF) / case.ops
        return measured
    for core in case.cores:
        index = CORE_NAMES.index(core)
        longest = 0
        for each in tiles:
            raw = each.read(RESULTS + RESULT_STRIDE * index, 8)
            body, empty = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little")
            longest = max(longest, body - empty if case.subtract_empty else body)
        measured.per_core[core] = longest / (case.iters * case.ops * len(tiles))
    return measured


# The last chip run: the rows of one many-sender run differ only in whose figure they show.
_last_run: list = [None, None]


def _chip_run(case: Case, build_dir: Path | None) -> Chip:
    """``case``'s program run on its senders (SOURCE alone by default) of a chip with its peer."""
    key = (replace(case, name="", what="", silicon=(0, 0), figure_tile=None), build_dir)
    if _last_run[0] == key:
        return _last_run[1]
    chip = Chip(ARCH)
    senders = case.senders or (SOURCE,)
    elfs = {core: build_case(case, core, build_dir) for core in case.cores}
    for xy in senders:
        for core, elf in elfs.items():
            chip.tile(*xy).load_elf(core, elf)
    chip.tile(*case.peer)
    chip.run(max_cycles=10_000_000, release={xy: case.cores for xy in senders})
    _last_run[:] = key, chip
    return chip


def run_all(cases: Sequence[Case] = CASES, build_dir: Path | None = None) -> list[Measured]:
    """Run every case of ``cases``, in order."""
    return [run_case(case, build_dir) for case in cases]


def table(results: Sequence[Measured], not_run: Sequence[tuple[str, str]] = NOT_RUN) -> str:
    """The Markdown table of emulated against silicon figures (cycles per operation)."""
    lines = [
        "| figure | emulated | silicon | ratio | |",
        "|---|---:|---:|---:|---|",
    ]
    for m in results:
        status = ("ok" if m.within else "OFF") if m.case.calibrated else "not yet calibrated"
        lines.append(
            f"| {m.case.what} | {m.emulated:.3f} | {m.case.silicon_text()} | {m.ratio:.2f} | {status} |"
        )
    for what, silicon in not_run:
        lines.append(f"| {what} | - | {silicon} | - | not yet calibrated |")
    return "\n".join(lines)


def summary(results: Sequence[Measured], name: str = "timing_within_10pct") -> str:
    calibrated = [m for m in results if m.case.calibrated]
    good = sum(m.within for m in calibrated)
    return f"{name}: {good}/{len(calibrated)} figures"
