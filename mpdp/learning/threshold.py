"""The decision threshold of a released linear score, chosen on public rows only (data-and-metrics.md,
"Threshold").

A fixed cut at score 0 sends every row to the majority side when the intercept dominates the score: a skewed
table, or noise on the intercept's coefficients (Du's functional mechanism). The rule here reads the released
model and the public, unlabelled rows, never a training row or a label, so it is post-processing and costs no
privacy budget:

    π̂ = mean over the public rows of σ(s(x))   (the model's own estimate of the positive rate)
    predict 1 where σ(s(x)) > π̂, i.e. s(x) > logit(π̂)

σ(s) > π is the cut that maximises balanced accuracy when σ(s) is p(y = 1 | x) (the Bayes rule for equal class
weights). With no public rows the cut stays at 0.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

RULE = "logit of the mean predicted probability on the public rows (post-processing: no budget)"
FIXED = "0 (no public rows to choose it on)"
LIMIT = 1e-6  # π̂ clipped into [LIMIT, 1 − LIMIT]: a saturated model keeps a finite cut


def on_public_rows(public_scores: np.ndarray) -> dict:
    """The cut for scores s(x), from the released model's scores on the public rows."""
    public_scores = np.asarray(public_scores, dtype=float)
    if public_scores.size == 0 or not np.all(np.isfinite(public_scores)):
        return {"value": 0.0, "rule": FIXED, "public_rows": int(public_scores.size)}
    rate = float(np.clip(np.mean(expit(public_scores)), LIMIT, 1 - LIMIT))
    return {"value": math.log(rate / (1 - rate)), "rule": RULE, "public_rows": int(public_scores.size),
            "estimated_positive_rate": rate}


def predict(scores: np.ndarray, threshold: dict) -> np.ndarray:
    """Class 1 where the score exceeds the cut."""
    return (np.asarray(scores, dtype=float) > threshold["value"]).astype(int)
