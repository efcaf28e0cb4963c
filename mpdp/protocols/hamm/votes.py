"""The vote encoding (hamm.md step 2) and its inverse: one slot per point (binary: the vote for the
positive class 1) or per point and class (multiclass: one-hot)."""

from __future__ import annotations

import numpy as np

from mpdp.sessions.errors import invalid


def vote_slots(predictions, classes: int) -> np.ndarray:
    """N × 1 (binary) or N × C (multiclass) slot values in {0, 1}."""
    predictions = np.asarray(predictions, dtype=int)
    if predictions.min(initial=0) < 0 or predictions.max(initial=0) >= classes:
        raise invalid(f"a local classifier predicted a class outside [0, {classes})")
    if classes == 2:
        return predictions.reshape(-1, 1)
    return np.eye(classes, dtype=np.int64)[predictions]


def counts_from_sums(sums, aux_points: int, classes: int, voters: int, noise_mean: int) -> np.ndarray:
    """N × C vote counts from the slot sums, with the noise mean M′·N_i/2 removed from every slot."""
    slots = np.asarray(sums, dtype=np.int64).reshape(aux_points, 1 if classes == 2 else classes) - noise_mean
    if classes == 2:
        return np.hstack([voters - slots, slots])
    return slots


def feasible(sums, aux_points: int, classes: int, voters: int, share_range: int) -> str | None:
    """Why decrypted slot sums cannot come from M′ honest voters (None if they can): each slot in
    [0, M′(1 + N_i)], and (multiclass) each point's slots add up to [M′, M′ + C·M′·N_i]."""
    slots = np.asarray(sums, dtype=np.int64).reshape(aux_points, -1)
    noise = voters * share_range
    if slots.min() < 0 or slots.max() > voters + noise:
        return f"a decrypted count lies outside [0, {voters + noise}] (M′ = {voters}, Σ N_i = {noise})"
    if classes > 2:
        totals = slots.sum(axis=1)
        if totals.min() < voters or totals.max() > voters + classes * noise:
            return "a point's decrypted votes do not add up to one vote per voter"
    return None
