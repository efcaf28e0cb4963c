"""A scikit-learn RandomForestClassifier as DPPP's teachers over real processes (`mpdp up --teacher`, 1024-bit,
3 parties, breast-cancer): every party process fits its ensemble of forests on its own rows and votes with them;
the student learns from the noisy plurality of the forests' votes. Then `mpdp export` writes the student, and a
Pathak, a Du and a Hamm release of the same deployment, as scikit-learn Pipelines whose `predict` on the raw
breast-cancer rows of the evaluator's test split gives each report's accuracy."""

import json
import pickle

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import Pipeline

from launcher.cli import main
from launcher.common.client import load_client_data
from launcher.deployment import processes
from mpdp.learning import datasets

pytestmark = [pytest.mark.slow, pytest.mark.network]

FOREST = "sklearn.ensemble:RandomForestClassifier"


def _raw_test_rows(run_dir):
    """The raw breast-cancer rows behind the evaluator's scaled test rows (each found among all scaled rows)."""
    client_data = load_client_data(processes.RunDirectory(run_dir).client_data)
    scaled = datasets.load("breast-cancer", intercept=bool(client_data["intercept"])).features
    where = {row.tobytes(): index for index, row in enumerate(scaled)}
    indices = [where[row.tobytes()] for row in client_data["test_features"]]
    return load_breast_cancer().data[indices], client_data["test_labels"]


def _exported_accuracy(run_dir, out) -> float:
    model = joblib.load(out) if out.suffix == ".joblib" else pickle.loads(out.read_bytes())
    assert isinstance(model, Pipeline) and model.steps[0][0] == "scaling"
    assert hasattr(model.steps[-1][1], "coef_")
    rows, labels = _raw_test_rows(run_dir)
    return float(np.mean(model.predict(rows) == labels))


def test_random_forest_teachers_vote_and_every_release_exports(tmp_path, capsys):
    run_dir = tmp_path / "run"
    try:
        assert main(["up", "--parties", "3", "--bits", "1024", "--run-dir", str(run_dir), "--dataset",
                     "breast-cancer", "--seed", "3", "--budget", "inf", "--teacher", FOREST]) == 0
        reports = {}
        for protocol, options in (("dppp", ["--queries", "40", "--epsilon", "8", "--export",
                                            str(tmp_path / "dppp.joblib")]),
                                  ("pathak", ["--anyway"]), ("du", ["--rounds", "2", "--anyway"]),
                                  ("hamm", ["--anyway"])):
            reports[protocol] = tmp_path / f"{protocol}.json"
            assert main(["run", protocol, "--run-dir", str(run_dir), *options,
                         "--report", str(reports[protocol])]) == 0
        assert "gives the report's accuracy" in capsys.readouterr().out  # dppp's `run --export`
        report = json.loads(reports["dppp"].read_text())
        assert report["result"]["contributors"] == [1, 2, 3]
        party_logs = [path.read_text(errors="replace") for path in run_dir.rglob("party_*.log")]
        assert len(party_logs) == 3 and all(f"models ({FOREST}) on first use" in log for log in party_logs)
        assert all(f"trained 1 teachers ({FOREST})" in log for log in party_logs)  # Hamm's local models
        # 40 noisy labels: one draw's agreement varies by about ±0.06 (binomial, around 0.85), so 0.8 failed one
        # draw in five; 0.7 is well above the majority class (about 0.63) and 2.5 deviations below the mean.
        assert report["result"]["label_agreement_with_truth"] > 0.7
        assert report["result"]["test_metrics"]["accuracy"] > report["baselines"]["majority_class_rate"]
        for protocol, path in reports.items():
            stated = json.loads(path.read_text())["result"]["test_metrics"]["accuracy"]
            out = tmp_path / f"{protocol}.{'pkl' if protocol == 'du' else 'joblib'}"
            if protocol != "dppp":  # written by its `run --export`
                assert main(["export", "--report", str(path), "--run-dir", str(run_dir), "--out", str(out)]) == 0
                assert "gives the report's accuracy" in capsys.readouterr().out
            assert _exported_accuracy(run_dir, out) == stated, protocol
        # a report from another deployment's data is refused, nothing written
        other = json.loads(reports["pathak"].read_text())
        other["result"]["test_metrics"]["accuracy"] = 0.5
        (tmp_path / "other.json").write_text(json.dumps(other))
        assert main(["export", "--report", str(tmp_path / "other.json"), "--run-dir", str(run_dir),
                     "--out", str(tmp_path / "other.joblib")]) != 0
        assert "is not the report's" in capsys.readouterr().err and not (tmp_path / "other.joblib").exists()
    finally:
        processes.down(run_dir)
