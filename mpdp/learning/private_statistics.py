"""The statistics the public scaling reads from a table without a schema, under differential privacy and charged to
every party's ledger (mpdp/learning/scaling.py says how they scale the rows).

Unit: one row of the table, replaced by another (the ledgers' unit; the number of rows n is public). Whoever splits
the table (`up`, `prepare`) reads every row already; it releases only these noisy statistics, one mechanism on
the whole table, so each party's rows are covered by the same (ε, δ), and each party's ledger is charged it at
`up` (`charge`). Only columns without a schema entry are read; a full schema reads nothing, charges nothing.

Three steps, each discrete Laplace noise (exact sampler, integers only: mpdp/privacy/discrete.py), ε split
`SHARES` = 0.7 / 0.2 / 0.1, composed by basic composition:
1. a histogram of every column read (m columns). A numeric column's bins are public: missing, exactly 0, exactly 1,
   and intervals between ±(0, 10⁻³, then 1, 2, 5 × 10^k up to 10¹⁰, beyond); a categorical column's bins are its
   levels and missing. A replaced row moves one count in each column: L1 sensitivity 2m, scale b₁ = 2m/ε₁. Counts
   below a threshold are dropped: τ₁ = b₁·ln(2·bins/β) for numeric bins (β = 0.02: about the chance a column
   shows an empty bin); a categorical level is kept only at τ_c = 1 + b₁·ln(m_c/δ) (the levels are not public: a level
   only one row has is released with probability ≤ δ/m_c, which is the δ). From the kept counts: the column's kind
   (0/1 only: an indicator; non-negative with its kept 99th percentile over five times its median: log-scaled),
   its 1st and 99th percentiles as bin edges (rounded outward to 1, 2, 5 × 10^k), which columns have missing
   cells (its one missing bin at the lower threshold b₁·ln(1/β)), and each level's share of n.
2. for each linear column (m_l of them), a histogram of 10 equal bins between step 1's bounds (public after
   step 1): sensitivity 2m_l, scale 2m_l/ε₂, threshold as in step 1; when the kept bins hold at least half the
   column's rows, their 1st and 99th percentiles are the column's bounds (ages of 18–90 are not scaled on
   [10, 100]); else step 1's bounds stay.
3. each numeric column's mean on its scale (linear, or log1p), between its bounds, quantised to 1/1000 of the
   range: a sum per column, sensitivity 1000·m_n, scale 1000·m_n/ε₃; divided by n minus the noisy missing count.
   It is the column's centre.
Total: (ε, δ) = (ε₁ + ε₂ + ε₃, δ), default ε = 1, δ = 10⁻⁶. A column whose bins all fall under the threshold
(a small table) gets its type's default scale (sign·log1p(|x|)/log1p(10⁶)) and a warning: give its bounds.

Not private, and read from the table all the same: the column names, which columns are numeric (≥ 95 % of present
cells parse as numbers), the number of rows, a categorical column's number of distinct values (refused above
--max-levels) and the label's classes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from mpdp.learning.scaling import Categorical, Column, Numeric
from mpdp.privacy.discrete import discrete_laplace

EPSILON = 1.0
DELTA = 1e-6
SHARES = (0.7, 0.2, 0.1)  # histograms, linear refinement, means (the means need little: n rows average the noise)
SPURIOUS = 0.02  # β: about the chance that a column shows a bin no row is in
TAIL = 0.01
REFINE_BINS = 10  # few enough that a bin of a small table clears the threshold
MEAN_GRID = 1000
HEAVY = 5.0  # a kept 99th percentile over 5× the median: the threshold has cut the far tail already
PROTOCOL = "table-statistics"  # the ledger entry's name

# Positive edges: 0, 10⁻³, 2·10⁻³, 5·10⁻³, …, 5·10⁹, 10¹⁰ (the last bin reaches beyond)
_EDGES = np.array([0.0] + [m * 10.0**k for k in range(-3, 10) for m in (1, 2, 5)] + [1e10])


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    point: bool = False  # exactly one value (0, 1)


def _bins() -> list[Bin]:
    """The numeric bins in value order (missing is kept apart)."""
    positive = [Bin(float(_EDGES[j]), float(_EDGES[j + 1])) for j in range(len(_EDGES) - 1)]
    positive.append(Bin(1e10, math.inf))
    negative = [Bin(-b.high, -b.low) for b in reversed(positive)]
    ordered = negative + [Bin(0.0, 0.0, True)] + positive
    one = next(i for i, b in enumerate(ordered) if b.low == 1.0)
    return ordered[:one] + [Bin(1.0, 1.0, True)] + ordered[one:]


BINS = _bins()
_ZERO = next(i for i, b in enumerate(BINS) if b.point and b.low == 0)
_ONE = next(i for i, b in enumerate(BINS) if b.point and b.low == 1)


def bin_of(values: np.ndarray) -> np.ndarray:
    """Each present value's index into BINS."""
    values = np.asarray(values, dtype=float)
    magnitude = np.abs(values)
    positive_index = np.searchsorted(_EDGES, magnitude, side="right") - 1  # [e_j, e_j+1) for x > 0
    negative_index = np.searchsorted(_EDGES, magnitude, side="left") - 1  # (−e_j+1, −e_j] for x < 0
    positives = len(_EDGES)  # intervals above 0, the last one open
    zero = positives  # the negative side holds `positives` bins, then the zero point
    out = np.where(values > 0, zero + 1 + positive_index, zero - 1 - negative_index)
    out = np.where(values == 0, zero, out)
    # the point 1 sits before [1, 2): every positive index from it on moves one up
    one_interval = zero + 1 + int(np.searchsorted(_EDGES, 1.0, side="right") - 1)
    out = np.where(out >= one_interval, out + 1, out)
    return np.where(values == 1, one_interval, out)


@dataclass
class Noise:
    """Discrete Laplace noise from `randbelow` (secrets.randbelow; a seeded source only in tests)."""

    randbelow: Callable[[int], int] | None = None

    def add(self, counts: np.ndarray, scale: float) -> np.ndarray:
        # one float step up: the rational scale drawn with is never below the real sensitivity/ε the float rounds
        exact = Fraction(repr(math.nextafter(float(scale), math.inf)))
        source = self.randbelow
        draw = (lambda: discrete_laplace(exact, source)) if source is not None else (lambda: discrete_laplace(exact))
        return np.asarray(counts, dtype=np.int64) + np.array([draw() for _ in range(len(counts))], dtype=np.int64)


def seeded(seed: int) -> Noise:
    """Reproducible noise, for tests only."""
    return Noise(random.Random(seed).randrange)


@dataclass(frozen=True)
class Released:
    columns: dict[str, Column]
    report: dict
    warnings: list[str]


def _percentile_edges(counts: np.ndarray, bins: Sequence[Bin]) -> tuple[float, float, float] | None:
    """(low, median's middle, high) of kept counts: the lower edge of the bin holding the 1st percentile, the
    upper edge of the one holding the 99th; None when nothing is kept."""
    total = counts.sum()
    if total <= 0:
        return None
    cumulative = np.cumsum(counts)
    first = int(np.searchsorted(cumulative, TAIL * total, side="left"))
    last = int(np.searchsorted(cumulative, (1 - TAIL) * total, side="left"))
    middle = int(np.searchsorted(cumulative, 0.5 * total, side="left"))
    low, high = bins[first].low, bins[last].high
    if math.isinf(high):
        high = bins[last].low * 10
    if math.isinf(low):
        low = bins[first].high * 10
    m = bins[middle]
    centre = m.low if m.point else (math.sqrt(m.low * m.high) if m.low > 0 and math.isfinite(m.high) else
                                   (m.low + m.high) / 2 if math.isfinite(m.high) and math.isfinite(m.low) else m.low)
    return low, centre, high


def counts_of(cells) -> tuple[list, np.ndarray]:
    """Step 1's exact histogram of one column, missing last: a numeric column's (NaN missing) over BINS, a
    categorical one's (None missing) over its levels. One row lands in one bin: replacing it moves one count."""
    if isinstance(cells, np.ndarray) and cells.dtype.kind == "f":
        present = cells[~np.isnan(cells)]
        return list(BINS), np.append(np.bincount(bin_of(present), minlength=len(BINS)), int(np.isnan(cells).sum()))
    levels = sorted({cell for cell in cells if cell is not None})
    index = {level: j for j, level in enumerate(levels)}
    counts = np.zeros(len(levels) + 1, dtype=np.int64)
    for cell in cells:
        counts[index[cell] if cell is not None else len(levels)] += 1
    return levels, counts


def _threshold(scale: float, bins: int) -> float:
    return scale * math.log(2 * bins / SPURIOUS)


def release(numeric: dict[str, np.ndarray], categorical: dict[str, list], order: Sequence[str], rows: int,
            epsilon: float = EPSILON, delta: float = DELTA, noise: Noise | None = None) -> Released:
    """The columns `order` names (none with a schema entry), from their cells: numeric (NaN where missing) or
    categorical (None where missing)."""
    noise = noise or Noise()
    m = len(order)
    eps1, eps2, eps3 = (share * epsilon for share in SHARES)
    scale1 = 2 * m / eps1
    tau1 = _threshold(scale1, len(BINS))
    categorical_names = [name for name in order if name in categorical]
    tau_c = 1 + scale1 * math.log(max(1, len(categorical_names)) / delta)
    tau_missing = scale1 * math.log(1 / SPURIOUS)  # one public bin: a spurious indicator costs only a feature
    warnings: list[str] = []
    columns: dict[str, Column] = {}
    kept_counts: dict[str, tuple[np.ndarray, int]] = {}
    for name in order:
        if name in categorical:
            levels, counts = counts_of(categorical[name])
            noisy = noise.add(counts, scale1)
            released = [(level, int(count)) for level, count in zip(levels, noisy[:-1]) if count >= tau_c]
            missing = bool(noisy[-1] >= tau_missing)
            if not released:
                warnings.append(f"column {name!r}: no level has enough rows for the private statistics (ε = "
                                f"{epsilon:g}); its levels are not used: list them in a schema")
            columns[name] = Categorical(name, tuple(level for level, _ in released), missing,
                                        tuple(_significant(count / rows) for _, count in released))
            continue
        noisy = noise.add(counts_of(numeric[name])[1], scale1)
        missing_count = max(0, int(noisy[-1]))
        kept = np.where(noisy[:-1] >= tau1, noisy[:-1], 0)
        kept_counts[name] = (kept, missing_count)
        columns[name] = _kind(name, kept, missing_count >= tau_missing, warnings, epsilon)
    # 2. finer bounds for linear columns, on 40 equal bins between step 1's (public) bounds
    linear = [name for name, c in columns.items() if isinstance(c, Numeric) and c.low is not None
              and not c.log and not c.indicator]
    if linear:
        scale2 = 2 * len(linear) / eps2
        tau2 = _threshold(scale2, REFINE_BINS)
        for name in linear:
            column = columns[name]
            assert isinstance(column, Numeric) and column.low is not None and column.high is not None
            edges = np.linspace(column.low, column.high, REFINE_BINS + 1)
            present = np.clip(numeric[name][~np.isnan(numeric[name])], column.low, column.high)
            index = np.clip(np.searchsorted(edges, present, side="right") - 1, 0, REFINE_BINS - 1)
            noisy = noise.add(np.bincount(index, minlength=REFINE_BINS), scale2)
            refined = np.where(noisy >= tau2, noisy, 0)
            found = _percentile_edges(refined, [Bin(float(edges[j]), float(edges[j + 1])) for j in range(REFINE_BINS)])
            # kept only when the kept bins hold most rows: else the threshold cut the column's body away
            if found is not None and found[2] > found[0] and refined.sum() >= 0.5 * (rows - kept_counts[name][1]):
                columns[name] = Numeric(name, _tidy(found[0]), _tidy(found[2]), missing=column.missing,
                                        from_table=True)
    # 3. each numeric column's mean on its scale, between its bounds: its centre
    scaled = [name for name, c in columns.items() if isinstance(c, Numeric) and c.low is not None
              and not c.indicator]
    if scaled:
        scale3 = MEAN_GRID * len(scaled) / eps3
        sums = []
        for name in scaled:
            column = columns[name]
            assert isinstance(column, Numeric) and column.low is not None and column.high is not None
            transform = np.log1p if column.log else (lambda v: v)
            bottom, top = transform(column.low), transform(column.high)
            present = numeric[name][~np.isnan(numeric[name])]
            unit = (transform(np.clip(present, column.low, column.high)) - bottom) / (top - bottom)
            sums.append(int(np.round(unit * MEAN_GRID).sum()))
        noisy_sums = noise.add(np.array(sums), scale3)
        for name, total in zip(scaled, noisy_sums):
            column = columns[name]
            assert isinstance(column, Numeric) and column.low is not None and column.high is not None
            present_rows = max(1, rows - kept_counts[name][1])
            share = min(1.0, max(0.0, total / MEAN_GRID / present_rows))
            transform_back = np.expm1 if column.log else (lambda v: v)
            bottom = np.log1p(column.low) if column.log else column.low
            top = np.log1p(column.high) if column.log else column.high
            centre = float(transform_back(bottom + share * (top - bottom)))
            columns[name] = Numeric(name, column.low, column.high, column.log, column.missing,
                                    from_table=True, centre=_significant(centre, 4))
    report = {
        "unit": "one row of the table, replaced by another (n public)",
        "mechanism": "discrete Laplace: a histogram of every column read (public bins; levels above a threshold), "
                     "a finer histogram of each linear column, each numeric column's clipped mean; basic "
                     "composition",
        "columns_read": list(order), "epsilon": epsilon, "delta": delta,
        "steps": [
            {"release": "histograms", "epsilon": eps1, "l1_sensitivity": 2 * m, "scale": scale1,
             "threshold": tau1, "level_threshold": tau_c, "missing_threshold": tau_missing},
            {"release": "linear columns' finer histograms", "epsilon": eps2, "columns": len(linear),
             "l1_sensitivity": 2 * len(linear)},
            {"release": "means", "epsilon": eps3, "columns": len(scaled), "l1_sensitivity": MEAN_GRID * len(scaled),
             "grid": MEAN_GRID},
        ],
        "charged": "each party's ledger, at up (protocol table-statistics)",
    }
    return Released(columns, report, warnings)


def _kind(name: str, kept: np.ndarray, missing: bool, warnings: list[str], epsilon: float) -> Numeric:
    """Step 1's verdict on a numeric column: an indicator, log-scaled, linear (refined in step 2) or, with
    nothing kept, its type's default."""
    found = _percentile_edges(kept, BINS)
    if found is None:
        warnings.append(f"column {name!r}: too few rows for the private statistics (ε = {epsilon:g}); scaled on "
                        "its type's default range: give its bounds in a schema")
        return Numeric(name, missing=missing)
    low, middle, high = found
    outside = kept.sum() - kept[_ZERO] - kept[_ONE]
    if outside == 0:
        return Numeric(name, 0.0, 1.0, missing=missing, indicator=True)
    if high <= low:
        low, high = low - 1, high + 1
    if low >= 0 and high > HEAVY * max(middle, 1e-12):
        return Numeric(name, low, high, log=True, missing=missing, from_table=True)
    return Numeric(name, low, high, missing=missing, from_table=True)


def _tidy(value: float) -> float:
    return float(f"{value:.6g}")


def _significant(value: float, digits: int = 2) -> float:
    return float(f"{value:.{digits}g}")


def options(epsilon: float | None) -> dict | None:
    """`--statistics-epsilon` as `datasets.load`'s `statistics` (None: the default ε)."""
    if epsilon is None:
        return None
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("--statistics-epsilon must be a positive number")
    return {"epsilon": float(epsilon)}


def guarantee(report: dict):
    """The ledger entry's guarantee: (ε, δ) by basic composition, no PLD."""
    from mpdp.privacy.composition import Guarantee

    return Guarantee(float(report["epsilon"]), float(report["delta"]), "table statistics: discrete Laplace "
                     "histograms and means (mpdp/learning/private_statistics.py)")


def charge(data_file: Path, party: int, report: dict, session: str) -> None:
    """Record the release in the party's ledger (`up`, after the ledger is provisioned): the party's rows were
    read for it. Refused like any spend when it would exceed the ledger's budget."""
    from mpdp.privacy.ledger import BudgetExceeded, Ledger

    try:
        Ledger(data_file, party).spend(session, PROTOCOL, guarantee(report))
    except BudgetExceeded as error:
        raise ValueError(f"party {party}'s privacy ledger cannot take the table statistics' (ε = {report['epsilon']:g}, "
                         f"δ = {report['delta']:g}): {error}; pass the run directory's schema.json back with --schema "
                         "(a full schema reads and charges nothing)") from None
