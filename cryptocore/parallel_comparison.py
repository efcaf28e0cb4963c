"""The value holder's answers to several independent comparisons at once, one worker process per core.

An answer is ℓ pairs of full-length exponentiations mod n², pure CPU under the GIL, so threads would not
help. The workers come from a fork server (never a fork of a role process: it runs gRPC threads) with this
module preloaded, and live only while a batch is answered. Only public values, x and the coin travel to them."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from cryptocore.comparison import ComparisonValueHolder, EncryptedBits, MaskedDifferences
from cryptocore.paillier import PublicKey


@dataclass(frozen=True)
class ComparisonJob:
    x: int
    bits: int
    reverse: bool
    request: EncryptedBits


def _answer(n: int, hs: int, key_bits: int | None, job: ComparisonJob) -> MaskedDifferences:
    public = PublicKey.from_integers(n, hs, key_bits)
    return ComparisonValueHolder(public, job.x, job.bits, key_bits, reverse=job.reverse).respond(job.request)


def answer_all(public: PublicKey, key_bits: int | None, jobs: list[ComparisonJob]) -> list[MaskedDifferences]:
    """Each job's answer, in order; in this process when there is one job or one core."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [_answer(public.n, public.hs, key_bits, job) for job in jobs]
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_answer, public.n, public.hs, key_bits, job) for job in jobs]
        return [future.result() for future in futures]
