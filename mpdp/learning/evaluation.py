"""A release's test metrics beside its baselines, on the same test split.

The baselines are the evaluator's (the operator's, like the party sizes), on the release's own test rows: the
majority-class rate, the same model class non-private at the same λ, and a tuned non-private model (C by
cross-validation on the training rows only), the last two trained on the pooled party data files when those
are readable (a deployment started here; not one attached elsewhere).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

IMBALANCED = 0.7  # above this majority share, accuracy says little: lead with balanced accuracy and AUC
TUNED_FOLDS = 5
TUNED_CS = 12
SPREAD_RESAMPLES = 200  # bootstrap resamples of the test rows for a single draw's spread  # C on a log grid 1e-4 … 1e4, chosen by cross-validation on the training rows only


def metrics(labels: np.ndarray, predictions: np.ndarray, scores: np.ndarray | None = None,
            spread: bool = False) -> dict:
    """Accuracy, balanced accuracy, (binary, with scores) ROC AUC, and whether one class was predicted for every
    row; with `spread`, how far each would move on another draw of test rows (`sampling_spread`)."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    result: dict = {"accuracy": float(np.mean(labels == predictions)),
                    "balanced_accuracy": float(balanced_accuracy_score(labels, predictions)),
                    "one_class": bool(len(np.unique(predictions)) == 1)}
    if scores is not None and len(np.unique(labels)) == 2:
        result["auc"] = float(roc_auc_score(labels, scores))
    if spread:
        result["spread"] = sampling_spread(labels, predictions, scores if "auc" in result else None)
    return result


def _balanced(labels: np.ndarray, correct: np.ndarray) -> float:
    return float(np.mean([correct[labels == c].mean() for c in np.unique(labels)]))


def _auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Mann–Whitney: the share of (positive, negative) pairs the scores order correctly, ties counted half."""
    from scipy.stats import rankdata

    positive = labels == labels.max()
    ranks = rankdata(scores)
    count = int(positive.sum())
    return float((ranks[positive].sum() - count * (count + 1) / 2) / (count * (len(labels) - count)))


def sampling_spread(labels: np.ndarray, predictions: np.ndarray, scores: np.ndarray | None = None,
                    resamples: int = SPREAD_RESAMPLES, seed: int = 0) -> dict:
    """The standard deviation of each metric over bootstrap resamples of the test rows: how wide one draw's
    figure is expected to be from the test rows alone (the privacy noise's spread is `--repeat`'s). Reads the
    evaluator's test rows only, never a party's data."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {"accuracy": [], "balanced_accuracy": [], "auc": []}
    for _ in range(resamples):
        rows = rng.integers(0, len(labels), len(labels))
        sample = labels[rows]
        correct = predictions[rows] == sample
        values["accuracy"].append(float(correct.mean()))
        values["balanced_accuracy"].append(_balanced(sample, correct))
        if scores is not None and len(np.unique(sample)) == 2:
            values["auc"].append(_auc(sample, np.asarray(scores)[rows]))
    result: dict = {key: float(np.std(v)) for key, v in values.items() if v}
    result["method"] = f"bootstrap over the {len(labels)} test rows, {resamples} resamples"
    return result


def public_rows(client_data: dict) -> np.ndarray:
    """The deployment's public, unlabelled rows (none under a percentage split)."""
    features = client_data.get("public_features")
    if features is None or len(features) == 0:
        return np.zeros((0, client_data["test_features"].shape[1]))
    return np.asarray(features, dtype=float)


def majority_rate(labels: np.ndarray) -> float:
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    return float(counts.max() / counts.sum())


def pooled(data_files: list[Path]) -> tuple[np.ndarray, np.ndarray] | None:
    from mpdp.learning.datasets import load_part

    if not data_files or not all(Path(f).is_file() for f in data_files):
        return None
    parts = [load_part(Path(f))[:2] for f in data_files]
    features = np.vstack([x for x, _ in parts])
    labels = np.concatenate([y for _, y in parts])
    return (features, labels) if len(np.unique(labels)) >= 2 else None


def _scored(model, test_x: np.ndarray, test_y: np.ndarray, description: str,
            public_x: np.ndarray | None = None) -> dict:
    """The model's metrics; with public rows, a binary model is cut on them by the releases' own rule (so a strong
    λ, which pulls every score towards the intercept, does not read as the model class's failure)."""
    from mpdp.learning import threshold

    binary = len(model.classes_) == 2
    scores = model.decision_function(test_x) if binary and hasattr(model, "decision_function") else None
    if scores is not None and public_x is not None and len(public_x):
        cut = threshold.on_public_rows(model.decision_function(public_x))
        return {"model": f"{description}, cut on the public rows as the release is",
                **metrics(test_y, threshold.predict(scores, cut), scores)}
    return {"model": description, **metrics(test_y, model.predict(test_x), scores)}


def same_lambda(features: np.ndarray, labels: np.ndarray, regularization: float):
    """The protocols' model class, non-private: (1/n)Σ loss + λ/2‖w‖², no intercept of its own (the constant
    feature is one), on the pooled training rows: scikit-learn's C = 1/(nλ)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1 / (len(labels) * regularization), fit_intercept=False, max_iter=5000
                              ).fit(features, labels)


def tuned(features: np.ndarray, labels: np.ndarray, seed: int = 0):
    """Logistic regression with C chosen by stratified cross-validation on the training rows only."""
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    folds = min(TUNED_FOLDS, int(np.bincount(np.unique(labels, return_inverse=True)[1]).min()))
    model = LogisticRegressionCV(Cs=np.logspace(-4, 4, TUNED_CS), cv=StratifiedKFold(max(2, folds), shuffle=True,
                                 random_state=seed), max_iter=5000)
    with warnings.catch_warnings():  # scikit-learn's notices of future defaults would land in every summary
        warnings.simplefilter("ignore", FutureWarning)
        return model.fit(features, labels)


def baselines(data_files: list[Path], client_data: dict, regularization: float | None = None,
              student=None) -> dict:
    """Beside a release, on its test rows: the majority class; the same model class non-private at the same λ
    (or `student`, a factory of the model a protocol trains, e.g. DPPP's student); a tuned non-private model."""
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    result: dict = {"test_rows": int(len(test_y)), "majority_class_rate": majority_rate(test_y)}
    training = pooled(data_files)
    if training is None:
        unavailable = "unavailable: the parties' data files are not here"
        result.update(same_model=unavailable, tuned=unavailable)
        return result
    features, labels = training
    public = public_rows(client_data)
    if regularization is not None and regularization > 0:
        result["same_model"] = _scored(same_lambda(features, labels, regularization), test_x, test_y,
                                       f"the same model class non-private, λ = {regularization:g}, pooled rows",
                                       public)
    elif student is not None:
        result["same_model"] = _scored(student(features, labels), test_x, test_y,
                                       "the same model non-private, trained on the pooled rows", public)
    model = tuned(features, labels)
    result["tuned"] = _scored(model, test_x, test_y, f"logistic regression, C = {float(model.C_[0]):.3g} by "
                                                     f"{TUNED_FOLDS}-fold cross-validation on the training rows",
                              public)
    return result


def data_record(client_data: dict) -> dict:
    """What the split was: reproducible (seed) and readable (which label is which)."""
    record: dict = {"dataset": str(client_data["dataset"]), "source": str(client_data["source"]),
              "split": str(client_data["split"])}
    if "split_seed" in client_data:
        record["split_seed"] = int(client_data["split_seed"])
    if "class_names" in client_data:
        record["labels"] = {str(name): index for index, name in enumerate(client_data["class_names"].tolist())}
    if "intercept" in client_data:
        record["intercept"] = ("a constant feature inside the unit-ball scaling" if bool(client_data["intercept"])
                               else "none (no constant feature; the linear models fit no intercept)")
    if "scaling" in client_data:
        import json

        record["scaling"] = json.loads(str(client_data["scaling"]))
    return record
