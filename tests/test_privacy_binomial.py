import math

import numpy as np
import pytest

from mpdp.privacy.binomial import (
    BinomialCalibration,
    delta_for,
    minimal_tosses,
    sample_binomial,
    theorem1_style_tosses,
)


@pytest.mark.parametrize("epsilon, queries", [(1.0, 1), (10.0, 20)])
def test_minimal_tosses_is_minimal_and_sufficient(epsilon, queries):
    tosses = minimal_tosses(epsilon, 1e-5, queries)
    assert tosses % 2 == 0
    assert delta_for(tosses, epsilon, queries) <= 1e-5
    assert delta_for(tosses - 2, epsilon, queries) > 1e-5


def test_exact_accounting_beats_the_analytic_bound():
    assert minimal_tosses(1.0, 1e-5, 1) < theorem1_style_tosses(1.0, 1e-5, 1)


def test_more_queries_or_less_epsilon_need_more_noise():
    assert minimal_tosses(10.0, 1e-5, 40) > minimal_tosses(10.0, 1e-5, 20)
    assert minimal_tosses(5.0, 1e-5, 20) > minimal_tosses(10.0, 1e-5, 20)


def test_edge_mass_counts_in_delta():
    # With N tosses, the outcome 0 (probability 2^-N) is impossible after a +1 shift: δ ≥ 2^-N.
    assert delta_for(10, 50.0, 1) >= 2.0**-10


def test_shares_cover_the_total_with_any_tau_fraction():
    calibration = BinomialCalibration.minimal(10.0, 1e-5, 20, 7, 2 / 3)
    assert calibration.min_contributors == 5
    assert calibration.tosses_per_teacher % 2 == 0
    assert calibration.guaranteed_tosses(calibration.min_contributors) >= calibration.total_tosses
    report = calibration.report()
    assert report["epsilon_all_queries"] <= 10.0 and report["mechanism"] == "binomial"


def test_sampling_is_binomial():
    draws = np.array(sample_binomial(100, 4000))
    assert draws.min() >= 0 and draws.max() <= 100
    assert abs(draws.mean() - 50) < 4 * 5 / math.sqrt(4000) * 10
    assert abs(draws.std() - 5) < 0.5
    assert sample_binomial(0, 3) == [0, 0, 0]


def test_the_binomial_pld_is_pinned_to_an_outcome_by_outcome_sum():
    """Independently: δ(ε) of one unit shift of Bin(100, ½) is max over the two directions of
    Σ_k max(0, P(k) − e^ε·P′(k)) = 0.0184462 at ε = 0.2; the accountant's pessimistic PLD is at most 0.1 % above."""
    import math

    import numpy as np
    from scipy.stats import binom

    from mpdp.privacy import binomial

    support = np.arange(0, 102)
    p, q = binom.pmf(support, 100, 0.5), binom.pmf(support - 1, 100, 0.5)
    exact = max(np.sum(np.maximum(0, p - math.exp(0.2) * q)), np.sum(np.maximum(0, q - math.exp(0.2) * p)))
    assert exact == pytest.approx(0.0184462, abs=1e-7)
    accounted = binomial.shifts_pld(100, 1).get_delta_for_epsilon(0.2)
    assert exact <= accounted <= exact * 1.001
