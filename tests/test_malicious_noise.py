"""A malicious teacher's noise share over real processes (docs/malicious-party.md, "Verifiable noise shares"), at
the defaults K = 5, ε = 10, Q = 20, C = 2: a teacher that sends shares N_i and 0 (every label pushed to the next
class) gets its skew into the histograms whole; with verifiable noise its committed bits are flipped by the joint
coin and its share, read off the decrypted histograms, is a fair Bin(N_i, ½) draw. A commitment whose bit proof
fails excludes its teacher by name and the round goes on with the others."""

import math

import numpy as np
import pytest

from mpdp.protocols.dppp.reference import noisy_histograms

SKEWER = 5
QUERIES = 20
FAILURE = 1e-6  # each statistical check fails an honest coin with probability below this (Hoeffding)
DEADLINE_S = 120.0  # per stage: the bit proofs take a while on a loaded machine


@pytest.fixture
def five(pool):
    return pool.get(5, {SKEWER: "noise-skew"})


def _records(deployment, report):
    records = deployment.test_records(report["session_id"])
    queries, classes = report["parameters"]["queries"], report["parameters"]["classes"]
    return ({i: np.array(r.votes).reshape(queries, classes) for i, r in records.items()},
            {i: np.array(r.noise).reshape(queries, classes) for i, r in records.items()})


def _skewer_share(report, votes, noise):
    """The skewer's share per slot as the decryption shows it: the histograms minus the honest teachers' votes and
    shares and the skewer's proven one-hot vote, plus the mean the aggregator took off its share."""
    tosses = report["privacy"]["tosses_per_teacher"]
    honest = [i for i in votes if i != SKEWER]
    rest = noisy_histograms([votes[i] for i in honest], [noise[i] for i in honest], tosses)
    return np.array(report["result"]["histograms"]) - rest - votes[SKEWER] + tosses // 2, tosses


def test_without_verifiable_noise_the_skewed_share_lands_whole(five):
    report = five.run_dppp(queries=QUERIES, proven_votes=True, deadline_s=DEADLINE_S)
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5] and report["result"]["rejected_votes"] == {}
    votes, noise = _records(five, report)
    share, tosses = _skewer_share(report, votes, noise)
    assert np.array_equal(share, votes[SKEWER] * tosses)  # N_i on the class it pushes, 0 on the other: unnoticed


def test_with_verifiable_noise_the_skewed_teachers_share_is_a_fair_draw(five):
    """Its bits are all ones on the pushed class and all zeros elsewhere. Flipped by the coin, each class's Q·N_i
    bits are independent fair coins: their sum is within t = √(Q·N_i·ln(2/FAILURE)/2) of Q·N_i/2 except with
    probability FAILURE; unflipped it would be Q·N_i or 0, further than t from the mean."""
    report = five.run_dppp(queries=QUERIES, verifiable_noise=True, deadline_s=DEADLINE_S)
    result = report["result"]
    assert result["contributors"] == [1, 2, 3, 4, 5] and result["rejected_votes"] == {}
    votes, noise = _records(five, report)
    assert np.array_equal(np.array(result["histograms"]),
                          noisy_histograms(list(votes.values()), list(noise.values()), report["privacy"]["tosses_per_teacher"]))
    share, tosses = _skewer_share(report, votes, noise)
    assert share.min() >= 0 and share.max() <= tosses
    bits = QUERIES * tosses
    bound = math.sqrt(bits * math.log(2 / FAILURE) / 2)
    assert bound < bits / 2  # the checks below can tell a skewed share from a fair one
    pushed = votes[SKEWER].astype(bool)
    for committed in (pushed, ~pushed):  # all-ones bits, all-zeros bits
        assert abs(int(share[committed].sum()) - bits / 2) < bound


def test_a_malformed_commitment_excludes_its_teacher_by_name(pool):
    four = pool.get(4, {2: "noise-bit-bad"})
    report = four.run_dppp(queries=5, verifiable_noise=True, honest_fraction=0.5, deadline_s=DEADLINE_S)
    result = report["result"]
    assert list(result["rejected_votes"]) == ["2"] and "noise bit proof failed" in result["rejected_votes"]["2"]
    assert result["contributors"] == [1, 3, 4]
    votes, noise = _records(four, report)
    assert 2 not in noise  # it never got a coin
    assert np.array_equal(np.array(result["histograms"]),
                          noisy_histograms([votes[i] for i in (1, 3, 4)], [noise[i] for i in (1, 3, 4)],
                                           report["privacy"]["tosses_per_teacher"]))
