"""Pairs (x, h_s^x) made ahead of use, for a sender's membership proofs (docs/malicious-party.md, "The noise pool").

A proof of a vote costs its sender one fixed-base exponentiation h_s^r for the encryption and one h_s^w per branch
(mpdp/cryptocore/proofs/membership_proof.py); neither depends on the vote. A sender that makes the pairs while idle (the
offline fill) casts its votes online with multiplications alone. The pairs are the sender's secret, each drawn
from `secrets` and handed out once; when the pool runs dry a pair is made on the spot (slower, the same proof).
"""

from __future__ import annotations

import secrets
import threading
from collections import deque

from mpdp.cryptocore.proofs import membership_proof as mp

MAX_PAIRS = 20_000  # per kind and sender: about 14 MB at 2048 bits


class PowerPool:
    def __init__(self, key: mp.ProofKey, capacity: int = MAX_PAIRS):
        self.key = key
        self.capacity = capacity
        self._lock = threading.Lock()
        self._randomness: deque[tuple[int, int]] = deque()  # r below 2^randomness_bits: encryptions
        self._masks: deque[tuple[int, int]] = deque()  # w below 2^mask_bits: branch commitments

    def room(self) -> tuple[int, int]:
        with self._lock:
            return self.capacity - len(self._randomness), self.capacity - len(self._masks)

    @property
    def levels(self) -> tuple[int, int]:
        with self._lock:
            return len(self._randomness), len(self._masks)

    def fill(self, randomness: int, masks: int) -> None:
        """Make `randomness` encryption pairs and `masks` commitment pairs (ValueError beyond the capacity)."""
        rooms = self.room()
        if randomness > rooms[0] or masks > rooms[1]:
            raise ValueError(f"the pool has room for {rooms[0]} and {rooms[1]} more pairs")
        made_r = [self._pair(self.key.randomness_bits) for _ in range(randomness)]
        made_w = [self._pair(self.key.mask_bits) for _ in range(masks)]
        with self._lock:
            self._randomness.extend(made_r)
            self._masks.extend(made_w)

    def _pair(self, bits: int) -> tuple[int, int]:
        exponent = secrets.randbits(bits)
        return exponent, int(mp._table(self.key).pow(exponent))

    def randomness(self) -> tuple[int, int]:
        with self._lock:
            if self._randomness:
                return self._randomness.popleft()
        return self._pair(self.key.randomness_bits)

    def mask(self) -> tuple[int, int]:
        with self._lock:
            if self._masks:
                return self._masks.popleft()
        return self._pair(self.key.mask_bits)
