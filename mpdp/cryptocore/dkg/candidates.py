"""Additive shares of a candidate prime (Boneh–Franklin 1997/2001, §3.1), lifted from a sieved residue.

p = Σ p_i with holder 1's share ≡ 3 (mod 4) and every other share ≡ 0 (mod 4), so p ≡ 3
(mod 4) as the biprimality test requires. Each share is p_i = b_i + M·c_i, where b_i is the
holder's additive share mod M of a unit (sieve.py; M here is the sieving modulus times the primes r ≤ ℓ of
small_primes.py): p ≡ Σ b_i (mod M) is then a unit mod M
(Malkin–Wu–Boneh 1999). c_i = 4·w_i + (the residue that makes p_i ≡ 3 or 0 mod 4; M is odd), w_i
uniform below 2^W with W = share_bits − bits(M) − 1, so every share is below 2^{h−2}/ℓ (h = bits/2).
Holder 1 also adds O, the least multiple of 4M at or above 2^{h−1} + 2^{h−2}, so p ∈ [1.5·2^{h−1}, 2^h)
and n = pq has exactly `bits` bits whatever the shares. A coalition missing one honest share misses
its b_i (uniform given the coalition's view) and its W ≥ sieve.SPREAD_BITS random bits of w_i.
"""

from __future__ import annotations

import secrets

import gmpy2


def share_bits(bits: int, holders: int) -> int:
    """Bits of each share below the top: ℓ shares below 2^{share_bits + 2} sum below 2^{h−2}."""
    return bits // 2 - 4 - (holders - 1).bit_length()


def offset(bits: int, modulus: int) -> int:
    """O: a multiple of 4M, at least 2^{h−1} + 2^{h−2} and below it + 4M."""
    half, step = bits // 2, 4 * modulus
    return -(-((1 << (half - 1)) + (1 << (half - 2))) // step) * step


def candidate_share(bits: int, holders: int, index: int, residue: int, modulus: int) -> int:
    """Holder `index`'s additive share of one candidate prime of bits/2 bits, ≡ residue (mod M)."""
    spread = share_bits(bits, holders) - modulus.bit_length() - 1
    target = 3 if index == 1 else 0
    fix = (target - residue) * int(gmpy2.invert(modulus, 4)) % 4
    share = residue + modulus * (4 * secrets.randbits(spread) + fix)
    return share + offset(bits, modulus) if index == 1 else share


def phi_share(n: int, p_share: int, q_share: int, index: int) -> int:
    """φ_i: φ(n) = n − (p + q) + 1 = Σ φ_i (holder 1 takes n + 1)."""
    return n - p_share - q_share + 1 if index == 1 else -(p_share + q_share)
