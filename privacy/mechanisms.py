"""Output-perturbation noise for Pathak's averaged classifier (privacy.md).

Record-level unit, replacement neighbours. One party's ŵ_j has L2 sensitivity
2/(n_j·λ) (+2γ/λ for an inexact minimiser with ‖∇J‖ ≤ γ). The paper scales the
noise of the *average* to that; the average's sensitivity is 1/K of it, which
`tight` uses. Noise that enters a ciphertext lives on the fixed-point grid and
is clamped to a public bound B_η (from a public n_min) with Pr[clamp] ≤ 2^−σ/d
per coordinate; that probability counts in δ.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq
from scipy.stats import gamma as gamma_distribution
from scipy.stats import norm

from privacy.discrete import discrete_gaussian, discrete_laplace

MECHANISMS = ("laplace-paper", "l2-laplace", "gaussian")
CALIBRATIONS = ("paper", "tight")


def analytic_gaussian_delta(sensitivity: float, sigma: float, epsilon: float) -> float:
    """δ of the Gaussian mechanism at ε, exactly (Balle & Wang 2018, Theorem 8)."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ with δ(ε) ≤ δ."""
    high = sensitivity
    while analytic_gaussian_delta(sensitivity, high, epsilon) > delta:
        high *= 2
    return brentq(lambda s: analytic_gaussian_delta(sensitivity, s, epsilon) - delta, 1e-12 * sensitivity, high,
                  xtol=1e-12 * high)


def analytic_gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """The ε a Gaussian of scale σ really gives at δ."""
    if analytic_gaussian_delta(sensitivity, sigma, 0.0) <= delta:
        return 0.0
    high = 1.0
    while analytic_gaussian_delta(sensitivity, sigma, high) > delta:
        high *= 2
    return brentq(lambda e: analytic_gaussian_delta(sensitivity, sigma, e) - delta, 0.0, high, xtol=1e-10)


@dataclass(frozen=True)
class OutputPerturbation:
    mechanism: str
    calibration: str
    epsilon: float
    delta: float  # the mechanism's own δ (gaussian); the clamp adds 2^−σ
    regularization: float  # λ
    parties: int  # K
    dimension: int  # d
    fractional_bits: int = 32
    mask_bits: int = 40  # σ
    gradient_tolerance: float = 1e-6  # γ
    n_min: int = 1

    def __post_init__(self):
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {', '.join(MECHANISMS)}")
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}")
        if not (self.epsilon > 0 and self.regularization > 0 and self.parties >= 1 and self.dimension >= 1):
            raise ValueError("need ε > 0, λ > 0, K ≥ 1 and d ≥ 1")
        if self.mechanism == "gaussian" and not 0 < self.delta < 1:
            raise ValueError("the Gaussian mechanism needs 0 < δ < 1")
        if self.n_min < 1:
            raise ValueError("n_min must be at least 1")

    def sensitivity(self, records: int) -> float:
        """L2 sensitivity the noise is calibrated to, for a party with `records` rows."""
        one_model = 2 / (records * self.regularization) + 2 * self.gradient_tolerance / self.regularization
        return one_model if self.calibration == "paper" else one_model / self.parties

    def scale(self, records: int) -> float:
        """Laplace scale per coordinate, Gamma scale of the norm, or Gaussian σ."""
        sensitivity = self.sensitivity(records)
        if self.mechanism == "gaussian":
            return analytic_gaussian_sigma(sensitivity, self.epsilon, self.delta)
        return sensitivity / self.epsilon

    @property
    def clamp_bound(self) -> float:
        """B_η: |η_i| ≤ B_η except with probability ≤ 2^−σ/d per coordinate, at n = n_min."""
        tail = 2.0**-self.mask_bits / self.dimension
        scale = self.scale(self.n_min)
        if self.mechanism == "laplace-paper":
            return scale * math.log(1 / tail)
        if self.mechanism == "gaussian":
            return scale * math.sqrt(2 * math.log(2 / tail))
        return float(gamma_distribution.isf(tail, self.dimension, scale=scale))

    @property
    def clamp_bound_grid(self) -> int:
        return math.ceil(self.clamp_bound * 2**self.fractional_bits)

    @property
    def noise_value_bits(self) -> int:
        """b_η: signed width of one noise coordinate on the grid."""
        return self.clamp_bound_grid.bit_length() + 1

    def sample(self, records: int, source: random.Random) -> list[int]:
        """η on the fixed-point grid, clamped: exact discrete samplers, or high precision then rounding."""
        grid = 2**self.fractional_bits
        scale = self.scale(records)
        bound = self.clamp_bound_grid
        if self.mechanism == "laplace-paper":
            values = [discrete_laplace(Fraction(scale) * grid, source.randrange) for _ in range(self.dimension)]
        elif self.mechanism == "gaussian":
            values = [discrete_gaussian((Fraction(scale) * grid) ** 2, source.randrange) for _ in range(self.dimension)]
        else:
            direction = [source.gauss(0.0, 1.0) for _ in range(self.dimension)]
            length = math.sqrt(sum(x * x for x in direction))
            radius = source.gammavariate(self.dimension, scale)
            values = [round(radius * x / length * grid) for x in direction]
        return [max(-bound, min(bound, v)) for v in values]

    def sample_fast(self, records: int, rng: np.random.Generator, runs: int) -> np.ndarray:
        """Simulation mode (experiments): continuous draws, rounded to the grid and clamped; runs × d."""
        scale, grid, bound = self.scale(records), 2.0**self.fractional_bits, self.clamp_bound
        if self.mechanism == "laplace-paper":
            values = rng.laplace(0.0, scale, size=(runs, self.dimension))
        elif self.mechanism == "gaussian":
            values = rng.normal(0.0, scale, size=(runs, self.dimension))
        else:
            direction = rng.normal(size=(runs, self.dimension))
            direction /= np.linalg.norm(direction, axis=1, keepdims=True)
            values = direction * rng.gamma(self.dimension, scale, size=(runs, 1))
        return np.clip(np.round(values * grid) / grid, -bound, bound)

    def report(self, smallest_records: int | None = None) -> dict:
        """What the release guarantees; `smallest_records` (n_(1)) only for an evaluator's report."""
        clamp_delta = 2.0**-self.mask_bits
        report = {
            "unit": "one training record (replacement)",
            "mechanism": self.mechanism,
            "calibration": self.calibration,
            "epsilon": self.epsilon,
            "sensitivity": "L2 2/(n_(1)·λ) + 2γ/λ of one model"
            + (", applied to the average (paper)" if self.calibration == "paper" else ", divided by K (tight)"),
            "clamp_bound": self.clamp_bound,
            "clamp_probability_in_delta": clamp_delta,
            # n_(1) is secret, so the scale is stated as a formula and at the public n_min (its largest value).
            "noise_scale_formula": {
                "laplace-paper": "per-coordinate Laplace scale Δ(n_(1))/ε",
                "l2-laplace": "‖η‖ ~ Gamma(d, Δ(n_(1))/ε), uniform direction",
                "gaussian": "σ of the analytic Gaussian mechanism for Δ(n_(1)), ε, δ",
            }[self.mechanism] + f", Δ(n) = {'2/(nλ) + 2γ/λ' if self.calibration == 'paper' else '(2/(nλ) + 2γ/λ)/K'}",
            "noise_scale_at_n_min": self.scale(self.n_min),
        }
        d, k = self.dimension, self.parties
        factor = 1 if self.calibration == "tight" else 1 / k  # how much larger the noise is than needed
        if self.mechanism == "laplace-paper":
            report["epsilon_effective"] = self.epsilon * math.sqrt(d) * factor
            report["delta"] = clamp_delta
            report["note"] = "i.i.d. Laplace with an L2 sensitivity: the claimed ε is not what it gives (L1 ≤ √d·L2)"
        elif self.mechanism == "l2-laplace":
            report["epsilon_effective"] = self.epsilon * factor
            report["delta"] = clamp_delta
        else:
            report["delta"] = self.delta + clamp_delta
            if smallest_records is not None:
                tight = self.sensitivity(smallest_records) * (factor if self.calibration == "paper" else 1)
                report["epsilon_effective"] = analytic_gaussian_epsilon(tight, self.scale(smallest_records), self.delta)
        if smallest_records is not None:
            report["noise_scale"] = self.scale(smallest_records)
            report["smallest_party_records"] = smallest_records
        return report
