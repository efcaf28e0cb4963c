"""Prepared re-randomisers ρ^n mod n² for Paillier ciphertexts sent to a key's owner (crypto.md).

ρ^n depends only on the public n, so a process can make them while it is idle (the offline phase) and spend
them later. Each is taken once and never leaves the process: the owner, who knows p and q, could recover ρ from
a reused one and link the ciphertexts it re-randomised. A process keeps pools for a few moduli (one per
long-lived owner key it has seen); without a prepared value, `take` returns None and the caller computes one.

A key owner's proofs need n-th powers too (`bit_proof`'s commitments s^n), with their roots s: those pools
(`rooted_pool_for`) hold (s, s^n) pairs under the same rule, each taken once (a reused s gives away a root).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from typing import Callable, Generic, Iterator, TypeVar

import gmpy2
from phe import PaillierPublicKey

from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all
from mpdp.cryptocore.paillier.ciphertext import random_unit

MAX_MODULI = 4
MAX_PREPARED = 4096  # per modulus: 2 MB at 2048 bits, a K = 32 Pathak tournament and then some
Item = TypeVar("Item")
Pool = TypeVar("Pool", bound="PreparedPool")


def fresh(n: int) -> int:
    """ρ^n mod n² for ρ uniform in Z_n^*: one full-length exponentiation."""
    return int(gmpy2.powmod(random_unit(n), n, n * n))


class PreparedPool(Generic[Item]):
    """The prepared items of one modulus: appended by whoever prepares them, each taken at most once."""

    def __init__(self, n: int):
        self.n = n
        self._values: deque[Item] = deque()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Item]:
        with self._lock:
            return iter(list(self._values))

    def take(self) -> Item | None:
        with self._lock:
            return self._values.popleft() if self._values else None

    def take_up_to(self, count: int) -> list[Item]:
        """Up to `count` prepared items, each taken once; the caller makes the rest."""
        taken: list[Item] = []
        while len(taken) < count and (value := self.take()) is not None:
            taken.append(value)
        return taken

    def add(self, values: list[Item]) -> None:
        with self._lock:
            room = MAX_PREPARED - len(self._values)
            self._values.extend(values[:max(room, 0)])

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


class NthPowerPool(PreparedPool[int]):
    """ρ^n for a value holder's re-randomisers."""

    def take_or_fresh(self) -> int:
        value = self.take()
        return fresh(self.n) if value is None else value

    def take_or_fresh_many(self, count: int) -> list[int]:
        """`count` values: the prepared ones first, the rest made together on every core."""
        taken = self.take_up_to(count)
        missing = count - len(taken)
        return taken + (powmod_all([random_unit(self.n) for _ in range(missing)], self.n, self.n**2) if missing else [])


class _PerModulus(Generic[Pool]):
    """This process's pools of one kind, one per modulus; the least recently used of more than MAX_MODULI is
    dropped."""

    def __init__(self, make: Callable[[int], Pool]):
        self._make = make
        self._pools: OrderedDict[int, Pool] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, n: int) -> Pool:
        with self._lock:
            pool = self._pools.get(n)
            if pool is None:
                pool = self._pools[n] = self._make(n)
                while len(self._pools) > MAX_MODULI:
                    self._pools.popitem(last=False)
            else:
                self._pools.move_to_end(n)
            return pool


pool_for = _PerModulus(NthPowerPool)
"""This process's ρ^n for n."""

rooted_pool_for = _PerModulus(PreparedPool[tuple[int, int]])
"""This process's (s, s^n mod n²) for n: an owner's proof commitments, whose s it needs too (`bit_proof`)."""


def prepare_while_idle(n: int, count: int) -> None:
    """In a background thread, make up to `count` ρ^n for n (the exponentiations release the GIL)."""
    pool = pool_for(n)
    wanted = max(0, min(count, MAX_PREPARED) - len(pool))
    if wanted:
        threading.Thread(target=lambda: pool.add(powmod_all([random_unit(n) for _ in range(wanted)], n, n * n)),
                         name="re-randomisers", daemon=True).start()


def rerandomise_for_key_owner(public_key: PaillierPublicKey, ciphertext: int) -> int:
    """Multiply by ρ^n with ρ uniform in Z_n^*: what any ciphertext sent *to the key's owner* gets.

    Never the owner's published h_s (it chooses it: h_s = 1, or h_s of small order, leaves the
    ciphertext's randomness readable) and never a short DJN exponent (the owner knows p and q
    and can take discrete logs). The owner can recover ρ, but ρ is uniform and independent of
    everything else, so the result's randomness is too. A ρ^n prepared earlier (`prepare_while_idle`) is used
    once if this process holds one."""
    return int(ciphertext * pool_for(public_key.n).take_or_fresh() % public_key.nsquare)


def rerandomise_all_for_key_owner(public_key: PaillierPublicKey, ciphertexts: list[int]) -> list[int]:
    """`rerandomise_for_key_owner` for several ciphertexts, the missing ρ^n made together on every core."""
    powers = pool_for(public_key.n).take_or_fresh_many(len(ciphertexts))
    return [int(c * power % public_key.nsquare) for c, power in zip(ciphertexts, powers)]
