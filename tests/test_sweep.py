"""Sweeps of independent runs (tensixsim.sweep): the same answers whatever the backend, in order."""

from __future__ import annotations

import pytest

from tensixsim.sweep import SweepError, eltwise_case, run_jobs


def test_processes_give_what_one_process_gives_in_order():
    seeds = [5, 3, 8]
    serial = run_jobs(eltwise_case, seeds, backend="serial")
    assert [s for s, _, _ in serial] == seeds
    assert run_jobs(eltwise_case, seeds, workers=2) == serial
    assert len({crc for _, _, crc in serial}) == 3  # different inputs, different outputs


def test_a_failing_job_fails_the_sweep():
    with pytest.raises(ValueError, match="unknown eltwise op"):
        run_jobs(_bad, [1], workers=1)


def _bad(seed: int) -> None:
    raise ValueError("unknown eltwise op 'nope'")


def test_unknown_or_missing_backends_are_named():
    with pytest.raises(SweepError, match="unknown sweep backend 'mpi'"):
        run_jobs(eltwise_case, [1], backend="mpi")
    try:
        import distributed  # noqa: F401
    except ImportError:
        with pytest.raises(SweepError, match="pip install dask distributed"):
            run_jobs(eltwise_case, [1], backend="dask")
