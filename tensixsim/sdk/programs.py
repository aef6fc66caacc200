"""The SDK's example programs: how to build them, where they report, and what they must report.

The C sources are in ``examples/``. Each ``build_*`` function compiles one program for the cores
it runs on and returns the ELF paths by core. The Python models here (:func:`demo_expected`,
:func:`compute_reference`, :func:`tensix_stream_gprs`) are written independently of the C code, so
a run on the emulator can be checked against them; ``tests/test_sdk.py`` pins the first two to the
C code by compiling the kernels for the host, ``tests/test_bench_programs.py`` the third by running
the program on the emulator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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


def _arch_tag(arch: str) -> str:
    """Part of an ELF's name: nothing for Blackhole (the names predate Wormhole), else the arch."""
    return "" if arch == "blackhole" else f"_{arch}"


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
            root / "examples" / f"demo{_arch_tag(arch)}_{core}.elf",
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
            root / "examples" / f"compute_{tag}{_arch_tag(arch)}_{core}.elf",
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
        root / "examples" / f"tensix_push_n{count}{_arch_tag(arch)}_{core}.elf",
        arch=arch,
        defines={"TENSIX_PUSH_COUNT": f"{count}u"},
        build_dir=root,
    )


# ---------------------------------------------------------------------------------------------
# Tensix stream benchmark: TRISC0 pushes SETDMAREG words, half inline, half through its MMIO
# address, and the coprocessor executes them into its GPRs.

TENSIX_STREAM_DEFAULT_COUNT = 64
TENSIX_STREAM_BLOCK = 16  # STREAM_BLOCK in tensix_stream.c


def build_tensix_stream(
    core: str = "trisc0",
    *,
    count: int = TENSIX_STREAM_DEFAULT_COUNT,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> Path:
    """Build tensix_stream.c for one TRISC; the program returns ``count``, and the GPRs of its
    thread end as :func:`tensix_stream_gprs` says."""
    if get_arch(arch).core(core).pipe is None:
        raise ValueError(f"{core} has no Tensix pipe of its own; use a TRISC")
    root = _root(build_dir)
    return build(
        core,
        [BENCH_DIR / "tensix_stream.c"],
        root / "examples" / f"tensix_stream_n{count}{_arch_tag(arch)}_{core}.elf",
        arch=arch,
        defines={"TENSIX_STREAM_COUNT": f"{count}u"},
        build_dir=root,
    )


def tensix_stream_writes(count: int) -> Iterator[tuple[int, int]]:
    """The (half-register, 16-bit value) that each SETDMAREG of tensix_stream.c writes, in order:
    ``count // 2`` inline words repeating a block of TENSIX_STREAM_BLOCK constants, then one store
    per loop counter value i, writing i's low 16 bits."""
    inline = count // 2
    for i in range(inline):
        j = i % TENSIX_STREAM_BLOCK
        yield 2 + j % 5, (j * 0x9E37 + 0x1234) & 0xFFFF
    for i in range(count - inline):
        yield 8 + i % 4, i & 0xFFFF


def tensix_stream_gprs(count: int, gpr_count: int = 64) -> list[int]:
    """The pushing thread's ``gpr_count`` GPRs after tensix_stream.c pushed ``count`` words into a
    coprocessor whose GPRs started at zero: each half-register holds the last value written to it
    (half-register h is GPR h // 2's low half if h is even, its high half if odd)."""
    halves = [0] * (2 * gpr_count)
    for half, value in tensix_stream_writes(count):
        halves[half] = value
    return [halves[2 * g] | halves[2 * g + 1] << 16 for g in range(gpr_count)]


# ---------------------------------------------------------------------------------------------
# Compute kernels on all five cores (examples/kernels/, layout in kernels.h): BRISC reads tiles into
# input circular buffers, TRISC0 unpacks, TRISC1 computes, TRISC2 packs, NCRISC writes tiles out.

KERNELS_DIR = EXAMPLES_DIR / "kernels"
KERNEL_SRC0 = 0x30000  # input 0, tiles back to back (kernels.h)
KERNEL_SRC1 = 0x60000  # input 1
KERNEL_DST = 0x90000  # output
KERNEL_CB_IN0_BASE = 0x21000
KERNEL_CB_STREAMS = {"in0": 0, "in1": 1, "out": 16}
BF16_TILE_BYTES = 32 * 32 * 2
BFP8_TILE_BYTES = 64 + 32 * 32  # one shared exponent per 16-datum face row, then the datums
ELTWISE_OPS = {"add": "ELWADD", "sub": "ELWSUB", "mul": "ELWMUL"}
_FORMAT_CODES = {"fp32": 0, "fp16": 1, "bf16": 5, "bfp8": 6}  # TK_FMT_* in tensix_kernel.h


def _build_kernel(
    tag: str,
    math_source: str,
    defines: dict[str, object],
    build_dir: Path | None,
    arch: str,
    *,
    unpack_source: str = "unpack.c",
    pack_source: str = "pack.c",
) -> dict[str, Path]:
    root = _root(build_dir)
    sources = {
        "brisc": "reader.c",
        "ncrisc": "writer.c",
        "trisc0": unpack_source,
        "trisc1": math_source,
        "trisc2": pack_source,
    }
    return {
        core: build(
            core,
            [KERNELS_DIR / source],
            root / "examples" / f"kernel_{tag}{_arch_tag(arch)}_{core}.elf",
            arch=arch,
            defines=defines,
            build_dir=root,
        )
        for core, source in sources.items()
    }


def build_eltwise(
    op: str,
    *,
    tiles: int = 8,
    phases: int = 4,
    cb_in0_base: int | None = None,
    multi_context: bool = False,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> dict[str, Path]:
    """BF16 ``a op b`` (``op`` add, sub or mul) over ``tiles`` tile pairs at KERNEL_SRC0 / KERNEL_SRC1,
    BF16 tiles to KERNEL_DST. ``phases`` is ELWMUL's fidelity phases (ignored for add / sub);
    ``cb_in0_base`` moves input 0's circular buffer (for tests of bad configuration);
    ``multi_context`` unpacks in tt-llk's form (TK_UNPACK_MULTI_CONTEXT in tensix_kernel.h)."""
    if op not in ELTWISE_OPS:
        raise ValueError(f"op must be one of {sorted(ELTWISE_OPS)}, not {op!r}")
    phases = phases if op == "mul" else 1
    defines: dict[str, object] = {
        "KERNEL_OP": ELTWISE_OPS[op],
        "KERNEL_TILES": f"{tiles}u",
        "KERNEL_PHASES": f"{phases}u",
    }
    tag = f"{op}_t{tiles}_p{phases}"
    if cb_in0_base is not None:
        defines["KERNEL_CB_IN0_BASE"] = f"0x{cb_in0_base:X}u"
        tag += f"_cb{cb_in0_base:x}"
    if multi_context:
        defines["TK_UNPACK_MULTI_CONTEXT"] = None
        tag += "_multi"
    return _build_kernel(tag, "eltwise_math.c", defines, build_dir, arch)


def build_matmul(
    *,
    mt: int = 2,
    nt: int = 2,
    kt: int = 2,
    phases: int = 4,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> dict[str, Path]:
    """BF16 C = A @ B for A of mt x kt tiles (row-major tile order at KERNEL_SRC0) and B of kt x nt
    tiles (at KERNEL_SRC1); C's mt x nt BF16 tiles to KERNEL_DST, row-major. ``phases``: 1 LoFi ..
    4 HiFi4."""
    defines: dict[str, object] = {
        "KERNEL_MATMUL_MT": f"{mt}u",
        "KERNEL_MATMUL_NT": f"{nt}u",
        "KERNEL_MATMUL_KT": f"{kt}u",
        "KERNEL_TILES": f"{mt * nt * kt}u",
        "KERNEL_OUT_TILES": f"{mt * nt}u",
        "KERNEL_PHASES": f"{phases}u",
    }
    return _build_kernel(f"matmul_{mt}x{kt}x{nt}_p{phases}", "matmul_math.c", defines, build_dir, arch)


def build_copy_bfp8_to_fp16(
    *, tiles: int = 4, multi_context: bool = False, build_dir: Path | None = None, arch: str = "blackhole"
) -> dict[str, Path]:
    """Copy ``tiles`` bfp8_b tiles at KERNEL_SRC0 to FP16 tiles at KERNEL_DST: unpacked to SrcA, SrcB
    zeroed, ELWADD into FP32 Dst, packed as FP16; ``multi_context`` as for :func:`build_eltwise`."""
    defines: dict[str, object] = {
        "KERNEL_OP": "ELWADD",
        "KERNEL_TILES": f"{tiles}u",
        "KERNEL_ONE_INPUT": None,
        "KERNEL_IN_FMT": f"{_FORMAT_CODES['bfp8']}u",
        "KERNEL_IN_PAGE": f"{BFP8_TILE_BYTES}u",
        "KERNEL_SRCB_FMT": f"{_FORMAT_CODES['bf16']}u",
        "KERNEL_OUT_FMT": f"{_FORMAT_CODES['fp16']}u",
        "KERNEL_PACK_INTER": f"{_FORMAT_CODES['fp32']}u",
    }
    tag = f"copy_bfp8_fp16_t{tiles}"
    if multi_context:
        defines["TK_UNPACK_MULTI_CONTEXT"] = None
        tag += "_multi"
    return _build_kernel(tag, "eltwise_math.c", defines, build_dir, arch)


BLOCK_FP32_BYTES = 32 * 32 * 4  # one 32x32 fp32 block, row-major or tiled


TILIZE_MODES = {"untilize": 0, "tilize": 1, "round_trip": 2}  # KERNEL_TILIZE in kernels/tilize.h
# The round trip's TRISC2 -> TRISC0 buffer (kernels/tilize.h): two pages after the output buffer's four.
KERNEL_CB_MID_STREAM = 2
KERNEL_CB_MID_BASE = 0x25000 + 4 * BLOCK_FP32_BYTES


def build_tilize_fp32(
    mode: str = "tilize", *, tiles: int = 2, build_dir: Path | None = None, arch: str = "blackhole"
) -> dict[str, Path]:
    """``tiles`` 32x32 fp32 blocks at KERNEL_SRC0 to KERNEL_DST, each through Dst (the unpacker
    writes it: every fp32 bit kept) and unchanged in value. ``mode`` "tilize" reads row-major blocks
    (unpacker Tileize_mode) and writes tiles (four 16x16 faces, :func:`tile_to_faces` order);
    "untilize" reads tiles and writes row-major blocks (the packer's strided Dst access);
    "round_trip" reads row-major blocks, tilizes each into a circular buffer that TRISC0 unpacks
    again, and writes it back untilized."""
    if mode not in TILIZE_MODES:
        raise ValueError(f"mode must be one of {sorted(TILIZE_MODES)}, not {mode!r}")
    defines: dict[str, object] = {
        "KERNEL_TILES": f"{tiles}u",
        "KERNEL_ONE_INPUT": None,
        "KERNEL_TILIZE": f"{TILIZE_MODES[mode]}u",
        "KERNEL_ROW_BYTES": f"{32 * 4}u",
        "KERNEL_IN_FMT": f"{_FORMAT_CODES['fp32']}u",
        "KERNEL_IN_PAGE": f"{BLOCK_FP32_BYTES}u",
        "KERNEL_OUT_FMT": f"{_FORMAT_CODES['fp32']}u",
        "KERNEL_OUT_PAGE": f"{BLOCK_FP32_BYTES}u",
    }
    return _build_kernel(
        f"{mode}_fp32_t{tiles}",
        "tilize_math.c",
        defines,
        build_dir,
        arch,
        unpack_source="tilize_unpack.c",
        pack_source="tilize_pack.c",
    )


SFPU_OPS = {"relu": 1, "exp": 2, "recip": 3, "affine": 4}  # SFPU_OP in examples/kernels/sfpu_math.c
SFPU_AFFINE_SCALE = 0x3EAAAAAB  # FP32 1/3
SFPU_AFFINE_BIAS = 0xBF000000  # FP32 -0.5


def build_sfpu(
    op: str,
    *,
    tiles: int = 2,
    out_fmt: str = "fp32",
    recip_steps: int = 2,
    build_dir: Path | None = None,
    arch: str = "blackhole",
) -> dict[str, Path]:
    """A vector-unit operation (``op``: relu, exp, recip, affine; see sfpu_math.c) over ``tiles`` BF16
    tiles at KERNEL_SRC0: each is copied into an FP32 Dst half (ELWADD with a zeroed SrcB), transformed
    by the SFPU with FP32 loads and stores, and packed as ``out_fmt`` (fp32 or bf16) to KERNEL_DST.
    ``recip_steps`` is the reciprocal's Newton-Raphson steps (1 or 2)."""
    if op not in SFPU_OPS:
        raise ValueError(f"op must be one of {sorted(SFPU_OPS)}, not {op!r}")
    if out_fmt not in ("fp32", "bf16"):
        raise ValueError(f"out_fmt must be fp32 or bf16, not {out_fmt!r}")
    if recip_steps not in (1, 2):
        raise ValueError(f"recip_steps must be 1 or 2, not {recip_steps!r}")
    out_page = 32 * 32 * (4 if out_fmt == "fp32" else 2)
    defines: dict[str, object] = {
        "SFPU_OP": SFPU_OPS[op],
        "SFPU_RECIP_STEPS": recip_steps,
        "SFPU_AFFINE_SCALE": f"0x{SFPU_AFFINE_SCALE:08X}u",
        "SFPU_AFFINE_BIAS": f"0x{SFPU_AFFINE_BIAS:08X}u",
        "KERNEL_TILES": f"{tiles}u",
        "KERNEL_ONE_INPUT": None,
        "KERNEL_IN_FMT": f"{_FORMAT_CODES['bf16']}u",
        "KERNEL_IN_PAGE": f"{BF16_TILE_BYTES}u",
        "KERNEL_OUT_FMT": f"{_FORMAT_CODES[out_fmt]}u",
        "KERNEL_OUT_PAGE": f"{out_page}u",
        "KERNEL_PACK_INTER": f"{_FORMAT_CODES[out_fmt]}u",
    }
    tag = f"sfpu_{op}_t{tiles}_{out_fmt}" + (f"_n{recip_steps}" if op == "recip" else "")
    return _build_kernel(tag, "sfpu_math.c", defines, build_dir, arch)


def tile_to_faces(tile: np.ndarray) -> np.ndarray:
    """A (32, 32) tile in the order the kernels keep it in L1: four 16x16 faces (top-left, top-right,
    bottom-left, bottom-right), rows of 16 inside a face."""
    tile = np.asarray(tile).reshape(32, 32)
    return np.concatenate([tile[r : r + 16, c : c + 16].ravel() for r in (0, 16) for c in (0, 16)])


def tile_from_faces(flat: np.ndarray) -> np.ndarray:
    faces = np.asarray(flat).reshape(4, 16, 16)
    return np.block([[faces[0], faces[1]], [faces[2], faces[3]]])


def tiles_to_l1(tiles: Iterable[np.ndarray], dtype: str = "<u2") -> np.ndarray:
    """(32, 32) tiles of 16-bit patterns as the bytes of consecutive tiles in L1."""
    return np.concatenate([tile_to_faces(t).astype(dtype).view(np.uint8) for t in tiles])


def tiles_from_l1(data: bytes | np.ndarray, count: int, dtype: str = "<u2") -> list[np.ndarray]:
    """``count`` (32, 32) tiles of 16-bit patterns from consecutive tiles' bytes."""
    flat = np.frombuffer(bytes(data), dtype).reshape(count, 32 * 32)
    return [tile_from_faces(f) for f in flat]


def bfp8_tile_bytes(exponents: np.ndarray, datums: np.ndarray) -> bytes:
    """One bfp8_b tile in L1: ``exponents`` (64,) are the shared exponents of the 16-datum face rows
    in face order, ``datums`` (32, 32) the sign-and-7-bit-magnitude bytes in tile order."""
    flat = tile_to_faces(np.asarray(datums, np.uint8)).astype(np.uint8)
    return np.asarray(exponents, np.uint8).tobytes() + flat.tobytes()


def round_fp32_to_bf16(x: np.ndarray) -> np.ndarray:
    """fp32 values to BF16 bits as the packer rounds: to nearest, ties away from zero; zero and
    denormals to +0 (no NaN or infinity is expected in the kernels' data)."""
    u = np.asarray(x, np.float32).view(np.uint32)
    sign, mag = u & 0x80000000, u & 0x7FFFFFFF
    rounded = ((mag + 0x8000) >> 16) | (sign >> 16)
    return np.where((mag & 0x7F800000) == 0, 0, rounded).astype(np.uint16)


def random_bf16_tiles(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """``count`` 32x32 tiles of normal BF16 patterns spanning a few binades either side of one."""
    return [
        (
            rng.integers(0, 2, (32, 32)) << 15
            | rng.integers(121, 133, (32, 32)) << 7
            | rng.integers(0, 128, (32, 32))
        ).astype(np.uint16)
        for _ in range(count)
    ]


def eltwise_model(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The BF16 bits build_eltwise's kernel writes for BF16 bit patterns ``a``, ``b``: one fp32
    operation (ELWMUL at four fidelity phases sees every mantissa bit, so the product is exact),
    zero and denormal results to +0 in Dst, then the packer's rounding to BF16."""
    x = (np.asarray(a, np.uint32) << 16).view(np.float32)
    y = (np.asarray(b, np.uint32) << 16).view(np.float32)
    with np.errstate(all="ignore"):
        result = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](x, y)
    return round_fp32_to_bf16(result)


# ---------------------------------------------------------------------------- chip examples
CHIP_DIR = EXAMPLES_DIR / "chip"
CHIP_ARGS = 0x20000  # noc.h
CHIP_FLAG = 0x20100
CHIP_SRC = 0x30000
CHIP_DST = 0x40000
CHIP_OUT = 0x38000


def build_chip_examples(*, build_dir: Path | None = None, arch: str = "blackhole") -> dict[str, Path]:
    """BRISC programs of the chip examples: "pair_a", "pair_b" (two tiles), "ring" (any count),
    "mcast_sender", "mcast_receiver" (one tile multicasting to a rectangle)."""
    root = _root(build_dir)
    return {
        name: build(
            "brisc",
            [CHIP_DIR / f"{name}.c"],
            root / "examples" / f"chip_{name}{_arch_tag(arch)}.elf",
            arch=arch,
            build_dir=root,
        )
        for name in ("pair_a", "pair_b", "ring", "mcast_sender", "mcast_receiver", "mm_distribute")
    }


def ring_expected(sources: list[np.ndarray], rounds: int) -> list[list[np.ndarray]]:
    """What each tile of a ring holds in its slots 0..rounds-1 (ring.c): tile i's round-r result is
    its input plus one for r = 0, else the previous tile's round r - 1 result plus one; tile i's slot
    r holds the previous tile's round-r result."""
    count = len(sources)
    values = [[s.astype(np.uint32) + np.uint32(1) for s in sources]]
    for _ in range(1, rounds):
        last = values[-1]
        values.append([last[(i - 1) % count] + np.uint32(1) for i in range(count)])
    return [[values[r][(i - 1) % count] for r in range(rounds)] for i in range(count)]
