"""A DPPP teacher's ensemble (docs/data-and-metrics.md, "DPPP: each party's ensemble of teachers"): T models,
each trained on one of T disjoint parts of the teacher's own rows, whose one-hot votes its ballot sums.

The split is a fixed permutation of the row positions (a public seed, nothing read from the rows) cut into T
near-equal parts, so repeated sessions use the same T models, and a record replaced in place (the privacy unit:
one training record of one teacher, replacement) stays in its part and moves one model's vote. A split that
looked at the labels (stratified) would let a replaced label move rows between parts, so it is not stratified: a
part holding one class gets a model that votes that class (mpdp.learning.models.train).
"""

from __future__ import annotations

import numpy as np

SPLIT_SEED = 0x5EED  # public: the split is a function of the row count only


def parts(rows: int, size: int) -> list[np.ndarray]:
    """The row positions of each of the T parts."""
    if not 1 <= size <= rows:
        raise ValueError(f"{rows} rows cannot be split into {size} parts of at least one row")
    if size == 1:
        return [np.arange(rows)]
    return np.array_split(np.random.default_rng(SPLIT_SEED).permutation(rows), size)


def jobs(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None, size: int
         ) -> list[tuple[str, np.ndarray, np.ndarray, int | None]]:
    """The T training jobs (models.train's arguments) of one teacher's ensemble."""
    return [(name, features[part], labels[part], classes) for part in parts(len(labels), size)]


def train(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None, size: int) -> list:
    """The T models, in this process (the launcher's evaluator and the references)."""
    from mpdp.learning import models

    return [models.train(*job) for job in jobs(name, features, labels, classes, size)]


def ballot(predictions: list[np.ndarray], classes: int) -> np.ndarray:
    """Queries × classes counts: how many of the T models vote each class (each row adds up to T)."""
    counts = np.zeros((len(predictions[0]), classes), dtype=np.int64)
    for predicted in predictions:
        predicted = np.asarray(predicted, dtype=int)
        if predicted.min(initial=0) < 0 or predicted.max(initial=0) >= classes:
            raise ValueError("prediction outside the class range")
        counts[np.arange(len(predicted)), predicted] += 1
    return counts
