"""The exact minimiser of L2-regularised logistic / softmax regression, and a classifier built on it.

J(W) = (1/N) Σ_i Σ_c a_ic · CE(W; x_i, c) + (λ/2)‖W‖², rows in the unit ball, no intercept, where a_i is a
distribution over the C classes (one-hot for labelled data). Two classes use one weight vector and the
logistic loss (the positive class is class 1), more the softmax loss with a C×d matrix. Output perturbation's
sensitivities assume the exact minimiser, so Newton's method polishes the solution and its gradient norm
is checked against the caller's tolerance γ. Hamm et al. use this model for every classifier (Section 6).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_softmax, softmax

from mpdp.learning.pathak_local import InexactMinimiser

MAX_NEWTON_STEPS = 100


def _binary(w: np.ndarray, x: np.ndarray, positive: np.ndarray, lam: float):
    """Objective, gradient and Hessian of (1/N) Σ [α l(wᵀx) + (1−α) l(−wᵀx)] + λ/2‖w‖²."""
    z = x @ w
    loss = positive * np.logaddexp(0, -z) + (1 - positive) * np.logaddexp(0, z)
    p = expit(z)
    value = loss.mean() + lam / 2 * w @ w
    gradient = x.T @ (p - positive) / len(z) + lam * w
    hessian = (x.T * (p * (1 - p))) @ x / len(z) + lam * np.eye(len(w))
    return value, gradient, hessian


def _multiclass(flat: np.ndarray, x: np.ndarray, targets: np.ndarray, lam: float):
    """The same for the softmax loss, with W flattened row-major (classes × d)."""
    n, d = x.shape
    classes = targets.shape[1]
    w = flat.reshape(classes, d)
    scores = x @ w.T
    value = -(targets * log_softmax(scores, axis=1)).sum() / n + lam / 2 * flat @ flat
    p = softmax(scores, axis=1)
    gradient = ((p - targets).T @ x / n).ravel() + lam * flat
    # Σ_i (diag p_i − p_i p_iᵀ) ⊗ x_i x_iᵀ / N
    outer = np.einsum("ic,ik->ick", -p, p)
    outer[:, np.arange(classes), np.arange(classes)] += p
    hessian = np.einsum("ick,ia,ib->cakb", outer, x, x).reshape(classes * d, classes * d) / n
    hessian += lam * np.eye(classes * d)
    return value, gradient, hessian


def fit(features: np.ndarray, targets: np.ndarray, regularization: float, tolerance: float) -> np.ndarray:
    """The exact minimiser for class distributions `targets` (N × C, rows summing to 1).

    Returns w (d,) for two classes, W (C × d) otherwise. Raises InexactMinimiser if ‖∇J‖ > γ."""
    if np.linalg.norm(features, axis=1).max(initial=0) > 1 + 1e-9:
        raise ValueError("rows must lie in the unit ball")
    if targets.shape[0] != features.shape[0] or not np.allclose(targets.sum(axis=1), 1):
        raise ValueError("one class distribution per row")
    binary = targets.shape[1] == 2
    size = features.shape[1] * (1 if binary else targets.shape[1])
    w = np.zeros(size)

    def evaluate(point):
        if binary:
            return _binary(point, features, targets[:, 1], regularization)
        return _multiclass(point, features, targets, regularization)

    value, gradient, hessian = evaluate(w)
    for _ in range(MAX_NEWTON_STEPS):
        if np.linalg.norm(gradient) <= tolerance / 10:
            break
        step = np.linalg.solve(hessian, gradient)
        size_factor = 1.0
        while True:  # backtracking: the objective is strongly convex, so a decrease always exists
            candidate = w - size_factor * step
            candidate_value, candidate_gradient, candidate_hessian = evaluate(candidate)
            if candidate_value <= value - 1e-4 * size_factor * gradient @ step or size_factor < 1e-10:
                break
            size_factor /= 2
        w, value, gradient, hessian = candidate, candidate_value, candidate_gradient, candidate_hessian
    gradient_norm = float(np.linalg.norm(gradient))
    if gradient_norm > tolerance:
        raise InexactMinimiser(f"‖∇J(w)‖ = {gradient_norm:.2e} exceeds γ = {tolerance:.0e}")
    return w if binary else w.reshape(targets.shape[1], features.shape[1])


def predict(weights: np.ndarray, features: np.ndarray) -> np.ndarray:
    """Class indices: sign of wᵀx (ties to the positive class 1) or argmax of Wx."""
    if weights.ndim == 1:
        return (features @ weights >= 0).astype(int)
    return np.argmax(features @ weights.T, axis=1)



class RegularisedLogistic:
    """A scikit-learn-style classifier (fit / predict) over the fixed classes 0..C−1: a part that lacks a
    class still gets a C-row model (the missing class's scores are driven down, not dropped)."""

    def __init__(self, classes: int, regularization: float = 1e-4, tolerance: float = 1e-6):
        self.classes = classes
        self.regularization = regularization
        self.tolerance = tolerance
        self._weights: np.ndarray | None = None

    @property
    def weights(self) -> np.ndarray:
        if self._weights is None:
            raise ValueError("fit the model first")
        return self._weights

    def fit(self, features: np.ndarray, labels: np.ndarray) -> RegularisedLogistic:
        labels = np.asarray(labels, dtype=int)
        if labels.min(initial=0) < 0 or labels.max(initial=0) >= self.classes:
            raise ValueError(f"labels must lie in 0..{self.classes - 1}")
        self._weights = fit(features, np.eye(self.classes)[labels], self.regularization, self.tolerance)
        return self

    def predict(self, features: np.ndarray) -> np.ndarray:
        return predict(self.weights, features)
