"""The skewed table end to end over real processes (one deployment, 1024-bit): every protocol at its defaults
reports its result beside the three baselines on the same test rows, leads with balanced accuracy and AUC,
and carries every warning in its JSON report."""

import json

import pytest

from launcher.cli import main
from launcher.deployment import processes
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED
from tests import synthetic_table

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    root = tmp_path_factory.mktemp("skewed")
    table = synthetic_table.write(root / "table.csv")
    schema = synthetic_table.write_schema(root / "schema.json")
    run_dir = root / "run"
    # three protocols on one data set: more than one party's default budget (mpdp/privacy/ledger.py)
    processes.up(run_dir, 3, 1024, datasets.load(str(table), label="y", schema=str(schema), intercept=True), seed=11,
                 model="logistic", budget=UNLIMITED)
    try:
        yield run_dir
    finally:
        processes.down(run_dir)


@pytest.mark.parametrize("protocol, options", [("dppp", []), ("pathak", []), ("du", [])])
def test_each_protocol_at_its_defaults_reports_beside_its_baselines(skewed, tmp_path, capsys, protocol, options):
    path = tmp_path / f"{protocol}.json"
    assert main(["run", protocol, "--run-dir", str(skewed), "--report", str(path), *options]) == 0
    report = json.loads(path.read_text())
    out = capsys.readouterr().out
    metrics, baselines = report["result"]["test_metrics"], report["baselines"]
    assert baselines["majority_class_rate"] > 0.85
    assert "balanced accuracy (50 % = chance) and AUC lead" in out
    assert "λ" in baselines["same_model"]["model"] or protocol == "dppp"
    # the tuned baseline learns this table; the release is stated beside it on the same rows
    assert baselines["tuned"]["auc"] > 0.85 and baselines["tuned"]["balanced_accuracy"] > 0.6
    assert report["data"]["scaling"]["median_row_norm"] > 0.5
    # every warning printed is in the report, and one class is said when true
    for warning in report["warnings"]:
        assert f"WARNING: {warning}" in out
    assert metrics["one_class"] == any("one class for every row" in w for w in report["warnings"])
    assert "noise_check" in report
    # the privacy noise's spread beside the bootstrap: computed for Pathak (around the release) and Du (reruns
    # on the operator's data), said not computed for DPPP
    spread = metrics["noise_spread"]
    assert "the privacy noise's spread" in out
    if protocol == "dppp":
        assert "vote counts" in spread["unavailable"]
    else:
        assert 0 <= spread["balanced_accuracy"] < 0.5 and spread["draws"] > 1, spread
