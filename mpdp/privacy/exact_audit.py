"""The audit's exact check (privacy.md, last paragraph, made exact): the accountant applied to the noise a
mechanism really samples, at a sensitivity derived apart from its calibration, against the claimed (ε, δ).

The noise parameters come from the sampler object the audit draws with (Binomial tosses, Skellam μ, a Laplace
or Gaussian scale on the grid, a lattice multiplier), never from the calibration formula that chose them, and
`moments_agree` checks the draws themselves against those parameters, so a sampler that declares one thing
and draws another fails too. The sensitivity is the larger of the spec's bound (mpdp/privacy/spec_sensitivity.py,
written apart from the code that calibrates) and the change measured on real neighbouring data sets.

Every ε here is an upper bound on the mechanism's true ε at the given δ (dp-accounting's pessimistic PLDs,
pure-DP ratios, or the accountant the spec names), so "exact ε ≤ claim" proves the claim for that noise and
sensitivity, and "exact ε > claim" is a bug.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

DISCRETIZATION = 1e-4
LOG_MASS_TRUNCATION = -60.0
SUPPORT_SIGMAS = 16  # beyond 16 σ every log-probability is below the truncation


@dataclass(frozen=True)
class ExactCheck:
    epsilon: float  # the ε the sampled noise gives at `delta`, for `sensitivity` (math.inf: none)
    claimed_epsilon: float
    delta: float
    accountant: str
    noise: dict  # the parameters read from the sampler
    sensitivity: dict  # spec bound, measured, used
    draws_agree: bool  # the sampler's draws match the parameters it declares
    tolerance: float = 1e-9  # the accountant's own error (its discretisation, per composed release)

    @property
    def exceeds_claim(self) -> bool:
        return not self.draws_agree or self.epsilon > self.claimed_epsilon + self.tolerance

    def to_dict(self) -> dict:
        return {"epsilon": None if math.isinf(self.epsilon) else self.epsilon,
                "claimed_epsilon": self.claimed_epsilon, "delta": self.delta, "accountant": self.accountant,
                "noise": self.noise, "sensitivity": self.sensitivity, "draws_agree": self.draws_agree,
                "tolerance": self.tolerance, "exceeds_claim": self.exceeds_claim}


def moments_agree(draws: np.ndarray, mean: float, variance: float, excess_kurtosis: float = 0.0) -> bool:
    """The draws' mean and variance are within 6 standard errors of what the sampler declares (a factor of 2 in
    the variance is many standard errors at the audit's sample sizes; an honest sampler fails one run in ~10⁸)."""
    draws = np.asarray(draws, dtype=float).ravel()
    n = len(draws)
    if n < 100:
        raise ValueError("the moment check needs at least 100 draws")
    if variance == 0:
        return bool(np.all(draws == mean))
    mean_error = abs(draws.mean() - mean) / math.sqrt(variance / n)
    variance_error = abs(draws.var(ddof=1) - variance) / (variance * math.sqrt((2 + excess_kurtosis) / n))
    return bool(mean_error < 6 and variance_error < 6)


# Lattice noise (Binomial, Skellam, a multiple of either): exact PLDs of the sum's distribution.

def binomial_log_pmf(tosses: int) -> Callable[[np.ndarray], np.ndarray]:
    """ln P(k) of Bin(tosses, ½) − tosses/2 (centred), from the log-gamma function."""
    from scipy.special import gammaln

    def log_pmf(k: np.ndarray) -> np.ndarray:
        x = k + tosses / 2
        inside = (x >= 0) & (x <= tosses) & (np.mod(x, 1) == 0)
        safe = np.where(inside, x, 0)
        values = gammaln(tosses + 1) - gammaln(safe + 1) - gammaln(tosses - safe + 1) - tosses * math.log(2)
        return np.where(inside, values, -np.inf)

    return log_pmf


def skellam_log_pmf(mu: float) -> Callable[[np.ndarray], np.ndarray]:
    """ln P(k) of Sk(μ) = Pois(μ/2) − Pois(μ/2): e^(−μ)·I_|k|(μ) (scipy's exponentially scaled Bessel)."""
    from scipy.special import ive

    def log_pmf(k: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(ive(np.abs(k), mu))

    return log_pmf


def _shift_pld(log_pmf: Callable[[np.ndarray], np.ndarray], std: float, shift: int):
    from dp_accounting.pld import privacy_loss_distribution

    window = int(SUPPORT_SIGMAS * std) + abs(shift) + 10
    support = np.arange(-window, window + 1)
    base, moved = log_pmf(support), log_pmf(support - shift)
    keep_base, keep_moved = base > LOG_MASS_TRUNCATION, moved > LOG_MASS_TRUNCATION
    return privacy_loss_distribution.from_two_probability_mass_functions(
        {int(x): float(v) for x, v in zip(support[keep_base], base[keep_base])},
        {int(x): float(v) for x, v in zip(support[keep_moved], moved[keep_moved])},
        pessimistic_estimate=True, value_discretization_interval=DISCRETIZATION,
        log_mass_truncation_bound=LOG_MASS_TRUNCATION)


def lattice_epsilon(log_pmf: Callable[[np.ndarray], np.ndarray], std: float, multiplier: int,
                    shifts: Sequence[int], delta: float) -> float:
    """ε at δ of a release x + m·Z per coordinate (Z symmetric about 0, the given pmf; m the lattice step) when the
    neighbour moves the coordinates by `shifts`: the PLDs of Z against Z + s/m, composed. A shift off the
    lattice separates the two releases completely: no finite ε."""
    if std == 0 or any(s % multiplier for s in shifts):
        return math.inf if any(shifts) else 0.0
    pld = None
    for shift, count in Counter(abs(s) // multiplier for s in shifts if s).items():
        part = _shift_pld(log_pmf, std, shift).self_compose(count)
        pld = part if pld is None else pld.compose(part)
    return 0.0 if pld is None else float(pld.get_epsilon_for_delta(delta))


# Continuous and discrete noise of a known scale (Pathak, Du).

def laplace_epsilon(l1_sensitivity: float, scale: float) -> float:
    """i.i.d. (discrete or continuous) Laplace of scale b per coordinate: pure ε = Δ₁/b."""
    return math.inf if scale <= 0 else l1_sensitivity / scale


def l2_laplace_epsilon(l2_sensitivity: float, norm_scale: float) -> float:
    """Density ∝ exp(−‖η‖₂/b): pure ε = Δ₂/b (the triangle inequality)."""
    return math.inf if norm_scale <= 0 else l2_sensitivity / norm_scale


def gaussian_epsilon(l2_sensitivity: float, sigma: float, delta: float) -> float:
    """N(0, σ²) per coordinate (a discrete Gaussian on the integer grid is at least as private for a shift on the
    grid: Canonne, Kamath & Steinke 2020, Theorem 7): dp-accounting's Gaussian PLD at δ."""
    from dp_accounting.pld import privacy_loss_distribution

    if sigma <= 0:
        return math.inf
    pld = privacy_loss_distribution.from_gaussian_mechanism(sigma, sensitivity=l2_sensitivity,
                                                            value_discretization_interval=DISCRETIZATION)
    return float(pld.get_epsilon_for_delta(delta))
