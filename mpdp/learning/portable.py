"""Fitted scikit-learn classifiers as plain numpy predictors, so a party serves without scikit-learn.

A party trains its teacher model once, at start-up, in a child process (`models.train_portable`) and keeps only
what prediction needs: about 90 MB of scikit-learn and scipy never enter the role process. Each predictor
repeats scikit-learn's own decision rule (libsvm's one-vs-one vote, the forest's mean of leaf frequencies on
float32 inputs, the neighbours' smallest most frequent label); `tests/test_portable_models.py` holds them to
scikit-learn's predictions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Constant:
    label: int

    def predict(self, features: np.ndarray) -> np.ndarray:
        return np.full(len(features), self.label)


@dataclass(frozen=True)
class Standardised:
    mean: np.ndarray
    scale: np.ndarray
    inner: object

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.inner.predict((np.asarray(features, dtype=float) - self.mean) / self.scale)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Linear:
    coef: np.ndarray  # (1, d) for two classes, (C, d) otherwise
    intercept: np.ndarray
    classes: np.ndarray

    def predict(self, features: np.ndarray) -> np.ndarray:
        scores = np.asarray(features, dtype=float) @ self.coef.T + self.intercept
        if scores.shape[1] == 1:
            return self.classes[(scores[:, 0] > 0).astype(int)]
        return self.classes[np.argmax(scores, axis=1)]


@dataclass(frozen=True)
class KernelMachine:
    """libsvm's RBF SVC: one classifier per pair i < j votes for i when its decision is positive."""

    support_vectors: np.ndarray
    dual_coef: np.ndarray  # libsvm's (C − 1, n_SV) layout
    intercept: np.ndarray  # libsvm's, one per pair in the order (0,1), (0,2), …, (1,2), …
    support_counts: np.ndarray
    gamma: float
    classes: np.ndarray

    def predict(self, features: np.ndarray) -> np.ndarray:
        x = np.asarray(features, dtype=float)
        distances = (np.sum(x * x, axis=1)[:, None] - 2 * x @ self.support_vectors.T
                     + np.sum(self.support_vectors ** 2, axis=1)[None, :])
        kernel = np.exp(-self.gamma * np.maximum(distances, 0.0))
        starts = np.concatenate([[0], np.cumsum(self.support_counts)])
        count = len(self.classes)
        votes = np.zeros((len(x), count), dtype=int)
        pair = 0
        for i in range(count):
            for j in range(i + 1, count):
                rows_i, rows_j = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
                decision = (kernel[:, rows_i] @ self.dual_coef[j - 1, rows_i]
                            + kernel[:, rows_j] @ self.dual_coef[i, rows_j] + self.intercept[pair])
                votes[:, i] += decision > 0
                votes[:, j] += decision <= 0
                pair += 1
        return self.classes[np.argmax(votes, axis=1)]  # the first of equal votes, as libsvm


@dataclass(frozen=True)
class Neighbours:
    points: np.ndarray
    labels: np.ndarray  # indices into classes
    k: int
    classes: np.ndarray

    def predict(self, features: np.ndarray) -> np.ndarray:
        x = np.asarray(features, dtype=float)
        out = np.empty(len(x), dtype=int)
        for start in range(0, len(x), 512):  # bounded memory: 512 × n distances at a time
            block = x[start:start + 512]
            distances = (np.sum(block * block, axis=1)[:, None] - 2 * block @ self.points.T
                         + np.sum(self.points ** 2, axis=1)[None, :])
            nearest = np.argsort(distances, axis=1, kind="stable")[:, :self.k]
            counts = np.zeros((len(block), len(self.classes)), dtype=int)
            np.add.at(counts, (np.repeat(np.arange(len(block)), self.k), self.labels[nearest].ravel()), 1)
            out[start:start + len(block)] = np.argmax(counts, axis=1)  # the smallest of equally frequent labels
        return self.classes[out]


@dataclass(frozen=True)
class Tree:
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    frequencies: np.ndarray  # (nodes, classes), each leaf's class frequencies

    def leaf_frequencies(self, features32: np.ndarray) -> np.ndarray:
        node = np.zeros(len(features32), dtype=np.intp)
        rows = np.arange(len(features32))
        while True:
            inner = self.left[node] != -1
            if not inner.any():
                return self.frequencies[node]
            at = node[inner]
            go_left = features32[rows[inner], self.feature[at]] <= self.threshold[at]
            node[inner] = np.where(go_left, self.left[at], self.right[at])


@dataclass(frozen=True)
class Forest:
    trees: tuple[Tree, ...]
    classes: np.ndarray

    def predict(self, features: np.ndarray) -> np.ndarray:
        x = np.asarray(features, dtype=np.float32)  # scikit-learn's trees compare float32 inputs
        mean = sum(tree.leaf_frequencies(x) for tree in self.trees) / len(self.trees)
        return self.classes[np.argmax(mean, axis=1)]


def export(model):
    """The numpy predictor of a fitted model (runs where scikit-learn is imported: the training child)."""
    from sklearn.dummy import DummyClassifier
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if isinstance(model, Pipeline):
        scaler, inner = model.steps[0][1], model.steps[-1][1]
        if len(model.steps) != 2 or not isinstance(scaler, StandardScaler):
            raise TypeError("only a StandardScaler followed by a classifier can be exported")
        return Standardised(np.asarray(scaler.mean_, dtype=float), np.asarray(scaler.scale_, dtype=float),
                            export(inner))
    if isinstance(model, DummyClassifier):
        # Its prediction reads only the row count; scikit-learn 1.4's DummyClassifier keeps no n_features_in_.
        return Constant(int(model.predict(np.zeros((1, getattr(model, "n_features_in_", 1))))[0]))
    if isinstance(model, LogisticRegression):
        return Linear(model.coef_.copy(), model.intercept_.copy(), model.classes_.copy())
    if isinstance(model, SVC):
        if model.kernel != "rbf":
            raise TypeError("only the RBF kernel is exported")
        return KernelMachine(model.support_vectors_.copy(), model._dual_coef_.copy(), model._intercept_.copy(),
                             model._n_support.copy(), float(model._gamma), model.classes_.copy())
    if isinstance(model, KNeighborsClassifier):
        if model.weights != "uniform" or model.effective_metric_ != "euclidean":
            raise TypeError("only uniform euclidean neighbours are exported")
        return Neighbours(model._fit_X.copy(), model._y.copy(), int(model.n_neighbors), model.classes_.copy())
    if isinstance(model, RandomForestClassifier):
        trees = []
        for estimator in model.estimators_:
            tree = estimator.tree_
            values = tree.value[:, 0, :]
            frequencies = values / np.maximum(values.sum(axis=1, keepdims=True), np.finfo(float).tiny)
            trees.append(Tree(tree.children_left.copy(), tree.children_right.copy(), tree.feature.copy(),
                              tree.threshold.copy(), frequencies))
        return Forest(tuple(trees), model.classes_.copy())
    return model  # already free of scikit-learn (RegularisedLogistic)
