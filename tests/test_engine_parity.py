"""The end-to-end kernels give the same results and the same cycles on both engines.

Each workload runs once with the native engine and once with the Python reference engine (selected
with ``TENSIXSIM_ENGINE``); the whole run result (cycles per core, instructions, pushes; per pipe
issued and stalled cycles by instruction; per unit instructions and busy cycles) and L1 must be equal.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import pytest
from asm import assemble
from test_metal_launch import BUILD, add_one_reference, booted, firmware  # noqa: F401
from test_sdk_kernels import eltwise_inputs, run_kernel
from test_sfpu_kernels import run_sfpu

from tensixsim import Tile
from tensixsim.demo import run_demo, run_matmul_demo
from tensixsim.dram import InterleavedBuffer, tilize, untilize
from tensixsim.isa import isa_for
from tensixsim.metal.examples import add_one_program, build_add_one
from tensixsim.metal.launch import launch_program
from tensixsim.sdk import programs
from tensixsim.tensix import native

pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler: the native engine is absent")


def both_engines(monkeypatch: pytest.MonkeyPatch, workload: Callable[[], Tile]) -> list[tuple]:
    outcomes = []
    for engine in ("native", "python"):
        monkeypatch.setenv("TENSIXSIM_ENGINE", engine)
        tile = workload()
        assert tile.backend.engine == engine
        outcomes.append((tile.result(), zlib.crc32(tile.l1)))
    return outcomes


def assert_same(outcomes: list[tuple]) -> None:
    (native_result, native_l1), (python_result, python_l1) = outcomes
    assert native_result == python_result
    assert native_l1 == python_l1


def test_demo_and_matmul_demo(monkeypatch):
    assert_same(both_engines(monkeypatch, lambda: run_demo(2000)[0]))
    assert_same(both_engines(monkeypatch, lambda: run_matmul_demo()[0]))


def test_eltwise_kernel(monkeypatch):
    a, b = eltwise_inputs(7, 4)
    elfs = programs.build_eltwise("add", tiles=4, phases=4)
    inputs = {programs.KERNEL_SRC0: programs.tiles_to_l1(a), programs.KERNEL_SRC1: programs.tiles_to_l1(b)}
    assert_same(both_engines(monkeypatch, lambda: run_kernel(elfs, inputs)[0]))


def test_sfpu_exp_kernel(monkeypatch):
    rng = np.random.default_rng(3)
    inputs = [(rng.standard_normal((32, 32)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)]
    outcomes = []
    for engine in ("native", "python"):
        with monkeypatch.context() as patch:
            patch.setenv("TENSIXSIM_ENGINE", engine)
            outs, tile, _ = run_sfpu("exp", inputs, "fp32", patch)
            outcomes.append((tile.result(), zlib.crc32(tile.l1), [o.tobytes() for o in outs]))
    assert outcomes[0] == outcomes[1]


def test_add_one_through_the_firmware(monkeypatch, firmware):  # noqa: F811
    rng = np.random.default_rng(2)
    values = rng.standard_normal((64, 64)).astype(np.float32) * 100
    matrix = (values.view(np.uint32) >> 16).astype(np.uint16)  # 4 tiles of bf16

    def workload() -> Tile:
        tile, loaded = booted(firmware)
        banks = loaded.firmware.debug("brisc").array_length("dram_bank_to_noc_xy") // 2
        source = InterleavedBuffer(0x100000, 2048, 4, banks)
        target = InterleavedBuffer(0x400000, 2048, 4, banks)
        source.write(tile.noc.dram, tilize(matrix))
        program = add_one_program(build_add_one(loaded, BUILD), source.base, target.base, 4)
        launch_program(tile, loaded, program)
        got = untilize(np.frombuffer(target.read(tile.noc.dram), np.uint16), 64, 64)
        assert (got == add_one_reference(matrix)).all()
        return tile

    assert_same(both_engines(monkeypatch, workload))


@pytest.mark.parametrize("fused", [False, True])
def test_two_cores_pushing_into_one_pipe_enter_its_queue_in_cycle_order(monkeypatch, fused):
    """BRISC stores a NOP into pipe 0 every 20-odd cycles while TRISC0 pushes 400 words into the same
    pipe. Neither may run ahead of the other with its pushes (Tile.shared_push_limit): the queue takes
    them in cycle order, so both engines give the same cycles at every quantum, and TRISC0 is done
    about when the pipe has taken its 460 words, not held behind BRISC's later ones. Fused, TRISC0
    keeps the queue full: every push waits for room, the wait bounded by the same limit."""
    isa = isa_for("blackhole")
    fields = dict(payload_sig_sel_size=0, payload_sig_sel=5, set_signals_mode=0, reg_index_16b=4)
    setdmareg, nop = isa.encode("SETDMAREG", **fields), isa.encode("NOP")
    inline = [f".word {((w << 2) | (w >> 30)) & 0xFFFFFFFF:#x}" for w in [setdmareg] * 7 + [nop] * 3]
    fusion = [] if fused else ["li t0, 0x40000", "csrs 0x7c0, t0"]  # DisTriscCache
    trisc = "\n".join([*fusion, "li t2, 40", "1:", *inline, "addi t2, t2, -1", "bnez t2, 1b", "ecall"])
    brisc = f"""
        li t0, {0xFFE40000:#x}
        li t1, {nop:#x}
        li t2, 60
    1:  sw t1, 0(t0)
        li t3, 17
    2:  addi t3, t3, -1
        bnez t3, 2b
        addi t2, t2, -1
        bnez t2, 1b
        ecall
    """
    runs = {}
    for quantum in (100, 1000):

        def workload(quantum: int = quantum) -> Tile:
            tile = Tile("blackhole", quantum=quantum, record_pushes=True)
            tile.write(0x6000, assemble(trisc, base=0x6000))
            tile.write(0, assemble(brisc, base=0))
            tile.run(max_cycles=100_000, release=["brisc", "trisc0"])
            entries = tile.pushed(0)
            assert len(entries) == 460
            # In cycle order from when both have pushed into the pipe: before that, neither waits for
            # the other (a first push into a pipe is not ordered with the other core's).
            both = max(next(i for i, e in enumerate(entries) if e.core == c) for c in ("brisc", "trisc0"))
            pushed = [entry.cycle for entry in entries[both:]]
            assert pushed == sorted(pushed)
            return tile

        outcomes = both_engines(monkeypatch, workload)
        assert_same(outcomes)
        runs[quantum] = [result.cores["trisc0"].cycles for result, _ in outcomes]
    assert runs[100] == runs[1000]
    assert all(cycles < 600 for cycles in runs[100])


def test_a_core_fusing_pushes_into_a_full_queue(monkeypatch):
    """TRISC0 fuses its inline words four a cycle (cfg0 out of reset) faster than its pipe takes
    them (SETDMAREG, two cycles each): the queue fills and every further push waits for room, which
    the native engine decides without Python. Both engines agree, cycle for cycle."""
    fields = dict(payload_sig_sel_size=0, payload_sig_sel=5, set_signals_mode=0, reg_index_16b=4)
    setdmareg = isa_for("blackhole").encode("SETDMAREG", **fields)
    word = f".word {((setdmareg << 2) | (setdmareg >> 30)) & 0xFFFFFFFF:#x}"

    def workload() -> Tile:
        tile = Tile("blackhole")
        tile.write(0x6000, assemble("\n".join([word] * 300 + ["ecall"]), base=0x6000))
        tile.run(max_cycles=100_000, release=["trisc0"])
        return tile

    outcomes = both_engines(monkeypatch, workload)
    assert_same(outcomes)
    # The pipe, not the core (75 cycles of fused groups), sets the pace: the core is done once its
    # last word is in the 32-word queue.
    assert outcomes[0][0].cores["trisc0"].cycles >= 300 - 32


def test_fused_words_waiting_for_room_are_dated_alike(monkeypatch):
    """A loop of ten inline words (groups of four, four, two) into a full queue: a word of a fused
    group finds room only from the cycle after the pipe frees a slot, on both engines, whether the
    hooks or Python took the push before it (the pushes' cycles, not only the run's, are equal)."""
    isa = isa_for("blackhole")
    fields = dict(payload_sig_sel_size=0, payload_sig_sel=5, set_signals_mode=0, reg_index_16b=4)
    words = [isa.encode("SETDMAREG", **fields)] * 7 + [isa.encode("NOP")] * 3
    inline = [f".word {((w << 2) | (w >> 30)) & 0xFFFFFFFF:#x}" for w in words]
    program = "\n".join(["li t2, 40", "1:", *inline, "addi t2, t2, -1", "bnez t2, 1b", "ecall"])
    dates = []

    def workload() -> Tile:
        tile = Tile("blackhole", record_pushes=True)
        tile.write(0x6000, assemble(program, base=0x6000))
        tile.run(max_cycles=100_000, release=["trisc0"])
        dates.append([entry.cycle for entry in tile.pushed(0)])
        return tile

    assert_same(both_engines(monkeypatch, workload))
    assert len(dates[0]) == 400 and dates[0] == dates[1]


@pytest.mark.parametrize("quantum", [1, 2, 3, 5, 1000])
def test_fused_words_cut_by_a_slice_boundary_keep_their_cycle(monkeypatch, quantum):
    """Inline NOPs fused four a cycle, the slices cut at every quantum: a word fused with the words
    that ended the slice before is dated in their cycle, before its own slice's start (once a
    garbage cycle 2**32 later on the Python engine, which never issued it). Both engines, every
    quantum: the same run as with long slices."""
    nop = isa_for("blackhole").encode("NOP")
    word = f".word {((nop << 2) | (nop >> 30)) & 0xFFFFFFFF:#x}"
    program = "\n".join([word] * 24 + ["li t0, 0xFFE80004", "sw zero, 0(t0)", "lw t1, 0(t0)", "ecall"])

    def workload(q: int) -> Tile:
        tile = Tile("blackhole", quantum=q)
        tile.write(0x6000, assemble(program, base=0x6000))
        tile.run(max_cycles=100_000, release=["trisc0"])
        return tile

    reference = both_engines(monkeypatch, lambda: workload(1000))[0]
    assert both_engines(monkeypatch, lambda: workload(quantum)) == [reference, reference]
