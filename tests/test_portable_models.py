"""A party's teacher model as a numpy predictor (mpdp/learning/portable.py) predicts what scikit-learn predicts."""

import subprocess
import sys

import numpy as np
import pytest

from mpdp.learning import datasets, models
from mpdp.learning.portable import export


@pytest.fixture(scope="module", params=["breast-cancer", "digits"])
def split(request):
    data = datasets.load(request.param)
    order = np.random.default_rng(3).permutation(len(data.labels))
    train, test = order[: len(order) // 2], order[len(order) // 2:]
    return data.features[train], data.labels[train], data.features[test]


@pytest.mark.parametrize("name", ["svm-rbf", "logistic", "random-forest", "knn", "logistic-exact"])
def test_the_exported_model_predicts_as_scikit_learn_does(split, name):
    features, labels, test = split
    model = models.train(name, features, labels)
    portable = export(model)
    assert "sklearn" not in type(portable).__module__
    expected = model.predict(test)
    assert np.array_equal(portable.predict(test), expected), np.mean(portable.predict(test) != expected)


def test_a_part_with_one_class_exports_its_constant():
    features = np.random.default_rng(0).normal(size=(20, 3))
    portable = export(models.train("svm-rbf", features, np.full(20, 2), classes=3))
    assert list(portable.predict(features[:4])) == [2, 2, 2, 2]


def test_training_in_a_child_keeps_scikit_learn_out_of_the_caller():
    code = (
        "import sys, numpy as np\n"
        "from mpdp.learning import models\n"
        "rng = np.random.default_rng(1)\n"
        "x = rng.normal(size=(200, 5)); y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)\n"
        "m = models.train_portable('svm-rbf', x, y)\n"
        # scikit-learn only: scipy.special itself imports scipy.sparse in scipy 1.11 to 1.16.
        "assert 'sklearn' not in sys.modules, 'scikit-learn was imported'\n"
        "print((m.predict(x) == y).mean())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) > 0.8
