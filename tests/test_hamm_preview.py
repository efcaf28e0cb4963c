"""Hamm's check before spending reads the release's own scores, not only the regulariser's bound: with a few rows a
party the fit to vote fractions scores every row nearly alike, so noise the bound calls small swamps it
(launcher/protocols/hamm/preview.py)."""

from __future__ import annotations

import random
from argparse import Namespace
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from launcher.common import noise as common_noise
from launcher.common import noise_check
from launcher.protocols.hamm import preview
from mpdp.learning import datasets
from mpdp.learning.logistic import fit
from mpdp.protocols.hamm import training
from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, GRADIENT_TOLERANCE, HammParameters
from mpdp.protocols.hamm.release import Release

PARTIES, D = 300, 10


def _rows(rng, count):
    x = rng.normal(size=(count, D))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x, (x @ np.linspace(1, -1, D) + 0.3 * rng.normal(size=count) > 0).astype(int)


def _deployment(directory, rows):
    rng = np.random.default_rng(7)
    entries = []
    for number in range(PARTIES):
        features, labels = _rows(rng, rows)
        path = directory / f"party_{number + 1}.npz"
        datasets.save_part(path, features, labels, 2)
        entries.append(SimpleNamespace(data=path, model=None))
    public, _ = _rows(rng, 60)
    test_x, test_y = _rows(rng, 2000)
    client_data = {"public_features": public, "test_features": test_x, "test_labels": test_y, "classes": 2}
    return SimpleNamespace(parties=entries, colluding=1), client_data


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """Three rows a party: each local model is nearly a guess, and the votes' fractions barely vary."""
    return _deployment(tmp_path_factory.mktemp("few"), 3)


@pytest.fixture(scope="module")
def thirty_rows(tmp_path_factory):
    return _deployment(tmp_path_factory.mktemp("thirty"), 30)


def _args(regularization):
    return Namespace(noisy_counts=False, epsilon=1.0, regularization=regularization, method="soft")


def _release_aucs(topology, client_data, regularization, draws=30):
    """The in-process release (Charlie's fit on every party's vote fractions, then l2-laplace η) over noise draws."""
    fractions, read = preview.vote_fractions(topology, client_data)
    assert read == PARTIES  # fewer parties than the sample: every one read
    public = client_data["public_features"]
    w = fit(public, training.targets_from_counts(fractions, 1, "soft"), regularization, GRADIENT_TOLERANCE)
    release = Release(HammParameters("soft", 1.0, 1e-6, regularization, 2, PARTIES, len(public), D, False, False,
                                     DEFAULT_HONEST_FRACTION, bytes(32)), PARTIES)
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    return [roc_auc_score(test_y, test_x @ (w + release.sample(random.Random(k)))) for k in range(draws)]


def test_the_bound_says_fine_where_the_releases_own_scores_are_swamped(deployment):
    topology, client_data = deployment
    blind = noise_check.estimate("hamm", _args(1e-2), SimpleNamespace(parties=[SimpleNamespace(data=None, model=None)]
                                                                         * PARTIES, colluding=1), client_data)
    seen = noise_check.estimate("hamm", _args(1e-2), topology, client_data)
    assert blind["noise"] == seen["noise"]
    assert blind["ratio"] < common_noise.TARGET and not blind["warnings"]  # the regulariser's bound: "can learn"
    assert seen["ratio"] > common_noise.TOO_NOISY and "it cannot learn" in seen["warnings"][0]
    assert "score spread without noise" in noise_check.line(seen) and "every party's local models" in seen["formula"]
    # and the release itself: at this λ its AUC over noise draws is a coin's
    aucs = _release_aucs(topology, client_data, 1e-2)
    assert abs(np.median(aucs) - 0.5) < 0.15 and min(aucs) < 0.5 < max(aucs)


def test_where_the_preview_passes_the_release_ranks(deployment, thirty_rows):
    topology, client_data = thirty_rows
    seen = noise_check.estimate("hamm", _args(1.0), topology, client_data)
    assert seen["ratio"] < common_noise.NOISY and not seen["warnings"]
    ranked = _release_aucs(topology, client_data, 1.0)
    assert min(ranked) > 0.7
    # three rows a party, the same λ: the check says it cannot learn, and no noise draw ranks as well
    few = noise_check.estimate("hamm", _args(1.0), *deployment)
    assert few["ratio"] > 2 * common_noise.NOISY and few["warnings"]
    assert np.median(_release_aucs(*deployment, 1.0)) < np.median(ranked) - 0.1


def test_the_preview_is_charlies_fit_on_the_parties_votes(deployment):
    """The signal is the spread of the scores Charlie's own fit gives the public rows, from each party's model."""
    from mpdp.learning import models

    topology, client_data = deployment
    public = client_data["public_features"]
    votes = np.zeros(len(public))
    for entry in topology.parties:
        features, labels = datasets.load_part(entry.data)[:2]
        votes += models.train(models.DEFAULT_TEACHER_MODEL, features, labels, 2).predict(public)
    fractions = np.stack([1 - votes / PARTIES, votes / PARTIES], axis=1)
    assert np.allclose(preview.vote_fractions(topology, client_data)[0], fractions)
    w = fit(public, fractions, 0.1, GRADIENT_TOLERANCE)
    assert preview.score_spread("soft", 0.1, public, fractions) == pytest.approx(np.std(public @ w))
