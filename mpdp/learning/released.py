"""A released model as a scikit-learn estimator (`mpdp export`): a Pipeline of the scaling a deployment applied to
its rows (`RawRows`, from `Dataset.raw_scaling`; under `standardise` with the table's column means, spreads and
common factor copied into it) and the release's own steps (a linear model whose coef_ and
intercept_ are the released weights, its public cut folded into the intercept), so that `predict` on raw rows
gives the classes the report's figures count.

Loading the file needs mpdp importable: `RawRows` (and Du's row normalisation) are mpdp's own code, the same
functions that scaled the deployment's rows."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from mpdp.learning import datasets, scaling
from mpdp.learning.tabular import MISSING_MARKERS

EXPORTABLE = ("public", "published", "unit-rows", "standardise")


class RawRows(TransformerMixin, BaseEstimator):
    """Raw rows (a 2-D array or a pandas DataFrame, columns in the table's order without the label; a DataFrame's
    are picked by name) into the unit ball exactly as the deployment scaled its rows. Nothing is fitted: the rule
    is public and per row, or (`standardise`) carries the statistics the deployment read from every row."""

    def __init__(self, rule: dict | None = None):
        self.rule = rule

    def fit(self, rows=None, labels=None):
        return self

    def transform(self, rows) -> np.ndarray:
        rule = self.rule or {}
        kind, intercept = rule.get("kind"), bool(rule.get("intercept", False))
        if kind == "public":
            columns = list(scaling.columns_of(rule["columns"]).values())
            cells = _cells(rows, [column.name for column in columns])
            values = [_numeric(cells[:, j]) if isinstance(column, scaling.Numeric) else _categorical(cells[:, j])
                      for j, column in enumerate(columns)]
            return scaling.into_unit_ball(columns, values, intercept).features
        matrix = _encoded(rows, rule["encoding"]) if "encoding" in rule else np.asarray(rows, dtype=float)
        if kind == "published":
            return datasets.as_published(matrix, intercept)
        if kind == "unit-rows":
            return datasets.into_unit_ball(matrix, "unit-rows", intercept)
        if kind == "standardise" and "mean" in rule:
            scaled = datasets.standardised(matrix, np.asarray(rule["mean"]), np.asarray(rule["spread"]),
                                           float(rule["largest"]))
            return np.hstack([scaled, np.ones((len(scaled), 1))]) / np.sqrt(2) if intercept else scaled
        raise ValueError(f"rows scaled by {kind!r} cannot be scaled again one at a time; exportable: "
                         f"{', '.join(EXPORTABLE)}")


def _encoded(rows, encoding: list[dict]) -> np.ndarray:
    """A CSV table's cells as its reader made the numeric matrix (`Table.encoding`): numbers with a missing cell
    at the column's median, categorical columns one-hot over the table's levels with a missing cell at the most
    frequent level (a level the table did not have: all zeros)."""
    cells = _cells(rows, [column["name"] for column in encoding])
    blocks = []
    for j, column in enumerate(encoding):
        if column["type"] == "numeric":
            numbers = _numeric(cells[:, j])
            blocks.append(np.where(np.isnan(numbers), column["fill"], numbers)[:, None])
        else:
            values = [column["fill"] if cell is None else cell for cell in _categorical(cells[:, j])]
            blocks.append(np.array([[value == level for level in column["levels"]] for value in values],
                                   dtype=float).reshape(len(values), len(column["levels"])))
    return np.hstack(blocks)


def _cells(rows, names: list[str]) -> np.ndarray:
    if hasattr(rows, "columns"):  # a DataFrame: its columns by name, whatever their order
        missing = [name for name in names if name not in rows.columns]
        if missing:
            raise ValueError(f"the rows lack the column(s) {', '.join(missing[:5])}")
        rows = rows[names].to_numpy(dtype=object)
    cells = np.asarray(rows, dtype=object)
    if cells.ndim != 2 or cells.shape[1] != len(names):
        raise ValueError(f"rows of {len(names)} columns ({', '.join(names[:5])}{' …' if len(names) > 5 else ''}) "
                         f"expected, not shape {cells.shape}")
    return cells


def _absent(cell) -> bool:
    return cell is None or (isinstance(cell, float) and math.isnan(cell)) or (
        isinstance(cell, str) and cell.strip() in MISSING_MARKERS)


def _number(cell) -> float:
    """A cell as the table reader takes it: missing, or a number; a cell that is neither is missing too."""
    if _absent(cell):
        return np.nan
    try:
        return float(cell)
    except (TypeError, ValueError):
        return np.nan


def _numeric(cells: np.ndarray) -> np.ndarray:
    return np.array([_number(cell) for cell in cells], dtype=float)


def _categorical(cells: np.ndarray) -> list:
    return [None if _absent(cell) else str(cell).strip() for cell in cells]


def linear(coef: np.ndarray, intercept: np.ndarray | float, classes) -> LogisticRegression:
    """A LogisticRegression that predicts with these weights: class 1 where x·w + b > 0 (two classes, one row of
    weights), else the class of the largest score."""
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    model = LogisticRegression()
    model.coef_ = coef
    model.intercept_ = np.broadcast_to(np.asarray(intercept, dtype=float), (coef.shape[0],)).copy()
    model.classes_ = np.asarray(classes)
    model.n_features_in_ = coef.shape[1]
    return model


def cut_of(report: dict) -> float:
    """The release's public cut (mpdp/learning/threshold.py): 0 where the report has none (multiclass)."""
    cut = report["result"].get("test_metrics", {}).get("threshold")
    return float(cut["value"]) if isinstance(cut, dict) else 0.0


def pipeline(rule: dict, steps: list[tuple[str, object]]) -> Pipeline:
    """The exported estimator: raw rows scaled as the deployment did, then the release's steps."""
    if rule.get("kind") not in EXPORTABLE or (rule.get("kind") == "standardise" and "mean" not in rule):
        raise ValueError(f"this deployment's rows were scaled by {rule.get('kind')!r} and it did not record the "
                         "statistics that scaling read from every row: start it again with `mpdp up` to export its "
                         f"releases (exportable: {', '.join(EXPORTABLE)})")
    return Pipeline([("scaling", RawRows(rule)), *steps])
