"""The check before any budget is spent (launcher/common/spend_gate.py): a run whose same model non-private cannot rank
the test rows, or whose noise decides the result, stops before any role is contacted — the ledgers are
unchanged — naming the cause and a command that fixes it; `--anyway` runs it; a label the protocol cannot take
is refused in one line."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from launcher.cli import build_parser
from launcher.common import session_report, spend_gate
from launcher.deployment.processes import split_data
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.privacy.ledger import Ledger, provision

PARTIES = 5


def _deployment(tmp_path: Path, dataset: datasets.Dataset, parties: int = PARTIES):
    """The evaluator's view of a deployment `up` started here: the party data files (each with its ledger) and the
    client data."""
    split, client_data = split_data(dataset, parties, 0, "even", None)
    entries = []
    for number, (features, labels) in enumerate(split.teacher_parts, start=1):
        path = tmp_path / f"party_{number}.npz"
        datasets.save_part(path, features, labels, dataset.classes)
        provision(path, number)
        entries.append(SimpleNamespace(data=path, identity=SimpleNamespace(id=number)))
    return SimpleNamespace(parties=entries, colluding=1), client_data


def _args(protocol: str, *options: str) -> argparse.Namespace:
    return build_parser("run").parse_args(["run", protocol, "--run-dir", "run", *options])


class _Spends:
    """A protocol entry whose session would spend: the gate must stop before it is called."""

    def __init__(self, protocol):
        self.entry, self.calls = protocol, 0

    def __getattr__(self, name):
        return getattr(self.entry, name)

    def run(self, args, topology, client_data):
        self.calls += 1
        raise AssertionError("the session ran")


def _ledgers(topology) -> list:
    return [Ledger(entry.data, entry.identity.id).entries() for entry in topology.parties]


def _cornered(path: Path, rows: int = 3000) -> Path:
    """A LIBSVM table (values as published, uncentred) with 5 % positives: the signal column sits near 0.8 with a
    small spread, a noise column near 0.45. A strong λ leaves every weight an intercept's proxy, which inverts
    the signal column; a weak one ranks the rows."""
    rng = np.random.default_rng(1)
    signal = rng.normal(size=rows)
    labels = (signal + 0.5 * rng.logistic(size=rows) > 2.2).astype(int)
    first, second = 0.8 + 0.05 * signal, 0.4 + 0.1 * rng.random(rows)
    path.write_text("".join(f"{y} 1:{a:.5f} 2:{b:.5f}\n" for y, a, b in zip(labels, first, second)))
    return path


def test_a_run_whose_same_model_cannot_rank_stops_before_spending_and_names_the_fix(tmp_path):
    topology, client_data = _deployment(tmp_path, datasets.load(str(_cornered(tmp_path / "t.svm")), intercept=True))
    before = _ledgers(topology)
    protocol = _Spends(PROTOCOLS["pathak"])
    args = _args("pathak", "--lambda", "1")
    with pytest.raises(spend_gate.Stopped) as stopped:
        session_report.run(protocol, args, topology, client_data)
    line = str(stopped.value)
    assert protocol.calls == 0 and _ledgers(topology) == before
    assert "λ = 1:" in line and "class balance" in line and "Nothing was spent" in line and "\n" not in line
    command = line.split("fix: `")[1].split("`")[0]  # the fix is a command that runs: the gate lets it through
    fixed = build_parser("run").parse_args(shlex.split(command)[1:])
    assert fixed.regularization < 1
    assert spend_gate.check(protocol, fixed, topology, client_data, {"warnings": []})["verdict"] == "runs"


def test_objective_perturbation_is_checked_and_anyway_runs_it(tmp_path):
    topology, client_data = _deployment(tmp_path, datasets.load("breast-cancer", intercept=True))
    protocol = _Spends(PROTOCOLS["du"])
    with pytest.raises(spend_gate.Stopped, match="noise.*Du objective perturbation.*fix: `mpdp run du"):
        session_report.run(protocol, _args("du", "--method", "objective"), topology, client_data)
    assert protocol.calls == 0
    with pytest.raises(AssertionError, match="the session ran"):  # --anyway: past the gate, into the session
        session_report.run(protocol, _args("du", "--method", "objective", "--anyway"), topology, client_data)


def test_a_label_the_protocol_cannot_take_is_refused_in_one_line(tmp_path):
    from launcher.common import data_report

    digits = datasets.load("digits", intercept=True)
    assert any("du takes two classes, this data set has 10" in line for line in data_report.lines(digits))  # at up
    topology, client_data = _deployment(tmp_path, digits)
    with pytest.raises(spend_gate.Stopped, match=r"du takes labels in \{0, 1\}.*has 10 \(0, 1, 2") as refused:
        session_report.run(_Spends(PROTOCOLS["du"]), _args("du", "--anyway"), topology, client_data)
    assert "\n" not in str(refused.value)


def test_over_real_processes_a_stopped_run_leaves_every_ledger_as_it_was(pool, capsys):
    """`mpdp run pathak` at a λ whose noise decides the result, against running role processes: one line, exit
    2, and every party's ledger (read as `mpdp budget` reads it) holds the same entries as before."""
    from launcher.cli import main
    from launcher.commands import budget

    d = pool.get(3)
    before = [row["entries"] for row in budget.ledgers(d.run.topology)]
    assert main(["run", "pathak", "--run-dir", str(d.run.path), "--lambda", "1e-5"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("mpdp: error: pathak would not learn here: the noise") and "Nothing was spent" in error
    assert "fix: `mpdp run pathak --run-dir" in error
    assert [row["entries"] for row in budget.ledgers(d.run.topology)] == before
