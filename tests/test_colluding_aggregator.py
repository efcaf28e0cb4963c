"""An aggregator colluding with one teacher, over real processes (docs/malicious-party.md, "Checked where it is
decrypted"): the real aggregator is replaced by a hostile one (tests/hostile_aggregator.py) that runs a DPPP round
up to the decryption and then asks every key holder to decrypt a sum with the accomplice's contribution in it:
- a proven ballot with a second 1 in query 0 (in the feasible range), its one-hot proof skipped;
- with verifiable noise, the accomplice's bits folded as committed (unflipped), which the accomplice signed.
Sent as the aggregator sends a sum without the holders' checks (the signed contributions alone), every holder
refuses and changes nothing; sent with their proofs and commitments, every holder finds the accomplice by name,
aborts the round and releases nothing. The services stay ready: the real aggregator's next round completes."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from mpdp.cryptocore.paillier import keyfiles
from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters
from mpdp.sessions.identity import party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs import joint_coin, noise_bits, well_formed
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.assurance import Assurance
from tests.hostile_aggregator import HostileAggregator

K = 4
ACCOMPLICE = 2
TEACHERS = list(range(1, K + 1))
QUERIES = 3


def _queries(deployment, verifiable: bool):
    public = keyfiles.load_public_key(deployment.topology.public_key)
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, QUERIES, 2, K, DEFAULT_HONEST_FRACTION, True,
                                                   public.key_id, assurance=Assurance.VERIFIABLE_NOISE if verifiable else Assurance.PROVEN_VOTES)
    parameters.calibrate()
    message = dppp_pb2.DpppQueries(parameters=parameters.to_proto(), deadline_seconds=60,
                                   features=matrix_to_proto(deployment.client_data["public_features"][:QUERIES]))
    return public, parameters, message


def _ask_every_holder(hostile: HostileAggregator, session: str, request) -> dict[int, grpc.StatusCode]:
    codes = {}
    for holder in TEACHERS:
        try:
            hostile.step(party(holder), session, dppp=dppp_pb2.DpppMessage(decryption_request=request))
            codes[holder] = grpc.StatusCode.OK
        except grpc.RpcError as error:
            codes[holder] = error.code()
            assert error.code() != grpc.StatusCode.ABORTED or f"party {ACCOMPLICE}" in error.details()
    return codes


def _without_checks(request: threshold_sum_pb2.DecryptionRequest) -> threshold_sum_pb2.DecryptionRequest:
    """The signed contributions alone, as a sum goes to holders that check signatures only."""
    bare = threshold_sum_pb2.DecryptionRequest()
    for contribution in request.contributions:
        bare.contributions.add(sender=contribution.sender, ciphertexts=contribution.ciphertexts,
                               signature=contribution.signature)
    return bare


def _refused_everywhere(hostile: HostileAggregator, session: str, request) -> None:
    assert set(_ask_every_holder(hostile, session, _without_checks(request)).values()) == \
        {grpc.StatusCode.INVALID_ARGUMENT}
    assert set(_ask_every_holder(hostile, session, request).values()) == {grpc.StatusCode.ABORTED}
    hostile.heard_after(_probe(hostile), TEACHERS, TEACHERS)
    assert hostile.counts(session, "partial_decryptions") == {}


def _probe(hostile: HostileAggregator) -> dppp_pb2.DpppQueries:
    """One unproven query: a session whose honest sum every holder decrypts (the accomplice's fault acts on
    proofs only)."""
    public = keyfiles.load_public_key(hostile.deployment.topology.public_key)
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, 1, 2, K, DEFAULT_HONEST_FRACTION, True, public.key_id)
    parameters.calibrate()
    features = hostile.deployment.client_data["public_features"][:1]
    return dppp_pb2.DpppQueries(parameters=parameters.to_proto(), deadline_seconds=60,
                                features=matrix_to_proto(features))


@pytest.mark.network
def test_a_ballot_whose_one_hot_proof_the_aggregator_skipped_is_decrypted_nowhere(pool):
    four = pool.get(K, {ACCOMPLICE: "vote-two-ones"})
    public, parameters, queries = _queries(four, verifiable=False)
    layout = parameters.layout(public.n)
    with HostileAggregator(four) as hostile:
        votes = hostile.open("colluding-proven", "dppp", queries, TEACHERS)
        request = threshold_sum_pb2.DecryptionRequest()
        for teacher in TEACHERS:  # every ballot folded, none checked
            body = votes[teacher]
            folded = vote_proofs.folded(public, layout, QUERIES, 2, parameters.share_range, body.votes, body.proven)
            request.contributions.add(sender=teacher, ciphertexts=folded, signature=body.signature,
                                      well_formed=well_formed.of_proven(body.votes, body.proven))
        _refused_everywhere(hostile, "colluding-proven", request)
    report = four.run_dppp(queries=QUERIES, assurance=Assurance.PROVEN_VOTES, honest_fraction=0.5)
    assert report["result"]["contributors"] == [1, 3, 4] and list(report["result"]["rejected_votes"]) == ["2"]
    assert report["malicious_party"]["mode"] == "proven votes, unverified noise"


@pytest.mark.network
def test_an_unflipped_contribution_the_aggregator_accepted_is_decrypted_nowhere(pool):
    four = pool.get(K, {ACCOMPLICE: "sign-unflipped"})
    public, parameters, queries = _queries(four, verifiable=True)
    layout, session = parameters.layout(public.n), "colluding-flip"
    with HostileAggregator(four) as hostile:
        votes = hostile.open(session, "dppp", queries, TEACHERS)
        committed = {}
        for teacher, body in votes.items():
            vote_values = [int.from_bytes(v, "big") for v in body.proven.ciphertexts.values]
            bit_values = [int.from_bytes(v, "big") for v in body.noise_bits.ciphertexts.values]
            digest = noise_bits.commitment_digest(public, vote_values, bit_values)
            committed[teacher] = (vote_values, bit_values, joint_coin.Entry(teacher, digest, bytes(body.coin_commitment)))
        entries = [committed[t][2] for t in TEACHERS]
        for teacher in TEACHERS:
            hostile.step(party(teacher), session, dppp=dppp_pb2.DpppMessage(coin=joint_coin.entries_to_proto(entries)))
        shares = {t: bytes(r.share) for t, r in hostile.wait_for(session, "reveal", TEACHERS).items()}
        for teacher in TEACHERS:
            hostile.step(party(teacher), session, dppp=dppp_pb2.DpppMessage(shares=joint_coin.shares_to_proto(shares)))
        flipped = hostile.wait_for(session, "flipped", TEACHERS)
        coin = joint_coin.coin(session, entries, shares)
        request = threshold_sum_pb2.DecryptionRequest(coin_entries=joint_coin.entries_to_proto(entries),
                                                      coin_shares=joint_coin.shares_to_proto(shares))
        for teacher in TEACHERS:
            vote_values, bit_values, _ = committed[teacher]
            coins = noise_bits.coin_bits(coin, teacher, len(bit_values))
            if teacher == ACCOMPLICE:  # what it signed: its bits as committed
                coins = np.zeros_like(coins)
            fold = noise_bits.fold(public, layout, QUERIES, 2, parameters.share_range, vote_values, bit_values, coins)
            body = votes[teacher]
            request.contributions.add(sender=teacher, ciphertexts=fold, signature=flipped[teacher].signature,
                                      well_formed=well_formed.of_commitments(body.proven, body.noise_bits,
                                                                             body.signature, False))
        _refused_everywhere(hostile, session, request)
    report = four.run_dppp(queries=QUERIES)
    assert report["result"]["contributors"] == TEACHERS
    assert report["malicious_party"]["mode"] == "unproven votes"


@pytest.mark.network
def test_with_holders_check_bits_pooled_bits_are_checked_at_every_holder_and_the_round_equals_its_reference(pool):
    """Over real processes: one round's bits filled offline (the skewer's all ones), then a round that spends them
    with `--assurance holders-check-bits`: every asked holder checks every pooled bit's upload proof before decrypting, the
    histograms equal the teachers' recorded votes and flipped shares, and the report states no collusion gap."""
    import asyncio

    from launcher.protocols.dppp import client as dppp_client
    from mpdp.protocols.dppp.reference import noisy_histograms

    five = pool.get(5, {5: "noise-skew"})
    public = keyfiles.load_public_key(five.topology.public_key)
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, QUERIES, 2, 5, DEFAULT_HONEST_FRACTION, True,
                                                   public.key_id, assurance=Assurance.VERIFIABLE_NOISE)
    count = parameters.values * parameters.share_range
    filled = asyncio.run(dppp_client.fill_noise_pools(five.topology, count, votes=QUERIES, classes=2))
    assert filled["rejected"] == {}
    report = five.run_dppp(queries=QUERIES, assurance=Assurance.HOLDERS_CHECK_BITS, deadline_s=120.0)
    result = report["result"]
    assert result["contributors"] == [1, 2, 3, 4, 5] and result["rejected_votes"] == {}
    records = five.test_records(report["session_id"])
    votes = [np.array(records[i].votes).reshape(QUERIES, 2) for i in range(1, 6)]
    noise = [np.array(records[i].noise).reshape(QUERIES, 2) for i in range(1, 6)]
    assert np.array_equal(np.array(result["histograms"]),
                          noisy_histograms(votes, noise, report["privacy"]["tosses_per_teacher"]))
    pooled = {row["rpc"]: row for row in report["traffic"]}
    # the holders' requests carry every pooled bit with its upload's proof (a ciphertext and two commitments)
    assert pooled["Step/dppp/decryption_request"]["request_bytes"] > 3 * 5 * count * 3 * 250
    assert report["parameters"]["holders_check_bits"] is True
    assert report["malicious_party"]["with_a_colluding_aggregator"].startswith("none beyond the above")
