"""In-process reference computation of a DPPP round: the histogram the network must produce.

Σ_{i∈S} (votes_i + noise_i) − Σ_{i∈S} N_i/2, then argmax; votes_i is teacher i's ballot, the sum of its T
models' one-hot votes (one-hot when T = 1). Encryption
and threshold decryption do not change this value, so the networked result
must equal it exactly for the same votes and noise.
"""

from __future__ import annotations

import numpy as np

from mpdp.learning import ensemble


def one_hot(predictions: np.ndarray, classes: int) -> np.ndarray:
    predictions = np.asarray(predictions, dtype=int)
    if predictions.min(initial=0) < 0 or predictions.max(initial=0) >= classes:
        raise ValueError("prediction outside the class range")
    votes = np.zeros((len(predictions), classes), dtype=np.int64)
    votes[np.arange(len(predictions)), predictions] = 1
    return votes


def noisy_histograms(votes: list[np.ndarray], noise: list[np.ndarray], share_range: int) -> np.ndarray:
    """Queries × classes histogram from the contributors' votes and shifted noise shares in [0, range] (Bin(N_i, ½)
    with range N_i, or Sk(μ/K′) + B with range 2B), each centred on range/2."""
    total = np.sum([np.asarray(v, dtype=np.int64) + np.asarray(z, dtype=np.int64) for v, z in zip(votes, noise)], axis=0)
    return total - len(votes) * (share_range // 2)


def labels(histograms: np.ndarray) -> np.ndarray:
    """Noisy argmax per query (ties to the lowest class index)."""
    return np.argmax(histograms, axis=1)


def ballot(predictions: np.ndarray, classes: int) -> np.ndarray:
    """A teacher's ballot from its model's predictions (Q) or its ensemble's (T × Q)."""
    predictions = np.asarray(predictions, dtype=int)
    return one_hot(predictions, classes) if predictions.ndim == 1 else ensemble.ballot(list(predictions), classes)


def simulate_round(predictions: list[np.ndarray], classes: int, tosses_per_teacher: int, rng: np.random.Generator) -> np.ndarray:
    """Reference round without cryptography (experiment runner's simulation mode); each teacher's predictions are
    its model's (Q) or its ensemble's (T × Q)."""
    votes = [ballot(p, classes) for p in predictions]
    noise = [rng.binomial(tosses_per_teacher, 0.5, size=v.shape) for v in votes]
    return noisy_histograms(votes, noise, tosses_per_teacher)


def simulate_skellam_round(predictions: list[np.ndarray], classes: int, share_mu: float,
                           rng: np.random.Generator) -> np.ndarray:
    """The same with Sk(μ/K′) shares, untruncated (simulation mode: truncation at B changes a draw with
    probability below δ/1000)."""
    votes = [ballot(p, classes) for p in predictions]
    return np.sum([v + rng.poisson(share_mu / 2, v.shape) - rng.poisson(share_mu / 2, v.shape) for v in votes], axis=0)
