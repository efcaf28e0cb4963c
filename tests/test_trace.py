"""`mpdp trace`: a session's sequence chart has one arrow per message of its traffic report, in order."""

import json
import re

import pytest

from launcher.cli import main
from launcher.commands import trace


def _arrows(text: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^\s+(\w+)-(?:>>|x)(\w+): (\w+) \(\d+ B\)$", text, flags=re.MULTILINE)


def _traffic(report: dict) -> list[dict]:
    return report.get("evaluator_view", {}).get("traffic", report.get("traffic"))


@pytest.mark.parametrize("protocol", ["pathak", "dppp"])
def test_a_charts_arrows_equal_the_traffic_reports_counts(pool, tmp_path, protocol):
    d = pool.get(3)
    report = d.run_pathak() if protocol == "pathak" else d.run_dppp()
    path = tmp_path / f"{protocol}.json"
    path.write_text(json.dumps(report))
    assert main(["trace", "--report", str(path), "--format", "png"]) == 0
    text = (tmp_path / f"{protocol}.mmd").read_text()
    arrows = _arrows(text)
    assert len(arrows) == sum(row["messages"] for row in _traffic(report))
    by_pair: dict[tuple[str, str], int] = {}
    for sender, receiver, _ in arrows:
        key = (sender.split("_")[0], receiver.split("_")[0])
        by_pair[key] = by_pair.get(key, 0) + 1
    expected: dict[tuple[str, str], int] = {}
    for row in _traffic(report):
        expected[(row["from"], row["to"])] = expected.get((row["from"], row["to"]), 0) + row["messages"]
    assert by_pair == expected
    assert text.count("rect ") == text.count("    end") >= 2  # stages as boxes
    assert (tmp_path / f"{protocol}.png").stat().st_size > 10_000
    if protocol == "pathak":  # in the order the protocol runs: keys before Stage 1 before Stage 3
        stages = re.findall(r"Note over \w+,\w+: (.+)$", text, flags=re.MULTILINE)
        assert stages.index("keys and π1 (commit–reveal)") < stages.index("Stage 1: blind, permute, compare") \
            < max(i for i, s in enumerate(stages) if s.startswith("Stage 3"))


def test_a_report_without_a_traffic_log_is_refused():
    with pytest.raises(ValueError, match="no traffic log"):
        trace.messages({"protocol": "pathak"})
