"""A malicious teacher's noise share over real processes (docs/malicious-party.md, "Verifiable noise shares"), at
the defaults K = 5, ε = 10, Q = 20, C = 2: a teacher that sends shares N_i and 0 (every label pushed to the next
class) gets its skew into the histograms whole; with verifiable noise its committed bits are flipped by the joint
coin and its share, read off the decrypted histograms, is a fair Bin(N_i, ½) draw. A commitment whose bit proof
fails excludes its teacher by name and the round goes on with the others. Bits from the noise pool (made and
verified offline) are spent in order, and a round whose pool ran short makes its bits inline. A teacher that
reveals a coin share other than the one it committed to (as one shown the others' shares would, to choose the
coin) aborts the round: nothing is released. Hamm's voters (noisy counts) likewise: a skewed share lands whole
without verifiable noise and is a fair draw with it."""

import asyncio
import math

import grpc
import numpy as np
import pytest

from launcher.protocols.dppp import client as dppp_client
from launcher.protocols.hamm.client import run_hamm_session, session_parameters
from mpdp.cryptocore.paillier import keyfiles
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.protocols.hamm import reference as hamm_reference
from mpdp.sessions.identity import CLIENT, CURATOR, party
from mpdp.vote_proofs.assurance import Assurance
from tests.deployment import envelope

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
    report = five.run_dppp(queries=QUERIES, assurance=Assurance.PROVEN_VOTES, deadline_s=DEADLINE_S)
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5] and report["result"]["rejected_votes"] == {}
    votes, noise = _records(five, report)
    share, tosses = _skewer_share(report, votes, noise)
    assert np.array_equal(share, votes[SKEWER] * tosses)  # N_i on the class it pushes, 0 on the other: unnoticed


def _fair(share_sum: int, bits: int) -> bool:
    """Within Hoeffding's t = √(bits·ln(2/FAILURE)/2) of bits/2; t < bits/2, so neither 0 nor `bits` is."""
    bound = math.sqrt(bits * math.log(2 / FAILURE) / 2)
    assert bound < bits / 2
    return abs(share_sum - bits / 2) < bound


def test_with_verifiable_noise_the_skewed_teachers_share_is_a_fair_draw(five):
    """Its bits are all ones on the pushed class and all zeros elsewhere. Flipped by the coin, each class's Q·N_i
    bits are independent fair coins: their sum is within t = √(Q·N_i·ln(2/FAILURE)/2) of Q·N_i/2 except with
    probability FAILURE; unflipped it would be Q·N_i or 0, further than t from the mean."""
    report = five.run_dppp(queries=QUERIES, assurance=Assurance.VERIFIABLE_NOISE, deadline_s=DEADLINE_S)
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
    report = four.run_dppp(queries=5, assurance=Assurance.VERIFIABLE_NOISE, honest_fraction=0.5, deadline_s=DEADLINE_S)
    result = report["result"]
    assert list(result["rejected_votes"]) == ["2"] and "noise bit proof failed" in result["rejected_votes"]["2"]
    assert result["contributors"] == [1, 3, 4]
    votes, noise = _records(four, report)
    assert 2 not in noise  # it never got a coin
    assert np.array_equal(np.array(result["histograms"]),
                          noisy_histograms([votes[i] for i in (1, 3, 4)], [noise[i] for i in (1, 3, 4)],
                                           report["privacy"]["tosses_per_teacher"]))


def _bits_per_round(deployment, queries: int, classes: int) -> int:
    public_key = keyfiles.load_public_key(deployment.topology.public_key)
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, queries, classes, 5, DEFAULT_HONEST_FRACTION, True,
                                                   public_key.key_id, assurance=Assurance.VERIFIABLE_NOISE)
    return parameters.values * parameters.share_range


def test_pooled_bits_are_spent_in_order_and_a_short_pool_falls_back_inline(five):
    """The skewer's pool bits are all ones (a share of N_i on every slot if unflipped). One round's worth is filled
    offline and verified, with the exponentiations of its vote proofs; the first round spends exactly it (its votes carry no bit proofs) and the skewer's share
    is a fair draw; the pools are then empty, and the second round makes its bits inline."""
    count = _bits_per_round(five, QUERIES, 2)
    filled = asyncio.run(dppp_client.fill_noise_pools(five.topology, count, votes=QUERIES, classes=2))
    assert filled["rejected"] == {}
    start = {t: level["next"] - level["available"] for t, level in filled["levels"].items()}
    assert all(level["available"] >= count for level in filled["levels"].values())
    drained = {t: level["available"] - count for t, level in filled["levels"].items()}
    assert set(drained.values()) == {0}, "each pool holds exactly one round's bits"

    report = five.run_dppp(queries=QUERIES, assurance=Assurance.VERIFIABLE_NOISE, deadline_s=DEADLINE_S)
    result = report["result"]
    assert result["contributors"] == [1, 2, 3, 4, 5] and result["rejected_votes"] == {}
    votes, noise = _records(five, report)
    assert np.array_equal(np.array(result["histograms"]),
                          noisy_histograms(list(votes.values()), list(noise.values()), report["privacy"]["tosses_per_teacher"]))
    share, tosses = _skewer_share(report, votes, noise)
    assert _fair(int(share.sum()), count)
    pooled_bytes = {row["rpc"]: row for row in report["traffic"]}["Step/dppp/votes"]["request_bytes"]
    assert pooled_bytes < 5 * count * 64  # ciphertexts with proofs would be > 5 · count · 256 bytes at 1024 bits

    after = asyncio.run(dppp_client.fill_noise_pools(five.topology, 1))  # the levels, one bit more each
    for teacher, level in after["levels"].items():
        assert level["next"] == start[teacher] + count + 1 and level["available"] == 1
    report = five.run_dppp(queries=QUERIES, assurance=Assurance.VERIFIABLE_NOISE, deadline_s=DEADLINE_S)  # 1 < count: inline
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5]
    inline_bytes = {row["rpc"]: row for row in report["traffic"]}["Step/dppp/votes"]["request_bytes"]
    assert inline_bytes > 5 * count * 256


def test_a_coin_share_that_does_not_open_its_commitment_aborts_the_round(pool):
    """Teacher 3 reveals another share than it committed to, as it would to choose the coin once shown the
    others' shares by a colluding aggregator: the round aborts and releases nothing."""
    four = pool.get(4, {3: "coin-grind"})
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        four.run_dppp(queries=3, assurance=Assurance.VERIFIABLE_NOISE, honest_fraction=0.5, deadline_s=DEADLINE_S)
    assert raised.value.code() == grpc.StatusCode.ABORTED
    assert "party 3's coin share does not open its commitment" in raised.value.details()


HAMM_SKEWER = 4


def _hamm_round(deployment, verifiable: bool):
    """One Hamm session with noisy counts (ε = 10, M = 4); each voter's recorded votes and shares, Charlie's counts."""
    parameters = session_parameters(deployment.topology, deployment.client_data, "vote", 10.0, 1e-5, 0.01, True,
                                    honest_fraction=0.5, assurance=Assurance.VERIFIABLE_NOISE if verifiable else Assurance.PROVEN_VOTES)
    report = asyncio.run(run_hamm_session(deployment.topology, deployment.client_data, parameters, deadline_s=DEADLINE_S))
    session = report["session_id"]
    records = {j: deployment.call(party(j), RoleStub, "GetTestRecord", envelope(session, party(j)), CLIENT).hamm.test_record
               for j in range(1, 5)}
    votes = {j: np.array(r.votes).reshape(-1, 1) for j, r in records.items()}
    noise = {j: np.array(r.noise).reshape(-1, 1) for j, r in records.items()}
    charlie = deployment.call(CURATOR, RoleStub, "GetTestRecord", envelope(session, CURATOR), CLIENT).hamm.test_record
    counts = np.array(charlie.counts)
    calibrated = report["result"]
    assert calibrated["contributors"] == [1, 2, 3, 4] and calibrated["rejected_votes"] == {}
    parameters.calibrate()
    expected = hamm_reference.counts(parameters, list(votes.values()), list(noise.values()))
    assert np.array_equal(counts.reshape(expected.shape), expected)  # the counts are the recorded votes and shares
    return parameters, votes, noise


def test_hamm_a_skewed_share_lands_whole_without_and_is_a_fair_draw_with_verifiable_noise(pool):
    """Voter 4's bits (shares without verifiable noise) are N_i where it votes 1 and 0 elsewhere. Without
    verifiable noise that is its share, whole; with it, flipped by the coin, each group's bits sum to a fair draw."""
    four = pool.get(4, {HAMM_SKEWER: "noise-skew"})
    parameters, votes, noise = _hamm_round(four, verifiable=False)
    tosses = parameters.share_range
    assert np.array_equal(noise[HAMM_SKEWER], votes[HAMM_SKEWER] * tosses)

    parameters, votes, noise = _hamm_round(four, verifiable=True)
    ones = votes[HAMM_SKEWER].astype(bool)
    assert ones.any() and (~ones).any()
    for committed in (ones, ~ones):  # all-ones bits, all-zeros bits
        assert _fair(int(noise[HAMM_SKEWER][committed].sum()), int(committed.sum()) * tosses)


def test_run_with_fill_pool_fills_the_round_first_and_spends_it(five):
    """`mpdp run dppp --assurance verifiable-noise --fill-pool`: the offline fill makes exactly the round's bits, which the
    round then spends (no bit proofs in its votes), and the report carries the fill apart."""
    import argparse

    from launcher.protocols.dppp.commands import run_session

    args = argparse.Namespace(epsilon=10.0, delta=1e-5, queries=QUERIES, no_packing=False, deadline=DEADLINE_S,
                              noise="binomial", assurance="verifiable-noise", fill_pool=True, ensemble=1)
    report = run_session(args, five.topology, five.client_data)
    count = _bits_per_round(five, QUERIES, 2)
    offline = report["offline_fill"]
    assert offline["bits"] == count and offline["rejected"] == {}
    assert report["result"]["contributors"] == [1, 2, 3, 4, 5]
    votes = {row["rpc"]: row for row in report["traffic"]}["Step/dppp/votes"]["request_bytes"]
    assert votes < 5 * count * 64
    after = asyncio.run(dppp_client.fill_noise_pools(five.topology, 1))
    assert all(level["available"] == 1 + before["available"] - count
               for level, before in zip(after["levels"].values(), offline["levels"].values()))
