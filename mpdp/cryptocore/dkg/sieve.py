"""Distributed sieving: candidate primes that are units mod M = Π r (ℓ < r ≤ B, r prime), before any product.

Malkin–Wu–Boneh, "Experimenting with shared generation of RSA keys" (NDSS 1999), §3: each contributor (`contributors`) draws a
multiplicative share a_i uniform in Z*_M, the holders turn Π a_i mod M into additive shares b_i mod M,
and each lifts b_i to its integer share p_i = b_i + M·c_i (candidates.candidate_share). Then p ≡ Π a_i
(mod M) is a unit mod M, uniform in Z*_M because one honest a_i is.

The conversion is BGW over Z_M (Ben-Or–Goldwasser–Wigderson 1988, semi-honest degree reduction as in
Gennaro–Rabin–Rabin, PODC 1998): every prime factor of M exceeds ℓ, so the points 1..ℓ and their
differences are units mod M and Shamir sharing works factor by factor (shamir.py). Each contributor shares
a_i with degree t′; the t′+1 sharings are multiplied pairwise in a tree (`multiply`): a product of two degree-t′
sharings has degree 2t′ ≤ ℓ − 1; each holder of the first 2t′ + 1 points (`basis`) reshares its point with
degree t′, and holder j's point of the product is Σ λ_i·g_i(j) (holder.py). The last product is not
reshared: holder i of the basis takes b_i = λ_i·h(i) mod M (`additive_weight`), the others b_i = 0.
Only the holders 1..t′+1 draw an a_i (`contributors`): a coalition of at most t′ misses one of them, which
suffices, and the tree then has t′+1 leaves instead of ℓ. A coalition of at most t′ holders sees t′ points of each degree-t′ sharing and its own degree-2t′ points:
nothing about any a_i or about Π a_i (semi-honest; perfect but for the 2^−64 of
shamir.random_residues). Nothing is published.

Primes r ≤ ℓ are not in M (Z_r has fewer than ℓ nonzero points): the same sieve runs for them in
GF(r^k) (small_primes.py), and a candidate is a unit mod M·R; the primes above B are left to the trial
division of the revealed n. B is chosen by measurement (docs/performance-dkg.md) and kept
small enough that the lift leaves at least SPREAD_BITS random bits in every share.

A holder that sends inconsistent shares or reshares changes Π a_i into an arbitrary residue; candidates
then share factors with M often, which an honest run never produces: `holder` aborts when a revealed n
does (the check costs one gcd).
"""

from __future__ import annotations

import math
from functools import lru_cache

import gmpy2

from mpdp.cryptocore.dkg import candidates, shamir, small_primes

SPREAD_BITS = 128  # random bits of c_i left in every share after the lift (candidates.candidate_share)


def default_bound(bits: int) -> int:
    """B by measurement (docs/performance-dkg.md): the candidates a key needs fall as ln B, the sieve's
    bytes and CPU grow as B."""
    return 400 if bits >= 2048 else 200


@lru_cache(maxsize=32)
def sieving_modulus(bits: int, holders: int, bound: int) -> int:
    """M = Π r for the primes ℓ < r ≤ B; refuses a B that would leave fewer than SPREAD_BITS random bits."""
    modulus = gmpy2.mpz(1)
    r = gmpy2.next_prime(holders)
    while r <= bound:
        modulus *= r
        r = gmpy2.next_prime(r)
    if candidates.share_bits(bits, holders) - (modulus * small_primes.modulus(holders)).bit_length() - 1 < SPREAD_BITS:
        raise ValueError(f"a sieving bound of {bound} is too large for {bits}-bit keys")
    return int(modulus)


def density_gain(modulus: int) -> float:
    """Π r/(r − 1) over r | M: how much likelier a unit mod M is prime than a random odd number."""
    gain, r = 1.0, 3
    while modulus > 1:
        if modulus % r == 0:
            gain *= r / (r - 1)
            modulus //= r
        r = int(gmpy2.next_prime(r))
    return gain


def expected_pairs(bits: int, holders: int, bound: int) -> float:
    """Candidate pairs one expects to try: (ln 2^{bits/2} / (2·gain))² (p is odd and a unit mod M·R)."""
    units_of = sieving_modulus(bits, holders, bound) * small_primes.modulus(holders)
    single = 2 * density_gain(units_of) / (bits / 2 * math.log(2))
    return 1 / single ** 2


def multiplicative_shares(count: int, modulus: int) -> list:
    """`count` values a_i uniform in Z*_M (up to 2^−64 each: shamir.random_residues), by rejection."""
    units: list = []
    while len(units) < count:
        units += [a for a in shamir.random_residues(2 * (count - len(units)) + 8, modulus) if gmpy2.gcd(a, modulus) == 1]
    return units[:count]


def contributors(holders: int) -> tuple[int, ...]:
    """The holders that draw multiplicative shares: 1..t′+1. Any coalition the BGW sharing tolerates (at most t′)
    misses one of them, whose a_i hides Π a_i and makes it uniform in Z*_M; t′+1 inputs need t′ products per
    candidate instead of ℓ − 1, and the reshares are most of the sieve's bytes."""
    return tuple(range(1, shamir.bgw_degree(holders) + 2))


def basis(holders: int) -> tuple[int, ...]:
    """The points whose degree-2t′ values determine a product: 1..2t′+1."""
    return tuple(range(1, 2 * shamir.bgw_degree(holders) + 2))


def multiply(points: list, modulus: int) -> tuple[list, list]:
    """(products of adjacent pairs at this holder's point, the odd sharing carried to the next level)."""
    products = [points[k] * points[k + 1] % modulus for k in range(0, len(points) - 1, 2)]
    return products, points[len(points) - 1:] if len(points) % 2 else []


def additive_weight(index: int, holders: int, modulus: int):
    """λ_i with b_i = λ_i·h(i) mod M from the last (degree-2t′) product point h(i): Σ b_i ≡ Π a_i (mod M);
    0 for a holder outside the basis."""
    points = basis(holders)
    if index not in points:
        return gmpy2.mpz(0)
    return shamir.lagrange_weights(points, 0, modulus)[index - 1]
