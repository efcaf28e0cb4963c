"""Neighbouring data sets for the count audits, from real data and real training (launcher/audit/counts.py).

- DPPP (record unit): K teachers each train a logistic model on 40 breast-cancer records; the query is an
  outside record where teacher 1's prediction is least certain, and the neighbour replaces one of teacher 1's
  records by that query point with the other label, retrained, chosen so that teacher 1's vote moves.
- Hamm (party unit): M parties each train on their share of the records; party 1's data is replaced by the
  same records with every label flipped, retrained, and the parties vote on N public points.

The votes on D and D′ are what the releases add noise to; their difference is the measured sensitivity.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mpdp.protocols.dppp.reference import one_hot

MODEL = "logistic"
DPPP_RECORDS = 40  # per teacher
QUERIES_TRIED = 40
ROWS_TRIED = 4  # the replaced record matters little beside the query; try a few


def _data():
    from mpdp.learning import datasets

    data = datasets.load("breast-cancer")
    order = np.random.default_rng(11).permutation(len(data.labels))
    return data.features[order], data.labels[order]


@lru_cache(maxsize=8)
def dppp_votes(teachers: int, contributors: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Contributors × 2 one-hot votes on one query, on D and on D′ (teacher 1's record replaced)."""
    from mpdp.learning.models import train

    features, labels = _data()
    parts = [(features[j * DPPP_RECORDS:(j + 1) * DPPP_RECORDS], labels[j * DPPP_RECORDS:(j + 1) * DPPP_RECORDS])
             for j in range(contributors)]
    outside = features[teachers * DPPP_RECORDS:]
    models = [train(MODEL, f, y, 2) for f, y in parts]
    certainty = np.abs(models[0].predict_proba(outside)[:, 1] - 0.5)
    for query in np.argsort(certainty)[:QUERIES_TRIED]:
        point = outside[query:query + 1]
        vote = int(models[0].predict(point)[0])
        for row in range(ROWS_TRIED):
            replaced_features, replaced_labels = parts[0][0].copy(), parts[0][1].copy()
            replaced_features[row], replaced_labels[row] = point[0], 1 - vote
            moved = train(MODEL, replaced_features, replaced_labels, 2)
            if int(moved.predict(point)[0]) != vote:
                predictions = np.array([int(m.predict(point)[0]) for m in models])
                votes_d = one_hot(predictions, 2)
                votes_d_prime = votes_d.copy()
                votes_d_prime[0] = one_hot(np.array([1 - vote]), 2)[0]
                return votes_d, votes_d_prime, (f"teacher 1's record {row} replaced by the query point with label "
                                                f"{1 - vote}, retrained ({MODEL}, {DPPP_RECORDS} breast-cancer records"
                                                " per teacher): its vote moves")
    raise RuntimeError("no single-record replacement moved teacher 1's vote on the queries tried")


@lru_cache(maxsize=8)
def hamm_votes(parties: int, contributors: int, points: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Contributors × N binary votes on the public points, on D and on D′ (party 1's data replaced)."""
    from mpdp.learning.models import train

    features, labels = _data()
    public = features[-points:]
    size = (len(labels) - points) // parties
    parts = [(features[j * size:(j + 1) * size], labels[j * size:(j + 1) * size]) for j in range(contributors)]
    votes_d = np.array([train(MODEL, f, y, 2).predict(public) for f, y in parts], dtype=np.int64)
    votes_d_prime = votes_d.copy()
    votes_d_prime[0] = train(MODEL, parts[0][0], 1 - parts[0][1], 2).predict(public)
    return votes_d, votes_d_prime, (f"party 1's data replaced by the same {size} breast-cancer records with every "
                                    f"label flipped, retrained ({MODEL}): "
                                    f"{int(np.sum(votes_d[0] != votes_d_prime[0]))} of its {points} votes move")
