"""The SDK's example programs: how to build them, where they report, and what they must report.

The C sources are in ``examples/``. Each ``build_*`` function compiles one program for the cores
it runs on and returns the ELF paths by core. The Python models here (:func:`demo_expected`,
:func:`compute_reference`) are written independently of the C code, so a run on the emulator can
be checked against them; ``tests/test_sdk.py`` pins the models to the C code by compiling the
kernels for the host.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tensixsim.arch import get_arch
from tensixsim.sdk.build import DEFAULT_BUILD_DIR, build
from tensixsim.sdk.layout import L1_USER_BASE, core_layouts

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
DEMO_DIR = EXAMPLES_DIR / "demo"
BENCH_DIR = EXAMPLES_DIR / "bench"

WORKERS: tuple[str, ...] = ("ncrisc", "trisc0", "trisc1", "trisc2")
M32 = 0xFFFFFFFF


def _root(build_dir: Path | None) -> Path:
    return Path(build_dir) if build_dir is not None else Path.cwd() / DEFAULT_BUILD_DIR


def _reset_mask(cores: Iterable[str], arch: str) -> int:
    facts = get_arch(arch)
    mask = 0
    for core in cores:
        mask |= 1 << facts.core(core).soft_reset_bit
    return mask


# ---------------------------------------------------------------------------------------------
# Demo: five cores, one shared L1 block (layout drawn in examples/demo/demo.h).

DEMO_N = 256
DEMO_SEED = 0x2545F491
DEMO_DONE = 0xD0E0D0E0
# Byte offsets from L1_USER_BASE of struct demo_shared's fields (pinned to demo.h by a test).
DEMO_OFFSETS: dict[str, int] = {
    "input": 0,
    "transformed": 4 * DEMO_N,
    "scan": 8 * DEMO_N,
    "result": 12 * DEMO_N,
    "done": 12 * DEMO_N + 32,
    "summary": 12 * DEMO_N + 64,
}
DEMO_BASE = L1_USER_BASE


def build_demo(*, build_dir: Path | None = None, arch: str = "blackhole") -> dict[str, Path]:
    """Build the five demo programs; BRISC's starts the others. Returns {core: ELF}."""
    root = _root(build_dir)
    return {
        core: build(
            core,
            [DEMO_DIR / f"{core}.c"],
            root / "examples" / f"demo_{core}.elf",
            arch=arch,
            build_dir=root,
        )
        for core in core_layouts(get_arch(arch))
    }


@dataclass(frozen=True)
class DemoExpected:
    """What L1 must hold after the demo ran: arrays and one result word per core id."""

    input: list[int]
    transformed: list[int]
    scan: list[int]
    result: dict[str, int]
    summary: int = 0  # BRISC's verdict: 0 = every worker's answer matched


def demo_expected(arch: str = "blackhole") -> DemoExpected:
    """The demo's correct answers, computed in Python."""
    del arch  # the demo computes the same on every architecture
    data, x = [], DEMO_SEED
    for _ in range(DEMO_N):
        x ^= (x << 13) & M32
        x ^= x >> 17
        x ^= (x << 5) & M32
        data.append(x)
    transformed = [(((v << 7) | (v >> 25)) & M32) ^ 0x9E3779B9 for v in data]
    scan, acc = [], 0
    for v in data:
        acc = (acc + v) & M32
        scan.append(acc)
    h = 0x811C9DC5
    for v in data:
        h = ((h ^ v) * 0x01000193) & M32
    total = sum(data) & M32
    return DemoExpected(
        input=data,
        transformed=transformed,
        scan=scan,
        result={
            "brisc": total,
            "ncrisc": sum(transformed) & M32,
            "trisc0": total,
            "trisc1": h,
            "trisc2": scan[-1],
        },
    )


# ---------------------------------------------------------------------------------------------
# Compute benchmark: every core runs examples/bench/compute_kernel.h on its own local data.

BENCH_DONE = 0xD0E0D0E0
BENCH_BASE = L1_USER_BASE
BENCH_OFFSETS: dict[str, int] = {"result": 0x00, "done": 0x20, "cycles": 0x40}
BENCH_DEFAULT_ITERS = 16


def build_compute_bench(
    *,
    iters: int = BENCH_DEFAULT_ITERS,
    workers: Iterable[str] = WORKERS,
    measure_cycles: bool = False,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> dict[str, Path]:
    """Build compute.c for BRISC and ``workers``; BRISC releases the workers and waits for them."""
    workers = tuple(workers)
    root = _root(build_dir)
    defines: dict[str, object] = {
        "BENCH_ITERS": f"{iters}u",
        "BENCH_WORKERS": f"0x{_reset_mask(workers, arch):X}u",
    }
    if measure_cycles:
        defines["BENCH_MEASURE_CYCLES"] = None
    tag = f"i{iters}_w{''.join(w[0] + w[-1] for w in workers)}{'_cyc' if measure_cycles else ''}"
    return {
        core: build(
            core,
            [BENCH_DIR / "compute.c"],
            root / "examples" / f"compute_{tag}_{core}.elf",
            arch=arch,
            defines=defines,
            build_dir=root,
        )
        for core in ("brisc", *workers)
    }


def compute_reference(core_id: int, iters: int = BENCH_DEFAULT_ITERS) -> int:
    """The checksum compute.c returns on the core with id ``core_id`` (index in arch.cores)."""

    def rotl(x: int, r: int) -> int:
        r &= 31
        return ((x << r) | (x >> (-r & 31))) & M32

    def clz(v: int) -> int:
        return 32 - v.bit_length()

    def ctz(v: int) -> int:
        return (v & -v).bit_length() - 1 if v else 32

    n, dim = 64, 8
    x = ((0x2545F491 + core_id * 0x9E3779B9) & M32) | 1
    a = []
    for _ in range(n):
        x ^= (x << 13) & M32
        x ^= x >> 17
        x ^= (x << 5) & M32
        a.append(x)
    ma = [v & 0xFF for v in a]
    mb = [a[(i * 7) & (n - 1)] >> 24 for i in range(n)]
    mc = [0] * n
    crc, acc = M32, 0
    for it in range(iters):
        for v in a:
            crc ^= v
            for _ in range(32):
                crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
        for r in range(dim):
            for c in range(dim):
                mc[r * dim + c] = sum(ma[r * dim + k] * mb[k * dim + c] for k in range(dim)) & M32
        for i in range(n):
            v = rotl(a[i] ^ mc[i], i + it)
            acc = (acc + v.bit_count() + clz(v) + ctz(v)) & M32
            acc = (acc + (mc[i] & ~v & M32)) & M32
            hi = max(v, acc)
            lo = min(v, crc)
            a[i] = ((hi - lo) & M32) ^ rotl(v, 11)
        for i in range(n):
            ma[i] = (ma[i] + (a[i] & 0xFF)) & 0xFFFF
        crc ^= (acc * 0x9E3779B1) & M32
    return crc ^ acc


# ---------------------------------------------------------------------------------------------
# Tensix push benchmark: one TRISC pushes NOPs, half inline, half through its MMIO address.

TENSIX_PUSH_DEFAULT_COUNT = 64


def build_tensix_push(
    core: str = "trisc0",
    *,
    count: int = TENSIX_PUSH_DEFAULT_COUNT,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> Path:
    """Build tensix_push.c for one TRISC; the program returns ``count``."""
    if get_arch(arch).core(core).pipe is None:
        raise ValueError(f"{core} has no Tensix pipe of its own; use a TRISC")
    root = _root(build_dir)
    return build(
        core,
        [BENCH_DIR / "tensix_push.c"],
        root / "examples" / f"tensix_push_n{count}_{core}.elf",
        arch=arch,
        defines={"TENSIX_PUSH_COUNT": f"{count}u"},
        build_dir=root,
    )
