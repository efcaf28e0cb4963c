"""Neighbouring data sets for the count audits, from real data and real training (launcher/audit/counts.py): the
records every protocol's neighbours are drawn from and the model they train. Each protocol's own neighbours (which
record or party changes, and how its votes move) are in launcher/protocols/<name>/neighbours.py.

The votes on D and D′ are what the releases add noise to; their difference is the measured sensitivity.
"""

from __future__ import annotations

import numpy as np

MODEL = "logistic"


def data():
    """Breast cancer, shuffled once with a fixed seed: every audit draws its neighbours from the same records."""
    from mpdp.learning import datasets

    data = datasets.load("breast-cancer")
    order = np.random.default_rng(11).permutation(len(data.labels))
    return data.features[order], data.labels[order]
