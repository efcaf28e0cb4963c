"""`up --split label-skew:α`: a seeded non-IID split, each class's training rows shared among the parties by
Dirichlet(α) proportions; the same seed gives the same parts, every row lands in exactly one part, and a small α
gives parties far from the table's class balance."""

from __future__ import annotations

import numpy as np
import pytest

from launcher.cli import build_parser
from launcher.deployment.processes import split_data
from mpdp.learning import datasets


@pytest.fixture(scope="module")
def cancer():
    return datasets.load("breast-cancer", intercept=True)


def _positive_shares(split) -> list[float]:
    return [float(np.mean(labels)) for _, labels in split.teacher_parts]


def test_a_small_alpha_skews_every_partys_labels_and_the_seed_fixes_the_parts(cancer):
    skewed, fields = split_data(cancer, 5, 3, "label-skew:0.1")
    again, _ = split_data(cancer, 5, 3, "label-skew:0.1")
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(skewed.teacher_parts, again.teacher_parts))
    assert fields["split"] == "label-skew:0.1" and sum(fields["party_sizes"]) == int(round(2 / 3 * len(cancer.labels)))
    even, _ = split_data(cancer, 5, 3, "even")
    overall = float(np.mean(cancer.labels))
    assert max(abs(s - overall) for s in _positive_shares(skewed)) > 0.3  # some party mostly one class
    assert max(abs(s - overall) for s in _positive_shares(even)) < 0.15
    rows = np.vstack([x for x, _ in skewed.teacher_parts])
    assert len(np.unique(rows, axis=0)) == len(rows) and min(fields["party_sizes"]) >= datasets.SKEW_MIN_ROWS


def test_a_bad_alpha_is_one_clear_error(cancer):
    assert build_parser("up").parse_args(["up", "--split", "label-skew:0.5"]).split == "label-skew:0.5"
    with pytest.raises(ValueError, match="label-skew:α with α > 0"):
        split_data(cancer, 5, 3, "label-skew:none")
