"""The stored audits' tables in docs/audit.md and docs/results/audit/README.md say what their JSON files say: every
row equals the row formatted from its file, and the README's table lists every stored audit."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUDITS = ROOT / "docs" / "results" / "audit"
PAGES = [ROOT / "docs" / "audit.md", AUDITS / "README.md"]
HEADER = "| file | protocol | mechanism | claimed ε | exact ε | 95 % lower bound | empirical | trials per data set | verdict |"


def row(name: str, report: dict) -> str:
    """One stored audit as the pages' tables show it."""
    noise = report["noise"]
    mechanism = noise["mechanism"] + (f" (broken: {noise['broken']})" if noise.get("broken") else "")
    exact = "∞" if report["exact"]["epsilon"] is None else f"{report['exact']['epsilon']:.3g}"
    empirical = ("EXCEEDS" if report["empirical_exceeds_claim"]
                 else f"inconclusive below {report['resolution_epsilon']:.3g}")
    verdict = "FAIL (exit 1)" if report["exceeds_claim"] else "pass (exit 0)"
    return (f"| `{name}` | {report['protocol']} | {mechanism} | {report['claimed_epsilon']:g} | {exact} | "
            f"{report['epsilon_lower_bound']:.3g} | {empirical} | {report['trials_per_data_set']} | {verdict} |")


def tables(page: Path) -> list[list[str]]:
    """Every table of the page under HEADER: its rows."""
    found, current = [], None
    for line in page.read_text().splitlines():
        if line == HEADER:
            current = []
            found.append(current)
        elif current is not None and line.startswith("| `"):
            current.append(line)
        elif current is not None and not line.startswith("| ---"):
            current = None
    return found


def test_every_audit_table_row_equals_its_json():
    stored = {path.name: json.loads(path.read_text()) for path in AUDITS.glob("*.json")}
    for page in PAGES:
        assert tables(page), f"{page} has no table of stored audits"
        for table in tables(page):
            for line in table:
                name = line.split("`")[1]
                assert name in stored, f"{page.name} lists {name}, which is not stored"
                assert line == row(name, stored[name]), f"{page.name}: {line}"
    listed = {line.split("`")[1] for table in tables(AUDITS / "README.md") for line in table}
    assert listed == set(stored)


def test_a_row_that_disagrees_with_its_json_is_seen(tmp_path):
    page = tmp_path / "page.md"
    report = {"noise": {"mechanism": "binomial"}, "exact": {"epsilon": 0.975}, "protocol": "dppp",
              "claimed_epsilon": 1.0, "epsilon_lower_bound": 0.308, "empirical_exceeds_claim": False,
              "resolution_epsilon": 1.05, "exceeds_claim": False, "trials_per_data_set": 20000}
    page.write_text(f"{HEADER}\n| --- |\n{row('a.json', report)}\n")
    assert tables(page) == [[row("a.json", report)]]
    assert row("a.json", {**report, "exceeds_claim": True}) != tables(page)[0][0]
