"""The privacy noise's spread of one release (mpdp/learning/noise_spread.py, launcher/common/noise_spread.py): redrawn
around the release for output perturbation (Pathak, Hamm), reruns of the reference for Du; said where it cannot
be computed. On the skewed table, the estimate around one Pathak release is checked against the spread of
independent releases (different noise seeds) of the same data."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from launcher.common import noise_spread
from launcher.protocols.pathak import commands as pathak_commands
from mpdp.learning import datasets, evaluation, threshold
from mpdp.learning import noise_spread as spread
from mpdp.protocols.pathak import reference as pathak_reference
from tests.test_useful_on_skewed_table import PARTIES, _defaults, skewed_split


def _topology(root: Path, split: datasets.TeacherSplit) -> SimpleNamespace:
    entries = []
    for number, (x, y) in enumerate(split.teacher_parts, start=1):
        path = root / f"party-{number}.npz"
        datasets.save_part(path, x, y, 2)
        entries.append(SimpleNamespace(data=path))
    return SimpleNamespace(parties=entries)


def _client_data(split: datasets.TeacherSplit) -> dict:
    return {"test_features": split.test_features, "test_labels": split.test_labels,
            "public_features": split.public_features}


def _pathak_report(split: datasets.TeacherSplit, seed: int) -> tuple[dict, np.ndarray]:
    args = _defaults(pathak_commands.session_options())
    parameters = pathak_commands.parameters(args, PARTIES, split.test_features.shape[1])
    w = pathak_reference.seeded_release(parameters, list(split.teacher_parts), seed)
    cut = threshold.on_public_rows(split.public_features @ w)
    metrics = evaluation.metrics(split.test_labels, threshold.predict(split.test_features @ w, cut),
                                 split.test_features @ w)
    return {"parameters": dataclasses.asdict(parameters), "result": {"w": w.tolist(), "test_metrics": metrics}}, w


@pytest.mark.slow
def test_pathaks_noise_spread_around_one_release_is_near_the_spread_of_independent_releases(tmp_path):
    split = skewed_split(tmp_path, 0)
    topology, client_data = _topology(tmp_path, split), _client_data(split)
    report, _ = _pathak_report(split, 1)
    found = noise_spread.estimate("pathak", report, topology, client_data)
    assert found["draws"] == spread.DRAWS and "twice" in found["method"]
    releases = [_pathak_report(split, seed)[0]["result"]["test_metrics"] for seed in range(2, 22)]
    actual = {key: float(np.std([m[key] for m in releases], ddof=1)) for key in ("balanced_accuracy", "auc")}
    for key, value in actual.items():  # centred one draw away: within a factor 3 of the independent spread
        assert value / 3 < found[key] < 3 * value, (key, found[key], value)
    # without the data files n_(1) is unknown: said, not guessed
    hidden = noise_spread.estimate("pathak", report, SimpleNamespace(parties=[SimpleNamespace(data=None)]),
                                   client_data)
    assert "n_(1)" in hidden["unavailable"]


def test_a_release_without_noise_has_no_spread_and_a_noisier_one_a_wider_spread():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(600, 3))
    labels = (x @ np.array([1.0, -0.5, 0.2]) + rng.logistic(size=600) > 1.5).astype(int)
    w = np.array([1.0, -0.5, 0.2])
    public = rng.normal(size=(300, 3))
    none = spread.around_release(w, lambda k: np.zeros(3), x, labels, public, "none", draws=20)
    assert none["balanced_accuracy"] < 1e-12 and none["auc"] < 1e-12
    small, large = (spread.around_release(w, lambda k, s=s: np.random.default_rng(k).normal(0, s, 3), x, labels,
                                          public, "gaussian", draws=40) for s in (0.05, 1.0))
    assert 0 < small["auc"] < large["auc"] and small["balanced_accuracy"] < large["balanced_accuracy"]


def test_where_the_spread_cannot_be_computed_the_report_and_summary_say_why():
    from launcher.common.summary import context_lines

    assert "votes" in noise_spread.estimate("dppp", {}, None, {})["unavailable"]
    du = {"parameters": {"method": "functional"}, "result": {"test_metrics": {}}}
    assert "data files" in noise_spread.estimate("du", du, SimpleNamespace(parties=[]), {})["unavailable"]
    hamm = {"parameters": {"noisy_counts": True, "epsilon": 1.0}, "result": {"test_metrics": {}}}
    assert "counts" in noise_spread.estimate("hamm", hamm, None, {})["unavailable"]
    metrics = {"accuracy": 0.9, "balanced_accuracy": 0.7, "auc": 0.8, "one_class": False,
               "noise_spread": {"unavailable": "the noise is on the teachers' vote counts"}}
    text = "\n".join(context_lines({"result": {"test_metrics": metrics},
                                    "baselines": {"test_rows": 10, "majority_class_rate": 0.6}}))
    assert "privacy noise's spread" in text and "not computed: the noise is on the teachers' vote counts" in text
    metrics["noise_spread"] = {"accuracy": 0.02, "balanced_accuracy": 0.03, "auc": 0.01, "method": "redrawn"}
    text = "\n".join(context_lines({"result": {"test_metrics": metrics},
                                    "baselines": {"test_rows": 10, "majority_class_rate": 0.6}}))
    assert "± accuracy 2.0%, balanced accuracy 3.0%, AUC 0.010 (redrawn)" in text


def test_dus_spread_reruns_the_reference_on_the_parties_data(tmp_path):
    from launcher.protocols.du import commands as du_commands

    data = datasets.load("breast-cancer", intercept=True)
    split = datasets.split_for_teachers(data, 3, np.random.default_rng(0))
    args = _defaults(du_commands.session_options())
    report = {"parameters": {"method": args.method, "epsilon": args.epsilon, "delta": args.delta,
                             "rounds": args.rounds, "tolerance": args.tolerance, "local_epochs": args.local_epochs,
                             "learning_rate": args.learning_rate, "lambda": args.regularization, "parties": 3,
                             "dimension": split.test_features.shape[1], "bound": args.bound,
                             "batch_size": args.batch_size},
              "result": {"test_metrics": {}}}
    found = noise_spread.estimate("du", report, _topology(tmp_path, split), _client_data(split))
    assert found["draws"] == spread.RERUNS and "reruns" in found["method"]
    assert 0 < found["balanced_accuracy"] < 0.5 and 0 < found["auc"] < 0.5


