"""Command line: ``tensixsim run | disasm | demo | metal | record | diff``.

Every error is one line on stderr and a non-zero status: 2 for a command line that cannot run (bad
arguments, missing files, an architecture not modelled), 1 for a run that stopped on an error or in
which a core exited with a non-zero code, 130 for one stopped by Ctrl-C (``run`` prints the summary
so far). ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from tensixsim.arch import CORE_NAMES
from tensixsim.errors import RunInterrupted, SimError

if TYPE_CHECKING:
    from tensixsim.tile import Tile

# The status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


class UsageError(Exception):
    """A command line that cannot run: one line on stderr, status 2."""


@dataclass(frozen=True)
class Placement:
    """``--input ADDR=FILE``: a file's bytes (raw, or a ``.npy`` array's) written to L1 at ``address``."""

    address: int
    path: Path


@dataclass(frozen=True)
class Dump:
    """``--dump ADDR:LEN=FILE``: ``size`` bytes of L1 from ``address`` saved after the run (``.npy``: as
    a uint8 array, else raw)."""

    address: int
    size: int
    path: Path


def _number(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"{what} {text!r} is not a number (decimal, or 0x... hexadecimal)") from None


def parse_input(text: str) -> Placement:
    address, sep, path = text.partition("=")
    if not sep or not path:
        raise UsageError(f"--input takes ADDR=FILE, not {text!r}")
    return Placement(_number(address, "--input address"), Path(path))


def parse_dump(text: str) -> Dump:
    span, sep, path = text.partition("=")
    address, colon, size = span.partition(":")
    if not sep or not colon or not path:
        raise UsageError(f"--dump takes ADDR:LEN=FILE, not {text!r}")
    length = _number(size, "--dump length")
    if length <= 0:
        raise UsageError(f"--dump length must be positive, not {length}")
    return Dump(_number(address, "--dump address"), length, Path(path))


def input_bytes(placement: Placement) -> bytes:
    """The bytes ``--input`` writes: a ``.npy`` array's data in its own layout, any other file as is."""
    path = placement.path
    if not path.is_file():
        raise UsageError(f"--input file {path} does not exist")
    if path.suffix == ".npy":
        return np.ascontiguousarray(np.load(path, allow_pickle=False)).tobytes()
    return path.read_bytes()


def _integer(text: str) -> int:
    """An argument value (argparse reports the error)."""
    try:
        return _number(text, "")
    except UsageError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _positive(text: str) -> int:
    value = _integer(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {value}")
    return value


def _port(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= 0xFFFF:
        raise argparse.ArgumentTypeError(f"a TCP port is 0..65535, not {value}")
    return value


def _run(args: argparse.Namespace) -> int:
    from tensixsim.tile import Tile

    loaded = [name for name in CORE_NAMES if getattr(args, name)]
    if not loaded:
        raise UsageError("give at least one of --brisc --ncrisc --trisc0 --trisc1 --trisc2")
    for name in loaded:
        if not Path(getattr(args, name)).is_file():
            raise UsageError(f"--{name} {getattr(args, name)}: no such file")
    placements = [parse_input(text) for text in args.input]
    dumps = [parse_dump(text) for text in args.dump]
    _check_trace(args.trace)
    tile = Tile(args.arch, quantum=args.quantum)
    for name in loaded:
        tile.load_elf(name, getattr(args, name))
    for placement in placements:
        tile.write(placement.address, input_bytes(placement))
    if args.dprint:
        tile.enable_prints(echo=lambda line: print(line, flush=True))
    # As on the card, the host releases BRISC and BRISC releases the rest; without a BRISC program
    # the host releases every core it loaded.
    release = ["brisc"] if "brisc" in loaded else loaded
    try:
        if args.gdb is not None:
            server = tile.gdb_server(args.gdb)
            print(f"waiting for gdb on port {server.port} (target remote :{server.port})", flush=True)
            result = server.run(max_cycles=args.max_cycles, release=release)
        else:
            result = tile.run(
                max_cycles=args.max_cycles,
                release=release,
                progress=None if args.quiet else sys.stderr,
                trace=args.trace,
            )
    except RunInterrupted as stop:
        print(f"tensixsim run: {stop.message}", file=sys.stderr)
        print(stop.result.summary(tile.arch.clock_hz))
        _print_regs(tile, loaded, args.regs)
        return INTERRUPTED
    print(result.summary(tile.arch.clock_hz))
    _print_regs(tile, loaded, args.regs)
    for dump in dumps:
        data = tile.read(dump.address, dump.size)
        if dump.path.suffix == ".npy":
            np.save(dump.path, np.frombuffer(data, np.uint8))
        else:
            dump.path.write_bytes(data)
        print(f"wrote {dump.path} ({dump.size} bytes from L1 0x{dump.address:x})")
    failed = [f"{s.name} exited with {s.exit_code}" for s in result.cores.values() if s.exit_code]
    if failed:
        print(f"tensixsim run: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _print_regs(tile: Tile, cores: list[str], wanted: bool) -> None:
    if wanted:
        for name in cores:
            values = tile.core(name).regs
            print(f"{name}: " + " ".join(f"x{i}=0x{v:08x}" for i, v in enumerate(values) if i))


def _check_trace(path: str | None) -> str | None:
    """``--trace FILE`` must be writable before anything runs (else one line, status 2)."""
    if path is not None:
        from tensixsim.errors import TraceError
        from tensixsim.observe.trace import check_writable

        try:
            check_writable(path)
        except TraceError as error:
            raise UsageError(f"--trace: {error.message}") from None
    return path


def _disasm(args: argparse.Namespace) -> int:
    from tensixsim.isa import isa_for
    from tensixsim.isa.scan import inline_words

    table = isa_for(args.arch)
    if args.elf:
        from tensixsim.loader.elf import read_elf
        from tensixsim.loader.source import source_map, source_text

        if not Path(args.elf).is_file():
            raise UsageError(f"--elf {args.elf}: no such file")
        image = read_elf(Path(args.elf))
        lines = source_map(args.elf)  # None: no tables (the listing goes on without source lines)
        shown = None
        for address, word, instruction in inline_words(table, image):
            location = lines.locate(address) if lines is not None else None
            if location is not None and location.source is not None and location.source != shown:
                shown = location.source
                text = source_text(location.file, location.line)
                print(shown if text is None else f"{shown}  {text.strip()}")
            print(f"0x{address:08x}: {word:08x}  {instruction}")
        return 0
    if not args.words:
        raise UsageError("give instruction words (e.g. 0x26000000) or --elf")
    words = [_number(text, "instruction word") for text in args.words]
    for word in words:
        if not 0 <= word <= 0xFFFFFFFF:
            raise UsageError(f"instruction word {word:#x} is not 32 bits")
    for word in words:
        print(f"{word:08x}  {table.disasm(word)}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from tensixsim.demo import main as demo_main

    return demo_main(quantum=args.quantum, arch=args.arch)


def _metal(args: argparse.Namespace) -> int:
    from tensixsim.metal.host import parse_cb, parse_dram_file, run_launch

    try:
        cbs = [parse_cb(text) for text in args.cb]
        inputs = [parse_dram_file(text, output=False) for text in args.input]
        outputs = [parse_dram_file(text, output=True) for text in args.output]
    except ValueError as error:
        print(f"tensixsim metal: {error}", file=sys.stderr)
        return 2
    if args.compute is not None and len(args.compute) != 3:
        print("tensixsim metal: --compute takes three ELFs (unpack, math, pack)", file=sys.stderr)
        return 2
    # tt-metal's roles: the reader on NCRISC, the writer on BRISC, compute on TRISC0..2.
    kernels = {"ncrisc": args.reader, "brisc": args.writer}
    kernels.update(zip(("trisc0", "trisc1", "trisc2"), args.compute or (), strict=False))
    kernels = {core: Path(path) for core, path in kernels.items() if path}
    if not kernels:
        print("tensixsim metal: give at least one of --reader --compute --writer", file=sys.stderr)
        return 2
    # Per-role arguments, where given, replace --args for that role's kernels.
    roles = {"ncrisc": args.reader_args, "brisc": args.writer_args}
    roles.update(dict.fromkeys(("trisc0", "trisc1", "trisc2"), args.compute_args))
    try:
        report = run_launch(
            Path(args.firmware),
            kernels,
            args=args.args,
            core_args={core: values for core, values in roles.items() if values is not None},
            circular_buffers=cbs,
            inputs=inputs,
            outputs=outputs,
            page_size=args.page_size,
            arch=args.arch,
            max_cycles=args.max_cycles,
            progress=None if args.quiet else sys.stderr,
            trace=_check_trace(args.trace),
            prints=(lambda line: print(line, flush=True)) if args.dprint else None,
        )
    except RunInterrupted as stop:
        print(f"tensixsim metal: {stop.message}", file=sys.stderr)
        print(stop.result.summary())
        return INTERRUPTED
    print(f"firmware: {report.firmware}")
    print(f"boot: {report.boot_cycles} cycles")
    print(f"launch: {report.launch_cycles} cycles, every core back waiting for the host")
    for spec in outputs:
        print(f"wrote {spec.path} ({spec.size} bytes from DRAM 0x{spec.base:x})")
    print(f"wall: {report.wall_seconds:.2f} s")
    return 0


class _Parser(argparse.ArgumentParser):
    """An argument error as one line (the usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tensixsim", description="Tenstorrent Tensix tile emulator")
    parser.add_argument("--arch", default="blackhole", help="blackhole (default) or wormhole")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run bare-metal ELFs on the five cores")
    for name in CORE_NAMES:
        run.add_argument(f"--{name}", metavar="ELF", help=f"program for {name.upper()}")
    run.add_argument(
        "--input", action="append", default=[], metavar="ADDR=FILE", help="file (raw or .npy) -> L1 at ADDR"
    )
    run.add_argument(
        "--dump", action="append", default=[], metavar="ADDR:LEN=FILE", help="LEN bytes of L1 -> FILE after"
    )
    run.add_argument("--regs", action="store_true", help="print the loaded cores' registers at the end")
    run.add_argument("--max-cycles", type=_positive, default=100_000_000)
    run.add_argument("--quantum", type=_positive, default=None, help="scheduling quantum in cycles")
    run.add_argument("--quiet", action="store_true", help="no progress line on stderr during long runs")
    run.add_argument(
        "--dprint",
        action="store_true",
        help="print what the cores print (tensix_print.h), with core and cycle",
    )
    run.add_argument(
        "--trace", metavar="FILE", help="write a Perfetto trace of the run (docs/observability.md)"
    )
    run.add_argument(
        "--gdb",
        type=_port,
        default=None,
        metavar="PORT",
        help="wait for gdb on PORT (0: any) and run under it",
    )
    run.set_defaults(func=_run)

    disasm = sub.add_parser("disasm", help="disassemble Tensix instruction words")
    disasm.add_argument("words", nargs="*", help="instruction words, e.g. 0x26000000")
    disasm.add_argument(
        "--elf", help="list the inline Tensix words of an ELF's code, under the source lines they come from"
    )
    disasm.set_defaults(func=_disasm)

    demo = sub.add_parser("demo", help="build and run the five-core demo")
    demo.add_argument("--quantum", type=_positive, default=None)
    demo.set_defaults(func=_demo)

    metal = sub.add_parser("metal", help="boot tt-metal firmware and run one slow-dispatch launch")
    metal.add_argument("--firmware", required=True, metavar="DIR", help="pre-compiled folder, or one build's")
    metal.add_argument("--reader", metavar="ELF", help="reader kernel (NCRISC)")
    metal.add_argument("--compute", nargs="+", metavar="ELF", help="unpack, math, pack kernels (TRISC0..2)")
    metal.add_argument("--writer", metavar="ELF", help="writer kernel (BRISC)")
    metal.add_argument(
        "--args", nargs="*", default=[], type=_integer, help="runtime arguments of every kernel"
    )
    for role in ("reader", "compute", "writer"):
        metal.add_argument(
            f"--{role}-args", nargs="*", type=_integer, metavar="N", help=f"the {role}'s, instead of --args"
        )
    metal.add_argument(
        "--cb", action="append", default=[], metavar="INDEX:ADDRESS:SIZE:PAGES", help="a circular buffer"
    )
    metal.add_argument(
        "--input", action="append", default=[], metavar="FILE@ADDRESS", help="file -> interleaved DRAM buffer"
    )
    metal.add_argument(
        "--output", action="append", default=[], metavar="FILE@ADDRESS:BYTES", help="DRAM buffer -> file"
    )
    metal.add_argument(
        "--page-size", type=_positive, default=2048, help="DRAM page size of --input / --output"
    )
    metal.add_argument("--max-cycles", type=_positive, default=50_000_000)
    metal.add_argument("--quiet", action="store_true", help="no progress line on stderr during long runs")
    metal.add_argument("--trace", metavar="FILE", help="write a Perfetto trace of the launch")
    metal.add_argument(
        "--dprint", action="store_true", help="print what the kernels print (DPRINT), with core and cycle"
    )
    metal.set_defaults(func=_metal)

    simdir = sub.add_parser(
        "simdir", help="write a simulator directory (libttsim.so + soc_descriptor.yaml) for tt-umd and tools"
    )
    simdir.add_argument("directory", help="where to write it (made if missing)")
    simdir.set_defaults(func=_simdir)
    rec = sub.add_parser("record", help="run differential cases on a device and keep what it gave")
    rec.add_argument("cases", nargs="+", metavar="CASE", help="case directories (traces/<name>), or traces/")
    rec.add_argument(
        "--device",
        required=True,
        metavar="DIR",
        help="simulator directory (libttsim*.so), or pcie:N for a card",
    )
    rec.add_argument("--client-path", metavar="DIR", help="where tt_umd is installed (pip install --target)")
    rec.add_argument("--timeout", type=_positive, default=120, help="seconds a case may run on the device")
    rec.set_defaults(func=_record)

    diff = sub.add_parser(
        "diff", help="run differential cases on the emulator and compare with the recording"
    )
    diff.add_argument("cases", nargs="+", metavar="CASE", help="case directories (traces/<name>), or traces/")
    diff.add_argument("--limit", type=_positive, default=10, help="mismatches shown per output")
    diff.set_defaults(func=_diff)
    return parser


def _simdir(args: argparse.Namespace) -> int:
    from tensixsim.simlib import write_simdir

    if args.arch != "blackhole":
        raise UsageError("a simulator directory serves Blackhole only")
    library = write_simdir(args.directory)
    print(library)
    return 0


def _case_dirs(names: list[str]) -> list[Path]:
    from tensixsim.difftest import find_cases

    dirs: list[Path] = []
    for name in names:
        path = Path(name)
        if (path / "case.json").is_file():
            dirs.append(path)
        elif path.is_dir() and find_cases(path):
            dirs.extend(find_cases(path))
        else:
            raise UsageError(f"{name}: not a case directory (no case.json) nor a folder of cases")
    return dirs


def _record(args: argparse.Namespace) -> int:
    from tensixsim.difftest import load_case
    from tensixsim.difftest.device import record

    # A case the device stops on is recorded (its error is the recording), not a failure of the command.
    for path in _case_dirs(args.cases):
        case = load_case(path)
        meta = record(case, args.device, client_path=args.client_path, timeout_s=args.timeout)
        outcome = f"stopped: {meta['error']}" if meta["error"] else f"cycles {meta['cycles']}"
        print(f"{case.name}: recorded on {meta.get('device')} {meta.get('version', '')}: {outcome}".strip())
    return 0


def _diff(args: argparse.Namespace) -> int:
    from tensixsim.difftest import compare, load_case
    from tensixsim.difftest.device import load_recording
    from tensixsim.difftest.emulator import run_on_emulator

    status = 0
    for path in _case_dirs(args.cases):
        case = load_case(path)
        recording = load_recording(case)
        if recording is None:
            raise UsageError(f"{case.name}: never recorded (run `tensixsim record {path} --device DIR`)")
        meta, expected = recording
        diff = compare(case, expected, run_on_emulator(case), limit=args.limit)
        print(diff.report(args.limit))
        label = " ".join(str(meta.get(k, "")) for k in ("device", "version", "commit") if meta.get(k))
        print(f"  recorded on: {label}")
        if not diff.same:
            print(
                f"  verdict: {case.verdict.status}"
                + (f": {case.verdict.notes}" if case.verdict.notes else "")
            )
            if case.verdict.status == "agree":
                status = 1
    return status


def _version() -> str:
    try:
        return metadata.version("tensixsim")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _check_arch(name: str) -> None:
    """The architecture must be one the emulator models (others: one line, status 2)."""
    from tensixsim.arch import get_arch
    from tensixsim.errors import Unimplemented

    try:
        get_arch(name)
    except (ValueError, Unimplemented) as error:
        raise UsageError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "quantum", 0) is None:
        from tensixsim.timing import DEFAULT_QUANTUM

        args.quantum = DEFAULT_QUANTUM
    try:
        _check_arch(args.arch)
        return args.func(args)
    except UsageError as exc:
        if args.debug:
            raise
        print(f"tensixsim {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C before or after a run (during one, the run stops cleanly)
        if args.debug:
            raise
        print(f"tensixsim {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except SimError as exc:
        if args.debug:
            raise
        print(f"tensixsim: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        # files, formats, arguments the commands reject; a missing toolchain or a failed kernel build
        if args.debug:
            raise
        text = str(exc).strip("'\"") or type(exc).__name__
        print(f"tensixsim {args.command}: {text}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
