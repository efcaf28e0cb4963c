"""Distributed sieving: candidate primes that are units mod M = Π r (ℓ < r ≤ B, r prime), before any product.

Malkin–Wu–Boneh, "Experimenting with shared generation of RSA keys" (NDSS 1999), §3: each holder draws a
multiplicative share a_i uniform in Z*_M, the holders turn Π a_i mod M into additive shares b_i mod M,
and each lifts b_i to its integer share p_i = b_i + M·c_i (candidates.candidate_share). Then p ≡ Π a_i
(mod M) is a unit mod M, uniform in Z*_M because one honest a_i is.

The conversion is BGW over Z_M (Ben-Or–Goldwasser–Wigderson 1988, semi-honest degree reduction as in
Gennaro–Rabin–Rabin, PODC 1998): every prime factor of M exceeds ℓ, so the points 1..ℓ and their
differences are units mod M and Shamir sharing works factor by factor (shamir.py). Each holder shares a_i
with degree t′; the ℓ sharings are multiplied pairwise in a tree (`levels`): a product of two degree-t′
sharings has degree 2t′ ≤ ℓ − 1; each holder of the first 2t′ + 1 points reshares its point with degree
t′ (`reshare`), and holder j's point of the product is Σ λ_i·g_i(j) (`combine`). The last product is not
reshared: holder i of the first 2t′ + 1 takes b_i = λ_i·h(i) mod M (`additive`), the others b_i = 0.
A coalition of at most t′ holders sees t′ points of each degree-t′ sharing and its own degree-2t′ points:
nothing about any a_i or about Π a_i (perfect privacy, semi-honest). Nothing is published.

Primes r ≤ ℓ are not in M (Z_r has fewer than ℓ nonzero points): they are left to the trial division of
the revealed n, as are the primes above B. B is chosen by measurement (docs/performance-dkg.md) and kept
small enough that the lift leaves at least SPREAD_BITS random bits in every share.

A holder that sends inconsistent shares or reshares changes Π a_i into an arbitrary residue; candidates
then share factors with M often, which an honest run never produces: `holder` aborts when a revealed n
does (the check costs one gcd).
"""

from __future__ import annotations

import math
import secrets
from functools import lru_cache

import gmpy2

from mpdp.cryptocore.dkg import candidates, shamir

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
    if candidates.share_bits(bits, holders) - modulus.bit_length() - 1 < SPREAD_BITS:
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
    """Candidate pairs one expects to try: (ln 2^{bits/2} / (2·gain))² (p is odd and a unit mod M)."""
    single = 2 * density_gain(sieving_modulus(bits, holders, bound)) / (bits / 2 * math.log(2))
    return 1 / single ** 2


def multiplicative_share(modulus: int) -> int:
    """a_i uniform in Z*_M."""
    while True:
        a = secrets.randbelow(modulus)
        if math.gcd(a, modulus) == 1:
            return a


def levels(holders: int) -> list[int]:
    """How many sharings enter each multiplication level: ℓ, ⌈ℓ/2⌉, … down to 2 (the last product)."""
    sizes = []
    width = holders
    while width > 1:
        sizes.append(width)
        width = (width + 1) // 2
    return sizes


def basis(holders: int) -> tuple[int, ...]:
    """The points whose degree-2t′ values determine a product: 1..2t′+1."""
    return tuple(range(1, 2 * shamir.bgw_degree(holders) + 2))


def multiply(points: list, modulus: int) -> tuple[list, list]:
    """(products of adjacent pairs at this holder's point, the odd sharing carried to the next level)."""
    products = [points[k] * points[k + 1] % modulus for k in range(0, len(points) - 1, 2)]
    return products, points[len(points) - 1:] if len(points) % 2 else []


def reshare(value, holders: int, modulus: int) -> list:
    """g(1)..g(ℓ) of a fresh degree-t′ sharing of this holder's degree-2t′ point."""
    return shamir.evaluations(value, shamir.bgw_degree(holders), holders, modulus)


def combine(received: list, holders: int, modulus: int):
    """This holder's degree-t′ point of the product from the reshares g_i(me) of the basis holders i."""
    weights = shamir.lagrange_weights(basis(holders), 0, modulus)
    return sum(w * gmpy2.mpz(g) for w, g in zip(weights, received)) % modulus


def additive(value, index: int, holders: int, modulus: int) -> int:
    """b_i from the last (degree-2t′) product point: Σ b_i ≡ Π a_i (mod M)."""
    points = basis(holders)
    if index not in points:
        return 0
    return int(shamir.lagrange_weights(points, 0, modulus)[index - 1] * gmpy2.mpz(value) % modulus)
