"""Skellam noise on a vector release (privacy-budget.md, "Mechanisms"): a neighbour moves the integer vector
by at most Δ₁ in L1 and Δ₂ in L2, and every coordinate carries Sk(μ) (the sum of the contributors' shares,
mpdp.privacy.skellam's sampler). Used where the sensitivity is a norm ball, not a count of unit shifts: the
Flower integration's DP-FedAvg deltas, clipped in L2 and rounded to the grid.

Accounting: Rényi DP by the bound of Agarwal, Kairouz & Liu (2021, "The Skellam Mechanism for Differentially
Private Federated Learning", Theorem 3.5 / Corollary 3.6), for every order α > 1:

    ε(α) ≤ α·Δ₂²/(2μ) + min(((2α − 1)·Δ₂² + 6·Δ₁)/(4μ²), 3·Δ₁/(2μ)),

the Gaussian's α·Δ₂²/(2μ) plus a correction for the integer lattice. Releases compose by adding their RDP
curves (exact for RDP); the total is converted to (ε, δ) by dp-accounting's `compute_epsilon` (Canonne, Kamath
& Steinke's conversion). For a given shift vector v the exact divergence is Σ_i D_α(Sk(μ) + v_i ‖ Sk(μ)),
computable from the pmf (`exact_rdp`); the bound holds for every v in the ball, which a single v's exact value
does not tell, so the bound is what is charged and `exact_rdp` is its check (tests/test_privacy_vector_skellam.py).

Truncation: shares are kept in [−B, B] (redrawn outside). Over a run whose shares were drawn `draws` times in
all, the released sums are within total variation η = draws·P(|Sk(μ_i)| > B) of the untruncated ones, which
costs (1 + e^ε)·η of δ at the run's ε. B is sized in advance for a largest ε and a largest number of draws; the
caller must refuse to release beyond them (`truncation_delta` says what the truncation really costs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpdp.privacy import skellam

RDP_ORDERS = skellam.RDP_ORDERS
# mpdp.privacy.composition composes these guarantees among themselves in RDP, from the releases their "pld"
# field lists ({"kind": "skellam-rdp", "releases": [[μ, Δ₁, Δ₂], ...]}), and with others by basic composition.


def rdp_bound(alpha: float, mu: float, l1: float, l2: float) -> float:
    """The paper's RDP bound at order α for Sk(μ) per coordinate and sensitivities Δ₁ (L1), Δ₂ (L2)."""
    if not (alpha > 1 and mu > 0 and l1 >= 0 and l2 >= 0):
        raise ValueError("need α > 1, μ > 0 and non-negative sensitivities")
    return alpha * l2**2 / (2 * mu) + min(((2 * alpha - 1) * l2**2 + 6 * l1) / (4 * mu**2), 3 * l1 / (2 * mu))


def exact_rdp(alpha: float, mu: float, shifts: list[int]) -> float:
    """D_α(Sk(μ)^d + v ‖ Sk(μ)^d) for one integer shift vector v, from the pmf: product distributions, so the
    coordinates' divergences add. Independent of the bound above (numeric sums of e^(−μ)·I_k(μ))."""
    import numpy as np
    from scipy.special import ive, logsumexp

    window = int(40 * math.sqrt(mu) + 40 + max((abs(s) for s in shifts), default=0))
    support = np.arange(-window, window + 1)
    with np.errstate(divide="ignore"):
        log_q = np.log(ive(np.abs(support), mu))
    total = 0.0
    for shift in shifts:
        if shift == 0:
            continue
        with np.errstate(divide="ignore"):
            log_p = np.log(ive(np.abs(support - shift), mu))
        terms = alpha * log_p + (1 - alpha) * log_q
        total += float(logsumexp(terms[np.isfinite(terms)])) / (alpha - 1)
    return total


@dataclass(frozen=True)
class VectorRelease:
    """One release: Sk(mu) on every coordinate, a neighbour (one `unit`) moving it by ≤ l1 in L1, ≤ l2 in L2."""

    mu: float
    l1: float
    l2: float
    unit: str = "client"

    def rdp(self) -> list[float]:
        return [rdp_bound(alpha, self.mu, self.l1, self.l2) for alpha in RDP_ORDERS]


def epsilon(releases: list[VectorRelease], delta: float) -> float:
    """ε at δ of the releases composed: their RDP curves add, then dp-accounting converts."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    if not releases or not 0 < delta < 1:
        raise ValueError("need at least one release and 0 < δ < 1")
    total = [sum(values) for values in zip(*(release.rdp() for release in releases))]
    value, _ = compute_epsilon(RDP_ORDERS, total, delta)
    return float(value)


def truncation_delta(epsilon_value: float, share_mu: float, bound: int, draws: int) -> float:
    """(1 + e^ε)·draws·P(|Sk(μ_i)| > B): the δ that keeping `draws` shares in [−B, B] costs at ε."""
    if epsilon_value > 700:
        return math.inf
    return (1 + math.exp(epsilon_value)) * draws * skellam.tail_bound(share_mu, bound)


def sized_bound(share_mu: float, draws: int, max_epsilon: float, delta: float) -> int:
    """Smallest B whose truncation costs at most δ/1000 for up to `draws` shares at any ε ≤ max_epsilon."""
    return skellam.truncation_bound(share_mu, draws, max_epsilon, delta)
