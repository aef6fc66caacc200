"""``libtensixsim.so``: Tenstorrent's simulator API served by tensixsim, and simulator directories.

Tools open a simulator as a shared library exporting the ``libttsim_*`` functions (tenstorrent/ttsim
docs/libttsim_api.md) with a ``soc_descriptor.yaml`` beside it (tt-umd's simulation chip reads it).
:func:`build` compiles ``libtensixsim.c`` with the system C compiler (cached in the native-build
cache, like the other C parts); :func:`write_simdir` writes both files into a directory, as
``tensixsim simdir DIR`` does. Point ``TT_METAL_SIMULATOR``, tt-umd's ``TTSimTTDevice.create`` or
tt-exalens's ``simulation_directory`` at ``DIR/libttsim.so``.

The library runs tensixsim in the process that loads it (:mod:`tensixsim.simlib.bridge`): in a Python
process it attaches to the running interpreter, elsewhere it starts the interpreter tensixsim was
built with; the sys.path entries of the building process are kept so the same packages import.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

from tensixsim.arch import blackhole_host as host_facts
from tensixsim.arch import get_arch
from tensixsim.native_build import build_shared, cache_dir

_SOURCE = Path(__file__).with_name("libtensixsim.c")
LIBRARY_NAME = "libttsim.so"  # the name tools and tt-metal's documentation use
SOC_DESCRIPTOR_NAME = "soc_descriptor.yaml"


class BuildError(RuntimeError):
    """libtensixsim could not be built (no C compiler, or no shared libpython to embed)."""


def _c_string(text: str) -> str:
    """A C string literal holding ``text`` (UTF-8; quotes, backslashes and non-ASCII escaped)."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        if char in '"\\' or not 32 <= byte < 127:
            out.append(f"\\{byte:03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def boot_code(paths: list[str] | None = None) -> str:
    """The Python the library runs at ``libttsim_init``: this process's import path, then the bridge."""
    entries = [p for p in (sys.path if paths is None else paths) if p and os.path.isdir(p)]
    package_root = str(Path(__file__).resolve().parents[2])
    if package_root not in entries:
        entries.insert(0, package_root)
    return (
        "import sys\n"
        f"sys.path[:0] = [p for p in {entries!r} if p not in sys.path]\n"
        "import tensixsim.simlib.bridge\n"
    )


def _libpython() -> str:
    """The shared libpython of this interpreter ('' when it has none: embedding is then impossible)."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return ""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    for name in (sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LDLIBRARY")):
        if name and os.path.exists(os.path.join(libdir, name)):
            return os.path.join(libdir, name)
    return ""


def build() -> Path:
    """Compile libtensixsim (once per source and Python environment); the cached library's path."""
    boot = boot_code()
    generated = cache_dir() / "libtensixsim-boot"
    generated.mkdir(parents=True, exist_ok=True)
    boot_source = generated / f"boot-{hashlib.sha256(boot.encode()).hexdigest()[:16]}.c"
    text = f"const char tensixsim_boot[] = {_c_string(boot)};\n"
    if not boot_source.exists() or boot_source.read_text() != text:
        boot_source.write_text(text)
    defines = [
        f"TSIM_LIBPYTHON={_c_string(_libpython())}",
        f"TSIM_PYTHONHOME={_c_string(sys.base_prefix)}",
    ]
    target = build_shared("libtensixsim", [_SOURCE, boot_source], defines=defines, link=["-ldl"], warn=False)
    if target is None:
        raise BuildError("libtensixsim could not be built: a C compiler (cc or gcc) is needed")
    return target


def soc_descriptor(arch_name: str = "blackhole") -> str:
    """The soc descriptor tt-umd reads beside the library: the grid of ``Chip(arch_name)`` (all 140
    Tensix tiles; no harvesting), its DRAM banks and the other endpoints, from the architecture facts."""
    arch = get_arch(arch_name)
    if arch.name != "blackhole" or arch.noc is None:
        raise ValueError("a simulator directory describes Blackhole only")
    facts = arch.noc

    def coords(tiles) -> str:
        return "[" + ", ".join(f"{x}-{y}" for x, y in tiles) + "]"

    def kind(name: str) -> list[tuple[int, int]]:
        return sorted((xy for xy, k in facts.other_tiles.items() if k == name), key=lambda t: (t[1], t[0]))

    banks = ",\n".join(f"    {coords(ports)}" for ports in host_facts.DRAM_BANKS)
    x_size, y_size = facts.width, facts.height
    return "\n".join(
        [
            "# Written by tensixsim (tensixsim simdir): the chip tensixsim's libttsim.so serves.",
            f"grid:\n  x_size: {x_size}\n  y_size: {y_size}",
            f"arc: {coords(kind('arc'))}",
            f"pcie: {coords(kind('pcie'))}",
            f"dram:\n  [\n{banks}\n  ]",
            f"eth: {coords(host_facts.ETH_CHANNELS)}",
            f"functional_workers: {coords(facts.tensix_tiles)}",
            f"router_only: {coords(kind('router'))}",
            f"security: {coords(kind('security'))}",
            f"l2cpu: {coords(kind('l2cpu'))}",
            f"noc0_x_to_noc1_x: {list(range(x_size - 1, -1, -1))}",
            f"noc0_y_to_noc1_y: {list(range(y_size - 1, -1, -1))}",
            f"worker_l1_size: {arch.l1_size}",
            f"dram_bank_size: {facts.dram_group_bytes}",
            "eth_l1_size: 262144",  # tt-umd's own descriptors say so (the endpoint serves all 512 KiB)
            "arch_name: BLACKHOLE",
            "features:\n  unpacker:\n    version: 2\n    inline_srca_trans_without_srca_trans_instr: True"
            "\n  math:\n    dst_size_alignment: 32768\n  packer:\n    version: 2\n  overlay:\n    version: 2",
            "",
        ]
    )


def write_simdir(directory: str | os.PathLike) -> Path:
    """Write ``libttsim.so`` and ``soc_descriptor.yaml`` into ``directory`` (made if missing); the
    library's path (what TT_METAL_SIMULATOR and tt-umd take)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    library = directory / LIBRARY_NAME
    shutil.copyfile(build(), library)
    (directory / SOC_DESCRIPTOR_NAME).write_text(soc_descriptor())
    return library
