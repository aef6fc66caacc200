"""The documentation stays true: the generated support matrix is current, and every Python example in
the README and in docs/ runs as written (in a folder holding the files it names)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from asm import link

from tensixsim.support import DOC, render

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_support_matrix_is_current():
    assert DOC.read_text() == render(), "run `python -m tensixsim.support` and commit docs/support-matrix.md"


def examples() -> list[tuple[str, str]]:
    """(page:line, code) of every ```python block."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1)))
    return found


# The files the examples name: a BRISC program that releases TRISC0, a TRISC0 program that pushes a
# Tensix word and exits, and a C kernel that includes the SDK's headers.
BRISC = (
    "li t0, 0xFFB121B0\n lw t1, 0(t0)\n li t2, ~(1 << 12)\n and t1, t1, t2\n sw t1, 0(t0)\n li a0, 0\n ecall"
)
TRISC0 = "li t0, 0xFFE40000\n li t1, 0x02000000\n sw t1, 0(t0)\n li a0, 0\n ecall"
KERNEL_C = '#include "tensixsim.h"\n\nint main(void) { return (int)(read_mcycle() & 0); }\n'


@pytest.fixture
def example_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    brisc, trisc0 = link(BRISC, text=0x0), link(TRISC0, text=0x6000)
    for name, elf in {"brisc.elf": brisc, "b.elf": brisc, "trisc0.elf": trisc0, "t0.elf": trisc0}.items():
        (tmp_path / name).write_bytes(elf.read_bytes())
    (tmp_path / "kernel.c").write_text(KERNEL_C)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "ttnn").symlink_to(ROOT / ".cache" / "ttnn", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_pages_have_examples():
    where = {w.split(":")[0] for w, _ in examples()}
    assert {"README.md", "docs/running-kernels.md"} <= where


@pytest.mark.parametrize(("where", "code"), examples(), ids=[w for w, _ in examples()])
def test_example_runs_as_written(where: str, code: str, example_folder: Path) -> None:
    for tool in ("tt_umd", "ttexalens"):  # the optional extra tensixsim[tools] (docs/tools.md)
        if re.search(rf"^(import|from) {tool}\b", code, re.M):
            pytest.importorskip(tool, reason=f"{tool} is not installed (pip install 'tensixsim[tools]')")
    if "wheel.precompiled_firmware" in code:
        from tensixsim.metal.wheel import precompiled_firmware

        precompiled_firmware(ROOT / ".cache" / "ttnn")  # downloaded once, as the metal tests do
    exec(compile(code, where, "exec"), {"__name__": "__example__"})


def _section(path: Path, title: str) -> str:
    text = path.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_after_an_error_example_prints_what_it_says():
    section = _section(ROOT / "docs" / "running-kernels.md", "After an error")
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "running-kernels.md", "exec"), {})
    # The comment on the print line says what it prints.
    (promised,) = re.findall(r"print\(.*\)\s+# (.*)", code)
    assert out.getvalue().strip() == promised
