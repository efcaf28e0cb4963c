"""Skellam noise shares (privacy.md, `skellam`): each of the K′ contributors the calibration counts on adds
Sk(μ/K′) = Pois(μ/2K′) − Pois(μ/2K′) per coordinate, so their sum is Sk(μ): integer, centred, closed under
addition. μ is the variance of the sum.

Accounting: the exact privacy-loss distribution of a ±1 shift of Sk(μ) from dp-accounting (its
`from_two_probability_mass_functions` takes natural-log probabilities), composed over the released
coordinates; beside it, the RDP bound of Agarwal, Kairouz & Liu (2021, Theorem 3.5 / Corollary 3.6),
ε(α) ≤ α·Δ₂²/(2μ) + min(((2α − 1)·Δ₂² + 6·Δ₁)/(4μ²), 3·Δ₁/(2μ)), converted by dp-accounting.

μ lives on a public grid, μ_j = 2^(j/64), so "the smallest μ" is one integer j that every role can check
with two evaluations (as N is for the Binomial). Shares are drawn from a CSPRNG (AES counter mode) and kept in
[−B, B]: a draw outside is redrawn. B is chosen so that this truncation moves the released distribution by at
most η in total variation, and the guarantee accounts for it: (ε, δ_PLD + (1 + e^ε)·η) with
(1 + e^ε)·η ≤ δ/1000 and δ_PLD ≤ δ − δ/1000.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from mpdp.privacy.accountant_process import in_accountant
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, check_colluding, noise_bearing
from mpdp.privacy.search import smallest_private

GRID_STEPS_PER_DOUBLING = 64
# μ ≤ 2^24 (σ ≤ 4 096, as the Binomial's N ≤ 2^24): one accountant evaluation's support is 12√μ wide, so a
# request naming the top of the grid costs well under a second, not minutes and gigabytes.
MAX_GRID = 24 * GRID_STEPS_PER_DOUBLING
DISCRETIZATION = 1e-4
LOG_MASS_TRUNCATION = -60.0
TRUNCATION_SHARE_OF_DELTA = 1e-3
RDP_ORDERS = [1.25, 1.5, 1.75, *range(2, 64), *range(64, 1025, 16)]


def mu_of(grid: int) -> float:
    return 2 ** (grid / GRID_STEPS_PER_DOUBLING)


def _log_pmf(support: np.ndarray, mu: float) -> np.ndarray:
    """ln P(k) of Sk(μ) = Pois(μ/2) − Pois(μ/2): P(k) = e^(−μ)·I_|k|(μ), the exponentially scaled Bessel function
    (scipy's skellam.logpmf agrees to 1e-13 but goes through the non-central χ², 800 times slower at μ = 2^24)."""
    from scipy.special import ive

    with np.errstate(divide="ignore"):  # far tails underflow to ln 0 = −∞, below the truncation anyway
        return np.log(ive(np.abs(support), mu))


@lru_cache(maxsize=256)
def _shift_pld(mu: float):
    """PLD of Sk(μ) against Sk(μ) + 1 on the window where either has log-probability above the truncation."""
    from dp_accounting.pld import privacy_loss_distribution

    window = int(12 * math.sqrt(mu) + 60)
    while _log_pmf(np.array([window]), mu)[0] > LOG_MASS_TRUNCATION:
        window *= 2
    support = np.arange(-window, window + 2)
    upper, lower = _log_pmf(support, mu), _log_pmf(support - 1, mu)
    keep_upper, keep_lower = upper > LOG_MASS_TRUNCATION, lower > LOG_MASS_TRUNCATION
    return privacy_loss_distribution.from_two_probability_mass_functions(
        {int(x): float(v) for x, v in zip(support[keep_upper], upper[keep_upper])},
        {int(x): float(v) for x, v in zip(support[keep_lower], lower[keep_lower])},
        pessimistic_estimate=True, value_discretization_interval=DISCRETIZATION,
        log_mass_truncation_bound=LOG_MASS_TRUNCATION)


def shifts_pld(mu: float, shifts: int):
    """PLD of `shifts` unit shifts of Sk(μ), composed."""
    return _shift_pld(mu).self_compose(shifts)


@lru_cache(maxsize=256)
@in_accountant
def delta_for(mu: float, epsilon: float, shifts: int) -> float:
    """δ(ε) of `shifts` unit shifts of Sk(μ), composed (PLD)."""
    return float(shifts_pld(mu, shifts).get_delta_for_epsilon(epsilon))


@lru_cache(maxsize=256)
@in_accountant
def epsilon_for(mu: float, delta: float, shifts: int) -> float:
    return float(shifts_pld(mu, shifts).get_epsilon_for_delta(delta))


@lru_cache(maxsize=256)
@in_accountant
def rdp_epsilon(mu: float, delta: float, shifts: int) -> float:
    """The Skellam paper's RDP bound for `shifts` unit shifts (Δ₁ = Δ₂ = 1 each; the bound is linear in (Δ₁, Δ₂²)
    jointly, so this equals releases of several coordinates at once), converted to (ε, δ) by dp-accounting."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    def per_shift(alpha: float) -> float:
        return alpha / (2 * mu) + min((2 * alpha - 1 + 6) / (4 * mu**2), 3 / (2 * mu))

    epsilon, _ = compute_epsilon(RDP_ORDERS, [shifts * per_shift(a) for a in RDP_ORDERS], delta)
    return float(epsilon)


def _accounting_delta(delta: float) -> float:
    return delta * (1 - TRUNCATION_SHARE_OF_DELTA)


@lru_cache(maxsize=256)
@in_accountant
def minimal_grid(epsilon: float, delta: float, shifts: int) -> int:
    """Smallest j whose Sk(μ_j) gives δ_PLD(ε) ≤ δ − δ/1000 over `shifts` unit shifts: doubling, then bisection."""
    if epsilon <= 0 or not 0 < delta < 1 or shifts < 1:
        raise ValueError("need ε > 0, 0 < δ < 1 and at least one released coordinate")
    target = _accounting_delta(delta)

    def private(grid: int) -> bool:
        return delta_for(mu_of(grid), epsilon, shifts) <= target

    high = 0
    while not private(high):
        high += GRID_STEPS_PER_DOUBLING
        if high > MAX_GRID:
            raise ValueError(f"(ε = {epsilon:g}, δ = {delta:g}) over {shifts} shifted coordinates needs Skellam "
                             f"variance above 2^{MAX_GRID // GRID_STEPS_PER_DOUBLING}: raise ε or δ")
    low = high - GRID_STEPS_PER_DOUBLING
    return high if low < 0 else smallest_private(low, high, 1, private)


@lru_cache(maxsize=256)
@in_accountant
def check_minimal_grid(grid: int, epsilon: float, delta: float, shifts: int) -> None:
    """Raise ValueError unless j is what `minimal_grid` finds: μ_j private and μ_(j−1) not."""
    if not 0 <= grid <= MAX_GRID:
        raise ValueError(f"the Skellam grid index must be in [0, {MAX_GRID}]")
    target = _accounting_delta(delta)
    if delta_for(mu_of(grid), epsilon, shifts) > target:
        raise ValueError(f"Skellam variance μ = {mu_of(grid):.4g} does not give (ε = {epsilon:g}, δ = {delta:g})")
    if grid > 0 and delta_for(mu_of(grid - 1), epsilon, shifts) <= target:
        raise ValueError(f"μ = {mu_of(grid):.4g} is not the smallest Skellam variance for (ε = {epsilon:g}, "
                         f"δ = {delta:g}): the grid point below suffices")


def tail_bound(share_mu: float, bound: int) -> float:
    """An upper bound on P(|Sk(μ_i)| > B): 2·P(Pois(μ_i/2) > B), since Sk = X − Y with X, Y ≥ 0. (scipy's Skellam
    tail cancels to 0.0 far below 1e-16; the Poisson tail is an incomplete gamma function, accurate there.)"""
    from scipy.special import pdtrc  # Poisson survival function, as scipy.stats has it, without scipy.stats

    return 2 * float(pdtrc(bound, share_mu / 2))


def truncation_bound(share_mu: float, draws: int, epsilon: float, delta: float) -> int:
    """Smallest B with (1 + e^ε)·draws·tail_bound(B) ≤ δ/1000: redrawing outside [−B, B] then costs at most that
    much of δ (total variation between the truncated and the exact release)."""
    budget = delta * TRUNCATION_SHARE_OF_DELTA / ((1 + math.exp(epsilon)) * draws)
    low, high = 0, 1
    while tail_bound(share_mu, high) > budget:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if tail_bound(share_mu, middle) <= budget else (middle, high)
    return high


def sample_shares(share_mu: float, bound: int, count: int) -> list[int]:
    """`count` draws of Sk(μ_i) = Pois(μ_i/2) − Pois(μ_i/2), each in [−B, B] (redrawn outside), from AES-CTR
    keyed by `secrets`."""
    from randomgen import AESCounter

    generator = np.random.Generator(AESCounter(key=secrets.randbits(128)))
    values = generator.poisson(share_mu / 2, count) - generator.poisson(share_mu / 2, count)
    outside = np.abs(values) > bound
    while outside.any():
        redrawn = generator.poisson(share_mu / 2, int(outside.sum())) - generator.poisson(share_mu / 2,
                                                                                        int(outside.sum()))
        values[outside] = redrawn
        outside = np.abs(values) > bound
    return [int(v) for v in values]


@dataclass(frozen=True)
class SkellamCalibration:
    """What a session derives from (ε, δ, its releases, K, τ) and the grid index j; public and deterministic.
    A DPPP query is a release that moves 2 counts by 1; a Hamm vote release moves one count per public point
    (two per point when multiclass)."""

    epsilon: float
    delta: float
    queries: int  # releases composed
    shifts_per_query: int  # unit shifts one neighbour causes in one release
    contributors_expected: int  # K (or M)
    honest_fraction: float
    values: int  # coordinates each contributor draws for
    grid: int
    colluding: int = COLLUDING_CONTRIBUTORS  # c: the most contributors one principal controls

    def __post_init__(self):
        check_colluding(self.min_contributors, self.colluding)

    @property
    def shifts(self) -> int:
        return self.queries * self.shifts_per_query

    def check(self) -> None:
        check_minimal_grid(self.grid, self.epsilon, self.delta, self.shifts)

    @property
    def min_contributors(self) -> int:
        return math.ceil(self.honest_fraction * self.contributors_expected - 1e-9)

    @property
    def mu(self) -> float:
        return mu_of(self.grid)

    @property
    def share_mu(self) -> float:
        """μ/(max(c + 1, m) − c) with m = max(2, ⌈τK⌉): every contributor's share, so any decryptable sum gives
        Sk(μ) without the colluding principal's c shares (mpdp.privacy.collusion)."""
        return self.mu / calibrated_contributors(self.min_contributors, self.colluding)

    @cached_property
    def bound(self) -> int:
        """B: shares are kept in [−B, B]."""
        return truncation_bound(self.share_mu, self.contributors_expected * self.values, self.epsilon, self.delta)

    def report(self, contributors: int | None = None) -> dict:
        counted = self.min_contributors if contributors is None else contributors
        mu = self.share_mu * noise_bearing(counted, self.colluding)
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": "skellam",
            "queries": self.queries,
            "skellam_grid": self.grid,
            "mu_required": self.mu,
            "mu_per_contributor": self.share_mu,
            "mu_guaranteed": mu,
            "colluding_contributors": self.colluding,
            "contributors_counted": noise_bearing(counted, self.colluding),
            "noise_std": math.sqrt(mu),
            "truncation_bound": self.bound,
            "epsilon_per_query": epsilon_for(mu, _accounting_delta(self.delta), self.shifts_per_query),
            "epsilon_all_queries": epsilon_for(mu, _accounting_delta(self.delta), self.shifts),
            "epsilon_rdp_bound": rdp_epsilon(mu, self.delta, self.shifts),
            "accountant": f"dp-accounting PLD of Sk(μ) (pessimistic, 1e-4 discretisation), {self.shifts}-fold "
                          "composition of unit shifts; "
                          "δ/1000 reserved for the shares' truncation to [−B, B]; beside it the RDP bound of "
                          "Agarwal, Kairouz & Liu 2021 (Thm 3.5), converted by dp-accounting",
        }
