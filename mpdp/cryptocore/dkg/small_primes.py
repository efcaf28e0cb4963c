"""Sieving the odd primes r ≤ ℓ as well: the multiplicative sieve run in GF(r^k), r^k > ℓ.

sieve.py sieves the primes ℓ < r ≤ B with Shamir sharing over Z_M, which needs ℓ distinct points whose
differences are units: Z_r has too few for r ≤ ℓ. Left to the trial division of the revealed n, those
primes cost the most: among 16 holders the primes 3..13 alone make a candidate pair Π (r/(r−1))² ≈ 6.8
times less likely to be a pair of primes, and every failed pair has paid for its shares of p and q.

Here the same Malkin–Wu–Boneh sieve runs for each odd prime r ≤ ℓ in the field GF(r^k), k the least with
r^k > ℓ: holder j's point is the element whose base-r digits are those of j (ℓ distinct nonzero elements;
any difference of two is a nonzero field element, hence invertible). Each holder draws a_i uniform in
Z_r* ⊂ GF(r^k) (the constants), the sharings are multiplied in the same tree with the same degree
reduction (holder.py), and the last product h has h(0) = Π a_i ∈ Z_r*. Holder i of the basis takes the
constant coordinate of λ_i·h(i) (the field is a vector space over Z_r and the constants are a coordinate of
it, so these coordinates add up to the constant coordinate of Σ λ_i·h(i) = Π a_i). b_i mod r is that
coordinate; with sieve.py's b_i mod M and the Chinese remainder theorem it gives the residue that
candidates.candidate_share lifts. p is then a unit mod M·R, R = Π r, uniform in Z*_{MR} if one a_i is.

Guarantee: the same as sieve.py's. A coalition of at most t′ holders sees t′ points of each degree-t′
sharing (uniform, here exactly: the randomness is drawn by rejection) and its own degree-2t′ points:
nothing about any a_i or Π a_i mod r. A holder sending inconsistent points makes some candidates ≡ 0
(mod r); holder.py aborts on a revealed n sharing a factor with M·R, as for M.

Arithmetic is by tables (q = r^k ≤ 169 for ℓ ≤ 16) on numpy arrays: a field element is an integer 0..q−1.
On the wire a holder's points for every r are packed into one integer below Q = Π q, which holder.py sends
together with the point mod M as (point mod M) + M·(packed) — one value per chain and recipient.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import lru_cache

import gmpy2
import numpy as np


@dataclass(frozen=True)
class Field:
    r: int
    k: int
    q: int
    add: np.ndarray  # q×q
    mul: np.ndarray  # q×q
    inverse: np.ndarray  # q (0 ↦ 0)
    negate: np.ndarray  # q


def _digits(value: int, r: int, k: int) -> list[int]:
    return [value // r ** j % r for j in range(k)]


def _number(digits: list[int], r: int) -> int:
    return sum(d * r ** j for j, d in enumerate(digits))


def _irreducible(r: int, k: int) -> list[int]:
    """A monic polynomial of degree k ≤ 3 over Z_r with no root (so irreducible): its low coefficients."""
    for low in range(r ** k):
        coefficients = _digits(low, r, k)
        if all((sum(c * x ** j for j, c in enumerate(coefficients)) + x ** k) % r for x in range(r)):
            return coefficients
    raise AssertionError("every degree ≤ 3 has an irreducible polynomial")


@lru_cache(maxsize=16)
def field(r: int, holders: int) -> Field:
    """GF(r^k) with r^k > ℓ, as tables."""
    k = 1
    while r ** k <= holders:
        k += 1
    if k > 3:
        raise ValueError("a root-free polynomial is irreducible only up to degree 3")
    q, low = r ** k, _irreducible(r, k)
    digits = np.array([_digits(a, r, k) for a in range(q)], dtype=np.int64)  # (q, k), lowest digit first
    weights = np.array([r ** j for j in range(k)], dtype=np.int64)
    add = ((digits[:, None, :] + digits[None, :, :]) % r @ weights).astype(np.int16)
    product = np.zeros((q, q, 2 * k - 1), dtype=np.int64)  # all q² products of polynomials at once
    for i in range(k):
        for j in range(k):
            product[:, :, i + j] += digits[:, None, i] * digits[None, :, j]
    for top in range(2 * k - 2, k - 1, -1):  # x^k ≡ −Σ low_j x^j
        carry = product[:, :, top].copy()
        product[:, :, top] = 0
        for j, c in enumerate(low):
            product[:, :, top - k + j] -= carry * c
    mul = (product[:, :, :k] % r @ weights).astype(np.int16)
    inverse = np.zeros(q, dtype=np.int16)
    for a in range(1, q):
        inverse[a] = int(np.nonzero(mul[a] == 1)[0][0])
    negate = np.array([int(np.nonzero(add[a] == 0)[0][0]) for a in range(q)], dtype=np.int16)
    return Field(r, k, q, add, mul, inverse, negate)


def primes(holders: int) -> tuple[int, ...]:
    """The odd primes r ≤ ℓ, which sieve.sieving_modulus leaves out (2 is fixed by p ≡ 3 mod 4)."""
    return tuple(r for r in range(3, holders + 1) if gmpy2.is_prime(r))


def modulus(holders: int) -> int:
    """R = Π r over primes(ℓ)."""
    product = 1
    for r in primes(holders):
        product *= r
    return product


def fields(holders: int) -> list[Field]:
    return [field(r, holders) for r in primes(holders)]


def packing_bound(holders: int) -> int:
    """Q = Π q: the packed points of one chain are below it."""
    bound = 1
    for f in fields(holders):
        bound *= f.q
    return bound


def _uniform(shape: tuple[int, ...], low: int, high: int) -> np.ndarray:
    """Integers uniform in [low, high), exactly (rejection from 16-bit draws), from `secrets`."""
    count, span = int(np.prod(shape)), high - low
    limit = (1 << 16) // span * span
    out = np.empty(0, dtype=np.int64)
    while out.size < count:
        draws = np.frombuffer(secrets.token_bytes(2 * (count - out.size) + 16), dtype=np.uint16).astype(np.int64)
        out = np.concatenate([out, draws[draws < limit] % span + low])
    return out[:count].reshape(shape)


def multiplicative_shares(count: int, holders: int) -> list[np.ndarray]:
    """For each r, `count` values a_i uniform in Z_r* (constants of GF(r^k))."""
    return [_uniform((count,), 1, f.r).astype(np.int16) for f in fields(holders)]


def evaluations(f: Field, constants: np.ndarray, degree: int, holders: int) -> np.ndarray:
    """(count, ℓ): each constant's fresh uniform polynomial of the given degree at the points 1..ℓ."""
    coefficients = _uniform((len(constants), degree), 0, f.q).astype(np.int16)
    columns = np.empty((len(constants), holders), dtype=np.int16)
    for x in range(1, holders + 1):
        value = np.zeros(len(constants), dtype=np.int16)
        for d in range(degree - 1, -1, -1):
            value = f.add[f.mul[value, x], coefficients[:, d]]
        columns[:, x - 1] = f.add[f.mul[value, x], constants]
    return columns


@lru_cache(maxsize=64)
def lagrange_weights(r: int, holders: int, points: tuple[int, ...], at: int) -> tuple[int, ...]:
    """λ_i with g(at) = Σ λ_i g(i) in GF(r^k) for any g of degree < len(points) (points as field elements)."""
    f = field(r, holders)
    weights = []
    for i in points:
        numerator, denominator = 1, 1
        for j in points:
            if j != i:
                numerator = int(f.mul[numerator, f.add[at, f.negate[j]]])
                denominator = int(f.mul[denominator, f.add[i, f.negate[j]]])
        weights.append(int(f.mul[numerator, f.inverse[denominator]]))
    return tuple(weights)


def combine(f: Field, weights: tuple[int, ...], rows: list[np.ndarray]) -> np.ndarray:
    """Σ λ_i·rows[i], element by element."""
    total = np.zeros(rows[0].shape, dtype=np.int16)
    for weight, row in zip(weights, rows):
        total = f.add[total, f.mul[weight, row]]
    return total


def multiply(f: Field, chains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(products of adjacent columns, the odd column carried to the next level), as sieve.multiply."""
    pairs = chains.shape[1] // 2
    products = f.mul[chains[:, 0:2 * pairs:2], chains[:, 1:2 * pairs:2]]
    return products, chains[:, 2 * pairs:]


def additive_residues(f: Field, weight: int, last: np.ndarray) -> np.ndarray:
    """b_i mod r: the constant coordinate (lowest base-r digit) of λ_i·h(i)."""
    return f.mul[weight, last].astype(np.int64) % f.r


def pack(points: list[np.ndarray], holders: int) -> list[int]:
    """One integer below Q per position from each field's points at that position."""
    packed, scale = np.zeros(points[0].shape, dtype=np.int64), 1  # every ℓ ≥ 3 has r = 3
    for f, values in zip(fields(holders), points):
        packed = packed + values.astype(np.int64) * scale
        scale *= f.q
    return [int(v) for v in packed.reshape(-1)]


def unpack(values: list[int], holders: int) -> list[np.ndarray]:
    """The inverse of `pack` (values below Q)."""
    rest = np.array(values, dtype=np.int64)
    out = []
    for f in fields(holders):
        out.append((rest % f.q).astype(np.int16))
        rest //= f.q
    return out


def residue(large: int, large_modulus: int, small: list[int], holders: int) -> int:
    """The residue mod M·R that is `large` mod M and small[s] mod the s-th prime (Chinese remainder theorem)."""
    total = modulus(holders)
    t = 0
    for r, value in zip(primes(holders), small):
        rest = total // r
        t += int(value) * rest * pow(rest, -1, r)
    t %= total
    return large + large_modulus * ((t - large) * pow(large_modulus, -1, total) % total)
