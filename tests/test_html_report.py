"""`mpdp report --html`: a session's page holds the JSON report's figures, fetches nothing, and renders in a real
headless browser (Debian's chromium) with the network off, for a session of each protocol."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.commands import html_report
from launcher.common.summary import delivered_epsilon
from launcher.registry import PROTOCOLS

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "docs" / "results" / "baselines"  # session reports of `mpdp run … --report` on breast cancer
CHROMIUM = shutil.which("chromium")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--proxy-server=127.0.0.1:9"]
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")


class Page(HTMLParser):
    """The figures (`data-figure` → exact JSON value), every fetched address (src, href) and the script tags."""

    def __init__(self, text: str):
        super().__init__()
        self.figures: dict[str, object] = {}
        self.addresses: list[str] = []
        self.scripts = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "data-figure" in attributes:
            self.figures[attributes["data-figure"]] = json.loads(attributes["data-value"])
        self.addresses += [attributes[key] for key in ("src", "href") if attributes.get(key)]
        self.scripts += tag == "script"


def stored(protocol: str) -> dict:
    return json.loads((STORED / f"breast-cancer_{protocol}.json").read_text())


def check_figures(report: dict, page: Page) -> None:
    """The page's ε asked/delivered, message counts, bytes and accuracies are the report's."""
    asked, delivered, _ = delivered_epsilon(report)
    assert page.figures["protocol"] == report["protocol"]
    assert page.figures["epsilon-asked"] == asked and page.figures.get("epsilon-delivered") == delivered
    traffic = html_report.traffic(report)
    for row in traffic:
        name = f"{row['from']}/{row['to']}/{row['rpc']}"
        assert page.figures[f"messages:{name}"] == row["messages"] and page.figures[f"bytes:{name}"] == row["bytes"]
    assert page.figures["messages-total"] == sum(row["messages"] for row in traffic)
    assert page.figures["bytes-total"] == sum(row["bytes"] for row in traffic)
    for key, value in report["result"]["test_metrics"].items():
        if key in ("accuracy", "balanced_accuracy", "auc"):
            assert page.figures[f"result-{key}"] == value
    assert page.figures["baseline1-accuracy"] == report["baselines"]["majority_class_rate"]
    detail = report.get("traffic_detail", report.get("evaluator_view", {}).get("traffic_detail"))
    assert page.figures["chart-messages"] == len(detail)


def self_contained(page: Page) -> None:
    assert page.scripts == 0 and page.addresses and all(address.startswith("data:") for address in page.addresses)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_the_page_holds_the_reports_figures_and_fetches_nothing(protocol, tmp_path):
    report = stored(protocol)
    page = Page(html_report.render(report, "test"))
    check_figures(report, page)
    self_contained(page)
    closed = PROTOCOLS[protocol].closed_form(report)  # a session without faults: its traffic is the closed form
    assert {(r["from"], r["to"], r["rpc"]): r["messages"] for r in html_report.traffic(report)} == closed


def test_a_row_the_closed_form_does_not_predict_is_marked():
    report = stored("dppp")
    report["traffic"] = [dict(row, messages=row["messages"] + 1) if row["rpc"] == "Step/dppp/votes" else row
                         for row in report["traffic"]]
    text = html_report.render(report, "test")
    assert text.count("DIFFERS") == 2  # the row and the note that explains the mark


def _browse(page_path: Path, tmp_path: Path, *output: str) -> tuple[str, set[str]]:
    """Chromium on the page (in a network namespace of its own where this machine allows one): what it printed
    and the hosts of every request its network log holds."""
    profile, log = tmp_path / "profile", tmp_path / "net-log.json"
    isolate = ["unshare", "--net"] if shutil.which("unshare") and subprocess.run(
        ["unshare", "--net", "true"], capture_output=True).returncode == 0 else []
    done = subprocess.run([*isolate, CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", f"--log-net-log={log}",
                           *output, page_path.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    hosts = set(re.findall(r'"url":"[a-z-]+://([^/"]*)', log.read_text())) if log.exists() else set()
    return done.stdout, hosts


@pytest.fixture(scope="module")
def browser_own_hosts(tmp_path_factory) -> set[str]:
    """The hosts Chromium asks for by itself on an empty page (its clock, its start page): none is the page's."""
    if CHROMIUM is None:
        return set()
    directory = tmp_path_factory.mktemp("blank")
    blank = directory / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>")
    return _browse(blank, directory, "--dump-dom")[1]


def check_in_browser(report: dict, page_path: Path, tmp_path: Path, own_hosts: set[str]) -> None:
    dom, hosts = _browse(page_path, tmp_path / "dom", "--dump-dom")
    assert hosts <= own_hosts, f"the page made requests: {hosts - own_hosts}"
    page = Page(dom)
    check_figures(report, page)
    self_contained(page)
    picture = tmp_path / "page.png"
    _browse(page_path, tmp_path / "shot", f"--screenshot={picture}", "--window-size=1200,2400")
    import matplotlib.image

    pixels = matplotlib.image.imread(picture)
    assert pixels.shape[:2] == (2400, 1200) and pixels.std() > 0.05  # drawn: tables, chart and plot, not blank


@pytest.mark.network  # starts a browser (no role process)
@needs_browser
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_stored_session_page_renders_in_a_headless_browser_with_the_network_off(protocol, tmp_path,
                                                                                    browser_own_hosts):
    report_path = tmp_path / f"{protocol}.json"
    report_path.write_text((STORED / f"breast-cancer_{protocol}.json").read_text())
    assert main(["report", "--html", str(report_path)]) == 0
    check_in_browser(stored(protocol), report_path.with_suffix(".html"), tmp_path, browser_own_hosts)


@pytest.mark.slow  # a session with its baselines, then the browser
@needs_browser
def test_run_writes_the_page_of_the_session_it_ran(pool, tmp_path, browser_own_hosts):
    d = pool.get(3)
    report_path, page_path = tmp_path / "dppp.json", tmp_path / "dppp.html"
    assert main(["run", "dppp", "--run-dir", str(d.run.path), "--queries", "6", "--report", str(report_path),
                 "--html", str(page_path)]) == 0
    report = json.loads(report_path.read_text())
    text = page_path.read_text()
    assert report["session_id"] in text and "What one malicious party could move" in text
    assert all(html.escape(warning) in text for warning in report["warnings"])
    check_in_browser(report, page_path, tmp_path, browser_own_hosts)
