"""Charlie's targets from the vote counts (hamm.md, "Training and noise"; Algorithms 1 and 2): one-hot on
the majority label (`vote`) or the vote fractions α (`soft`); the exact minimiser is `mpdp.learning.logistic.fit`."""

from __future__ import annotations

import numpy as np


def targets_from_counts(counts: np.ndarray, voters: int, method: str) -> np.ndarray:
    """N × C class distributions from the (possibly noisy) vote counts (N × C) of M′ voters.

    vote: one-hot on the majority (binary ties to the positive class, multiclass ties to the lower
    class index); soft: α = counts / M′ clipped to [0, 1] and renormalised (noise can push a count
    outside [0, M′])."""
    counts = np.asarray(counts, dtype=float)
    classes = counts.shape[1]
    if method == "vote":
        if classes == 2:
            labels = (counts[:, 1] >= counts[:, 0]).astype(int)
        else:
            labels = np.argmax(counts, axis=1)
        return np.eye(classes)[labels]
    if method == "soft":
        alpha = np.clip(counts / voters, 0.0, 1.0)
        totals = alpha.sum(axis=1, keepdims=True)
        uniform = np.full_like(alpha, 1.0 / classes)
        return np.where(totals > 0, alpha / np.where(totals > 0, totals, 1.0), uniform)
    raise ValueError(f"unknown method {method!r}")
