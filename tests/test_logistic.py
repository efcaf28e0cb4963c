"""The exact L2-regularised logistic model every Hamm classifier uses, against scikit-learn's."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp.learning import datasets, models
from mpdp.learning.logistic import RegularisedLogistic


def _data(classes: int, rows: int = 300, seed: int = 3):
    data = datasets.load("digits", scaling="unit-rows")
    keep = np.flatnonzero(data.labels < classes)[:rows]
    return data.features[keep], data.labels[keep]


@pytest.mark.parametrize("classes", [2, 4])
def test_the_minimiser_equals_scikit_learns_with_c_of_one_over_n_lambda(classes):
    features, labels = _data(classes)
    regularization = 1e-2
    ours = RegularisedLogistic(classes, regularization, tolerance=1e-9).fit(features, labels)
    theirs = LogisticRegression(C=1 / (len(labels) * regularization), fit_intercept=False, tol=1e-12,
                                max_iter=10_000).fit(features, labels)
    coefficients = theirs.coef_[0] if classes == 2 else theirs.coef_
    assert np.allclose(ours.weights, coefficients, atol=1e-4)
    assert np.array_equal(ours.predict(features), theirs.predict(features))


def test_a_part_missing_classes_still_gets_every_class_row():
    features, labels = _data(4)
    only_two = labels < 2
    model = models.train("logistic-exact", features[only_two], labels[only_two], classes=4)
    assert model.weights.shape == (4, features.shape[1])
    assert set(model.predict(features)) <= {0, 1}
    single = models.train("logistic-exact", features[labels == 1], labels[labels == 1], classes=2)
    assert isinstance(single, RegularisedLogistic)  # no constant fallback: the paper's model everywhere


def test_unit_rows_scaling_uses_each_row_alone():
    raw = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    scaled = datasets.into_unit_ball(raw, "unit-rows")
    assert np.allclose(scaled, [[0.6, 0.8], [0, 0], [1, 0]])
    assert np.allclose(datasets.into_unit_ball(raw[:1], "unit-rows"), scaled[:1])  # no other row involved
    with pytest.raises(ValueError):
        datasets.into_unit_ball(raw, "minmax")
