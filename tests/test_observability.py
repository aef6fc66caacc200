"""Perfetto traces of a run and the bottleneck analysis (docs/observability.md).

Traces are read back with the perfetto package's own protobuf classes and compared with the run's
independent bookkeeping (issued counts per pipe, instructions per unit, core cycles); the two engines
must write the same bytes; bottleneck() must name the BRISC reader of the SDK matmul and the vector
unit of a kernel that does nothing but SFPU work.
"""

from __future__ import annotations

import functools
import itertools
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from asm import assemble, link
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as perfetto_pb2

from tensixsim import Tile
from tensixsim.demo import run_matmul_demo
from tensixsim.errors import TraceError
from tensixsim.isa import isa_for
from tensixsim.sdk import programs
from tensixsim.tensix import native
from tensixsim.tensix.frontend.capture import PushedInstruction

ISA = isa_for("blackhole")
ROOT = Path(__file__).resolve().parent.parent


class Read:
    """A trace file decoded: tracks by name, and per track its slices (name, start, end, count) and
    counter values (cycle, value)."""

    def __init__(self, path: Path) -> None:
        trace = perfetto_pb2.Trace()
        trace.ParseFromString(path.read_bytes())
        names: dict[int, str] = {}
        self.tracks: dict[int, str] = {}
        self.slices: dict[str, list[tuple[str, int, int, int]]] = defaultdict(list)
        self.counters: dict[str, list[tuple[int, int]]] = defaultdict(list)
        open_: dict[int, tuple[str, int, int]] = {}
        kinds = perfetto_pb2.TrackEvent
        for packet in trace.packet:
            if packet.HasField("track_descriptor"):
                self.tracks[packet.track_descriptor.uuid] = packet.track_descriptor.name
            for entry in packet.interned_data.event_names:
                names[entry.iid] = entry.name
            if not packet.HasField("track_event"):
                continue
            event = packet.track_event
            track = self.tracks[event.track_uuid]
            if event.type == kinds.TYPE_SLICE_BEGIN:
                assert event.track_uuid not in open_, "slices on one track must not overlap"
                count = next((a.int_value for a in event.debug_annotations if a.name == "count"), 1)
                open_[event.track_uuid] = (names[event.name_iid], packet.timestamp, count)
            elif event.type == kinds.TYPE_SLICE_END:
                name, start, count = open_.pop(event.track_uuid)
                assert packet.timestamp >= start
                self.slices[track].append((name, start, packet.timestamp, count))
            elif event.type == kinds.TYPE_COUNTER:
                self.counters[track].append((packet.timestamp, int(event.counter_value)))
        assert not open_, "every slice ends"

    def counts(self, track: str) -> Counter:
        total: Counter = Counter()
        for name, _, _, count in self.slices[track]:
            total[name] += count
        return total


@functools.cache
def matmul_trace(tmp: str, engine: str) -> tuple[Path, object]:
    os.environ["TENSIXSIM_ENGINE"] = engine
    try:
        path = Path(tmp) / f"matmul_{engine}.pftrace"
        tile, checks, _ = run_matmul_demo(trace=path)
    finally:
        del os.environ["TENSIXSIM_ENGINE"]
    assert all(checks.values()) and tile.backend.engine == engine
    return path, tile.result()


# Where no compiler builds the native engine (TENSIXSIM_PURE_PYTHON=1 has the same effect), the trace
# tests read the Python engine's trace: both engines write the same one (tested below where both exist).
NATIVE_BUILT = native.library() is not None
needs_native = pytest.mark.skipif(not NATIVE_BUILT, reason="the native engine cannot be built here")


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Read, object]:
    engine = "native" if NATIVE_BUILT else "python"
    path, result = matmul_trace(str(tmp_path_factory.mktemp("trace")), engine)
    return Read(path), result


def test_matmul_trace_has_a_track_per_core_pipe_unit_and_counters(traced):
    trace, _ = traced
    names = set(trace.tracks.values())
    assert {"brisc", "ncrisc", "trisc0", "trisc1", "trisc2", "pipe 0", "pipe 1", "pipe 2"} <= names
    assert {"matrix unit", "unpack unit", "pack unit"} <= names
    assert {"semaphore 1", "SrcA bank 0 owner (0 matrix, 1 unpackers)"} <= names
    assert any(n.startswith("stream 0 CB fill") for n in names)


def test_matmul_trace_slices_count_every_issued_instruction(traced):
    trace, result = traced
    for pipe in result.pipes:
        counts = trace.counts(f"pipe {pipe.thread}")
        issued = sum(n for name, n in counts.items() if not name.startswith("stall: "))
        assert issued == pipe.issued
    matrix = trace.counts("matrix unit")
    assert sum(matrix.values()) == result.units["matrix"].instructions
    assert matrix["MVMUL"] == 8 * 64  # 2x2x2 tile products of 64 MVMULs (4 faces x 4 phases x 4)


def test_matmul_trace_shows_the_math_pipe_waiting_for_src_then_multiplying(traced):
    trace, _ = traced
    slices = trace.slices["pipe 1"]
    stall = next(s for s in slices if s[0] == "stall: MVMUL: SrcA / SrcB bank not handed to the matrix unit")
    first_mvmul = next(s for s in slices if s[0] == "MVMUL")
    assert stall[2] == first_mvmul[1]  # the MVMUL issues the cycle its wait ends
    assert stall[2] - stall[1] > 1000  # waiting for the reader's first tiles


def test_matmul_trace_core_tracks_end_with_each_core(traced):
    trace, result = traced
    for name in ("brisc", "trisc0", "ncrisc"):
        slices = trace.slices[name]
        assert slices[-1][2] == result.cores[name].cycles
        assert all(a[2] <= b[1] for a, b in itertools.pairwise(slices))
    assert any(s[0].startswith("parked: polls register") for s in trace.slices["trisc0"])


def test_matmul_trace_cb_fill_stays_within_the_buffer(traced):
    trace, _ = traced
    (track,) = [n for n in trace.counters if n.startswith("stream 0 CB fill")]
    values = [v for _, v in trace.counters[track]]
    assert max(values) >= 1 and min(values) >= 0 and values[-1] == 0
    assert max(values) <= 16  # never more pages pushed than the buffer holds (kernels.h: pages per CB)


@needs_native
def test_both_engines_write_the_same_trace(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("engines"))
    native, _ = matmul_trace(tmp, "native")
    python, _ = matmul_trace(tmp, "python")
    assert native.read_bytes() == python.read_bytes()


@needs_native
def test_both_engines_write_the_same_vector_unit_trace(tmp_path):
    traces = {}
    for name in ("native", "python"):
        tile = Tile("blackhole", engine=name)
        tile.write(0x6000, assemble(_sfpu_source(), base=0x6000))
        tile.run(release=["trisc0"], trace=tmp_path / f"{name}.pftrace")
        assert tile.backend.engine == name
        if name == "native":
            assert tile.backend.native.instructions == 64 * 64  # none left to the reference code
        traces[name] = (tmp_path / f"{name}.pftrace").read_bytes()
    assert traces["native"] == traces["python"]
    assert sum(Read(tmp_path / "python.pftrace").counts("sfpu unit").values()) == 64 * 64


def test_bottleneck_of_the_demo_matmul_is_the_brisc_reader(traced):
    _, result = traced
    neck = result.bottleneck()
    assert neck.resource == "brisc"
    assert neck.share > 0.8
    assert neck.cycles == result.cycles
    shares = dict(neck.breakdown)
    assert shares.get("matrix unit", 0) < 0.05 * neck.cycles
    assert "bottleneck: brisc" in result.summary()
    # Why: the math pipe waited for Src banks from the unpacker, whose core waited for the reader.
    assert (
        "pipe 1 waited for unpack unit (pipe 0): MVMUL: SrcA / SrcB bank not handed to the matrix unit"
        in neck.chain
    )
    assert neck.chain[-1].startswith(
        "trisc0 waited for brisc: parked: polls register 0xffb4"
    )  # a CB's stream


def test_stall_reasons_name_who_ends_them():
    from tensixsim.observe.events import stall_cause
    from tensixsim.tensix import sync
    from tensixsim.tensix.matrix.unit import SRC_NOT_HANDED
    from tensixsim.tensix.pack.unit import DST_NOT_READABLE
    from tensixsim.tensix.sfpu.floats import MAD_HOLD_REASON
    from tensixsim.tensix.unpack.fetch import still_fetching
    from tensixsim.tensix.unpack.src_banks import bank_not_handed

    cases = {
        f"MVMUL: {SRC_NOT_HANDED}": ("unit", "unpack"),
        f"UNPACR: {bank_not_handed(0, 1)}": ("unit", "matrix"),
        f"UNPACR: {still_fetching(0, 99)}": ("unit", "unpack"),
        f"PACR: {DST_NOT_READABLE}": ("unit", "matrix"),
        f"SEMGET: {sync.stallwait_text(3)}": ("unit", "pack"),  # C3: packer busy
        f"STALLWAIT: {sync.stallwait_text(7)}": ("unit", "unpack"),  # C7: SrcA not valid for the matrix unit
        f"STALLWAIT: {sync.stallwait_text(5)}": ("unit", "matrix"),  # C5: SrcA not released to the unpackers
        f"SEMWAIT: {sync.sem_empty_text(1)}": ("unit", "sync", "other"),  # another pipe's SEMPOST
        f"ATGETM: {sync.mutex_held_text(2, 1)}": ("pipe", 1),
        f"STREAMWAIT: {sync.stream_text(3, 0, 1, 2)}": ("streams",),
        f"SFPMAD: {MAD_HOLD_REASON}": ("self",),
    }
    assert {reason: stall_cause(reason, 2) for reason in cases} == cases


# TRISC0 runs 64 x 64 SFPMADs from one MOP, then waits for its pipe to drain: the vector unit bounds it.
def _sfpu_source() -> str:
    mad = ISA.encode("SFPMAD", lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=4, instr_mod1=0)
    nop = ISA.encode("NOP")
    config = [64, 64, nop, nop, nop, mad, nop, mad, mad]
    lines = ["li s0, 0xFFB80000"]
    for i, word in enumerate(config):
        lines += [f"li t0, 0x{word:08x}", f"sw t0, {4 * i}(s0)"]
    word = ISA.encode("MOP", mop_type=1, loop_count=0, zmask_lo16_or_loop_count=0)
    lines += [f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"]
    lines += ["li s1, 0xFFE80000", "lw t1, 4(s1)", "li a0, 0", "ecall"]  # CoprocessorDoneCheck
    return "\n".join(lines)


def test_bottleneck_of_a_vector_unit_kernel_is_the_sfpu():
    tile = Tile("blackhole")
    tile.write(0x6000, assemble(_sfpu_source(), base=0x6000))
    result = tile.run(max_cycles=1_000_000, release=["trisc0"], observe=True)
    assert result.units["sfpu"].instructions == 64 * 64
    neck = result.bottleneck()
    assert neck.resource == "sfpu unit"
    assert neck.share > 0.9
    assert neck.cycles == result.cycles


def test_a_run_that_stops_on_an_error_leaves_a_complete_trace(tmp_path):
    from tensixsim.errors import CycleLimitExceeded

    tile = Tile("blackhole")
    tile.write(0x6000, assemble(_sfpu_source(), base=0x6000))
    with pytest.raises(CycleLimitExceeded):
        tile.run(max_cycles=1000, release=["trisc0"], trace=tmp_path / "cut.pftrace")
    trace = Read(tmp_path / "cut.pftrace")  # every slice ends
    done = sum(trace.counts("sfpu unit").values())
    assert 0 < done == tile.result().units["sfpu"].instructions < 64 * 64
    assert tile.events is None  # the next run is not observed unless asked


def test_bottleneck_needs_an_observed_run():
    tile = Tile("blackhole")
    tile.write(0x6000, assemble("li a0, 0\n ecall", base=0x6000))
    with pytest.raises(ValueError, match="observe=True"):
        tile.run(release=["trisc0"]).bottleneck()


def test_an_unwritable_trace_path_fails_before_the_run(tmp_path):
    tile = Tile("blackhole")
    tile.write(0x6000, assemble("li a0, 0\n ecall", base=0x6000))
    with pytest.raises(TraceError, match="cannot write the trace file"):
        tile.run(release=["trisc0"], trace=tmp_path / "no such folder" / "out.pftrace")
    assert tile.core("trisc0").state.value == "reset" and tile.cycle == 0


def test_cli_trace_option_and_its_one_line_error(tmp_path):
    elf = link("li a0, 0\n ecall", text=0x6000)
    out = tmp_path / "run.pftrace"
    command = [sys.executable, "-m", "tensixsim", "run", "--trisc0", str(elf)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*command, "--trace", str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "bottleneck: trisc0" in done.stdout
    assert "running" in {s[0] for s in Read(out).slices["trisc0"]}
    bad = subprocess.run(
        [*command, "--trace", str(tmp_path / "missing" / "x.pftrace")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""  # nothing ran
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tensixsim run: --trace: cannot write the trace file")


def test_a_million_instruction_run_writes_a_small_trace(tmp_path):
    """1,000,000 Tensix instructions pushed by TRISC0 (benchmarks/tensix_stream.py's kernel)."""
    count = 1_000_000
    tile = Tile("blackhole")
    tile.load_elf("trisc0", programs.build_tensix_stream(count=count))
    path = tmp_path / "stream.pftrace"
    result = tile.run(max_cycles=10**10, release=["trisc0"], trace=path)
    assert result.pipes[0].issued == count
    assert path.stat().st_size < 20 << 20
    trace = Read(path)
    assert sum(trace.counts("pipe 0").values()) == count


def test_the_sink_writes_in_chunks(tmp_path):
    """The builder never holds more than one chunk of packets: the file grows during the run."""
    from tensixsim.observe.trace import _CHUNK, PerfettoSink

    sink = PerfettoSink(tmp_path / "t.pftrace")
    sink.track("a", "a")
    for i in range(2 * _CHUNK):
        sink.slice("a", 2 * i, 2 * i + 1, f"s{i % 3}")
        assert sink._pending <= _CHUNK
    assert (tmp_path / "t.pftrace").stat().st_size > 0
    sink.close()
    assert [s[0] for s in Read(tmp_path / "t.pftrace").slices["a"][:4]] == ["s0", "s1", "s2", "s0"]


def test_metal_launch_trace_and_its_bad_path(tmp_path, capsys):
    """``tensixsim metal --trace``: the add-one kernel's launch through tt-metal's firmware (3 tiles)."""
    from tensixsim.cli import main
    from tensixsim.metal.examples import add_one_circular_buffers, build_add_one
    from tensixsim.metal.firmware import find_firmware_set, load_firmware
    from tensixsim.metal.wheel import precompiled_firmware

    precompiled = precompiled_firmware(ROOT / ".cache" / "ttnn")
    loaded = load_firmware(Tile("blackhole"), find_firmware_set(precompiled, "blackhole"))
    elfs = build_add_one(loaded, ROOT / "build" / "metal")
    tiles = 3
    (tmp_path / "in.bin").write_bytes(bytes(tiles * 2048))
    argv = ["metal", "--firmware", str(precompiled), "--reader", str(elfs["ncrisc"])]
    argv += ["--compute", str(elfs["trisc0"]), str(elfs["trisc1"]), str(elfs["trisc2"])]
    argv += ["--writer", str(elfs["brisc"]), "--args", "0x100000", "0x400000", str(tiles), "2048"]
    for cb in add_one_circular_buffers():
        argv += ["--cb", f"{cb.index}:{cb.address:#x}:{cb.size}:{cb.pages}"]
    argv += ["--input", f"{tmp_path / 'in.bin'}@0x100000"]
    assert main([*argv, "--trace", str(tmp_path / "metal.pftrace")]) == 0
    trace = Read(tmp_path / "metal.pftrace")
    assert {"brisc", "ncrisc", "trisc0", "trisc1", "trisc2", "unpack unit", "pack unit"} <= set(
        trace.tracks.values()
    )
    packs = trace.counts("pack unit")
    assert sum(packs.values()) >= tiles  # at least one PACR per tile
    # Every core ends the launch parked, waiting for the next go message.
    assert all(trace.slices[core][-1][0].startswith("parked: ") for core in ("brisc", "ncrisc", "trisc0"))
    capsys.readouterr()
    assert main([*argv, "--trace", str(tmp_path / "missing" / "metal.pftrace")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tensixsim metal: --trace: cannot write the trace file")


@pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")
@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_the_summary_names_what_the_native_engine_handed_to_python(arch):
    # The bfp8_b copy: each instruction retires exactly once, in C or through the Python semantics.
    # The copy runs in C throughout; before it, the math pipe takes one word the native engine hands
    # to Python (a SETC16 of CFG_STATE_ID, whose store Python makes), so there is something to name.
    counts = {}
    for engine in ("native", "python"):
        tile = Tile(arch, engine=engine)
        for core, elf in programs.build_copy_bfp8_to_fp16(tiles=2, arch=arch).items():
            tile.load_elf(core, elf)
        copro = tile.coprocessor
        state_id = copro.config.layout.thread_fields["CFG_STATE_ID_StateID"][0]
        word = copro.isa.encode("SETC16", setc16_reg=state_id, setc16_value=0)
        tile.queues[1].entries.append(PushedInstruction(word, "trisc1", 0, 0, True))
        result = tile.run(max_cycles=10**7)
        backend = tile.backend
        issued = sum(p.issued for p in backend.pipes)
        counts[engine] = backend.python_executed
        if engine == "python":
            assert result.python_executed == {}  # everything is Python's: nothing to point out
            assert sum(counts[engine].values()) == issued
            assert "Python semantics" not in result.summary()
        else:
            assert result.python_executed == {"SETC16": 1}
            assert sum(result.python_executed.values()) + backend.native.instructions == issued
            line = next(s for s in result.summary().splitlines() if "Python semantics" in s)
            for name, count in result.python_executed.items():
                assert f"{name} {count}" in line
    assert set(counts["native"]) <= set(counts["python"])
    for name, count in counts["native"].items():
        assert count <= counts["python"][name]


@pytest.mark.skipif(native.library() is None, reason="the native engine cannot be built here")
@pytest.mark.parametrize("arch", ["blackhole", "wormhole"])
def test_the_sdk_add_runs_entirely_in_the_native_engine(arch):
    tile = Tile(arch)
    for core, elf in programs.build_eltwise("add", tiles=2, arch=arch).items():
        tile.load_elf(core, elf)
    result = tile.run(max_cycles=10**7)
    assert result.python_executed == {}
    assert tile.backend.native.instructions == sum(p.issued for p in tile.backend.pipes) > 0
