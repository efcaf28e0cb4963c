"""Several teachers per data owner (data-and-metrics.md, "DPPP: several teachers per data owner"): each owner's
rows split into T disjoint parts, one logical party (teacher) per part, all T hosted by the owner's process.

A training record sits in exactly one part, so it moves one teacher's vote (one count off, one on per query):
DPPP's sensitivity is one vote whatever T is, and every logical teacher casts its own encrypted, proven ballot.
The split is the even one: the launcher permutes the rows and cuts them into consecutive parts, so the T
consecutive parts one process hosts are a random share of the rows cut T ways.

One malicious owner now speaks for T teachers, their T noise shares and T key shares. A decryptable sum holds
m = ⌈τ·K⌉ contributions (τ = 2/3), and the owner colluding with the aggregator subtracts its T shares from it,
so each share carries N/(m − T) tosses (mpdp.privacy.collusion, c = T from the topology, checked by every
party): at 5 owners × 4 teachers, ε = 10 over 20 queries, N_i = 6 rather than the one-party 4. Decryption needs
t = ⌊2ℓ/3⌋ + 1 shares; both hold against one owner when the others' (owners − 1)·T teachers are at least
⌈τ·owners·T⌉, i.e. from 3 owners on."""

from __future__ import annotations

import math

from mpdp.threshold_sum.quorums import DEFAULT_HONEST_FRACTION


def logical_parties(owners: int, teachers_per_owner: int, parties_per_process: int, split: str) -> tuple[int, int]:
    """(logical parties, parties per process) for `owners` data owners with T teachers each; a clear
    ValueError when the layout would let one owner exceed what the calibration and the key assume."""
    if teachers_per_owner < 1:
        raise ValueError("--teachers-per-party must be at least 1")
    if teachers_per_owner == 1:
        return owners, parties_per_process
    if parties_per_process != 1:
        raise ValueError("--teachers-per-party sets the parties per process (T, one process per data owner): "
                         "give one of the two")
    if split != "even":
        raise ValueError("--teachers-per-party takes the even split (each owner's rows cut into T equal parts)")
    total = owners * teachers_per_owner
    if (owners - 1) * teachers_per_owner < math.ceil(DEFAULT_HONEST_FRACTION * total):
        raise ValueError(f"--teachers-per-party {teachers_per_owner} with {owners} data owners: one owner would "
                         f"speak for more than a third of the {total} teachers; use at least 3 owners")
    return total, teachers_per_owner
