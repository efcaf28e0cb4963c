"""The exported model's scaling (mpdp/learning/released.py): raw rows, as a user holds them, become exactly the
feature rows the deployment made, for a CSV table with categorical columns and missing cells, under the public
scaling and under `standardise` (whose statistics the export carries)."""

import csv

import numpy as np
import pandas as pd
import pytest

from mpdp.learning import datasets, released
from tests import synthetic_table


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return synthetic_table.write(tmp_path_factory.mktemp("released") / "table.csv", rows=400)


@pytest.mark.parametrize("schema", [False, True])
def test_raw_rows_become_the_deployments_feature_rows(table, schema, tmp_path):
    given = str(synthetic_table.write_schema(tmp_path / "schema.json")) if schema else None
    dataset = datasets.load(str(table), label="y", intercept=True, schema=given)
    assert dataset.raw_scaling["kind"] == "public" and dataset.raw_scaling["intercept"]
    frame = pd.read_csv(table).drop(columns="y")
    scaling = released.RawRows(dataset.raw_scaling)
    assert np.allclose(scaling.transform(frame), dataset.features, atol=1e-12)
    assert np.allclose(scaling.transform(frame[frame.columns[::-1]]), dataset.features, atol=1e-12)  # by name
    with table.open() as handle:
        text_rows = [row[:-1] for row in list(csv.reader(handle))[1:]]  # cells as text, "" where missing
    assert np.allclose(scaling.transform(text_rows), dataset.features, atol=1e-12)


def test_bundled_rows_and_a_linear_release_predict_as_the_weights_say():
    from sklearn.datasets import load_breast_cancer

    dataset = datasets.load("breast-cancer", intercept=True)
    raw = load_breast_cancer().data
    weights = np.random.default_rng(1).normal(size=dataset.features.shape[1])
    model = released.pipeline(dataset.raw_scaling, [("model", released.linear(weights, -0.1, [0, 1]))])
    assert np.array_equal(model.predict(raw), (dataset.features @ weights > 0.1).astype(int))


def test_a_multiclass_release_predicts_the_class_of_the_largest_score():
    from mpdp.learning.logistic import predict

    rows = np.random.default_rng(2).normal(size=(200, 5))
    weights = np.random.default_rng(3).normal(size=(4, 5))
    assert np.array_equal(released.linear(weights, 0.0, np.arange(4)).predict(rows), predict(weights, rows))


@pytest.mark.parametrize("intercept", [False, True])
def test_a_standardised_deployment_scales_raw_rows_with_the_tables_statistics(table, intercept):
    """`--scaling standardise` reads every row: the export carries the column means, spreads and common factor
    (and a CSV table's encoding: medians, levels, most frequent levels), so raw rows become the deployment's rows."""
    from sklearn.datasets import load_breast_cancer

    cancer = datasets.load("breast-cancer", scaling="standardise", intercept=intercept)
    assert np.allclose(released.RawRows(cancer.raw_scaling).transform(load_breast_cancer().data), cancer.features,
                       atol=1e-12)
    own = datasets.load(str(table), label="y", scaling="standardise", intercept=intercept)
    frame = pd.read_csv(table).drop(columns="y")
    assert frame.isna().any().any()  # missing cells, filled as the reader filled them
    assert np.allclose(released.RawRows(own.raw_scaling).transform(frame), own.features, atol=1e-12)
    refused = {k: v for k, v in own.raw_scaling.items() if k != "mean"}  # a deployment that did not record them
    with pytest.raises(ValueError, match="did not record the statistics") as error:
        released.pipeline(refused, [])
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="rows of 30 columns"):
        released.RawRows(datasets.load("breast-cancer").raw_scaling).transform(np.zeros((2, 3)))


def test_a_standardised_deployments_export_gives_the_reports_accuracy_on_raw_rows(table, tmp_path):
    import pickle

    import mpdp
    from launcher.deployment import processes

    dataset = datasets.load(str(table), label="y", scaling="standardise", intercept=True)
    raw = pd.read_csv(table).drop(columns="y")
    split, client_fields = processes.split_data(dataset, 3, seed=11)
    run = processes.RunDirectory(tmp_path / "run")
    run.client_data.parent.mkdir(parents=True)
    np.savez(run.client_data, **client_fields)
    train = np.vstack([x for x, _ in split.teacher_parts])
    labels = np.concatenate([y for _, y in split.teacher_parts])
    weights = np.linalg.lstsq(train, 2.0 * labels - 1, rcond=None)[0]  # any weights: a release's stand-in
    test_x, test_y = client_fields["test_features"], client_fields["test_labels"]
    accuracy = float(np.mean((test_x @ weights > 0) == test_y))
    report = mpdp.Report({"protocol": "pathak", "parameters": {"dataset": dataset.name},
                          "result": {"w": weights.tolist(), "test_metrics": {"accuracy": accuracy,
                                                                              "threshold": {"value": 0.0}}}})
    assert "gives the report's accuracy" in mpdp.Deployment(run.path, None).export(report, tmp_path / "model.pkl")
    model = pickle.loads((tmp_path / "model.pkl").read_bytes())
    # the test rows, found among the raw rows by their scaled features: the pipeline on raw cells scores them alike
    index = {row.tobytes(): i for i, row in enumerate(np.round(dataset.features, 12))}
    rows = [index[row.tobytes()] for row in np.round(test_x, 12)]
    assert float(np.mean(model.predict(raw.iloc[rows]) == test_y)) == accuracy


def test_the_python_api_exports_a_release_only_when_it_gives_the_reports_accuracy(tmp_path):
    import pickle

    import mpdp
    from launcher.deployment import processes

    dataset = datasets.load("breast-cancer", intercept=True)
    _, client_fields = processes.split_data(dataset, 3, seed=7)
    run = processes.RunDirectory(tmp_path / "run")
    run.client_data.parent.mkdir(parents=True)
    np.savez(run.client_data, **client_fields)
    test_x, test_y = client_fields["test_features"], client_fields["test_labels"]
    weights = np.linalg.lstsq(test_x, 2.0 * test_y - 1, rcond=None)[0]  # any weights: a release's stand-in
    accuracy = float(np.mean((test_x @ weights > 0.05) == test_y))
    report = mpdp.Report({"protocol": "pathak", "parameters": {"dataset": "breast-cancer"},
                          "result": {"w": weights.tolist(), "test_metrics": {"accuracy": accuracy,
                                                                              "threshold": {"value": 0.05}}}})
    deployment = mpdp.Deployment(run.path, None)
    assert "gives the report's accuracy" in deployment.export(report, tmp_path / "model.pkl")
    model = pickle.loads((tmp_path / "model.pkl").read_bytes())
    assert np.array_equal(model[1:].predict(test_x), (test_x @ weights > 0.05).astype(int))
    report["result"]["test_metrics"]["accuracy"] = accuracy - 0.01
    with pytest.raises(ValueError, match="is not the report's"):
        deployment.export(report, tmp_path / "other.pkl")
    assert not (tmp_path / "other.pkl").exists()
    with pytest.raises(ValueError, match="name a .joblib or .pkl or .pickle file"):
        deployment.export(report, tmp_path / "model.txt")
