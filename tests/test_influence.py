"""What the DPPP and Hamm reports state one malicious teacher (voter) can do, per mode (mpdp/vote_proofs/influence.py),
and the summary line that carries it."""

from launcher.summary import context_lines
from mpdp.vote_proofs.influence import one_voter

K, TOSSES, CLASSES = 5, 14, 2  # the defaults' K = 5, C = 2 and N_i of ε = 10 over Q = 20


def test_unproven_votes_are_bounded_only_by_the_feasible_range_and_not_at_all_with_the_aggregator():
    stated = one_voter("teacher", False, False, TOSSES, K, CLASSES)
    assert stated["mode"] == "unproven votes"
    assert stated["steer_per_count"] == K + K * TOSSES  # a count anywhere in [0, K′ + Σ N_i]
    assert stated["steer_per_row_total"] == CLASSES * K * TOSSES  # a total anywhere in [K′, K′ + C·Σ N_i]
    assert f"[0, {K + K * TOSSES}]" in stated["votes"]
    assert stated["with_a_colluding_aggregator"].startswith("unbounded")


def test_proven_votes_with_unverified_noise_leave_the_noise_free():
    stated = one_voter("teacher", True, False, TOSSES, K, CLASSES)
    assert stated["mode"] == "proven votes, unverified noise"
    assert stated["steer_per_count"] == K + K * TOSSES
    assert f"±{TOSSES // 2}" in stated["noise"]  # even a share in its legal range [0, N_i]
    assert stated["with_a_colluding_aggregator"].startswith("unbounded in the noise")


def test_proven_votes_and_verifiable_noise_leave_one_vote_and_a_fair_share_even_with_the_aggregator():
    stated = one_voter("teacher", True, True, TOSSES, K, CLASSES, holders_check_bits=True)
    assert stated["mode"] == "proven votes, verifiable noise"
    assert stated["steer_per_count"] == 0 and stated["steer_per_row_total"] == 0
    assert f"Bin({TOSSES}, ½)" in stated["noise"]
    assert stated["with_a_colluding_aggregator"].startswith("none beyond the above")
    assert "flips" in stated["with_a_colluding_aggregator"]


def test_without_the_holders_checking_bits_the_aggregator_could_pass_an_accomplices_non_bits():
    stated = one_voter("teacher", True, True, TOSSES, K, CLASSES)
    assert stated["steer_per_count"] == 0  # alone, its share is fair
    assert stated["with_a_colluding_aggregator"].startswith("unbounded in the noise")
    assert "--holders-check-bits" in stated["with_a_colluding_aggregator"]


def test_hamm_proven_votes_without_noisy_counts_are_one_proven_vote_per_point():
    stated = one_voter("voter", True, False, 0, 4, 1)
    assert stated["mode"] == "proven votes, no noise shares" and stated["steer_per_count"] == 0
    assert stated["with_a_colluding_aggregator"].startswith("none beyond the above")


def test_the_summary_states_it():
    lines = context_lines({"malicious_party": one_voter("teacher", True, False, TOSSES, K, CLASSES)})
    assert any(line.startswith("  one malicious teacher (proven votes, unverified noise): moves any count by up to "
                               f"{K + K * TOSSES}") for line in lines)
    assert not any("malicious" in line for line in context_lines({}))
