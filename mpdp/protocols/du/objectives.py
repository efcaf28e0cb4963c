"""Each party's perturbed local objective of one round (du.md; paper Algorithms 2 and 3; Chaudhuri et al.
2011 Algorithm 2; Zhang et al. 2012), over θ = (w, α) and x̃ = (x, 1) with ‖x‖₁ ≤ 1, labels y ∈ {0, 1}.

Sum form (eq. 23): l(θ) = Σ_i [log(1 + e^{θᵀx̃_i}) − y_i θᵀx̃_i]. Its Taylor expansion at 0 to order 2
(eq. 34, with the linear term read as −Σ y_i θᵀx̃_i): Σ_i [log 2 + ½ θᵀx̃_i + ⅛ (θᵀx̃_i)² − y_i θᵀx̃_i]
= const + bᵀθ + θᵀAθ with b = Σ (½ − y_i) x̃_i and A = ⅛ Σ x̃_i x̃_iᵀ. Per record, the linear monomials'
coefficients sum to at most ½‖x̃‖₁ ≤ 1 and the quadratic ones' (one per monomial θ_jθ_l, j ≤ l) to
⅛‖x̃‖₁² ≤ ½.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from mpdp.privacy.samplers import laplace

OFPA_SCALE_NUMERATOR = 4.0  # v_ik ~ Lap(4/ε) (Algorithm 2, line 6)
# OFAA as the paper calibrates it, with ΔS = 2(J+1)·‖λ_Φj‖_max per order j (J = 2), ‖λ‖_max the per-record
# bound of one monomial's coefficient: ½ (linear) and ¼ (a cross term 2·⅛·x_j x_l).
OFAA_SCALES = {1: 2 * 3 * 0.5, 2: 2 * 3 * 0.25}
# Zhang et al.'s functional mechanism: Δ = 2·max_record Σ_φ |λ_φ| ≤ 2·(1 + ½).
FUNCTIONAL_SENSITIVITY = 3.0
LOGISTIC_CURVATURE = 0.25  # c of Chaudhuri et al.: |ℓ''| ≤ ¼


def augment(features: np.ndarray) -> np.ndarray:
    """x̃ = (x / max(1, ‖x‖₁), 1): each row into the L1 ball on its own (no statistic of other rows)."""
    features = np.asarray(features, dtype=float)
    norms = np.abs(features).sum(axis=1, keepdims=True)
    return np.hstack([features / np.maximum(norms, 1.0), np.ones((len(features), 1))])


@dataclass(frozen=True)
class Quadratic:
    """f(θ) = θᵀAθ + bᵀθ (A symmetric)."""

    A: np.ndarray
    b: np.ndarray

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return 2 * self.A @ theta + self.b

    def perturbed(self, linear_scale: float, quadratic_scale: float, source: random.Random) -> "Quadratic":
        """Laplace noise on every monomial's coefficient: b_j, A_jj and the cross terms 2A_jl (j < l)."""
        size = len(self.b)
        b = self.b + laplace(linear_scale, size, source)
        upper = np.triu_indices(size)
        coefficients = np.where(upper[0] == upper[1], 1.0, 2.0) * self.A[upper]
        noisy = coefficients + laplace(quadratic_scale, len(coefficients), source)
        A = np.zeros_like(self.A)
        A[upper] = noisy / np.where(upper[0] == upper[1], 1.0, 2.0)
        return Quadratic(np.triu(A) + np.triu(A, 1).T, b)

    def convex(self, floor: float) -> "Quadratic":
        """Convexity repair (post-processing of the noisy coefficients): A's eigenvalues below `floor` are
        raised to it, so the objective is `2·floor`-strongly convex and has one minimiser."""
        values, vectors = np.linalg.eigh(self.A)
        return Quadratic((vectors * np.maximum(values, floor)) @ vectors.T, self.b)


def taylor(features: np.ndarray, labels: np.ndarray) -> Quadratic:
    """The order-2 expansion of l at 0 (eq. 34), without the constant."""
    return Quadratic(features.T @ features / 8, features.T @ (0.5 - labels))


def logistic_sum_gradient(theta: np.ndarray, features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """∇ Σ_i [log(1 + e^{θᵀx̃_i}) − y_i θᵀx̃_i] = Σ_i (σ(θᵀx̃_i) − y_i) x̃_i."""
    from scipy.special import expit

    return features.T @ (expit(features @ theta) - labels)


def objective_perturbation_terms(epsilon: float, records: int, regularization: float) -> tuple[float, float]:
    """(ε′, Δ) of Chaudhuri et al. 2011, Algorithm 2, for the logistic loss (c = ¼) on ‖z‖₂ ≤ 1."""
    c = LOGISTIC_CURVATURE
    ratio = c / (records * regularization)
    epsilon_prime = epsilon - math.log(1 + 2 * ratio + ratio**2)
    if epsilon_prime > 0:
        return epsilon_prime, 0.0
    return epsilon / 2, c / (records * (math.exp(epsilon / 4) - 1)) - regularization
