"""A release's test metrics beside its baselines, on the same test split.

The baselines are the evaluator's (the operator's, like the party sizes): the majority-class rate of the test
labels, and a central non-private model trained on the pooled party data files, when those files are readable
(a deployment started here; not one attached elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CENTRAL_MODEL = "logistic regression, non-private, on the pooled party data (scikit-learn defaults)"


def metrics(labels: np.ndarray, predictions: np.ndarray, scores: np.ndarray | None = None) -> dict:
    """Accuracy, balanced accuracy and (binary, with scores) ROC AUC."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    result = {"accuracy": float(np.mean(labels == predictions)),
              "balanced_accuracy": float(balanced_accuracy_score(labels, predictions))}
    if scores is not None and len(np.unique(labels)) == 2:
        result["auc"] = float(roc_auc_score(labels, scores))
    return result


def majority_rate(labels: np.ndarray) -> float:
    labels = np.asarray(labels, dtype=int)
    return float(np.max(np.bincount(labels)) / len(labels))


def central(data_files: list[Path], test_features: np.ndarray, test_labels: np.ndarray) -> dict | None:
    """The central non-private model's metrics, or None when a party's data file is not readable here."""
    from sklearn.linear_model import LogisticRegression

    from learning.datasets import load_part

    if not data_files or not all(Path(f).is_file() for f in data_files):
        return None
    parts = [load_part(Path(f))[:2] for f in data_files]
    features = np.vstack([x for x, _ in parts])
    labels = np.concatenate([y for _, y in parts])
    if len(np.unique(labels)) < 2:
        return None
    model = LogisticRegression(max_iter=2000).fit(features, labels)
    scores = model.predict_proba(test_features)[:, 1] if len(model.classes_) == 2 else None
    return {"model": CENTRAL_MODEL, **metrics(test_labels, model.predict(test_features), scores)}


def baselines(data_files: list[Path], client_data: dict) -> dict:
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    result: dict = {"test_rows": int(len(test_y)), "majority_class_rate": majority_rate(test_y)}
    centrally = central(data_files, test_x, test_y)
    result["central"] = centrally if centrally is not None else "unavailable: the parties' data files are not here"
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
    return record
