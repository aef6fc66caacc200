"""Many independent runs at once: a sweep of programs, inputs or settings over worker processes.

Runs of different tiles (or chips) share nothing, so a sweep parallelises without any coordination:
each job is a picklable function and its argument; it builds its own tiles in a worker process and
returns what it measured. :func:`run_jobs` hands the jobs to one of

- ``"processes"`` (the default): Python's :class:`concurrent.futures.ProcessPoolExecutor` on this
  machine, one worker per core;
- ``"dask"``: a Dask distributed cluster (``pip install dask distributed``), the one at ``address``
  or a local one;
- ``"ray"``: a Ray cluster (``pip install ray``), the one at ``address`` or a local one;
- ``"serial"``: this process, one job after the other (for debugging a job).

Results come back in the order of the arguments. A job that raises makes :func:`run_jobs` raise
that error, as a plain call would. docs/scaling.md shows a sweep and discusses splitting one chip
across processes.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("processes", "dask", "ray", "serial")


class SweepError(RuntimeError):
    """A sweep cannot start: an unknown backend, or the package it needs is not installed."""


def run_jobs(
    job: Callable[[T], R],
    arguments: Iterable[T],
    *,
    backend: str = "processes",
    workers: int | None = None,
    address: str | None = None,
) -> list[R]:
    """``[job(a) for a in arguments]``, the calls spread over ``backend``'s workers.

    ``workers``: how many processes (``processes``; default: the machine's cores) or local workers
    (``dask``/``ray`` without ``address``). ``address``: a running Dask scheduler or Ray cluster.
    """
    items = list(arguments)
    if backend == "serial":
        return [job(a) for a in items]
    if backend == "processes":
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            return list(pool.map(job, items))
    if backend == "dask":
        distributed = _optional("distributed", "dask", "dask distributed")
        client = distributed.Client(address) if address else distributed.Client(n_workers=workers or None)
        try:
            return client.gather(client.map(job, items, pure=False))
        finally:
            client.close()
    if backend == "ray":
        ray = _optional("ray", "ray", "ray")
        ray.init(address=address, num_cpus=None if address else workers, ignore_reinit_error=True)
        remote = ray.remote(job)
        return ray.get([remote.remote(a) for a in items])
    raise SweepError(f"unknown sweep backend {backend!r}: one of {', '.join(BACKENDS)}")


def _optional(module: str, backend: str, packages: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise SweepError(f"the {backend} backend needs {packages}: pip install {packages}") from None


# ---------------------------------------------------------------- an example job


def eltwise_case(seed: int, tiles: int = 2, op: str = "add") -> tuple[int, int, int]:
    """Run the SDK's five-core element-wise kernel on ``tiles`` random BF16 tile pairs drawn from
    ``seed``; returns (seed, emulated cycles, CRC-32 of the output tiles). The output is checked
    bit for bit against the kernel's model first (AssertionError otherwise)."""
    import numpy as np

    from tensixsim import Tile
    from tensixsim.sdk import programs

    rng = np.random.default_rng(seed)

    a, b = programs.random_bf16_tiles(rng, tiles), programs.random_bf16_tiles(rng, tiles)
    tile = Tile("blackhole")
    for core, elf in programs.build_eltwise(op, tiles=tiles).items():
        tile.load_elf(core, elf)
    tile.write(programs.KERNEL_SRC0, programs.tiles_to_l1(a))
    tile.write(programs.KERNEL_SRC1, programs.tiles_to_l1(b))
    result = tile.run(max_cycles=10_000_000)
    out = tile.read(programs.KERNEL_DST, tiles * 32 * 32 * 2)
    got = programs.tiles_from_l1(out, tiles)
    for x, y, z in zip(a, b, got, strict=True):
        assert np.array_equal(z, programs.eltwise_model(op, x, y)), f"seed {seed}: wrong output"
    return seed, result.cycles, zlib.crc32(out)
