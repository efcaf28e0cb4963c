"""Rows into the unit ball from public per-column bounds, each row on its own (privacy.md: every sensitivity
assumes ‖x‖₂ ≤ 1).

Every column is mapped into [−1, 1] by a rule that reads no statistic of the rows:
- numeric with public bounds [low, high] (a schema): clipped to them, then linear, or log1p for a
  heavy-tailed column (`"log": true`), onto [−1, 1];
- a numeric column of 0/1 values only, without bounds: an indicator, linear on [0, 1] (its type's bounds);
- numeric without bounds (the type's default): sign(x)·log1p(|x|)/log1p(10^6), clipped to [−1, 1] — values up
  to a million keep their order of magnitude, larger ones are clipped;
- categorical: one-hot over its levels (a cell outside them is all zeros);
- a missing cell: the public constant 0 and a missing-indicator feature 1 (the value and its indicator are
  never both non-zero).
Each of the m columns' blocks then has norm ≤ 1; with the intercept (a constant feature) counted as one more
block, every block is multiplied by 1/√(m + 1) (1/√m without it), so every row has norm ≤ 1 by construction:
the intercept sits inside the unit ball and no sensitivity changes. A row is still clipped to norm 1 on its own
as a guard (a schema whose blocks exceed 1 cannot then break a bound); the share of clipped rows is reported.

What is read from the table and not from a schema: the column names, which columns are numeric, the levels of
a categorical column and which columns have missing cells. A schema (JSON) fixes all of them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

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

    def __post_init__(self):
        if (self.low is None) != (self.high is None):
            raise ValueError(f"column {self.name!r}: give both bounds or neither")
        if self.low is not None and not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"column {self.name!r}: bounds must be finite with low < high")

    def describe(self) -> str:
        if self.low is None:
            rule = f"sign·log1p(|x|)/log1p({DEFAULT_MAGNITUDE:g}) (no public bounds given)"
        else:
            source = "an indicator's" if self.indicator else "public"
            rule = f"{'log1p' if self.log else 'linear'} on {source} bounds [{self.low:g}, {self.high:g}]"
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
            if self.log:
                unit = np.log1p(clipped - self.low) / math.log1p(self.high - self.low)
            else:
                unit = (clipped - self.low) / (self.high - self.low)
            mapped = 2 * unit - 1
        mapped = np.where(absent, 0.0, np.clip(mapped, -1.0, 1.0))
        if not self.missing:
            return mapped[:, None]
        return np.stack([mapped, absent.astype(float)], axis=1)

    def feature_names(self) -> list[str]:
        return [self.name] + ([f"{self.name}=missing"] if self.missing else [])


@dataclass(frozen=True)
class Categorical:
    name: str
    levels: tuple[str, ...]
    missing: bool = False

    def describe(self) -> str:
        return f"one-hot, {len(self.levels)} levels" + (", missing indicator" if self.missing else "")

    def encode(self, values) -> np.ndarray:
        cells = np.asarray(values, dtype=object)
        blocks = [np.array([cell == level for cell in cells], dtype=float) for level in self.levels]
        if self.missing:
            blocks.append(np.array([cell is None for cell in cells], dtype=float))
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
        entries = document["columns"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a schema ({{\"columns\": {{name: {{\"type\": …}}}}}}): {error}") from None
    schema: dict[str, Column] = {}
    for name, entry in entries.items():
        kind = entry.get("type")
        if kind == "numeric":
            schema[name] = Numeric(name, entry.get("low"), entry.get("high"), bool(entry.get("log", False)),
                                   bool(entry.get("missing", False)))
        elif kind == "categorical":
            schema[name] = Categorical(name, tuple(str(v) for v in entry.get("levels", ())),
                                       bool(entry.get("missing", False)))
        else:
            raise ValueError(f"{path}: column {name!r} has type {kind!r}; numeric or categorical")
    return schema


def schema_document(columns: list[Column]) -> dict:
    """The schema `read_schema` reads, for a user to review, publish and pass back with --schema."""
    entries: dict[str, dict] = {}
    for column in columns:
        if isinstance(column, Numeric):
            entry: dict = {"type": "numeric", "log": column.log, "missing": column.missing}
            if column.low is not None:
                entry.update(low=column.low, high=column.high)
        else:
            entry = {"type": "categorical", "levels": list(column.levels), "missing": column.missing}
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
