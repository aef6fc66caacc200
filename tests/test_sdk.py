"""The bare-metal SDK: generated files are current, programs build, and the ELFs have the shape
the tile needs (rv32, no compressed instructions, code in the core's L1 window at its reset PC,
.data/.bss in its local RAM).

Tests that compile need riscv64-unknown-elf-gcc. Without it they fail with ToolchainMissing rather
than skip: `make test` installs the toolchain, so a missing one is a broken setup, not an option.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

import tensixsim.sdk.build as sdk_build
from tensixsim import Tile
from tensixsim.arch import CORE_NAMES, get_arch
from tensixsim.isa import isa_for, to_stream_word
from tensixsim.sdk import gen_cfg_header, gen_linker_scripts, gen_mmio_header, programs
from tensixsim.sdk.build import BuildError, ToolchainMissing, build, find_toolchain, march_for
from tensixsim.sdk.layout import CODE_WINDOW_SIZE, L1_USER_BASE, core_layout, core_layouts

ARCH = get_arch("blackhole")
REPO = Path(__file__).resolve().parent.parent
BUILD_DIR = REPO / "build" / "sdk"  # the cache survives between runs
EM_RISCV = "EM_RISCV"
EF_RISCV_RVC = 0x1
TRISCS = ("trisc0", "trisc1", "trisc2")


# --- generated files -------------------------------------------------------------------------


@pytest.mark.parametrize("arch", gen_mmio_header.ARCH_NAMES)
def test_mmio_headers_match_their_generator(arch: str) -> None:
    from tensixsim.arch import get_arch

    stale = "is stale: run python -m tensixsim.sdk.gen_mmio_header"
    assert gen_mmio_header.header_path(arch).read_text() == gen_mmio_header.render(get_arch(arch)), stale
    assert gen_mmio_header.DISPATCH_PATH.read_text() == gen_mmio_header.render_dispatch(), stale


@pytest.mark.parametrize("arch", gen_cfg_header.ARCH_NAMES)
def test_cfg_header_matches_its_generator(arch: str) -> None:
    assert gen_cfg_header.header_path(arch).read_text() == gen_cfg_header.render(arch), (
        f"include/tensix_cfg_{arch}.h is stale: run python -m tensixsim.sdk.gen_cfg_header"
    )
    assert gen_cfg_header.main(["--check"]) == 0


@pytest.mark.parametrize("core", CORE_NAMES)
def test_linker_script_matches_its_generator(core: str) -> None:
    path = gen_linker_scripts.LINK_DIR / f"{core}.ld"
    assert path.read_text() == gen_linker_scripts.render(ARCH, core), (
        f"link/{core}.ld is stale: run python -m tensixsim.sdk.gen_linker_scripts"
    )


def test_header_numbers_come_from_the_arch_facts() -> None:
    text = gen_mmio_header.render(ARCH)

    def value(name: str) -> int:
        m = re.search(rf"^#define {name}\s+SDK_U\((0x[0-9A-F]+|\d+)\)", text, re.MULTILINE)
        assert m, name
        return int(m.group(1), 0)

    assert value("SOFT_RESET_0_REG") == ARCH.soft_reset_register
    assert value("SDK_L1_USER_BASE") == L1_USER_BASE
    assert value("WALL_CLOCK_LO_REG") == ARCH.wall_clock_low
    assert value("STREAM_REG_BASE") == ARCH.stream_base
    for i, c in enumerate(ARCH.cores):
        up = c.name.upper()
        assert value(f"CORE_ID_{up}") == i
        assert value(f"SOFT_RESET_{up}_BIT") == c.soft_reset_bit
        assert value(f"DEFAULT_RESET_PC_{up}") == c.default_reset_pc
        assert value(f"LOCAL_RAM_ALIAS_{up}") == c.local_ram_alias
    for pipe in range(ARCH.pipe_count):
        assert value(f"TENSIX_PUSH_PIPE{pipe}_ADDR") == ARCH.push_address(pipe)
    all_bits = sum(1 << c.soft_reset_bit for c in ARCH.cores)
    assert all_bits == ARCH.soft_reset_all == value("SOFT_RESET_ALL")


def test_code_windows_tile_l1_below_the_user_region() -> None:
    layouts = sorted(core_layouts(ARCH).values(), key=lambda x: x.code_base)
    for lo, hi in pairwise(layouts):
        assert lo.code_end <= hi.code_base
    assert layouts[-1].code_end <= L1_USER_BASE < ARCH.l1_size
    assert core_layout(ARCH, "ncrisc").code_end == 0x12000 + CODE_WINDOW_SIZE


def test_march_is_rv32_without_compressed() -> None:
    march = march_for(ARCH)
    assert march == "rv32ima_zicsr_zba_zbb"
    assert "c" not in march.split("_")[0][4:]


def test_unknown_core_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown core"):
        build("erisc", [tmp_path / "x.c"], tmp_path / "x.elf", build_dir=tmp_path)


def test_missing_toolchain_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sdk_build.PREFIX_ENV, "no-such-prefix-")
    with pytest.raises(ToolchainMissing, match="apt-get install gcc-riscv64-unknown-elf"):
        find_toolchain()
    assert issubclass(ToolchainMissing, RuntimeError)


# --- ELF inspection helpers --------------------------------------------------------------------


def _objdump_text(elf: Path) -> str:
    return subprocess.run(
        [str(find_toolchain().objdump), "-d", "--section=.text", str(elf)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _objdump_lines(elf: Path) -> list[tuple[int, str, str]]:
    """(address, hex field, mnemonic) of every line objdump disassembles in .text."""
    rows = []
    for line in _objdump_text(elf).splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(\S+)", line)
        if m:
            rows.append((int(m.group(1), 16), m.group(2).replace(" ", ""), m.group(3)))
    assert rows, f"objdump found no instructions in {elf}"
    return rows


def check_elf(elf: Path, core: str, *, tensix_words: frozenset[int] = frozenset()) -> None:
    """Assert ``elf`` is a well-formed program for ``core``; ``tensix_words`` are the raw words
    (inline Tensix instructions) allowed in .text."""
    layout = core_layout(ARCH, core)
    with elf.open("rb") as f:
        e = ELFFile(f)
        assert e.elfclass == 32 and e.little_endian
        assert e["e_machine"] == EM_RISCV
        assert e["e_flags"] & EF_RISCV_RVC == 0, "ELF marked as using compressed instructions"
        assert e["e_flags"] == 0, f"unexpected e_flags 0x{e['e_flags']:x} (want soft-float ilp32)"
        symtab = e.get_section_by_name(".symtab")
        start = symtab.get_symbol_by_name("_start")[0]["st_value"]
        assert start == layout.code_base == e["e_entry"]

        def inside(sec_name: str, lo: int, hi: int) -> None:
            sec = e.get_section_by_name(sec_name)
            if sec is None or sec["sh_size"] == 0:
                return
            a, b = sec["sh_addr"], sec["sh_addr"] + sec["sh_size"]
            assert lo <= a and b <= hi, f"{sec_name} at 0x{a:x}-0x{b:x} not in 0x{lo:x}-0x{hi:x}"

        inside(".text", layout.code_base, layout.code_end)
        inside(".rodata", layout.code_base, layout.code_end)
        ram_end = layout.local_ram_base + layout.local_ram_size
        inside(".data", layout.local_ram_base, ram_end)
        inside(".bss", layout.local_ram_base, ram_end)
        # Every loadable byte of the file lands in the core's L1 window (p_paddr); only .bss
        # (no file bytes) points at local RAM. A program without .data or .bss has empty segments.
        for seg in e.iter_segments():
            if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
                continue
            if seg["p_filesz"]:
                paddr = seg["p_paddr"]
                assert layout.code_base <= paddr and paddr + seg["p_filesz"] <= layout.code_end
            else:
                assert layout.local_ram_base <= seg["p_vaddr"] < ram_end
        attrs = e.get_section_by_name(".riscv.attributes").data()
        isa = re.search(rb"rv32[a-z0-9_]+", attrs).group().decode()
        assert not re.search(r"(^rv32[a-z0-9]*c|_c\d)", isa), isa
        assert "zba" in isa and "zbb" in isa

    for addr, hexword, mnemonic in _objdump_lines(elf):
        assert len(hexword) == 8, f"16-bit instruction {hexword} ({mnemonic}) at 0x{addr:x}"
        if mnemonic.startswith("."):  # raw data in .text: only the declared Tensix words
            assert int(hexword, 16) in tensix_words, f"unexpected raw word {hexword} at 0x{addr:x}"


# --- the example programs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_elfs() -> dict[str, Path]:
    return programs.build_demo(build_dir=BUILD_DIR)


@pytest.fixture(scope="module")
def compute_elfs() -> dict[str, Path]:
    return programs.build_compute_bench(build_dir=BUILD_DIR)


@pytest.mark.parametrize("core", CORE_NAMES)
def test_demo_builds_for_every_core(demo_elfs: dict[str, Path], core: str) -> None:
    check_elf(demo_elfs[core], core)


@pytest.mark.parametrize("core", CORE_NAMES)
def test_compute_bench_builds_for_every_core(compute_elfs: dict[str, Path], core: str) -> None:
    check_elf(compute_elfs[core], core)


def test_compute_bench_uses_mul_zba_and_zbb(compute_elfs: dict[str, Path]) -> None:
    mnemonics = {m for _, _, m in _objdump_lines(compute_elfs["trisc1"])}
    assert "mul" in mnemonics
    assert mnemonics & {"sh1add", "sh2add", "sh3add"}, "no Zba instruction"
    assert {"cpop", "clz", "ctz", "minu", "maxu", "andn"} <= mnemonics
    assert mnemonics & {"rol", "ror", "rori"}


@pytest.mark.parametrize("core", TRISCS)
def test_tensix_push_builds_for_each_trisc(core: str) -> None:
    nop_inline = to_stream_word(isa_for("blackhole").encode("NOP"))
    elf = programs.build_tensix_push(core, build_dir=BUILD_DIR)
    check_elf(elf, core, tensix_words=frozenset({nop_inline}))
    rows = _objdump_lines(elf)
    assert any(h == f"{nop_inline:08x}" for _, h, _ in rows), "no inline Tensix word"
    assert any(m == "sw" for _, _, m in rows), "no store to the push address"


def test_tensix_push_refuses_a_core_without_a_pipe() -> None:
    with pytest.raises(ValueError, match="TRISC"):
        programs.build_tensix_push("brisc", build_dir=BUILD_DIR)


def test_data_is_copied_from_l1_into_local_ram(tmp_path: Path) -> None:
    src = tmp_path / "data.c"
    src.write_text(
        "int table[4] = {1, 2, 3, 4};\nint zeroed[8];\n"
        "int main(void) { zeroed[1] = table[2]; return zeroed[1]; }\n"
    )
    for core in ("brisc", "trisc2"):
        elf = build(core, [src], tmp_path / f"data_{core}.elf", build_dir=tmp_path)
        check_elf(elf, core)
        with elf.open("rb") as f:
            e = ELFFile(f)
            data = e.get_section_by_name(".data")
            assert data["sh_addr"] == ARCH.local_ram_base and data["sh_size"] == 16
            seg = next(s for s in e.iter_segments() if s.section_in_segment(data))
            assert seg["p_vaddr"] == ARCH.local_ram_base
            assert core_layout(ARCH, core).code_base < seg["p_paddr"]  # the image is in L1


def test_libgcc_helpers_are_rv32_without_compressed(tmp_path: Path) -> None:
    src = tmp_path / "helpers.c"
    src.write_text(
        "volatile unsigned long long n = 1234567890123ull, d = 97;\n"
        "volatile float f = 1.5f;\n"
        "int main(void) { return (int)(n / d) + (int)(f * f) + __builtin_popcountll(n); }\n"
    )
    elf = build("ncrisc", [src], tmp_path / "helpers.elf", build_dir=tmp_path)
    check_elf(elf, "ncrisc")
    calls = {m.group(1) for m in re.finditer(r"<(__\w+)>:", _objdump_text(elf))}
    assert {"__udivdi3", "__mulsf3"} <= calls, calls


# --- the build API -----------------------------------------------------------------------------


def test_second_build_comes_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "k.c"
    src.write_text("int main(void) { return 7; }\n")
    first = build("trisc0", [src], tmp_path / "a.elf", build_dir=tmp_path)

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("recompiled although nothing changed")

    monkeypatch.setattr(sdk_build, "_compile", no_compile)
    second = build("trisc0", [src], tmp_path / "b.elf", build_dir=tmp_path)
    assert first.read_bytes() == second.read_bytes()
    # A changed define or source is a different program.
    with pytest.raises(AssertionError, match="recompiled"):
        build("trisc0", [src], tmp_path / "c.elf", defines={"X": 1}, build_dir=tmp_path)
    src.write_text("int main(void) { return 8; }\n")
    with pytest.raises(AssertionError, match="recompiled"):
        build("trisc0", [src], tmp_path / "d.elf", build_dir=tmp_path)


def test_a_header_through_an_extra_include_path_rebuilds_when_it_changes(tmp_path: Path) -> None:
    """The cache keys on the headers the compiler reports the sources including, wherever they are."""
    headers = tmp_path / "inc"
    headers.mkdir()
    (headers / "answer.h").write_text("#define ANSWER 41\n")
    src = tmp_path / "k.c"
    src.write_text('#include "answer.h"\nint main(void) { return ANSWER; }\n')
    flags = [f"-I{headers}"]
    codes = []
    for value in (41, 42, 41):
        (headers / "answer.h").write_text(f"#define ANSWER {value}\n")
        elf = build("trisc0", [src], tmp_path / f"k{value}.elf", extra_cflags=flags, build_dir=tmp_path)
        tile = Tile("blackhole")
        tile.load_elf("trisc0", elf)
        codes.append(tile.run(release=["trisc0"]).cores["trisc0"].exit_code)
    assert codes == [41, 42, 41]
    # A header the sources do not include changes nothing.
    (headers / "unused.h").write_text("#define UNUSED 1\n")
    entries = sorted((tmp_path / "cache").iterdir())
    build("trisc0", [src], tmp_path / "again.elf", extra_cflags=flags, build_dir=tmp_path)
    assert sorted((tmp_path / "cache").iterdir()) == entries
    assert len(list(entries[0].glob("*/program.elf"))) == 2  # one program per header contents


def test_the_documented_kernel_header_is_found_without_flags(tmp_path: Path) -> None:
    src = tmp_path / "k.c"
    src.write_text('#include "kernels.h"\nint main(void) { return 0; }\n')
    build("trisc1", [src], tmp_path / "k.elf", build_dir=tmp_path)


def test_the_stock_pack_kernel_refuses_bfp8_output(tmp_path: Path) -> None:
    """Packing bfp8 needs the exponent section configured, which the stock kernel does not do: the
    build fails rather than the numbers."""
    defines = {"KERNEL_OUT_FMT": "6u"}  # (the other settings' errors do not hide this one)
    with pytest.raises(BuildError, match="bfp8 output needs the packer's exponent section"):
        build("trisc2", [sdk_build.KERNELS_INCLUDE_DIR / "pack.c"], tmp_path / "p.elf", defines=defines,
              build_dir=tmp_path)  # fmt: skip


def test_core_and_user_defines_reach_the_program(tmp_path: Path) -> None:
    src = tmp_path / "d.c"
    src.write_text(
        '#include "tensixsim.h"\n'
        "#if !defined(SDK_CORE_NCRISC) || SDK_CORE_ID != CORE_ID_NCRISC || !SDK_ARCH_BLACKHOLE\n"
        "#error core defines missing\n#endif\n"
        "#if FOO != 3 || !defined(BAR)\n#error user defines missing\n#endif\n"
        "int main(void) { return 0; }\n"
    )
    build("ncrisc", [src], tmp_path / "d.elf", defines={"FOO": 3, "BAR": None}, build_dir=tmp_path)


def test_compile_error_raises_build_error(tmp_path: Path) -> None:
    src = tmp_path / "bad.c"
    src.write_text("int main(void) { return }\n")
    with pytest.raises(BuildError, match=r"bad\.c"):
        build("brisc", [src], tmp_path / "bad.elf", build_dir=tmp_path)


def test_too_much_code_for_the_window_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "big.c"
    src.write_text(
        f"const unsigned big[{CODE_WINDOW_SIZE // 4}] = {{1}};\n"
        "int main(void) { return (int)big[(unsigned)&big & 7]; }\n"
    )
    with pytest.raises(BuildError, match="L1_CODE"):
        build("trisc1", [src], tmp_path / "big.elf", build_dir=tmp_path)


def test_bss_that_leaves_no_stack_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "fat.c"
    size = ARCH.core("trisc0").local_ram_size - 256
    src.write_text(f"char fat[{size}];\nint main(void) {{ return fat[3]; }}\n")
    with pytest.raises(BuildError, match="stack"):
        build("trisc0", [src], tmp_path / "fat.elf", build_dir=tmp_path)


def test_assembly_sources_build(tmp_path: Path) -> None:
    src = tmp_path / "m.S"
    src.write_text('#include "tensixsim.h"\n.globl main\nmain:\n  li a0, SDK_L1_USER_BASE\n  ret\n')
    check_elf(build("trisc2", [src], tmp_path / "m.elf", build_dir=tmp_path), "trisc2")


# --- the Python models match the C code (compiled for the host) --------------------------------

HOST_CC = shutil.which("cc") or shutil.which("gcc")

_HOST_HARNESS = r"""
#include <stdio.h>
#include <stddef.h>
#include "compute_kernel.h"
#include "demo.h"
static uint32_t a[BENCH_N], ma[BENCH_N], mb[BENCH_N], mc[BENCH_N];
int main(void)
{
    for (uint32_t c = 0; c < SDK_NUM_CORES; c++)
        printf("compute %u %u\n", c, bench_compute(BENCH_SEED(c), ITERS, a, ma, mb, mc));
    printf("offset input %zu\n", offsetof(struct demo_shared, input));
    printf("offset transformed %zu\n", offsetof(struct demo_shared, transformed));
    printf("offset scan %zu\n", offsetof(struct demo_shared, scan));
    printf("offset result %zu\n", offsetof(struct demo_shared, result));
    printf("offset done %zu\n", offsetof(struct demo_shared, done));
    printf("offset summary %zu\n", offsetof(struct demo_shared, summary));
    uint32_t h = DEMO_HASH_INIT, t = 0;
    for (uint32_t i = 0; i < 3; i++) {
        h = DEMO_HASH_STEP(h, i * 0x12345679u);
        t += DEMO_TRANSFORM(i * 0x87654321u);
    }
    printf("macros %u %u\n", h, t);
    return 0;
}
"""


@pytest.fixture(scope="module")
def host_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    if HOST_CC is None:
        pytest.skip("no host C compiler to run the C kernels natively")
    d = tmp_path_factory.mktemp("host")
    (d / "h.c").write_text(_HOST_HARNESS)
    include = [f"-I{p}" for p in (sdk_build.INCLUDE_DIR, programs.BENCH_DIR, programs.DEMO_DIR)]
    cmd = [HOST_CC, "-O1", "-DITERS=5", *include, str(d / "h.c"), "-o", str(d / "h")]
    subprocess.run(cmd, check=True)
    out = subprocess.run([str(d / "h")], check=True, capture_output=True, text=True).stdout
    return {line.split(" ", 1)[1]: line.split() for line in out.splitlines()}


def test_compute_reference_matches_the_c_kernel(host_output: dict[str, list[str]]) -> None:
    for core_id in range(len(ARCH.cores)):
        row = host_output[f"{core_id} " + host_output_key(host_output, core_id)]
        assert int(row[2]) == programs.compute_reference(core_id, iters=5)


def host_output_key(host_output: dict[str, list[str]], core_id: int) -> str:
    prefix = f"{core_id} "
    key = next(k for k in host_output if k.startswith(prefix) and host_output[k][0] == "compute")
    return key[len(prefix) :]


def test_demo_offsets_match_demo_h(host_output: dict[str, list[str]]) -> None:
    for name, offset in programs.DEMO_OFFSETS.items():
        assert int(host_output[f"{name} {offset}"][2]) == offset


def test_demo_model_uses_the_same_formulas_as_demo_h(host_output: dict[str, list[str]]) -> None:
    m32 = 0xFFFFFFFF
    h, t = 0x811C9DC5, 0
    for i in range(3):
        h = ((h ^ (i * 0x12345679 & m32)) * 0x01000193) & m32
        v = i * 0x87654321 & m32
        t = (t + ((((v << 7) | (v >> 25)) & m32) ^ 0x9E3779B9)) & m32
    macros = next(v for k, v in host_output.items() if v[0] == "macros")
    assert (int(macros[1]), int(macros[2])) == (h, t)
    expected = programs.demo_expected()
    assert expected.scan[-1] == expected.result["trisc0"] == sum(expected.input) & m32
    assert len(expected.input) == programs.DEMO_N
