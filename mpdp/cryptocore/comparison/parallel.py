"""The value holder's answers to several independent comparisons at once, on every core.

An answer costs two 256-bit exponentiations per bit (r_i on both components), the same for every x (its time is
visible to the key owner). gmpy2's list form releases the GIL, so plain threads share them out: no worker
processes, nothing pickled. x and the coin stay with the caller; only differences and blinded values move.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mpdp.cryptocore.arithmetic.shared_exponent import threads
from mpdp.cryptocore.comparison.elgamal import Ciphertext, ElGamalPublicKey
from mpdp.cryptocore.comparison.protocol import ComparisonValueHolder, EncryptedBits, MaskedDifferences, blind


@dataclass(frozen=True)
class ComparisonJob:
    x: int
    bits: int
    reverse: bool
    request: EncryptedBits
    context: bytes = b""  # what the bit proofs are bound to


def answer_all(public: ElGamalPublicKey, jobs: list[ComparisonJob]) -> list[MaskedDifferences]:
    """Each job's answer, in order. Every request is checked (membership and bit proofs) before any blinding; the blinding
    is split evenly over the cores, so a round with one comparison uses every core too."""
    holders = [ComparisonValueHolder(public, job.x, job.bits, reverse=job.reverse, context=job.context) for job in jobs]
    for holder, job in zip(holders, jobs):  # every request's cheap checks before any exponentiation
        holder.check_shapes(job.request)
    differences = [holder.differences(job.request) for holder, job in zip(holders, jobs)]
    work = [value for values in differences for value in values]
    cores = min(len(work), os.cpu_count() or 1)
    size = -(-len(work) // max(cores, 1))
    chunks = [work[start:start + size] for start in range(0, len(work), size)]

    def blind_chunk(chunk: list[Ciphertext]) -> list[Ciphertext]:
        return [blind(public, value) for value in chunk]

    blinded = [value for chunk in threads().map(blind_chunk, chunks) for value in chunk]
    answers, start = [], 0
    for holder, values in zip(holders, differences):
        answers.append(holder.finish(blinded[start:start + len(values)]))
        start += len(values)
    return answers
