"""A researcher's own table (CSV with any separator, or LIBSVM), read by content, not by file name.

pandas reads CSV (separator sniffed, the usual missing-value markers and `?`). Per column:
- numeric when all but a few of its present cells parse as numbers (those few become missing, with a
  warning naming them): one stray text cell never turns a numeric column into thousands of one-hot columns;
- otherwise categorical, one-hot, at most `max_levels` levels (more is an error naming the column);
- missing cells are counted; the public scaling (mpdp/learning/scaling.py) gives them a constant and an indicator,
  the paper-reproduction scalings impute them (median / most frequent).
Rows without a label are dropped (with a warning). Labels keep their names (`yes`/`no` → sorted, 0..C−1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MISSING_MARKERS = ["?", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "None", ""]
MAX_BAD_NUMERIC_SHARE = 0.05  # a column whose present cells are ≥ 95 % numbers is numeric
DEFAULT_MAX_LEVELS = 100
SNIFF_BYTES = 64 * 1024
_LIBSVM_LINE = re.compile(r"^\s*[-+]?[\w.]+(\s+\d+:[-+0-9.eE]+)+\s*(#.*)?$")


@dataclass(frozen=True)
class Table:
    features: np.ndarray  # raw (numeric, one-hot), not yet scaled
    labels: list[str]
    columns: list[str]  # feature names after one-hot
    warnings: list[str]
    # Each column before imputation, for the public scaling: (name, numbers with NaN) or (name, cells with None)
    numeric: dict[str, np.ndarray] = field(default_factory=dict)
    categorical: dict[str, list] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    # How `features` was made from the cells, column by column, for a released model to encode new rows the same
    # way: {"name", "type": "numeric", "fill": median} | {"name", "type": "categorical", "levels", "fill"}
    encoding: list[dict] = field(default_factory=list)


def kind_of(path: Path) -> str:
    """`libsvm` or `csv`, from the first non-empty lines (a binary file is refused)."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if b"\0" in head:
        raise ValueError(f"{path} is not a text file (CSV or LIBSVM)")
    lines = [line for line in head.decode("utf-8", errors="replace").splitlines()[:20] if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    complete = lines[:-1] if len(head) == SNIFF_BYTES and len(lines) > 1 else lines
    # Most lines LIBSVM: a LIBSVM file with a few bad lines (its reader then names the first), not a CSV table.
    matching = sum(bool(_LIBSVM_LINE.match(line)) for line in complete)
    return "libsvm" if matching * 2 > len(complete) else "csv"


def first_bad_libsvm_line(path: Path) -> tuple[int, str] | None:
    """(line number, text) of the first non-empty line that is not LIBSVM, or None."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip() and not line.lstrip().startswith("#") and not _LIBSVM_LINE.match(line):
                return number, line.strip()[:60]
    return None


def read_csv(path: Path, label: str, max_levels: int = DEFAULT_MAX_LEVELS) -> Table:
    import pandas as pd

    try:
        frame = pd.read_csv(path, sep=None, engine="python", na_values=MISSING_MARKERS, keep_default_na=True,
                            dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{path} could not be read as CSV: {error}") from None
    frame.columns = [str(name).strip() for name in frame.columns]
    if label not in frame.columns:
        shown = ", ".join(frame.columns[:20]) + (" …" if len(frame.columns) > 20 else "")
        raise ValueError(f"{path} has no column {label!r}; its columns: {shown}")
    warnings = []
    unlabeled = frame[label].isna()
    if unlabeled.any():
        warnings.append(f"{int(unlabeled.sum())} rows without a label ({label!r}) dropped")
        frame = frame[~unlabeled]
    if len(frame) < 2:
        raise ValueError(f"{path} has fewer than two labeled rows")
    blocks, names = [], []
    encoding: list[dict] = []
    numeric: dict[str, np.ndarray] = {}
    categorical: dict[str, list] = {}
    for name in frame.columns:
        if name == label:
            continue
        cells = frame[name].str.strip()
        present = cells.notna()
        numbers = pd.to_numeric(cells, errors="coerce")
        bad = present & numbers.isna()
        if present.sum() and bad.sum() <= MAX_BAD_NUMERIC_SHARE * present.sum() and numbers.notna().any():
            if bad.any():
                examples = ", ".join(repr(v) for v in cells[bad].unique()[:3])
                warnings.append(f"column {name!r}: {int(bad.sum())} cells are not numbers ({examples}); treated as "
                                "missing")
            missing = int(numbers.isna().sum())
            if missing:
                warnings.append(f"column {name!r}: {missing} missing cells")
            numeric[name] = numbers.to_numpy(dtype=float)
            blocks.append(numbers.fillna(numbers.median()).to_numpy(dtype=float)[:, None])
            encoding.append({"name": name, "type": "numeric", "fill": float(numbers.median())})
            names.append(name)
            continue
        missing = int((~present).sum())
        if missing == len(cells):
            warnings.append(f"column {name!r} is empty; dropped")
            continue
        levels = sorted(cells[present].unique())
        if len(levels) > max_levels:
            raise ValueError(f"column {name!r} has {len(levels)} distinct values, more than {max_levels} levels of a "
                             "categorical feature: drop it, bin it, or raise --max-levels")
        categorical[name] = [None if cell is None or cell != cell else str(cell) for cell in cells]
        most_frequent = cells[present].value_counts().idxmax()
        encoding.append({"name": name, "type": "categorical", "levels": [str(v) for v in levels],
                         "fill": str(most_frequent)})
        if missing:
            warnings.append(f"column {name!r}: {missing} missing cells")
            cells = cells.fillna(most_frequent)
        blocks.append(np.stack([(cells == level).to_numpy(dtype=float) for level in levels], axis=1))
        names += [f"{name}={level}" for level in levels]
    if not blocks:
        raise ValueError(f"{path} has no feature columns besides {label!r}")
    labels = [str(v).strip() for v in frame[label]]
    order = [name for name in frame.columns if name in numeric or name in categorical]
    return Table(np.hstack(blocks), labels, names, warnings, numeric, categorical, order, encoding)
