"""The gdb server driven by a raw remote-protocol client: registers, memory, breakpoints, steps,
watchpoints, interrupts, bad input, and runs that end with the results and cycles of a run
without the debugger."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from asm import L0_OFF, assemble, link
from gdb_client import Client, serve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensixsim
from tensixsim import MemoryFault, Tile
from tensixsim.gdbserver import KilledByDebugger, rsp
from tensixsim.isa import isa_for
from tensixsim.sdk import programs
from tensixsim.sdk.build import ToolchainMissing, find_toolchain

DATA = 0x20000
# BRISC counts t1 to 1000, storing it to DATA and loading DATA+4 on every iteration.
LOOP = """
    lui t0, 0x20
    li t1, 0
    li t2, 1000
loop:
    addi t1, t1, 1
    sw t1, 0(t0)
    lw t3, 4(t0)
    bne t1, t2, loop
    li a0, 0
    ecall
"""
LOOP_HEAD, STORE, LOAD, BRANCH = 0xC, 0x10, 0x14, 0x18
T1, T3, PC = 6, 28, 32


def loop_tile(source: str = LOOP) -> Tile:
    tile = Tile("blackhole")
    tile.write(0, assemble(source))
    return tile


def plain_result(make=loop_tile, **kwargs):
    tile = make()
    return tile, tile.run(**kwargs)


def connect(tile: Tile, **kwargs):
    """Serve ``tile``; a client that takes the swbreak / hwbreak stop reasons, as GDB does."""
    served = serve(tile, **kwargs)
    client = Client(served.port)
    assert b"swbreak+" in client.ask(b"qSupported:swbreak+;hwbreak+")
    return served, client


def assert_same_run(result, reference) -> None:
    assert result.cycles == reference.cycles
    for name, stats in reference.cores.items():
        got = result.cores[name]
        assert (got.cycles, got.instructions, got.exit_code, got.state) == (
            stats.cycles,
            stats.instructions,
            stats.exit_code,
            stats.state,
        ), name


def test_threads_registers_and_memory_at_a_breakpoint() -> None:
    tile = loop_tile()
    served, gdb = connect(tile)
    assert gdb.ask(b"?") == b"T05thread:1;"
    assert gdb.ask(b"qfThreadInfo") == b"m1,2,3,4,5"
    assert gdb.ask(b"qsThreadInfo") == b"l"
    assert b"trisc0" in rsp.from_hex(gdb.ask(b"qThreadExtraInfo,3"))
    assert gdb.ask(b"T5") == b"OK"
    assert gdb.ask(b"T6").startswith(b"E")
    assert gdb.ask(b"Z0,%x,4" % LOOP_HEAD) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
    assert gdb.register(PC) == LOOP_HEAD
    assert gdb.register(T1) == 0
    regs = gdb.ask(b"g")
    assert len(regs) == 33 * 8
    assert int.from_bytes(rsp.from_hex(regs[8 * 5 : 8 * 6]), "little") == DATA  # t0 = x5
    assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
    assert gdb.register(T1) == 1
    assert gdb.ask(b"m%x,4" % DATA) == rsp.hex_word(1)
    # Writes: memory the loop loads next, and the counter.
    assert gdb.ask(b"M%x,4:%s" % (DATA + 4, rsp.hex_word(42))) == b"OK"
    assert gdb.ask(b"P%x=%s" % (T1, rsp.hex_word(997))) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
    assert gdb.register(T3) == 42
    assert gdb.register(T1) == 998
    # X carries binary data, escaped: "#", "$", "}" and "*" among it.
    assert gdb.ask(b"X%x,4:#}$*" % (DATA + 8)) == b"OK"
    assert gdb.ask(b"m%x,4" % (DATA + 8)) == b"237d242a"
    assert gdb.ask(b"z0,%x,4" % LOOP_HEAD) == b"OK"
    # A hardware breakpoint (Z1) works as a software one.
    assert gdb.ask(b"Z1,%x,4" % LOAD) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;hwbreak:;"
    assert gdb.register(PC) == LOAD
    assert gdb.ask(b"z1,%x,4" % LOAD) == b"OK"
    assert gdb.ask(b"c") == b"W00"
    result = served.result
    assert result.cores["brisc"].exit_code == 0
    assert int.from_bytes(tile.read(DATA, 4), "little") == 1000
    assert result.cores["brisc"].instructions < plain_result()[1].cores["brisc"].instructions


def test_a_run_stopped_at_breakpoints_and_steps_has_the_cycles_of_a_plain_run() -> None:
    _, reference = plain_result()
    tile = loop_tile()
    served, gdb = connect(tile)
    assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
    for _ in range(3):
        assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
        assert gdb.register(PC) == BRANCH
    # Single steps, as "s" and as vCont: the branch goes back to the loop head.
    assert gdb.ask(b"s") == b"T05thread:1;"
    assert gdb.register(PC) == LOOP_HEAD
    assert gdb.ask(b"vCont;s:1;c") == b"T05thread:1;"
    assert gdb.register(PC) == STORE
    assert gdb.ask(b"Hc1") == b"OK"
    assert gdb.ask(b"S05") == b"T05thread:1;"
    assert gdb.register(PC) == LOAD
    assert gdb.ask(b"z0,%x,4" % BRANCH) == b"OK"
    assert gdb.ask(b"vCont;c") == b"W00"
    assert_same_run(served.result, reference)


def test_write_and_read_watchpoints_stop_before_the_access() -> None:
    _, reference = plain_result()
    tile = loop_tile()
    tile.write(DATA + 4, rsp.from_hex(rsp.hex_word(7)))
    served, gdb = connect(tile)
    assert gdb.ask(b"Z2,%x,4" % DATA) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;watch:%x;" % DATA
    # GDB's RISC-V watchpoints are non-steppable: the store has not happened yet.
    assert gdb.register(PC) == STORE
    assert gdb.ask(b"m%x,4" % DATA) == rsp.hex_word(0)
    assert gdb.ask(b"z2,%x,4" % DATA) == b"OK"
    assert gdb.ask(b"s") == b"T05thread:1;"
    assert gdb.register(PC) == LOAD
    assert gdb.ask(b"m%x,4" % DATA) == rsp.hex_word(1)
    assert gdb.ask(b"Z3,%x,4" % (DATA + 4)) == b"OK"
    t3 = gdb.register(T3)
    assert gdb.ask(b"c") == b"T05thread:1;rwatch:%x;" % (DATA + 4)
    assert gdb.register(PC) == LOAD
    assert gdb.register(T3) == t3 == 0  # the load's result is not written yet
    assert gdb.ask(b"z3,%x,4" % (DATA + 4)) == b"OK"
    assert gdb.ask(b"Z4,%x,4" % DATA) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;awatch:%x;" % DATA
    assert gdb.register(PC) == STORE
    assert gdb.ask(b"z4,%x,4" % DATA) == b"OK"
    assert gdb.ask(b"c") == b"W00"
    assert_same_run(served.result, reference)


def test_memory_outside_ram_and_side_effect_free_registers_is_an_error() -> None:
    tile = loop_tile()
    tile.streams.write(8, 10, 5)
    tile.local_ram["brisc"][:4] = [1, 2, 3, 4]
    served, gdb = connect(tile)
    assert gdb.ask(b"mf0000000,4") == b"E0e"
    assert gdb.ask(b"m%x,8" % (tile.arch.l1_size - 4)) == b"E0e"  # runs off the end of L1
    assert gdb.ask(b"mffb00000,4") == b"01020304"  # BRISC's own local RAM
    assert gdb.ask(b"mffb14000,4") == b"01020304"  # the same RAM through its alias
    assert gdb.ask(b"mffb48028,4") == rsp.hex_word(5)  # stream 8, tiles received
    assert gdb.ask(b"mffb4802a,2") == b"0000"
    assert gdb.ask(b"mffe40000,4") == b"E0e"  # a push port: reading it is not side-effect free
    assert gdb.ask(b"Hg3") == b"OK"
    assert gdb.ask(b"mffb80000,4") == b"E0e"  # TRISC0's MOP configuration: reading is undefined
    assert gdb.ask(b"Hg1") == b"OK"
    assert gdb.ask(b"Mffb48028,4:00000000") == b"E0e"  # MMIO is not written
    assert gdb.ask(b"Mf0000000,1:00") == b"E0e"
    assert gdb.ask(b"Z2,f0000000,4") == b"E0e"  # watchpoints cover L1
    assert gdb.ask(b"c") == b"W00"
    assert served.result.cores["brisc"].exit_code == 0
    assert tile.streams.read(8, 10) == 5


MALFORMED = [
    b"m",
    b"mzz,4",
    b"m0",
    b"m0,",
    b"m-1,4",
    b"M0,4:zz",
    b"M0,4:00",
    b"X0,4:ab",
    b"p",
    b"p99",
    b"pzz",
    b"P6",
    b"P6=12",
    b"G1234",
    b"Hg99",
    b"Hx1",
    b"Z0",
    b"Z0,zz,4",
    b"Z0,2,4",
    b"Z0,10,2",
    b"Z2,0,0",
    b"qThreadExtraInfo,99",
    b"qXfer:features:read:target.xml:zz",
    b"qRcmd,zz",
    b"vCont;x",
    b"T",
]


def test_malformed_requests_get_errors_and_the_run_goes_on() -> None:
    _, reference = plain_result()
    tile = loop_tile()
    served, gdb = connect(tile)
    for packet in MALFORMED:
        reply = gdb.ask(packet)
        assert reply.startswith(b"E"), (packet, reply)
    assert gdb.ask(b"qUnknownThing") == b""
    assert gdb.ask(b"!") == b""
    # A corrupt checksum is refused with "-"; noise between packets is ignored.
    gdb.send_raw(b"$g#00")
    assert gdb.event() == rsp.Ack(False)
    gdb.send_raw(b"garbage")
    gdb.send_raw(bytes([rsp.INTERRUPT]))  # the tile is stopped: nothing to interrupt
    assert gdb.ask(b"?") == b"T05thread:1;"
    assert gdb.ask(b"c") == b"W00"
    assert_same_run(served.result, reference)


def test_the_target_description_describes_rv32() -> None:
    served, gdb = connect(loop_tile())
    assert b"qXfer:features:read+" in gdb.ask(b"qSupported:multiprocess+;swbreak+")
    xml, offset = b"", 0
    while True:
        chunk = gdb.ask(b"qXfer:features:read:target.xml:%x,40" % offset)
        assert chunk[:1] in (b"m", b"l")
        xml += chunk[1:]
        offset += len(chunk) - 1
        if chunk[:1] == b"l":
            break
    assert b"<architecture>riscv:rv32</architecture>" in xml
    assert xml.count(b'bitsize="32"') == 33
    assert b'name="pc"' in xml and b'name="zero"' in xml
    gdb.ask(b"D")
    served.join()


def test_disconnecting_mid_run_lets_the_run_finish() -> None:
    _, reference = plain_result()
    tile = loop_tile()
    served, gdb = connect(tile)
    assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
    assert gdb.ask(b"c").startswith(b"T05")
    gdb.close()
    assert_same_run(served.result, reference)
    assert int.from_bytes(tile.read(DATA, 4), "little") == 1000


def test_detach_lets_the_run_finish() -> None:
    _, reference = plain_result()
    served, gdb = connect(loop_tile())
    assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
    assert gdb.ask(b"c").startswith(b"T05")
    assert gdb.ask(b"D") == b"OK"
    assert_same_run(served.result, reference)


def test_kill_stops_the_run_with_a_named_error() -> None:
    served, gdb = connect(loop_tile())
    assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
    assert gdb.ask(b"c").startswith(b"T05")
    gdb.send(b"k")
    with pytest.raises(KilledByDebugger):
        _ = served.result


LONG_LOOP = """
    lui t0, 0x20
    li t1, 0
    lui t2, 0x100
loop:
    addi t1, t1, 1
    sw t1, 0(t0)
    bne t1, t2, loop
    ecall
"""


def test_an_interrupt_stops_the_running_tile() -> None:
    _, reference = plain_result(lambda: loop_tile(LONG_LOOP))
    tile = loop_tile(LONG_LOOP)
    served, gdb = connect(tile)
    gdb.send(b"c")
    gdb.send_raw(bytes([rsp.INTERRUPT]))
    assert gdb.reply() == b"T02thread:1;"
    counter = gdb.register(T1)
    assert 0 < counter < 0x100000
    assert gdb.ask(b"c") == b"W00"
    assert_same_run(served.result, reference)


def test_a_client_going_away_while_the_tile_runs_lets_the_run_finish() -> None:
    _, reference = plain_result(lambda: loop_tile(LONG_LOOP))
    served, gdb = connect(loop_tile(LONG_LOOP))
    gdb.send(b"c")
    gdb.send_raw(b"$m0,4#")  # half a packet, then nothing more
    gdb.close()
    assert_same_run(served.result, reference)


def test_a_fault_is_shown_as_a_stop_then_raised() -> None:
    tile = loop_tile("li t0, 0xF0000000\n li t1, 5\n sw t1, 0(t0)\n ecall")
    served, gdb = connect(tile)
    assert gdb.ask(b"c") == b"T0bthread:1;"
    assert any("MemoryFault" in text for text in gdb.console)
    assert gdb.register(PC) == 0x8  # the faulting store (lui, li, sw), not retired
    assert gdb.ask(b"c") == b"X0b"
    with pytest.raises(MemoryFault):
        _ = served.result


def test_monitor_commands_show_tensix_state() -> None:
    tile = loop_tile()
    regs = tile.coprocessor.regs
    regs.dst[3] = np.arange(16, dtype=np.uint16) + 0x100
    tile.coprocessor.sync.sem_value[2], tile.coprocessor.sync.sem_max[2] = 3, 4
    tile.coprocessor.sfpu.lreg[4, :] = 0x3FC00000  # 1.5 in every lane
    regs.srcb[1, 5, :] = 0x7
    name = "ALU_FORMAT_SPEC_REG0_SrcA"
    tile.coprocessor.config.write_field(name, 0, 5)
    tile.streams.write(3, 8, 9)
    served, gdb = connect(tile)

    def monitor(command: str) -> str:
        gdb.console.clear()
        assert gdb.ask(b"qRcmd," + rsp.hex_bytes(command.encode())) == b"OK"
        return "".join(gdb.console)

    assert monitor("dst 3") == "   3: " + " ".join(f"{0x100 + i:04x}" for i in range(16)) + "\n"
    assert "sem 2: 3 / 4" in monitor("sem")
    assert monitor("lreg 4 fp32") == "   4: " + " ".join(["1.5"] * 32) + "\n"
    assert monitor("srcb 1 5").startswith("   5: 00000007 ")
    assert f"{name}[state 0] = 5" in monitor(f"cfg {name}")
    assert "tiles acked): 9" in monitor("stream 3")
    assert "brisc" in monitor("cores") and "pipe 0: 0/" in monitor("queues")
    assert monitor("nonsense").startswith("error: unknown monitor command")
    assert monitor("dst 2000").startswith("error:")
    assert monitor("lreg 4 nonsense").startswith("error: unknown format")
    assert gdb.ask(b"c") == b"W00"
    served.join()


# ---------------------------------------------------------------- a kernel pushing Tensix instructions


def _eltwise_tile() -> Tile:
    try:
        find_toolchain()
    except ToolchainMissing as missing:  # pragma: no cover - the container has the toolchain
        pytest.skip(str(missing))
    elfs = programs.build_eltwise("add", tiles=2)
    rng = np.random.default_rng(3)
    a = [rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2)]
    b = [rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2)]
    tile = Tile("blackhole")
    for core, elf in elfs.items():
        tile.load_elf(core, elf)
    bf16 = [programs.round_fp32_to_bf16(x) for x in a], [programs.round_fp32_to_bf16(x) for x in b]
    tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(bf16[0]))
    tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(bf16[1]))
    return tile


def test_breakpoints_in_every_core_of_a_tensix_kernel_change_no_result_or_cycle() -> None:
    reference_tile = _eltwise_tile()
    reference = reference_tile.run(max_cycles=400_000)
    tile = _eltwise_tile()
    served, gdb = connect(tile, max_cycles=400_000)
    mains = {core.symbols["main"]: core.index + 1 for core in tile.cores}
    for address in mains:
        assert gdb.ask(b"Z0,%x,4" % address) == b"OK"
    hit, steps = set(), 0
    reply = gdb.ask(b"c")
    while reply.startswith(b"T"):
        thread = gdb.stop_thread(reply)
        if b"swbreak" in reply:
            hit.add(thread)
            assert mains[gdb.register(PC)] == thread
            assert gdb.ask(b"Hc%x" % thread) == b"OK"
            steps = 3  # step a few instructions of that core (Tensix words included)
        if steps:
            steps -= 1
            reply = gdb.ask(b"s")
        else:
            reply = gdb.ask(b"c")
    assert reply == b"W00"
    assert hit == set(mains.values())
    assert_same_run(served.result, reference)
    assert tile.read(programs.KERNEL_DST, 4096) == reference_tile.read(programs.KERNEL_DST, 4096)


# ---------------------------------------------------------------- the command line


def test_tensixsim_run_gdb_waits_for_gdb_and_prints_the_plain_runs_summary() -> None:
    elf = link(LOOP)
    _, reference = plain_result()
    env = dict(os.environ, PYTHONPATH=str(Path(tensixsim.__file__).resolve().parents[1]))
    command = [sys.executable, "-m", "tensixsim", "run", "--brisc", str(elf), "--gdb", "0"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            first = proc.stdout.readline()
            assert first.startswith("waiting for gdb on port "), first
            gdb = Client(int(first.split()[5]))
            assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
            # No qSupported asked for the swbreak stop reason: the stop reply does not give it.
            assert gdb.ask(b"c") == b"T05thread:1;"
            assert gdb.ask(b"z0,%x,4" % BRANCH) == b"OK"
            assert gdb.ask(b"c") == b"W00"
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"total: {reference.cycles} cycles" in out


NCRISC_LOOP = LOOP.replace("lui t0, 0x20", "lui t0, 0x21")  # the same loop on other data


def test_a_core_standing_on_a_new_breakpoint_stops_there_without_running_on() -> None:
    # NCRISC's slice ended somewhere while BRISC stopped at its breakpoint; a breakpoint put where
    # NCRISC stands stops it there, before it executes anything more (it is not the stopped core).
    tile = Tile("blackhole", quantum=37)
    tile.write(0, assemble(LOOP))
    tile.write(0x12000, assemble(NCRISC_LOOP, base=0x12000))
    served, gdb = connect(tile, release=["brisc", "ncrisc"])
    assert gdb.ask(b"Z0,%x,4" % BRANCH) == b"OK"
    counter = 0
    for _ in range(300):  # until NCRISC is well into its loop
        assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
        assert gdb.ask(b"Hg2") == b"OK"
        pc, counter = gdb.register(PC), gdb.register(T1)
        assert gdb.ask(b"Hg1") == b"OK"
        if counter > 3 and pc != LOOP_HEAD + 0x12000:
            break
    assert counter > 3
    assert gdb.ask(b"Hg2") == b"OK"
    assert gdb.ask(b"z0,%x,4" % BRANCH) == b"OK"
    assert gdb.ask(b"Z0,%x,4" % pc) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:2;swbreak:;"
    assert (gdb.register(PC), gdb.register(T1)) == (pc, counter)
    assert gdb.ask(b"z0,%x,4" % pc) == b"OK"
    assert gdb.ask(b"c") == b"W00"
    assert served.result.cores["ncrisc"].exit_code == 0


# Request kinds that only look or set things up (resuming, detaching and killing are left out).
_SAFE_KINDS = st.sampled_from(
    [b"m", b"M", b"X", b"p", b"P", b"g", b"G", b"H", b"T", b"q", b"Z", b"z", b"?", b"Q"]
)


@pytest.fixture(scope="module")
def stopped_session():
    """One session for every example: stopped before the run, killed at the end."""
    served, gdb = connect(loop_tile())
    yield gdb
    gdb.send(b"k")
    with pytest.raises(KilledByDebugger):
        _ = served.result


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_SAFE_KINDS, st.binary(max_size=24)), min_size=1, max_size=12))
def test_random_requests_never_break_the_server(stopped_session, requests: list[tuple[bytes, bytes]]) -> None:
    gdb = stopped_session
    for kind, body in requests:
        assert isinstance(gdb.ask(kind + body), bytes)
    assert gdb.ask(b"?") == b"T05thread:1;"


# BRISC counts a word at 0x12800 up to 40, a store (at pc 0x14) every ~200 cycles; NCRISC polls it
# until it reaches 30.
_COUNTER_AND_POLLER = (
    """
        li t0, 0x12800
        li t1, 0
        li t2, 40
    loop:
        addi t1, t1, 1
        sw t1, 0(t0)
        li t4, 100
    delay:
        addi t4, t4, -1
        bnez t4, delay
        bne t1, t2, loop
        ecall
    """,
    L0_OFF + "li t0, 0x12800\n li t2, 30\npoll:\n lw t1, 0(t0)\n bltu t1, t2, poll\n ecall",
)


def test_a_watched_store_to_a_polled_word_stops_before_it_reaches_the_poller() -> None:
    # NCRISC polls a word BRISC counts up in, slowly: NCRISC's loop parks on it, the page is
    # write-protected in BRISC, and BRISC's stores reach the tile and wake the poller. A watched one
    # is cancelled before it does: the poller stays parked, and the run keeps its cycles. (Without
    # L1 ordering: with it, NCRISC woken by one store catches up only as far as BRISC's next store,
    # so it is running whenever BRISC stops before one; see the test after this.)
    brisc, ncrisc = _COUNTER_AND_POLLER
    store, shared = 0x14, 0x12800

    def make() -> Tile:
        tile = Tile("blackhole", l1_order=False)  # (with a tiny quantum the loop would not park)
        tile.write(0, assemble(brisc))
        tile.write(0x12000, assemble(ncrisc, base=0x12000))
        return tile

    reference = make().run(release=["brisc", "ncrisc"])
    tile = make()
    served, gdb = connect(tile, release=["brisc", "ncrisc"])
    assert gdb.ask(b"Z0,%x,4" % store) == b"OK"
    for _ in range(40):  # until NCRISC is parked on the word (BRISC is stopped: its state is safe to read)
        assert gdb.ask(b"c") == b"T05thread:1;swbreak:;"
        if tile.core("ncrisc").state.value == "waiting":
            break
    assert tile.core("ncrisc").state.value == "waiting"
    assert shared // 0x1000 in tile.core("brisc").protected_pages
    before = gdb.register(T1)
    assert gdb.ask(b"z0,%x,4" % store) == b"OK"
    assert gdb.ask(b"Z2,%x,4" % shared) == b"OK"
    assert gdb.ask(b"c") == b"T05thread:1;watch:%x;" % shared
    assert gdb.register(PC) == store
    assert gdb.ask(b"m%x,4" % shared) == rsp.hex_word(before - 1)  # not stored yet
    assert tile.core("ncrisc").state.value == "waiting"
    assert gdb.ask(b"z2,%x,4" % shared) == b"OK"
    assert gdb.ask(b"s") == b"T05thread:1;"
    assert gdb.ask(b"m%x,4" % shared) == rsp.hex_word(before)
    assert gdb.ask(b"c") == b"W00"
    assert_same_run(served.result, reference)


@pytest.mark.parametrize("order", ["full", "pages"])
def test_stopping_before_every_store_to_a_polled_word_keeps_the_ordered_run(order) -> None:
    # With L1 ordering NCRISC is woken by each of BRISC's stores and catches up with BRISC's next
    # one; stopping BRISC before each store (a breakpoint) changes nothing of the run.
    brisc, ncrisc = _COUNTER_AND_POLLER

    def make() -> Tile:
        tile = Tile("blackhole", l1_order=order)
        tile.write(0, assemble(brisc))
        tile.write(0x12000, assemble(ncrisc, base=0x12000))
        return tile

    reference = make().run(release=["brisc", "ncrisc"])
    assert reference.cores["ncrisc"].cycles > 29 * 200  # it saw the count reach 30 no earlier
    tile = make()
    served, gdb = connect(tile, release=["brisc", "ncrisc"])
    assert gdb.ask(b"Z0,%x,4" % 0x14) == b"OK"
    stops = 0
    while (answer := gdb.ask(b"c")) == b"T05thread:1;swbreak:;":
        stops += 1
    assert answer == b"W00" and stops == 40
    assert_same_run(served.result, reference)


def test_single_steps_over_tensix_words_and_a_push_store_on_a_trisc() -> None:
    # TRISC0: an inline Tensix word (trapped and pushed), a push by store, then ecall. Each step
    # retires exactly one instruction, and the pushes happen as they do without the debugger.
    nop = isa_for("blackhole").encode("NOP")
    source = f"""
        li a0, 7
        .word 0x{((nop << 2) | (nop >> 30)) & 0xFFFFFFFF:08x}
        li t0, 0xFFE40000
        li t1, 0x{nop:08x}
        sw t1, 0(t0)
        li a0, 0
        ecall
    """

    def make() -> Tile:
        tile = Tile("blackhole", record_pushes=True)
        tile.write(0x6000, assemble(source, base=0x6000))
        return tile

    reference_tile = make()
    reference = reference_tile.run(release=["trisc0"])
    tile = make()
    served, gdb = connect(tile, release=["trisc0"])
    assert gdb.ask(b"Z0,6000,4") == b"OK"
    assert gdb.ask(b"c") == b"T05thread:3;swbreak:;"
    assert gdb.ask(b"z0,6000,4") == b"OK"
    assert gdb.ask(b"Hc3") == b"OK"
    pcs = [gdb.register(PC)]
    for _ in range(5):
        assert gdb.ask(b"s") == b"T05thread:3;"
        pcs.append(gdb.register(PC))
    assert pcs == [0x6000, 0x6004, 0x6008, 0x600C, 0x6010, 0x6014]
    assert [p.word for p in tile.pushed(0)] == [nop, nop]
    assert gdb.ask(b"c") == b"W00"
    assert_same_run(served.result, reference)
    assert [(p.word, p.pc, p.cycle) for p in tile.pushed(0)] == [
        (p.word, p.pc, p.cycle) for p in reference_tile.pushed(0)
    ]
