"""What the DPPP and Hamm reports state one malicious teacher (voter) can do, per mode (mpdp/vote_proofs/influence.py),
and the summary line that carries it."""

import pytest

from launcher.common.summary import session_summary
from mpdp.vote_proofs.assurance import Assurance
from mpdp.vote_proofs.influence import one_voter

K, TOSSES, CLASSES = 5, 14, 2  # the defaults' K = 5, C = 2 and N_i of ε = 10 over Q = 20
REPORTED_TOSSES = 638  # N = N_i of the reported case (K = 3 teachers, T = 8): the line printed 1917, the check passes 1938


def test_unproven_votes_are_bounded_only_by_the_feasible_range_and_not_at_all_with_the_aggregator():
    stated = one_voter("teacher", Assurance.NONE, TOSSES, K, CLASSES)
    assert stated["mode"] == "unproven votes"
    assert stated["steer_per_count"] == K + K * TOSSES  # a count anywhere in [0, K′ + Σ N_i]
    assert stated["steer_per_row_total"] == CLASSES * K * TOSSES  # a total anywhere in [K′, K′ + C·Σ N_i]
    assert f"[0, {K + K * TOSSES}]" in stated["votes"]
    assert stated["with_a_colluding_aggregator"].startswith("unbounded")


def test_proven_votes_with_unverified_noise_leave_the_noise_free():
    stated = one_voter("teacher", Assurance.PROVEN_VOTES, TOSSES, K, CLASSES)
    assert stated["mode"] == "proven votes, unverified noise"
    assert stated["steer_per_count"] == K + K * TOSSES
    assert f"±{TOSSES // 2}" in stated["noise"]  # even a share in its legal range [0, N_i]
    assert stated["with_a_colluding_aggregator"].startswith("unbounded in the noise")


def test_proven_votes_and_verifiable_noise_leave_one_vote_and_a_fair_share_even_with_the_aggregator():
    stated = one_voter("teacher", Assurance.HOLDERS_CHECK_BITS, TOSSES, K, CLASSES)
    assert stated["mode"] == "proven votes, verifiable noise"
    assert stated["steer_per_count"] == 0 and stated["steer_per_row_total"] == 0
    assert f"Bin({TOSSES}, ½)" in stated["noise"]
    assert stated["with_a_colluding_aggregator"].startswith("none beyond the above")
    assert "flips" in stated["with_a_colluding_aggregator"]


def test_without_the_holders_checking_bits_the_aggregator_could_pass_an_accomplices_non_bits():
    stated = one_voter("teacher", Assurance.VERIFIABLE_NOISE, TOSSES, K, CLASSES)
    assert stated["steer_per_count"] == 0  # alone, its share is fair
    assert stated["with_a_colluding_aggregator"].startswith("unbounded in the noise")
    assert "--assurance holders-check-bits" in stated["with_a_colluding_aggregator"]


def test_hamm_proven_votes_without_noisy_counts_are_one_proven_vote_per_point():
    stated = one_voter("voter", Assurance.PROVEN_VOTES, 0, 4, 1)
    assert stated["mode"] == "proven votes, no noise shares" and stated["steer_per_count"] == 0
    assert stated["with_a_colluding_aggregator"].startswith("none beyond the above")


def test_the_summary_states_it_before_the_result():
    stated = one_voter("teacher", Assurance.PROVEN_VOTES, TOSSES, K, CLASSES)
    lines = session_summary("DPPP on a9a: …\n  noisy labels agree with the truth on 90.0% of queries",
                            {"malicious_party": stated}).splitlines()
    assert lines[1].startswith("  one malicious teacher (proven votes, unverified noise): moves any count by up to "
                               f"{K + K * TOSSES}")
    assert "noisy labels" in lines[2]
    assert f"(a row holds K′T = {K} votes: any majority can be reversed)" in lines[1]
    assert not any("malicious" in line for line in session_summary("heading", {}).splitlines())


def _largest_accepted(counts_of, public, parameters, contributors: int) -> int:
    """The largest value v for which DPPP's own feasibility check (step 6, run by the aggregator and again by the
    client) passes counts_of(v) from `contributors` teachers, found by bisection."""
    import numpy as np

    from mpdp.protocols.dppp.release import check_feasible
    from mpdp.sessions.errors import ProtocolError

    def accepts(value: int) -> bool:
        try:
            check_feasible(parameters, np.array(counts_of(value), dtype=object), contributors)
        except ProtocolError:
            return False
        return True

    low, high = 0, 1 << 16
    assert accepts(low) and not accepts(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepts(middle) else (low, middle)
    return low


@pytest.mark.parametrize("teachers, contributors, ensemble", [(3, 3, 8), (5, 4, 8), (5, 5, 1)])
def test_the_stated_steer_is_what_the_aggregators_check_lets_through(threshold_key, teachers, contributors, ensemble):
    """The line's numbers against the DPPP aggregator's feasibility check itself, on two classes: the largest count
    it passes (the other class at K′T) is `steer_per_count`; a row's total ranges over `steer_per_row_total` (the
    largest total it passes with the row split evenly, less the smallest, K′T). K = 3 and T = 8 with N_i = 638 is the
    case the line once got wrong, leaving T out (1917 where the check passes 1938)."""
    from mpdp.protocols.dppp.parameters import DpppParameters

    public, _ = threshold_key
    parameters = DpppParameters(10.0, 1e-5, 100, 2, teachers, 2 / 3, True, public.key_id, REPORTED_TOSSES,
                                ensemble=ensemble)
    stated = one_voter("teacher", Assurance.NONE, parameters.share_range, contributors, 2, votes_per_row=ensemble)
    votes = contributors * ensemble
    assert _largest_accepted(lambda v: [[v, votes]] * 100, public, parameters, contributors) == stated["steer_per_count"]
    spread = _largest_accepted(lambda v: [[votes // 2 + v, votes - votes // 2 + v]] * 100, public, parameters,
                               contributors)  # totals K′T + 2v, each count well inside its range
    assert 2 * spread == stated["steer_per_row_total"]
    if (teachers, ensemble) == (3, 8):
        assert stated["steer_per_count"] == 1938
