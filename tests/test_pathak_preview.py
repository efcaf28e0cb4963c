"""Pathak's check before spending: the regulariser's bound decides, and where the operator holds the parties' data
the release's own scores are read beside it, the spread of η·x against that of ŵ·x without noise on the same rows
(launcher/protocols/pathak/preview.py). The bound read within a factor of 0.6 to 1.3 of that on breast cancer and
a9a, 0.27 on a skewed table (docs/results/noise-checks/); where the preview reads above 1× and the bound does not,
the check warns."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from launcher.common import noise as common_noise
from launcher.common import noise_check
from launcher.protocols.pathak import commands as pathak_commands
from launcher.protocols.pathak import preview
from mpdp.learning import datasets
from mpdp.learning.pathak_local import train
from tests.test_useful_on_skewed_table import _defaults

PARTIES = 5


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """breast cancer among five parties, as `up` splits it; the parties' files where the operator keeps them."""
    root: Path = tmp_path_factory.mktemp("pathak-preview")
    split = datasets.split_for_teachers(datasets.load("breast-cancer"), PARTIES, np.random.default_rng(1))
    entries = []
    for number, (features, labels) in enumerate(split.teacher_parts, start=1):
        path = root / f"party_{number}.npz"
        datasets.save_part(path, features, labels, 2)
        entries.append(SimpleNamespace(data=path))
    client_data = {"test_features": split.test_features, "test_labels": split.test_labels, "classes": 2,
                   "party_sizes": np.array([len(labels) for _, labels in split.teacher_parts])}
    return SimpleNamespace(parties=entries), client_data, split


def _args(**changes):
    args = _defaults(pathak_commands.session_options())
    for name, value in changes.items():
        setattr(args, name, value)
    return args


def test_the_preview_is_the_average_local_model_against_the_noise_the_session_draws(deployment):
    topology, client_data, split = deployment
    args = _args(regularization=0.3, epsilon=1.0)
    seen = noise_check.estimate("pathak", args, topology, client_data)
    assert "the release's own scores: 0.3×" in noise_check.line(seen)
    assert "every party's local models" in seen["preview"]["formula"]
    parameters = pathak_commands.parameters(args, PARTIES, split.test_features.shape[1])
    rows = np.vstack([x for x, _ in split.teacher_parts])  # fewer than SAMPLED_ROWS: every row
    w = np.mean([train(x, y, 0.3, parameters.gradient_tolerance) for x, y in split.teacher_parts], axis=0)
    assert seen["preview"]["signal"] == pytest.approx(np.std(rows @ w))
    smallest = min(len(y) for _, y in split.teacher_parts)
    noise = [np.std(rows @ preview.noise_vector(parameters, smallest, f"mpdp/noise-preview/{k}"))
             for k in range(preview.DRAWS)]
    assert seen["preview"]["noise"] == pytest.approx(np.median(noise))
    assert seen["preview"]["ratio"] < common_noise.TARGET and not seen["warnings"]


@pytest.mark.parametrize(("regularization", "epsilon", "calibration"), [
    (0.3, 1.0, "tight"), (0.3, 1.0, "paper"), (0.1, 1.0, "paper"), (0.05, 0.3, "paper")])
def test_the_bound_decides_and_reads_near_the_preview(deployment, regularization, epsilon, calibration):
    topology, client_data, _ = deployment
    args = _args(regularization=regularization, epsilon=epsilon, calibration=calibration)
    seen = noise_check.estimate("pathak", args, topology, client_data)
    blind = noise_check.estimate("pathak", args, SimpleNamespace(parties=[SimpleNamespace(data=None)] * PARTIES),
                                 client_data)
    assert "preview" not in blind and seen["ratio"] == blind["ratio"]
    assert 0.6 <= blind["ratio"] / seen["preview"]["ratio"] <= 1.5, (blind["ratio"], seen["preview"]["ratio"])


def test_a_preview_above_the_bound_warns_without_stopping(deployment):
    """ε = 0.25: the bound reads 0.99× (it runs), the release's own scores about 1.2×: said, as a warning."""
    topology, client_data, _ = deployment
    seen = noise_check.estimate("pathak", _args(regularization=0.3, epsilon=0.25), topology, client_data)
    assert seen["ratio"] <= common_noise.NOISY < seen["preview"]["ratio"]
    assert len(seen["warnings"]) == 1 and "one noise draw decides" in seen["warnings"][0]
    assert "the release's own scores" in seen["warnings"][0]


def test_what_the_preview_says_is_what_the_release_does(deployment):
    """Below half the spread every noise draw keeps the non-private ranking; far above it the ranking is lost."""
    topology, client_data, split = deployment
    test_x, test_y = split.test_features, split.test_labels

    def aucs(args):
        parameters = pathak_commands.parameters(args, PARTIES, test_x.shape[1])
        w = np.mean([train(x, y, args.regularization, parameters.gradient_tolerance) for x, y in split.teacher_parts],
                    axis=0)
        smallest = min(len(y) for _, y in split.teacher_parts)
        return roc_auc_score(test_y, test_x @ w), [
            roc_auc_score(test_y, test_x @ (w + preview.noise_vector(parameters, smallest, f"release/{k}")))
            for k in range(30)]

    quiet = _args(regularization=0.3, epsilon=1.0)
    assert noise_check.estimate("pathak", quiet, topology, client_data)["preview"]["ratio"] < common_noise.TARGET
    plain, released = aucs(quiet)
    assert min(released) > plain - 0.05
    loud = _args(regularization=0.3, epsilon=0.05, calibration="paper")
    swamped = noise_check.estimate("pathak", loud, topology, client_data)
    assert min(swamped["ratio"], swamped["preview"]["ratio"]) > common_noise.TOO_NOISY
    assert "it cannot learn" in swamped["warnings"][0]
    _, released = aucs(loud)
    assert abs(np.median(released) - 0.5) < 0.2 and min(released) < 0.5 < max(released)


def test_a_party_file_gone_falls_back_to_the_bound(deployment, tmp_path):
    _, client_data, _ = deployment
    missing = SimpleNamespace(parties=[SimpleNamespace(data=tmp_path / "gone.npz")] * PARTIES)
    blind = noise_check.estimate("pathak", _args(regularization=0.3), missing, client_data)
    assert "preview" not in blind and "the release's own scores" not in noise_check.line(blind)
    # the draws are seeded by name (noise_vector): the check reads the same each time
    assert noise_check.estimate("pathak", _args(regularization=0.3), *deployment[:2])["preview"] == \
        noise_check.estimate("pathak", _args(regularization=0.3), *deployment[:2])["preview"]


def test_a_deployment_remade_at_the_same_paths_is_read_anew(tmp_path):
    """The preview keeps one deployment's data between the fix's candidates; new files at those paths are new data."""
    split = datasets.split_for_teachers(datasets.load("breast-cancer"), PARTIES, np.random.default_rng(2))
    paths = [tmp_path / f"party_{number}.npz" for number in range(1, PARTIES + 1)]
    topology = SimpleNamespace(parties=[SimpleNamespace(data=path) for path in paths])
    client_data = {"test_features": split.test_features, "test_labels": split.test_labels, "classes": 2,
                   "party_sizes": np.array([len(labels) for _, labels in split.teacher_parts])}
    for path, (features, labels) in zip(paths, split.teacher_parts):
        datasets.save_part(path, features, labels, 2)
    first = noise_check.estimate("pathak", _args(regularization=0.3), topology, client_data)["preview"]
    for path, (features, labels) in zip(paths, split.teacher_parts):
        datasets.save_part(path, features, 1 - labels, 2)  # the same rows, every label flipped: ŵ → −ŵ
    again = noise_check.estimate("pathak", _args(regularization=0.3), topology, client_data)["preview"]
    assert again["signal"] == pytest.approx(first["signal"])  # the spread of −ŵ·x is that of ŵ·x …
    weights = preview.release_without_noise(topology, 0.3, 1e-6)[0]
    flipped = np.mean([train(x, 1 - y, 0.3, 1e-6) for x, y in split.teacher_parts], axis=0)
    assert np.allclose(weights, flipped)  # … but the model is the new files' one, not the one read first
    assert not np.allclose(weights, np.mean([train(x, y, 0.3, 1e-6) for x, y in split.teacher_parts], axis=0))
