"""Hamm et al.'s baselines (Section 6; hamm.md, "Baselines"): batch, avg and indiv.

batch: one classifier on all private data, no privacy. indiv: the local classifiers' mean test accuracy.
avg: Pathak-style parameter averaging of the parties' linear models, at the party level — one party
replaces its whole model, whose norm is at most 1/λ on unit-ball rows, so the average moves by at most
2/(M′λ) (2√2/(M′λ) multiclass, supplement B.4) — with `l2-laplace` noise of that sensitivity. That is
the paper's calibration of the exact minimisers; it is a baseline, not a release of this system.
"""

from __future__ import annotations

import math
import random

import numpy as np

from mpdp.learning.logistic import RegularisedLogistic, predict
from mpdp.privacy.samplers import l2_laplace


def accuracy(weights: np.ndarray, features: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(predict(weights, features) == labels))


def batch(parts: list[tuple[np.ndarray, np.ndarray]], classes: int, regularization: float) -> np.ndarray:
    """The minimiser on every party's data pooled."""
    features = np.vstack([x for x, _ in parts])
    labels = np.concatenate([y for _, y in parts])
    return RegularisedLogistic(classes, regularization).fit(features, labels).weights


def indiv(models: list, features: np.ndarray, labels: np.ndarray) -> dict:
    """Mean and standard deviation over the parties of their local classifier's test accuracy."""
    accuracies = np.array([np.mean(model.predict(features) == labels) for model in models])
    return {"mean": float(accuracies.mean()), "std": float(accuracies.std())}


def avg_sensitivity(classes: int, voters: int, regularization: float) -> float:
    return (2.0 if classes == 2 else 2 * math.sqrt(2)) / (voters * regularization)


def averaged(models: list) -> np.ndarray:
    """The mean of the parties' weights (every model a RegularisedLogistic over the same classes)."""
    if not all(isinstance(model, RegularisedLogistic) for model in models):
        raise ValueError("avg needs every local model to be logistic-exact")
    return np.mean([model.weights for model in models], axis=0)


def avg_release(average: np.ndarray, classes: int, voters: int, regularization: float, epsilon: float,
                source: random.Random) -> np.ndarray:
    """The average plus η ∝ exp(−ε‖η‖/Δ_avg) (no noise at ε = ∞)."""
    if epsilon == math.inf:
        return average
    scale = avg_sensitivity(classes, voters, regularization) / epsilon
    return average + l2_laplace(average.size, scale, source).reshape(average.shape)
