"""A scikit-learn RandomForestClassifier as DPPP's teachers over real processes (`mpdp up --teacher`, 1024-bit,
3 parties, breast-cancer): every party process fits its ensemble of forests on its own rows and votes with them; the student
learns from the noisy plurality of the forests' votes."""

import json

import pytest

from launcher.cli import main
from launcher.deployment import processes

pytestmark = [pytest.mark.slow, pytest.mark.network]

FOREST = "sklearn.ensemble:RandomForestClassifier"


def test_random_forest_teachers_vote_in_a_dppp_session(tmp_path, capsys):
    run_dir = tmp_path / "run"
    try:
        assert main(["up", "--parties", "3", "--bits", "1024", "--run-dir", str(run_dir), "--dataset",
                     "breast-cancer", "--seed", "3", "--budget", "inf", "--teacher", FOREST]) == 0
        report_path = tmp_path / "dppp.json"
        assert main(["run", "dppp", "--run-dir", str(run_dir), "--queries", "40",
                     "--epsilon", "8", "--report", str(report_path)]) == 0
        report = json.loads(report_path.read_text())
        assert report["result"]["contributors"] == [1, 2, 3]
        party_logs = [path.read_text(errors="replace") for path in run_dir.rglob("party_*.log")]
        assert len(party_logs) == 3 and all(f"models ({FOREST}) on first use" in log for log in party_logs)
        assert report["result"]["label_agreement_with_truth"] > 0.8
        assert report["result"]["test_metrics"]["accuracy"] > report["baselines"]["majority_class_rate"]
    finally:
        processes.down(run_dir)
