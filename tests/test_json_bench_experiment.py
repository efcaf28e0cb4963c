"""`mpdp bench <protocol>` and `mpdp experiment <protocol>` with `--format json` answer with the figures as JSON
objects all the way down (the report the command computed), not the text it printed wrapped in a string. The
measurement itself is replaced by a fixed report: what is checked is the answer's shape, not the figures."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from launcher import cli

FIGURES = {"ratio": np.float64(1.25), "rows": [{"epsilon": 0.5, "error": np.float32(0.125)}], "auc": float("nan")}

# The report each command's printing reads, beside the figures (kept minimal).
PRINTED = {
    "dppp": {"datasets": []},
    "du": {"plots": ["du.png"]},
    "hamm": {"wire_checks": [], "plot": "hamm.png"},
    "pathak": {"plots": ["pathak.png"], "wire_checks": []},
}
TABLES = {"dppp": [], "du": ["misclassification_table"], "hamm": ["accuracy_table"], "pathak": ["error_table"]}


def _answer(capsys, argv) -> dict:
    code = cli.main(["--format", "json", *argv])
    answer = json.loads(capsys.readouterr().out)
    assert code == 0 and answer["success"] is True
    return answer


@pytest.mark.parametrize("protocol", ["dppp", "du", "hamm", "pathak"])
def test_experiment_answers_its_report(protocol, capsys, monkeypatch, tmp_path):
    module = importlib.import_module(f"launcher.protocols.{protocol}.experiment")
    monkeypatch.setattr(module, "run", lambda *args, **kwargs: {**FIGURES, **PRINTED[protocol]})
    for table in TABLES[protocol]:
        monkeypatch.setattr(module, table, lambda report: "a table")
    answer = _answer(capsys, ["experiment", protocol, "--out", str(tmp_path)])
    assert "output" not in answer
    report = answer["report"]
    assert report["ratio"] == 1.25 and report["rows"] == [{"epsilon": 0.5, "error": 0.125}] and report["auc"] is None


@pytest.mark.parametrize("protocol", ["dppp", "pathak"])
def test_bench_answers_its_figures(protocol, capsys, monkeypatch):
    module = importlib.import_module(f"launcher.protocols.{protocol}.bench")
    monkeypatch.setattr(module, "run", lambda *args, **kwargs: dict(FIGURES))
    monkeypatch.setattr(module, "summary", lambda report: "a summary")
    answer = _answer(capsys, ["bench", protocol, "--bits", "1024"])
    assert "output" not in answer and answer["report"]["rows"][0]["error"] == 0.125
