"""Sensitivities as the spec states them (privacy.md, dppp.md, hamm.md, pathak.md, du.md), written apart from
the code that calibrates the noise, so the audit's exact check does not trust the function it checks.

Replacement neighbours throughout; the record unit except Hamm (the party unit).
"""

from __future__ import annotations

import math


def dppp_shifts(queries: int = 1) -> list[int]:
    """One teacher's record replaced: its vote on a query moves from one class to another, so two counts of
    that query's histogram move by +1 and −1 (dppp.md, "Setup": L1 sensitivity 2 per query)."""
    return [1, -1] * queries


def hamm_shifts(points: int, classes: int = 2) -> list[int]:
    """One party's whole data replaced: its vote on every public point may change; with binary votes one count
    per point moves by 1, with several classes two counts per point (hamm.md)."""
    return [1] * points if classes == 2 else [1, -1] * points


def pathak_model_l2(records: int, regularization: float, gradient_tolerance: float, dimension: int,
                    fractional_bits: int) -> float:
    """L2 change of one party's encoded model round(2^F·ŵ_j)/2^F when one of its n records is replaced: the
    exact minimiser moves by ≤ 2/(nλ) (Chaudhuri et al. 2011, Corollary 8, rows in the unit ball), an inexact
    one with ‖∇J‖ ≤ γ by ≤ 2γ/λ more (λ-strong convexity), and rounding to the grid by ≤ √d·2^−F."""
    return (2 / (records * regularization) + 2 * gradient_tolerance / regularization
            + math.sqrt(dimension) * 2.0**-fractional_bits)


def du_taylor_l1() -> tuple[float, float]:
    """L1 change of the order-2 Taylor objective's coefficients (linear, quadratic) when one record with
    ‖x̃‖₁ ≤ 2 (‖x‖₁ ≤ 1 and the intercept) is replaced: per record the linear coefficients (½ − y)·x̃ sum to
    at most ½·2 = 1 in absolute value and the quadratic ones (⅛ x̃_j x̃_l, doubled off the diagonal) to
    ⅛·2² = ½; a replacement removes one record and adds another (du.md)."""
    return 2 * 1.0, 2 * 0.5


def du_objective_epsilon(norm_scale: float, records: int, regularization: float) -> float:
    """Objective perturbation (Chaudhuri et al. 2011, Theorem 9, ‖z‖₂ ≤ 1, logistic c = ¼): b with density
    ∝ exp(−‖b‖/s) gives ε = 2/s (two records' gradients of norm ≤ 1 differ) plus the Jacobian term
    ln(1 + 2c/(nλ) + (c/(nλ))²)."""
    ratio = 0.25 / (records * regularization)
    return 2 / norm_scale + math.log(1 + 2 * ratio + ratio**2)
