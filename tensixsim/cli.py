"""Command line: ``tensixsim run | disasm | demo | metal``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tensixsim.arch import CORE_NAMES
from tensixsim.errors import SimError


def _run(args: argparse.Namespace) -> int:
    from tensixsim.tile import Tile

    tile = Tile(args.arch, quantum=args.quantum)
    loaded = [name for name in CORE_NAMES if getattr(args, name)]
    if not loaded:
        print(
            "tensixsim run: give at least one of --brisc --ncrisc --trisc0 --trisc1 --trisc2", file=sys.stderr
        )
        return 2
    for name in loaded:
        tile.load_elf(name, getattr(args, name))
    # As on the card, the host releases BRISC and BRISC releases the rest; without a BRISC program
    # the host releases every core it loaded.
    release = ["brisc"] if "brisc" in loaded else loaded
    result = tile.run(max_cycles=args.max_cycles, release=release)
    print(result.summary(tile.arch.clock_hz))
    return 0


def _disasm(args: argparse.Namespace) -> int:
    from tensixsim.isa import isa_for
    from tensixsim.isa.scan import inline_words

    table = isa_for(args.arch)
    if args.elf:
        from pathlib import Path

        from tensixsim.loader.elf import read_elf

        image = read_elf(Path(args.elf))
        for address, word, instruction in inline_words(table, image):
            print(f"0x{address:08x}: {word:08x}  {instruction}")
        return 0
    for text in args.words:
        word = int(text, 0)
        print(f"{word:08x}  {table.disasm(word)}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from tensixsim.demo import main as demo_main

    return demo_main(quantum=args.quantum)


def _metal(args: argparse.Namespace) -> int:
    from pathlib import Path

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
    report = run_launch(
        Path(args.firmware),
        kernels,
        args=args.args,
        circular_buffers=cbs,
        inputs=inputs,
        outputs=outputs,
        page_size=args.page_size,
        arch=args.arch,
        max_cycles=args.max_cycles,
    )
    print(f"firmware: {report.firmware}")
    print(f"boot: {report.boot_cycles} cycles")
    print(f"launch: {report.launch_cycles} cycles, every core back waiting for the host")
    for spec in outputs:
        print(f"wrote {spec.path} ({spec.size} bytes from DRAM 0x{spec.base:x})")
    print(f"wall: {report.wall_seconds:.2f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tensixsim", description="Tenstorrent Tensix tile emulator")
    parser.add_argument("--arch", default="blackhole", help="blackhole (default) or wormhole")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run bare-metal ELFs on the five cores")
    for name in CORE_NAMES:
        run.add_argument(f"--{name}", metavar="ELF", help=f"program for {name.upper()}")
    run.add_argument("--max-cycles", type=int, default=100_000_000)
    run.add_argument("--quantum", type=int, default=None, help="scheduling quantum in cycles")
    run.set_defaults(func=_run)

    disasm = sub.add_parser("disasm", help="disassemble Tensix instruction words")
    disasm.add_argument("words", nargs="*", help="instruction words, e.g. 0x26000000")
    disasm.add_argument("--elf", help="list the inline Tensix words of an ELF's code")
    disasm.set_defaults(func=_disasm)

    demo = sub.add_parser("demo", help="build and run the five-core demo")
    demo.add_argument("--quantum", type=int, default=None)
    demo.set_defaults(func=_demo)

    metal = sub.add_parser("metal", help="boot tt-metal firmware and run one slow-dispatch launch")
    metal.add_argument("--firmware", required=True, metavar="DIR", help="pre-compiled folder, or one build's")
    metal.add_argument("--reader", metavar="ELF", help="reader kernel (NCRISC)")
    metal.add_argument("--compute", nargs="+", metavar="ELF", help="unpack, math, pack kernels (TRISC0..2)")
    metal.add_argument("--writer", metavar="ELF", help="writer kernel (BRISC)")
    metal.add_argument(
        "--args", nargs="*", default=[], type=lambda t: int(t, 0), help="runtime arguments of every kernel"
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
    metal.add_argument("--page-size", type=int, default=2048, help="DRAM page size of --input / --output")
    metal.add_argument("--max-cycles", type=int, default=50_000_000)
    metal.set_defaults(func=_metal)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "quantum", 0) is None:
        from tensixsim.timing import DEFAULT_QUANTUM

        args.quantum = DEFAULT_QUANTUM
    try:
        return args.func(args)
    except SimError as exc:
        print(f"tensixsim: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
