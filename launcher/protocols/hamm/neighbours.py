"""Hamm's neighbouring data sets for the count audit (party unit): M parties each train on their share of the
records; party 1's data is replaced by the same records with every label flipped, retrained, and the parties vote
on N public points."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from launcher.audit.neighbours import MODEL, data


@lru_cache(maxsize=8)
def votes(parties: int, contributors: int, points: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Contributors × N binary votes on the public points, on D and on D′ (party 1's data replaced)."""
    from mpdp.learning.models import train

    features, labels = data()
    public = features[-points:]
    size = (len(labels) - points) // parties
    parts = [(features[j * size:(j + 1) * size], labels[j * size:(j + 1) * size]) for j in range(contributors)]
    votes_d = np.array([train(MODEL, f, y, 2).predict(public) for f, y in parts], dtype=np.int64)
    votes_d_prime = votes_d.copy()
    votes_d_prime[0] = train(MODEL, parts[0][0], 1 - parts[0][1], 2).predict(public)
    return votes_d, votes_d_prime, (f"party 1's data replaced by the same {size} breast-cancer records with every "
                                    f"label flipped, retrained ({MODEL}): "
                                    f"{int(np.sum(votes_d[0] != votes_d_prime[0]))} of its {points} votes move")
