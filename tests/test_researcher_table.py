"""A researcher's public table at the defaults (docs/data-and-metrics.md, "On a9a at the defaults"): a 0/1 CSV
column is an indicator, not a heavy-tailed number; Du at its defaults charges no δ, so it still fits a default
budget after another protocol's session; a refusal's one line says where to look. The a9a tests run where
$MPDP_DATA_DIR holds a9a and skip elsewhere."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import grpc
import numpy as np
import pytest

from launcher.cli import _user_error
from launcher.protocols.du import commands as du_commands
from mpdp.learning import datasets
from mpdp.learning import scaling as public
from mpdp.privacy.composition import Guarantee
from mpdp.privacy.ledger import Ledger, provision
from mpdp.protocols.du import accounting
from mpdp.protocols.du.parameters import DuParameters
from party.resources import REFUSED

A9A_DIR = os.environ.get(datasets.DATA_DIR_ENV, "")


def _du_defaults(dimension: int = 124) -> DuParameters:
    parser = argparse.ArgumentParser()
    for option in du_commands.session_options():
        option.add_to(parser)
    args = parser.parse_args([])
    return DuParameters(args.method, args.epsilon, args.delta, args.rounds, args.tolerance, args.local_epochs,
                        args.learning_rate, args.regularization, 5, dimension, args.bound, True, 2 / 3, bytes(32),
                        args.batch_size)


def _one_hot_table(path: Path, rows: int = 400, seed: int = 5) -> Path:
    """Two one-hot groups as 0/1 columns (as a LIBSVM set written out as CSV), one 0/1 column with gaps and a
    count; the label follows the first group."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, rows)
    other = rng.integers(0, 4, rows)
    lines = ["a0,a1,a2,b0,b1,b2,b3,flag,count,y"]
    for g, o in zip(group, other):
        flag = "" if rng.random() < 0.1 else str(int(rng.random() < 0.5))
        lines.append(",".join([*(str(int(g == k)) for k in range(3)), *(str(int(o == k)) for k in range(4)), flag,
                               str(int(rng.integers(0, 1000))), "yes" if g == 0 else "no"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_zero_one_csv_column_is_an_indicator_on_its_types_bounds(tmp_path):
    # 4 000 rows: at the statistics' default ε each kept bin needs a few hundred rows (private_statistics.py)
    data = datasets.load(str(_one_hot_table(tmp_path / "t.csv", rows=4000)), label="y", intercept=True)
    rules = data.scaling["column_rules"]
    assert rules["a0"].startswith("linear on an indicator's bounds [0, 1]")
    assert rules["flag"] == "linear on an indicator's bounds [0, 1], missing indicator"  # gaps keep it an indicator
    assert rules["count"].startswith("linear on the table's")  # a uniform count: linear, centred on its median
    # 8 of 9 column blocks are ±1 (the gaps' 0 and indicator 1): the rows keep most of the unit ball, where a
    # log scale would keep a 0/1 column at 0.05 of its block
    assert data.scaling["median_row_norm"] > 0.9
    first = data.features[:, 0]  # a0, the first column
    assert set(np.round(first * np.sqrt(10), 9)) == {-1.0, 1.0}
    schema = data.scaling["schema_document"]["columns"]["a0"]
    assert (schema["low"], schema["high"]) == (0.0, 1.0)  # the schema to publish says so


def test_a_row_is_encoded_alone_as_in_the_table(tmp_path):
    column = public.Numeric("a", 0.0, 1.0, indicator=True)
    assert np.array_equal(column.encode(np.array([1.0])), column.encode(np.array([0.0, 1.0]))[1:])


def test_du_at_its_defaults_asks_pure_epsilon_and_fits_after_pathak(tmp_path):
    at_defaults = accounting.guarantee(_du_defaults())
    assert at_defaults.delta == 0.0  # the exact composition would save 5e-5 of ε for the whole budget's δ
    data_file = tmp_path / "party_1.npz"
    data_file.write_bytes(b"rows")
    provision(data_file, 1)
    ledger = Ledger(data_file, 1)  # the default budget
    ledger.spend("pathak-session", "pathak", Guarantee(1.0, 9.1e-13, "pathak l2-laplace"))
    ledger.spend("du-session", "du", at_defaults)
    assert [entry["session"] for entry in ledger.entries()] == ["pathak-session", "du-session"]


def test_du_still_charges_delta_where_the_exact_composition_saves_epsilon():
    defaults = _du_defaults()
    many = DuParameters(defaults.method, 0.1, defaults.delta, 50, defaults.tolerance, defaults.local_epochs,
                        defaults.learning_rate, defaults.regularization, 5, 124, defaults.bound, True, 2 / 3,
                        bytes(32), defaults.batch_size)
    charged = accounting.guarantee(many)
    assert charged.delta == defaults.delta and charged.epsilon is not None and charged.epsilon < 0.6 * 50 * 0.1


class _Refused(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.ABORTED

    def details(self):
        return f"session a1f0 aborted: round 0: 0 uploads, 4 needed (parties 1, 2: PERMISSION_DENIED: {REFUSED})"


def test_a_refusal_says_where_its_reason_is():
    line = _user_error(_Refused())
    assert line is not None and "`mpdp budget`" in line and "its log says why" in line


@pytest.mark.slow
@pytest.mark.skipif(not A9A_DIR, reason="a9a is not shipped: set $MPDP_DATA_DIR to a directory holding it")
@pytest.mark.parametrize("source", ["libsvm", "csv"])
def test_pathak_and_du_at_their_defaults_learn_a9a(tmp_path, source):
    from tests.test_useful_on_skewed_table import du_release, pathak_release

    if source == "libsvm":
        data = datasets.load("a9a", data_dir=A9A_DIR, intercept=True)
    else:  # the same table as a CSV of 0/1 columns and a named label, no schema
        from sklearn.datasets import load_svmlight_files

        directory = Path(A9A_DIR) / "a9a" if (Path(A9A_DIR) / "a9a" / "a9a").exists() else Path(A9A_DIR)
        xa, ya, xt, yt = load_svmlight_files([str(directory / "a9a"), str(directory / "a9a.t")], n_features=123)
        x = np.vstack([xa.toarray(), xt.toarray()]).astype(int)
        labels = np.where(np.concatenate([ya, yt]) > 0, ">50K", "<=50K")
        path = tmp_path / "adult.csv"
        with path.open("w") as handle:
            handle.write(",".join([f"f{j}" for j in range(1, 124)] + ["income"]) + "\n")
            for row, label in zip(x, labels):
                handle.write(",".join(map(str, row)) + f",{label}\n")
        data = datasets.load(str(path), label="income", intercept=True)
    split = datasets.split_for_teachers(data, 5, np.random.default_rng(0))
    for release in (pathak_release, du_release):
        found = release(split, 0)
        assert found["auc"] > 0.8, (release.__name__, found)
        assert found["balanced_accuracy"] > 0.7, (release.__name__, found)


def test_up_says_when_clipping_scaled_most_rows(tmp_path):
    from launcher.common import data_report

    path = tmp_path / "binary.libsvm"
    path.write_text("".join(f"{k % 2} 1:1 2:1 {3 + k % 3}:1\n" for k in range(12)))
    lines = data_report.lines(datasets.load(str(path), intercept=True))
    assert "rows clipped to the unit ball: 100.0%" in "\n".join(lines)
    assert any(line.strip().startswith("most rows were longer than the ball") for line in lines)
    kept = data_report.lines(datasets.load(str(_one_hot_table(tmp_path / "t.csv")), label="y", intercept=True))
    assert not any("most rows were longer" in line for line in kept)


def test_rows_at_norm_one_by_construction_are_not_counted_clipped(tmp_path):
    path = tmp_path / "ones.csv"
    path.write_text("a,b,c,y\n" + "".join(f"{k % 2},{(k // 2) % 2},1,{k % 3 == 0}\n" for k in range(30)))
    schema = tmp_path / "schema.json"  # 30 rows are too few for private statistics: the bounds are public
    schema.write_text('{"columns": {' + ", ".join(f'"{c}": {{"type": "numeric", "low": 0, "high": 1}}' for c in "abc")
                      + "}}")
    data = datasets.load(str(path), label="y", intercept=True, schema=str(schema))
    assert data.scaling["rows_clipped_share"] == 0.0 and data.scaling["median_row_norm"] == pytest.approx(1.0)
    assert np.linalg.norm(data.features, axis=1).max() <= 1.0


@pytest.mark.slow
@pytest.mark.skipif(not A9A_DIR, reason="a9a is not shipped: set $MPDP_DATA_DIR to a directory holding it")
def test_the_tuned_baseline_is_within_a_point_of_scikit_learns_own_pipeline():
    """evaluation.tuned on the unit-ball features against StandardScaler + LogisticRegressionCV on the raw
    features, on the same training and test rows (the split `split_for_teachers` makes)."""
    from sklearn.datasets import load_svmlight_files
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mpdp.learning import evaluation

    data = datasets.load("a9a", data_dir=A9A_DIR, intercept=True)
    directory = Path(A9A_DIR) / "a9a" if (Path(A9A_DIR) / "a9a" / "a9a").exists() else Path(A9A_DIR)
    xa, ya, xt, yt = load_svmlight_files([str(directory / "a9a"), str(directory / "a9a.t")], n_features=123)
    raw = np.vstack([xa.toarray(), xt.toarray()])
    order = np.random.default_rng(0).permutation(len(data.labels))
    cut = int(round(2 / 3 * len(order)))
    train, test = order[:cut], np.array_split(order[cut:], 2)[1]
    y = data.labels
    ours = evaluation.tuned(data.features[train], y[train])
    theirs = make_pipeline(StandardScaler(), LogisticRegressionCV(Cs=20, cv=5, max_iter=5000)).fit(raw[train], y[train])
    for metric in (lambda m, x: accuracy_score(y[test], m.predict(x[test])),
                   lambda m, x: roc_auc_score(y[test], m.decision_function(x[test]))):
        assert metric(ours, data.features) > metric(theirs, raw) - 0.01


@pytest.mark.parametrize("secure", [True, False], ids=["secure aggregation", "in the clear (the default)"])
def test_a_du_round_short_of_uploads_names_the_parties_refusals(threshold_key, secure):
    from aggregator.du import DuServerSide
    from mpdp.proto.v1 import du_pb2
    from mpdp.sessions.errors import ProtocolError
    from mpdp.sessions.identity import CLIENT, party
    from tests.test_du_sessions import HOLDERS, _parameters

    public, _ = threshold_key
    server = DuServerSide("refused", _parameters(public, secure=secure), 30.0, 0, public, HOLDERS, HOLDERS)
    server.receive(CLIENT, "open", du_pb2.DuOpen())
    for number in HOLDERS[:-1]:
        server.on_undeliverable(party(number), "model", f"PERMISSION_DENIED: {REFUSED}")
    with pytest.raises(ProtocolError, match=r"0 uploads, 4 needed \(parties 1, 2, 3, 4, 5: PERMISSION_DENIED: refused"):
        server.on_undeliverable(party(5), "model", f"PERMISSION_DENIED: {REFUSED}")
