"""Shamir sharing over Z_N at the points 1..ℓ, for any N whose prime factors all exceed ℓ.

BGW multiplication (Ben-Or–Goldwasser–Wigderson 1988) as Boneh–Franklin use it: the holders
share their inputs with degree t′ = ⌊(ℓ−1)/2⌋, multiply the sums point by point (degree
2t′ ≤ ℓ−1) and add a random sharing of zero of degree 2t′, so that the product points reveal
the product and nothing else. Every difference of two points is below ℓ, hence a unit mod N.
"""

from __future__ import annotations

import secrets
from functools import lru_cache

import gmpy2


def bgw_degree(holders: int) -> int:
    """t′ = ⌊(ℓ−1)/2⌋: the product of two sharings has degree 2t′ ≤ ℓ−1 and still interpolates."""
    return (holders - 1) // 2


def random_residues(count: int, modulus) -> list:
    """`count` values uniform mod `modulus` up to 2^−64 each, from one call to `secrets` (a call per value
    costs more than the sharing itself when a stage shares thousands of values)."""
    width = (int(modulus).bit_length() + 64 + 7) // 8
    pool = secrets.token_bytes(count * width)
    return [gmpy2.mpz(int.from_bytes(pool[k * width:(k + 1) * width], "big")) % modulus for k in range(count)]


def evaluations_many(constants: list, degree: int, holders: int, modulus) -> list[list]:
    """`evaluations` for each constant, one fresh polynomial each."""
    coefficients = random_residues(len(constants) * degree, modulus)
    columns = []
    for k, constant in enumerate(constants):
        upper = coefficients[k * degree:(k + 1) * degree]
        points = []
        for x in range(1, holders + 1):
            value = gmpy2.mpz(0)
            for coefficient in reversed(upper):
                value = value * x + coefficient
            points.append((value * x + constant) % modulus)
        columns.append(points)
    return columns


def evaluations(constant: int, degree: int, holders: int, modulus) -> list:
    """f(1)..f(ℓ) for f uniform of the given degree with f(0) = constant (mod modulus)."""
    return evaluations_many([constant], degree, holders, modulus)[0]


@lru_cache(maxsize=64)
def _weights(points: tuple[int, ...], at: int) -> tuple[tuple[int, int], ...]:
    """(numerator, denominator) of each Lagrange weight to `at`, exact integers."""
    weights = []
    for i in points:
        numerator, denominator = 1, 1
        for j in points:
            if j != i:
                numerator *= at - j
                denominator *= i - j
        weights.append((numerator, denominator))
    return tuple(weights)


def lagrange_weights(points: tuple[int, ...], at: int, modulus) -> list:
    """λ_i with f(at) = Σ λ_i f(i) mod modulus for any f of degree < len(points)."""
    return [gmpy2.mpz(numerator) * gmpy2.invert(denominator % modulus, modulus) % modulus
            for numerator, denominator in _weights(tuple(points), at)]


def interpolate(values: list, points: tuple[int, ...], modulus, at: int = 0):
    """f(at) from f's values at `points` (mod modulus)."""
    total = gmpy2.mpz(0)
    for weight, value in zip(lagrange_weights(points, at, modulus), values):
        total += weight * value
    return total % modulus


def consistent(values: list, degree: int, modulus) -> bool:
    """values[i] = f(i + 1) for one f of the given degree: the points beyond degree + 1 agree."""
    basis = tuple(range(1, degree + 2))
    for extra in range(degree + 2, len(values) + 1):
        if interpolate(values[:degree + 1], basis, modulus, at=extra) != values[extra - 1] % modulus:
            return False
    return True
