"""The experiments run BLAS on one thread. They solve thousands of small systems (one local model per party);
on a machine whose cores are shared, OpenBLAS's worker threads wait for a core far longer than such a solve
takes (a 124 × 124 solve measured 20 ms with two threads under load, 0.6 ms with one)."""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

from threadpoolctl import threadpool_limits

Result = TypeVar("Result")


def single_blas_thread(run: Callable[..., Result]) -> Callable[..., Result]:
    """`run` with every BLAS/OpenMP pool limited to one thread while it runs."""

    @functools.wraps(run)
    def limited(*args, **kwargs) -> Result:
        with threadpool_limits(limits=1):
            return run(*args, **kwargs)

    return limited
