"""What a researcher sees after `mpdp run`: the data split, privacy asked vs delivered, the baselines."""

import json

import pytest

from launcher.cli import main


def test_a_run_report_records_the_split_and_puts_the_result_beside_its_baselines(pool, tmp_path, capsys):
    d = pool.get(3)
    path = tmp_path / "pathak.json"
    # λ = 0.3: at the default 0.01 the noise on 3 parties' ~126 rows decides the result and the run stops
    assert main(["run", "pathak", "--run-dir", str(d.run.path), "--lambda", "0.3", "--report", str(path)]) == 0
    report = json.loads(path.read_text())
    data, baselines = report["data"], report["baselines"]
    assert set(data["labels"]) == {"malignant", "benign"} and isinstance(data["split_seed"], int)
    assert 0.5 < baselines["majority_class_rate"] < 1 and baselines["tuned"]["accuracy"] > 0.85
    assert "λ = 0.3" in baselines["same_model"]["model"] and report["pre_run_check"]["verdict"] == "runs" and isinstance(report["warnings"], list)
    assert {"accuracy", "balanced_accuracy", "auc"} <= set(report["result"]["test_metrics"])
    out = capsys.readouterr().out
    assert "beside its baselines" in out and "privacy asked vs delivered" in out and "labels malignant" in out


@pytest.mark.parametrize("protocol, options", [("pathak", ["--mechanism", "laplace-paper"]),
                                               ("du", ["--method", "ofpa"])])
def test_a_paper_calibration_that_does_not_deliver_the_epsilon_asked_is_refused_unless_allowed(pool, capsys,
                                                                                                protocol, options):
    d = pool.get(3)
    assert main(["run", protocol, "--run-dir", str(d.run.path), *options]) == 2
    error = capsys.readouterr().err
    assert "--allow-paper-calibration" in error and "Traceback" not in error


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    """`mpdp verify R | head -1`: the pipe's reader is gone before the command writes; no traceback, no error
    line, the status of a command ended by SIGPIPE."""
    import subprocess
    import sys
    from pathlib import Path

    stored = Path(__file__).resolve().parent.parent / "docs" / "results" / "baselines" / "a9a_pathak.json"
    command = subprocess.Popen([sys.executable, "-m", "launcher.cli", "verify", str(stored)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    command.stdout.close()  # the reader leaves before the first line is written
    _, errors = command.communicate(timeout=120)
    assert command.returncode == 141 and errors == b""
