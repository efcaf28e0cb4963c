"""Pathak–Rane–Raj's lines of docs/reproduction.md's tables (`mpdp experiment table`), read from its stored report."""

from __future__ import annotations

from launcher.common.results import NOT_REPRODUCED, NOT_STORED, REPRODUCED, Claim, f, g, missing
from launcher.protocol import ResultsTable


def _pathak_row(report: dict, regularization: float, mechanism: str, calibration: str, epsilon: float) -> dict | None:
    for row in report["results"]:
        if (row["lambda"], row["mechanism"], row["calibration"], row["epsilon"]) == (regularization, mechanism,
                                                                                   calibration, epsilon):
            return row
    return None


def _pathak_lines(report: dict | None) -> list[list[str]]:
    paper = "Pathak–Rane–Raj 2010"
    if report is None:
        return [[paper, "Fig. 2: test error vs ε, K = 5, splits even / 15 % / 10 %", NOT_STORED, "", "", ""]]
    epsilons = report["epsilons"]
    at = _pathak_row(report, 0.001, "laplace-paper", "paper", 1.0)
    result = (f"λ = 0.001, ε = 1, the paper's Laplace: ŵˢ even {f(at['splits']['even']['mean'])}, w* "
              f"{f(at['w_star'])}, majority class {f(report['majority_error'])}") if at else "—"
    real = _pathak_row(report, 1.0, "laplace-paper", "paper", 1.0) or report["results"][0]
    return [
        [paper, "Fig. 2: test error vs ε, K = 5, splits even / 15 % / 10 %",
         f"a9a (same data), {report['runs']} runs per point, ε {g(min(epsilons))} – {g(max(epsilons))} "
         f"({len(epsilons)} values), every mechanism and calibration",
         "λ = 0.001 added: at λ = 1 w* answers the majority class everywhere", "—", result],
        [paper, "the ε the paper's mechanism really gives", "panel titles of both figures", "—", "—",
         f"claimed ε = {g(real['epsilon'])}: really {f(real['splits']['even']['epsilon_effective'])}"],
    ]


def _pathak_measured(report: dict) -> str:
    rows = ["| λ | mechanism, calibration | ε | ŵˢ even | ŵˢ 15 % | ŵˢ 10 % | w* + η | w* | majority class |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in report["results"]:
        if row["epsilon"] in (0.1, 1.0) and (row["mechanism"], row["calibration"]) in (
                ("gaussian", "tight"), ("laplace-paper", "paper")):
            rows.append(f"| {g(row['lambda'])} | {row['mechanism']}, {row['calibration']} | {g(row['epsilon'])} | "
                        + " | ".join(f(row["splits"][split]["mean"]) for split in ("even", "15", "10"))
                        + f" | {f(row['w_star_plus_eta']['mean'])} | {f(row['w_star'])} | "
                          f"{f(report['majority_error'])} |")
    return f"Test error, {report['runs']} runs per point:\n\n" + "\n".join(rows)


def _pathak_claims(report: dict | None) -> list[Claim]:
    claim = "error falls to w*'s as ε grows (Fig. 2)"
    if report is None:
        return [missing(claim)]
    majority = report["majority_error"]
    at_one = [row for row in report["results"] if row["lambda"] == 1.0]
    # w*, the best any ŵˢ can approach, answering the majority class: no private curve can show anything.
    degenerate = bool(at_one) and all(abs(row["w_star"] - majority) < 5e-4 for row in at_one)
    at = _pathak_row(report, 0.001, "laplace-paper", "paper", 1.0)
    low = _pathak_row(report, 0.001, "laplace-paper", "paper", min(report["epsilons"]))
    lines = []
    if at and low:
        even, fifteen, ten = (at["splits"][split]["mean"] for split in ("even", "15", "10"))
        holds = low["splits"]["even"]["mean"] > even and even <= fifteen <= ten
        lines.append(Claim(
            claim, f"{REPRODUCED if holds else NOT_REPRODUCED} only at λ = 0.001",
            "at the paper's λ = 1, w* is the majority class" if degenerate else "",
            (f"the paper's own λ = 1 is degenerate: on unit-norm rows ‖w*‖ ≤ 1/λ = 1 and w* answers the majority "
             f"class (error {f(majority)}), so no curve can fall toward it" if degenerate else ""),
            f"ε = 1: ŵˢ {f(even)}, w* {f(at['w_star'])}"))
    real = _pathak_row(report, 1.0, "laplace-paper", "paper", 1.0) or report["results"][0]
    lines.append(Claim(
        "ε-DP with i.i.d. Laplace noise", NOT_REPRODUCED, "",
        "the noise is scaled to an L2 sensitivity, so a change along many coordinates costs more than ε "
        "([audit.md](audit.md))",
        f"ε = {g(real['epsilon'])} is really {f(real['splits']['even']['epsilon_effective'])}"))
    return lines


TABLE = ResultsTable(paper="Pathak–Rane–Raj 2010", short="Pathak", title="Pathak–Rane–Raj", position=0,
                     data="a9a (the paper's)",
                     lines=_pathak_lines, measured=_pathak_measured, claims=_pathak_claims)
