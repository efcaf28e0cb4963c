"""Local and student models: any scikit-learn classifier, chosen by name."""

from __future__ import annotations

import os
import signal

import numpy as np

from mpdp.learning.logistic import RegularisedLogistic
from mpdp.platform.lifetime import die_with_parent

# Rows arrive scaled into the unit ball (the protocols' bound), which leaves every
# feature tiny; standardising inside the pipeline keeps the default regularisation sensible.
HAMM_LAMBDA = 1e-4



# scikit-learn is imported when a model of it is made: a role with the exact logistic model never loads it.
def _svm_rbf(classes: int):  # the DPPP paper's teachers
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return make_pipeline(StandardScaler(), SVC(kernel="rbf", gamma="scale", C=10.0))


def _logistic(classes: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


def _logistic_balanced(classes: int):
    """Each class weighted by n/(C·n_c) of the teacher's own rows: on a skewed table an unweighted teacher votes
    the majority class for nearly every query. DPPP's sensitivity is on the votes (one record moves one teacher's
    vote per query), whatever the teacher's training, so the weighting changes no guarantee."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced"))


def _random_forest(classes: int):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=100)


def _knn(classes: int):
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=5))


# Each factory takes the number of classes C (labels are 0..C−1).
MODELS = {
    "svm-rbf": _svm_rbf,
    "logistic": _logistic,
    "logistic-balanced": _logistic_balanced,
    "random-forest": _random_forest,
    "knn": _knn,
    # Hamm et al.'s local classifier: λ/2‖w‖² logistic / softmax on the unit-ball rows, λ = 1e-4, exact
    "logistic-exact": lambda classes: RegularisedLogistic(classes, HAMM_LAMBDA),
}
# Defined on any part, even one holding a single class (no constant-predictor fallback).
ANY_LABELS = {"logistic-exact"}
DEFAULT_TEACHER_MODEL = "logistic-balanced"  # svm-rbf is the DPPP paper's (--model svm-rbf)
DEFAULT_STUDENT_MODEL = "logistic"


def train(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None = None):
    """Fit the named model over classes 0..C−1 (C from the labels unless given); a part with a single class
    gets a constant predictor unless the model is defined there."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    classes = classes if classes is not None else int(np.max(labels, initial=0)) + 1
    if len(np.unique(labels)) < 2 and name not in ANY_LABELS:
        from sklearn.dummy import DummyClassifier

        return DummyClassifier(strategy="most_frequent").fit(features, labels)
    return MODELS[name](classes).fit(features, labels)


def _train_and_export(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None):
    from mpdp.learning.portable import export

    return export(train(name, features, labels, classes))


def train_portable(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None = None):
    """`train`, returning a numpy predictor (mpdp/learning/portable.py). A scikit-learn model is fitted in a child
    process, so the caller never imports scikit-learn: a party at rest stays small."""
    return train_portable_all([(name, features, labels, classes)])[0]


def train_portable_all(jobs: list[tuple[str, np.ndarray, np.ndarray, int | None]]) -> list:
    """`train_portable` for several parts (name, features, labels, classes): the scikit-learn ones in one child
    process that imports it once. Spawned, not forked: the caller may already run threads."""
    unknown = [name for name, *_ in jobs if name not in MODELS]
    if unknown:
        raise ValueError(f"unknown model {unknown[0]!r}; choose from {', '.join(MODELS)}")
    trained: list = [train(*job) if job[0] in ANY_LABELS else None for job in jobs]
    if all(model is not None for model in trained):
        return trained
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_die_with, initargs=(os.getpid(),)) as child:
        futures = {index: child.submit(_train_and_export, *job) for index, job in enumerate(jobs)
                   if trained[index] is None}
        for index, future in futures.items():
            trained[index] = future.result()
    return trained


def _die_with(parent: int) -> None:
    """In the training child: killed by the kernel when the party dies (PR_SET_PDEATHSIG, Linux), so a party
    interrupted while it starts leaves no child behind, waiting forever for its next task."""
    die_with_parent(signal.SIGKILL, parent)


def accuracy(model, features: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(model.predict(features) == labels))
