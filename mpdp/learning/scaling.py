"""Rows into the unit ball from public per-column bounds, each row on its own (privacy.md: every sensitivity
assumes ‖x‖₂ ≤ 1).

Every column is mapped into [−1, 1], centred: a column sitting in one corner of its range is near-constant and
stands in for the intercept — the penalty pushes the intercept's weight onto it, and its own signal is lost or
inverted. The rules:
- numeric with public bounds [low, high] (a schema): clipped to them, then linear, or log1p for a heavy-tailed
  column (`"log": true`), onto [−1, 1]; with `"centre": c`, c maps to 0 and the farther bound to ±1;
- numeric without a schema entry, by what the column is, from statistics released under differential privacy
  (mpdp/learning/private_statistics.py): 0/1 values only an indicator on [0, 1]; non-negative and heavy-tailed
  log1p between its 1st and 99th percentiles as 1, 2, 5 × 10^k bin edges; otherwise linear between finer
  percentiles — each centred on its private mean on that scale, so it cannot stand in for the intercept;
- numeric under the type's default (a schema entry without bounds): sign(x)·log1p(|x|)/log1p(10^6);
- categorical: one-hot minus each level's share (released under DP, levels under a threshold dropped; a schema's
  `shares`, or 1/L), × 1/√2, so the commonest level is not a second intercept; a cell outside the levels is the
  row of minus the shares;
- a missing cell: the column's centre (0) and a missing-indicator feature (1/√2 in a categorical block).
Each of the m columns' blocks then has norm ≤ 1; with the intercept (a constant feature) counted as one more
block, every block is multiplied by 1/√(m + 1) (1/√m without it), so every row has norm ≤ 1 by construction:
the intercept sits inside the unit ball and no sensitivity changes. The intercept's weight is penalised like
every other; with every column centred no column can carry it instead, so a shrunk intercept moves the scores
together (the cut, chosen on the public rows, absorbs it) and not the ranking. A row is still clipped to norm 1
on its own as a guard; the share of clipped rows is reported.

What a column without a schema entry takes from the table -- its kind, bounds, centre, levels, shares and whether
it has gaps -- is released under (ε, δ)-DP (default ε = 1, δ = 10⁻⁶) and charged to every party's ledger at `up`
(mpdp/learning/private_statistics.py). `up` writes the result as a schema for the data owner to publish or
replace (--schema); a column with a schema entry is read for nothing but its cells.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TAIL = 0.01  # a column read from the table spans its 1st to 99th percentile: a few outliers do not squeeze the rest
DEFAULT_MAGNITUDE = 1e6  # the public range of a numeric column without bounds: |x| ≤ 10^6 on a log scale
_DEFAULT_DIVISOR = math.log1p(DEFAULT_MAGNITUDE)


@dataclass(frozen=True)
class Numeric:
    name: str
    low: float | None = None  # public bounds of the raw value; None: the type's default
    high: float | None = None
    log: bool = False  # log1p between the bounds (heavy-tailed non-negative columns)
    missing: bool = False  # a missing-indicator feature
    indicator: bool = False  # a 0/1 column without a schema entry: [0, 1] are its type's bounds
    from_table: bool = False  # bounds released from the table under DP (mpdp/learning/private_statistics.py)
    centre: float | None = None  # the raw value mapped to 0 (the column's typical value); None: the bounds' middle

    def __post_init__(self):
        if (self.low is None) != (self.high is None):
            raise ValueError(f"column {self.name!r}: give both bounds or neither")
        if self.low is not None and not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"column {self.name!r}: bounds must be finite with low < high")

    def describe(self) -> str:
        if self.low is None:
            rule = f"sign·log1p(|x|)/log1p({DEFAULT_MAGNITUDE:g}) (no public bounds given)"
        else:
            source = ("an indicator's" if self.indicator else "the table's (released under DP; publish them or "
                      "give a schema)" if self.from_table else "public")
            rule = f"{'log1p' if self.log else 'linear'} on {source} bounds [{self.low:g}, {self.high:g}]"
            if self.centre is not None:
                rule += f" centred at {self.centre:g}"
        return rule + (", missing indicator" if self.missing else "")

    def encode(self, values: np.ndarray) -> np.ndarray:
        """(rows, 1 or 2): the value in [−1, 1] (0 where missing) and the missing indicator."""
        values = np.asarray(values, dtype=float)
        absent = np.isnan(values)
        present = np.where(absent, 0.0, values)
        if self.low is None:
            mapped = np.sign(present) * np.log1p(np.abs(present)) / _DEFAULT_DIVISOR
        else:
            assert self.high is not None
            clipped = np.clip(present, self.low, self.high)
            mapped = self._centred(clipped) if self.centre is not None else 2 * self._unit(clipped) - 1
        mapped = np.where(absent, 0.0, np.clip(mapped, -1.0, 1.0))
        if not self.missing:
            return mapped[:, None]
        return np.stack([mapped, absent.astype(float)], axis=1)

    def _transformed(self, values):
        assert self.low is not None
        if self.centre is not None:  # on the value's own log scale (low ≥ 0 for a log column)
            return np.log1p(values) if self.log else values
        return np.log1p(values - self.low) if self.log else values - self.low

    def _unit(self, clipped: np.ndarray) -> np.ndarray:
        assert self.high is not None
        return self._transformed(clipped) / self._transformed(self.high)

    def _centred(self, clipped: np.ndarray) -> np.ndarray:
        """Linear in the (log) value with the centre at 0 and the farther bound at ±1: one factor on both sides,
        so the model still sees the column's own scale, and no column stands in for the intercept."""
        assert self.high is not None and self.low is not None and self.centre is not None
        middle = self._transformed(min(max(self.centre, self.low), self.high))
        span = max(self._transformed(self.high) - middle, middle - self._transformed(self.low))
        return (self._transformed(clipped) - middle) / span if span > 0 else np.zeros_like(clipped)

    def feature_names(self) -> list[str]:
        return [self.name] + ([f"{self.name}=missing"] if self.missing else [])


@dataclass(frozen=True)
class Categorical:
    name: str
    levels: tuple[str, ...]
    missing: bool = False
    shares: tuple[float, ...] | None = None  # each level's share of the rows (the table's, rounded); None: 1/L each

    def describe(self) -> str:
        source = "the table's level shares" if self.shares is not None else "1/L per level"
        return (f"one-hot, {len(self.levels)} levels, centred on {source} and × 1/√2"
                + (", missing indicator" if self.missing else ""))

    def encode(self, values) -> np.ndarray:
        """One-hot minus each level's share, × 1/√2: a block of norm ≤ 1 whose typical row is near 0, so the
        commonest level does not stand in for the intercept (‖e_k − s‖² = (1 − s_k)² + Σ_{l≠k} s_l² ≤ 2)."""
        cells = np.asarray(values, dtype=object)
        blocks = [np.array([cell == level for cell in cells], dtype=float) for level in self.levels]
        if blocks:
            centre = self.shares if self.shares is not None else (1 / len(self.levels),) * len(self.levels)
            blocks = [(block - share) / math.sqrt(2) for block, share in zip(blocks, centre)]
        if self.missing:
            blocks.append(np.array([cell is None for cell in cells], dtype=float) / math.sqrt(2))
        return np.stack(blocks, axis=1) if blocks else np.zeros((len(cells), 0))

    def feature_names(self) -> list[str]:
        return [f"{self.name}={level}" for level in self.levels] + ([f"{self.name}=missing"] if self.missing else [])


Column = Numeric | Categorical


@dataclass(frozen=True)
class Scaled:
    features: np.ndarray
    names: list[str]
    report: dict = field(default_factory=dict)


def read_schema(path: Path) -> dict[str, Column]:
    """{"columns": {"income": {"type": "numeric", "low": 0, "high": 1e5, "log": true, "missing": true},
    "job": {"type": "categorical", "levels": ["admin", "services"]}}}: bounds the data owner declares public."""
    try:
        document = json.loads(Path(path).read_text())
        document["columns"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a schema ({{\"columns\": {{name: {{\"type\": …}}}}}}): {error}") from None
    return columns_of(document, str(path))


def columns_of(document: dict, path: str = "the schema") -> dict[str, Column]:
    """A schema document's columns, in its order (`read_schema`'s, or `schema_document`'s)."""
    entries = document["columns"]
    schema: dict[str, Column] = {}
    for name, entry in entries.items():
        kind = entry.get("type")
        if kind == "numeric":
            schema[name] = Numeric(name, entry.get("low"), entry.get("high"), bool(entry.get("log", False)),
                                   bool(entry.get("missing", False)), centre=entry.get("centre"))
        elif kind == "categorical":
            shares = entry.get("shares")
            schema[name] = Categorical(name, tuple(str(v) for v in entry.get("levels", ())),
                                       bool(entry.get("missing", False)),
                                       tuple(float(v) for v in shares) if shares is not None else None)
        else:
            raise ValueError(f"{path}: column {name!r} has type {kind!r}; numeric or categorical")
    return schema


def schema_document(columns: Sequence[Column]) -> dict:
    """The schema `read_schema` reads, for a user to review, publish and pass back with --schema."""
    entries: dict[str, dict] = {}
    for column in columns:
        if isinstance(column, Numeric):
            entry: dict = {"type": "numeric", "log": column.log, "missing": column.missing}
            if column.low is not None:
                entry.update(low=column.low, high=column.high)
            if column.centre is not None:
                entry["centre"] = column.centre
        else:
            entry = {"type": "categorical", "levels": list(column.levels), "missing": column.missing}
            if column.shares is not None:
                entry["shares"] = list(column.shares)
        entries[column.name] = entry
    return {"columns": entries}


def into_unit_ball(columns: Sequence[Column], values: Sequence, intercept: bool) -> Scaled:
    """Every column block × 1/√(m + intercept), the intercept that constant, then each row clipped on its own."""
    if not columns:
        raise ValueError("no feature columns")
    share = 1 / math.sqrt(len(columns) + (1 if intercept else 0))
    blocks = [column.encode(cells) * share for column, cells in zip(columns, values)]
    names = [name for column in columns for name in column.feature_names()]
    rows = len(blocks[0])
    if intercept:
        blocks.append(np.full((rows, 1), share))
        names.append("intercept")
    features = np.hstack(blocks)
    norms = np.linalg.norm(features, axis=1)
    over = norms > 1
    features[over] /= norms[over, None]
    clipped = norms > 1 + 1e-9  # a row of norm 1 up to rounding was not clipped: every block at its bound
    report = {
        "rule": "public per-column bounds, each column block × 1/√(columns" + (" + 1 for the intercept)" if intercept
                                                                                else ")")
                + "; each row clipped to norm 1 on its own",
        "rows": rows, "columns": len(columns), "features": features.shape[1],
        "intercept": (f"a constant feature {share:.3g} inside the unit ball (one block of the {len(columns) + 1}); "
                      "no sensitivity changes") if intercept else "none",
        "rows_clipped_share": float(np.mean(clipped)),
        "median_row_norm": float(np.median(np.minimum(norms, 1.0))),
        "column_rules": {column.name: column.describe() for column in columns},
    }
    return Scaled(features, names, report)


def row_norm_report(features: np.ndarray, rule: str, columns: int) -> dict:
    """The same figures for the paper-reproduction scalings (standardise, unit-rows)."""
    norms = np.linalg.norm(features, axis=1)
    return {"rule": rule, "rows": len(features), "columns": columns, "features": features.shape[1],
            "rows_clipped_share": 0.0, "median_row_norm": float(np.median(norms)) if len(norms) else 0.0}
