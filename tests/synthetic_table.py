"""A seeded table with the traits of a researcher's own data: heavy-tailed numeric columns up to ~1e5, a
many-level categorical column, missing cells and an 88 % majority class."""

from __future__ import annotations

from pathlib import Path

import numpy as np

MAJORITY = 0.88


def write(path: Path, rows: int = 3000, seed: int = 2033) -> Path:
    rng = np.random.default_rng(seed)
    income = np.minimum(rng.lognormal(10.0, 1.0, rows), 1e5)  # heavy-tailed, non-negative
    balance = np.minimum(rng.pareto(1.5, rows) * 2000, 1e5)
    age = rng.integers(18, 90, rows).astype(float)
    visits = rng.poisson(3, rows).astype(float)
    region = rng.integers(0, 40, rows)  # a many-level categorical column
    region_effect = rng.normal(0, 0.8, 40)
    channel = rng.choice(["web", "phone", "branch"], rows, p=[0.5, 0.3, 0.2])
    score = 2 * (1.1 * (np.log1p(income) - 10) + 0.6 * (np.log1p(balance) - 7) - 0.03 * (age - 50)
             + 0.35 * visits + region_effect[region] + np.where(channel == "branch", 0.8, 0.0))
    # the intercept that leaves MAJORITY of the rows in class "no"
    noise = rng.logistic(size=rows)
    cut = np.quantile(score + noise, MAJORITY)
    label = np.where(score + noise > cut, "yes", "no")
    cells = {"income": income, "balance": balance, "age": age, "visits": visits}
    text = {name: [f"{v:.2f}" for v in values] for name, values in cells.items()}
    text["region"] = [f"r{r:02d}" for r in region]
    text["channel"] = list(channel)
    for name in ("income", "balance", "channel"):  # missing cells
        for index in rng.choice(rows, rows // 20, replace=False):
            text[name][index] = ""
    header = [*text, "y"]
    lines = [",".join(header)] + [",".join([*(text[name][i] for name in text), label[i]]) for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


SCHEMA = {"columns": {
    "income": {"type": "numeric", "low": 0, "high": 1e5, "log": True, "missing": True},
    "balance": {"type": "numeric", "low": 0, "high": 1e5, "log": True, "missing": True},
    "age": {"type": "numeric", "low": 18, "high": 100},
    "visits": {"type": "numeric", "low": 0, "high": 20},
    "channel": {"type": "categorical", "levels": ["branch", "phone", "web"], "missing": True},
}}


def write_schema(path: Path) -> Path:
    """The bounds a data owner publishes with the table (region's levels are left to the table)."""
    import json

    path.write_text(json.dumps(SCHEMA))
    return path


RARE_POSITIVES = 0.03


def write_rare(path: Path, rows: int = 10_000, seed: int = 4646) -> Path:
    """A table whose signal sits in one heavy-tailed column, as a researcher's churn table: 3 % positives, `amount`
    log-normal over three orders of magnitude and carrying almost all the signal, two near-constant columns (`rate`
    within 1 % of 1, `version` mostly 3), a categorical column and missing cells."""
    rng = np.random.default_rng(seed)
    amount = np.minimum(rng.lognormal(6.5, 1.0, rows), 1e5)  # heavy-tailed, non-negative
    rate = 1 - rng.exponential(0.002, rows)  # near-constant
    version = np.where(rng.random(rows) < 0.97, 3.0, 4.0)  # near-constant
    plan = rng.choice(["basic", "plus", "pro"], rows, p=[0.6, 0.3, 0.1])
    score = 2.2 * (np.log(amount) - 6.5) + np.where(plan == "pro", 0.4, 0.0)
    noise = rng.logistic(size=rows)
    cut = np.quantile(score + noise, 1 - RARE_POSITIVES)
    label = np.where(score + noise > cut, "churn", "stay")
    text = {"amount": [f"{v:.2f}" for v in amount], "rate": [f"{v:.5f}" for v in rate],
            "version": [f"{v:.0f}" for v in version], "plan": list(plan)}
    for name in ("amount", "plan"):  # missing cells
        for index in rng.choice(rows, rows // 25, replace=False):
            text[name][index] = ""
    header = [*text, "y"]
    lines = [",".join(header)] + [",".join([*(text[name][i] for name in text), label[i]]) for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path
