"""A researcher's own table: public scaling into the unit ball, credible baselines, metrics that fit imbalanced
data, noise checks before running, and the one-line messages at `up`."""

import json
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

from launcher import cli
from launcher.common import data_report, json_output, noise_check, session_report
from launcher.common import noise as common_noise
from launcher.common.summary import context_lines, warnings
from mpdp.learning import datasets, evaluation, scaling
from tests import synthetic_table


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = tmp_path_factory.mktemp("table")
    return synthetic_table.write(root / "table.csv"), synthetic_table.write_schema(root / "schema.json")


def test_every_row_lies_in_the_unit_ball_and_is_scaled_without_the_other_rows(table):
    path, schema = table
    data = datasets.load(str(path), label="y", schema=str(schema), intercept=True)
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12)
    # the intercept is a constant feature inside the ball, counted as one block of the m + 1
    assert np.allclose(data.features[:, -1], 1 / np.sqrt(6 + 1))
    report = data.scaling
    assert report["rows"] == 3000 and report["columns"] == 6 and report["median_row_norm"] > 0.5
    assert report["column_rules"]["income"].startswith("log1p on public bounds [0, 100000]")
    assert "missing indicator" in report["column_rules"]["balance"]
    # a row's features are the same encoded alone: no statistic of other rows (bounds and levels from the schema)
    columns = [scaling.Numeric("income", 0, 1e5, log=True, missing=True), scaling.Categorical("c", ("a", "b"))]
    values = [np.array([50.0, np.nan, 3e6]), ["a", None, "b"]]
    together = scaling.into_unit_ball(columns, values, intercept=True).features
    alone = scaling.into_unit_ball(columns, [values[0][1:2], values[1][1:2]], intercept=True).features
    assert np.allclose(together[1], alone[0])
    assert together[1, 1] == pytest.approx(1 / np.sqrt(3))  # missing: value 0, indicator 1
    assert together[2, 0] == pytest.approx(1 / np.sqrt(3))  # 3e6 clipped to the public bound 1e5 → +1


def test_a_schema_whose_blocks_exceed_one_is_clipped_row_by_row_and_counted():
    wide = scaling.Categorical("c", ("a", "b"))
    values = [["a", "b", "a"]]
    result = scaling.into_unit_ball([wide], values, intercept=False)
    assert result.report["rows_clipped_share"] == 0.0
    stretched = scaling.Numeric("x", 0, 1)
    # a block norm ≤ 1 by construction; the guard still holds for any input
    assert np.all(np.linalg.norm(scaling.into_unit_ball([stretched], [np.array([-5.0, 0.5, 9.0])], True).features,
                                 axis=1) <= 1 + 1e-12)


def test_bundled_breast_cancer_uses_its_published_bounds():
    data = datasets.load("breast-cancer", intercept=True)
    assert data.scaling["schema"] == "the bounds published in the data set's description"
    assert data.scaling["column_rules"]["mean radius"] == "linear on public bounds [6.981, 28.11]"
    assert 0.5 < data.scaling["median_row_norm"] <= 1 and data.intercept


def test_the_tuned_baseline_is_within_a_point_of_scikit_learns_own_tuned_pipeline(table):
    """The tuned baseline on the public scaling against one-hot + standardise + LogisticRegressionCV on the raw
    CSV, both on the same training and test rows."""
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    path, schema = table
    data = datasets.load(str(path), label="y", schema=str(schema), intercept=True)
    order = np.random.default_rng(5).permutation(len(data.labels))
    train, test = order[:2000], order[2000:]
    ours = evaluation.tuned(data.features[train], data.labels[train])
    ours_accuracy = float(np.mean(ours.predict(data.features[test]) == data.labels[test]))

    frame = pd.read_csv(path)
    labels = (frame.pop("y") == "yes").to_numpy(dtype=int)
    numeric, categorical = ["income", "balance", "age", "visits"], ["region", "channel"]
    pipeline = make_pipeline(
        make_column_transformer(
            (make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
            (make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")),
             categorical)),
        LogisticRegressionCV(Cs=10, max_iter=5000))
    pipeline.fit(frame.iloc[train], labels[train])
    theirs_accuracy = float(np.mean(pipeline.predict(frame.iloc[test]) == labels[test]))
    # within a point or better (the log1p bounds suit the heavy-tailed columns: 91.8 % against 90.5 % here)
    assert ours_accuracy >= theirs_accuracy - 0.01, (ours_accuracy, theirs_accuracy)
    assert ours_accuracy > evaluation.majority_rate(data.labels[test])


def test_baselines_are_on_the_same_test_rows_and_include_same_lambda_and_tuned(tmp_path, table):
    path, schema = table
    data = datasets.load(str(path), label="y", schema=str(schema), intercept=True)
    split = datasets.split_for_teachers(data, 3, np.random.default_rng(1))
    files = []
    for number, (x, y) in enumerate(split.teacher_parts, start=1):
        datasets.save_part(tmp_path / f"p{number}.npz", x, y, 2)
        files.append(tmp_path / f"p{number}.npz")
    client_data = {"test_features": split.test_features, "test_labels": split.test_labels}
    found = evaluation.baselines(files, client_data, regularization=1e-4)
    assert found["test_rows"] == len(split.test_labels)
    assert found["majority_class_rate"] == pytest.approx(np.mean(split.test_labels == 0))
    assert "λ = 0.0001" in found["same_model"]["model"] and "cross-validation" in found["tuned"]["model"]
    assert found["tuned"]["auc"] > 0.85 and found["tuned"]["balanced_accuracy"] > 0.6
    missing = evaluation.baselines([tmp_path / "absent.npz"], client_data, regularization=1e-4)
    assert missing["tuned"].startswith("unavailable")


def _report(metrics, majority=0.88):
    base = {"model": "m", "accuracy": 0.9, "balanced_accuracy": 0.7, "one_class": False, "auc": 0.9}
    return {"result": {"test_metrics": metrics},
            "baselines": {"test_rows": 100, "majority_class_rate": majority, "same_model": base, "tuned": base}}


def test_one_class_is_said_and_every_warning_is_a_field_of_the_report():
    labels = np.array([0] * 88 + [1] * 12)
    scores = np.linspace(-1, 0, 100) - 1  # ranks rows, but every score is below the threshold
    metrics = evaluation.metrics(labels, (scores > 0).astype(int), scores)
    assert metrics["one_class"] and metrics["balanced_accuracy"] == 0.5
    report = _report(metrics)
    report["warnings"] = warnings(report)
    assert any("predicts one class for every row" in w for w in report["warnings"])
    text = "\n".join(context_lines(report))
    assert "balanced accuracy (50 % = chance) and AUC lead" in text
    assert "this release                     balanced accuracy 50.0%" in text
    assert all(f"WARNING: {w}" in text for w in report["warnings"])
    json.dumps(report)  # the warnings travel in the JSON report


def test_a_useful_model_on_balanced_data_leads_with_accuracy_and_warns_nothing():
    report = _report({"accuracy": 0.93, "balanced_accuracy": 0.92, "one_class": False, "auc": 0.97}, majority=0.6)
    assert warnings(report) == []
    assert "this release                     93.0% (balanced 92.0%, AUC 0.970)" in "\n".join(context_lines(report))


def test_repeat_reports_mean_and_std_of_each_metric():
    reports = [{"result": {"test_metrics": {"accuracy": a, "balanced_accuracy": b, "one_class": a == 0.5}}}
               for a, b in ((0.8, 0.7), (0.6, 0.5), (0.5, 0.5))]
    found = session_report.spread(reports)
    assert found["sessions"] == 3 and found["accuracy"]["mean"] == pytest.approx(0.6333, abs=1e-3)
    assert found["accuracy"]["std"] == pytest.approx(np.std([0.8, 0.6, 0.5], ddof=1))
    assert found["one_class_sessions"] == 1


class _Topology:
    def __init__(self, parties):
        self.parties = [None] * parties


def _client_data(sizes, d=31):
    return {"test_features": np.zeros((2, d)), "classes": 2, "party_sizes": np.array(sizes)}


def test_hamm_at_five_parties_and_small_lambda_is_refused_as_unlearnable_with_the_fix():
    args = Namespace(noisy_counts=False, epsilon=1.0, regularization=1e-4, method="soft")
    check = noise_check.estimate("hamm", args, _Topology(5), _client_data([75] * 5))
    assert check["ratio"] > 100 and "raise M" in check["warnings"][0] and "--parties" in check["warnings"][0]
    fine = noise_check.estimate("hamm", Namespace(noisy_counts=False, epsilon=1.0, regularization=0.1,
                                                  method="soft"), _Topology(2000), _client_data([1] * 2000))
    assert fine["ratio"] < 1 and fine["warnings"] == []
    assert noise_check.estimate("hamm", Namespace(noisy_counts=False, epsilon=float("inf"), regularization=1e-4,
                                                  method="soft"), _Topology(5), _client_data([1] * 5)) == \
        {"warnings": []}


def test_hamm_multiclass_compares_the_noise_on_a_class_score_with_the_ln_c_bound():
    """HAR as the paper runs it (M = 1 000, 50 features, 6 classes, λ = 10⁻⁴): the noise on a class score has std
    √(300 + 1)·√2/(Mλ)/ε = 245 at ε = 1 against the largest score √(2 ln 6/λ) = 189, so one draw decides; the M
    the fix names brings it to half the bound."""
    args = Namespace(noisy_counts=False, epsilon=1.0, regularization=1e-4, method="soft")
    har = {"test_features": np.zeros((2, 50)), "classes": 6}
    check = noise_check.estimate("hamm", args, _Topology(1000), har)
    assert check["signal_bound"] == pytest.approx(np.sqrt(2 * np.log(6) / 1e-4)) == pytest.approx(189.3, abs=0.1)
    assert check["noise"] == pytest.approx(np.sqrt(301) * np.sqrt(2) / (1000 * 1e-4)) == pytest.approx(245.4, abs=0.1)
    assert 1 < check["ratio"] < 3 and "one noise draw decides" in check["warnings"][0]
    assert "noise std on a class score" in noise_check.line(check)
    needed = int(check["warnings"][0].split("--parties ")[1].split()[0])
    fixed = noise_check.estimate("hamm", args, _Topology(needed), har)
    assert fixed["ratio"] <= common_noise.TARGET < noise_check.estimate("hamm", args, _Topology(needed - 1), har)["ratio"]
    binary = noise_check.estimate("hamm", args, _Topology(1000), {"test_features": np.zeros((2, 123)), "classes": 2})
    assert binary["noise"] == pytest.approx(222.7, abs=0.1) and binary["signal_bound"] == pytest.approx(117.7, abs=0.1)


def test_pathak_noise_falls_with_the_smallest_party_and_lambda():
    def ratio(sizes, lam):
        args = Namespace(epsilon=1.0, regularization=lam, calibration="tight")
        return noise_check.estimate("pathak", args, _Topology(len(sizes)), _client_data(sizes))["ratio"]

    assert ratio([75] * 5, 0.01) > 1 > ratio([20000] * 5, 0.01)
    assert ratio([1000] * 5, 0.1) < ratio([1000] * 5, 0.01)


def test_a_libsvm_file_with_bad_lines_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "data.txt"
    good = ["+1 1:0.5 3:1", "-1 2:0.25 3:1"] * 50
    good[37] = "-1 2:abc 3:1"
    path.write_text("\n".join(good) + "\n")
    with pytest.raises(ValueError, match=r"data.txt: line 38 is not LIBSVM \('-1 2:abc 3:1'\)"):
        datasets.load(str(path))


def test_one_party_is_refused_in_one_line(capsys):
    assert cli.main(["up", "--parties", "1", "--bits", "1024", "--run-dir", "/nonexistent/never"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["mpdp: error: --parties 1: every protocol needs at least 2 parties (one party is central "
                   "learning)"]


def test_a_copied_topology_without_certs_names_the_missing_file(tmp_path, capsys):
    topology = tmp_path / "topology.toml"
    roles = "".join(f'[[roles]]\nrole = "{role}"\nid = {number}\naddress = "127.0.0.1:{5000 + index}"\n'
                    f'certificate = "certs/{role}{number}.pem"\nkey = "certs/{role}{number}.key"\n'
                    for index, (role, number) in enumerate([("aggregator", 0), ("curator", 0), ("party", 1),
                                                            ("party", 2)]))
    topology.write_text('version = 1\npublic_key = "keys/public.json"\nca_certificate = "certs/ca.pem"\n'
                        'client_certificate = "certs/client.pem"\nclient_key = "certs/client.key"\n' + roles)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "public.json").write_text("{}")
    assert cli.main(["up", "--topology", str(topology)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "certs/ca.pem, which does not exist" in err[0] and "copy the run directory" in err[0]
    assert data_report.missing_topology_files(topology) is not None


def test_format_json_answers_success_or_the_error(capsys):
    assert cli.main(["--format", "json", "compose", "--parties", "2"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["success"] is True and "party" in answer["output"]
    assert cli.main(["up", "--parties", "1", "--format", "json"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"success": False, "error": "--parties 1: every protocol needs at least 2 parties (one party is "
                                                 "central learning)"}
    assert cli.build_parser("run").parse_args(["run", "du", "--format=json"]).format == "json"  # an ordinary option


def test_format_json_answers_a_refusal_and_a_bad_option_as_json(capsys, tmp_path):
    assert cli.main(["run", "dppp", "--run-dir", str(tmp_path / "none"), "--format", "json"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer["success"] is False and answer["error"].startswith("no deployment in ")
    assert cli.main(["run", "dppp", "--epsilon", "many", "--format", "json"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer["success"] is False and "--epsilon" in answer["error"] and "invalid float" in answer["error"]


def test_format_json_is_json_all_the_way_down(capsys, tmp_path):
    import math

    assert json_output.plain({"auc": float("nan"), "budget": math.inf, "w": np.array([1.5, 2.0]), "n": np.int64(3),
                              "path": tmp_path, "pair": (1, 2)}) == \
        {"auc": None, "budget": None, "w": [1.5, 2.0], "n": 3, "path": str(tmp_path), "pair": [1, 2]}
    report = tmp_path / "dppp.json"
    report.write_text((Path(__file__).resolve().parent.parent / "docs/results/baselines/breast-cancer_dppp.json")
                      .read_text())
    assert cli.main(["report", "--html", str(report), "--format", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"success": True, "report": {"page": str(report.with_suffix(".html"))}}


@pytest.mark.parametrize("content", [None, b"garbage", b"PK\x03\x04truncated"])
def test_a_party_file_that_is_not_one_is_named_in_one_line(tmp_path, content):
    """Every check and role reading a part (the Hamm preview, the same-model check, a role's start) names the file."""
    path = tmp_path / "party_3.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=r"party_3\.npz: not a party's data file"):
        datasets.load_part(path)
    good = tmp_path / "party_4.npz"
    datasets.save_part(good, np.eye(2) / 2, np.array([0, 1]), 2)
    features, labels, classes = datasets.load_part(good)
    assert classes == 2 and labels.tolist() == [0, 1] and features.shape == (2, 2)
