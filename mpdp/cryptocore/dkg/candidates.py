"""Additive shares of a candidate prime (Boneh–Franklin 1997/2001, §3.1).

p = Σ p_i with holder 1's share ≡ 3 (mod 4) and every other share ≡ 0 (mod 4), so p ≡ 3
(mod 4) as the biprimality test requires. Holder 1 also adds 2^{h−1} + 2^{h−2} (h = bits/2)
and every share is below 2^{h−2}/ℓ, so p ∈ [1.5·2^{h−1}, 2^h) and n = pq has exactly `bits`
bits whatever the shares. A coalition missing one honest share misses ≥ h − 4 − ⌈log₂ℓ⌉
random bits of p.
"""

from __future__ import annotations

import secrets


def share_bits(bits: int, holders: int) -> int:
    return bits // 2 - 4 - (holders - 1).bit_length()


def candidate_share(bits: int, holders: int, index: int) -> int:
    """Holder `index`'s additive share of one candidate prime of bits/2 bits."""
    share = 4 * secrets.randbits(share_bits(bits, holders))
    if index == 1:
        half = bits // 2
        share += (1 << (half - 1)) + (1 << (half - 2)) + 3
    return share


def phi_share(n: int, p_share: int, q_share: int, index: int) -> int:
    """φ_i: φ(n) = n − (p + q) + 1 = Σ φ_i (holder 1 takes n + 1)."""
    return n - p_share - q_share + 1 if index == 1 else -(p_share + q_share)
