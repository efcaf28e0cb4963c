"""Charlie's output perturbation (hamm.md, "Training and noise"; privacy.md `l2-laplace`).

Party unit, replacement neighbours. With M′ voters, the exact minimiser moves by at most 2/λ (vote) or
2/(M′λ) (soft) in L2 when one party's classifier changes (√2/λ and √2/(M′λ) multiclass); Section 4.5
(protect X_aux too) multiplies the soft bound by (N + M′ − 1)/N. Charlie's minimiser is checked to
‖∇J‖ ≤ γ (adds 2γ/λ), and the release sits on the grid 2^−F (adds √D·2^−F). η has density
∝ exp(−ε‖η‖/Δ): a uniform direction and ‖η‖ ~ Gamma(D, Δ/ε), drawn at double precision and rounded to
the grid, so the support of the release does not depend on the data.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from mpdp.privacy.samplers import l2_laplace
from mpdp.protocols.hamm.parameters import FRACTIONAL_BITS, GRADIENT_TOLERANCE, HammParameters


@dataclass(frozen=True)
class Release:
    parameters: HammParameters
    voters: int  # M′

    @property
    def perturbed(self) -> bool:
        """Output perturbation runs unless the release is non-private or already post-processing (noisy counts)."""
        return self.parameters.epsilon != math.inf and not self.parameters.noisy_counts

    @property
    def model_sensitivity(self) -> float:
        """L2 sensitivity of the exact minimiser to one party's classifier."""
        p = self.parameters
        base = (math.sqrt(2) if not p.binary else 2.0) / p.regularization
        if p.method == "soft":
            base /= self.voters
            if p.protect_aux:
                base *= (p.aux_points + self.voters - 1) / p.aux_points
        return base

    @property
    def sensitivity(self) -> float:
        p = self.parameters
        return (self.model_sensitivity + 2 * GRADIENT_TOLERANCE / p.regularization
                + math.sqrt(p.weights) * 2.0**-FRACTIONAL_BITS)

    @property
    def norm_scale(self) -> float:
        """Gamma scale of ‖η‖: Δ/ε (0 when there is no output perturbation)."""
        return self.sensitivity / self.parameters.epsilon if self.perturbed else 0.0

    def sample(self, source: random.Random) -> np.ndarray:
        """η on the grid 2^−F (zeros without output perturbation)."""
        if not self.perturbed:
            return np.zeros(self.parameters.weights)
        return on_grid(l2_laplace(self.parameters.weights, self.norm_scale, source))

    def report(self) -> dict:
        p = self.parameters
        report = {**p.counts_report(self.voters), "voters": self.voters, "method": p.method}
        if self.perturbed:
            sensitivity = {("vote", True): "2/λ", ("vote", False): "√2/λ", ("soft", True): "2/(M′λ)",
                           ("soft", False): "√2/(M′λ)"}[(p.method, p.binary)]
            if p.protect_aux:
                sensitivity += "·(N + M′ − 1)/N (Section 4.5: X_aux protected too)"
            report.update({
                "release_unit": "all samples of one party (replacement)",
                "release_mechanism": "l2-laplace output perturbation (Hamm's Algorithms 1–2), on the grid 2^−F",
                "release_sensitivity": f"L2 {sensitivity} + 2γ/λ (γ = {GRADIENT_TOLERANCE:g}) + √D·2^−F (F = "
                                       f"{FRACTIONAL_BITS}) = {self.sensitivity:.6g}",
                "epsilon": p.epsilon, "delta": 0.0 if not p.noisy_counts else p.delta,
                "noise_norm_scale": self.norm_scale,
            })
        elif p.epsilon == math.inf:
            report.update({"release_mechanism": "none: non-private (1/ε = 0)", "epsilon": None})
        else:
            report["release_mechanism"] = "none: post-processing of the noisy counts"
        return report


def on_grid(values: np.ndarray) -> np.ndarray:
    scale = float(2**FRACTIONAL_BITS)
    return np.round(np.asarray(values, dtype=float) * scale) / scale
