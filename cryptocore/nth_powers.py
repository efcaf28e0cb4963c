"""Prepared re-randomisers ρ^n mod n² for ciphertexts sent to a key's owner (crypto.md, "Secure comparison").

ρ^n depends only on the public n, so a process can make them while it is idle (the offline phase) and spend
them later. Each is taken once and never leaves the process: the owner, who knows p and q, could recover ρ from
a reused one and link the ciphertexts it re-randomised. A process keeps pools for a few moduli (one per
long-lived owner key it has seen); without a prepared value, `take` returns None and the caller computes one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque

import gmpy2

from cryptocore.ciphertext import random_unit

MAX_MODULI = 4
MAX_PREPARED = 4096  # per modulus: 2 MB at 2048 bits, a K = 32 Pathak tournament and then some


def fresh(n: int) -> int:
    """ρ^n mod n² for ρ uniform in Z_n^*: one full-length exponentiation."""
    return int(gmpy2.powmod(random_unit(n), n, n * n))


class NthPowerPool:
    """The prepared ρ^n of one modulus: appended by whoever prepares them, each taken at most once."""

    def __init__(self, n: int):
        self.n = n
        self._values: deque[int] = deque()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def take(self) -> int | None:
        with self._lock:
            return self._values.popleft() if self._values else None

    def take_or_fresh(self) -> int:
        value = self.take()
        return fresh(self.n) if value is None else value

    def add(self, values: list[int]) -> None:
        with self._lock:
            room = MAX_PREPARED - len(self._values)
            self._values.extend(values[:max(room, 0)])

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


_pools: OrderedDict[int, NthPowerPool] = OrderedDict()
_pools_lock = threading.Lock()


def pool_for(n: int) -> NthPowerPool:
    """This process's pool for n (the least recently used of more than MAX_MODULI is dropped)."""
    with _pools_lock:
        pool = _pools.get(n)
        if pool is None:
            pool = _pools[n] = NthPowerPool(n)
            while len(_pools) > MAX_MODULI:
                _pools.popitem(last=False)
        else:
            _pools.move_to_end(n)
        return pool

