"""Which thresholds leave one decryptable sum per slot when one principal holds c key shares
(docs/bound-decryption.md, "Why one subset per slot").

An honest holder decrypts once per slot; a holder run by the colluding principal (a malicious party with a share,
or an operator hosting several holders) decrypts whatever it is asked. Two sets of t holders, each able to
decrypt a different subset of one slot, share at least 2t − ℓ holders. If that is more than c, they share an
honest holder, who answered only one of them: so 2t > ℓ + c is the condition, and c ≥ 1 always, since the one
malicious party the threat model allows may hold a share. It also gives t > c: no principal decrypts alone."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

# The share of the parties a session assumes honest unless told otherwise: fewer than a third may fail or collude,
# the same bound as the default threshold below, so the key and the noise calibrations assume one adversary.
DEFAULT_HONEST_FRACTION = 2 / 3


class QuorumError(ValueError):
    """A threshold or a layout with which one principal's holders could get two subsets of a slot decrypted."""


def most_shares(hosts: Iterable[Hashable]) -> int:
    """c: the most key shares any one principal holds, given each holder's principal; at least 1 (the malicious
    party may hold a share)."""
    counts: dict[Hashable, int] = {}
    for host in hosts:
        counts[host] = counts.get(host, 0) + 1
    return max([1, *counts.values()])


def smallest_threshold(holders: int, colluding: int = 1) -> int:
    """The least t with 2t > ℓ + c."""
    return (holders + max(1, colluding)) // 2 + 1


def check(threshold: int, holders: int, colluding: int = 1) -> None:
    """Refuse a threshold with which two decrypting sets of holders could share no honest holder, in one line."""
    colluding = max(1, colluding)
    low = smallest_threshold(holders, colluding)
    if low > holders:
        raise QuorumError(
            f"one principal holds {colluding} of the {holders} key shares: no threshold t ≤ {holders} gives "
            f"2t > ℓ + c, so it could have two subsets of one sum decrypted (or decrypt alone); put fewer parties in "
            "one process, or pass --single-operator if one operator runs them all anyway (a simulation)")
    if not low <= threshold <= holders:
        raise QuorumError(
            f"threshold t = {threshold} of ℓ = {holders} key holders, c = {colluding} held by one principal: need "
            f"2t > ℓ + c, t in [{low}, {holders}], or two subsets of one sum could each reach t partial decryptions")


def default_threshold(holders: int, colluding: int = 1) -> int:
    """t = ⌊2ℓ/3⌋ + 1 (fewer than a third of the holders may be missing), raised to the smallest t with
    2t > ℓ + c when one principal holds more shares. More than ℓ when no threshold works: `check` says so."""
    return max(2 * holders // 3 + 1, smallest_threshold(holders, colluding))
