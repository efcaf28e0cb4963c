"""Binomial mechanism: exact noise shares and the number of tosses N (dppp.md, "Setup").

One released histogram changes in two coordinates by ±1 when one teacher's
record changes (L1 sensitivity 2). Each coordinate carries independent
Bin(N, ½) noise, so one query is the composition of a +1 and a −1 shift of
Bin(N, ½); by the symmetry of Bin(N, ½) both have the same privacy-loss
distribution. Q queries compose 2Q such shifts. The PLD is built by Google's
dp-accounting with pessimistic rounding, so the δ it reports is an upper
bound that converges to the exact value; the edge outcome x = 0, impossible
under the shifted distribution, is infinite loss and counts in δ.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mpdp.privacy.accountant_process import in_accountant
from mpdp.privacy.collusion import COLLUDING_CONTRIBUTORS, calibrated_contributors, check_colluding, noise_bearing
from mpdp.privacy.search import smallest_private

DISCRETIZATION = 1e-4
# Outcomes with log-probability below this go to the infinite-loss mass (pessimistic).
LOG_MASS_TRUNCATION = -60.0


# A contributor draws N_i CSPRNG bits per released value (popcounts): 2^32 bits is about 3 s of sampling.
MAX_NOISE_BITS_PER_CONTRIBUTOR = 1 << 32
MAX_TOTAL_TOSSES = 1 << 24  # N beyond this (ε ≲ 0.03 at Q = 40) costs seconds of sampling per teacher and round
# Outcomes further than this many standard deviations (√N/2) from the mean have log-probability below
# LOG_MASS_TRUNCATION (−2t²/N at distance t), so the PLD's support is O(√N), not O(N).
_SUPPORT_SIGMAS = 16


@lru_cache(maxsize=256)
def _shift_pld(tosses: int):
    window = int(_SUPPORT_SIGMAS * math.sqrt(tosses) / 2) + 10
    support = np.arange(max(0, tosses // 2 - window), min(tosses + 2, tosses // 2 + window + 2))
    # Imported on use: the accountant pulls in most of scipy, which a role at rest does not need.
    from dp_accounting.pld import privacy_loss_distribution
    from scipy.stats import binom

    log_pmf = binom.logpmf(support, tosses, 0.5)
    shifted = binom.logpmf(support - 1, tosses, 0.5)
    keep_upper = log_pmf > LOG_MASS_TRUNCATION
    keep_lower = shifted > LOG_MASS_TRUNCATION
    upper = {int(x): float(v) for x, v in zip(support[keep_upper], log_pmf[keep_upper])}
    lower = {int(x): float(v) for x, v in zip(support[keep_lower], shifted[keep_lower])}
    return privacy_loss_distribution.from_two_probability_mass_functions(
        upper,
        lower,
        pessimistic_estimate=True,
        value_discretization_interval=DISCRETIZATION,
        log_mass_truncation_bound=LOG_MASS_TRUNCATION,
    )


def shifts_pld(tosses: int, shifts: int):
    """PLD of `shifts` released coordinates, each moved by 1 by the neighbour, with Bin(tosses, ½) noise each."""
    return _shift_pld(tosses).self_compose(shifts)


def query_pld(tosses: int, queries: int = 1):
    """PLD of `queries` released histograms with Bin(tosses, ½) noise per coordinate (two shifts each)."""
    return shifts_pld(tosses, 2 * queries)


@lru_cache(maxsize=256)
@in_accountant
def delta_for(tosses: int, epsilon: float, queries: int) -> float:
    return float(query_pld(tosses, queries).get_delta_for_epsilon(epsilon))


@lru_cache(maxsize=256)
@in_accountant
def epsilon_for(tosses: int, delta: float, queries: int) -> float:
    return float(query_pld(tosses, queries).get_epsilon_for_delta(delta))


@lru_cache(maxsize=256)
@in_accountant
def epsilon_for_shifts(tosses: int, delta: float, shifts: int) -> float:
    return float(shifts_pld(tosses, shifts).get_epsilon_for_delta(delta))


def minimal_tosses(epsilon: float, delta: float, queries: int) -> int:
    """Smallest even N whose Q-fold composition of histogram releases is (ε, δ)-DP."""
    if queries < 1:
        raise ValueError("need at least one query")
    return minimal_tosses_for_shifts(epsilon, delta, 2 * queries)


@lru_cache(maxsize=256)
@in_accountant
def minimal_tosses_for_shifts(epsilon: float, delta: float, shifts: int) -> int:
    """Smallest even N such that `shifts` unit shifts of Bin(N, ½) compose to (ε, δ)-DP: doubling, then bisection."""
    if epsilon <= 0 or not 0 < delta < 1 or shifts < 1:
        raise ValueError("need ε > 0, 0 < δ < 1 and at least one released coordinate")

    def private(tosses: int) -> bool:
        return float(shifts_pld(tosses, shifts).get_delta_for_epsilon(epsilon)) <= delta

    high = 2
    while not private(high):
        high *= 2
        if high > MAX_TOTAL_TOSSES:
            raise ValueError(f"(ε = {epsilon:g}, δ = {delta:g}) over {shifts} shifted coordinates needs more than "
                             f"{MAX_TOTAL_TOSSES} Binomial tosses: raise ε or δ, or release fewer values")
    return smallest_private(high // 2 if high > 2 else 0, high, 2, private)  # over even N


@lru_cache(maxsize=256)
@in_accountant
def check_minimal_tosses(tosses: int, epsilon: float, delta: float, queries: int) -> None:
    """Raise ValueError unless N is the smallest even N that `minimal_tosses` would find: N private and
    N − 2 not. Two accountant evaluations instead of a search, so one role searches and every other role
    checks (dppp.md, "Setup"); privacy is monotone in N (more tosses = independent noise added)."""
    if tosses < 2 or tosses % 2 or tosses > MAX_TOTAL_TOSSES:
        raise ValueError(f"N = {tosses} must be even and in [2, {MAX_TOTAL_TOSSES}]")
    if delta_for(tosses, epsilon, queries) > delta:
        raise ValueError(f"N = {tosses} Binomial tosses do not give (ε = {epsilon:g}, δ = {delta:g}) over "
                         f"{queries} queries")
    if tosses > 2 and delta_for(tosses - 2, epsilon, queries) <= delta:
        raise ValueError(f"N = {tosses} is not the smallest number of tosses for (ε = {epsilon:g}, "
                         f"δ = {delta:g}): N − 2 suffices")


def theorem1_style_tosses(epsilon: float, delta: float, queries: int) -> int:
    """What a per-coordinate analytic bound would need, for comparison in reports.

    The paper's Theorem 1 is of the form N ≥ c·ln(2/δ)/ε² (its constants did not
    survive in our copy of the text); we use c = 8, the Gaussian-limit constant
    the paper says it matches, on each of the 2Q coordinate releases with the
    budget split by basic composition.
    """
    releases = 2 * queries
    per_epsilon, per_delta = epsilon / releases, delta / releases
    return math.ceil(8 * math.log(2 / per_delta) / per_epsilon**2)


@dataclass(frozen=True)
class BinomialCalibration:
    """Everything a DPPP session derives from (ε, δ, Q, K, τ) and N; public and deterministic."""

    epsilon: float
    delta: float
    queries: int
    teachers: int
    honest_fraction: float  # τ
    total_tosses: int  # N, the smallest that gives (ε, δ): `minimal` finds it, `check` confirms it
    colluding: int = COLLUDING_CONTRIBUTORS  # c: the most teachers one principal controls

    def __post_init__(self):
        check_colluding(self.min_contributors, self.colluding)

    @classmethod
    def minimal(cls, epsilon: float, delta: float, queries: int, teachers: int,
                honest_fraction: float, colluding: int = COLLUDING_CONTRIBUTORS) -> "BinomialCalibration":
        return cls(epsilon, delta, queries, teachers, honest_fraction, minimal_tosses(epsilon, delta, queries),
                   colluding)

    def check(self) -> None:
        check_minimal_tosses(self.total_tosses, self.epsilon, self.delta, self.queries)

    @property
    def min_contributors(self) -> int:
        return math.ceil(self.honest_fraction * self.teachers - 1e-9)

    @property
    def tosses_per_teacher(self) -> int:
        """N_i = ⌈N / (max(c + 1, m) − c)⌉ with m = max(2, ⌈τK⌉), rounded up to even so the mean N_i/2 is an
        integer: any decryptable sum keeps N tosses without the colluding principal's c (mpdp.privacy.collusion)."""
        share = -(-self.total_tosses // calibrated_contributors(self.min_contributors, self.colluding))
        return share + share % 2

    def guaranteed_tosses(self, contributors: int) -> int:
        """Tosses in a sum of `contributors` shares that the aggregator and the malicious principal do not know."""
        return noise_bearing(contributors, self.colluding) * self.tosses_per_teacher

    def report(self, contributors: int | None = None) -> dict:
        tosses = self.guaranteed_tosses(self.min_contributors if contributors is None else contributors)
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "unit": "one training record of one teacher (replacement)",
            "mechanism": "binomial",
            "sensitivity": "L1 2 (two histogram coordinates move by 1)",
            "queries": self.queries,
            "epsilon_per_query": epsilon_for(tosses, self.delta, 1),
            "epsilon_all_queries": epsilon_for(tosses, self.delta, self.queries),
            "total_tosses_required": self.total_tosses,
            "tosses_per_teacher": self.tosses_per_teacher,
            "tosses_guaranteed": tosses,
            "colluding_contributors": self.colluding,
            "contributors_counted": noise_bearing(self.min_contributors if contributors is None else contributors,
                                                  self.colluding),
            "theorem1_style_tosses": theorem1_style_tosses(self.epsilon, self.delta, self.queries),
            "accountant": "dp-accounting PLD (pessimistic, 1e-4 discretisation), 2Q-fold composition",
        }


def sample_binomial(tosses: int, count: int) -> list[int]:
    """`count` exact Bin(tosses, ½) draws: popcounts of CSPRNG bits."""
    return [secrets.randbits(tosses).bit_count() if tosses else 0 for _ in range(count)]
