"""What the protocols' lines of docs/reproduction.md's tables share: number formats, a report's results by data
set, and the claims' verdicts (launcher/commands/experiment_table.py renders the page from every protocol's lines)."""

from __future__ import annotations

from typing import NamedTuple

NOT_STORED = "not stored"


def f(value: float) -> str:
    return f"{value:.3f}"


def g(value: float) -> str:
    return f"{value:g}"


def by_dataset(report: dict | None) -> dict[str, dict]:
    return {result["dataset"]: result for result in (report or {}).get("datasets", [])}


def nearest(points: list[dict], key: str, value: float) -> dict:
    return min(points, key=lambda point: abs(point[key] - value))


# One line per claim: the paper's words in short, a verdict read from the stored JSON, and why. The README
# carries the short reason (it must stay a quickstart); docs/reproduction.md the full one.


class Claim(NamedTuple):
    claim: str  # the paper's, in short
    verdict: str  # "reproduced", "NOT reproduced", "partly reproduced", …
    why: str  # the short reason, for the README ("" when none is needed)
    detail: str  # the full reason, for docs/reproduction.md
    result: str  # the stored figures behind the verdict
    in_readme: bool = True


REPRODUCED, NOT_REPRODUCED, PARTLY = "reproduced", "NOT reproduced", "partly"


def missing(claim: str) -> Claim:
    return Claim(claim, NOT_STORED, "", "", "—")
