"""How `mpdp demo`'s in-process references score one release: the test rows cut at the threshold the clients choose
on the public rows, beside the majority class's rate."""

from __future__ import annotations

import numpy as np

KEY_ID = bytes(32)  # the references never encrypt; the parameters still name a key


def scored(split, test_scores: np.ndarray, public_scores: np.ndarray) -> dict:
    from mpdp.learning import evaluation, threshold

    cut = threshold.on_public_rows(public_scores)  # the clients' rule: public rows only
    found = evaluation.metrics(split.test_labels, threshold.predict(test_scores, cut), test_scores)
    return {**found, "majority": evaluation.majority_rate(split.test_labels)}
