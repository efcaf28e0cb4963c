"""A researcher's own scikit-learn classifier as the parties' teachers (`--teacher module:Class`,
`mpdp.deploy(teacher=…)`): a name that does not import, or is not a classifier, is refused in one line before
any key is made; a good one is fitted by the process that holds the rows."""

import numpy as np
import pytest

import mpdp
from launcher.cli import main
from launcher.deployment import processes
from mpdp.learning import models

FOREST = "sklearn.ensemble:RandomForestClassifier"


@pytest.mark.parametrize("name, reason", [
    ("sklearn.nowhere:Forest", "does not import"),
    ("sklearn.ensemble:NoSuchForest", "does not import"),
    ("sklearn.preprocessing:StandardScaler", "is not a scikit-learn classifier"),
    ("sklearn.linear_model:LinearRegression", "is not a scikit-learn classifier"),
    ("RandomForestClassifier", "is not MODULE:CLASS"),
])
def test_a_name_that_is_not_an_importable_classifier_is_refused_in_one_line(name, reason, tmp_path, capsys):
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit) as refused:
        main(["up", "--parties", "3", "--bits", "1024", "--run-dir", str(run_dir), "--teacher", name])
    message = str(refused.value)
    assert reason in message and "\n" not in message and message.startswith("mpdp: error:")
    assert not run_dir.exists()  # refused before the key ceremony
    with pytest.raises(ValueError, match=reason):
        with mpdp.deploy(parties=3, bits=1024, teacher=name, run_dir=run_dir):
            pass
    assert not run_dir.exists()


def test_teacher_and_model_together_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="--teacher or --model, not both"):
        main(["up", "--parties", "3", "--run-dir", str(tmp_path / "run"), "--teacher", FOREST, "--model", "knn"])


def test_an_own_classifier_is_fitted_in_the_calling_process_with_its_defaults():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(int)
    from sklearn.ensemble import RandomForestClassifier

    trained = models.train_portable_all([(FOREST, x, y, 2), ("logistic", x, y, 2)])
    assert isinstance(trained[0], RandomForestClassifier) and trained[0].n_estimators == 100
    assert not isinstance(trained[1], RandomForestClassifier)  # a built-in name still comes back as numpy
    assert models.accuracy(trained[0], x, y) > 0.9
    one_class = models.train(FOREST, x, np.zeros(60, dtype=int), 2)  # a part with one class votes that class
    assert np.all(one_class.predict(x) == 0)
    assert processes.model_names(f"{FOREST}, knn") == [FOREST, "knn"]
