"""DPPP's neighbouring data sets for the count audit (record unit): K teachers each train a logistic model on 40
breast-cancer records; the query is an outside record where teacher 1's prediction is least certain, and the
neighbour replaces one of teacher 1's records by that query point with the other label, retrained, chosen so that
teacher 1's vote moves."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from launcher.audit.neighbours import MODEL, data
from mpdp.protocols.dppp.reference import one_hot

RECORDS = 40  # per teacher
QUERIES_TRIED = 40
ROWS_TRIED = 4  # the replaced record matters little beside the query; try a few


@lru_cache(maxsize=8)
def votes(teachers: int, contributors: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Contributors × 2 one-hot votes on one query, on D and on D′ (teacher 1's record replaced)."""
    from mpdp.learning.models import train

    features, labels = data()
    parts = [(features[j * RECORDS:(j + 1) * RECORDS], labels[j * RECORDS:(j + 1) * RECORDS])
             for j in range(contributors)]
    outside = features[teachers * RECORDS:]
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
                                                f"{1 - vote}, retrained ({MODEL}, {RECORDS} breast-cancer records"
                                                " per teacher): its vote moves")
    raise RuntimeError("no single-record replacement moved teacher 1's vote on the queries tried")
