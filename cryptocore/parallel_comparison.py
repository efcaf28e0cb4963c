"""The value holder's answers to several independent comparisons at once, one worker process per core.

An answer is ℓ pairs of full-length exponentiations mod n², pure CPU under the GIL, so threads would not
help. The workers come from a fork server (never a fork of a role process: it runs gRPC threads) with this
module preloaded, started at the first round and kept for the next (starting them costs about 0.2 s). Only the differences Enc(c_i) travel to them (x and
the coin stay here) and the blinded values come back."""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from phe import PaillierPublicKey

from cryptocore.comparison import ComparisonValueHolder, EncryptedBits, MaskedDifferences, blind
from cryptocore.paillier import PublicKey


@dataclass(frozen=True)
class ComparisonJob:
    x: int
    bits: int
    reverse: bool
    request: EncryptedBits


def _blind_all(n: int, differences: list[int]) -> list[int]:
    paillier = PaillierPublicKey(n)
    return [blind(paillier, value) for value in differences]


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ProcessPoolExecutor:
    """One pool per process, started on first use and kept: starting workers costs about 0.2 s a round."""
    global _pool
    with _pool_lock:
        if _pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__])
            _pool = ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=context)
        return _pool


def _shutdown() -> None:
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None


def _on_workers(n: int, chunks: list[list[int]]) -> list[int]:
    pool = _workers()
    futures = [pool.submit(_blind_all, n, chunk) for chunk in chunks]
    return [value for future in futures for value in future.result()]


def answer_all(public: PublicKey, key_bits: int | None, jobs: list[ComparisonJob]) -> list[MaskedDifferences]:
    """Each job's answer, in order. The cheap part (validation, the differences) runs here; the blinding, two
    full exponentiations per bit, is split evenly over the workers bit by bit, so a round with one comparison
    uses every core too. In this process when there is one core."""
    holders = [ComparisonValueHolder(public, job.x, job.bits, key_bits, reverse=job.reverse) for job in jobs]
    differences = [holder.differences(job.request) for holder, job in zip(holders, jobs)]
    flat = [value for values in differences for value in values]
    workers = min(len(flat), os.cpu_count() or 1)
    if workers <= 1:
        blinded = _blind_all(public.n, flat)
    else:
        size = -(-len(flat) // workers)
        chunks = [flat[start:start + size] for start in range(0, len(flat), size)]
        try:
            blinded = _on_workers(public.n, chunks)
        except BrokenProcessPool:  # a worker died (e.g. killed): start new ones, once
            _shutdown()
            blinded = _on_workers(public.n, chunks)
    answers, start = [], 0
    for holder, values in zip(holders, differences):
        answers.append(holder.finish(blinded[start:start + len(values)]))
        start += len(values)
    return answers
