"""Local and student models: any scikit-learn classifier, chosen by name: one of `MODELS`, or a researcher's own
as `module:Class` (imported by the process that trains it, built with its defaults)."""

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


def is_own(name: str) -> bool:
    """A researcher's own classifier, `module:Class`, rather than one of `MODELS`."""
    return ":" in name


def own_classifier(name: str):
    """`module:Class` imported and built with its defaults; a ValueError in one line when the module or class
    does not import or the class is not a scikit-learn classifier (`sklearn.base.is_classifier`, fit/predict)."""
    import importlib

    module_name, _, class_name = name.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"teacher {name!r} is not MODULE:CLASS (e.g. sklearn.ensemble:RandomForestClassifier)")
    try:
        made = getattr(importlib.import_module(module_name), class_name)()
    except Exception as error:  # ImportError, AttributeError, or a class that needs arguments
        raise ValueError(f"teacher {name!r} does not import and build with its defaults: "
                         f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}") from None
    from sklearn.base import is_classifier

    if not (is_classifier(made) and callable(getattr(made, "fit", None)) and callable(getattr(made, "predict", None))):
        raise ValueError(f"teacher {name!r} is not a scikit-learn classifier (sklearn.base.is_classifier is false)")
    return made


def check_name(name: str) -> None:
    """A model name `train` takes (for an own classifier: it imports here and is a classifier), or a ValueError."""
    if is_own(name):
        own_classifier(name)
    elif name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}, or give MODULE:CLASS")


def train(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None = None):
    """Fit the named model over classes 0..C−1 (C from the labels unless given); a part with a single class
    gets a constant predictor unless the model is defined there."""
    check_name(name)
    classes = classes if classes is not None else int(np.max(labels, initial=0)) + 1
    if len(np.unique(labels)) < 2 and name not in ANY_LABELS:
        from sklearn.dummy import DummyClassifier

        return DummyClassifier(strategy="most_frequent").fit(features, labels)
    made = own_classifier(name) if is_own(name) else MODELS[name](classes)
    return made.fit(features, labels)


def _train_and_export(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None):
    from mpdp.learning.portable import export

    return export(train(name, features, labels, classes))


def train_portable(name: str, features: np.ndarray, labels: np.ndarray, classes: int | None = None):
    """`train`, returning a numpy predictor (mpdp/learning/portable.py). A scikit-learn model is fitted in a child
    process, so the caller never imports scikit-learn: a party at rest stays small."""
    return train_portable_all([(name, features, labels, classes)])[0]


def train_portable_all(jobs: list[tuple[str, np.ndarray, np.ndarray, int | None]]) -> list:
    """`train_portable` for several parts (name, features, labels, classes): the scikit-learn ones in one child
    process that imports it once. Spawned, not forked: the caller may already run threads.

    An own classifier (`module:Class`) has no numpy predictor: it is fitted here, in the caller's process, which
    imports its module itself and keeps the fitted object. No model is ever unpickled from elsewhere: what
    crosses from the child is the numpy predictors' plain arrays."""
    for name, *_ in jobs:
        if not is_own(name) and name not in MODELS:
            raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}, or give MODULE:CLASS")
    trained: list = [train(*job) if job[0] in ANY_LABELS or is_own(job[0]) else None for job in jobs]
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
