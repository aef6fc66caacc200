"""Long runs: the progress line (only on a terminal, only after a while) and stopping on Ctrl-C."""

from __future__ import annotations

import io
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from asm import link

from tensixsim import RunInterrupted, Tile
from tensixsim.observe.progress import INTERVAL, ProgressLine, progress_for, status_line

ROOT = Path(__file__).resolve().parent.parent
SPIN = "loop:\n addi a0, a0, 1\n j loop"  # never finishes and never looks idle (a0 keeps changing)


def _counting(iterations: int) -> Path:
    """A TRISC0 program that counts to ``iterations`` and exits with the low bits of the count."""
    return link(
        f"li t0, {iterations}\nloop:\n addi a0, a0, 1\n bne a0, t0, loop\n andi a0, a0, 0x7f\n ecall",
        text=0x6000,
    )


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_names_cycle_rate_and_live_cores():
    tile = Tile("blackhole")
    tile.load_elf("trisc0", link("li a0, 0\n ecall", text=0x6000))
    tile.run(release=["trisc0"])
    line = status_line(tile, 2_500_000.0, 200)
    assert line == f"cycle {tile.cycle:,}  2.50 Mcyc/s  trisc0 done"  # cores in reset are left out
    assert status_line(tile, None, 200) == f"cycle {tile.cycle:,}  trisc0 done"
    assert len(status_line(tile, 1.0, 12)) == 12


def test_the_line_waits_then_redraws_at_most_every_interval_and_is_erased():
    now = [0.0]
    out = FakeTerminal()
    line = ProgressLine(out, clock=lambda: now[0], delay=2.0)
    tile = Tile("blackhole")
    line.update(tile)
    now[0] = 1.9
    line.update(tile)
    assert out.getvalue() == ""  # nothing during the first two seconds
    now[0] = 2.0
    line.update(tile)
    assert out.getvalue() == "\rcycle 0\x1b[K"
    now[0] = 2.0 + INTERVAL / 2
    line.update(tile)
    assert out.getvalue().count("\r") == 1  # too soon to redraw
    now[0] = 2.0 + INTERVAL
    line.update(tile)
    assert out.getvalue().endswith("\rcycle 0  0 cyc/s\x1b[K")
    line.close()
    assert out.getvalue().endswith("\r\x1b[K")


def test_no_progress_line_off_a_terminal():
    assert progress_for(io.StringIO()) is None
    assert progress_for(None) is None
    assert isinstance(progress_for(FakeTerminal()), ProgressLine)


def test_an_interrupted_run_resumes_to_the_same_end():
    elf = _counting(15_000_000)
    reference = Tile("blackhole")
    reference.load_elf("trisc0", elf)
    expected = reference.run(release=["trisc0"], max_cycles=10**9)

    tile = Tile("blackhole")
    tile.load_elf("trisc0", elf)
    timer = threading.Timer(0.05, tile.interrupt)
    timer.start()
    with pytest.raises(RunInterrupted) as caught:
        tile.run(release=["trisc0"], max_cycles=10**9)
    timer.join()
    partial = caught.value.result
    assert partial.interrupted and "(interrupted)" in partial.summary()
    assert partial.cores["trisc0"].state == "running"
    assert 0 < partial.cycles == caught.value.cycle < expected.cycles
    resumed = tile.run(max_cycles=10**9)
    assert not resumed.interrupted
    assert resumed.cores == expected.cores and resumed.cycles == expected.cycles


def test_an_interrupt_asked_for_between_runs_stops_the_next_before_it_starts():
    tile = Tile("blackhole")
    tile.load_elf("trisc0", _counting(10))
    tile.interrupt()
    with pytest.raises(RunInterrupted) as caught:
        tile.run(release=["trisc0"])
    assert caught.value.result.cores["trisc0"].instructions == 0
    assert tile.run().cores["trisc0"].exit_code == 10  # the request was used up


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_spinning(stderr, cpu_seconds: float) -> subprocess.Popen:
    elf = link(SPIN, text=0x6000)
    command = [sys.executable, "-m", "tensixsim", "run", "--trisc0", str(elf), "--max-cycles", str(10**15)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT)
    # Past start-up (imports, loading) and well into the run by CPU time, whatever the machine's load.
    deadline = time.monotonic() + 60
    while _cpu_seconds(child.pid) < cpu_seconds:
        assert child.poll() is None, "the run ended on its own"
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    return child


def test_sigint_stops_a_cli_run_with_the_summary_so_far_and_status_130():
    # Long enough into the run that a terminal would show the line (it appears after 2 s).
    child = _start_spinning(subprocess.PIPE, 3.5)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    text = out.decode()
    assert "trisc0   running" in text and "(interrupted)" in text
    assert "tensixsim run: interrupted at cycle " in err.decode()
    assert "\r" not in err.decode() and "\x1b" not in err.decode()  # stderr is no terminal: no line


def test_the_progress_line_shows_on_a_terminal():
    primary, secondary = pty.openpty()
    try:
        child = _start_spinning(secondary, 3.5)  # the line appears after 2 s of running
        os.close(secondary)
        out, _ = child.communicate(timeout=60)
        assert "(interrupted)" in out.decode()
        err = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(primary)
    assert child.returncode == 130
    text = err.decode(errors="replace")
    assert "\rcycle " in text and "cyc/s" in text and "trisc0 run" in text
    assert "\r\x1b[K" + "tensixsim run: interrupted" in text.replace("\r\n", "\n")  # erased first


def test_the_tile_progress_stream_is_the_default(monkeypatch):
    asked = []
    monkeypatch.setattr("tensixsim.tile.progress_for", lambda stream: asked.append(stream))
    tile = Tile("blackhole")
    tile.load_elf("trisc0", _counting(3))
    tile.progress = terminal = FakeTerminal()
    tile.run(release=["trisc0"])
    other = FakeTerminal()
    tile.reset()
    tile.load_elf("trisc0", _counting(3))
    tile.run(release=["trisc0"], progress=other)
    assert asked == [terminal, other]


def test_an_interrupted_metal_launch_prints_the_summary_so_far(monkeypatch, capsys):
    from tensixsim import RunResult
    from tensixsim.cli import main

    def interrupted(*args, **kwargs):
        result = RunResult(1234, {}, interrupted=True)
        raise RunInterrupted("interrupted at cycle 1234", cycle=1234, result=result)

    monkeypatch.setattr("tensixsim.metal.host.run_launch", interrupted)
    assert main(["metal", "--firmware", "fw", "--reader", "r.elf"]) == 130
    captured = capsys.readouterr()
    assert "total: 1234 cycles (interrupted)" in captured.out
    assert "tensixsim metal: interrupted at cycle 1234" in captured.err
