"""Pathak step 3.1: each party's regularised logistic regression (pathak.md, "Local training").

ŵ_j = argmin (1/n) Σ log(1 + exp(−y wᵀx)) + (λ/2)‖w‖², labels ±1, rows in the
unit ball, no intercept. The sensitivity 2/(nλ) assumes the exact minimiser,
so the gradient norm at the returned point is checked against γ.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


class InexactMinimiser(ValueError):
    pass


def signed_labels(labels: np.ndarray) -> np.ndarray:
    values = np.unique(labels)
    if len(values) > 2:
        raise ValueError("Pathak's protocol learns a binary classifier")
    return np.where(labels == values.max(), 1.0, -1.0)


def objective_gradient(w: np.ndarray, features: np.ndarray, signs: np.ndarray, regularization: float) -> np.ndarray:
    margins = signs * (features @ w)
    return -(features.T @ (signs * expit(-margins))) / len(signs) + regularization * w


def train(features: np.ndarray, labels: np.ndarray, regularization: float, tolerance: float) -> np.ndarray:
    if np.linalg.norm(features, axis=1).max(initial=0) > 1 + 1e-9:
        raise ValueError("rows must lie in the unit ball")
    signs = signed_labels(labels)
    from sklearn.linear_model import LogisticRegression  # on use: a role at rest does not need it

    model = LogisticRegression(C=1 / (len(signs) * regularization), fit_intercept=False, tol=1e-12, max_iter=100_000)
    w = model.fit(features, signs).coef_.ravel()
    # Newton polish: the sensitivity bound wants the exact minimiser.
    for _ in range(20):
        gradient = objective_gradient(w, features, signs, regularization)
        if np.linalg.norm(gradient) <= tolerance / 10:
            break
        p = expit(signs * (features @ w))
        hessian = (features.T * (p * (1 - p))) @ features / len(signs) + regularization * np.eye(len(w))
        w = w - np.linalg.solve(hessian, gradient)
    gradient_norm = float(np.linalg.norm(objective_gradient(w, features, signs, regularization)))
    if gradient_norm > tolerance:
        raise InexactMinimiser(f"‖∇J(ŵ)‖ = {gradient_norm:.2e} exceeds γ = {tolerance:.0e}")
    return w
