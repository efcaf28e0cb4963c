"""The value holder's answers to several independent comparisons at once, one worker process per core, and
the offline phase that prepares their re-randomisers.

An answer costs two full-length exponentiations mod n² per bit (r_i, and ρ^n unless one was prepared), the
same for every x (its time is visible to the key owner), pure CPU under the GIL, so threads would not help. The workers come from a fork server (never a fork of a role
process: it runs gRPC threads) with this module preloaded, started at first use and kept (starting them costs
about 0.2 s). Only the differences Enc(c_i) and prepared ρ^n travel to them (x and the coin stay here) and the
blinded values come back.

`prepare` fills this process's ρ^n pool for a key in the workers while the process is idle (after a session);
an answer cancels whatever refill has not started, so the online phase never waits behind it."""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from phe import PaillierPublicKey

from cryptocore import nth_powers
from cryptocore.comparison import ComparisonValueHolder, EncryptedBits, MaskedDifferences, blind
from cryptocore.paillier import PublicKey


@dataclass(frozen=True)
class ComparisonJob:
    x: int
    bits: int
    reverse: bool
    request: EncryptedBits


# A work item: (Enc(c_i); a prepared ρ^n, or None to make one in the worker).
Item = tuple[int, int | None]
REFILL_CHUNK = 8  # ρ^n per refill task: an answer waits behind at most one chunk per worker (about 0.1 s)


def _blind_all(n: int, items: list[Item]) -> list[int]:
    paillier = PaillierPublicKey(n)
    return [blind(paillier, value, power) for value, power in items]


def _fresh_powers(n: int, count: int) -> list[int]:
    return [nth_powers.fresh(n) for _ in range(count)]


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
_refills: list[Future] = []


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


def _cancel_refills() -> None:
    with _pool_lock:
        for future in _refills:
            future.cancel()  # only those not yet started; a running chunk still lands in the pool
        _refills.clear()


def prepare(n: int, target: int) -> int:
    """Start making ρ^n for n in the workers until this process holds `target` (capped); returns how many were
    asked for. Idle-time work: the next answer cancels what has not started."""
    pool = nth_powers.pool_for(n)
    wanted = max(0, min(target, nth_powers.MAX_PREPARED) - len(pool))
    if not wanted:
        return 0
    _cancel_refills()
    try:
        workers = _workers()
        futures = [workers.submit(_fresh_powers, n, min(REFILL_CHUNK, wanted - start))
                   for start in range(0, wanted, REFILL_CHUNK)]
    except BrokenProcessPool:
        _shutdown()
        return 0
    for future in futures:
        future.add_done_callback(lambda done: None if done.cancelled() or done.exception() else pool.add(done.result()))
    with _pool_lock:
        _refills.extend(futures)
    return wanted


def _on_workers(n: int, chunks: list[list[Item]]) -> list[int]:
    pool = _workers()
    futures = [pool.submit(_blind_all, n, chunk) for chunk in chunks]
    return [value for future in futures for value in future.result()]


def _split_by_cost(items: list[Item], workers: int) -> list[list[int]]:
    """Indices of the items per worker, balanced by full exponentiations (one or two per item)."""
    loads = [0] * workers
    groups: list[list[int]] = [[] for _ in range(workers)]
    for index in sorted(range(len(items)), key=lambda i: -(1 + (items[i][1] is None))):
        target = loads.index(min(loads))
        groups[target].append(index)
        loads[target] += 1 + (items[index][1] is None)
    return [group for group in groups if group]


def answer_all(public: PublicKey, key_bits: int | None, jobs: list[ComparisonJob]) -> list[MaskedDifferences]:
    """Each job's answer, in order. The cheap part (validation, the differences) runs here; the exponentiations
    are split evenly over the workers, so a round with one comparison uses every core too. In this process when
    there is one core."""
    _cancel_refills()
    holders = [ComparisonValueHolder(public, job.x, job.bits, key_bits, reverse=job.reverse) for job in jobs]
    differences = [holder.differences(job.request) for holder, job in zip(holders, jobs)]
    prepared = nth_powers.pool_for(public.n)
    work: list[Item] = [(value, prepared.take()) for values in differences for value in values]
    workers = min(len(work), os.cpu_count() or 1)
    if workers <= 1:
        blinded = _blind_all(public.n, work)
    else:
        groups = _split_by_cost(work, workers)
        chunks = [[work[i] for i in group] for group in groups]
        try:
            flat = _on_workers(public.n, chunks)
        except BrokenProcessPool:  # a worker died (e.g. killed): start new ones, once
            _shutdown()
            flat = _on_workers(public.n, chunks)
        blinded = [0] * len(work)
        for index, value in zip((i for group in groups for i in group), flat):
            blinded[index] = value
    answers, start = [], 0
    for holder, values in zip(holders, differences):
        answers.append(holder.finish(blinded[start:start + len(values)]))
        start += len(values)
    return answers
