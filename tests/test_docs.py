"""Generated documentation stays in sync with its source."""

from tensixsim.support import DOC, render


def test_support_matrix_is_current():
    assert DOC.read_text() == render(), "run `python -m tensixsim.support` and commit docs/support-matrix.md"
