"""Generated documentation stays in sync with its source, and self-contained examples run."""

import contextlib
import io
import re
from pathlib import Path

from tensixsim.support import DOC, render

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_support_matrix_is_current():
    assert DOC.read_text() == render(), "run `python -m tensixsim.support` and commit docs/support-matrix.md"


def _section(path: Path, title: str) -> str:
    text = path.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_after_an_error_example_runs_as_printed():
    section = _section(DOCS / "running-kernels.md", "After an error")
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "running-kernels.md", "exec"), {})
    # The comment on the print line says what it prints.
    (promised,) = re.findall(r"print\(.*\)\s+# (.*)", code)
    assert out.getvalue().strip() == promised
