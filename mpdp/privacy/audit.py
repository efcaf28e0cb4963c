"""Empirical lower bounds on ε (privacy.md, last paragraph): a distinguishing test run on releases from two
neighbouring data sets, turned into ε by Clopper–Pearson confidence bounds.

For a test that says "D" on a set S of outcomes, (ε, δ)-DP implies P_D(S) ≤ e^ε·P_D′(S) + δ, so
ε ≥ ln((P_D(S) − δ) / P_D′(S)) and the same with D and D′ swapped. With the true rates replaced by a
lower confidence bound on P_D(S) and an upper one on P_D′(S) (each at 1 − α/2·m for m candidate tests,
Bonferroni), the result is a lower bound on the mechanism's ε at confidence 1 − α. The test's threshold is
chosen on one half of the samples and evaluated on the other, so the choice does not bias the bound.

`histogram_statistic` adds DP-Auditorium's histogram estimator for low-dimensional integer releases: the
likelihood ratio of each outcome estimated on the picking half, so the test's set S can be any set of outcomes
(a residue class, a tail, a spike), not only a half-line. `resolution` states what the bound can resolve: a
bound below the claim is never "within", only "inconclusive below ε ≈ X at this many trials".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """Two one-sided bounds, each holding with probability `confidence`."""
    from scipy.stats import beta

    alpha = 1 - confidence
    lower = 0.0 if successes == 0 else float(beta.ppf(alpha, successes, trials - successes + 1))
    upper = 1.0 if successes == trials else float(beta.ppf(1 - alpha, successes + 1, trials - successes))
    return lower, upper


@dataclass(frozen=True)
class AuditResult:
    epsilon_lower_bound: float
    test: str
    threshold: float
    rate_d: float  # P_D(S) observed on the evaluation half
    rate_d_prime: float
    trials: int  # per data set, evaluation half
    per_bound_confidence: float = 0.975
    # hits on the denominator's evaluation releases for every threshold of the strongest test's statistic
    denominator_hits: tuple[int, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "denominator_hits"}


def _epsilon_from_rates(hits_d: int, hits_d_prime: int, trials: int, delta: float, confidence: float) -> float:
    low_d, _ = clopper_pearson(hits_d, trials, confidence)
    _, high_d_prime = clopper_pearson(hits_d_prime, trials, confidence)
    if low_d - delta <= 0 or high_d_prime <= 0:
        return 0.0
    return max(0.0, math.log((low_d - delta) / high_d_prime))


def epsilon_lower_bound(statistics_d: dict[str, np.ndarray], statistics_d_prime: dict[str, np.ndarray],
                        delta: float, confidence: float = 0.95) -> AuditResult:
    """The best of every named statistic's threshold tests (both directions, both orders of D and D′), as a
    bound valid at `confidence`.

    Each statistic is an array of one scalar per release (e.g. a projection, or a residue). Thresholds are
    picked on the first half of the releases and scored on the second."""
    candidates = 4 * len(statistics_d)
    per_bound = 1 - (1 - confidence) / (2 * candidates)  # two bounds per candidate test, Bonferroni
    best = AuditResult(0.0, "none", math.nan, math.nan, math.nan, 0, per_bound)
    best_scores: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
    for name, first in statistics_d.items():
        for order, (on_d, on_d_prime) in (("", (first, statistics_d_prime[name])),
                                          (" (D′ over D)", (statistics_d_prime[name], first))):
            half = min(len(on_d), len(on_d_prime)) // 2
            pick_d, score_d = on_d[:half], on_d[half:2 * half]
            pick_d_prime, score_d_prime = on_d_prime[:half], on_d_prime[half:2 * half]
            for direction in (1, -1):  # "D" when direction·statistic ≥ threshold
                threshold = _best_threshold(direction * pick_d, direction * pick_d_prime, delta, per_bound)
                hits_d = int(np.sum(direction * score_d >= threshold))
                hits_d_prime = int(np.sum(direction * score_d_prime >= threshold))
                bound = _epsilon_from_rates(hits_d, hits_d_prime, half, delta, per_bound)
                if bound > best.epsilon_lower_bound or best.test == "none":
                    best = AuditResult(bound, f"{name} {'≥' if direction > 0 else '≤'} threshold{order}",
                                       float(direction * threshold), hits_d / half, hits_d_prime / half, half,
                                       per_bound)
                    best_scores = (direction * score_d, direction * score_d_prime)
    thresholds = np.unique(best_scores[0])
    hits = len(best_scores[1]) - np.searchsorted(np.sort(best_scores[1]), thresholds, side="left")
    return replace(best, denominator_hits=tuple(int(h) for h in np.unique(hits)))


def histogram_statistic(on_d: np.ndarray, on_d_prime: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each release mapped to ln(p̂(x)/q̂(x)), its outcome's likelihood ratio estimated from the picking halves'
    histograms (add-½ smoothing; an outcome unseen there maps to 0). Integer (or integer-row) releases only.
    Thresholding it tests sets of outcomes chosen by the histogram; the scoring halves play no part in it."""
    half = min(len(on_d), len(on_d_prime)) // 2
    keys_d, keys_d_prime = _keys(on_d), _keys(on_d_prime)
    outcomes, inverse = np.unique(np.concatenate([keys_d, keys_d_prime]), return_inverse=True)
    index_d, index_d_prime = inverse[:len(keys_d)], inverse[len(keys_d):]
    counts_d = np.bincount(index_d[:half], minlength=len(outcomes)) + 0.5
    counts_d_prime = np.bincount(index_d_prime[:half], minlength=len(outcomes)) + 0.5
    ratio = np.log(counts_d / counts_d_prime)
    return ratio[index_d], ratio[index_d_prime]


def _keys(releases: np.ndarray) -> np.ndarray:
    releases = np.asarray(releases)
    if not np.issubdtype(releases.dtype, np.integer):
        raise ValueError("the histogram estimator takes integer releases")
    if releases.ndim == 1:
        return releases
    return np.unique(releases, axis=0, return_inverse=True)[1].ravel()


def hockey_stick(on_d: np.ndarray, on_d_prime: np.ndarray, epsilon: float) -> float:
    """The plug-in estimate of the hockey-stick divergence Σ_x max(0, p̂(x) − e^ε·q̂(x)) of two samples of integer
    releases (DP-Auditorium's histogram tester): an (ε, δ) claim says it is at most δ. A point estimate, biased
    up by sampling noise; the verdict comes from the Clopper–Pearson bound."""
    keys_d, keys_d_prime = _keys(on_d), _keys(on_d_prime)
    outcomes, inverse = np.unique(np.concatenate([keys_d, keys_d_prime]), return_inverse=True)
    p = np.bincount(inverse[:len(keys_d)], minlength=len(outcomes)) / len(keys_d)
    q = np.bincount(inverse[len(keys_d):], minlength=len(outcomes)) / len(keys_d_prime)
    return float(max(np.sum(np.maximum(0.0, p - math.exp(epsilon) * q)),
                     np.sum(np.maximum(0.0, q - math.exp(epsilon) * p))))


def resolution(result: AuditResult, claimed_epsilon: float, delta: float) -> float:
    """X: on the half-lines of the strongest test's statistic (their rates on the denominator's data set as
    observed), the ratio P_D(S)/P_D′(S) would have to reach e^X before this many evaluation releases could show
    a bound above the claim. A mechanism whose loss on such events stays below X passes unseen: the audit is
    inconclusive below ε ≈ X. math.inf: no event of the statistic could show it (too few trials)."""
    from scipy.stats import beta

    n = result.trials
    counts = np.array([k for k in result.denominator_hits if 0 < k < n])
    if n == 0 or len(counts) == 0:
        return math.inf
    alpha = 1 - result.per_bound_confidence
    successes = np.arange(1, n + 1)
    lower = beta.ppf(alpha, successes, n - successes + 1)  # increasing in the hits on D
    needed = delta + math.exp(claimed_epsilon) * beta.ppf(1 - alpha, counts + 1, n - counts)
    reachable = needed <= lower[-1]
    if not reachable.any():
        return math.inf
    hits_needed = successes[np.searchsorted(lower, needed[reachable], side="left")]
    return float(np.min(np.log(hits_needed / counts[reachable])))


def _best_threshold(on_d: np.ndarray, on_d_prime: np.ndarray, delta: float, confidence: float) -> float:
    """The threshold whose Clopper–Pearson bound is largest on the picking half (the plug-in ratio would favour
    empty tails, whose confidence bounds are useless)."""
    from scipy.stats import beta

    n, m = len(on_d), len(on_d_prime)
    thresholds = np.unique(on_d)
    hits_d = n - np.searchsorted(np.sort(on_d), thresholds, side="left")
    hits_d_prime = m - np.searchsorted(np.sort(on_d_prime), thresholds, side="left")
    alpha = 1 - confidence
    low_d = np.where(hits_d > 0, beta.ppf(alpha, np.maximum(hits_d, 1), n - hits_d + 1), 0.0)
    high_d_prime = np.where(hits_d_prime < m, beta.ppf(1 - alpha, hits_d_prime + 1, np.maximum(m - hits_d_prime, 1)), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(low_d - delta > 0, np.log(np.maximum(low_d - delta, 1e-300) / high_d_prime), -np.inf)
    return float(thresholds[int(np.argmax(values))])
