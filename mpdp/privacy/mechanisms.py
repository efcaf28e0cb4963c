"""Output-perturbation noise for Pathak's averaged classifier (privacy.md).

Record-level unit, replacement neighbours. One party's rounded model
round(2^F·ŵ_j)/2^F has L2 sensitivity 2/(n_j·λ) + 2γ/λ (an inexact minimiser with
‖∇J‖ ≤ γ) + √d·2^−F (rounding to the grid). The paper scales the noise of the
*average* to that; the average's sensitivity is 1/K of it, which `tight` uses.

The protocol adds the noise to the *sum* Σ_j round(2^F·ŵ_j), so the noise is drawn
directly on the integer grid at the sum's scale (K times the average's scale):
never as K times a coarser sample, which would leave the release mod K a
noise-free function of the data (pathak.md Stage 2 step 3). It is clamped to a
public bound B_ζ computed at a public n_min; the clamp probability, times
(1 + e^ε), counts in δ.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mpdp.privacy.composition import Guarantee
from mpdp.privacy.discrete import discrete_gaussian, discrete_laplace

MECHANISMS = ("laplace-paper", "l2-laplace", "gaussian")
CALIBRATIONS = ("paper", "tight")
MAX_EPSILON = 100.0  # beyond this the noise is negligible and e^ε overflows the δ bookkeeping soon after
MIN_FRACTIONAL_BITS = 16  # the rounding term √d·2^−F must stay small beside 2/(nλ)
MAX_FRACTIONAL_BITS = 48


def analytic_gaussian_delta(sensitivity: float, sigma: float, epsilon: float) -> float:
    """δ of the Gaussian mechanism at ε, exactly (Balle & Wang 2018, Theorem 8)."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    from scipy.special import ndtr  # the normal CDF; scipy.special on use, never scipy.stats (50 MB in a role)

    return float(ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b))


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ with δ(ε) ≤ δ."""
    high = sensitivity
    while analytic_gaussian_delta(sensitivity, high, epsilon) > delta:
        high *= 2
    from scipy.optimize import brentq

    return brentq(lambda s: analytic_gaussian_delta(sensitivity, s, epsilon) - delta, 1e-12 * sensitivity, high,
                  xtol=1e-12 * high)


def analytic_gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """The ε a Gaussian of scale σ really gives at δ."""
    if analytic_gaussian_delta(sensitivity, sigma, 0.0) <= delta:
        return 0.0
    high = 1.0
    while analytic_gaussian_delta(sensitivity, sigma, high) > delta:
        high *= 2
    from scipy.optimize import brentq

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
        if not (math.isfinite(self.epsilon) and 0 < self.epsilon <= MAX_EPSILON):
            raise ValueError(f"ε must be in (0, {MAX_EPSILON:g}]")
        if not (math.isfinite(self.regularization) and self.regularization > 0 and self.parties >= 1
                and self.dimension >= 1):
            raise ValueError("need λ > 0, K ≥ 1 and d ≥ 1")
        if self.mechanism == "gaussian" and not 0 < self.delta < 1:
            raise ValueError("the Gaussian mechanism needs 0 < δ < 1")
        if not MIN_FRACTIONAL_BITS <= self.fractional_bits <= MAX_FRACTIONAL_BITS:
            raise ValueError(f"F must be in [{MIN_FRACTIONAL_BITS}, {MAX_FRACTIONAL_BITS}]")
        if self.n_min < 1:
            raise ValueError("n_min must be at least 1")

    @property
    def rounding_term(self) -> float:
        """L2 change of one model's encoding caused by rounding it to the grid: √d·2^−F."""
        return math.sqrt(self.dimension) * 2.0**-self.fractional_bits

    def model_sensitivity(self, records: int) -> float:
        """L2 sensitivity of one party's encoded model round(2^F·ŵ_j)/2^F."""
        return 2 / (records * self.regularization) + 2 * self.gradient_tolerance / self.regularization + self.rounding_term

    def sensitivity(self, records: int) -> float:
        """L2 sensitivity the noise of the average is calibrated to, for a party with `records` rows."""
        one_model = self.model_sensitivity(records)
        return one_model if self.calibration == "paper" else one_model / self.parties

    def scale(self, records: int) -> float:
        """At the average's scale: Laplace scale per coordinate, Gamma scale of the norm, or Gaussian σ."""
        sensitivity = self.sensitivity(records)
        if self.mechanism == "gaussian":
            return analytic_gaussian_sigma(sensitivity, self.epsilon, self.delta)
        return sensitivity / self.epsilon

    def grid_scale(self, records: int) -> Fraction:
        """The same scale for the sum, in grid units: K·scale·2^F."""
        return Fraction(self.scale(records)) * self.parties * 2**self.fractional_bits

    @property
    def clamp_tail(self) -> float:
        """Per-coordinate clamp probability at n_min: 2^−σ/(d·(1 + e^ε)), so the δ it costs is ≤ 2^−σ."""
        return 2.0**-self.mask_bits / (self.dimension * (1 + math.exp(self.epsilon)))

    @property
    def clamp_delta(self) -> float:
        """What clamping adds to δ: Pr[any coordinate clamped]·(1 + e^ε) ≤ d·tail·(1 + e^ε)."""
        return self.dimension * self.clamp_tail * (1 + math.exp(self.epsilon))

    @property
    def clamp_bound(self) -> float:
        """B_η at the average's scale: |η_i| ≤ B_η except with probability ≤ `clamp_tail`, at n = n_min."""
        tail = self.clamp_tail
        scale = self.scale(self.n_min)
        if self.mechanism == "laplace-paper":
            return scale * math.log(1 / tail)
        if self.mechanism == "gaussian":
            return scale * math.sqrt(2 * math.log(2 / tail))
        from scipy.special import gammainccinv  # Gamma(d, scale)'s inverse survival function, as scipy.stats has it

        return float(scale * gammainccinv(self.dimension, tail))

    @property
    def clamp_bound_grid(self) -> int:
        """B_ζ: the same bound for the sum's noise, in grid units (one grid unit of slack for discreteness)."""
        return math.ceil(self.clamp_bound * self.parties * 2**self.fractional_bits) + 1

    @property
    def noise_value_bits(self) -> int:
        """b_ζ: signed width of one coordinate of the sum's noise on the grid."""
        return self.clamp_bound_grid.bit_length() + 1

    def sample(self, records: int, source: random.Random) -> list[int]:
        """ζ = K·η on the integer grid at the sum's scale, clamped to B_ζ: exact discrete samplers,
        or (l2-laplace) a high-precision draw rounded to the grid."""
        scale = self.grid_scale(records)
        bound = self.clamp_bound_grid
        if self.mechanism == "laplace-paper":
            values = [discrete_laplace(scale, source.randrange) for _ in range(self.dimension)]
        elif self.mechanism == "gaussian":
            values = [discrete_gaussian(scale**2, source.randrange) for _ in range(self.dimension)]
        else:
            direction = [source.gauss(0.0, 1.0) for _ in range(self.dimension)]
            length = math.sqrt(sum(x * x for x in direction))
            radius = source.gammavariate(self.dimension, float(scale))
            values = [round(radius * x / length) for x in direction]
        return [max(-bound, min(bound, v)) for v in values]

    def sample_fast(self, records: int, rng: np.random.Generator, runs: int) -> np.ndarray:
        """Simulation mode (experiments): η = ζ/(K·2^F) from continuous draws at the sum's scale, rounded to
        the sum's grid and clamped; runs × d."""
        grid = float(self.parties * 2**self.fractional_bits)
        scale, bound = self.scale(records) * grid, float(self.clamp_bound_grid)
        if self.mechanism == "laplace-paper":
            values = rng.laplace(0.0, scale, size=(runs, self.dimension))
        elif self.mechanism == "gaussian":
            values = rng.normal(0.0, scale, size=(runs, self.dimension))
        else:
            direction = rng.normal(size=(runs, self.dimension))
            direction /= np.linalg.norm(direction, axis=1, keepdims=True)
            values = direction * rng.gamma(self.dimension, scale, size=(runs, 1))
        return np.clip(np.round(values), -bound, bound) / grid

    def effective_epsilon(self, records: int | None = None) -> float:
        """The ε the release really gives for replacing one record (at n = `records`, default n_min).

        The released sum changes by at most `model_sensitivity` in L2 (√d times that in L1); its noise
        has K times the average's scale."""
        records = records or self.n_min
        one_model = self.model_sensitivity(records)
        sum_scale = self.parties * self.scale(records)
        if self.mechanism == "laplace-paper":  # per-coordinate Laplace needs the L1 sensitivity √d·Δ₂
            return math.sqrt(self.dimension) * one_model / sum_scale
        if self.mechanism == "l2-laplace":
            return one_model / sum_scale
        return analytic_gaussian_epsilon(one_model, sum_scale, self.delta)

    def guarantee(self) -> Guarantee:
        """What every party spends on its data in one release (its ledger's entry): the ε really delivered
        (effective, at n_min), not the nominal one."""
        delta = (self.delta if self.mechanism == "gaussian" else 0.0) + self.clamp_delta
        epsilon = self.effective_epsilon()
        if self.mechanism == "gaussian":
            multiplier = self.parties * self.scale(self.n_min) / self.model_sensitivity(self.n_min)
            return Guarantee(epsilon, delta, f"pathak {self.mechanism} ({self.calibration} calibration)",
                             {"kind": "gaussian", "noise_multiplier": multiplier}, extra_delta=self.clamp_delta)
        return Guarantee(epsilon, delta, f"pathak {self.mechanism} ({self.calibration} calibration)",
                         {"kind": "pure", "epsilon": epsilon, "count": 1}, extra_delta=self.clamp_delta,
                         proven=self.mechanism != "laplace-paper")  # the paper's per-coordinate calibration

    def report(self, smallest_records: int | None = None) -> dict:
        """What the release guarantees; `smallest_records` (n_(1)) only for an evaluator's report."""
        report = {
            "unit": "one training record (replacement)",
            "mechanism": self.mechanism,
            "calibration": self.calibration,
            "epsilon": self.epsilon,
            "sensitivity": "L2 2/(n_(1)·λ) + 2γ/λ + √d·2^−F (rounding) of one encoded model"
            + (", applied to the average (paper)" if self.calibration == "paper" else ", divided by K (tight)"),
            "noise_grid": "drawn on the integer grid of the sum at K times the average's scale",
            "clamp_bound": self.clamp_bound,
            "clamp_delta": self.clamp_delta,
            # n_(1) is secret, so the scale is stated as a formula and at the public n_min (its largest value).
            "noise_scale_formula": {
                "laplace-paper": "per-coordinate discrete Laplace, scale Δ(n_(1))/ε for the average",
                "l2-laplace": "‖η‖ ~ Gamma(d, Δ(n_(1))/ε), uniform direction, rounded to the grid",
                "gaussian": "discrete Gaussian, σ of the analytic Gaussian mechanism for Δ(n_(1)), ε, δ",
            }[self.mechanism] + (f", Δ(n) = {'2/(nλ) + 2γ/λ + √d·2^−F' if self.calibration == 'paper' else '(2/(nλ) + 2γ/λ + √d·2^−F)/K'}"),
            "noise_scale_at_n_min": self.scale(self.n_min),
            "n_min": self.n_min,
            # Independent of n: every term scales with Δ(n).
            "epsilon_effective": self.effective_epsilon(smallest_records),
        }
        if self.mechanism == "laplace-paper":
            report["note"] = "i.i.d. Laplace with an L2 sensitivity: the claimed ε is not what it gives (L1 ≤ √d·L2)"
        report["delta"] = (self.delta if self.mechanism == "gaussian" else 0.0) + self.clamp_delta
        if smallest_records is not None:
            report["noise_scale"] = self.scale(smallest_records)
            report["smallest_party_records"] = smallest_records
        return report
