"""How wide one release's figures are expected to be from the privacy noise alone (data-and-metrics.md,
"Spread of a single draw"): the standard deviation of accuracy, balanced accuracy and AUC over fresh draws of
the mechanism's noise, each scored on the same test rows and cut on the same public rows as the release.

Two estimates, each named in its `method`:

- `around_release` (output perturbation: Pathak, Hamm): w̃ + η′ with η′ drawn from the release's own noise
  distribution. It reads the release and the mechanism's public parameters only. Its bias: it is centred on
  w̃ = w* + η, one draw away from the non-private w*, so each redraw carries the noise twice (covariance 2Σ
  around w*, not Σ). When the noise is small against w* the two spreads nearly agree; when it dominates, the
  figure is the spread around a noise-dominated model and says little about how good w* is.
- `over_models` (Du's objective and functional noise, which enters the objective's coefficients): the models
  of R reruns of the protocol's reference with fresh noise on the parties' data, so it is the operator's view
  (it needs the data files, as the non-private baselines do) and unbiased for the noise's spread given the data.

Neither includes the test rows' own spread (the bootstrap in evaluation.sampling_spread).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from mpdp.learning import evaluation, threshold

DRAWS = 100  # noise redraws around a release: each is one matrix-vector product on the test rows
RERUNS = 10  # reruns of a reference: each is a whole training


def _scored(scores: np.ndarray, public_scores: np.ndarray, labels: np.ndarray) -> dict:
    cut = threshold.on_public_rows(public_scores)
    return evaluation.metrics(labels, threshold.predict(scores, cut), scores)


def _summary(found: list[dict], method: str) -> dict:
    result: dict = {"draws": len(found), "method": method}
    for key in ("accuracy", "balanced_accuracy", "auc"):
        values = [m[key] for m in found if key in m]
        if len(values) > 1:
            result[key] = float(np.std(values, ddof=1))
            result[f"{key}_mean"] = float(np.mean(values))
    result["one_class_draws"] = sum(bool(m["one_class"]) for m in found)
    return result


def around_release(released: np.ndarray, draw: Callable[[int], np.ndarray], test_x: np.ndarray,
                   test_y: np.ndarray, public_x: np.ndarray, mechanism: str, draws: int = DRAWS) -> dict:
    """std of each metric of released + draw(k), k = 0..draws−1, a binary linear score x·w cut on the public rows;
    `draw(k)` returns one fresh noise vector of the release's distribution."""
    found: list[dict] = []
    for k in range(draws):
        model = released + np.asarray(draw(k), dtype=float).reshape(released.shape)
        found.append(_scored(test_x @ model, public_x @ model, test_y))
    return _summary(found, f"{mechanism} redrawn {draws}× around the released model, on the {len(test_y)} test "
                           "rows, each cut on the public rows; centred on the release, so each redraw carries the "
                           "noise twice")


def over_models(models: list[np.ndarray], score: Callable[[np.ndarray, np.ndarray], np.ndarray], test_x: np.ndarray,
                test_y: np.ndarray, public_x: np.ndarray, mechanism: str) -> dict:
    """std of each metric over the models of reruns with fresh noise (`score(model, rows)` the release's score)."""
    found = [_scored(score(model, test_x), score(model, public_x), test_y) for model in models]
    return _summary(found, f"{mechanism}: {len(models)} reruns of the protocol's reference on the parties' data "
                           f"with fresh noise (operator's view), on the {len(test_y)} test rows, each cut on the "
                           "public rows")


def unavailable(reason: str) -> dict:
    return {"unavailable": reason}
