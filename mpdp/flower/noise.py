"""Optional distributed noise: every client adds a Skellam share to its clipped model delta before encrypting,
so the decrypted sum carries Sk(μ) however the other clients behave, and the run's log states ε per round and
over the run (docs/flower.md, "Noise").

The mechanism is DP-FedAvg's (McMahan et al. 2018) with Skellam noise (Agarwal, Kairouz & Liu 2021): each
client clips its delta x − x_global to L2 norm `l2_clip`, encodes it at 2^-F, adds its share; the server
divides the sum by the number of contributions. One client's encoded delta moves the sum by at most
Δ₂ = l2_clip·2^F + √d/2 (rounding) in L2 and Δ₁ = √d·Δ₂ in L1; μ = (noise_multiplier·Δ₂)², split over the
contributors a decryptable sum must hold minus the colluding ones (mpdp.privacy.collusion), each share drawn
by mpdp.privacy.skellam's CSPRNG sampler and truncated as it truncates. ε is the same paper's RDP bound that
mpdp.privacy.skellam uses for unit shifts, here with Δ₁ and Δ₂ as above, composed over rounds in RDP (exact
for RDP) and converted by dp-accounting; the truncation's share of δ is added as there."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpdp.privacy import skellam
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, noise_bearing


@dataclass(frozen=True)
class NoiseShares:
    noise_multiplier: float  # σ/Δ₂ of the sum's noise
    l2_clip: float  # each client's delta is clipped to this L2 norm
    delta: float = 1e-5
    colluding: int = COLLUDING_CONTRIBUTORS

    def __post_init__(self):
        if not (self.noise_multiplier > 0 and self.l2_clip > 0 and 0 < self.delta < 1):
            raise ValueError("need a positive noise multiplier and clip, and 0 < δ < 1")

    def sensitivities(self, count: int, fractional_bits: int) -> tuple[float, float]:
        l2 = self.l2_clip * 2**fractional_bits + math.sqrt(count) / 2
        return math.sqrt(count) * l2, l2

    def mu(self, count: int, fractional_bits: int) -> float:
        return (self.noise_multiplier * self.sensitivities(count, fractional_bits)[1]) ** 2

    def share_mu(self, count: int, fractional_bits: int, min_contributors: int) -> float:
        return self.mu(count, fractional_bits) / calibrated_contributors(min_contributors, self.colluding)

    def bound(self, count: int, fractional_bits: int, min_contributors: int, summands: int) -> int:
        """B: every share coordinate in [−B, B] (mpdp.privacy.skellam's truncation)."""
        return skellam.truncation_bound(self.share_mu(count, fractional_bits, min_contributors), summands * count,
                                        self.epsilon_guess(), self.delta)

    def epsilon_guess(self) -> float:
        """The ε the truncation's δ share is sized at: a generous one, so the bound errs large."""
        return 10.0

    def shares(self, count: int, fractional_bits: int, min_contributors: int, summands: int) -> np.ndarray:
        bound = self.bound(count, fractional_bits, min_contributors, summands)
        return np.array(skellam.sample_shares(self.share_mu(count, fractional_bits, min_contributors), bound, count),
                        dtype=object)

    def rdp_curve(self, count: int, fractional_bits: int, contributors: int, min_contributors: int) -> list[float]:
        """RDP of one release of a sum of `contributors` noisy deltas (the colluders' shares not counted) at
        skellam.RDP_ORDERS, by the paper's bound with this Δ₁, Δ₂."""
        l1, l2 = self.sensitivities(count, fractional_bits)
        mu = self.share_mu(count, fractional_bits, min_contributors) * noise_bearing(contributors, self.colluding)
        return [alpha * l2**2 / (2 * mu) + min(((2 * alpha - 1) * l2**2 + 6 * l1) / (4 * mu**2), 3 * l1 / (2 * mu))
                for alpha in skellam.RDP_ORDERS]

    def epsilon_of(self, curves: list[list[float]]) -> float:
        """ε at δ (less the truncation's share) of releases composed: their RDP curves add."""
        from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

        total = [sum(values) for values in zip(*curves)]
        epsilon, _ = compute_epsilon(skellam.RDP_ORDERS, total, self.delta * (1 - skellam.TRUNCATION_SHARE_OF_DELTA))
        return float(epsilon)


def clip(delta: np.ndarray, l2_clip: float) -> np.ndarray:
    norm = float(np.linalg.norm(delta))
    return delta if norm <= l2_clip else delta * (l2_clip / norm * (1 - 1e-12))  # below the clip after rounding
