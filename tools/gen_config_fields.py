"""Render a configuration-register field table (``tensixsim/tensix/config/fields_<arch>.py``) from
tt-metal's ``cfg_defines.h`` for that architecture.

    python tools/gen_config_fields.py wormhole path/to/wormhole_b0_defines/cfg_defines.h

The header is read, never copied: only the facts (sizes, and per field its word, lowest bit and
width) go into the table. The ttnn wheel carries the header
(``ttnn/tt_metal/hw/inc/internal/tt-1xx/<arch>/.../cfg_defines.h``). The header groups its fields
in sections (``// Registers for THREAD``, ``ALU``, ``PACK0`` ...); the THREAD section indexes
``ThreadConfig[pipe]`` (SETC16), every other one ``Config[state]``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_SECTION = re.compile(r"^// Registers for (\w+)")
_DEFINE = re.compile(r"^#define (\w+)_(ADDR32|SHAMT|MASK) (0x[0-9a-fA-F]+|\d+)\s*$")
_SIZE = re.compile(r"^#define (CFG_STATE_SIZE|THD_STATE_SIZE|GLOBAL_CFGREG_BASE_ADDR32) (\d+)")

FieldSpec = tuple[int, int, int]


def parse(text: str) -> tuple[dict[str, int], dict[str, FieldSpec], dict[str, FieldSpec]]:
    """(sizes, Config fields, ThreadConfig fields) of a cfg_defines.h, fields in header order."""
    sizes: dict[str, int] = {}
    parts: dict[str, dict[str, int]] = {}
    section_of: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        if m := _SECTION.match(line):
            section = m.group(1)
            continue
        if m := _SIZE.match(line):
            sizes[m.group(1)] = int(m.group(2))
            continue
        if m := _DEFINE.match(line):
            name, kind, value = m.groups()
            parts.setdefault(name, {})[kind] = int(value, 0)
            section_of.setdefault(name, section)
    config: dict[str, FieldSpec] = {}
    thread: dict[str, FieldSpec] = {}
    for name, p in parts.items():
        if set(p) != {"ADDR32", "SHAMT", "MASK"}:
            continue  # a *_BASE_ADDR32 section marker, not a field
        mask = p["MASK"] >> p["SHAMT"]  # the header's masks are in place
        if mask & (mask + 1):
            raise ValueError(f"{name}: mask 0x{p['MASK']:x} is not one run of bits")
        spec = (p["ADDR32"], p["SHAMT"], mask.bit_length())
        (thread if section_of[name] == "THREAD" else config)[name] = spec
    missing = {"CFG_STATE_SIZE", "THD_STATE_SIZE", "GLOBAL_CFGREG_BASE_ADDR32"} - set(sizes)
    if missing:
        raise ValueError(f"the header lacks {', '.join(sorted(missing))}")
    return sizes, config, thread


def render(arch: str, source: str, text: str) -> str:
    sizes, config, thread = parse(text)

    def table(name: str, fields: dict[str, FieldSpec]) -> list[str]:
        rows = [f"{name}: dict[str, tuple[int, int, int]] = {{"]
        rows += [f'    "{k}": ({w}, {lo}, {width}),' for k, (w, lo, width) in fields.items()]
        return [*rows, "}"]

    lines = [
        f'"""{arch.capitalize()} Tensix backend-configuration fields, as data (generated: do not edit).',
        "",
        "Facts from tt-metal's",
        f"{source},",
        "rendered by tools/gen_config_fields.py. ``CONFIG_FIELDS`` index ``Config[state]``,",
        "``THREAD_FIELDS`` index ``ThreadConfig[pipe]`` (SETC16). Each entry",
        "is ``name: (word index, lowest bit, width)``; a field wider than 32 bits starts at bit 0 and",
        "spans whole consecutive words, lowest word first.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# BackendConfiguration: Config[2], ConfigDualWrite and ThreadConfig are mapped one after the",
        "# other from here, into BRISC's and the TRISCs' address space.",
        "TENSIX_CFG_BASE = 0xFFEF0000",
        f"CFG_STATE_SIZE = {sizes['CFG_STATE_SIZE']}  # Config[i] holds CFG_STATE_SIZE * 4 words",
        f"THD_STATE_SIZE = {sizes['THD_STATE_SIZE']}  # ThreadConfig[pipe] holds this many 16-bit registers",
        f"GLOBAL_CFGREG_BASE_ADDR32 = {sizes['GLOBAL_CFGREG_BASE_ADDR32']}  # from here on: both states",
        "",
        "# fmt: off",
        f"# {len(config)} fields of Config[state]",
        *table("CONFIG_FIELDS", config),
        "",
        f"# {len(thread)} fields of ThreadConfig[pipe]",
        *table("THREAD_FIELDS", thread),
        "# fmt: on",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arch")
    parser.add_argument("header", type=Path)
    parser.add_argument("--source", default=None, help="how the docstring names the header")
    args = parser.parse_args(argv)
    source = args.source or f"{args.arch} cfg_defines.h"
    package = Path(__file__).resolve().parent.parent / "tensixsim" / "tensix" / "config"
    out = package / f"fields_{args.arch}.py"
    out.write_text(render(args.arch, source, args.header.read_text()))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
