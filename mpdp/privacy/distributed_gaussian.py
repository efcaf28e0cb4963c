"""Distributed discrete Gaussian noise for a sum (privacy.md `distributed-gaussian`; pathak.md "Beyond the paper").

Each of K contributors adds N_Z(0, σ²) per coordinate, integer grid, exact CKS sampler. The guarantee counts
only K − 1 shares, so it holds against any one contributor too, which knows (and could remove) its own share.

Accounting (Kairouz, Liu & Steinke 2021, Theorem 1, its first branch): the sum of n shares N_Z(0, σ²) with
an L2 sensitivity Δ is ½ε̃²-zCDP with ε̃² = Δ²/(nσ²) + ½·τ·d and τ = 10·Σ_{k=1}^{n−1} exp(−2π²σ²·k/(k+1)).
ρ-zCDP is ρα-RDP at every order α, converted to (ε, δ) by dp-accounting's RDP conversion. Each share is
clamped to a public bound B; the clamp probability, times (1 + e^ε), counts in δ (at most 2^−σ).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache

from mpdp.privacy.accountant_process import in_accountant
from mpdp.privacy.discrete import discrete_gaussian

# Orders up to 2^20: small ε (0.01 at δ = 10⁻⁹) needs large orders, whose conversion term is ln(1/δ)/(α − 1).
RDP_ORDERS = [1 + x / 10 for x in range(1, 10)] + list(range(2, 64)) + list(range(64, 1025, 8)) + [
    2.0**k for k in range(11, 21)]
MIN_RHO = 1e-30
MAX_SEARCH_STEPS = 200


def tau(share_variance: float, shares: int) -> float:
    """KLS21's τ: how far a sum of discrete Gaussians is from one discrete Gaussian (0 for large σ)."""
    return 10 * sum(math.exp(-2 * math.pi**2 * share_variance * k / (k + 1)) for k in range(1, shares))


def rho(sensitivity: float, share_variance: float, shares: int, dimension: int) -> float:
    """zCDP ρ = ½ε̃² of the sum of `shares` shares."""
    return 0.5 * (sensitivity**2 / (shares * share_variance) + 0.5 * tau(share_variance, shares) * dimension)


@lru_cache(maxsize=256)
@in_accountant
def epsilon_of_rho(value: float, delta: float) -> float:
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    epsilon, _ = compute_epsilon(RDP_ORDERS, [value * a for a in RDP_ORDERS], delta)
    return float(epsilon)


@lru_cache(maxsize=256)
@in_accountant
def target_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose (ε, δ) conversion is within ε: bisection on a log scale around the closed-form
    estimate ε ≈ ρ + 2√(ρ·ln(1/δ)), to 10⁻⁷ relative (cached: it depends on (ε, δ) only)."""
    log_inverse = math.log(1 / delta)
    estimate = (math.sqrt(log_inverse + epsilon) - math.sqrt(log_inverse)) ** 2
    low, high = estimate / 4, estimate * 4
    while epsilon_of_rho(low, delta) > epsilon:
        low /= 4
        if low < MIN_RHO:
            raise ValueError(f"ε = {epsilon:g} at δ = {delta:g} is out of the accountant's reach")
    while epsilon_of_rho(high, delta) <= epsilon:
        high *= 4
    for _ in range(MAX_SEARCH_STEPS):
        if high / low < 1 + 1e-7:
            break
        middle = math.sqrt(low * high)
        if epsilon_of_rho(middle, delta) <= epsilon:
            low = middle
        else:
            high = middle
    return low


@dataclass(frozen=True)
class DistributedGaussian:
    epsilon: float
    delta: float  # the mechanism's; clamping adds `clamp_delta`
    sensitivity: float  # L2, in grid units, that the noise is calibrated to
    dimension: int
    contributors: int  # K; the guarantee counts K − 1 of the shares
    mask_bits: int = 40  # σ_stat: the clamp costs at most 2^−σ of δ

    def __post_init__(self):
        if self.contributors < 2:
            raise ValueError("distributed noise needs at least two contributors (one may know its own share)")
        if not 0 < self.delta < 1 or not self.epsilon > 0 or not self.sensitivity > 0:
            raise ValueError("distributed Gaussian noise needs ε > 0, δ in (0, 1) and a positive sensitivity")

    @property
    def counted(self) -> int:
        return self.contributors - 1

    @property
    def target_rho(self) -> float:
        return target_rho(self.epsilon, self.delta)

    @cached_property
    def share_variance(self) -> Fraction:
        """σ² of one share: the smallest (to 0.1 %) whose K − 1 shares reach ρ, τ included; a rational, for the
        exact sampler."""
        variance = self.sensitivity**2 / (self.counted * 2 * self.target_rho)
        while rho(self.sensitivity, variance, self.counted, self.dimension) > self.target_rho:
            variance *= 1.001
        return Fraction(variance).limit_denominator(1 << 20) + Fraction(1, 1 << 20)

    def epsilon_for(self, sensitivity: float) -> float:
        """The ε the K − 1 counted shares give for a change of `sensitivity` (grid units, L2), at δ."""
        return epsilon_of_rho(rho(sensitivity, float(self.share_variance), self.counted, self.dimension), self.delta)

    @property
    def clamp_tail(self) -> float:
        """Per-coordinate, per-share clamp probability, so that all of them together cost ≤ 2^−σ of δ."""
        return 2.0**-self.mask_bits / (self.dimension * self.contributors * (1 + math.exp(self.epsilon)))

    @cached_property
    def clamp_bound(self) -> int:
        """B with P(|N_Z(0, σ²)| > B) ≤ 2·exp(−B²/(2σ²)) ≤ tail (the discrete Gaussian is σ-subgaussian)."""
        return math.ceil(math.sqrt(2 * float(self.share_variance) * math.log(2 / self.clamp_tail)))

    @property
    def clamp_delta(self) -> float:
        return self.dimension * self.contributors * self.clamp_tail * (1 + math.exp(self.epsilon))

    def sample(self, source: random.Random) -> list[int]:
        bound = self.clamp_bound
        values = (discrete_gaussian(self.share_variance, source.randrange) for _ in range(self.dimension))
        return [max(-bound, min(bound, v)) for v in values]

    def report(self) -> dict:
        return {
            "noise_source": "distributed: every party adds a discrete Gaussian share; no single party knows the noise",
            "share_std": math.sqrt(float(self.share_variance)),
            "shares_counted": self.counted,
            "share_clamp_bound": self.clamp_bound,
            "accountant": "Kairouz, Liu & Steinke 2021 Thm 1 (sum of discrete Gaussians, ½ε̃²-zCDP, τ term "
                          "included), K − 1 shares counted; zCDP → (ε, δ) by dp-accounting's RDP conversion",
        }
