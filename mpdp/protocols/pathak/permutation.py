"""π1 by commit–reveal (pathak.md Stage 1 step 2).

Each party commits to SHA-256(seed ‖ nonce), then reveals; π1 is a
Fisher–Yates shuffle driven by a SHA-256 counter-mode PRG keyed with the XOR
of all seeds, so it is uniform if any one party is honest.
"""

from __future__ import annotations

import hashlib
import secrets

SEED_BYTES = 32


def new_seed() -> tuple[bytes, bytes]:
    return secrets.token_bytes(SEED_BYTES), secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes, nonce: bytes) -> bytes:
    return hashlib.sha256(b"mpdp/pathak/pi1-commitment/v1" + seed + nonce).digest()


def opens(commit: bytes, seed: bytes, nonce: bytes) -> bool:
    return len(seed) == SEED_BYTES and len(nonce) == SEED_BYTES and secrets.compare_digest(commit, commitment(seed, nonce))


class HashPrg:
    def __init__(self, key: bytes):
        self._key = key
        self._counter = 0

    def _block(self) -> int:
        self._counter += 1
        return int.from_bytes(hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest(), "big")

    def below(self, bound: int) -> int:
        """Uniform in [0, bound) by rejection sampling on 256-bit blocks."""
        limit = (1 << 256) - (1 << 256) % bound
        while True:
            value = self._block()
            if value < limit:
                return value % bound


def combined_seed(seeds: list[bytes]) -> bytes:
    combined = bytes(SEED_BYTES)
    for seed in seeds:
        combined = bytes(a ^ b for a, b in zip(combined, seed))
    return combined


def permutation(seeds: list[bytes], size: int) -> list[int]:
    """π1 as a list: π1(j) = result[j − 1], values 1..size."""
    prg = HashPrg(b"mpdp/pathak/pi1/v1" + combined_seed(seeds))
    values = list(range(1, size + 1))
    for i in range(size - 1, 0, -1):
        j = prg.below(i + 1)
        values[i], values[j] = values[j], values[i]
    return values


def inverse(perm: list[int]) -> list[int]:
    result = [0] * len(perm)
    for index, value in enumerate(perm, start=1):
        result[value - 1] = index
    return result
