"""`mpdp.deploy`: the notebook example in docs/data-and-metrics.md runs as written, returns the CLI's report and
leaves no process behind."""

import re
from pathlib import Path

import pytest

import mpdp
from launcher.deployment import processes

pytestmark = pytest.mark.slow
DOC = Path(__file__).resolve().parent.parent / "docs" / "data-and-metrics.md"


def test_the_documented_example_runs_and_stops_every_process(capsys):
    block = re.search(r"## From a notebook.*?```python\n(.*?)```", DOC.read_text(), flags=re.S).group(1)
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    report = namespace["report"]
    assert isinstance(report, mpdp.Report) and report.protocol == "du"
    assert {"same_model", "tuned", "majority_class_rate"} <= set(report.baselines)
    assert isinstance(report.warnings, list) and "noise_check" in report
    assert "tuned baseline" in capsys.readouterr().out
    run_dir = str(namespace["deployment"].run_dir)
    assert not [command for command in processes.running_servers() if run_dir in command]  # all stopped


def test_an_unknown_option_is_refused_before_anything_starts():
    deployment = mpdp.Deployment(Path("/nonexistent"), None)
    with pytest.raises(ValueError, match="du has no option wings"):
        deployment.run("du", wings=2)
    with pytest.raises(ValueError, match="at least 2 parties"):
        with mpdp.deploy(parties=1):
            pass
