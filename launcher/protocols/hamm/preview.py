"""The operator's preview of Hamm's release without noise, for the check before any budget is spent: the parties'
local models (those of a random sample of at most `SAMPLED_PARTIES` parties, from the operator's copy of their
data) vote on Charlie's public rows, and Charlie's fit on those fractions gives the scores whose spread the
privacy noise must stay below.

Why: the regulariser's bound √(2·ln C/λ) is the largest score any release could have, and at λ = 10⁻⁴ it is
hundreds of times what a fit to vote fractions reaches: on a9a with M = 10 000 parties of about three rows each the
fit's scores spread 0.45 on the public rows, the noise's 22, and the check that read the bound said the noise
was 0.19× the signal while the release ranked the test rows at AUC 0.33. No protocol role sees the preview and no
budget is spent on it; without the parties' data files (a deployment this launcher did not split) there is none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from launcher.common import noise as shared

SAMPLED_PARTIES = 1000  # α̂'s sampling error per public row is at most √(¼/1000) ≈ 0.016 beyond this many parties
_cache: dict[tuple, tuple[np.ndarray, int]] = {}


def vote_fractions(topology, client_data: dict) -> tuple[np.ndarray, int] | None:
    """(α̂ N × C, parties read): the share of the sampled parties' local models voting each class on each public
    row, or None without the parties' data files or public rows."""
    from mpdp.learning import datasets, models

    entries = list(getattr(topology, "parties", ()))
    public = client_data.get("public_features")
    if not entries or public is None or len(public) == 0 or any(getattr(e, "data", None) is None for e in entries):
        return None
    files = [Path(entry.data) for entry in entries]
    names = [getattr(entry, "model", None) or models.DEFAULT_TEACHER_MODEL for entry in entries]
    chosen = np.sort(np.random.default_rng(0).choice(len(files), size=min(len(files), SAMPLED_PARTIES),
                                                     replace=False))
    if not all(files[i].is_file() for i in chosen):
        return None
    key = (shared.files_key([files[i] for i in chosen]), tuple(names), np.asarray(public).tobytes())
    if key in _cache:
        return _cache[key]
    classes = int(client_data["classes"])
    votes = np.zeros((len(public), classes))
    rows = np.arange(len(public))
    for i in chosen:
        features, labels = datasets.load_part(files[i])[:2]
        model = models.train(names[i], features, labels, classes)
        votes[rows, np.asarray(model.predict(public), dtype=int)] += 1
    found = (votes / len(chosen), len(chosen))
    _cache.clear()  # one deployment's preview at a time: the fix's search asks again at other λ and ε
    _cache[key] = found
    return found


def score_spread(method: str, regularization: float, public: np.ndarray, fractions: np.ndarray) -> float | None:
    """The standard deviation over the public rows of Charlie's class scores x·w_s (averaged over the classes), w_s
    fitted as Charlie fits it (hamm.md step 4): how far apart the release without noise sets the rows, which is
    what the noise on a score must stay below for the release to keep that ranking. Whether the ranking itself is
    good is not judged here (the report's baselines show it). None where the minimiser cannot be made exact."""
    from mpdp.learning.logistic import InexactMinimiser, fit
    from mpdp.protocols.hamm import training
    from mpdp.protocols.hamm.parameters import GRADIENT_TOLERANCE

    targets = training.targets_from_counts(fractions, 1, method)
    try:
        weights = fit(public, targets, regularization, GRADIENT_TOLERANCE)
    except InexactMinimiser:
        return None
    scores = public @ (weights if weights.ndim == 1 else weights.T)
    return float(np.mean(np.std(scores, axis=0)))
