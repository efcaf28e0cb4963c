"""The in-process reference of a Hamm session (no encryption): the counts the threshold sum must
produce and the classifier Charlie must release from them, for networked results to be checked against."""

from __future__ import annotations

import random

import numpy as np

from mpdp.protocols.hamm.charlie import Outcome, train_and_release
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.hamm.votes import counts_from_sums, vote_slots


def slot_sums(parameters: HammParameters, votes: list[np.ndarray], noise: list[np.ndarray] | None = None) -> np.ndarray:
    """Σ_i (h_i + z_i) per slot, as the threshold sum decrypts it."""
    total = np.sum(votes, axis=0).astype(np.int64)
    if noise:
        total = total + np.sum(noise, axis=0).astype(np.int64)
    return total.ravel()


def counts(parameters: HammParameters, votes: list[np.ndarray], noise: list[np.ndarray] | None = None) -> np.ndarray:
    """N × C counts Charlie computes from M′ = len(votes) voters (noise mean removed)."""
    voters = len(votes)
    return counts_from_sums(slot_sums(parameters, votes, noise), parameters.aux_points, parameters.classes, voters,
                            voters * (parameters.share_range // 2))


def session(parameters: HammParameters, aux_features: np.ndarray, models: list, source: random.Random,
            noise: list[np.ndarray] | None = None) -> tuple[np.ndarray, Outcome]:
    """(counts, outcome) of the parties' `models` voting on X_aux (noise shares given, or none)."""
    votes = [vote_slots(model.predict(aux_features), parameters.classes) for model in models]
    exact = counts(parameters, votes, noise)
    return exact, train_and_release(parameters, aux_features, exact, len(models), source)
