"""Optional distributed noise: every client adds a Skellam share to its clipped model delta before encrypting,
so the decrypted sum carries Sk(μ) however the other clients behave, and the run's log states ε per round and
over the run (docs/flower.md, "Noise").

The mechanism is DP-FedAvg's (McMahan et al. 2018) with Skellam noise (Agarwal, Kairouz & Liu 2021): each
client clips its delta x − x_global to L2 norm `l2_clip` (the codec refuses a larger one), encodes it at 2^-F,
adds its share; the server divides the sum by the number of contributions. One client's encoded delta moves the
sum by at most Δ₂ = l2_clip·2^F + √d/2 (rounding) in L2 and Δ₁ = √d·Δ₂ in L1; μ = (noise_multiplier·Δ₂)², split
over the contributors a decryptable sum must hold minus the colluding ones (mpdp.privacy.collusion), each share
drawn by mpdp.privacy.skellam's CSPRNG sampler and kept in [−B, B]. The accounting is mpdp's
(mpdp.privacy.vector_skellam): RDP over the rounds, an mpdp Guarantee per round and for the run. B is sized for
at most `max_rounds` rounds and a run ε of at most `max_epsilon`; `admit` refuses a round beyond either, so the
δ the truncation costs stays within its δ/1000 share."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpdp.privacy import composition, skellam, vector_skellam
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, decryptable_minimum, noise_bearing
from mpdp.privacy.composition import Guarantee


class NoiseBudgetExhausted(RuntimeError):
    """One more noisy round would go beyond the rounds or the ε the shares' truncation bound was sized for."""


@dataclass(frozen=True)
class NoiseShares:
    noise_multiplier: float  # σ/Δ₂ of the sum's noise
    l2_clip: float  # each client's delta is clipped to this L2 norm
    delta: float = 1e-5
    colluding: int = COLLUDING_CONTRIBUTORS
    max_epsilon: float = 10.0  # the run's ε the truncation bound B is sized for (enforced by `admit`)
    max_rounds: int = 1000  # the noisy rounds B is sized for (enforced by `admit`)

    def __post_init__(self):
        if not (self.noise_multiplier > 0 and self.l2_clip > 0 and 0 < self.delta < 1):
            raise ValueError("need a positive noise multiplier and clip, and 0 < δ < 1")
        if not (0 < self.max_epsilon <= 100 and self.max_rounds >= 1):
            raise ValueError("need 0 < max_epsilon ≤ 100 and max_rounds ≥ 1")

    def sensitivities(self, count: int, fractional_bits: int) -> tuple[float, float]:
        l2 = self.l2_clip * 2**fractional_bits + math.sqrt(count) / 2
        return math.sqrt(count) * l2, l2

    def mu(self, count: int, fractional_bits: int) -> float:
        return (self.noise_multiplier * self.sensitivities(count, fractional_bits)[1]) ** 2

    def share_mu(self, count: int, fractional_bits: int, min_contributors: int) -> float:
        return self.mu(count, fractional_bits) / calibrated_contributors(min_contributors, self.colluding)

    def bound(self, count: int, fractional_bits: int, min_contributors: int, summands: int) -> int:
        """B: every share coordinate in [−B, B], sized for max_rounds rounds of summands·count shares at ε ≤
        max_epsilon."""
        return vector_skellam.sized_bound(self.share_mu(count, fractional_bits, min_contributors),
                                          self.max_rounds * summands * count, self.max_epsilon, self.delta)

    def shares(self, count: int, fractional_bits: int, min_contributors: int, summands: int) -> np.ndarray:
        bound = self.bound(count, fractional_bits, min_contributors, summands)
        return np.array(skellam.sample_shares(self.share_mu(count, fractional_bits, min_contributors), bound, count),
                        dtype=object)

    def release(self, count: int, fractional_bits: int, contributors: int,
                min_contributors: int) -> vector_skellam.VectorRelease:
        """One round's release: the sum of `contributors` noisy deltas, the colluders' shares not counted."""
        l1, l2 = self.sensitivities(count, fractional_bits)
        mu = self.share_mu(count, fractional_bits, min_contributors) * noise_bearing(contributors, self.colluding)
        return vector_skellam.VectorRelease(mu, l1, l2, "client")

    def guarantee(self, count: int, fractional_bits: int, rounds: list[int], min_contributors: int,
                  summands: int) -> Guarantee:
        """mpdp's Guarantee for the noisy rounds with these contributor counts, composed."""
        releases = [self.release(count, fractional_bits, c, min_contributors) for c in rounds]
        return composition.skellam_rdp_guarantee(releases, self.delta, self.share_mu(count, fractional_bits, min_contributors),
                                        self.bound(count, fractional_bits, min_contributors, summands),
                                        sum(rounds) * count)

    def admit(self, count: int, fractional_bits: int, rounds: list[int], min_contributors: int,
              summands: int) -> None:
        """NoiseBudgetExhausted unless one more round, with the fewest contributors a sum can be decrypted with,
        keeps the run within max_rounds and max_epsilon."""
        if len(rounds) + 1 > self.max_rounds:
            raise NoiseBudgetExhausted(f"the noise's truncation bound is sized for {self.max_rounds} rounds")
        worst = [*rounds, decryptable_minimum(min_contributors)]
        value = vector_skellam.epsilon([self.release(count, fractional_bits, c, min_contributors) for c in worst],
                                       self.delta * (1 - skellam.TRUNCATION_SHARE_OF_DELTA))
        if value > self.max_epsilon:
            raise NoiseBudgetExhausted(f"another round would take the run to ε = {value:.4g}, beyond max_epsilon = "
                                       f"{self.max_epsilon:g} the noise's truncation bound is sized for")


def clip(delta: np.ndarray, l2_clip: float) -> np.ndarray:
    norm = float(np.linalg.norm(delta))
    return delta if norm <= l2_clip else delta * (l2_clip / norm * (1 - 1e-12))  # below the clip after rounding
