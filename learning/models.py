"""Local and student models: any scikit-learn classifier, chosen by name."""

from __future__ import annotations

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

# Rows arrive scaled into the unit ball (the protocols' bound), which leaves every
# feature tiny; standardising inside the pipeline keeps the default regularisation sensible.
MODELS = {
    "svm-rbf": lambda: make_pipeline(StandardScaler(), SVC(kernel="rbf", gamma="scale", C=10.0)),  # DPPP paper
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "random-forest": lambda: RandomForestClassifier(n_estimators=100),
    "knn": lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=5)),
}
DEFAULT_TEACHER_MODEL = "svm-rbf"
DEFAULT_STUDENT_MODEL = "logistic"


def train(name: str, features: np.ndarray, labels: np.ndarray):
    """Fit the named model; a part with a single class gets a constant predictor."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    if len(np.unique(labels)) < 2:
        return DummyClassifier(strategy="most_frequent").fit(features, labels)
    return MODELS[name]().fit(features, labels)


def accuracy(model, features: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(model.predict(features) == labels))
