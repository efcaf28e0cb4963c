"""Hamm over real processes (1024-bit keys, loopback, mutual TLS), checked against the reference."""

import asyncio
from collections import Counter

import grpc
import numpy as np
import pytest

from hamm import reference
from hamm.charlie import eta_source
from launcher import hamm_commands
from launcher.hamm_client import evaluator_view, run_hamm_session, session_parameters
from learning import datasets, models
from mpdp_proto.v1 import hamm_pb2
from mpdp_proto.v1.role_pb2_grpc import RoleStub
from sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from tests.deployment import envelope
from tests.dppp_faults import FAULTS_K5, TAMPERER
from tests.test_dppp_network import observed_counts


def closed_form(parties: int, holders: int, voters: int | None = None, answering: int | None = None) -> Counter:
    """Messages per (from, to, rpc) in one session: X_aux down, votes up, the decryption to Charlie."""
    return Counter({
        ("client", "curator", "AwaitResult/hamm/open"): 1,
        ("curator", "aggregator", "Step/hamm/queries"): 1,
        ("aggregator", "party", "Step/hamm/queries"): parties,
        ("party", "aggregator", "Step/hamm/votes"): parties if voters is None else voters,
        ("aggregator", "party", "Step/hamm/decryption_request"): holders,
        ("aggregator", "curator", "Step/hamm/aggregate"): 1,
        ("party", "curator", "Step/hamm/partial_decryptions"): holders if answering is None else answering,
    })


def run(d, method="soft", epsilon=2.0, noisy=False, seed=9, **options):
    parameters = session_parameters(d.topology, d.client_data, method, epsilon, 1e-5, 0.01, noisy, **options)
    return parameters, asyncio.run(run_hamm_session(d.topology, d.client_data, parameters, deadline_s=60.0,
                                                    noise_seed=seed))


def local_models(d) -> list:
    """Every party's local classifier, trained as its process trained it (the evaluator can: it split the data)."""
    return [models.train("logistic", *datasets.load_part(entry.data)[:2]) for entry in d.topology.parties]


def weights(report) -> np.ndarray:
    return np.array(report["result"]["weights"]).ravel()


@pytest.fixture
def five(pool):
    """K = 5 (t = 4 of 5 holders) with party 2 tampering with its partial decryptions."""
    return pool.get(5, FAULTS_K5)


def test_the_release_equals_the_reference_and_a_tampered_share_is_rejected(five):
    parameters, report = run(five, seed=9)
    aux = five.client_data["public_features"]
    counts, outcome = reference.session(parameters, aux, local_models(five), eta_source(9))
    assert np.array_equal(weights(report), outcome.released.ravel())
    charlie = five.call(CURATOR, RoleStub, "GetTestRecord", envelope(report["session_id"], CURATOR), CLIENT)
    assert np.array_equal(np.array(charlie.hamm.test_record.counts).reshape(counts.shape), counts)
    result = report["result"]
    assert result["voters"] == 5 and result["decryptors"] == [1, 3, 4, 5]
    assert str(TAMPERER) in result["rejected_shares"]
    assert observed_counts(report) == closed_form(5, 5)
    # Charlie is sent the opening, one aggregate of ciphertexts and proven shares: never a party's votes.
    to_charlie = {row["rpc"] for row in report["traffic_detail"] if row["to"] == "curator/0"}
    assert to_charlie == {"AwaitResult/hamm/open", "Step/hamm/aggregate", "Step/hamm/partial_decryptions"}
    to_aggregator = {(row["from"].split("/")[0], row["rpc"]) for row in report["traffic_detail"]
                     if row["to"] == "aggregator/0"}
    assert to_aggregator == {("curator", "Step/hamm/queries"), ("party", "Step/hamm/votes")}
    assert report["privacy"]["release_mechanism"].startswith("l2-laplace")


def test_noisy_counts_are_the_sum_of_votes_and_binomial_shares(five):
    parameters, report = run(five, method="vote", epsilon=1.0, noisy=True)
    session = report["session_id"]
    records = [five.call(party(j), RoleStub, "GetTestRecord", envelope(session, party(j)), CLIENT).hamm.test_record
               for j in range(1, 6)]
    aux = five.client_data["public_features"]
    for model, record in zip(local_models(five), records):
        assert list(record.votes) == model.predict(aux).astype(int).tolist()
        assert max(record.noise) <= parameters.tosses_per_party
    votes = [np.array(r.votes).reshape(-1, 1) for r in records]
    noise = [np.array(r.noise).reshape(-1, 1) for r in records]
    charlie = five.call(CURATOR, RoleStub, "GetTestRecord", envelope(session, CURATOR), CLIENT).hamm.test_record
    expected = reference.counts(parameters, votes, noise)
    assert np.array_equal(np.array(charlie.counts).reshape(expected.shape), expected)
    assert not any(charlie.eta)  # the release is post-processing of the DP counts
    assert report["privacy"]["tosses_per_party"] == parameters.tosses_per_party > 0


def test_only_charlie_opens_at_the_aggregator_and_bad_parameters_are_refused(five):
    parameters = session_parameters(five.topology, five.client_data, "soft", 1.0, 1e-5, 0.01)
    queries = hamm_pb2.HammQueries(parameters=parameters.to_proto(), deadline_seconds=30)
    forged = envelope("forged-open", AGGREGATOR, party(1), hamm=hamm_pb2.HammMessage(queries=queries))
    with pytest.raises(grpc.RpcError) as refused:
        five.call(AGGREGATOR, RoleStub, "Step", forged, party(1))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    wrong = parameters.to_proto()
    wrong.aux_points += 1
    opening = hamm_pb2.HammMessage(open=hamm_pb2.HammOpen(parameters=wrong, deadline_seconds=30))
    with pytest.raises(grpc.RpcError) as refused:
        five.call(CURATOR, RoleStub, "AwaitResult", envelope("wrong-n", CURATOR, hamm=opening), CLIENT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, report = run(five)  # the services are ready for the next session
    assert report["result"]["voters"] == 5


def test_the_summary_shows_the_baselines_of_the_same_split(five):
    _, report = run(five)
    view = evaluator_view(five.topology, five.client_data, report)
    assert 0.5 < view["batch"] <= 1 and 0 < view["indiv"]["mean"] <= 1
    assert "logistic-exact" in view["avg"]["unavailable"]  # these parties' models are scikit-learn pipelines
    report["evaluator_view"] = view
    text = hamm_commands.summary(report)
    assert f"batch {view['batch']:.1%}" in text and "avg n/a" in text
