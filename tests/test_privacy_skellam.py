"""Skellam noise shares: the accounting pinned to an independent computation, the calibration minimal and
checked, the truncation bound, and the shares' distribution."""

import math

import numpy as np
import pytest
from scipy.stats import skellam

from mpdp.privacy import skellam as sk


def _exact_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of one +1 shift of Sk(μ), summed outcome by outcome (both directions; the larger, by symmetry equal)."""
    support = np.arange(-2000, 2002)
    p, q = skellam.pmf(support, mu / 2, mu / 2), skellam.pmf(support - 1, mu / 2, mu / 2)
    return float(max(np.maximum(p - math.exp(epsilon) * q, 0).sum(), np.maximum(q - math.exp(epsilon) * p, 0).sum()))


@pytest.mark.parametrize("mu, epsilon", [(4.0, 0.5), (25.0, 0.2), (100.0, 0.05)])
def test_the_pld_matches_an_independent_sum_over_outcomes(mu, epsilon):
    assert sk.delta_for(mu, epsilon, 1) == pytest.approx(_exact_delta(mu, epsilon), rel=0.02, abs=1e-9)


def test_a_known_value_is_pinned_and_plain_probabilities_would_give_infinity():
    """dp-accounting's from_two_probability_mass_functions takes natural-log probabilities. Given plain ones it
    does not fail: it silently answers something else (ε = ∞ in some versions, here a far too small ε). Our PLD
    must give the value computed independently above."""
    from dp_accounting.pld import privacy_loss_distribution

    assert _exact_delta(25.0, 0.2) == pytest.approx(0.018436, rel=1e-4)  # δ(0.2), one shift of Sk(25), by the sum
    assert sk.delta_for(25.0, 0.2, 1) == pytest.approx(0.018436, rel=0.01)  # pessimistic, so ≥ and close
    support = np.arange(-200, 202)
    plain = privacy_loss_distribution.from_two_probability_mass_functions(
        {int(x): float(v) for x, v in zip(support, skellam.pmf(support, 12.5, 12.5))},
        {int(x): float(v) for x, v in zip(support, skellam.pmf(support - 1, 12.5, 12.5))})
    wrong, right = plain.get_epsilon_for_delta(1e-5), sk.epsilon_for(25.0, 1e-5, 1)
    assert math.isinf(wrong) or abs(wrong - right) > 0.5 * right


def test_the_calibration_is_minimal_on_its_grid_and_every_role_can_check_it():
    grid = sk.minimal_grid(4.0, 1e-5, 20)
    sk.check_minimal_grid(grid, 4.0, 1e-5, 20)
    assert sk.delta_for(sk.mu_of(grid), 4.0, 20) <= 1e-5 < sk.delta_for(sk.mu_of(grid - 1), 4.0, 20) * 1.001
    for wrong, reason in ((grid - 1, "does not give"), (grid + 1, "not the smallest")):
        with pytest.raises(ValueError, match=reason):
            sk.check_minimal_grid(wrong, 4.0, 1e-5, 20)


def test_the_rdp_bound_is_looser_than_the_exact_accounting():
    mu = sk.mu_of(sk.minimal_grid(2.0, 1e-5, 40))
    pld = sk.epsilon_for(mu, 1e-5, 40)
    assert pld <= 2.0 < sk.rdp_epsilon(mu, 1e-5, 40)


def test_skellam_needs_about_the_binomials_variance_at_the_same_privacy():
    """At the same (ε, δ) and queries the two need nearly the same noise variance (Bin(N, ½) has N/4)."""
    from mpdp.privacy.binomial import minimal_tosses

    for epsilon, queries in ((10.0, 200), (1.0, 10)):
        mu = sk.mu_of(sk.minimal_grid(epsilon, 1e-5, 2 * queries))
        binomial_variance = minimal_tosses(epsilon, 1e-5, queries) / 4
        assert 0.8 < mu / binomial_variance < 1.25


def test_truncation_costs_at_most_a_thousandth_of_delta():
    """B is the smallest bound whose tail (2·P(Pois(μ_i/2) > B), an upper bound on P(|Sk| > B)) fits the budget."""
    from scipy.stats import poisson

    share_mu, draws, epsilon, delta = 14.4, 20_000, 10.0, 1e-5
    bound = sk.truncation_bound(share_mu, draws, epsilon, delta)
    cost = (1 + math.exp(epsilon)) * draws * 2 * poisson.sf(bound, share_mu / 2)
    assert cost <= delta / 1000 < (1 + math.exp(epsilon)) * draws * 2 * poisson.sf(bound - 1, share_mu / 2)
    assert skellam.sf(bound, 7.2, 7.2) <= poisson.sf(bound, 7.2)  # the bound is an upper bound


def test_shares_have_the_skellam_mean_and_variance_and_stay_in_bounds():
    shares = np.array(sk.sample_shares(14.4, 40, 200_000))
    assert abs(shares.mean()) < 0.05 and shares.var() == pytest.approx(14.4, rel=0.03)
    assert shares.min() >= -40 and shares.max() <= 40
    assert set(sk.sample_shares(3.0, 1, 1000)) <= {-1, 0, 1}  # redrawn until inside [−B, B]


def test_the_grid_is_bounded_and_its_top_is_checked_like_any_point():
    """μ ≤ 2^24; a request naming the top of the grid is refused as not the smallest (cheaply: the PMF comes
    from the scaled Bessel function), and one beyond it before any accounting."""
    assert sk.mu_of(sk.MAX_GRID) == 2**24
    with pytest.raises(ValueError, match="not the smallest"):
        sk.check_minimal_grid(sk.MAX_GRID, 0.01, 1e-5, 2)
    with pytest.raises(ValueError, match="grid index"):
        sk.check_minimal_grid(sk.MAX_GRID + 1, 1.0, 1e-5, 2)


def test_the_bessel_pmf_equals_scipys_skellam():
    support = np.arange(-150, 151)
    for mu in (3.0, 100.0):
        expected = skellam.logpmf(support, mu / 2, mu / 2)
        kept = expected > sk.LOG_MASS_TRUNCATION
        assert np.allclose(sk._log_pmf(support, mu)[kept], expected[kept], atol=1e-10)
