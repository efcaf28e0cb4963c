"""Exact discrete Laplace and discrete Gaussian samplers (Canonne, Kamath & Steinke 2020).

Integer arithmetic and rationals only, so no floating-point artefact can leak
through the fixed-point encoding (Mironov 2012). Randomness comes from a
`randbelow(n)` source: `secrets.randbelow` by default; a seeded
`random.Random(...).randrange` in test and simulation modes.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from typing import Callable

RandBelow = Callable[[int], int]


def _bernoulli(p: Fraction, randbelow: RandBelow) -> bool:
    return randbelow(p.denominator) < p.numerator


def _bernoulli_exp_small(gamma: Fraction, randbelow: RandBelow) -> bool:
    """Bernoulli(exp(−γ)) for γ in [0, 1] (CKS Algorithm 1, first case)."""
    k = 1
    while _bernoulli(gamma / k, randbelow):
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: Fraction, randbelow: RandBelow = secrets.randbelow) -> bool:
    """Bernoulli(exp(−γ)) for γ ≥ 0 (CKS Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp_small(Fraction(1), randbelow):
            return False
        gamma -= 1
    return _bernoulli_exp_small(gamma, randbelow)


def discrete_laplace(scale: Fraction, randbelow: RandBelow = secrets.randbelow) -> int:
    """P(x) ∝ exp(−|x|/scale) on the integers (CKS Algorithm 2, scale = t/s)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = randbelow(t)
        if not bernoulli_exp(Fraction(u, t), randbelow):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), randbelow):
            v += 1
        magnitude = (u + t * v) // s
        negative = randbelow(2) == 1
        if negative and magnitude == 0:
            continue
        return -magnitude if negative else magnitude


def discrete_gaussian(sigma_squared: Fraction, randbelow: RandBelow = secrets.randbelow) -> int:
    """P(x) ∝ exp(−x²/(2σ²)) on the integers (CKS Algorithm 3)."""
    t = math.isqrt(math.floor(sigma_squared)) + 1
    while True:
        y = discrete_laplace(Fraction(t), randbelow)
        excess = abs(y) - sigma_squared / t
        if bernoulli_exp(excess * excess / (2 * sigma_squared), randbelow):
            return y
