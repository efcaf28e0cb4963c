"""The vector Skellam accountant (mpdp.privacy.vector_skellam) against the Rényi divergence computed from the
Skellam pmf, its composition over rounds, and the truncation bound's enforcement (mpdp.flower.noise)."""

import math

import pytest

from mpdp.privacy import composition, skellam, vector_skellam
from mpdp.privacy.composition import Guarantee, compose
from mpdp.privacy.vector_skellam import VectorRelease, exact_rdp, rdp_bound


@pytest.mark.parametrize("mu", [20.0, 200.0])
@pytest.mark.parametrize("alpha", [1.5, 2, 8, 32])
@pytest.mark.parametrize("shift", [[1], [3], [2, -1, 1], [0, 4, -2]])
def test_the_bound_is_above_the_divergence_computed_from_the_pmf(mu, alpha, shift):
    l1, l2 = sum(map(abs, shift)), math.sqrt(sum(v * v for v in shift))
    exact = exact_rdp(alpha, mu, shift)
    assert exact <= rdp_bound(alpha, mu, l1, l2)
    if mu == 200.0 and alpha <= 8:  # large μ, moderate α: Skellam is nearly Gaussian, the bound nearly exact
        assert exact >= 0.99 * alpha * l2**2 / (2 * mu)
        assert rdp_bound(alpha, mu, l1, l2) <= 1.02 * exact


def test_rounds_compose_in_rdp_below_basic_composition_and_the_guarantee_carries_the_truncation():
    release = VectorRelease(mu=4.0e4, l1=30.0, l2=10.0)
    delta, share_mu, draws = 1e-5, 2.0e4, 2 * 100
    bound = vector_skellam.sized_bound(share_mu, 10 * draws, 10.0, delta)
    rounds = [composition.skellam_rdp_guarantee([release] * r, delta, share_mu, bound, r * draws) for r in (1, 4)]
    one, four = rounds
    assert 0 < one.epsilon < four.epsilon < 4 * one.epsilon  # RDP composition beats adding ε
    # mpdp's composition of the four per-round guarantees: RDP too, at the δ they bring (4 × one round's).
    composed = compose([one] * 4)
    assert composed.epsilon == pytest.approx(vector_skellam.epsilon([release] * 4, 4 * (one.delta - one.extra_delta)))
    assert composed.epsilon < four.epsilon and composed.delta == pytest.approx(4 * one.delta)
    assert "RDP composition of 4" in composed.method
    pure = Guarantee(0.5, 0.0, "pure", {"kind": "pure", "epsilon": 0.5, "count": 1})
    assert compose([one] * 4 + [pure]).epsilon == pytest.approx(composed.epsilon + 0.5)  # the rest: basic
    assert 0 < four.extra_delta <= delta * skellam.TRUNCATION_SHARE_OF_DELTA and four.delta <= delta
    assert "Δ₂ = 10" in four.mechanism and "unit client" in four.mechanism
    # The same four releases from the RDP curve by hand: RDP adds, dp-accounting converts.
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = vector_skellam.RDP_ORDERS
    curve = [4 * (a * 100 / (2 * 4.0e4) + min(((2 * a - 1) * 100 + 180) / (4 * 4.0e4**2), 90 / (2 * 4.0e4)))
             for a in orders]
    assert four.epsilon == pytest.approx(compute_epsilon(orders, curve, delta * (1 - 1e-3))[0])


def test_a_run_beyond_what_the_truncation_bound_was_sized_for_is_refused():
    release = VectorRelease(mu=400.0, l1=30.0, l2=10.0)
    bound = vector_skellam.sized_bound(200.0, 100, 1.0, 1e-5)  # sized for ε ≤ 1 and 100 shares
    with pytest.raises(ValueError, match="truncation bound"):
        composition.skellam_rdp_guarantee([release] * 5, 1e-5, 200.0, bound, 100)


def test_noise_shares_admit_no_round_beyond_max_rounds_or_max_epsilon_and_the_codec_refuses_a_longer_update():
    import numpy as np

    from mpdp.cryptocore.errors import CryptoError
    from mpdp.flower.encoding import UpdateCodec
    from mpdp.flower.noise import NoiseBudgetExhausted, NoiseShares, clip

    noise = NoiseShares(noise_multiplier=2.0, l2_clip=1.0, max_epsilon=10.0, max_rounds=3)
    noise.admit(11, 20, [5, 5], 3, 5)
    with pytest.raises(NoiseBudgetExhausted, match="3 rounds"):
        noise.admit(11, 20, [5, 5, 5], 3, 5)
    tight = NoiseShares(noise_multiplier=1.0, l2_clip=1.0, max_epsilon=1.0)
    with pytest.raises(NoiseBudgetExhausted, match="max_epsilon"):
        tight.admit(11, 20, [], 3, 5)  # one round at σ = Δ₂ is far beyond ε = 1
    codec = UpdateCodec(3, 10, (1 << 1023) + 1, clip=1.0, max_weight=1.0, max_l2=1.0)
    update = np.array([0.8, 0.8, 0.0])  # every coordinate within ±1, the L2 norm 1.13 beyond the clip
    with pytest.raises(CryptoError, match="L2 norm"):
        codec.encode(update, 1.0)
    codec.encode(clip(update, 1.0), 1.0)
