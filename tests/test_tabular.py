"""Data input a researcher can trust: CSV by pandas, read by content, repaired loudly."""

import numpy as np
import pytest

from launcher.common.summary import context_lines, warnings
from mpdp.learning import datasets, evaluation
from mpdp.learning.tabular import kind_of, read_csv

ROWS = [("35", "admin.", "1200.5", "yes"), ("41", "technician", "", "no"), ("29", "admin.", "310", "no"),
        ("52", "", "4000", "yes"), ("38", "services", "990", "no"), ("45", "admin.", "770", "no")] * 5 + [
        ("33", "services", "abc", "no")]  # one stray text cell in a numeric column


def _write(path, separator=";", rows=ROWS, header=("age", "job", "balance", "y")):
    path.write_text("\n".join(separator.join(row) for row in [header, *rows]) + "\n")
    return path


def test_a_semicolon_file_with_yes_no_labels_and_gaps_reads_with_warnings(tmp_path, capsys):
    # a .txt: the type comes from the content; 31 rows at a large statistics ε (the reading is under test here, the
    # private statistics in tests/test_private_statistics.py)
    data = datasets.load(str(_write(tmp_path / "bank.txt")), label="y", statistics={"epsilon": 1e6})
    # age and balance stay numeric despite an empty cell and a stray 'abc' (balance gets a missing indicator);
    # job is one-hot (3 levels and a missing indicator).
    assert data.features.shape == (31, 1 + 4 + 2)
    assert data.class_names == ("no", "yes") and data.labels[0] == 1
    notes = " ".join(data.notes)
    assert "'balance': 1 cells are not numbers ('abc')" in notes
    assert "'balance': 6 missing cells" in notes
    assert "'job': 5 missing cells" in notes
    assert "warning" in capsys.readouterr().err
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12)


def test_the_paper_scalings_impute_the_median_and_the_most_frequent(tmp_path):
    table = read_csv(_write(tmp_path / "bank.csv"), "y")
    balance = table.features[:, table.columns.index("balance")]
    assert balance[1] == pytest.approx(np.median([1200.5, 310, 4000, 990, 770] * 5))
    assert table.features[3, table.columns.index("job=admin.")] == 1.0


def test_a_categorical_column_with_too_many_levels_is_an_error_naming_it(tmp_path):
    rows = [(str(i), f"id-{i}", "yes" if i % 2 else "no") for i in range(200)]
    path = _write(tmp_path / "ids.csv", ",", rows, ("x", "customer", "y"))
    with pytest.raises(ValueError, match="column 'customer' has 200 distinct values"):
        datasets.load(str(path), label="y")
    assert read_csv(path, "y", max_levels=500).features.shape == (200, 1 + 200)


def test_a_missing_label_column_names_the_columns_there(tmp_path):
    with pytest.raises(ValueError, match="no column 'target'; its columns: age, job, balance, y"):
        datasets.load(str(_write(tmp_path / "bank.csv")), label="target")


def test_libsvm_by_content_even_named_csv(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("+1 1:0.5 3:1\n-1 2:0.25\n+1 1:1 2:1 3:1\n-1 3:0.5\n")
    assert kind_of(path) == "libsvm"
    assert datasets.load(str(path)).features.shape == (4, 3)
    assert kind_of(_write(tmp_path / "t.csv")) == "csv"


def test_intercept_is_a_constant_feature_inside_the_unit_ball():
    data = datasets.load("breast-cancer", scaling="standardise", intercept=True)
    assert data.features.shape[1] == 31 and np.allclose(data.features[:, -1], 1 / np.sqrt(2))
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12) and data.intercept


def test_metrics_and_the_summary_put_a_release_beside_its_baselines():
    labels = np.array([0, 0, 0, 1])
    m = evaluation.metrics(labels, np.array([0, 0, 0, 0]), np.array([0.1, 0.2, 0.3, 0.9]))
    assert m == {"accuracy": 0.75, "balanced_accuracy": 0.5, "auc": 1.0, "one_class": True}
    assert evaluation.majority_rate(labels) == 0.75
    report = {"parameters": {"epsilon": 1.0}, "privacy": {"epsilon": 1.0, "epsilon_effective": 2.2},
              "result": {"test_metrics": m},
              "baselines": {"test_rows": 4, "majority_class_rate": 0.75,
                            "tuned": {**m, "accuracy": 1.0, "model": "tuned"}},
              "data": {"dataset": "bank", "split": "even", "split_seed": 7, "labels": {"no": 0, "yes": 1},
                       "intercept": "none"}}
    text = "\n".join(context_lines(report))
    assert "seed 7" in text and "no → 0, yes → 1" in text
    assert "ε = 2.2 DELIVERED" in text and "weaker than asked" in text
    assert "always the majority class        accuracy 75.0%" in text
    assert "tuned, non-private               balanced accuracy 50.0%, AUC 1.000 (accuracy 100.0%) — tuned" in text
    report["warnings"] = warnings(report)
    assert "WARNING: the model predicts one class for every row (AUC 1.000" in "\n".join(context_lines(report))
