"""From a BGW product mod N₂ to integer Shamir shares of degree t − 1 with Feldman commitments.

1. Additive shares mod N₂ → over the integers. The holders of a set S of 2t′+1 points turn
   the product point X(j) into a_j = λ_j·X(j) mod N₂, so Σ a_j = x + k·N₂ with 0 ≤ k < |S|.
   x < N₂·2^−κ, so k is ⌈Σ top_j / 2^8⌉ where top_j = ⌊a_j·2^8 / N₂⌋ (the approximation
   trick of Algesheimer–Camenisch–Shoup 2002, §3): publishing the top bits of uniformly
   random shares reveals k and nothing about x beyond a 2^−κ statistical distance.
   Holder 1 subtracts k·N₂; the x_j are then integers summing to x.
2. Integer secret sharing (Rabin 1998; Damgård–Thorbek 2006): holder j deals
   g_j(X) = x_j + Σ_{k=1}^{t−1} c_{jk}X^k with c_{jk} uniform in [0, 2^κ·Δ·N₂); holder i's
   key share is s_i = Σ_j g_j(i), a point of f = Σ g_j of degree t − 1 with f(0) = x, and
   Δ·f(0) = Σ_{i∈T} λ^Δ_{0,i}·s_i over the integers for any t holders T (threshold.py).
3. Feldman commitments in Z*_{n²} with base v: C_{jk} = v^{Δ·c_{jk}} (C_{j0} = v^{Δ·x_j}), so
   holder i checks v^{Δ·g_j(i)} = Π_k C_{jk}^{i^k} and everyone computes
   v_i = v^{Δ·s_i} = Π_k (Π_j C_{jk})^{i^k}.
"""

from __future__ import annotations

import math
import secrets

import gmpy2

STATISTICAL_BITS = 80  # κ
TOP_BITS = 8  # 2^8 > 16 ≥ |S|: the rounding errors of |S| shares sum to less than one wrap


def top_bits(share, modulus) -> int:
    return int(gmpy2.mpz(share) * (1 << TOP_BITS) // modulus)


def wraps(tops: list[int]) -> int:
    """k = ⌈Σ top_j / 2^TOP_BITS⌉ (see 1.)."""
    return -(-sum(tops) // (1 << TOP_BITS))


def coefficient_bound(modulus, holders: int) -> int:
    return (1 << STATISTICAL_BITS) * math.factorial(holders) * int(modulus)


def deal(constant: int, threshold: int, holders: int, bound: int) -> tuple[list[int], list[int]]:
    """(coefficients c_0 = constant, c_1..c_{t−1}; shares g(1)..g(ℓ)) over the integers."""
    coefficients = [int(constant)] + [secrets.randbelow(bound) for _ in range(threshold - 1)]
    shares = [sum(c * i**k for k, c in enumerate(coefficients)) for i in range(1, holders + 1)]
    return coefficients, shares


def commit(base, delta: int, coefficients: list[int], nsquare) -> list[int]:
    """C_k = v^{Δ·c_k} mod n² (c_0 may be negative: v is a unit)."""
    return [int(gmpy2.powmod(base, delta * c, nsquare)) for c in coefficients]


def committed_point(commitments: list[int], at: int, nsquare):
    """Π_k C_k^{at^k} = v^{Δ·g(at)}."""
    value = gmpy2.mpz(1)
    for k, commitment in enumerate(commitments):
        value = value * gmpy2.powmod(commitment, at**k, nsquare) % nsquare
    return value


def matches(base, delta: int, share: int, commitments: list[int], at: int, nsquare) -> bool:
    return gmpy2.powmod(base, delta * share, nsquare) == committed_point(commitments, at, nsquare)


def verification_keys(all_commitments: list[list[int]], holders: int, nsquare) -> tuple[int, ...]:
    """v_1..v_ℓ from every dealer's commitments: v_i = Π_k (Π_j C_{jk})^{i^k}."""
    combined = []
    for k in range(len(all_commitments[0])):
        product = gmpy2.mpz(1)
        for commitments in all_commitments:
            product = product * commitments[k] % nsquare
        combined.append(int(product))
    return tuple(int(committed_point(combined, i, nsquare)) for i in range(1, holders + 1))
